/* test_base.c — the base: status and enum names, UTF-8 validation. */
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

/* ================================================================ UTF-8 */

/* Each sequence after k ASCII bytes (k = 0..19: before, inside and after an eight-byte word the
 * ASCII fast path skips), then ASCII again (or the end): the first invalid byte is at k, or none. */
static void test_utf8_invalid_at(void) {
    static const struct { const char *s; size_t n; bool ok; } cases[] = {
        {"\xc3\xa9", 2, true},           {"\xe2\x82\xac", 3, true},      {"\xf0\x9f\x98\x80", 4, true},
        {"\xf4\x8f\xbf\xbf", 4, true},   {"\x80", 1, false},             {"\xbf", 1, false},
        {"\xc0\x80", 2, false},          {"\xc1\xbf", 2, false},         {"\xe0\x80\x80", 3, false},
        {"\xed\xa0\x80", 3, false},      {"\xf0\x80\x80\x80", 4, false}, {"\xf4\x90\x80\x80", 4, false},
        {"\xf8\x88\x80\x80\x80", 5, false}, {"\xff", 1, false},          {"\xc3" "a", 2, false},
        {"\xe2\x82" "a", 3, false},
    };
    uint8_t buf[64];
    for (size_t c = 0; c < LEN(cases); c++)
        for (size_t k = 0; k < 20; k++)
            for (int tail = 0; tail < 2; tail++) { /* ASCII after it, or the end of the text */
                size_t n = 0;
                for (size_t i = 0; i < k; i++) buf[n++] = (uint8_t)('a' + i % 26);
                memcpy(buf + n, cases[c].s, cases[c].n), n += cases[c].n;
                if (tail) for (size_t i = 0; i < 9; i++) buf[n++] = (uint8_t)('A' + i);
                size_t want = cases[c].ok ? n : k;
                CHECK_MSG(mlrt__utf8_invalid_at(buf, n) == want, "case %zu after %zu ASCII bytes%s: %zu, want %zu", c, k,
                          tail ? " (then ASCII)" : "", mlrt__utf8_invalid_at(buf, n), want);
            }
    /* a sequence cut short by the end of the text */
    CHECK_INT(mlrt__utf8_invalid_at((const uint8_t *)"abcdefgh\xe2\x82", 10), 8);
    CHECK_INT(mlrt__utf8_invalid_at((const uint8_t *)"abcdefghij", 10), 10);
    CHECK_INT(mlrt__utf8_invalid_at((const uint8_t *)"", 0), 0);
}

const test_case base_tests[] = {
    T(test_status_names),
    T(test_dtype_format_kind_activation_names),
    T(test_utf8_invalid_at),
    {0},
};
