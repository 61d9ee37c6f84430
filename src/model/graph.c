/* model/graph.c — the graph family: a model of a graph (ir/ir.h), its plans, and its named inputs
 * and outputs.
 *
 * The graph's symbolic dims are of two roles. The batch: dim 0 of every input (all of rank >= 2),
 * symbolic or a fixed 1 (an export with batch 1); it is planned as 1 and a run takes tiles of rows
 * (batch mode), unless an op mixes the samples of a batch: then a fixed batch is planned as it is,
 * and a symbolic one refused. The others (a sequence length) vary per run, up to a largest value
 * the model states: each distinct set of their values gets its own plan, made by the run that
 * first needs it (the last MLRT__GRAPH_PLANS are kept); the plans share the packed weights. At
 * load the graph is planned at the largest value that stays within the activation limits (and at
 * one less, to tell which outputs' dims follow it); the load's cost follows the graph, never the
 * activations. predict and predict_batch run graphs of one float input and one float output
 * without varying dims, as rows. */
#include "graph.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { ROLE_NONE, ROLE_BATCH, ROLE_VARY };

typedef struct gmodel {
    mlrt__ir_graph ir;              /* the graph (owned) */
    mlrt__gpack **packs;            /* [ir.n_ops] packed weights the plans share */
    mlrt__graph *plans[MLRT__GRAPH_PLANS]; /* most recently used first */
    uint32_t n_plans;
    bool batched;
    uint8_t *role;                  /* [ir.n_syms] ROLE_* */
    int64_t max_len;                /* the varying dims' largest value (0: none vary) */
    char *facts_json;               /* the "onnx":{..., "plan":{...}} member of info */
    mlrt_error scratch_err;
} gmodel;

static void gmodel_free(gmodel *gm) {
    if (!gm) return;
    for (uint32_t k = 0; k < gm->n_plans; k++) mlrt__graph_free(gm->plans[k]);
    for (uint32_t k = 0; gm->packs && k < gm->ir.n_ops; k++)
        if (gm->packs[k]) gm->packs[k]->release(gm->packs[k]);
    free(gm->packs), free(gm->role), free(gm->facts_json);
    mlrt__ir_graph_free(&gm->ir);
    free(gm);
}

/* ------------------------------------------------------------------ plans */

/* The symbols' values for a plan: the batch 1, the varying ones len. */
static void lens(const gmodel *gm, int64_t len, int64_t *out) {
    for (uint32_t s = 0; s < gm->ir.n_syms; s++) out[s] = gm->role[s] == ROLE_VARY ? len : 1;
}

/* A plan for len [n_syms], in batch mode when the model is; falls back to planning a fixed batch
 * of 1 as it is when an op mixes samples. */
static mlrt__graph *plan(gmodel *gm, const int64_t *len, bool *over_limit, mlrt_error *err) {
    bool mixes = false;
    mlrt__graph *g = mlrt__plan(&gm->ir, len, gm->batched, gm->packs, &mixes, over_limit, err);
    bool symbolic_batch = false;
    for (uint32_t s = 0; s < gm->ir.n_syms; s++) symbolic_batch |= gm->role[s] == ROLE_BATCH;
    if (!g && mixes && gm->batched && !symbolic_batch) {
        gm->batched = false;
        g = mlrt__plan(&gm->ir, len, false, gm->packs, &mixes, over_limit, err);
    }
    return g;
}

/* The plan for the varying dims of this run's inputs: a kept one, or a new one (the least recently
 * used dropped). */
static mlrt__graph *plan_for(gmodel *gm, const mlrt_tensor *in, mlrt_error *err) {
    int64_t len[MLRT__MAX_RANK * 8 + 1];
    int64_t *l = gm->ir.n_syms <= MLRT__MAX_RANK * 8 ? len : malloc(gm->ir.n_syms * sizeof *l);
    if (!l) { mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "run: out of memory"); return NULL; }
    lens(gm, 1, l);
    for (uint32_t k = 0; k < gm->ir.n_inputs; k++) {
        const mlrt__ir_value *v = &gm->ir.vals[gm->ir.inputs[k]];
        for (int32_t d = 0; d < v->rank; d++)
            if (v->dims[d] < 0 && gm->role[MLRT__IR_SYM_OF(v->dims[d])] == ROLE_VARY) l[MLRT__IR_SYM_OF(v->dims[d])] = in[k].dims[d];
    }
    uint32_t at = 0;
    while (at < gm->n_plans && memcmp(gm->plans[at]->len, l, gm->ir.n_syms * sizeof *l)) at++;
    mlrt__graph *g = at < gm->n_plans ? gm->plans[at] : NULL;
    if (!g) {
        if (!(g = plan(gm, l, NULL, err))) {
            if (l != len) free(l);
            return NULL;
        }
        if (gm->n_plans == MLRT__GRAPH_PLANS) mlrt__graph_free(gm->plans[--gm->n_plans]);
        at = gm->n_plans++;
    }
    memmove(gm->plans + 1, gm->plans, at * sizeof *gm->plans);
    gm->plans[0] = g;
    if (l != len) free(l);
    return g;
}

/* ------------------------------------------------------------------ running */

static size_t dtype_bytes(mlrt_dtype t) { return t == MLRT_I64 ? 8 : 4; }

/* n samples of the inputs (each at data + sample * its floats per sample) through g; the outputs y [n_outputs]. */
static mlrt_status run_rows(mlrt__graph *g, const void *const *data, size_t n, void **y, mlrt_error *err) {
    for (size_t r = 0; r < n; r += g->tile_rows) {
        size_t rows = n - r < g->tile_rows ? n - r : g->tile_rows;
        for (uint32_t k = 0; k < g->n_inputs; k++) {
            const mlrt__gval *v = &g->vals[g->inputs[k]];
            g->x[k] = (const char *)data[k] + (g->batched ? r * v->count * dtype_bytes(v->dtype) : 0);
        }
        mlrt_status st = mlrt__graph_run(g, rows, err);
        if (st) return st;
        for (uint32_t k = 0; k < g->n_outputs; k++) {
            const mlrt__gval *v = &g->vals[g->outputs[k]];
            size_t per = v->count * dtype_bytes(v->dtype);
            memcpy((char *)y[k] + (g->batched ? r * per : 0), mlrt__gdata(g, g->outputs[k]), rows * per);
        }
    }
    return MLRT_OK;
}

static mlrt_status graph_predict(mlrt_model *m, const float *in, size_t n, float *out, mlrt_error *err) {
    mlrt_status st = mlrt__check_rows(m, in, n, out, true, "predict", err);
    if (st) return st;
    gmodel *gm = m->impl;
    if (!m->in_size)
        return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "predict: a graph of %u inputs and %u outputs%s takes named inputs, "
                          "not rows of floats: use mlrt_run", m->n_inputs, m->n_outputs, gm->max_len ? " with varying dims" : "");
    mlrt__graph *g = gm->plans[0];
    const void *data[1] = {in};
    void *y[1] = {out};
    if (!g->batched && n > 1) /* a plan of one sample: the rows one by one */
        for (size_t r = 0; r < n && !st; r++) data[0] = in + r * m->in_size, y[0] = out + r * m->out_size, st = run_rows(g, data, 1, y, err);
    else st = run_rows(g, data, n, y, err);
    if (st) return st;
    for (size_t k = 0; k < n * m->out_size; k++)
        if (!isfinite(out[k]))
            return mlrt__fail(err, MLRT_ERR_NON_FINITE, "predict: output %zu of row %zu is not finite", k % m->out_size, k / m->out_size);
    return MLRT_OK;
}

static mlrt_status graph_run(mlrt_model *m, const mlrt_tensor *in, mlrt_error *err) {
    gmodel *gm = m->impl;
    for (uint32_t k = 0; k < m->n_inputs; k++) { /* float inputs must be finite */
        if (in[k].dtype != MLRT_F32) continue;
        uint64_t count = 1;
        for (uint32_t d = 0; d < in[k].rank; d++) count *= (uint64_t)in[k].dims[d];
        for (uint64_t i = 0; i < count; i++)
            if (!isfinite(((const float *)in[k].data)[i]))
                return mlrt__fail(err, MLRT_ERR_NON_FINITE, "run: input '%s' element %llu is not finite", in[k].name,
                                  (unsigned long long)i);
    }
    mlrt__graph *g = plan_for(gm, in, err);
    if (!g) return err->code;
    size_t n = g->batched ? (size_t)in[0].dims[0] : 1;
    const void *data[64];
    void *y[64];
    const void **dp = m->n_inputs <= 64 ? data : malloc(m->n_inputs * sizeof *dp);
    void **yp = m->n_outputs <= 64 ? y : malloc(m->n_outputs * sizeof *yp);
    mlrt_status st = dp && yp ? MLRT_OK : mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "run: out of memory");
    for (uint32_t k = 0; !st && k < m->n_inputs; k++) dp[k] = in[k].data;
    for (uint32_t k = 0; !st && k < m->n_outputs; k++) {
        const mlrt__gval *v = &g->vals[g->outputs[k]];
        int64_t dims[MLRT__MAX_RANK];
        memcpy(dims, v->dims, sizeof dims);
        if (g->batched && v->rank) dims[0] *= (int64_t)n;
        if (!(yp[k] = mlrt__output(m, k, v->rank, dims, err))) st = err->code;
    }
    if (!st) st = run_rows(g, dp, n, yp, err);
    for (uint32_t k = 0; !st && k < m->n_outputs; k++) {
        const mlrt_tensor *t = &m->outputs[k].t;
        if (t->dtype != MLRT_F32) continue;
        uint64_t count = 1;
        for (uint32_t d = 0; d < t->rank; d++) count *= (uint64_t)t->dims[d];
        for (uint64_t i = 0; i < count && !st; i++)
            if (!isfinite(((const float *)t->data)[i]))
                st = mlrt__fail(err, MLRT_ERR_NON_FINITE, "run: output '%s' element %llu is not finite", t->name, (unsigned long long)i);
    }
    if (dp != data) free(dp);
    if (yp != y) free(yp);
    return st;
}

static void graph_free(mlrt_model *m) { gmodel_free(m->impl); }

static void graph_facts(mlrt__buf *b, const mlrt_model *m) {
    const gmodel *gm = m->impl;
    if (!gm->facts_json) return;
    mlrt__buf_puts(b, ",");
    mlrt__buf_puts(b, gm->facts_json);
}

static uint64_t graph_params(const mlrt_model *m) { return ((const gmodel *)m->impl)->plans[0]->params; }
static uint64_t graph_weight_bytes(const mlrt_model *m) { return ((const gmodel *)m->impl)->plans[0]->weight_bytes; }

static const mlrt__family graph_family = {
    "graph", graph_run, graph_predict, NULL, NULL, graph_free, graph_facts, graph_params, graph_weight_bytes, NULL,
};

/* ------------------------------------------------------------------ building */

/* Which symbols are the batch and which vary; whether the model runs in batch mode. */
static mlrt_status roles(gmodel *gm, mlrt_error *err) {
    const mlrt__ir_graph *ir = &gm->ir;
    if (!(gm->role = calloc(ir->n_syms + 1, 1))) return mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "%s: out of memory", ir->format);
    bool batch = ir->n_inputs > 0;
    for (uint32_t k = 0; k < ir->n_inputs; k++) {
        const mlrt__ir_value *v = &ir->vals[ir->inputs[k]];
        batch &= v->rank >= 2 && (v->dims[0] < 0 || v->dims[0] == 1);
    }
    for (uint32_t k = 0; k < ir->n_inputs; k++) { /* a symbol elsewhere than dim 0 varies, wherever it is */
        const mlrt__ir_value *v = &ir->vals[ir->inputs[k]];
        for (int32_t d = 0; d < v->rank; d++)
            if (v->dims[d] < 0) {
                uint8_t *r = &gm->role[MLRT__IR_SYM_OF(v->dims[d])];
                *r = batch && d == 0 && *r != ROLE_VARY ? ROLE_BATCH : ROLE_VARY;
            }
    }
    for (uint32_t k = 0; batch && k < ir->n_inputs; k++) { /* the batch is nothing but the batch */
        const mlrt__ir_value *v = &ir->vals[ir->inputs[k]];
        batch &= v->dims[0] >= 0 || gm->role[MLRT__IR_SYM_OF(v->dims[0])] == ROLE_BATCH;
    }
    if (!batch)
        for (uint32_t s = 0; s < ir->n_syms; s++) gm->role[s] = gm->role[s] ? ROLE_VARY : ROLE_NONE;
    gm->batched = batch;
    return MLRT_OK;
}

/* The plans at load: at the largest varying length within the limits (halved while over them). */
static mlrt_status plan_at_load(gmodel *gm, mlrt_error *err) {
    bool vary = false;
    for (uint32_t s = 0; s < gm->ir.n_syms; s++) vary |= gm->role[s] == ROLE_VARY;
    int64_t *len = malloc((gm->ir.n_syms + 1) * sizeof *len), l = vary ? MLRT__GRAPH_MAX_LEN : 1;
    if (!len) return mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "%s: out of memory", gm->ir.format);
    mlrt__graph *g = NULL;
    for (;;) {
        bool over = false;
        lens(gm, l, len);
        if ((g = plan(gm, len, &over, err)) || !vary || !over || l == 1) break;
        l /= 2;
    }
    if (!g && vary) { /* name the varying dim: the error is at its largest length */
        char msg[MLRT_ERROR_MESSAGE_MAX];
        const char *s = NULL;
        uint32_t k = 0;
        int32_t d = 0;
        for (k = 0; !s && k < gm->ir.n_inputs; k++) {
            const mlrt__ir_value *v = &gm->ir.vals[gm->ir.inputs[k]];
            for (d = 0; !s && d < v->rank; d++)
                if (v->dims[d] < 0 && gm->role[MLRT__IR_SYM_OF(v->dims[d])] == ROLE_VARY) s = gm->ir.syms[MLRT__IR_SYM_OF(v->dims[d])];
        }
        memcpy(msg, err->message, sizeof msg);
        const mlrt__ir_value *v = &gm->ir.vals[gm->ir.inputs[k - 1]];
        mlrt__fail(err, err->code == MLRT_ERR_OUT_OF_MEMORY ? MLRT_ERR_OUT_OF_MEMORY : MLRT_ERR_UNSUPPORTED,
                   "%s: graph input '%.*s' dim %d is symbolic ('%.*s'), and at %lld: %s", gm->ir.format, MLRT__CUT(v->name, 64), d - 1,
                   MLRT__CUT(s, 32),
                   (long long)l, msg);
    }
    if (g) {
        gm->plans[gm->n_plans++] = g, gm->max_len = vary ? l : 0;
        if (vary && l > 1) { /* one less: which outputs' dims follow the varying ones */
            lens(gm, l - 1, len);
            mlrt__graph *h = plan(gm, len, NULL, &gm->scratch_err);
            if (h) gm->plans[gm->n_plans++] = h;
        }
    }
    free(len);
    return g ? MLRT_OK : err->code;
}

/* The model's lists of inputs and outputs: names, element types, dims (-1 and a name where they vary). */
static mlrt_status io_lists(mlrt_model *m, gmodel *gm) {
    const mlrt__ir_graph *ir = &gm->ir;
    const mlrt__graph *g = gm->plans[0], *h = gm->n_plans > 1 ? gm->plans[1] : NULL;
    m->n_inputs = ir->n_inputs, m->n_outputs = ir->n_outputs;
    m->inputs = calloc(ir->n_inputs + 1, sizeof *m->inputs);
    m->outputs = calloc(ir->n_outputs + 1, sizeof *m->outputs);
    if (!m->inputs || !m->outputs) return MLRT_ERR_OUT_OF_MEMORY;
    const char *batch = "batch", *vary = NULL; /* the batch is "batch" in every family; other dims keep the file's names */
    for (uint32_t s = 0; s < ir->n_syms; s++)
        if (!vary && gm->role[s] == ROLE_VARY) vary = ir->syms[s];
    for (uint32_t k = 0; k < ir->n_inputs; k++) {
        const mlrt__ir_value *v = &ir->vals[ir->inputs[k]];
        mlrt__io *io = &m->inputs[k];
        io->t = (mlrt_tensor){v->name, v->dtype, (uint32_t)v->rank, {0}, NULL};
        for (int32_t d = 0; d < v->rank; d++) {
            io->t.dims[d] = v->dims[d] >= 0 ? v->dims[d] : -1;
            if (v->dims[d] < 0 && gm->role[MLRT__IR_SYM_OF(v->dims[d])] == ROLE_VARY)
                io->sym[d] = ir->syms[MLRT__IR_SYM_OF(v->dims[d])], io->max[d] = gm->max_len;
        }
        if (g->batched) io->t.dims[0] = -1, io->sym[0] = batch, io->max[0] = 0;
    }
    for (uint32_t k = 0; k < ir->n_outputs; k++) {
        const mlrt__gval *v = &g->vals[g->outputs[k]], *w = h ? &h->vals[h->outputs[k]] : NULL;
        mlrt__io *io = &m->outputs[k];
        io->t = (mlrt_tensor){ir->vals[ir->outputs[k]].name, v->dtype, v->rank, {0}, NULL};
        for (uint32_t d = 0; d < v->rank; d++) {
            io->t.dims[d] = v->dims[d];
            if (w && w->rank == v->rank && w->dims[d] != v->dims[d]) { /* follows a varying dim */
                io->t.dims[d] = -1;
                if (v->dims[d] == gm->max_len && w->dims[d] == gm->max_len - 1) io->sym[d] = vary, io->max[d] = gm->max_len;
            }
        }
        if (g->batched && v->rank) io->t.dims[0] = -1, io->sym[0] = batch, io->max[0] = 0;
    }
    /* rows (predict): one float input and one float output, nothing varying but the batch */
    const mlrt__gval *in = &g->vals[g->inputs[0]], *out = &g->vals[g->outputs[0]];
    if (ir->n_inputs == 1 && ir->n_outputs == 1 && !gm->max_len && in->dtype == MLRT_F32 && out->dtype == MLRT_F32)
        m->in_size = (uint32_t)in->count, m->out_size = (uint32_t)out->count;
    return MLRT_OK;
}

static mlrt_status facts(gmodel *gm) {
    const mlrt__graph *g = gm->plans[0];
    mlrt__buf j = {0};
    mlrt__buf_puts(&j, gm->ir.facts_json ? gm->ir.facts_json : "\"graph\":{}");
    if (!j.oom) j.len--, j.data[j.len] = 0; /* reopen the format's member for the plan */
    mlrt__buf_printf(&j, ",\"plan\":{\"batched\":%s,\"tileRows\":%u,\"ops\":%u,\"macs\":%llu,\"arenaBytes\":%zu,"
                         "\"scratchBytes\":%zu", g->batched ? "true" : "false", g->tile_rows, g->n_ops,
                     (unsigned long long)g->macs, g->arena_units * 4, (g->col_floats + g->zeros_floats) * 4);
    if (gm->max_len) mlrt__buf_printf(&j, ",\"maxLength\":%lld", (long long)gm->max_len);
    mlrt__buf_puts(&j, "}}");
    gm->facts_json = j.data;
    if (j.oom) { free(j.data), gm->facts_json = NULL; return MLRT_ERR_OUT_OF_MEMORY; }
    return MLRT_OK;
}

mlrt_model *mlrt__build_graph(mlrt__ir_graph *ir, mlrt_format format, mlrt_error *err) {
    gmodel *gm = calloc(1, sizeof *gm);
    if (!gm) {
        mlrt__ir_graph_free(ir);
        mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "out of memory for the model");
        return NULL;
    }
    gm->ir = *ir;
    memset(ir, 0, sizeof *ir);
    mlrt_status st = gm->ir.n_inputs ? MLRT_OK : mlrt__fail(err, MLRT_ERR_UNSUPPORTED, "%s: the graph has no inputs; mlrt runs graphs of inputs",
                                                                gm->ir.format);
    if (!st && !(gm->packs = calloc(gm->ir.n_ops + 1, sizeof *gm->packs)))
        st = mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "%s: out of memory", gm->ir.format);
    if (!st) st = roles(gm, err);
    if (!st) st = plan_at_load(gm, err);
    if (!st && facts(gm)) st = mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "%s: out of memory", gm->ir.format);
    if (st) { gmodel_free(gm); return NULL; }
    mlrt_model *m = mlrt__model_new(&graph_family, gm, format, MLRT_KIND_GRAPH, err);
    if (!m) return NULL;
    if (io_lists(m, gm) ||
        mlrt__model_labels(m, m->out_size > 1 ? MLRT_TASK_CLASSIFICATION : MLRT_TASK_REGRESSION, m->out_size)) {
        mlrt_free(m);
        mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "out of memory for the model");
        return NULL;
    }
    return mlrt__model_finish(m, NULL, err);
}
