/* fuzz_onnx.c — libFuzzer target for the ONNX reader, importer and planner: mlrt__read_onnx,
 * mlrt__import_onnx, mlrt__build_graph, the public entry points, and runs of the plan through the
 * public API (mlrt_run over every input, float or int64; predict for graphs of rows).
 * Oracles (fuzz_common.h): refusals are well-formed and name the format; the reader's refusal is
 * the public loader's and inspect's; a refused graph is refused for a graph-level reason; a
 * planned graph's info is valid JSON; a run gives finite outputs or NON_FINITE (or an index out of
 * range: INVALID_ARGUMENT), and a batch gives each row the bits it has alone. Seeds: the PyTorch zoo
 * (tests/onnx/zoo), cut to -max_len, and the graphs of tests/fuzz/seeds/fuzz_onnx (multi-input,
 * int64 and varying-length graphs among them). */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool graph_error(mlrt_status st) {
    return fuzz_is_model_error(st) || st == MLRT_ERR_SHAPE_OVERFLOW || st == MLRT_ERR_UNSUPPORTED_VERSION;
}

/* A number after key in the model's info, or def. */
static unsigned long long info_number(const char *info, const char *key, unsigned long long def) {
    const char *p = strstr(info, key);
    return p ? strtoull(p + strlen(key), NULL, 10) : def;
}

/* The model's inputs for `rows` rows (dim 0 when batched; other varying dims 1): values 0, 1, -1 by row. */
static mlrt_tensor *make_inputs(const mlrt_model *m, bool batched, size_t rows, uint64_t *elements) {
    size_t n = mlrt_input_count(m);
    mlrt_tensor *in = calloc(n + 1, sizeof *in);
    FUZZ_ASSERT(in, "out of memory");
    *elements = 0;
    for (size_t k = 0; k < n; k++) {
        const mlrt_tensor *t = mlrt_input(m, k);
        in[k] = *t;
        uint64_t count = 1;
        for (uint32_t d = 0; d < t->rank; d++) {
            in[k].dims[d] = t->dims[d] >= 0 ? t->dims[d] : d == 0 && batched ? (int64_t)rows : 1;
            count *= (uint64_t)in[k].dims[d];
        }
        *elements += count;
        if (count > (1u << 16)) continue; /* (too slow: the caller skips the run) */
        size_t per = batched && t->rank ? (size_t)(count / rows) : (size_t)count;
        in[k].data = malloc(count * 8 + 8);
        FUZZ_ASSERT(in[k].data, "out of memory");
        for (uint64_t i = 0; i < count; i++) {
            size_t r = per ? (size_t)(i / per) % 3 : 0;
            if (t->dtype == MLRT_I64) ((int64_t *)in[k].data)[i] = r == 2 ? 0 : (int64_t)r;
            else ((float *)in[k].data)[i] = r == 0 ? 0.0f : r == 1 ? 1.0f : -1.0f;
        }
    }
    return in;
}

static void free_inputs(mlrt_tensor *in, size_t n) {
    for (size_t k = 0; k < n; k++) free(in[k].data);
    free(in);
}

static bool run_ok(mlrt_status st) { return st == MLRT_OK || st == MLRT_ERR_NON_FINITE || st == MLRT_ERR_INVALID_ARGUMENT; }

/* mlrt_run over every input: a batch of 3 rows, then row 1 alone, which must give its rows' bits. */
static void exercise_run(mlrt_model *m, bool batched) {
    enum { ROWS = 3 };
    size_t rows = batched ? ROWS : 1, n_in = mlrt_input_count(m);
    uint64_t elements;
    mlrt_tensor *in = make_inputs(m, batched, rows, &elements);
    mlrt_error e;
    if (elements > (1u << 16)) { free_inputs(in, n_in); return; }
    mlrt_status st = mlrt_run(m, in, n_in, &e);
    if (st) fuzz_check_error(st, &e);
    FUZZ_ASSERT(run_ok(st) || graph_error(st), "run: %s: %s", mlrt_status_name(st), e.message);
    if (st || !batched) { free_inputs(in, n_in); return; }
    size_t n_out = mlrt_output_count(m);
    void **keep = calloc(n_out + 1, sizeof *keep);
    size_t *per = calloc(n_out + 1, sizeof *per);
    FUZZ_ASSERT(keep && per, "out of memory");
    for (size_t k = 0; k < n_out; k++) { /* row 1 of each output */
        const mlrt_tensor *y = mlrt_output(m, k);
        size_t count = mlrt_dtype_size(y->dtype);
        for (uint32_t d = 0; d < y->rank; d++) count *= (size_t)y->dims[d];
        per[k] = count / ROWS;
        keep[k] = malloc(per[k] + 1);
        FUZZ_ASSERT(keep[k], "out of memory");
        memcpy(keep[k], (const char *)y->data + per[k], per[k]);
    }
    for (size_t k = 0; k < n_in; k++) { /* row 1 alone */
        size_t row = mlrt_dtype_size(in[k].dtype);
        for (uint32_t d = 1; d < in[k].rank; d++) row *= (size_t)in[k].dims[d];
        memmove(in[k].data, (const char *)in[k].data + row, row);
        in[k].dims[0] = 1;
    }
    st = mlrt_run(m, in, n_in, &e);
    FUZZ_ASSERT(st == MLRT_OK, "the batch ran but row 1 alone: %s", e.message);
    for (size_t k = 0; k < n_out; k++) {
        FUZZ_ASSERT(memcmp(mlrt_output(m, k)->data, keep[k], per[k]) == 0, "output %zu: row 1 alone differs from the batch", k);
        free(keep[k]);
    }
    free(keep), free(per);
    free_inputs(in, n_in);
}

/* Rows through predict (graphs of one float input and output): a batch equals its rows one by one. */
static void exercise_rows(mlrt_model *m, bool batched) {
    size_t in = mlrt_input_size(m), out = mlrt_output_size(m);
    if (!in || in > (1u << 16)) return;
    enum { ROWS = 3 };
    static const float v[ROWS] = {0.0f, 1.0f, -1.0f};
    float *x = malloc(ROWS * in * sizeof(float)), *y = malloc(ROWS * out * sizeof(float)), *y1 = malloc(out * sizeof(float));
    FUZZ_ASSERT(x && y && y1, "out of memory");
    for (size_t r = 0; r < ROWS; r++)
        for (size_t i = 0; i < in; i++) x[r * in + i] = v[r];
    mlrt_error e;
    mlrt_status st = mlrt_predict_batch(m, x, batched ? ROWS : 1, y, &e);
    FUZZ_ASSERT(st == MLRT_OK || st == MLRT_ERR_NON_FINITE, "predict_batch: %s", e.message);
    for (size_t r = 0; st == MLRT_OK && r < (batched ? ROWS : 1); r++) {
        mlrt_status s1 = mlrt_predict(m, x + r * in, y1, &e);
        FUZZ_ASSERT(s1 == MLRT_OK, "the batch ran but row %zu alone: %s", r, e.message);
        FUZZ_ASSERT(memcmp(y1, y + r * out, out * sizeof(float)) == 0, "row %zu: batch differs from single", r);
    }
    free(x), free(y), free(y1);
}

static void exercise(mlrt_model *m) {
    const char *info = mlrt_model_info_json(m);
    fuzz_check_json_output(info);
    FUZZ_ASSERT(mlrt_input_count(m) >= 1 && mlrt_output_count(m) >= 1, "inputs %zu outputs %zu", mlrt_input_count(m),
                mlrt_output_count(m));
    FUZZ_ASSERT(mlrt_input_size(m) <= (1u << 24) && mlrt_output_size(m) <= (1u << 24), "sizes %zu %zu", mlrt_input_size(m),
                mlrt_output_size(m));
    bool batched = strstr(info, "\"batched\":true") != NULL;
    if (info_number(info, "\"macs\":", ~0ull) > (1u << 22)) return; /* too slow to run in the fuzzer's time */
    exercise_rows(m, batched);
    exercise_run(m, batched);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > FUZZ_MAX_INPUT) return 0;
    mlrt_error e, e2;
    mlrt__onnx g;
    mlrt_status st = mlrt__read_onnx(data, size, &g, &e);
    bool sniffed = mlrt__onnx_sniff(data, size);
    if (st) {
        fuzz_check_error(st, &e);
        FUZZ_ASSERT(strncmp(e.message, "onnx: ", 6) == 0 || st == MLRT_ERR_OUT_OF_MEMORY, "message: %s", e.message);
        if (sniffed && !(size >= 4 && (memcmp(data, "APR", 3) == 0))) {
            mlrt_model *m = mlrt_load_from_bytes(data, size, &e2);
            if (m == NULL && e2.code != st) { /* a file that is also an exact-size .bin reads as .bin */
                FUZZ_ASSERT(strncmp(e2.message, "bin: ", 5) == 0, "reader %s but load %s: %s", mlrt_status_name(st),
                            mlrt_status_name(e2.code), e2.message);
            }
            mlrt_free(m);
        }
        return 0;
    }
    /* (the reader skips unknown fields; detection does not: such a file is not taken for ONNX) */
    char *desc = mlrt__onnx_describe(&g);
    FUZZ_ASSERT(desc != NULL, "describe");
    free(desc);
    mlrt__ir_graph ir;
    mlrt_model *m = NULL;
    st = mlrt__import_onnx(&g, &ir, &e);
    if (!st) m = mlrt__build_graph(&ir, MLRT_FORMAT_ONNX, &e);
    if (m) {
        exercise(m);
        mlrt_free(m);
    } else {
        fuzz_check_error(e.code, &e);
        FUZZ_ASSERT(strncmp(e.message, "onnx: ", 6) == 0 || e.code == MLRT_ERR_OUT_OF_MEMORY, "message: %s", e.message);
        FUZZ_ASSERT(graph_error(e.code), "a parsed graph refused with %s: %s", mlrt_status_name(e.code), e.message);
    }
    mlrt__onnx_free(&g);
    char *js = mlrt_inspect(data, size, &e2);
    if (js) fuzz_check_json_output(js);
    mlrt_string_free(js);
    return 0;
}
