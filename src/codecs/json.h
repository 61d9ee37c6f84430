/* codecs/json.h — a strict JSON reader (RFC 8259) for file headers.
 * Refuses: invalid UTF-8, trailing garbage, duplicate object keys, lone surrogates,
 * raw control characters in strings, nesting deeper than MLRT__MAX_JSON_DEPTH. */
#ifndef MLRT__JSON_H
#define MLRT__JSON_H

#include "../internal.h"

typedef enum mlrt__json_type {
    MLRT__JSON_NULL, MLRT__JSON_FALSE, MLRT__JSON_TRUE, MLRT__JSON_NUMBER,
    MLRT__JSON_STRING, MLRT__JSON_ARRAY, MLRT__JSON_OBJECT
} mlrt__json_type;

typedef struct mlrt__json mlrt__json;
struct mlrt__json {
    mlrt__json_type type;
    size_t count;        /* ARRAY: items, OBJECT: members */
    const char *str;     /* STRING: decoded, NUL-terminated; NUMBER: its source text (not terminated) */
    size_t len;          /* bytes of str */
    const char *key;     /* set on object members: decoded, NUL-terminated */
    size_t key_len;
    mlrt__json *child;    /* ARRAY/OBJECT: first item */
    mlrt__json *next;     /* next sibling */
};

typedef struct mlrt__json_doc {
    mlrt__json *root;
    void *blocks;        /* arena owning every node and string */
} mlrt__json_doc;

/* Parses s[0..n). what: prefix for messages ("safetensors: header"). */
mlrt_status mlrt__json_parse(const uint8_t *s, size_t n, const char *what, mlrt__json_doc *doc, mlrt_error *err);
void mlrt__json_free(mlrt__json_doc *doc);

/* A non-negative integer written without sign, fraction or exponent, that fits in u64. */
bool mlrt__json_u64(const mlrt__json *v, uint64_t *out);
const mlrt__json *mlrt__json_get(const mlrt__json *obj, const char *key);
const char *mlrt__json_type_name(mlrt__json_type t);

#endif
