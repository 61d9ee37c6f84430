/* fuzz_lz4.c — libFuzzer target for mlrt__lz4_block_decode.
 *
 * Input: 3 bytes LE output length (taken mod 1 MiB + 1, to keep memory sane), then the block.
 * Checks: only the documented status codes, "lz4: " messages, and a decode that succeeds at
 * out_len fails with SIZE_MISMATCH at out_len +- 1. Then the whole input is compressed by the
 * small greedy LZ4 encoder below and must decode back exactly (overlapping matches, long
 * literal runs and length extensions all come out of it). */
#define _POSIX_C_SOURCE 200809L /* strnlen */
#include "fuzz_common.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_OUT (1u << 20)


/* A refusal: one of the documented codes, and a one-line message naming the decoder. */
static void check_refusal(mlrt_status st, const mlrt_error *e, const char *prefix) {
    FUZZ_ASSERT(e->code == st, "err.code %d but returned %d", (int)e->code, (int)st);
    size_t len = strnlen(e->message, MLRT_ERROR_MESSAGE_MAX);
    FUZZ_ASSERT(len > 0 && len < MLRT_ERROR_MESSAGE_MAX, "message length %zu", len);
    FUZZ_ASSERT(strncmp(e->message, prefix, strlen(prefix)) == 0, "message without \"%s\": %s", prefix, e->message);
    for (size_t i = 0; i < len; i++)
        FUZZ_ASSERT((unsigned char)e->message[i] >= 0x20 && (unsigned char)e->message[i] < 0x7f,
                    "control or non-ASCII byte in message: %s", e->message);
}

static void decode_checked(const uint8_t *in, size_t n, size_t out_len) {
    uint8_t *out = malloc(out_len + 1);
    mlrt_error err;
    mlrt_status st = mlrt__lz4_block_decode(in, n, out, out_len, &err);
    if (st != MLRT_OK) {
        FUZZ_ASSERT(st == MLRT_ERR_TRUNCATED || st == MLRT_ERR_SIZE_MISMATCH || st == MLRT_ERR_BAD_HEADER,
                    "status %s", mlrt_status_name(st));
        check_refusal(st, &err, "lz4: ");
    } else { /* a block decodes to exactly one length */
        st = mlrt__lz4_block_decode(in, n, out, out_len + 1, &err);
        FUZZ_ASSERT(st == MLRT_ERR_SIZE_MISMATCH, "decodes to %zu and %zu bytes", out_len, out_len + 1);
        if (out_len) {
            st = mlrt__lz4_block_decode(in, n, out, out_len - 1, &err);
            FUZZ_ASSERT(st == MLRT_ERR_SIZE_MISMATCH, "decodes to %zu bytes, then %s at %zu", out_len,
                        mlrt_status_name(st), out_len - 1);
        }
    }
    free(out);
}

/* ---- a greedy LZ4 block encoder (test oracle only): 4-byte hash, offsets up to 65535, and the
 * format's end rules (last match starts 12+ bytes before the end, last 5 bytes are literals) */

static size_t put_length(uint8_t *o, size_t rest) { /* rest = length - 15 */
    size_t n = 0;
    for (; rest >= 255; rest -= 255) o[n++] = 255;
    o[n++] = (uint8_t)rest;
    return n;
}

static size_t put_sequence(uint8_t *o, const uint8_t *lit, size_t nlit, size_t offset, size_t mlen) {
    size_t n = 1, ml = mlen ? mlen - 4 : 0;
    o[0] = (uint8_t)((nlit < 15 ? nlit : 15) << 4 | (ml < 15 ? ml : 15));
    if (nlit >= 15) n += put_length(o + n, nlit - 15);
    memcpy(o + n, lit, nlit);
    n += nlit;
    if (!mlen) return n;
    o[n++] = (uint8_t)offset;
    o[n++] = (uint8_t)(offset >> 8);
    if (ml >= 15) n += put_length(o + n, ml - 15);
    return n;
}

static uint32_t rd32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }

static size_t toy_compress(const uint8_t *src, size_t n, uint8_t *dst) {
    static uint32_t table[1 << 12];
    memset(table, 0, sizeof table);
    size_t ip = 0, anchor = 0, op = 0;
    while (n >= 13 && ip < n - 12) {
        uint32_t h = (rd32(src + ip) * 2654435761u) >> 20, cand = table[h];
        table[h] = (uint32_t)ip + 1;
        if (cand && ip - (cand - 1) <= 65535 && rd32(src + cand - 1) == rd32(src + ip)) {
            size_t ref = cand - 1, len = 4;
            while (ip + len < n - 5 && src[ref + len] == src[ip + len]) len++;
            op += put_sequence(dst + op, src + anchor, ip - anchor, ip - ref, len);
            ip += len;
            anchor = ip;
        } else {
            ip++;
        }
    }
    return op + put_sequence(dst + op, src + anchor, n - anchor, 0, 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 3) return 0;
    size_t out_len = ((size_t)data[0] | (size_t)data[1] << 8 | (size_t)data[2] << 16) % (MAX_OUT + 1);
    decode_checked(data + 3, size - 3, out_len);

    uint8_t *block = malloc(size + size / 255 + 16), *back = malloc(size);
    size_t n = toy_compress(data, size, block);
    mlrt_error err;
    mlrt_status st = mlrt__lz4_block_decode(block, n, back, size, &err);
    FUZZ_ASSERT(st == MLRT_OK, "round trip of %zu bytes: %s", size, err.message);
    FUZZ_ASSERT(memcmp(back, data, size) == 0, "round trip of %zu bytes decodes to different bytes", size);
    free(block);
    free(back);
    return 0;
}
