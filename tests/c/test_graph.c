/* test_graph.c — the graph family apart from ONNX: the kernels it runs (erf, GELU and exp against
 * double precision over dense sweeps, LayerNorm, broadcasting), the one implementation of
 * activations, the op table, a graph built in C with no file format at all, the graphs of several
 * inputs and outputs, int64 inputs and a varying sequence length that tests/gen/onnx_graphs.py made
 * with onnx and numpy (tests/onnx/graphs), and a file whose activations are huge loading in time
 * proportional to the file. */
#include "builders.h"
#include "model/graph.h"
#include <time.h>

/* ------------------------------------------------------------------ kernels */

/* Distance in ulps between two floats (as integers ordered like the floats). */
static int64_t ulps(float a, float b) {
    int32_t ia, ib;
    memcpy(&ia, &a, 4), memcpy(&ib, &b, 4);
    int64_t x = ia < 0 ? (int64_t)INT32_MIN - ia : ia, y = ib < 0 ? (int64_t)INT32_MIN - ib : ib;
    return x > y ? x - y : y - x;
}

static double ref_gelu(double x) { return 0.5 * x * erfc(-x / sqrt(2.0)); }
static double ref_gelu_tanh(double x) { /* x (1 + tanh u) / 2 = x / (1 + e^-2u), no cancellation */
    return x / (1.0 + exp(-2.0 * sqrt(2.0 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)));
}

/* f against the double reference rounded to float at every float in [lo, hi] whose bits are a multiple
 * of step apart; returns the worst ulp distance. */
static int64_t sweep(float (*f)(float), double (*ref)(double), float lo, float hi, uint32_t step, float *worst_at) {
    int64_t worst = 0;
    for (int sign = 0; sign < 2; sign++) {
        float a = sign ? (hi > 0 ? 0.0f : -hi) : (lo < 0 ? 0.0f : lo), b = sign ? (lo < 0 ? -lo : 0.0f) : hi;
        uint32_t ua, ub;
        memcpy(&ua, &a, 4), memcpy(&ub, &b, 4);
        for (uint64_t u = ua; u <= ub; u += step) {
            uint32_t bits = (uint32_t)u | (sign ? 0x80000000u : 0);
            float x;
            memcpy(&x, &bits, 4);
            int64_t d = ulps(f(x), (float)ref(x));
            if (d > worst) worst = d, *worst_at = x;
        }
    }
    return worst;
}

static double ref_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

static void test_graph_math_within_an_ulp(void) {
    float at = 0;
    int64_t w = sweep(mlrt__erff, erf, -6.0f, 6.0f, 97, &at);
    CHECK_MSG(w <= 1, "erf: %lld ulps at %a", (long long)w, (double)at);
    w = sweep(mlrt__gelu, ref_gelu, -14.5f, 12.0f, 97, &at);
    CHECK_MSG(w <= 1, "gelu: %lld ulps at %a", (long long)w, (double)at);
    w = sweep(mlrt__gelu_tanh, ref_gelu_tanh, -25.0f, 12.0f, 97, &at);
    CHECK_MSG(w <= 1, "gelu (tanh): %lld ulps at %a", (long long)w, (double)at);
    w = sweep(mlrt__expf, exp, -104.0f, 88.7f, 97, &at);
    CHECK_MSG(w <= 1, "exp: %lld ulps at %a", (long long)w, (double)at);
    w = sweep(mlrt__tanhf, tanh, -12.0f, 12.0f, 97, &at);
    CHECK_MSG(w <= 1, "tanh: %lld ulps at %a", (long long)w, (double)at);
    w = sweep(mlrt__sigmoidf, ref_sigmoid, -104.0f, 90.0f, 97, &at);
    CHECK_MSG(w <= 1, "sigmoid: %lld ulps at %a", (long long)w, (double)at);
    w = sweep(mlrt__logf, log, 0x1p-126f, 0x1p127f, 97, &at);
    CHECK_MSG(w <= 1, "log: %lld ulps at %a", (long long)w, (double)at);
    /* the edges: exact values, limits, NaN */
    CHECK_BITS(mlrt__tanhf(0.0f), 0.0f);
    CHECK_BITS(mlrt__tanhf(-0.0f), -0.0f);
    CHECK_BITS(mlrt__tanhf(1e-30f), 1e-30f);
    CHECK_BITS(mlrt__tanhf(INFINITY), 1.0f);
    CHECK_BITS(mlrt__tanhf(-INFINITY), -1.0f);
    CHECK_BITS(mlrt__sigmoidf(0.0f), 0.5f);
    CHECK_BITS(mlrt__sigmoidf(-INFINITY), 0.0f);
    CHECK_BITS(mlrt__sigmoidf(INFINITY), 1.0f);
    CHECK_BITS(mlrt__logf(1.0f), 0.0f);
    CHECK_BITS(mlrt__logf(0.0f), -INFINITY);
    CHECK_BITS(mlrt__logf(INFINITY), INFINITY);
    CHECK(isnan(mlrt__tanhf(NAN)) && isnan(mlrt__sigmoidf(NAN)) && isnan(mlrt__logf(NAN)) && isnan(mlrt__logf(-1.0f)));
    CHECK_BITS(mlrt__erff(0.0f), 0.0f);
    CHECK_BITS(mlrt__erff(-0.0f), -0.0f);
    CHECK_BITS(mlrt__erff(10.0f), 1.0f);
    CHECK_BITS(mlrt__erff(-INFINITY), -1.0f);
    CHECK(isnan(mlrt__erff(NAN)) && isnan(mlrt__gelu(NAN)) && isnan(mlrt__gelu_tanh(NAN)) && isnan(mlrt__expf(NAN)));
    CHECK_BITS(mlrt__gelu(0.0f), 0.0f);
    CHECK_BITS(mlrt__gelu(-INFINITY), -0.0f);
    CHECK_BITS(mlrt__gelu(INFINITY), INFINITY);
    CHECK_BITS(mlrt__gelu_tanh(-INFINITY), -0.0f);
    CHECK_BITS(mlrt__expf(0.0f), 1.0f);
    CHECK_BITS(mlrt__expf(89.0f), INFINITY);
    CHECK_BITS(mlrt__expf(-200.0f), 0.0f);
    CHECK_BITS(mlrt__expf(-INFINITY), 0.0f);
    CHECK_BITS(mlrt__gelu(1.0f), (float)0.8413447460685429); /* 0.5 (1 + erf(1 / sqrt 2)) */
}

/* One implementation: the dense layers' epilogue (mlrt_activation) and the graph's elementwise ops give
 * the same bits, and GELU is ours (not libm's erff). */
static void test_graph_one_activation_implementation(void) {
    enum { N = 257 };
    float x[N], y[N], z[N];
    for (int i = 0; i < N; i++) x[i] = (float)(i - 128) / 16.0f;
    static const struct { mlrt_activation act; mlrt__act_kind kind; } pairs[] = {
        {MLRT_ACT_RELU, MLRT__ACT_RELU}, {MLRT_ACT_SIGMOID, MLRT__ACT_SIGMOID}, {MLRT_ACT_TANH, MLRT__ACT_TANH},
        {MLRT_ACT_GELU, MLRT__ACT_GELU}, {MLRT_ACT_LEAKY_RELU, MLRT__ACT_LEAKY_RELU}, {MLRT_ACT_SILU, MLRT__ACT_SILU}};
    for (size_t p = 0; p < LEN(pairs); p++) {
        memcpy(y, x, sizeof x);
        mlrt__activate(pairs[p].act, y, N);
        mlrt__act a = {pairs[p].kind, 0.01f, 0, 0};
        mlrt__act_apply(&a, x, z, N);
        CHECK_MSG(memcmp(y, z, sizeof y) == 0, "%s: the dense epilogue and the graph op differ", mlrt_activation_name(pairs[p].act));
    }
    for (int i = 0; i < N; i++) CHECK_BITS(z[i], z[i]);
    memcpy(y, x, sizeof x);
    mlrt__activate(MLRT_ACT_GELU, y, N);
    for (int i = 0; i < N; i++) CHECK_BITS(y[i], mlrt__gelu(x[i]));
    mlrt__act clip = {MLRT__ACT_CLIP, 0, -1.0f, 2.0f}, erf_ = {MLRT__ACT_ERF, 0, 0, 0};
    mlrt__act_apply(&clip, x, y, N);
    mlrt__act_apply(&erf_, x, z, N);
    for (int i = 0; i < N; i++) {
        CHECK_BITS(y[i], x[i] < -1.0f ? -1.0f : x[i] > 2.0f ? 2.0f : x[i]);
        CHECK_BITS(z[i], mlrt__erff(x[i]));
    }
}

static void test_graph_layernorm_kernel(void) {
    /* rows of 4: mean 2.5, biased variance 1.25 */
    const float x[8] = {1, 2, 3, 4, -2, 0, 2, 4}, scale[4] = {1, 2, 1, 0.5f}, bias[4] = {0, 1, 0, -1};
    float y[8], mean[2], inv[2];
    mlrt__norm p = {2, 4, 1e-5f, scale, bias};
    mlrt__layernorm(&p, x, NULL, y, mean, inv);
    for (int r = 0; r < 2; r++) {
        double m = 0, v = 0;
        for (int i = 0; i < 4; i++) m += x[r * 4 + i] / 4.0;
        for (int i = 0; i < 4; i++) v += (x[r * 4 + i] - m) * (x[r * 4 + i] - m) / 4.0;
        CHECK_NEAR(mean[r], m, 1e-7);
        CHECK_NEAR(inv[r], 1 / sqrt(v + 1e-5), 1e-6);
        for (int i = 0; i < 4; i++) CHECK_NEAR(y[r * 4 + i], (x[r * 4 + i] - m) / sqrt(v + 1e-5) * scale[i] + bias[i], 1e-6);
    }
    /* the residual fused: the same bits as the sum first, in place too */
    const float a[8] = {0.5f, 1, 1.5f, 2, -1, 0, 1, 2}, b[8] = {0.5f, 1, 1.5f, 2, -1, 0, 1, 2};
    float y2[8], sum[8];
    for (int i = 0; i < 8; i++) sum[i] = a[i] + b[i];
    mlrt__layernorm(&p, a, b, y2, NULL, NULL);
    mlrt__layernorm(&p, sum, NULL, y, NULL, NULL);
    CHECK(memcmp(y, y2, sizeof y) == 0);
    memcpy(y2, a, sizeof a);
    mlrt__layernorm(&p, y2, b, y2, NULL, NULL);
    CHECK(memcmp(y, y2, sizeof y) == 0);
    /* a constant row: variance 0, the bias */
    const float c[4] = {3, 3, 3, 3};
    p.rows = 1;
    mlrt__layernorm(&p, c, NULL, y, NULL, NULL);
    for (int i = 0; i < 4; i++) CHECK_BITS(y[i], bias[i]);
}

static void test_graph_broadcast_kernels(void) {
    /* every pair of shapes from these, broadcast: against a plain loop over y's index */
    static const int64_t shapes[][3] = {{2, 3, 4}, {1, 3, 4}, {2, 1, 4}, {2, 3, 1}, {1, 1, 4}, {1, 1, 1}, {2, 1, 1}, {1, 3, 1}};
    float a[24], b[24], y[24];
    int64_t ia[24], ib[24], iy[24];
    for (int i = 0; i < 24; i++) a[i] = (float)i * 0.5f - 3, b[i] = (float)(i % 5) + 1, ia[i] = i - 7, ib[i] = i % 5 + 1;
    for (size_t s = 0; s < LEN(shapes); s++)
        for (size_t t = 0; t < LEN(shapes); t++)
            for (int k = 0; k < 4; k++) {
                int64_t yd[3];
                for (int d = 0; d < 3; d++) yd[d] = shapes[s][d] > shapes[t][d] ? shapes[s][d] : shapes[t][d];
                mlrt__binary((mlrt__bin_kind)k, a, shapes[s], b, shapes[t], y, yd, 3);
                mlrt__binary_i64((mlrt__bin_kind)k, ia, shapes[s], ib, shapes[t], iy, yd, 3);
                for (int64_t i = 0; i < yd[0] * yd[1] * yd[2]; i++) {
                    int64_t c[3] = {i / (yd[1] * yd[2]), i / yd[2] % yd[1], i % yd[2]}, oa = 0, ob = 0;
                    for (int d = 0; d < 3; d++) {
                        oa = oa * shapes[s][d] + (shapes[s][d] == 1 ? 0 : c[d]);
                        ob = ob * shapes[t][d] + (shapes[t][d] == 1 ? 0 : c[d]);
                    }
                    float want = k == 0 ? a[oa] + b[ob] : k == 1 ? a[oa] - b[ob] : k == 2 ? a[oa] * b[ob] : a[oa] / b[ob];
                    int64_t iwant = k == 0 ? ia[oa] + ib[ob] : k == 1 ? ia[oa] - ib[ob] : k == 2 ? ia[oa] * ib[ob] : ia[oa] / ib[ob];
                    CHECK_BITS(y[i], want);
                    CHECK_INT(iy[i], iwant);
                }
            }
    /* gather: rows of a [3][2] table by indices, negative from the end, and out of range */
    const float tab[6] = {1, 2, 3, 4, 5, 6};
    const int64_t idx[4] = {2, 0, -1, 1}, bad[2] = {0, 3};
    float g[8];
    CHECK_INT(mlrt__gather(tab, 1, 3, 2, 4, idx, 4, g), -1);
    const float gw[8] = {5, 6, 1, 2, 5, 6, 3, 4};
    CHECK(memcmp(g, gw, sizeof g) == 0);
    CHECK_INT(mlrt__gather(tab, 1, 3, 2, 4, bad, 2, g), 1);
    int64_t cast[3];
    const float cf[3] = {1.9f, -2.5f, NAN};
    CHECK_INT(mlrt__cast_f32_i64(cf, cast, 2), -1);
    CHECK(cast[0] == 1 && cast[1] == -2);
    CHECK_INT(mlrt__cast_f32_i64(cf, cast, 3), 2);
}

/* ------------------------------------------------------------------ the op table */

static void test_graph_op_table_rows(void) {
    for (int k = 0; k < MLRT__OP_KIND_COUNT_; k++) {
        const mlrt__op_def *d = mlrt__op_table[k];
        CHECK_MSG(d != NULL, "kind %d has no row", k);
        if (!d) continue;
        CHECK_MSG(d->name && d->name[0], "kind %d: no name", k);
        CHECK_MSG(d->n_out >= 1 && d->min_in >= 1 && d->min_in <= d->max_in, "%s: its counts", d->name);
        /* every row plans (import/shape or plan) and computes what it emits */
        CHECK_MSG(d->import || d->plan, "%s: neither import nor plan", d->name);
        bool view = d->plan == mlrt__plan_view;
        CHECK_MSG(view || k == MLRT__OP_SHAPE || d->run, "%s: emits ops but runs none", d->name);
        CHECK_MSG(!d->run || d->cost, "%s: runs without a cost", d->name);
    }
    CHECK(mlrt__op_table[MLRT__OP_ADD] == mlrt__op_table[MLRT__OP_DIV]); /* one row for the four */
}

/* A graph built here, with no file format: y = LayerNorm(relu(x W + b)) over [batch, 4] (the bias and
 * the Relu fused into the MatMul), and z = erf(x) as a second output. */
static void test_graph_built_without_a_format(void) {
    static char names[] = "x\0y\0z\0h\0r\0s\0W\0b\0g";
    mlrt__ir_graph ir;
    memset(&ir, 0, sizeof ir);
    ir.format = "test";
    ir.n_vals = 9, ir.n_ops = 5, ir.n_inputs = 1, ir.n_outputs = 2, ir.n_syms = 1;
    ir.vals = calloc(ir.n_vals, sizeof *ir.vals);
    ir.ops = calloc(ir.n_ops, sizeof *ir.ops);
    ir.inputs = malloc(sizeof *ir.inputs), ir.outputs = malloc(2 * sizeof *ir.outputs);
    ir.syms = malloc(sizeof *ir.syms);
    ir.ids = malloc(16 * sizeof *ir.ids);
    ir.strings = malloc(sizeof names);
    memcpy(ir.strings, names, sizeof names);
    ir.syms[0] = "n";
    for (uint32_t k = 0; k < ir.n_vals; k++) ir.vals[k].name = ir.strings + 2 * k, ir.vals[k].rank = -1, ir.vals[k].dtype = MLRT_DTYPE_COUNT_;
    ir.vals[0] = (mlrt__ir_value){ir.strings, MLRT_F32, 2, {MLRT__IR_SYM(0), 4}, false, 0, NULL};
    float *w = malloc(16 * 4), *bias = malloc(16), *g = malloc(16);
    for (int i = 0; i < 16; i++) w[i] = (float)((i * 7) % 5 - 2) / 4.0f;
    for (int i = 0; i < 4; i++) bias[i] = 0.25f * (float)i, g[i] = 1.0f + 0.5f * (float)i;
    ir.vals[6] = (mlrt__ir_value){ir.strings + 12, MLRT_F32, 2, {4, 4}, true, 16, w};
    ir.vals[7] = (mlrt__ir_value){ir.strings + 14, MLRT_F32, 1, {4}, true, 4, bias};
    ir.vals[8] = (mlrt__ir_value){ir.strings + 16, MLRT_F32, 1, {4}, true, 4, g};
    int32_t *id = ir.ids;
    static const struct { mlrt__op_kind k; int32_t in[3]; uint32_t n_in; int32_t out; } ops[] = {
        {MLRT__OP_MATMUL, {0, 6}, 2, 3}, {MLRT__OP_ADD, {3, 7}, 2, 4}, {MLRT__OP_ACT, {4}, 1, 5},
        {MLRT__OP_LAYERNORM, {5, 8}, 2, 1}, {MLRT__OP_ACT, {0}, 1, 2}};
    for (uint32_t k = 0; k < ir.n_ops; k++) {
        mlrt__ir_op *op = &ir.ops[k];
        op->kind = ops[k].k, op->n_in = ops[k].n_in, op->n_out = 1, op->node = k, op->type = "op", op->name = "";
        op->in = id, memcpy(id, ops[k].in, ops[k].n_in * 4), id += ops[k].n_in;
        op->out = id, *id++ = ops[k].out;
    }
    ir.ops[2].p.act.fn = MLRT__FN_RELU;
    ir.ops[3].p.norm = (mlrt__ir_norm){-1, 1e-5f};
    ir.ops[4].p.act.fn = MLRT__FN_ERF;
    ir.inputs[0] = 0, ir.outputs[0] = 1, ir.outputs[1] = 2;
    mlrt_error e;
    mlrt_model *m = keep_model(mlrt__build_graph(&ir, MLRT_FORMAT_ONNX, &e));
    CHECK_MSG(m != NULL, "%s", e.message);
    CHECK(ir.vals == NULL); /* taken */
    if (!m) return;
    CHECK_CONTAINS(mlrt_model_info_json(m), "\"ops\":3,"); /* MatMul + bias + Relu, LayerNorm, Erf */
    CHECK_CONTAINS(mlrt_model_info_json(m), "\"outputs\":[{\"name\":\"y\",\"dtype\":\"F32\",\"shape\":[\"batch\",4]}");
    CHECK_INT(mlrt_input_size(m), 0); /* two outputs: named inputs only */
    float x[8] = {1, -2, 0.5f, 3, 0, 1, -1, 2};
    mlrt_tensor in = {"x", MLRT_F32, 2, {2, 4}, x};
    CHECK_INT(mlrt_run(m, &in, 1, &e), MLRT_OK);
    const mlrt_tensor *y = mlrt_output(m, 0), *z = mlrt_output(m, 1);
    CHECK(y->rank == 2 && y->dims[0] == 2 && y->dims[1] == 4 && z->dims[0] == 2);
    for (int r = 0; r < 2; r++) {
        double s[4], mu = 0, v = 0;
        for (int o = 0; o < 4; o++) {
            double h = 0.25 * o;
            for (int i = 0; i < 4; i++) h += x[r * 4 + i] * (double)((float)(((i * 4 + o) * 7) % 5 - 2) / 4.0f);
            s[o] = h > 0 ? h : 0;
            mu += s[o] / 4;
        }
        for (int o = 0; o < 4; o++) v += (s[o] - mu) * (s[o] - mu) / 4;
        for (int o = 0; o < 4; o++) {
            CHECK_NEAR(((const float *)y->data)[r * 4 + o], (s[o] - mu) / sqrt(v + 1e-5) * (1 + 0.5 * o), 1e-5);
            CHECK_BITS(((const float *)z->data)[r * 4 + o], mlrt__erff(x[r * 4 + o]));
        }
    }
}

/* ------------------------------------------------------------------ the generated graphs */

static const char *const GRAPHS = "tests/onnx/graphs/";

/* tests/onnx/graphs/FILE's bytes (n 0 when missing) */
static bytes graph_file(const char *file) {
    char p[256];
    snprintf(p, sizeof p, "%s%s", GRAPHS, file);
    return read_file_or_empty(p);
}

static int64_t jnum(const mlrt__json *v) {
    uint64_t u;
    return mlrt__json_u64(v, &u) ? (int64_t)u : -1;
}

static void check_outputs(mlrt_model *m, const mlrt__json *outs, const char *what) {
    for (size_t k = 0; k < outs->count; k++) {
        const mlrt__json *o = jitem(outs, k);
        const mlrt_tensor *y = mlrt_output(m, k);
        bytes want = graph_file(jstr(o, "file"));
        CHECK_STR(y->name, jstr(o, "name"));
        bool i64 = strcmp(jstr(o, "dtype"), "I64") == 0;
        CHECK_INT(y->dtype, i64 ? MLRT_I64 : MLRT_F32);
        const mlrt__json *dims = mlrt__json_get(o, "dims");
        CHECK_INT(y->rank, dims->count);
        uint64_t count = 1;
        for (size_t d = 0; d < dims->count && d < y->rank; d++) {
            CHECK_INT(y->dims[d], jnum(jitem(dims, d)));
            count *= (uint64_t)y->dims[d];
        }
        CHECK_INT(count * 8 / (i64 ? 1 : 2), want.n);
        if (count * (i64 ? 8 : 4) != want.n) continue;
        double worst = 0;
        for (uint64_t i = 0; i < count; i++) {
            if (i64) { CHECK_INT(((const int64_t *)y->data)[i], ((const int64_t *)want.p)[i]); continue; }
            double got = ((const float *)y->data)[i], w = ((const float *)want.p)[i], d = fabs(got - w) / (1e-5 + fabs(w));
            if (d > worst) worst = d;
        }
        CHECK_MSG(worst < 1e-4, "%s output '%s': relative error %g against numpy", what, y->name, worst);
    }
}

static void test_graph_generated_graphs(void) {
    bytes man = graph_file("manifest.json");
    if (!man.n) { fprintf(stderr, "  (tests/onnx/graphs not present: skipped)\n"); return; }
    mlrt__json_doc doc;
    mlrt_error e;
    if (mlrt__json_parse(man.p, man.n, "manifest", &doc, &e)) { CHECK_MSG(0, "%s", e.message); return; }
    const mlrt__json *graphs = mlrt__json_get(doc.root, "graphs");
    int n_runs = 0;
    for (size_t gi = 0; graphs && gi < graphs->count; gi++) {
        const mlrt__json *gj = jitem(graphs, gi), *runs = mlrt__json_get(gj, "runs");
        bytes f = graph_file(jstr(gj, "file"));
        mlrt_model *m = keep_model(mlrt_load_from_bytes(exact(f.p, f.n), f.n, &e));
        CHECK_MSG(m != NULL, "%s: %s", jstr(gj, "file"), e.message);
        if (!m) continue;
        for (size_t r = 0; r < runs->count; r++) {
            const mlrt__json *run = jitem(runs, r), *ins = mlrt__json_get(run, "inputs");
            mlrt_tensor in[8];
            memset(in, 0, sizeof in);
            for (size_t k = 0; k < ins->count && k < 8; k++) { /* given in reverse: by name, in any order */
                const mlrt__json *ij = jitem(ins, ins->count - 1 - k), *dims = mlrt__json_get(ij, "dims");
                in[k].name = jstr(ij, "name");
                in[k].dtype = strcmp(jstr(ij, "dtype"), "I64") == 0 ? MLRT_I64 : MLRT_F32;
                in[k].rank = (uint32_t)dims->count;
                for (size_t d = 0; d < dims->count; d++) in[k].dims[d] = jnum(jitem(dims, d));
                in[k].data = (void *)graph_file(jstr(ij, "file")).p;
            }
            mlrt_status st = mlrt_run(m, in, ins->count, &e);
            CHECK_MSG(st == MLRT_OK, "%s run %zu: %s", jstr(gj, "file"), r, e.message);
            if (!st) check_outputs(m, mlrt__json_get(run, "outputs"), jstr(gj, "file")), n_runs++;
        }
    }
    CHECK_INT(n_runs, 10);
    mlrt__json_free(&doc);
}

/* The encoder graph's lists: names, int64 inputs, the batch and the sequence named, the sequence's limit. */
static void test_graph_inputs_outputs_listed(void) {
    bytes f = graph_file("encoder.onnx");
    if (!f.n) return;
    mlrt_error e;
    mlrt_model *m = keep_model(mlrt_load_from_bytes(exact(f.p, f.n), f.n, &e));
    CHECK_MSG(m != NULL, "%s", e.message);
    if (!m) return;
    CHECK_INT(mlrt_input_count(m), 2);
    CHECK_INT(mlrt_output_count(m), 3);
    const mlrt_tensor *ids = mlrt_input(m, 0), *hidden = mlrt_output(m, 0), *out_ids = mlrt_output(m, 2);
    CHECK_STR(ids->name, "input_ids");
    CHECK_INT(ids->dtype, MLRT_I64);
    CHECK(ids->rank == 2 && ids->dims[0] == -1 && ids->dims[1] == -1);
    CHECK(hidden->rank == 3 && hidden->dims[0] == -1 && hidden->dims[1] == -1 && hidden->dims[2] == 8);
    CHECK_INT(out_ids->dtype, MLRT_I64);
    const char *info = mlrt_model_info_json(m);
    CHECK_CONTAINS(info, "\"inputs\":[{\"name\":\"input_ids\",\"dtype\":\"I64\",\"shape\":[\"batch\",\"sequence\"],"
                         "\"maxDims\":{\"sequence\":4096}}");
    CHECK_CONTAINS(info, "{\"name\":\"hidden\",\"dtype\":\"F32\",\"shape\":[\"batch\",\"sequence\",8],\"maxDims\":{\"sequence\":4096}}");
    CHECK_CONTAINS(info, "\"maxLength\":4096");
    /* rows are not its inputs */
    float row[4] = {0};
    CHECK_INT(mlrt_predict(m, row, row, &e), MLRT_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "use mlrt_run");
    /* a sequence longer than the limit, an index past the table, the batch disagreeing */
    int64_t *big = tmalloc(4097 * 8), small[4] = {0, 1, 2, 30}, mask[4] = {1, 1, 1, 1};
    mlrt_tensor in[2] = {{"input_ids", MLRT_I64, 2, {1, 4097}, big}, {"attention_mask", MLRT_I64, 2, {1, 4097}, big}};
    CHECK_INT(mlrt_run(m, in, 2, &e), MLRT_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "1..4096");
    in[0].dims[1] = in[1].dims[1] = 4, in[0].data = small, in[1].data = mask;
    CHECK_INT(mlrt_run(m, in, 2, &e), MLRT_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "index 30");
    small[3] = 3, in[1].dims[0] = 2;
    CHECK_INT(mlrt_run(m, in, 2, &e), MLRT_ERR_INVALID_ARGUMENT);
    /* int32 ids are taken as int64; many lengths: plans made and dropped, the outputs stay right */
    int32_t ids32[4] = {0, 1, 2, 3};
    float first[32];
    in[0] = (mlrt_tensor){"input_ids", MLRT_I32, 2, {1, 4}, ids32};
    in[1] = (mlrt_tensor){"attention_mask", MLRT_I64, 2, {1, 4}, mask};
    CHECK_INT(mlrt_run(m, in, 2, &e), MLRT_OK);
    memcpy(first, mlrt_output(m, 0)->data, sizeof first);
    int64_t ids64[9] = {0, 1, 2, 3, 4, 5, 6, 7, 8}, mask9[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    for (int len = 1; len <= 9; len++) {
        mlrt_tensor t[2] = {{"input_ids", MLRT_I64, 2, {1, len}, ids64}, {"attention_mask", MLRT_I64, 2, {1, len}, mask9}};
        CHECK_INT(mlrt_run(m, t, 2, &e), MLRT_OK);
        CHECK_INT(mlrt_output(m, 0)->dims[1], len);
    }
    CHECK_INT(mlrt_run(m, in, 2, &e), MLRT_OK);
    CHECK(memcmp(first, mlrt_output(m, 0)->data, sizeof first) == 0);
}

/* Issue 19: a 0.7 KB file whose output holds 6,311,834 floats loads in time proportional to the file
 * (it allocates and touches no activations: the arena waits for a run). */
static void test_graph_huge_activations_load_fast(void) {
    bytes f = graph_file("slow-pad.onnx");
    if (!f.n) return;
    mlrt_error e;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int k = 0; k < 5; k++) {
        mlrt_model *m = mlrt_load_from_bytes(exact(f.p, f.n), f.n, &e);
        CHECK_MSG(m != NULL, "%s", e.message);
        if (m) {
            CHECK_INT(mlrt_output_size(m), 6311834);
            CHECK_CONTAINS(mlrt_model_info_json(m), "\"classCount\":6311834,");
        }
        mlrt_free(m);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    CHECK_MSG(s < 1.0, "5 loads took %.3f s", s); /* (about 1 ms each natively; generous for sanitizers and busy machines) */
}

const test_case graph_tests[] = {
    T(test_graph_math_within_an_ulp),
    T(test_graph_one_activation_implementation),
    T(test_graph_layernorm_kernel),
    T(test_graph_broadcast_kernels),
    T(test_graph_op_table_rows),
    T(test_graph_built_without_a_format),
    T(test_graph_generated_graphs),
    T(test_graph_inputs_outputs_listed),
    T(test_graph_huge_activations_load_fast),
    {0},
};
