// embed-bench-worker.mjs — the worker edge/embed-bench.mjs runs under workerd: POST /embed with the
// encoder folder packed in encoder.bin (edge/pack.mjs: an .apr, config.json, tokenizer.json, ...),
// on mlrt's SIMD128 build (as worker.mjs's /embed under MLRT_BUILD=auto), or the build MLRT_BUILD
// names. Not the product worker (edge/worker.mjs, whose /embed serves the WordNet encoder): a bench
// of a MiniLM-shaped Q8 encoder inside an isolate. {"texts": [string, ...]} -> {"embeddings": [...]}
// as JSON; a bad body gets a 4xx JSON error; GET /info reports the isolate's wasm memory.
import { createRuntime, relaxedSimdSupported, simdSupported } from './mlrt.mjs';
import relaxedWasm from './mlrt-relaxed.wasm';
import simdWasm from './mlrt.wasm';
import scalarWasm from './mlrt-scalar.wasm';
import encoderPack from './encoder.bin';
import { unpackFiles } from './pack.mjs';

let state = null; // { rt, encoder, build }, once per isolate

async function load(env) {
  const want = env.MLRT_BUILD ?? 'simd';
  const build = want === 'auto' ? (relaxedSimdSupported() ? 'relaxed' : simdSupported() ? 'simd' : 'scalar') : want;
  const wasm = { relaxed: relaxedWasm, simd: simdWasm, scalar: scalarWasm }[build];
  const rt = await createRuntime({ wasm, simd: build !== 'scalar', relaxed: build === 'relaxed' });
  return { rt, build, encoder: await rt.loadEncoder(unpackFiles(encoderPack)) };
}

const json = (status, v) => new Response(JSON.stringify(v), { status, headers: { 'content-type': 'application/json' } });
const fail = (status, code, message) => json(status, { error: { code, message } });

export default {
  async fetch(request, env) {
    state ??= await load(env);
    const path = new URL(request.url).pathname;
    if (path === '/info') return json(200, { build: state.build, wasmMemoryBytes: state.rt.memoryBytes, bundleBytes: encoderPack.byteLength, encoder: state.encoder.info });
    if (path !== '/embed') return fail(404, 'NOT_FOUND', `no route ${path.slice(0, 100)}`);
    if (request.method !== 'POST') return fail(405, 'METHOD_NOT_ALLOWED', `${request.method} is not allowed on /embed; use POST`);
    let body;
    try { body = JSON.parse(await request.text()); } catch (e) { return fail(400, 'BAD_JSON', `body is not JSON: ${e.message}`); }
    const texts = body?.texts;
    if (!Array.isArray(texts) || texts.length < 1 || texts.length > 64 || !texts.every((t) => typeof t === 'string' && t.length <= 2000)) {
      return fail(422, 'BAD_TEXTS', '"texts" must be an array of 1 to 64 strings of at most 2000 characters');
    }
    try {
      const x = state.encoder.embed(texts), dim = state.encoder.info.dim;
      return json(200, { embeddings: texts.map((_, i) => Array.from(x.subarray(i * dim, (i + 1) * dim))), dim });
    } catch (e) {
      return fail(422, e.code ?? 'EMBED_FAILED', e.message);
    }
  },
};
