/* codecs/bincode.h — a bounds-checked reader of bincode 1 (serde's fixed-width little-endian
 * encoding, as aprender writes .apr v1 payloads):
 *   integers  fixed width LE; usize = u64
 *   bool, Option tag  one byte, 0 or 1
 *   enum      u32 variant index, then the variant's fields
 *   Vec<T>, String  u64 count, then the items / UTF-8 bytes
 * Every read checks the bytes that remain first; a count is checked against the bytes it needs
 * before anything is read or allocated from it. Messages: "apr: <type> payload byte N: ...". */
#ifndef MLRT__BINCODE_H
#define MLRT__BINCODE_H

#include "../internal.h"

typedef struct mlrt__bincode {
    const uint8_t *p;   /* [n] the payload */
    size_t n, pos;      /* pos: the next byte to read */
    const char *type;   /* the model type's name, for messages ("DecisionTree") */
    mlrt_error *err;
} mlrt__bincode;

mlrt_status mlrt__bc_take(mlrt__bincode *c, size_t k, const char *what, const uint8_t **at);
/* A bool or an Option tag: one byte, 0 or 1. */
mlrt_status mlrt__bc_tag(mlrt__bincode *c, const char *what, bool *v);
mlrt_status mlrt__bc_u64(mlrt__bincode *c, const char *what, uint64_t *v);
mlrt_status mlrt__bc_u32(mlrt__bincode *c, const char *what, uint32_t *v);
mlrt_status mlrt__bc_f32(mlrt__bincode *c, const char *what, float *v);
/* An enum's u32 variant index in 0..count-1. */
mlrt_status mlrt__bc_variant(mlrt__bincode *c, const char *what, uint32_t count, uint32_t *v);
/* An Option<usize>: *some = the tag, *v = the value (0 when None). */
mlrt_status mlrt__bc_opt_u64(mlrt__bincode *c, const char *what, bool *some, uint64_t *v);
/* A Vec<T> of elem-byte items (units: "floats" in messages): its u64 count, checked against the
 * bytes that remain; the items are skipped and *data points at them. */
mlrt_status mlrt__bc_vec(mlrt__bincode *c, const char *what, size_t elem, const char *units, const uint8_t **data, uint64_t *count);
/* A String: valid UTF-8. */
mlrt_status mlrt__bc_string(mlrt__bincode *c, const char *what, const uint8_t **s, uint64_t *len);
/* aprender never writes bytes after the model. */
mlrt_status mlrt__bc_consumed(mlrt__bincode *c);

#endif
