// prepare.mjs — WordNet 3.0 → pre-tokenized data for the reverse-dictionary sentence encoder.
//
// End to end (from the repository root; Debian: apt-get install wordnet-base):
//   node tools/wordnet/prepare.mjs              # ~20 s: parses /usr/share/wordnet/data.*, tokenizes,
//                                               #   writes build/wordnet/wordnet.json and the tokenizer
//                                               #   files of models/wordnet/
//   /usr/bin/python3 tools/wordnet/train.py     # ~1 h on 2 cores: split, train, evaluate, export
//                                               #   models/wordnet/ (see train.py's header)
//   /usr/bin/python3 tools/wordnet/embed_ref.py --samples   # reference embeddings for the runtime
//
// What it writes:
//   build/wordnet/tokenizer.json   bert-base-uncased WordPiece (tools/text/bert-vocab.mjs), lowercase
//   build/wordnet/wordnet.json     { max_len, synsets: [...], lemmas: [...] } where
//     synsets[i] = { key: "n:00001740", pos, lemmas: [WordNet spelling, '_' → ' ', adjective markers
//                    stripped], lem: [index into lemmas], definition, examples: [...],
//                    def: [token ids], ex: [[token ids] ...] }
//     lemmas[j]  = { text, ids }: the distinct lemma strings, deduplicated case-insensitively
//                  (the tokenizer lowercases, so case variants have the same ids), sorted by their
//                  lowercase form; `text` is the lowercase spelling if WordNet has it, else the first
//                  spelling met (files n, v, a, r in offset order).
//   models/wordnet/{tokenizer.json, vocab.txt, tokenizer_config.json, special_tokens_map.json}
//
// Token ids are [CLS] ... [SEP] from the tokenizer's post-processor; a sequence longer than MAX_LEN
// keeps its first MAX_LEN - 1 ids and ends with [SEP] (what truncation to MAX_LEN does).
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bertUncasedVocab, bertTokenizerJson } from '../text/bert-vocab.mjs';

const require = createRequire(import.meta.url);
const { Tokenizer } = require('tokenizers');

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const WN = process.env.WORDNET_DIR || '/usr/share/wordnet';
const OUT = join(ROOT, 'build', 'wordnet');
const MODEL = join(ROOT, 'models', 'wordnet');
export const MAX_LEN = 64;

/** One data.<pos> line → synset record (WNDB format, wndb(5WN)). */
function parseLine(line, filePos) {
  const bar = line.indexOf(' | ');
  const head = (bar >= 0 ? line.slice(0, bar) : line).trim().split(/\s+/);
  const gloss = bar >= 0 ? line.slice(bar + 3).trim() : '';
  let k = 0;
  const offset = head[k++];
  k++; // lex_filenum
  const ssType = head[k++];
  const wCnt = parseInt(head[k++], 16);
  const lemmas = [];
  for (let i = 0; i < wCnt; i++) {
    const w = head[k++].replace(/\((a|p|ip)\)$/, '').replace(/_/g, ' ');
    k++; // lex_id
    lemmas.push(w);
  }
  const pCnt = parseInt(head[k++], 10);
  k += 4 * pCnt; // pointer_symbol synset_offset pos source/target
  if (filePos === 'v') {
    const fCnt = parseInt(head[k++], 10);
    k += 3 * fCnt; // + f_num w_num
  }
  if (k !== head.length) throw new Error(`wndb parse: ${head.length - k} fields left in ${offset} ${filePos}`);
  if (offset.length !== 8) throw new Error(`wndb parse: offset ${offset}`);
  // gloss: the definition, then `; "example"` quotes (a few glosses are ragged: an example without
  // its closing quote, an attribution after it, a quote inside the definition). The definition is
  // everything before the first '"'; the examples are the quoted spans (an unclosed last one runs
  // to the end); text outside quotes after the definition (attributions) is dropped.
  const q = gloss.indexOf('"');
  const definition = (q >= 0 ? gloss.slice(0, q) : gloss).replace(/[\s;:,]+$/, '').trim();
  const examples = [];
  if (q >= 0) {
    const re = /"([^"]*)("|$)/g;
    let m;
    const rest = gloss.slice(q);
    while ((m = re.exec(rest)) !== null) {
      const ex = m[1].replace(/\s+/g, ' ').trim();
      if (ex && /[A-Za-z0-9]/.test(ex)) examples.push(ex);
      if (m[0].length === 0) re.lastIndex++;
    }
  }
  return { key: `${filePos}:${offset}`, pos: ssType, lemmas, definition, examples };
}

function readSynsets() {
  const out = [];
  for (const pos of ['n', 'v', 'a', 'r']) {
    const file = { n: 'noun', v: 'verb', a: 'adj', r: 'adv' }[pos];
    const text = readFileSync(join(WN, `data.${file}`), 'latin1');
    for (const line of text.split('\n')) {
      if (!line || line.startsWith('  ')) continue; // license header lines start with two spaces
      out.push(parseLine(line, pos));
    }
  }
  return out;
}

function truncate(ids) {
  if (ids.length <= MAX_LEN) return ids;
  return [...ids.slice(0, MAX_LEN - 1), ids[ids.length - 1]];
}

async function tokenizeAll(tok, texts) {
  const out = [];
  const B = 4096;
  for (let i = 0; i < texts.length; i += B) {
    const encs = await tok.encodeBatch(texts.slice(i, i + B));
    for (const e of encs) out.push(Array.from(e.getIds()));
  }
  return out;
}

async function main() {
  const t0 = Date.now();
  mkdirSync(OUT, { recursive: true });
  mkdirSync(MODEL, { recursive: true });
  const vocab = bertUncasedVocab();
  const tj = bertTokenizerJson(vocab, { lowercase: true });
  const tjText = JSON.stringify(tj, null, 2);
  writeFileSync(join(OUT, 'tokenizer.json'), tjText);
  writeFileSync(join(MODEL, 'tokenizer.json'), tjText);
  writeFileSync(join(MODEL, 'vocab.txt'), vocab.join('\n') + '\n');
  writeFileSync(join(MODEL, 'tokenizer_config.json'), JSON.stringify({
    tokenizer_class: 'BertTokenizer', do_lower_case: true, tokenize_chinese_chars: true, strip_accents: null,
    model_max_length: MAX_LEN, unk_token: '[UNK]', sep_token: '[SEP]', pad_token: '[PAD]', cls_token: '[CLS]', mask_token: '[MASK]',
    clean_up_tokenization_spaces: true,
  }, null, 2) + '\n');
  writeFileSync(join(MODEL, 'special_tokens_map.json'), JSON.stringify({
    unk_token: '[UNK]', sep_token: '[SEP]', pad_token: '[PAD]', cls_token: '[CLS]', mask_token: '[MASK]',
  }, null, 2) + '\n');
  const tok = Tokenizer.fromFile(join(OUT, 'tokenizer.json'));

  const synsets = readSynsets();
  // distinct lemma strings, case-insensitively
  const groups = new Map(); // lower → { first, hasLower, spellings:Set }
  for (const s of synsets) {
    for (const l of s.lemmas) {
      const low = l.toLowerCase();
      let g = groups.get(low);
      if (!g) groups.set(low, g = { first: l, spellings: new Set() });
      g.spellings.add(l);
    }
  }
  const lowKeys = [...groups.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const lemmaIndex = new Map(lowKeys.map((k, i) => [k, i]));
  const lemmaText = lowKeys.map((k) => (groups.get(k).spellings.has(k) ? k : groups.get(k).first));
  const lemmaIds = (await tokenizeAll(tok, lemmaText)).map(truncate);
  // every spelling of a group must tokenize like its representative
  const spell = [], spellGroup = [];
  for (const [i, k] of lowKeys.entries()) for (const sp of groups.get(k).spellings) if (sp !== lemmaText[i]) { spell.push(sp); spellGroup.push(i); }
  const spellIds = (await tokenizeAll(tok, spell)).map(truncate);
  let caseMismatch = 0;
  spellIds.forEach((ids, j) => { if (ids.join() !== lemmaIds[spellGroup[j]].join()) caseMismatch++; });
  if (caseMismatch) throw new Error(`${caseMismatch} lemma spellings tokenize differently from their lowercase group`);

  // texts: definitions and examples
  const texts = [];
  for (const s of synsets) { texts.push(s.definition); for (const e of s.examples) texts.push(e); }
  const textIdsRaw = await tokenizeAll(tok, texts);
  let truncated = 0, k = 0;
  const lens = [];
  const records = synsets.map((s) => {
    const take = () => { const ids = textIdsRaw[k++]; lens.push(ids.length); if (ids.length > MAX_LEN) truncated++; return truncate(ids); };
    const def = take();
    const ex = s.examples.map(take);
    return { ...s, lem: s.lemmas.map((l) => lemmaIndex.get(l.toLowerCase())), def, ex };
  });
  lens.sort((a, b) => a - b);
  const q = (p) => lens[Math.min(lens.length - 1, Math.floor(p * lens.length))];
  const unk = textIdsRaw.reduce((n, ids) => n + ids.filter((i) => i === 100).length, 0);
  const emptyDef = records.filter((r) => r.def.length <= 2).length;

  writeFileSync(join(OUT, 'wordnet.json'), JSON.stringify({
    max_len: MAX_LEN,
    synsets: records,
    lemmas: lemmaText.map((text, i) => ({ text, ids: lemmaIds[i] })),
  }));
  const byPos = {};
  for (const s of synsets) byPos[s.key[0]] = (byPos[s.key[0]] || 0) + 1;
  console.log(JSON.stringify({
    synsets: synsets.length, by_pos: byPos, distinct_lemmas_lowercase: lemmaText.length,
    lemma_spellings_total: synsets.reduce((n, s) => n + s.lemmas.length, 0),
    examples: texts.length - synsets.length, texts: texts.length,
    text_tokens_p50_p90_p99_max: [q(0.5), q(0.9), q(0.99), lens[lens.length - 1]],
    truncated_texts: truncated, unk_tokens_in_texts: unk, empty_definitions: emptyDef,
    lemma_max_tokens: lemmaIds.reduce((m, x) => Math.max(m, x.length), 0),
    seconds: (Date.now() - t0) / 1000,
  }, null, 1));
}

main().catch((e) => { console.error(e); process.exit(1); });
