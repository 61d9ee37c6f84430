// One measurement in one fresh process, started by bench/run.mjs with child_process.fork.
//
//   node bench/child.mjs <mode> <runtime-id|-> '<options JSON>'
//
// modes: measure | cold | rss | bare | files | limits
// The result (or { error }) goes back over the IPC channel; stdout/stderr are only logs.
import { readFileSync } from 'node:fs';

const [mode, id, optsJson = '{}'] = process.argv.slice(2);
const opts = JSON.parse(optsJson);

function send(msg) {
  if (process.send) process.send(msg, () => process.exit(0));
  else { console.log(JSON.stringify(msg)); process.exit(0); }
}

function readModel(file) {
  const buf = readFileSync(file);
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
}

const now = () => performance.now();

async function main() {
  if (mode === 'bare') {
    // "Bare Node": this process does nothing but report (touchFetch: the cost of the first
    // access to the global Response, which makes Node 20 load undici and compile llhttp).
    if (opts.touchFetch) {
      const t0 = now();
      const kind = typeof Response;
      return { touchFetchMs: now() - t0, kind, maxRssKB: process.resourceUsage().maxRSS };
    }
    if (opts.harness) {
      // The same harness work as mode 'rss' (its modules, the model file, the input pool),
      // without any runtime: the baseline that rows subtract, so that "+ over bare" is
      // what the runtime itself costs.
      await import('./runtimes/index.mjs');
      const { makeInputs } = await import('./weights.mjs');
      const modelBytes = readModel(opts.modelFiles.bin);
      const pool = makeInputs(64);
      return { maxRssKB: process.resourceUsage().maxRSS, keep: modelBytes.length + pool.length };
    }
    return { maxRssKB: process.resourceUsage().maxRSS };
  }
  if (mode === 'limits') return (await import('./limits.mjs')).measureLimits(opts);
  if (mode === 'quant') return await quant(opts);

  const { byId } = await import('./runtimes/index.mjs');
  const { makeInputs, DIMS } = await import('./weights.mjs');
  const rt = byId(id);
  const modelBytes = readModel(opts.modelFiles[rt.modelFormat]);

  if (mode === 'files') return await files(rt, modelBytes, makeInputs);

  if (mode === 'cold') {
    const x = makeInputs(1);
    const t0 = now();
    const h = await rt.setup(modelBytes); // includes the dynamic import() of the runtime
    const y = await h.predict(x);
    const t1 = now();
    return { coldMs: t1 - t0, loadMs: h.loadMs ?? null, sinceProcessStartMs: t1, out: Array.from(y) };
  }

  if (mode === 'rss') {
    const pool = makeInputs(64);
    const h = await rt.setup(modelBytes);
    let acc = 0;
    for (let k = 0; k < opts.predictions; k++) {
      const s = k & 63;
      const y = await h.predict(pool.subarray(s * DIMS.input, (s + 1) * DIMS.input));
      acc += y[0];
    }
    const ru = process.resourceUsage();
    const mem = process.memoryUsage();
    await h.dispose();
    return { maxRssKB: ru.maxRSS, rssAtEnd: mem.rss, heapUsed: mem.heapUsed, external: mem.external, acc };
  }

  if (mode === 'measure') return await measure(rt, modelBytes, makeInputs, DIMS);
  throw new Error(`unknown mode ${mode}`);
}

async function measure(rt, modelBytes, makeInputs, DIMS) {
  const I = DIMS.input, O = DIMS.output;
  const h = await rt.setup(modelBytes);
  const res = { info: h.info ?? null, build: h.build ?? null };

  // Correctness: the check inputs through predictBatch and through predict, one by one.
  const nCheck = opts.checkInputs;
  const xCheck = makeInputs(nCheck);
  res.batchOut = Array.from(await h.predictBatch(xCheck, nCheck));
  const single = new Array(nCheck * O);
  for (let s = 0; s < nCheck; s++) {
    const y = await h.predict(xCheck.subarray(s * I, (s + 1) * I));
    for (let o = 0; o < O; o++) single[s * O + o] = y[o];
  }
  res.singleOut = single;

  // Single-sample latency: per-call timing over a pool of distinct inputs.
  const pool = makeInputs(64);
  const xs = Array.from({ length: 64 }, (_, s) => pool.subarray(s * I, (s + 1) * I));
  // Warm-up is by count AND by time: onnxruntime-web needs ~2,000 calls before its
  // per-call latency settles (median 100 µs → 55 µs here), so 200 calls alone would be unfair.
  const { warmup, warmupMs, iters } = opts.latency;
  const t = new Float64Array(iters);
  let sink = 0;
  if (rt.async) {
    const tw = now();
    for (let k = 0; k < warmup || now() - tw < warmupMs; k++) sink += (await h.predict(xs[k & 63]))[0];
    for (let k = 0; k < iters; k++) {
      const t0 = now();
      const y = await h.predict(xs[k & 63]);
      t[k] = now() - t0;
      sink += y[0];
    }
  } else {
    const tw = now();
    for (let k = 0; k < warmup || now() - tw < warmupMs; k++) sink += h.predict(xs[k & 63])[0];
    for (let k = 0; k < iters; k++) {
      const t0 = now();
      const y = h.predict(xs[k & 63]);
      t[k] = now() - t0;
      sink += y[0];
    }
  }
  t.sort();
  res.latencyUs = {
    median: 1000 * (iters % 2 ? t[(iters - 1) / 2] : (t[iters / 2 - 1] + t[iters / 2]) / 2),
    p99: 1000 * t[Math.min(iters - 1, Math.ceil(0.99 * iters) - 1)],
    min: 1000 * t[0],
    iters,
  };

  // Batch throughput: warm-up, then `rounds` timed windows; report the median window.
  res.throughput = {};
  for (const b of opts.batchSizes) {
    const x = makeInputs(b, 0x5eed + b);
    const rates = [];
    let cpu0 = null, wall0 = 0;
    const startCpu = () => { cpu0 = process.cpuUsage(); wall0 = now(); };
    if (rt.async) {
      const tw = now();
      for (let k = 0; k < 1 || now() - tw < opts.throughput.warmupMs; k++) sink += (await h.predictBatch(x, b))[0];
      startCpu();
      for (let r = 0; r < opts.throughput.rounds; r++) {
        let calls = 0;
        const t0 = now();
        do { sink += (await h.predictBatch(x, b))[0]; calls++; } while (now() - t0 < opts.throughput.roundMs);
        rates.push((calls * b) / ((now() - t0) / 1000));
      }
    } else {
      const tw = now();
      for (let k = 0; k < 1 || now() - tw < opts.throughput.warmupMs; k++) sink += h.predictBatch(x, b)[0];
      startCpu();
      for (let r = 0; r < opts.throughput.rounds; r++) {
        let calls = 0;
        const t0 = now();
        do { sink += h.predictBatch(x, b)[0]; calls++; } while (now() - t0 < opts.throughput.roundMs);
        rates.push((calls * b) / ((now() - t0) / 1000));
      }
    }
    const cpu = process.cpuUsage(cpu0);
    const cpuCores = (cpu.user + cpu.system) / 1000 / (now() - wall0); // all threads of this process
    rates.sort((a, c) => a - c);
    res.throughput[b] = { samplesPerSec: rates[rates.length >> 1], best: rates[rates.length - 1], rounds: rates.length, cpuCores };
  }
  res.sink = sink;
  await h.dispose();
  return res;
}

// Quantized inference (mode 'quant'): the trainer's MNIST MLP as f32 (SafeTensors), APR_Q8 and
// APR_Q4 (.apr v2, written by the .apr writer in tools/apr/), all in this one process and one runtime
// build (opts.simd, opts.relaxed), measured one after the other with the same inputs: single-sample latency on
// held-out digits (and on dense random inputs: the digits' zero pixels let the Q8 kernel skip
// work), batch-1000 throughput on the 1,000 held-out digits, weight bytes, accuracy.
async function quant(opts) {
  const { createRuntime } = await import('../wasm/mlrt.mjs');
  const { loadSplit } = await import('../tools/mnist-split.mjs');
  const { modelToApr } = await import('../tools/apr/writer.mjs');
  const { makeInputs } = await import('./weights.mjs');
  const stBytes = readModel(opts.model);
  const digits = loadSplit('test');
  const rt = await createRuntime({ simd: opts.simd, relaxed: opts.relaxed });
  const source = rt.loadFromBytes(stBytes);
  const files = { F32: stBytes, APR_Q8: modelToApr(source, { version: 2, quantize: 'q8' }),
    APR_Q4: modelToApr(source, { version: 2, quantize: 'q4' }) };
  source.dispose();
  const dense = makeInputs(64);
  const I = 784;
  const latency = (m, pool) => {
    const xs = Array.from({ length: 64 }, (_, s) => pool.subarray(s * I, (s + 1) * I));
    const { warmup, warmupMs, iters } = opts.latency;
    let sink = 0;
    const tw = now();
    for (let k = 0; k < warmup || now() - tw < warmupMs; k++) sink += m.predict(xs[k & 63])[0];
    const t = new Float64Array(iters);
    for (let k = 0; k < iters; k++) {
      const t0 = now();
      sink += m.predict(xs[k & 63])[0];
      t[k] = now() - t0;
    }
    t.sort();
    return { median: 1000 * (t[(iters - 1) >> 1] + t[iters >> 1]) / 2, p99: 1000 * t[Math.ceil(0.99 * iters) - 1], sink };
  };
  const res = { build: rt.build, models: {} };
  for (const [dtype, bytes] of Object.entries(files)) {
    const m = rt.loadFromBytes(bytes);
    const out = m.predictBatch(digits.images, digits.n);
    let correct = 0;
    for (let i = 0; i < digits.n; i++) {
      let best = 0;
      for (let o = 1; o < 10; o++) if (out[i * 10 + o] > out[i * 10 + best]) best = o;
      if (best === digits.labels[i]) correct++;
    }
    const lat = latency(m, digits.images.subarray(0, 64 * I));
    const latDense = latency(m, dense);
    const tw = now();
    for (let k = 0; k < 1 || now() - tw < opts.throughput.warmupMs; k++) m.predictBatch(digits.images, digits.n);
    const rates = [];
    for (let r = 0; r < opts.throughput.rounds; r++) {
      let calls = 0;
      const t0 = now();
      do { m.predictBatch(digits.images, digits.n); calls++; } while (now() - t0 < opts.throughput.roundMs);
      rates.push((calls * digits.n) / ((now() - t0) / 1000));
    }
    rates.sort((a, b) => a - b);
    res.models[dtype] = { info: { dtype: m.info.dtype, weightBytes: m.info.weightBytes }, accuracy: correct / digits.n,
      latencyUs: lat, latencyDenseUs: latDense, batch1000: rates[rates.length >> 1], fileBytes: bytes.length };
    m.dispose();
  }
  return res;
}

// Which files did the runtime actually load? ESM loads are seen by a module.register()
// load hook; CommonJS by require.cache; wasm by wrapping the WebAssembly entry points.
async function files(rt, modelBytes, makeInputs) {
  const { register, createRequire } = await import('node:module');
  const { MessageChannel } = await import('node:worker_threads');
  const { fileURLToPath } = await import('node:url');
  const { statSync, readdirSync } = await import('node:fs');
  const path = await import('node:path');

  const seen = new Set();
  const { port1, port2 } = new MessageChannel();
  port1.on('message', (u) => seen.add(u));
  const hooks = `let port;
export function initialize(d) { port = d.port; }
export async function load(url, ctx, next) { port.postMessage(url); return next(url, ctx); }`;
  register('data:text/javascript,' + encodeURIComponent(hooks), { data: { port: port2 }, transferList: [port2] });

  // Wasm compiled by Node itself (e.g. undici's llhttp, pulled in lazily by the first touch
  // of the global fetch/Response) is not the runtime's file; it is reported separately.
  const wasmSizes = [], nodeInternal = [];
  const note = (b) => {
    const n = b?.byteLength;
    if (typeof n !== 'number') return;
    const caller = (new Error().stack ?? '').split('\n')[3] ?? '';
    if (caller.includes('node:internal')) nodeInternal.push({ bytes: n, by: caller.trim().replace(/^at /, '') });
    else wasmSizes.push(n);
  };
  const W = WebAssembly;
  const { compile, instantiate, Module } = W;
  W.compile = function (b, ...r) { note(b); return compile.call(this, b, ...r); };
  W.instantiate = function (b, ...r) { if (!(b instanceof Module)) note(b); return instantiate.call(this, b, ...r); };
  W.Module = new Proxy(Module, { construct(T, args) { note(args[0]); return Reflect.construct(T, args); } });
  for (const k of ['compileStreaming', 'instantiateStreaming']) {
    const f = W[k];
    if (f) W[k] = async function (src, ...r) {
      const resp = await src;
      const bytes = new Uint8Array(await resp.clone().arrayBuffer());
      note(bytes);
      return f.call(this, resp, ...r);
    };
  }

  const h = await rt.setup(modelBytes);
  await h.predict(makeInputs(1));
  await new Promise((r) => setTimeout(r, 100)); // let the hook thread's messages arrive
  port1.close();

  const repoRoot = fileURLToPath(new URL('../', import.meta.url));
  const benchDir = fileURLToPath(new URL('./', import.meta.url));
  const all = new Set();
  for (const u of seen) if (u.startsWith('file:')) all.add(fileURLToPath(u));
  for (const f of Object.keys(createRequire(import.meta.url).cache)) if (path.isAbsolute(f)) all.add(f);
  const list = [];
  if (rt.selfFile) all.add(rt.selfFile); // plain JS: the implementation is the runtime
  for (const f of all) {
    if (f.startsWith(benchDir) && f !== rt.selfFile) continue; // harness files
    if (!f.startsWith(repoRoot)) continue;
    list.push({ file: path.relative(repoRoot, f), bytes: statSync(f).size });
  }
  // Name the compiled wasm by matching its size to a .wasm next to a loaded JS file.
  const dirs = new Set(list.map((e) => path.dirname(path.join(repoRoot, e.file))));
  // Modules under 4 KB that match no file are inline feature probes (bytes inside the JS,
  // already counted there), e.g. SIMD/threads detection.
  const probes = wasmSizes.filter((n) => n < 4096);
  const wasm = wasmSizes.filter((n) => n >= 4096).map((n) => {
    for (const d of dirs) {
      for (const f of readdirSync(d)) {
        if (f.endsWith('.wasm') && statSync(path.join(d, f)).size === n) return { file: path.relative(repoRoot, path.join(d, f)), bytes: n };
      }
    }
    return { file: '(unnamed wasm)', bytes: n };
  });
  await h.dispose();
  return { js: list.sort((a, b) => b.bytes - a.bytes), wasm, probes, nodeInternal };
}

main().then(send, (e) => send({ error: String(e?.stack || e) }));
