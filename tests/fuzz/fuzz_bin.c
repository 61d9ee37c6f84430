/* fuzz_bin.c — libFuzzer target for the raw .bin MLP reader (mlrt__read_bin).
 * Oracles (fuzz_common.h): refusals are well-formed; a loaded model is consistent, predicts
 * like a double forward pass, batch == single; format detection and inspect agree that the
 * bytes are a .bin file. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > FUZZ_MAX_INPUT) return 0;
    mlrt_error e;
    mlrt__desc d;
    mlrt_status st = mlrt__read_bin(data, size, &d, &e);
    mlrt_model *m = st ? NULL : mlrt__build(&d, &e);
    if (!m) {
        fuzz_check_error(e.code, &e);
        FUZZ_ASSERT(strncmp(e.message, "bin: ", 5) == 0 || e.code == MLRT_ERR_NON_FINITE ||
                        e.code == MLRT_ERR_OUT_OF_MEMORY,
                    "message without the format: %s", e.message);
        return 0;
    }
    FUZZ_ASSERT(mlrt_model_format(m) == MLRT_FORMAT_BIN && mlrt_model_kind(m) == MLRT_KIND_MLP, "format/kind");
    FUZZ_ASSERT(mlrt_layer_count(m) == 2, "layers");
    size_t es = mlrt_weight_dtype(m) == MLRT_F64 ? 8 : 4;
    FUZZ_ASSERT(mlrt_weight_dtype(m) == MLRT_F64 || mlrt_weight_dtype(m) == MLRT_F32, "dtype");
    FUZZ_ASSERT(size == 12 + mlrt_param_count(m) * es, "file size %zu vs %llu params", size,
                (unsigned long long)mlrt_param_count(m));
    FUZZ_ASSERT(mlrt_layer(m, 0).activation == MLRT_ACT_RELU && mlrt_layer(m, 1).activation == MLRT_ACT_SOFTMAX,
                "activations");
    FUZZ_ASSERT(mlrt__read_bin(data, size, &d, &e) == MLRT_OK, "a second reading: %s", e.message);
    fuzz_exercise_model(m, &d);
    mlrt_free(m);

    /* the public entry point must recognise the same bytes as .bin */
    m = mlrt_load_from_bytes(data, size, &e);
    FUZZ_ASSERT(m != NULL && mlrt_model_format(m) == MLRT_FORMAT_BIN, "load_from_bytes: %s", m ? "format" : e.message);
    mlrt_free(m);
    fuzz_check_inspect_ok(data, size, "bin");
    return 0;
}
