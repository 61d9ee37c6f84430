/* model/graph_ops.c — one planner per ONNX op: check the node, infer its output, fuse or emit.
 *
 * Fusions made here, as the nodes are walked (each only when the producer's output has no other
 * reader and is not the graph output):
 *   Conv / Gemm / MatMul + BatchNormalization  -> the scale and shift folded into weights and bias
 *   MatMul + Add of a [N] constant              -> the bias of the dense op
 *   Conv / Gemm / MatMul + Relu, Sigmoid, Tanh, LeakyRelu(0.01) -> the dense kernel's activation
 *   Gemm / MatMul + Softmax over their outputs   -> the dense kernel's softmax */
#include "graph_build.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TRY(x) do { mlrt_status st_ = (x); if (st_) return st_; } while (0)
#define OOM() mlrt__bld_fail(b, MLRT_ERR_OUT_OF_MEMORY, "out of memory")
#define VAL(id) (&b->gr->vals[id])

static const mlrt__onnx_node *node(bld *b) { return &b->g->nodes[b->node]; }

/* A computed input (not a constant), or an error. */
static mlrt_status computed(bld *b, int32_t v, uint32_t k, uint32_t rank_lo, uint32_t rank_hi) {
    const mlrt__gval *g = VAL(v);
    if (g->is_int) return mlrt__bld_fail(b, MLRT_ERR_UNSUPPORTED, "input %u is int64; the op runs on float tensors", k);
    if (g->rank < rank_lo || g->rank > rank_hi)
        return mlrt__bld_fail(b, MLRT_ERR_BAD_DIMENSIONS, "input %u has rank %u; the op takes rank %u to %u", k, g->rank,
                             rank_lo, rank_hi);
    return MLRT_OK;
}

/* A constant float input (absent: fine); finite unless `packed` (mlrt__dense_pack checks those). */
static mlrt_status const_float_of(bld *b, int32_t v, uint32_t k, const char *what, bool packed) {
    if (v < 0) return MLRT_OK;
    if (!VAL(v)->is_const || VAL(v)->is_int)
        return mlrt__bld_fail(b, MLRT_ERR_UNSUPPORTED, "%s (input %u) must be a constant float tensor", what, k);
    for (uint64_t i = 0; !packed && i < VAL(v)->count; i++)
        if (!isfinite(VAL(v)->f[i]))
            return mlrt__bld_fail(b, MLRT_ERR_NON_FINITE, "%s (input %u) element %llu is not finite", what, k,
                                 (unsigned long long)i);
    return MLRT_OK;
}

static mlrt_status const_float(bld *b, int32_t v, uint32_t k, const char *what) {
    return const_float_of(b, v, k, what, false);
}

uint32_t mlrt__bld_in_uses(bld *b, uint32_t k) { return b->uses[node(b)->in[k]]; }

/* The dense or conv op that alone reads into input k, ready to take a fusion, or NULL. */
static mlrt__gop *fusable(bld *b, uint32_t k) {
    int32_t v = mlrt__bld_in(b, k);
    if (v < 0 || VAL(v)->is_const || VAL(v)->op < 0 || mlrt__bld_in_uses(b, k) != 1) return NULL;
    mlrt__gop *p = &b->gr->ops[VAL(v)->op];
    return (p->kind == MLRT__GOP_DENSE || p->kind == MLRT__GOP_CONV) && p->act == MLRT_ACT_IDENTITY ? p : NULL;
}

mlrt_status mlrt__bld_finish(bld *b, mlrt__gop *op) {
    bool all_const = true;
    for (uint32_t k = 0; k < op->n_in; k++) {
        int32_t v = op->ins ? op->ins[k] : op->in[k];
        if (v >= 0 && !VAL(v)->is_const) all_const = false;
    }
    mlrt__bld_set_out(b, op->out);
    if (!all_const) return MLRT_OK;
    /* every input is a constant: run it now */
    mlrt__gval *out = VAL(op->out);
    if (op->kind == MLRT__GOP_DENSE || op->kind == MLRT__GOP_CONV)
        return mlrt__bld_fail(b, MLRT_ERR_UNSUPPORTED, "it computes on constants only, which mlrt does not fold");
    if (!(out->f = malloc(out->count * sizeof(float) + 4))) return OOM();
    out->is_const = true;
    out->op = -1;
    mlrt__graph_run_op(b->gr, op, 1);
    free(op->perm), free(op->ins), free(op->wdw), free(op->bdw);
    b->gr->n_ops--;
    return MLRT_OK;
}

/* ------------------------------------------------------------------ dense: Gemm, MatMul */

/* The dense op for rows of k inputs: w [n][k] and bias [n] (NULL: none), owned by the op. */
static mlrt_status dense_op(bld *b, int32_t in, uint32_t rank, const int64_t *dims, float *w, float *bias, uint32_t k) {
    int32_t out = mlrt__bld_val(b, rank, dims);
    mlrt__gop *op = out < 0 ? NULL : mlrt__bld_op(b, MLRT__GOP_DENSE, out);
    if (!op) { free(w), free(bias); return OOM(); }
    op->in[0] = in, op->n_in = 1;
    op->wsrc = w, op->bsrc = bias, op->k_in = k;
    op->oc = (uint32_t)dims[rank - 1];
    op->outer = mlrt__dims_prod(dims, 0, rank - 1);
    return mlrt__bld_finish(b, op);
}

mlrt_status mlrt__op_gemm(bld *b) {
    TRY(mlrt__bld_arity(b, 2, 3));
    int32_t a = mlrt__bld_in(b, 0), bw = mlrt__bld_in(b, 1), c = mlrt__bld_in(b, 2);
    int64_t ta, tb;
    float alpha, beta;
    TRY(mlrt__bld_int(b, "transA", 0, &ta));
    TRY(mlrt__bld_int(b, "transB", 0, &tb));
    TRY(mlrt__bld_float(b, "alpha", 1.0f, &alpha));
    TRY(mlrt__bld_float(b, "beta", 1.0f, &beta));
    TRY(computed(b, a, 0, 2, 2));
    TRY(const_float_of(b, bw, 1, "B", alpha == 1.0f)); /* alpha * B could overflow: then checked here */
    TRY(const_float(b, c, 2, "C"));
    if (VAL(a)->is_const) return mlrt__bld_fail(b, MLRT_ERR_UNSUPPORTED, "A is a constant; mlrt runs Gemm on a computed A");
    if (VAL(bw)->rank != 2) return mlrt__bld_fail(b, MLRT_ERR_BAD_DIMENSIONS, "B has rank %u, not 2", VAL(bw)->rank);
    if (ta) { /* A^T first: its rows are A's columns, so never the samples of a batch */
        TRY(mlrt__bld_rows_apart(b, false, "transA = 1 makes A's columns its rows"));
        int64_t td[2] = {VAL(a)->dims[1], VAL(a)->dims[0]};
        int32_t t = mlrt__bld_val(b, 2, td);
        mlrt__gop *op = t < 0 ? NULL : mlrt__bld_op(b, MLRT__GOP_TRANSPOSE, t);
        if (!op || !(op->perm = malloc(2 * sizeof *op->perm))) return OOM();
        op->perm[0] = 1, op->perm[1] = 0, op->in[0] = a, op->n_in = 1;
        a = t;
    }
    uint64_t m = (uint64_t)VAL(a)->dims[0], k = (uint64_t)VAL(a)->dims[1];
    uint64_t bk = (uint64_t)VAL(bw)->dims[tb ? 1 : 0], n = (uint64_t)VAL(bw)->dims[tb ? 0 : 1];
    if (bk != k || !n || n > MLRT__MAX_DIM || k > MLRT__MAX_DIM)
        return mlrt__bld_fail(b, MLRT_ERR_BAD_DIMENSIONS, "A is [%llu, %llu] but B%s is [%llu, %llu]", (unsigned long long)m,
                             (unsigned long long)k, tb ? "^T" : "", (unsigned long long)bk, (unsigned long long)n);
    /* C broadcasts to [m, n]: per column only (a bias), else refused */
    const mlrt__gval *cv = c >= 0 ? VAL(c) : NULL;
    if (cv) {
        int64_t c0 = cv->rank == 2 ? cv->dims[0] : 1, c1 = cv->rank >= 1 ? cv->dims[cv->rank - 1] : 1;
        if (cv->rank > 2 || (c1 != 1 && (uint64_t)c1 != n) || (c0 != 1 && (uint64_t)c0 != m))
            return mlrt__bld_fail(b, MLRT_ERR_BAD_DIMENSIONS, "C does not broadcast to [%llu, %llu]", (unsigned long long)m,
                                 (unsigned long long)n);
    }
    bool per_row = cv && cv->rank == 2 && cv->dims[0] != 1 && m != 1; /* added after, as beta * C */
    if (per_row) cv = NULL;
    float *w = malloc(n * k * sizeof *w), *bias = cv ? malloc(n * sizeof *bias) : NULL;
    if (!w || (cv && !bias)) { free(w), free(bias); return OOM(); }
    const float *B = VAL(bw)->f;
    if (tb && alpha == 1.0f) memcpy(w, B, n * k * sizeof *w); /* PyTorch's Linear: B is already [n][k] */
    else
        for (uint64_t o = 0; o < n; o++)
            for (uint64_t i = 0; i < k; i++) w[o * k + i] = alpha * (tb ? B[o * k + i] : B[i * n + o]);
    for (uint64_t o = 0; cv && o < n; o++) bias[o] = beta * cv->f[cv->count == 1 ? 0 : o % cv->count];
    int64_t dims[2] = {(int64_t)m, (int64_t)n};
    TRY(dense_op(b, a, 2, dims, w, bias, (uint32_t)k));
    if (!per_row) return MLRT_OK;
    int32_t d = b->vmap[node(b)->out[0]];
    float *bc = malloc(m * n * sizeof *bc);
    if (!bc) return OOM();
    for (uint64_t i = 0; i < m * n; i++) bc[i] = beta * VAL(c)->f[VAL(c)->dims[1] == 1 ? i / n : i];
    int64_t cd[2] = {(int64_t)m, (int64_t)n};
    int32_t cc = mlrt__bld_const(b, 2, cd, bc, NULL), out = cc < 0 ? -1 : mlrt__bld_val(b, 2, dims);
    mlrt__gop *op = out < 0 ? NULL : mlrt__bld_op(b, MLRT__GOP_BINARY, out);
    if (!op) return OOM();
    op->in[0] = d, op->in[1] = cc, op->n_in = 2, op->sub = MLRT__BIN_ADD;
    return mlrt__bld_finish(b, op);
}

mlrt_status mlrt__op_matmul(bld *b) {
    TRY(mlrt__bld_arity(b, 2, 2));
    int32_t a = mlrt__bld_in(b, 0), bw = mlrt__bld_in(b, 1);
    TRY(computed(b, a, 0, 1, MLRT__MAX_RANK));
    if (VAL(a)->is_const || !VAL(bw)->is_const || VAL(bw)->rank != 2)
        return mlrt__bld_fail(b, MLRT_ERR_UNSUPPORTED, "mlrt runs MatMul of a computed A by a constant 2-D B");
    TRY(const_float_of(b, bw, 1, "B", true));
    const mlrt__gval *av = VAL(a), *bv = VAL(bw);
    uint64_t k = (uint64_t)bv->dims[0], n = (uint64_t)bv->dims[1];
    if ((uint64_t)av->dims[av->rank - 1] != k || !n || n > MLRT__MAX_DIM || k > MLRT__MAX_DIM)
        return mlrt__bld_fail(b, MLRT_ERR_BAD_DIMENSIONS, "A's last dim is %lld but B is [%llu, %llu]",
                             (long long)av->dims[av->rank - 1], (unsigned long long)k, (unsigned long long)n);
    float *w = malloc(n * k * sizeof *w);
    if (!w) return OOM();
    for (uint64_t o = 0; o < n; o++)
        for (uint64_t i = 0; i < k; i++) w[o * k + i] = bv->f[i * n + o];
    int64_t dims[MLRT__MAX_RANK];
    memcpy(dims, av->dims, sizeof dims);
    dims[av->rank - 1] = (int64_t)n;
    return dense_op(b, a, av->rank, dims, w, NULL, (uint32_t)k);
}

/* ------------------------------------------------------------------ Conv and pooling */

typedef struct geom { int64_t k[2], s[2], d[2], pb[2], pe[2], out[2]; } geom;

/* Output sizes and pads for the spatial axes (1 or 2; a 1-D op is planned as height 1). */
static mlrt_status spatial(bld *b, const int64_t *in, uint32_t ns, const int64_t *kernel, bool ceil_mode, geom *g) {
    const int64_t *s, *d, *p;
    const mlrt__onnx_attr *ap;
    TRY(mlrt__bld_ints(b, "strides", ns, &s, NULL));
    TRY(mlrt__bld_ints(b, "dilations", ns, &d, NULL));
    TRY(mlrt__bld_ints(b, "pads", 2 * ns, &p, NULL));
    TRY(mlrt__bld_attr(b, "auto_pad", MLRT__ATTR_STRING, &ap));
    mlrt__str mode = ap ? ap->s : (mlrt__str){"NOTSET", 6};
    bool same = mlrt__str_eq(mode, "SAME_UPPER") || mlrt__str_eq(mode, "SAME_LOWER"), valid = mlrt__str_eq(mode, "VALID");
    if (!same && !valid && !mlrt__str_eq(mode, "NOTSET"))
        return mlrt__bld_fail(b, MLRT_ERR_BAD_HEADER, "auto_pad '%.*s' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID",
                             (int)mode.n, mode.p);
    for (uint32_t a = 0; a < 2; a++) g->k[a] = 1, g->s[a] = 1, g->d[a] = 1, g->pb[a] = g->pe[a] = 0, g->out[a] = 1;
    for (uint32_t i = 0; i < ns; i++) {
        uint32_t a = i + 2 - ns; /* 1-D: the width */
        g->k[a] = kernel[i], g->s[a] = s ? s[i] : 1, g->d[a] = d ? d[i] : 1;
        g->pb[a] = p && !same && !valid ? p[i] : 0, g->pe[a] = p && !same && !valid ? p[i + ns] : 0;
        if (g->k[a] < 1 || g->s[a] < 1 || g->d[a] < 1 || g->k[a] > 65536 || g->s[a] > 65536 || g->d[a] > 65536 ||
            g->pb[a] < 0 || g->pe[a] < 0 || g->pb[a] > 65536 || g->pe[a] > 65536)
            return mlrt__bld_fail(b, MLRT_ERR_BAD_DIMENSIONS, "kernel %lld, stride %lld, dilation %lld, pads %lld/%lld on "
                                 "axis %u: each must be positive (pads >= 0) and at most 65536", (long long)g->k[a],
                                 (long long)g->s[a], (long long)g->d[a], (long long)g->pb[a], (long long)g->pe[a], i);
        int64_t ke = (g->k[a] - 1) * g->d[a] + 1, n = in[i];
        if (same) {
            g->out[a] = (n + g->s[a] - 1) / g->s[a];
            int64_t total = (g->out[a] - 1) * g->s[a] + ke - n;
            if (total < 0) total = 0;
            g->pb[a] = mlrt__str_eq(mode, "SAME_UPPER") ? total / 2 : total - total / 2;
            g->pe[a] = total - g->pb[a];
        } else {
            int64_t span = n + g->pb[a] + g->pe[a] - ke;
            if (span < 0)
                return mlrt__bld_fail(b, MLRT_ERR_BAD_DIMENSIONS, "the kernel (%lld with dilation) is larger than the "
                                     "padded input (%lld) on axis %u", (long long)ke, (long long)(n + g->pb[a] + g->pe[a]), i);
            g->out[a] = (ceil_mode ? (span + g->s[a] - 1) / g->s[a] : span / g->s[a]) + 1;
            if (ceil_mode && (g->out[a] - 1) * g->s[a] >= n + g->pb[a]) g->out[a]--; /* windows start inside */
        }
    }
    return MLRT_OK;
}

static void set_geom(mlrt__gop *op, const mlrt__gval *x, const geom *g) {
    op->c = (uint32_t)x->dims[1];
    op->h = x->rank == 4 ? (uint32_t)x->dims[2] : 1;
    op->w = (uint32_t)x->dims[x->rank - 1];
    op->oh = (uint32_t)g->out[0], op->ow = (uint32_t)g->out[1];
    op->kh = (uint32_t)g->k[0], op->kw = (uint32_t)g->k[1], op->sh = (uint32_t)g->s[0], op->sw = (uint32_t)g->s[1];
    op->dh = (uint32_t)g->d[0], op->dw = (uint32_t)g->d[1];
    op->pt = (int32_t)g->pb[0], op->pl = (int32_t)g->pb[1], op->pb = (int32_t)g->pe[0], op->pr = (int32_t)g->pe[1];
}

mlrt_status mlrt__op_conv(bld *b) {
    TRY(mlrt__bld_arity(b, 2, 3));
    int32_t x = mlrt__bld_in(b, 0), wv = mlrt__bld_in(b, 1), bv = mlrt__bld_in(b, 2);
    TRY(computed(b, x, 0, 3, 4));
    TRY(const_float(b, wv, 1, "the weight W"));
    TRY(const_float(b, bv, 2, "the bias B"));
    const mlrt__gval *xv = VAL(x), *w = VAL(wv);
    uint32_t ns = xv->rank - 2;
    int64_t group;
    const int64_t *ks;
    TRY(mlrt__bld_int(b, "group", 1, &group));
    TRY(mlrt__bld_ints(b, "kernel_shape", ns, &ks, NULL));
    int64_t c = xv->dims[1], m = w->dims[0];
    if (w->rank != xv->rank || group < 1 || c % group || m % group || w->dims[1] != c / group || m < 1)
        return mlrt__bld_fail(b, MLRT_ERR_BAD_DIMENSIONS, "W (rank %u, %lld outputs, %lld channels each) does not fit "
                             "%lld input channels in %lld groups", w->rank, (long long)m,
                             (long long)(w->rank > 1 ? w->dims[1] : 0), (long long)c, (long long)group);
    for (uint32_t i = 0; ks && i < ns; i++)
        if (ks[i] != w->dims[2 + i]) return mlrt__bld_fail(b, MLRT_ERR_BAD_DIMENSIONS, "kernel_shape disagrees with W");
    if (bv >= 0 && (VAL(bv)->rank != 1 || VAL(bv)->dims[0] != m))
        return mlrt__bld_fail(b, MLRT_ERR_BAD_DIMENSIONS, "B is not [%lld]", (long long)m);
    geom g;
    TRY(spatial(b, xv->dims + 2, ns, w->dims + 2, false, &g));
    uint64_t kin = (uint64_t)(c / group) * (uint64_t)(g.k[0] * g.k[1]);
    if (kin > MLRT__MAX_DIM || m > MLRT__MAX_DIM) return mlrt__bld_fail(b, MLRT_ERR_BAD_DIMENSIONS, "the kernel is too large");
    int64_t dims[4] = {xv->dims[0], m, g.out[0], g.out[1]};
    if (ns == 1) dims[2] = g.out[1];
    float *wc = malloc((size_t)(m * kin) * sizeof *wc + 4), *bc = bv >= 0 ? malloc((size_t)m * sizeof *bc) : NULL;
    if (!wc || (bv >= 0 && !bc)) { free(wc), free(bc); return OOM(); }
    memcpy(wc, w->f, (size_t)(m * kin) * sizeof *wc); /* [m][c/group][kh][kw] is [m][kin] */
    if (bc) memcpy(bc, VAL(bv)->f, (size_t)m * sizeof *bc);
    int32_t out = mlrt__bld_val(b, xv->rank, dims);
    mlrt__gop *op = out < 0 ? NULL : mlrt__bld_op(b, MLRT__GOP_CONV, out);
    if (!op) { free(wc), free(bc); return OOM(); }
    op->in[0] = x, op->n_in = 1;
    set_geom(op, VAL(x), &g);
    op->oc = (uint32_t)m, op->groups = (uint32_t)group, op->k_in = (uint32_t)kin;
    op->depthwise = group > 1 && group == c && kin == (uint64_t)(g.k[0] * g.k[1]);
    op->wsrc = wc, op->bsrc = bc;
    return mlrt__bld_finish(b, op);
}

mlrt_status mlrt__op_pool(bld *b) {
    const mlrt__onnx_node *nd = node(b);
    bool global = mlrt__str_eq(nd->op, "GlobalAveragePool"), max = mlrt__str_eq(nd->op, "MaxPool");
    TRY(mlrt__bld_arity(b, 1, 1));
    int32_t x = mlrt__bld_in(b, 0);
    TRY(computed(b, x, 0, 3, 4));
    const mlrt__gval *xv = VAL(x);
    uint32_t ns = xv->rank - 2;
    geom g;
    if (global) {
        int64_t k[2] = {xv->dims[2], ns == 2 ? xv->dims[3] : 1};
        for (uint32_t a = 0; a < 2; a++) g.k[a] = a + ns >= 2 ? k[a + ns - 2] : 1, g.s[a] = g.d[a] = g.out[a] = 1, g.pb[a] = g.pe[a] = 0;
    } else {
        const int64_t *ks;
        int64_t ceil_mode, order;
        TRY(mlrt__bld_ints(b, "kernel_shape", ns, &ks, NULL));
        if (!ks) return mlrt__bld_fail(b, MLRT_ERR_BAD_HEADER, "attribute 'kernel_shape' is required");
        TRY(mlrt__bld_int(b, "ceil_mode", 0, &ceil_mode));
        TRY(mlrt__bld_int(b, "storage_order", 0, &order));
        TRY(spatial(b, xv->dims + 2, ns, ks, ceil_mode != 0, &g));
    }
    int64_t cip = 0;
    TRY(mlrt__bld_int(b, "count_include_pad", 0, &cip));
    int64_t dims[4] = {xv->dims[0], xv->dims[1], g.out[0], g.out[1]};
    if (ns == 1) dims[2] = g.out[1];
    int32_t out = mlrt__bld_val(b, xv->rank, dims);
    mlrt__gop *op = out < 0 ? NULL : mlrt__bld_op(b, global ? MLRT__GOP_GLOBALAVG : max ? MLRT__GOP_MAXPOOL : MLRT__GOP_AVGPOOL, out);
    if (!op) return OOM();
    op->in[0] = x, op->n_in = 1;
    set_geom(op, VAL(x), &g);
    op->oc = op->c;
    op->count_pad = cip != 0;
    return mlrt__bld_finish(b, op);
}

/* ------------------------------------------------------------------ elementwise */

static mlrt_status int_binary(bld *b, mlrt__bin_kind kind, int32_t a, int32_t c) {
    const mlrt__gval *av = VAL(a), *cv = VAL(c);
    if (!av->is_const || !cv->is_const || !av->is_int || !cv->is_int || av->rank > 1 || cv->rank > 1 ||
        (av->count != cv->count && av->count != 1 && cv->count != 1))
        return mlrt__bld_fail(b, MLRT_ERR_UNSUPPORTED, "mlrt computes int64 arithmetic only on constant vectors");
    uint64_t n = av->count > cv->count ? av->count : cv->count;
    int64_t *r = malloc(n * sizeof *r + 8);
    if (!r) return OOM();
    for (uint64_t k = 0; k < n; k++) {
        int64_t x = av->i[av->count == 1 ? 0 : k], y = cv->i[cv->count == 1 ? 0 : k];
        if (x == MLRT__BATCH_SYM || y == MLRT__BATCH_SYM) { /* (only in batch mode) */
            free(r);
            return mlrt__bld_rows_apart(b, false, "it computes with the batch size");
        }
        if (kind == MLRT__BIN_DIV && y == 0) {
            free(r);
            return mlrt__bld_fail(b, MLRT_ERR_UNSUPPORTED, "an int64 division by zero");
        }
        r[k] = kind == MLRT__BIN_ADD ? x + y : kind == MLRT__BIN_SUB ? x - y : kind == MLRT__BIN_MUL ? x * y : x / y;
    }
    int64_t dims[1] = {(int64_t)n};
    int32_t v = mlrt__bld_const(b, av->rank > cv->rank ? av->rank : cv->rank, dims, NULL, r);
    if (v < 0) return OOM();
    mlrt__bld_set_out(b, v);
    return MLRT_OK;
}

mlrt_status mlrt__op_binary(bld *b) {
    TRY(mlrt__bld_arity(b, 2, 2));
    mlrt__str op_name = node(b)->op;
    mlrt__bin_kind kind = mlrt__str_eq(op_name, "Add") ? MLRT__BIN_ADD : mlrt__str_eq(op_name, "Sub") ? MLRT__BIN_SUB
                       : mlrt__str_eq(op_name, "Mul") ? MLRT__BIN_MUL : MLRT__BIN_DIV;
    int32_t a = mlrt__bld_in(b, 0), c = mlrt__bld_in(b, 1);
    if (VAL(a)->is_int || VAL(c)->is_int) return int_binary(b, kind, a, c);
    /* MatMul + Add of a bias over the last axis: the dense op's bias */
    for (uint32_t k = 0; kind == MLRT__BIN_ADD && k < 2; k++) {
        mlrt__gop *p = fusable(b, k);
        const mlrt__gval *bias = VAL(k ? a : c);
        if (!p || p->kind != MLRT__GOP_DENSE || p->bsrc || !bias->is_const || bias->count != p->oc ||
            bias->rank > VAL(p->out)->rank || (bias->rank && bias->dims[bias->rank - 1] != (int64_t)p->oc))
            continue;
        TRY(const_float(b, k ? a : c, k ? 0 : 1, "the bias"));
        if (!(p->bsrc = malloc(p->oc * sizeof(float)))) return OOM();
        memcpy(p->bsrc, bias->f, p->oc * sizeof(float));
        mlrt__bld_set_out(b, p->out);
        return MLRT_OK;
    }
    const mlrt__gval *av = VAL(a), *cv = VAL(c);
    uint32_t r = av->rank > cv->rank ? av->rank : cv->rank;
    int64_t dims[MLRT__MAX_RANK];
    for (uint32_t d = 0; d < r; d++) {
        int64_t x = d + av->rank >= r ? av->dims[d + av->rank - r] : 1, y = d + cv->rank >= r ? cv->dims[d + cv->rank - r] : 1;
        if (x != y && x != 1 && y != 1)
            return mlrt__bld_fail(b, MLRT_ERR_BAD_DIMENSIONS, "shapes do not broadcast: %lld and %lld on axis %u",
                                 (long long)x, (long long)y, d);
        dims[d] = x == 1 ? y : x;
    }
    for (uint32_t k = 0; k < 2; k++) {
        const mlrt__gval *v = k ? cv : av;
        if (!v->is_const) TRY(mlrt__bld_rows_apart(b, v->rank == r && dims[0] == 1, "a constant broadcasts over the batch axis"));
        else TRY(const_float(b, k ? c : a, k, "a constant operand"));
    }
    int32_t out = mlrt__bld_val(b, r, dims);
    mlrt__gop *op = out < 0 ? NULL : mlrt__bld_op(b, MLRT__GOP_BINARY, out);
    if (!op) return OOM();
    op->in[0] = a, op->in[1] = c, op->n_in = 2, op->sub = kind;
    return mlrt__bld_finish(b, op);
}

mlrt_status mlrt__op_unary(bld *b) {
    mlrt__str name = node(b)->op;
    bool clip = mlrt__str_eq(name, "Clip");
    TRY(mlrt__bld_arity(b, 1, clip ? 3 : 1));
    int32_t x = mlrt__bld_in(b, 0);
    TRY(computed(b, x, 0, 0, MLRT__MAX_RANK));
    mlrt__un_kind kind = mlrt__str_eq(name, "Relu") ? MLRT__UN_RELU : mlrt__str_eq(name, "LeakyRelu") ? MLRT__UN_LEAKY
                      : mlrt__str_eq(name, "Sigmoid") ? MLRT__UN_SIGMOID : mlrt__str_eq(name, "Tanh") ? MLRT__UN_TANH : MLRT__UN_CLIP;
    float alpha = 0.01f, lo = -INFINITY, hi = INFINITY;
    if (kind == MLRT__UN_LEAKY) TRY(mlrt__bld_float(b, "alpha", 0.01f, &alpha));
    if (clip && b->g->opset < 11) {
        TRY(mlrt__bld_float(b, "min", -INFINITY, &lo));
        TRY(mlrt__bld_float(b, "max", INFINITY, &hi));
    } else if (clip) {
        TRY(mlrt__bld_const_scalar(b, 1, -INFINITY, &lo));
        TRY(mlrt__bld_const_scalar(b, 2, INFINITY, &hi));
    }
    if (isnan(lo) || isnan(hi) || isnan(alpha)) return mlrt__bld_fail(b, MLRT_ERR_NON_FINITE, "a bound or alpha is NaN");
    mlrt_activation act = kind == MLRT__UN_RELU ? MLRT_ACT_RELU : kind == MLRT__UN_SIGMOID ? MLRT_ACT_SIGMOID
                        : kind == MLRT__UN_TANH ? MLRT_ACT_TANH : kind == MLRT__UN_LEAKY && alpha == 0.01f ? MLRT_ACT_LEAKY_RELU
                        : MLRT_ACT_IDENTITY;
    mlrt__gop *p = act != MLRT_ACT_IDENTITY ? fusable(b, 0) : NULL;
    if (p) {
        p->act = act;
        mlrt__bld_set_out(b, p->out);
        return MLRT_OK;
    }
    int32_t out = mlrt__bld_val(b, VAL(x)->rank, VAL(x)->dims);
    mlrt__gop *op = out < 0 ? NULL : mlrt__bld_op(b, MLRT__GOP_UNARY, out);
    if (!op) return OOM();
    op->in[0] = x, op->n_in = 1, op->sub = kind, op->alpha = alpha, op->lo = lo, op->hi = hi;
    return mlrt__bld_finish(b, op);
}

mlrt_status mlrt__op_softmax(bld *b) {
    TRY(mlrt__bld_arity(b, 1, 1));
    int32_t x = mlrt__bld_in(b, 0);
    TRY(computed(b, x, 0, 1, MLRT__MAX_RANK));
    const mlrt__gval *xv = VAL(x);
    bool old = b->g->opset < 13;
    int64_t axis;
    uint32_t ax;
    TRY(mlrt__bld_int(b, "axis", old ? 1 : -1, &axis));
    TRY(mlrt__bld_axis(b, axis, xv->rank, &ax));
    TRY(mlrt__bld_rows_apart(b, ax > 0, "it normalises over axis 0"));
    bool log = mlrt__str_eq(node(b)->op, "LogSoftmax");
    mlrt__gop *p = log || ax + 1 != xv->rank ? NULL : fusable(b, 0);
    if (p && p->kind == MLRT__GOP_DENSE && (uint64_t)xv->dims[ax] == p->oc) { /* over a dense op's outputs */
        p->act = MLRT_ACT_SOFTMAX;
        mlrt__bld_set_out(b, p->out);
        return MLRT_OK;
    }
    int32_t out = mlrt__bld_val(b, xv->rank, xv->dims);
    mlrt__gop *op = out < 0 ? NULL : mlrt__bld_op(b, MLRT__GOP_SOFTMAX, out);
    if (!op) return OOM();
    xv = VAL(x);
    op->in[0] = x, op->n_in = 1, op->sub = mlrt__str_eq(node(b)->op, "LogSoftmax");
    op->outer = mlrt__dims_prod(xv->dims, 0, ax);
    op->axis_n = (uint32_t)(old ? mlrt__dims_prod(xv->dims, ax, xv->rank) : (uint64_t)xv->dims[ax]);
    op->inner = old ? 1 : mlrt__dims_prod(xv->dims, ax + 1, xv->rank);
    return mlrt__bld_finish(b, op);
}

mlrt_status mlrt__op_batchnorm(bld *b) {
    TRY(mlrt__bld_arity(b, 5, 5));
    int32_t x = mlrt__bld_in(b, 0);
    TRY(computed(b, x, 0, 2, MLRT__MAX_RANK));
    int64_t training;
    float eps;
    TRY(mlrt__bld_int(b, "training_mode", 0, &training));
    TRY(mlrt__bld_float(b, "epsilon", 1e-5f, &eps));
    if (training) return mlrt__bld_fail(b, MLRT_ERR_UNSUPPORTED, "training_mode = 1; mlrt runs inference");
    int64_t c = VAL(x)->dims[1];
    const char *names[4] = {"scale", "B", "mean", "var"};
    for (uint32_t k = 1; k < 5; k++) {
        int32_t v = mlrt__bld_in(b, k);
        TRY(const_float(b, v, k, names[k - 1]));
        if (VAL(v)->count != (uint64_t)c || VAL(v)->rank != 1)
            return mlrt__bld_fail(b, MLRT_ERR_BAD_DIMENSIONS, "%s is not [%lld]", names[k - 1], (long long)c);
    }
    const float *sc = VAL(mlrt__bld_in(b, 1))->f, *bi = VAL(mlrt__bld_in(b, 2))->f, *mu = VAL(mlrt__bld_in(b, 3))->f,
                *var = VAL(mlrt__bld_in(b, 4))->f;
    float *s = malloc((size_t)c * sizeof *s), *t = malloc((size_t)c * sizeof *t);
    if (!s || !t) { free(s), free(t); return OOM(); }
    for (int64_t k = 0; k < c; k++) {
        if (var[k] + eps <= 0.0f) { free(s), free(t); return mlrt__bld_fail(b, MLRT_ERR_NON_FINITE, "var + epsilon <= 0 at channel %lld", (long long)k); }
        s[k] = sc[k] / sqrtf(var[k] + eps);
        t[k] = bi[k] - mu[k] * s[k];
    }
    mlrt__gop *p = fusable(b, 0);
    if (p && (p->kind == MLRT__GOP_CONV || VAL(p->out)->rank == 2)) { /* fold into the weights */
        if (!p->bsrc && !(p->bsrc = calloc(p->oc, sizeof(float)))) { free(s), free(t); return OOM(); }
        for (uint32_t o = 0; o < p->oc; o++) {
            for (uint32_t i = 0; i < p->k_in; i++) p->wsrc[(size_t)o * p->k_in + i] *= s[o];
            p->bsrc[o] = p->bsrc[o] * s[o] + t[o];
        }
        free(s), free(t);
        mlrt__bld_set_out(b, p->out);
        return MLRT_OK;
    }
    int32_t out = mlrt__bld_val(b, VAL(x)->rank, VAL(x)->dims);
    mlrt__gop *op = out < 0 ? NULL : mlrt__bld_op(b, MLRT__GOP_AFFINE, out);
    if (!op) { free(s), free(t); return OOM(); }
    const mlrt__gval *xv = VAL(x);
    op->in[0] = x, op->n_in = 1, op->wdw = s, op->bdw = t;
    op->outer = (uint64_t)xv->dims[0], op->c = (uint32_t)c, op->inner = mlrt__dims_prod(xv->dims, 2, xv->rank);
    return mlrt__bld_finish(b, op);
}
