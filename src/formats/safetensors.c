/* formats/safetensors.c — SafeTensors reader.
 *
 *   [u64 LE N][N bytes: JSON header, possibly preceded and followed by JSON whitespace][data]
 *   header = { "__metadata__"?: {str: str}, name: {"dtype": str, "shape": [u64...],
 *              "data_offsets": [begin, end]}, ... }
 * Offsets are relative to the data section; tensors must tile it exactly. */
#include "formats.h"
#include <stdlib.h>
#include <string.h>

#define FMT "safetensors"

static char *dup_str(const char *s, size_t n) {
    char *d = malloc(n + 1);
    if (d) { memcpy(d, s, n); d[n] = 0; }
    return d;
}

static mlrt_status read_metadata(const mlrt__json *m, mlrt__tensorset *ts, mlrt_error *err) {
    if (m->type != MLRT__JSON_OBJECT)
        return mlrt__fail(err, MLRT_ERR_BAD_HEADER, FMT ": __metadata__ must be an object of strings, got %s",
                         mlrt__json_type_name(m->type));
    ts->meta = calloc(m->count ? m->count : 1, sizeof *ts->meta);
    if (!ts->meta) return mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, FMT ": out of memory");
    for (const mlrt__json *kv = m->child; kv; kv = kv->next) {
        if (kv->type != MLRT__JSON_STRING)
            return mlrt__fail(err, MLRT_ERR_BAD_HEADER, FMT ": __metadata__ value of '%s' must be a string, got %s",
                             kv->key, mlrt__json_type_name(kv->type));
        mlrt__kv *e = &ts->meta[ts->meta_count++];
        e->key = dup_str(kv->key, kv->key_len);
        e->value = dup_str(kv->str, kv->len);
        e->key_len = kv->key_len;
        e->value_len = kv->len;
        if (!e->key || !e->value) return mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, FMT ": out of memory");
    }
    return MLRT_OK;
}

/* Whole-key match: a key may hold an escaped NUL ("dtype\u0000"), which is another key. */
static bool key_is(const mlrt__json *f, const char *k) {
    return f->key_len == strlen(k) && memcmp(f->key, k, f->key_len) == 0;
}

static mlrt_status read_tensor(const mlrt__json *e, mlrt__tensor *t, mlrt_error *err) {
    const char *name = e->key;
    if (e->type != MLRT__JSON_OBJECT)
        return mlrt__fail(err, MLRT_ERR_BAD_HEADER, FMT ": tensor '%s' must be an object, got %s", name,
                         mlrt__json_type_name(e->type));
    const mlrt__json *dtype = NULL, *shape = NULL, *offs = NULL;
    for (const mlrt__json *f = e->child; f; f = f->next) {
        if (key_is(f, "dtype")) dtype = f;
        else if (key_is(f, "shape")) shape = f;
        else if (key_is(f, "data_offsets")) offs = f;
        /* other fields are ignored, as the reference implementation does */
    }
    if (!dtype || !shape || !offs)
        return mlrt__fail(err, MLRT_ERR_BAD_HEADER, FMT ": tensor '%s' lacks '%s'", name,
                         !dtype ? "dtype" : !shape ? "shape" : "data_offsets");
    if (dtype->type != MLRT__JSON_STRING)
        return mlrt__fail(err, MLRT_ERR_BAD_HEADER, FMT ": tensor '%s' dtype must be a string", name);
    if (!mlrt__dtype_from_name(dtype->str, dtype->len, &t->dtype))
        return mlrt__fail(err, MLRT_ERR_UNKNOWN_DTYPE, FMT ": tensor '%s' has unknown dtype '%s'", name, dtype->str);
    if (shape->type != MLRT__JSON_ARRAY)
        return mlrt__fail(err, MLRT_ERR_BAD_HEADER, FMT ": tensor '%s' shape must be an array", name);
    if (shape->count > MLRT__MAX_RANK)
        return mlrt__fail(err, MLRT_ERR_BAD_DIMENSIONS, FMT ": tensor '%s' has %zu dimensions, more than %d", name,
                         shape->count, MLRT__MAX_RANK);
    t->rank = (uint32_t)shape->count;
    uint32_t d = 0;
    for (const mlrt__json *x = shape->child; x; x = x->next, d++)
        if (!mlrt__json_u64(x, &t->shape[d]))
            return mlrt__fail(err, MLRT_ERR_BAD_DIMENSIONS, FMT ": tensor '%s' shape[%u] is not a non-negative integer",
                             name, d);
    uint64_t b, en;
    if (offs->type != MLRT__JSON_ARRAY || offs->count != 2 || !mlrt__json_u64(offs->child, &b) ||
        !mlrt__json_u64(offs->child->next, &en))
        return mlrt__fail(err, MLRT_ERR_BAD_OFFSETS, FMT ": tensor '%s' data_offsets must be [begin, end] integers", name);
    if (b > SIZE_MAX || en > SIZE_MAX)
        return mlrt__fail(err, MLRT_ERR_BAD_OFFSETS, FMT ": tensor '%s' data_offsets beyond addressable memory", name);
    t->begin = (size_t)b;
    t->end = (size_t)en;
    t->count = 1;
    for (d = 0; d < t->rank; d++) (void)mlrt__mul_u64(t->count, t->shape[d], &t->count);
    return mlrt__tensor_check_span(t, FMT, err);
}

mlrt_status mlrt__read_safetensors(const uint8_t *b, size_t n, mlrt__tensorset *ts, mlrt_error *err) {
    memset(ts, 0, sizeof *ts);
    ts->format = MLRT_FORMAT_SAFETENSORS;
    uint64_t hlen;
    mlrt_status st = mlrt__read_header_length(b, n, FMT, "header", &hlen, err);
    if (st) return st;
    /* JSON whitespace may come first (the reference accepts it: writers use it to align the data) */
    size_t lead = 0;
    while (lead < hlen && (b[8 + lead] == ' ' || b[8 + lead] == '\t' || b[8 + lead] == '\n' || b[8 + lead] == '\r')) lead++;
    if (hlen - lead < 2 || b[8 + lead] != '{')
        return mlrt__fail(err, MLRT_ERR_INVALID_JSON, FMT ": header must be a JSON object starting with '{'");

    mlrt__json_doc doc;
    st = mlrt__json_parse(b + 8, (size_t)hlen, FMT ": header", &doc, err);
    if (st) return st;
    const mlrt__json *root = doc.root;
    if (root->type != MLRT__JSON_OBJECT) {
        st = mlrt__fail(err, MLRT_ERR_BAD_HEADER, FMT ": header must be a JSON object");
        goto done;
    }
    if (root->count > MLRT__MAX_TENSORS) {
        st = mlrt__fail(err, MLRT_ERR_BAD_HEADER, FMT ": %zu tensors, more than %d", root->count, MLRT__MAX_TENSORS);
        goto done;
    }
    ts->tensors = calloc(root->count ? root->count : 1, sizeof *ts->tensors);
    if (!ts->tensors) { st = mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, FMT ": out of memory"); goto done; }
    for (const mlrt__json *e = root->child; e; e = e->next) {
        if (strcmp(e->key, "__metadata__") == 0 && e->key_len == 12) {
            if ((st = read_metadata(e, ts, err))) goto done;
            continue;
        }
        if (e->key_len == 0 || memchr(e->key, 0, e->key_len)) {
            st = mlrt__fail(err, MLRT_ERR_BAD_HEADER, FMT ": tensor names must be non-empty and contain no NUL");
            goto done;
        }
        mlrt__tensor *t = &ts->tensors[ts->count++];
        t->name = dup_str(e->key, e->key_len);
        t->name_len = e->key_len;
        if (!t->name) { st = mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, FMT ": out of memory"); goto done; }
        if ((st = read_tensor(e, t, err))) goto done;
    }
    ts->data_begin = 8 + (size_t)hlen;
    st = mlrt__tensorset_check_layout(ts, n - ts->data_begin, FMT, err);
done:
    mlrt__json_free(&doc);
    if (st) mlrt__tensorset_free(ts);
    return st;
}
