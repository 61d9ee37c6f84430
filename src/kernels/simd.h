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

/* e^(x + lo) in every lane, lo a small correction (|lo| < 0.1) of x, for x <= 88 (0 below -87.3: no
 * subnormals). One copy for the GELU and the softmax (kernels/act.c). */
v4 mlrt__exp4x(v4 x, v4 lo);

#endif
