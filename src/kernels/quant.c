/* kernels/quant.c — dense layers whose weights stay quantized in memory (.apr v2 APR_Q8 / APR_Q4).
 *
 * Formats in the file (flattened [out][in] tensor, element e):
 *   APR_Q8  f32 scale, then one int8 per element:           w[e] = q[e] * scale
 *   APR_Q4  per 32 elements: f16 scale + 16 bytes; element e of a block is the low nibble of byte
 *           e/2 when e is even, the high nibble when odd:     w[e] = (nibble - 8) * scale[e / 32]
 *
 * At run time each activation row is quantized once per layer to int16 (symmetric:
 * xs = max|x| / 32767, xq = round(x / xs)), and every output is an integer dot product
 * (i32x4.dot_i16x8_s: 8 multiply-adds per instruction) scaled once (scales multiplied in double):
 *   Q8       y[o] = (qs * xs) * sum_g float(sum_{i in g} q[o][i] xq[i])           groups of <= 256 inputs
 *   Q4       y[o] = xs * sum_g scale[o][g] * float(sum_{i in g} (n[o][i] - 8) xq[i])
 *                 = xs * sum_g scale[o][g] * float(sum n xq - 8 * xsum[g])       groups of gcd(in, 32)
 * The groups bound the i32 sums (no overflow for any `in`) and, for Q4, carry the block scale:
 * a file block of 32 elements may straddle two rows when in % 32 != 0, but a run of gcd(in, 32)
 * elements starting at a row offset that is a multiple of it never does.
 * Weights are packed in panels of 8 outputs like the f32 kernels (kernels/dense.c), interleaved in
 * bands of up to 4 panels (32 outputs) so that one pointer walks a band (kernels.h, mlrt__q*_at):
 *   Q8  [band][pair k][output j][t]   int8, inputs 2k+t                          (16 bytes per pair and panel)
 *   Q4  [band][quad k][output j][t]   byte: input 4k+t low nibble, 4k+2+t high   (16 bytes per quad and panel)
 * Q4 with in % 4 != 0 keeps the file's blocks as they are (MLRT__WQ_Q4_ROWS): a plain loop, slower.
 * Zero inputs add exactly 0 to integer sums: a row alone walks only its runs of nonzero input
 * pairs (Q8) or its groups holding a nonzero input (Q4) — blank image borders, ReLU zeros.
 * Q8 with int16 rows, a batch (q8_forward_rows): the rows with at least half their pairs nonzero
 * (encoder activations) go through q8_rows4 four at a time, over every pair: each weight is loaded
 * and widened once for four rows (a row alone needs one widening load per two multiply-add
 * instructions), and a band's weights stay in cache from one block of rows to the next. A row's
 * i32 sums are those of fixed groups of MLRT__Q8_GROUP inputs either way, added to its f32 sum
 * group after group: a row has the same bits alone as in any batch.
 * The scalar build (no -msimd128) runs the same integer sums in plain C; since integer sums are
 * exact and the f32 steps are the same, both builds give the same bits.
 *
 * The relaxed-SIMD build (mlrt-relaxed.wasm) runs Q8 on i16x8.relaxed_dot_i8x16_i7x16_s: 16
 * multiply-adds of int8 weights by 7-bit activations per instruction (clang 19's builtin for the
 * i32x4 ..._add_s form drops its first operand, so it is not used). Its Q8 rows are quantized
 * to 7 bits, unsigned, with a zero point (lo <= 0 <= hi the row's range, xs = (hi - lo) / 127):
 *   Q8 relaxed  y[o] = qs * (xs * sum_g float(sum_{i in g} q[o][i] xq[i]) + lo * qsum[o])    groups of 65536
 * where qsum[o] = sum_i q[o][i] is kept from the load. Its Q8 panels hold input quads,
 * [band][quad k][output j][t] (16 bytes = 4 outputs x 4 inputs). 7 bits lose precision that 16 did
 * not: its Q8 results are not the other builds' (README, Builds). Q4 is the same in all. */
#include "kernels.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#endif

#define KERNEL __attribute__((noinline)) static
#define INLINE __attribute__((always_inline)) static inline
#if defined(__clang__)
#define NO_VECTORIZE _Pragma("clang loop vectorize(disable) unroll(disable)") /* short tails: keep them small */
#else
#define NO_VECTORIZE
#endif
#define Q4_BLOCK 32

/* ------------------------------------------------------------ activations to int16 */

/* xq[i] = round(x[i] * 32767 / max|x|) for i < n, 0 up to n_q. Returns the scale max|x| / 32767
 * (0 for an all-zero row), or NaN when the row holds a NaN or an infinity. */
KERNEL double quantize_row(const float *x, size_t n, size_t n_q, int16_t *xq) {
    float amax = 0.0f;
    bool bad = false;
    size_t i = 0;
#ifdef __wasm_simd128__
    v128_t m = wasm_f32x4_splat(0.0f), nan = wasm_i32x4_splat(0);
    for (; i + 4 <= n; i += 4) {
        v128_t v = wasm_v128_load(x + i);
        m = wasm_f32x4_pmax(m, wasm_f32x4_abs(v));
        nan = wasm_v128_or(nan, wasm_f32x4_ne(v, v));
    }
    bad = wasm_v128_any_true(nan);
    float lanes[4];
    wasm_v128_store(lanes, m);
    for (int k = 0; k < 4; k++) amax = lanes[k] > amax ? lanes[k] : amax;
#endif
NO_VECTORIZE
    for (; i < n; i++) {
        float a = fabsf(x[i]);
        bad |= x[i] != x[i];
        amax = a > amax ? a : amax;
    }
    if (bad || amax > 3.40282347e38f) { memset(xq, 0, n_q * sizeof *xq); return NAN; }
    i = 0;
    const float pre = amax < 0x1p-96f ? 0x1p64f : 1.0f; /* else 32767 / amax overflows f32; x * pre is exact */
    const float inv = amax > 0.0f ? 32767.0f / (amax * pre) : 0.0f;
#ifdef __wasm_simd128__
    const v128_t vinv = wasm_f32x4_splat(inv), vpre = wasm_f32x4_splat(pre);
    for (; i + 8 <= n; i += 8) { /* f32x4.nearest rounds half to even, as rintf does */
        v128_t a = wasm_f32x4_mul(wasm_f32x4_mul(wasm_v128_load(x + i), vpre), vinv);
        v128_t b = wasm_f32x4_mul(wasm_f32x4_mul(wasm_v128_load(x + i + 4), vpre), vinv);
        a = wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_nearest(a));
        b = wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_nearest(b));
        wasm_v128_store(xq + i, wasm_i16x8_narrow_i32x4(a, b));
    }
#endif
NO_VECTORIZE
    for (; i < n; i++) xq[i] = (int16_t)rintf(x[i] * pre * inv); /* |x * pre * inv| <= 32767 */
    for (; i < n_q; i++) xq[i] = 0;
    return (double)amax / 32767.0;
}

#if MLRT__Q8_K == 4
/* Relaxed build, Q8 layers: xq[i] = min(127, round((x[i] - lo) / xs)) for i < n, 0 up to n_q, where
 * lo = min(0, min x), hi = max(0, max x), xs = (hi - lo) / 127. 7 bits because engines may read the
 * top bit of relaxed_dot's second operand as a sign or not; x = 0 maps to 0 when lo = 0 (pixels, ReLU
 * outputs), so their zero runs are skipped. Returns xs (0 for an all-zero row) and *lo, or NaN when
 * the row holds a NaN or an infinity. */
KERNEL double quantize_row_u7(const float *x, size_t n, size_t n_q, uint8_t *xq, double *lo_out) {
    float lo = 0.0f, hi = 0.0f;
    v128_t vlo = wasm_f32x4_splat(0.0f), vhi = vlo, nan = wasm_i32x4_splat(0);
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        v128_t v = wasm_v128_load(x + i);
        vlo = wasm_f32x4_pmin(vlo, v), vhi = wasm_f32x4_pmax(vhi, v);
        nan = wasm_v128_or(nan, wasm_f32x4_ne(v, v));
    }
    bool bad = wasm_v128_any_true(nan);
    float l4[4], h4[4];
    wasm_v128_store(l4, vlo), wasm_v128_store(h4, vhi);
    for (int k = 0; k < 4; k++) lo = l4[k] < lo ? l4[k] : lo, hi = h4[k] > hi ? h4[k] : hi;
NO_VECTORIZE
    for (; i < n; i++) {
        bad |= x[i] != x[i];
        lo = x[i] < lo ? x[i] : lo, hi = x[i] > hi ? x[i] : hi;
    }
    *lo_out = lo;
    const double range = (double)hi - lo; /* |x| <= range for every x */
    if (bad || range > 3.40282347e38 * 2 || range == 0.0) { /* a NaN, an infinity, or all zero */
        memset(xq, 0, n_q);
        return bad || range != 0.0 ? NAN : 0.0;
    }
    /* pre, a power of two, keeps x * pre - lo * pre and 127 / (range * pre) finite in f32. Adding
     * 2^23 rounds a value in [0, 2^22) to an integer, half to even as rintf does, and leaves that
     * integer in the low mantissa bits: no f32x4.nearest or trunc_sat, which engines expand. */
    const float pre = range > 0x1p126 ? 0x1p-2f : range < 0x1p-96 ? 0x1p64f : 1.0f, lop = lo * pre;
    const float inv = (float)(127.0 / (range * pre));
    const v128_t vinv = wasm_f32x4_splat(inv), vpre = wasm_f32x4_splat(pre), vlop = wasm_f32x4_splat(lop);
    const v128_t magic = wasm_f32x4_splat(0x1p23f), top = wasm_i32x4_splat(0x4b000000 + 127); /* 127: guards the top bit */
#define U7(k) wasm_i32x4_sub(wasm_i32x4_min(wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_sub(                   \
                  wasm_f32x4_mul(wasm_v128_load(x + i + 4 * (k)), vpre), vlop), vinv), magic), top), magic)
    for (i = 0; i + 16 <= n; i += 16)
        wasm_v128_store(xq + i, wasm_u8x16_narrow_i16x8(wasm_i16x8_narrow_i32x4(U7(0), U7(1)), wasm_i16x8_narrow_i32x4(U7(2), U7(3))));
#undef U7
NO_VECTORIZE
    for (; i < n; i++) {
        float q = rintf((x[i] * pre - lop) * inv);
        xq[i] = (uint8_t)(q < 127.0f ? q : 127.0f);
    }
    for (; i < n_q; i++) xq[i] = 0;
    return range / 127.0;
}
typedef uint8_t q8_act; /* a Q8 row's quantized activations */
#else
typedef int16_t q8_act;
#endif

/* ------------------------------------------------------------ integer kernels, one row */

/* Q8, NP panels of 8 outputs starting at w, `stride` bytes per input pair (16 x the band's panels),
 * over the row's runs of nonzero input pairs only (zero pairs add exactly 0 to integer sums):
 * run r is pairs [runs[2r], runs[2r+1] & ~RUN_FLUSH); the i32 sums go to acc[p * 8 + j] as floats
 * after each run marked RUN_FLUSH (at most MLRT__Q8_GROUP / 2 pairs apart). */
#define RUN_FLUSH 0x80000000u
#if MLRT__Q8_K == 4
/* Relaxed build: `stride` bytes per input quad (32 x the band's panels). */
INLINE void q8_panels(const uint8_t *w, size_t stride, const uint8_t *xq, const uint32_t *runs, size_t n_runs,
                      float *acc, const int NP) {
    const v128_t ones = wasm_i16x8_splat(1);
    v128_t a[8];
    for (int j = 0; j < 2 * NP; j++) a[j] = wasm_i32x4_splat(0);
    for (size_t r = 0; r < n_runs; r++) {
        const uint8_t *p = w + runs[2 * r] * stride, *end = w + (runs[2 * r + 1] & ~RUN_FLUSH) * stride;
        const uint8_t *x = xq + 4 * runs[2 * r];
        /* hot loop: one input quad, splat against NP panels: per 4 outputs, one relaxed dot into
         * i16 pairs (|q x + q x| <= 2 x 128 x 127 < 2^15: never saturates) widened and added to i32 */
        for (; p < end; p += stride, x += 4) {
            const v128_t xv = wasm_v128_load32_splat(x);
            for (int j = 0; j < 2 * NP; j++)
                a[j] = wasm_i32x4_add(a[j], wasm_i32x4_dot_i16x8(wasm_i16x8_relaxed_dot_i8x16_i7x16(wasm_v128_load(p + 16 * j), xv), ones));
        }
        if (!(runs[2 * r + 1] & RUN_FLUSH)) continue;
        for (int j = 0; j < 2 * NP; j++) {
            wasm_v128_store(acc + 4 * j, wasm_f32x4_add(wasm_v128_load(acc + 4 * j), wasm_f32x4_convert_i32x4(a[j])));
            a[j] = wasm_i32x4_splat(0);
        }
    }
}
#elif defined(__wasm_simd128__)
INLINE void q8_panels(const uint8_t *w, size_t stride, const int16_t *xq, const uint32_t *runs, size_t n_runs,
                      float *acc, const int NP) {
    v128_t a[8];
    for (int j = 0; j < 2 * NP; j++) a[j] = wasm_i32x4_splat(0);
    for (size_t r = 0; r < n_runs; r++) {
        const uint8_t *p = w + runs[2 * r] * stride, *end = w + (runs[2 * r + 1] & ~RUN_FLUSH) * stride;
        const int16_t *x = xq + 2 * runs[2 * r];
        /* hot loop: two input pairs per turn, each splat against NP panels: 2 widening loads + 2 dots per panel */
        for (; p + stride < end; p += 2 * stride, x += 4) {
            v128_t x0 = wasm_v128_load32_splat(x), x1 = wasm_v128_load32_splat(x + 2);
            for (int j = 0; j < NP; j++) {
                const uint8_t *q = p + 16 * j, *q1 = q + stride;
                a[2 * j] = wasm_i32x4_add(a[2 * j], wasm_i32x4_add(wasm_i32x4_dot_i16x8(wasm_i16x8_load8x8(q), x0),
                                                                   wasm_i32x4_dot_i16x8(wasm_i16x8_load8x8(q1), x1)));
                a[2 * j + 1] = wasm_i32x4_add(a[2 * j + 1], wasm_i32x4_add(wasm_i32x4_dot_i16x8(wasm_i16x8_load8x8(q + 8), x0),
                                                                           wasm_i32x4_dot_i16x8(wasm_i16x8_load8x8(q1 + 8), x1)));
            }
        }
        if (p < end) { /* an odd pair left */
            v128_t x0 = wasm_v128_load32_splat(x);
            for (int j = 0; j < NP; j++) {
                a[2 * j] = wasm_i32x4_add(a[2 * j], wasm_i32x4_dot_i16x8(wasm_i16x8_load8x8(p + 16 * j), x0));
                a[2 * j + 1] = wasm_i32x4_add(a[2 * j + 1], wasm_i32x4_dot_i16x8(wasm_i16x8_load8x8(p + 16 * j + 8), x0));
            }
        }
        if (!(runs[2 * r + 1] & RUN_FLUSH)) continue;
        for (int j = 0; j < 2 * NP; j++) {
            wasm_v128_store(acc + 4 * j, wasm_f32x4_add(wasm_v128_load(acc + 4 * j), wasm_f32x4_convert_i32x4(a[j])));
            a[j] = wasm_i32x4_splat(0);
        }
    }
}
#else
INLINE void q8_panels(const uint8_t *w, size_t stride, const int16_t *xq, const uint32_t *runs, size_t n_runs,
                      float *acc, const int NP) {
    for (int p = 0; p < NP; p++) { /* a panel at a time: its 8 sums stay in registers */
        int32_t s[8] = {0};
        for (size_t r = 0; r < n_runs; r++) {
            for (size_t k = runs[2 * r]; k < (runs[2 * r + 1] & ~RUN_FLUSH); k++) {
                const int8_t *q = (const int8_t *)w + k * stride + 16 * p;
                int32_t x0 = xq[2 * k], x1 = xq[2 * k + 1];
                for (int j = 0; j < 8; j++) s[j] += q[2 * j] * x0 + q[2 * j + 1] * x1;
            }
            if (!(runs[2 * r + 1] & RUN_FLUSH)) continue;
            for (int j = 0; j < 8; j++) acc[8 * p + j] += (float)s[j], s[j] = 0;
        }
    }
}
#endif

/* Q4, NP panels starting at w, `stride` bytes per input quad, scales `sstride` floats per group,
 * over the row's groups with a nonzero input, groups[0..n_groups):
 * acc[p * 8 + j] += sum over those groups of scale * float(i32 sum of (n - 8) xq). */
#ifdef __wasm_simd128__
INLINE void q4_panels(const uint8_t *w, size_t stride, const float *scale, size_t sstride,
                      const int16_t *xq, const int32_t *xsum, const uint32_t *groups, size_t n_groups, size_t group,
                      float *acc, const int NP) {
    const v128_t low = wasm_i16x8_splat(15);
    for (size_t t = 0; t < n_groups; t++) {
        const size_t g = groups[t];
        v128_t a[8];
        for (int j = 0; j < 2 * NP; j++) a[j] = wasm_i32x4_splat(0);
        /* hot loop: one quad of inputs (two splatted pairs) against NP panels; nibbles widened to
         * 16 bits, the low one masked, the high one shifted down */
        for (size_t k = g * group / 4; k < (g + 1) * group / 4; k++) {
            v128_t x01 = wasm_v128_load32_splat(xq + 4 * k), x23 = wasm_v128_load32_splat(xq + 4 * k + 2);
            const uint8_t *p = w + k * stride;
            for (int j = 0; j < NP; j++) {
                v128_t v0 = wasm_u16x8_load8x8(p + 16 * j), v1 = wasm_u16x8_load8x8(p + 16 * j + 8);
                a[2 * j] = wasm_i32x4_add(a[2 * j], wasm_i32x4_add(wasm_i32x4_dot_i16x8(wasm_v128_and(v0, low), x01),
                                                                   wasm_i32x4_dot_i16x8(wasm_u16x8_shr(v0, 4), x23)));
                a[2 * j + 1] = wasm_i32x4_add(a[2 * j + 1], wasm_i32x4_add(wasm_i32x4_dot_i16x8(wasm_v128_and(v1, low), x01),
                                                                           wasm_i32x4_dot_i16x8(wasm_u16x8_shr(v1, 4), x23)));
            }
        }
        const v128_t off = wasm_i32x4_splat(8 * xsum[g]);
        for (int j = 0; j < 2 * NP; j++) {
            v128_t f = wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_i32x4_sub(a[j], off)), wasm_v128_load(scale + g * sstride + 4 * j));
            wasm_v128_store(acc + 4 * j, wasm_f32x4_add(wasm_v128_load(acc + 4 * j), f));
        }
    }
}
#else
INLINE void q4_panels(const uint8_t *w, size_t stride, const float *scale, size_t sstride,
                      const int16_t *xq, const int32_t *xsum, const uint32_t *groups, size_t n_groups, size_t group,
                      float *acc, const int NP) {
    for (int p = 0; p < NP; p++) { /* a panel at a time: its 8 sums stay in registers */
        for (size_t t = 0; t < n_groups; t++) {
            const size_t g = groups[t];
            int32_t s[8] = {0};
            for (size_t k = g * group / 4; k < (g + 1) * group / 4; k++) {
                const uint8_t *q = w + k * stride + 16 * p;
                const int16_t *x = xq + 4 * k;
                for (int j = 0; j < 8; j++)
                    s[j] += (q[2 * j] & 15) * x[0] + (q[2 * j + 1] & 15) * x[1] + (q[2 * j] >> 4) * x[2] + (q[2 * j + 1] >> 4) * x[3];
            }
            for (int j = 0; j < 8; j++) acc[8 * p + j] += (float)(s[j] - 8 * xsum[g]) * scale[g * sstride + 8 * p + j];
        }
    }
}
#endif

#if MLRT__Q8_K == 4 /* two panels at a time: four accumulators fit V8's x64 registers, eight spill */
KERNEL void q8_panels2(const uint8_t *w, size_t stride, const q8_act *xq, const uint32_t *runs, size_t n_runs, float *acc) {
    q8_panels(w, stride, xq, runs, n_runs, acc, 2);
}
#else
KERNEL void q8_panels4(const uint8_t *w, size_t stride, const q8_act *xq, const uint32_t *runs, size_t n_runs, float *acc) {
    q8_panels(w, 64, xq, runs, n_runs, acc, 4);
}
#endif
KERNEL void q8_panel1(const uint8_t *w, size_t stride, const q8_act *xq, const uint32_t *runs, size_t n_runs, float *acc) {
    q8_panels(w, stride, xq, runs, n_runs, acc, 1);
}
KERNEL void q4_panels4(const uint8_t *w, size_t stride, const float *scale, size_t sstride, const int16_t *xq,
                       const int32_t *xsum, const uint32_t *groups, size_t n_groups, size_t group, float *acc) {
    q4_panels(w, 64, scale, 32, xq, xsum, groups, n_groups, group, acc, 4);
}
KERNEL void q4_panel1(const uint8_t *w, size_t stride, const float *scale, size_t sstride, const int16_t *xq,
                      const int32_t *xsum, const uint32_t *groups, size_t n_groups, size_t group, float *acc) {
    q4_panels(w, stride, scale, sstride, xq, xsum, groups, n_groups, group, acc, 1);
}

#if MLRT__Q8_K == 2
/* Q8, four rows through one panel of 8 outputs at w (`stride` bytes per input pair), every pair
 * (zeros add exactly 0), the i32 sums summed into acc[r * as + j] as floats after each group of
 * MLRT__Q8_GROUP inputs: the bits of q8_panels over the runs. x4: the rows' pairs side by side,
 * x4[8k + 2r + t] = xq_r[2k + t] (one load gives pair k of the four rows). */
#ifdef __wasm_simd128__
KERNEL void q8_rows4(const uint8_t *w, size_t stride, const int16_t *x4, size_t pairs, float *acc, size_t as) {
    const size_t gp = MLRT__Q8_GROUP / 2;
    for (size_t g = 0; g < pairs; g += gp) {
        const size_t end = pairs - g < gp ? pairs : g + gp;
        v128_t a00 = wasm_i32x4_splat(0), a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00, a30 = a00, a31 = a00;
        const uint8_t *p = w + g * stride;
        const int16_t *x = x4 + 8 * g;
        /* hot loop (Q8 row blocks): one pair of 8 weights widened once serves four rows, 8 dots.
         * Each row's pair is splatted by its load (load32_splat: a load on x64, no shuffle), which
         * leaves 18 vector ops a turn for 64 multiply-adds, 16 of them the dots and their adds: 7%
         * faster per Q8 T=16 embedding in Node than one load splatted by four shuffles, and as fast
         * under workerd, which bounds-checks every load (6.5 ms of CPU per /embed against 6.5-6.9). */
        for (size_t k = g; k < end; k++, p += stride, x += 8) {
            const v128_t w0 = wasm_i16x8_load8x8(p), w1 = wasm_i16x8_load8x8(p + 8);
            v128_t s = wasm_v128_load32_splat(x);
            a00 = wasm_i32x4_add(a00, wasm_i32x4_dot_i16x8(w0, s)), a01 = wasm_i32x4_add(a01, wasm_i32x4_dot_i16x8(w1, s));
            s = wasm_v128_load32_splat(x + 2);
            a10 = wasm_i32x4_add(a10, wasm_i32x4_dot_i16x8(w0, s)), a11 = wasm_i32x4_add(a11, wasm_i32x4_dot_i16x8(w1, s));
            s = wasm_v128_load32_splat(x + 4);
            a20 = wasm_i32x4_add(a20, wasm_i32x4_dot_i16x8(w0, s)), a21 = wasm_i32x4_add(a21, wasm_i32x4_dot_i16x8(w1, s));
            s = wasm_v128_load32_splat(x + 6);
            a30 = wasm_i32x4_add(a30, wasm_i32x4_dot_i16x8(w0, s)), a31 = wasm_i32x4_add(a31, wasm_i32x4_dot_i16x8(w1, s));
        }
#define FLUSH(r, a0, a1) /* (the first group stores: 0 + x = x) */ \
        wasm_v128_store(acc + (r) * as, g ? wasm_f32x4_add(wasm_v128_load(acc + (r) * as), wasm_f32x4_convert_i32x4(a0)) : wasm_f32x4_convert_i32x4(a0)), \
        wasm_v128_store(acc + (r) * as + 4, g ? wasm_f32x4_add(wasm_v128_load(acc + (r) * as + 4), wasm_f32x4_convert_i32x4(a1)) : wasm_f32x4_convert_i32x4(a1))
        FLUSH(0, a00, a01), FLUSH(1, a10, a11), FLUSH(2, a20, a21), FLUSH(3, a30, a31);
#undef FLUSH
    }
}
#else
KERNEL void q8_rows4(const uint8_t *w, size_t stride, const int16_t *x4, size_t pairs, float *acc, size_t as) {
    const size_t gp = MLRT__Q8_GROUP / 2;
    for (size_t g = 0; g < pairs; g += gp) {
        const size_t end = pairs - g < gp ? pairs : g + gp;
        int32_t s[4][8] = {{0}};
        for (size_t k = g; k < end; k++) {
            const int8_t *q = (const int8_t *)w + k * stride;
            for (int r = 0; r < 4; r++) {
                int32_t x0 = x4[8 * k + 2 * r], x1 = x4[8 * k + 2 * r + 1];
                for (int j = 0; j < 8; j++) s[r][j] += q[2 * j] * x0 + q[2 * j + 1] * x1;
            }
        }
        for (int r = 0; r < 4; r++) /* (the first group stores: 0 + x = x) */
            for (int j = 0; j < 8; j++) acc[r * as + j] = g ? acc[r * as + j] + (float)s[r][j] : (float)s[r][j];
    }
}
#endif
#endif

/* Q4 in the file's layout (any in): block by block along each output's row, outputs [o0, o1). */
MLRT__SMALL KERNEL void q4_rows(const mlrt__dense *l, const int16_t *xq, size_t o0, size_t o1, float *acc) {
    const size_t in = l->in;
    for (size_t o = o0; o < o1; o++) {
        size_t e = o * in, end = e + in;
        float a = 0.0f;
        while (e < end) {
            size_t b = e / Q4_BLOCK, stop = (b + 1) * Q4_BLOCK < end ? (b + 1) * Q4_BLOCK : end;
            int32_t s = 0;
            for (; e < stop; e++) {
                uint8_t v = l->q[b * 16 + e % Q4_BLOCK / 2];
                s += ((int)(e & 1 ? v >> 4 : v & 15u) - 8) * xq[e - o * in];
            }
            a += (float)s * l->qscale[b];
        }
        acc[o] = a;
    }
}

/* ------------------------------------------------------------ a layer */

/* The runs of nonzero 32-bit words of xq [words] (Q8 input pairs of int16, or quads of 7 bits) as
 * [start, end) pairs into runs, none crossing a multiple of `group` words (the i32 sums' groups);
 * a run is marked RUN_FLUSH when the next one lies in a later group, or is none. Returns their count.
 * Dense rows make few long runs; images with blank borders and ReLU outputs make many short ones
 * and skip the zeros. A row's sums are those of its fixed groups whatever the runs: q8_rows4 gets
 * the same bits without them. */
static inline uint32_t word_at(const void *p, size_t k) { uint32_t v; memcpy(&v, (const char *)p + 4 * k, 4); return v; }
MLRT__SMALL __attribute__((noinline)) static size_t nonzero_runs(const void *xq, size_t words, size_t group, uint32_t *runs) {
    size_t n = 0;
    for (size_t k = 0; k < words;) {
        while (k < words && word_at(xq, k) == 0) k++;
        if (k == words) break;
        size_t start = k, stop = (k / group + 1) * group < words ? (k / group + 1) * group : words;
        while (k < stop && word_at(xq, k) != 0) k++;
        if (n && runs[2 * n - 2] / group != start / group) runs[2 * n - 1] |= RUN_FLUSH;
        runs[2 * n] = (uint32_t)start, runs[2 * n + 1] = (uint32_t)k, n++;
    }
    if (n) runs[2 * n - 1] |= RUN_FLUSH;
    return n;
}

/* y[o] = acc[o] * mul (+ zp * qsum[o]) + b[o] for the first n outputs; mul (weight scale x
 * activation scale), zp (weight scale x the zero point) and the sum in double: none overflows
 * unless the result does. */
static void store_scaled(const float *acc8, double mul, double zp, const int32_t *qsum, const float *bias8,
                         float *y, size_t n) {
    if (qsum && zp != 0.0)
        for (size_t j = 0; j < n; j++) y[j] = (float)(acc8[j] * mul + zp * qsum[j]) + bias8[j];
    else {
        size_t j = 0;
#ifdef __wasm_simd128__
        const v128_t m = wasm_f64x2_splat(mul);
        for (; j + 4 <= n; j += 4) { /* the same steps in double, two lanes at a time */
            const v128_t a = wasm_v128_load(acc8 + j);
            const v128_t lo = wasm_f32x4_demote_f64x2_zero(wasm_f64x2_mul(wasm_f64x2_promote_low_f32x4(a), m));
            const v128_t hi = wasm_f32x4_demote_f64x2_zero(wasm_f64x2_mul(wasm_f64x2_promote_low_f32x4(wasm_i64x2_shuffle(a, a, 1, 1)), m));
            wasm_v128_store(y + j, wasm_f32x4_add(wasm_i64x2_shuffle(lo, hi, 0, 2), wasm_v128_load(bias8 + j)));
        }
#endif
        for (; j < n; j++) y[j] = (float)(acc8[j] * mul) + bias8[j];
    }
}
/* One row through the panel kernels, band by band: a whole band of 4 panels at once (Q8 relaxed:
 * 2 at a time), the panels of a smaller (last) band one by one. runs: Q8 runs of nonzero words, Q4 nonzero groups. */
MLRT__SMALL static void panels_row(const mlrt__dense *l, const int16_t *xq, const int32_t *xsum, const uint32_t *runs,
                                  size_t n_runs, double mul, double zp, size_t from, size_t to, float *y) {
    const size_t in = l->in_q, groups = in / l->group;
    float acc[4 * MLRT__PANEL];
    for (size_t o0 = from; o0 < to; o0 += 32) { /* from: a multiple of 32, a band's first output */
        const size_t np = mlrt__qband_np(l, o0);
        memset(acc, 0, sizeof acc);
        if (l->wq == MLRT__WQ_Q8) {
            const uint8_t *w = l->q + o0 * in;
            const size_t stride = 8 * MLRT__Q8_K * np;
            const q8_act *x = (const q8_act *)xq;
            size_t p = 0;
#if MLRT__Q8_K == 4
            for (; p + 2 <= np; p += 2) q8_panels2(w + 8 * MLRT__Q8_K * p, stride, x, runs, n_runs, acc + 8 * p);
#else
            if (np == 4) q8_panels4(w, stride, x, runs, n_runs, acc), p = 4;
#endif
            for (; p < np; p++) q8_panel1(w + 8 * MLRT__Q8_K * p, stride, x, runs, n_runs, acc + 8 * p);
        } else {
            const uint8_t *w = l->q + o0 * in / 2;
            const float *sc = l->qscale + o0 * groups;
            const size_t stride = 16 * np;
            if (np == 4) q4_panels4(w, stride, sc, 8 * np, xq, xsum, runs, n_runs, l->group, acc);
            else for (size_t p = 0; p < np; p++) q4_panel1(w + 16 * p, stride, sc + 8 * p, 8 * np, xq, xsum, runs, n_runs, l->group, acc + 8 * p);
        }
        store_scaled(acc, mul, zp, l->qsum ? l->qsum + o0 : NULL, l->b + o0, y + o0, l->out - o0 < 32 ? l->out - o0 : 32);
    }
}

/* A Q8 row's activations: 7 bits with a zero point *lo in the relaxed build, int16 elsewhere (*lo = 0). */
static double quantize_q8_row(const mlrt__dense *l, const float *x, int16_t *xq, double *lo) {
#if MLRT__Q8_K == 4
    return quantize_row_u7(x, l->in, l->in_q, (uint8_t *)xq, lo);
#else
    *lo = 0.0;
    return quantize_row(x, l->in, l->in_q, xq);
#endif
}

/* One row, the existing way: quantized into xq, through the panels over its runs (Q8) or groups (Q4). */
static void forward_row(const mlrt__dense *l, const float *x, float *yr, size_t o0, size_t o1, int16_t *xq, int32_t *xsum,
                        uint32_t *nz) {
    double lo = 0.0;
    double xs = l->wq == MLRT__WQ_Q8 ? quantize_q8_row(l, x, xq, &lo) : quantize_row(x, l->in, l->in_q, xq);
    if (xs != xs) { /* a non-finite activation: make it reach the output check */
        for (size_t o = o0; o < o1; o++) yr[o] = INFINITY;
        return;
    }
    size_t n_runs = l->wq == MLRT__WQ_Q8 ? nonzero_runs(xq, l->in_q / MLRT__Q8_K, MLRT__Q8_GROUP / MLRT__Q8_K, nz) : 0;
    if (l->wq == MLRT__WQ_Q4) /* each group's sum (for the -8 of the nibbles) and the groups that are not all zero */
        for (uint32_t g = 0; g < l->in / l->group; g++) {
            int32_t s = 0, any = 0;
            for (size_t i = g * l->group; i < (g + 1) * l->group; i++) s += xq[i], any |= xq[i];
            xsum[g] = s;
            nz[n_runs] = g;
            n_runs += any != 0;
        }
    if (l->wq == MLRT__WQ_Q4_ROWS) {
        q4_rows(l, xq, o0, o1, yr);
        store_scaled(yr + o0, xs, 0.0, NULL, l->b + o0, yr + o0, o1 - o0);
    } else {
        const double qs = l->wq == MLRT__WQ_Q8 ? (double)l->qs : 1.0;
        panels_row(l, xq, xsum, nz, n_runs, qs * xs, qs * lo, o0, o1, yr);
    }
    mlrt__activate(l->act, yr + o0, o1 - o0);
}

#if MLRT__Q8_K == 2
/* Q8, up to MLRT__Q8_ROWS(in_q) rows at once: each is quantized (xq: one row per in_q), the rows with at
 * least half their pairs nonzero go in blocks of four (a block of 2 or 3 repeats its last row),
 * interleaved into x4, and run band by band through q8_rows4, so that one weight load serves four
 * rows and a band's weights stay in cache for the next block; the other rows run alone over their
 * runs. Both ways give each row the same bits. */
static void q8_forward_rows(const mlrt__dense *l, const float *x, size_t x_stride, float *y, size_t y_stride, size_t rows,
                            size_t o0, size_t o1, int16_t *xq, uint32_t *nz) {
    const size_t in_q = l->in_q, pairs = in_q / 2;
    int16_t *x4 = xq + MLRT__Q8_ROWS(in_q) * in_q;
    double mul[MLRT__Q8_ROWS_MAX];
    uint8_t dense[MLRT__Q8_ROWS_MAX]; /* the rows that go in blocks */
    size_t nd = 0;
    for (size_t r = 0; r < rows; r++) {
        const int16_t *q = xq + r * in_q;
        mul[r] = (double)l->qs * quantize_row(x + r * x_stride, l->in, in_q, xq + r * in_q);
        if (mul[r] != mul[r]) { /* a non-finite activation: make it reach the output check */
            for (size_t o = o0; o < o1; o++) y[r * y_stride + o] = INFINITY;
            continue;
        }
        size_t nonzero = 0, k = 0;
#ifdef __wasm_simd128__
        for (; k + 4 <= pairs; k += 4)
            nonzero += 4 - __builtin_popcount(wasm_i32x4_bitmask(wasm_i32x4_eq(wasm_v128_load(q + 2 * k), wasm_i32x4_splat(0))));
#endif
        for (; k < pairs; k++) nonzero += word_at(q, k) != 0;
        if (2 * nonzero >= pairs) dense[nd++] = (uint8_t)r;
        else panels_row(l, q, NULL, nz, nonzero_runs(q, pairs, MLRT__Q8_GROUP / 2, nz), mul[r], 0.0, o0, o1, y + r * y_stride);
    }
    const size_t blocks = nd / 4 + (nd % 4 >= 2);
    for (size_t b = 0; b < blocks; b++) { /* rows 4b.. side by side; the last row repeated to fill a block */
        const int16_t *q[4];
        int16_t *d = x4 + b * 4 * in_q;
        for (size_t j = 0; j < 4; j++) q[j] = xq + dense[4 * b + j < nd ? 4 * b + j : nd - 1] * in_q;
        size_t k = 0;
#ifdef __wasm_simd128__
        for (; k + 4 <= pairs; k += 4) { /* a 4 x 4 transpose of pairs */
            v128_t a = wasm_v128_load(q[0] + 2 * k), b1 = wasm_v128_load(q[1] + 2 * k), c = wasm_v128_load(q[2] + 2 * k),
                   e = wasm_v128_load(q[3] + 2 * k);
            v128_t t0 = wasm_i32x4_shuffle(a, b1, 0, 4, 1, 5), t1 = wasm_i32x4_shuffle(a, b1, 2, 6, 3, 7);
            v128_t t2 = wasm_i32x4_shuffle(c, e, 0, 4, 1, 5), t3 = wasm_i32x4_shuffle(c, e, 2, 6, 3, 7);
            wasm_v128_store(d + 8 * k, wasm_i32x4_shuffle(t0, t2, 0, 1, 4, 5));
            wasm_v128_store(d + 8 * k + 8, wasm_i32x4_shuffle(t0, t2, 2, 3, 6, 7));
            wasm_v128_store(d + 8 * k + 16, wasm_i32x4_shuffle(t1, t3, 0, 1, 4, 5));
            wasm_v128_store(d + 8 * k + 24, wasm_i32x4_shuffle(t1, t3, 2, 3, 6, 7));
        }
#endif
        for (; k < pairs; k++)
            for (size_t j = 0; j < 4; j++) d[8 * k + 2 * j] = q[j][2 * k], d[8 * k + 2 * j + 1] = q[j][2 * k + 1];
    }
    float acc[4 * 32];
    for (size_t o = o0; o < o1; o += 32) { /* o0: a multiple of 32, a band's first output */
        const size_t np = mlrt__qband_np(l, o), n = l->out - o < 32 ? l->out - o : 32;
        const uint8_t *w = l->q + o * in_q;
        for (size_t b = 0; b < blocks; b++) {
            for (size_t p = 0; p < np; p++) q8_rows4(w + 16 * p, 16 * np, x4 + b * 4 * in_q, pairs, acc + 8 * p, 32);
            for (size_t j = 0; j < 4 && 4 * b + j < nd; j++) {
                const size_t r = dense[4 * b + j];
                store_scaled(acc + 32 * j, mul[r], 0.0, NULL, l->b + o, y + r * y_stride + o, n);
            }
        }
    }
    if (nd % 4 == 1) { /* one dense row left over: alone */
        const size_t r = dense[nd - 1];
        const int16_t *q = xq + r * in_q;
        panels_row(l, q, NULL, nz, nonzero_runs(q, pairs, MLRT__Q8_GROUP / 2, nz), mul[r], 0.0, o0, o1, y + r * y_stride);
    }
    for (size_t r = 0; r < rows; r++)
        if (mul[r] == mul[r]) mlrt__activate(l->act, y + r * y_stride + o0, o1 - o0);
}
#endif

MLRT__SMALL void mlrt__quant_forward(const mlrt__dense *l, const float *x, size_t x_stride, float *y, size_t y_stride, size_t rows,
                        size_t o0, size_t o1, int16_t *xq, int32_t *xsum, uint32_t *nz) {
#if MLRT__Q8_K == 2
    if (l->wq == MLRT__WQ_Q8 && rows >= 2) {
        const size_t chunk = MLRT__Q8_ROWS(l->in_q);
        for (size_t r = 0; r < rows; r += chunk)
            q8_forward_rows(l, x + r * x_stride, x_stride, y + r * y_stride, y_stride, rows - r < chunk ? rows - r : chunk, o0, o1, xq, nz);
        return;
    }
#endif
    for (size_t r = 0; r < rows; r++) forward_row(l, x + r * x_stride, y + r * y_stride, o0, o1, xq, xsum, nz);
}
