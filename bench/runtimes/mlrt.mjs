// mlrt (this project): wasm/mlrt.mjs + wasm/mlrt-relaxed.wasm (relaxed SIMD: Node runs it only with
// --experimental-wasm-relaxed-simd, which this row's processes get), wasm/mlrt.wasm (SIMD128) or
// wasm/mlrt-scalar.wasm.
// Loads the raw `.bin` MLP. Rows report "n/a (not built)" until the build outputs exist.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const jsUrl = new URL('../../wasm/mlrt.mjs', import.meta.url);

const BUILDS = {
  relaxed: { file: 'mlrt-relaxed.wasm', label: 'mlrt relaxed', options: { simd: true, relaxed: true }, execArgv: ['--experimental-wasm-relaxed-simd'] },
  simd: { file: 'mlrt.wasm', label: 'mlrt SIMD', options: { simd: true, relaxed: false } },
  scalar: { file: 'mlrt-scalar.wasm', label: 'mlrt scalar', options: { simd: false } },
  threads: { file: 'mlrt-threads.wasm', label: 'mlrt threads=auto', options: { threads: 'auto' } },
};

function variant(build) {
  const { file, label, options, execArgv = [] } = BUILDS[build];
  const wasmFile = fileURLToPath(new URL(`../../wasm/${file}`, import.meta.url));
  return {
    id: `mlrt-${build}`,
    label,
    execArgv,
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
      const rt = await createRuntime(options);
      const t0 = performance.now();
      const model = rt.loadFromBytes(modelBytes);
      const loadMs = performance.now() - t0;
      return {
        info: model.info,
        loadMs, // the model load alone (the file's bytes -> a runnable model)
        build: rt.build,
        predict: (x) => model.predict(x),
        predictBatch: (x, n) => model.predictBatch(x, n),
        dispose: () => { model.dispose(); rt.dispose(); },
      };
    },
  };
}

export const mlrtRelaxed = variant('relaxed');
export const mlrtSimd = variant('simd');
export const mlrtScalar = variant('scalar');
export const mlrtThreads = variant('threads');
