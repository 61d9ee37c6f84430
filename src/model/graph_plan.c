/* model/graph_plan.c — from a graph (ir/ir.h) to a plan: its inputs for one set of dims, every op
 * through its row of the op table (import, shape, plan: fused, emitted, folded or a view), the
 * outputs checked, weights packed, costs counted, and the computed values placed in one arena
 * (values whose lifetimes do not overlap share bytes). Nothing here is proportional to the
 * activations: the arena is allocated by the first run. */
#include "graph.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TRY(x) do { mlrt_status st_ = (x); if (st_) return st_; } while (0)
#define ARENA_UNITS (1u << 20)    /* a batch-mode tile holds as many samples as fit 4 MB (at most 64) */

/* ------------------------------------------------------------------ the walk */

static mlrt_status plan_inputs(mlrt__planner *pl, const int64_t *len) {
    const mlrt__ir_graph *ir = pl->ir;
    mlrt__graph *g = pl->g;
    g->n_inputs = ir->n_inputs;
    if (!(g->inputs = calloc(ir->n_inputs + 1, sizeof *g->inputs)) || !(g->x = calloc(ir->n_inputs + 1, sizeof *g->x)))
        return mlrt__fail(pl->err, MLRT_ERR_OUT_OF_MEMORY, "%s: out of memory", ir->format);
    for (uint32_t k = 0; k < ir->n_inputs; k++) {
        const mlrt__ir_value *v = &ir->vals[ir->inputs[k]];
        mlrt__gshape s = {v->dtype, (uint32_t)v->rank, {0}};
        for (int32_t d = 0; d < v->rank; d++) {
            s.dims[d] = v->dims[d] >= 0 ? v->dims[d] : len[MLRT__IR_SYM_OF(v->dims[d])];
            if (s.dims[d] == 0)
                return mlrt__fail(pl->err, MLRT_ERR_BAD_DIMENSIONS, "%s: graph input '%.*s' dim %d is 0", ir->format,
                                  MLRT__CUT(v->name, 64), d);
        }
        int32_t id = mlrt__plan_value(pl, &s);
        if (id < 0) return mlrt__fail(pl->err, MLRT_ERR_OUT_OF_MEMORY, "%s: out of memory", ir->format);
        g->vals[id].input = (int32_t)k;
        g->inputs[k] = id;
        pl->vmap[ir->inputs[k]] = id;
        if (g->vals[id].count > MLRT__MAX_ACTIVATION) {
            pl->over_limit = true;
            return mlrt__fail(pl->err, MLRT_ERR_BAD_DIMENSIONS, "%s: graph input '%.*s' has more than %u elements per sample",
                              ir->format, MLRT__CUT(v->name, 64), MLRT__MAX_ACTIVATION);
        }
    }
    pl->fixed_batch = ir->n_inputs && ir->vals[ir->inputs[0]].rank > 0 && ir->vals[ir->inputs[0]].dims[0] == 1;
    return MLRT_OK;
}

/* The checks every op gets before its row's: its inputs and outputs against the row's counts. */
static mlrt_status check_op(mlrt__planner *pl, const mlrt__ir_op *op, const mlrt__op_def *def) {
    if (op->n_in < def->min_in || (def->max_in != 255 && op->n_in > def->max_in))
        return mlrt__plan_fail(pl, MLRT_ERR_BAD_HEADER, "%u inputs; the op takes %u to %u", op->n_in, def->min_in, def->max_in);
    for (uint32_t k = 0; k < def->min_in; k++)
        if (mlrt__plan_in(pl, op, k) < 0) return mlrt__plan_fail(pl, MLRT_ERR_BAD_HEADER, "input %u is required", k);
    if (op->n_out < 1 || op->out[0] < 0) return mlrt__plan_fail(pl, MLRT_ERR_BAD_HEADER, "no output");
    for (uint32_t k = def->n_out; k < op->n_out; k++)
        if (op->out[k] >= 0 && pl->uses[op->out[k]])
            return mlrt__plan_fail(pl, MLRT_ERR_UNSUPPORTED, "output %u is used; mlrt computes only the first %s", k,
                                   def->n_out == 1 ? "output" : "outputs");
    for (uint32_t k = 0; k < op->n_in; k++) {
        int32_t v = mlrt__plan_in(pl, op, k);
        if (v >= 0 && !MLRT__PV(pl, v)->is_const && MLRT__PV(pl, v)->dtype == MLRT_I64 && !(k < 8 && (def->i64_in >> k & 1)))
            return mlrt__plan_fail(pl, MLRT_ERR_UNSUPPORTED, "input %u is an int64 tensor computed per call", k);
    }
    return MLRT_OK;
}

static mlrt_status plan_op(mlrt__planner *pl, const mlrt__ir_op *op) {
    const mlrt__op_def *def = mlrt__op_table[op->kind];
    TRY(check_op(pl, op, def));
    void *p = NULL;
    mlrt__gshape out[4];
    memset(out, 0, sizeof out);
    mlrt_status st = def->import ? def->import(pl, op, &p) : MLRT_OK;
    if (!st && def->shape) st = def->shape(pl, op, p, out);
    for (uint32_t k = 0; !st && k < def->n_out && k < op->n_out; k++)
        if (op->out[k] >= 0 && mlrt__dims_prod(out[k].dims, 0, out[k].rank) > MLRT__MAX_ACTIVATION) {
            pl->over_limit = true;
            st = mlrt__plan_fail(pl, MLRT_ERR_BAD_DIMENSIONS, "its output has %llu elements; mlrt's limit is %u per sample",
                                 (unsigned long long)mlrt__dims_prod(out[k].dims, 0, out[k].rank), MLRT__MAX_ACTIVATION);
        }
    if (st) {
        if (p) (def->free ? def->free : free)(p);
        return st;
    }
    pl->def = def;
    TRY((def->plan ? def->plan : mlrt__plan_emit)(pl, op, p, out));
    if (pl->vmap[op->out[0]] < 0) return mlrt__plan_fail(pl, MLRT_ERR_UNSUPPORTED, "its output could not be planned");
    return MLRT_OK;
}

static mlrt_status plan_outputs(mlrt__planner *pl) {
    const mlrt__ir_graph *ir = pl->ir;
    mlrt__graph *g = pl->g;
    g->n_outputs = ir->n_outputs;
    if (!(g->outputs = calloc(ir->n_outputs + 1, sizeof *g->outputs)))
        return mlrt__fail(pl->err, MLRT_ERR_OUT_OF_MEMORY, "%s: out of memory", ir->format);
    for (uint32_t k = 0; k < ir->n_outputs; k++) {
        const mlrt__ir_value *ov = &ir->vals[ir->outputs[k]];
        int32_t v = pl->vmap[ir->outputs[k]];
        if (v < 0 || g->vals[v].is_const)
            return mlrt__fail(pl->err, MLRT_ERR_NOT_A_MODEL, "%s: graph output '%.*s' does not depend on the input", ir->format,
                              MLRT__CUT(ov->name, 64));
        g->outputs[k] = v;
        const mlrt__gval *out = &g->vals[v];
        if (ov->rank < 0) continue; /* the file's declared shape, where static, must be what the plan infers */
        bool ok = (uint32_t)ov->rank == out->rank;
        for (uint32_t d = 0; ok && d < out->rank; d++) ok = ov->dims[d] < 0 || ov->dims[d] == out->dims[d] || (d == 0 && g->batched);
        if (!ok)
            return mlrt__fail(pl->err, MLRT_ERR_BAD_DIMENSIONS, "%s: graph output '%.*s' is declared with rank %d, but the "
                              "graph computes [%lld%s] of rank %u", ir->format, MLRT__CUT(ov->name, 64), ov->rank,
                              (long long)(out->rank ? out->dims[0] : 1), out->rank > 1 ? ", ..." : "", out->rank);
    }
    return MLRT_OK;
}

/* ------------------------------------------------------------------ the arena */

static int32_t root(const mlrt__graph *g, int32_t v) { return g->vals[v].alias >= 0 ? g->vals[v].alias : v; }
static size_t units(const mlrt__gval *v, size_t rows) {
    return ((size_t)v->count * rows * (v->dtype == MLRT_I64 ? 2 : 1) + 3) & ~(size_t)3;
}

/* Best-fit placement of the computed values in run order (among the last FREE_SCAN blocks freed);
 * a block is reused once the last op reading it has run (never by that op's own outputs).
 * dying [n_ops + 1 offsets, then the values]: the values each op reads last. Returns the units. */
#define FREE_SCAN 64
typedef struct block { size_t off, n; } block;
static size_t place(mlrt__graph *g, size_t rows, const uint32_t *dying, block *fl) {
    size_t nfree = 0, top = 0;
    const uint32_t *list = dying + g->n_ops + 1;
    for (uint32_t k = 0; k < g->n_ops; k++) {
        const mlrt__gop *op = &g->ops[k];
        for (uint32_t o = 0; o < op->n_out; o++) {
            if (op->out[o] < 0) continue;
            mlrt__gval *out = &g->vals[op->out[o]];
            size_t n = units(out, rows), best = nfree;
            for (size_t f = nfree > FREE_SCAN ? nfree - FREE_SCAN : 0; f < nfree; f++)
                if (fl[f].n >= n && (best == nfree || fl[f].n < fl[best].n)) best = f;
            if (best < nfree) {
                out->off = fl[best].off;
                fl[best].off += n, fl[best].n -= n;
            } else out->off = top, top += n;
        }
        for (uint32_t i = dying[k]; i < dying[k + 1]; i++) {
            const mlrt__gval *v = &g->vals[list[i]];
            if (v->op == (int32_t)k) continue; /* (an output nobody reads: kept) */
            fl[nfree].off = v->off;
            fl[nfree++].n = units(v, rows);
        }
    }
    return top;
}

static mlrt_status plan_arena(mlrt__planner *pl) {
    mlrt__graph *g = pl->g;
    for (uint32_t v = 0; v < g->n_vals; v++) g->vals[v].last_use = UINT32_MAX; /* a value no op writes: none */
    for (uint32_t k = 0; k < g->n_ops; k++) {
        const mlrt__gop *op = &g->ops[k];
        for (uint32_t o = 0; o < op->n_out; o++) /* a value nobody reads is freed after it is written */
            if (op->out[o] >= 0) g->vals[op->out[o]].last_use = k;
        for (uint32_t i = 0; i < op->n_in; i++)
            if (op->in[i] >= 0) g->vals[root(g, op->in[i])].last_use = k;
    }
    for (uint32_t k = 0; k < g->n_outputs; k++) g->vals[root(g, g->outputs[k])].last_use = g->n_ops; /* kept to be copied out */
    /* each op's dying values, bucketed by op (computed values only) */
    uint32_t *dying = calloc(g->n_ops + 2 + g->n_vals, sizeof *dying);
    block *fl = malloc((g->n_vals + 1) * sizeof *fl);
    if (!dying || !fl) { free(dying), free(fl); return mlrt__fail(pl->err, MLRT_ERR_OUT_OF_MEMORY, "out of memory"); }
    for (uint32_t v = 0; v < g->n_vals; v++) {
        const mlrt__gval *x = &g->vals[v];
        if (!x->is_const && x->alias < 0 && x->input < 0 && x->last_use < g->n_ops) dying[x->last_use + 1]++;
    }
    for (uint32_t k = 0; k < g->n_ops; k++) dying[k + 1] += dying[k];
    uint32_t *fill = malloc((g->n_ops + 1) * sizeof *fill);
    if (!fill) { free(dying), free(fl); return mlrt__fail(pl->err, MLRT_ERR_OUT_OF_MEMORY, "out of memory"); }
    memcpy(fill, dying, (g->n_ops + 1) * sizeof *fill);
    for (uint32_t v = 0; v < g->n_vals; v++) {
        const mlrt__gval *x = &g->vals[v];
        if (!x->is_const && x->alias < 0 && x->input < 0 && x->last_use < g->n_ops) dying[g->n_ops + 1 + fill[x->last_use]++] = v;
    }
    free(fill);
    size_t per = place(g, 1, dying, fl);
    g->tile_rows = g->batched ? (uint32_t)(per ? ARENA_UNITS / per : 64) : 1;
    if (g->tile_rows > MLRT__TILE_ROWS) g->tile_rows = MLRT__TILE_ROWS;
    if (g->tile_rows == 0) g->tile_rows = 1;
    g->arena_units = place(g, g->tile_rows, dying, fl);
    free(dying), free(fl);
    if (g->arena_units + g->col_floats + g->zeros_floats > MLRT__MAX_ARENA) {
        pl->over_limit = true;
        return mlrt__fail(pl->err, MLRT_ERR_BAD_DIMENSIONS, "%s: the graph needs %zu MiB of activations and scratch; "
                          "mlrt's limit is %u MiB", pl->ir->format, (g->arena_units + g->col_floats) >> 18, MLRT__MAX_ARENA >> 18);
    }
    return MLRT_OK;
}

/* ------------------------------------------------------------------ a plan */

void mlrt__graph_free(mlrt__graph *g) {
    if (!g) return;
    for (uint32_t k = 0; k < g->n_vals; k++)
        if (g->vals[k].owned) free(g->vals[k].data);
    for (uint32_t k = 0; k < g->n_ops; k++) {
        const mlrt__op_def *def = mlrt__op_table[g->ops[k].kind];
        if (g->ops[k].p) (def->free ? def->free : free)(g->ops[k].p);
        free(g->ops[k].in);
    }
    free(g->vals), free(g->ops), free(g->inputs), free(g->outputs), free(g->len), free(g->x), free(g->arena), free(g->col);
    free(g);
}

mlrt__graph *mlrt__plan(const mlrt__ir_graph *ir, const int64_t *len, bool batched, mlrt__gpack **packs, bool *mixes,
                        bool *over_limit, mlrt_error *err) {
    mlrt__planner pl = {0};
    pl.ir = ir, pl.packs = packs, pl.err = err;
    pl.g = calloc(1, sizeof *pl.g);
    pl.vmap = malloc((ir->n_vals + 1) * sizeof *pl.vmap);
    pl.uses = calloc(ir->n_vals + 1, sizeof *pl.uses);
    mlrt_status st = pl.g && pl.vmap && pl.uses ? MLRT_OK : mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "%s: out of memory", ir->format);
    if (!st && !(pl.g->len = malloc((ir->n_syms + 1) * sizeof *pl.g->len)))
        st = mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "%s: out of memory", ir->format);
    if (!st) {
        memcpy(pl.g->len, len, ir->n_syms * sizeof *len);
        pl.g->batched = batched;
        for (uint32_t k = 0; k < ir->n_vals; k++) pl.vmap[k] = -1;
        for (uint32_t k = 0; k < ir->n_ops; k++)
            for (uint32_t i = 0; i < ir->ops[k].n_in; i++)
                if (ir->ops[k].in[i] >= 0) pl.uses[ir->ops[k].in[i]]++;
        for (uint32_t k = 0; k < ir->n_outputs; k++) pl.uses[ir->outputs[k]] += 1u << 20; /* never fused away */
    }
    for (uint32_t k = 0; !st && k < ir->n_vals; k++) { /* the graph's constants, borrowed */
        const mlrt__ir_value *v = &ir->vals[k];
        if (!v->is_const) continue;
        mlrt__gshape s = {v->dtype, (uint32_t)v->rank, {0}};
        memcpy(s.dims, v->dims, sizeof s.dims);
        int32_t id = mlrt__plan_value(&pl, &s);
        if (id < 0) { st = mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "%s: out of memory", ir->format); break; }
        pl.g->vals[id].is_const = pl.g->vals[id].graph_data = true;
        pl.g->vals[id].data = v->data;
        pl.vmap[k] = id;
    }
    if (!st) st = plan_inputs(&pl, len);
    for (pl.at = 0; !st && pl.at < ir->n_ops; pl.at++) st = plan_op(&pl, &ir->ops[pl.at]);
    if (!st) st = plan_outputs(&pl);
    for (uint32_t k = 0; !st && k < pl.g->n_ops; k++) {
        mlrt__gop *op = &pl.g->ops[k];
        const mlrt__op_def *def = mlrt__op_table[op->kind];
        uint64_t macs = 0, params = 0;
        pl.at = op->ir;
        if (def->pack) st = def->pack(&pl, op);
        if (!st && def->cost) def->cost(pl.g, op, &macs, &params);
        pl.g->macs += macs, pl.g->params += params;
    }
    if (!st) st = plan_arena(&pl);
    *mixes = pl.mixes_batch;
    if (over_limit) *over_limit = pl.over_limit;
    free(pl.vmap), free(pl.uses);
    if (st) { mlrt__graph_free(pl.g); return NULL; }
    return pl.g;
}
