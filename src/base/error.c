/* base/error.c — statuses and the names of the public enums, a tiny printf-style formatter (the wasm
 * builds carry no printf), and mlrt__fail, which every refusal goes through. */
#include "base.h"
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- names */

static const char *const status_names[MLRT_STATUS_COUNT_] = {
    "OK", "INVALID_ARGUMENT", "UNKNOWN_FORMAT", "TRUNCATED", "SIZE_MISMATCH", "BAD_DIMENSIONS",
    "SHAPE_OVERFLOW", "BAD_OFFSETS", "UNKNOWN_DTYPE", "INVALID_UTF8", "INVALID_JSON",
    "DUPLICATE_KEY", "HEADER_TOO_LARGE", "BAD_HEADER", "NOT_A_MODEL", "UNSUPPORTED", "OUT_OF_MEMORY", "NON_FINITE",
    "CHECKSUM_MISMATCH", "UNSUPPORTED_VERSION", "UNSUPPORTED_MODEL_TYPE", "MODEL_TYPE_MISMATCH", "ENCRYPTED",
    "INVALID_MSGPACK", "BAD_PAYLOAD",
};

const char *mlrt_status_name(mlrt_status code) {
    return (unsigned)code < MLRT_STATUS_COUNT_ ? status_names[code] : "UNKNOWN_STATUS";
}

const char *mlrt_format_name(mlrt_format f) {
    switch (f) {
    case MLRT_FORMAT_BIN: return "bin";
    case MLRT_FORMAT_SAFETENSORS: return "safetensors";
    case MLRT_FORMAT_BINTENSORS: return "bintensors";
    case MLRT_FORMAT_APR: return "apr";
    case MLRT_FORMAT_ONNX: return "onnx";
    }
    return "unknown";
}

const char *mlrt_kind_name(mlrt_kind k) {
    switch (k) {
    case MLRT_KIND_MLP: return "mlp";
    case MLRT_KIND_LINEAR_REGRESSION: return "linear_regression";
    case MLRT_KIND_LOGISTIC_REGRESSION: return "logistic_regression";
    case MLRT_KIND_DECISION_TREE: return "decision_tree";
    case MLRT_KIND_RANDOM_FOREST: return "random_forest";
    case MLRT_KIND_KMEANS: return "kmeans";
    case MLRT_KIND_GRAPH: return "graph";
    case MLRT_KIND_ENCODER: return "encoder";
    }
    return "unknown";
}

const char *mlrt_task_name(mlrt_task t) {
    switch (t) {
    case MLRT_TASK_CLASSIFICATION: return "classification";
    case MLRT_TASK_REGRESSION: return "regression";
    case MLRT_TASK_CLUSTERING: return "clustering";
    case MLRT_TASK_EMBEDDING: return "embedding";
    }
    return "unknown";
}

static const char *const act_names[MLRT_ACT_COUNT_] = {
    "identity", "relu", "sigmoid", "tanh", "softmax", "gelu", "leaky_relu", "silu",
};

const char *mlrt_activation_name(mlrt_activation a) {
    return (unsigned)a < MLRT_ACT_COUNT_ ? act_names[a] : "?";
}

/* ------------------------------------------------------------ formatter */

typedef struct out { char *p; size_t cap, len; } out;

static void out_c(out *o, char c) {
    if (o->len + 1 < o->cap) o->p[o->len] = c;
    o->len++;
}

static void out_s(out *o, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) out_c(o, s[i]);
}

static void out_u(out *o, unsigned long long v, unsigned base, int width) {
    char tmp[24];
    int n = 0;
    do { tmp[n++] = "0123456789abcdef"[v % base]; v /= base; } while (v);
    for (int i = n; i < width; i++) out_c(o, '0');
    while (n) out_c(o, tmp[--n]);
}

static void out_i(out *o, long long v) {
    if (v < 0) { out_c(o, '-'); out_u(o, 0ull - (unsigned long long)v, 10, 0); }
    else out_u(o, (unsigned long long)v, 10, 0);
}

/* Writes at most cap-1 chars + NUL; returns the length it wanted. Untrusted strings
 * (%s, %.*s) are printed with control characters escaped so messages stay one line. */
int mlrt__vformat(char *buf, size_t cap, const char *fmt, va_list ap) {
    out o = {buf, cap, 0};
    for (const char *f = fmt; *f; f++) {
        if (*f != '%') { out_c(&o, *f); continue; }
        f++;
        int lng = 0, zsize = 0, prec = -1, width = 0;
        if (f[0] == '.' && f[1] == '*') { prec = va_arg(ap, int); f += 2; }
        if (*f == '0') while (*++f >= '0' && *f <= '9') width = width * 10 + (*f - '0');
        while (*f == 'l') { lng++; f++; }
        if (*f == 'z') { zsize = 1; f++; }
        switch (*f) {
        case 'd':
            out_i(&o, lng >= 2 ? va_arg(ap, long long) : lng ? va_arg(ap, long) : va_arg(ap, int));
            break;
        case 'u':
        case 'x':
            out_u(&o, zsize ? va_arg(ap, size_t) : lng >= 2 ? va_arg(ap, unsigned long long)
                                   : lng ? va_arg(ap, unsigned long) : va_arg(ap, unsigned),
                  *f == 'x' ? 16 : 10, width);
            break;
        case 'c': out_c(&o, (char)va_arg(ap, int)); break;
        case 's': {
            const char *s = va_arg(ap, const char *);
            if (!s) s = "(null)";
            size_t n = prec >= 0 ? (size_t)prec : strlen(s);
            if (n > 96) { /* names in messages stay readable; cut between UTF-8 characters */
                n = 96;
                while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80) n--;
            }
            for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)s[i];
                if (c < 0x20 || c == 0x7f) { out_s(&o, "\\x", 2); out_c(&o, "0123456789abcdef"[c >> 4]); out_c(&o, "0123456789abcdef"[c & 15]); }
                else out_c(&o, (char)c);
            }
            if ((prec >= 0 ? (size_t)prec : strlen(s)) > 96) out_s(&o, "...", 3);
            break;
        }
        case '%': out_c(&o, '%'); break;
        default: out_c(&o, '?'); break;
        }
    }
    if (cap) buf[o.len < cap ? o.len : cap - 1] = 0;
    return (int)o.len;
}

mlrt_status mlrt__fail(mlrt_error *err, mlrt_status code, const char *fmt, ...) {
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->code = code;
        mlrt__vformat(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return code;
}

mlrt_status mlrt__fail_in(mlrt_error *err, mlrt_status code, const char *where, const char *fmt, ...) {
    if (err) {
        int n = mlrt__format_to(err->message, sizeof err->message, "%s: ", where);
        va_list ap;
        va_start(ap, fmt);
        err->code = code;
        mlrt__vformat(err->message + n, sizeof err->message - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return code;
}

int mlrt__format_to(char *buf, size_t cap, const char *fmt, ...) {
    if (!cap) return 0;
    va_list ap;
    va_start(ap, fmt);
    int n = mlrt__vformat(buf, cap, fmt, ap);
    va_end(ap);
    return (size_t)n < cap ? n : (int)cap - 1;
}

