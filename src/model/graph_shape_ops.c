/* model/graph_shape_ops.c — the ops that move data or compute shapes: Flatten, Reshape, Squeeze,
 * Unsqueeze, Identity, Dropout (views of their input), Transpose, Concat, Pad, and the int64 shape
 * arithmetic PyTorch exports around them (Constant, Shape, Gather), folded at load. */
#include "graph_build.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TRY(x) do { mlrt_status st_ = (x); if (st_) return st_; } while (0)
#define OOM() mlrt__bld_fail(b, MLRT_ERR_OUT_OF_MEMORY, "out of memory")
#define VAL(id) (&b->gr->vals[id])

static const mlrt__onnx_node *node(bld *b) { return &b->g->nodes[b->node]; }

mlrt_status mlrt__op_identity(bld *b) {
    bool dropout = mlrt__str_eq(node(b)->op, "Dropout");
    TRY(mlrt__bld_arity(b, 1, dropout ? 3 : 1));
    if (dropout && mlrt__bld_in(b, 2) >= 0) {
        const mlrt__gval *t = VAL(mlrt__bld_in(b, 2));
        if (!t->is_const || t->count != 1 || (t->is_int ? t->i[0] != 0 : t->f[0] != 0.0f))
            return mlrt__bld_fail(b, MLRT_ERR_UNSUPPORTED, "training_mode is not a constant false; mlrt runs inference");
    }
    int32_t x = mlrt__bld_in(b, 0);
    return mlrt__bld_reshaped(b, x, VAL(x)->rank, VAL(x)->dims);
}

mlrt_status mlrt__op_flatten(bld *b) {
    TRY(mlrt__bld_arity(b, 1, 1));
    int32_t x = mlrt__bld_in(b, 0);
    const mlrt__gval *xv = VAL(x);
    int64_t axis;
    TRY(mlrt__bld_int(b, "axis", 1, &axis));
    if (axis < -(int64_t)xv->rank || axis > (int64_t)xv->rank)
        return mlrt__bld_fail(b, MLRT_ERR_BAD_DIMENSIONS, "axis %lld is out of range for rank %u", (long long)axis, xv->rank);
    uint32_t ax = (uint32_t)(axis < 0 ? axis + xv->rank : axis);
    if (!xv->is_const) TRY(mlrt__bld_rows_apart(b, ax > 0, "it flattens axis 0 into the others"));
    int64_t dims[2] = {(int64_t)mlrt__dims_prod(xv->dims, 0, ax), (int64_t)mlrt__dims_prod(xv->dims, ax, xv->rank)};
    return mlrt__bld_reshaped(b, x, 2, dims);
}

mlrt_status mlrt__op_reshape(bld *b) {
    TRY(mlrt__bld_arity(b, 2, 2));
    int32_t x = mlrt__bld_in(b, 0);
    const int64_t *t;
    uint64_t n;
    int64_t allowzero;
    TRY(mlrt__bld_const_ints(b, 1, &t, &n));
    TRY(mlrt__bld_int(b, "allowzero", 0, &allowzero));
    const mlrt__gval *xv = VAL(x);
    if (n > MLRT__MAX_RANK) return mlrt__bld_fail(b, MLRT_ERR_BAD_DIMENSIONS, "the shape has %llu dims", (unsigned long long)n);
    int64_t dims[MLRT__MAX_RANK];
    int32_t infer = -1;
    uint64_t known = 1;
    bool batch_first = false;
    for (uint32_t k = 0; k < n; k++) {
        dims[k] = t[k];
        if (t[k] == MLRT__BATCH_SYM && k == 0 && !xv->is_const) dims[k] = 1, batch_first = true;
        else if (t[k] == 0 && !allowzero) {
            if (k >= xv->rank) return mlrt__bld_fail(b, MLRT_ERR_BAD_DIMENSIONS, "shape[%u] = 0 copies a dim the input lacks", k);
            dims[k] = xv->dims[k];
            batch_first |= k == 0;
        } else if (t[k] == -1) {
            if (infer >= 0) return mlrt__bld_fail(b, MLRT_ERR_BAD_DIMENSIONS, "the shape has two -1");
            infer = (int32_t)k;
            continue;
        } else if (t[k] < 0 || t[k] > (int64_t)MLRT__MAX_PARAMS)
            return mlrt__bld_fail(b, t[k] == MLRT__BATCH_SYM ? MLRT_ERR_UNSUPPORTED : MLRT_ERR_BAD_DIMENSIONS,
                                 "shape[%u] = %s", k, t[k] == MLRT__BATCH_SYM ? "the batch size, not first" : "negative");
        known *= (uint64_t)dims[k];
    }
    if (infer >= 0) {
        if (!known || xv->count % known)
            return mlrt__bld_fail(b, MLRT_ERR_BAD_DIMENSIONS, "-1 cannot be inferred: %llu elements into %llu",
                                 (unsigned long long)xv->count, (unsigned long long)known);
        dims[infer] = (int64_t)(xv->count / known);
        batch_first |= infer == 0 && dims[0] == 1;
    }
    /* a literal 1 first stands for the batch only when the file fixed the batch at 1 */
    const mlrt__onnx_value *in = &b->g->values[b->g->inputs[0]];
    batch_first |= n && dims[0] == 1 && t[0] == 1 && in->dims[0] == 1;
    if (!xv->is_const) TRY(mlrt__bld_rows_apart(b, n && dims[0] == 1 && batch_first, "its new shape does not keep the batch first"));
    return mlrt__bld_reshaped(b, x, (uint32_t)n, dims);
}

mlrt_status mlrt__op_squeeze(bld *b) {
    bool un = mlrt__str_eq(node(b)->op, "Unsqueeze");
    bool by_input = b->g->opset >= 13;
    TRY(mlrt__bld_arity(b, un && by_input ? 2 : 1, by_input ? 2 : 1));
    int32_t x = mlrt__bld_in(b, 0);
    const mlrt__gval *xv = VAL(x);
    const int64_t *axes = NULL;
    uint64_t n = 0;
    uint32_t na = 0;
    if (by_input && mlrt__bld_in(b, 1) >= 0) TRY(mlrt__bld_const_ints(b, 1, &axes, &n));
    else if (!by_input) {
        TRY(mlrt__bld_ints(b, "axes", 0, &axes, &na));
        n = na;
    }
    if (un && !axes) return mlrt__bld_fail(b, MLRT_ERR_BAD_HEADER, "no axes");
    uint32_t r = un ? xv->rank + (uint32_t)n : xv->rank;
    if (r > MLRT__MAX_RANK || n > MLRT__MAX_RANK)
        return mlrt__bld_fail(b, MLRT_ERR_BAD_DIMENSIONS, "rank %u is more than %d", r, MLRT__MAX_RANK);
    bool pick[MLRT__MAX_RANK] = {0};
    for (uint64_t k = 0; k < n; k++) {
        uint32_t a;
        TRY(mlrt__bld_axis(b, axes[k], r, &a));
        if (pick[a]) return mlrt__bld_fail(b, MLRT_ERR_BAD_HEADER, "axis %u is listed twice", a);
        if (!un && xv->dims[a] != 1)
            return mlrt__bld_fail(b, MLRT_ERR_BAD_DIMENSIONS, "axis %u has size %lld, not 1", a, (long long)xv->dims[a]);
        pick[a] = true;
    }
    if (!un && !axes) /* every axis of size 1; in batch mode the batch stays */
        for (uint32_t a = (b->gr->batched && !xv->is_const) ? 1 : 0; a < xv->rank; a++) pick[a] = xv->dims[a] == 1;
    if (!xv->is_const) TRY(mlrt__bld_rows_apart(b, !pick[0], un ? "it inserts an axis before the batch" : "it removes the batch axis"));
    int64_t dims[MLRT__MAX_RANK];
    uint32_t o = 0, i = 0;
    for (uint32_t a = 0; a < r; a++) {
        if (un) dims[a] = pick[a] ? 1 : xv->dims[i++];
        else if (!pick[a]) dims[o++] = xv->dims[a];
    }
    return mlrt__bld_reshaped(b, x, un ? r : o, dims);
}

mlrt_status mlrt__op_transpose(bld *b) {
    TRY(mlrt__bld_arity(b, 1, 1));
    int32_t x = mlrt__bld_in(b, 0);
    const mlrt__gval *xv = VAL(x);
    const int64_t *perm;
    TRY(mlrt__bld_ints(b, "perm", xv->rank, &perm, NULL));
    int64_t *p = malloc(MLRT__MAX_RANK * sizeof *p), dims[MLRT__MAX_RANK];
    if (!p) return OOM();
    bool seen[MLRT__MAX_RANK] = {0};
    for (uint32_t k = 0; k < xv->rank; k++) {
        p[k] = perm ? perm[k] : (int64_t)(xv->rank - 1 - k);
        if (p[k] < 0 || p[k] >= (int64_t)xv->rank || seen[p[k]]) {
            free(p);
            return mlrt__bld_fail(b, MLRT_ERR_BAD_HEADER, "perm is not a permutation of 0..%u", xv->rank - 1);
        }
        seen[p[k]] = true;
        dims[k] = xv->dims[p[k]];
    }
    if (!xv->is_const && mlrt__bld_rows_apart(b, xv->rank == 0 || p[0] == 0, "it moves axis 0")) { free(p); return b->err->code; }
    if (xv->is_int) { /* a shape vector: rank 1, nothing moves */
        free(p);
        return mlrt__bld_reshaped(b, x, xv->rank, dims);
    }
    int32_t out = mlrt__bld_val(b, xv->rank, dims);
    mlrt__gop *op = out < 0 ? NULL : mlrt__bld_op(b, MLRT__GOP_TRANSPOSE, out);
    if (!op) { free(p); return OOM(); }
    op->in[0] = x, op->n_in = 1, op->perm = p;
    return mlrt__bld_finish(b, op);
}

mlrt_status mlrt__op_concat(bld *b) {
    const mlrt__onnx_node *nd = node(b);
    TRY(mlrt__bld_arity(b, 1, nd->n_in));
    int32_t x0 = mlrt__bld_in(b, 0);
    const mlrt__gval *first = VAL(x0);
    int64_t axis;
    uint32_t ax;
    const mlrt__onnx_attr *a = mlrt__onnx_attr_find(nd, "axis");
    if (!a) return mlrt__bld_fail(b, MLRT_ERR_BAD_HEADER, "attribute 'axis' is required");
    TRY(mlrt__bld_int(b, "axis", 0, &axis));
    TRY(mlrt__bld_axis(b, axis, first->rank, &ax));
    int64_t dims[MLRT__MAX_RANK];
    memcpy(dims, first->dims, sizeof dims);
    dims[ax] = 0;
    bool all_const = true, is_int = first->is_int;
    for (uint32_t k = 0; k < nd->n_in; k++) {
        int32_t v = mlrt__bld_in(b, k);
        if (v < 0) return mlrt__bld_fail(b, MLRT_ERR_BAD_HEADER, "input %u is missing", k);
        const mlrt__gval *g = VAL(v);
        if (g->rank != first->rank || g->is_int != is_int)
            return mlrt__bld_fail(b, MLRT_ERR_BAD_DIMENSIONS, "input %u has rank %u or type unlike input 0", k, g->rank);
        for (uint32_t d = 0; d < g->rank; d++)
            if (d != ax && g->dims[d] != first->dims[d])
                return mlrt__bld_fail(b, MLRT_ERR_BAD_DIMENSIONS, "input %u has dim %u = %lld, input 0 %lld", k, d,
                                     (long long)g->dims[d], (long long)first->dims[d]);
        dims[ax] += g->dims[ax];
        all_const &= g->is_const;
    }
    if (!all_const) TRY(mlrt__bld_rows_apart(b, ax > 0, "it concatenates along axis 0"));
    if (is_int) { /* shapes: joined now */
        if (first->rank != 1) return mlrt__bld_fail(b, MLRT_ERR_UNSUPPORTED, "int64 tensors of rank %u", first->rank);
        int64_t *r = malloc((size_t)dims[0] * sizeof *r + 8), at = 0;
        if (!r) return OOM();
        for (uint32_t k = 0; k < nd->n_in; k++) {
            const mlrt__gval *g = VAL(mlrt__bld_in(b, k));
            memcpy(r + at, g->i, g->count * sizeof *r);
            at += (int64_t)g->count;
        }
        int32_t v = mlrt__bld_const(b, 1, dims, NULL, r);
        if (v < 0) return OOM();
        mlrt__bld_set_out(b, v);
        return MLRT_OK;
    }
    int32_t out = mlrt__bld_val(b, first->rank, dims);
    mlrt__gop *op = out < 0 ? NULL : mlrt__bld_op(b, MLRT__GOP_CONCAT, out);
    if (!op || !(op->ins = malloc(nd->n_in * sizeof *op->ins))) return OOM();
    for (uint32_t k = 0; k < nd->n_in; k++) op->ins[k] = mlrt__bld_in(b, k);
    op->n_in = nd->n_in;
    op->outer = mlrt__dims_prod(dims, 0, ax);
    op->inner = mlrt__dims_prod(dims, ax + 1, (uint32_t)VAL(out)->rank);
    return mlrt__bld_finish(b, op);
}

mlrt_status mlrt__op_pad(bld *b) {
    bool by_input = b->g->opset >= 11;
    TRY(mlrt__bld_arity(b, by_input ? 2 : 1, by_input ? 4 : 1));
    int32_t x = mlrt__bld_in(b, 0);
    const mlrt__gval *xv = VAL(x);
    if (xv->is_int) return mlrt__bld_fail(b, MLRT_ERR_UNSUPPORTED, "padding an int64 tensor");
    const mlrt__onnx_attr *mode;
    TRY(mlrt__bld_attr(b, "mode", MLRT__ATTR_STRING, &mode));
    if (mode && !mlrt__str_eq(mode->s, "constant"))
        return mlrt__bld_fail(b, MLRT_ERR_UNSUPPORTED, "mode '%.*s'; mlrt pads with a constant", (int)mode->s.n, mode->s.p);
    const int64_t *pads, *axes = NULL;
    uint64_t n, na = 0;
    float value = 0.0f;
    if (by_input) {
        TRY(mlrt__bld_const_ints(b, 1, &pads, &n));
        TRY(mlrt__bld_const_scalar(b, 2, 0.0f, &value));
        if (mlrt__bld_in(b, 3) >= 0) TRY(mlrt__bld_const_ints(b, 3, &axes, &na));
    } else {
        uint32_t got;
        TRY(mlrt__bld_ints(b, "pads", 0, &pads, &got));
        TRY(mlrt__bld_float(b, "value", 0.0f, &value));
        n = got;
    }
    uint32_t r = xv->rank, naxes = axes ? (uint32_t)na : r;
    if (!pads || n != 2 * (uint64_t)naxes)
        return mlrt__bld_fail(b, MLRT_ERR_BAD_HEADER, "pads has %llu values, not %u", (unsigned long long)n, 2 * naxes);
    if (isnan(value)) return mlrt__bld_fail(b, MLRT_ERR_NON_FINITE, "the pad value is NaN");
    int64_t *p = calloc(2 * MLRT__MAX_RANK, sizeof *p), dims[MLRT__MAX_RANK];
    if (!p) return OOM();
    for (uint32_t k = 0; k < naxes; k++) {
        uint32_t a = k;
        if (axes && mlrt__bld_axis(b, axes[k], r, &a)) { free(p); return b->err->code; }
        p[a] = pads[k], p[r + a] = pads[naxes + k];
    }
    for (uint32_t a = 0; a < r; a++) {
        if (p[a] < 0 || p[r + a] < 0 || p[a] > 65536 || p[r + a] > 65536) {
            free(p);
            return mlrt__bld_fail(b, MLRT_ERR_UNSUPPORTED, "pads on axis %u are negative or beyond 65536", a);
        }
        dims[a] = xv->dims[a] + p[a] + p[r + a];
    }
    if (!xv->is_const && mlrt__bld_rows_apart(b, r == 0 || (p[0] == 0 && p[r] == 0), "it pads axis 0")) { free(p); return b->err->code; }
    int32_t out = mlrt__bld_val(b, r, dims);
    mlrt__gop *op = out < 0 ? NULL : mlrt__bld_op(b, MLRT__GOP_PAD, out);
    if (!op) { free(p); return OOM(); }
    op->in[0] = x, op->n_in = 1, op->perm = p, op->pad_value = value;
    return mlrt__bld_finish(b, op);
}

/* ------------------------------------------------------------------ constants and shapes */

static mlrt_status const_from(bld *b, uint32_t rank, const int64_t *dims, const float *f, const int64_t *i, uint64_t n) {
    void *copy = malloc(n * (i ? 8 : 4) + 8);
    if (!copy) return OOM();
    memcpy(copy, i ? (const void *)i : (const void *)f, n * (i ? 8 : 4));
    int32_t v = mlrt__bld_const(b, rank, dims, i ? NULL : copy, i ? copy : NULL);
    if (v < 0) return OOM();
    mlrt__bld_set_out(b, v);
    return MLRT_OK;
}

mlrt_status mlrt__op_constant(bld *b) {
    TRY(mlrt__bld_arity(b, 0, 0));
    const mlrt__onnx_node *nd = node(b);
    if (nd->n_attr != 1) return mlrt__bld_fail(b, MLRT_ERR_BAD_HEADER, "%u attributes; Constant takes exactly one", nd->n_attr);
    const mlrt__onnx_attr *a = &nd->attr[0];
    int64_t one = 1, n = a->n;
    if (mlrt__str_eq(a->name, "value") && a->type == MLRT__ATTR_TENSOR)
        return const_from(b, a->t->rank, a->t->dims, a->t->f, a->t->i, a->t->count);
    if (mlrt__str_eq(a->name, "value_float") && a->type == MLRT__ATTR_FLOAT) return const_from(b, 0, &one, &a->f, NULL, 1);
    if (mlrt__str_eq(a->name, "value_int") && a->type == MLRT__ATTR_INT) return const_from(b, 0, &one, NULL, &a->i, 1);
    if (mlrt__str_eq(a->name, "value_floats") && a->type == MLRT__ATTR_FLOATS) return const_from(b, 1, &n, a->floats, NULL, a->n);
    if (mlrt__str_eq(a->name, "value_ints") && a->type == MLRT__ATTR_INTS) return const_from(b, 1, &n, NULL, a->ints, a->n);
    return mlrt__bld_fail(b, MLRT_ERR_UNSUPPORTED, "attribute '%.*s' of type %u; mlrt reads value, value_float(s) and "
                         "value_int(s)", (int)a->name.n, a->name.p, a->type);
}

mlrt_status mlrt__op_shape(bld *b) {
    TRY(mlrt__bld_arity(b, 1, 1));
    const mlrt__gval *xv = VAL(mlrt__bld_in(b, 0));
    int64_t start, end;
    TRY(mlrt__bld_int(b, "start", 0, &start));
    TRY(mlrt__bld_int(b, "end", xv->rank, &end));
    int64_t r = xv->rank;
    start = start < 0 ? start + r : start, end = end < 0 ? end + r : end;
    start = start < 0 ? 0 : start > r ? r : start, end = end < 0 ? 0 : end > r ? r : end;
    int64_t n = end > start ? end - start : 0, dims[MLRT__MAX_RANK];
    for (int64_t k = 0; k < n; k++)
        dims[k] = k + start == 0 && b->gr->batched && !xv->is_const ? MLRT__BATCH_SYM : xv->dims[k + start];
    return const_from(b, 1, &n, NULL, dims, (uint64_t)n);
}

mlrt_status mlrt__op_gather(bld *b) {
    TRY(mlrt__bld_arity(b, 2, 2));
    const mlrt__gval *d = VAL(mlrt__bld_in(b, 0)), *ix = VAL(mlrt__bld_in(b, 1));
    int64_t axis;
    TRY(mlrt__bld_int(b, "axis", 0, &axis));
    if (!d->is_const || !ix->is_const || !ix->is_int || d->rank != 1 || ix->rank > 1 || (axis != 0 && axis != -1))
        return mlrt__bld_fail(b, MLRT_ERR_UNSUPPORTED, "mlrt runs Gather on constant vectors (shapes) only");
    int64_t out[MLRT__MAX_RANK * 4], n = (int64_t)ix->count;
    float fout[MLRT__MAX_RANK * 4];
    if (ix->count > MLRT__MAX_RANK * 4) return mlrt__bld_fail(b, MLRT_ERR_UNSUPPORTED, "more than %d indices", MLRT__MAX_RANK * 4);
    for (uint64_t k = 0; k < ix->count; k++) {
        int64_t i = ix->i[k] < 0 ? ix->i[k] + (int64_t)d->count : ix->i[k];
        if (i < 0 || i >= (int64_t)d->count)
            return mlrt__bld_fail(b, MLRT_ERR_BAD_DIMENSIONS, "index %lld is out of range for %llu values",
                                 (long long)ix->i[k], (unsigned long long)d->count);
        if (d->is_int) out[k] = d->i[i];
        else fout[k] = d->f[i];
    }
    return const_from(b, ix->rank, &n, d->is_int ? NULL : fout, d->is_int ? out : NULL, ix->count);
}

mlrt_status mlrt__op_cast(bld *b) {
    TRY(mlrt__bld_arity(b, 1, 1));
    int32_t x = mlrt__bld_in(b, 0);
    int64_t to;
    TRY(mlrt__bld_int(b, "to", 0, &to));
    const mlrt__gval *xv = VAL(x);
    bool to_float = to == MLRT__ONNX_FLOAT || to == MLRT__ONNX_DOUBLE;
    bool to_int = to == MLRT__ONNX_INT64 || to == 6 /* INT32 */;
    if (!to_float && !to_int)
        return mlrt__bld_fail(b, MLRT_ERR_UNSUPPORTED, "cast to data type %lld; mlrt casts to float, double, int32 and int64",
                             (long long)to);
    if (!xv->is_const) {
        if (!to_float) return mlrt__bld_fail(b, MLRT_ERR_UNSUPPORTED, "a cast of a computed tensor to int64");
        return mlrt__bld_reshaped(b, x, xv->rank, xv->dims); /* float to float: a view */
    }
    if (xv->is_int == to_int) return mlrt__bld_reshaped(b, x, xv->rank, xv->dims);
    void *out = malloc(xv->count * 8 + 8);
    if (!out) return OOM();
    for (uint64_t k = 0; k < xv->count; k++) {
        if (to_int) {
            float f = xv->f[k];
            if (!(f > -9.2e18f && f < 9.2e18f)) { free(out); return mlrt__bld_fail(b, MLRT_ERR_NON_FINITE, "element %llu does not fit int64", (unsigned long long)k); }
            ((int64_t *)out)[k] = (int64_t)f;
        } else {
            if (xv->i[k] == MLRT__BATCH_SYM) { free(out); return mlrt__bld_fail(b, MLRT_ERR_UNSUPPORTED, "a cast of the batch size"); }
            ((float *)out)[k] = (float)xv->i[k];
        }
    }
    int32_t v = mlrt__bld_const(b, xv->rank, xv->dims, to_int ? NULL : out, to_int ? out : NULL);
    if (v < 0) return OOM();
    mlrt__bld_set_out(b, v);
    return MLRT_OK;
}

/* One axis of a Slice: start and element count for (start, end, step) on a dim of n. */
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

mlrt_status mlrt__op_slice(bld *b) {
    bool by_input = b->g->opset >= 10;
    TRY(mlrt__bld_arity(b, by_input ? 3 : 1, by_input ? 5 : 1));
    int32_t x = mlrt__bld_in(b, 0);
    const mlrt__gval *xv = VAL(x);
    const int64_t *starts, *ends, *axes = NULL, *steps = NULL;
    uint64_t ns, ne, na = 0, nst = 0;
    if (by_input) {
        TRY(mlrt__bld_const_ints(b, 1, &starts, &ns));
        TRY(mlrt__bld_const_ints(b, 2, &ends, &ne));
        if (mlrt__bld_in(b, 3) >= 0) TRY(mlrt__bld_const_ints(b, 3, &axes, &na));
        if (mlrt__bld_in(b, 4) >= 0) TRY(mlrt__bld_const_ints(b, 4, &steps, &nst));
    } else {
        uint32_t a, c, d;
        TRY(mlrt__bld_ints(b, "starts", 0, &starts, &a));
        TRY(mlrt__bld_ints(b, "ends", 0, &ends, &c));
        TRY(mlrt__bld_ints(b, "axes", 0, &axes, &d));
        ns = a, ne = c, na = d;
    }
    if (!starts || !ends || ns != ne || (axes && na != ns) || (steps && nst != ns) || ns > xv->rank)
        return mlrt__bld_fail(b, MLRT_ERR_BAD_HEADER, "starts, ends, axes and steps disagree in length");
    int64_t first[MLRT__MAX_RANK], step[MLRT__MAX_RANK], dims[MLRT__MAX_RANK];
    bool seen[MLRT__MAX_RANK] = {0};
    for (uint32_t d = 0; d < xv->rank; d++) first[d] = 0, step[d] = 1, dims[d] = xv->dims[d];
    for (uint64_t k = 0; k < ns; k++) {
        uint32_t a = (uint32_t)k;
        if (axes) TRY(mlrt__bld_axis(b, axes[k], xv->rank, &a));
        int64_t s = steps ? steps[k] : 1;
        if (seen[a] || s == 0 || starts[k] == MLRT__BATCH_SYM)
            return mlrt__bld_fail(b, MLRT_ERR_BAD_HEADER, "axis %u is sliced twice, with step 0, or from the batch size", a);
        seen[a] = true;
        step[a] = s;
        slice_axis(xv->dims[a], starts[k], ends[k], s, &first[a], &dims[a]);
    }
    if (!xv->is_const)
        TRY(mlrt__bld_rows_apart(b, !seen[0] || (first[0] == 0 && step[0] == 1 && dims[0] == xv->dims[0]), "it slices axis 0"));
    /* constants now, computed values by the kernel: both through mlrt__slice */
    int32_t out = mlrt__bld_val(b, xv->rank, dims);
    mlrt__gop *op = out < 0 ? NULL : mlrt__bld_op(b, MLRT__GOP_SLICE, out);
    if (!op || !(op->perm = malloc(2 * MLRT__MAX_RANK * sizeof *op->perm))) return OOM();
    memcpy(op->perm, first, sizeof first);
    memcpy(op->perm + MLRT__MAX_RANK, step, sizeof step);
    op->in[0] = x, op->n_in = 1;
    if (VAL(x)->is_int) { /* an int64 constant: sliced here */
        mlrt__gval *o = VAL(out), *src = VAL(x);
        if (!(o->i = malloc(o->count * 8 + 8))) return OOM();
        o->is_const = o->is_int = true;
        o->op = -1;
        mlrt__slice_i64(src->i, src->dims, op->perm, op->perm + MLRT__MAX_RANK, src->rank, o->i, o->dims);
        free(op->perm);
        b->gr->n_ops--;
        mlrt__bld_set_out(b, out);
        return MLRT_OK;
    }
    return mlrt__bld_finish(b, op);
}
