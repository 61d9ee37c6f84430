/* make_seeds.c — writes small hand-made seed inputs for one fuzzer into a corpus directory.
 *
 *   make_seeds NAME DIR [SAFETENSORS_FILE...]
 *
 * NAME is fuzz_bin, fuzz_safetensors, fuzz_bintensors, fuzz_json, fuzz_apr_v1, fuzz_apr_v2 or
 * fuzz_msgpack (others: nothing). The trained models are
 * 1.6 MB, far beyond the fuzzers' -max_len, so libFuzzer only ever sees their first bytes
 * (their headers); these seeds are whole, valid, small files of every kind mlrt loads, so that
 * mutations start from inputs that reach model building and prediction. For fuzz_json, the
 * JSON headers of the given SafeTensors files are written as seeds too.
 * Used by tests/fuzz/run.sh; plain C11, no dependencies. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct buf { uint8_t *p; size_t n, cap; } buf;

static void put(buf *b, const void *s, size_t n) {
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
        if (!b->p) { perror("make_seeds"); exit(1); }
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
}
static void put_u8(buf *b, uint8_t v) { put(b, &v, 1); }
static void put_u32(buf *b, uint32_t v) { for (int i = 0; i < 4; i++) put_u8(b, (uint8_t)(v >> (8 * i))); }
static void put_u64(buf *b, uint64_t v) { for (int i = 0; i < 8; i++) put_u8(b, (uint8_t)(v >> (8 * i))); }
static void put_str(buf *b, const char *s) { put(b, s, strlen(s)); }

static const char *g_dir;
static void save(const char *name, const void *p, size_t n) {
    char path[4096];
    snprintf(path, sizeof path, "%s/seed-%s", g_dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0) { perror(path); exit(1); }
}
static void save_buf(const char *name, buf *b) { save(name, b->p, b->n); free(b->p); memset(b, 0, sizeof *b); }

/* deterministic small weights in [-0.5, 0.5) */
static uint32_t g_rng = 12345;
static float weight(void) {
    g_rng = g_rng * 1103515245u + 12345u;
    return (float)((g_rng >> 8) & 0xffff) / 65536.0f - 0.5f;
}
static uint16_t to_f16(float f) { /* exact for the values used here: truncating conversion */
    uint32_t u;
    memcpy(&u, &f, 4);
    uint32_t sign = (u >> 16) & 0x8000, exp = (u >> 23) & 0xff, man = u & 0x7fffff;
    if (exp < 103) return (uint16_t)sign;
    if (exp < 113) return (uint16_t)(sign | ((man | 0x800000) >> (126 - exp)));
    return (uint16_t)(sign | (exp - 112) << 10 | man >> 13);
}
static void put_weight(buf *d, const char *dtype) {
    float f = weight();
    if (!strcmp(dtype, "F32")) { uint32_t u; memcpy(&u, &f, 4); put_u32(d, u); }
    else if (!strcmp(dtype, "F64")) { double x = f; uint64_t u; memcpy(&u, &x, 8); put_u64(d, u); }
    else if (!strcmp(dtype, "F16")) { uint16_t h = to_f16(f); put_u8(d, (uint8_t)h); put_u8(d, (uint8_t)(h >> 8)); }
    else if (!strcmp(dtype, "BF16")) { uint32_t u; memcpy(&u, &f, 4); put_u8(d, (uint8_t)(u >> 16)); put_u8(d, (uint8_t)(u >> 24)); }
}
static size_t dsize(const char *dtype) {
    if (!strcmp(dtype, "F64") || !strcmp(dtype, "I64") || !strcmp(dtype, "U64")) return 8;
    if (!strcmp(dtype, "F32") || !strcmp(dtype, "I32") || !strcmp(dtype, "U32")) return 4;
    if (!strcmp(dtype, "F16") || !strcmp(dtype, "BF16") || !strcmp(dtype, "I16") || !strcmp(dtype, "U16")) return 2;
    return 1;
}
static int dcode(const char *dtype) {
    static const char *const names[] = {"BOOL", "U8",  "I8",  "F8_E5M2", "F8_E4M3", "I16", "U16", "F16",
                                        "BF16", "I32", "U32", "F32",     "F64",     "I64", "U64"};
    for (int i = 0; i < 15; i++) if (!strcmp(names[i], dtype)) return i;
    return 0;
}

typedef struct t { const char *name, *dtype; int rank; uint64_t shape[4]; } t;
static uint64_t count(const t *x) { uint64_t c = 1; for (int k = 0; k < x->rank; k++) c *= x->shape[k]; return c; }
static void tensor_data(buf *d, const t *x) {
    int is_float = !strcmp(x->dtype, "F16") || !strcmp(x->dtype, "BF16") || !strcmp(x->dtype, "F32") ||
                   !strcmp(x->dtype, "F64");
    size_t es = dsize(x->dtype);
    for (uint64_t i = 0, c = count(x); i < c; i++) {
        if (is_float) put_weight(d, x->dtype);
        else for (size_t k = 0; k < es; k++) put_u8(d, (uint8_t)(i * 7 + k));
    }
}

static void safetensors(const char *name, const char *meta, const t *ts, int n) {
    buf h = {0}, d = {0}, f = {0};
    char tmp[512];
    put_str(&h, "{");
    if (meta) { put_str(&h, "\"__metadata__\":"); put_str(&h, meta); if (n) put_str(&h, ","); }
    for (int i = 0; i < n; i++) {
        size_t begin = d.n;
        tensor_data(&d, &ts[i]);
        snprintf(tmp, sizeof tmp, "%s\"%s\":{\"dtype\":\"%s\",\"shape\":[", i ? "," : "", ts[i].name, ts[i].dtype);
        put_str(&h, tmp);
        for (int k = 0; k < ts[i].rank; k++) {
            snprintf(tmp, sizeof tmp, "%s%llu", k ? "," : "", (unsigned long long)ts[i].shape[k]);
            put_str(&h, tmp);
        }
        snprintf(tmp, sizeof tmp, "],\"data_offsets\":[%zu,%zu]}", begin, d.n);
        put_str(&h, tmp);
    }
    put_str(&h, "}");
    while (h.n % 8) put_u8(&h, ' ');
    put_u64(&f, h.n);
    put(&f, h.p, h.n);
    put(&f, d.p, d.n);
    save_buf(name, &f);
    free(h.p);
    free(d.p);
}

static void varint(buf *b, uint64_t v) {
    if (v < 251) put_u8(b, (uint8_t)v);
    else if (v <= 0xffff) { put_u8(b, 251); put_u8(b, (uint8_t)v); put_u8(b, (uint8_t)(v >> 8)); }
    else if (v <= 0xffffffffu) { put_u8(b, 252); put_u32(b, (uint32_t)v); }
    else { put_u8(b, 253); put_u64(b, v); }
}
static void bstring(buf *b, const char *s) { varint(b, strlen(s)); put_str(b, s); }

/* meta: NULL or "k1", "v1", ..., NULL. crate: the crate's layout, else the early spec's. */
static void bintensors(const char *name, const char *const *meta, int crate, const t *ts, int n) {
    buf m = {0}, d = {0}, f = {0};
    if (!meta) put_u8(&m, 0);
    else {
        size_t k = 0;
        while (meta[2 * k]) k++;
        put_u8(&m, 1);
        varint(&m, k);
        for (size_t i = 0; i < k; i++) { bstring(&m, meta[2 * i]); bstring(&m, meta[2 * i + 1]); }
    }
    varint(&m, (uint64_t)n);
    for (int i = 0; i < n; i++) {
        size_t begin = d.n;
        tensor_data(&d, &ts[i]);
        if (!crate) bstring(&m, ts[i].name);
        varint(&m, (uint64_t)dcode(ts[i].dtype));
        varint(&m, (uint64_t)ts[i].rank);
        for (int k = 0; k < ts[i].rank; k++) varint(&m, ts[i].shape[k]);
        varint(&m, begin);
        varint(&m, d.n);
    }
    if (crate) {
        varint(&m, (uint64_t)n);
        for (int i = 0; i < n; i++) { bstring(&m, ts[i].name); varint(&m, (uint64_t)i); }
    }
    while (m.n % 8) put_u8(&m, ' ');
    put_u64(&f, m.n);
    put(&f, m.p, m.n);
    put(&f, d.p, d.n);
    save_buf(name, &f);
    free(m.p);
    free(d.p);
}

static void bin(const char *name, int in, int hid, int out, int f64) {
    buf f = {0};
    put_u32(&f, (uint32_t)in);
    put_u32(&f, (uint32_t)hid);
    put_u32(&f, (uint32_t)out);
    size_t params = (size_t)in * hid + hid + (size_t)hid * out + out;
    for (size_t i = 0; i < params; i++) put_weight(&f, f64 ? "F64" : "F32");
    save_buf(name, &f);
}

/* ---- .apr ---- */
static uint32_t crc32(const uint8_t *p, size_t n) { /* zlib's, bit by bit */
    uint32_t c = 0xffffffffu;
    while (n--) {
        c ^= *p++;
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1)));
    }
    return ~c;
}
static void put_crc(buf *f, size_t from) { put_u32(f, crc32(f->p + from, f->n - from)); }
static void put_f32(buf *b, float v) { uint32_t u; memcpy(&u, &v, 4); put_u32(b, u); }

/* {"created_at":"1700000000","aprender_version":"0.0.0", + extra raw MessagePack pairs} */
static void apr_meta(buf *m, unsigned extra_pairs, const void *extra, size_t extra_len) {
    put_u8(m, (uint8_t)(0x82 + extra_pairs));
    put_u8(m, 0xaa); put_str(m, "created_at"); put_u8(m, 0xaa); put_str(m, "1700000000");
    put_u8(m, 0xb0); put_str(m, "aprender_version"); put_u8(m, 0xa5); put_str(m, "0.0.0");
    put(m, extra, extra_len);
}

/* An APRN file; stored: the payload as stored (compressed by the caller), raw_len its bincode length. */
static void apr_v1(const char *name, uint16_t type, uint8_t compression, uint8_t flags, const buf *meta,
                   const buf *stored, size_t raw_len, size_t sig_len) {
    buf f = {0};
    put_str(&f, "APRN");
    put_u8(&f, 1); put_u8(&f, 0); put_u8(&f, (uint8_t)type); put_u8(&f, (uint8_t)(type >> 8));
    put_u32(&f, (uint32_t)meta->n); put_u32(&f, (uint32_t)stored->n); put_u32(&f, (uint32_t)raw_len);
    put_u8(&f, compression); put_u8(&f, flags); put_u8(&f, 80);
    for (int i = 0; i < 9; i++) put_u8(&f, 0);
    put(&f, meta->p, meta->n);
    put(&f, stored->p, stored->n);
    for (size_t i = 0; i < sig_len; i++) put_u8(&f, (uint8_t)i);
    put_crc(&f, 0);
    save_buf(name, &f);
}

static void vec_f32(buf *b, size_t n) { put_u64(b, n); for (size_t i = 0; i < n; i++) put_f32(b, weight()); }

static void put_hex(buf *b, const char *hex) {
    for (const char *h = hex; h[0];) {
        if (h[0] == ' ') { h++; continue; }
        unsigned v;
        sscanf(h, "%2x", &v);
        put_u8(b, (uint8_t)v);
        h += 2;
    }
}

/* aprender's classical payloads (shared/specs/apr-models.md): trees, forests, KMeans, NgramLm */
static void apr_v1_classic_seeds(const buf *meta) {
    static const struct { const char *name; uint16_t type; const char *hex; } P[] = {
        {"apr1-tree-cls-e1", 3, "01 00000000 0100000000000000 0000003f 01000000 0000000000000000 0300000000000000 "
                                "01000000 0200000000000000 0400000000000000 01 0300000000000000 01 0200000000000000"},
        {"apr1-tree-cls-e2", 3, "01 00000000 0100000000000000 0000003f 88c6fa3e 0700000000000000 01000000 0000000000000000 "
                                "0300000000000000 00000000 01000000 0200000000000000 0400000000000000 00000000 "
                                "01 0300000000000000 01 0200000000000000"},
        {"apr1-tree-reg-e1", 3, "01 00000000 0000000000000000 0000c03f 01000000 000080bf 0200000000000000 "
                                "01000000 00002040 0500000000000000 00 0200000000000000 0100000000000000"},
        {"apr1-tree-reg-e2", 3, "01 00000000 0000000000000000 0000c03f 00004040 0700000000000000 01000000 000080bf "
                                "0200000000000000 00000000 01000000 00002040 0500000000000000 0000803e "
                                "00 0200000000000000 0100000000000000"},
        {"apr1-forest-cls-e1", 4, "0100000000000000 01 00000000 0100000000000000 0000003f 01000000 0000000000000000 "
                                  "0300000000000000 01000000 0200000000000000 0400000000000000 01 0300000000000000 "
                                  "01 0200000000000000 0100000000000000 01 0300000000000000 01 2a00000000000000 "
                                  "0100000000000000 0200000000000000 0100000000000000 0000000000000000 01 0400000000000000 "
                                  "00000000 00000000 0000803f 0000803f 0200000000000000 0200000000000000 01 0200000000000000 "
                                  "0000000000000000 0200000000000000"},
        {"apr1-forest-reg-e2", 4, "0100000000000000 01 00000000 0000000000000000 0000c03f 00004040 0700000000000000 "
                                  "01000000 000080bf 0200000000000000 00000000 01000000 00002040 0500000000000000 "
                                  "0000803e 00 0200000000000000 0100000000000000 0100000000000000 00 00 "
                                  "0100000000000000 0100000000000000 0000000000000000 01 0200000000000000 0000803f "
                                  "00000040 0200000000000000 0100000000000000 01 0200000000000000 0000803f 00000040"},
        {"apr1-kmeans-legacy", 6, "0200000000000000 2c01000000000000 17b7d138 01 0700000000000000 01 0400000000000000 "
                                  "00000000 00000000 0000a040 0000a040 0200000000000000 0200000000000000 01 0300000000000000 "
                                  "0000000000000000 0100000000000000 0100000000000000 0000a03f 0300000000000000"},
        {"apr1-kmeans-current", 6, "0200000000000000 2c01000000000000 17b7d138 01 0700000000000000 01 0400000000000000 "
                                   "00000000 00000000 0000a040 0000a040 0200000000000000 0200000000000000 01 0300000000000000 "
                                   "0000000000000000 0100000000000000 0100000000000000 0000a03f 0300000000000000 "
                                   "0100000000000000"},
        {"apr1-ngram", 0x10, "0300000000000000 0100000000000000 0000000000000000 0100000000000000 0300000000000000 676974 "
                             "02000000 0100000000000000 0a00000000000000 67697420737461747573 02000000 0200000000000000 "
                             "0200000000000000"},
    };
    for (size_t i = 0; i < sizeof P / sizeof P[0]; i++) {
        buf p = {0};
        put_hex(&p, P[i].hex);
        apr_v1(P[i].name, P[i].type, 0, 0, meta, &p, p.n, 0);
        free(p.p);
    }
}

static void apr_v1_seeds(void) {
    buf meta = {0}, rich = {0}, p = {0}, z = {0}, l = {0};
    apr_meta(&meta, 0, NULL, 0);
    static const uint8_t extra[] = "\xa6" "custom" "\x85\xa1" "a" "\xca\x3d\xcc\xcc\xcd\xa1" "b" "\xc4\x02\x01\x02"
                                   "\xa1" "c" "\x93\xc0\xc3\xd0\x80\xa1" "d" "\xcb\x3f\xb9\x99\x99\x99\x99\x99\x9a"
                                   "\xa1" "e" "\xde\x00\x01\xa1" "f" "\xd9\x03" "g\xc3\xa9"
                                   "\xaa" "model_name" "\xc0";
    apr_meta(&rich, 2, extra, sizeof extra - 1);
    /* LinearRegression y = w.x + b */
    put_u8(&p, 1); vec_f32(&p, 3); put_f32(&p, 0.5f); put_u8(&p, 1);
    apr_v1("apr1-linear", 1, 0, 0x08, &rich, &p, p.n, 0);
    apr_v1("apr1-linear-signed", 1, 0, 0x02, &meta, &p, p.n, 96);
    apr_v1("apr1-encrypted", 1, 0, 0x01, &meta, &p, p.n - 2, 0);
    apr_v1_classic_seeds(&meta);
    free(p.p); memset(&p, 0, sizeof p);
    /* LogisticRegression, 5 fields and 8 (Manual class weights, MiniBatch) */
    put_u8(&p, 1); vec_f32(&p, 4); put_f32(&p, 0.25f); put_f32(&p, 0.01f); put_u64(&p, 1000); put_f32(&p, 1e-4f);
    apr_v1("apr1-logistic5", 2, 0, 0, &meta, &p, p.n, 0);
    put_u32(&p, 2); vec_f32(&p, 2); put_f32(&p, 0); put_u32(&p, 2); put_u64(&p, 32);
    apr_v1("apr1-logistic8", 2, 0, 0, &meta, &p, p.n, 0);
    free(p.p); memset(&p, 0, sizeof p);
    /* NeuralSequential 4 -> 6 -> 3, stored plain, as one LZ4 literal run, and as one zstd raw block */
    vec_f32(&p, 24); vec_f32(&p, 6); vec_f32(&p, 18); vec_f32(&p, 3);
    apr_v1("apr1-sequential", 0x20, 0, 0, &meta, &p, p.n, 0);
    put_u32(&l, (uint32_t)p.n); put_u8(&l, 0xf0);
    for (size_t left = p.n - 15;; left -= 255) { put_u8(&l, (uint8_t)(left < 255 ? left : 255)); if (left < 255) break; }
    put(&l, p.p, p.n);
    apr_v1("apr1-sequential-lz4", 0x20, 3, 0, &meta, &l, p.n, 0);
    put_u32(&z, 0xFD2FB528u); put_u8(&z, 0x20); put_u8(&z, (uint8_t)p.n); /* single segment, 1-byte content size */
    put_u8(&z, (uint8_t)(1 | p.n << 3)); put_u8(&z, (uint8_t)(p.n >> 5)); put_u8(&z, (uint8_t)(p.n >> 13));
    put(&z, p.p, p.n);
    apr_v1("apr1-sequential-zstd", 0x20, 1, 0, &meta, &z, p.n, 0);
    free(p.p); free(z.p); free(l.p); free(meta.p); free(rich.p);
}

typedef struct apr_t { const char *name; uint8_t dtype; int rank; uint64_t shape[2]; size_t bytes; } apr_t;

/* An APR\0 file; tensors given sorted by name, data in that order, 64-aligned. */
static void apr_v2(const char *fname, const char *meta, const apr_t *ts, int n) {
    buf ix = {0}, d = {0}, f = {0};
    for (int i = 0; i < n; i++) {
        put_u8(&ix, (uint8_t)strlen(ts[i].name)); put_u8(&ix, 0); put_str(&ix, ts[i].name);
        put_u8(&ix, ts[i].dtype); put_u8(&ix, (uint8_t)ts[i].rank);
        for (int k = 0; k < ts[i].rank; k++) put_u64(&ix, ts[i].shape[k]);
        put_u64(&ix, d.n); put_u64(&ix, ts[i].bytes);
        for (size_t k = 0; k < ts[i].bytes; k += 4) put_f32(&d, weight());
        while (d.n % 64) put_u8(&d, 0);
    }
    while (ix.n % 64) put_u8(&ix, 0);
    size_t mlen = strlen(meta), index_at = 64 + (mlen + 63) / 64 * 64;
    put_str(&f, "APR"); put_u8(&f, 0); put_u8(&f, 2); put_u8(&f, 0); put_u8(&f, 0); put_u8(&f, 4);
    put_u32(&f, (uint32_t)n); put_u64(&f, 64); put_u32(&f, (uint32_t)mlen); put_u64(&f, index_at);
    put_u64(&f, index_at + ix.n);
    uint8_t head[60];
    memcpy(head, f.p, 40);
    memset(head + 40, 0, 20);
    put_u32(&f, crc32(head, 60));
    for (int i = 0; i < 20; i++) put_u8(&f, 0);
    put_str(&f, meta);
    while (f.n % 64) put_u8(&f, 0);
    put(&f, ix.p, ix.n);
    put(&f, d.p, d.n);
    put_crc(&f, 0);
    save_buf(fname, &f);
    free(ix.p);
    free(d.p);
}

static void apr_v2_seeds(void) {
    static const apr_t mlp[] = {{"fc1.bias", 0, 1, {5}, 20}, {"fc1.weight", 0, 2, {5, 3}, 60},
                                {"fc2.bias", 0, 1, {2}, 8}, {"fc2.weight", 0, 2, {2, 5}, 40}};
    apr_v2("apr2-mlp", "{\"model_type\":\"mlp\",\"activations\":\"tanh,softmax\",\"n\":[1,2.5,null,{}]}", mlp, 4);
    static const apr_t reg[] = {{"bias", 0, 1, {1}, 4}, {"weights", 0, 1, {8}, 32}};
    apr_v2("apr2-golden-v2", "{\"model_type\":\"linear_regression\",\"name\":\"golden-v2\",\"license\":null,"
           "\"total_size\":0,\"param_count\":8}", reg, 2);
    static const apr_t num[] = {{"0", 0, 2, {4, 2}, 32}, {"1", 0, 1, {4}, 16}, {"2", 0, 2, {3, 4}, 48}};
    apr_v2("apr2-numbered", "{}", num, 3);
    static const apr_t q[] = {{"a", 128, 1, {33}, 36}, {"b", 129, 2, {2, 5}, 14}, {"c", 12, 1, {256}, 144},
                              {"d", 14, 1, {256}, 210}, {"e", 1, 1, {2}, 4}, {"f", 30, 1, {2}, 4}, {"g", 3, 1, {1}, 8}};
    apr_v2("apr2-quantized", "{\"model_type\":\"llm\"}", q, 7);
    /* models with quantized weights and biases: Q8 panels, Q4 panels (in 4) and Q4 rows (in 6) */
    static const apr_t q8[] = {{"fc1.bias", 0, 1, {5}, 20}, {"fc1.weight", 129, 2, {5, 3}, 19},
                               {"fc2.bias", 129, 1, {2}, 6}, {"fc2.weight", 129, 2, {2, 5}, 14}};
    apr_v2("apr2-q8-mlp", "{\"model_type\":\"mlp\"}", q8, 4);
    static const apr_t q4[] = {{"fc1.bias", 128, 1, {6}, 18}, {"fc1.weight", 128, 2, {6, 4}, 18},
                               {"fc2.bias", 1, 1, {2}, 4}, {"fc2.weight", 128, 2, {2, 6}, 18}};
    apr_v2("apr2-q4-mlp", "{\"model_type\":\"mlp\",\"activations\":\"relu,sigmoid\"}", q4, 4);
}

static void msgpack_seeds(void) {
    static const struct { const char *name; const char *bytes; size_t n; } docs[] = {
        {"mp-map", "\x83\xa1" "a\x01\xa1" "b\x92\xc2\xc3\xa1" "c\x80", 12},
        {"mp-ints", "\x98\x7f\xe0\xcc\xff\xcd\x01\x00\xce\0\0\1\0\xcf\0\0\0\1\0\0\0\0\xd0\x80\xd3\x80\0\0\0\0\0\0\0", 36},
        {"mp-floats", "\x93\xca\x3d\xcc\xcc\xcd\xcb\x3f\xb9\x99\x99\x99\x99\x99\x9a\xcb\x7f\xf0\0\0\0\0\0\0", 24},
        {"mp-strings", "\x94\xa0\xd9\x02h\xc3\xda\0\x01x\xdb\0\0\0\x02\xe2\x82", 19},
        {"mp-bins", "\x93\xc4\x01\x07\xc5\0\x01\x08\xc6\0\0\0\0", 13},
        {"mp-big", "\xde\0\x02\xa1k\xdc\0\x01\xc0\xa1j\xdf\0\0\0\x01\xa0\xdd\0\0\0\0", 22},
        {"mp-ext", "\x92\xd4\x01\x02\xc7\x01\x05\x00", 8},
    };
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) save(docs[i].name, docs[i].bytes, docs[i].n);
}

/* Model tensors for the tensor formats (shared by SafeTensors and BinTensors). */
static const t FC[] = {{"fc1.weight", "F32", 2, {6, 5}}, {"fc1.bias", "F32", 1, {6}},
                       {"fc2.weight", "F32", 2, {10, 6}}, {"fc2.bias", "F32", 1, {10}}};
static const t HALF[] = {{"layers.0.weight", "F16", 2, {9, 3}}, {"layers.0.bias", "F16", 1, {9}},
                         {"layers.2.weight", "BF16", 2, {2, 9}}};
static const t DEEP[] = {{"net.0.weight", "F64", 2, {4, 3}}, {"net.0.bias", "F64", 1, {4}},
                         {"net.2.weight", "F64", 2, {5, 4}}, {"net.4.weight", "F64", 2, {1, 5}},
                         {"net.4.bias", "F64", 1, {1}}};
static const t NUMBERED[] = {{"0", "F32", 2, {7, 4}}, {"1", "F32", 1, {7}}, {"2", "F32", 2, {3, 7}},
                             {"3", "F32", 1, {3}}};
static const t WIDE[] = {{"fc.weight", "F32", 2, {37, 3}}, {"fc.bias", "F32", 1, {37}},
                         {"out.weight", "F32", 2, {2, 37}}};
static const t LINEAR[] = {{"coefficients", "F32", 1, {3}}, {"intercept", "F32", 1, {1}}};
static const t LOGISTIC[] = {{"coefficients", "F64", 2, {1, 4}}, {"intercept", "F64", 0, {0}}};
static const t OTHER[] = {{"tokens", "U8", 1, {5}}, {"ids", "I64", 2, {2, 1}}, {"mask", "BOOL", 1, {3}},
                          {"empty", "F32", 2, {0, 4}}, {"scale", "F16", 0, {0}}};
#define N(a) (int)(sizeof(a) / sizeof((a)[0]))

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: make_seeds NAME DIR [SAFETENSORS_FILE...]\n"); return 2; }
    const char *name = argv[1];
    g_dir = argv[2];
    if (!strcmp(name, "fuzz_bin")) {
        bin("bin-f32-3x4x10", 3, 4, 10, 0);
        bin("bin-f64-2x3x2", 2, 3, 2, 1);
        bin("bin-f32-1x1x2", 1, 1, 2, 0);
        bin("bin-f32-9x37x10", 9, 37, 10, 0);
        bin("bin-f64-5x8x3", 5, 8, 3, 1);
        buf f = {0};
        put_u32(&f, 3); put_u32(&f, 4); put_u32(&f, 10);
        save_buf("bin-header-only", &f);
    } else if (!strcmp(name, "fuzz_safetensors")) {
        safetensors("st-fc-f32", "{\"activations\":\"relu,softmax\",\"format\":\"pt\"}", FC, N(FC));
        safetensors("st-half", NULL, HALF, N(HALF));
        safetensors("st-deep-f64", "{\"activations\":\"tanh,gelu,sigmoid\"}", DEEP, N(DEEP));
        safetensors("st-numbered", "{\"activations\":\"silu,softmax\"}", NUMBERED, N(NUMBERED));
        safetensors("st-wide", "{\"activations\":\"leaky_relu,identity\"}", WIDE, N(WIDE));
        safetensors("st-linear", NULL, LINEAR, N(LINEAR));
        safetensors("st-logistic", "{\"model_type\":\"logistic_regression\"}", LOGISTIC, N(LOGISTIC));
        safetensors("st-other", "{\"note\":\"caf\\u00e9 \\ud83d\\ude00 \\\"q\\\" \\n\"}", OTHER, N(OTHER));
        safetensors("st-empty", NULL, NULL, 0);
    } else if (!strcmp(name, "fuzz_bintensors")) {
        static const uint8_t crate_vector[] = "\x18\0\0\0\0\0\0\0\0\x01\x0b\x03\x01\x02\x03\x00\x18\x01\x06"
                                              "attn.0\x00      "
                                              "\0\0\0\0\0\0\x80\x3f\0\0\0\x40\0\0\x40\x40\0\0\x80\x40\0\0\xa0\x40";
        save("bt-crate-vector", crate_vector, sizeof crate_vector - 1);
        static const uint8_t early_vector[] = "\x18\0\0\0\0\0\0\0\x00\x01\x08weight_1\x00\x02\x02\x02\x00\x04       "
                                              "\x01\x00\x00\x01";
        save("bt-early-vector", early_vector, sizeof early_vector - 1);
        static const char *const meta[] = {"activations", "relu,softmax", "format", "pt", NULL};
        bintensors("bt-fc-f32", meta, 1, FC, N(FC));
        bintensors("bt-fc-early", meta, 0, FC, N(FC));
        bintensors("bt-half", NULL, 1, HALF, N(HALF));
        bintensors("bt-numbered", NULL, 1, NUMBERED, N(NUMBERED));
        bintensors("bt-wide", NULL, 1, WIDE, N(WIDE)); /* offsets above 250: 3-byte varints */
        bintensors("bt-linear", NULL, 1, LINEAR, N(LINEAR));
        static const char *const logistic[] = {"model_type", "logistic_regression", NULL};
        bintensors("bt-logistic", logistic, 1, LOGISTIC, N(LOGISTIC));
        bintensors("bt-other", NULL, 0, OTHER, N(OTHER));
    } else if (!strcmp(name, "fuzz_json")) {
        static const char *const docs[] = {
            "{\"a\":[1,-2.5e+3,0,0.125,1E-2,true,false,null,\"x\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00\"],\"b\":{}}",
            "[]", "{}", "\"\\u0000\"", "0", "-0.0e-0", "[18446744073709551615,18446744073709551616,1e400]",
            "{\"__metadata__\":{\"k\":\"v\"},\"t\":{\"dtype\":\"F32\",\"shape\":[1,2],\"data_offsets\":[0,8]}}",
            "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
            "{\"caf\xc3\xa9\":\"\xf0\x9f\x98\x80\",\"k\\u0000\":1,\"k\":2}",
            " \t\r\n{ \"a\" : [ 1 , { } ] } \n",
        };
        char fname[32];
        for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
            snprintf(fname, sizeof fname, "json-%zu", i);
            save(fname, docs[i], strlen(docs[i]));
        }
        /* headers of real SafeTensors files */
        for (int a = 3; a < argc; a++) {
            FILE *f = fopen(argv[a], "rb");
            uint8_t len[8];
            if (!f) continue;
            if (fread(len, 1, 8, f) == 8) {
                uint64_t n = 0;
                for (int i = 0; i < 8; i++) n |= (uint64_t)len[i] << (8 * i);
                if (n <= 65536) {
                    char *h = malloc(n ? n : 1);
                    if (h && fread(h, 1, n, f) == n) {
                        snprintf(fname, sizeof fname, "header-%d", a - 3);
                        save(fname, h, n);
                    }
                    free(h);
                }
            }
            fclose(f);
        }
    } else if (!strcmp(name, "fuzz_apr_v1")) {
        apr_v1_seeds();
    } else if (!strcmp(name, "fuzz_apr_v2")) {
        apr_v2_seeds();
    } else if (!strcmp(name, "fuzz_msgpack")) {
        msgpack_seeds();
    } /* other fuzzers: no seeds from here */
    return 0;
}
