// bench/load.mjs — model load speed: rt.loadFromBytes(bytes) in a fresh Node process (the first,
// unoptimised call, which is what a page or a server start pays), for the project's models of every
// format, the largest first. Median of 5 processes per file; the file's bytes are read before the clock.
//
//   node bench/load.mjs
import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { REPO } from './limits.mjs';

const RUNS = 5;
const FILES = [
  ['build/bench/forest.apr', '100-tree forest, .apr v1 (the bench writes it)'],
  ['build/models/mnist-mlp.f64.bin', 'MNIST MLP, f64 .bin (converted to f32)'],
  ['build/models/mnist-mlp.f32.bin', 'MNIST MLP, f32 .bin'],
  ['build/models/mnist-mlp.safetensors', 'MNIST MLP, SafeTensors'],
  ['build/models/mnist-mlp.apr', 'MNIST MLP, .apr v2'],
  ['build/models/mnist-mlp.q8.apr', 'MNIST MLP, .apr v2 Q8'],
  ['build/models/digit-cnn.onnx', 'digit CNN, ONNX'],
];

const CHILD = `
import { readFileSync } from 'node:fs';
import { median } from './median.mjs';
const { createRuntime } = await import(process.argv[1]);
const rt = await createRuntime({ relaxed: false });
const bytes = readFileSync(process.argv[2]);
const t0 = performance.now();
rt.loadFromBytes(bytes);
console.log(performance.now() - t0);`;

const fmt = (v, d) => v.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });

const mod = new URL('../wasm/mlrt.mjs', import.meta.url).href;
const rows = [];
for (const [rel, what] of FILES) {
  const file = path.join(REPO, rel);
  if (!existsSync(file)) { rows.push(`| ${what} | \`${rel}\` | not built | | |`); continue; }
  const ms = median(Array.from({ length: RUNS }, () =>
    Number(execFileSync(process.execPath, ['--input-type=module', '-e', CHILD, mod, file], { encoding: 'utf8' }))));
  const bytes = statSync(file).size;
  rows.push(`| ${what} | \`${rel}\` | ${fmt(bytes, 0)} | ${fmt(ms, 2)} | ${fmt(bytes / 1e3 / ms, 0)} |`);
}
console.log(`## model load in a fresh process (mlrt SIMD, median of ${RUNS} processes)\n`);
console.log('| model | file | bytes | loadFromBytes, ms | MB/s |\n|:---|:---|---:|---:|---:|');
console.log(rows.join('\n'));
