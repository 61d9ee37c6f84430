// The encoder references themselves (tools/encoder/): the JS weight generator gives the bits
// tests/gen/encoder.py recorded, the 16-bit rounding and the SafeTensors writer are right, the folders
// look like the real repositories, and onnxruntime-web on the ONNX graph agrees with torch's goldens.
// (mlrt's encoder is tested against the same goldens in tests/encoder.test.mjs.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import {
  weightsDigest, streamWords, normals, lnUnit, cosSin2pi, f16Bits, bf16Bits, f16ToF32, bf16ToF32, writeSafetensors, readSafetensors,
  makeWeights, tensorSpecs, SHAPES,
} from '../../tools/encoder/weights.mjs';
import { makeFolder, PROFILES } from '../../tools/encoder/folder.mjs';
import { goldens, wordnetGoldens, compare } from '../../tools/encoder/goldens.mjs';
import { encoderOnnx, folderToOnnx, ortEncoder } from '../../tools/encoder/onnx.mjs';

const require = createRequire(import.meta.url);
const G = goldens();
const text = (b) => JSON.parse(new TextDecoder().decode(b));

test('splitmix64 gives its published sequence from state 0', () => {
  assert.deepEqual(streamWords(0n, 3), [0xe220a8397b1dcdafn, 0x6e789e6aa1b965f4n, 0x06c45d188009454fn]);
});

test('normals() is Box-Muller on the stream with lnUnit and cosSin2pi, which are ln, cos and sin', () => {
  const key = 0xdeadbeef12345n, n = 4001, w = streamWords(key, n + 1), v = normals(key, n, 0, 1);
  for (let i = 0; i < n; i += 2) {
    const u1 = (Number(w[i] >> 11n) + 1) * 2 ** -53, u2 = Number(w[i + 1] >> 11n) * 2 ** -53;
    const r = Math.sqrt(-2 * lnUnit(u1)), [c, s] = cosSin2pi(u2);
    assert.equal(v[i], Math.fround(r * c));
    if (i + 1 < n) assert.equal(v[i + 1], Math.fround(r * s));
    assert.ok(Math.abs(lnUnit(u1) - Math.log(u1)) < 4e-15 && Math.abs(c - Math.cos(2 * Math.PI * u2)) < 4e-15
      && Math.abs(s - Math.sin(2 * Math.PI * u2)) < 4e-15);
  }
});

test('the JS generator gives the weights tests/gen/encoder.py drew (SHA-256 of every tensor)', async () => {
  const want = G.manifest.weights;
  const keys = Object.keys(want).filter((k) => k.startsWith('tiny/') || k === 'minilm-l6/6/F32');
  assert.ok(keys.length >= 5, 'the manifest records the digests');
  for (const k of keys) {
    const [shape, seed, dtype] = k.split('/');
    assert.equal(await weightsDigest(shape, Number(seed), dtype), want[k], k);
  }
});

test('BERT init: normal(0, 0.02) matrices, [PAD] row zero, LayerNorm weights near 1', () => {
  const w = makeWeights('tiny', 1);
  const we = w.get('embeddings.word_embeddings.weight').data;
  assert.ok(we.subarray(0, 32).every((v) => v === 0));
  let s = 0, s2 = 0;
  for (let i = 32; i < we.length; i++) { s += we[i]; s2 += we[i] * we[i]; }
  const n = we.length - 32, sd = Math.sqrt(s2 / n - (s / n) ** 2);
  assert.ok(Math.abs(s / n) < 1e-3 && Math.abs(sd - 0.02) < 2e-4, `mean ${s / n} sd ${sd}`);
  const g = w.get('encoder.layer.0.output.LayerNorm.weight').data;
  assert.ok(g.every((v) => v > 0.7 && v < 1.3) && g.some((v) => v !== 1));
  assert.ok(w.get('encoder.layer.1.attention.self.query.bias').data.some((v) => Math.abs(v) > 0.01), 'biases are not zero');
  assert.deepEqual(makeWeights('tiny', 1, 'F32').get('pooler.dense.bias').data, makeWeights('tiny', 1).get('pooler.dense.bias').data);
  assert.notDeepEqual(makeWeights('tiny', 2).get('pooler.dense.bias').data, makeWeights('tiny', 1).get('pooler.dense.bias').data);
});

test('f32 -> f16 / bf16 round to nearest even, subnormals and overflow included', () => {
  const cases16 = [[1, 0x3c00], [-2, 0xc000], [65504, 0x7bff], [65519.996, 0x7bff], [65520, 0x7c00], [1e9, 0x7c00],
    [2 ** -24, 0x0001], [2 ** -25, 0], [3 * 2 ** -26, 0x0001], [3 * 2 ** -25, 0x0002], [2 ** -14, 0x0400],
    [1 + 2 ** -11, 0x3c00], [1 + 3 * 2 ** -11, 0x3c02], [1 + 2 ** -11 + 2 ** -20, 0x3c01], [0, 0], [-0, 0x8000], [Infinity, 0x7c00]];
  for (const [v, bits] of cases16) assert.equal(f16Bits(v), bits, `f16(${v})`);
  assert.equal(f16Bits(NaN) & 0x7e00, 0x7e00);
  for (let h = 0; h < 0x7c00; h += 7) assert.equal(f16Bits(f16ToF32(h)), h, `f16 round trip ${h}`);
  const cases = [[1, 0x3f80], [1 + 2 ** -8, 0x3f80], [1 + 3 * 2 ** -8, 0x3f82], [1 + 2 ** -8 + 2 ** -20, 0x3f81], [-0.5, 0xbf00], [3.4028234663852886e38, 0x7f80]];
  for (const [v, bits] of cases) assert.equal(bf16Bits(v), bits, `bf16(${v})`);
  assert.equal(bf16ToF32(0x3f81), 1 + 2 ** -7);
});

test('SafeTensors as the Python writer lays them out, and read back', () => {
  const f = new Float32Array([1, 2, 3, 4, 5, 6]);
  const bytes = writeSafetensors([
    { name: 'b', dtype: 'F16', dims: [2], bytes: new Uint8Array(4) },
    { name: 'a', dtype: 'F32', dims: [2, 3], bytes: new Uint8Array(f.buffer) },
    { name: 'ids', dtype: 'I64', dims: [1, 2], bytes: new Uint8Array(BigInt64Array.of(0n, 1n).buffer) },
  ]);
  const n = Number(new DataView(bytes.buffer).getBigUint64(0, true));
  assert.equal(n % 8, 0);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  assert.deepEqual(Object.keys(header), ['__metadata__', 'ids', 'a', 'b']);
  assert.deepEqual(header.a.data_offsets, [16, 40]);
  assert.equal(bytes.length, 8 + n + 44);
  const back = readSafetensors(bytes);
  assert.deepEqual(back.get('a').data, f);
  assert.deepEqual(back.get('ids').data, BigInt64Array.of(0n, 1n));
});

test('folders: the files, names, dtypes and sentence-transformers settings of each profile', async () => {
  for (const [name, p] of Object.entries(PROFILES)) {
    if (p.shape !== 'tiny' && name !== 'all-MiniLM-L6-v2') continue; // the 12-layer shape: same code, more seconds
    const files = await makeFolder(name);
    const cfg = text(files['config.json']), s = SHAPES[p.shape];
    assert.equal(cfg.hidden_size, s.hidden); assert.equal(cfg.num_hidden_layers, s.layers);
    assert.equal(cfg.num_attention_heads, s.heads); assert.equal(cfg.intermediate_size, s.ffn);
    assert.equal(cfg.max_position_embeddings, s.positions); assert.equal(cfg.vocab_size, s.vocab);
    assert.equal(text(files['sentence_bert_config.json']).max_seq_length, p.maxSeqLength);
    assert.equal(text(files['1_Pooling/config.json']).pooling_mode_cls_token, p.pooling === 'cls');
    assert.equal(text(files['modules.json']).length, p.normalize ? 3 : 2);
    const st = readSafetensors(files['model.safetensors']);
    assert.equal(st.size, tensorSpecs(p.shape).length);
    assert.equal(st.get('embeddings.position_ids').dtype, 'I64');
    assert.equal(st.get('encoder.layer.0.attention.self.query.weight').dtype, p.dtype);
    const tok = require('tokenizers').Tokenizer.fromString(new TextDecoder().decode(files['tokenizer.json']));
    assert.deepEqual(Array.from((await tok.encode('Hello world')).getIds()).slice(0, 4), [101, 7592, 2088, 102]);
    assert.equal(new TextDecoder().decode(files['vocab.txt']).split('\n').length, 30523);
  }
  const f = await makeFolder('tiny', { prefix: true, dtype: 'BF16', modules: false, pooling: 'cls' });
  assert.equal(f['modules.json'], undefined);
  assert.equal(f['1_Pooling/config.json'], undefined);
  const st = readSafetensors(f['model.safetensors']);
  assert.ok([...st.keys()].every((k) => k.startsWith('bert.') || k.startsWith('cls.')));
  assert.ok(st.has('cls.predictions.bias') && st.has('bert.pooler.dense.weight'));
  assert.equal(st.get('bert.embeddings.word_embeddings.weight').dtype, 'BF16');
  const plain = readSafetensors((await makeFolder('tiny', { dtype: 'BF16' }))['model.safetensors']);
  assert.deepEqual(st.get('bert.encoder.layer.1.output.dense.weight').data, plain.get('encoder.layer.1.output.dense.weight').data);
});

test('goldens: rows, inputs and the float64 reference are consistent', () => {
  assert.ok(G.cases.length >= 15);
  for (const c of G.cases) {
    assert.equal(c.f64.length, c.rows * c.dim, c.name);
    assert.ok(c.batchVsAloneF64 <= 1e-12, c.name);
    assert.ok(c.f64.every(Number.isFinite));
    const s = compare(c.f32, c.f64, c.dim);
    assert.ok(s.maxAbs < 1e-5 && s.minCos > 0.99999, `${c.name}: torch f32 vs f64 ${JSON.stringify(s)}`);
    for (let r = 0; r < c.rows && c.folder.normalize; r++) {
      let n = 0;
      for (let k = 0; k < c.dim; k++) n += c.f64[r * c.dim + k] ** 2;
      assert.ok(Math.abs(n - 1) < 1e-12, `${c.name} row ${r} norm ${n}`);
    }
    for (const b of c.batches) {
      const P = SHAPES[c.shape].positions;
      assert.ok(b.ids.every((x) => x.length >= 1 && x.length <= P && x[0] === 101));
    }
  }
  // different inputs give different embeddings (the random model is not degenerate)
  const c = G.cases.find((x) => x.name === 'minilm-f32-mean-norm');
  const cos01 = compare(c.f64.subarray(0, c.dim), c.f64.subarray(c.dim * 20, c.dim * 21), c.dim).minCos;
  assert.ok(cos01 < 0.99, `two texts' cosine ${cos01}`);
});

test('onnxruntime-web on the ONNX graph matches torch on the tiny shape and on models/wordnet', async () => {
  for (const c of G.cases.filter((x) => x.shape === 'tiny')) {
    const { profile, ...opts } = c.folder;
    const ort = await ortEncoder(encoderOnnx(profile, opts));
    const got = new Float32Array(c.rows * c.dim);
    for (const b of c.batches) got.set(await ort.embed(b.ids, b.typeIds), b.first * c.dim);
    await ort.release();
    const s = compare(got, c.f64, c.dim);
    assert.ok(s.maxAbs <= 2e-6 && s.minCos >= 0.999999, `${c.name}: ${JSON.stringify(s)}`);
  }
  const w = wordnetGoldens();
  const { wordnetFolder } = await import('../../tools/encoder/goldens.mjs');
  const ort = await ortEncoder(folderToOnnx(wordnetFolder()));
  const got = await ort.embed(w.queries.slice(0, 8).map((q) => q.ids));
  await ort.release();
  const ref = new Float64Array(8 * w.dim);
  w.queries.slice(0, 8).forEach((q, i) => ref.set(q.reference, i * w.dim));
  const s = compare(got, ref, w.dim);
  assert.ok(s.maxAbs <= 2e-6, `wordnet: ${JSON.stringify(s)}`);
});
