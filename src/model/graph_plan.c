/* model/graph_plan.c — after the nodes: weights packed for the kernels, every computed value
 * placed in one arena (values whose lifetimes do not overlap share bytes), the model and its info. */
#include "graph_build.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_FLOATS (1u << 20)    /* a batch-mode tile holds as many samples as fit 4 MB (at most 64) */

static int32_t root(const mlrt__graph *gr, int32_t v) { return gr->vals[v].alias >= 0 ? gr->vals[v].alias : v; }

/* Packs a dense op's weights into a dense layer; a convolution keeps its as they are
 * ([oc][c/groups][kh][kw]: kernels/conv.c runs them as rows against the patches). */
static mlrt_status pack(bld *b, mlrt__gop *op) {
    if (op->kind == MLRT__GOP_CONV) { /* (dense weights are checked by mlrt__dense_pack) */
        for (uint64_t i = 0; i < (uint64_t)op->oc * op->k_in; i++) /* a folded BatchNormalization can overflow */
            if (!isfinite(op->wsrc[i]))
                return mlrt__fail(b->err, MLRT_ERR_NON_FINITE, "onnx: node %u: a weight is not finite", op->node);
        op->direct = !op->depthwise && op->sh == 1 && op->sw == 1 && (uint64_t)op->kh * op->kw <= MLRT__CONV_MAX_TAPS;
        if (op->direct) { /* weights [groups][ceil(ocg / 4)][k][4], zero for the channels past ocg */
            uint32_t ocg = op->oc / op->groups, blocks = (ocg + 3) / 4;
            float *w4 = calloc((size_t)op->groups * blocks * op->k_in * 4 + 1, sizeof(float));
            if (!w4) return mlrt__fail(b->err, MLRT_ERR_OUT_OF_MEMORY, "onnx: out of memory");
            for (uint32_t o = 0; o < op->oc; o++) {
                uint32_t g = o / ocg, j = o % ocg;
                for (uint32_t k = 0; k < op->k_in; k++)
                    w4[(((size_t)g * blocks + j / 4) * op->k_in + k) * 4 + j % 4] = op->wsrc[(size_t)o * op->k_in + k];
            }
            free(op->wsrc);
            op->wsrc = w4;
        }
        op->wdw = op->wsrc, op->wsrc = NULL;
        op->bdw = op->bsrc ? op->bsrc : calloc(op->oc, sizeof(float)), op->bsrc = NULL;
        b->gr->weight_bytes += (uint64_t)op->oc * (op->k_in + 1) * sizeof(float);
        uint64_t p_pad = ((uint64_t)op->oh * op->ow + MLRT__PANEL - 1) / MLRT__PANEL * MLRT__PANEL;
        uint64_t wp = (uint64_t)op->w + op->pl + op->pr, hp = (uint64_t)op->h + op->pt + op->pb;
        uint64_t need = op->depthwise ? 0 : op->direct ? (uint64_t)(op->c / op->groups) * hp * wp + MLRT__CONV_SLACK(op) +
                                                             4 * (((uint64_t)op->oh * wp + 7) / 8 * 8)
                                                          : p_pad * op->k_in;
        if (need + p_pad > MLRT__MAX_ARENA)
            return mlrt__fail(b->err, MLRT_ERR_BAD_DIMENSIONS, "onnx: node %u's patches need %llu MiB; mlrt's limit is %u MiB",
                             op->node, (unsigned long long)(need >> 18), MLRT__MAX_ARENA >> 18);
        if (need > b->gr->col_floats) b->gr->col_floats = (size_t)need;
        if (!op->depthwise && !op->direct && p_pad > b->gr->zeros_floats) b->gr->zeros_floats = (size_t)p_pad;
        return op->bdw ? MLRT_OK : mlrt__fail(b->err, MLRT_ERR_OUT_OF_MEMORY, "onnx: out of memory");
    }
    if (!(op->dense = calloc(1, sizeof *op->dense))) return mlrt__fail(b->err, MLRT_ERR_OUT_OF_MEMORY, "onnx: out of memory");
    mlrt__dense_src s = {0};
    char name[48];
    const mlrt__onnx_node *nd = &b->g->nodes[op->node];
    mlrt__format_to(name, sizeof name, "node %u (%.*s)", op->node, (int)(nd->op.n > 24 ? 24 : nd->op.n), nd->op.p);
    s.name = s.b_name = name;
    s.in = op->k_in, s.out = op->oc;
    s.w = (const uint8_t *)op->wsrc, s.w_dtype = MLRT_F32;
    s.b = (const uint8_t *)op->bsrc, s.b_dtype = MLRT_F32;
    s.act = op->act;
    mlrt_status st = mlrt__dense_pack(&s, "onnx", op->dense, b->err);
    if (st) return st;
    b->gr->weight_bytes += (uint64_t)op->dense->out_padded * op->k_in * sizeof(float);
    free(op->wsrc), free(op->bsrc);
    op->wsrc = op->bsrc = NULL;
    return MLRT_OK;
}

/* First-fit placement of the computed values in the arena, in run order; a block is reused once
 * the last op reading it has run (never by that op's own output). Returns the arena's floats. */
typedef struct block { size_t off, n; } block;

static size_t place(mlrt__graph *gr, size_t rows, block *free_list) {
    size_t nfree = 0, top = 0;
    for (uint32_t k = 0; k < gr->n_ops; k++) {
        const mlrt__gop *op = &gr->ops[k];
        mlrt__gval *out = &gr->vals[op->out];
        size_t n = ((size_t)out->count * rows + 3) & ~(size_t)3, best = nfree;
        for (size_t f = 0; f < nfree; f++)
            if (free_list[f].n >= n && (best == nfree || free_list[f].n < free_list[best].n)) best = f;
        if (best < nfree) {
            out->off = free_list[best].off;
            free_list[best].off += n, free_list[best].n -= n;
        } else out->off = top, top += n;
        for (uint32_t v = 0; v < gr->n_vals; v++) { /* values read for the last time by op k */
            const mlrt__gval *g = &gr->vals[v];
            if (g->is_const || g->alias >= 0 || v == (uint32_t)gr->input || g->last_use != k || v == (uint32_t)op->out) continue;
            free_list[nfree].off = g->off;
            free_list[nfree++].n = ((size_t)g->count * rows + 3) & ~(size_t)3;
        }
    }
    return top;
}

static mlrt_status plan_arena(bld *b) {
    mlrt__graph *gr = b->gr;
    for (uint32_t v = 0; v < gr->n_vals; v++) gr->vals[v].last_use = 0;
    for (uint32_t k = 0; k < gr->n_ops; k++) {
        mlrt__gop *op = &gr->ops[k];
        gr->vals[op->out].last_use = k; /* a value nobody reads is freed after it is written */
        for (uint32_t i = 0; i < op->n_in; i++) {
            int32_t v = op->ins ? op->ins[i] : op->in[i];
            if (v >= 0) gr->vals[root(gr, v)].last_use = k;
        }
    }
    gr->vals[root(gr, gr->output)].last_use = gr->n_ops; /* kept until it is copied out */
    block *fl = malloc((gr->n_vals + gr->n_ops + 1) * sizeof *fl);
    if (!fl) return mlrt__fail(b->err, MLRT_ERR_OUT_OF_MEMORY, "onnx: out of memory");
    size_t per = place(gr, 1, fl);
    gr->tile_rows = gr->batched ? (uint32_t)(per ? ARENA_FLOATS / per : 64) : 1;
    if (gr->tile_rows > MLRT__TILE_ROWS) gr->tile_rows = MLRT__TILE_ROWS;
    if (gr->tile_rows == 0) gr->tile_rows = 1;
    gr->arena_floats = place(gr, gr->tile_rows, fl);
    free(fl);
    if (gr->arena_floats + gr->col_floats + gr->zeros_floats > MLRT__MAX_ARENA)
        return mlrt__fail(b->err, MLRT_ERR_BAD_DIMENSIONS, "onnx: the graph needs %zu MiB of activations and scratch; "
                         "mlrt's limit is %u MiB", (gr->arena_floats + gr->col_floats) >> 18, MLRT__MAX_ARENA >> 18);
    gr->arena = malloc(gr->arena_floats * sizeof(float) + 16);
    gr->col = calloc(gr->zeros_floats + gr->col_floats + 4, sizeof(float)); /* the zeros stay zero */
    if (!gr->arena || !gr->col) return mlrt__fail(b->err, MLRT_ERR_OUT_OF_MEMORY, "onnx: out of memory for the arena");
    return MLRT_OK;
}

mlrt_status mlrt__bld_plan(bld *b) {
    mlrt_status st = mlrt__bld_nodes(b);
    if (st) return st;
    mlrt__graph *gr = b->gr;
    const mlrt__onnx_value *ov = &b->g->values[b->g->outputs[0]];
    gr->output = b->vmap[b->g->outputs[0]];
    if (gr->output < 0 || gr->vals[gr->output].is_const || gr->vals[gr->output].is_int)
        return mlrt__fail(b->err, gr->output >= 0 && !gr->vals[gr->output].is_const ? MLRT_ERR_UNSUPPORTED : MLRT_ERR_NOT_A_MODEL,
                         "onnx: graph output '%.*s' %s", (int)ov->name.n, ov->name.p,
                         gr->output >= 0 && !gr->vals[gr->output].is_const ? "is int64; mlrt returns floats"
                                                                            : "does not depend on the input");
    const mlrt__gval *out = &gr->vals[gr->output];
    if (ov->rank >= 0) { /* the file's declared output shape, where static, must be what mlrt infers */
        bool ok = (uint32_t)ov->rank == out->rank;
        for (uint32_t d = 0; ok && d < out->rank; d++)
            ok = ov->dims[d] < 0 || ov->dims[d] == out->dims[d] || (d == 0 && gr->batched);
        if (!ok)
            return mlrt__fail(b->err, MLRT_ERR_BAD_DIMENSIONS, "onnx: graph output '%.*s' is declared with rank %d, but "
                             "the graph computes [%lld%s] of rank %u", (int)ov->name.n, ov->name.p, ov->rank,
                             (long long)(out->rank ? out->dims[0] : 1), out->rank > 1 ? ", ..." : "", out->rank);
    }
    for (uint32_t k = 0; k < gr->n_ops; k++)
        if ((gr->ops[k].kind == MLRT__GOP_DENSE || gr->ops[k].kind == MLRT__GOP_CONV) && (st = pack(b, &gr->ops[k]))) return st;
    return plan_arena(b);
}

/* ------------------------------------------------------------------ info and inspect */

static void json_dims(mlrt__buf *j, int32_t rank, const int64_t *dims) {
    mlrt__buf_puts(j, "[");
    for (int32_t d = 0; d < rank; d++) {
        if (dims[d] < 0) mlrt__buf_printf(j, "%snull", d ? "," : "");
        else mlrt__buf_printf(j, "%s%lld", d ? "," : "", (long long)dims[d]);
    }
    mlrt__buf_puts(j, "]");
}

static void json_io(mlrt__buf *j, const mlrt__onnx *g, const int32_t *ids, uint32_t n) {
    mlrt__buf_puts(j, "[");
    for (uint32_t k = 0; k < n; k++) {
        const mlrt__onnx_value *v = &g->values[ids[k]];
        mlrt__buf_puts(j, k ? ",{\"name\":" : "{\"name\":");
        mlrt__buf_json_string(j, v->name.p, v->name.n);
        mlrt__buf_printf(j, ",\"elemType\":%d,\"shape\":", v->elem_type);
        if (v->rank < 0) mlrt__buf_puts(j, "null");
        else json_dims(j, v->rank, v->dims);
        mlrt__buf_puts(j, "}");
    }
    mlrt__buf_puts(j, "]");
}

/* "onnx":{irVersion, opset, producer, graph, inputs, outputs, nodes, ops: {type: count}, initializers} */
static void describe(mlrt__buf *j, const mlrt__onnx *g) {
    mlrt__buf_printf(j, "\"onnx\":{\"irVersion\":%lld,\"opset\":%lld,\"producer\":", (long long)g->ir_version, (long long)g->opset);
    mlrt__buf_json_string(j, g->producer.p, g->producer.n);
    mlrt__buf_puts(j, ",\"graph\":");
    mlrt__buf_json_string(j, g->graph_name.p, g->graph_name.n);
    mlrt__buf_puts(j, ",\"inputs\":");
    json_io(j, g, g->inputs, g->n_inputs);
    mlrt__buf_puts(j, ",\"outputs\":");
    json_io(j, g, g->outputs, g->n_outputs);
    mlrt__buf_printf(j, ",\"nodes\":%u,\"ops\":{", g->n_nodes);
    bool first = true;
    for (uint32_t k = 0; k < g->n_nodes; k++) { /* each op type once, counted, in order of first use */
        bool seen = false;
        for (uint32_t i = 0; i < k && !seen; i++) seen = g->nodes[i].op.n == g->nodes[k].op.n && !memcmp(g->nodes[i].op.p, g->nodes[k].op.p, g->nodes[k].op.n);
        if (seen) continue;
        uint32_t c = 0;
        for (uint32_t i = k; i < g->n_nodes; i++) c += g->nodes[i].op.n == g->nodes[k].op.n && !memcmp(g->nodes[i].op.p, g->nodes[k].op.p, g->nodes[k].op.n);
        if (!first) mlrt__buf_puts(j, ",");
        first = false;
        mlrt__buf_json_string(j, g->nodes[k].op.p, g->nodes[k].op.n);
        mlrt__buf_printf(j, ":%u", c);
    }
    mlrt__buf_puts(j, "},\"initializers\":[");
    for (uint32_t k = 0; k < g->n_init; k++) {
        const mlrt__onnx_tensor *t = &g->inits[k];
        mlrt__buf_puts(j, k ? ",{\"name\":" : "{\"name\":");
        mlrt__buf_json_string(j, t->name.p, t->name.n);
        mlrt__buf_printf(j, ",\"dtype\":\"%s\",\"shape\":", t->type == MLRT__ONNX_INT64 ? "I64" : "F32");
        json_dims(j, (int32_t)t->rank, t->dims);
        mlrt__buf_puts(j, "}");
    }
    mlrt__buf_puts(j, "]}");
}

char *mlrt__onnx_describe(const mlrt__onnx *g) {
    mlrt__buf j = {0};
    describe(&j, g);
    if (j.oom) { free(j.data); return NULL; }
    return j.data;
}

static uint64_t graph_params(mlrt__graph *gr) {
    uint64_t n = 0;
    gr->macs = 0;
    for (uint32_t k = 0; k < gr->n_ops; k++) {
        const mlrt__gop *op = &gr->ops[k];
        uint64_t out = gr->vals[op->out].count;
        if (op->kind == MLRT__GOP_DENSE || op->kind == MLRT__GOP_CONV) n += (uint64_t)op->oc * (op->k_in + 1);
        if (op->kind == MLRT__GOP_AFFINE) n += 2ull * op->c;
        gr->macs += op->kind == MLRT__GOP_DENSE || op->kind == MLRT__GOP_CONV ? out * op->k_in
                  : op->kind == MLRT__GOP_MAXPOOL || op->kind == MLRT__GOP_AVGPOOL ? out * op->kh * op->kw
                  : op->kind == MLRT__GOP_GLOBALAVG ? (uint64_t)op->h * op->w * op->c : out;
    }
    return n;
}

mlrt_model *mlrt__graph_model(const mlrt__onnx *g, mlrt__graph *gr, mlrt_error *err) {
    gr->params = graph_params(gr);
    mlrt__buf j = {0};
    describe(&j, g);
    if (!j.oom) j.len--, j.data[j.len] = 0; /* reopen "onnx":{...} for the plan */
    mlrt__buf_printf(&j, ",\"plan\":{\"batched\":%s,\"tileRows\":%u,\"ops\":%u,\"macs\":%llu,\"arenaBytes\":%zu,"
                         "\"scratchBytes\":%zu}}", gr->batched ? "true" : "false", gr->tile_rows, gr->n_ops,
                     (unsigned long long)gr->macs, gr->arena_floats * 4, (gr->col_floats + gr->zeros_floats) * 4);
    gr->facts_json = j.data;
    if (j.oom) {
        free(j.data), gr->facts_json = NULL;
        mlrt__graph_free(gr);
        mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "onnx: out of memory");
        return NULL;
    }
    mlrt_model *m = mlrt__model_new(&mlrt__graph_family, gr, MLRT_FORMAT_ONNX, MLRT_KIND_GRAPH, err);
    if (!m) return NULL;
    const mlrt__gval *in = &gr->vals[gr->input], *out = &gr->vals[gr->output];
    m->in_size = (uint32_t)in->count;
    m->out_size = (uint32_t)out->count;
    m->n_inputs = m->n_outputs = 1;
    m->inputs = calloc(1, sizeof *m->inputs);
    m->outputs = calloc(1, sizeof *m->outputs);
    bool oom = !m->inputs || !m->outputs;
    if (!oom) {
        const mlrt__onnx_value *iv = &g->values[g->inputs[0]], *ov = &g->values[g->outputs[0]];
        char *names = malloc(iv->name.n + ov->name.n + 2);
        if ((oom = !names)) goto done;
        memcpy(names, iv->name.p, iv->name.n), names[iv->name.n] = 0;
        memcpy(names + iv->name.n + 1, ov->name.p, ov->name.n), names[iv->name.n + 1 + ov->name.n] = 0;
        gr->names = names;
        m->inputs[0].t = (mlrt_tensor){names, MLRT_F32, in->rank, {0}, NULL};
        m->outputs[0].t = (mlrt_tensor){names + iv->name.n + 1, MLRT_F32, out->rank, {0}, NULL};
        memcpy(m->inputs[0].t.dims, in->dims, in->rank * sizeof *in->dims);
        memcpy(m->outputs[0].t.dims, out->dims, out->rank * sizeof *out->dims);
        if (gr->batched) {
            m->inputs[0].t.dims[0] = m->outputs[0].t.dims[0] = -1;
            m->inputs[0].sym[0] = m->outputs[0].sym[0] = "batch";
        }
    }
done:
    if (oom || mlrt__model_labels(m, m->out_size > 1 ? MLRT_TASK_CLASSIFICATION : MLRT_TASK_REGRESSION, m->out_size)) {
        mlrt_free(m);
        mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "onnx: out of memory");
        return NULL;
    }
    return mlrt__model_finish(m, NULL, err);
}
