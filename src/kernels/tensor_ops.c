/* kernels/tensor_ops.c — the tensor ops of graphs: elementwise arithmetic with numpy broadcasting,
 * softmax, transpose, pad, slice, gather, element type casts, and the per-channel affine of an
 * unfolded BatchNormalization. Shapes are plain dims arrays. */
#include "kernels.h"
#include <math.h>
#include <string.h>

/* y's index walked over its leading axes, the last one innermost; a broadcast axis has stride 0.
 * STEP(i, oa, ob, n, sa, sb): y[i + j] = a[oa + j sa] op b[ob + j sb] for j < n. */
#define BROADCAST_WALK(STEP)                                                                                           \
    size_t n = 1;                                                                                                      \
    for (uint32_t d = 0; d < r; d++) n *= (size_t)yd[d];                                                               \
    if (r == 0) { STEP(0, 0, 0, 1, 0, 0); return; }                                                                    \
    size_t sa[MLRT__MAX_RANK], sb[MLRT__MAX_RANK], idx[MLRT__MAX_RANK] = {0}, pa = 1, pb = 1;                          \
    for (uint32_t d = r; d-- > 0;) {                                                                                   \
        sa[d] = ad[d] == 1 ? 0 : pa, sb[d] = bd[d] == 1 ? 0 : pb;                                                      \
        pa *= (size_t)ad[d], pb *= (size_t)bd[d];                                                                      \
    }                                                                                                                  \
    size_t last = (size_t)yd[r - 1], oa = 0, ob = 0;                                                                   \
    if (pa == n && pb == n) last = n, r = 1, sa[0] = sb[0] = 1; /* same shapes: one row */                  \
    for (size_t i = 0; i < n; i += last) {                                                                             \
        STEP(i, oa, ob, last, sa[r - 1], sb[r - 1]);                                                                   \
        for (uint32_t d = r - 1; d-- > 0;) { /* next index over the leading axes */                                    \
            idx[d]++, oa += sa[d], ob += sb[d];                                                                        \
            if (idx[d] < (size_t)yd[d]) break;                                                                         \
            oa -= sa[d] * idx[d], ob -= sb[d] * idx[d], idx[d] = 0;                                                    \
        }                                                                                                              \
    }

/* one row: a loop per operation (hot) */
static void float_row(mlrt__bin_kind k, const float *a, size_t sa, const float *b, size_t sb, float *y, size_t n) {
    switch (k) {
    case MLRT__BIN_ADD: for (size_t j = 0; j < n; j++) y[j] = a[j * sa] + b[j * sb]; break;
    case MLRT__BIN_SUB: for (size_t j = 0; j < n; j++) y[j] = a[j * sa] - b[j * sb]; break;
    case MLRT__BIN_MUL: for (size_t j = 0; j < n; j++) y[j] = a[j * sa] * b[j * sb]; break;
    case MLRT__BIN_DIV: for (size_t j = 0; j < n; j++) y[j] = a[j * sa] / b[j * sb]; break;
    }
}

void mlrt__binary(mlrt__bin_kind k, const float *a, const int64_t *ad, const float *b, const int64_t *bd, float *y,
                  const int64_t *yd, uint32_t r) {
#define FLOAT_STEP(i, oa, ob, m, sa, sb) float_row(k, a + (oa), sa, b + (ob), sb, y + (i), m)
    BROADCAST_WALK(FLOAT_STEP)
}

MLRT__SMALL void mlrt__binary_i64(mlrt__bin_kind k, const int64_t *a, const int64_t *ad, const int64_t *b,
                                  const int64_t *bd, int64_t *y, const int64_t *yd, uint32_t r) {
#define I64_STEP(i, oa, ob, m, sa, sb)                                                                                 \
    for (size_t j = 0; j < (m); j++) {                                                                                 \
        int64_t x = a[(oa) + j * (sa)], z = b[(ob) + j * (sb)];                                                        \
        y[(i) + j] = k == MLRT__BIN_ADD ? x + z : k == MLRT__BIN_SUB ? x - z : k == MLRT__BIN_MUL ? x * z : z ? x / z : 0; \
    }
    BROADCAST_WALK(I64_STEP)
}

void mlrt__softmax(const float *x, float *y, size_t outer, size_t n, size_t inner, bool log) {
    for (size_t o = 0; o < outer; o++)
        for (size_t i = 0; i < inner; i++) {
            const float *xs = x + o * n * inner + i;
            float *ys = y + o * n * inner + i, m = xs[0], s = 0.0f;
            for (size_t k = 1; k < n; k++) m = xs[k * inner] > m ? xs[k * inner] : m;
            for (size_t k = 0; k < n; k++) s += mlrt__expf(xs[k * inner] - m);
            if (log) {
                float ls = mlrt__logf(s);
                for (size_t k = 0; k < n; k++) ys[k * inner] = xs[k * inner] - m - ls;
            } else {
                for (size_t k = 0; k < n; k++) ys[k * inner] = mlrt__expf(xs[k * inner] - m) / s;
            }
        }
}

void mlrt__transpose(const void *xv, const int64_t *xd, const int64_t *perm, uint32_t r, void *yv, size_t es) {
    size_t xs[MLRT__MAX_RANK], s[MLRT__MAX_RANK], yd[MLRT__MAX_RANK], idx[MLRT__MAX_RANK] = {0}, n = 1, p = 1;
    for (uint32_t d = r; d-- > 0;) xs[d] = p, p *= (size_t)xd[d];
    for (uint32_t d = 0; d < r; d++) s[d] = xs[perm[d]], yd[d] = (size_t)xd[perm[d]], n *= yd[d];
    size_t off = 0;
    const char *x = xv;
    char *y = yv;
    for (size_t i = 0; i < n; i++) {
        if (es == 4) memcpy(y + i * 4, x + off * 4, 4);
        else memcpy(y + i * 8, x + off * 8, 8);
        for (uint32_t d = r; d-- > 0;) {
            idx[d]++, off += s[d];
            if (idx[d] < yd[d]) break;
            off -= s[d] * idx[d], idx[d] = 0;
        }
    }
}

void mlrt__pad(const float *x, const int64_t *xd, const int64_t *pads, uint32_t r, float value, float *y) {
    size_t yd[MLRT__MAX_RANK], ys[MLRT__MAX_RANK], n = 1, nx = 1, idx[MLRT__MAX_RANK] = {0};
    for (uint32_t d = r; d-- > 0;) yd[d] = (size_t)(xd[d] + pads[d] + pads[r + d]), ys[d] = n, n *= yd[d], nx *= (size_t)xd[d];
    for (size_t i = 0; i < n; i++) y[i] = value;
    if (!nx) return;
    if (r == 0) { y[0] = x[0]; return; }
    size_t last = (size_t)xd[r - 1];
    for (size_t i = 0; i < nx; i += last) { /* each innermost row of x, to its place in y */
        size_t off = (size_t)pads[r - 1];
        for (uint32_t d = 0; d + 1 < r; d++) off += (idx[d] + (size_t)pads[d]) * ys[d];
        memcpy(y + off, x + i, last * sizeof(float));
        for (uint32_t d = r - 1; d-- > 0;) {
            if (++idx[d] < (size_t)xd[d]) break;
            idx[d] = 0;
        }
    }
}

void mlrt__affine(const float *x, const float *scale, const float *shift, size_t outer, size_t c, size_t inner,
                  float *y) {
    for (size_t o = 0; o < outer; o++)
        for (size_t k = 0; k < c; k++, x += inner, y += inner)
            for (size_t i = 0; i < inner; i++) y[i] = x[i] * scale[k] + shift[k];
}

void mlrt__slice(const void *xv, const int64_t *xd, const int64_t *first, const int64_t *step, uint32_t r, void *yv,
                 const int64_t *yd, size_t es) {
    size_t xs[MLRT__MAX_RANK], idx[MLRT__MAX_RANK] = {0}, n = 1, p = 1;
    int64_t off = 0;
    const char *x = xv;
    char *y = yv;
    for (uint32_t d = r; d-- > 0;) xs[d] = p, p *= (size_t)xd[d], n *= (size_t)yd[d];
    for (uint32_t d = 0; d < r; d++) off += first[d] * (int64_t)xs[d];
    for (size_t i = 0; i < n; i++) { /* the walk of y's index: off is x's offset of y[i] */
        memcpy(y + i * es, x + (size_t)off * es, es);
        for (uint32_t d = r; d-- > 0;) {
            idx[d]++, off += step[d] * (int64_t)xs[d];
            if (idx[d] < (size_t)yd[d]) break;
            off -= step[d] * (int64_t)xs[d] * (int64_t)idx[d], idx[d] = 0;
        }
    }
}

int64_t mlrt__gather(const void *xv, size_t outer, size_t n, size_t inner, size_t es, const int64_t *idx, size_t m,
                     void *yv) {
    const char *x = xv;
    char *y = yv;
    const size_t row = inner * es;
    for (size_t k = 0; k < m; k++)
        if (idx[k] < -(int64_t)n || idx[k] >= (int64_t)n) return (int64_t)k;
    for (size_t o = 0; o < outer; o++)
        for (size_t k = 0; k < m; k++) { /* hot loop: one row of inner elements per index */
            size_t i = (size_t)(idx[k] < 0 ? idx[k] + (int64_t)n : idx[k]);
            memcpy(y + (o * m + k) * row, x + (o * n + i) * row, row);
        }
    return -1;
}

void mlrt__cast_i64_f32(const int64_t *x, float *y, size_t n) {
    for (size_t i = 0; i < n; i++) y[i] = (float)x[i];
}

int64_t mlrt__cast_f32_i64(const float *x, int64_t *y, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (!(x[i] > -9.2233715e18f && x[i] < 9.2233715e18f)) return (int64_t)i;
        y[i] = (int64_t)x[i];
    }
    return -1;
}
