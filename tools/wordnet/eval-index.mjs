#!/usr/bin/env node
// eval-index.mjs — held-out quality of lemma indexes, scored the way the page and the edge score
// (web/lemma-index.mjs), and how much two indexes agree.
//
//   node tools/wordnet/eval-index.mjs INDEX [INDEX ...] [--queries FILE.f32] [--engine E] [--limit N] [--json FILE]
//
// Queries: the definitions of models/wordnet/heldout.jsonl, embedded by mlrt's encoder, or read
// from --queries (raw f32 in heldout order: tools/wordnet/embed_torch.py --heldout). A hit@k when
// any lemma of the synset is among the top k (ties to the lower row), as train.py counts.
// With several indexes: top-1 and top-10 agreement of each with the first (same top-10 set, and
// the mean overlap of the two top-10 sets), and the sizes raw and gzipped. An index may be named
// twice or more with @js, @mlrt (SIMD128) or @relaxed after it: the scoring engine for that entry
// (default js; the mlrt engines need a q8 index: web/lemma-index.mjs useRuntime).
import { readFileSync, writeFileSync } from 'node:fs';
import v8 from 'node:v8';
import { basename } from 'node:path';
import { gzipSync } from 'node:zlib';
import { readIndex, topK } from '../../web/lemma-index.mjs';
import { embedAll, goldRank, loadMlrtEncoder, readF32, readHeldout, readLemmas } from './common.mjs';

const paths = [];
let queriesPath = null, limit = Infinity, jsonOut = null;
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--queries') queriesPath = argv[++i];
  else if (argv[i] === '--limit') limit = Number(argv[++i]);
  else if (argv[i] === '--json') jsonOut = argv[++i];
  else if (argv[i].startsWith('--')) throw new Error(`unknown option ${argv[i]}`);
  else paths.push(argv[i]);
}
if (!paths.length) throw new Error('usage: eval-index.mjs INDEX [INDEX ...] [--queries FILE.f32] [--limit N] [--json FILE]');

v8.setFlagsFromString('--experimental-wasm-relaxed-simd'); // before any wasm is compiled
const { createRuntime } = await import('../../wasm/mlrt.mjs');
const lemmas = readLemmas();
const held = readHeldout(lemmas);
const n = Math.min(held.length, limit);
const indexes = [];
for (const spec of paths) {
  const [p, engine = 'js'] = spec.split('@');
  const bytes = readFileSync(p);
  const ix = readIndex(new Uint8Array(bytes));
  if (ix.count !== lemmas.length) throw new Error(`${p} has ${ix.count} rows, lemmas.txt ${lemmas.length}`);
  if (engine === 'mlrt' || engine === 'relaxed') ix.useRuntime(await createRuntime({ relaxed: engine === 'relaxed' }));
  else if (engine !== 'js') throw new Error(`unknown engine @${engine} (js, mlrt, relaxed)`);
  indexes.push({ path: p, engine, ix, raw: bytes.length, gz: gzipSync(bytes, { level: 9 }).length });
}
const dim = indexes[0].ix.dim;

let queries, querySource;
if (queriesPath) {
  queries = readF32(queriesPath, held.length, dim);
  querySource = basename(queriesPath);
} else {
  const { enc } = await loadMlrtEncoder();
  queries = embedAll(enc, held.slice(0, n).map((h) => h.definition));
  querySource = 'mlrt encoder';
}

const stats = indexes.map(() => ({ r1: 0, r10: 0, mrr: 0, top1Same: 0, top10Same: 0, overlap: 0, ms: 0 }));
for (let q = 0; q < n; q++) {
  const x = queries.subarray(q * dim, (q + 1) * dim);
  let first = null;
  indexes.forEach(({ ix }, k) => {
    const t0 = performance.now();
    const scores = ix.scores(x);
    const top = topK(scores, 10);
    stats[k].ms += performance.now() - t0;
    const rank = goldRank(scores, held[q].gold);
    const s = stats[k];
    if (rank < 1) s.r1++;
    if (rank < 10) { s.r10++; s.mrr += 1 / (rank + 1); }
    if (k === 0) first = top;
    else {
      const a = new Set(first);
      const common = top.filter((i) => a.has(i)).length;
      s.overlap += common / 10;
      if (common === 10) s.top10Same++;
      if (top[0] === first[0]) s.top1Same++;
    }
  });
}

const results = indexes.map(({ path, engine, ix, raw, gz }, k) => {
  const s = stats[k];
  return {
    index: basename(path), engine, dtype: ix.dtype, generator: ix.generator, bytes: raw, gzipBytes: gz,
    queries: n, querySource,
    'recall@1': s.r1 / n, 'recall@10': s.r10 / n, 'mrr@10': s.mrr / n,
    msPerQuery: s.ms / n,
    ...(k ? { vsFirst: { top1Same: s.top1Same / n, top10SetSame: s.top10Same / n, top10MeanOverlap: s.overlap / n } } : {}),
  };
});
const pct = (v) => `${(100 * v).toFixed(2)}%`;
console.log(`held-out definitions: ${n} (queries: ${querySource})`);
console.log('| index | scoring | generator | recall@1 | recall@10 | mrr@10 | size | gzipped | scoring ms/query | top-1 / top-10 set same as first, mean top-10 overlap |');
console.log('|---|---|---|---:|---:|---:|---:|---:|---:|---|');
for (const r of results) {
  console.log(`| ${r.index} | ${r.engine} | ${r.generator} | ${pct(r['recall@1'])} | ${pct(r['recall@10'])} | ${r['mrr@10'].toFixed(4)} | ${r.bytes} | ${r.gzipBytes} | ${r.msPerQuery.toFixed(1)} | `
    + `${r.vsFirst ? `${pct(r.vsFirst.top1Same)} / ${pct(r.vsFirst.top10SetSame)}, ${pct(r.vsFirst.top10MeanOverlap)}` : '–'} |`);
}
if (jsonOut) writeFileSync(jsonOut, `${JSON.stringify(results, null, 2)}\n`);
