/* fuzz_apr_v1.c — libFuzzer target for .apr v1 ("APRN"): mlrt__read_apr_v1, mlrt__read_apr_v1_model, and
 * the public load (with and without expect) and inspect.
 * Almost every mutation breaks the CRC, so each input also runs once more as "APRN" + its bytes
 * after the magic with the trailer recomputed: that copy reaches the header checks, the
 * MessagePack metadata, both decompressors and the payload decoders.
 * Oracles (and fuzz_common.h): refusals are well-formed and start with "apr: "; a valid container
 * has metadata that is a JSON object and an "apr" member that is valid JSON; a model runs correctly;
 * the reader, load and inspect agree (a model-level refusal is inspect's notAModel); expecting the
 * header's own type changes nothing and another type is MODEL_TYPE_MISMATCH.
 * Inputs declaring a compressed payload of more than 16 MiB are skipped: the output buffer is
 * allocated at that size before decoding (legitimately, up to aprender's 1 GiB). */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_container(const mlrt__apr_v1 *f) {
    FUZZ_ASSERT(f->ts.format == MLRT_FORMAT_APR && f->ts.count == 0, "tensorset");
    fuzz_check_json_output(f->ts.meta_json);
    size_t n = strlen(f->ts.extra_json);
    char *wrapped = malloc(n + 3);
    FUZZ_ASSERT(wrapped, "oom");
    wrapped[0] = '{';
    memcpy(wrapped + 1, f->ts.extra_json, n);
    memcpy(wrapped + 1 + n, "}", 2);
    fuzz_check_json_output(wrapped);
    free(wrapped);
    FUZZ_ASSERT(mlrt__apr_type_name(f->type) && f->compression <= 3 && !(f->flags & 0x80), "header fields");
}

static void run(const uint8_t *data, size_t size) {
    mlrt_error e, e2;
    mlrt__apr_v1 f;
    mlrt_status st = mlrt__read_apr_v1(data, size, 0, &f, &e);
    bool aprn = size >= 4 && memcmp(data, "APRN", 4) == 0; /* what load/inspect send here */
    if (st) {
        fuzz_check_error(st, &e);
        FUZZ_ASSERT(strncmp(e.message, "apr: ", 5) == 0 || st == MLRT_ERR_OUT_OF_MEMORY, "message: %s", e.message);
        FUZZ_ASSERT(f.ts.meta_json == NULL && f.ts.extra_json == NULL, "not cleared");
        if (aprn) fuzz_check_refused_alike(data, size, st);
        return;
    }
    FUZZ_ASSERT(aprn, "accepted without the APRN magic");
    check_container(&f);
    mlrt__desc d, oracle;
    mlrt_model *m = mlrt__read_apr_v1_model(&f, &d, &e) ? (mlrt__desc_free(&d), NULL) : mlrt__build(&d, &e);
    mlrt_model *m2 = mlrt_load_from_bytes(data, size, &e2);
    if (m) {
        FUZZ_ASSERT(mlrt_model_format(m) == MLRT_FORMAT_APR, "format");
        FUZZ_ASSERT(mlrt__read_apr_v1_model(&f, &oracle, &e2) == MLRT_OK, "a second reading: %s", e2.message);
        fuzz_exercise_model(m, &oracle);
        mlrt__desc_free(&oracle);
        FUZZ_ASSERT(m2 && strcmp(mlrt_model_info_json(m), mlrt_model_info_json(m2)) == 0, "load differs: %s",
                    m2 ? "info" : e2.message);
    } else {
        fuzz_check_error(e.code, &e);
        FUZZ_ASSERT(strncmp(e.message, "apr: ", 5) == 0 || e.code == MLRT_ERR_OUT_OF_MEMORY, "message: %s", e.message);
        FUZZ_ASSERT(m2 == NULL && e2.code == e.code, "model %s, load %s", mlrt_status_name(e.code),
                    m2 ? "OK" : mlrt_status_name(e2.code));
    }
    mlrt_free(m2);
    /* expect: the header's type is transparent, another is refused before the payload */
    mlrt_load_options same = {.expect = mlrt__apr_type_name(f.type), .weight_layout = MLRT_LAYOUT_AUTO},
                      other = {.expect = f.type == 1 ? "KMeans" : "LinearRegression", .weight_layout = MLRT_LAYOUT_AUTO};
    m2 = mlrt_load_from_bytes_ex(data, size, &same, &e2);
    FUZZ_ASSERT((m2 != NULL) == (m != NULL) && (m || e2.code == e.code), "expect %s changed the result", same.expect);
    mlrt_free(m2);
    m2 = mlrt_load_from_bytes_ex(data, size, &other, &e2);
    FUZZ_ASSERT(m2 == NULL && e2.code == MLRT_ERR_MODEL_TYPE_MISMATCH, "expect %s: %s", other.expect, e2.message);
    char *js = mlrt_inspect(data, size, &e2);
    FUZZ_ASSERT(js != NULL, "inspect failed on a valid container: %s", e2.message);
    fuzz_check_json_output(js);
    FUZZ_ASSERT(strncmp(js, "{\"format\":\"apr\",", 16) == 0, "inspect: %.200s", js);
    FUZZ_ASSERT(fuzz_json_has(js, "notAModel") == (m == NULL), "notAModel disagrees with the model");
    mlrt_string_free(js);
    mlrt_free(m);
    mlrt__tensorset_free(&f.ts);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > FUZZ_MAX_INPUT) return 0;
    if (size >= 32 && data[20] >= 1 && data[20] <= 3 && mlrt__rd_u32(data + 16) > (16u << 20)) return 0;
    run(data, size);
    if (size < 36) return 0;
    uint8_t *c = malloc(size);
    FUZZ_ASSERT(c, "oom");
    memcpy(c, data, size);
    memcpy(c, "APRN", 4);
    uint32_t crc = mlrt__crc32(c, size - 4);
    for (int i = 0; i < 4; i++) c[size - 4 + i] = (uint8_t)(crc >> (8 * i));
    run(c, size);
    free(c);
    return 0;
}
