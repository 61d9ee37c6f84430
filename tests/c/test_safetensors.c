/* test_safetensors.c — malformed SafeTensors, every class: header length, UTF-8, JSON, duplicate keys,
 * header fields, dtypes, shapes, offsets; and messages that stay UTF-8. */
#include "builders.h"

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

const test_case safetensors_tests[] = {
    T(test_st_header_length),
    T(test_st_invalid_utf8),
    T(test_st_invalid_json),
    T(test_st_duplicate_keys),
    T(test_st_bad_header_fields),
    T(test_st_dtypes),
    T(test_st_shapes),
    T(test_st_offsets),
    T(test_messages_stay_utf8),
    {0},
};
