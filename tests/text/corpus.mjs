// corpus.mjs — the tokenizer tests' inputs: the tokenizer.json variants of the target models built
// on bert-base-uncased's vocabulary, and a seeded corpus of texts covering every case of the spec's
// list (../shared/specs/bert-encoder.md §6 and issue 20). Shared by tests/tokenizer*.test.mjs and
// bench/tokenizer.mjs.
import { bertUncasedVocab, bertTokenizerJson } from '../../tools/text/bert-vocab.mjs';

export const vocab = bertUncasedVocab();

const FIXED_128 = { strategy: { Fixed: 128 }, direction: 'Right', pad_to_multiple_of: null, pad_id: 0, pad_type_id: 0, pad_token: '[PAD]' };

/** name -> tokenizer.json object. The four target models as the spec describes them, and variants. */
export function variants() {
  const v = (opts, edit) => { const j = bertTokenizerJson(vocab, opts); edit?.(j); return j; };
  return {
    // all-MiniLM-L6-v2: truncation and padding baked in (no direction key in its truncation)
    'all-MiniLM-L6-v2': v({ truncation: { max_length: 128, strategy: 'LongestFirst', stride: 0 }, padding: FIXED_128 }),
    'bge-small-en-v1.5': v({ truncation: { direction: 'Right', max_length: 512, strategy: 'LongestFirst', stride: 0 } }),
    'e5-small-v2': v({ truncation: { max_length: 512, strategy: 'LongestFirst', stride: 0 },
      padding: { strategy: 'BatchLongest', direction: 'Right', pad_to_multiple_of: 8, pad_id: 0, pad_type_id: 0, pad_token: '[PAD]' } }),
    'gte-small': v({ postProcessor: 'bert', truncation: { max_length: 512, strategy: 'LongestFirst', stride: 0 } }),
    cased: v({ lowercase: false, stripAccents: false }),
    'no-chinese-chars': v({ handleChineseChars: false }),
    'strip-no-lowercase': v({ lowercase: false, stripAccents: true }),
    'lowercase-no-strip': v({ lowercase: true, stripAccents: false }),
    'no-clean-text': v({ cleanText: false }),
    'no-normalizer': v({}, (j) => { j.normalizer = null; }),
    'no-pre-tokenizer': v({}, (j) => { j.pre_tokenizer = null; }),
    'no-post-processor': v({ postProcessor: null }),
    'max-chars-8': v({ maxInputCharsPerWord: 8 }),
    'left-truncation-24': v({ truncation: { direction: 'Left', max_length: 24, strategy: 'LongestFirst', stride: 0 },
      padding: { strategy: 'BatchLongest', direction: 'Left', pad_to_multiple_of: null, pad_id: 0, pad_type_id: 1, pad_token: '[PAD]' } }),
    'only-second-40': v({ truncation: { max_length: 40, strategy: 'OnlySecond', stride: 0 } }),
    // MPNet's tokenizer.json as transformers 5 writes it: <s> A </s> </s> B </s>, every type id 0; without its two
    // flags Rust reads the same object as BertProcessing (its untagged enum: the shape decides, not "type")
    'roberta-processing': v({ truncation: { max_length: 40, strategy: 'LongestFirst', stride: 0 } }, (j) => {
      j.post_processor = { type: 'RobertaProcessing', sep: ['[SEP]', 102], cls: ['[CLS]', 101], trim_offsets: true, add_prefix_space: true };
    }),
    'roberta-without-flags': v({}, (j) => { j.post_processor = { type: 'RobertaProcessing', sep: ['[SEP]', 102], cls: ['[CLS]', 101] }; }),
  };
}

// ------------------------------------------------------------------ a seeded corpus

export function rng(seed) { // mulberry32
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const cp = (...c) => String.fromCodePoint(...c);
// every White_Space character, the C0/C1 controls, the Cf (Unicode 8.0) and other oddities
const WHITESPACE = [0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005,
  0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000].map((c) => cp(c));
const CONTROLS = [...Array.from({ length: 32 }, (_, i) => i), ...Array.from({ length: 33 }, (_, i) => 0x7f + i),
  0xad, 0x600, 0x605, 0x61c, 0x6dd, 0x70f, 0x180e, 0x200b, 0x200c, 0x200d, 0x200e, 0x200f, 0x202a, 0x202e, 0x2060, 0x2064,
  0x2066, 0x206f, 0xfeff, 0xfff9, 0xfffb, 0x110bd, 0x1bca0, 0x1d173, 0xe0001, 0xe0020, 0xe007f, 0xfffd, 0xe000, 0xe001,
  0xf8ff, 0xf0000, 0xffffd, 0x100000, 0x10fffd, 0x8e2, 0x890, 0x891, 0x110cd, 0x13430, 0x1c, 0x1f].map((c) => cp(c));
const MARKS = [0x300, 0x301, 0x302, 0x303, 0x308, 0x30a, 0x316, 0x327, 0x328, 0x345, 0x34f, 0x35c, 0x361, 0x591, 0x5b0, 0x64b,
  0x650, 0x670, 0x93c, 0x94d, 0x962, 0xe31, 0xe48, 0xf71, 0xf72, 0xf74, 0xf80, 0x1734, 0xafa, 0x1e944, 0x898, 0x1d165,
  0x1d16d, 0x1d167, 0x20d0, 0x20e3, 0xfe0f, 0xfe0e, 0x302a, 0x3099, 0x1ab0, 0x1dc0, 0x11c92, 0x16af0].map((c) => cp(c));
const WORDS = ['hello', 'world', 'Héllo', 'Wörld', 'naïve', 'façade', 'résumé', 'Việt Nam', 'İstanbul', 'ı', 'ΣΟΦΟΣ', 'σοφός',
  'Straße', 'STRASSE', 'ẞ', 'don\'t', 'don’t', '1,000.50', '$5', 'C++', 'e-mail', 'ﬁne', 'Ａ！ｂ', 'abc中文xyz', '한국어',
  'न्यूज़', 'اَل', 'שָׁלוֹם', 'ภาษาไทย', 'Ελληνικά', 'Привет', 'ЁЖИК', 'Ǆemal', 'ǅ', 'ﬀ', 'Å', 'Ω', 'K', 'Ⅻ', 'ⓐ',
  'query: the quick brown fox', 'passage: jumps over', '東京タワー', 'カタカナ', 'ひらがな', '😀', '👍🏽', '👨‍👩‍👧', '❤️',
  '🇫🇷', '1️⃣', '©', '€', '✓', '°C', '½', '²', 'x' + cp(0x20000) + 'y', 'x' + cp(0x2b820) + 'y', cp(0x2b81f), cp(0x2b920),
  cp(0x2ceb0), cp(0x30000), cp(0xf900), cp(0xfa6c), cp(0x2f800), cp(0x2fa1d), cp(0x378), cp(0xffff), cp(0x166d), cp(0x111c9),
  cp(0x2e43), '「引用」', '（括弧）', '，。！？', '——', '…', '§', '¶', '‽', '⸮', '[CLS]', '[SEP]', '[MASK]', '[PAD]', '[UNK]',
  '[mask]', 'hello[MASK]world', '[[CLS]]', '[CLS', 'CLS]', 'a'.repeat(8), 'a'.repeat(9), 'a'.repeat(100), 'a'.repeat(101),
  'supercalifragilisticexpialidocious', 'antidisestablishmentarianism', 'Ünïcödé', 'ǭ', 'ḝ', 'ẛ̣', 'ᾂ', 'ᾯ', '᾿', 'ΐ',
  'ǰ', 'ﬃ', 'İ̇', 'ŉ', 'ﬆ'];

/** A text of random pieces: vocabulary words (random case), the list above, marks, spaces, controls, random code points. */
export function randomText(r, maxPieces = 24) {
  const pick = (a) => a[Math.floor(r() * a.length)];
  const n = Math.floor(r() * maxPieces);
  let s = '';
  for (let i = 0; i < n; i++) {
    const k = r();
    if (k < 0.35) {
      let w = vocab[999 + Math.floor(r() * (vocab.length - 999))].replace(/^##/, '');
      if (r() < 0.3) w = w[0].toUpperCase() + w.slice(1);
      else if (r() < 0.1) w = w.toUpperCase();
      s += w;
    } else if (k < 0.6) s += pick(WORDS);
    else if (k < 0.7) s += pick(MARKS) + (r() < 0.5 ? pick(MARKS) : '');
    else if (k < 0.78) s += pick(WHITESPACE);
    else if (k < 0.84) s += pick(CONTROLS);
    else if (k < 0.9) s += pick('.,;:!?\'"()[]{}<>/\\|@#$%^&*-_+=~`'.split(''));
    else if (k < 0.95) {
      let c;
      do { c = r() < 0.7 ? Math.floor(r() * 0x10000) : 0x10000 + Math.floor(r() * 0x100000); } while (c >= 0xd800 && c <= 0xdfff);
      s += cp(c);
    } else s += pick(['a', 'E', 'o', 'I', 'u']) + pick(MARKS);
    s += r() < 0.6 ? ' ' : '';
  }
  return s;
}

/** `count` texts from `seed`: the fixed list first, then random texts, some long (past 512 tokens). */
export function corpus(count, seed = 20) {
  const r = rng(seed);
  const texts = ['', ' ', '   \t\n ', '\u3000\u00a0', '\u0000', '\ufffd', '\u0085', 'a\u0085b', 'a\u0000b\u0007c\u000bd',
    'a\ufffdb', 'a\u200db', 'a\u200bb', 'so\u00adft', 'a\ue001b', 'a\u0378b', 'hello\u00a0world', 'x\u2028y', 'hello 😀', 'hello😀',
    'Héllo Wörld', 'İstanbul', 'ΣΟΦΟΣ', 'Straße STRASSE', '[CLS] hello [MASK]', 'hello[MASK]world', '[mask]', 'don\'t don’t',
    '1,000.50', '$5 C++ e-mail', 'Ａ！ｂ', 'ﬁne', 'abc中文xyz', '한국어', 'न्यूज़ اَل', 'a'.repeat(100), 'a'.repeat(101),
    'query: the quick brown fox jumps over the lazy dog', ...WORDS];
  while (texts.length < count) {
    const long = r() < 0.03;
    texts.push(long ? Array.from({ length: 40 }, () => randomText(r, 30)).join(' ') : randomText(r));
  }
  return texts;
}
