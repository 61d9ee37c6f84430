// mlrt.mjs — the one JavaScript module for browsers, Node and edge workers.
//
//   import { createRuntime, MlrtError } from './mlrt.mjs';
//   const rt = await createRuntime();          // picks the relaxed-SIMD, SIMD128 or scalar build
//   const model = rt.loadFromBytes(bytes);     // Uint8Array | ArrayBuffer; throws MlrtError
//   const probs = model.predict(new Float32Array(model.info.inputSize));
//   model.dispose();
//
// No Node-only API on the import path: Node's file system is imported lazily, and only
// when asked to read a file: URL (Node's fetch cannot).

/** Thrown for every refusal; `code` is stable (e.g. 'BAD_OFFSETS', 'INVALID_ARGUMENT'). */
export class MlrtError extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'MlrtError';
    this.code = code;
  }
}

// A tiny module using memory.copy and i8x16.popcnt: valid only where SIMD128 and bulk memory are supported
// (mlrt.wasm uses both; every engine with the first has the second).
const SIMD_PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 5, 3, 1, 0, 0,
  10, 20, 1, 18, 0, 65, 0, 65, 0, 65, 0, 252, 10, 0, 0, 65, 0, 253, 15, 253, 98, 11]);

/** True when this engine runs WebAssembly SIMD128 (and bulk memory, which mlrt.wasm also uses). */
export function simdSupported() {
  try {
    return WebAssembly.validate(SIMD_PROBE);
  } catch {
    return false;
  }
}

// A tiny module using i8x16.relaxed_swizzle: valid only where relaxed SIMD is supported
// (Chromium and workerd by default; Node 20 with --experimental-wasm-relaxed-simd).
const RELAXED_PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 15, 1, 13, 0, 65, 1, 253, 15, 65, 2, 253, 15, 253, 128, 2, 11]);

/** True when this engine runs WebAssembly relaxed SIMD. */
export function relaxedSimdSupported() {
  try {
    return WebAssembly.validate(RELAXED_PROBE);
  } catch {
    return false;
  }
}

// Each URL a literal `new URL('…', import.meta.url)`: bundlers (Vite, Rollup, webpack 5) then emit
// the .wasm as an asset and rewrite the URL, with nothing to copy by hand.
const defaultWasmUrl = (simd, relaxed) => (relaxed ? new URL('./mlrt-relaxed.wasm', import.meta.url)
  : simd ? new URL('./mlrt.wasm', import.meta.url) : new URL('./mlrt-scalar.wasm', import.meta.url));

const NODE_FS = 'node:fs';

async function readUrl(url) {
  if (url.protocol === 'file:') {
    // a name bundlers do not follow: browser bundles must not pull in Node's file system
    const fs = await import(/* @vite-ignore */ /* webpackIgnore: true */ NODE_FS);
    // Compiled synchronously: a file: URL means Node, where that is allowed and saves the async
    // compile's thread hops (0.3-1 ms of cold start); browsers keep the async paths below.
    return new WebAssembly.Module(fs.readFileSync(url));
  }
  return fetch(url);
}

// Any accepted source -> WebAssembly.Module. Bytes and file: URLs never touch the fetch
// globals: in Node, the first access to Response loads undici (~20 ms, ~7 MB).
async function compile(source) {
  if (source instanceof WebAssembly.Module) return source;
  if (typeof source === 'string') source = new URL(source, import.meta.url);
  if (source instanceof URL) source = await readUrl(source);
  source = await source; // Promise<Response>
  if (source instanceof WebAssembly.Module) return source;
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) return WebAssembly.compile(source);
  if (typeof source?.arrayBuffer === 'function' && typeof source.ok === 'boolean') { // a Response
    if (!source.ok) throw new MlrtError('WASM_LOAD_FAILED', `fetching mlrt wasm failed: HTTP ${source.status}`);
    if (source.headers.get('content-type')?.startsWith('application/wasm') && WebAssembly.compileStreaming) {
      return WebAssembly.compileStreaming(source);
    }
    return WebAssembly.compile(await source.arrayBuffer());
  }
  throw new MlrtError('INVALID_ARGUMENT', 'createRuntime: wasm must be bytes, a URL, a Response or a WebAssembly.Module');
}

// Imports: the standalone build needs at most Emscripten's memory-growth notice.
function importsFor(module) {
  const imports = {};
  for (const { module: mod, name, kind } of WebAssembly.Module.imports(module)) {
    if (kind !== 'function') throw new MlrtError('WASM_LOAD_FAILED', `mlrt wasm imports unexpected ${kind} ${mod}.${name}`);
    imports[mod] ??= {};
    imports[mod][name] = mod === 'env' && name === 'emscripten_notify_memory_growth'
      ? () => {}
      : () => { throw new MlrtError('INTERNAL', `mlrt wasm called unexpected import ${mod}.${name}`); };
  }
  return imports;
}

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/**
 * Creates a runtime: one wasm instance whose memory holds every model loaded through it.
 * The build: relaxed SIMD where the engine has it, else SIMD128, else scalar; `relaxed: false` or
 * `simd: false` steps down. The relaxed build fuses multiply-adds, so its f32 results may differ
 * from the other two builds (which agree bit for bit) in the last bits. `rt.build` says which
 * instruction sets the module was compiled for (also when `wasm` is given).
 * `threads: n | 'auto'` (default 1) runs predict and predictBatch of dense models on n threads: this
 * thread and n - 1 workers over one shared memory (mlrt-threads.wasm, SIMD128), each row giving
 * the bits it gives on one thread. Where workers over shared memory are unavailable (no
 * SharedArrayBuffer, a page that is not cross-origin isolated, edge workers), it runs on one
 * thread and `rt.build.threadsUnavailable` says why. `rt.dispose()` ends the workers.
 * @param {{ wasm?: BufferSource | URL | string | Response | Promise<Response> | WebAssembly.Module,
 *           simd?: 'auto' | boolean, relaxed?: 'auto' | boolean, threads?: number | 'auto',
 *           threadsWasm?: BufferSource | URL | string | Response | Promise<Response> | WebAssembly.Module }} [options]
 */
export async function createRuntime(options = {}) {
  const threads = options.threads ?? 1;
  if (threads !== 'auto' && !(Number.isSafeInteger(threads) && threads >= 1 && threads <= 64)) {
    throw new MlrtError('INVALID_ARGUMENT', `createRuntime: threads must be 'auto' or an integer from 1 to 64, got ${JSON.stringify(threads)}`);
  }
  if (threads !== 1) {
    const t = await import('./threads.mjs');
    const n = threads === 'auto' ? await t.coreCount() : threads;
    const why = options.simd === false ? 'the threaded build needs SIMD128 (simd: false given)'
      : !simdSupported() ? 'no WebAssembly SIMD128' : t.threadsUnavailable();
    if (n > 1 && !why) return threadedRuntime(t, options, n);
    const rt = await createRuntime({ ...options, threads: 1 });
    if (why) rt.build = Object.freeze({ ...rt.build, threadsUnavailable: why });
    return rt;
  }
  const auto = (v) => v === undefined || v === 'auto';
  const simd = auto(options.simd) ? simdSupported() : Boolean(options.simd);
  if (simd && !simdSupported()) throw new MlrtError('UNSUPPORTED', 'createRuntime: this engine has no WebAssembly SIMD128');
  if (options.relaxed === true && options.simd === false) throw new MlrtError('INVALID_ARGUMENT', 'createRuntime: relaxed: true needs SIMD, but simd: false was given');
  if (options.relaxed === true && !relaxedSimdSupported()) throw new MlrtError('UNSUPPORTED', 'createRuntime: this engine has no WebAssembly relaxed SIMD');
  const relaxed = simd && (auto(options.relaxed) ? relaxedSimdSupported() : Boolean(options.relaxed));
  const module = await compile(options.wasm ?? defaultWasmUrl(simd, relaxed));
  const instance = await WebAssembly.instantiate(module, importsFor(module));
  instance.exports._initialize?.(); // the standalone builds' constructors
  return new Runtime(new Wasm(instance.exports, instance.exports.memory));
}

// n threads: the threaded build over a shared memory, and n - 1 workers running it.
async function threadedRuntime(t, options, n) {
  const module = await compile(options.threadsWasm ?? new URL('./mlrt-threads.wasm', import.meta.url));
  const memory = new WebAssembly.Memory({ initial: 16, maximum: 32768, shared: true });
  const instance = await WebAssembly.instantiate(module, t.threadImports(module, memory));
  instance.exports.__wasm_call_ctors?.(); // once, on this thread: the workers share what they set up
  const wasm = new Wasm(instance.exports, memory);
  try {
    wasm.threads = await t.ThreadRunner.start(wasm, module, memory, n - 1);
  } catch (e) {
    throw new MlrtError('WASM_LOAD_FAILED', `createRuntime: the worker threads did not start: ${e?.message ?? e}`);
  }
  return new Runtime(wasm);
}

// mlrt.h's functions the module calls: a build without one is not an mlrt build of this version.
const EXPORTS = ['mlrt_alloc', 'mlrt_dealloc', 'mlrt_build_flags', 'mlrt_status_name', 'mlrt_load_from_bytes_ex', 'mlrt_free',
  'mlrt_model_info_json', 'mlrt_predict_batch', 'mlrt_predict_labels', 'mlrt_model_fork', 'mlrt_layer_slice', 'mlrt_layer',
  'mlrt_layer_weights', 'mlrt_inspect', 'mlrt_string_free', 'mlrt_run', 'mlrt_output',
  'mlrt_tokenizer_load', 'mlrt_tokenizer_free', 'mlrt_tokenizer_encode', 'mlrt_tokenizer_encode_batch', 'mlrt_tokenizer_decode',
  'mlrt_tokenizer_normalize', 'mlrt_tokenizer_token', 'mlrt_tokenizer_info_json', 'mlrt_load_files', 'mlrt_embed', 'mlrt_model_tokenizer', 'mlrt_warm_up'];

// mlrt.h's structs as laid out in wasm32 memory (pinned by _Static_asserts in src/api/host.c).
const ERROR = { bytes: 324, message: 4 };                               // mlrt_error { code; char message[320] }
const TENSOR = { bytes: 88, name: 0, dtype: 4, rank: 8, dims: 16, data: 80 }; // mlrt_tensor
const MAX_DIMS = 8;                                                     // MLRT_MAX_DIMS
const LOAD_OPTIONS = { bytes: 12, expect: 0, weightLayout: 4, takeFiles: 8 }; // mlrt_load_options
const LAYER_INFO = { bytes: 16, hasBias: 12 };                          // mlrt_layer_info { inputs, outputs, activation, has_bias }

// The element types run() takes and gives, by onnxruntime-web's tensor type names: their mlrt_dtype
// numbers (mlrt.h) and typed arrays. int64 also takes an Int32Array (run passes it as I32, which
// mlrt_run widens); bool is a Uint8Array of 0 and 1, as in onnxruntime-web.
const TENSOR_TYPES = {
  float32: { dtype: 11, array: Float32Array },
  int32: { dtype: 9, array: Int32Array },
  int64: { dtype: 13, array: BigInt64Array },
  uint8: { dtype: 1, array: Uint8Array },
  bool: { dtype: 0, array: Uint8Array },
};
const DTYPE_I32 = TENSOR_TYPES.int32.dtype;
const TYPE_OF_DTYPE = new Map(Object.entries(TENSOR_TYPES).map(([type, t]) => [t.dtype, type]));

// The largest block a wasm32 memory can give (4 GiB less one 64 KiB page).
const MAX_ALLOC = 0xffff0000;

// The wasm instance and what a runtime's models share through it: views over its memory (renewed
// after the memory grows, which detaches old views), its allocator, the mlrt_error that every call
// on this thread fills, the thread runner (threads.mjs, when threads > 1, else null), and the
// registry that frees the models dropped without dispose(). Module-private: used by Runtime, Model
// and threads.mjs.
class Wasm {
  #memory;
  #u8 = new Uint8Array(0);
  #view = new DataView(new ArrayBuffer(0));
  #models;
  #warm = false;
  /** The exports (mlrt.h's functions). */
  x;
  /** The mlrt_error every call from this thread passes (workers pass NULL). */
  error;
  /** threads.mjs' ThreadRunner, while workers run (threads > 1); else null. */
  threads = null;

  constructor(exports, memory) {
    const missing = EXPORTS.filter((name) => typeof exports[name] !== 'function');
    if (missing.length) throw new MlrtError('WASM_LOAD_FAILED', `not an mlrt build of this version: it lacks ${missing.join(', ')}`);
    this.x = exports;
    this.#memory = memory;
    this.error = this.alloc(ERROR.bytes);
    this.#models = typeof FinalizationRegistry === 'function'
      ? new FinalizationRegistry((record) => this.#free(record)) : null;
  }

  get memoryBytes() { return this.#memory.buffer.byteLength; }

  /** mlrt_warm_up, once per instance: before an encoder's weights are read, so that the engine compiles
   * the kernels optimized while they are read (mlrt.h). Out of memory there is left to the load to meet. */
  warmUp() {
    if (this.#warm) return;
    this.#warm = true;
    this.x.mlrt_warm_up(0);
  }

  /** Grows the memory once by `bytes` where its free space is less, ahead of allocations that would
   * grow it step by step: V8 counts a wasm memory's growth as external memory, and each step can start
   * a garbage collection. Nothing when it cannot (the allocations themselves will say). */
  reserve(bytes) {
    let ptr = 0;
    try { ptr = this.alloc(bytes); } catch { return; }
    this.free(ptr);
  }

  u8() {
    if (this.#u8.buffer !== this.#memory.buffer) this.#u8 = new Uint8Array(this.#memory.buffer);
    return this.#u8;
  }

  view() {
    if (this.#view.buffer !== this.#memory.buffer) this.#view = new DataView(this.#memory.buffer);
    return this.#view;
  }

  /** A typed array of `length` elements at ptr, over wasm memory (valid until the memory grows). */
  array(Type, ptr, length) { return new Type(this.#memory.buffer, ptr, length); }

  string(ptr) {
    const u8 = this.u8();
    let end = ptr;
    while (u8[end]) end++;
    // TextDecoder refuses views of shared memory (the threaded build's): decode a copy there
    return decoder.decode(u8.buffer instanceof ArrayBuffer ? u8.subarray(ptr, end) : u8.slice(ptr, end));
  }

  alloc(bytes) {
    // mlrt_alloc takes a 32-bit size: a larger one would wrap to a small block
    if (!Number.isSafeInteger(bytes) || bytes < 0 || bytes > MAX_ALLOC) {
      throw new MlrtError('OUT_OF_MEMORY', `mlrt: cannot allocate ${bytes} bytes of wasm memory (at most ${MAX_ALLOC})`);
    }
    const ptr = this.x.mlrt_alloc(bytes);
    if (!ptr) throw new MlrtError('OUT_OF_MEMORY', `mlrt: cannot allocate ${bytes} bytes of wasm memory`);
    return ptr;
  }

  free(ptr) { this.x.mlrt_dealloc(ptr); }

  /** The refusal that the last failed call wrote into `error`, as an MlrtError. */
  failure() {
    const code = this.view().getInt32(this.error, true);
    return new MlrtError(this.string(this.x.mlrt_status_name(code)), this.string(this.error + ERROR.message));
  }

  /** Throws the call's refusal unless its status is 0 (MLRT_OK). */
  check(status) {
    if (status !== 0) throw this.failure();
  }

  /** Runs fn(ptr) with `bytes` of wasm memory, freed afterwards. */
  withScratch(bytes, fn) {
    const ptr = this.alloc(bytes);
    try {
      return fn(ptr);
    } finally {
      this.free(ptr);
    }
  }

  /** Copies the caller's bytes into wasm memory for the duration of fn(ptr, len). */
  withBytes(bytes, what, fn) {
    bytes = asBytes(bytes, what);
    return this.withScratch(bytes.length, (ptr) => {
      this.u8().set(bytes, ptr);
      return fn(ptr, bytes.length);
    });
  }

  /** Watches a model: if it is dropped without dispose(), its record's wasm memory is freed. */
  track(model, record) { this.#models?.register(model, record, record); }

  /** Frees a model's wasm memory now (dispose()). */
  release(record) {
    this.#models?.unregister(record);
    this.#free(record);
  }

  // A model's record: { ptr, io, inputSize, outputSize, layers, threads }. Its forks go first.
  #free(record) {
    record.threads?.release();
    record.threads = null;
    if (record.io) this.free(record.io);
    if (record.ptr) this.x.mlrt_free(record.ptr);
    record.io = record.ptr = 0;
  }
}

class Runtime {
  #wasm;

  constructor(wasm) {
    this.#wasm = wasm;
    // What the module was compiled for (mlrt_build_flags bit 0: SIMD128, bit 1: relaxed SIMD),
    // which is the truth also when the caller passed its own wasm.
    const flags = wasm.x.mlrt_build_flags();
    this.build = Object.freeze({ simd: (flags & 1) !== 0, relaxed: (flags & 2) !== 0, threads: (wasm.threads?.workers ?? 0) + 1 });
  }

  /** Bytes of wasm memory in use by the heap (grows, never shrinks). */
  get memoryBytes() { return this.#wasm.memoryBytes; }

  /**
   * The worker pool, for diagnostics and tests (null with one thread): size (workers), sleeping
   * (how many sleep in Atomics.wait), wake() (wakes them; returns how many slept), completed
   * ({ rows, slices }: jobs the workers finished without error).
   */
  get threadPool() { return this.#wasm.threads?.diagnostics() ?? null; }

  /**
   * Loads a WordPiece tokenizer (see Tokenizer): the bytes of a tokenizer.json (or of a vocab.txt),
   * or the files of a model folder by name: { 'tokenizer.json': bytes } or
   * { 'vocab.txt': bytes, 'tokenizer_config.json'?: bytes }. Throws MlrtError.
   */
  loadTokenizer(files) {
    this.#text ??= new TextPort(this.#wasm);
    return loadTokenizer(this.#text, files);
  }

  #text = null; // TextPort: the tokenizers' access to this runtime's exports and memory

  /**
   * Loads a sentence encoder (BERT family: all-MiniLM, bge, e5, gte, ...) from its folder's files by
   * their names in the model's repository: { 'model.safetensors': bytes, 'config.json': bytes,
   * 'tokenizer.json': bytes, 'modules.json'?: bytes, '1_Pooling/config.json'?: bytes,
   * 'sentence_bert_config.json'?: bytes, ... } (or a Map), or { 'model.apr': bytes, ... } (aprender
   * .apr v2). Bytes are Uint8Array or ArrayBuffer, and may be reused afterwards. Throws MlrtError.
   */
  loadEncoder(files) {
    this.#text ??= new TextPort(this.#wasm);
    return loadEncoder(this.#wasm, this.#text, files);
  }

  /**
   * loadEncoder, reading the files that need it while the engine compiles the kernels: a file may also
   * be a Blob (a File from an <input>, fs.openAsBlob), or a source { byteLength, read(dest, position) }
   * whose read fills dest with the file's bytes from position, a part at a time, several at once (Node:
   * fileHandle.read(dest, 0, dest.length, position)). Rejects with MlrtError.
   */
  async loadEncoderAsync(files) {
    this.#text ??= new TextPort(this.#wasm);
    return loadEncoderAsync(this.#wasm, this.#text, files);
  }

  /** Lists a file's tensors and metadata without building a model. */
  inspect(bytes) {
    const w = this.#wasm;
    const json = w.withBytes(bytes, 'inspect', (ptr, len) => w.x.mlrt_inspect(ptr, len, w.error));
    if (!json) throw w.failure();
    try {
      return JSON.parse(w.string(json));
    } finally {
      w.x.mlrt_string_free(json);
    }
  }

  /**
   * Loads a model from a file's bytes; the bytes may be reused afterwards.
   * options.expect: the aprender model type the file must hold ('LinearRegression', ...).
   * options.weightLayout: 'auto' (default), 'out_in' (PyTorch) or 'in_out' (Keras, JAX, aprender):
   * how a tensor file's dense weights are stored; 'auto' decides from biases, widths and names.
   */
  loadFromBytes(bytes, options = {}) {
    return this.#load(bytes, options?.expect, 'loadFromBytes', null, options?.weightLayout);
  }

  /**
   * Loads a model like loadFromBytes, and for .apr v1 files checks the Ed25519 signature and
   * decrypts the payload first (WebCrypto, in apr-crypto.mjs, imported on first use so that
   * createRuntime does not pay for it). info gets signature { signed, signer, verified } and
   * encrypted ('password' | 'recipient' | false).
   * options: publicKey (trusted Ed25519 key: the file must be signed by it), requireSignature
   * (a signed file is required; without publicKey it is checked against the key it embeds, which
   * proves it intact, not who signed it), password / recipientSecretKey (an encrypted payload),
   * argon2id (password KDF to use instead of @noble/hashes), expect (as loadFromBytes).
   * Order: container (CRC, magic, version, sections) -> signature -> type/metadata -> decryption
   * -> the C loader. Codes: NOT_SIGNED, SIGNATURE_INVALID, ENCRYPTED (no password or key),
   * DECRYPTION_FAILED, WRONG_RECIPIENT, and loadFromBytes' codes.
   */
  async load(bytes, options = {}) {
    const { publicKey, password, recipientSecretKey, expect, requireSignature = false, argon2id, weightLayout } = options ?? {};
    const file = asBytes(bytes, 'load');
    if (typeof requireSignature !== 'boolean') throw new MlrtError('INVALID_ARGUMENT', 'load: options.requireSignature must be a boolean');
    const wantSignature = publicKey != null || requireSignature;
    const flags = isAprV1(file) && file.length > 21 ? file[21] : 0;
    if (!isAprV1(file) || (!wantSignature && !(flags & (APR_ENCRYPTED | APR_SIGNED)))) {
      if (wantSignature) {
        this.inspect(file); // a file that is no model at all says so first
        throw new MlrtError('NOT_SIGNED', `load: ${publicKey != null ? 'a trusted publicKey was given' : 'requireSignature is set'} but the file is not signed (only .apr v1 files carry signatures)`);
      }
      return this.#load(file, expect, 'load', { signature: NO_SIGNATURE, encrypted: false }, weightLayout);
    }
    const crypto = await import('./apr-crypto.mjs');
    const check = await crypto.verifyAprV1(file, { publicKey }); // throws for a malformed container
    if (!check.signed && wantSignature) {
      throw new MlrtError('NOT_SIGNED', `load: ${publicKey != null ? 'a trusted publicKey was given' : 'requireSignature is set'} but the .apr file is not signed (flag 0x02 is clear)`);
    }
    if (check.signed && !check.valid) throw new MlrtError('SIGNATURE_INVALID', `load: apr: ${check.reason}`);
    const signature = { signed: check.signed, signer: check.signer, verified: check.valid };
    if (!(flags & APR_ENCRYPTED)) return this.#load(file, expect, 'load', { signature, encrypted: false });
    if (password == null && recipientSecretKey == null) {
      throw new MlrtError('ENCRYPTED', 'load: the .apr payload is encrypted (flag 0x01): pass { password } (password mode) or { recipientSecretKey } (X25519 recipient mode)');
    }
    this.#checkBeforeDecrypting(file, expect);
    const { file: plain, mode } = await crypto.decryptAprV1Detailed(file, { password, recipientSecretKey, argon2id });
    return this.#load(plain, expect, 'load', { signature, encrypted: mode });
  }

  // The C loader checks the header (model type, expect), the sections and the metadata of an
  // encrypted file and then stops at ENCRYPTED: any other refusal comes before the slow KDF.
  #checkBeforeDecrypting(file, expect) {
    try {
      this.#load(file, expect, 'load', null).dispose(); // not reached: the payload is encrypted
    } catch (e) {
      if (e?.code !== 'ENCRYPTED') throw e;
    }
  }

  // loadFromBytes and load: extra members (or null) join info before it is frozen.
  #load(bytes, expect, what, extra, weightLayout = 'auto') {
    const w = this.#wasm;
    if (expect !== undefined && (typeof expect !== 'string' || expect.includes('\0'))) {
      throw new MlrtError('INVALID_ARGUMENT', `${what}: options.expect must be a string without NUL`);
    }
    const layout = WEIGHT_LAYOUTS.indexOf(weightLayout ?? 'auto');
    if (layout < 0) {
      throw new MlrtError('INVALID_ARGUMENT', `${what}: options.weightLayout must be 'auto', 'out_in' or 'in_out', got ${JSON.stringify(weightLayout)}`);
    }
    const expectUtf8 = expect === undefined ? null : encoder.encode(expect);
    const ptr = w.withBytes(bytes, what, (file, len) => w.withScratch(LOAD_OPTIONS.bytes + (expectUtf8?.length ?? 0) + 1, (opts) => {
      writeLoadOptions(w, opts, expectUtf8, layout);
      return w.x.mlrt_load_from_bytes_ex(file, len, opts, w.error);
    }));
    if (!ptr) throw w.failure();
    const info = deepFreeze(Object.assign(JSON.parse(w.string(w.x.mlrt_model_info_json(ptr))), extra));
    const record = { ptr, io: 0, inputSize: info.inputSize, outputSize: info.outputSize, layers: info.layers ?? null, threads: null };
    try {
      record.io = w.alloc((info.inputSize + info.outputSize) * 4); // one row's input and output, or one label
    } catch (e) {
      w.release(record);
      throw e;
    }
    const model = new Model(w, record, info);
    w.track(model, record);
    return model;
  }

  /** Ends the worker threads (threads > 1); the runtime and its models go on, on this thread. */
  dispose() {
    this.#wasm.threads?.terminate();
    this.#wasm.threads = null;
    this.build = Object.freeze({ ...this.build, threads: 1 });
  }
}

// An mlrt_load_options at ptr, followed by expect's NUL-terminated UTF-8 (or NULL without it).
function writeLoadOptions(w, ptr, expectUtf8, layout, takeFiles = false) {
  const text = ptr + LOAD_OPTIONS.bytes, view = w.view(), u8 = w.u8();
  if (expectUtf8) u8.set(expectUtf8, text);
  u8[text + (expectUtf8?.length ?? 0)] = 0;
  view.setUint32(ptr + LOAD_OPTIONS.expect, expectUtf8 ? text : 0, true);
  view.setInt32(ptr + LOAD_OPTIONS.weightLayout, layout, true);
  view.setInt32(ptr + LOAD_OPTIONS.takeFiles, takeFiles ? 1 : 0, true);
}

// A buffer that was transferred (postMessage, structuredClone) has no bytes: slice() throws on it.
function detached(buffer) {
  try { buffer.slice(0, 0); return false; } catch { return true; }
}

function asBytes(bytes, what) {
  if ((bytes instanceof ArrayBuffer || ArrayBuffer.isView(bytes)) && detached(bytes.buffer ?? bytes)) {
    throw new MlrtError('INVALID_ARGUMENT', `${what}: the bytes' ArrayBuffer has been detached (transferred)`);
  }
  if (bytes instanceof ArrayBuffer) return new Uint8Array(bytes);
  if (ArrayBuffer.isView(bytes)) return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes instanceof Map || (bytes && Object.getPrototypeOf(bytes) === Object.prototype)) {
    throw new MlrtError('INVALID_ARGUMENT', `${what}: expected a Uint8Array or ArrayBuffer, got a folder's files by name: a sentence encoder loads with rt.loadEncoder(files)`);
  }
  throw new MlrtError('INVALID_ARGUMENT', `${what}: expected a Uint8Array or ArrayBuffer`);
}

// mlrt_weight_layout, by index.
const WEIGHT_LAYOUTS = ['auto', 'out_in', 'in_out'];

// .apr v1 ("APRN") header flags that load() acts on (byte 21).
const APR_ENCRYPTED = 0x01;
const APR_SIGNED = 0x02;
const NO_SIGNATURE = { signed: false, signer: null, verified: false };
const isAprV1 = (b) => b.length >= 4 && b[0] === 0x41 && b[1] === 0x50 && b[2] === 0x52 && b[3] === 0x4e;

function deepFreeze(o) {
  for (const v of Object.values(o)) if (v && typeof v === 'object') deepFreeze(v);
  return Object.freeze(o);
}

function checkInputs(input, expected, what) {
  if (!(input instanceof Float32Array || input instanceof Float64Array || Array.isArray(input))) {
    throw new MlrtError('INVALID_ARGUMENT', `${what}: expected a Float32Array or an array of numbers`);
  }
  if (input.length !== expected) {
    throw new MlrtError('INVALID_ARGUMENT', `${what}: expected ${expected} input values, got ${input.length}`);
  }
}

// ------------------------------------------------------------------ run(): named, typed tensors

const align8 = (n) => (n + 7) & ~7;
const quoted = (names) => names.map((n) => `'${n}'`).join(', ');

/**
 * The feeds in the model's input order, each checked on its own: { name (UTF-8), dtype, dims, bytes }.
 * What only the model knows (its element types, fixed and varying dimensions) mlrt_run checks.
 */
function tensorsOf(feeds, inputs) {
  if (feeds === null || typeof feeds !== 'object' || Array.isArray(feeds)) {
    throw new MlrtError('INVALID_ARGUMENT', 'run: feeds must be an object: { [inputName]: { data, dims } }');
  }
  const names = inputs.map((i) => i.name);
  const unknown = Object.keys(feeds).find((k) => !names.includes(k));
  if (unknown !== undefined) {
    throw new MlrtError('INVALID_ARGUMENT', `run: the model has no input '${unknown}' (its inputs: ${quoted(names)})`);
  }
  const missing = names.filter((n) => feeds[n] === undefined);
  if (missing.length) {
    throw new MlrtError('INVALID_ARGUMENT', `run: no feed for input${missing.length > 1 ? 's' : ''} ${quoted(missing)} (the model takes ${quoted(names)})`);
  }
  return names.map((name) => tensorOf(feeds[name], name));
}

function tensorOf(feed, name) {
  const what = `run: input '${name}'`;
  if (feed === null || typeof feed !== 'object' || !('data' in feed && 'dims' in feed)) {
    throw new MlrtError('INVALID_ARGUMENT', `${what} must be { data, dims }${ArrayBuffer.isView(feed) ? `, not a bare ${feed.constructor.name}` : ''}`);
  }
  const { data, dims, type } = feed;
  const dtype = dtypeOf(data, type, what);
  if (!Array.isArray(dims) || dims.length > MAX_DIMS || !dims.every((d) => Number.isSafeInteger(d) && d >= 0)) {
    throw new MlrtError('INVALID_ARGUMENT', `${what}: dims must be an array of at most ${MAX_DIMS} non-negative integers, got ${JSON.stringify(dims)}`);
  }
  const count = dims.reduce((a, d) => a * d, 1);
  if (count !== data.length) {
    throw new MlrtError('INVALID_ARGUMENT', `${what}: dims [${dims.join(', ')}] hold ${count} elements, data has ${data.length}`);
  }
  return { name: encoder.encode(name), dtype, dims, bytes: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) };
}

// The mlrt_dtype of a feed's data: by its `type` when given (onnxruntime-web's Tensor has one),
// else by its typed array.
function dtypeOf(data, type, what) {
  if (type !== undefined) {
    const t = TENSOR_TYPES[type];
    if (!Object.hasOwn(TENSOR_TYPES, type)) {
      throw new MlrtError('INVALID_ARGUMENT', `${what}: type must be one of ${Object.keys(TENSOR_TYPES).join(', ')}, got ${JSON.stringify(type)}`);
    }
    if (type === 'int64' && data instanceof Int32Array) return DTYPE_I32; // widened by mlrt_run
    if (!(data instanceof t.array)) {
      throw new MlrtError('INVALID_ARGUMENT', `${what}: type '${type}' takes ${t.array.name}${type === 'int64' ? ' or Int32Array' : ''} data, got ${data?.constructor?.name ?? typeof data}`);
    }
    return t.dtype;
  }
  for (const t of Object.values(TENSOR_TYPES)) if (data instanceof t.array) return t.dtype; // (uint8 before bool)
  throw new MlrtError('INVALID_ARGUMENT', `${what}: data must be a Float32Array, Int32Array, BigInt64Array or Uint8Array (with type 'bool' for a mask), got ${data?.constructor?.name ?? typeof data}`);
}

// Lays out n mlrt_tensor structs at ptr, then each tensor's name and data (8-aligned): the bytes needed.
function tensorBlockBytes(tensors) {
  let bytes = tensors.length * TENSOR.bytes;
  for (const t of tensors) bytes = align8(bytes + t.name.length + 1) + align8(t.bytes.length);
  return bytes;
}

function writeTensors(w, ptr, tensors) {
  let at = ptr + tensors.length * TENSOR.bytes;
  tensors.forEach((t, k) => {
    const namePtr = at, dataPtr = align8(namePtr + t.name.length + 1);
    at = dataPtr + align8(t.bytes.length);
    const u8 = w.u8(), view = w.view(), s = ptr + k * TENSOR.bytes;
    u8.set(t.name, namePtr);
    u8[namePtr + t.name.length] = 0;
    u8.set(t.bytes, dataPtr);
    view.setUint32(s + TENSOR.name, namePtr, true);
    view.setInt32(s + TENSOR.dtype, t.dtype, true);
    view.setUint32(s + TENSOR.rank, t.dims.length, true);
    t.dims.forEach((d, i) => view.setBigInt64(s + TENSOR.dims + 8 * i, BigInt(d), true));
    view.setUint32(s + TENSOR.data, dataPtr, true);
  });
}

// Output k of the last mlrt_run, copied out of wasm memory: { type, data, dims }.
function readOutput(w, modelPtr, k) {
  const s = w.x.mlrt_output(modelPtr, k), view = w.view();
  const dtype = view.getInt32(s + TENSOR.dtype, true), rank = view.getUint32(s + TENSOR.rank, true);
  const dims = Array.from({ length: rank }, (_, i) => Number(view.getBigInt64(s + TENSOR.dims + 8 * i, true)));
  const type = TYPE_OF_DTYPE.get(dtype);
  if (type === undefined) throw new MlrtError('INTERNAL', `run: output ${k} has element type ${dtype}, which run() does not return`);
  const count = dims.reduce((a, d) => a * d, 1), Type = TENSOR_TYPES[type].array;
  const data = count ? w.array(Type, view.getUint32(s + TENSOR.data, true), count).slice() : new Type(0);
  return { type, data, dims };
}

class Model {
  #wasm;
  #m; // the record of its wasm memory (Wasm#free): ptr, io, inputSize, outputSize, layers, threads

  constructor(wasm, record, info) {
    this.#wasm = wasm;
    this.#m = record;
    /** { format, kind, task, classCount?, classes?, trees?, clusters?, inputSize, outputSize, dtype, params,
     *    weightBytes, layers, inputs, outputs, metadata } */
    this.info = info;
  }

  #live(what) {
    if (!this.#m.ptr) throw new MlrtError('DISPOSED', `${what}: the model has been disposed`);
  }

  // predict and the label calls: a live model whose one input is rows of floats.
  #takesRows(what) {
    this.#live(what);
    if (!this.info.inputSize) { // a graph whose inputs are not one row of floats
      throw new MlrtError('INVALID_ARGUMENT', `${what}: this model takes named inputs (${quoted(this.info.inputs.map((i) => i.name))}), not rows of floats: use run(feeds)`);
    }
  }

  // n rows from inPtr into outPtr: split between the threads when that pays, else on this one.
  #predictRows(inPtr, n, outPtr) {
    const w = this.#wasm, m = this.#m;
    if (w.threads?.predict(m, inPtr, n, outPtr)) return;
    w.check(w.x.mlrt_predict_batch(m.ptr, inPtr, n, outPtr, w.error));
  }

  /** One input of info.inputSize numbers -> Float32Array(info.outputSize). */
  predict(input) {
    this.#takesRows('predict');
    const { inputSize, outputSize } = this.info;
    checkInputs(input, inputSize, 'predict');
    const w = this.#wasm, inPtr = this.#m.io, outPtr = inPtr + inputSize * 4;
    w.array(Float32Array, inPtr, inputSize).set(input);
    this.#predictRows(inPtr, 1, outPtr);
    return w.array(Float32Array, outPtr, outputSize).slice();
  }

  /** n inputs, row after row -> Float32Array(n * info.outputSize). */
  predictBatch(inputs, n) {
    this.#takesRows('predictBatch');
    checkRowCount(n, 'predictBatch');
    const { inputSize, outputSize } = this.info;
    checkInputs(inputs, n * inputSize, 'predictBatch');
    const w = this.#wasm;
    return w.withScratch(n * (inputSize + outputSize) * 4, (inPtr) => {
      const outPtr = inPtr + n * inputSize * 4;
      w.array(Float32Array, inPtr, n * inputSize).set(inputs);
      this.#predictRows(inPtr, n, outPtr);
      return w.array(Float32Array, outPtr, n * outputSize).slice();
    });
  }

  /**
   * The label of one input: a classifier's class label (info.classes when the file stores labels,
   * else the output's index; ties go to the smallest), or KMeans' nearest centroid index (ties:
   * the lowest). Regressors throw INVALID_ARGUMENT.
   */
  predictLabel(input) {
    return this.#labels(input, 1, 'predictLabel')[0];
  }

  /** n inputs, row after row -> Uint32Array(n) of labels (see predictLabel). */
  predictLabels(inputs, n) {
    return this.#labels(inputs, n, 'predictLabels');
  }

  #labels(inputs, n, what) {
    this.#takesRows(what);
    if (this.info.task === 'regression') {
      throw new MlrtError('INVALID_ARGUMENT', `${what}: a ${this.info.kind} regressor predicts values, not labels: use predict`);
    }
    checkRowCount(n, what);
    const { inputSize } = this.info;
    checkInputs(inputs, n * inputSize, what);
    const w = this.#wasm;
    return w.withScratch(n * (inputSize + 1) * 4, (inPtr) => {
      const outPtr = inPtr + n * inputSize * 4;
      w.array(Float32Array, inPtr, n * inputSize).set(inputs);
      w.check(w.x.mlrt_predict_labels(this.#m.ptr, inPtr, n, outPtr, w.error));
      return w.array(Uint32Array, outPtr, n).slice();
    });
  }

  /**
   * Runs the model on named, typed inputs, in onnxruntime-web's convention:
   * feeds { [inputName]: { data: TypedArray, dims: number[], type? } } -> { [outputName]: { type, data, dims } }.
   * Every input of info.inputs must be fed; data is copied in and the outputs are copied out.
   */
  run(feeds) {
    this.#live('run');
    const tensors = tensorsOf(feeds, this.info.inputs);
    const w = this.#wasm, ptr = this.#m.ptr;
    w.withScratch(tensorBlockBytes(tensors), (block) => {
      writeTensors(w, block, tensors);
      w.check(w.x.mlrt_run(ptr, block, tensors.length, w.error));
    });
    const results = {};
    this.info.outputs.forEach((o, k) => { results[o.name] = readOutput(w, ptr, k); });
    return results;
  }

  /**
   * Layer i's weights as f32 (quantized weights dequantized), for converters:
   * { inputs, outputs, activation, weight: Float32Array(outputs × inputs) row-major [out][in],
   *   bias: Float32Array(outputs), or null when the file has no bias }.
   */
  layerWeights(i) {
    this.#live('layerWeights');
    const layer = this.info.layers[i];
    if (!Number.isInteger(i) || !layer) {
      throw new MlrtError('INVALID_ARGUMENT', `layerWeights: no layer ${i} (the model has ${this.info.layers.length})`);
    }
    const w = this.#wasm, { inputs, outputs } = layer, weights = inputs * outputs;
    return w.withScratch((weights + outputs) * 4 + LAYER_INFO.bytes, (wp) => {
      const bp = wp + weights * 4, infoPtr = bp + outputs * 4;
      w.check(w.x.mlrt_layer_weights(this.#m.ptr, i, wp, bp, w.error));
      w.x.mlrt_layer(infoPtr, this.#m.ptr, i); // mlrt_layer_info, returned through a pointer (wasm32 C ABI)
      const hasBias = w.view().getInt32(infoPtr + LAYER_INFO.hasBias, true) !== 0;
      return {
        ...layer,
        weight: w.array(Float32Array, wp, weights).slice(),
        bias: hasBias ? w.array(Float32Array, bp, outputs).slice() : null,
      };
    });
  }

  /** Returns the model's memory to the wasm heap. Safe to call twice. */
  dispose() {
    if (this.#m.ptr) this.#wasm.release(this.#m);
  }

  get disposed() { return !this.#m.ptr; }
}

function checkRowCount(n, what) {
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new MlrtError('INVALID_ARGUMENT', `${what}: n must be a positive integer, got ${n}`);
  }
}

// ---- text: the WordPiece tokenizer (issue 20) ----
//
// mlrt.h's mlrt_tokenizer_* functions, called under their C names. Errors come back through an
// mlrt_error in wasm memory (int32 code at offset 0, the NUL-terminated message at offset 4).
// Text crosses the boundary as UTF-8 written straight into wasm memory; a batch is one call.

const ERROR_BYTES = 4 + 320; // sizeof(mlrt_error)
const TRUNCATIONS = { longest_first: 2, only_first: 3, only_second: 4 };
const PADDINGS = { longest: 2, max_length: 3 };

// Views of wasm memory, and UTF-8 in and out of it, for one runtime.
class TextPort {
  #wasm;
  #buffer = null;
  #u8; #i32; #u32;
  constructor(wasm) { this.#wasm = wasm; this.x = wasm.x; }
  // views renewed only after the memory grew (growth detaches them)
  #views() {
    const b = this.#wasm.u8().buffer;
    if (b !== this.#buffer) { this.#buffer = b; this.#u8 = new Uint8Array(b); this.#i32 = new Int32Array(b); this.#u32 = new Uint32Array(b); }
  }
  get u8() { this.#views(); return this.#u8; }
  get i32() { this.#views(); return this.#i32; }
  get u32() { this.#views(); return this.#u32; }
  alloc(n) { return this.#wasm.alloc(n); }
  free(ptr) { if (ptr) this.#wasm.free(ptr); }
  string(ptr, len) {
    const u8 = this.u8;
    let end = ptr;
    if (len === undefined) while (u8[end]) end++;
    else end = ptr + len;
    return decoder.decode(u8.buffer instanceof ArrayBuffer ? u8.subarray(ptr, end) : u8.slice(ptr, end));
  }
  error(errPtr, what) {
    const code = this.string(this.x.mlrt_status_name(this.i32[errPtr >> 2]));
    return new MlrtError(code, `${what}: ${this.string(errPtr + 4)}`);
  }
  // UTF-8 of s (a string or bytes) at ptr, which has room for utf8Bound(s) bytes; returns the length.
  put(s, ptr) {
    if (typeof s !== 'string') { this.u8.set(s, ptr); return s.length; }
    const u8 = this.u8;
    if (u8.buffer instanceof ArrayBuffer) return encoder.encodeInto(s, u8.subarray(ptr)).written;
    const b = encoder.encode(s);
    u8.set(b, ptr);
    return b.length;
  }
}

const utf8Bound = (s) => (typeof s === 'string' ? s.length * 3 : s.length);

// A string (no lone surrogates: they are not text) or UTF-8 bytes (checked by the C side).
function textArg(s, what) {
  if (typeof s === 'string') {
    if (s.isWellFormed && !s.isWellFormed()) {
      const i = [...s].findIndex((c) => { const u = c.charCodeAt(0); return c.length === 1 && u >= 0xd800 && u <= 0xdfff; });
      throw new MlrtError('INVALID_UTF8', `${what}: the string has a lone surrogate (not Unicode text) at code point ${i}`);
    }
    return s;
  }
  if (s instanceof Uint8Array || s instanceof ArrayBuffer) return asBytes(s, what);
  throw new MlrtError('INVALID_ARGUMENT', `${what}: expected a string or UTF-8 bytes`);
}

function loadTokenizer(p, files) {
  let named;
  if (files instanceof ArrayBuffer || ArrayBuffer.isView(files)) {
    const b = asBytes(files, 'loadTokenizer');
    let i = 0;
    while (i < b.length && (b[i] === 0x20 || b[i] === 0x0a || b[i] === 0x0d || b[i] === 0x09 || b[i] === 0xef || b[i] === 0xbb || b[i] === 0xbf)) i++;
    named = [[b[i] === 0x7b ? 'tokenizer.json' : 'vocab.txt', b]];
  } else if (files && typeof files === 'object') {
    named = Object.entries(files).map(([name, b]) => [name, asBytes(b, `loadTokenizer: '${name}'`)]);
  } else {
    throw new MlrtError('INVALID_ARGUMENT', "loadTokenizer: expected the bytes of a tokenizer.json, or { 'tokenizer.json': bytes } or { 'vocab.txt': bytes, 'tokenizer_config.json'?: bytes }");
  }
  const names = named.map(([name]) => encoder.encode(`${name}\0`));
  let size = ERROR_BYTES + 12 * named.length;
  for (let k = 0; k < named.length; k++) size += names[k].length + named[k][1].length + 8;
  const block = p.alloc(size);
  try {
    const err = block, list = block + ERROR_BYTES;
    let at = list + 12 * named.length;
    for (let k = 0; k < named.length; k++) {
      const u8 = p.u8;
      u8.set(names[k], at);
      u8.set(named[k][1], at + names[k].length);
      const u32 = p.u32;
      u32[(list >> 2) + 3 * k] = at;
      u32[(list >> 2) + 3 * k + 1] = at + names[k].length;
      u32[(list >> 2) + 3 * k + 2] = named[k][1].length;
      at += names[k].length + named[k][1].length;
    }
    const h = p.x.mlrt_tokenizer_load(list, named.length, err);
    if (!h) throw p.error(err, 'loadTokenizer');
    return new Tokenizer(p, h);
  } finally {
    p.free(block);
  }
}

// Frees the wasm side of tokenizers dropped without dispose().
const tokenizers = typeof FinalizationRegistry === 'function'
  ? new FinalizationRegistry(({ p, h }) => releaseTokenizer(p, h)) : null;

function releaseTokenizer(p, h) {
  if (h.scratch) p.free(h.scratch);
  if (h.tok && !h.borrowed) p.x.mlrt_tokenizer_free(h.tok); // a borrowed one is its encoder's to free
  h.tok = h.scratch = h.cap = 0;
}

/**
 * A WordPiece tokenizer, token for token Hugging Face's Rust `tokenizers` (BertNormalizer,
 * BertPreTokenizer, WordPiece, the post-processor's template). Defaults follow the file's
 * truncation and padding, as Hugging Face applies them; options override.
 */
class Tokenizer {
  #p;
  #h; // { tok, scratch, cap, borrowed }: the C tokenizer and a scratch block reused by every call
  #owner; // the Encoder whose model owns the C tokenizer (kept alive while this is), or null
  constructor(p, tok, owner = null) {
    this.#p = p;
    this.#owner = owner;
    this.#h = { tok, scratch: 0, cap: 0, borrowed: owner !== null };
    /** { source, vocabSize, idCount, unkToken, normalizer, preTokenizer, addedTokens, specialTokens, postProcessor, truncation, padding, maxLength, decoder } */
    this.info = deepFreeze(JSON.parse(p.string(p.x.mlrt_tokenizer_info_json(tok))));
    tokenizers?.register(this, { p, h: this.#h }, this.#h);
  }

  #live(what) {
    if (!this.#h.tok) throw new MlrtError('DISPOSED', `${what}: the tokenizer has been disposed`);
  }

  // The scratch block: [error 324][options 12][out 24][pad to 8][data: bytes]; returns its address.
  #scratch(bytes) {
    const h = this.#h, need = 368 + bytes;
    if (h.cap < need) {
      const cap = Math.max(need, 2 * h.cap, 4096);
      if (h.scratch) this.#p.free(h.scratch);
      h.scratch = 0, h.cap = 0; // (so if the allocation below throws: no block, no capacity)
      h.scratch = this.#p.alloc(cap);
      h.cap = cap;
    }
    return h.scratch;
  }

  #options(at, options, what) {
    const { maxLength = 0, truncation, padding } = options ?? {};
    if (!Number.isSafeInteger(maxLength) || maxLength < 0 || maxLength > 1 << 24) {
      throw new MlrtError('INVALID_ARGUMENT', `${what}: maxLength must be an integer from 0 to 2^24, got ${maxLength}`);
    }
    const t = truncation === undefined ? 0 : truncation === false ? 1 : truncation === true ? 2 : TRUNCATIONS[truncation];
    if (t === undefined) throw new MlrtError('INVALID_ARGUMENT', `${what}: truncation must be true, false, 'longest_first', 'only_first' or 'only_second', got ${JSON.stringify(truncation)}`);
    const pd = padding === undefined ? 0 : padding === false ? 1 : PADDINGS[padding];
    if (pd === undefined) throw new MlrtError('INVALID_ARGUMENT', `${what}: padding must be 'longest', 'max_length' or false, got ${JSON.stringify(padding)}`);
    const u32 = this.#p.u32;
    u32[at >> 2] = maxLength;
    u32[(at >> 2) + 1] = t;
    u32[(at >> 2) + 2] = pd;
  }

  /**
   * text (and options.pair) -> { ids: Int32Array, typeIds: Int32Array, attentionMask: Uint8Array }.
   * Text is a string or UTF-8 bytes (invalid UTF-8: INVALID_UTF8 with the byte offset).
   * options: pair, maxLength (special tokens included), truncation (true | false |
   * 'longest_first' | 'only_first' | 'only_second'), padding ('max_length' | 'longest' | false).
   */
  encode(text, options = {}) {
    this.#live('encode');
    text = textArg(text, 'encode');
    const pair = options?.pair === undefined || options.pair === null ? null : textArg(options.pair, 'encode: pair');
    const p = this.#p, base = this.#scratch(utf8Bound(text) + (pair === null ? 0 : utf8Bound(pair)));
    const err = base, opt = base + 324, out = base + 336, data = base + 368;
    this.#options(opt, options, 'encode');
    const len = p.put(text, data), plen = pair === null ? 0 : p.put(pair, data + len);
    if (p.x.mlrt_tokenizer_encode(this.#h.tok, data, len, pair === null ? 0 : data + len, plen, opt, out, err) !== 0) {
      throw p.error(err, 'encode');
    }
    const u32 = p.u32, n = u32[out >> 2], ids = u32[(out >> 2) + 1], types = u32[(out >> 2) + 2], mask = u32[(out >> 2) + 3];
    return {
      ids: p.i32.slice(ids >> 2, (ids >> 2) + n),
      typeIds: p.i32.slice(types >> 2, (types >> 2) + n),
      attentionMask: p.u8.slice(mask, mask + n),
    };
  }

  /**
   * Many texts in one call: texts are strings (or UTF-8 bytes), or [text, pair] pairs (all of them).
   * options: padding ('longest' | 'max_length' | false; default: the file's), maxLength, truncation.
   * Returns one { ids, typeIds, attentionMask } per text (views into three shared arrays).
   */
  encodeBatch(texts, options = {}) {
    this.#live('encodeBatch');
    if (!Array.isArray(texts)) throw new MlrtError('INVALID_ARGUMENT', 'encodeBatch: texts must be an array');
    const pairs = texts.length > 0 && Array.isArray(texts[0]);
    const a = [], b = [];
    let bound = 0;
    for (let i = 0; i < texts.length; i++) {
      const t = texts[i];
      if (Array.isArray(t) !== pairs || (pairs && t.length !== 2)) {
        throw new MlrtError('INVALID_ARGUMENT', `encodeBatch: texts[${i}]: either every text is a [text, pair] array or none is`);
      }
      a.push(textArg(pairs ? t[0] : t, `encodeBatch: texts[${i}]`));
      if (pairs) b.push(textArg(t[1], `encodeBatch: texts[${i}][1]`));
      bound += utf8Bound(a[i]) + (pairs ? utf8Bound(b[i]) : 0);
    }
    const n = texts.length, p = this.#p;
    const base = this.#scratch(bound + 8 * n * (pairs ? 2 : 1) + 8);
    const err = base, opt = base + 324, out = base + 336, ends = base + 368, pairEnds = ends + 4 * n;
    const textAt = ends + 4 * n * (pairs ? 2 : 1);
    this.#options(opt, options, 'encodeBatch');
    let at = textAt;
    for (let i = 0; i < n; i++) { at += p.put(a[i], at); p.u32[(ends >> 2) + i] = at - textAt; }
    const pairAt = at;
    for (let i = 0; pairs && i < n; i++) { at += p.put(b[i], at); p.u32[(pairEnds >> 2) + i] = at - pairAt; }
    if (p.x.mlrt_tokenizer_encode_batch(this.#h.tok, textAt, ends, pairs ? pairAt : 0, pairs ? pairEnds : 0, n, opt, out, err) !== 0) {
      throw p.error(err, 'encodeBatch');
    }
    const u32 = p.u32, o = out >> 2;
    const rows = u32[o], width = u32[o + 1], ids = u32[o + 2], types = u32[o + 3], mask = u32[o + 4], lengths = u32[o + 5];
    const allIds = p.i32.slice(ids >> 2, (ids >> 2) + rows * width);
    const allTypes = p.i32.slice(types >> 2, (types >> 2) + rows * width);
    const allMask = p.u8.slice(mask, mask + rows * width);
    const lens = p.u32.slice(lengths >> 2, (lengths >> 2) + rows);
    const result = new Array(rows);
    for (let r = 0; r < rows; r++) {
      const s = r * width, e = s + lens[r];
      result[r] = { ids: allIds.subarray(s, e), typeIds: allTypes.subarray(s, e), attentionMask: allMask.subarray(s, e) };
    }
    return result;
  }

  /** ids -> text, as the WordPiece decoder gives it; options.skipSpecialTokens leaves out [CLS], [SEP], .... */
  decode(ids, options = {}) {
    this.#live('decode');
    if (!(ids instanceof Int32Array || Array.isArray(ids) || ids instanceof Uint32Array)) {
      throw new MlrtError('INVALID_ARGUMENT', 'decode: ids must be an Int32Array or an array of integers');
    }
    const p = this.#p, base = this.#scratch(ids.length * 4), err = base, data = base + 368;
    const i32 = p.i32;
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i];
      if (!Number.isInteger(id) || id < 0 || id > 0x7fffffff) throw new MlrtError('INVALID_ARGUMENT', `decode: ids[${i}] = ${id} is not a token id`);
      i32[(data >> 2) + i] = id;
    }
    const s = p.x.mlrt_tokenizer_decode(this.#h.tok, data, ids.length, options?.skipSpecialTokens ? 1 : 0, base + 336, err);
    if (!s) throw p.error(err, 'decode');
    try { return p.string(s, p.u32[(base + 336) >> 2]); } finally { p.x.mlrt_string_free(s); }
  }

  /** The text after the normalizer alone (BertNormalizer), as a string. */
  normalize(text) {
    this.#live('normalize');
    text = textArg(text, 'normalize');
    const p = this.#p, base = this.#scratch(utf8Bound(text)), err = base, data = base + 368;
    const len = p.put(text, data);
    const s = p.x.mlrt_tokenizer_normalize(this.#h.tok, data, len, base + 336, err);
    if (!s) throw p.error(err, 'normalize');
    try { return p.string(s, p.u32[(base + 336) >> 2]); } finally { p.x.mlrt_string_free(s); }
  }

  /** The token of an id (vocabulary or added token), or null. */
  idToToken(id) {
    this.#live('idToToken');
    if (!Number.isInteger(id) || id < 0 || id > 0x7fffffff) return null;
    const s = this.#p.x.mlrt_tokenizer_token(this.#h.tok, id);
    return s ? this.#p.string(s) : null;
  }

  /**
   * Returns the tokenizer's memory to the wasm heap. Safe to call twice. An encoder's tokenizer
   * (enc.tokenizer) belongs to its model: this frees its scratch memory only, and enc.free() disposes it.
   */
  dispose() {
    if (!this.#h.tok) return;
    tokenizers?.unregister(this.#h);
    releaseTokenizer(this.#p, this.#h);
  }

  get disposed() { return !this.#h.tok; }
}
// ---- end of text ----

// ---- sentence encoders (issue 21) ----
//
// mlrt_load_files reads a model folder's files by name; mlrt_embed tokenizes and embeds texts with
// the model's own tokenizer; mlrt_run embeds token ids. The C tokenizer belongs to the model.

const FILE_BYTES = 12; // mlrt_file { const char *name; const uint8_t *bytes; size_t len } in wasm32
const FILES_HINT = "{ 'model.safetensors': bytes, 'config.json': bytes, 'tokenizer.json': bytes, ... } or a Map of them";
const MAX_BATCH = 1 << 16;

const BLOB = Symbol('blob'); // namedFiles' wrapper of a Blob: { byteLength, [BLOB]: blob }
const STREAM = Symbol('stream'); // ... of a Response: { byteLength (-1: not known before its end), [STREAM]: response }
// (a Response by its shape: in Node, the first access to the Response global loads undici, ~20 ms)
const isResponse = (v) => typeof v?.arrayBuffer === 'function' && typeof v.ok === 'boolean' && typeof v.headers?.get === 'function';

// A Response's body length when its headers say it (Content-Length of a body sent without a
// Content-Encoding: fetch decodes compressed bodies, whose Content-Length is then the compressed size), else -1.
function responseLength(res) {
  const enc = res.headers.get('content-encoding'), len = res.headers.get('content-length');
  if ((enc && enc.trim().toLowerCase() !== 'identity') || len === null || !/^\s*\d+\s*$/.test(len)) return -1;
  return Number(len);
}

// A folder's files: [[name, Uint8Array | source | Blob or Response wrapper]], checked. A source writes the
// file straight into wasm memory, so that its bytes are never held twice: { byteLength, readInto(dest) }
// at once, or (only for loadEncoderAsync) { byteLength, read(dest, position) } a part at a time.
// `isAsync`: the caller awaits (Blobs, Responses and read-only sources are then taken).
function namedFiles(files, what, isAsync) {
  let entries;
  if (files instanceof Map) entries = [...files];
  else if (files && typeof files === 'object' && !ArrayBuffer.isView(files) && !(files instanceof ArrayBuffer)) entries = Object.entries(files);
  else throw new MlrtError('INVALID_ARGUMENT', `${what}: expected the model folder's files by name: ${FILES_HINT}`);
  if (!entries.length) throw new MlrtError('INVALID_ARGUMENT', `${what}: no files given: expected ${FILES_HINT}`);
  return entries.map(([key, bytes]) => {
    const name = typeof key === 'string' ? key.replace(/^(\.\/)+/, '') : key; // './config.json' is 'config.json'
    if (typeof name !== 'string' || !name || name.includes('\0')) {
      throw new MlrtError('INVALID_ARGUMENT', `${what}: a file name must be a non-empty string without NUL, got ${JSON.stringify(String(key))}`);
    }
    if (isResponse(bytes)) {
      if (!isAsync) throw new MlrtError('INVALID_ARGUMENT', `${what}: '${name}' is a Response: its body is read asynchronously: load it with rt.loadEncoderAsync(files)`);
      if (!bytes.ok) throw new MlrtError('INVALID_ARGUMENT', `${what}: '${name}': the Response is HTTP ${bytes.status}${bytes.url ? ` (${bytes.url})` : ''}, not 200-299`);
      if (bytes.bodyUsed) throw new MlrtError('INVALID_ARGUMENT', `${what}: '${name}': the Response's body has already been read`);
      const n = responseLength(bytes);
      if (n > MAX_ALLOC) throw new MlrtError('INVALID_ARGUMENT', `${what}: '${name}': the Response's Content-Length ${n} is over ${MAX_ALLOC} bytes`);
      return [name, { byteLength: n, [STREAM]: bytes }];
    }
    const isBlob = typeof Blob === 'function' && bytes instanceof Blob;
    const source = !isBlob && bytes && !ArrayBuffer.isView(bytes) && !(bytes instanceof ArrayBuffer)
      && (typeof bytes.readInto === 'function' || typeof bytes.read === 'function');
    if (isBlob || source) {
      if (!isAsync && (isBlob || typeof bytes.readInto !== 'function')) {
        throw new MlrtError('INVALID_ARGUMENT', `${what}: '${name}' is ${isBlob ? 'a Blob' : 'a source with read() but no readInto()'}: it is read asynchronously: load it with rt.loadEncoderAsync(files)`);
      }
      const n = isBlob ? bytes.size : bytes.byteLength;
      if (!Number.isSafeInteger(n) || n < 0 || n > MAX_ALLOC) {
        throw new MlrtError('INVALID_ARGUMENT', `${what}: '${name}': a source's byteLength must be an integer from 0 to ${MAX_ALLOC}, got ${String(n)}`);
      }
      return [name, isBlob ? { byteLength: n, [BLOB]: bytes } : bytes];
    }
    return [name, asBytes(bytes, `${what}: '${name}'`)];
  });
}

// One file into its block of wasm memory at `at`: copied, or read by its source at once.
function fillBlock(w, at, name, src, what) {
  if (!src.readInto) { w.u8().set(src, at); return; }
  const dest = w.u8().subarray(at, at + src.byteLength);
  const got = src.readInto(dest);
  if (typeof got === 'number' && got !== dest.length) {
    throw new MlrtError('INVALID_ARGUMENT', `${what}: '${name}': readInto gave ${got} bytes of its byteLength ${dest.length}`);
  }
}

// loadEncoderAsync reads a Blob or a read(dest, position) source in parts of READ_PART bytes, READS_AT_ONCE
// at a time per file (Node's file reads run on its thread pool, 4 threads by default: the page faults of
// fresh wasm memory, most of a load's time, then fall on every core).
const READ_PART = 4 << 20;
const READS_AT_ONCE = 4;
let pageSink = 0; // (what the page reads below add up to, so that no engine drops them)

// One file into its block at `at`, a part at a time. Every part's read has ended (or failed) when it settles.
async function fillBlockAsync(w, at, name, src) {
  const n = src.byteLength;
  let next = 0, failure = null;
  const part = async (pos, len) => {
    if (src[BLOB]) {
      const b = new Uint8Array(await src[BLOB].slice(pos, pos + len).arrayBuffer());
      if (b.length !== len) throw new MlrtError('INVALID_ARGUMENT', `loadEncoderAsync: '${name}': the Blob gave ${b.length} bytes at ${pos}, expected ${len} (it changed while it was read?)`);
      w.u8().set(b, at + pos);
    } else {
      // Another call on the runtime meanwhile (another load) may grow the memory, which detaches the view:
      // a write into it then throws or is dropped. The part is then read again into a new view.
      for (let attempt = 1; ; attempt++) {
        const view = w.u8().subarray(at + pos, at + pos + len);
        let got, error = null;
        try { got = await src.read(view, pos); } catch (e) { error = e; }
        if (view.length === len) {
          if (error) throw error;
          if (typeof got === 'number' && got !== len) {
            throw new MlrtError('INVALID_ARGUMENT', `loadEncoderAsync: '${name}': read gave ${got} bytes at ${pos}, expected ${len} (of its byteLength ${n})`);
          }
          break;
        }
        if (attempt === 3) throw new MlrtError('INVALID_ARGUMENT', `loadEncoderAsync: '${name}': the runtime's memory grew during each of 3 reads at ${pos}`);
      }
      // Read one byte of each page now. On some virtual machines a page's first read after the kernel
      // wrote it costs half as much as its fault (5-6 us against 12 on the one measured): paid while the
      // other parts are read, not later in one pass over the whole file. (A Blob's part was copied in by
      // JS above, not written by the kernel: it has no such cost.)
      const u8 = w.u8();
      for (let k = at + pos, end = at + pos + len; k < end; k += 4096) pageSink |= u8[k];
    }
  };
  const worker = async () => {
    while (next < n && !failure) {
      const pos = next, len = Math.min(READ_PART, n - pos);
      next += len;
      try { await part(pos, len); } catch (e) { failure ??= e; }
    }
  };
  await Promise.all(Array.from({ length: Math.min(READS_AT_ONCE, Math.ceil(n / READ_PART)) }, worker));
  if (failure) throw failure;
}

// A Response's body into its block at `at`, chunk by chunk as it arrives (the body is never held whole
// outside wasm memory); it must be as long as its Content-Length said.
async function fillBlockFromStream(w, at, name, src) {
  const n = src.byteLength, body = src[STREAM].body;
  let pos = 0;
  if (body) {
    const reader = body.getReader();
    try {
      for (let r; !(r = await reader.read()).done;) {
        const chunk = r.value;
        if (!(chunk instanceof Uint8Array)) throw new MlrtError('INVALID_ARGUMENT', `loadEncoderAsync: '${name}': the Response's body gave a ${chunk && typeof chunk === 'object' ? chunk.constructor?.name ?? 'object' : typeof chunk}, not bytes (a Uint8Array)`);
        if (pos + chunk.length > n) throw new MlrtError('INVALID_ARGUMENT', `loadEncoderAsync: '${name}': the Response's body is longer than its Content-Length ${n}`);
        w.u8().set(chunk, at + pos);
        pos += chunk.length;
      }
    } catch (e) {
      reader.cancel().catch(() => {});
      throw e;
    }
  }
  if (pos !== n) throw new MlrtError('INVALID_ARGUMENT', `loadEncoderAsync: '${name}': the Response's body ended after ${pos} bytes of its Content-Length ${n}`);
}

// Each file in a block of its own (mlrt_load_files takes them: the model keeps the weights file's and
// packs its weights there), allocated after one growth of the memory for all the files and the
// loader's own allocations (the tokenizer's tables, scratch): V8 counts a wasm memory's growth as
// external memory, and each step of it can start a garbage collection.
function allocBlocks(w, named) {
  const bytes = named.reduce((a, [, src]) => a + src.byteLength, 0);
  w.reserve(Math.min(MAX_ALLOC, bytes + Math.ceil(bytes / 64) + (2 << 20)));
  const blocks = [];
  try {
    for (const [, src] of named) blocks.push(w.alloc(Math.max(src.byteLength, 1)));
  } catch (e) {
    for (const at of blocks) w.free(at);
    throw e;
  }
  return blocks;
}

// mlrt_load_files over the filled blocks (it takes them: it frees them, or the model keeps them).
function encoderOfBlocks(w, text, named, blocks, what) {
  const names = named.map(([name]) => encoder.encode(`${name}\0`));
  let list = 0, ptr = 0, called = false;
  try {
    list = w.alloc(LOAD_OPTIONS.bytes + 4 + FILE_BYTES * named.length + names.reduce((a, n) => a + n.length, 0));
    const files = list + LOAD_OPTIONS.bytes + 4; // (the options' empty expect string, then 4-aligned)
    writeLoadOptions(w, list, null, 0, true);
    let at = files + FILE_BYTES * named.length;
    named.forEach(([, src], k) => {
      const view = w.view(), s = files + FILE_BYTES * k;
      w.u8().set(names[k], at);
      view.setUint32(s, at, true);
      view.setUint32(s + 4, blocks[k], true);
      view.setUint32(s + 8, src.byteLength, true);
      at += names[k].length;
    });
    called = true;
    ptr = w.x.mlrt_load_files(files, named.length, list, w.error);
  } finally {
    if (list) w.free(list);
    if (!called) for (const at of blocks) w.free(at);
  }
  if (!ptr) {
    const e = w.failure();
    throw new MlrtError(e.code, `${what}: ${e.message.replace(/^load_files: /, '')}`);
  }
  const info = deepFreeze(JSON.parse(w.string(w.x.mlrt_model_info_json(ptr))));
  const record = { ptr, io: 0, threads: null };
  if (info.kind !== 'encoder') {
    w.release(record);
    throw new MlrtError('NOT_A_MODEL', `${what}: the files hold a ${info.kind} (${info.format}), not a sentence encoder: load it with rt.loadFromBytes`);
  }
  const enc = new Encoder(w, text, record, info);
  w.track(enc, record);
  return enc;
}

function loadEncoder(w, text, files) {
  const named = namedFiles(files, 'loadEncoder', false);
  w.warmUp();
  const blocks = allocBlocks(w, named);
  try {
    named.forEach(([name, src], k) => fillBlock(w, blocks[k], name, src, 'loadEncoder'));
  } catch (e) {
    for (const at of blocks) w.free(at);
    throw e;
  }
  return encoderOfBlocks(w, text, named, blocks, 'loadEncoder');
}

async function loadEncoderAsync(w, text, files) {
  const named = namedFiles(files, 'loadEncoderAsync', true);
  for (const entry of named) { // a Response of unknown length (compressed, or no Content-Length) is read whole first
    if (entry[1][STREAM] && entry[1].byteLength < 0) entry[1] = asBytes(await entry[1][STREAM].arrayBuffer(), `loadEncoderAsync: '${entry[0]}'`);
  }
  const blocks = allocBlocks(w, named);
  const reads = [];
  try {
    named.forEach(([name, src], k) => {
      if (src[STREAM]) reads.push(fillBlockFromStream(w, blocks[k], name, src));
      else if (src[BLOB] || typeof src.read === 'function') reads.push(fillBlockAsync(w, blocks[k], name, src));
      else fillBlock(w, blocks[k], name, src, 'loadEncoderAsync');
    });
  } catch (e) {
    reads.push(Promise.reject(e));
  }
  w.warmUp(); // (the engine compiles the kernels while the parts are read)
  const settled = await Promise.allSettled(reads); // no block is freed while a read may still write to it
  const failed = settled.find((r) => r.status === 'rejected');
  if (failed) {
    for (const at of blocks) w.free(at);
    throw failed.reason;
  }
  return encoderOfBlocks(w, text, named, blocks, 'loadEncoderAsync');
}

function checkBatchSize(batchSize, what) {
  if (!Number.isSafeInteger(batchSize) || batchSize < 1 || batchSize > MAX_BATCH) {
    throw new MlrtError('INVALID_ARGUMENT', `${what}: batchSize must be an integer from 1 to ${MAX_BATCH}, got ${JSON.stringify(batchSize)}`);
  }
}

// One of embedTokens' inputs as a flat typed array over rows x width, or null when not given.
// A flat typed array takes dims (or is one row); arrays of arrays may be ragged (padded here).
function tokenRows(v, name, dims, what, rows) {
  if (v === undefined || v === null) return null;
  if (ArrayBuffer.isView(v) && !(v instanceof DataView)) {
    if (!(v instanceof Int32Array || v instanceof BigInt64Array || (name === 'attentionMask' && v instanceof Uint8Array))) {
      throw new MlrtError('INVALID_ARGUMENT', `${what}: ${name} must be an Int32Array or BigInt64Array${name === 'attentionMask' ? ' or Uint8Array' : ''}, got ${v.constructor.name}`);
    }
    const [n, t] = dims ?? [1, v.length];
    if (n * t !== v.length) throw new MlrtError('INVALID_ARGUMENT', `${what}: dims [${n}, ${t}] hold ${n * t} tokens, ${name} has ${v.length}`);
    return { data: v, rows: n, width: t, lengths: null };
  }
  if (!Array.isArray(v)) throw new MlrtError('INVALID_ARGUMENT', `${what}: ${name} must be a typed array (with dims) or an array of arrays of integers`);
  const list = v.length > 0 && !Array.isArray(v[0]) ? [v] : v; // one row of numbers
  if (rows !== undefined && list.length !== rows) throw new MlrtError('INVALID_ARGUMENT', `${what}: ${name} has ${list.length} rows, ids ${rows}`);
  let width = 0;
  for (let i = 0; i < list.length; i++) { // every index: a hole is refused, not skipped
    if (!Array.isArray(list[i])) throw new MlrtError('INVALID_ARGUMENT', `${what}: ${name}[${i}] is not an array`);
    width = Math.max(width, list[i].length);
  }
  const data = new Int32Array(list.length * width);
  for (let i = 0; i < list.length; i++) {
    for (let t = 0, r = list[i]; t < r.length; t++) {
      const x = r[t], n = typeof x === 'bigint' ? Number(x) : x;
      if (!Number.isInteger(n) || n < -0x80000000 || n > 0x7fffffff) {
        throw new MlrtError('INVALID_ARGUMENT', `${what}: ${name}[${i}][${t}] = ${x} is not a 32-bit integer`);
      }
      data[i * width + t] = n;
    }
  }
  return { data, rows: list.length, width, lengths: list.map((r) => r.length) };
}

// Threads: the bytes before the texts in #embedOnThreads' scratch (mlrt_encode_options 12, mlrt_batch_encoding 24),
// and the three input names' (16 bytes each).
const ENCODE_BLOCK = 40;
const ENCODER_INPUT_NAMES = 48;

const isAscii = (t) => (typeof t === 'string' ? /^[\0-\x7f]*$/.test(t) : t.every((c) => c < 0x80));

/**
 * Row ends of `parts` blocks of consecutive rows with about the same work each: a row of n real
 * tokens costs n * (perToken + 2n) (the dense layers, then attention over the row's n tokens).
 */
function splitRows(lengths, parts, perToken) {
  const cost = lengths.map((n) => n * (perToken + 2 * n)), total = cost.reduce((a, c) => a + c, 0);
  const ends = [];
  let sum = 0, r = 0;
  for (let b = 1; b < parts; b++) {
    const target = (total * b) / parts;
    // at least one row before and after
    while (r < lengths.length - (parts - b) && (r < (ends.at(-1) ?? 0) + 1 || sum + cost[r] / 2 < target)) sum += cost[r++];
    ends.push(r);
  }
  ends.push(lengths.length);
  return ends;
}

/**
 * A BERT-family sentence encoder (rt.loadEncoder): texts or token ids in, one embedding per text out,
 * each text giving the same bits alone as in any batch.
 */
class Encoder {
  #wasm;
  #text;
  #m; // { ptr, io, threads }: the model's wasm memory (Wasm#free)

  constructor(wasm, text, record, info) {
    this.#wasm = wasm;
    this.#text = text;
    this.#m = record;
    /** { format, kind: 'encoder', task: 'embedding', architecture, dim, hiddenSize, layers, heads, ffn, vocabSize,
     *    maxPositions, typeVocabSize, maxLength, layerNormEps, hiddenAct, pooling, normalize, lowerCase,
     *    tensorPrefix, unusedTensors, tokenizer, dtype, params, weightBytes, inputs, outputs, metadata } */
    this.info = info;
    const tok = wasm.x.mlrt_model_tokenizer(record.ptr);
    /** The model's Tokenizer (owned by the encoder: enc.free() disposes it), or null without tokenizer files. */
    this.tokenizer = tok ? new Tokenizer(text, tok, this) : null;
  }

  #live(what) {
    if (!this.#m.ptr) throw new MlrtError('DISPOSED', `${what}: the encoder has been freed`);
  }

  /**
   * A text (string or UTF-8 bytes) or an array of them -> Float32Array(n * info.dim), row after row:
   * tokenized by the model's tokenizer (truncated to info.maxLength), pooled, normalized when the model
   * says so. options.batchSize (default 32): texts per call into the module (memory, not results).
   * options.prompt (a text) or options.promptName (one of info.prompts) is prepended to every text, as
   * sentence-transformers' encode does; without either, the model's default (info.defaultPromptName).
   */
  embed(texts, options = {}) {
    this.#live('embed');
    const { batchSize = 32 } = options ?? {};
    checkBatchSize(batchSize, 'embed');
    const prompt = this.#promptOf(options ?? {}); // (null: none)
    const one = typeof texts === 'string' || texts instanceof Uint8Array || texts instanceof ArrayBuffer;
    if (!one && !Array.isArray(texts)) throw new MlrtError('INVALID_ARGUMENT', 'embed: expected a text (string or UTF-8 bytes) or an array of texts');
    const all = one ? [texts] : texts, list = new Array(all.length);
    for (let i = 0; i < all.length; i++) list[i] = textArg(all[i], one ? 'embed' : `embed: texts[${i}]`); // (a hole too)
    if (!this.tokenizer) {
      throw new MlrtError('INVALID_ARGUMENT', 'embed: the encoder was loaded without tokenizer.json or vocab.txt: use embedTokens');
    }
    const w = this.#wasm, p = this.#text, dim = this.info.dim, n = list.length;
    const out = new Float32Array(n * dim);
    for (let i = 0; i < n; i += batchSize) {
      const part = list.slice(i, i + batchSize), k = part.length;
      if (w.threads && k > 1 && this.#embedOnThreads(part, prompt, out.subarray(i * dim, (i + k) * dim))) continue;
      const bound = part.reduce((a, t) => a + utf8Bound(t), prompt === null ? 0 : utf8Bound(prompt));
      w.withScratch(k * dim * 4 + k * 4 + bound + 1, (outPtr) => {
        const ends = outPtr + k * dim * 4, promptAt = ends + k * 4, promptLen = prompt === null ? 0 : p.put(prompt, promptAt);
        const textAt = promptAt + promptLen;
        let at = textAt;
        part.forEach((t, j) => { at += p.put(t, at); w.view().setUint32(ends + 4 * j, at - textAt, true); });
        w.check(w.x.mlrt_embed_prompt(this.#m.ptr, prompt === null ? 0 : promptAt, promptLen, textAt, ends, k, outPtr, w.error));
        out.set(w.array(Float32Array, outPtr, k * dim), i * dim);
      });
    }
    return out;
  }

  // The text embed prepends: options.prompt, or the prompt options.promptName names, or the default; null
  // or '': none (as in current sentence-transformers, whose encode tests `if prompt:`, in the pooling too).
  #promptOf({ prompt, promptName }) {
    const prompts = this.info.prompts ?? {};
    if (prompt !== undefined && promptName !== undefined) {
      throw new MlrtError('INVALID_ARGUMENT', 'embed: give options.prompt or options.promptName, not both');
    }
    if (prompt !== undefined) {
      if (typeof prompt !== 'string') throw new MlrtError('INVALID_ARGUMENT', `embed: options.prompt must be a string, got ${typeof prompt}`);
      return textArg(prompt, 'embed: options.prompt');
    }
    const name = promptName ?? this.info.defaultPromptName;
    if (name === null || name === undefined) return null;
    if (typeof name !== 'string' || !Object.hasOwn(prompts, name)) {
      const known = Object.keys(prompts);
      throw new MlrtError('INVALID_ARGUMENT', `embed: options.promptName ${JSON.stringify(String(name))} is not one of the model's prompts` +
        (known.length ? ` (${known.map((n) => JSON.stringify(n)).join(', ')})` : ' (it has none)'));
    }
    return prompts[name];
  }

  /**
   * Token ids already made -> Float32Array(rows * info.dim). ids: an Int32Array or BigInt64Array of
   * rows x width tokens with dims [rows, width] (without dims: one row), or an array of arrays of
   * integers (rows may differ in length: the short ones are padded, their padding masked out).
   * attentionMask (1 = a token, 0 = padding; default all ones) and typeIds (default zeros): the same
   * shape, as Int32Array, BigInt64Array (or Uint8Array for the mask), or arrays of arrays.
   */
  embedTokens(input) {
    this.#live('embedTokens');
    const what = 'embedTokens';
    if (!input || typeof input !== 'object' || ArrayBuffer.isView(input) || Array.isArray(input)) {
      throw new MlrtError('INVALID_ARGUMENT', `${what}: expected { ids, attentionMask?, typeIds?, dims? }`);
    }
    const { ids, attentionMask, typeIds, dims } = input;
    if (dims !== undefined && !(Array.isArray(dims) && dims.length === 2 && dims.every((d) => Number.isSafeInteger(d) && d >= 0))) {
      throw new MlrtError('INVALID_ARGUMENT', `${what}: dims must be [rows, width], got ${JSON.stringify(dims)}`);
    }
    if (ids === undefined || ids === null) throw new MlrtError('INVALID_ARGUMENT', `${what}: ids is required`);
    const id = tokenRows(ids, 'ids', dims, what);
    const { rows, width } = id;
    if (rows === 0) return new Float32Array(0);
    const mask = tokenRows(attentionMask, 'attentionMask', dims ?? (id.lengths ? undefined : [rows, width]), what, rows);
    const types = tokenRows(typeIds, 'typeIds', dims ?? (id.lengths ? undefined : [rows, width]), what, rows);
    for (const [t, name] of [[mask, 'attentionMask'], [types, 'typeIds']]) {
      if (t && (t.data.length !== id.data.length || t.width !== width || String(t.lengths) !== String(id.lengths))) {
        throw new MlrtError('INVALID_ARGUMENT', `${what}: ${name} must have the shape of ids (${rows} rows of ${id.lengths ? id.lengths.join(', ') : width} tokens)`);
      }
    }
    let maskData = mask?.data;
    if (!maskData) { // ones, and zeros where ragged rows were padded
      maskData = new Uint8Array(rows * width).fill(1);
      if (id.lengths) id.lengths.forEach((len, r) => maskData.fill(0, r * width + len, (r + 1) * width));
    }
    const feeds = [['input_ids', id.data], ['attention_mask', maskData], ['token_type_ids', types?.data ?? new Int32Array(rows * width)]];
    const tensors = feeds.map(([name, data]) => ({
      name: encoder.encode(name), dtype: dtypeOf(data, undefined, `${what}: ${name}`), dims: [rows, width],
      bytes: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
    }));
    const w = this.#wasm, ptr = this.#m.ptr;
    return w.withScratch(tensorBlockBytes(tensors), (block) => {
      writeTensors(w, block, tensors);
      if (w.threads && rows > 1 && width > 0) { // rows split between the threads, by their real tokens
        const inputs = tensors.map((t, k) => ({ name: w.view().getUint32(block + k * TENSOR.bytes + TENSOR.name, true),
          dtype: t.dtype, data: w.view().getUint32(block + k * TENSOR.bytes + TENSOR.data, true), size: t.bytes.length / (rows * width) }));
        const real = new Array(rows).fill(0);
        for (let i = 0; i < rows * width; i++) if (maskData[i]) real[(i / width) | 0]++;
        const out = this.#runOnThreads(inputs, rows, width, real);
        if (out) return out;
      }
      w.check(w.x.mlrt_run(ptr, block, tensors.length, w.error));
      return readOutput(w, ptr, 0).data;
    });
  }

  // ---- threads (createRuntime({ threads })): the texts of a batch split between the threads.
  // Tokenized here, on the calling thread; each thread runs a block of whole rows with mlrt_run (this
  // one on the model, each worker on a fork of it: the same weights, scratch of its own), and a text
  // gives the bits it gives alone. False (nothing done) when the part is better run by mlrt_embed on
  // this thread: a lowercasing model given non-ASCII text (mlrt_embed's Unicode lowercasing is not
  // redone here), a prompt the pooling leaves out, or any refusal, which mlrt_embed then reports as it
  // does on one thread.

  #embedOnThreads(texts, prompt, out) {
    const w = this.#wasm, info = this.info, k = texts.length;
    // tokenized below with the file's truncation direction: when the model cuts on the other side, not here
    if ((this.tokenizer.info.truncation?.direction ?? 'right') !== info.truncationSide) return false;
    if (prompt && info.includePrompt === false) return false;
    if (prompt) { // prepended, as mlrt_embed_prompt does
      const pb = encoder.encode(prompt);
      texts = texts.map((t) => {
        if (typeof t === 'string') return prompt + t;
        const b = new Uint8Array(pb.length + t.length);
        b.set(pb), b.set(t, pb.length);
        return b;
      });
    }
    if (info.lowerCase) {
      if (!texts.every(isAscii)) return false;
      texts = texts.map((t) => (typeof t === 'string' ? t.toLowerCase() : t.map((c) => (c >= 0x41 && c <= 0x5a ? c + 32 : c))));
    }
    const bound = texts.reduce((a, t) => a + utf8Bound(t), 0), p = this.#text;
    const tok = w.x.mlrt_model_tokenizer(this.#m.ptr);
    return w.withScratch(ENCODE_BLOCK + 4 * k + bound + 1, (base) => {
      const opt = base, res = base + 12, ends = base + ENCODE_BLOCK, textAt = ends + 4 * k;
      let at = textAt;
      texts.forEach((t, j) => { at += p.put(t, at); w.view().setUint32(ends + 4 * j, at - textAt, true); });
      const v = w.view();
      v.setUint32(opt, info.maxLength, true); // mlrt_embed's options: the model's maximum, longest first, padded to the longest
      v.setUint32(opt + 4, TRUNCATIONS.longest_first, true);
      v.setUint32(opt + 8, PADDINGS.longest, true);
      if (w.x.mlrt_tokenizer_encode_batch(tok, textAt, ends, 0, 0, k, opt, res, w.error) !== 0) return false;
      const [rows, width, ids, types, mask] = [0, 1, 2, 3, 4].map((j) => w.view().getUint32(res + 4 * j, true));
      const m8 = w.u8(), lengths = [];
      for (let r = 0; r < rows; r++) {
        let n = 0;
        for (let t = 0; t < width; t++) n += m8[mask + r * width + t] !== 0;
        lengths.push(n);
      }
      const inputs = [['input_ids', ids, TENSOR_TYPES.int32, 4], ['attention_mask', mask, TENSOR_TYPES.uint8, 1], ['token_type_ids', types, TENSOR_TYPES.int32, 4]];
      return w.withScratch(ENCODER_INPUT_NAMES, (names) => {
        const described = inputs.map(([name, data, type, size], j) => {
          w.u8().set(encoder.encode(`${name}\0`), names + 16 * j);
          return { name: names + 16 * j, dtype: type.dtype, data, size };
        });
        const y = this.#runOnThreads(described, rows, width, lengths);
        if (y) out.set(y);
        return y !== null;
      });
    });
  }

  // rows x width tokens of `inputs` ({ name, dtype, data, size }: pointers into wasm memory, size bytes
  // per element) split in blocks of whole rows, one per thread, balanced by their work (lengths: the
  // rows' real tokens) -> Float32Array(rows * dim), or null (the caller runs it on this thread).
  #runOnThreads(inputs, rows, width, lengths) {
    const w = this.#wasm, dim = this.info.dim, t = Math.min(w.threads.workers + 1, rows);
    if (t < 2) return null;
    const ends = splitRows(lengths, t, 4 * this.info.hiddenSize + 2 * this.info.ffn);
    return w.withScratch(ends.length * inputs.length * TENSOR.bytes, (block) => {
      const blocks = ends.map((end, b) => {
        const r0 = b ? ends[b - 1] : 0, at = block + b * inputs.length * TENSOR.bytes;
        inputs.forEach((x, j) => {
          const s = at + j * TENSOR.bytes, v = w.view();
          for (let i = 0; i < TENSOR.bytes; i += 4) v.setUint32(s + i, 0, true);
          v.setUint32(s + TENSOR.name, x.name, true);
          v.setInt32(s + TENSOR.dtype, x.dtype, true);
          v.setUint32(s + TENSOR.rank, 2, true);
          v.setBigInt64(s + TENSOR.dims, BigInt(end - r0), true);
          v.setBigInt64(s + TENSOR.dims + 8, BigInt(width), true);
          v.setUint32(s + TENSOR.data, x.data + r0 * width * x.size, true);
        });
        return { tensors: at, count: inputs.length };
      });
      const handles = w.threads.run(this.#m, blocks);
      if (!handles) return null;
      const y = new Float32Array(rows * dim);
      handles.forEach((h, b) => {
        const r0 = b ? ends[b - 1] : 0, s = w.x.mlrt_output(h, 0);
        y.set(w.array(Float32Array, w.view().getUint32(s + TENSOR.data, true), (ends[b] - r0) * dim), r0 * dim);
      });
      return y;
    });
  }

  /** Returns the encoder's memory (and its tokenizer's) to the wasm heap. Safe to call twice. */
  free() {
    this.tokenizer?.dispose();
    if (this.#m.ptr) this.#wasm.release(this.#m);
  }

  /** The same as free(), as models name it. */
  dispose() { this.free(); }

  get disposed() { return !this.#m.ptr; }
}
// ---- end of sentence encoders ----
