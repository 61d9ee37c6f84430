/* fuzz_onnx.c — libFuzzer target for the ONNX reader and planner: mlrt__read_onnx, mlrt__onnx_model,
 * the public entry points, and a run of the plan.
 * Oracles (fuzz_common.h): refusals are well-formed and name the format; the reader's refusal is
 * the public loader's and inspect's; a refused graph is refused for a graph-level reason; a
 * planned graph's info is valid JSON, and it predicts three rows (0, 1, -1) either with finite
 * outputs or NON_FINITE, a batch giving each row's bits. Seeds: the PyTorch zoo (tests/onnx/zoo),
 * cut to -max_len, and the small graphs of tests/fuzz/seeds/fuzz_onnx. */
#include "fuzz_common.h"
#include "model/graph.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool graph_error(mlrt_status st) {
    return fuzz_is_model_error(st) || st == MLRT_ERR_SHAPE_OVERFLOW || st == MLRT_ERR_UNSUPPORTED_VERSION;
}

static void exercise(mlrt_model *m) {
    size_t in = mlrt_input_size(m), out = mlrt_output_size(m);
    FUZZ_ASSERT(in >= 1 && out >= 1 && in <= MLRT__MAX_ACTIVATION && out <= MLRT__MAX_ACTIVATION, "sizes %zu %zu", in, out);
    fuzz_check_json_output(mlrt_model_info_json(m));
    const mlrt__graph *gr = m->impl; /* (a graph model's state) */
    if (gr->macs > (1u << 22) || in > (1u << 16)) return; /* too slow to run in the fuzzer's time */
    enum { ROWS = 3 };
    static const float v[ROWS] = {0.0f, 1.0f, -1.0f};
    float *x = malloc(ROWS * in * sizeof(float)), *y = malloc(ROWS * out * sizeof(float)), *y1 = malloc(out * sizeof(float));
    FUZZ_ASSERT(x && y && y1, "out of memory");
    for (size_t r = 0; r < ROWS; r++)
        for (size_t i = 0; i < in; i++) x[r * in + i] = v[r];
    mlrt_error e;
    mlrt_status st = mlrt_predict_batch(m, x, gr->batched ? ROWS : 1, y, &e);
    FUZZ_ASSERT(st == MLRT_OK || st == MLRT_ERR_NON_FINITE, "predict_batch: %s", e.message);
    for (size_t r = 0; st == MLRT_OK && r < (gr->batched ? ROWS : 1); r++) {
        mlrt_status s1 = mlrt_predict(m, x + r * in, y1, &e);
        FUZZ_ASSERT(s1 == MLRT_OK, "the batch ran but row %zu alone: %s", r, e.message);
        FUZZ_ASSERT(memcmp(y1, y + r * out, out * sizeof(float)) == 0, "row %zu: batch differs from single", r);
    }
    free(x), free(y), free(y1);
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
    mlrt_model *m = mlrt__onnx_model(&g, &e);
    char *desc = mlrt__onnx_describe(&g);
    FUZZ_ASSERT(desc != NULL, "describe");
    free(desc);
    if (m) {
        exercise(m);
        mlrt_free(m);
    } else {
        fuzz_check_error(e.code, &e);
        FUZZ_ASSERT(graph_error(e.code), "a parsed graph refused with %s: %s", mlrt_status_name(e.code), e.message);
    }
    mlrt__onnx_free(&g);
    char *js = mlrt_inspect(data, size, &e2);
    if (js) fuzz_check_json_output(js);
    mlrt_string_free(js);
    return 0;
}
