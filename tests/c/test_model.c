/* test_model.c — the model layer through the public API: misuse, batches against single rows, the trained models. */
#include "builders.h"


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

const test_case model_tests[] = {
    T(test_api_misuse),
    T(test_batch_equals_single_bit_for_bit),
    T(test_trained_models_if_present),
    {0},
};