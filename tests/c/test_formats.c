/* test_formats.c — the raw .bin and SafeTensors models: predictions against a reference in double, f16 and
 * bf16, PyTorch and aprender naming, activations from metadata, regressions, what is not a model. */
#include "builders.h"

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

const test_case formats_tests[] = {
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
    {0},
};
