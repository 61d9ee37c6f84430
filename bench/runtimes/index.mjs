// Every runtime module exports objects with the same shape:
//   { id, label, modelFormat: 'bin' | 'onnx', async: boolean,
//     unavailable(): null | string,                 // reason shown in the table
//     setup(modelBytes: Uint8Array) → Promise<{ info, predict(x) → Float32Array(10)
//         (or a Promise of it when async), predictBatch(x, n) → Float32Array(n*10), dispose() }> }
// setup() must do the dynamic import() of the runtime itself, so cold start covers it.
import { mlrtRelaxed, mlrtSimd, mlrtScalar, mlrtThreads } from './mlrt.mjs';
import { ort1, ort2 } from './ort.mjs';
import { tfjsWasm } from './tfjs.mjs';
import { plainJs } from './js.mjs';

export const RUNTIMES = [mlrtSimd, mlrtRelaxed, mlrtThreads, mlrtScalar, ort1, ort2, tfjsWasm, plainJs];
export const byId = (id) => {
  const r = RUNTIMES.find((r) => r.id === id);
  if (!r) throw new Error(`unknown runtime ${id}`);
  return r;
};
