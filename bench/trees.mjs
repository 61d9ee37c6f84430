// Classical models: a random forest (100 trees of depth 10 on 30 features, 5 classes) and KMeans
// (k = 16 on 64 features), mlrt against a plain-JS walk of the same nodes and onnxruntime-web's
// TreeEnsembleClassifier (ONNX-ML) on the same forest, in one run.
//
//   node bench/trees.mjs [--quick] [--json FILE]
//
// Every (runtime, measurement) runs in a fresh child process, RUNS times; the table shows medians.
// batch-1 latency: median of single predictions after a warm-up; batch-1000: rows/s over repeated
// batches. Correctness: every runtime's labels on the check rows are compared with mlrt's.
import { fork } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { forestToOnnx } from './onnx.mjs';
import { kmeansPayload, randomForestPayload, writeAprV1 } from '../tools/apr/writer.mjs';
import { prng as rng } from './weights.mjs';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const OUT = path.join(REPO, 'build/bench');
const argv = process.argv.slice(2);
const QUICK = argv.includes('--quick');
const RUNS = QUICK ? 1 : 3;
const FOREST = { trees: 100, depth: 10, features: 30, classes: [2, 3, 5, 7, 11] };
const KM = { k: 16, dim: 64 };
const BATCH = 1000;
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };

// ------------------------------------------------------------------ models (deterministic)

/** A tree as flat pre-order arrays; splits continue to `depth` with probability 0.85 per node. */
function randomTree(r, depth, features, classes) {
  const t = { feature: [], threshold: [], left: [], right: [], leaf: [] };
  const add = (d) => {
    const n = t.feature.length;
    t.feature.push(0); t.threshold.push(0); t.left.push(-1); t.right.push(-1); t.leaf.push(0);
    if (d < depth && (d < 3 || r() < 0.85)) {
      t.feature[n] = Math.floor(r() * features);
      t.threshold[n] = Math.fround(r() * 2 - 1);
      t.left[n] = add(d + 1);
      t.right[n] = add(d + 1);
    } else t.leaf[n] = classes[Math.floor(r() * classes.length)];
    return n;
  };
  add(0);
  return t;
}

function toNested(t, n = 0) { // for the .apr writer
  return t.left[n] < 0 ? { label: t.leaf[n], nSamples: 1 }
    : { feature: t.feature[n], threshold: t.threshold[n], left: toNested(t, t.left[n]), right: toNested(t, t.right[n]) };
}

export function makeModels() {
  const r = rng(7);
  const trees = Array.from({ length: FOREST.trees }, () => randomTree(r, FOREST.depth, FOREST.features, FOREST.classes));
  const apr = writeAprV1({ modelType: 'RandomForest', payload: randomForestPayload({
    trees: trees.map((t) => toNested(t)), maxDepth: FOREST.depth, nFeatures: FOREST.features, layout: 'E2' }) });
  const onnx = forestToOnnx(trees, FOREST.features, FOREST.classes);
  const centroids = Array.from({ length: KM.k }, () => Array.from({ length: KM.dim }, () => Math.fround(r() * 4 - 2)));
  const km = writeAprV1({ modelType: 'KMeans', payload: kmeansPayload({ centroids }) });
  mkdirSync(OUT, { recursive: true });
  const files = { forestApr: path.join(OUT, 'forest.apr'), forestOnnx: path.join(OUT, 'forest.onnx'),
    forestJson: path.join(OUT, 'forest.json'), kmApr: path.join(OUT, 'kmeans.apr'), kmJson: path.join(OUT, 'kmeans.json') };
  writeFileSync(files.forestApr, apr);
  writeFileSync(files.forestOnnx, onnx);
  writeFileSync(files.forestJson, JSON.stringify(trees));
  writeFileSync(files.kmApr, km);
  writeFileSync(files.kmJson, JSON.stringify(centroids));
  return { files, nodes: trees.reduce((n, t) => n + t.left.length, 0), bytes: { apr: apr.length, onnx: onnx.length } };
}

function inputs(n, dim, seed) {
  const r = rng(seed), x = new Float32Array(n * dim);
  for (let i = 0; i < x.length; i++) x[i] = r() * 2.4 - 1.2;
  return x;
}

// ------------------------------------------------------------------ runtimes (child side)

/** Plain JS on the same nodes: typed arrays, one walk per row per tree, votes, first max. */
async function plainForest(files) {
  const { readFileSync } = await import('node:fs');
  const trees = JSON.parse(readFileSync(files.forestJson, 'utf8'));
  let total = 0;
  const roots = [], feat = [], thr = [], left = [], right = [], cls = [];
  const classIndex = new Map(FOREST.classes.map((c, i) => [c, i]));
  for (const t of trees) {
    roots.push(total);
    for (let n = 0; n < t.left.length; n++) {
      feat.push(t.feature[n]); thr.push(t.threshold[n]);
      left.push(t.left[n] < 0 ? -1 : total + t.left[n]); right.push(t.left[n] < 0 ? -1 : total + t.right[n]);
      cls.push(classIndex.get(t.leaf[n]) ?? 0);
    }
    total += t.left.length;
  }
  const F = Int32Array.from(feat), T = Float32Array.from(thr), L = Int32Array.from(left), R = Int32Array.from(right), C = Int32Array.from(cls);
  const nc = FOREST.classes.length, d = FOREST.features, votes = new Int32Array(nc);
  const labels = (x, n) => {
    const out = new Int32Array(n);
    for (let r = 0; r < n; r++) {
      votes.fill(0);
      const o = r * d;
      for (const root of roots) {
        let k = root;
        while (L[k] >= 0) k = x[o + F[k]] <= T[k] ? L[k] : R[k];
        votes[C[k]]++;
      }
      let best = 0;
      for (let c = 1; c < nc; c++) if (votes[c] > votes[best]) best = c;
      out[r] = FOREST.classes[best];
    }
    return out;
  };
  return { one: (x) => labels(x, 1), batch: labels };
}

async function plainKmeans(files) {
  const { readFileSync } = await import('node:fs');
  const c = Float32Array.from(JSON.parse(readFileSync(files.kmJson, 'utf8')).flat());
  const { k, dim } = KM;
  const labels = (x, n) => {
    const out = new Int32Array(n);
    for (let r = 0; r < n; r++) {
      let best = 0, min = Infinity;
      for (let q = 0; q < k; q++) {
        let s = 0;
        for (let j = 0; j < dim; j++) { const t = x[r * dim + j] - c[q * dim + j]; s += t * t; }
        if (s < min) { min = s; best = q; }
      }
      out[r] = best;
    }
    return out;
  };
  return { one: (x) => labels(x, 1), batch: labels };
}

async function mlrt(file, simd) {
  const { readFileSync } = await import('node:fs');
  const { createRuntime } = await import('../wasm/mlrt.mjs');
  const rt = await createRuntime({ simd });
  const m = rt.loadFromBytes(new Uint8Array(readFileSync(file)));
  return { one: (x) => m.predictLabel(x), batch: (x, n) => m.predictLabels(x, n) };
}

async function ort(file, threads) {
  const { readFileSync } = await import('node:fs');
  const ortweb = await import('onnxruntime-web');
  ortweb.env.wasm.numThreads = threads;
  ortweb.env.logLevel = 'error';
  const s = await ortweb.InferenceSession.create(new Uint8Array(readFileSync(file)), { executionProviders: ['wasm'] });
  const run = async (x, n) => {
    const out = await s.run({ input: new ortweb.Tensor('float32', x, [n, FOREST.features]) });
    return Int32Array.from(out.label.data, Number);
  };
  return { one: (x) => run(x, 1), batch: run, async: true };
}

const RUNTIMES = {
  'forest:mlrt': (f) => mlrt(f.forestApr, true),
  'forest:mlrt-scalar': (f) => mlrt(f.forestApr, false),
  'forest:plain-js': (f) => plainForest(f),
  'forest:ort-1t': (f) => ort(f.forestOnnx, 1),
  'kmeans:mlrt': (f) => mlrt(f.kmApr, true),
  'kmeans:mlrt-scalar': (f) => mlrt(f.kmApr, false),
  'kmeans:plain-js': (f) => plainKmeans(f),
};

async function child(id, files) {
  const dim = id.startsWith('forest') ? FOREST.features : KM.dim;
  const r = await RUNTIMES[id](files);
  const x1 = inputs(256, dim, 11), xb = inputs(BATCH, dim, 13);
  const check = Array.from(await r.batch(xb.subarray(0, 200 * dim), 200));
  // batch-1 latency
  const lat = [];
  for (let w = performance.now(); performance.now() - w < (QUICK ? 200 : 800);) await r.one(x1.subarray(0, dim));
  for (let i = 0; i < (QUICK ? 300 : 2000); i++) {
    const row = x1.subarray((i % 256) * dim, (i % 256 + 1) * dim);
    const t0 = performance.now();
    await r.one(row);
    lat.push(performance.now() - t0);
  }
  // batch-1000 throughput
  for (let i = 0; i < 3; i++) await r.batch(xb, BATCH);
  let rows = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < (QUICK ? 400 : 1500)) { await r.batch(xb, BATCH); rows += BATCH; }
  const perSec = rows / ((performance.now() - t0) / 1000);
  return { latencyUs: median(lat) * 1000, perSec, check };
}

// ------------------------------------------------------------------ parent

function run(id, files) {
  return new Promise((resolve) => {
    const c = fork(fileURLToPath(import.meta.url), ['--child', id, JSON.stringify(files), ...(QUICK ? ['--quick'] : [])], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
    let err = '', res = null;
    c.stderr.on('data', (d) => { err += d; });
    c.on('message', (m) => { res = m; });
    c.on('exit', () => resolve(res ?? { error: err.trim().split('\n').find((l) => /Error/.test(l)) ?? (err.trim().split('\n')[0] || 'no result') }));
  });
}

async function main() {
  const { files, nodes, bytes } = makeModels();
  const results = {};
  for (const id of Object.keys(RUNTIMES)) {
    const runs = [];
    for (let k = 0; k < RUNS; k++) {
      const r = await run(id, files);
      if (r.error) { runs.length = 0; results[id] = r; break; }
      runs.push(r);
    }
    if (runs.length) results[id] = { latencyUs: median(runs.map((r) => r.latencyUs)), perSec: median(runs.map((r) => r.perSec)), check: runs[0].check };
    console.error(`bench trees: ${id} ${results[id].error ? `error: ${results[id].error}` : 'done'}`);
  }
  const fmt = (n, d = 1) => n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
  const agree = (id, ref) => {
    const a = results[id]?.check, b = results[ref]?.check;
    if (!a || !b) return '';
    const same = a.filter((v, i) => v === b[i]).length;
    return `${same}/${a.length}`;
  };
  const lines = [];
  const table = (title, ids, ref, peers) => {
    lines.push(`\n${title}\n`, '| runtime | batch-1 latency | batch-1000 rows/s | labels = mlrt |', '|---|---|---|---|');
    for (const id of ids) {
      const r = results[id];
      if (r.error) lines.push(`| ${id.split(':')[1]} | refused: ${r.error.slice(0, 120)} | | |`);
      else lines.push(`| ${id.split(':')[1]} | ${fmt(r.latencyUs, 2)} µs | ${fmt(r.perSec, 0)} | ${agree(id, ref)} |`);
    }
    const m = results[ref];
    for (const [peer, want] of peers) {
      const p = results[peer];
      if (!p || p.error) { lines.push(`\n${peer.split(':')[1]}: no figures (${p?.error ? 'refused the model' : 'missing'})`); continue; }
      const thr = m.perSec / p.perSec, lat = m.latencyUs / p.latencyUs;
      lines.push(`\nmlrt vs ${peer.split(':')[1]}: batch-1000 ${fmt(thr, 2)}× throughput${want.thr ? ` (target ≥ ${want.thr}×: ${thr >= want.thr ? 'met' : 'NOT met'})` : ''}, batch-1 ${fmt(lat, 2)}× latency${want.lat ? ` (target ≤ ${want.lat}×: ${lat <= want.lat ? 'met' : 'NOT met'})` : ''}`);
    }
  };
  const ortOk = results['forest:ort-1t'] && !results['forest:ort-1t'].error;
  table(`Random forest: ${FOREST.trees} trees, depth ${FOREST.depth}, ${FOREST.features} features, ${FOREST.classes.length} classes (${nodes.toLocaleString('en-US')} nodes; .apr ${bytes.apr.toLocaleString('en-US')} B, .onnx ${bytes.onnx.toLocaleString('en-US')} B)`,
    ['forest:mlrt', 'forest:mlrt-scalar', 'forest:plain-js', 'forest:ort-1t'], 'forest:mlrt',
    [['forest:plain-js', { thr: ortOk ? 5 : 10 }], ['forest:ort-1t', { thr: 2, lat: 0.5 }]]);
  table(`KMeans: k = ${KM.k} on ${KM.dim} features`, ['kmeans:mlrt', 'kmeans:mlrt-scalar', 'kmeans:plain-js'], 'kmeans:mlrt',
    [['kmeans:plain-js', {}]]);
  lines.push(`\n(medians of ${RUNS} fresh processes each; labels compared on 200 rows)`);
  console.log(lines.join('\n'));
  const j = argv.indexOf('--json');
  if (j >= 0) writeFileSync(argv[j + 1], JSON.stringify(results, null, 2));
}

if (argv[0] === '--child') {
  child(argv[1], JSON.parse(argv[2])).then((r) => { process.send(r); process.exit(0); }, (e) => { console.error(String(e?.stack ?? e)); process.exit(1); });
} else if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  main();
}
