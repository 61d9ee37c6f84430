// The WordPiece tokenizer (issue 20) against its reference: npm `tokenizers` 0.23.2, the Rust
// library's own Node binding (dev dependency, tests only). Every case gives the reference's ids,
// type ids and attention mask exactly:
//   - a seeded corpus of 5,000+ texts (tests/text/corpus.mjs: accents and marks, CJK inside words,
//     astral CJK and the U+2B820 gap, emoji and ZWJ, every White_Space and control character,
//     U+FFFD, full-width punctuation, long words, typed special tokens, empty text, texts past
//     512 tokens) through 15 tokenizer variants (the four target models, cased, no CJK, ...),
//     as batches, one by one, and as pairs;
//   - every truncation length from 2 to 40 with each strategy, singles and pairs;
//   - every Unicode code point through the normalizer's four steps one by one, and through the
//     whole pipeline (pre-tokenizer tables included);
//   - vocab.txt (+ tokenizer_config.json) against the equivalent tokenizer.json;
//   - decode with and without special tokens.
// The same on the SIMD128, scalar and relaxed-SIMD builds, and the native CLI.
import v8 from 'node:v8';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { variants, corpus, vocab, rng, randomText } from './text/corpus.mjs';

v8.setFlagsFromString('--experimental-wasm-relaxed-simd'); // before any wasm is compiled
const { createRuntime } = await import('../wasm/mlrt.mjs');
const require = createRequire(import.meta.url);
const { Tokenizer: Oracle, bertNormalizer } = require('tokenizers');

const root = new URL('../', import.meta.url);
const enc = new TextEncoder();
const builds = {
  simd: await createRuntime({ relaxed: false }),
  scalar: await createRuntime({ simd: false }),
  relaxed: await createRuntime({ relaxed: true }),
};
const rt = builds.simd;
const VARIANTS = variants();
const TEXTS = corpus(5200);
const json = Object.fromEntries(Object.entries(VARIANTS).map(([k, v]) => [k, JSON.stringify(v)]));
const oracles = Object.fromEntries(Object.entries(json).map(([k, v]) => [k, Oracle.fromString(v)]));

function same(got, want, what) {
  const g = { ids: [...got.ids], typeIds: [...got.typeIds], attentionMask: [...got.attentionMask] };
  const w = { ids: want.getIds(), typeIds: want.getTypeIds(), attentionMask: want.getAttentionMask() };
  if (g.ids.length !== w.ids.length || g.ids.some((x, i) => x !== w.ids[i]) || g.typeIds.some((x, i) => x !== w.typeIds[i]) ||
      g.attentionMask.some((x, i) => x !== w.attentionMask[i])) {
    assert.deepEqual(g, w, `${what}\n  tokens: ${JSON.stringify(want.getTokens())}`);
  }
}

const chunks = (a, n) => Array.from({ length: Math.ceil(a.length / n) }, (_, i) => a.slice(i * n, i * n + n));

test('the corpus covers the spec list and has 5,000+ texts', () => {
  assert.ok(TEXTS.length >= 5000);
  for (const must of ['', 'a\u0085b', 'hello😀', 'x\u{2b820}y', '[CLS] hello [MASK]', 'a'.repeat(101), 'Ａ！ｂ', '\ufffd']) {
    assert.ok(TEXTS.includes(must), JSON.stringify(must));
  }
  assert.ok(TEXTS.some((t) => [...t].length > 2000), 'a text past 512 tokens');
});

// One text (or pair) through both; a refusal by the reference (OnlySecond without a pair, a
// sequence too short to truncate) must be a refusal here too.
async function compareOne(tok, oracle, a, b, what) {
  let want = null, wantErr = null, got = null, gotErr = null;
  try { want = await oracle.encode(a, b); } catch (e) { wantErr = e; }
  try { got = tok.encode(a, b === null ? {} : { pair: b }); } catch (e) { gotErr = e; }
  if (wantErr || gotErr) {
    assert.ok(gotErr && wantErr, `${what}: reference ${wantErr?.message ?? 'ok'}, mlrt ${gotErr?.message ?? 'ok'}`);
    assert.equal(gotErr.code, 'INVALID_ARGUMENT', what);
    return;
  }
  same(got, want, what);
}

async function compareBatch(tok, oracle, batch, what) {
  let want;
  try { want = await oracle.encodeBatch(batch); } catch {
    for (const t of batch) await compareOne(tok, oracle, ...(Array.isArray(t) ? t : [t, null]), `${what}: ${JSON.stringify(t)}`);
    return;
  }
  const got = tok.encodeBatch(batch);
  for (let i = 0; i < batch.length; i++) same(got[i], want[i], `${what}: ${JSON.stringify(batch[i])}`);
}

// A tokenizer.json (as an object) loaded by mlrt and by the oracle: every text encodes, decodes (with
// and without special tokens) and batches the same. Returns both, for more checks; the caller disposes tok.
async function agreeOnTexts(j, texts, name) {
  const text = JSON.stringify(j), tok = rt.loadTokenizer(enc.encode(text)), oracle = Oracle.fromString(text);
  for (const t of texts) {
    same(tok.encode(t), await oracle.encode(t, null), `${name}: ${JSON.stringify(t)}`);
    const ids = [...tok.encode(t).ids];
    for (const skip of [false, true]) assert.equal(tok.decode(ids, { skipSpecialTokens: skip }), await oracle.decode(ids, skip), `${name} ${skip}: ${JSON.stringify(t)}`);
  }
  await compareBatch(tok, oracle, texts, `${name} batch`);
  return { tok, oracle };
}

for (const name of Object.keys(VARIANTS)) {
  test(`corpus through ${name}: batches, singles and pairs equal the reference`, async () => {
    const tok = rt.loadTokenizer(enc.encode(json[name]));
    const oracle = oracles[name];
    // batches: the file's padding applies to both alike (BatchLongest: to the same longest)
    for (const batch of chunks(TEXTS, 400)) await compareBatch(tok, oracle, batch, `${name} batch`);
    for (const t of TEXTS.filter((_, i) => i % 7 === 0)) await compareOne(tok, oracle, t, null, `${name}: ${JSON.stringify(t)}`);
    const r = rng(7);
    const pairs = Array.from({ length: 300 }, () => [TEXTS[Math.floor(r() * TEXTS.length)], TEXTS[Math.floor(r() * TEXTS.length)]]);
    await compareBatch(tok, oracle, pairs, `${name} pairs`);
    for (const [a, b] of pairs.slice(0, 60)) await compareOne(tok, oracle, a, b, `${name} pair: ${JSON.stringify([a, b])}`);
    tok.dispose();
  });
}

test('every truncation length 2..40, each strategy and direction, singles and pairs', async () => {
  const base = VARIANTS.cased;
  const r = rng(11);
  const texts = Array.from({ length: 12 }, () => randomText(r, 30));
  for (const strategy of ['LongestFirst', 'OnlyFirst', 'OnlySecond']) {
    for (const direction of ['Right', 'Left']) {
      for (let max = 2; max <= 40; max++) {
        const j = { ...base, truncation: { direction, max_length: max, strategy, stride: 0 } };
        const oracle = Oracle.fromString(JSON.stringify(j));
        const tok = rt.loadTokenizer({ 'tokenizer.json': enc.encode(JSON.stringify(j)) });
        for (let i = 0; i < texts.length; i += 2) {
          const cases = [[texts[i], null], [texts[i], texts[i + 1]], [texts[i + 1], texts[i]], ['', texts[i]]];
          for (const [a, b] of cases) {
            const what = `${strategy} ${direction} ${max}: ${JSON.stringify([a, b])}`;
            // a pair below its 3 special tokens: Rust's max_length - 3 underflows; mlrt refuses it
            if (b !== null && max < 3) assert.throws(() => tok.encode(a, { pair: b }), { code: 'INVALID_ARGUMENT' }, what);
            else await compareOne(tok, oracle, a, b, what);
          }
        }
        tok.dispose();
      }
    }
  }
});

test('options override the file: maxLength, truncation, padding', async () => {
  const j = VARIANTS['all-MiniLM-L6-v2'];
  const tok = rt.loadTokenizer(enc.encode(json['all-MiniLM-L6-v2']));
  const long = TEXTS.find((t) => [...t].length > 2000);
  assert.equal(tok.encode('hello').ids.length, 128, 'the file pads to 128');
  assert.equal(tok.encode(long).ids.length, 128, 'and truncates at 128');
  assert.deepEqual([...tok.encode('hello', { padding: false }).ids], [101, 7592, 102]);
  const o = Oracle.fromString(JSON.stringify({ ...j, padding: null, truncation: null }));
  same(tok.encode(long, { padding: false, truncation: false }), await o.encode(long), 'no truncation');
  const o256 = Oracle.fromString(JSON.stringify({ ...j, padding: null, truncation: { max_length: 256, strategy: 'LongestFirst', stride: 0 } }));
  same(tok.encode(long, { padding: false, maxLength: 256 }), await o256.encode(long), 'maxLength 256');
  const batch = tok.encodeBatch(['a', 'hello world', long], { padding: 'longest', maxLength: 16 });
  assert.deepEqual(batch.map((e) => e.ids.length), [16, 16, 16]);
  assert.deepEqual([...batch[0].attentionMask], [1, 1, 1, ...Array(13).fill(0)]);
  const unpadded = tok.encodeBatch(['a', 'hello world'], { padding: false });
  assert.deepEqual(unpadded.map((e) => [...e.ids]), [[101, 1037, 102], [101, 7592, 2088, 102]]);
  tok.dispose();
});

// --------------------------------------------------------------- every code point

function allCodePoints(step = 1) {
  const out = [];
  for (let c = 0; c <= 0x10ffff; c += step) if (c < 0xd800 || c > 0xdfff) out.push(c);
  return out;
}

test('every code point through each normalizer step alone equals the reference (Unicode tables)', () => {
  const steps = { cleanText: [true, false, false, false], handleChineseChars: [false, true, false, false],
    stripAccents: [false, false, true, false], lowercase: [false, false, false, true] };
  const cps = allCodePoints();
  for (const [step, [cleanText, handleChineseChars, stripAccents, lowercase]] of Object.entries(steps)) {
    const oracle = bertNormalizer({ cleanText, handleChineseChars, stripAccents, lowercase });
    const j = JSON.parse(json.cased);
    j.normalizer = { type: 'BertNormalizer', clean_text: cleanText, handle_chinese_chars: handleChineseChars, strip_accents: stripAccents, lowercase };
    const tok = rt.loadTokenizer(enc.encode(JSON.stringify(j)));
    for (const part of chunks(cps, 8192)) {
      const text = part.map((c) => `x${String.fromCodePoint(c)}`).join('');
      const want = oracle.normalizeString(text), got = tok.normalize(text);
      if (got !== want) {
        const bad = part.find((c) => tok.normalize(`x${String.fromCodePoint(c)}`) !== oracle.normalizeString(`x${String.fromCodePoint(c)}`));
        assert.fail(`${step}: U+${bad?.toString(16).toUpperCase()}: ${JSON.stringify(tok.normalize(`x${String.fromCodePoint(bad)}`))} vs ${JSON.stringify(oracle.normalizeString(`x${String.fromCodePoint(bad)}`))}`);
      }
    }
    tok.dispose();
  }
});

test('every code point between letters through the whole pipeline (pre-tokenizer tables too)', async () => {
  const cps = allCodePoints();
  for (const name of ['bge-small-en-v1.5', 'no-normalizer', 'cased']) {
    const tok = rt.loadTokenizer(enc.encode(json[name])), oracle = Oracle.fromString(json[name]);
    oracle.disableTruncation();
    for (const part of chunks(cps, 4096)) {
      const text = part.map((c) => `a${String.fromCodePoint(c)}b`).join(' ');
      same(tok.encode(text, { truncation: false }), await oracle.encode(text), `${name}: U+${part[0].toString(16)}..U+${part[part.length - 1].toString(16)}`);
    }
    tok.dispose();
  }
});

test('combining sequences are reordered canonically before accents are stripped', async () => {
  // marks of classes 220 and 230 around marks that survive the strip (U+1D165 216, U+0F39 216 ...)
  const marks = [0x316, 0x301, 0x1d165, 0x1d16d, 0x1d167, 0x34f, 0xf39, 0x1e944, 0x302a, 0x5b0, 0x93c, 0x0345, 0x1dc0];
  const r = rng(3), texts = [];
  for (let i = 0; i < 3000; i++) {
    let s = 'a';
    const n = 1 + Math.floor(r() * 6);
    for (let k = 0; k < n; k++) s += String.fromCodePoint(marks[Math.floor(r() * marks.length)]);
    texts.push(s + (r() < 0.5 ? 'ᾂ' : ''));
  }
  const oracle = bertNormalizer({ stripAccents: true, lowercase: false, cleanText: false, handleChineseChars: false });
  const j = JSON.parse(json.cased);
  j.normalizer.strip_accents = true;
  const tok = rt.loadTokenizer(enc.encode(JSON.stringify(j)));
  for (const t of texts) assert.equal(tok.normalize(t), oracle.normalizeString(t), JSON.stringify(t));
  assert.equal(tok.normalize('a' + '\u{1d165}'.repeat(5000) + '\u0316'), oracle.normalizeString('a' + '\u{1d165}'.repeat(5000) + '\u0316'));
  tok.dispose();
});

// --------------------------------------------------------------- vocab.txt, decode, builds, CLI

test('vocab.txt (+ tokenizer_config.json) tokenizes as the equivalent tokenizer.json', async () => {
  const txt = enc.encode(vocab.join('\n') + '\n');
  const configs = [
    [null, VARIANTS['bge-small-en-v1.5']],
    [{ do_lower_case: false }, VARIANTS.cased],
    [{ do_lower_case: true, tokenize_chinese_chars: false, model_max_length: 512, tokenizer_class: 'BertTokenizer' }, VARIANTS['no-chinese-chars']],
    [{ do_lower_case: true, strip_accents: false, cls_token: { content: '[CLS]', __type: 'AddedToken' } }, VARIANTS['lowercase-no-strip']],
  ];
  for (const [config, equivalent] of configs) {
    const files = { 'vocab.txt': txt };
    if (config) files['tokenizer_config.json'] = enc.encode(JSON.stringify(config));
    const tok = rt.loadTokenizer(files);
    const oracle = Oracle.fromString(JSON.stringify({ ...equivalent, truncation: null, padding: null }));
    const texts = TEXTS.slice(0, 1500);
    const want = await oracle.encodeBatch(texts), got = tok.encodeBatch(texts);
    for (let i = 0; i < texts.length; i++) same(got[i], want[i], `vocab.txt ${JSON.stringify(config)}: ${JSON.stringify(texts[i])}`);
    if (config?.model_max_length) assert.equal(tok.info.maxLength, 512);
    tok.dispose();
  }
  const crlf = rt.loadTokenizer(enc.encode(vocab.join('\r\n')));
  assert.deepEqual([...crlf.encode('Hello, World!').ids], [101, 7592, 1010, 2088, 999, 102]);
  assert.equal(rt.loadTokenizer(txt).info.source, 'vocab.txt', 'bare bytes that are not JSON: vocab.txt');
});

test('decode follows the WordPiece decoder, with and without special tokens', async () => {
  for (const name of ['bge-small-en-v1.5', 'cased', 'no-post-processor']) {
    const tok = rt.loadTokenizer(enc.encode(json[name])), oracle = oracles[name];
    for (const t of TEXTS.filter((_, i) => i % 5 === 0)) {
      const ids = [...tok.encode(t, { truncation: false }).ids];
      for (const skip of [false, true]) assert.equal(tok.decode(ids, { skipSpecialTokens: skip }), await oracle.decode(ids, skip), `${name} ${skip}: ${JSON.stringify(t)}`);
    }
    const odd = [1012, 1005, 1056, 2079, 2025, 1005, 1049, 1005, 1055, 2310, 1005, 2128, 1029, 999, 1010, 100, 103, 0, 2000];
    assert.equal(tok.decode(odd), await oracle.decode(odd, false));
    assert.equal(tok.idToToken(7592), 'hello');
    assert.equal(tok.idToToken(30522), null);
    assert.throws(() => tok.decode([30522]), { code: 'INVALID_ARGUMENT', message: /ids\[0\] = 30522 is no token/ });
    tok.dispose();
  }
});

test('added tokens outside the vocabulary, special or not, take the ids after it (as Rust tokenizers gives them)', async () => {
  const j = JSON.parse(json['bge-small-en-v1.5']);
  const flags = { single_word: false, lstrip: false, rstrip: false, normalized: false };
  j.added_tokens.push({ id: 30522, content: '[ENT]', ...flags, special: true }, { id: 30523, content: '<x>', ...flags, special: false },
    { id: 30524, content: '[/ENT]', ...flags, special: true });
  const text = JSON.stringify(j), tok = rt.loadTokenizer(enc.encode(text)), oracle = Oracle.fromString(text);
  for (const t of ['hello [ENT] world [/ENT] <x>', '[ENT][ENT]x<x>y', 'no added tokens', '[ent] is not [ENT]', TEXTS[3]]) {
    const want = await oracle.encode(t, null);
    same(tok.encode(t), want, JSON.stringify(t));
    const ids = [...tok.encode(t).ids];
    for (const skip of [false, true]) assert.equal(tok.decode(ids, { skipSpecialTokens: skip }), await oracle.decode(ids, skip), `${JSON.stringify(t)} ${skip}`);
  }
  assert.deepEqual([tok.idToToken(30522), tok.idToToken(30523), tok.idToToken(30524), tok.idToToken(30525)], ['[ENT]', '<x>', '[/ENT]', null]);
  // an id that is not the next one is refused, as before
  j.added_tokens.push({ id: 30526, content: '[GAP]', ...flags, special: true });
  assert.throws(() => rt.loadTokenizer(enc.encode(JSON.stringify(j))), (e) => e.code === 'BAD_HEADER' && /"\[GAP\]" has id 30526, but its id is 30525 \(the next one after the vocabulary\)/.test(e.message));
  tok.dispose();
});

test('added tokens with normalized: true (what add_tokens() writes) match in normalized text; decode and idToToken give their normalized form, as Rust', async () => {
  const flags = { single_word: false, lstrip: false, rstrip: false };
  const texts = ['covid-19 and COVID-19 and Covid-19s', 'CAFÉ cafe café Cafe\u0301', 'hello<ent>covid<ent>HELLO', '日本語 日本', 'xcovidx covidcovid',
    'nothing here', '', 'COVID', 'Ｃｏｖｉｄ wide letters', 'a long text ' + 'covid café hello world 日本 '.repeat(12), ...TEXTS.slice(0, 40)];
  for (const name of ['bge-small-en-v1.5', 'cased', 'strip-no-lowercase', 'left-truncation-24', 'no-normalizer']) {
    const j = JSON.parse(json[name]);
    j.added_tokens.push({ id: 30522, content: 'COVID-19', ...flags, normalized: true, special: false },
      { id: 30523, content: 'Café', ...flags, normalized: true, special: true }, // special: skipped only when its normalized form is a special's content
      { id: 30524, content: '<ent>', ...flags, normalized: false, special: true },
      { id: 30525, content: 'covid', ...flags, normalized: true, special: false },
      { id: 30526, content: '日本', ...flags, normalized: true, special: false },
      { id: 7592, content: 'hello', ...flags, normalized: true, special: false }); // one in the vocabulary
    const { tok, oracle } = await agreeOnTexts(j, texts, name);
    for (const id of [30522, 30523, 30524, 30525, 30526, 7592, 101]) assert.equal(tok.idToToken(id), oracle.idToToken(id), `${name}: idToToken(${id})`);
    tok.dispose();
  }
});

test('added tokens with lstrip / rstrip take the White_Space beside them, in raw and in normalized text, as Rust', async () => {
  const texts = ['a <l> b', 'a\u3000\u00a0<l>b', 'x<r>   y', '<lr>', '  <lr>  ', 'hello [MASK] world', 'hello[MASK]world', 'a <l><r> b',
    'a <r> <l> b', 'covid  covid\tcovid\ncovid', ' Covid ', 'x\u2028<lr>\u2029y', '<l>', '   <l>', '<r>   ', 'mid <l>word and word<r> end',
    'nothing here', '', 'COVID <l> [MASK] <r> café', 'a long text ' + '<l> covid [MASK] <r> x '.repeat(10), ...TEXTS.slice(0, 30)];
  const flags = (o) => ({ single_word: false, lstrip: false, rstrip: false, normalized: false, special: false, ...o });
  for (const name of ['bge-small-en-v1.5', 'no-pre-tokenizer', 'no-normalizer', 'cased', 'left-truncation-24']) {
    const j = JSON.parse(json[name]);
    for (const a of j.added_tokens) if (a.content === '[MASK]') a.lstrip = true; // (as RoBERTa's and MPNet's <mask>)
    j.added_tokens.push({ id: 30522, content: '<l>', ...flags({ lstrip: true, special: true }) },
      { id: 30523, content: '<r>', ...flags({ rstrip: true }) },
      { id: 30524, content: '<lr>', ...flags({ lstrip: true, rstrip: true, special: true }) },
      { id: 30525, content: 'covid', ...flags({ lstrip: true, rstrip: true, normalized: true }) });
    (await agreeOnTexts(j, texts, name)).tok.dispose();
  }
  // single_word stays refused, naming the token
  const j = JSON.parse(json['bge-small-en-v1.5']);
  j.added_tokens.push({ id: 30522, content: '<w>', ...flags({ single_word: true }) });
  assert.throws(() => rt.loadTokenizer(enc.encode(JSON.stringify(j))), (e) => e.code === 'UNSUPPORTED' && /added_tokens\[5\] \("<w>"\): single_word: true is not supported/.test(e.message));
});

test('the SIMD128, scalar and relaxed builds give the same encodings', () => {
  const toks = Object.fromEntries(Object.entries(builds).map(([k, b]) => [k, b.loadTokenizer(enc.encode(json['e5-small-v2']))]));
  assert.equal(builds.relaxed.build.relaxed, true);
  assert.equal(builds.scalar.build.simd, false);
  const texts = TEXTS.slice(0, 3000);
  const ref = toks.simd.encodeBatch(texts);
  for (const k of ['scalar', 'relaxed']) {
    const got = toks[k].encodeBatch(texts);
    for (let i = 0; i < texts.length; i++) assert.deepEqual(got[i], ref[i], `${k}: ${JSON.stringify(texts[i])}`);
    for (const t of texts.slice(0, 300)) assert.equal(toks[k].normalize(t), toks.simd.normalize(t));
  }
});

test('invalid text: INVALID_UTF8 with the byte offset, never replaced', () => {
  const tok = rt.loadTokenizer(enc.encode(json.cased));
  const cases = [[[0x61, 0x62, 0xff], 2], [[0xc3], 0], [[0x61, 0xe2, 0x82], 1], [[0xed, 0xa0, 0x80], 0], [[0xc0, 0x80], 0],
    [[0xf4, 0x90, 0x80, 0x80], 0], [[0x68, 0x69, 0x20, 0x80], 3]];
  for (const [bytes, at] of cases) {
    assert.throws(() => tok.encode(new Uint8Array(bytes)), { code: 'INVALID_UTF8', message: new RegExp(`at byte ${at}$`) }, JSON.stringify(bytes));
    assert.throws(() => tok.encode('ok', { pair: new Uint8Array(bytes) }), { code: 'INVALID_UTF8', message: /pair is not valid UTF-8/ });
  }
  assert.throws(() => tok.encode('a\ud800b'), { code: 'INVALID_UTF8', message: /lone surrogate/ });
  assert.throws(() => tok.encodeBatch(['ok', new Uint8Array([0xff])]), { code: 'INVALID_UTF8', message: /batch row 1/ });
  assert.deepEqual([...tok.encode(enc.encode('Hello')).ids], [...tok.encode('Hello').ids]);
  tok.dispose();
  assert.throws(() => tok.encode('x'), { code: 'DISPOSED' });
});

test('the native CLI prints the same ids (mlrt tokenize)', { skip: !existsSync(new URL('build/mlrt', root)) }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mlrt-tok-'));
  const file = join(dir, 'tokenizer.json');
  writeFileSync(file, json['bge-small-en-v1.5']);
  const texts = TEXTS.slice(0, 400).map((t) => t.replace(/[\n\r\u0085\u2028\u2029\u000b\u000c]/g, ' '));
  writeFileSync(join(dir, 'in.txt'), texts.join('\n') + '\n');
  const out = execFileSync(new URL('build/mlrt', root).pathname, ['tokenize', file, '--input', join(dir, 'in.txt')], { encoding: 'utf8', maxBuffer: 1 << 26 });
  const lines = out.trimEnd().split('\n');
  const oracle = oracles['bge-small-en-v1.5'];
  const want = await oracle.encodeBatch(texts);
  assert.equal(lines.length, texts.length);
  for (let i = 0; i < texts.length; i++) assert.deepEqual(JSON.parse(lines[i]).ids, want[i].getIds(), JSON.stringify(texts[i]));
});

test('the Node and WASI CLIs print the same ids (mlrt tokenize, mlrt-wasi tokenize)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mlrt-tok-'));
  writeFileSync(join(dir, 'tokenizer.json'), json['bge-small-en-v1.5']);
  writeFileSync(join(dir, 'vocab.txt'), vocab.join('\n') + '\n');
  const oracle = oracles['bge-small-en-v1.5'];
  const text = 'Héllo, Wörld! [MASK] abc中文xyz don’t';
  const want = (await oracle.encode(text)).getIds();
  for (const [cli, tok] of [['tools/mlrt.mjs', join(dir, 'tokenizer.json')], ['tools/mlrt.mjs', dir], ['tools/mlrt-wasi.mjs', join(dir, 'tokenizer.json')]]) {
    const out = execFileSync(process.execPath, [new URL(cli, root).pathname, 'tokenize', tok, text], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    const got = JSON.parse(out);
    assert.deepEqual(got.ids, want, `${cli} ${tok}`);
    assert.equal(got.tokens[0], '[CLS]');
  }
  writeFileSync(join(dir, 'in.txt'), 'hello world\nA la carte\r\n\n');
  const lines = execFileSync(process.execPath, [new URL('tools/mlrt.mjs', root).pathname, 'tokenize', dir, '--input', join(dir, 'in.txt'), '--max-length', '3'],
    { encoding: 'utf8' }).trim().split('\n').map((l) => JSON.parse(l).ids);
  assert.deepEqual(lines, [[101, 7592, 102], [101, 1037, 102], [101, 102]]);
});
