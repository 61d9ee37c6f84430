// preprocess.mjs — turns a drawing into the 28 x 28 input an MNIST model expects.
//
// Pure functions, no DOM: used by the page and unit-tested in Node.
//
// MNIST's own recipe (LeCun et al.): each digit's ink was size-normalised to fit a
// 20 x 20 box keeping its aspect ratio, with anti-aliasing, then placed in a 28 x 28
// field so that its centre of mass lands at the centre. A model trained on MNIST only
// recognises drawings that went through the same steps:
//
//   1. bounding box of the ink (pixels above a small threshold);
//   2. area-average (box filter) the box down or up to fit 20 x 20, aspect kept;
//   3. stretch intensities so the darkest pixel is 1 (MNIST strokes are saturated);
//   4. translate by whole pixels so the centre of mass sits at pixel (14, 14) —
//      MNIST's mean centre of mass in 0-based pixel indices — clamped so the
//      digit stays inside the field.

export const SIDE = 28;
export const BOX = 20;
export const CENTRE = 14;

/** [x0, y0, x1, y1) of the pixels whose ink exceeds threshold, or null when there are none. */
export function inkBounds(ink, width, height, threshold = 0.1) {
  let x0 = width, y0 = height, x1 = -1, y1 = -1;
  for (let y = 0; y < height; y++) {
    const row = y * width;
    for (let x = 0; x < width; x++) {
      if (ink[row + x] > threshold) {
        if (x < x0) x0 = x;
        if (x > x1) x1 = x;
        if (y < y0) y0 = y;
        y1 = y;
      }
    }
  }
  return x1 < 0 ? null : { x0, y0, x1: x1 + 1, y1: y1 + 1 };
}

// Weights of the source cells first, first + 1, ... covering the destination cell
// [start, start + step) of a 1-D area resampling; they sum to 1. The epsilon keeps
// rounding noise from reaching a cell outside the box.
const EPS = 1e-9;
function coverage(start, step) {
  const end = start + step;
  const first = Math.floor(start + EPS);
  const weights = [];
  for (let s = first; s < end - EPS; s++) {
    weights.push((Math.min(end, s + 1) - Math.max(start, s)) / step);
  }
  return { first, weights };
}

/**
 * Area-averages the region [box.x0, box.x1) x [box.y0, box.y1) of a width-wide image
 * onto outW x outH pixels (a box filter: anti-aliased when shrinking).
 */
export function resampleArea(ink, width, box, outW, outH) {
  const inW = box.x1 - box.x0, inH = box.y1 - box.y0;
  const cols = Array.from({ length: outW }, (_, j) => coverage(box.x0 + (j * inW) / outW, inW / outW));
  const rows = Array.from({ length: outH }, (_, i) => coverage(box.y0 + (i * inH) / outH, inH / outH));
  // Horizontal pass over the rows of the box, then the vertical pass.
  const mid = new Float32Array(inH * outW);
  for (let y = 0; y < inH; y++) {
    const src = (box.y0 + y) * width;
    for (let j = 0; j < outW; j++) {
      const { first, weights } = cols[j];
      let sum = 0;
      for (let k = 0; k < weights.length; k++) sum += weights[k] * ink[src + first + k];
      mid[y * outW + j] = sum;
    }
  }
  const out = new Float32Array(outW * outH);
  for (let i = 0; i < outH; i++) {
    const { first, weights } = rows[i];
    for (let j = 0; j < outW; j++) {
      let sum = 0;
      for (let k = 0; k < weights.length; k++) sum += weights[k] * mid[(first - box.y0 + k) * outW + j];
      out[i * outW + j] = sum;
    }
  }
  return out;
}

/** Intensity-weighted mean position, in 0-based pixel indices: [x, y]. */
export function centreOfMass(pixels, width, height) {
  let total = 0, sx = 0, sy = 0;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const v = pixels[y * width + x];
      total += v;
      sx += v * x;
      sy += v * y;
    }
  }
  return total > 0 ? [sx / total, sy / total] : [(width - 1) / 2, (height - 1) / 2];
}

const clamp = (v, lo, hi) => Math.min(hi, Math.max(lo, v));

/**
 * A drawing's ink (width * height values in [0, 1], row-major, 1 = full ink) ->
 * the model's input: Float32Array(28 * 28) in [0, 1], white digit on black like MNIST.
 * Returns null when there is no ink.
 */
export function preprocess(ink, width, height, { threshold = 0.1 } = {}) {
  if (ink.length !== width * height) throw new RangeError(`preprocess: expected ${width * height} values, got ${ink.length}`);
  const box = inkBounds(ink, width, height, threshold);
  if (!box) return null;
  const inW = box.x1 - box.x0, inH = box.y1 - box.y0;
  const scale = BOX / Math.max(inW, inH);
  const outW = clamp(Math.round(inW * scale), 1, BOX);
  const outH = clamp(Math.round(inH * scale), 1, BOX);
  const digit = resampleArea(ink, width, box, outW, outH);

  let max = 0;
  for (const v of digit) if (v > max) max = v;
  if (max > 0) for (let i = 0; i < digit.length; i++) digit[i] = Math.min(1, digit[i] / max);

  const [cx, cy] = centreOfMass(digit, outW, outH);
  const left = clamp(Math.round(CENTRE - cx), 0, SIDE - outW);
  const top = clamp(Math.round(CENTRE - cy), 0, SIDE - outH);
  const input = new Float32Array(SIDE * SIDE);
  for (let y = 0; y < outH; y++) input.set(digit.subarray(y * outW, (y + 1) * outW), (top + y) * SIDE + left);
  return input;
}

/** The alpha channel of RGBA pixels (e.g. ImageData.data) as ink in [0, 1]. */
export function alphaToInk(rgba) {
  const ink = new Float32Array(rgba.length >> 2);
  for (let i = 0; i < ink.length; i++) ink[i] = rgba[i * 4 + 3] / 255;
  return ink;
}
