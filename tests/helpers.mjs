// Shared by the Node tests: paths, file builders, and an independent float64 reference.
import { readFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const root = new URL('../', import.meta.url);
export const modelsDir = new URL('build/models/', root);
export const modelPath = (name) => new URL(name, modelsDir);
export const readModel = (name) => new Uint8Array(readFileSync(modelPath(name)));
export const haveModels = () => existsSync(modelPath('mnist-mlp.f64.bin'));

export const MODEL_FILES = [
  'mnist-mlp.f64.bin',
  'mnist-mlp.f32.bin',
  'mnist-mlp.safetensors',
  'mnist-mlp.aprender.safetensors',
  'mnist-mlp.bintensors',
];

// ------------------------------------------------------------------ builders

/** A model folder's files ({ 'path/in/folder': bytes }) written under dir. */
export function writeFolder(dir, files) {
  for (const [name, bytes] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), bytes);
  }
}

const enc = new TextEncoder();

export function concat(...parts) {
  const n = parts.reduce((s, p) => s + p.length, 0);
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
}

export function u64le(v) {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigUint64(0, BigInt(v), true);
  return b;
}

export function f32bytes(values) {
  return new Uint8Array(Float32Array.from(values).buffer);
}

/** SafeTensors file from a header (object, JSON text or raw bytes) and the data bytes. */
export function safetensors(header, data = new Uint8Array(0)) {
  const h = header instanceof Uint8Array ? header
    : enc.encode(typeof header === 'string' ? header : JSON.stringify(header));
  return concat(u64le(h.length), h, data);
}

/** SafeTensors with F32 tensors laid out in order: { name: [shape, values] }. */
export function safetensorsF32(tensors, metadata) {
  const header = {};
  if (metadata) header.__metadata__ = metadata;
  const blobs = [];
  let at = 0;
  for (const [name, [shape, values]] of Object.entries(tensors)) {
    header[name] = { dtype: 'F32', shape, data_offsets: [at, at + values.length * 4] };
    blobs.push(f32bytes(values));
    at += values.length * 4;
  }
  return safetensors(header, concat(...blobs));
}

/** Raw .bin MLP with f32 (or f64) values. */
export function binModel(inputs, hidden, outputs, values, f64 = false) {
  const n = inputs * hidden + hidden + hidden * outputs + outputs;
  if (values.length !== n) throw new Error(`binModel: need ${n} values`);
  const es = f64 ? 8 : 4;
  const b = new Uint8Array(12 + n * es);
  const dv = new DataView(b.buffer);
  dv.setInt32(0, inputs, true); dv.setInt32(4, hidden, true); dv.setInt32(8, outputs, true);
  for (let i = 0; i < n; i++) {
    if (f64) dv.setFloat64(12 + 8 * i, values[i], true);
    else dv.setFloat32(12 + 4 * i, values[i], true);
  }
  return b;
}

/** bincode varint (bintensors). */
export function varint(v) {
  v = BigInt(v);
  if (v < 251n) return Uint8Array.of(Number(v));
  const [tag, w] = v < 1n << 16n ? [251, 2] : v < 1n << 32n ? [252, 4] : [253, 8];
  const b = new Uint8Array(1 + w);
  b[0] = tag;
  for (let i = 0; i < w; i++) b[1 + i] = Number((v >> BigInt(8 * i)) & 0xffn);
  return b;
}

// deterministic pseudo-random numbers (mulberry32)
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// ----------------------------------------------------- float64 reference MLP

/** Reads the .bin format independently of the C code: { inputs, hidden, outputs, w1, b1, w2, b2 } (Float64Array). */
export function parseBin(bytes) {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const [inputs, hidden, outputs] = [0, 4, 8].map((o) => dv.getInt32(o, true));
  const n = inputs * hidden + hidden + hidden * outputs + outputs;
  const es = (bytes.length - 12) / n;
  const all = new Float64Array(n);
  for (let i = 0; i < n; i++) all[i] = es === 8 ? dv.getFloat64(12 + 8 * i, true) : dv.getFloat32(12 + 4 * i, true);
  let at = 0;
  const take = (k) => all.subarray(at, (at += k));
  return { inputs, hidden, outputs, w1: take(inputs * hidden), b1: take(hidden), w2: take(hidden * outputs), b2: take(outputs) };
}

/** ReLU hidden, softmax out, all in float64. x: one input. */
export function referencePredict(net, x) {
  const { inputs, hidden, outputs, w1, b1, w2, b2 } = net;
  const h = Float64Array.from(b1);
  for (let i = 0; i < inputs; i++) {
    const xi = x[i];
    if (xi === 0) continue;
    for (let j = 0; j < hidden; j++) h[j] += xi * w1[i * hidden + j];
  }
  for (let j = 0; j < hidden; j++) if (h[j] < 0) h[j] = 0;
  const z = Float64Array.from(b2);
  for (let j = 0; j < hidden; j++) for (let o = 0; o < outputs; o++) z[o] += h[j] * w2[j * outputs + o];
  const m = Math.max(...z);
  let s = 0;
  for (let o = 0; o < outputs; o++) s += (z[o] = Math.exp(z[o] - m));
  return z.map((v) => v / s);
}

export const argmax = (v) => v.reduce((best, x, i) => (x > v[best] ? i : best), 0);

/** Asserts code and returns the error, so tests can also look at the message. */
export function expectCode(assert, fn, code, messagePart) {
  let err;
  try { fn(); } catch (e) { err = e; }
  assert.ok(err, `expected MlrtError ${code}, nothing was thrown`);
  assert.equal(err.name, 'MlrtError', `expected MlrtError, got ${err}`);
  assert.equal(err.code, code, `expected ${code}, got ${err.code}: ${err.message}`);
  if (messagePart) assert.match(err.message, messagePart instanceof RegExp ? messagePart : new RegExp(escape(messagePart)));
  return err;
}
const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// ------------------------------------------------------- .apr builders (test-only)

const CRC_TABLE = Uint32Array.from({ length: 256 }, (_, b) => {
  let c = b;
  for (let i = 0; i < 8; i++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  return c >>> 0;
});

/** zlib's crc32 of bytes (what .apr stores). */
export function crc32(bytes) {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** Bytes from hex text ("41 50 52 4e", whitespace ignored). */
export const fromHex = (s) => Uint8Array.from(s.replace(/\s+/g, '').match(/../g) ?? [], (h) => parseInt(h, 16));

const le = (bytes, write) => { const b = new Uint8Array(bytes); write(new DataView(b.buffer)); return b; };
export const u8 = (v) => Uint8Array.of(v);
export const u16le = (v) => le(2, (d) => d.setUint16(0, v, true));
export const u32le = (v) => le(4, (d) => d.setUint32(0, v, true));
export const f32le = (v) => le(4, (d) => d.setFloat32(0, v, true));

/** bincode 1 Vec<f32> (u64 count, then the floats). */
export const bincodeF32s = (values) => concat(u64le(values.length), f32bytes(values));

// MessagePack, as rmp-serde writes it: maps from objects (or MsgpackMap entries, which may repeat a
// key), integers in the smallest encoding (BigInt for 64-bit), other numbers as float64,
// MsgpackF32 as float32, Uint8Array as bin, MsgpackRaw spliced in as is.
export class MsgpackF32 { constructor(v) { this.value = v; } }
export class MsgpackRaw { constructor(bytes) { this.bytes = bytes; } }
export class MsgpackMap { constructor(entries) { this.entries = entries; } }

const be = (bytes, write) => { const b = new Uint8Array(bytes); write(new DataView(b.buffer)); return b; };
function mpLength(n, fix, fixMax, t8, t16, t32) {
  if (n <= fixMax && fix !== null) return u8(fix | n);
  if (n < 256 && t8 !== null) return Uint8Array.of(t8, n);
  if (n < 65536) return concat(u8(t16), be(2, (d) => d.setUint16(0, n)));
  return concat(u8(t32), be(4, (d) => d.setUint32(0, n)));
}
export function msgpack(v) {
  if (v === null || v === undefined) return u8(0xc0);
  if (v === false || v === true) return u8(v ? 0xc3 : 0xc2);
  if (v instanceof MsgpackRaw) return v.bytes;
  if (v instanceof MsgpackF32) return concat(u8(0xca), be(4, (d) => d.setFloat32(0, v.value)));
  if (typeof v === 'bigint') {
    return v < 0n ? concat(u8(0xd3), be(8, (d) => d.setBigInt64(0, v))) : concat(u8(0xcf), be(8, (d) => d.setBigUint64(0, v)));
  }
  if (typeof v === 'number') {
    if (!Number.isInteger(v) || Object.is(v, -0) || Math.abs(v) >= 2 ** 63) return concat(u8(0xcb), be(8, (d) => d.setFloat64(0, v)));
    if (v >= 0 && v < 128) return u8(v);
    if (v < 0 && v >= -32) return u8(v & 0xff);
    if (v >= 0) {
      if (v < 256) return Uint8Array.of(0xcc, v);
      if (v < 65536) return concat(u8(0xcd), be(2, (d) => d.setUint16(0, v)));
      if (v < 2 ** 32) return concat(u8(0xce), be(4, (d) => d.setUint32(0, v)));
      return concat(u8(0xcf), be(8, (d) => d.setBigUint64(0, BigInt(v))));
    }
    if (v >= -128) return Uint8Array.of(0xd0, v & 0xff);
    if (v >= -32768) return concat(u8(0xd1), be(2, (d) => d.setInt16(0, v)));
    if (v >= -(2 ** 31)) return concat(u8(0xd2), be(4, (d) => d.setInt32(0, v)));
    return concat(u8(0xd3), be(8, (d) => d.setBigInt64(0, BigInt(v))));
  }
  if (typeof v === 'string') {
    const s = enc.encode(v);
    return concat(mpLength(s.length, 0xa0, 31, 0xd9, 0xda, 0xdb), s);
  }
  if (v instanceof Uint8Array) return concat(mpLength(v.length, null, -1, 0xc4, 0xc5, 0xc6), v);
  if (Array.isArray(v)) return concat(mpLength(v.length, 0x90, 15, null, 0xdc, 0xdd), ...v.map(msgpack));
  const entries = v instanceof MsgpackMap ? v.entries : Object.entries(v);
  return concat(mpLength(entries.length, 0x80, 15, null, 0xde, 0xdf), ...entries.flatMap(([k, x]) => [msgpack(k), msgpack(x)]));
}

export const APR_TYPE = { LinearRegression: 1, LogisticRegression: 2, DecisionTree: 3, RandomForest: 4, GradientBoosting: 5, KMeans: 6,
  NeuralSequential: 0x20, Custom: 0xff };
export const APR_DEFAULT_META = { created_at: '1700000000', aprender_version: '0.0.0-test' };

/** Writes the last 4 bytes: the crc32 of everything before them (after a test edited the file). */
export function withV1Crc(file) {
  const f = file.slice();
  new DataView(f.buffer).setUint32(f.length - 4, crc32(f.subarray(0, f.length - 4)), true);
  return f;
}

/**
 * An APRN (.apr v1) file. payload: the stored payload bytes (already compressed/encrypted when
 * compression/flags say so); rawSize defaults to payload.length; signature: 96 bytes appended
 * after the payload; metadata: a value for msgpack() or raw bytes.
 */
export function aprV1({ type = 1, payload, metadata = APR_DEFAULT_META, compression = 0, flags = 0, quality = 0,
  major = 1, minor = 0, rawSize, signature, reserved = new Uint8Array(9) }) {
  const meta = metadata instanceof Uint8Array ? metadata : msgpack(metadata);
  const header = concat(enc.encode('APRN'), Uint8Array.of(major, minor), u16le(type), u32le(meta.length),
    u32le(payload.length), u32le(rawSize ?? payload.length), Uint8Array.of(compression, flags, quality), reserved);
  return withV1Crc(concat(header, meta, payload, signature ?? new Uint8Array(0), new Uint8Array(4)));
}

export const APR_DTYPE = { F32: 0, F16: 1, F64: 3, I32: 4, I64: 5, I8: 6, U8: 7, BF16: 30, APR_Q4: 128, APR_Q8: 129, Q4_K: 12, Q6_K: 14 };
const align64 = (n) => Math.ceil(n / 64) * 64;
const pad64 = (b) => concat(b, new Uint8Array(align64(b.length) - b.length));

/** Recomputes both .apr v2 checksums (header bytes 0..40 ‖ 44..64 at 40; the footer). */
export function withV2Crcs(file) {
  const f = file.slice();
  const dv = new DataView(f.buffer);
  dv.setUint32(40, crc32(concat(f.subarray(0, 40), f.subarray(44, 64))), true);
  dv.setUint32(f.length - 4, crc32(f.subarray(0, f.length - 4)), true);
  return f;
}

/** One index entry. */
export function aprV2Entry({ name, dtype, shape, offset, size }) {
  const n = enc.encode(name);
  return concat(u16le(n.length), n, Uint8Array.of(dtype, shape.length), ...shape.map(u64le), u64le(offset), u64le(size));
}

/**
 * An APR\0 (.apr v2) file. tensors: [{ name, dtype (id or APR_DTYPE name), shape, data }], written
 * sorted by name (sort: false keeps the given order) with data in the same order, each padded to 64.
 * metadata: an object or raw JSON text. entries (raw index bytes) and count replace the index that
 * the tensors would get, for malformed files and other data orders.
 */
export function aprV2({ metadata = { model_type: 'mlp' }, tensors, flags = 0x0400, magic = 'APR\0', major = 2, minor = 0,
  sort = true, entries, count }) {
  const list = sort ? [...tensors].sort((a, b) => Buffer.compare(enc.encode(a.name), enc.encode(b.name))) : tensors;
  const json = enc.encode(typeof metadata === 'string' ? metadata : JSON.stringify(metadata));
  let at = 0;
  const own = list.map((t) => {
    const dtype = typeof t.dtype === 'string' ? APR_DTYPE[t.dtype] : t.dtype;
    const e = aprV2Entry({ name: t.name, dtype, shape: t.shape, offset: at, size: t.data.length });
    at += align64(t.data.length);
    return e;
  });
  const blobs = list.map((t) => pad64(t.data));
  const index = entries ?? concat(...own);
  const indexAt = 64 + align64(json.length), dataAt = indexAt + align64(index.length);
  const header = concat(enc.encode(magic), Uint8Array.of(major, minor), u16le(flags), u32le(count ?? list.length), u64le(64),
    u32le(json.length), u64le(indexAt), u64le(dataAt), new Uint8Array(24));
  return withV2Crcs(concat(header, pad64(json), pad64(index), ...blobs, new Uint8Array(4)));
}

/** Tensors of a SafeTensors file: { name: { dtype, shape, bytes } } (for re-packing test weights). */
export function readSafetensors(bytes) {
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  const out = {};
  for (const [name, t] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    out[name] = { dtype: t.dtype, shape: t.shape, bytes: bytes.slice(8 + n + t.data_offsets[0], 8 + n + t.data_offsets[1]) };
  }
  return out;
}

// ------------------------------------------------------------------ the spec's golden .apr files (§11)

export const GOLDEN_V1 = fromHex(`
  4150524e010001004a0000003d0000003d000000000055000000000000000000
  83aa637265617465645f6174aa31373030303030303030b0617072656e646572
  5f76657273696f6eac302e302e302d676f6c64656eaa6d6f64656c5f6e616d65
  a9676f6c64656e2d76310900000000000000676f6c64656e5f76310800000000
  0000000000803f000000400000003f000000bf00008040000000c00000803e00
  0000410000003e65a04859`);

// golden_v2_current, byte for byte as the spec lists it (zero rows omitted there)
export function goldenV2() {
  const f = new Uint8Array(516);
  const at = (offset, bytes) => f.set(bytes, offset);
  at(0x000, fromHex('41505200 02000004 02000000 40000000 00000000 bd000000 00010000 00000000'));
  at(0x020, fromHex('80010000 00000000 028cc03b'));
  at(0x040, enc.encode('{"model_type":"linear_regression","name":"golden-v2","license":null,"data_source":null,'
    + '"data_license":null,"version":"0.0.0-golden","created_at":"1700000000","total_size":0,"param_count":8}'));
  at(0x100, concat(fromHex('0400'), enc.encode('bias'), fromHex('00 01 0100000000000000 0000000000000000 0400000000000000')));
  at(0x120, concat(fromHex('0700'), enc.encode('weights'), fromHex('00 01 0800000000000000 4000000000000000 2000000000000000')));
  at(0x180, fromHex('0000003e'));
  at(0x1c0, fromHex('0000803f 00000040 0000003f 000000bf 00008040 000000c0 0000803e 00000041'));
  at(0x200, fromHex('353f0f55'));
  return f;
}
export const GOLDEN_WEIGHTS = [1, 2, 0.5, -0.5, 4, -2, 0.25, 8];

/** The first index where two Float32Arrays differ in bits (0 when their lengths differ), or -1. */
export function firstBitDiff(a, b) {
  if (a.length !== b.length) return 0;
  const ua = new Uint32Array(a.buffer, a.byteOffset, a.length), ub = new Uint32Array(b.buffer, b.byteOffset, b.length);
  for (let i = 0; i < a.length; i++) if (ua[i] !== ub[i]) return i;
  return -1;
}

// ------------------------------------------------------------------ bits

/** Whether two typed arrays of one type hold the same bytes. */
export const bitsEqual = (a, b) => a.length === b.length &&
  Buffer.compare(Buffer.from(a.buffer, a.byteOffset, a.byteLength), Buffer.from(b.buffer, b.byteOffset, b.byteLength)) === 0;

/** Fails unless got and want (Float32Arrays) are the same bit for bit, naming the first difference (firstBitDiff). */
export function assertSameBits(assert, got, want, what) {
  if (bitsEqual(got, want)) return;
  const i = firstBitDiff(got, want);
  assert.fail(`${what}: not the same bits (lengths ${got.length} / ${want.length}; first difference at ${i}: ${got[i]} vs ${want[i]})`);
}
