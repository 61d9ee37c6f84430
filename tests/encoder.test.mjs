// The sentence encoder's JavaScript API (issue 21): rt.loadEncoder -> Encoder, against the torch goldens of
// tests/encoder/ (tests/gen/encoder.py: a float64 forward written from the spec) on random-weight BERT
// folders regenerated bit for bit from their seeds (tools/encoder/):
//   - the tiny shape (every committed case: mean / CLS, with and without Normalize, F32 / F16 / BF16),
//     all-MiniLM-L6-v2's shape (384 x 6, 512 positions) and the 12-layer bge / e5 / gte-small shape
//     (at lengths up to 64 by default; MLRT_ENCODER_FULL=1 runs its 128- and 512-token rows too);
//   - texts through the model's own tokenizer: embed(texts) gives the bits of embedTokens(the ids npm
//     `tokenizers` gave), and the goldens' values; models/wordnet/ (trained) against its goldens;
//   - both tensor namings, an .apr v2 of the same weights, batch invariance (alone, in any padded
//     batch, any batchSize), the SIMD128 and scalar builds bit for bit, relaxed SIMD within tolerance,
//     the WASI and native CLIs bit for bit (mlrt embed --output f32);
//   - the malformed classes (codes and messages), info, loadFromBytes / load refusals naming loadEncoder.
// Targets (issue 21 section 4): cosine >= 0.99999 and max |delta| <= 1e-5 against the float64 reference.
import v8 from 'node:v8';
import { test } from 'node:test';
import { createRequire } from 'node:module';
import assert from 'node:assert/strict';
import { assertSameBits, bitsEqual } from './helpers.mjs';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { goldens, wordnetGoldens, wordnetFolder, compare } from '../tools/encoder/goldens.mjs';
import { makeFolder } from '../tools/encoder/folder.mjs';
import { readSafetensors, writeSafetensors, tensorBytes, clearWeightCache } from '../tools/encoder/weights.mjs';
import { tokenize } from '../tools/encoder/inputs.mjs';
import { writeAprV2 } from '../tools/apr/writer.mjs';

v8.setFlagsFromString('--experimental-wasm-relaxed-simd'); // before any wasm is compiled
const { createRuntime, MlrtError } = await import('../wasm/mlrt.mjs');

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const FULL = process.env.MLRT_ENCODER_FULL === '1';
const SHORT = 64; // the 12-layer shape's longest row in the default run
const G = goldens();
const caseOf = (name) => G.cases.find((c) => c.name === name);
// all-MiniLM-L6-v2's folder, drawn once (about 10 s) for the tests that use it
let minilm = null;
const minilmFiles = async () => (minilm ??= await caseOf('minilm-f32-mean-norm').files());
const te = new TextEncoder(), td = new TextDecoder();
const rt = await createRuntime({ relaxed: false });
const scalar = await createRuntime({ simd: false });
const relaxed = await createRuntime({ relaxed: true });

const sameBits = (got, want, what) => assertSameBits(assert, got, want, what);
function close(got, c, first, end, what, { cos = 0.99999, abs = 1e-5 } = {}) {
  const r = compare(got, c.f64, c.dim, first, end);
  assert.ok(r.minCos >= cos && r.maxAbs <= abs, `${what}: minCos ${r.minCos}, maxAbs ${r.maxAbs} (targets ${cos}, ${abs})`);
  return r;
}
const subset = (a, rows) => rows.map((r) => a[r]);
const longest = (ids) => Math.max(...ids.map((r) => r.length));

// A golden case's batches run through enc: ids via embedTokens (padded batches as the reference ran
// them), texts via embed (and the same rows' ids via embedTokens: the same bits). maxLen: rows longer
// than this are left out (their batch is run without them: batch invariance makes that the same).
function checkCase(enc, c, { maxLen = Infinity, skipText = () => false } = {}) {
  const worst = { maxAbs: 0, minCos: 1, rows: 0 };
  const note = (r, n) => { worst.maxAbs = Math.max(worst.maxAbs, r.maxAbs); worst.minCos = Math.min(worst.minCos, r.minCos); worst.rows += n; };
  for (const b of c.batches) {
    const keep = b.ids.map((ids, i) => (ids.length <= maxLen && !(b.texts && skipText(b.texts[i])) ? i : -1)).filter((i) => i >= 0);
    if (!keep.length) continue;
    const ids = subset(b.ids, keep), typeIds = b.typeIds && subset(b.typeIds, keep);
    const fromIds = enc.embedTokens({ ids, typeIds: typeIds ?? undefined });
    assert.equal(fromIds.length, keep.length * c.dim);
    for (let k = 0; k < keep.length; k++) {
      const row = b.first + keep[k];
      note(close(fromIds.subarray(k * c.dim, (k + 1) * c.dim), c, row, row + 1, `${c.name} ${b.name} row ${keep[k]} (ids)`), 1);
    }
    if (b.texts) {
      const texts = subset(b.texts, keep);
      sameBits(enc.embed(texts), fromIds, `${c.name} ${b.name}: embed(texts) vs embedTokens(the ids of npm tokenizers)`);
    }
  }
  return worst;
}

// ------------------------------------------------------------------ the goldens

test('tiny shape: every committed case (mean / CLS, Normalize or not, F32 / F16 / BF16) within 1e-5 of torch float64', async () => {
  const tiny = G.cases.filter((c) => c.shape === 'tiny');
  assert.equal(tiny.length, 7);
  for (const c of tiny) {
    const enc = rt.loadEncoder(await c.files());
    assert.equal(enc.info.dim, c.dim);
    assert.equal(enc.info.pooling, c.folder.pooling);
    assert.equal(enc.info.normalize, c.folder.normalize);
    assert.equal(enc.info.dtype, c.folder.dtype.toLowerCase());
    const w = checkCase(enc, c);
    assert.equal(w.rows, c.rows, `${c.name}: every row checked`);
    enc.free();
  }
});

test('normalize: unit rows with Normalize, not without; CLS pooling differs from mean', async () => {
  const files = await makeFolder('tiny');
  const ids = caseOf('tiny-f32-mean-norm').batches[5].ids; // padded-mixed
  const norm = (v, d, r) => Math.hypot(...v.subarray(r * d, (r + 1) * d));
  const a = rt.loadEncoder(files), b = rt.loadEncoder(await makeFolder('tiny', { normalize: false }));
  const c = rt.loadEncoder(await makeFolder('tiny', { pooling: 'cls' }));
  const va = a.embedTokens({ ids }), vb = b.embedTokens({ ids }), vc = c.embedTokens({ ids });
  for (let r = 0; r < ids.length; r++) {
    assert.ok(Math.abs(norm(va, 32, r) - 1) < 1e-6);
    assert.ok(Math.abs(norm(vb, 32, r) - 1) > 1e-3, `raw row ${r} has norm ${norm(vb, 32, r)}`);
    assert.ok(Math.abs(norm(vc, 32, r) - 1) < 1e-6);
    const cos = va.subarray(r * 32, r * 32 + 32).reduce((s, x, k) => s + x * vc[r * 32 + k], 0);
    if (ids[r].length > 1) assert.ok(cos < 0.9999, `row ${r}: CLS and mean pooling agree (${cos})`);
  }
  for (const e of [a, b, c]) e.free();
});

test('all-MiniLM-L6-v2 shape: F32 mean+Normalize and CLS, F16, BF16, up to 512 tokens, and its texts', async () => {
  const names = ['minilm-f32-mean-norm', 'minilm-f32-mean-norm-ids', 'minilm-f32-cls-raw-ids', 'minilm-f16-mean-norm-ids', 'minilm-bf16-mean-norm-ids'];
  for (const name of names) {
    const c = caseOf(name);
    const enc = rt.loadEncoder(name === 'minilm-f32-mean-norm' ? await minilmFiles() : await c.files());
    if (name === 'minilm-f32-mean-norm') {
      assert.equal(enc.info.maxLength, 256); // sentence_bert_config.json's max_seq_length
      assert.equal(enc.info.layers, 6);
      assert.equal(enc.info.heads, 12);
    }
    const w = checkCase(enc, c);
    assert.equal(w.rows, c.rows);
    enc.free();
  }
  clearWeightCache();
});

test(`12-layer bge / e5 / gte-small shape: CLS + Normalize (lowercased texts), mean, F16 without Normalize${FULL ? '' : ` (rows up to ${SHORT} tokens)`}`, async () => {
  for (const name of ['bge-f32-cls-norm', 'e5-f32-mean-norm', 'gte-f16-mean-raw']) {
    const c = caseOf(name);
    const enc = rt.loadEncoder(await c.files());
    assert.equal(enc.info.layers, 12);
    if (name.startsWith('bge')) assert.equal(enc.info.lowerCase, true);
    const w = checkCase(enc, c, { maxLen: FULL ? Infinity : SHORT });
    assert.ok(w.rows >= (FULL ? c.rows : 8), `${name}: ${w.rows} rows checked`);
    enc.free();
  }
  clearWeightCache();
});

test('do_lower_case lowers a capital sigma as Python does (Unicode\'s Final_Sigma: after a cased letter, not before one)', async () => {
  const enc = rt.loadEncoder(await makeFolder('tiny', { doLowerCase: true }));
  assert.equal(enc.info.lowerCase, true);
  // around the sigma: cased letters (Greek, Latin, Cherokee), case-ignorables to skip (apostrophe, full stop,
  // colon, combining acute, soft hyphen, a modifier letter that is both cased and ignorable), and neither
  const texts = ['ΣΟΦΟΣ', 'ΟΔΥΣΣΕΥΣ ήρθε', 'Σ', 'ΑΣ', 'αΣ', 'ΑΣΑ', "Α'Σ", "ΑΣ'", 'Α\u0301Σ', 'ΑΣ\u0301', 'ΑΣ\u0301Β', 'ΑΣ.Β',
    'ΑΣ:', 'ΑΣ\u00adΒ', 'ΑΣ\u00ad', '\u02b0Σ', 'ΑΣ\u02b0', 'Α\u02b0Σ', 'AΣ', 'aΣ1', '1Σ', 'ΑΣ-Β', 'ΑΣ Β', 'Ꭰ\u0301Σ',
    'ΟΔΥΣΣΕΥΣ, ΣΑΣ! ΑΣ\u0301\u0301.', 'ΑΣ\u0301Σ'];
  // and a sweep: every 61st code point of the first three planes before and after the sigma
  for (let c = 0x20; c < 0x30000; c += 61) {
    if (c >= 0xd800 && c <= 0xdfff) continue;
    const x = String.fromCodePoint(c);
    texts.push(`Α${x}Σ`, `ΑΣ${x}`, `${x}Σ`);
  }
  const want = await tokenize('tiny', texts.map((t) => t.toLowerCase()), enc.info.maxLength);
  const perChar = await tokenize('tiny', texts.map((t) => [...t].map((ch) => ch.toLowerCase()).join('')), enc.info.maxLength);
  const differ = want.filter((ids, i) => ids.join() !== perChar[i].join()).length;
  assert.ok(differ >= 20, `the test sees Final_Sigma: ${differ} of ${texts.length} texts tokenize otherwise without it`);
  for (let i = 0; i < texts.length; i += 64) {
    const got = enc.embed(texts.slice(i, i + 64));
    sameBits(got, enc.embedTokens({ ids: want.slice(i, i + 64) }), `texts ${i}..${Math.min(i + 64, texts.length) - 1} lowercased with Final_Sigma`);
  }
  enc.free();
});

test('without max_seq_length, texts are cut at min(max_position_embeddings, tokenizer_config.json model_max_length), as sentence-transformers does', async () => {
  const base = await makeFolder('tiny', { modules: false }); // 64 positions
  const withConfig = (files, patch, name = 'tokenizer_config.json') =>
    ({ ...files, [name]: te.encode(JSON.stringify({ ...JSON.parse(td.decode(files[name])), ...patch })) });
  const texts = ['word '.repeat(100), 'a short one', 'x y z '.repeat(5)];
  const check = async (files, want, what) => {
    const enc = rt.loadEncoder(files);
    assert.equal(enc.info.maxLength, want, what);
    const ids = await tokenize('tiny', texts, want);
    assert.equal(longest(ids), want, `${what}: the first text is cut`);
    sameBits(enc.embed(texts), enc.embedTokens({ ids }), what);
    enc.free();
  };
  await check(withConfig(base, { model_max_length: 8 }), 8, 'model_max_length 8');
  await check(withConfig(base, { model_max_length: 1e30 }), 64, "transformers' 1e30: the positions");
  const literal = td.decode(base['tokenizer_config.json']).replace(/"model_max_length": \d+/, '"model_max_length": 1000000000000000019884624838656');
  assert.ok(literal.includes('19884624838656'));
  await check({ ...base, 'tokenizer_config.json': te.encode(literal) }, 64, 'the same as transformers writes it: the positions');
  await check(withConfig(base, { model_max_length: null }), 64, 'null: the positions');
  const { 'tokenizer_config.json': _, ...noConfig } = base;
  await check(noConfig, 64, 'no tokenizer_config.json: the positions');
  // sentence_bert_config.json's max_seq_length wins; its null falls back to model_max_length
  const st = await makeFolder('tiny', { modules: true, maxSeqLength: 12 });
  await check(withConfig(st, { model_max_length: 8 }), 12, 'max_seq_length 12 over model_max_length 8');
  await check(withConfig(withConfig(st, { max_seq_length: null }, 'sentence_bert_config.json'), { model_max_length: 8 }), 8, 'max_seq_length null');
  const bad = (patch, code, re) => assert.throws(() => rt.loadEncoder(withConfig(base, patch)),
    (e) => e instanceof MlrtError && e.code === code && /tokenizer_config\.json/.test(e.message) && re.test(e.message), `${JSON.stringify(patch)}: ${re.source}`);
  bad({ model_max_length: '256' }, 'BAD_HEADER', /model_max_length: expected a number, got string/);
  bad({ model_max_length: 0 }, 'BAD_DIMENSIONS', /model_max_length: expected a whole number from 1/);
  bad({ model_max_length: 7.5 }, 'BAD_DIMENSIONS', /model_max_length: expected a whole number from 1/);
});

test('texts are cut on tokenizer_config.json\'s truncation_side (right by default), not tokenizer.json\'s direction, as transformers does', async () => {
  const { Tokenizer } = createRequire(import.meta.url)('tokenizers');
  const base = await makeFolder('tiny', { maxSeqLength: 12 });
  const patch = (files, name, f) => ({ ...files, [name]: te.encode(JSON.stringify(f(JSON.parse(td.decode(files[name]))))) });
  const texts = ['the first words of a text long enough to be cut and its last words here', 'short', 'x '.repeat(40) + 'end'];
  const oracle = async (direction) => { // npm tokenizers, cut at 12 on that side
    const t = Tokenizer.fromString(td.decode(base['tokenizer.json']));
    t.setTruncation(12, { direction });
    t.disablePadding();
    return Promise.all(texts.map(async (x) => Array.from((await t.encode(x)).getIds())));
  };
  const right = await oracle('right'), left = await oracle('left');
  assert.notDeepEqual(right[0], left[0], 'the cases cut differently');
  const leftInFile = patch(base, 'tokenizer.json', (j) => ({ ...j, truncation: { ...j.truncation, direction: 'Left' } }));
  for (const [what, files, ids] of [
    ['the default', base, right],
    ["tokenizer.json's Left direction (transformers overrides it)", leftInFile, right],
    ['truncation_side "left"', patch(base, 'tokenizer_config.json', (j) => ({ ...j, truncation_side: 'left' })), left],
    ['truncation_side "right" over a Left direction', patch(leftInFile, 'tokenizer_config.json', (j) => ({ ...j, truncation_side: 'right' })), right],
  ]) {
    const enc = rt.loadEncoder(files);
    assert.equal(enc.info.truncationSide, ids === left ? 'left' : 'right', what);
    sameBits(enc.embed(texts), enc.embedTokens({ ids }), what);
    enc.free();
  }
  // enc.tokenizer is the file's (all-MiniLM-L6-v2's pads to 128); the documented options give embed's ids
  const padded = rt.loadEncoder(patch(base, 'tokenizer.json', (j) => ({ ...j, padding: { strategy: { Fixed: 128 }, direction: 'Right',
    pad_to_multiple_of: null, pad_id: 0, pad_type_id: 0, pad_token: '[PAD]' }, truncation: { ...j.truncation, max_length: 128 } })));
  assert.equal(padded.tokenizer.encode('hello world').ids.length, 128, "the file's padding");
  const asEmbed = texts.map((x) => Array.from(padded.tokenizer.encode(x, { maxLength: padded.info.maxLength, truncation: true, padding: false }).ids));
  assert.deepEqual(asEmbed, right, 'the documented options give the ids embed uses');
  sameBits(padded.embed(texts), padded.embedTokens({ ids: asEmbed }), 'and its bits');
  padded.free();
  assert.throws(() => rt.loadEncoder(patch(base, 'tokenizer_config.json', (j) => ({ ...j, truncation_side: 'middle' }))),
    (e) => e instanceof MlrtError && e.code === 'BAD_HEADER' && /tokenizer_config\.json.*truncation_side: expected "right" or "left", got "middle"/.test(e.message));
});

test('models/wordnet/ (trained): its held-out queries against the torch goldens, ids as recorded', () => {
  const g = wordnetGoldens();
  const enc = rt.loadEncoder(wordnetFolder());
  assert.equal(enc.info.dim, g.dim);
  assert.equal(enc.info.layers, 4);
  const texts = g.queries.map((q) => q.text);
  const v = enc.embed(texts);
  for (const [i, q] of g.queries.entries()) {
    assert.deepEqual([...enc.tokenizer.encode(q.text, { maxLength: enc.info.maxLength, truncation: true }).ids], q.ids, `query ${i}: ids`);
    const r = compare(v.subarray(i * g.dim, (i + 1) * g.dim), q.reference, g.dim);
    assert.ok(r.minCos >= 0.99999 && r.maxAbs <= 1e-5, `query ${i}: ${JSON.stringify(r)}`);
  }
  enc.free();
});

test('texts: embed tokenizes as npm `tokenizers` does (fresh texts, truncation at the model maximum)', async () => {
  const files = await makeFolder('tiny');
  const enc = rt.loadEncoder(files);
  const texts = ['Héllo, wörld!', 'unaffable naïve café', '日本語のテキスト', 'a '.repeat(200), '', '  spaces  around  ', 'emoji 😀 and [MASK]'];
  const ids = await tokenize('tiny', texts, enc.info.maxLength);
  assert.equal(ids[3].length, 64);
  sameBits(enc.embed(texts), enc.embedTokens({ ids }), 'embed vs embedTokens(npm tokenizers ids)');
  enc.free();
});

// ------------------------------------------------------------------ files: namings, .apr, dtypes

test('both tensor namings (bert.-prefixed with a task head) give the same bits; unused tensors are listed', async () => {
  const plain = rt.loadEncoder(await makeFolder('tiny'));
  const prefixed = rt.loadEncoder(await makeFolder('tiny', { prefix: true }));
  assert.equal(plain.info.tensorPrefix, '');
  assert.equal(prefixed.info.tensorPrefix, 'bert.');
  assert.deepEqual([...plain.info.unusedTensors].sort(), ['embeddings.position_ids', 'pooler.dense.bias', 'pooler.dense.weight']);
  assert.ok(prefixed.info.unusedTensors.includes('cls.predictions.bias'));
  assert.ok(prefixed.info.unusedTensors.includes('bert.pooler.dense.weight'));
  const texts = G.manifest.inputs['texts:tiny'].texts.slice(0, 16);
  sameBits(prefixed.embed(texts), plain.embed(texts), 'bert. names vs plain names');
  plain.free();
  prefixed.free();
});

test('an .apr v2 of the same weights (with the tokenizer and module files beside it) gives the same bits', async () => {
  const files = await makeFolder('tiny');
  const st = readSafetensors(files['model.safetensors']);
  const tensors = [...st].filter(([, t]) => t.dtype === 'F32').map(([name, t]) => ({ name, dtype: 'F32', shape: t.dims, data: tensorBytes(t.data, 'F32') }));
  const apr = writeAprV2({
    metadata: { model_type: 'Bert', architecture: 'bert', hf_architecture: 'BertModel', hidden_size: 32, num_layers: 2, num_heads: 4,
      num_kv_heads: 4, vocab_size: 30522, intermediate_size: 64, max_position_embeddings: 64, rms_norm_eps: 1e-12 },
    tensors,
  });
  const { 'model.safetensors': _, 'config.json': __, ...rest } = files;
  const a = rt.loadEncoder({ 'model.apr': apr, ...rest }), s = rt.loadEncoder(files);
  assert.equal(a.info.format, 'apr');
  const texts = ['a man is eating food', 'the new movie is awesome', 'x'];
  sameBits(a.embed(texts), s.embed(texts), '.apr vs safetensors');
  // without modules.json an .apr is mean + Normalize (apr embed), SafeTensors mean alone (sentence-transformers)
  const bare = rt.loadEncoder({ 'model.apr': apr, 'tokenizer.json': files['tokenizer.json'] });
  assert.equal(bare.info.normalize, true);
  assert.throws(() => rt.loadFromBytes(apr), (e) => e instanceof MlrtError && /loadEncoder/.test(e.message), 'loadFromBytes of an encoder .apr names loadEncoder');
  for (const e of [a, s, bare]) e.free();
});

test('an .apr of mlrt convert records its folder\'s sentence-transformers settings (mlrt_embedding); a bad record is refused', async () => {
  const files = await makeFolder('tiny', { pooling: 'cls', normalize: false, maxSeqLength: 12, doLowerCase: true });
  const st = readSafetensors(files['model.safetensors']);
  const tensors = [...st].filter(([, t]) => t.dtype === 'F32').map(([name, t]) => ({ name, dtype: 'F32', shape: t.dims, data: tensorBytes(t.data, 'F32') }));
  const meta = { model_type: 'Bert', architecture: 'bert', hidden_size: 32, num_layers: 2, num_heads: 4, vocab_size: 30522, intermediate_size: 64,
    max_position_embeddings: 64, rms_norm_eps: 1e-12 };
  const aprWith = (record) => writeAprV2({ metadata: { ...meta, mlrt_embedding: record }, tensors });
  const tok = { 'tokenizer.json': files['tokenizer.json'] };
  const texts = ['a man is eating food', 'the new movie is awesome and this text runs past twelve tokens for sure', 'x'];
  const folder = rt.loadEncoder(files);
  const alone = rt.loadEncoder({ 'model.apr': aprWith({ pooling: 'cls', normalize: false, max_seq_length: 12, do_lower_case: true }), ...tok });
  assert.deepEqual([alone.info.pooling, alone.info.normalize, alone.info.maxLength, alone.info.lowerCase], ['cls', false, 12, true]);
  sameBits(alone.embed(texts), folder.embed(texts), 'the record stands in for the module files');
  const several = rt.loadEncoder({ 'model.apr': aprWith({ pooling: 'cls+mean+lasttoken', normalize: true }), ...tok });
  assert.deepEqual([several.info.pooling, several.info.dim, several.info.normalize, several.info.maxLength], ['cls+mean+lasttoken', 96, true, 64]);
  for (const e of [folder, alone, several]) e.free();
  const bad = [
    [{ pooling: 'cls', normalize: false, max_len: 3 }, 'BAD_HEADER', /mlrt_embedding: unknown key 'max_len'/],
    [{ normalize: true }, 'BAD_HEADER', /mlrt_embedding: 'pooling' is missing/],
    [{ pooling: 'cls' }, 'BAD_HEADER', /mlrt_embedding: 'normalize' is missing/],
    [{ pooling: 'cls+', normalize: true }, 'BAD_HEADER', /pooling 'cls\+' ends with '\+'/],
    [{ pooling: 'cls+cls', normalize: true }, 'BAD_HEADER', /pooling 'cls\+cls': expected pooling modes/],
    [{ pooling: 'average', normalize: true }, 'BAD_HEADER', /pooling 'average'/],
    [{ pooling: '', normalize: true }, 'BAD_HEADER', /pooling is empty/],
    [{ pooling: 'mean', normalize: 'yes' }, 'BAD_HEADER', /normalize: expected true or false/],
    [{ pooling: 'mean', normalize: true, max_seq_length: 65 }, 'BAD_DIMENSIONS', /max_seq_length 65 is more than the 64 tokens the positions allow/],
    [{ pooling: 'mean', normalize: true, max_seq_length: 0 }, 'BAD_DIMENSIONS', /max_seq_length/],
    ['cls', 'BAD_HEADER', /mlrt_embedding: expected an object, got string/],
  ];
  for (const [record, code, re] of bad) {
    assert.throws(() => rt.loadEncoder({ 'model.apr': aprWith(record), ...tok }), (e) => e instanceof MlrtError && e.code === code && re.test(e.message),
      `${JSON.stringify(record)}: ${code} ${re}`);
  }
});

test('F16 and BF16 folders run their rounded weights (not the F32 bits), within the goldens', async () => {
  const texts = ['hello world', 'A man is eating a piece of bread.'];
  const out = {};
  for (const dtype of ['F32', 'F16', 'BF16']) {
    const enc = rt.loadEncoder(await makeFolder('tiny', { dtype }));
    assert.equal(enc.info.dtype, dtype.toLowerCase());
    out[dtype] = enc.embed(texts);
    enc.free();
  }
  assert.ok(!bitsEqual(out.F16, out.F32) && !bitsEqual(out.BF16, out.F32) && !bitsEqual(out.F16, out.BF16));
});

// ------------------------------------------------------------------ batches

test('batch invariance: a text has the same bits alone, in any batch and at any batchSize', async () => {
  const enc = rt.loadEncoder(await makeFolder('tiny'));
  const texts = G.manifest.inputs['texts:tiny'].texts;
  const all = enc.embed(texts);
  for (const batchSize of [1, 3, 7, 64]) sameBits(enc.embed(texts, { batchSize }), all, `batchSize ${batchSize}`);
  for (let i = 0; i < texts.length; i += 5) sameBits(enc.embed(texts[i]), all.subarray(i * 32, (i + 1) * 32), `text ${i} alone`);
  const rev = enc.embed([...texts].reverse());
  for (let i = 0; i < texts.length; i++) sameBits(rev.subarray((texts.length - 1 - i) * 32, (texts.length - i) * 32), all.subarray(i * 32, (i + 1) * 32), `text ${i} reversed`);
  // token ids: a row padded to any width (mask 0) gives its bits alone
  const row = enc.tokenizer.encode('the quick brown fox').ids;
  const alone = enc.embedTokens({ ids: [Array.from(row)] });
  for (const width of [row.length + 1, 40, 64]) {
    const ids = new Int32Array(2 * width), mask = new Uint8Array(2 * width);
    ids.set(row, 0); mask.fill(1, 0, row.length);
    ids.set([101, 7592, 102], width); mask.fill(1, width, width + 3);
    sameBits(enc.embedTokens({ ids, attentionMask: mask, dims: [2, width] }).subarray(0, 32), alone, `padded to ${width}`);
  }
  enc.free();
});

test('embedTokens: flat Int32Array / BigInt64Array with dims, ragged arrays, masks and type ids agree', async () => {
  const enc = rt.loadEncoder(await makeFolder('tiny'));
  const rows = [[101, 7592, 2088, 102], [101, 102]];
  const ragged = enc.embedTokens({ ids: rows });
  const flat = new Int32Array([101, 7592, 2088, 102, 101, 102, 0, 0]);
  const mask = new Uint8Array([1, 1, 1, 1, 1, 1, 0, 0]);
  sameBits(enc.embedTokens({ ids: flat, attentionMask: mask, dims: [2, 4] }), ragged, 'Int32Array + Uint8Array mask');
  sameBits(enc.embedTokens({ ids: BigInt64Array.from(flat, BigInt), attentionMask: BigInt64Array.from(mask, BigInt), dims: [2, 4] }), ragged, 'BigInt64Array');
  sameBits(enc.embedTokens({ ids: flat, attentionMask: Int32Array.from(mask), typeIds: new Int32Array(8), dims: [2, 4] }), ragged, 'Int32Array mask, zero types');
  sameBits(enc.embedTokens({ ids: rows[0] }), ragged.subarray(0, 32), 'one row of numbers');
  sameBits(enc.embedTokens({ ids: new Int32Array(rows[0]) }), ragged.subarray(0, 32), 'a flat row without dims');
  const typed = enc.embedTokens({ ids: [rows[0]], typeIds: [[0, 0, 1, 1]] });
  assert.ok(!bitsEqual(typed, ragged.subarray(0, 32)), 'type ids change the embedding');
  assert.equal(enc.embedTokens({ ids: [] }).length, 0);
  sameBits(enc.embed(['hello world', '']), ragged, 'embed of the same texts');
  enc.free();
});

test('embedTokens refuses bad ids, widths, masks and shapes with INVALID_ARGUMENT naming the place', async () => {
  const enc = rt.loadEncoder(await makeFolder('tiny'));
  const cls = rt.loadEncoder(await makeFolder('tiny', { pooling: 'cls' }));
  const bad = (e, input, re) => assert.throws(() => e.embedTokens(input), (x) => x instanceof MlrtError && x.code === 'INVALID_ARGUMENT' && re.test(x.message), re.source);
  bad(enc, { ids: [[101, 30522, 102]] }, /input_ids\[0\]\[1\] is 30522, not in 0\.\.30521/);
  bad(enc, { ids: [[101, -1]] }, /input_ids\[0\]\[1\] is -1/);
  bad(enc, { ids: [[101, 102]], typeIds: [[0, 2]] }, /token_type_ids\[0\]\[1\] is 2/);
  bad(enc, { ids: [Array(65).fill(1000)] }, /input 'input_ids' dim 1 \(sequence\) is 65; it must be 1\.\.64/);
  bad(enc, { ids: [[101, 102]], attentionMask: [[0, 0]] }, /row 0 has no token/);
  bad(cls, { ids: [[0, 101, 102]], attentionMask: [[0, 1, 1]] }, /attention_mask\[0\]\[0\] is 0 but the model pools the first token/);
  bad(enc, { ids: [[101, 1.5]] }, /ids\[0\]\[1\] = 1\.5 is not a 32-bit integer/);
  bad(enc, { ids: new Int32Array(6), dims: [2, 4] }, /dims \[2, 4\] hold 8 tokens, ids has 6/);
  bad(enc, { ids: new Float32Array(4) }, /ids must be an Int32Array or BigInt64Array/);
  bad(enc, { ids: [[101, 102]], attentionMask: [[1, 1, 1]] }, /attentionMask must have the shape of ids/);
  bad(enc, { ids: [[101, 102], [101]], typeIds: [[0, 0]] }, /typeIds has 1 rows, ids 2/);
  bad(enc, {}, /ids is required/);
  bad(enc, null, /expected \{ ids/);
  enc.free();
  cls.free();
});

test('embed refuses what is not text; batchSize is checked', async () => {
  const enc = rt.loadEncoder(await makeFolder('tiny'));
  const bad = (fn, code, re) => assert.throws(fn, (x) => x instanceof MlrtError && x.code === code && re.test(x.message), re.source);
  bad(() => enc.embed(42), 'INVALID_ARGUMENT', /expected a text/);
  bad(() => enc.embed(['ok', 7]), 'INVALID_ARGUMENT', /texts\[1\]: expected a string or UTF-8 bytes/);
  bad(() => enc.embed('a\ud800b'), 'INVALID_UTF8', /lone surrogate/);
  bad(() => enc.embed([new Uint8Array([0x61, 0xff])]), 'INVALID_UTF8', /byte 1/);
  bad(() => enc.embed('x', { batchSize: 0 }), 'INVALID_ARGUMENT', /batchSize must be an integer from 1/);
  assert.equal(enc.embed([]).length, 0);
  sameBits(enc.embed(te.encode('hello world')), enc.embed('hello world'), 'UTF-8 bytes');
  // without tokenizer files: embedTokens only
  const files = await makeFolder('tiny', { tokenizer: false, vocabTxt: false });
  const noTok = rt.loadEncoder(files);
  assert.equal(noTok.tokenizer, null);
  assert.equal(noTok.info.tokenizer, false);
  bad(() => noTok.embed('hello'), 'INVALID_ARGUMENT', /without tokenizer\.json or vocab\.txt: use embedTokens/);
  sameBits(noTok.embedTokens({ ids: [[101, 7592, 102]] }), enc.embedTokens({ ids: [[101, 7592, 102]] }), 'no tokenizer, same weights');
  // vocab.txt instead of tokenizer.json
  const { 'tokenizer.json': _, ...vocabOnly } = await makeFolder('tiny');
  const v = rt.loadEncoder(vocabOnly);
  assert.equal(v.tokenizer.info.source, 'vocab.txt');
  sameBits(v.embed('hello world'), enc.embed('hello world'), 'vocab.txt');
  for (const e of [enc, noTok, v]) e.free();
});

test('hostile arguments: holes, detached buffers, sizes past 4 GiB are refused as MlrtErrors, and the runtime goes on', async () => {
  const files = await makeFolder('tiny');
  const enc = rt.loadEncoder(files);
  const bad = (fn, code, re) => assert.throws(fn, (x) => x instanceof MlrtError && x.code === code && re.test(x.message), `${code} ${re.source}`);
  const want = enc.embed(['a', 'b', 'c']), hello = enc.embed('hello world');
  // holes in arrays are refused, never skipped (a skipped text left its end unwritten: another text's embedding)
  bad(() => enc.embed(['a', , 'c']), 'INVALID_ARGUMENT', /embed: texts\[1\]: expected a string or UTF-8 bytes/); // eslint-disable-line no-sparse-arrays
  bad(() => enc.embedTokens({ ids: [[101, , 102]] }), 'INVALID_ARGUMENT', /ids\[0\]\[1\] = undefined is not a 32-bit integer/); // eslint-disable-line no-sparse-arrays
  bad(() => enc.embedTokens({ ids: [[101, 102], , [101, 102]] }), 'INVALID_ARGUMENT', /ids\[1\] is not an array/); // eslint-disable-line no-sparse-arrays
  bad(() => enc.embedTokens({ ids: [[101, 102]], attentionMask: [[1, ]] }), 'INVALID_ARGUMENT', /attentionMask must have the shape of ids/);
  bad(() => enc.embedTokens({ ids: [[101, 102]], attentionMask: [[, 1]] }), 'INVALID_ARGUMENT', /attentionMask\[0\]\[0\] = undefined/); // eslint-disable-line no-sparse-arrays
  // bytes whose buffer was transferred away
  const moved = te.encode('hello');
  structuredClone(moved.buffer, { transfer: [moved.buffer] });
  bad(() => enc.embed(moved), 'INVALID_ARGUMENT', /detached/);
  bad(() => enc.embed([moved.buffer]), 'INVALID_ARGUMENT', /texts\[0\]: the bytes' ArrayBuffer has been detached/);
  bad(() => enc.tokenizer.encode(moved), 'INVALID_ARGUMENT', /detached/);
  bad(() => rt.loadFromBytes(moved), 'INVALID_ARGUMENT', /detached/);
  // room past what wasm32 can address (32 texts of 44.7M chars: 3 bytes a char bound 4.29e9): refused before
  // mlrt_alloc, whose 32-bit size would have wrapped to a small block
  const long = 'a'.repeat(44_739_243);
  bad(() => enc.embed(new Array(32).fill(long)), 'OUT_OF_MEMORY', /cannot allocate \d+ bytes of wasm memory \(at most 4294901760\)/);
  bad(() => enc.tokenizer.encodeBatch(new Array(32).fill(long)), 'OUT_OF_MEMORY', /cannot allocate/);
  // and everything goes on as before: the tokenizer's scratch, the encoder, a new load
  assert.deepEqual([...enc.tokenizer.encode('hello world').ids], [101, 7592, 2088, 102]);
  sameBits(enc.embed(['a', 'b', 'c']), want, 'after the refusals');
  sameBits(enc.embed('hello world'), hello, 'one text after the refusals');
  const again = rt.loadEncoder(files);
  sameBits(again.embed('hello world'), hello, 'a new load');
  again.free(), enc.free();
});

// ------------------------------------------------------------------ builds

test('SIMD128 and scalar builds give the same bits; relaxed SIMD within 1e-5 (MiniLM-shaped texts and tiny)', async () => {
  assert.equal(scalar.build.simd, false);
  assert.equal(relaxed.build.relaxed, true);
  const texts = G.manifest.inputs['texts:tiny'].texts;
  for (const files of [await makeFolder('tiny'), await makeFolder('tiny', { dtype: 'BF16', pooling: 'cls' })]) {
    const want = rt.loadEncoder(files).embed(texts);
    sameBits(scalar.loadEncoder(files).embed(texts), want, 'scalar');
    const r = compare(relaxed.loadEncoder(files).embed(texts), Float64Array.from(want), 32);
    assert.ok(r.maxAbs <= 1e-5 && r.minCos >= 0.99999, `relaxed: ${JSON.stringify(r)}`);
  }
  const c = caseOf('minilm-f32-mean-norm');
  const files = await minilmFiles();
  const some = G.manifest.inputs['texts:all-MiniLM-L6-v2'].texts.slice(36, 44);
  const want = rt.loadEncoder(files).embed(some);
  sameBits(scalar.loadEncoder(files).embed(some), want, 'scalar MiniLM');
  const got = relaxed.loadEncoder(files).embed(some);
  close(got, c, 36, 44, 'relaxed MiniLM');
  clearWeightCache();
});

test('a threaded runtime embeds with the same bits (its batches split between the threads: tests/encoder-threads.test.mjs)', { skip: !existsSync(join(ROOT, 'wasm/mlrt-threads.wasm')) && 'no wasm/mlrt-threads.wasm' }, async () => {
  const t = await createRuntime({ threads: 2 });
  const files = await makeFolder('tiny');
  const texts = G.manifest.inputs['texts:tiny'].texts;
  sameBits(t.loadEncoder(files).embed(texts), rt.loadEncoder(files).embed(texts), 'threads: 2');
  t.dispose();
});

// A folder on disk for the CLIs.
async function folderOnDisk(files) {
  const dir = mkdtempSync(join(tmpdir(), 'mlrt-enc-'));
  for (const [name, bytes] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), bytes);
  }
  return dir;
}

test('the WASI and native CLIs give the JS bits (mlrt embed --output f32)', async () => {
  const files = await makeFolder('tiny');
  const dir = await folderOnDisk(files);
  const texts = G.manifest.inputs['texts:tiny'].texts.filter((t) => !/[\n\r]/.test(t));
  writeFileSync(join(dir, 'texts.txt'), texts.join('\n') + '\n');
  const want = rt.loadEncoder(files).embed(texts);
  const clis = [['node', [join(ROOT, 'tools/mlrt-wasi.mjs')]], ['node', [join(ROOT, 'tools/mlrt.mjs')]]];
  if (existsSync(join(ROOT, 'build/mlrt'))) clis.push([join(ROOT, 'build/mlrt'), []]);
  for (const [cmd, pre] of clis) {
    const out = execFileSync(cmd, [...pre, 'embed', dir, '--input', join(dir, 'texts.txt'), '--output', 'f32'], { maxBuffer: 1 << 26 });
    sameBits(new Float32Array(out.buffer.slice(out.byteOffset, out.byteOffset + out.byteLength)), want, `${cmd} ${pre.join(' ')}`);
  }
  rmSync(dir, { recursive: true, force: true });
});

// ------------------------------------------------------------------ refusals

function withConfig(files, edit) {
  const c = JSON.parse(td.decode(files['config.json']));
  edit(c);
  return { ...files, 'config.json': te.encode(JSON.stringify(c)) };
}
function withTensors(files, edit) {
  const list = [...readSafetensors(files['model.safetensors'])].map(([name, t]) => ({ name, dtype: t.dtype, dims: t.dims, data: t.data }));
  const out = edit(list) ?? list;
  return { ...files, 'model.safetensors': writeSafetensors(out.map((t) => ({ name: t.name, dtype: t.dtype, dims: t.dims, bytes: tensorBytes(t.data, t.dtype) }))) };
}
const poke = (name, i, v) => (list) => list.map((t) => (t.name === name ? { ...t, data: Object.assign(t.data.slice(), { [i]: v }) } : t));
const drop = (files, name) => Object.fromEntries(Object.entries(files).filter(([k]) => k !== name));

test('malformed folders: each class refused at load with its code and a message naming the field or tensor', async () => {
  const base = await makeFolder('tiny');
  const small = withConfig(withTensors(base, (l) => l.map((t) => (t.name === 'embeddings.word_embeddings.weight'
    ? { ...t, dims: [30000, 32], data: t.data.slice(0, 30000 * 32) } : t))), (c) => { c.vocab_size = 30000; });
  const cases = [
    ['a shape that disagrees with config.json', withConfig(base, (c) => { c.intermediate_size = 128; }), 'BAD_DIMENSIONS',
      /tensor 'encoder\.layer\.0\.intermediate\.dense\.weight' has 2 dimensions \[64, 32\.\.\.\]; the config gives \[128, 32\]/],
    ['a tensor of the wrong shape', withTensors(base, (l) => l.map((t) => (t.name === 'encoder.layer.1.output.dense.weight' ? { ...t, dims: [64, 32] } : t))),
      'BAD_DIMENSIONS', /'encoder\.layer\.1\.output\.dense\.weight'/],
    ['a missing tensor', withTensors(base, (l) => l.filter((t) => t.name !== 'encoder.layer.1.attention.self.key.bias')), 'NOT_A_MODEL',
      /tensor 'encoder\.layer\.1\.attention\.self\.key\.bias' is missing/],
    ['more layers in the config than in the file', withConfig(base, (c) => { c.num_hidden_layers = 3; }), 'NOT_A_MODEL', /'encoder\.layer\.2\./],
    ['a tokenizer larger than vocab_size', small, 'BAD_DIMENSIONS', /tokenizer\.json has 30522 token ids but the model's vocab_size is 30000/],
    ['a NaN weight', withTensors(base, poke('encoder.layer.1.output.dense.weight', 77, NaN)), 'NON_FINITE', /'encoder\.layer\.1\.output\.dense\.weight' \[out 1\]\[in 13\] is not finite/],
    ['an infinite LayerNorm weight', withTensors(base, poke('embeddings.LayerNorm.weight', 3, Infinity)), 'NON_FINITE', /'embeddings\.LayerNorm\.weight' \[3\]/],
    ['a truncated model.safetensors', { ...base, 'model.safetensors': base['model.safetensors'].subarray(0, base['model.safetensors'].length - 100) },
      'TRUNCATED', /cut short/],
    ['a truncated config.json', { ...base, 'config.json': base['config.json'].subarray(0, 40) }, 'INVALID_JSON', /config\.json/],
    ['another hidden_act', withConfig(base, (c) => { c.hidden_act = 'relu'; }), 'UNSUPPORTED', /hidden_act 'relu'/],
    ['another position_embedding_type', withConfig(base, (c) => { c.position_embedding_type = 'relative_key'; }), 'UNSUPPORTED', /position_embedding_type 'relative_key'/],
    ['a decoder', withConfig(base, (c) => { c.is_decoder = true; }), 'UNSUPPORTED', /is_decoder/],
    ['heads that do not divide hidden_size', withConfig(base, (c) => { c.num_attention_heads = 5; }), 'BAD_DIMENSIONS', /not a multiple of num_attention_heads 5/],
    ['no config.json', drop(base, 'config.json'), 'INVALID_ARGUMENT', /config\.json is missing/],
    ['no weights', drop(base, 'model.safetensors'), 'INVALID_ARGUMENT', /no model\.safetensors or model\.apr/],
    ['a Pooling module without its config', drop(base, '1_Pooling/config.json'), 'INVALID_ARGUMENT', /1_Pooling/],
    ['no pooling mode', { ...base, '1_Pooling/config.json': te.encode('{"word_embedding_dimension": 32, "pooling_mode_mean_tokens": false}') }, 'BAD_HEADER', /no pooling mode/],
    ['max_seq_length past the positions', { ...base, 'sentence_bert_config.json': te.encode('{"max_seq_length": 1000}') }, 'BAD_DIMENSIONS', /max_seq_length/],
    ['a BPE tokenizer', { ...base, 'tokenizer.json': te.encode('{"model": {"type": "BPE"}}') }, 'UNSUPPORTED', /BPE/],
  ];
  for (const [what, files, code, re] of cases) {
    assert.throws(() => rt.loadEncoder(files), (e) => {
      assert.ok(e instanceof MlrtError, `${what}: ${e}`);
      assert.equal(e.code, code, `${what}: ${e.message}`);
      assert.match(e.message, /^loadEncoder: /, what);
      assert.match(e.message, re, what);
      return true;
    }, what);
  }
  // and the runtime goes on
  rt.loadEncoder(base).free();
});

test('loadEncoder checks its argument; loadFromBytes and load refuse an encoder naming loadEncoder', async () => {
  const files = await makeFolder('tiny');
  const bad = (fn, code, re) => assert.throws(fn, (e) => e instanceof MlrtError && e.code === code && re.test(e.message), re.source);
  bad(() => rt.loadEncoder(files['model.safetensors']), 'INVALID_ARGUMENT', /loadEncoder: expected the model folder's files by name/);
  bad(() => rt.loadEncoder({}), 'INVALID_ARGUMENT', /no files given/);
  bad(() => rt.loadEncoder({ 'config.json': 'text' }), 'INVALID_ARGUMENT', /'config\.json': expected a Uint8Array or ArrayBuffer/);
  bad(() => rt.loadEncoder({ ...files, 'a\0b': new Uint8Array(1) }), 'INVALID_ARGUMENT', /without NUL/);
  bad(() => rt.loadFromBytes(files['model.safetensors']), 'NOT_A_MODEL', /loadEncoder/);
  bad(() => rt.loadFromBytes(files), 'INVALID_ARGUMENT', /rt\.loadEncoder\(files\)/);
  await assert.rejects(rt.load(files['model.safetensors']), (e) => e.code === 'NOT_A_MODEL' && /loadEncoder/.test(e.message));
  await assert.rejects(rt.load(new Map(Object.entries(files))), (e) => e.code === 'INVALID_ARGUMENT' && /loadEncoder/.test(e.message));
  // one file of another kind: NOT_A_MODEL naming loadFromBytes
  const mlpPath = join(ROOT, 'build/models/mnist-mlp.safetensors');
  if (existsSync(mlpPath)) bad(() => rt.loadEncoder({ 'model.safetensors': readFileSync(mlpPath) }), 'NOT_A_MODEL', /loadFromBytes/);
  // a Map and ArrayBuffers are accepted
  const m = new Map(Object.entries(files).map(([k, v]) => [k, v.slice().buffer]));
  const enc = rt.loadEncoder(m);
  sameBits(enc.embed('hello'), rt.loadEncoder(files).embed('hello'), 'a Map of ArrayBuffers');
  // './name' is the folder's 'name'; names under another folder are refused, saying how to name them
  const dotted = rt.loadEncoder(Object.fromEntries(Object.entries(files).map(([k, v]) => [`./${k}`, v])));
  sameBits(dotted.embed('hello'), enc.embed('hello'), "names written './config.json'");
  dotted.free();
  bad(() => rt.loadEncoder({ ...files, './config.json': files['config.json'] }), 'INVALID_ARGUMENT', /config\.json is given twice/);
  bad(() => rt.loadEncoder(Object.fromEntries(Object.entries(files).map(([k, v]) => [`minilm/${k}`, v]))), 'INVALID_ARGUMENT',
    /'minilm\/model\.safetensors' is in a subfolder: name the files as paths inside the model's folder/);
  enc.free();
});

test('sources: { byteLength, readInto } write a file straight into wasm memory (the same bits); bad ones refused, nothing kept', async () => {
  const files = await makeFolder('tiny');
  const source = (b) => ({ byteLength: b.length, readInto: (d) => { d.set(b); return b.length; } });
  const bad = (fn, code, re) => assert.throws(fn, (e) => e instanceof MlrtError && e.code === code && re.test(e.message), re.source);
  const a = rt.loadEncoder(files), b = rt.loadEncoder(Object.fromEntries(Object.entries(files).map(([k, v]) => [k, source(v)])));
  sameBits(b.embed(['hello world', 'a second text']), a.embed(['hello world', 'a second text']), 'every file from a source');
  a.free(), b.free();
  const w = files['model.safetensors'];
  for (let i = 0; i < 2; i++) { // (warm the heap up for the memory check below)
    bad(() => rt.loadEncoder({ ...files, 'model.safetensors': { byteLength: -1, readInto() {} } }), 'INVALID_ARGUMENT', /'model\.safetensors': a source's byteLength must be an integer/);
    bad(() => rt.loadEncoder({ ...files, 'model.safetensors': { byteLength: 2 ** 40, readInto() {} } }), 'INVALID_ARGUMENT', /byteLength must be an integer from 0/);
    bad(() => rt.loadEncoder({ ...files, 'model.safetensors': { byteLength: w.length, readInto: (d) => { d.set(w.subarray(0, 3)); return 3; } } }),
      'INVALID_ARGUMENT', new RegExp(`'model\\.safetensors': readInto gave 3 bytes of its byteLength ${w.length}`));
    assert.throws(() => rt.loadEncoder({ ...files, 'model.safetensors': { byteLength: w.length, readInto() { throw new Error('disk on fire'); } } }), /disk on fire/);
    // a truncated file from a source is refused as bytes are (the block is the C loader's: freed)
    bad(() => rt.loadEncoder({ ...files, 'model.safetensors': source(w.subarray(0, w.length - 5)) }), 'TRUNCATED', /safetensors: the file is cut short/);
  }
  const before = rt.memoryBytes;
  for (let i = 0; i < 5; i++) {
    assert.throws(() => rt.loadEncoder({ ...files, 'model.safetensors': { byteLength: w.length, readInto() { throw new Error('x'); } } }), /x/);
    assert.throws(() => rt.loadEncoder({ ...files, 'model.safetensors': source(w.subarray(0, w.length - 5)) }), MlrtError);
  }
  assert.equal(rt.memoryBytes, before, 'failed loads keep no memory');
});

test('loadEncoderAsync: read(dest, position) sources in parts, at most 4 at once, and Blobs: the same bits as loadEncoder', async () => {
  const files = await minilmFiles();
  const w = files['model.safetensors'];
  const want = rt.loadEncoder(files);
  const texts = ['hello world', 'parts read at once land where they belong'];
  const wantY = want.embed(texts);
  want.free();
  // an async source that records its parts and how many of its reads ran at once
  let running = 0, most = 0;
  const parts = [];
  const slow = (b) => ({
    byteLength: b.length,
    async read(dest, pos) {
      running++, most = Math.max(most, running);
      parts.push([pos, dest.length]);
      await new Promise((r) => setTimeout(r, 1));
      dest.set(b.subarray(pos, pos + dest.length));
      running--;
      return dest.length;
    },
  });
  const a = await rt.loadEncoderAsync({ ...files, 'model.safetensors': slow(w) });
  sameBits(a.embed(texts), wantY, 'read in parts');
  a.free();
  parts.sort((x, y) => x[0] - y[0]);
  assert.ok(parts.length > 4, `${parts.length} parts of ${w.length} B`);
  let end = 0;
  for (const [pos, len] of parts) assert.equal(pos, end, 'the parts cover the file once, in order of position'), end += len;
  assert.equal(end, w.length);
  assert.equal(most, 4, 'four reads at once');
  // Blobs (a File from an <input>, fs.openAsBlob), bytes and sync sources side by side
  const blobs = Object.fromEntries(Object.entries(files).map(([k, v], i) => [k, i % 2 ? new Blob([v]) : v]));
  blobs['model.safetensors'] = new Blob([w.subarray(0, 1000), w.subarray(1000)]);
  const b = await rt.loadEncoderAsync(blobs);
  sameBits(b.embed(texts), wantY, 'Blobs');
  b.free();
  // two loads at once on one runtime, each file's parts interleaved with the other's
  const [c, d] = await Promise.all([rt.loadEncoderAsync({ ...files, 'model.safetensors': slow(w) }), rt.loadEncoderAsync(blobs)]);
  sameBits(c.embed(texts), wantY, 'two loads at once (a)');
  sameBits(d.embed(texts), wantY, 'two loads at once (b)');
  c.free(), d.free();
  // a source with both: loadEncoder calls readInto, loadEncoderAsync read
  const calls = [];
  const both = { byteLength: w.length, readInto: (d) => { calls.push('readInto'); d.set(w); }, read: async (d, pos) => { calls.push('read'); d.set(w.subarray(pos, pos + d.length)); } };
  rt.loadEncoder({ ...files, 'model.safetensors': both }).free();
  assert.deepEqual(calls, ['readInto']);
  calls.length = 0;
  (await rt.loadEncoderAsync({ ...files, 'model.safetensors': both })).free();
  assert.ok(calls.length > 1 && calls.every((c) => c === 'read'), calls.join());
});

test('loadEncoderAsync refuses what loadEncoder refuses, rejects with a failed read only once every read has ended, and keeps no memory', async () => {
  const files = await makeFolder('tiny');
  const w = files['model.safetensors'];
  const bad = (fn, code, re) => assert.throws(fn, (e) => e instanceof MlrtError && e.code === code && re.test(e.message), re.source);
  const rejects = (p, code, re) => assert.rejects(p, (e) => e instanceof MlrtError && e.code === code && re.test(e.message), re.source);
  const reader = (b) => ({ byteLength: b.length, read: async (d, pos) => { d.set(b.subarray(pos, pos + d.length)); return d.length; } });
  // the sync loader names the async one
  bad(() => rt.loadEncoder({ ...files, 'model.safetensors': new Blob([w]) }), 'INVALID_ARGUMENT', /'model\.safetensors' is a Blob: .*rt\.loadEncoderAsync/);
  bad(() => rt.loadEncoder({ ...files, 'model.safetensors': reader(w) }), 'INVALID_ARGUMENT', /a source with read\(\) but no readInto\(\).*loadEncoderAsync/);
  const big = new Uint8Array(9 << 20); // three parts
  const before = rt.memoryBytes;
  for (let i = 0; i < 3; i++) {
    await rejects(rt.loadEncoderAsync({ ...files, 'model.safetensors': { byteLength: w.length, read: async (d) => 3 } }),
      'INVALID_ARGUMENT', new RegExp(`loadEncoderAsync: 'model\\.safetensors': read gave 3 bytes at 0, expected ${w.length}`));
    await rejects(rt.loadEncoderAsync({ ...files, 'model.safetensors': reader(w.subarray(0, w.length - 5)) }), 'TRUNCATED', /safetensors: the file is cut short/);
    await rejects(rt.loadEncoderAsync({ ...files, 'config.json': new Blob([files['config.json'].subarray(0, 20)]) }), 'INVALID_JSON', /loadEncoderAsync: config\.json: invalid JSON at byte 20/);
    await rejects(rt.loadEncoderAsync({ ...files, 'model.safetensors': { byteLength: -1, read: async () => 0 } }), 'INVALID_ARGUMENT', /byteLength must be an integer/);
    // one part fails at once while another is still reading: the rejection waits for that read
    let finished = false;
    const failing = {
      byteLength: big.length,
      async read(d, pos) {
        if (pos === 0) { await new Promise((r) => setTimeout(r, 30)); d.fill(1); finished = true; return d.length; }
        throw new Error('disk on fire');
      },
    };
    await assert.rejects(rt.loadEncoderAsync({ ...files, 'extra.bin': failing }), (e) => {
      assert.ok(finished, 'the slow read had ended before the load rejected');
      return /disk on fire/.test(e.message);
    });
    // a sync source that throws inside the async loader: rejected too
    await assert.rejects(rt.loadEncoderAsync({ ...files, 'model.safetensors': { byteLength: w.length, readInto() { throw new Error('sync fire'); } } }), /sync fire/);
  }
  assert.ok(rt.memoryBytes <= before + (12 << 20), 'at most the one growth for the largest load');
  const settled = rt.memoryBytes;
  for (let i = 0; i < 3; i++) await assert.rejects(rt.loadEncoderAsync({ ...files, 'model.safetensors': reader(w.subarray(0, w.length - 5)) }), MlrtError);
  assert.equal(rt.memoryBytes, settled, 'failed loads keep no memory');
  const ok = await rt.loadEncoderAsync({ ...files, 'model.safetensors': reader(w) });
  sameBits(ok.embed('after the failures'), rt.loadEncoder(files).embed('after the failures'), 'a load after failed ones');
  ok.free();
});

test('loadEncoderAsync: Responses streamed into wasm memory (Content-Length), or read whole first (compressed, no length); bad ones refused', async () => {
  const { createServer } = await import('node:http');
  const { gzipSync } = await import('node:zlib');
  const files = await makeFolder('tiny');
  const w = files['model.safetensors'];
  const want = rt.loadEncoder(files).embed(['a text from the network']);
  const rejects = (p, code, re) => assert.rejects(p, (e) => e instanceof MlrtError && e.code === code && re.test(e.message), re.source);
  const sized = (b, n = b.length) => new Response(b, { headers: { 'content-length': String(n) } });
  const responses = () => Object.fromEntries(Object.entries(files).map(([k, v]) => [k, sized(v)]));
  const a = await rt.loadEncoderAsync(responses());
  sameBits(a.embed(['a text from the network']), want, 'Responses with a Content-Length');
  a.free();
  // a body in many small chunks, and one with no Content-Length (read whole first)
  const chunked = new Response(new ReadableStream({
    start(c) { for (let i = 0; i < w.length; i += 1000) c.enqueue(w.slice(i, i + 1000)); c.close(); },
  }), { headers: { 'content-length': String(w.length) } });
  const b = await rt.loadEncoderAsync({ ...files, 'model.safetensors': chunked, 'tokenizer.json': new Response(files['tokenizer.json']) });
  sameBits(b.embed(['a text from the network']), want, 'chunks; no Content-Length');
  b.free();
  // fetch() from a server on 127.0.0.1: the weights with a Content-Length, tokenizer.json gzip-encoded
  const server = createServer((req, res) => {
    const name = decodeURIComponent(req.url.slice(1));
    if (!(name in files)) { res.writeHead(404).end(); return; }
    const gz = name === 'tokenizer.json', body = gz ? gzipSync(files[name]) : files[name];
    res.writeHead(200, { 'content-length': body.length, ...(gz ? { 'content-encoding': 'gzip' } : {}) }).end(body);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${server.address().port}/`;
  try {
    const fetched = Object.fromEntries(await Promise.all(Object.keys(files).map(async (k) => [k, await fetch(base + k)])));
    const c = await rt.loadEncoderAsync(fetched);
    sameBits(c.embed(['a text from the network']), want, 'fetch(), one file gzip-encoded');
    c.free();
    await rejects(rt.loadEncoderAsync({ ...files, 'config.json': await fetch(base + 'nothing.json') }), 'INVALID_ARGUMENT', /'config\.json': the Response is HTTP 404 \(http:\/\/127\.0\.0\.1:\d+\/nothing\.json\), not 200-299/);
  } finally {
    server.close();
  }
  const used = sized(w);
  await used.arrayBuffer();
  await rejects(rt.loadEncoderAsync({ ...files, 'model.safetensors': used }), 'INVALID_ARGUMENT', /'model\.safetensors': the Response's body has already been read/);
  await rejects(rt.loadEncoderAsync({ ...files, 'model.safetensors': sized(w, w.length + 10) }), 'INVALID_ARGUMENT', new RegExp(`the Response's body ended after ${w.length} bytes of its Content-Length ${w.length + 10}`));
  await rejects(rt.loadEncoderAsync({ ...files, 'model.safetensors': sized(w, w.length - 10) }), 'INVALID_ARGUMENT', new RegExp(`the Response's body is longer than its Content-Length ${w.length - 10}`));
  const strings = new Response(new ReadableStream({ start(c) { c.enqueue('not bytes'); c.close(); } }), { headers: { 'content-length': '9' } });
  await rejects(rt.loadEncoderAsync({ ...files, 'model.safetensors': strings }), 'INVALID_ARGUMENT', /the Response's body gave a string, not bytes/);
  assert.throws(() => rt.loadEncoder({ ...files, 'model.safetensors': sized(w) }), (e) => e instanceof MlrtError && e.code === 'INVALID_ARGUMENT' && /is a Response: .*rt\.loadEncoderAsync/.test(e.message));
});

test('memory: an encoder keeps one copy of its weights (all-MiniLM-L6-v2 f32: the file\'s bytes, packed in place, + a few MiB)', async () => {
  const files = await minilmFiles();
  const r = await createRuntime({ relaxed: false });
  const weights = files['model.safetensors'].length;
  const enc = r.loadEncoder(files);
  const extra = r.memoryBytes - weights;
  assert.ok(extra < 6 * 2 ** 20, `wasm memory ${r.memoryBytes} B for ${weights} B of weights: ${(extra / 2 ** 20).toFixed(1)} MiB more`);
  const one = enc.embed('the weights packed where the file held them');
  enc.free(), r.dispose();
  sameBits(one, rt.loadEncoder(files).embed('the weights packed where the file held them'), 'a fresh runtime, the same bits');
});

test('info: the fields of the contract, frozen; the tokenizer is the model\'s and goes with it', async () => {
  const files = await minilmFiles();
  const enc = rt.loadEncoder(files);
  const i = enc.info;
  assert.ok(Object.isFrozen(i) && Object.isFrozen(i.unusedTensors));
  assert.equal(i.truncationSide, 'right');
  assert.deepEqual(
    { architecture: i.architecture, dim: i.dim, layers: i.layers, heads: i.heads, ffn: i.ffn, vocabSize: i.vocabSize, maxLength: i.maxLength, pooling: i.pooling, normalize: i.normalize, dtype: i.dtype, kind: i.kind, task: i.task, format: i.format },
    { architecture: 'BertModel', dim: 384, layers: 6, heads: 12, ffn: 1536, vocabSize: 30522, maxLength: 256, pooling: 'mean', normalize: true, dtype: 'f32', kind: 'encoder', task: 'embedding', format: 'safetensors' });
  const params = (30522 + 512 + 2 + 2) * 384 + 6 * (4 * 384 * 384 + 2 * 384 * 1536 + 9 * 384 + 1536);
  assert.equal(i.params, params);
  assert.ok(i.weightBytes >= 4 * (params - 30522 * 384) && i.weightBytes <= 4 * params * 1.01, `weightBytes ${i.weightBytes}`);
  assert.deepEqual(i.inputs.map((x) => x.name), ['input_ids', 'attention_mask', 'token_type_ids']);
  assert.deepEqual(i.outputs.map((x) => [x.name, x.shape]), [['sentence_embedding', ['batch', 384]]]);
  const tok = enc.tokenizer;
  assert.equal(tok.info.vocabSize, 30522);
  assert.deepEqual([...tok.encode('hello world').ids].slice(0, 4), [101, 7592, 2088, 102]);
  tok.dispose(); // its scratch only: the encoder goes on
  assert.equal(tok.disposed, true);
  assert.equal(enc.embed('hello').length, 384);
  enc.free();
  assert.equal(enc.disposed, true);
  enc.free(); // twice is fine
  assert.throws(() => enc.embed('x'), (e) => e.code === 'DISPOSED');
  assert.throws(() => enc.embedTokens({ ids: [[101]] }), (e) => e.code === 'DISPOSED');
  const enc2 = rt.loadEncoder(files);
  const tok2 = enc2.tokenizer;
  enc2.dispose();
  assert.throws(() => tok2.encode('x'), (e) => e.code === 'DISPOSED');
  clearWeightCache();
  minilm = null; // (its last user)
});

test('memory: loading and freeing encoders does not grow the heap without bound', async () => {
  const files = await makeFolder('tiny');
  for (let i = 0; i < 5; i++) { const e = rt.loadEncoder(files); e.embed(['warm up', 'the heap']); e.free(); }
  const before = rt.memoryBytes;
  for (let i = 0; i < 30; i++) { const e = rt.loadEncoder(files); e.embed(['a text', 'another one']); e.free(); }
  assert.equal(rt.memoryBytes, before);
});
