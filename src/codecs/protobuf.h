/* codecs/protobuf.h — a reader of the protobuf wire format, bounded and strict.
 *
 * A cursor walks one message's bytes [p, end). mlrt__pb_next reads the next field's key; then the
 * caller takes its value with the reader for the field's type, or mlrt__pb_skip. A length-delimited
 * value is opened as a child cursor bounded by its parent, one level deeper: nesting beyond
 * MLRT__PB_MAX_DEPTH is refused, as are groups (wire types 3 and 4), overlong varints and field 0. */
#ifndef MLRT__PROTOBUF_H
#define MLRT__PROTOBUF_H
#include "../internal.h"

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

#endif
