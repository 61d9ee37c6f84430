/* kernels/attention.c — the encoder's own kernels: one head of self-attention over one text, the
 * pooling of a text's token vectors into one, and L2 normalization.
 *
 * Attention, per query i of a text of n tokens (head columns of width d):
 *   s[j] = (q_i . k_j) * scale      sixteen keys at a time from kt, the head's keys transposed [d][n16]
 *   p[j] = e^(s[j] - max s) (mlrt__exp4x), then divided by their sum (taken in key order)
 *   out_i = sum_j p[j] v_j           four columns at a time, keys in order
 * Every sum runs in a fixed order and the vectors' lanes are independent: the SIMD128, scalar, WASI
 * and native builds give the same bits (madd fuses only in the relaxed build). The text's tokens are
 * all the keys: padding is never among them, so a text gives the same bits alone as in any batch.
 * Scratch: kt [d][n16] and p [n16], n16 = n rounded up to 16: no n x n buffer at all. */
#include "kernels.h"
#include "simd.h"
#include <math.h>
#include <string.h>

__attribute__((noinline)) void mlrt__attention(const float *q, const float *k, const float *v, size_t stride, size_t n,
                                               size_t d, float scale, float *out, float *kt, float *p) {
    const size_t n16 = (n + 15) & ~(size_t)15;
    const v4 sc = splat(scale);
    for (size_t c = 0; c < d; c++) { /* the keys transposed, zero past n */
        MLRT__ROLLED for (size_t j = 0; j < n; j++) kt[c * n16 + j] = k[j * stride + c];
        MLRT__ROLLED for (size_t j = n; j < n16; j++) kt[c * n16 + j] = 0.0f;
    }
    for (size_t i = 0; i < n; i++) {
        const float *qi = q + i * stride;
        size_t j;
        for (j = 0; j < n16; j += 16) { /* hot loop: the scores, sixteen keys per pass over the query's d values */
            v4 a0 = splat(0.0f), a1 = a0, a2 = a0, a3 = a0;
            const float *kr = kt + j;
            MLRT__ROLLED for (size_t c = 0; c < d; c++, kr += n16) {
                v4 x = splat(qi[c]);
                a0 = madd(a0, ld(kr), x), a1 = madd(a1, ld(kr + 4), x), a2 = madd(a2, ld(kr + 8), x), a3 = madd(a3, ld(kr + 12), x);
            }
            st(p + j, a0 * sc), st(p + j + 4, a1 * sc), st(p + j + 8, a2 * sc), st(p + j + 12, a3 * sc);
        }
        float m = p[0];
        MLRT__ROLLED for (j = 1; j < n; j++) m = p[j] > m ? p[j] : m;
        MLRT__ROLLED for (j = 0; j < n; j += 4) st(p + j, mlrt__exp4x(ld(p + j) - splat(m), splat(0.0f)));
        float sum = 0.0f;
        MLRT__ROLLED for (j = 0; j < n; j++) sum += p[j];
        const float inv = 1.0f / sum;
        MLRT__ROLLED for (j = 0; j < n; j++) p[j] *= inv;
        float *o = out + i * stride;
        size_t c = 0;
        for (; c + 8 <= d; c += 8) { /* hot loop: the weighted values, eight columns at a time, keys in order */
            v4 a0 = splat(0.0f), a1 = a0;
            for (j = 0; j < n; j++) {
                v4 w = splat(p[j]);
                a0 = madd(a0, ld(v + j * stride + c), w);
                a1 = madd(a1, ld(v + j * stride + c + 4), w);
            }
            st(o + c, a0), st(o + c + 4, a1);
        }
        for (; c < d; c++) { /* the last 1..7 columns: lane by lane, keys in the same order */
            float a0 = 0.0f;
            MLRT__ROLLED for (j = 0; j < n; j++) a0 = madd(splat(a0), splat(v[j * stride + c]), splat(p[j]))[0];
            o[c] = a0;
        }
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
