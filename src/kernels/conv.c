/* kernels/conv.c — 2-D convolution and pooling on NCHW tensors (1-D ops run as height 1).
 *
 * A convolution is a dense layer over patches: im2col copies, for each output pixel p, the
 * C/groups x kh x kw inputs its window sees (zero where it overhangs the padding) into
 * col[p][k]; the packed SIMD dense kernel computes out[p][o] for all pixels, bias and activation
 * included; the result is transposed back to channel-major. Depthwise convolutions (one input
 * channel per group) have too little work per pixel for that and run a direct loop. */
#include "../model/graph.h"
#include <math.h>

/* col[p][k] for one group's channels [c0, c0 + cg) of image x [c][h][w]. */
static void im2col(const mlrt_gop *op, const float *x, uint32_t c0, uint32_t cg, float *col) {
    const size_t hw = (size_t)op->h * op->w;
    for (uint32_t oy = 0; oy < op->oh; oy++)
        for (uint32_t ox = 0; ox < op->ow; ox++) {
            float *dst = col + ((size_t)oy * op->ow + ox) * op->k_in;
            int64_t y0 = (int64_t)oy * op->sh - op->pt, x0 = (int64_t)ox * op->sw - op->pl;
            for (uint32_t ci = 0; ci < cg; ci++) {
                const float *plane = x + (c0 + ci) * hw;
                for (uint32_t ky = 0; ky < op->kh; ky++) {
                    int64_t iy = y0 + (int64_t)ky * op->dh;
                    if (iy < 0 || iy >= op->h) {
                        for (uint32_t kx = 0; kx < op->kw; kx++) *dst++ = 0.0f;
                        continue;
                    }
                    const float *row = plane + iy * op->w;
                    for (uint32_t kx = 0; kx < op->kw; kx++) {
                        int64_t ix = x0 + (int64_t)kx * op->dw;
                        *dst++ = ix >= 0 && ix < op->w ? row[ix] : 0.0f;
                    }
                }
            }
        }
}

/* One output channel of a depthwise convolution: y [oh][ow] from plane [h][w]. */
static void depthwise(const mlrt_gop *op, const float *plane, const float *w, float bias, float *y) {
    for (uint32_t oy = 0; oy < op->oh; oy++) {
        int64_t y0 = (int64_t)oy * op->sh - op->pt;
        for (uint32_t ox = 0; ox < op->ow; ox++) {
            int64_t x0 = (int64_t)ox * op->sw - op->pl;
            float acc = 0.0f;
            /* hot loop: the window, skipping what overhangs the padding */
            for (uint32_t ky = 0; ky < op->kh; ky++) {
                int64_t iy = y0 + (int64_t)ky * op->dh;
                if (iy < 0 || iy >= op->h) continue;
                for (uint32_t kx = 0; kx < op->kw; kx++) {
                    int64_t ix = x0 + (int64_t)kx * op->dw;
                    if (ix >= 0 && ix < op->w) acc += plane[iy * op->w + ix] * w[ky * op->kw + kx];
                }
            }
            y[(size_t)oy * op->ow + ox] = acc + bias;
        }
    }
}

void mlrt_conv_forward(const mlrt_gop *op, const float *x, float *y, float *col, size_t images) {
    const size_t hw = (size_t)op->h * op->w, p = (size_t)op->oh * op->ow;
    const uint32_t cg = op->c / op->groups, ocg = op->oc / op->groups;
    for (size_t n = 0; n < images; n++, x += op->c * hw, y += op->oc * p) {
        if (op->depthwise) {
            uint32_t mult = op->oc / op->c;
            for (uint32_t o = 0; o < op->oc; o++) {
                depthwise(op, x + (o / mult) * hw, op->wdw + (size_t)o * op->kh * op->kw, op->bdw[o], y + o * p);
                mlrt_activate(op->act, y + o * p, p);
            }
            continue;
        }
        float *tmp = col + p * op->k_in;
        for (uint32_t g = 0; g < op->groups; g++) {
            im2col(op, x, g * cg, cg, col);
            mlrt_dense_forward(&op->dense[g], col, op->k_in, tmp, ocg, p);
            float *yg = y + (size_t)g * ocg * p;
            for (size_t q = 0; q < p; q++) /* [p][o] -> [o][p] */
                for (uint32_t o = 0; o < ocg; o++) yg[o * p + q] = tmp[q * ocg + o];
        }
    }
}

void mlrt_pool_forward(const mlrt_gop *op, const float *x, float *y, size_t images) {
    const size_t hw = (size_t)op->h * op->w, p = (size_t)op->oh * op->ow;
    for (size_t plane = 0; plane < images * op->c; plane++, x += hw, y += p) {
        if (op->kind == MLRT_GOP_GLOBALAVG) {
            float s = 0.0f;
            for (size_t i = 0; i < hw; i++) s += x[i];
            y[0] = s / (float)hw;
            continue;
        }
        for (uint32_t oy = 0; oy < op->oh; oy++)
            for (uint32_t ox = 0; ox < op->ow; ox++) {
                int64_t y0 = (int64_t)oy * op->sh - op->pt, x0 = (int64_t)ox * op->sw - op->pl;
                float acc = op->kind == MLRT_GOP_MAXPOOL ? -INFINITY : 0.0f;
                uint32_t inside = 0;
                for (uint32_t ky = 0; ky < op->kh; ky++) {
                    int64_t iy = y0 + (int64_t)ky * op->dh;
                    if (iy < 0 || iy >= op->h) continue;
                    for (uint32_t kx = 0; kx < op->kw; kx++) {
                        int64_t ix = x0 + (int64_t)kx * op->dw;
                        if (ix < 0 || ix >= op->w) continue;
                        float v = x[iy * op->w + ix];
                        if (op->kind == MLRT_GOP_MAXPOOL) acc = v > acc ? v : acc;
                        else acc += v;
                        inside++;
                    }
                }
                if (op->kind == MLRT_GOP_AVGPOOL) {
                    float div = (float)inside;
                    if (op->count_pad) { /* the window clipped to the padded input */
                        int64_t ye = y0 + (int64_t)(op->kh - 1) * op->dh + 1, xe = x0 + (int64_t)(op->kw - 1) * op->dw + 1;
                        int64_t ylim = (int64_t)op->h + op->pb, xlim = (int64_t)op->w + op->pr;
                        div = (float)(((ye < ylim ? ye : ylim) - y0 + op->dh - 1) / op->dh * (((xe < xlim ? xe : xlim) - x0 + op->dw - 1) / op->dw));
                    }
                    acc = div > 0 ? acc / div : 0.0f;
                }
                y[(size_t)oy * op->ow + ox] = acc;
            }
    }
}
