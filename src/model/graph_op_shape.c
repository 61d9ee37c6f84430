/* model/graph_op_shape.c — the ops that move data or compute shapes: Flatten, Reshape, Squeeze,
 * Unsqueeze and Identity (views of their input: no copy), Transpose, Concat, Pad, Slice, and Shape,
 * Gather and Cast. On constants they fold at load, which is how the int64 shape arithmetic that
 * exporters write (Shape -> Gather -> Concat -> Reshape) becomes constant shapes; in a batch-mode plan
 * the batch's size is MLRT__BATCH_SYM there. Gather also runs per call: an embedding lookup of
 * int64 indices computed per call (token ids), checked against the table's size. */
#include "graph.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TRY(x) do { mlrt_status st_ = (x); if (st_) return st_; } while (0)
#define OOM() mlrt__plan_fail(pl, MLRT_ERR_OUT_OF_MEMORY, "out of memory")
#define VAL(id) MLRT__PV(pl, id)

static size_t es(mlrt_dtype t) { return t == MLRT_I64 ? 8 : 4; }

/* A view's shape, computed by its import into a gshape of its own (its parameters). */
static mlrt_status view_shape(mlrt__planner *pl, const mlrt__ir_op *op, const void *p, mlrt__gshape *out) {
    out[0] = *(const mlrt__gshape *)p;
    out[0].dtype = VAL(mlrt__plan_in(pl, op, 0))->dtype;
    return MLRT_OK;
}

static mlrt_status new_shape(mlrt__planner *pl, uint32_t rank, const int64_t *dims, void **p) {
    mlrt__gshape *s = calloc(1, sizeof *s);
    if (!s) return OOM();
    s->rank = rank;
    memcpy(s->dims, dims, rank * sizeof *dims);
    *p = s;
    return MLRT_OK;
}

/* ------------------------------------------------------------------ views */

static mlrt_status identity_import(mlrt__planner *pl, const mlrt__ir_op *op, void **p) {
    const mlrt__gval *x = VAL(mlrt__plan_in(pl, op, 0));
    return new_shape(pl, x->rank, x->dims, p);
}

static mlrt_status flatten_import(mlrt__planner *pl, const mlrt__ir_op *op, void **p) {
    const mlrt__gval *xv = VAL(mlrt__plan_in(pl, op, 0));
    int64_t axis = op->p.axis.axis;
    if (axis < -(int64_t)xv->rank || axis > (int64_t)xv->rank)
        return mlrt__plan_fail(pl, MLRT_ERR_BAD_DIMENSIONS, "axis %lld is out of range for rank %u", (long long)axis, xv->rank);
    uint32_t ax = (uint32_t)(axis < 0 ? axis + xv->rank : axis);
    if (!xv->is_const) TRY(mlrt__plan_rows_apart(pl, ax > 0, "it flattens axis 0 into the others"));
    int64_t dims[2] = {(int64_t)mlrt__dims_prod(xv->dims, 0, ax), (int64_t)mlrt__dims_prod(xv->dims, ax, xv->rank)};
    return new_shape(pl, 2, dims, p);
}

static mlrt_status reshape_import(mlrt__planner *pl, const mlrt__ir_op *op, void **p) {
    const mlrt__gval *xv = VAL(mlrt__plan_in(pl, op, 0));
    const int64_t *t;
    uint64_t n;
    TRY(mlrt__plan_const_ints(pl, op, 1, &t, &n));
    if (n > MLRT__MAX_RANK) return mlrt__plan_fail(pl, MLRT_ERR_BAD_DIMENSIONS, "the shape has %llu dims", (unsigned long long)n);
    int64_t dims[MLRT__MAX_RANK];
    int32_t infer = -1;
    uint64_t known = 1;
    bool batch_first = false;
    for (uint32_t k = 0; k < n; k++) {
        dims[k] = t[k];
        if (t[k] == MLRT__BATCH_SYM && k == 0 && !xv->is_const) dims[k] = 1, batch_first = true;
        else if (t[k] == 0 && !op->p.reshape.allow_zero) {
            if (k >= xv->rank) return mlrt__plan_fail(pl, MLRT_ERR_BAD_DIMENSIONS, "shape[%u] = 0 copies a dim the input lacks", k);
            dims[k] = xv->dims[k];
            batch_first |= k == 0;
        } else if (t[k] == -1) {
            if (infer >= 0) return mlrt__plan_fail(pl, MLRT_ERR_BAD_DIMENSIONS, "the shape has two -1");
            infer = (int32_t)k;
            continue;
        } else if (t[k] < 0 || t[k] > (int64_t)MLRT__MAX_PARAMS)
            return mlrt__plan_fail(pl, t[k] == MLRT__BATCH_SYM ? MLRT_ERR_UNSUPPORTED : MLRT_ERR_BAD_DIMENSIONS,
                                   "shape[%u] = %s", k, t[k] == MLRT__BATCH_SYM ? "the batch size, not first" : "negative");
        known *= (uint64_t)dims[k];
    }
    if (infer >= 0) {
        if (!known || xv->count % known)
            return mlrt__plan_fail(pl, MLRT_ERR_BAD_DIMENSIONS, "-1 cannot be inferred: %llu elements into %llu",
                                   (unsigned long long)xv->count, (unsigned long long)known);
        dims[infer] = (int64_t)(xv->count / known);
        batch_first |= infer == 0 && dims[0] == 1;
    }
    /* a literal 1 first stands for the batch only when the graph's inputs fixed the batch at 1 */
    batch_first |= n && dims[0] == 1 && t[0] == 1 && pl->fixed_batch;
    if (!xv->is_const) TRY(mlrt__plan_rows_apart(pl, n && dims[0] == 1 && batch_first, "its new shape does not keep the batch first"));
    return new_shape(pl, (uint32_t)n, dims, p);
}

/* Squeeze (un: Unsqueeze) by the axes of input 1 (Squeeze without: every axis of size 1). */
static mlrt_status squeeze_common(mlrt__planner *pl, const mlrt__ir_op *op, bool un, void **p) {
    const mlrt__gval *xv = VAL(mlrt__plan_in(pl, op, 0));
    const int64_t *axes = NULL;
    uint64_t n = 0;
    if (mlrt__plan_in(pl, op, 1) >= 0) TRY(mlrt__plan_const_ints(pl, op, 1, &axes, &n));
    if (un && !axes) return mlrt__plan_fail(pl, MLRT_ERR_BAD_HEADER, "no axes");
    uint64_t r = un ? xv->rank + n : xv->rank;
    if (r > MLRT__MAX_RANK || n > MLRT__MAX_RANK)
        return mlrt__plan_fail(pl, MLRT_ERR_BAD_DIMENSIONS, "rank %llu is more than %d", (unsigned long long)r, MLRT__MAX_RANK);
    bool pick[MLRT__MAX_RANK] = {0};
    for (uint64_t k = 0; k < n; k++) {
        uint32_t a;
        TRY(mlrt__plan_axis(pl, axes[k], (uint32_t)r, &a));
        if (pick[a]) return mlrt__plan_fail(pl, MLRT_ERR_BAD_HEADER, "axis %u is listed twice", a);
        if (!un && xv->dims[a] != 1)
            return mlrt__plan_fail(pl, MLRT_ERR_BAD_DIMENSIONS, "axis %u has size %lld, not 1", a, (long long)xv->dims[a]);
        pick[a] = true;
    }
    if (!un && !axes) /* every axis of size 1; in batch mode the batch stays */
        for (uint32_t a = (pl->g->batched && !xv->is_const) ? 1 : 0; a < xv->rank; a++) pick[a] = xv->dims[a] == 1;
    if (!xv->is_const) TRY(mlrt__plan_rows_apart(pl, !pick[0], un ? "it inserts an axis before the batch" : "it removes the batch axis"));
    int64_t dims[MLRT__MAX_RANK];
    uint32_t o = 0, i = 0;
    for (uint32_t a = 0; a < r; a++) {
        if (un) dims[a] = pick[a] ? 1 : xv->dims[i++];
        else if (!pick[a]) dims[o++] = xv->dims[a];
    }
    return new_shape(pl, un ? (uint32_t)r : o, dims, p);
}
static mlrt_status squeeze_import(mlrt__planner *pl, const mlrt__ir_op *op, void **p) { return squeeze_common(pl, op, false, p); }
static mlrt_status unsqueeze_import(mlrt__planner *pl, const mlrt__ir_op *op, void **p) { return squeeze_common(pl, op, true, p); }

/* ------------------------------------------------------------------ Transpose */

static mlrt_status transpose_import(mlrt__planner *pl, const mlrt__ir_op *op, void **p) {
    const mlrt__gval *xv = VAL(mlrt__plan_in(pl, op, 0));
    const mlrt__ir_transpose *q = &op->p.transpose;
    if (q->n_perm && q->n_perm != xv->rank)
        return mlrt__plan_fail(pl, MLRT_ERR_BAD_HEADER, "'perm' has %u values, not %u", q->n_perm, xv->rank);
    int64_t *perm = calloc(MLRT__MAX_RANK, sizeof *perm);
    if (!perm) return OOM();
    bool seen[MLRT__MAX_RANK] = {0};
    for (uint32_t k = 0; k < xv->rank; k++) {
        perm[k] = q->n_perm ? q->perm[k] : (int64_t)(xv->rank - 1 - k);
        if (perm[k] < 0 || perm[k] >= (int64_t)xv->rank || seen[perm[k]]) {
            free(perm);
            return mlrt__plan_fail(pl, MLRT_ERR_BAD_HEADER, "perm is not a permutation of 0..%u", xv->rank - 1);
        }
        seen[perm[k]] = true;
    }
    if (!xv->is_const && mlrt__plan_rows_apart(pl, xv->rank == 0 || perm[0] == 0, "it moves axis 0")) {
        free(perm);
        return pl->err->code;
    }
    *p = perm;
    return MLRT_OK;
}

static mlrt_status transpose_shape(mlrt__planner *pl, const mlrt__ir_op *op, const void *p, mlrt__gshape *out) {
    const mlrt__gval *xv = VAL(mlrt__plan_in(pl, op, 0));
    const int64_t *perm = p;
    out[0] = (mlrt__gshape){xv->dtype, xv->rank, {0}};
    for (uint32_t k = 0; k < xv->rank; k++) out[0].dims[k] = xv->dims[perm[k]];
    return MLRT_OK;
}

static mlrt_status transpose_plan(mlrt__planner *pl, const mlrt__ir_op *op, void *p, const mlrt__gshape *out) {
    if (VAL(mlrt__plan_in(pl, op, 0))->rank <= 1) return mlrt__plan_view(pl, op, p, out); /* nothing moves */
    return mlrt__plan_emit(pl, op, p, out);
}

static mlrt_status transpose_run(mlrt__graph *g, const mlrt__gop *op, size_t rows, mlrt_error *err) {
    const mlrt__gval *out = &g->vals[op->out[0]];
    int64_t xd[MLRT__MAX_RANK];
    mlrt__grun_dims(g, op->in[0], rows, out->rank, xd);
    mlrt__transpose(mlrt__gdata(g, op->in[0]), xd, op->p, out->rank, mlrt__gdata(g, op->out[0]), es(out->dtype));
    return MLRT_OK;
}

static void copy_cost(const mlrt__graph *g, const mlrt__gop *op, uint64_t *macs, uint64_t *params) {
    *macs = g->vals[op->out[0]].count, *params = 0;
}

/* ------------------------------------------------------------------ Concat */

typedef struct gconcat { uint64_t outer; } gconcat; /* the tensor as [outer][axis][inner], per sample */

static mlrt_status concat_import(mlrt__planner *pl, const mlrt__ir_op *op, void **p) {
    const mlrt__gval *first = VAL(mlrt__plan_in(pl, op, 0));
    uint32_t ax;
    TRY(mlrt__plan_axis(pl, op->p.axis.axis, first->rank, &ax));
    bool all_const = true;
    for (uint32_t k = 0; k < op->n_in; k++) {
        int32_t v = mlrt__plan_in(pl, op, k);
        if (v < 0) return mlrt__plan_fail(pl, MLRT_ERR_BAD_HEADER, "input %u is missing", k);
        const mlrt__gval *g = VAL(v);
        if (g->rank != first->rank || g->dtype != first->dtype)
            return mlrt__plan_fail(pl, MLRT_ERR_BAD_DIMENSIONS, "input %u has rank %u or type unlike input 0", k, g->rank);
        for (uint32_t d = 0; d < g->rank; d++)
            if (d != ax && g->dims[d] != first->dims[d])
                return mlrt__plan_fail(pl, MLRT_ERR_BAD_DIMENSIONS, "input %u has dim %u = %lld, input 0 %lld", k, d,
                                       (long long)g->dims[d], (long long)first->dims[d]);
        all_const &= g->is_const;
    }
    if (!all_const) TRY(mlrt__plan_rows_apart(pl, ax > 0, "it concatenates along axis 0"));
    gconcat *c = malloc(sizeof *c);
    if (!c) return OOM();
    c->outer = mlrt__dims_prod(first->dims, 0, ax);
    *p = c;
    return MLRT_OK;
}

static mlrt_status concat_shape(mlrt__planner *pl, const mlrt__ir_op *op, const void *p, mlrt__gshape *out) {
    const mlrt__gval *first = VAL(mlrt__plan_in(pl, op, 0));
    uint32_t ax = (uint32_t)(op->p.axis.axis < 0 ? op->p.axis.axis + first->rank : op->p.axis.axis);
    out[0] = (mlrt__gshape){first->dtype, first->rank, {0}};
    memcpy(out[0].dims, first->dims, sizeof out[0].dims);
    out[0].dims[ax] = 0;
    for (uint32_t k = 0; k < op->n_in; k++) out[0].dims[ax] += VAL(mlrt__plan_in(pl, op, k))->dims[ax];
    return MLRT_OK;
}

static mlrt_status concat_run(mlrt__graph *g, const mlrt__gop *op, size_t rows, mlrt_error *err) {
    const gconcat *c = op->p;
    const mlrt__gval *out = &g->vals[op->out[0]];
    size_t e = es(out->dtype), per = (size_t)c->outer, outer = per * mlrt__grows(g, op->out[0], rows), at = 0;
    size_t row = (size_t)(out->count / c->outer); /* output elements per outer index */
    char *y = mlrt__gdata(g, op->out[0]);
    for (uint32_t k = 0; k < op->n_in; k++) {
        const mlrt__gval *v = &g->vals[op->in[k]];
        const char *src = mlrt__gdata(g, op->in[k]);
        size_t chunk = (size_t)(v->count / c->outer);
        for (size_t o = 0; o < outer; o++) /* a constant input repeats for every sample */
            memcpy(y + (o * row + at) * e, src + (v->is_const ? o % per : o) * chunk * e, chunk * e);
        at += chunk;
    }
    return MLRT_OK;
}

/* ------------------------------------------------------------------ Pad */

typedef struct gpad { int64_t pads[2 * MLRT__MAX_RANK]; float value; } gpad;

static mlrt_status pad_import(mlrt__planner *pl, const mlrt__ir_op *op, void **p) {
    const mlrt__gval *xv = VAL(mlrt__plan_in(pl, op, 0));
    if (xv->dtype != MLRT_F32) return mlrt__plan_fail(pl, MLRT_ERR_UNSUPPORTED, "padding an int64 tensor");
    const int64_t *pads, *axes = NULL;
    uint64_t n, na = 0;
    float value;
    TRY(mlrt__plan_const_ints(pl, op, 1, &pads, &n));
    TRY(mlrt__plan_const_scalar(pl, op, 2, 0.0f, &value));
    if (mlrt__plan_in(pl, op, 3) >= 0) TRY(mlrt__plan_const_ints(pl, op, 3, &axes, &na));
    uint32_t r = xv->rank;
    uint64_t naxes = axes ? na : r;
    if (n != 2 * naxes || naxes > r)
        return mlrt__plan_fail(pl, MLRT_ERR_BAD_HEADER, "pads has %llu values, not %llu", (unsigned long long)n,
                               (unsigned long long)(2 * naxes));
    if (isnan(value)) return mlrt__plan_fail(pl, MLRT_ERR_NON_FINITE, "the pad value is NaN");
    gpad *q = calloc(1, sizeof *q);
    if (!q) return OOM();
    q->value = value;
    for (uint32_t k = 0; k < naxes; k++) {
        uint32_t a = k;
        if (axes && mlrt__plan_axis(pl, axes[k], r, &a)) { free(q); return pl->err->code; }
        q->pads[a] = pads[k], q->pads[r + a] = pads[naxes + k];
    }
    for (uint32_t a = 0; a < r; a++)
        if (q->pads[a] < 0 || q->pads[r + a] < 0 || q->pads[a] > 65536 || q->pads[r + a] > 65536) {
            free(q);
            return mlrt__plan_fail(pl, MLRT_ERR_UNSUPPORTED, "pads on axis %u are negative or beyond 65536", a);
        }
    if (!xv->is_const && mlrt__plan_rows_apart(pl, r == 0 || (q->pads[0] == 0 && q->pads[r] == 0), "it pads axis 0")) {
        free(q);
        return pl->err->code;
    }
    *p = q;
    return MLRT_OK;
}

static mlrt_status pad_shape(mlrt__planner *pl, const mlrt__ir_op *op, const void *p, mlrt__gshape *out) {
    const gpad *q = p;
    const mlrt__gval *xv = VAL(mlrt__plan_in(pl, op, 0));
    out[0] = (mlrt__gshape){MLRT_F32, xv->rank, {0}};
    for (uint32_t a = 0; a < xv->rank; a++) out[0].dims[a] = xv->dims[a] + q->pads[a] + q->pads[xv->rank + a];
    return MLRT_OK;
}

static mlrt_status pad_run(mlrt__graph *g, const mlrt__gop *op, size_t rows, mlrt_error *err) {
    const gpad *q = op->p;
    const mlrt__gval *out = &g->vals[op->out[0]];
    int64_t xd[MLRT__MAX_RANK];
    mlrt__grun_dims(g, op->in[0], rows, out->rank, xd);
    mlrt__pad(mlrt__gdata(g, op->in[0]), xd, q->pads, out->rank, q->value, mlrt__gdata(g, op->out[0]));
    return MLRT_OK;
}

/* ------------------------------------------------------------------ Slice */

typedef struct gslice { int64_t first[MLRT__MAX_RANK], step[MLRT__MAX_RANK], dims[MLRT__MAX_RANK]; } gslice;

/* One axis: the first index and the count for (start, end, step) on a dim of n. */
static void slice_axis(int64_t n, int64_t start, int64_t end, int64_t step, int64_t *first, int64_t *count) {
    if (start < 0) start += n;
    if (end < 0 && end != MLRT__BATCH_SYM) end += n;
    if (step > 0) {
        start = start < 0 ? 0 : start > n ? n : start;
        end = end < 0 ? 0 : end > n ? n : end;
        *count = end > start ? (end - start + step - 1) / step : 0;
    } else {
        start = start < 0 ? -1 : start > n - 1 ? n - 1 : start;
        end = end < -1 ? -1 : end > n - 1 ? n - 1 : end;
        *count = start > end ? (start - end + (-step) - 1) / (-step) : 0;
    }
    *first = start;
}

static mlrt_status slice_import(mlrt__planner *pl, const mlrt__ir_op *op, void **p) {
    const mlrt__gval *xv = VAL(mlrt__plan_in(pl, op, 0));
    const int64_t *starts, *ends, *axes = NULL, *steps = NULL;
    uint64_t ns, ne, na = 0, nst = 0;
    TRY(mlrt__plan_const_ints(pl, op, 1, &starts, &ns));
    TRY(mlrt__plan_const_ints(pl, op, 2, &ends, &ne));
    if (mlrt__plan_in(pl, op, 3) >= 0) TRY(mlrt__plan_const_ints(pl, op, 3, &axes, &na));
    if (mlrt__plan_in(pl, op, 4) >= 0) TRY(mlrt__plan_const_ints(pl, op, 4, &steps, &nst));
    if (ns != ne || (axes && na != ns) || (steps && nst != ns) || ns > xv->rank)
        return mlrt__plan_fail(pl, MLRT_ERR_BAD_HEADER, "starts, ends, axes and steps disagree in length");
    gslice *q = malloc(sizeof *q);
    if (!q) return OOM();
    bool seen[MLRT__MAX_RANK] = {0};
    for (uint32_t d = 0; d < xv->rank; d++) q->first[d] = 0, q->step[d] = 1, q->dims[d] = xv->dims[d];
    for (uint64_t k = 0; k < ns; k++) {
        uint32_t a = (uint32_t)k;
        int64_t s = steps ? steps[k] : 1;
        mlrt_status st = axes ? mlrt__plan_axis(pl, axes[k], xv->rank, &a) : MLRT_OK;
        if (!st && (seen[a] || s == 0 || starts[k] == MLRT__BATCH_SYM))
            st = mlrt__plan_fail(pl, MLRT_ERR_BAD_HEADER, "axis %u is sliced twice, with step 0, or from the batch size", a);
        if (st) { free(q); return st; }
        seen[a] = true;
        q->step[a] = s;
        slice_axis(xv->dims[a], starts[k], ends[k], s, &q->first[a], &q->dims[a]);
    }
    if (!xv->is_const &&
        mlrt__plan_rows_apart(pl, !seen[0] || (q->first[0] == 0 && q->step[0] == 1 && q->dims[0] == xv->dims[0]), "it slices axis 0")) {
        free(q);
        return pl->err->code;
    }
    *p = q;
    return MLRT_OK;
}

static mlrt_status slice_shape(mlrt__planner *pl, const mlrt__ir_op *op, const void *p, mlrt__gshape *out) {
    const mlrt__gval *xv = VAL(mlrt__plan_in(pl, op, 0));
    out[0] = (mlrt__gshape){xv->dtype, xv->rank, {0}};
    memcpy(out[0].dims, ((const gslice *)p)->dims, sizeof out[0].dims);
    return MLRT_OK;
}

static mlrt_status slice_run(mlrt__graph *g, const mlrt__gop *op, size_t rows, mlrt_error *err) {
    const gslice *q = op->p;
    const mlrt__gval *out = &g->vals[op->out[0]];
    int64_t xd[MLRT__MAX_RANK], yd[MLRT__MAX_RANK];
    mlrt__grun_dims(g, op->in[0], rows, out->rank, xd);
    mlrt__grun_dims(g, op->out[0], rows, out->rank, yd);
    mlrt__slice(mlrt__gdata(g, op->in[0]), xd, q->first, q->step, out->rank, mlrt__gdata(g, op->out[0]), yd, es(out->dtype));
    return MLRT_OK;
}

/* ------------------------------------------------------------------ Shape */

static mlrt_status shape_plan(mlrt__planner *pl, const mlrt__ir_op *op, void *p, const mlrt__gshape *out) {
    const mlrt__gval *xv = VAL(mlrt__plan_in(pl, op, 0));
    const mlrt__ir_shape *q = &op->p.shape;
    int64_t r = xv->rank, start = q->start, end = q->has_end ? q->end : r;
    start = start < 0 ? start + r : start, end = end < 0 ? end + r : end;
    start = start < 0 ? 0 : start > r ? r : start, end = end < 0 ? 0 : end > r ? r : end;
    int64_t n = end > start ? end - start : 0;
    int64_t *v = malloc((size_t)n * sizeof *v + 8);
    if (!v) return OOM();
    for (int64_t k = 0; k < n; k++) v[k] = k + start == 0 && pl->g->batched && !xv->is_const ? MLRT__BATCH_SYM : xv->dims[k + start];
    int32_t c = mlrt__plan_const(pl, MLRT_I64, 1, &n, v);
    if (c < 0) return OOM();
    mlrt__plan_bind(pl, op, 0, c);
    return MLRT_OK;
}

/* ------------------------------------------------------------------ Gather */

typedef struct ggather { uint32_t axis; uint64_t outer, n, inner, m; } ggather; /* data [outer][n][inner], m indices per sample */

static mlrt_status gather_import(mlrt__planner *pl, const mlrt__ir_op *op, void **p) {
    const mlrt__gval *d = VAL(mlrt__plan_in(pl, op, 0)), *ix = VAL(mlrt__plan_in(pl, op, 1));
    if (ix->dtype != MLRT_I64) return mlrt__plan_fail(pl, MLRT_ERR_UNSUPPORTED, "the indices are not int64");
    if (!d->is_const && !ix->is_const)
        return mlrt__plan_fail(pl, MLRT_ERR_UNSUPPORTED, "mlrt gathers from a constant, or with constant indices");
    uint32_t ax;
    TRY(mlrt__plan_axis(pl, op->p.axis.axis, d->rank, &ax));
    if (d->rank + ix->rank - 1 > MLRT__MAX_RANK)
        return mlrt__plan_fail(pl, MLRT_ERR_BAD_DIMENSIONS, "its output would have rank %u", d->rank + ix->rank - 1);
    if (!d->is_const) TRY(mlrt__plan_rows_apart(pl, ax > 0, "it gathers along axis 0"));
    if (!ix->is_const) TRY(mlrt__plan_rows_apart(pl, ax == 0, "its indices are not the first axes of its output"));
    for (uint64_t k = 0; ix->is_const && k < ix->count; k++) {
        int64_t i = ((const int64_t *)ix->data)[k];
        if (i < -d->dims[ax] || i >= d->dims[ax])
            return mlrt__plan_fail(pl, MLRT_ERR_BAD_DIMENSIONS, "index %lld is out of range for %lld values", (long long)i,
                                   (long long)d->dims[ax]);
    }
    ggather *q = malloc(sizeof *q);
    if (!q) return OOM();
    q->axis = ax, q->outer = mlrt__dims_prod(d->dims, 0, ax), q->n = (uint64_t)d->dims[ax];
    q->inner = mlrt__dims_prod(d->dims, ax + 1, d->rank), q->m = ix->count;
    *p = q;
    return MLRT_OK;
}

static mlrt_status gather_shape(mlrt__planner *pl, const mlrt__ir_op *op, const void *p, mlrt__gshape *out) {
    const mlrt__gval *d = VAL(mlrt__plan_in(pl, op, 0)), *ix = VAL(mlrt__plan_in(pl, op, 1));
    const ggather *q = p;
    out[0] = (mlrt__gshape){d->dtype, d->rank + ix->rank - 1, {0}};
    uint32_t o = 0;
    for (uint32_t k = 0; k < q->axis; k++) out[0].dims[o++] = d->dims[k];
    for (uint32_t k = 0; k < ix->rank; k++) out[0].dims[o++] = ix->dims[k];
    for (uint32_t k = q->axis + 1; k < d->rank; k++) out[0].dims[o++] = d->dims[k];
    return MLRT_OK;
}

static mlrt_status gather_run(mlrt__graph *g, const mlrt__gop *op, size_t rows, mlrt_error *err) {
    const ggather *q = op->p;
    const mlrt__gval *d = &g->vals[op->in[0]];
    size_t samples = mlrt__grows(g, op->in[0], rows), m = (size_t)q->m * mlrt__grows(g, op->in[1], rows);
    int64_t bad = mlrt__gather(mlrt__gdata(g, op->in[0]), (size_t)q->outer * samples, (size_t)q->n, (size_t)q->inner,
                               es(d->dtype), mlrt__gdata(g, op->in[1]), m, mlrt__gdata(g, op->out[0]));
    if (bad >= 0)
        return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "run: a Gather's index %lld (its element %lld) is out of range for "
                          "%llu values", (long long)((const int64_t *)mlrt__gdata(g, op->in[1]))[bad], (long long)bad,
                          (unsigned long long)q->n);
    return MLRT_OK;
}

/* ------------------------------------------------------------------ Cast */

static mlrt_status cast_import(mlrt__planner *pl, const mlrt__ir_op *op, void **p) {
    const mlrt__gval *xv = VAL(mlrt__plan_in(pl, op, 0));
    mlrt_dtype to = op->p.cast.to;
    for (uint64_t k = 0; xv->is_const && k < xv->count && xv->dtype != to; k++) { /* folded now: checked now */
        if (xv->dtype == MLRT_F32) {
            float f = ((const float *)xv->data)[k];
            if (!(f > -9.2233715e18f && f < 9.2233715e18f))
                return mlrt__plan_fail(pl, MLRT_ERR_NON_FINITE, "element %llu does not fit int64", (unsigned long long)k);
        } else if (((const int64_t *)xv->data)[k] == MLRT__BATCH_SYM)
            return mlrt__plan_fail(pl, MLRT_ERR_UNSUPPORTED, "a cast of the batch size");
    }
    return new_shape(pl, xv->rank, xv->dims, p);
}

static mlrt_status cast_shape(mlrt__planner *pl, const mlrt__ir_op *op, const void *p, mlrt__gshape *out) {
    out[0] = *(const mlrt__gshape *)p;
    out[0].dtype = op->p.cast.to;
    return MLRT_OK;
}

static mlrt_status cast_plan(mlrt__planner *pl, const mlrt__ir_op *op, void *p, const mlrt__gshape *out) {
    if (VAL(mlrt__plan_in(pl, op, 0))->dtype == op->p.cast.to) return mlrt__plan_view(pl, op, p, out);
    free(p);
    return mlrt__plan_emit(pl, op, NULL, out);
}

static mlrt_status cast_run(mlrt__graph *g, const mlrt__gop *op, size_t rows, mlrt_error *err) {
    const mlrt__gval *out = &g->vals[op->out[0]];
    size_t n = (size_t)out->count * mlrt__grows(g, op->out[0], rows);
    if (out->dtype == MLRT_F32) {
        mlrt__cast_i64_f32(mlrt__gdata(g, op->in[0]), mlrt__gdata(g, op->out[0]), n);
        return MLRT_OK;
    }
    int64_t bad = mlrt__cast_f32_i64(mlrt__gdata(g, op->in[0]), mlrt__gdata(g, op->out[0]), n);
    return bad < 0 ? MLRT_OK : mlrt__fail(err, MLRT_ERR_NON_FINITE, "run: a Cast's element %lld is not finite or beyond int64",
                                          (long long)bad);
}

/* ------------------------------------------------------------------ the rows */

#define VIEW(nm, imp, in, i64) {nm, 1, in, 1, i64, imp, view_shape, mlrt__plan_view, NULL, NULL, NULL, NULL}
const mlrt__op_def mlrt__op_identity = VIEW("Identity", identity_import, 1, 0x1);
const mlrt__op_def mlrt__op_flatten = VIEW("Flatten", flatten_import, 1, 0x1);
const mlrt__op_def mlrt__op_reshape = {"Reshape", 2, 2, 1, 0x1, reshape_import, view_shape, mlrt__plan_view, NULL, NULL, NULL, NULL};
const mlrt__op_def mlrt__op_squeeze = VIEW("Squeeze", squeeze_import, 2, 0x1);
const mlrt__op_def mlrt__op_unsqueeze = VIEW("Unsqueeze", unsqueeze_import, 2, 0x1);
const mlrt__op_def mlrt__op_transpose = {"Transpose", 1, 1, 1, 0x1, transpose_import, transpose_shape, transpose_plan, NULL,
                                         transpose_run, copy_cost, NULL};
const mlrt__op_def mlrt__op_concat = {"Concat", 1, 255, 1, 0xff, concat_import, concat_shape, NULL, NULL, concat_run, copy_cost, NULL};
const mlrt__op_def mlrt__op_pad = {"Pad", 2, 4, 1, 0, pad_import, pad_shape, NULL, NULL, pad_run, copy_cost, NULL};
const mlrt__op_def mlrt__op_slice = {"Slice", 3, 5, 1, 0x1, slice_import, slice_shape, NULL, NULL, slice_run, copy_cost, NULL};
const mlrt__op_def mlrt__op_shape = {"Shape", 1, 1, 1, 0x1, NULL, NULL, shape_plan, NULL, NULL, NULL, NULL};
const mlrt__op_def mlrt__op_gather = {"Gather", 2, 2, 1, 0x3, gather_import, gather_shape, NULL, NULL, gather_run, copy_cost, NULL};
const mlrt__op_def mlrt__op_cast = {"Cast", 1, 1, 1, 0x1, cast_import, cast_shape, cast_plan, NULL, cast_run, copy_cost, NULL};
