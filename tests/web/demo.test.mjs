// demo.test.mjs — the web demo in real Chromium (playwright-core, Debian's /usr/bin/chromium).
//
// One browser profile and one server (web/server.mjs on a free port, serving a copy of
// the models so the test can change and break them), then, in order:
//   first visit -> 50 MNIST test digits drawn with the mouse -> phone viewport (touch
//   and pen) -> keyboard -> second visit from the cache -> revalidation -> corrupted
//   cache entries -> models that fail to load -> server stopped -> clear cache.
// Screenshots go to build/artifacts/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startDemoServer } from '../../web/server.mjs';
import { createRuntime } from '../../wasm/mlrt.mjs';
import { loadSplit } from '../../tools/mnist-split.mjs';
import { drawPath, threePath, toPage } from './strokes.mjs';
import { CHROMIUM, CHROMIUM_ARGS, checkForUpdates, clearPad, drawDigit, prediction, ready, text, waitForText } from './page.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const ARTIFACTS = join(ROOT, 'build', 'artifacts');
const MODEL = 'mnist-mlp.safetensors';
const MODEL_PATH = `/models/${MODEL}`;
// The build the page picks: mlrt-relaxed.wasm where Chromium has relaxed SIMD (156 does), else mlrt.wasm.
let WASM_PATH = '/wasm/mlrt.wasm';
const DIGITS = 50;
const MIN_CORRECT = 45;

test('web demo in Chromium', { timeout: 180_000 }, async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.skip(`${CHROMIUM} is not installed (apt-get install chromium); the browser test needs it`);
    return;
  }
  const { chromium } = await import('playwright-core');
  const manifest = JSON.parse(readFileSync(join(ROOT, 'web', 'models', 'manifest.json'), 'utf8'));

  // A private copy of web/models with the trained models, plus a truncated one.
  const work = mkdtempSync(join(tmpdir(), 'mlrt-web-'));
  const modelsDir = join(work, 'models');
  mkdirSync(modelsDir);
  copyFileSync(join(ROOT, 'web', 'models', 'manifest.json'), join(modelsDir, 'manifest.json'));
  for (const { file } of manifest.models) {
    const from = join(ROOT, 'build', 'models', file);
    assert.ok(existsSync(from), `${from} is missing: build the models first (make)`);
    copyFileSync(from, join(modelsDir, file));
  }
  const modelBytes = readFileSync(join(modelsDir, MODEL));
  const truncated = modelBytes.subarray(0, 100_000);
  writeFileSync(join(modelsDir, 'truncated.safetensors'), truncated);
  // The code mlrt itself gives the truncated file, so the page must show the same.
  const rtNode = await createRuntime();
  const truncatedCode = (() => {
    try {
      rtNode.loadFromBytes(truncated);
    } catch (e) {
      return e.code;
    }
    throw new Error('a truncated model loaded');
  })();

  const server = await startDemoServer({ port: 0, modelsDir, testHooks: true });
  let serverUp = true;
  const stats = async () => (await fetch(`${server.url}__stats`)).json();
  const requests = (s, path) => s[path]?.requests ?? 0;

  const context = await chromium.launchPersistentContext(join(work, 'profile'), {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 900 },
  });
  t.after(async () => {
    await context.close();
    if (serverUp) await server.close();
    rmSync(work, { recursive: true, force: true });
  });
  mkdirSync(ARTIFACTS, { recursive: true });

  const page = context.pages()[0] ?? (await context.newPage());
  const consoleErrors = [];
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => consoleErrors.push(`pageerror: ${e.message}`));

  const mnist = loadSplit('test');
  const digit = (i) => mnist.images.subarray(i * 784, (i + 1) * 784);

  await t.test('first visit downloads the runtime and the default model', async () => {
    await page.goto(server.url);
    await ready(page);
    assert.equal(await page.locator('#model-source').getAttribute('data-source'), 'network');
    assert.equal(await page.locator('body').getAttribute('data-model'), manifest.default);
    const relaxed = await page.evaluate(async () => (await import('/wasm/mlrt.mjs')).relaxedSimdSupported());
    if (relaxed) WASM_PATH = '/wasm/mlrt-relaxed.wasm';
    assert.match(await text(page, '#fact-build'), relaxed ? /^relaxed SIMD · try SIMD128 · try scalar$/ : /^SIMD128 · try scalar$/);
    assert.match(await text(page, '#fact-wasm'), relaxed ? /^mlrt-relaxed\.wasm/ : /^mlrt\.wasm/);
    assert.match(await text(page, '#fact-format'), /^safetensors/);
    assert.match(await text(page, '#fact-params'), /^407,050$/);
    assert.match(await text(page, '#cache-size'), /MB in 2 files/);
    assert.equal(await page.locator('#error').isHidden(), true);
    const s = await stats();
    assert.equal(requests(s, WASM_PATH), 1);
    assert.equal(requests(s, MODEL_PATH), 1);
  });

  await t.test(`${DIGITS} MNIST test digits drawn with the mouse: at least ${MIN_CORRECT} right`, async (st) => {
    let correct = 0;
    const wrong = [];
    for (let i = 0; i < DIGITS; i++) {
      const got = await drawDigit(page, digit(i));
      if (got === mnist.labels[i]) correct++;
      else wrong.push(`#${i}: ${mnist.labels[i]} read as ${got}`);
    }
    st.diagnostic(`${correct}/${DIGITS} correct${wrong.length ? `; wrong: ${wrong.join(', ')}` : ''}`);
    assert.ok(correct >= MIN_CORRECT, `only ${correct}/${DIGITS} digits recognised (${wrong.join(', ')})`);
    assert.match(await text(page, '#fact-predict'), /ms per digit/);

    // A smooth hand-drawn 3 for the screenshot.
    await clearPad(page);
    await drawPath(page.mouse, await page.locator('#pad').boundingBox(), threePath());
    assert.equal(await prediction(page), 3);
    await page.screenshot({ path: join(ARTIFACTS, 'demo-desktop.png'), fullPage: true });
  });

  await t.test('phone viewport: fits, draws with touch and pen', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `the page is ${overflow}px wider than a phone`);
    const box = await page.locator('#pad').boundingBox();
    assert.ok(box.width >= 300 && box.x >= 0 && box.x + box.width <= 390, `canvas box ${JSON.stringify(box)}`);

    const cdp = await context.newCDPSession(page);
    await page.locator('#pad').scrollIntoViewIfNeeded();
    const padBox = await page.locator('#pad').boundingBox();
    const points = threePath().map(([gx, gy]) => toPage(padBox, gx, gy));
    // Touch: a finger drawing the 3.
    await clearPad(page);
    await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [points[0]] });
    for (const p of points.slice(1)) await cdp.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: [p] });
    await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
    assert.equal(await prediction(page), 3, 'touch');
    // Pen: the same 3 with a stylus.
    await clearPad(page);
    const pen = (type, p, buttons) => cdp.send('Input.dispatchMouseEvent', {
      type, x: p.x, y: p.y, button: 'left', buttons, clickCount: 1, pointerType: 'pen', force: 0.5,
    });
    await pen('mouseMoved', points[0], 0);
    await pen('mousePressed', points[0], 1);
    for (const p of points.slice(1)) await pen('mouseMoved', p, 1);
    await pen('mouseReleased', points.at(-1), 0);
    assert.equal(await prediction(page), 3, 'pen');
    await cdp.detach();
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: join(ARTIFACTS, 'demo-phone.png'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  await t.test('every control is reachable with the keyboard; Esc clears', async () => {
    await page.evaluate(() => document.activeElement?.blur());
    const seen = [];
    for (let i = 0; i < 14; i++) {
      await page.keyboard.press('Tab');
      seen.push(await page.evaluate(() => document.activeElement?.id || document.activeElement?.textContent?.trim()));
    }
    for (const id of ['clear', 'model-select', 'open-file', 'model-url', 'Load URL', 'check-updates', 'clear-cache']) {
      assert.ok(seen.includes(id), `${id} is not reached by Tab (order: ${seen.join(', ')})`);
    }
    await drawDigit(page, digit(0));
    await page.evaluate(() => document.activeElement?.blur());
    await page.keyboard.press('Escape');
    assert.equal(await prediction(page), null);
  });

  await t.test('a second visit fetches neither the model nor the wasm', async () => {
    const before = await stats();
    await page.reload();
    await ready(page);
    assert.equal(await page.locator('#model-source').getAttribute('data-source'), 'cache');
    assert.match(await text(page, '#fact-wasm'), /from cache/);
    await page.waitForTimeout(1500); // past the background revalidation's start
    const after = await stats();
    assert.equal(requests(after, WASM_PATH), requests(before, WASM_PATH), 'the wasm was requested again');
    assert.equal(requests(after, MODEL_PATH), requests(before, MODEL_PATH), 'the model was requested again');
    assert.equal(await drawDigit(page, digit(1)), mnist.labels[1]);
  });

  await t.test('the page is cross-origin isolated, and predictBatch on 2 threads gives the bits of 1 thread', async () => {
    assert.match(await text(page, '#fact-threads'), /^1 per drawing; up to \d+ for batches \(cross-origin isolated\)$/);
    const got = await page.evaluate(async (model) => {
      const { createRuntime } = await import('/wasm/mlrt.mjs');
      const bytes = new Uint8Array(await (await fetch(model)).arrayBuffer());
      const one = await createRuntime({ relaxed: false }), two = await createRuntime({ threads: 2 });
      const n = 300, x = new Float32Array(n * 784);
      for (let i = 0; i < x.length; i++) x[i] = ((i * 7919) % 1000) / 1000;
      const a = one.loadFromBytes(bytes).predictBatch(x, n), b = two.loadFromBytes(bytes).predictBatch(x, n);
      const ua = new Uint32Array(a.buffer), ub = new Uint32Array(b.buffer);
      let differ = 0;
      for (let i = 0; i < ua.length; i++) if (ua[i] !== ub[i]) differ++;
      const threads = two.build.threads;
      two.dispose();
      return { isolated: crossOriginIsolated, threads, after: two.build.threads, outputs: a.length, differ };
    }, MODEL_PATH);
    assert.deepEqual(got, { isolated: true, threads: 2, after: 1, outputs: 3000, differ: 0 });
  });

  await t.test('?build=simd runs the SIMD128 build, which reads a digit as the default build does', async () => {
    const simd = await context.newPage();
    simd.on('pageerror', (e) => consoleErrors.push(`pageerror (simd page): ${e.message}`));
    await simd.goto(`${server.url}?build=simd`);
    await ready(simd);
    assert.match(await text(simd, '#fact-build'), /^SIMD128/);
    assert.match(await text(simd, '#fact-wasm'), /^mlrt\.wasm/);
    assert.equal(await drawDigit(simd, digit(7)), await drawDigit(page, digit(7)));
    await simd.close();
  });

  await t.test('?build=scalar runs the scalar build', async () => {
    const scalar = await context.newPage();
    scalar.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(`console (scalar page): ${m.text()}`);
    });
    scalar.on('pageerror', (e) => consoleErrors.push(`pageerror (scalar page): ${e.message}`));
    await scalar.goto(`${server.url}?build=scalar`);
    await ready(scalar);
    assert.match(await text(scalar, '#fact-build'), /^scalar/);
    assert.match(await text(scalar, '#fact-wasm'), /^mlrt-scalar\.wasm/);
    assert.equal(await drawDigit(scalar, digit(7)), mnist.labels[7]);
    await scalar.close();
  });

  await t.test('no console errors in the normal flow', () => {
    assert.deepEqual(consoleErrors, []);
  });

  await t.test('entries not checked for a while are revalidated in the background', async () => {
    // Age every entry's last check, as if the last visit were a day ago.
    await page.evaluate(async () => {
      const db = await new Promise((ok, fail) => {
        const r = indexedDB.open('mlrt-demo');
        r.onsuccess = () => ok(r.result);
        r.onerror = () => fail(r.error);
      });
      const tx = db.transaction('entries', 'readwrite');
      const store = tx.objectStore('entries');
      store.getAll().onsuccess = (e) => {
        for (const meta of e.target.result) store.put({ ...meta, checkedAt: Date.now() - 86_400_000 });
      };
      await new Promise((ok) => { tx.oncomplete = ok; });
      db.close();
    });
    const s0 = await stats();
    await page.reload();
    await ready(page);
    assert.equal(await page.locator('#model-source').getAttribute('data-source'), 'cache');
    await waitForText(page, '#status', /Up to date: checked 2 files/);
    const s1 = await stats();
    for (const path of [MODEL_PATH, WASM_PATH]) {
      assert.equal(s1[path]['304'] ?? 0, (s0[path]['304'] ?? 0) + 1, `${path} revalidated with a 304`);
      assert.equal(s1[path]['200'], s0[path]['200'], `${path} not downloaded`);
    }
  });

  await t.test('Check for updates: 304 keeps the entry, a changed file replaces it', async () => {
    const s0 = await stats();
    await checkForUpdates(page);
    assert.match(await text(page, '#status'), /Up to date: checked 2 files/);
    const s1 = await stats();
    assert.equal(s1[MODEL_PATH]['304'] ?? 0, (s0[MODEL_PATH]['304'] ?? 0) + 1);
    assert.equal(s1[WASM_PATH]['304'] ?? 0, (s0[WASM_PATH]['304'] ?? 0) + 1);

    // The server's file changes (new bytes, new ETag): the page takes the new version.
    const file = join(modelsDir, MODEL);
    copyFileSync(join(modelsDir, 'mnist-mlp.bintensors'), file);
    utimesSync(file, new Date(), new Date(Date.now() + 5_000));
    await checkForUpdates(page);
    assert.match(await text(page, '#status'), /changed on the server: updated and reloaded/);
    assert.match(await text(page, '#fact-format'), /^bintensors/);
    assert.equal(await page.locator('#model-source').getAttribute('data-source'), 'network (updated)');
    assert.equal((await stats())[MODEL_PATH]['200'], s1[MODEL_PATH]['200'] + 1);

    // And back, so the rest of the test runs on the original file.
    writeFileSync(file, modelBytes);
    utimesSync(file, new Date(), new Date(Date.now() + 10_000));
    await checkForUpdates(page);
    assert.match(await text(page, '#fact-format'), /^safetensors/);
  });

  await t.test('corrupted cache entries are detected, evicted and fetched again', async () => {
    const urls = { model: new URL(MODEL_PATH, server.url).href, wasm: new URL(WASM_PATH, server.url).href };
    await page.evaluate(async ({ model, wasm }) => {
      const db = await new Promise((ok, fail) => {
        const r = indexedDB.open('mlrt-demo');
        r.onsuccess = () => ok(r.result);
        r.onerror = () => fail(r.error);
      });
      const tx = db.transaction('bodies', 'readwrite');
      const store = tx.objectStore('bodies');
      const body = await new Promise((ok) => { store.get(model).onsuccess = (e) => ok(e.target.result); });
      const bytes = new Uint8Array(body.bytes);
      bytes[bytes.length - 7] ^= 0x55; // one weight's bits flipped: same size, wrong digest
      store.put({ url: model, bytes: bytes.buffer });
      store.put({ url: wasm, bytes: 'not an ArrayBuffer' }); // unreadable
      await new Promise((ok) => { tx.oncomplete = ok; });
      db.close();
    }, urls);
    const before = await stats();
    await page.reload();
    await ready(page);
    const after = await stats();
    assert.equal(requests(after, MODEL_PATH), requests(before, MODEL_PATH) + 1);
    assert.equal(requests(after, WASM_PATH), requests(before, WASM_PATH) + 1);
    assert.equal(await page.locator('#model-source').getAttribute('data-source'), 'network');
    assert.match(await text(page, '#status'), /corrupt/);
    assert.match(await text(page, '#fact-wasm'), /from network/);
    assert.equal(await drawDigit(page, digit(2)), mnist.labels[2]);
    // The refetched copies are whole again: the next visit uses them.
    await page.reload();
    await ready(page);
    assert.equal(await page.locator('#model-source').getAttribute('data-source'), 'cache');
  });

  await t.test('models that fail to load show their error code; the page stays usable', async () => {
    const tryUrl = async (url) => {
      await page.fill('#model-url', url);
      await page.click('#url-form button');
      await page.waitForSelector('#error:not([hidden])');
      return text(page, '#error-code');
    };
    assert.equal(await tryUrl('/models/truncated.safetensors'), truncatedCode);
    assert.match(await text(page, '#error-message'), /truncated\.safetensors: /);
    assert.match(await text(page, '#status'), new RegExp(`Still using ${MODEL.replace('.', '\\.')}`));
    assert.equal(await tryUrl('/models/no-such-model.bin'), 'HTTP_404');
    await page.setInputFiles('#file-input', { name: 'noise.bin', mimeType: 'application/octet-stream', buffer: Buffer.from('definitely not a model, just some words') });
    await waitForText(page, '#error-message', /noise\.bin/);
    assert.match(await text(page, '#error-code'), /^[A-Z_]+$/);
    // A file dropped on the page is loaded like an opened one.
    await page.evaluate(({ name, base64 }) => {
      const data = new DataTransfer();
      data.items.add(new File([Uint8Array.from(atob(base64), (c) => c.charCodeAt(0))], name));
      for (const type of ['dragenter', 'dragover', 'drop']) {
        document.body.dispatchEvent(new DragEvent(type, { dataTransfer: data, bubbles: true, cancelable: true }));
      }
    }, { name: 'dropped.safetensors', base64: truncated.toString('base64') });
    await waitForText(page, '#error-message', /^dropped\.safetensors: /);
    assert.equal(await text(page, '#error-code'), truncatedCode);
    assert.equal(await page.locator('#drop-overlay').isHidden(), true);
    // The previous model still predicts, and the picker still shows it.
    assert.equal(await page.locator('body').getAttribute('data-model'), MODEL);
    assert.equal(await page.locator('#model-select').inputValue(), new URL(MODEL_PATH, server.url).href);
    assert.equal(await drawDigit(page, digit(3)), mnist.labels[3]);
    // A good model from a file clears the error.
    await page.setInputFiles('#file-input', join(modelsDir, 'mnist-mlp.f32.bin'));
    await waitForText(page, '#status', /Loaded mnist-mlp\.f32\.bin from your file/);
    assert.equal(await page.locator('#error').isHidden(), true);
    assert.match(await text(page, '#fact-format'), /^bin/);
    assert.equal(await drawDigit(page, digit(4)), mnist.labels[4]);
  });

  await t.test('with the server stopped, a reload still predicts', async () => {
    assert.ok(await page.evaluate(async () => {
      await navigator.serviceWorker.ready;
      return Boolean(navigator.serviceWorker.controller);
    }), 'no service worker controls the page');
    await server.close();
    serverUp = false;
    await assert.rejects(fetch(server.url), 'the server is still up');
    await page.reload();
    await ready(page);
    assert.equal(await page.locator('#model-source').getAttribute('data-source'), 'cache');
    assert.equal(await drawDigit(page, digit(5)), mnist.labels[5]);
    assert.deepEqual(consoleErrors.filter((e) => e.startsWith('pageerror')), []);
    // A model that is not cached cannot come: a network error, and the page goes on.
    await page.selectOption('#model-select', { label: manifest.models.find((m) => m.file !== MODEL).label });
    await page.waitForSelector('#error:not([hidden])');
    assert.equal(await text(page, '#error-code'), 'NETWORK_ERROR');
    assert.equal(await page.locator('body').getAttribute('data-model'), MODEL);
    assert.equal(await drawDigit(page, digit(6)), mnist.labels[6]);
  });

  await t.test('Clear cache empties it', async () => {
    assert.doesNotMatch(await text(page, '#cache-size'), /empty/);
    await page.click('#clear-cache');
    await waitForText(page, '#cache-size', /^empty$/);
  });
});
