/* test_bintensors.c — BinTensors: the crate's test vector, the early spec's, models equal to SafeTensors' and every
 * malformed class. */
#include "builders.h"

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

const test_case bintensors_tests[] = {
    T(test_bt_crate_test_vector),
    T(test_bt_early_spec_vector),
    T(test_bt_models_match_safetensors),
    T(test_bt_malformed),
    T(test_bt_many_metadata_keys),
    T(test_bt_offsets),
    {0},
};
