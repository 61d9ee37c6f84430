/* model/graph_op_layernorm.c — LayerNormalization over the axes from `axis` on (kernels/norm.c):
 * y = (x - mean) / sqrt(var + epsilon) * scale + bias, with the biased variance; its optional
 * outputs are each row's mean and 1 / sqrt(var + epsilon), of x's shape with the normalized axes
 * set to 1. scale and bias are constants that broadcast to the normalized shape. An Add of two
 * computed tensors of the same shape right before it, read by nothing else, is fused in (the
 * residual of a transformer block's "Add & Norm"). */
#include "graph.h"
#include <stdlib.h>
#include <string.h>

#define TRY(x) do { mlrt_status st_ = (x); if (st_) return st_; } while (0)
#define OOM() mlrt__plan_fail(pl, MLRT_ERR_OUT_OF_MEMORY, "out of memory")
#define VAL(id) MLRT__PV(pl, id)

typedef struct glayernorm {
    uint32_t axis;
    uint64_t rows;                  /* rows per sample: the product of the dims before axis */
    mlrt__norm norm;                /* n, eps; scale and bias: below */
    float *scale, *bias;            /* [n] broadcast to the normalized shape (bias: NULL for none) */
} glayernorm;

static void ln_free(void *p) {
    glayernorm *q = p;
    free(q->scale), free(q->bias), free(q);
}

/* Constant input k broadcast to dims [r] (the normalized shape) into a new array [n]. */
static mlrt_status broadcast(mlrt__planner *pl, const mlrt__ir_op *op, uint32_t k, const char *what, const int64_t *dims,
                             uint32_t r, uint64_t n, float **out) {
    int32_t v = mlrt__plan_in(pl, op, k);
    if (v < 0) return MLRT_OK;
    TRY(mlrt__plan_const_float(pl, op, k, what, false));
    const mlrt__gval *c = VAL(v);
    bool ok = c->rank <= r;
    for (uint32_t d = 0; ok && d < c->rank; d++) ok = c->dims[d] == 1 || c->dims[d] == dims[r - c->rank + d];
    if (!ok) return mlrt__plan_fail(pl, MLRT_ERR_BAD_DIMENSIONS, "%s (input %u) does not broadcast to the normalized shape", what, k);
    if (!(*out = malloc(n * sizeof **out + 4))) return OOM();
    const float *f = c->data;
    for (uint64_t i = 0; i < n; i++) { /* i's index in the normalized shape, as c's */
        uint64_t rest = i, at = 0, stride = 1;
        for (uint32_t d = r; d-- > 0;) {
            uint64_t idx = rest % (uint64_t)dims[d];
            rest /= (uint64_t)dims[d];
            if (d + c->rank >= r) {
                uint32_t cd = d + c->rank - r;
                at += (c->dims[cd] == 1 ? 0 : idx) * stride;
                stride *= (uint64_t)c->dims[cd];
            }
        }
        (*out)[i] = f[at];
    }
    return MLRT_OK;
}

static mlrt_status ln_import(mlrt__planner *pl, const mlrt__ir_op *op, void **p) {
    TRY(mlrt__plan_computed(pl, op, 0, 1, MLRT__MAX_RANK));
    const mlrt__gval *xv = VAL(mlrt__plan_in(pl, op, 0));
    if (xv->is_const) return mlrt__plan_fail(pl, MLRT_ERR_UNSUPPORTED, "it computes on constants only, which mlrt does not fold");
    uint32_t ax;
    TRY(mlrt__plan_axis(pl, op->p.norm.axis, xv->rank, &ax));
    TRY(mlrt__plan_rows_apart(pl, ax > 0, "it normalizes over axis 0"));
    glayernorm *q = calloc(1, sizeof *q);
    if (!q) return OOM();
    q->axis = ax, q->rows = mlrt__dims_prod(xv->dims, 0, ax);
    q->norm.n = (size_t)mlrt__dims_prod(xv->dims, ax, xv->rank), q->norm.eps = op->p.norm.epsilon;
    mlrt_status st = broadcast(pl, op, 1, "scale", xv->dims + ax, xv->rank - ax, q->norm.n, &q->scale);
    if (!st) st = broadcast(pl, op, 2, "B", xv->dims + ax, xv->rank - ax, q->norm.n, &q->bias);
    if (!st && !(op->p.norm.epsilon >= 0.0f)) st = mlrt__plan_fail(pl, MLRT_ERR_BAD_HEADER, "epsilon is negative or NaN");
    if (st) { ln_free(q); return st; }
    *p = q;
    return MLRT_OK;
}

static mlrt_status ln_shape(mlrt__planner *pl, const mlrt__ir_op *op, const void *p, mlrt__gshape *out) {
    const glayernorm *q = p;
    const mlrt__gval *x = VAL(mlrt__plan_in(pl, op, 0));
    out[0] = (mlrt__gshape){MLRT_F32, x->rank, {0}};
    memcpy(out[0].dims, x->dims, sizeof out[0].dims);
    out[2] = out[1] = out[0];
    for (uint32_t d = q->axis; d < x->rank; d++) out[1].dims[d] = out[2].dims[d] = 1;
    return MLRT_OK;
}

static mlrt_status ln_plan(mlrt__planner *pl, const mlrt__ir_op *op, void *p, const mlrt__gshape *out) {
    int32_t in[2] = {mlrt__plan_in(pl, op, 0), -1};
    const mlrt__gval *x = VAL(in[0]);
    mlrt__graph *g = pl->g;
    mlrt__gop *add = !x->is_const && x->op >= 0 && (uint32_t)x->op + 1 == g->n_ops ? &g->ops[x->op] : NULL;
    if (add && add->kind == MLRT__OP_ADD && mlrt__plan_uses(pl, op, 0) == 1 && x->dtype == MLRT_F32) {
        const mlrt__gval *a = &g->vals[add->in[0]], *b = &g->vals[add->in[1]];
        bool fits = !a->is_const && !b->is_const && a->rank == x->rank && b->rank == x->rank && a->count == x->count &&
                    b->count == x->count && a->dtype == MLRT_F32;
        if (fits) { /* the residual Add, fused: the op reads its two inputs */
            in[0] = add->in[0], in[1] = add->in[1];
            free(add->in);
            g->n_ops--;
        }
    }
    mlrt__gshape o[3];
    for (uint32_t k = 0; k < 3; k++) {
        o[k] = out[k];
        if (k >= op->n_out || op->out[k] < 0) o[k].rank = UINT32_MAX;
    }
    mlrt__gop *n = mlrt__plan_op(pl, MLRT__OP_LAYERNORM, in, 2, o, 3, p);
    if (!n) { ln_free(p); return OOM(); }
    for (uint32_t k = 0; k < 3; k++) mlrt__plan_bind(pl, op, k, n->out[k]);
    return MLRT_OK;
}

static mlrt_status ln_run(mlrt__graph *g, const mlrt__gop *op, size_t rows, mlrt_error *err) {
    const glayernorm *q = op->p;
    mlrt__norm nm = q->norm;
    nm.rows = (size_t)q->rows * mlrt__grows(g, op->out[0], rows), nm.scale = q->scale, nm.bias = q->bias;
    mlrt__layernorm(&nm, mlrt__gdata(g, op->in[0]), op->in[1] >= 0 ? mlrt__gdata(g, op->in[1]) : NULL,
                    mlrt__gdata(g, op->out[0]), op->out[1] >= 0 ? mlrt__gdata(g, op->out[1]) : NULL,
                    op->out[2] >= 0 ? mlrt__gdata(g, op->out[2]) : NULL);
    return MLRT_OK;
}

static void ln_cost(const mlrt__graph *g, const mlrt__gop *op, uint64_t *macs, uint64_t *params) {
    const glayernorm *q = op->p;
    *macs = 4 * g->vals[op->out[0]].count, *params = (q->bias ? 2 : 1) * (uint64_t)q->norm.n;
}

const mlrt__op_def mlrt__op_layernorm = {"LayerNormalization", 2, 3, 3, 0, ln_import, ln_shape, ln_plan, NULL, ln_run, ln_cost,
                                         ln_free};
