/* model/graph_values.c — what the op table's rows share while they plan and run: messages, their
 * inputs checked and read, new values and ops, the default ways to plan an op (emitted, folded
 * into constants, a view), the fusable op before, and the values' data and dims in a run. It
 * calls no row: an op folds through the row of the op being planned (mlrt__planner.def). */
#include "graph.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TRY(x) do { mlrt_status st_ = (x); if (st_) return st_; } while (0)
#define FOLD_SLACK 65536          /* values folded at load: at most this plus 4 x the constants an op reads */

/* ------------------------------------------------------------------ messages */

mlrt_status mlrt__plan_fail(mlrt__planner *pl, mlrt_status code, const char *fmt, ...) {
    const mlrt__ir_op *op = &pl->ir->ops[pl->at];
    char msg[224];
    va_list ap;
    va_start(ap, fmt);
    mlrt__vformat(msg, sizeof msg, fmt, ap);
    va_end(ap);
    size_t nn = strlen(op->name);
    return mlrt__fail(pl->err, code, "%s: node %u (%s '%.*s'): %s", pl->ir->format, op->node, op->type,
                      (int)(nn > 64 ? 64 : nn), op->name, msg);
}

mlrt_status mlrt__plan_rows_apart(mlrt__planner *pl, bool ok, const char *why) {
    if (ok || !pl->g->batched) return MLRT_OK;
    pl->mixes_batch = true;
    return mlrt__plan_fail(pl, MLRT_ERR_UNSUPPORTED, "%s, which mixes the samples of a batch (symbolic batch "
                           "dimension)", why);
}

#define OOM() mlrt__plan_fail(pl, MLRT_ERR_OUT_OF_MEMORY, "out of memory")

/* ------------------------------------------------------------------ inputs */

int32_t mlrt__plan_in(const mlrt__planner *pl, const mlrt__ir_op *op, uint32_t k) {
    return k < op->n_in && op->in[k] >= 0 ? pl->vmap[op->in[k]] : -1;
}

uint32_t mlrt__plan_uses(const mlrt__planner *pl, const mlrt__ir_op *op, uint32_t k) { return pl->uses[op->in[k]]; }

mlrt_status mlrt__plan_computed(mlrt__planner *pl, const mlrt__ir_op *op, uint32_t k, uint32_t lo, uint32_t hi) {
    const mlrt__gval *g = MLRT__PV(pl, mlrt__plan_in(pl, op, k));
    if (g->dtype != MLRT_F32) return mlrt__plan_fail(pl, MLRT_ERR_UNSUPPORTED, "input %u is int64; the op runs on float tensors", k);
    if (g->rank < lo || g->rank > hi)
        return mlrt__plan_fail(pl, MLRT_ERR_BAD_DIMENSIONS, "input %u has rank %u; the op takes rank %u to %u", k, g->rank, lo, hi);
    return MLRT_OK;
}

mlrt_status mlrt__plan_const_float(mlrt__planner *pl, const mlrt__ir_op *op, uint32_t k, const char *what, bool packed) {
    int32_t v = mlrt__plan_in(pl, op, k);
    if (v < 0) return MLRT_OK;
    const mlrt__gval *g = MLRT__PV(pl, v);
    if (!g->is_const || g->dtype != MLRT_F32)
        return mlrt__plan_fail(pl, MLRT_ERR_UNSUPPORTED, "%s (input %u) must be a constant float tensor", what, k);
    const float *f = g->data;
    for (uint64_t i = 0; !packed && i < g->count; i++)
        if (!isfinite(f[i]))
            return mlrt__plan_fail(pl, MLRT_ERR_NON_FINITE, "%s (input %u) element %llu is not finite", what, k, (unsigned long long)i);
    return MLRT_OK;
}

mlrt_status mlrt__plan_const_ints(mlrt__planner *pl, const mlrt__ir_op *op, uint32_t k, const int64_t **v, uint64_t *n) {
    int32_t id = mlrt__plan_in(pl, op, k);
    if (id < 0) return mlrt__plan_fail(pl, MLRT_ERR_BAD_HEADER, "input %u is missing", k);
    const mlrt__gval *g = MLRT__PV(pl, id);
    if (!g->is_const || g->dtype != MLRT_I64)
        return mlrt__plan_fail(pl, MLRT_ERR_UNSUPPORTED, "input %u must be a constant int64 tensor (an initializer, a "
                               "Constant or a shape computed at load)", k);
    if (g->rank > 1) return mlrt__plan_fail(pl, MLRT_ERR_BAD_DIMENSIONS, "input %u has rank %u, not 1", k, g->rank);
    *v = g->data;
    *n = g->count;
    return MLRT_OK;
}

mlrt_status mlrt__plan_const_scalar(mlrt__planner *pl, const mlrt__ir_op *op, uint32_t k, float def, float *v) {
    int32_t id = mlrt__plan_in(pl, op, k);
    *v = def;
    if (id < 0) return MLRT_OK;
    const mlrt__gval *g = MLRT__PV(pl, id);
    if (!g->is_const || g->count != 1) return mlrt__plan_fail(pl, MLRT_ERR_UNSUPPORTED, "input %u must be a constant scalar", k);
    *v = g->dtype == MLRT_I64 ? (float)((const int64_t *)g->data)[0] : ((const float *)g->data)[0];
    return MLRT_OK;
}

mlrt_status mlrt__plan_axis(mlrt__planner *pl, int64_t axis, uint32_t rank, uint32_t *out) {
    if (axis < -(int64_t)rank || axis >= (int64_t)rank)
        return mlrt__plan_fail(pl, MLRT_ERR_BAD_DIMENSIONS, "axis %lld is out of range for rank %u", (long long)axis, rank);
    *out = (uint32_t)(axis < 0 ? axis + rank : axis);
    return MLRT_OK;
}

uint64_t mlrt__dims_prod(const int64_t *d, uint32_t from, uint32_t to) {
    uint64_t p = 1;
    for (uint32_t k = from; k < to; k++) p *= (uint64_t)d[k];
    return p;
}

/* ------------------------------------------------------------------ values and ops */

int32_t mlrt__plan_value(mlrt__planner *pl, const mlrt__gshape *s) {
    mlrt__graph *g = pl->g;
    if (g->n_vals == pl->cap_vals) {
        uint32_t cap = pl->cap_vals ? 2 * pl->cap_vals : 64;
        mlrt__gval *v = realloc(g->vals, cap * sizeof *v);
        if (!v) return -1;
        g->vals = v, pl->cap_vals = cap;
    }
    mlrt__gval *v = &g->vals[g->n_vals];
    memset(v, 0, sizeof *v);
    v->dtype = s->dtype, v->rank = s->rank, v->count = 1;
    for (uint32_t d = 0; d < s->rank; d++) v->dims[d] = s->dims[d], v->count *= (uint64_t)s->dims[d];
    v->input = v->alias = v->op = -1;
    return (int32_t)g->n_vals++;
}

int32_t mlrt__plan_const(mlrt__planner *pl, mlrt_dtype dtype, uint32_t rank, const int64_t *dims, void *data) {
    mlrt__gshape s = {dtype, rank, {0}};
    if (rank) memcpy(s.dims, dims, rank * sizeof *dims);
    int32_t v = mlrt__plan_value(pl, &s);
    if (v < 0) { free(data); return -1; }
    mlrt__gval *g = MLRT__PV(pl, v);
    g->is_const = g->owned = true;
    g->data = data;
    return v;
}

mlrt__gop *mlrt__plan_op(mlrt__planner *pl, mlrt__op_kind kind, const int32_t *in, uint32_t n_in, const mlrt__gshape *out,
                         uint32_t n_out, void *p) {
    mlrt__graph *g = pl->g;
    int32_t *io = malloc((n_in + n_out + 1) * sizeof *io);
    if (g->n_ops == pl->cap_ops) {
        uint32_t cap = pl->cap_ops ? 2 * pl->cap_ops : 32;
        mlrt__gop *o = realloc(g->ops, cap * sizeof *o);
        if (o) g->ops = o, pl->cap_ops = cap;
    }
    if (!io || g->n_ops == pl->cap_ops) goto oom;
    memcpy(io, in, n_in * sizeof *io);
    for (uint32_t k = 0; k < n_out; k++) {
        io[n_in + k] = out[k].rank == UINT32_MAX ? -1 : mlrt__plan_value(pl, &out[k]);
        if (out[k].rank != UINT32_MAX && io[n_in + k] < 0) goto oom;
        if (io[n_in + k] >= 0) g->vals[io[n_in + k]].op = (int32_t)g->n_ops;
    }
    mlrt__gop *op = &g->ops[g->n_ops++];
    op->kind = kind, op->ir = pl->at, op->n_in = n_in, op->n_out = n_out, op->in = io, op->out = io + n_in, op->p = p;
    return op;
oom:
    free(io);
    return NULL;
}

void mlrt__plan_bind(mlrt__planner *pl, const mlrt__ir_op *op, uint32_t k, int32_t v) {
    if (k < op->n_out && op->out[k] >= 0) pl->vmap[op->out[k]] = v;
}

/* Runs op (the last one) now, on constants: its outputs become constants, and the op goes. */
static mlrt_status fold(mlrt__planner *pl, mlrt__gop *op) {
    mlrt__graph *g = pl->g;
    uint64_t in = 0, out = 0;
    for (uint32_t k = 0; k < op->n_in; k++) in += op->in[k] >= 0 ? g->vals[op->in[k]].count : 0;
    for (uint32_t k = 0; k < op->n_out; k++) out += op->out[k] >= 0 ? g->vals[op->out[k]].count : 0;
    if (out > FOLD_SLACK + 4 * in)
        return mlrt__plan_fail(pl, MLRT_ERR_UNSUPPORTED, "it computes %llu values from constants at load; mlrt folds at most "
                               "%llu", (unsigned long long)out, (unsigned long long)(FOLD_SLACK + 4 * in));
    for (uint32_t k = 0; k < op->n_out; k++) {
        if (op->out[k] < 0) continue;
        mlrt__gval *v = &g->vals[op->out[k]];
        if (!(v->data = malloc(v->count * (v->dtype == MLRT_I64 ? 8 : 4) + 8))) return OOM();
        v->is_const = v->owned = true;
        v->op = -1;
    }
    const mlrt__op_def *def = pl->def; /* (an op folds as the op being planned) */
    TRY(def->run(g, op, 1, pl->err));
    if (op->p) (def->free ? def->free : free)(op->p);
    free(op->in);
    g->n_ops--;
    return MLRT_OK;
}

mlrt_status mlrt__plan_emit(mlrt__planner *pl, const mlrt__ir_op *op, void *p, const mlrt__gshape *out) {
    const mlrt__op_def *def = pl->def;
    int32_t in[256];
    uint32_t n_in = op->n_in < 256 ? op->n_in : 256;
    bool all_const = true;
    for (uint32_t k = 0; k < n_in; k++) {
        in[k] = mlrt__plan_in(pl, op, k);
        all_const &= in[k] < 0 || MLRT__PV(pl, in[k])->is_const;
    }
    mlrt__gshape o[4];
    memset(o, 0, sizeof o);
    uint32_t n_out = def->n_out < 4 ? def->n_out : 4;
    for (uint32_t k = 0; k < n_out; k++) { /* an output nobody names is not computed */
        o[k] = out[k];
        if (k >= op->n_out || op->out[k] < 0) o[k].rank = UINT32_MAX;
    }
    mlrt__gop *g = mlrt__plan_op(pl, op->kind, in, n_in, o, n_out, p);
    if (!g) {
        if (p) (def->free ? def->free : free)(p);
        return OOM();
    }
    for (uint32_t k = 0; k < n_out; k++) mlrt__plan_bind(pl, op, k, g->out[k]);
    return all_const ? fold(pl, g) : MLRT_OK;
}

mlrt_status mlrt__plan_view(mlrt__planner *pl, const mlrt__ir_op *op, void *p, const mlrt__gshape *out) {
    free(p);
    int32_t x = mlrt__plan_in(pl, op, 0);
    const mlrt__gval *src = MLRT__PV(pl, x);
    uint64_t count = mlrt__dims_prod(out[0].dims, 0, out[0].rank);
    if (count != src->count)
        return mlrt__plan_fail(pl, MLRT_ERR_BAD_DIMENSIONS, "the new shape has %llu elements, the input %llu",
                               (unsigned long long)count, (unsigned long long)src->count);
    mlrt__gshape s = out[0];
    s.dtype = src->dtype;
    int32_t v = mlrt__plan_value(pl, &s);
    if (v < 0) return OOM();
    mlrt__gval *nv = MLRT__PV(pl, v);
    src = MLRT__PV(pl, x);
    if (src->is_const) nv->is_const = true, nv->data = src->data, nv->graph_data = src->graph_data;
    else nv->alias = src->alias >= 0 ? src->alias : x;
    mlrt__plan_bind(pl, op, 0, v);
    return MLRT_OK;
}

mlrt__gop *mlrt__plan_fusable(mlrt__planner *pl, const mlrt__ir_op *op, uint32_t k) {
    int32_t v = mlrt__plan_in(pl, op, k);
    if (v < 0 || MLRT__PV(pl, v)->is_const || MLRT__PV(pl, v)->op < 0 || mlrt__plan_uses(pl, op, k) != 1) return NULL;
    mlrt__gop *p = &pl->g->ops[MLRT__PV(pl, v)->op];
    bool linear = p->kind == MLRT__OP_GEMM || p->kind == MLRT__OP_MATMUL || p->kind == MLRT__OP_CONV;
    return linear && p->out[0] == v && ((mlrt__glinear *)p->p)->act == MLRT_ACT_IDENTITY ? p : NULL;
}

/* ------------------------------------------------------------------ running */

void *mlrt__gdata(const mlrt__graph *g, int32_t v) {
    const mlrt__gval *x = &g->vals[v];
    if (x->is_const) return x->data;
    int32_t r = x->alias >= 0 ? x->alias : v;
    if (g->vals[r].input >= 0) return (void *)g->x[g->vals[r].input];
    return (uint32_t *)g->arena + g->vals[r].off;
}

void mlrt__grun_dims(const mlrt__graph *g, int32_t v, size_t rows, uint32_t r, int64_t *d) {
    const mlrt__gval *x = &g->vals[v];
    for (uint32_t k = 0; k < r; k++) d[k] = k + x->rank >= r ? x->dims[k + x->rank - r] : 1;
    if (!x->is_const && g->batched && x->rank == r && r) d[0] *= (int64_t)rows;
}

