// weights.mjs — deterministic BERT weights from a seed, bit for bit the same as tests/gen/encoder.py's.
//
// Every float tensor is drawn from its own stream: key = fnv1a64(canonical name) XOR splitmix64(seed)
// (the name without a `bert.` prefix, so both namings hold the same values); the stream's c-th 64-bit
// word is splitmix64's c-th output from state `key` (mix(key + (c+1)·γ)). Element i of the tensor
// (row-major) uses the pair k = i >> 1: u1 = ((w[2k] >> 11) + 1)·2^-53 in (0, 1],
// u2 = (w[2k+1] >> 11)·2^-53 in [0, 1); Box–Muller R = sqrt(−2·ln u1), z = R·cos(2πu2) for even i and
// R·sin(2πu2) for odd i; value = f32(mean + std·z). ln, cos and sin are our own float64 polynomials
// built only from +, −, ×, ÷, floor and frexp (exact or correctly rounded everywhere), so JS and numpy
// give the same bits (libm's and V8's ln/cos/sin may differ in the last bit).
// BERT's init: matrices and embeddings normal(0, 0.02) with the [PAD] row of the word embeddings zero;
// LayerNorm weights 1 + normal(0, 0.05); every bias (LayerNorm's too) normal(0, 0.02), so biases matter.
// 16-bit variants round each f32 value to F16 / BF16 (round to nearest even), as torch's .half() /
// .bfloat16() of the f32 tensor.

// ------------------------------------------------------------------ shapes

/** The shapes of issue 21 §4. vocab 30,522 = bert-base-uncased's WordPiece vocabulary. */
export const SHAPES = {
  tiny: { hidden: 32, layers: 2, heads: 4, ffn: 64, vocab: 30522, positions: 64, types: 2 },
  'minilm-l6': { hidden: 384, layers: 6, heads: 12, ffn: 1536, vocab: 30522, positions: 512, types: 2 },
  'small-l12': { hidden: 384, layers: 12, heads: 12, ffn: 1536, vocab: 30522, positions: 512, types: 2 },
};

export function shapeOf(shape) {
  const s = typeof shape === 'string' ? SHAPES[shape] : shape;
  if (!s) throw new Error(`encoder weights: unknown shape ${JSON.stringify(shape)} (${Object.keys(SHAPES).join(', ')})`);
  return s;
}

/**
 * The tensors of a BertModel checkpoint, canonical order: [{ name, dims, init }] with init one of
 * 'normal' | 'ln_weight' | 'bias' | 'arange' (the int64 embeddings.position_ids buffer).
 * extras: the unused tensors real repositories carry (pooler.*, embeddings.position_ids).
 * heads: a task checkpoint's cls.predictions.* (written with the `bert.` naming).
 */
export function tensorSpecs(shape, { extras = true, heads = false } = {}) {
  const { hidden: H, layers: L, ffn: I, vocab: V, positions: P, types: T } = shapeOf(shape);
  const out = [];
  const t = (name, dims, init) => out.push({ name, dims, init });
  t('embeddings.word_embeddings.weight', [V, H], 'normal');
  t('embeddings.position_embeddings.weight', [P, H], 'normal');
  t('embeddings.token_type_embeddings.weight', [T, H], 'normal');
  t('embeddings.LayerNorm.weight', [H], 'ln_weight');
  t('embeddings.LayerNorm.bias', [H], 'bias');
  for (let i = 0; i < L; i++) {
    const p = `encoder.layer.${i}.`;
    for (const m of ['query', 'key', 'value']) {
      t(`${p}attention.self.${m}.weight`, [H, H], 'normal');
      t(`${p}attention.self.${m}.bias`, [H], 'bias');
    }
    t(`${p}attention.output.dense.weight`, [H, H], 'normal');
    t(`${p}attention.output.dense.bias`, [H], 'bias');
    t(`${p}attention.output.LayerNorm.weight`, [H], 'ln_weight');
    t(`${p}attention.output.LayerNorm.bias`, [H], 'bias');
    t(`${p}intermediate.dense.weight`, [I, H], 'normal');
    t(`${p}intermediate.dense.bias`, [I], 'bias');
    t(`${p}output.dense.weight`, [H, I], 'normal');
    t(`${p}output.dense.bias`, [H], 'bias');
    t(`${p}output.LayerNorm.weight`, [H], 'ln_weight');
    t(`${p}output.LayerNorm.bias`, [H], 'bias');
  }
  if (extras) {
    t('pooler.dense.weight', [H, H], 'normal');
    t('pooler.dense.bias', [H], 'bias');
    t('embeddings.position_ids', [1, P], 'arange');
  }
  if (heads) {
    t('cls.predictions.bias', [V], 'bias');
    t('cls.predictions.transform.dense.weight', [H, H], 'normal');
    t('cls.predictions.transform.dense.bias', [H], 'bias');
    t('cls.predictions.transform.LayerNorm.weight', [H], 'ln_weight');
    t('cls.predictions.transform.LayerNorm.bias', [H], 'bias');
  }
  return out;
}

const INIT = { normal: [0, 0.02], ln_weight: [1, 0.05], bias: [0, 0.02] };

// ------------------------------------------------------------------ splitmix64 on 32-bit halves

const GAMMA_HI = 0x9e3779b9, GAMMA_LO = 0x7f4a7c15;
const M1_HI = 0xbf58476d, M1_LO = 0x1ce4e5b9;
const M2_HI = 0x94d049bb, M2_LO = 0x133111eb;

/** high 32 bits of the unsigned 64-bit product a·b (a, b uint32). */
function mulhi32(a, b) {
  const a0 = a & 0xffff, a1 = a >>> 16, b0 = b & 0xffff, b1 = b >>> 16;
  const p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  const mid = (p00 >>> 16) + (p01 & 0xffff) + (p10 & 0xffff);
  return (p11 + (p01 >>> 16) + (p10 >>> 16) + (mid >>> 16)) >>> 0;
}

const R = new Uint32Array(2); // [hi, lo] result of mix (a typed array: no boxed numbers in the hot loop)

/** splitmix64's output function of the 64-bit state (hi, lo) into R. */
function mix(hi, lo) {
  // z ^= z >> 30; z *= M1
  let l = (lo ^ ((lo >>> 30) | (hi << 2))) >>> 0, h = (hi ^ (hi >>> 30)) >>> 0;
  let ph = (mulhi32(l, M1_LO) + Math.imul(h, M1_LO) + Math.imul(l, M1_HI)) >>> 0, pl = Math.imul(l, M1_LO) >>> 0;
  // z ^= z >> 27; z *= M2
  l = (pl ^ ((pl >>> 27) | (ph << 5))) >>> 0; h = (ph ^ (ph >>> 27)) >>> 0;
  ph = (mulhi32(l, M2_LO) + Math.imul(h, M2_LO) + Math.imul(l, M2_HI)) >>> 0; pl = Math.imul(l, M2_LO) >>> 0;
  // z ^= z >> 31
  R[1] = pl ^ ((pl >>> 31) | (ph << 1));
  R[0] = ph ^ (ph >>> 31);
}

const M64 = (1n << 64n) - 1n;
export function fnv1a64(s) {
  let h = 0xcbf29ce484222325n;
  for (const b of new TextEncoder().encode(s)) h = ((h ^ BigInt(b)) * 0x100000001b3n) & M64;
  return h;
}
function mixBig(x) {
  const v = BigInt.asUintN(64, x);
  mix(Number(v >> 32n), Number(v & 0xffffffffn));
  return (BigInt(R[0]) << 32n) | BigInt(R[1]);
}
/** The stream key of a tensor: fnv1a64(name) XOR (splitmix64's first output from state seed). */
export function streamKey(name, seed) {
  return fnv1a64(name.replace(/^bert\./, '')) ^ mixBig(BigInt(seed) + 0x9e3779b97f4a7c15n);
}

/** The first n 64-bit words of the stream (BigInt), for tests of the generator itself. */
export function streamWords(key, n) {
  let hi = Number(key >> 32n), lo = Number(key & 0xffffffffn);
  const out = [];
  for (let c = 0; c < n; c++) {
    lo = (lo + GAMMA_LO) >>> 0; hi = (hi + GAMMA_HI + (lo < GAMMA_LO ? 1 : 0)) >>> 0;
    mix(hi, lo);
    out.push((BigInt(R[0]) << 32n) | BigInt(R[1]));
  }
  return out;
}

// ------------------------------------------------------------------ our own ln, sin, cos (float64)

const LN2 = 0.6931471805599453, SQRT_HALF = 0.7071067811865476, HALF_PI = 1.5707963267948966;
const LOG_C = Array.from({ length: 13 }, (_, k) => 1 / (2 * k + 1)); // atanh series: 1/(2k+1)
const SIN_C = [1], COS_C = [1];
for (let k = 1; k <= 10; k++) {
  SIN_C.push(-SIN_C[k - 1] / ((2 * k) * (2 * k + 1)));
  COS_C.push(-COS_C[k - 1] / ((2 * k - 1) * (2 * k)));
}
const f64 = new Float64Array(1), u32 = new Uint32Array(f64.buffer);

/** ln x for x in (0, 1] (normal doubles): x = m·2^e, m in [√½, √2), ln m = 2·atanh((m−1)/(m+1)). */
export function lnUnit(x) {
  f64[0] = x;
  let e = ((u32[1] >>> 20) & 0x7ff) - 1022; // frexp: x = m·2^e, m in [0.5, 1)
  u32[1] = (u32[1] & 0x800fffff) | (1022 << 20);
  let m = f64[0];
  if (m < SQRT_HALF) { m = 2 * m; e -= 1; }
  const f = m - 1, s = f / (2 + f), z = s * s;
  let p = LOG_C[12];
  for (let k = 11; k >= 0; k--) p = p * z + LOG_C[k];
  return e * LN2 + 2 * s * p;
}

/** [cos 2πu, sin 2πu] for u in [0, 1): quadrant q = floor(4u + ½), a = (4u − q)·π/2, |a| ≤ π/4,
 * Taylor series of sin a and cos a to a^21 / a^20. (normals() has the same arithmetic written out.) */
export function cosSin2pi(u) {
  const t = 4 * u, q = Math.floor(t + 0.5), a = (t - q) * HALF_PI, z = a * a;
  let s = SIN_C[10], c = COS_C[10];
  for (let k = 9; k >= 0; k--) { s = s * z + SIN_C[k]; c = c * z + COS_C[k]; }
  s = a * s;
  return [[c, s], [-s, c], [-c, -s], [s, -c]][q & 3];
}

const TWO_M53 = 2 ** -53, TWO_32 = 2 ** 32;
const [L0, L1, L2, L3, L4, L5, L6, L7, L8, L9, L10, L11, L12] = LOG_C;
const [S0, S1, S2, S3, S4, S5, S6, S7, S8, S9, S10] = SIN_C;
const [C0, C1, C2, C3, C4, C5, C6, C7, C8, C9, C10] = COS_C;
const POW2 = Float64Array.from({ length: 64 }, (_, b) => 2 ** -b);

/** n values f32(mean + std·z_i) of the stream `key` (a BigInt), as a Float32Array.
 * The same arithmetic as lnUnit and cosSin2pi, written out (hot loop: ~22M elements per 6-layer model). */
export function normals(key, n, mean, std) {
  const out = new Float32Array(n);
  let hi = Number(key >> 32n), lo = Number(key & 0xffffffffn);
  for (let i = 0; i < n; i += 2) {
    lo = (lo + GAMMA_LO) >>> 0; hi = (hi + GAMMA_HI + (lo < GAMMA_LO ? 1 : 0)) >>> 0;
    mix(hi, lo);
    const K = R[0] * 2097152 + (R[1] >>> 11) + 1; // u1 = K·2^-53, K in [1, 2^53]
    lo = (lo + GAMMA_LO) >>> 0; hi = (hi + GAMMA_HI + (lo < GAMMA_LO ? 1 : 0)) >>> 0;
    mix(hi, lo);
    const u2 = (R[0] * 2097152 + (R[1] >>> 11)) * TWO_M53;
    // ln u1: frexp by the bit length of K (exact), then the atanh series
    const kh = Math.floor(K / TWO_32);
    const bits = kh ? 64 - Math.clz32(kh) : 32 - Math.clz32(K); // K in [2^(bits-1), 2^bits)
    let m = K * POW2[bits], e = bits - 53;
    if (m < SQRT_HALF) { m = 2 * m; e -= 1; }
    const f = m - 1, s = f / (2 + f), z = s * s;
    const p = ((((((((((((L12 * z + L11) * z + L10) * z + L9) * z + L8) * z + L7) * z + L6) * z + L5) * z + L4) * z + L3) * z + L2) * z + L1) * z + L0);
    const r = Math.sqrt(-2 * (e * LN2 + 2 * s * p));
    // cos, sin of 2π·u2
    const t = 4 * u2, q = Math.floor(t + 0.5), a = (t - q) * HALF_PI, y = a * a;
    const sn = a * ((((((((((S10 * y + S9) * y + S8) * y + S7) * y + S6) * y + S5) * y + S4) * y + S3) * y + S2) * y + S1) * y + S0);
    const cs = (((((((((C10 * y + C9) * y + C8) * y + C7) * y + C6) * y + C5) * y + C4) * y + C3) * y + C2) * y + C1) * y + C0;
    const qq = q & 3;
    const cv = qq === 0 ? cs : qq === 1 ? -sn : qq === 2 ? -cs : sn;
    const sv = qq === 0 ? sn : qq === 1 ? cs : qq === 2 ? -sn : -cs;
    out[i] = mean + std * (r * cv);
    if (i + 1 < n) out[i + 1] = mean + std * (r * sv);
  }
  return out;
}

// ------------------------------------------------------------------ 16-bit rounding

const cvt = new DataView(new ArrayBuffer(4));

/** f32 -> IEEE binary16 bits, round to nearest even (subnormals, overflow to inf, NaN kept). */
export function f16Bits(v) {
  cvt.setFloat32(0, v, true);
  const x = cvt.getUint32(0, true);
  const sign = (x >>> 16) & 0x8000, exp = (x >>> 23) & 0xff, mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  const e = exp - 112; // binary16 biased exponent
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    const full = mant | 0x800000, shift = 14 - e, half = 1 << (shift - 1);
    let r = full >>> shift;
    const rem = full & ((1 << shift) - 1);
    if (rem > half || (rem === half && (r & 1))) r++;
    return sign | r;
  }
  let r = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (r & 1))) r++;
  return sign | r;
}
export function f16ToF32(h) {
  const sign = h & 0x8000 ? -1 : 1, e = (h >>> 10) & 0x1f, m = h & 0x3ff;
  if (e === 0) return sign * m * 2 ** -24;
  if (e === 0x1f) return m ? NaN : sign * Infinity;
  return sign * (1024 + m) * 2 ** (e - 25);
}
/** f32 -> bfloat16 bits, round to nearest even (NaN kept quiet). */
export function bf16Bits(v) {
  cvt.setFloat32(0, v, true);
  const x = cvt.getUint32(0, true);
  if ((x & 0x7fffffff) > 0x7f800000) return (x >>> 16) | 0x40;
  return ((x + 0x7fff + ((x >>> 16) & 1)) >>> 16) & 0xffff;
}
export function bf16ToF32(b) { cvt.setUint32(0, b << 16, true); return cvt.getFloat32(0, true); }

export const DTYPES = ['F32', 'F16', 'BF16'];

/** The values as a `dtype` file holds them, back in f32 (what the model computes with). */
export function roundTo(data, dtype) {
  if (dtype === 'F32') return data;
  const out = new Float32Array(data.length);
  if (dtype === 'F16') for (let i = 0; i < data.length; i++) out[i] = f16ToF32(f16Bits(data[i]));
  else if (dtype === 'BF16') for (let i = 0; i < data.length; i++) out[i] = bf16ToF32(bf16Bits(data[i]));
  else throw new Error(`encoder weights: dtype ${dtype} is not F32, F16 or BF16`);
  return out;
}

/** Little-endian bytes of a tensor in `dtype`. */
export function tensorBytes(data, dtype) {
  if (data instanceof BigInt64Array) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength).slice();
  if (dtype === 'F32') return new Uint8Array(data.buffer, data.byteOffset, data.byteLength).slice();
  const out = new Uint16Array(data.length);
  const bits = dtype === 'F16' ? f16Bits : bf16Bits;
  for (let i = 0; i < data.length; i++) out[i] = bits(data[i]);
  return new Uint8Array(out.buffer);
}

// ------------------------------------------------------------------ the weights

const cache = new Map();

/**
 * Map canonical name -> { dims, data } of a BertModel of `shape` from `seed`: data a Float32Array
 * (the values after rounding to `dtype`), or a BigInt64Array for embeddings.position_ids.
 * opts: extras (pooler.*, position_ids; default true), heads (cls.predictions.*; default false).
 * The f32 draws are cached per (shape, seed): the 12-layer shape takes about a second to draw.
 */
export function makeWeights(shape, seed, dtype = 'F32', opts = {}) {
  const specs = tensorSpecs(shape, opts);
  const key = `${typeof shape === 'string' ? shape : JSON.stringify(shape)}/${seed}`;
  if (!cache.has(key)) cache.set(key, new Map());
  const drawn = cache.get(key);
  const out = new Map();
  for (const { name, dims, init } of specs) {
    const n = dims.reduce((a, b) => a * b, 1);
    if (init === 'arange') { out.set(name, { dims, data: BigInt64Array.from({ length: n }, (_, i) => BigInt(i)) }); continue; }
    if (!drawn.has(name)) {
      const [mean, std] = INIT[init];
      const data = normals(streamKey(name, seed), n, mean, std);
      if (name === 'embeddings.word_embeddings.weight') data.fill(0, 0, dims[1]); // [PAD] row (padding_idx 0)
      drawn.set(name, data);
    }
    out.set(name, { dims, data: roundTo(drawn.get(name), dtype) });
  }
  return out;
}

/** Forget the cached draws (tests that want the memory back). */
export function clearWeightCache() { cache.clear(); }

/**
 * SHA-256 (hex) over the tensors in canonical order, each as its little-endian bytes in `dtype`
 * (position_ids as int64): the digest tests/gen/encoder.py records in the manifest.
 */
export async function weightsDigest(shape, seed, dtype = 'F32', opts = {}) {
  const { createHash } = await import('node:crypto');
  const h = createHash('sha256');
  for (const [, t] of makeWeights(shape, seed, 'F32', opts)) h.update(tensorBytes(t.data, dtype));
  return h.digest('hex');
}

// ------------------------------------------------------------------ SafeTensors

const DTYPE_ORDER = { F16: 7, BF16: 8, F32: 11, I64: 13 }; // safetensors' Dtype enum order
const DTYPE_SIZE = { F16: 2, BF16: 2, F32: 4, I64: 8 };

/**
 * A .safetensors file as the Python `safetensors` writes it: tensors sorted by dtype (wider first:
 * I64, F32, then 16-bit) then name, `__metadata__` first in the header, header padded with spaces
 * to a multiple of 8. tensors: [{ name, dtype, dims, bytes }].
 */
export function writeSafetensors(tensors, metadata = { format: 'pt' }) {
  const sorted = [...tensors].sort((a, b) => (DTYPE_ORDER[b.dtype] - DTYPE_ORDER[a.dtype]) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const header = metadata ? { __metadata__: metadata } : {};
  let off = 0;
  for (const t of sorted) {
    const n = t.dims.reduce((a, b) => a * b, 1);
    if (t.bytes.length !== n * DTYPE_SIZE[t.dtype]) throw new Error(`safetensors: ${t.name} has ${t.bytes.length} bytes for ${t.dims} ${t.dtype}`);
    header[t.name] = { dtype: t.dtype, shape: t.dims, data_offsets: [off, off + t.bytes.length] };
    off += t.bytes.length;
  }
  let json = JSON.stringify(header);
  const enc = new TextEncoder();
  while (enc.encode(json).length % 8) json += ' ';
  const hb = enc.encode(json);
  const out = new Uint8Array(8 + hb.length + off);
  new DataView(out.buffer).setBigUint64(0, BigInt(hb.length), true);
  out.set(hb, 8);
  let p = 8 + hb.length;
  for (const t of sorted) { out.set(t.bytes, p); p += t.bytes.length; }
  return out;
}

/** A .safetensors file -> Map name -> { dims, dtype, data } (floats as Float32Array, I64 as BigInt64Array). */
export function readSafetensors(bytes) {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = Number(dv.getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  const base = 8 + n;
  const out = new Map();
  for (const [name, h] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const [b, e] = h.data_offsets;
    const raw = bytes.slice(base + b, base + e);
    let data;
    if (h.dtype === 'F32') data = new Float32Array(raw.buffer);
    else if (h.dtype === 'I64') data = new BigInt64Array(raw.buffer);
    else if (h.dtype === 'F16' || h.dtype === 'BF16') {
      const u = new Uint16Array(raw.buffer), f = h.dtype === 'F16' ? f16ToF32 : bf16ToF32;
      data = Float32Array.from(u, f);
    } else throw new Error(`safetensors: ${name} has dtype ${h.dtype}`);
    out.set(name, { dims: h.shape, dtype: h.dtype, data });
  }
  return out;
}
