// The measurement of bench/search.mjs, the same code in Node and in a Chromium page: load an
// encoder (and a lemma index), then time text queries end to end, each split into tokens +
// embedding (enc.embed on the text, the tokenizer included) and the search of every word.
import { median } from './median.mjs';

const now = () => performance.now();
const quantile = (v, q) => [...v].sort((a, b) => a - b)[Math.min(v.length - 1, Math.floor(q * v.length))];

/**
 * deps: { createRuntime, readIndex }; files: { name: Uint8Array } (an encoder folder);
 * indexBytes: Uint8Array | null; queries: string[]; options: createRuntime's.
 */
export async function measureQueries({ createRuntime, readIndex, files, indexBytes, queries, options = {}, warmup = 20 }) {
  const t0 = now();
  const rt = await createRuntime(options);
  const enc = await rt.loadEncoder(files);
  const t1 = now();
  const index = indexBytes ? readIndex(indexBytes) : null;
  // the scan on mlrt's Q8 kernels, SIMD128 build, as the demo's worker and the edge run it
  if (index) index.useRuntime(rt.build.relaxed ? await createRuntime({ ...options, relaxed: false }) : rt);
  const t2 = now();
  for (const q of queries.slice(0, warmup)) {
    const x = enc.embed(q);
    if (index) index.search(x, 10);
  }
  const embed = [], search = [], total = [], tokens = [];
  for (const q of queries) {
    const a = now();
    const x = enc.embed(q);
    const b = now();
    if (index) index.search(x, 10);
    const c = now();
    embed.push(b - a);
    search.push(c - b);
    total.push(c - a);
    tokens.push(enc.tokenizer.encode(q, { maxLength: enc.info.maxLength, truncation: true }).ids.length);
  }
  const build = rt.build.relaxed ? 'relaxed' : rt.build.simd ? 'simd' : 'scalar';
  enc.free?.();
  return {
    build, loadMs: t1 - t0, indexMs: index ? t2 - t1 : null, queries: queries.length, meanTokens: tokens.reduce((s, v) => s + v, 0) / tokens.length,
    embedMs: median(embed), searchMs: index ? median(search) : null, totalMs: median(total), totalP90Ms: quantile(total, 0.9),
  };
}
