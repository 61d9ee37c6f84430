// bench/browser.mjs — the MLP benchmark in headless Chromium (playwright-core and Debian's chromium):
// mlrt (SIMD128, relaxed SIMD, threads=auto), onnxruntime-web (1 and 2 threads) and tfjs-wasm, each
// in a fresh cross-origin-isolated page served from 127.0.0.1, on the weights bench/run.mjs writes.
//
//   node bench/browser.mjs [--quick]
//
// Medians of 3 fresh pages per runtime; the ratios are the targets of issue 11 for the browser.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { REPO } from './limits.mjs';
import { serveRepo } from './static.mjs';
import { median } from './median.mjs';

const QUICK = process.argv.includes('--quick');
const PAGES = QUICK ? 1 : 3;
const OPTS = {
  latency: QUICK ? { warmup: 100, warmupMs: 300, iters: 300 } : { warmup: 500, warmupMs: 1500, iters: 2000 },
  // long warm-ups: a worker's copy of the code tiers up on its own schedule (about 0.5 s in Chromium)
  throughput: QUICK ? { warmupMs: 1000, roundMs: 100, rounds: 3 } : { warmupMs: 2000, roundMs: 200, rounds: 5 },
  batch: 1000,
  files: { bin: '/build/bench/mlp-784-512-10.bin', onnx: '/build/bench/mlp-784-512-10.onnx' },
};
const IDS = ['mlrt-simd', 'mlrt-relaxed', 'mlrt-threads', 'ort-1t', 'ort-2t', 'tfjs-wasm'];
const LABELS = { 'mlrt-simd': 'mlrt SIMD', 'mlrt-relaxed': 'mlrt relaxed', 'mlrt-threads': 'mlrt threads=auto',
  'ort-1t': 'ORT-web 1 thread', 'ort-2t': 'ORT-web 2 threads', 'tfjs-wasm': 'tfjs wasm' };
const ALLOWED = ['/wasm/', '/bench/browser/', '/bench/weights.mjs', '/bench/median.mjs', '/build/bench/', '/node_modules/onnxruntime-web/dist/',
  '/node_modules/@tensorflow/tfjs-core/dist/', '/node_modules/@tensorflow/tfjs-backend-wasm/dist/'];

const fmt = (v, d = 1) => (v == null ? 'n/a' : v.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d }));

const serve = () => serveRepo({ allowed: ALLOWED, title: 'mlrt bench', script: '/bench/browser/page.mjs' });

async function main() {
  const { CHROMIUM, CHROMIUM_ARGS } = await import('../tests/web/page.mjs');
  if (!existsSync(CHROMIUM)) { console.log(`bench/browser: ${CHROMIUM} is not installed: skipped`); return; }
  if (!existsSync(path.join(REPO, 'build/bench/mlp-784-512-10.bin'))) { console.log('bench/browser: run bench/run.mjs first (it writes the weights): skipped'); return; }
  const { chromium } = await import('playwright-core');
  const server = await serve();
  const url = `http://127.0.0.1:${server.address().port}/`;
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const results = {};
  try {
    for (const id of IDS) {
      const runs = [];
      for (let k = 0; k < PAGES; k++) {
        const context = await browser.newContext();
        const page = await context.newPage();
        await page.goto(url);
        await page.waitForFunction(() => typeof globalThis.benchRun === 'function');
        try {
          runs.push(await page.evaluate(([i, o]) => globalThis.benchRun(i, o), [id, OPTS]));
        } catch (e) {
          results[id] = { error: e.message.split('\n')[0] };
          break;
        } finally {
          await context.close();
        }
      }
      if (runs.length === PAGES) {
        results[id] = { coldMs: median(runs.map((r) => r.coldMs)), latencyUs: median(runs.map((r) => r.latencyUs)),
          samplesPerSec: median(runs.map((r) => r.samplesPerSec)), build: runs[0].build, isolated: runs[0].isolated };
      }
      console.error(`bench/browser: ${id} ${JSON.stringify(results[id])}`);
    }
  } finally {
    await browser.close();
    server.close();
  }
  const version = browser.version?.() ?? '';
  const lines = [`## mlrt benchmark in headless Chromium ${version} — MLP 784→512→10, median of ${PAGES} fresh cross-origin-isolated pages`, ''];
  lines.push(`| metric | ${IDS.map((i) => LABELS[i]).join(' | ')} |`, `|:---|${IDS.map(() => '---:').join('|')}|`);
  const row = (name, f) => lines.push(`| ${name} | ${IDS.map((i) => (results[i]?.error ? 'error' : f(results[i]))).join(' | ')} |`);
  row('cold start, ms (import → 1st result)', (r) => fmt(r.coldMs));
  row('latency median, µs (1 sample)', (r) => fmt(r.latencyUs));
  row(`throughput batch ${OPTS.batch}, samples/s`, (r) => fmt(r.samplesPerSec, 0));
  row('build', (r) => r.build);
  lines.push('');
  for (const [id, e] of Object.entries(results)) if (e.error) lines.push(`- ${LABELS[id]}: ${e.error}`);
  const ratio = (name, a, b, op, target) => {
    const ra = results[a]?.[name.key], rb = results[b]?.[name.key];
    if (ra == null || rb == null) return lines.push(`- [n/a] ${name.label}`);
    const v = ra / rb, pass = op === '≥' ? v >= target : v <= target;
    lines.push(`- [${pass ? 'PASS' : 'FAIL'}] ${name.label}: ${fmt(v, 3)} (target ${op} ${target})`);
  };
  const tput = (label) => ({ key: 'samplesPerSec', label });
  ratio(tput('threads=auto batch-1000 ÷ mlrt 1 thread'), 'mlrt-threads', 'mlrt-simd', '≥', 1.8);
  ratio(tput('threads=auto batch-1000 ÷ ORT 2 threads'), 'mlrt-threads', 'ort-2t', '≥', 1.5);
  ratio(tput('relaxed batch-1000 ÷ SIMD128'), 'mlrt-relaxed', 'mlrt-simd', '≥', 1.3);
  ratio({ key: 'latencyUs', label: 'single-sample latency ÷ ORT 1 thread' }, 'mlrt-simd', 'ort-1t', '≤', 0.65);
  ratio({ key: 'coldMs', label: 'cold start ÷ ORT 1 thread' }, 'mlrt-simd', 'ort-1t', '≤', 0.03);
  ratio({ key: 'coldMs', label: 'cold start ÷ tfjs wasm' }, 'mlrt-simd', 'tfjs-wasm', '≤', 0.2);
  console.log(lines.join('\n'));
}

await main();
