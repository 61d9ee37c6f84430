// bundle.mjs — the one list of modules that make up the edge worker.
//
// Used by serve.mjs (miniflare and bare workerd) and by build.mjs (edge/dist/ for wrangler).
// mlrt.mjs and the .wasm files are taken unchanged from wasm/: the worker runs the very same
// JavaScript module as browsers and Node.

import { fileURLToPath } from 'node:url';
import { existsSync } from 'node:fs';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));

export const EDGE_DIR = here('./');
export const REPO_DIR = here('../');
export const DEFAULT_MODEL = here('../build/models/mnist-mlp.f32.bin');

/**
 * The worker's modules, main module first.
 * @param {{ model?: string | null }} [options] the file embedded as model.bin (a Data module);
 *   null embeds an empty model.bin (the worker then needs MODEL_URL).
 * @returns {{ name: string, type: 'ESModule' | 'CompiledWasm' | 'Data', path: string | null }[]}
 *   path null means empty contents.
 */
export function bundleModules({ model = DEFAULT_MODEL } = {}) {
  const modules = [
    { name: 'worker.mjs', type: 'ESModule', path: here('./worker.mjs') },
    { name: 'mlrt.mjs', type: 'ESModule', path: here('../wasm/mlrt.mjs') },
    { name: 'plain-js-model.mjs', type: 'ESModule', path: here('./plain-js-model.mjs') },
    { name: 'mlrt-relaxed.wasm', type: 'CompiledWasm', path: here('../wasm/mlrt-relaxed.wasm') },
    { name: 'mlrt.wasm', type: 'CompiledWasm', path: here('../wasm/mlrt.wasm') },
    { name: 'mlrt-scalar.wasm', type: 'CompiledWasm', path: here('../wasm/mlrt-scalar.wasm') },
    { name: 'model.bin', type: 'Data', path: model },
  ];
  for (const m of modules) {
    if (m.path !== null && !existsSync(m.path)) {
      const hint = m.name.endsWith('.wasm') ? ' (run `make wasm/mlrt-relaxed.wasm wasm/mlrt.wasm wasm/mlrt-scalar.wasm`)'
        : m.name === 'model.bin' ? ' (run `make` to train the models, or pass another model)' : '';
      throw new Error(`edge bundle: ${m.name} is missing: ${m.path}${hint}`);
    }
  }
  return modules;
}

export const COMPATIBILITY_DATE = '2025-01-01';
