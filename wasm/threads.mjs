// threads.mjs — mlrt's worker pool: workers that instantiate the threaded build (mlrt-threads.wasm)
// over the runtime's shared memory, and run predictBatch rows on forks of a model (same weights,
// their own scratch). Imported by mlrt.mjs only when createRuntime({ threads }) asks for more than one.
//
// One job at a time per worker, through a control block of 16 Int32 words per worker in wasm memory:
//   [SEQ] job number, bumped by the main thread to start a job   [DONE] the last job finished
//   [MODEL] [IN] [N] [OUT]  the job: a fork handle, rows, pointers  [STATUS] the call's status
//   [SLICE] 1: outputs [O0, O1) of layer [LAYER] (mlrt_wasm_layer_slice); 0: whole rows (mlrt_wasm_predict)
//   [ASLEEP] 1 while the worker sleeps in Atomics.wait: slices (a few µs of work) are not worth
//            a wake-up; the main thread wakes it (awake()) to spin for the next call instead
// The main thread runs its own share of the rows meanwhile, then waits for every worker's DONE.
// Workers block in Atomics.wait between jobs; in Node they are unref'd, so an idle pool never keeps
// the process alive, and terminate() ends them.

const SEQ = 0, DONE = 1, MODEL = 2, IN = 3, N = 4, OUT = 5, STATUS = 6, SLICE = 7, LAYER = 8, O0 = 9, O1 = 10, ASLEEP = 11;
const WORDS = 16;
// Loads of a control word before a thread sleeps in Atomics.wait (roughly 0.1-0.3 ms): a sleeping
// thread takes far longer than that to wake on some machines (this 2-core VM among them).
const SPIN = 200000;
const STACK_BYTES = 64 * 1024;

/**
 * The threaded build's imports over `memory`: growth and large copies, which Emscripten's libc asks
 * of JS. Self-contained: the worker program below embeds its source, so both sides share it.
 */
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

// The worker's whole program, an ES module for Node (a data: URL) and browsers (a blob URL) alike.
const WORKER_SOURCE = `
const SEQ = ${SEQ}, DONE = ${DONE}, MODEL = ${MODEL}, IN = ${IN}, N = ${N}, OUT = ${OUT}, STATUS = ${STATUS};
const SLICE = ${SLICE}, LAYER = ${LAYER}, O0 = ${O0}, O1 = ${O1}, ASLEEP = ${ASLEEP};
const port = typeof self !== 'undefined' && typeof self.postMessage === 'function'
  ? { on: (f) => { self.onmessage = (e) => f(e.data); }, post: (m) => self.postMessage(m) }
  : await import('node:worker_threads').then(({ parentPort: p }) => ({ on: (f) => p.once('message', f), post: (m) => p.postMessage(m) }));
const threadImports = ${threadImports.toString()};
port.on(({ module, memory, stack, ctrl }) => {
  const x = new WebAssembly.Instance(module, threadImports(module, memory)).exports;
  x.stackRestore(stack); // this thread's own stack, allocated by the main thread
  const w = new Int32Array(memory.buffer, ctrl, ${WORDS});
  let seen = Atomics.load(w, SEQ); // read before 'ready': the first job may follow it at once
  port.post('ready');
  for (;;) {
    // spin a little before sleeping: back-to-back batches then skip the futex wake-up
    for (let k = 0; k < ${SPIN} && Atomics.load(w, SEQ) === seen; k++);
    if (Atomics.load(w, SEQ) === seen) {
      Atomics.store(w, ASLEEP, 1);
      Atomics.wait(w, SEQ, seen);
      Atomics.store(w, ASLEEP, 0);
      if (Atomics.load(w, SEQ) === seen) continue; // woken without a job: spin for the next one
    }
    seen = Atomics.load(w, SEQ);
    let status;
    try {
      const model = Atomics.load(w, MODEL), input = Atomics.load(w, IN), n = Atomics.load(w, N), out = Atomics.load(w, OUT);
      status = Atomics.load(w, SLICE)
        ? x.mlrt_wasm_layer_slice(model, Atomics.load(w, LAYER), input, n, out, Atomics.load(w, O0), Atomics.load(w, O1))
        : x.mlrt_wasm_predict(model, input, n, out);
    } catch {
      status = -1; // a trap: the job still ends (the main thread is waiting), and it reruns the rows itself
    }
    Atomics.store(w, STATUS, status);
    Atomics.store(w, DONE, seen);
    Atomics.notify(w, DONE);
  }
});
`;

async function spawn() {
  if (typeof process !== 'undefined' && process.versions?.node) {
    const NODE_WT = 'node:worker_threads'; // a name bundlers do not follow
    const { Worker } = await import(/* @vite-ignore */ /* webpackIgnore: true */ NODE_WT);
    const w = new Worker(new URL(`data:text/javascript,${encodeURIComponent(WORKER_SOURCE)}`));
    w.unref();
    return {
      post: (m) => w.postMessage(m),
      once: (f) => w.once('message', f),
      onError: (f) => w.once('error', f),
      terminate: () => w.terminate(),
    };
  }
  const url = URL.createObjectURL(new Blob([WORKER_SOURCE], { type: 'text/javascript' }));
  const w = new Worker(url, { type: 'module' });
  URL.revokeObjectURL(url);
  return {
    post: (m) => w.postMessage(m),
    once: (f) => { w.onmessage = (e) => f(e.data); },
    onError: (f) => { w.onerror = (e) => f(new Error(e.message)); },
    terminate: () => w.terminate(),
  };
}

/** Why this engine cannot run workers over shared memory, or null when it can. */
export function threadsUnavailable() {
  if (typeof SharedArrayBuffer !== 'function' || typeof Atomics !== 'object') return 'no SharedArrayBuffer';
  if (globalThis.crossOriginIsolated === false) return 'the page is not cross-origin isolated (COOP/COEP)';
  const node = typeof process !== 'undefined' && process.versions?.node;
  if (!node && typeof Worker !== 'function') return 'no Worker';
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

export class Pool {
  #workers = [];
  #memory;
  #ctrl;      // byte offset of the control blocks
  #seq = 0;
  #canWait;   // Atomics.wait is refused on a browser's main thread: spin there instead

  /** Starts `count` workers; `alloc(bytes)` is the runtime's wasm allocator (for stacks and control). */
  static async start(module, memory, count, alloc) {
    const pool = new Pool();
    pool.#memory = memory;
    pool.#ctrl = alloc(count * WORDS * 4);
    new Int32Array(memory.buffer, pool.#ctrl, count * WORDS).fill(0);
    try {
      await Promise.all(Array.from({ length: count }, async (_, k) => {
        const w = await spawn();
        pool.#workers.push(w);
        const stack = alloc(STACK_BYTES) + STACK_BYTES;
        await new Promise((resolve, reject) => {
          w.once((m) => (m === 'ready' ? resolve() : reject(new Error(`mlrt worker: ${m}`))));
          w.onError(reject);
          w.post({ module, memory, stack, ctrl: pool.#ctrl + k * WORDS * 4 });
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

  /**
   * Runs jobs[k] = { model, in, n, out } (rows), or { slice: true, model, layer, in, n, out, o0, o1 }
   * (a layer's outputs), on worker k while `own()` runs on this thread; returns the workers'
   * statuses (0: OK).
   */
  run(jobs, own) {
    const seq = ++this.#seq;
    const words = new Int32Array(this.#memory.buffer, this.#ctrl, this.#workers.length * WORDS);
    jobs.forEach((j, k) => {
      const b = k * WORDS;
      words[b + MODEL] = j.model; words[b + IN] = j.in; words[b + N] = j.n; words[b + OUT] = j.out;
      words[b + SLICE] = j.slice ? 1 : 0;
      if (j.slice) { words[b + LAYER] = j.layer; words[b + O0] = j.o0; words[b + O1] = j.o1; }
      Atomics.store(words, b + SEQ, seq);
      Atomics.notify(words, b + SEQ);
    });
    try {
      own();
    } finally {
      for (let k = 0; k < jobs.length; k++) { // every job ends before the rows' memory is freed
        const b = k * WORDS;
        for (let k = 0; k < SPIN && Atomics.load(words, b + DONE) !== seq; k++);
        for (let d; (d = Atomics.load(words, b + DONE)) !== seq;) if (this.#canWait) Atomics.wait(words, b + DONE, d, 1000);
      }
    }
    return jobs.map((_, k) => words[k * WORDS + STATUS]);
  }

  /** How many workers sleep in Atomics.wait. */
  sleeping() {
    const words = new Int32Array(this.#memory.buffer, this.#ctrl, this.#workers.length * WORDS);
    return this.#workers.reduce((n, _, k) => n + Atomics.load(words, k * WORDS + ASLEEP), 0);
  }

  /** True when every worker is awake (spinning or working); wakes the sleeping ones otherwise. */
  awake() {
    const words = new Int32Array(this.#memory.buffer, this.#ctrl, this.#workers.length * WORDS);
    let all = true;
    for (let k = 0; k < this.#workers.length; k++) {
      if (Atomics.load(words, k * WORDS + ASLEEP)) { all = false; Atomics.notify(words, k * WORDS + SEQ); }
    }
    return all;
  }

  terminate() {
    for (const w of this.#workers) w.terminate();
    this.#workers = [];
  }
}
