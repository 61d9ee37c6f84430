// The relaxed-SIMD build (wasm/mlrt-relaxed.wasm, f32x4.relaxed_madd in the dense and conv kernels)
// against the SIMD128 build and the independent references, and how createRuntime picks builds.
//
// Tolerance: the relaxed build fuses each multiply-add (one rounding instead of two), so its f32
// results may differ from the SIMD128 build in the last bits; on the MNIST MLP's probabilities by at
// most 1e-5, with the same argmax on every held-out digit. The integer (Q8) kernels are unchanged
// and stay bit-identical.
//
// Node 20 runs relaxed SIMD only behind --experimental-wasm-relaxed-simd; the flag is set here,
// before this process compiles any wasm (it is refused in NODE_OPTIONS).
import v8 from 'node:v8';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadSplit } from '../tools/mnist-split.mjs';
import { readModel, parseBin, referencePredict, argmax, root } from './helpers.mjs';

v8.setFlagsFromString('--experimental-wasm-relaxed-simd');
const { createRuntime, relaxedSimdSupported, MlrtError } = await import('../wasm/mlrt.mjs');

const relaxed = await createRuntime();
const simd = await createRuntime({ relaxed: false });
const digits = loadSplit('test');
const f32 = (u) => { const b = readFileSync(u); return new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4); };

/** Max |a - b|, and how many elements are bit-identical. */
function compare(a, b) {
  assert.equal(a.length, b.length);
  const ua = new Uint32Array(a.buffer, a.byteOffset, a.length), ub = new Uint32Array(b.buffer, b.byteOffset, b.length);
  let worst = 0, same = 0;
  for (let i = 0; i < a.length; i++) {
    worst = Math.max(worst, Math.abs(a[i] - b[i]));
    if (ua[i] === ub[i]) same++;
  }
  return { worst, same };
}

test('createRuntime picks the relaxed build where the engine has relaxed SIMD, and steps down on request', async () => {
  assert.equal(relaxedSimdSupported(), true, 'Node 20 runs relaxed SIMD with the flag');
  assert.deepEqual({ ...relaxed.build }, { simd: true, relaxed: true, threads: 1 });
  assert.deepEqual({ ...simd.build }, { simd: true, relaxed: false, threads: 1 });
  assert.deepEqual({ ...(await createRuntime({ simd: false })).build }, { simd: false, relaxed: false, threads: 1 });
  // rt.build comes from the module itself when the caller brings the wasm
  const bring = (f) => createRuntime({ wasm: readFileSync(new URL(`wasm/${f}`, root)) });
  assert.deepEqual({ ...(await bring('mlrt.wasm')).build }, { simd: true, relaxed: false, threads: 1 });
  assert.deepEqual({ ...(await bring('mlrt-relaxed.wasm')).build }, { simd: true, relaxed: true, threads: 1 });
  assert.deepEqual({ ...(await bring('mlrt-scalar.wasm')).build }, { simd: false, relaxed: false, threads: 1 });
  await assert.rejects(createRuntime({ simd: false, relaxed: true }), (e) => e instanceof MlrtError && e.code === 'INVALID_ARGUMENT');
});

test('without relaxed SIMD (Node without the flag), createRuntime picks SIMD128 and refuses relaxed: true', () => {
  const script = `
    import { createRuntime, relaxedSimdSupported } from ${JSON.stringify(new URL('wasm/mlrt.mjs', root).href)};
    const rt = await createRuntime();
    const refused = await createRuntime({ relaxed: true }).then(() => 'loaded', (e) => e.code);
    console.log(JSON.stringify({ supported: relaxedSimdSupported(), build: rt.build, refused }));`;
  const out = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }));
  assert.deepEqual(out, { supported: false, build: { simd: true, relaxed: false, threads: 1 }, refused: 'UNSUPPORTED' });
});

test('MNIST MLP: every held-out digit gets the SIMD128 argmax, probabilities within 1e-5, and the float64 reference within 1e-4', () => {
  const file = readModel('mnist-mlp.f32.bin');
  const a = relaxed.loadFromBytes(file), b = simd.loadFromBytes(file);
  const ya = a.predictBatch(digits.images, digits.n), yb = b.predictBatch(digits.images, digits.n);
  const net = parseBin(readModel('mnist-mlp.f64.bin'));
  let argmaxDiffs = 0, refWorst = 0;
  for (let i = 0; i < digits.n; i++) {
    const ra = ya.subarray(i * 10, i * 10 + 10), rb = yb.subarray(i * 10, i * 10 + 10);
    if (argmax(ra) !== argmax(rb)) argmaxDiffs++;
    const want = referencePredict(net, digits.images.subarray(i * 784, (i + 1) * 784));
    for (let o = 0; o < 10; o++) refWorst = Math.max(refWorst, Math.abs(ra[o] - want[o]));
  }
  const { worst, same } = compare(ya, yb);
  assert.equal(argmaxDiffs, 0, `argmax differs from SIMD128 on ${argmaxDiffs} of ${digits.n} digits`);
  assert.ok(worst <= 1e-5, `max |relaxed - SIMD128| ${worst} > 1e-5`);
  assert.ok(refWorst <= 1e-4, `max |relaxed - float64 reference| ${refWorst} > 1e-4`);
  // the relaxed build really fuses: some outputs differ in their last bits
  assert.ok(same < ya.length, 'the relaxed build gave the SIMD128 bits everywhere: relaxed_madd is not in use');
  // one row alone gives the bits it gets inside the batch (each output keeps its summation order)
  for (const i of [0, 1, 499, 999]) assert.equal(compare(a.predict(digits.images.subarray(i * 784, (i + 1) * 784)), ya.subarray(i * 10, i * 10 + 10)).same, 10);
});

test('the ONNX zoo (CNNs included) matches PyTorch within the manifest tolerance in the relaxed build', () => {
  const zoo = new URL('tests/onnx/zoo/', root);
  const manifest = JSON.parse(readFileSync(new URL('manifest.json', zoo), 'utf8'));
  let differs = 0;
  for (const z of manifest.models) {
    const name = z.file.replace(/\.onnx$/, '');
    const x = f32(new URL(`${name}.in.f32`, zoo)), want = f32(new URL(`${name}.out.f32`, zoo));
    const bytes = readFileSync(new URL(z.file, zoo));
    const got = relaxed.loadFromBytes(bytes).predictBatch(x, z.batch);
    for (let i = 0; i < got.length; i++) {
      const e = Math.abs(got[i] - want[i]);
      assert.ok(e <= z.atol + z.rtol * Math.abs(want[i]), `${name}[${i}]: relaxed ${got[i]} vs torch ${want[i]}`);
    }
    if (compare(got, simd.loadFromBytes(bytes).predictBatch(x, z.batch)).same < got.length) differs++;
  }
  assert.ok(differs > 0, 'no zoo model differs from SIMD128 in any bit: relaxed_madd is not in use');
});

test('Q8 weights (integer kernels) give the SIMD128 bits in the relaxed build', () => {
  const file = readFileSync(new URL('build/models/mnist-mlp.q8.apr', root));
  const { same } = compare(relaxed.loadFromBytes(file).predictBatch(digits.images, digits.n),
    simd.loadFromBytes(file).predictBatch(digits.images, digits.n));
  assert.equal(same, digits.n * 10);
});
