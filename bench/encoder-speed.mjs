#!/usr/bin/env node
// encoder-speed.mjs — one-thread latency of mlrt's BERT encoder on random weights of a real shape,
// through the raw wasm exports (mlrt_load_files, mlrt_run), as a quick check of the C side.
//
//   node bench/encoder-speed.mjs [--wasm wasm/mlrt.wasm] [--shape minilm|bge|tiny] [--q8] [--runs 20]
//
// Prints per T (16, 128) and batch 32 x 16 the median milliseconds of a run (ids through mlrt_run,
// sentence_embedding out), wall and the process's CPU time (steadier on a busy machine), after two warm-up runs. Weights: normal(0, 0.02), as BERT's init.
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

const args = process.argv.slice(2);
const opt = (name, dflt) => { const i = args.indexOf(`--${name}`); return i < 0 ? dflt : args[i + 1]; };
const wasmPath = opt('wasm', new URL('../wasm/mlrt.wasm', import.meta.url).pathname);
const SHAPES = {
  minilm: { hidden: 384, layers: 6, heads: 12, ffn: 1536, vocab: 30522, positions: 512 },
  bge: { hidden: 384, layers: 12, heads: 12, ffn: 1536, vocab: 30522, positions: 512 },
  tiny: { hidden: 128, layers: 4, heads: 4, ffn: 512, vocab: 30522, positions: 64 },
};
const shape = SHAPES[opt('shape', 'minilm')];
const runs = Number(opt('runs', 20));
const q8 = args.includes('--q8');

// ---- random BERT weights as SafeTensors (or an .apr v2 with Q8 dense weights)
let seed = 12345;
function gauss() { // Box-Muller on a small LCG: deterministic
  seed = (seed * 1103515245 + 12345) >>> 0; const u = (seed + 1) / 4294967297;
  seed = (seed * 1103515245 + 12345) >>> 0; const v = seed / 4294967296;
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}
function tensors({ hidden: H, layers: L, ffn: I, vocab: V, positions: P }) {
  const t = [];
  const add = (name, dims, fill) => {
    const n = dims.reduce((a, b) => a * b, 1), v = new Float32Array(n);
    for (let i = 0; i < n; i++) v[i] = fill === 'one' ? 1 : fill === 'zero' ? 0 : gauss() * 0.02;
    t.push({ name, dims, v });
  };
  add('embeddings.word_embeddings.weight', [V, H]);
  add('embeddings.position_embeddings.weight', [P, H]);
  add('embeddings.token_type_embeddings.weight', [2, H]);
  add('embeddings.LayerNorm.weight', [H], 'one'); add('embeddings.LayerNorm.bias', [H], 'zero');
  for (let l = 0; l < L; l++) {
    const p = `encoder.layer.${l}.`;
    for (const [n, o, i] of [['attention.self.query', H, H], ['attention.self.key', H, H], ['attention.self.value', H, H],
      ['attention.output.dense', H, H], ['intermediate.dense', I, H], ['output.dense', H, I]]) {
      add(p + n + '.weight', [o, i]); add(p + n + '.bias', [o], 'zero');
    }
    for (const n of ['attention.output.LayerNorm', 'output.LayerNorm']) { add(p + n + '.weight', [H], 'one'); add(p + n + '.bias', [H], 'zero'); }
  }
  return t;
}
function safetensors(ts) {
  const header = {};
  let off = 0;
  for (const t of ts) { header[t.name] = { dtype: 'F32', shape: t.dims, data_offsets: [off, off + t.v.byteLength] }; off += t.v.byteLength; }
  let h = JSON.stringify(header);
  h += ' '.repeat((8 - (h.length % 8)) % 8);
  const out = new Uint8Array(8 + h.length + off);
  new DataView(out.buffer).setBigUint64(0, BigInt(h.length), true);
  out.set(new TextEncoder().encode(h), 8);
  let at = 8 + h.length;
  for (const t of ts) { out.set(new Uint8Array(t.v.buffer), at); at += t.v.byteLength; }
  return out;
}

const { hidden: H, layers: L, heads: A, ffn: I, vocab: V, positions: P } = shape;
const config = JSON.stringify({ model_type: 'bert', architectures: ['BertModel'], hidden_size: H, num_hidden_layers: L,
  num_attention_heads: A, intermediate_size: I, vocab_size: V, max_position_embeddings: P, type_vocab_size: 2,
  layer_norm_eps: 1e-12, hidden_act: 'gelu' });
let files = { 'model.safetensors': safetensors(tensors(shape)), 'config.json': config };
if (q8) {
  const { writeAprV2, tensorOf } = await import('../tools/apr/writer.mjs');
  const ts = tensors(shape);
  files = { 'model.apr': writeAprV2({ metadata: { model_type: 'Bert', architecture: 'bert', hidden_size: H, num_layers: L, num_heads: A,
    vocab_size: V, intermediate_size: I, max_position_embeddings: P },
  tensors: ts.map((t) => tensorOf(t.name, t.dims, t.v, t.dims.length === 2 && t.name.startsWith('encoder.') ? 'q8' : undefined)) }),
  'config.json': config };
}
files['modules.json'] = '[{"idx":0,"name":"0","path":"","type":"sentence_transformers.models.Transformer"},' +
  '{"idx":1,"name":"1","path":"1_Pooling","type":"sentence_transformers.models.Pooling"},' +
  '{"idx":2,"name":"2","path":"2_Normalize","type":"sentence_transformers.models.Normalize"}]';
files['1_Pooling/config.json'] = `{"word_embedding_dimension":${H},"pooling_mode_mean_tokens":true}`;

// ---- the raw exports
const module = await WebAssembly.compile(readFileSync(wasmPath));
const imports = {};
for (const { module: m, name } of WebAssembly.Module.imports(module)) (imports[m] ??= {})[name] = () => {};
const { exports: x } = await WebAssembly.instantiate(module, imports);
x._initialize?.();
const mem = () => new Uint8Array(x.memory.buffer);
const put = (bytes) => { const p = x.mlrt_alloc(bytes.length || 1); mem().set(bytes, p); return p; };
const cstr = (s) => put(new TextEncoder().encode(s + '\0'));
const err = x.mlrt_alloc(324);
const message = () => { const m = mem(); let e = err + 4; while (m[e]) e++; return new TextDecoder().decode(m.subarray(err + 4, e)); };

const names = Object.keys(files), list = x.mlrt_alloc(12 * names.length);
names.forEach((n, i) => {
  const b = typeof files[n] === 'string' ? new TextEncoder().encode(files[n]) : files[n];
  const np = cstr(n), bp = put(b), dv = new DataView(x.memory.buffer); // (after the allocations: memory may grow)
  dv.setUint32(list + 12 * i, np, true); dv.setUint32(list + 12 * i + 4, bp, true); dv.setUint32(list + 12 * i + 8, b.length, true);
});
let t0 = performance.now();
const model = x.mlrt_load_files(list, names.length, 0, err);
if (!model) throw new Error(message());
const loadMs = performance.now() - t0;

const idsName = cstr('input_ids');
function runIds(rows, width) {
  const ids = x.mlrt_alloc(rows * width * 4), t = x.mlrt_alloc(88);
  const dv = new DataView(x.memory.buffer);
  for (let i = 0; i < rows * width; i++) dv.setInt32(ids + 4 * i, i % width === 0 ? 101 : i % width === width - 1 ? 102 : 1000 + ((i * 7919) % 20000), true);
  dv.setUint32(t, idsName, true); dv.setUint32(t + 4, 9 /* MLRT_I32 */, true); dv.setUint32(t + 8, 2, true);
  dv.setBigInt64(t + 16, BigInt(rows), true); dv.setBigInt64(t + 24, BigInt(width), true); dv.setUint32(t + 80, ids, true);
  const times = [], cpu = [];
  for (let r = 0; r < runs + 2; r++) {
    const s = performance.now(), c = process.cpuUsage();
    if (x.mlrt_run(model, t, 1, err)) throw new Error(message());
    const d = process.cpuUsage(c);
    if (r >= 2) times.push(performance.now() - s), cpu.push((d.user + d.system) / 1000);
  }
  const median = (v) => v.sort((a, b) => a - b)[v.length >> 1];
  return [median(times), median(cpu)];
}
const { measureLimits } = await import('./limits.mjs');
const peak = (await measureLimits({})).peakMaddPerSec; // multiply-adds/s, SIMD128, measured now: the machine may be busy
const macs = (T) => L * T * (4 * H * H + 2 * H * I + 2 * T * H); // dense layers + attention (scores and values)
const floor = (T, rows = 1) => `floor ${(1000 * rows * macs(T) / peak).toFixed(1)} ms at the SIMD peak (${(peak / 1e9).toFixed(1)} G/s now)`;
console.log(`${opt('shape', 'minilm')} ${q8 ? 'Q8' : 'f32'} (${H} hidden, ${L} layers, ${A} heads, FFN ${I}), ${wasmPath.split('/').pop()}: load ${loadMs.toFixed(0)} ms`);
for (const T of [16, 128]) {
  const [ms, cpu] = runIds(1, T);
  console.log(`  T=${T}: ${ms.toFixed(2)} ms (CPU ${cpu.toFixed(2)} ms); ${floor(T)}`);
}
const [b, bc] = runIds(32, 16);
console.log(`  batch 32 x T=16: ${b.toFixed(1)} ms (CPU ${bc.toFixed(1)} ms, ${(32000 / b).toFixed(0)} texts/s); ${floor(16, 32)}`);
