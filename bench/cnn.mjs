// CNNs from ONNX: LeNet-5 and the project's digit CNN (both PyTorch 1.13 exports from
// tests/onnx/zoo), and the MNIST MLP read from .onnx against the same weights from .bin.
// mlrt against onnxruntime-web (1 and 2 threads) and tfjs-wasm (the same networks built from the
// same weights with tf ops), in one run.
//
//   node bench/cnn.mjs [--quick] [--json FILE]
//
// Every (runtime, model) runs in a fresh child process, RUNS times; the table shows medians.
//   cold start: in the fresh process, import of the runtime -> first result (includes the
//               runtime's own wasm compile, reading and loading the model)
//   batch-1:    median latency of single predictions after a warm-up
//   batch-64:   images per second over repeated batches of 64
// Correctness: every runtime's outputs on 16 held-out digits are compared with mlrt's.
import { fork } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from './median.mjs';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const argv = process.argv.slice(2);
const QUICK = argv.includes('--quick');
const RUNS = QUICK ? 1 : 3;
const BATCH = 64;

const MODELS = {
  lenet5: { file: 'tests/onnx/zoo/lenet5-op13.onnx', label: 'LeNet-5 (PyTorch export, opset 13)', shape: [1, 28, 28] },
  'digit-cnn': { file: 'tests/onnx/zoo/digit-cnn.onnx', label: 'digit CNN (the demo model, opset 13)', shape: [1, 28, 28] },
};

function digits(n) { // held-out MNIST digits when built, else a fixed pattern
  try {
    const b = readFileSync(path.join(REPO, 'build/mnist/test-images.f32'));
    return new Float32Array(b.buffer, b.byteOffset, n * 784).slice();
  } catch {
    return Float32Array.from({ length: n * 784 }, (_, i) => ((i * 2654435761) % 1000) / 1000);
  }
}

// ------------------------------------------------------------------ runtimes (in the child)

async function mlrtRuntime(bytes) {
  const { createRuntime } = await import('../wasm/mlrt.mjs');
  const rt = await createRuntime();
  const m = rt.loadFromBytes(bytes);
  return { one: (x) => m.predict(x), batch: (x, n) => m.predictBatch(x, n) };
}

async function ortRuntime(bytes, threads, shape) {
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = threads;
  ort.env.logLevel = 'error';
  const s = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
  const [inName] = s.inputNames, [outName] = s.outputNames;
  const run = async (x, n) => (await s.run({ [inName]: new ort.Tensor('float32', x, [n, ...shape]) }))[outName].data;
  return { one: (x) => run(x, 1), batch: run, async: true };
}

/** The ONNX graph's nodes and initializers, read with the tests' protobuf reader. */
async function readGraph(bytes) {
  const { fields, readTensor } = await import('../tests/onnx/onnx-build.mjs');
  const dec = new TextDecoder();
  const g = fields(bytes).find((f) => f.field === 7);
  const inits = new Map(), nodes = [];
  for (const f of fields(g.bytes)) {
    if (f.field === 5) { const t = readTensor(f.bytes); inits.set(t.name, t); }
    if (f.field !== 1) continue;
    const n = { in: [], out: [], op: '', attrs: {} };
    for (const x of fields(f.bytes)) {
      if (x.field === 1) n.in.push(dec.decode(x.bytes));
      else if (x.field === 2) n.out.push(dec.decode(x.bytes));
      else if (x.field === 4) n.op = dec.decode(x.bytes);
      else if (x.field === 5) {
        const a = fields(x.bytes), name = dec.decode(a.find((y) => y.field === 1).bytes);
        const ints = a.filter((y) => y.field === 8);
        n.attrs[name] = ints.length ? ints.flatMap((y) => (y.wire === 0 ? [Number(y.value)] : fields(Uint8Array.from([...y.bytes].flatMap((b, i, arr) => (i === 0 || !(arr[i - 1] & 0x80) ? [8, b] : [b])))).map((z) => Number(z.value))))
          : a.find((y) => y.field === 3) ? Number(a.find((y) => y.field === 3).value) : null;
      }
    }
    nodes.push(n);
  }
  return { nodes, inits };
}

/** tfjs-wasm: the graph rebuilt with tf ops (Conv, Relu, MaxPool, Flatten, Gemm: what the two CNNs use). */
async function tfjsRuntime(bytes, shape) {
  const tf = await import('@tensorflow/tfjs-core');
  const backend = await import('@tensorflow/tfjs-backend-wasm');
  backend.setWasmPaths(path.join(REPO, 'node_modules/@tensorflow/tfjs-backend-wasm/dist/'));
  if (!(await tf.setBackend('wasm'))) throw new Error('tf.setBackend("wasm") failed');
  await tf.ready();
  const { nodes, inits } = await readGraph(bytes);
  const W = new Map();
  for (const n of nodes) { // weights in tf's layouts: conv HWIO, dense [in][out]
    if (n.op === 'Conv') {
      const t = inits.get(n.in[1]);
      W.set(n.in[1], tf.tidy(() => tf.transpose(tf.tensor4d(t.data, t.dims), [2, 3, 1, 0])));
      if (n.in[2]) W.set(n.in[2], tf.tensor1d(inits.get(n.in[2]).data));
    } else if (n.op === 'Gemm') {
      const t = inits.get(n.in[1]);
      W.set(n.in[1], tf.tidy(() => (n.attrs.transB ? tf.transpose(tf.tensor2d(t.data, t.dims)) : tf.tensor2d(t.data, t.dims))));
      W.set(n.in[2], tf.tensor1d(inits.get(n.in[2]).data));
    } else if (!['Relu', 'MaxPool', 'Flatten'].includes(n.op)) throw new Error(`tfjs bench: no tf build for ${n.op}`);
  }
  const run = (x, n) => {
    const y = tf.tidy(() => {
      let v = tf.transpose(tf.tensor4d(x, [n, ...shape]), [0, 2, 3, 1]); // NHWC
      for (const nd of nodes) {
        if (nd.op === 'Conv') {
          const p = nd.attrs.pads ?? [0, 0, 0, 0], s = nd.attrs.strides ?? [1, 1];
          v = tf.conv2d(v, W.get(nd.in[1]), s, [[0, 0], [p[0], p[2]], [p[1], p[3]], [0, 0]]);
          if (nd.in[2]) v = tf.add(v, W.get(nd.in[2]));
        } else if (nd.op === 'Relu') v = tf.relu(v);
        else if (nd.op === 'MaxPool') v = tf.maxPool(v, nd.attrs.kernel_shape, nd.attrs.strides, 'valid');
        else if (nd.op === 'Flatten') v = tf.reshape(tf.transpose(v, [0, 3, 1, 2]), [n, -1]); // in NCHW order
        else if (nd.op === 'Gemm') v = tf.add(tf.matMul(v, W.get(nd.in[1])), W.get(nd.in[2]));
      }
      return v;
    });
    const out = y.dataSync();
    y.dispose();
    return out;
  };
  return { one: (x) => run(x, 1), batch: run };
}

async function mlpRuntime(kind) { // the MNIST MLP: .bin, or the same weights as ONNX (MatMul, Add, Relu, Softmax)
  const bin = readFileSync(path.join(REPO, 'build/models/mnist-mlp.f32.bin'));
  const { fromBin } = await import('./weights.mjs');
  const { mlpToOnnx } = await import('./onnx.mjs');
  const bytes = kind === 'bin' ? new Uint8Array(bin) : mlpToOnnx(fromBin(bin));
  if (kind === 'ort') return ortRuntime(bytes, 1, [784]);
  return mlrtRuntime(bytes);
}

const RUNTIMES = {
  mlrt: (m) => mlrtRuntime(m.bytes),
  'ort-1t': (m) => ortRuntime(m.bytes, 1, m.shape),
  'ort-2t': (m) => ortRuntime(m.bytes, 2, m.shape),
  'tfjs-wasm': (m) => tfjsRuntime(m.bytes, m.shape),
};

async function child(model, rid) {
  const inSize = 784;
  const xs = digits(BATCH); // the inputs exist before the clock starts: the harness's work, not the runtime's
  const t0 = performance.now();
  const m = model.startsWith('mlp-') ? null : { ...MODELS[model], bytes: new Uint8Array(readFileSync(path.join(REPO, MODELS[model].file))) };
  const r = m ? await RUNTIMES[rid](m) : await mlpRuntime(model.slice(4));
  const first = await r.one(xs.subarray(0, inSize));
  const coldMs = performance.now() - t0;
  void first;
  const check = Array.from(await r.batch(xs.subarray(0, 16 * inSize), 16));
  const lat = [];
  for (let w = performance.now(); performance.now() - w < (QUICK ? 200 : 800);) await r.one(xs.subarray(0, inSize));
  for (let i = 0; i < (QUICK ? 300 : 2000); i++) {
    const row = xs.subarray((i % BATCH) * inSize, (i % BATCH + 1) * inSize);
    const s = performance.now();
    await r.one(row);
    lat.push(performance.now() - s);
  }
  const n = model.startsWith('mlp-') ? 1000 : BATCH;
  const xb = n === BATCH ? xs : Float32Array.from({ length: n * inSize }, (_, i) => xs[i % xs.length]);
  for (let i = 0; i < 3; i++) await r.batch(xb, n);
  let rows = 0;
  const s = performance.now();
  while (performance.now() - s < (QUICK ? 400 : 1500)) { await r.batch(xb, n); rows += n; }
  return { coldMs, latencyUs: median(lat) * 1000, perSec: rows / ((performance.now() - s) / 1000), check };
}

// ------------------------------------------------------------------ parent

function run(model, rid) {
  return new Promise((resolve) => {
    const c = fork(fileURLToPath(import.meta.url), ['--child', model, rid, ...(QUICK ? ['--quick'] : [])], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
    let err = '', res = null;
    c.stderr.on('data', (d) => { err += d; });
    c.on('message', (m) => { res = m; });
    c.on('exit', () => resolve(res ?? { error: err.trim().split('\n').find((l) => /Error/.test(l)) ?? (err.trim().split('\n')[0] || 'no result') }));
  });
}

async function measure(model, rid) {
  const runs = [];
  for (let k = 0; k < RUNS; k++) {
    const r = await run(model, rid);
    if (r.error) return r;
    runs.push(r);
  }
  console.error(`bench cnn: ${model} ${rid} done`);
  const pick = (k) => median(runs.map((r) => r[k]));
  return { coldMs: pick('coldMs'), latencyUs: pick('latencyUs'), perSec: pick('perSec'), check: runs[0].check };
}

async function main() {
  const results = {};
  for (const model of Object.keys(MODELS)) for (const rid of Object.keys(RUNTIMES)) results[`${model}:${rid}`] = await measure(model, rid);
  for (const k of ['bin', 'onnx']) results[`mlp:${k}`] = await measure(`mlp-${k}`, 'mlrt');
  const fmt = (n, d = 1) => n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
  const maxDiff = (a, b) => (a && b ? Math.max(...a.map((v, i) => Math.abs(v - b[i]))) : NaN);
  const lines = [];
  const wasm = statSync(path.join(REPO, 'wasm/mlrt.wasm')).size;
  const ortWasm = statSync(path.join(REPO, 'node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.wasm')).size;
  for (const model of Object.keys(MODELS)) {
    const mb = statSync(path.join(REPO, MODELS[model].file)).size;
    lines.push(`\n${MODELS[model].label}, ${fmt(mb / 1024, 0)} KB\n`,
      '| runtime | cold start | batch-1 latency | batch-64 images/s | max \\|Δ\\| vs mlrt (16 digits) |', '|---|---|---|---|---|');
    const ref = results[`${model}:mlrt`];
    for (const rid of Object.keys(RUNTIMES)) {
      const r = results[`${model}:${rid}`];
      if (r.error) { lines.push(`| ${rid} | failed: ${r.error.slice(0, 100)} | | | |`); continue; }
      lines.push(`| ${rid} | ${fmt(r.coldMs, 1)} ms | ${fmt(r.latencyUs, 1)} µs | ${fmt(r.perSec, 0)} | ${rid === 'mlrt' ? '' : maxDiff(r.check, ref.check).toExponential(1)} |`);
    }
    const o = results[`${model}:ort-1t`];
    if (!ref.error && !o.error) {
      const lat = ref.latencyUs / o.latencyUs, thr = ref.perSec / o.perSec, cold = ref.coldMs / o.coldMs;
      lines.push(`\nmlrt vs ORT-web 1 thread: batch-1 ${fmt(lat, 2)}× latency (target ≤ 0.6×: ${lat <= 0.6 ? 'met' : 'NOT met'}), ` +
        `batch-64 ${fmt(thr, 2)}× throughput (target ≥ 1.3×: ${thr >= 1.3 ? 'met' : 'NOT met'}), ` +
        `cold start ${fmt(cold, 3)}× (target ≤ 0.05×: ${cold <= 0.05 ? 'met' : 'NOT met'})`);
      const o2 = results[`${model}:ort-2t`];
      if (!o2.error) lines.push(`mlrt vs ORT-web 2 threads: batch-64 ${fmt(ref.perSec / o2.perSec, 2)}× throughput`);
    }
  }
  const b = results['mlp:bin'], x = results['mlp:onnx'];
  if (!b.error && !x.error) {
    lines.push('\nMNIST MLP 784-512-10, the same weights from .bin and from .onnx (MatMul, Add, Relu, MatMul, Add, Softmax), mlrt\n',
      '| file | batch-1 latency | batch-1000 rows/s |', '|---|---|---|',
      `| .bin | ${fmt(b.latencyUs, 1)} µs | ${fmt(b.perSec, 0)} |`, `| .onnx | ${fmt(x.latencyUs, 1)} µs | ${fmt(x.perSec, 0)} |`,
      `\n.onnx vs .bin: batch-1 ${fmt(x.latencyUs / b.latencyUs, 2)}× latency, batch-1000 ${fmt(x.perSec / b.perSec, 2)}× throughput; outputs max |Δ| ${maxDiff(x.check, b.check).toExponential(1)}`);
  }
  lines.push(`\nmlrt.wasm: ${wasm.toLocaleString('en-US')} B (budget ≤ 262,144 B: ${wasm <= 262144 ? 'met' : 'NOT met'}); ` +
    `onnxruntime-web's ort-wasm-simd-threaded.wasm: ${ortWasm.toLocaleString('en-US')} B (${fmt(ortWasm / wasm, 0)}×)`);
  lines.push(`(medians of ${RUNS} fresh processes each)`);
  console.log(lines.join('\n'));
  const j = argv.indexOf('--json');
  if (j >= 0) writeFileSync(argv[j + 1], JSON.stringify(results, null, 2));
}

if (argv[0] === '--child') {
  child(argv[1], argv[2]).then((r) => { process.send(r); process.exit(0); }, (e) => { console.error(String(e?.stack ?? e)); process.exit(1); });
} else {
  main();
}
