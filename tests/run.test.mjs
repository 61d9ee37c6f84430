// model.run(feeds): named, typed inputs and outputs in onnxruntime-web's convention, for every model
// family; info.inputs / info.outputs; the typed errors for wrong names, element types and dims; and
// classCount (implicit labels counted, never listed).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as ort from 'onnxruntime-web';
import { createRuntime, MlrtError } from '../wasm/mlrt.mjs';
import { writeAprV1, randomForestPayload, kmeansPayload } from '../tools/apr/writer.mjs';
import { loadSplit } from '../tools/mnist-split.mjs';
import { model as onnxModel, node, valueInfo } from './onnx/onnx-build.mjs';
import { binModel, expectCode, firstBitDiff, root, safetensorsF32 } from './helpers.mjs';

const rt = await createRuntime();
const file = (p) => new Uint8Array(readFileSync(new URL(p, root)));
const digits = loadSplit('test');

const mlp = rt.loadFromBytes(file('build/models/mnist-mlp.f32.bin'));
const cnn = rt.loadFromBytes(file('tests/onnx/zoo/digit-cnn.onnx'));
const leaf = (label) => ({ label, nSamples: 1 });
const forest = rt.loadFromBytes(writeAprV1({
  modelType: 'RandomForest',
  payload: randomForestPayload({
    trees: [
      { feature: 0, threshold: 0.5, left: leaf(3), right: leaf(8) },
      { feature: 1, threshold: 0.5, left: leaf(3), right: leaf(8) },
      { feature: 0, threshold: 2.5, left: leaf(8), right: leaf(3) },
    ],
    nFeatures: 2,
  }),
}));
const kmeans = rt.loadFromBytes(writeAprV1({ modelType: 'KMeans', payload: kmeansPayload({ centroids: [[0, 0], [4, 4], [0, 5]], layout: 'legacy' }) }));
const linear = rt.loadFromBytes(safetensorsF32({ coefficients: [[3], [0.5, -2, 1]], intercept: [[1], [0.25]] }));

function sameBits(a, b, what) {
  assert.equal(a.length, b.length, `${what}: length`);
  const i = firstBitDiff(a, b);
  assert.equal(i, -1, `${what}: output ${i} differs: ${a[i]} vs ${b[i]}`);
}

test('info lists the inputs and outputs: names, element types, shapes with the batch named', () => {
  const rows = (n, out) => [
    [{ name: 'input', dtype: 'F32', shape: ['batch', n] }],
    [{ name: 'output', dtype: 'F32', shape: ['batch', out] }],
  ];
  for (const [m, n, out] of [[mlp, 784, 10], [forest, 2, 2], [kmeans, 2, 3], [linear, 3, 1]]) {
    assert.deepEqual([m.info.inputs, m.info.outputs], rows(n, out), m.info.kind);
  }
  // an ONNX graph's own names; its batched first dimension is named
  assert.deepEqual(cnn.info.inputs.map((i) => [i.dtype, i.shape]), [['F32', ['batch', 1, 28, 28]]]);
  assert.deepEqual(cnn.info.inputs.map((i) => i.name), cnn.info.onnx.inputs.map((i) => i.name));
  assert.deepEqual(cnn.info.outputs.map((o) => [o.name, o.dtype, o.shape]), [[cnn.info.onnx.outputs[0].name, 'F32', ['batch', 10]]]);
  assert.ok(Object.isFrozen(cnn.info.inputs[0].shape));
});

test('run gives predictBatch\'s bits, as { type, data, dims }, for every model family', () => {
  const n = 7;
  const cases = [
    [mlp, digits.images.subarray(0, n * 784), [n, 784]],
    [cnn, digits.images.subarray(0, n * 784), [n, 1, 28, 28]],
    [forest, Float32Array.from({ length: n * 2 }, (_, k) => (k * 0.7) % 4), [n, 2]],
    [kmeans, Float32Array.from({ length: n * 2 }, (_, k) => (k * 1.3) % 6), [n, 2]],
    [linear, Float32Array.from({ length: n * 3 }, (_, k) => k - 9), [n, 3]],
  ];
  for (const [m, x, dims] of cases) {
    const [input] = m.info.inputs, [output] = m.info.outputs;
    const results = m.run({ [input.name]: { data: x, dims } });
    assert.deepEqual(Object.keys(results), [output.name], m.info.kind);
    const y = results[output.name];
    assert.equal(y.type, 'float32');
    assert.ok(y.data instanceof Float32Array);
    assert.deepEqual(y.dims, [n, m.info.outputSize], m.info.kind);
    sameBits(y.data, m.predictBatch(x, n), `${m.info.kind}: run vs predictBatch`);
  }
  // one row, and the batch may change from call to call
  sameBits(mlp.run({ input: { data: digits.images.subarray(0, 784), dims: [1, 784] } }).output.data, mlp.predict(digits.images.subarray(0, 784)), 'one row');
});

test('run copies its outputs: a later run does not change an earlier result', () => {
  const a = mlp.run({ input: { data: digits.images.subarray(0, 784), dims: [1, 784] } }).output;
  const kept = a.data.slice();
  mlp.run({ input: { data: digits.images.subarray(784, 2 * 784), dims: [1, 784] } });
  assert.deepEqual(a.data, kept);
  assert.equal(a.data.buffer.byteLength, a.data.byteLength, 'its own buffer, not a view of wasm memory');
});

test('run takes onnxruntime-web\'s Tensor as a feed, and gives what onnxruntime-web gives', async () => {
  const x = digits.images.subarray(0, 3 * 784);
  const feed = new ort.Tensor('float32', Float32Array.from(x), [3, 1, 28, 28]);
  const ours = cnn.run({ [cnn.info.inputs[0].name]: feed })[cnn.info.outputs[0].name];
  const session = await ort.InferenceSession.create(file('tests/onnx/zoo/digit-cnn.onnx'));
  const theirs = (await session.run({ [session.inputNames[0]]: feed }))[session.outputNames[0]];
  assert.deepEqual([ours.type, ours.dims], [theirs.type, [...theirs.dims]]);
  for (let i = 0; i < ours.data.length; i++) assert.ok(Math.abs(ours.data[i] - theirs.data[i]) < 1e-4, `output ${i}: ${ours.data[i]} vs ${theirs.data[i]}`);
});

test('an ONNX graph keeps its own input and output names', () => {
  const bytes = onnxModel({
    nodes: [node('Relu', ['pixels'], ['activated'])],
    inputs: [valueInfo('pixels', ['N', 4])],
    outputs: [valueInfo('activated', ['N', 4])],
  });
  const m = rt.loadFromBytes(bytes);
  assert.deepEqual(m.info.inputs, [{ name: 'pixels', dtype: 'F32', shape: ['batch', 4] }]);
  const y = m.run({ pixels: { data: Float32Array.of(-1, 2, -3, 4, 5, -6, 7, -8), dims: [2, 4] } });
  assert.deepEqual(Object.keys(y), ['activated']);
  assert.deepEqual([...y.activated.data], [0, 2, 0, 4, 5, 0, 7, 0]);
  assert.deepEqual(y.activated.dims, [2, 4]);
});

test('wrong names, element types and dims are refused with INVALID_ARGUMENT, naming the input', () => {
  const x = new Float32Array(784);
  const refuses = (feeds, pattern) => expectCode(assert, () => mlp.run(feeds), 'INVALID_ARGUMENT', pattern);
  // the feeds object and the names
  refuses(null, 'feeds must be an object');
  refuses([x], 'feeds must be an object');
  refuses({}, "no feed for input 'input'");
  refuses({ pixels: { data: x, dims: [1, 784] } }, "the model has no input 'pixels' (its inputs: 'input')");
  refuses({ input: { data: x, dims: [1, 784] }, extra: { data: x, dims: [1, 784] } }, "no input 'extra'");
  refuses({ input: x }, "input 'input' must be { data, dims }, not a bare Float32Array");
  // element types: JS checks a tensor against itself, the C core against the model
  refuses({ input: { data: Array.from(x), dims: [1, 784] } }, 'data must be a Float32Array, Int32Array, BigInt64Array or Uint8Array');
  refuses({ input: { data: new Float64Array(784), dims: [1, 784] } }, 'got Float64Array');
  refuses({ input: { type: 'float64', data: x, dims: [1, 784] } }, 'type must be one of float32, int32, int64, uint8, bool');
  refuses({ input: { type: 'int32', data: x, dims: [1, 784] } }, "type 'int32' takes Int32Array data, got Float32Array");
  refuses({ input: { type: 'int64', data: x, dims: [1, 784] } }, "type 'int64' takes BigInt64Array or Int32Array data");
  refuses({ input: { data: new Int32Array(784), dims: [1, 784] } }, "input 'input' is I32; the model takes F32");
  refuses({ input: { data: new BigInt64Array(784), dims: [1, 784] } }, "input 'input' is I64; the model takes F32");
  refuses({ input: { type: 'int64', data: new Int32Array(784), dims: [1, 784] } }, "is I32; the model takes F32"); // passed as I32
  refuses({ input: { data: new Uint8Array(784), dims: [1, 784] } }, "is U8; the model takes F32");
  refuses({ input: { type: 'bool', data: new Uint8Array(784), dims: [1, 784] } }, "is BOOL; the model takes F32");
  // dims: JS checks them against the data, the C core against the model
  refuses({ input: { data: x, dims: [784] } }, "input 'input' has rank 1; the model takes rank 2");
  refuses({ input: { data: x, dims: [2, 392] } }, "input 'input' dim 1 is 392; the model takes 784");
  refuses({ input: { data: x, dims: [1, 783] } }, 'dims [1, 783] hold 783 elements, data has 784');
  refuses({ input: { data: x, dims: [1, 784.5] } }, 'dims must be an array of at most 8 non-negative integers');
  refuses({ input: { data: x, dims: [1, -784] } }, 'non-negative integers');
  refuses({ input: { data: x, dims: '1,784' } }, 'dims must be an array');
  refuses({ input: { data: x, dims: [1, 1, 1, 1, 1, 1, 1, 1, 784] } }, 'at most 8');
  refuses({ input: { data: new Float32Array(0), dims: [0, 784] } }, "input 'input' dim 0 (batch) is 0; it must be 1..");
  // the model still runs after every refusal
  assert.equal(mlp.run({ input: { data: x, dims: [1, 784] } }).output.data.length, 10);
});

test('a non-finite input is refused as predict refuses it; a disposed model says so', () => {
  const x = Float32Array.from(digits.images.subarray(0, 2 * 784));
  x[784 + 5] = NaN;
  expectCode(assert, () => mlp.run({ input: { data: x, dims: [2, 784] } }), 'NON_FINITE', 'row 1');
  const m = rt.loadFromBytes(binModel(3, 2, 2, [1, 2, 3, 4, 5, 6, 0.1, 0.2, 1, -1, 1, -1, 0, 0]));
  m.dispose();
  const e = expectCode(assert, () => m.run({ input: { data: new Float32Array(3), dims: [1, 3] } }), 'DISPOSED');
  assert.ok(e instanceof MlrtError);
});

test('classifiers count their classes; only stored labels are listed, and predictLabel gives them', () => {
  // an MLP's labels are implicit: its outputs' indices, counted and not listed
  assert.equal(mlp.info.classCount, 10);
  assert.equal(mlp.info.classes, undefined);
  const x = digits.images.subarray(0, 784), p = mlp.predict(x);
  assert.equal(mlp.predictLabel(x), p.indexOf(Math.max(...p)));
  // a forest stores its labels
  assert.deepEqual([forest.info.classCount, forest.info.classes], [2, [3, 8]]);
  assert.deepEqual([forest.predictLabel([0, 0]), forest.predictLabel([1, 1])], [3, 8]);
  // a one-output sigmoid: two classes, p(class 1)
  const log = rt.loadFromBytes(safetensorsF32({ coefficients: [[2], [1, -1]], intercept: [[1], [0]] }, { model_type: 'logistic_regression' }));
  assert.deepEqual([log.info.classCount, log.info.classes], [2, undefined]);
  assert.deepEqual([log.predictLabel([3, 0]), log.predictLabel([0, 3])], [1, 0]);
  // regressors and clusterers have no classes
  assert.equal(linear.info.classCount, undefined);
  assert.equal(kmeans.info.classCount, undefined);
  // a graph classifier: counted
  assert.deepEqual([cnn.info.task, cnn.info.classCount, cnn.info.classes], ['classification', 10, undefined]);
});
