// words-worker.mjs — the reverse dictionary off the page's main thread: mlrt's runtime, the
// WordNet sentence encoder and the lemma index live here; the page (words.mjs) sends the bytes
// it downloaded and cached, then queries, and gets back the tokens and the ranked words.
//
//   page -> worker  { type: 'load', wasm: ArrayBuffer, build: { simd, relaxed }, files: { name: ArrayBuffer }, index: ArrayBuffer,
//                     scoreWasm: ArrayBuffer | null (mlrt.wasm, SIMD128, for the index scan when wasm is the relaxed build) }
//   worker -> page  { type: 'loaded', info, tokenizer, index: { ... }, ms: { runtime, encoder, index } }
//                 | { type: 'error', code, message }
//   page -> worker  { type: 'query', id, text, k }
//   worker -> page  { type: 'result', id, tokens: [{ id, token }], results: [{ word, score }], ms: { tokenize, embed, search } }
//                 | { type: 'result', id, error: { code, message } }
// One query at a time (messages are handled in order); the page sends only the latest text.

import { createRuntime } from '../wasm/mlrt.mjs';
import { readIndex } from './lemma-index.mjs';

let encoder = null, index = null;

const hex = (buf) => Array.from(new Uint8Array(buf), (b) => b.toString(16).padStart(2, '0')).join('');
const fail = (code, message) => Object.assign(new Error(message), { code });

async function load({ wasm, build, files, index: indexBytes, scoreWasm }) {
  const t0 = performance.now();
  const rt = await createRuntime({ wasm, ...build });
  const t1 = performance.now();
  if (typeof rt.loadEncoder !== 'function') throw fail('NO_ENCODER', 'this mlrt.mjs has no loadEncoder (the sentence encoder API)');
  const named = Object.fromEntries(Object.entries(files).map(([name, b]) => [name, new Uint8Array(b)]));
  encoder = await rt.loadEncoder(named);
  const t2 = performance.now();
  index = readIndex(new Uint8Array(indexBytes));
  // The scan on mlrt's Q8 kernels, not a JS loop; on the SIMD128 build (int16 inputs), not the
  // relaxed one (7-bit inputs): see words.mjs.
  const scoreRt = scoreWasm ? await createRuntime({ wasm: scoreWasm, simd: true, relaxed: false }) : rt;
  if (index.dtype === 'q8') index.useRuntime(scoreRt);
  const sha = hex(await crypto.subtle.digest('SHA-256', named['model.safetensors']));
  if (sha !== index.modelSha256) {
    throw fail('INDEX_MISMATCH', `the lemma index was made with another model (its model SHA-256 ${index.modelSha256.slice(0, 16)}…, model.safetensors is ${sha.slice(0, 16)}…)`);
  }
  if (index.dim !== encoder.info.dim) throw fail('INDEX_MISMATCH', `the lemma index has ${index.dim} dimensions, the encoder ${encoder.info.dim}`);
  const t3 = performance.now();
  const { dtype, dim, count, generator, bytes, modelSha256 } = index;
  return {
    type: 'loaded',
    info: encoder.info,
    tokenizer: encoder.tokenizer.info,
    build: rt.build,
    index: { dtype, dim, count, generator, bytes, modelSha256, engine: index.engine, build: scoreRt.build },
    ms: { runtime: t1 - t0, encoder: t2 - t1, index: t3 - t2 },
  };
}

function query({ id, text, k }) {
  const t0 = performance.now();
  const { ids } = encoder.tokenizer.encode(text, { maxLength: encoder.info.maxLength, truncation: true });
  const tokens = Array.from(ids, (tid) => ({ id: tid, token: encoder.tokenizer.idToToken(tid) ?? `#${tid}` }));
  const t1 = performance.now();
  const x = encoder.embed(text); // tokenizes again, inside mlrt: the same ids
  const t2 = performance.now();
  const results = index.search(x, k).map(({ word, score }) => ({ word, score }));
  const t3 = performance.now();
  return { type: 'result', id, tokens, results, ms: { tokenize: t1 - t0, embed: t2 - t1, search: t3 - t2 } };
}

self.onmessage = async ({ data }) => {
  if (data?.type === 'load') {
    try {
      self.postMessage(await load(data));
    } catch (e) {
      encoder = index = null;
      self.postMessage({ type: 'error', code: e?.code ?? e?.name ?? 'ERROR', message: e?.message ?? String(e) });
    }
  } else if (data?.type === 'query') {
    try {
      if (!encoder || !index) throw fail('NOT_READY', 'the encoder is not loaded');
      self.postMessage(query(data));
    } catch (e) {
      self.postMessage({ type: 'result', id: data.id, error: { code: e?.code ?? e?.name ?? 'ERROR', message: e?.message ?? String(e) } });
    }
  }
};
