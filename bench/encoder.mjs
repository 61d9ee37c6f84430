#!/usr/bin/env node
// Sentence encoders (issue 21): mlrt against onnxruntime-web, the same weights, the same token ids, one run.
//
//   node bench/encoder.mjs [--quick] [--json FILE] [--only mlrt,ort-1t,ort-2t,ort-q8-1t] [--models minilm,wordnet]
//                          [--mlrt-wasm FILE]   (mlrt from that build's raw exports, until rt.loadEncoder lands)
//
// Models: the all-MiniLM-L6-v2 shape (random BERT-init weights from tools/encoder/, seed 6, F32,
// 22.7M parameters) and the trained models/wordnet/ encoder (4.7M parameters, 64 positions). ORT runs
// the ONNX graph of tools/encoder/onnx.mjs built from the same weights (and its dynamic-Q8 form, as
// onnxruntime's quantize_dynamic writes it: int8 weights, MatMulInteger); mlrt loads the HF folder
// (model.safetensors, config.json, tokenizer.json, sentence-transformers files) with rt.loadEncoder
// (its row reads "n/a" until the build has it). Inputs are token ids ([CLS] wordpieces [SEP], no
// padding), so the tokenizer is not in the figures.
// Every (runtime, model, mode) runs in a fresh child process, RUNS times; the table shows medians.
//   cold:    in the fresh process, import of the runtime -> the first embedding (T = 16), model bytes
//            already read; also the time since the process started.
//   latency: median per call after a warm-up, T = 16 / 64 / 128, batch 1 and batch 8 (texts/s too), wall
//            time and this process's CPU time per call (all threads; for 1 thread, the figure that a
//            busy machine disturbs least).
//   rss:     peak RSS after load + 10 batches of 8 at the longest T (the model's file bytes, read by the
//            child, included), and the same over a bare Node child of this harness (no runtime, no model).
//   wasm:    bytes of the WebAssembly modules the runtime compiled (seen by wrapping WebAssembly.*).
import { fork } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const OUT = path.join(REPO, 'build/bench-encoder');
const argv = process.argv.slice(2);
const value = (k) => { const i = argv.indexOf(k); return i >= 0 ? argv[i + 1] : undefined; };
const QUICK = argv.includes('--quick');
const RUNS = QUICK ? 1 : 3;
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };

const MODELS = {
  minilm: { label: 'all-MiniLM-L6-v2 shape (random weights, F32, 6 x 384, 22.7M params)', lengths: [16, 64, 128] },
  wordnet: { label: 'models/wordnet (trained, F32, 4 x 128, 4.7M params, 64 positions)', lengths: [16, 64] },
};
const BATCHES = [1, 8];

// ------------------------------------------------------------------ model files (parent, before any child)

const FOLDER_FILES = ['model.safetensors', 'config.json', 'tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json',
  'vocab.txt', 'modules.json', '1_Pooling/config.json', 'sentence_bert_config.json'];

const PREPARED = 'v2'; // bump when the files below change

async function prepare(model) {
  const dir = path.join(OUT, model);
  const stamp = path.join(dir, '.done');
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === PREPARED) return dir;
  mkdirSync(path.join(dir, '1_Pooling'), { recursive: true });
  const { folderToOnnx } = await import('../tools/encoder/onnx.mjs');
  let files;
  if (model === 'minilm') {
    const { makeFolder } = await import('../tools/encoder/folder.mjs');
    files = await makeFolder('all-MiniLM-L6-v2');
  } else {
    const { wordnetFolder } = await import('../tools/encoder/goldens.mjs');
    files = wordnetFolder();
  }
  for (const [name, bytes] of Object.entries(files)) writeFileSync(path.join(dir, name), bytes);
  writeFileSync(path.join(dir, 'model.onnx'), folderToOnnx(files));
  writeFileSync(path.join(dir, 'model-q8.onnx'), folderToOnnx(files, { quantize: 'q8' }));
  writeFileSync(stamp, PREPARED);
  return dir;
}

// ------------------------------------------------------------------ runtimes (in the child)

function rng(seed) { // mulberry32
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
/** n sequences of T token ids: [CLS] wordpieces [SEP]. */
function sequences(n, T, seed) {
  const r = rng(seed);
  return Array.from({ length: n }, () => [101, ...Array.from({ length: T - 2 }, () => 1996 + Math.floor(r() * (30522 - 1996))), 102]);
}

async function ortRuntime(dir, threads, file = 'model.onnx') {
  const bytes = new Uint8Array(readFileSync(path.join(dir, file)));
  const t0 = performance.now();
  const { ortEncoder } = await import('../tools/encoder/onnx.mjs');
  const e = await ortEncoder(bytes, { threads });
  return { startedAt: t0, embed: (ids) => e.embed(ids), release: () => e.release() };
}

async function mlrtRuntime(dir) {
  const files = Object.fromEntries(FOLDER_FILES.map((n) => [n, new Uint8Array(readFileSync(path.join(dir, n)))]));
  const wasmFile = process.env.MLRT_WASM; // --mlrt-wasm FILE: that build, through its raw exports
  if (wasmFile) return mlrtRawRuntime(files, wasmFile);
  if (!existsSync(path.join(REPO, 'wasm/mlrt.wasm'))) throw new Error('n/a: wasm/mlrt.wasm is not built (make)');
  const t0 = performance.now();
  const { createRuntime } = await import('../wasm/mlrt.mjs');
  const rt = await createRuntime();
  if (typeof rt.loadEncoder !== 'function') throw new Error('n/a: rt.loadEncoder is not in this build yet (try --mlrt-wasm FILE)');
  const enc = await rt.loadEncoder(files);
  return { startedAt: t0, embed: (ids) => enc.embedTokens({ ids }), release: () => enc.free() };
}

/** mlrt through the raw wasm exports of a build (mlrt_load_files, mlrt_run): for an encoder build whose
 * JS API has not landed yet. Single-threaded builds only (the SIMD128 mlrt.wasm). */
async function mlrtRawRuntime(files, wasmFile) {
  const bytes = readFileSync(wasmFile);
  const t0 = performance.now();
  const module = await WebAssembly.compile(bytes);
  const imports = {};
  let memory;
  for (const { module: m, name, kind } of WebAssembly.Module.imports(module)) {
    if (kind === 'memory') { memory = new WebAssembly.Memory({ initial: 256, maximum: 32768 }); (imports[m] ??= {})[name] = memory; }
    else (imports[m] ??= {})[name] = name === 'emscripten_resize_heap'
      ? (req) => { const need = Math.ceil(((req >>> 0) - memory.buffer.byteLength) / 65536); if (need > 0) memory.grow(need); return 1; }
      : name === 'emscripten_memcpy_big' ? (d, s, n) => { new Uint8Array(memory.buffer).copyWithin(d, s, s + n); return d; } : () => {};
  }
  const { exports: x } = await WebAssembly.instantiate(module, imports);
  x._initialize?.();
  const buf = () => (x.memory ?? memory).buffer;
  const put = (b) => { const p = x.mlrt_alloc(b.length || 1); new Uint8Array(buf()).set(b, p); return p; };
  const cstr = (s) => put(new TextEncoder().encode(s + '\0'));
  const err = x.mlrt_alloc(324);
  const fail = () => { const m = new Uint8Array(buf()); let e = err + 4; while (m[e]) e++; return new Error(new TextDecoder().decode(m.subarray(err + 4, e))); };
  const names = Object.keys(files), list = x.mlrt_alloc(12 * names.length);
  names.forEach((n, i) => {
    const np = cstr(n), bp = put(files[n]), d = new DataView(buf());
    d.setUint32(list + 12 * i, np, true); d.setUint32(list + 12 * i + 4, bp, true); d.setUint32(list + 12 * i + 8, files[n].length, true);
  });
  const model = x.mlrt_load_files(list, names.length, 0, err);
  if (!model) throw fail();
  const inNames = ['input_ids', 'attention_mask', 'token_type_ids'].map(cstr), desc = x.mlrt_alloc(3 * 88);
  let cap = 0, data = [];
  const embed = (ids) => { // mlrt_tensor: name, dtype (13 = I64), rank, dims[8] at +16, data at +80
    const rows = ids.length, width = ids[0].length, n = rows * width;
    if (n > cap) { for (const p of data) x.mlrt_free_ptr?.(p); cap = n; data = [0, 1, 2].map(() => x.mlrt_alloc(8 * n)); }
    const d = new DataView(buf());
    for (let r = 0; r < rows; r++) {
      for (let j = 0; j < width; j++) {
        const o = 8 * (r * width + j);
        d.setBigInt64(data[0] + o, BigInt(ids[r][j]), true); d.setBigInt64(data[1] + o, 1n, true); d.setBigInt64(data[2] + o, 0n, true);
      }
    }
    for (let k = 0; k < 3; k++) {
      const at = desc + 88 * k;
      d.setUint32(at, inNames[k], true); d.setUint32(at + 4, 13, true); d.setUint32(at + 8, 2, true);
      d.setBigInt64(at + 16, BigInt(rows), true); d.setBigInt64(at + 24, BigInt(width), true); d.setUint32(at + 80, data[k], true);
    }
    if (x.mlrt_run(model, desc, 3, err) !== 0) throw fail();
    const out = x.mlrt_output(model, 0), od = new DataView(buf());
    const len = Number(od.getBigInt64(out + 16, true) * od.getBigInt64(out + 24, true)), p = od.getUint32(out + 80, true);
    return new Float32Array(buf().slice(p, p + 4 * len));
  };
  return { startedAt: t0, embed, release: () => x.mlrt_free?.(model) };
}

const RUNTIMES = {
  mlrt: (dir) => mlrtRuntime(dir),
  'ort-1t': (dir) => ortRuntime(dir, 1),
  'ort-2t': (dir) => ortRuntime(dir, 2),
  'ort-q8-1t': (dir) => ortRuntime(dir, 1, 'model-q8.onnx'),
};

function watchWasm() { // bytes of every module compiled from here on (probes under 4 KB left out)
  const seen = [];
  const note = (b) => { const n = b?.byteLength; if (typeof n === 'number' && n >= 4096) seen.push(n); };
  const W = WebAssembly, { compile, instantiate, Module } = W;
  W.compile = function (b, ...r) { note(b); return compile.call(this, b, ...r); };
  W.instantiate = function (b, ...r) { if (!(b instanceof Module)) note(b); return instantiate.call(this, b, ...r); };
  W.Module = new Proxy(Module, { construct(T, args) { note(args[0]); return Reflect.construct(T, args); } });
  for (const k of ['compileStreaming', 'instantiateStreaming']) {
    const f = W[k];
    if (f) W[k] = async function (src, ...r) { const resp = await src; note(new Uint8Array(await resp.clone().arrayBuffer())); return f.call(this, resp, ...r); };
  }
  return seen;
}

async function child(mode, model, rid) {
  const dir = path.join(OUT, model);
  if (mode === 'bare') { // bare Node: this harness with no runtime and no model bytes read
    const xs = sequences(8, MODELS[model].lengths.at(-1), 3);
    return { maxRssKB: process.resourceUsage().maxRSS, keep: xs.length };
  }
  const wasm = watchWasm();
  const first = sequences(1, 16, 1);
  const r = await RUNTIMES[rid](dir);
  const y = await r.embed(first);
  const now = performance.now();
  const res = { coldMs: now - r.startedAt, sinceStartMs: now, wasmBytes: wasm.reduce((a, b) => a + b, 0), wasmModules: wasm.length };
  if (mode === 'cold') { res.first = Array.from(y.slice(0, 8)); return res; }
  if (mode === 'rss') {
    const T = MODELS[model].lengths.at(-1), xs = sequences(8, T, 3);
    let acc = 0;
    for (let k = 0; k < (QUICK ? 3 : 10); k++) acc += (await r.embed(xs))[0];
    res.maxRssKB = process.resourceUsage().maxRSS;
    res.acc = acc;
    return res;
  }
  // latency
  res.cells = {};
  res.check = Array.from(await r.embed(sequences(4, 24, 9)));
  for (const T of MODELS[model].lengths) {
    for (const B of BATCHES) {
      const pool = Array.from({ length: 8 }, (_, k) => sequences(B, T, 100 + 10 * T + k));
      const warm = performance.now();
      for (let k = 0; k < 3 || performance.now() - warm < (QUICK ? 150 : 500); k++) await r.embed(pool[k & 7]);
      const t = [], cpu = [];
      const start = performance.now();
      for (let k = 0; k < 5 || (performance.now() - start < (QUICK ? 400 : 1500) && k < 400); k++) {
        const c0 = process.cpuUsage(), t0 = performance.now();
        await r.embed(pool[k & 7]);
        t.push(performance.now() - t0);
        const c = process.cpuUsage(c0);
        cpu.push((c.user + c.system) / 1000);
      }
      res.cells[`${T}x${B}`] = { ms: median(t), cpuMs: median(cpu), iters: t.length };
    }
  }
  await r.release();
  return res;
}

// ------------------------------------------------------------------ parent

function run(mode, model, rid) {
  return new Promise((resolve) => {
    const c = fork(fileURLToPath(import.meta.url), ['--child', mode, model, rid, ...(QUICK ? ['--quick'] : [])],
      { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
    let err = '', res = null;
    const timer = setTimeout(() => { err += '\nError: timed out after 600 s'; c.kill('SIGKILL'); }, 600_000);
    c.stderr.on('data', (d) => { err += d; });
    c.on('message', (m) => { res = m; });
    c.on('exit', () => {
      clearTimeout(timer);
      resolve(res ?? { error: err.trim().split('\n').find((l) => /Error|n\/a/.test(l))?.replace(/^.*?Error: /, '') ?? (err.trim().split('\n')[0] || 'no result') });
    });
  });
}

async function measure(mode, model, rid) {
  const runs = [];
  for (let k = 0; k < RUNS; k++) {
    const load0 = os.loadavg()[0];
    const r = await run(mode, model, rid);
    if (r.error) return r;
    r.loadavg = Math.max(load0, os.loadavg()[0]);
    runs.push(r);
  }
  const out = { runs };
  for (const k of ['coldMs', 'sinceStartMs', 'maxRssKB', 'wasmBytes', 'loadavg']) if (runs[0][k] !== undefined) out[k] = median(runs.map((r) => r[k]));
  if (runs[0].cells) {
    out.cells = {};
    out.cpu = {};
    for (const key of Object.keys(runs[0].cells)) {
      out.cells[key] = median(runs.map((r) => r.cells[key].ms));
      out.cpu[key] = median(runs.map((r) => r.cells[key].cpuMs));
    }
    out.check = runs[0].check;
  }
  return out;
}

async function main() {
  if (value('--mlrt-wasm')) process.env.MLRT_WASM = path.resolve(value('--mlrt-wasm')); // inherited by the children
  const only = value('--only')?.split(',') ?? Object.keys(RUNTIMES);
  const models = value('--models')?.split(',') ?? Object.keys(MODELS);
  const results = {};
  for (const model of models) {
    const dir = await prepare(model);
    results[model] = { bare: await measure('bare', model, '-'), runtimes: {} };
    for (const rid of only) {
      const row = {};
      for (const mode of ['cold', 'latency', 'rss']) {
        row[mode] = await measure(mode, model, rid);
        console.error(`bench encoder: ${model} ${rid} ${mode} ${row[mode].error ? `failed: ${row[mode].error}` : 'done'}`);
        if (row[mode].error) break;
      }
      results[model].runtimes[rid] = row;
    }
    results[model].modelBytes = statSync(path.join(dir, 'model.safetensors')).size;
    results[model].onnxBytes = statSync(path.join(dir, 'model.onnx')).size;
  }
  report(results, models, only);
  const j = value('--json');
  if (j) writeFileSync(j, JSON.stringify(results, null, 2));
}

function report(results, models, rids) {
  const fmt = (n, d = 1) => (n == null || Number.isNaN(n) ? '—' : n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d }));
  const MiB = (kb) => kb / 1024;
  const lines = [`\n### Sentence encoders: mlrt vs onnxruntime-web (medians of ${RUNS} fresh processes; token ids in, tokenizer not timed)`];
  if (process.env.MLRT_WASM) lines.push(`mlrt: ${path.relative(REPO, process.env.MLRT_WASM)} through its raw exports (mlrt_load_files, mlrt_run)`);
  for (const model of models) {
    const R = results[model], L = MODELS[model].lengths;
    const bare = R.bare.maxRssKB;
    lines.push(`\n${MODELS[model].label}; model.safetensors ${fmt(R.modelBytes / 2 ** 20)} MiB, model.onnx ${fmt(R.onnxBytes / 2 ** 20)} MiB; bare Node ${fmt(MiB(bare))} MiB\n`);
    const cellCols = L.flatMap((T) => BATCHES.map((B) => `T=${T} b${B}`));
    lines.push(`| runtime | cold start | since process start | ${cellCols.join(' | ')} | peak RSS | RSS over bare | wasm bytes |`);
    lines.push(`|---|---:|---:|${cellCols.map(() => '---:').join('|')}|---:|---:|---:|`);
    for (const rid of rids) {
      const row = R.runtimes[rid];
      const err = row.cold.error ?? row.latency?.error ?? row.rss?.error;
      if (err) { lines.push(`| ${rid} | ${err.slice(0, 90)} |${' |'.repeat(cellCols.length + 5)}`); continue; }
      const cells = L.flatMap((T) => BATCHES.map((B) => {
        const ms = row.latency.cells[`${T}x${B}`], cpu = row.latency.cpu[`${T}x${B}`];
        return `${fmt(ms, ms < 10 ? 2 : 1)} ms (cpu ${fmt(cpu, cpu < 10 ? 2 : 1)}; ${fmt((1000 * B) / ms, 0)}/s)`;
      }));
      lines.push(`| ${rid} | ${fmt(row.cold.coldMs)} ms | ${fmt(row.cold.sinceStartMs)} ms | ${cells.join(' | ')} | ${fmt(MiB(row.rss.maxRssKB))} MiB | ${fmt(MiB(row.rss.maxRssKB - bare))} MiB | ${row.cold.wasmBytes.toLocaleString('en-US')} |`);
    }
    const m = R.runtimes.mlrt, o = R.runtimes['ort-1t'];
    if (m && o && !m.cold.error && !m.latency?.error && !o.cold.error && !o.latency?.error) {
      const ratios = L.map((T) => `T=${T} ${fmt(m.latency.cells[`${T}x1`] / o.latency.cells[`${T}x1`], 2)}x`);
      let d = 0;
      m.latency.check.forEach((v, i) => { d = Math.max(d, Math.abs(v - o.latency.check[i])); });
      lines.push(`\nmlrt / ORT 1 thread, batch 1: ${ratios.join(', ')}; cold start ${fmt(m.cold.coldMs / o.cold.coldMs, 3)}x; ` +
        `RSS over bare ${fmt(MiB(m.rss.maxRssKB - bare))} MiB vs model ${fmt(R.modelBytes / 2 ** 20)} MiB + 16; embeddings max |d| ${d.toExponential(1)}`);
      if (model === 'minilm') {
        const t16 = m.latency.cells['16x1'] / o.latency.cells['16x1'], t128 = m.latency.cells['128x1'] / o.latency.cells['128x1'];
        lines.push(`Targets (issue 21, f32): T=16 <= 0.5x ORT: ${t16 <= 0.5 ? 'met' : 'NOT met'}; T=128 <= 0.7x: ${t128 <= 0.7 ? 'met' : 'NOT met'}; ` +
          `cold <= 0.1x: ${m.cold.coldMs / o.cold.coldMs <= 0.1 ? 'met' : 'NOT met'}; RSS <= bare + model + 16 MiB: ${m.rss.maxRssKB - bare <= (R.modelBytes / 1024 + 16 * 1024) ? 'met' : 'NOT met'}`);
      }
    }
  }
  const loads = Object.values(results).flatMap((R) => Object.values(R.runtimes).flatMap((row) => Object.values(row).map((m) => m.loadavg).filter(Number.isFinite)));
  lines.push(`\nCells: wall median per call (CPU time per call of the whole process; texts/s). Machine: ${os.cpus().length} cores, 1-min load average during the runs ${fmt(Math.min(...loads))}–${fmt(Math.max(...loads))}: ` +
    'with other work on the machine, compare the CPU column and the ratios.');
  lines.push('Not measured here yet: transformers.js, ruvector-onnx-embeddings-wasm, batch 32, mlrt Q8 and threads.');
  console.log(lines.join('\n'));
}

if (argv[0] === '--child') {
  child(argv[1], argv[2], argv[3]).then((r) => { process.send(r); process.exit(0); }, (e) => { console.error(String(e?.stack ?? e)); process.exit(1); });
} else {
  main();
}
