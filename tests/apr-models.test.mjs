// aprender's trees, forests and KMeans (.apr v1), written by an independent encoder
// (tests/gen/apr_models.py: hand-written bincode, scikit-learn fits converted to aprender's
// structures, compressed with python3-zstandard / python3-lz4), against its float32 reference
// of aprender's predict. Every output must match bit for bit, in the SIMD128, scalar, native and
// WASI builds; labels are the stored class labels.
import test from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createRuntime, MlrtError } from '../wasm/mlrt.mjs';
import { decisionTreePayload, kmeansPayload, randomForestPayload, writeAprV1 } from '../tools/apr/writer.mjs';
import { firstBitDiff, root } from './helpers.mjs';

const dir = new URL('build/apr-models/', root);
if (!existsSync(new URL('manifest.json', dir))) {
  throw new Error('build/apr-models is missing: run make test (it runs tests/gen/apr_models.py)');
}
const cases = JSON.parse(readFileSync(new URL('manifest.json', dir), 'utf8'));
const f32 = (name) => {
  const b = readFileSync(new URL(name, dir));
  return new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4);
};
const bytes = (name) => new Uint8Array(readFileSync(new URL(name, dir)));
const rt = await createRuntime({ simd: true });
const scalar = await createRuntime({ simd: false });


function assertBits(got, want, what) {
  const i = firstBitDiff(got, want);
  assert.equal(i, -1, `${what}: output ${i} is ${got[i]}, the reference says ${want[i]}`);
}

test('the independent encoder made every kind: classifier and regressor trees and forests in E1 and E2, KMeans legacy and current', () => {
  const names = cases.map((c) => c.name).sort();
  for (const want of ['tree-cls-E1', 'tree-cls-E2', 'tree-reg-E1', 'tree-reg-E2', 'forest-cls-E1', 'forest-cls-E2',
    'forest-reg-E1', 'forest-reg-E2', 'kmeans-legacy', 'kmeans-current', 'tree-random-deep']) {
    assert.ok(names.includes(want), want);
  }
});

for (const c of cases) {
  test(`${c.name}: ${c.estimator} (${c.layout}) predicts bit for bit like the f32 reference, in both wasm builds`, () => {
    const file = bytes(`${c.name}.apr`), x = f32(`${c.name}.x.f32`), want = f32(`${c.name}.y.f32`);
    const m = rt.loadFromBytes(file, { expect: c.modelType });
    const { info } = m;
    assert.equal(info.kind, c.kind);
    assert.equal(info.task, c.task);
    assert.equal(info.inputSize, c.inputSize);
    assert.equal(info.outputSize, c.outputSize);
    assert.deepEqual(info.payload, { estimator: c.estimator, layout: c.layout });
    if (c.classes) assert.deepEqual(info.classes, c.classes);
    else assert.equal(info.classes, undefined);
    if (c.trees) {
      assert.deepEqual([info.trees.count, info.trees.depth, info.trees.nodes], [c.trees.count, c.trees.depth, c.trees.nodes]);
      assert.equal(info.trees.nFeatures, c.inputSize);
      // memory after load: the nodes, roots and classes, not the forest's training set
      assert.ok(info.weightBytes <= c.trees.nodes * 16 + c.trees.count * 8 + (c.classes?.length ?? 0) * 4 + 64, `weightBytes ${info.weightBytes}`);
      assert.ok(info.weightBytes < file.length || c.name.startsWith('tree'), 'a forest keeps less than its file');
    }
    if (c.clusters) assert.equal(info.clusters, c.clusters);
    const out = m.predictBatch(x, c.rows);
    assertBits(out, want, `${c.name} batch`);
    for (let r = 0; r < c.rows; r += 17) {
      assertBits(m.predict(x.subarray(r * c.inputSize, (r + 1) * c.inputSize)), want.subarray(r * c.outputSize, (r + 1) * c.outputSize), `${c.name} row ${r}`);
    }
    const s = scalar.loadFromBytes(file);
    assertBits(s.predictBatch(x, c.rows), want, `${c.name} scalar build`);
    if (c.labels) {
      assert.deepEqual(Array.from(m.predictLabels(x, c.rows)), c.labels);
      assert.equal(m.predictLabel(x.subarray(0, c.inputSize)), c.labels[0]);
      assert.deepEqual(Array.from(s.predictLabels(x, c.rows)), c.labels);
    } else {
      assert.throws(() => m.predictLabel(x.subarray(0, c.inputSize)), (e) => e instanceof MlrtError && e.code === 'INVALID_ARGUMENT' && /regressor/.test(e.message));
    }
    m.dispose();
    s.dispose();
  });
}

test('the native and WASI CLIs print the same outputs and labels as the wasm builds', () => {
  const native = new URL('build/mlrt', root).pathname;
  const wasi = new URL('tools/mlrt-wasi.mjs', root).pathname;
  const runners = [['native', (...a) => execFileSync(native, a, { encoding: 'utf8' })],
    ['WASI', (...a) => execFileSync(process.execPath, ['--no-warnings', wasi, ...a], { encoding: 'utf8' })]];
  for (const c of cases.filter((k) => k.name !== 'tree-random-deep')) {
    const model = new URL(`${c.name}.apr`, dir).pathname, input = new URL(`${c.name}.x.f32`, dir).pathname;
    const want = f32(`${c.name}.y.f32`);
    for (const [name, run] of runners) {
      const out = Float32Array.from(JSON.parse(run('predict', model, input)).flat()); // %.9g: exact for f32
      assertBits(out, want, `${name} ${c.name}`);
      if (c.labels) assert.deepEqual(JSON.parse(run('labels', model, input)), c.labels, `${name} ${c.name} labels`);
    }
  }
});

test('inspect lists the tree facts; the mlrt CLI shows them and prints stored labels', () => {
  const c = cases.find((k) => k.name === 'forest-cls-E2');
  const ins = rt.inspect(bytes(`${c.name}.apr`));
  assert.equal(ins.modelKind, 'random_forest');
  assert.equal(ins.task, 'classification');
  assert.deepEqual(ins.classes, c.classes);
  assert.equal(ins.trees.count, 15);
  const cli = new URL('tools/mlrt.mjs', root).pathname;
  const tmp = mkdtempSync(path.join(tmpdir(), 'mlrt-trees-'));
  const rows = [2, 3, 4].map((r) => Array.from(f32(`${c.name}.x.f32`).subarray(r * c.inputSize, (r + 1) * c.inputSize))); // row 1 has a NaN: not JSON
  writeFileSync(path.join(tmp, 'rows.json'), JSON.stringify(rows));
  const out = JSON.parse(execFileSync(process.execPath, [cli, 'predict', new URL(`${c.name}.apr`, dir).pathname, path.join(tmp, 'rows.json')], { encoding: 'utf8' }));
  assert.deepEqual(out.map((r) => r.label), c.labels.slice(2, 5));
  const text = execFileSync(process.execPath, [cli, 'inspect', new URL(`${c.name}.apr`, dir).pathname], { encoding: 'utf8' });
  assert.match(text, /trees +15 trees, depth \d+, \d+ nodes \(\d+ leaves\), 10 features/);
  assert.match(text, /classes +1, 5, 6, 20/);
});

// ------------------------------------------------- the writer and the reader agree

test('the writer makes every layout; a file read back predicts like the tree it was written from', () => {
  const tree = { feature: 2, threshold: 0.25, left: { feature: 0, threshold: -1, left: { label: 4, nSamples: 2 }, right: { label: 9, nSamples: 3 } }, right: { label: 4, nSamples: 5 } };
  const walk = (t, x) => { while (t.left) t = x[t.feature] <= t.threshold ? t.left : t.right; return t.label; };
  for (const layout of ['E1', 'E2']) {
    const m = rt.loadFromBytes(writeAprV1({ modelType: 'DecisionTree', payload: decisionTreePayload({ tree, maxDepth: 2, nFeatures: 3, layout }) }));
    assert.equal(m.info.payload.layout, layout);
    for (let i = 0; i < 50; i++) {
      const x = [Math.random() * 4 - 2, 0, Math.random() - 0.5];
      assert.equal(m.predictLabel(x), walk(tree, x));
    }
    const f = rt.loadFromBytes(writeAprV1({ modelType: 'RandomForest', payload: randomForestPayload({ trees: [tree, tree, { label: 9, nSamples: 1 }], maxDepth: 2, layout, xTrain: { data: [0, 0, 0, 1, 1, 1], rows: 2, cols: 3 }, yTrain: [4, 9], oobIndices: [[0], [1], []] }) }));
    assert.deepEqual(Array.from(f.predict([-2, 0, 0])), [2 / 3, 1 / 3].map(Math.fround));
    assert.equal(f.predictLabel([5, 0, 0]), 9); // every tree says 9
  }
  for (const layout of ['legacy', 'current']) {
    const k = rt.loadFromBytes(writeAprV1({ modelType: 'KMeans', payload: kmeansPayload({ centroids: [[0, 0], [3, 4]], layout }) }));
    assert.deepEqual(Array.from(k.predict([0, 0])), [0, 25]);
    assert.equal(k.info.payload.layout, layout);
  }
});

test('forest votes break ties toward the smallest label; KMeans ties go to the lowest index', () => {
  const a = { label: 8, nSamples: 1 }, b = { label: 3, nSamples: 1 };
  const f = rt.loadFromBytes(writeAprV1({ modelType: 'RandomForest', payload: randomForestPayload({ trees: [a, b], nFeatures: 1 }) }));
  assert.deepEqual(f.info.classes, [3, 8]);
  assert.equal(f.predictLabel([0]), 3);
  const k = rt.loadFromBytes(writeAprV1({ modelType: 'KMeans', payload: kmeansPayload({ centroids: [[1], [-1], [1]] }) }));
  assert.equal(k.predictLabel([0]), 0);
  assert.equal(k.predictLabel([2]), 0);
  assert.equal(k.predictLabel([-2]), 1);
});

test('a 100,000-level tree is refused cleanly; 4,096 levels load and predict', () => {
  const chain = (depth) => {
    let t = { label: 1, nSamples: 1 };
    for (let d = 0; d < depth; d++) t = { feature: 0, threshold: d, left: { label: 2, nSamples: 1 }, right: t };
    return t;
  };
  const deep = writeAprV1({ modelType: 'DecisionTree', payload: decisionTreePayload({ tree: chain(100000), nFeatures: 1, layout: 'E1' }) });
  assert.throws(() => rt.loadFromBytes(deep), (e) => e.code === 'BAD_PAYLOAD' && /deeper than 4096 levels/.test(e.message));
  const ok = rt.loadFromBytes(writeAprV1({ modelType: 'DecisionTree', payload: decisionTreePayload({ tree: chain(4096), nFeatures: 1 }) }));
  assert.equal(ok.info.trees.depth, 4096);
  assert.equal(ok.predictLabel([1e9]), 1);
  assert.equal(ok.predictLabel([-1]), 2);
});
