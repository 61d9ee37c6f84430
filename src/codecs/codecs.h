/* codecs/codecs.h — bytes to values: a strict JSON reader, MessagePack, bincode, the protobuf wire
 * format, CRC-32, one LZ4 block and one Zstandard frame. Codecs use only the base
 * (README, "Architecture"). */
#ifndef MLRT__CODECS_H
#define MLRT__CODECS_H
#include "../base/base.h"

/* codecs/json.h — a strict JSON reader (RFC 8259) for file headers.
 * Refuses: invalid UTF-8, trailing garbage, duplicate object keys, lone surrogates,
 * raw control characters in strings, nesting deeper than MLRT__MAX_JSON_DEPTH. */


typedef enum mlrt__json_type {
    MLRT__JSON_NULL, MLRT__JSON_FALSE, MLRT__JSON_TRUE, MLRT__JSON_NUMBER,
    MLRT__JSON_STRING, MLRT__JSON_ARRAY, MLRT__JSON_OBJECT
} mlrt__json_type;

typedef struct mlrt__json mlrt__json;
struct mlrt__json {
    mlrt__json_type type;
    size_t count;        /* ARRAY: items, OBJECT: members */
    const char *str;     /* STRING: decoded, NUL-terminated; NUMBER: its source text (not terminated) */
    size_t len;          /* bytes of str */
    const char *key;     /* set on object members: decoded, NUL-terminated */
    size_t key_len;
    mlrt__json *child;    /* ARRAY/OBJECT: first item */
    mlrt__json *next;     /* next sibling */
};

typedef struct mlrt__json_doc {
    mlrt__json *root;
    void *blocks;        /* arena owning every node and string */
} mlrt__json_doc;

/* Parses s[0..n). what: prefix for messages ("safetensors: header"). */
mlrt_status mlrt__json_parse(const uint8_t *s, size_t n, const char *what, mlrt__json_doc *doc, mlrt_error *err);
void mlrt__json_free(mlrt__json_doc *doc);

/* A non-negative integer written without sign, fraction or exponent, that fits in u64. */
bool mlrt__json_u64(const mlrt__json *v, uint64_t *out);
/* Any number as a double (correctly rounded when it has at most 15 significant digits and a decimal
 * exponent within +-22; overflow gives an infinity). */
bool mlrt__json_f64(const mlrt__json *v, double *out);
const mlrt__json *mlrt__json_get(const mlrt__json *obj, const char *key);
const char *mlrt__json_type_name(mlrt__json_type t);

/* codecs/msgpack.h — a strict MessagePack reader that turns one value into JSON text (the metadata of
 * .apr v1 files), and the shortest-decimal float formatting it uses.
 *
 * Every MessagePack type is read: nil, bool, positive/negative fixint, (u)int 8/16/32/64,
 * float 32/64, str (fix, 8, 16, 32), bin (8, 16, 32), array and map (fix, 16, 32). As JSON:
 *   nil -> null, ints -> exact integers, floats -> the shortest decimal that reads back as the same
 *   float32/float64 (NaN and infinities -> null), str -> strings, bin -> arrays of byte values,
 *   arrays -> arrays, maps -> objects (keys in file order).
 * Refused, with the byte offset:
 *   a length beyond the remaining bytes           TRUNCATED
 *   the never-used byte 0xc1                      INVALID_MSGPACK
 *   nesting deeper than MLRT__MAX_META_DEPTH       INVALID_MSGPACK
 *   a str that is not UTF-8                       INVALID_UTF8
 *   a map key that is not a str                   BAD_HEADER (JSON has no other keys)
 *   the same key twice in one map                 DUPLICATE_KEY
 *   ext / fixext values                           UNSUPPORTED (no JSON form; aprender writes none)
 * MessagePack numbers and lengths are big-endian (unlike the rest of an .apr file). */


/* Metadata JSON nests one level inside the info/inspect object, which must stay within
 * MLRT__MAX_JSON_DEPTH for mlrt's own JSON reader. */
#define MLRT__MAX_META_DEPTH (MLRT__MAX_JSON_DEPTH - 1)

/* Converts the value at p[0..n) to JSON appended to out; *used is its length in bytes. Messages
 * start with `what` ("apr: metadata") and give byte offsets as base + offset into p. */
mlrt_status mlrt__msgpack_to_json(const uint8_t *p, size_t n, size_t base, const char *what, mlrt__buf *out,
                                 size_t *used, mlrt_error *err);

/* Appends v as a JSON number: the shortest decimal that reads back as v, as a float64 or (single)
 * as a float32, in JavaScript's Number#toString layout ("0.1", "1e+21", "1.5e-7"; "-0" for -0).
 * NaN and infinities append null. */
void mlrt__buf_number(mlrt__buf *b, double v, bool single);

/* codecs/bincode.h — a bounds-checked reader of bincode 1 (serde's fixed-width little-endian
 * encoding, as aprender writes .apr v1 payloads):
 *   integers  fixed width LE; usize = u64
 *   bool, Option tag  one byte, 0 or 1
 *   enum      u32 variant index, then the variant's fields
 *   Vec<T>, String  u64 count, then the items / UTF-8 bytes
 * Every read checks the bytes that remain first; a count is checked against the bytes it needs
 * before anything is read or allocated from it. Messages: "apr: <type> payload byte N: ...". */


typedef struct mlrt__bincode {
    const uint8_t *p;   /* [n] the payload */
    size_t n, pos;      /* pos: the next byte to read */
    const char *type;   /* the model type's name, for messages ("DecisionTree") */
    mlrt_error *err;
} mlrt__bincode;

mlrt_status mlrt__bc_take(mlrt__bincode *c, size_t k, const char *what, const uint8_t **at);
/* A bool or an Option tag: one byte, 0 or 1. */
mlrt_status mlrt__bc_tag(mlrt__bincode *c, const char *what, bool *v);
mlrt_status mlrt__bc_u64(mlrt__bincode *c, const char *what, uint64_t *v);
mlrt_status mlrt__bc_u32(mlrt__bincode *c, const char *what, uint32_t *v);
mlrt_status mlrt__bc_f32(mlrt__bincode *c, const char *what, float *v);
/* An enum's u32 variant index in 0..count-1. */
mlrt_status mlrt__bc_variant(mlrt__bincode *c, const char *what, uint32_t count, uint32_t *v);
/* An Option<usize>: *some = the tag, *v = the value (0 when None). */
mlrt_status mlrt__bc_opt_u64(mlrt__bincode *c, const char *what, bool *some, uint64_t *v);
/* A Vec<T> of elem-byte items (units: "floats" in messages): its u64 count, checked against the
 * bytes that remain; the items are skipped and *data points at them. */
mlrt_status mlrt__bc_vec(mlrt__bincode *c, const char *what, size_t elem, const char *units, const uint8_t **data, uint64_t *count);
/* A String: valid UTF-8. */
mlrt_status mlrt__bc_string(mlrt__bincode *c, const char *what, const uint8_t **s, uint64_t *len);
/* aprender never writes bytes after the model. */
mlrt_status mlrt__bc_consumed(mlrt__bincode *c);

/* codecs/protobuf.h — a reader of the protobuf wire format, bounded and strict.
 *
 * A cursor walks one message's bytes [p, end). mlrt__pb_next reads the next field's key; then the
 * caller takes its value with the reader for the field's type, or mlrt__pb_skip. A length-delimited
 * value is opened as a child cursor bounded by its parent, one level deeper: nesting beyond
 * MLRT__PB_MAX_DEPTH is refused, as are groups (wire types 3 and 4), overlong varints and field 0. */

#define MLRT__PB_MAX_DEPTH 32

enum { MLRT__PB_VARINT = 0, MLRT__PB_I64 = 1, MLRT__PB_LEN = 2, MLRT__PB_I32 = 5 };

typedef struct mlrt__pb {
    const uint8_t *p, *end;     /* the bytes left in this message */
    const uint8_t *base;        /* the file's first byte, for offsets in messages */
    uint32_t depth;             /* messages around this one */
    const char *what;           /* "onnx": the messages' prefix */
} mlrt__pb;

/* A cursor over a whole file. */
mlrt__pb mlrt__pb_open(const uint8_t *b, size_t n, const char *what);
/* Reads the next key: 1 with *field and *wire set, 0 at the end of the message, or -1 with *err. */
int mlrt__pb_next(mlrt__pb *pb, uint32_t *field, uint32_t *wire, mlrt_error *err);
mlrt_status mlrt__pb_varint(mlrt__pb *pb, uint64_t *v, mlrt_error *err);
/* A length-delimited value: its bytes [*data, *data + *n), within the parent. */
mlrt_status mlrt__pb_bytes(mlrt__pb *pb, const uint8_t **data, size_t *n, mlrt_error *err);
/* A length-delimited value as a child message, one level deeper. */
mlrt_status mlrt__pb_message(mlrt__pb *pb, mlrt__pb *child, mlrt_error *err);
mlrt_status mlrt__pb_fixed32(mlrt__pb *pb, uint32_t *v, mlrt_error *err);
mlrt_status mlrt__pb_fixed64(mlrt__pb *pb, uint64_t *v, mlrt_error *err);
/* Skips a value of the given wire type. */
mlrt_status mlrt__pb_skip(mlrt__pb *pb, uint32_t wire, mlrt_error *err);
/* Checks a field's wire type: `field` names it in the message ("TensorProto.dims"). */
mlrt_status mlrt__pb_expect(const mlrt__pb *pb, uint32_t wire, uint32_t want, const char *field, mlrt_error *err);
/* Where the cursor is in the file, for messages. */
static inline size_t mlrt__pb_offset(const mlrt__pb *pb) { return (size_t)(pb->p - pb->base); }

/* codecs/decompress.h — the checksum and decoders the .apr reader needs, written from the specifications:
 * CRC-32/ISO-HDLC (zlib's crc32), one raw LZ4 block, and one Zstandard frame (RFC 8878).
 *
 * Both decoders write exactly out_len bytes into out, or fail with out's contents unspecified.
 * They allocate nothing proportional to the input: LZ4 allocates nothing, zstd one fixed
 * ~140 KiB state (the 128 KiB block literals buffer and the entropy tables).
 * Status codes:
 *   MLRT_ERR_TRUNCATED       the input ends inside something it declares
 *   MLRT_ERR_SIZE_MISMATCH   the data decodes to more or fewer than out_len bytes,
 *                            or a zstd frame declares a content size other than out_len
 *   MLRT_ERR_BAD_HEADER      a corrupt stream: invalid code, offset, table, size or checksum
 *   MLRT_ERR_UNSUPPORTED     valid zstd that needs a dictionary, or more than one data frame
 *   MLRT_ERR_OUT_OF_MEMORY   zstd could not allocate its state
 *   MLRT_ERR_INVALID_ARGUMENT NULL pointer with a nonzero length
 * Messages start with "lz4: " or "zstd: " and name the byte offset (from the start of `in`)
 * where decoding failed. */


/* zlib crc32(0, p, n): reflected polynomial 0xEDB88320, init and final xor 0xFFFFFFFF.
 * mlrt__crc32_update continues a running crc: update(update(0, a), b) == crc32(a ++ b).
 * The lookup tables are built on the first call (not thread-safe until then). */
uint32_t mlrt__crc32(const uint8_t *p, size_t n);
uint32_t mlrt__crc32_update(uint32_t crc, const uint8_t *p, size_t n);

/* One raw LZ4 block (no frame, no size prefix). The block must end with a literals-only
 * sequence that completes exactly out_len bytes; anything after it is refused. The encoder
 * rules "last 5 bytes are literals" and "last match starts 12 bytes before the end" are
 * NOT enforced: they constrain encoders, and the reference decoder does not need them. */
mlrt_status mlrt__lz4_block_decode(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len,
                                  mlrt_error *err);

/* Exactly one Zstandard frame, optionally preceded and followed by skippable frames (magic
 * 0x184D2A50..5F); a second Zstandard frame is UNSUPPORTED, other trailing bytes BAD_HEADER.
 * A declared Frame_Content_Size must equal out_len; without one the frame must still decode to
 * exactly out_len bytes. The content checksum (low 32 bits of XXH64, seed 0) is verified when
 * present. Dictionary_ID must be absent or 0. Any Window_Size is accepted (the whole frame is
 * decoded into out, so out_len bounds the memory), but back-references beyond it are refused. */
mlrt_status mlrt__zstd_decode(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len,
                             mlrt_error *err);

/* XXH64 of p[0..n) with the given seed (used for the zstd content checksum; exposed for tests). */
uint64_t mlrt__xxh64(const uint8_t *p, size_t n, uint64_t seed);

#endif
