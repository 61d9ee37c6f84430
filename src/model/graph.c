/* model/graph.c — from a parsed ONNX graph to a plan: each node's inputs and attributes checked,
 * its output shapes inferred, constants folded at load (int64 shape arithmetic included), and the
 * rest turned into ops. Fusion, packing and the arena are in graph_plan.c.
 *
 * Batch mode: when the graph input's first dimension is symbolic (or 1, from a fixed-batch export),
 * it is planned as 1 and stands for the batch; every computed value then keeps the batch as its
 * first dimension, and predict_batch runs many samples through one run of the plan. An op that
 * would mix samples (Softmax over axis 0, a Transpose moving axis 0, ...) refuses batch mode: a
 * fixed-batch graph is then planned as it is (one sample = the whole input tensor), and a graph
 * with a symbolic batch is refused as UNSUPPORTED, naming the node. */
#include "graph_build.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ values and messages */

mlrt_status mlrt__bld_fail(bld *b, mlrt_status code, const char *fmt, ...) {
    const mlrt__onnx_node *nd = &b->g->nodes[b->node];
    char msg[224];
    va_list ap;
    va_start(ap, fmt);
    mlrt__vformat(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return mlrt__fail(b->err, code, "onnx: node %u (%.*s '%.*s'): %s", b->node, (int)nd->op.n, nd->op.p,
                     (int)(nd->name.n > 64 ? 64 : nd->name.n), nd->name.p, msg);
}

/* Refuses batch mode when an op would mix the samples of a batch. */
mlrt_status mlrt__bld_rows_apart(bld *b, bool ok, const char *why) {
    if (ok || !b->gr->batched) return MLRT_OK;
    b->mixes_batch = true;
    return mlrt__bld_fail(b, MLRT_ERR_UNSUPPORTED, "%s, which mixes the samples of a batch; mlrt runs a symbolic batch "
                         "dimension only through ops that keep samples apart", why);
}

int32_t mlrt__bld_val(bld *b, uint32_t rank, const int64_t *dims) {
    if (b->gr->n_vals == b->cap_vals) {
        uint32_t cap = b->cap_vals ? 2 * b->cap_vals : 64;
        mlrt__gval *v = realloc(b->gr->vals, cap * sizeof *v);
        if (!v) return -1;
        b->gr->vals = v, b->cap_vals = cap;
    }
    mlrt__gval *v = &b->gr->vals[b->gr->n_vals];
    memset(v, 0, sizeof *v);
    v->rank = rank;
    v->count = 1;
    for (uint32_t d = 0; d < rank; d++) v->dims[d] = dims[d], v->count *= (uint64_t)dims[d];
    v->alias = -1;
    v->op = -1;
    return (int32_t)b->gr->n_vals++;
}

mlrt__gop *mlrt__bld_op(bld *b, mlrt__gop_kind kind, int32_t out) {
    if (b->gr->n_ops == b->cap_ops) {
        uint32_t cap = b->cap_ops ? 2 * b->cap_ops : 32;
        mlrt__gop *o = realloc(b->gr->ops, cap * sizeof *o);
        if (!o) return NULL;
        b->gr->ops = o, b->cap_ops = cap;
    }
    mlrt__gop *op = &b->gr->ops[b->gr->n_ops++];
    memset(op, 0, sizeof *op);
    op->kind = kind;
    op->node = b->node;
    op->out = out;
    op->act = MLRT_ACT_IDENTITY;
    b->gr->vals[out].op = (int32_t)(b->gr->n_ops - 1);
    return op;
}

/* ------------------------------------------------------------------ attributes */

mlrt_status mlrt__bld_attr(bld *b, const char *name, uint32_t type, const mlrt__onnx_attr **a) {
    *a = mlrt__onnx_attr_find(&b->g->nodes[b->node], name);
    if (*a && (*a)->type != type)
        return mlrt__bld_fail(b, MLRT_ERR_BAD_HEADER, "attribute '%s' has type %u, not %s", name, (*a)->type,
                             type == MLRT__ATTR_INT ? "INT" : type == MLRT__ATTR_INTS ? "INTS" : type == MLRT__ATTR_FLOAT ? "FLOAT"
                             : type == MLRT__ATTR_STRING ? "STRING" : "TENSOR");
    return MLRT_OK;
}

mlrt_status mlrt__bld_int(bld *b, const char *name, int64_t def, int64_t *v) {
    const mlrt__onnx_attr *a;
    mlrt_status st = mlrt__bld_attr(b, name, MLRT__ATTR_INT, &a);
    *v = a ? a->i : def;
    return st;
}

mlrt_status mlrt__bld_float(bld *b, const char *name, float def, float *v) {
    const mlrt__onnx_attr *a;
    mlrt_status st = mlrt__bld_attr(b, name, MLRT__ATTR_FLOAT, &a);
    *v = a ? a->f : def;
    return st;
}

/* An INTS attribute of exactly n values (n == 0: any count, *got set), or def (NULL: absent). */
mlrt_status mlrt__bld_ints(bld *b, const char *name, uint32_t n, const int64_t **v, uint32_t *got) {
    const mlrt__onnx_attr *a;
    mlrt_status st = mlrt__bld_attr(b, name, MLRT__ATTR_INTS, &a);
    if (st) return st;
    *v = a ? a->ints : NULL;
    if (got) *got = a ? a->n : 0;
    if (a && n && a->n != n) return mlrt__bld_fail(b, MLRT_ERR_BAD_HEADER, "attribute '%s' has %u values, not %u", name, a->n, n);
    return MLRT_OK;
}

/* ------------------------------------------------------------------ inputs */

/* Input k of the current node as a plan value (-1: absent). */
int32_t mlrt__bld_in(bld *b, uint32_t k) {
    const mlrt__onnx_node *nd = &b->g->nodes[b->node];
    return k < nd->n_in && nd->in[k] >= 0 ? b->vmap[nd->in[k]] : -1;
}

/* Checks the count of inputs (at least lo, at most hi) and outputs (1, others absent or unused). */
mlrt_status mlrt__bld_arity(bld *b, uint32_t lo, uint32_t hi) {
    const mlrt__onnx_node *nd = &b->g->nodes[b->node];
    if (nd->n_in < lo || nd->n_in > hi)
        return mlrt__bld_fail(b, MLRT_ERR_BAD_HEADER, "%u inputs; the op takes %u to %u", nd->n_in, lo, hi);
    for (uint32_t k = 0; k < lo; k++)
        if (mlrt__bld_in(b, k) < 0) return mlrt__bld_fail(b, MLRT_ERR_BAD_HEADER, "input %u is required", k);
    if (nd->n_out < 1 || nd->out[0] < 0) return mlrt__bld_fail(b, MLRT_ERR_BAD_HEADER, "no output");
    for (uint32_t k = 1; k < nd->n_out; k++)
        if (nd->out[k] >= 0 && b->uses[nd->out[k]])
            return mlrt__bld_fail(b, MLRT_ERR_UNSUPPORTED, "output %u is used; mlrt computes only the first output", k);
    for (uint32_t k = 0; k < nd->n_in; k++) {
        int32_t v = mlrt__bld_in(b, k);
        if (v >= 0 && !b->gr->vals[v].is_const && b->gr->vals[v].is_int)
            return mlrt__bld_fail(b, MLRT_ERR_UNSUPPORTED, "input %u is an int64 tensor computed per call", k);
    }
    return MLRT_OK;
}

/* A constant int64 input (shapes, axes, pads), or NULL with an error. */
mlrt_status mlrt__bld_const_ints(bld *b, uint32_t k, const int64_t **v, uint64_t *n) {
    int32_t id = mlrt__bld_in(b, k);
    if (id < 0) return mlrt__bld_fail(b, MLRT_ERR_BAD_HEADER, "input %u is missing", k);
    const mlrt__gval *g = &b->gr->vals[id];
    if (!g->is_const || !g->is_int)
        return mlrt__bld_fail(b, MLRT_ERR_UNSUPPORTED, "input %u must be a constant int64 tensor (an initializer, a "
                             "Constant or a shape computed at load)", k);
    if (g->rank > 1) return mlrt__bld_fail(b, MLRT_ERR_BAD_DIMENSIONS, "input %u has rank %u, not 1", k, g->rank);
    *v = g->i;
    *n = g->count;
    return MLRT_OK;
}

/* A constant scalar float input (Clip bounds, Pad value), absent: def. */
mlrt_status mlrt__bld_const_scalar(bld *b, uint32_t k, float def, float *v) {
    int32_t id = mlrt__bld_in(b, k);
    *v = def;
    if (id < 0) return MLRT_OK;
    const mlrt__gval *g = &b->gr->vals[id];
    if (!g->is_const || g->count != 1)
        return mlrt__bld_fail(b, MLRT_ERR_UNSUPPORTED, "input %u must be a constant scalar", k);
    *v = g->is_int ? (float)g->i[0] : g->f[0];
    return MLRT_OK;
}

/* Normalises axis (negative counts from the end) against rank. */
mlrt_status mlrt__bld_axis(bld *b, int64_t axis, uint32_t rank, uint32_t *out) {
    if (axis < -(int64_t)rank || axis >= (int64_t)rank)
        return mlrt__bld_fail(b, MLRT_ERR_BAD_DIMENSIONS, "axis %lld is out of range for rank %u", (long long)axis, rank);
    *out = (uint32_t)(axis < 0 ? axis + rank : axis);
    return MLRT_OK;
}

/* Binds the node's first output to plan value v. */
void mlrt__bld_set_out(bld *b, int32_t v) { b->vmap[b->g->nodes[b->node].out[0]] = v; }

uint64_t mlrt__dims_prod(const int64_t *d, uint32_t from, uint32_t to) {
    uint64_t p = 1;
    for (uint32_t k = from; k < to; k++) p *= (uint64_t)d[k];
    return p;
}

/* A new constant value that owns data (f or i). */
int32_t mlrt__bld_const(bld *b, uint32_t rank, const int64_t *dims, float *f, int64_t *i) {
    int32_t v = mlrt__bld_val(b, rank, dims);
    if (v < 0) { free(f); free(i); return -1; }
    mlrt__gval *g = &b->gr->vals[v];
    g->is_const = true;
    g->is_int = i != NULL;
    g->f = f;
    g->i = i;
    return v;
}

/* A value that shares in's storage with another shape (Reshape, Flatten, Squeeze, ...): a computed
 * value gets an alias, a constant a copy. */
mlrt_status mlrt__bld_reshaped(bld *b, int32_t in, uint32_t rank, const int64_t *dims) {
    const mlrt__gval *src = &b->gr->vals[in];
    uint64_t count = mlrt__dims_prod(dims, 0, rank);
    if (count != src->count)
        return mlrt__bld_fail(b, MLRT_ERR_BAD_DIMENSIONS, "the new shape has %llu elements, the input %llu",
                             (unsigned long long)count, (unsigned long long)src->count);
    int32_t v;
    if (src->is_const) {
        size_t es = src->is_int ? 8 : 4;
        void *copy = malloc(count * es + 1);
        if (!copy) return mlrt__bld_fail(b, MLRT_ERR_OUT_OF_MEMORY, "out of memory");
        memcpy(copy, src->is_int ? (void *)src->i : (void *)src->f, count * es);
        v = mlrt__bld_const(b, rank, dims, src->is_int ? NULL : copy, src->is_int ? copy : NULL);
    } else {
        v = mlrt__bld_val(b, rank, dims);
        if (v >= 0) b->gr->vals[v].alias = b->gr->vals[in].alias >= 0 ? b->gr->vals[in].alias : in;
    }
    if (v < 0) return mlrt__bld_fail(b, MLRT_ERR_OUT_OF_MEMORY, "out of memory");
    mlrt__bld_set_out(b, v);
    return MLRT_OK;
}

/* ------------------------------------------------------------------ the walk */

typedef mlrt_status (*op_fn)(bld *b);
typedef struct op_entry { const char *name; op_fn fn; } op_entry;

static const op_entry ops[] = {
    {"Gemm", mlrt__op_gemm}, {"MatMul", mlrt__op_matmul}, {"Conv", mlrt__op_conv},
    {"MaxPool", mlrt__op_pool}, {"AveragePool", mlrt__op_pool}, {"GlobalAveragePool", mlrt__op_pool},
    {"Add", mlrt__op_binary}, {"Sub", mlrt__op_binary}, {"Mul", mlrt__op_binary}, {"Div", mlrt__op_binary},
    {"Relu", mlrt__op_unary}, {"LeakyRelu", mlrt__op_unary}, {"Sigmoid", mlrt__op_unary}, {"Tanh", mlrt__op_unary},
    {"Clip", mlrt__op_unary}, {"Softmax", mlrt__op_softmax}, {"LogSoftmax", mlrt__op_softmax},
    {"BatchNormalization", mlrt__op_batchnorm}, {"Flatten", mlrt__op_flatten}, {"Reshape", mlrt__op_reshape},
    {"Transpose", mlrt__op_transpose}, {"Squeeze", mlrt__op_squeeze}, {"Unsqueeze", mlrt__op_squeeze},
    {"Concat", mlrt__op_concat}, {"Identity", mlrt__op_identity}, {"Dropout", mlrt__op_identity},
    {"Constant", mlrt__op_constant}, {"Shape", mlrt__op_shape}, {"Gather", mlrt__op_gather}, {"Pad", mlrt__op_pad},
    {"Cast", mlrt__op_cast}, {"Slice", mlrt__op_slice},
};


/* The graph input as plan value 0's shape: a float tensor with static dims, but the first. */
static mlrt_status plan_input(bld *b, bool try_batch) {
    const mlrt__onnx *g = b->g;
    if (g->n_inputs != 1 || g->n_outputs != 1)
        return mlrt__fail(b->err, MLRT_ERR_UNSUPPORTED, "onnx: the graph has %u inputs and %u outputs; mlrt runs graphs "
                         "of one input and one output", g->n_inputs, g->n_outputs);
    const mlrt__onnx_value *in = &g->values[g->inputs[0]];
    if (in->elem_type != MLRT__ONNX_FLOAT)
        return mlrt__fail(b->err, MLRT_ERR_UNSUPPORTED, "onnx: graph input '%.*s' has element type %d; mlrt takes float "
                         "inputs", (int)in->name.n, in->name.p, in->elem_type);
    if (in->rank < 0)
        return mlrt__fail(b->err, MLRT_ERR_UNSUPPORTED, "onnx: graph input '%.*s' has no shape", (int)in->name.n, in->name.p);
    int64_t dims[MLRT__MAX_RANK];
    for (int32_t d = 0; d < in->rank; d++) {
        dims[d] = in->dims[d];
        if (dims[d] < 0 && d == 0) dims[d] = 1;
        else if (dims[d] <= 0)
            return mlrt__fail(b->err, dims[d] < 0 ? MLRT_ERR_UNSUPPORTED : MLRT_ERR_BAD_DIMENSIONS,
                             "onnx: graph input '%.*s' dim %d is %s; mlrt needs static dimensions after the first",
                             (int)in->name.n, in->name.p, d, dims[d] < 0 ? "symbolic" : "0");
    }
    b->gr->batched = try_batch;
    b->gr->input = mlrt__bld_val(b, (uint32_t)in->rank, dims);
    if (b->gr->input < 0) return mlrt__fail(b->err, MLRT_ERR_OUT_OF_MEMORY, "onnx: out of memory");
    b->vmap[g->inputs[0]] = b->gr->input;
    if (b->gr->vals[b->gr->input].count > MLRT__MAX_ACTIVATION)
        return mlrt__fail(b->err, MLRT_ERR_BAD_DIMENSIONS, "onnx: graph input '%.*s' has more than %u elements per sample",
                         (int)in->name.n, in->name.p, MLRT__MAX_ACTIVATION);
    return MLRT_OK;
}

/* Every node, in order: its op's planner binds its output (called by mlrt__bld_plan). */
mlrt_status mlrt__bld_nodes(bld *b) {
    mlrt__onnx *g = b->g;
    for (uint32_t k = 0; k < g->n_values; k++) /* initializers: constants, owned by the plan */
        if (g->values[k].init && !g->values[k].is_input) {
            mlrt__onnx_tensor *t = g->values[k].init;
            int32_t v = mlrt__bld_val(b, t->rank, t->dims);
            if (v < 0) return mlrt__fail(b->err, MLRT_ERR_OUT_OF_MEMORY, "onnx: out of memory");
            mlrt__gval *gv = &b->gr->vals[v];
            gv->is_const = true;
            gv->is_int = t->type == MLRT__ONNX_INT64;
            size_t bytes = (size_t)t->count * (gv->is_int ? 8 : 4) + 1;
            void *copy = malloc(bytes);
            if (!copy) return mlrt__fail(b->err, MLRT_ERR_OUT_OF_MEMORY, "onnx: out of memory");
            memcpy(copy, gv->is_int ? (void *)t->i : (void *)t->f, bytes - 1);
            if (gv->is_int) gv->i = copy;
            else gv->f = copy;
            b->vmap[k] = v;
        }
    for (b->node = 0; b->node < g->n_nodes; b->node++) {
        const mlrt__onnx_node *nd = &g->nodes[b->node];
        if (nd->domain.n && !mlrt__str_eq(nd->domain, "ai.onnx"))
            return mlrt__bld_fail(b, MLRT_ERR_UNSUPPORTED, "domain '%.*s' (opset %lld): mlrt runs ai.onnx ops only",
                                 (int)nd->domain.n, nd->domain.p, (long long)g->opset);
        op_fn fn = NULL;
        for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
            if (mlrt__str_eq(nd->op, ops[i].name)) fn = ops[i].fn;
        if (!fn) return mlrt__bld_fail(b, MLRT_ERR_UNSUPPORTED, "op %.*s (opset %lld) is not one mlrt runs", (int)nd->op.n,
                                      nd->op.p, (long long)g->opset);
        mlrt_status st = fn(b);
        if (st) return st;
        if (nd->out[0] >= 0 && b->vmap[nd->out[0]] < 0)
            return mlrt__bld_fail(b, MLRT_ERR_UNSUPPORTED, "its output could not be planned");
        if (nd->out[0] >= 0 && b->gr->vals[b->vmap[nd->out[0]]].count > MLRT__MAX_ACTIVATION)
            return mlrt__bld_fail(b, MLRT_ERR_BAD_DIMENSIONS, "its output has %llu elements; mlrt's limit is %u per sample",
                                 (unsigned long long)b->gr->vals[b->vmap[nd->out[0]]].count, MLRT__MAX_ACTIVATION);
    }
    return MLRT_OK;
}

void mlrt__graph_free(mlrt__graph *gr) {
    if (!gr) return;
    for (uint32_t k = 0; k < gr->n_vals; k++) free(gr->vals[k].f), free(gr->vals[k].i);
    for (uint32_t k = 0; k < gr->n_ops; k++) {
        mlrt__gop *op = &gr->ops[k];
        for (uint32_t d = 0; op->dense && d < 1; d++)
            free(op->dense[d].w), free(op->dense[d].b);
        free(op->dense), free(op->wsrc), free(op->bsrc), free(op->wdw), free(op->bdw), free(op->perm), free(op->ins);
    }
    free(gr->vals), free(gr->ops), free(gr->arena), free(gr->col), free(gr->facts_json), free(gr->names);
    free(gr);
}

/* Plans the graph in batch mode, or as it is; NULL with *err. */
static mlrt__graph *plan(mlrt__onnx *g, bool try_batch, bool *mixes, mlrt_error *err) {
    bld b = {0};
    b.g = g;
    b.err = err;
    b.gr = calloc(1, sizeof *b.gr);
    b.vmap = malloc((g->n_values + 1) * sizeof *b.vmap);
    b.uses = calloc(g->n_values + 1, sizeof *b.uses);
    mlrt_status st = MLRT_OK;
    if (!b.gr || !b.vmap || !b.uses) st = mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "onnx: out of memory");
    for (uint32_t k = 0; !st && k < g->n_values; k++) b.vmap[k] = -1;
    for (uint32_t k = 0; !st && k < g->n_nodes; k++)
        for (uint32_t i = 0; i < g->nodes[k].n_in; i++)
            if (g->nodes[k].in[i] >= 0) b.uses[g->nodes[k].in[i]]++;
    for (uint32_t k = 0; !st && k < g->n_outputs; k++) b.uses[g->outputs[k]] += 1u << 20; /* never fused away */
    if (!st) st = plan_input(&b, try_batch);
    if (!st) st = mlrt__bld_plan(&b);
    *mixes = b.mixes_batch;
    free(b.vmap), free(b.uses);
    if (st) { mlrt__graph_free(b.gr); return NULL; }
    return b.gr;
}


mlrt_model *mlrt__onnx_model(mlrt__onnx *g, mlrt_error *err) {
    bool mixes = false;
    const mlrt__onnx_value *in = g->n_inputs ? &g->values[g->inputs[0]] : NULL;
    bool try_batch = in && in->rank >= 2 && (in->dims[0] < 0 || in->dims[0] == 1);
    mlrt__graph *gr = plan(g, try_batch, &mixes, err);
    if (!gr && mixes && in->dims[0] == 1) gr = plan(g, false, &mixes, err); /* a fixed batch of 1: as it is */
    if (!gr) return NULL;
    return mlrt__graph_model(g, gr, err);
}
