// Before and after a change: the same measurements on two checkouts' wasm/mlrt.mjs + wasm/mlrt.wasm,
// each in fresh processes, alternating A and B so that a noisy machine weighs on both alike.
//
//   node bench/ab.mjs --a DIR_BEFORE [--b DIR_AFTER (default: this checkout)] [--runs 7] [--cases cold,cnn-1] [--json FILE]
//
// Cases (the models are this checkout's, in formats both versions read):
//   cold       fresh process to the first MLP prediction: import the module, compile, load, predict
//   mlp-1      MNIST MLP 784-512-10 f32, one row per call (median µs over 2,000 calls after warm-up)
//   mlp-1000   the same, predictBatch of 1,000 rows (median ms over 30 batches)
//   cnn-1      the digit CNN (ONNX), one image per call (median µs over 300 calls)
//   forest-1   a random forest of 100 trees of depth 10 (bench/trees.mjs's), one row per call
//   forest-1000  the same, 1,000 rows per batch (median ms)
// The table gives each case's median over the runs for A and B and the ratio B/A (below 1: B faster).
import { fork } from 'node:child_process';
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const MODELS = {
  mlp: path.join(REPO, 'build/models/mnist-mlp.f32.bin'),
  cnn: path.join(REPO, 'build/models/digit-cnn.onnx'),
  forest: path.join(REPO, 'build/bench/forest.apr'),
};
const CASES = ['cold', 'mlp-1', 'mlp-1000', 'cnn-1', 'forest-1', 'forest-1000'];
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };

function rows(n, dim, seed) { // deterministic inputs in [0, 1)
  let s = seed >>> 0;
  const x = new Float32Array(n * dim);
  for (let i = 0; i < x.length; i++) { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; x[i] = s / 2 ** 32; }
  return x;
}

function timePer(fn, calls) { // median of `calls` single timings, in ms
  const t = new Float64Array(calls);
  for (let i = 0; i < calls; i++) { const t0 = performance.now(); fn(i); t[i] = performance.now() - t0; }
  return median(t);
}

async function child(dir, kase) {
  const t0 = performance.timeOrigin + performance.now();
  const { createRuntime } = await import(pathToFileURL(path.join(dir, 'wasm/mlrt.mjs')).href);
  const rt = await createRuntime({ wasm: readFileSync(path.join(dir, 'wasm/mlrt.wasm')) });
  const load = (f) => rt.loadFromBytes(new Uint8Array(readFileSync(f)));
  const [what, batch] = kase.split('-');
  if (kase === 'cold') {
    const m = load(MODELS.mlp);
    m.predict(rows(1, m.info.inputSize, 1));
    return { value: performance.timeOrigin + performance.now() - t0, unit: 'ms' };
  }
  const m = load(MODELS[what]);
  const d = m.info.inputSize, n = Number(batch);
  const x = rows(n === 1 ? 64 : n, d, 2);
  if (n === 1) {
    const one = (i) => m.predict(x.subarray((i % 64) * d, (i % 64 + 1) * d));
    const calls = what === 'cnn' ? 300 : 2000;
    timePer(one, calls / 4); // warm-up
    return { value: timePer(one, calls) * 1000, unit: 'µs' };
  }
  const all = () => m.predictBatch(x, n);
  timePer(all, 5);
  return { value: timePer(all, 30), unit: 'ms' };
}

function run(dir, kase) {
  return new Promise((resolve, reject) => {
    const p = fork(fileURLToPath(import.meta.url), ['--child', dir, kase], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    p.on('message', resolve);
    p.on('exit', (code) => { if (code) reject(new Error(`${kase} in ${dir}: exit ${code}`)); });
  });
}

async function main(argv) {
  const opt = (k, d) => { const i = argv.indexOf(k); return i >= 0 ? argv[i + 1] : d; };
  const a = path.resolve(opt('--a', '')), b = path.resolve(opt('--b', REPO)), runs = Number(opt('--runs', 7));
  if (!opt('--a')) throw new Error('usage: node bench/ab.mjs --a DIR_BEFORE [--b DIR_AFTER] [--runs N] [--json FILE]');
  if (!existsSync(MODELS.forest)) (await import('./trees.mjs')).makeModels();
  const cases = opt('--cases', CASES.join(',')).split(',');
  for (const c of cases) if (!CASES.includes(c)) throw new Error(`--cases: unknown case ${c} (${CASES.join(', ')})`);
  const got = Object.fromEntries(cases.map((c) => [c, { a: [], b: [], unit: '' }]));
  for (let r = 0; r < runs; r++) {
    for (const c of cases) {
      for (const [k, dir] of r % 2 ? [['b', b], ['a', a]] : [['a', a], ['b', b]]) {
        const { value, unit } = await run(dir, c);
        got[c][k].push(value); got[c].unit = unit;
      }
    }
  }
  const f = (v) => (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2));
  console.log(`| case | A: ${path.basename(a)} | B: ${path.basename(b)} | B/A |\n|---|---:|---:|---:|`);
  for (const c of cases) {
    const ma = median(got[c].a), mb = median(got[c].b);
    console.log(`| ${c} | ${f(ma)} ${got[c].unit} | ${f(mb)} ${got[c].unit} | ${(mb / ma).toFixed(2)} |`);
  }
  console.log(`\n(medians of ${runs} fresh processes per case and side, A and B alternating)`);
  const j = opt('--json');
  if (j) writeFileSync(j, JSON.stringify(got, null, 2));
}

if (process.argv[2] === '--child') {
  child(process.argv[3], process.argv[4]).then((r) => process.send(r, () => process.exit(0)), (e) => { console.error(e?.stack ?? e); process.exit(1); });
} else {
  main(process.argv.slice(2)).catch((e) => { console.error(e.message); process.exit(1); });
}
