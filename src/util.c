/* util.c — errors, names, a tiny formatter, growable buffers, UTF-8 validation.
 * The formatter is ours so that the wasm builds carry no printf. */
#include "internal.h"
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
    }
    return "unknown";
}

const char *mlrt_task_name(mlrt_task t) {
    switch (t) {
    case MLRT_TASK_CLASSIFICATION: return "classification";
    case MLRT_TASK_REGRESSION: return "regression";
    case MLRT_TASK_CLUSTERING: return "clustering";
    }
    return "unknown";
}

/* bytes for n elements = ceil(n / block) * block_bytes + header; size: per element, 0 if blocked.
 * F4 and F6 pack elements across bytes: their count must be a whole number of blocks. */
static const struct { const char *name; uint8_t size; uint16_t block, block_bytes; uint8_t header; } dtypes[MLRT_DTYPE_COUNT_] = {
    {"BOOL", 1, 1, 1, 0}, {"U8", 1, 1, 1, 0}, {"I8", 1, 1, 1, 0}, {"F8_E5M2", 1, 1, 1, 0}, {"F8_E4M3", 1, 1, 1, 0},
    {"I16", 2, 1, 2, 0}, {"U16", 2, 1, 2, 0}, {"F16", 2, 1, 2, 0}, {"BF16", 2, 1, 2, 0}, {"I32", 4, 1, 4, 0},
    {"U32", 4, 1, 4, 0}, {"F32", 4, 1, 4, 0}, {"F64", 8, 1, 8, 0}, {"I64", 8, 1, 8, 0}, {"U64", 8, 1, 8, 0},
    {"APR_Q4", 0, 32, 18, 0}, {"APR_Q8", 0, 1, 1, 4}, {"Q4_K", 0, 256, 144, 0}, {"Q6_K", 0, 256, 210, 0},
    {"F4", 0, 2, 1, 0}, {"F6_E2M3", 0, 4, 3, 0}, {"F6_E3M2", 0, 4, 3, 0}, {"F8_E8M0", 1, 1, 1, 0}, {"C64", 8, 1, 8, 0},
};

bool mlrt_dtype_packs_bits(mlrt_dtype d) {
    return d == MLRT_F4 || d == MLRT_F6_E2M3 || d == MLRT_F6_E3M2;
}

uint32_t mlrt_dtype_block(mlrt_dtype d) {
    return (unsigned)d < MLRT_DTYPE_COUNT_ ? dtypes[d].block : 1;
}

const char *mlrt_dtype_name(mlrt_dtype d) {
    return (unsigned)d < MLRT_DTYPE_COUNT_ ? dtypes[d].name : "?";
}

size_t mlrt_dtype_size(mlrt_dtype d) {
    return (unsigned)d < MLRT_DTYPE_COUNT_ ? dtypes[d].size : 0;
}

bool mlrt_dtype_bytes(mlrt_dtype d, uint64_t count, uint64_t *bytes) {
    if ((unsigned)d >= MLRT_DTYPE_COUNT_) return false;
    uint64_t blocks = count / dtypes[d].block + (count % dtypes[d].block != 0);
    return mlrt_mul_u64(blocks, dtypes[d].block_bytes, bytes) && mlrt_add_u64(*bytes, dtypes[d].header, bytes);
}

bool mlrt_dtype_is_quantized(mlrt_dtype d) {
    return d >= MLRT_APR_Q4 && d <= MLRT_Q6_K;
}

bool mlrt_dtype_from_name(const char *s, size_t n, mlrt_dtype *out) {
    for (int i = 0; i < MLRT_DTYPE_COUNT_; i++) {
        if (mlrt_dtype_is_quantized((mlrt_dtype)i)) continue; /* .apr's, not SafeTensors names */
        if (strlen(dtypes[i].name) == n && memcmp(dtypes[i].name, s, n) == 0) {
            *out = (mlrt_dtype)i;
            return true;
        }
    }
    return false;
}

bool mlrt_dtype_is_float(mlrt_dtype d) {
    return d == MLRT_F16 || d == MLRT_BF16 || d == MLRT_F32 || d == MLRT_F64;
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
int mlrt_vformat(char *buf, size_t cap, const char *fmt, va_list ap) {
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

mlrt_status mlrt_fail(mlrt_error *err, mlrt_status code, const char *fmt, ...) {
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->code = code;
        mlrt_vformat(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return code;
}

int mlrt_format_to(char *buf, size_t cap, const char *fmt, ...) {
    if (!cap) return 0;
    va_list ap;
    va_start(ap, fmt);
    int n = mlrt_vformat(buf, cap, fmt, ap);
    va_end(ap);
    return (size_t)n < cap ? n : (int)cap - 1;
}

/* ------------------------------------------------------------- buffers */

void mlrt_buf_append(mlrt_buf *b, const char *s, size_t n) {
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

void mlrt_buf_puts(mlrt_buf *b, const char *s) { mlrt_buf_append(b, s, strlen(s)); }

void mlrt_buf_printf(mlrt_buf *b, const char *fmt, ...) {
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int n = mlrt_vformat(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    mlrt_buf_append(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

void mlrt_buf_json_string(mlrt_buf *b, const char *s, size_t n) {
    if (!s) s = "", n = 0; /* an absent name */
    mlrt_buf_append(b, "\"", 1);
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        mlrt_buf_append(b, s + run, i - run);
        run = i + 1;
        char esc[8] = {'\\', (char)c, 0};
        if (c < 0x20) {
            esc[1] = 'u'; esc[2] = '0'; esc[3] = '0';
            esc[4] = "0123456789abcdef"[c >> 4]; esc[5] = "0123456789abcdef"[c & 15];
            mlrt_buf_append(b, esc, 6);
        } else {
            mlrt_buf_append(b, esc, 2);
        }
    }
    mlrt_buf_append(b, s + run, n - run);
    mlrt_buf_append(b, "\"", 1);
}

/* ---------------------------------------------------------------- UTF-8 */

bool mlrt_utf8_valid(const uint8_t *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        uint8_t c = s[i];
        if (c < 0x80) { i++; continue; }
        size_t len;
        uint32_t cp, min;
        if ((c & 0xe0) == 0xc0) { len = 2; cp = c & 0x1f; min = 0x80; }
        else if ((c & 0xf0) == 0xe0) { len = 3; cp = c & 0x0f; min = 0x800; }
        else if ((c & 0xf8) == 0xf0) { len = 4; cp = c & 0x07; min = 0x10000; }
        else return false;
        if (n - i < len) return false;
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xc0) != 0x80) return false;
            cp = cp << 6 | (s[i + k] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
        i += len;
    }
    return true;
}

void mlrt_string_free(char *s) { free(s); }
