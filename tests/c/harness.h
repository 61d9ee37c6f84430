/* harness.h — a tiny test harness and file builders for tests/c/test_main.c.
 *
 * CHECK* macros record file:line and keep going; a test passes when none of its checks
 * failed. Everything a test allocates goes through keep()/tmalloc()/keep_model() and is
 * freed after the test, so LeakSanitizer sees a clean run. Every buffer handed to a loader
 * is first copied to a heap block of exactly its size (exact()), so that ASan catches any
 * read one byte past the end of a file. */
#ifndef MLRT__TEST_HARNESS_H
#define MLRT__TEST_HARNESS_H

#define _POSIX_C_SOURCE 200809L /* alarm(): a watchdog turns a hanging test into a failure */
#include "mlrt.h"
#include "codecs/codecs.h"
#include "formats/formats.h"
#include "kernels/kernels.h"
#include "model/model.h"
#include "model/graph.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>

/* ------------------------------------------------------------------ checks */

static const char *g_test_name = "";
static int g_failed_checks; /* in the current test */

static void check_at(int ok, const char *file, int line, const char *fmt, ...) {
    if (ok) return;
    g_failed_checks++;
    fprintf(stderr, "%s:%d: [%s] ", file, line, g_test_name);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

#define CHECK(c) check_at(!!(c), __FILE__, __LINE__, "CHECK(%s) failed", #c)
#define CHECK_INT(a, b)                                                                                     \
    do {                                                                                                    \
        long long a_ = (long long)(a), b_ = (long long)(b);                                                 \
        check_at(a_ == b_, __FILE__, __LINE__, "%s == %s failed: %lld vs %lld", #a, #b, a_, b_);            \
    } while (0)
#define CHECK_STR(a, b)                                                                                     \
    do {                                                                                                    \
        const char *a_ = (a), *b_ = (b);                                                                    \
        check_at(a_ && b_ && strcmp(a_, b_) == 0, __FILE__, __LINE__, "%s == %s failed: \"%s\" vs \"%s\"",  \
                 #a, #b, a_ ? a_ : "(null)", b_ ? b_ : "(null)");                                           \
    } while (0)
#define CHECK_CONTAINS(hay, needle)                                                                         \
    do {                                                                                                    \
        const char *h_ = (hay), *n_ = (needle);                                                             \
        check_at(h_ && strstr(h_, n_) != NULL, __FILE__, __LINE__, "\"%s\" does not contain \"%s\"",        \
                 h_ ? h_ : "(null)", n_);                                                                   \
    } while (0)
#define CHECK_NEAR(a, b, tol)                                                                               \
    do {                                                                                                    \
        double a_ = (a), b_ = (b);                                                                          \
        check_at(fabs(a_ - b_) <= (tol), __FILE__, __LINE__, "%s ~ %s failed: %.9g vs %.9g (tol %g)", #a,  \
                 #b, a_, b_, (double)(tol));                                                                \
    } while (0)
/* Exactly the same float, bit for bit (distinguishes -0 from +0). */
#define CHECK_BITS(a, b)                                                                                    \
    do {                                                                                                    \
        float a_ = (a), b_ = (b);                                                                           \
        check_at(memcmp(&a_, &b_, 4) == 0, __FILE__, __LINE__, "%s === %s failed: %a vs %a", #a, #b,       \
                 (double)a_, (double)b_);                                                                   \
    } while (0)

/* --------------------------------------------------------- per-test memory */

static void **g_tmp;
static size_t g_ntmp, g_captmp;
static mlrt_model **g_models;
static size_t g_nmodels, g_capmodels;

static void *keep(void *p) {
    if (!p) return p;
    if (g_ntmp == g_captmp) {
        g_captmp = g_captmp ? 2 * g_captmp : 64;
        g_tmp = realloc(g_tmp, g_captmp * sizeof *g_tmp);
        if (!g_tmp) abort();
    }
    g_tmp[g_ntmp++] = p;
    return p;
}

static void *tmalloc(size_t n) {
    void *p = calloc(1, n ? n : 1);
    if (!p) abort();
    return keep(p);
}

static mlrt_model *keep_model(mlrt_model *m) {
    if (!m) return m;
    if (g_nmodels == g_capmodels) {
        g_capmodels = g_capmodels ? 2 * g_capmodels : 16;
        g_models = realloc(g_models, g_capmodels * sizeof *g_models);
        if (!g_models) abort();
    }
    g_models[g_nmodels++] = m;
    return m;
}

static void free_test_memory(void) {
    for (size_t i = 0; i < g_ntmp; i++) free(g_tmp[i]);
    for (size_t i = 0; i < g_nmodels; i++) mlrt_free(g_models[i]);
    g_ntmp = g_nmodels = 0;
}

/* A heap copy of exactly n bytes (never NULL, even for n == 0). */
static const uint8_t *exact(const void *p, size_t n) {
    uint8_t *c = malloc(n ? n : 1);
    if (!c) abort();
    if (n) memcpy(c, p, n);
    return keep(c);
}

/* ------------------------------------------------------------ byte strings */

typedef struct bytes {
    uint8_t *p;
    size_t n, cap;
} bytes;

static void put(bytes *b, const void *s, size_t n) {
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->n + n) cap *= 2;
        b->p = realloc(b->p, cap);
        if (!b->p) abort();
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->n, s, n);
    b->n += n;
}
static void put_u8(bytes *b, uint8_t v) { put(b, &v, 1); }
static void put_u32(bytes *b, uint32_t v) {
    uint8_t t[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    put(b, t, 4);
}
static void put_u64(bytes *b, uint64_t v) {
    put_u32(b, (uint32_t)v);
    put_u32(b, (uint32_t)(v >> 32));
}
static void put_f32(bytes *b, float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    put_u32(b, u);
}
static void put_f64(bytes *b, double d) {
    uint64_t u;
    memcpy(&u, &d, 8);
    put_u64(b, u);
}
static void put_str(bytes *b, const char *s) { put(b, s, strlen(s)); }
static void put_fmt(bytes *b, const char *fmt, ...) {
    char tmp[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof tmp) abort();
    put(b, tmp, (size_t)n);
}
/* Hands the buffer to the per-test memory; the bytes stay valid until the test ends. */
static bytes done(bytes b) {
    keep(b.p);
    return b;
}
/* The first n bytes of f (a prefix view: loaders get an exact() copy anyway). */
static bytes prefix(bytes f, size_t n) {
    bytes b = {f.p, n < f.n ? n : f.n, 0};
    return b;
}
static bytes with_extra_byte(bytes f, uint8_t v) {
    bytes b = {0};
    put(&b, f.p, f.n);
    put_u8(&b, v);
    return done(b);
}

/* -------------------------------------------------------------- randomness */

static uint32_t g_rng = 0x9e3779b9u;
static void rng_seed(uint32_t s) { g_rng = s ? s : 1; }
static uint32_t rng_u32(void) { /* xorshift32 */
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 17;
    g_rng ^= g_rng << 5;
    return g_rng;
}
static int rng_int(int lo, int hi) { return lo + (int)(rng_u32() % (uint32_t)(hi - lo + 1)); }
static float rng_float(float lo, float hi) { return lo + (hi - lo) * (float)(rng_u32() >> 8) / 16777216.0f; }

/* --------------------------------------------------------------- tensors */

/* One tensor for the SafeTensors/BinTensors builders: laid out in list order. */
typedef struct tspec {
    const char *name;
    const char *dtype; /* SafeTensors spelling: "F32", "BF16", ... */
    int rank;
    uint64_t shape[10];
    const void *data;
    size_t nbytes;
} tspec;

static const char *const DTYPE_NAMES[] = {"BOOL", "U8",  "I8",  "F8_E5M2", "F8_E4M3", "I16", "U16", "F16",
                                          "BF16", "I32", "U32", "F32",     "F64",     "I64", "U64"};
static int dtype_code(const char *s) {
    for (int i = 0; i < 15; i++)
        if (strcmp(DTYPE_NAMES[i], s) == 0) return i;
    return 99;
}

/* SafeTensors: [u64 declared][header][data]. */
static bytes st_raw_len(uint64_t declared, const char *header, size_t hlen, const void *data, size_t dlen) {
    bytes b = {0};
    put_u64(&b, declared);
    put(&b, header, hlen);
    put(&b, data, dlen);
    return done(b);
}
static bytes st_raw(const char *header, const void *data, size_t dlen) {
    return st_raw_len(strlen(header), header, strlen(header), data, dlen);
}

/* SafeTensors from a list of tensors (offsets computed, header space-padded to 8). */
static bytes st_build(const char *meta_json, const tspec *t, int n) {
    bytes h = {0}, d = {0};
    put_str(&h, "{");
    if (meta_json) put_fmt(&h, "\"__metadata__\":%s%s", meta_json, n ? "," : "");
    for (int i = 0; i < n; i++) {
        put_fmt(&h, "%s\"%s\":{\"dtype\":\"%s\",\"shape\":[", i ? "," : "", t[i].name, t[i].dtype);
        for (int k = 0; k < t[i].rank; k++) put_fmt(&h, "%s%llu", k ? "," : "", (unsigned long long)t[i].shape[k]);
        put_fmt(&h, "],\"data_offsets\":[%zu,%zu]}", d.n, d.n + t[i].nbytes);
        put(&d, t[i].data, t[i].nbytes);
    }
    put_str(&h, "}");
    while (h.n % 8) put_u8(&h, ' ');
    bytes f = st_raw_len(h.n, (const char *)h.p, h.n, d.p, d.n);
    free(h.p);
    free(d.p);
    return f;
}

/* BinTensors pieces: bincode "standard" varints and strings. */
static void bt_varint(bytes *b, uint64_t v) {
    if (v < 251) put_u8(b, (uint8_t)v);
    else if (v <= 0xffff) { put_u8(b, 251); put_u8(b, (uint8_t)v); put_u8(b, (uint8_t)(v >> 8)); }
    else if (v <= 0xffffffffu) { put_u8(b, 252); put_u32(b, (uint32_t)v); }
    else { put_u8(b, 253); put_u64(b, v); }
}
static void bt_string(bytes *b, const char *s) {
    bt_varint(b, strlen(s));
    put_str(b, s);
}
/* BinTensors file: [u64 len][metadata, optionally space-padded to 8][data]. */
static bytes bt_file(bytes meta, int pad, const void *data, size_t dlen) {
    bytes b = {0};
    size_t m = meta.n;
    if (pad) m = (m + 7) / 8 * 8;
    put_u64(&b, m);
    put(&b, meta.p, meta.n);
    for (size_t i = meta.n; i < m; i++) put_u8(&b, ' ');
    put(&b, data, dlen);
    free(meta.p);
    return done(b);
}
static void bt_tensor_info(bytes *m, const tspec *t, size_t begin) {
    bt_varint(m, (uint64_t)dtype_code(t->dtype));
    bt_varint(m, (uint64_t)t->rank);
    for (int k = 0; k < t->rank; k++) bt_varint(m, t->shape[k]);
    bt_varint(m, begin);
    bt_varint(m, begin + t->nbytes);
}
/* meta_kv: NULL-terminated key, value, key, value, ...; NULL for no metadata. */
static void bt_user_meta(bytes *m, const char *const *meta_kv) {
    if (!meta_kv) { put_u8(m, 0); return; }
    size_t n = 0;
    while (meta_kv[2 * n]) n++;
    put_u8(m, 1);
    bt_varint(m, n);
    for (size_t i = 0; i < n; i++) {
        bt_string(m, meta_kv[2 * i]);
        bt_string(m, meta_kv[2 * i + 1]);
    }
}
/* The bintensors crate's layout: Vec<TensorInfo> then name -> index map. */
static bytes bt_build(const char *const *meta_kv, const tspec *t, int n) {
    bytes m = {0}, d = {0};
    bt_user_meta(&m, meta_kv);
    bt_varint(&m, (uint64_t)n);
    for (int i = 0; i < n; i++) {
        bt_tensor_info(&m, &t[i], d.n);
        put(&d, t[i].data, t[i].nbytes);
    }
    bt_varint(&m, (uint64_t)n);
    for (int i = 0; i < n; i++) {
        bt_string(&m, t[i].name);
        bt_varint(&m, (uint64_t)i);
    }
    bytes f = bt_file(m, 1, d.p, d.n);
    free(d.p);
    return f;
}
/* The early spec's layout: Vec<(String, TensorInfo)>. */
static bytes bt_build_pairs(const char *const *meta_kv, const tspec *t, int n) {
    bytes m = {0}, d = {0};
    bt_user_meta(&m, meta_kv);
    bt_varint(&m, (uint64_t)n);
    for (int i = 0; i < n; i++) {
        bt_string(&m, t[i].name);
        bt_tensor_info(&m, &t[i], d.n);
        put(&d, t[i].data, t[i].nbytes);
    }
    bytes f = bt_file(m, 1, d.p, d.n);
    free(d.p);
    return f;
}

/* ------------------------------------------------- a reference MLP in double */

#define REF_MAX_LAYERS 8
typedef struct ref_mlp {
    int nl;
    int dim[REF_MAX_LAYERS + 1];
    float *w[REF_MAX_LAYERS]; /* [out][in], as nn.Linear */
    float *b[REF_MAX_LAYERS]; /* [out] (zeros when the file has no bias) */
    mlrt_activation act[REF_MAX_LAYERS];
} ref_mlp;

/* Random weights in [-0.5, 0.5]; ReLU between layers, softmax at the end. */
static void ref_make(ref_mlp *r, int nl, const int *dim, uint32_t seed) {
    memset(r, 0, sizeof *r);
    rng_seed(seed);
    r->nl = nl;
    for (int l = 0; l <= nl; l++) r->dim[l] = dim[l];
    for (int l = 0; l < nl; l++) {
        size_t in = (size_t)dim[l], out = (size_t)dim[l + 1];
        r->w[l] = tmalloc(in * out * sizeof(float));
        r->b[l] = tmalloc(out * sizeof(float));
        for (size_t k = 0; k < in * out; k++) r->w[l][k] = rng_float(-0.5f, 0.5f);
        for (size_t k = 0; k < out; k++) r->b[l][k] = rng_float(-0.5f, 0.5f);
        r->act[l] = l + 1 < nl ? MLRT_ACT_RELU : MLRT_ACT_SOFTMAX;
    }
}

static void ref_activate(mlrt_activation a, double *y, int n) {
    switch (a) {
    case MLRT_ACT_IDENTITY: break;
    case MLRT_ACT_RELU: for (int i = 0; i < n; i++) y[i] = y[i] > 0 ? y[i] : 0; break;
    case MLRT_ACT_LEAKY_RELU: for (int i = 0; i < n; i++) y[i] = y[i] > 0 ? y[i] : 0.01 * y[i]; break;
    case MLRT_ACT_SIGMOID: for (int i = 0; i < n; i++) y[i] = 1 / (1 + exp(-y[i])); break;
    case MLRT_ACT_TANH: for (int i = 0; i < n; i++) y[i] = tanh(y[i]); break;
    case MLRT_ACT_SILU: for (int i = 0; i < n; i++) y[i] = y[i] / (1 + exp(-y[i])); break;
    case MLRT_ACT_GELU: for (int i = 0; i < n; i++) y[i] = 0.5 * y[i] * (1 + erf(y[i] / sqrt(2.0))); break;
    case MLRT_ACT_SOFTMAX: {
        double m = y[0], s = 0;
        for (int i = 1; i < n; i++) m = y[i] > m ? y[i] : m;
        for (int i = 0; i < n; i++) s += (y[i] = exp(y[i] - m));
        for (int i = 0; i < n; i++) y[i] /= s;
        break;
    }
    default: abort();
    }
}

static void ref_forward(const ref_mlp *r, const float *x, double *out) {
    double a[256], y[256];
    for (int i = 0; i < r->dim[0]; i++) a[i] = x[i];
    for (int l = 0; l < r->nl; l++) {
        int in = r->dim[l], o = r->dim[l + 1];
        for (int j = 0; j < o; j++) {
            double s = r->b[l][j];
            for (int i = 0; i < in; i++) s += (double)r->w[l][(size_t)j * in + i] * a[i];
            y[j] = s;
        }
        ref_activate(r->act[l], y, o);
        memcpy(a, y, (size_t)o * sizeof *a);
    }
    memcpy(out, a, (size_t)r->dim[r->nl] * sizeof *out);
}

/* Tensors of r named names[2l] (weight) and names[2l+1] (bias, or NULL: none, and the
 * reference bias is zeroed). dtype "F32" or "F64". reverse: layers last-to-first in the file. */
static int ref_tensors(ref_mlp *r, const char *const *names, const char *dtype, int reverse, tspec *out) {
    int n = 0, f64 = strcmp(dtype, "F64") == 0;
    size_t es = f64 ? 8 : 4;
    for (int k = 0; k < r->nl; k++) {
        int l = reverse ? r->nl - 1 - k : k;
        size_t in = (size_t)r->dim[l], o = (size_t)r->dim[l + 1];
        for (int part = 0; part < 2; part++) {
            const char *name = names[2 * l + part];
            if (!name) {
                if (part) memset(r->b[l], 0, o * sizeof(float));
                continue;
            }
            const float *src = part ? r->b[l] : r->w[l];
            size_t cnt = part ? o : o * in;
            void *data = tmalloc(cnt * es);
            for (size_t i = 0; i < cnt; i++) {
                if (f64) ((double *)data)[i] = src[i];
                else ((float *)data)[i] = src[i];
            }
            tspec t = {name, dtype, part ? 1 : 2, {o, in}, data, cnt * es};
            out[n++] = t;
        }
    }
    return n;
}

/* The .bin file of a 2-layer reference (W1 stored [in][hidden], W2 [hidden][out]). */
static bytes bin_from_ref(const ref_mlp *r, int f64) {
    bytes b = {0};
    int in = r->dim[0], hid = r->dim[1], out = r->dim[2];
    put_u32(&b, (uint32_t)in);
    put_u32(&b, (uint32_t)hid);
    put_u32(&b, (uint32_t)out);
#define PUT_V(v) (f64 ? put_f64(&b, (v)) : put_f32(&b, (v)))
    for (int i = 0; i < in; i++)
        for (int h = 0; h < hid; h++) PUT_V(r->w[0][(size_t)h * in + i]);
    for (int h = 0; h < hid; h++) PUT_V(r->b[0][h]);
    for (int h = 0; h < hid; h++)
        for (int o = 0; o < out; o++) PUT_V(r->w[1][(size_t)o * hid + h]);
    for (int o = 0; o < out; o++) PUT_V(r->b[1][o]);
#undef PUT_V
    return done(b);
}

/* Predicts a few random rows (as one batch and one by one) and compares with the reference. */
static void check_vs_ref_at(const char *file, int line, mlrt_model *m, const ref_mlp *r, double tol) {
    check_at(m != NULL, file, line, "model did not load");
    if (!m) return;
    size_t in = (size_t)r->dim[0], out = (size_t)r->dim[r->nl];
    check_at(mlrt_input_size(m) == in && mlrt_output_size(m) == out, file, line, "model is %zux%zu, want %zux%zu",
             mlrt_input_size(m), mlrt_output_size(m), in, out);
    if (mlrt_input_size(m) != in || mlrt_output_size(m) != out) return;
    enum { ROWS = 6 };
    float *x = tmalloc(ROWS * in * sizeof(float)), *y = tmalloc(ROWS * out * sizeof(float));
    float *y1 = tmalloc(out * sizeof(float));
    double *want = tmalloc(out * sizeof(double));
    for (size_t k = 0; k < ROWS * in; k++) x[k] = rng_float(-1.0f, 1.0f);
    mlrt_error e;
    check_at(mlrt_predict_batch(m, x, ROWS, y, &e) == MLRT_OK, file, line, "predict_batch failed");
    double worst = 0;
    for (size_t row = 0; row < ROWS; row++) {
        ref_forward(r, x + row * in, want);
        check_at(mlrt_predict(m, x + row * in, y1, &e) == MLRT_OK, file, line, "predict failed");
        for (size_t o = 0; o < out; o++) {
            double d = fabs(y[row * out + o] - want[o]) / (1 + fabs(want[o]));
            double d1 = fabs(y1[o] - want[o]) / (1 + fabs(want[o]));
            if (d > worst) worst = d;
            if (d1 > worst) worst = d1;
        }
    }
    check_at(worst <= tol, file, line, "max relative error vs the double reference %.3g > %.3g", worst, tol);
}
#define CHECK_VS_REF(m, r) check_vs_ref_at(__FILE__, __LINE__, (m), (r), 2e-5)

/* ---------------------------------------------------- loading expectations */

static mlrt_model *load_ok_at(const char *file, int line, bytes f) {
    mlrt_error e = {MLRT_OK, ""};
    mlrt_model *m = keep_model(mlrt_load_from_bytes(exact(f.p, f.n), f.n, &e));
    check_at(m != NULL, file, line, "load failed: %s: %s", mlrt_status_name(e.code), e.message);
    return m;
}
#define LOAD_OK(f) load_ok_at(__FILE__, __LINE__, (f))

static void check_message_at(const char *file, int line, const mlrt_error *e, mlrt_status code, const char *prefix,
                             const char *needle) {
    check_at(e->code == code, file, line, "status %s, want %s (message: %s)", mlrt_status_name(e->code),
             mlrt_status_name(code), e->message);
    check_at(prefix == NULL || strncmp(e->message, prefix, strlen(prefix)) == 0, file, line,
             "message \"%s\" does not start with \"%s\"", e->message, prefix ? prefix : "");
    check_at(needle == NULL || strstr(e->message, needle) != NULL, file, line, "message \"%s\" does not name \"%s\"",
             e->message, needle ? needle : "");
    check_at(mlrt__utf8_valid((const uint8_t *)e->message, strlen(e->message)), file, line,
             "message is not valid UTF-8");
}

/* mlrt_load_from_bytes refuses f with code; the message starts with prefix and contains needle.
 * mlrt_inspect then agrees: it fails with the same code, or (for errors about the model, not
 * the file) it succeeds and reports notAModel with that code. */
static void load_fails_at(const char *file, int line, bytes f, mlrt_status code, const char *prefix,
                          const char *needle) {
    mlrt_error e = {MLRT_OK, ""};
    const uint8_t *p = exact(f.p, f.n);
    mlrt_model *m = mlrt_load_from_bytes(p, f.n, &e);
    check_at(m == NULL, file, line, "load succeeded, want %s", mlrt_status_name(code));
    mlrt_free(m);
    if (m) return;
    check_message_at(file, line, &e, code, prefix, needle);
    mlrt_error ie = {MLRT_OK, ""};
    char *js = mlrt_inspect(p, f.n, &ie);
    if (js) {
        char want[80];
        snprintf(want, sizeof want, "\"notAModel\":{\"code\":\"%s\"", mlrt_status_name(code));
        check_at(strstr(js, want) != NULL, file, line, "inspect succeeded without %s: %s", want, js);
        mlrt__json_doc doc;
        check_at(mlrt__json_parse((const uint8_t *)js, strlen(js), "inspect", &doc, NULL) == MLRT_OK, file, line,
                 "inspect output is not valid JSON: %s", js);
        mlrt__json_free(&doc);
        mlrt_string_free(js);
    } else {
        check_at(ie.code == e.code, file, line, "inspect failed with %s, load with %s", mlrt_status_name(ie.code),
                 mlrt_status_name(e.code));
    }
}
#define LOAD_FAILS(f, code, prefix, needle) load_fails_at(__FILE__, __LINE__, (f), (code), (prefix), (needle))
#define ST_FAILS(f, code, needle) LOAD_FAILS(f, code, "safetensors: ", needle)
#define BT_FAILS(f, code, needle) LOAD_FAILS(f, code, "bintensors: ", needle)
#define BIN_LOAD_FAILS(f, code, needle) LOAD_FAILS(f, code, "bin: ", needle)

/* The format readers directly (for inputs that format detection would send elsewhere). */
typedef mlrt_status (*reader_fn)(const uint8_t *, size_t, mlrt__tensorset *, mlrt_error *);
static void read_fails_at(const char *file, int line, reader_fn rd, bytes f, mlrt_status code, const char *prefix,
                          const char *needle) {
    mlrt_error e = {MLRT_OK, ""};
    mlrt__tensorset ts;
    memset(&ts, 0x5a, sizeof ts);
    mlrt_status st = rd(exact(f.p, f.n), f.n, &ts, &e);
    check_at(st == code, file, line, "reader returned %s, want %s", mlrt_status_name(st), mlrt_status_name(code));
    if (st == MLRT_OK) { mlrt__tensorset_free(&ts); return; }
    check_message_at(file, line, &e, code, prefix, needle);
    check_at(ts.count == 0 && ts.tensors == NULL && ts.meta == NULL, file, line, "tensorset not cleared on error");
}
#define ST_READ_FAILS(f, code, needle) \
    read_fails_at(__FILE__, __LINE__, mlrt__read_safetensors, (f), (code), "safetensors: ", (needle))
#define BT_READ_FAILS(f, code, needle) \
    read_fails_at(__FILE__, __LINE__, mlrt__read_bintensors, (f), (code), "bintensors: ", (needle))

static void bin_fails_at(const char *file, int line, bytes f, mlrt_status code, const char *needle) {
    mlrt_error e = {MLRT_OK, ""};
    mlrt__desc d;
    mlrt_status st = mlrt__read_bin(exact(f.p, f.n), f.n, &d, &e);
    mlrt__desc_free(&d);
    check_at(st != MLRT_OK, file, line, "mlrt__read_bin succeeded, want %s", mlrt_status_name(code));
    if (st) check_message_at(file, line, &e, code, "bin: ", needle);
}
#define BIN_FAILS(f, code, needle) bin_fails_at(__FILE__, __LINE__, (f), (code), (needle))

/* Inspect output, parsed (NULL + a failed check when inspect fails or the JSON is invalid). */
typedef struct inspected {
    char *text;
    mlrt__json_doc doc;
} inspected;
static const mlrt__json *inspect_at(const char *file, int line, bytes f, inspected *out) {
    mlrt_error e = {MLRT_OK, ""};
    memset(out, 0, sizeof *out);
    out->text = mlrt_inspect(exact(f.p, f.n), f.n, &e);
    check_at(out->text != NULL, file, line, "inspect failed: %s: %s", mlrt_status_name(e.code), e.message);
    if (!out->text) return NULL;
    keep(out->text);
    mlrt_status st = mlrt__json_parse((const uint8_t *)out->text, strlen(out->text), "inspect", &out->doc, &e);
    check_at(st == MLRT_OK, file, line, "inspect output is not valid JSON (%s): %s", e.message, out->text);
    return st == MLRT_OK ? out->doc.root : NULL;
}
#define INSPECT(f, out) inspect_at(__FILE__, __LINE__, (f), (out))

static const char *jstr(const mlrt__json *o, const char *key) {
    const mlrt__json *v = mlrt__json_get(o, key);
    return v && v->type == MLRT__JSON_STRING ? v->str : NULL;
}
static long long jint(const mlrt__json *o, const char *key) {
    uint64_t v;
    return mlrt__json_u64(mlrt__json_get(o, key), &v) ? (long long)v : -1;
}
static const mlrt__json *jitem(const mlrt__json *arr, size_t i) {
    if (!arr || arr->type != MLRT__JSON_ARRAY) return NULL;
    const mlrt__json *c = arr->child;
    while (c && i--) c = c->next;
    return c;
}

#endif
