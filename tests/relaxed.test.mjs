// The relaxed-SIMD build (wasm/mlrt-relaxed.wasm, f32x4.relaxed_madd in the dense and conv kernels)
// against the SIMD128 build and the independent references, and how createRuntime picks builds.
//
// Tolerance: the relaxed build fuses each multiply-add (one rounding instead of two), so its f32
// results may differ from the SIMD128 build in the last bits; on the MNIST MLP's probabilities by at
// most 1e-5, with the same argmax on every held-out digit.
//
// Q8 layers quantize each activation row to 7 bits with a zero point in the relaxed build (for
// i16x8.relaxed_dot_i8x16_i7x16_s), where the other builds use 16 bits: their results are not the
// SIMD128 bits. The test holds them bit for bit to its own model of that scheme, and the MNIST
// accuracy to f32's. Q4 is unchanged and stays bit-identical.
//
// Node 20 runs relaxed SIMD only behind --experimental-wasm-relaxed-simd; the flag is set here,
// before this process compiles any wasm (it is refused in NODE_OPTIONS).
import v8 from 'node:v8';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadSplit } from '../tools/mnist-split.mjs';
import { readModel, parseBin, referencePredict, argmax, root, rng, aprV2, firstBitDiff } from './helpers.mjs';
import { modelToApr } from '../tools/apr/writer.mjs';

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

// ------------------------------------------------------------ Q8: 7-bit activations

const fr = Math.fround;
const rne = (v) => fr(v + 2 ** 23) - 2 ** 23; // v in [0, 2^22): round half to even, as f32 addition does

/** One row as the relaxed build quantizes it for a Q8 layer: xq in 0..127, x ~ lo + xs * xq. */
function u7Row(x) {
  let lo = 0, hi = 0;
  for (const v of x) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
  const range = hi - lo, xq = new Uint8Array(x.length);
  if (range === 0) return { xq, xs: 0, lo };
  const pre = range > 2 ** 126 ? 0.25 : range < 2 ** -96 ? 2 ** 64 : 1;
  const lop = fr(lo * pre), inv = fr(127 / (range * pre));
  for (let i = 0; i < x.length; i++) xq[i] = Math.min(127, rne(fr(fr(fr(x[i] * pre) - lop) * inv)));
  return { xq, xs: range / 127, lo };
}

/** y = qs * (xs * sum q xq + lo * sum q) + b, in the build's order of roundings (in <= 65536: one i32 sum). */
function q8RelaxedLayer(q, qs, b, inputs, outputs, x) {
  const { xq, xs, lo } = u7Row(x), y = new Float32Array(outputs);
  const mul = qs * xs, zp = qs * lo;
  for (let o = 0; o < outputs; o++) {
    let acc = 0, qsum = 0;
    for (let i = 0; i < inputs; i++) { acc += q[o * inputs + i] * xq[i]; qsum += q[o * inputs + i]; }
    y[o] = fr(fr(fr(acc) * mul + (zp !== 0 ? zp * qsum : 0)) + b[o]);
  }
  return y;
}

test('Q8 in the relaxed build: 7-bit activations with a zero point, bit for bit against this test\'s model, odd shapes and ranges', () => {
  const rand = rng(7);
  let rowsSeen = 0;
  for (const inputs of [1, 3, 4, 5, 15, 16, 17, 33, 100, 784]) {
    for (const outputs of [1, 5, 8, 9, 17, 32, 33, 40, 70]) {
      const q = Int8Array.from({ length: inputs * outputs }, (_, e) => (e % 23 === 0 ? -128 : Math.floor(rand() * 255) - 127));
      const qs = fr(1e-4 + rand() * 1e-3); // small enough for the largest row's outputs to stay finite
      const data = new Uint8Array(4 + q.length);
      new DataView(data.buffer).setFloat32(0, qs, true);
      data.set(new Uint8Array(q.buffer), 4);
      // with a bias, and without (where outputs of the tiny rows are not lost in the bias)
      const b = Float32Array.from({ length: outputs }, () => (outputs % 2 ? fr(rand() - 0.5) : 0));
      const file = aprV2({ metadata: { model_type: 'mlp', activations: 'identity' }, tensors: [
        { name: 'l.weight', dtype: 'APR_Q8', shape: [outputs, inputs], data },
        { name: 'l.bias', dtype: 'F32', shape: [outputs], data: new Uint8Array(b.buffer) }] });
      // rows: non-negative (zero point 0, zero runs skipped), both signs, all zero, one value,
      // the extremes of f32's range (the scaling steps), values exactly halfway between two steps
      const rows = [
        Float32Array.from({ length: inputs }, () => (rand() < 0.4 ? 0 : fr(rand() * 3))),
        Float32Array.from({ length: inputs }, () => fr(rand() * 4 - 2.5)),
        new Float32Array(inputs),
        Float32Array.from({ length: inputs }, (_, i) => (i === inputs >> 1 ? -1 : 0)),
        Float32Array.from({ length: inputs }, (_, i) => (i === 0 ? 3e38 : i === inputs - 1 ? -3e38 : i === 1 ? 1e38 : fr(rand()))), // hi - lo > FLT_MAX
        Float32Array.from({ length: inputs }, () => fr((rand() - 0.5) * 1e-38)), // 127 / (hi - lo) > FLT_MAX
        Float32Array.from({ length: inputs }, (_, i) => (i === 0 ? 127 : (i * 37 % 128) + 0.5)),
      ];
      const m = relaxed.loadFromBytes(file);
      const got = m.predictBatch(Float32Array.from(rows.flatMap((r) => Array.from(r))), rows.length);
      m.dispose();
      rows.forEach((x, r) => {
        const want = q8RelaxedLayer(q, qs, b, inputs, outputs, x);
        const g = got.subarray(r * outputs, (r + 1) * outputs);
        const i = firstBitDiff(g, want);
        assert.equal(i, -1, `[${outputs}, ${inputs}] row ${r} output ${i}: ${g[i]} vs ${want[i]}`);
        rowsSeen++;
      });
    }
  }
  assert.equal(rowsSeen, 10 * 9 * 7);
});

test('MNIST Q8 in the relaxed build: accuracy within 0.5 points of f32, and the SIMD128 Q8 argmax on at least 99% of the digits', () => {
  const file = readFileSync(new URL('build/models/mnist-mlp.q8.apr', root));
  const ya = relaxed.loadFromBytes(file).predictBatch(digits.images, digits.n);
  const yb = simd.loadFromBytes(file).predictBatch(digits.images, digits.n);
  const yf = simd.loadFromBytes(readModel('mnist-mlp.f32.bin')).predictBatch(digits.images, digits.n);
  let ra = 0, rf = 0, agree = 0;
  for (let i = 0; i < digits.n; i++) {
    const a = argmax(ya.subarray(i * 10, i * 10 + 10)), f = argmax(yf.subarray(i * 10, i * 10 + 10));
    ra += a === digits.labels[i], rf += f === digits.labels[i], agree += a === argmax(yb.subarray(i * 10, i * 10 + 10));
  }
  assert.ok(Math.abs(ra - rf) <= 5, `relaxed Q8 ${ra / 10}% vs f32 ${rf / 10}% on ${digits.n} digits`);
  assert.ok(agree >= 0.99 * digits.n, `relaxed Q8 agrees with SIMD128 Q8 on ${agree} of ${digits.n} digits`);
  assert.ok(compare(ya, yb).same < ya.length, 'relaxed Q8 gave the SIMD128 bits everywhere: its 7-bit path is not in use');
});

test('Q4 weights (integer kernels, 16-bit activations) give the SIMD128 bits in the relaxed build', () => {
  const file = modelToApr(simd.loadFromBytes(readModel('mnist-mlp.f32.bin')), { version: 2, quantize: 'q4' });
  const { same } = compare(relaxed.loadFromBytes(file).predictBatch(digits.images, digits.n),
    simd.loadFromBytes(file).predictBatch(digits.images, digits.n));
  assert.equal(same, digits.n * 10);
});
