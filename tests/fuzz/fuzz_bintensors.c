/* fuzz_bintensors.c — libFuzzer target for the BinTensors reader (both layouts), model recognition and
 * inspect: mlrt__read_bintensors, then mlrt__recognize and mlrt__build, then mlrt_inspect.
 * Oracles (fuzz_common.h): refusals are well-formed; an accepted file tiles its data exactly;
 * recognition fails only with model-level statuses; a model runs correctly; the public entry
 * point and inspect agree with the reader. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > FUZZ_MAX_INPUT) return 0;
    mlrt_error e;
    mlrt__tensorset ts;
    mlrt_status st = mlrt__read_bintensors(data, size, &ts, &e);
    if (st) {
        fuzz_check_error(st, &e);
        FUZZ_ASSERT(strncmp(e.message, "bintensors: ", 12) == 0 || st == MLRT_ERR_OUT_OF_MEMORY,
                    "message without the format: %s", e.message);
        FUZZ_ASSERT(ts.count == 0 && ts.tensors == NULL && ts.meta == NULL, "tensorset not cleared");
        /* the public entry point refuses what the reader refuses (when it reads it as BinTensors) */
        if (size >= 9 && data[8] <= 1 && mlrt__rd_u64(data) <= size - 8 && !mlrt__onnx_sniff(data, size)) {
            mlrt_error e2;
            mlrt_model *m = mlrt_load_from_bytes(data, size, &e2);
            FUZZ_ASSERT(m == NULL && e2.code == st, "reader %s but load %s", mlrt_status_name(st),
                        m ? "OK" : mlrt_status_name(e2.code));
            char *js = mlrt_inspect(data, size, &e2);
            FUZZ_ASSERT(js == NULL && e2.code == st, "reader %s but inspect %s", mlrt_status_name(st),
                        js ? "OK" : mlrt_status_name(e2.code));
        }
        return 0;
    }
    FUZZ_ASSERT(ts.format == MLRT_FORMAT_BINTENSORS, "format");
    FUZZ_ASSERT(size >= 9 && data[8] <= 1 && mlrt__rd_u64(data) <= size - 8, "accepted a metadata option tag other than 0 or 1");
    fuzz_check_tensorset(&ts, size);

    mlrt__desc d;
    mlrt_model *m = fuzz_build_tensors(data, &ts, &d, &e);
    mlrt_error e2;
    mlrt_model *m2 = mlrt_load_from_bytes(data, size, &e2);
    if (m) {
        FUZZ_ASSERT(mlrt_model_format(m) == MLRT_FORMAT_BINTENSORS, "format");
        fuzz_exercise_model(m, &d);
        FUZZ_ASSERT(m2 != NULL, "from_tensors OK but load_from_bytes: %s", e2.message);
        FUZZ_ASSERT(strcmp(mlrt_model_info_json(m), mlrt_model_info_json(m2)) == 0, "info differs");
    } else {
        fuzz_check_error(e.code, &e);
        FUZZ_ASSERT(fuzz_is_model_error(e.code), "valid tensors refused with %s: %s", mlrt_status_name(e.code),
                    e.message);
        FUZZ_ASSERT(m2 == NULL && e2.code == e.code, "from_tensors %s but load_from_bytes %s",
                    mlrt_status_name(e.code), m2 ? "OK" : mlrt_status_name(e2.code));
    }
    mlrt_free(m);
    mlrt__desc_free(&d);
    mlrt_free(m2);
    fuzz_check_inspect_ok(data, size, "bintensors");
    mlrt__tensorset_free(&ts);
    return 0;
}
