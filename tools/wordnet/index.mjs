#!/usr/bin/env node
// index.mjs — builds the reverse dictionary's lemma index (web/lemma-index.mjs's format):
// every line of models/wordnet/lemmas.txt with its embedding, computed by mlrt's own encoder.
//
//   node tools/wordnet/index.mjs [--dtype q8|f32] [--out FILE] [--model DIR] [--batch N]
//   node tools/wordnet/index.mjs --embeddings build/wordnet/torch-lemmas.f32 --generator "torch 1.13"
//   node tools/wordnet/index.mjs --save-embeddings build/wordnet/mlrt-lemmas.f32   (also writes the rows, raw f32)
//
// Default out: build/wordnet/lemmas.<dtype>.index. --embeddings takes rows computed elsewhere (raw
// little-endian f32, lemmas.txt order: tools/wordnet/embed_torch.py), for development and for
// comparing with the reference; the shipped index is always mlrt's (`make wordnet-index`).
// The header records the SHA-256 of model.safetensors: the page and the edge worker refuse an
// index made with another model.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { readIndex, writeIndex } from '../../web/lemma-index.mjs';
import { BUILD_DIR, MODEL_DIR, embedAll, loadMlrtEncoder, readF32, readLemmas, sha256 } from './common.mjs';

const args = { dtype: 'q8', model: MODEL_DIR, batch: 256, out: null, embeddings: null, generator: null, save: null };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i], value = () => {
    if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
    return argv[++i];
  };
  if (a === '--dtype') args.dtype = value();
  else if (a === '--out') args.out = value();
  else if (a === '--model') args.model = value();
  else if (a === '--batch') args.batch = Number(value());
  else if (a === '--embeddings') args.embeddings = value();
  else if (a === '--generator') args.generator = value();
  else if (a === '--save-embeddings') args.save = value();
  else if (a === '--help' || a === '-h') {
    console.log(readFileSync(new URL(import.meta.url), 'utf8').split('\n').slice(1, 13).map((l) => l.replace(/^\/\/ ?/, '')).join('\n'));
    process.exit(0);
  } else throw new Error(`unknown argument ${a}`);
}
if (!['q8', 'f32'].includes(args.dtype)) throw new Error(`--dtype must be q8 or f32, got ${args.dtype}`);
args.out ??= join(BUILD_DIR, `lemmas.${args.dtype}.index`);

const words = readLemmas(args.model);
const t0 = performance.now();
let embeddings, dim, modelSha256, generator;
if (args.embeddings) {
  modelSha256 = sha256(readFileSync(join(args.model, 'model.safetensors')));
  dim = JSON.parse(readFileSync(join(args.model, 'config.json'), 'utf8')).hidden_size;
  embeddings = readF32(args.embeddings, words.length, dim);
  generator = args.generator ?? 'external';
} else {
  const { enc, sha256: sha } = await loadMlrtEncoder(args.model);
  const version = JSON.parse(readFileSync(join(dirname(new URL(import.meta.url).pathname), '..', '..', 'package.json'), 'utf8')).version;
  modelSha256 = sha;
  dim = enc.info.dim;
  generator = args.generator ?? `mlrt ${version}`;
  let last = 0;
  embeddings = embedAll(enc, words, {
    batchSize: args.batch,
    onProgress: (done, total) => {
      if (process.stderr.isTTY && performance.now() - last > 500) {
        last = performance.now();
        process.stderr.write(`\rembedding ${done}/${total}`);
      }
    },
  });
  if (process.stderr.isTTY) process.stderr.write('\n');
  enc.free?.();
}
const embedMs = performance.now() - t0;
if (args.save) {
  mkdirSync(dirname(args.save), { recursive: true });
  writeFileSync(args.save, new Uint8Array(embeddings.buffer, embeddings.byteOffset, embeddings.byteLength));
}
const bytes = writeIndex({ words, embeddings, dim, dtype: args.dtype, modelSha256, generator });
readIndex(bytes); // what was written reads back
mkdirSync(dirname(args.out), { recursive: true });
writeFileSync(args.out, bytes);
console.log(`${args.out}: ${words.length} lemmas x ${dim} ${args.dtype}, ${bytes.length} B (${gzipSync(bytes, { level: 9 }).length} B gzipped); `
  + `embeddings by ${generator} in ${(embedMs / 1000).toFixed(1)} s; model sha256 ${modelSha256.slice(0, 16)}…`);
