/* formats/onnx_import.c — the ONNX importer: a parsed ModelProto (formats/onnx.c) into the neutral
 * graph of ir/ir.h, which the model layer plans and runs.
 *
 * One table row per ONNX op and range of opsets: the graph's op kind, the inputs the node may have,
 * and its attributes, each read by its ONNX name and type into the kind's parameters (with its
 * default), checked against the values it may take, or made a constant input where an older opset
 * had an attribute for what is now an input (Clip's min and max before 11, Pad's pads and value
 * before 11, Slice's starts, ends and axes before 10, Squeeze's and Unsqueeze's axes before 13).
 * Adding an op is one row (and, for a check no rule expresses, a function beside it).
 * Constant nodes become constants, and initializers constants too; the graph's inputs keep their
 * element types and shapes, their symbolic dims named (a dim without a name is named after its
 * input: "ids:1"). */
#include "formats.h"
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define FAIL(code, ...) mlrt__fail(err, code, __VA_ARGS__)
#define TRY(x) do { mlrt_status st_ = (x); if (st_) return st_; } while (0)

/* ------------------------------------------------------------------ the table */

typedef enum how {
    R_END = 0,
    R_INT,      /* INT -> int64_t */
    R_INT_OPT,  /* INT -> int64_t, and whether it was given -> bool at aux */
    R_BOOL,     /* INT -> bool (non-zero) */
    R_FLOAT,    /* FLOAT -> float */
    R_INTS,     /* INTS -> int64_t [cap], their count -> uint8_t at aux */
    R_ENUM,     /* STRING, one of choices -> its index as uint8_t (another: BAD_HEADER) */
    R_ONLY,     /* STRING: must be choices' one name (another: UNSUPPORTED) */
    R_ZERO,     /* INT: must be 0 when given (an inference-only mode) */
    R_DTYPE,    /* INT, a TensorProto type mlrt computes in -> mlrt_dtype */
    R_SET,      /* no attribute: the uint8_t field at off is def */
    R_IN_INTS,  /* INTS -> an int64 constant [n] as input `cap` */
    R_IN_FLOAT  /* FLOAT -> a float scalar constant as input `cap` */
} how;

typedef struct attr_rule {
    uint8_t how;                    /* how */
    uint8_t cap;                    /* R_INTS: the values the field holds; R_IN_*: the input it becomes */
    bool required;
    uint16_t off, aux;              /* the field in mlrt__ir_op; R_INTS: the count; R_INT_OPT: the presence */
    const char *name;
    float def;                      /* the default, or R_SET's value (each one exact as a float) */
    const char *choices;            /* R_ENUM, R_ONLY: "A|B|C" */
} attr_rule;

typedef struct imp imp;
typedef struct op_rule {
    const char *name;               /* the ONNX op type */
    uint8_t since, until;           /* opsets */
    uint8_t kind;                   /* mlrt__op_kind */
    uint8_t min_in, max_in;         /* inputs the node may have (255: any number) */
    uint8_t n_in;                   /* inputs of the graph's op (0: as the node has) */
    /* more checks or another graph op than the rules make (Constant, Dropout); NULL: none */
    mlrt_status (*special)(imp *m, const mlrt__onnx_node *nd, mlrt__ir_op *op, bool *no_op);
    const attr_rule *a;             /* its attributes, up to one with how R_END; NULL: none */
} op_rule;

#define OFF(f) (uint16_t)offsetof(mlrt__ir_op, p.f)
#define INT(nm, f, d) {R_INT, 0, false, OFF(f), 0, nm, d, NULL}
#define INT_REQ(nm, f) {R_INT, 0, true, OFF(f), 0, nm, 0, NULL}
#define INT_OPT(nm, f, given) {R_INT_OPT, 0, false, OFF(f), OFF(given), nm, 0, NULL}
#define BOOL(nm, f) {R_BOOL, 0, false, OFF(f), 0, nm, 0, NULL}
#define FLOAT(nm, f, d) {R_FLOAT, 0, false, OFF(f), 0, nm, d, NULL}
#define INTS(nm, f, n, req) {R_INTS, sizeof(((mlrt__ir_op *)0)->p.f) / 8, req, OFF(f), OFF(n), nm, 0, NULL}
#define ENUM(nm, f, ch) {R_ENUM, 0, false, OFF(f), 0, nm, 0, ch}
#define ONLY(nm, ch) {R_ONLY, 0, false, 0, 0, nm, 0, ch}
#define ZERO(nm) {R_ZERO, 0, false, 0, 0, nm, 0, NULL}
#define DTYPE(nm, f) {R_DTYPE, 0, true, OFF(f), 0, nm, 0, NULL}
#define SET(f, v) {R_SET, 0, false, OFF(f), 0, NULL, v, NULL}
#define IN_INTS(nm, k, req) {R_IN_INTS, k, req, 0, 0, nm, 0, NULL}
#define IN_FLOAT(nm, k) {R_IN_FLOAT, k, false, 0, 0, nm, 0, NULL}
/* A row's attributes: a list of the rules above, which ends with how R_END (no attributes: NONE). */
#define ATTRS(...) (const attr_rule[]){__VA_ARGS__, {0}}
#define NONE NULL
#define ANY 255
#define LAST 99

/* Conv's and the pools' window, as its attributes give it */
#define WINDOW INTS("strides", window.strides, window.n_strides, false), \
    INTS("dilations", window.dilations, window.n_dilations, false), INTS("pads", window.pads, window.n_pads, false), \
    ENUM("auto_pad", window.pad_mode, "NOTSET|SAME_UPPER|SAME_LOWER|VALID")
#define POOL(p) SET(window.pool, p), INTS("kernel_shape", window.kernel, window.n_kernel, true), WINDOW, \
    BOOL("ceil_mode", window.ceil_mode)

static mlrt_status constant_op(imp *m, const mlrt__onnx_node *nd, mlrt__ir_op *op, bool *no_op);
static mlrt_status dropout_op(imp *m, const mlrt__onnx_node *nd, mlrt__ir_op *op, bool *no_op);

static const op_rule RULES[] = {
    {"Gemm", 7, LAST, MLRT__OP_GEMM, 2, 3, 3, NULL,
     ATTRS(BOOL("transA", gemm.trans_a), BOOL("transB", gemm.trans_b), FLOAT("alpha", gemm.alpha, 1), FLOAT("beta", gemm.beta, 1))},
    {"MatMul", 7, LAST, MLRT__OP_MATMUL, 2, 2, 2, NULL, NONE},
    {"Conv", 7, LAST, MLRT__OP_CONV, 2, 3, 3, NULL,
     ATTRS(INTS("kernel_shape", window.kernel, window.n_kernel, false), WINDOW, INT("group", window.group, 1))},
    {"MaxPool", 7, LAST, MLRT__OP_POOL, 1, 1, 1, NULL, ATTRS(POOL(MLRT__IR_POOL_MAX))},
    {"AveragePool", 7, LAST, MLRT__OP_POOL, 1, 1, 1, NULL,
     ATTRS(POOL(MLRT__IR_POOL_AVG), BOOL("count_include_pad", window.count_include_pad))},
    {"GlobalAveragePool", 7, LAST, MLRT__OP_POOL, 1, 1, 1, NULL, ATTRS(SET(window.pool, MLRT__IR_POOL_GLOBAL_AVG))},
    {"Add", 7, LAST, MLRT__OP_ADD, 2, 2, 2, NULL, NONE},
    {"Sub", 7, LAST, MLRT__OP_SUB, 2, 2, 2, NULL, NONE},
    {"Mul", 7, LAST, MLRT__OP_MUL, 2, 2, 2, NULL, NONE},
    {"Div", 7, LAST, MLRT__OP_DIV, 2, 2, 2, NULL, NONE},
    {"Relu", 7, LAST, MLRT__OP_ACT, 1, 1, 1, NULL, ATTRS(SET(act.fn, MLRT__FN_RELU))},
    {"LeakyRelu", 7, LAST, MLRT__OP_ACT, 1, 1, 1, NULL, ATTRS(SET(act.fn, MLRT__FN_LEAKY_RELU), FLOAT("alpha", act.alpha, 0.01))},
    {"Sigmoid", 7, LAST, MLRT__OP_ACT, 1, 1, 1, NULL, ATTRS(SET(act.fn, MLRT__FN_SIGMOID))},
    {"Tanh", 7, LAST, MLRT__OP_ACT, 1, 1, 1, NULL, ATTRS(SET(act.fn, MLRT__FN_TANH))},
    {"Erf", 9, LAST, MLRT__OP_ACT, 1, 1, 1, NULL, ATTRS(SET(act.fn, MLRT__FN_ERF))},
    {"Gelu", 20, LAST, MLRT__OP_ACT, 1, 1, 1, NULL, ATTRS(SET(act.fn, MLRT__FN_GELU), ENUM("approximate", act.approximate, "none|tanh"))},
    {"Clip", 7, 10, MLRT__OP_ACT, 1, 1, 3, NULL, ATTRS(SET(act.fn, MLRT__FN_CLIP), IN_FLOAT("min", 1), IN_FLOAT("max", 2))},
    {"Clip", 11, LAST, MLRT__OP_ACT, 1, 3, 3, NULL, ATTRS(SET(act.fn, MLRT__FN_CLIP))},
    {"Softmax", 7, 12, MLRT__OP_SOFTMAX, 1, 1, 1, NULL, ATTRS(INT("axis", softmax.axis, 1), SET(softmax.flatten, 1))},
    {"Softmax", 13, LAST, MLRT__OP_SOFTMAX, 1, 1, 1, NULL, ATTRS(INT("axis", softmax.axis, -1))},
    {"LogSoftmax", 7, 12, MLRT__OP_SOFTMAX, 1, 1, 1, NULL,
     ATTRS(INT("axis", softmax.axis, 1), SET(softmax.flatten, 1), SET(softmax.log, 1))},
    {"LogSoftmax", 13, LAST, MLRT__OP_SOFTMAX, 1, 1, 1, NULL, ATTRS(INT("axis", softmax.axis, -1), SET(softmax.log, 1))},
    {"BatchNormalization", 7, LAST, MLRT__OP_BATCHNORM, 5, 5, 5, NULL,
     ATTRS(FLOAT("epsilon", norm.epsilon, 1e-5), ZERO("training_mode"))},
    {"LayerNormalization", 17, LAST, MLRT__OP_LAYERNORM, 1, 3, 3, NULL,
     ATTRS(INT("axis", norm.axis, -1), FLOAT("epsilon", norm.epsilon, 1e-5))},
    {"Flatten", 7, LAST, MLRT__OP_FLATTEN, 1, 1, 1, NULL, ATTRS(INT("axis", axis.axis, 1))},
    {"Reshape", 7, LAST, MLRT__OP_RESHAPE, 2, 2, 2, NULL, ATTRS(BOOL("allowzero", reshape.allow_zero))},
    {"Squeeze", 7, 12, MLRT__OP_SQUEEZE, 1, 1, 2, NULL, ATTRS(IN_INTS("axes", 1, false))},
    {"Squeeze", 13, LAST, MLRT__OP_SQUEEZE, 1, 2, 2, NULL, NONE},
    {"Unsqueeze", 7, 12, MLRT__OP_UNSQUEEZE, 1, 1, 2, NULL, ATTRS(IN_INTS("axes", 1, true))},
    {"Unsqueeze", 13, LAST, MLRT__OP_UNSQUEEZE, 2, 2, 2, NULL, NONE},
    {"Identity", 7, LAST, MLRT__OP_IDENTITY, 1, 1, 1, NULL, NONE},
    {"Dropout", 7, LAST, MLRT__OP_IDENTITY, 1, 3, 1, dropout_op, NONE},
    {"Transpose", 7, LAST, MLRT__OP_TRANSPOSE, 1, 1, 1, NULL, ATTRS(INTS("perm", transpose.perm, transpose.n_perm, false))},
    {"Concat", 7, LAST, MLRT__OP_CONCAT, 1, ANY, 0, NULL, ATTRS(INT_REQ("axis", axis.axis))},
    {"Pad", 7, 10, MLRT__OP_PAD, 1, 1, 4, NULL,
     ATTRS(ONLY("mode", "constant"), IN_INTS("pads", 1, true), IN_FLOAT("value", 2))},
    {"Pad", 11, LAST, MLRT__OP_PAD, 2, 4, 4, NULL, ATTRS(ONLY("mode", "constant"))},
    {"Slice", 7, 9, MLRT__OP_SLICE, 1, 1, 5, NULL,
     ATTRS(IN_INTS("starts", 1, true), IN_INTS("ends", 2, true), IN_INTS("axes", 3, false))},
    {"Slice", 10, LAST, MLRT__OP_SLICE, 3, 5, 5, NULL, NONE},
    {"Constant", 7, LAST, MLRT__OP_IDENTITY, 0, 0, 0, constant_op, NONE},
    {"Shape", 7, LAST, MLRT__OP_SHAPE, 1, 1, 1, NULL, ATTRS(INT("start", shape.start, 0), INT_OPT("end", shape.end, shape.has_end))},
    {"Gather", 7, LAST, MLRT__OP_GATHER, 2, 2, 2, NULL, ATTRS(INT("axis", axis.axis, 0))},
    {"Cast", 7, LAST, MLRT__OP_CAST, 1, 1, 1, NULL, ATTRS(DTYPE("to", cast.to))},
};

/* ------------------------------------------------------------------ the importer's state */

struct imp {
    mlrt__onnx *g;
    mlrt__ir_graph *ir;
    uint32_t cap_vals;
    uint32_t *io;                   /* [ir->n_ops][2]: where each op's in and out lists start in ids */
    uint32_t n_ids, cap_ids;
    char *str;                      /* the strings, as they are added */
    size_t n_str, cap_str;
    uint32_t node;
    mlrt_error *err;
};

static mlrt_status node_fail(imp *m, mlrt_status code, const char *fmt, ...) {
    const mlrt__onnx_node *nd = &m->g->nodes[m->node];
    char msg[224];
    va_list ap;
    va_start(ap, fmt);
    mlrt__vformat(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return mlrt__fail(m->err, code, "onnx: node %u (%.*s '%.*s'): %s", m->node, (int)(nd->op.n > 64 ? 64 : nd->op.n),
                      nd->op.p, (int)(nd->name.n > 64 ? 64 : nd->name.n), nd->name.p, msg);
}
#define OOM() node_fail(m, MLRT_ERR_OUT_OF_MEMORY, "out of memory")

/* s as a NUL-terminated string of the graph: its offset in the strings (the pointers are set at the end). */
static size_t add_str(imp *m, const char *s, size_t n) {
    if (m->n_str + n + 1 > m->cap_str) {
        size_t cap = m->cap_str ? 2 * m->cap_str : 4096;
        while (cap < m->n_str + n + 1) cap *= 2;
        char *p = realloc(m->str, cap);
        if (!p) return SIZE_MAX;
        m->str = p, m->cap_str = cap;
    }
    if (n) memcpy(m->str + m->n_str, s, n);
    m->str[m->n_str + n] = 0;
    m->n_str += n + 1;
    return m->n_str - n - 1;
}

/* A new value (its name's offset in the strings kept in .name until the end); -1: out of memory. */
static int32_t add_value(imp *m, mlrt__str name) {
    mlrt__ir_graph *ir = m->ir;
    if (ir->n_vals == m->cap_vals) {
        uint32_t cap = m->cap_vals ? 2 * m->cap_vals : 64;
        mlrt__ir_value *v = realloc(ir->vals, cap * sizeof *v);
        if (!v) return -1;
        ir->vals = v, m->cap_vals = cap;
    }
    size_t at = add_str(m, name.p, name.n);
    if (at == SIZE_MAX) return -1;
    mlrt__ir_value *v = &ir->vals[ir->n_vals];
    memset(v, 0, sizeof *v);
    v->name = (const char *)(uintptr_t)at;
    v->dtype = MLRT_DTYPE_COUNT_;
    v->rank = -1;
    return (int32_t)ir->n_vals++;
}

/* A new constant of rank (0 or 1) and count values that owns data (F32 or I64). */
static int32_t add_const(imp *m, mlrt_dtype dtype, uint32_t rank, uint64_t count, void *data) {
    int32_t v = add_value(m, (mlrt__str){"", 0});
    if (v < 0) { free(data); return -1; }
    mlrt__ir_value *c = &m->ir->vals[v];
    c->dtype = dtype, c->rank = (int32_t)rank, c->dims[0] = (int64_t)count, c->is_const = true, c->count = count;
    c->data = data;
    return v;
}

static mlrt_status grow_ids(imp *m, uint32_t n) {
    if (m->n_ids + n <= m->cap_ids) return MLRT_OK;
    uint32_t cap = m->cap_ids ? m->cap_ids : 256;
    while (cap < m->n_ids + n) cap *= 2;
    int32_t *p = realloc(m->ir->ids, cap * sizeof *p);
    if (!p) return OOM();
    m->ir->ids = p, m->cap_ids = cap;
    return MLRT_OK;
}

/* ------------------------------------------------------------------ attributes */

static const char *type_name(uint32_t t) {
    return t == MLRT__ATTR_INT ? "INT" : t == MLRT__ATTR_INTS ? "INTS" : t == MLRT__ATTR_FLOAT ? "FLOAT"
         : t == MLRT__ATTR_STRING ? "STRING" : "TENSOR";
}

/* choices' index of s ("A|B|C"), or -1 */
static int choice(const char *choices, mlrt__str s) {
    int k = 0;
    for (const char *c = choices;; k++) {
        const char *e = strchr(c, '|');
        size_t n = e ? (size_t)(e - c) : strlen(c);
        if (n == s.n && memcmp(c, s.p, n) == 0) return k;
        if (!e) return -1;
        c = e + 1;
    }
}

/* The ONNX TensorProto type `to` as the element type mlrt computes it in, or MLRT_DTYPE_COUNT_ */
static mlrt_dtype dtype_of(int64_t to) {
    return to == MLRT__ONNX_FLOAT || to == MLRT__ONNX_DOUBLE ? MLRT_F32
         : to == MLRT__ONNX_INT64 || to == MLRT__ONNX_INT32 ? MLRT_I64 : MLRT_DTYPE_COUNT_;
}

static mlrt_status apply(imp *m, const mlrt__onnx_node *nd, const attr_rule *r, mlrt__ir_op *op) {
    char *f = (char *)op + r->off;
    if (r->how == R_SET) { *(uint8_t *)f = (uint8_t)r->def; return MLRT_OK; }
    static const uint8_t want[] = {[R_INT] = MLRT__ATTR_INT, [R_INT_OPT] = MLRT__ATTR_INT, [R_BOOL] = MLRT__ATTR_INT,
                                   [R_FLOAT] = MLRT__ATTR_FLOAT, [R_INTS] = MLRT__ATTR_INTS, [R_ENUM] = MLRT__ATTR_STRING,
                                   [R_ONLY] = MLRT__ATTR_STRING, [R_ZERO] = MLRT__ATTR_INT, [R_DTYPE] = MLRT__ATTR_INT,
                                   [R_IN_INTS] = MLRT__ATTR_INTS, [R_IN_FLOAT] = MLRT__ATTR_FLOAT};
    const mlrt__onnx_attr *a = mlrt__onnx_attr_find(nd, r->name);
    if (a && a->type != want[r->how])
        return node_fail(m, MLRT_ERR_BAD_HEADER, "attribute '%s' has type %u, not %s", r->name, a->type, type_name(want[r->how]));
    if (!a && r->required) return node_fail(m, MLRT_ERR_BAD_HEADER, "attribute '%s' is required", r->name);
    switch ((how)r->how) {
    case R_INT: *(int64_t *)f = a ? a->i : (int64_t)r->def; break;
    case R_INT_OPT: *(int64_t *)f = a ? a->i : 0, *(bool *)((char *)op + r->aux) = a != NULL; break;
    case R_BOOL: *(bool *)f = a ? a->i != 0 : r->def != 0; break;
    case R_FLOAT: *(float *)f = a ? a->f : (float)r->def; break;
    case R_INTS: {
        uint32_t n = a ? a->n : 0;
        for (uint32_t k = 0; k < n && k < r->cap; k++) ((int64_t *)f)[k] = a->ints[k];
        *(uint8_t *)((char *)op + r->aux) = (uint8_t)(n > 255 ? 255 : n);
        break;
    }
    case R_ENUM: {
        int k = a ? choice(r->choices, a->s) : 0;
        if (k < 0)
            return node_fail(m, MLRT_ERR_BAD_HEADER, "%s '%.*s' is not one of %s", r->name, (int)(a->s.n > 32 ? 32 : a->s.n),
                             a->s.p, r->choices);
        *(uint8_t *)f = (uint8_t)k;
        break;
    }
    case R_ONLY:
        if (a && choice(r->choices, a->s) < 0)
            return node_fail(m, MLRT_ERR_UNSUPPORTED, "%s '%.*s'; mlrt runs %s only", r->name, (int)(a->s.n > 32 ? 32 : a->s.n),
                             a->s.p, r->choices);
        break;
    case R_ZERO:
        if (a && a->i != 0) return node_fail(m, MLRT_ERR_UNSUPPORTED, "%s = %lld; mlrt runs inference", r->name, (long long)a->i);
        break;
    case R_DTYPE:
        if ((*(mlrt_dtype *)f = dtype_of(a->i)) == MLRT_DTYPE_COUNT_)
            return node_fail(m, MLRT_ERR_UNSUPPORTED, "cast to data type %lld; mlrt casts to float, double, int32 and int64",
                             (long long)a->i);
        break;
    case R_IN_INTS: case R_IN_FLOAT: {
        if (!a) break;
        uint64_t n = r->how == R_IN_INTS ? a->n : 1;
        void *data = malloc(n * 8 + 8);
        if (!data) return OOM();
        if (r->how == R_IN_INTS) memcpy(data, a->ints, n * 8);
        else *(float *)data = a->f;
        int32_t v = add_const(m, r->how == R_IN_INTS ? MLRT_I64 : MLRT_F32, r->how == R_IN_INTS, n, data);
        if (v < 0) return OOM();
        m->ir->ids[m->io[2 * (m->ir->n_ops - 1)] + r->cap] = v;
        break;
    }
    default: break;
    }
    return MLRT_OK;
}

/* ------------------------------------------------------------------ special nodes */

static mlrt_status constant_op(imp *m, const mlrt__onnx_node *nd, mlrt__ir_op *op, bool *no_op) {
    *no_op = true;
    if (nd->n_attr != 1) return node_fail(m, MLRT_ERR_BAD_HEADER, "%u attributes; Constant takes exactly one", nd->n_attr);
    if (nd->n_out < 1 || nd->out[0] < 0) return node_fail(m, MLRT_ERR_BAD_HEADER, "no output");
    mlrt__onnx_attr *a = &nd->attr[0];
    mlrt__ir_value *v = &m->ir->vals[nd->out[0]];
    uint64_t n = 1;
    void *data = NULL;
    if (mlrt__str_eq(a->name, "value") && a->type == MLRT__ATTR_TENSOR) { /* taken from the parsed file */
        mlrt__onnx_tensor *t = a->t;
        v->dtype = t->type == MLRT__ONNX_INT64 ? MLRT_I64 : MLRT_F32, v->rank = (int32_t)t->rank, n = t->count;
        memcpy(v->dims, t->dims, sizeof t->dims);
        data = t->type == MLRT__ONNX_INT64 ? (void *)t->i : (void *)t->f;
        t->i = NULL, t->f = NULL;
    } else {
        bool ints = a->type == MLRT__ATTR_INT || a->type == MLRT__ATTR_INTS, list = a->type == MLRT__ATTR_INTS || a->type == MLRT__ATTR_FLOATS;
        bool ok = (mlrt__str_eq(a->name, "value_float") && a->type == MLRT__ATTR_FLOAT) ||
                  (mlrt__str_eq(a->name, "value_int") && a->type == MLRT__ATTR_INT) ||
                  (mlrt__str_eq(a->name, "value_floats") && a->type == MLRT__ATTR_FLOATS) ||
                  (mlrt__str_eq(a->name, "value_ints") && a->type == MLRT__ATTR_INTS);
        if (!ok)
            return node_fail(m, MLRT_ERR_UNSUPPORTED, "attribute '%.*s' of type %u; mlrt reads value, value_float(s) and "
                             "value_int(s)", (int)(a->name.n > 32 ? 32 : a->name.n), a->name.p, a->type);
        n = list ? a->n : 1;
        if (!(data = malloc(n * 8 + 8))) return OOM();
        if (ints) memcpy(data, list ? (void *)a->ints : (void *)&a->i, n * 8);
        else memcpy(data, list ? (void *)a->floats : (void *)&a->f, n * 4);
        v->dtype = ints ? MLRT_I64 : MLRT_F32, v->rank = list, v->dims[0] = (int64_t)n;
    }
    v->is_const = true, v->count = n, v->data = data;
    if (!data) return OOM();
    return MLRT_OK;
}

/* Dropout is the identity at inference: its training_mode (input 2), when given, must be a constant false. */
static mlrt_status dropout_op(imp *m, const mlrt__onnx_node *nd, mlrt__ir_op *op, bool *no_op) {
    if (nd->n_in < 3 || nd->in[2] < 0) return MLRT_OK;
    const mlrt__ir_value *t = &m->ir->vals[nd->in[2]];
    bool off = t->is_const && t->count == 1 &&
               (t->dtype == MLRT_I64 ? ((const int64_t *)t->data)[0] == 0 : ((const float *)t->data)[0] == 0.0f);
    return off ? MLRT_OK : node_fail(m, MLRT_ERR_UNSUPPORTED, "training_mode is not a constant false; mlrt runs inference");
}

/* ------------------------------------------------------------------ nodes */

static const op_rule *rule_of(const mlrt__onnx_node *nd, int64_t opset) {
    for (size_t k = 0; k < sizeof RULES / sizeof *RULES; k++)
        if (RULES[k].since <= opset && opset <= RULES[k].until && mlrt__str_eq(nd->op, RULES[k].name)) return &RULES[k];
    return NULL;
}

static mlrt_status import_node(imp *m) {
    mlrt__onnx_node *nd = &m->g->nodes[m->node];
    mlrt__ir_graph *ir = m->ir;
    if (nd->domain.n && !mlrt__str_eq(nd->domain, "ai.onnx"))
        return node_fail(m, MLRT_ERR_UNSUPPORTED, "domain '%.*s' (opset %lld): mlrt runs ai.onnx ops only",
                         (int)(nd->domain.n > 64 ? 64 : nd->domain.n), nd->domain.p, (long long)m->g->opset);
    const op_rule *r = rule_of(nd, m->g->opset);
    if (!r)
        return node_fail(m, MLRT_ERR_UNSUPPORTED, "op %.*s (opset %lld) is not one mlrt runs", (int)(nd->op.n > 64 ? 64 : nd->op.n),
                         nd->op.p, (long long)m->g->opset);
    if (nd->n_in < r->min_in || (r->max_in != ANY && nd->n_in > r->max_in))
        return node_fail(m, MLRT_ERR_BAD_HEADER, "%u inputs; the op takes %u to %u", nd->n_in, r->min_in,
                         r->max_in == ANY ? nd->n_in : r->max_in);
    for (uint32_t k = 0; k < r->min_in; k++)
        if (nd->in[k] < 0) return node_fail(m, MLRT_ERR_BAD_HEADER, "input %u is required", k);
    /* the op, its lists in ids: the node's inputs (as many as the op takes), then its outputs */
    uint32_t n_in = r->n_in ? r->n_in : nd->n_in;
    mlrt__ir_op *op = &ir->ops[ir->n_ops++];
    memset(op, 0, sizeof *op);
    op->kind = (mlrt__op_kind)r->kind, op->n_in = n_in, op->n_out = nd->n_out, op->node = m->node, op->type = r->name;
    TRY(grow_ids(m, n_in + nd->n_out));
    m->io[2 * (ir->n_ops - 1)] = m->n_ids, m->io[2 * (ir->n_ops - 1) + 1] = m->n_ids + n_in;
    for (uint32_t k = 0; k < n_in; k++) ir->ids[m->n_ids + k] = k < nd->n_in ? nd->in[k] : -1;
    for (uint32_t k = 0; k < nd->n_out; k++) ir->ids[m->n_ids + n_in + k] = nd->out[k];
    m->n_ids += n_in + nd->n_out;
    size_t at = add_str(m, nd->name.p, nd->name.n);
    if (at == SIZE_MAX) return OOM();
    op->name = (const char *)(uintptr_t)at;
    for (const attr_rule *a = r->a; a && a->how != R_END; a++) TRY(apply(m, nd, a, op));
    bool no_op = false;
    if (r->special) TRY(r->special(m, nd, op, &no_op));
    if (no_op) ir->n_ops--;
    return MLRT_OK;
}

/* ------------------------------------------------------------------ the graph's inputs and outputs */

/* The symbol named name (a new one if no dim has that name yet): its index; name empty: a new one
 * named "input:d". */
static int64_t symbol(imp *m, mlrt__str name, const mlrt__onnx_value *v, uint32_t d, size_t *syms, uint32_t *n_syms) {
    if (name.n)
        for (uint32_t k = 0; k < *n_syms; k++)
            if (strlen(m->str + syms[k]) == name.n && memcmp(m->str + syms[k], name.p, name.n) == 0) return MLRT__IR_SYM(k);
    size_t at;
    if (name.n) at = add_str(m, name.p, name.n);
    else {
        char s[96];
        int n = mlrt__format_to(s, sizeof s, "%.*s:%u", (int)(v->name.n > 64 ? 64 : v->name.n), v->name.p, d);
        at = add_str(m, s, (size_t)n);
    }
    if (at == SIZE_MAX) return INT64_MAX;
    syms[*n_syms] = at;
    return MLRT__IR_SYM((*n_syms)++);
}

static mlrt_status import_io(imp *m) {
    mlrt__onnx *g = m->g;
    mlrt__ir_graph *ir = m->ir;
    mlrt_error *err = m->err;
    size_t *syms = calloc((size_t)(g->n_inputs + g->n_outputs) * MLRT__MAX_RANK + 1, sizeof *syms);
    ir->inputs = calloc(g->n_inputs + 1, sizeof *ir->inputs);
    ir->outputs = calloc(g->n_outputs + 1, sizeof *ir->outputs);
    if (!syms || !ir->inputs || !ir->outputs) { free(syms); return FAIL(MLRT_ERR_OUT_OF_MEMORY, "onnx: out of memory"); }
    mlrt_status st = MLRT_OK;
    for (uint32_t k = 0; k < g->n_inputs + g->n_outputs && !st; k++) {
        bool in = k < g->n_inputs;
        int32_t id = in ? g->inputs[k] : g->outputs[k - g->n_inputs];
        const mlrt__onnx_value *ov = &g->values[id];
        mlrt__ir_value *v = &ir->vals[id];
        if (in) ir->inputs[ir->n_inputs++] = id;
        else ir->outputs[ir->n_outputs++] = id;
        if (v->is_const || (!in && ov->is_input)) continue; /* (an input's shape is its own) */
        v->dtype = ov->elem_type == MLRT__ONNX_FLOAT ? MLRT_F32 : ov->elem_type == MLRT__ONNX_INT64 ? MLRT_I64 : MLRT_DTYPE_COUNT_;
        if (in && v->dtype == MLRT_DTYPE_COUNT_)
            st = FAIL(MLRT_ERR_UNSUPPORTED, "onnx: graph input '%.*s' has element type %d; mlrt takes float and int64 inputs",
                      (int)(ov->name.n > 64 ? 64 : ov->name.n), ov->name.p, ov->elem_type);
        else if (in && ov->rank < 0)
            st = FAIL(MLRT_ERR_UNSUPPORTED, "onnx: graph input '%.*s' has no shape", (int)(ov->name.n > 64 ? 64 : ov->name.n),
                      ov->name.p);
        v->rank = ov->rank;
        for (int32_t d = 0; d < ov->rank && !st; d++) {
            v->dims[d] = ov->dims[d] >= 0 ? ov->dims[d] : symbol(m, ov->dim_name[d], ov, (uint32_t)d, syms, &ir->n_syms);
            if (v->dims[d] == INT64_MAX) st = FAIL(MLRT_ERR_OUT_OF_MEMORY, "onnx: out of memory");
        }
    }
    if (!st && !(ir->syms = calloc(ir->n_syms + 1, sizeof *ir->syms))) st = FAIL(MLRT_ERR_OUT_OF_MEMORY, "onnx: out of memory");
    for (uint32_t k = 0; !st && k < ir->n_syms; k++) ir->syms[k] = (const char *)(uintptr_t)syms[k];
    free(syms);
    return st;
}

/* ------------------------------------------------------------------ the whole graph */

mlrt_status mlrt__import_onnx(mlrt__onnx *g, mlrt__ir_graph *ir, mlrt_error *err) {
    memset(ir, 0, sizeof *ir);
    imp m = {0};
    m.g = g, m.ir = ir, m.err = err;
    ir->format = "onnx";
    add_str(&m, "", 0); /* (offset 0: the empty name) */
    ir->ops = calloc(g->n_nodes + 1, sizeof *ir->ops);
    m.io = calloc(2 * (size_t)g->n_nodes + 2, sizeof *m.io);
    mlrt_status st = ir->ops && m.io && m.str ? MLRT_OK : FAIL(MLRT_ERR_OUT_OF_MEMORY, "onnx: out of memory");
    /* the file's values, one for one: initializers (constants, their data taken), inputs, node outputs */
    for (uint32_t k = 0; !st && k < g->n_values; k++) {
        mlrt__onnx_value *ov = &g->values[k];
        if (add_value(&m, ov->name) < 0) { st = FAIL(MLRT_ERR_OUT_OF_MEMORY, "onnx: out of memory"); break; }
        mlrt__onnx_tensor *t = ov->init;
        if (!t || ov->is_input) continue;
        mlrt__ir_value *v = &ir->vals[k];
        v->dtype = t->type == MLRT__ONNX_INT64 ? MLRT_I64 : MLRT_F32, v->rank = (int32_t)t->rank, v->count = t->count;
        memcpy(v->dims, t->dims, sizeof t->dims);
        v->is_const = true;
        v->data = t->type == MLRT__ONNX_INT64 ? (void *)t->i : (void *)t->f;
        t->i = NULL, t->f = NULL;
        if (!v->data) v->data = malloc(8); /* (an empty tensor) */
        if (!v->data) st = FAIL(MLRT_ERR_OUT_OF_MEMORY, "onnx: out of memory");
    }
    for (m.node = 0; !st && m.node < g->n_nodes; m.node++) st = import_node(&m);
    if (!st) st = import_io(&m);
    if (!st && !(ir->facts_json = mlrt__onnx_describe(g))) st = FAIL(MLRT_ERR_OUT_OF_MEMORY, "onnx: out of memory");
    /* the strings and lists in place */
    ir->strings = m.str;
    for (uint32_t k = 0; k < ir->n_vals; k++) ir->vals[k].name = m.str + (uintptr_t)ir->vals[k].name;
    for (uint32_t k = 0; k < ir->n_ops; k++) {
        ir->ops[k].name = m.str + (uintptr_t)ir->ops[k].name;
        ir->ops[k].in = ir->ids + m.io[2 * k], ir->ops[k].out = ir->ids + m.io[2 * k + 1];
    }
    for (uint32_t k = 0; ir->syms && k < ir->n_syms; k++) ir->syms[k] = m.str + (uintptr_t)ir->syms[k];
    free(m.io);
    if (st) mlrt__ir_graph_free(ir);
    return st;
}
