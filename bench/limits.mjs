// Machine limits from build/bench/limits.wasm (see bench/limits.c): peak SIMD128
// multiply-add rate and read bandwidth over a weights-sized (1.6 MB) buffer.
import { readFileSync, existsSync, mkdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { MACS_PER_SAMPLE } from './weights.mjs';

export const REPO = fileURLToPath(new URL('../', import.meta.url));
export const LIMITS_WASM = path.join(REPO, 'build/bench/limits.wasm');
// The fused multiply-add peak (f32x4.relaxed_madd), from `make build/bench/limits-relaxed.wasm` (clang 19).
export const LIMITS_RELAXED_WASM = path.join(REPO, 'build/bench/limits-relaxed.wasm');
// Exactly the command the Makefile uses (run from the repository root).
export const LIMITS_CMD = ['clang', ['--target=wasm32', '-nostdlib', '-O3', '-msimd128', '-Wl,--no-entry',
  '-Wl,--export-dynamic', '-o', 'build/bench/limits.wasm', 'bench/limits.c']];

/** Make sure limits.wasm exists; build it with clang if possible. Returns null or a reason. */
export function ensureLimitsWasm() {
  if (existsSync(LIMITS_WASM)) return null;
  const probe = spawnSync(LIMITS_CMD[0], ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) return 'build/bench/limits.wasm missing and clang not found';
  mkdirSync(path.dirname(LIMITS_WASM), { recursive: true });
  const r = spawnSync(LIMITS_CMD[0], LIMITS_CMD[1], { cwd: REPO, encoding: 'utf8' });
  if (r.status !== 0 || !existsSync(LIMITS_WASM)) return `clang failed: ${(r.stderr || r.error || '').toString().trim()}`;
  return null;
}

const now = () => performance.now();

/** Time fn(n) with n grown until one call takes ≥ targetMs; then best (min) of `reps` calls. */
function bestTime(fn, targetMs, reps) {
  let n = 1;
  for (;;) {
    const t0 = now(); fn(n); const el = now() - t0;
    if (el >= targetMs) break;
    n = Math.max(n * 2, Math.ceil(n * (targetMs / Math.max(el, 0.01)) * 1.1));
  }
  let best = Infinity;
  for (let r = 0; r < reps; r++) {
    const t0 = now(); fn(n); best = Math.min(best, now() - t0);
  }
  return { n, ms: best };
}

export async function measureLimits({ targetMs = 60, reps = 7 } = {}) {
  const { instance } = await WebAssembly.instantiate(readFileSync(LIMITS_WASM));
  const e = instance.exports;
  let sink = 0;

  // (a) peak multiply-add rate: best of the 8- and 12-accumulator kernels.
  let peak = 0, peakKernel = '';
  for (const k of ['8', '12']) {
    const f = e[`peak_madd${k}`], per = e[`peak_madd${k}_per_iter`]();
    for (let w = 0; w < 5; w++) sink += f(1000, 1.5); // let the tiering settle
    const { n, ms } = bestTime((n) => { sink += f(n, 1.5); }, targetMs, reps);
    const rate = (n * per) / (ms / 1000); // multiply-adds per second
    if (rate > peak) { peak = rate; peakKernel = `${k} accumulators`; }
  }

  // (b) read bandwidth over the 1.6 MB buffer.
  e.bw_init(1.25);
  const bytes = e.bw_bytes();
  for (let w = 0; w < 5; w++) sink += e.bw_read(2);
  const { n, ms } = bestTime((n) => { sink += e.bw_read(n); }, targetMs, reps);
  const bw = (n * bytes) / (ms / 1000); // bytes per second

  // (a') the fused peak, where the relaxed module exists and this engine runs it
  let peakFma = null;
  if (existsSync(LIMITS_RELAXED_WASM)) {
    try {
      const r = (await WebAssembly.instantiate(readFileSync(LIMITS_RELAXED_WASM))).instance.exports;
      for (let w = 0; w < 5; w++) sink += r.peak_fma12(1000, 1.5);
      const { n: nf, ms: msf } = bestTime((k) => { sink += r.peak_fma12(k, 1.5); }, targetMs, reps);
      peakFma = (nf * r.peak_fma12_per_iter()) / (msf / 1000);
    } catch { /* no relaxed SIMD in this engine: no fused peak */ }
  }

  const weightBytes = 4 * (MACS_PER_SAMPLE + 512 + 10);
  return {
    peakFmaPerSec: peakFma,
    fmaPeakSamplesPerSec: peakFma && peakFma / MACS_PER_SAMPLE,
    peakMaddPerSec: peak,
    peakKernel,
    simdUsPerSample: (MACS_PER_SAMPLE / peak) * 1e6, // compute floor for one sample
    simdPeakSamplesPerSec: peak / MACS_PER_SAMPLE,
    readBytesPerSec: bw,
    bufferBytes: bytes,
    weightBytes,
    streamUs: (weightBytes / bw) * 1e6, // bandwidth floor: stream all weights once
    sink,
  };
}
