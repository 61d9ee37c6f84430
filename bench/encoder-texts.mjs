// The encoder benches' inputs (bench/encoder.mjs in Node, bench/encoder-browser.mjs for its page):
// token ids of whole words of a prepared folder's vocabulary, from a seeded PRNG, so that every
// runtime and every process embeds the same texts.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { prng } from './weights.mjs';

/** A folder's vocab.txt: `vocab` (the line of each id) and `words`, the ids of its whole lowercase
 * words (from 1996 on: past [unused*] and punctuation). A text of them joined by spaces tokenizes back
 * to the same ids. */
export function vocabWords(dir) {
  const vocab = readFileSync(path.join(dir, 'vocab.txt'), 'utf8').split('\n');
  return { vocab, words: vocab.flatMap((w, id) => (id >= 1996 && /^[a-z]{2,}$/.test(w) ? [id] : [])) };
}

/** n sequences of T token ids: [CLS] whole words [SEP], seeded. */
export function sequences(words, n, T, seed) {
  const r = prng(seed);
  return Array.from({ length: n }, () => [101, ...Array.from({ length: T - 2 }, () => words[Math.floor(r() * words.length)]), 102]);
}
