/* fuzz_msgpack.c — libFuzzer target for the MessagePack reader (mlrt__msgpack_to_json) and the
 * shortest float formatting (mlrt__buf_number).
 * Oracles: a refusal has one of the documented statuses and a well-formed message; an accepted
 * value consumed at most the input, its JSON parses with mlrt's strict JSON reader, and reading
 * exactly the consumed bytes again gives the same JSON. Every float32/float64 made of the first
 * input bytes prints as a decimal that reads back to the same value and has no shorter form that
 * does (checked with libc's strtod/strtof and snprintf). */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int significant_digits(const char *s) {
    int n = 0, seen = 0, zeros = 0;
    for (; *s && *s != 'e'; s++) {
        if (*s < '0' || *s > '9') continue;
        if (*s == '0' && !seen) continue;
        seen = 1;
        if (*s == '0') zeros++;
        else { n += zeros + 1; zeros = 0; }
    }
    return n;
}

static void check_number(double v, bool single) {
    mlrt__buf b = {0};
    mlrt__buf_number(&b, v, single);
    FUZZ_ASSERT(!b.oom, "oom");
    if (!isfinite(v)) {
        FUZZ_ASSERT(strcmp(b.data, "null") == 0, "non-finite printed %s", b.data);
    } else {
        double back = single ? strtof(b.data, NULL) : strtod(b.data, NULL);
        FUZZ_ASSERT(back == v && signbit(back) == signbit(v), "%.17g (%s) printed %s", v, single ? "f32" : "f64", b.data);
        int digits = significant_digits(b.data);
        FUZZ_ASSERT(digits <= (single ? 9 : 17), "%s has %d digits", b.data, digits);
        if (digits > 1 && v != 0) {
            char shorter[64];
            snprintf(shorter, sizeof shorter, "%.*e", digits - 2, v);
            double s = single ? strtof(shorter, NULL) : strtod(shorter, NULL);
            FUZZ_ASSERT(s != v, "%s reads back too, shorter than %s", shorter, b.data);
        }
    }
    free(b.data);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > FUZZ_MAX_INPUT) return 0;
    if (size >= 8) {
        uint64_t u;
        memcpy(&u, data, 8);
        double d;
        memcpy(&d, &u, 8);
        check_number(d, false);
        float f;
        memcpy(&f, data, 4);
        check_number(f, true);
    }
    mlrt__buf b = {0};
    mlrt_error e;
    size_t used = 0;
    mlrt_status st = mlrt__msgpack_to_json(data, size, 0, "mp", &b, &used, &e);
    if (st) {
        fuzz_check_error(st, &e);
        FUZZ_ASSERT(strncmp(e.message, "mp: ", 4) == 0, "message: %s", e.message);
        FUZZ_ASSERT(st == MLRT_ERR_TRUNCATED || st == MLRT_ERR_INVALID_MSGPACK || st == MLRT_ERR_INVALID_UTF8 ||
                        st == MLRT_ERR_BAD_HEADER || st == MLRT_ERR_DUPLICATE_KEY || st == MLRT_ERR_UNSUPPORTED ||
                        st == MLRT_ERR_OUT_OF_MEMORY,
                    "status %s", mlrt_status_name(st));
        free(b.data);
        return 0;
    }
    FUZZ_ASSERT(used >= 1 && used <= size && b.data, "used %zu of %zu", used, size);
    mlrt__json_doc doc;
    st = mlrt__json_parse((const uint8_t *)b.data, b.len, "out", &doc, &e);
    FUZZ_ASSERT(st == MLRT_OK, "output is not JSON (%s): %.300s", e.message, b.data);
    mlrt__json_free(&doc);
    mlrt__buf again = {0};
    size_t used2 = 0;
    st = mlrt__msgpack_to_json(data, used, 0, "mp", &again, &used2, &e);
    FUZZ_ASSERT(st == MLRT_OK && used2 == used && again.len == b.len && memcmp(again.data, b.data, b.len) == 0,
                "the consumed prefix reads differently");
    free(again.data);
    free(b.data);
    return 0;
}
