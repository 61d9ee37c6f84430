#!/usr/bin/env node
// eval-q8.mjs — the "Q8 within 1 point of f32": held-out recall@1/@10 of the f32 folder and of
// Q8 .apr v2 files made by `mlrt convert`, each model embedding both the lemmas and the queries itself
// (exact f32 dot products over all lemmas; a hit when any lemma of the synset ranks in the top k).
//
//   node tools/wordnet/eval-q8.mjs MODEL.apr [MODEL.apr ...] [--limit N (default 1000)] [--json FILE]
import { readFileSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { MODEL_DIR, embedAll, goldRank, readEncoderFiles, readHeldout, readLemmas } from './common.mjs';

const argv = process.argv.slice(2), aprs = [];
let limit = 1000, json = null;
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--limit') limit = Number(argv[++i]);
  else if (argv[i] === '--json') json = argv[++i];
  else aprs.push(argv[i]);
}
const { createRuntime } = await import('../../wasm/mlrt.mjs');
const rt = await createRuntime();
const lemmas = readLemmas(), held = readHeldout(lemmas).slice(0, limit);
const folder = readEncoderFiles(MODEL_DIR);
const models = [['f32 (model.safetensors)', folder]];
for (const a of aprs) {
  const { 'model.safetensors': _, ...rest } = folder;
  models.push([basename(a), { ...rest, 'model.apr': new Uint8Array(readFileSync(a)) }]);
}
const out = [];
for (const [name, files] of models) {
  const enc = rt.loadEncoder(files), dim = enc.info.dim;
  const t0 = performance.now();
  const L = embedAll(enc, lemmas), Q = embedAll(enc, held.map((h) => h.definition));
  let r1 = 0, r10 = 0;
  const scores = new Float32Array(lemmas.length);
  for (let q = 0; q < held.length; q++) {
    for (let i = 0; i < lemmas.length; i++) {
      let s = 0;
      for (let d = 0; d < dim; d++) s += Q[q * dim + d] * L[i * dim + d];
      scores[i] = s;
    }
    const r = goldRank(scores, held[q].gold);
    r1 += r < 1; r10 += r < 10;
  }
  const row = { model: name, dtype: enc.info.dtype, queries: held.length, recall1: r1 / held.length, recall10: r10 / held.length, seconds: (performance.now() - t0) / 1000 };
  out.push(row);
  console.log(`${name}: dtype ${row.dtype}, recall@1 ${(100 * row.recall1).toFixed(2)}%, recall@10 ${(100 * row.recall10).toFixed(2)}% over ${held.length} held-out definitions (${row.seconds.toFixed(0)} s)`);
  enc.free();
}
if (json) writeFileSync(json, JSON.stringify(out, null, 2) + '\n');
