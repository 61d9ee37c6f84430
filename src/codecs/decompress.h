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
#ifndef MLRT__DECOMPRESS_H
#define MLRT__DECOMPRESS_H

#include "../mlrt.h"

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
