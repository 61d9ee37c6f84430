// The trainer is reproducible bit for bit: two runs with the same seed write identical files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { root } from './helpers.mjs';

const train = new URL('build/train', root).pathname;
const data = new URL('build/mnist', root).pathname;

function run(seed) {
  const out = mkdtempSync(path.join(tmpdir(), 'mlrt-train-'));
  const r = spawnSync(train, ['--data', data, '--out', out, '--hidden', '32', '--epochs', '1', '--seed', String(seed),
    '--min-accuracy', '0', '--quiet']); // a one-epoch toy run: its accuracy is not the point
  assert.equal(r.status, 0, `train exited ${r.status}: ${r.stderr}`);
  const files = readdirSync(out).filter((f) => f !== 'train-report.json').sort();
  return Object.fromEntries(files.map((f) => [f, readFileSync(path.join(out, f))]));
}

test('same seed, same bytes; another seed, other weights', () => {
  const a = run(5), b = run(5), c = run(6);
  assert.deepEqual(Object.keys(a), ['mnist-mlp.aprender.safetensors', 'mnist-mlp.bintensors', 'mnist-mlp.f32.bin',
    'mnist-mlp.f64.bin', 'mnist-mlp.safetensors']);
  for (const f of Object.keys(a)) {
    assert.ok(a[f].equals(b[f]), `${f} differs between two runs with the same seed`);
    assert.ok(!a[f].equals(c[f]), `${f} is the same with another seed`);
  }
});
