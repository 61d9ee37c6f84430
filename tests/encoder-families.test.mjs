// MPNet sentence encoders (all-mpnet-base-v2's architecture): MPNetModel's embeddings (no token types,
// positions counted from 2 over the ids that are not <pad>), its relative position bias (32 buckets, one
// table for every layer) and the BERT layers around it. The folder tests/mpnet/tiny/ and its goldens are
// written by tests/gen/mpnet.py: random weights, and an MPNetModel forward written there in plain torch
// from Hugging Face's definitions, in float64 (the reference) and float32. Tokenization is checked
// against the Rust tokenizers (npm) on the same tokenizer.json.
import { test } from 'node:test';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import assert from 'node:assert/strict';
import { assertSameBits } from './helpers.mjs';

const { createRuntime, MlrtError } = await import('../wasm/mlrt.mjs');
const { Tokenizer } = await import('tokenizers');
const te = new TextEncoder(), td = new TextDecoder();
const rt = await createRuntime({ relaxed: false });
const scalar = await createRuntime({ simd: false });
const DIR = new URL('./mpnet/tiny/', import.meta.url);
const golden = JSON.parse(readFileSync(new URL('./mpnet/goldens.json', import.meta.url), 'utf8'));

function folder(dir = DIR, prefix = '') {
  const files = {};
  for (const name of readdirSync(dir)) {
    const p = new URL(name, dir);
    if (statSync(p).isDirectory()) Object.assign(files, folder(new URL(name + '/', dir), prefix + name + '/'));
    else files[prefix + name] = new Uint8Array(readFileSync(p));
  }
  return files;
}
const FILES = folder();
const json = (o) => te.encode(JSON.stringify(o));
const config = JSON.parse(td.decode(FILES['config.json']));
const withConfig = (patch) => ({ ...FILES, 'config.json': json({ ...config, ...patch }) });

// The SafeTensors file's tensors, to rewrite one: { header, data }.
function tensorsOf(bytes) {
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
  return { header: JSON.parse(td.decode(bytes.subarray(8, 8 + n))), data: bytes.subarray(8 + n) };
}
function safetensorsOf({ header, data }) {
  let h = JSON.stringify(header);
  h += ' '.repeat((8 - (h.length % 8)) % 8);
  const out = new Uint8Array(8 + h.length + data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(h.length), true);
  out.set(te.encode(h), 8);
  out.set(data, 8 + h.length);
  return out;
}
// The folder with tensors renamed (map: old -> new name, or null: out of the model's names; SafeTensors
// allows no hole in the data, so a tensor is never simply dropped).
function renamed(map) {
  const { header, data } = tensorsOf(FILES['model.safetensors']);
  const h = {};
  for (const [k, v] of Object.entries(header)) {
    h[k in map ? map[k] ?? `dropped.${k}` : k] = v;
  }
  return { ...FILES, 'model.safetensors': safetensorsOf({ header: h, data }) };
}

function compare(got, want, dim) {
  let maxAbs = 0, minCos = 1;
  for (let r = 0; r < want.length; r++) {
    let dot = 0, a2 = 0, b2 = 0;
    for (let i = 0; i < dim; i++) {
      const a = got[r * dim + i], b = want[r][i];
      maxAbs = Math.max(maxAbs, Math.abs(a - b)), dot += a * b, a2 += a * a, b2 += b * b;
    }
    minCos = Math.min(minCos, dot / Math.sqrt(a2 * b2));
  }
  return { maxAbs, minCos };
}
const rows = (b) => ({ ids: b.ids, attentionMask: b.mask });

test('mpnet: loads as an encoder; info says what the files are', () => {
  const enc = rt.loadEncoder(FILES);
  assert.equal(enc.info.architecture, 'MPNetModel');
  assert.equal(enc.info.dim, 32);
  assert.equal(enc.info.typeVocabSize, 0);
  assert.equal(enc.info.maxPositions, 130);
  assert.equal(enc.info.maxLength, 128); // sentence_bert_config.json's max_seq_length
  assert.equal(enc.info.pooling, 'mean');
  assert.equal(enc.info.normalize, true);
  assert.deepEqual(enc.info.unusedTensors, ['pooler.dense.bias', 'pooler.dense.weight']);
  enc.dispose();
});

test('mpnet: token ids give the float64 reference within 1e-5 (every batch: single, padded, left-padded, <pad> inside)', () => {
  const enc = rt.loadEncoder(FILES);
  let worst = { maxAbs: 0, minCos: 1 }, n = 0;
  for (const b of golden.batches) {
    const got = enc.embedTokens(rows(b));
    const c = compare(got, b.f64, golden.dim);
    assert.ok(c.maxAbs <= 1e-5 && c.minCos >= 0.99999, `${b.name}: max |Δ| ${c.maxAbs}, cos ${c.minCos}`);
    worst = { maxAbs: Math.max(worst.maxAbs, c.maxAbs), minCos: Math.min(worst.minCos, c.minCos) }, n += b.ids.length;
  }
  assert.ok(n >= 24, `${n} rows`);
  enc.dispose();
});

test('mpnet: texts tokenize as the Rust tokenizers do and embed as the reference', async () => {
  const enc = rt.loadEncoder(FILES);
  const oracle = Tokenizer.fromString(td.decode(FILES['tokenizer.json']));
  const texts = golden.batches.filter((b) => b.texts);
  assert.ok(texts.length >= 8);
  for (const b of texts) {
    const want = (await oracle.encode(b.texts[0])).getIds();
    const cut = want.length > 128 ? [...want.slice(0, 127), 2] : want; // max_seq_length 128, </s> kept
    assert.deepEqual(Array.from(enc.tokenizer.encode(b.texts[0], { maxLength: 128 }).ids), cut, b.texts[0]);
    assert.deepEqual(cut, b.ids[0], `${b.name}: the goldens' ids`);
    const c = compare(enc.embed(b.texts[0]), b.f64, golden.dim);
    assert.ok(c.maxAbs <= 1e-5 && c.minCos >= 0.99999, `${b.name}: max |Δ| ${c.maxAbs}`);
  }
  enc.dispose();
});

test('mpnet: a text gives the same bits alone as in a batch, on SIMD128 and scalar alike', () => {
  const a = rt.loadEncoder(FILES), s = scalar.loadEncoder(FILES);
  const texts = golden.batches.filter((b) => b.texts).map((b) => b.texts[0]);
  const all = a.embed(texts), alone = texts.map((t) => a.embed(t));
  for (let i = 0; i < texts.length; i++) assertSameBits(assert, all.subarray(32 * i, 32 * i + 32), alone[i], texts[i]);
  assertSameBits(assert, s.embed(texts), all, 'scalar');
  // left padding in embedTokens: the same bits as the row alone
  const left = golden.batches.find((b) => b.name === 'left');
  const got = a.embedTokens(rows(left));
  left.ids.forEach((r, i) => {
    const keep = r.filter((_, j) => left.mask[i][j]);
    assertSameBits(assert, got.subarray(32 * i, 32 * i + 32), a.embedTokens({ ids: [keep] }), `left row ${i}`);
  });
  a.dispose(), s.dispose();
});

test('mpnet: the position bias and the positions matter (the reference is not met without them)', () => {
  // the table zeroed: far from the reference on the 128-token row
  const { header, data } = tensorsOf(FILES['model.safetensors']);
  const t = header['encoder.relative_attention_bias.weight'], d = data.slice();
  d.fill(0, t.data_offsets[0], t.data_offsets[1]);
  const enc = rt.loadEncoder({ ...FILES, 'model.safetensors': safetensorsOf({ header, data: d }) });
  const long = golden.batches.find((b) => b.name === 'single-128');
  assert.ok(compare(enc.embedTokens(rows(long)), long.f64, 32).maxAbs > 1e-3);
  enc.dispose();
  // a <pad> id inside a text takes position 1, and later tokens count on: the reference holds only so
  const inner = golden.batches.find((b) => b.name === 'inner_pad');
  assert.ok(inner.ids.some((r, i) => r.some((id, j) => id === 1 && inner.mask[i][j])));
});

test('mpnet: malformed folders are refused with what and where', () => {
  const cases = [
    [renamed({ 'encoder.relative_attention_bias.weight': null }), 'NOT_A_MODEL', /encoder\.relative_attention_bias\.weight' is missing/],
    [withConfig({ relative_attention_num_buckets: 16 }), 'BAD_DIMENSIONS', /relative_attention_num_buckets is 16; it must be in 32\.\./],
    [withConfig({ relative_attention_num_buckets: 64 }), 'BAD_DIMENSIONS', /relative_attention_bias\.weight' has 2 dimensions \[32, 4\.\.\.\]; the config gives \[64, 4\]/],
    [withConfig({ num_attention_heads: 8 }), 'BAD_DIMENSIONS', /relative_attention_bias\.weight' has 2 dimensions \[32, 4\.\.\.\]; the config gives \[32, 8\]/],
    [withConfig({ max_position_embeddings: 2 }), 'BAD_DIMENSIONS', /MPNet needs at least 3/],
    [withConfig({ architectures: ['BertModel'] }), 'UNSUPPORTED', /'BertModel' is not an MPNet model \(MPNet\.\.\.\)/],
    [withConfig({ model_type: 'roberta' }), 'UNSUPPORTED', /only "bert" and "mpnet"/],
    [withConfig({ hidden_act: 'relu' }), 'UNSUPPORTED', /hidden_act 'relu'/],
    [renamed({ 'encoder.layer.1.attention.attn.o.weight': 'encoder.layer.1.attention.output.dense.weight' }), 'NOT_A_MODEL',
      /encoder\.layer\.1\.attention\.attn\.o\.weight' is missing/],
    [renamed({ 'encoder.layer.0.attention.LayerNorm.bias': null }), 'NOT_A_MODEL', /encoder\.layer\.0\.attention\.LayerNorm\.bias' is missing/],
  ];
  for (const [files, code, re] of cases)
    assert.throws(() => rt.loadEncoder(files), (e) => e instanceof MlrtError && e.code === code && re.test(e.message), `${code} ${re}`);
  // a config with BERT's model_type over MPNet's tensors: the BERT names are missing
  assert.throws(() => rt.loadEncoder(withConfig({ model_type: 'bert', architectures: ['BertModel'] })),
    (e) => e.code === 'NOT_A_MODEL' && /embeddings\.token_type_embeddings\.weight' is missing/.test(e.message));
});

test('mpnet: positions past the table are refused at run time; "mpnet." prefixed names load the same', () => {
  const enc = rt.loadEncoder(withConfig({ max_position_embeddings: 130 }));
  const ids = [[0, ...Array(128).fill(100), 2]]; // 130 ids, positions up to 131
  assert.throws(() => enc.embedTokens({ ids }), (e) => e.code === 'INVALID_ARGUMENT' && /would take position 130; the model has 130/.test(e.message));
  const ok = enc.embedTokens({ ids: [[0, ...Array(126).fill(100), 2]] }); // positions 2..129
  assert.equal(ok.length, 32);
  enc.dispose();
  const { header } = tensorsOf(FILES['model.safetensors']);
  const map = Object.fromEntries(Object.keys(header).filter((k) => k !== '__metadata__').map((k) => [k, 'mpnet.' + k]));
  const pre = rt.loadEncoder(renamed(map)), plain = rt.loadEncoder(FILES);
  assert.equal(pre.info.tensorPrefix, 'mpnet.');
  const b = golden.batches.find((x) => x.name === 'padded');
  assertSameBits(assert, pre.embedTokens(rows(b)), plain.embedTokens(rows(b)), 'mpnet. prefix');
  pre.dispose(), plain.dispose();
});

test('mpnet: on 2 threads, the one-thread bits', { skip: !existsSync(new URL('../wasm/mlrt-threads.wasm', import.meta.url)) && 'no threads build' }, async () => {
  const two = await createRuntime({ threads: 2 });
  const texts = golden.batches.filter((b) => b.texts).map((b) => b.texts[0]);
  const a = two.loadEncoder(FILES), b = rt.loadEncoder(FILES);
  assertSameBits(assert, a.embed([...texts, ...texts]), b.embed([...texts, ...texts]), '2 threads');
  a.dispose(), b.dispose();
});

test('mpnet: mlrt convert to .apr (f32: the folder\'s bits; Q8: cosine >= 0.995 to the reference), alone or with config.json', async () => {
  const { encoderToApr } = await import('../tools/apr/encoder.mjs');
  const src = { 'config.json': FILES['config.json'], 'model.safetensors': FILES['model.safetensors'] };
  const f32 = encoderToApr(src).bytes, q8 = encoderToApr(src, { quantize: 'q8', embeddings: 'q8' });
  assert.equal(q8.architecture, 'mpnet');
  assert.ok(q8.quantized >= 13, `${q8.quantized} tensors as q8`);
  const folder = rt.loadEncoder(FILES), tok = { 'tokenizer.json': FILES['tokenizer.json'] };
  const a = rt.loadEncoder({ 'model.apr': f32, ...tok }); // the metadata alone: sizes, mpnet, buckets
  assert.equal(a.info.architecture, 'MPNetModel');
  assert.equal(a.info.typeVocabSize, 0);
  for (const b of golden.batches) assertSameBits(assert, a.embedTokens(rows(b)), folder.embedTokens(rows(b)), `f32 .apr ${b.name}`);
  const withConfig = rt.loadEncoder({ 'model.apr': f32, 'config.json': FILES['config.json'], ...tok });
  assertSameBits(assert, withConfig.embed('A man is eating food.'), folder.embed('A man is eating food.'), 'f32 .apr + config.json');
  const q = rt.loadEncoder({ 'model.apr': q8.bytes, ...tok });
  assert.equal(q.info.dtype, 'q8');
  let worst = 1;
  for (const b of golden.batches) worst = Math.min(worst, compare(q.embedTokens(rows(b)), b.f64, golden.dim).minCos);
  assert.ok(worst >= 0.995 && worst < 0.99999, `Q8: worst cosine ${worst}`);
  // a config.json of another family beside the .apr is refused
  const bert = json({ ...config, model_type: 'bert', architectures: ['BertModel'], type_vocab_size: 2 });
  assert.throws(() => rt.loadEncoder({ 'model.apr': f32, 'config.json': bert, ...tok }),
    (e) => e instanceof MlrtError && e.code === 'BAD_HEADER' && /architecture 'mpnet' but config\.json's model_type is bert/.test(e.message));
  for (const e of [folder, a, withConfig, q]) e.dispose();
});
