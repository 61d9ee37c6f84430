// Shared by the Node tests: paths, file builders, and an independent float64 reference.
import { readFileSync, existsSync } from 'node:fs';

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
