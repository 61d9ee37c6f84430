/* formats/onnx.c — ONNX ModelProto: the messages mlrt reads, checked whole before anything runs.
 *
 * Read: ModelProto (ir_version, opset_import, graph), GraphProto (node, initializer, input, output;
 * value_info is skipped: mlrt infers every shape itself), NodeProto, AttributeProto, TensorProto
 * (raw_data little endian, or the typed repeated fields, packed or not), ValueInfoProto/TypeProto
 * (tensor element type and static shape, symbolic dimensions allowed). Refused: external data,
 * sparse initializers, subgraph attributes, element types other than float, double and int64,
 * names defined twice, inputs used before they are defined (which also refuses cycles). */
#include "formats.h"
#include <stdlib.h>
#include <string.h>

#define FAIL(code, ...) mlrt__fail(err, code, __VA_ARGS__)
#define TRY(x) do { mlrt_status st_ = (x); if (st_) return st_; } while (0)

bool mlrt__str_eq(mlrt__str s, const char *c) { return strlen(c) == s.n && memcmp(s.p, c, s.n) == 0; }

static mlrt_status read_str(mlrt__pb *pb, uint32_t wire, const char *field, mlrt__str *s, mlrt_error *err) {
    TRY(mlrt__pb_expect(pb, wire, MLRT__PB_LEN, field, err));
    const uint8_t *d;
    size_t n;
    TRY(mlrt__pb_bytes(pb, &d, &n, err));
    if (n > UINT32_MAX || !mlrt__utf8_valid(d, n))
        return FAIL(MLRT_ERR_INVALID_UTF8, "onnx: %s before byte %zu is not UTF-8", field, mlrt__pb_offset(pb));
    s->p = (const char *)d;
    s->n = (uint32_t)n;
    return MLRT_OK;
}

static mlrt_status read_int(mlrt__pb *pb, uint32_t wire, const char *field, int64_t *v, mlrt_error *err) {
    TRY(mlrt__pb_expect(pb, wire, MLRT__PB_VARINT, field, err));
    uint64_t u;
    TRY(mlrt__pb_varint(pb, &u, err));
    *v = (int64_t)u;
    return MLRT_OK;
}

/* One element of a repeated int64 (varint) or float (fixed32) field. */
static mlrt_status element(mlrt__pb *pb, bool is_float, uint64_t *count, void *out, mlrt_error *err) {
    if (is_float) {
        uint32_t u;
        TRY(mlrt__pb_fixed32(pb, &u, err));
        if (out) memcpy((float *)out + *count, &u, 4);
    } else {
        uint64_t u;
        TRY(mlrt__pb_varint(pb, &u, err));
        if (out) ((int64_t *)out)[*count] = (int64_t)u;
    }
    ++*count;
    return MLRT_OK;
}

/* One occurrence of a repeated int64 or float field, packed or not: out NULL counts its elements
 * into *count; else they are stored from out[*count] on. */
static mlrt_status repeated(mlrt__pb *pb, uint32_t wire, bool is_float, const char *field, uint64_t *count,
                            void *out, mlrt_error *err) {
    if (wire != MLRT__PB_LEN) {
        TRY(mlrt__pb_expect(pb, wire, is_float ? MLRT__PB_I32 : MLRT__PB_VARINT, field, err));
        return element(pb, is_float, count, out, err);
    }
    mlrt__pb sub = *pb;
    const uint8_t *d;
    size_t n;
    TRY(mlrt__pb_bytes(pb, &d, &n, err));
    sub.p = d, sub.end = d + n;
    if (is_float && n % 4)
        return FAIL(MLRT_ERR_BAD_HEADER, "onnx: packed %s before byte %zu has %zu bytes, not whole floats", field,
                    mlrt__pb_offset(pb), n);
    if (is_float && !out) { *count += n / 4; return MLRT_OK; }
    while (sub.p < sub.end) TRY(element(&sub, is_float, count, out, err));
    return MLRT_OK;
}

/* double_data (packed fixed64 or single): counted or appended as float. */
static mlrt_status repeated_f64(mlrt__pb *pb, uint32_t wire, uint64_t *count, float *out, mlrt_error *err) {
    mlrt__pb sub = *pb;
    if (wire == MLRT__PB_LEN) {
        const uint8_t *d;
        size_t n;
        TRY(mlrt__pb_bytes(pb, &d, &n, err));
        sub.p = d, sub.end = d + n;
        if (n % 8) return FAIL(MLRT_ERR_BAD_HEADER, "onnx: packed TensorProto.double_data has %zu bytes, not whole doubles", n);
    } else {
        TRY(mlrt__pb_expect(pb, wire, MLRT__PB_I64, "TensorProto.double_data", err));
        sub.end = pb->end - pb->p >= 8 ? pb->p + 8 : pb->end;
        pb->p = sub.end;
    }
    while (sub.p < sub.end) {
        uint64_t u;
        double v;
        TRY(mlrt__pb_fixed64(&sub, &u, err));
        memcpy(&v, &u, 8);
        if (out) out[*count] = (float)v;
        ++*count;
    }
    return MLRT_OK;
}

/* ------------------------------------------------------------------ TensorProto */

/* what: "initializer 3" or "node 5 (Constant) attribute 'value'", for messages. */
static mlrt_status read_tensor(mlrt__pb pb, const char *what, mlrt__onnx_tensor *t, mlrt_error *err) {
    uint32_t field, wire;
    int r;
    const uint8_t *raw = NULL;
    size_t raw_n = 0;
    uint64_t n_typed = 0;
    bool have_raw = false, external = false;
    int64_t dt = 0;
    mlrt__pb start = pb;
    memset(t, 0, sizeof *t);
    /* pass 1: dims, type, name, where the data is */
    while ((r = mlrt__pb_next(&pb, &field, &wire, err)) > 0) {
        switch (field) {
        case 1: { /* dims */
            uint64_t before = t->rank;
            mlrt__pb probe = pb;
            uint64_t c = before;
            TRY(repeated(&probe, wire, false, "TensorProto.dims", &c, NULL, err));
            if (c > MLRT__MAX_RANK)
                return FAIL(MLRT_ERR_BAD_DIMENSIONS, "onnx: %s has more than %d dims", what, MLRT__MAX_RANK);
            TRY(repeated(&pb, wire, false, "TensorProto.dims", &before, t->dims, err));
            t->rank = (uint32_t)before;
            break;
        }
        case 2: TRY(read_int(&pb, wire, "TensorProto.data_type", &dt, err)); break;
        case 8: TRY(read_str(&pb, wire, "TensorProto.name", &t->name, err)); break;
        case 9:
            TRY(mlrt__pb_expect(&pb, wire, MLRT__PB_LEN, "TensorProto.raw_data", err));
            TRY(mlrt__pb_bytes(&pb, &raw, &raw_n, err));
            have_raw = true;
            break;
        case 4: TRY(repeated(&pb, wire, true, "TensorProto.float_data", &n_typed, NULL, err)); break;
        case 7: TRY(repeated(&pb, wire, false, "TensorProto.int64_data", &n_typed, NULL, err)); break;
        case 10: TRY(repeated_f64(&pb, wire, &n_typed, NULL, err)); break;
        case 13: external = true; TRY(mlrt__pb_skip(&pb, wire, err)); break;
        case 14: { int64_t loc; TRY(read_int(&pb, wire, "TensorProto.data_location", &loc, err)); external |= loc == 1; break; }
        case 3: return FAIL(MLRT_ERR_UNSUPPORTED, "onnx: %s is segmented, which mlrt does not read", what);
        default: TRY(mlrt__pb_skip(&pb, wire, err)); break;
        }
    }
    if (r < 0) return err->code;
    if (external)
        return FAIL(MLRT_ERR_UNSUPPORTED, "onnx: %s '%.*s' keeps its data in an external file, which mlrt does not read",
                    what, (int)t->name.n, t->name.p);
    if (dt != MLRT__ONNX_FLOAT && dt != MLRT__ONNX_INT64 && dt != MLRT__ONNX_DOUBLE)
        return FAIL(MLRT_ERR_UNKNOWN_DTYPE, "onnx: %s '%.*s' has data type %lld; mlrt reads float, double and int64", what,
                    (int)t->name.n, t->name.p, (long long)dt);
    uint64_t count = 1;
    for (uint32_t d = 0; d < t->rank; d++) {
        if (t->dims[d] < 0)
            return FAIL(MLRT_ERR_BAD_DIMENSIONS, "onnx: %s '%.*s' has dim %u = %lld", what, (int)t->name.n, t->name.p, d,
                        (long long)t->dims[d]);
        if (!mlrt__mul_u64(count, (uint64_t)t->dims[d], &count) || count > MLRT__MAX_PARAMS)
            return FAIL(MLRT_ERR_SHAPE_OVERFLOW, "onnx: %s '%.*s' has more than %llu elements", what, (int)t->name.n,
                        t->name.p, (unsigned long long)MLRT__MAX_PARAMS);
    }
    t->count = count;
    t->at = have_raw ? (size_t)(raw - start.base) : (size_t)(start.p - start.base);
    t->bytes = have_raw ? raw_n : (size_t)(start.end - start.p);
    size_t es = dt == MLRT__ONNX_FLOAT ? 4 : 8;
    uint64_t have = have_raw ? raw_n : n_typed;
    if (have_raw && n_typed)
        return FAIL(MLRT_ERR_BAD_HEADER, "onnx: %s '%.*s' has both raw_data and typed data", what, (int)t->name.n, t->name.p);
    if ((have_raw && raw_n != count * es) || (!have_raw && n_typed != count))
        return FAIL(have < (have_raw ? count * es : count) ? MLRT_ERR_TRUNCATED : MLRT_ERR_SIZE_MISMATCH,
                    "onnx: %s '%.*s' has dims of %llu elements but %llu %s of data", what, (int)t->name.n, t->name.p,
                    (unsigned long long)count, (unsigned long long)have, have_raw ? "bytes" : "values");
    t->type = dt == MLRT__ONNX_INT64 ? MLRT__ONNX_INT64 : MLRT__ONNX_FLOAT;
    size_t bytes = (size_t)(count ? count : 1) * (t->type == MLRT__ONNX_FLOAT ? 4 : 8);
    void *data = malloc(bytes);
    if (!data) return FAIL(MLRT_ERR_OUT_OF_MEMORY, "onnx: out of memory for %s", what);
    if (t->type == MLRT__ONNX_FLOAT) t->f = data;
    else t->i = data;
    if (have_raw) {
        if (dt == MLRT__ONNX_DOUBLE) mlrt__to_f32_n(raw, MLRT_F64, t->f, count);
        else memcpy(data, raw, count * es); /* little endian, as the file */
        return MLRT_OK;
    }
    /* pass 2: the typed values */
    uint64_t k = 0;
    pb = start;
    while ((r = mlrt__pb_next(&pb, &field, &wire, err)) > 0) {
        if (field == 4 && dt == MLRT__ONNX_FLOAT) TRY(repeated(&pb, wire, true, "", &k, t->f, err));
        else if (field == 7 && dt == MLRT__ONNX_INT64) TRY(repeated(&pb, wire, false, "", &k, t->i, err));
        else if (field == 10 && dt == MLRT__ONNX_DOUBLE) TRY(repeated_f64(&pb, wire, &k, t->f, err));
        else if (field == 4 || field == 7 || field == 10)
            return FAIL(MLRT_ERR_BAD_HEADER, "onnx: %s '%.*s' of data type %lld stores its values in the wrong field",
                        what, (int)t->name.n, t->name.p, (long long)dt);
        else TRY(mlrt__pb_skip(&pb, wire, err));
    }
    return r < 0 ? err->code : MLRT_OK;
}

static void tensor_free(mlrt__onnx_tensor *t) {
    if (!t) return;
    free(t->f);
    free(t->i);
}

/* ------------------------------------------------------------------ AttributeProto */

static mlrt_status read_attr(mlrt__pb pb, const char *what, mlrt__onnx_attr *a, mlrt_error *err) {
    uint32_t field, wire;
    int r;
    int64_t type = 0;
    uint64_t nf = 0, ni = 0;
    mlrt__pb start = pb;
    bool has_t = false;
    mlrt__pb tpb = {0};
    memset(a, 0, sizeof *a);
    while ((r = mlrt__pb_next(&pb, &field, &wire, err)) > 0) {
        switch (field) {
        case 1: TRY(read_str(&pb, wire, "AttributeProto.name", &a->name, err)); break;
        case 2: {
            TRY(mlrt__pb_expect(&pb, wire, MLRT__PB_I32, "AttributeProto.f", err));
            uint32_t u;
            TRY(mlrt__pb_fixed32(&pb, &u, err));
            memcpy(&a->f, &u, 4);
            break;
        }
        case 3: TRY(read_int(&pb, wire, "AttributeProto.i", &a->i, err)); break;
        case 4: TRY(read_str(&pb, wire, "AttributeProto.s", &a->s, err)); break;
        case 5:
            TRY(mlrt__pb_expect(&pb, wire, MLRT__PB_LEN, "AttributeProto.t", err));
            TRY(mlrt__pb_message(&pb, &tpb, err));
            has_t = true;
            break;
        case 7: TRY(repeated(&pb, wire, true, "AttributeProto.floats", &nf, NULL, err)); break;
        case 8: TRY(repeated(&pb, wire, false, "AttributeProto.ints", &ni, NULL, err)); break;
        case 20: TRY(read_int(&pb, wire, "AttributeProto.type", &type, err)); break;
        default: TRY(mlrt__pb_skip(&pb, wire, err)); break;
        }
    }
    if (r < 0) return err->code;
    if (!a->name.n) return FAIL(MLRT_ERR_BAD_HEADER, "onnx: %s has an attribute without a name", what);
    a->type = (uint32_t)type;
    bool ok = (type == MLRT__ATTR_TENSOR) == has_t && (type == MLRT__ATTR_FLOATS || !nf) && (type == MLRT__ATTR_INTS || !ni);
    if (type == 0 || type > 14 || !ok)
        return FAIL(MLRT_ERR_BAD_HEADER, "onnx: %s attribute '%.*s' has type %lld, which does not match its value", what,
                    (int)a->name.n, a->name.p, (long long)type);
    if (type == MLRT__ATTR_TENSOR) {
        if (!(a->t = calloc(1, sizeof *a->t))) return FAIL(MLRT_ERR_OUT_OF_MEMORY, "onnx: out of memory");
        char w[96];
        mlrt__format_to(w, sizeof w, "%s attribute '%.*s'", what, (int)a->name.n, a->name.p);
        TRY(read_tensor(tpb, w, a->t, err));
    }
    if (nf || ni) {
        a->n = (uint32_t)(nf + ni);
        void *arr = malloc(a->n * (nf ? 4 : 8));
        if (!arr) return FAIL(MLRT_ERR_OUT_OF_MEMORY, "onnx: out of memory");
        if (nf) a->floats = arr;
        else a->ints = arr;
        uint64_t k = 0;
        pb = start;
        while ((r = mlrt__pb_next(&pb, &field, &wire, err)) > 0) {
            if (field == 7) TRY(repeated(&pb, wire, true, "", &k, a->floats, err));
            else if (field == 8) TRY(repeated(&pb, wire, false, "", &k, a->ints, err));
            else TRY(mlrt__pb_skip(&pb, wire, err));
        }
    }
    return MLRT_OK;
}

static void attr_free(mlrt__onnx_attr *a) {
    free(a->floats);
    free(a->ints);
    if (a->t) tensor_free(a->t);
    free(a->t);
}

const mlrt__onnx_attr *mlrt__onnx_attr_find(const mlrt__onnx_node *node, const char *name) {
    for (uint32_t k = 0; k < node->n_attr; k++)
        if (mlrt__str_eq(node->attr[k].name, name)) return &node->attr[k];
    return NULL;
}

/* ------------------------------------------------------------------ names -> value ids */

typedef struct names {
    int32_t *slot;              /* [cap] value id + 1, 0: empty */
    uint32_t cap;
    const mlrt__onnx *g;
} names;

static uint32_t hash(mlrt__str s) {
    uint32_t h = 2166136261u;
    for (uint32_t k = 0; k < s.n; k++) h = (h ^ (uint8_t)s.p[k]) * 16777619u;
    return h;
}

static int32_t names_find(const names *t, mlrt__str s) {
    for (uint32_t k = hash(s) & (t->cap - 1);; k = (k + 1) & (t->cap - 1)) {
        int32_t v = t->slot[k] - 1;
        if (v < 0) return -1;
        mlrt__str o = t->g->values[v].name;
        if (o.n == s.n && memcmp(o.p, s.p, s.n) == 0) return v;
    }
}

static void names_add(names *t, mlrt__str s, int32_t v) {
    uint32_t k = hash(s) & (t->cap - 1);
    while (t->slot[k]) k = (k + 1) & (t->cap - 1);
    t->slot[k] = v + 1;
}

/* ------------------------------------------------------------------ NodeProto, ValueInfoProto */

/* Reads a node; its input and output names are resolved later (strs: [n_in + n_out]). */
static mlrt_status read_node(mlrt__pb pb, uint32_t idx, mlrt__onnx_node *nd, mlrt__str **strs, mlrt_error *err) {
    uint32_t field, wire;
    int r;
    mlrt__pb start = pb;
    memset(nd, 0, sizeof *nd);
    while ((r = mlrt__pb_next(&pb, &field, &wire, err)) > 0) {
        if (field == 1 || field == 2 || field == 5) {
            TRY(mlrt__pb_expect(&pb, wire, MLRT__PB_LEN, field == 5 ? "NodeProto.attribute" : "NodeProto.input/output", err));
            if (field == 1) nd->n_in++;
            else if (field == 2) nd->n_out++;
            else nd->n_attr++;
        }
        if (field == 3) TRY(read_str(&pb, wire, "NodeProto.name", &nd->name, err));
        else if (field == 4) TRY(read_str(&pb, wire, "NodeProto.op_type", &nd->op, err));
        else if (field == 7) TRY(read_str(&pb, wire, "NodeProto.domain", &nd->domain, err));
        else TRY(mlrt__pb_skip(&pb, wire, err));
    }
    if (r < 0) return err->code;
    if (!nd->op.n) return FAIL(MLRT_ERR_BAD_HEADER, "onnx: node %u has no op_type", idx);
    *strs = calloc(nd->n_in + nd->n_out + 1, sizeof **strs);
    nd->in = calloc(nd->n_in + 1, sizeof *nd->in);
    nd->out = calloc(nd->n_out + 1, sizeof *nd->out);
    nd->attr = calloc(nd->n_attr + 1, sizeof *nd->attr);
    if (!*strs || !nd->in || !nd->out || !nd->attr) return FAIL(MLRT_ERR_OUT_OF_MEMORY, "onnx: out of memory");
    char what[96];
    mlrt__format_to(what, sizeof what, "node %u (%.*s)", idx, (int)nd->op.n, nd->op.p);
    uint32_t ni = 0, no = 0, na = 0;
    pb = start;
    while ((r = mlrt__pb_next(&pb, &field, &wire, err)) > 0) {
        if (field == 1) TRY(read_str(&pb, wire, "NodeProto.input", &(*strs)[ni++], err));
        else if (field == 2) TRY(read_str(&pb, wire, "NodeProto.output", &(*strs)[nd->n_in + no++], err));
        else if (field == 5) {
            mlrt__pb sub;
            TRY(mlrt__pb_message(&pb, &sub, err));
            mlrt_status st = read_attr(sub, what, &nd->attr[na], err);
            na++;
            if (st) { nd->n_attr = na; return st; }
        } else TRY(mlrt__pb_skip(&pb, wire, err));
    }
    for (uint32_t a = 0; a < na; a++)
        for (uint32_t b = 0; b < a; b++)
            if (nd->attr[a].name.n == nd->attr[b].name.n && !memcmp(nd->attr[a].name.p, nd->attr[b].name.p, nd->attr[a].name.n))
                return FAIL(MLRT_ERR_DUPLICATE_KEY, "onnx: %s has attribute '%.*s' twice", what, (int)nd->attr[a].name.n,
                            nd->attr[a].name.p);
    return r < 0 ? err->code : MLRT_OK;
}

/* ValueInfoProto of a graph input or output: its name, element type and shape. */
static mlrt_status read_value_info(mlrt__pb pb, mlrt__onnx_value *v, mlrt_error *err) {
    uint32_t field, wire;
    int r;
    v->rank = -1;
    while ((r = mlrt__pb_next(&pb, &field, &wire, err)) > 0) {
        if (field == 1) { TRY(read_str(&pb, wire, "ValueInfoProto.name", &v->name, err)); continue; }
        if (field != 2) { TRY(mlrt__pb_skip(&pb, wire, err)); continue; }
        mlrt__pb type, tt;
        TRY(mlrt__pb_expect(&pb, wire, MLRT__PB_LEN, "ValueInfoProto.type", err));
        TRY(mlrt__pb_message(&pb, &type, err));
        while ((r = mlrt__pb_next(&type, &field, &wire, err)) > 0) {
            if (field != 1) {
                if (field == 4 || field == 5 || field == 8 || field == 9)
                    return FAIL(MLRT_ERR_UNSUPPORTED, "onnx: graph input or output '%.*s' is not a tensor (TypeProto field %u)",
                                (int)v->name.n, v->name.p, field);
                TRY(mlrt__pb_skip(&type, wire, err));
                continue;
            }
            TRY(mlrt__pb_expect(&type, wire, MLRT__PB_LEN, "TypeProto.tensor_type", err));
            TRY(mlrt__pb_message(&type, &tt, err));
            while ((r = mlrt__pb_next(&tt, &field, &wire, err)) > 0) {
                if (field == 1) { int64_t e; TRY(read_int(&tt, wire, "TypeProto.Tensor.elem_type", &e, err)); v->elem_type = (int32_t)e; continue; }
                if (field != 2) { TRY(mlrt__pb_skip(&tt, wire, err)); continue; }
                mlrt__pb shape, dim;
                TRY(mlrt__pb_expect(&tt, wire, MLRT__PB_LEN, "TypeProto.Tensor.shape", err));
                TRY(mlrt__pb_message(&tt, &shape, err));
                v->rank = 0;
                while ((r = mlrt__pb_next(&shape, &field, &wire, err)) > 0) {
                    if (field != 1) { TRY(mlrt__pb_skip(&shape, wire, err)); continue; }
                    TRY(mlrt__pb_expect(&shape, wire, MLRT__PB_LEN, "TensorShapeProto.dim", err));
                    TRY(mlrt__pb_message(&shape, &dim, err));
                    if (v->rank == MLRT__MAX_RANK)
                        return FAIL(MLRT_ERR_BAD_DIMENSIONS, "onnx: graph input or output '%.*s' has more than %d dims",
                                    (int)v->name.n, v->name.p, MLRT__MAX_RANK);
                    int64_t dv = -1;
                    mlrt__str dp = {"", 0};
                    while ((r = mlrt__pb_next(&dim, &field, &wire, err)) > 0) {
                        if (field == 1) TRY(read_int(&dim, wire, "Dimension.dim_value", &dv, err));
                        else if (field == 2) TRY(read_str(&dim, wire, "Dimension.dim_param", &dp, err));
                        else TRY(mlrt__pb_skip(&dim, wire, err));
                    }
                    if (r < 0) return err->code;
                    if (dv < -1 || dv > (int64_t)MLRT__MAX_PARAMS)
                        return FAIL(MLRT_ERR_BAD_DIMENSIONS, "onnx: graph input or output '%.*s' has dim %d = %lld",
                                    (int)v->name.n, v->name.p, v->rank, (long long)dv);
                    v->dim_name[v->rank] = dv < 0 ? dp : (mlrt__str){"", 0};
                    v->dims[v->rank++] = dv;
                }
                if (r < 0) return err->code;
            }
            if (r < 0) return err->code;
        }
        if (r < 0) return err->code;
    }
    if (r < 0) return err->code;
    if (!v->name.n) return FAIL(MLRT_ERR_BAD_HEADER, "onnx: a graph input or output has no name");
    return MLRT_OK;
}

/* ------------------------------------------------------------------ GraphProto, ModelProto */

static mlrt_status read_graph(mlrt__pb pb, mlrt__onnx *g, mlrt_error *err) {
    uint32_t field, wire, n_node = 0, n_in = 0, n_out = 0, n_init = 0;
    int r;
    mlrt__pb start = pb;
    while ((r = mlrt__pb_next(&pb, &field, &wire, err)) > 0) {
        if (field == 1 || field == 5 || field == 11 || field == 12 || field == 15)
            TRY(mlrt__pb_expect(&pb, wire, MLRT__PB_LEN, "a GraphProto list", err));
        n_node += field == 1, n_init += field == 5, n_in += field == 11, n_out += field == 12;
        if (field == 15) return FAIL(MLRT_ERR_UNSUPPORTED, "onnx: the graph has sparse initializers, which mlrt does not read");
        if (field == 2) TRY(read_str(&pb, wire, "GraphProto.name", &g->graph_name, err));
        else TRY(mlrt__pb_skip(&pb, wire, err));
    }
    if (r < 0) return err->code;
    if (n_node > MLRT__ONNX_MAX_NODES || n_init > MLRT__MAX_TENSORS || n_in > MLRT__MAX_TENSORS || n_out > MLRT__MAX_TENSORS)
        return FAIL(MLRT_ERR_BAD_DIMENSIONS, "onnx: the graph has %u nodes and %u initializers; mlrt reads at most %u and %u",
                    n_node, n_init, MLRT__ONNX_MAX_NODES, MLRT__MAX_TENSORS);
    if (!n_node) return FAIL(MLRT_ERR_NOT_A_MODEL, "onnx: the graph has no nodes");
    if (!n_out) return FAIL(MLRT_ERR_NOT_A_MODEL, "onnx: the graph has no outputs");
    g->nodes = calloc(n_node, sizeof *g->nodes);
    g->inits = calloc(n_init + 1, sizeof *g->inits);
    mlrt__onnx_value *ins = calloc(n_in + 1, sizeof *ins), *outs = calloc(n_out, sizeof *outs);
    mlrt__str **strs = calloc(n_node, sizeof *strs);
    mlrt_status st = MLRT_OK;
    names tab = {0};
    if (!g->nodes || !g->inits || !ins || !outs || !strs) { st = FAIL(MLRT_ERR_OUT_OF_MEMORY, "onnx: out of memory"); goto done; }
    /* pass 2: the lists */
    uint32_t kn = 0, ki = 0, kin = 0, kout = 0;
    pb = start;
    while ((r = mlrt__pb_next(&pb, &field, &wire, err)) > 0) {
        mlrt__pb sub;
        if (field != 1 && field != 5 && field != 11 && field != 12) { if ((st = mlrt__pb_skip(&pb, wire, err))) goto done; continue; }
        if ((st = mlrt__pb_message(&pb, &sub, err))) goto done;
        if (field == 1) st = read_node(sub, kn, &g->nodes[kn], &strs[kn], err), kn++, g->n_nodes = kn;
        else if (field == 5) {
            char what[32];
            mlrt__format_to(what, sizeof what, "initializer %u", ki);
            st = read_tensor(sub, what, &g->inits[ki], err), g->n_init = ++ki;
            if (!st && !g->inits[ki - 1].name.n) st = FAIL(MLRT_ERR_BAD_HEADER, "onnx: initializer %u has no name", ki - 1);
        } else if (field == 11) st = read_value_info(sub, &ins[kin++], err);
        else st = read_value_info(sub, &outs[kout++], err);
        if (st) goto done;
    }
    if (r < 0) { st = err->code; goto done; }
    /* values: initializers, inputs without one, then node outputs */
    uint64_t n_vals = n_init + n_in;
    for (uint32_t k = 0; k < n_node; k++) n_vals += g->nodes[k].n_out;
    if (n_vals > (1u << 24)) { st = FAIL(MLRT_ERR_BAD_DIMENSIONS, "onnx: the graph defines %llu values", (unsigned long long)n_vals); goto done; }
    uint32_t cap = 16;
    while (cap < 2 * n_vals) cap <<= 1;
    g->values = calloc(n_vals + 1, sizeof *g->values);
    g->inputs = calloc(n_in + 1, sizeof *g->inputs);
    g->outputs = calloc(n_out, sizeof *g->outputs);
    tab.slot = calloc(cap, sizeof *tab.slot), tab.cap = cap, tab.g = g;
    if (!g->values || !g->inputs || !g->outputs || !tab.slot) { st = FAIL(MLRT_ERR_OUT_OF_MEMORY, "onnx: out of memory"); goto done; }
#define DEFINE(nm_, what_, ...) do {                                                                    \
        if (names_find(&tab, nm_) >= 0) {                                                               \
            st = FAIL(MLRT_ERR_BAD_HEADER, "onnx: '%.*s' is defined twice (again as " what_ ")", (int)(nm_).n, \
                      (nm_).p, __VA_ARGS__);                                                            \
            goto done;                                                                                  \
        }                                                                                               \
        g->values[g->n_values].name = nm_;                                                              \
        names_add(&tab, nm_, (int32_t)g->n_values);                                                     \
    } while (0)
    for (uint32_t k = 0; k < n_init; k++) {
        DEFINE(g->inits[k].name, "initializer %u", k);
        g->values[g->n_values].producer = -1;
        g->values[g->n_values++].init = &g->inits[k];
    }
    for (uint32_t k = 0; k < n_in; k++) {
        int32_t v = names_find(&tab, ins[k].name);
        if (v >= 0 && g->values[v].init && !g->values[v].is_input) continue; /* an initializer's declaration (IR < 4) */
        DEFINE(ins[k].name, "graph input %u", k);
        ins[k].producer = -1;
        ins[k].is_input = true;
        g->inputs[g->n_inputs++] = (int32_t)g->n_values;
        g->values[g->n_values++] = ins[k];
    }
    for (uint32_t k = 0; k < n_node; k++) {
        mlrt__onnx_node *nd = &g->nodes[k];
        for (uint32_t i = 0; i < nd->n_in; i++) {
            mlrt__str s = strs[k][i];
            nd->in[i] = s.n ? names_find(&tab, s) : -1;
            if (s.n && nd->in[i] < 0) {
                st = FAIL(MLRT_ERR_BAD_HEADER, "onnx: node %u (%.*s '%.*s') reads '%.*s', which no initializer, graph input "
                          "or earlier node defines",
                          k, (int)nd->op.n, nd->op.p, (int)nd->name.n, nd->name.p, (int)s.n, s.p);
                goto done;
            }
        }
        for (uint32_t o = 0; o < nd->n_out; o++) {
            mlrt__str s = strs[k][nd->n_in + o];
            nd->out[o] = -1;
            if (!s.n) continue;
            DEFINE(s, "output %u of node %u", o, k);
            g->values[g->n_values].producer = (int32_t)k;
            g->values[g->n_values].rank = -1;
            nd->out[o] = (int32_t)g->n_values++;
        }
    }
    for (uint32_t k = 0; k < n_out; k++) {
        int32_t v = names_find(&tab, outs[k].name);
        if (v < 0) {
            st = FAIL(MLRT_ERR_BAD_HEADER, "onnx: graph output '%.*s' is not defined in the graph", (int)outs[k].name.n, outs[k].name.p);
            goto done;
        }
        g->outputs[g->n_outputs++] = v;
        if (!g->values[v].is_input) {
            g->values[v].elem_type = outs[k].elem_type;
            g->values[v].rank = outs[k].rank;
            memcpy(g->values[v].dims, outs[k].dims, sizeof outs[k].dims);
            memcpy(g->values[v].dim_name, outs[k].dim_name, sizeof outs[k].dim_name);
        }
    }
#undef DEFINE
done:
    if (strs) for (uint32_t k = 0; k < n_node; k++) free(strs[k]);
    free(strs);
    free(ins);
    free(outs);
    free(tab.slot);
    return st;
}

static const uint8_t model_wire[26] = { /* ModelProto fields 1..25: the wire type + 1 (0: unknown field) */
    [1] = 1, [2] = 3, [3] = 3, [4] = 3, [5] = 1, [6] = 3, [7] = 3, [8] = 3, [14] = 3, [20] = 3, [25] = 3};

/* ONNX when the top-level keys are ModelProto's fields with their wire types to the end, a graph
 * among them; or, for a file cut short, when it starts as writers start (ir_version 1..20, then
 * another ModelProto field) before the cut. Tensor files fail both: their first 8 bytes are a
 * length whose high bytes are zero, and a zero byte is no protobuf key. */
bool mlrt__onnx_sniff(const uint8_t *b, size_t n) {
    mlrt__pb pb = mlrt__pb_open(b, n, "onnx");
    uint32_t field, wire, seen = 0;
    bool graph = false, writer_start = n >= 2 && b[0] == 0x08 && b[1] >= 1 && b[1] <= 20;
    int r;
    while ((r = mlrt__pb_next(&pb, &field, &wire, NULL)) > 0) {
        if (field > 25 || !model_wire[field] || (uint32_t)model_wire[field] - 1 != wire) return false;
        if (mlrt__pb_skip(&pb, wire, NULL)) return writer_start && seen >= 1; /* cut short */
        graph |= field == 7;
        seen++;
    }
    return r == 0 ? graph : writer_start && seen >= 2;
}

mlrt_status mlrt__read_onnx(const uint8_t *b, size_t n, mlrt__onnx *g, mlrt_error *err) {
    memset(g, 0, sizeof *g);
    mlrt__pb pb = mlrt__pb_open(b, n, "onnx"), graph = {0};
    uint32_t field, wire;
    int r;
    bool has_graph = false, has_ir = false;
    g->opset = -1;
    mlrt_status st = MLRT_OK;
    while ((r = mlrt__pb_next(&pb, &field, &wire, err)) > 0) {
        if (field == 1) { st = read_int(&pb, wire, "ModelProto.ir_version", &g->ir_version, err); has_ir = true; }
        else if (field == 2) st = read_str(&pb, wire, "ModelProto.producer_name", &g->producer, err);
        else if (field == 7) {
            if (has_graph) return FAIL(MLRT_ERR_BAD_HEADER, "onnx: the model has two graphs");
            if (!(st = mlrt__pb_expect(&pb, wire, MLRT__PB_LEN, "ModelProto.graph", err))) st = mlrt__pb_message(&pb, &graph, err);
            has_graph = true;
        } else if (field == 8) {
            mlrt__pb os;
            mlrt__str domain = {"", 0};
            int64_t version = -1;
            if (!(st = mlrt__pb_expect(&pb, wire, MLRT__PB_LEN, "ModelProto.opset_import", err))) st = mlrt__pb_message(&pb, &os, err);
            while (!st && (r = mlrt__pb_next(&os, &field, &wire, err)) > 0) {
                if (field == 1) st = read_str(&os, wire, "OperatorSetIdProto.domain", &domain, err);
                else if (field == 2) st = read_int(&os, wire, "OperatorSetIdProto.version", &version, err);
                else st = mlrt__pb_skip(&os, wire, err);
            }
            if (!st && r < 0) st = err->code;
            if (!st && (domain.n == 0 || mlrt__str_eq(domain, "ai.onnx"))) {
                if (g->opset >= 0) return FAIL(MLRT_ERR_BAD_HEADER, "onnx: the model imports the ai.onnx opset twice");
                g->opset = version;
            }
        } else if (field == 20 || field == 25) {
            st = mlrt__pb_skip(&pb, wire, err); /* training info, functions: a function an op uses is refused as an op */
        } else st = mlrt__pb_skip(&pb, wire, err);
        if (st) return st;
    }
    if (r < 0) return err->code;
    if (!has_ir || !has_graph)
        return FAIL(MLRT_ERR_BAD_HEADER, "onnx: the ModelProto has no %s", has_ir ? "graph" : "ir_version");
    if (g->ir_version < 3 || g->ir_version > 10)
        return FAIL(MLRT_ERR_UNSUPPORTED_VERSION, "onnx: IR version %lld; mlrt reads 3 to 10", (long long)g->ir_version);
    if (g->opset < MLRT__ONNX_OPSET_MIN || g->opset > MLRT__ONNX_OPSET_MAX)
        return FAIL(MLRT_ERR_UNSUPPORTED_VERSION, g->opset < 0 ? "onnx: the model imports no ai.onnx opset"
                    : "onnx: ai.onnx opset %lld; mlrt runs opsets %d to %d", (long long)g->opset, MLRT__ONNX_OPSET_MIN,
                    MLRT__ONNX_OPSET_MAX);
    st = read_graph(graph, g, err);
    if (st) mlrt__onnx_free(g);
    return st;
}

void mlrt__onnx_free(mlrt__onnx *g) {
    for (uint32_t k = 0; k < g->n_nodes; k++) {
        mlrt__onnx_node *nd = &g->nodes[k];
        for (uint32_t a = 0; a < nd->n_attr && nd->attr; a++) attr_free(&nd->attr[a]);
        free(nd->attr);
        free(nd->in);
        free(nd->out);
    }
    for (uint32_t k = 0; k < g->n_init; k++) tensor_free(&g->inits[k]);
    free(g->inits);
    free(g->nodes);
    free(g->values);
    free(g->inputs);
    free(g->outputs);
    memset(g, 0, sizeof *g);
}

/* ------------------------------------------------------------------ the description */

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

/* "ops":{type: count, ...}, each type once, in order of first use: counted in a hash table of the
 * types (linear in the nodes). */
static bool json_op_counts(mlrt__buf *j, const mlrt__onnx *g) {
    uint32_t cap = 16;
    while (cap < 2 * g->n_nodes) cap <<= 1;
    uint32_t *slot = calloc(cap, sizeof *slot), *count = calloc(g->n_nodes + 1, sizeof *count); /* slot: node + 1 */
    if (!slot || !count) { free(slot), free(count); return false; }
    for (uint32_t k = 0; k < g->n_nodes; k++) {
        mlrt__str op = g->nodes[k].op;
        for (uint32_t s = hash(op) & (cap - 1);; s = (s + 1) & (cap - 1)) {
            if (!slot[s]) { slot[s] = k + 1, count[k] = 1; break; }
            mlrt__str o = g->nodes[slot[s] - 1].op;
            if (o.n == op.n && memcmp(o.p, op.p, op.n) == 0) { count[slot[s] - 1]++; break; }
        }
    }
    mlrt__buf_puts(j, "{");
    for (uint32_t k = 0, first = 1; k < g->n_nodes; k++) /* the first node of each type holds its count */
        if (count[k]) {
            if (!first) mlrt__buf_puts(j, ",");
            first = 0;
            mlrt__buf_json_string(j, g->nodes[k].op.p, g->nodes[k].op.n);
            mlrt__buf_printf(j, ":%u", count[k]);
        }
    mlrt__buf_puts(j, "}");
    free(slot), free(count);
    return true;
}

char *mlrt__onnx_describe(const mlrt__onnx *g) {
    mlrt__buf j = {0};
    mlrt__buf_printf(&j, "\"onnx\":{\"irVersion\":%lld,\"opset\":%lld,\"producer\":", (long long)g->ir_version, (long long)g->opset);
    mlrt__buf_json_string(&j, g->producer.p, g->producer.n);
    mlrt__buf_puts(&j, ",\"graph\":");
    mlrt__buf_json_string(&j, g->graph_name.p, g->graph_name.n);
    mlrt__buf_puts(&j, ",\"inputs\":");
    json_io(&j, g, g->inputs, g->n_inputs);
    mlrt__buf_puts(&j, ",\"outputs\":");
    json_io(&j, g, g->outputs, g->n_outputs);
    mlrt__buf_printf(&j, ",\"nodes\":%u,\"ops\":", g->n_nodes);
    if (!json_op_counts(&j, g)) j.oom = true;
    mlrt__buf_puts(&j, ",\"initializers\":[");
    for (uint32_t k = 0; k < g->n_init; k++) {
        const mlrt__onnx_tensor *t = &g->inits[k];
        mlrt__buf_puts(&j, k ? ",{\"name\":" : "{\"name\":");
        mlrt__buf_json_string(&j, t->name.p, t->name.n);
        mlrt__buf_printf(&j, ",\"dtype\":\"%s\",\"shape\":", t->type == MLRT__ONNX_INT64 ? "I64" : "F32");
        json_dims(&j, (int32_t)t->rank, t->dims);
        mlrt__buf_puts(&j, "}");
    }
    mlrt__buf_puts(&j, "]}");
    if (j.oom) { free(j.data); return NULL; }
    return j.data;
}
