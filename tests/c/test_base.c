/* test_base.c — the base: status and enum names. */
#include "builders.h"

/* ================================================================ names & API */

static void test_status_names(void) {
    static const char *const want[] = {
        "OK", "INVALID_ARGUMENT", "UNKNOWN_FORMAT", "TRUNCATED", "SIZE_MISMATCH", "BAD_DIMENSIONS",
        "SHAPE_OVERFLOW", "BAD_OFFSETS", "UNKNOWN_DTYPE", "INVALID_UTF8", "INVALID_JSON", "DUPLICATE_KEY",
        "HEADER_TOO_LARGE", "BAD_HEADER", "NOT_A_MODEL", "UNSUPPORTED", "OUT_OF_MEMORY", "NON_FINITE",
        "CHECKSUM_MISMATCH", "UNSUPPORTED_VERSION", "UNSUPPORTED_MODEL_TYPE", "MODEL_TYPE_MISMATCH", "ENCRYPTED",
        "INVALID_MSGPACK", "BAD_PAYLOAD"};
    CHECK_INT(LEN(want), MLRT_STATUS_COUNT_);
    for (int i = 0; i < MLRT_STATUS_COUNT_; i++) CHECK_STR(mlrt_status_name((mlrt_status)i), want[i]);
    CHECK_STR(mlrt_status_name(MLRT_ERR_BAD_OFFSETS), "BAD_OFFSETS");
    CHECK_STR(mlrt_status_name(MLRT_ERR_NON_FINITE), "NON_FINITE");
    CHECK_STR(mlrt_status_name(MLRT_STATUS_COUNT_), "UNKNOWN_STATUS");
    CHECK_STR(mlrt_status_name((mlrt_status)-1), "UNKNOWN_STATUS");
}

static void test_dtype_format_kind_activation_names(void) {
    static const char *const names[] = {"BOOL", "U8",  "I8",  "F8_E5M2", "F8_E4M3", "I16",    "U16",    "F16",  "BF16", "I32",
                                        "U32",  "F32", "F64", "I64",     "U64",     "APR_Q4", "APR_Q8", "Q4_K", "Q6_K",
                                        "F4", "F6_E2M3", "F6_E3M2", "F8_E8M0", "C64"};
    static const size_t sizes[] = {1, 1, 1, 1, 1, 2, 2, 2, 2, 4, 4, 4, 8, 8, 8, 0, 0, 0, 0, 0, 0, 0, 1, 8};
    CHECK_INT(LEN(names), MLRT_DTYPE_COUNT_);
    for (int i = 0; i < MLRT_DTYPE_COUNT_; i++) CHECK_STR(mlrt_dtype_name((mlrt_dtype)i), names[i]);
    for (int i = 0; i < MLRT_DTYPE_COUNT_; i++) CHECK_INT(mlrt_dtype_size((mlrt_dtype)i), sizes[i]);
    CHECK_STR(mlrt_dtype_name(MLRT_DTYPE_COUNT_), "?");
    CHECK_INT(mlrt_dtype_size(MLRT_DTYPE_COUNT_), 0);
    CHECK_INT(mlrt_dtype_size((mlrt_dtype)-1), 0);
    CHECK_STR(mlrt_format_name(MLRT_FORMAT_BIN), "bin");
    CHECK_STR(mlrt_format_name(MLRT_FORMAT_SAFETENSORS), "safetensors");
    CHECK_STR(mlrt_format_name(MLRT_FORMAT_BINTENSORS), "bintensors");
    CHECK_STR(mlrt_format_name(MLRT_FORMAT_APR), "apr");
    CHECK_STR(mlrt_format_name((mlrt_format)0), "unknown");
    CHECK_STR(mlrt_kind_name(MLRT_KIND_MLP), "mlp");
    CHECK_STR(mlrt_kind_name(MLRT_KIND_LINEAR_REGRESSION), "linear_regression");
    CHECK_STR(mlrt_kind_name(MLRT_KIND_LOGISTIC_REGRESSION), "logistic_regression");
    CHECK_STR(mlrt_kind_name(MLRT_KIND_RANDOM_FOREST), "random_forest");
    CHECK_STR(mlrt_kind_name((mlrt_kind)9), "unknown");
    CHECK_STR(mlrt_task_name(MLRT_TASK_CLUSTERING), "clustering");
    CHECK_STR(mlrt_task_name((mlrt_task)0), "unknown");
    static const char *const acts[] = {"identity", "relu", "sigmoid", "tanh", "softmax", "gelu", "leaky_relu", "silu"};
    for (int i = 0; i < MLRT_ACT_COUNT_; i++) CHECK_STR(mlrt_activation_name((mlrt_activation)i), acts[i]);
    CHECK_STR(mlrt_activation_name(MLRT_ACT_COUNT_), "?");
}

const test_case base_tests[] = {
    T(test_status_names),
    T(test_dtype_format_kind_activation_names),
    {0},
};
