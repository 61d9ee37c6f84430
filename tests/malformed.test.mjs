// Every malformed-input class, through the wasm build: refused at load with its code.
// (tests/c/test_main.c covers the same classes natively under ASan+UBSan.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRuntime } from '../wasm/mlrt.mjs';
import {
  binModel, safetensors, safetensorsF32, concat, u64le, varint, f32bytes, expectCode, readModel,
} from './helpers.mjs';

const rt = await createRuntime();
const enc = new TextEncoder();
const load = (bytes) => () => rt.loadFromBytes(bytes);

// A small valid model in each format, then broken one way at a time.
const tiny = binModel(3, 2, 2, [1, 2, 3, 4, 5, 6, 0.1, 0.2, 1, -1, 1, -1, 0, 0]);
const st = (header, data = new Uint8Array(8)) => safetensors(header, data);
const okTensor = { dtype: 'F32', shape: [2], data_offsets: [0, 8] };

test('the small valid files load', () => {
  assert.equal(rt.loadFromBytes(tiny).info.format, 'bin');
  const m = rt.loadFromBytes(safetensorsF32({ 'fc.weight': [[2, 3], [1, 2, 3, 4, 5, 6]], 'fc.bias': [[2], [0, 0]] }));
  assert.deepEqual([m.info.inputSize, m.info.outputSize], [3, 2]);
});

test('.bin: truncated at every section boundary, wrong sizes, bad dims', () => {
  // sections of tiny: header 12 | W1 24 | b1 8 | W2 16 | b2 8  -> 68 bytes
  for (const cut of [0, 4, 11, 12, 36, 44, 60, 67]) {
    expectCode(assert, load(tiny.subarray(0, cut)), 'TRUNCATED');
  }
  const err = expectCode(assert, load(concat(tiny, new Uint8Array(1))), 'SIZE_MISMATCH');
  assert.match(err.message, /need 124 bytes \(f64\) or 68 bytes \(f32\), but the file is 69 bytes/);
  const dims = (a, b, c) => { const x = tiny.slice(); const dv = new DataView(x.buffer); dv.setInt32(0, a, true); dv.setInt32(4, b, true); dv.setInt32(8, c, true); return x; };
  // implausible dimensions: not a .bin at all, and the error names every format tried
  expectCode(assert, load(dims(0, 2, 2)), 'UNKNOWN_FORMAT', 'not a raw .bin (dimensions 0, 2, 2 are not each in 1..16777216)');
  expectCode(assert, load(dims(-3, 2, 2)), 'UNKNOWN_FORMAT', 'not SafeTensors');
  expectCode(assert, load(dims(3, 2, -1)), 'UNKNOWN_FORMAT', 'not BinTensors');
  expectCode(assert, load(dims(1 << 20, 1 << 20, 2)), 'UNKNOWN_FORMAT');                   // over the 2^28 cap
  expectCode(assert, load(dims(2147483647, 2147483647, 2147483647)), 'UNKNOWN_FORMAT');
  const nan = tiny.slice();
  new DataView(nan.buffer).setFloat32(12 + 4 * 3, NaN, true);
  expectCode(assert, load(nan), 'NON_FINITE', 'weight');
});

test('safetensors: header length, truncation, JSON, UTF-8', () => {
  expectCode(assert, load(new Uint8Array(5)), 'TRUNCATED');
  expectCode(assert, load(concat(u64le(1000), enc.encode('{"a":1}'))), 'TRUNCATED', 'cut short');
  expectCode(assert, load(concat(u64le(2 ** 40), enc.encode('{}'))), 'HEADER_TOO_LARGE');
  expectCode(assert, load(concat(u64le(100_000_001), enc.encode('{}'), new Uint8Array(100_000_001))), 'HEADER_TOO_LARGE');
  expectCode(assert, load(st('{"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},}')), 'INVALID_JSON');
  expectCode(assert, load(st("{'w': 1}")), 'INVALID_JSON');
  expectCode(assert, load(st('{"w": {"dtype": "F32"')), 'INVALID_JSON');
  expectCode(assert, load(st('{"w": 01}')), 'INVALID_JSON');
  expectCode(assert, load(st('{"w": NaN}')), 'INVALID_JSON');
  expectCode(assert, load(st('{"w\\ud800": 1}')), 'INVALID_JSON');
  expectCode(assert, load(st('{"a": {}} x')), 'INVALID_JSON');
  expectCode(assert, load(st('{"a":' + '['.repeat(100) + ']'.repeat(100) + '}')), 'INVALID_JSON', 'too deep');
  const withByte = new Uint8Array([...enc.encode('{"w'), 0xc0, 0x80, ...enc.encode('": 1}')]); // overlong NUL
  expectCode(assert, load(st(withByte)), 'INVALID_UTF8');
  expectCode(assert, load(st(new Uint8Array([...enc.encode('{"'), 0xed, 0xa0, 0x80, ...enc.encode('": 1}')]))), 'INVALID_UTF8'); // surrogate
});

test('safetensors: structure, duplicates, dtypes, shapes, offsets', () => {
  expectCode(assert, load(st('{"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}, "w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}')), 'DUPLICATE_KEY', "'w'");
  expectCode(assert, load(st('{"w": {"dtype": "F32", "dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}')), 'DUPLICATE_KEY');
  expectCode(assert, load(st({ __metadata__: { a: 1 }, w: okTensor })), 'BAD_HEADER', '__metadata__');
  expectCode(assert, load(st({ __metadata__: ['x'], w: okTensor })), 'BAD_HEADER');
  expectCode(assert, load(st({ w: { shape: [2], data_offsets: [0, 8] } })), 'BAD_HEADER', 'dtype');
  expectCode(assert, load(st({ w: { dtype: 'F32', data_offsets: [0, 8] } })), 'BAD_HEADER', 'shape');
  expectCode(assert, load(st({ w: { dtype: 'F32', shape: [2] } })), 'BAD_HEADER', 'data_offsets');
  expectCode(assert, load(st({ w: 3 })), 'BAD_HEADER');
  expectCode(assert, load(st({ w: { dtype: 'F31', shape: [2], data_offsets: [0, 8] } })), 'UNKNOWN_DTYPE', 'F31');
  expectCode(assert, load(st({ w: { dtype: 'F32', shape: [-2], data_offsets: [0, 8] } })), 'BAD_DIMENSIONS');
  expectCode(assert, load(st({ w: { dtype: 'F32', shape: [2.5], data_offsets: [0, 8] } })), 'BAD_DIMENSIONS');
  expectCode(assert, load(st({ w: { dtype: 'F32', shape: [1, 1, 1, 1, 1, 1, 1, 1, 2], data_offsets: [0, 8] } })), 'BAD_DIMENSIONS');
  expectCode(assert, load(st('{"w": {"dtype": "F32", "shape": [4294967296, 4294967296, 4294967296], "data_offsets": [0, 8]}}')), 'SHAPE_OVERFLOW');
  expectCode(assert, load(st('{"w": {"dtype": "F32", "shape": [99999999999999999999], "data_offsets": [0, 8]}}')), 'BAD_DIMENSIONS');
  expectCode(assert, load(st({ w: { dtype: 'F32', shape: [3], data_offsets: [0, 8] } })), 'SIZE_MISMATCH', "'w'");
  const err = expectCode(assert, load(st({ w1: { dtype: 'F32', shape: [1024], data_offsets: [0, 4096] } }, new Uint8Array(1024))), 'TRUNCATED');
  assert.match(err.message, /cut short: tensor 'w1' data_offsets \[0, 4096\) exceed data size 1024/);
  // a real file cut anywhere in its data
  for (const name of ['mnist-mlp.safetensors', 'mnist-mlp.bintensors', 'mnist-mlp.f32.bin']) {
    const whole = readModel(name);
    for (const frac of [0.3, 0.9, 0.9999]) expectCode(assert, load(whole.subarray(0, Math.floor(whole.length * frac))), 'TRUNCATED');
  }
  expectCode(assert, load(st({ a: { dtype: 'F32', shape: [1], data_offsets: [0, 4] }, b: { dtype: 'F32', shape: [1], data_offsets: [2, 6] } })), 'BAD_OFFSETS', 'overlap');
  expectCode(assert, load(st({ a: { dtype: 'F32', shape: [1], data_offsets: [4, 8] } })), 'BAD_OFFSETS', 'hole');
  expectCode(assert, load(st({ a: { dtype: 'F32', shape: [1], data_offsets: [0, 4] } })), 'BAD_OFFSETS', 'end');
  expectCode(assert, load(st({ a: { dtype: 'F32', shape: [1], data_offsets: [8, 4] } })), 'BAD_OFFSETS');
  expectCode(assert, load(st({ a: { dtype: 'F32', shape: [2], data_offsets: [0, 8, 9] } })), 'BAD_OFFSETS');
});

test('safetensors: valid tensors that are not a model still inspect', () => {
  const bytes = st({ __metadata__: { note: 'x' }, embeddings: { dtype: 'I32', shape: [2], data_offsets: [0, 8] } });
  const info = rt.inspect(bytes);
  assert.equal(info.format, 'safetensors');
  assert.equal(info.modelKind, undefined);
  assert.equal(info.notAModel.code, 'NOT_A_MODEL');
  assert.deepEqual(info.metadata, { note: 'x' });
  assert.deepEqual(info.tensors, [{ name: 'embeddings', dtype: 'I32', shape: [2], byteOffset: 8 + (bytes.length - 16), byteLength: 8 }]);
  expectCode(assert, load(bytes), 'NOT_A_MODEL', 'embeddings');
  const ints = st({ 'fc.weight': { dtype: 'I32', shape: [1, 2], data_offsets: [0, 8] } });
  expectCode(assert, load(ints), 'NOT_A_MODEL', 'I32');
  // [2,3] then [1,3] chain only as [in,out] then [out,in]: read so, and said so
  const mixed = safetensorsF32({ 'fc1.weight': [[2, 3], [1, 2, 3, 4, 5, 6]], 'fc2.weight': [[1, 3], [1, 2, 3]] });
  const m = rt.loadFromBytes(mixed);
  assert.deepEqual([m.info.inputSize, m.info.weightLayout, m.info.weightLayoutGuessed], [2, 'mixed', false]);
  const unchained = safetensorsF32({ 'fc1.weight': [[2, 3], [1, 2, 3, 4, 5, 6]], 'fc2.weight': [[1, 4], [1, 2, 3, 4]] });
  expectCode(assert, load(unchained), 'BAD_DIMENSIONS', "'fc2' takes 4 inputs but layer 'fc1' gives 2");
  expectCode(assert, rt.loadFromBytes.bind(rt, mixed, { weightLayout: 'out_in' }), 'BAD_DIMENSIONS');
  assert.throws(() => rt.loadFromBytes(mixed, { weightLayout: 'rows' }), (e) => e.code === 'INVALID_ARGUMENT');
});

// BinTensors in the crate's layout: Option<meta>, Vec<TensorInfo>, index map; space padded.
function bintensors({ meta = null, tensors, pad = true }, data) {
  const parts = [];
  if (meta) {
    parts.push(Uint8Array.of(1), varint(Object.keys(meta).length));
    for (const [k, v] of Object.entries(meta)) parts.push(varint(enc.encode(k).length), enc.encode(k), varint(enc.encode(v).length), enc.encode(v));
  } else parts.push(Uint8Array.of(0));
  parts.push(varint(tensors.length));
  for (const t of tensors) {
    parts.push(varint(t.dtype), varint(t.shape.length), ...t.shape.map(varint), varint(t.offsets[0]), varint(t.offsets[1]));
  }
  parts.push(varint(tensors.length));
  tensors.forEach((t, i) => parts.push(varint(enc.encode(t.name).length), enc.encode(t.name), varint(t.index ?? i)));
  let m = concat(...parts);
  if (pad) m = concat(m, new Uint8Array((8 - (m.length % 8)) % 8).fill(32));
  return concat(u64le(m.length), m, data);
}

test('bintensors: the crate test vector, models, and every malformed class', () => {
  const vector = concat(u64le(24), Uint8Array.of(0, 1, 11, 3, 1, 2, 3, 0, 24, 1, 6), enc.encode('attn.0'), Uint8Array.of(0), new Uint8Array(6).fill(32), f32bytes([0, 1, 2, 3, 4, 5]));
  const info = rt.inspect(vector);
  assert.equal(info.format, 'bintensors');
  assert.deepEqual(info.tensors, [{ name: 'attn.0', dtype: 'F32', shape: [1, 2, 3], byteOffset: 32, byteLength: 24 }]);

  const w = f32bytes([1, 2, 3, 4, 5, 6]), b = f32bytes([0.5, -0.5]);
  const model = bintensors({ meta: { activations: 'identity' }, tensors: [
    { name: 'fc.bias', dtype: 11, shape: [2], offsets: [0, 8] },
    { name: 'fc.weight', dtype: 11, shape: [2, 3], offsets: [8, 32] },
  ] }, concat(b, w));
  assert.deepEqual(Array.from(rt.loadFromBytes(model).predict([1, 1, 1])), [6.5, 14.5]);

  const one = (t, data = new Uint8Array(8)) => bintensors({ tensors: [t] }, data);
  expectCode(assert, load(one({ name: 'w', dtype: 15, shape: [2], offsets: [0, 8] })), 'UNKNOWN_DTYPE');
  expectCode(assert, load(one({ name: 'w', dtype: 11, shape: [3], offsets: [0, 8] })), 'SIZE_MISMATCH');
  expectCode(assert, load(one({ name: 'w', dtype: 11, shape: [2], offsets: [0, 8] }, new Uint8Array(12))), 'BAD_OFFSETS');
  expectCode(assert, load(one({ name: 'w', dtype: 11, shape: [2], offsets: [4, 12] }, new Uint8Array(12))), 'BAD_OFFSETS', 'hole');
  expectCode(assert, load(one({ name: 'w', dtype: 11, shape: [2], offsets: [0, 8], index: 5 })), 'BAD_HEADER', 'index map');
  expectCode(assert, load(bintensors({ tensors: [
    { name: 'w', dtype: 11, shape: [1], offsets: [0, 4] }, { name: 'w', dtype: 11, shape: [1], offsets: [4, 8] }] }, new Uint8Array(8))), 'DUPLICATE_KEY');
  expectCode(assert, load(one({ name: 'w', dtype: 11, shape: [2 ** 40, 2 ** 40], offsets: [0, 8] })), 'SHAPE_OVERFLOW');
  const good = one({ name: 'w', dtype: 11, shape: [2], offsets: [0, 8] });
  for (let cut = 9; cut < 8 + 16; cut++) {                       // every byte inside the metadata
    const meta = good.slice(8, cut);
    const err = (() => { try { rt.loadFromBytes(concat(u64le(meta.length), meta)); } catch (e) { return e; } })();
    assert.ok(err && ['TRUNCATED', 'BAD_HEADER', 'BAD_OFFSETS'].includes(err.code), `cut ${cut}: ${err?.code}`);
  }
  const badPad = good.slice(); badPad[8 + 15] = 0x41;              // last padding byte: ignored, as the crate does
  assert.deepEqual(rt.inspect(badPad).tensors.map((x) => x.name), ['w']);
  const bigCount = concat(u64le(8), Uint8Array.of(0, 252, 255, 255, 255, 255, 32, 32));
  expectCode(assert, load(bigCount), 'TRUNCATED');
  const u128 = concat(u64le(8), Uint8Array.of(0, 254, 0, 0, 0, 0, 32, 32));
  expectCode(assert, load(u128), 'BAD_HEADER');
  const utf8 = bintensors({ tensors: [{ name: 'w\u00e9', dtype: 11, shape: [2], offsets: [0, 8] }] }, new Uint8Array(8));
  utf8[8 + 10] = 0xff; // option 1 + count 1 + tensor info 5 + map count 1 + name length 1 + 'w' 1: the é
  expectCode(assert, load(utf8), 'INVALID_UTF8');
});

test('unknown formats and empty input', () => {
  expectCode(assert, load(new Uint8Array(0)), 'TRUNCATED');
  const gif = expectCode(assert, load(enc.encode('GIF89a, definitely not a model file')), 'UNKNOWN_FORMAT');
  assert.match(gif.message, /not \.apr .*not SafeTensors .*not BinTensors .*not a raw \.bin/);
  expectCode(assert, () => rt.inspect(enc.encode('GIF89a, definitely not a model file')), 'UNKNOWN_FORMAT');
  for (let seed = 1; seed <= 50; seed++) { // random bytes are not a .bin with absurd dimensions
    let s = seed;
    const bytes = Uint8Array.from({ length: 64 + seed * 7 }, () => { s = (s * 1103515245 + 12345) >>> 0; return s >>> 24; });
    expectCode(assert, load(bytes), 'UNKNOWN_FORMAT');
  }
});
