#!/usr/bin/env node
// check-onnx.mjs — the second oracle against the first: every golden case of tests/encoder/ run through
// onnxruntime-web on the ONNX graph of tools/encoder/onnx.mjs (the same weights, regenerated from the
// seed), compared with torch's float64 reference and torch's float32 forward. Prints one line per case
// and, with --json FILE, the figures (tests/encoder/README.md quotes them).
//
//   node tools/encoder/check-onnx.mjs [--only PREFIX] [--layer-norm decomposed] [--json FILE] [--dir GOLDEN_DIR]
import { writeFileSync } from 'node:fs';
import { goldens, wordnetGoldens, wordnetFolder, compare } from './goldens.mjs';
import { encoderOnnx, folderToOnnx, ortEncoder } from './onnx.mjs';
import { clearWeightCache } from './weights.mjs';

const argv = process.argv.slice(2);
const arg = (k) => { const i = argv.indexOf(k); return i >= 0 ? argv[i + 1] : undefined; };
const only = arg('--only'), layerNorm = arg('--layer-norm') ?? 'op', jsonOut = arg('--json'), dir = arg('--dir');

async function runCase(bytes, c) {
  const ort = await ortEncoder(bytes);
  const got = new Float32Array(c.rows * c.dim);
  for (const b of c.batches) got.set(await ort.embed(b.ids, b.typeIds), b.first * c.dim);
  await ort.release();
  return got;
}

const fmt = (s) => `max|d| ${s.maxAbs.toExponential(2)} max rel ${s.maxRel.toExponential(2)} min cos ${s.minCos.toFixed(9)}`;
const results = [];
let lastShape = null;
for (const c of goldens(dir).cases) {
  if (only && !c.name.startsWith(only)) continue;
  if (lastShape && lastShape !== c.shape) clearWeightCache();
  lastShape = c.shape;
  const { profile, ...opts } = c.folder;
  const bytes = encoderOnnx(profile, opts, { layerNorm });
  const got = await runCase(bytes, c);
  const vs64 = compare(got, c.f64, c.dim), vs32 = compare(got, c.f32, c.dim);
  results.push({ name: c.name, shape: c.shape, dtype: c.folder.dtype, rows: c.rows, ortVsF64: vs64, ortVsTorchF32: vs32, torchF32VsF64: c.torchF32VsF64 });
  console.log(`${c.name.padEnd(28)} ORT vs f64: ${fmt(vs64)} | vs torch f32: max|d| ${vs32.maxAbs.toExponential(2)} | torch f32 vs f64: max|d| ${c.torchF32VsF64.maxAbs.toExponential(2)}`);
}
if (!only || 'wordnet'.startsWith(only)) {
  const w = wordnetGoldens(dir);
  const ort = await ortEncoder(folderToOnnx(wordnetFolder(), { layerNorm }));
  const got = new Float32Array(w.queries.length * w.dim), ref = new Float64Array(got.length), t32 = new Float32Array(got.length);
  for (let i = 0; i < w.queries.length; i += 8) {
    const qs = w.queries.slice(i, i + 8);
    got.set(await ort.embed(qs.map((q) => q.ids)), i * w.dim);
  }
  w.queries.forEach((q, i) => { ref.set(q.reference, i * w.dim); t32.set(q.embedding, i * w.dim); });
  const vs64 = compare(got, ref, w.dim), vs32 = compare(got, t32, w.dim);
  results.push({ name: 'wordnet', rows: w.queries.length, ortVsF64: vs64, ortVsTorchF32: vs32, torchF32VsF64: w.torchF32VsF64 });
  console.log(`${'wordnet'.padEnd(28)} ORT vs f64: ${fmt(vs64)} | vs torch f32: max|d| ${vs32.maxAbs.toExponential(2)} | torch f32 vs f64: max|d| ${w.torchF32VsF64.maxAbs.toExponential(2)}`);
}
if (jsonOut) writeFileSync(jsonOut, JSON.stringify({ layerNorm, results }, null, 2) + '\n');
