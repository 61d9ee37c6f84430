/* codecs/msgpack.c — MessagePack to JSON (see msgpack.h), and shortest float formatting. */
#include "codecs.h"
#include <stdlib.h>
#include <string.h>

/* ============================================================ shortest decimal
 *
 * Burger & Dybvig's free-format algorithm with exact big integers: v = f * 2^e lies strictly
 * between its neighbours' midpoints low = v - m- and high = v + m+ (inclusive when f is even:
 * reading rounds halfway cases to even). Scaled so that r / s = v / 10^k with 0.1 <= v / 10^k < 1,
 * digits come out one at a time, d = floor(10 r / s), until the digits so far, or that plus one
 * in the last place, lie inside (low, high); of two candidates the closer one wins (the even one
 * on a tie). The result is the shortest decimal that reads back as v, and the closest such. */

#define BIG_WORDS 40 /* 1280 bits; the largest value met is below 2^1090 (10 * 2^1076 for 2^-1074) */

typedef struct big {
    uint32_t w[BIG_WORDS];   /* little-endian words, w[n - 1] != 0 unless n == 0 */
    int n;
} big;

static void big_set(big *a, uint64_t v) {
    a->w[0] = (uint32_t)v;
    a->w[1] = (uint32_t)(v >> 32);
    a->n = a->w[1] ? 2 : a->w[0] ? 1 : 0;
}

static void big_mul_small(big *a, uint32_t m) {
    uint64_t carry = 0;
    for (int i = 0; i < a->n; i++) {
        uint64_t t = (uint64_t)a->w[i] * m + carry;
        a->w[i] = (uint32_t)t;
        carry = t >> 32;
    }
    if (carry) a->w[a->n++] = (uint32_t)carry;
}

static void big_shl(big *a, int bits) {
    int words = bits / 32;
    if (a->n && words) {
        memmove(a->w + words, a->w, (size_t)a->n * sizeof a->w[0]);
        memset(a->w, 0, (size_t)words * sizeof a->w[0]);
        a->n += words;
    }
    big_mul_small(a, 1u << (bits % 32));
}

static void big_mul_pow10(big *a, int k) {
    static const uint32_t pow10[10] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000};
    for (; k >= 9; k -= 9) big_mul_small(a, pow10[9]);
    big_mul_small(a, pow10[k]);
}

static int big_cmp(const big *a, const big *b) {
    if (a->n != b->n) return a->n < b->n ? -1 : 1;
    for (int i = a->n - 1; i >= 0; i--)
        if (a->w[i] != b->w[i]) return a->w[i] < b->w[i] ? -1 : 1;
    return 0;
}

static void big_add(big *out, const big *a, const big *b) {
    int n = a->n > b->n ? a->n : b->n;
    uint64_t carry = 0;
    for (int i = 0; i < n; i++) {
        uint64_t t = (uint64_t)(i < a->n ? a->w[i] : 0) + (i < b->n ? b->w[i] : 0) + carry;
        out->w[i] = (uint32_t)t;
        carry = t >> 32;
    }
    out->n = n;
    if (carry) out->w[out->n++] = (uint32_t)carry;
}

static void big_sub(big *a, const big *b) { /* a >= b */
    uint32_t borrow = 0;
    for (int i = 0; i < a->n; i++) {
        uint64_t sub = (uint64_t)(i < b->n ? b->w[i] : 0) + borrow;
        borrow = a->w[i] < sub;
        a->w[i] = (uint32_t)((uint64_t)a->w[i] - sub);
    }
    while (a->n && !a->w[a->n - 1]) a->n--;
}

/* v = f * 2^e > 0; closer: the neighbour below is half as far as the one above (f a power of
 * two that is not the smallest normal). Writes the digits (no NUL) and returns how many;
 * *k: v = 0.d1d2... * 10^k. */
static int shortest_digits(uint64_t f, int e, bool closer, char *digits, int *k) {
    big r, s, mp, mm, t;
    bool even = (f & 1) == 0;
    int up = closer ? 2 : 1; /* m+ / m- */
    big_set(&r, f);
    big_set(&s, 1);
    big_set(&mp, 1);
    big_set(&mm, 1);
    /* r / s = v and m+ / s, m- / s the distances to the midpoints, all times 2 * up */
    big_shl(&r, 1 + (up - 1) + (e > 0 ? e : 0));
    big_shl(&s, 1 + (up - 1) + (e < 0 ? -e : 0));
    big_shl(&mp, (up - 1) + (e > 0 ? e : 0));
    big_shl(&mm, e > 0 ? e : 0);
    /* k = ceil(log10 v), estimated from the binary exponent: exact or one too small */
    int bits = 64 - __builtin_clzll(f);
    int est = (int)__builtin_ceil((double)(e + bits - 1) * 0.30102999566398114 - 1e-10);
    if (est >= 0) big_mul_pow10(&s, est);
    else {
        big_mul_pow10(&r, -est);
        big_mul_pow10(&mp, -est);
        big_mul_pow10(&mm, -est);
    }
    big_add(&t, &r, &mp);
    int c = big_cmp(&t, &s);
    if (even ? c >= 0 : c > 0) {
        big_mul_small(&s, 10);
        est++;
    }
    *k = est;
    int n = 0;
    for (;;) {
        big_mul_small(&r, 10);
        big_mul_small(&mp, 10);
        big_mul_small(&mm, 10);
        int d = 0;
        while (big_cmp(&r, &s) >= 0) {
            big_sub(&r, &s);
            d++;
        }
        int lo = big_cmp(&r, &mm);
        big_add(&t, &r, &mp);
        int hi = big_cmp(&t, &s);
        bool low = even ? lo <= 0 : lo < 0, high = even ? hi >= 0 : hi > 0;
        if (!low && !high) {
            digits[n++] = (char)('0' + d);
            continue;
        }
        if (low && high) { /* both fit: the closer, even on a tie */
            t = r;
            big_mul_small(&t, 2);
            int half = big_cmp(&t, &s);
            if (half > 0 || (half == 0 && (d & 1))) d++;
        } else if (high) {
            d++;
        }
        digits[n++] = (char)('0' + d);
        return n;
    }
}

/* Number#toString's layout for digits d[0..nd) and v = 0.d * 10^k. */
static void number_layout(mlrt__buf *b, bool neg, const char *d, int nd, int k) {
    char o[48];
    int n = 0;
    if (neg) o[n++] = '-';
    if (nd <= k && k <= 21) {
        for (int i = 0; i < nd; i++) o[n++] = d[i];
        for (int i = nd; i < k; i++) o[n++] = '0';
    } else if (0 < k && k <= 21) {
        for (int i = 0; i < nd; i++) {
            if (i == k) o[n++] = '.';
            o[n++] = d[i];
        }
    } else if (-6 < k && k <= 0) {
        o[n++] = '0';
        o[n++] = '.';
        for (int i = k; i < 0; i++) o[n++] = '0';
        for (int i = 0; i < nd; i++) o[n++] = d[i];
    } else {
        o[n++] = d[0];
        if (nd > 1) o[n++] = '.';
        for (int i = 1; i < nd; i++) o[n++] = d[i];
        int x = k - 1;
        o[n++] = 'e';
        o[n++] = x < 0 ? '-' : '+';
        if (x < 0) x = -x;
        if (x >= 100) o[n++] = (char)('0' + x / 100);
        if (x >= 10) o[n++] = (char)('0' + x / 10 % 10);
        o[n++] = (char)('0' + x % 10);
    }
    mlrt__buf_append(b, o, (size_t)n);
}

void mlrt__buf_number(mlrt__buf *b, double v, bool single) {
    uint64_t u;
    memcpy(&u, &v, 8);
    bool neg = u >> 63;
    if (v != v || v - v != 0) { mlrt__buf_puts(b, "null"); return; } /* NaN, infinities */
    if (v == 0) { mlrt__buf_puts(b, neg ? "-0" : "0"); return; }
    uint64_t f, man;
    int e, exp;
    if (single) {
        float x = (float)v;
        uint32_t w;
        memcpy(&w, &x, 4);
        man = w & 0x7fffff;
        exp = (int)(w >> 23 & 0xff);
        f = exp ? man | 1u << 23 : man;
        e = (exp ? exp : 1) - 150;
    } else {
        man = u & ((1ull << 52) - 1);
        exp = (int)(u >> 52 & 0x7ff);
        f = exp ? man | 1ull << 52 : man;
        e = (exp ? exp : 1) - 1075;
    }
    char digits[24];
    int k;
    int nd = shortest_digits(f, e, man == 0 && exp > 1, digits, &k);
    number_layout(b, neg, digits, nd, k);
}

/* ================================================================= reader */

typedef struct mp {
    const uint8_t *p;
    size_t n, pos;      /* input [0, n), next byte at pos */
    size_t base;        /* file offset of p[0], for messages */
    const char *what;   /* "apr: metadata" */
    mlrt__buf *out;
    mlrt_error *err;
} mp;

typedef struct key_ref {
    const uint8_t *s;
    size_t len, at;     /* at: file offset of the key's first byte, for messages */
} key_ref;

static mlrt_status truncated(mp *m, const char *inside) {
    return mlrt__fail(m->err, MLRT_ERR_TRUNCATED, "%s: ends at byte %zu inside %s", m->what, m->base + m->n, inside);
}

/* A big-endian unsigned integer of k bytes. */
static mlrt_status read_be(mp *m, size_t k, const char *inside, uint64_t *v) {
    if (m->n - m->pos < k) return truncated(m, inside);
    *v = 0;
    for (size_t i = 0; i < k; i++) *v = *v << 8 | m->p[m->pos + i];
    m->pos += k;
    return MLRT_OK;
}

static const char *type_name(uint8_t t) {
    if (t <= 0x7f || t >= 0xe0 || (t >= 0xcc && t <= 0xd3)) return "an integer";
    if (t <= 0x8f || t == 0xde || t == 0xdf) return "a map";
    if (t <= 0x9f || t == 0xdc || t == 0xdd) return "an array";
    if (t <= 0xbf || (t >= 0xd9 && t <= 0xdb)) return "a string";
    if (t == 0xc0) return "nil";
    if (t == 0xc2 || t == 0xc3) return "a boolean";
    if (t == 0xca || t == 0xcb) return "a float";
    if (t >= 0xc4 && t <= 0xc6) return "binary data";
    return "an extension";
}

/* The length of a str/bin/array/map whose type byte t was just read. */
static mlrt_status length(mp *m, uint8_t t, size_t *len) {
    static const uint8_t widths[][2] = { /* type byte, length bytes */
        {0xc4, 1}, {0xc5, 2}, {0xc6, 4}, {0xd9, 1}, {0xda, 2}, {0xdb, 4}, {0xdc, 2}, {0xdd, 4}, {0xde, 2}, {0xdf, 4}};
    if (t >= 0x80 && t <= 0xbf) { *len = t & (t >= 0xa0 ? 0x1f : 0x0f); return MLRT_OK; }
    uint64_t v = 0;
    for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++)
        if (widths[i][0] == t) {
            mlrt_status st = read_be(m, widths[i][1], "a length", &v);
            if (st) return st;
        }
    *len = (size_t)v;
    return MLRT_OK;
}

/* key: NULL, or where to note the string (key->at already set). */
static mlrt_status string(mp *m, size_t len, key_ref *key) {
    if (len > m->n - m->pos) return truncated(m, "a string");
    const uint8_t *s = m->p + m->pos;
    if (!mlrt__utf8_valid(s, len))
        return mlrt__fail(m->err, MLRT_ERR_INVALID_UTF8, "%s: string at byte %zu is not valid UTF-8", m->what,
                         m->base + m->pos);
    if (key) *key = (key_ref){s, len, key->at};
    mlrt__buf_json_string(m->out, (const char *)s, len);
    m->pos += len;
    return MLRT_OK;
}

static int by_key(const void *a, const void *b) {
    const key_ref *x = a, *y = b;
    int c = memcmp(x->s, y->s, x->len < y->len ? x->len : y->len);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

static mlrt_status duplicates(mp *m, key_ref *keys, size_t count) {
    mlrt__sort(keys, count, sizeof *keys, by_key);
    for (size_t i = 1; i < count; i++)
        if (by_key(&keys[i - 1], &keys[i]) == 0)
            return mlrt__fail(m->err, MLRT_ERR_DUPLICATE_KEY, "%s: duplicate key '%.*s' at byte %zu", m->what,
                             (int)keys[i].len, (const char *)keys[i].s,
                             keys[i].at > keys[i - 1].at ? keys[i].at : keys[i - 1].at);
    return MLRT_OK;
}

static mlrt_status value(mp *m, int depth);

static mlrt_status container(mp *m, size_t count, bool map, size_t at, int depth) {
    if (depth >= MLRT__MAX_META_DEPTH)
        return mlrt__fail(m->err, MLRT_ERR_INVALID_MSGPACK, "%s: %s at byte %zu nests deeper than %d levels", m->what,
                         map ? "map" : "array", at, MLRT__MAX_META_DEPTH);
    if (count > (m->n - m->pos) / (map ? 2 : 1)) /* every item takes at least a byte */
        return mlrt__fail(m->err, MLRT_ERR_TRUNCATED, "%s: %s at byte %zu declares %zu items but %zu bytes remain",
                         m->what, map ? "map" : "array", at, count, m->n - m->pos);
    key_ref *keys = map && count > 1 ? malloc(count * sizeof *keys) : NULL;
    if (map && count > 1 && !keys) return mlrt__fail(m->err, MLRT_ERR_OUT_OF_MEMORY, "%s: out of memory", m->what);
    mlrt_status st = MLRT_OK;
    mlrt__buf_append(m->out, map ? "{" : "[", 1);
    for (size_t i = 0; i < count && !st; i++) {
        if (i) mlrt__buf_append(m->out, ",", 1);
        if (map && m->pos >= m->n) {
            st = truncated(m, "a map key");
        } else if (map) {
            if (keys) keys[i].at = m->base + m->pos;
            uint8_t t = m->p[m->pos++];
            size_t len = 0;
            if (!((t >= 0xa0 && t <= 0xbf) || (t >= 0xd9 && t <= 0xdb)))
                st = mlrt__fail(m->err, MLRT_ERR_BAD_HEADER, "%s: map key at byte %zu is %s, not a string", m->what,
                               m->base + m->pos - 1, type_name(t));
            else if (!(st = length(m, t, &len)) && !(st = string(m, len, keys ? &keys[i] : NULL)))
                mlrt__buf_append(m->out, ":", 1);
        }
        if (!st) st = value(m, depth + 1);
    }
    mlrt__buf_append(m->out, map ? "}" : "]", 1);
    if (!st && keys) st = duplicates(m, keys, count);
    free(keys);
    return st;
}

static mlrt_status binary(mp *m, size_t len) {
    if (len > m->n - m->pos) return truncated(m, "binary data");
    mlrt__buf_append(m->out, "[", 1);
    for (size_t i = 0; i < len; i++) mlrt__buf_printf(m->out, "%s%u", i ? "," : "", m->p[m->pos + i]);
    mlrt__buf_append(m->out, "]", 1);
    m->pos += len;
    return MLRT_OK;
}

static mlrt_status number(mp *m, uint8_t t) {
    uint64_t v;
    size_t width = t == 0xca ? 4 : t == 0xcb ? 8 : (size_t)1 << ((t - 0xcc) & 3); /* u/int 8..64 */
    mlrt_status st = read_be(m, width, t >= 0xca && t <= 0xcb ? "a float" : "an integer", &v);
    if (st) return st;
    if (t == 0xca || t == 0xcb) {
        double d;
        if (t == 0xca) {
            uint32_t w = (uint32_t)v;
            float x;
            memcpy(&x, &w, 4);
            d = x;
        } else {
            memcpy(&d, &v, 8);
        }
        mlrt__buf_number(m->out, d, t == 0xca);
    } else if (t <= 0xcf) {
        mlrt__buf_printf(m->out, "%llu", (unsigned long long)v);
    } else { /* sign-extend int 8..64 */
        unsigned shift = 64 - 8 * (unsigned)width;
        mlrt__buf_printf(m->out, "%lld", (long long)(int64_t)(v << shift) >> shift);
    }
    return MLRT_OK;
}

static mlrt_status value(mp *m, int depth) {
    if (m->pos >= m->n) return truncated(m, "a value");
    size_t at = m->base + m->pos;
    uint8_t t = m->p[m->pos++];
    size_t len = 0;
    mlrt_status st;
    if (t <= 0x7f) { mlrt__buf_printf(m->out, "%u", t); return MLRT_OK; }
    if (t >= 0xe0) { mlrt__buf_printf(m->out, "%d", (int)t - 256); return MLRT_OK; }
    switch (t) {
    case 0xc0: mlrt__buf_puts(m->out, "null"); return MLRT_OK;
    case 0xc2: mlrt__buf_puts(m->out, "false"); return MLRT_OK;
    case 0xc3: mlrt__buf_puts(m->out, "true"); return MLRT_OK;
    case 0xc1:
        return mlrt__fail(m->err, MLRT_ERR_INVALID_MSGPACK, "%s: byte 0xc1 at byte %zu is never used in MessagePack",
                         m->what, at);
    case 0xc7: case 0xc8: case 0xc9: case 0xd4: case 0xd5: case 0xd6: case 0xd7: case 0xd8:
        return mlrt__fail(m->err, MLRT_ERR_UNSUPPORTED, "%s: extension value at byte %zu has no JSON form", m->what, at);
    case 0xca: case 0xcb: case 0xcc: case 0xcd: case 0xce: case 0xcf: case 0xd0: case 0xd1: case 0xd2: case 0xd3:
        return number(m, t);
    default:
        break;
    }
    if ((st = length(m, t, &len))) return st;
    if (t <= 0x8f || t >= 0xde) return container(m, len, true, at, depth);
    if (t <= 0x9f || t >= 0xdc) return container(m, len, false, at, depth);
    if (t <= 0xbf || t >= 0xd9) return string(m, len, NULL);
    return binary(m, len);
}

mlrt_status mlrt__msgpack_to_json(const uint8_t *p, size_t n, size_t base, const char *what, mlrt__buf *out,
                                 size_t *used, mlrt_error *err) {
    mp m = {p, n, 0, base, what, out, err};
    mlrt_status st = value(&m, 0);
    if (!st && out->oom) st = mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "%s: out of memory", what);
    *used = m.pos;
    return st;
}
