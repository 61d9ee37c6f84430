/* test_onnx.c — the protobuf codec from vectors, and the ONNX reader and planner under the
 * sanitizers: the PyTorch zoo against PyTorch's outputs, every truncation of a small export, and
 * graphs built byte by byte. */
#include "builders.h"
#include "model/graph.h"

/* A protobuf writer for the tests: appends to a bytes buffer. */
static void pb_varint(bytes *b, uint64_t v) {
    do {
        uint8_t c = v & 0x7f;
        v >>= 7;
        if (v) c |= 0x80;
        put(b, &c, 1);
    } while (v);
}
static void pb_key(bytes *b, uint32_t field, uint32_t wire) { pb_varint(b, (uint64_t)field << 3 | wire); }
static void pb_int(bytes *b, uint32_t field, int64_t v) { pb_key(b, field, 0); pb_varint(b, (uint64_t)v); }
static void pb_len(bytes *b, uint32_t field, const void *p, size_t n) { pb_key(b, field, 2); pb_varint(b, n); put(b, p, n); }
static void pb_str(bytes *b, uint32_t field, const char *s) { pb_len(b, field, s, strlen(s)); }
static void pb_msg(bytes *b, uint32_t field, bytes *m) { /* consumes m */
    pb_len(b, field, m->p, m->n);
    free(m->p);
    *m = (bytes){0};
}

static void test_pb_vectors(void) {
    static const struct { uint8_t b[11]; size_t n; uint64_t v; mlrt_status st; } cases[] = {
        {{0x00}, 1, 0, MLRT_OK},
        {{0x96, 0x01}, 2, 150, MLRT_OK},  /* the protobuf documentation's example */
        {{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, 10, UINT64_MAX, MLRT_OK},
        {{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02}, 10, 0, MLRT_ERR_BAD_HEADER}, /* bit 64 */
        {{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, 11, 0, MLRT_ERR_BAD_HEADER},
        {{0x80}, 1, 0, MLRT_ERR_TRUNCATED},
        {{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, 10, UINT64_MAX - 1, MLRT_OK}, /* int64 -2 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        mlrt__pb pb = mlrt__pb_open(exact(cases[i].b, cases[i].n), cases[i].n, "t");
        uint64_t v = 0;
        mlrt_error e;
        mlrt_status st = mlrt__pb_varint(&pb, &v, &e);
        CHECK_INT(st, cases[i].st);
        if (!st) CHECK(v == cases[i].v);
    }
    /* keys: field 0, groups and wire types 6/7 are refused; the rest pass */
    static const uint8_t bad_keys[][1] = {{0x00}, {0x0b}, {0x0c}, {0x0e}, {0x0f}};
    for (size_t i = 0; i < 5; i++) {
        mlrt__pb pb = mlrt__pb_open(exact(bad_keys[i], 1), 1, "t");
        uint32_t f, w;
        mlrt_error e;
        CHECK_INT(mlrt__pb_next(&pb, &f, &w, &e), -1);
        CHECK_INT(e.code, MLRT_ERR_BAD_HEADER);
    }
    /* a fixed32, a fixed64 and a string bounded by their message */
    static const uint8_t msg[] = {0x0d, 1, 2, 3, 4, 0x11, 1, 0, 0, 0, 0, 0, 0, 0, 0x1a, 0x02, 'h', 'i', 0x22, 0x05, 'x'};
    mlrt__pb pb = mlrt__pb_open(exact(msg, sizeof msg), sizeof msg, "t");
    uint32_t f, w, u32;
    uint64_t u64;
    const uint8_t *d;
    size_t n;
    mlrt_error e;
    CHECK_INT(mlrt__pb_next(&pb, &f, &w, &e), 1); CHECK_INT(f, 1); CHECK_INT(w, MLRT__PB_I32);
    CHECK_INT(mlrt__pb_fixed32(&pb, &u32, &e), MLRT_OK); CHECK(u32 == 0x04030201u);
    CHECK_INT(mlrt__pb_next(&pb, &f, &w, &e), 1); CHECK_INT(mlrt__pb_fixed64(&pb, &u64, &e), MLRT_OK); CHECK(u64 == 1);
    CHECK_INT(mlrt__pb_next(&pb, &f, &w, &e), 1); CHECK_INT(mlrt__pb_bytes(&pb, &d, &n, &e), MLRT_OK);
    CHECK(n == 2 && d[0] == 'h');
    CHECK_INT(mlrt__pb_next(&pb, &f, &w, &e), 1); CHECK_INT(f, 4);
    CHECK_INT(mlrt__pb_bytes(&pb, &d, &n, &e), MLRT_ERR_TRUNCATED);
    CHECK_CONTAINS(e.message, "declares 5 bytes but its message has 1 left");
}

static void test_pb_depth_limit(void) {
    /* 40 nested length-delimited messages: the 32nd level is refused */
    bytes inner = {0};
    for (int level = 0; level < 40; level++) {
        bytes outer = {0};
        pb_msg(&outer, 1, &inner);
        inner = outer;
    }
    keep(inner.p);
    mlrt__pb pb = mlrt__pb_open(exact(inner.p, inner.n), inner.n, "t");
    mlrt_error e;
    mlrt_status st = MLRT_OK;
    int depth = 0;
    for (;;) {
        uint32_t f, w;
        if (mlrt__pb_next(&pb, &f, &w, &e) != 1) break;
        mlrt__pb child;
        st = mlrt__pb_message(&pb, &child, &e);
        if (st) break;
        pb = child;
        depth++;
    }
    CHECK_INT(st, MLRT_ERR_BAD_HEADER);
    CHECK_INT(depth, MLRT__PB_MAX_DEPTH - 1);
    CHECK_CONTAINS(e.message, "nest deeper than 32");
}

/* A model of one Gemm (transB) + Relu on [batch, 4] -> [batch, 3], built here byte by byte. */
static bytes onnx_tiny(int opset, const char *op2) {
    bytes w = {0}, bias = {0}, n1 = {0}, n2 = {0}, in = {0}, out = {0}, g = {0}, m = {0}, os = {0};
    float wf[12], bf[3] = {0.5f, -1.0f, 2.0f};
    for (int i = 0; i < 12; i++) wf[i] = (float)(i - 5) / 4.0f;
    pb_int(&w, 1, 3), pb_int(&w, 1, 4), pb_int(&w, 2, 1), pb_str(&w, 8, "W"), pb_len(&w, 9, wf, sizeof wf);
    pb_int(&bias, 1, 3), pb_int(&bias, 2, 1), pb_str(&bias, 8, "b");
    for (int i = 0; i < 3; i++) { pb_key(&bias, 4, 5); put(&bias, &bf[i], 4); } /* unpacked float_data */
    bytes attr = {0};
    pb_str(&attr, 1, "transB"), pb_int(&attr, 20, 2), pb_int(&attr, 3, 1);
    pb_str(&n1, 1, "input"), pb_str(&n1, 1, "W"), pb_str(&n1, 1, "b"), pb_str(&n1, 2, "h"), pb_str(&n1, 4, "Gemm");
    pb_msg(&n1, 5, &attr);
    pb_str(&n2, 1, "h"), pb_str(&n2, 2, "output"), pb_str(&n2, 4, op2);
    bytes shape = {0}, d0 = {0}, d1 = {0}, tt = {0}, type = {0};
    pb_str(&d0, 2, "batch"), pb_int(&d1, 1, 4);
    pb_msg(&shape, 1, &d0), pb_msg(&shape, 1, &d1);
    pb_int(&tt, 1, 1), pb_msg(&tt, 2, &shape);
    pb_msg(&type, 1, &tt);
    pb_str(&in, 1, "input"), pb_msg(&in, 2, &type);
    pb_str(&out, 1, "output");
    pb_msg(&g, 1, &n1), pb_msg(&g, 1, &n2), pb_str(&g, 2, "tiny"), pb_msg(&g, 5, &w), pb_msg(&g, 5, &bias);
    pb_msg(&g, 11, &in), pb_msg(&g, 12, &out);
    pb_str(&os, 1, ""), pb_int(&os, 2, opset);
    pb_int(&m, 1, 8), pb_msg(&m, 7, &g), pb_msg(&m, 8, &os);
    free(out.p); /* (field 12 was written from it by pb_msg: freed there; out.p is NULL) */
    keep(m.p);
    return m;
}

static void test_onnx_tiny_graph(void) {
    bytes f = onnx_tiny(13, "Relu");
    mlrt_error e;
    mlrt_model *m = keep_model(mlrt_load_from_bytes(exact(f.p, f.n), f.n, &e));
    check_at(m != NULL, __FILE__, __LINE__, "%s", e.message);
    if (!m) return;
    CHECK_INT(mlrt_model_format(m), MLRT_FORMAT_ONNX);
    CHECK_INT(mlrt_model_kind(m), MLRT_KIND_GRAPH);
    CHECK_INT(mlrt_input_size(m), 4);
    CHECK_INT(mlrt_output_size(m), 3);
    float x[8] = {1, 2, 3, 4, -1, 0, 0.5f, 2}, y[6];
    CHECK_INT(mlrt_predict_batch(m, x, 2, y, &e), MLRT_OK);
    for (int r = 0; r < 2; r++)
        for (int o = 0; o < 3; o++) { /* y = relu(W x + b), W[o][i] = (4o + i - 5) / 4 */
            double s = o == 0 ? 0.5 : o == 1 ? -1.0 : 2.0;
            for (int i = 0; i < 4; i++) s += (4.0 * o + i - 5) / 4.0 * x[r * 4 + i];
            CHECK_NEAR(y[r * 3 + o], s > 0 ? s : 0, 1e-5);
        }
    CHECK_CONTAINS(mlrt_model_info_json(m), "\"kind\":\"graph\"");
    CHECK_CONTAINS(mlrt_model_info_json(m), "\"ops\":{\"Gemm\":1,\"Relu\":1}");
    /* the Relu fused into the Gemm: one op planned */
    CHECK_CONTAINS(mlrt_model_info_json(m), "\"plan\":{\"batched\":true,\"tileRows\":64,\"ops\":1,");
    /* every truncation is refused cleanly (ASan watches the reads) */
    for (size_t cut = 1; cut < f.n; cut++) {
        mlrt_model *t = mlrt_load_from_bytes(exact(f.p, cut), cut, &e);
        check_at(t == NULL, __FILE__, __LINE__, "cut at %zu loaded", cut);
        mlrt_free(t);
    }
    bytes g = onnx_tiny(13, "Swish");
    CHECK(mlrt_load_from_bytes(exact(g.p, g.n), g.n, &e) == NULL);
    CHECK_INT(e.code, MLRT_ERR_UNSUPPORTED);
    CHECK_STR(e.message, "onnx: node 1 (Swish ''): op Swish (opset 13) is not one mlrt runs");
    char *js = mlrt_inspect(exact(g.p, g.n), g.n, &e);
    CHECK(js != NULL);
    if (js) CHECK_CONTAINS(js, "\"notAModel\":{\"code\":\"UNSUPPORTED\"");
    mlrt_string_free(js);
    bytes h = onnx_tiny(5, "Relu");
    CHECK(mlrt_load_from_bytes(exact(h.p, h.n), h.n, &e) == NULL);
    CHECK_INT(e.code, MLRT_ERR_UNSUPPORTED_VERSION);
}

static void test_onnx_zoo_if_present(void) {
    static const char *const names[] = {"lenet5-op13", "bn-cnn-op13", "dwsep-op13", "heads-op9", "pools-op13",
                                        "mlp-softmax-op9"};
    int found = 0;
    for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
        char p[128];
        snprintf(p, sizeof p, "tests/onnx/zoo/%s.onnx", names[k]);
        bytes f = read_file_or_empty(p);
        snprintf(p, sizeof p, "tests/onnx/zoo/%s.in.f32", names[k]);
        bytes x = read_file_or_empty(p);
        snprintf(p, sizeof p, "tests/onnx/zoo/%s.out.f32", names[k]);
        bytes want = read_file_or_empty(p);
        if (!f.n || !x.n || !want.n) continue;
        found++;
        mlrt_error e;
        mlrt_model *m = keep_model(mlrt_load_from_bytes(exact(f.p, f.n), f.n, &e));
        check_at(m != NULL, __FILE__, __LINE__, "%s: %s", names[k], e.message);
        if (!m) continue;
        size_t rows = x.n / 4 / mlrt_input_size(m);
        float *y = tmalloc(want.n);
        CHECK_INT(rows * mlrt_output_size(m) * 4, want.n);
        CHECK_INT(mlrt_predict_batch(m, (const float *)x.p, rows, y, &e), MLRT_OK);
        const float *w = (const float *)want.p;
        for (size_t i = 0; i < want.n / 4; i++)
            check_at(fabsf(y[i] - w[i]) <= 1e-4f + 1e-4f * fabsf(w[i]), __FILE__, __LINE__, "%s: output %zu: %g vs %g",
                     names[k], i, y[i], w[i]);
    }
    if (!found) fprintf(stderr, "  (tests/onnx/zoo not present: skipped)\n");
}


/* ------------------------------------------------------------------ the importer, op by op */

/* Attributes (AttributeProto bytes) */
static bytes attr_int(const char *name, int64_t v) { bytes a = {0}; pb_str(&a, 1, name), pb_int(&a, 20, 2), pb_int(&a, 3, v); return a; }
static bytes attr_float(const char *name, float v) {
    bytes a = {0};
    pb_str(&a, 1, name), pb_int(&a, 20, 1), pb_key(&a, 2, 5), put(&a, &v, 4);
    return a;
}
static bytes attr_ints(const char *name, const int64_t *v, int n) {
    bytes a = {0}, p = {0};
    for (int k = 0; k < n; k++) pb_varint(&p, (uint64_t)v[k]);
    pb_str(&a, 1, name), pb_int(&a, 20, 7), pb_msg(&a, 8, &p);
    return a;
}
static bytes attr_str(const char *name, const char *v) { bytes a = {0}; pb_str(&a, 1, name), pb_int(&a, 20, 3), pb_str(&a, 4, v); return a; }

/* A node: op, inputs and outputs ("" for an omitted one), then up to four attributes (consumed). */
static bytes mk_node(const char *op, const char *in, const char *out, bytes *attrs, int n_attrs) {
    bytes n = {0};
    char buf[128];
    for (int pass = 0; pass < 2; pass++) { /* comma-separated names */
        const char *s = pass ? out : in;
        while (s && *s) {
            const char *e = strchr(s, ',');
            size_t len = e ? (size_t)(e - s) : strlen(s);
            memcpy(buf, s, len), buf[len] = 0;
            pb_str(&n, pass ? 2 : 1, strcmp(buf, "-") ? buf : "");
            s = e ? e + 1 : NULL;
        }
    }
    pb_str(&n, 4, op);
    for (int k = 0; k < n_attrs; k++) pb_msg(&n, 5, &attrs[k]);
    return n;
}

/* A model of the nodes (consumed) over the float input "x" [N, 3, 4, 4] (N named "batch", dim 1
 * unnamed when sym1) with output "y"; initializers: "w" [2] float. */
static bytes mk_model(int opset, bytes *nodes, int n_nodes, bool sym1) {
    bytes g = {0}, m = {0}, os = {0}, in = {0}, out = {0}, type = {0}, tt = {0}, shape = {0}, w = {0};
    for (int k = 0; k < n_nodes; k++) pb_msg(&g, 1, &nodes[k]);
    float wf[2] = {0.5f, -1.0f};
    pb_int(&w, 1, 2), pb_int(&w, 2, 1), pb_str(&w, 8, "w"), pb_len(&w, 9, wf, sizeof wf);
    pb_msg(&g, 5, &w);
    for (int d = 0; d < 4; d++) {
        bytes dim = {0};
        if (d == 0) pb_str(&dim, 2, "batch");
        else if (!(d == 1 && sym1)) pb_int(&dim, 1, d == 1 ? 3 : 4);
        pb_msg(&shape, 1, &dim);
    }
    pb_int(&tt, 1, 1), pb_msg(&tt, 2, &shape);
    pb_msg(&type, 1, &tt);
    pb_str(&in, 1, "x"), pb_msg(&in, 2, &type);
    pb_str(&out, 1, "y");
    pb_msg(&g, 11, &in), pb_msg(&g, 12, &out);
    pb_str(&os, 1, ""), pb_int(&os, 2, opset);
    pb_int(&m, 1, 8), pb_msg(&m, 7, &g), pb_msg(&m, 8, &os);
    keep(m.p);
    return m;
}

/* Reads and imports f; the graph in *ir (freed after the test), or the status with *e. */
static mlrt_status import(bytes f, mlrt__ir_graph *ir, mlrt_error *e) {
    mlrt__onnx g;
    mlrt_status st = mlrt__read_onnx(exact(f.p, f.n), f.n, &g, e);
    if (st) return st;
    st = mlrt__import_onnx(&g, ir, e);
    mlrt__onnx_free(&g);
    return st;
}

static const float *const_f32(const mlrt__ir_graph *ir, int32_t v) {
    return v >= 0 && ir->vals[v].is_const && ir->vals[v].dtype == MLRT_F32 ? ir->vals[v].data : NULL;
}
static const int64_t *const_i64(const mlrt__ir_graph *ir, int32_t v, uint64_t n) {
    return v >= 0 && ir->vals[v].is_const && ir->vals[v].dtype == MLRT_I64 && ir->vals[v].count == n ? ir->vals[v].data : NULL;
}

static void test_onnx_import_opset_rules(void) {
    mlrt__ir_graph ir;
    mlrt_error e;
    /* Clip before 11: min and max attributes become constant inputs 1 and 2 */
    bytes a[4] = {attr_float("min", -1.0f), attr_float("max", 2.5f)};
    bytes n = mk_node("Clip", "x", "y", a, 2);
    CHECK_INT(import(mk_model(10, &n, 1, false), &ir, &e), MLRT_OK);
    CHECK(ir.n_ops == 1 && ir.ops[0].kind == MLRT__OP_ACT && ir.ops[0].p.act.fn == MLRT__FN_CLIP && ir.ops[0].n_in == 3);
    CHECK(const_f32(&ir, ir.ops[0].in[1]) && const_f32(&ir, ir.ops[0].in[1])[0] == -1.0f);
    CHECK(const_f32(&ir, ir.ops[0].in[2]) && const_f32(&ir, ir.ops[0].in[2])[0] == 2.5f);
    CHECK_STR(ir.ops[0].type, "Clip");
    mlrt__ir_graph_free(&ir);
    /* Pad before 11: pads and value; Slice before 10: starts, ends, axes; Squeeze before 13: axes */
    static const int64_t pads[8] = {0, 0, 1, 1, 0, 0, 1, 1}, starts[1] = {1}, ends[1] = {3}, axes[1] = {2}, sq[1] = {0};
    bytes nodes[3];
    a[0] = attr_ints("pads", pads, 8), a[1] = attr_float("value", 0.25f), a[2] = attr_str("mode", "constant");
    nodes[0] = mk_node("Pad", "x", "p", a, 3);
    a[0] = attr_ints("starts", starts, 1), a[1] = attr_ints("ends", ends, 1), a[2] = attr_ints("axes", axes, 1);
    nodes[1] = mk_node("Slice", "p", "s", a, 3);
    a[0] = attr_ints("axes", sq, 1);
    nodes[2] = mk_node("Unsqueeze", "s", "y", a, 1);
    CHECK_INT(import(mk_model(9, nodes, 3, false), &ir, &e), MLRT_OK);
    if (ir.n_ops == 3) {
        CHECK(ir.ops[0].kind == MLRT__OP_PAD && ir.ops[0].n_in == 4 && ir.ops[0].in[3] < 0);
        const int64_t *p = const_i64(&ir, ir.ops[0].in[1], 8);
        CHECK(p && !memcmp(p, pads, sizeof pads));
        CHECK(const_f32(&ir, ir.ops[0].in[2]) && const_f32(&ir, ir.ops[0].in[2])[0] == 0.25f);
        CHECK(ir.ops[1].kind == MLRT__OP_SLICE && ir.ops[1].n_in == 5 && ir.ops[1].in[4] < 0);
        CHECK(const_i64(&ir, ir.ops[1].in[1], 1) && const_i64(&ir, ir.ops[1].in[3], 1)[0] == 2);
        CHECK(ir.ops[2].kind == MLRT__OP_UNSQUEEZE && const_i64(&ir, ir.ops[2].in[1], 1));
    }
    mlrt__ir_graph_free(&ir);
    /* Softmax: axis 1 over the flattened rest before 13, -1 from 13 */
    for (int opset = 12; opset <= 13; opset++) {
        n = mk_node("Softmax", "x", "y", NULL, 0);
        CHECK_INT(import(mk_model(opset, &n, 1, false), &ir, &e), MLRT_OK);
        CHECK(ir.ops[0].kind == MLRT__OP_SOFTMAX);
        CHECK_INT(ir.ops[0].p.softmax.axis, opset == 12 ? 1 : -1);
        CHECK_INT(ir.ops[0].p.softmax.flatten, opset == 12);
        mlrt__ir_graph_free(&ir);
    }
    /* Gelu from opset 20, approximate read by its name */
    a[0] = attr_str("approximate", "tanh");
    n = mk_node("Gelu", "x", "y", a, 1);
    CHECK_INT(import(mk_model(20, &n, 1, false), &ir, &e), MLRT_OK);
    CHECK(ir.ops[0].p.act.fn == MLRT__FN_GELU && ir.ops[0].p.act.approximate == 1);
    mlrt__ir_graph_free(&ir);
    n = mk_node("Gelu", "x", "y", NULL, 0);
    CHECK_INT(import(mk_model(17, &n, 1, false), &ir, &e), MLRT_ERR_UNSUPPORTED);
    CHECK_STR(e.message, "onnx: node 0 (Gelu ''): op Gelu (opset 17) is not one mlrt runs");
    a[0] = attr_str("approximate", "erf");
    n = mk_node("Gelu", "x", "y", a, 1);
    CHECK_INT(import(mk_model(20, &n, 1, false), &ir, &e), MLRT_ERR_BAD_HEADER);
    CHECK_CONTAINS(e.message, "approximate 'erf' is not one of none|tanh");
    /* LayerNormalization from 17: axis, epsilon; scale and bias as inputs */
    a[0] = attr_int("axis", 1), a[1] = attr_float("epsilon", 1e-3f), a[2] = attr_int("stash_type", 1);
    n = mk_node("LayerNormalization", "x,w", "y", a, 3);
    CHECK_INT(import(mk_model(17, &n, 1, false), &ir, &e), MLRT_OK);
    CHECK(ir.ops[0].kind == MLRT__OP_LAYERNORM && ir.ops[0].p.norm.axis == 1 && ir.ops[0].p.norm.epsilon == 1e-3f);
    CHECK(ir.ops[0].n_in == 3 && ir.ops[0].in[2] < 0);
    mlrt__ir_graph_free(&ir);
    n = mk_node("LayerNormalization", "x,w", "y", NULL, 0);
    CHECK_INT(import(mk_model(16, &n, 1, false), &ir, &e), MLRT_ERR_UNSUPPORTED);
    /* attributes of the wrong type, values off the list, modes mlrt does not run, a missing required one */
    a[0] = attr_float("axis", 1.0f);
    n = mk_node("Flatten", "x", "y", a, 1);
    CHECK_INT(import(mk_model(13, &n, 1, false), &ir, &e), MLRT_ERR_BAD_HEADER);
    CHECK_STR(e.message, "onnx: node 0 (Flatten ''): attribute 'axis' has type 1, not INT");
    static const int64_t k2[2] = {2, 2};
    a[0] = attr_ints("kernel_shape", k2, 2), a[1] = attr_str("auto_pad", "SAME");
    n = mk_node("MaxPool", "x", "y", a, 2);
    CHECK_INT(import(mk_model(13, &n, 1, false), &ir, &e), MLRT_ERR_BAD_HEADER);
    CHECK_CONTAINS(e.message, "auto_pad 'SAME' is not one of NOTSET|SAME_UPPER|SAME_LOWER|VALID");
    n = mk_node("MaxPool", "x", "y", NULL, 0);
    CHECK_INT(import(mk_model(13, &n, 1, false), &ir, &e), MLRT_ERR_BAD_HEADER);
    CHECK_CONTAINS(e.message, "attribute 'kernel_shape' is required");
    a[0] = attr_str("mode", "reflect");
    n = mk_node("Pad", "x,w", "y", a, 1);
    CHECK_INT(import(mk_model(13, &n, 1, false), &ir, &e), MLRT_ERR_UNSUPPORTED);
    CHECK_CONTAINS(e.message, "mode 'reflect'; mlrt runs constant only");
    a[0] = attr_int("training_mode", 1);
    n = mk_node("BatchNormalization", "x,w,w,w,w", "y", a, 1);
    CHECK_INT(import(mk_model(15, &n, 1, false), &ir, &e), MLRT_ERR_UNSUPPORTED);
    CHECK_CONTAINS(e.message, "training_mode = 1; mlrt runs inference");
    a[0] = attr_int("to", 10); /* FLOAT16 */
    n = mk_node("Cast", "x", "y", a, 1);
    CHECK_INT(import(mk_model(13, &n, 1, false), &ir, &e), MLRT_ERR_UNSUPPORTED);
    n = mk_node("Relu", "x,w", "y", NULL, 0);
    CHECK_INT(import(mk_model(13, &n, 1, false), &ir, &e), MLRT_ERR_BAD_HEADER);
    CHECK_STR(e.message, "onnx: node 0 (Relu ''): 2 inputs; the op takes 1 to 1");
}

static void test_onnx_import_values(void) {
    mlrt__ir_graph ir;
    mlrt_error e;
    /* Constant nodes become constants (no op); symbolic dims are named, an unnamed one after its input */
    static const int64_t v[3] = {7, -1, 2};
    bytes a = attr_ints("value_ints", v, 3), nodes[2];
    nodes[0] = mk_node("Constant", "", "c", &a, 1);
    nodes[1] = mk_node("Reshape", "x,c", "y", NULL, 0);
    CHECK_INT(import(mk_model(13, nodes, 2, true), &ir, &e), MLRT_OK);
    CHECK_INT(ir.n_ops, 1);
    CHECK(ir.ops[0].kind == MLRT__OP_RESHAPE && const_i64(&ir, ir.ops[0].in[1], 3)[0] == 7);
    CHECK_STR(ir.format, "onnx");
    CHECK_INT(ir.n_inputs, 1);
    const mlrt__ir_value *x = &ir.vals[ir.inputs[0]];
    CHECK_STR(x->name, "x");
    CHECK(x->dtype == MLRT_F32 && x->rank == 4 && x->dims[0] < 0 && x->dims[1] < 0 && x->dims[2] == 4);
    CHECK_INT(ir.n_syms, 2);
    if (ir.n_syms == 2) {
        CHECK_STR(ir.syms[MLRT__IR_SYM_OF(x->dims[0])], "batch");
        CHECK_STR(ir.syms[MLRT__IR_SYM_OF(x->dims[1])], "x:1");
    }
    CHECK_CONTAINS(ir.facts_json, "\"ops\":{\"Constant\":1,\"Reshape\":1}");
    mlrt__ir_graph_free(&ir);
    /* an op of another domain */
    bytes n = mk_node("Relu", "x", "y", NULL, 0);
    pb_str(&n, 7, "com.microsoft");
    CHECK_INT(import(mk_model(13, &n, 1, false), &ir, &e), MLRT_ERR_UNSUPPORTED);
    CHECK_CONTAINS(e.message, "domain 'com.microsoft' (opset 13): mlrt runs ai.onnx ops only");
}

const test_case onnx_tests[] = {
    T(test_pb_vectors),
    T(test_pb_depth_limit),
    T(test_onnx_tiny_graph),
    T(test_onnx_zoo_if_present),
    T(test_onnx_import_opset_rules),
    T(test_onnx_import_values),
    {0},
};
