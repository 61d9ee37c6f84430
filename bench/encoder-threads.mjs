#!/usr/bin/env node
// encoder-threads.mjs — the encoder's rows split between threads, on the threaded build's raw exports:
// the main thread runs its rows on the model, a worker runs the others on a fork (mlrt_model_fork:
// the weights shared, scratch of its own) over the same shared memory. Checks that the split gives
// the bits of one thread, and prints the speed-up.
//
//   node bench/encoder-threads.mjs [--shape minilm|tiny] [--runs 10]
import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import { threadImports } from '../wasm/threads.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => { const i = args.indexOf(`--${name}`); return i < 0 ? dflt : args[i + 1]; };
const SHAPES = { minilm: [384, 6, 12, 1536, 30522, 512], tiny: [128, 4, 4, 512, 30522, 64] };
const [H, L, A, I, V, P] = SHAPES[opt('shape', 'minilm')];
const runs = Number(opt('runs', 10));

let seed = 7;
const gauss = () => {
  seed = (seed * 1103515245 + 12345) >>> 0; const u = (seed + 1) / 4294967297;
  seed = (seed * 1103515245 + 12345) >>> 0; return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * seed / 4294967296);
};
function safetensors() {
  const t = [], add = (name, dims, fill) => {
    const v = new Float32Array(dims.reduce((a, b) => a * b, 1));
    for (let i = 0; i < v.length; i++) v[i] = fill ?? gauss() * 0.02;
    t.push({ name, dims, v });
  };
  add('embeddings.word_embeddings.weight', [V, H]); add('embeddings.position_embeddings.weight', [P, H]);
  add('embeddings.token_type_embeddings.weight', [2, H]); add('embeddings.LayerNorm.weight', [H], 1); add('embeddings.LayerNorm.bias', [H], 0);
  for (let l = 0; l < L; l++) {
    for (const [n, o, i] of [['attention.self.query', H, H], ['attention.self.key', H, H], ['attention.self.value', H, H],
      ['attention.output.dense', H, H], ['intermediate.dense', I, H], ['output.dense', H, I]]) {
      add(`encoder.layer.${l}.${n}.weight`, [o, i]); add(`encoder.layer.${l}.${n}.bias`, [o], 0);
    }
    for (const n of ['attention.output.LayerNorm', 'output.LayerNorm']) { add(`encoder.layer.${l}.${n}.weight`, [H], 1); add(`encoder.layer.${l}.${n}.bias`, [H], 0); }
  }
  const header = {};
  let off = 0;
  for (const x of t) { header[x.name] = { dtype: 'F32', shape: x.dims, data_offsets: [off, off + 4 * x.v.length] }; off += 4 * x.v.length; }
  let h = JSON.stringify(header); h += ' '.repeat((8 - (h.length % 8)) % 8);
  const out = new Uint8Array(8 + h.length + off);
  new DataView(out.buffer).setBigUint64(0, BigInt(h.length), true);
  out.set(new TextEncoder().encode(h), 8);
  let at = 8 + h.length;
  for (const x of t) { out.set(new Uint8Array(x.v.buffer), at); at += 4 * x.v.length; }
  return out;
}

const module = await WebAssembly.compile(readFileSync(new URL('../wasm/mlrt-threads.wasm', import.meta.url)));
const memory = new WebAssembly.Memory({ initial: 16, maximum: 32768, shared: true });
const x = (await WebAssembly.instantiate(module, threadImports(module, memory))).exports;
x.__wasm_call_ctors?.();
const mem = () => new Uint8Array(memory.buffer), dv = () => new DataView(memory.buffer);
const put = (b) => { const p = x.mlrt_alloc(b.length || 1); mem().set(b, p); return p; };
const cstr = (s) => put(new TextEncoder().encode(s + '\0'));

const files = {
  'model.safetensors': safetensors(),
  'config.json': JSON.stringify({ model_type: 'bert', hidden_size: H, num_hidden_layers: L, num_attention_heads: A, intermediate_size: I,
    vocab_size: V, max_position_embeddings: P, type_vocab_size: 2, layer_norm_eps: 1e-12, hidden_act: 'gelu' }),
};
const names = Object.keys(files), list = x.mlrt_alloc(12 * names.length);
names.forEach((n, i) => {
  const b = typeof files[n] === 'string' ? new TextEncoder().encode(files[n]) : files[n];
  const np = cstr(n), bp = put(b), d = dv();
  d.setUint32(list + 12 * i, np, true); d.setUint32(list + 12 * i + 4, bp, true); d.setUint32(list + 12 * i + 8, b.length, true);
});
const model = x.mlrt_load_files(list, names.length, 0, 0), fork = x.mlrt_model_fork(model, 0);
if (!model || !fork) throw new Error('load or fork failed');

// an mlrt_tensor "input_ids" I32 [rows, width] over ids
const idsName = cstr('input_ids');
function tensor(ids, rows, width) {
  const t = x.mlrt_alloc(88), d = dv();
  d.setUint32(t, idsName, true); d.setUint32(t + 4, 9, true); d.setUint32(t + 8, 2, true);
  d.setBigInt64(t + 16, BigInt(rows), true); d.setBigInt64(t + 24, BigInt(width), true); d.setUint32(t + 80, ids, true);
  return t;
}
const output = (m) => { const o = x.mlrt_output(m, 0), d = dv(); const n = Number(d.getBigInt64(o + 16, true)) * H; const p = d.getUint32(o + 80, true); return mem().slice(p, p + 4 * n); };

// the worker: the same module over the same memory, its own stack and thread-local block
const STACK = 1 << 16, tlsSize = x.__tls_size?.value ?? 0, tlsAlign = Math.max(x.__tls_align?.value ?? 1, 8);
const stack = x.mlrt_alloc(STACK) + STACK, tls = tlsSize ? (x.mlrt_alloc(tlsSize + tlsAlign) + tlsAlign - 1) & -tlsAlign : 0;
const ctrl = x.mlrt_alloc(16), words = new Int32Array(memory.buffer, ctrl, 4); // [seq, done, tensor, status]
const worker = new Worker(`
  const { workerData: { module, memory, stack, tls, ctrl, fork }, parentPort } = require('node:worker_threads');
  import(${JSON.stringify(new URL('../wasm/threads.mjs', import.meta.url).href)}).then(({ threadImports }) => {
    const x = new WebAssembly.Instance(module, threadImports(module, memory)).exports;
    x.stackRestore(stack);
    if (tls) x.__wasm_init_tls(tls);
    const w = new Int32Array(memory.buffer, ctrl, 4);
    parentPort.postMessage('ready');
    for (let seen = 0; ; ) {
      while (Atomics.load(w, 0) === seen) Atomics.wait(w, 0, seen, 50);
      seen = Atomics.load(w, 0);
      Atomics.store(w, 3, x.mlrt_run(fork, Atomics.load(w, 2), 1, 0));
      Atomics.store(w, 1, seen);
      Atomics.notify(w, 1);
    }
  });`, { eval: true, workerData: { module, memory, stack, tls, ctrl, fork } });
await new Promise((r) => worker.once('message', r));
worker.unref();

function measure(rows, width) {
  const ids = x.mlrt_alloc(rows * width * 4), d = dv();
  for (let i = 0; i < rows * width; i++) d.setInt32(ids + 4 * i, i % width === 0 ? 101 : i % width === width - 1 ? 102 : 1000 + ((i * 7919) % 20000), true);
  const whole = tensor(ids, rows, width), half = rows >> 1;
  const mine = tensor(ids, half, width), theirs = tensor(ids + 4 * half * width, rows - half, width);
  const one = [], two = [];
  let bits1, bits2;
  for (let r = 0; r < runs + 1; r++) {
    let s = performance.now();
    if (x.mlrt_run(model, whole, 1, 0)) throw new Error('run failed');
    if (r) one.push(performance.now() - s);
    bits1 = output(model);
    s = performance.now();
    Atomics.store(words, 2, theirs);
    Atomics.add(words, 0, 1);
    Atomics.notify(words, 0);
    if (x.mlrt_run(model, mine, 1, 0)) throw new Error('run failed');
    while (Atomics.load(words, 1) !== Atomics.load(words, 0)) Atomics.wait(words, 1, Atomics.load(words, 1), 50);
    if (r) two.push(performance.now() - s);
    if (Atomics.load(words, 3)) throw new Error('the worker\'s run failed');
    bits2 = new Uint8Array([...output(model), ...output(fork)]);
  }
  const alone = []; // the worker's half with this thread idle: its own speed
  for (let r = 0; r < 3; r++) {
    const s = performance.now();
    Atomics.store(words, 2, theirs);
    Atomics.add(words, 0, 1);
    Atomics.notify(words, 0);
    while (Atomics.load(words, 1) !== Atomics.load(words, 0)) Atomics.wait(words, 1, Atomics.load(words, 1), 50);
    alone.push(performance.now() - s);
  }
  const med = (a) => a.sort((p, q) => p - q)[a.length >> 1];
  console.log(`  (the worker's half alone: ${med(alone).toFixed(1)} ms)`);
  const same = bits1.length === bits2.length && bits1.every((b, i) => b === bits2[i]);
  console.log(`  batch ${rows} x T=${width}: 1 thread ${med(one).toFixed(1)} ms, 2 threads ${med(two).toFixed(1)} ms: ` +
    `${(med(one) / med(two)).toFixed(2)}x; same bits: ${same}`);
  if (!same) process.exitCode = 1;
}
console.log(`encoder rows on 2 threads (${opt('shape', 'minilm')}: ${H} hidden, ${L} layers), mlrt-threads.wasm`);
measure(32, 16);
measure(32, 128);
