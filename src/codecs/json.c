/* codecs/json.c — strict JSON reader into an arena-allocated tree. */
#include "codecs.h"
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- arena */

typedef struct block { struct block *prev; size_t used, cap; } block; /* data follows, 16-aligned */

static void *arena_alloc(mlrt__json_doc *doc, size_t size) {
    size = (size + 15) & ~(size_t)15;
    block *b = doc->blocks;
    if (!b || b->cap - b->used < size) {
        size_t cap = size > 65536 ? size : 65536;
        b = malloc(sizeof(block) + 16 + cap);
        if (!b) return NULL;
        b->prev = doc->blocks;
        b->used = 0;
        b->cap = cap;
        doc->blocks = b;
    }
    void *p = (char *)(b + 1) + 16 + b->used;
    b->used += size;
    return p;
}

void mlrt__json_free(mlrt__json_doc *doc) {
    block *b = doc->blocks;
    while (b) {
        block *prev = b->prev;
        free(b);
        b = prev;
    }
    doc->blocks = NULL;
    doc->root = NULL;
}

/* --------------------------------------------------------------- parser */

typedef struct parser {
    const uint8_t *s;
    size_t n, pos;
    int depth;
    const char *what;
    mlrt__json_doc *doc;
    mlrt_error *err;
} parser;

static mlrt_status syntax(parser *p, const char *msg) {
    return mlrt__fail(p->err, MLRT_ERR_INVALID_JSON, "%s: invalid JSON at byte %zu: %s", p->what, p->pos, msg);
}

static mlrt_status oom(parser *p) {
    return mlrt__fail(p->err, MLRT_ERR_OUT_OF_MEMORY, "%s: out of memory parsing JSON", p->what);
}

static void skip_ws(parser *p) {
    while (p->pos < p->n) {
        uint8_t c = p->s[p->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
        p->pos++;
    }
}

static int hex4(const uint8_t *s) {
    int v = 0;
    for (int i = 0; i < 4; i++) {
        int c = s[i], d;
        if (c >= '0' && c <= '9') d = c - '0';
        else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
        else return -1;
        v = v << 4 | d;
    }
    return v;
}

static size_t put_utf8(char *o, uint32_t cp) {
    if (cp < 0x80) { o[0] = (char)cp; return 1; }
    if (cp < 0x800) { o[0] = (char)(0xc0 | cp >> 6); o[1] = (char)(0x80 | (cp & 63)); return 2; }
    if (cp < 0x10000) {
        o[0] = (char)(0xe0 | cp >> 12); o[1] = (char)(0x80 | (cp >> 6 & 63)); o[2] = (char)(0x80 | (cp & 63));
        return 3;
    }
    o[0] = (char)(0xf0 | cp >> 18); o[1] = (char)(0x80 | (cp >> 12 & 63));
    o[2] = (char)(0x80 | (cp >> 6 & 63)); o[3] = (char)(0x80 | (cp & 63));
    return 4;
}

/* At the opening quote. Decoded text is never longer than its source. */
static mlrt_status parse_string(parser *p, const char **out, size_t *out_len) {
    size_t start = ++p->pos, end = start;
    while (end < p->n && p->s[end] != '"') end += p->s[end] == '\\' ? 2 : 1;
    if (end >= p->n) { p->pos = p->n; return syntax(p, "unterminated string"); }
    char *o = arena_alloc(p->doc, end - start + 1);
    if (!o) return oom(p);
    size_t k = 0;
    while (p->pos < end) {
        uint8_t c = p->s[p->pos];
        if (c < 0x20) return syntax(p, "control character in string");
        if (c != '\\') { o[k++] = (char)c; p->pos++; continue; }
        uint8_t e = p->s[p->pos + 1];
        p->pos += 2;
        switch (e) {
        case '"': o[k++] = '"'; break;
        case '\\': o[k++] = '\\'; break;
        case '/': o[k++] = '/'; break;
        case 'b': o[k++] = '\b'; break;
        case 'f': o[k++] = '\f'; break;
        case 'n': o[k++] = '\n'; break;
        case 'r': o[k++] = '\r'; break;
        case 't': o[k++] = '\t'; break;
        case 'u': {
            int hi = end - p->pos >= 4 ? hex4(p->s + p->pos) : -1;
            if (hi < 0) return syntax(p, "bad \\u escape");
            p->pos += 4;
            uint32_t cp = (uint32_t)hi;
            if (hi >= 0xdc00 && hi <= 0xdfff) return syntax(p, "lone low surrogate in \\u escape");
            if (hi >= 0xd800 && hi <= 0xdbff) {
                int lo = end - p->pos >= 6 && p->s[p->pos] == '\\' && p->s[p->pos + 1] == 'u'
                             ? hex4(p->s + p->pos + 2) : -1;
                if (lo < 0xdc00 || lo > 0xdfff) return syntax(p, "lone high surrogate in \\u escape");
                p->pos += 6;
                cp = 0x10000 + (((uint32_t)hi - 0xd800) << 10) + ((uint32_t)lo - 0xdc00);
            }
            k += put_utf8(o + k, cp);
            break;
        }
        default: p->pos -= 1; return syntax(p, "bad escape in string");
        }
    }
    o[k] = 0;
    p->pos = end + 1;
    *out = o;
    *out_len = k;
    return MLRT_OK;
}

static mlrt_status parse_number(parser *p, mlrt__json *v) {
    size_t start = p->pos;
    const uint8_t *s = p->s;
    size_t i = p->pos, n = p->n;
    if (i < n && s[i] == '-') i++;
    if (i < n && s[i] == '0') i++;
    else if (i < n && s[i] >= '1' && s[i] <= '9') while (i < n && s[i] >= '0' && s[i] <= '9') i++;
    else { p->pos = i; return syntax(p, "bad number"); }
    if (i < n && s[i] == '.') {
        i++;
        if (i >= n || s[i] < '0' || s[i] > '9') { p->pos = i; return syntax(p, "bad number fraction"); }
        while (i < n && s[i] >= '0' && s[i] <= '9') i++;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-')) i++;
        if (i >= n || s[i] < '0' || s[i] > '9') { p->pos = i; return syntax(p, "bad number exponent"); }
        while (i < n && s[i] >= '0' && s[i] <= '9') i++;
    }
    v->type = MLRT__JSON_NUMBER;
    v->str = (const char *)s + start;
    v->len = i - start;
    p->pos = i;
    return MLRT_OK;
}

static const char *member_key(const void *ctx, size_t i, size_t *len) {
    const mlrt__json *const *m = ctx;
    *len = m[i]->key_len;
    return m[i]->key;
}

/* A key that comes twice in an object: the first repeat in document order (linear in the members:
 * bert-base's vocabulary is one object of 30,522). */
static mlrt_status check_duplicates(parser *p, const mlrt__json *obj) {
    if (obj->count < 2) return MLRT_OK;
    const mlrt__json **m = malloc(obj->count * sizeof *m);
    size_t i = 0, first, again;
    if (!m) return oom(p);
    for (const mlrt__json *c = obj->child; c; c = c->next) m[i++] = c;
    mlrt_status st = !mlrt__first_repeat(obj->count, m, member_key, &first, &again) ? oom(p)
                     : again != SIZE_MAX ? mlrt__fail(p->err, MLRT_ERR_DUPLICATE_KEY, "%s: duplicate key '%s'", p->what, m[again]->key)
                                         : MLRT_OK;
    free(m);
    return st;
}

static mlrt_status parse_value(parser *p, mlrt__json *v);

static mlrt_status parse_container(parser *p, mlrt__json *v, bool object) {
    if (++p->depth > MLRT__MAX_JSON_DEPTH) return syntax(p, "nesting too deep");
    v->type = object ? MLRT__JSON_OBJECT : MLRT__JSON_ARRAY;
    char close = object ? '}' : ']';
    p->pos++;
    skip_ws(p);
    mlrt__json **tail = &v->child;
    if (p->pos < p->n && p->s[p->pos] == close) { p->pos++; p->depth--; return MLRT_OK; }
    for (;;) {
        mlrt__json *item = arena_alloc(p->doc, sizeof *item);
        if (!item) return oom(p);
        memset(item, 0, sizeof *item);
        mlrt_status st;
        if (object) {
            skip_ws(p);
            if (p->pos >= p->n || p->s[p->pos] != '"') return syntax(p, "expected a string key");
            if ((st = parse_string(p, &item->key, &item->key_len))) return st;
            skip_ws(p);
            if (p->pos >= p->n || p->s[p->pos] != ':') return syntax(p, "expected ':'");
            p->pos++;
        }
        if ((st = parse_value(p, item))) return st;
        *tail = item;
        tail = &item->next;
        v->count++;
        skip_ws(p);
        if (p->pos >= p->n) return syntax(p, object ? "unterminated object" : "unterminated array");
        if (p->s[p->pos] == ',') { p->pos++; continue; }
        if (p->s[p->pos] == close) { p->pos++; break; }
        return syntax(p, object ? "expected ',' or '}'" : "expected ',' or ']'");
    }
    p->depth--;
    return object ? check_duplicates(p, v) : MLRT_OK;
}

static bool literal(parser *p, const char *word) {
    size_t n = strlen(word);
    if (p->n - p->pos < n || memcmp(p->s + p->pos, word, n) != 0) return false;
    p->pos += n;
    return true;
}

static mlrt_status parse_value(parser *p, mlrt__json *v) {
    skip_ws(p);
    if (p->pos >= p->n) return syntax(p, "unexpected end");
    switch (p->s[p->pos]) {
    case '{': return parse_container(p, v, true);
    case '[': return parse_container(p, v, false);
    case '"': v->type = MLRT__JSON_STRING; return parse_string(p, &v->str, &v->len);
    case 't': v->type = MLRT__JSON_TRUE; return literal(p, "true") ? MLRT_OK : syntax(p, "bad literal");
    case 'f': v->type = MLRT__JSON_FALSE; return literal(p, "false") ? MLRT_OK : syntax(p, "bad literal");
    case 'n': v->type = MLRT__JSON_NULL; return literal(p, "null") ? MLRT_OK : syntax(p, "bad literal");
    default: return parse_number(p, v);
    }
}

mlrt_status mlrt__json_parse(const uint8_t *s, size_t n, const char *what, mlrt__json_doc *doc, mlrt_error *err) {
    memset(doc, 0, sizeof *doc);
    if (!mlrt__utf8_valid(s, n))
        return mlrt__fail(err, MLRT_ERR_INVALID_UTF8, "%s: not valid UTF-8", what);
    parser p = {s, n, 0, 0, what, doc, err};
    mlrt__json *root = arena_alloc(doc, sizeof *root);
    if (!root) return oom(&p);
    memset(root, 0, sizeof *root);
    mlrt_status st = parse_value(&p, root);
    if (!st) {
        skip_ws(&p);
        if (p.pos != n) st = syntax(&p, "trailing characters after the JSON value");
    }
    if (st) { mlrt__json_free(doc); return st; }
    doc->root = root;
    return MLRT_OK;
}

/* ------------------------------------------------------------- accessors */

bool mlrt__json_u64(const mlrt__json *v, uint64_t *out) {
    if (!v || v->type != MLRT__JSON_NUMBER || v->len == 0) return false;
    uint64_t x = 0;
    for (size_t i = 0; i < v->len; i++) {
        char c = v->str[i];
        if (c < '0' || c > '9') return false; /* sign, fraction, exponent */
        if (i < 19) x = x * 10 + (uint64_t)(c - '0'); /* 19 digits cannot overflow (a vocabulary's ids: the common case) */
        else if (!mlrt__mul_u64(x, 10, &x) || !mlrt__add_u64(x, (uint64_t)(c - '0'), &x)) return false;
    }
    *out = x;
    return true;
}

/* Decimal digits to double: m / 10^-e or m x 10^e, m and 10^|e| exact doubles (at most 15 digits, |e| <= 22:
 * one correctly rounded operation, as config files' numbers are); other numbers within a few ulps. */
bool mlrt__json_f64(const mlrt__json *v, double *out) {
    if (!v || v->type != MLRT__JSON_NUMBER || v->len == 0) return false;
    const char *s = v->str, *end = s + v->len;
    double m = 0.0, p = 1.0, sign = *s == '-' ? (s++, -1.0) : 1.0;
    long e = 0, x = 0, es = 1;
    bool frac = false;
    for (; s < end && *s != 'e' && *s != 'E'; s++) /* (the parser checked the grammar) */
        if (*s == '.') frac = true;
        else m = m * 10.0 + (*s - '0'), e -= frac;
    if (s < end && *++s == '-') es = -1;
    for (; s < end; s++) if (*s >= '0' && *s <= '9' && x < 100000) x = x * 10 + (*s - '0');
    e += es * x;
    for (long k = e < 0 ? -e : e; k > 0 && p < 1e308; k--) p *= 10.0;
    *out = sign * (e < 0 ? m / p : m * p);
    return true;
}

const mlrt__json *mlrt__json_get(const mlrt__json *obj, const char *key) {
    if (!obj || obj->type != MLRT__JSON_OBJECT) return NULL;
    size_t n = strlen(key);
    for (const mlrt__json *c = obj->child; c; c = c->next)
        if (c->key_len == n && memcmp(c->key, key, n) == 0) return c;
    return NULL;
}

const char *mlrt__json_type_name(mlrt__json_type t) {
    static const char *const names[] = {"null", "false", "true", "number", "string", "array", "object"};
    return (unsigned)t <= MLRT__JSON_OBJECT ? names[t] : "?";
}
