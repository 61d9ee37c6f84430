// The BERT family's other members, each read from its own files and checked against a forward written
// in plain torch from Hugging Face's definitions (float64 reference and float32), on random weights:
// - MPNet (all-mpnet-base-v2's MPNetModel): no token types, positions counted from 2 over the ids that
//   are not <pad>, and a relative position bias (32 buckets, one table for every layer);
//   tests/mpnet/, written by tests/gen/mpnet.py;
// - DistilBERT (msmarco-distilbert-base-v4's DistilBertModel): its own config keys and tensor names, no
//   token types; tests/distilbert/, written by tests/gen/distilbert.py.
// Tokenization is checked against the Rust tokenizers (npm) on each folder's tokenizer.json.
import { test } from 'node:test';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import assert from 'node:assert/strict';
import { assertSameBits, safetensors } from './helpers.mjs';
import { compare as compareFlat } from '../tools/encoder/goldens.mjs';

const { createRuntime, MlrtError } = await import('../wasm/mlrt.mjs');
const { Tokenizer } = await import('tokenizers');
const { encoderToApr } = await import('../tools/apr/encoder.mjs');
const te = new TextEncoder(), td = new TextDecoder();
const rt = await createRuntime({ relaxed: false });
const scalar = await createRuntime({ simd: false });
const haveThreads = existsSync(new URL('../wasm/mlrt-threads.wasm', import.meta.url));
const json = (o) => te.encode(JSON.stringify(o));

function folder(dir, prefix = '') {
  const files = {};
  for (const name of readdirSync(dir)) {
    const p = new URL(name, dir);
    if (statSync(p).isDirectory()) Object.assign(files, folder(new URL(name + '/', dir), prefix + name + '/'));
    else files[prefix + name] = new Uint8Array(readFileSync(p));
  }
  return files;
}
// The SafeTensors file's { header, data }, and back.
function tensorsOf(bytes) {
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
  return { header: JSON.parse(td.decode(bytes.subarray(8, 8 + n))), data: bytes.subarray(8 + n) };
}
// The folder with tensors renamed (map: old -> new name, or null: out of the model's names; SafeTensors
// allows no hole in the data, so a tensor is never simply dropped).
function renamed(files, map) {
  const { header, data } = tensorsOf(files['model.safetensors']);
  const h = {};
  for (const [k, v] of Object.entries(header)) h[k in map ? map[k] ?? `dropped.${k}` : k] = v;
  return { ...files, 'model.safetensors': safetensors(h, data) };
}
// the goldens' comparison (max |Δ|, smallest cosine; NaN when any value is), the reference as rows of floats
const compare = (got, want, dim) => compareFlat(got, Float64Array.from(want.flat()), dim);
const rows = (b) => ({ ids: b.ids, attentionMask: b.mask });

const FAMILIES = {
  mpnet: { dir: 'mpnet', arch: 'MPNetModel', prefix: 'mpnet.', sep: 2, positions: 130, maxLength: 128, apr: 'mpnet',
    malformed: (withConfig, renamed1) => [
      [renamed1({ 'encoder.relative_attention_bias.weight': null }), 'NOT_A_MODEL', /encoder\.relative_attention_bias\.weight' is missing/],
      [withConfig({ relative_attention_num_buckets: 16 }), 'BAD_DIMENSIONS', /relative_attention_num_buckets is 16; it must be in 32\.\./],
      [withConfig({ relative_attention_num_buckets: 64 }), 'BAD_DIMENSIONS', /relative_attention_bias\.weight' has 2 dimensions \[32, 4\.\.\.\]; the config gives \[64, 4\]/],
      [withConfig({ num_attention_heads: 8 }), 'BAD_DIMENSIONS', /relative_attention_bias\.weight' has 2 dimensions \[32, 4\.\.\.\]; the config gives \[32, 8\]/],
      [withConfig({ max_position_embeddings: 2 }), 'BAD_DIMENSIONS', /MPNet needs at least 3/],
      [withConfig({ architectures: ['BertModel'] }), 'UNSUPPORTED', /'BertModel' is not a model of model_type 'mpnet' \(MPNet\.\.\.\)/],
      [withConfig({ hidden_act: 'relu' }), 'UNSUPPORTED', /hidden_act 'relu'/],
      [renamed1({ 'encoder.layer.1.attention.attn.o.weight': 'encoder.layer.1.attention.output.dense.weight' }), 'NOT_A_MODEL',
        /encoder\.layer\.1\.attention\.attn\.o\.weight' is missing/],
      [renamed1({ 'encoder.layer.0.attention.LayerNorm.bias': null }), 'NOT_A_MODEL', /encoder\.layer\.0\.attention\.LayerNorm\.bias' is missing/],
    ] },
  distilbert: { dir: 'distilbert', arch: 'DistilBertModel', prefix: 'distilbert.', sep: 3, positions: 128, maxLength: 128, apr: 'distilbert',
    malformed: (withConfig, renamed1) => [
      [withConfig({ activation: 'gelu_new' }), 'UNSUPPORTED', /activation 'gelu_new': only "gelu"/],
      [withConfig({ dim: 64 }), 'BAD_DIMENSIONS', /word_embeddings\.weight' has 2 dimensions \[1075, 32\.\.\.\]; the config gives \[1075, 64\]/],
      [withConfig({ hidden_dim: 48 }), 'BAD_DIMENSIONS', /transformer\.layer\.0\.ffn\.lin1\.weight' has 2 dimensions/],
      [withConfig({ n_layers: 3 }), 'NOT_A_MODEL', /transformer\.layer\.2\.attention\.q_lin\.weight' is missing/],
      [withConfig({ n_heads: 5 }), 'BAD_DIMENSIONS', /hidden_size 32 is not a multiple of num_attention_heads 5/],
      [withConfig({ architectures: ['BertModel'] }), 'UNSUPPORTED', /'BertModel' is not a model of model_type 'distilbert'/],
      [renamed1({ 'transformer.layer.1.sa_layer_norm.weight': null }), 'NOT_A_MODEL', /transformer\.layer\.1\.sa_layer_norm\.weight' is missing/],
      [renamed1({ 'transformer.layer.0.ffn.lin2.bias': null }), 'NOT_A_MODEL', /transformer\.layer\.0\.ffn\.lin2\.bias' is missing/],
    ] },
};

for (const [name, fam] of Object.entries(FAMILIES)) {
  const FILES = folder(new URL(`./${fam.dir}/tiny/`, import.meta.url));
  const golden = JSON.parse(readFileSync(new URL(`./${fam.dir}/goldens.json`, import.meta.url), 'utf8'));
  const config = JSON.parse(td.decode(FILES['config.json']));
  const withConfig = (patch) => ({ ...FILES, 'config.json': json({ ...config, ...patch }) });
  const texts = golden.batches.filter((b) => b.texts);

  test(`${name}: loads as an encoder; info says what the files are`, () => {
    const enc = rt.loadEncoder(FILES);
    assert.equal(enc.info.architecture, fam.arch);
    assert.equal(enc.info.dim, 32);
    assert.equal(enc.info.hiddenSize, 32);
    assert.equal(enc.info.layers, 2);
    assert.equal(enc.info.heads, 4);
    assert.equal(enc.info.ffn, 64);
    assert.equal(enc.info.typeVocabSize, 0);
    assert.equal(enc.info.maxPositions, fam.positions);
    assert.equal(enc.info.maxLength, fam.maxLength);
    assert.deepEqual([enc.info.pooling, enc.info.normalize], ['mean', true]);
    enc.dispose();
  });

  test(`${name}: token ids give the float64 reference within 1e-5 (single rows, padded and left-padded batches)`, () => {
    const enc = rt.loadEncoder(FILES);
    let n = 0;
    for (const b of golden.batches) {
      const c = compare(enc.embedTokens(rows(b)), b.f64, golden.dim);
      assert.ok(c.maxAbs <= 1e-5 && c.minCos >= 0.99999, `${b.name}: max |Δ| ${c.maxAbs}, cos ${c.minCos}`);
      n += b.ids.length;
    }
    assert.ok(n >= 20 && golden.batches.some((b) => b.name === 'left'), `${n} rows`);
    enc.dispose();
  });

  test(`${name}: texts tokenize as the Rust tokenizers do and embed as the reference`, async () => {
    const enc = rt.loadEncoder(FILES);
    const oracle = Tokenizer.fromString(td.decode(FILES['tokenizer.json']));
    assert.ok(texts.length >= 8);
    for (const b of texts) {
      const want = (await oracle.encode(b.texts[0])).getIds();
      const cut = want.length > 128 ? [...want.slice(0, 127), fam.sep] : want; // max_seq_length 128, the closing token kept
      assert.deepEqual(Array.from(enc.tokenizer.encode(b.texts[0], { maxLength: 128 }).ids), cut, b.texts[0]);
      assert.deepEqual(cut, b.ids[0], `${b.name}: the goldens' ids`);
      const c = compare(enc.embed(b.texts[0]), b.f64, golden.dim);
      assert.ok(c.maxAbs <= 1e-5 && c.minCos >= 0.99999, `${b.name}: max |Δ| ${c.maxAbs}`);
    }
    enc.dispose();
  });

  test(`${name}: a text gives the same bits alone as in a batch, on SIMD128, scalar and 2 threads`, async () => {
    const a = rt.loadEncoder(FILES), s = scalar.loadEncoder(FILES);
    const list = texts.map((b) => b.texts[0]);
    const all = a.embed(list);
    list.forEach((t, i) => assertSameBits(assert, a.embed(t), all.subarray(32 * i, 32 * i + 32), t));
    assertSameBits(assert, s.embed(list), all, 'scalar');
    if (haveThreads) {
      const two = await createRuntime({ threads: 2 }), t = two.loadEncoder(FILES);
      assertSameBits(assert, t.embed([...list, ...list]), a.embed([...list, ...list]), '2 threads');
      t.dispose();
    }
    a.dispose(), s.dispose();
  });

  test(`${name}: malformed folders are refused with what and where`, () => {
    for (const [files, code, re] of fam.malformed(withConfig, (map) => renamed(FILES, map)))
      assert.throws(() => rt.loadEncoder(files), (e) => e instanceof MlrtError && e.code === code && re.test(e.message), `${code} ${re}`);
    assert.throws(() => rt.loadEncoder(withConfig({ model_type: 'roberta' })),
      (e) => e.code === 'UNSUPPORTED' && /only "bert", "mpnet" and "distilbert"/.test(e.message));
    // config.json of BERT over this family's tensors: BERT's names are missing
    assert.throws(() => rt.loadEncoder(withConfig({ model_type: 'bert', architectures: ['BertModel'], type_vocab_size: 2, hidden_size: 32,
      num_hidden_layers: 2, num_attention_heads: 4, intermediate_size: 64 })),
    (e) => e.code === 'NOT_A_MODEL' && /embeddings\.token_type_embeddings\.weight' is missing/.test(e.message));
  });

  test(`${name}: tensors under the '${fam.prefix}' prefix (task models' files) load the same`, () => {
    const { header } = tensorsOf(FILES['model.safetensors']);
    const map = Object.fromEntries(Object.keys(header).filter((k) => k !== '__metadata__').map((k) => [k, fam.prefix + k]));
    const pre = rt.loadEncoder(renamed(FILES, map)), plain = rt.loadEncoder(FILES);
    assert.equal(pre.info.tensorPrefix, fam.prefix);
    const b = golden.batches.find((x) => x.name === 'padded');
    assertSameBits(assert, pre.embedTokens(rows(b)), plain.embedTokens(rows(b)), fam.prefix);
    pre.dispose(), plain.dispose();
  });

  test(`${name}: mlrt convert to .apr (f32: the folder's bits; Q8: cosine >= 0.995 to the reference), alone or with config.json`, () => {
    const src = { 'config.json': FILES['config.json'], 'model.safetensors': FILES['model.safetensors'] };
    const f32 = encoderToApr(src).bytes, q8 = encoderToApr(src, { quantize: 'q8', embeddings: 'q8' });
    assert.equal(q8.architecture, fam.apr);
    assert.ok(q8.quantized >= 13, `${q8.quantized} tensors as q8`);
    const dir = rt.loadEncoder(FILES), tok = { 'tokenizer.json': FILES['tokenizer.json'] };
    const a = rt.loadEncoder({ 'model.apr': f32, ...tok }); // the metadata alone: the family and its sizes
    assert.deepEqual([a.info.architecture, a.info.typeVocabSize], [fam.arch, 0]);
    for (const b of golden.batches) assertSameBits(assert, a.embedTokens(rows(b)), dir.embedTokens(rows(b)), `f32 .apr ${b.name}`);
    const beside = rt.loadEncoder({ 'model.apr': f32, 'config.json': FILES['config.json'], ...tok });
    assertSameBits(assert, beside.embed('A man is eating food.'), dir.embed('A man is eating food.'), 'f32 .apr + config.json');
    const q = rt.loadEncoder({ 'model.apr': q8.bytes, ...tok });
    assert.equal(q.info.dtype, 'q8');
    let worst = 1;
    for (const b of golden.batches) worst = Math.min(worst, compare(q.embedTokens(rows(b)), b.f64, golden.dim).minCos);
    assert.ok(worst >= 0.995 && worst < 0.99999, `Q8: worst cosine ${worst}`);
    const bert = json({ model_type: 'bert', architectures: ['BertModel'], hidden_size: 32, num_hidden_layers: 2, num_attention_heads: 4,
      intermediate_size: 64, vocab_size: config.vocab_size, max_position_embeddings: fam.positions, type_vocab_size: 2 });
    assert.throws(() => rt.loadEncoder({ 'model.apr': f32, 'config.json': bert, ...tok }),
      (e) => e instanceof MlrtError && e.code === 'BAD_HEADER' && new RegExp(`architecture '${fam.apr}' but config\\.json's model_type is bert`).test(e.message));
    for (const e of [dir, a, beside, q]) e.dispose();
  });

  if (name === 'mpnet') {
    test('mpnet: the position bias and the positions matter; positions past the table are refused', () => {
      const { header, data } = tensorsOf(FILES['model.safetensors']);
      const t = header['encoder.relative_attention_bias.weight'], d = data.slice();
      d.fill(0, t.data_offsets[0], t.data_offsets[1]); // the table zeroed: far from the reference
      const flat = rt.loadEncoder({ ...FILES, 'model.safetensors': safetensors(header, d) });
      const long = golden.batches.find((b) => b.name === 'single-128');
      assert.ok(compare(flat.embedTokens(rows(long)), long.f64, 32).maxAbs > 1e-3);
      flat.dispose();
      const inner = golden.batches.find((b) => b.name === 'inner_pad'); // a <pad> id inside a text takes position 1
      assert.ok(inner.ids.some((r, i) => r.some((id, j) => id === 1 && inner.mask[i][j])));
      const enc = rt.loadEncoder(FILES);
      assert.throws(() => enc.embedTokens({ ids: [[0, ...Array(128).fill(100), 2]] }), // 130 ids: positions up to 131
        (e) => e.code === 'INVALID_ARGUMENT' && /would take position 130; the model has 130/.test(e.message));
      assert.equal(enc.embedTokens({ ids: [[0, ...Array(126).fill(100), 2]] }).length, 32); // positions 2..129
      enc.dispose();
    });
  } else {
    test('distilbert: a left-padded row keeps its positions in the row, as DistilBertModel (not the bits of the row alone)', () => {
      const enc = rt.loadEncoder(FILES), left = golden.batches.find((b) => b.name === 'left');
      const got = enc.embedTokens(rows(left));
      const alone = enc.embedTokens({ ids: [left.ids[0].filter((_, j) => left.mask[0][j])] });
      assert.ok(compare(alone, [left.f64[0]], 32).maxAbs > 1e-3, 'the row alone differs from HF\'s left-padded row');
      assert.ok(compare(got, left.f64, 32).maxAbs <= 1e-5);
      enc.dispose();
    });
  }
}
