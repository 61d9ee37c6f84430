/* test_apr.c — .apr v1/v2 containers, MessagePack metadata and float formatting (the cases mirror
 * tests/apr.test.mjs natively). */
#include "builders.h"

/* ------------------------------------------------------------------- golden */

static const char GOLDEN_V1[] =
    "4150524e010001004a0000003d0000003d000000000055000000000000000000"
    "83aa637265617465645f6174aa31373030303030303030b0617072656e646572"
    "5f76657273696f6eac302e302e302d676f6c64656eaa6d6f64656c5f6e616d65"
    "a9676f6c64656e2d76310900000000000000676f6c64656e5f76310800000000"
    "0000000000803f000000400000003f000000bf00008040000000c00000803e00"
    "0000410000003e65a04859";

static void test_apr_crc32_check_values(void) {
    CHECK_INT(mlrt__crc32((const uint8_t *)"123456789", 9), 0xCBF43926u);
    CHECK_INT(mlrt__crc32((const uint8_t *)"", 0), 0);
    CHECK_INT(mlrt__crc32((const uint8_t[]){0x00}, 1), 0xD202EF8Du);
    CHECK_INT(mlrt__crc32((const uint8_t[]){0xFF}, 1), 0xFF000000u);
}

static void test_apr_golden_v1(void) {
    bytes g = from_hex(GOLDEN_V1);
    CHECK_INT(g.n, 171);
    CHECK_INT(mlrt__crc32(g.p, g.n - 4), 0x5948A065u);
    inspected ins;
    const mlrt__json *apr = inspect_apr(g, &ins);
    CHECK_STR(jstr(ins.doc.root, "format"), "apr");
    CHECK_STR(jstr(apr, "modelType"), "LinearRegression");
    CHECK_STR(jstr(apr, "version"), "1.0");
    CHECK_STR(jstr(apr, "compression"), "None");
    CHECK_INT(jint(apr, "qualityScore"), 85);
    CHECK_INT(jint(apr, "uncompressedSize"), 61);
    CHECK_INT(jint(mlrt__json_get(apr, "payloadBytes"), "byteOffset"), 106);
    const mlrt__json *meta = mlrt__json_get(ins.doc.root, "metadata");
    CHECK_STR(jstr(meta, "created_at"), "1700000000");
    CHECK_STR(jstr(meta, "aprender_version"), "0.0.0-golden");
    CHECK_STR(jstr(meta, "model_name"), "golden-v1");
    CHECK_STR(jstr(mlrt__json_get(ins.doc.root, "notAModel"), "code"), "BAD_PAYLOAD");
    mlrt__json_free(&ins.doc);
    APR_FAILS(g, MLRT_ERR_BAD_PAYLOAD, "LinearRegression payload byte 0: the coefficients' Option tag is 9");
}

static const float GOLDEN_W[8] = {1, 2, 0.5f, -0.5f, 4, -2, 0.25f, 8};
static const float GOLDEN_B[1] = {0.125f};
static const char GOLDEN_V2_META[] =
    "{\"model_type\":\"linear_regression\",\"name\":\"golden-v2\",\"license\":null,\"data_source\":null,"
    "\"data_license\":null,\"version\":\"0.0.0-golden\",\"created_at\":\"1700000000\",\"total_size\":0,\"param_count\":8}";

static bytes golden_v2(void) {
    v2t t[2] = {{"bias", 0, 1, {1}, GOLDEN_B, 4}, {"weights", 0, 1, {8}, GOLDEN_W, 32}};
    return v2_file(GOLDEN_V2_META, t, 2);
}

static void test_apr_golden_v2(void) {
    bytes g = golden_v2();
    CHECK_INT(g.n, 516);
    CHECK_INT(mlrt__rd_u32(g.p + 40), 0x3BC08C02u);
    CHECK_INT(mlrt__rd_u32(g.p + 512), 0x550F3F35u);
    mlrt_model *m = LOAD_OK(g);
    if (!m) return;
    CHECK_INT(mlrt_model_format(m), MLRT_FORMAT_APR);
    CHECK_INT(mlrt_model_kind(m), MLRT_KIND_LINEAR_REGRESSION);
    float x[8] = {1, 1, 1, 1, 1, 1, 1, 1}, y;
    CHECK_INT(mlrt_predict(m, x, &y, NULL), MLRT_OK);
    CHECK_BITS(y, 13.375f);
    CHECK_CONTAINS(mlrt_model_info_json(m), "\"metadata\":{\"model_type\":\"linear_regression\",\"name\":\"golden-v2\"");
    CHECK_CONTAINS(mlrt_model_info_json(m), "\"apr\":{\"magic\":\"APR\\u0000\",\"version\":\"2.0\"");
    bytes legacy = patched_u8(g, 3, '2', 1);
    LOAD_OK(legacy);
    /* without model_type the same tensors are no model: 'weights'/'bias' need it */
    v2t t[2] = {{"bias", 0, 1, {1}, GOLDEN_B, 4}, {"weights", 0, 1, {8}, GOLDEN_W, 32}};
    APR_FAILS(v2_file("{}", t, 2), MLRT_ERR_NOT_A_MODEL, "no model recognised");
    LOAD_OK(v2_file("{\"model_type\":\"LogisticRegression\"}", t, 2));
}

/* ------------------------------------------------------------ v1 payloads */

static void test_apr_v1_regressions(void) {
    bytes lin = from_hex("01 0200000000000000 00000040 000080bf 0000003f 01");
    mlrt_model *m = LOAD_OK(V1(1, lin));
    float x[2] = {3, -2}, y;
    if (m) {
        CHECK_INT(mlrt_predict(m, x, &y, NULL), MLRT_OK);
        CHECK_BITS(y, 8.5f);
        CHECK_CONTAINS(mlrt_model_info_json(m), "\"modelType\":\"LinearRegression\"");
        CHECK_CONTAINS(mlrt_model_info_json(m), "\"metadata\":{\"created_at\":\"1700000000\",\"aprender_version\":\"0.0.0\"}");
    }
    APR_FAILS(V1(1, from_hex("00 00000000 01")), MLRT_ERR_NOT_A_MODEL, "never fitted");
    APR_FAILS(V1(1, from_hex("01 0200000000000000 00000040")), MLRT_ERR_TRUNCATED, "coefficients declares 2 floats but 4 bytes remain");
    APR_FAILS(V1(1, cat(lin, from_hex("00"))), MLRT_ERR_SIZE_MISMATCH, "payload is 23 bytes but its fields end at byte 22");
    APR_FAILS(V1(1, from_hex("01 0100000000000000 0000c07f 00000000 01")), MLRT_ERR_NON_FINITE, "'coefficients'");
    APR_FAILS(V1(1, from_hex("01 0100000000000000 0000803f 00000000 05")), MLRT_ERR_BAD_PAYLOAD, "fit_intercept is 5");

    bytes l8 = from_hex("01 0100000000000000 0000803f 0000803e 0ad7233c e803000000000000 17b7d138"
                        "02000000 0200000000000000 0000803f 00004040 00000000 02000000 2000000000000000");
    bytes l5 = prefix(l8, 33);
    for (int k = 0; k < 2; k++) {
        m = LOAD_OK(V1(2, k ? l5 : l8));
        if (!m) continue;
        CHECK_INT(mlrt_model_kind(m), MLRT_KIND_LOGISTIC_REGRESSION);
        float in[3] = {-0.25f, 1, -5}, out[3];
        CHECK_INT(mlrt_predict_batch(m, in, 3, out, NULL), MLRT_OK);
        for (int i = 0; i < 3; i++) CHECK_NEAR(out[i], 1 / (1 + exp(-(in[i] + 0.25))), 1e-6);
    }
    bytes bad = copy_of(l8.p, l8.n);
    bad.p[33] = 9;
    APR_FAILS(V1(2, bad), MLRT_ERR_BAD_PAYLOAD, "class_weight variant 9 is not one of 0..2");
    APR_FAILS(V1(2, cat(l5, from_hex("00000000 00000000 00000000 00"))), MLRT_ERR_SIZE_MISMATCH,
              "the 5-field layout ends at byte 33, the 8-field layout at byte 45");
}

/* A NeuralSequential payload (aprender's MNIST example) of a 2-layer reference. */
static bytes sequential_payload(const ref_mlp *r) {
    bytes p = {0};
    int in = r->dim[0], hid = r->dim[1], out = r->dim[2];
    put_u64(&p, (uint64_t)in * hid);
    for (int i = 0; i < in; i++)
        for (int h = 0; h < hid; h++) put_f32(&p, r->w[0][(size_t)h * in + i]);
    put_vec_f32(&p, r->b[0], (size_t)hid);
    put_u64(&p, (uint64_t)hid * out);
    for (int h = 0; h < hid; h++)
        for (int o = 0; o < out; o++) put_f32(&p, r->w[1][(size_t)o * hid + h]);
    put_vec_f32(&p, r->b[1], (size_t)out);
    return done(p);
}

static void test_apr_v1_sequential_matches_bin(void) {
    static const int dims[] = {13, 21, 5};
    ref_mlp r;
    ref_make(&r, 2, dims, 41);
    bytes payload = sequential_payload(&r);
    mlrt_model *a = LOAD_OK(V1(0x20, payload)), *b = LOAD_OK(bin_from_ref(&r, 0));
    CHECK_VS_REF(a, &r);
    if (!a || !b) return;
    float x[4 * 13], ya[4 * 5], yb[4 * 5];
    for (size_t i = 0; i < LEN(x); i++) x[i] = rng_float(-1, 1);
    CHECK_INT(mlrt_predict_batch(a, x, 4, ya, NULL), MLRT_OK);
    CHECK_INT(mlrt_predict_batch(b, x, 4, yb, NULL), MLRT_OK);
    CHECK(memcmp(ya, yb, sizeof ya) == 0);

    /* stored LZ4 (literals-only block) and zstd (one raw block) decode to the same model */
    bytes lz = {0};
    put_u32(&lz, (uint32_t)payload.n);
    put_u8(&lz, 0xf0);
    for (size_t left = payload.n - 15; ; left -= 255) {
        put_u8(&lz, (uint8_t)(left < 255 ? left : 255));
        if (left < 255) break;
    }
    put(&lz, payload.p, payload.n);
    mlrt_model *c = LOAD_OK(v1_file((v1_spec){0x20, 3, 0, 0, 0, (int64_t)payload.n, 0}, default_meta(), done(lz)));
    bytes zs = {0};
    put_u32(&zs, 0xFD2FB528u); /* magic; Frame_Header_Descriptor 0: no content size, then a window descriptor */
    put_u8(&zs, 0x00), put_u8(&zs, 0x58); /* window 2^(10+11) */
    put_u8(&zs, (uint8_t)(1 | payload.n << 3)), put_u8(&zs, (uint8_t)(payload.n >> 5)), put_u8(&zs, (uint8_t)(payload.n >> 13));
    put(&zs, payload.p, payload.n);
    zs = done(zs);
    mlrt_model *d = LOAD_OK(v1_file((v1_spec){0x20, 1, 0, 0, 0, (int64_t)payload.n, 0}, default_meta(), zs));
    float yc[4 * 5], yd[4 * 5];
    if (c && d) {
        CHECK_INT(mlrt_predict_batch(c, x, 4, yc, NULL), MLRT_OK);
        CHECK_INT(mlrt_predict_batch(d, x, 4, yd, NULL), MLRT_OK);
        CHECK(memcmp(ya, yc, sizeof ya) == 0);
        CHECK(memcmp(ya, yd, sizeof ya) == 0);
    }
    APR_FAILS(v1_file((v1_spec){0x20, 1, 0, 0, 0, (int64_t)payload.n + 1, 0}, default_meta(), zs), MLRT_ERR_SIZE_MISMATCH,
              "zstd payload at byte");
    APR_FAILS(v1_file((v1_spec){0x20, 3, 0, 0, 0, (int64_t)payload.n, 0}, default_meta(), prefix(lz, lz.n - 1)),
              MLRT_ERR_TRUNCATED, "LZ4 payload at byte");
    APR_FAILS(v1_file((v1_spec){0x20, 3, 0, 0, 0, 1 << 20, 0}, default_meta(), from_hex("00100000 00")),
              MLRT_ERR_SIZE_MISMATCH, "LZ4 payload declares 4096 bytes");
    APR_FAILS(v1_file((v1_spec){0x20, 2, 0, 0, 0, 1 << 30, 0}, default_meta(), from_hex("28b52ffd")),
              MLRT_ERR_SIZE_MISMATCH, "4 compressed bytes cannot expand to the uncompressed size 1073741824");

    bytes dims_bad = {0};
    float v[6] = {1, 2, 3, 4, 5, 6};
    put_vec_f32(&dims_bad, v, 5), put_vec_f32(&dims_bad, v, 2), put_vec_f32(&dims_bad, v, 4), put_vec_f32(&dims_bad, v, 2);
    APR_FAILS(V1(0x20, done(dims_bad)), MLRT_ERR_BAD_DIMENSIONS, "hold 5, 2, 4, 2 floats");
}

/* --------------------------------------------------------- v1 container */

static void test_apr_v1_header_and_sections(void) {
    bytes lin = from_hex("01 0100000000000000 0000803f 00000000 01");
    bytes good = V1(1, lin);
    LOAD_OK(good);
    APR_FAILS(prefix(good, 35), MLRT_ERR_TRUNCATED, "shorter than the 32-byte header");
    bytes flip = copy_of(good.p, good.n);
    flip.p[33] ^= 1;
    char want[96];
    snprintf(want, sizeof want, "stores 0x%08x but its bytes [0, %zu) give 0x%08x", mlrt__rd_u32(good.p + good.n - 4),
             good.n - 4, mlrt__crc32(flip.p, flip.n - 4));
    APR_FAILS(flip, MLRT_ERR_CHECKSUM_MISMATCH, want);
    APR_FAILS(patched_u8(good, 4, 2, 0), MLRT_ERR_UNSUPPORTED_VERSION, "version 2.0");
    LOAD_OK(patched_u8(good, 5, 9, 0));
    APR_FAILS(patched_u8(good, 6, 0x13, 0), MLRT_ERR_BAD_HEADER, "unknown model type 0x0013 at byte 6");
    APR_FAILS(patched_u32(good, 16, (1u << 30) + 1, 0), MLRT_ERR_BAD_HEADER, "1 GiB");
    APR_FAILS(patched_u8(good, 20, 4, 0), MLRT_ERR_BAD_HEADER, "unknown compression 4");
    APR_FAILS(patched_u8(good, 22, 101, 0), MLRT_ERR_BAD_HEADER, "quality score 101");
    APR_FAILS(patched_u32(good, 16, (uint32_t)lin.n - 1, 0), MLRT_ERR_SIZE_MISMATCH, "uncompressed size");
    APR_FAILS(patched_u32(good, 12, 1000, 0), MLRT_ERR_TRUNCATED, "past the checksum");
    APR_FAILS(patched_u32(good, 8, 1000, 0), MLRT_ERR_TRUNCATED, "metadata (1000 bytes)");
    APR_FAILS(patched_u32(good, 12, (uint32_t)lin.n - 1, 0), MLRT_ERR_SIZE_MISMATCH, "the SIGNED flag is not set");
    /* signed: exactly 96 bytes after the payload */
    bytes sig = v1_file((v1_spec){1, 0, 2, 0, 0, -1, 96}, default_meta(), lin);
    LOAD_OK(sig);
    inspected ins;
    const mlrt__json *apr = inspect_apr(sig, &ins);
    size_t end = 32 + default_meta().n + lin.n;
    CHECK_INT(jint(mlrt__json_get(apr, "signatureBytes"), "byteOffset"), end);
    CHECK_INT(jint(mlrt__json_get(apr, "publicKeyBytes"), "byteOffset"), end + 64);
    CHECK_INT(jint(mlrt__json_get(apr, "signedBytes"), "byteLength"), end);
    CHECK(mlrt__json_get(apr, "signed") && mlrt__json_get(apr, "signed")->type == MLRT__JSON_TRUE);
    mlrt__json_free(&ins.doc);
    APR_FAILS(v1_file((v1_spec){1, 0, 2, 0, 0, -1, 95}, default_meta(), lin), MLRT_ERR_SIZE_MISMATCH, "96-byte signature block");
    APR_FAILS(v1_file((v1_spec){1, 0, 0, 0, 0, -1, 96}, default_meta(), lin), MLRT_ERR_SIZE_MISMATCH, "SIGNED flag is not set");
    /* encrypted, unsupported types: refused at load, fine for inspect */
    APR_FAILS(v1_file((v1_spec){1, 0, 1, 0, 0, 7, 0}, default_meta(), lin), MLRT_ERR_ENCRYPTED, "JavaScript host");
    APR_FAILS(V1(0x0005, lin), MLRT_ERR_UNSUPPORTED_MODEL_TYPE, "aprender itself writes no such payload");
    APR_FAILS(V1(0x00ff, lin), MLRT_ERR_UNSUPPORTED_MODEL_TYPE, "Custom (0x00ff)");
    LOAD_FAILS(cat(from_hex("41505231"), copy_of(lin.p, lin.n)), MLRT_ERR_UNSUPPORTED, "apr: ", "legacy APR1");
    /* truncated at each section boundary, with a fresh checksum */
    size_t bounds[] = {36, 32 + 4, 32 + default_meta().n, 32 + default_meta().n + 3};
    for (size_t i = 0; i < LEN(bounds); i++)
        APR_FAILS(v1_crc(cat(prefix(good, bounds[i]), from_hex("00000000"))), MLRT_ERR_TRUNCATED, NULL);
}

static void test_apr_v1_expect(void) {
    bytes lin = V1(1, from_hex("01 0100000000000000 0000803f 00000000 01"));
    mlrt_error e = {MLRT_OK, ""};
    mlrt_load_options want_lin = {.expect = "LinearRegression"}, want_log = {.expect = "LogisticRegression"}, bogus = {.expect = "Lin"};
    mlrt_model *m = keep_model(mlrt_load_from_bytes_ex(exact(lin.p, lin.n), lin.n, &want_lin, &e));
    CHECK(m != NULL);
    CHECK(mlrt_load_from_bytes_ex(exact(lin.p, lin.n), lin.n, &want_log, &e) == NULL);
    check_message_at(__FILE__, __LINE__, &e, MLRT_ERR_MODEL_TYPE_MISMATCH, "apr: ",
                     "the file holds LinearRegression (0x0001), expected LogisticRegression");
    CHECK(mlrt_load_from_bytes_ex(exact(lin.p, lin.n), lin.n, &bogus, &e) == NULL);
    check_message_at(__FILE__, __LINE__, &e, MLRT_ERR_INVALID_ARGUMENT, "load: ", "'Lin'");
    bytes g = golden_v2();
    CHECK(mlrt_load_from_bytes_ex(exact(g.p, g.n), g.n, &want_log, &e) == NULL);
    check_message_at(__FILE__, __LINE__, &e, MLRT_ERR_MODEL_TYPE_MISMATCH, "load: ",
                     "expected LogisticRegression but the file holds a linear_regression model (LinearRegression)");
    CHECK(keep_model(mlrt_load_from_bytes_ex(exact(g.p, g.n), g.n, &want_lin, &e)) != NULL);
    mlrt_load_options none = {.weight_layout = MLRT_LAYOUT_AUTO};
    CHECK(keep_model(mlrt_load_from_bytes_ex(exact(g.p, g.n), g.n, &none, &e)) != NULL);
}

/* ---------------------------------------------------------------- msgpack */

static void mp_ok_at(const char *file, int line, const uint8_t *p, size_t n, const char *want) {
    mlrt__buf b = {0};
    mlrt_error e = {MLRT_OK, ""};
    size_t used = 0;
    mlrt_status st = mlrt__msgpack_to_json(exact(p, n), n, 0, "mp", &b, &used, &e);
    check_at(st == MLRT_OK, file, line, "msgpack failed: %s", e.message);
    check_at(used == n, file, line, "used %zu of %zu bytes", used, n);
    check_at(st || !want || (b.data && strcmp(b.data, want) == 0), file, line, "JSON %s, want %s", b.data ? b.data : "", want);
    free(b.data);
}
static void mp_fails_at(const char *file, int line, const uint8_t *p, size_t n, mlrt_status code, const char *needle) {
    mlrt__buf b = {0};
    mlrt_error e = {MLRT_OK, ""};
    size_t used = 0;
    mlrt_status st = mlrt__msgpack_to_json(exact(p, n), n, 100, "mp", &b, &used, &e);
    check_at(st != MLRT_OK, file, line, "msgpack accepted, want %s", mlrt_status_name(code));
    if (st) check_message_at(file, line, &e, code, "mp: ", needle);
    free(b.data);
}
#define MP_OK(want, ...)                                                                                     \
    do {                                                                                                     \
        static const uint8_t in_[] = {__VA_ARGS__};                                                          \
        mp_ok_at(__FILE__, __LINE__, in_, sizeof in_, want);                                                  \
    } while (0)
#define MP_FAILS(code, needle, ...)                                                                          \
    do {                                                                                                     \
        static const uint8_t in_[] = {__VA_ARGS__};                                                          \
        mp_fails_at(__FILE__, __LINE__, in_, sizeof in_, code, needle);                                       \
    } while (0)

static void test_apr_msgpack_types(void) {
    MP_OK("null", 0xc0);
    MP_OK("[true,false]", 0x92, 0xc3, 0xc2);
    MP_OK("[0,127,-1,-32]", 0x94, 0x00, 0x7f, 0xff, 0xe0);
    MP_OK("[255,65535,4294967295,18446744073709551615]", 0x94, 0xcc, 0xff, 0xcd, 0xff, 0xff, 0xce, 0xff, 0xff, 0xff, 0xff,
          0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff);
    MP_OK("[-128,-32768,-2147483648,-9223372036854775808]", 0x94, 0xd0, 0x80, 0xd1, 0x80, 0x00, 0xd2, 0x80, 0, 0, 0,
          0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0);
    MP_OK("[0.1,0.1,1e+21,-0,null,null]", 0x96, 0xca, 0x3d, 0xcc, 0xcc, 0xcd, 0xcb, 0x3f, 0xb9, 0x99, 0x99, 0x99, 0x99, 0x99,
          0x9a, 0xcb, 0x44, 0x4b, 0x1a, 0xe4, 0xd6, 0xe2, 0xef, 0x50, 0xcb, 0x80, 0, 0, 0, 0, 0, 0, 0, 0xcb, 0x7f, 0xf8, 0,
          0, 0, 0, 0, 0, 0xca, 0x7f, 0x80, 0, 0);
    MP_OK("[\"ab\",\"c\",\"\",\"\\\"\\u0001\"]", 0x94, 0xa2, 'a', 'b', 0xd9, 1, 'c', 0xda, 0, 0, 0xdb, 0, 0, 0, 2, '"', 1);
    MP_OK("[[1,2],[],[0,255]]", 0x93, 0xc4, 2, 1, 2, 0xc5, 0, 0, 0xc6, 0, 0, 0, 2, 0, 255);
    MP_OK("[[],[7]]", 0x92, 0xdc, 0, 0, 0xdd, 0, 0, 0, 1, 7);
    MP_OK("{\"b\":{\"a\":1},\"a\":{}}", 0xde, 0, 2, 0xa1, 'b', 0xdf, 0, 0, 0, 1, 0xa1, 'a', 1, 0xa1, 'a', 0x80);
    MP_OK("{\"\xc3\xa9\":null}", 0x81, 0xa2, 0xc3, 0xa9, 0xc0);
}

static void test_apr_msgpack_malformed(void) {
    MP_FAILS(MLRT_ERR_TRUNCATED, "inside a value");
    MP_FAILS(MLRT_ERR_INVALID_MSGPACK, "0xc1 at byte 101", 0x91, 0xc1);
    MP_FAILS(MLRT_ERR_UNSUPPORTED, "extension value at byte 100", 0xd4, 1, 2);
    MP_FAILS(MLRT_ERR_UNSUPPORTED, "extension", 0xc9, 0, 0, 0, 1, 5, 0);
    MP_FAILS(MLRT_ERR_TRUNCATED, "inside an integer", 0xcd, 1);
    MP_FAILS(MLRT_ERR_TRUNCATED, "inside a float", 0xcb, 1, 2, 3);
    MP_FAILS(MLRT_ERR_TRUNCATED, "inside a length", 0xdb, 0, 0);
    MP_FAILS(MLRT_ERR_TRUNCATED, "inside a string", 0xa5, 'a');
    MP_FAILS(MLRT_ERR_TRUNCATED, "binary data", 0xc4, 3, 1);
    MP_FAILS(MLRT_ERR_TRUNCATED, "declares 4294967295 items", 0xdd, 0xff, 0xff, 0xff, 0xff, 0xc0);
    MP_FAILS(MLRT_ERR_TRUNCATED, "map key", 0x82, 0xa1, 'a', 0x92, 0xc0, 0xc0);
    MP_FAILS(MLRT_ERR_INVALID_UTF8, "string at byte 102", 0x81, 0xa2, 0xc0, 0xaf, 0xc0);
    MP_FAILS(MLRT_ERR_INVALID_UTF8, "string at byte 102", 0x91, 0xa3, 0xed, 0xa0, 0x80);
    MP_FAILS(MLRT_ERR_BAD_HEADER, "map key at byte 101 is an integer", 0x81, 0x01, 0xc0);
    MP_FAILS(MLRT_ERR_BAD_HEADER, "is nil", 0x81, 0xc0, 0xc0);
    MP_FAILS(MLRT_ERR_DUPLICATE_KEY, "duplicate key 'k' at byte 107", 0x83, 0xa1, 'k', 1, 0xa1, 'j', 2, 0xa1, 'k', 3);
    uint8_t deep[70];
    memset(deep, 0x91, sizeof deep);
    deep[63] = 0xc0;
    char want[140] = "";
    for (int i = 0; i < 63; i++) strcat(want, "[");
    strcat(want, "null");
    for (int i = 0; i < 63; i++) strcat(want, "]");
    mp_ok_at(__FILE__, __LINE__, deep, 64, want); /* 63 levels */
    deep[63] = 0x91;
    deep[64] = 0xc0;
    mp_fails_at(__FILE__, __LINE__, deep, 65, MLRT_ERR_INVALID_MSGPACK, "array at byte 163 nests deeper than 63 levels");
    /* a long string is fine, a key set of thousands is checked for duplicates in one sort */
    bytes big = {0};
    put_u8(&big, 0xde), put_u8(&big, 0x10), put_u8(&big, 0x00);
    for (int i = 0; i < 4096; i++) put_u8(&big, 0xa4), put_fmt(&big, "%04x", i), put_u8(&big, 0xc0);
    mp_ok_at(__FILE__, __LINE__, big.p, big.n, NULL);
    free(big.p);
}

static void check_number_at(const char *file, int line, double v, bool single, const char *want) {
    mlrt__buf b = {0};
    mlrt__buf_number(&b, v, single);
    check_at(b.data && strcmp(b.data, want) == 0, file, line, "%.17g (%s) printed %s, want %s", v, single ? "f32" : "f64",
             b.data ? b.data : "", want);
    free(b.data);
}
#define CHECK_NUMBER(v, single, want) check_number_at(__FILE__, __LINE__, (v), (single), (want))

static void test_apr_shortest_floats(void) {
    CHECK_NUMBER(0.1, false, "0.1");
    CHECK_NUMBER(0.3, false, "0.3");
    CHECK_NUMBER(0.1 + 0.2, false, "0.30000000000000004");
    CHECK_NUMBER(1e21, false, "1e+21");
    CHECK_NUMBER(1e20, false, "100000000000000000000");
    CHECK_NUMBER(123456789012345680000.0, false, "123456789012345680000");
    CHECK_NUMBER(1e-7, false, "1e-7");
    CHECK_NUMBER(1.5e-7, false, "1.5e-7");
    CHECK_NUMBER(0.000001, false, "0.000001");
    CHECK_NUMBER(4.35, false, "4.35");
    CHECK_NUMBER(-2.5, false, "-2.5");
    CHECK_NUMBER(5e-324, false, "5e-324");
    CHECK_NUMBER(2.2250738585072014e-308, false, "2.2250738585072014e-308");
    CHECK_NUMBER(1.7976931348623157e308, false, "1.7976931348623157e+308");
    CHECK_NUMBER(9007199254740993.0, false, "9007199254740992");
    CHECK_NUMBER(0.0, false, "0");
    CHECK_NUMBER(-0.0, false, "-0");
    CHECK_NUMBER(NAN, false, "null");
    CHECK_NUMBER(-INFINITY, true, "null");
    CHECK_NUMBER(0.1f, true, "0.1");
    CHECK_NUMBER(1e-4f, true, "0.0001");
    CHECK_NUMBER(16777216.0f, true, "16777216");
    CHECK_NUMBER(3.4028235e38f, true, "3.4028235e+38");
    CHECK_NUMBER(1e-45f, true, "1e-45");
    CHECK_NUMBER(1.17549435e-38f, true, "1.1754944e-38");
    CHECK_NUMBER(0.33333334f, true, "0.33333334");
    /* every one reads back: random bit patterns */
    rng_seed(2024);
    for (int i = 0; i < 20000; i++) {
        uint64_t u = (uint64_t)rng_u32() << 32 | rng_u32();
        double d;
        memcpy(&d, &u, 8);
        float f;
        uint32_t w = rng_u32();
        memcpy(&f, &w, 4);
        mlrt__buf b = {0};
        mlrt__buf_number(&b, d, false);
        mlrt__buf_puts(&b, " ");
        size_t mid = b.len;
        mlrt__buf_number(&b, f, true);
        if (isfinite(d)) CHECK(strtod(b.data, NULL) == d);
        if (isfinite(f)) CHECK(strtof(b.data + mid, NULL) == f);
        free(b.data);
    }
}

static void test_apr_v1_metadata(void) {
    bytes lin = from_hex("01 0100000000000000 0000803f 00000000 01");
    bytes meta = from_hex("83 a6637573746f6d 82 a161 ca3dcccccd a162 c4020102 a7756e6b6e6f776e 90"
                          "aa637265617465645f6174 a131");
    mlrt_model *m = LOAD_OK(v1_file((v1_spec){1, 0, 0, 0, 0, -1, 0}, meta, lin));
    if (m) CHECK_CONTAINS(mlrt_model_info_json(m), "\"metadata\":{\"custom\":{\"a\":0.1,\"b\":[1,2]},\"unknown\":[],\"created_at\":\"1\"}");
    v1_spec s = {1, 0, 0, 0, 0, -1, 0};
    APR_FAILS(v1_file(s, from_hex("81 a1 61 c1"), lin), MLRT_ERR_INVALID_MSGPACK, "metadata: byte 0xc1 at byte 35");
    APR_FAILS(v1_file(s, from_hex("82 a161 01 a161 02"), lin), MLRT_ERR_DUPLICATE_KEY, "'a' at byte 36");
    APR_FAILS(v1_file(s, from_hex("81 a1 61 a1 ff"), lin), MLRT_ERR_INVALID_UTF8, "string at byte 36");
    APR_FAILS(v1_file(s, from_hex("91 c0"), lin), MLRT_ERR_BAD_HEADER, "metadata must be a map, got array");
    APR_FAILS(v1_file(s, from_hex("81 aa637265617465645f6174 01"), lin), MLRT_ERR_BAD_HEADER,
              "'created_at' must be a string, got number");
    APR_FAILS(v1_file(s, from_hex("81 a6637573746f6d c0"), lin), MLRT_ERR_BAD_HEADER, "'custom' must be a map, got null");
    APR_FAILS(v1_file(s, from_hex("80 c0"), lin), MLRT_ERR_SIZE_MISMATCH, "ends at byte 33 but the metadata size is 2 bytes");
    APR_FAILS(v1_file(s, from_hex("82 a161 c0"), lin), MLRT_ERR_TRUNCATED, "map at byte 32 declares 2 items but 3 bytes remain");
    APR_FAILS(v1_file(s, from_hex(""), lin), MLRT_ERR_TRUNCATED, "inside a value");
    LOAD_OK(v1_file(s, from_hex("82 aa6d6f64656c5f6e616d65 c0 a76c6963656e7365 c0"), lin)); /* Option: nil is fine */
}

/* -------------------------------------------------------------------- v2 */

static int by_tensor_name(const void *a, const void *b) {
    return strcmp(((const v2t *)a)->name, ((const v2t *)b)->name);
}

static void test_apr_v2_models_match_safetensors(void) {
    static const int dims[] = {6, 9, 4, 3};
    ref_mlp r;
    ref_make(&r, 3, dims, 77);
    static const char *const names[] = {"net.0.weight", "net.0.bias", "net.2.weight", "net.2.bias", "net.4.weight", "net.4.bias"};
    tspec t[6];
    int n = ref_tensors(&r, names, "F32", 0, t);
    v2t v[6];
    for (int i = 0; i < n; i++) v[i] = (v2t){t[i].name, 0, t[i].rank, {t[i].shape[0], t[i].shape[1]}, t[i].data, t[i].nbytes};
    qsort(v, (size_t)n, sizeof v[0], by_tensor_name);
    mlrt_model *a = LOAD_OK(v2_file("{\"model_type\":\"mlp\",\"n\":[1,{\"x\":null}]}", v, n));
    mlrt_model *b = LOAD_OK(st_build(NULL, t, n));
    CHECK_VS_REF(a, &r);
    if (a && b) {
        float x[6 * 3], ya[3 * 3], yb[3 * 3];
        for (size_t i = 0; i < LEN(x); i++) x[i] = rng_float(-2, 2);
        CHECK_INT(mlrt_predict_batch(a, x, 3, ya, NULL), MLRT_OK);
        CHECK_INT(mlrt_predict_batch(b, x, 3, yb, NULL), MLRT_OK);
        CHECK(memcmp(ya, yb, sizeof ya) == 0);
        CHECK_CONTAINS(mlrt_model_info_json(a), "\"metadata\":{\"model_type\":\"mlp\",\"n\":[1,{\"x\":null}]},\"apr\":{");
    }
    /* activations from a top-level metadata string */
    v2t one[1] = {{"fc.weight", 0, 2, {1, 2}, FOUR_F32, 8}};
    mlrt_model *m = LOAD_OK(v2_file("{\"activations\":\"sigmoid\",\"other\":3}", one, 1));
    if (m) CHECK_INT(mlrt_layer(m, 0).activation, MLRT_ACT_SIGMOID);
}

static void test_apr_v2_dtypes(void) {
    static const uint8_t zeros[512] = {0};
    struct { uint8_t id; uint64_t count; size_t bytes; mlrt_dtype dtype; } q[] = {
        {128, 33, 36, MLRT_APR_Q4}, {8, 64, 36, MLRT_APR_Q4},  {129, 10, 14, MLRT_APR_Q8}, {9, 1, 5, MLRT_APR_Q8},
        {12, 256, 144, MLRT_Q4_K},  {12, 257, 288, MLRT_Q4_K}, {14, 512, 420, MLRT_Q6_K},  {7, 3, 3, MLRT_U8},
        {6, 3, 3, MLRT_I8},         {4, 3, 12, MLRT_I32},      {5, 3, 24, MLRT_I64},      {30, 3, 6, MLRT_BF16},
    };
    for (size_t i = 0; i < LEN(q); i++) {
        v2t t[1] = {{"t", q[i].id, 1, {q[i].count}, zeros, q[i].bytes}};
        inspected ins;
        const mlrt__json *root = INSPECT(v2_file("{}", t, 1), &ins);
        const mlrt__json *t0 = jitem(mlrt__json_get(root, "tensors"), 0);
        CHECK_STR(jstr(t0, "dtype"), mlrt_dtype_name(q[i].dtype));
        CHECK_INT(jint(t0, "byteLength"), q[i].bytes);
        mlrt__json_free(&ins.doc);
        v2t wrong[1] = {{"t", q[i].id, 1, {q[i].count}, zeros, q[i].bytes + 1}};
        APR_FAILS(v2_file("{}", wrong, 1), MLRT_ERR_SIZE_MISMATCH, "but its size is");
    }
    uint64_t b;
    CHECK(!mlrt__dtype_bytes(MLRT_F64, UINT64_MAX / 4, &b));
    CHECK(mlrt__dtype_bytes(MLRT_APR_Q4, UINT64_MAX, &b) && b == (UINT64_MAX / 32 + 1) * 18);
    CHECK(!mlrt__dtype_bytes(MLRT_APR_Q8, UINT64_MAX - 3, &b));
    uint8_t q6[210] = {0};
    q6[208] = 0x00, q6[209] = 0x7e; /* d = NaN */
    v2t qw[1] = {{"fc.weight", 14, 2, {1, 256}, q6, 210}};
    APR_FAILS(v2_file("{}", qw, 1), MLRT_ERR_NON_FINITE, "tensor 'fc.weight' Q6_K d of super-block 0 is NaN");
    v2t f16[1] = {{"fc.weight", 1, 2, {1, 2}, (const uint8_t[]){0x00, 0x3c, 0x00, 0xc0}, 4}};
    mlrt_model *m = LOAD_OK(v2_file("{}", f16, 1));
    float x[2] = {3, 1}, y;
    if (m && mlrt_predict(m, x, &y, NULL) == MLRT_OK) CHECK_BITS(y, 1.0f);
    /* quantized dtypes do not leak into the other formats */
    bytes bt = from_hex("1000000000000000 00 01 0f 01 02 00 02 01 01 77 00 2020202020");
    BT_FAILS(cat(bt, from_hex("0000")), MLRT_ERR_UNKNOWN_DTYPE, "discriminant 15");
    ST_FAILS(st_raw("{\"w\":{\"dtype\":\"APR_Q8\",\"shape\":[1],\"data_offsets\":[0,5]}}", zeros, 5), MLRT_ERR_UNKNOWN_DTYPE,
             "APR_Q8");
}

static void test_apr_v2_malformed(void) {
    v2t t[2] = {{"fc.bias", 0, 1, {1}, ONE_F32, 4}, {"fc.weight", 0, 2, {1, 4}, FOUR_F32, 16}};
    bytes good = v2_file("{\"model_type\":\"mlp\"}", t, 2);
    LOAD_OK(good);
    size_t index_at = (size_t)mlrt__rd_u64(good.p + 24), data_at = (size_t)mlrt__rd_u64(good.p + 32);
    APR_FAILS(prefix(good, 67), MLRT_ERR_TRUNCATED, "shorter than the 64-byte header");
    bytes h = copy_of(good.p, good.n);
    h.p[9] ^= 1;
    APR_FAILS(h, MLRT_ERR_CHECKSUM_MISMATCH, "header checksum mismatch: byte 40 stores");
    bytes d = copy_of(good.p, good.n);
    d.p[data_at] ^= 1;
    APR_FAILS(d, MLRT_ERR_CHECKSUM_MISMATCH, "checksum mismatch: the file stores");
    APR_FAILS(patched_u8(good, 4, 3, 1), MLRT_ERR_UNSUPPORTED_VERSION, "version 3.0");
    /* "APR\0" + four zero bytes is a SafeTensors/BinTensors header length: not read as .apr */
    LOAD_FAILS(patched_u32(good, 4, 0, 1), MLRT_ERR_UNKNOWN_FORMAT, "load: ", "no APRN, APR\\0 or APR2 magic");
    static const char *const flags[] = {"LZ4_COMPRESSED", "ZSTD_COMPRESSED", "ENCRYPTED", "SIGNED"};
    for (int bit = 0; bit < 4; bit++) APR_FAILS(patched_u8(good, 6, (uint8_t)(1 << bit), 1), MLRT_ERR_UNSUPPORTED, flags[bit]);
    APR_FAILS(patched_u8(good, 7, 0x08, 1), MLRT_ERR_UNSUPPORTED, "column-major");
    APR_FAILS(patched_u8(good, 7, 0x14, 1), MLRT_ERR_UNSUPPORTED, "unknown header flags 0x1000");
    APR_FAILS(patched_u64(good, 12, 0, 1), MLRT_ERR_BAD_OFFSETS, "metadata offset 0 must be 64");
    APR_FAILS(patched_u32(good, 20, 17u << 20, 1), MLRT_ERR_HEADER_TOO_LARGE, "limit");
    APR_FAILS(patched_u32(good, 20, 19, 1), MLRT_ERR_INVALID_JSON, "apr: metadata");
    APR_FAILS(patched_u64(good, 24, index_at + 1, 1), MLRT_ERR_BAD_OFFSETS, "tensor index offset");
    APR_FAILS(patched_u64(good, 32, index_at - 64, 1), MLRT_ERR_BAD_OFFSETS, "data offset");
    APR_FAILS(patched_u64(good, 32, (uint64_t)1 << 62, 1), MLRT_ERR_TRUNCATED, "past the checksum");
    APR_FAILS(patched_u32(good, 8, 4000, 1), MLRT_ERR_TRUNCATED, "4000 tensors need at least");
    APR_FAILS(patched_u32(good, 8, 1, 1), MLRT_ERR_BAD_HEADER, "padding after the tensor index");
    APR_FAILS(patched_u8(good, 64 + 20, 'x', 1), MLRT_ERR_BAD_HEADER, "padding after the metadata");
    APR_FAILS(patched_u8(good, index_at + 2 + 7, 2, 1), MLRT_ERR_UNKNOWN_DTYPE, "'fc.bias' has unknown dtype id 2");
    APR_FAILS(patched_u8(good, index_at + 2 + 7 + 1, 9, 1), MLRT_ERR_BAD_DIMENSIONS, "9 dimensions");
    APR_FAILS(patched_u8(good, index_at + 2 + 7 + 2 + 8, 1, 1), MLRT_ERR_BAD_OFFSETS, "offset 1 is not a multiple of 64");
    APR_FAILS(patched_u8(good, index_at + 2 + 7 + 2 + 8 + 8, 8, 1), MLRT_ERR_SIZE_MISMATCH, "size is 8 bytes");
    APR_FAILS(patched_u8(good, index_at + 2 + 7 + 2 + 8, 128, 1), MLRT_ERR_BAD_OFFSETS, "exceed the 128 data bytes");
    APR_FAILS(patched_u8(good, index_at + 2, 0xff, 1), MLRT_ERR_INVALID_UTF8, "tensor index entry 0: name at byte");
    APR_FAILS(patched_u8(good, index_at + 2, 0, 1), MLRT_ERR_BAD_HEADER, "containing NUL");
    APR_FAILS(patched_u8(good, index_at + 2 + 3, 'z', 1), MLRT_ERR_BAD_HEADER, "not sorted by name: 'fc.weight' comes after 'fc.zias'");
    v2t dup[2] = {{"w", 0, 1, {1}, ONE_F32, 4}, {"w", 0, 1, {1}, ONE_F32, 4}};
    APR_FAILS(v2_file("{}", dup, 2), MLRT_ERR_DUPLICATE_KEY, "'w' appears twice");
    /* overlap: point fc.weight's offset at fc.bias's */
    APR_FAILS(patched_u8(good, index_at + 35 + 2 + 9 + 2 + 16, 0, 1), MLRT_ERR_BAD_OFFSETS, "overlap");
    APR_FAILS(patched_u64(good, index_at + 35 + 2 + 9 + 2 + 16, (uint64_t)-64, 1), MLRT_ERR_BAD_OFFSETS, "exceed");
    APR_FAILS(v2_file("[]", t, 2), MLRT_ERR_BAD_HEADER, "metadata must be a JSON object, got array");
    APR_FAILS(v2_file("{\"a\":1,\"a\":1}", t, 2), MLRT_ERR_DUPLICATE_KEY, "'a'");
    char deep[200] = "{\"a\":";
    for (int i = 0; i < 63; i++) strcat(deep, "[");
    for (int i = 0; i < 63; i++) strcat(deep, "]");
    strcat(deep, "}");
    APR_FAILS(v2_file(deep, t, 2), MLRT_ERR_INVALID_JSON, "deeper than 63");
    size_t cuts[] = {68, 100, index_at, index_at + 5, data_at};
    for (size_t i = 0; i < LEN(cuts); i++) {
        APR_FAILS(prefix(good, cuts[i]), MLRT_ERR_CHECKSUM_MISMATCH, NULL);
        APR_FAILS(v2_crc(cat(prefix(good, cuts[i]), from_hex("00000000"))), cuts[i] < data_at ? MLRT_ERR_TRUNCATED : MLRT_ERR_BAD_OFFSETS, NULL);
    }
}

const test_case apr_tests[] = {
    T(test_apr_crc32_check_values),
    T(test_apr_golden_v1),
    T(test_apr_golden_v2),
    T(test_apr_v1_regressions),
    T(test_apr_v1_sequential_matches_bin),
    T(test_apr_v1_header_and_sections),
    T(test_apr_v1_expect),
    T(test_apr_msgpack_types),
    T(test_apr_msgpack_malformed),
    T(test_apr_shortest_floats),
    T(test_apr_v1_metadata),
    T(test_apr_v2_models_match_safetensors),
    T(test_apr_v2_dtypes),
    T(test_apr_v2_malformed),
    {0},
};
