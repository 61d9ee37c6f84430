#!/usr/bin/env node
// Tokenizer benchmark (issue 20): texts per second through bert-base-uncased's WordPiece tokenizer
// (bge-small-en-v1.5's tokenizer.json), in one run, for
//   - mlrt (SIMD128 build): Tokenizer.encode one text per call, and encodeBatch (one call per batch);
//   - npm `tokenizers` 0.23.2 (the Rust library through N-API): encode per text (async), encodeBatch;
//   - npm `@huggingface/tokenizers` 0.2.0 (pure JavaScript, the tokenizer of transformers.js): encode.
// transformers.js itself does not install here (its onnxruntime-node install script downloads a
// binary; this machine reaches only the package registries) and is not measured.
// Rows: short (<= 16 words), medium (~60), long (>= 400) English, and mixed scripts (~60 words).
// Each cell is the median of 5 rounds; the machine (2 cores, shared with other jobs) makes single
// numbers noisy: read ratios, not absolutes.
//
//   node bench/tokenizer.mjs [--quick]
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { createRuntime } from '../wasm/mlrt.mjs';
import { vocab, variants, rng } from '../tests/text/corpus.mjs';

const require = createRequire(import.meta.url);
const QUICK = process.argv.includes('--quick');
const ROUNDS = QUICK ? 3 : 5;

const json = JSON.stringify(variants()['bge-small-en-v1.5']);
const rt = await createRuntime({ relaxed: false });
const mlrt = rt.loadTokenizer(new TextEncoder().encode(json));
const native = require('tokenizers').Tokenizer.fromString(json);
const { Tokenizer: PureJs } = await import('@huggingface/tokenizers');
const pure = new PureJs(JSON.parse(json), {});

// ------------------------------------------------------------------ texts

const r = rng(42);
const common = vocab.slice(1996, 6000).filter((w) => /^[a-z]+$/.test(w));
const pick = (a) => a[Math.floor(r() * a.length)];
function english(words) {
  const out = [];
  for (let i = 0; i < words; i++) {
    let w = pick(common);
    if (i === 0 || out[out.length - 1].endsWith('.')) w = w[0].toUpperCase() + w.slice(1);
    if (r() < 0.08) w += pick([',', '.', ';', '?']);
    if (r() < 0.03) w = `"${w}"`;
    out.push(w);
  }
  return out.join(' ') + '.';
}
const FOREIGN = ['東京タワーに行きました', '中文字符', 'Привет, мир', 'Ελληνικά κείμενα', 'مرحبا بالعالم', 'नमस्ते दुनिया', '한국어 문장',
  'Ünïcödé façade naïve', 'Việt Nam', '😀👍🏽', 'Straße', 'İstanbul', '「引用」，。'];
function mixed(words) {
  const out = [];
  for (let i = 0; i < words; i++) out.push(r() < 0.35 ? pick(FOREIGN) : pick(common));
  return out.join(' ');
}
const ROWS = [
  ['short English (<= 16 words)', Array.from({ length: 2000 }, () => english(4 + Math.floor(r() * 12)))],
  ['medium English (~60 words)', Array.from({ length: 400 }, () => english(50 + Math.floor(r() * 20)))],
  ['long English (>= 400 words)', Array.from({ length: 60 }, () => english(400 + Math.floor(r() * 100)))],
  ['mixed scripts (~60 words)', Array.from({ length: 400 }, () => mixed(50 + Math.floor(r() * 20)))],
];

// ------------------------------------------------------------------ runs

const median = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };
async function rate(texts, fn) {
  await fn(texts.slice(0, 20)); // warm up
  const rates = [];
  for (let k = 0; k < ROUNDS; k++) {
    const t0 = performance.now();
    await fn(texts);
    rates.push(texts.length / ((performance.now() - t0) / 1000));
  }
  return median(rates);
}

const IMPLS = {
  'mlrt encode': (texts) => { for (const t of texts) mlrt.encode(t); },
  'mlrt encodeBatch': (texts) => { for (let i = 0; i < texts.length; i += 64) mlrt.encodeBatch(texts.slice(i, i + 64), { padding: false }); },
  'tokenizers (N-API) encode': async (texts) => { for (const t of texts) await native.encode(t); },
  'tokenizers (N-API) encodeBatch': async (texts) => { for (let i = 0; i < texts.length; i += 64) await native.encodeBatch(texts.slice(i, i + 64)); },
  '@huggingface/tokenizers (JS) encode': (texts) => { for (const t of texts) pure.encode(t); },
};

// the three agree on these texts (the pure-JS port differs from Rust only at Unicode's margins)
let agree = 0, total = 0;
for (const [, texts] of ROWS) {
  for (const t of texts.slice(0, 50)) {
    const a = [...mlrt.encode(t).ids].join(), b = (await native.encode(t)).getIds().join(), c = pure.encode(t).ids.join();
    total++;
    if (a !== b) throw new Error(`mlrt and tokenizers differ on ${JSON.stringify(t)}`);
    if (a === c) agree++;
  }
}

// warm up every implementation on every row first (V8 tiers wasm and JS up as they run)
for (const [, texts] of ROWS) for (const fn of Object.values(IMPLS)) await fn(texts);

const results = [];
for (const [name, texts] of ROWS) {
  const row = { name };
  for (const [impl, fn] of Object.entries(IMPLS)) {
    row[impl] = await rate(texts, fn);
    process.stderr.write(`  ${name}: ${impl} ${row[impl].toFixed(0)} texts/s\n`);
  }
  results.push(row);
}

const fmt = (v) => (v >= 100 ? v.toFixed(0) : v.toFixed(1));
const impls = Object.keys(IMPLS);
console.log(`\n### Tokenizer: texts/s (median of ${ROUNDS}; bert-base-uncased WordPiece; Node ${process.versions.node}, mlrt SIMD128 build)\n`);
console.log(`| texts | ${impls.join(' | ')} | mlrt / JS | mlrt / N-API (per text) |`);
console.log(`|---|${impls.map(() => '---:').join('|')}|---:|---:|`);
let ok = true;
for (const row of results) {
  const js = row['mlrt encode'] / row['@huggingface/tokenizers (JS) encode'];
  const nat = row['mlrt encode'] / row['tokenizers (N-API) encode'];
  console.log(`| ${row.name} | ${impls.map((i) => fmt(row[i])).join(' | ')} | ${js.toFixed(1)}x | ${nat.toFixed(1)}x |`);
  if (js < 3) ok = false;
  if (row.name.startsWith('short') && nat < 1) ok = false;
}
console.log(`\nTargets (issue 20): >= 3x the pure-JS tokenizer on every row, >= 1x the N-API binding on short texts: ${ok ? 'met' : 'NOT met'}.`);
console.log(`mlrt = tokenizers on every text checked; @huggingface/tokenizers agrees on ${agree}/${total}.`);
console.log('transformers.js: not installed (its onnxruntime-node install script needs the network), not measured.');
mlrt.dispose();
