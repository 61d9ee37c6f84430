#!/usr/bin/env node
// bench/search.mjs — the reverse dictionary's query latency (issue 22), in Node and in headless
// Chromium, beside the all-MiniLM-L6-v2 shape's (the encoder alone: it has no word index).
//
//   node bench/search.mjs [--quick] [--json FILE]
//
// A query: a held-out WordNet definition (models/wordnet/heldout.jsonl, 200 of them) -> enc.embed
// (tokenizer + encoder) -> the top 10 of the 147,306-word lemma index (web/lemma-index.mjs, Q8),
// as the demo's Words tab and the edge's POST /search do it. Medians per query after a warm-up of
// 20, each run in a fresh Node process or a fresh page (3 runs; the table shows the medians).
// The MiniLM shape's folder (random BERT-init weights, seed 6, F32, 22.7M parameters) is made by
// tools/encoder/folder.mjs into build/bench-encoder/minilm/ when missing.
import { fork } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { serveRepo } from './static.mjs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const argv = process.argv.slice(2);
const QUICK = argv.includes('--quick');
const RUNS = QUICK ? 1 : 3;
const N_QUERIES = QUICK ? 50 : 200;
const FOLDER_FILES = ['model.safetensors', 'config.json', 'tokenizer.json', 'tokenizer_config.json', 'modules.json',
  '1_Pooling/config.json', 'sentence_bert_config.json'];
const MODELS = {
  wordnet: { label: 'models/wordnet (4 × 128, trained) + 147,306-word Q8 index', dir: 'models/wordnet', index: 'build/wordnet/lemmas.q8.index' },
  minilm: { label: 'all-MiniLM-L6-v2 shape (6 × 384, random weights), encoder only', dir: 'build/bench-encoder/minilm', index: null },
};
const median = (v) => { const s = [...v].sort((a, b) => a - b); const h = s.length >> 1; return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2; };
const fmt = (v, d = 2) => (v == null ? 'n/a' : v.toFixed(d));

function queries() {
  const lines = readFileSync(path.join(REPO, 'models/wordnet/heldout.jsonl'), 'utf8').split('\n').filter(Boolean);
  const step = Math.floor(lines.length / N_QUERIES);
  return Array.from({ length: N_QUERIES }, (_, i) => JSON.parse(lines[i * step]).definition);
}

const available = (m) => FOLDER_FILES.slice(0, 3).every((f) => existsSync(path.join(REPO, m.dir, f))) && (!m.index || existsSync(path.join(REPO, m.index)));

// ---- Node: one fresh process per run ----

async function nodeChild(model) {
  const m = MODELS[model];
  const { createRuntime } = await import('../wasm/mlrt.mjs');
  const { readIndex } = await import('../web/lemma-index.mjs');
  const { measureQueries } = await import('./search-run.mjs');
  const files = {};
  for (const f of FOLDER_FILES) if (existsSync(path.join(REPO, m.dir, f))) files[f] = new Uint8Array(readFileSync(path.join(REPO, m.dir, f)));
  const indexBytes = m.index ? new Uint8Array(readFileSync(path.join(REPO, m.index))) : null;
  return measureQueries({ createRuntime, readIndex, files, indexBytes, queries: queries() });
}

function runNode(model) {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(import.meta.url), ['--child', model, ...(QUICK ? ['--quick'] : [])], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    child.once('message', resolve);
    child.once('exit', (code) => code && reject(new Error(`bench/search child (${model}) exited with ${code}`)));
  });
}

// ---- Chromium: one fresh page per run ----

const ALLOWED = ['/wasm/', '/web/lemma-index.mjs', '/bench/search-run.mjs', '/bench/median.mjs', '/models/wordnet/', '/build/wordnet/', '/build/bench-encoder/minilm/'];

const serve = () => serveRepo({ allowed: ALLOWED, title: 'mlrt search bench' });

async function runChromium(models) {
  const { CHROMIUM, CHROMIUM_ARGS } = await import('../tests/web/page.mjs');
  if (!existsSync(CHROMIUM)) return { error: `${CHROMIUM} is not installed` };
  const { chromium } = await import('playwright-core');
  const server = await serve();
  const url = `http://127.0.0.1:${server.address().port}/`;
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const out = { version: browser.version() };
  try {
    for (const model of models) {
      const runs = [];
      for (let r = 0; r < RUNS; r++) {
        const context = await browser.newContext();
        const page = await context.newPage();
        await page.goto(url);
        const m = MODELS[model];
        runs.push(await page.evaluate(async ({ dir, index, files, qs }) => {
          const { createRuntime } = await import('/wasm/mlrt.mjs');
          const { readIndex } = await import('/web/lemma-index.mjs');
          const { measureQueries } = await import('/bench/search-run.mjs');
          const get = async (p) => {
            const res = await fetch(p);
            return res.ok ? new Uint8Array(await res.arrayBuffer()) : null;
          };
          const named = {};
          for (const f of files) {
            const b = await get(`/${dir}/${f}`);
            if (b) named[f] = b;
          }
          return measureQueries({ createRuntime, readIndex, files: named, indexBytes: index ? await get(`/${index}`) : null, queries: qs });
        }, { dir: m.dir, index: m.index, files: FOLDER_FILES, qs: queries() }));
        await context.close();
      }
      out[model] = summarize(runs);
      console.error(`bench/search: chromium ${model} ${JSON.stringify(out[model])}`);
    }
  } finally {
    await browser.close();
    server.close();
  }
  return out;
}

function summarize(runs) {
  const keys = ['loadMs', 'indexMs', 'embedMs', 'searchMs', 'totalMs', 'totalP90Ms'];
  return { build: runs[0].build, meanTokens: runs[0].meanTokens, ...Object.fromEntries(keys.map((k) => [k, runs[0][k] == null ? null : median(runs.map((r) => r[k]))])) };
}

async function main() {
  const minilm = path.join(REPO, MODELS.minilm.dir);
  if (!existsSync(path.join(minilm, 'model.safetensors'))) {
    const { makeFolder } = await import('../tools/encoder/folder.mjs');
    for (const [name, bytes] of Object.entries(await makeFolder('all-MiniLM-L6-v2'))) {
      mkdirSync(path.dirname(path.join(minilm, name)), { recursive: true });
      writeFileSync(path.join(minilm, name), bytes);
    }
  }
  const models = Object.keys(MODELS).filter((m) => available(MODELS[m]));
  const skipped = Object.keys(MODELS).filter((m) => !models.includes(m));
  const { createRuntime } = await import('../wasm/mlrt.mjs');
  if (typeof (await createRuntime()).loadEncoder !== 'function') {
    console.log('bench/search: this mlrt has no loadEncoder (issue 21): skipped');
    return;
  }
  const node = {};
  for (const model of models) {
    const runs = [];
    for (let r = 0; r < RUNS; r++) runs.push(await runNode(model));
    node[model] = summarize(runs);
    console.error(`bench/search: node ${model} ${JSON.stringify(node[model])}`);
  }
  const browser = await runChromium(models);
  const lines = [`## Text queries: the reverse dictionary beside the MiniLM shape — ${N_QUERIES} held-out WordNet definitions, medians of ${RUNS} fresh processes / pages`, '',
    `Node ${process.version}; Chromium ${browser.version ?? 'n/a'}. A query: enc.embed(text) (tokenizer + encoder), then for the reverse dictionary the top 10 of 147,306 words.`, '',
    '| model | where | build | tokens per query (mean) | load ms (encoder · index) | tokens + embedding, ms | search, ms | query total, ms (median · p90) |',
    '|:---|:---|:---|---:|---:|---:|---:|---:|'];
  for (const model of Object.keys(MODELS)) {
    for (const [where, res] of [['Node', node[model]], ['Chromium', browser[model]]]) {
      if (!res) {
        lines.push(`| ${MODELS[model].label} | ${where} | n/a | | | | | |`);
        continue;
      }
      lines.push(`| ${MODELS[model].label} | ${where} | ${res.build} | ${fmt(res.meanTokens, 1)} | ${fmt(res.loadMs, 0)} · ${res.indexMs == null ? '–' : fmt(res.indexMs, 0)} | ${fmt(res.embedMs)} | ${res.searchMs == null ? '–' : fmt(res.searchMs)} | ${fmt(res.totalMs)} · ${fmt(res.totalP90Ms)} |`);
    }
  }
  if (skipped.length) lines.push('', `n/a: ${skipped.map((m) => `${m} (${MODELS[m].dir}${MODELS[m].index ? ` or ${MODELS[m].index}` : ''} missing${m === 'wordnet' ? ': run `make wordnet-index`' : ''})`).join('; ')}`);
  if (browser.error) lines.push('', `Chromium: ${browser.error}`);
  console.log(lines.join('\n'));
  const json = argv.indexOf('--json');
  if (json >= 0) writeFileSync(argv[json + 1], `${JSON.stringify({ node, browser }, null, 2)}\n`);
}

if (argv[0] === '--child') process.send(await nodeChild(argv[1]));
else await main();
