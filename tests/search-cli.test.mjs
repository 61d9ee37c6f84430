// mlrt search INDEX QUERY (tools/mlrt.mjs, issue 22) as a child process: the words and scores of
// the same search done in this process, --input and --json, --k, and the refusals (an index made
// with another model, a corrupt index, usage errors) with exit codes 1 and 2.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRuntime } from '../wasm/mlrt.mjs';
import { readIndex } from '../web/lemma-index.mjs';
import { readEncoderFiles } from '../tools/wordnet/common.mjs';

const repo = (p) => fileURLToPath(new URL(`../${p}`, import.meta.url));
const CLI = repo('tools/mlrt.mjs');
const INDEX = repo('build/wordnet/lemmas.q8.index');
const MODEL = repo('models/wordnet');
const skip = existsSync(INDEX) ? false : `${INDEX} is missing: run \`make wordnet-index\``;

const run = (args, cwd) => {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8', maxBuffer: 1 << 24 });
  return { code: r.status, out: r.stdout, err: r.stderr };
};

test('mlrt search: the same words and scores as the search in this process', { skip }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mlrt-search-'));
  try {
    const rt = await createRuntime(); // Node 20 without the flag: SIMD128, as the CLI
    const enc = rt.loadEncoder(readEncoderFiles());
    const index = readIndex(new Uint8Array(readFileSync(INDEX))).useRuntime(rt);
    const queries = ['a small boat pulled by a larger one', 'feeling or showing great happiness', 'Café au lait!'];
    const want = (q, k) => index.search(enc.embed(q), k).map(({ word, score }) => ({ word, score }));

    const one = run(['search', INDEX, queries[0], '--model', MODEL, '--json']);
    assert.equal(one.code, 0, one.err);
    assert.deepEqual(JSON.parse(one.out), { query: queries[0], results: want(queries[0], 10) });

    writeFileSync(join(dir, 'q.txt'), `${queries.join('\r\n')}\n\n`);
    const many = run(['search', INDEX, '--input', 'q.txt', '--model', MODEL, '--json', '--k', '3'], dir);
    assert.equal(many.code, 0, many.err);
    assert.deepEqual(many.out.trim().split('\n').map((l) => JSON.parse(l)), queries.map((q) => ({ query: q, results: want(q, 3) })));

    const text = run(['search', INDEX, queries[1], '--model', MODEL]);
    assert.equal(text.code, 0, text.err);
    const lines = text.out.trimEnd().split('\n');
    assert.equal(lines.length, 10);
    want(queries[1], 10).forEach((r, i) => assert.equal(lines[i], `${String(i + 1).padStart(3)}. ${r.score.toFixed(4)}  ${r.word}`));

    // refusals: the index next to no model, another model, a corrupt index, usage
    const noModel = run(['search', INDEX, 'boat']);
    assert.equal(noModel.code, 1);
    assert.match(noModel.err, /^mlrt: /);
    const other = join(dir, 'other');
    const files = readEncoderFiles();
    const { mkdirSync } = await import('node:fs');
    mkdirSync(join(other, '1_Pooling'), { recursive: true });
    for (const [name, bytes] of Object.entries(files)) writeFileSync(join(other, name), bytes);
    const w = Buffer.from(files['model.safetensors']);
    w[w.length - 5] ^= 1; // one weight changed
    writeFileSync(join(other, 'model.safetensors'), w);
    const mismatch = run(['search', INDEX, 'boat', '--model', other]);
    assert.equal(mismatch.code, 1);
    assert.match(mismatch.err, /was made with another model/);
    const bad = Buffer.from(readFileSync(INDEX));
    bad[bad.length - 100] ^= 4;
    writeFileSync(join(dir, 'bad.index'), bad);
    const corrupt = run(['search', 'bad.index', 'boat', '--model', MODEL], dir);
    assert.equal(corrupt.code, 1);
    assert.match(corrupt.err, /lemma index: CRC-32 .* the file is corrupt/);
    assert.equal(run(['search', INDEX]).code, 2);
    assert.equal(run(['search', INDEX, 'boat', '--k', '0', '--model', MODEL]).code, 2);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
