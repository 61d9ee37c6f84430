/* kernels/simd.h — the f32 vectors of the dense and conv kernels, and their one multiply-add.
 *
 * GCC/Clang vector extensions: SIMD128 under -msimd128, SSE natively, plain scalar code in
 * the scalar wasm build. madd(a, x, y) is a + x * y:
 *   - rounded twice (multiply, then add) in every build but one: -ffp-contract=off keeps the
 *     compiler from fusing it, so the SIMD128, scalar and native builds agree bit for bit;
 *   - f32x4.relaxed_madd in the relaxed-SIMD build (mlrt-relaxed.wasm), which engines with FMA
 *     run as one fused, once-rounded instruction: results differ in the last bits. */
#ifndef MLRT__KERNELS_SIMD_H
#define MLRT__KERNELS_SIMD_H

typedef float v4 __attribute__((vector_size(16)));
typedef float v4u __attribute__((vector_size(16), aligned(4))); /* unaligned access */

static inline v4 ld(const float *p) { return *(const v4u *)p; }
static inline void st(float *p, v4 v) { *(v4u *)p = v; }
static inline v4 splat(float x) { return (v4){x, x, x, x}; }

#if defined(__wasm_relaxed_simd__)
#include <wasm_simd128.h>
static inline v4 madd(v4 a, v4 x, v4 y) { return (v4)wasm_f32x4_relaxed_madd((v128_t)x, (v128_t)y, (v128_t)a); }
#else
static inline v4 madd(v4 a, v4 x, v4 y) { return a + x * y; }
#endif

/* Before a loop that must stay a loop (short, or not hot): no unrolling, no vectorizing. */
#if defined(__clang__)
#define MLRT__ROLLED _Pragma("clang loop vectorize(disable) unroll(disable)")
#else
#define MLRT__ROLLED
#endif

/* Lanes as 32-bit integers (masks of comparisons, bit patterns). */
typedef int32_t i4 __attribute__((vector_size(16)));
/* Lanes of a where mask is all ones, of b elsewhere. */
static inline v4 select4(i4 mask, v4 a, v4 b) { return (v4)((mask & (i4)a) | (~mask & (i4)b)); }

/* x = k ln2 + r, |r| <= ln2 / 2, e^r = 1 + r + r^2 P(r), P of degree 4 fitted to it
 * (tools/fit/encoder_fits.py), times 2^k from the exponent bits. Plain multiplies and adds, never
 * fused: the same bits in every build (the relaxed one too); within 2 ulp of the true value
 * (tests/c/test_encoder_kernels.c sweeps it). e^(x + lo) for x <= 88 (0 below -87.3: no subnormals), lo a
 * small correction (|lo| < 0.1) of x. Inlined into the two loops that run it (the GELU's and the softmax's)
 * rather than called once per four lanes. */
__attribute__((always_inline)) static inline v4 mlrt__exp4x(v4 x, v4 lo) {
    const v4 magic = splat(0x1.8p23f);      /* adding it rounds to an integer, which lands in the low bits */
    i4 live = x > splat(-87.3f);
    v4 xc = select4(live, x, splat(-87.3f));
    v4 t = xc * splat(1.44269504f) + magic, k = t - magic;
    v4 r = ((xc - k * splat(0.693359375f)) - k * splat(-2.12194440e-4f)) + lo; /* ln2 = 0.693359375 - 2.12194440e-4 */
    v4 p = splat(1.389393001e-03f);
    p = p * r + splat(8.363724686e-03f);
    p = p * r + splat(4.166695476e-02f);
    p = p * r + splat(1.666657329e-01f);
    p = p * r + splat(5.000000000e-01f);
    p = (splat(1.0f) + r) + (r * r) * p;
    i4 e = ((i4)t - 0x4b400000 + 127) << 23; /* 2^k, k in [-126, 127] */
    return (v4)((i4)(p * (v4)e) & live);
}

#endif
