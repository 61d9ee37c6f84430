// The browser half of bench/browser.mjs: one runtime per fresh page, measured as bench/child.mjs
// measures in Node (cold start from the runtime's import to the first result, single-sample latency
// over distinct inputs, batch throughput in timed rounds). The page is cross-origin isolated.
import { fromBin, makeInputs, DIMS } from '/bench/weights.mjs';
import { median } from '../median.mjs';

const now = () => performance.now();

function loadScript(src) {
  return new Promise((resolve, reject) => {
    const s = Object.assign(document.createElement('script'), { src, onload: resolve, onerror: () => reject(new Error(`${src} failed`)) });
    document.head.append(s);
  });
}

// id -> async (files) => { predict(x), predictBatch(x, n), build }
const RUNTIMES = {
  async 'mlrt-simd'(f) { return mlrt(f, { relaxed: false }); },
  async 'mlrt-relaxed'(f) { return mlrt(f, { relaxed: true }); },
  async 'mlrt-threads'(f) { return mlrt(f, { threads: 'auto' }); },
  async 'ort-1t'(f) { return ort(f, 1); },
  async 'ort-2t'(f) { return ort(f, 2); },
  async 'tfjs-wasm'(f) {
    await loadScript('/node_modules/@tensorflow/tfjs-core/dist/tf-core.min.js');
    await loadScript('/node_modules/@tensorflow/tfjs-backend-wasm/dist/tf-backend-wasm.min.js');
    const tf = globalThis.tf;
    tf.wasm.setWasmPaths('/node_modules/@tensorflow/tfjs-backend-wasm/dist/');
    if (!(await tf.setBackend('wasm'))) throw new Error('tf.setBackend("wasm") failed');
    await tf.ready();
    const w = fromBin(f.bin);
    const W1 = tf.tensor2d(w.W1, [w.I, w.H]), b1 = tf.tensor1d(w.b1), W2 = tf.tensor2d(w.W2, [w.H, w.O]), b2 = tf.tensor1d(w.b2);
    const run = (x, n) => {
      const y = tf.tidy(() => tf.softmax(tf.add(tf.matMul(tf.relu(tf.add(tf.matMul(tf.tensor2d(x, [n, w.I]), W1), b1)), W2), b2)));
      const out = y.dataSync();
      y.dispose();
      return out;
    };
    const flags = tf.env().flags;
    return { predict: (x) => run(x, 1), predictBatch: run, build: `threads=${flags.WASM_HAS_MULTITHREAD_SUPPORT ? tf.wasm.getThreadsCount?.() ?? 'yes' : 1}, simd=${flags.WASM_HAS_SIMD_SUPPORT}` };
  },
};

async function mlrt(f, options) {
  const { createRuntime } = await import('/wasm/mlrt.mjs');
  const rt = await createRuntime(options);
  const m = rt.loadFromBytes(f.bin);
  const b = rt.build;
  return { predict: (x) => m.predict(x), predictBatch: (x, n) => m.predictBatch(x, n), build: `threads=${b.threads}${b.relaxed ? ', relaxed' : ''}` };
}

async function ort(f, threads) {
  const o = await import('/node_modules/onnxruntime-web/dist/ort.min.mjs');
  o.env.wasm.numThreads = threads;
  o.env.wasm.wasmPaths = '/node_modules/onnxruntime-web/dist/';
  o.env.logLevel = 'error';
  const s = await o.InferenceSession.create(f.onnx,
    { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
  const [inName] = s.inputNames, [outName] = s.outputNames;
  const run = async (x, n) => (await s.run({ [inName]: new o.Tensor('float32', x, [n, DIMS.input]) }))[outName].data;
  return { predict: (x) => run(x, 1), predictBatch: run, build: `threads=${threads}` };
}

globalThis.benchRun = async (id, { files, latency, throughput, batch }) => {
  const I = DIMS.input, pool = makeInputs(64), x1 = pool.subarray(0, I); // bench/child.mjs's inputs
  // the model's bytes are in memory before the clock starts, as in the Node bench
  const bytes = { bin: new Uint8Array(await (await fetch(files.bin)).arrayBuffer()), onnx: new Uint8Array(await (await fetch(files.onnx)).arrayBuffer()) };
  const t0 = now();
  const h = await RUNTIMES[id](bytes);
  await h.predict(x1);
  const coldMs = now() - t0;
  const xs = Array.from({ length: 64 }, (_, s) => pool.subarray(s * I, (s + 1) * I));
  const tw = now();
  for (let k = 0; k < latency.warmup || now() - tw < latency.warmupMs; k++) await h.predict(xs[k & 63]);
  // timed in groups of 16 calls: a cross-origin-isolated page's clock ticks in 5 µs steps
  const lat = [];
  for (let k = 0; k < latency.iters; k += 16) {
    const a = now();
    for (let j = 0; j < 16; j++) await h.predict(xs[(k + j) & 63]);
    lat.push((now() - a) / 16);
  }
  const xb = makeInputs(batch, 0x5eed + batch);
  const tb = now();
  while (now() - tb < throughput.warmupMs) await h.predictBatch(xb, batch);
  const rates = [];
  for (let r = 0; r < throughput.rounds; r++) {
    let calls = 0;
    const a = now();
    do { await h.predictBatch(xb, batch); calls++; } while (now() - a < throughput.roundMs);
    rates.push((calls * batch) / ((now() - a) / 1000));
  }
  return { coldMs, latencyUs: 1000 * median(lat), samplesPerSec: median(rates), build: h.build, isolated: crossOriginIsolated };
};
