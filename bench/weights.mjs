// Deterministic weights and inputs for the 784→512→10 MLP benchmark, plus the
// raw `.bin` MLP serialisation that mlrt reads (and the JS/tfjs rows parse).
//
// The weights are not trained: they are He-scaled uniform random numbers from a
// fixed-seed PRNG, so every runtime (and every process) sees bit-identical floats.

export const DIMS = Object.freeze({ input: 784, hidden: 512, output: 10 });

/** Multiply-adds per sample: 784·512 + 512·10. */
export const MACS_PER_SAMPLE = DIMS.input * DIMS.hidden + DIMS.hidden * DIMS.output;

/** mulberry32: tiny 32-bit PRNG, returns floats in [0, 1). */
export function prng(seed) {
  let a = seed >>> 0;
  return function next() {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const WEIGHT_SEED = 0x6d6c7274; // "mlrt"
export const INPUT_SEED = 0x696e7075; // "inpu"

/**
 * He-like init: uniform in [-a, a] with a = sqrt(6 / fan_in), i.e. variance 2/fan_in.
 * Layout (row-major, as the .bin format): W1[i][h] at i*hidden + h, W2[h][o] at h*output + o.
 */
export function makeWeights(seed = WEIGHT_SEED) {
  const { input: I, hidden: H, output: O } = DIMS;
  const r = prng(seed);
  const uni = (n, a) => {
    const v = new Float32Array(n);
    for (let k = 0; k < n; k++) v[k] = (2 * r() - 1) * a;
    return v;
  };
  const W1 = uni(I * H, Math.sqrt(6 / I));
  const b1 = uni(H, 0.05);
  const W2 = uni(H * O, Math.sqrt(6 / H));
  const b2 = uni(O, 0.05);
  return { I, H, O, W1, b1, W2, b2 };
}

/** n deterministic pseudo-random input vectors in [0, 1], concatenated (n*784 floats). */
export function makeInputs(n, seed = INPUT_SEED) {
  const r = prng(seed);
  const x = new Float32Array(n * DIMS.input);
  for (let k = 0; k < x.length; k++) x[k] = r();
  return x;
}

/** Raw `.bin` MLP: 3 × int32 LE (I, H, O), then W1, b1, W2, b2 as f32 LE. */
export function toBin(w) {
  const n = w.W1.length + w.b1.length + w.W2.length + w.b2.length;
  const buf = new ArrayBuffer(12 + 4 * n);
  const dv = new DataView(buf);
  dv.setInt32(0, w.I, true);
  dv.setInt32(4, w.H, true);
  dv.setInt32(8, w.O, true);
  let off = 12;
  for (const arr of [w.W1, w.b1, w.W2, w.b2]) {
    for (let k = 0; k < arr.length; k++, off += 4) dv.setFloat32(off, arr[k], true);
  }
  return new Uint8Array(buf);
}

/** Parse a raw f32 `.bin` MLP back into typed arrays (copies; works for any byteOffset). */
export function fromBin(bytes) {
  const u8 = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  const dv = new DataView(u8.buffer, u8.byteOffset, u8.byteLength);
  const I = dv.getInt32(0, true), H = dv.getInt32(4, true), O = dv.getInt32(8, true);
  const n = I * H + H + H * O + O;
  if (u8.byteLength !== 12 + 4 * n) throw new Error(`bin: size ${u8.byteLength} != 12 + 4*${n}`);
  const all = new Float32Array(n);
  for (let k = 0, off = 12; k < n; k++, off += 4) all[k] = dv.getFloat32(off, true);
  let p = 0;
  const take = (len) => all.subarray(p, (p += len));
  return { I, H, O, W1: take(I * H), b1: take(H), W2: take(H * O), b2: take(O) };
}

/** Float64 reference forward pass (softmax probabilities), for correctness checks. */
export function referenceForward(w, x, n) {
  const { I, H, O, W1, b1, W2, b2 } = w;
  const out = new Float64Array(n * O);
  const h = new Float64Array(H);
  for (let s = 0; s < n; s++) {
    for (let j = 0; j < H; j++) h[j] = b1[j];
    for (let i = 0; i < I; i++) {
      const xi = x[s * I + i];
      if (xi === 0) continue;
      const row = i * H;
      for (let j = 0; j < H; j++) h[j] += xi * W1[row + j];
    }
    let max = -Infinity;
    const z = new Float64Array(O);
    for (let o = 0; o < O; o++) z[o] = b2[o];
    for (let j = 0; j < H; j++) {
      const hj = h[j] > 0 ? h[j] : 0;
      if (hj === 0) continue;
      for (let o = 0; o < O; o++) z[o] += hj * W2[j * O + o];
    }
    for (let o = 0; o < O; o++) if (z[o] > max) max = z[o];
    let sum = 0;
    for (let o = 0; o < O; o++) sum += (z[o] = Math.exp(z[o] - max));
    for (let o = 0; o < O; o++) out[s * O + o] = z[o] / sum;
  }
  return out;
}

export function argmax(v, off = 0, len = DIMS.output) {
  let best = 0;
  for (let k = 1; k < len; k++) if (v[off + k] > v[off + best]) best = k;
  return best;
}
