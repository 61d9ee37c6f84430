// models.test.mjs — every model the demo's picker offers, picked in real Chromium: it loads, the
// facts panel names its format and weight type, and it reads held-out MNIST digits drawn with the
// mouse. (demo.test.mjs walks one model through caching, updates and offline use.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startDemoServer } from '../../web/server.mjs';
import { loadSplit } from '../../tools/mnist-split.mjs';
import { CHROMIUM, CHROMIUM_ARGS, drawDigit, ready, text } from './page.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const DIGITS = 12;     // per model, held-out digits 100.. (demo.test.mjs draws 0..49)
const MIN_CORRECT = 10;
// What the header must say the model is (the page once said "784 → 512 → 10" over the CNN too).
const SUMMARY = { 'digit-cnn.onnx': /^a trained convolutional network of 3 convolutions and 2 dense layers$/ };
const MLP_SUMMARY = /^a trained 784\u00a0→\u00a0512\u00a0→\u00a010 network$/;
// What the facts panel must say for each file: format and the weights' dtype in the file.
const EXPECTED = {
  'mnist-mlp.safetensors': /^safetensors, F32 weights/,
  'mnist-mlp.bintensors': /^bintensors, F32 weights/,
  'mnist-mlp.apr': /^apr, F32 weights/,
  'mnist-mlp.q8.apr': /^apr, APR_Q8 weights/,
  'mnist-mlp.f32.bin': /^bin, F32 weights/,
  'digit-cnn.onnx': /^onnx, F32 weights/,
};

test('every model in the picker loads in Chromium and reads drawn digits', { timeout: 180_000 }, async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.skip(`${CHROMIUM} is not installed (apt-get install chromium); the browser test needs it`);
    return;
  }
  const { chromium } = await import('playwright-core');
  const manifest = JSON.parse(readFileSync(join(ROOT, 'web', 'models', 'manifest.json'), 'utf8'));
  assert.deepEqual(manifest.models.map((m) => m.file).sort(), Object.keys(EXPECTED).sort(),
    'the picker offers exactly the models this test knows');

  const work = mkdtempSync(join(tmpdir(), 'mlrt-web-models-'));
  const modelsDir = join(work, 'models');
  mkdirSync(modelsDir);
  copyFileSync(join(ROOT, 'web', 'models', 'manifest.json'), join(modelsDir, 'manifest.json'));
  for (const { file } of manifest.models) copyFileSync(join(ROOT, 'build', 'models', file), join(modelsDir, file));
  const server = await startDemoServer({ port: 0, modelsDir });
  const context = await chromium.launchPersistentContext(join(work, 'profile'), {
    executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, viewport: { width: 1280, height: 900 },
  });
  t.after(async () => {
    await context.close();
    await server.close();
    rmSync(work, { recursive: true, force: true });
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`console: ${m.text()}`); });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  await page.goto(server.url);
  await ready(page);

  const mnist = loadSplit('test');
  for (const { file, label } of manifest.models) {
    await t.test(label, async (st) => {
      if (file !== manifest.default) {
        await page.selectOption('#model-select', { label });
        await page.waitForSelector(`body[data-model="${file}"][data-state="ready"]`, { timeout: 30_000 });
      }
      assert.equal(await page.locator('#error').isHidden(), true, await text(page, '#error'));
      assert.match(await text(page, '#fact-format'), EXPECTED[file]);
      assert.match(await text(page, '#model-summary'), SUMMARY[file] ?? MLP_SUMMARY);
      assert.match(await text(page, '#fact-params'), file === 'digit-cnn.onnx' ? /^19,266$/ : /^407,050$/);
      let correct = 0;
      for (let i = 100; i < 100 + DIGITS; i++) {
        if (await drawDigit(page, mnist.images.subarray(i * 784, (i + 1) * 784)) === mnist.labels[i]) correct++;
      }
      st.diagnostic(`${correct}/${DIGITS} drawn digits read correctly`);
      assert.ok(correct >= MIN_CORRECT, `${file}: only ${correct}/${DIGITS} drawn digits read correctly`);
    });
  }
  assert.deepEqual(errors, []);
});
