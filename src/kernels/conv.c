/* kernels/conv.c — 2-D convolution and pooling on NCHW tensors (1-D ops run as height 1).
 *
 * A convolution is a matrix product per image and group:
 *     y[o][p] = b[o] + sum_k w[o][k] col[k][p]       o < oc/groups, p < oh*ow, k < c/groups*kh*kw
 * im2col writes the patches col[k][p] (for each tap k = (channel, ky, kx), the input values the
 * output pixels see through it; zero where the window overhangs the padding) in the layout the
 * dense kernel (kernels/dense.c) reads packed weights in: panels of 8 pixels, col[p / 8][k][p % 8].
 * The dense kernel then runs the channels' weights as its rows, 5 channels x 8 pixels at a time,
 * and writes y channel-major (NCHW) directly; the bias and the activation follow per channel.
 * A convolution with stride 1 skips the patches: its input is copied once into a zero-padded
 * plane of width wp, and every output pixel q = oy * wp + ox (the columns past ow are computed and
 * dropped) reads tap (ky, kx) at q + ky * dh * wp + kx * dw: contiguous vectors, 4 channels x 8
 * pixels at a time, against weights packed [oc / 4][k][4].
 * Each y[o][p] sums k in ascending order, in every build and for any batch.
 * Depthwise convolutions (one input channel per group) have too little work per pixel for that
 * and run a direct loop. */
#include "kernels.h"
#include "simd.h"
#include <math.h>
#include <string.h>

/* Floats after a direct convolution's padded planes that its last pixel vectors may read. */
#define CONV_SLACK(g) ((size_t)((g)->kh - 1) * (g)->dh * ((g)->w + (g)->pl + (g)->pr) + (size_t)((g)->kw - 1) * (g)->dw + 16)

/* The output columns [lo, hi) whose input column ox * s + x0 lies in [0, w). */
static void valid_cols(int64_t x0, uint32_t s, uint32_t w, uint32_t ow, uint32_t *lo, uint32_t *hi) {
    int64_t a = x0 >= 0 ? 0 : (-x0 + s - 1) / s, b = x0 >= (int64_t)w ? 0 : ((int64_t)w - 1 - x0) / s + 1;
    if (b > ow) b = ow;
    if (a > b) a = b;
    *lo = (uint32_t)a, *hi = (uint32_t)b;
}

/* The patches of one group's channels [c0, c0 + cg) of image x [c][h][w], in panels of 8 pixels:
 * col[p / 8][k][p % 8]; the lanes past the last pixel are zero. */
MLRT__SMALL __attribute__((noinline)) static void im2col(const mlrt__conv_geom *op, uint32_t k_in, const float *x, uint32_t c0, uint32_t cg, float *col) {
    const size_t hw = (size_t)op->h * op->w, panel = (size_t)k_in * MLRT__PANEL, p = (size_t)op->oh * op->ow;
    for (size_t k = 0, last = p / MLRT__PANEL * panel; p % MLRT__PANEL && k < k_in; k++)
        for (size_t j = p % MLRT__PANEL; j < MLRT__PANEL; j++) col[last + k * MLRT__PANEL + j] = 0.0f;
    for (uint32_t ci = 0; ci < cg; ci++)
        for (uint32_t ky = 0; ky < op->kh; ky++)
            for (uint32_t kx = 0; kx < op->kw; kx++) {
                float *pp = col + (((size_t)ci * op->kh + ky) * op->kw + kx) * MLRT__PANEL; /* pixel 0's panel, tap k */
                uint32_t lane = 0, lo, hi;
                int64_t x0 = (int64_t)kx * op->dw - op->pl;
                valid_cols(x0, op->sw, op->w, op->ow, &lo, &hi);
                for (uint32_t oy = 0; oy < op->oh; oy++) {
                    int64_t iy = (int64_t)oy * op->sh - op->pt + (int64_t)ky * op->dh;
                    bool inside = iy >= 0 && iy < op->h;
                    const float *src = x + (c0 + ci) * hw + (size_t)(inside ? iy : 0) * op->w;
                    uint32_t a = inside ? lo : op->ow, z = inside ? hi : op->ow;
                    /* hot loop: an output row's values through tap k, lane by lane into their panels */
#define NEXT_PIXEL() if (++lane == MLRT__PANEL) lane = 0, pp += panel
                    uint32_t ox = 0;
                    for (; ox < a; ox++) { pp[lane] = 0.0f; NEXT_PIXEL(); }
                    if (op->sw == 1) for (const float *s = src + x0; ox < z; ox++) { pp[lane] = s[ox]; NEXT_PIXEL(); }
                    else for (; ox < z; ox++) { pp[lane] = src[x0 + (int64_t)ox * op->sw]; NEXT_PIXEL(); }
                    for (; ox < op->ow; ox++) { pp[lane] = 0.0f; NEXT_PIXEL(); }
#undef NEXT_PIXEL
                }
            }
}

/* Stride 1: the group's channels [c0, c0 + cg) of x, zero-padded, into xp [cg][hp][wp] (+ zeros
 * after, for the last vectors' overreach). */
MLRT__SMALL __attribute__((noinline)) static void pad_planes(const mlrt__conv_geom *op, const float *x, uint32_t c0, uint32_t cg, float *xp) {
    const size_t hw = (size_t)op->h * op->w, wp = (size_t)op->w + op->pl + op->pr, hp = (size_t)op->h + op->pt + op->pb;
    memset(xp, 0, (cg * hp * wp + CONV_SLACK(op)) * sizeof(float));
    for (uint32_t ci = 0; ci < cg; ci++)
        for (uint32_t iy = 0; iy < op->h; iy++)
            memcpy(xp + ((size_t)ci * hp + op->pt + iy) * wp + op->pl, x + (c0 + ci) * hw + (size_t)iy * op->w,
                   op->w * sizeof(float));
}

/* stage[o][q] = sum over channels and taps of w4[k][o] xp[c][q + off[t]], o < 4, q < pv (a multiple of 8). */
__attribute__((noinline)) static void direct_4x8(const float *xp, size_t plane, uint32_t cg, const int32_t *off,
                                                 uint32_t taps, const float *w4, size_t pv, float *stage) {
    for (size_t q = 0; q < pv; q += 8) {
        v4 a0 = {0}, a1 = {0}, b0 = {0}, b1 = {0}, c0 = {0}, c1 = {0}, d0 = {0}, d1 = {0};
        const float *w = w4;
        for (uint32_t ci = 0; ci < cg; ci++) {
            const float *xc = xp + ci * plane + q;
            /* hot loop: a tap's two pixel vectors feed four channels */
            for (uint32_t t = 0; t < taps; t++, w += 4) {
                v4 x0 = ld(xc + off[t]), x1 = ld(xc + off[t] + 4), s;
                s = splat(w[0]); a0 = madd(a0, s, x0); a1 = madd(a1, s, x1);
                s = splat(w[1]); b0 = madd(b0, s, x0); b1 = madd(b1, s, x1);
                s = splat(w[2]); c0 = madd(c0, s, x0); c1 = madd(c1, s, x1);
                s = splat(w[3]); d0 = madd(d0, s, x0); d1 = madd(d1, s, x1);
            }
        }
        st(stage + q, a0); st(stage + q + 4, a1);
        st(stage + pv + q, b0); st(stage + pv + q + 4, b1);
        st(stage + 2 * pv + q, c0); st(stage + 2 * pv + q + 4, c1);
        st(stage + 3 * pv + q, d0); st(stage + 3 * pv + q + 4, d1);
    }
}

/* A stride-1 convolution of one image: cv->w packed [groups][ocg / 4 rounded up][k][4]. */
MLRT__SMALL __attribute__((noinline)) static void conv_direct(const mlrt__conv *cv, const float *x, float *y, float *scratch) {
    const mlrt__conv_geom *op = &cv->g;
    const size_t wp = (size_t)op->w + op->pl + op->pr, hp = (size_t)op->h + op->pt + op->pb, p = (size_t)op->oh * op->ow;
    const size_t pv = ((size_t)op->oh * wp + 7) / 8 * 8, taps = (size_t)op->kh * op->kw;
    const uint32_t cg = op->c / op->groups, ocg = op->oc / op->groups, blocks = (ocg + 3) / 4;
    float *xp = scratch, *stage = scratch + cg * hp * wp + CONV_SLACK(op);
    int32_t off[64];
    for (uint32_t ky = 0; ky < op->kh; ky++)
        for (uint32_t kx = 0; kx < op->kw; kx++) off[ky * op->kw + kx] = (int32_t)(ky * op->dh * wp + kx * op->dw);
    for (uint32_t g = 0; g < op->groups; g++) {
        pad_planes(op, x, g * cg, cg, xp);
        for (uint32_t bk = 0; bk < blocks; bk++) {
            direct_4x8(xp, hp * wp, cg, off, (uint32_t)taps, cv->w + ((size_t)g * blocks + bk) * cv->k_in * 4, pv, stage);
            for (uint32_t j = 0; j < 4 && bk * 4 + j < ocg; j++) { /* the valid columns, plus bias and activation */
                uint32_t o = g * ocg + bk * 4 + j;
                float *yo = y + o * p, bias = cv->b[o];
                for (uint32_t oy = 0; oy < op->oh; oy++)
                    for (uint32_t ox = 0; ox < op->ow; ox++) yo[oy * op->ow + ox] = stage[j * pv + oy * wp + ox] + bias;
                mlrt__activate(cv->act, yo, p);
            }
        }
    }
}

/* One output channel of a depthwise convolution: y [oh][ow] from plane [h][w]. */
MLRT__SMALL __attribute__((noinline)) static void depthwise(const mlrt__conv_geom *op, const float *plane, const float *w, float bias, float *y) {
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

mlrt__conv_form mlrt__conv_form_of(const mlrt__conv_geom *g) {
    if (g->groups > 1 && g->groups == g->c) return MLRT__CONV_DEPTHWISE;
    if (g->sh == 1 && g->sw == 1 && (uint64_t)g->kh * g->kw <= MLRT__CONV_MAX_TAPS) return MLRT__CONV_DIRECT;
    return MLRT__CONV_PATCHES;
}

size_t mlrt__conv_weight_floats(const mlrt__conv *c) {
    if (c->form != MLRT__CONV_DIRECT) return (size_t)c->g.oc * c->k_in;
    uint32_t ocg = c->g.oc / c->g.groups;
    return (size_t)c->g.groups * ((ocg + 3) / 4) * c->k_in * 4;
}

MLRT__SMALL void mlrt__conv_pack(const mlrt__conv *c, const float *w, float *dst) {
    if (c->form != MLRT__CONV_DIRECT) { /* [oc][k_in] as it is */
        memcpy(dst, w, (size_t)c->g.oc * c->k_in * sizeof *dst);
        return;
    }
    /* [groups][ceil(ocg / 4)][k][4], zero for the channels past ocg */
    uint32_t ocg = c->g.oc / c->g.groups, blocks = (ocg + 3) / 4;
    memset(dst, 0, mlrt__conv_weight_floats(c) * sizeof *dst);
    for (uint32_t o = 0; o < c->g.oc; o++) {
        uint32_t g = o / ocg, j = o % ocg;
        for (uint32_t k = 0; k < c->k_in; k++)
            dst[(((size_t)g * blocks + j / 4) * c->k_in + k) * 4 + j % 4] = w[(size_t)o * c->k_in + k];
    }
}

MLRT__SMALL void mlrt__conv_scratch(const mlrt__conv *c, uint64_t *col, uint64_t *zeros) {
    const mlrt__conv_geom *g = &c->g;
    uint64_t p_pad = ((uint64_t)g->oh * g->ow + MLRT__PANEL - 1) / MLRT__PANEL * MLRT__PANEL;
    uint64_t wp = (uint64_t)g->w + g->pl + g->pr, hp = (uint64_t)g->h + g->pt + g->pb;
    *col = c->form == MLRT__CONV_DEPTHWISE ? 0
         : c->form == MLRT__CONV_DIRECT ? (uint64_t)(g->c / g->groups) * hp * wp + CONV_SLACK(g) + 4 * (((uint64_t)g->oh * wp + 7) / 8 * 8)
         : p_pad * c->k_in;
    *zeros = c->form == MLRT__CONV_PATCHES ? p_pad : 0;
}

void mlrt__conv_forward(const mlrt__conv *cv, const float *x, float *y, const float *zeros, float *col, size_t images) {
    const mlrt__conv_geom *op = &cv->g;
    const size_t hw = (size_t)op->h * op->w, p = (size_t)op->oh * op->ow;
    const uint32_t cg = op->c / op->groups, ocg = op->oc / op->groups;
    const size_t p_pad = (p + MLRT__PANEL - 1) / MLRT__PANEL * MLRT__PANEL;
    /* the patches as a dense layer of p outputs and no bias (col starts with zeros) */
    mlrt__dense d = {0};
    d.in = cv->k_in, d.out = (uint32_t)p, d.out_padded = (uint32_t)p_pad;
    d.w = col, d.b = (float *)zeros, d.act = MLRT_ACT_IDENTITY;
    for (size_t n = 0; n < images; n++, x += op->c * hw, y += op->oc * p) {
        if (cv->form == MLRT__CONV_DEPTHWISE) {
            uint32_t mult = op->oc / op->c;
            for (uint32_t o = 0; o < op->oc; o++) {
                depthwise(op, x + (o / mult) * hw, cv->w + (size_t)o * op->kh * op->kw, cv->b[o], y + o * p);
                mlrt__activate(cv->act, y + o * p, p);
            }
            continue;
        }
        if (cv->form == MLRT__CONV_DIRECT) {
            conv_direct(cv, x, y, col);
            continue;
        }
        for (uint32_t g = 0; g < op->groups; g++) {
            im2col(op, cv->k_in, x, g * cg, cg, col);
            mlrt__dense_forward(&d, cv->w + (size_t)g * ocg * cv->k_in, cv->k_in, y + (size_t)g * ocg * p, p, ocg);
        }
        for (uint32_t o = 0; o < op->oc; o++) {
            float *yo = y + o * p, bias = cv->b[o];
            for (size_t q = 0; q < p; q++) yo[q] += bias;
            mlrt__activate(cv->act, yo, p);
        }
    }
}

/* ------------------------------------------------------------------ pooling */

/* 2x2 max pooling, stride 2, no padding: four outputs per step from two rows of eight inputs. */
static void maxpool_2x2(const float *x, uint32_t w, uint32_t oh, uint32_t ow, float *y) {
    for (uint32_t oy = 0; oy < oh; oy++, y += ow) {
        const float *r0 = x + (size_t)2 * oy * w, *r1 = r0 + w;
        uint32_t ox = 0;
        for (; ox + 4 <= ow && 2 * ox + 8 <= w; ox += 4) {
            v4 a = ld(r0 + 2 * ox), b = ld(r0 + 2 * ox + 4), c = ld(r1 + 2 * ox), d = ld(r1 + 2 * ox + 4);
            v4 m = __builtin_shufflevector(a, b, 0, 2, 4, 6), v = __builtin_shufflevector(a, b, 1, 3, 5, 7);
            i4 k = v > m;
            m = (v4)((k & (i4)v) | (~k & (i4)m));
            v = __builtin_shufflevector(c, d, 0, 2, 4, 6), k = v > m, m = (v4)((k & (i4)v) | (~k & (i4)m));
            v = __builtin_shufflevector(c, d, 1, 3, 5, 7), k = v > m, m = (v4)((k & (i4)v) | (~k & (i4)m));
            st(y + ox, m);
        }
        for (; ox < ow; ox++) { /* the same comparisons, in the same order */
            float m = r0[2 * ox], v;
            v = r0[2 * ox + 1], m = v > m ? v : m;
            v = r1[2 * ox], m = v > m ? v : m;
            v = r1[2 * ox + 1], m = v > m ? v : m;
            y[ox] = m;
        }
    }
}

MLRT__SMALL void mlrt__pool_forward(const mlrt__conv_geom *op, mlrt__pool_kind kind, bool count_pad, const float *x,
                                    float *y, size_t planes) {
    const size_t hw = (size_t)op->h * op->w, p = (size_t)op->oh * op->ow;
    const bool max = kind == MLRT__POOL_MAX;
    const bool fast2x2 = max && op->kh == 2 && op->kw == 2 && op->sh == 2 && op->sw == 2 && op->dh == 1 && op->dw == 1 &&
                         op->pt == 0 && op->pl == 0 && 2u * op->oh <= op->h && 2u * op->ow <= op->w;
    for (size_t plane = 0; plane < planes; plane++, x += hw, y += p) {
        if (kind == MLRT__POOL_GLOBAL_AVG) {
            float s = 0.0f;
            for (size_t i = 0; i < hw; i++) s += x[i];
            y[0] = s / (float)hw;
            continue;
        }
        if (fast2x2) {
            maxpool_2x2(x, op->w, op->oh, op->ow, y);
            continue;
        }
        for (uint32_t oy = 0; oy < op->oh; oy++) {
            int64_t y0 = (int64_t)oy * op->sh - op->pt;
            /* the window rows inside the input: ky in [ky0, ky1) */
            uint32_t ky0, ky1;
            valid_cols(y0, op->dh, op->h, op->kh, &ky0, &ky1);
            for (uint32_t ox = 0; ox < op->ow; ox++) {
                int64_t x0 = (int64_t)ox * op->sw - op->pl;
                uint32_t kx0 = 0, kx1 = op->kw;
                if (x0 < 0 || x0 + (int64_t)(op->kw - 1) * op->dw >= op->w) valid_cols(x0, op->dw, op->w, op->kw, &kx0, &kx1);
                float acc = max ? -INFINITY : 0.0f;
                /* hot loop: the window's rows and columns inside the input */
                for (uint32_t ky = ky0; ky < ky1; ky++) {
                    const float *row = x + (size_t)(y0 + (int64_t)ky * op->dh) * op->w + (size_t)(x0 + (int64_t)kx0 * op->dw);
                    for (uint32_t kx = kx0; kx < kx1; kx++, row += op->dw) {
                        float v = *row;
                        acc = max ? (v > acc ? v : acc) : acc + v;
                    }
                }
                if (!max) {
                    float div = (float)((ky1 - ky0) * (kx1 - kx0));
                    if (count_pad) { /* the window clipped to the padded input */
                        int64_t ye = y0 + (int64_t)(op->kh - 1) * op->dh + 1, xe = x0 + (int64_t)(op->kw - 1) * op->dw + 1;
                        int64_t ylim = (int64_t)op->h + op->pb, xlim = (int64_t)op->w + op->pr;
                        div = (float)((((ye < ylim ? ye : ylim) - y0 + op->dh - 1) / op->dh) *
                                      (((xe < xlim ? xe : xlim) - x0 + op->dw - 1) / op->dw));
                    }
                    acc = div > 0 ? acc / div : 0.0f;
                }
                y[(size_t)oy * op->ow + ox] = acc;
            }
        }
    }
}
