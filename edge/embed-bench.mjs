#!/usr/bin/env node
// embed-bench.mjs — POST /embed of a Q8 all-MiniLM-L6-v2-shaped encoder under bare workerd: CPU time
// per request, the isolate's memory, and optionally a mixed load (issue 21's edge targets).
//
//   node edge/embed-bench.mjs [--batches 5] [--per-batch 100] [--build simd|relaxed|scalar]
//                             [--load 20000] [--connections 64] [--wasm-dir DIR (default wasm/)] [--json FILE]
//                             [--v8-flags '--no-wasm-bounds-checks ...' (workerd's config v8Flags: diagnosis only)]
//
// The model: tools/encoder/folder.mjs's all-MiniLM-L6-v2 folder (random BERT-init weights, seed 6,
// the real bert-base-uncased tokenizer), converted by `mlrt convert FOLDER OUT.apr --quantize q8
// --embeddings q8` (hidden 384, 6 layers, 12 heads, FFN 1536, vocab 30522), packed with its
// config and tokenizer files into one Data module (build/edge-embed/encoder.bin) and served by
// edge/embed-bench-worker.mjs. Texts: 14 common words each, 16 tokens with [CLS] and [SEP] (the
// tokenizer.json pads to 128, as all-MiniLM-L6-v2's does; the encoder computes only the tokens with
// attention mask 1), one text per request, sent one at a time (no concurrency).
// - CPU: workerd's user + system time (/proc/PID/stat, 10 ms ticks) over each batch of sequential
//   requests, divided by the batch size: the median and the range of the batch means. The client's
//   time per request (median, p99) too.
// - Memory: the isolate's wasm memory (GET /info) and workerd's resident set at start, after the
//   first request and after all.
// - --load N: N requests over --connections connections, every tenth a bad body (invalid JSON:
//   400), then the count of errors (connection errors, timeouts, answers with another status).
// workerd does not give a wasm memory guard pages (its 2 GB maximum is reserved, not V8's 8 GB + guard
// region), so V8 bounds-checks every wasm load and store there, which Node does not: --v8-flags
// --no-wasm-bounds-checks (unsafe) measures what those checks cost (bench/README.md).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join, resolve } from 'node:path';
import { startWorkerd } from './serve.mjs';
import { packFiles } from './pack.mjs';
import { cpuTicks, mb, median, quantile, rssBytes } from './proc-stats.mjs';

const argv = process.argv.slice(2);
const opt = (k, d) => { const i = argv.indexOf(k); return i >= 0 ? argv[i + 1] : d; };
const BATCHES = Number(opt('--batches', 5)), PER_BATCH = Number(opt('--per-batch', 100));
const BUILD = opt('--build', 'simd'), LOAD = Number(opt('--load', 0)), CONNECTIONS = Number(opt('--connections', 64));
const HZ = 100; // USER_HZ on Linux
const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const DIR = here('../build/edge-embed/');
const WASM = resolve(opt('--wasm-dir', here('../wasm/'))); // another checkout's builds, for before/after


// ---- the model: the MiniLM folder, its Q8 .apr, one pack (made once, kept in build/edge-embed/)
const pack = join(DIR, 'encoder.bin');
if (!existsSync(pack)) {
  const { makeFolder } = await import('../tools/encoder/folder.mjs');
  const folder = await makeFolder('all-MiniLM-L6-v2', { seed: 6 });
  const src = join(DIR, 'folder');
  for (const [name, bytes] of Object.entries(folder)) {
    mkdirSync(join(src, name, '..'), { recursive: true });
    writeFileSync(join(src, name), bytes);
  }
  execFileSync(process.execPath, [here('../tools/mlrt.mjs'), 'convert', src, join(DIR, 'model.q8.apr'), '--quantize', 'q8', '--embeddings', 'q8'], { stdio: 'inherit' });
  const files = Object.fromEntries(Object.keys(folder).filter((n) => n !== 'model.safetensors').map((n) => [n, folder[n]]));
  files['model.apr'] = readFileSync(join(DIR, 'model.q8.apr'));
  writeFileSync(pack, packFiles(files));
}

// ---- 16-token texts: 14 words, each one wordpiece of bert-base-uncased
const WORDS = ('the of and to in is was for on as with by he at from his an were are which this be or has had not but first one their its new after who they have her she two been other when there all during into school time may years more most only over city some world would where later up such used many can state about national out known university united then made').split(' ');
let seed = 7;
const rand = (n) => { seed = (seed * 1103515245 + 12345) >>> 0; return seed % n; };
const texts = Array.from({ length: 400 }, () => Array.from({ length: 14 }, () => WORDS[rand(WORDS.length)]).join(' '));
{ // check the token count with mlrt's own tokenizer
  const { createRuntime } = await import('../wasm/mlrt.mjs');
  const rt = await createRuntime();
  const tok = rt.loadTokenizer(unpackTokenizer());
  const lens = new Set(texts.map((t) => tok.encode(t).attentionMask.reduce((a, b) => a + b, 0))); // (the file pads to 128: pads are not computed)
  if (lens.size !== 1 || !lens.has(16)) throw new Error(`texts tokenize to ${[...lens]} tokens, expected 16`);
  tok.free?.();
}
function unpackTokenizer() {
  return readFileSync(join(DIR, 'folder', 'tokenizer.json'));
}

const modules = [
  { name: 'embed-bench-worker.mjs', type: 'ESModule', path: here('./embed-bench-worker.mjs') },
  { name: 'mlrt.mjs', type: 'ESModule', path: here('../wasm/mlrt.mjs') },
  { name: 'pack.mjs', type: 'ESModule', path: here('./pack.mjs') },
  { name: 'wasm/crc32.mjs', type: 'ESModule', path: here('../wasm/crc32.mjs') },
  { name: 'mlrt-relaxed.wasm', type: 'CompiledWasm', path: join(WASM, 'mlrt-relaxed.wasm') },
  { name: 'mlrt.wasm', type: 'CompiledWasm', path: join(WASM, 'mlrt.wasm') },
  { name: 'mlrt-scalar.wasm', type: 'CompiledWasm', path: join(WASM, 'mlrt-scalar.wasm') },
  { name: 'encoder.bin', type: 'Data', path: pack },
];
async function post(base, body) {
  const t0 = performance.now();
  const res = await fetch(new URL('embed', base), { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const v = await res.json();
  if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${JSON.stringify(v)}`);
  return performance.now() - t0;
}

const V8_FLAGS = opt('--v8-flags', '').split(/\s+/).filter(Boolean);
const server = await startWorkerd({ v8Flags: V8_FLAGS }, modules, { MLRT_BUILD: BUILD });
try {
  await new Promise((r) => setTimeout(r, 500));
  const rss = { start: rssBytes(server.pid) };
  const c0 = cpuTicks(server.pid);
  const first = await post(server.url, JSON.stringify({ texts: [texts[0]] }));
  const firstCpuMs = ((cpuTicks(server.pid) - c0) * 1000) / HZ;
  rss.loaded = rssBytes(server.pid);
  for (let i = 1; i <= 50; i++) await post(server.url, JSON.stringify({ texts: [texts[i]] })); // warm-up: JIT tiers
  const perRequestCpu = [], wall = [];
  let q = 51;
  for (let b = 0; b < BATCHES; b++) {
    const t = cpuTicks(server.pid);
    for (let i = 0; i < PER_BATCH; i++) wall.push(await post(server.url, JSON.stringify({ texts: [texts[q++ % texts.length]] })));
    perRequestCpu.push(((cpuTicks(server.pid) - t) * 1000) / HZ / PER_BATCH);
  }
  rss.after = rssBytes(server.pid);
  const info = await (await fetch(new URL('info', server.url))).json();
  let load = null;
  if (LOAD > 0) {
    const { runMixedLoad } = await import('./loadtest.mjs');
    const good = texts.slice(0, 9).map((t) => ({ path: 'embed', contentType: 'application/json', body: JSON.stringify({ texts: [t] }), status: 200 }));
    load = await runMixedLoad({ url: server.url, requests: LOAD, connections: CONNECTIONS,
      mix: [...good, { path: 'embed', contentType: 'application/json', body: '{"texts": [', status: 400 }] });
    rss.afterLoad = rssBytes(server.pid);
  }
  const out = {
    build: info.build, v8Flags: V8_FLAGS, requests: BATCHES * PER_BATCH, firstRequestMs: first, firstRequestCpuMs: firstCpuMs,
    cpuMsPerRequest: { median: median(perRequestCpu), min: Math.min(...perRequestCpu), max: Math.max(...perRequestCpu) },
    wallMs: { median: median(wall), p99: quantile(wall, 0.99) }, rss, wasmMemoryBytes: info.wasmMemoryBytes, bundleBytes: info.bundleBytes, load,
  };
  console.log(`POST /embed under bare workerd (${out.build}${V8_FLAGS.length ? `, V8 flags ${V8_FLAGS.join(' ')}` : ''}; Q8 all-MiniLM-L6-v2 shape, 16-token texts, one per request), ${out.requests} sequential requests after a warm-up of 50:`);
  console.log('| measure | value |');
  console.log('|---|---:|');
  console.log(`| CPU per request, median of ${BATCHES} batch means (range) | ${out.cpuMsPerRequest.median.toFixed(1)} ms (${out.cpuMsPerRequest.min.toFixed(1)}–${out.cpuMsPerRequest.max.toFixed(1)}) |`);
  console.log(`| time per request at the client, median · p99 | ${out.wallMs.median.toFixed(1)} · ${out.wallMs.p99.toFixed(1)} ms |`);
  console.log(`| first request (loads the encoder): time · workerd CPU | ${first.toFixed(0)} ms · ${firstCpuMs.toFixed(0)} ms |`);
  console.log(`| the isolate's wasm memory · encoder.bin (Data module) | ${mb(out.wasmMemoryBytes)} · ${mb(out.bundleBytes)} MB |`);
  console.log(`| workerd RSS: at start · after the first request · after all | ${mb(rss.start)} · ${mb(rss.loaded)} · ${mb(rss.after)} MB |`);
  if (load) {
    const errors = load.errors + load.wrong;
    console.log(`| load: ${LOAD} requests over ${CONNECTIONS} connections, 10% bad bodies | ${JSON.stringify(load.byStatus)}, ${load.errors} errors (${load.timeouts} timeouts), ${load.wrong} unexpected statuses; p50 ${load.p50} ms, p99 ${load.p99} ms |`);
    if (errors) process.exitCode = 1;
  }
  const json = argv.indexOf('--json');
  if (json >= 0) writeFileSync(argv[json + 1], `${JSON.stringify(out, null, 2)}\n`);
} finally {
  await server.stop();
}
