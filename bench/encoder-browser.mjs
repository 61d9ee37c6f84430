// bench/encoder-browser.mjs — the sentence encoder in headless Chromium (playwright-core and Debian's
// chromium): mlrt's SIMD128 and relaxed-SIMD builds against onnxruntime-web (1 thread), f32 and Q8, on
// the all-MiniLM-L6-v2-shaped files bench/encoder.mjs prepares (build/bench-encoder/minilm), each in a
// fresh page served from 127.0.0.1. Chromium runs relaxed SIMD (fused multiply-add), which Node 20 does
// not; onnxruntime-web's wasm has none (its module holds no relaxed instruction).
//
//   node bench/encoder-browser.mjs [--quick]
//
// Medians of 3 fresh pages per runtime (1 with --quick), the runtimes taking turns page by page. Token ids
// in ([CLS] whole-word vocabulary entries [SEP]), as in bench/encoder.mjs; the tokenizer is not timed.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { REPO } from './limits.mjs';
import { sequences, vocabWords } from './encoder-texts.mjs';
import { serveRepo } from './static.mjs';
import { median } from './median.mjs';

const QUICK = process.argv.includes('--quick');
const PAGES = QUICK ? 1 : 3;
const IDS = ['mlrt-simd', 'mlrt-relaxed', 'ort-1t', 'mlrt-q8-simd', 'mlrt-q8-relaxed', 'ort-q8-1t'];
const DIR = path.join(REPO, 'build/bench-encoder/minilm');
const ALLOWED = ['/wasm/', '/bench/browser/', '/bench/median.mjs', '/tools/encoder/feeds.mjs', '/build/bench-encoder/minilm/', '/node_modules/onnxruntime-web/dist/'];
const fmt = (v, d = 1) => (v == null ? 'n/a' : v.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d }));

const serve = () => serveRepo({ allowed: ALLOWED, title: 'mlrt encoder bench', script: '/bench/browser/encoder-page.mjs' });

async function main() {
  const { CHROMIUM, CHROMIUM_ARGS } = await import('../tests/web/page.mjs');
  if (!existsSync(CHROMIUM)) { console.log(`bench/encoder-browser: ${CHROMIUM} is not installed: skipped`); return; }
  if (!['model.safetensors', 'model.q8.apr', 'model.onnx', 'model-q8.onnx'].every((f) => existsSync(path.join(DIR, f)))) {
    console.log('bench/encoder-browser: run bench/encoder.mjs first (it prepares build/bench-encoder/minilm): skipped');
    return;
  }
  const { words } = vocabWords(DIR);
  const opts = { ids16: sequences(words, 16, 16, 1), ids128: sequences(words, 4, 128, 2), iters16: QUICK ? 30 : 100, iters128: QUICK ? 8 : 24, warm16: 5000, warm128: 1500 };
  const { chromium } = await import('playwright-core');
  const server = await serve();
  const url = `http://127.0.0.1:${server.address().port}/`;
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const runs = Object.fromEntries(IDS.map((id) => [id, []])), errors = {};
  try {
    for (let k = 0; k < PAGES; k++) {
      for (const id of IDS) {
        if (errors[id]) continue;
        const context = await browser.newContext();
        const page = await context.newPage();
        try {
          await page.goto(url);
          await page.waitForFunction(() => typeof globalThis.benchEncoder === 'function');
          runs[id].push(await page.evaluate(([i, o]) => globalThis.benchEncoder(i, o), [id, opts]));
          console.error(`bench/encoder-browser: page ${k + 1}/${PAGES} ${id} ${JSON.stringify(runs[id].at(-1))}`);
        } catch (e) {
          errors[id] = e.message.split('\n')[0];
        } finally {
          await context.close();
        }
      }
    }
  } finally {
    await browser.close();
    server.close();
  }
  const R = Object.fromEntries(IDS.filter((id) => runs[id].length && !errors[id]).map((id) => [id, {
    coldMs: median(runs[id].map((r) => r.coldMs)), t16: median(runs[id].map((r) => r.t16)), t128: median(runs[id].map((r) => r.t128)), build: runs[id][0].build,
  }]));
  const lines = [`### Sentence encoder in headless Chromium ${browser.version?.() ?? ''} (all-MiniLM-L6-v2 shape, medians of ${PAGES} fresh pages, 1 thread)`, '',
    '| runtime | build | cold start | T=16, 1 text | T=128, 1 text |', '|---|---|---:|---:|---:|'];
  for (const id of IDS) {
    if (errors[id]) lines.push(`| ${id} | error: ${errors[id]} | | | |`);
    else if (R[id]) lines.push(`| ${id} | ${R[id].build} | ${fmt(R[id].coldMs)} ms | ${fmt(R[id].t16, 2)} ms | ${fmt(R[id].t128)} ms |`);
  }
  lines.push('');
  for (const [a, b] of [['mlrt-simd', 'ort-1t'], ['mlrt-relaxed', 'ort-1t'], ['mlrt-q8-simd', 'ort-q8-1t']]) { // the first text's first floats
    if (runs[a]?.[0] && runs[b]?.[0]) lines.push(`- ${a} against ${b}, the first embedding's first 4 floats: max |d| ${Math.max(...runs[a][0].first.map((v, i) => Math.abs(v - runs[b][0].first[i]))).toExponential(1)}`);
  }
  const ratio = (a, b, key, target) => {
    if (!R[a] || !R[b]) return `${a} / ${b} ${key}: n/a`;
    const v = R[a][key] / R[b][key], each = runs[a].map((r, i) => (runs[b][i] ? fmt(r[key] / runs[b][i][key], 2) : '?')).join(', ');
    return `${a} / ${b} ${key}: ${fmt(v, 2)}x (pages ${each})${target ? `; target <= ${target}x: ${v <= target ? 'met' : 'NOT met'}` : ''}`;
  };
  for (const [a, b, key, target] of [['mlrt-relaxed', 'ort-1t', 't16', 0.5], ['mlrt-relaxed', 'ort-1t', 't128', 0.7], ['mlrt-simd', 'ort-1t', 't16', 0.5],
    ['mlrt-simd', 'ort-1t', 't128', 0.7], ['mlrt-simd', 'ort-1t', 'coldMs', 0.1], ['mlrt-q8-relaxed', 'ort-q8-1t', 't16', 0.7], ['mlrt-q8-relaxed', 'ort-q8-1t', 't128', 1.0],
    ['mlrt-q8-simd', 'ort-q8-1t', 't16', 0.7], ['mlrt-q8-simd', 'ort-q8-1t', 't128', 1.0], ['mlrt-q8-simd', 'ort-q8-1t', 'coldMs', 0.1]]) lines.push(`- ${ratio(a, b, key, target)}`);
  console.log(lines.join('\n'));
}

await main();
