/* kernels/attention.c — the encoder's own kernels: one head of self-attention over one text, the
 * pooling of a text's token vectors into one, and L2 normalization.
 *
 * Attention, per query i of a text of n tokens (head columns of width d):
 *   s[j] = (q_i . k_j) * scale      four keys at a time from kt, the head's keys transposed [d][n4]
 *   p[j] = e^(s[j] - max s) (exp4), then divided by their sum (taken in key order)
 *   out_i = sum_j p[j] v_j           four columns at a time, keys in order
 * Every sum runs in a fixed order and the vectors' lanes are independent: the SIMD128, scalar, WASI
 * and native builds give the same bits (madd fuses only in the relaxed build). The text's tokens are
 * all the keys: padding is never among them, so a text gives the same bits alone as in any batch.
 * Scratch: kt [d][n4] and p [n4], n4 = n rounded up to 4: no n x n buffer at all. */
#include "kernels.h"
#include "simd.h"
#include <math.h>
#include <string.h>

/* s[j0 .. j0 + 4 * NB) = q . kt[.][j], NB blocks of four keys, each key's sum in d order. */
#define SCORES(NB)                                                                                  \
    do {                                                                                            \
        v4 a[NB];                                                                                   \
        for (int b = 0; b < NB; b++) a[b] = splat(0.0f);                                           \
        for (size_t c = 0; c < d; c++) {                                                            \
            v4 x = splat(qi[c]);                                                                    \
            const float *kr = kt + c * n4 + j;                                                      \
            for (int b = 0; b < NB; b++) a[b] = madd(a[b], ld(kr + 4 * b), x);                     \
        }                                                                                           \
        for (int b = 0; b < NB; b++) st(p + j + 4 * b, a[b] * sc);                                 \
    } while (0)

__attribute__((noinline)) void mlrt__attention(const float *q, const float *k, const float *v, size_t stride, size_t n,
                                               size_t d, float scale, float *out, float *kt, float *p) {
    const size_t n4 = (n + 3) & ~(size_t)3;
    const v4 sc = splat(scale);
    for (size_t c = 0; c < d; c++) {
        for (size_t j = 0; j < n; j++) kt[c * n4 + j] = k[j * stride + c];
        for (size_t j = n; j < n4; j++) kt[c * n4 + j] = 0.0f;
    }
    for (size_t i = 0; i < n; i++) {
        const float *qi = q + i * stride;
        size_t j = 0;
        /* hot loop: the scores, sixteen keys per pass over the query's d values */
        for (; j + 16 <= n4; j += 16) SCORES(4);
        for (; j < n4; j += 4) SCORES(1);
        float m = p[0];
        for (j = 1; j < n; j++) m = p[j] > m ? p[j] : m;
        for (j = 0; j < n4; j += 4) st(p + j, exp4(ld(p + j) - splat(m)));
        float sum = 0.0f;
        for (j = 0; j < n; j++) sum += p[j];
        const float inv = 1.0f / sum;
        float *o = out + i * stride;
        size_t c = 0;
        /* hot loop: the weighted values, eight columns at a time, keys in order */
        for (; c + 8 <= d; c += 8) {
            v4 a0 = splat(0.0f), a1 = splat(0.0f);
            for (j = 0; j < n; j++) {
                v4 w = splat(p[j] * inv);
                a0 = madd(a0, ld(v + j * stride + c), w);
                a1 = madd(a1, ld(v + j * stride + c + 4), w);
            }
            st(o + c, a0), st(o + c + 4, a1);
        }
        for (; c + 4 <= d; c += 4) {
            v4 a0 = splat(0.0f);
            for (j = 0; j < n; j++) a0 = madd(a0, ld(v + j * stride + c), splat(p[j] * inv));
            st(o + c, a0);
        }
        for (; c < d; c++) { /* a head width that is not a multiple of 4: lane by lane, the same order */
            v4 a0 = splat(0.0f);
            for (j = 0; j < n; j++) a0 = madd(a0, splat(v[j * stride + c]), splat(p[j] * inv));
            o[c] = a0[0];
        }
    }
}

/* ------------------------------------------------------------------ pooling */

__attribute__((noinline)) void mlrt__pool_tokens(const float *h, size_t stride, size_t n, size_t dim, const uint32_t *pos,
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

void mlrt__l2_normalize(float *v, size_t n) {
    double s = 0.0;
    for (size_t i = 0; i < n; i++) s += (double)v[i] * v[i];
    float norm = (float)sqrt(s);
    norm = norm > 1e-12f ? norm : 1e-12f;
    for (size_t i = 0; i < n; i++) v[i] /= norm;
}
