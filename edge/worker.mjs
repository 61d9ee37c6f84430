// worker.mjs — mlrt at the edge: a module-syntax Worker (Cloudflare Workers / workerd).
//
//   POST /predict        one input:  JSON array of numbers, or raw little-endian f32
//   POST /predict/batch  n inputs:   JSON array of arrays,   or raw f32 of n x inputSize
//   (answers are JSON; with Accept: application/octet-stream, the outputs as raw little-endian f32,
//    their shape in X-Mlrt-Shape)
//   POST /search         {"query": "a small boat pulled by a larger one", "k": 10} -> the k WordNet
//                        words closest in meaning, with their cosine (a MODEL=wordnet bundle)
//   POST /embed          {"texts": ["…", …]} -> {"embeddings": [[…], …], "dim": 128}: the sentence
//                        encoder's embeddings (a MODEL=wordnet bundle), or raw f32 with
//                        Accept: application/octet-stream (shape n,dim in X-Mlrt-Shape)
//   GET  /info           the model, the runtime build (simd | scalar), the model source
//
// The wasm builds are imported as modules (CompiledWasm): workerd refuses to compile wasm
// from bytes at run time. Both are in the bundle; WebAssembly.validate picks one.
// mlrt.mjs is the very same module browsers and Node use (wasm/mlrt.mjs, copied or listed
// unchanged into the bundle by edge/bundle.mjs).
//
// Bindings (all optional; text vars in wrangler.toml [vars] or miniflare bindings):
//   MODEL_URL       fetch the model from here (once per isolate) instead of the embedded model.bin
//   MODEL_ENGINE    "mlrt" (default) | "plain-js" (edge/plain-js-model.mjs, for comparison)
//   MLRT_BUILD      "auto" (default: feature detection: relaxed SIMD, else SIMD128, else scalar) | "relaxed" | "simd" | "scalar"
//   MAX_BODY_BYTES  request body limit, default 1048576 (1 MiB)
//   SEARCH_SCORING  "mlrt" (default: the lemma index scored by mlrt's Q8 kernels) | "js" (a JavaScript loop)
// (The main module exports only the handler: workerd treats every named export as an entrypoint.)
// Every error is JSON { error: { code, message } }; the statuses are listed in edge/README.md.

import { createRuntime, relaxedSimdSupported, simdSupported } from './mlrt.mjs';
import relaxedWasm from './mlrt-relaxed.wasm';
import simdWasm from './mlrt.wasm';
import scalarWasm from './mlrt-scalar.wasm';
import embeddedModel from './model.bin';
import wordsPack from './words.bin';
import { loadPlainModel } from './plain-js-model.mjs';
import { unpackFiles } from './pack.mjs';
import { readIndex } from './web/lemma-index.mjs';

const DEFAULT_MAX_BODY_BYTES = 1 << 20;
// An error is answered after the rest of the request body has been read and discarded, so the
// client is never reset mid-upload and a keep-alive connection stays usable; up to this many bytes.
// Past it, the answer says Connection: close.
const DRAIN_CAP_BYTES = 64 << 20;
// ... and while the client keeps sending: a pause this long ends the drain (a client that declared
// more than it sends, or waits for the answer first) and the answer says Connection: close.
const DRAIN_IDLE_MS = 1000;
const DRAIN_RECHECK_MS = 100;
// A pause timer that fires this late measured a stall of the isolate or the machine, not of the
// client: the drain waits again, up to DRAIN_STALLS times.
const DRAIN_LATE_MS = 50;
const DRAIN_STALLS = 30;
const MAX_BATCH = 1024;
const MAX_MODEL_BYTES = 64 << 20;
const MODEL_FETCH_TIMEOUT_MS = 15000;
// POST /search: a small JSON body, a query of at most this many characters (the model reads its
// first 64 tokens anyway), k words from 1 to MAX_K.
const SEARCH_MAX_BODY_BYTES = 16 << 10;
const MAX_QUERY_CHARS = 1000;
const DEFAULT_K = 10;
const MAX_K = 100;
// POST /embed: at most EMBED_MAX_TEXTS texts of at most EMBED_MAX_CHARS characters and of at most
// the model's maximum length in tokens (special tokens included: nothing is cut off silently).
const EMBED_MAX_BODY_BYTES = 64 << 10;
const EMBED_MAX_TEXTS = 64;
const EMBED_MAX_CHARS = 2000;

class HttpError extends Error {
  constructor(status, code, message, headers = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.headers = headers;
  }
}

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' };

function json(body, status = 200, headers = {}) {
  return new Response(JSON.stringify(body), { status, headers: { ...JSON_HEADERS, ...headers } });
}

function errorResponse(e) {
  return json({ error: { code: e.code, message: e.message } }, e.status, e.headers);
}

// ---- configuration (from bindings) ----

function config(env = {}) {
  const modelUrl = typeof env.MODEL_URL === 'string' ? env.MODEL_URL.trim() : '';
  const engine = String(env.MODEL_ENGINE ?? 'mlrt').trim() || 'mlrt';
  const build = String(env.MLRT_BUILD ?? 'auto').trim() || 'auto';
  const scoring = String(env.SEARCH_SCORING ?? 'mlrt').trim() || 'mlrt';
  if (!['mlrt', 'js'].includes(scoring)) throw new HttpError(503, 'MISCONFIGURED', `SEARCH_SCORING must be "mlrt" or "js", got "${scoring}"`);
  const maxBody = env.MAX_BODY_BYTES === undefined || env.MAX_BODY_BYTES === '' ? DEFAULT_MAX_BODY_BYTES : Number(env.MAX_BODY_BYTES);
  if (!['mlrt', 'plain-js'].includes(engine)) throw new HttpError(503, 'MISCONFIGURED', `MODEL_ENGINE must be "mlrt" or "plain-js", got "${engine}"`);
  if (!['auto', 'relaxed', 'simd', 'scalar'].includes(build)) throw new HttpError(503, 'MISCONFIGURED', `MLRT_BUILD must be "auto", "relaxed", "simd" or "scalar", got "${build}"`);
  if (!Number.isSafeInteger(maxBody) || maxBody < 1) throw new HttpError(503, 'MISCONFIGURED', `MAX_BODY_BYTES must be a positive integer, got "${env.MAX_BODY_BYTES}"`);
  if (modelUrl) {
    let u;
    try { u = new URL(modelUrl); } catch { u = null; }
    if (!u || !['http:', 'https:'].includes(u.protocol)) throw new HttpError(503, 'MISCONFIGURED', `MODEL_URL must be an http(s) URL, got "${modelUrl}"`);
  }
  return { modelUrl, engine, build, maxBody, scoring };
}

// ---- the model, loaded once per isolate and kept for later requests ----

let loaded = null; // { key, promise }
let loads = 0;     // how many times this isolate loaded (fetched) a model
let served = 0;    // successful predictions by this isolate
let searches = 0;  // successful searches by this isolate
let embedded = 0;  // texts embedded by /embed in this isolate

function getModel(cfg) {
  const key = `${cfg.modelUrl}\n${cfg.engine}\n${cfg.build}`;
  if (loaded?.key === key) return loaded.promise;
  // Concurrent first requests share this promise: the model is fetched once.
  const promise = loadModel(cfg).catch((e) => {
    if (loaded?.promise === promise) loaded = null; // retry on a later request
    throw e;
  });
  loaded = { key, promise };
  return promise;
}

async function fetchModel(url) {
  let res;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(MODEL_FETCH_TIMEOUT_MS) });
  } catch (e) {
    throw new HttpError(503, 'MODEL_UNAVAILABLE', `fetching the model from ${url} failed: ${e.message}`);
  }
  if (!res.ok) {
    await res.body?.cancel();
    throw new HttpError(503, 'MODEL_UNAVAILABLE', `fetching the model from ${url} failed: HTTP ${res.status}`);
  }
  const bytes = await res.arrayBuffer();
  if (bytes.byteLength > MAX_MODEL_BYTES) throw new HttpError(503, 'MODEL_UNAVAILABLE', `the model at ${url} is ${bytes.byteLength} bytes, over ${MAX_MODEL_BYTES}`);
  return bytes;
}

const hex = (buf) => Array.from(new Uint8Array(buf), (b) => b.toString(16).padStart(2, '0')).join('');

async function loadModel(cfg) {
  loads++;
  let bytes, source;
  if (cfg.modelUrl) {
    bytes = await fetchModel(cfg.modelUrl);
    source = 'url';
  } else {
    bytes = embeddedModel;
    source = 'embedded';
    if (!bytes || bytes.byteLength === 0) throw new HttpError(503, 'MODEL_UNAVAILABLE', 'no model: the bundle embeds none and MODEL_URL is not set');
  }
  const sha256 = hex(await crypto.subtle.digest('SHA-256', bytes));
  const simd = simdSupported();
  let model, build = null;
  try {
    if (cfg.engine === 'plain-js') {
      model = loadPlainModel(bytes);
    } else {
      const rt = await runtime(cfg);
      build = buildName(rt);
      model = rt.loadFromBytes(bytes);
    }
  } catch (e) {
    throw new HttpError(503, 'MODEL_UNAVAILABLE', `the ${source} model cannot be loaded (${e.code ?? e.name}): ${e.message}`);
  }
  const engine = cfg.engine === 'plain-js' ? 'plain-js' : `mlrt-${build}`;
  return {
    model,
    tag: Object.freeze({ id: sha256.slice(0, 16), source, engine }),
    detail: {
      source: { kind: source, ...(cfg.modelUrl ? { url: cfg.modelUrl } : {}), bytes: bytes.byteLength, sha256 },
      runtime: { engine: cfg.engine, build, simdSupported: simd },
    },
  };
}

// The wasm build MLRT_BUILD asks for, or the best this engine runs.
function runtime(cfg) {
  const pick = cfg.build !== 'auto' ? cfg.build : relaxedSimdSupported() ? 'relaxed' : simdSupported() ? 'simd' : 'scalar';
  const wasm = { relaxed: relaxedWasm, simd: simdWasm, scalar: scalarWasm }[pick];
  return createRuntime({ wasm, simd: pick !== 'scalar', relaxed: pick === 'relaxed' });
}

const buildName = (rt) => (rt.build.relaxed ? 'relaxed' : rt.build.simd ? 'simd' : 'scalar');

// ---- the reverse dictionary (words.bin), loaded once per isolate ----

let words = null; // { key, promise }

const hasWords = () => Boolean(wordsPack && wordsPack.byteLength > 0);

function getWords(cfg) {
  const key = `${cfg.build}\n${cfg.scoring}`;
  if (words?.key === key) return words.promise;
  const promise = loadWords(cfg).catch((e) => {
    if (words?.promise === promise) words = null;
    throw e;
  });
  words = { key, promise };
  return promise;
}

async function loadWords(cfg) {
  if (!hasWords()) {
    throw new HttpError(503, 'NO_SEARCH_INDEX', 'this worker embeds no reverse dictionary: build it with MODEL=wordnet (node edge/build.mjs --model wordnet)');
  }
  try {
    const t0 = Date.now();
    const files = unpackFiles(wordsPack);
    const { 'lemmas.index': indexBytes, ...encoderFiles } = files;
    if (!indexBytes) throw new Error('words.bin has no lemmas.index');
    const index = readIndex(indexBytes);
    const sha256 = hex(await crypto.subtle.digest('SHA-256', encoderFiles['model.safetensors'] ?? new Uint8Array(0)));
    if (sha256 !== index.modelSha256) {
      throw new Error(`the lemma index was made with another model (model SHA-256 ${index.modelSha256.slice(0, 16)}…, model.safetensors is ${sha256.slice(0, 16)}…)`);
    }
    // One runtime for the encoder and the scan, to stay well inside an isolate's 128 MB: the
    // SIMD128 build under MLRT_BUILD=auto (its Q8 kernel reads the query as int16; the relaxed
    // build's 7-bit inputs move near-ties in the ranking), else the build MLRT_BUILD names.
    const rt = await runtime(cfg.build === 'auto' ? { ...cfg, build: simdSupported() ? 'simd' : 'scalar' } : cfg);
    const encoder = await rt.loadEncoder(encoderFiles);
    if (encoder.info.dim !== index.dim) throw new Error(`the lemma index has ${index.dim} dimensions, the encoder ${encoder.info.dim}`);
    if (cfg.scoring === 'mlrt' && index.dtype === 'q8') index.useRuntime(rt); // the scan on mlrt's Q8 kernels
    const build = buildName(rt);
    return {
      encoder, index, rt,
      tag: Object.freeze({ id: sha256.slice(0, 16), source: 'embedded', engine: `mlrt-${build}` }),
      detail: {
        encoder: encoder.info,
        index: { dtype: index.dtype, dim: index.dim, count: index.count, bytes: index.bytes, generator: index.generator, modelSha256: index.modelSha256, scoring: index.engine },
        runtime: { engine: 'mlrt', build },
        loadMs: Date.now() - t0,
      },
    };
  } catch (e) {
    if (e instanceof HttpError) throw e;
    throw new HttpError(503, 'MODEL_UNAVAILABLE', `the embedded reverse dictionary cannot be loaded (${e.code ?? e.name}): ${e.message}`);
  }
}

/* Characters (code points) of a string: a surrogate pair is one. */
function codePoints(s) {
  let n = 0;
  for (let k = 0; k < s.length; k++, n++) {
    const c = s.charCodeAt(k), d = s.charCodeAt(k + 1); // (NaN past the end)
    if (c >= 0xd800 && c < 0xdc00 && d >= 0xdc00 && d < 0xe000) k++;
  }
  return n;
}

// {"query": string, "k"?: integer} -> { query, k }, or a 422 naming what is wrong.
function parseSearch(bytes) {
  const v = parseJson(bytes);
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    throw new HttpError(422, 'NOT_AN_OBJECT', `body is ${typeName(v)}, expected a JSON object {"query": "…", "k": ${DEFAULT_K}}`);
  }
  for (const key of Object.keys(v)) {
    if (key !== 'query' && key !== 'k') throw new HttpError(422, 'UNKNOWN_FIELD', `unknown field "${key.slice(0, 40)}"; the fields are "query" and "k"`);
  }
  if (typeof v.query !== 'string') throw new HttpError(422, 'BAD_QUERY', `"query" is ${v.query === undefined ? 'missing' : typeName(v.query)}, expected a string`);
  const query = v.query.trim();
  if (!query) throw new HttpError(422, 'EMPTY_QUERY', '"query" is empty');
  const chars = query.length <= MAX_QUERY_CHARS ? query.length : codePoints(query); // (UTF-16 units over-count astral characters)
  if (chars > MAX_QUERY_CHARS) throw new HttpError(422, 'QUERY_TOO_LONG', `"query" has ${chars} characters, over the limit of ${MAX_QUERY_CHARS}`);
  const lone = query.search(/\p{Surrogate}/u); // JSON may carry "\ud800": not Unicode text
  if (lone >= 0) throw new HttpError(422, 'BAD_QUERY', `"query" has a lone surrogate at character ${lone}: not Unicode text`);
  const k = v.k === undefined ? DEFAULT_K : v.k;
  if (!Number.isInteger(k) || k < 1 || k > MAX_K) throw new HttpError(422, 'BAD_K', `"k" is ${JSON.stringify(k)?.slice(0, 40)}, expected an integer from 1 to ${MAX_K}`);
  return { query, k };
}

// {"texts": [string, ...]} -> texts, or a 4xx naming what is wrong (the token counts are checked later,
// with the model's tokenizer).
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
function parseEmbed(bytes) {
  const v = parseJson(bytes);
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    throw new HttpError(422, 'NOT_AN_OBJECT', `body is ${typeName(v)}, expected a JSON object {"texts": ["…", …]}`);
  }
  for (const key of Object.keys(v)) {
    if (key !== 'texts') throw new HttpError(422, 'UNKNOWN_FIELD', `unknown field "${key.slice(0, 40)}"; the one field is "texts"`);
  }
  const { texts } = v;
  if (!Array.isArray(texts)) throw new HttpError(422, 'BAD_TEXTS', `"texts" is ${texts === undefined ? 'missing' : typeName(texts)}, expected an array of strings`);
  if (texts.length === 0) throw new HttpError(422, 'EMPTY_TEXTS', '"texts" is empty');
  if (texts.length > EMBED_MAX_TEXTS) throw new HttpError(413, 'TOO_MANY_TEXTS', `"texts" has ${texts.length} texts, over the limit of ${EMBED_MAX_TEXTS}`);
  texts.forEach((t, i) => {
    if (typeof t !== 'string') throw new HttpError(422, 'BAD_TEXT', `texts[${i}] is ${typeName(t)}, expected a string`);
    const chars = t.length <= EMBED_MAX_CHARS ? t.length : codePoints(t); // (UTF-16 units over-count astral characters)
    if (chars > EMBED_MAX_CHARS) throw new HttpError(422, 'TEXT_TOO_LONG', `texts[${i}] has ${chars} characters, over the limit of ${EMBED_MAX_CHARS}`);
    if (LONE_SURROGATE.test(t)) throw new HttpError(422, 'BAD_TEXT', `texts[${i}] has a lone surrogate (not Unicode text)`);
  });
  return texts;
}

// Each text's tokens (special tokens included) against the model's maximum length.
function checkTokens(encoder, texts) {
  const max = encoder.info.maxLength;
  texts.forEach((t, i) => {
    const n = encoder.tokenizer.encode(t, { truncation: false }).ids.length;
    if (n > max) throw new HttpError(422, 'TOO_MANY_TOKENS', `texts[${i}] has ${n} tokens, over the model's limit of ${max}`);
  });
}

// ---- request bodies ----

async function readBody(request, limit) {
  const declared = request.headers.get('content-length');
  if (declared !== null) {
    if (!/^\d+$/.test(declared.trim())) throw new HttpError(400, 'BAD_CONTENT_LENGTH', `Content-Length "${declared}" is not a byte count`);
    if (Number(declared) > limit) throw new HttpError(413, 'BODY_TOO_LARGE', `body of ${declared} bytes (Content-Length) exceeds the limit of ${limit} bytes`);
  }
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks = [];
  let total = 0;
  for (;;) {
    let chunk;
    try {
      chunk = await reader.read();
    } catch (e) {
      throw new HttpError(400, 'BAD_BODY', `the request body could not be read: ${e?.message ?? e}`);
    }
    const { done, value } = chunk;
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      const e = new HttpError(413, 'BODY_TOO_LARGE', `body exceeds the limit of ${limit} bytes (stopped reading at ${total} bytes)`);
      e.reader = reader; // the rest is drained before the answer
      throw e;
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(total);
  let o = 0;
  for (const c of chunks) { out.set(c, o); o += c.byteLength; }
  return out;
}

function mediaType(request) {
  const ct = request.headers.get('content-type');
  if (ct === null) return null;
  return ct.split(';')[0].trim().toLowerCase();
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function parseJson(bytes) {
  let text;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new HttpError(400, 'BAD_JSON', 'body is not valid UTF-8');
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new HttpError(400, 'BAD_JSON', `body is not valid JSON: ${e.message}`);
  }
}

const typeName = (v) => (v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'object' ? 'an object' : `a ${typeof v}`);

// Copies JSON numbers into dst at off, refusing non-numbers and values that are not finite f32.
function copyJsonRow(arr, dst, off, where) {
  for (let i = 0; i < arr.length; i++) {
    const v = arr[i];
    if (typeof v !== 'number') throw new HttpError(422, 'NOT_A_NUMBER', `${where}[${i}] is ${typeName(v)}, expected a number`);
    const f = Math.fround(v);
    if (!Number.isFinite(f)) throw new HttpError(422, 'NON_FINITE', `${where}[${i}] is ${v}, which is not a finite float32`);
    dst[off + i] = f;
  }
}

// Raw little-endian f32 bytes -> Float32Array, refusing NaN and infinities.
function rawToF32(bytes, where, inputSize) {
  const n = bytes.byteLength >> 2;
  const out = new Float32Array(n);
  new Uint8Array(out.buffer).set(bytes);
  if (new Uint8Array(new Uint16Array([1]).buffer)[0] !== 1) {
    const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let i = 0; i < n; i++) out[i] = dv.getFloat32(i * 4, true);
  }
  for (let i = 0; i < n; i++) {
    if (!Number.isFinite(out[i])) {
      const at = inputSize && n > inputSize ? `[${Math.floor(i / inputSize)}][${i % inputSize}]` : `[${i}]`;
      throw new HttpError(422, 'NON_FINITE', `${where}${at} is ${out[i]} (raw f32 at byte ${i * 4}); inputs must be finite`);
    }
  }
  return out;
}

function parseSingle(kind, bytes, inputSize) {
  if (kind === 'json') {
    const v = parseJson(bytes);
    if (!Array.isArray(v)) throw new HttpError(422, 'NOT_AN_ARRAY', `body is ${typeName(v)}, expected a JSON array of ${inputSize} numbers`);
    if (v.length !== inputSize) throw new HttpError(422, 'WRONG_LENGTH', `expected ${inputSize} numbers, got ${v.length}`);
    const x = new Float32Array(inputSize);
    copyJsonRow(v, x, 0, 'input');
    return x;
  }
  if (bytes.byteLength !== inputSize * 4) {
    throw new HttpError(422, 'WRONG_LENGTH', `expected ${inputSize * 4} bytes (${inputSize} little-endian f32), got ${bytes.byteLength}`);
  }
  return rawToF32(bytes, 'input', 0);
}

function parseBatch(kind, bytes, inputSize) {
  let n, x;
  if (kind === 'json') {
    const v = parseJson(bytes);
    if (!Array.isArray(v)) throw new HttpError(422, 'NOT_AN_ARRAY', `body is ${typeName(v)}, expected a JSON array of arrays of ${inputSize} numbers`);
    n = v.length;
    if (n === 0) throw new HttpError(422, 'EMPTY_BATCH', 'the batch has no inputs');
    if (n > MAX_BATCH) throw new HttpError(413, 'BATCH_TOO_LARGE', `the batch has ${n} inputs, over the limit of ${MAX_BATCH}`);
    x = new Float32Array(n * inputSize);
    for (let r = 0; r < n; r++) {
      const row = v[r];
      if (!Array.isArray(row)) throw new HttpError(422, 'NOT_AN_ARRAY', `input[${r}] is ${typeName(row)}, expected an array of ${inputSize} numbers`);
      if (row.length !== inputSize) throw new HttpError(422, 'WRONG_LENGTH', `input[${r}] has ${row.length} numbers, expected ${inputSize}`);
      copyJsonRow(row, x, r * inputSize, `input[${r}]`);
    }
    return { x, n };
  }
  const rowBytes = inputSize * 4;
  if (bytes.byteLength === 0) throw new HttpError(422, 'EMPTY_BATCH', 'the batch has no inputs (empty body)');
  if (bytes.byteLength % rowBytes !== 0) {
    throw new HttpError(422, 'WRONG_LENGTH', `body is ${bytes.byteLength} bytes, not a multiple of ${rowBytes} (${inputSize} little-endian f32 per input)`);
  }
  n = bytes.byteLength / rowBytes;
  if (n > MAX_BATCH) throw new HttpError(413, 'BATCH_TOO_LARGE', `the batch has ${n} inputs, over the limit of ${MAX_BATCH}`);
  return { x: rawToF32(bytes, 'input', inputSize), n };
}

function argmax(p, off, len) {
  let best = 0;
  for (let k = 1; k < len; k++) if (p[off + k] > p[off + best]) best = k;
  return best;
}

// ---- raw f32 answers ----

/* The client prefers application/octet-stream to application/json: a higher q (RFC 9110 12.5.1; q=0: not
 * acceptable), or the same q and listed first; JSON when it names neither. */
function acceptsRaw(request) {
  let raw = -1, json = -1, rawAt = -1, jsonAt = -1;
  (request.headers.get('accept') ?? '').toLowerCase().split(',').forEach((range, i) => {
    const [type, ...params] = range.split(';').map((s) => s.trim());
    let q = 1;
    for (const p of params) if (/^q=/.test(p)) q = /^q=(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(p) ? Number(p.slice(2)) : 0; // a malformed q: not acceptable
    if (type === 'application/octet-stream' && rawAt < 0) raw = q, rawAt = i;
    if (type === 'application/json' && jsonAt < 0) json = q, jsonAt = i;
  });
  return raw > 0 && (raw > json || (raw === json && rawAt < jsonAt));
}

/* The outputs as little-endian f32 (wasm and every engine here are little endian), row-major; the
 * shape in X-Mlrt-Shape ("10" for /predict, "n,10" for a batch). */
function rawResponse(p, shape, tag) {
  const body = new Uint8Array(p.buffer, p.byteOffset, p.byteLength).slice();
  return new Response(body, {
    headers: {
      'content-type': 'application/octet-stream', 'cache-control': 'no-store', 'x-mlrt-shape': shape.join(','),
      'x-mlrt-dtype': 'float32-le', 'x-mlrt-model': tag.id,
    },
  });
}

// ---- routing ----

const ROUTES = {
  '/predict': ['POST'],
  '/predict/batch': ['POST'],
  '/search': ['POST'],
  '/embed': ['POST'],
  '/info': ['GET', 'HEAD'],
};

async function handle(request, env) {
  const { pathname } = new URL(request.url);
  const methods = ROUTES[pathname];
  if (!methods) {
    throw new HttpError(404, 'NOT_FOUND', `no endpoint ${pathname}; try POST /predict, POST /predict/batch, POST /search, POST /embed or GET /info`);
  }
  if (!methods.includes(request.method)) {
    throw new HttpError(405, 'METHOD_NOT_ALLOWED', `${request.method} is not allowed on ${pathname}; use ${methods.join(' or ')}`, { allow: methods.join(', ') });
  }
  const cfg = config(env);

  if (pathname === '/info') {
    const search = hasWords() ? await getWords(cfg) : null;
    const limits = { maxBodyBytes: cfg.maxBody, maxBatch: MAX_BATCH };
    const searchInfo = search && {
      search: { model: search.tag, ...search.detail, wasmMemoryBytes: search.rt.memoryBytes, bundleBytes: wordsPack.byteLength, limits: { maxBodyBytes: Math.min(cfg.maxBody, SEARCH_MAX_BODY_BYTES), maxQueryChars: MAX_QUERY_CHARS, maxK: MAX_K } },
      embed: { model: search.tag, dim: search.encoder.info.dim, limits: { maxBodyBytes: Math.min(cfg.maxBody, EMBED_MAX_BODY_BYTES), maxTexts: EMBED_MAX_TEXTS, maxTextChars: EMBED_MAX_CHARS, maxTokens: search.encoder.info.maxLength } },
    };
    if (search && !cfg.modelUrl && !(embeddedModel?.byteLength > 0)) {
      return json({ model: null, ...searchInfo, isolate: { loads, served, searches, embedded }, limits });
    }
    const m = await getModel(cfg);
    return json({
      model: m.tag,
      info: m.model.info,
      ...m.detail,
      ...searchInfo,
      isolate: { loads, served, searches, embedded },
      limits,
    });
  }

  if (pathname === '/search') {
    if (mediaType(request) !== 'application/json') {
      const type = mediaType(request);
      throw new HttpError(415, 'UNSUPPORTED_MEDIA_TYPE', `Content-Type ${type === null ? 'is missing' : `"${type}" is not supported`}; send application/json`, { 'accept-post': 'application/json' });
    }
    const bytes = await readBody(request, Math.min(cfg.maxBody, SEARCH_MAX_BODY_BYTES));
    const { query, k } = parseSearch(bytes);
    const w = await getWords(cfg);
    const x = w.encoder.embed(query); // (lone surrogates were refused above)
    const results = w.index.search(x, k).map(({ word, score }) => ({ word, score }));
    searches++;
    return json({ results, model: w.tag });
  }

  if (pathname === '/embed') {
    if (mediaType(request) !== 'application/json') {
      const type = mediaType(request);
      throw new HttpError(415, 'UNSUPPORTED_MEDIA_TYPE', `Content-Type ${type === null ? 'is missing' : `"${type}" is not supported`}; send application/json`, { 'accept-post': 'application/json' });
    }
    const bytes = await readBody(request, Math.min(cfg.maxBody, EMBED_MAX_BODY_BYTES));
    const texts = parseEmbed(bytes);
    if (!hasWords()) throw new HttpError(503, 'NO_ENCODER', 'this worker embeds no sentence encoder: build it with MODEL=wordnet (node edge/build.mjs --model wordnet)');
    const w = await getWords(cfg);
    checkTokens(w.encoder, texts);
    const x = w.encoder.embed(texts), dim = w.encoder.info.dim;
    embedded += texts.length;
    if (acceptsRaw(request)) return rawResponse(x, [texts.length, dim], w.tag);
    const embeddings = Array.from({ length: texts.length }, (_, i) => Array.from(x.subarray(i * dim, (i + 1) * dim)));
    return json({ embeddings, dim, model: w.tag });
  }

  const type = mediaType(request);
  const kind = type === 'application/json' ? 'json' : type === 'application/octet-stream' ? 'raw' : null;
  if (!kind) {
    throw new HttpError(415, 'UNSUPPORTED_MEDIA_TYPE',
      `Content-Type ${type === null ? 'is missing' : `"${type}" is not supported`}; send application/json or application/octet-stream (little-endian f32)`,
      { 'accept-post': 'application/json, application/octet-stream' });
  }
  const bytes = await readBody(request, cfg.maxBody);
  const m = await getModel(cfg);
  const { inputSize, outputSize } = m.model.info;

  const wantsRaw = acceptsRaw(request);
  if (pathname === '/predict') {
    const x = parseSingle(kind, bytes, inputSize);
    const p = m.model.predict(x);
    served++;
    if (wantsRaw) return rawResponse(p, [outputSize], m.tag);
    return json({ label: argmax(p, 0, outputSize), probabilities: Array.from(p), model: m.tag });
  }
  const { x, n } = parseBatch(kind, bytes, inputSize);
  const p = m.model.predictBatch(x, n);
  served += n;
  if (wantsRaw) return rawResponse(p, [n, outputSize], m.tag);
  const labels = new Array(n), probabilities = new Array(n);
  for (let r = 0; r < n; r++) {
    labels[r] = argmax(p, r * outputSize, outputSize);
    probabilities[r] = Array.from(p.subarray(r * outputSize, (r + 1) * outputSize));
  }
  return json({ labels, probabilities, model: m.tag });
}

/* Reads and discards what is left of the request body, up to DRAIN_CAP_BYTES and while data keeps
 * coming (DRAIN_IDLE_MS). Returns true when the body ended (the connection can be reused), false
 * when the cap or a pause stopped it, or it failed. */
async function drain(request, reader) {
  if (!reader) {
    if (!request.body || request.bodyUsed) return true;
    reader = request.body.getReader();
  }
  let total = 0, stalls = 0, timer;
  const pause = (ms) => new Promise((resolve) => { timer = setTimeout(() => resolve(null), ms); });
  // The next chunk, or null when the client sent nothing for ms. A timer that fired late measured a
  // stall of the isolate or the machine, not of the client (its data and the timer came due together):
  // then it waits again, up to DRAIN_STALLS times.
  const within = async (read, ms) => {
    for (;;) {
      const armed = Date.now();
      const chunk = await Promise.race([read, pause(ms)]);
      clearTimeout(timer);
      if (chunk !== null || Date.now() - armed <= ms + DRAIN_LATE_MS || ++stalls > DRAIN_STALLS) return chunk;
    }
  };
  try {
    for (;;) {
      const read = reader.read();
      // a pause, then once more briefly (data and the timer can be ready together after a stall that
      // the clock did not show): closing with unread bytes would reset the connection under the client
      let chunk = await within(read, DRAIN_IDLE_MS);
      if (chunk === null) chunk = await within(read, DRAIN_RECHECK_MS);
      if (chunk === null) break; // the client stopped sending
      if (chunk.done) return true;
      total += chunk.value.byteLength;
      if (total > DRAIN_CAP_BYTES) break;
    }
  } catch {
    return false;
  }
  reader.cancel().catch(() => {});
  return false;
}

/* An error answer after the body: drained unless the client waits for 100 Continue (workerd sends
 * none, so it would not send the body); Connection: close when the body was not read to its end. */
async function answerError(request, e) {
  const waits = /100-continue/i.test(request.headers.get('expect') ?? '');
  const ended = !waits && (await drain(request, e.reader));
  if (!ended) e.headers = { ...e.headers, connection: 'close' };
  return errorResponse(e);
}

export default {
  async fetch(request, env) {
    try {
      return await handle(request, env);
    } catch (e) {
      if (e instanceof HttpError) return answerError(request, e);
      // The model refused an input the checks above let through: still the caller's input.
      if (e?.name === 'MlrtError' && (e.code === 'NON_FINITE' || e.code === 'INVALID_ARGUMENT' || e.code === 'INVALID_UTF8')) {
        return answerError(request, new HttpError(422, e.code, e.message));
      }
      console.error('mlrt edge worker: unexpected error', e?.stack ?? e);
      return errorResponse(new HttpError(500, 'INTERNAL', 'internal error'));
    }
  },
};
