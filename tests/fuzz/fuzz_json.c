/* fuzz_json.c — libFuzzer target for the strict JSON reader (mlrt__json_parse).
 * Oracles: a refusal is INVALID_JSON / INVALID_UTF8 / DUPLICATE_KEY with a well-formed message;
 * an accepted document is valid UTF-8 and RFC 8259 JSON (checked here by an independent
 * recursive validator), its tree is consistent (counts, decoded strings are UTF-8, no
 * duplicate keys, depth <= MLRT__MAX_JSON_DEPTH), mlrt__json_u64 agrees with the number text,
 * and writing the tree back out and parsing it again gives the same tree. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ---------------------------------------------------- an independent validator */

typedef struct val { const uint8_t *s; size_t n, i; int depth, max_depth; } val;
static void v_ws(val *v) { while (v->i < v->n && strchr(" \t\n\r", v->s[v->i]) && v->s[v->i]) v->i++; }
static int v_value(val *v);
static int v_digits(val *v) {
    size_t st = v->i;
    while (v->i < v->n && v->s[v->i] >= '0' && v->s[v->i] <= '9') v->i++;
    return v->i > st;
}
static int v_hex4(val *v, unsigned *out) {
    if (v->n - v->i < 4) return 0;
    unsigned x = 0;
    for (int k = 0; k < 4; k++) {
        uint8_t c = v->s[v->i++];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0) return 0;
        x = x * 16 + (unsigned)d;
    }
    *out = x;
    return 1;
}
static int v_string(val *v) {
    v->i++;
    while (v->i < v->n) {
        uint8_t c = v->s[v->i++];
        if (c == '"') return 1;
        if (c < 0x20) return 0;
        if (c != '\\') continue;
        if (v->i >= v->n) return 0;
        c = v->s[v->i++];
        if (c == 'u') {
            unsigned u, lo;
            if (!v_hex4(v, &u)) return 0;
            if (u >= 0xdc00 && u <= 0xdfff) return 0;
            if (u >= 0xd800 && u <= 0xdbff) {
                if (v->n - v->i < 2 || v->s[v->i] != '\\' || v->s[v->i + 1] != 'u') return 0;
                v->i += 2;
                if (!v_hex4(v, &lo) || lo < 0xdc00 || lo > 0xdfff) return 0;
            }
        } else if (!strchr("\"\\/bfnrt", c) || !c) {
            return 0;
        }
    }
    return 0;
}
static int v_container(val *v, char close, int object) {
    if (++v->depth > v->max_depth) v->max_depth = v->depth;
    if (v->depth > MLRT__MAX_JSON_DEPTH) return 0;
    v->i++;
    v_ws(v);
    if (v->i < v->n && v->s[v->i] == close) { v->i++; v->depth--; return 1; }
    for (;;) {
        v_ws(v);
        if (object) {
            if (v->i >= v->n || v->s[v->i] != '"' || !v_string(v)) return 0;
            v_ws(v);
            if (v->i >= v->n || v->s[v->i++] != ':') return 0;
        }
        if (!v_value(v)) return 0;
        v_ws(v);
        if (v->i >= v->n) return 0;
        uint8_t c = v->s[v->i++];
        if (c == (uint8_t)close) break;
        if (c != ',') return 0;
    }
    v->depth--;
    return 1;
}
static int v_value(val *v) {
    v_ws(v);
    if (v->i >= v->n) return 0;
    uint8_t c = v->s[v->i];
    if (c == '{') return v_container(v, '}', 1);
    if (c == '[') return v_container(v, ']', 0);
    if (c == '"') return v_string(v);
    static const char *const lits[] = {"true", "false", "null"};
    for (int k = 0; k < 3; k++) {
        size_t L = strlen(lits[k]);
        if (v->n - v->i >= L && memcmp(v->s + v->i, lits[k], L) == 0) { v->i += L; return 1; }
    }
    if (c == '-') v->i++;
    if (v->i < v->n && v->s[v->i] == '0') v->i++;
    else if (!(v->i < v->n && v->s[v->i] >= '1' && v->s[v->i] <= '9') || !v_digits(v)) return 0;
    if (v->i < v->n && v->s[v->i] == '.') { v->i++; if (!v_digits(v)) return 0; }
    if (v->i < v->n && (v->s[v->i] == 'e' || v->s[v->i] == 'E')) {
        v->i++;
        if (v->i < v->n && (v->s[v->i] == '+' || v->s[v->i] == '-')) v->i++;
        if (!v_digits(v)) return 0;
    }
    return 1;
}
/* 1 valid, 0 invalid JSON (syntax and depth; UTF-8 and duplicate keys are checked elsewhere) */
static int independent_valid(const uint8_t *s, size_t n) {
    val v = {s, n, 0, 0, 0};
    if (!v_value(&v)) return 0;
    v_ws(&v);
    return v.i == n;
}

/* ------------------------------------------------------------- tree checks */

static int cmp_key(const void *a, const void *b) {
    const mlrt__json *x = *(const mlrt__json *const *)a, *y = *(const mlrt__json *const *)b;
    size_t n = x->key_len < y->key_len ? x->key_len : y->key_len;
    int c = memcmp(x->key, y->key, n);
    return c ? c : (x->key_len > y->key_len) - (x->key_len < y->key_len);
}

static void check_tree(const mlrt__json *v, int depth) {
    FUZZ_ASSERT(depth <= MLRT__MAX_JSON_DEPTH + 1, "depth %d", depth);
    switch (v->type) {
    case MLRT__JSON_STRING:
        FUZZ_ASSERT(v->str[v->len] == 0 && mlrt__utf8_valid((const uint8_t *)v->str, v->len), "decoded string");
        break;
    case MLRT__JSON_NUMBER: {
        FUZZ_ASSERT(v->len > 0, "empty number");
        uint64_t x;
        if (mlrt__json_u64(v, &x)) {
            char buf[24];
            int k = snprintf(buf, sizeof buf, "%llu", (unsigned long long)x);
            FUZZ_ASSERT((size_t)k == v->len && memcmp(buf, v->str, v->len) == 0, "u64 %s vs %.*s", buf, (int)v->len,
                        v->str);
        } else {
            int digits = 1;
            for (size_t i = 0; i < v->len; i++) digits &= v->str[i] >= '0' && v->str[i] <= '9';
            FUZZ_ASSERT(!digits || v->len >= 20, "u64 refused %.*s", (int)v->len, v->str);
        }
        break;
    }
    case MLRT__JSON_ARRAY:
    case MLRT__JSON_OBJECT: {
        size_t n = 0;
        for (const mlrt__json *c = v->child; c; c = c->next) {
            if (v->type == MLRT__JSON_OBJECT)
                FUZZ_ASSERT(c->key && c->key[c->key_len] == 0 && mlrt__utf8_valid((const uint8_t *)c->key, c->key_len),
                            "key");
            else
                FUZZ_ASSERT(c->key == NULL, "array item with a key");
            check_tree(c, depth + 1);
            n++;
        }
        FUZZ_ASSERT(n == v->count, "count %zu vs %zu children", v->count, n);
        if (v->type == MLRT__JSON_OBJECT && n > 1) {
            const mlrt__json **m = malloc(n * sizeof *m);
            FUZZ_ASSERT(m, "oom");
            size_t i = 0;
            for (const mlrt__json *c = v->child; c; c = c->next) m[i++] = c;
            qsort(m, n, sizeof *m, cmp_key);
            for (i = 1; i < n; i++) FUZZ_ASSERT(cmp_key(&m[i - 1], &m[i]) != 0, "duplicate key '%s' accepted", m[i]->key);
            free(m);
        }
        break;
    }
    default: break;
    }
}

static void write_tree(mlrt__buf *b, const mlrt__json *v) {
    switch (v->type) {
    case MLRT__JSON_NULL: mlrt__buf_puts(b, "null"); break;
    case MLRT__JSON_TRUE: mlrt__buf_puts(b, "true"); break;
    case MLRT__JSON_FALSE: mlrt__buf_puts(b, "false"); break;
    case MLRT__JSON_NUMBER: mlrt__buf_append(b, v->str, v->len); break;
    case MLRT__JSON_STRING: mlrt__buf_json_string(b, v->str, v->len); break;
    case MLRT__JSON_ARRAY:
    case MLRT__JSON_OBJECT:
        mlrt__buf_puts(b, v->type == MLRT__JSON_ARRAY ? "[" : "{");
        for (const mlrt__json *c = v->child; c; c = c->next) {
            if (c != v->child) mlrt__buf_puts(b, ",");
            if (v->type == MLRT__JSON_OBJECT) {
                mlrt__buf_json_string(b, c->key, c->key_len);
                mlrt__buf_puts(b, ":");
            }
            write_tree(b, c);
        }
        mlrt__buf_puts(b, v->type == MLRT__JSON_ARRAY ? "]" : "}");
        break;
    }
}

static void same_tree(const mlrt__json *a, const mlrt__json *b) {
    FUZZ_ASSERT(a->type == b->type && a->count == b->count, "round trip: type/count");
    FUZZ_ASSERT((a->key == NULL) == (b->key == NULL), "round trip: key presence");
    if (a->key) FUZZ_ASSERT(a->key_len == b->key_len && memcmp(a->key, b->key, a->key_len) == 0, "round trip: key");
    if (a->type == MLRT__JSON_STRING || a->type == MLRT__JSON_NUMBER)
        FUZZ_ASSERT(a->len == b->len && memcmp(a->str, b->str, a->len) == 0, "round trip: value");
    const mlrt__json *x = a->child, *y = b->child;
    for (; x && y; x = x->next, y = y->next) same_tree(x, y);
    FUZZ_ASSERT(!x && !y, "round trip: children");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > FUZZ_MAX_INPUT) return 0;
    mlrt__json_doc doc;
    mlrt_error e;
    mlrt_status st = mlrt__json_parse(data, size, "fuzz", &doc, &e);
    int utf8 = mlrt__utf8_valid(data, size);
    if (st) {
        fuzz_check_error(st, &e);
        FUZZ_ASSERT(doc.root == NULL && doc.blocks == NULL, "doc not cleared");
        FUZZ_ASSERT(strncmp(e.message, "fuzz: ", 6) == 0, "message: %s", e.message);
        FUZZ_ASSERT(st == MLRT_ERR_INVALID_JSON || st == MLRT_ERR_INVALID_UTF8 || st == MLRT_ERR_DUPLICATE_KEY ||
                        st == MLRT_ERR_OUT_OF_MEMORY,
                    "status %s", mlrt_status_name(st));
        FUZZ_ASSERT((st == MLRT_ERR_INVALID_UTF8) == !utf8, "UTF-8 verdict: %s", e.message);
        if (st == MLRT_ERR_INVALID_JSON) FUZZ_ASSERT(!independent_valid(data, size), "valid JSON refused: %s", e.message);
        return 0;
    }
    FUZZ_ASSERT(utf8, "invalid UTF-8 accepted");
    FUZZ_ASSERT(independent_valid(data, size), "invalid JSON accepted");
    check_tree(doc.root, 1);
    mlrt__buf b = {0};
    write_tree(&b, doc.root);
    FUZZ_ASSERT(!b.oom, "oom");
    mlrt__json_doc again;
    st = mlrt__json_parse((const uint8_t *)b.data, b.len, "again", &again, &e);
    FUZZ_ASSERT(st == MLRT_OK, "written tree does not parse: %s: %.300s", e.message, b.data);
    same_tree(doc.root, again.root);
    mlrt__json_free(&again);
    free(b.data);
    mlrt__json_free(&doc);
    return 0;
}
