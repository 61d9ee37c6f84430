/* kernels/tensor_ops.c — elementwise ops with numpy broadcasting, softmax, transpose, pad, and the
 * per-channel affine of an unfolded BatchNormalization. */
#include "../model/graph.h"
#include <math.h>
#include <string.h>

static inline float apply(mlrt__bin_kind k, float a, float b) {
    return k == MLRT__BIN_ADD ? a + b : k == MLRT__BIN_SUB ? a - b : k == MLRT__BIN_MUL ? a * b : a / b;
}

void mlrt__binary(mlrt__bin_kind k, const float *a, const int64_t *ad, const float *b, const int64_t *bd,
                 float *y, const int64_t *yd, uint32_t r) {
    size_t n = 1, na = 1, nb = 1;
    for (uint32_t d = 0; d < r; d++) n *= (size_t)yd[d], na *= (size_t)ad[d], nb *= (size_t)bd[d];
    if (na == n && nb == n) { /* same shapes */
        for (size_t i = 0; i < n; i++) y[i] = apply(k, a[i], b[i]);
        return;
    }
    if (na == n && nb == 1) { for (size_t i = 0; i < n; i++) y[i] = apply(k, a[i], b[0]); return; }
    if (nb == n && na == 1) { for (size_t i = 0; i < n; i++) y[i] = apply(k, a[0], b[i]); return; }
    /* general: walk y's index; a broadcast axis has stride 0 */
    size_t sa[MLRT__MAX_RANK], sb[MLRT__MAX_RANK], idx[MLRT__MAX_RANK] = {0}, pa = 1, pb = 1;
    for (uint32_t d = r; d-- > 0;) {
        sa[d] = ad[d] == 1 ? 0 : pa, sb[d] = bd[d] == 1 ? 0 : pb;
        pa *= (size_t)ad[d], pb *= (size_t)bd[d];
    }
    if (r == 0) { y[0] = apply(k, a[0], b[0]); return; }
    size_t last = (size_t)yd[r - 1], oa = 0, ob = 0;
    for (size_t i = 0; i < n; i += last) {
        for (size_t j = 0; j < last; j++) y[i + j] = apply(k, a[oa + j * sa[r - 1]], b[ob + j * sb[r - 1]]);
        for (uint32_t d = r - 1; d-- > 0;) { /* next index over the leading axes */
            idx[d]++, oa += sa[d], ob += sb[d];
            if (idx[d] < (size_t)yd[d]) break;
            oa -= sa[d] * idx[d], ob -= sb[d] * idx[d], idx[d] = 0;
        }
    }
}

void mlrt__unary(const mlrt__gop *op, const float *x, float *y, size_t n) {
    switch ((mlrt__un_kind)op->sub) {
    case MLRT__UN_RELU: for (size_t i = 0; i < n; i++) y[i] = x[i] > 0.0f ? x[i] : 0.0f; break;
    case MLRT__UN_LEAKY: for (size_t i = 0; i < n; i++) y[i] = x[i] >= 0.0f ? x[i] : op->alpha * x[i]; break;
    case MLRT__UN_SIGMOID: for (size_t i = 0; i < n; i++) y[i] = 1.0f / (1.0f + expf(-x[i])); break;
    case MLRT__UN_TANH: for (size_t i = 0; i < n; i++) y[i] = tanhf(x[i]); break;
    case MLRT__UN_CLIP:
        for (size_t i = 0; i < n; i++) y[i] = x[i] < op->lo ? op->lo : x[i] > op->hi ? op->hi : x[i];
        break;
    }
}

void mlrt__softmax(const float *x, float *y, size_t outer, size_t n, size_t inner, bool log) {
    for (size_t o = 0; o < outer; o++)
        for (size_t i = 0; i < inner; i++) {
            const float *xs = x + o * n * inner + i;
            float *ys = y + o * n * inner + i, m = xs[0], s = 0.0f;
            for (size_t k = 1; k < n; k++) m = xs[k * inner] > m ? xs[k * inner] : m;
            for (size_t k = 0; k < n; k++) s += expf(xs[k * inner] - m);
            if (log) {
                float ls = logf(s);
                for (size_t k = 0; k < n; k++) ys[k * inner] = xs[k * inner] - m - ls;
            } else {
                for (size_t k = 0; k < n; k++) ys[k * inner] = expf(xs[k * inner] - m) / s;
            }
        }
}

void mlrt__transpose(const float *x, const int64_t *xd, const int64_t *perm, uint32_t r, float *y) {
    size_t xs[MLRT__MAX_RANK], s[MLRT__MAX_RANK], yd[MLRT__MAX_RANK], idx[MLRT__MAX_RANK] = {0}, n = 1, p = 1;
    for (uint32_t d = r; d-- > 0;) xs[d] = p, p *= (size_t)xd[d];
    for (uint32_t d = 0; d < r; d++) s[d] = xs[perm[d]], yd[d] = (size_t)xd[perm[d]], n *= yd[d];
    size_t off = 0;
    for (size_t i = 0; i < n; i++) {
        y[i] = x[off];
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

/* The walk of y's index for a slice: off is x's offset of y[i]. */
#define SLICE_BODY(T)                                                                                   \
    size_t xs[MLRT__MAX_RANK], idx[MLRT__MAX_RANK] = {0}, n = 1, p = 1;                                  \
    int64_t off = 0;                                                                                    \
    for (uint32_t d = r; d-- > 0;) xs[d] = p, p *= (size_t)xd[d], n *= (size_t)yd[d];                  \
    for (uint32_t d = 0; d < r; d++) off += first[d] * (int64_t)xs[d];                                  \
    for (size_t i = 0; i < n; i++) {                                                                    \
        y[i] = x[off];                                                                                  \
        for (uint32_t d = r; d-- > 0;) {                                                                \
            idx[d]++, off += step[d] * (int64_t)xs[d];                                                  \
            if (idx[d] < (size_t)yd[d]) break;                                                          \
            off -= step[d] * (int64_t)xs[d] * (int64_t)idx[d], idx[d] = 0;                              \
        }                                                                                               \
    }

void mlrt__slice(const float *x, const int64_t *xd, const int64_t *first, const int64_t *step, uint32_t r, float *y,
                const int64_t *yd) {
    SLICE_BODY(float)
}

void mlrt__slice_i64(const int64_t *x, const int64_t *xd, const int64_t *first, const int64_t *step, uint32_t r,
                    int64_t *y, const int64_t *yd) {
    SLICE_BODY(int64_t)
}
