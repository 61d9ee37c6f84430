// lemma-index.test.mjs — the lemma index format (web/lemma-index.mjs): round trips, the Q8 rule,
// the search against a float64 brute force, and every class of malformed file.
// The rows here are arbitrary unit vectors (a container test); the real WordNet index is
// checked in tests/web/wordnet-index.test.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { crc32 } from '../../wasm/crc32.mjs';
import { createRuntime } from '../../wasm/mlrt.mjs';
import { HEADER_BYTES, IndexError, quantizeRow, readIndex, topK, writeIndex } from '../../web/lemma-index.mjs';

const SHA = 'ab'.repeat(32);
const WORDS = ['tugboat', 'tow', 'boat', 'café au lait', 'naïve', "'hood", 's Gravenhage', 'New York City', 'x', 'ice cream', 'résumé'];

// Deterministic unit rows (xorshift32).
function rows(n, dim, seed = 7) {
  let s = seed >>> 0;
  const next = () => {
    s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
    return s / 2 ** 32 - 0.5;
  };
  const out = new Float32Array(n * dim);
  for (let r = 0; r < n; r++) {
    let norm = 0;
    for (let j = 0; j < dim; j++) norm += (out[r * dim + j] = next()) ** 2;
    for (let j = 0; j < dim; j++) out[r * dim + j] /= Math.sqrt(norm);
  }
  return out;
}

const make = (dtype, o = {}) => writeIndex({ words: WORDS, embeddings: rows(WORDS.length, 12), dim: 12, dtype, modelSha256: SHA, generator: 'test 1', ...o });
const withCrc = (b) => {
  new DataView(b.buffer, b.byteOffset).setUint32(64, crc32(b.subarray(HEADER_BYTES)), true);
  return b;
};
const refused = (bytes, pattern) => assert.throws(() => readIndex(bytes), (e) => {
  assert.ok(e instanceof IndexError, `${e.name}: ${e.message}`);
  assert.equal(e.code, 'BAD_INDEX');
  assert.match(e.message, pattern);
  return true;
});

test('f32 round trip: words, rows bit for bit, header facts', () => {
  const emb = rows(WORDS.length, 12);
  const ix = readIndex(writeIndex({ words: WORDS, embeddings: emb, dim: 12, dtype: 'f32', modelSha256: SHA, generator: 'torch 1.13' }));
  assert.equal(ix.dtype, 'f32');
  assert.equal(ix.dim, 12);
  assert.equal(ix.count, WORDS.length);
  assert.equal(ix.normalized, true);
  assert.equal(ix.modelSha256, SHA);
  assert.equal(ix.generator, 'torch 1.13');
  assert.deepEqual(ix.words(), WORDS);
  WORDS.forEach((w, i) => {
    assert.equal(ix.word(i), w);
    assert.deepEqual(ix.row(i), emb.subarray(i * 12, (i + 1) * 12));
  });
  assert.throws(() => ix.word(WORDS.length), /not a row/);
});

test('q8: the APR rule (max|x|/127, round half away from zero), rows within half a step', () => {
  // exact in binary: scale 1 and 2; halves go away from zero
  let { scale, q } = quantizeRow(Float32Array.from([127, -63.5, 0.5, -0.5, 1.5, 0, -2.49]));
  assert.equal(scale, 1);
  assert.deepEqual(Array.from(q), [127, -64, 1, -1, 2, 0, -2]);
  ({ scale, q } = quantizeRow(Float32Array.from([-254, 3, 1, -1, 200.9])));
  assert.equal(scale, 2);
  assert.deepEqual(Array.from(q), [-127, 2, 1, -1, 100]);
  assert.deepEqual(Array.from(quantizeRow(new Float32Array(4)).q), [0, 0, 0, 0]);
  const emb = rows(WORDS.length, 12);
  const ix = readIndex(writeIndex({ words: WORDS, embeddings: emb, dim: 12, dtype: 'q8', modelSha256: SHA }));
  assert.equal(ix.dtype, 'q8');
  for (let r = 0; r < WORDS.length; r++) {
    const src = emb.subarray(r * 12, (r + 1) * 12), got = ix.row(r);
    const step = Math.max(...src.map(Math.abs)) / 127;
    for (let j = 0; j < 12; j++) assert.ok(Math.abs(got[j] - src[j]) <= step / 2 + 1e-7, `row ${r}[${j}]`);
  }
  // 4 bytes of scale + dim bytes per row instead of 4 x dim
  const f32 = writeIndex({ words: WORDS, embeddings: emb, dim: 12, dtype: 'f32', modelSha256: SHA });
  const q8 = writeIndex({ words: WORDS, embeddings: emb, dim: 12, dtype: 'q8', modelSha256: SHA });
  assert.equal(f32.length - q8.length, WORDS.length * (48 - 16));
});

test('search: the top k of a float64 brute force, best first, ties to the lower row', () => {
  const n = 500, dim = 16, emb = rows(n, dim, 3);
  const words = Array.from({ length: n }, (_, i) => `w${i}`);
  for (const dtype of ['f32', 'q8']) {
    const ix = readIndex(writeIndex({ words, embeddings: emb, dim, dtype, modelSha256: SHA }));
    for (let t = 0; t < 20; t++) {
      const x = rows(1, dim, 100 + t);
      const ref = Array.from({ length: n }, (_, r) => {
        const row = ix.row(r);
        let s = 0;
        for (let j = 0; j < dim; j++) s += row[j] * x[j];
        return [r, s];
      }).sort((a, b) => b[1] - a[1] || a[0] - b[0]);
      const got = ix.search(x, 10);
      assert.equal(got.length, 10);
      got.forEach((g, i) => {
        assert.equal(g.word, `w${g.index}`);
        assert.ok(Math.abs(g.score - ref[i][1]) < 1e-5, `${dtype} query ${t} rank ${i}`);
        if (i) assert.ok(g.score <= got[i - 1].score);
      });
      // the same set as the reference, up to near-ties at the boundary
      const kth = ref[9][1];
      for (const g of got) assert.ok(g.score >= kth - 1e-5);
    }
  }
  assert.deepEqual(topK(Float32Array.from([1, 3, 3, 2, 3]), 3), [1, 2, 4]);
  assert.deepEqual(topK(Float32Array.from([0.5]), 3), [0]);
  const ix = readIndex(make('q8'));
  assert.equal(ix.search(rows(1, 12), 1000).length, WORDS.length);
  assert.throws(() => ix.search(new Float32Array(11)), /Float32Array of 12/);
  assert.throws(() => ix.search(Float32Array.from({ length: 12 }, () => NaN)), /query value 0 is NaN/);
  assert.throws(() => ix.search(rows(1, 12), 0), /k must be a positive integer/);
});

test('useRuntime: mlrt\'s Q8 kernels score a q8 index as the JavaScript loop does, to the query\'s quantization', async () => {
  const n = 3000, dim = 32, emb = rows(n, dim, 11);
  const words = Array.from({ length: n }, (_, i) => `w${i}`);
  const bytes = writeIndex({ words, embeddings: emb, dim, dtype: 'q8', modelSha256: SHA });
  const js = readIndex(bytes);
  for (const options of [{ relaxed: false }, { simd: false }]) {
    const ix = readIndex(bytes).useRuntime(await createRuntime(options));
    assert.equal(ix.engine, 'mlrt');
    assert.equal(js.engine, 'js');
    let agree = 0;
    for (let t = 0; t < 30; t++) {
      const x = rows(1, dim, 500 + t);
      const a = js.scores(x).slice(), b = ix.scores(x);
      // mlrt quantizes the query to int16 (SIMD128 and scalar builds): errors of about 1e-5 of |x|
      for (let r = 0; r < n; r++) assert.ok(Math.abs(a[r] - b[r]) < 1e-4, `${JSON.stringify(options)} query ${t} row ${r}: ${a[r]} vs ${b[r]}`);
      if (js.search(x, 10).map((g) => g.index).join() === ix.search(x, 10).map((g) => g.index).join()) agree++;
    }
    assert.ok(agree >= 27, `${JSON.stringify(options)}: top 10 equal to JavaScript's for ${agree}/30`);
  }
  assert.throws(() => readIndex(make('f32')).useRuntime(null), /only a q8 index/);
});

test('the writer refuses what it cannot store', () => {
  const base = { words: WORDS, embeddings: rows(WORDS.length, 12), dim: 12, modelSha256: SHA };
  assert.throws(() => writeIndex({ ...base, dtype: 'f16' }), /dtype/);
  assert.throws(() => writeIndex({ ...base, dim: 11 }), /dim 11 is not a multiple of 4/);
  assert.throws(() => writeIndex({ ...base, dim: 8 }), /Float32Array of 11 x 8/);
  assert.throws(() => writeIndex({ ...base, modelSha256: 'xyz' }), /modelSha256/);
  assert.throws(() => writeIndex({ ...base, words: [...WORDS.slice(1), 'a\nb'] }), /words\[10\]/);
  assert.throws(() => writeIndex({ ...base, words: [...WORDS.slice(1), ''] }), /words\[10\]/);
  assert.throws(() => writeIndex({ ...base, generator: 'x'.repeat(17) }), /generator/);
  const nan = rows(WORDS.length, 12);
  nan[30] = NaN;
  assert.throws(() => writeIndex({ ...base, embeddings: nan }), /\[2\]\[6\] is NaN/);
});

test('malformed files are refused with the field and offset', () => {
  for (const dtype of ['f32', 'q8']) {
    const good = make(dtype);
    readIndex(good);
    const edit = (fn, crc = true) => {
      const b = good.slice();
      fn(b, new DataView(b.buffer));
      return crc ? withCrc(b) : b;
    };
    refused(good.subarray(0, 50), /shorter than its 96-byte header/);
    refused(edit((b) => { b[0] = 0x4e; }), /bad magic at offset 0/);
    refused(edit((b, v) => v.setUint32(8, 2, true)), /version 2 at offset 8/);
    refused(edit((b, v) => v.setUint32(12, 64, true)), /header bytes 64 at offset 12/);
    refused(edit((b, v) => v.setUint32(16, 3, true)), /dtype 3 at offset 16/);
    refused(edit((b, v) => v.setUint32(20, 0, true)), /dim 0 at offset 20/);
    refused(edit((b, v) => v.setUint32(20, 13, true)), /dim 13 at offset 20 is not a multiple of 4/);
    refused(edit((b, v) => v.setUint32(20, 16, true)), /says/);
    refused(edit((b, v) => v.setUint32(24, 0, true)), /count 0 at offset 24/);
    refused(edit((b, v) => v.setUint32(24, 0xffffffff, true)), /count 4294967295/);
    refused(edit((b, v) => v.setUint32(24, WORDS.length + 1, true)), /header .* says \d+/);
    refused(edit((b, v) => v.setUint32(28, v.getUint32(28, true) + 4, true)), /says/);
    refused(edit((b, v) => v.setUint32(68, 2, true)), /flags 0x2 at offset 68/);
    refused(edit((b) => { b[90] = 1; }), /reserved byte at offset 90/);
    refused(edit((b) => { b[72] = 7; }), /generator byte at offset 72/);
    refused(edit((b) => { b[80] = 0x41; }), /generator byte at offset 80/); // a character after the zeros
    // every byte after the header is covered by the CRC
    for (const at of [HEADER_BYTES, HEADER_BYTES + 5, good.length - 1, good.length >> 1]) {
      refused(edit((b) => { b[at] ^= 0x10; }, false), /CRC-32 .* the file is corrupt/);
    }
    for (const cut of [HEADER_BYTES, HEADER_BYTES + 1, good.length - 1]) refused(good.subarray(0, cut), /the file is \d+ bytes; its header/);
    refused(withCrc(Uint8Array.from([...good, 0, 0, 0, 0])), /the file is \d+ bytes; its header/);
    // the strings block: a word lost, an empty word, invalid UTF-8, padding
    const s = HEADER_BYTES;
    refused(edit((b) => { b[s + 7] = 0x20; }), /holds 10 complete words, the header says 11/); // "tugboat\n" -> "tugboat "
    refused(edit((b) => { b[s + 3] = 0x0a; }), /more than 11 words|holds/);
    refused(edit((b) => { b[s] = 0x0a; }), /word 0 is empty/);
    refused(edit((b) => { b[s + 1] = 0xff; }), /not valid UTF-8/);
    const strings = new DataView(good.buffer).getUint32(28, true);
    if ((s + strings) % 4) refused(edit((b) => { b[s + strings] = 1; }), /padding byte at offset/);
    // the rows
    const rowsAt = (s + strings + 3) & ~3;
    if (dtype === 'f32') {
      refused(edit((b, v) => v.setFloat32(rowsAt + 4 * 13, NaN, true)), /row 1 value 1 is NaN/);
      refused(edit((b, v) => v.setFloat32(rowsAt, Infinity, true)), /row 0 value 0 is Infinity/);
    } else {
      refused(edit((b, v) => v.setFloat32(rowsAt + 4, 0, true)), /row 1's scale is 0/);
      refused(edit((b, v) => v.setFloat32(rowsAt + 8, NaN, true)), /row 2's scale is NaN/);
      refused(edit((b, v) => v.setFloat32(rowsAt, -1, true)), /row 0's scale is -1/);
      refused(edit((b) => { b[rowsAt + 4 * WORDS.length + 12 + 3] = 0x80; }), /row 1 value 3 is -128/);
    }
  }
  assert.throws(() => readIndex('MLRTLIDX'), (e) => e.code === 'INVALID_ARGUMENT');
});

test('fuzz: 3000 mutated files are read or refused with BAD_INDEX, never anything else', () => {
  let s = 12345;
  const rnd = (n) => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return s % n;
  };
  const seeds = [make('f32'), make('q8')];
  let read = 0;
  for (let t = 0; t < 3000; t++) {
    const b = seeds[t & 1].slice();
    const edits = 1 + rnd(4);
    for (let e = 0; e < edits; e++) b[rnd(rnd(2) ? HEADER_BYTES : b.length)] = rnd(256);
    const mutated = rnd(3) ? withCrc(b) : b; // mostly past the checksum, to reach the later checks
    const cut = rnd(10) ? mutated : mutated.subarray(0, rnd(mutated.length));
    try {
      const ix = readIndex(cut);
      ix.search(rows(1, ix.dim, t), 5);
      read++;
    } catch (e) {
      assert.ok(e instanceof IndexError && e.code === 'BAD_INDEX', `mutation ${t}: ${e.stack}`);
    }
  }
  assert.ok(read > 0 && read < 3000, `${read} mutated files read`);
});
