/* model/graph_op_elem.c — the elementwise ops and the normalizations that fold into the ops before
 * them: Add, Sub, Mul, Div (numpy broadcasting, float or int64), the activations (one
 * implementation with the dense kernels': kernels/act.c), Softmax and LogSoftmax, and
 * BatchNormalization.
 *
 * Fusions, each only when the dense or convolution op's output has no other reader and is not a
 * graph output:
 *   Conv / Gemm / MatMul + BatchNormalization  -> the scale and shift folded into weights and bias
 *   MatMul (or Gemm without C) + Add of a [N] constant -> the dense op's bias
 *   Conv / Gemm / MatMul + Relu, Sigmoid, Tanh, LeakyRelu(0.01), exact Gelu -> the kernel's activation
 *   Gemm / MatMul + Softmax over their outputs  -> the dense kernel's softmax */
#include "graph.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TRY(x) do { mlrt_status st_ = (x); if (st_) return st_; } while (0)
#define OOM() mlrt__plan_fail(pl, MLRT_ERR_OUT_OF_MEMORY, "out of memory")
#define VAL(id) MLRT__PV(pl, id)

static bool is_dense(const mlrt__gop *p) { return p->kind == MLRT__OP_GEMM || p->kind == MLRT__OP_MATMUL; }

/* ------------------------------------------------------------------ Add, Sub, Mul, Div */

static mlrt_status binary_import(mlrt__planner *pl, const mlrt__ir_op *op, void **p) {
    const mlrt__gval *av = VAL(mlrt__plan_in(pl, op, 0)), *cv = VAL(mlrt__plan_in(pl, op, 1));
    if (av->dtype != cv->dtype) return mlrt__plan_fail(pl, MLRT_ERR_UNSUPPORTED, "its inputs are an int64 and a float tensor");
    for (uint32_t k = 0; k < 2; k++) {
        const mlrt__gval *v = k ? cv : av;
        if (!v->is_const) continue;
        if (v->dtype == MLRT_F32) TRY(mlrt__plan_const_float(pl, op, k, "a constant operand", false));
        for (uint64_t i = 0; v->dtype == MLRT_I64 && i < v->count; i++) {
            int64_t x = ((const int64_t *)v->data)[i];
            if (x == MLRT__BATCH_SYM) TRY(mlrt__plan_rows_apart(pl, false, "it computes with the batch size"));
            if (x == 0 && k == 1 && op->kind == MLRT__OP_DIV)
                return mlrt__plan_fail(pl, MLRT_ERR_UNSUPPORTED, "an int64 division by zero");
        }
    }
    if (av->dtype == MLRT_I64 && op->kind == MLRT__OP_DIV && !cv->is_const)
        return mlrt__plan_fail(pl, MLRT_ERR_UNSUPPORTED, "an int64 division by a tensor computed per call");
    return MLRT_OK;
}

static mlrt_status binary_shape(mlrt__planner *pl, const mlrt__ir_op *op, const void *p, mlrt__gshape *out) {
    const mlrt__gval *av = VAL(mlrt__plan_in(pl, op, 0)), *cv = VAL(mlrt__plan_in(pl, op, 1));
    uint32_t r = av->rank > cv->rank ? av->rank : cv->rank;
    out[0] = (mlrt__gshape){av->dtype, r, {0}};
    for (uint32_t d = 0; d < r; d++) {
        int64_t x = d + av->rank >= r ? av->dims[d + av->rank - r] : 1, y = d + cv->rank >= r ? cv->dims[d + cv->rank - r] : 1;
        if (x != y && x != 1 && y != 1)
            return mlrt__plan_fail(pl, MLRT_ERR_BAD_DIMENSIONS, "shapes do not broadcast: %lld and %lld on axis %u",
                                   (long long)x, (long long)y, d);
        out[0].dims[d] = x == 1 ? y : x;
    }
    for (uint32_t k = 0; k < 2; k++) {
        const mlrt__gval *v = k ? cv : av;
        if (!v->is_const)
            TRY(mlrt__plan_rows_apart(pl, v->rank == r && out[0].dims[0] == 1, "a constant broadcasts over the batch axis"));
    }
    return MLRT_OK;
}

static mlrt_status binary_plan(mlrt__planner *pl, const mlrt__ir_op *op, void *p, const mlrt__gshape *out) {
    int32_t a = mlrt__plan_in(pl, op, 0), c = mlrt__plan_in(pl, op, 1);
    for (uint32_t k = 0; op->kind == MLRT__OP_ADD && VAL(a)->dtype == MLRT_F32 && k < 2; k++) { /* a dense op's bias */
        mlrt__gop *d = mlrt__plan_fusable(pl, op, k);
        const mlrt__gval *bias = VAL(k ? a : c);
        mlrt__glinear *l = d ? d->p : NULL;
        if (!d || !is_dense(d) || l->c || l->bn_scale || !bias->is_const || bias->count != l->oc ||
            bias->rank > VAL(d->out[0])->rank || (bias->rank && bias->dims[bias->rank - 1] != (int64_t)l->oc))
            continue;
        l->c = bias->data, l->c_count = l->oc, l->beta = 1.0f, l->w_graph &= bias->graph_data;
        mlrt__plan_bind(pl, op, 0, d->out[0]);
        return MLRT_OK;
    }
    return mlrt__plan_emit(pl, op, p, out);
}

static mlrt_status binary_run(mlrt__graph *g, const mlrt__gop *op, size_t rows, mlrt_error *err) {
    const mlrt__gval *out = &g->vals[op->out[0]];
    int64_t ad[MLRT__MAX_RANK], bd[MLRT__MAX_RANK], yd[MLRT__MAX_RANK];
    mlrt__grun_dims(g, op->in[0], rows, out->rank, ad);
    mlrt__grun_dims(g, op->in[1], rows, out->rank, bd);
    mlrt__grun_dims(g, op->out[0], rows, out->rank, yd);
    mlrt__bin_kind k = (mlrt__bin_kind)(op->kind - MLRT__OP_ADD);
    void *a = mlrt__gdata(g, op->in[0]), *b = mlrt__gdata(g, op->in[1]), *y = mlrt__gdata(g, op->out[0]);
    if (out->dtype == MLRT_I64) mlrt__binary_i64(k, a, ad, b, bd, y, yd, out->rank);
    else mlrt__binary(k, a, ad, b, bd, y, yd, out->rank);
    return MLRT_OK;
}

static void elem_cost(const mlrt__graph *g, const mlrt__gop *op, uint64_t *macs, uint64_t *params) {
    *macs = g->vals[op->out[0]].count, *params = 0;
}

/* ------------------------------------------------------------------ activations */

static mlrt_status act_import(mlrt__planner *pl, const mlrt__ir_op *op, void **p) {
    TRY(mlrt__plan_computed(pl, op, 0, 0, MLRT__MAX_RANK));
    static const mlrt__act_kind kinds[] = {[MLRT__FN_RELU] = MLRT__ACT_RELU, [MLRT__FN_LEAKY_RELU] = MLRT__ACT_LEAKY_RELU,
                                           [MLRT__FN_SIGMOID] = MLRT__ACT_SIGMOID, [MLRT__FN_TANH] = MLRT__ACT_TANH,
                                           [MLRT__FN_ERF] = MLRT__ACT_ERF, [MLRT__FN_GELU] = MLRT__ACT_GELU,
                                           [MLRT__FN_CLIP] = MLRT__ACT_CLIP};
    const mlrt__ir_act *q = &op->p.act;
    if (q->fn > MLRT__FN_CLIP) return mlrt__plan_fail(pl, MLRT_ERR_UNSUPPORTED, "elementwise function %u", q->fn);
    mlrt__act a = {kinds[q->fn], q->alpha, -INFINITY, INFINITY};
    if (q->fn == MLRT__FN_GELU && q->approximate) a.kind = MLRT__ACT_GELU_TANH;
    if (q->fn == MLRT__FN_CLIP) {
        TRY(mlrt__plan_const_scalar(pl, op, 1, -INFINITY, &a.lo));
        TRY(mlrt__plan_const_scalar(pl, op, 2, INFINITY, &a.hi));
    }
    if (isnan(a.lo) || isnan(a.hi) || isnan(a.alpha)) return mlrt__plan_fail(pl, MLRT_ERR_NON_FINITE, "a bound or alpha is NaN");
    mlrt__act *ap = malloc(sizeof *ap);
    if (!ap) return OOM();
    *ap = a;
    *p = ap;
    return MLRT_OK;
}

static mlrt_status same_shape(mlrt__planner *pl, const mlrt__ir_op *op, const void *p, mlrt__gshape *out) {
    const mlrt__gval *x = VAL(mlrt__plan_in(pl, op, 0));
    out[0] = (mlrt__gshape){x->dtype, x->rank, {0}};
    memcpy(out[0].dims, x->dims, sizeof out[0].dims);
    return MLRT_OK;
}

static mlrt_status act_plan(mlrt__planner *pl, const mlrt__ir_op *op, void *p, const mlrt__gshape *out) {
    const mlrt__act *a = p;
    mlrt_activation f = a->kind == MLRT__ACT_RELU ? MLRT_ACT_RELU : a->kind == MLRT__ACT_SIGMOID ? MLRT_ACT_SIGMOID
                      : a->kind == MLRT__ACT_TANH ? MLRT_ACT_TANH : a->kind == MLRT__ACT_GELU ? MLRT_ACT_GELU
                      : a->kind == MLRT__ACT_LEAKY_RELU && a->alpha == 0.01f ? MLRT_ACT_LEAKY_RELU : MLRT_ACT_IDENTITY;
    mlrt__gop *d = f != MLRT_ACT_IDENTITY ? mlrt__plan_fusable(pl, op, 0) : NULL;
    if (d) { /* the dense or convolution kernel's activation */
        ((mlrt__glinear *)d->p)->act = f;
        mlrt__plan_bind(pl, op, 0, d->out[0]);
        free(p);
        return MLRT_OK;
    }
    return mlrt__plan_emit(pl, op, p, out);
}

static mlrt_status act_run(mlrt__graph *g, const mlrt__gop *op, size_t rows, mlrt_error *err) {
    size_t n = (size_t)g->vals[op->out[0]].count * mlrt__grows(g, op->out[0], rows);
    mlrt__act_apply(op->p, mlrt__gdata(g, op->in[0]), mlrt__gdata(g, op->out[0]), n);
    return MLRT_OK;
}

/* ------------------------------------------------------------------ Softmax, LogSoftmax */

typedef struct gsoftmax { uint64_t outer, n, inner; bool log; uint32_t axis; } gsoftmax;

static mlrt_status softmax_import(mlrt__planner *pl, const mlrt__ir_op *op, void **p) {
    TRY(mlrt__plan_computed(pl, op, 0, 1, MLRT__MAX_RANK));
    const mlrt__gval *xv = VAL(mlrt__plan_in(pl, op, 0));
    const mlrt__ir_softmax *q = &op->p.softmax;
    uint32_t ax;
    TRY(mlrt__plan_axis(pl, q->axis, xv->rank, &ax));
    TRY(mlrt__plan_rows_apart(pl, ax > 0, "it normalises over axis 0"));
    gsoftmax *s = malloc(sizeof *s);
    if (!s) return OOM();
    s->outer = mlrt__dims_prod(xv->dims, 0, ax);
    s->n = q->flatten ? mlrt__dims_prod(xv->dims, ax, xv->rank) : (uint64_t)xv->dims[ax];
    s->inner = q->flatten ? 1 : mlrt__dims_prod(xv->dims, ax + 1, xv->rank);
    s->log = q->log, s->axis = ax;
    *p = s;
    return MLRT_OK;
}

static mlrt_status softmax_plan(mlrt__planner *pl, const mlrt__ir_op *op, void *p, const mlrt__gshape *out) {
    const gsoftmax *s = p;
    const mlrt__gval *xv = VAL(mlrt__plan_in(pl, op, 0));
    mlrt__gop *d = s->log || s->axis + 1 != xv->rank ? NULL : mlrt__plan_fusable(pl, op, 0);
    if (d && is_dense(d) && (uint64_t)xv->dims[s->axis] == ((mlrt__glinear *)d->p)->oc) { /* over a dense op's outputs */
        ((mlrt__glinear *)d->p)->act = MLRT_ACT_SOFTMAX;
        mlrt__plan_bind(pl, op, 0, d->out[0]);
        free(p);
        return MLRT_OK;
    }
    return mlrt__plan_emit(pl, op, p, out);
}

static mlrt_status softmax_run(mlrt__graph *g, const mlrt__gop *op, size_t rows, mlrt_error *err) {
    const gsoftmax *s = op->p;
    mlrt__softmax(mlrt__gdata(g, op->in[0]), mlrt__gdata(g, op->out[0]), (size_t)s->outer * mlrt__grows(g, op->out[0], rows),
                  (size_t)s->n, (size_t)s->inner, s->log);
    return MLRT_OK;
}

/* ------------------------------------------------------------------ BatchNormalization */

typedef struct gaffine { float *scale, *shift; uint64_t outer, inner; uint32_t c; } gaffine;

static void affine_free(void *p) {
    gaffine *a = p;
    free(a->scale), free(a->shift), free(a);
}

static mlrt_status batchnorm_import(mlrt__planner *pl, const mlrt__ir_op *op, void **p) {
    TRY(mlrt__plan_computed(pl, op, 0, 2, MLRT__MAX_RANK));
    const mlrt__gval *xv = VAL(mlrt__plan_in(pl, op, 0));
    int64_t c = xv->dims[1];
    float eps = op->p.norm.epsilon;
    static const char *const names[4] = {"scale", "B", "mean", "var"};
    const float *in[5] = {0};
    for (uint32_t k = 1; k < 5; k++) {
        int32_t v = mlrt__plan_in(pl, op, k);
        TRY(mlrt__plan_const_float(pl, op, k, names[k - 1], false));
        if (VAL(v)->count != (uint64_t)c || VAL(v)->rank != 1)
            return mlrt__plan_fail(pl, MLRT_ERR_BAD_DIMENSIONS, "%s is not [%lld]", names[k - 1], (long long)c);
        in[k] = VAL(v)->data;
    }
    gaffine *a = calloc(1, sizeof *a);
    if (!a || !(a->scale = malloc((size_t)c * sizeof(float))) || !(a->shift = malloc((size_t)c * sizeof(float)))) {
        if (a) affine_free(a);
        return OOM();
    }
    for (int64_t k = 0; k < c; k++) {
        if (in[4][k] + eps <= 0.0f) {
            affine_free(a);
            return mlrt__plan_fail(pl, MLRT_ERR_NON_FINITE, "var + epsilon <= 0 at channel %lld", (long long)k);
        }
        a->scale[k] = in[1][k] / sqrtf(in[4][k] + eps);
        a->shift[k] = in[2][k] - in[3][k] * a->scale[k];
    }
    a->outer = (uint64_t)xv->dims[0], a->c = (uint32_t)c, a->inner = mlrt__dims_prod(xv->dims, 2, xv->rank);
    *p = a;
    return MLRT_OK;
}

static mlrt_status batchnorm_plan(mlrt__planner *pl, const mlrt__ir_op *op, void *p, const mlrt__gshape *out) {
    gaffine *a = p;
    if (VAL(mlrt__plan_in(pl, op, 0))->is_const) return mlrt__plan_emit(pl, op, p, out); /* folded now */
    mlrt__gop *d = mlrt__plan_fusable(pl, op, 0);
    mlrt__glinear *l = d ? d->p : NULL;
    if (d && !l->bn_scale && (d->kind == MLRT__OP_CONV || VAL(d->out[0])->rank == 2)) { /* folded into the weights */
        l->bn_scale = a->scale, l->bn_shift = a->shift;
        free(a);
        mlrt__plan_bind(pl, op, 0, d->out[0]);
        return MLRT_OK;
    }
    int32_t x = mlrt__plan_in(pl, op, 0);
    mlrt__gop *g = mlrt__plan_op(pl, MLRT__OP_BATCHNORM, &x, 1, out, 1, a);
    if (!g) { affine_free(a); return OOM(); }
    mlrt__plan_bind(pl, op, 0, g->out[0]);
    return MLRT_OK;
}

static mlrt_status affine_run(mlrt__graph *g, const mlrt__gop *op, size_t rows, mlrt_error *err) {
    const gaffine *a = op->p;
    mlrt__affine(mlrt__gdata(g, op->in[0]), a->scale, a->shift, (size_t)a->outer * mlrt__grows(g, op->out[0], rows), a->c,
                 (size_t)a->inner, mlrt__gdata(g, op->out[0]));
    return MLRT_OK;
}

static void affine_cost(const mlrt__graph *g, const mlrt__gop *op, uint64_t *macs, uint64_t *params) {
    *macs = g->vals[op->out[0]].count, *params = 2ull * ((const gaffine *)op->p)->c;
}

const mlrt__op_def mlrt__op_binary = {"Binary", 2, 2, 1, 0x3, binary_import, binary_shape, binary_plan, NULL, binary_run,
                                      elem_cost, NULL};
const mlrt__op_def mlrt__op_act = {"Activation", 1, 3, 1, 0, act_import, same_shape, act_plan, NULL, act_run, elem_cost, NULL};
const mlrt__op_def mlrt__op_softmax = {"Softmax", 1, 1, 1, 0, softmax_import, same_shape, softmax_plan, NULL, softmax_run,
                                       elem_cost, NULL};
const mlrt__op_def mlrt__op_batchnorm = {"BatchNormalization", 5, 5, 1, 0, batchnorm_import, same_shape, batchnorm_plan,
                                         NULL, affine_run, affine_cost, affine_free};
