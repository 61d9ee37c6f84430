// threads.mjs — mlrt on several threads: a pool of workers that instantiate the threaded build
// (mlrt-threads.wasm) over the runtime's shared memory, and the policy of what runs on them
// (ThreadRunner). Imported by mlrt.mjs only when createRuntime({ threads }) asks for more than one,
// and by the workers' program, threads-worker.mjs.
//
// The policy, for dense models (the ones that fork: same weights, scratch of their own):
//   - batches of at least 2 x MIN_ROWS_PER_THREAD rows split their rows between the threads, in
//     blocks of whole register tiles (ROW_ALIGN rows);
//   - smaller batches split each large layer's outputs instead (slices of SLICE outputs, for layers
//     of at least SLICE_MIN_MACS multiply-adds), layer by layer;
//   - anything else, and any split that fails, runs on the calling thread, whose error then names
//     the row as it does with one thread. Every row gives the bits it gives on one thread.
// Sentence encoders (mlrt.mjs' Encoder) choose their own split of texts and hand the blocks to
// run(): each block of rows is one mlrt_run, on the model here and on a fork in each worker.
//
// One job at a time per worker, through a control block of CONTROL.WORDS Int32 words per worker in
// wasm memory:
//   [SEQ] job number, bumped by the main thread to start a job   [DONE] the last job finished
//   [MODEL] [IN] [N] [OUT]  the job: a fork handle, rows, pointers  [STATUS] the call's status
//   [KIND] the job's kind (JOB): whole rows (mlrt_predict_batch), outputs [O0, O1) of layer [LAYER]
//          (mlrt_layer_slice), or a run (mlrt_run of the [N] mlrt_tensor structs at [IN])
//   [ASLEEP] 1 while the worker sleeps in Atomics.wait: slices (a few µs of work) are not worth
//            a wake-up; the main thread wakes it to spin for the next call instead
// The main thread runs its own share meanwhile, then waits for every worker's DONE. Workers block in
// Atomics.wait between jobs; in Node they are unref'd, so an idle pool never keeps the process
// alive, and terminate() ends them.

/** The control block's words (shared with threads-worker.mjs). */
export const CONTROL = Object.freeze({
  SEQ: 0, DONE: 1, MODEL: 2, IN: 3, N: 4, OUT: 5, STATUS: 6, KIND: 7, LAYER: 8, O0: 9, O1: 10, ASLEEP: 11, WORDS: 16,
});
/** The kinds of job (the control block's KIND word). */
export const JOB = Object.freeze({ ROWS: 0, SLICE: 1, RUN: 2 });
/** Loads of a control word before a thread sleeps in Atomics.wait (roughly 0.1-0.3 ms): a sleeping
 * thread takes far longer than that to wake on some machines (a 2-core VM among them). */
export const SPIN = 200000;
const STACK_BYTES = 64 * 1024;

// Threads take rows in blocks of whole register tiles (5 rows in the SIMD128 kernels, which the
// threaded build runs), and only batches with at least this many rows per thread are split.
const ROW_ALIGN = 5;
const MIN_ROWS_PER_THREAD = 8;
// Smaller batches split each layer's outputs instead, in slices of MLRT_SLICE (mlrt.h), when the
// layer is worth it: at least this many multiply-adds (a slice handed over costs a few µs).
const SLICE = 32;
const SLICE_MIN_MACS = 1 << 17;

/** The threaded build's imports over `memory`: growth and large copies, which Emscripten's libc asks of JS. */
export function threadImports(module, memory) {
  const env = {
    memory,
    emscripten_resize_heap: (requested) => {
      const need = Math.ceil(((requested >>> 0) - memory.buffer.byteLength) / 65536);
      try {
        if (need > 0) memory.grow(need);
        return 1;
      } catch {
        return 0;
      }
    },
    emscripten_memcpy_big: (dest, src, num) => {
      new Uint8Array(memory.buffer).copyWithin(dest >>> 0, src >>> 0, (src >>> 0) + (num >>> 0));
      return dest;
    },
    emscripten_notify_memory_growth: () => {},
  };
  for (const { module: mod, name, kind } of WebAssembly.Module.imports(module)) {
    if (mod !== 'env' || !(name in env)) throw new Error(`mlrt-threads.wasm imports unexpected ${kind} ${mod}.${name}`);
  }
  return { env };
}

/** Why this engine cannot run workers over shared memory, or null when it can. */
export function threadsUnavailable() {
  if (typeof SharedArrayBuffer !== 'function' || typeof Atomics !== 'object') return 'no SharedArrayBuffer';
  if (globalThis.crossOriginIsolated === false) return 'the page is not cross-origin isolated (COOP/COEP)';
  if (!isNode() && typeof Worker !== 'function') return 'no Worker';
  try {
    new WebAssembly.Memory({ initial: 1, maximum: 1, shared: true });
  } catch {
    return 'no shared WebAssembly memory';
  }
  return null;
}

/** The number of cores, for threads: 'auto'. */
export async function coreCount() {
  if (globalThis.navigator?.hardwareConcurrency) return navigator.hardwareConcurrency;
  try {
    const NODE_OS = 'node:os';
    const os = await import(/* @vite-ignore */ /* webpackIgnore: true */ NODE_OS);
    return os.availableParallelism?.() ?? os.cpus().length;
  } catch {
    return 1;
  }
}

const isNode = () => typeof process !== 'undefined' && Boolean(process.versions?.node);

// One worker running threads-worker.mjs, behind the few calls the pool makes of it. Browsers' is
// spawned by the literal `new Worker(new URL(…, import.meta.url), { type: 'module' })` that
// bundlers (Vite, webpack 5) recognise and bundle as a worker; Node's Worker takes the file URL.
async function spawnWorker() {
  if (isNode()) {
    const NODE_WT = 'node:worker_threads'; // a name bundlers do not follow
    const { Worker } = await import(/* @vite-ignore */ /* webpackIgnore: true */ NODE_WT);
    // The worker is a file: the parent's --input-type (for code given with -e or on stdin) would refuse it.
    const execArgv = process.execArgv.filter((a, i, all) => !a.startsWith('--input-type') && all[i - 1] !== '--input-type');
    const w = new Worker(new URL('./threads-worker.mjs', import.meta.url), { execArgv });
    w.unref();
    return { post: (m) => w.postMessage(m), once: (f) => w.once('message', f), onError: (f) => w.once('error', f), terminate: () => w.terminate() };
  }
  const w = new Worker(new URL('./threads-worker.mjs', import.meta.url), { type: 'module' });
  // (a worker script that fails to load gives an error event without a message)
  const failed = (e) => new Error(e.message || 'threads-worker.mjs did not load (a bundle made by esbuild needs it and threads.mjs copied next to it)');
  return {
    post: (m) => w.postMessage(m),
    once: (f) => { w.onmessage = (e) => f(e.data); },
    onError: (f) => { w.onerror = (e) => f(failed(e)); },
    terminate: () => w.terminate(),
  };
}

// The workers and their control blocks: hands out jobs and waits for them. Knows nothing of models.
class Pool {
  #workers = [];
  #memory;
  #ctrl;      // byte offset of the control blocks
  #seq = 0;
  #canWait;   // Atomics.wait is refused on a browser's main thread: spin there instead
  #completed = { rows: 0, slices: 0 }; // jobs the workers finished with status 0 (runs count as rows)

  /** Starts `count` workers; `wasm` allocates their stacks, thread-local blocks and control words. */
  static async start(module, memory, count, wasm) {
    const pool = new Pool();
    pool.#memory = memory;
    pool.#ctrl = wasm.alloc(count * CONTROL.WORDS * 4);
    new Int32Array(memory.buffer, pool.#ctrl, count * CONTROL.WORDS).fill(0);
    const tlsSize = wasm.x.__tls_size?.value ?? 0, tlsAlign = Math.max(wasm.x.__tls_align?.value ?? 1, 8);
    try {
      await Promise.all(Array.from({ length: count }, async (_, k) => {
        const w = await spawnWorker();
        pool.#workers.push(w);
        const stack = wasm.alloc(STACK_BYTES) + STACK_BYTES;
        // each thread's own thread-local block (libc's errno among others), aligned as the module asks
        const tls = tlsSize ? alignUp(wasm.alloc(tlsSize + tlsAlign), tlsAlign) : 0;
        await new Promise((resolve, reject) => {
          w.once((m) => (m === 'ready' ? resolve() : reject(new Error(`mlrt worker: ${m}`))));
          w.onError(reject);
          w.post({ module, memory, stack, tls, ctrl: pool.#ctrl + k * CONTROL.WORDS * 4 });
        });
      }));
    } catch (e) {
      pool.terminate();
      throw e;
    }
    try {
      Atomics.wait(new Int32Array(memory.buffer, pool.#ctrl, 1), 0, 1, 0);
      pool.#canWait = true;
    } catch {
      pool.#canWait = false;
    }
    return pool;
  }

  get size() { return this.#workers.length; }

  /** Jobs the workers finished without error since the pool started: { rows, slices }. */
  get completed() { return { ...this.#completed }; }

  #words() { return new Int32Array(this.#memory.buffer, this.#ctrl, this.#workers.length * CONTROL.WORDS); }

  /**
   * Runs jobs[k] = { model, in, n, out } (rows), { slice: true, model, layer, in, n, out, o0, o1 }
   * (a layer's outputs), or { run: true, model, in, n } (n tensors), on worker k while `own()` runs on this thread; returns the workers'
   * statuses (0: OK).
   */
  run(jobs, own) {
    const C = CONTROL, seq = ++this.#seq, words = this.#words();
    jobs.forEach((j, k) => {
      const b = k * C.WORDS;
      words[b + C.MODEL] = j.model; words[b + C.IN] = j.in; words[b + C.N] = j.n; words[b + C.OUT] = j.out;
      words[b + C.KIND] = j.slice ? JOB.SLICE : j.run ? JOB.RUN : JOB.ROWS;
      if (j.slice) { words[b + C.LAYER] = j.layer; words[b + C.O0] = j.o0; words[b + C.O1] = j.o1; }
      Atomics.store(words, b + C.SEQ, seq);
      Atomics.notify(words, b + C.SEQ);
    });
    try {
      own();
    } finally {
      for (let k = 0; k < jobs.length; k++) { // every job ends before the rows' memory is freed
        const b = k * C.WORDS;
        for (let s = 0; s < SPIN && Atomics.load(words, b + C.DONE) !== seq; s++);
        for (let d; (d = Atomics.load(words, b + C.DONE)) !== seq;) if (this.#canWait) Atomics.wait(words, b + C.DONE, d, 1000);
      }
    }
    const statuses = jobs.map((_, k) => words[k * C.WORDS + C.STATUS]);
    jobs.forEach((j, k) => { if (statuses[k] === 0) this.#completed[j.slice ? 'slices' : 'rows']++; });
    return statuses;
  }

  /** How many workers sleep in Atomics.wait. */
  sleeping() {
    const words = this.#words();
    return this.#workers.reduce((n, _, k) => n + Atomics.load(words, k * CONTROL.WORDS + CONTROL.ASLEEP), 0);
  }

  /** Wakes the workers that sleep in Atomics.wait (they spin for the next job); returns how many slept. */
  wake() {
    const words = this.#words();
    let woken = 0;
    for (let k = 0; k < this.#workers.length; k++) {
      if (Atomics.load(words, k * CONTROL.WORDS + CONTROL.ASLEEP)) { woken++; Atomics.notify(words, k * CONTROL.WORDS + CONTROL.SEQ); }
    }
    return woken;
  }

  terminate() {
    for (const w of this.#workers) w.terminate();
    this.#workers = [];
  }
}

const alignUp = (p, a) => Math.ceil(p / a) * a;

/**
 * Runs dense models' rows, or their large layers' slices, on this thread and the pool's workers.
 * `wasm` is mlrt.mjs' wrapper of the instance: its exports (x), allocator and error struct.
 */
export class ThreadRunner {
  #wasm;
  #pool;
  #diagnostics = null;

  /** Starts `workers` workers over the instance's shared memory. */
  static async start(wasm, module, memory, workers) {
    const runner = new ThreadRunner();
    runner.#wasm = wasm;
    runner.#pool = await Pool.start(module, memory, workers, wasm);
    return runner;
  }

  /** The number of workers (threads besides this one). */
  get workers() { return this.#pool.size; }

  /** What rt.threadPool shows of the pool (mlrt.d.ts: ThreadPoolDiagnostics); the same object each time. */
  diagnostics() {
    const pool = this.#pool;
    this.#diagnostics ??= Object.freeze({
      get size() { return pool.size; },
      get sleeping() { return pool.sleeping(); },
      wake: () => pool.wake(),
      get completed() { return Object.freeze(pool.completed); },
    });
    return this.#diagnostics;
  }

  /**
   * Runs n rows of `model` (mlrt.mjs' record: ptr, inputSize, outputSize, layers, threads) from
   * inPtr into outPtr on several threads. False, before or after any work, when the rows are better
   * run on this thread (too few, a model that does not fork, no layer worth splitting) or a thread
   * refused them: the caller then runs them on this thread, whose error names the row as usual.
   */
  predict(model, inPtr, n, outPtr) {
    return n >= MIN_ROWS_PER_THREAD * 2 ? this.#rows(model, inPtr, n, outPtr) : this.#slices(model, inPtr, n, outPtr);
  }

  // Rows split in blocks of whole register tiles; this thread takes the first block.
  #rows(model, inPtr, n, outPtr) {
    const w = this.#wasm, pool = this.#pool, forks = this.#forks(model);
    if (!forks) return false;
    const rowBytes = model.inputSize * 4, outBytes = model.outputSize * 4;
    const t = Math.min(pool.size + 1, Math.floor(n / MIN_ROWS_PER_THREAD));
    const per = Math.ceil(n / t / ROW_ALIGN) * ROW_ALIGN;
    const jobs = [];
    for (let r = per, k = 0; r < n && k < pool.size; r += per, k++) {
      jobs.push({ model: forks[k], in: inPtr + r * rowBytes, n: Math.min(per, n - r), out: outPtr + r * outBytes });
    }
    let own = 0;
    const statuses = pool.run(jobs, () => { own = w.x.mlrt_predict_batch(model.ptr, inPtr, Math.min(per, n), outPtr, w.error); });
    return own === 0 && statuses.every((st) => st === 0);
  }

  // Too few rows to split: the outputs of each large layer are split between the threads instead,
  // layer by layer (slices of SLICE outputs, each computed as in the whole layer), with the
  // activations between layers in a buffer of the model's. Not when a worker sleeps: it is woken
  // for the next call instead, as its wake-up would cost more than the slice.
  #slices(model, inPtr, n, outPtr) {
    const L = model.layers, w = this.#wasm, pool = this.#pool;
    const parts = (l) => (l.activation === 'softmax' || n * l.inputs * l.outputs < SLICE_MIN_MACS ? 1
      : Math.min(pool.size + 1, Math.floor(l.outputs / SLICE)));
    if (!L?.some((l) => parts(l) > 1)) return false;
    const forks = this.#forks(model);
    if (!forks || pool.wake() > 0) return false;
    const { ptr, width } = model.threads.activations(n, L);
    let xp = inPtr;
    for (let i = 0; i < L.length; i++) {
      const out = L[i].outputs, t = parts(L[i]);
      const yp = i === L.length - 1 ? outPtr : ptr + (i & 1) * width * n * 4;
      let own = 0, statuses = [];
      if (t > 1) {
        const per = Math.ceil(out / t / SLICE) * SLICE, jobs = [];
        for (let o0 = per, k = 0; o0 < out; o0 += per, k++) {
          jobs.push({ slice: true, model: forks[k], layer: i, in: xp, n, out: yp, o0, o1: Math.min(out, o0 + per) });
        }
        statuses = pool.run(jobs, () => { own = w.x.mlrt_layer_slice(model.ptr, i, xp, yp, n, 0, per, w.error); });
      } else {
        own = w.x.mlrt_layer_slice(model.ptr, i, xp, yp, n, 0, out, w.error);
      }
      if (own !== 0 || statuses.some((st) => st !== 0)) return false;
      xp = yp;
    }
    return true;
  }

  // One fork of the model per worker, made on first use; null for models that do not fork.
  #forks(model) {
    model.threads ??= ModelThreads.fork(this.#wasm, model.ptr, this.#pool.size);
    return model.threads.forks;
  }

  /**
   * mlrt_run of blocks[0] on the model on this thread, and of blocks[k] on the k-th fork on worker
   * k - 1 meanwhile: blocks[k] = { tensors, count } (mlrt_tensor structs in wasm memory), at most
   * one per thread. Returns the model handles whose output 0 holds each block's result (the model,
   * then forks), or null when the model does not fork or any run failed: the caller then runs the
   * whole batch on this thread, whose error names the row as it does with one thread.
   */
  run(model, blocks) {
    const w = this.#wasm, forks = this.#forks(model);
    if (!forks || blocks.length > forks.length + 1) return null;
    const jobs = blocks.slice(1).map((b, k) => ({ run: true, model: forks[k], in: b.tensors, n: b.count, out: 0 }));
    let own = 0;
    const statuses = this.#pool.run(jobs, () => { own = w.x.mlrt_run(model.ptr, blocks[0].tensors, blocks[0].count, w.error); });
    return own === 0 && statuses.every((st) => st === 0) ? [model.ptr, ...forks.slice(0, jobs.length)] : null;
  }

  /** Ends the workers. */
  terminate() { this.#pool.terminate(); }
}

// What one model keeps for running on several threads: a fork per worker (same weights, scratch of
// its own) and the activations between sliced layers. Freed with the model (release(), forks first).
class ModelThreads {
  #wasm;
  #forks = null;      // fork handles, or null: the model does not fork
  #slices = null;     // { ptr, rows, width }: two layers' activations for `rows` rows

  /** One fork handle per worker, or null for a model that does not fork. */
  get forks() { return this.#forks; }

  static fork(wasm, model, count) {
    const t = new ModelThreads();
    t.#wasm = wasm;
    const forks = [];
    for (let k = 0; k < count; k++) {
      const f = wasm.x.mlrt_model_fork(model, wasm.error);
      if (!f) break;
      forks.push(f);
    }
    if (forks.length === count) t.#forks = forks;
    else for (const f of forks) wasm.x.mlrt_free(f);
    return t;
  }

  /** Room for two layers' activations of n rows (the widest layer's); grown, never shrunk. */
  activations(n, layers) {
    if (!this.#slices || this.#slices.rows < n) {
      const width = Math.max(...layers.map((l) => l.outputs));
      if (this.#slices) this.#wasm.free(this.#slices.ptr);
      this.#slices = null; // (alloc may throw)
      this.#slices = { ptr: this.#wasm.alloc(2 * width * n * 4), rows: n, width };
    }
    return this.#slices;
  }

  release() {
    for (const f of this.#forks ?? []) this.#wasm.x.mlrt_free(f);
    this.#forks = null;
    if (this.#slices) this.#wasm.free(this.#slices.ptr);
    this.#slices = null;
  }
}
