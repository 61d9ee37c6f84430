/* codecs/lz4.c — one raw LZ4 block (the LZ4 block format; what lz4_flex::compress_prepend_size
 * writes after its u32 size prefix).
 *
 *   block    = sequence*, the last one literals-only
 *   sequence = token (u8: literal length << 4 | match length - 4)
 *              [literal length extension]  when the nibble is 15: bytes added until one is < 255
 *              literals
 *              offset (u16 LE, 1..65535 back from the current output position)
 *              [match length extension]    as above; the match length is the total + 4
 * A match may overlap its own output (offset < length): it repeats the last `offset` bytes.
 * The decoder stops when the input ends right after a sequence's literals; that must be the
 * moment the output reaches out_len. */
#include "codecs.h"
#include <string.h>

#define FMT "lz4"
#define MIN_MATCH 4

typedef struct lz4_in {
    const uint8_t *p;
    size_t n, pos;        /* input [0, n), next byte at pos */
    size_t op, out_len;   /* output written so far, and its exact final size */
    mlrt_error *err;
} lz4_in;

/* Adds 255-terminated extension bytes to *len. Any total beyond `room` can only overflow the
 * output, so it is refused at once (which also bounds the loop's arithmetic). */
static mlrt_status extend_length(lz4_in *s, size_t *len, size_t room, const char *what) {
    for (;;) {
        if (s->pos >= s->n)
            return mlrt__fail(s->err, MLRT_ERR_TRUNCATED, FMT ": block ends at byte %zu inside a %s length",
                             s->pos, what);
        uint8_t b = s->p[s->pos++];
        *len += b;
        if (*len > room)
            return mlrt__fail(s->err, MLRT_ERR_SIZE_MISMATCH,
                             FMT ": %s length at byte %zu runs past the %zu-byte output (%zu bytes written)", what,
                             s->pos - 1, s->out_len, s->op);
        if (b != 255) return MLRT_OK;
    }
}

/* Copies a match of len bytes from offset bytes back, exactly (no byte past d + len is
 * written); d[-offset..) is already written. Overlapping matches repeat a period of `offset`. */
static void copy_match(uint8_t *d, size_t offset, size_t len) {
    const uint8_t *s = d - offset;
    if (offset >= len) { memcpy(d, s, len); return; }
    if (offset == 1) { memset(d, *s, len); return; }
    /* [s, d) holds one period; each copy doubles what can be copied without overlap */
    size_t span = offset;
    while (len > span) {
        memcpy(d, s, span);
        d += span;
        len -= span;
        span *= 2;
    }
    memcpy(d, s, len);
}

mlrt_status mlrt__lz4_block_decode(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len,
                                  mlrt_error *err) {
    if ((!in && in_len) || (!out && out_len))
        return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, FMT ": NULL buffer with a nonzero length");
    static uint8_t no_output;
    if (!out) out = &no_output;
    if (in_len == 0)
        return mlrt__fail(err, MLRT_ERR_TRUNCATED, FMT ": the block is empty (even an empty block has a token)");
    lz4_in s = {in, in_len, 0, 0, out_len, err};
    mlrt_status st;
    for (;;) {
        if (s.pos >= s.n)
            return mlrt__fail(err, MLRT_ERR_TRUNCATED, FMT ": block ends at byte %zu where a token was expected "
                             "(%zu of %zu bytes written)", s.pos, s.op, out_len);
        size_t token_at = s.pos;
        uint8_t token = in[s.pos++];
        size_t lit = token >> 4;
        if (lit == 15 && (st = extend_length(&s, &lit, out_len - s.op, "literal"))) return st;
        if (lit > s.n - s.pos)
            return mlrt__fail(err, MLRT_ERR_TRUNCATED, FMT ": %zu literals at byte %zu run past the end of the "
                             "%zu-byte block", lit, s.pos, s.n);
        if (lit > out_len - s.op)
            return mlrt__fail(err, MLRT_ERR_SIZE_MISMATCH, FMT ": %zu literals at byte %zu run past the %zu-byte "
                             "output (%zu bytes written)", lit, s.pos, out_len, s.op);
        /* hot path: short literal runs copied as one 16-byte chunk when both sides have room */
        if (lit <= 16 && s.n - s.pos >= 16 && out_len - s.op >= 16) memcpy(out + s.op, in + s.pos, 16);
        else memcpy(out + s.op, in + s.pos, lit);
        s.pos += lit;
        s.op += lit;
        if (s.pos == s.n) {
            if (s.op == out_len) return MLRT_OK;
            return mlrt__fail(err, MLRT_ERR_SIZE_MISMATCH, FMT ": block decodes to %zu bytes, expected %zu", s.op,
                             out_len);
        }
        if (s.op == out_len)
            return mlrt__fail(err, MLRT_ERR_SIZE_MISMATCH, FMT ": block continues at byte %zu after all %zu output "
                             "bytes are written", s.pos, out_len);
        if (s.n - s.pos < 2)
            return mlrt__fail(err, MLRT_ERR_TRUNCATED, FMT ": block ends at byte %zu inside a match offset", s.pos);
        size_t offset = (size_t)in[s.pos] | (size_t)in[s.pos + 1] << 8;
        if (offset == 0)
            return mlrt__fail(err, MLRT_ERR_BAD_HEADER, FMT ": match offset 0 at byte %zu (sequence at byte %zu)",
                             s.pos, token_at);
        if (offset > s.op)
            return mlrt__fail(err, MLRT_ERR_BAD_HEADER, FMT ": match offset %zu at byte %zu reaches before the "
                             "start of the output (%zu bytes written)", offset, s.pos, s.op);
        s.pos += 2;
        size_t len = token & 15;
        if (len == 15 && (st = extend_length(&s, &len, out_len - s.op, "match"))) return st;
        len += MIN_MATCH;
        if (len > out_len - s.op)
            return mlrt__fail(err, MLRT_ERR_SIZE_MISMATCH, FMT ": %zu-byte match of the sequence at byte %zu runs "
                             "past the %zu-byte output (%zu bytes written)", len, token_at, out_len, s.op);
        uint8_t *d = out + s.op;
        if (offset >= 16 && out_len - s.op >= len + 15) {
            /* hot path: whole 16-byte chunks, each reading only bytes written before it */
            memcpy(d, d - offset, 16);
            for (size_t i = 16; i < len; i += 16) memcpy(d + i, d - offset + i, 16);
        } else {
            copy_match(d, offset, len);
        }
        s.op += len;
    }
}
