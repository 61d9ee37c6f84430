/* test_trees.c — aprender's DecisionTree, RandomForest, KMeans and NgramLm payloads (.apr v1):
 * the byte vectors of shared/specs/apr-models.md, predictions worked out by hand, layout detection
 * and every invariant refused. */
#include "builders.h"

/* §1.2: x[1] <= 0.5 -> class 0 (3 samples), else class 2 (4 samples); max_depth 3, n_features 2 */
#define TREE_CLS_E1 "01 00000000 0100000000000000 0000003f 01000000 0000000000000000 0300000000000000 " \
                    "01000000 0200000000000000 0400000000000000 01 0300000000000000 01 0200000000000000"
#define TREE_CLS_E2 "01 00000000 0100000000000000 0000003f 88c6fa3e 0700000000000000 " \
                    "01000000 0000000000000000 0300000000000000 00000000 " \
                    "01000000 0200000000000000 0400000000000000 00000000 01 0300000000000000 01 0200000000000000"
/* x[0] <= 1.5 -> -1.0 (2 samples), else 2.5 (5 samples); max_depth None; 2; 1 */
#define TREE_REG_E1 "01 00000000 0000000000000000 0000c03f 01000000 000080bf 0200000000000000 " \
                    "01000000 00002040 0500000000000000 00 0200000000000000 0100000000000000"
#define TREE_REG_E2 "01 00000000 0000000000000000 0000c03f 00004040 0700000000000000 " \
                    "01000000 000080bf 0200000000000000 00000000 01000000 00002040 0500000000000000 0000803e " \
                    "00 0200000000000000 0100000000000000"
/* §2.1: one tree (the E1 classifier), n_estimators 1, max_depth 3, seed 42, oob [[1,3]], x_train 2x2... */
#define FOREST_CLS_E1 "0100000000000000 " TREE_CLS_E1 " 0100000000000000 01 0300000000000000 01 2a00000000000000 " \
                      "0100000000000000 0200000000000000 0100000000000000 0300000000000000 01 0400000000000000 " \
                      "00000000 00000000 0000803f 0000803f 0200000000000000 0200000000000000 01 0200000000000000 " \
                      "0000000000000000 0200000000000000"
/* §3.1: k=2, centroids [[0,0],[5,5]], labels [0,1,1], inertia 1.25, n_iter 3, seed 7 (+ n_init 1) */
#define KMEANS_LEGACY "0200000000000000 2c01000000000000 17b7d138 01 0700000000000000 01 0400000000000000 " \
                      "00000000 00000000 0000a040 0000a040 0200000000000000 0200000000000000 01 0300000000000000 " \
                      "0000000000000000 0100000000000000 0100000000000000 0000a03f 0300000000000000"
#define KMEANS_CURRENT KMEANS_LEGACY " 0100000000000000"
/* §4.1: n=3, ngrams {"":{"git":2}}, freq {"git status":2}, total 2, pos 2 */
#define NGRAM "0300000000000000 0100000000000000 0000000000000000 0100000000000000 0300000000000000 676974 02000000 " \
              "0100000000000000 0a00000000000000 67697420737461747573 02000000 0200000000000000 0200000000000000"

static bytes hex_patched(const char *hex, size_t at, const char *with) {
    bytes b = from_hex(hex), w = from_hex(with);
    memcpy(b.p + at, w.p, w.n);
    return b;
}

static void predict_row(mlrt_model *m, const float *x, float *out) {
    mlrt_error e;
    CHECK_INT(mlrt_predict(m, x, out, &e), MLRT_OK);
}

static uint32_t label_of(mlrt_model *m, const float *x) {
    mlrt_error e;
    uint32_t l = 999;
    CHECK_INT(mlrt_predict_labels(m, x, 1, &l, &e), MLRT_OK);
    return l;
}

static const char *info_has(mlrt_model *m, const char *needle) {
    const char *js = mlrt_model_info_json(m);
    check_at(strstr(js, needle) != NULL, __FILE__, __LINE__, "info lacks %s: %s", needle, js);
    return js;
}

static void test_trees_spec_vectors(void) {
    const char *cls[2] = {TREE_CLS_E1, TREE_CLS_E2}, *reg[2] = {TREE_REG_E1, TREE_REG_E2};
    for (int e2 = 0; e2 < 2; e2++) {
        CHECK_INT(from_hex(cls[e2]).n, e2 ? 95 : 75);
        mlrt_model *m = LOAD_OK(V1(0x0003, from_hex(cls[e2])));
        if (!m) return;
        CHECK_INT(mlrt_model_kind(m), MLRT_KIND_DECISION_TREE);
        CHECK_INT(mlrt_model_task(m), MLRT_TASK_CLASSIFICATION);
        CHECK_INT(mlrt_input_size(m), 2);
        CHECK_INT(mlrt_output_size(m), 2);
        CHECK_INT(mlrt_class_count(m), 2);
        CHECK_INT(mlrt_class_label(m, 1), 2);
        info_has(m, "\"classes\":[0,2]");
        info_has(m, "\"trees\":{\"count\":1,\"depth\":1,\"nodes\":3,\"leaves\":2,\"nFeatures\":2}");
        info_has(m, e2 ? "\"layout\":\"E2\"" : "\"layout\":\"E1\"");
        info_has(m, "\"estimator\":\"DecisionTreeClassifier\"");
        float out[2], x0[2] = {9, 0.5f}, x1[2] = {-9, 0.50001f}, xn[2] = {0, NAN};
        predict_row(m, x0, out);
        CHECK(out[0] == 1 && out[1] == 0);
        predict_row(m, x1, out);
        CHECK(out[0] == 0 && out[1] == 1);
        CHECK_INT(label_of(m, x0), 0);
        CHECK_INT(label_of(m, x1), 2);
        CHECK_INT(label_of(m, xn), 2); /* NaN goes right */

        m = LOAD_OK(V1(0x0003, from_hex(reg[e2])));
        if (!m) return;
        CHECK_INT(mlrt_model_task(m), MLRT_TASK_REGRESSION);
        CHECK_INT(mlrt_input_size(m), 1); /* the regressor does not store its width: max feature + 1 */
        CHECK_INT(mlrt_output_size(m), 1);
        info_has(m, "\"estimator\":\"DecisionTreeRegressor\"");
        float y, a = 1.5f, b = 1.5000001f, n = NAN;
        predict_row(m, &a, &y);
        CHECK_BITS(y, -1.0f);
        predict_row(m, &b, &y);
        CHECK_BITS(y, 2.5f);
        predict_row(m, &n, &y);
        CHECK_BITS(y, 2.5f);
        mlrt_error e;
        uint32_t l;
        CHECK_INT(mlrt_predict_labels(m, &a, 1, &l, &e), MLRT_ERR_INVALID_ARGUMENT);
    }
    /* the RandomForestClassifier of §2.1: 207 bytes. Its out-of-bag index 3 is past its 2 training
     * rows (§2.3), so it is refused as it stands; with index 0 instead it loads. */
    CHECK_INT(from_hex(FOREST_CLS_E1).n, 207);
    APR_FAILS(V1(0x0004, from_hex(FOREST_CLS_E1)), MLRT_ERR_BAD_PAYLOAD, "out-of-bag index is 3 but the training set has 2 rows");
    mlrt_model *f = LOAD_OK(V1(0x0004, hex_patched(FOREST_CLS_E1, 133, "0000000000000000")));
    if (!f) return;
    CHECK_INT(mlrt_model_kind(f), MLRT_KIND_RANDOM_FOREST);
    info_has(f, "\"estimator\":\"RandomForestClassifier\"");
    info_has(f, "\"classes\":[0,2]");
    float out[2], x[2] = {0, 1};
    predict_row(f, x, out);
    CHECK(out[0] == 0 && out[1] == 1);
    /* KMeans, both layouts */
    const char *km[2] = {KMEANS_LEGACY, KMEANS_CURRENT};
    for (int cur = 0; cur < 2; cur++) {
        CHECK_INT(from_hex(km[cur]).n, cur ? 123 : 115);
        mlrt_model *m = LOAD_OK(V1(0x0006, from_hex(km[cur])));
        if (!m) return;
        CHECK_INT(mlrt_model_task(m), MLRT_TASK_CLUSTERING);
        info_has(m, cur ? "\"layout\":\"current\"" : "\"layout\":\"legacy\"");
        info_has(m, "\"clusters\":2");
        float p[2] = {1, 2}, d[2], mid[2] = {2.5f, 2.5f};
        predict_row(m, p, d);
        CHECK_BITS(d[0], 5.0f);
        CHECK_BITS(d[1], 25.0f);
        CHECK_INT(label_of(m, p), 0);
        CHECK_INT(label_of(m, mid), 0); /* a tie goes to the lowest index */
        float far[2] = {4, 6};
        CHECK_INT(label_of(m, far), 1);
    }
    /* NgramLm: inspected, not run */
    APR_FAILS(V1(0x0010, from_hex(NGRAM)), MLRT_ERR_UNSUPPORTED_MODEL_TYPE, "can inspect it but not run it");
    inspected ins;
    const mlrt__json *root = INSPECT(V1(0x0010, from_hex(NGRAM)), &ins);
    const mlrt__json *ng = root ? mlrt__json_get(root, "ngram") : NULL;
    CHECK(ng != NULL);
    if (ng) {
        CHECK_INT(jint(ng, "n"), 3);
        CHECK_INT(jint(ng, "contexts"), 1);
        CHECK_INT(jint(ng, "commands"), 1);
        CHECK_INT(jint(ng, "totalCommands"), 2);
    }
    if (root) mlrt__json_free(&ins.doc);
    /* types aprender cannot write */
    static const uint16_t never[] = {0x0005, 0x0007, 0x0008, 0x0009, 0x000A, 0x0011, 0x0012};
    for (size_t i = 0; i < LEN(never); i++)
        APR_FAILS(V1(never[i], from_hex(TREE_CLS_E1)), MLRT_ERR_UNSUPPORTED_MODEL_TYPE, "aprender itself writes no such payload");
}

/* A payload builder for trees: nodes in pre-order. */
static void tn_split(bytes *b, bool e2, uint64_t feature, float thr) {
    put_u32(b, 0), put_u64(b, feature), put_f32(b, thr);
    if (e2) put_f32(b, 0.5f), put_u64(b, 10);
}
static void tn_leaf_cls(bytes *b, bool e2, uint64_t label, uint64_t n) {
    put_u32(b, 1), put_u64(b, label), put_u64(b, n);
    if (e2) put_f32(b, 0);
}
static void tn_leaf_reg(bytes *b, bool e2, float value, uint64_t n) {
    put_u32(b, 1), put_f32(b, value), put_u64(b, n);
    if (e2) put_f32(b, 0);
}

/* A classifier whose every split is on feature (depth % width): a left-leaning chain of `depth` splits. */
static bytes chain_tree(size_t depth, bool e2, uint64_t width) {
    bytes b = {0};
    put_u8(&b, 1);
    for (size_t d = 0; d < depth; d++) tn_split(&b, e2, d % width, (float)d);
    tn_leaf_cls(&b, e2, 7, 1);
    for (size_t d = 0; d < depth; d++) tn_leaf_cls(&b, e2, 3, 1);
    put_u8(&b, 0);                       /* max_depth None */
    put_u8(&b, 1), put_u64(&b, width);   /* n_features */
    return done(b);
}

static void test_trees_deep_and_classes(void) {
    /* a chain 100 deep: x = 0.5 everywhere goes right at split 0 (0.5 > 0) -> label 3; x = -1 goes left to the bottom */
    mlrt_model *m = LOAD_OK(V1(0x0003, chain_tree(100, false, 5)));
    if (!m) return;
    info_has(m, "\"depth\":100");
    info_has(m, "\"classes\":[3,7]"); /* stored labels, not 0..n */
    float x[5] = {-1, -1, -1, -1, -1}, h[5] = {0.5f, 0.5f, 0.5f, 0.5f, 0.5f};
    CHECK_INT(label_of(m, x), 7);
    CHECK_INT(label_of(m, h), 3);
    /* the limit: MLRT__MAX_TREE_DEPTH levels load, one more is refused, 100,000 is refused cleanly */
    CHECK(LOAD_OK(V1(0x0003, chain_tree(MLRT__MAX_TREE_DEPTH, true, 3))) != NULL);
    APR_FAILS(V1(0x0003, chain_tree(MLRT__MAX_TREE_DEPTH + 1, true, 3)), MLRT_ERR_BAD_PAYLOAD, "deeper than 4096 levels");
    APR_FAILS(V1(0x0003, chain_tree(100000, false, 3)), MLRT_ERR_BAD_PAYLOAD, "deeper than 4096 levels");
    /* batch = single, for a random bushy tree */
    bytes b = {0};
    put_u8(&b, 1);
    rng_seed(5);
    int pending = 1, nodes = 0;
    while (pending) {
        pending--;
        if (nodes < 200 && rng_int(0, 2)) tn_split(&b, false, (uint64_t)rng_int(0, 3), rng_float(-1, 1)), pending += 2;
        else tn_leaf_cls(&b, false, (uint64_t)rng_int(0, 5) * 10, 1);
        nodes++;
    }
    put_u8(&b, 0), put_u8(&b, 1), put_u64(&b, 4);
    m = LOAD_OK(V1(0x0003, done(b)));
    if (!m) return;
    enum { N = 300 };
    float *xs = tmalloc(N * 4 * sizeof *xs), *all = tmalloc(N * mlrt_output_size(m) * sizeof *all);
    float *one = tmalloc(mlrt_output_size(m) * sizeof *one);
    for (int i = 0; i < N * 4; i++) xs[i] = rng_float(-1.2f, 1.2f);
    mlrt_error e;
    CHECK_INT(mlrt_predict_batch(m, xs, N, all, &e), MLRT_OK);
    uint32_t *labels = tmalloc(N * sizeof *labels);
    CHECK_INT(mlrt_predict_labels(m, xs, N, labels, &e), MLRT_OK);
    for (int r = 0; r < N; r++) {
        predict_row(m, xs + r * 4, one);
        CHECK(memcmp(one, all + r * mlrt_output_size(m), mlrt_output_size(m) * sizeof *one) == 0);
        CHECK_INT(labels[r], label_of(m, xs + r * 4));
    }
}

/* A forest of two regressor trees (E1) over 3 features, with its training set. */
static bytes forest_reg(float v0, float v1, uint64_t n_est, uint64_t oob_max, uint64_t rows, uint64_t cells, uint64_t n_y,
                        uint64_t mss) {
    bytes b = {0};
    put_u64(&b, 2);
    for (int t = 0; t < 2; t++) {
        put_u8(&b, 1);
        tn_split(&b, false, 2, 0.0f);
        tn_leaf_reg(&b, false, t ? v1 : v0, 1);
        tn_leaf_reg(&b, false, t ? -v1 : -v0, 1);
        put_u8(&b, 1), put_u64(&b, 4), put_u64(&b, mss), put_u64(&b, 1);
    }
    put_u64(&b, n_est);
    put_u8(&b, 1), put_u64(&b, 4);
    put_u8(&b, 0);
    put_u64(&b, 2);
    for (int t = 0; t < 2; t++) put_u64(&b, 1), put_u64(&b, t ? oob_max : 0);
    put_u8(&b, 1), put_u64(&b, cells);
    for (uint64_t i = 0; i < cells; i++) put_f32(&b, (float)i);
    put_u64(&b, rows), put_u64(&b, 3);
    put_u8(&b, 1), put_u64(&b, n_y);
    for (uint64_t i = 0; i < n_y; i++) put_f32(&b, 1.0f);
    return done(b);
}

static void test_trees_forest_regressor(void) {
    mlrt_model *m = LOAD_OK(V1(0x0004, forest_reg(0.1f, 0.7f, 2, 3, 4, 12, 4, 2)));
    if (!m) return;
    CHECK_INT(mlrt_input_size(m), 3); /* x_train's columns, though only feature 2 is used */
    info_has(m, "\"estimator\":\"RandomForestRegressor\"");
    float x[3] = {9, 9, -1}, y;
    predict_row(m, x, &y);
    float want = 0.0f; /* aprender: f32 sum in tree order, then / n */
    want += 0.1f;
    want += 0.7f;
    want /= 2.0f;
    CHECK_BITS(y, want);
    /* invariants */
    APR_FAILS(V1(0x0004, forest_reg(0.1f, 0.7f, 3, 3, 4, 12, 4, 2)), MLRT_ERR_BAD_PAYLOAD, "n_estimators is 3");
    APR_FAILS(V1(0x0004, forest_reg(0.1f, 0.7f, 2, 4, 4, 12, 4, 2)), MLRT_ERR_BAD_PAYLOAD, "out-of-bag index is 4");
    APR_FAILS(V1(0x0004, forest_reg(0.1f, 0.7f, 2, 3, 4, 11, 4, 2)), MLRT_ERR_SIZE_MISMATCH, "x_train holds 11 floats");
    APR_FAILS(V1(0x0004, forest_reg(0.1f, 0.7f, 2, 3, 4, 12, 3, 2)), MLRT_ERR_SIZE_MISMATCH, "y_train holds 3 values");
    APR_FAILS(V1(0x0004, forest_reg(0.1f, 0.7f, 2, 3, 4, 12, 4, 3)), MLRT_ERR_BAD_PAYLOAD, "min_samples_split 2");
    APR_FAILS(V1(0x0004, forest_reg(NAN, 0.7f, 2, 3, 4, 12, 4, 2)), MLRT_ERR_NON_FINITE, "non-finite value");
    /* a row count whose product with cols overflows */
    APR_FAILS(V1(0x0004, forest_reg(0.1f, 0.7f, 2, 3, 1ull << 62, 12, 4, 2)), MLRT_ERR_SIZE_MISMATCH, "x_train holds 12");
}

static void test_trees_malformed(void) {
    /* no layout fits: all four are named */
    APR_FAILS(V1(0x0003, hex_patched(TREE_CLS_E1, 1, "05000000")), MLRT_ERR_BAD_PAYLOAD, "fits none of aprender's layouts: classifier E1");
    APR_FAILS(V1(0x0003, prefix(from_hex(TREE_CLS_E1), 74)), MLRT_ERR_BAD_PAYLOAD, "classifier E1 payload ends at byte 74");
    APR_FAILS(V1(0x0003, with_extra_byte(from_hex(TREE_CLS_E1), 0)), MLRT_ERR_BAD_PAYLOAD, "fits none");
    APR_FAILS(V1(0x0003, hex_patched(TREE_CLS_E1, 0, "02")), MLRT_ERR_BAD_PAYLOAD, "fits none");          /* Option tag 2 */
    APR_FAILS(V1(0x0003, from_hex("")), MLRT_ERR_BAD_PAYLOAD, "fits none");
    /* invariants of the one layout that fits */
    APR_FAILS(V1(0x0003, hex_patched(TREE_CLS_E1, 5, "0200000000000000")), MLRT_ERR_BAD_PAYLOAD, "uses feature 2 but n_features is 2");
    APR_FAILS(V1(0x0003, hex_patched(TREE_CLS_E1, 13, "0000c07f")), MLRT_ERR_NON_FINITE, "NaN threshold");
    APR_FAILS(V1(0x0003, hex_patched(TREE_CLS_E1, 58, "0000000000000000")), MLRT_ERR_BAD_PAYLOAD, "1 levels deep but its max_depth is 0");
    APR_FAILS(V1(0x0003, hex_patched(TREE_CLS_E1, 29, "0000000000000000")), MLRT_ERR_BAD_PAYLOAD, "0 training samples");
    APR_FAILS(V1(0x0003, hex_patched(TREE_CLS_E1, 21, "0000000001000000")), MLRT_ERR_UNSUPPORTED, "below 2^32");
    APR_FAILS(V1(0x0003, hex_patched(TREE_CLS_E1, 67, "0000000000000000")), MLRT_ERR_BAD_DIMENSIONS, "n_features 0");
    APR_FAILS(V1(0x0003, hex_patched(TREE_REG_E1, 50, "0100000000000000")), MLRT_ERR_BAD_PAYLOAD, "min_samples_split 1");
    APR_FAILS(V1(0x0003, hex_patched(TREE_REG_E1, 58, "0300000000000000")), MLRT_ERR_BAD_PAYLOAD, "fewer than min_samples_leaf 3");
    /* infinite thresholds are kept; a NaN leaf value is not */
    CHECK(LOAD_OK(V1(0x0003, hex_patched(TREE_CLS_E1, 13, "0000807f"))) != NULL);
    APR_FAILS(V1(0x0003, hex_patched(TREE_REG_E1, 21, "0000c07f")), MLRT_ERR_NON_FINITE, "non-finite value");
    /* unfitted: tree None (E1 and E2 read the same: the invariant, not ambiguity, is reported) */
    APR_FAILS(V1(0x0003, from_hex("00 00 01 0200000000000000")), MLRT_ERR_NOT_A_MODEL, "never fitted");
    APR_FAILS(V1(0x0004, from_hex("0000000000000000 0000000000000000 00 00 0000000000000000 00 00")), MLRT_ERR_NOT_A_MODEL,
              "never fitted");
    /* forests: a count beyond the payload, a truncated tree */
    APR_FAILS(V1(0x0004, hex_patched(FOREST_CLS_E1, 0, "ffffffffffffff7f")), MLRT_ERR_BAD_PAYLOAD, "fits none");
    APR_FAILS(V1(0x0004, prefix(from_hex(FOREST_CLS_E1), 100)), MLRT_ERR_BAD_PAYLOAD, "fits none");
    APR_FAILS(V1(0x0004, hex_patched(FOREST_CLS_E1, 8 + 58, "02")), MLRT_ERR_BAD_PAYLOAD, "max_depth differs");
    APR_FAILS(V1(0x0004, hex_patched(FOREST_CLS_E1, 92, "04")), MLRT_ERR_BAD_PAYLOAD, "max_depth differs");
    /* KMeans */
    APR_FAILS(V1(0x0006, with_extra_byte(from_hex(KMEANS_CURRENT), 0)), MLRT_ERR_BAD_PAYLOAD, "the legacy layout ends at byte 115");
    APR_FAILS(V1(0x0006, prefix(from_hex(KMEANS_LEGACY), 110)), MLRT_ERR_TRUNCATED, "inside n_iter");
    APR_FAILS(V1(0x0006, hex_patched(KMEANS_LEGACY, 0, "0300000000000000")), MLRT_ERR_BAD_PAYLOAD, "rows differ from n_clusters");
    APR_FAILS(V1(0x0006, hex_patched(KMEANS_LEGACY, 42, "0000c07f")), MLRT_ERR_NON_FINITE, "centroid 0 coordinate 1");
    APR_FAILS(V1(0x0006, hex_patched(KMEANS_LEGACY, 79, "0200000000000000")), MLRT_ERR_BAD_PAYLOAD, "training label 0 is 2");
    APR_FAILS(V1(0x0006, hex_patched(KMEANS_LEGACY, 107, "ffff000000000000")), MLRT_ERR_BAD_PAYLOAD, "n_iter exceeds max_iter");
    APR_FAILS(V1(0x0006, hex_patched(KMEANS_CURRENT, 115, "0000000000000000")), MLRT_ERR_BAD_PAYLOAD, "n_init is 0");
    APR_FAILS(V1(0x0006, hex_patched(KMEANS_LEGACY, 30, "ffffffff00000000")), MLRT_ERR_TRUNCATED, "centroids declares 4294967295 floats");
    APR_FAILS(V1(0x0006, from_hex("0200000000000000 2c01000000000000 17b7d138 00 00 00 0000a03f 0300000000000000")),
              MLRT_ERR_NOT_A_MODEL, "never fitted");
    /* NgramLm: the payload is still checked */
    APR_FAILS(V1(0x0010, hex_patched(NGRAM, 0, "0900000000000000")), MLRT_ERR_BAD_PAYLOAD, "n is 9");
    APR_FAILS(V1(0x0010, hex_patched(NGRAM, 40, "ff")), MLRT_ERR_INVALID_UTF8, "not valid UTF-8");
    APR_FAILS(V1(0x0010, prefix(from_hex(NGRAM), 90)), MLRT_ERR_TRUNCATED, "last_trained_pos");
}

/* A distance that overflows f32 is +inf, not a refusal of the row: centroids [0, 0] and [3e19, 0]
 * and the input [1, 0] give [1, +inf] and the nearest centroid 0. A row refused is one whose every
 * distance overflows (centroids [-3e19, 0] and [3e19, 0], input [0, 0]): it has no nearest centroid. */
static void test_kmeans_overflowing_distance(void) {
    mlrt_model *m = LOAD_OK(V1(0x0006, hex_patched(KMEANS_LEGACY, 46, "b52ad05f 00000000")));
    if (!m) return;
    float x[2] = {1, 0}, d[2];
    predict_row(m, x, d);
    CHECK_BITS(d[0], 1.0f);
    CHECK(isinf(d[1]) && d[1] > 0);
    CHECK_INT(label_of(m, x), 0);
    mlrt_model *both = LOAD_OK(V1(0x0006, hex_patched(KMEANS_LEGACY, 38, "b52ad0df 00000000 b52ad05f 00000000")));
    if (!both) return;
    float zero[2] = {0, 0};
    mlrt_error e;
    uint32_t label;
    CHECK_INT(mlrt_predict(both, zero, d, &e), MLRT_ERR_NON_FINITE);
    CHECK(strstr(e.message, "every distance of row 0 to the 2 centroids overflowed f32") != NULL);
    CHECK_INT(mlrt_predict_labels(both, zero, 1, &label, &e), MLRT_ERR_NON_FINITE);
}

const test_case trees_tests[] = {
    T(test_trees_spec_vectors),
    T(test_trees_deep_and_classes),
    T(test_trees_forest_regressor),
    T(test_trees_malformed),
    T(test_kmeans_overflowing_distance),
    {0},
};
