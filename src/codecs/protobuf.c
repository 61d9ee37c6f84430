/* codecs/protobuf.c — the protobuf wire format: varints, fixed ints, length-delimited values. */
#include "codecs.h"

static const char *const wire_names[8] = {"varint", "64-bit", "length-delimited", "group start", "group end",
                                          "32-bit", "6", "7"};

mlrt__pb mlrt__pb_open(const uint8_t *b, size_t n, const char *what) {
    mlrt__pb pb = {b, b + n, b, 0, what};
    return pb;
}

mlrt_status mlrt__pb_varint(mlrt__pb *pb, uint64_t *v, mlrt_error *err) {
    uint64_t x = 0;
    for (unsigned shift = 0, i = 0; i < 10; i++, shift += 7) {
        if (pb->p >= pb->end)
            return mlrt__fail(err, MLRT_ERR_TRUNCATED, "%s: a varint at byte %zu runs past the end of its message",
                             pb->what, mlrt__pb_offset(pb));
        uint8_t c = *pb->p++;
        if (i == 9 && c > 1)
            return mlrt__fail(err, MLRT_ERR_BAD_HEADER, "%s: a varint ending at byte %zu overflows 64 bits", pb->what,
                             mlrt__pb_offset(pb));
        x |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *v = x;
            return MLRT_OK;
        }
    }
    return mlrt__fail(err, MLRT_ERR_BAD_HEADER, "%s: a varint at byte %zu is longer than 10 bytes", pb->what,
                     mlrt__pb_offset(pb) - 10);
}

int mlrt__pb_next(mlrt__pb *pb, uint32_t *field, uint32_t *wire, mlrt_error *err) {
    if (pb->p >= pb->end) return 0;
    size_t at = mlrt__pb_offset(pb);
    uint64_t key;
    if (mlrt__pb_varint(pb, &key, err)) return -1;
    *wire = (uint32_t)(key & 7);
    if (key >> 3 == 0 || key >> 3 > 0x1fffffff) {
        mlrt__fail(err, MLRT_ERR_BAD_HEADER, "%s: a field key at byte %zu has field number %llu (1..2^29-1)", pb->what, at,
                  (unsigned long long)(key >> 3));
        return -1;
    }
    *field = (uint32_t)(key >> 3);
    if (*wire == 3 || *wire == 4 || *wire > 5) {
        mlrt__fail(err, MLRT_ERR_BAD_HEADER, "%s: field %u at byte %zu has wire type %u (%s), which mlrt does not read",
                  pb->what, *field, at, *wire, wire_names[*wire]);
        return -1;
    }
    return 1;
}

mlrt_status mlrt__pb_bytes(mlrt__pb *pb, const uint8_t **data, size_t *n, mlrt_error *err) {
    uint64_t len;
    size_t at = mlrt__pb_offset(pb);
    mlrt_status st = mlrt__pb_varint(pb, &len, err);
    if (st) return st;
    if (len > (uint64_t)(pb->end - pb->p))
        return mlrt__fail(err, MLRT_ERR_TRUNCATED, "%s: a value at byte %zu declares %llu bytes but its message has %zu left",
                         pb->what, at, (unsigned long long)len, (size_t)(pb->end - pb->p));
    *data = pb->p;
    *n = (size_t)len;
    pb->p += len;
    return MLRT_OK;
}

mlrt_status mlrt__pb_message(mlrt__pb *pb, mlrt__pb *child, mlrt_error *err) {
    if (pb->depth + 1 >= MLRT__PB_MAX_DEPTH)
        return mlrt__fail(err, MLRT_ERR_BAD_HEADER, "%s: messages nest deeper than %d levels at byte %zu", pb->what,
                         MLRT__PB_MAX_DEPTH, mlrt__pb_offset(pb));
    const uint8_t *d;
    size_t n;
    mlrt_status st = mlrt__pb_bytes(pb, &d, &n, err);
    if (st) return st;
    *child = *pb;
    child->p = d;
    child->end = d + n;
    child->depth = pb->depth + 1;
    return MLRT_OK;
}

static mlrt_status fixed(mlrt__pb *pb, size_t size, uint64_t *v, mlrt_error *err) {
    if ((size_t)(pb->end - pb->p) < size)
        return mlrt__fail(err, MLRT_ERR_TRUNCATED, "%s: a %zu-byte value at byte %zu runs past the end of its message",
                         pb->what, size, mlrt__pb_offset(pb));
    *v = size == 4 ? mlrt__rd_u32(pb->p) : mlrt__rd_u64(pb->p);
    pb->p += size;
    return MLRT_OK;
}

mlrt_status mlrt__pb_fixed32(mlrt__pb *pb, uint32_t *v, mlrt_error *err) {
    uint64_t x = 0;
    mlrt_status st = fixed(pb, 4, &x, err);
    *v = (uint32_t)x;
    return st;
}

mlrt_status mlrt__pb_fixed64(mlrt__pb *pb, uint64_t *v, mlrt_error *err) { return fixed(pb, 8, v, err); }

mlrt_status mlrt__pb_skip(mlrt__pb *pb, uint32_t wire, mlrt_error *err) {
    uint64_t v;
    const uint8_t *d;
    size_t n;
    switch (wire) {
    case MLRT__PB_VARINT: return mlrt__pb_varint(pb, &v, err);
    case MLRT__PB_I64: return fixed(pb, 8, &v, err);
    case MLRT__PB_I32: return fixed(pb, 4, &v, err);
    default: return mlrt__pb_bytes(pb, &d, &n, err);
    }
}

mlrt_status mlrt__pb_expect(const mlrt__pb *pb, uint32_t wire, uint32_t want, const char *field, mlrt_error *err) {
    if (wire == want) return MLRT_OK;
    return mlrt__fail(err, MLRT_ERR_BAD_HEADER, "%s: %s before byte %zu has wire type %s, not %s", pb->what, field,
                     mlrt__pb_offset(pb), wire_names[wire & 7], wire_names[want]);
}
