/* codecs/bincode.c — the bounds-checked bincode 1 reader of bincode.h. */
#include "codecs.h"
#include <string.h>

mlrt_status mlrt__bc_take(mlrt__bincode *c, size_t k, const char *what, const uint8_t **at) {
    *at = NULL;
    if (c->n - c->pos < k)
        return mlrt__fail(c->err, MLRT_ERR_TRUNCATED, "apr: %s payload ends at byte %zu inside %s", c->type, c->n, what);
    *at = c->p + c->pos;
    c->pos += k;
    return MLRT_OK;
}

/* A bool or an Option tag: one byte, 0 or 1. */
mlrt_status mlrt__bc_tag(mlrt__bincode *c, const char *what, bool *v) {
    const uint8_t *p = NULL;
    mlrt_status st = mlrt__bc_take(c, 1, what, &p);
    if (st) return st;
    if (*p > 1)
        return mlrt__fail(c->err, MLRT_ERR_BAD_PAYLOAD, "apr: %s payload byte %zu: %s is %u, not 0 or 1", c->type,
                         c->pos - 1, what, *p);
    *v = *p;
    return MLRT_OK;
}

mlrt_status mlrt__bc_u64(mlrt__bincode *c, const char *what, uint64_t *v) {
    const uint8_t *p = NULL;
    mlrt_status st = mlrt__bc_take(c, 8, what, &p);
    if (!st) *v = mlrt__rd_u64(p);
    return st;
}

mlrt_status mlrt__bc_u32(mlrt__bincode *c, const char *what, uint32_t *v) {
    const uint8_t *p = NULL;
    mlrt_status st = mlrt__bc_take(c, 4, what, &p);
    if (!st) *v = mlrt__rd_u32(p);
    return st;
}

mlrt_status mlrt__bc_f32(mlrt__bincode *c, const char *what, float *v) {
    uint32_t u = 0;
    mlrt_status st = mlrt__bc_u32(c, what, &u);
    if (!st) memcpy(v, &u, 4);
    return st;
}

/* An enum's u32 variant index in 0..count-1. */
mlrt_status mlrt__bc_variant(mlrt__bincode *c, const char *what, uint32_t count, uint32_t *v) {
    mlrt_status st = mlrt__bc_u32(c, what, v);
    if (st) return st;
    if (*v >= count)
        return mlrt__fail(c->err, MLRT_ERR_BAD_PAYLOAD, "apr: %s payload byte %zu: %s variant %u is not one of 0..%u",
                         c->type, c->pos - 4, what, *v, count - 1);
    return MLRT_OK;
}

/* An Option<usize>: *some = the tag, *v = the value (0 when None). */
mlrt_status mlrt__bc_opt_u64(mlrt__bincode *c, const char *what, bool *some, uint64_t *v) {
    *v = 0;
    *some = false;
    mlrt_status st = mlrt__bc_tag(c, what, some);
    return st || !*some ? st : mlrt__bc_u64(c, what, v);
}

/* A Vec<T> of elem-byte items (units: "floats" in messages): its u64 count, checked against the
 * bytes that remain; the items are skipped and *data points at them. */
mlrt_status mlrt__bc_vec(mlrt__bincode *c, const char *what, size_t elem, const char *units,
                                      const uint8_t **data, uint64_t *count) {
    mlrt_status st = mlrt__bc_u64(c, what, count);
    if (st) return st;
    if (*count > (c->n - c->pos) / elem)
        return mlrt__fail(c->err, MLRT_ERR_TRUNCATED, "apr: %s payload byte %zu: %s declares %llu %s but %zu bytes remain",
                         c->type, c->pos - 8, what, (unsigned long long)*count, units, c->n - c->pos);
    return mlrt__bc_take(c, (size_t)*count * elem, what, data);
}

/* A String: valid UTF-8. */
mlrt_status mlrt__bc_string(mlrt__bincode *c, const char *what, const uint8_t **s, uint64_t *len) {
    mlrt_status st = mlrt__bc_vec(c, what, 1, "bytes", s, len);
    if (st) return st;
    if (!mlrt__utf8_valid(*s, (size_t)*len))
        return mlrt__fail(c->err, MLRT_ERR_INVALID_UTF8, "apr: %s payload byte %zu: %s is not valid UTF-8", c->type,
                         (size_t)(*s - c->p), what);
    return MLRT_OK;
}

/* aprender never writes bytes after the model. */
mlrt_status mlrt__bc_consumed(mlrt__bincode *c) {
    if (c->pos != c->n)
        return mlrt__fail(c->err, MLRT_ERR_SIZE_MISMATCH, "apr: %s payload is %zu bytes but its fields end at byte %zu",
                         c->type, c->n, c->pos);
    return MLRT_OK;
}
