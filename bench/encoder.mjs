#!/usr/bin/env node
// Sentence encoders (issue 21): mlrt against onnxruntime-web, the same weights, the same token ids, one run.
//
//   node bench/encoder.mjs [--quick] [--json FILE] [--only mlrt,mlrt-q8,mlrt-q8-relaxed,mlrt-2t,ort-1t,...] [--models minilm,wordnet]
//                          [--mlrt-wasm FILE]   (mlrt f32 from that build's raw exports instead of rt.loadEncoder)
//                          [--sync-read]        (mlrt reads its weights file with rt.loadEncoder's sync source, not loadEncoderAsync)
//
// Models: the all-MiniLM-L6-v2 shape (random BERT-init weights from tools/encoder/, seed 6, F32,
// 22.7M parameters) and the trained models/wordnet/ encoder (4.7M parameters, 64 positions). ORT runs
// the ONNX graph of tools/encoder/onnx.mjs built from the same weights (and its dynamic-Q8 form, as
// onnxruntime's quantize_dynamic writes it: int8 weights, MatMulInteger); mlrt loads the HF folder
// (model.safetensors, config.json, tokenizer.json, sentence-transformers files) with rt.loadEncoder
// (its row reads "n/a" until the build has it), its Q8 form from an .apr written by `mlrt convert FOLDER
// OUT.apr --quantize q8 --embeddings q8` (dense weights and word embeddings Q8), and on 2 threads
// (createRuntime({ threads: 2 }): a batch's texts split between the threads), and Q8 on the relaxed-SIMD
// build (mlrt-q8-relaxed: what createRuntime() picks on Node 22+, Chromium and workerd; Node 20 runs it
// under --experimental-wasm-relaxed-simd, given to its children). Inputs are token ids
// ([CLS] whole-word vocabulary entries [SEP], no padding), so the tokenizer is not in the figures,
// except for ruvector-onnx-embeddings-wasm (tract in wasm), which takes texts only: it gets the
// words of the same ids joined by spaces, which its tokenizer turns back into those ids. transformers.js
// does not install here (onnxruntime-node's postinstall downloads binaries): its row says so.
// A floor line: multiply-adds per text over the SIMD128 peak measured in the same run (bench/limits.c).
// Every (runtime, model, mode) runs in a fresh child process, RUNS times, the runtimes taking turns
// (round by round); the table shows medians, the ratio lines each round's ratio too.
//   cold:    in the fresh process, import of the runtime -> the first embedding (T = 16), model bytes
//            already read; also the time since the process started.
//   latency: median per call after a warm-up, T = 16 and the longest (batch 1), and batch 32 at T = 16 (texts/s too), wall
//            time and this process's CPU time per call (all threads; for 1 thread, the figure that a
//            busy machine disturbs least).
//   rss:     peak RSS after load + 10 batches of 8 at the longest T (the model's file bytes, read by the
//            child, included), and the same over a bare Node child of this harness (no runtime, no model).
//   wasm:    bytes of the WebAssembly modules the runtime compiled (seen by wrapping WebAssembly.*).
//   paired:  mlrt and ORT (f32; Q8) loaded at once in two processes, then windows of calls alternating
//            a b b a ... per cell after a 2 s warm-up each: the ratio of each adjacent pair, and their
//            median (a machine whose speed changes between seconds moves both sides of a pair alike).
import { fork, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sequences as sequencesOf, vocabWords } from './encoder-texts.mjs';
import { median } from './median.mjs';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const OUT = path.join(REPO, 'build/bench-encoder');
const argv = process.argv.slice(2);
const value = (k) => { const i = argv.indexOf(k); return i >= 0 ? argv[i + 1] : undefined; };
const QUICK = argv.includes('--quick');
const RUNS = QUICK ? 1 : 3;

const MODELS = {
  minilm: { label: 'all-MiniLM-L6-v2 shape (random weights, F32, 6 x 384, 22.7M params)', lengths: [16, 128], shape: { H: 384, L: 6, I: 1536 } },
  wordnet: { label: 'models/wordnet (trained, F32, 4 x 128, 4.7M params, 64 positions)', lengths: [16, 64], shape: { H: 128, L: 4, I: 512 } },
};
const BATCH = 32; // texts per call for the throughput column (at T = 16)
const cellsOf = (model) => [...MODELS[model].lengths.map((T) => [T, 1]), [16, BATCH]];
/** Multiply-adds per text of T tokens: the dense layers and attention (scores and values). */
const macsPerText = ({ H, L, I }, T) => L * T * (4 * H * H + 2 * H * I + 2 * T * H);

// ------------------------------------------------------------------ model files (parent, before any child)

const FOLDER_FILES = ['model.safetensors', 'config.json', 'tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json',
  'vocab.txt', 'modules.json', '1_Pooling/config.json', 'sentence_bert_config.json'];

const PREPARED = 'v3'; // bump when the files below change

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
  const cli = spawnSync(process.execPath, [path.join(REPO, 'tools/mlrt.mjs'), 'convert', dir, path.join(dir, 'model.q8.apr'), '--quantize', 'q8', '--embeddings', 'q8'], { encoding: 'utf8' });
  if (cli.status !== 0) console.error(`bench encoder: mlrt convert failed (mlrt-q8 rows will say so): ${cli.stderr.trim()}`);
  writeFileSync(stamp, PREPARED);
  return dir;
}

// ------------------------------------------------------------------ runtimes (in the child)

// The vocabulary and its whole words (bench/encoder-texts.mjs), read by the child.
let VOCAB = null, WORD_IDS = null;
function loadVocab(dir) {
  ({ vocab: VOCAB, words: WORD_IDS } = vocabWords(dir));
}
const sequences = (n, T, seed) => sequencesOf(WORD_IDS, n, T, seed);
const textOf = (ids) => ids.slice(1, -1).map((id) => VOCAB[id]).join(' ');

async function ortRuntime(dir, threads, file = 'model.onnx') {
  const bytes = readFileSync(path.join(dir, file)); // a Buffer is a Uint8Array (new Uint8Array(buffer) would copy it)
  const t0 = performance.now();
  const { ortEncoder } = await import('../tools/encoder/onnx.mjs');
  const e = await ortEncoder(bytes, { threads });
  return { startedAt: t0, embed: (ids) => e.embed(ids), release: () => e.release() };
}

async function mlrtRuntime(dir, { q8 = false, threads = 1, relaxed = false } = {}) {
  let names = FOLDER_FILES;
  if (q8) {
    if (!existsSync(path.join(dir, 'model.q8.apr'))) throw new Error('n/a: no model.q8.apr (mlrt convert failed)');
    names = ['model.q8.apr', ...FOLDER_FILES.filter((n) => n !== 'model.safetensors')];
  }
  // the weights file as a source: read straight into wasm memory by loadEncoder (never held twice), as
  // tools/mlrt.mjs reads it; the small files as bytes. With rt.loadEncoderAsync (and not --sync-read):
  // read in parts at once on Node's thread pool, opened inside the timed part.
  const SYNC_READ = argv.includes('--sync-read');
  const source = (p) => ({ byteLength: statSync(p).size, readInto: (d) => { const fd = openSync(p, 'r'); try { return readSync(fd, d, 0, d.length, 0); } finally { closeSync(fd); } } });
  const weights = (n) => n === 'model.safetensors' || n === 'model.q8.apr';
  const files = Object.fromEntries(names.map((n) => [n === 'model.q8.apr' ? 'model.apr' : n,
    weights(n) && !process.env.MLRT_WASM ? source(path.join(dir, n)) : readFileSync(path.join(dir, n))]));
  const wasmFile = process.env.MLRT_WASM; // --mlrt-wasm FILE: that build, through its raw exports
  if (wasmFile && !q8 && threads === 1) return mlrtRawRuntime(files, wasmFile);
  if (!existsSync(path.join(REPO, 'wasm/mlrt.wasm'))) throw new Error('n/a: wasm/mlrt.wasm is not built (make)');
  const t0 = performance.now();
  const { createRuntime } = await import('../wasm/mlrt.mjs');
  const rt = await createRuntime({ threads, relaxed });
  if (rt.build.threads !== threads) throw new Error(`n/a: ${threads} threads asked, ${rt.build.threads} running (${rt.build.threadsUnavailable})`);
  if (typeof rt.loadEncoder !== 'function') throw new Error('n/a: rt.loadEncoder is not in this build yet (try --mlrt-wasm FILE)');
  let enc;
  if (typeof rt.loadEncoderAsync === 'function' && !SYNC_READ) {
    const { open } = await import('node:fs/promises');
    const handles = [];
    for (const [n, src] of Object.entries(files)) {
      if (!src.readInto) continue;
      const fh = await open(path.join(dir, n === 'model.apr' ? 'model.q8.apr' : n), 'r');
      handles.push(fh);
      files[n] = { byteLength: src.byteLength, read: async (d, pos) => (await fh.read(d, 0, d.length, pos)).bytesRead };
    }
    try { enc = await rt.loadEncoderAsync(files); } finally { await Promise.all(handles.map((h) => h.close())); }
  } else {
    enc = rt.loadEncoder(files);
  }
  return { startedAt: t0, embed: (ids) => enc.embedTokens({ ids }), release: () => { enc.free(); rt.dispose(); } };
}

/** ruvector-onnx-embeddings-wasm (tract compiled to wasm): ONNX bytes and a tokenizer.json, texts in. Its
 * package is CommonJS in a "type": "module" folder, so its one file is evaluated as CommonJS here. */
async function ruvectorRuntime(dir) {
  const { createRequire } = await import('node:module');
  let main;
  try {
    main = createRequire(import.meta.url).resolve('ruvector-onnx-embeddings-wasm');
  } catch {
    throw new Error('n/a: ruvector-onnx-embeddings-wasm is not installed');
  }
  const onnx = readFileSync(path.join(dir, 'model.onnx')), tokenizer = readFileSync(path.join(dir, 'tokenizer.json'), 'utf8');
  const t0 = performance.now();
  const mod = { exports: {} };
  new Function('module', 'exports', 'require', '__dirname', '__filename', readFileSync(main, 'utf8'))(mod, mod.exports, createRequire(main), path.dirname(main), main);
  const r = mod.exports;
  const config = new r.WasmEmbedderConfig().setPooling(0).setNormalize(true).setMaxLength(512);
  let e;
  try {
    e = r.WasmEmbedder.withConfig(onnx, tokenizer, config);
  } catch (err) {
    throw new Error(`n/a: it refuses model.onnx: ${String(err?.message ?? err).replace(/\s+/g, ' ').slice(0, 160)}`);
  }
  return { startedAt: t0, embed: (ids) => e.embedBatch(ids.map(textOf)), release: () => e.free() };
}

async function transformersRuntime() {
  try {
    await import('@huggingface/transformers');
  } catch {
    throw new Error("n/a: @huggingface/transformers is not installed (onnxruntime-node's postinstall downloads binaries: no network here)");
  }
  throw new Error('n/a: transformers.js is installed, but this bench has no row for it yet');
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
  'mlrt-q8': (dir) => mlrtRuntime(dir, { q8: true }),
  'mlrt-2t': (dir) => mlrtRuntime(dir, { threads: 2 }),
  'mlrt-q8-relaxed': (dir) => mlrtRuntime(dir, { q8: true, relaxed: true }),
  'ort-1t': (dir) => ortRuntime(dir, 1),
  'ort-2t': (dir) => ortRuntime(dir, 2),
  'ort-q8-1t': (dir) => ortRuntime(dir, 1, 'model-q8.onnx'),
  'ort-q8-2t': (dir) => ortRuntime(dir, 2, 'model-q8.onnx'),
  ruvector: (dir) => ruvectorRuntime(dir),
  'transformers.js': () => transformersRuntime(),
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

// This process's peak RSS, KB: VmHWM (its own address space's high-water mark) where Linux gives it.
// getrusage's maxrss is not the child's own: execve keeps the larger of it and the forked copy of the
// parent's resident set, so a parent that had grown (preparing the models: ~380 MB) set every
// child's floor (a run printed "bare Node 382.8 MiB" and every runtime at 0 MiB over it).
function peakRssKB() {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    if (m) return Number(m[1]);
  } catch { /* not Linux */ }
  return process.resourceUsage().maxRSS;
}

async function child(mode, model, rid) {
  const dir = path.join(OUT, model);
  loadVocab(dir);
  if (mode === 'bare') { // bare Node: this harness with no runtime and no model bytes read
    const xs = sequences(8, MODELS[model].lengths.at(-1), 3);
    return { maxRssKB: peakRssKB(), keep: xs.length };
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
    res.maxRssKB = peakRssKB();
    res.acc = acc;
    return res;
  }
  if (mode === 'serve') return serve(r, model);
  // latency
  res.cells = {};
  res.check = Array.from(await r.embed(sequences(4, 24, 9)));
  for (const [T, B] of cellsOf(model)) {
    {
      const pool = Array.from({ length: B > 8 ? 2 : 8 }, (_, k) => sequences(B, T, 100 + 10 * T + k));
      const warm = performance.now();
      for (let k = 0; k < 2 || performance.now() - warm < (QUICK ? 150 : 500); k++) await r.embed(pool[k % pool.length]);
      const t = [], cpu = [];
      const start = performance.now();
      for (let k = 0; k < 5 || (performance.now() - start < (QUICK ? 400 : 1500) && k < 400); k++) {
        const c0 = process.cpuUsage(), t0 = performance.now();
        await r.embed(pool[k % pool.length]);
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

// Mode 'serve' (paired windows): the runtime stays loaded and answers the parent's
// { T, B, ms } with the median call time of a window of about ms milliseconds, until { exit }.
async function serve(r, model) {
  const pools = Object.fromEntries(cellsOf(model).map(([T, B]) => [`${T}x${B}`, Array.from({ length: B > 8 ? 2 : 8 }, (_, k) => sequences(B, T, 100 + 10 * T + k))]));
  for (const pool of Object.values(pools)) { // (a long warm-up: onnxruntime-web tiers its large module up over seconds)
    const warm = performance.now();
    for (let k = 0; k < 2 || performance.now() - warm < (QUICK ? 300 : 2000); k++) await r.embed(pool[k % pool.length]);
  }
  process.send({ ready: true });
  await new Promise((resolve) => {
    process.on('message', async (m) => {
      if (m.exit) { await r.release(); resolve(); return; }
      const pool = pools[`${m.T}x${m.B}`], t = [];
      await r.embed(pool[0]);
      const start = performance.now();
      for (let k = 0; k < 3 || (performance.now() - start < m.ms && k < 400); k++) {
        const t0 = performance.now();
        await r.embed(pool[k % pool.length]);
        t.push(performance.now() - t0);
      }
      process.send({ ms: median(t), calls: t.length });
    });
  });
  return { served: true };
}

// ------------------------------------------------------------------ parent

// Node 20's V8 runs relaxed SIMD only under this flag; Node 22 and later, Chromium and workerd run it by
// default, and createRuntime() then picks mlrt-relaxed.wasm. The *-relaxed rows' children get the flag
// (when this Node needs it), and so does ORT in the pair that compares with them.
const RELAXED_FLAG = '--experimental-wasm-relaxed-simd';
let needsFlag = null;
async function execArgvOf(relaxed) {
  needsFlag ??= !(await import('../wasm/mlrt.mjs')).relaxedSimdSupported();
  return relaxed && needsFlag ? [...process.execArgv, RELAXED_FLAG] : process.execArgv;
}
const isRelaxed = (rid) => rid.endsWith('-relaxed');

// Paired windows: a and b loaded at once in two processes, then windows of the same cell in the
// order a b b a a b b a ... (each process idle, blocked on its channel, while the other runs), so
// that a machine whose speed changes from second to second (this shared VM's spells) moves both
// sides of a pair alike. -> { [cell]: { ratio (median of the pairs' a / b), pairs: [a / b, ...] } }
async function pairedWindows(model, a, b) {
  const execArgv = await execArgvOf(isRelaxed(a) || isRelaxed(b)); // (both sides alike)
  const start = (rid) => new Promise((resolve) => {
    const c = fork(fileURLToPath(import.meta.url), ['--child', 'serve', model, rid, ...(QUICK ? ['--quick'] : [])], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'], execArgv });
    let err = '';
    c.stderr.on('data', (d) => { err += d; });
    const waiting = [];
    c.on('message', (m) => (m.ready ? resolve({ c, ask: (q) => new Promise((r) => { waiting.push(r); c.send(q); }) }) : waiting.shift()?.(m)));
    c.on('exit', () => { resolve(null); waiting.splice(0).forEach((r) => r({ error: err.trim().split('\n').at(-1) || 'exited' })); });
  });
  const A = await start(a), B = A && (await start(b));
  if (!A || !B) { A?.c.kill(); return null; }
  const out = {};
  try {
    for (const [T, B_] of cellsOf(model)) {
      const q = { T, B: B_, ms: T > 64 || B_ > 1 ? 600 : 250 }, pairs = [];
      for (let k = 0; k < (QUICK ? 4 : 12); k++) {
        const first = k % 2 ? B : A, second = k % 2 ? A : B;
        const x = await first.ask(q), y = await second.ask(q);
        if (x.error || y.error) return null;
        pairs.push(k % 2 ? y.ms / x.ms : x.ms / y.ms);
      }
      out[`${T}x${B_}`] = { ratio: median(pairs), pairs };
    }
  } finally {
    for (const side of [A, B]) side.c.send({ exit: true });
  }
  return out;
}

async function run(mode, model, rid) {
  const execArgv = await execArgvOf(isRelaxed(rid));
  return new Promise((resolve) => {
    const c = fork(fileURLToPath(import.meta.url), ['--child', mode, model, rid, ...(QUICK ? ['--quick'] : []), ...(argv.includes('--sync-read') ? ['--sync-read'] : [])],
      { stdio: ['ignore', 'ignore', 'pipe', 'ipc'], execArgv });
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

// A mode's runs of one runtime -> their medians.
function summarize(runs) {
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

async function timed(mode, model, rid) {
  const load0 = os.loadavg()[0];
  const r = await run(mode, model, rid);
  if (!r.error) r.loadavg = Math.max(load0, os.loadavg()[0]);
  return r;
}

async function measure(mode, model, rid) {
  const runs = [];
  for (let k = 0; k < RUNS; k++) {
    const r = await timed(mode, model, rid);
    if (r.error) return r;
    runs.push(r);
  }
  return summarize(runs);
}

// Every runtime's runs of a mode interleaved, round by round (the order reversed every other round),
// so that a machine whose speed drifts during the bench (a shared VM) moves every runtime's figures
// alike and the ratios between them hold.
async function measureRounds(mode, model, rids, rows) {
  const failed = (rid) => Object.values(rows[rid]).some((m) => m.error); // in this mode or an earlier one
  const runs = Object.fromEntries(rids.map((rid) => [rid, []]));
  for (let k = 0; k < RUNS; k++) {
    for (const rid of k % 2 ? [...rids].reverse() : rids) {
      if (failed(rid)) continue;
      const r = await timed(mode, model, rid);
      if (r.error) rows[rid][mode] = r;
      else runs[rid].push(r);
    }
  }
  for (const rid of rids) {
    if (!failed(rid)) rows[rid][mode] = summarize(runs[rid]);
    console.error(`bench encoder: ${model} ${rid} ${mode} ${rows[rid][mode]?.error ? `failed: ${rows[rid][mode].error}` : rows[rid][mode] ? 'done' : 'skipped'}`);
  }
}

async function main() {
  if (value('--mlrt-wasm')) process.env.MLRT_WASM = path.resolve(value('--mlrt-wasm')); // inherited by the children
  const only = value('--only')?.split(',') ?? Object.keys(RUNTIMES);
  const models = value('--models')?.split(',') ?? Object.keys(MODELS);
  const results = {};
  for (const model of models) {
    const dir = await prepare(model);
    results[model] = { bare: await measure('bare', model, '-'), runtimes: {} };
    const rows = Object.fromEntries(only.map((rid) => [rid, {}]));
    for (const mode of ['cold', 'latency', 'rss']) await measureRounds(mode, model, only, rows);
    for (const rid of only) results[model].runtimes[rid] = rows[rid];
    results[model].paired = {};
    for (const [a, b] of [['mlrt', 'ort-1t'], ['mlrt-q8', 'ort-q8-1t'], ['mlrt-q8-relaxed', 'ort-q8-1t']]) {
      if (!only.includes(a) || !only.includes(b) || Object.values(rows[a]).some((m) => m.error) || Object.values(rows[b]).some((m) => m.error)) continue;
      results[model].paired[`${a}/${b}`] = await pairedWindows(model, a, b);
      console.error(`bench encoder: ${model} paired ${a} / ${b} done`);
    }
    results[model].modelBytes = statSync(path.join(dir, 'model.safetensors')).size;
    results[model].onnxBytes = statSync(path.join(dir, 'model.onnx')).size;
    results[model].q8Bytes = statSync(path.join(dir, 'model.q8.apr'), { throwIfNoEntry: false })?.size ?? null;
  }
  // the machine's SIMD128 multiply-add peak, now (bench/limits.c): the floor of a text's time
  const { ensureLimitsWasm, measureLimits } = await import('./limits.mjs');
  const why = ensureLimitsWasm();
  const peak = why ? null : (await measureLimits({})).peakMaddPerSec;
  report(results, models, only, peak);
  const j = value('--json');
  if (j) writeFileSync(j, JSON.stringify({ ...results, peakMaddPerSec: peak }, null, 2));
}

function report(results, models, rids, peak) {
  const fmt = (n, d = 1) => (n == null || Number.isNaN(n) ? '—' : n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d }));
  // The ratio a / b round by round (the runtimes took turns: each round's pair ran minutes apart at
  // most), as ' (rounds x, y, z)'; '' for one round.
  const rounds = (a, b, get, digits = 2) => {
    const n = Math.min(a.runs?.length ?? 0, b.runs?.length ?? 0);
    if (n < 2) return '';
    return ` (rounds ${Array.from({ length: n }, (_, k) => fmt(get(a.runs[k]) / get(b.runs[k]), digits)).join(', ')})`;
  };
  const MiB = (kb) => kb / 1024;
  const lines = [`\n### Sentence encoders: mlrt vs onnxruntime-web (medians of ${RUNS} fresh processes; token ids in, tokenizer not timed)`];
  if (process.env.MLRT_WASM) lines.push(`mlrt: ${path.relative(REPO, process.env.MLRT_WASM)} through its raw exports (mlrt_load_files, mlrt_run)`);
  for (const model of models) {
    const R = results[model], C = cellsOf(model);
    const bare = R.bare.maxRssKB;
    lines.push(`\n${MODELS[model].label}; model.safetensors ${fmt(R.modelBytes / 2 ** 20)} MiB, model.onnx ${fmt(R.onnxBytes / 2 ** 20)} MiB, ` +
      `model.q8.apr ${fmt(R.q8Bytes / 2 ** 20)} MiB; bare Node ${fmt(MiB(bare))} MiB\n`);
    const cellCols = C.map(([T, B]) => `T=${T} b${B}`);
    lines.push(`| runtime | cold start | since process start | ${cellCols.join(' | ')} | peak RSS | RSS over bare | wasm bytes |`);
    lines.push(`|---|---:|---:|${cellCols.map(() => '---:').join('|')}|---:|---:|---:|`);
    for (const rid of rids) {
      const row = R.runtimes[rid];
      const err = row.cold.error ?? row.latency?.error ?? row.rss?.error;
      if (err) { lines.push(`| ${rid} | ${err.slice(0, 170)} |${' |'.repeat(cellCols.length + 5)}`); continue; }
      const cells = C.map(([T, B]) => {
        const ms = row.latency.cells[`${T}x${B}`], cpu = row.latency.cpu[`${T}x${B}`];
        return `${fmt(ms, ms < 10 ? 2 : 1)} ms (cpu ${fmt(cpu, cpu < 10 ? 2 : 1)}; ${fmt((1000 * B) / ms, 0)}/s)`;
      });
      lines.push(`| ${rid} | ${fmt(row.cold.coldMs)} ms | ${fmt(row.cold.sinceStartMs)} ms | ${cells.join(' | ')} | ${fmt(MiB(row.rss.maxRssKB))} MiB | ${fmt(MiB(row.rss.maxRssKB - bare))} MiB | ${row.cold.wasmBytes.toLocaleString('en-US')} |`);
    }
    const ok = (rid) => R.runtimes[rid] && !R.runtimes[rid].cold.error && !R.runtimes[rid].latency?.error && !R.runtimes[rid].rss?.error;
    const ratio = (a, b) => C.map(([T, B]) => `T=${T} b${B} ${fmt(R.runtimes[a].latency.cells[`${T}x${B}`] / R.runtimes[b].latency.cells[`${T}x${B}`], 2)}x` +
      rounds(R.runtimes[a].latency, R.runtimes[b].latency, (r) => r.cells[`${T}x${B}`].ms)).join(', ');
    const L = MODELS[model].lengths;
    const m = R.runtimes.mlrt, o = R.runtimes['ort-1t'];
    if (ok('mlrt') && ok('ort-1t')) {
      const ratios = L.map((T) => `T=${T} ${fmt(m.latency.cells[`${T}x1`] / o.latency.cells[`${T}x1`], 2)}x${rounds(m.latency, o.latency, (r) => r.cells[`${T}x1`].ms)}`);
      let d = 0;
      m.latency.check.forEach((v, i) => { d = Math.max(d, Math.abs(v - o.latency.check[i])); });
      lines.push(`\nmlrt / ORT 1 thread, batch 1: ${ratios.join(', ')}; cold start ${fmt(m.cold.coldMs / o.cold.coldMs, 3)}x${rounds(m.cold, o.cold, (r) => r.coldMs, 3)}; ` +
        `RSS over bare ${fmt(MiB(m.rss.maxRssKB - bare))} MiB vs model ${fmt(R.modelBytes / 2 ** 20)} MiB + 16; embeddings max |d| ${d.toExponential(1)}`);
      if (model === 'minilm') {
        const t16 = m.latency.cells['16x1'] / o.latency.cells['16x1'], t128 = m.latency.cells['128x1'] / o.latency.cells['128x1'];
        lines.push(`Targets (issue 21, f32): T=16 <= 0.5x ORT: ${t16 <= 0.5 ? 'met' : 'NOT met'}; T=128 <= 0.7x: ${t128 <= 0.7 ? 'met' : 'NOT met'}; ` +
          `cold <= 0.1x: ${m.cold.coldMs / o.cold.coldMs <= 0.1 ? 'met' : 'NOT met'}; RSS <= bare + model + 16 MiB: ${m.rss.maxRssKB - bare <= (R.modelBytes / 1024 + 16 * 1024) ? 'met' : 'NOT met'}`);
      }
    }
    if (ok('mlrt-q8') && ok('ort-q8-1t')) lines.push(`mlrt Q8 / ORT dynamic Q8, 1 thread: ${ratio('mlrt-q8', 'ort-q8-1t')}; RSS over bare ${fmt(MiB(R.runtimes['mlrt-q8'].rss.maxRssKB - bare))} MiB`);
    if (ok('mlrt-q8-relaxed') && ok('ort-q8-1t')) lines.push(`mlrt Q8 relaxed / ORT dynamic Q8, 1 thread (ORT's row without the flag): ${ratio('mlrt-q8-relaxed', 'ort-q8-1t')}`);
    for (const [pair, P] of Object.entries(R.paired ?? {})) {
      if (!P) { lines.push(`Paired windows ${pair}: n/a (a process failed)`); continue; }
      lines.push(`Paired windows ${pair} (both loaded at once, alternating windows a b b a ...; median of the pairs' ratios, then each pair's): ` +
        Object.entries(P).map(([cell, { ratio: v, pairs }]) => `${cell.replace(/^(\d+)x(\d+)$/, 'T=$1 b$2')} ${fmt(v, 2)}x (${pairs.map((x) => fmt(x, 2)).join(' ')})`).join('; '));
      if (model === 'minilm' && pair === 'mlrt/ort-1t') lines.push(`Targets by paired windows (f32): T=16 <= 0.5x: ${P['16x1'].ratio <= 0.5 ? 'met' : 'NOT met'}; T=128 <= 0.7x: ${P['128x1'].ratio <= 0.7 ? 'met' : 'NOT met'}`);
      if (model === 'minilm' && pair.startsWith('mlrt-q8')) {
        lines.push(`Targets by paired windows (Q8${pair.startsWith('mlrt-q8-relaxed') ? ' relaxed, the build Node 22+, Chromium and workerd pick' : ', SIMD128'}): ` +
          `T=16 <= 0.7x: ${P['16x1'].ratio <= 0.7 ? 'met' : 'NOT met'}; T=128 <= 1.0x: ${P['128x1'].ratio <= 1.0 ? 'met' : 'NOT met'}`);
      }
    }
    if (ok('mlrt-q8') && ok('mlrt')) lines.push(`mlrt Q8 / mlrt f32: ${ratio('mlrt-q8', 'mlrt')}`);
    if (ok('mlrt-2t') && ok('mlrt')) lines.push(`mlrt 2 threads / 1 thread (wall; < 1 is faster): ${ratio('mlrt-2t', 'mlrt')}`);
    if (ok('mlrt-2t') && ok('ort-2t')) lines.push(`mlrt 2 threads / ORT 2 threads: ${ratio('mlrt-2t', 'ort-2t')}`);
    if (ok('ort-2t') && ok('ort-1t')) lines.push(`ORT 2 threads / 1 thread: ${ratio('ort-2t', 'ort-1t')}`);
    if (peak) {
      const floor = (T) => (1000 * macsPerText(MODELS[model].shape, T)) / peak;
      // against CPU time per call: on one thread, the figure a busy machine disturbs least
      const at = (rid, T) => (ok(rid) ? ` (mlrt f32 at ${fmt(floor(T) / R.runtimes[rid].latency.cpu[`${T}x1`] * 100, 0)}% of it, by CPU time)` : '');
      lines.push(`Floor (multiply-adds per text / the SIMD128 peak measured now, ${fmt(peak / 1e9)} G madd/s, 1 thread): ` +
        L.map((T) => `T=${T} ${fmt(macsPerText(MODELS[model].shape, T) / 1e6, 0)} M madds, ${fmt(floor(T), 2)} ms${at('mlrt', T)}`).join('; ') +
        `; batch ${BATCH} x T=16 at most ${fmt(1000 / floor(16), 0)} texts/s per thread`);
    }
  }
  const loads = Object.values(results).flatMap((R) => Object.values(R.runtimes).flatMap((row) => Object.values(row).map((m) => m.loadavg).filter(Number.isFinite)));
  lines.push(`\nCells: wall median per call (CPU time per call of the whole process; texts/s). Machine: ${os.cpus().length} cores, 1-min load average during the runs ${loads.length ? `${fmt(Math.min(...loads))}–${fmt(Math.max(...loads))}` : '—'}: ` +
    'with other work on the machine, compare the CPU column and the ratios.');
  lines.push('mlrt-q8: dense weights and word embeddings Q8 (mlrt convert --quantize q8 --embeddings q8); ort-q8: quantize_dynamic\'s form (MatMulInteger, embeddings f32). ' +
    'ruvector: texts in (its tokenizer timed), the same words as the ids. Batch 32 x T=128 on threads: bench/encoder-threads.mjs.');
  console.log(lines.join('\n'));
}

if (argv[0] === '--child') {
  child(argv[1], argv[2], argv[3]).then((r) => { process.send(r); process.exit(0); }, (e) => { console.error(String(e?.stack ?? e)); process.exit(1); });
} else {
  main();
}
