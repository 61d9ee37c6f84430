// Prompts (issue 21): config_sentence_transformers.json's named prompts and default_prompt_name, embed's
// options.prompt / options.promptName, and Pooling's include_prompt: false, as sentence-transformers'
// SentenceTransformer.encode applies them:
//   - a prompt is string-prepended to every text before tokenizing (and lowercasing);
//   - without prompt or prompt_name, the default prompt (default_prompt_name) is used; '' is none (as
//     in current sentence-transformers, whose encode tests `if prompt:`: no prompt length either);
//   - with include_prompt false, the attention mask of the first len(tokenize(prompt)) - 1 positions
//     ([CLS] and the prompt's tokens) is zeroed after the transformer, for the pooling only.
// The last is checked against an independent reference: onnxruntime-web's last hidden states of the same
// weights (tools/encoder/onnx.mjs), the prompt's length from npm `tokenizers`, and the masked mean
// written here from sentence-transformers' formula.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assertSameBits } from './helpers.mjs';
import { makeFolder } from '../tools/encoder/folder.mjs';
import { ortHidden } from '../tools/encoder/onnx.mjs';

const { createRuntime, MlrtError } = await import('../wasm/mlrt.mjs');
const te = new TextEncoder(), td = new TextDecoder();
const rt = await createRuntime({ relaxed: false });
const sameBits = (got, want, what) => assertSameBits(assert, got, want, what);
const json = (o) => te.encode(JSON.stringify(o));
const read = (b) => JSON.parse(td.decode(b));
const base = await makeFolder('tiny');
const ST = { __version__: { sentence_transformers: '3.0.1', transformers: '4.41.2', pytorch: '2.3.0' },
  prompts: { query: 'query: ', passage: 'passage: ', none: '' }, default_prompt_name: null, similarity_fn_name: 'cosine' };
const TEXTS = ['how do magnets work', 'A cat sat on the mat.', 'Ünïcödé text, with punctuation!', 'x'];
const withST = (st, files = base) => ({ ...files, 'config_sentence_transformers.json': json(st) });
const withPooling = (extra, files = base) => ({ ...files, '1_Pooling/config.json': json({ ...read(base['1_Pooling/config.json']), ...extra }) });

test('config_sentence_transformers.json: info lists the prompts; promptName and prompt prepend their text', () => {
  const plain = rt.loadEncoder(base), enc = rt.loadEncoder(withST(ST));
  assert.deepEqual(plain.info.prompts, {});
  assert.equal(plain.info.defaultPromptName, null);
  assert.equal(plain.info.includePrompt, true);
  assert.deepEqual(enc.info.prompts, ST.prompts);
  assert.equal(enc.info.defaultPromptName, null);
  sameBits(enc.embed(TEXTS), plain.embed(TEXTS), 'no default prompt: the texts as they are');
  const q = enc.embed(TEXTS, { promptName: 'query' });
  sameBits(q, plain.embed(TEXTS.map((t) => `query: ${t}`)), 'promptName: query');
  sameBits(enc.embed(TEXTS, { prompt: 'passage: ' }), enc.embed(TEXTS, { promptName: 'passage' }), 'prompt: the same text');
  sameBits(enc.embed(TEXTS.map((t) => te.encode(t)), { promptName: 'query' }), q, 'texts as UTF-8 bytes');
  sameBits(enc.embed(TEXTS, { promptName: 'none' }), plain.embed(TEXTS), 'an empty prompt');
  assert.ok(q.some((v, i) => v !== enc.embed(TEXTS)[i]), 'a prompt changes the embedding');
  sameBits(enc.embed(TEXTS, { promptName: 'query', batchSize: 1 }), q, 'batchSize does not matter');
  enc.free(), plain.free();
});

test('default_prompt_name: embed uses it unless told otherwise; prompt \'\' turns it off', () => {
  const plain = rt.loadEncoder(base), enc = rt.loadEncoder(withST({ ...ST, default_prompt_name: 'query' }));
  assert.equal(enc.info.defaultPromptName, 'query');
  const want = plain.embed(TEXTS.map((t) => `query: ${t}`));
  sameBits(enc.embed(TEXTS), want, 'the default prompt');
  sameBits(enc.embed(TEXTS[0]), want.subarray(0, enc.info.dim), 'one text');
  sameBits(enc.embed(TEXTS, { prompt: '' }), plain.embed(TEXTS), "prompt ''");
  sameBits(enc.embed(TEXTS, { promptName: 'passage' }), plain.embed(TEXTS.map((t) => `passage: ${t}`)), 'another name');
  enc.free(), plain.free();
});

test('a prompt is lowercased with its text when the model lowercases (Final_Sigma across the join)', () => {
  const lower = (files) => ({ ...files, 'sentence_bert_config.json': json({ max_seq_length: 64, do_lower_case: true }) });
  const plain = rt.loadEncoder(lower(base)), enc = rt.loadEncoder(lower(withST({ ...ST, prompts: { q: 'ΤΈΛΟΣ' } })));
  const texts = [' ΚΑΙ', 'Σ word'];
  sameBits(enc.embed(texts, { promptName: 'q' }), plain.embed(texts.map((t) => `ΤΈΛΟΣ${t}`)), 'joined, then lowercased');
  enc.free(), plain.free();
});

// The reference for include_prompt false: ORT's token embeddings of the prompted texts, the masked mean
// Σ m h / max(Σ m, 1e-9) with m = 0 at positions < promptLength, then v / max(|v|, 1e-12).
async function reference(files, texts, prompt, normalize) {
  const ort = await ortHidden(files, 64);
  // the prompt's tokens, less the last when it is a special token (sentence-transformers' _get_prompt_length)
  const special = new Set(JSON.parse(td.decode(files['tokenizer.json'])).added_tokens.filter((a) => a.special).map((a) => a.id));
  const pids = await ort.ids(prompt), skip = pids.length - (special.has(pids.at(-1)) ? 1 : 0);
  const out = [];
  for (const t of texts) {
    const ids = await ort.ids(prompt + t), T = ids.length;
    const h = await ort.states(ids), H = h.length / T, v = new Float64Array(H);
    let n = 0;
    for (let j = skip; j < T; j++, n++) for (let c = 0; c < H; c++) v[c] += h[j * H + c];
    for (let c = 0; c < H; c++) v[c] /= Math.max(n, 1e-9);
    const norm = normalize ? Math.max(Math.hypot(...v), 1e-12) : 1;
    out.push(...v.map((x) => x / norm));
  }
  await ort.release();
  return { skip, values: Float64Array.from(out) };
}

test('include_prompt false: the prompt\'s tokens are left out of the mean (onnxruntime-web + npm tokenizers as the reference)', async () => {
  const files = withPooling({ include_prompt: false }, withST(ST));
  const enc = rt.loadEncoder(files), kept = rt.loadEncoder(withST(ST));
  assert.equal(enc.info.includePrompt, false);
  const prompt = 'Represent this sentence for searching relevant passages: ';
  const got = enc.embed(TEXTS, { prompt });
  const ref = await reference(files, TEXTS, prompt, enc.info.normalize);
  assert.ok(ref.skip > 5, `the prompt covers ${ref.skip} positions`);
  let worst = 0;
  for (let i = 0; i < got.length; i++) worst = Math.max(worst, Math.abs(got[i] - ref.values[i]));
  assert.ok(worst <= 1e-5, `max |Δ| ${worst} against the reference`);
  const withPrompt = kept.embed(TEXTS, { prompt });
  assert.ok(withPrompt.some((v, i) => Math.abs(v - got[i]) > 1e-3), 'include_prompt true pools the prompt too (the case tells them apart)');
  sameBits(enc.embed(TEXTS), kept.embed(TEXTS), 'without a prompt include_prompt changes nothing');
  // a tokenizer without a post-processor adds no [SEP]: the prompt's tokens are all left out, none less
  const bare = { ...files, 'tokenizer.json': te.encode(JSON.stringify({ ...JSON.parse(td.decode(files['tokenizer.json'])), post_processor: null })) };
  const encBare = rt.loadEncoder(bare), refBare = await reference(bare, TEXTS, prompt, enc.info.normalize), gotBare = encBare.embed(TEXTS, { prompt });
  assert.equal(refBare.skip, ref.skip - 1, 'no [CLS] in the count either');
  let worstBare = 0;
  for (let i = 0; i < gotBare.length; i++) worstBare = Math.max(worstBare, Math.abs(gotBare[i] - refBare.values[i]));
  assert.ok(worstBare <= 1e-5, `no post-processor: max |Δ| ${worstBare}`);
  encBare.free();
  // '' is no prompt (current sentence-transformers: `if prompt:`), in the pooling too
  sameBits(enc.embed(TEXTS, { prompt: '' }), kept.embed(TEXTS), "prompt ''");
  const emptyDefault = rt.loadEncoder(withPooling({ include_prompt: false }, withST({ prompts: { none: '' }, default_prompt_name: 'none' })));
  sameBits(emptyDefault.embed(TEXTS), kept.embed(TEXTS), "a default prompt ''");
  emptyDefault.free();
  // CLS pooling reads token 0 whatever the mask
  const cls = (f) => rt.loadEncoder(withPooling({ pooling_mode_cls_token: true, pooling_mode_mean_tokens: false, ...f }, withST(ST)));
  const c0 = cls({ include_prompt: false }), c1 = cls({});
  sameBits(c0.embed(TEXTS, { prompt }), c1.embed(TEXTS, { prompt }), 'CLS');
  for (const e of [enc, kept, c0, c1]) e.free();
});

test('malformed config_sentence_transformers.json is refused, naming the field', () => {
  const bad = (st, code, re) => assert.throws(() => rt.loadEncoder({ ...base, 'config_sentence_transformers.json': typeof st === 'string' ? te.encode(st) : json(st) }),
    (e) => e instanceof MlrtError && e.code === code && re.test(e.message), `${JSON.stringify(st)}: ${code} ${re}`);
  bad([], 'BAD_HEADER', /config_sentence_transformers\.json: expected a JSON object, got array/);
  bad('{"prompts": {}', 'INVALID_JSON', /config_sentence_transformers\.json/);
  bad({ prompts: ['query: '] }, 'BAD_HEADER', /prompts: expected an object of texts by name, got array/);
  bad({ prompts: { query: 1 } }, 'BAD_HEADER', /prompts\.query: expected a string, got number/);
  bad({ prompts: { query: 'a', query2: null } }, 'BAD_HEADER', /prompts\.query2: expected a string, got null/);
  bad('{"prompts": {"q": "a", "q": "b"}}', 'DUPLICATE_KEY', /q/);
  bad({ prompts: { query: 'a' }, default_prompt_name: 'passage' }, 'BAD_HEADER', /default_prompt_name 'passage' is not one of the prompts/);
  bad({ default_prompt_name: 'query' }, 'BAD_HEADER', /default_prompt_name 'query' is not one of the prompts/);
  bad({ prompts: { query: 'a' }, default_prompt_name: 3 }, 'BAD_HEADER', /default_prompt_name: expected a string or null, got number/);
  bad({ prompts: { long: 'x'.repeat((1 << 20) + 1) } }, 'BAD_DIMENSIONS', /prompts\.long: 1048577 bytes, more than the limit 1048576/);
  assert.throws(() => rt.loadEncoder(withPooling({ include_prompt: 'no' })), (e) => e.code === 'BAD_HEADER' && /include_prompt: expected true or false/.test(e.message));
  // what sentence-transformers ignores: other keys, and prompts null
  const ok = rt.loadEncoder({ ...base, 'config_sentence_transformers.json': json({ prompts: null, model_type: 'SentenceTransformer' }) });
  assert.deepEqual(ok.info.prompts, {});
  ok.free();
});

test('embed refuses a prompt it cannot use', () => {
  const enc = rt.loadEncoder(withST(ST)), plain = rt.loadEncoder(base);
  const bad = (e, options, re) => assert.throws(() => e.embed(TEXTS, options), (x) => x instanceof MlrtError && x.code === 'INVALID_ARGUMENT' && re.test(x.message));
  bad(enc, { prompt: 'a', promptName: 'query' }, /give options\.prompt or options\.promptName, not both/);
  bad(enc, { promptName: 'Query' }, /options\.promptName "Query" is not one of the model's prompts \("query", "passage", "none"\)/);
  bad(enc, { promptName: 'toString' }, /"toString" is not one of the model's prompts/);
  bad(plain, { promptName: 'query' }, /is not one of the model's prompts \(it has none\)/);
  bad(enc, { prompt: 3 }, /options\.prompt must be a string, got number/);
  assert.throws(() => enc.embed(TEXTS, { prompt: 'a\ud800' }), (x) => x.code === 'INVALID_UTF8' && /options\.prompt/.test(x.message));
  sameBits(enc.embed(TEXTS, { promptName: 'query' }), enc.embed(TEXTS, { promptName: 'query' }), 'the runtime still works');
  enc.free(), plain.free();
});

test('an .apr of mlrt convert keeps the folder\'s prompts and include_prompt (mlrt_embedding)', async () => {
  const { encoderToApr } = await import('../tools/apr/encoder.mjs');
  const files = withPooling({ include_prompt: false }, withST({ ...ST, default_prompt_name: 'passage' }));
  const enc = rt.loadEncoder(files), i = enc.info;
  const { bytes } = encoderToApr(files, { embedding: { pooling: i.pooling, normalize: i.normalize, max_seq_length: i.maxLength,
    do_lower_case: i.lowerCase, include_prompt: i.includePrompt, prompts: i.prompts, default_prompt_name: i.defaultPromptName } });
  const apr = rt.loadEncoder({ 'model.apr': bytes, 'tokenizer.json': files['tokenizer.json'] });
  assert.deepEqual([apr.info.prompts, apr.info.defaultPromptName, apr.info.includePrompt], [ST.prompts, 'passage', false]);
  sameBits(apr.embed(TEXTS), enc.embed(TEXTS), 'the default prompt, left out of the pooling');
  const bad = (record, re) => assert.throws(() => rt.loadEncoder({ 'model.apr': encoderToApr(base, { embedding: record }).bytes, 'tokenizer.json': base['tokenizer.json'] }),
    (e) => e.code === 'BAD_HEADER' && re.test(e.message), JSON.stringify(record));
  bad({ pooling: 'mean', normalize: true, prompts: { q: 1 } }, /mlrt_embedding: prompts\.q: expected a string/);
  bad({ pooling: 'mean', normalize: true, default_prompt_name: 'q' }, /mlrt_embedding: default_prompt_name 'q' is not one of the prompts/);
  bad({ pooling: 'mean', normalize: true, include_prompt: 1 }, /mlrt_embedding: include_prompt: expected true or false/);
  // the folder's own config_sentence_transformers.json wins over the record
  const over = rt.loadEncoder({ 'model.apr': bytes, 'tokenizer.json': files['tokenizer.json'], 'config_sentence_transformers.json': json(ST) });
  assert.equal(over.info.defaultPromptName, null);
  for (const e of [enc, apr, over]) e.free();
});
