// Writers for aprender's .apr containers (spec: /work/shared/specs/apr.md), byte for byte as
// aprender writes them: v1 "APRN" (32-byte header, MessagePack metadata, bincode payload, CRC32)
// and v2 "APR\0" (64-byte header, JSON metadata, sorted tensor index, 64-aligned data, CRC32).
// ES module without Node-only APIs, so it also runs in browsers.
//
// Determinism: the same input gives the same bytes. Nothing reads the clock: created_at comes from
// the caller's metadata, else from SOURCE_DATE_EPOCH (when a `process.env` exists), else "0".
import { crc32 } from '../../wasm/crc32.mjs';
import { encodeMsgpack, F32, OrderedMap } from './msgpack.mjs';
import { lz4CompressPrependSize } from './lz4.mjs';
import { zstdCompress } from './zstd.mjs';

export { crc32, encodeMsgpack, F32, OrderedMap };
export { decisionTreePayload, randomForestPayload, kmeansPayload, ngramLmPayload } from './classic.mjs';

/** Written as aprender_version when the source metadata has none (the file was not made by aprender). */
export const WRITER_VERSION = 'mlrt-0.1.0';

const utf8 = new TextEncoder();

/** A user-facing writer error (bad option, model that the requested layout cannot hold). */
export class AprWriteError extends Error {
  constructor(message) { super(message); this.name = 'AprWriteError'; }
}
const fail = (message) => { throw new AprWriteError(message); };

// ------------------------------------------------------------------ compressors

// Header byte 20: 0 none, 1 zstd level 3, 2 zstd level 19, 3 LZ4 (u32 size + one raw block).
const COMPRESSION = {
  none: { id: 0, encode: (b) => b },
  zstd: { id: 1, encode: (b) => zstdCompress(b, { level: 3 }) },
  'zstd-max': { id: 2, encode: (b) => zstdCompress(b, { level: 19 }) },
  lz4: { id: 3, encode: (b) => lz4CompressPrependSize(b) },
};

// ------------------------------------------------------------------ small byte helpers

function concat(parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
}
const align64 = (n) => Math.ceil(n / 64) * 64;
const padTo64 = (b) => (b.length % 64 ? concat([b, new Uint8Array(align64(b.length) - b.length)]) : b);

/** Little-endian bincode 1 writer (fixed-width integers, u64 lengths). */
export class Bincode {
  constructor() { this.parts = []; }
  #le(width, write) { const b = new Uint8Array(width); write(new DataView(b.buffer)); this.parts.push(b); return this; }
  u8(v) { return this.#le(1, (d) => d.setUint8(0, v)); }
  bool(v) { return this.u8(v ? 1 : 0); }
  u32(v) { return this.#le(4, (d) => d.setUint32(0, v, true)); }
  u64(v) { return this.#le(8, (d) => d.setBigUint64(0, BigInt(v), true)); }
  f32(v) { return this.#le(4, (d) => d.setFloat32(0, v, true)); }
  /** Vec<f32> / Vector<f32>: u64 count, then the floats. */
  f32s(values) {
    this.u64(values.length);
    const b = new Uint8Array(values.length * 4), d = new DataView(b.buffer);
    for (let i = 0; i < values.length; i++) d.setFloat32(4 * i, values[i], true);
    this.parts.push(b);
    return this;
  }
  /** String: u64 byte count, then UTF-8. */
  str(s) {
    const b = utf8.encode(s);
    this.u64(b.length);
    this.parts.push(b);
    return this;
  }
  bytes() { return concat(this.parts); }
}

// ------------------------------------------------------------------ metadata schemas
//
// A struct is a list of [key, type, presence]. type: 'str' | 'uint' | 'bool' | 'f32' | 'json' (any
// JSON value) | 'jsonmap' (a Rust HashMap<String, Value>: keys in the caller's order) | { struct } |
// { arrayOf }. presence: 'opt' (Option with skip_serializing_if: omitted when null/undefined,
// jsonmaps also when empty), 'null' (Option written as null when absent), { default: v } (always).
// Keys the schema does not know are written after the known ones (v2: serde's flattened `custom`;
// v1: aprender ignores unknown keys), so nothing the caller gave is lost.

const TRAINING = [['samples', 'uint'], ['duration_ms', 'uint'], ['source', 'str']];
const TEACHER = [['hash', 'str'], ['signature', 'str'], ['model_type', 'str'], ['param_count', 'uint'], ['ensemble_teachers', null]];
TEACHER[4][1] = { arrayOf: { struct: TEACHER } };
const DISTILL_PARAMS = [['temperature', 'f32'], ['alpha', 'f32'], ['beta', 'f32'], ['epochs', 'uint'], ['final_loss', 'f32']];
const LAYER_MAP = [['student_layer', 'uint'], ['teacher_layer', 'uint'], ['weight', 'f32']];
const DISTILL_INFO = [['method', 'str'], ['teacher', { struct: TEACHER }], ['params', { struct: DISTILL_PARAMS }],
  ['layer_mapping', { arrayOf: { struct: LAYER_MAP } }]];
const LICENSE = [['uuid', 'str'], ['hash', 'str'], ['expiry', 'str'], ['seats', 'uint'], ['licensee', 'str'], ['tier', 'str']];
const MODEL_CARD = [['model_id', 'str'], ['name', 'str'], ['version', 'str'], ['author', 'str'], ['created_at', 'str'],
  ['framework_version', 'str'], ['rust_version', 'str'], ['description', 'str'], ['license', 'str'],
  ['training_data', { struct: [['name', 'str'], ['samples', 'uint'], ['hash', 'str']] }],
  ['hyperparameters', 'jsonmap'], ['metrics', 'jsonmap'], ['architecture', 'str'], ['param_count', 'uint'],
  ['target_hardware', { arrayOf: 'str' }, 'nonempty']];

/** aprender's v1 `Metadata`, in field order. */
export const V1_METADATA_FIELDS = [['created_at', 'str', { default: '0' }], ['aprender_version', 'str', { default: WRITER_VERSION }],
  ['model_name', 'str'], ['description', 'str'], ['training', { struct: TRAINING }], ['hyperparameters', 'jsonmap'],
  ['metrics', 'jsonmap'], ['custom', 'jsonmap'], ['distillation', 'str'], ['distillation_info', { struct: DISTILL_INFO }],
  ['license', { struct: LICENSE }], ['model_card', { struct: MODEL_CARD }]];

const Q_META = [['quant_type', 'str', { default: '' }], ['bits', 'uint', { default: 0 }], ['block_size', 'uint', 'null'],
  ['symmetric', 'bool', { default: false }]];
const SHARDING = [['shard_count', 'uint', { default: 0 }], ['shard_index', 'uint', { default: 0 }],
  ['total_size', 'uint', { default: 0 }], ['pattern', 'str', 'null']];
const TOKENS = ['bos_token', 'eos_token', 'unk_token', 'pad_token', 'im_start_token', 'im_end_token'].map((k) => [k, 'str', 'null']);

/** aprender's `AprV2Metadata`, in field order (then `custom`, flattened). */
export const V2_METADATA_FIELDS = [['model_type', 'str', { default: '' }], ['name', 'str'], ['description', 'str'],
  ['author', 'str'], ['license', 'str', 'null'], ['data_source', 'str', 'null'], ['data_license', 'str', 'null'],
  ['version', 'str'], ['source', 'str'], ['original_format', 'str'], ['created_at', 'str'],
  ['total_size', 'uint', { default: 0 }], ['param_count', 'uint', { default: 0 }], ['quantization', { struct: Q_META }],
  ['sharding', { struct: SHARDING }], ['chat_template', 'str'], ['chat_format', 'str'], ['special_tokens', { struct: TOKENS }],
  ['architecture', 'str'], ['hf_architecture', 'str'], ['hf_model_type', 'str'],
  ...['hidden_size', 'num_layers', 'num_heads', 'num_kv_heads', 'vocab_size', 'intermediate_size',
    'max_position_embeddings'].map((k) => [k, 'uint']),
  ['rope_theta', 'f32'], ['rope_type', 'uint'], ['rms_norm_eps', 'f32'],
  ...['head_dim', 'num_experts', 'num_experts_per_tok', 'moe_intermediate_size'].map((k) => [k, 'uint'])];

// Rust String ordering (BTreeMap keys, sorted tensor names) is bytewise UTF-8, not UTF-16 units.
export function compareUtf8(a, b) {
  const x = utf8.encode(a), y = utf8.encode(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}

const isPlainObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Uint8Array)
  && !(v instanceof F32) && !(v instanceof OrderedMap);

/** A serde_json::Value: nested objects are BTreeMaps, so their keys come out sorted. */
function jsonValue(v, path) {
  if (v === undefined) return null;
  if (Array.isArray(v)) return v.map((x, i) => jsonValue(x, `${path}[${i}]`));
  if (v instanceof Map) v = Object.fromEntries(v);
  if (isPlainObject(v)) {
    return new OrderedMap(Object.keys(v).sort(compareUtf8).map((k) => [k, jsonValue(v[k], `${path}.${k}`)]));
  }
  if (v === null || ['string', 'number', 'boolean', 'bigint'].includes(typeof v) || v instanceof F32) return v;
  return fail(`metadata ${path}: ${typeof v} is not a JSON value`);
}

function typed(type, v, path) {
  const want = (ok, what) => (ok ? v : fail(`metadata ${path} must be ${what}, got ${JSON.stringify(v) ?? typeof v}`));
  if (type === 'str') return want(typeof v === 'string', 'a string');
  if (type === 'bool') return want(typeof v === 'boolean', 'a boolean');
  if (type === 'uint') return want((Number.isSafeInteger(v) && v >= 0) || (typeof v === 'bigint' && v >= 0n), 'a non-negative integer');
  if (type === 'f32') return v instanceof F32 ? v : new F32(want(typeof v === 'number', 'a number'));
  if (type === 'json') return jsonValue(v, path);
  if (type === 'jsonmap') {
    const m = v instanceof Map ? [...v] : isPlainObject(v) ? Object.entries(v) : fail(`metadata ${path} must be an object`);
    return new OrderedMap(m.map(([k, x]) => [k, jsonValue(x, `${path}.${k}`)]));
  }
  if (type.struct) return struct(type.struct, want(isPlainObject(v), 'an object'), path);
  if (type.arrayOf) return want(Array.isArray(v), 'an array').map((x, i) => typed(type.arrayOf, x, `${path}[${i}]`));
  throw new Error(`writer: unknown schema type ${type}`);
}

const isEmpty = (t) => (t instanceof OrderedMap && t.entries.length === 0) || (Array.isArray(t) && t.length === 0);

/** The ordered tree of a struct: known fields in schema order, then the other keys. */
function struct(fields, obj, path = '') {
  const entries = [];
  for (const [key, type, presence = 'opt'] of fields) {
    const v = obj[key];
    const at = path ? `${path}.${key}` : key;
    if (v === undefined || v === null) {
      if (presence === 'null') entries.push([key, null]);
      else if (presence.default !== undefined) entries.push([key, presence.default]);
      continue;
    }
    const t = typed(type, v, at);
    if ((type === 'jsonmap' || presence === 'nonempty') && isEmpty(t)) continue;
    entries.push([key, t]);
  }
  const known = new Set(fields.map(([k]) => k));
  for (const [k, v] of Object.entries(obj)) if (!known.has(k) && v !== undefined) entries.push([k, jsonValue(v, path ? `${path}.${k}` : k)]);
  return new OrderedMap(entries);
}

// ------------------------------------------------------------------ JSON as serde_json writes it

// Float text as Rust's ryu prints it (serde_json): shortest digits; "1e16", "1e-7", "0.0001", "1.5e300".
function ryuLayout(negative, digits, exp10) {
  const kk = exp10 + 1, n = digits.length, k = kk - n;
  let s;
  if (k >= 0 && kk <= 16) s = `${digits}${'0'.repeat(k)}.0`;
  else if (kk > 0 && kk <= 16) s = `${digits.slice(0, kk)}.${digits.slice(kk)}`;
  else if (kk > -5 && kk <= 0) s = `0.${'0'.repeat(-kk)}${digits}`;
  else if (n === 1) s = `${digits}e${kk - 1}`;
  else s = `${digits[0]}.${digits.slice(1)}e${kk - 1}`;
  return negative ? `-${s}` : s;
}
function floatText(v, precision) {
  if (v === 0) return Object.is(v, -0) ? '-0.0' : '0.0';
  const [m, e] = (precision ? v.toExponential(precision - 1) : v.toExponential()).split('e');
  return ryuLayout(m.startsWith('-'), m.replace('-', '').replace('.', '').replace(/0+$/, '') || '0', Number(e));
}
// f32 fields: the shortest decimal that reads back as the same float32 (ryu's f32 printer).
function f32Text(v) {
  const f = Math.fround(v);
  for (let p = 1; p <= 9; p++) if (Math.fround(Number(f.toPrecision(p))) === f) return floatText(Number(f.toPrecision(p)));
  return floatText(f);
}
function jsonText(v) {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'boolean') return String(v);
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) return 'null'; // serde_json writes NaN/inf as null
    if (Number.isInteger(v) && !Object.is(v, -0) && Math.abs(v) < 2 ** 64) return BigInt(v).toString();
    return floatText(v);
  }
  if (v instanceof F32) return Number.isFinite(v.value) ? f32Text(v.value) : 'null';
  if (typeof v === 'string') return JSON.stringify(v); // same escapes as serde_json (", \, control chars)
  if (Array.isArray(v)) return `[${v.map(jsonText).join(',')}]`;
  if (v instanceof OrderedMap) return `{${v.entries.map(([k, x]) => `${JSON.stringify(k)}:${jsonText(x)}`).join(',')}}`;
  if (v instanceof Uint8Array) return jsonText(Array.from(v));
  throw new Error(`writer: cannot write ${typeof v} as JSON`);
}

// ------------------------------------------------------------------ SOURCE_DATE_EPOCH

/** created_at when the caller has none: SOURCE_DATE_EPOCH (decimal seconds) if set, else "0". */
export function defaultCreatedAt(env = globalThis.process?.env) {
  const s = env?.SOURCE_DATE_EPOCH;
  if (s === undefined || s === '') return '0';
  if (!/^\d+$/.test(s)) fail(`SOURCE_DATE_EPOCH must be a decimal number of seconds, got '${s}'`);
  return s;
}

// ------------------------------------------------------------------ v1

/** aprender's model type codes (v1 header bytes 6..8). */
export const MODEL_TYPES = {
  LinearRegression: 0x01, LogisticRegression: 0x02, DecisionTree: 0x03, RandomForest: 0x04, GradientBoosting: 0x05,
  KMeans: 0x06, Pca: 0x07, NaiveBayes: 0x08, Knn: 0x09, Svm: 0x0a, NgramLm: 0x10, Tfidf: 0x11, CountVectorizer: 0x12,
  NeuralSequential: 0x20, NeuralCustom: 0x21, ContentRecommender: 0x30, MixtureOfExperts: 0x40, Custom: 0xff,
};
export const V1_FLAGS = { ENCRYPTED: 0x01, SIGNED: 0x02, STREAMING: 0x04, LICENSED: 0x08, TRUENO_NATIVE: 0x10,
  QUANTIZED: 0x20, HAS_MODEL_CARD: 0x40 };
const MAX_UNCOMPRESSED = 2 ** 30;

/** The v1 metadata bytes: rmp-serde `to_vec_named` of aprender's `Metadata`. */
export function v1MetadataBytes(metadata = {}) {
  const m = { ...metadata, created_at: metadata.created_at ?? defaultCreatedAt() };
  return encodeMsgpack(struct(V1_METADATA_FIELDS, m));
}

/**
 * An APRN file. payload: the bincode bytes (see the *Payload builders); compression: 'none' | 'lz4'
 * | 'zstd' (level 3) | 'zstd-max' (level 19); LICENSED is set when metadata.license is present, as
 * aprender's save() does. Signing and encryption are separate steps on the plain file.
 */
export function writeAprV1({ modelType, metadata = {}, payload, compression = 'none', qualityScore = 0 }) {
  const type = typeof modelType === 'number' ? modelType : MODEL_TYPES[modelType];
  if (!Object.values(MODEL_TYPES).includes(type)) fail(`unknown aprender model type ${JSON.stringify(modelType)}`);
  if (!(payload instanceof Uint8Array)) fail('writeAprV1: payload must be a Uint8Array');
  if (payload.length > MAX_UNCOMPRESSED) fail(`payload of ${payload.length} bytes exceeds aprender's 1 GiB limit`);
  const comp = COMPRESSION[compression] ?? fail(`unknown compression '${compression}' (none, lz4, zstd, zstd-max)`);
  if (!Number.isInteger(qualityScore) || qualityScore < 0 || qualityScore > 100) fail(`quality score ${qualityScore} is not 0..100`);
  const meta = v1MetadataBytes(metadata);
  const stored = comp.encode(payload);
  const flags = metadata.license != null ? V1_FLAGS.LICENSED : 0;
  const header = new Uint8Array(32);
  const d = new DataView(header.buffer);
  header.set(utf8.encode('APRN'));
  header[4] = 1; header[5] = 0;
  d.setUint16(6, type, true);
  d.setUint32(8, meta.length, true);
  d.setUint32(12, stored.length, true);
  d.setUint32(16, payload.length, true);
  header[20] = comp.id; header[21] = flags; header[22] = qualityScore;
  const body = concat([header, meta, stored]);
  const out = new Uint8Array(body.length + 4);
  out.set(body);
  new DataView(out.buffer).setUint32(body.length, crc32(body), true);
  return out;
}

/** LinearRegression: Option<Vector<f32>> coefficients, f32 intercept, bool fit_intercept. */
export function linearRegressionPayload({ coefficients, intercept = 0, fitIntercept = true }) {
  const b = new Bincode();
  if (coefficients) b.u8(1).f32s(coefficients); else b.u8(0);
  return b.f32(intercept).bool(fitIntercept).bytes();
}

/**
 * LogisticRegression, current 8-field layout with aprender's defaults. classWeight: 'Uniform' |
 * 'Balanced' | { Manual: number[] }; fitMode: 'Batch' | 'Stochastic' | { MiniBatch: batchSize }.
 */
export function logisticRegressionPayload({ coefficients, intercept = 0, learningRate = 0.01, maxIter = 1000, tol = 1e-4,
  classWeight = 'Uniform', l2Penalty = 0, fitMode = 'Batch' }) {
  const b = new Bincode();
  if (coefficients) b.u8(1).f32s(coefficients); else b.u8(0);
  b.f32(intercept).f32(learningRate).u64(maxIter).f32(tol);
  if (classWeight === 'Uniform') b.u32(0);
  else if (classWeight === 'Balanced') b.u32(1);
  else if (Array.isArray(classWeight?.Manual)) b.u32(2).f32s(classWeight.Manual);
  else fail(`classWeight must be 'Uniform', 'Balanced' or { Manual: [...] }`);
  b.f32(l2Penalty);
  if (fitMode === 'Batch') b.u32(0);
  else if (fitMode === 'Stochastic') b.u32(1);
  else if (Number.isInteger(fitMode?.MiniBatch)) b.u32(2).u64(fitMode.MiniBatch);
  else fail(`fitMode must be 'Batch', 'Stochastic' or { MiniBatch: n }`);
  return b.bytes();
}

/** NeuralSequential as aprender's MNIST example saves it: w1 [in][hidden], b1, w2 [hidden][out], b2. */
export function mnistMlpPayload({ w1, b1, w2, b2 }) {
  return new Bincode().f32s(w1).f32s(b1).f32s(w2).f32s(b2).bytes();
}

// ------------------------------------------------------------------ v2

export const DTYPES = { F32: 0, F16: 1, F64: 3, I32: 4, I64: 5, I8: 6, U8: 7, BF16: 30, APR_Q4: 128, APR_Q8: 129, Q4_K: 12, Q6_K: 14 };
const DTYPE_NAMES = Object.fromEntries(Object.entries(DTYPES).map(([k, v]) => [v, k]));
const QUANTIZED_DTYPES = new Set([DTYPES.APR_Q4, DTYPES.APR_Q8, DTYPES.Q4_K, DTYPES.Q6_K]);
export const V2_FLAGS = { QUANTIZED: 0x0020, LAYOUT_ROW_MAJOR: 0x0400 };

// Exact byte size of n elements of a dtype.
function dtypeBytes(dtype, n) {
  switch (dtype) {
    case DTYPES.F32: case DTYPES.I32: return 4 * n;
    case DTYPES.F16: case DTYPES.BF16: return 2 * n;
    case DTYPES.F64: case DTYPES.I64: return 8 * n;
    case DTYPES.I8: case DTYPES.U8: return n;
    case DTYPES.APR_Q4: return Math.ceil(n / 32) * 18;
    case DTYPES.APR_Q8: return n === 0 ? 0 : 4 + n;
    case DTYPES.Q4_K: return Math.ceil(n / 256) * 144;
    case DTYPES.Q6_K: return Math.ceil(n / 256) * 210;
    default: return fail(`unknown dtype ${dtype}`);
  }
}

/** The v2 metadata JSON text: serde_json of aprender's `AprV2Metadata` (struct order, then custom keys). */
export function v2MetadataJson(metadata = {}) {
  return jsonText(struct(V2_METADATA_FIELDS, metadata));
}

function indexEntry(name, dtype, shape, offset, size) {
  const n = utf8.encode(name);
  const b = new Uint8Array(2 + n.length + 2 + 8 * shape.length + 16);
  const d = new DataView(b.buffer);
  d.setUint16(0, n.length, true);
  b.set(n, 2);
  let at = 2 + n.length;
  b[at++] = dtype; b[at++] = shape.length;
  for (const dim of shape) { d.setBigUint64(at, BigInt(dim), true); at += 8; }
  d.setBigUint64(at, BigInt(offset), true);
  d.setBigUint64(at + 8, BigInt(size), true);
  return b;
}

function checkTensor(t, seen) {
  const name = typeof t.name === 'string' && t.name ? t.name : fail('every tensor needs a non-empty name');
  if (utf8.encode(name).length > 256) fail(`tensor name '${name.slice(0, 40)}...' is longer than aprender's 256 bytes`);
  if (seen.has(name)) fail(`tensor '${name}' appears twice`);
  seen.add(name);
  const dtype = typeof t.dtype === 'string' ? DTYPES[t.dtype] : t.dtype;
  if (DTYPE_NAMES[dtype] === undefined) fail(`tensor '${name}': unknown dtype ${t.dtype}`);
  if (!Array.isArray(t.shape) || t.shape.length > 8 || !t.shape.every((x) => Number.isSafeInteger(x) && x >= 0)) {
    fail(`tensor '${name}': shape must be at most 8 non-negative integers`);
  }
  if (!(t.data instanceof Uint8Array)) fail(`tensor '${name}': data must be a Uint8Array`);
  const want = dtypeBytes(dtype, t.shape.reduce((a, b) => a * b, 1));
  if (t.data.length !== want) fail(`tensor '${name}': ${DTYPE_NAMES[dtype]} ${JSON.stringify(t.shape)} needs ${want} bytes, got ${t.data.length}`);
  return { name, dtype, shape: t.shape, data: t.data };
}

/**
 * An APR\0 file. tensors: [{ name, dtype (id or DTYPES name), shape, data: Uint8Array }] in any
 * order; the index is sorted by name (bytewise) and the data laid out in that order, each padded
 * to 64. Flags: LAYOUT_ROW_MAJOR, plus QUANTIZED when a tensor is quantized.
 */
export function writeAprV2({ metadata = {}, tensors }) {
  const seen = new Set();
  const list = tensors.map((t) => checkTensor(t, seen)).sort((a, b) => compareUtf8(a.name, b.name));
  const json = utf8.encode(v2MetadataJson(metadata));
  let offset = 0;
  const entries = list.map((t) => {
    const e = indexEntry(t.name, t.dtype, t.shape, offset, t.data.length);
    offset += align64(t.data.length);
    return e;
  });
  const index = concat(entries);
  const indexAt = 64 + align64(json.length), dataAt = indexAt + align64(index.length);
  const flags = V2_FLAGS.LAYOUT_ROW_MAJOR | (list.some((t) => QUANTIZED_DTYPES.has(t.dtype)) ? V2_FLAGS.QUANTIZED : 0);
  const header = new Uint8Array(64);
  const d = new DataView(header.buffer);
  header.set(utf8.encode('APR\0'));
  header[4] = 2; header[5] = 0;
  d.setUint16(6, flags, true);
  d.setUint32(8, list.length, true);
  d.setBigUint64(12, 64n, true);
  d.setUint32(20, json.length, true);
  d.setBigUint64(24, BigInt(indexAt), true);
  d.setBigUint64(32, BigInt(dataAt), true);
  d.setUint32(40, crc32(header.subarray(0, 40), header.subarray(44, 64)), true);
  const body = concat([header, padTo64(json), padTo64(index), ...list.map((t) => padTo64(t.data))]);
  const out = new Uint8Array(body.length + 4);
  out.set(body);
  new DataView(out.buffer).setUint32(body.length, crc32(body), true);
  return out;
}

// ------------------------------------------------------------------ f16 and quantizers

const f32buf = new Float32Array(1), u32buf = new Uint32Array(f32buf.buffer);

/** IEEE half bits of a float32, rounded to nearest even (as the `half` crate does). */
export function f32ToF16(x) {
  f32buf[0] = x;
  const bits = u32buf[0], sign = (bits >>> 16) & 0x8000, exp = (bits >>> 23) & 0xff;
  let man = bits & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (man ? 0x200 | (man >>> 13) : 0);
  const e = exp - 112; // rebased exponent for half (127 - 15)
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) { // half subnormal (or zero): m x 2^-24
    if (e < -10) return sign;
    man |= 0x800000;
    const shift = 14 - e, half = man >>> shift, rem = man & ((1 << shift) - 1), mid = 1 << (shift - 1);
    return sign | (half + (rem > mid || (rem === mid && (half & 1)) ? 1 : 0));
  }
  const h = (e << 10) | (man >>> 13), rem = man & 0x1fff;
  return sign | (h + (rem > 0x1000 || (rem === 0x1000 && (h & 1)) ? 1 : 0)); // a carry may reach infinity: correct
}

/** float value of IEEE half bits. */
export function f16ToF32(h) {
  const sign = h & 0x8000 ? -1 : 1, exp = (h >>> 10) & 0x1f, man = h & 0x3ff;
  if (exp === 0) return sign * man * 2 ** -24;
  if (exp === 0x1f) return man ? NaN : sign * Infinity;
  return sign * (1 + man / 1024) * 2 ** (exp - 15);
}

// Rust's f32::round: halves away from zero (Math.round rounds -2.5 to -2).
const roundHalfAway = (x) => (x < 0 ? -Math.floor(-x + 0.5) : Math.floor(x + 0.5));
const maxAbs = (values, from = 0, to = values.length) => {
  let m = 0;
  for (let i = from; i < to; i++) m = Math.max(m, Math.abs(values[i]));
  return Math.fround(m);
};

/** APR Q8 (dtype 129): f32 scale = max|x|/127 (1 when all zero), then round(x/scale) clamped to ±127. */
export function quantizeQ8(values) {
  if (values.length === 0) return new Uint8Array(0); // aprender writes no scale for an empty tensor
  const m = maxAbs(values), scale = m === 0 ? 1 : Math.fround(m / 127);
  const out = new Uint8Array(4 + values.length);
  new DataView(out.buffer).setFloat32(0, scale, true);
  for (let i = 0; i < values.length; i++) {
    const q = Math.min(127, Math.max(-127, roundHalfAway(Math.fround(Math.fround(values[i]) / scale))));
    out[4 + i] = q & 0xff;
  }
  return out;
}

/**
 * APR Q4 (dtype 128): per 32 elements of the flattened tensor, scale = max|x|/7 (1 when all zero)
 * stored as f16; q = clamp(round(x/scale), -8, 7) + 8 with the f32 scale (as aprender), byte i =
 * q[2i] | q[2i+1] << 4, the last block zero-padded.
 */
export function quantizeQ4(values) {
  const blocks = Math.ceil(values.length / 32), out = new Uint8Array(blocks * 18);
  const d = new DataView(out.buffer);
  for (let blk = 0; blk < blocks; blk++) {
    const from = blk * 32, to = Math.min(from + 32, values.length), at = blk * 18;
    const m = maxAbs(values, from, to), scale = m === 0 ? 1 : Math.fround(m / 7);
    d.setUint16(at, f32ToF16(scale), true);
    for (let i = from; i < to; i++) {
      const q = Math.min(7, Math.max(-8, roundHalfAway(Math.fround(Math.fround(values[i]) / scale))));
      const k = i - from;
      out[at + 2 + (k >> 1)] |= (q + 8) << (k & 1 ? 4 : 0);
    }
  }
  return out;
}

/** Q8 bytes back to n floats (x = q * scale). */
export function dequantizeQ8(bytes, n) {
  const d = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), scale = n ? d.getFloat32(0, true) : 0;
  return Float32Array.from({ length: n }, (_, i) => d.getInt8(4 + i) * scale);
}

/** Q4 bytes back to n floats (x = (nibble - 8) * f16 scale). */
export function dequantizeQ4(bytes, n) {
  const d = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return Float32Array.from({ length: n }, (_, i) => {
    const at = (i >> 5) * 18, k = i & 31, byte = bytes[at + 2 + (k >> 1)];
    return (((k & 1 ? byte >> 4 : byte) & 15) - 8) * f16ToF32(d.getUint16(at, true));
  });
}

const f32Bytes = (values) => new Uint8Array(Float32Array.from(values).buffer);

/** One tensor of f32 values stored as F32, APR_Q8 or APR_Q4. */
export function tensorOf(name, shape, values, quantize) {
  if (!quantize || quantize === 'f32') return { name, dtype: DTYPES.F32, shape, data: f32Bytes(values) };
  if (quantize === 'q8') return { name, dtype: DTYPES.APR_Q8, shape, data: quantizeQ8(values) };
  if (quantize === 'q4') return { name, dtype: DTYPES.APR_Q4, shape, data: quantizeQ4(values) };
  return fail(`unknown quantization '${quantize}' (q8, q4)`);
}

const QUANT_METADATA = {
  q8: { quant_type: 'int8', bits: 8, block_size: null, symmetric: true },
  q4: { quant_type: 'int4', bits: 4, block_size: 32, symmetric: true },
};

// ------------------------------------------------------------------ any loaded model -> .apr

// Keys the converter computes itself; a source's values for them are not carried over.
const V2_COMPUTED = new Set(['model_type', 'total_size', 'param_count', 'quantization', 'activations']);
const V1_KEYS = new Set(V1_METADATA_FIELDS.map(([k]) => k));
const V2_KEYS = new Set(V2_METADATA_FIELDS.map(([k]) => k));

/** Where a model's metadata came from: 'v1' (aprender Metadata), 'v2' (AprV2Metadata) or 'strings' (SafeTensors...). */
function metadataKind(info) {
  if (info.format !== 'apr') return 'strings';
  return info.apr?.magic === 'APRN' ? 'v1' : 'v2';
}

/** v1 Metadata from any source model's metadata. */
function toV1Metadata(info, opts) {
  const src = info.metadata ?? {};
  const kind = metadataKind(info);
  let m;
  if (kind === 'v1') m = { ...src };
  else {
    // name/description/created_at map to their v1 fields; everything else goes into `custom`
    const custom = {};
    for (const [k, v] of Object.entries(src)) {
      if (['name', 'description', 'created_at'].includes(k) || V2_COMPUTED.has(k) || v === null) continue;
      custom[k] = v;
    }
    m = { created_at: src.created_at, model_name: src.name, description: src.description, custom };
  }
  if (opts.name !== undefined) m.model_name = opts.name;
  if (opts.description !== undefined) m.description = opts.description;
  m.created_at = opts.createdAt ?? (typeof m.created_at === 'string' ? m.created_at : undefined) ?? defaultCreatedAt();
  return m;
}

/** v2 metadata (without the computed keys) from any source model's metadata. */
function toV2Metadata(info, opts) {
  const src = info.metadata ?? {};
  const kind = metadataKind(info);
  const m = {};
  const put = (k, v) => { m[V2_KEYS.has(k) || V2_COMPUTED.has(k) ? `source.${k}` : k] = v; };
  if (kind === 'v1') {
    // v1's model_name/description/created_at are v2 fields; v1 `custom` entries become v2 custom
    // keys; the other v1 fields keep their names (v1 `license` is a struct, v2's a string: renamed)
    const { model_name: name, description, created_at: createdAt, custom, ...rest } = src;
    Object.assign(m, { name, description, created_at: createdAt });
    for (const [k, v] of Object.entries(rest)) put(k, v);
    for (const [k, v] of Object.entries(custom ?? {})) if (!V1_KEYS.has(k)) put(k, v); else put(`custom.${k}`, v);
  } else {
    for (const [k, v] of Object.entries(src)) {
      if (V2_COMPUTED.has(k)) continue;
      const spec = V2_METADATA_FIELDS.find(([f]) => f === k);
      // a typed field keeps its name only when the value has that type (strings from SafeTensors
      // metadata such as "hidden_size": "512" would not read back in aprender)
      if (!spec) m[k] = v;
      else if (v === null || typeof v === 'string' ? spec[1] === 'str' : spec[1] !== 'str') m[k] = v;
      else put(k, v);
    }
  }
  if (opts.name !== undefined) m.name = opts.name;
  if (opts.description !== undefined) m.description = opts.description;
  m.created_at = opts.createdAt ?? (typeof m.created_at === 'string' ? m.created_at : undefined) ?? defaultCreatedAt();
  return m;
}

function regressionWeights(model) {
  const { weight, bias } = model.layerWeights(0);
  return { coefficients: weight, intercept: bias ? bias[0] : 0 };
}

// The MNIST-example payload holds exactly a 2-layer ReLU -> softmax MLP, weights input-major.
function mnistPayloadOf(model) {
  const acts = model.info.layers.map((l) => l.activation).join(',');
  if (model.info.layers.length !== 2 || acts !== 'relu,softmax') {
    fail(`.apr v1 can hold an MLP only as aprender's MNIST-example payload (2 layers, ReLU then softmax); `
      + `this model has ${model.info.layers.length} layer(s) (${acts}): write .apr v2 instead (--apr-version 2)`);
  }
  const [l1, l2] = [model.layerWeights(0), model.layerWeights(1)];
  const transpose = ({ weight, inputs, outputs }) => {
    const t = new Float32Array(weight.length);
    for (let o = 0; o < outputs; o++) for (let i = 0; i < inputs; i++) t[i * outputs + o] = weight[o * inputs + i];
    return t;
  };
  return mnistMlpPayload({ w1: transpose(l1), b1: l1.bias ?? new Float32Array(l1.outputs),
    w2: transpose(l2), b2: l2.bias ?? new Float32Array(l2.outputs) });
}

const V1_TYPE_OF_KIND = { linear_regression: 'LinearRegression', logistic_regression: 'LogisticRegression', mlp: 'NeuralSequential' };
const V2_TYPE_OF_KIND = { linear_regression: 'linear_regression', logistic_regression: 'logistic_regression', mlp: 'neural_sequential' };

/**
 * A .apr file holding a loaded model (rt.loadFromBytes(...)). options: version 1 | 2 (default 2);
 * v1: compression ('none' | 'lz4' | 'zstd' | 'zstd-max'), qualityScore; v2: quantize ('q8' | 'q4':
 * weights quantized, biases kept f32); name, description, createdAt override the source metadata.
 */
export function modelToApr(model, options = {}) {
  const { version = 2, quantize, compression = 'none' } = options;
  const { info } = model;
  if (!V1_TYPE_OF_KIND[info.kind]) fail(`cannot write a '${info.kind}' model`);
  if (version === 1) {
    if (quantize && quantize !== 'f32') fail('quantization (q8, q4) needs .apr v2: aprender v1 payloads are f32');
    let payload;
    if (info.kind === 'mlp') payload = mnistPayloadOf(model);
    else if (info.kind === 'linear_regression') payload = linearRegressionPayload(regressionWeights(model));
    else payload = logisticRegressionPayload(regressionWeights(model));
    const qualityScore = options.qualityScore ?? (metadataKind(info) === 'v1' ? info.apr.qualityScore ?? 0 : 0);
    return writeAprV1({ modelType: V1_TYPE_OF_KIND[info.kind], metadata: toV1Metadata(info, options), payload, compression, qualityScore });
  }
  if (version !== 2) fail(`.apr version must be 1 or 2, got ${version}`);
  if (compression && compression !== 'none') fail('compression is a .apr v1 option: aprender v2 files store tensors uncompressed');
  const tensors = [];
  const metadata = { model_type: V2_TYPE_OF_KIND[info.kind], ...toV2Metadata(info, options) };
  if (info.kind === 'mlp') {
    // aprender's nn::serialize numbering: "0", "1", ... in parameter order, weight [out, in] then bias
    let k = 0;
    info.layers.forEach((layer, i) => {
      const { weight, bias } = model.layerWeights(i);
      tensors.push(tensorOf(String(k++), [layer.outputs, layer.inputs], weight, quantize));
      if (bias) tensors.push(tensorOf(String(k++), [layer.outputs], bias, 'f32'));
    });
    metadata.activations = info.layers.map((l) => l.activation).join(',');
  } else {
    const { coefficients, intercept } = regressionWeights(model);
    tensors.push(tensorOf('weights', [coefficients.length], coefficients, quantize), tensorOf('bias', [1], [intercept], 'f32'));
  }
  metadata.total_size = tensors.reduce((n, t) => n + t.data.length, 0);
  metadata.param_count = tensors.reduce((n, t) => n + t.shape.reduce((a, b) => a * b, 1), 0);
  if (quantize && quantize !== 'f32') metadata.quantization = QUANT_METADATA[quantize];
  return writeAprV2({ metadata, tensors });
}
