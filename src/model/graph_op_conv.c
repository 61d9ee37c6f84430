/* model/graph_op_conv.c — Conv and the pools (max, average, global average) on NCHW tensors, 1-D
 * or 2-D (a 1-D op runs as height 1), on the kernels of kernels/conv.c: the window's geometry from
 * the op's kernel, strides, dilations and pads (explicit, or SAME / VALID), checked against the input. */
#include "graph.h"
#include <stdlib.h>
#include <string.h>

#define TRY(x) do { mlrt_status st_ = (x); if (st_) return st_; } while (0)
#define OOM() mlrt__plan_fail(pl, MLRT_ERR_OUT_OF_MEMORY, "out of memory")
#define VAL(id) MLRT__PV(pl, id)

typedef struct gconv {
    mlrt__glinear lin;              /* (first: fusions see the ops' shared part) */
    mlrt__conv_geom g;
} gconv;

typedef struct gpool {
    mlrt__conv_geom g;
    mlrt__pool_kind kind;
    bool count_pad;
} gpool;

/* ------------------------------------------------------------------ the window */

static mlrt_status count_is(mlrt__planner *pl, const char *name, uint32_t n, uint32_t want) {
    if (n && n != want) return mlrt__plan_fail(pl, MLRT_ERR_BAD_HEADER, "'%s' has %u values, not %u", name, n, want);
    return MLRT_OK;
}

/* The geometry over the ns spatial axes of x (a 1-D op as height 1) for a kernel of ks. */
static mlrt_status window(mlrt__planner *pl, const mlrt__ir_window *w, const mlrt__gval *x, const int64_t *ks, bool ceil_mode,
                          mlrt__conv_geom *g) {
    uint32_t ns = x->rank - 2;
    TRY(count_is(pl, "strides", w->n_strides, ns));
    TRY(count_is(pl, "dilations", w->n_dilations, ns));
    TRY(count_is(pl, "pads", w->n_pads, 2 * ns));
    bool same = w->pad_mode == MLRT__PADS_SAME_UPPER || w->pad_mode == MLRT__PADS_SAME_LOWER, valid = w->pad_mode == MLRT__PADS_VALID;
    int64_t k[2] = {1, 1}, s[2] = {1, 1}, d[2] = {1, 1}, pb[2] = {0, 0}, pe[2] = {0, 0}, out[2] = {1, 1};
    for (uint32_t i = 0; i < ns; i++) {
        uint32_t a = i + 2 - ns; /* 1-D: the width */
        k[a] = ks[i], s[a] = w->n_strides ? w->strides[i] : 1, d[a] = w->n_dilations ? w->dilations[i] : 1;
        pb[a] = w->n_pads && !same && !valid ? w->pads[i] : 0, pe[a] = w->n_pads && !same && !valid ? w->pads[i + ns] : 0;
        if (k[a] < 1 || s[a] < 1 || d[a] < 1 || k[a] > 65536 || s[a] > 65536 || d[a] > 65536 || pb[a] < 0 || pe[a] < 0 ||
            pb[a] > 65536 || pe[a] > 65536)
            return mlrt__plan_fail(pl, MLRT_ERR_BAD_DIMENSIONS, "kernel %lld, stride %lld, dilation %lld, pads %lld/%lld on "
                                   "axis %u: each must be positive (pads >= 0) and at most 65536", (long long)k[a],
                                   (long long)s[a], (long long)d[a], (long long)pb[a], (long long)pe[a], i);
        int64_t ke = (k[a] - 1) * d[a] + 1, n = x->dims[2 + i];
        if (same) {
            out[a] = (n + s[a] - 1) / s[a];
            int64_t total = (out[a] - 1) * s[a] + ke - n;
            if (total < 0) total = 0;
            pb[a] = w->pad_mode == MLRT__PADS_SAME_UPPER ? total / 2 : total - total / 2;
            pe[a] = total - pb[a];
        } else {
            int64_t span = n + pb[a] + pe[a] - ke;
            if (span < 0)
                return mlrt__plan_fail(pl, MLRT_ERR_BAD_DIMENSIONS, "the kernel (%lld with dilation) is larger than the "
                                       "padded input (%lld) on axis %u", (long long)ke, (long long)(n + pb[a] + pe[a]), i);
            out[a] = (ceil_mode ? (span + s[a] - 1) / s[a] : span / s[a]) + 1;
            if (ceil_mode && (out[a] - 1) * s[a] >= n + pb[a]) out[a]--; /* windows start inside */
        }
    }
    g->c = (uint32_t)x->dims[1];
    g->h = x->rank == 4 ? (uint32_t)x->dims[2] : 1;
    g->w = (uint32_t)x->dims[x->rank - 1];
    g->oh = (uint32_t)out[0], g->ow = (uint32_t)out[1];
    g->kh = (uint32_t)k[0], g->kw = (uint32_t)k[1], g->sh = (uint32_t)s[0], g->sw = (uint32_t)s[1];
    g->dh = (uint32_t)d[0], g->dw = (uint32_t)d[1];
    g->pt = (int32_t)pb[0], g->pl = (int32_t)pb[1], g->pb = (int32_t)pe[0], g->pr = (int32_t)pe[1];
    g->groups = 1;
    return MLRT_OK;
}

static void out_shape(const mlrt__gval *x, const mlrt__conv_geom *g, uint32_t channels, mlrt__gshape *out) {
    *out = (mlrt__gshape){MLRT_F32, x->rank, {x->dims[0], channels, g->oh, g->ow}};
    if (x->rank == 3) out->dims[2] = g->ow;
}

/* ------------------------------------------------------------------ Conv */

static mlrt_status conv_import(mlrt__planner *pl, const mlrt__ir_op *op, void **p) {
    const mlrt__ir_window *win = &op->p.window;
    int32_t x = mlrt__plan_in(pl, op, 0), wv = mlrt__plan_in(pl, op, 1), bv = mlrt__plan_in(pl, op, 2);
    TRY(mlrt__plan_computed(pl, op, 0, 3, 4));
    if (VAL(x)->is_const) return mlrt__plan_fail(pl, MLRT_ERR_UNSUPPORTED, "it computes on constants only, which mlrt does not fold");
    TRY(mlrt__plan_const_float(pl, op, 1, "the weight W", false));
    TRY(mlrt__plan_const_float(pl, op, 2, "the bias B", false));
    const mlrt__gval *xv = VAL(x), *w = VAL(wv);
    uint32_t ns = xv->rank - 2;
    int64_t group = win->group, c = xv->dims[1], m = w->dims[0];
    TRY(count_is(pl, "kernel_shape", win->n_kernel, ns));
    if (w->rank != xv->rank || group < 1 || c % group || m % group || w->dims[1] != c / group || m < 1)
        return mlrt__plan_fail(pl, MLRT_ERR_BAD_DIMENSIONS, "W (rank %u, %lld outputs, %lld channels each) does not fit "
                               "%lld input channels in %lld groups", w->rank, (long long)m,
                               (long long)(w->rank > 1 ? w->dims[1] : 0), (long long)c, (long long)group);
    for (uint32_t i = 0; win->n_kernel && i < ns; i++)
        if (win->kernel[i] != w->dims[2 + i]) return mlrt__plan_fail(pl, MLRT_ERR_BAD_DIMENSIONS, "kernel_shape disagrees with W");
    if (bv >= 0 && (VAL(bv)->rank != 1 || VAL(bv)->dims[0] != m))
        return mlrt__plan_fail(pl, MLRT_ERR_BAD_DIMENSIONS, "B is not [%lld]", (long long)m);
    mlrt__conv_geom g;
    TRY(window(pl, win, xv, w->dims + 2, false, &g));
    uint64_t kin = (uint64_t)(c / group) * g.kh * g.kw;
    if (kin > MLRT__MAX_DIM || m > MLRT__MAX_DIM) return mlrt__plan_fail(pl, MLRT_ERR_BAD_DIMENSIONS, "the kernel is too large");
    gconv *cv = calloc(1, sizeof *cv);
    if (!cv) return OOM();
    g.oc = (uint32_t)m, g.groups = (uint32_t)group;
    cv->g = g;
    mlrt__glinear *l = &cv->lin;
    l->conv = true, l->k_in = (uint32_t)kin, l->oc = (uint32_t)m, l->w = w->data, l->w_graph = w->graph_data;
    l->alpha = l->beta = 1.0f, l->act = MLRT_ACT_IDENTITY;
    if (bv >= 0) l->c = VAL(bv)->data, l->c_count = (uint64_t)m, l->w_graph &= VAL(bv)->graph_data;
    *p = cv;
    return MLRT_OK;
}

static mlrt_status conv_shape(mlrt__planner *pl, const mlrt__ir_op *op, const void *p, mlrt__gshape *out) {
    const gconv *cv = p;
    out_shape(VAL(mlrt__plan_in(pl, op, 0)), &cv->g, cv->g.oc, out);
    return MLRT_OK;
}

static void conv_free(void *p) {
    mlrt__glinear_release(p);
    free(p);
}

static mlrt__conv conv_of(const gconv *cv) {
    const mlrt__gpacked *w = cv->lin.pack;
    mlrt__conv c = {cv->g, w ? (mlrt__conv_form)w->form : mlrt__conv_form_of(&cv->g), cv->lin.k_in, cv->lin.act,
                    w ? w->cw : NULL, w ? w->cb : NULL};
    return c;
}

static mlrt_status conv_pack(mlrt__planner *pl, mlrt__gop *op) {
    gconv *cv = op->p;
    TRY(mlrt__glinear_pack(pl, op, &cv->lin, (uint8_t)mlrt__conv_form_of(&cv->g), cv->g.groups));
    mlrt__conv c = conv_of(cv);
    uint64_t col, zeros;
    mlrt__conv_scratch(&c, &col, &zeros);
    uint64_t p_pad = ((uint64_t)cv->g.oh * cv->g.ow + MLRT__PANEL - 1) / MLRT__PANEL * MLRT__PANEL;
    if (col + p_pad > MLRT__MAX_ARENA) {
        pl->over_limit = true;
        return mlrt__fail(pl->err, MLRT_ERR_BAD_DIMENSIONS, "%s: node %u's patches need %llu MiB; mlrt's limit is %u MiB",
                          pl->ir->format, pl->ir->ops[op->ir].node, (unsigned long long)(col >> 18), MLRT__MAX_ARENA >> 18);
    }
    if (col > pl->g->col_floats) pl->g->col_floats = (size_t)col;
    if (zeros > pl->g->zeros_floats) pl->g->zeros_floats = (size_t)zeros;
    return MLRT_OK;
}

static mlrt_status conv_run(mlrt__graph *g, const mlrt__gop *op, size_t rows, mlrt_error *err) {
    mlrt__conv c = conv_of(op->p);
    const mlrt__gval *out = &g->vals[op->out[0]];
    size_t images = mlrt__grows(g, op->out[0], rows) * (size_t)out->dims[0];
    mlrt__conv_forward(&c, mlrt__gdata(g, op->in[0]), mlrt__gdata(g, op->out[0]), g->col, g->col + g->zeros_floats, images);
    return MLRT_OK;
}

static void conv_cost(const mlrt__graph *g, const mlrt__gop *op, uint64_t *macs, uint64_t *params) {
    const gconv *cv = op->p;
    *macs = g->vals[op->out[0]].count * cv->lin.k_in;
    *params = (uint64_t)cv->lin.oc * (cv->lin.k_in + 1);
}

/* ------------------------------------------------------------------ pooling */

static mlrt_status pool_import(mlrt__planner *pl, const mlrt__ir_op *op, void **p) {
    const mlrt__ir_window *win = &op->p.window;
    TRY(mlrt__plan_computed(pl, op, 0, 3, 4));
    const mlrt__gval *xv = VAL(mlrt__plan_in(pl, op, 0));
    uint32_t ns = xv->rank - 2;
    mlrt__conv_geom g;
    if (win->pool == MLRT__IR_POOL_GLOBAL_AVG) {
        mlrt__ir_window whole;
        memset(&whole, 0, sizeof whole);
        TRY(window(pl, &whole, xv, xv->dims + 2, false, &g));
    } else {
        if (!win->n_kernel) return mlrt__plan_fail(pl, MLRT_ERR_BAD_HEADER, "attribute 'kernel_shape' is required");
        TRY(count_is(pl, "kernel_shape", win->n_kernel, ns));
        TRY(window(pl, win, xv, win->kernel, win->ceil_mode, &g));
    }
    gpool *q = calloc(1, sizeof *q);
    if (!q) return OOM();
    g.oc = g.c;
    q->g = g;
    q->kind = win->pool == MLRT__IR_POOL_MAX ? MLRT__POOL_MAX : win->pool == MLRT__IR_POOL_AVG ? MLRT__POOL_AVG : MLRT__POOL_GLOBAL_AVG;
    q->count_pad = win->count_include_pad;
    *p = q;
    return MLRT_OK;
}

static mlrt_status pool_shape(mlrt__planner *pl, const mlrt__ir_op *op, const void *p, mlrt__gshape *out) {
    const gpool *q = p;
    out_shape(VAL(mlrt__plan_in(pl, op, 0)), &q->g, q->g.c, out);
    return MLRT_OK;
}

static mlrt_status pool_run(mlrt__graph *g, const mlrt__gop *op, size_t rows, mlrt_error *err) {
    const gpool *q = op->p;
    const mlrt__gval *out = &g->vals[op->out[0]];
    size_t planes = mlrt__grows(g, op->out[0], rows) * (size_t)out->dims[0] * q->g.c;
    mlrt__pool_forward(&q->g, q->kind, q->count_pad, mlrt__gdata(g, op->in[0]), mlrt__gdata(g, op->out[0]), planes);
    return MLRT_OK;
}

static void pool_cost(const mlrt__graph *g, const mlrt__gop *op, uint64_t *macs, uint64_t *params) {
    const gpool *q = op->p;
    *macs = q->kind == MLRT__POOL_GLOBAL_AVG ? (uint64_t)q->g.h * q->g.w * q->g.c : g->vals[op->out[0]].count * q->g.kh * q->g.kw;
    *params = 0;
}

const mlrt__op_def mlrt__op_conv = {"Conv", 2, 3, 1, 0, conv_import, conv_shape, NULL, conv_pack, conv_run, conv_cost, conv_free};
const mlrt__op_def mlrt__op_pool = {"Pool", 1, 1, 1, 0, pool_import, pool_shape, NULL, NULL, pool_run, pool_cost, NULL};
