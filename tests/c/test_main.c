/* test_main.c — unit tests of the mlrt C core (built with ASan + UBSan: make build/test_c).
 *
 * Each test builds its inputs in C with the builders of harness.h, so a malformed case is one
 * line, and checks the exact status AND that the message names the culprit. The last line of
 * output is "N passed, N failed"; the exit status is 1 when any test failed. */
#include "harness.h"

#define F32_BYTES(...) ((const float[]){__VA_ARGS__}), sizeof((const float[]){__VA_ARGS__})
#define LEN(a) (sizeof(a) / sizeof((a)[0]))

static const float ONE_F32[1] = {1.0f};
static const float ZEROS8[2] = {0.0f, 0.0f};
static const float FOUR_F32[4] = {1, 2, 3, 4};

/* ================================================================ names & API */

static void test_status_names(void) {
    static const char *const want[] = {
        "OK", "INVALID_ARGUMENT", "UNKNOWN_FORMAT", "TRUNCATED", "SIZE_MISMATCH", "BAD_DIMENSIONS",
        "SHAPE_OVERFLOW", "BAD_OFFSETS", "UNKNOWN_DTYPE", "INVALID_UTF8", "INVALID_JSON", "DUPLICATE_KEY",
        "HEADER_TOO_LARGE", "BAD_HEADER", "NOT_A_MODEL", "UNSUPPORTED", "OUT_OF_MEMORY", "NON_FINITE",
        "CHECKSUM_MISMATCH", "UNSUPPORTED_VERSION", "UNSUPPORTED_MODEL_TYPE", "MODEL_TYPE_MISMATCH", "ENCRYPTED",
        "INVALID_MSGPACK", "BAD_PAYLOAD"};
    CHECK_INT(LEN(want), MLRT_STATUS_COUNT_);
    for (int i = 0; i < MLRT_STATUS_COUNT_; i++) CHECK_STR(mlrt_status_name((mlrt_status)i), want[i]);
    CHECK_STR(mlrt_status_name(MLRT_ERR_BAD_OFFSETS), "BAD_OFFSETS");
    CHECK_STR(mlrt_status_name(MLRT_ERR_NON_FINITE), "NON_FINITE");
    CHECK_STR(mlrt_status_name(MLRT_STATUS_COUNT_), "UNKNOWN_STATUS");
    CHECK_STR(mlrt_status_name((mlrt_status)-1), "UNKNOWN_STATUS");
}

static void test_dtype_format_kind_activation_names(void) {
    static const char *const names[] = {"BOOL", "U8",  "I8",  "F8_E5M2", "F8_E4M3", "I16",    "U16",    "F16",  "BF16", "I32",
                                        "U32",  "F32", "F64", "I64",     "U64",     "APR_Q4", "APR_Q8", "Q4_K", "Q6_K",
                                        "F4", "F6_E2M3", "F6_E3M2", "F8_E8M0", "C64"};
    static const size_t sizes[] = {1, 1, 1, 1, 1, 2, 2, 2, 2, 4, 4, 4, 8, 8, 8, 0, 0, 0, 0, 0, 0, 0, 1, 8};
    CHECK_INT(LEN(names), MLRT_DTYPE_COUNT_);
    for (int i = 0; i < MLRT_DTYPE_COUNT_; i++) CHECK_STR(mlrt_dtype_name((mlrt_dtype)i), names[i]);
    for (int i = 0; i < MLRT_DTYPE_COUNT_; i++) CHECK_INT(mlrt_dtype_size((mlrt_dtype)i), sizes[i]);
    CHECK_STR(mlrt_dtype_name(MLRT_DTYPE_COUNT_), "?");
    CHECK_INT(mlrt_dtype_size(MLRT_DTYPE_COUNT_), 0);
    CHECK_INT(mlrt_dtype_size((mlrt_dtype)-1), 0);
    CHECK_STR(mlrt_format_name(MLRT_FORMAT_BIN), "bin");
    CHECK_STR(mlrt_format_name(MLRT_FORMAT_SAFETENSORS), "safetensors");
    CHECK_STR(mlrt_format_name(MLRT_FORMAT_BINTENSORS), "bintensors");
    CHECK_STR(mlrt_format_name(MLRT_FORMAT_APR), "apr");
    CHECK_STR(mlrt_format_name((mlrt_format)0), "unknown");
    CHECK_STR(mlrt_kind_name(MLRT_KIND_MLP), "mlp");
    CHECK_STR(mlrt_kind_name(MLRT_KIND_LINEAR_REGRESSION), "linear_regression");
    CHECK_STR(mlrt_kind_name(MLRT_KIND_LOGISTIC_REGRESSION), "logistic_regression");
    CHECK_STR(mlrt_kind_name(MLRT_KIND_RANDOM_FOREST), "random_forest");
    CHECK_STR(mlrt_kind_name((mlrt_kind)9), "unknown");
    CHECK_STR(mlrt_task_name(MLRT_TASK_CLUSTERING), "clustering");
    CHECK_STR(mlrt_task_name((mlrt_task)0), "unknown");
    static const char *const acts[] = {"identity", "relu", "sigmoid", "tanh", "softmax", "gelu", "leaky_relu", "silu"};
    for (int i = 0; i < MLRT_ACT_COUNT_; i++) CHECK_STR(mlrt_activation_name((mlrt_activation)i), acts[i]);
    CHECK_STR(mlrt_activation_name(MLRT_ACT_COUNT_), "?");
}

/* A small valid model for the API tests: 3 -> 4 -> 2 in SafeTensors. */
static mlrt_model *small_model(ref_mlp *r) {
    static const int dims[] = {3, 4, 2};
    ref_make(r, 2, dims, 7);
    static const char *const names[] = {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"};
    tspec t[4];
    int n = ref_tensors(r, names, "F32", 0, t);
    return LOAD_OK(st_build(NULL, t, n));
}

static void test_api_misuse(void) {
    mlrt_error e;
    static const uint8_t some[16] = {0};
    CHECK(mlrt_load_from_bytes(NULL, 10, &e) == NULL);
    CHECK_INT(e.code, MLRT_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "NULL");
    CHECK(mlrt_load_from_bytes(NULL, 0, &e) == NULL);
    CHECK_INT(e.code, MLRT_ERR_TRUNCATED);
    CHECK_CONTAINS(e.message, "empty");
    CHECK(mlrt_load_from_bytes(some, 0, &e) == NULL);
    CHECK_INT(e.code, MLRT_ERR_TRUNCATED);
    CHECK(mlrt_load_from_bytes(some, sizeof some, NULL) == NULL); /* err may be NULL */
    CHECK(mlrt_inspect(NULL, 5, &e) == NULL);
    CHECK_INT(e.code, MLRT_ERR_INVALID_ARGUMENT);
    CHECK(mlrt_inspect(some, 0, &e) == NULL);
    CHECK_INT(e.code, MLRT_ERR_TRUNCATED);
    CHECK(mlrt_inspect(some, sizeof some, NULL) == NULL);
    mlrt_free(NULL);
    mlrt_string_free(NULL);

    ref_mlp r;
    mlrt_model *m = small_model(&r);
    if (!m) return;
    float in[6] = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f}, out[4] = {0};
    CHECK_INT(mlrt_predict_batch(m, in, 0, out, &e), MLRT_ERR_INVALID_ARGUMENT);
    CHECK_INT(e.code, MLRT_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "batch size is 0");
    CHECK_INT(mlrt_predict_batch(m, NULL, 1, out, &e), MLRT_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "NULL");
    CHECK_INT(mlrt_predict_batch(m, in, 1, NULL, &e), MLRT_ERR_INVALID_ARGUMENT);
    CHECK_INT(mlrt_predict_batch(NULL, in, 1, out, &e), MLRT_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "no model");
    CHECK_INT(mlrt_predict(NULL, in, out, NULL), MLRT_ERR_INVALID_ARGUMENT); /* err may be NULL */

    in[5] = NAN; /* row 1, input 2 */
    CHECK_INT(mlrt_predict_batch(m, in, 2, out, &e), MLRT_ERR_NON_FINITE);
    CHECK_CONTAINS(e.message, "input 2 of row 1");
    in[5] = 0.6f;
    in[0] = -INFINITY;
    CHECK_INT(mlrt_predict(m, in, out, &e), MLRT_ERR_NON_FINITE);
    CHECK_CONTAINS(e.message, "input 0 of row 0");
    in[0] = INFINITY;
    CHECK_INT(mlrt_predict(m, in, out, &e), MLRT_ERR_NON_FINITE);
    in[0] = 0.1f;
    CHECK_INT(mlrt_predict_batch(m, in, 2, out, &e), MLRT_OK);
    CHECK_NEAR(out[0] + out[1], 1.0, 1e-6); /* softmax */
    CHECK_INT(mlrt_layer(m, 99).outputs, 0);
}

/* ======================================================================= .bin */

static void test_bin_f32_f64_predictions(void) {
    for (int f64 = 0; f64 <= 1; f64++) {
        for (uint32_t seed = 1; seed <= 6; seed++) {
            rng_seed(seed * 977u);
            int dims[3] = {rng_int(1, 20), rng_int(1, 24), rng_int(2, 12)};
            ref_mlp r;
            ref_make(&r, 2, dims, seed);
            bytes f = bin_from_ref(&r, f64);
            CHECK_INT(f.n, 12 + (size_t)(dims[0] * dims[1] + dims[1] + dims[1] * dims[2] + dims[2]) * (f64 ? 8 : 4));
            mlrt_model *m = LOAD_OK(f);
            if (!m) continue;
            CHECK_INT(mlrt_model_format(m), MLRT_FORMAT_BIN);
            CHECK_INT(mlrt_model_kind(m), MLRT_KIND_MLP);
            CHECK_INT(mlrt_weight_dtype(m), f64 ? MLRT_F64 : MLRT_F32);
            CHECK_INT(mlrt_layer_count(m), 2);
            CHECK_INT(mlrt_layer(m, 0).activation, MLRT_ACT_RELU);
            CHECK_INT(mlrt_layer(m, 1).activation, MLRT_ACT_SOFTMAX);
            CHECK_INT(mlrt_layer(m, 0).inputs, dims[0]);
            CHECK_INT(mlrt_layer(m, 0).outputs, dims[1]);
            CHECK_INT(mlrt_param_count(m), dims[0] * dims[1] + dims[1] + dims[1] * dims[2] + dims[2]);
            CHECK_VS_REF(m, &r);
        }
    }
}

static void test_bin_inspect(void) {
    static const int dims[] = {3, 5, 10};
    ref_mlp r;
    ref_make(&r, 2, dims, 3);
    inspected in;
    const mlrt__json *root = INSPECT(bin_from_ref(&r, 1), &in);
    if (!root) return;
    CHECK_STR(jstr(root, "format"), "bin");
    const mlrt__json *t = mlrt__json_get(root, "tensors");
    CHECK(t && t->count == 4);
    CHECK_STR(jstr(jitem(t, 0), "name"), "w1");
    CHECK_STR(jstr(jitem(t, 0), "dtype"), "F64");
    CHECK_STR(jstr(jitem(t, 3), "name"), "b2");
    CHECK_INT(jint(jitem(t, 3), "byteOffset"), 12 + (15 + 5 + 50) * 8);
    CHECK_INT(jint(jitem(t, 3), "byteLength"), 80);
    mlrt__json_free(&in.doc);
}

static void test_bin_truncated_at_every_section(void) {
    /* outputs = 10 so that byte 8 (the low byte of outputs) does not look like another format */
    static const int dims[] = {6, 7, 10};
    ref_mlp r;
    ref_make(&r, 2, dims, 11);
    const size_t w1 = 6 * 7, b1 = 7, w2 = 7 * 10, b2 = 10;
    for (int f64 = 0; f64 <= 1; f64++) {
        size_t es = f64 ? 8 : 4, size32 = 12 + (w1 + b1 + w2 + b2) * 4;
        bytes f = bin_from_ref(&r, f64);
        const size_t cuts[] = {0, 1, 4, 11, 12, 12 + w1 * es, 12 + (w1 + b1) * es, 12 + (w1 + b1 + w2) * es,
                               12 + (w1 + b1 + w2 + b2) * es - 1};
        for (size_t i = 0; i < LEN(cuts); i++) {
            bytes t = prefix(f, cuts[i]);
            if (cuts[i] < 12) {
                BIN_FAILS(t, MLRT_ERR_TRUNCATED, "12-byte header");
            } else if (cuts[i] < size32) {
                BIN_FAILS(t, MLRT_ERR_TRUNCATED, "6x7x10 need");
                BIN_LOAD_FAILS(t, MLRT_ERR_TRUNCATED, "but the file is");
            } else {
                /* between the f32 and the f64 size: a cut f64 file and an f32 file with extra
                 * bytes are the same bytes; the message gives both sizes */
                BIN_FAILS(t, MLRT_ERR_SIZE_MISMATCH, "need 1044 bytes (f64) or 528 bytes (f32)");
            }
        }
        /* one byte too many */
        BIN_FAILS(with_extra_byte(f, 0), MLRT_ERR_SIZE_MISMATCH, "need");
        BIN_LOAD_FAILS(with_extra_byte(f, 0), MLRT_ERR_SIZE_MISMATCH, "6x7x10");
    }
}

static bytes bin_header(int32_t in, int32_t hid, int32_t out, size_t extra_zero_bytes) {
    bytes b = {0};
    put_u32(&b, (uint32_t)in);
    put_u32(&b, (uint32_t)hid);
    put_u32(&b, (uint32_t)out);
    for (size_t i = 0; i < extra_zero_bytes; i++) put_u8(&b, 0);
    return done(b);
}

static void test_bin_bad_dimensions(void) {
    BIN_FAILS(bin_header(0, 4, 10, 64), MLRT_ERR_BAD_DIMENSIONS, "inputs 0, hidden 4, outputs 10");
    BIN_FAILS(bin_header(4, 0, 10, 64), MLRT_ERR_BAD_DIMENSIONS, "hidden 0");
    BIN_FAILS(bin_header(4, 4, 0, 64), MLRT_ERR_BAD_DIMENSIONS, "outputs 0");
    BIN_FAILS(bin_header(-1, 4, 10, 64), MLRT_ERR_BAD_DIMENSIONS, "inputs -1");
    BIN_FAILS(bin_header(4, INT32_MIN, 10, 64), MLRT_ERR_BAD_DIMENSIONS, "hidden -2147483648");
    BIN_FAILS(bin_header(4, 4, -10, 64), MLRT_ERR_BAD_DIMENSIONS, "outputs -10");
    BIN_FAILS(bin_header((1 << 24) + 1, 1, 10, 0), MLRT_ERR_BAD_DIMENSIONS, "1..16777216");
    /* loaded as bytes, implausible dimensions are no .bin at all: every format tried is named */
    LOAD_FAILS(bin_header(0, 4, 10, 64), MLRT_ERR_UNKNOWN_FORMAT, "load: ", "not a raw .bin (dimensions 0, 4, 10 are not each in 1..16777216)");
    LOAD_FAILS(bin_header(-5, 4, 10, 64), MLRT_ERR_UNKNOWN_FORMAT, "load: ", "not SafeTensors");
    LOAD_FAILS(bin_header(16384, 16384, 2, 0), MLRT_ERR_UNKNOWN_FORMAT, "load: ", "not BinTensors");
    /* plausible dimensions, wrong size: a .bin cut short, or with bytes left over */
    LOAD_FAILS(bin_header(4, 4, 10, 64), MLRT_ERR_TRUNCATED, "bin: ", "need");
    {
        uint32_t rnd[64];
        rng_seed(99);
        for (int trial = 0; trial < 200; trial++) { /* random bytes are not a .bin with absurd dimensions */
            for (int i = 0; i < 64; i++) rnd[i] = rng_u32();
            bytes f = {0};
            put(&f, rnd, 4 * (size_t)rng_int(4, 64));
            f = done(f);
            mlrt_error e;
            mlrt_model *mm = mlrt_load_from_bytes(exact(f.p, f.n), f.n, &e);
            CHECK(mm == NULL && (e.code == MLRT_ERR_UNKNOWN_FORMAT || e.code == MLRT_ERR_TRUNCATED));
            mlrt_free(mm);
        }
    }
    /* the 2^28 parameter cap, checked before the file size */
    BIN_FAILS(bin_header(16384, 16384, 2, 0), MLRT_ERR_BAD_DIMENSIONS, "more than the limit of 268435456");
    BIN_FAILS(bin_header(1 << 24, 16, 10, 0), MLRT_ERR_BAD_DIMENSIONS, "parameters");
    BIN_FAILS(bin_header(1 << 24, 1 << 24, 1 << 24, 0), MLRT_ERR_BAD_DIMENSIONS, "parameters");
    /* 16383^2 + 16383 + 16383 + 1 == 2^28 exactly: within the cap, so only the size is wrong */
    BIN_FAILS(bin_header(16383, 16383, 1, 0), MLRT_ERR_TRUNCATED, "16383x16383x1 need");
}

static void test_bin_non_finite_weights(void) {
    static const int dims[] = {3, 4, 10};
    ref_mlp r;
    ref_make(&r, 2, dims, 5);
    for (int f64 = 0; f64 <= 1; f64++) {
        size_t es = f64 ? 8 : 4;
        bytes f = bin_from_ref(&r, f64);
        struct { size_t index; double v; const char *needle; } cases[] = {
            {1, NAN, "bin: weight 'w1' [out 1][in 0]"},                 /* W1[in 0][hid 1] */
            {12 + 2, INFINITY, "bin: bias 'b1' [2]"},                   /* b1[2] */
            {12 + 4 + 5, -INFINITY, "bin: weight 'w2' [out 5][in 0]"},  /* W2[hid 0][out 5] */
            {12 + 4 + 40 + 9, NAN, "bin: bias 'b2' [9]"},               /* b2[9] */
        };
        for (size_t i = 0; i < LEN(cases); i++) {
            bytes g = {0};
            put(&g, f.p, f.n);
            g = done(g);
            uint8_t *at = g.p + 12 + cases[i].index * es;
            if (f64) memcpy(at, &cases[i].v, 8);
            else { float v = (float)cases[i].v; memcpy(at, &v, 4); }
            LOAD_FAILS(g, MLRT_ERR_NON_FINITE, NULL, cases[i].needle);
        }
    }
}

/* ================================================================ SafeTensors */

static const char *const FC_NAMES[] = {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"};

static void test_st_f32_f64_models(void) {
    for (int f64 = 0; f64 <= 1; f64++) {
        static const int dims[] = {9, 11, 5};
        ref_mlp r;
        ref_make(&r, 2, dims, 21 + (uint32_t)f64);
        tspec t[4];
        int n = ref_tensors(&r, FC_NAMES, f64 ? "F64" : "F32", 0, t);
        mlrt_model *m = LOAD_OK(st_build(NULL, t, n));
        if (!m) continue;
        CHECK_INT(mlrt_model_format(m), MLRT_FORMAT_SAFETENSORS);
        CHECK_INT(mlrt_model_kind(m), MLRT_KIND_MLP);
        CHECK_INT(mlrt_weight_dtype(m), f64 ? MLRT_F64 : MLRT_F32);
        CHECK_INT(mlrt_param_count(m), 9 * 11 + 11 + 11 * 5 + 5);
        CHECK_VS_REF(m, &r);
        mlrt__json_doc doc;
        const char *info = mlrt_model_info_json(m);
        CHECK(mlrt__json_parse((const uint8_t *)info, strlen(info), "info", &doc, NULL) == MLRT_OK);
        CHECK_STR(jstr(doc.root, "format"), "safetensors");
        CHECK_STR(jstr(doc.root, "kind"), "mlp");
        CHECK_STR(jstr(doc.root, "dtype"), f64 ? "F64" : "F32");
        CHECK_INT(jint(doc.root, "inputSize"), 9);
        CHECK_INT(jint(doc.root, "outputSize"), 5);
        CHECK_STR(jstr(jitem(mlrt__json_get(doc.root, "layers"), 1), "activation"), "softmax");
        mlrt__json_free(&doc);
    }
}

static float bits_f32(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Half-precision weights are converted exactly at load. */
static void test_st_f16_bf16_exact_values(void) {
    static const struct { uint16_t h; uint32_t f; } f16[] = {
        {0x3c00, 0x3f800000}, /* 1 */
        {0xc000, 0xc0000000}, /* -2 */
        {0x7bff, 0x477fe000}, /* 65504, the largest */
        {0x0400, 0x38800000}, /* 2^-14, smallest normal */
        {0x0001, 0x33800000}, /* 2^-24, smallest subnormal */
        {0x03ff, 0x387fc000}, /* largest subnormal, 1023 * 2^-24 */
        {0x8001, 0xb3800000}, /* -2^-24 */
        {0x0000, 0x00000000}, /* +0 */
        {0x8000, 0x80000000}, /* -0 */
        {0x3555, 0x3eaaa000}, /* 0.333251953125 */
    };
    static const struct { uint16_t h; uint32_t f; } bf16[] = {
        {0x3f80, 0x3f800000}, {0xc000, 0xc0000000}, {0x0001, 0x00010000}, /* float subnormal 2^-133 */
        {0x807f, 0x807f0000}, {0x0000, 0x00000000}, {0x8000, 0x80000000}, {0x7f7f, 0x7f7f0000},
    };
    uint8_t p[2];
    for (size_t i = 0; i < LEN(f16); i++) {
        p[0] = (uint8_t)f16[i].h;
        p[1] = (uint8_t)(f16[i].h >> 8);
        CHECK_BITS(mlrt__to_f32(p, MLRT_F16), bits_f32(f16[i].f));
    }
    for (size_t i = 0; i < LEN(bf16); i++) {
        p[0] = (uint8_t)bf16[i].h;
        p[1] = (uint8_t)(bf16[i].h >> 8);
        CHECK_BITS(mlrt__to_f32(p, MLRT_BF16), bits_f32(bf16[i].f));
    }
    CHECK(isinf(mlrt__to_f32((const uint8_t[]){0x00, 0x7c}, MLRT_F16)));
    CHECK(isnan(mlrt__to_f32((const uint8_t[]){0x01, 0x7e}, MLRT_F16)));

    /* Through a whole file: a linear regression whose coefficients are the values above;
     * a one-hot input reads back coefficient k (x 1, plus +0 terms and a zero intercept). */
    for (int b = 0; b <= 1; b++) {
        size_t n = b ? LEN(bf16) : LEN(f16);
        uint8_t *coef = tmalloc(2 * n);
        for (size_t i = 0; i < n; i++) {
            uint16_t h = b ? bf16[i].h : f16[i].h;
            coef[2 * i] = (uint8_t)h;
            coef[2 * i + 1] = (uint8_t)(h >> 8);
        }
        static const uint8_t zero16[2] = {0, 0};
        tspec t[2] = {{"coefficients", b ? "BF16" : "F16", 1, {n}, coef, 2 * n},
                      {"intercept", b ? "BF16" : "F16", 1, {1}, zero16, 2}};
        mlrt_model *m = LOAD_OK(st_build(NULL, t, 2));
        if (!m) continue;
        CHECK_INT(mlrt_weight_dtype(m), b ? MLRT_BF16 : MLRT_F16);
        float *x = tmalloc(n * sizeof(float)), y;
        for (size_t k = 0; k < n; k++) {
            memset(x, 0, n * sizeof(float));
            x[k] = 1.0f;
            CHECK_INT(mlrt_predict(m, x, &y, NULL), MLRT_OK);
            float want = bits_f32(b ? bf16[k].f : f16[k].f);
            CHECK(y == want); /* +0 and -0 both read back as +0 after the sum */
        }
    }

    /* inf / NaN half-precision weights are refused at load */
    static const uint16_t bad16[] = {0x7c00, 0xfc00, 0x7e00, 0x7c01, 0xffff};
    static const uint16_t badbf[] = {0x7f80, 0xff80, 0x7fc0, 0x7f81};
    for (int b = 0; b <= 1; b++) {
        const uint16_t *bad = b ? badbf : bad16;
        size_t nb = b ? LEN(badbf) : LEN(bad16);
        for (size_t i = 0; i < nb; i++) {
            uint8_t w[6] = {0x00, 0x3c, 0, 0, 0, 0};
            if (b) w[1] = 0x3f, w[0] = 0x80;
            w[2] = (uint8_t)bad[i];
            w[3] = (uint8_t)(bad[i] >> 8);
            tspec t[2] = {{"fc.weight", b ? "BF16" : "F16", 2, {1, 3}, w, 6},
                          {"fc.bias", b ? "BF16" : "F16", 1, {1}, w, 2}};
            LOAD_FAILS(st_build(NULL, t, 2), MLRT_ERR_NON_FINITE, NULL, "safetensors: weight 'fc.weight' [out 0][in 1] is not finite");
            tspec t2[2] = {{"fc.weight", b ? "BF16" : "F16", 2, {1, 1}, w, 2},
                           {"fc.bias", b ? "BF16" : "F16", 1, {1}, w + 2, 2}};
            LOAD_FAILS(st_build(NULL, t2, 2), MLRT_ERR_NON_FINITE, NULL, "safetensors: bias 'fc.bias' [0] is not finite");
        }
    }
}

/* PyTorch state_dict naming: layers found by '.weight'/'.bias' and ordered naturally. */
static void test_st_pytorch_names(void) {
    static const int dims3[] = {5, 7, 6, 4};
    struct { const char *names[6]; int reverse; } cases[] = {
        {{"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "fc3.weight", "fc3.bias"}, 0},
        {{"layers.0.weight", "layers.0.bias", "layers.2.weight", "layers.2.bias", "layers.4.weight", "layers.4.bias"}, 1},
        {{"net.0.weight", "net.0.bias", "net.2.weight", "net.2.bias", "net.10.weight", "net.10.bias"}, 1},
        {{"layer1.weight", "layer1.bias", "layer2.weight", "layer2.bias", "layer3.weight", "layer3.bias"}, 1},
        /* natural order: fc2 < fc9 < fc10 (as strings "fc10" < "fc2") */
        {{"fc2.weight", "fc2.bias", "fc9.weight", "fc9.bias", "fc10.weight", "fc10.bias"}, 1},
        {{"model.fc2.weight", "model.fc2.bias", "model.fc10.weight", "model.fc10.bias", "model.fc100.weight", NULL}, 0},
        /* missing biases */
        {{"fc1.weight", NULL, "fc2.weight", "fc2.bias", "fc3.weight", NULL}, 1},
        {{"a.weight", NULL, "b.weight", NULL, "c.weight", NULL}, 0},
    };
    for (size_t i = 0; i < LEN(cases); i++) {
        ref_mlp r;
        ref_make(&r, 3, dims3, 100 + (uint32_t)i);
        tspec t[6];
        int n = ref_tensors(&r, cases[i].names, "F32", cases[i].reverse, t);
        mlrt_model *m = LOAD_OK(st_build(NULL, t, n));
        if (!m) { fprintf(stderr, "  (case %zu: %s)\n", i, cases[i].names[0]); continue; }
        CHECK_INT(mlrt_layer_count(m), 3);
        CHECK_INT(mlrt_layer(m, 0).activation, MLRT_ACT_RELU);
        CHECK_INT(mlrt_layer(m, 1).activation, MLRT_ACT_RELU);
        CHECK_INT(mlrt_layer(m, 2).activation, MLRT_ACT_SOFTMAX);
        uint64_t params = 5 * 7 + 7 * 6 + 6 * 4;
        for (int l = 0; l < 3; l++) params += cases[i].names[2 * l + 1] ? (uint64_t)dims3[l + 1] : 0;
        CHECK_INT(mlrt_param_count(m), params);
        CHECK_VS_REF(m, &r);
    }
    /* a single layer with a single output: identity at the end by default */
    static const int dims1[] = {4, 1};
    ref_mlp r;
    ref_make(&r, 1, dims1, 9);
    r.act[0] = MLRT_ACT_IDENTITY;
    static const char *const one[] = {"linear.weight", "linear.bias"};
    tspec t[2];
    int n = ref_tensors(&r, one, "F32", 0, t);
    mlrt_model *m = LOAD_OK(st_build(NULL, t, n));
    if (m) CHECK_INT(mlrt_layer(m, 0).activation, MLRT_ACT_IDENTITY);
    CHECK_VS_REF(m, &r);
}

/* 64 layers is the limit, for both naming schemes. */
static void test_st_layer_limit(void) {
    for (int numbered = 0; numbered <= 1; numbered++) {
        for (int layers = 64; layers <= 65; layers++) {
            tspec *t = tmalloc((size_t)layers * sizeof *t);
            for (int l = 0; l < layers; l++) {
                char *name = tmalloc(24);
                snprintf(name, 24, numbered ? "%d" : "h%d.weight", l);
                tspec one = {name, "F32", 2, {1, 1}, ONE_F32, 4};
                t[l] = one;
            }
            bytes f = st_build(NULL, t, layers);
            if (layers == 64) {
                mlrt_model *m = LOAD_OK(f);
                if (m) {
                    CHECK_INT(mlrt_layer_count(m), 64);
                    float x = 2, y = 0;
                    CHECK_INT(mlrt_predict(m, &x, &y, NULL), MLRT_OK);
                    CHECK(y == 2.0f); /* ReLU(1 * x) 63 times, then identity for one output */
                }
            } else {
                ST_FAILS(f, MLRT_ERR_NOT_A_MODEL, "more than 64 layers");
            }
        }
    }
}

static void test_st_aprender_numbered(void) {
    static const int dims[] = {6, 8, 3};
    ref_mlp r;
    ref_make(&r, 2, dims, 31);
    static const char *const names[] = {"0", "1", "2", "3"};
    tspec t[4];
    int n = ref_tensors(&r, names, "F32", 0, t);
    mlrt_model *m = LOAD_OK(st_build(NULL, t, n));
    CHECK_VS_REF(m, &r);
    /* a gap or a non-number among numbered tensors */
    tspec gap[4] = {t[0], t[1], t[2], t[3]};
    gap[3].name = "4";
    ST_FAILS(st_build(NULL, gap, 4), MLRT_ERR_NOT_A_MODEL, "found '4'");
    gap[3].name = "x";
    ST_FAILS(st_build(NULL, gap, 4), MLRT_ERR_NOT_A_MODEL, "found 'x'");
    gap[3].name = "03";
    ST_FAILS(st_build(NULL, gap, 4), MLRT_ERR_NOT_A_MODEL, "found '03'");
}

static void test_st_metadata_activations(void) {
    static const int dims[] = {4, 6, 5, 3};
    struct { const char *meta; mlrt_activation a[3]; } ok[] = {
        {"{\"activations\":\"relu,relu,softmax\"}", {MLRT_ACT_RELU, MLRT_ACT_RELU, MLRT_ACT_SOFTMAX}},
        {"{\"activations\":\"tanh,sigmoid,identity\"}", {MLRT_ACT_TANH, MLRT_ACT_SIGMOID, MLRT_ACT_IDENTITY}},
        {"{\"activations\":\" gelu , silu,leaky_relu\",\"other\":\"x\"}", {MLRT_ACT_GELU, MLRT_ACT_SILU, MLRT_ACT_LEAKY_RELU}},
        {"{\"activations\":\"linear,logistic,none\"}", {MLRT_ACT_IDENTITY, MLRT_ACT_SIGMOID, MLRT_ACT_IDENTITY}},
        {"{\"activations\":\"swish,tanh,softmax\"}", {MLRT_ACT_SILU, MLRT_ACT_TANH, MLRT_ACT_SOFTMAX}},
    };
    static const char *const names[] = {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "fc3.weight", "fc3.bias"};
    for (size_t i = 0; i < LEN(ok); i++) {
        ref_mlp r;
        ref_make(&r, 3, dims, 40 + (uint32_t)i);
        for (int l = 0; l < 3; l++) r.act[l] = ok[i].a[l];
        tspec t[6];
        int n = ref_tensors(&r, names, "F32", 0, t);
        mlrt_model *m = LOAD_OK(st_build(ok[i].meta, t, n));
        if (!m) continue;
        for (int l = 0; l < 3; l++) CHECK_INT(mlrt_layer(m, (size_t)l).activation, ok[i].a[l]);
        CHECK_VS_REF(m, &r);
        CHECK_CONTAINS(mlrt_model_info_json(m), "\"metadata\":{\"activations\":");
    }
    ref_mlp r;
    ref_make(&r, 3, dims, 50);
    tspec t[6];
    int n = ref_tensors(&r, names, "F32", 0, t);
    ST_FAILS(st_build("{\"activations\":\"relu,mish,softmax\"}", t, n), MLRT_ERR_UNSUPPORTED, "'mish'");
    ST_FAILS(st_build("{\"activations\":\"relu,RELU,softmax\"}", t, n), MLRT_ERR_UNSUPPORTED, "'RELU'");
    ST_FAILS(st_build("{\"activations\":\"relu,,softmax\"}", t, n), MLRT_ERR_UNSUPPORTED, "''");
    ST_FAILS(st_build("{\"activations\":\"relu,softmax\"}", t, n), MLRT_ERR_BAD_HEADER, "2 activations for 3 layers");
    ST_FAILS(st_build("{\"activations\":\"relu,relu,relu,softmax\"}", t, n), MLRT_ERR_BAD_HEADER,
             "4 activations for 3 layers");
    ST_FAILS(st_build("{\"activations\":\"relu,relu,softmax,\"}", t, n), MLRT_ERR_BAD_HEADER, "4 activations");
    /* a metadata value is all of its characters, an escaped NUL included */
    ST_FAILS(st_build("{\"activations\":\"relu,relu,softmax\\u0000,x\"}", t, n), MLRT_ERR_UNSUPPORTED,
             "unknown activation 'softmax\\x00'");
    ST_FAILS(st_build("{\"activations\":\"relu,relu,softmax\\u0000\"}", t, n), MLRT_ERR_UNSUPPORTED, "'softmax\\x00'");
    tspec lg[2] = {{"coefficients", "F32", 1, {2}, F32_BYTES(1, -1)}, {"intercept", "F32", 1, {1}, F32_BYTES(0)}};
    mlrt_model *m = LOAD_OK(st_build("{\"model_type\":\"logistic_regression\\u0000x\"}", lg, 2));
    if (m) CHECK_INT(mlrt_model_kind(m), MLRT_KIND_LINEAR_REGRESSION);
}

static void test_st_regression(void) {
    /* linear: y = 1 x0 + 2 x1 + 3 x2 + 0.5 */
    tspec lin[2] = {{"coefficients", "F32", 1, {3}, F32_BYTES(1, 2, 3)},
                    {"intercept", "F32", 1, {1}, F32_BYTES(0.5f)}};
    mlrt_model *m = LOAD_OK(st_build(NULL, lin, 2));
    if (m) {
        CHECK_INT(mlrt_model_kind(m), MLRT_KIND_LINEAR_REGRESSION);
        CHECK_INT(mlrt_input_size(m), 3);
        CHECK_INT(mlrt_output_size(m), 1);
        CHECK_INT(mlrt_param_count(m), 4);
        float x[6] = {1, 1, 1, 2, -1, 0.5f}, y[2];
        CHECK_INT(mlrt_predict_batch(m, x, 2, y, NULL), MLRT_OK);
        CHECK(y[0] == 6.5f);
        CHECK(y[1] == 2.0f);
    }
    /* coefficients as [1, n] and [n, 1], intercept as a scalar (shape []) */
    tspec lin2[2] = {{"coefficients", "F64", 2, {1, 2}, ((const double[]){0.25, -4}), 16},
                     {"intercept", "F64", 0, {0}, ((const double[]){-1}), 8}};
    m = LOAD_OK(st_build(NULL, lin2, 2));
    if (m) {
        float x[2] = {4, 0.5f}, y;
        CHECK_INT(mlrt_predict(m, x, &y, NULL), MLRT_OK);
        CHECK(y == -2.0f);
    }
    lin2[0].shape[0] = 2, lin2[0].shape[1] = 1;
    m = LOAD_OK(st_build(NULL, lin2, 2));
    if (m) CHECK_INT(mlrt_input_size(m), 2);
    /* logistic: p = sigmoid(x0 - x1) */
    tspec lg[2] = {{"coefficients", "F32", 1, {2}, F32_BYTES(1, -1)}, {"intercept", "F32", 1, {1}, F32_BYTES(0)}};
    const char *metas[] = {"{\"model_type\":\"logistic_regression\"}", "{\"model_type\":\"LogisticRegression\"}"};
    for (int i = 0; i < 2; i++) {
        m = LOAD_OK(st_build(metas[i], lg, 2));
        if (!m) continue;
        CHECK_INT(mlrt_model_kind(m), MLRT_KIND_LOGISTIC_REGRESSION);
        CHECK_INT(mlrt_layer(m, 0).activation, MLRT_ACT_SIGMOID);
        float x[6] = {3, 3, 1, 0, -40, 60}, y[3];
        CHECK_INT(mlrt_predict_batch(m, x, 3, y, NULL), MLRT_OK);
        CHECK(y[0] == 0.5f);
        CHECK_NEAR(y[1], 1 / (1 + exp(-1.0)), 1e-7);
        CHECK(y[2] >= 0.0f && y[2] < 1e-40f);
        CHECK_CONTAINS(mlrt_model_info_json(m), "\"kind\":\"logistic_regression\"");
    }
    /* anything else in model_type stays linear */
    m = LOAD_OK(st_build("{\"model_type\":\"linear_regression\"}", lg, 2));
    if (m) CHECK_INT(mlrt_model_kind(m), MLRT_KIND_LINEAR_REGRESSION);
    /* malformed regressions */
    tspec one[1] = {lin[0]};
    ST_FAILS(st_build(NULL, one, 1), MLRT_ERR_NOT_A_MODEL, "'intercept' is missing");
    tspec three[3] = {lin[0], lin[1], {"extra", "F32", 1, {1}, ONE_F32, 4}};
    ST_FAILS(st_build(NULL, three, 3), MLRT_ERR_NOT_A_MODEL, "other tensors are present");
    tspec two_icpt[2] = {lin[0], {"intercept", "F32", 1, {2}, F32_BYTES(1, 2)}};
    ST_FAILS(st_build(NULL, two_icpt, 2), MLRT_ERR_BAD_DIMENSIONS, "'intercept' must hold exactly one value, has 2");
    tspec mat[2] = {{"coefficients", "F32", 2, {2, 2}, FOUR_F32, 16}, lin[1]};
    ST_FAILS(st_build(NULL, mat, 2), MLRT_ERR_BAD_DIMENSIONS, "'coefficients' must be a vector");
    tspec empty[2] = {{"coefficients", "F32", 1, {0}, NULL, 0}, lin[1]};
    ST_FAILS(st_build(NULL, empty, 2), MLRT_ERR_BAD_DIMENSIONS, "'coefficients'");
    tspec ints[2] = {{"coefficients", "I32", 1, {1}, ONE_F32, 4}, lin[1]};
    ST_FAILS(st_build(NULL, ints, 2), MLRT_ERR_NOT_A_MODEL, "'coefficients' is I32");
}

static void test_st_not_a_model(void) {
    /* non-chaining layers */
    tspec chain[4] = {{"fc1.weight", "F32", 2, {2, 2}, FOUR_F32, 16}, {"fc1.bias", "F32", 1, {2}, FOUR_F32, 8},
                      {"fc2.weight", "F32", 2, {1, 3}, FOUR_F32, 12}, {"fc2.bias", "F32", 1, {1}, FOUR_F32, 4}};
    ST_FAILS(st_build(NULL, chain, 4), MLRT_ERR_BAD_DIMENSIONS, "layer 'fc2' takes 3 inputs but layer 'fc1' gives 2");
    /* bias of the wrong shape */
    tspec bias[2] = {{"fc1.weight", "F32", 2, {2, 2}, FOUR_F32, 16}, {"fc1.bias", "F32", 1, {3}, FOUR_F32, 12}};
    ST_FAILS(st_build(NULL, bias, 2), MLRT_ERR_BAD_DIMENSIONS, "bias 'fc1.bias' must have shape [2]");
    tspec bias2[2] = {{"fc1.weight", "F32", 2, {2, 2}, FOUR_F32, 16}, {"fc1.bias", "F32", 2, {1, 2}, FOUR_F32, 8}};
    ST_FAILS(st_build(NULL, bias2, 2), MLRT_ERR_BAD_DIMENSIONS, "'fc1.bias'");
    /* weight of the wrong rank / zero size */
    tspec rank3[1] = {{"fc1.weight", "F32", 3, {1, 2, 2}, FOUR_F32, 16}};
    ST_FAILS(st_build(NULL, rank3, 1), MLRT_ERR_NOT_A_MODEL, "'fc1.weight' has 3 dimensions");
    tspec zero[1] = {{"fc1.weight", "F32", 2, {0, 2}, NULL, 0}};
    ST_FAILS(st_build(NULL, zero, 1), MLRT_ERR_BAD_DIMENSIONS, "'fc1.weight' shape [0, 2]");
    /* integer weights */
    static const int32_t iw[4] = {1, 2, 3, 4};
    tspec ints[2] = {{"fc1.weight", "I32", 2, {2, 2}, iw, 16}, {"fc1.bias", "F32", 1, {2}, FOUR_F32, 8}};
    ST_FAILS(st_build(NULL, ints, 2), MLRT_ERR_NOT_A_MODEL, "tensor 'fc1.weight' is I32");
    tspec intb[2] = {{"fc1.weight", "F32", 2, {2, 2}, FOUR_F32, 16}, {"fc1.bias", "U8", 1, {2}, iw, 2}};
    ST_FAILS(st_build(NULL, intb, 2), MLRT_ERR_NOT_A_MODEL, "tensor 'fc1.bias' is U8");
    tspec num_int[1] = {{"0", "I64", 2, {1, 2}, iw, 16}};
    ST_FAILS(st_build(NULL, num_int, 1), MLRT_ERR_NOT_A_MODEL, "'0' is I64");
    /* a stray tensor next to the layers */
    tspec stray[3] = {chain[0], chain[1], {"running_mean", "F32", 1, {1}, ONE_F32, 4}};
    ST_FAILS(st_build(NULL, stray, 3), MLRT_ERR_NOT_A_MODEL, "tensor 'running_mean' is not part of a dense layer");
    tspec orphan[2] = {chain[0], {"fc9.bias", "F32", 1, {1}, ONE_F32, 4}};
    ST_FAILS(st_build(NULL, orphan, 2), MLRT_ERR_NOT_A_MODEL, "'fc9.bias'");
    /* no tensors at all */
    ST_FAILS(st_build(NULL, NULL, 0), MLRT_ERR_NOT_A_MODEL, "no tensors");
    ST_FAILS(st_build("{\"a\":\"b\"}", NULL, 0), MLRT_ERR_NOT_A_MODEL, "no tensors");

    /* unrelated tensors: not a model, but inspect lists them */
    static const uint8_t tok[6] = {1, 2, 3, 4, 5, 6};
    tspec unrel[3] = {{"embeddings", "F32", 2, {2, 2}, FOUR_F32, 16},
                      {"tokens", "U8", 1, {6}, tok, 6},
                      {"scale", "F64", 0, {0}, ((const double[]){2.5}), 8}};
    bytes f = st_build("{\"format\":\"pt\",\"note\":\"caf\xc3\xa9\"}", unrel, 3);
    ST_FAILS(f, MLRT_ERR_NOT_A_MODEL, "first tensor is 'embeddings'");
    inspected in;
    const mlrt__json *root = INSPECT(f, &in);
    if (root) {
        CHECK_STR(jstr(root, "format"), "safetensors");
        CHECK(mlrt__json_get(root, "modelKind") == NULL);
        CHECK_STR(jstr(mlrt__json_get(root, "notAModel"), "code"), "NOT_A_MODEL");
        CHECK_CONTAINS(jstr(mlrt__json_get(root, "notAModel"), "message"), "'embeddings'");
        CHECK_STR(jstr(mlrt__json_get(root, "metadata"), "note"), "caf\xc3\xa9");
        const mlrt__json *t = mlrt__json_get(root, "tensors");
        CHECK(t && t->count == 3);
        CHECK_STR(jstr(jitem(t, 1), "name"), "tokens");
        CHECK_STR(jstr(jitem(t, 1), "dtype"), "U8");
        const mlrt__json *shape = mlrt__json_get(jitem(t, 1), "shape");
        uint64_t s0 = 0;
        CHECK(shape && shape->count == 1 && mlrt__json_u64(shape->child, &s0) && s0 == 6);
        CHECK(mlrt__json_get(jitem(t, 2), "shape") && mlrt__json_get(jitem(t, 2), "shape")->count == 0);
        size_t hdr = f.n - 30; /* data section is 16 + 6 + 8 bytes */
        CHECK_INT(jint(jitem(t, 0), "byteOffset"), hdr);
        CHECK_INT(jint(jitem(t, 1), "byteOffset"), hdr + 16);
        CHECK_INT(jint(jitem(t, 2), "byteLength"), 8);
        mlrt__json_free(&in.doc);
    }
    /* and a model is reported as one */
    ref_mlp r;
    mlrt_model *m = small_model(&r);
    (void)m;
    tspec mt[4];
    int n = ref_tensors(&r, FC_NAMES, "F32", 0, mt);
    root = INSPECT(st_build(NULL, mt, n), &in);
    if (root) {
        CHECK_STR(jstr(root, "modelKind"), "mlp");
        CHECK(mlrt__json_get(root, "notAModel") == NULL);
        mlrt__json_free(&in.doc);
    }
}

/* ------------------------------------------------------- malformed SafeTensors */

#define T1 "\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}"

static void test_st_header_length(void) {
    static const char h[] = "{" T1 "}";
    ST_FAILS(st_raw_len(1000, h, strlen(h), ONE_F32, 4), MLRT_ERR_TRUNCATED,
             "header length 1000 exceeds the 58 bytes after it: the file is cut short");
    ST_FAILS(st_raw_len(strlen(h) + 5, h, strlen(h), ONE_F32, 4), MLRT_ERR_TRUNCATED, "header length");
    ST_FAILS(st_raw_len(100000001, h, strlen(h), ONE_F32, 4), MLRT_ERR_HEADER_TOO_LARGE, "100000000-byte limit");
    ST_FAILS(st_raw_len(UINT64_MAX, h, strlen(h), ONE_F32, 4), MLRT_ERR_HEADER_TOO_LARGE, "18446744073709551615");
    ST_FAILS(st_raw_len(1ull << 63, h, strlen(h), ONE_F32, 4), MLRT_ERR_HEADER_TOO_LARGE, "limit");
    for (size_t n = 0; n < 8; n++)
        ST_READ_FAILS(prefix(st_raw(h, ONE_F32, 4), n), MLRT_ERR_TRUNCATED, "too short for the 8-byte header length");
    /* the header is a JSON object, after optional JSON whitespace (the reference accepts it) */
    ST_READ_FAILS(st_raw(" x{}", NULL, 0), MLRT_ERR_INVALID_JSON, "starting with '{'");
    ST_READ_FAILS(st_raw("  ", NULL, 0), MLRT_ERR_INVALID_JSON, "starting with '{'");
    {
        static const char lead[] = " \n\t\r {\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                                   "\"__metadata__\":{\"model_type\":\"x\"}}";
        inspected in;
        const mlrt__json *root = INSPECT(st_raw(lead, ONE_F32, 4), &in);
        if (root) {
            CHECK_STR(jstr(root, "format"), "safetensors");
            CHECK_INT(jint(jitem(mlrt__json_get(root, "tensors"), 0), "byteOffset"), 8 + strlen(lead));
            mlrt__json_free(&in.doc);
        }
    }
    ST_READ_FAILS(st_raw("[1]", NULL, 0), MLRT_ERR_INVALID_JSON, "starting with '{'");
    ST_READ_FAILS(st_raw("", NULL, 0), MLRT_ERR_INVALID_JSON, "starting with '{'");
    ST_READ_FAILS(st_raw("{", NULL, 0), MLRT_ERR_INVALID_JSON, NULL);
    ST_FAILS(st_raw("{", NULL, 0), MLRT_ERR_INVALID_JSON, NULL);
    ST_FAILS(st_raw("{}", NULL, 0), MLRT_ERR_NOT_A_MODEL, "no tensors");
    /* whitespace after the object is part of the header (padding) */
    mlrt__tensorset ts;
    static const char padded[] = "{" T1 "}\n \t\r  ";
    bytes f = st_raw(padded, ONE_F32, 4);
    CHECK_INT(mlrt__read_safetensors(exact(f.p, f.n), f.n, &ts, NULL), MLRT_OK);
    CHECK_INT(ts.count, 1);
    CHECK_INT(ts.data_begin, 8 + strlen(padded));
    mlrt__tensorset_free(&ts);
}

static void test_st_invalid_utf8(void) {
    static const char *const bad[] = {
        "{\"t\xc0\xaf\":1}",         /* overlong '/' */
        "{\"t\xe0\x80\xaf\":1}",     /* overlong, 3 bytes */
        "{\"t\xf0\x80\x80\xaf\":1}", /* overlong, 4 bytes */
        "{\"t\xed\xa0\x80\":1}",     /* UTF-16 surrogate D800 */
        "{\"t\xed\xbf\xbf\":1}",     /* surrogate DFFF */
        "{\"t\xf4\x90\x80\x80\":1}", /* beyond U+10FFFF */
        "{\"t\xe2\x82\":1}",         /* truncated sequence */
        "{\"t\x80\":1}",             /* lone continuation byte */
        "{\"t\xff\":1}",             /* never valid */
        "{\"t\":1}\xe2\x82",         /* truncated at the very end */
        "{\"t\":\"\xc3\"}",          /* truncated before the quote */
    };
    for (size_t i = 0; i < LEN(bad); i++) ST_FAILS(st_raw(bad[i], NULL, 0), MLRT_ERR_INVALID_UTF8, "not valid UTF-8");
    /* valid multi-byte names are fine */
    tspec t[1] = {{"\xe2\x82\xac\xf0\x9f\x98\x80.w", "F32", 1, {1}, ONE_F32, 4}};
    inspected in;
    const mlrt__json *root = INSPECT(st_build(NULL, t, 1), &in);
    if (root) {
        CHECK_STR(jstr(jitem(mlrt__json_get(root, "tensors"), 0), "name"), "\xe2\x82\xac\xf0\x9f\x98\x80.w");
        mlrt__json_free(&in.doc);
    }
}

static void test_st_invalid_json(void) {
    static const char *const bad[] = {
        "{" T1 ",}",                          /* trailing comma */
        "{'t':1}",                             /* single quotes */
        "{\"t\":\"abc}",                       /* unterminated string */
        "{\"t",                                /* unterminated key */
        "{\"t\\q\":1}",                        /* bad escape */
        "{\"t\\x41\":1}",                      /* \x is not JSON */
        "{\"\\ud800\":1}",                     /* lone high surrogate */
        "{\"\\udc00\":1}",                     /* lone low surrogate */
        "{\"\\ud800\\u0041\":1}",              /* high surrogate + non-low */
        "{\"\\ud800\\ud800\":1}",              /* high + high */
        "{\"\\u12\":1}",                       /* short \u */
        "{\"\\u12g4\":1}",                     /* bad hex */
        "{\"t\":01}",                          /* leading zero */
        "{\"t\":-01}",                         /* leading zero */
        "{\"t\":NaN}",                         /* NaN literal */
        "{\"t\":Infinity}",                    /* Infinity literal */
        "{\"t\":-}",                           /* sign only */
        "{\"t\":1.}",                          /* empty fraction */
        "{\"t\":.5}",                          /* no integer part */
        "{\"t\":1e}",                          /* empty exponent */
        "{\"t\":+1}",                          /* plus sign */
        "{\"t\":0x10}",                        /* hex */
        "{\"t\":tru}",                         /* bad literal */
        "{\"t\":nul}",                         /* bad literal */
        "{\"t\":True}",                        /* case */
        "{" T1 "} x",                          /* trailing garbage */
        "{" T1 "}{}",                          /* two values */
        "{\"t\" 1}",                           /* missing colon */
        "{\"t\":1 \"u\":2}",                   /* missing comma */
        "{\"t\":[1,2}",                        /* mismatched bracket */
        "{\"t\":[1,]}",                        /* trailing comma in array */
        "{,}",                                 /* lone comma */
        "{1:2}",                               /* non-string key */
        "{\"t\":\"a\tb\"}",                    /* raw control character */
        "{\"t\":\"a\nb\"}",                    /* raw newline */
        "{\"t\":\"a\\",                        /* backslash at the end */
        "{\"t\":1}}",                          /* extra brace */
        "{\"t\":/*c*/1}",                      /* comment */
    };
    for (size_t i = 0; i < LEN(bad); i++) {
        ST_FAILS(st_raw(bad[i], NULL, 0), MLRT_ERR_INVALID_JSON, "safetensors: header: invalid JSON at byte ");
    }
    /* where it is wrong */
    ST_FAILS(st_raw("{\"t\":NaN}", NULL, 0), MLRT_ERR_INVALID_JSON, "at byte 5");
    ST_FAILS(st_raw("{\"t\\q\":1}", NULL, 0), MLRT_ERR_INVALID_JSON, "bad escape");
    ST_FAILS(st_raw("{\"\\ud800\":1}", NULL, 0), MLRT_ERR_INVALID_JSON, "surrogate");
    ST_FAILS(st_raw("{\"t\":1} x", NULL, 0), MLRT_ERR_INVALID_JSON, "trailing characters");
    /* deep nesting in an ignored field and in metadata */
    char deep[400];
    for (int depth = 63; depth <= 70; depth++) {
        size_t k = 0;
        k += (size_t)sprintf(deep + k, "{\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],\"x\":");
        for (int i = 0; i < depth - 2; i++) deep[k++] = '[';
        for (int i = 0; i < depth - 2; i++) deep[k++] = ']';
        k += (size_t)sprintf(deep + k, "}}");
        deep[k] = 0;
        bytes f = st_raw(deep, ONE_F32, 4);
        if (depth <= 64) ST_FAILS(f, MLRT_ERR_NOT_A_MODEL, "'t'"); /* parses: depth 64 is allowed */
        else ST_FAILS(f, MLRT_ERR_INVALID_JSON, "nesting too deep");
    }
}

static void test_st_duplicate_keys(void) {
    ST_FAILS(st_raw("{" T1 "," T1 "}", ONE_F32, 4), MLRT_ERR_DUPLICATE_KEY, "duplicate key 't'");
    ST_FAILS(st_raw("{\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"dtype\":\"F32\",\"data_offsets\":[0,4]}}", ONE_F32, 4),
             MLRT_ERR_DUPLICATE_KEY, "duplicate key 'dtype'");
    ST_FAILS(st_raw("{\"__metadata__\":{\"k\":\"a\",\"k\":\"b\"}," T1 "}", ONE_F32, 4), MLRT_ERR_DUPLICATE_KEY,
             "duplicate key 'k'");
    ST_FAILS(st_raw("{\"__metadata__\":{},\"__metadata__\":{}," T1 "}", ONE_F32, 4), MLRT_ERR_DUPLICATE_KEY,
             "'__metadata__'");
    /* keys compare after unescaping */
    ST_FAILS(st_raw("{\"__metadata__\":{\"ab\":\"1\",\"a\\u0062\":\"2\"}," T1 "}", ONE_F32, 4),
             MLRT_ERR_DUPLICATE_KEY, "'ab'");
    ST_FAILS(st_raw("{" T1 ",\"\\u0074\":1}", ONE_F32, 4), MLRT_ERR_DUPLICATE_KEY, "'t'");
    /* but keys differing only after an escaped NUL are different keys */
    ST_FAILS(st_raw("{\"__metadata__\":{\"k\":\"a\",\"k\\u0000\":\"b\"}," T1 "}", ONE_F32, 4), MLRT_ERR_NOT_A_MODEL,
             "'t'");
}

static void test_st_bad_header_fields(void) {
    ST_FAILS(st_raw("{\"__metadata__\":{\"k\":1}," T1 "}", ONE_F32, 4), MLRT_ERR_BAD_HEADER,
             "__metadata__ value of 'k' must be a string, got number");
    ST_FAILS(st_raw("{\"__metadata__\":{\"k\":{\"a\":\"b\"}}," T1 "}", ONE_F32, 4), MLRT_ERR_BAD_HEADER, "got object");
    ST_FAILS(st_raw("{\"__metadata__\":{\"k\":null}," T1 "}", ONE_F32, 4), MLRT_ERR_BAD_HEADER, "got null");
    ST_FAILS(st_raw("{\"__metadata__\":[\"a\"]," T1 "}", ONE_F32, 4), MLRT_ERR_BAD_HEADER,
             "__metadata__ must be an object of strings, got array");
    ST_FAILS(st_raw("{\"__metadata__\":\"x\"," T1 "}", ONE_F32, 4), MLRT_ERR_BAD_HEADER, "got string");
    ST_FAILS(st_raw("{\"t\":{\"shape\":[1],\"data_offsets\":[0,4]}}", ONE_F32, 4), MLRT_ERR_BAD_HEADER,
             "tensor 't' lacks 'dtype'");
    ST_FAILS(st_raw("{\"t\":{\"dtype\":\"F32\",\"data_offsets\":[0,4]}}", ONE_F32, 4), MLRT_ERR_BAD_HEADER,
             "tensor 't' lacks 'shape'");
    ST_FAILS(st_raw("{\"t\":{\"dtype\":\"F32\",\"shape\":[1]}}", ONE_F32, 4), MLRT_ERR_BAD_HEADER,
             "tensor 't' lacks 'data_offsets'");
    ST_FAILS(st_raw("{\"t\":[1]}", ONE_F32, 4), MLRT_ERR_BAD_HEADER, "tensor 't' must be an object, got array");
    ST_FAILS(st_raw("{\"t\":\"F32\"}", ONE_F32, 4), MLRT_ERR_BAD_HEADER, "tensor 't' must be an object, got string");
    ST_FAILS(st_raw("{\"t\":{\"dtype\":11,\"shape\":[1],\"data_offsets\":[0,4]}}", ONE_F32, 4), MLRT_ERR_BAD_HEADER,
             "tensor 't' dtype must be a string");
    ST_FAILS(st_raw("{\"t\":{\"dtype\":\"F32\",\"shape\":1,\"data_offsets\":[0,4]}}", ONE_F32, 4),
             MLRT_ERR_BAD_HEADER, "tensor 't' shape must be an array");
    ST_FAILS(st_raw("{\"\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", ONE_F32, 4),
             MLRT_ERR_BAD_HEADER, "non-empty");
    ST_FAILS(st_raw("{\"a\\u0000b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", ONE_F32, 4),
             MLRT_ERR_BAD_HEADER, "contain no NUL");
    /* unknown fields are ignored, as by the reference implementation... */
    mlrt_model *m = NULL;
    tspec lin[2] = {{"coefficients", "F32", 1, {1}, ONE_F32, 4}, {"intercept", "F32", 1, {1}, ONE_F32, 4}};
    bytes ok = st_build(NULL, lin, 2);
    CHECK(ok.n > 0);
    static const char extra[] =
        "{\"coefficients\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],\"x\":[{}],\"dtypes\":\"I8\"},"
        "\"intercept\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8],\"dtype\\u0000\":\"I32\"}}";
    static const float two[2] = {3, 4};
    m = LOAD_OK(st_raw(extra, two, 8));
    /* ...including a field named "dtype" followed by a NUL: it is not the field "dtype" */
    if (m) {
        float x = 2, y = 0;
        CHECK_INT(mlrt_predict(m, &x, &y, NULL), MLRT_OK);
        CHECK(y == 10.0f);
    }
    static const char nul_only[] = "{\"t\":{\"dtype\\u0000\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}";
    ST_FAILS(st_raw(nul_only, ONE_F32, 4), MLRT_ERR_BAD_HEADER, "tensor 't' lacks 'dtype'");
}

static void test_st_dtypes(void) {
    static const char *const unknown[] = {"F128", "f32", "", "F32 ", "FLOAT", "C128", "APR_Q8", "\\u0046\\u0033"};
    for (size_t i = 0; i < LEN(unknown); i++) {
        char h[200], want[64];
        snprintf(h, sizeof h, "{\"t\":{\"dtype\":\"%s\",\"shape\":[1],\"data_offsets\":[0,4]}}", unknown[i]);
        snprintf(want, sizeof want, "tensor 't' has unknown dtype '%s'", i == 7 ? "F3" : unknown[i]);
        ST_FAILS(st_raw(h, ONE_F32, 4), MLRT_ERR_UNKNOWN_DTYPE, want);
    }
    /* every known dtype reads, with its element size */
    for (int d = 0; d < 15; d++) {
        static const uint8_t zeros[16] = {0};
        size_t es = mlrt_dtype_size((mlrt_dtype)d);
        tspec t[1] = {{"x", DTYPE_NAMES[d], 1, {2}, zeros, 2 * es}};
        inspected in;
        const mlrt__json *root = INSPECT(st_build(NULL, t, 1), &in);
        if (!root) continue;
        const mlrt__json *t0 = jitem(mlrt__json_get(root, "tensors"), 0);
        CHECK_STR(jstr(t0, "dtype"), DTYPE_NAMES[d]);
        CHECK_INT(jint(t0, "byteLength"), 2 * es);
        mlrt__json_free(&in.doc);
    }
    /* the reference's later dtypes: listed by inspect; F4 / F6 pack elements across bytes */
    static const struct { const char *dtype; uint64_t n, bytes; } later[] = {
        {"F4", 2, 1}, {"F4", 8, 4}, {"F6_E2M3", 4, 3}, {"F6_E3M2", 8, 6}, {"F8_E8M0", 3, 3}, {"C64", 2, 16}};
    for (size_t i = 0; i < LEN(later); i++) {
        static const uint8_t zeros[16] = {0};
        tspec t[1] = {{"x", later[i].dtype, 1, {later[i].n}, zeros, later[i].bytes}};
        inspected in;
        const mlrt__json *root = INSPECT(st_build(NULL, t, 1), &in);
        if (!root) continue;
        const mlrt__json *t0 = jitem(mlrt__json_get(root, "tensors"), 0);
        CHECK_STR(jstr(t0, "dtype"), later[i].dtype);
        CHECK_INT(jint(t0, "byteLength"), later[i].bytes);
        CHECK_CONTAINS(jstr(mlrt__json_get(root, "notAModel"), "code"), "NOT_A_MODEL");
        mlrt__json_free(&in.doc);
    }
    ST_FAILS(st_raw("{\"t\":{\"dtype\":\"F4\",\"shape\":[3],\"data_offsets\":[0,2]}}", ONE_F32, 2), MLRT_ERR_SIZE_MISMATCH,
             "F4 with 3 elements: not a whole number of bytes");
    ST_FAILS(st_raw("{\"t\":{\"dtype\":\"F6_E2M3\",\"shape\":[2],\"data_offsets\":[0,2]}}", ONE_F32, 2), MLRT_ERR_SIZE_MISMATCH,
             "not a whole number of bytes");
    ST_FAILS(st_raw("{\"w\":{\"dtype\":\"C64\",\"shape\":[1],\"data_offsets\":[0,8]}}", ZEROS8, 8), MLRT_ERR_NOT_A_MODEL, "");
}

static void test_st_shapes(void) {
    static const char *const bad[] = {"-1", "1.5", "1.0", "1e2", "1E0", "18446744073709551616", "\"1\"", "null",
                                      "[1]", "true", "-0"};
    for (size_t i = 0; i < LEN(bad); i++) {
        char h[200];
        snprintf(h, sizeof h, "{\"t\":{\"dtype\":\"F32\",\"shape\":[1,%s],\"data_offsets\":[0,4]}}", bad[i]);
        ST_FAILS(st_raw(h, ONE_F32, 4), MLRT_ERR_BAD_DIMENSIONS, "tensor 't' shape[1] is not a non-negative integer");
    }
    /* rank: 8 is the limit */
    ST_FAILS(st_raw("{\"t\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,4]}}", ONE_F32, 4),
             MLRT_ERR_BAD_DIMENSIONS, "tensor 't' has 9 dimensions, more than 8");
    ST_FAILS(st_raw("{\"t\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1],\"data_offsets\":[0,4]}}", ONE_F32, 4),
             MLRT_ERR_NOT_A_MODEL, "'t'");
    /* products that overflow u64 */
    ST_FAILS(st_raw("{\"t\":{\"dtype\":\"U8\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,4]}}", ONE_F32, 4),
             MLRT_ERR_SHAPE_OVERFLOW, "tensor 't' shape product overflows");
    ST_FAILS(st_raw("{\"t\":{\"dtype\":\"U8\",\"shape\":[4294967296,4294967296,0],\"data_offsets\":[0,0]}}", NULL, 0),
             MLRT_ERR_SHAPE_OVERFLOW, "shape product overflows");
    /* multiplied left to right, as the reference implementation: a leading 0 is an empty tensor */
    ST_FAILS(st_raw("{\"t\":{\"dtype\":\"U8\",\"shape\":[0,4294967296,4294967296],\"data_offsets\":[0,0]}}", NULL, 0),
             MLRT_ERR_NOT_A_MODEL, "'t'");
    ST_FAILS(st_raw("{\"t\":{\"dtype\":\"F32\",\"shape\":[4611686018427387904],\"data_offsets\":[0,4]}}", ONE_F32, 4),
             MLRT_ERR_SHAPE_OVERFLOW, "tensor 't' byte size overflows");
    ST_FAILS(st_raw("{\"t\":{\"dtype\":\"U8\",\"shape\":[18446744073709551615],\"data_offsets\":[0,4]}}", ONE_F32, 4),
             MLRT_ERR_SIZE_MISMATCH, "'t'");
    /* shape x element size vs the byte span */
    ST_FAILS(st_raw("{\"t\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}}", ONE_F32, 4),
             MLRT_ERR_SIZE_MISMATCH, "tensor 't' is F32 with 2 elements (8 bytes) but data_offsets [0, 4) span 4 bytes");
    ST_FAILS(st_raw("{\"t\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[0,4]}}", ONE_F32, 4),
             MLRT_ERR_SIZE_MISMATCH, "'t'");
    ST_FAILS(st_raw("{\"t\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,4]}}", ONE_F32, 4),
             MLRT_ERR_SIZE_MISMATCH, "0 elements");
    ST_FAILS(st_raw("{\"t\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[0,0]}}", NULL, 0),
             MLRT_ERR_SIZE_MISMATCH, "1 elements");
}

static void test_st_offsets(void) {
    static const float eight[2] = {1, 2};
    static const float twelve[3] = {1, 2, 3};
#define TT(name, b, e) "\"" name "\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[" #b "," #e "]}"
    ST_FAILS(st_raw("{" TT("t", 0, 4) "}", NULL, 0), MLRT_ERR_TRUNCATED,
             "the file is cut short: tensor 't' data_offsets [0, 4) exceed data size 0");
    ST_FAILS(st_raw("{" TT("t", 4, 8) "}", ONE_F32, 4), MLRT_ERR_BAD_OFFSETS, "bytes [0, 4) belong to no tensor");
    ST_FAILS(st_raw("{" TT("a", 0, 4) "," TT("b", 4, 8) "}", ONE_F32, 4), MLRT_ERR_TRUNCATED, "tensor 'b' data_offsets [4, 8)");
    ST_FAILS(st_raw("{" TT("a", 0, 4) "," TT("b", 2, 6) "}", eight, 8), MLRT_ERR_BAD_OFFSETS,
             "tensor 'b' data_offsets [2, 6) overlap the previous tensor ending at 4");
    ST_FAILS(st_raw("{" TT("a", 0, 4) "," TT("b", 0, 4) "}", eight, 8), MLRT_ERR_BAD_OFFSETS, "overlap");
    ST_FAILS(st_raw("{" TT("a", 0, 4) "," TT("b", 8, 12) "}", twelve, 12), MLRT_ERR_BAD_OFFSETS,
             "hole in data: bytes [4, 8) belong to no tensor (next is 'b')");
    ST_FAILS(st_raw("{" TT("a", 4, 8) "}", eight, 8), MLRT_ERR_BAD_OFFSETS, "bytes [0, 4) belong to no tensor");
    ST_FAILS(st_raw("{" TT("a", 0, 4) "}", eight, 8), MLRT_ERR_BAD_OFFSETS,
             "tensors end at byte 4 of the data but the data is 8 bytes");
    ST_FAILS(st_raw("{}", eight, 8), MLRT_ERR_BAD_OFFSETS, "tensors end at byte 0");
    ST_FAILS(st_raw("{\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,4]}}", eight, 8),
             MLRT_ERR_BAD_OFFSETS, "tensor 't' data_offsets [8, 4) end before they begin");
    static const char *const bad[] = {"[0]", "[0,4,8]", "[]", "[-1,4]", "[0,4.0]", "[0,\"4\"]", "{}", "4",
                                      "[0,18446744073709551616]", "null"};
    for (size_t i = 0; i < LEN(bad); i++) {
        char h[200];
        snprintf(h, sizeof h, "{\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":%s}}", bad[i]);
        ST_FAILS(st_raw(h, ONE_F32, 4), MLRT_ERR_BAD_OFFSETS, "tensor 't' data_offsets must be [begin, end] integers");
    }
    ST_FAILS(st_raw("{\"t\":{\"dtype\":\"U8\",\"shape\":[18446744073709551615],"
                    "\"data_offsets\":[0,18446744073709551615]}}", ONE_F32, 4),
             MLRT_ERR_TRUNCATED, "exceed data size 4");
    /* tensors listed out of order are fine when they tile the data; empty tensors too */
    static const char shuffled[] = "{" TT("b", 4, 8) ",\"e\":{\"dtype\":\"F32\",\"shape\":[0,3],\"data_offsets\":[4,4]},"
                                   TT("a", 0, 4) ",\"z\":{\"dtype\":\"F64\",\"shape\":[0],\"data_offsets\":[8,8]}}";
    mlrt__tensorset ts;
    bytes f = st_raw(shuffled, eight, 8);
    CHECK_INT(mlrt__read_safetensors(exact(f.p, f.n), f.n, &ts, NULL), MLRT_OK);
    CHECK_INT(ts.count, 4);
    if (ts.count == 4) {
        CHECK_STR(ts.tensors[0].name, "a");
        CHECK_STR(ts.tensors[1].name, "e");
        CHECK_STR(ts.tensors[2].name, "b");
        CHECK_STR(ts.tensors[3].name, "z");
    }
    mlrt__tensorset_free(&ts);
#undef TT
}

/* Messages quote names cut to 96 bytes; the cut must not split a UTF-8 character, since
 * messages end up in inspect's JSON output and in JavaScript strings. */
static void test_messages_stay_utf8(void) {
    for (int lead = 90; lead <= 97; lead++) {
        char name[160];
        memset(name, 'a', (size_t)lead);
        strcpy(name + lead, "\xe2\x82\xac\xc3\xa9\xf0\x9f\x98\x80.w"); /* 3, 2 and 4-byte characters */
        tspec t[1] = {{name, "F32", 1, {1}, ONE_F32, 4}};
        ST_FAILS(st_build(NULL, t, 1), MLRT_ERR_NOT_A_MODEL, "first tensor is 'aaaa");
        char h[300];
        snprintf(h, sizeof h, "{\"%s\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}}", name);
        ST_FAILS(st_raw(h, ONE_F32, 4), MLRT_ERR_SIZE_MISMATCH, "...' is F32");
    }
    /* control characters in names are escaped, so messages stay one line */
    tspec t[1] = {{"a\\nb\\u0001", "F32", 1, {1}, ONE_F32, 4}};
    ST_FAILS(st_build(NULL, t, 1), MLRT_ERR_NOT_A_MODEL, "'a\\x0ab\\x01'");
}

/* ================================================================= BinTensors */

static void test_bt_crate_test_vector(void) {
    bytes f = {0};
    put(&f, "\x18\0\0\0\0\0\0\0\0\x01\x0b\x03\x01\x02\x03\x00\x18\x01\x06" "attn.0" "\x00      ", 32);
    for (int i = 0; i < 6; i++) put_f32(&f, (float)i);
    f = done(f);
    CHECK_INT(f.n, 56);
    mlrt__tensorset ts;
    mlrt_error e;
    CHECK_INT(mlrt__read_bintensors(exact(f.p, f.n), f.n, &ts, &e), MLRT_OK);
    CHECK_INT(ts.format, MLRT_FORMAT_BINTENSORS);
    CHECK_INT(ts.count, 1);
    CHECK_INT(ts.meta_count, 0);
    CHECK_INT(ts.data_begin, 32);
    if (ts.count == 1) {
        CHECK_STR(ts.tensors[0].name, "attn.0");
        CHECK_INT(ts.tensors[0].dtype, MLRT_F32);
        CHECK_INT(ts.tensors[0].rank, 3);
        CHECK_INT(ts.tensors[0].shape[0], 1);
        CHECK_INT(ts.tensors[0].shape[1], 2);
        CHECK_INT(ts.tensors[0].shape[2], 3);
        CHECK_INT(ts.tensors[0].begin, 0);
        CHECK_INT(ts.tensors[0].end, 24);
    }
    mlrt__tensorset_free(&ts);
    inspected in;
    const mlrt__json *root = INSPECT(f, &in);
    if (root) {
        CHECK_STR(jstr(root, "format"), "bintensors");
        const mlrt__json *t = mlrt__json_get(root, "tensors");
        CHECK(t && t->count == 1);
        CHECK_STR(jstr(jitem(t, 0), "name"), "attn.0");
        CHECK_STR(jstr(jitem(t, 0), "dtype"), "F32");
        const mlrt__json *shape = mlrt__json_get(jitem(t, 0), "shape");
        uint64_t s[3] = {0};
        CHECK(shape && shape->count == 3 && mlrt__json_u64(jitem(shape, 0), &s[0]) &&
              mlrt__json_u64(jitem(shape, 1), &s[1]) && mlrt__json_u64(jitem(shape, 2), &s[2]));
        CHECK(s[0] == 1 && s[1] == 2 && s[2] == 3);
        CHECK_INT(jint(jitem(t, 0), "byteOffset"), 32);
        CHECK_INT(jint(jitem(t, 0), "byteLength"), 24);
        CHECK_STR(jstr(mlrt__json_get(root, "notAModel"), "code"), "NOT_A_MODEL");
        mlrt__json_free(&in.doc);
    }
    BT_FAILS(f, MLRT_ERR_NOT_A_MODEL, "first tensor is 'attn.0'");
}

static void test_bt_early_spec_vector(void) {
    bytes f = {0};
    put(&f, "\x18\0\0\0\0\0\0\0\x00\x01\x08" "weight_1" "\x00\x02\x02\x02\x00\x04       ", 32);
    put(&f, "\x01\x00\x00\x01", 4);
    f = done(f);
    mlrt__tensorset ts;
    mlrt_error e;
    CHECK_INT(mlrt__read_bintensors(exact(f.p, f.n), f.n, &ts, &e), MLRT_OK);
    CHECK_INT(ts.count, 1);
    if (ts.count == 1) {
        CHECK_STR(ts.tensors[0].name, "weight_1");
        CHECK_INT(ts.tensors[0].dtype, MLRT_BOOL);
        CHECK_INT(ts.tensors[0].rank, 2);
        CHECK_INT(ts.tensors[0].shape[0], 2);
        CHECK_INT(ts.tensors[0].shape[1], 2);
        CHECK_INT(ts.tensors[0].end, 4);
    }
    mlrt__tensorset_free(&ts);
    inspected in;
    const mlrt__json *root = INSPECT(f, &in);
    if (root) {
        CHECK_STR(jstr(jitem(mlrt__json_get(root, "tensors"), 0), "name"), "weight_1");
        CHECK_STR(jstr(jitem(mlrt__json_get(root, "tensors"), 0), "dtype"), "BOOL");
        mlrt__json_free(&in.doc);
    }
}

static void test_bt_models_match_safetensors(void) {
    static const int dims[] = {10, 12, 4};
    ref_mlp r;
    ref_make(&r, 2, dims, 61);
    r.act[0] = MLRT_ACT_TANH;
    tspec t[4];
    int n = ref_tensors(&r, FC_NAMES, "F32", 0, t);
    static const char *const meta[] = {"activations", "tanh,softmax", "format", "pt", NULL};
    mlrt_model *st = LOAD_OK(st_build("{\"activations\":\"tanh,softmax\",\"format\":\"pt\"}", t, n));
    mlrt_model *bt = LOAD_OK(bt_build(meta, t, n));
    mlrt_model *bp = LOAD_OK(bt_build_pairs(meta, t, n));
    CHECK_VS_REF(bt, &r);
    CHECK_VS_REF(bp, &r);
    if (!st || !bt || !bp) return;
    CHECK_INT(mlrt_model_format(bt), MLRT_FORMAT_BINTENSORS);
    CHECK_INT(mlrt_model_format(bp), MLRT_FORMAT_BINTENSORS);
    CHECK_INT(mlrt_layer(bt, 0).activation, MLRT_ACT_TANH);
    CHECK_CONTAINS(mlrt_model_info_json(bt), "\"metadata\":{\"activations\":\"tanh,softmax\",\"format\":\"pt\"}");
    float x[3 * 10], ys[3 * 4], yb[3 * 4], yp[3 * 4];
    for (int i = 0; i < 30; i++) x[i] = rng_float(-2, 2);
    CHECK_INT(mlrt_predict_batch(st, x, 3, ys, NULL), MLRT_OK);
    CHECK_INT(mlrt_predict_batch(bt, x, 3, yb, NULL), MLRT_OK);
    CHECK_INT(mlrt_predict_batch(bp, x, 3, yp, NULL), MLRT_OK);
    CHECK(memcmp(ys, yb, sizeof ys) == 0);
    CHECK(memcmp(ys, yp, sizeof ys) == 0);
    /* layers in any file order, no metadata, numbered names */
    static const char *const numbered[] = {"0", "1", "2", "3"};
    r.act[0] = MLRT_ACT_RELU;
    n = ref_tensors(&r, numbered, "F64", 0, t);
    CHECK_VS_REF(LOAD_OK(bt_build(NULL, t, n)), &r);
    n = ref_tensors(&r, FC_NAMES, "F32", 1, t);
    CHECK_VS_REF(LOAD_OK(bt_build(NULL, t, n)), &r);
}

/* Metadata bytes for the malformed cases (no padding unless a test adds it). */
static bytes meta_bytes(const uint8_t *p, size_t n) {
    bytes b = {0};
    put(&b, p, n);
    return b;
}
#define BT_META(...) bt_file(meta_bytes((const uint8_t[]){__VA_ARGS__}, sizeof((const uint8_t[]){__VA_ARGS__})), 0, NULL, 0)
#define BT_META_DATA(data, dlen, ...) \
    bt_file(meta_bytes((const uint8_t[]){__VA_ARGS__}, sizeof((const uint8_t[]){__VA_ARGS__})), 0, data, dlen)

static void test_bt_malformed(void) {
    /* varint tags 254 (u128) and 255 (undefined), as a count and inside a shape */
    BT_FAILS(BT_META(0, 254, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), MLRT_ERR_BAD_HEADER,
             "integer tag 254 at byte 1");
    BT_FAILS(BT_META(0, 255), MLRT_ERR_BAD_HEADER, "integer tag 255");
    BT_FAILS(BT_META(0, 1, 11, 1, 255, 0, 4, 0), MLRT_ERR_BAD_HEADER, "tag 255 at byte 4 in a shape");
    /* truncated varints */
    BT_FAILS(BT_META(0, 251, 1), MLRT_ERR_TRUNCATED, "metadata ends at byte 2 inside the tensor list");
    BT_FAILS(BT_META(0, 252, 1, 0, 0), MLRT_ERR_TRUNCATED, "inside the tensor list");
    BT_FAILS(BT_META(0, 253, 1, 0, 0, 0, 0, 0, 0), MLRT_ERR_TRUNCATED, "inside the tensor list");
    BT_FAILS(BT_META(0, 1, 11, 1, 1, 0, 251), MLRT_ERR_TRUNCATED, "inside data_offsets");
    BT_FAILS(BT_META(0, 1, 11, 1), MLRT_ERR_TRUNCATED, "a shape");
    BT_FAILS(BT_META(0), MLRT_ERR_TRUNCATED, "the tensor list");
    BT_FAILS(BT_META(1), MLRT_ERR_TRUNCATED, "the metadata map");
    BT_READ_FAILS(BT_META(), MLRT_ERR_TRUNCATED, "the metadata option");
    /* counts larger than the bytes left */
    BT_FAILS(BT_META(0, 5), MLRT_ERR_TRUNCATED, "the tensor list declares 5 entries but only 0 metadata bytes remain");
    BT_FAILS(BT_META(0, 251, 0x00, 0x01, 0, 0, 0), MLRT_ERR_TRUNCATED, "declares 256 entries");
    BT_FAILS(BT_META(1, 3, 1, 'k'), MLRT_ERR_TRUNCATED, "the metadata map declares 3 entries");
    BT_FAILS(BT_META(1, 1, 9, 'k'), MLRT_ERR_TRUNCATED, "a metadata key declares 9 entries");
    BT_FAILS(BT_META(0, 1, 11, 7, 1), MLRT_ERR_TRUNCATED, "a shape declares 7 entries");
    BT_FAILS(BT_META(0, 1, 11, 1, 1, 0, 4, 1, 20, 'a', 0), MLRT_ERR_TRUNCATED, "a tensor name declares 20 entries");
    /* the index map */
    static const float two[2] = {1, 2};
    BT_FAILS(BT_META_DATA(ONE_F32, 4, 0, 1, 11, 1, 1, 0, 4, 1, 1, 'a', 1), MLRT_ERR_BAD_HEADER,
             "index map entry 'a' -> 1 is out of range or repeated");
    BT_FAILS(BT_META_DATA(two, 8, 0, 2, 11, 1, 1, 0, 4, 11, 1, 1, 4, 8, 2, 1, 'a', 0, 1, 'b', 0), MLRT_ERR_BAD_HEADER,
             "index map entry 'b' -> 0 is out of range or repeated");
    BT_FAILS(BT_META_DATA(two, 8, 0, 2, 11, 1, 1, 0, 4, 11, 1, 1, 4, 8, 1, 1, 'a', 0), MLRT_ERR_BAD_HEADER,
             "index map has 1 names for 2 tensors");
    BT_FAILS(BT_META_DATA(ONE_F32, 4, 0, 1, 11, 1, 1, 0, 4, 1, 1, 'a', 253, 0, 0, 0, 0, 0, 0, 0, 128),
             MLRT_ERR_BAD_HEADER, "-> 9223372036854775808 is out of range");
    BT_FAILS(BT_META_DATA(ONE_F32, 4, 0, 1, 11, 1, 1, 0, 4, 1, 1, 'a'), MLRT_ERR_TRUNCATED, "the index map");
    /* dtypes */
    BT_FAILS(BT_META_DATA(ONE_F32, 4, 0, 1, 15, 1, 1, 0, 4, 1, 1, 'a', 0), MLRT_ERR_UNKNOWN_DTYPE,
             "unknown dtype discriminant 15");
    BT_FAILS(BT_META_DATA(ONE_F32, 4, 0, 1, 251, 15, 1, 1, 1, 0, 4, 1, 1, 'a', 0), MLRT_ERR_UNKNOWN_DTYPE,
             "discriminant 271");
    /* a discriminant written in a wider varint than needed is still that discriminant */
    BT_FAILS(BT_META_DATA(ONE_F32, 4, 0, 1, 251, 11, 0, 1, 1, 0, 4, 1, 1, 'a', 0), MLRT_ERR_NOT_A_MODEL, "'a'");
    /* invalid UTF-8 in a name and in metadata */
    BT_FAILS(BT_META_DATA(ONE_F32, 4, 0, 1, 11, 1, 1, 0, 4, 1, 2, 0xc0, 0xaf, 0), MLRT_ERR_INVALID_UTF8,
             "a tensor name at byte 9 is not valid UTF-8");
    BT_FAILS(BT_META_DATA(ONE_F32, 4, 0, 1, 11, 1, 1, 0, 4, 1, 3, 0xed, 0xa0, 0x80, 0), MLRT_ERR_INVALID_UTF8,
             "a tensor name");
    BT_FAILS(BT_META(1, 1, 1, 0xe2, 1, 'v', 0, 0), MLRT_ERR_INVALID_UTF8, "a metadata key");
    BT_FAILS(BT_META(1, 1, 1, 'k', 1, 0xff, 0, 0), MLRT_ERR_INVALID_UTF8, "a metadata value");
    /* names: empty, with NUL */
    BT_FAILS(BT_META_DATA(ONE_F32, 4, 0, 1, 11, 1, 1, 0, 4, 1, 0, 0), MLRT_ERR_BAD_HEADER, "tensor 0 has an empty name");
    BT_FAILS(BT_META_DATA(ONE_F32, 4, 0, 1, 11, 1, 1, 0, 4, 1, 2, 'a', 0, 0), MLRT_ERR_BAD_HEADER, "containing NUL");
    /* bytes after the metadata, inside the declared length, are ignored like the crate does (spaces or not) */
    {
        static const char *const names[] = {"a"};
        for (int pad = 0; pad < 2; pad++) {
            inspected in;
            const mlrt__json *root = pad ? INSPECT(BT_META_DATA(ONE_F32, 4, 0, 1, 11, 1, 1, 0, 4, 1, 1, 'a', 0, 0, 0xff, 'x'), &in)
                                        : INSPECT(BT_META_DATA(ONE_F32, 4, 0, 1, 11, 1, 1, 0, 4, 1, 1, 'a', 0, ' ', 'x', ' '), &in);
            if (!root) continue;
            CHECK_STR(jstr(jitem(mlrt__json_get(root, "tensors"), 0), "name"), names[0]);
            mlrt__json_free(&in.doc);
        }
    }
    /* the option tag */
    BT_READ_FAILS(BT_META(2, 0, 0), MLRT_ERR_BAD_HEADER, "metadata option tag is 2, not 0 or 1");
    BT_READ_FAILS(BT_META(0xff, 0, 0), MLRT_ERR_BAD_HEADER, "tag is 255");
    /* duplicates */
    BT_FAILS(BT_META_DATA(two, 8, 0, 2, 11, 1, 1, 0, 4, 11, 1, 1, 4, 8, 2, 1, 'a', 0, 1, 'a', 1),
             MLRT_ERR_DUPLICATE_KEY, "duplicate tensor name 'a'");
    BT_FAILS(BT_META_DATA(ONE_F32, 4, 1, 2, 1, 'k', 1, 'x', 1, 'k', 1, 'y', 1, 11, 1, 1, 0, 4, 1, 1, 'a', 0),
             MLRT_ERR_DUPLICATE_KEY, "duplicate metadata key 'k'");
    static const uint8_t pairs_dup[] = {0, 2, 1, 'a', 11, 1, 1, 0, 4, 1, 'a', 11, 1, 1, 4, 8};
    BT_FAILS(bt_file(meta_bytes(pairs_dup, sizeof pairs_dup), 1, two, 8), MLRT_ERR_DUPLICATE_KEY,
             "duplicate tensor name 'a'");
    /* an early-layout file is judged as one: its own error, not the crate layout's parse error */
    static const uint8_t pairs_span[] = {0, 1, 1, 'a', 11, 1, 2, 0, 4};
    BT_FAILS(bt_file(meta_bytes(pairs_span, sizeof pairs_span), 1, ONE_F32, 4), MLRT_ERR_SIZE_MISMATCH,
             "tensor 'a' is F32 with 2 elements (8 bytes) but data_offsets [0, 4) span 4 bytes");
    static const uint8_t pairs_empty[] = {0, 1, 0, 11, 1, 1, 0, 4};
    BT_FAILS(bt_file(meta_bytes(pairs_empty, sizeof pairs_empty), 1, ONE_F32, 4), MLRT_ERR_BAD_HEADER,
             "empty name");
    /* rank */
    /* (shape entries of 200: these bytes do not also parse as the early layout) */
    BT_FAILS(BT_META_DATA(ONE_F32, 4, 0, 1, 11, 9, 200, 200, 200, 200, 200, 200, 200, 200, 200, 0, 4, 1, 1, 'a', 0),
             MLRT_ERR_BAD_DIMENSIONS, "a tensor has 9 dimensions, more than 8");
    /* header length */
    bytes big = BT_META(0, 0);
    big.p[0] = 200;
    BT_READ_FAILS(big, MLRT_ERR_TRUNCATED, "metadata length 200 exceeds the 2 bytes after it: the file is cut short");
    LOAD_FAILS(big, MLRT_ERR_TRUNCATED, "bintensors: ", "cut short");
    bytes huge = BT_META(0, 0);
    memcpy(huge.p, "\x01\xe1\xf5\x05\0\0\0\0", 8); /* 100000001 */
    BT_READ_FAILS(huge, MLRT_ERR_HEADER_TOO_LARGE, "100000000-byte limit");
    memset(huge.p, 0xff, 8);
    BT_READ_FAILS(huge, MLRT_ERR_HEADER_TOO_LARGE, "metadata length 18446744073709551615");
    for (size_t n = 0; n < 8; n++) BT_READ_FAILS(prefix(BT_META(0, 0), n), MLRT_ERR_TRUNCATED, "too short");
    /* an empty but valid file: no tensors */
    BT_FAILS(BT_META(0, 0, 0), MLRT_ERR_NOT_A_MODEL, "no tensors");
}

/* Duplicate metadata keys are found by sorting, not by comparing every pair: a 100 MB
 * header can hold millions of keys (this one: 180000 keys, 1.4 MB, in well under a second;
 * the pairwise check took minutes, and the watchdog fails the test). */
static void test_bt_many_metadata_keys(void) {
    for (int dup = 0; dup <= 1; dup++) {
        const size_t n = 180000;
        bytes m = {0};
        put_u8(&m, 1);
        bt_varint(&m, n);
        for (size_t i = 0; i < n; i++) {
            size_t k = dup && i == n - 1 ? 12345 : i;
            char key[5] = {(char)('a' + k % 26), (char)('a' + k / 26 % 26), (char)('a' + k / 676 % 26),
                           (char)('a' + k / 17576 % 26), 0};
            bt_string(&m, key);
            bt_string(&m, "");
        }
        put_u8(&m, 0); /* no tensors */
        put_u8(&m, 0);
        bytes f = bt_file(m, 1, NULL, 0);
        if (!dup) {
            BT_FAILS(f, MLRT_ERR_NOT_A_MODEL, "no tensors");
        } else {
            char want[64];
            size_t k = 12345;
            snprintf(want, sizeof want, "duplicate metadata key '%c%c%c%c'", (char)('a' + k % 26),
                     (char)('a' + k / 26 % 26), (char)('a' + k / 676 % 26), (char)('a' + k / 17576 % 26));
            BT_FAILS(f, MLRT_ERR_DUPLICATE_KEY, want);
        }
    }
}

static void test_bt_offsets(void) {
    static const float f3[3] = {1, 2, 3};
    /* one F32 [1] tensor 'a' at [b, e), data of dlen bytes */
#define BT_ONE(b, e, data, dlen) BT_META_DATA(data, dlen, 0, 1, 11, 1, 1, b, e, 1, 1, 'a', 0)
    BT_FAILS(BT_ONE(0, 4, NULL, 0), MLRT_ERR_TRUNCATED, "cut short: tensor 'a' data_offsets [0, 4) exceed data size 0");
    BT_FAILS(BT_ONE(4, 8, f3, 8), MLRT_ERR_BAD_OFFSETS, "bytes [0, 4) belong to no tensor (next is 'a')");
    BT_FAILS(BT_ONE(0, 4, f3, 8), MLRT_ERR_BAD_OFFSETS, "tensors end at byte 4 of the data but the data is 8 bytes");
    BT_FAILS(BT_ONE(4, 0, f3, 4), MLRT_ERR_BAD_OFFSETS, "end before they begin");
    BT_FAILS(BT_ONE(0, 8, f3, 8), MLRT_ERR_SIZE_MISMATCH, "tensor 'a' is F32 with 1 elements (4 bytes)");
    BT_FAILS(BT_META_DATA(f3, 8, 0, 2, 11, 1, 1, 0, 4, 11, 1, 1, 2, 6, 2, 1, 'a', 0, 1, 'b', 1), MLRT_ERR_BAD_OFFSETS,
             "tensor 1 'b' starts at data byte 2, before tensor 0 'a' ends at 4");
    /* stored out of offset order: refused as the crate does, though the two tile the data */
    BT_FAILS(BT_META_DATA(f3, 8, 0, 2, 11, 1, 1, 4, 8, 11, 1, 1, 0, 4, 2, 1, 'a', 0, 1, 'b', 1), MLRT_ERR_BAD_OFFSETS,
             "must be stored in the order of their offsets");
    BT_FAILS(BT_META_DATA(f3, 12, 0, 2, 11, 1, 1, 0, 4, 11, 1, 1, 8, 12, 2, 1, 'a', 0, 1, 'b', 1),
             MLRT_ERR_BAD_OFFSETS, "hole in data: bytes [4, 8)");
    BT_FAILS(BT_META_DATA(f3, 4, 0, 1, 1, 2, 253, 0, 0, 0, 0, 1, 0, 0, 0, 253, 0, 0, 0, 0, 1, 0, 0, 0, 0, 4, 1, 1, 'a', 0),
             MLRT_ERR_SHAPE_OVERFLOW, "tensor 'a' shape product overflows");
#undef BT_ONE
}

/* ================================================================ JSON parser */

static mlrt_status parse(const char *s, mlrt__json_doc *doc, mlrt_error *e) {
    return mlrt__json_parse(exact(s, strlen(s)), strlen(s), "test", doc, e);
}

static void test_json_valid(void) {
    mlrt__json_doc doc;
    mlrt_error e;
    static const char src[] =
        " {\"a\" : [1, -2.5e+3, 0, 0.125, 1E-2, true, false, null, \"x\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\u20AC"
        "\\ud83d\\ude00\\u0000y\"],\n\t\"b\":{}, \"c\":[], \"\":{\"d\":[[[]]]}, \"\xc3\xa9\":\"\xf0\x9f\x98\x80\"}\r\n";
    CHECK_INT(parse(src, &doc, &e), MLRT_OK);
    const mlrt__json *r = doc.root;
    CHECK(r && r->type == MLRT__JSON_OBJECT && r->count == 5);
    const mlrt__json *a = mlrt__json_get(r, "a");
    CHECK(a && a->type == MLRT__JSON_ARRAY && a->count == 9);
    static const char *const nums[] = {"1", "-2.5e+3", "0", "0.125", "1E-2"};
    for (int i = 0; i < 5; i++) {
        const mlrt__json *v = jitem(a, (size_t)i);
        CHECK(v && v->type == MLRT__JSON_NUMBER && v->len == strlen(nums[i]) && memcmp(v->str, nums[i], v->len) == 0);
    }
    CHECK(jitem(a, 5) && jitem(a, 5)->type == MLRT__JSON_TRUE);
    CHECK(jitem(a, 6) && jitem(a, 6)->type == MLRT__JSON_FALSE);
    CHECK(jitem(a, 7) && jitem(a, 7)->type == MLRT__JSON_NULL);
    const mlrt__json *s = jitem(a, 8);
    static const char want[] = "x\"\\/\b\f\n\r\t\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\0y";
    CHECK(s && s->type == MLRT__JSON_STRING && s->len == sizeof want - 1 && memcmp(s->str, want, sizeof want) == 0);
    CHECK(mlrt__json_get(r, "b") && mlrt__json_get(r, "b")->count == 0 && mlrt__json_get(r, "b")->child == NULL);
    CHECK(mlrt__json_get(r, "c") && mlrt__json_get(r, "c")->type == MLRT__JSON_ARRAY);
    const mlrt__json *empty_key = mlrt__json_get(r, "");
    CHECK(empty_key && empty_key->key_len == 0 && mlrt__json_get(empty_key, "d"));
    CHECK_STR(jstr(r, "\xc3\xa9"), "\xf0\x9f\x98\x80");
    CHECK(mlrt__json_get(r, "zz") == NULL);
    CHECK(mlrt__json_get(a, "a") == NULL); /* not an object */
    CHECK(mlrt__json_get(NULL, "a") == NULL);
    mlrt__json_free(&doc);
    mlrt__json_free(&doc); /* idempotent */
    /* any value at the top level */
    static const char *const scalars[] = {"1", "-0", "\"s\"", "null", " true ", "[]", "{}", "0e0", "-0.0E+00"};
    for (size_t i = 0; i < LEN(scalars); i++) {
        CHECK_INT(parse(scalars[i], &doc, &e), MLRT_OK);
        mlrt__json_free(&doc);
    }
    /* upper- and lower-case hex, escaped NUL in keys */
    CHECK_INT(parse("{\"\\u00E9\\u00e9\":1,\"k\\u0000\":2,\"k\":3}", &doc, &e), MLRT_OK);
    if (doc.root) {
        CHECK_STR(doc.root->child->key, "\xc3\xa9\xc3\xa9");
        CHECK_INT(doc.root->child->next->key_len, 2);
        CHECK_INT(jint(doc.root, "k"), 3);
    }
    mlrt__json_free(&doc);
    /* many keys: duplicates found anywhere among them */
    bytes big = {0};
    put_str(&big, "{");
    for (int i = 0; i < 3000; i++) put_fmt(&big, "%s\"k%d\":%d", i ? "," : "", i, i);
    put_str(&big, ",\"k1234\":0}");
    big = done(big);
    CHECK_INT(mlrt__json_parse(exact(big.p, big.n), big.n, "test", &doc, &e), MLRT_ERR_DUPLICATE_KEY);
    CHECK_CONTAINS(e.message, "test: duplicate key 'k1234'");
    bytes good = {0};
    put(&good, big.p, big.n - strlen(",\"k1234\":0}"));
    put_str(&good, "}");
    good = done(good);
    CHECK_INT(mlrt__json_parse(exact(good.p, good.n), good.n, "test", &doc, &e), MLRT_OK);
    if (doc.root) {
        CHECK_INT(doc.root->count, 3000);
        CHECK_INT(jint(doc.root, "k2999"), 2999);
    }
    mlrt__json_free(&doc);
}

static void test_json_invalid(void) {
    mlrt__json_doc doc;
    mlrt_error e;
    static const char *const bad[] = {"", " ", "{", "}", "[", "]", "[1,]", "{\"a\"}", "{\"a\":}", "\"abc", "01",
                                      "1.", "-", "--1", "1e+", "nan", "NaN", "[Infinity]", "'a'", "[1 2]", "{}}",
                                      "\"\\uD800\"", "\"\\uDFFF\"", "\"\\uD800\\n\"", "\"\\uZZZZ\"", "\"\\a\"",
                                      "\"\x01\"", "\"\x1f\"", "truex", "[true false]", "{\"a\":1,}", "[,]"};
    for (size_t i = 0; i < LEN(bad); i++) {
        CHECK_INT(parse(bad[i], &doc, &e), MLRT_ERR_INVALID_JSON);
        CHECK(doc.root == NULL && doc.blocks == NULL);
        CHECK_CONTAINS(e.message, "test: invalid JSON at byte ");
    }
    CHECK_INT(parse("\"\xc0\x80\"", &doc, &e), MLRT_ERR_INVALID_UTF8);
    CHECK_CONTAINS(e.message, "test: not valid UTF-8");
    CHECK_INT(parse("{\"a\":1,\"a\":2}", &doc, &e), MLRT_ERR_DUPLICATE_KEY);
    CHECK_INT(parse("[{\"x\":[{\"a\":1,\"b\":2,\"a\":3}]}]", &doc, &e), MLRT_ERR_DUPLICATE_KEY);
    CHECK_CONTAINS(e.message, "'a'");
    CHECK(doc.root == NULL && doc.blocks == NULL);
    /* nesting: 64 levels parse, 65 do not */
    for (int depth = 1; depth <= 66; depth++) {
        char s[200];
        for (int i = 0; i < depth; i++) s[i] = '[';
        for (int i = 0; i < depth; i++) s[depth + i] = ']';
        s[2 * depth] = 0;
        mlrt_status st = parse(s, &doc, &e);
        CHECK_INT(st, depth <= 64 ? MLRT_OK : MLRT_ERR_INVALID_JSON);
        if (st) CHECK_CONTAINS(e.message, "nesting too deep");
        mlrt__json_free(&doc);
    }
    /* a very deep document is refused without recursing through it */
    size_t n = 100000;
    char *deep = tmalloc(n + 1);
    memset(deep, '[', n);
    CHECK_INT(mlrt__json_parse((const uint8_t *)deep, n, "test", &doc, &e), MLRT_ERR_INVALID_JSON);
    CHECK_INT(parse("[1]", &doc, NULL), MLRT_OK); /* err may be NULL */
    mlrt__json_free(&doc);
    CHECK_INT(parse("[1", &doc, NULL), MLRT_ERR_INVALID_JSON);
}

static void test_json_u64(void) {
    mlrt__json_doc doc;
    mlrt_error e;
    CHECK_INT(parse("[0, 18446744073709551615, 18446744073709551616, -1, 1.0, 1e3, -0, 99999999999999999999, "
                    "\"1\", 42, 10E0]", &doc, &e), MLRT_OK);
    if (!doc.root) return;
    uint64_t v = 12345;
    CHECK(mlrt__json_u64(jitem(doc.root, 0), &v) && v == 0);
    CHECK(mlrt__json_u64(jitem(doc.root, 1), &v) && v == UINT64_MAX);
    v = 7;
    CHECK(!mlrt__json_u64(jitem(doc.root, 2), &v));
    CHECK(v == 7); /* untouched on failure */
    CHECK(!mlrt__json_u64(jitem(doc.root, 3), &v));
    CHECK(!mlrt__json_u64(jitem(doc.root, 4), &v));
    CHECK(!mlrt__json_u64(jitem(doc.root, 5), &v));
    CHECK(!mlrt__json_u64(jitem(doc.root, 6), &v));
    CHECK(!mlrt__json_u64(jitem(doc.root, 7), &v));
    CHECK(!mlrt__json_u64(jitem(doc.root, 8), &v)); /* a string */
    CHECK(mlrt__json_u64(jitem(doc.root, 9), &v) && v == 42);
    CHECK(!mlrt__json_u64(jitem(doc.root, 10), &v));
    CHECK(!mlrt__json_u64(NULL, &v));
    CHECK(!mlrt__json_u64(doc.root, &v)); /* an array */
    mlrt__json_free(&doc);
    CHECK_STR(mlrt__json_type_name(MLRT__JSON_OBJECT), "object");
    CHECK_STR(mlrt__json_type_name(MLRT__JSON_NUMBER), "number");
}

/* ============================================================ batch vs single */

/* A row's outputs must not depend on the batch it is predicted in: tiles of 4 rows and of 64
 * rows use other code paths than single rows. Widths not multiples of 8 exercise the panel tails. */
static void test_batch_equals_single_bit_for_bit(void) {
    static const int dims_a[] = {13, 19, 7};
    static const int dims_b[] = {5, 17, 9, 3};
    static const int dims_c[] = {37, 41, 33, 2}; /* 6 and 5 panels: groups of four panels + tails */
    const int *dims[] = {dims_a, dims_b, dims_c};
    const int nls[] = {2, 3, 3};
    static const char *const names[] = {"l1.weight", "l1.bias", "l2.weight", "l2.bias", "l3.weight", "l3.bias"};
    for (int c = 0; c < 3; c++) {
        ref_mlp r;
        ref_make(&r, nls[c], dims[c], 70 + (uint32_t)c);
        if (c == 1) r.act[1] = MLRT_ACT_TANH;
        tspec t[6];
        int n = ref_tensors(&r, names, "F32", 0, t);
        mlrt_model *m = LOAD_OK(st_build(c == 1 ? "{\"activations\":\"relu,tanh,softmax\"}" : NULL, t, n));
        if (!m) continue;
        size_t in = (size_t)dims[c][0], out = (size_t)dims[c][nls[c]];
        const size_t N = 70;
        float *x = tmalloc(N * in * sizeof(float)), *single = tmalloc(N * out * sizeof(float));
        float *batch = tmalloc(N * out * sizeof(float));
        for (size_t k = 0; k < N * in; k++) x[k] = rng_float(-3, 3);
        for (size_t row = 0; row < N; row++) CHECK_INT(mlrt_predict(m, x + row * in, single + row * out, NULL), MLRT_OK);
        int mismatched = 0;
        for (size_t bn = 1; bn <= N; bn++) {
            memset(batch, 0xff, N * out * sizeof(float));
            CHECK_INT(mlrt_predict_batch(m, x, bn, batch, NULL), MLRT_OK);
            if (memcmp(batch, single, bn * out * sizeof(float)) != 0) {
                if (!mismatched++) fprintf(stderr, "  model %d: batch of %zu differs from single predictions\n", c, bn);
            }
            /* nothing written past the batch */
            uint32_t tail;
            if (bn < N) { memcpy(&tail, batch + bn * out, 4); CHECK(tail == 0xffffffffu); }
        }
        CHECK_INT(mismatched, 0);
        CHECK_VS_REF(m, &r);
    }
}

/* ====================================================== trained model files */

static bytes read_file_or_empty(const char *path) {
    bytes b = {0};
    FILE *f = fopen(path, "rb");
    if (!f) return b;
    char tmp[65536];
    size_t n;
    while ((n = fread(tmp, 1, sizeof tmp, f)) > 0) put(&b, tmp, n);
    fclose(f);
    return done(b);
}

/* When build/models exists (make builds it), the five trained files load and agree. */
static void test_trained_models_if_present(void) {
    static const char *const files[] = {"build/models/mnist-mlp.f64.bin", "build/models/mnist-mlp.f32.bin",
                                        "build/models/mnist-mlp.safetensors",
                                        "build/models/mnist-mlp.aprender.safetensors",
                                        "build/models/mnist-mlp.bintensors"};
    mlrt_model *m[5] = {0};
    int found = 0;
    for (int i = 0; i < 5; i++) {
        bytes f = read_file_or_empty(files[i]);
        if (!f.n) continue;
        found++;
        mlrt_error e;
        m[i] = keep_model(mlrt_load_from_bytes(exact(f.p, f.n), f.n, &e));
        check_at(m[i] != NULL, __FILE__, __LINE__, "%s: %s: %s", files[i], mlrt_status_name(e.code), e.message);
    }
    if (!found) { fprintf(stderr, "  (build/models not present: skipped)\n"); return; }
    float x[784], y0[64], y[64];
    rng_seed(5);
    for (int i = 0; i < 784; i++) x[i] = rng_float(0, 1);
    int have0 = 0;
    for (int i = 0; i < 5; i++) {
        if (!m[i] || mlrt_input_size(m[i]) != 784 || mlrt_output_size(m[i]) > 64) continue;
        CHECK_INT(mlrt_predict(m[i], x, have0 ? y : y0, NULL), MLRT_OK);
        if (have0) for (size_t o = 0; o < mlrt_output_size(m[i]); o++) CHECK_NEAR(y[o], y0[o], 1e-4);
        have0 = 1;
    }
}

/* ======================================================================= main */

#define TEST_TIMEOUT_S 60

#include "test_apr.c"
#include "test_quant.c"
#include "test_trees.c"
#include "test_layout.c"
#include "test_onnx.c"
#include "test_text.c" /* the tokenizer (issue 20) */

typedef struct test_case {
    const char *name;
    void (*fn)(void);
} test_case;
#define T(fn) {#fn, fn}
static const test_case TESTS[] = {
    T(test_status_names),
    T(test_dtype_format_kind_activation_names),
    T(test_api_misuse),
    T(test_bin_f32_f64_predictions),
    T(test_bin_inspect),
    T(test_bin_truncated_at_every_section),
    T(test_bin_bad_dimensions),
    T(test_bin_non_finite_weights),
    T(test_st_f32_f64_models),
    T(test_st_f16_bf16_exact_values),
    T(test_st_pytorch_names),
    T(test_st_layer_limit),
    T(test_st_aprender_numbered),
    T(test_st_metadata_activations),
    T(test_st_regression),
    T(test_st_not_a_model),
    T(test_st_header_length),
    T(test_st_invalid_utf8),
    T(test_st_invalid_json),
    T(test_st_duplicate_keys),
    T(test_st_bad_header_fields),
    T(test_st_dtypes),
    T(test_st_shapes),
    T(test_st_offsets),
    T(test_messages_stay_utf8),
    T(test_bt_crate_test_vector),
    T(test_bt_early_spec_vector),
    T(test_bt_models_match_safetensors),
    T(test_bt_malformed),
    T(test_bt_many_metadata_keys),
    T(test_bt_offsets),
    T(test_json_valid),
    T(test_json_invalid),
    T(test_json_u64),
    T(test_batch_equals_single_bit_for_bit),
    T(test_trained_models_if_present),
    T(test_apr_crc32_check_values),
    T(test_apr_golden_v1),
    T(test_apr_golden_v2),
    T(test_apr_v1_regressions),
    T(test_apr_v1_sequential_matches_bin),
    T(test_apr_v1_header_and_sections),
    T(test_apr_v1_expect),
    T(test_apr_v1_metadata),
    T(test_apr_msgpack_types),
    T(test_apr_msgpack_malformed),
    T(test_apr_shortest_floats),
    T(test_apr_v2_models_match_safetensors),
    T(test_apr_v2_dtypes),
    T(test_apr_v2_malformed),
    T(test_quant_kernels_odd_shapes),
    T(test_quant_layouts_and_groups),
    T(test_quant_extreme_values),
    T(test_quant_models_from_files),
    T(test_quant_malformed),
    T(test_quant_gguf_k_quants),
    T(test_trees_spec_vectors),
    T(test_trees_deep_and_classes),
    T(test_trees_forest_regressor),
    T(test_trees_malformed),
    T(test_layout_decided_by_the_file),
    T(test_layout_guessed_and_overridden),
    T(test_dense_pack_f32_matches_definition),
    T(test_model_fork_predicts_as_its_parent),
    T(test_layer_slices_give_predict_bits),
    T(test_pb_vectors),
    T(test_pb_depth_limit),
    T(test_onnx_tiny_graph),
    T(test_onnx_zoo_if_present),
    T(test_text_unicode_tables),
    T(test_text_engine_spec_cases),
    T(test_text_pairs_truncation_batch),
    T(test_text_readers_refuse_every_prefix),
    T(test_text_vocab_txt),
};

static int g_passed, g_failed;

static void on_timeout(int sig) {
    (void)sig;
    char msg[256];
    int n = snprintf(msg, sizeof msg, "TIMEOUT %s (over %d s)\n%d passed, %d failed\n", g_test_name, TEST_TIMEOUT_S,
                     g_passed, g_failed + 1);
    if (n > 0 && write(STDOUT_FILENO, msg, (size_t)n) < 0) _exit(2);
    _exit(1);
}

int main(int argc, char **argv) {
    signal(SIGALRM, on_timeout);
    for (size_t i = 0; i < LEN(TESTS); i++) {
        if (argc > 1 && !strstr(TESTS[i].name, argv[1])) continue;
        g_test_name = TESTS[i].name;
        g_failed_checks = 0;
        fflush(stdout);
        alarm(TEST_TIMEOUT_S);
        TESTS[i].fn();
        alarm(0);
        free_test_memory();
        if (g_failed_checks) {
            g_failed++;
            fprintf(stderr, "FAIL %s (%d checks)\n", TESTS[i].name, g_failed_checks);
        } else {
            g_passed++;
            printf("ok   %s\n", TESTS[i].name);
        }
    }
    free(g_tmp);
    free(g_models);
    fflush(stderr);
    printf("%d passed, %d failed\n", g_passed, g_failed);
    return g_failed ? 1 : 0;
}
