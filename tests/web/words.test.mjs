// words.test.mjs — the demo's Words tab (the reverse dictionary) in real Chromium.
//
// One browser profile and one server (web/server.mjs on a free port, serving a copy of the
// models), then, in order: first visit (every file downloaded once) -> held-out descriptions
// typed into the search box: the right word in the top 10 about as often as the training script
// measured, and the page's top 10 equal to mlrt's in Node -> tokens and facts -> a reload makes
// no request for the model or the index -> a corrupted cache entry is detected, evicted and
// fetched again -> with the server stopped, a reload still searches.
// Needs the lemma index: build/wordnet/lemmas.q8.index (`make wordnet-index`, mlrt's encoder).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import { startDemoServer } from '../../web/server.mjs';
import { createRuntime } from '../../wasm/mlrt.mjs';
import { readIndex, topK } from '../../web/lemma-index.mjs';
import { goldRank, readEncoderFiles, readHeldout, readLemmas } from '../../tools/wordnet/common.mjs';
import { CHROMIUM, CHROMIUM_ARGS, waitForText } from './page.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const ARTIFACTS = join(ROOT, 'build', 'artifacts');
const MODEL_DIR = join(ROOT, 'models', 'wordnet');
const INDEX = join(ROOT, 'build', 'wordnet', 'lemmas.q8.index');
const SAMPLE = 200; // held-out definitions typed into the page
// Chromium runs mlrt-relaxed.wasm: Node runs it too, to compare rankings (Node 20 needs the flag,
// set before any wasm is compiled).
v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

const wordsReady = (page) => page.waitForSelector('body[data-words-state="ready"]', { timeout: 120_000 });

// Types text into the search box and waits for the results of exactly that text.
async function search(page, text) {
  await page.fill('#w-query', text);
  await page.waitForFunction((t) => document.getElementById('w-results').dataset.query === t, text.trim(), { timeout: 30_000 });
  return page.$$eval('#w-results li', (lis) => lis.map((li) => ({ word: li.dataset.word, score: Number(li.dataset.score) })));
}

test('the Words tab in Chromium', { timeout: 600_000 }, async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.skip(`${CHROMIUM} is not installed (apt-get install chromium); the browser test needs it`);
    return;
  }
  const rtNode = await createRuntime();
  if (typeof rtNode.loadEncoder !== 'function') {
    t.skip('this mlrt has no loadEncoder yet (the sentence encoder, issue 21): no Words tab to test');
    return;
  }
  assert.ok(existsSync(INDEX), `${INDEX} is missing: run \`make wordnet-index\``);
  const { chromium } = await import('playwright-core');
  const manifest = JSON.parse(readFileSync(join(ROOT, 'web', 'models', 'manifest.json'), 'utf8'));
  const spec = manifest.words;

  // A private copy of web/models: the manifest, the digit model the page loads at start, the words files.
  const work = mkdtempSync(join(tmpdir(), 'mlrt-words-'));
  const modelsDir = join(work, 'models');
  mkdirSync(join(modelsDir, 'wordnet', '1_Pooling'), { recursive: true });
  copyFileSync(join(ROOT, 'web', 'models', 'manifest.json'), join(modelsDir, 'manifest.json'));
  copyFileSync(join(ROOT, 'build', 'models', manifest.default), join(modelsDir, manifest.default));
  for (const f of [...spec.files, spec.metrics]) copyFileSync(join(MODEL_DIR, f), join(modelsDir, 'wordnet', f));
  copyFileSync(INDEX, join(modelsDir, 'wordnet', spec.index));
  // the encoder's files, the index, and mlrt.wasm (the SIMD128 build the index scan runs on)
  const paths = [...[...spec.files, spec.index].map((f) => `/models/wordnet/${f}`), '/wasm/mlrt.wasm'];
  const INDEX_PATH = `/models/wordnet/${spec.index}`;

  // What mlrt gives in Node for the same queries (the relaxed build, as the page's), with the same
  // index and the same scoring (mlrt's Q8 kernels, SIMD128 build, as the page's worker).
  const lemmas = readLemmas();
  const held = readHeldout(lemmas);
  const step = Math.floor(held.length / SAMPLE);
  const sample = Array.from({ length: SAMPLE }, (_, i) => held[i * step]);
  const enc = await rtNode.loadEncoder(readEncoderFiles());
  const index = readIndex(new Uint8Array(readFileSync(INDEX))).useRuntime(await createRuntime({ relaxed: false }));
  const nodeTop = sample.map((h) => topK(index.scores(enc.embed(h.definition.trim())), 10).map((i) => index.word(i)));
  const metrics = JSON.parse(readFileSync(join(MODEL_DIR, 'metrics.json'), 'utf8'));

  const server = await startDemoServer({ port: 0, modelsDir, testHooks: true });
  let serverUp = true;
  const stats = async () => (await fetch(`${server.url}__stats`)).json();
  const requests = (s, path) => s[path]?.requests ?? 0;
  const context = await chromium.launchPersistentContext(join(work, 'profile'), {
    executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, viewport: { width: 1280, height: 900 },
  });
  t.after(async () => {
    await context.close();
    if (serverUp) await server.close();
    rmSync(work, { recursive: true, force: true });
  });
  mkdirSync(ARTIFACTS, { recursive: true });
  const page = context.pages()[0] ?? (await context.newPage());
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`console: ${m.text()}`); });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));

  await t.test('the tab loads lazily: the digits alone do not fetch the encoder', async () => {
    await page.goto(server.url);
    await page.waitForSelector('body[data-state="ready"]');
    assert.equal(await page.locator('body').getAttribute('data-words-state'), 'idle');
    const s = await stats();
    for (const p of paths) assert.equal(requests(s, p), 0, `${p} fetched before the Words tab opened`);
  });

  await t.test('first visit of the Words tab downloads every file once, with a progress bar', async () => {
    const sawProgress = page.waitForSelector('#w-progress:not([hidden])', { timeout: 30_000 }).then(() => true, () => false);
    await page.click('#tab-words');
    await wordsReady(page);
    assert.ok(await sawProgress, 'no progress bar was shown');
    assert.equal(await page.locator('#w-source').getAttribute('data-source'), 'network');
    assert.equal(page.url(), `${server.url}#words`);
    const s = await stats();
    for (const p of paths) assert.equal(requests(s, p), 1, `${p} requests`);
    assert.equal(await page.locator('#w-error').isHidden(), true);
  });

  await t.test(`${SAMPLE} held-out definitions typed in: the right word in the top 10 as often as metrics.json says`, async (st) => {
    let hits = 0, same = 0;
    const differ = [];
    for (const [i, h] of sample.entries()) {
      const got = (await search(page, h.definition)).map((r) => r.word);
      assert.equal(got.length, 10);
      const gold = new Set(h.lemmas.map((l) => l.toLowerCase()));
      if (got.some((w) => gold.has(w.toLowerCase()))) hits++;
      if (got.join('\n') === nodeTop[i].join('\n')) same++;
      else differ.push(i);
      // Near-ties may swap if Chromium's engine rounds a relaxed multiply-add unlike Node's, never more.
      const overlap = got.filter((w) => nodeTop[i].includes(w)).length;
      assert.ok(overlap >= 8, `query ${i} "${h.definition}": page ${got.join(', ')} vs Node ${nodeTop[i].join(', ')}`);
    }
    // The page's rate against the training script's (f32 model, f32 lemma embeddings): a binomial
    // sample of SAMPLE queries, so 3 standard errors either side.
    const p = metrics.eval.f32['recall@10'];
    const se = Math.sqrt((p * (1 - p)) / SAMPLE);
    const rate = hits / SAMPLE;
    st.diagnostic(`recall@10 on the page ${(rate * 100).toFixed(1)}% (${hits}/${SAMPLE}); metrics.json ${(p * 100).toFixed(1)}% ± ${(3 * se * 100).toFixed(1)} (3 SE); top 10 identical to Node's for ${same}/${SAMPLE}`);
    assert.ok(Math.abs(rate - p) <= 3 * se, `recall@10 ${rate} is not within 3 SE (${(3 * se).toFixed(3)}) of ${p}`);
    assert.ok(same >= SAMPLE * 0.9, `top 10 identical to Node's for only ${same}/${SAMPLE} (${differ.join(', ')})`);
    // the same figure from the Node ranks, as a check of the sample itself
    const nodeHits = sample.filter((h) => goldRank(index.scores(enc.embed(h.definition.trim())), h.gold) < 10).length;
    st.diagnostic(`Node on the same sample: ${nodeHits}/${SAMPLE}`);
  });

  await t.test('the tokens the query became, the facts, the latency', async () => {
    const text = 'a small boat pulled by a larger one';
    const results = await search(page, text);
    const tokens = await page.$$eval('#w-tokens li', (lis) => lis.map((li) => [Number(li.dataset.id), li.textContent]));
    const ids = Array.from(enc.tokenizer.encode(text).ids);
    assert.deepEqual(tokens.map(([id]) => id), ids);
    assert.deepEqual(tokens.map(([, tok]) => tok), ids.map((id) => enc.tokenizer.idToToken(id)));
    assert.equal(tokens[0][1], '[CLS]');
    assert.equal(await page.locator('#w-token-count').textContent(), String(ids.length));
    assert.ok(results.every((r, i) => r.score <= 1.0001 && (i === 0 || r.score <= results[i - 1].score)), 'scores are cosines, best first');
    assert.match(await page.locator('#w-latency').textContent(), /ms for this query: tokens .* embedding .* search of every word/);
    assert.match(await page.locator('#w-fact-shape').textContent(), /^4 layers × 128 hidden, 4 heads/);
    assert.match(await page.locator('#w-fact-index').textContent(), /^147,306 words × 128 q8, .* scored by mlrt's Q8 kernels$/);
    assert.match(await page.locator('#w-fact-quality').textContent(), /27\.5%/);
    assert.match(await page.locator('#w-fact-query').textContent(), /per query \(median of \d+\)/);
    assert.match(await page.locator('#w-fact-build').textContent(), /^relaxed SIMD \(the index scan: SIMD128\), in a Web Worker$/);
    // a word piece and an unknown character show as such
    await search(page, 'hyperventilation ☃');
    assert.ok(await page.locator('#w-tokens li.piece').count() > 0);
    // the example chips search too
    await page.click('[data-example] >> nth=0');
    await page.waitForFunction(() => document.getElementById('w-results').dataset.query === 'feeling or showing great happiness');
    await search(page, 'a small boat pulled by a larger one');
    await page.screenshot({ path: join(ARTIFACTS, 'words-desktop.png'), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `the Words tab is ${overflow}px wider than a phone`);
    await page.screenshot({ path: join(ARTIFACTS, 'words-phone.png'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  await t.test('rt.loadEncoderAsync in the page: fetch() Responses streamed and Blobs give loadEncoder\'s bits', async () => {
    const r = await page.evaluate(async (files) => {
      const { createRuntime } = await import('/wasm/mlrt.mjs');
      const rt = await createRuntime();
      const get = () => Promise.all(files.map(async (f) => [f, await fetch(`/models/wordnet/${f}`, { cache: 'no-store' })]));
      const bytes = Object.fromEntries(await Promise.all((await get()).map(async ([f, res]) => [f, new Uint8Array(await res.arrayBuffer())])));
      const text = ['a small boat pulled by a larger one', 'to move quickly'];
      const same = (a, b) => a.length === b.length && a.every((v, i) => Object.is(v, b[i]));
      const want = rt.loadEncoder(bytes).embed(text);
      const responses = Object.fromEntries(await get()), w = responses['model.safetensors'].headers; // (a Content-Length, no encoding: streamed)
      const sized = w.get('content-length') === String(bytes['model.safetensors'].length) && !w.get('content-encoding');
      const streamed = await rt.loadEncoderAsync(responses);
      const blobs = await rt.loadEncoderAsync(Object.fromEntries(Object.entries(bytes).map(([f, b]) => [f, new Blob([b])])));
      let refused = '';
      try { rt.loadEncoder({ ...bytes, 'model.safetensors': new Blob([bytes['model.safetensors']]) }); } catch (e) { refused = e.code; }
      return { sized, streamed: same(streamed.embed(text), want), blobs: same(blobs.embed(text), want), refused, dim: streamed.info.dim };
    }, spec.files);
    assert.deepEqual(r, { sized: true, streamed: true, blobs: true, refused: 'INVALID_ARGUMENT', dim: 128 });
  });

  await t.test('a reload fetches neither the encoder nor the index', async () => {
    const before = await stats();
    await page.reload();
    await wordsReady(page);
    assert.equal(await page.locator('#w-source').getAttribute('data-source'), 'cache');
    const after = await stats();
    for (const p of paths) assert.equal(requests(after, p), requests(before, p), `${p} was requested again`);
    assert.ok((await search(page, sample[0].definition)).length === 10);
  });

  await t.test('a corrupted cache entry is detected, evicted and fetched again', async () => {
    const url = new URL(INDEX_PATH, server.url).href;
    await page.evaluate(async (key) => {
      const db = await new Promise((ok, fail) => {
        const r = indexedDB.open('mlrt-demo');
        r.onsuccess = () => ok(r.result);
        r.onerror = () => fail(r.error);
      });
      const tx = db.transaction('bodies', 'readwrite');
      const store = tx.objectStore('bodies');
      const body = await new Promise((ok) => { store.get(key).onsuccess = (e) => ok(e.target.result); });
      const bytes = new Uint8Array(body.bytes);
      bytes[bytes.length - 1000] ^= 0x21; // one word's embedding changed: same size, wrong digest
      store.put({ url: key, bytes: bytes.buffer });
      await new Promise((ok) => { tx.oncomplete = ok; });
      db.close();
    }, url);
    const before = await stats();
    await page.reload();
    await wordsReady(page);
    const after = await stats();
    assert.equal(requests(after, INDEX_PATH), requests(before, INDEX_PATH) + 1);
    assert.match(await page.locator('#w-status').textContent(), /lemmas\.q8\.index: the cache entry was corrupt/);
    assert.equal(await page.locator('#w-source').getAttribute('data-source'), 'cache and network');
    for (const p of paths.filter((x) => x !== INDEX_PATH)) assert.equal(requests(after, p), requests(before, p), p);
    assert.ok((await search(page, sample[1].definition)).length === 10);
  });

  await t.test('with the server stopped, a reload still searches', async () => {
    assert.ok(await page.evaluate(async () => Boolean((await navigator.serviceWorker.ready) && navigator.serviceWorker.controller)));
    await server.close();
    serverUp = false;
    await page.reload();
    await wordsReady(page);
    assert.equal(await page.locator('#w-source').getAttribute('data-source'), 'cache');
    const got = (await search(page, sample[2].definition)).map((r) => r.word);
    assert.ok(got.filter((w) => nodeTop[2].includes(w)).length >= 8, `${got.join(', ')} vs ${nodeTop[2].join(', ')}`);
    await waitForText(page, '#w-status', /Ready/);
  });

  await t.test('no console errors', () => {
    assert.deepEqual(errors, []);
  });
});
