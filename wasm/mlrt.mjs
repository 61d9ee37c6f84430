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

// A tiny module using i8x16.popcnt: valid only where SIMD128 is supported.
const SIMD_PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11]);

/** True when this engine runs WebAssembly SIMD128. */
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
 * `threads: n | 'auto'` (default 1) runs predictBatch rows of dense models on n threads: this
 * thread and n - 1 workers over one shared memory (mlrt-threads.wasm, SIMD128), each row giving
 * the bits it gives on one thread. Where workers over shared memory are unavailable (no
 * SharedArrayBuffer, a page that is not cross-origin isolated, edge workers), it runs on one
 * thread and `rt.build.threadsUnavailable` says why. `rt.dispose()` ends the workers.
 * @param {{ wasm?: BufferSource | URL | string | Response | Promise<Response> | WebAssembly.Module,
 *           simd?: 'auto' | boolean, relaxed?: 'auto' | boolean, threads?: number | 'auto' }} [options]
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
    rt.build = Object.freeze({ ...rt.build, threads: 1, ...(why ? { threadsUnavailable: why } : {}) });
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
  return new Runtime(instance.exports, { simd, relaxed }, instance.exports.memory);
}

async function threadedRuntime(t, options, n) {
  const module = await compile(options.threadsWasm ?? new URL('./mlrt-threads.wasm', import.meta.url));
  const memory = new WebAssembly.Memory({ initial: 16, maximum: 32768, shared: true });
  const instance = await WebAssembly.instantiate(module, t.threadImports(module, memory));
  instance.exports.__wasm_call_ctors?.();
  const rt = new Runtime(instance.exports, { simd: true, relaxed: false }, memory);
  rt._pool = await t.Pool.start(module, memory, n - 1, (bytes) => rt._alloc(bytes));
  rt.build = Object.freeze({ ...rt.build, threads: n });
  return rt;
}

class Runtime {
  #x;
  #u8 = new Uint8Array(0);
  #f32 = new Float32Array(0);
  #models;

  #mem;
  _pool = null; // threads.mjs Pool, when threads > 1

  constructor(exports, chosen, memory) {
    this.#x = exports;
    this.#mem = memory;
    exports._initialize?.();
    // What the module was compiled for (bit 0: SIMD128, bit 1: relaxed SIMD), which is the truth when
    // the caller passed its own wasm; a module without that export reports what was asked for.
    const f = exports.mlrt_wasm_build?.();
    this.build = Object.freeze({ ...(f === undefined ? chosen : { simd: (f & 1) !== 0, relaxed: (f & 2) !== 0 }), threads: 1 });
    // Frees the wasm side of models that were dropped without dispose().
    this.#models = typeof FinalizationRegistry === 'function'
      ? new FinalizationRegistry((handles) => this._release(handles)) : null;
  }

  /** Bytes of wasm memory in use by the heap (grows, never shrinks). */
  get memoryBytes() { return this.#mem.buffer.byteLength; }

  // Views over wasm memory, renewed after the memory grows (growth detaches old views).
  _u8() {
    if (this.#u8.buffer !== this.#mem.buffer) this.#u8 = new Uint8Array(this.#mem.buffer);
    return this.#u8;
  }
  _f32() {
    if (this.#f32.buffer !== this.#mem.buffer) this.#f32 = new Float32Array(this.#mem.buffer);
    return this.#f32;
  }

  _string(ptr) {
    const u8 = this._u8();
    let end = ptr;
    while (u8[end]) end++;
    // TextDecoder refuses views of shared memory (the threaded build's): decode a copy there
    return decoder.decode(u8.buffer instanceof ArrayBuffer ? u8.subarray(ptr, end) : u8.slice(ptr, end));
  }

  _alloc(bytes) {
    const ptr = this.#x.mlrt_wasm_alloc(bytes);
    if (!ptr) throw new MlrtError('OUT_OF_MEMORY', `mlrt: cannot allocate ${bytes} bytes of wasm memory`);
    return ptr;
  }

  _free(ptr) { this.#x.mlrt_wasm_free(ptr); }

  _error() {
    const x = this.#x;
    const code = this._string(x.mlrt_wasm_status_name(x.mlrt_wasm_error_code()));
    return new MlrtError(code, this._string(x.mlrt_wasm_error_message()));
  }

  // Copies the caller's bytes into wasm memory for the duration of fn(ptr, len).
  _withBytes(bytes, what, fn) {
    bytes = asBytes(bytes, what);
    const ptr = this._alloc(bytes.length);
    try {
      this._u8().set(bytes, ptr);
      return fn(ptr, bytes.length);
    } finally {
      this.#x.mlrt_wasm_free(ptr);
    }
  }

  // A NUL-terminated copy of s (or 0 for undefined) in wasm memory for the duration of fn(ptr).
  _withString(s, fn) {
    if (s === undefined) return fn(0);
    const utf8 = encoder.encode(s);
    const ptr = this._alloc(utf8.length + 1);
    try {
      const u8 = this._u8();
      u8.set(utf8, ptr);
      u8[ptr + utf8.length] = 0;
      return fn(ptr);
    } finally {
      this.#x.mlrt_wasm_free(ptr);
    }
  }

  /**
   * Loads a WordPiece tokenizer (see Tokenizer): the bytes of a tokenizer.json (or of a vocab.txt),
   * or the files of a model folder by name: { 'tokenizer.json': bytes } or
   * { 'vocab.txt': bytes, 'tokenizer_config.json'?: bytes }. Throws MlrtError.
   */
  loadTokenizer(files) {
    this.#text ??= new TextPort({ x: this.#x, mem: this.#mem, alloc: (n) => this._alloc(n) });
    return loadTokenizer(this.#text, files);
  }

  #text = null; // TextPort: the tokenizers' access to this runtime's exports and memory

  /** Lists a file's tensors and metadata without building a model. */
  inspect(bytes) {
    const x = this.#x;
    const json = this._withBytes(bytes, 'inspect', (ptr, len) => x.mlrt_wasm_inspect(ptr, len));
    if (!json) throw this._error();
    try {
      return JSON.parse(this._string(json));
    } finally {
      x.mlrt_wasm_free(json);
    }
  }

  /**
   * Loads a model from a file's bytes; the bytes may be reused afterwards.
   * options.expect: the aprender model type the file must hold ('LinearRegression', ...).
   * options.weightLayout: 'auto' (default), 'out_in' (PyTorch) or 'in_out' (Keras, JAX, aprender):
   * how a tensor file's dense weights are stored; 'auto' decides from biases, widths and names.
   */
  loadFromBytes(bytes, options = {}) {
    return this._load(bytes, options?.expect, 'loadFromBytes', null, options?.weightLayout);
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
      return this._load(file, expect, 'load', { signature: NO_SIGNATURE, encrypted: false }, weightLayout);
    }
    const crypto = await import('./apr-crypto.mjs');
    const check = await crypto.verifyAprV1(file, { publicKey }); // throws for a malformed container
    if (!check.signed && wantSignature) {
      throw new MlrtError('NOT_SIGNED', `load: ${publicKey != null ? 'a trusted publicKey was given' : 'requireSignature is set'} but the .apr file is not signed (flag 0x02 is clear)`);
    }
    if (check.signed && !check.valid) throw new MlrtError('SIGNATURE_INVALID', `load: apr: ${check.reason}`);
    const signature = { signed: check.signed, signer: check.signer, verified: check.valid };
    if (!(flags & APR_ENCRYPTED)) return this._load(file, expect, 'load', { signature, encrypted: false });
    if (password == null && recipientSecretKey == null) {
      throw new MlrtError('ENCRYPTED', 'load: the .apr payload is encrypted (flag 0x01): pass { password } (password mode) or { recipientSecretKey } (X25519 recipient mode)');
    }
    this._checkBeforeDecrypting(file, expect);
    const { file: plain, mode } = await crypto.decryptAprV1Detailed(file, { password, recipientSecretKey, argon2id });
    return this._load(plain, expect, 'load', { signature, encrypted: mode });
  }

  // The C loader checks the header (model type, expect), the sections and the metadata of an
  // encrypted file and then stops at ENCRYPTED: any other refusal comes before the slow KDF.
  _checkBeforeDecrypting(file, expect) {
    try {
      this._load(file, expect, 'load', null).dispose(); // not reached: the payload is encrypted
    } catch (e) {
      if (e?.code !== 'ENCRYPTED') throw e;
    }
  }

  // loadFromBytes and load: extra members (or null) join info before it is frozen.
  _load(bytes, expect, what, extra, weightLayout = 'auto') {
    const x = this.#x;
    if (expect !== undefined && (typeof expect !== 'string' || expect.includes('\0'))) {
      throw new MlrtError('INVALID_ARGUMENT', `${what}: options.expect must be a string without NUL`);
    }
    const layout = WEIGHT_LAYOUTS.indexOf(weightLayout ?? 'auto');
    if (layout < 0) {
      throw new MlrtError('INVALID_ARGUMENT', `${what}: options.weightLayout must be 'auto', 'out_in' or 'in_out', got ${JSON.stringify(weightLayout)}`);
    }
    const handle = this._withBytes(bytes, what,
      (ptr, len) => this._withString(expect, (e) => x.mlrt_wasm_load(ptr, len, e, layout)));
    if (!handle) throw this._error();
    const info = deepFreeze(Object.assign(JSON.parse(this._string(x.mlrt_wasm_info(handle))), extra));
    const handles = { model: handle, io: 0, in: info.inputSize, out: info.outputSize, layers: info.layers ?? null };
    try {
      handles.io = this._alloc((info.inputSize + info.outputSize) * 4);
    } catch (e) {
      this._release(handles);
      throw e;
    }
    const model = new Model(this, handles, info);
    this.#models?.register(model, handles, handles);
    return model;
  }

  /** Ends the worker threads (threads > 1); the runtime and its models go on, on this thread. */
  dispose() {
    this._pool?.terminate();
    this._pool = null;
    this.build = Object.freeze({ ...this.build, threads: 1 });
  }

  _release(handles) {
    for (const f of handles.forks ?? []) this.#x.mlrt_wasm_dispose(f); // forks go before their model
    handles.forks = null;
    if (handles.io) this.#x.mlrt_wasm_free(handles.io);
    if (handles.slices) this.#x.mlrt_wasm_free(handles.slices.ptr);
    handles.slices = null;
    if (handles.model) this.#x.mlrt_wasm_dispose(handles.model);
    handles.io = handles.model = 0;
  }

  _dispose(handles) {
    this.#models?.unregister(handles);
    this._release(handles);
  }

  _layerWeights(handles, i, inputs, outputs) {
    const w = this._alloc((inputs * outputs + outputs) * 4), b = w + inputs * outputs * 4;
    try {
      const status = this.#x.mlrt_wasm_layer_weights(handles.model, i, w, b); // -1: no bias in the file
      if (status > 0) throw this._error();
      const f32 = this._f32();
      return {
        weight: f32.slice(w >> 2, (w >> 2) + inputs * outputs),
        bias: status === -1 ? null : f32.slice(b >> 2, (b >> 2) + outputs),
      };
    } finally {
      this._free(w);
    }
  }

  _predict(handles, inPtr, n, outPtr) {
    const x = this.#x, pool = this._pool;
    if (pool && n >= MIN_ROWS_PER_THREAD * 2 && this._forks(handles)) {
      // rows split in blocks of whole register tiles; this thread takes the first block
      const rowBytes = handles.in * 4, outBytes = handles.out * 4;
      const t = Math.min(pool.size + 1, Math.floor(n / MIN_ROWS_PER_THREAD));
      const per = Math.ceil(n / t / ROW_ALIGN) * ROW_ALIGN;
      const jobs = [];
      for (let r = per, k = 0; r < n && k < pool.size; r += per, k++) {
        jobs.push({ model: handles.forks[k], in: inPtr + r * rowBytes, n: Math.min(per, n - r), out: outPtr + r * outBytes });
      }
      let own = 0;
      const statuses = pool.run(jobs, () => { own = x.mlrt_wasm_predict(handles.model, inPtr, Math.min(per, n), outPtr); });
      if (own === 0 && statuses.every((st) => st === 0)) return;
      // a row failed: the whole batch again on this thread, so the error names its row as usual
    }
    if (pool && n < MIN_ROWS_PER_THREAD * 2 && this._predictSliced(handles, inPtr, n, outPtr)) return;
    if (x.mlrt_wasm_predict(handles.model, inPtr, n, outPtr) !== 0) throw this._error();
  }

  // Too few rows to split: the outputs of each large layer are split between the threads instead,
  // layer by layer (slices of MLRT_SLICE outputs, each computed as in the whole layer), with the
  // activations between layers in a buffer of the model's. False, before or after any work, when
  // no layer is worth splitting, the model does not fork, a worker sleeps (woken for the next call:
  // its wake-up would cost more than the slice), or a slice failed: the caller then runs the rows on
  // this thread, whose error names them as usual.
  _predictSliced(handles, inPtr, n, outPtr) {
    const L = handles.layers, x = this.#x, pool = this._pool;
    const parts = (l) => (l.activation === 'softmax' || n * l.inputs * l.outputs < SLICE_MIN_MACS ? 1
      : Math.min(pool.size + 1, Math.floor(l.outputs / SLICE)));
    if (!L || !L.some((l) => parts(l) > 1) || !this._forks(handles) || !pool.awake()) return false;
    if (!handles.slices || handles.slices.rows < n) { // two layers' activations, the widest layer's
      const width = Math.max(...L.map((l) => l.outputs));
      if (handles.slices) x.mlrt_wasm_free(handles.slices.ptr);
      handles.slices = null; // (_alloc may throw)
      handles.slices = { ptr: this._alloc(2 * width * n * 4), rows: n, width };
    }
    const { ptr, width } = handles.slices;
    let xp = inPtr;
    for (let i = 0; i < L.length; i++) {
      const out = L[i].outputs, t = parts(L[i]);
      const yp = i === L.length - 1 ? outPtr : ptr + (i & 1) * width * n * 4;
      let own = 0, statuses = [];
      if (t > 1) {
        const per = Math.ceil(out / t / SLICE) * SLICE, jobs = [];
        for (let o0 = per, k = 0; o0 < out; o0 += per, k++) {
          jobs.push({ slice: true, model: handles.forks[k], layer: i, in: xp, n, out: yp, o0, o1: Math.min(out, o0 + per) });
        }
        statuses = pool.run(jobs, () => { own = x.mlrt_wasm_layer_slice(handles.model, i, xp, n, yp, 0, per); });
      } else {
        own = x.mlrt_wasm_layer_slice(handles.model, i, xp, n, yp, 0, out);
      }
      if (own !== 0 || statuses.some((st) => st !== 0)) return false;
      xp = yp;
    }
    return true;
  }

  // One fork of the model per worker (same weights, own scratch); false for models that do not fork.
  _forks(handles) {
    if (handles.forks === undefined) {
      const forks = [];
      for (let k = 0; k < this._pool.size; k++) {
        const f = this.#x.mlrt_wasm_fork(handles.model);
        if (!f) break;
        forks.push(f);
      }
      if (forks.length < this._pool.size) {
        for (const f of forks) this.#x.mlrt_wasm_dispose(f);
        handles.forks = null;
      } else handles.forks = forks;
    }
    return handles.forks !== null && handles.forks.length === this._pool.size;
  }

  _predictLabels(handles, inPtr, n, outPtr) {
    if (this.#x.mlrt_wasm_predict_labels(handles.model, inPtr, n, outPtr) !== 0) throw this._error();
  }

  _u32() {
    return new Uint32Array(this.#mem.buffer);
  }
}

function asBytes(bytes, what) {
  if (bytes instanceof ArrayBuffer) return new Uint8Array(bytes);
  if (ArrayBuffer.isView(bytes)) return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  throw new MlrtError('INVALID_ARGUMENT', `${what}: expected a Uint8Array or ArrayBuffer`);
}

// Threads take rows in blocks of whole register tiles (5 rows in the SIMD128 kernels, which the
// threaded build runs), and only batches with at least this many rows per thread are split.
const ROW_ALIGN = 5;
const MIN_ROWS_PER_THREAD = 8;
// Smaller batches split each layer's outputs instead, in slices of MLRT_SLICE (mlrt.h), when the
// layer is worth it: at least this many multiply-adds (a slice handed over costs a few µs).
const SLICE = 32;
const SLICE_MIN_MACS = 1 << 17;

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

class Model {
  #rt;
  #h;

  constructor(rt, handles, info) {
    this.#rt = rt;
    this.#h = handles;
    /** { format, kind, task, classes?, trees?, clusters?, inputSize, outputSize, dtype, params, weightBytes, layers, metadata } */
    this.info = info;
  }

  #live(what) {
    if (!this.#h.model) throw new MlrtError('DISPOSED', `${what}: the model has been disposed`);
  }

  /** One input of info.inputSize numbers -> Float32Array(info.outputSize). */
  predict(input) {
    this.#live('predict');
    const { inputSize, outputSize } = this.info;
    checkInputs(input, inputSize, 'predict');
    const rt = this.#rt, inPtr = this.#h.io, outPtr = inPtr + inputSize * 4;
    rt._f32().set(input, inPtr >> 2);
    rt._predict(this.#h, inPtr, 1, outPtr);
    return rt._f32().slice(outPtr >> 2, (outPtr >> 2) + outputSize);
  }

  /** n inputs, row after row -> Float32Array(n * info.outputSize). */
  predictBatch(inputs, n) {
    this.#live('predictBatch');
    if (!Number.isSafeInteger(n) || n < 1) {
      throw new MlrtError('INVALID_ARGUMENT', `predictBatch: n must be a positive integer, got ${n}`);
    }
    const { inputSize, outputSize } = this.info;
    checkInputs(inputs, n * inputSize, 'predictBatch');
    const rt = this.#rt;
    const inPtr = rt._alloc(n * (inputSize + outputSize) * 4), outPtr = inPtr + n * inputSize * 4;
    try {
      rt._f32().set(inputs, inPtr >> 2);
      rt._predict(this.#h, inPtr, n, outPtr);
      return rt._f32().slice(outPtr >> 2, (outPtr >> 2) + n * outputSize);
    } finally {
      rt._free(inPtr);
    }
  }

  /**
   * The label of one input: a classifier's class label as stored (info.classes; ties go to the
   * smallest label), or KMeans' nearest centroid index (ties: the lowest). Regressors throw
   * INVALID_ARGUMENT.
   */
  predictLabel(input) {
    this.#live('predictLabel');
    this.#noLabels('predictLabel');
    const { inputSize } = this.info;
    checkInputs(input, inputSize, 'predictLabel');
    const rt = this.#rt, inPtr = this.#h.io, outPtr = inPtr + inputSize * 4; // io holds outputSize >= 1 floats
    rt._f32().set(input, inPtr >> 2);
    rt._predictLabels(this.#h, inPtr, 1, outPtr);
    return rt._u32()[outPtr >> 2];
  }

  /** n inputs, row after row -> Uint32Array(n) of labels (see predictLabel). */
  predictLabels(inputs, n) {
    this.#live('predictLabels');
    this.#noLabels('predictLabels');
    if (!Number.isSafeInteger(n) || n < 1) {
      throw new MlrtError('INVALID_ARGUMENT', `predictLabels: n must be a positive integer, got ${n}`);
    }
    const { inputSize } = this.info;
    checkInputs(inputs, n * inputSize, 'predictLabels');
    const rt = this.#rt;
    const inPtr = rt._alloc(n * (inputSize + 1) * 4), outPtr = inPtr + n * inputSize * 4;
    try {
      rt._f32().set(inputs, inPtr >> 2);
      rt._predictLabels(this.#h, inPtr, n, outPtr);
      return rt._u32().slice(outPtr >> 2, (outPtr >> 2) + n);
    } finally {
      rt._free(inPtr);
    }
  }

  #noLabels(what) {
    if (this.info.task === 'regression') {
      throw new MlrtError('INVALID_ARGUMENT', `${what}: a ${this.info.kind} regressor predicts values, not labels: use predict`);
    }
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
    return { ...layer, ...this.#rt._layerWeights(this.#h, i, layer.inputs, layer.outputs) };
  }

  /** Returns the model's memory to the wasm heap. Safe to call twice. */
  dispose() {
    if (this.#h.model) this.#rt._dispose(this.#h);
  }

  get disposed() { return !this.#h.model; }
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
  #p;
  #buffer = null;
  #u8; #i32; #u32;
  constructor(port) { this.#p = port; this.x = port.x; }
  // views renewed only after the memory grew (growth detaches them)
  #views() {
    const b = this.#p.mem.buffer;
    if (b !== this.#buffer) { this.#buffer = b; this.#u8 = new Uint8Array(b); this.#i32 = new Int32Array(b); this.#u32 = new Uint32Array(b); }
  }
  get u8() { this.#views(); return this.#u8; }
  get i32() { this.#views(); return this.#i32; }
  get u32() { this.#views(); return this.#u32; }
  alloc(n) { return this.#p.alloc(n); }
  free(ptr) { if (ptr) this.x.mlrt_wasm_free(ptr); }
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
  if (s instanceof Uint8Array) return s;
  if (s instanceof ArrayBuffer) return new Uint8Array(s);
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
  if (h.tok) p.x.mlrt_tokenizer_free(h.tok);
  h.tok = h.scratch = h.cap = 0;
}

/**
 * A WordPiece tokenizer, token for token Hugging Face's Rust `tokenizers` (BertNormalizer,
 * BertPreTokenizer, WordPiece, the post-processor's template). Defaults follow the file's
 * truncation and padding, as Hugging Face applies them; options override.
 */
class Tokenizer {
  #p;
  #h; // { tok, scratch, cap }: the C tokenizer and a scratch block reused by every call
  constructor(p, tok) {
    this.#p = p;
    this.#h = { tok, scratch: 0, cap: 0 };
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
      if (h.scratch) this.#p.free(h.scratch);
      h.scratch = 0;
      h.cap = Math.max(need, 2 * h.cap, 4096);
      h.scratch = this.#p.alloc(h.cap);
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

  /** Returns the tokenizer's memory to the wasm heap. Safe to call twice. */
  dispose() {
    if (!this.#h.tok) return;
    tokenizers?.unregister(this.#h);
    releaseTokenizer(this.#p, this.#h);
  }

  get disposed() { return !this.#h.tok; }
}
// ---- end of text ----
