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
#ifndef MLRT__MSGPACK_H
#define MLRT__MSGPACK_H

#include "../internal.h"

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

#endif
