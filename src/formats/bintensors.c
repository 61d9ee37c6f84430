/* formats/bintensors.c — BinTensors reader (bincode 2 "standard" encoding, varint integers).
 *
 *   [u64 LE N][N bytes: metadata, then padding (spaces to a multiple of 8; any bytes are ignored)][data]
 *   metadata (the bintensors crate):  Option<Map<String,String>>, Vec<TensorInfo>, Map<String,usize>
 *   metadata (early spec, also read): Option<Map<String,String>>, Vec<(String, TensorInfo)>
 *   TensorInfo = dtype (varint discriminant), shape (Vec<usize>), data_offsets (usize, usize)
 *   varint: v < 251 one byte; 251/252/253 then u16/u32/u64 LE.
 * The crate's layout is tried first; the early layout only if the crate's does not read.
 * As the crate: tensors are listed in the order of their data offsets. */
#include "formats.h"
#include <stdlib.h>
#include <string.h>

#define FMT "bintensors"

typedef struct cursor {
    const uint8_t *p;
    size_t n, pos;
    mlrt_error *err;
} cursor;

static mlrt_status truncated(cursor *c, const char *what) {
    return mlrt__fail(c->err, MLRT_ERR_TRUNCATED, FMT ": metadata ends at byte %zu inside %s", c->pos, what);
}

static mlrt_status varint(cursor *c, const char *what, uint64_t *out) {
    if (c->pos >= c->n) return truncated(c, what);
    uint8_t tag = c->p[c->pos++];
    size_t w = tag < 251 ? 0 : tag == 251 ? 2 : tag == 252 ? 4 : tag == 253 ? 8 : 16;
    if (w == 0) { *out = tag; return MLRT_OK; }
    if (w == 16)
        return mlrt__fail(c->err, MLRT_ERR_BAD_HEADER, FMT ": integer tag %u at byte %zu in %s is not a usize",
                         tag, c->pos - 1, what);
    if (c->n - c->pos < w) return truncated(c, what);
    uint64_t v = 0;
    for (size_t i = 0; i < w; i++) v |= (uint64_t)c->p[c->pos + i] << (8 * i);
    c->pos += w;
    *out = v;
    return MLRT_OK;
}

/* A count of items that each take at least one byte: bounded by what is left. */
static mlrt_status count(cursor *c, const char *what, size_t *out) {
    uint64_t v;
    mlrt_status st = varint(c, what, &v);
    if (st) return st;
    if (v > c->n - c->pos)
        return mlrt__fail(c->err, MLRT_ERR_TRUNCATED, FMT ": %s declares %llu entries but only %zu metadata bytes remain",
                         what, (unsigned long long)v, c->n - c->pos);
    *out = (size_t)v;
    return MLRT_OK;
}

static mlrt_status string(cursor *c, const char *what, char **out, size_t *out_len) {
    size_t len;
    mlrt_status st = count(c, what, &len);
    if (st) return st;
    if (!mlrt__utf8_valid(c->p + c->pos, len))
        return mlrt__fail(c->err, MLRT_ERR_INVALID_UTF8, FMT ": %s at byte %zu is not valid UTF-8", what, c->pos);
    char *s = malloc(len + 1);
    if (!s) return mlrt__fail(c->err, MLRT_ERR_OUT_OF_MEMORY, FMT ": out of memory");
    memcpy(s, c->p + c->pos, len);
    s[len] = 0;
    c->pos += len;
    *out = s;
    *out_len = len;
    return MLRT_OK;
}

static mlrt_status tensor_info(cursor *c, mlrt__tensor *t) {
    uint64_t v;
    mlrt_status st;
    if ((st = varint(c, "a dtype", &v))) return st;
    if (v > MLRT_U64) /* the quantized types after it are .apr's */
        return mlrt__fail(c->err, MLRT_ERR_UNKNOWN_DTYPE, FMT ": unknown dtype discriminant %llu", (unsigned long long)v);
    t->dtype = (mlrt_dtype)v;
    size_t rank;
    if ((st = count(c, "a shape", &rank))) return st;
    if (rank > MLRT__MAX_RANK)
        return mlrt__fail(c->err, MLRT_ERR_BAD_DIMENSIONS, FMT ": a tensor has %zu dimensions, more than %d", rank,
                         MLRT__MAX_RANK);
    t->rank = (uint32_t)rank;
    for (size_t d = 0; d < rank; d++)
        if ((st = varint(c, "a shape", &t->shape[d]))) return st;
    uint64_t b, e;
    if ((st = varint(c, "data_offsets", &b)) || (st = varint(c, "data_offsets", &e))) return st;
    if (b > SIZE_MAX || e > SIZE_MAX)
        return mlrt__fail(c->err, MLRT_ERR_BAD_OFFSETS, FMT ": data_offsets beyond addressable memory");
    t->begin = (size_t)b;
    t->end = (size_t)e;
    t->count = 1;
    for (size_t d = 0; d < rank; d++) (void)mlrt__mul_u64(t->count, t->shape[d], &t->count);
    return MLRT_OK;
}

static int by_key(const void *a, const void *b) {
    const mlrt__kv *x = *(const mlrt__kv *const *)a, *y = *(const mlrt__kv *const *)b;
    size_t n = x->key_len < y->key_len ? x->key_len : y->key_len;
    int c = memcmp(x->key, y->key, n);
    return c ? c : (x->key_len > y->key_len) - (x->key_len < y->key_len);
}

static mlrt_status read_user_metadata(cursor *c, mlrt__tensorset *ts) {
    if (c->pos >= c->n) return truncated(c, "the metadata option");
    uint8_t some = c->p[c->pos++];
    if (some > 1)
        return mlrt__fail(c->err, MLRT_ERR_BAD_HEADER, FMT ": metadata option tag is %u, not 0 or 1", some);
    if (!some) return MLRT_OK;
    size_t n;
    mlrt_status st = count(c, "the metadata map", &n);
    if (st) return st;
    ts->meta = calloc(n ? n : 1, sizeof *ts->meta);
    if (!ts->meta) return mlrt__fail(c->err, MLRT_ERR_OUT_OF_MEMORY, FMT ": out of memory");
    for (size_t i = 0; i < n; i++) {
        mlrt__kv *kv = &ts->meta[ts->meta_count++];
        if ((st = string(c, "a metadata key", &kv->key, &kv->key_len))) return st;
        if ((st = string(c, "a metadata value", &kv->value, &kv->value_len))) return st;
    }
    if (n < 2) return MLRT_OK;
    /* duplicates by sorting: the map may hold millions of keys */
    const mlrt__kv **v = malloc(n * sizeof *v);
    if (!v) return mlrt__fail(c->err, MLRT_ERR_OUT_OF_MEMORY, FMT ": out of memory");
    for (size_t i = 0; i < n; i++) v[i] = &ts->meta[i];
    mlrt__sort(v, n, sizeof *v, by_key);
    for (size_t i = 1; i < n && !st; i++)
        if (by_key(&v[i - 1], &v[i]) == 0)
            st = mlrt__fail(c->err, MLRT_ERR_DUPLICATE_KEY, FMT ": duplicate metadata key '%s'", v[i]->key);
    free(v);
    return st;
}

static int by_name(const void *a, const void *b) {
    const mlrt__tensor *x = *(const mlrt__tensor *const *)a, *y = *(const mlrt__tensor *const *)b;
    size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
    int c = memcmp(x->name, y->name, n);
    return c ? c : (x->name_len > y->name_len) - (x->name_len < y->name_len);
}

static mlrt_status check_unique_names(cursor *c, mlrt__tensorset *ts) {
    if (ts->count < 2) return MLRT_OK;
    mlrt__tensor **v = malloc(ts->count * sizeof *v);
    if (!v) return mlrt__fail(c->err, MLRT_ERR_OUT_OF_MEMORY, FMT ": out of memory");
    for (size_t i = 0; i < ts->count; i++) v[i] = &ts->tensors[i];
    mlrt__sort(v, ts->count, sizeof *v, by_name);
    mlrt_status st = MLRT_OK;
    for (size_t i = 1; i < ts->count && !st; i++)
        if (by_name(&v[i - 1], &v[i]) == 0)
            st = mlrt__fail(c->err, MLRT_ERR_DUPLICATE_KEY, FMT ": duplicate tensor name '%s'", v[i]->name);
    free(v);
    return st;
}

/* The tensor list's length, checked, and room for that many tensors. */
static mlrt_status tensor_list(cursor *c, mlrt__tensorset *ts, size_t *n) {
    mlrt_status st = count(c, "the tensor list", n);
    if (st) return st;
    if (*n > MLRT__MAX_TENSORS)
        return mlrt__fail(c->err, MLRT_ERR_BAD_HEADER, FMT ": %zu tensors, more than %d", *n, MLRT__MAX_TENSORS);
    ts->tensors = calloc(*n ? *n : 1, sizeof *ts->tensors);
    if (!ts->tensors) return mlrt__fail(c->err, MLRT_ERR_OUT_OF_MEMORY, FMT ": out of memory");
    return MLRT_OK;
}

/* The crate's layout: tensor infos, then a name -> index map covering each index once. */
static mlrt_status read_crate_layout(cursor *c, mlrt__tensorset *ts) {
    mlrt_status st;
    size_t n;
    if ((st = tensor_list(c, ts, &n))) return st;
    for (ts->count = 0; ts->count < n; ts->count++)
        if ((st = tensor_info(c, &ts->tensors[ts->count]))) return st;
    size_t m;
    if ((st = count(c, "the index map", &m))) return st;
    if (m != n)
        return mlrt__fail(c->err, MLRT_ERR_BAD_HEADER, FMT ": index map has %zu names for %zu tensors", m, n);
    for (size_t i = 0; i < m; i++) {
        char *name;
        size_t len;
        uint64_t idx;
        if ((st = string(c, "a tensor name", &name, &len))) return st;
        if (!(st = varint(c, "the index map", &idx)) && (idx >= n || ts->tensors[idx].name))
            st = mlrt__fail(c->err, MLRT_ERR_BAD_HEADER, FMT ": index map entry '%s' -> %llu is out of range or repeated",
                           name, (unsigned long long)idx);
        if (st) {
            free(name);
            return st;
        }
        ts->tensors[idx].name = name;
        ts->tensors[idx].name_len = len;
    }
    return MLRT_OK;
}

/* The early spec's layout: (name, info) pairs. */
static mlrt_status read_pair_layout(cursor *c, mlrt__tensorset *ts) {
    mlrt_status st;
    size_t n;
    if ((st = tensor_list(c, ts, &n))) return st;
    for (ts->count = 0; ts->count < n; ts->count++) {
        mlrt__tensor *t = &ts->tensors[ts->count];
        if ((st = string(c, "a tensor name", &t->name, &t->name_len))) { ts->count++; return st; }
        if ((st = tensor_info(c, t))) { ts->count++; return st; }
    }
    return MLRT_OK;
}

/* *parsed: the layout's structure read through to the end of the metadata (whatever the
 * checks after that found). */
static mlrt_status read_layout(const uint8_t *meta, size_t mlen, bool crate, mlrt__tensorset *ts,
                               mlrt_error *err, bool *parsed) {
    memset(ts, 0, sizeof *ts);
    ts->format = MLRT_FORMAT_BINTENSORS;
    cursor c = {meta, mlen, 0, err};
    mlrt_status st = read_user_metadata(&c, ts);
    if (!st) st = crate ? read_crate_layout(&c, ts) : read_pair_layout(&c, ts);
    /* bytes after the decoded metadata, inside the declared length, are ignored (as the crate does):
     * usually the space padding to a multiple of 8 */
    *parsed = !st;
    if (!st) st = check_unique_names(&c, ts);
    for (size_t i = 0; i < ts->count && !st; i++) {
        mlrt__tensor *t = &ts->tensors[i];
        if (!t->name || t->name_len == 0 || memchr(t->name, 0, t->name_len))
            st = mlrt__fail(err, MLRT_ERR_BAD_HEADER, FMT ": tensor %zu has an empty name or one containing NUL", i);
        else st = mlrt__tensor_check_span(t, FMT, err);
    }
    /* the crate stores tensors in the order of their data: each starts where the one before ends
     * or later (the tiling itself is checked with the data section's length) */
    for (size_t i = 1; i < ts->count && !st; i++)
        if (ts->tensors[i].begin < ts->tensors[i - 1].end)
            st = mlrt__fail(err, MLRT_ERR_BAD_OFFSETS,
                           FMT ": tensor %zu '%s' starts at data byte %zu, before tensor %zu '%s' ends at %zu: tensors must be "
                               "stored in the order of their offsets",
                           i, ts->tensors[i].name, ts->tensors[i].begin, i - 1, ts->tensors[i - 1].name, ts->tensors[i - 1].end);
    return st;
}

/* One layout, from the metadata to the tiling of the data section. */
static mlrt_status read_whole(const uint8_t *b, size_t n, uint64_t mlen, bool crate, mlrt__tensorset *ts, mlrt_error *err,
                              bool *parsed) {
    mlrt_status st = read_layout(b + 8, (size_t)mlen, crate, ts, err, parsed);
    if (!st) {
        ts->data_begin = 8 + (size_t)mlen;
        st = mlrt__tensorset_check_layout(ts, n - ts->data_begin, FMT, err);
    }
    if (st) mlrt__tensorset_free(ts);
    return st;
}

mlrt_status mlrt__read_bintensors(const uint8_t *b, size_t n, mlrt__tensorset *ts, mlrt_error *err) {
    memset(ts, 0, sizeof *ts);
    uint64_t mlen;
    mlrt_status st = mlrt__read_header_length(b, n, FMT, "metadata", &mlen, err);
    if (st) return st;
    mlrt_error first, second;
    bool crate_parsed, early_parsed;
    st = read_whole(b, n, mlen, true, ts, &first, &crate_parsed);
    if (st) {
        mlrt_status st2 = read_whole(b, n, mlen, false, ts, &second, &early_parsed);
        if (st2) {
            /* the error of the layout the metadata is written in: the early one when only it parsed */
            bool early = early_parsed && !crate_parsed;
            if (err) *err = early ? second : first;
            return early ? st2 : st;
        }
    }
    ts->format = MLRT_FORMAT_BINTENSORS;
    return MLRT_OK;
}
