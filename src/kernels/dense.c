/* kernels/dense.c — dense layers: y = act(W x + b), for one row or a tile of rows.
 *
 * Weights are packed at load into panels of MLRT__PANEL outputs:
 *   w[p][i][j] = W[p * MLRT__PANEL + j][i]
 * so that, for a fixed input i, the panel's outputs are contiguous: one or two vector
 * loads, multiplied by the broadcast input. Every weight is read once per row block,
 * front to back. Written with GCC/Clang vector extensions: SIMD128 when compiled with
 * -msimd128, SSE on x86 natively, and plain scalar code in the scalar wasm build. */
#include "kernels.h"
#include "simd.h"
#include <math.h>
#include <string.h>


#if MLRT__PANEL != 8
#error "the kernels below are written for panels of 8 outputs (two v4)"
#endif


/* The kernels stay separate small functions: V8 optimises hot wasm functions one by one,
 * and one big inlined function costs it several MB of memory and more compile time. */
#define KERNEL __attribute__((noinline)) static

/* One row, four panels (32 outputs). Each output is summed in input order, exactly as in
 * panel_rows, so a row's result does not depend on the batch around it; the four panels
 * give eight independent accumulators to hide the add latency. */
KERNEL void panels4_1row(const float *w, const float *x, size_t in, float *acc32) {
    const float *w0 = w, *w1 = w + in * 8, *w2 = w + in * 16, *w3 = w + in * 24;
    v4 a0 = {0}, a1 = {0}, b0 = {0}, b1 = {0}, c0 = {0}, c1 = {0}, d0 = {0}, d1 = {0};
    /* hot loop (batch of one): streams four panels side by side */
    for (size_t i = 0; i < in; i++) {
        v4 s = splat(x[i]);
        a0 = madd(a0, ld(w0 + 8 * i), s); a1 = madd(a1, ld(w0 + 8 * i + 4), s);
        b0 = madd(b0, ld(w1 + 8 * i), s); b1 = madd(b1, ld(w1 + 8 * i + 4), s);
        c0 = madd(c0, ld(w2 + 8 * i), s); c1 = madd(c1, ld(w2 + 8 * i + 4), s);
        d0 = madd(d0, ld(w3 + 8 * i), s); d1 = madd(d1, ld(w3 + 8 * i + 4), s);
    }
    st(acc32, a0); st(acc32 + 4, a1); st(acc32 + 8, b0); st(acc32 + 12, b1);
    st(acc32 + 16, c0); st(acc32 + 20, c1); st(acc32 + 24, d0); st(acc32 + 28, d1);
}

/* One row, one panel, same order: for the panels left over after groups of four. */
KERNEL void panel_1row(const float *w, const float *x, size_t in, float *acc8) {
    v4 a0 = {0}, a1 = {0};
    for (size_t i = 0; i < in; i++, w += 8) {
        v4 s = splat(x[i]);
        a0 = madd(a0, ld(w), s);
        a1 = madd(a1, ld(w + 4), s);
    }
    st(acc8, a0);
    st(acc8 + 4, a1);
}

/* ROWS rows, one panel: the weights loaded once serve ROWS rows, register-blocked ROWS x 8.
 * Separate multiply and add need a product register: 10 accumulators + 2 weights + 1 broadcast +
 * 1 product fit the 16 vector registers of x86-64 (6 rows spill in V8 and run a third slower,
 * 4 rows run 5% slower). A fused multiply-add needs none: the relaxed build takes 6 rows. */
#if defined(__wasm_relaxed_simd__)
#define ROWS 6
#else
#define ROWS 5
#endif
KERNEL void panel_rows(const float *w, const float *const *xr, size_t in, float *acc, size_t as) {
    const float *x0 = xr[0], *x1 = xr[1], *x2 = xr[2], *x3 = xr[3], *x4 = xr[4];
    v4 r00 = {0}, r01 = {0}, r10 = {0}, r11 = {0}, r20 = {0}, r21 = {0};
    v4 r30 = {0}, r31 = {0}, r40 = {0}, r41 = {0};
#if ROWS == 6
    const float *x5 = xr[5];
    v4 r50 = {0}, r51 = {0};
#endif
    /* hot loop: 2 weight loads + ROWS broadcasts feed 2 x ROWS multiply-adds */
    for (size_t i = 0; i < in; i++, w += 8) {
        v4 w0 = ld(w), w1 = ld(w + 4), s;
        s = splat(x0[i]); r00 = madd(r00, w0, s); r01 = madd(r01, w1, s);
        s = splat(x1[i]); r10 = madd(r10, w0, s); r11 = madd(r11, w1, s);
        s = splat(x2[i]); r20 = madd(r20, w0, s); r21 = madd(r21, w1, s);
        s = splat(x3[i]); r30 = madd(r30, w0, s); r31 = madd(r31, w1, s);
        s = splat(x4[i]); r40 = madd(r40, w0, s); r41 = madd(r41, w1, s);
#if ROWS == 6
        s = splat(x5[i]); r50 = madd(r50, w0, s); r51 = madd(r51, w1, s);
#endif
    }
    st(acc, r00); st(acc + 4, r01);
    st(acc + as, r10); st(acc + as + 4, r11);
    st(acc + 2 * as, r20); st(acc + 2 * as + 4, r21);
    st(acc + 3 * as, r30); st(acc + 3 * as + 4, r31);
    st(acc + 4 * as, r40); st(acc + 4 * as + 4, r41);
#if ROWS == 6
    st(acc + 5 * as, r50); st(acc + 5 * as + 4, r51);
#endif
}

/* Adds the bias, keeps the first `out` of the panel's outputs. */
static inline void store_panel(const float *acc8, const float *bias8, float *y, size_t n) {
    if (n == MLRT__PANEL) { st(y, ld(acc8) + ld(bias8)); st(y + 4, ld(acc8 + 4) + ld(bias8 + 4)); return; }
    for (size_t j = 0; j < n; j++) y[j] = acc8[j] + bias8[j];
}

__attribute__((noinline)) void mlrt__dense_forward_range(const mlrt__dense *l, const float *x, size_t x_stride, float *y,
                                                       size_t y_stride, size_t rows, size_t o0, size_t o1) {
    const size_t in = l->in, panel_floats = in * MLRT__PANEL;
    const size_t p0 = o0 / MLRT__PANEL, p1 = (o1 + MLRT__PANEL - 1) / MLRT__PANEL; /* p0 % 4 == 0: whole-layer grouping */
    /* blocks of ROWS rows; 2 or more rows left over make one more block, its last row repeated (each row's
     * sums are its own: the repeats change nothing), which streams the weights once instead of per row */
    const size_t left = rows % ROWS, blocks = rows - left + (left >= 2 ? ROWS : 0), single = left == 1 ? rows - 1 : rows;
    float acc[ROWS * MLRT__PANEL];
    const float *xr[ROWS];
    for (size_t p = p0; p < p1 && blocks; p++) {
        const float *w = l->w + p * panel_floats, *bias = l->b + p * MLRT__PANEL;
        size_t o = p * MLRT__PANEL, n = l->out - o < MLRT__PANEL ? l->out - o : MLRT__PANEL;
        for (size_t r = 0; r < blocks; r += ROWS) {
            size_t k = rows - r < ROWS ? rows - r : ROWS;
            for (size_t j = 0; j < ROWS; j++) xr[j] = x + (r + (j < k ? j : k - 1)) * x_stride;
            panel_rows(w, xr, in, acc, MLRT__PANEL);
            for (size_t j = 0; j < k; j++) store_panel(acc + j * MLRT__PANEL, bias, y + (r + j) * y_stride + o, n);
        }
    }
    /* a last row alone */
    for (size_t r = single; r < rows; r++) {
        const float *xo = x + r * x_stride;
        float *yr = y + r * y_stride;
        size_t p = p0;
        for (; p + 4 <= p1; p += 4) {
            panels4_1row(l->w + p * panel_floats, xo, in, acc);
            for (size_t k = 0; k < 4; k++) {
                size_t o = (p + k) * MLRT__PANEL;
                store_panel(acc + k * MLRT__PANEL, l->b + o, yr + o, l->out - o < MLRT__PANEL ? l->out - o : MLRT__PANEL);
            }
        }
        for (; p < p1; p++) {
            size_t o = p * MLRT__PANEL;
            panel_1row(l->w + p * panel_floats, xo, in, acc);
            store_panel(acc, l->b + o, yr + o, l->out - o < MLRT__PANEL ? l->out - o : MLRT__PANEL);
        }
    }
    for (size_t r = 0; r < rows; r++) mlrt__activate(l->act, y + r * y_stride + o0, o1 - o0);
}

void mlrt__dense_forward(const mlrt__dense *l, const float *x, size_t x_stride, float *y, size_t y_stride, size_t rows) {
    mlrt__dense_forward_range(l, x, x_stride, y, y_stride, rows, 0, l->out);
}

/* ------------------------------------------------------------------ packing */

/* File bytes: little-endian f32 at any alignment. */
typedef float v4b __attribute__((vector_size(16), aligned(1)));
typedef uint32_t u4 __attribute__((vector_size(16)));
static inline v4 ldb(const uint8_t *p) { return *(const v4b *)p; }
/* All-ones lanes where v is inf or NaN (an all-ones exponent). */
static inline u4 special(v4 v) { return (u4)(((u4)v & 0x7f800000u) == 0x7f800000u); }
static inline bool any(u4 m) { return (m[0] | m[1] | m[2] | m[3]) != 0; }

/* Rows [0, n) of a panel, one input i at a time (n < 8 or a ragged tail): dst[j] = W[j][i], 0 past n. */
static bool pack_cells(const uint8_t *w, bool in_major, size_t in, size_t out, size_t o, size_t i0, size_t i1,
                       float *dst) {
    uint32_t bad = 0;
    for (size_t i = i0; i < i1; i++, dst += MLRT__PANEL)
        for (size_t j = 0; j < MLRT__PANEL; j++) {
            float v = 0.0f;
            if (o + j < out) memcpy(&v, w + 4 * (in_major ? i * out + o + j : (o + j) * in + i), 4);
            uint32_t u;
            memcpy(&u, &v, 4);
            bad |= (u & 0x7f800000u) == 0x7f800000u;
            dst[j] = v;
        }
    return !bad;
}

/* [out][in] in the file: eight rows read side by side, 4 x 4 blocks transposed in registers. */
static bool pack_out_major(const uint8_t *w, size_t in, size_t out, float *dst) {
    const size_t panel_floats = in * MLRT__PANEL, full = out / MLRT__PANEL * MLRT__PANEL, row = 4 * in;
    u4 bad = {0};
    for (size_t o = 0; o < full; o += MLRT__PANEL, dst += panel_floats) {
        const uint8_t *r = w + o * row;
        size_t i = 0;
        /* load-time hot loop: 8 vector loads, 16 shuffles and 8 stores place 32 weights */
        for (; i + 4 <= in; i += 4) {
            v4 a = ldb(r + 4 * i), b = ldb(r + row + 4 * i), c = ldb(r + 2 * row + 4 * i), d = ldb(r + 3 * row + 4 * i);
            v4 e = ldb(r + 4 * row + 4 * i), f = ldb(r + 5 * row + 4 * i), g = ldb(r + 6 * row + 4 * i),
               h = ldb(r + 7 * row + 4 * i);
            bad |= special(a) | special(b) | special(c) | special(d) | special(e) | special(f) | special(g) | special(h);
            v4 ab0 = __builtin_shufflevector(a, b, 0, 4, 1, 5), ab1 = __builtin_shufflevector(a, b, 2, 6, 3, 7);
            v4 cd0 = __builtin_shufflevector(c, d, 0, 4, 1, 5), cd1 = __builtin_shufflevector(c, d, 2, 6, 3, 7);
            v4 ef0 = __builtin_shufflevector(e, f, 0, 4, 1, 5), ef1 = __builtin_shufflevector(e, f, 2, 6, 3, 7);
            v4 gh0 = __builtin_shufflevector(g, h, 0, 4, 1, 5), gh1 = __builtin_shufflevector(g, h, 2, 6, 3, 7);
            float *q = dst + i * MLRT__PANEL;
            st(q, __builtin_shufflevector(ab0, cd0, 0, 1, 4, 5));      st(q + 4, __builtin_shufflevector(ef0, gh0, 0, 1, 4, 5));
            st(q + 8, __builtin_shufflevector(ab0, cd0, 2, 3, 6, 7));  st(q + 12, __builtin_shufflevector(ef0, gh0, 2, 3, 6, 7));
            st(q + 16, __builtin_shufflevector(ab1, cd1, 0, 1, 4, 5)); st(q + 20, __builtin_shufflevector(ef1, gh1, 0, 1, 4, 5));
            st(q + 24, __builtin_shufflevector(ab1, cd1, 2, 3, 6, 7)); st(q + 28, __builtin_shufflevector(ef1, gh1, 2, 3, 6, 7));
        }
        if (!pack_cells(w, false, in, out, o, i, in, dst + i * MLRT__PANEL)) return false;
    }
    return !any(bad) && (full == out || pack_cells(w, false, in, out, full, 0, in, dst));
}

/* [in][out] in the file: a panel's eight outputs are already side by side: two vectors per input. */
static bool pack_in_major(const uint8_t *w, size_t in, size_t out, float *dst) {
    const size_t panel_floats = in * MLRT__PANEL, full = out / MLRT__PANEL * MLRT__PANEL;
    u4 bad = {0};
    for (size_t i = 0; i < in; i++) {
        const uint8_t *r = w + 4 * i * out;
        float *q = dst + i * MLRT__PANEL;
        for (size_t o = 0; o < full; o += MLRT__PANEL, q += panel_floats) {
            v4 a = ldb(r + 4 * o), b = ldb(r + 4 * o + 16);
            bad |= special(a) | special(b);
            st(q, a);
            st(q + 4, b);
        }
    }
    return !any(bad) && (full == out || pack_cells(w, true, in, out, full, 0, in, dst + full * in));
}

bool mlrt__dense_pack_f32(const uint8_t *w, bool in_major, size_t in, size_t out, float *dst) {
    return in_major ? pack_in_major(w, in, out, dst) : pack_out_major(w, in, out, dst);
}
