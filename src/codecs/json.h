/* codecs/json.h — a strict JSON reader (RFC 8259) for file headers.
 * Refuses: invalid UTF-8, trailing garbage, duplicate object keys, lone surrogates,
 * raw control characters in strings, nesting deeper than MLRT_MAX_JSON_DEPTH. */
#ifndef MLRT_JSON_H
#define MLRT_JSON_H

#include "../internal.h"

typedef enum mlrt_json_type {
    MLRT_JSON_NULL, MLRT_JSON_FALSE, MLRT_JSON_TRUE, MLRT_JSON_NUMBER,
    MLRT_JSON_STRING, MLRT_JSON_ARRAY, MLRT_JSON_OBJECT
} mlrt_json_type;

typedef struct mlrt_json mlrt_json;
struct mlrt_json {
    mlrt_json_type type;
    size_t count;        /* ARRAY: items, OBJECT: members */
    const char *str;     /* STRING: decoded, NUL-terminated; NUMBER: its source text (not terminated) */
    size_t len;          /* bytes of str */
    const char *key;     /* set on object members: decoded, NUL-terminated */
    size_t key_len;
    mlrt_json *child;    /* ARRAY/OBJECT: first item */
    mlrt_json *next;     /* next sibling */
};

typedef struct mlrt_json_doc {
    mlrt_json *root;
    void *blocks;        /* arena owning every node and string */
} mlrt_json_doc;

/* Parses s[0..n). what: prefix for messages ("safetensors: header"). */
mlrt_status mlrt_json_parse(const uint8_t *s, size_t n, const char *what, mlrt_json_doc *doc, mlrt_error *err);
void mlrt_json_free(mlrt_json_doc *doc);

/* A non-negative integer written without sign, fraction or exponent, that fits in u64. */
bool mlrt_json_u64(const mlrt_json *v, uint64_t *out);
const mlrt_json *mlrt_json_get(const mlrt_json *obj, const char *key);
const char *mlrt_json_type_name(mlrt_json_type t);

#endif
