/* model/graph_run.c — running a plan: each op on its values in the arena, a tile of samples at a time. */
#include "graph.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

float *mlrt__graph_value(const mlrt__graph *gr, int32_t v) {
    const mlrt__gval *g = &gr->vals[v];
    if (g->is_const) return g->f;
    int32_t r = g->alias >= 0 ? g->alias : v;
    if (r == gr->input) return (float *)gr->x;
    return gr->arena + gr->vals[r].off;
}

/* v's dims for a run of `rows` samples: a computed value's first dim is the batch. */
static void run_dims(const mlrt__graph *gr, int32_t v, size_t rows, uint32_t rank, int64_t *d) {
    const mlrt__gval *g = &gr->vals[v];
    for (uint32_t k = 0; k < rank; k++) d[k] = k + g->rank >= rank ? g->dims[k + g->rank - rank] : 1;
    if (!g->is_const && gr->batched && g->rank == rank && rank) d[0] *= (int64_t)rows;
}

void mlrt__graph_run_op(const mlrt__graph *gr, const mlrt__gop *op, size_t rows) {
    const mlrt__gval *out = &gr->vals[op->out];
    float *y = mlrt__graph_value(gr, op->out);
    const float *x = mlrt__graph_value(gr, op->ins ? op->ins[0] : op->in[0]);
    size_t n = (size_t)out->count * rows, images = gr->batched ? rows * (size_t)out->dims[0] : (size_t)out->dims[0];
    switch (op->kind) {
    case MLRT__GOP_DENSE: {
        size_t r = (size_t)op->outer * rows, tile = MLRT__TILE_ROWS;
        for (size_t i = 0; i < r; i += tile) /* rows in tiles, as the dense model does */
            mlrt__dense_forward(&op->dense[0], x + i * op->k_in, op->k_in, y + i * op->oc, op->oc, r - i < tile ? r - i : tile);
        break;
    }
    case MLRT__GOP_CONV: mlrt__conv_forward(op, x, y, gr->col, gr->col + gr->zeros_floats, images); break;
    case MLRT__GOP_MAXPOOL: case MLRT__GOP_AVGPOOL: case MLRT__GOP_GLOBALAVG: mlrt__pool_forward(op, x, y, images); break;
    case MLRT__GOP_BINARY: {
        int64_t ad[MLRT__MAX_RANK], bd[MLRT__MAX_RANK], yd[MLRT__MAX_RANK];
        run_dims(gr, op->in[0], rows, out->rank, ad);
        run_dims(gr, op->in[1], rows, out->rank, bd);
        run_dims(gr, op->out, rows, out->rank, yd);
        mlrt__binary((mlrt__bin_kind)op->sub, x, ad, mlrt__graph_value(gr, op->in[1]), bd, y, yd, out->rank);
        break;
    }
    case MLRT__GOP_UNARY: mlrt__unary(op, x, y, n); break;
    case MLRT__GOP_AFFINE: mlrt__affine(x, op->wdw, op->bdw, (size_t)op->outer * (gr->batched ? rows : 1), op->c, op->inner, y); break;
    case MLRT__GOP_SOFTMAX: mlrt__softmax(x, y, (size_t)op->outer * (gr->batched ? rows : 1), op->axis_n, op->inner, op->sub); break;
    case MLRT__GOP_TRANSPOSE: {
        int64_t xd[MLRT__MAX_RANK];
        run_dims(gr, op->in[0], rows, out->rank, xd);
        mlrt__transpose(x, xd, op->perm, out->rank, y);
        break;
    }
    case MLRT__GOP_PAD: {
        int64_t xd[MLRT__MAX_RANK];
        run_dims(gr, op->in[0], rows, out->rank, xd);
        mlrt__pad(x, xd, op->perm, out->rank, op->pad_value, y);
        break;
    }
    case MLRT__GOP_SLICE: {
        int64_t xd[MLRT__MAX_RANK], yd[MLRT__MAX_RANK];
        run_dims(gr, op->in[0], rows, out->rank, xd);
        run_dims(gr, op->out, rows, out->rank, yd);
        mlrt__slice(x, xd, op->perm, op->perm + MLRT__MAX_RANK, out->rank, y, yd);
        break;
    }
    case MLRT__GOP_CONCAT: { /* [outer][axis_k][inner] per input, joined along the axis */
        size_t outer = (size_t)op->outer * (gr->batched ? rows : 1), per = (size_t)op->outer, at = 0;
        size_t row = (size_t)(out->count / op->outer); /* output floats per outer index */
        for (uint32_t k = 0; k < op->n_in; k++) {
            const mlrt__gval *g = &gr->vals[op->ins[k]];
            const float *src = mlrt__graph_value(gr, op->ins[k]);
            size_t chunk = (size_t)(g->count / op->outer);
            for (size_t o = 0; o < outer; o++) /* a constant input repeats for every sample */
                memcpy(y + o * row + at, src + (g->is_const ? o % per : o) * chunk, chunk * sizeof(float));
            at += chunk;
        }
        break;
    }
    }
}

void mlrt__graph_run(const mlrt__graph *gr, const float *x, size_t rows) {
    ((mlrt__graph *)gr)->x = x;
    for (uint32_t k = 0; k < gr->n_ops; k++) mlrt__graph_run_op(gr, &gr->ops[k], rows);
}

static mlrt_status graph_predict(mlrt_model *m, const float *in, size_t n, float *out, mlrt_error *err) {
    mlrt_status st = mlrt__check_rows(m, in, n, out, true, "predict", err);
    if (st) return st;
    const mlrt__graph *gr = m->impl;
    for (size_t r = 0; r < n; r += gr->tile_rows) {
        size_t rows = n - r < gr->tile_rows ? n - r : gr->tile_rows;
        mlrt__graph_run(gr, in + r * m->in_size, rows);
        memcpy(out + r * m->out_size, mlrt__graph_value(gr, gr->output), rows * m->out_size * sizeof(float));
    }
    for (size_t k = 0; k < n * m->out_size; k++)
        if (!isfinite(out[k]))
            return mlrt__fail(err, MLRT_ERR_NON_FINITE, "predict: output %zu of row %zu is not finite (an overflow, or a "
                              "division by zero in the graph)", k % m->out_size, k / m->out_size);
    return MLRT_OK;
}

/* The one input [batch, ...] (or its fixed shape) -> the one output. */
static mlrt_status graph_run(mlrt_model *m, const mlrt_tensor *in, mlrt_error *err) {
    const mlrt__graph *gr = m->impl;
    size_t n = gr->batched ? (size_t)in[0].dims[0] : 1;
    int64_t dims[MLRT_MAX_DIMS];
    const mlrt__gval *ov = &gr->vals[gr->output];
    memcpy(dims, ov->dims, ov->rank * sizeof *dims);
    if (gr->batched) dims[0] = (int64_t)n;
    float *y = mlrt__output(m, 0, ov->rank, dims, err);
    return y ? graph_predict(m, in[0].data, n, y, err) : MLRT_ERR_OUT_OF_MEMORY;
}

static void graph_free(mlrt_model *m) { mlrt__graph_free(m->impl); }

static void graph_facts(mlrt__buf *b, const mlrt_model *m) {
    const mlrt__graph *gr = m->impl;
    mlrt__buf_puts(b, ",");
    mlrt__buf_puts(b, gr->facts_json);
}

static uint64_t graph_params(const mlrt_model *m) { return ((const mlrt__graph *)m->impl)->params; }
static uint64_t graph_weight_bytes(const mlrt_model *m) { return ((const mlrt__graph *)m->impl)->weight_bytes; }

const mlrt__family mlrt__graph_family = {
    "graph", graph_run, graph_predict, NULL, NULL, graph_free, graph_facts, graph_params, graph_weight_bytes, NULL,
};
