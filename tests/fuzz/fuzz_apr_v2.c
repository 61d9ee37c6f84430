/* fuzz_apr_v2.c — libFuzzer target for .apr v2 ("APR\0", "APR2"): mlrt__read_apr_v2, model
 * recognition, the public load and inspect.
 * Almost every mutation breaks a checksum, so each input also runs once more with both checksums
 * recomputed (and "APR\0" forced in front unless it says "APR2"): that copy reaches the header,
 * metadata, index and layout checks.
 * Oracles (and fuzz_common.h): refusals are well-formed and start with "apr: "; an accepted file
 * keeps every promise of the reader — sections in order and 64-aligned, names valid UTF-8 without
 * NUL, each tensor's size exactly its dtype's bytes for its shape, 64-aligned, inside the data
 * before the checksum, tensors in ascending offset order without overlap, metadata a JSON object;
 * recognition fails only with model-level statuses; a model runs correctly; the reader, load and
 * inspect agree. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_tensorset(const mlrt__tensorset *ts, size_t size) {
    FUZZ_ASSERT(ts->format == MLRT_FORMAT_APR && ts->data_begin % 64 == 0 && ts->data_begin <= size - 4, "data_begin %zu",
                ts->data_begin);
    size_t data_len = size - 4 - ts->data_begin, prev_end = 0;
    for (size_t i = 0; i < ts->count; i++) {
        const mlrt__tensor *t = &ts->tensors[i];
        FUZZ_ASSERT(t->name && t->name_len > 0 && strlen(t->name) == t->name_len, "tensor %zu name", i);
        FUZZ_ASSERT(mlrt__utf8_valid((const uint8_t *)t->name, t->name_len), "tensor %zu name not UTF-8", i);
        FUZZ_ASSERT((unsigned)t->dtype < MLRT_DTYPE_COUNT_ && t->rank <= MLRT__MAX_RANK, "dtype/rank");
        uint64_t count = 1, bytes;
        for (uint32_t d = 0; d < t->rank; d++) FUZZ_ASSERT(mlrt__mul_u64(count, t->shape[d], &count), "overflow");
        FUZZ_ASSERT(count == t->count && mlrt__dtype_bytes(t->dtype, count, &bytes), "count");
        FUZZ_ASSERT(t->begin % 64 == 0 && t->end >= t->begin && t->end <= data_len, "'%s' [%zu, %zu) of %zu", t->name,
                    t->begin, t->end, data_len);
        FUZZ_ASSERT((uint64_t)(t->end - t->begin) == bytes, "'%s' size", t->name);
        FUZZ_ASSERT(i == 0 || t->begin >= prev_end, "'%s' overlaps", t->name);
        prev_end = t->end > prev_end ? t->end : prev_end;
    }
    fuzz_check_json_output(ts->meta_json);
    for (size_t i = 0; i < ts->meta_count; i++)
        FUZZ_ASSERT(mlrt__utf8_valid((const uint8_t *)ts->meta[i].key, ts->meta[i].key_len) &&
                        mlrt__utf8_valid((const uint8_t *)ts->meta[i].value, ts->meta[i].value_len),
                    "metadata %zu not UTF-8", i);
}

static void run(const uint8_t *data, size_t size) {
    mlrt_error e, e2;
    mlrt__tensorset ts;
    mlrt_status st = mlrt__read_apr_v2(data, size, &ts, &e);
    /* what load/inspect send here: "APR\0" + four zero bytes may begin a SafeTensors file instead */
    bool v2 = size >= 4 && (memcmp(data, "APR2", 4) == 0 ||
                            (memcmp(data, "APR\0", 4) == 0 && (size < 8 || mlrt__rd_u32(data + 4) != 0)));
    if (st) {
        fuzz_check_error(st, &e);
        FUZZ_ASSERT(strncmp(e.message, "apr: ", 5) == 0 || st == MLRT_ERR_OUT_OF_MEMORY, "message: %s", e.message);
        FUZZ_ASSERT(ts.count == 0 && ts.tensors == NULL && ts.meta == NULL && ts.meta_json == NULL, "not cleared");
        if (v2) fuzz_check_refused_alike(data, size, st);
        return;
    }
    FUZZ_ASSERT(v2, "accepted without the magic");
    check_tensorset(&ts, size);
    mlrt__desc d;
    mlrt_model *m = fuzz_build_tensors(data, &ts, &d, &e);
    mlrt_model *m2 = mlrt_load_from_bytes(data, size, &e2);
    if (m) {
        fuzz_exercise_model(m, &d);
        FUZZ_ASSERT(m2 && strcmp(mlrt_model_info_json(m), mlrt_model_info_json(m2)) == 0, "load differs");
    } else {
        fuzz_check_error(e.code, &e);
        FUZZ_ASSERT(fuzz_is_model_error(e.code), "valid tensors refused with %s: %s", mlrt_status_name(e.code), e.message);
        FUZZ_ASSERT(m2 == NULL && e2.code == e.code, "from_tensors %s, load %s", mlrt_status_name(e.code),
                    m2 ? "OK" : mlrt_status_name(e2.code));
    }
    mlrt_free(m);
    mlrt__desc_free(&d);
    mlrt_free(m2);
    fuzz_check_inspect_ok(data, size, "apr");
    mlrt__tensorset_free(&ts);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > FUZZ_MAX_INPUT) return 0;
    run(data, size);
    if (size < 68) return 0;
    uint8_t *c = malloc(size);
    FUZZ_ASSERT(c, "oom");
    memcpy(c, data, size);
    if (memcmp(c, "APR2", 4) != 0) memcpy(c, "APR\0", 4);
    uint32_t h = mlrt__crc32_update(mlrt__crc32(c, 40), c + 44, 20);
    for (int i = 0; i < 4; i++) c[40 + i] = (uint8_t)(h >> (8 * i));
    uint32_t crc = mlrt__crc32(c, size - 4);
    for (int i = 0; i < 4; i++) c[size - 4 + i] = (uint8_t)(crc >> (8 * i));
    run(c, size);
    free(c);
    return 0;
}
