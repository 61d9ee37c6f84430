/* test_encoder.c — BERT-family sentence encoders (mlrt_load_files, mlrt_run, mlrt_embed): golden
 * embeddings from PyTorch (tests/gen/encoder_c.py -> tests/c/encoder/), every pooling mode, f16 and
 * bf16 weights, the "bert." prefix and legacy names, the same bits alone and in any batch, .apr v2
 * (f32 and Q8), and every class of malformed folder and call. (The encoder's kernels:
 * test_encoder_kernels.c.) */
#include "builders.h"

#define DIR "tests/c/encoder/"

/* ------------------------------------------------------------------ folders */

typedef struct folder {
    mlrt_file f[12];
    size_t n;
} folder;

static void add(folder *d, const char *name, bytes b) { d->f[d->n++] = (mlrt_file){name, b.p, b.n}; }
static void add_str(folder *d, const char *name, const char *s) { add(d, name, copy_of(s, strlen(s))); }
static void drop(folder *d, const char *name) {
    for (size_t i = 0; i < d->n; i++)
        if (!strcmp(d->f[i].name, name)) d->f[i] = d->f[--d->n];
}
static void replace(folder *d, const char *name, bytes b) { drop(d, name), add(d, name, b); }
static void replace_str(folder *d, const char *name, const char *s) { drop(d, name), add_str(d, name, s); }

static bytes must_read(const char *path) {
    bytes b = read_file_or_empty(path);
    CHECK_MSG(b.n > 0, "cannot read %s (run from the repository's root)", path);
    return b;
}

/* sentence-transformers' module files for a pooling of tests/gen/encoder_c.py's POOLINGS. */
static void pooling_files(folder *d, const char *pooling, uint32_t hidden) {
    static const struct { const char *name, *flags; bool norm; } P[] = {
        {"mean_norm", "\"pooling_mode_mean_tokens\":true", true}, {"mean", "\"pooling_mode_mean_tokens\":true", false},
        {"cls_norm", "\"pooling_mode_cls_token\":true,\"pooling_mode_mean_tokens\":false", true},
        {"max", "\"pooling_mode_max_tokens\":true,\"pooling_mode_mean_tokens\":false", false},
        {"mean_sqrt", "\"pooling_mode_mean_sqrt_len_tokens\":true,\"pooling_mode_mean_tokens\":false", false},
        {"weighted", "\"pooling_mode_weightedmean_tokens\":true,\"pooling_mode_mean_tokens\":false", false},
        {"last", "\"pooling_mode_lasttoken\":true,\"pooling_mode_mean_tokens\":false", false},
        {"cls_mean", "\"pooling_mode_cls_token\":true,\"pooling_mode_mean_tokens\":true", true},
        {"cls", "\"pooling_mode_cls_token\":true,\"pooling_mode_mean_tokens\":false", false},
        {"cls_mean_last", "\"pooling_mode_cls_token\":true,\"pooling_mode_mean_tokens\":true,\"pooling_mode_lasttoken\":true", false}};
    for (size_t i = 0; i < LEN(P); i++) {
        if (strcmp(P[i].name, pooling)) continue;
        bytes m = {0}, p = {0};
        put_fmt(&m, "[{\"idx\":0,\"name\":\"0\",\"path\":\"\",\"type\":\"sentence_transformers.models.Transformer\"},"
                    "{\"idx\":1,\"name\":\"1\",\"path\":\"1_Pooling\",\"type\":\"sentence_transformers.models.Pooling\"}%s]",
                P[i].norm ? ",{\"idx\":2,\"name\":\"2\",\"path\":\"2_Normalize\",\"type\":\"sentence_transformers.models.Normalize\"}" : "");
        put_fmt(&p, "{\"word_embedding_dimension\":%u,%s,\"include_prompt\":true}", hidden, P[i].flags);
        replace(d, "modules.json", done(m));
        replace(d, "1_Pooling/config.json", done(p));
        return;
    }
    CHECK_MSG(0, "no pooling %s", pooling);
}

static folder tiny_folder(const char *weights, const char *pooling) {
    folder d = {0};
    add(&d, "model.safetensors", must_read(weights ? weights : DIR "tiny/model.safetensors"));
    add(&d, "config.json", must_read(DIR "tiny/config.json"));
    if (pooling) pooling_files(&d, pooling, 32);
    return d;
}

/* The folder loaded with take_files: its files copied into blocks of their own, which the call takes
 * (the model keeps the weights' block and packs its weights there; LeakSanitizer checks the rest). */
static mlrt_model *load_taking(const folder *d, mlrt_error *e) {
    mlrt_file f[LEN(d->f)];
    for (size_t i = 0; i < d->n; i++) {
        uint8_t *b = malloc(d->f[i].len ? d->f[i].len : 1);
        CHECK(b != NULL);
        if (d->f[i].len) memcpy(b, d->f[i].bytes, d->f[i].len);
        f[i] = (mlrt_file){d->f[i].name, b, d->f[i].len};
    }
    const mlrt_load_options take = {.take_files = 1};
    return mlrt_load_files(f, d->n, &take, e);
}

/* Every model LOAD loads is loaded again with take_files, and must give the same bits on two texts of
 * token ids 0..4 (all tests' vocabularies hold them). */
static void same_taking_at(const char *file, int line, mlrt_model *m, const folder *d) {
    mlrt_error e = {0};
    mlrt_model *t = load_taking(d, &e);
    check_at(t != NULL, file, line, "load_files with take_files failed: %s: %s", mlrt_status_name(e.code), e.message);
    if (!t) return;
    int64_t ids[2][5] = {{0, 1, 2, 3, 4}, {4, 3, 2, 1, 0}};
    mlrt_tensor in = {"input_ids", MLRT_I64, 2, {2, 5}, ids};
    mlrt_status a = mlrt_run(m, &in, 1, &e), b = mlrt_run(t, &in, 1, &e);
    const mlrt_tensor *x = mlrt_output(m, 0), *y = mlrt_output(t, 0);
    check_at(a == b && (a || (x->dims[1] == y->dims[1] && !memcmp(x->data, y->data, 2 * (size_t)x->dims[1] * 4))), file, line,
             "take_files changed the embeddings");
    mlrt_free(t);
}

static mlrt_model *load_at(const char *file, int line, folder *d) {
    mlrt_error e = {0};
    mlrt_model *m = mlrt_load_files(d->f, d->n, NULL, &e);
    check_at(m != NULL, file, line, "load_files failed: %s: %s", mlrt_status_name(e.code), e.message);
    if (m) same_taking_at(file, line, m, d);
    return keep_model(m);
}
#define LOAD(d) load_at(__FILE__, __LINE__, (d))

/* (and the same failure with take_files: the blocks freed, the bad weight named alike) */
static void fails_at(const char *file, int line, folder *d, mlrt_status code, const char *needle) {
    mlrt_error e = {0}, et = {0};
    mlrt_model *m = mlrt_load_files(d->f, d->n, NULL, &e), *t = load_taking(d, &et);
    check_at(m == NULL && t == NULL, file, line, "load_files should fail with %s (%s)", mlrt_status_name(code), needle);
    if (m || t) { mlrt_free(m), mlrt_free(t); return; }
    check_at(e.code == code && strstr(e.message, needle) != NULL, file, line, "expected %s containing \"%s\", got %s: %s",
             mlrt_status_name(code), needle, mlrt_status_name(e.code), e.message);
    check_at(et.code == e.code && !strcmp(et.message, e.message), file, line, "with take_files: %s: %s", mlrt_status_name(et.code),
             et.message);
}
#define FAILS(d, code, needle) fails_at(__FILE__, __LINE__, (d), (code), (needle))

/* ------------------------------------------------------------------ the expected values */

static mlrt__json_doc g_doc;
static const mlrt__json *expected_root(void) {
    static uint8_t *src; /* numbers point into the source: both live as long as the process */
    if (g_doc.root) return g_doc.root;
    bytes b = must_read(DIR "expected.json");
    src = malloc(b.n);
    memcpy(src, b.p, b.n);
    mlrt_error e;
    CHECK(mlrt__json_parse(src, b.n, "expected.json", &g_doc, &e) == MLRT_OK);
    return g_doc.root;
}

static double num(const mlrt__json *v) {
    char tmp[64];
    size_t n = v->len < 63 ? v->len : 63;
    memcpy(tmp, v->str, n), tmp[n] = 0;
    return strtod(tmp, NULL);
}

/* Batch bi of model `name`: its ids, mask and types as int64 [rows][width]. */
typedef struct tbatch { size_t rows, width; int64_t *ids, *mask, *types; } tbatch;
static tbatch get_batch(const char *name, int bi) {
    const mlrt__json *b = jitem(mlrt__json_get(mlrt__json_get(expected_root(), "batches"), name), (size_t)bi);
    tbatch t = {0};
    const mlrt__json *ids = mlrt__json_get(b, "ids");
    t.rows = ids->count, t.width = ids->child->count;
    int64_t **dst[3] = {&t.ids, &t.mask, &t.types};
    const char *keys[3] = {"ids", "mask", "types"};
    for (int k = 0; k < 3; k++) {
        *dst[k] = tmalloc(t.rows * t.width * 8);
        size_t i = 0;
        for (const mlrt__json *r = mlrt__json_get(b, keys[k])->child; r; r = r->next)
            for (const mlrt__json *x = r->child; x; x = x->next) (*dst[k])[i++] = (int64_t)num(x);
    }
    return t;
}

static const mlrt__json *expected(const char *key) {
    const mlrt__json *v = mlrt__json_get(mlrt__json_get(expected_root(), "expected"), key);
    CHECK_MSG(v != NULL, "no expected values %s", key);
    return v;
}

static const float *run_at(const char *file, int line, mlrt_model *m, const tbatch *b, mlrt_dtype id_type, bool with_mask,
                           bool with_types) {
    mlrt_tensor in[3];
    size_t n = 0, count = b->rows * b->width;
    int32_t *ids32 = tmalloc(count * 4);
    for (size_t i = 0; i < count; i++) ids32[i] = (int32_t)b->ids[i];
    in[n++] = (mlrt_tensor){"input_ids", id_type, 2, {(int64_t)b->rows, (int64_t)b->width}, id_type == MLRT_I32 ? (void *)ids32 : b->ids};
    if (with_mask) in[n++] = (mlrt_tensor){"attention_mask", MLRT_I64, 2, {(int64_t)b->rows, (int64_t)b->width}, b->mask};
    if (with_types) in[n++] = (mlrt_tensor){"token_type_ids", MLRT_I64, 2, {(int64_t)b->rows, (int64_t)b->width}, b->types};
    mlrt_error e = {0};
    mlrt_status st = mlrt_run(m, in, n, &e);
    check_at(st == MLRT_OK, file, line, "run: %s: %s", mlrt_status_name(e.code), e.message);
    return st ? NULL : mlrt_output(m, 0)->data;
}
#define RUN(m, b) run_at(__FILE__, __LINE__, (m), (b), MLRT_I64, true, true)

/* Every value within tol of the expected, relative to the largest expected magnitude of its row. */
static void check_close_at(const char *file, int line, const float *got, const mlrt__json *want, size_t rows, double tol) {
    size_t n = want->count, dim = n / rows, i = 0, bad = 0;
    double worst = 0;
    double *w = tmalloc(n * sizeof *w);
    for (const mlrt__json *x = want->child; x; x = x->next) w[i++] = num(x);
    for (size_t r = 0; got && r < rows; r++) {
        double scale = 1e-6;
        for (size_t k = 0; k < dim; k++) scale = fabs(w[r * dim + k]) > scale ? fabs(w[r * dim + k]) : scale;
        for (size_t k = 0; k < dim; k++) {
            double dlt = fabs(got[r * dim + k] - w[r * dim + k]) / scale;
            worst = dlt > worst ? dlt : worst;
            bad += dlt > tol;
        }
    }
    check_at(got && bad == 0, file, line, "%zu of %zu values off by more than %g (worst %.3g)", bad, n, tol, worst);
}
#define CHECK_CLOSE(got, key, rows, tol) check_close_at(__FILE__, __LINE__, (got), expected(key), (rows), (tol))

/* ------------------------------------------------------------------ golden */

static const char *const POOLS[] = {"mean_norm", "mean", "cls_norm", "max", "mean_sqrt", "weighted", "last", "cls_mean"};

static void golden(const char *dtype, const char *weights) {
    for (size_t p = 0; p < LEN(POOLS); p++) {
        folder d = tiny_folder(weights, POOLS[p]);
        mlrt_model *m = LOAD(&d);
        if (!m) return;
        for (int bi = 0; bi < 2; bi++) {
            tbatch b = get_batch("tiny", bi);
            char key[64];
            snprintf(key, sizeof key, "tiny/%s/%d/%s", dtype, bi, POOLS[p]);
            CHECK_CLOSE(RUN(m, &b), key, b.rows, 1e-5);
        }
    }
}

static void test_golden_f32(void) { golden("f32", NULL); }

/* mlrt_warm_up runs the kernels over buffers of its own (the sanitizer build checks their bounds) and
 * leaves nothing behind: the goldens after it are the goldens. */
static void test_warm_up(void) {
    mlrt_error e;
    CHECK(mlrt_warm_up(&e) == MLRT_OK);
    CHECK(mlrt_warm_up(NULL) == MLRT_OK);
    golden("f32", NULL);
}
static void test_golden_f16(void) { golden("f16", DIR "tiny/model.f16.safetensors"); }
static void test_golden_bf16(void) { golden("bf16", DIR "tiny/model.bf16.safetensors"); }

/* d = 6, an FFN of 20, the "bert." prefix, gamma/beta, unused tensors (listed), no modules.json: mean. */
static void test_golden_prefixed_odd(void) {
    folder d = {0};
    add(&d, "model.safetensors", must_read(DIR "odd/model.safetensors"));
    add(&d, "config.json", must_read(DIR "odd/config.json"));
    mlrt_model *m = LOAD(&d);
    if (!m) return;
    for (int bi = 0; bi < 2; bi++) {
        tbatch b = get_batch("odd", bi);
        char key[64];
        snprintf(key, sizeof key, "odd/f32/%d/mean", bi);
        CHECK_CLOSE(RUN(m, &b), key, b.rows, 1e-5);
    }
    const char *info = mlrt_model_info_json(m);
    CHECK_CONTAINS(info, "\"unusedTensors\":[\"bert.pooler.dense.weight\",\"bert.pooler.dense.bias\",\"bert.embeddings.position_ids\",\"cls.predictions.bias\"]");
    CHECK_CONTAINS(info, "\"tensorPrefix\":\"bert.\"");
    CHECK_CONTAINS(info, "\"pooling\":\"mean\",\"normalize\":false");
    /* with sentence-transformers' files, each pooling */
    for (size_t p = 0; p < LEN(POOLS); p++) {
        pooling_files(&d, POOLS[p], 12);
        mlrt_error e;
        mlrt_model *mp = keep_model(mlrt_load_files(d.f, d.n, NULL, &e));
        CHECK_MSG(mp != NULL, "%s: %s", POOLS[p], e.message);
        if (!mp) continue;
        for (int bi = 0; bi < 2; bi++) {
            tbatch b = get_batch("odd", bi);
            char key[64];
            snprintf(key, sizeof key, "odd/f32/%d/%s", bi, POOLS[p]);
            CHECK_CLOSE(RUN(mp, &b), key, b.rows, 1e-5);
        }
    }
}

/* ------------------------------------------------------------------ the same bits */

/* CLS or LAST alone: the last layer runs for that token only (model/encoder.c, layer_pooled); it must
 * give the bits that the whole layer gives, read here from a model that pools CLS, mean and LAST
 * together (concatenated in that order, not normalized), for every text of two batches. */
static void test_one_token_pooling(void) {
    folder all = tiny_folder(NULL, "cls_mean_last"), cls = tiny_folder(NULL, "cls"), last = tiny_folder(NULL, "last");
    mlrt_model *ma = LOAD(&all), *mc = LOAD(&cls), *ml = LOAD(&last);
    if (!ma || !mc || !ml) return;
    const size_t H = 32;
    for (int bi = 0; bi < 2; bi++) {
        tbatch b = get_batch("tiny", bi);
        const float *ya = RUN(ma, &b), *yc = RUN(mc, &b), *yl = RUN(ml, &b);
        if (!ya || !yc || !yl) return;
        for (size_t r = 0; r < b.rows; r++) {
            CHECK_MSG(memcmp(yc + r * H, ya + r * 3 * H, H * 4) == 0, "batch %d row %zu: CLS alone differs", bi, r);
            CHECK_MSG(memcmp(yl + r * H, ya + r * 3 * H + 2 * H, H * 4) == 0, "batch %d row %zu: LAST alone differs", bi, r);
        }
    }
}

/* Each row alone, unpadded, and padded into wider batches, gives the bits it has in the batch; the ids
 * as I32 and the mask as U8, BOOL, I32 or I64 too; without types (zeros) as with zero types. */
static void test_batch_invariance(void) {
    folder d = tiny_folder(NULL, "mean_norm");
    mlrt_model *m = LOAD(&d);
    if (!m) return;
    tbatch b = get_batch("tiny", 1);
    const size_t dim = 32;
    float *all = tmalloc(b.rows * dim * 4);
    const float *y = RUN(m, &b);
    if (!y) return;
    memcpy(all, y, b.rows * dim * 4);
    for (size_t r = 0; r < b.rows; r++) {
        size_t len = 0;
        while (len < b.width && b.mask[r * b.width + len]) len++;
        for (size_t width = len; width <= b.width; width += (b.width - len) / 2 + 1) {
            tbatch one = {1, width, tmalloc(width * 8), tmalloc(width * 8), tmalloc(width * 8)};
            for (size_t t = 0; t < width; t++) {
                one.ids[t] = t < len ? b.ids[r * b.width + t] : 0;
                one.mask[t] = t < len;
                one.types[t] = t < len ? b.types[r * b.width + t] : 0;
            }
            const float *z = RUN(m, &one);
            CHECK_MSG(z && memcmp(z, all + r * dim, dim * 4) == 0, "row %zu alone (width %zu) differs from the batch", r, width);
        }
    }
    /* the batch reversed, and with rows repeated: every row's bits again */
    tbatch rev = {2 * b.rows, b.width, tmalloc(2 * b.rows * b.width * 8), tmalloc(2 * b.rows * b.width * 8), tmalloc(2 * b.rows * b.width * 8)};
    for (size_t r = 0; r < 2 * b.rows; r++) {
        size_t s = (b.rows - 1 - r % b.rows) * b.width;
        memcpy(rev.ids + r * b.width, b.ids + s, b.width * 8), memcpy(rev.mask + r * b.width, b.mask + s, b.width * 8);
        memcpy(rev.types + r * b.width, b.types + s, b.width * 8);
    }
    y = RUN(m, &rev);
    for (size_t r = 0; y && r < 2 * b.rows; r++)
        CHECK_MSG(memcmp(y + r * dim, all + (b.rows - 1 - r % b.rows) * dim, dim * 4) == 0, "reversed batch row %zu", r);
    /* input element types */
    y = run_at(__FILE__, __LINE__, m, &b, MLRT_I32, true, true);
    CHECK(y && memcmp(y, all, b.rows * dim * 4) == 0);
    static const mlrt_dtype masks[3] = {MLRT_U8, MLRT_BOOL, MLRT_I32};
    for (int k = 0; k < 3; k++) {
        size_t count = b.rows * b.width;
        void *mk = tmalloc(count * 4);
        for (size_t i = 0; i < count; i++) {
            if (masks[k] == MLRT_I32) ((int32_t *)mk)[i] = (int32_t)b.mask[i];
            else ((uint8_t *)mk)[i] = (uint8_t)b.mask[i];
        }
        mlrt_tensor in[3] = {{"input_ids", MLRT_I64, 2, {(int64_t)b.rows, (int64_t)b.width}, b.ids},
                             {"attention_mask", masks[k], 2, {(int64_t)b.rows, (int64_t)b.width}, mk},
                             {"token_type_ids", MLRT_I64, 2, {(int64_t)b.rows, (int64_t)b.width}, b.types}};
        mlrt_error e;
        CHECK(mlrt_run(m, in, 3, &e) == MLRT_OK && memcmp(mlrt_output(m, 0)->data, all, b.rows * dim * 4) == 0);
    }
    /* no mask and no types: row 0 has 16 real tokens and no pair; the others get their pads counted */
    tbatch first = {1, b.width, b.ids, b.mask, b.types};
    y = run_at(__FILE__, __LINE__, m, &first, MLRT_I64, false, false);
    CHECK(y && memcmp(y, all, dim * 4) == 0);
    /* a fork: its own buffers, the same bits */
    mlrt_error e;
    mlrt_model *f = mlrt_model_fork(m, &e);
    CHECK(f != NULL);
    if (f) {
        y = RUN(f, &b);
        CHECK(y && memcmp(y, all, b.rows * dim * 4) == 0);
        mlrt_free(f);
    }
}

/* The outputs of every weights file, pooling and batch in tests/encoder-builds.test.mjs's order, against
 * tests/c/encoder/bits.f32: the wasm builds check the same file, so native and wasm give the same bits.
 * MLRT_WRITE_BITS=1 build/test_c test_native_bits writes it (after a change of the arithmetic). */
static void test_native_bits(void) {
    static const struct { const char *name, *weights; uint32_t hidden; } W[] = {
        {"tiny", "model.safetensors", 32}, {"tiny", "model.f16.safetensors", 32}, {"tiny", "model.bf16.safetensors", 32},
        {"odd", "model.safetensors", 12}};
    static const char *const P[] = {"mean_norm", "cls_norm", "max", "weighted"};
    bytes all = {0};
    for (size_t w = 0; w < LEN(W); w++)
        for (size_t p = 0; p < LEN(P); p++) {
            char path[128];
            folder d = {0};
            snprintf(path, sizeof path, DIR "%s/%s", W[w].name, W[w].weights);
            add(&d, "model.safetensors", must_read(path));
            snprintf(path, sizeof path, DIR "%s/config.json", W[w].name);
            add(&d, "config.json", must_read(path));
            pooling_files(&d, P[p], W[w].hidden);
            mlrt_model *m = LOAD(&d);
            for (int bi = 0; m && bi < 2; bi++) {
                tbatch b = get_batch(W[w].name, bi);
                const float *y = RUN(m, &b);
                if (y) put(&all, y, b.rows * W[w].hidden * 4);
            }
        }
    done(all);
    if (getenv("MLRT_WRITE_BITS")) {
        FILE *f = fopen(DIR "bits.f32", "wb");
        CHECK(f && fwrite(all.p, 1, all.n, f) == all.n);
        if (f) fclose(f);
    }
    bytes want = must_read(DIR "bits.f32");
    CHECK_MSG(want.n == all.n && memcmp(want.p, all.p, all.n) == 0, "the outputs differ from tests/c/encoder/bits.f32 (%zu vs %zu bytes)",
              all.n, want.n);
}

/* ------------------------------------------------------------------ texts */

/* A WordPiece tokenizer over tiny's 40 ids. */
static const char TOKENIZER[] =
    "{\"version\":\"1.0\",\"truncation\":null,\"padding\":null,\"added_tokens\":["
    "{\"id\":0,\"content\":\"[PAD]\",\"single_word\":false,\"lstrip\":false,\"rstrip\":false,\"normalized\":false,\"special\":true},"
    "{\"id\":1,\"content\":\"[UNK]\",\"single_word\":false,\"lstrip\":false,\"rstrip\":false,\"normalized\":false,\"special\":true},"
    "{\"id\":2,\"content\":\"[CLS]\",\"single_word\":false,\"lstrip\":false,\"rstrip\":false,\"normalized\":false,\"special\":true},"
    "{\"id\":3,\"content\":\"[SEP]\",\"single_word\":false,\"lstrip\":false,\"rstrip\":false,\"normalized\":false,\"special\":true}],"
    "\"normalizer\":{\"type\":\"BertNormalizer\",\"clean_text\":true,\"handle_chinese_chars\":true,\"strip_accents\":null,\"lowercase\":true},"
    "\"pre_tokenizer\":{\"type\":\"BertPreTokenizer\"},"
    "\"post_processor\":{\"type\":\"BertProcessing\",\"sep\":[\"[SEP]\",3],\"cls\":[\"[CLS]\",2]},"
    "\"decoder\":{\"type\":\"WordPiece\",\"prefix\":\"##\",\"cleanup\":true},"
    "\"model\":{\"type\":\"WordPiece\",\"unk_token\":\"[UNK]\",\"continuing_subword_prefix\":\"##\",\"max_input_chars_per_word\":100,"
    "\"vocab\":{\"[PAD]\":0,\"[UNK]\":1,\"[CLS]\":2,\"[SEP]\":3,\"a\":4,\"b\":5,\"c\":6,\"the\":7,\"cat\":8,\"dog\":9,\"sat\":10,"
    "\"on\":11,\"mat\":12,\".\":13,\",\":14,\"##s\":15,\"run\":16,\"##ning\":17,\"i\":18,\"\\u0307\":19,\"big\":20}}}";

static void test_embed(void) {
    folder d = tiny_folder(NULL, "cls_mean");
    add_str(&d, "tokenizer.json", TOKENIZER);
    add_str(&d, "sentence_bert_config.json", "{\"max_seq_length\":8,\"do_lower_case\":false}");
    mlrt_model *m = LOAD(&d);
    if (!m) return;
    mlrt_tokenizer *t = mlrt_model_tokenizer(m);
    CHECK(t != NULL);
    static const char *const texts[] = {"the cat sat on the mat.", "", "Dogs running", "a b c a b c a b c a b c (truncated)", "big"};
    const size_t n = LEN(texts), dim = 64;
    char buf[256] = "";
    size_t ends[8];
    for (size_t i = 0; i < n; i++) strcat(buf, texts[i]), ends[i] = strlen(buf);
    float *all = tmalloc(n * dim * 4), *one = tmalloc(dim * 4);
    mlrt_error e;
    CHECK(mlrt_embed(m, buf, ends, n, all, &e) == MLRT_OK);
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(texts[i]);
        CHECK(mlrt_embed(m, texts[i], &len, 1, one, &e) == MLRT_OK);
        CHECK_MSG(memcmp(one, all + i * dim, dim * 4) == 0, "text %zu alone differs from the batch", i);
        /* the tokenizer's ids (truncated to max_seq_length 8) through mlrt_run: the same bits */
        mlrt_encode_options o = {8, MLRT_TRUNCATION_LONGEST_FIRST, MLRT_PADDING_NONE};
        mlrt_encoding enc;
        CHECK(mlrt_tokenizer_encode(t, texts[i], len, NULL, 0, &o, &enc, &e) == MLRT_OK);
        CHECK(enc.n <= 8);
        int32_t ids[8];
        memcpy(ids, enc.ids, enc.n * 4);
        mlrt_tensor in = {"input_ids", MLRT_I32, 2, {1, (int64_t)enc.n}, ids};
        CHECK(mlrt_run(m, &in, 1, &e) == MLRT_OK && memcmp(mlrt_output(m, 0)->data, one, dim * 4) == 0);
    }
    float norm = 0;
    for (size_t k = 0; k < dim; k++) norm += all[k] * all[k];
    CHECK_NEAR(norm, 1.0, 1e-5);
    /* do_lower_case: texts lowercased first (U+0130 -> i + U+0307), so "İ" is "i" "\u0307" here */
    replace_str(&d, "sentence_bert_config.json", "{\"max_seq_length\":8,\"do_lower_case\":true}");
    mlrt_model *lower = LOAD(&d);
    size_t l1 = 2, l2 = 3;
    if (lower) {
        CHECK(mlrt_embed(lower, "\xc4\xb0", &l1, 1, one, &e) == MLRT_OK);
        CHECK(mlrt_embed(lower, "i\xcc\x87", &l2, 1, all, &e) == MLRT_OK);
        CHECK(memcmp(one, all, dim * 4) == 0);
        CHECK_CONTAINS(mlrt_model_info_json(lower), "\"lowerCase\":true");
        /* lowercased before the added tokens are matched: a typed "[CLS]" is no longer the special token */
        size_t l5 = 5;
        CHECK(mlrt_embed(lower, "[CLS]", &l5, 1, one, &e) == MLRT_OK && mlrt_embed(m, "[CLS]", &l5, 1, all, &e) == MLRT_OK);
        CHECK(memcmp(one, all, dim * 4) != 0);
        CHECK(mlrt_embed(lower, "[cls]", &l5, 1, all, &e) == MLRT_OK && memcmp(one, all, dim * 4) == 0);
        CHECK(mlrt_embed(lower, "a\xff", &l1, 1, one, &e) == MLRT_ERR_INVALID_UTF8);
    }
    /* prompts: prepended to every text; the file's default one by mlrt_embed, "" none */
    {
        size_t l3 = 3, lq = strlen("query: cat");
        CHECK(mlrt_embed_prompt(m, "query: ", 7, "cat", &l3, 1, one, &e) == MLRT_OK);
        CHECK(mlrt_embed(m, "query: cat", &lq, 1, all, &e) == MLRT_OK && memcmp(one, all, dim * 4) == 0);
        CHECK(mlrt_embed_prompt(m, "", 0, "cat", &l3, 1, all, &e) == MLRT_OK && memcmp(one, all, dim * 4) != 0);
        CHECK(mlrt_embed_prompt(m, "q\xff", 2, "cat", &l3, 1, one, &e) == MLRT_ERR_INVALID_UTF8);
        CHECK_CONTAINS(e.message, "the prompt is not UTF-8 at byte 1");
        CHECK(mlrt_embed_prompt(m, NULL, 3, "cat", &l3, 1, one, &e) == MLRT_ERR_INVALID_ARGUMENT);
        add_str(&d, "config_sentence_transformers.json", "{\"prompts\":{\"query\":\"query: \",\"p\":\"\"},\"default_prompt_name\":\"query\"}");
        mlrt_model *pm = LOAD(&d);
        if (pm) {
            CHECK_CONTAINS(mlrt_model_info_json(pm), "\"prompts\":{\"query\":\"query: \",\"p\":\"\"},\"defaultPromptName\":\"query\",\"includePrompt\":true");
            CHECK(mlrt_embed(pm, "cat", &l3, 1, all, &e) == MLRT_OK);
            CHECK(mlrt_embed(m, "query: cat", &lq, 1, one, &e) == MLRT_OK && memcmp(one, all, dim * 4) == 0);
            CHECK(mlrt_embed_prompt(pm, "", 0, "cat", &l3, 1, all, &e) == MLRT_OK && mlrt_embed(m, "cat", &l3, 1, one, &e) == MLRT_OK);
            CHECK(memcmp(one, all, dim * 4) == 0);
        }
        replace_str(&d, "config_sentence_transformers.json", "{\"prompts\":{\"query\":\"query: \"},\"default_prompt_name\":\"passage\"}");
        FAILS(&d, MLRT_ERR_BAD_HEADER, "default_prompt_name 'passage' is not one of the prompts");
        replace_str(&d, "config_sentence_transformers.json", "{}");
    }
    /* refusals */
    CHECK(mlrt_embed(m, "a\xff", &l1, 1, one, &e) == MLRT_ERR_INVALID_UTF8);
    size_t bad_ends[2] = {3, 1};
    CHECK(mlrt_embed(m, "abc", bad_ends, 2, all, &e) == MLRT_ERR_INVALID_ARGUMENT);
    CHECK(mlrt_embed(NULL, "abc", &l1, 1, all, &e) == MLRT_ERR_INVALID_ARGUMENT);
    folder bare = tiny_folder(NULL, NULL);
    mlrt_model *nt = LOAD(&bare);
    CHECK(nt && mlrt_model_tokenizer(nt) == NULL);
    if (nt) {
        CHECK(mlrt_embed(nt, "abc", &l1, 1, all, &e) == MLRT_ERR_INVALID_ARGUMENT);
        CHECK_CONTAINS(e.message, "tokenizer");
    }
}

/* ------------------------------------------------------------------ info */

static void test_info(void) {
    folder d = tiny_folder(DIR "tiny/model.f16.safetensors", "mean_norm");
    mlrt_model *m = LOAD(&d);
    if (!m) return;
    inspected in = {0};
    const char *info = mlrt_model_info_json(m);
    mlrt_error e;
    CHECK(mlrt__json_parse((const uint8_t *)info, strlen(info), "info", &in.doc, &e) == MLRT_OK);
    const mlrt__json *o = in.doc.root;
    CHECK_STR(jstr(o, "kind"), "encoder");
    CHECK_STR(jstr(o, "task"), "embedding");
    CHECK_STR(jstr(o, "architecture"), "BertModel");
    CHECK_STR(jstr(o, "dtype"), "f16");
    CHECK_STR(jstr(o, "pooling"), "mean");
    CHECK_INT(jint(o, "dim"), 32);
    CHECK_INT(jint(o, "layers"), 2);
    CHECK_INT(jint(o, "heads"), 4);
    CHECK_INT(jint(o, "ffn"), 64);
    CHECK_INT(jint(o, "vocabSize"), 40);
    CHECK_INT(jint(o, "maxLength"), 16);
    CHECK_INT(jint(o, "maxPositions"), 16);
    CHECK(mlrt__json_get(o, "normalize")->type == MLRT__JSON_TRUE);
    CHECK(jint(o, "weightBytes") > 40 * 32 * 2);
    CHECK(mlrt__json_get(o, "unusedTensors")->count == 0);
    CHECK_CONTAINS(info, "{\"name\":\"input_ids\",\"dtype\":\"I64\",\"shape\":[\"batch\",\"sequence\"],\"maxDims\":{\"sequence\":16}}");
    CHECK_CONTAINS(info, "{\"name\":\"sentence_embedding\",\"dtype\":\"F32\",\"shape\":[\"batch\",32]}");
    mlrt__json_free(&in.doc);
    CHECK_INT(mlrt_model_kind(m), MLRT_KIND_ENCODER);
    CHECK_INT(mlrt_model_task(m), MLRT_TASK_EMBEDDING);
    CHECK_INT(mlrt_input_count(m), 3);
    CHECK_INT(mlrt_param_count(m), (40 + 16 + 2 + 2) * 32 + 2 * (4 * 32 * 32 + 2 * 32 * 64 + 9 * 32 + 64));
    float x[4], y[4];
    CHECK(mlrt_predict(m, x, y, &e) == MLRT_ERR_INVALID_ARGUMENT);
}

/* ------------------------------------------------------------------ .apr v2 */

/* tiny's tensors as an .apr v2 (sorted by name), quantized to APR_Q8 where q8 names a match. */
static bytes tiny_apr(const char *meta, bool q8_dense, bool q8_word) {
    bytes st = must_read(DIR "tiny/model.safetensors");
    mlrt__tensorset ts;
    mlrt_error e;
    CHECK(mlrt__read_safetensors(st.p, st.n, &ts, &e) == MLRT_OK);
    v2t *t = tmalloc(ts.count * sizeof *t);
    for (size_t i = 0; i < ts.count; i++) {
        const mlrt__tensor *s = &ts.tensors[i];
        const float *v = (const float *)(st.p + ts.data_begin + s->begin);
        bool q = s->rank == 2 && (strstr(s->name, "word_") ? q8_word : strstr(s->name, "encoder.") && q8_dense);
        t[i] = (v2t){keep(strdup(s->name)), q ? 129 : 0, (int)s->rank, {s->shape[0], s->shape[1]}, v, s->count * 4};
        if (q) {
            float amax = 0;
            for (size_t k = 0; k < s->count; k++) amax = fabsf(v[k]) > amax ? fabsf(v[k]) : amax;
            float scale = amax / 127.0f;
            uint8_t *b = tmalloc(4 + s->count);
            memcpy(b, &scale, 4);
            for (size_t k = 0; k < s->count; k++) b[4 + k] = (uint8_t)(int8_t)lrintf(v[k] / scale);
            t[i].data = b, t[i].nbytes = 4 + s->count;
        }
    }
    for (size_t i = 0; i < ts.count; i++) /* by name */
        for (size_t j = i + 1; j < ts.count; j++)
            if (strcmp(t[j].name, t[i].name) < 0) { v2t x = t[i]; t[i] = t[j]; t[j] = x; }
    bytes f = v2_file(meta, t, (int)ts.count);
    mlrt__tensorset_free(&ts);
    return f;
}

#define APR_META "{\"model_type\":\"Bert\",\"architecture\":\"bert\",\"hf_architecture\":\"BertModel\",\"hidden_size\":32," \
                 "\"num_layers\":2,\"num_heads\":4,\"num_kv_heads\":4,\"vocab_size\":40,\"intermediate_size\":64," \
                 "\"max_position_embeddings\":16,\"rms_norm_eps\":1e-12,\"param_count\":20000}"

static void test_apr(void) {
    tbatch b = get_batch("tiny", 0);
    folder d = {0};
    add(&d, "model.apr", tiny_apr(APR_META, false, false));
    mlrt_model *m = LOAD(&d); /* no modules.json: `apr embed`'s mean + normalize */
    if (!m) return;
    CHECK_CLOSE(RUN(m, &b), "tiny/f32/0/mean_norm", b.rows, 1e-5);
    CHECK_STR(mlrt_format_name(mlrt_model_format(m)), "apr");
    /* with sentence-transformers' files: their pooling, and the bits of the SafeTensors model */
    pooling_files(&d, "cls_norm", 32);
    folder s = tiny_folder(NULL, "cls_norm");
    mlrt_model *a = LOAD(&d), *ref = LOAD(&s);
    const float *ya = a ? RUN(a, &b) : NULL, *yr = ref ? RUN(ref, &b) : NULL;
    CHECK(ya && yr && memcmp(ya, yr, b.rows * 32 * 4) == 0);
    /* config.json too: it must agree with the metadata */
    add(&d, "config.json", must_read(DIR "tiny/config.json"));
    CHECK(LOAD(&d) != NULL);
    replace(&d, "model.apr", tiny_apr("{\"hidden_size\":32,\"num_layers\":3}", false, false));
    FAILS(&d, MLRT_ERR_BAD_DIMENSIONS, "apr: metadata: num_layers is 3 but config.json gives 2");
    /* no num_heads anywhere */
    folder n = {0};
    add(&n, "model.apr", tiny_apr("{\"model_type\":\"Bert\",\"hidden_size\":32}", false, false));
    FAILS(&n, MLRT_ERR_BAD_HEADER, "num_heads");
    replace(&n, "model.apr", tiny_apr("{\"architecture\":\"llama\",\"num_heads\":4}", false, false));
    FAILS(&n, MLRT_ERR_NOT_A_MODEL, "architecture 'llama'");
    replace(&n, "model.apr", tiny_apr("{\"num_heads\":4,\"hidden_size\":32}", false, false));
    FAILS(&n, MLRT_ERR_BAD_HEADER, "lacks the encoder's sizes");
}

static double cosine(const float *a, const float *b, size_t n) {
    double ab = 0, aa = 0, bb = 0;
    for (size_t i = 0; i < n; i++) ab += (double)a[i] * b[i], aa += (double)a[i] * a[i], bb += (double)b[i] * b[i];
    return ab / sqrt(aa * bb);
}

/* APR_Q8 dense weights (and word embeddings): close to f32 (cosine >= 0.999 on these rows), the same
 * bits alone and in a batch; info says q8 and counts fewer bytes. */
static void test_apr_q8(void) {
    tbatch b = get_batch("tiny", 1);
    folder f = {0}, q = {0}, qw = {0};
    add(&f, "model.apr", tiny_apr(APR_META, false, false));
    add(&q, "model.apr", tiny_apr(APR_META, true, false));
    add(&qw, "model.apr", tiny_apr(APR_META, true, true));
    mlrt_model *mf = LOAD(&f), *mq = LOAD(&q), *mw = LOAD(&qw);
    if (!mf || !mq || !mw) return;
    float *yf = tmalloc(b.rows * 32 * 4);
    memcpy(yf, RUN(mf, &b), b.rows * 32 * 4);
    const float *yq = RUN(mq, &b);
    for (size_t r = 0; yq && r < b.rows; r++) CHECK_MSG(cosine(yf + r * 32, yq + r * 32, 32) >= 0.999, "row %zu: %.6f", r, cosine(yf + r * 32, yq + r * 32, 32));
    const float *yw = RUN(mw, &b);
    for (size_t r = 0; yw && r < b.rows; r++) CHECK(cosine(yf + r * 32, yw + r * 32, 32) >= 0.999);
    CHECK_CONTAINS(mlrt_model_info_json(mq), "\"dtype\":\"q8\"");
    inspected a = {0}, c = {0};
    const char *ia = mlrt_model_info_json(mf), *ic = mlrt_model_info_json(mw);
    mlrt_error e;
    CHECK(!mlrt__json_parse((const uint8_t *)ia, strlen(ia), "i", &a.doc, &e) && !mlrt__json_parse((const uint8_t *)ic, strlen(ic), "i", &c.doc, &e));
    CHECK(jint(c.doc.root, "weightBytes") * 2 < jint(a.doc.root, "weightBytes"));
    mlrt__json_free(&a.doc), mlrt__json_free(&c.doc);
    /* batch invariance holds for Q8 too (each row's activations are quantized on their own) */
    float *all = tmalloc(b.rows * 32 * 4);
    memcpy(all, RUN(mw, &b), b.rows * 32 * 4);
    tbatch one = {1, b.width, b.ids + b.width * 3, b.mask + b.width * 3, b.types + b.width * 3};
    const float *z = RUN(mw, &one);
    CHECK(z && memcmp(z, all + 3 * 32, 32 * 4) == 0);
}

/* ------------------------------------------------------------------ malformed folders */

static void config_fails(const char *edit_from, const char *edit_to, mlrt_status code, const char *needle) {
    folder d = tiny_folder(NULL, NULL);
    bytes c = must_read(DIR "tiny/config.json");
    char *s = tmalloc(c.n + 256), *at = NULL;
    memcpy(s, c.p, c.n);
    at = strstr(s, edit_from);
    CHECK_MSG(at != NULL, "config.json has no %s", edit_from);
    if (!at) return;
    bytes o = {0};
    put(&o, s, (size_t)(at - s));
    put_str(&o, edit_to);
    put_str(&o, at + strlen(edit_from));
    replace(&d, "config.json", done(o));
    fails_at(__FILE__, __LINE__, &d, code, needle);
}

static void test_bad_config(void) {
    config_fails("\"hidden_size\": 32", "\"hidden_size\": \"32\"", MLRT_ERR_BAD_HEADER, "hidden_size: expected a non-negative integer");
    config_fails("\"hidden_size\": 32", "\"hidden_size\": 32.0", MLRT_ERR_BAD_HEADER, "hidden_size");
    config_fails("\"num_hidden_layers\": 2", "\"num_hidden_layers\": 0", MLRT_ERR_BAD_DIMENSIONS, "num_hidden_layers is 0");
    config_fails("\"num_attention_heads\": 4", "\"num_attention_heads\": 5", MLRT_ERR_BAD_DIMENSIONS, "not a multiple of num_attention_heads 5");
    config_fails("\"layer_norm_eps\": 1e-12", "\"layer_norm_eps\": \"tiny\"", MLRT_ERR_BAD_HEADER, "layer_norm_eps");
    config_fails("\"layer_norm_eps\": 1e-12", "\"layer_norm_eps\": 0", MLRT_ERR_BAD_HEADER, "layer_norm_eps");
    config_fails("\"hidden_act\": \"gelu\"", "\"hidden_act\": \"gelu_new\"", MLRT_ERR_UNSUPPORTED, "hidden_act 'gelu_new'");
    config_fails("\"hidden_act\": \"gelu\"", "\"hidden_act\": 1", MLRT_ERR_BAD_HEADER, "hidden_act: expected a string");
    config_fails("\"position_embedding_type\": \"absolute\"", "\"position_embedding_type\": \"relative_key\"", MLRT_ERR_UNSUPPORTED,
                 "position_embedding_type 'relative_key'");
    config_fails("\"use_cache\": true", "\"is_decoder\": true", MLRT_ERR_UNSUPPORTED, "is_decoder is true");
    config_fails("\"use_cache\": true", "\"add_cross_attention\": true", MLRT_ERR_UNSUPPORTED, "add_cross_attention");
    config_fails("\"use_cache\": true", "\"is_decoder\": 0", MLRT_ERR_BAD_HEADER, "is_decoder: expected true or false");
    config_fails("\"model_type\": \"bert\"", "\"model_type\": \"roberta\"", MLRT_ERR_UNSUPPORTED, "model_type 'roberta'");
    config_fails("\"model_type\": \"bert\"", "\"type\": \"bert\"", MLRT_ERR_BAD_HEADER, "model_type is missing");
    config_fails("\"BertModel\"", "\"RobertaModel\"", MLRT_ERR_UNSUPPORTED, "'RobertaModel' is not a model of model_type 'bert' (Bert...)");
    config_fails("[\n    \"BertModel\"\n  ]", "\"BertModel\"", MLRT_ERR_BAD_HEADER, "architectures: expected an array");
    config_fails("{", "[", MLRT_ERR_INVALID_JSON, "config.json");
    /* shapes that disagree with the config, tensors the config implies that are missing */
    config_fails("\"hidden_size\": 32", "\"hidden_size\": 48", MLRT_ERR_BAD_DIMENSIONS, "'embeddings.word_embeddings.weight' has 2 dimensions [40, 32...]; the config gives [40, 48]");
    config_fails("\"intermediate_size\": 64", "\"intermediate_size\": 65", MLRT_ERR_BAD_DIMENSIONS, "encoder.layer.0.intermediate.dense.weight");
    config_fails("\"vocab_size\": 40", "\"vocab_size\": 41", MLRT_ERR_BAD_DIMENSIONS, "word_embeddings");
    config_fails("\"type_vocab_size\": 2", "\"type_vocab_size\": 3", MLRT_ERR_BAD_DIMENSIONS, "token_type_embeddings");
    config_fails("\"max_position_embeddings\": 16", "\"max_position_embeddings\": 512", MLRT_ERR_BAD_DIMENSIONS, "position_embeddings");
    config_fails("\"num_hidden_layers\": 2", "\"num_hidden_layers\": 3", MLRT_ERR_NOT_A_MODEL, "tensor 'encoder.layer.2.attention.self.query.weight' is missing");
    /* BertConfig's defaults for what is missing: 768 wide, which the tensors contradict */
    config_fails("\"hidden_size\": 32,", "", MLRT_ERR_BAD_DIMENSIONS, "[40, 768]");
}

/* tiny's SafeTensors with one tensor dropped or one value replaced. */
static bytes tiny_edited(const char *weights, const char *drop_name, const char *bad_name, size_t at, float v) {
    bytes st = must_read(weights);
    mlrt__tensorset ts;
    mlrt_error e;
    CHECK(mlrt__read_safetensors(st.p, st.n, &ts, &e) == MLRT_OK);
    tspec *t = tmalloc(ts.count * sizeof *t);
    int n = 0;
    for (size_t i = 0; i < ts.count; i++) {
        const mlrt__tensor *s = &ts.tensors[i];
        if (drop_name && !strcmp(s->name, drop_name)) continue;
        uint8_t *data = tmalloc(s->end - s->begin + 1);
        memcpy(data, st.p + ts.data_begin + s->begin, s->end - s->begin);
        if (bad_name && !strcmp(s->name, bad_name)) {
            if (s->dtype == MLRT_F32) memcpy(data + 4 * at, &v, 4);
            else if (s->dtype == MLRT_F16) data[2 * at] = 0x00, data[2 * at + 1] = 0x7c; /* +inf */
            else data[2 * at] = 0x80, data[2 * at + 1] = 0x7f;                          /* bf16 +inf */
        }
        t[n++] = (tspec){keep(strdup(s->name)), mlrt_dtype_name(s->dtype), (int)s->rank, {s->shape[0], s->shape[1]}, data, s->end - s->begin};
    }
    bytes f = st_build(NULL, t, n);
    mlrt__tensorset_free(&ts);
    return f;
}

static void test_bad_tensors(void) {
    folder d = tiny_folder(NULL, NULL);
    static const char *const names[] = {"embeddings.LayerNorm.bias", "encoder.layer.1.output.dense.bias",
                                        "encoder.layer.0.attention.self.key.weight", "embeddings.token_type_embeddings.weight"};
    for (size_t i = 0; i < LEN(names); i++) {
        replace(&d, "model.safetensors", tiny_edited(DIR "tiny/model.safetensors", names[i], NULL, 0, 0));
        char want[128];
        snprintf(want, sizeof want, "tensor '%s' is missing", names[i]);
        FAILS(&d, MLRT_ERR_NOT_A_MODEL, want);
    }
    static const struct { const char *w, *name; size_t at; const char *where; } bad[] = { /* where: as the message gives it */
        {DIR "tiny/model.safetensors", "encoder.layer.1.intermediate.dense.weight", 77, "[out 2][in 13]"},
        {DIR "tiny/model.safetensors", "encoder.layer.0.attention.self.value.bias", 3, "[3]"},
        {DIR "tiny/model.safetensors", "embeddings.word_embeddings.weight", 1000, "[1000]"},
        {DIR "tiny/model.safetensors", "embeddings.word_embeddings.weight", 0, "[0]"},
        {DIR "tiny/model.safetensors", "encoder.layer.1.output.LayerNorm.weight", 31, "[31]"},
        {DIR "tiny/model.safetensors", "embeddings.position_embeddings.weight", 5, "[5]"},
        {DIR "tiny/model.f16.safetensors", "embeddings.word_embeddings.weight", 17, "[17]"},
        {DIR "tiny/model.bf16.safetensors", "embeddings.word_embeddings.weight", 17, "[17]"},
        {DIR "tiny/model.f16.safetensors", "encoder.layer.0.output.dense.weight", 17, "[out 0][in 17]"}};
    for (size_t i = 0; i < LEN(bad); i++) {
        replace(&d, "model.safetensors", tiny_edited(bad[i].w, NULL, bad[i].name, bad[i].at, i & 1 ? INFINITY : NAN));
        char want[160];
        snprintf(want, sizeof want, "'%s' %s is not finite", bad[i].name, bad[i].where);
        FAILS(&d, MLRT_ERR_NON_FINITE, want);
    }
    /* a weights file that is cut short, or not BERT */
    bytes st = must_read(DIR "tiny/model.safetensors");
    replace(&d, "model.safetensors", prefix(st, st.n - 7));
    FAILS(&d, MLRT_ERR_TRUNCATED, "cut short");
    replace(&d, "model.safetensors", tiny_edited(DIR "tiny/model.safetensors", "embeddings.word_embeddings.weight", NULL, 0, 0));
    FAILS(&d, MLRT_ERR_NOT_A_MODEL, "holds no BERT-family encoder");
    replace(&d, "model.safetensors", st);
    drop(&d, "config.json");
    FAILS(&d, MLRT_ERR_INVALID_ARGUMENT, "config.json is missing");
    drop(&d, "model.safetensors");
    add(&d, "pytorch_model.bin", st);
    FAILS(&d, MLRT_ERR_UNSUPPORTED, "pytorch_model.bin");
}

static void pooling_fails(const char *modules, const char *pooling, mlrt_status code, const char *needle) {
    folder d = tiny_folder(NULL, NULL);
    if (modules) add_str(&d, "modules.json", modules);
    if (pooling) add_str(&d, "1_Pooling/config.json", pooling);
    fails_at(__FILE__, __LINE__, &d, code, needle);
}

#define TR "{\"idx\":0,\"name\":\"0\",\"path\":\"\",\"type\":\"sentence_transformers.models.Transformer\"}"
#define PO "{\"idx\":1,\"name\":\"1\",\"path\":\"1_Pooling\",\"type\":\"sentence_transformers.models.Pooling\"}"
#define NO "{\"idx\":2,\"name\":\"2\",\"path\":\"2_Normalize\",\"type\":\"sentence_transformers.models.Normalize\"}"

static void test_bad_pooling(void) {
    const char *mean = "{\"word_embedding_dimension\":32,\"pooling_mode_mean_tokens\":true}";
    pooling_fails("[" TR "," PO "]", "{\"word_embedding_dimension\":32,\"pooling_mode_mean_tokens\":1}", MLRT_ERR_BAD_HEADER, "pooling_mode_mean_tokens: expected true or false");
    pooling_fails("[" TR "," PO "]", "{\"word_embedding_dimension\":32,\"pooling_mode_avg\":true}", MLRT_ERR_BAD_HEADER, "unknown key 'pooling_mode_avg'");
    pooling_fails("[" TR "," PO "]", "{\"word_embedding_dimension\":33}", MLRT_ERR_BAD_DIMENSIONS, "word_embedding_dimension is 33");
    pooling_fails("[" TR "," PO "]", "{\"pooling_mode_mean_tokens\":false}", MLRT_ERR_BAD_HEADER, "no pooling mode");
    pooling_fails("[" TR "," PO "]", "{\"pooling_mode\":\"first\"}", MLRT_ERR_BAD_HEADER, "pooling_mode 'first': expected cls, lasttoken,");
    pooling_fails("[" TR "," PO "]", "{\"pooling_mode\":1}", MLRT_ERR_BAD_HEADER, "pooling_mode: expected a string");
    /* the constructor's pooling_mode names one mode (any case), over the flags; null leaves them */
    static const char *const by_name[][2] = {{"{\"pooling_mode\":\"CLS\",\"pooling_mode_mean_tokens\":true}", "\"pooling\":\"cls\""},
                                             {"{\"pooling_mode\":\"Mean_Sqrt_Len_Tokens\"}", "\"pooling\":\"mean_sqrt_len\""},
                                             {"{\"pooling_mode\":null,\"pooling_mode_max_tokens\":true}", "\"pooling\":\"max+mean\""}};
    for (size_t i = 0; i < LEN(by_name); i++) {
        folder d = tiny_folder(NULL, NULL);
        add_str(&d, "modules.json", "[" TR "," PO "]");
        add_str(&d, "1_Pooling/config.json", by_name[i][0]);
        mlrt_model *m = LOAD(&d);
        if (m) CHECK_CONTAINS(mlrt_model_info_json(m), by_name[i][1]);
    }
    pooling_fails("[" TR "," PO "]", "[]", MLRT_ERR_BAD_HEADER, "1_Pooling/config.json: expected a JSON object");
    pooling_fails("[" TR "," PO "]", NULL, MLRT_ERR_INVALID_ARGUMENT, "no 1_Pooling/config.json");
    pooling_fails("[" TR "," PO ",{\"idx\":2,\"name\":\"2\",\"path\":\"2_CNN\",\"type\":\"sentence_transformers.models.CNN\"}]", mean,
                  MLRT_ERR_UNSUPPORTED, "type 'sentence_transformers.models.CNN' is not supported (Transformer, Pooling, Dense, Normalize)");
    pooling_fails("[" TR "," PO ",{\"idx\":2,\"name\":\"2\",\"path\":\"2_Dense\",\"type\":\"sentence_transformers.models.Dense\"}]", mean,
                  MLRT_ERR_INVALID_ARGUMENT, "names a Dense module in '2_Dense/' but no 2_Dense/config.json was given");
    pooling_fails("[" PO "," TR "]", mean, MLRT_ERR_UNSUPPORTED, "in that order");
    pooling_fails("[" TR "," NO "]", mean, MLRT_ERR_UNSUPPORTED, "in that order");
    pooling_fails("[" TR "]", mean, MLRT_ERR_UNSUPPORTED, "no Pooling module");
    pooling_fails("{}", mean, MLRT_ERR_BAD_HEADER, "modules.json: expected a non-empty array");
    pooling_fails("[" TR ",{\"idx\":1,\"path\":7,\"type\":\"sentence_transformers.models.Pooling\"}]", mean, MLRT_ERR_BAD_HEADER, "path: expected a string");
    pooling_fails("[" TR ",{\"idx\":1,\"path\":\"../x\",\"type\":\"sentence_transformers.models.Pooling\"}]", mean, MLRT_ERR_BAD_HEADER, "not a folder");
    /* 1_Pooling/config.json without modules.json: used */
    folder d = tiny_folder(NULL, NULL);
    add_str(&d, "1_Pooling/config.json", "{\"word_embedding_dimension\":32,\"pooling_mode_cls_token\":true,\"pooling_mode_mean_tokens\":false}");
    mlrt_model *m = LOAD(&d);
    tbatch b = get_batch("tiny", 0);
    add_str(&d, "modules.json", "[" TR "," PO "]");
    mlrt_model *with = LOAD(&d);
    float *y = tmalloc(b.rows * 32 * 4);
    if (m && with) {
        memcpy(y, RUN(m, &b), b.rows * 32 * 4);
        CHECK(memcmp(RUN(with, &b), y, b.rows * 32 * 4) == 0);
        CHECK_CONTAINS(mlrt_model_info_json(m), "\"pooling\":\"cls\",\"normalize\":false");
    }
    /* lengths */
    folder l = tiny_folder(NULL, NULL);
    add_str(&l, "sentence_bert_config.json", "{\"max_seq_length\":17}");
    FAILS(&l, MLRT_ERR_BAD_DIMENSIONS, "max_seq_length");
    replace_str(&l, "sentence_bert_config.json", "{\"max_seq_length\":8,\"do_lower_case\":\"yes\"}");
    FAILS(&l, MLRT_ERR_BAD_HEADER, "do_lower_case");
    /* a tokenizer with more ids than the model's vocabulary */
    folder t = tiny_folder(NULL, NULL);
    bytes v = {0};
    for (int i = 0; i < 41; i++) put_fmt(&v, i < 5 ? (const char *[]){"[PAD]\n", "[UNK]\n", "[CLS]\n", "[SEP]\n", "[MASK]\n"}[i] : "w%d\n", i);
    add(&t, "vocab.txt", done(v));
    FAILS(&t, MLRT_ERR_BAD_DIMENSIONS, "41 token ids but the model's vocab_size is 40");
}

/* A Transformer module in a subfolder (older sentence-transformers): refused, naming the path. */
static void test_subfolder(void) {
    /* a Transformer module in a folder of its own (older sentence-transformers): its config, weights,
     * tokenizer and sentence_bert_config.json are there; the pooling and modules.json at the top */
    folder top = tiny_folder(NULL, NULL), d = {0};
    add_str(&top, "tokenizer.json", TOKENIZER);
    add_str(&top, "sentence_bert_config.json", "{\"max_seq_length\":5}");
    static char sub[8][64];
    for (size_t i = 0; i < top.n; i++) {
        snprintf(sub[i], sizeof sub[i], "0_Transformer/%s", top.f[i].name);
        add(&d, sub[i], (bytes){(uint8_t *)top.f[i].bytes, top.f[i].len, top.f[i].len});
    }
    add_str(&top, "modules.json", "[{\"idx\":0,\"name\":\"0\",\"path\":\"\",\"type\":\"sentence_transformers.models.Transformer\"}," PO "]");
    add_str(&d, "modules.json", "[{\"idx\":0,\"name\":\"0\",\"path\":\"0_Transformer\",\"type\":\"sentence_transformers.models.Transformer\"}," PO "]");
    add_str(&top, "1_Pooling/config.json", "{\"word_embedding_dimension\":32,\"pooling_mode_mean_tokens\":false,\"pooling_mode_max_tokens\":true}");
    add_str(&d, "1_Pooling/config.json", "{\"word_embedding_dimension\":32,\"pooling_mode_mean_tokens\":false,\"pooling_mode_max_tokens\":true}");
    add_str(&d, "config.json", "{\"model_type\":\"gpt2\"}");      /* not the Transformer's: ignored */
    add_str(&d, "tokenizer.json", "not the Transformer's either");
    mlrt_model *a = LOAD(&top), *b = LOAD(&d);
    if (a && b) {
        CHECK_CONTAINS(mlrt_model_info_json(b), "\"pooling\":\"max\"");
        CHECK_CONTAINS(mlrt_model_info_json(b), "\"maxLength\":5");
        CHECK(mlrt_model_tokenizer(b) != NULL);
        const char *texts = "the cat sat on the mat";
        size_t end = strlen(texts);
        float va[32], vb[32];
        mlrt_error e;
        CHECK(mlrt_embed(a, texts, &end, 1, va, &e) == MLRT_OK && mlrt_embed(b, texts, &end, 1, vb, &e) == MLRT_OK);
        CHECK(memcmp(va, vb, sizeof va) == 0);
    }
    drop(&d, "0_Transformer/config.json");
    FAILS(&d, MLRT_ERR_INVALID_ARGUMENT, "config.json is missing");
    replace_str(&d, "modules.json", "[{\"idx\":0,\"name\":\"0\",\"path\":\"\",\"type\":\"sentence_transformers.models.Transformer\"},"
                "{\"idx\":1,\"name\":\"1\",\"path\":\"\",\"type\":\"sentence_transformers.models.Pooling\"}]");
    FAILS(&d, MLRT_ERR_BAD_HEADER, "module 1 (Pooling): the path is empty");
    /* the whole folder under a name: which file, and how to name them */
    folder e = tiny_folder(NULL, NULL);
    static char names[12][64];
    for (size_t i = 0; i < e.n; i++) {
        snprintf(names[i], sizeof names[i], "minilm/%s", e.f[i].name);
        e.f[i].name = names[i];
    }
    FAILS(&e, MLRT_ERR_INVALID_ARGUMENT, "'minilm/model.safetensors' is in a subfolder");
}

/* ------------------------------------------------------------------ calls */

static void run_fails_at(const char *file, int line, mlrt_model *m, const mlrt_tensor *in, size_t n, const char *needle) {
    mlrt_error e = {0};
    mlrt_status st = mlrt_run(m, in, n, &e);
    check_at(st == MLRT_ERR_INVALID_ARGUMENT && strstr(e.message, needle), file, line, "run: expected INVALID_ARGUMENT with \"%s\", got %s: %s",
             needle, mlrt_status_name(st), e.message);
}
#define RUN_FAILS(m, in, n, needle) run_fails_at(__FILE__, __LINE__, (m), (in), (n), (needle))

static void test_bad_inputs(void) {
    folder d = tiny_folder(NULL, "cls_norm");
    mlrt_model *m = LOAD(&d);
    if (!m) return;
    int64_t ids[2 * 17] = {2, 5, 6, 3, 2, 7, 3, 0}, mask[2 * 17] = {1, 1, 1, 1, 1, 1, 1, 0}, types[8] = {0};
    float f[8] = {0};
    int32_t mask2[8] = {1, 1, 1, 2, 1, 1, 1, 1};
    mlrt_tensor in[3] = {{"input_ids", MLRT_I64, 2, {2, 4}, ids}, {"attention_mask", MLRT_I64, 2, {2, 4}, mask},
                         {"token_type_ids", MLRT_I64, 2, {2, 4}, types}};
    mlrt_error e;
    CHECK(mlrt_run(m, in, 3, &e) == MLRT_OK);
    mlrt_tensor x[3];
    memcpy(x, in, sizeof x), x[0].dims[1] = 17;
    mlrt_tensor big[1] = {{"input_ids", MLRT_I64, 2, {1, 17}, ids}};
    RUN_FAILS(m, big, 1, "it must be 1..16");
    memcpy(x, in, sizeof x), x[0].dtype = MLRT_F32, x[0].data = f;
    RUN_FAILS(m, x, 3, "input 'input_ids' is F32");
    memcpy(x, in, sizeof x), x[0].rank = 1;
    RUN_FAILS(m, x, 3, "rank 1");
    memcpy(x, in, sizeof x), x[1].dims[1] = 3;
    RUN_FAILS(m, x, 3, "sequence 3, another input 4");
    memcpy(x, in, sizeof x), x[1].dtype = MLRT_I32, x[1].data = mask2;
    RUN_FAILS(m, x, 3, "element 3 is 2");
    memcpy(x, in, sizeof x), x[0].name = "ids";
    RUN_FAILS(m, x, 3, "no input 'ids'");
    RUN_FAILS(m, in + 1, 2, "input 'input_ids' is missing");
    RUN_FAILS(m, in, 0, "0 inputs given; the model takes 1 to 3");
    ids[5] = 40;
    RUN_FAILS(m, in, 3, "input_ids[1][1] is 40, not in 0..39");
    ids[5] = -1;
    RUN_FAILS(m, in, 3, "input_ids[1][1] is -1");
    ids[5] = 7, types[2] = 2;
    RUN_FAILS(m, in, 3, "token_type_ids[0][2] is 2, not in 0..1");
    types[2] = 0, mask[4] = 0;
    RUN_FAILS(m, in, 3, "attention_mask[1][0] is 0 but the model pools the first token");
    for (int k = 4; k < 8; k++) mask[k] = 0;
    RUN_FAILS(m, in, 3, "attention_mask[1][0]");
    folder dm = tiny_folder(NULL, "mean");
    mlrt_model *mm = LOAD(&dm);
    if (mm) RUN_FAILS(mm, in, 3, "row 1 has no token with attention_mask 1");
    /* a mask with holes: left padding is fine for mean pooling (positions stay 0..T-1 as in BertModel) */
    mask[4] = 0, mask[5] = 1, mask[6] = 1, mask[7] = 1;
    if (mm) CHECK(mlrt_run(mm, in, 3, &e) == MLRT_OK);
}

/* mlrt_load_from_bytes and inspect point to mlrt_load_files; one file that is no encoder loads as before. */
static void test_load_from_bytes(void) {
    bytes st = must_read(DIR "tiny/model.safetensors");
    mlrt_error e;
    CHECK(mlrt_load_from_bytes(st.p, st.n, &e) == NULL);
    CHECK_INT(e.code, MLRT_ERR_NOT_A_MODEL);
    CHECK_CONTAINS(e.message, "mlrt_load_files");
    CHECK_CONTAINS(e.message, "loadEncoder");
    bytes apr = tiny_apr(APR_META, true, false);
    CHECK(mlrt_load_from_bytes(apr.p, apr.n, &e) == NULL);
    CHECK_CONTAINS(e.message, "loadEncoder");
    char *js = mlrt_inspect(st.p, st.n, &e);
    CHECK(js && strstr(js, "\"notAModel\"") && strstr(js, "loadEncoder"));
    mlrt_string_free(js);
    ref_mlp r;
    mlrt_model *small = small_model(&r);
    CHECK(small != NULL);
    static const char *const mlp_names[] = {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"};
    tspec t[4];
    int nt = ref_tensors(&r, mlp_names, "F32", 0, t);
    bytes mlp = st_build(NULL, t, nt);
    mlrt_file one = {"model.safetensors", mlp.p, mlp.n};
    mlrt_model *m = keep_model(mlrt_load_files(&one, 1, NULL, &e));
    CHECK(m && mlrt_model_kind(m) == MLRT_KIND_MLP);
    one.name = "model.onnx";
    m = keep_model(mlrt_load_files(&one, 1, NULL, &e));
    CHECK(m && mlrt_model_kind(m) == MLRT_KIND_MLP);
    mlrt_file two[2] = {{"model.safetensors", mlp.p, mlp.n}, {"config.json", (const uint8_t *)"{}", 2}};
    CHECK(mlrt_load_files(two, 2, NULL, &e) == NULL && e.code == MLRT_ERR_NOT_A_MODEL);
    mlrt_file dup[2] = {{"config.json", (const uint8_t *)"{}", 2}, {"config.json", (const uint8_t *)"{}", 2}};
    CHECK(mlrt_load_files(dup, 2, NULL, &e) == NULL && strstr(e.message, "given twice"));
    CHECK(mlrt_load_files(NULL, 0, NULL, &e) == NULL && e.code == MLRT_ERR_INVALID_ARGUMENT);
}

const test_case encoder_tests[] = {
    T(test_golden_f32), T(test_warm_up), T(test_golden_f16), T(test_golden_bf16), T(test_golden_prefixed_odd), T(test_batch_invariance),
    T(test_native_bits), T(test_one_token_pooling),
    T(test_embed), T(test_info), T(test_apr), T(test_apr_q8), T(test_bad_config), T(test_bad_tensors),
    T(test_bad_pooling), T(test_subfolder), T(test_bad_inputs), T(test_load_from_bytes), {0},
};
