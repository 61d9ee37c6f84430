/* formats/apr_v1.c — aprender's .apr v1 container ("APRN"): one classical model.
 *
 *   header    32 bytes: "APRN", u8 major, u8 minor, u16 model type, u32 metadata size,
 *             u32 payload size, u32 uncompressed size, u8 compression, u8 flags, u8 quality, 9 reserved
 *   metadata  a MessagePack map (rmp-serde named structs): converted to JSON for info/inspect
 *   payload   bincode 1 of the model (fixed-width LE, usize = u64, Option = u8 tag, enum = u32
 *             variant), stored per byte 20: 0 as is, 1/2 one zstd frame, 3 u32 LE length + one raw
 *             LZ4 block; or encrypted (flag 0x01: salt/nonce/ciphertext, not decrypted here)
 *   [signature 64 bytes + public key 32]  only with the SIGNED flag (0x02); not verified here
 *   crc32     u32 LE over every byte before it
 * Load order as aprender's: size >= 36, CRC, header fields, expected type, bounds; then the bytes
 * after the payload, the metadata, and the payload, decoded exactly:
 *   LinearRegression    Option<Vec<f32>> coefficients, f32 intercept, u8 fit_intercept
 *   LogisticRegression  Option<Vec<f32>> coefficients, f32 intercept, f32 learning_rate, u64 max_iter,
 *                       f32 tol, then (current layout; told apart by the exact length) ClassWeight
 *                       (0 Uniform, 1 Balanced, 2 Manual + Vec<f32>), f32 l2_penalty, FitMode
 *                       (0 Batch, 1 Stochastic, 2 MiniBatch + u64)
 *   NeuralSequential    aprender's MNIST example: Vec<f32> w1 [in][hidden], b1, w2 [hidden][out], b2;
 *                       ReLU hidden, softmax output
 * Stricter than aprender: the payload must decompress to exactly the uncompressed size and be
 * consumed exactly, and bytes between the payload and the CRC are only allowed as the signature
 * block of a SIGNED file. */
#include "formats.h"
#include <stdlib.h>
#include <string.h>

#define FMT "apr"
#define HEADER 32
#define MAX_RAW (1u << 30)       /* aprender's limit on the uncompressed payload (1 GiB) */
#define SIGNATURE 64             /* Ed25519 signature, then the signer's public key */
#define PUBLIC_KEY 32
#define FLAG_ENCRYPTED 0x01
#define FLAG_SIGNED 0x02
#define COMPRESSION_LZ4 3

static const struct { uint16_t code; const char *name; } TYPES[] = {
    {0x0001, "LinearRegression"}, {0x0002, "LogisticRegression"}, {0x0003, "DecisionTree"},
    {0x0004, "RandomForest"}, {0x0005, "GradientBoosting"}, {0x0006, "KMeans"}, {0x0007, "Pca"},
    {0x0008, "NaiveBayes"}, {0x0009, "Knn"}, {0x000A, "Svm"}, {0x0010, "NgramLm"}, {0x0011, "Tfidf"},
    {0x0012, "CountVectorizer"}, {0x0020, "NeuralSequential"}, {0x0021, "NeuralCustom"},
    {0x0030, "ContentRecommender"}, {0x0040, "MixtureOfExperts"}, {0x00FF, "Custom"},
};

static const char *const COMPRESSION[] = {"None", "ZstdDefault", "ZstdMax", "Lz4"};
static const char *const FLAGS[] = {"ENCRYPTED", "SIGNED", "STREAMING", "LICENSED", "TRUENO_NATIVE", "QUANTIZED",
                                    "HAS_MODEL_CARD"}; /* bits 0..6; bit 7 is masked off, as aprender does */

const char *mlrt__apr_type_name(uint16_t code) {
    for (size_t i = 0; i < sizeof TYPES / sizeof TYPES[0]; i++)
        if (TYPES[i].code == code) return TYPES[i].name;
    return NULL;
}

bool mlrt__apr_type_from_name(const char *name, uint16_t *code) {
    for (size_t i = 0; i < sizeof TYPES / sizeof TYPES[0]; i++)
        if (strcmp(TYPES[i].name, name) == 0) { *code = TYPES[i].code; return true; }
    return false;
}

/* ============================================================ container */

typedef struct header {
    uint8_t major, minor;
    uint16_t type;
    uint32_t meta_size, payload_size, raw_size;
    uint8_t compression, flags, quality;
} header;

static mlrt_status read_header(const uint8_t *b, size_t n, uint16_t expect, header *h, mlrt_error *err) {
    if (n < HEADER + 4)
        return mlrt__fail(err, MLRT_ERR_TRUNCATED, FMT ": file is %zu bytes, shorter than the 32-byte header and 4-byte checksum", n);
    uint32_t stored = mlrt__rd_u32(b + n - 4), computed = mlrt__crc32(b, n - 4);
    if (stored != computed)
        return mlrt__fail(err, MLRT_ERR_CHECKSUM_MISMATCH,
                         FMT ": checksum mismatch: the file stores 0x%08x but its bytes [0, %zu) give 0x%08x", stored,
                         n - 4, computed);
    if (memcmp(b, "APRN", 4) != 0)
        return mlrt__fail(err, MLRT_ERR_UNKNOWN_FORMAT, FMT ": magic %02x %02x %02x %02x is not 'APRN'", b[0], b[1], b[2], b[3]);
    *h = (header){b[4], b[5], (uint16_t)(b[6] | b[7] << 8), mlrt__rd_u32(b + 8), mlrt__rd_u32(b + 12), mlrt__rd_u32(b + 16),
                  b[20], (uint8_t)(b[21] & 0x7f), b[22]};
    if (h->major > 1)
        return mlrt__fail(err, MLRT_ERR_UNSUPPORTED_VERSION, FMT ": format version %u.%u is newer than 1.x, which mlrt reads",
                         h->major, h->minor);
    if (!mlrt__apr_type_name(h->type))
        return mlrt__fail(err, MLRT_ERR_BAD_HEADER, FMT ": unknown model type 0x%04x at byte 6", h->type);
    if (h->raw_size > MAX_RAW)
        return mlrt__fail(err, MLRT_ERR_BAD_HEADER, FMT ": uncompressed size %u at byte 16 exceeds the 1 GiB limit",
                         h->raw_size);
    if (h->compression > COMPRESSION_LZ4)
        return mlrt__fail(err, MLRT_ERR_BAD_HEADER, FMT ": unknown compression %u at byte 20 (0 none, 1-2 zstd, 3 LZ4)",
                         h->compression);
    if (h->quality > 100)
        return mlrt__fail(err, MLRT_ERR_BAD_HEADER, FMT ": quality score %u at byte 22 is not in 0..100", h->quality);
    if (expect && expect != h->type)
        return mlrt__fail(err, MLRT_ERR_MODEL_TYPE_MISMATCH, FMT ": model type mismatch: the file holds %s (0x%04x), expected %s",
                         mlrt__apr_type_name(h->type), h->type, mlrt__apr_type_name(expect));
    return MLRT_OK;
}

/* Metadata and payload inside the file; after them only the signature block of a signed file. */
static mlrt_status check_sections(size_t n, const header *h, mlrt_error *err) {
    uint64_t end = HEADER + (uint64_t)h->meta_size + h->payload_size, crc_at = n - 4;
    if (end > crc_at)
        return mlrt__fail(err, MLRT_ERR_TRUNCATED,
                         FMT ": metadata (%u bytes) and payload (%u bytes) end at byte %llu, past the checksum at byte %zu",
                         h->meta_size, h->payload_size, (unsigned long long)end, n - 4);
    uint64_t extra = crc_at - end;
    if ((h->flags & FLAG_SIGNED) && extra != SIGNATURE + PUBLIC_KEY)
        return mlrt__fail(err, MLRT_ERR_SIZE_MISMATCH,
                         FMT ": a signed file has a 96-byte signature block after the payload; "
                             "found %llu bytes from byte %llu to the checksum",
                         (unsigned long long)extra, (unsigned long long)end);
    if (!(h->flags & FLAG_SIGNED) && extra)
        return mlrt__fail(err, MLRT_ERR_SIZE_MISMATCH,
                         FMT ": %llu bytes between the payload end (byte %llu) and the checksum, but the SIGNED flag is not set",
                         (unsigned long long)extra, (unsigned long long)end);
    return MLRT_OK;
}

/* Keys of aprender's Metadata that must have this JSON type when present (nullable: Option). */
static const struct { const char *key; mlrt__json_type type; bool nullable; } KNOWN_KEYS[] = {
    {"created_at", MLRT__JSON_STRING, false}, {"aprender_version", MLRT__JSON_STRING, false},
    {"model_name", MLRT__JSON_STRING, true}, {"description", MLRT__JSON_STRING, true},
    {"distillation", MLRT__JSON_STRING, true}, {"hyperparameters", MLRT__JSON_OBJECT, false},
    {"metrics", MLRT__JSON_OBJECT, false}, {"custom", MLRT__JSON_OBJECT, false}, {"training", MLRT__JSON_OBJECT, true},
    {"distillation_info", MLRT__JSON_OBJECT, true}, {"license", MLRT__JSON_OBJECT, true},
    {"model_card", MLRT__JSON_OBJECT, true},
};

static mlrt_status check_metadata(const char *json, size_t len, mlrt_error *err) {
    mlrt__json_doc doc;
    mlrt_status st = mlrt__json_parse((const uint8_t *)json, len, FMT ": metadata", &doc, err);
    if (st) return st;
    if (doc.root->type != MLRT__JSON_OBJECT)
        st = mlrt__fail(err, MLRT_ERR_BAD_HEADER, FMT ": metadata must be a map, got %s", mlrt__json_type_name(doc.root->type));
    for (size_t i = 0; i < sizeof KNOWN_KEYS / sizeof KNOWN_KEYS[0] && !st; i++) {
        const mlrt__json *v = mlrt__json_get(doc.root, KNOWN_KEYS[i].key);
        if (v && v->type != KNOWN_KEYS[i].type && !(KNOWN_KEYS[i].nullable && v->type == MLRT__JSON_NULL))
            st = mlrt__fail(err, MLRT_ERR_BAD_HEADER, FMT ": metadata '%s' must be %s, got %s", KNOWN_KEYS[i].key,
                           KNOWN_KEYS[i].type == MLRT__JSON_STRING ? "a string" : "a map", mlrt__json_type_name(v->type));
    }
    mlrt__json_free(&doc);
    return st;
}

static mlrt_status read_metadata(const uint8_t *b, const header *h, mlrt__tensorset *ts, mlrt_error *err) {
    mlrt__buf j = {0};
    size_t used = 0;
    mlrt_status st = mlrt__msgpack_to_json(b + HEADER, h->meta_size, HEADER, FMT ": metadata", &j, &used, err);
    if (!st && used != h->meta_size)
        st = mlrt__fail(err, MLRT_ERR_SIZE_MISMATCH,
                       FMT ": the metadata map ends at byte %zu but the metadata size is %u bytes (to byte %llu)",
                       HEADER + used, h->meta_size, (unsigned long long)HEADER + h->meta_size);
    if (!st) st = check_metadata(j.data, j.len, err);
    if (st) {
        free(j.data);
        return st;
    }
    ts->meta_json = j.data;
    return MLRT_OK;
}

static void json_range(mlrt__buf *j, const char *name, uint64_t at, uint64_t len) {
    mlrt__buf_printf(j, ",\"%s\":{\"byteOffset\":%llu,\"byteLength\":%llu}", name, (unsigned long long)at,
                    (unsigned long long)len);
}

/* The "apr" member of info/inspect: the header, and where each section is (the signature's and
 * the signed message's too, for a host that verifies the signature). */
static char *describe(const header *h) {
    uint64_t payload_at = HEADER + (uint64_t)h->meta_size, end = payload_at + h->payload_size;
    mlrt__buf j = {0};
    mlrt__buf_printf(&j, "\"apr\":{\"magic\":\"APRN\",\"version\":\"%u.%u\",\"modelType\":\"%s\",\"modelTypeCode\":%u,",
                    h->major, h->minor, mlrt__apr_type_name(h->type), h->type);
    mlrt__buf_printf(&j, "\"compression\":\"%s\",\"flags\":[", COMPRESSION[h->compression]);
    for (unsigned bit = 0, k = 0; bit < 7; bit++)
        if (h->flags >> bit & 1) mlrt__buf_printf(&j, "%s\"%s\"", k++ ? "," : "", FLAGS[bit]);
    mlrt__buf_printf(&j, "],\"qualityScore\":%u,\"encrypted\":%s,\"signed\":%s,\"uncompressedSize\":%u", h->quality,
                    h->flags & FLAG_ENCRYPTED ? "true" : "false", h->flags & FLAG_SIGNED ? "true" : "false", h->raw_size);
    json_range(&j, "metadataBytes", HEADER, h->meta_size);
    json_range(&j, "payloadBytes", payload_at, h->payload_size);
    if (h->flags & FLAG_SIGNED) {
        json_range(&j, "signatureBytes", end, SIGNATURE);
        json_range(&j, "publicKeyBytes", end + SIGNATURE, PUBLIC_KEY);
        json_range(&j, "signedBytes", 0, end);
    }
    mlrt__buf_puts(&j, "}");
    if (j.oom) { free(j.data); return NULL; }
    return j.data;
}

mlrt_status mlrt__read_apr_v1(const uint8_t *b, size_t n, uint16_t expect, mlrt__apr_v1 *f, mlrt_error *err) {
    memset(f, 0, sizeof *f);
    f->ts.format = MLRT_FORMAT_APR;
    header h = {0};
    mlrt_status st = read_header(b, n, expect, &h, err);
    if (!st) st = check_sections(n, &h, err);
    if (!st) st = read_metadata(b, &h, &f->ts, err);
    if (!st && !(f->ts.extra_json = describe(&h))) st = mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, FMT ": out of memory");
    if (st) {
        mlrt__tensorset_free(&f->ts);
        return st;
    }
    f->type = h.type;
    f->compression = h.compression;
    f->flags = h.flags;
    f->raw_size = h.raw_size;
    f->payload_at = HEADER + (size_t)h.meta_size;
    f->payload = b + f->payload_at;
    f->payload_size = h.payload_size;
    return MLRT_OK;
}

/* ========================================================== decompressing */

/* err = "apr: <codec> payload at byte N: " + the decoder's whole message (%s would cut it). */
static mlrt_status decoder_failed(mlrt_error *err, const mlrt_error *inner, const char *codec, size_t at) {
    if (!err) return inner->code;
    mlrt__fail(err, inner->code, FMT ": %s payload at byte %zu: ", codec, at);
    size_t used = strlen(err->message), len = strlen(inner->message), room = sizeof err->message - 1 - used;
    if (len > room) {
        len = room;
        while (len && ((unsigned char)inner->message[len] & 0xc0) == 0x80) len--;
    }
    memcpy(err->message + used, inner->message, len);
    err->message[used + len] = 0;
    return inner->code;
}

/* *raw: the bincode payload, in the file or in *buf (malloc'd, the caller frees it). */
static mlrt_status decompress(const mlrt__apr_v1 *f, const uint8_t **raw, uint8_t **buf, mlrt_error *err) {
    *raw = f->payload;
    *buf = NULL;
    if (f->compression == 0) {
        if (f->payload_size != f->raw_size)
            return mlrt__fail(err, MLRT_ERR_SIZE_MISMATCH,
                             FMT ": the uncompressed payload is %zu bytes but the header's uncompressed size is %u",
                             f->payload_size, f->raw_size);
        return MLRT_OK;
    }
    bool lz4 = f->compression == COMPRESSION_LZ4;
    const uint8_t *in = f->payload;
    size_t in_len = f->payload_size, at = f->payload_at;
    if (lz4) { /* lz4_flex's size prefix */
        if (in_len < 4)
            return mlrt__fail(err, MLRT_ERR_TRUNCATED, FMT ": the LZ4 payload is %zu bytes, too short for its 4-byte length",
                             in_len);
        if (mlrt__rd_u32(in) != f->raw_size)
            return mlrt__fail(err, MLRT_ERR_SIZE_MISMATCH,
                             FMT ": the LZ4 payload declares %u bytes but the header's uncompressed size is %u",
                             mlrt__rd_u32(in), f->raw_size);
        in += 4, in_len -= 4, at += 4;
    }
    /* before allocating: an LZ4 byte expands to at most 255 bytes, a zstd block of >= 4 bytes to 128 KiB */
    if (f->raw_size > (uint64_t)in_len * (lz4 ? 255 : 32768))
        return mlrt__fail(err, MLRT_ERR_SIZE_MISMATCH, FMT ": %zu compressed bytes cannot expand to the uncompressed size %u",
                         in_len, f->raw_size);
    if (!(*buf = malloc(f->raw_size ? f->raw_size : 1)))
        return mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, FMT ": out of memory for the %u-byte payload", f->raw_size);
    mlrt_error inner;
    mlrt_status st = lz4 ? mlrt__lz4_block_decode(in, in_len, *buf, f->raw_size, &inner)
                         : mlrt__zstd_decode(in, in_len, *buf, f->raw_size, &inner);
    if (st) return decoder_failed(err, &inner, lz4 ? "LZ4" : "zstd", at);
    *raw = *buf;
    return MLRT_OK;
}

/* ================================================================ payload */

static mlrt_status floats(mlrt__bincode *c, const char *what, const uint8_t **data, uint64_t *count) {
    return mlrt__bc_vec(c, what, 4, "floats", data, count);
}

/* LogisticRegression after tol: ClassWeight, l2_penalty, FitMode (the current 8-field layout). */
static mlrt_status logistic_tail(mlrt__bincode *c) {
    uint32_t v;
    uint64_t n;
    const uint8_t *p = NULL;
    mlrt_status st = mlrt__bc_variant(c, "class_weight", 3, &v);
    if (!st && v == 2) st = floats(c, "class_weight Manual", &p, &n);
    if (!st) st = mlrt__bc_take(c, 4, "l2_penalty", &p);
    if (!st) st = mlrt__bc_variant(c, "fit_mode", 3, &v);
    if (!st && v == 2) st = mlrt__bc_u64(c, "fit_mode MiniBatch", &n);
    return st;
}

static mlrt_status regression(mlrt__bincode *c, mlrt__desc *d, bool logistic) {
    bool fitted = false, fit_intercept;
    const uint8_t *coef = NULL, *icpt = NULL, *p;
    uint64_t n = 0, max_iter;
    mlrt_status st = mlrt__bc_tag(c, "the coefficients' Option tag", &fitted);
    if (!st && fitted) st = floats(c, "coefficients", &coef, &n);
    if (!st) st = mlrt__bc_take(c, 4, "intercept", &icpt);
    if (!st && !logistic) st = mlrt__bc_tag(c, "fit_intercept", &fit_intercept);
    if (!st && logistic) {
        if (!(st = mlrt__bc_take(c, 4, "learning_rate", &p)) && !(st = mlrt__bc_u64(c, "max_iter", &max_iter)))
            st = mlrt__bc_take(c, 4, "tol", &p);
        size_t five = c->pos;
        if (!st && c->pos != c->n && !(st = logistic_tail(c)) && c->pos != c->n)
            st = mlrt__fail(c->err, MLRT_ERR_SIZE_MISMATCH,
                           FMT ": LogisticRegression payload is %zu bytes: the 5-field layout ends at byte %zu, "
                               "the 8-field layout at byte %zu",
                           c->n, five, c->pos);
    }
    if (!st) st = mlrt__bc_consumed(c);
    if (st) return st;
    if (!fitted) return mlrt__fail(c->err, MLRT_ERR_NOT_A_MODEL, FMT ": the %s has no coefficients: it was never fitted", c->type);
    if (n == 0 || n > MLRT__MAX_DIM)
        return mlrt__fail(c->err, MLRT_ERR_BAD_DIMENSIONS, FMT ": the %s has %llu coefficients; mlrt needs 1..%u", c->type,
                          (unsigned long long)n, MLRT__MAX_DIM);
    d->type = MLRT__DESC_DENSE, d->kind = logistic ? MLRT_KIND_LOGISTIC_REGRESSION : MLRT_KIND_LINEAR_REGRESSION;
    d->dtype = MLRT_F32, d->n_layers = 1;
    d->layers[0] = (mlrt__dense_src){"coefficients", "intercept", (uint32_t)n, 1, coef, MLRT_F32, false, icpt, MLRT_F32,
                                     logistic ? MLRT_ACT_SIGMOID : MLRT_ACT_IDENTITY, false};
    return MLRT_OK;
}

static mlrt_status sequential(mlrt__bincode *c, mlrt__desc *d) {
    static const char *const names[4] = {"w1", "b1", "w2", "b2"};
    const uint8_t *p[4] = {0};
    uint64_t len[4];
    mlrt_status st = MLRT_OK;
    for (int i = 0; i < 4 && !st; i++) st = floats(c, names[i], &p[i], &len[i]);
    if (!st) st = mlrt__bc_consumed(c);
    if (st) return st;
    uint64_t hid = len[1], out = len[3], in = hid ? len[0] / hid : 0;
    if (hid == 0 || out == 0 || in == 0 || hid > MLRT__MAX_DIM || out > MLRT__MAX_DIM || in > MLRT__MAX_DIM ||
        in * hid != len[0] || hid * out != len[2])
        return mlrt__fail(c->err, MLRT_ERR_BAD_DIMENSIONS,
                          FMT ": NeuralSequential w1, b1, w2, b2 hold %llu, %llu, %llu, %llu floats: not in x hidden, hidden, "
                          "hidden x out, out with each size in 1..%u", (unsigned long long)len[0], (unsigned long long)len[1],
                          (unsigned long long)len[2], (unsigned long long)len[3], MLRT__MAX_DIM);
    d->type = MLRT__DESC_DENSE, d->kind = MLRT_KIND_MLP, d->dtype = MLRT_F32, d->n_layers = 2;
    d->layers[0] = (mlrt__dense_src){"w1", "b1", (uint32_t)in, (uint32_t)hid, p[0], MLRT_F32, true, p[1], MLRT_F32, MLRT_ACT_RELU, false};
    d->layers[1] = (mlrt__dense_src){"w2", "b2", (uint32_t)hid, (uint32_t)out, p[2], MLRT_F32, true, p[3], MLRT_F32, MLRT_ACT_SOFTMAX, false};
    return MLRT_OK;
}

/* Types aprender cannot write: they have no serde Serialize, so format::save cannot take them. */
static bool never_written(uint16_t type) {
    return type == 0x0005 || type == 0x0007 || type == 0x0008 || type == 0x0009 || type == 0x000A || type == 0x0011 ||
           type == 0x0012;
}

/* The type must be one mlrt reads and the payload not encrypted; then *raw is the bincode payload
 * (in the file or in *buf, which the caller frees). */
static mlrt_status open_payload(const mlrt__apr_v1 *f, const uint8_t **raw, uint8_t **buf, mlrt_error *err) {
    const char *name = mlrt__apr_type_name(f->type);
    *buf = NULL;
    if (never_written(f->type))
        return mlrt__fail(err, MLRT_ERR_UNSUPPORTED_MODEL_TYPE,
                         FMT ": model type %s (0x%04x) is not supported: aprender itself writes no such payload",
                         name, f->type);
    switch (f->type) {
    case MLRT__APR_LINEAR_REGRESSION: case MLRT__APR_LOGISTIC_REGRESSION: case MLRT__APR_NEURAL_SEQUENTIAL:
    case MLRT__APR_DECISION_TREE: case MLRT__APR_RANDOM_FOREST: case MLRT__APR_KMEANS: case MLRT__APR_NGRAM_LM:
        break;
    default:
        return mlrt__fail(err, MLRT_ERR_UNSUPPORTED_MODEL_TYPE,
                         FMT ": model type %s (0x%04x) is not supported; mlrt runs LinearRegression, LogisticRegression, "
                             "DecisionTree, RandomForest, KMeans and NeuralSequential",
                         name, f->type);
    }
    if (f->flags & FLAG_ENCRYPTED)
        return mlrt__fail(err, MLRT_ERR_ENCRYPTED,
                         FMT ": the payload is encrypted (flag 0x01); loading it needs the JavaScript host with the password or key");
    return decompress(f, raw, buf, err);
}

mlrt_status mlrt__read_apr_v1_model(const mlrt__apr_v1 *f, mlrt__desc *d, mlrt_error *err) {
    const uint8_t *raw;
    uint8_t *buf;
    memset(d, 0, sizeof *d);
    mlrt_status st = open_payload(f, &raw, &buf, err);
    if (st) {
        free(buf);
        return st;
    }
    mlrt__bincode c = {raw, f->raw_size, 0, mlrt__apr_type_name(f->type), err};
    char *ngram = NULL;
    switch (f->type) {
    case MLRT__APR_NEURAL_SEQUENTIAL: st = sequential(&c, d); break;
    case MLRT__APR_DECISION_TREE: st = mlrt__read_apr_tree(raw, f->raw_size, d, err); break;
    case MLRT__APR_RANDOM_FOREST: st = mlrt__read_apr_forest(raw, f->raw_size, d, err); break;
    case MLRT__APR_KMEANS: st = mlrt__read_apr_kmeans(raw, f->raw_size, d, err); break;
    case MLRT__APR_NGRAM_LM:
        st = mlrt__apr_ngram_describe(raw, f->raw_size, &ngram, err);
        if (!st)
            st = mlrt__fail(err, MLRT_ERR_UNSUPPORTED_MODEL_TYPE,
                            FMT ": NgramLm (aprender-shell's MarkovModel) takes no input vector: mlrt can inspect it but not run it");
        free(ngram);
        break;
    default: st = regression(&c, d, f->type == MLRT__APR_LOGISTIC_REGRESSION); break;
    }
    d->format = MLRT_FORMAT_APR;
    d->ts = &f->ts;
    if (d->type == MLRT__DESC_DENSE) d->owned = buf; /* the layers point into the decompressed payload */
    else free(buf);
    return st;
}

char *mlrt__apr_v1_payload_json(const mlrt__apr_v1 *f) {
    const uint8_t *raw;
    uint8_t *buf;
    char *json = NULL;
    mlrt_error ignored;
    if (f->type == MLRT__APR_NGRAM_LM && !open_payload(f, &raw, &buf, &ignored))
        mlrt__apr_ngram_describe(raw, f->raw_size, &json, &ignored);
    if (f->type == MLRT__APR_NGRAM_LM) free(buf);
    return json;
}
