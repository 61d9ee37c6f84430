// Quantized inference: .apr v2 files with APR_Q8 / APR_Q4 weights, built here with an independent
// quantizer (aprender's rules), against a float64 reference of the dequantized weights; SIMD vs
// scalar; MNIST accuracy on the 1,000 held-out digits; weightBytes; malformed quantized tensors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRuntime } from '../wasm/mlrt.mjs';
import { loadSplit } from '../tools/mnist-split.mjs';
import { aprV2, readSafetensors, readModel, argmax, rng, expectCode } from './helpers.mjs';
import { quantizeQ8, quantizeQ4 } from '../tools/apr/writer.mjs';

const simdRt = await createRuntime({ simd: true });
const scalarRt = await createRuntime({ simd: false });

// ------------------------------------------------------------ the test's own quantizer

const f32 = Math.fround;
const roundAway = (v) => (v < 0 ? -Math.floor(-v + 0.5) : Math.floor(v + 0.5)); // Rust's f32::round

/** IEEE half from a float32 value, round to nearest even: by exhaustive comparison with the
 * neighbouring halves (slow but obviously right; scales are few). */
function toF16(v) {
  if (Number.isNaN(v)) return 0x7e00;
  const sign = v < 0 || Object.is(v, -0) ? 0x8000 : 0;
  const a = Math.abs(v);
  if (a >= 65520) return sign | 0x7c00; // halfway between 65504 and 2^16 rounds to infinity
  let lo = 0, hi = 0x7bff; // largest half with value <= a, by binary search on the ordered bit patterns
  while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (fromF16(mid) <= a) lo = mid; else hi = mid - 1; }
  const below = fromF16(lo), above = fromF16(lo + 1);
  const pick = a - below < above - a ? lo : a - below > above - a ? lo + 1 : (lo & 1 ? lo + 1 : lo);
  return sign | pick;
}
function fromF16(h) {
  const e = (h >> 10) & 0x1f, m = h & 0x3ff, s = h & 0x8000 ? -1 : 1;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (e ? (1024 + m) * 2 ** (e - 25) : m * 2 ** -24);
}

function encQ8(w) {
  let max = 0;
  for (const v of w) max = Math.max(max, Math.abs(v));
  const scale = max === 0 ? 1 : f32(max / 127);
  const b = new Uint8Array(4 + w.length);
  new DataView(b.buffer).setFloat32(0, scale, true);
  w.forEach((v, i) => { b[4 + i] = Math.max(-127, Math.min(127, roundAway(f32(v / scale)))) & 0xff; });
  return b;
}
function encQ4(w) {
  const blocks = Math.ceil(w.length / 32), b = new Uint8Array(blocks * 18);
  for (let k = 0; k < blocks; k++) {
    const blk = w.slice(k * 32, k * 32 + 32);
    const scale = f32(blk.reduce((m, v) => Math.max(m, Math.abs(v)), 0) / 7);
    const h = toF16(scale);
    b[k * 18] = h & 0xff; b[k * 18 + 1] = h >> 8;
    blk.forEach((v, i) => {
      const q = (scale === 0 ? 0 : Math.max(-8, Math.min(7, roundAway(f32(v / scale))))) + 8;
      b[k * 18 + 2 + (i >> 1)] |= i & 1 ? q << 4 : q;
    });
  }
  return b;
}
/** The f32 values a quantized tensor means: q * scale as a float product. */
function dequant(dtype, b, n) {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength), out = new Float32Array(n);
  for (let e = 0; e < n; e++) {
    if (dtype === 'APR_Q8') out[e] = f32(dv.getInt8(4 + e) * dv.getFloat32(0, true));
    else {
      const k = Math.floor(e / 32), byte = b[k * 18 + 2 + ((e % 32) >> 1)];
      out[e] = f32(((e & 1 ? byte >> 4 : byte & 15) - 8) * fromF16(dv.getUint16(k * 18, true)));
    }
  }
  return out;
}
const encode = (dtype, w) => (dtype === 'APR_Q8' ? encQ8(w) : encQ4(w));

// ------------------------------------------------------------ float64 reference

/** layers: [{ w: Float32Array [out*in], b, in, out, act }] -> Float64Array(out) */
function forward(layers, x) {
  let h = Float64Array.from(x);
  for (const { w, b, in: n, out, act } of layers) {
    const y = new Float64Array(out);
    for (let o = 0; o < out; o++) {
      let s = b ? b[o] : 0;
      for (let i = 0; i < n; i++) s += w[o * n + i] * h[i];
      y[o] = act === 'relu' ? Math.max(0, s) : s;
    }
    if (act === 'softmax') {
      const m = Math.max(...y);
      let s = 0;
      for (let o = 0; o < out; o++) s += (y[o] = Math.exp(y[o] - m));
      for (let o = 0; o < out; o++) y[o] /= s;
    }
    h = y;
  }
  return h;
}

// ------------------------------------------------------------ the trainer's MNIST model

const digits = loadSplit('test');
const st = readSafetensors(readModel('mnist-mlp.safetensors'));
const F = Object.fromEntries(Object.entries(st).map(([k, t]) => [k, new Float32Array(t.bytes.buffer.slice(t.bytes.byteOffset, t.bytes.byteOffset + t.bytes.length))]));
function mnistApr(dtype) {
  return aprV2({ metadata: { model_type: 'mlp' }, tensors: [
    { name: 'fc1.weight', dtype, shape: [512, 784], data: encode(dtype, F['fc1.weight']) },
    { name: 'fc1.bias', dtype: 'F32', shape: [512], data: new Uint8Array(F['fc1.bias'].buffer) },
    { name: 'fc2.weight', dtype, shape: [10, 512], data: encode(dtype, F['fc2.weight']) },
    { name: 'fc2.bias', dtype: 'F32', shape: [10], data: new Uint8Array(F['fc2.bias'].buffer) },
  ] });
}
const files = { APR_Q8: mnistApr('APR_Q8'), APR_Q4: mnistApr('APR_Q4') };
const accuracy = (out) => {
  let ok = 0;
  for (let i = 0; i < digits.n; i++) if (argmax(out.subarray(i * 10, i * 10 + 10)) === digits.labels[i]) ok++;
  return ok / digits.n;
};

test('the .apr writer (mlrt convert, the demo and the benchmark use it) quantizes like this test\'s quantizer', () => {
  for (const [name, t] of Object.entries(st)) {
    if (t.shape.length !== 2) continue;
    assert.deepEqual(quantizeQ8(F[name]), encQ8(F[name]), `${name} APR_Q8`);
    assert.deepEqual(quantizeQ4(F[name]), encQ4(F[name]), `${name} APR_Q4`);
  }
  // f16 rounding spot checks: ties to even, overflow, subnormals
  assert.deepEqual([1, 1 + 2 ** -11, 1 + 3 * 2 ** -11, 65504, 65519, 65520, 2 ** -25, 2 ** -24 * 1.5, 0.1].map(toF16),
    [0x3c00, 0x3c00, 0x3c02, 0x7bff, 0x7bff, 0x7c00, 0x0000, 0x0002, 0x2e66]);
});

test('MNIST held-out digits: Q8 within 0.5 points and Q4 within 1.5 points of f32, both builds', () => {
  const f32Model = simdRt.loadFromBytes(readModel('mnist-mlp.safetensors'));
  const base = accuracy(f32Model.predictBatch(digits.images, digits.n));
  assert.equal(f32Model.info.weightBytes, (512 * 784 + 16 * 512) * 4);
  for (const rt of [simdRt, scalarRt]) {
    for (const [dtype, points] of [['APR_Q8', 0.5], ['APR_Q4', 1.5]]) {
      const m = rt.loadFromBytes(files[dtype]);
      assert.equal(m.info.dtype, dtype);
      const acc = accuracy(m.predictBatch(digits.images, digits.n));
      assert.ok(Math.abs(acc - base) * 100 <= points, `${rt.build.simd ? 'SIMD' : 'scalar'} ${dtype}: accuracy ${acc} vs f32 ${base}`);
      m.dispose();
    }
  }
  f32Model.dispose();
});

test('weightBytes: Q8 holds a quarter of the f32 bytes, Q4 an eighth plus its scales', () => {
  const f32Bytes = (512 * 784 + 16 * 512) * 4;
  const q8 = simdRt.loadFromBytes(files.APR_Q8), q4 = simdRt.loadFromBytes(files.APR_Q4);
  assert.equal(q8.info.weightBytes, f32Bytes / 4);
  // nibbles: 1/8 of f32; scales: one f32 per 16 inputs (784 = 49 x 16) and per 32 (512) per output
  assert.equal(q4.info.weightBytes, f32Bytes / 8 + (512 * 49 + 16 * 16) * 4);
  assert.ok(q4.info.weightBytes < f32Bytes * (1 / 8 + 1 / 16));
  q8.dispose(); q4.dispose();
});

test('MNIST Q8/Q4: predictions match a float64 reference of the dequantized weights; SIMD = scalar', () => {
  for (const dtype of ['APR_Q8', 'APR_Q4']) {
    const layers = [
      { w: dequant(dtype, encode(dtype, F['fc1.weight']), 512 * 784), b: F['fc1.bias'], in: 784, out: 512, act: 'relu' },
      { w: dequant(dtype, encode(dtype, F['fc2.weight']), 10 * 512), b: F['fc2.bias'], in: 512, out: 10, act: 'softmax' },
    ];
    const simd = simdRt.loadFromBytes(files[dtype]), scalar = scalarRt.loadFromBytes(files[dtype]);
    const a = simd.predictBatch(digits.images, digits.n), b = scalar.predictBatch(digits.images, digits.n);
    let maxRef = 0, maxBuild = 0, argmaxDiffs = 0;
    for (let i = 0; i < digits.n; i++) {
      const want = forward(layers, digits.images.subarray(i * 784, (i + 1) * 784));
      if (argmax(a.subarray(i * 10, i * 10 + 10)) !== argmax(want)) argmaxDiffs++;
      for (let o = 0; o < 10; o++) {
        maxRef = Math.max(maxRef, Math.abs(a[i * 10 + o] - want[o]));
        maxBuild = Math.max(maxBuild, Math.abs(a[i * 10 + o] - b[i * 10 + o]));
      }
      if (i < 20) assert.deepEqual(simd.predict(digits.images.subarray(i * 784, (i + 1) * 784)), a.subarray(i * 10, i * 10 + 10));
    }
    // int16 activations: |Δp| stays far below what could flip a confident digit
    assert.ok(maxRef <= 5e-4, `${dtype}: max |Δp| vs the float64 reference ${maxRef}`); // measured: ~6e-5
    assert.equal(argmaxDiffs, 0, `${dtype}: argmax differs from the reference on ${argmaxDiffs} digits`);
    assert.ok(maxBuild <= 1e-5, `${dtype}: SIMD vs scalar max |Δp| ${maxBuild}`);
    assert.deepEqual(a, b, `${dtype}: SIMD and scalar builds give the same bits (exact integer sums)`);
    for (let l = 0; l < 2; l++) assert.deepEqual(simd.layerWeights(l).weight, layers[l].w, `${dtype} layerWeights(${l})`);
    simd.dispose(); scalar.dispose();
  }
});

test('odd shapes, both dtypes, both builds: in 1..784 (Q4 blocks straddling rows), out 1..17, batches 1..7 and 70', () => {
  const rand = rng(42);
  for (const dtype of ['APR_Q8', 'APR_Q4']) {
    for (const inputs of [1, 2, 3, 15, 16, 17, 31, 33, 100, 784]) {
      for (const outputs of [1, 5, 8, 9, 17, 40]) {
        // block magnitudes change every 32 elements: distinct Q4 scales on both sides of a straddling block
        const w = Float32Array.from({ length: inputs * outputs }, (_, e) => f32((rand() * 2 - 1) * (1 + ((e >> 5) % 4))));
        const bias = Float32Array.from({ length: outputs }, () => f32(rand() - 0.5));
        const data = encode(dtype, w);
        const file = aprV2({ metadata: { model_type: 'mlp', activations: 'identity' }, tensors: [
          { name: 'l.weight', dtype, shape: [outputs, inputs], data },
          { name: 'l.bias', dtype: 'F32', shape: [outputs], data: new Uint8Array(bias.buffer) }] });
        const layer = { w: dequant(dtype, data, inputs * outputs), b: bias, in: inputs, out: outputs, act: 'identity' };
        const rows = inputs === 784 ? 7 : 70;
        const x = Float32Array.from({ length: rows * inputs }, () => (rand() < 0.3 ? 0 : f32(rand() * 4 - 2)));
        const outs = [simdRt, scalarRt].map((rt) => {
          const m = rt.loadFromBytes(file);
          assert.deepEqual(m.layerWeights(0).weight, layer.w);
          const y = m.predictBatch(x, rows);
          m.dispose();
          return y;
        });
        assert.deepEqual(outs[0], outs[1], `${dtype} [${outputs}, ${inputs}]: SIMD vs scalar`);
        for (let r = 0; r < rows; r++) {
          const xr = x.subarray(r * inputs, (r + 1) * inputs);
          const want = forward([layer], xr);
          const xs = xr.reduce((m, v) => Math.max(m, Math.abs(v)), 0) / 32767;
          for (let o = 0; o < outputs; o++) {
            let wabs = 0, terms = 1 + Math.abs(bias[o]);
            for (let i = 0; i < inputs; i++) { wabs += Math.abs(layer.w[o * inputs + i]); terms += Math.abs(layer.w[o * inputs + i] * xr[i]); }
            const bound = 0.5 * xs * wabs * 1.001 + 1e-5 * terms; // the activations' rounding + f32 sums
            const got = outs[0][r * outputs + o];
            assert.ok(Math.abs(got - want[o]) <= bound, `${dtype} [${outputs}, ${inputs}] row ${r} out ${o}: ${got} vs ${want[o]} (bound ${bound})`);
          }
        }
      }
    }
  }
});

test('malformed quantized tensors are refused at load with what and where', () => {
  const load = (tensors) => () => simdRt.loadFromBytes(aprV2({ metadata: { model_type: 'mlp' }, tensors }));
  const w = Float32Array.from({ length: 4 * 40 }, (_, i) => Math.sin(i));
  const q8 = encQ8(w), q4 = encQ4(w);
  const withBytes = (b, at, bytes) => { const c = b.slice(); c.set(bytes, at); return c; };
  const f32le = (v) => new Uint8Array(Float32Array.of(v).buffer);
  // wrong byte size: one byte short or long
  expectCode(assert, load([{ name: 'fc.weight', dtype: 'APR_Q8', shape: [4, 40], data: q8.subarray(0, 163) }]), 'SIZE_MISMATCH',
    "apr: tensor 'fc.weight' is APR_Q8 with 160 elements (164 bytes) but its size is 163 bytes");
  expectCode(assert, load([{ name: 'fc.weight', dtype: 'APR_Q4', shape: [4, 40], data: Uint8Array.of(...q4, 0) }]), 'SIZE_MISMATCH',
    "apr: tensor 'fc.weight' is APR_Q4 with 160 elements (90 bytes) but its size is 91 bytes");
  // non-finite scales
  for (const [v, what] of [[NaN, 'NaN'], [Infinity, 'infinite'], [-Infinity, 'infinite']]) {
    expectCode(assert, load([{ name: 'fc.weight', dtype: 'APR_Q8', shape: [4, 40], data: withBytes(q8, 0, f32le(v)) }]), 'NON_FINITE',
      `apr: tensor 'fc.weight' APR_Q8 scale is ${what}`);
  }
  expectCode(assert, load([{ name: 'fc.weight', dtype: 'APR_Q8', shape: [4, 40], data: withBytes(q8, 0, f32le(3e38)) }]), 'NON_FINITE',
    "apr: tensor 'fc.weight' APR_Q8 scale is too large: 128 x scale overflows f32");
  for (const [h, what] of [[0x7e00, 'NaN'], [0x7c01, 'NaN'], [0x7c00, 'infinite'], [0xfc00, 'infinite']]) {
    expectCode(assert, load([{ name: 'fc.weight', dtype: 'APR_Q4', shape: [4, 40], data: withBytes(q4, 3 * 18, [h & 0xff, h >> 8]) }]), 'NON_FINITE',
      `apr: tensor 'fc.weight' APR_Q4 scale of block 3 is ${what}`);
  }
  // a quantized bias with a NaN scale, named as the bias
  expectCode(assert, load([{ name: 'fc.weight', dtype: 'F32', shape: [160, 1], data: new Uint8Array(w.buffer) },
    { name: 'fc.bias', dtype: 'APR_Q4', shape: [160], data: withBytes(q4, 4 * 18, [0x00, 0x7e]) }]), 'NON_FINITE',
  "apr: tensor 'fc.bias' APR_Q4 scale of block 4 is NaN");
  // GGUF k-quants: a non-finite super-block scale
  expectCode(assert, load([{ name: 'fc.weight', dtype: 'Q6_K', shape: [1, 512], data: withBytes(new Uint8Array(420), 210 + 208, [0x00, 0xfc]) }]),
    'NON_FINITE', "apr: tensor 'fc.weight' Q6_K d of super-block 1 is infinite");
  // a quantized bias dequantizes at load: a Q8 bias gives q * scale exactly
  const m = simdRt.loadFromBytes(aprV2({ metadata: { model_type: 'mlp', activations: 'identity' }, tensors: [
    { name: 'fc.weight', dtype: 'APR_Q8', shape: [2, 3], data: encQ8([1, 2, 3, -4, 5, -6]) },
    { name: 'fc.bias', dtype: 'APR_Q8', shape: [2], data: encQ8([0.5, -0.25]) }] }));
  assert.deepEqual(m.layerWeights(0).bias, dequant('APR_Q8', encQ8([0.5, -0.25]), 2));
  assert.equal(m.info.weightBytes, 8 * 4); // one panel of 8 outputs x 2 pairs of inputs (3 padded to 4)
});

// GGML's super-blocks, decoded here in llama.cpp's loop order (dequantize_row_q4_K / _q6_K)
function decodeQ4K(b, n) {
  const y = new Float32Array(Math.ceil(n / 256) * 256);
  for (let blk = 0, off = 0; off < b.length; blk++, off += 144) {
    const d = fromF16(b[off] | (b[off + 1] << 8)), dmin = fromF16(b[off + 2] | (b[off + 3] << 8)), sc = b.subarray(off + 4, off + 16);
    const scaleMin = (j) => (j < 4 ? [sc[j] & 63, sc[j + 4] & 63]
      : [(sc[j + 4] & 0xf) | ((sc[j - 4] >> 6) << 4), (sc[j + 4] >> 4) | ((sc[j] >> 6) << 4)]);
    let q = off + 16, at = blk * 256;
    for (let j = 0, is = 0; j < 256; j += 64, is += 2, q += 32) {
      const [s1, m1] = scaleMin(is), [s2, m2] = scaleMin(is + 1);
      const d1 = f32(d * s1), mm1 = f32(dmin * m1), d2 = f32(d * s2), mm2 = f32(dmin * m2);
      for (let l = 0; l < 32; l++) y[at + j + l] = f32(f32(d1 * (b[q + l] & 0xf)) - mm1);
      for (let l = 0; l < 32; l++) y[at + j + 32 + l] = f32(f32(d2 * (b[q + l] >> 4)) - mm2);
    }
  }
  return y.subarray(0, n);
}
function decodeQ6K(b, n) {
  const y = new Float32Array(Math.ceil(n / 256) * 256);
  for (let blk = 0, off = 0; off < b.length; blk++, off += 210) {
    const d = fromF16(b[off + 208] | (b[off + 209] << 8));
    let ql = off, qh = off + 128, sc = off + 192, at = blk * 256;
    for (let half = 0; half < 2; half++, ql += 64, qh += 32, sc += 8, at += 128) {
      for (let l = 0; l < 32; l++) {
        const is = l >> 4, s = (k) => (b[sc + is + k] << 24) >> 24;
        const q1 = ((b[ql + l] & 0xf) | (((b[qh + l] >> 0) & 3) << 4)) - 32;
        const q2 = ((b[ql + l + 32] & 0xf) | (((b[qh + l] >> 2) & 3) << 4)) - 32;
        const q3 = ((b[ql + l] >> 4) | (((b[qh + l] >> 4) & 3) << 4)) - 32;
        const q4 = ((b[ql + l + 32] >> 4) | (((b[qh + l] >> 6) & 3) << 4)) - 32;
        y[at + l] = f32(f32(d * s(0)) * q1);
        y[at + l + 32] = f32(f32(d * s(2)) * q2);
        y[at + l + 64] = f32(f32(d * s(4)) * q3);
        y[at + l + 96] = f32(f32(d * s(6)) * q4);
      }
    }
  }
  return y.subarray(0, n);
}

test('GGUF Q4_K / Q6_K weights are dequantized at load (llama.cpp element order) and run as f32', () => {
  const rand = rng(7);
  for (const [dtype, bytes, decode] of [['Q4_K', 144, decodeQ4K], ['Q6_K', 210, decodeQ6K]]) {
    const [outputs, inputs] = [3, 150]; // 450 elements: the second super-block is partly used
    const data = Uint8Array.from({ length: 2 * bytes }, () => Math.floor(rand() * 256));
    for (let blk = 0; blk < 2; blk++) { // finite, moderate super-block scales
      if (dtype === 'Q4_K') { data[blk * 144 + 1] = 0x3c; data[blk * 144 + 3] = 0x38; } else data[blk * 210 + 209] = 0x24;
    }
    const file = aprV2({ metadata: { model_type: 'mlp', activations: 'identity' }, tensors: [{ name: 'fc.weight', dtype, shape: [outputs, inputs], data }] });
    const want = decode(data, outputs * inputs);
    const x = Float32Array.from({ length: inputs }, () => f32(rand() * 2 - 1));
    for (const rt of [simdRt, scalarRt]) {
      const m = rt.loadFromBytes(file);
      assert.equal(m.info.dtype, dtype);
      assert.equal(m.info.weightBytes, 8 * inputs * 4, 'held as f32 (one panel of 8 outputs)');
      assert.deepEqual(m.layerWeights(0).weight, want, `${dtype} layerWeights`);
      const y = m.predict(x), ref = forward([{ w: want, b: null, in: inputs, out: outputs, act: 'identity' }], x);
      for (let o = 0; o < outputs; o++) assert.ok(Math.abs(y[o] - ref[o]) <= 1e-4 * (1 + Math.abs(ref[o])), `${dtype} output ${o}`);
      m.dispose();
    }
  }
});
