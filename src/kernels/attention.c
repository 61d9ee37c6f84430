/* kernels/attention.c — the encoder's own kernels: one head of self-attention over one text, the
 * pooling of a text's token vectors into one, and L2 normalization.
 *
 * Attention, per query i of a text of n tokens (head columns of width d):
 *   s[j] = (q_i . k_j) * scale      sixteen keys at a time from kt, the head's keys transposed [d][n16]
 *          (+ rel[pos_j - pos_i]    MPNet's relative position bias, when given)
 *   p[j] = e^(s[j] - max s) (mlrt__exp4x), then times 1 / their sum (in four lanes, then added in a fixed order)
 *   out_i = sum_j p[j] v_j           sixteen columns at a time, keys in order
 * Queries go two at a time, so that each key and value loaded serves both (8 accumulators).
 * Every sum runs in a fixed order and the vectors' lanes are independent: the SIMD128, scalar, WASI
 * and native builds give the same bits (madd fuses only in the relaxed build). The text's tokens are
 * all the keys: padding is never among them, so a text gives the same bits alone as in any batch.
 * Scratch: kt [d][n16] and p [2][n16], n16 = n rounded up to 16: no n x n buffer at all. */
#include "kernels.h"
#include "simd.h"
#include <math.h>
#include <string.h>

/* Two weighted sums of sixteen columns: oa = sc * sum_k a[k] m_k and ob likewise with b, m_k the row
 * m + k * ms [16], k = 0 .. count - 1 in order (b == a, ob == oa: one). Serves both halves of
 * attention: the scores (rows: the transposed keys, weights: a query's values) and the weighted
 * values (rows: value rows, weights: the probabilities). */
__attribute__((always_inline)) static inline void pair16(const float *m, size_t ms, size_t count, const float *a, const float *b, v4 sc,
                                             float *oa, float *ob) {
    v4 a0 = splat(0.0f), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
    MLRT__ROLLED for (size_t k = 0; k < count; k++, m += ms) { /* hot loop: one row loaded serves both sums */
        v4 m0 = ld(m), m1 = ld(m + 4), m2 = ld(m + 8), m3 = ld(m + 12), x = splat(a[k]), y = splat(b[k]);
        a0 = madd(a0, m0, x), a1 = madd(a1, m1, x), a2 = madd(a2, m2, x), a3 = madd(a3, m3, x);
        b0 = madd(b0, m0, y), b1 = madd(b1, m1, y), b2 = madd(b2, m2, y), b3 = madd(b3, m3, y);
    }
    st(oa, a0 * sc), st(oa + 4, a1 * sc), st(oa + 8, a2 * sc), st(oa + 12, a3 * sc);
    st(ob, b0 * sc), st(ob + 4, b1 * sc), st(ob + 8, b2 * sc), st(ob + 12, b3 * sc);
}

/* p [n] <- softmax(p): e^(p[j] - max), then times 1 / their sum. The sum runs in four lanes (keys j,
 * j + 4, ... in each), then adds them as (0 + 1) + (2 + 3): a fixed order, so every build gives the
 * same bits. Lanes past n (p's scratch up to n16) take no part. */
__attribute__((noinline)) static void softmax_row(float *p, size_t n) {
    const i4 lane = {0, 1, 2, 3};
    const v4 zero = splat(0.0f);
    v4 m4 = splat(p[0]), s4 = zero;
    MLRT__ROLLED for (size_t j = 0; j < n; j += 4) {
        v4 x = ld(p + j);
        m4 = select4((lane < (int32_t)(n - j)) & (x > m4), x, m4);
    }
    float m = m4[0] > m4[1] ? m4[0] : m4[1], m23 = m4[2] > m4[3] ? m4[2] : m4[3];
    const v4 mv = splat(m23 > m ? m23 : m);
    MLRT__ROLLED for (size_t j = 0; j < n; j += 4) {
        v4 e = mlrt__exp4x(ld(p + j) - mv, zero);
        st(p + j, e);
        s4 += select4(lane < (int32_t)(n - j), e, zero);
    }
    const v4 inv = splat(1.0f / ((s4[0] + s4[1]) + (s4[2] + s4[3])));
    MLRT__ROLLED for (size_t j = 0; j < n; j += 4) st(p + j, ld(p + j) * inv);
}

/* o0 = sum_j p0[j] v_j and o1 likewise (o1 == o0, p1 == p0: one query), keys in order. */
static void values2(const float *v, size_t stride, size_t n, size_t d, const float *p0, const float *p1, float *o0, float *o1) {
    size_t c = 0;
    for (; c + 16 <= d; c += 16) pair16(v + c, stride, n, p0, p1, splat(1.0f), o0 + c, o1 + c); /* (times 1: exact) */
    MLRT__ROLLED for (; c < d; c++) { /* the last 1..15 columns (heads are 32 or 64 wide): lane by lane, keys in the same order */
        float a = 0.0f, b = 0.0f;
        MLRT__ROLLED for (size_t j = 0; j < n; j++) a = madd(splat(a), splat(v[j * stride + c]), splat(p0[j]))[0],
                                                    b = madd(splat(b), splat(v[j * stride + c]), splat(p1[j]))[0];
        o1[c] = b, o0[c] = a;
    }
}

/* p [n] += the bias of query qp: in key order, after the scaling (as MPNet adds it). */
static void add_bias(float *p, size_t n, const mlrt__attn_bias *b, uint32_t qp) {
    const float *r = b->rel - (ptrdiff_t)qp;
    MLRT__ROLLED for (size_t j = 0; j < n; j++) p[j] += r[b->kpos[j]];
}

__attribute__((noinline)) void mlrt__attention(const float *q, size_t nq, const float *k, const float *v, size_t stride, size_t n,
                                               size_t d, float scale, const mlrt__attn_bias *bias, float *out, float *kt, float *p) {
    const size_t n16 = (n + 15) & ~(size_t)15;
    for (size_t c = 0; c < d; c++) { /* the keys transposed, zero past n */
        MLRT__ROLLED for (size_t j = 0; j < n; j++) kt[c * n16 + j] = k[j * stride + c];
        MLRT__ROLLED for (size_t j = n; j < n16; j++) kt[c * n16 + j] = 0.0f;
    }
    /* queries two at a time (the last alone as its own pair): each key and value row loaded serves both */
    for (size_t i = 0; i < nq; i += 2) {
        const size_t i1 = i + 1 < nq ? i + 1 : i;
        float *p0 = p, *p1 = i1 != i ? p + n16 : p;
        for (size_t j = 0; j < n16; j += 16) pair16(kt + j, n16, d, q + i * stride, q + i1 * stride, splat(scale), p0 + j, p1 + j);
        if (bias) add_bias(p0, n, bias, bias->qpos[i]);
        if (bias && p1 != p0) add_bias(p1, n, bias, bias->qpos[i1]);
        softmax_row(p0, n);
        if (p1 != p0) softmax_row(p1, n);
        values2(v, stride, n, d, p0, p1, out + i * stride, out + i1 * stride);
    }
}

/* ------------------------------------------------------------------ pooling */

MLRT__SMALL __attribute__((noinline)) void mlrt__pool_tokens(const float *h, size_t stride, size_t n, size_t dim, const uint32_t *pos,
                                                 mlrt__tpool mode, float *out) {
    if (mode == MLRT__TPOOL_CLS || mode == MLRT__TPOOL_LAST) {
        memcpy(out, h + (mode == MLRT__TPOOL_CLS ? 0 : n - 1) * stride, dim * sizeof *out);
        return;
    }
    memcpy(out, h, dim * sizeof *out);
    if (mode == MLRT__TPOOL_MAX) {
        for (size_t t = 1; t < n; t++)
            for (size_t c = 0; c < dim; c++) out[c] = h[t * stride + c] > out[c] ? h[t * stride + c] : out[c];
        return;
    }
    const bool weighted = mode == MLRT__TPOOL_WEIGHTED;
    float div = weighted ? (float)(pos[0] + 1) : (float)n;
    if (weighted) for (size_t c = 0; c < dim; c++) out[c] *= div;
    for (size_t t = 1; t < n; t++) { /* hot loop: token by token, in order */
        const float w = (float)(pos[t] + 1), *r = h + t * stride;
        if (weighted) for (size_t c = 0; c < dim; c++) out[c] += r[c] * w;
        else for (size_t c = 0; c < dim; c++) out[c] += r[c];
        div += weighted ? w : 0.0f;
    }
    if (mode == MLRT__TPOOL_MEAN_SQRT) div = sqrtf(div);
    for (size_t c = 0; c < dim; c++) out[c] /= div;
}

MLRT__SMALL void mlrt__l2_normalize(float *v, size_t n) {
    double s = 0.0;
    for (size_t i = 0; i < n; i++) s += (double)v[i] * v[i];
    float norm = (float)sqrt(s);
    norm = norm > 1e-12f ? norm : 1e-12f;
    for (size_t i = 0; i < n; i++) v[i] /= norm;
}
