// bundle.mjs — the one list of modules that make up the edge worker.
//
// Used by serve.mjs (miniflare and bare workerd) and by build.mjs (edge/dist/ for wrangler).
// mlrt.mjs and the .wasm files are taken unchanged from wasm/: the worker runs the very same
// JavaScript module as browsers and Node.

import { fileURLToPath } from 'node:url';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { packFiles } from './pack.mjs';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));

export const EDGE_DIR = here('./');
export const REPO_DIR = here('../');
export const DEFAULT_MODEL = here('../build/models/mnist-mlp.f32.bin');

// MODEL=wordnet: the reverse dictionary (POST /search). The encoder's files and the lemma index
// (tools/wordnet/index.mjs) go into one Data module, words.bin (edge/pack.mjs).
export const WORDNET = Object.freeze({
  dir: here('../models/wordnet/'),
  index: here('../build/wordnet/lemmas.q8.index'),
  files: ['model.safetensors', 'config.json', 'tokenizer.json', 'tokenizer_config.json', 'modules.json',
    '1_Pooling/config.json', 'sentence_bert_config.json'],
  pack: here('../build/wordnet/edge-words.bin'),
});

/** Writes words.bin (the encoder's files + lemmas.index) when a source is newer; returns its path. */
export function packWords(words = WORDNET) {
  const sources = [...words.files.map((f) => join(words.dir, f)), words.index];
  for (const p of sources) {
    if (!existsSync(p)) {
      throw new Error(`edge bundle: ${p} is missing${p === words.index ? ' (run `make wordnet-index`: node tools/wordnet/index.mjs)' : ''}`);
    }
  }
  const newest = Math.max(...sources.map((p) => statSync(p).mtimeMs));
  if (!existsSync(words.pack) || statSync(words.pack).mtimeMs < newest) {
    const files = Object.fromEntries(words.files.map((f) => [f, readFileSync(join(words.dir, f))]));
    files['lemmas.index'] = readFileSync(words.index);
    mkdirSync(dirname(words.pack), { recursive: true });
    writeFileSync(words.pack, packFiles(files));
  }
  return words.pack;
}

/**
 * The worker's modules, main module first.
 * @param {{ model?: string | null }} [options] the file embedded as model.bin (a Data module);
 *   null embeds an empty model.bin (the worker then needs MODEL_URL). 'wordnet' embeds the
 *   reverse dictionary as words.bin instead (and an empty model.bin).
 * @returns {{ name: string, type: 'ESModule' | 'CompiledWasm' | 'Data', path: string | null }[]}
 *   path null means empty contents. Names may have a directory ('web/lemma-index.mjs'): the
 *   modules import each other by the same relative paths as in the repository.
 */
export function bundleModules({ model = DEFAULT_MODEL } = {}) {
  const words = model === 'wordnet' ? packWords() : null;
  if (model === 'wordnet') model = null;
  const modules = [
    { name: 'worker.mjs', type: 'ESModule', path: here('./worker.mjs') },
    { name: 'mlrt.mjs', type: 'ESModule', path: here('../wasm/mlrt.mjs') },
    { name: 'plain-js-model.mjs', type: 'ESModule', path: here('./plain-js-model.mjs') },
    { name: 'pack.mjs', type: 'ESModule', path: here('./pack.mjs') },
    { name: 'web/lemma-index.mjs', type: 'ESModule', path: here('../web/lemma-index.mjs') },
    { name: 'wasm/crc32.mjs', type: 'ESModule', path: here('../wasm/crc32.mjs') },
    { name: 'mlrt-relaxed.wasm', type: 'CompiledWasm', path: here('../wasm/mlrt-relaxed.wasm') },
    { name: 'mlrt.wasm', type: 'CompiledWasm', path: here('../wasm/mlrt.wasm') },
    { name: 'mlrt-scalar.wasm', type: 'CompiledWasm', path: here('../wasm/mlrt-scalar.wasm') },
    { name: 'model.bin', type: 'Data', path: model },
    { name: 'words.bin', type: 'Data', path: words },
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
