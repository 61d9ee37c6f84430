/* test_codecs.c — the codecs: the strict JSON reader. */
#include "builders.h"

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
    /* keys made to collide in the duplicate check's hash set (all in one slot of 64): it falls back to
     * sorting, and still finds a repeat, or none */
    for (int with_dup = 0; with_dup < 2; with_dup++) {
        bytes col = {0};
        char first[16] = "";
        put_str(&col, "{");
        for (unsigned k = 0, found = 0; found < 32; found++) {
            char key[16];
            next_colliding_key("c", 64, 5, &k, key);
            put_fmt(&col, "%s\"%s\":%u", found ? "," : "", key, found);
            if (!found) memcpy(first, key, sizeof key);
        }
        if (with_dup) put_fmt(&col, ",\"%s\":0", first); /* (after the fallback: the set gave up before it) */
        put_str(&col, "}");
        col = done(col);
        CHECK_INT(mlrt__json_parse(exact(col.p, col.n), col.n, "test", &doc, &e), with_dup ? MLRT_ERR_DUPLICATE_KEY : MLRT_OK);
        if (with_dup) CHECK_CONTAINS(e.message, first);
        if (!with_dup && doc.root) CHECK_INT(doc.root->count, 32);
        mlrt__json_free(&doc);
    }
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
                    "\"1\", 42, 10E0, 9999999999999999999, 1844674407370955161]", &doc, &e), MLRT_OK);
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
    CHECK(mlrt__json_u64(jitem(doc.root, 11), &v) && v == 9999999999999999999ull); /* 19 digits: the unchecked run */
    CHECK(mlrt__json_u64(jitem(doc.root, 12), &v) && v == 1844674407370955161ull);
    CHECK(!mlrt__json_u64(NULL, &v));
    CHECK(!mlrt__json_u64(doc.root, &v)); /* an array */
    mlrt__json_free(&doc);
    CHECK_STR(mlrt__json_type_name(MLRT__JSON_OBJECT), "object");
    CHECK_STR(mlrt__json_type_name(MLRT__JSON_NUMBER), "number");
}

const test_case codecs_tests[] = {
    T(test_json_valid),
    T(test_json_invalid),
    T(test_json_u64),
    {0},
};
