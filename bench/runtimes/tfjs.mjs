// TensorFlow.js: @tensorflow/tfjs-core + @tensorflow/tfjs-backend-wasm (no tfjs-node).
// Weights come from the same `.bin` file; the forward pass is
// softmax(relu(x·W1 + b1)·W2 + b2) with tf.matMul/add/relu/softmax inside tf.tidy,
// and every call includes the dataSync() readback.
import { fileURLToPath } from 'node:url';
import { fromBin } from '../weights.mjs';

const wasmDir = fileURLToPath(new URL('../../node_modules/@tensorflow/tfjs-backend-wasm/dist/', import.meta.url));

export const tfjsWasm = {
  id: 'tfjs-wasm',
  label: 'tfjs wasm',
  modelFormat: 'bin',
  async: false,
  unavailable: () => null,
  async setup(modelBytes) {
    const tf = await import('@tensorflow/tfjs-core');
    const backend = await import('@tensorflow/tfjs-backend-wasm');
    // Under Node the Emscripten glue reads the .wasm with fs, so a plain directory path
    // (with trailing separator) is what it needs; a file:// URL string works as well.
    backend.setWasmPaths(wasmDir.endsWith('/') ? wasmDir : wasmDir + '/');
    if (!(await tf.setBackend('wasm'))) throw new Error('tf.setBackend("wasm") failed');
    await tf.ready();
    const w = fromBin(modelBytes);
    const W1 = tf.tensor2d(w.W1, [w.I, w.H]);
    const b1 = tf.tensor1d(w.b1);
    const W2 = tf.tensor2d(w.W2, [w.H, w.O]);
    const b2 = tf.tensor1d(w.b2);
    const run = (x, n) => {
      const y = tf.tidy(() => {
        const h = tf.relu(tf.add(tf.matMul(tf.tensor2d(x, [n, w.I]), W1), b1));
        return tf.softmax(tf.add(tf.matMul(h, W2), b2));
      });
      const out = y.dataSync();
      y.dispose();
      return out;
    };
    const flags = tf.env().flags;
    return {
      info: {
        backend: tf.getBackend(),
        simd: flags.WASM_HAS_SIMD_SUPPORT,
        multithread: flags.WASM_HAS_MULTITHREAD_SUPPORT,
        threads: backend.getThreadsCount?.(),
      },
      predict: (x) => run(x, 1),
      predictBatch: run,
      dispose: () => { W1.dispose(); b1.dispose(); W2.dispose(); b2.dispose(); },
    };
  },
};
