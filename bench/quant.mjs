// Quantized copies of a model for the benchmark: aprender's encoders (Q8: one f32 scale per tensor,
// scale = max|x| / 127, 1.0 when all zero, q = round(x / scale); Q4: per 32 elements an f16 scale
// max|x| / 7 (round to nearest even) and q = clamp(round(x / scale), -8, 7) + 8, two per byte,
// even element in the low nibble), written as an .apr v2 file. Rust's round: half away from zero.
import { aprV2 } from '../tests/helpers.mjs';

const f32 = Math.fround;
const roundAway = (v) => Math.sign(v) * Math.floor(Math.abs(v) + 0.5);

/** f32 -> IEEE half bits, round to nearest even (as the `half` crate's from_f32). */
export function f16Bits(v) {
  const u = new Uint32Array(new Float32Array([v]).buffer)[0];
  const sign = (u >>> 16) & 0x8000, exp = (u >>> 23) & 0xff;
  let man = u & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (man ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 31) return sign | 0x7c00;
  let h, rem, half;
  if (e <= 0) {
    if (e < -10) return sign;
    man |= 0x800000;
    const shift = 14 - e;
    h = man >>> shift; rem = man & ((1 << shift) - 1); half = 1 << (shift - 1);
  } else {
    h = (e << 10) | (man >>> 13); rem = man & 0x1fff; half = 0x1000;
  }
  if (rem > half || (rem === half && (h & 1))) h++;
  return sign | h;
}

export function quantizeQ8(values) {
  let max = 0;
  for (const v of values) max = Math.max(max, Math.abs(v));
  const scale = max === 0 ? 1 : f32(max / 127);
  const out = new Uint8Array(4 + values.length);
  new DataView(out.buffer).setFloat32(0, scale, true);
  for (let i = 0; i < values.length; i++) out[4 + i] = Math.max(-127, Math.min(127, roundAway(f32(values[i] / scale)))) & 0xff;
  return out;
}

export function quantizeQ4(values) {
  const blocks = Math.ceil(values.length / 32), out = new Uint8Array(blocks * 18);
  const dv = new DataView(out.buffer);
  for (let b = 0; b < blocks; b++) {
    const block = values.subarray(b * 32, Math.min(values.length, b * 32 + 32));
    let max = 0;
    for (const v of block) max = Math.max(max, Math.abs(v));
    const scale = f32(max / 7);
    dv.setUint16(b * 18, f16Bits(scale), true);
    for (let i = 0; i < block.length; i++) {
      const q = scale === 0 ? 8 : Math.max(-8, Math.min(7, roundAway(f32(block[i] / scale)))) + 8;
      out[b * 18 + 2 + (i >> 1)] |= i & 1 ? q << 4 : q;
    }
  }
  return out;
}

/** An .apr v2 file with the weights of `tensors` ({ name: { shape, values: Float32Array } }) in dtype
 * 'APR_Q8' or 'APR_Q4' (biases stay F32). */
export function quantizedApr(tensors, dtype, metadata = { model_type: 'mlp' }) {
  const list = Object.entries(tensors).map(([name, { shape, values }]) => {
    const weight = shape.length === 2;
    const data = !weight ? new Uint8Array(values.buffer.slice(values.byteOffset, values.byteOffset + values.byteLength))
      : dtype === 'APR_Q8' ? quantizeQ8(values) : quantizeQ4(values);
    return { name, dtype: weight ? dtype : 'F32', shape, data };
  });
  return aprV2({ metadata, tensors: list });
}
