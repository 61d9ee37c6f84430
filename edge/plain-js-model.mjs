// plain-js-model.mjs — the same 2-layer MLP as mlrt's raw .bin format, in plain JavaScript loops.
//
// It exists only as the baseline for the edge load test (MODEL_ENGINE = "plain-js"): the worker
// serves it through the same endpoints as mlrt, so the difference in req/s and latency is the
// difference between mlrt's wasm kernels and the obvious JavaScript.
//
//   .bin layout (little endian): i32 inputs, i32 hidden, i32 outputs,
//   W1 [inputs][hidden], b1 [hidden], W2 [hidden][outputs], b2 [outputs]  as f32 or f64.
//   Hidden ReLU, output softmax. Weights run as f32 (as in mlrt), sums in f64.
//
// Only the .bin format is read here; SafeTensors/BinTensors need mlrt.

export class PlainModelError extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'PlainModelError';
    this.code = code;
  }
}

const MAX_DIM = 1 << 20;

/** Parses a .bin file (ArrayBuffer or Uint8Array) into a model with predict/predictBatch. */
export function loadPlainModel(bytes) {
  const u8 = bytes instanceof ArrayBuffer ? new Uint8Array(bytes) : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (u8.length < 12) throw new PlainModelError('TRUNCATED', `plain-js: file is ${u8.length} bytes, shorter than the 12-byte .bin header`);
  const view = new DataView(u8.buffer, u8.byteOffset, u8.byteLength);
  const [inputs, hidden, outputs] = [0, 4, 8].map((o) => view.getInt32(o, true));
  for (const d of [inputs, hidden, outputs]) {
    if (!(d > 0 && d <= MAX_DIM)) {
      throw new PlainModelError('BAD_DIMENSIONS', `plain-js: .bin dimensions (${inputs}, ${hidden}, ${outputs}) must each be in 1..${MAX_DIM} (only the .bin format is supported)`);
    }
  }
  const params = inputs * hidden + hidden + hidden * outputs + outputs;
  let elem;
  if (u8.length === 12 + params * 4) elem = 4;
  else if (u8.length === 12 + params * 8) elem = 8;
  else throw new PlainModelError('SIZE_MISMATCH', `plain-js: ${inputs}x${hidden}x${outputs} needs ${12 + params * 4} (f32) or ${12 + params * 8} (f64) bytes, got ${u8.length}`);

  // Copy out as f32 (aligned, and the same rounding of f64 files as mlrt).
  const all = new Float32Array(params);
  for (let i = 0, o = 12; i < params; i++, o += elem) all[i] = elem === 4 ? view.getFloat32(o, true) : view.getFloat64(o, true);
  let p = 0;
  const take = (n) => all.subarray(p, (p += n));
  const w1 = take(inputs * hidden), b1 = take(hidden), w2 = take(hidden * outputs), b2 = take(outputs);

  const h = new Float64Array(hidden);
  const z = new Float64Array(outputs);

  // One row: x[off .. off+inputs) -> out[outOff .. outOff+outputs).
  function row(x, off, out, outOff) {
    for (let j = 0; j < hidden; j++) h[j] = b1[j];
    for (let i = 0; i < inputs; i++) {
      const xi = x[off + i];
      const base = i * hidden;
      for (let j = 0; j < hidden; j++) h[j] += xi * w1[base + j];
    }
    for (let j = 0; j < hidden; j++) if (h[j] < 0) h[j] = 0;
    for (let k = 0; k < outputs; k++) z[k] = b2[k];
    for (let j = 0; j < hidden; j++) {
      const hj = h[j];
      const base = j * outputs;
      for (let k = 0; k < outputs; k++) z[k] += hj * w2[base + k];
    }
    let max = -Infinity;
    for (let k = 0; k < outputs; k++) if (z[k] > max) max = z[k];
    let sum = 0;
    for (let k = 0; k < outputs; k++) sum += (z[k] = Math.exp(z[k] - max));
    for (let k = 0; k < outputs; k++) out[outOff + k] = z[k] / sum;
  }

  const info = Object.freeze({
    format: 'bin', kind: 'mlp', inputSize: inputs, outputSize: outputs, dtype: elem === 4 ? 'F32' : 'F64',
    params, layers: [{ inputs, outputs: hidden, activation: 'relu' }, { inputs: hidden, outputs, activation: 'softmax' }],
    metadata: {},
  });

  return {
    info,
    predict(input) {
      if (input.length !== inputs) throw new PlainModelError('INVALID_ARGUMENT', `predict: expected ${inputs} input values, got ${input.length}`);
      const out = new Float32Array(outputs);
      row(input, 0, out, 0);
      return out;
    },
    predictBatch(input, n) {
      if (input.length !== n * inputs) throw new PlainModelError('INVALID_ARGUMENT', `predictBatch: expected ${n * inputs} input values, got ${input.length}`);
      const out = new Float32Array(n * outputs);
      for (let r = 0; r < n; r++) row(input, r * inputs, out, r * outputs);
      return out;
    },
    dispose() {},
  };
}
