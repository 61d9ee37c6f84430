// The JS API: runtime creation, argument checks, model kinds, memory reuse.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRuntime, MlrtError, simdSupported } from '../wasm/mlrt.mjs';
import { binModel, safetensorsF32, expectCode, root } from './helpers.mjs';

const rt = await createRuntime();
const tiny = binModel(3, 2, 2, [1, 2, 3, 4, 5, 6, 0.1, 0.2, 1, -1, 1, -1, 0, 0]);

test('createRuntime accepts a URL, bytes, a Response and a compiled Module', async () => {
  assert.equal(simdSupported(), true, 'Node 20 runs SIMD128');
  const url = new URL('wasm/mlrt.wasm', root);
  const bytes = readFileSync(url);
  const forms = [
    { wasm: url },
    { wasm: url.href },
    { wasm: bytes },
    { wasm: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) },
    { wasm: new Response(bytes, { headers: { 'content-type': 'application/wasm' } }) },
    { wasm: Promise.resolve(new Response(bytes)) },
    { wasm: await WebAssembly.compile(bytes) },
  ];
  const want = rt.loadFromBytes(tiny).predict([1, 2, 3]);
  for (const options of forms) {
    const r = await createRuntime(options);
    assert.deepEqual(r.loadFromBytes(tiny).predict([1, 2, 3]), want);
  }
  await assert.rejects(createRuntime({ wasm: 42 }), (e) => e instanceof MlrtError && e.code === 'INVALID_ARGUMENT');
  await assert.rejects(createRuntime({ wasm: new Response('nope', { status: 404 }) }), (e) => e.code === 'WASM_LOAD_FAILED');
});

test('a wasm module that is not an mlrt build of this version is refused, naming what it lacks', async () => {
  // a module exporting only a memory: '\0asm', version 1, a memory section, an export section
  const memoryOnly = Uint8Array.of(0, 97, 115, 109, 1, 0, 0, 0, 5, 3, 1, 0, 1, 7, 10, 1, 6, ...new TextEncoder().encode('memory'), 2, 0);
  await assert.rejects(createRuntime({ wasm: memoryOnly }),
    (e) => e instanceof MlrtError && e.code === 'WASM_LOAD_FAILED' && /not an mlrt build of this version: it lacks mlrt_alloc, .*mlrt_output/.test(e.message));
});

test('predict computes the MLP exactly on a hand-checked example', () => {
  // W1 = [[1,2],[3,4],[5,6]] (inputs x hidden), b1 = [0.1, 0.2]; W2 = [[1,-1],[1,-1]], b2 = 0
  const m = rt.loadFromBytes(tiny);
  const h = [1 * 1 + 2 * 3 + 3 * 5 + 0.1, 1 * 2 + 2 * 4 + 3 * 6 + 0.2];   // 22.1, 28.2 (ReLU keeps them)
  const z = [h[0] + h[1], -(h[0] + h[1])];
  const e = z.map((v) => Math.exp(v - z[0]));
  const want = e.map((v) => v / (e[0] + e[1]));
  const got = m.predict(new Float32Array([1, 2, 3]));
  assert.ok(got instanceof Float32Array);
  got.forEach((v, i) => assert.ok(Math.abs(v - want[i]) < 1e-7, `${v} vs ${want[i]}`));
  assert.deepEqual(m.info.layers, [
    { inputs: 3, outputs: 2, activation: 'relu' },
    { inputs: 2, outputs: 2, activation: 'softmax' },
  ]);
  assert.equal(m.info.params, 14);
  assert.ok(Object.isFrozen(m.info) && Object.isFrozen(m.info.layers[0]));
});

test('bad arguments throw MlrtError with stable codes', () => {
  const m = rt.loadFromBytes(tiny);
  expectCode(assert, () => m.predict(new Float32Array(2)), 'INVALID_ARGUMENT', 'expected 3 input values, got 2');
  expectCode(assert, () => m.predict('abc'), 'INVALID_ARGUMENT');
  expectCode(assert, () => m.predict([1, NaN, 3]), 'NON_FINITE', 'input 1');
  expectCode(assert, () => m.predict([1, Infinity, 3]), 'NON_FINITE');
  expectCode(assert, () => m.predictBatch(new Float32Array(6), 0), 'INVALID_ARGUMENT');
  expectCode(assert, () => m.predictBatch(new Float32Array(6), NaN), 'INVALID_ARGUMENT');
  expectCode(assert, () => m.predictBatch(new Float32Array(6), Infinity), 'INVALID_ARGUMENT');
  expectCode(assert, () => m.predictBatch(new Float32Array(6), 1.5), 'INVALID_ARGUMENT');
  expectCode(assert, () => m.predictBatch(new Float32Array(6), 3), 'INVALID_ARGUMENT', 'expected 9');
  expectCode(assert, () => rt.loadFromBytes('not bytes'), 'INVALID_ARGUMENT');
  expectCode(assert, () => rt.inspect(null), 'INVALID_ARGUMENT');
  const huge = rt.loadFromBytes(safetensorsF32({ 'fc.weight': [[1, 2], [3e38, 3e38]] }, { activations: 'identity' }));
  expectCode(assert, () => huge.predict([10, 10]), 'NON_FINITE', 'overflowed');
  assert.ok(Math.abs(huge.predict([1e-38, 1e-38])[0] - 6) < 1e-5, 'the same model is fine on small inputs');
  m.dispose();
  m.dispose(); // twice is fine
  assert.equal(m.disposed, true);
  expectCode(assert, () => m.predict([1, 2, 3]), 'DISPOSED');
  expectCode(assert, () => m.predictBatch([1, 2, 3], 1), 'DISPOSED');
  const e = expectCode(assert, () => rt.loadFromBytes(new Uint8Array(3)), 'TRUNCATED');
  assert.ok(e instanceof MlrtError && e instanceof Error);
});

test('predictBatch equals predict row by row, bit for bit, across tile boundaries', () => {
  // widths that are not multiples of the 8-wide panels, batches crossing the 4- and 64-row tiles
  let seed = 7;
  const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32) * 2 - 1;
  const m = rt.loadFromBytes(safetensorsF32({
    'l1.weight': [[19, 13], Array.from({ length: 247 }, rand)], 'l1.bias': [[19], Array.from({ length: 19 }, rand)],
    'l2.weight': [[37, 19], Array.from({ length: 703 }, rand)],
    'l3.weight': [[7, 37], Array.from({ length: 259 }, rand)], 'l3.bias': [[7], Array.from({ length: 7 }, rand)],
  }, { activations: 'tanh,relu,softmax' }));
  assert.deepEqual(m.info.layers.map((l) => l.activation), ['tanh', 'relu', 'softmax']);
  for (const n of [1, 2, 3, 4, 5, 63, 64, 65, 130]) {
    const x = Float32Array.from({ length: n * 13 }, rand);
    const batch = m.predictBatch(x, n);
    for (let r = 0; r < n; r++) assert.deepEqual(m.predict(x.subarray(r * 13, r * 13 + 13)), batch.subarray(r * 7, r * 7 + 7), `n=${n} row ${r}`);
  }
});

test('linear and logistic regression', () => {
  const coef = [[3], [0.5, -2, 1]], intercept = [[1], [0.25]];
  const lin = rt.loadFromBytes(safetensorsF32({ coefficients: coef, intercept }));
  assert.equal(lin.info.kind, 'linear_regression');
  assert.deepEqual(Array.from(lin.predict([2, 1, 4])), [1 - 2 + 4 + 0.25]);
  const log = rt.loadFromBytes(safetensorsF32({ coefficients: coef, intercept }, { model_type: 'logistic_regression' }));
  assert.equal(log.info.kind, 'logistic_regression');
  assert.ok(Math.abs(log.predict([2, 1, 4])[0] - 1 / (1 + Math.exp(-3.25))) < 1e-7);
  assert.deepEqual(log.info.metadata, { model_type: 'logistic_regression' });
  expectCode(assert, () => rt.loadFromBytes(safetensorsF32({ coefficients: coef })), 'NOT_A_MODEL', 'intercept');
  expectCode(assert, () => rt.loadFromBytes(safetensorsF32({ coefficients: coef, intercept, extra: [[1], [0]] })), 'NOT_A_MODEL');
});

test('naming conventions: PyTorch prefixes in natural order, aprender numbers', () => {
  const w = (o, i, v = 1) => [[o, i], Array(o * i).fill(v)];
  const b = (o) => [[o], Array(o).fill(0)];
  for (const [names, order] of [
    [['fc1', 'fc2'], [4, 3]], [['layers.0', 'layers.2'], [4, 3]], [['net.0', 'net.2'], [4, 3]],
    [['layer1', 'layer2'], [4, 3]], [['fc2', 'fc10'], [4, 3]],
  ]) {
    // declared in reverse so that only the natural sort can chain them: 2 -> 4 -> 3
    const m = rt.loadFromBytes(safetensorsF32({
      [`${names[1]}.weight`]: w(order[1], order[0]), [`${names[1]}.bias`]: b(order[1]),
      [`${names[0]}.weight`]: w(order[0], 2), [`${names[0]}.bias`]: b(order[0]),
    }));
    assert.deepEqual(m.info.layers.map((l) => [l.inputs, l.outputs]), [[2, 4], [4, 3]], names.join());
  }
  const numbered = rt.loadFromBytes(safetensorsF32({ 0: w(4, 2), 1: b(4), 2: w(3, 4), 3: b(3) }));
  assert.deepEqual(numbered.info.layers.map((l) => [l.inputs, l.outputs, l.activation]), [[2, 4, 'relu'], [4, 3, 'softmax']]);
  expectCode(assert, () => rt.loadFromBytes(safetensorsF32({ 0: w(4, 2), 2: w(3, 4) })), 'NOT_A_MODEL', "'2'");
  expectCode(assert, () => rt.loadFromBytes(safetensorsF32({ 'fc.weight': w(4, 2) }, { activations: 'relu,softmax' })), 'BAD_HEADER', '2 activations for 1 layers');
  expectCode(assert, () => rt.loadFromBytes(safetensorsF32({ 'fc.weight': w(4, 2) }, { activations: 'swoosh' })), 'UNSUPPORTED', 'swoosh');
});

test('1,000 loads and disposes do not grow the wasm heap', () => {
  const model = readFileSync(new URL('build/models/mnist-mlp.safetensors', root));
  for (let i = 0; i < 20; i++) rt.loadFromBytes(model).dispose(); // warm the allocator
  const before = rt.memoryBytes;
  for (let i = 0; i < 1000; i++) {
    const m = rt.loadFromBytes(model);
    m.predictBatch(new Float32Array(784 * 3), 3);
    m.dispose();
  }
  assert.equal(rt.memoryBytes, before);
});

test('inspect of a model file names its kind and tensors without loading it', () => {
  const info = rt.inspect(readFileSync(new URL('build/models/mnist-mlp.safetensors', root)));
  assert.equal(info.modelKind, 'mlp');
  assert.deepEqual(info.metadata.activations, 'relu,softmax');
  const w1 = info.tensors.find((t) => t.name === 'fc1.weight');
  assert.deepEqual([w1.dtype, w1.shape, w1.byteLength], ['F32', [512, 784], 512 * 784 * 4]);
  expectCode(assert, () => rt.inspect(new Uint8Array(0)), 'TRUNCATED');
});

test('layerWeights gives back every weight in [out][in] order, whatever the file layout', () => {
  // the .bin file stores W1 [in][hidden]: [[1,2],[3,4],[5,6]]; [out][in] is its transpose
  const m = rt.loadFromBytes(tiny);
  const l0 = m.layerWeights(0), l1 = m.layerWeights(1);
  assert.deepEqual([...l0.weight], [1, 3, 5, 2, 4, 6]);
  assert.deepEqual([...l0.bias], [Math.fround(0.1), Math.fround(0.2)]);
  assert.deepEqual([...l1.weight], [1, 1, -1, -1]);
  assert.equal(l1.activation, 'softmax');
  // nn.Linear layout, 11 outputs (a partial panel), no bias on the second layer
  const w1 = Array.from({ length: 11 * 3 }, (_, k) => k * 0.5 - 7);
  const w2 = Array.from({ length: 2 * 11 }, (_, k) => 1 / (k + 1));
  const st = rt.loadFromBytes(safetensorsF32({ 'fc1.weight': [[11, 3], w1], 'fc1.bias': [[11], w1.slice(0, 11)],
    'fc2.weight': [[2, 11], w2] }));
  assert.deepEqual([...st.layerWeights(0).weight], w1.map(Math.fround));
  assert.deepEqual([...st.layerWeights(0).bias], w1.slice(0, 11).map(Math.fround));
  assert.deepEqual([...st.layerWeights(1).weight], w2.map(Math.fround));
  assert.equal(st.layerWeights(1).bias, null);
  expectCode(assert, () => m.layerWeights(2), 'INVALID_ARGUMENT', 'no layer 2');
  m.dispose();
  expectCode(assert, () => m.layerWeights(0), 'DISPOSED');
});
