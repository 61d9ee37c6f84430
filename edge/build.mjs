#!/usr/bin/env node
// build.mjs — writes the deployable worker to edge/dist/ (what wrangler.toml uploads, unbundled):
//   worker.mjs, mlrt.mjs (wasm/mlrt.mjs, unchanged), plain-js-model.mjs,
//   pack.mjs, web/lemma-index.mjs, wasm/crc32.mjs, mlrt-relaxed.wasm, mlrt.wasm, mlrt-scalar.wasm
//   (CompiledWasm), model.bin (Data: the embedded model), words.bin (Data: the reverse dictionary).
//
//   node edge/build.mjs [--model FILE | --model wordnet | --no-embed] [--out DIR]
//   MODEL=wordnet node edge/build.mjs
//
// --no-embed writes an empty model.bin: the worker then loads the model from MODEL_URL.
// wordnet (or MODEL=wordnet) embeds the WordNet encoder and its lemma index as words.bin, for
// POST /search, and an empty model.bin; otherwise words.bin is empty.

import { copyFile, mkdir, rm, writeFile } from 'node:fs/promises';
import { statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { bundleModules, DEFAULT_MODEL, EDGE_DIR } from './bundle.mjs';

let model = process.env.MODEL === 'wordnet' ? 'wordnet' : DEFAULT_MODEL, out = join(EDGE_DIR, 'dist');
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--model') model = argv[++i];
  else if (argv[i] === '--no-embed') model = null;
  else if (argv[i] === '--out') out = argv[++i];
  else {
    console.error(`build.mjs: unknown argument ${argv[i]}`);
    process.exit(2);
  }
}

const modules = bundleModules({ model });
await rm(out, { recursive: true, force: true });
await mkdir(out, { recursive: true });
let total = 0;
for (const m of modules) {
  const dest = join(out, m.name);
  await mkdir(dirname(dest), { recursive: true });
  if (m.path === null) await writeFile(dest, new Uint8Array(0));
  else await copyFile(m.path, dest);
  const size = statSync(dest).size;
  total += size;
  const empty = m.name === 'words.bin' ? '(empty: no POST /search)' : '(empty: use MODEL_URL)';
  console.log(`${m.type.padEnd(12)} ${m.name.padEnd(20)} ${String(size).padStart(9)} B  ${m.path ? relative(process.cwd(), m.path) : empty}`);
}
console.log(`${' '.repeat(33)} ${String(total).padStart(9)} B  -> ${relative(process.cwd(), out) || '.'}/`);
