// inputs.mjs — the inputs of the encoder goldens (token-id batches and texts), and the JS side of
// tests/gen/encoder.py (which calls this file as a CLI, so that the texts, the tokenization by the
// Rust `tokenizers` and the weights' digest come from the same code the tests use).
//
//   node tools/encoder/inputs.mjs inputs                 -> { ids: { tiny, big }, texts: [...] }
//   node tools/encoder/inputs.mjs tokenize PROFILE|tokenizer.json [MAX] < texts.json   -> [[ids], ...]
//   node tools/encoder/inputs.mjs digest SHAPE SEED DTYPE [heads]       -> sha-256 hex
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { rng, corpus } from '../../tests/text/corpus.mjs';
import { PROFILES, tokenizerJson } from './folder.mjs';
import { weightsDigest } from './weights.mjs';

const CLS = 101, SEP = 102;

/** One id sequence of length n: [CLS] random wordpieces [SEP] ([CLS] alone for n = 1). */
function sequence(r, n) {
  if (n === 1) return [CLS];
  const ids = [CLS];
  for (let i = 1; i < n - 1; i++) ids.push(999 + Math.floor(r() * (30522 - 999)));
  ids.push(SEP);
  return ids;
}

/**
 * Token-id batches for a shape: [{ name, ids: [[...], ...], typeIds? }]. Each batch is padded to its
 * longest sequence by the reference (right side, attention 0); a sequence's embedding must not
 * depend on its batch. big: for the 512-position shapes; else for tiny (64 positions).
 */
export function idBatches(big) {
  const r = rng(big ? 512 : 64);
  const lengths = big ? [1, 2, 7, 16, 128, 512] : [1, 2, 7, 16, 64];
  const out = lengths.map((n) => ({ name: `len-${n}`, ids: [sequence(r, n)] }));
  out.push({ name: 'padded-mixed', ids: [5, 16, 1, 9, 2].map((n) => sequence(r, n)) });
  out.push({ name: 'padded-longest', ids: (big ? [128, 7, 33] : [64, 3]).map((n) => sequence(r, n)) });
  // a pair as the tokenizer's template makes it: [CLS] A [SEP] B [SEP], types 0 … 0 1 … 1
  const a = sequence(r, 8), b = sequence(r, 7).slice(1);
  out.push({ name: 'token-types', ids: [[...a, ...b]], typeIds: [[...a.map(() => 0), ...b.map(() => 1)]] });
  return out;
}

/** The texts: the spec's edge cases (tests/text/corpus.mjs), a few plain sentences, and long texts
 * past 64, 256 and 512 tokens (truncation). */
export function goldenTexts() {
  const edge = corpus(40, 20).slice(0, 37);
  const r = rng(2024);
  const words = ['the', 'quick', 'brown', 'fox', 'jumps', 'over', 'lazy', 'dog', 'search', 'semantic', 'vector', 'embedding',
    'model', 'sentence', 'edge', 'worker', 'browser', 'runtime', 'small', 'fast', 'memory', 'token', 'text', 'query'];
  const prose = (n) => Array.from({ length: n }, () => words[Math.floor(r() * words.length)]).join(' ') + '.';
  return [
    ...edge,
    'A man is eating food.', 'A man is eating a piece of bread.', 'The new movie is awesome.',
    'Represent this sentence for searching relevant passages: what is mlrt?',
    prose(80), prose(300), prose(700),
  ];
}

export function fixtureInputs() {
  return { ids: { tiny: idBatches(false), big: idBatches(true) }, texts: goldenTexts() };
}

/**
 * Token ids of `texts` as sentence-transformers gets them from the Rust tokenizer (npm `tokenizers`):
 * the profile's tokenizer.json (or the tokenizer.json file at that path) with truncation to
 * maxSeqLength and no padding. The caller applies
 * sentence-transformers' str.strip() / str.lower() first (tests/gen/encoder.py does, in Python).
 */
export async function tokenize(profile, texts, maxSeqLength = PROFILES[profile]?.maxSeqLength) {
  const { Tokenizer } = createRequire(import.meta.url)('tokenizers');
  const json = profile.endsWith('.json') ? readFileSync(profile, 'utf8') : JSON.stringify(await tokenizerJson(PROFILES[profile].tokenizer));
  const t = Tokenizer.fromString(json);
  t.setTruncation(maxSeqLength);
  t.disablePadding();
  const out = [];
  for (const s of texts) out.push(Array.from((await t.encode(s)).getIds()));
  return out;
}

async function main(argv) {
  const [cmd, ...a] = argv;
  if (cmd === 'inputs') return fixtureInputs();
  if (cmd === 'tokenize') return tokenize(a[0], JSON.parse(readFileSync(0, 'utf8')), a[1] ? Number(a[1]) : undefined);
  if (cmd === 'digest') return weightsDigest(a[0], Number(a[1]), a[2], { heads: a[3] === 'heads' });
  throw new Error('usage: node tools/encoder/inputs.mjs inputs | tokenize PROFILE [MAX] | digest SHAPE SEED DTYPE [heads]');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main(process.argv.slice(2)).then((v) => process.stdout.write(JSON.stringify(v)), (e) => { console.error(e.message); process.exit(1); });
}
