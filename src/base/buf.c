/* base/buf.c — a growable byte string for JSON output and messages. */
#include "base.h"
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- buffers */

void mlrt__buf_append(mlrt__buf *b, const char *s, size_t n) {
    if (b->oom) return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1) cap *= 2;
        char *p = realloc(b->data, cap);
        if (!p) { b->oom = true; return; }
        b->data = p;
        b->cap = cap;
    }
    if (n) memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = 0;
}

void mlrt__buf_puts(mlrt__buf *b, const char *s) { mlrt__buf_append(b, s, strlen(s)); }

void mlrt__buf_printf(mlrt__buf *b, const char *fmt, ...) {
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int n = mlrt__vformat(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    mlrt__buf_append(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

void mlrt__buf_json_string(mlrt__buf *b, const char *s, size_t n) {
    if (!s) s = "", n = 0; /* an absent name */
    mlrt__buf_append(b, "\"", 1);
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        mlrt__buf_append(b, s + run, i - run);
        run = i + 1;
        char esc[8] = {'\\', (char)c, 0};
        if (c < 0x20) {
            esc[1] = 'u'; esc[2] = '0'; esc[3] = '0';
            esc[4] = "0123456789abcdef"[c >> 4]; esc[5] = "0123456789abcdef"[c & 15];
            mlrt__buf_append(b, esc, 6);
        } else {
            mlrt__buf_append(b, esc, 2);
        }
    }
    mlrt__buf_append(b, s + run, n - run);
    mlrt__buf_append(b, "\"", 1);
}

void mlrt_string_free(char *s) { free(s); }

bool mlrt__vec_reserve(mlrt__vec *v, size_t more, size_t elem) {
    if (v->cap - v->len >= more) return true;
    size_t need, cap = v->cap ? v->cap : 64, bytes;
    if (__builtin_add_overflow(v->len, more, &need)) return false;
    while (cap < need)
        if (__builtin_mul_overflow(cap, 2, &cap)) return false;
    if (__builtin_mul_overflow(cap, elem, &bytes)) return false;
    void *p = realloc(v->p, bytes);
    if (!p) return false;
    v->p = p;
    v->cap = cap;
    return true;
}
