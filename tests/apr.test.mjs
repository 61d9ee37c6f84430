// aprender's .apr containers through the wasm build: the spec's golden files, models that must
// predict like the same weights in the other formats, the expect option, signed/encrypted files,
// MessagePack metadata, and every malformed class with its exact code.
// (tests/c/test_apr.c covers the same natively under ASan+UBSan.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRuntime } from '../wasm/mlrt.mjs';
import { loadSplit } from '../tools/mnist-split.mjs';
import {
  concat, u64le, f32bytes, expectCode, readModel, parseBin, safetensorsF32, crc32, fromHex, u8, u16le, u32le, f32le,
  bincodeF32s, msgpack, MsgpackF32, MsgpackRaw, MsgpackMap, APR_TYPE, APR_DEFAULT_META, withV1Crc, aprV1, withV2Crcs,
  aprV2, aprV2Entry, readSafetensors, GOLDEN_V1, goldenV2, GOLDEN_WEIGHTS,
} from './helpers.mjs';

const rt = await createRuntime();
const scalar = await createRuntime({ simd: false });
const enc = new TextEncoder();
const load = (bytes, options) => () => rt.loadFromBytes(bytes, options);
const bitsEqual = (a, b, label) => assert.deepEqual(new Uint8Array(a.buffer, a.byteOffset, a.byteLength),
  new Uint8Array(b.buffer, b.byteOffset, b.byteLength), `${label}: not bit-identical`);

// ------------------------------------------------------------- golden files (spec §11: GOLDEN_V1, goldenV2() in helpers.mjs)

test('golden_v1: 171 bytes, checksum 0x5948a065; inspect shows header and metadata; the payload is no LinearRegression', () => {
  assert.equal(GOLDEN_V1.length, 171);
  assert.equal(crc32(GOLDEN_V1.subarray(0, 167)), 0x5948a065);
  const info = rt.inspect(GOLDEN_V1);
  assert.equal(info.format, 'apr');
  assert.deepEqual(info.metadata, { created_at: '1700000000', aprender_version: '0.0.0-golden', model_name: 'golden-v1' });
  assert.deepEqual(info.apr, {
    magic: 'APRN', version: '1.0', modelType: 'LinearRegression', modelTypeCode: 1, compression: 'None', flags: [],
    qualityScore: 85, encrypted: false, signed: false, uncompressedSize: 61,
    metadataBytes: { byteOffset: 32, byteLength: 74 }, payloadBytes: { byteOffset: 106, byteLength: 61 },
  });
  assert.deepEqual(info.tensors, []);
  // its payload is the test struct GoldenModel { name, weights, bias }: u64 9 "golden_v1" ...
  assert.equal(info.notAModel.code, 'BAD_PAYLOAD');
  expectCode(assert, load(GOLDEN_V1), 'BAD_PAYLOAD', "apr: LinearRegression payload byte 0: the coefficients' Option tag is 9, not 0 or 1");
});

test('golden_v2_current: 516 bytes, both checksums as the spec pins them; loads as linear regression', () => {
  const g = goldenV2();
  const dv = new DataView(g.buffer);
  assert.equal(dv.getUint32(40, true), 0x3bc08c02);
  assert.equal(crc32(concat(g.subarray(0, 40), g.subarray(44, 64))), 0x3bc08c02);
  assert.equal(crc32(g.subarray(0, 512)), 0x550f3f35);
  const built = aprV2({
    metadata: new TextDecoder().decode(g.subarray(64, 64 + 189)),
    tensors: [{ name: 'weights', dtype: 'F32', shape: [8], data: f32bytes(GOLDEN_WEIGHTS) },
      { name: 'bias', dtype: 'F32', shape: [1], data: f32bytes([0.125]) }],
  });
  assert.deepEqual(built, g, 'the test writer reproduces the golden file');
  const info = rt.inspect(g);
  assert.equal(info.modelKind, 'linear_regression');
  assert.deepEqual(info.metadata, {
    model_type: 'linear_regression', name: 'golden-v2', license: null, data_source: null, data_license: null,
    version: '0.0.0-golden', created_at: '1700000000', total_size: 0, param_count: 8,
  });
  assert.deepEqual(info.tensors, [
    { name: 'bias', dtype: 'F32', shape: [1], byteOffset: 0x180, byteLength: 4 },
    { name: 'weights', dtype: 'F32', shape: [8], byteOffset: 0x1c0, byteLength: 32 },
  ]);
  assert.deepEqual(info.apr, { magic: 'APR\0', version: '2.0', flags: ['LAYOUT_ROW_MAJOR'],
    metadataBytes: { byteOffset: 64, byteLength: 189 }, indexBytes: { byteOffset: 256, byteLength: 128 }, dataOffset: 384 });
  for (const r of [rt, scalar]) {
    const m = r.loadFromBytes(g);
    assert.deepEqual([m.info.format, m.info.kind, m.info.inputSize, m.info.outputSize, m.info.params], ['apr', 'linear_regression', 8, 1, 9]);
    assert.equal(m.info.metadata.name, 'golden-v2');
    assert.equal(m.info.apr.dataOffset, 384);
    assert.deepEqual(Array.from(m.predict([1, 1, 1, 1, 1, 1, 1, 1])), [13.375]);
    assert.deepEqual(Array.from(m.predict([1, 0, 0, 0, 0, 0, 0, 2])), [17.125]);
  }
  const legacy = g.slice();
  legacy[3] = 0x32; // "APR2", the older v2 magic
  assert.equal(rt.loadFromBytes(withV2Crcs(legacy)).info.apr.magic, 'APR2');
});

// ---------------------------------------------------------------- v1 regressions

const LINEAR_PAYLOAD = fromHex('01 0200000000000000 00000040 000080bf 0000003f 01'); // y = 2 x0 - x1 + 0.5 (spec §3.2)
// spec §3.3: coef [1.0], intercept 0.25, lr 0.01, max_iter 1000, tol 1e-4, Manual [1, 3], l2 0, MiniBatch(32)
const LOGISTIC_8 = fromHex(`01 0100000000000000 0000803f 0000803e 0ad7233c e803000000000000 17b7d138
  02000000 0200000000000000 0000803f 00004040 00000000 02000000 2000000000000000`);
const LOGISTIC_5 = LOGISTIC_8.subarray(0, 1 + 8 + 4 + 4 + 4 + 8 + 4);

test('v1 LinearRegression: exact predictions, metadata, expect', () => {
  const file = aprV1({ type: APR_TYPE.LinearRegression, payload: LINEAR_PAYLOAD,
    metadata: { ...APR_DEFAULT_META, model_name: 'lin', hyperparameters: { alpha: 0.5 } }, quality: 90, flags: 0x08 });
  const m = rt.loadFromBytes(file);
  assert.deepEqual([m.info.kind, m.info.inputSize, m.info.outputSize, m.info.dtype], ['linear_regression', 2, 1, 'F32']);
  assert.deepEqual(m.info.layers, [{ inputs: 2, outputs: 1, activation: 'identity' }]);
  assert.deepEqual(m.info.metadata, { ...APR_DEFAULT_META, model_name: 'lin', hyperparameters: { alpha: 0.5 } });
  assert.equal(m.info.apr.modelType, 'LinearRegression');
  assert.deepEqual(m.info.apr.flags, ['LICENSED']);
  assert.deepEqual(Array.from(m.predictBatch([1, 1, 3, -2, 0, 0, -1.5, 4], 4)), [1.5, 8.5, 0.5, -6.5]);
  assert.equal(rt.loadFromBytes(file, { expect: 'LinearRegression' }).info.kind, 'linear_regression');
  const unfitted = aprV1({ type: 1, payload: fromHex('00 00000000 01') });
  expectCode(assert, load(unfitted), 'NOT_A_MODEL', 'never fitted');
  assert.equal(rt.inspect(unfitted).notAModel.code, 'NOT_A_MODEL');
});

test('v1 LogisticRegression: the 5- and 8-field layouts predict like the same weights in SafeTensors', () => {
  const st = rt.loadFromBytes(safetensorsF32({ coefficients: [[1], [1]], intercept: [[1], [0.25]] }, { model_type: 'logistic_regression' }));
  const xs = [-3, -0.25, 0, 0.5, 2, 10];
  const want = st.predictBatch(xs, xs.length);
  for (const [name, payload] of [['8-field', LOGISTIC_8], ['5-field', LOGISTIC_5]]) {
    const m = rt.loadFromBytes(aprV1({ type: APR_TYPE.LogisticRegression, payload }));
    assert.equal(m.info.kind, 'logistic_regression', name);
    assert.deepEqual(m.info.layers, [{ inputs: 1, outputs: 1, activation: 'sigmoid' }]);
    bitsEqual(m.predictBatch(xs, xs.length), want, name);
    assert.equal(m.predict([-0.25])[0], 0.5, `${name}: sigmoid(0)`);
  }
  // Uniform / Batch variants carry no data
  const plain = concat(LOGISTIC_5, u32le(0), f32le(0), u32le(1));
  assert.equal(rt.loadFromBytes(aprV1({ type: 2, payload: plain })).info.kind, 'logistic_regression');
  const err = expectCode(assert, load(aprV1({ type: 2, payload: concat(plain, u8(0)) })), 'SIZE_MISMATCH');
  assert.match(err.message, /LogisticRegression payload is 46 bytes: the 5-field layout ends at byte 33, the 8-field layout at byte 45/);
});

// -------------------------------------------------------- v1 NeuralSequential (MNIST)

const PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
function run(cmd, args, input) {
  const r = spawnSync(cmd, args, { input, maxBuffer: 1 << 28 });
  return r.error || r.status !== 0 ? null : new Uint8Array(r.stdout);
}
// lz4_flex's compress_prepend_size: u32 LE length + one raw LZ4 block (python3-lz4, store_size=True)
const lz4 = (raw) => run(PYTHON, ['-c', 'import sys, lz4.block; '
  + 'sys.stdout.buffer.write(lz4.block.compress(sys.stdin.buffer.read(), store_size=True))'], raw);
const zstd = (raw, args = []) => run('zstd', ['-q', '-c', ...args], raw);
const noLz4 = lz4(new Uint8Array(8)) ? false : 'python3-lz4 is not installed (apt-get install python3-lz4)';
const noZstd = zstd(new Uint8Array(8)) ? false : 'the zstd CLI is not installed (apt-get install zstd)';

const digits = loadSplit('test');
const binBytes = readModel('mnist-mlp.f32.bin');
const net = parseBin(binBytes);
const mnistPayload = concat(bincodeF32s(net.w1), bincodeF32s(net.b1), bincodeF32s(net.w2), bincodeF32s(net.b2));
const binPredictions = rt.loadFromBytes(binBytes).predictBatch(digits.images, digits.n);

function checkMnist(file, label) {
  for (const r of [rt, scalar]) {
    const m = r.loadFromBytes(file, { expect: 'NeuralSequential' });
    assert.deepEqual([m.info.kind, m.info.inputSize, m.info.outputSize, m.info.params], ['mlp', 784, 10, 784 * 512 + 512 + 5130]);
    assert.deepEqual(m.info.layers.map((l) => l.activation), ['relu', 'softmax']);
    const got = m.predictBatch(digits.images, digits.n);
    bitsEqual(got, r === rt ? binPredictions : r.loadFromBytes(binBytes).predictBatch(digits.images, digits.n), label);
    m.dispose();
  }
}

test('v1 NeuralSequential from the trained 784-512-10 weights: bit-identical to mnist-mlp.f32.bin (uncompressed)', () => {
  checkMnist(aprV1({ type: APR_TYPE.NeuralSequential, payload: mnistPayload, metadata: { ...APR_DEFAULT_META, model_name: 'mnist' } }), 'none');
});

test('v1 NeuralSequential, LZ4 compressed (python3-lz4)', { skip: noLz4 }, () => {
  const packed = lz4(mnistPayload);
  assert.equal(new DataView(packed.buffer).getUint32(0, true), mnistPayload.length);
  const file = aprV1({ type: APR_TYPE.NeuralSequential, payload: packed, compression: 3, rawSize: mnistPayload.length });
  checkMnist(file, 'lz4');
  assert.equal(rt.inspect(file).apr.compression, 'Lz4');
  // the size prefix must agree with the header, and the block must decode exactly
  const wrong = aprV1({ type: 0x20, payload: concat(u32le(mnistPayload.length - 1), packed.subarray(4)), compression: 3, rawSize: mnistPayload.length });
  expectCode(assert, load(wrong), 'SIZE_MISMATCH', 'LZ4 payload declares');
  const cut = aprV1({ type: 0x20, payload: packed.subarray(0, packed.length - 10), compression: 3, rawSize: mnistPayload.length });
  const e = expectCode(assert, load(cut), rt.inspect(cut).notAModel.code, 'apr: LZ4 payload at byte ');
  assert.match(e.message, /lz4: /);
});

test('v1 NeuralSequential, zstd compressed (zstd CLI), with and without the frame content size', { skip: noZstd }, () => {
  for (const [args, comp] of [[['-3'], 1], [['-19', `--stream-size=${mnistPayload.length}`], 2]]) {
    const file = aprV1({ type: APR_TYPE.NeuralSequential, payload: zstd(mnistPayload, args), compression: comp, rawSize: mnistPayload.length });
    checkMnist(file, `zstd ${args}`);
    assert.equal(rt.inspect(file).apr.compression, comp === 1 ? 'ZstdDefault' : 'ZstdMax');
  }
  const frame = zstd(mnistPayload);
  const short = aprV1({ type: 0x20, payload: frame, compression: 1, rawSize: mnistPayload.length + 4 });
  expectCode(assert, load(short), 'SIZE_MISMATCH', `apr: zstd payload at byte ${32 + msgpack(APR_DEFAULT_META).length}: zstd: `);
  const corrupt = frame.slice();
  corrupt[corrupt.length >> 1] ^= 0x55;
  const bad = expectCode(assert, load(aprV1({ type: 0x20, payload: corrupt, compression: 1, rawSize: mnistPayload.length })),
    rt.inspect(aprV1({ type: 0x20, payload: corrupt, compression: 1, rawSize: mnistPayload.length })).notAModel.code);
  assert.ok(['BAD_HEADER', 'TRUNCATED', 'SIZE_MISMATCH'].includes(bad.code), bad.code);
});

// ------------------------------------------------------------------- v2 models

const pytorch = readSafetensors(readModel('mnist-mlp.safetensors'));
const stPredictions = rt.loadFromBytes(readModel('mnist-mlp.safetensors')).predictBatch(digits.images, digits.n);

test('v2 f32 MLP, PyTorch names and aprender numbering: bit-identical to the same weights in SafeTensors', () => {
  const named = Object.entries(pytorch).map(([name, t]) => ({ name, dtype: 'F32', shape: t.shape, data: t.bytes }));
  const numbered = ['fc1.weight', 'fc1.bias', 'fc2.weight', 'fc2.bias'].map((n, i) => ({ name: String(i), dtype: 'F32', shape: pytorch[n].shape, data: pytorch[n].bytes }));
  for (const [label, tensors] of [['pytorch', named], ['numbered', numbered]]) {
    const file = aprV2({ metadata: { model_type: 'mlp', activations: 'relu,softmax', param_count: 407050, extra: { a: [1, 2] } }, tensors });
    const m = rt.loadFromBytes(file, { expect: 'NeuralSequential' });
    assert.deepEqual([m.info.format, m.info.kind, m.info.inputSize, m.info.outputSize], ['apr', 'mlp', 784, 10], label);
    assert.deepEqual(m.info.metadata.extra, { a: [1, 2] });
    bitsEqual(m.predictBatch(digits.images, digits.n), stPredictions, label);
    const info = rt.inspect(file);
    assert.deepEqual(info.tensors.map((t) => t.name), label === 'pytorch' ? ['fc1.bias', 'fc1.weight', 'fc2.bias', 'fc2.weight'] : ['0', '1', '2', '3']);
    assert.ok(info.tensors.every((t) => t.byteOffset % 64 === 0));
  }
  // activations from the metadata's top-level strings, as for SafeTensors
  const tiny = aprV2({ metadata: { activations: 'tanh' }, tensors: [{ name: 'fc.weight', dtype: 'F32', shape: [1, 2], data: f32bytes([1, 2]) }] });
  assert.deepEqual(rt.loadFromBytes(tiny).info.layers, [{ inputs: 2, outputs: 1, activation: 'tanh' }]);
  // data in insertion order, index sorted (the streaming writer): offsets need not follow the index
  const entries = concat(aprV2Entry({ name: 'fc.bias', dtype: 0, shape: [1], offset: 64, size: 4 }),
    aprV2Entry({ name: 'fc.weight', dtype: 0, shape: [1, 2], offset: 0, size: 8 }));
  const streamed = aprV2({ metadata: {}, entries, count: 2, tensors: [
    { name: 'fc.weight', data: f32bytes([1, 2]), dtype: 0, shape: [1, 2] }, { name: 'fc.bias', data: f32bytes([0.5]), dtype: 0, shape: [1] }], sort: false });
  assert.deepEqual(Array.from(rt.loadFromBytes(streamed).predict([1, 1])), [3.5]);
});

test('v2 dtypes: F16/BF16/F64 weights run; quantized tensors inspect with exact sizes', () => {
  const f64 = new Uint8Array(Float64Array.from([1, -2]).buffer);
  const m = rt.loadFromBytes(aprV2({ metadata: {}, tensors: [{ name: 'fc.weight', dtype: 'F64', shape: [1, 2], data: f64 }] }));
  assert.deepEqual([m.info.dtype, Array.from(m.predict([3, 1]))], ['F64', [1]]);
  const f16 = Uint8Array.of(0x00, 0x3c, 0x00, 0xc0); // 1, -2
  assert.deepEqual(Array.from(rt.loadFromBytes(aprV2({ metadata: {}, tensors: [{ name: 'fc.weight', dtype: 'F16', shape: [1, 2], data: f16 }] })).predict([3, 1])), [1]);
  const q = [
    { name: 'a.q4', dtype: 'APR_Q4', shape: [33], data: new Uint8Array(36) },           // 2 blocks x 18
    { name: 'b.q8', dtype: 'APR_Q8', shape: [2, 5], data: new Uint8Array(14) },         // 4 + 10
    { name: 'c.q4k', dtype: 'Q4_K', shape: [256], data: new Uint8Array(144) },
    { name: 'd.q6k', dtype: 'Q6_K', shape: [2, 256], data: new Uint8Array(420) },
    { name: 'e.q4legacy', dtype: 8, shape: [32], data: new Uint8Array(18) },
    { name: 'f.q8legacy', dtype: 9, shape: [3], data: new Uint8Array(7) },
  ];
  const info = rt.inspect(aprV2({ metadata: {}, tensors: q }));
  assert.deepEqual(info.tensors.map((t) => [t.name, t.dtype, t.byteLength]), [
    ['a.q4', 'APR_Q4', 36], ['b.q8', 'APR_Q8', 14], ['c.q4k', 'Q4_K', 144], ['d.q6k', 'Q6_K', 420],
    ['e.q4legacy', 'APR_Q4', 18], ['f.q8legacy', 'APR_Q8', 7]]);
  const q4k = aprV2({ metadata: {}, tensors: [{ name: 'fc.weight', dtype: 'Q4_K', shape: [1, 256], data: Uint8Array.of(0, 0x7e, ...new Uint8Array(142)) }] });
  expectCode(assert, load(q4k), 'NON_FINITE', "apr: tensor 'fc.weight' Q4_K d of super-block 0 is NaN");
  assert.equal(rt.inspect(q4k).notAModel.code, 'NON_FINITE');
  expectCode(assert, load(aprV2({ metadata: {}, tensors: [{ name: 'fc.weight', dtype: 'Q4_K', shape: [1, 256], data: new Uint8Array(143) }] })),
    'SIZE_MISMATCH', 'is Q4_K with 256 elements (144 bytes) but its size is 143 bytes');
});

// --------------------------------------------------------------------- expect

test('expect: checked from the v1 header, and from the model kind for every other format', () => {
  const lin = aprV1({ type: 1, payload: LINEAR_PAYLOAD });
  expectCode(assert, load(lin, { expect: 'LogisticRegression' }), 'MODEL_TYPE_MISMATCH',
    'apr: model type mismatch: the file holds LinearRegression (0x0001), expected LogisticRegression');
  // before the payload is looked at: a KMeans file expected as KMeans gets past the check to the payload
  const km = aprV1({ type: APR_TYPE.KMeans, payload: new Uint8Array(3) });
  expectCode(assert, load(km, { expect: 'KMeans' }), 'TRUNCATED', 'apr: KMeans payload ends at byte 3 inside n_clusters');
  expectCode(assert, load(km, { expect: 'LinearRegression' }), 'MODEL_TYPE_MISMATCH');
  const st = readModel('mnist-mlp.safetensors');
  assert.equal(rt.loadFromBytes(st, { expect: 'NeuralSequential' }).info.kind, 'mlp');
  expectCode(assert, load(st, { expect: 'LinearRegression' }), 'MODEL_TYPE_MISMATCH',
    'load: expected LinearRegression but the file holds a mlp model (NeuralSequential)');
  expectCode(assert, load(goldenV2(), { expect: 'LogisticRegression' }), 'MODEL_TYPE_MISMATCH', 'linear_regression');
  assert.equal(rt.loadFromBytes(goldenV2(), { expect: 'LinearRegression' }).info.kind, 'linear_regression');
  expectCode(assert, load(lin, { expect: 'Linear' }), 'INVALID_ARGUMENT', "expect 'Linear' is not an aprender model type");
  expectCode(assert, load(lin, { expect: 3 }), 'INVALID_ARGUMENT');
  expectCode(assert, load(lin, { expect: 'LinearRegression\0' }), 'INVALID_ARGUMENT');
  assert.equal(rt.loadFromBytes(lin, {}).info.kind, 'linear_regression');
  assert.equal(rt.loadFromBytes(lin, undefined).info.kind, 'linear_regression');
});

// ------------------------------------------------------- signed, encrypted, types

test('v1 signed files load (signature not verified) and inspect names the byte ranges to verify', () => {
  const sig = new Uint8Array(96).map((_, i) => i);
  const file = aprV1({ type: 1, payload: LINEAR_PAYLOAD, flags: 0x02, signature: sig });
  const meta = msgpack(APR_DEFAULT_META).length, end = 32 + meta + LINEAR_PAYLOAD.length;
  const { apr } = rt.inspect(file);
  assert.equal(apr.signed, true);
  assert.deepEqual(apr.flags, ['SIGNED']);
  assert.deepEqual(apr.signatureBytes, { byteOffset: end, byteLength: 64 });
  assert.deepEqual(apr.publicKeyBytes, { byteOffset: end + 64, byteLength: 32 });
  assert.deepEqual(apr.signedBytes, { byteOffset: 0, byteLength: end });
  assert.deepEqual(file.subarray(end, end + 96), sig);
  assert.deepEqual(Array.from(rt.loadFromBytes(file).predict([1, 1])), [1.5]);
  expectCode(assert, load(aprV1({ type: 1, payload: LINEAR_PAYLOAD, signature: sig })), 'SIZE_MISMATCH', 'the SIGNED flag is not set');
  expectCode(assert, load(aprV1({ type: 1, payload: LINEAR_PAYLOAD, flags: 0x02 })), 'SIZE_MISMATCH', '96-byte signature block');
  expectCode(assert, load(aprV1({ type: 1, payload: LINEAR_PAYLOAD, flags: 0x02, signature: sig.subarray(0, 95) })), 'SIZE_MISMATCH');
});

test('v1 encrypted files: ENCRYPTED at load, inspect shows the header and metadata', () => {
  const file = aprV1({ type: 1, payload: new Uint8Array(16 + 12 + 22 + 16), rawSize: 22, flags: 0x01 });
  expectCode(assert, load(file), 'ENCRYPTED', 'needs the JavaScript host with the password or key');
  const info = rt.inspect(file);
  assert.deepEqual([info.apr.encrypted, info.notAModel.code, info.metadata.aprender_version], [true, 'ENCRYPTED', '0.0.0-test']);
});

test('v1 model types mlrt does not run: UNSUPPORTED_MODEL_TYPE naming the type; inspect still works', () => {
  for (const [name, code] of Object.entries(APR_TYPE)) {
    if (!['GradientBoosting', 'Custom'].includes(name)) continue; // the others run (or fail on this payload)
    const file = aprV1({ type: code, payload: new Uint8Array(5) });
    const hex = code.toString(16).padStart(4, '0');
    expectCode(assert, load(file), 'UNSUPPORTED_MODEL_TYPE', `apr: model type ${name} (0x${hex}) is not supported`);
    assert.deepEqual([rt.inspect(file).apr.modelType, rt.inspect(file).notAModel.code], [name, 'UNSUPPORTED_MODEL_TYPE']);
  }
  expectCode(assert, load(concat(enc.encode('APR1'), new Uint8Array(60))), 'UNSUPPORTED', 'legacy APR1');
});

// ------------------------------------------------------------------- metadata

test('v1 metadata: every MessagePack type becomes JSON, keys in any order, unknown keys kept', () => {
  const meta = new MsgpackMap([
    ['custom', { b: true, f: false, n: null, neg: -1, neg8: -100, neg16: -1000, neg32: -100000, neg64: -(2 ** 40),
      u8: 200, u16: 60000, u32: 4e9, u64: 2 ** 40, big: 18446744073709551615n, small: -9223372036854775808n,
      half: 0.5, tenth: 0.1, f32: new MsgpackF32(0.1), f32big: new MsgpackF32(3e38), tiny: 5e-324, e21: 1e21, negz: -0,
      nan: NaN, inf: Infinity, bin: Uint8Array.of(0, 1, 255), arr: [1, 'two', [3]], s8: 'x'.repeat(40), s16: 'y'.repeat(300),
      s32: 'z'.repeat(70000), a16: new Array(20).fill(7), m16: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, i])),
      utf8: 'é€😀' }],
    ['aprender_version', '1.2.3'], ['unknown_key', [null]], ['created_at', '1700000000'],
  ]);
  const m = rt.loadFromBytes(aprV1({ type: 1, payload: LINEAR_PAYLOAD, metadata: meta }));
  const c = m.info.metadata.custom;
  assert.deepEqual(Object.keys(m.info.metadata), ['custom', 'aprender_version', 'unknown_key', 'created_at']);
  assert.deepEqual([c.b, c.f, c.n, c.neg, c.neg8, c.neg16, c.neg32, c.neg64], [true, false, null, -1, -100, -1000, -100000, -(2 ** 40)]);
  assert.deepEqual([c.u8, c.u16, c.u32, c.u64, c.big, c.small], [200, 60000, 4e9, 2 ** 40, 18446744073709551615, -9223372036854775808]);
  assert.deepEqual([c.half, c.tenth, c.f32, c.f32big, c.tiny, c.e21, Object.is(c.negz, -0), c.nan, c.inf],
    [0.5, 0.1, 0.1, 3e38, 5e-324, 1e21, true, null, null]);
  assert.deepEqual([c.bin, c.arr, c.s8.length, c.s16.length, c.s32.length, c.a16.length, Object.keys(c.m16).length, c.utf8],
    [[0, 1, 255], [1, 'two', [3]], 40, 300, 70000, 20, 17, 'é€😀']);
  // floats read back exactly (shortest decimal): random doubles and float32s
  let seed = 99;
  const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
  const doubles = Array.from({ length: 300 }, () => (rand() - 0.5) * 10 ** Math.floor(rand() * 60 - 30));
  const singles = doubles.map((d) => Math.fround(d));
  const info = rt.inspect(aprV1({ type: 1, payload: LINEAR_PAYLOAD, metadata: { metrics: { d: doubles, s: singles.map((v) => new MsgpackF32(v)) } } }));
  assert.deepEqual(info.metadata.metrics.d, doubles);
  info.metadata.metrics.s.forEach((v, i) => assert.equal(Math.fround(v), singles[i]));
});

const metaFile = (metadata) => aprV1({ type: 1, payload: LINEAR_PAYLOAD, metadata });
const raw = (...bytes) => new MsgpackRaw(Uint8Array.from(bytes));

test('v1 metadata: every malformed class with its code', () => {
  const cases = [
    [raw(0x81, 0xa1, 0x61, 0xc1), 'INVALID_MSGPACK', '0xc1 at byte 35'],
    [raw(0x81, 0xa1, 0x61, 0xd4, 1, 2), 'UNSUPPORTED', 'extension value at byte 35'],
    [raw(0x81, 0xa1, 0x61, 0xc7, 1, 5, 0), 'UNSUPPORTED', 'extension'],
    [raw(0x81, 0xa1, 0x61, 0xa2, 0xff, 0xfe), 'INVALID_UTF8', 'string at byte 36'],
    [raw(0x81, 0xa2, 0xc3, 0x28, 0xc0), 'INVALID_UTF8'],
    [raw(0x81, 0x01, 0xc0), 'BAD_HEADER', 'map key at byte 33 is an integer'],
    [raw(0x82, 0xa1, 0x61, 0x01, 0xa1, 0x61, 0x02), 'DUPLICATE_KEY', "duplicate key 'a' at byte 36"],
    [raw(0x81, 0xa1, 0x61, 0x81, 0xa1, 0x62, 0x82, 0xa1, 0x63, 0xc0, 0xa1, 0x63, 0xc0), 'DUPLICATE_KEY', "'c'"],
    [raw(0x81, 0xa1, 0x61, ...new Array(63).fill(0x91), 0xc0), 'INVALID_MSGPACK', 'array at byte 97 nests deeper than 63 levels'],
    [raw(0x81, 0xa1, 0x61, 0xdd, 0xff, 0xff, 0xff, 0xff), 'TRUNCATED', 'declares 4294967295 items'],
    [raw(0x81, 0xa1, 0x61, 0xdb, 0, 1, 0, 0, 0x61), 'TRUNCATED', 'inside a string'],
    [raw(0x81, 0xa1, 0x61, 0xcb, 0, 0), 'TRUNCATED', 'inside a float'],
    [raw(0x81, 0xa1, 0x61, 0xc6, 0, 0, 0, 9), 'TRUNCATED', 'binary data'],
    [raw(0x82, 0xa1, 0x61, 0xc0), 'TRUNCATED'],
    [raw(), 'TRUNCATED', 'inside a value'],
    [raw(0x91, 0xc0), 'BAD_HEADER', 'metadata must be a map, got array'],
    [raw(0xc0), 'BAD_HEADER', 'got null'],
    [raw(0x80, 0xc0), 'SIZE_MISMATCH', 'the metadata map ends at byte 33 but the metadata size is 2 bytes'],
    [{ created_at: 1700000000 }, 'BAD_HEADER', "metadata 'created_at' must be a string, got number"],
    [{ hyperparameters: [1] }, 'BAD_HEADER', "'hyperparameters' must be a map, got array"],
    [{ hyperparameters: null }, 'BAD_HEADER'],
  ];
  for (const [meta, code, part] of cases) {
    const file = metaFile(meta instanceof MsgpackRaw ? meta.bytes : meta);
    const e = expectCode(assert, load(file), code, part);
    assert.ok(e.message.startsWith('apr: metadata') || e.message.startsWith('apr: the metadata'), e.message);
    expectCode(assert, () => rt.inspect(file), code);
  }
  // nullable keys may be nil; 63 levels in all are fine (info nests them once more: 64, the JSON limit)
  assert.ok(rt.loadFromBytes(metaFile({ model_name: null, license: null, training: { samples: 3 } })));
  assert.ok(rt.loadFromBytes(metaFile(raw(0x81, 0xa1, 0x61, ...new Array(62).fill(0x91), 0xc0).bytes)));
});

// ------------------------------------------------------------- v1 malformed

test('v1: size, checksum, every header field out of range', () => {
  const good = aprV1({ type: 1, payload: LINEAR_PAYLOAD });
  expectCode(assert, load(good.subarray(0, 35)), 'TRUNCATED', 'shorter than the 32-byte header');
  const flipped = good.slice();
  flipped[40] ^= 1;
  const stored = new DataView(good.buffer).getUint32(good.length - 4, true).toString(16).padStart(8, '0');
  const computed = crc32(flipped.subarray(0, flipped.length - 4)).toString(16).padStart(8, '0');
  expectCode(assert, load(flipped), 'CHECKSUM_MISMATCH', `the file stores 0x${stored} but its bytes [0, ${good.length - 4}) give 0x${computed}`);
  const field = (offset, bytes) => { const f = good.slice(); f.set(bytes, offset); return withV1Crc(f); };
  expectCode(assert, load(field(4, [2, 0])), 'UNSUPPORTED_VERSION', 'version 2.0');
  assert.ok(rt.loadFromBytes(field(4, [1, 7])), 'minor versions are read');
  assert.ok(rt.loadFromBytes(field(4, [0, 9])), 'as aprender: only major > 1 is refused');
  expectCode(assert, load(field(6, [0x13, 0])), 'BAD_HEADER', 'unknown model type 0x0013 at byte 6');
  expectCode(assert, load(field(16, u32le(2 ** 30 + 1))), 'BAD_HEADER', 'exceeds the 1 GiB limit');
  expectCode(assert, load(field(20, [4])), 'BAD_HEADER', 'unknown compression 4');
  expectCode(assert, load(field(22, [101])), 'BAD_HEADER', 'quality score 101');
  assert.ok(rt.loadFromBytes(field(21, [0x80])), 'flag bit 7 is masked off');
  assert.ok(rt.loadFromBytes(field(23, [9, 9, 9])), 'reserved bytes are not checked (aprender does not)');
  expectCode(assert, load(field(16, u32le(LINEAR_PAYLOAD.length + 1))), 'SIZE_MISMATCH', "header's uncompressed size");
});

test('v1: truncated at every section boundary (with and without a fresh checksum)', () => {
  const good = aprV1({ type: 1, payload: LINEAR_PAYLOAD, flags: 0x02, signature: new Uint8Array(96) });
  const meta = msgpack(APR_DEFAULT_META).length, payloadAt = 32 + meta;
  for (const cut of [36, 40, 32 + 4, payloadAt, payloadAt + 1, payloadAt + LINEAR_PAYLOAD.length, good.length - 4 - 32, good.length - 1]) {
    const part = good.subarray(0, cut);
    expectCode(assert, load(part), 'CHECKSUM_MISMATCH');
    const e = expectCode(assert, load(withV1Crc(concat(part, new Uint8Array(4)))), cut >= payloadAt + LINEAR_PAYLOAD.length ? 'SIZE_MISMATCH' : 'TRUNCATED');
    assert.ok(e.message.startsWith('apr: '));
  }
});

test('v1 payload: truncation, trailing bytes, bad tags and variants, dimensions, non-finite weights', () => {
  const lin = (payload) => aprV1({ type: 1, payload });
  expectCode(assert, load(lin(LINEAR_PAYLOAD.subarray(0, 5))), 'TRUNCATED', 'LinearRegression payload ends at byte 5 inside coefficients');
  expectCode(assert, load(lin(concat(u8(1), u64le(2 ** 40), new Uint8Array(8)))), 'TRUNCATED', 'declares 1099511627776 floats');
  expectCode(assert, load(lin(concat(LINEAR_PAYLOAD, u8(0)))), 'SIZE_MISMATCH', 'payload is 23 bytes but its fields end at byte 22');
  expectCode(assert, load(lin(concat(LINEAR_PAYLOAD.subarray(0, 21), u8(2)))), 'BAD_PAYLOAD', 'fit_intercept is 2');
  expectCode(assert, load(lin(concat(u8(1), u64le(0), f32le(0), u8(1)))), 'BAD_DIMENSIONS', '0 coefficients');
  const nan = LINEAR_PAYLOAD.slice();
  new DataView(nan.buffer).setFloat32(9, NaN, true);
  expectCode(assert, load(lin(nan)), 'NON_FINITE', "apr: weight 'coefficients'");
  const badClass = LOGISTIC_8.slice();
  badClass[33] = 3;
  expectCode(assert, load(aprV1({ type: 2, payload: badClass })), 'BAD_PAYLOAD', 'class_weight variant 3 is not one of 0..2');
  const badFit = LOGISTIC_8.slice();
  badFit[LOGISTIC_8.length - 12] = 7;
  expectCode(assert, load(aprV1({ type: 2, payload: badFit })), 'BAD_PAYLOAD', 'fit_mode variant 7');
  expectCode(assert, load(aprV1({ type: 2, payload: LOGISTIC_8.subarray(0, 33 + 4 + 8 + 4) })), 'TRUNCATED', 'class_weight Manual declares 2 floats but 4 bytes remain');
  const seq = (parts) => aprV1({ type: 0x20, payload: concat(...parts.map(bincodeF32s)) });
  const m = rt.loadFromBytes(seq([[1, 2, 3, 4, 5, 6], [0, 0], [1, -1, 1, -1], [0, 0]]));
  assert.deepEqual(m.info.layers, [{ inputs: 3, outputs: 2, activation: 'relu' }, { inputs: 2, outputs: 2, activation: 'softmax' }]);
  expectCode(assert, load(seq([[1, 2, 3, 4, 5], [0, 0], [1, -1, 1, -1], [0, 0]])), 'BAD_DIMENSIONS', 'hold 5, 2, 4, 2 floats');
  expectCode(assert, load(seq([[1, 2, 3, 4, 5, 6], [0, 0], [1, -1, 1], [0, 0]])), 'BAD_DIMENSIONS');
  expectCode(assert, load(seq([[], [], [], []])), 'BAD_DIMENSIONS');
  expectCode(assert, load(seq([[1, 2], [0], [1]])), 'TRUNCATED', 'inside b2');
  expectCode(assert, load(aprV1({ type: 0x20, payload: concat(u64le(0), u64le(0), u64le(0), u64le(0), u8(0)) })), 'SIZE_MISMATCH');
  // compressed: the size bound before allocating, a short LZ4 prefix
  expectCode(assert, load(aprV1({ type: 1, payload: new Uint8Array(8), compression: 3, rawSize: 255 * 4 + 1 })), 'SIZE_MISMATCH');
  expectCode(assert, load(aprV1({ type: 1, payload: new Uint8Array(16), compression: 1, rawSize: 2 ** 30 })), 'SIZE_MISMATCH', 'cannot expand');
  expectCode(assert, load(aprV1({ type: 1, payload: new Uint8Array(3), compression: 3, rawSize: 3 })), 'TRUNCATED', 'too short for its 4-byte length');
});

// ------------------------------------------------------------- v2 malformed

const W = { name: 'fc.weight', dtype: 'F32', shape: [1, 2], data: f32bytes([1, 2]) };
const B = { name: 'fc.bias', dtype: 'F32', shape: [1], data: f32bytes([0.5]) };
const v2good = aprV2({ metadata: { model_type: 'mlp' }, tensors: [W, B] });
// header field edit + fresh checksums
const v2field = (offset, bytes, file = v2good) => { const f = file.slice(); f.set(bytes, offset); return withV2Crcs(f); };

test('v2: sizes, both checksums, version, flags', () => {
  assert.deepEqual(Array.from(rt.loadFromBytes(v2good).predict([1, 1])), [3.5]);
  expectCode(assert, load(v2good.subarray(0, 67)), 'TRUNCATED', 'shorter than the 64-byte header');
  const h = v2good.slice();
  h[8] ^= 1;
  expectCode(assert, load(h), 'CHECKSUM_MISMATCH', 'header checksum mismatch: byte 40 stores');
  const r = v2good.slice();
  r[50] = 1; // reserved bytes are covered by the header CRC
  expectCode(assert, load(r), 'CHECKSUM_MISMATCH', 'header checksum');
  const d = v2good.slice();
  d[d.length - 10] ^= 1;
  expectCode(assert, load(d), 'CHECKSUM_MISMATCH', `its bytes [0, ${d.length - 4})`);
  expectCode(assert, load(v2field(4, [3, 0])), 'UNSUPPORTED_VERSION', 'version 3.0');
  expectCode(assert, load(v2field(4, [1, 0])), 'UNSUPPORTED_VERSION');
  for (const [bit, name] of [[0x1, 'LZ4_COMPRESSED'], [0x2, 'ZSTD_COMPRESSED'], [0x4, 'ENCRYPTED'], [0x8, 'SIGNED']]) {
    expectCode(assert, load(v2field(6, u16le(0x400 | bit))), 'UNSUPPORTED', `flag ${name}`);
  }
  expectCode(assert, load(v2field(6, u16le(0x800))), 'UNSUPPORTED', 'column-major');
  expectCode(assert, load(v2field(6, u16le(0x1400))), 'UNSUPPORTED', 'unknown header flags 0x1000');
  assert.deepEqual(rt.inspect(v2field(6, u16le(0x0030))).apr.flags, ['SHARDED', 'QUANTIZED']);
  assert.ok(rt.loadFromBytes(v2field(6, u16le(0))), 'no layout bit: row-major');
});

test('v2: section offsets, index and metadata out of place', () => {
  const dv = new DataView(v2good.buffer);
  const indexAt = Number(dv.getBigUint64(24, true)), dataAt = Number(dv.getBigUint64(32, true));
  expectCode(assert, load(v2field(12, u64le(128))), 'BAD_OFFSETS', 'metadata offset 128 must be 64');
  expectCode(assert, load(v2field(20, u32le(17 << 20))), 'HEADER_TOO_LARGE');
  expectCode(assert, load(v2field(24, u64le(indexAt + 8))), 'BAD_OFFSETS', 'multiple of 64');
  expectCode(assert, load(v2field(24, u64le(64))), 'BAD_OFFSETS', 'at or after the metadata end');
  expectCode(assert, load(v2field(32, u64le(dataAt + 32))), 'BAD_OFFSETS');
  expectCode(assert, load(v2field(32, u64le(indexAt - 64))), 'BAD_OFFSETS', 'at or after the tensor index');
  expectCode(assert, load(v2field(32, u64le(2 ** 40))), 'TRUNCATED', 'past the checksum');
  expectCode(assert, load(v2field(8, u32le(100))), 'TRUNCATED', '100 tensors need at least 2000 index bytes');
  expectCode(assert, load(v2field(8, u32le(3))), 'BAD_HEADER', 'tensor index entry 2 has an empty name'); // the zero padding
  expectCode(assert, load(v2field(8, u32le(1))), 'BAD_HEADER', 'padding after the tensor index');
  expectCode(assert, load(v2field(8, u32le(200000))), 'BAD_HEADER', '200000 tensors, more than 100000');
  expectCode(assert, load(v2field(20, u32le(dv.getUint32(20, true) - 1))), 'INVALID_JSON');
  // every truncation: the footer no longer matches; with fresh checksums the sections do not fit
  for (const cut of [68, 100, indexAt, indexAt + 10, dataAt, dataAt + 4, dataAt + 64 + 4]) {
    expectCode(assert, load(v2good.subarray(0, cut)), 'CHECKSUM_MISMATCH');
    const e = expectCode(assert, load(withV2Crcs(concat(v2good.subarray(0, cut), new Uint8Array(4)))),
      cut < dataAt ? 'TRUNCATED' : 'BAD_OFFSETS');
    assert.ok(e.message.startsWith('apr: '), e.message);
  }
});

test('v2: metadata and index entries, each malformed class', () => {
  const v2 = (metadata, tensors = [W, B], extra = {}) => aprV2({ metadata, tensors, ...extra });
  expectCode(assert, load(v2('[1]')), 'BAD_HEADER', 'metadata must be a JSON object, got array');
  expectCode(assert, load(v2('{"a":1,"a":2}')), 'DUPLICATE_KEY', "'a'");
  expectCode(assert, load(v2('{"a":')), 'INVALID_JSON');
  expectCode(assert, load(v2('{"a":' + '['.repeat(63) + ']'.repeat(63) + '}')), 'INVALID_JSON', 'deeper than 63');
  assert.ok(rt.loadFromBytes(v2('{"a":' + '['.repeat(62) + ']'.repeat(62) + '}')));
  const nonzero = v2good.slice();
  nonzero[64 + JSON.stringify({ model_type: 'mlp' }).length] = 0x20;
  expectCode(assert, load(withV2Crcs(nonzero)), 'BAD_HEADER', 'padding after the metadata');
  const entry = (name, o = {}) => aprV2Entry({ name, dtype: 0, shape: [1, 2], offset: 0, size: 8, ...o });
  const withEntries = (entries, count = 1, data = [W]) => aprV2({ metadata: {}, tensors: data, entries, count, sort: false });
  expectCode(assert, load(withEntries(entry('fc.weight', { dtype: 2 }))), 'UNKNOWN_DTYPE', "'fc.weight' has unknown dtype id 2");
  expectCode(assert, load(withEntries(entry('fc.weight', { dtype: 255 }))), 'UNKNOWN_DTYPE');
  expectCode(assert, load(withEntries(entry('fc.weight', { shape: new Array(9).fill(1), size: 4 }))), 'BAD_DIMENSIONS', '9 dimensions');
  expectCode(assert, load(withEntries(entry('fc.weight', { size: 12 }))), 'SIZE_MISMATCH', 'is F32 with 2 elements (8 bytes) but its size is 12 bytes');
  expectCode(assert, load(withEntries(entry('fc.weight', { shape: [2 ** 40, 2 ** 40] }))), 'SHAPE_OVERFLOW');
  expectCode(assert, load(withEntries(entry('fc.weight', { offset: 32 }))), 'BAD_OFFSETS', 'offset 32 is not a multiple of 64');
  expectCode(assert, load(withEntries(entry('fc.weight', { offset: 64 }))), 'BAD_OFFSETS', 'exceed the 64 data bytes');
  expectCode(assert, load(withEntries(entry('fc.weight', { offset: 2 ** 60 }))), 'BAD_OFFSETS');
  expectCode(assert, load(withEntries(entry(''))), 'BAD_HEADER', 'empty name');
  expectCode(assert, load(withEntries(entry('a\0b'))), 'BAD_HEADER', 'NUL');
  const long = concat(u16le(60), enc.encode('a'.repeat(60)), Uint8Array.of(0, 0)); // the rest would be past the index
  expectCode(assert, load(withEntries(long)), 'TRUNCATED', 'tensor index entry 0 ends at byte 192 inside its dimensions, offset and size');
  const badUtf8 = concat(u16le(2), Uint8Array.of(0xc0, 0x80), Uint8Array.of(0, 1), u64le(2), u64le(0), u64le(8));
  expectCode(assert, load(withEntries(badUtf8)), 'INVALID_UTF8', 'tensor index entry 0: name at byte');
  const two = (a, b, oa = 0, ob = 64) => withEntries(concat(entry(a, { offset: oa }), entry(b, { offset: ob })), 2, [W, W]);
  expectCode(assert, load(two('fc.weight', 'fc.bias')), 'BAD_HEADER', "not sorted by name: 'fc.bias' comes after 'fc.weight'");
  expectCode(assert, load(two('w', 'w')), 'DUPLICATE_KEY', "'w' appears twice");
  expectCode(assert, load(two('a', 'ab', 0, 0)), 'BAD_OFFSETS', "tensors 'a' [0, 8) and 'ab' [0, 8) overlap");
  assert.equal(rt.inspect(two('a', 'b')).notAModel.code, 'NOT_A_MODEL', 'valid tensors that are no model still inspect');
  assert.deepEqual(rt.inspect(two('a', 'b')).tensors.map((t) => t.byteOffset % 64), [0, 0]);
});

test('"APR\\0" + four zero bytes is a SafeTensors header length (5,394,497), not a v2 file', () => {
  const json = JSON.stringify({ 'fc.weight': { dtype: 'F32', shape: [1, 2], data_offsets: [0, 8] } });
  const header = concat(enc.encode(json), new Uint8Array(0x00525041 - json.length).fill(0x20));
  const file = concat(u64le(header.length), header, f32bytes([1, 2]));
  assert.deepEqual(Array.from(file.subarray(0, 8)), [0x41, 0x50, 0x52, 0, 0, 0, 0, 0]);
  assert.equal(rt.loadFromBytes(file).info.format, 'safetensors');
  // so a v2 header with version 0.0 and no flags is not read as .apr (it exists in no version)
  expectCode(assert, load(v2field(4, [0, 0, 0, 0])), 'UNKNOWN_FORMAT', 'load: ');
});
