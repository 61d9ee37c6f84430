/* test_layout.c — dense weights stored [out][in] (PyTorch) or [in][out] (Keras, JAX/Flax, aprender):
 * the orientation read from bias shapes, the chain of widths and names; guessed only when
 * nothing decides; the caller's override. */
#include "builders.h"

/* ref's tensors (weights [out][in] as ref_tensors writes them) with the weights of the layers in
 * `transpose` (bit l) rewritten [in][out]. */
static int layout_tensors(ref_mlp *r, const char *const *names, unsigned transpose, tspec *t) {
    int n = ref_tensors(r, names, "F32", 0, t);
    for (int k = 0; k < n; k++) {
        if (t[k].rank != 2) continue;
        int l = 0;
        while (names[2 * l] != t[k].name) l++;
        if (!(transpose >> l & 1)) continue;
        size_t out = t[k].shape[0], in = t[k].shape[1];
        float *tr = tmalloc(out * in * sizeof *tr);
        const float *w = t[k].data;
        for (size_t o = 0; o < out; o++)
            for (size_t i = 0; i < in; i++) tr[i * out + o] = w[o * in + i];
        t[k].data = tr;
        t[k].shape[0] = in, t[k].shape[1] = out;
    }
    return n;
}

static mlrt_model *load_layout(bytes f, mlrt_weight_layout layout, mlrt_error *e) {
    mlrt_load_options o = {.weight_layout = layout};
    return keep_model(mlrt_load_from_bytes_ex(exact(f.p, f.n), f.n, &o, e));
}

static void check_layout_info(mlrt_model *m, const char *layout, bool guessed) {
    if (!m) return;
    char want[96];
    snprintf(want, sizeof want, "\"weightLayout\":\"%s\",\"weightLayoutGuessed\":%s", layout, guessed ? "true" : "false");
    check_at(strstr(mlrt_model_info_json(m), want) != NULL, __FILE__, __LINE__, "info lacks %s: %s", want,
             mlrt_model_info_json(m));
}

static void test_layout_decided_by_the_file(void) {
    static const int dims[] = {6, 8, 3};
    ref_mlp r;
    ref_make(&r, 2, dims, 41);
    tspec t[4];
    /* Keras / Flax names: 'kernel' [in, out] */
    static const char *const keras[] = {"dense.kernel", "dense.bias", "dense_1.kernel", "dense_1.bias"};
    int n = layout_tensors(&r, keras, 3, t);
    mlrt_model *m = LOAD_OK(st_build(NULL, t, n));
    CHECK_VS_REF(m, &r);
    check_layout_info(m, "in_out", false);
    static const char *const flax[] = {"params/Dense_0/kernel", "params/Dense_0/bias", "params/Dense_1/kernel", "params/Dense_1/bias"};
    n = layout_tensors(&r, flax, 3, t);
    CHECK_VS_REF(LOAD_OK(st_build(NULL, t, n)), &r);
    /* aprender's numbered tensors [in, out]: the biases decide */
    static const char *const numbered[] = {"0", "1", "2", "3"};
    n = layout_tensors(&r, numbered, 3, t);
    m = LOAD_OK(st_build(NULL, t, n));
    CHECK_VS_REF(m, &r);
    check_layout_info(m, "in_out", false);
    n = layout_tensors(&r, numbered, 0, t);
    check_layout_info(LOAD_OK(st_build(NULL, t, n)), "out_in", false);
    /* PyTorch names, one layer each way: no bias, the chain decides (6x8 then [8,3]: only [out,in] then [in,out] chains) */
    static const char *const nobias[] = {"a.weight", NULL, "b.weight", NULL};
    n = layout_tensors(&r, nobias, 2, t);
    m = LOAD_OK(st_build(NULL, t, n));
    CHECK_VS_REF(m, &r);
    check_layout_info(m, "mixed", false);
    /* bias decides against the name */
    static const char *const pt[] = {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"};
    n = layout_tensors(&r, pt, 1, t);
    m = LOAD_OK(st_build(NULL, t, n));
    CHECK_VS_REF(m, &r);
    check_layout_info(m, "mixed", false);
    /* BinTensors too */
    n = layout_tensors(&r, keras, 3, t);
    CHECK_VS_REF(LOAD_OK(bt_build(NULL, t, n)), &r);
}

static void test_layout_guessed_and_overridden(void) {
    static const int dims[] = {5, 5, 5};
    ref_mlp r;
    ref_make(&r, 2, dims, 43);
    tspec t[4];
    static const char *const numbered[] = {"0", "1", "2", "3"};
    /* square, numbered: nothing decides; PyTorch's order, and info says it was a guess */
    int n = layout_tensors(&r, numbered, 0, t);
    mlrt_model *m = LOAD_OK(st_build(NULL, t, n));
    CHECK_VS_REF(m, &r);
    check_layout_info(m, "out_in", true);
    /* the same file written [in, out]: the caller says so */
    n = layout_tensors(&r, numbered, 3, t);
    mlrt_error e;
    m = load_layout(st_build(NULL, t, n), MLRT_LAYOUT_IN_OUT, &e);
    CHECK_VS_REF(m, &r);
    check_layout_info(m, "in_out", false);
    m = load_layout(st_build(NULL, t, n), MLRT_LAYOUT_AUTO, &e);
    check_layout_info(m, "out_in", true); /* loads, but not as written: the guess is reported */
    /* square with names: the names decide, no guess */
    static const char *const keras[] = {"d0.kernel", "d0.bias", "d1.kernel", "d1.bias"};
    n = layout_tensors(&r, keras, 3, t);
    m = LOAD_OK(st_build(NULL, t, n));
    CHECK_VS_REF(m, &r);
    check_layout_info(m, "in_out", false);
    /* an override the file contradicts */
    static const int rect[] = {6, 8, 3};
    ref_make(&r, 2, rect, 44);
    static const char *const pt[] = {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"};
    n = layout_tensors(&r, pt, 0, t);
    m = load_layout(st_build(NULL, t, n), MLRT_LAYOUT_IN_OUT, &e);
    CHECK(m == NULL && e.code == MLRT_ERR_BAD_DIMENSIONS);
    CHECK_CONTAINS(e.message, "bias 'fc1.bias' must have shape [6]");
    m = load_layout(st_build(NULL, t, n), (mlrt_weight_layout)7, &e);
    CHECK(m == NULL && e.code == MLRT_ERR_INVALID_ARGUMENT);
    /* shapes that chain in no orientation */
    static const int bad[] = {6, 8, 3};
    ref_make(&r, 2, bad, 45);
    static const char *const nb[] = {"a.weight", NULL, "b.weight", NULL};
    n = ref_tensors(&r, nb, "F32", 0, t);
    t[1].shape[1] = 7; /* [3, 7]: neither 8 nor 6 */
    t[1].nbytes = 21 * 4;
    ST_FAILS(st_build(NULL, t, n), MLRT_ERR_BAD_DIMENSIONS, "(as [out, in] or [in, out])");
}

/* mlrt__dense_pack_f32 against the definition dst[p][i][j] = W[8p + j][i] (0 past out), from file
 * bytes at an odd address, for every shape class: panels full and partial, inputs a multiple of
 * the 4-wide transpose and not; then inf or NaN at every position is refused (vector body, ragged
 * inputs, partial panel, both orientations). */
static void test_dense_pack_f32_matches_definition(void) {
    static const size_t ins[] = {1, 3, 4, 5, 8, 13}, outs[] = {1, 7, 8, 9, 16, 21};
    for (size_t a = 0; a < sizeof ins / sizeof *ins; a++)
        for (size_t b = 0; b < sizeof outs / sizeof *outs; b++)
            for (int in_major = 0; in_major < 2; in_major++) {
                size_t in = ins[a], out = outs[b], padded = (out + 7) / 8 * 8;
                float *w = tmalloc(in * out * sizeof *w), *got = tmalloc(padded * in * sizeof *got);
                uint8_t *file = tmalloc(in * out * 4 + 1);
                for (size_t o = 0; o < out; o++)
                    for (size_t i = 0; i < in; i++) w[o * in + i] = (float)(o * 100 + i) + 0.25f;
                for (size_t o = 0; o < out; o++) /* the file's order */
                    for (size_t i = 0; i < in; i++)
                        memcpy(file + 1 + 4 * (in_major ? i * out + o : o * in + i), &w[o * in + i], 4);
                memset(got, 0xff, padded * in * sizeof *got); /* NaN: every slot must be written */
                CHECK(mlrt__dense_pack_f32(file + 1, in_major, in, out, got));
                size_t wrong = 0;
                for (size_t p = 0; p < padded / 8; p++)
                    for (size_t i = 0; i < in; i++)
                        for (size_t j = 0; j < 8; j++) {
                            float want = 8 * p + j < out ? w[(8 * p + j) * in + i] : 0.0f;
                            wrong += memcmp(&got[(p * in + i) * 8 + j], &want, 4) != 0;
                        }
                check_at(wrong == 0, __FILE__, __LINE__, "in %zu out %zu in_major %d: %zu slots wrong", in, out, in_major, wrong);
                for (size_t k = 0; k < in * out; k++) {
                    float bad = k % 3 == 0 ? NAN : k % 3 == 1 ? INFINITY : -INFINITY, keep;
                    memcpy(&keep, file + 1 + 4 * k, 4);
                    memcpy(file + 1 + 4 * k, &bad, 4);
                    check_at(!mlrt__dense_pack_f32(file + 1, in_major, in, out, got), __FILE__, __LINE__,
                             "in %zu out %zu in_major %d: non-finite file value %zu accepted", in, out, in_major, k);
                    memcpy(file + 1 + 4 * k, &keep, 4);
                }
            }
}

/* mlrt_model_fork: the same bits as the model it came from, row by row and in any batch, for f32
 * and Q8 weights, while both are used in turn; freed before its parent (ASan checks the ownership);
 * refused for models that are not dense. */
static void test_model_fork_predicts_as_its_parent(void) {
    static const char *const files[] = {"build/models/mnist-mlp.f32.bin", "build/models/mnist-mlp.q8.apr"};
    for (size_t k = 0; k < 2; k++) {
        bytes f = read_file_or_empty(files[k]);
        if (!f.n) continue; /* build/models not made */
        mlrt_error e = {0};
        mlrt_model *m = keep_model(mlrt_load_from_bytes(exact(f.p, f.n), f.n, &e));
        CHECK(m != NULL);
        if (!m) continue;
        mlrt_model *fork = mlrt_model_fork(m, &e);
        CHECK(fork != NULL);
        if (!fork) continue;
        size_t in = mlrt_input_size(m), out = mlrt_output_size(m), n = 70;
        float *x = tmalloc(n * in * sizeof *x), *a = tmalloc(n * out * sizeof *a), *b = tmalloc(n * out * sizeof *b);
        for (size_t i = 0; i < n * in; i++) x[i] = (float)((i * 7919) % 1000) / 1000.0f;
        CHECK_INT(mlrt_predict_batch(m, x, n, a, &e), MLRT_OK);
        CHECK_INT(mlrt_predict_batch(fork, x, 33, b, &e), MLRT_OK);          /* a fork's rows ... */
        CHECK_INT(mlrt_predict_batch(m, x + 33 * in, n - 33, b + 33 * out, &e), MLRT_OK); /* ... and the parent's */
        CHECK(memcmp(a, b, n * out * sizeof *a) == 0);
        CHECK(strcmp(mlrt_model_info_json(fork), mlrt_model_info_json(m)) == 0);
        CHECK(mlrt_model_fork(fork, &e) == NULL && e.code == MLRT_ERR_UNSUPPORTED);
        mlrt_free(fork);
    }
    mlrt_error e = {0};
    CHECK(mlrt_model_fork(NULL, &e) == NULL && e.code == MLRT_ERR_INVALID_ARGUMENT);
}

/* The model's layers run slice by slice (mlrt_layer_slice) as threads run them: the parent and a
 * fork take turns over slices of MLRT_SLICE outputs, and every output gets mlrt_predict_batch's bits,
 * for f32 and Q8 weights, widths that are and are not multiples of the slice, and 1 to 9 rows (both
 * the one-row and the row-block kernels). Misuse is refused: an unaligned or out-of-range slice, a
 * partial softmax, a layer past the last; a NaN input at layer 0 is NON_FINITE, as in predict. */
static void slice_like_threads(mlrt_model *m, mlrt_model *fork, const float *x, size_t n, float *out) {
    size_t width = 0, layers = mlrt_layer_count(m);
    for (size_t i = 0; i < layers; i++) width = mlrt_layer(m, i).outputs > width ? mlrt_layer(m, i).outputs : width;
    float *buf = tmalloc(2 * width * n * sizeof *buf);
    const float *in = x;
    mlrt_error e = {0};
    for (size_t i = 0; i < layers; i++) {
        mlrt_layer_info l = mlrt_layer(m, i);
        float *y = i + 1 == layers ? out : buf + (i & 1) * width * n;
        size_t step = l.activation == MLRT_ACT_SOFTMAX ? l.outputs : MLRT_SLICE * (1 + i % 2);
        for (size_t o0 = 0, k = 0; o0 < l.outputs; o0 += step, k++)
            CHECK_INT(mlrt_layer_slice(k % 2 ? fork : m, i, in, y, n, o0, o0 + step < l.outputs ? o0 + step : l.outputs, &e), MLRT_OK);
        in = y;
    }
}

static void test_layer_slices_give_predict_bits(void) {
    static const char *const files[] = {"build/models/mnist-mlp.f32.bin", "build/models/mnist-mlp.q8.apr"};
    for (size_t k = 0; k < 3; k++) {
        ref_mlp r;
        mlrt_model *m;
        if (k < 2) {
            bytes f = read_file_or_empty(files[k]);
            if (!f.n) continue; /* build/models not made */
            mlrt_error e = {0};
            m = keep_model(mlrt_load_from_bytes(exact(f.p, f.n), f.n, &e));
        } else {
            static const int dims[] = {13, 70, 45, 33};
            ref_make(&r, 3, dims, 5);
            r.act[2] = MLRT_ACT_TANH; /* a last layer that slices */
            tspec t[6];
            static const char *const names[] = {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "fc3.weight", "fc3.bias"};
            int nt = ref_tensors(&r, names, "F32", 0, t);
            m = LOAD_OK(st_build("{\"activations\":\"relu,relu,tanh\"}", t, nt));
        }
        CHECK(m != NULL);
        if (!m) continue;
        mlrt_error e = {0};
        mlrt_model *fork = mlrt_model_fork(m, &e);
        CHECK(fork != NULL);
        size_t in = mlrt_input_size(m), out = mlrt_output_size(m);
        for (size_t n = 1; n <= 9 && fork; n += 2) {
            float *x = tmalloc(n * in * sizeof *x), *a = tmalloc(n * out * sizeof *a), *b = tmalloc(n * out * sizeof *b);
            for (size_t i = 0; i < n * in; i++) x[i] = (float)((i * 7919) % 1000) / 1000.0f - (k == 2 ? 0.5f : 0.0f);
            CHECK_INT(mlrt_predict_batch(m, x, n, a, &e), MLRT_OK);
            slice_like_threads(m, fork, x, n, b);
            check_at(memcmp(a, b, n * out * sizeof *a) == 0, __FILE__, __LINE__, "model %zu, %zu rows: slices differ", k, n);
        }
        float *x = tmalloc(in * sizeof *x), *y = tmalloc(512 * 4 * sizeof *y);
        for (size_t i = 0; i < in; i++) x[i] = 0.5f;
        mlrt_layer_info l0 = mlrt_layer(m, 0), last = mlrt_layer(m, mlrt_layer_count(m) - 1);
        CHECK_INT(mlrt_layer_slice(m, 0, x, y, 1, 16, 48, &e), MLRT_ERR_INVALID_ARGUMENT);   /* unaligned */
        CHECK_INT(mlrt_layer_slice(m, 0, x, y, 1, 0, l0.outputs + 1, &e), MLRT_ERR_INVALID_ARGUMENT);
        CHECK_INT(mlrt_layer_slice(m, 0, x, y, 1, 32, 32, &e), MLRT_ERR_INVALID_ARGUMENT);  /* empty */
        CHECK_INT(mlrt_layer_slice(m, mlrt_layer_count(m), x, y, 1, 0, 32, &e), MLRT_ERR_INVALID_ARGUMENT);
        CHECK_INT(mlrt_layer_slice(m, 0, x, y, 0, 0, 32, &e), MLRT_ERR_INVALID_ARGUMENT);
        if (last.activation == MLRT_ACT_SOFTMAX && last.outputs > MLRT_SLICE)
            CHECK_INT(mlrt_layer_slice(m, mlrt_layer_count(m) - 1, x, y, 1, 0, MLRT_SLICE, &e), MLRT_ERR_INVALID_ARGUMENT);
        x[in - 1] = NAN;
        CHECK_INT(mlrt_layer_slice(fork, 0, x, y, 1, 0, MLRT_SLICE, &e), MLRT_ERR_NON_FINITE);
        CHECK(strstr(e.message, "input") != NULL);
        mlrt_free(fork);
    }
}

const test_case layout_tests[] = {
    T(test_layout_decided_by_the_file),
    T(test_layout_guessed_and_overridden),
    T(test_dense_pack_f32_matches_definition),
    T(test_model_fork_predicts_as_its_parent),
    T(test_layer_slices_give_predict_bits),
    {0},
};
