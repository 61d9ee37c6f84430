// createRuntime({ threads }): predictBatch rows of dense models on worker threads over one shared
// wasm memory (wasm/mlrt-threads.wasm, wasm/threads.mjs). Every row must give the bits it gives on
// one thread, for any thread count and any split; other models run on the calling thread; errors
// name the row as on one thread; dispose() ends the workers, and an idle pool never keeps Node alive.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRuntime, MlrtError } from '../wasm/mlrt.mjs';
import { loadSplit } from '../tools/mnist-split.mjs';
import { firstBitDiff, root } from './helpers.mjs';
import { modelToApr } from '../tools/apr/writer.mjs';

const digits = loadSplit('test');
const file = (p) => readFileSync(new URL(p, root));
const one = await createRuntime({ relaxed: false });
const two = await createRuntime({ threads: 2 });
const four = await createRuntime({ threads: 4 }); // more threads than cores: still exact

function sameBits(a, b, what) {
  assert.equal(a.length, b.length, `${what}: length`);
  const i = firstBitDiff(a, b);
  assert.equal(i, -1, `${what}: output ${i} differs: ${a[i]} vs ${b[i]}`);
}

test('the runtime reports its threads', async () => {
  assert.deepEqual({ ...two.build }, { simd: true, relaxed: false, threads: 2 });
  assert.equal(four.build.threads, 4);
  const auto = await createRuntime({ threads: 'auto' });
  const cores = (await import('node:os')).availableParallelism();
  assert.equal(auto.build.threads, cores > 1 ? cores : 1);
  auto.dispose();
  for (const bad of [0, -1, 1.5, 65, '2', 'all']) {
    await assert.rejects(createRuntime({ threads: bad }), (e) => e instanceof MlrtError && e.code === 'INVALID_ARGUMENT', String(bad));
  }
  const scalar = await createRuntime({ threads: 2, simd: false });
  assert.equal(scalar.build.threads, 1);
  assert.match(scalar.build.threadsUnavailable, /SIMD128/);
});

test('f32 and Q8 MLPs: every batch size and split gives the single-thread bits', () => {
  for (const path of ['build/models/mnist-mlp.f32.bin', 'build/models/mnist-mlp.q8.apr']) {
    const bytes = file(path);
    const ref = one.loadFromBytes(bytes).predictBatch(digits.images, digits.n);
    for (const rt of [two, four]) {
      const m = rt.loadFromBytes(bytes);
      for (const n of [1, 15, 31, 32, 33, 61, 97, 500, digits.n]) {
        sameBits(m.predictBatch(digits.images.subarray(0, n * 784), n), ref.subarray(0, n * 10), `${path}, ${rt.build.threads} threads, ${n} rows`);
      }
      sameBits(m.predict(digits.images.subarray(0, 784)), ref.subarray(0, 10), `${path}: predict`);
      m.dispose();
    }
  }
});

// Slices go to workers only when they are awake (a sleeping worker is woken for the next call).
function awake(rt) {
  for (const t0 = Date.now(); rt.threadPool.wake() > 0;) assert.ok(Date.now() - t0 < 10_000, 'the workers did not wake');
}

/** Runs f and returns the jobs the workers completed meanwhile: { rows, slices } (rt.threadPool.completed). */
function completedDuring(rt, f) {
  const before = rt.threadPool.completed;
  f();
  const after = rt.threadPool.completed;
  return { rows: after.rows - before.rows, slices: after.slices - before.slices };
}

test('rt.threadPool shows the workers and the jobs they completed; null with one thread', () => {
  assert.equal(one.threadPool, null);
  assert.equal(two.threadPool.size, 1);
  assert.equal(four.threadPool.size, 3);
  const m = four.loadFromBytes(file('build/models/mnist-mlp.f32.bin'));
  const { rows, slices } = completedDuring(four, () => m.predictBatch(digits.images.subarray(0, 100 * 784), 100));
  assert.deepEqual([rows, slices], [3, 0], '100 rows: one block of rows per worker, no slices');
  assert.ok(Object.isFrozen(four.threadPool.completed));
  assert.equal(four.threadPool, four.threadPool, 'one object, its figures live');
  m.dispose();
});

test('a single prediction while the workers sleep runs on this thread, and wakes them for the next', () => {
  const m = two.loadFromBytes(file('build/models/mnist-mlp.f32.bin'));
  const x = digits.images.subarray(0, 784), want = one.loadFromBytes(file('build/models/mnist-mlp.f32.bin')).predict(x);
  const pool = two.threadPool;
  const asleep = () => { for (const t0 = Date.now(); pool.sleeping < pool.size;) assert.ok(Date.now() - t0 < 10_000, 'the workers did not sleep'); };
  asleep();
  const whileAsleep = completedDuring(two, () => sameBits(m.predict(x), want, 'predict while the workers sleep'));
  assert.deepEqual(whileAsleep, { rows: 0, slices: 0 }, 'a sleeping worker was handed a slice');
  awake(two);
  const onceAwake = completedDuring(two, () => sameBits(m.predict(x), want, 'predict once they are awake'));
  assert.deepEqual(onceAwake, { rows: 0, slices: 1 }, 'the 784 -> 512 layer was split with the one worker');
  m.dispose();
});

test('batches under 16 rows split each large layer\'s outputs between the threads: the single-thread bits, f32, Q8 and Q4', () => {
  const f32 = file('build/models/mnist-mlp.f32.bin');
  const q4 = modelToApr(one.loadFromBytes(f32), { version: 2, quantize: 'q4' });
  for (const [name, bytes] of [['f32', f32], ['Q8', file('build/models/mnist-mlp.q8.apr')], ['Q4', q4]]) {
    const ref = one.loadFromBytes(bytes).predictBatch(digits.images.subarray(0, 15 * 784), 15);
    for (const rt of [two, four]) {
      const m = rt.loadFromBytes(bytes);
      const { slices } = completedDuring(rt, () => {
        for (const n of [1, 2, 5, 7, 15]) {
          awake(rt);
          sameBits(m.predictBatch(digits.images.subarray(0, n * 784), n), ref.subarray(0, n * 10), `${name}, ${rt.build.threads} threads, ${n} rows`);
        }
        awake(rt);
        sameBits(m.predict(digits.images.subarray(0, 784)), ref.subarray(0, 10), `${name}: predict`);
      });
      // the 784 -> 512 layer was split between all threads (in the calls that found the workers
      // still spinning: most, on an idle machine); the softmax layer was not
      const w = rt.build.threads - 1;
      assert.ok(slices >= w && slices <= 6 * w && slices % w === 0, `${name}, ${rt.build.threads} threads: ${slices} slices ran on workers`);
      m.dispose();
    }
  }
});

test('a non-finite input in a sliced batch is refused as on one thread, naming the same row', () => {
  const bytes = file('build/models/mnist-mlp.f32.bin');
  const n = 3, x = Float32Array.from(digits.images.subarray(0, n * 784));
  x[2 * 784 + 700] = Infinity;
  const error = (rt) => { try { rt.loadFromBytes(bytes).predictBatch(x, n); } catch (e) { return [e.code, e.message]; } return null; };
  const want = error(one);
  assert.equal(want?.[0], 'NON_FINITE');
  assert.match(want[1], /row 2/);
  assert.deepEqual(error(two), want);
  assert.deepEqual(error(four), want);
});

test('models that do not fork (a CNN graph, a forest) run on the calling thread, with the same bits', () => {
  const cnn = file('tests/onnx/zoo/digit-cnn.onnx');
  const x = digits.images.subarray(0, 100 * 784);
  sameBits(two.loadFromBytes(cnn).predictBatch(x, 100), one.loadFromBytes(cnn).predictBatch(x, 100), 'digit CNN');
});

test('run() on a threaded runtime runs on the calling thread, with the single-thread bits', () => {
  const bytes = file('build/models/mnist-mlp.f32.bin'), n = 100;
  const feeds = { input: { data: digits.images.subarray(0, n * 784), dims: [n, 784] } };
  const want = one.loadFromBytes(bytes).run(feeds).output;
  const m = two.loadFromBytes(bytes);
  const jobs = completedDuring(two, () => {
    const got = m.run(feeds).output;
    assert.deepEqual(got.dims, want.dims);
    sameBits(got.data, want.data, 'run');
  });
  assert.deepEqual(jobs, { rows: 0, slices: 0 });
  m.dispose();
});

test('a non-finite row in a worker\'s share is refused as on one thread, naming the same row', () => {
  const bytes = file('build/models/mnist-mlp.f32.bin');
  const n = 200, x = Float32Array.from(digits.images.subarray(0, n * 784));
  x[150 * 784 + 3] = NaN; // past the first thread's share
  const error = (rt) => { try { rt.loadFromBytes(bytes).predictBatch(x, n); } catch (e) { return [e.code, e.message]; } return null; };
  const want = error(one);
  assert.equal(want?.[0], 'NON_FINITE');
  assert.deepEqual(error(two), want);
  assert.deepEqual(error(four), want);
});

test('a batch at once after the workers start, again and again, never hangs', { timeout: 120_000 }, async () => {
  // the first job can reach a worker before its loop starts: it must still be seen (this hung once)
  const bytes = file('build/models/mnist-mlp.f32.bin'), x = digits.images.subarray(0, 64 * 784);
  const want = one.loadFromBytes(bytes).predictBatch(x, 64);
  for (let k = 0; k < 25; k++) {
    const rt = await createRuntime({ threads: 2 });
    sameBits(rt.loadFromBytes(bytes).predictBatch(x, 64), want, `round ${k}`);
    rt.dispose();
  }
});

test('dispose() ends the workers; the runtime and its models go on, on one thread', async () => {
  const rt = await createRuntime({ threads: 2 });
  const m = rt.loadFromBytes(file('build/models/mnist-mlp.f32.bin'));
  const x = digits.images.subarray(0, 100 * 784);
  const before = m.predictBatch(x, 100);
  rt.dispose();
  assert.equal(rt.build.threads, 1);
  sameBits(m.predictBatch(x, 100), before, 'after dispose');
  rt.dispose(); // twice is fine
});

test('an idle pool never keeps Node alive, and no SharedArrayBuffer means one thread, saying why', () => {
  const mod = JSON.stringify(new URL('wasm/mlrt.mjs', root).href);
  const model = JSON.stringify(new URL('build/models/mnist-mlp.f32.bin', root).pathname);
  const leaky = `
    import { createRuntime } from ${mod};
    import { readFileSync } from 'node:fs';
    const rt = await createRuntime({ threads: 2 });
    const m = rt.loadFromBytes(readFileSync(${model}));
    console.log(rt.build.threads, m.predictBatch(new Float32Array(784 * 64), 64).length);`; // no dispose
  const t0 = Date.now();
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', leaky], { encoding: 'utf8', timeout: 20_000 });
  assert.equal(r.status, 0, `the process did not exit by itself: ${r.signal ?? ''} ${r.stderr}`);
  assert.equal(r.stdout.trim(), '2 640');
  assert.ok(Date.now() - t0 < 20_000);
  const noSab = `
    delete globalThis.SharedArrayBuffer;
    const { createRuntime } = await import(${mod});
    const rt = await createRuntime({ threads: 2 });
    console.log(JSON.stringify(rt.build));`;
  const build = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', noSab], { encoding: 'utf8' }));
  assert.deepEqual(build, { simd: true, relaxed: false, threads: 1, threadsUnavailable: 'no SharedArrayBuffer' });
});
