/* load.c — recognising a file's format from its bytes, loading and inspecting it.
 *
 * Detection, in order:
 *   1. the exact .bin size for the dimensions in its first 12 bytes  -> bin
 *   2. byte 8 is '{'                                                -> SafeTensors
 *   3. byte 8 is 0 or 1 (BinTensors' metadata option tag) and the
 *      header length in bytes 0..8 fits the file                     -> BinTensors
 *   4. anything else is read as .bin, whose errors then say what is wrong with it. */
#include "internal.h"
#include <stdlib.h>
#include <string.h>

static bool looks_like_bin(const uint8_t *b, size_t n) {
    if (n < 12) return false;
    int32_t in = (int32_t)mlrt_rd_u32(b), hid = (int32_t)mlrt_rd_u32(b + 4), out = (int32_t)mlrt_rd_u32(b + 8);
    if (in <= 0 || hid <= 0 || out <= 0) return false;
    uint64_t p = (uint64_t)in * (uint64_t)hid + (uint64_t)hid * (uint64_t)out + (uint64_t)hid + (uint64_t)out;
    return p <= MLRT_MAX_PARAMS && (n == 12 + p * 4 || n == 12 + p * 8);
}

typedef enum { KIND_BIN, KIND_SAFETENSORS, KIND_BINTENSORS } file_kind;

static file_kind detect(const uint8_t *b, size_t n) {
    if (looks_like_bin(b, n)) return KIND_BIN;
    if (n >= 9 && b[8] == '{') return KIND_SAFETENSORS;
    if (n >= 9 && b[8] <= 1 && mlrt_rd_u64(b) <= n - 8) return KIND_BINTENSORS;
    return KIND_BIN;
}

static mlrt_status read_tensors(const uint8_t *b, size_t n, file_kind k, mlrt_tensorset *ts, mlrt_error *err) {
    return k == KIND_SAFETENSORS ? mlrt_read_safetensors(b, n, ts, err) : mlrt_read_bintensors(b, n, ts, err);
}

mlrt_model *mlrt_load_from_bytes(const uint8_t *bytes, size_t len, mlrt_error *err) {
    if (!bytes && len) {
        mlrt_fail(err, MLRT_ERR_INVALID_ARGUMENT, "load: NULL bytes");
        return NULL;
    }
    if (len == 0) {
        mlrt_fail(err, MLRT_ERR_TRUNCATED, "load: the file is empty");
        return NULL;
    }
    file_kind k = detect(bytes, len);
    if (k == KIND_BIN) return mlrt_load_bin(bytes, len, err);
    mlrt_tensorset ts;
    if (read_tensors(bytes, len, k, &ts, err)) return NULL;
    mlrt_model *m = mlrt_model_from_tensors(bytes, &ts, err);
    mlrt_tensorset_free(&ts);
    return m;
}

static void json_tensor(mlrt_buf *b, const mlrt_tensor *t, size_t data_begin) {
    mlrt_buf_puts(b, "{\"name\":");
    mlrt_buf_json_string(b, t->name, t->name_len);
    mlrt_buf_printf(b, ",\"dtype\":\"%s\",\"shape\":[", mlrt_dtype_name(t->dtype));
    for (uint32_t d = 0; d < t->rank; d++) mlrt_buf_printf(b, "%s%llu", d ? "," : "", (unsigned long long)t->shape[d]);
    mlrt_buf_printf(b, "],\"byteOffset\":%zu,\"byteLength\":%zu}", data_begin + t->begin, t->end - t->begin);
}

/* The .bin format has no tensor list; inspect describes its four arrays the same way. */
static char *inspect_bin(const uint8_t *bytes, size_t len, mlrt_error *err) {
    mlrt_model *m = mlrt_load_bin(bytes, len, err);
    if (!m) return NULL;
    size_t es = m->dtype == MLRT_F64 ? 8 : 4, at = 12;
    uint32_t in = m->layers[0].in, hid = m->layers[0].out, out = m->layers[1].out;
    const struct { const char *name; uint32_t r, c; } parts[4] = {
        {"w1", in, hid}, {"b1", hid, 0}, {"w2", hid, out}, {"b2", out, 0}};
    mlrt_buf b = {0};
    mlrt_buf_printf(&b, "{\"format\":\"bin\",\"modelKind\":\"mlp\",\"metadata\":{},\"tensors\":[");
    for (int i = 0; i < 4; i++) {
        size_t count = (size_t)parts[i].r * (parts[i].c ? parts[i].c : 1);
        mlrt_buf_printf(&b, "%s{\"name\":\"%s\",\"dtype\":\"%s\",\"shape\":[%u", i ? "," : "", parts[i].name,
                        mlrt_dtype_name(m->dtype), parts[i].r);
        if (parts[i].c) mlrt_buf_printf(&b, ",%u", parts[i].c);
        mlrt_buf_printf(&b, "],\"byteOffset\":%zu,\"byteLength\":%zu}", at, count * es);
        at += count * es;
    }
    mlrt_buf_puts(&b, "]}");
    mlrt_free(m);
    if (b.oom) {
        free(b.data);
        mlrt_fail(err, MLRT_ERR_OUT_OF_MEMORY, "inspect: out of memory");
        return NULL;
    }
    return b.data;
}

char *mlrt_inspect(const uint8_t *bytes, size_t len, mlrt_error *err) {
    if (!bytes || len == 0) {
        mlrt_fail(err, len ? MLRT_ERR_INVALID_ARGUMENT : MLRT_ERR_TRUNCATED, "inspect: %s",
                  len ? "NULL bytes" : "the file is empty");
        return NULL;
    }
    file_kind k = detect(bytes, len);
    if (k == KIND_BIN) return inspect_bin(bytes, len, err);
    mlrt_tensorset ts;
    if (read_tensors(bytes, len, k, &ts, err)) return NULL;
    /* Whether the tensors form a model, and which, without keeping it. */
    mlrt_error why;
    mlrt_model *m = mlrt_model_from_tensors(bytes, &ts, &why);
    mlrt_buf b = {0};
    mlrt_buf_printf(&b, "{\"format\":\"%s\",", mlrt_format_name(ts.format));
    if (m) mlrt_buf_printf(&b, "\"modelKind\":\"%s\",", mlrt_kind_name(m->kind));
    else {
        mlrt_buf_printf(&b, "\"notAModel\":{\"code\":\"%s\",\"message\":", mlrt_status_name(why.code));
        mlrt_buf_json_string(&b, why.message, strlen(why.message));
        mlrt_buf_puts(&b, "},");
    }
    mlrt_free(m);
    mlrt_buf_puts(&b, "\"metadata\":");
    mlrt_json_metadata(&b, &ts);
    mlrt_buf_puts(&b, ",\"tensors\":[");
    for (size_t i = 0; i < ts.count; i++) {
        if (i) mlrt_buf_puts(&b, ",");
        json_tensor(&b, &ts.tensors[i], ts.data_begin);
    }
    mlrt_buf_puts(&b, "]}");
    mlrt_tensorset_free(&ts);
    if (b.oom) {
        free(b.data);
        mlrt_fail(err, MLRT_ERR_OUT_OF_MEMORY, "inspect: out of memory");
        return NULL;
    }
    return b.data;
}
