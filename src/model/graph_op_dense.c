/* model/graph_op_dense.c — Gemm and MatMul as dense ops: rows of k_in inputs times constant
 * weights, on the dense kernel of kernels/dense.c (weights packed by graph_linear.c).
 *
 * Gemm: y = alpha A' B' + beta C. B must be a constant. C broadcasts to [m, n]: a constant per
 * column (or a scalar) becomes the bias; a constant per row, or a computed C, is added after the
 * product (scaled by beta first when beta is not 1). transA = 1 transposes A first (then A's
 * columns are its rows: never the samples of a batch). MatMul: A [..., k] times a constant 2-D
 * B [k][n]. */
#include "graph.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TRY(x) do { mlrt_status st_ = (x); if (st_) return st_; } while (0)
#define OOM() mlrt__plan_fail(pl, MLRT_ERR_OUT_OF_MEMORY, "out of memory")
#define VAL(id) MLRT__PV(pl, id)

typedef struct gdense {
    mlrt__glinear lin;              /* (first: fusions see the ops' shared part) */
    uint64_t outer;                 /* rows per sample */
} gdense;

/* ------------------------------------------------------------------ the dense op */

static void dense_free(void *p) {
    mlrt__glinear_release(p);
    free(p);
}

static mlrt_status dense_pack(mlrt__planner *pl, mlrt__gop *op) { return mlrt__glinear_pack(pl, op, op->p, 0, 1); }

static mlrt_status dense_run(mlrt__graph *g, const mlrt__gop *op, size_t rows, mlrt_error *err) {
    const gdense *d = op->p;
    const mlrt__dense *l = &d->lin.pack->dense;
    const float *x = mlrt__gdata(g, op->in[0]);
    float *y = mlrt__gdata(g, op->out[0]);
    size_t r = (size_t)d->outer * rows, tile = MLRT__TILE_ROWS, k = d->lin.k_in, n = d->lin.oc;
    for (size_t i = 0; i < r; i += tile) /* rows in tiles, as the dense model does */
        mlrt__dense_forward(l, x + i * k, k, y + i * n, n, r - i < tile ? r - i : tile);
    return MLRT_OK;
}

static void dense_cost(const mlrt__graph *g, const mlrt__gop *op, uint64_t *macs, uint64_t *params) {
    const gdense *d = op->p;
    *macs = g->vals[op->out[0]].count * d->lin.k_in;
    *params = (uint64_t)d->lin.oc * (d->lin.k_in + 1);
}

/* The dense op for input a (rows of k): out [rank] dims; takes d. */
static int32_t dense_op(mlrt__planner *pl, mlrt__op_kind kind, int32_t a, uint32_t rank, const int64_t *dims, gdense *d) {
    mlrt__gshape s = {MLRT_F32, rank, {0}};
    memcpy(s.dims, dims, rank * sizeof *dims);
    d->outer = mlrt__dims_prod(dims, 0, rank - 1);
    mlrt__gop *op = mlrt__plan_op(pl, kind, &a, 1, &s, 1, d);
    if (!op) dense_free(d);
    return op ? op->out[0] : -1;
}

/* ------------------------------------------------------------------ Gemm */

static mlrt_status gemm_import(mlrt__planner *pl, const mlrt__ir_op *op, void **p) {
    const mlrt__ir_gemm *q = &op->p.gemm;
    int32_t a = mlrt__plan_in(pl, op, 0), bw = mlrt__plan_in(pl, op, 1), c = mlrt__plan_in(pl, op, 2);
    TRY(mlrt__plan_computed(pl, op, 0, 2, 2));
    TRY(mlrt__plan_const_float(pl, op, 1, "B", q->alpha == 1.0f)); /* alpha * B could overflow: then checked here */
    if (c >= 0 && VAL(c)->is_const) TRY(mlrt__plan_const_float(pl, op, 2, "C", false));
    if (c >= 0 && VAL(c)->dtype != MLRT_F32) return mlrt__plan_fail(pl, MLRT_ERR_UNSUPPORTED, "C (input 2) is int64");
    if (VAL(a)->is_const) return mlrt__plan_fail(pl, MLRT_ERR_UNSUPPORTED, "A is a constant; mlrt runs Gemm on a computed A");
    if (VAL(bw)->rank != 2) return mlrt__plan_fail(pl, MLRT_ERR_BAD_DIMENSIONS, "B has rank %u, not 2", VAL(bw)->rank);
    if (q->trans_a) TRY(mlrt__plan_rows_apart(pl, false, "transA = 1 makes A's columns its rows"));
    uint64_t m = (uint64_t)VAL(a)->dims[q->trans_a ? 1 : 0], k = (uint64_t)VAL(a)->dims[q->trans_a ? 0 : 1];
    uint64_t bk = (uint64_t)VAL(bw)->dims[q->trans_b ? 1 : 0], n = (uint64_t)VAL(bw)->dims[q->trans_b ? 0 : 1];
    if (bk != k || !n || n > MLRT__MAX_DIM || k > MLRT__MAX_DIM)
        return mlrt__plan_fail(pl, MLRT_ERR_BAD_DIMENSIONS, "A is [%llu, %llu] but B%s is [%llu, %llu]", (unsigned long long)m,
                               (unsigned long long)k, q->trans_b ? "^T" : "", (unsigned long long)bk, (unsigned long long)n);
    if (c >= 0) { /* C broadcasts to [m, n] */
        const mlrt__gval *cv = VAL(c);
        int64_t c0 = cv->rank == 2 ? cv->dims[0] : 1, c1 = cv->rank >= 1 ? cv->dims[cv->rank - 1] : 1;
        if (cv->rank > 2 || (c1 != 1 && (uint64_t)c1 != n) || (c0 != 1 && (uint64_t)c0 != m))
            return mlrt__plan_fail(pl, MLRT_ERR_BAD_DIMENSIONS, "C does not broadcast to [%llu, %llu]", (unsigned long long)m,
                                   (unsigned long long)n);
    }
    gdense *d = calloc(1, sizeof *d);
    if (!d) return OOM();
    d->lin.k_in = (uint32_t)k, d->lin.oc = (uint32_t)n, d->lin.w = VAL(bw)->data, d->lin.w_trans = q->trans_b;
    d->lin.w_graph = VAL(bw)->graph_data, d->lin.alpha = q->alpha, d->lin.beta = q->beta, d->lin.act = MLRT_ACT_IDENTITY;
    const mlrt__gval *cv = c >= 0 ? VAL(c) : NULL;
    if (cv && cv->is_const && !(cv->rank == 2 && cv->dims[0] != 1 && m != 1)) { /* per column: the bias */
        d->lin.c = cv->data, d->lin.c_count = cv->count;
        d->lin.w_graph &= cv->graph_data;
    }
    *p = d;
    return MLRT_OK;
}

static mlrt_status gemm_shape(mlrt__planner *pl, const mlrt__ir_op *op, const void *p, mlrt__gshape *out) {
    const gdense *d = p;
    const mlrt__gval *a = VAL(mlrt__plan_in(pl, op, 0));
    out[0] = (mlrt__gshape){MLRT_F32, 2, {a->dims[op->p.gemm.trans_a ? 1 : 0], d->lin.oc}};
    return MLRT_OK;
}

static mlrt_status gemm_plan(mlrt__planner *pl, const mlrt__ir_op *op, void *p, const mlrt__gshape *out) {
    gdense *d = p;
    int32_t a = mlrt__plan_in(pl, op, 0), c = mlrt__plan_in(pl, op, 2);
    float beta = op->p.gemm.beta;
    if (op->p.gemm.trans_a) { /* A^T first */
        mlrt__gshape t = {MLRT_F32, 2, {VAL(a)->dims[1], VAL(a)->dims[0]}};
        mlrt__gop *tr = mlrt__plan_op(pl, MLRT__OP_TRANSPOSE, &a, 1, &t, 1, NULL);
        int64_t *perm = tr ? malloc(2 * sizeof *perm) : NULL;
        if (!perm) { dense_free(d); return OOM(); }
        perm[0] = 1, perm[1] = 0, tr->p = perm;
        a = tr->out[0];
    }
    int32_t y = dense_op(pl, op->kind, a, 2, out[0].dims, d);
    if (y < 0) return OOM();
    if (c < 0 || d->lin.c) { mlrt__plan_bind(pl, op, 0, y); return MLRT_OK; }
    /* C added after: a constant per row as beta * C broadcast, or a computed C (times beta) */
    uint64_t m = (uint64_t)out[0].dims[0], n = (uint64_t)out[0].dims[1];
    int32_t cc = c;
    if (VAL(c)->is_const) {
        float *bc = malloc(m * n * sizeof *bc + 4);
        if (!bc) return OOM();
        const float *cf = VAL(c)->data;
        for (uint64_t i = 0; i < m * n; i++) bc[i] = beta * cf[VAL(c)->dims[1] == 1 ? i / n : i];
        cc = mlrt__plan_const(pl, MLRT_F32, 2, out[0].dims, bc);
    } else if (beta != 1.0f) {
        float *bf = malloc(sizeof *bf);
        int32_t s = bf ? (*bf = beta, mlrt__plan_const(pl, MLRT_F32, 0, NULL, bf)) : -1, in[2] = {c, s};
        mlrt__gshape cs = {MLRT_F32, VAL(c)->rank, {0}};
        memcpy(cs.dims, VAL(c)->dims, sizeof cs.dims);
        mlrt__gop *mul = s < 0 ? NULL : mlrt__plan_op(pl, MLRT__OP_MUL, in, 2, &cs, 1, NULL);
        cc = mul ? mul->out[0] : -1;
    }
    if (cc < 0) return OOM();
    if (!VAL(cc)->is_const)
        TRY(mlrt__plan_rows_apart(pl, VAL(cc)->rank == 2 && VAL(cc)->dims[0] == 1, "C broadcasts over the batch axis"));
    int32_t in[2] = {y, cc};
    mlrt__gop *add = mlrt__plan_op(pl, MLRT__OP_ADD, in, 2, out, 1, NULL);
    if (!add) return OOM();
    mlrt__plan_bind(pl, op, 0, add->out[0]);
    return MLRT_OK;
}

/* ------------------------------------------------------------------ MatMul */

static mlrt_status matmul_import(mlrt__planner *pl, const mlrt__ir_op *op, void **p) {
    int32_t a = mlrt__plan_in(pl, op, 0), bw = mlrt__plan_in(pl, op, 1);
    TRY(mlrt__plan_computed(pl, op, 0, 1, MLRT__MAX_RANK));
    if (VAL(a)->is_const || !VAL(bw)->is_const || VAL(bw)->rank != 2 || VAL(bw)->dtype != MLRT_F32)
        return mlrt__plan_fail(pl, MLRT_ERR_UNSUPPORTED, "mlrt runs MatMul of a computed A by a constant 2-D B");
    TRY(mlrt__plan_const_float(pl, op, 1, "B", true));
    const mlrt__gval *av = VAL(a), *bv = VAL(bw);
    uint64_t k = (uint64_t)bv->dims[0], n = (uint64_t)bv->dims[1];
    if ((uint64_t)av->dims[av->rank - 1] != k || !n || n > MLRT__MAX_DIM || k > MLRT__MAX_DIM)
        return mlrt__plan_fail(pl, MLRT_ERR_BAD_DIMENSIONS, "A's last dim is %lld but B is [%llu, %llu]",
                               (long long)av->dims[av->rank - 1], (unsigned long long)k, (unsigned long long)n);
    gdense *d = calloc(1, sizeof *d);
    if (!d) return OOM();
    d->lin.k_in = (uint32_t)k, d->lin.oc = (uint32_t)n, d->lin.w = bv->data, d->lin.w_graph = bv->graph_data;
    d->lin.alpha = d->lin.beta = 1.0f, d->lin.act = MLRT_ACT_IDENTITY;
    *p = d;
    return MLRT_OK;
}

static mlrt_status matmul_shape(mlrt__planner *pl, const mlrt__ir_op *op, const void *p, mlrt__gshape *out) {
    const mlrt__gval *a = VAL(mlrt__plan_in(pl, op, 0));
    out[0] = (mlrt__gshape){MLRT_F32, a->rank, {0}};
    memcpy(out[0].dims, a->dims, sizeof out[0].dims);
    out[0].dims[a->rank - 1] = ((const gdense *)p)->lin.oc;
    return MLRT_OK;
}

static mlrt_status matmul_plan(mlrt__planner *pl, const mlrt__ir_op *op, void *p, const mlrt__gshape *out) {
    int32_t y = dense_op(pl, op->kind, mlrt__plan_in(pl, op, 0), out[0].rank, out[0].dims, p);
    if (y < 0) return OOM();
    mlrt__plan_bind(pl, op, 0, y);
    return MLRT_OK;
}

const mlrt__op_def mlrt__op_gemm = {"Gemm", 2, 3, 1, 0, gemm_import, gemm_shape, gemm_plan, dense_pack, dense_run, dense_cost, dense_free};
const mlrt__op_def mlrt__op_matmul = {"MatMul", 2, 2, 1, 0, matmul_import, matmul_shape, matmul_plan, dense_pack, dense_run,
                                      dense_cost, dense_free};
