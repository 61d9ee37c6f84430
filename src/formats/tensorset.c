/* formats/tensorset.c — the validated list of tensors that SafeTensors, BinTensors and .apr v2 files share. */
#include "formats.h"
#include <stdlib.h>
#include <string.h>

mlrt_status mlrt__tensor_check_span(const mlrt__tensor *t, const char *fmt_name, mlrt_error *err) {
    uint64_t count = 1, bytes;
    for (uint32_t d = 0; d < t->rank; d++)
        if (!mlrt__mul_u64(count, t->shape[d], &count))
            return mlrt__fail(err, MLRT_ERR_SHAPE_OVERFLOW, "%s: tensor '%s' shape product overflows",
                             fmt_name, t->name);
    if (mlrt__dtype_packs_bits(t->dtype) && count % mlrt__dtype_block(t->dtype))
        return mlrt__fail(err, MLRT_ERR_SIZE_MISMATCH, "%s: tensor '%s' is %s with %llu elements: not a whole number of bytes",
                         fmt_name, t->name, mlrt_dtype_name(t->dtype), (unsigned long long)count);
    if (!mlrt__dtype_bytes(t->dtype, count, &bytes))
        return mlrt__fail(err, MLRT_ERR_SHAPE_OVERFLOW, "%s: tensor '%s' byte size overflows", fmt_name,
                         t->name);
    if (t->end < t->begin)
        return mlrt__fail(err, MLRT_ERR_BAD_OFFSETS, "%s: tensor '%s' data_offsets [%zu, %zu) end before they begin",
                         fmt_name, t->name, t->begin, t->end);
    if (bytes != (uint64_t)(t->end - t->begin))
        return mlrt__fail(err, MLRT_ERR_SIZE_MISMATCH,
                         "%s: tensor '%s' is %s with %llu elements (%llu bytes) but data_offsets [%zu, %zu) span %zu bytes",
                         fmt_name, t->name, mlrt_dtype_name(t->dtype), (unsigned long long)count,
                         (unsigned long long)bytes, t->begin, t->end, t->end - t->begin);
    return MLRT_OK;
}

int mlrt__tensor_cmp_begin(const void *a, const void *b) {
    const mlrt__tensor *x = a, *y = b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    if (x->end != y->end) return x->end < y->end ? -1 : 1; /* empty tensors first at equal begin */
    return strcmp(x->name, y->name); /* then by name: the order messages name them in, whatever the sort */
}

mlrt_status mlrt__tensorset_check_layout(mlrt__tensorset *ts, uint64_t data_len, const char *fmt_name,
                                        mlrt_error *err) {
    for (size_t i = 0; i < ts->count; i++) {
        const mlrt__tensor *t = &ts->tensors[i];
        if (t->end < t->begin)
            return mlrt__fail(err, MLRT_ERR_BAD_OFFSETS, "%s: tensor '%s' data_offsets [%zu, %zu) end before they begin",
                             fmt_name, t->name, t->begin, t->end);
    }
    mlrt__sort(ts->tensors, ts->count, sizeof *ts->tensors, mlrt__tensor_cmp_begin);
    size_t pos = 0;
    for (size_t i = 0; i < ts->count; i++) {
        const mlrt__tensor *t = &ts->tensors[i];
        if (t->begin > pos)
            return mlrt__fail(err, MLRT_ERR_BAD_OFFSETS, "%s: hole in data: bytes [%zu, %zu) belong to no tensor (next is '%s')",
                             fmt_name, pos, t->begin, t->name);
        if (t->begin < pos)
            return mlrt__fail(err, MLRT_ERR_BAD_OFFSETS, "%s: tensor '%s' data_offsets [%zu, %zu) overlap the previous tensor ending at %zu",
                             fmt_name, t->name, t->begin, t->end, pos);
        pos = t->end;
    }
    if (pos > data_len) { /* the tensors tile more data than the file holds: it was cut short */
        const mlrt__tensor *last = &ts->tensors[0];
        for (size_t i = 0; i < ts->count; i++)
            if (ts->tensors[i].end > data_len) { last = &ts->tensors[i]; break; }
        return mlrt__fail(err, MLRT_ERR_TRUNCATED,
                         "%s: the file is cut short: tensor '%s' data_offsets [%zu, %zu) exceed data size %llu (the tensors "
                         "need %zu bytes)",
                         fmt_name, last->name, last->begin, last->end, (unsigned long long)data_len, pos);
    }
    if (pos != data_len)
        return mlrt__fail(err, MLRT_ERR_BAD_OFFSETS, "%s: tensors end at byte %zu of the data but the data is %llu bytes",
                         fmt_name, pos, (unsigned long long)data_len);
    return MLRT_OK;
}

mlrt_status mlrt__read_header_length(const uint8_t *b, size_t n, const char *fmt_name, const char *what,
                                    uint64_t *len, mlrt_error *err) {
    if (n < 8)
        return mlrt__fail(err, MLRT_ERR_TRUNCATED, "%s: file is %zu bytes, too short for the 8-byte %s length", fmt_name, n, what);
    *len = mlrt__rd_u64(b);
    if (*len > MLRT__MAX_HEADER)
        return mlrt__fail(err, MLRT_ERR_HEADER_TOO_LARGE, "%s: %s length %llu exceeds the %u-byte limit", fmt_name, what,
                         (unsigned long long)*len, MLRT__MAX_HEADER);
    if (*len > n - 8) /* within the limit: the file was cut short */
        return mlrt__fail(err, MLRT_ERR_TRUNCATED, "%s: %s length %llu exceeds the %zu bytes after it: the file is cut short",
                         fmt_name, what, (unsigned long long)*len, n - 8);
    return MLRT_OK;
}
