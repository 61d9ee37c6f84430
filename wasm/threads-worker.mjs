// threads-worker.mjs — the program of each mlrt worker thread, spawned by threads.mjs' pool (a
// module worker in browsers, a worker_threads Worker in Node).
//
// The first message gives the worker the threaded build's module, the shared memory, its own stack
// and thread-local block, and its control block (threads.mjs describes the words). The worker then
// instantiates the module over that memory and, forever, waits for a job, runs it on a fork of a
// model (whole rows, one layer's slice of outputs, or a run of tensors), and posts its status in the control block.

import { CONTROL as C, JOB, SPIN, threadImports } from './threads.mjs';

/** Starts serving jobs; `ready()` tells the pool the worker is about to wait for the first one. */
function serve({ module, memory, stack, tls, ctrl }, ready) {
  const x = /** @type {Record<string, (...args: number[]) => number>} */ (new WebAssembly.Instance(module, threadImports(module, memory)).exports);
  x.stackRestore(stack); // this thread's own stack, allocated by the main thread
  if (tls) x.__wasm_init_tls(tls);
  const w = new Int32Array(memory.buffer, ctrl, C.WORDS);
  let seen = Atomics.load(w, C.SEQ); // read before 'ready': the first job may follow it at once
  ready();
  for (;;) {
    // spin a little before sleeping: back-to-back batches then skip the futex wake-up
    for (let k = 0; k < SPIN && Atomics.load(w, C.SEQ) === seen; k++);
    if (Atomics.load(w, C.SEQ) === seen) {
      Atomics.store(w, C.ASLEEP, 1);
      Atomics.wait(w, C.SEQ, seen);
      Atomics.store(w, C.ASLEEP, 0);
      if (Atomics.load(w, C.SEQ) === seen) continue; // woken without a job: spin for the next one
    }
    seen = Atomics.load(w, C.SEQ);
    Atomics.store(w, C.STATUS, runJob(x, w));
    Atomics.store(w, C.DONE, seen);
    Atomics.notify(w, C.DONE);
  }
}

// The job in the control block; its status (0: OK). Errors are not kept (a NULL mlrt_error): the
// main thread runs refused rows again itself, and its error names them.
function runJob(x, w) {
  try {
    const model = Atomics.load(w, C.MODEL), input = Atomics.load(w, C.IN), n = Atomics.load(w, C.N), out = Atomics.load(w, C.OUT);
    const kind = Atomics.load(w, C.KIND);
    return kind === JOB.SLICE ? x.mlrt_layer_slice(model, Atomics.load(w, C.LAYER), input, out, n, Atomics.load(w, C.O0), Atomics.load(w, C.O1), 0)
      : kind === JOB.RUN ? x.mlrt_run(model, input, n, 0)
        : x.mlrt_predict_batch(model, input, n, out, 0);
  } catch {
    return -1; // a trap: the job still ends (the main thread is waiting)
  }
}

if (typeof self !== 'undefined' && typeof self.postMessage === 'function') {
  self.onmessage = (e) => serve(e.data, () => self.postMessage('ready'));
} else {
  const NODE_WT = 'node:worker_threads'; // a name bundlers do not follow
  import(/* @vite-ignore */ /* webpackIgnore: true */ NODE_WT).then(({ parentPort }) => {
    parentPort.once('message', (m) => serve(m, () => parentPort.postMessage('ready')));
  });
}
