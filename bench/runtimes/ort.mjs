// onnxruntime-web (wasm execution provider) on the ONNX encoding of the same MLP.
// Under Node, `import('onnxruntime-web')` resolves to dist/ort.node.min.mjs, which loads
// dist/ort-wasm-simd-threaded.{mjs,wasm}. Threads are Emscripten pthreads on
// worker_threads + SharedArrayBuffer, which Node 20 has, so numThreads = 2 works without
// any extra flag. `env.wasm.proxy` is compiled out of the Node build (no effect).

function variant(threads) {
  return {
    id: `ort-${threads}t`,
    label: `ORT-web ${threads} thread${threads > 1 ? 's' : ''}`,
    modelFormat: 'onnx',
    async: true,
    unavailable: () => null,
    async setup(modelBytes) {
      const ort = await import('onnxruntime-web');
      ort.env.wasm.numThreads = threads; // default under Node is min(4, ceil(cpus/2)) = 1 on 2 cores
      ort.env.wasm.proxy = false;
      ort.env.logLevel = 'error';
      const t0 = performance.now();
      const session = await ort.InferenceSession.create(modelBytes, {
        executionProviders: ['wasm'],
        graphOptimizationLevel: 'all',
      });
      const loadMs = performance.now() - t0; // includes the first session's wasm instantiation
      const [inName] = session.inputNames;
      const [outName] = session.outputNames;
      const run = async (x, n) => {
        const out = await session.run({ [inName]: new ort.Tensor('float32', x, [n, 784]) });
        return out[outName].data;
      };
      return {
        loadMs,
        info: { numThreads: ort.env.wasm.numThreads, inputs: session.inputNames, outputs: session.outputNames },
        predict: (x) => run(x, 1),
        predictBatch: run,
        dispose: () => session.release(),
      };
    },
  };
}

export const ort1 = variant(1);
export const ort2 = variant(2);
