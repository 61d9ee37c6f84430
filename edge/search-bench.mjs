#!/usr/bin/env node
// search-bench.mjs — POST /search under bare workerd: CPU time per query and the isolate's memory.
//
//   node edge/search-bench.mjs [--batches 10] [--per-batch 200] [--scoring mlrt|js] [--json FILE]
//
// One workerd process serving the MODEL=wordnet bundle on 127.0.0.1, queried one request at a
// time (no concurrency) with held-out WordNet definitions (models/wordnet/heldout.jsonl).
// - CPU: workerd's own user + system time (/proc/PID/stat, 10 ms ticks) over each batch of
//   sequential queries, divided by the batch size; the table gives the median and the range of
//   the batch means. The client's time per request (median, p99) is given too.
// - Memory: workerd's resident set (/proc/PID/status VmRSS) at start (modules compiled, no request
//   yet), after the first /search (the encoder and the index loaded) and after all queries; the
//   same for a workerd serving the digit bundle, for the process's own share; the isolate's wasm
//   memory and the words.bin Data module as GET /info reports them.
// Needs wasm/, build/wordnet/lemmas.q8.index and an mlrt with loadEncoder.
import { readFileSync, writeFileSync } from 'node:fs';
import { startEdge } from './serve.mjs';
import { cpuTicks, mb, median, quantile, rssBytes } from './proc-stats.mjs';

const argv = process.argv.slice(2);
const opt = (k, d) => { const i = argv.indexOf(k); return i >= 0 ? argv[i + 1] : d; };
const BATCHES = Number(opt('--batches', 10));
const PER_BATCH = Number(opt('--per-batch', 200));
const HZ = 100; // USER_HZ on Linux


async function post(base, query) {
  const t0 = performance.now();
  const res = await fetch(new URL('search', base), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query, k: 10 }) });
  const body = await res.json();
  if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${JSON.stringify(body)}`);
  return performance.now() - t0;
}

const held = readFileSync(new URL('../models/wordnet/heldout.jsonl', import.meta.url), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l).definition);

const digits = await startEdge({ backend: 'workerd' });
const words = await startEdge({ backend: 'workerd', model: 'wordnet', scoring: opt('--scoring', 'mlrt') });
try {
  await new Promise((r) => setTimeout(r, 500));
  const rss = { digitsStart: rssBytes(digits.pid), wordsStart: rssBytes(words.pid) };
  const c0 = cpuTicks(words.pid);
  const first = await post(words.url, held[0]);
  const firstCpuMs = ((cpuTicks(words.pid) - c0) * 1000) / HZ;
  rss.wordsLoaded = rssBytes(words.pid);
  // warm-up: the JIT tiers of the scoring loop
  for (let i = 1; i <= 100; i++) await post(words.url, held[i]);
  const perQueryCpu = [], wall = [];
  let q = 101;
  for (let b = 0; b < BATCHES; b++) {
    const t = cpuTicks(words.pid);
    for (let i = 0; i < PER_BATCH; i++) wall.push(await post(words.url, held[q++ % held.length]));
    perQueryCpu.push(((cpuTicks(words.pid) - t) * 1000) / HZ / PER_BATCH);
  }
  rss.wordsAfter = rssBytes(words.pid);
  // the digit bundle after one /predict, for comparison
  await fetch(new URL('predict', digits.url), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(new Array(784).fill(0)) });
  rss.digitsAfter = rssBytes(digits.pid);
  const info = await (await fetch(new URL('info', words.url))).json();
  const out = {
    queries: BATCHES * PER_BATCH, firstRequestMs: first, firstRequestCpuMs: firstCpuMs,
    cpuMsPerQuery: { median: median(perQueryCpu), min: Math.min(...perQueryCpu), max: Math.max(...perQueryCpu) },
    wallMs: { median: median(wall), p99: quantile(wall, 0.99) },
    rss, wasmMemoryBytes: info.search.wasmMemoryBytes, bundleBytes: info.search.bundleBytes, index: info.search.index, build: info.search.runtime.build,
  };
  console.log(`POST /search under bare workerd (${out.build}; the index scored by ${out.index.scoring}), ${out.queries} sequential queries after a warm-up of 100:`);
  console.log('| measure | value |');
  console.log('|---|---:|');
  console.log(`| CPU per query, median of ${BATCHES} batch means (range) | ${out.cpuMsPerQuery.median.toFixed(1)} ms (${out.cpuMsPerQuery.min.toFixed(1)}–${out.cpuMsPerQuery.max.toFixed(1)}) |`);
  console.log(`| time per request at the client, median · p99 | ${out.wallMs.median.toFixed(1)} · ${out.wallMs.p99.toFixed(1)} ms |`);
  console.log(`| first request (loads the encoder and the index): time · workerd CPU | ${first.toFixed(0)} ms · ${firstCpuMs.toFixed(0)} ms |`);
  console.log(`| workerd RSS: at start · after the first search · after all | ${mb(rss.wordsStart)} · ${mb(rss.wordsLoaded)} · ${mb(rss.wordsAfter)} MB |`);
  console.log(`| workerd RSS with the digit bundle: at start · after a /predict | ${mb(rss.digitsStart)} · ${mb(rss.digitsAfter)} MB |`);
  console.log(`| the isolate's wasm memory · words.bin (Data module) | ${mb(out.wasmMemoryBytes)} · ${mb(out.bundleBytes)} MB |`);
  const json = argv.indexOf('--json');
  if (json >= 0) writeFileSync(argv[json + 1], `${JSON.stringify(out, null, 2)}\n`);
} finally {
  await Promise.all([digits.stop(), words.stop()]);
}
