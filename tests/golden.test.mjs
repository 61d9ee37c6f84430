// Golden predictions: every format, both wasm builds and the WASI CLI against an
// independent float64 JavaScript reference, on the 1,000 held-out MNIST digits.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createRuntime } from '../wasm/mlrt.mjs';
import { loadSplit } from '../tools/mnist-split.mjs';
import { MODEL_FILES, readModel, modelPath, parseBin, referencePredict, argmax, root } from './helpers.mjs';

const digits = loadSplit('test');
const net = parseBin(readModel('mnist-mlp.f64.bin')); // the trainer's weights, read by JS alone
const reference = [];
for (let i = 0; i < digits.n; i++) reference.push(referencePredict(net, digits.images.subarray(i * 784, (i + 1) * 784)));

function compareToReference(out, label, rows = digits.n) {
  assert.equal(out.length, rows * 10, `${label}: output length`);
  let maxDelta = 0, argmaxDiffs = 0;
  for (let i = 0; i < rows; i++) {
    const got = out.subarray(i * 10, i * 10 + 10), want = reference[i];
    if (argmax(got) !== argmax(want)) argmaxDiffs++;
    for (let o = 0; o < 10; o++) maxDelta = Math.max(maxDelta, Math.abs(got[o] - want[o]));
  }
  assert.equal(argmaxDiffs, 0, `${label}: argmax differs from the reference on ${argmaxDiffs} digits`);
  assert.ok(maxDelta <= 1e-4, `${label}: max |Δp| ${maxDelta} > 1e-4`);
  return maxDelta;
}

test('digit count and model accuracy on the held-out split', () => {
  assert.equal(digits.n, 1000);
  let correct = 0;
  for (let i = 0; i < digits.n; i++) if (argmax(reference[i]) === digits.labels[i]) correct++;
  assert.ok(correct / digits.n >= 0.95, `reference accuracy ${correct / digits.n} < 0.95`);
  const report = JSON.parse(readFileSync(modelPath('train-report.json'), 'utf8'));
  assert.equal(report.test_accuracy, correct / digits.n, 'the trainer and the JS reference disagree on accuracy');
});

for (const simd of [true, false]) {
  const build = simd ? 'SIMD' : 'scalar';
  test(`${build} build: every format matches the float64 reference on 1,000 digits`, async () => {
    const rt = await createRuntime({ simd });
    assert.equal(rt.build.simd, simd);
    for (const file of MODEL_FILES) {
      const model = rt.loadFromBytes(readModel(file));
      assert.deepEqual([model.info.inputSize, model.info.outputSize], [784, 10], file);
      compareToReference(model.predictBatch(digits.images, digits.n), `${build} ${file} batch`);
      // single predictions follow the same path one row at a time: identical bits
      const batch = model.predictBatch(digits.images.subarray(0, 50 * 784), 50);
      for (let i = 0; i < 50; i++) {
        assert.deepEqual(model.predict(digits.images.subarray(i * 784, (i + 1) * 784)), batch.subarray(i * 10, i * 10 + 10),
          `${build} ${file}: predict(${i}) differs from predictBatch`);
      }
      model.dispose();
    }
  });
}

test('every format gives the same predictions, bit for bit', async () => {
  const rt = await createRuntime();
  const outs = MODEL_FILES.map((f) => {
    const m = rt.loadFromBytes(readModel(f));
    const out = m.predictBatch(digits.images, digits.n);
    m.dispose();
    return out;
  });
  for (let k = 1; k < outs.length; k++) assert.deepEqual(outs[k], outs[0], `${MODEL_FILES[k]} vs ${MODEL_FILES[0]}`);
});

test('SIMD and scalar builds agree: argmax identical, probabilities within 1e-5', async () => {
  const [a, b] = await Promise.all([createRuntime({ simd: true }), createRuntime({ simd: false })]);
  const bytes = readModel('mnist-mlp.safetensors');
  const pa = a.loadFromBytes(bytes).predictBatch(digits.images, digits.n);
  const pb = b.loadFromBytes(bytes).predictBatch(digits.images, digits.n);
  for (let i = 0; i < digits.n; i++) {
    assert.equal(argmax(pa.subarray(i * 10, i * 10 + 10)), argmax(pb.subarray(i * 10, i * 10 + 10)), `digit ${i}`);
  }
  let max = 0;
  for (let k = 0; k < pa.length; k++) max = Math.max(max, Math.abs(pa[k] - pb[k]));
  assert.ok(max <= 1e-5, `max |Δp| between builds ${max}`);
});

test('WASI CLI predicts like the reference (raw f32 and JSON inputs)', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'mlrt-wasi-'));
  const rows = 100;
  const raw = path.join(dir, 'input.f32');
  writeFileSync(raw, new Uint8Array(digits.images.buffer, 0, rows * 784 * 4));
  const json = path.join(dir, 'one.json');
  writeFileSync(json, JSON.stringify(Array.from(digits.images.subarray(0, 784))));
  const cli = new URL('tools/mlrt-wasi.mjs', root).pathname;
  const run = (...args) => execFileSync(process.execPath, ['--no-warnings', cli, ...args], { encoding: 'utf8' });
  for (const file of ['mnist-mlp.f32.bin', 'mnist-mlp.safetensors', 'mnist-mlp.bintensors']) {
    const out = JSON.parse(run('predict', modelPath(file).pathname, raw));
    assert.equal(out.length, rows);
    compareToReference(Float32Array.from(out.flat()), `WASI ${file}`, rows);
    const one = JSON.parse(run('predict', modelPath(file).pathname, json));
    assert.equal(one.length, 10);
    assert.equal(argmax(one), argmax(reference[0]));
  }
  const info = JSON.parse(run('inspect', modelPath('mnist-mlp.safetensors').pathname));
  assert.equal(info.format, 'safetensors');
  assert.equal(info.modelKind, 'mlp');
  assert.deepEqual(info.tensors.map((t) => t.name).sort(), ['fc1.bias', 'fc1.weight', 'fc2.bias', 'fc2.weight']);
});
