// mlrt (this project): wasm/mlrt.mjs + wasm/mlrt.wasm (SIMD128) or wasm/mlrt-scalar.wasm.
// Loads the raw `.bin` MLP. Rows report "n/a (not built)" until the build outputs exist.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const jsUrl = new URL('../../wasm/mlrt.mjs', import.meta.url);

function variant(simd) {
  const wasmFile = fileURLToPath(new URL(`../../wasm/${simd ? 'mlrt.wasm' : 'mlrt-scalar.wasm'}`, import.meta.url));
  return {
    id: simd ? 'mlrt-simd' : 'mlrt-scalar',
    label: simd ? 'mlrt SIMD' : 'mlrt scalar',
    modelFormat: 'bin',
    async: false,
    wasmFile,
    /** null when runnable, else the reason to print in the table. */
    unavailable() {
      if (!existsSync(fileURLToPath(jsUrl)) || !existsSync(wasmFile)) return 'n/a (not built)';
      return null;
    },
    async setup(modelBytes) {
      const { createRuntime } = await import(jsUrl.href);
      const rt = await createRuntime({ simd });
      const t0 = performance.now();
      const model = rt.loadFromBytes(modelBytes);
      const loadMs = performance.now() - t0;
      return {
        info: model.info,
        loadMs, // the model load alone (the file's bytes -> a runnable model)
        predict: (x) => model.predict(x),
        predictBatch: (x, n) => model.predictBatch(x, n),
        dispose: () => model.dispose(),
      };
    },
  };
}

export const mlrtSimd = variant(true);
export const mlrtScalar = variant(false);
