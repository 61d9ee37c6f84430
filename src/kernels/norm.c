/* kernels/norm.c — layer normalization over the last axes, as ONNX's LayerNormalization defines it:
 * the mean and the biased variance of each row, epsilon inside the square root, then the scale and
 * the bias. A residual added first (h = x + res) makes the transformer's "Add & Norm" one pass.
 *
 * The row's sums run in double, in index order, and 1 / sqrt(var + eps) too (IEEE's sqrt is exact):
 * every build gives the same bits, and a row of large values with a small spread keeps its precision. */
#include "kernels.h"
#include <math.h>

void mlrt__layernorm(const mlrt__norm *p, const float *x, const float *res, float *y, float *mean, float *inv_std) {
    const size_t n = p->n;
    for (size_t r = 0; r < p->rows; r++, x += n, y += n) {
        const float *rr = res ? res + r * n : NULL, *h = x;
        double s = 0.0;
        if (rr) {
            for (size_t i = 0; i < n; i++) { /* hot loop: the residual, then the row's sum */
                float v = x[i] + rr[i];
                y[i] = v;
                s += v;
            }
            h = y;
        } else {
            for (size_t i = 0; i < n; i++) s += x[i]; /* hot loop */
        }
        double mu = s / (double)n, v = 0.0;
        for (size_t i = 0; i < n; i++) { /* hot loop: the biased variance around the mean */
            double d = h[i] - mu;
            v += d * d;
        }
        double inv = 1.0 / sqrt(v / (double)n + (double)p->eps);
        const float *sc = p->scale, *b = p->bias;
        if (b)
            for (size_t i = 0; i < n; i++) y[i] = (float)((h[i] - mu) * inv) * sc[i] + b[i]; /* hot loop */
        else
            for (size_t i = 0; i < n; i++) y[i] = (float)((h[i] - mu) * inv) * sc[i];
        if (mean) mean[r] = (float)mu;
        if (inv_std) inv_std[r] = (float)inv;
    }
}
