// The .apr writer library (tools/apr/): the spec's golden files byte for byte, the MessagePack
// encoder against the test builder, metadata order, bincode payloads, f16 and the Q8/Q4 quantizers,
// and round trips of every model kind through every option, reloaded by the runtime.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRuntime } from '../wasm/mlrt.mjs';
import { signAprV1, encryptAprV1, verifyAprV1, generateKeyPair } from '../wasm/apr-crypto.mjs';
import { loadSplit } from '../tools/mnist-split.mjs';
import {
  writeAprV1, writeAprV2, modelToApr, linearRegressionPayload, logisticRegressionPayload, mnistMlpPayload,
  quantizeQ8, quantizeQ4, dequantizeQ8, dequantizeQ4, f32ToF16, f16ToF32, v1MetadataBytes, v2MetadataJson,
  defaultCreatedAt, DTYPES, AprWriteError,
} from '../tools/apr/writer.mjs';
import { encodeMsgpack, F32, OrderedMap } from '../tools/apr/msgpack.mjs';
import {
  concat, u64le, f32bytes, fromHex, crc32, msgpack, MsgpackF32, MsgpackMap, readModel, safetensorsF32, aprV2, rng, argmax,
  GOLDEN_V1, goldenV2, GOLDEN_WEIGHTS,
} from './helpers.mjs';

const rt = await createRuntime();
const enc = new TextEncoder();
const bitsEqual = (a, b, label) => assert.deepEqual(new Uint8Array(a.buffer, a.byteOffset, a.byteLength),
  new Uint8Array(b.buffer, b.byteOffset, b.byteLength), `${label}: not bit-identical`);

// ------------------------------------------------------------------ golden files (spec §11: GOLDEN_V1, goldenV2() in helpers.mjs)


test('golden_v1 (171 bytes) byte for byte: metadata in any key order, the test struct as a raw payload', () => {
  const payload = concat(u64le(9), enc.encode('golden_v1'), u64le(8), f32bytes(GOLDEN_WEIGHTS), f32bytes([0.125]));
  // keys given out of order: the writer puts them in aprender's Metadata field order
  const metadata = { model_name: 'golden-v1', aprender_version: '0.0.0-golden', created_at: '1700000000' };
  const file = writeAprV1({ modelType: 'LinearRegression', metadata, payload, qualityScore: 85 });
  assert.deepEqual(file, GOLDEN_V1);
  assert.deepEqual(writeAprV1({ modelType: 1, metadata, payload, qualityScore: 85 }), GOLDEN_V1, 'numeric model type');
});

test('golden_v2_current (516 bytes) byte for byte, tensors added weights then bias; it loads and predicts', () => {
  const file = writeAprV2({
    metadata: { model_type: 'linear_regression', name: 'golden-v2', version: '0.0.0-golden', created_at: '1700000000', param_count: 8 },
    tensors: [{ name: 'weights', dtype: 'F32', shape: [8], data: f32bytes(GOLDEN_WEIGHTS) },
      { name: 'bias', dtype: DTYPES.F32, shape: [1], data: f32bytes([0.125]) }],
  });
  assert.deepEqual(file, goldenV2());
  assert.deepEqual(Array.from(rt.loadFromBytes(file).predict([1, 1, 1, 1, 1, 1, 1, 1])), [13.375]);
});

// ------------------------------------------------------------------ MessagePack

test('MessagePack encoder equals the test builder for every type and size class', () => {
  const value = {
    b: true, f: false, n: null, neg: -1, neg8: -100, neg16: -1000, neg32: -100000, neg64: -(2 ** 40), u7: 127, u8: 200,
    u16: 60000, u32: 4e9, u64: 2 ** 40, half: 0.5, tenth: 0.1, negz: -0, nan: NaN, inf: -Infinity, huge: 2 ** 70,
    bin: Uint8Array.of(0, 1, 255), bin16: new Uint8Array(300), arr: [1, 'two', [3]], a16: new Array(20).fill(7),
    s31: 'x'.repeat(31), s32: 'x'.repeat(32), s8: 'x'.repeat(255), s16: 'y'.repeat(300), s32b: 'z'.repeat(70000),
    m16: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, i])), utf8: 'é€😀', empty: {}, emptyArr: [],
  };
  assert.deepEqual(encodeMsgpack(value), msgpack(value));
  assert.deepEqual(encodeMsgpack(new F32(0.1)), msgpack(new MsgpackF32(0.1)));
  assert.deepEqual(encodeMsgpack(new OrderedMap([['b', 1], ['a', 2], ['b', 3]])), msgpack(new MsgpackMap([['b', 1], ['a', 2], ['b', 3]])));
  // 64-bit integers as BigInt take their smallest form, like rmp's write_uint/write_sint
  assert.deepEqual(encodeMsgpack(5n), Uint8Array.of(5));
  assert.deepEqual(encodeMsgpack(18446744073709551615n), msgpack(18446744073709551615n));
  assert.deepEqual(encodeMsgpack(-9223372036854775808n), msgpack(-9223372036854775808n));
  // random integers around every boundary
  const r = rng(7);
  for (let i = 0; i < 2000; i++) {
    const v = Math.round((r() - 0.5) * 2 ** Math.floor(r() * 60));
    assert.deepEqual(encodeMsgpack(v), msgpack(v), String(v));
  }
  assert.throws(() => encodeMsgpack(new Map([[1, 2]])), /keys must be strings/);
  assert.throws(() => encodeMsgpack(2n ** 64n), RangeError);
});

test('v1 metadata: aprender field order, absent and empty fields omitted, JSON objects sorted, f32 fields as float32', () => {
  const meta = {
    custom: { z: 1, a: { y: [1, { d: 2, c: 3 }], b: 0.25 } }, metrics: {}, description: 'd', hyperparameters: { lr: 0.5 },
    training: { source: 'mnist', samples: 1000 }, model_name: null, unknown: 'kept', aprender_version: '9.9.9', created_at: '5',
    distillation_info: { params: { alpha: 0.5, temperature: 2, epochs: 3 }, method: 'Standard' },
  };
  const want = msgpack(new MsgpackMap([
    ['created_at', '5'], ['aprender_version', '9.9.9'], ['description', 'd'], ['training', new MsgpackMap([['samples', 1000], ['source', 'mnist']])],
    ['hyperparameters', { lr: 0.5 }], ['custom', new MsgpackMap([['z', 1], ['a', new MsgpackMap([['b', 0.25], ['y', [1, new MsgpackMap([['c', 3], ['d', 2]])]]])]])],
    ['distillation_info', new MsgpackMap([['method', 'Standard'],
      ['params', new MsgpackMap([['temperature', new MsgpackF32(2)], ['alpha', new MsgpackF32(0.5)], ['epochs', 3]])]])],
    ['unknown', 'kept'],
  ]));
  assert.deepEqual(v1MetadataBytes(meta), want);
  assert.throws(() => v1MetadataBytes({ created_at: 5 }), /created_at must be a string/);
  assert.throws(() => v1MetadataBytes({ training: { samples: -1 } }), /training.samples must be a non-negative integer/);
  // created_at: the caller's, else SOURCE_DATE_EPOCH, else "0" — never the clock
  assert.equal(defaultCreatedAt({}), '0');
  assert.equal(defaultCreatedAt({ SOURCE_DATE_EPOCH: '1700000001' }), '1700000001');
  assert.throws(() => defaultCreatedAt({ SOURCE_DATE_EPOCH: 'yesterday' }), /SOURCE_DATE_EPOCH/);
});

test('v1: LICENSED flag when metadata.license is present; the runtime reads header and metadata back', () => {
  const license = { tier: 'Team', uuid: 'u-1', hash: 'h', seats: 5 };
  const payload = linearRegressionPayload({ coefficients: [2, -1], intercept: 0.5 });
  const file = writeAprV1({ modelType: 'LinearRegression', metadata: { created_at: '1', license }, payload, qualityScore: 90 });
  const m = rt.loadFromBytes(file);
  assert.deepEqual(m.info.apr.flags, ['LICENSED']);
  assert.equal(m.info.apr.qualityScore, 90);
  assert.deepEqual(m.info.metadata, { created_at: '1', aprender_version: 'mlrt-0.1.0', license: { uuid: 'u-1', hash: 'h', seats: 5, tier: 'Team' } });
  assert.deepEqual(Array.from(m.predictBatch([1, 1, 3, -2], 2)), [1.5, 8.5]);
  assert.equal(crc32(file.subarray(0, file.length - 4)), new DataView(file.buffer).getUint32(file.length - 4, true));
  assert.throws(() => writeAprV1({ modelType: 'Nope', payload }), AprWriteError);
  assert.throws(() => writeAprV1({ modelType: 1, payload, compression: 'gzip' }), /unknown compression 'gzip'/);
  assert.throws(() => writeAprV1({ modelType: 1, payload, qualityScore: 101 }), /quality score 101/);
});

test('v2 metadata: AprV2Metadata order, the three provenance keys always present, custom keys last, serde_json numbers', () => {
  const json = v2MetadataJson({
    extra: { b: 1, a: [0.1, 1e21, 1e-7, 0.000001, 123.5] }, param_count: 3, model_type: 'x', license: 'MIT',
    quantization: { symmetric: true, bits: 4, quant_type: 'int4', block_size: 32 }, rope_theta: 10000, rms_norm_eps: 1e-6,
    special_tokens: { eos_token: '</s>' }, activations: 'relu',
  });
  assert.equal(json, '{"model_type":"x","license":"MIT","data_source":null,"data_license":null,"total_size":0,"param_count":3,'
    + '"quantization":{"quant_type":"int4","bits":4,"block_size":32,"symmetric":true},'
    + '"special_tokens":{"bos_token":null,"eos_token":"</s>","unk_token":null,"pad_token":null,"im_start_token":null,"im_end_token":null},'
    + '"rope_theta":10000.0,"rms_norm_eps":1e-6,"extra":{"a":[0.1,1e21,1e-7,1e-6,123.5],"b":1},"activations":"relu"}');
  assert.deepEqual(JSON.parse(json).extra.a, [0.1, 1e21, 1e-7, 0.000001, 123.5]);
  assert.throws(() => v2MetadataJson({ param_count: '3' }), /param_count must be a non-negative integer/);
});

// ------------------------------------------------------------------ bincode payloads

test('bincode payloads: the spec\'s LinearRegression and LogisticRegression bytes, aprender\'s defaults', () => {
  assert.deepEqual(linearRegressionPayload({ coefficients: [2, -1], intercept: 0.5 }), fromHex('01 0200000000000000 00000040 000080bf 0000003f 01'));
  assert.deepEqual(linearRegressionPayload({ coefficients: null, fitIntercept: true }), fromHex('00 00000000 01'));
  assert.deepEqual(logisticRegressionPayload({ coefficients: [1], intercept: 0.25, classWeight: { Manual: [1, 3] }, fitMode: { MiniBatch: 32 } }),
    fromHex(`01 0100000000000000 0000803f 0000803e 0ad7233c e803000000000000 17b7d138
      02000000 0200000000000000 0000803f 00004040 00000000 02000000 2000000000000000`));
  // defaults: lr 0.01, max_iter 1000, tol 1e-4, Uniform, l2 0, Batch
  assert.deepEqual(logisticRegressionPayload({ coefficients: [1], intercept: 0.25 }),
    fromHex('01 0100000000000000 0000803f 0000803e 0ad7233c e803000000000000 17b7d138 00000000 00000000 00000000'));
  assert.deepEqual(mnistMlpPayload({ w1: [1, 2], b1: [3], w2: [4], b2: [5] }),
    concat(u64le(2), f32bytes([1, 2]), u64le(1), f32bytes([3]), u64le(1), f32bytes([4]), u64le(1), f32bytes([5])));
});

// ------------------------------------------------------------------ f16 and quantizers

test('f16: every half value round-trips; ties between neighbours go to the even one; overflow, subnormals', () => {
  for (let h = 0; h < 0x7c00; h++) {
    assert.equal(f32ToF16(f16ToF32(h)), h);
    assert.equal(f32ToF16(-f16ToF32(h)), h | 0x8000);
  }
  for (let h = 0; h < 0x7bff; h += 37) {
    const mid = (f16ToF32(h) + f16ToF32(h + 1)) / 2; // exact in f32
    assert.equal(f32ToF16(mid), h & 1 ? h + 1 : h, `tie after ${h}`);
    assert.equal(f32ToF16(Math.fround(mid * (1 + 2 ** -20))), h + 1);
  }
  assert.equal(f32ToF16(65520), 0x7c00, '65520 rounds to infinity');
  assert.equal(f32ToF16(65519), 0x7bff);
  assert.equal(f32ToF16(2 ** -25), 0, 'half the smallest subnormal: tie to even zero');
  assert.equal(f32ToF16(Math.fround(2 ** -25 * 1.01)), 1);
  assert.equal(f32ToF16(Infinity), 0x7c00);
  assert.equal(f32ToF16(NaN) & 0x7e00, 0x7e00);
});

test('Q8: one f32 scale max|x|/127, round half away from zero, clamp ±127; all zero: scale 1', () => {
  const q = quantizeQ8([127, -63.5, 0.5, -0.5, 1.49, 0]);
  assert.deepEqual(Array.from(q), [0, 0, 0x80, 0x3f, 127, 0xc0, 1, 0xff, 1, 0]); // -63.5 -> -64, ±0.5 -> ±1
  assert.deepEqual(Array.from(quantizeQ8([0, 0])), [0, 0, 0x80, 0x3f, 0, 0]);
  assert.deepEqual(quantizeQ8([]), new Uint8Array(0));
  const x = Float32Array.from({ length: 1000 }, (_, i) => Math.sin(i) * 3);
  const bytes = quantizeQ8(x), scale = new DataView(bytes.buffer).getFloat32(0, true);
  assert.equal(scale, Math.fround(x.reduce((m, v) => Math.max(m, Math.abs(v)), 0) / 127));
  const back = dequantizeQ8(bytes, x.length);
  x.forEach((v, i) => assert.ok(Math.abs(v - back[i]) <= scale / 2 * (1 + 1e-6), `${i}: ${v} vs ${back[i]}`));
});

test('Q4: per 32 values an f16 scale max|x|/7, nibbles q+8 packed low then high, last block zero-padded', () => {
  // one block: max 7 -> scale 1; values -7..7 map to nibbles 1..15; 3.5 -> 4 and -3.5 -> -4 (away from zero)
  const x = [7, -7, 3.5, -3.5, 0, 1, 2, 3];
  const q = quantizeQ4(x);
  assert.equal(q.length, 18);
  assert.deepEqual(Array.from(q.subarray(0, 2)), [0x00, 0x3c], 'f16 1.0');
  assert.deepEqual(Array.from(q.subarray(2, 6)), [0x1f, 0x4c, 0x98, 0xba]);
  assert.ok(q.subarray(6).every((b) => b === 0), 'padding');
  assert.deepEqual(Array.from(quantizeQ4([0, 0, 0])), [0x00, 0x3c, 0x88, 0x08, ...new Array(14).fill(0)], 'all zero: scale 1, nibbles 8');
  assert.equal(quantizeQ4(new Float32Array(33)).length, 36);
  const r = rng(3);
  const v = Float32Array.from({ length: 1000 }, () => (r() - 0.5) * 10);
  const bytes = quantizeQ4(v), back = dequantizeQ4(bytes, v.length);
  for (let i = 0; i < v.length; i++) {
    const blk = i >> 5, s = Math.fround(v.subarray(blk * 32, blk * 32 + 32).reduce((m, y) => Math.max(m, Math.abs(y)), 0) / 7);
    const s16 = f16ToF32(new DataView(bytes.buffer).getUint16(blk * 18, true));
    assert.ok(Math.abs(v[i] - back[i]) <= s / 2 + 7 * Math.abs(s - s16) + 1e-6, `${i}`);
  }
});

// ------------------------------------------------------------------ models

const digits = loadSplit('test');
const N = 200; // held-out digits used for prediction comparisons
const images = digits.images.subarray(0, N * 784);
const mnistFiles = {
  'f32 .bin': readModel('mnist-mlp.f32.bin'), 'f64 .bin': readModel('mnist-mlp.f64.bin'),
  safetensors: readModel('mnist-mlp.safetensors'), 'aprender safetensors': readModel('mnist-mlp.aprender.safetensors'),
  bintensors: readModel('mnist-mlp.bintensors'),
};
const mnist = rt.loadFromBytes(mnistFiles.safetensors);
const mnistWant = mnist.predictBatch(images, N);

const r = rng(11);
const coef = Array.from({ length: 13 }, () => (r() - 0.5) * 4);
const linearSrc = safetensorsF32({ coefficients: [[13], coef], intercept: [[1], [0.75]] });
const logisticSrc = safetensorsF32({ coefficients: [[13], coef], intercept: [[1], [-0.25]] }, { model_type: 'logistic_regression' });
const xs = Float32Array.from({ length: 13 * 50 }, () => (r() - 0.5) * 6);
const MODELS = {
  linear: { model: rt.loadFromBytes(linearSrc), inputs: xs, n: 50, type: 'LinearRegression' },
  logistic: { model: rt.loadFromBytes(logisticSrc), inputs: xs, n: 50, type: 'LogisticRegression' },
  mnist: { model: mnist, inputs: images, n: N, type: 'NeuralSequential' },
};
const predictions = (m, { inputs, n }) => m.predictBatch(inputs, n);

const COMPRESSIONS = ['none', 'lz4', 'zstd', 'zstd-max'];

for (const [kind, src] of Object.entries(MODELS)) {
  for (const compression of COMPRESSIONS) {
    test(`v1 ${kind}, ${compression}: reloads bit-identical, deterministic`, () => {
      const file = modelToApr(src.model, { version: 1, compression, name: `${kind}-v1` });
      assert.deepEqual(modelToApr(src.model, { version: 1, compression, name: `${kind}-v1` }), file, 'same bytes twice');
      const m = rt.loadFromBytes(file, { expect: src.type });
      assert.equal(m.info.apr.compression, { none: 'None', lz4: 'Lz4', zstd: 'ZstdDefault', 'zstd-max': 'ZstdMax' }[compression]);
      assert.equal(m.info.metadata.model_name, `${kind}-v1`);
      assert.equal(m.info.metadata.created_at, '0');
      bitsEqual(predictions(m, src), predictions(src.model, src), `${kind} ${compression}`);
      m.dispose();
    });
  }
}

for (const [kind, src] of Object.entries(MODELS)) {
  for (const quantize of ['f32', 'q8', 'q4']) {
    test(`v2 ${kind}, ${quantize}: inspect, own dequantization, deterministic`, () => {
      const file = modelToApr(src.model, { version: 2, quantize });
      assert.deepEqual(modelToApr(src.model, { version: 2, quantize }), file);
      const info = rt.inspect(file);
      const dtype = { f32: 'F32', q8: 'APR_Q8', q4: 'APR_Q4' }[quantize];
      const weights = info.tensors.filter((t) => t.shape.length === 2 || t.name === 'weights');
      assert.ok(weights.length > 0 && weights.every((t) => t.dtype === dtype), JSON.stringify(info.tensors));
      assert.ok(info.tensors.filter((t) => !weights.includes(t)).every((t) => t.dtype === 'F32'), 'biases stay f32');
      assert.deepEqual(info.apr.flags, quantize === 'f32' ? ['LAYOUT_ROW_MAJOR'] : ['QUANTIZED', 'LAYOUT_ROW_MAJOR']);
      assert.equal(info.metadata.model_type, { linear: 'linear_regression', logistic: 'logistic_regression', mnist: 'neural_sequential' }[kind]);
      assert.equal(info.metadata.quantization?.bits, { f32: undefined, q8: 8, q4: 4 }[quantize]);
      assert.equal(info.metadata.param_count, src.model.info.params);
      if (quantize === 'f32') {
        bitsEqual(predictions(rt.loadFromBytes(file), src), predictions(src.model, src), kind);
        return;
      }
      // the same file with my dequantized weights as F32: what a quantized kernel must compute
      const deq = dequantizedCopy(file, info);
      const got = predictions(rt.loadFromBytes(deq), src), want = predictions(src.model, src);
      if (kind === 'mnist') {
        const agree = Array.from({ length: src.n }, (_, i) => argmax(got.subarray(i * 10, i * 10 + 10)) === argmax(want.subarray(i * 10, i * 10 + 10)));
        const share = agree.filter(Boolean).length / src.n;
        assert.ok(share >= (quantize === 'q8' ? 0.99 : 0.9), `${quantize}: ${share} of the labels agree`);
      } else {
        // stated bound: |Δy| <= ||x||_1 * max|Δw| (sigmoid only shrinks it), max|Δw| <= scale/2 (Q8)
        const w = src.model.layerWeights(0).weight, t = info.tensors.find((x) => x.name === 'weights');
        const dw = Math.max(...w.map((v, i) => Math.abs(v - (quantize === 'q8' ? dequantizeQ8 : dequantizeQ4)(file.subarray(t.byteOffset, t.byteOffset + t.byteLength), w.length)[i])));
        if (quantize === 'q8') assert.ok(dw <= new DataView(file.buffer, t.byteOffset).getFloat32(0, true) / 2 * (1 + 1e-6), `max |Δw| ${dw}`);
        got.forEach((v, i) => {
          const l1 = src.inputs.subarray(i * 13, i * 13 + 13).reduce((a, x) => a + Math.abs(x), 0);
          assert.ok(Math.abs(v - want[i]) <= l1 * dw * (1 + 1e-5) + 1e-5, `${kind} ${quantize} ${i}: ${v} vs ${want[i]}`);
        });
      }
    });
    if (quantize !== 'f32') {
      test(`v2 ${kind}, ${quantize}: loads and predicts like its dequantized weights`, () => {
        const file = modelToApr(src.model, { version: 2, quantize });
        const got = predictions(rt.loadFromBytes(file), src);
        const want = predictions(rt.loadFromBytes(dequantizedCopy(file, rt.inspect(file))), src);
        got.forEach((v, i) => assert.ok(Math.abs(v - want[i]) <= 1e-4 * Math.max(1, Math.abs(want[i])), `${i}: ${v} vs ${want[i]}`));
      });
    }
  }
}

/** The v2 file with every quantized tensor replaced by its dequantized f32 values. */
function dequantizedCopy(file, info) {
  const meta = JSON.parse(new TextDecoder().decode(file.subarray(info.apr.metadataBytes.byteOffset,
    info.apr.metadataBytes.byteOffset + info.apr.metadataBytes.byteLength)));
  delete meta.quantization;
  const tensors = info.tensors.map((t) => {
    const bytes = file.subarray(t.byteOffset, t.byteOffset + t.byteLength);
    const n = t.shape.reduce((a, b) => a * b, 1);
    const data = t.dtype === 'APR_Q8' ? f32bytes(dequantizeQ8(bytes, n)) : t.dtype === 'APR_Q4' ? f32bytes(dequantizeQ4(bytes, n)) : bytes;
    return { name: t.name, dtype: 'F32', shape: t.shape, data };
  });
  return aprV2({ metadata: meta, tensors });
}

test('converting from every input format: the same weights give bit-identical predictions and identical v2 bytes', () => {
  const v2 = {};
  const sources = { ...mnistFiles };
  sources['.apr v1'] = modelToApr(mnist, { version: 1 });
  sources['.apr v2'] = modelToApr(mnist, { version: 2 });
  for (const [label, bytes] of Object.entries(sources)) {
    const src = rt.loadFromBytes(bytes);
    bitsEqual(src.predictBatch(images, N), mnistWant, `${label} source`);
    for (const version of [1, 2]) {
      const out = modelToApr(src, { version, name: 'mnist' });
      const m = rt.loadFromBytes(out, { expect: 'NeuralSequential' });
      assert.deepEqual(m.info.layers.map((l) => l.activation), ['relu', 'softmax']);
      bitsEqual(m.predictBatch(images, N), mnistWant, `${label} -> v${version}`);
      if (version === 2) v2[label] = rt.inspect(out).tensors.map((t) => Array.from(out.subarray(t.byteOffset, t.byteOffset + t.byteLength)).join());
    }
  }
  const first = Object.values(v2)[0];
  for (const [label, t] of Object.entries(v2)) assert.ok(t.every((x, i) => x === first[i]), `${label}: same tensor bytes`);
});

test('metadata survives v1 -> v2 -> v1; SafeTensors strings become custom keys; activations are stored', () => {
  const v1 = writeAprV1({ modelType: 'LinearRegression', payload: linearRegressionPayload({ coefficients: [1, 2], intercept: 3 }),
    metadata: { created_at: '1700000000', aprender_version: '1.2.3', model_name: 'lin', description: 'two inputs',
      hyperparameters: { alpha: 0.5 }, custom: { owner: 'me' } }, qualityScore: 70 });
  const v2 = modelToApr(rt.loadFromBytes(v1), { version: 2 });
  const m2 = rt.loadFromBytes(v2).info.metadata;
  assert.deepEqual([m2.name, m2.description, m2.created_at, m2.aprender_version, m2.hyperparameters, m2.owner],
    ['lin', 'two inputs', '1700000000', '1.2.3', { alpha: 0.5 }, 'me']);
  const back = rt.loadFromBytes(modelToApr(rt.loadFromBytes(v2), { version: 1 })).info.metadata;
  assert.deepEqual([back.model_name, back.description, back.created_at], ['lin', 'two inputs', '1700000000']);
  assert.equal(rt.loadFromBytes(modelToApr(rt.loadFromBytes(v1), { version: 1 })).info.apr.qualityScore, 70, 'v1 -> v1 keeps the score');
  const st = rt.loadFromBytes(modelToApr(mnist, { version: 1 })).info.metadata;
  assert.deepEqual(st.custom, { format: 'pt' }, "SafeTensors' __metadata__ minus the activations the layout fixes");
  // a non-default activation chain survives in v2
  const tanh = rt.loadFromBytes(safetensorsF32({ 'a.weight': [[2, 3], [1, 2, 3, 4, 5, 6]], 'b.weight': [[1, 2], [1, -1]] }, { activations: 'tanh,sigmoid' }));
  const out = rt.loadFromBytes(modelToApr(tanh, { version: 2 }));
  assert.deepEqual(out.info.layers.map((l) => l.activation), ['tanh', 'sigmoid']);
  bitsEqual(out.predict([0.5, -1, 2]), tanh.predict([0.5, -1, 2]), 'tanh/sigmoid');
  assert.deepEqual(rt.inspect(modelToApr(tanh, { version: 2 })).tensors.map((t) => [t.name, t.shape]), [['0', [2, 3]], ['1', [1, 2]]]);
});

test('SOURCE_DATE_EPOCH sets created_at when the source has none; the clock is never read', () => {
  const before = process.env.SOURCE_DATE_EPOCH;
  try {
    process.env.SOURCE_DATE_EPOCH = '1234567890';
    assert.equal(rt.inspect(modelToApr(mnist, { version: 2 })).metadata.created_at, '1234567890');
    assert.equal(rt.inspect(modelToApr(mnist, { version: 1 })).metadata.created_at, '1234567890');
    assert.equal(rt.inspect(modelToApr(mnist, { version: 1, createdAt: '7' })).metadata.created_at, '7');
  } finally {
    if (before === undefined) delete process.env.SOURCE_DATE_EPOCH; else process.env.SOURCE_DATE_EPOCH = before;
  }
});

test('what a layout cannot hold is a clear error', () => {
  const deep = rt.loadFromBytes(safetensorsF32({ 'a.weight': [[2, 3], [1, 2, 3, 4, 5, 6]], 'b.weight': [[2, 2], [1, 0, 0, 1]],
    'c.weight': [[2, 2], [1, 0, 0, 1]] }));
  assert.throws(() => modelToApr(deep, { version: 1 }), /this model has 3 layer\(s\) \(relu,relu,softmax\): write \.apr v2 instead/);
  assert.throws(() => modelToApr(mnist, { version: 1, quantize: 'q8' }), /quantization \(q8, q4\) needs \.apr v2/);
  assert.throws(() => modelToApr(mnist, { version: 2, compression: 'lz4' }), /compression is a \.apr v1 option/);
  assert.throws(() => modelToApr(mnist, { version: 3 }), /version must be 1 or 2/);
  assert.throws(() => modelToApr(mnist, { quantize: 'q2' }), /unknown quantization 'q2'/);
  assert.throws(() => writeAprV2({ tensors: [{ name: 'a', dtype: 'F32', shape: [2], data: new Uint8Array(4) }] }), /needs 8 bytes, got 4/);
  assert.throws(() => writeAprV2({ tensors: [{ name: 'a', dtype: 'F32', shape: [1], data: new Uint8Array(4) },
    { name: 'a', dtype: 'F32', shape: [1], data: new Uint8Array(4) }] }), /'a' appears twice/);
});

// ------------------------------------------------------------------ signed and encrypted (wasm/apr-crypto.mjs)

test('v1 signed and recipient-encrypted, every model and compression: reload with the key', async () => {
  const signer = await generateKeyPair('ed25519'), recipient = await generateKeyPair('x25519');
  for (const [kind, src] of Object.entries(MODELS)) {
    for (const compression of COMPRESSIONS) {
      const plain = modelToApr(src.model, { version: 1, compression });
      const signed = await signAprV1(plain, signer.secretKey);
      assert.equal((await verifyAprV1(signed, { publicKey: signer.publicKey })).valid, true, `${kind} ${compression}`);
      const fromSigned = await rt.load(signed, { publicKey: signer.publicKey });
      bitsEqual(predictions(fromSigned, src), predictions(src.model, src), `${kind} ${compression} signed`);
      const sealed = await encryptAprV1(plain, { recipientPublicKey: recipient.publicKey });
      const fromSealed = await rt.load(sealed, { recipientSecretKey: recipient.secretKey });
      bitsEqual(predictions(fromSealed, src), predictions(src.model, src), `${kind} ${compression} recipient`);
    }
  }
});

test('v1 password-encrypted (Argon2id takes about a second per derivation: one file)', async () => {
  const src = MODELS.linear;
  const plain = modelToApr(src.model, { version: 1, compression: 'lz4' });
  const sealed = await encryptAprV1(plain, { password: 'pw' });
  const again = await encryptAprV1(plain, { password: 'pw' });
  assert.notDeepEqual(sealed, again, 'fresh salt and nonce: encrypted bytes differ every time (the one non-deterministic output)');
  bitsEqual(predictions(await rt.load(sealed, { password: 'pw' }), src), predictions(src.model, src), 'password');
});
