/* limits.c — machine limits for the mlrt benchmark, as a freestanding wasm32+SIMD128 module.
 *
 *   clang --target=wasm32 -nostdlib -O3 -msimd128 -Wl,--no-entry -Wl,--export-dynamic \
 *         -o build/bench/limits.wasm bench/limits.c
 *
 * (a) peak_madd*: peak f32x4.mul + f32x4.add rate, using many independent v128
 *     accumulators so that neither instruction latency nor dependency chains limit it.
 *     Each inner step does one f32x4.mul + one f32x4.add per accumulator = 4 multiply-adds.
 * (b) bw_read: read bandwidth over a 1.6 MB buffer (the size of the MLP's weights),
 *     summing f32x4 loads into independent accumulators, repeated `reps` times.
 *
 * No libc; everything the JS side needs is exported with export_name.
 */
#include <wasm_simd128.h>
#include <stdint.h>

#define EXPORT(name) __attribute__((export_name(name)))

/* --------------------------------------------------------------- (a) SIMD peak */

/* acc = acc * m + c for every accumulator. m < 1 keeps values bounded and away from
 * denormals; the compiler cannot reassociate (no fast-math), so every mul and add runs. */
#define MADD_STEP(a) a = wasm_f32x4_add(wasm_f32x4_mul(a, m), c)

static float sum_lanes(v128_t v) {
    return wasm_f32x4_extract_lane(v, 0) + wasm_f32x4_extract_lane(v, 1) +
           wasm_f32x4_extract_lane(v, 2) + wasm_f32x4_extract_lane(v, 3);
}

/* 8 accumulators: 8 independent mul→add chains. Returns a value so nothing is dead. */
EXPORT("peak_madd8")
float peak_madd8(uint32_t iters, float seed) {
    v128_t m = wasm_f32x4_splat(0.9999f), c = wasm_f32x4_splat(seed * 1e-4f);
    v128_t a0 = wasm_f32x4_splat(seed), a1 = wasm_f32x4_splat(seed + 1), a2 = wasm_f32x4_splat(seed + 2),
           a3 = wasm_f32x4_splat(seed + 3), a4 = wasm_f32x4_splat(seed + 4), a5 = wasm_f32x4_splat(seed + 5),
           a6 = wasm_f32x4_splat(seed + 6), a7 = wasm_f32x4_splat(seed + 7);
    for (uint32_t i = 0; i < iters; i++) {
        MADD_STEP(a0); MADD_STEP(a1); MADD_STEP(a2); MADD_STEP(a3);
        MADD_STEP(a4); MADD_STEP(a5); MADD_STEP(a6); MADD_STEP(a7);
    }
    v128_t s = wasm_f32x4_add(wasm_f32x4_add(wasm_f32x4_add(a0, a1), wasm_f32x4_add(a2, a3)),
                              wasm_f32x4_add(wasm_f32x4_add(a4, a5), wasm_f32x4_add(a6, a7)));
    return sum_lanes(s);
}
EXPORT("peak_madd8_per_iter") uint32_t peak_madd8_per_iter(void) { return 8 * 4; }

/* 12 accumulators: more headroom for longer mul+add latency, still fits 16 xmm registers. */
EXPORT("peak_madd12")
float peak_madd12(uint32_t iters, float seed) {
    v128_t m = wasm_f32x4_splat(0.9999f), c = wasm_f32x4_splat(seed * 1e-4f);
    v128_t a0 = wasm_f32x4_splat(seed), a1 = wasm_f32x4_splat(seed + 1), a2 = wasm_f32x4_splat(seed + 2),
           a3 = wasm_f32x4_splat(seed + 3), a4 = wasm_f32x4_splat(seed + 4), a5 = wasm_f32x4_splat(seed + 5),
           a6 = wasm_f32x4_splat(seed + 6), a7 = wasm_f32x4_splat(seed + 7), a8 = wasm_f32x4_splat(seed + 8),
           a9 = wasm_f32x4_splat(seed + 9), a10 = wasm_f32x4_splat(seed + 10), a11 = wasm_f32x4_splat(seed + 11);
    for (uint32_t i = 0; i < iters; i++) {
        MADD_STEP(a0); MADD_STEP(a1); MADD_STEP(a2); MADD_STEP(a3);
        MADD_STEP(a4); MADD_STEP(a5); MADD_STEP(a6); MADD_STEP(a7);
        MADD_STEP(a8); MADD_STEP(a9); MADD_STEP(a10); MADD_STEP(a11);
    }
    v128_t s = wasm_f32x4_add(wasm_f32x4_add(wasm_f32x4_add(a0, a1), wasm_f32x4_add(a2, a3)),
                              wasm_f32x4_add(wasm_f32x4_add(a4, a5), wasm_f32x4_add(a6, a7)));
    s = wasm_f32x4_add(s, wasm_f32x4_add(wasm_f32x4_add(a8, a9), wasm_f32x4_add(a10, a11)));
    return sum_lanes(s);
}
EXPORT("peak_madd12_per_iter") uint32_t peak_madd12_per_iter(void) { return 12 * 4; }

#if defined(__wasm_relaxed_simd__)
/* (a') The same 12 chains with one f32x4.relaxed_madd per step (fused where the engine has FMA):
 * the ceiling of mlrt-relaxed.wasm's kernels. Built as build/bench/limits-relaxed.wasm (clang 19). */
#define FMA_STEP(a) a = wasm_f32x4_relaxed_madd(a, m, c)
EXPORT("peak_fma12")
float peak_fma12(uint32_t iters, float seed) {
    v128_t m = wasm_f32x4_splat(0.9999f), c = wasm_f32x4_splat(seed * 1e-4f);
    v128_t a0 = wasm_f32x4_splat(seed), a1 = wasm_f32x4_splat(seed + 1), a2 = wasm_f32x4_splat(seed + 2),
           a3 = wasm_f32x4_splat(seed + 3), a4 = wasm_f32x4_splat(seed + 4), a5 = wasm_f32x4_splat(seed + 5),
           a6 = wasm_f32x4_splat(seed + 6), a7 = wasm_f32x4_splat(seed + 7), a8 = wasm_f32x4_splat(seed + 8),
           a9 = wasm_f32x4_splat(seed + 9), a10 = wasm_f32x4_splat(seed + 10), a11 = wasm_f32x4_splat(seed + 11);
    for (uint32_t i = 0; i < iters; i++) {
        FMA_STEP(a0); FMA_STEP(a1); FMA_STEP(a2); FMA_STEP(a3);
        FMA_STEP(a4); FMA_STEP(a5); FMA_STEP(a6); FMA_STEP(a7);
        FMA_STEP(a8); FMA_STEP(a9); FMA_STEP(a10); FMA_STEP(a11);
    }
    v128_t s = wasm_f32x4_add(wasm_f32x4_add(wasm_f32x4_add(a0, a1), wasm_f32x4_add(a2, a3)),
                              wasm_f32x4_add(wasm_f32x4_add(a4, a5), wasm_f32x4_add(a6, a7)));
    s = wasm_f32x4_add(s, wasm_f32x4_add(wasm_f32x4_add(a8, a9), wasm_f32x4_add(a10, a11)));
    return sum_lanes(s);
}
EXPORT("peak_fma12_per_iter") uint32_t peak_fma12_per_iter(void) { return 12 * 4; }
#endif

/* ---------------------------------------------------------- (b) read bandwidth */

/* 784*512 + 512 + 512*10 + 10 = 407,050 floats = all MLP weights (1,628,200 bytes), rounded up to 64 B. */
#define BW_FLOATS ((784 * 512 + 512 + 512 * 10 + 10 + 15) & ~15)
static float bw_buf[BW_FLOATS] __attribute__((aligned(64)));

EXPORT("bw_bytes") uint32_t bw_bytes(void) { return (uint32_t)sizeof(bw_buf); }

/* Touch every page with non-zero data so reads hit real memory, not a shared zero page. */
EXPORT("bw_init")
void bw_init(float seed) {
    for (uint32_t i = 0; i < BW_FLOATS; i++) bw_buf[i] = seed + (float)(i & 1023) * 1e-3f;
}

EXPORT("bw_read")
float bw_read(uint32_t reps) {
    v128_t s0 = wasm_f32x4_splat(0), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0, s7 = s0;
    for (uint32_t r = 0; r < reps; r++) {
        const float *p = bw_buf;
        for (uint32_t i = 0; i < BW_FLOATS; i += 32, p += 32) {
            s0 = wasm_f32x4_add(s0, wasm_v128_load(p + 0));
            s1 = wasm_f32x4_add(s1, wasm_v128_load(p + 4));
            s2 = wasm_f32x4_add(s2, wasm_v128_load(p + 8));
            s3 = wasm_f32x4_add(s3, wasm_v128_load(p + 12));
            s4 = wasm_f32x4_add(s4, wasm_v128_load(p + 16));
            s5 = wasm_f32x4_add(s5, wasm_v128_load(p + 20));
            s6 = wasm_f32x4_add(s6, wasm_v128_load(p + 24));
            s7 = wasm_f32x4_add(s7, wasm_v128_load(p + 28));
        }
    }
    v128_t s = wasm_f32x4_add(wasm_f32x4_add(wasm_f32x4_add(s0, s1), wasm_f32x4_add(s2, s3)),
                              wasm_f32x4_add(wasm_f32x4_add(s4, s5), wasm_f32x4_add(s6, s7)));
    return sum_lanes(s);
}
