/* builders.c — the test inputs' builders (builders.h). */
#include "builders.h"

void put(bytes *b, const void *s, size_t n) {
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

void put_u8(bytes *b, uint8_t v) { put(b, &v, 1); }

void put_u32(bytes *b, uint32_t v) {
    uint8_t t[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    put(b, t, 4);
}

void put_u64(bytes *b, uint64_t v) {
    put_u32(b, (uint32_t)v);
    put_u32(b, (uint32_t)(v >> 32));
}

void put_f32(bytes *b, float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    put_u32(b, u);
}

void put_f64(bytes *b, double d) {
    uint64_t u;
    memcpy(&u, &d, 8);
    put_u64(b, u);
}

void put_str(bytes *b, const char *s) { put(b, s, strlen(s)); }

void put_fmt(bytes *b, const char *fmt, ...) {
    char tmp[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof tmp) abort();
    put(b, tmp, (size_t)n);
}

void next_colliding_key(const char *prefix, size_t cap, size_t slot, unsigned *next, char key[16]) {
    for (;;) {
        int n = snprintf(key, 16, "%s%u", prefix, (*next)++);
        if (mlrt__repeat_slot(key, (size_t)n, cap) == slot) return;
    }
}

/* Hands the buffer to the per-test memory; the bytes stay valid until the test ends. */
bytes done(bytes b) {
    keep(b.p);
    return b;
}

/* The first n bytes of f (a prefix view: loaders get an exact() copy anyway). */
bytes prefix(bytes f, size_t n) {
    bytes b = {f.p, n < f.n ? n : f.n, 0};
    return b;
}

bytes with_extra_byte(bytes f, uint8_t v) {
    bytes b = {0};
    put(&b, f.p, f.n);
    put_u8(&b, v);
    return done(b);
}

/* -------------------------------------------------------------- randomness */

uint32_t g_rng = 0x9e3779b9u;

void rng_seed(uint32_t s) { g_rng = s ? s : 1; }

uint32_t rng_u32(void) { /* xorshift32 */
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 17;
    g_rng ^= g_rng << 5;
    return g_rng;
}

int rng_int(int lo, int hi) { return lo + (int)(rng_u32() % (uint32_t)(hi - lo + 1)); }

float rng_float(float lo, float hi) { return lo + (hi - lo) * (float)(rng_u32() >> 8) / 16777216.0f; }

const char *const DTYPE_NAMES[] = {"BOOL", "U8",  "I8",  "F8_E5M2", "F8_E4M3", "I16", "U16", "F16",
                                          "BF16", "I32", "U32", "F32",     "F64",     "I64", "U64"};

int dtype_code(const char *s) {
    for (int i = 0; i < 15; i++)
        if (strcmp(DTYPE_NAMES[i], s) == 0) return i;
    return 99;
}

/* SafeTensors: [u64 declared][header][data]. */
bytes st_raw_len(uint64_t declared, const char *header, size_t hlen, const void *data, size_t dlen) {
    bytes b = {0};
    put_u64(&b, declared);
    put(&b, header, hlen);
    put(&b, data, dlen);
    return done(b);
}

bytes st_raw(const char *header, const void *data, size_t dlen) {
    return st_raw_len(strlen(header), header, strlen(header), data, dlen);
}

/* SafeTensors from a list of tensors (offsets computed, header space-padded to 8). */
bytes st_build(const char *meta_json, const tspec *t, int n) {
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
void bt_varint(bytes *b, uint64_t v) {
    if (v < 251) put_u8(b, (uint8_t)v);
    else if (v <= 0xffff) { put_u8(b, 251); put_u8(b, (uint8_t)v); put_u8(b, (uint8_t)(v >> 8)); }
    else if (v <= 0xffffffffu) { put_u8(b, 252); put_u32(b, (uint32_t)v); }
    else { put_u8(b, 253); put_u64(b, v); }
}

void bt_string(bytes *b, const char *s) {
    bt_varint(b, strlen(s));
    put_str(b, s);
}

/* BinTensors file: [u64 len][metadata, optionally space-padded to 8][data]. */
bytes bt_file(bytes meta, int pad, const void *data, size_t dlen) {
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

void bt_tensor_info(bytes *m, const tspec *t, size_t begin) {
    bt_varint(m, (uint64_t)dtype_code(t->dtype));
    bt_varint(m, (uint64_t)t->rank);
    for (int k = 0; k < t->rank; k++) bt_varint(m, t->shape[k]);
    bt_varint(m, begin);
    bt_varint(m, begin + t->nbytes);
}

/* meta_kv: NULL-terminated key, value, key, value, ...; NULL for no metadata. */
void bt_user_meta(bytes *m, const char *const *meta_kv) {
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
bytes bt_build(const char *const *meta_kv, const tspec *t, int n) {
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
bytes bt_build_pairs(const char *const *meta_kv, const tspec *t, int n) {
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

/* Random weights in [-0.5, 0.5]; ReLU between layers, softmax at the end. */
void ref_make(ref_mlp *r, int nl, const int *dim, uint32_t seed) {
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

void ref_activate(mlrt_activation a, double *y, int n) {
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

void ref_forward(const ref_mlp *r, const float *x, double *out) {
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
int ref_tensors(ref_mlp *r, const char *const *names, const char *dtype, int reverse, tspec *out) {
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
bytes bin_from_ref(const ref_mlp *r, int f64) {
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
void check_vs_ref_at(const char *file, int line, mlrt_model *m, const ref_mlp *r, double tol) {
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

/* ---------------------------------------------------- loading expectations */

mlrt_model *load_ok_at(const char *file, int line, bytes f) {
    mlrt_error e = {MLRT_OK, ""};
    mlrt_model *m = keep_model(mlrt_load_from_bytes(exact(f.p, f.n), f.n, &e));
    check_at(m != NULL, file, line, "load failed: %s: %s", mlrt_status_name(e.code), e.message);
    return m;
}

void check_message_at(const char *file, int line, const mlrt_error *e, mlrt_status code, const char *prefix,
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
void load_fails_at(const char *file, int line, bytes f, mlrt_status code, const char *prefix,
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

void read_fails_at(const char *file, int line, reader_fn rd, bytes f, mlrt_status code, const char *prefix,
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

void bin_fails_at(const char *file, int line, bytes f, mlrt_status code, const char *needle) {
    mlrt_error e = {MLRT_OK, ""};
    mlrt__desc d;
    mlrt_status st = mlrt__read_bin(exact(f.p, f.n), f.n, &d, &e);
    mlrt__desc_free(&d);
    check_at(st != MLRT_OK, file, line, "mlrt__read_bin succeeded, want %s", mlrt_status_name(code));
    if (st) check_message_at(file, line, &e, code, "bin: ", needle);
}

const mlrt__json *inspect_at(const char *file, int line, bytes f, inspected *out) {
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

const char *jstr(const mlrt__json *o, const char *key) {
    const mlrt__json *v = mlrt__json_get(o, key);
    return v && v->type == MLRT__JSON_STRING ? v->str : NULL;
}

long long jint(const mlrt__json *o, const char *key) {
    uint64_t v;
    return mlrt__json_u64(mlrt__json_get(o, key), &v) ? (long long)v : -1;
}

const mlrt__json *jitem(const mlrt__json *arr, size_t i) {
    if (!arr || arr->type != MLRT__JSON_ARRAY) return NULL;
    const mlrt__json *c = arr->child;
    while (c && i--) c = c->next;
    return c;
}

/* ------------------------------------------------------------------ builders */

bytes from_hex(const char *hex) {
    bytes b = {0};
    for (const char *p = hex; *p;) {
        if (*p == ' ' || *p == '\n') { p++; continue; }
        unsigned v;
        if (sscanf(p, "%2x", &v) != 1) abort();
        put_u8(&b, (uint8_t)v);
        p += 2;
    }
    return done(b);
}

bytes cat(bytes a, bytes b) {
    bytes c = {0};
    put(&c, a.p, a.n);
    put(&c, b.p, b.n);
    return done(c);
}

bytes copy_of(const void *p, size_t n) {
    bytes b = {0};
    put(&b, p, n);
    return done(b);
}

void set_u32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* A copy of f with the v1 trailer (crc of everything before the last 4 bytes) recomputed. */
bytes v1_crc(bytes f) {
    bytes c = copy_of(f.p, f.n);
    set_u32(c.p + c.n - 4, mlrt__crc32(c.p, c.n - 4));
    return c;
}

/* A copy of f with both v2 checksums recomputed. */
bytes v2_crc(bytes f) {
    bytes c = copy_of(f.p, f.n);
    set_u32(c.p + 40, mlrt__crc32_update(mlrt__crc32(c.p, 40), c.p + 44, 20));
    set_u32(c.p + c.n - 4, mlrt__crc32(c.p, c.n - 4));
    return c;
}

/* {"created_at": "1700000000", "aprender_version": "0.0.0"} as rmp-serde writes it */
bytes default_meta(void) {
    bytes m = {0};
    put_u8(&m, 0x82);
    put_u8(&m, 0xaa), put_str(&m, "created_at"), put_u8(&m, 0xaa), put_str(&m, "1700000000");
    put_u8(&m, 0xb0), put_str(&m, "aprender_version"), put_u8(&m, 0xa5), put_str(&m, "0.0.0");
    return done(m);
}

bytes v1_file(v1_spec s, bytes meta, bytes payload) {
    bytes f = {0};
    put_str(&f, "APRN");
    put_u8(&f, s.major ? s.major : 1), put_u8(&f, 0);
    put_u8(&f, (uint8_t)s.type), put_u8(&f, (uint8_t)(s.type >> 8));
    put_u32(&f, (uint32_t)meta.n), put_u32(&f, (uint32_t)payload.n);
    put_u32(&f, s.raw_size < 0 ? (uint32_t)payload.n : (uint32_t)s.raw_size);
    put_u8(&f, s.compression), put_u8(&f, s.flags), put_u8(&f, s.quality);
    for (int i = 0; i < 9; i++) put_u8(&f, 0);
    put(&f, meta.p, meta.n);
    put(&f, payload.p, payload.n);
    for (size_t i = 0; i < s.sig_len; i++) put_u8(&f, (uint8_t)i);
    put_u32(&f, 0);
    return v1_crc(done(f));
}

void put_vec_f32(bytes *b, const float *v, size_t n) {
    put_u64(b, n);
    for (size_t i = 0; i < n; i++) put_f32(b, v[i]);
}

void pad64(bytes *b) {
    while (b->n % 64) put_u8(b, 0);
}

void v2_entry(bytes *ix, const v2t *t, uint64_t offset, uint64_t size) {
    put_u8(ix, (uint8_t)strlen(t->name)), put_u8(ix, (uint8_t)(strlen(t->name) >> 8));
    put_str(ix, t->name);
    put_u8(ix, t->dtype), put_u8(ix, (uint8_t)t->rank);
    for (int k = 0; k < t->rank; k++) put_u64(ix, t->shape[k]);
    put_u64(ix, offset), put_u64(ix, size);
}

/* An APR\0 file: the entries in the given order (callers sort them), flags LAYOUT_ROW_MAJOR. */
bytes v2_file(const char *meta_json, const v2t *t, int n) {
    bytes ix = {0}, data = {0}, f = {0};
    for (int i = 0; i < n; i++) {
        v2_entry(&ix, &t[i], data.n, t[i].nbytes);
        put(&data, t[i].data, t[i].nbytes);
        pad64(&data);
    }
    pad64(&ix);
    size_t mlen = strlen(meta_json), index_at = 64 + (mlen + 63) / 64 * 64, data_at = index_at + ix.n;
    put_str(&f, "APR");
    put_u8(&f, 0), put_u8(&f, 2), put_u8(&f, 0), put_u8(&f, 0x00), put_u8(&f, 0x04);
    put_u32(&f, (uint32_t)n), put_u64(&f, 64), put_u32(&f, (uint32_t)mlen), put_u64(&f, index_at), put_u64(&f, data_at);
    for (int i = 0; i < 24; i++) put_u8(&f, 0);
    put_str(&f, meta_json);
    pad64(&f);
    put(&f, ix.p, ix.n);
    put(&f, data.p, data.n);
    put_u32(&f, 0);
    free(ix.p);
    free(data.p);
    return v2_crc(done(f));
}

/* f with bytes at offset replaced, checksums recomputed (v2 when v2, else v1). */
bytes patched(bytes f, size_t offset, const void *p, size_t n, int v2) {
    bytes c = copy_of(f.p, f.n);
    memcpy(c.p + offset, p, n);
    return v2 ? v2_crc(c) : v1_crc(c);
}

bytes patched_u8(bytes f, size_t offset, uint8_t v, int v2) { return patched(f, offset, &v, 1, v2); }

bytes patched_u32(bytes f, size_t offset, uint32_t v, int v2) {
    uint8_t t[4];
    set_u32(t, v);
    return patched(f, offset, t, 4, v2);
}

bytes patched_u64(bytes f, size_t offset, uint64_t v, int v2) {
    uint8_t t[8];
    for (int i = 0; i < 8; i++) t[i] = (uint8_t)(v >> (8 * i));
    return patched(f, offset, t, 8, v2);
}

/* The "apr" member of inspect's JSON. */
const mlrt__json *inspect_apr(bytes f, inspected *out) {
    return mlrt__json_get(INSPECT(f, out), "apr");
}

/* A small valid model for the API tests: 3 -> 4 -> 2 in SafeTensors. */
mlrt_model *small_model(ref_mlp *r) {
    static const int dims[] = {3, 4, 2};
    ref_make(r, 2, dims, 7);
    static const char *const names[] = {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"};
    tspec t[4];
    int n = ref_tensors(r, names, "F32", 0, t);
    return LOAD_OK(st_build(NULL, t, n));
}

/* ====================================================== trained model files */

bytes read_file_or_empty(const char *path) {
    bytes b = {0};
    FILE *f = fopen(path, "rb");
    if (!f) return b;
    char tmp[65536];
    size_t n;
    while ((n = fread(tmp, 1, sizeof tmp, f)) > 0) put(&b, tmp, n);
    fclose(f);
    return done(b);
}
