// Sentence encoders on threads (issue 21): createRuntime({ threads }) splits a batch's texts (rows)
// between this thread and forks of the model on the pool's workers (wasm/threads.mjs). Every text must
// give the bits it gives on one thread (the SIMD128 build, which the threaded build matches), for any
// batch, batch size, length mix and thread count, including fewer texts than threads; refusals must be
// the one-thread MlrtErrors; the work must really go to the workers (rt.threadPool.completed).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createRuntime, MlrtError } from '../wasm/mlrt.mjs';
import { makeFolder } from '../tools/encoder/folder.mjs';
import { goldens } from '../tools/encoder/goldens.mjs';
import { clearWeightCache } from '../tools/encoder/weights.mjs';
import { assertSameBits, root } from './helpers.mjs';

const skip = !existsSync(new URL('wasm/mlrt-threads.wasm', root)) && 'no wasm/mlrt-threads.wasm';
const one = await createRuntime({ relaxed: false });
const two = skip ? null : await createRuntime({ threads: 2 });
const four = skip ? null : await createRuntime({ threads: 4 }); // more threads than cores: still exact
const G = goldens();
const TEXTS = G.manifest.inputs['texts:tiny'].texts;
// lengths from 3 to the model's maximum (truncated), in a mixed order
const MIXED = ['a', 'word '.repeat(300), 'the quick brown fox jumps over the lazy dog', 'x y', TEXTS[3], 'zebra '.repeat(40), TEXTS[7], 'ok'];

const sameBits = (got, want, what) => assertSameBits(assert, got, want, what);
/** Runs f; returns its result and the row jobs the workers completed meanwhile. */
function jobs(rt, f) {
  const before = rt.threadPool.completed.rows;
  const result = f();
  return { result, rows: rt.threadPool.completed.rows - before };
}
function refusal(f) {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof MlrtError, `not an MlrtError: ${e}`);
    return { code: e.code, message: e.message };
  }
  assert.fail('not refused');
}

test('embed: every batch (1 text to many, mixed lengths, any batchSize) gives the one-thread bits on 2 and 4 threads', { skip }, async () => {
  const files = await makeFolder('tiny');
  const ref = one.loadEncoder(files);
  const dim = ref.info.dim;
  for (const rt of [two, four]) {
    const enc = rt.loadEncoder(files);
    for (const texts of [TEXTS, MIXED, MIXED.slice(0, 2), MIXED.slice(0, 3), [MIXED[1]], [...MIXED].reverse()]) {
      const want = ref.embed(texts);
      const { result, rows } = jobs(rt, () => enc.embed(texts));
      sameBits(result, want, `${rt.build.threads} threads, ${texts.length} texts`);
      if (texts.length > 1) assert.ok(rows >= 1, `${rt.build.threads} threads, ${texts.length} texts: no block ran on a worker`);
      else assert.equal(rows, 0, 'one text runs on the calling thread');
      for (const batchSize of [1, 2, 3, 5]) sameBits(enc.embed(texts, { batchSize }), want, `${rt.build.threads} threads, batchSize ${batchSize}`);
    }
    // texts alone give their bits in the batch
    const all = enc.embed(TEXTS);
    for (let i = 0; i < TEXTS.length; i += 7) sameBits(enc.embed(TEXTS[i]), all.subarray(i * dim, (i + 1) * dim), `text ${i} alone`);
    // UTF-8 bytes as texts
    sameBits(enc.embed(MIXED.map((t) => new TextEncoder().encode(t))), ref.embed(MIXED), 'UTF-8 bytes');
    enc.free();
    // a tokenizer.json that cuts on the left while the model cuts on the right (transformers' truncation_side),
    // and the other way round: the one-thread bits (such batches stay on the calling thread)
    const td = new TextDecoder(), te = new TextEncoder();
    const edit = (f, name, g) => ({ ...f, [name]: te.encode(JSON.stringify(g(JSON.parse(td.decode(f[name]))))) });
    const left = edit(files, 'tokenizer.json', (j) => ({ ...j, truncation: { ...j.truncation, direction: 'Left' } }));
    const counted = (k) => Array.from({ length: 90 }, (_, i) => `${['house', 'tree', 'river', 'stone'][i % 4]} ${i + k}`).join(' ');
    const cut = [counted(0), 'a short one', counted(7), MIXED[2]]; // long texts whose two ends differ
    for (const f of [left, edit(files, 'tokenizer_config.json', (j) => ({ ...j, truncation_side: 'left' }))]) {
      const r = one.loadEncoder(f), e = rt.loadEncoder(f);
      sameBits(e.embed(cut), r.embed(cut), `${rt.build.threads} threads, truncation side ${e.info.truncationSide}`);
      r.free(), e.free();
    }
  }
  ref.free();
});

test('embed on threads: a lowercasing model (do_lower_case) gives the one-thread bits, ASCII or not', { skip }, async () => {
  const files = await makeFolder('tiny', { doLowerCase: true });
  const ref = one.loadEncoder(files), enc = two.loadEncoder(files);
  assert.equal(enc.info.lowerCase, true);
  const ascii = ['HELLO World', 'The QUICK brown FOX', 'abc DEF ghi', 'Zz'];
  let r = jobs(two, () => enc.embed(ascii));
  sameBits(r.result, ref.embed(ascii), 'ASCII');
  assert.ok(r.rows >= 1, 'ASCII texts are lowercased here and split');
  const bytes = ascii.map((t) => new TextEncoder().encode(t));
  sameBits(enc.embed(bytes), ref.embed(bytes), 'ASCII as bytes');
  const unicode = ['ÉCOLE Été', 'İSTANBUL', 'ΣΟΦΙΑ', 'Straße'];
  r = jobs(two, () => enc.embed(unicode));
  sameBits(r.result, ref.embed(unicode), 'non-ASCII: mlrt_embed on the calling thread');
  assert.equal(r.rows, 0, 'non-ASCII texts of a lowercasing model run on the calling thread');
  enc.free(); ref.free();
});

test('embed on threads with a prompt: the default, a name, a text, and include_prompt false (on the calling thread)', { skip }, async () => {
  const base = await makeFolder('tiny');
  const json = (o) => new TextEncoder().encode(JSON.stringify(o));
  const st = { 'config_sentence_transformers.json': json({ prompts: { query: 'query: ', p: 'passage: ' }, default_prompt_name: 'query' }) };
  const files = { ...base, ...st };
  const ref = one.loadEncoder(files), enc = two.loadEncoder(files);
  for (const options of [{}, { promptName: 'p' }, { prompt: 'Represent this: ' }, { prompt: '' }]) {
    const r = jobs(two, () => enc.embed(MIXED, options));
    sameBits(r.result, ref.embed(MIXED, options), JSON.stringify(options));
    assert.ok(r.rows >= 1, `${JSON.stringify(options)}: split between the threads`);
    const bytes = MIXED.map((t) => new TextEncoder().encode(t));
    sameBits(enc.embed(bytes, options), r.result, `${JSON.stringify(options)}: texts as bytes`);
  }
  enc.free(); ref.free();
  const pool = JSON.parse(new TextDecoder().decode(base['1_Pooling/config.json']));
  const masked = { ...files, '1_Pooling/config.json': json({ ...pool, include_prompt: false }) };
  const ref2 = one.loadEncoder(masked), enc2 = two.loadEncoder(masked);
  const r = jobs(two, () => enc2.embed(MIXED));
  sameBits(r.result, ref2.embed(MIXED), 'include_prompt false');
  assert.equal(r.rows, 0, 'a prompt the pooling leaves out runs on the calling thread');
  sameBits(enc2.embed(MIXED, { prompt: '' }), ref2.embed(MIXED, { prompt: '' }), 'include_prompt false, no prompt');
  enc2.free(); ref2.free();
});

test('embedTokens on threads: ragged arrays, flat Int32Array / BigInt64Array with masks and type ids give the one-thread bits', { skip }, async () => {
  const files = await makeFolder('tiny');
  const ref = one.loadEncoder(files);
  const ragged = [[101, 7592, 102], [101, 2088, 2003, 1037, 3231, 102], [101, 102], [101, 1996, 4248, 2829, 4419, 102]];
  for (const rt of [two, four]) {
    const enc = rt.loadEncoder(files);
    const r = jobs(rt, () => enc.embedTokens({ ids: ragged }));
    sameBits(r.result, ref.embedTokens({ ids: ragged }), `${rt.build.threads} threads, ragged`);
    assert.ok(r.rows >= 1);
    const width = 6, n = ragged.length, ids = new Int32Array(n * width), mask = new Uint8Array(n * width), types = new Int32Array(n * width);
    ragged.forEach((row, i) => { ids.set(row, i * width); mask.fill(1, i * width, i * width + row.length); types.fill(1, i * width + 2, i * width + row.length); });
    const dims = [n, width];
    sameBits(enc.embedTokens({ ids, attentionMask: mask, typeIds: types, dims }), ref.embedTokens({ ids, attentionMask: mask, typeIds: types, dims }), 'flat Int32Array');
    const ids64 = BigInt64Array.from(ids, BigInt);
    sameBits(enc.embedTokens({ ids: ids64, attentionMask: mask, dims }), ref.embedTokens({ ids: ids64, attentionMask: mask, dims }), 'BigInt64Array');
    enc.free();
  }
  ref.free();
});

test('refusals on threads are the one-thread MlrtErrors (code and message naming the row)', { skip }, async () => {
  const files = await makeFolder('tiny');
  const ref = one.loadEncoder(files), enc = two.loadEncoder(files);
  const vocab = enc.info.vocabSize;
  const badId = [[101, 7592, 102], [101, 2088, 102], [101, vocab, 102], [101, 102]];
  const a = refusal(() => enc.embedTokens({ ids: badId })), b = refusal(() => ref.embedTokens({ ids: badId }));
  assert.deepEqual(a, b);
  assert.equal(a.code, 'INVALID_ARGUMENT');
  assert.match(a.message, /input_ids\[2\]\[1\]/);
  const noMask = { ids: [[101, 7592, 102], [101, 2088, 102]], attentionMask: [[1, 1, 1], [0, 0, 0]] };
  assert.deepEqual(refusal(() => enc.embedTokens(noMask)), refusal(() => ref.embedTokens(noMask)));
  const badUtf8 = ['fine', 'also fine', new Uint8Array([0x61, 0xff, 0x62]), 'last'];
  const c = refusal(() => enc.embed(badUtf8));
  assert.deepEqual(c, refusal(() => ref.embed(badUtf8)));
  assert.equal(c.code, 'INVALID_UTF8');
  // the encoder goes on after a refusal, on threads
  const r = jobs(two, () => enc.embed(TEXTS.slice(0, 4)));
  sameBits(r.result, ref.embed(TEXTS.slice(0, 4)), 'after a refusal');
  assert.ok(r.rows >= 1);
  enc.free(); ref.free();
});

test('freeing, disposing the runtime, and a MiniLM-shaped batch of 32 on 2 threads', { skip }, async () => {
  const rt = await createRuntime({ threads: 2 });
  const tiny = await makeFolder('tiny');
  const ref = one.loadEncoder(tiny);
  for (let k = 0; k < 3; k++) { // encoders with forks, loaded and freed again
    const enc = rt.loadEncoder(tiny);
    sameBits(enc.embed(TEXTS.slice(0, 6)), ref.embed(TEXTS.slice(0, 6)), `load ${k}`);
    enc.free();
    assert.throws(() => enc.embed(['a', 'b']), (e) => e instanceof MlrtError && e.code === 'DISPOSED');
  }
  const enc = rt.loadEncoder(tiny);
  enc.embed(TEXTS.slice(0, 4));
  rt.dispose(); // the workers end; the encoder goes on, on this thread
  assert.equal(rt.threadPool, null);
  sameBits(enc.embed(TEXTS), ref.embed(TEXTS), 'after rt.dispose()');
  enc.free(); ref.free();
  const minilm = await G.cases.find((c) => c.name === 'minilm-f32-mean-norm').files();
  const texts = G.manifest.inputs['texts:all-MiniLM-L6-v2'].texts.slice(0, 32);
  const m1 = one.loadEncoder(minilm), m2 = two.loadEncoder(minilm);
  const r = jobs(two, () => m2.embed(texts));
  sameBits(r.result, m1.embed(texts), 'MiniLM shape, 32 texts');
  assert.ok(r.rows >= 1);
  m1.free(); m2.free();
  clearWeightCache();
});
