// Malformed tokenizer files (issue 20): every class of fault in tokenizer.json, vocab.txt and
// tokenizer_config.json is refused with its stable code and a message that names the field
// (and says what was wrong). Built from a small valid tokenizer.json, one fault per case.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRuntime } from '../wasm/mlrt.mjs';
import { bertTokenizerJson } from '../tools/text/bert-vocab.mjs';

const rt = await createRuntime();
const enc = new TextEncoder();
const VOCAB = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', 'hello', 'world', '##s'];
const base = () => JSON.parse(JSON.stringify(bertTokenizerJson(VOCAB)));
const bytes = (j) => enc.encode(typeof j === 'string' ? j : JSON.stringify(j));
const edit = (f) => { const j = base(); f(j); return j; };

function refused(files, code, message) {
  assert.throws(() => rt.loadTokenizer(files), (e) => {
    assert.equal(e.name, 'MlrtError');
    assert.equal(e.code, code, e.message);
    assert.match(e.message, message);
    return true;
  });
}

test('a valid small tokenizer.json loads (the matrix starts from it)', () => {
  const tok = rt.loadTokenizer(bytes(base()));
  assert.deepEqual([...tok.encode('Hello worlds').ids], [2, 5, 6, 7, 3]);
  assert.equal(tok.info.vocabSize, 8);
  assert.deepEqual(tok.info.specialTokens, { '[PAD]': 0, '[UNK]': 1, '[CLS]': 2, '[SEP]': 3, '[MASK]': 4 });
  tok.dispose();
});

const JSON_CASES = [
  // bytes and syntax
  ['not UTF-8', () => { const b = bytes(base()); b[40] = 0xff; return b; }, 'INVALID_UTF8', /^loadTokenizer: tokenizer\.json: not valid UTF-8 at byte 40$/],
  ['truncated JSON', () => bytes(JSON.stringify(base()).slice(0, 300)), 'INVALID_JSON', /tokenizer\.json: invalid JSON at byte 300/],
  ['trailing garbage', () => bytes(JSON.stringify(base()) + 'x'), 'INVALID_JSON', /tokenizer\.json: invalid JSON/],
  ['a token twice in model.vocab', () => bytes(JSON.stringify(base()).replace('"world":6', '"world":6,"hello":5')), 'DUPLICATE_KEY', /tokenizer\.json: duplicate key 'hello'/],
  // top level
  ['an array at the top', () => bytes('[]'), 'BAD_HEADER', /the top level: expected an object, got array/],
  ['an unknown top-level key', () => edit((j) => { j.extra = 1; }), 'BAD_HEADER', /unknown top-level key 'extra'/],
  ['version 2.0', () => edit((j) => { j.version = '2.0'; }), 'UNSUPPORTED_VERSION', /version "2\.0"/],
  ['version as a number', () => edit((j) => { j.version = 1; }), 'BAD_HEADER', /version: expected a string, got number/],
  ['no model', () => edit((j) => { delete j.model; }), 'BAD_HEADER', /model: expected an object, got nothing/],
  ['model null', () => edit((j) => { j.model = null; }), 'BAD_HEADER', /model: expected an object, got null/],
  ['added_tokens null', () => edit((j) => { j.added_tokens = null; }), 'BAD_HEADER', /added_tokens: expected an array, got null/],
  ['normalizer a string', () => edit((j) => { j.normalizer = 'Bert'; }), 'BAD_HEADER', /normalizer: expected an object or null, got string/],
  // model
  ['BPE', () => edit((j) => { j.model.type = 'BPE'; }), 'UNSUPPORTED', /model: type 'BPE' is not supported/],
  ['Unigram', () => edit((j) => { j.model.type = 'Unigram'; }), 'UNSUPPORTED', /model: type 'Unigram' is not supported/],
  ['WordLevel', () => edit((j) => { j.model.type = 'WordLevel'; }), 'UNSUPPORTED', /model: type 'WordLevel'/],
  ['an unknown model type', () => edit((j) => { j.model.type = 'Magic'; }), 'BAD_HEADER', /model: unknown type 'Magic'/],
  ['no vocab', () => edit((j) => { delete j.model.vocab; }), 'BAD_HEADER', /model\.vocab: expected an object, got nothing/],
  ['an empty vocab', () => edit((j) => { j.model.vocab = {}; }), 'BAD_HEADER', /model\.vocab: the vocabulary is empty/],
  ['an id as a string', () => edit((j) => { j.model.vocab.hello = '5'; }), 'BAD_HEADER', /model\.vocab: token "hello": the id must be a non-negative integer, got string/],
  ['a negative id', () => edit((j) => { j.model.vocab.hello = -5; }), 'BAD_HEADER', /token "hello": the id must be a non-negative integer/],
  ['a fractional id', () => edit((j) => { j.model.vocab.hello = 5.5; }), 'BAD_HEADER', /token "hello": the id must be a non-negative integer/],
  ['ids with a hole', () => edit((j) => { j.model.vocab.hello = 9; }), 'BAD_HEADER', /model\.vocab: token "hello" has id 9, but ids must be 0\.\.7/],
  ['an id twice', () => edit((j) => { j.model.vocab.hello = 6; }), 'BAD_HEADER', /model\.vocab: tokens "(hello|world)" and "(hello|world)" both have id 6/],
  ['unk_token not in the vocab', () => edit((j) => { j.model.unk_token = '<unk>'; }), 'BAD_HEADER', /model\.unk_token: "<unk>" is not in model\.vocab/],
  ['no unk_token', () => edit((j) => { delete j.model.unk_token; }), 'BAD_HEADER', /model\.unk_token: expected a string, got nothing/],
  ['max_input_chars_per_word -1', () => edit((j) => { j.model.max_input_chars_per_word = -1; }), 'BAD_HEADER', /model\.max_input_chars_per_word: -1 is not an integer/],
  ['max_input_chars_per_word "100"', () => edit((j) => { j.model.max_input_chars_per_word = '100'; }), 'BAD_HEADER', /model\.max_input_chars_per_word: expected a number, got string/],
  ['continuing_subword_prefix a number', () => edit((j) => { j.model.continuing_subword_prefix = 2; }), 'BAD_HEADER', /model\.continuing_subword_prefix: expected a string/],
  // normalizer, pre-tokenizer, decoder
  ['a normalizer Sequence', () => edit((j) => { j.normalizer = { type: 'Sequence', normalizers: [] }; }), 'UNSUPPORTED', /normalizer: type 'Sequence' is not supported/],
  ['an NFKC normalizer', () => edit((j) => { j.normalizer = { type: 'NFKC' }; }), 'UNSUPPORTED', /normalizer: type 'NFKC'/],
  ['an unknown normalizer', () => edit((j) => { j.normalizer.type = 'Bertish'; }), 'BAD_HEADER', /normalizer: unknown type 'Bertish'/],
  ['a normalizer without type', () => edit((j) => { delete j.normalizer.type; }), 'BAD_HEADER', /normalizer\.type: expected a string, got nothing/],
  ['no clean_text', () => edit((j) => { delete j.normalizer.clean_text; }), 'BAD_HEADER', /normalizer\.clean_text: expected a boolean, got nothing/],
  ['lowercase "yes"', () => edit((j) => { j.normalizer.lowercase = 'yes'; }), 'BAD_HEADER', /normalizer\.lowercase: expected a boolean, got string/],
  ['strip_accents 1', () => edit((j) => { j.normalizer.strip_accents = 1; }), 'BAD_HEADER', /normalizer\.strip_accents: expected a boolean or null, got number/],
  ['a ByteLevel pre-tokenizer', () => edit((j) => { j.pre_tokenizer = { type: 'ByteLevel', add_prefix_space: false }; }), 'UNSUPPORTED', /pre_tokenizer: type 'ByteLevel' is not supported/],
  ['a Metaspace pre-tokenizer', () => edit((j) => { j.pre_tokenizer = { type: 'Metaspace', replacement: '▁' }; }), 'UNSUPPORTED', /pre_tokenizer: type 'Metaspace'/],
  ['a Whitespace pre-tokenizer', () => edit((j) => { j.pre_tokenizer = { type: 'Whitespace' }; }), 'UNSUPPORTED', /pre_tokenizer: type 'Whitespace'/],
  ['a ByteLevel decoder', () => edit((j) => { j.decoder = { type: 'ByteLevel' }; }), 'UNSUPPORTED', /decoder: type 'ByteLevel' is not supported/],
  ['a Metaspace decoder', () => edit((j) => { j.decoder = { type: 'Metaspace' }; }), 'UNSUPPORTED', /decoder: type 'Metaspace'/],
  ['a decoder without cleanup', () => edit((j) => { delete j.decoder.cleanup; }), 'BAD_HEADER', /decoder\.cleanup: expected a boolean, got nothing/],
  // post-processor
  ['RobertaProcessing without cls', () => edit((j) => { j.post_processor = { type: 'RobertaProcessing' }; }), 'BAD_HEADER',
    /post_processor\.cls: expected an array, got nothing/],
  ['RobertaProcessing with a bad cls', () => edit((j) => { j.post_processor = { type: 'RobertaProcessing', cls: ['[CLS]'], sep: ['[SEP]', 1],
    trim_offsets: true, add_prefix_space: true }; }), 'BAD_HEADER', /post_processor\.cls: expected \[token, id\]/],
  ['a ByteLevel post-processor', () => edit((j) => { j.post_processor = { type: 'ByteLevel' }; }), 'UNSUPPORTED', /post_processor: type 'ByteLevel'/],
  ['a template naming an unknown token', () => edit((j) => { j.post_processor.single[0].SpecialToken.id = '[BOS]'; }), 'BAD_HEADER',
    /post_processor\.single\[0\]\.SpecialToken: special token "\[BOS\]" is not in post_processor\.special_tokens/],
  ['a template without A', () => edit((j) => { j.post_processor.single.splice(1, 1); }), 'BAD_HEADER', /post_processor\.single: must hold sequence A once and no sequence B/],
  ['a single template with B', () => edit((j) => { j.post_processor.single[1].Sequence.id = 'B'; }), 'BAD_HEADER', /post_processor\.single: must hold sequence A once/],
  ['a sequence C', () => edit((j) => { j.post_processor.pair[3].Sequence.id = 'C'; }), 'BAD_HEADER', /post_processor\.pair\[3\]\.Sequence\.id: "C" \(expected "A" or "B"\)/],
  ['an unknown piece', () => edit((j) => { j.post_processor.pair[0] = { Special: { id: '[CLS]', type_id: 0 } }; }), 'BAD_HEADER', /post_processor\.pair\[0\]: unknown piece 'Special'/],
  ['a negative type_id', () => edit((j) => { j.post_processor.pair[3].Sequence.type_id = -1; }), 'BAD_HEADER', /post_processor\.pair\[3\]\.Sequence\.type_id: -1 is not an integer/],
  ['special ids and tokens of different lengths', () => edit((j) => { j.post_processor.special_tokens['[CLS]'].ids = [2, 3]; }), 'BAD_HEADER',
    /special_tokens\["\[CLS\]"\]: 2 ids and 1 tokens/],
  ['a special id that is not its token\'s', () => edit((j) => { j.post_processor.special_tokens['[CLS]'].ids = [5]; }), 'BAD_HEADER',
    /special_tokens\["\[CLS\]"\]: token "\[CLS\]" has another id, but the file gives id 5/],
  ['a special token missing from the vocab', () => edit((j) => { j.post_processor.special_tokens['[CLS]'].tokens = ['<s>']; }), 'BAD_HEADER',
    /token "<s>" is not in the vocabulary/],
  ['a special token whose id differs from its key', () => edit((j) => { j.post_processor.special_tokens['[CLS]'].id = '[SEP]'; }), 'BAD_HEADER', /its id differs from its key/],
  ['BertProcessing with a wrong id', () => edit((j) => { j.post_processor = { type: 'BertProcessing', sep: ['[SEP]', 3], cls: ['[CLS]', 7] }; }), 'BAD_HEADER',
    /post_processor\.cls: token "\[CLS\]" has another id, but the file gives id 7/],
  ['BertProcessing with a bad pair', () => edit((j) => { j.post_processor = { type: 'BertProcessing', sep: ['[SEP]'], cls: ['[CLS]', 2] }; }), 'BAD_HEADER',
    /post_processor\.(sep|cls): expected \[token, id\]/],
  // added tokens
  ['an added token without special', () => edit((j) => { delete j.added_tokens[0].special; }), 'BAD_HEADER', /added_tokens\[0\]\.special: expected a boolean, got nothing/],
  ['an added token with single_word', () => edit((j) => { j.added_tokens[1].single_word = true; }), 'UNSUPPORTED', /added_tokens\[1\] \("\[UNK\]"\): single_word: true is not supported/],
  ['an added token with lstrip "yes"', () => edit((j) => { j.added_tokens[4].lstrip = 'yes'; }), 'BAD_HEADER', /added_tokens\[4\]\.lstrip: expected a boolean, got string/],
  ['an added token with another id', () => edit((j) => { j.added_tokens[2].id = 7; }), 'BAD_HEADER', /added_tokens\[2\]: "\[CLS\]" has id 7, but its id is 2 \(its id in model\.vocab\)/],
  ['a special added token outside the vocab with a skipped id', () => edit((j) => { j.added_tokens.push({ id: 9, content: '<x>', single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }); }),
    'BAD_HEADER', /added_tokens\[5\]: "<x>" has id 9, but its id is 8 \(the next one after the vocabulary\)/],
  ['a non-special added token with a skipped id', () => edit((j) => { j.added_tokens.push({ id: 9, content: '<x>', single_word: false, lstrip: false, rstrip: false, normalized: false, special: false }); }),
    'BAD_HEADER', /"<x>" has id 9, but its id is 8 \(the next one after the vocabulary\)/],
  ['an added token twice', () => edit((j) => { j.added_tokens.push({ ...j.added_tokens[0] }); }), 'DUPLICATE_KEY', /added_tokens\[5\]: "\[PAD\]" is also added_tokens\[0\]/],
  ['an empty added token', () => edit((j) => { j.added_tokens.push({ id: 8, content: '', single_word: false, lstrip: false, rstrip: false, normalized: false, special: false }); }),
    'BAD_HEADER', /added_tokens\[5\]\.content: 0 bytes/],
  ['an added token that is no object', () => edit((j) => { j.added_tokens[0] = '[PAD]'; }), 'BAD_HEADER', /added_tokens\[0\]: expected an object, got string/],
  // truncation, padding
  ['truncation.max_length 1', () => edit((j) => { j.truncation = { max_length: 1, strategy: 'LongestFirst', stride: 0 }; }), 'BAD_HEADER',
    /truncation\.max_length 1 is less than the 2 tokens the post-processor adds/],
  ['an unknown truncation strategy', () => edit((j) => { j.truncation = { max_length: 8, strategy: 'Longest', stride: 0 }; }), 'BAD_HEADER', /truncation\.strategy: "Longest"/],
  ['truncation without stride', () => edit((j) => { j.truncation = { max_length: 8, strategy: 'LongestFirst' }; }), 'BAD_HEADER', /truncation\.stride: expected a number, got nothing/],
  ['truncation direction Up', () => edit((j) => { j.truncation = { max_length: 8, strategy: 'LongestFirst', stride: 0, direction: 'Up' }; }), 'BAD_HEADER',
    /truncation\.direction: "Up" \(expected "Left" or "Right"\)/],
  ['an unknown padding strategy', () => edit((j) => { j.padding = { strategy: 'Longest', direction: 'Right', pad_id: 0, pad_type_id: 0, pad_token: '[PAD]' }; }), 'BAD_HEADER',
    /padding\.strategy: expected "BatchLongest" or \{"Fixed": n\}/],
  ['padding without direction', () => edit((j) => { j.padding = { strategy: 'BatchLongest', pad_id: 0, pad_type_id: 0, pad_token: '[PAD]' }; }), 'BAD_HEADER',
    /padding\.direction: expected a string, got nothing/],
  ['pad_token with another id than pad_id', () => edit((j) => { j.padding = { strategy: 'BatchLongest', direction: 'Right', pad_id: 5, pad_type_id: 0, pad_token: '[PAD]' }; }), 'BAD_HEADER',
    /padding\.pad_token: token "\[PAD\]" has another id, but the file gives id 5/],
  ['pad_to_multiple_of "8"', () => edit((j) => { j.padding = { strategy: 'BatchLongest', direction: 'Right', pad_id: 0, pad_type_id: 0, pad_token: '[PAD]', pad_to_multiple_of: '8' }; }),
    'BAD_HEADER', /padding\.pad_to_multiple_of: expected a number, got string/],
  ['Fixed padding of -1', () => edit((j) => { j.padding = { strategy: { Fixed: -1 }, direction: 'Right', pad_id: 0, pad_type_id: 0, pad_token: '[PAD]' }; }), 'BAD_HEADER',
    /padding\.strategy\.Fixed: -1 is not an integer/],
];

for (const [name, make, code, message] of JSON_CASES) {
  test(`tokenizer.json: ${name} -> ${code}`, () => {
    refused({ 'tokenizer.json': make() instanceof Uint8Array ? make() : bytes(make()) }, code, message);
  });
}

test('what Rust accepts loads too: strip_accents null or absent, no truncation direction, no pad_to_multiple_of, no model type, unknown keys inside components', () => {
  const ok = [
    edit((j) => { delete j.normalizer.strip_accents; }),
    edit((j) => { j.truncation = { max_length: 8, strategy: 'LongestFirst', stride: 0 }; }),
    edit((j) => { j.padding = { strategy: { Fixed: 8 }, direction: 'Left', pad_id: 0, pad_type_id: 0, pad_token: '[PAD]' }; }),
    edit((j) => { delete j.model.type; j.model.extra = 1; j.normalizer.extra = true; }),
    edit((j) => { delete j.version; j.decoder = null; j.post_processor = null; j.pre_tokenizer = null; j.normalizer = null; }),
  ];
  for (const j of ok) rt.loadTokenizer(bytes(j)).dispose();
});

const VOCAB_TXT = VOCAB.join('\n') + '\n';
const VOCAB_CASES = [
  ['an empty file', enc.encode(''), null, 'BAD_HEADER', /vocab\.txt: the file is empty/],
  ['not UTF-8', Uint8Array.of(...enc.encode('[PAD]\n[UNK]\n'), 0x80, 0x0a), null, 'INVALID_UTF8', /vocab\.txt: not valid UTF-8 at byte 12/],
  ['an empty line', enc.encode('[PAD]\n[UNK]\n\n[CLS]\n'), null, 'BAD_HEADER', /vocab\.txt: line 3 is empty/],
  ['a token twice', enc.encode(VOCAB_TXT + 'hello\n'), null, 'DUPLICATE_KEY', /vocab\.txt: line 9 repeats line 6 \("hello"\)/],
  ['no [UNK]', enc.encode(VOCAB_TXT.replace('[UNK]', '<unk>')), null, 'BAD_HEADER', /vocab\.txt: the unk_token "\[UNK\]" is not in the vocabulary/],
  ['no [MASK]', enc.encode(VOCAB_TXT.replace('[MASK]', '[MSK]')), null, 'BAD_HEADER', /mask_token "\[MASK\]" is not in the vocabulary/],
  ['a config that is not JSON', enc.encode(VOCAB_TXT), '{"do_lower_case": tru}', 'INVALID_JSON', /tokenizer_config\.json: invalid JSON/],
  ['a config that is no object', enc.encode(VOCAB_TXT), '[]', 'BAD_HEADER', /tokenizer_config\.json: expected an object, got array/],
  ['do_lower_case "yes"', enc.encode(VOCAB_TXT), '{"do_lower_case":"yes"}', 'BAD_HEADER', /tokenizer_config\.json: do_lower_case: expected a boolean, got string/],
  ['strip_accents 0', enc.encode(VOCAB_TXT), '{"strip_accents":0}', 'BAD_HEADER', /strip_accents: expected a boolean or null/],
  ['a GPT-2 tokenizer_class', enc.encode(VOCAB_TXT), '{"tokenizer_class":"GPT2Tokenizer"}', 'UNSUPPORTED', /tokenizer_class: 'GPT2Tokenizer'/],
  ['model_max_length "512"', enc.encode(VOCAB_TXT), '{"model_max_length":"512"}', 'BAD_HEADER', /model_max_length: expected a number, got string/],
  ['an unk_token object without content', enc.encode(VOCAB_TXT), '{"unk_token":{"text":"[UNK]"}}', 'BAD_HEADER', /unk_token: expected a token/],
  ['an unk_token not in the vocab', enc.encode(VOCAB_TXT), '{"unk_token":"<unk>"}', 'BAD_HEADER', /vocab\.txt: the unk_token "<unk>" is not in the vocabulary/],
];

for (const [name, vocab, config, code, message] of VOCAB_CASES) {
  test(`vocab.txt: ${name} -> ${code}`, () => {
    const files = { 'vocab.txt': vocab };
    if (config !== null) files['tokenizer_config.json'] = enc.encode(config);
    refused(files, code, message);
  });
}

test('loadTokenizer refuses what is no tokenizer', () => {
  refused({ 'config.json': enc.encode('{}') }, 'INVALID_ARGUMENT', /no tokenizer\.json or vocab\.txt among the 1 files/);
  refused('tokenizer.json', 'INVALID_ARGUMENT', /expected the bytes of a tokenizer\.json/);
  refused({ 'tokenizer.json': 'text' }, 'INVALID_ARGUMENT', /'tokenizer\.json': expected a Uint8Array/);
  const tok = rt.loadTokenizer(bytes(base()));
  assert.throws(() => tok.encode('x', { truncation: 'sideways' }), { code: 'INVALID_ARGUMENT', message: /truncation must be/ });
  assert.throws(() => tok.encode('x', { padding: 'max_length' }), { code: 'INVALID_ARGUMENT', message: /padding to max_length needs max_length/ });
  assert.throws(() => tok.encode('x', { truncation: true }), { code: 'INVALID_ARGUMENT', message: /truncation needs max_length/ });
  assert.throws(() => tok.encode('x y', { maxLength: 1 }), { code: 'INVALID_ARGUMENT', message: /max_length 1 is less than the 2 special tokens/ });
  assert.throws(() => tok.encode(5), { code: 'INVALID_ARGUMENT' });
  assert.throws(() => tok.decode([1.5]), { code: 'INVALID_ARGUMENT' });
  assert.throws(() => tok.encodeBatch(['a', ['b', 'c']]), { code: 'INVALID_ARGUMENT', message: /every text is a \[text, pair\]/ });
  tok.dispose();
});
