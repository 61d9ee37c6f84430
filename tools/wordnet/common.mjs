// common.mjs — what the WordNet index, evaluation and bench tools share: the model's files as
// rt.loadEncoder wants them, the held-out queries and their gold rows, recall, and the
// embeddings from either mlrt's encoder or a raw f32 file (tools/wordnet/embed_torch.py).
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const MODEL_DIR = join(ROOT, 'models', 'wordnet');
export const BUILD_DIR = join(ROOT, 'build', 'wordnet');

/** The files of a sentence-transformers model that loadEncoder reads (vocab.txt is left out: tokenizer.json says it all). */
export const ENCODER_FILES = ['model.safetensors', 'config.json', 'tokenizer.json', 'tokenizer_config.json', 'modules.json',
  '1_Pooling/config.json', 'sentence_bert_config.json'];

/** { name: Uint8Array } of the model directory's encoder files (the optional ones when present). */
export function readEncoderFiles(dir = MODEL_DIR) {
  const files = {};
  for (const name of ENCODER_FILES) {
    const path = join(dir, name);
    if (existsSync(path)) files[name] = new Uint8Array(readFileSync(path));
    else if (name === 'model.safetensors' || name === 'config.json' || name === 'tokenizer.json') throw new Error(`${path} is missing`);
  }
  return files;
}

export const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');

export function readLemmas(dir = MODEL_DIR) {
  const text = readFileSync(join(dir, 'lemmas.txt'), 'utf8');
  if (!text.endsWith('\n')) throw new Error(`${dir}/lemmas.txt does not end with a newline`);
  return text.slice(0, -1).split('\n');
}

/**
 * The held-out synsets: [{ definition, examples, lemmas, gold: [row] }], gold being the rows of
 * lemmas.txt its lemmas are (case-insensitively, as tools/wordnet/prepare.mjs deduplicated them).
 */
export function readHeldout(lemmas, dir = MODEL_DIR) {
  const row = new Map(lemmas.map((l, i) => [l.toLowerCase(), i]));
  return readFileSync(join(dir, 'heldout.jsonl'), 'utf8').split('\n').filter(Boolean).map((line, n) => {
    const s = JSON.parse(line);
    const gold = s.lemmas.map((l) => row.get(l.toLowerCase()));
    if (gold.some((g) => g === undefined)) throw new Error(`heldout.jsonl line ${n + 1}: a lemma of ${s.synset} is not in lemmas.txt`);
    return { ...s, gold };
  });
}

/** The rank of the best gold row in scores (0 = first), ties broken by row as topK does. */
export function goldRank(scores, gold) {
  let best = -Infinity, bi = -1;
  for (const g of gold) if (scores[g] > best || (scores[g] === best && g < bi)) { best = scores[g]; bi = g; }
  let rank = 0;
  for (let i = 0; i < scores.length; i++) if (scores[i] > best || (scores[i] === best && i < bi)) rank++;
  return rank;
}

/** A raw little-endian f32 file of n x dim (embed_torch.py's output), checked for its size. */
export function readF32(path, n, dim) {
  const size = statSync(path).size;
  if (size !== n * dim * 4) throw new Error(`${path} is ${size} bytes, expected ${n} x ${dim} f32 = ${n * dim * 4}`);
  const b = readFileSync(path);
  return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length));
}

/**
 * mlrt's encoder for the model directory: { enc, rt, files, sha256 } or throws with what is missing.
 * The runtime build: the best this Node runs (relaxed SIMD needs a flag in Node 20).
 */
export async function loadMlrtEncoder(dir = MODEL_DIR, options = {}) {
  const { createRuntime } = await import('../../wasm/mlrt.mjs');
  const rt = await createRuntime(options);
  if (typeof rt.loadEncoder !== 'function') {
    throw new Error('this mlrt.mjs has no rt.loadEncoder yet (issue 21, the encoder branch): embed with --embeddings FILE (tools/wordnet/embed_torch.py) for development');
  }
  const files = readEncoderFiles(dir);
  const enc = await rt.loadEncoder(files);
  return { rt, enc, files, sha256: sha256(files['model.safetensors']) };
}

/** Embeds texts with mlrt's encoder in batches; calls onProgress(done, total). */
export function embedAll(enc, texts, { batchSize = 256, onProgress = () => {} } = {}) {
  const dim = enc.info.dim, out = new Float32Array(texts.length * dim);
  for (let i = 0; i < texts.length; i += batchSize) {
    const part = texts.slice(i, i + batchSize);
    out.set(enc.embed(part, { batchSize }), i * dim);
    onProgress(Math.min(i + batchSize, texts.length), texts.length);
  }
  return out;
}
