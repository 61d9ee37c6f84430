/* fuzz_zstd.c — libFuzzer target for mlrt__zstd_decode.
 *
 * Input: 3 bytes LE output length (taken mod 1 MiB + 1, to keep memory sane), then the frame.
 * Checks: only the documented status codes, "zstd: " messages, and a frame that decodes at
 * out_len fails with SIZE_MISMATCH at out_len +- 1 (the frame decodes to exactly one length). */
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 3) return 0;
    size_t out_len = ((size_t)data[0] | (size_t)data[1] << 8 | (size_t)data[2] << 16) % (MAX_OUT + 1);
    const uint8_t *in = data + 3;
    size_t n = size - 3;
    uint8_t *out = malloc(out_len + 1);
    mlrt_error err;
    mlrt_status st = mlrt__zstd_decode(in, n, out, out_len, &err);
    if (st != MLRT_OK) {
        FUZZ_ASSERT(st == MLRT_ERR_TRUNCATED || st == MLRT_ERR_SIZE_MISMATCH || st == MLRT_ERR_BAD_HEADER ||
                        st == MLRT_ERR_UNSUPPORTED || st == MLRT_ERR_OUT_OF_MEMORY,
                    "status %s", mlrt_status_name(st));
        check_refusal(st, &err, "zstd: ");
    } else { /* a frame decodes to exactly one length */
        st = mlrt__zstd_decode(in, n, out, out_len + 1, &err);
        FUZZ_ASSERT(st == MLRT_ERR_SIZE_MISMATCH, "decodes to %zu and %zu bytes", out_len, out_len + 1);
        if (out_len) {
            st = mlrt__zstd_decode(in, n, out, out_len - 1, &err);
            FUZZ_ASSERT(st == MLRT_ERR_SIZE_MISMATCH, "decodes to %zu bytes, then %s at %zu", out_len,
                        mlrt_status_name(st), out_len - 1);
        }
    }
    free(out);
    return 0;
}
