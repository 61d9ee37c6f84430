// preprocess.test.mjs — the demo's MNIST-style preprocessing, in Node.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { alphaToInk, BOX, centreOfMass, inkBounds, preprocess, resampleArea, SIDE } from '../../web/preprocess.mjs';
import { createRuntime } from '../../wasm/mlrt.mjs';
import { loadSplit } from '../../tools/mnist-split.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

// A w x h canvas with filled rectangles [x, y, width, height].
function canvas(w, h, rects) {
  const ink = new Float32Array(w * h);
  for (const [x0, y0, rw, rh] of rects) {
    for (let y = y0; y < y0 + rh; y++) for (let x = x0; x < x0 + rw; x++) ink[y * w + x] = 1;
  }
  return ink;
}

// The bounding box of the nonzero pixels of a 28 x 28 input.
const bounds = (input) => inkBounds(input, SIDE, SIDE, 0);

test('no ink: no input', () => {
  assert.equal(inkBounds(new Float32Array(100), 10, 10), null);
  assert.equal(preprocess(new Float32Array(400 * 400), 400, 400), null);
  assert.equal(preprocess(canvas(50, 50, []).fill(0.05), 50, 50), null, 'ink below the threshold');
});

test('the input is 28 x 28 values in [0, 1], the darkest exactly 1', () => {
  const input = preprocess(canvas(400, 400, [[100, 50, 40, 300], [100, 50, 200, 40]]), 400, 400);
  assert.equal(input.length, SIDE * SIDE);
  assert.ok(input.every((v) => v >= 0 && v <= 1));
  assert.equal(Math.max(...input), 1);
});

test('the ink is scaled to fit 20 x 20, keeping its aspect ratio', () => {
  // 60 wide, 300 tall -> 4 x 20.
  const tall = bounds(preprocess(canvas(400, 400, [[170, 50, 60, 300]]), 400, 400));
  assert.deepEqual([tall.x1 - tall.x0, tall.y1 - tall.y0], [4, BOX]);
  // 300 wide, 150 tall -> 20 x 10.
  const wide = bounds(preprocess(canvas(400, 400, [[50, 120, 300, 150]]), 400, 400));
  assert.deepEqual([wide.x1 - wide.x0, wide.y1 - wide.y0], [BOX, 10]);
  // A tiny mark is scaled up too.
  const dot = bounds(preprocess(canvas(400, 400, [[10, 10, 3, 6]]), 400, 400));
  assert.deepEqual([dot.x1 - dot.x0, dot.y1 - dot.y0], [10, BOX]);
});

test('the centre of mass lands on pixel (14, 14)', () => {
  // An L: its mass is off its box's centre, so box-centring alone would be off.
  const input = preprocess(canvas(400, 400, [[60, 40, 50, 300], [60, 290, 250, 50]]), 400, 400);
  const [cx, cy] = centreOfMass(input, SIDE, SIDE);
  assert.ok(Math.abs(cx - 14) <= 0.5 && Math.abs(cy - 14) <= 0.5, `centre of mass ${cx}, ${cy}`);
});

test('the digit stays inside the field when its mass is far off centre', () => {
  // A heavy bar on the left with a thin tail to the right: centring the mass would push
  // the box past the left edge; it is clamped instead.
  const input = preprocess(canvas(400, 400, [[0, 0, 80, 400], [80, 195, 320, 10]]), 400, 400);
  const b = bounds(input);
  assert.ok(b.x0 >= 0 && b.x1 <= SIDE && b.y0 >= 0 && b.y1 <= SIDE);
  assert.equal(b.x1 - b.x0, BOX);
});

test('where and how large the digit is drawn does not matter', () => {
  const shape = (x, y, s) => [[x, y, 4 * s, 30 * s], [x, y, 20 * s, 4 * s], [x + 16 * s, y, 4 * s, 30 * s]];
  const a = preprocess(canvas(400, 400, shape(20, 30, 10)), 400, 400);
  const b = preprocess(canvas(400, 400, shape(150, 60, 10)), 400, 400);
  assert.deepEqual(b, a, 'translation');
  const c = preprocess(canvas(400, 400, shape(100, 100, 5)), 400, 400);
  const diff = Math.max(...a.map((v, i) => Math.abs(v - c[i])));
  assert.ok(diff < 0.02, `scale changes pixels by up to ${diff}`);
});

test('area resampling is anti-aliased and keeps the mean intensity', () => {
  const w = 37, h = 23;
  const ink = Float32Array.from({ length: w * h }, (_, i) => ((i * 7919) % 101) / 100);
  const box = { x0: 3, y0: 2, x1: 34, y1: 21 };
  const out = resampleArea(ink, w, box, 9, 6);
  let inSum = 0;
  for (let y = box.y0; y < box.y1; y++) for (let x = box.x0; x < box.x1; x++) inSum += ink[y * w + x];
  const inMean = inSum / ((box.x1 - box.x0) * (box.y1 - box.y0));
  const outMean = out.reduce((a, b) => a + b, 0) / out.length;
  assert.ok(Math.abs(inMean - outMean) < 1e-5, `${inMean} vs ${outMean}`);
  // A hard edge half-way through an output pixel becomes grey.
  const edge = resampleArea(canvas(4, 1, [[0, 0, 1, 1]]), 4, { x0: 0, y0: 0, x1: 4, y1: 1 }, 2, 1);
  assert.deepEqual(Array.from(edge), [0.5, 0]);
});

test('alphaToInk reads the alpha channel', () => {
  assert.deepEqual(Array.from(alphaToInk(new Uint8ClampedArray([9, 9, 9, 0, 0, 0, 0, 255, 1, 2, 3, 51]))), [0, 1, Math.fround(0.2)]);
});

test('rejects a size that does not match', () => {
  assert.throws(() => preprocess(new Float32Array(10), 4, 4), RangeError);
});

const modelFile = join(ROOT, 'build', 'models', 'mnist-mlp.safetensors');
test('MNIST test digits drawn 10x larger are still recognised after preprocessing', { skip: !existsSync(modelFile) && 'build/models not built' }, async () => {
  const rt = await createRuntime();
  const model = rt.loadFromBytes(readFileSync(modelFile));
  const { images, labels } = loadSplit('test');
  const N = 300, S = 10, W = SIDE * S;
  let direct = 0, drawn = 0;
  for (let i = 0; i < N; i++) {
    const digit = images.subarray(i * 784, (i + 1) * 784);
    const big = new Float32Array(W * W);
    for (let y = 0; y < W; y++) for (let x = 0; x < W; x++) big[y * W + x] = digit[Math.floor(y / S) * SIDE + Math.floor(x / S)];
    const argmax = (p) => p.indexOf(Math.max(...p));
    if (argmax(Array.from(model.predict(digit))) === labels[i]) direct++;
    if (argmax(Array.from(model.predict(preprocess(big, W, W)))) === labels[i]) drawn++;
  }
  assert.ok(drawn >= direct - 6, `preprocessed: ${drawn}/${N}, as given: ${direct}/${N}`);
  assert.ok(drawn >= 0.95 * N, `preprocessed: ${drawn}/${N}`);
});
