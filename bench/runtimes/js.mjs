// Plain JavaScript baseline: Float32Array weights (row-major, as in the `.bin`), the loop
// order a careful developer writes for row-major W1 (input-major: h += x[i] * W1[i][:],
// contiguous inner loop; W2 likewise), Float32Array accumulators, numerically stable
// softmax. Batches just loop over samples.
import { fileURLToPath } from 'node:url';
import { fromBin } from '../weights.mjs';

export const plainJs = {
  id: 'js',
  label: 'plain JS',
  modelFormat: 'bin',
  async: false,
  selfFile: fileURLToPath(import.meta.url), // its "size" is this file
  unavailable: () => null,
  async setup(modelBytes) {
    const { I, H, O, W1, b1, W2, b2 } = fromBin(modelBytes);
    const h = new Float32Array(H);

    function forward(x, xOff, out, outOff) {
      h.set(b1);
      for (let i = 0; i < I; i++) {
        const xi = x[xOff + i];
        if (xi === 0) continue;
        const row = i * H;
        for (let j = 0; j < H; j++) h[j] += xi * W1[row + j];
      }
      for (let o = 0; o < O; o++) out[outOff + o] = b2[o];
      for (let j = 0; j < H; j++) {
        const hj = h[j];
        if (hj <= 0) continue; // ReLU
        const row = j * O;
        for (let o = 0; o < O; o++) out[outOff + o] += hj * W2[row + o];
      }
      let max = -Infinity;
      for (let o = 0; o < O; o++) if (out[outOff + o] > max) max = out[outOff + o];
      let sum = 0;
      for (let o = 0; o < O; o++) {
        const e = Math.exp(out[outOff + o] - max);
        out[outOff + o] = e;
        sum += e;
      }
      for (let o = 0; o < O; o++) out[outOff + o] /= sum;
    }

    return {
      info: { impl: 'Float32Array loops' },
      predict(x) {
        const out = new Float32Array(O);
        forward(x, 0, out, 0);
        return out;
      },
      predictBatch(x, n) {
        const out = new Float32Array(n * O);
        for (let s = 0; s < n; s++) forward(x, s * I, out, s * O);
        return out;
      },
      dispose() {},
    };
  },
};
