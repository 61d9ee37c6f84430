/* formats/apr_v2.c — aprender's .apr v2 tensor container ("APR\0"; "APR2" in older files).
 *
 *   header    64 bytes: magic, u8 major (2), u8 minor, u16 flags, u32 tensor count,
 *             u64 metadata offset (64), u32 metadata size, u64 index offset, u64 data offset,
 *             u32 CRC32 of bytes 0..40 and 44..64, 20 reserved bytes
 *   metadata  a JSON object, zero-padded to a multiple of 64
 *   index     per tensor, packed: u16 name length, name (UTF-8), u8 dtype, u8 rank, u64 dims[rank],
 *             u64 offset (from the data offset, a multiple of 64), u64 size; strictly sorted by
 *             name (byte-wise); zero-padded to a multiple of 64
 *   data      each tensor zero-padded to a multiple of 64 (data order may differ from index order)
 *   crc32     u32 LE over every byte before it
 * Both checksums are verified (aprender checks only the header's). Refused: compression,
 * encryption and signing flags (aprender's v2 writer sets them without doing any of it), the
 * column-major layout, unknown flags, overlapping tensors, and any byte range out of place. */
#include "formats.h"
#include <stdlib.h>
#include <string.h>

#define FMT "apr"
#define HEADER 64
#define ALIGN 64
#define MAX_METADATA (16u << 20)   /* aprender's MAX_METADATA_SIZE */
#define MIN_ENTRY 20               /* name length, empty name, dtype, rank 0, offset, size */
#define FLAG_COLUMN_MAJOR 0x0800
#define KNOWN_FLAGS 0x0fff

static const char *const FLAGS[12] = {"LZ4_COMPRESSED", "ZSTD_COMPRESSED", "ENCRYPTED", "SIGNED", "SHARDED",
                                      "QUANTIZED", "HAS_FILTERBANK", "HAS_MODEL_CARD", "STREAMING", "HAS_VOCAB",
                                      "LAYOUT_ROW_MAJOR", "LAYOUT_COLUMN_MAJOR"};

typedef struct header {
    uint8_t major, minor;
    uint16_t flags;
    uint32_t count, meta_size;
    uint64_t meta_at, index_at, data_at;
} header;

static bool dtype_from_id(uint8_t id, mlrt_dtype *out) {
    static const struct { uint8_t id; mlrt_dtype dtype; } ids[] = {
        {0, MLRT_F32}, {1, MLRT_F16}, {3, MLRT_F64}, {4, MLRT_I32}, {5, MLRT_I64}, {6, MLRT_I8}, {7, MLRT_U8},
        {30, MLRT_BF16}, {128, MLRT_APR_Q4}, {8, MLRT_APR_Q4}, {129, MLRT_APR_Q8}, {9, MLRT_APR_Q8},
        {12, MLRT_Q4_K}, {14, MLRT_Q6_K},
    };
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
        if (ids[i].id == id) { *out = ids[i].dtype; return true; }
    return false;
}

static mlrt_status check_checksums(const uint8_t *b, size_t n, mlrt_error *err) {
    uint32_t stored = mlrt__rd_u32(b + 40), computed = mlrt__crc32_update(mlrt__crc32(b, 40), b + 44, HEADER - 44);
    if (stored != computed)
        return mlrt__fail(err, MLRT_ERR_CHECKSUM_MISMATCH,
                         FMT ": header checksum mismatch: byte 40 stores 0x%08x but header bytes 0..40 and 44..64 give 0x%08x",
                         stored, computed);
    stored = mlrt__rd_u32(b + n - 4);
    computed = mlrt__crc32(b, n - 4);
    if (stored != computed)
        return mlrt__fail(err, MLRT_ERR_CHECKSUM_MISMATCH,
                         FMT ": checksum mismatch: the file stores 0x%08x but its bytes [0, %zu) give 0x%08x", stored, n - 4,
                         computed);
    return MLRT_OK;
}

static mlrt_status check_flags(uint16_t flags, mlrt_error *err) {
    if (flags & ~KNOWN_FLAGS)
        return mlrt__fail(err, MLRT_ERR_UNSUPPORTED, FMT ": unknown header flags 0x%04x", flags & ~KNOWN_FLAGS);
    if (flags & FLAG_COLUMN_MAJOR)
        return mlrt__fail(err, MLRT_ERR_UNSUPPORTED, FMT ": column-major tensors (flag LAYOUT_COLUMN_MAJOR) are not supported");
    for (unsigned bit = 0; bit < 4; bit++) /* LZ4, ZSTD, ENCRYPTED, SIGNED */
        if (flags >> bit & 1)
            return mlrt__fail(err, MLRT_ERR_UNSUPPORTED, FMT ": flag %s (0x%04x) is not supported", FLAGS[bit], 1u << bit);
    return MLRT_OK;
}

/* Sections in order, aligned, inside the file: header | metadata | index | data | crc. */
static mlrt_status read_header(const uint8_t *b, size_t n, header *h, mlrt_error *err) {
    *h = (header){b[4], b[5], (uint16_t)(b[6] | b[7] << 8), mlrt__rd_u32(b + 8), mlrt__rd_u32(b + 20),
                  mlrt__rd_u64(b + 12), mlrt__rd_u64(b + 24), mlrt__rd_u64(b + 32)};
    uint64_t crc_at = n - 4;
    mlrt_status st;
    if (h->major != 2)
        return mlrt__fail(err, MLRT_ERR_UNSUPPORTED_VERSION, FMT ": version %u.%u in a v2 container; mlrt reads 2.x",
                         h->major, h->minor);
    if ((st = check_flags(h->flags, err))) return st;
    if (h->meta_at != HEADER)
        return mlrt__fail(err, MLRT_ERR_BAD_OFFSETS, FMT ": metadata offset %llu must be 64, right after the header",
                         (unsigned long long)h->meta_at);
    if (h->meta_size > MAX_METADATA)
        return mlrt__fail(err, MLRT_ERR_HEADER_TOO_LARGE, FMT ": metadata size %u exceeds the %u-byte limit", h->meta_size,
                         MAX_METADATA);
    if (h->index_at % ALIGN || h->index_at < HEADER + (uint64_t)h->meta_size)
        return mlrt__fail(err, MLRT_ERR_BAD_OFFSETS,
                         FMT ": tensor index offset %llu must be a multiple of 64 at or after the metadata end (byte %llu)",
                         (unsigned long long)h->index_at, (unsigned long long)HEADER + h->meta_size);
    if (h->data_at % ALIGN || h->data_at < h->index_at)
        return mlrt__fail(err, MLRT_ERR_BAD_OFFSETS,
                         FMT ": data offset %llu must be a multiple of 64 at or after the tensor index offset %llu",
                         (unsigned long long)h->data_at, (unsigned long long)h->index_at);
    if (h->data_at > crc_at)
        return mlrt__fail(err, MLRT_ERR_TRUNCATED, FMT ": data offset %llu is past the checksum at byte %llu",
                         (unsigned long long)h->data_at, (unsigned long long)crc_at);
    if (h->count > MLRT__MAX_TENSORS)
        return mlrt__fail(err, MLRT_ERR_BAD_HEADER, FMT ": %u tensors, more than %d", h->count, MLRT__MAX_TENSORS);
    if ((uint64_t)h->count * MIN_ENTRY > h->data_at - h->index_at)
        return mlrt__fail(err, MLRT_ERR_TRUNCATED, FMT ": %u tensors need at least %llu index bytes; bytes %llu..%llu hold %llu",
                         h->count, (unsigned long long)h->count * MIN_ENTRY, (unsigned long long)h->index_at,
                         (unsigned long long)h->data_at, (unsigned long long)(h->data_at - h->index_at));
    return MLRT_OK;
}

static mlrt_status check_padding(const uint8_t *b, size_t from, size_t to, const char *after, mlrt_error *err) {
    for (size_t i = from; i < to; i++)
        if (b[i])
            return mlrt__fail(err, MLRT_ERR_BAD_HEADER, FMT ": byte %zu in the padding after the %s is 0x%02x, not 0", i,
                             after, b[i]);
    return MLRT_OK;
}

/* Containers nested in v, v included (at most MLRT__MAX_JSON_DEPTH: the parser's limit). */
static int json_depth(const mlrt__json *v) {
    int d = 0;
    for (const mlrt__json *c = v->child; c; c = c->next) {
        int k = json_depth(c);
        d = k > d ? k : d;
    }
    return d + (v->type == MLRT__JSON_ARRAY || v->type == MLRT__JSON_OBJECT);
}

static char *dup_str(const char *s, size_t n) {
    char *d = malloc(n + 1);
    if (d) { memcpy(d, s, n); d[n] = 0; }
    return d;
}

/* The metadata JSON as is, and its top-level strings as the string -> string view recognition uses. */
static mlrt_status read_metadata(const uint8_t *b, const header *h, mlrt__tensorset *ts, mlrt_error *err) {
    mlrt__json_doc doc;
    mlrt_status st = mlrt__json_parse(b + HEADER, h->meta_size, FMT ": metadata", &doc, err);
    if (st) return st;
    const mlrt__json *root = doc.root;
    if (root->type != MLRT__JSON_OBJECT)
        st = mlrt__fail(err, MLRT_ERR_BAD_HEADER, FMT ": metadata must be a JSON object, got %s", mlrt__json_type_name(root->type));
    else if (json_depth(root) > MLRT__MAX_META_DEPTH)
        st = mlrt__fail(err, MLRT_ERR_INVALID_JSON, FMT ": metadata nests deeper than %d levels", MLRT__MAX_META_DEPTH);
    else if (!(ts->meta_json = dup_str((const char *)b + HEADER, h->meta_size)) ||
             !(ts->meta = calloc(root->count ? root->count : 1, sizeof *ts->meta)))
        st = mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, FMT ": out of memory");
    for (const mlrt__json *kv = root->child; kv && !st; kv = kv->next) {
        if (kv->type != MLRT__JSON_STRING) continue;
        mlrt__kv *e = &ts->meta[ts->meta_count++];
        e->key = dup_str(kv->key, kv->key_len);
        e->value = dup_str(kv->str, kv->len);
        e->key_len = kv->key_len;
        e->value_len = kv->len;
        if (!e->key || !e->value) st = mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, FMT ": out of memory");
    }
    mlrt__json_free(&doc);
    return st;
}

typedef struct cursor {
    const uint8_t *b;
    size_t pos, end;    /* the index: [pos, end) of the file */
    mlrt_error *err;
} cursor;

static mlrt_status take(cursor *c, size_t k, size_t i, const char *what, const uint8_t **at) {
    if (c->end - c->pos < k)
        return mlrt__fail(c->err, MLRT_ERR_TRUNCATED, FMT ": tensor index entry %zu ends at byte %zu inside its %s", i,
                         c->end, what);
    *at = c->b + c->pos;
    c->pos += k;
    return MLRT_OK;
}

static mlrt_status read_name(cursor *c, size_t i, mlrt__tensor *t) {
    const uint8_t *p = NULL;
    mlrt_status st = take(c, 2, i, "name length", &p);
    size_t len = st ? 0 : (size_t)(p[0] | p[1] << 8);
    if (!st) st = take(c, len, i, "name", &p);
    if (st) return st;
    if (!mlrt__utf8_valid(p, len))
        return mlrt__fail(c->err, MLRT_ERR_INVALID_UTF8, FMT ": tensor index entry %zu: name at byte %zu is not valid UTF-8",
                         i, c->pos - len);
    if (len == 0 || memchr(p, 0, len))
        return mlrt__fail(c->err, MLRT_ERR_BAD_HEADER, FMT ": tensor index entry %zu has an empty name or one containing NUL", i);
    if (!(t->name = dup_str((const char *)p, len))) return mlrt__fail(c->err, MLRT_ERR_OUT_OF_MEMORY, FMT ": out of memory");
    t->name_len = len;
    return MLRT_OK;
}

/* One entry; data_len: the bytes from the data offset to the checksum. */
static mlrt_status read_entry(cursor *c, size_t i, uint64_t data_len, mlrt__tensor *t) {
    const uint8_t *p = NULL;
    mlrt_status st = read_name(c, i, t);
    if (!st) st = take(c, 2, i, "dtype and rank", &p);
    if (st) return st;
    if (!dtype_from_id(p[0], &t->dtype))
        return mlrt__fail(c->err, MLRT_ERR_UNKNOWN_DTYPE, FMT ": tensor '%s' has unknown dtype id %u", t->name, p[0]);
    if (p[1] > MLRT__MAX_RANK)
        return mlrt__fail(c->err, MLRT_ERR_BAD_DIMENSIONS, FMT ": tensor '%s' has %u dimensions, more than %d", t->name, p[1],
                         MLRT__MAX_RANK);
    t->rank = p[1];
    if ((st = take(c, 8 * (size_t)t->rank + 16, i, "dimensions, offset and size", &p))) return st;
    t->count = 1;
    for (uint32_t d = 0; d < t->rank; d++) {
        t->shape[d] = mlrt__rd_u64(p + 8 * d);
        if (!mlrt__mul_u64(t->count, t->shape[d], &t->count))
            return mlrt__fail(c->err, MLRT_ERR_SHAPE_OVERFLOW, FMT ": tensor '%s' shape product overflows", t->name);
    }
    uint64_t offset = mlrt__rd_u64(p + 8 * t->rank), size = mlrt__rd_u64(p + 8 * t->rank + 8), bytes;
    if (!mlrt__dtype_bytes(t->dtype, t->count, &bytes))
        return mlrt__fail(c->err, MLRT_ERR_SHAPE_OVERFLOW, FMT ": tensor '%s' byte size overflows", t->name);
    if (size != bytes)
        return mlrt__fail(c->err, MLRT_ERR_SIZE_MISMATCH,
                         FMT ": tensor '%s' is %s with %llu elements (%llu bytes) but its size is %llu bytes",
                         t->name, mlrt_dtype_name(t->dtype), (unsigned long long)t->count, (unsigned long long)bytes,
                         (unsigned long long)size);
    if (offset % ALIGN)
        return mlrt__fail(c->err, MLRT_ERR_BAD_OFFSETS, FMT ": tensor '%s' offset %llu is not a multiple of 64", t->name,
                         (unsigned long long)offset);
    if (offset > data_len || size > data_len - offset)
        return mlrt__fail(c->err, MLRT_ERR_BAD_OFFSETS,
                         FMT ": tensor '%s' bytes [%llu, +%llu) exceed the %llu data bytes before the checksum", t->name,
                         (unsigned long long)offset, (unsigned long long)size, (unsigned long long)data_len);
    t->begin = (size_t)offset;
    t->end = (size_t)(offset + size);
    return MLRT_OK;
}

static int cmp_names(const mlrt__tensor *a, const mlrt__tensor *b) {
    int c = memcmp(a->name, b->name, a->name_len < b->name_len ? a->name_len : b->name_len);
    return c ? c : (a->name_len > b->name_len) - (a->name_len < b->name_len);
}

static mlrt_status read_index(const uint8_t *b, size_t n, const header *h, mlrt__tensorset *ts, mlrt_error *err) {
    cursor c = {b, (size_t)h->index_at, (size_t)h->data_at, err};
    ts->tensors = calloc(h->count ? h->count : 1, sizeof *ts->tensors);
    if (!ts->tensors) return mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, FMT ": out of memory");
    for (size_t i = 0; i < h->count; i++) {
        mlrt__tensor *t = &ts->tensors[ts->count++];
        mlrt_status st = read_entry(&c, i, n - 4 - h->data_at, t);
        if (st) return st;
        int order = i ? cmp_names(t - 1, t) : -1;
        if (order == 0)
            return mlrt__fail(err, MLRT_ERR_DUPLICATE_KEY, FMT ": tensor name '%s' appears twice in the index", t->name);
        if (order > 0)
            return mlrt__fail(err, MLRT_ERR_BAD_HEADER, FMT ": the tensor index is not sorted by name: '%s' comes after '%s'",
                             t->name, t[-1].name);
    }
    return check_padding(b, c.pos, c.end, "tensor index", err);
}

/* Into file order (ascending begin); no two tensors may share a byte. */
static mlrt_status check_overlaps(mlrt__tensorset *ts, mlrt_error *err) {
    mlrt__sort(ts->tensors, ts->count, sizeof *ts->tensors, mlrt__tensor_cmp_begin);
    for (size_t i = 1; i < ts->count; i++) {
        const mlrt__tensor *a = &ts->tensors[i - 1], *t = &ts->tensors[i];
        if (t->begin < a->end)
            return mlrt__fail(err, MLRT_ERR_BAD_OFFSETS, FMT ": tensors '%s' [%zu, %zu) and '%s' [%zu, %zu) overlap", a->name,
                             a->begin, a->end, t->name, t->begin, t->end);
    }
    return MLRT_OK;
}

static void json_range(mlrt__buf *j, const char *name, uint64_t at, uint64_t len) {
    mlrt__buf_printf(j, ",\"%s\":{\"byteOffset\":%llu,\"byteLength\":%llu}", name, (unsigned long long)at,
                    (unsigned long long)len);
}

/* The "apr" member of info/inspect. */
static char *describe(const uint8_t *b, const header *h) {
    mlrt__buf j = {0};
    mlrt__buf_printf(&j, "\"apr\":{\"magic\":\"%s\",\"version\":\"%u.%u\",\"flags\":[", b[3] ? "APR2" : "APR\\u0000",
                    h->major, h->minor);
    for (unsigned bit = 0, k = 0; bit < 12; bit++)
        if (h->flags >> bit & 1) mlrt__buf_printf(&j, "%s\"%s\"", k++ ? "," : "", FLAGS[bit]);
    mlrt__buf_puts(&j, "]");
    json_range(&j, "metadataBytes", h->meta_at, h->meta_size);
    json_range(&j, "indexBytes", h->index_at, h->data_at - h->index_at);
    mlrt__buf_printf(&j, ",\"dataOffset\":%llu}", (unsigned long long)h->data_at);
    if (j.oom) { free(j.data); return NULL; }
    return j.data;
}

mlrt_status mlrt__read_apr_v2(const uint8_t *b, size_t n, mlrt__tensorset *ts, mlrt_error *err) {
    memset(ts, 0, sizeof *ts);
    ts->format = MLRT_FORMAT_APR;
    if (n < HEADER + 4)
        return mlrt__fail(err, MLRT_ERR_TRUNCATED, FMT ": file is %zu bytes, shorter than the 64-byte header and 4-byte checksum", n);
    if (memcmp(b, "APR\0", 4) != 0 && memcmp(b, "APR2", 4) != 0)
        return mlrt__fail(err, MLRT_ERR_UNKNOWN_FORMAT, FMT ": magic %02x %02x %02x %02x is not 'APR\\0' or 'APR2'", b[0], b[1],
                         b[2], b[3]);
    header h = {0};
    mlrt_status st = check_checksums(b, n, err);
    if (!st) st = read_header(b, n, &h, err);
    if (!st) st = read_metadata(b, &h, ts, err);
    if (!st) st = check_padding(b, HEADER + h.meta_size, (size_t)h.index_at, "metadata", err);
    if (!st) st = read_index(b, n, &h, ts, err);
    if (!st) st = check_overlaps(ts, err);
    if (!st && !(ts->extra_json = describe(b, &h))) st = mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, FMT ": out of memory");
    if (st) {
        mlrt__tensorset_free(ts);
        return st;
    }
    ts->data_begin = (size_t)h.data_at;
    return MLRT_OK;
}
