// lemma-index.mjs — the lemma index: words and their precomputed embeddings, for the reverse
// dictionary (the "Words" tab of the demo, POST /search at the edge, tools/wordnet/index.mjs).
// One module for the writer, the strict reader and the search, shared by web/ and edge/.
//
// Format "MLRTLIDX" version 1, little-endian; every size is checked and the file must end
// exactly where the header says:
//
//   offset size  field
//    0      8    magic "MLRTLIDX"
//    8      4    u32 version = 1
//   12      4    u32 header bytes = 96 (the offset of the strings block)
//   16      4    u32 dtype: 1 = f32 rows, 2 = q8 rows (int8, one f32 scale per row)
//   20      4    u32 dim    (4 .. 4096, a multiple of 4)
//   24      4    u32 count  (1 .. 2^24 rows)
//   28      4    u32 strings bytes: the words in UTF-8, each followed by "\n"
//   32     32    SHA-256 of the model file the embeddings were computed with (model.safetensors)
//   64      4    u32 CRC-32 (zlib's) of every byte from offset 96 to the end of the file
//   68      4    u32 flags: bit 0 = rows are L2-normalized (the score is then the cosine); others 0
//   72     16    generator, ASCII, zero-padded (e.g. "mlrt 0.2.0": what computed the embeddings)
//   88      8    reserved, zero
//   96      S    the strings block, then zero padding to a multiple of 4
//    .           f32: count x dim f32, row after row
//                q8:  count f32 scales, then count x dim int8 (value = scale x q, q in -127..127)
//
// Q8 rows: scale = max|row| / 127 (f32), q = round half away from zero (x / scale).
// The score of row r for a query x is dot(row r, x) (for q8: scale_r x dot(q_r, x)); with
// normalized rows and a normalized query that is the cosine similarity.
//
// Scoring runs in JavaScript (a loop per dtype), or, after index.useRuntime(rt) on a q8 index, in
// mlrt itself: the int8 rows become one dense layer [count, dim] of an in-memory .apr v2 (APR Q8,
// tensor scale 1, identity activation) that mlrt's SIMD Q8 kernels run, each output then
// multiplied by its row's scale. mlrt's Q8 kernels quantize the query (to int16, or to 7 bits in
// the relaxed-SIMD build), so these scores differ from the JavaScript ones in the last digits.

import { crc32 } from '../wasm/crc32.mjs';

export const MAGIC = 'MLRTLIDX';
export const VERSION = 1;
export const HEADER_BYTES = 96;
export const DTYPES = Object.freeze({ f32: 1, q8: 2 });
export const MAX_DIM = 4096;
export const MAX_COUNT = 1 << 24;
const FLAG_NORMALIZED = 1;
const DTYPE_NAMES = { 1: 'f32', 2: 'q8' };

/** A refusal of an index file or of a search's arguments; `code` is stable. */
export class IndexError extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'IndexError';
    this.code = code;
  }
}

const bad = (message) => new IndexError('BAD_INDEX', `lemma index: ${message}`);
const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
const align4 = (n) => (n + 3) & ~3;

/** The bytes of a row of f32 values quantized to q8: { scale, q: Int8Array }. */
export function quantizeRow(row) {
  let max = 0;
  for (let j = 0; j < row.length; j++) max = Math.max(max, Math.abs(row[j]));
  const scale = max === 0 ? 1 : Math.fround(max / 127);
  const q = new Int8Array(row.length);
  for (let j = 0; j < row.length; j++) {
    const x = Math.fround(row[j] / scale);
    const r = Math.sign(x) * Math.floor(Math.abs(x) + 0.5);
    q[j] = Math.max(-127, Math.min(127, r));
  }
  return { scale, q };
}

/**
 * Writes an index. words: string[] (no "\n", not empty); embeddings: Float32Array of
 * words.length x dim; modelSha256: 64 hex digits. Returns a Uint8Array.
 * @param {{ words: string[], embeddings: Float32Array, dim: number, dtype?: 'f32'|'q8',
 *           modelSha256: string, generator?: string, normalized?: boolean }} o
 */
export function writeIndex({ words, embeddings, dim, dtype = 'q8', modelSha256, generator = '', normalized = true }) {
  const count = words.length;
  if (!DTYPES[dtype]) throw new IndexError('INVALID_ARGUMENT', `writeIndex: dtype must be 'f32' or 'q8', got ${dtype}`);
  if (!Number.isInteger(dim) || dim < 4 || dim > MAX_DIM || dim % 4) throw new IndexError('INVALID_ARGUMENT', `writeIndex: dim ${dim} is not a multiple of 4 in 4..${MAX_DIM}`);
  if (count < 1 || count > MAX_COUNT) throw new IndexError('INVALID_ARGUMENT', `writeIndex: ${count} words, expected 1..${MAX_COUNT}`);
  if (!(embeddings instanceof Float32Array) || embeddings.length !== count * dim) {
    throw new IndexError('INVALID_ARGUMENT', `writeIndex: embeddings must be a Float32Array of ${count} x ${dim}`);
  }
  if (!/^[0-9a-f]{64}$/.test(modelSha256)) throw new IndexError('INVALID_ARGUMENT', 'writeIndex: modelSha256 must be 64 lower-case hex digits');
  if (!/^[\x20-\x7e]{0,16}$/.test(generator)) throw new IndexError('INVALID_ARGUMENT', 'writeIndex: generator must be at most 16 printable ASCII characters');
  words.forEach((w, i) => {
    if (typeof w !== 'string' || w === '' || w.includes('\n')) throw new IndexError('INVALID_ARGUMENT', `writeIndex: words[${i}] must be a non-empty string without "\\n"`);
  });
  for (let i = 0; i < embeddings.length; i++) {
    if (!Number.isFinite(embeddings[i])) throw new IndexError('INVALID_ARGUMENT', `writeIndex: embedding [${Math.floor(i / dim)}][${i % dim}] is ${embeddings[i]}`);
  }
  const strings = new TextEncoder().encode(`${words.join('\n')}\n`);
  const rowsAt = align4(HEADER_BYTES + strings.length);
  const rowBytes = dtype === 'f32' ? count * dim * 4 : count * 4 + count * dim;
  const out = new Uint8Array(rowsAt + rowBytes);
  const dv = new DataView(out.buffer);
  out.set(new TextEncoder().encode(MAGIC), 0);
  dv.setUint32(8, VERSION, true);
  dv.setUint32(12, HEADER_BYTES, true);
  dv.setUint32(16, DTYPES[dtype], true);
  dv.setUint32(20, dim, true);
  dv.setUint32(24, count, true);
  dv.setUint32(28, strings.length, true);
  for (let i = 0; i < 32; i++) out[32 + i] = parseInt(modelSha256.slice(2 * i, 2 * i + 2), 16);
  dv.setUint32(68, normalized ? FLAG_NORMALIZED : 0, true);
  for (let i = 0; i < generator.length; i++) out[72 + i] = generator.charCodeAt(i);
  out.set(strings, HEADER_BYTES);
  if (dtype === 'f32') {
    for (let i = 0; i < embeddings.length; i++) dv.setFloat32(rowsAt + 4 * i, embeddings[i], true);
  } else {
    const qAt = rowsAt + 4 * count;
    for (let r = 0; r < count; r++) {
      const { scale, q } = quantizeRow(embeddings.subarray(r * dim, (r + 1) * dim));
      dv.setFloat32(rowsAt + 4 * r, scale, true);
      out.set(new Uint8Array(q.buffer), qAt + r * dim);
    }
  }
  dv.setUint32(64, crc32(out.subarray(HEADER_BYTES)), true);
  return out;
}

/**
 * Reads and checks an index (Uint8Array | ArrayBuffer). Throws IndexError 'BAD_INDEX' naming the
 * field and byte offset of the first problem. The returned LemmaIndex views the bytes (copies
 * them only when they are not 4-byte aligned).
 */
export function readIndex(input) {
  let bytes = input instanceof ArrayBuffer ? new Uint8Array(input) : input;
  if (!(bytes instanceof Uint8Array)) throw new IndexError('INVALID_ARGUMENT', 'readIndex: expected a Uint8Array or an ArrayBuffer');
  if (bytes.byteOffset % 4) bytes = bytes.slice();
  if (bytes.length < HEADER_BYTES) throw bad(`the file is ${bytes.length} bytes, shorter than its ${HEADER_BYTES}-byte header`);
  const magic = String.fromCharCode(...bytes.subarray(0, 8));
  if (magic !== MAGIC) throw bad(`bad magic at offset 0: ${JSON.stringify(magic)}, expected "${MAGIC}" (not a lemma index)`);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const u32 = (at) => dv.getUint32(at, true);
  const version = u32(8);
  if (version !== VERSION) throw bad(`version ${version} at offset 8 is not supported (this reader knows version ${VERSION})`);
  if (u32(12) !== HEADER_BYTES) throw bad(`header bytes ${u32(12)} at offset 12, expected ${HEADER_BYTES}`);
  const dtype = DTYPE_NAMES[u32(16)];
  if (!dtype) throw bad(`dtype ${u32(16)} at offset 16 is not 1 (f32) or 2 (q8)`);
  const dim = u32(20), count = u32(24), stringBytes = u32(28);
  if (dim < 4 || dim > MAX_DIM || dim % 4) throw bad(`dim ${dim} at offset 20 is not a multiple of 4 in 4..${MAX_DIM}`);
  if (count < 1 || count > MAX_COUNT) throw bad(`count ${count} at offset 24 is not in 1..${MAX_COUNT}`);
  const flags = u32(68);
  if (flags & ~FLAG_NORMALIZED) throw bad(`flags 0x${flags.toString(16)} at offset 68 has unknown bits`);
  for (let i = 88; i < 96; i++) if (bytes[i]) throw bad(`reserved byte at offset ${i} is not zero`);
  const gen = bytes.subarray(72, 88);
  const genEnd = gen.indexOf(0) < 0 ? 16 : gen.indexOf(0);
  for (let i = 0; i < 16; i++) {
    if (i < genEnd ? gen[i] < 0x20 || gen[i] > 0x7e : gen[i] !== 0) throw bad(`generator byte at offset ${72 + i} is not printable ASCII then zeros`);
  }
  const rowsAt = align4(HEADER_BYTES + stringBytes);
  const rowBytes = dtype === 'f32' ? count * dim * 4 : count * 4 + count * dim;
  const expected = rowsAt + rowBytes;
  if (bytes.length !== expected) {
    throw bad(`the file is ${bytes.length} bytes; its header (${count} ${dtype} rows of ${dim}, ${stringBytes} bytes of words) says ${expected}`);
  }
  const crc = crc32(bytes.subarray(HEADER_BYTES));
  if (crc !== u32(64)) throw bad(`CRC-32 of bytes ${HEADER_BYTES}..${bytes.length} is ${crc.toString(16).padStart(8, '0')}, the header (offset 64) says ${u32(64).toString(16).padStart(8, '0')}: the file is corrupt`);
  for (let i = HEADER_BYTES + stringBytes; i < rowsAt; i++) if (bytes[i]) throw bad(`padding byte at offset ${i} is not zero`);

  // The words: count lines, valid UTF-8, none empty.
  const strings = bytes.subarray(HEADER_BYTES, HEADER_BYTES + stringBytes);
  const ends = new Uint32Array(count + 1);
  let n = 0;
  for (let i = 0; i < strings.length; i++) {
    if (strings[i] !== 0x0a) continue;
    if (n === count) throw bad(`more than ${count} words in the strings block (at offset ${HEADER_BYTES + i})`);
    if (i === ends[n]) throw bad(`word ${n} is empty (offset ${HEADER_BYTES + i})`);
    ends[++n] = i + 1;
  }
  if (n !== count || ends[n] !== strings.length) throw bad(`the strings block holds ${n} complete words, the header says ${count}`);
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(strings);
  } catch {
    throw bad(`the strings block (offset ${HEADER_BYTES}, ${stringBytes} bytes) is not valid UTF-8`);
  }

  let rows, scales = null;
  const abs = bytes.byteOffset + rowsAt;
  if (dtype === 'f32') {
    rows = new Float32Array(bytes.buffer, abs, count * dim);
    for (let i = 0; i < rows.length; i++) if (!Number.isFinite(rows[i])) throw bad(`row ${Math.floor(i / dim)} value ${i % dim} is ${rows[i]} (offset ${rowsAt + 4 * i})`);
  } else {
    scales = new Float32Array(bytes.buffer, abs, count);
    for (let r = 0; r < count; r++) if (!(Number.isFinite(scales[r]) && scales[r] > 0)) throw bad(`row ${r}'s scale is ${scales[r]} (offset ${rowsAt + 4 * r}); scales must be finite and positive`);
    rows = new Int8Array(bytes.buffer, abs + 4 * count, count * dim);
    for (let i = 0; i < rows.length; i++) if (rows[i] === -128) throw bad(`row ${Math.floor(i / dim)} value ${i % dim} is -128 (offset ${rowsAt + 4 * count + i}); q8 values are -127..127`);
  }
  return new LemmaIndex({
    dtype, dim, count, normalized: Boolean(flags & FLAG_NORMALIZED),
    modelSha256: hex(bytes.subarray(32, 64)),
    generator: String.fromCharCode(...gen.subarray(0, genEnd)),
    bytes: bytes.length, strings, ends, rows, scales,
  });
}

/** A checked index in memory: its facts, its words and the search. */
export class LemmaIndex {
  #strings;
  #ends;
  #rows;
  #scales;
  #scores;
  #model = null; // the rows as an mlrt dense model (useRuntime)
  #decoder = new TextDecoder();

  constructor({ dtype, dim, count, normalized, modelSha256, generator, bytes, strings, ends, rows, scales }) {
    Object.assign(this, { dtype, dim, count, normalized, modelSha256, generator, bytes });
    this.#strings = strings;
    this.#ends = ends;
    this.#rows = rows;
    this.#scales = scales;
    Object.freeze(this);
  }

  /** The word of row i. */
  word(i) {
    if (!Number.isInteger(i) || i < 0 || i >= this.count) throw new IndexError('INVALID_ARGUMENT', `word: ${i} is not a row of 0..${this.count - 1}`);
    return this.#decoder.decode(this.#strings.subarray(this.#ends[i], this.#ends[i + 1] - 1));
  }

  /** Every word, in row order. */
  words() {
    return this.#decoder.decode(this.#strings).split('\n').slice(0, this.count);
  }

  /** The row's values as f32 (dequantized for q8). */
  row(i) {
    if (!Number.isInteger(i) || i < 0 || i >= this.count) throw new IndexError('INVALID_ARGUMENT', `row: ${i} is not a row of 0..${this.count - 1}`);
    const d = this.dim, out = new Float32Array(d), s = this.#scales ? this.#scales[i] : 1;
    for (let j = 0; j < d; j++) out[j] = this.#rows[i * d + j] * s;
    return out;
  }

  /**
   * Scores with mlrt's Q8 kernels from now on (a q8 index): rt is an mlrt runtime (createRuntime).
   * Costs one copy of the rows in rt's memory and a few hundred ms; returns this index.
   */
  useRuntime(rt) {
    if (!this.#scales) throw new IndexError('INVALID_ARGUMENT', 'useRuntime: only a q8 index scores with mlrt');
    const model = rt.loadFromBytes(aprDenseQ8(new Uint8Array(this.#rows.buffer, this.#rows.byteOffset, this.#rows.length), this.count, this.dim));
    if (model.info.inputSize !== this.dim || model.info.outputSize !== this.count) throw new IndexError('INTERNAL', 'useRuntime: mlrt read the rows with another shape');
    this.#model?.dispose();
    this.#model = model;
    return this;
  }

  /** 'mlrt' after useRuntime, else 'js'. */
  get engine() {
    return this.#model ? 'mlrt' : 'js';
  }

  /** Scores of every row for query x (Float32Array of dim), into a reused Float32Array of count. */
  scores(x) {
    const d = this.dim;
    if (!(x instanceof Float32Array) || x.length !== d) throw new IndexError('INVALID_ARGUMENT', `search: the query must be a Float32Array of ${d}, got ${x?.constructor?.name} of ${x?.length}`);
    for (let j = 0; j < d; j++) if (!Number.isFinite(x[j])) throw new IndexError('INVALID_ARGUMENT', `search: query value ${j} is ${x[j]}`);
    const out = (this.#scores ??= new Float32Array(this.count));
    if (this.#model) {
      const y = this.#model.predict(x), s = this.#scales;
      for (let r = 0; r < out.length; r++) out[r] = s[r] * y[r];
    } else if (this.#scales) scoreQ8(this.#rows, this.#scales, x, d, out);
    else scoreF32(this.#rows, x, d, out);
    return out;
  }

  /**
   * The k best rows for query x: [{ index, word, score }], best first; ties go to the lower row.
   */
  search(x, k = 10) {
    if (!Number.isInteger(k) || k < 1) throw new IndexError('INVALID_ARGUMENT', `search: k must be a positive integer, got ${k}`);
    return topK(this.scores(x), Math.min(k, this.count)).map((index) => ({ index, word: this.word(index), score: this.#scoresAt(index) }));
  }

  #scoresAt(i) {
    return this.#scores[i];
  }
}

// The int8 rows as an .apr v2 (spec: shared/specs/apr.md) of one APR Q8 tensor "0" [count, dim]
// (an f32 scale of 1, then the int8 values) with metadata {"model_type": "mlp", "activations":
// "identity"}: for mlrt, a one-layer network of dim inputs and count outputs, no bias.
function aprDenseQ8(q, count, dim) {
  const enc = new TextEncoder(), pad64 = (n) => (n + 63) & ~63;
  const meta = enc.encode(JSON.stringify({ model_type: 'mlp', name: 'lemma-index', activations: 'identity' }));
  const entry = new Uint8Array(2 + 1 + 2 + 16 + 16), ev = new DataView(entry.buffer);
  ev.setUint16(0, 1, true);
  entry[2] = 0x30; // the name "0"
  entry[3] = 129; // APR Q8
  entry[4] = 2; // rank
  ev.setBigUint64(5, BigInt(count), true);
  ev.setBigUint64(13, BigInt(dim), true);
  ev.setBigUint64(21, 0n, true); // offset in the data section
  ev.setBigUint64(29, BigInt(4 + q.length), true);
  const indexAt = 64 + pad64(meta.length), dataAt = indexAt + pad64(entry.length);
  const body = dataAt + pad64(4 + q.length);
  const out = new Uint8Array(body + 4), dv = new DataView(out.buffer);
  out.set(enc.encode('APR\0'), 0);
  out[4] = 2;
  dv.setUint16(6, 0x0400 | 0x0020, true); // row-major layout, quantized
  dv.setUint32(8, 1, true);
  dv.setBigUint64(12, 64n, true);
  dv.setUint32(20, meta.length, true);
  dv.setBigUint64(24, BigInt(indexAt), true);
  dv.setBigUint64(32, BigInt(dataAt), true);
  dv.setUint32(40, crc32(out.subarray(0, 40), out.subarray(44, 64)), true);
  out.set(meta, 64);
  out.set(entry, indexAt);
  dv.setFloat32(dataAt, 1, true);
  out.set(q, dataAt + 4);
  dv.setUint32(body, crc32(out.subarray(0, body)), true);
  return out;
}

// The hot loops, one per dtype so that each stays monomorphic: count x dim multiply-adds
// (19M for WordNet), four accumulators.
function scoreF32(rows, x, d, out) {
  for (let r = 0, at = 0; r < out.length; r++, at += d) {
    let a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    for (let j = 0; j < d; j += 4) {
      a0 += rows[at + j] * x[j];
      a1 += rows[at + j + 1] * x[j + 1];
      a2 += rows[at + j + 2] * x[j + 2];
      a3 += rows[at + j + 3] * x[j + 3];
    }
    out[r] = (a0 + a1) + (a2 + a3);
  }
}

function scoreQ8(rows, scales, x, d, out) {
  for (let r = 0, at = 0; r < out.length; r++, at += d) {
    let a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    for (let j = 0; j < d; j += 4) {
      a0 += rows[at + j] * x[j];
      a1 += rows[at + j + 1] * x[j + 1];
      a2 += rows[at + j + 2] * x[j + 2];
      a3 += rows[at + j + 3] * x[j + 3];
    }
    out[r] = scales[r] * ((a0 + a1) + (a2 + a3));
  }
}

/** The indices of the k largest values, largest first; ties to the lower index. */
export function topK(values, k) {
  const idx = new Int32Array(k).fill(-1), val = new Float64Array(k).fill(-Infinity);
  let filled = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (filled === k && !(v > val[k - 1])) continue;
    let p = filled < k ? filled++ : k - 1;
    while (p > 0 && v > val[p - 1]) {
      val[p] = val[p - 1];
      idx[p] = idx[p - 1];
      p--;
    }
    val[p] = v;
    idx[p] = i;
  }
  return Array.from(idx.subarray(0, filled));
}
