/* api/load.c — recognising a file's format from its bytes, loading and inspecting it.
 *
 * Detection, in order:
 *   1. magic "APRN"                                                 -> .apr v1
 *      magic "APR2", or "APR\0" and a version in bytes 4..8            -> .apr v2
 *      magic "APR1" (aprender's legacy format)                      -> refused: UNSUPPORTED
 *      (as dimensions or a header length these bytes are beyond every limit, except "APR\0"
 *      followed by four zero bytes: a SafeTensors/BinTensors header of 5,394,497 bytes)
 *   2. the exact .bin size for plausible dimensions in its first 12 bytes -> bin
 *   2b. every top-level protobuf key is a ModelProto field with its wire type, a graph among them
 *      (or a file cut short that starts as ONNX writers start: ir_version, then another field) -> ONNX
 *   3. byte 8, after JSON whitespace, is '{'                         -> SafeTensors
 *   4. byte 8 is 0 or 1 (BinTensors' metadata option tag) and the
 *      header length in bytes 0..8 is within the header limit         -> BinTensors
 *   5. fewer than 12 bytes, or plausible .bin dimensions (each in 1..2^24) -> bin, whose reader
 *      says TRUNCATED or SIZE_MISMATCH
 *   6. anything else: UNKNOWN_FORMAT, saying what each format would have needed. */
#include "api.h"
#include <stdlib.h>
#include <string.h>

/* The three i32 dimensions a .bin starts with are each in 1..MLRT__MAX_DIM, with at most
 * MLRT__MAX_PARAMS parameters (random bytes pass with odds of about 1 in 17 million). */
static bool bin_dims_plausible(const uint8_t *b, size_t n, uint64_t *params) {
    if (n < 12) return false;
    uint32_t in = mlrt__rd_u32(b), hid = mlrt__rd_u32(b + 4), out = mlrt__rd_u32(b + 8);
    if (in == 0 || hid == 0 || out == 0 || in > MLRT__MAX_DIM || hid > MLRT__MAX_DIM || out > MLRT__MAX_DIM) return false;
    *params = (uint64_t)in * hid + (uint64_t)hid * out + hid + out;
    return *params <= MLRT__MAX_PARAMS;
}

static bool looks_like_bin(const uint8_t *b, size_t n) {
    uint64_t p;
    return bin_dims_plausible(b, n, &p) && (n == 12 + p * 4 || n == 12 + p * 8);
}

typedef enum { KIND_BIN, KIND_SAFETENSORS, KIND_BINTENSORS, KIND_APR_V1, KIND_APR_V2, KIND_APR_LEGACY, KIND_ONNX, KIND_UNKNOWN } file_kind;

static bool looks_like_apr_v2(const uint8_t *b, size_t n) {
    if (n >= 4 && memcmp(b, "APR2", 4) == 0) return true;
    return n >= 4 && memcmp(b, "APR\0", 4) == 0 && (n < 8 || mlrt__rd_u32(b + 4) != 0);
}

/* The header's first byte after JSON whitespace is '{'. */
static bool looks_like_safetensors(const uint8_t *b, size_t n) {
    size_t i = 8;
    while (i < n && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r')) i++;
    return i < n && b[i] == '{';
}

static file_kind detect(const uint8_t *b, size_t n) {
    if (n >= 4 && memcmp(b, "APRN", 4) == 0) return KIND_APR_V1;
    if (looks_like_apr_v2(b, n)) return KIND_APR_V2;
    if (n >= 4 && memcmp(b, "APR1", 4) == 0) return KIND_APR_LEGACY;
    if (looks_like_bin(b, n)) return KIND_BIN;
    if (mlrt__onnx_sniff(b, n)) return KIND_ONNX;
    if (n >= 9 && looks_like_safetensors(b, n)) return KIND_SAFETENSORS;
    if (n >= 9 && b[8] <= 1 && mlrt__rd_u64(b) <= MLRT__MAX_HEADER) return KIND_BINTENSORS; /* its reader checks the length */
    uint64_t params;
    if (n < 12 || bin_dims_plausible(b, n, &params)) return KIND_BIN; /* its reader says what is short or long */
    return KIND_UNKNOWN;
}

/* What each format would have needed, for bytes that are none of them. */
static void unknown_format(const uint8_t *b, size_t n, const char *what, mlrt_error *err) {
    mlrt__fail(err, MLRT_ERR_UNKNOWN_FORMAT,
              "%s: the %zu bytes are no format mlrt reads: not .apr (no APRN, APR\\0 or APR2 magic), not ONNX (no "
              "ModelProto), not SafeTensors (no '{' after the 8-byte header length), not BinTensors (byte 8 is 0x%02x, "
              "not 0 or 1, or a header over %u bytes), not a raw .bin (dimensions %d, %d, %d are not each in 1..%u)",
              what, n, b[8], MLRT__MAX_HEADER, (int32_t)mlrt__rd_u32(b), (int32_t)mlrt__rd_u32(b + 4),
              (int32_t)mlrt__rd_u32(b + 8), MLRT__MAX_DIM);
}

static mlrt_status read_tensors(const uint8_t *b, size_t n, file_kind k, mlrt__tensorset *ts, mlrt_error *err) {
    if (k == KIND_APR_LEGACY)
        return mlrt__fail(err, MLRT_ERR_UNSUPPORTED,
                         "apr: the legacy APR1 format is not supported");
    if (k == KIND_APR_V2) return mlrt__read_apr_v2(b, n, ts, err);
    return k == KIND_SAFETENSORS ? mlrt__read_safetensors(b, n, ts, err) : mlrt__read_bintensors(b, n, ts, err);
}

/* The aprender model type of a model mlrt built (for the expect option). */
static uint16_t aprender_type(mlrt_kind kind) {
    return kind == MLRT_KIND_DECISION_TREE ? MLRT__APR_DECISION_TREE : kind == MLRT_KIND_RANDOM_FOREST ? MLRT__APR_RANDOM_FOREST
         : kind == MLRT_KIND_KMEANS ? MLRT__APR_KMEANS : kind == MLRT_KIND_MLP ? MLRT__APR_NEURAL_SEQUENTIAL
         : kind == MLRT_KIND_LINEAR_REGRESSION ? MLRT__APR_LINEAR_REGRESSION : MLRT__APR_LOGISTIC_REGRESSION;
}

mlrt_model *mlrt__build(mlrt__desc *d, mlrt_error *err) {
    mlrt_model *m = NULL;
    switch (d->type) {
    case MLRT__DESC_DENSE: m = mlrt__build_dense(d, err); break;
    case MLRT__DESC_FOREST: m = mlrt__build_forest(d, err); break;
    case MLRT__DESC_KMEANS: m = mlrt__build_kmeans(d, err); break;
    default: mlrt__fail(err, MLRT_ERR_NOT_A_MODEL, "the file describes no model"); break;
    }
    mlrt__desc_free(d);
    return m;
}

static mlrt_model *load_apr_v1(const uint8_t *b, size_t n, uint16_t expect, mlrt_error *err) {
    mlrt__apr_v1 f;
    mlrt__desc d;
    if (mlrt__read_apr_v1(b, n, expect, &f, err)) return NULL;
    mlrt_model *m = mlrt__read_apr_v1_model(&f, &d, err) ? (mlrt__desc_free(&d), NULL) : mlrt__build(&d, err);
    mlrt__tensorset_free(&f.ts);
    return m;
}

/* ONNX: the file read, its graph imported (formats/), then built (model/). */
static mlrt_model *build_onnx(mlrt__onnx *g, mlrt_error *err) {
    mlrt__ir_graph ir;
    return mlrt__import_onnx(g, &ir, err) ? NULL : mlrt__build_graph(&ir, MLRT_FORMAT_ONNX, err);
}

static mlrt_model *load_onnx(const uint8_t *b, size_t n, mlrt_error *err) {
    mlrt__onnx g;
    mlrt_error local;
    if (!err) err = &local;
    if (mlrt__read_onnx(b, n, &g, err)) return NULL;
    mlrt_model *m = build_onnx(&g, err);
    mlrt__onnx_free(&g);
    return m;
}

/* A tensor file or a .bin: what it describes, checked against expect before anything is packed. */
static mlrt_model *load_described(const uint8_t *b, size_t n, file_kind k, uint16_t expect, mlrt_weight_layout layout,
                                  mlrt_error *err) {
    mlrt__tensorset ts = {0};
    mlrt__desc d = {0};
    mlrt_status st = k == KIND_BIN ? mlrt__read_bin(b, n, &d, err) : read_tensors(b, n, k, &ts, err);
    if (!st && k != KIND_BIN) st = mlrt__recognize(b, &ts, layout, &d, err);
    if (!st && expect && aprender_type(d.kind) != expect)
        st = mlrt__fail(err, MLRT_ERR_MODEL_TYPE_MISMATCH, "load: expected %s but the file holds a %s model (%s)",
                        mlrt__apr_type_name(expect), mlrt_kind_name(d.kind), mlrt__apr_type_name(aprender_type(d.kind)));
    mlrt_model *m = st ? (mlrt__desc_free(&d), NULL) : mlrt__build(&d, err);
    mlrt__tensorset_free(&ts);
    return m;
}

static mlrt_model *load(const uint8_t *b, size_t n, uint16_t expect, mlrt_weight_layout layout, mlrt_error *err) {
    file_kind k = detect(b, n);
    if (k == KIND_APR_V1) return load_apr_v1(b, n, expect, err); /* checks expect from the header */
    if (k == KIND_ONNX && expect) {
        mlrt__fail(err, MLRT_ERR_MODEL_TYPE_MISMATCH, "load: expected %s but the file is an ONNX graph",
                   mlrt__apr_type_name(expect));
        return NULL;
    }
    if (k == KIND_ONNX) return load_onnx(b, n, err);
    if (k == KIND_UNKNOWN) {
        unknown_format(b, n, "load", err);
        return NULL;
    }
    return load_described(b, n, k, expect, layout, err);
}

mlrt_model *mlrt_load_from_bytes_ex(const uint8_t *bytes, size_t len, const mlrt_load_options *options,
                                    mlrt_error *err) {
    uint16_t expect = 0;
    if (options && options->expect && !mlrt__apr_type_from_name(options->expect, &expect)) {
        mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT,
                  "load: expect '%s' is not an aprender model type",
                  options->expect);
        return NULL;
    }
    if (!bytes && len) {
        mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "load: NULL bytes");
        return NULL;
    }
    if (len == 0) {
        mlrt__fail(err, MLRT_ERR_TRUNCATED, "load: the file is empty");
        return NULL;
    }
    mlrt_weight_layout layout = options ? options->weight_layout : MLRT_LAYOUT_AUTO;
    if (layout != MLRT_LAYOUT_AUTO && layout != MLRT_LAYOUT_OUT_IN && layout != MLRT_LAYOUT_IN_OUT) {
        mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "load: weight_layout %d is not AUTO (0), OUT_IN (1) or IN_OUT (2)", (int)layout);
        return NULL;
    }
    return load(bytes, len, expect, layout, err);
}

mlrt_model *mlrt_load_from_bytes(const uint8_t *bytes, size_t len, mlrt_error *err) {
    return mlrt_load_from_bytes_ex(bytes, len, NULL, err);
}

static void json_tensor(mlrt__buf *b, const mlrt__tensor *t, size_t data_begin) {
    mlrt__buf_puts(b, "{\"name\":");
    mlrt__buf_json_string(b, t->name, t->name_len);
    mlrt__buf_printf(b, ",\"dtype\":\"%s\",\"shape\":[", mlrt_dtype_name(t->dtype));
    for (uint32_t d = 0; d < t->rank; d++) mlrt__buf_printf(b, "%s%llu", d ? "," : "", (unsigned long long)t->shape[d]);
    mlrt__buf_printf(b, "],\"byteOffset\":%zu,\"byteLength\":%zu}", data_begin + t->begin, t->end - t->begin);
}

/* The .bin format has no tensor list; inspect describes its four arrays the same way. */
static char *inspect_bin(const uint8_t *bytes, size_t len, mlrt_error *err) {
    mlrt__desc d;
    if (mlrt__read_bin(bytes, len, &d, err)) return NULL;
    mlrt_model *m = mlrt__build(&d, err); /* a .bin is a model or nothing: its weights are checked as a load checks them */
    if (!m) return NULL;
    mlrt_free(m);
    size_t es = mlrt_dtype_size(d.dtype), at = 12;
    uint32_t in = d.layers[0].in, hid = d.layers[0].out, out = d.layers[1].out;
    const struct { const char *name; uint32_t r, c; } parts[4] = {
        {"w1", in, hid}, {"b1", hid, 0}, {"w2", hid, out}, {"b2", out, 0}};
    mlrt__buf b = {0};
    mlrt__buf_printf(&b, "{\"format\":\"bin\",\"modelKind\":\"mlp\",\"metadata\":{},\"tensors\":[");
    for (int i = 0; i < 4; i++) {
        size_t count = (size_t)parts[i].r * (parts[i].c ? parts[i].c : 1);
        mlrt__buf_printf(&b, "%s{\"name\":\"%s\",\"dtype\":\"%s\",\"shape\":[%u", i ? "," : "", parts[i].name,
                        mlrt_dtype_name(d.dtype), parts[i].r);
        if (parts[i].c) mlrt__buf_printf(&b, ",%u", parts[i].c);
        mlrt__buf_printf(&b, "],\"byteOffset\":%zu,\"byteLength\":%zu}", at, count * es);
        at += count * es;
    }
    mlrt__buf_puts(&b, "]}");
    if (b.oom) {
        free(b.data);
        mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "inspect: out of memory");
        return NULL;
    }
    return b.data;
}

/* ts's description; m: the model it makes, or NULL and why not; more: members about the payload,
 * or NULL. Frees m. */
static char *inspect_tensorset(const mlrt__tensorset *ts, mlrt_model *m, const mlrt_error *why, const char *more,
                               mlrt_error *err) {
    mlrt__buf b = {0};
    mlrt__buf_printf(&b, "{\"format\":\"%s\",", mlrt_format_name(ts->format));
    if (m) {
        mlrt__buf_printf(&b, "\"modelKind\":\"%s\"", mlrt_kind_name(m->kind));
        mlrt__model_facts_json(&b, m);
        mlrt__buf_puts(&b, ",");
    } else {
        mlrt__buf_printf(&b, "\"notAModel\":{\"code\":\"%s\",\"message\":", mlrt_status_name(why->code));
        mlrt__buf_json_string(&b, why->message, strlen(why->message));
        mlrt__buf_puts(&b, "},");
    }
    mlrt_free(m);
    if (more) {
        mlrt__buf_puts(&b, more);
        mlrt__buf_puts(&b, ",");
    }
    mlrt__buf_puts(&b, "\"metadata\":");
    mlrt__json_metadata(&b, ts);
    if (ts->extra_json) {
        mlrt__buf_puts(&b, ",");
        mlrt__buf_puts(&b, ts->extra_json);
    }
    mlrt__buf_puts(&b, ",\"tensors\":[");
    for (size_t i = 0; i < ts->count; i++) {
        if (i) mlrt__buf_puts(&b, ",");
        json_tensor(&b, &ts->tensors[i], ts->data_begin);
    }
    mlrt__buf_puts(&b, "]}");
    if (b.oom) {
        free(b.data);
        mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "inspect: out of memory");
        return NULL;
    }
    return b.data;
}

/* ONNX: the graph as listed in the file, and whether mlrt runs it. */
static char *inspect_onnx(const uint8_t *bytes, size_t len, mlrt_error *err) {
    mlrt__onnx g;
    mlrt_error local, why;
    if (!err) err = &local;
    if (mlrt__read_onnx(bytes, len, &g, err)) return NULL;
    char *desc = mlrt__onnx_describe(&g);
    mlrt_model *m = build_onnx(&g, &why);
    mlrt__buf b = {0};
    mlrt__buf_puts(&b, "{\"format\":\"onnx\",");
    if (m) {
        mlrt__buf_puts(&b, "\"modelKind\":\"graph\"");
        mlrt__model_facts_json(&b, m);
        mlrt__buf_puts(&b, ",");
    } else {
        mlrt__buf_printf(&b, "\"notAModel\":{\"code\":\"%s\",\"message\":", mlrt_status_name(why.code));
        mlrt__buf_json_string(&b, why.message, strlen(why.message));
        mlrt__buf_puts(&b, "},");
    }
    mlrt__buf_puts(&b, "\"metadata\":{}");
    if (!m) { /* (a model's facts hold the graph's description, and its plan) */
        mlrt__buf_puts(&b, ",");
        if (desc) mlrt__buf_puts(&b, desc);
        else b.oom = true;
    }
    mlrt_free(m);
    mlrt__buf_puts(&b, ",\"tensors\":[");
    for (uint32_t k = 0; k < g.n_init; k++) {
        const mlrt__onnx_tensor *t = &g.inits[k];
        mlrt__buf_puts(&b, k ? ",{\"name\":" : "{\"name\":");
        mlrt__buf_json_string(&b, t->name.p, t->name.n);
        mlrt__buf_printf(&b, ",\"dtype\":\"%s\",\"shape\":[", t->type == MLRT__ONNX_INT64 ? "I64" : "F32");
        for (uint32_t d = 0; d < t->rank; d++) mlrt__buf_printf(&b, "%s%lld", d ? "," : "", (long long)t->dims[d]);
        mlrt__buf_printf(&b, "],\"byteOffset\":%zu,\"byteLength\":%zu}", t->at, t->bytes);
    }
    mlrt__buf_puts(&b, "]}");
    free(desc);
    mlrt__onnx_free(&g);
    if (b.oom) {
        free(b.data);
        mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "inspect: out of memory");
        return NULL;
    }
    return b.data;
}

char *mlrt_inspect(const uint8_t *bytes, size_t len, mlrt_error *err) {
    if (!bytes || len == 0) {
        mlrt__fail(err, len ? MLRT_ERR_INVALID_ARGUMENT : MLRT_ERR_TRUNCATED, "inspect: %s",
                  len ? "NULL bytes" : "the file is empty");
        return NULL;
    }
    file_kind k = detect(bytes, len);
    if (k == KIND_UNKNOWN) {
        unknown_format(bytes, len, "inspect", err);
        return NULL;
    }
    if (k == KIND_BIN) return inspect_bin(bytes, len, err);
    if (k == KIND_ONNX) return inspect_onnx(bytes, len, err);
    /* Whether the file makes a model, and which, without keeping it. */
    mlrt_error why;
    char *js;
    if (k == KIND_APR_V1) {
        mlrt__apr_v1 f;
        mlrt__desc d;
        if (mlrt__read_apr_v1(bytes, len, 0, &f, err)) return NULL;
        char *more = mlrt__apr_v1_payload_json(&f);
        mlrt_model *m = mlrt__read_apr_v1_model(&f, &d, &why) ? (mlrt__desc_free(&d), NULL) : mlrt__build(&d, &why);
        js = inspect_tensorset(&f.ts, m, &why, more, err);
        free(more);
        mlrt__tensorset_free(&f.ts);
        return js;
    }
    mlrt__tensorset ts;
    if (read_tensors(bytes, len, k, &ts, err)) return NULL;
    mlrt__desc d;
    mlrt_model *m = mlrt__recognize(bytes, &ts, MLRT_LAYOUT_AUTO, &d, &why) ? (mlrt__desc_free(&d), NULL) : mlrt__build(&d, &why);
    js = inspect_tensorset(&ts, m, &why, NULL, err);
    mlrt__tensorset_free(&ts);
    return js;
}
