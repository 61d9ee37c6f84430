/* test_decompress.c — CRC-32, LZ4 block and Zstandard frame decoders (src/decompress.h).
 *
 *   test_decompress [VECTOR_DIR [NAME]]   hand-made cases + the vectors gen.py wrote (default
 *                                         build/decompress); NAME: only tests whose name contains it
 *   test_decompress --bench [VECTOR_DIR]  decode speed on the 1.6 MB float payload (build with -O2)
 *
 * Hand-made streams are built here byte by byte from the formats; the generated vectors come
 * from python3-lz4, python3-zstandard and the zstd CLI (tests/gen/decompress.py). The C tests'
 * harness (harness.h). */
#include "harness.h"
#include "codecs/codecs.h"
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TEST_TIMEOUT_S 600 /* the vector sweep under ASan takes about a minute */

static const char *g_vector_dir = "build/decompress";

/* ---------------------------------------------------------------- helpers */

typedef struct bytes {
    uint8_t d[4096];
    size_t n;
} bytes;

static void put(bytes *b, const void *p, size_t n) { memcpy(b->d + b->n, p, n); b->n += n; }
static void put8(bytes *b, unsigned v) { b->d[b->n++] = (uint8_t)v; }
static void putn(bytes *b, unsigned v, size_t n) { for (size_t i = 0; i < n; i++) put8(b, (v >> (8 * i)) & 0xff); }
static void put_str(bytes *b, const char *s) { put(b, s, strlen(s)); }
static void block_header(bytes *b, int last, int type, size_t size) {
    putn(b, (unsigned)(last | type << 1 | size << 3), 3);
}
static void zstd_magic(bytes *b) { putn(b, 0xFD2FB528u, 4); }

typedef mlrt_status (*decoder)(const uint8_t *, size_t, uint8_t *, size_t, mlrt_error *);

/* Decodes into a fresh buffer of exactly out_len bytes (so ASan sees any overrun). */
static mlrt_status run(decoder f, const uint8_t *in, size_t n, size_t out_len, uint8_t **out, mlrt_error *err) {
    uint8_t *in_copy = malloc(n ? n : 1), *o = malloc(out_len ? out_len : 1);
    if (n) memcpy(in_copy, in, n);
    mlrt_status st = f(in_copy, n, o, out_len, err);
    free(in_copy);
    if (out) *out = o;
    else free(o);
    return st;
}

/* The decoder must give exactly `want`. */
static void expect_ok_at(const char *file, int line, decoder f, const char *name, const uint8_t *in, size_t n,
                         const void *want, size_t want_len) {
    mlrt_error err = {0};
    uint8_t *o;
    mlrt_status st = run(f, in, n, want_len, &o, &err);
    check_at(st == MLRT_OK && memcmp(o, want, want_len) == 0, file, line, "%s: status %s (%s), output %s", name,
             mlrt_status_name(st), err.message, st ? "-" : memcmp(o, want, want_len) ? "differs" : "equal");
    free(o);
}

/* The decoder must refuse with `want` and a message starting with `prefix`. */
static void expect_err_at(const char *file, int line, decoder f, const char *name, const uint8_t *in, size_t n,
                          size_t out_len, mlrt_status want, const char *prefix) {
    mlrt_error err = {0};
    mlrt_status st = run(f, in, n, out_len, NULL, &err);
    check_at(st == want && strncmp(err.message, prefix, strlen(prefix)) == 0, file, line, "%s: got %s (%s), want %s",
             name, mlrt_status_name(st), err.message, mlrt_status_name(want));
}

#define EXPECT_OK(...) expect_ok_at(__FILE__, __LINE__, __VA_ARGS__)
#define EXPECT_ERR(...) expect_err_at(__FILE__, __LINE__, __VA_ARGS__)

static uint8_t *read_file(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc(len > 0 ? (size_t)len : 1);
    *n = fread(p, 1, (size_t)len, f);
    fclose(f);
    return p;
}

/* ---------------------------------------------------------------- CRC-32, XXH64 */

static uint32_t crc_bitwise(const uint8_t *p, size_t n) {
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = c & 1 ? (c >> 1) ^ 0xEDB88320u : c >> 1;
    }
    return ~c;
}

static void test_crc32(void) {
    CHECK_MSG(mlrt__crc32((const uint8_t *)"123456789", 9) == 0xCBF43926u, "crc32(123456789) = %08x",
          mlrt__crc32((const uint8_t *)"123456789", 9));
    CHECK_MSG(mlrt__crc32(NULL, 0) == 0, "crc32 of nothing is 0");
    CHECK_MSG(mlrt__crc32((const uint8_t *)"a", 1) == 0xE8B7BE43u, "crc32(a)");
    size_t n = 100003;
    uint8_t *p = malloc(n);
    uint32_t x = 12345;
    for (size_t i = 0; i < n; i++) p[i] = (uint8_t)((x = x * 1103515245u + 12345u) >> 24);
    uint32_t one = mlrt__crc32(p, n);
    CHECK_MSG(one == crc_bitwise(p, n), "crc32 slicing-by-8 matches the bitwise definition");
    int ok = 1;
    for (size_t cut = 0; cut <= 40; cut++) /* every alignment of the 8-byte steps */
        ok &= mlrt__crc32_update(mlrt__crc32(p, cut), p + cut, n - cut) == one;
    uint32_t c = 0;
    for (size_t i = 0; i < n; i += 777) c = mlrt__crc32_update(c, p + i, n - i < 777 ? n - i : 777);
    CHECK_MSG(ok && c == one, "crc32 streaming equals one-shot");
    for (size_t len = 0; len < 64; len++) ok &= mlrt__crc32(p + 3, len) == crc_bitwise(p + 3, len);
    CHECK_MSG(ok, "crc32 short lengths match the bitwise definition");
    free(p);
}

static void test_xxh64(void) {
    CHECK_MSG(mlrt__xxh64(NULL, 0, 0) == 0xEF46DB3751D8E999ull, "xxh64 of nothing");
}

/* ---------------------------------------------------------------- LZ4, hand-made */

static decoder lz4 = mlrt__lz4_block_decode;
static decoder zstd = mlrt__zstd_decode;

static void test_lz4_hand(void) {
    static const uint8_t hello[] = {0x50, 'h', 'e', 'l', 'l', 'o'};
    EXPECT_OK(lz4, "lz4 literals only", hello, sizeof hello, "hello", 5);
    static const uint8_t empty[] = {0x00};
    EXPECT_OK(lz4, "lz4 empty output", empty, 1, "", 0);
    /* "ab" + match (offset 2, length 10): overlapping, repeats "ab"; ends with an empty literal run,
     * so the "last 5 bytes are literals" encoder rule is deliberately not enforced */
    static const uint8_t overlap[] = {0x26, 'a', 'b', 0x02, 0x00, 0x00};
    EXPECT_OK(lz4, "lz4 overlapping match", overlap, sizeof overlap, "abababababab", 12);
    /* 'x' + match (offset 1, length 4 + 15 + 255 + 26 = 300) + 'y' */
    static const uint8_t run1[] = {0x1F, 'x', 0x01, 0x00, 0xFF, 0x1A, 0x10, 'y'};
    uint8_t want[400];
    memset(want, 'x', 301);
    want[301] = 'y';
    EXPECT_OK(lz4, "lz4 offset-1 run with 255-extension", run1, sizeof run1, want, 302);
    /* a match length of exactly 19: the nibble 15 then an extension byte 0 */
    static const uint8_t ml19[] = {0x2F, 'a', 'b', 0x02, 0x00, 0x00, 0x00};
    for (int i = 0; i < 21; i++) want[i] = "ab"[i & 1];
    EXPECT_OK(lz4, "lz4 match length 19", ml19, sizeof ml19, want, 21);
    /* 280 literals: 15 + 255 + 10; and exactly 15: 15 + 0 */
    bytes b = {.n = 0};
    put8(&b, 0xF0); put8(&b, 0xFF); put8(&b, 0x0A);
    for (int i = 0; i < 280; i++) { want[i] = (uint8_t)(i * 7); put8(&b, want[i]); }
    EXPECT_OK(lz4, "lz4 literal length 280", b.d, b.n, want, 280);
    b.n = 0;
    put8(&b, 0xF0); put8(&b, 0x00); put(&b, want, 15);
    EXPECT_OK(lz4, "lz4 literal length 15", b.d, b.n, want, 15);
    /* a match whose offset is 16+ (the chunked copy) right up to the output's end */
    b.n = 0;
    put8(&b, 0xF0); put8(&b, 5); for (int i = 0; i < 20; i++) put8(&b, 'A' + i);
    put8(&b, 20); put8(&b, 0); put8(&b, 0x00);
    for (int i = 0; i < 24; i++) want[i] = (uint8_t)('A' + i % 20);
    EXPECT_OK(lz4, "lz4 far match", b.d, b.n, want, 24);

    /* malformed */
    EXPECT_ERR(lz4, "lz4 empty input", NULL, 0, 0, MLRT_ERR_TRUNCATED, "lz4: ");
    static const uint8_t off0[] = {0x10, 'a', 0x00, 0x00, 0x00};
    EXPECT_ERR(lz4, "lz4 offset 0", off0, sizeof off0, 5, MLRT_ERR_BAD_HEADER, "lz4: match offset 0 at byte 2");
    static const uint8_t off2[] = {0x10, 'a', 0x02, 0x00, 0x00};
    EXPECT_ERR(lz4, "lz4 offset before the output", off2, sizeof off2, 5, MLRT_ERR_BAD_HEADER, "lz4: match offset 2");
    EXPECT_ERR(lz4, "lz4 literals overflow", hello, sizeof hello, 4, MLRT_ERR_SIZE_MISMATCH, "lz4: 5 literals");
    EXPECT_ERR(lz4, "lz4 match overflow", overlap, sizeof overlap, 11, MLRT_ERR_SIZE_MISMATCH, "lz4: ");
    EXPECT_ERR(lz4, "lz4 output too short", hello, sizeof hello, 6, MLRT_ERR_SIZE_MISMATCH,
               "lz4: block decodes to 5 bytes, expected 6");
    static const uint8_t trailing[] = {0x50, 'h', 'e', 'l', 'l', 'o', 0x00};
    EXPECT_ERR(lz4, "lz4 bytes after a complete output", trailing, sizeof trailing, 5, MLRT_ERR_SIZE_MISMATCH,
               "lz4: block continues at byte 6");
    static const uint8_t cut_off[] = {0x26, 'a', 'b', 0x02};
    EXPECT_ERR(lz4, "lz4 ends in an offset", cut_off, sizeof cut_off, 12, MLRT_ERR_TRUNCATED, "lz4: ");
    static const uint8_t cut_ext[] = {0xF0, 0xFF};
    EXPECT_ERR(lz4, "lz4 ends in a length extension", cut_ext, sizeof cut_ext, 1000, MLRT_ERR_TRUNCATED, "lz4: ");
    b.n = 0;
    put8(&b, 0x1F); put8(&b, 'x'); put8(&b, 1); put8(&b, 0);
    for (int i = 0; i < 2000; i++) put8(&b, 0xFF);
    EXPECT_ERR(lz4, "lz4 length extension beyond the output", b.d, b.n, 1000, MLRT_ERR_SIZE_MISMATCH, "lz4: match");
    int ok = 1;
    for (size_t cut = 0; cut < sizeof run1; cut++) {
        mlrt_error err;
        mlrt_status st = run(lz4, run1, cut, 302, NULL, &err);
        ok &= st == MLRT_ERR_TRUNCATED || st == MLRT_ERR_SIZE_MISMATCH;
    }
    CHECK_MSG(ok, "lz4 every truncation of a hand-made block is refused");
}

/* ---------------------------------------------------------------- zstd, hand-made */

/* magic + single-segment header with a 1-byte content size */
static void frame_single(bytes *b, unsigned fcs, int checksum) {
    b->n = 0;
    zstd_magic(b);
    put8(b, 0x20 | (checksum ? 4 : 0));
    put8(b, fcs);
}

/* magic + window descriptor 0 (1 KiB window), no content size */
static void frame_window(bytes *b) {
    b->n = 0;
    zstd_magic(b);
    put8(b, 0x00);
    put8(b, 0x00);
}

/* A compressed block: `nlit` raw literals, then `nseq` sequences whose three codes are RLE
 * (modes byte 0x54) and whose bitstream is `bs`. */
static void rle_seq_block(bytes *b, int last, const char *lits, size_t nlit, unsigned nseq, uint8_t llc, uint8_t ofc,
                          uint8_t mlc, const uint8_t *bs, size_t nbs) {
    block_header(b, last, 2, 1 + nlit + 5 + nbs);
    put8(b, (unsigned)nlit << 3);
    put(b, lits, nlit);
    put8(b, nseq);
    put8(b, 0x54);
    put8(b, llc); put8(b, ofc); put8(b, mlc);
    put(b, bs, nbs);
}

static void test_zstd_frames(void) {
    bytes b;
    frame_single(&b, 5, 0);
    block_header(&b, 1, 0, 5);
    put_str(&b, "hello");
    EXPECT_OK(zstd, "zstd raw block", b.d, b.n, "hello", 5);
    EXPECT_ERR(zstd, "zstd content size != out_len", b.d, b.n, 6, MLRT_ERR_SIZE_MISMATCH,
               "zstd: frame at byte 0 declares 5 content bytes, expected 6");
    EXPECT_ERR(zstd, "zstd trailing garbage", b.d, b.n + 1, 5, MLRT_ERR_BAD_HEADER, "zstd: 1 unexpected bytes");

    bytes two = b; /* a second frame after the first */
    put(&two, b.d, b.n);
    EXPECT_ERR(zstd, "zstd two frames", two.d, two.n, 5, MLRT_ERR_UNSUPPORTED, "zstd: a second frame at byte 14");

    frame_single(&b, 10, 0);
    block_header(&b, 1, 1, 10);
    put8(&b, 'z');
    EXPECT_OK(zstd, "zstd RLE block", b.d, b.n, "zzzzzzzzzz", 10);

    bytes s = {.n = 0}; /* skippable frames before and after */
    putn(&s, 0x184D2A5Du, 4); putn(&s, 3, 4); put_str(&s, "abc");
    put(&s, b.d, b.n);
    putn(&s, 0x184D2A50u, 4); putn(&s, 0, 4);
    EXPECT_OK(zstd, "zstd skippable frames around the frame", s.d, s.n, "zzzzzzzzzz", 10);
    EXPECT_ERR(zstd, "zstd only a skippable frame", s.d, 11, 0, MLRT_ERR_TRUNCATED, "zstd: input ends at byte 11");

    frame_single(&b, 0, 1); /* empty content, checksum = low 32 bits of XXH64("") */
    block_header(&b, 1, 0, 0);
    putn(&b, 0x51D8E999u, 4);
    EXPECT_OK(zstd, "zstd empty content with checksum", b.d, b.n, "", 0);
    b.d[b.n - 1] ^= 1;
    EXPECT_ERR(zstd, "zstd wrong checksum", b.d, b.n, 0, MLRT_ERR_BAD_HEADER, "zstd: content checksum at byte 9");

    /* Frame_Content_Size in 2 (+256), 4 and 8 bytes, with a window descriptor */
    static uint8_t big[300];
    for (int i = 0; i < 300; i++) big[i] = (uint8_t)(i * 31 + 7);
    const unsigned fcs_flag[3] = {1, 2, 3}, fcs_len[3] = {2, 4, 8};
    for (int k = 0; k < 3; k++) {
        b.n = 0;
        zstd_magic(&b);
        put8(&b, fcs_flag[k] << 6);
        put8(&b, 0x00);
        unsigned v = fcs_len[k] == 2 ? 300 - 256 : 300;
        putn(&b, v, fcs_len[k] < 4 ? fcs_len[k] : 4);
        if (fcs_len[k] == 8) putn(&b, 0, 4);
        block_header(&b, 1, 0, 300);
        put(&b, big, 300);
        char name[64];
        snprintf(name, sizeof name, "zstd %u-byte content size", fcs_len[k]);
        EXPECT_OK(zstd, name, b.d, b.n, big, 300);
    }
    /* dictionary id: 0 is "none"; anything else is unsupported */
    b.n = 0;
    zstd_magic(&b);
    put8(&b, 0x21); put8(&b, 7); put8(&b, 3);
    block_header(&b, 1, 0, 3); put_str(&b, "abc");
    EXPECT_ERR(zstd, "zstd dictionary id", b.d, b.n, 3, MLRT_ERR_UNSUPPORTED,
               "zstd: frame at byte 0 needs dictionary 7");
    b.d[5] = 0;
    EXPECT_OK(zstd, "zstd dictionary id 0", b.d, b.n, "abc", 3);
    b.d[4] = 0x29; /* reserved bit */
    EXPECT_ERR(zstd, "zstd reserved bit", b.d, b.n, 3, MLRT_ERR_BAD_HEADER, "zstd: reserved bit");
    frame_single(&b, 3, 0);
    block_header(&b, 1, 3, 3); put_str(&b, "abc");
    EXPECT_ERR(zstd, "zstd reserved block type", b.d, b.n, 3, MLRT_ERR_BAD_HEADER, "zstd: reserved block type");
    frame_single(&b, 3, 0);
    block_header(&b, 1, 0, 4); put_str(&b, "abcd");
    EXPECT_ERR(zstd, "zstd raw block above the window", b.d, b.n, 3, MLRT_ERR_BAD_HEADER, "zstd: block 1 at byte 6");
    static const uint8_t notzstd[] = {0x28, 0xB5, 0x2F, 0xFE, 0, 0};
    EXPECT_ERR(zstd, "zstd bad magic", notzstd, sizeof notzstd, 0, MLRT_ERR_BAD_HEADER, "zstd: no frame magic");
    EXPECT_ERR(zstd, "zstd empty input", NULL, 0, 0, MLRT_ERR_TRUNCATED, "zstd: input ends at byte 0");
    frame_window(&b);
    block_header(&b, 0, 0, 2); put_str(&b, "ab");
    EXPECT_ERR(zstd, "zstd missing last block", b.d, b.n, 2, MLRT_ERR_TRUNCATED, "zstd: input ends at byte 11");
    block_header(&b, 1, 0, 1); put_str(&b, "c");
    EXPECT_ERR(zstd, "zstd frame shorter than out_len", b.d, b.n, 4, MLRT_ERR_SIZE_MISMATCH,
               "zstd: frame decodes to 3 bytes, expected 4");
    EXPECT_ERR(zstd, "zstd frame longer than out_len", b.d, b.n, 2, MLRT_ERR_SIZE_MISMATCH,
               "zstd: frame decodes to more than 2 bytes");
}

static void test_zstd_huffman(void) {
    /* RFC 8878's example tree: weights 4 3 2 0 1 (direct, 4 bits each) and the implied 1 for literal 5,
     * so the codes are 0: 1, 1: 01, 2: 001, 4: 0000, 5: 0001. "0145" is then the 2-byte stream
     * 0x01 0x0D (the RFC's own sample stream, 0x10 0x0D, swaps the codes of 4 and 5 against its
     * code table; the table's rule is what libzstd does). Then a treeless block reuses the table. */
    bytes b;
    frame_window(&b);
    block_header(&b, 0, 2, 10);
    put8(&b, 0x42); put8(&b, 0x80); put8(&b, 0x01);     /* Huffman, 1 stream, regen 4, size 6 */
    put8(&b, 0x84); put8(&b, 0x43); put8(&b, 0x20); put8(&b, 0x10);
    put8(&b, 0x01); put8(&b, 0x0D);
    put8(&b, 0x00);                                      /* no sequences */
    block_header(&b, 1, 2, 6);
    put8(&b, 0x43); put8(&b, 0x80); put8(&b, 0x00);     /* treeless, regen 4, size 2 */
    put8(&b, 0x01); put8(&b, 0x0D);
    put8(&b, 0x00);
    static const uint8_t want[8] = {0, 1, 4, 5, 0, 1, 4, 5};
    EXPECT_OK(zstd, "zstd Huffman literals (RFC example) and treeless reuse", b.d, b.n, want, 8);

    bytes c = b;
    c.d[4] = 0x20; c.d[5] = 8; /* single segment, window = content size 8 < the 10-byte block */
    EXPECT_ERR(zstd, "zstd compressed block above Block_Maximum_Size", c.d, c.n, 8, MLRT_ERR_BAD_HEADER,
               "zstd: block 1 at byte 6 has size 10");
    c = b;
    c.d[17] = 0x1B; /* the stream now has 4 bits left over */
    EXPECT_ERR(zstd, "zstd Huffman stream not consumed exactly", c.d, c.n, 8, MLRT_ERR_BAD_HEADER,
               "zstd: Huffman stream not consumed exactly");
    c = b;
    c.d[12] = 0x81; c.d[13] = 0x31; /* weights 3, 1: 4 + 1 = 5 does not complete to a power of two */
    EXPECT_ERR(zstd, "zstd Huffman weights not completing", c.d, c.n, 8, MLRT_ERR_BAD_HEADER,
               "zstd: Huffman weights do not complete");
    c = b;
    c.d[13] = 0xC3; /* weight 12 */
    EXPECT_ERR(zstd, "zstd Huffman weight above 11", c.d, c.n, 8, MLRT_ERR_BAD_HEADER, "zstd: Huffman weight above 11");

    frame_window(&b);
    block_header(&b, 1, 2, 6);
    put8(&b, 0x43); put8(&b, 0x80); put8(&b, 0x00);
    put8(&b, 0x10); put8(&b, 0x0D); put8(&b, 0x00);
    EXPECT_ERR(zstd, "zstd treeless literals first", b.d, b.n, 4, MLRT_ERR_BAD_HEADER, "zstd: treeless literals");
}

static void test_zstd_sequences(void) {
    bytes b;
    /* 'a', then offset code 2 with bits 00 -> Offset_Value 4 -> offset 1, match length 3 */
    static const uint8_t bs_of4[] = {0x04};
    frame_window(&b);
    rle_seq_block(&b, 1, "a", 1, 1, 1, 2, 0, bs_of4, 1);
    EXPECT_OK(zstd, "zstd RLE-mode sequence", b.d, b.n, "aaaa", 4);
    /* offset code 3 with bits 000 -> offset 5, before the frame's start */
    static const uint8_t bs_of8[] = {0x08};
    frame_window(&b);
    rle_seq_block(&b, 1, "a", 1, 1, 1, 3, 0, bs_of8, 1);
    EXPECT_ERR(zstd, "zstd offset before the frame", b.d, b.n, 4, MLRT_ERR_BAD_HEADER, "zstd: sequence 0 of block 1");
    /* two sequences, offset code 0 (repeat 1 = 1) each: "x"+"xxx", "y"+"yyy"; no bits at all */
    static const uint8_t bs_none[] = {0x01};
    frame_window(&b);
    rle_seq_block(&b, 1, "xy", 2, 2, 1, 0, 0, bs_none, 1);
    EXPECT_OK(zstd, "zstd repeat offset 1 across sequences", b.d, b.n, "xxxxyyyy", 8);
    /* literal length 0 shifts the repeat offsets: Offset_Value 1 -> repeat 2 (= 4) */
    frame_window(&b);
    block_header(&b, 0, 0, 4); put_str(&b, "abcd");
    rle_seq_block(&b, 0, "", 0, 1, 0, 0, 0, bs_none, 1); /* offset 4: "abc"; reps (4, 1, 8) */
    rle_seq_block(&b, 1, "", 0, 1, 0, 0, 0, bs_none, 1); /* repeat 2 = 1: "ccc" */
    EXPECT_OK(zstd, "zstd repeat offsets with literal length 0", b.d, b.n, "abcdabcccc", 10);
    /* Offset_Value 3 with literal length 0 -> repeat 1 - 1 */
    static const uint8_t bs_of7[] = {0x07}, bs_ov3[] = {0x03}, bs_ov2[] = {0x02};
    frame_window(&b);
    block_header(&b, 0, 0, 8); put_str(&b, "abcdefgh");
    rle_seq_block(&b, 0, "", 0, 1, 0, 2, 0, bs_of7, 1);  /* offset 4: "efg"; reps (4, 1, 4) */
    rle_seq_block(&b, 1, "", 0, 1, 0, 1, 0, bs_ov3, 1);  /* repeat 1 - 1 = 3: "efg" */
    EXPECT_OK(zstd, "zstd repeat offset 1 minus 1", b.d, b.n, "abcdefghefgefg", 14);
    frame_window(&b);
    block_header(&b, 0, 0, 4); put_str(&b, "abcd");
    rle_seq_block(&b, 1, "", 0, 1, 0, 1, 0, bs_ov2, 1);  /* repeat 3 = 8 > 4 bytes decoded */
    EXPECT_ERR(zstd, "zstd repeat offset beyond the output", b.d, b.n, 7, MLRT_ERR_BAD_HEADER, "zstd: sequence 0");
    frame_window(&b);
    rle_seq_block(&b, 1, "", 0, 1, 0, 1, 0, bs_ov3, 1);  /* repeat 1 - 1 = 0 */
    EXPECT_ERR(zstd, "zstd offset 0", b.d, b.n, 3, MLRT_ERR_BAD_HEADER, "zstd: sequence 0 of block 1");
    frame_window(&b);
    rle_seq_block(&b, 1, "a", 1, 1, 1, 2, 0, bs_none, 1); /* needs 2 bits, stream has none */
    EXPECT_ERR(zstd, "zstd sequences bitstream overread", b.d, b.n, 4, MLRT_ERR_BAD_HEADER, "zstd: ");
    static const uint8_t bs_extra[] = {0x13};
    frame_window(&b);
    rle_seq_block(&b, 1, "a", 1, 1, 1, 2, 0, bs_extra, 1); /* two bits left over */
    EXPECT_ERR(zstd, "zstd sequences bitstream left over", b.d, b.n, 4, MLRT_ERR_BAD_HEADER,
               "zstd: sequences bitstream not consumed exactly");
    frame_window(&b);
    rle_seq_block(&b, 1, "a", 1, 1, 36, 2, 0, bs_of4, 1);
    EXPECT_ERR(zstd, "zstd RLE literal length code 36", b.d, b.n, 4, MLRT_ERR_BAD_HEADER,
               "zstd: RLE literal lengths code 36");
    frame_window(&b);
    rle_seq_block(&b, 1, "a", 1, 1, 1, 2, 0, bs_of4, 1);
    b.d[b.n - 5] = 0xC0 | 0x14; /* literal lengths: repeat mode, nothing to repeat */
    EXPECT_ERR(zstd, "zstd repeat mode first", b.d, b.n, 4, MLRT_ERR_BAD_HEADER, "zstd: literal lengths table");
    b.d[b.n - 5] = 0x55;
    EXPECT_ERR(zstd, "zstd reserved mode bits", b.d, b.n, 4, MLRT_ERR_BAD_HEADER, "zstd: reserved bits");
    frame_window(&b);
    block_header(&b, 1, 2, 3);
    put8(&b, 1 << 3); put8(&b, 'a'); put8(&b, 0x00);
    EXPECT_OK(zstd, "zstd compressed block with no sequences", b.d, b.n, "a", 1);
    b.d[b.n - 6] = (b.d[b.n - 6] & 7) | 4 << 3;
    put8(&b, 0x00);
    EXPECT_ERR(zstd, "zstd bytes after an empty sequences section", b.d, b.n, 1, MLRT_ERR_BAD_HEADER,
               "zstd: bytes after a sequences section");

    /* a 1 KiB window: offset 1024 reaches, 1025 does not */
    static const uint8_t bs_1024[] = {0x03, 0x04}, bs_1025[] = {0x04, 0x04};
    static uint8_t want[1027];
    memset(want, 'a', sizeof want);
    frame_window(&b);
    block_header(&b, 0, 1, 1024); put8(&b, 'a');
    size_t head = b.n;
    rle_seq_block(&b, 1, "", 0, 1, 0, 10, 0, bs_1024, 2);
    EXPECT_OK(zstd, "zstd offset equal to the window", b.d, b.n, want, 1027);
    b.n = head;
    rle_seq_block(&b, 1, "", 0, 1, 0, 10, 0, bs_1025, 2);
    EXPECT_ERR(zstd, "zstd offset beyond the window", b.d, b.n, 1027, MLRT_ERR_BAD_HEADER,
               "zstd: sequence 0 of block 2 (bitstream at byte 19) has offset 1025");
}

/* ---------------------------------------------------------------- generated vectors */

typedef struct vec_stats {
    int files, ok, sizes, truncations, flips;
} vec_stats;

static void vector(const char *codec, const char *cpath, const char *opath, vec_stats *vs) {
    size_t cn, on;
    uint8_t *comp = read_file(cpath, &cn), *orig = read_file(opath, &on);
    if (!comp || !orig) {
        CHECK_MSG(0, "cannot read %s or %s", cpath, opath);
        free(comp);
        free(orig);
        return;
    }
    int is_lz4 = strcmp(codec, "lz4") == 0;
    decoder f = is_lz4 ? lz4 : zstd;
    const uint8_t *in = comp;
    size_t n = cn;
    if (is_lz4) { /* u32 LE size prefix, as lz4_flex::compress_prepend_size */
        CHECK_MSG(cn >= 4 && (size_t)(comp[0] | comp[1] << 8 | comp[2] << 16 | (uint32_t)comp[3] << 24) == on,
              "%s: size prefix", cpath);
        in += 4;
        n -= 4;
    }
    vs->files++;
    mlrt_error err = {0};
    uint8_t *o;
    mlrt_status st = run(f, in, n, on, &o, &err);
    int equal = st == MLRT_OK && memcmp(o, orig, on) == 0;
    free(o);
    CHECK_MSG(equal, "%s: status %s (%s), output %s", cpath, mlrt_status_name(st), err.message,
          equal ? "equal" : "differs");
    vs->ok += equal;

    /* wrong out_len either way */
    mlrt_status lo = on ? run(f, in, n, on - 1, NULL, &err) : MLRT_ERR_SIZE_MISMATCH;
    mlrt_status hi = run(f, in, n, on + 1, NULL, &err);
    CHECK_MSG(lo == MLRT_ERR_SIZE_MISMATCH && hi == MLRT_ERR_SIZE_MISMATCH, "%s: out_len +-1 gave %s / %s", cpath,
          mlrt_status_name(lo), mlrt_status_name(hi));
    vs->sizes++;

    /* truncations: all of them for small inputs, a spread for big ones */
    size_t step = n <= 3000 ? 1 : on > 100000 ? n / 13 + 1 : n / 97 + 1, bad = 0, tried = 0;
    for (size_t cut = 0; cut < n; cut += step) {
        st = run(f, in, cut, on, NULL, &err);
        int good = is_lz4 ? st == MLRT_ERR_TRUNCATED || st == MLRT_ERR_SIZE_MISMATCH : st == MLRT_ERR_TRUNCATED;
        if (!good && !bad++)
            fprintf(stderr, "  %s: truncated to %zu bytes gave %s (%s)\n", cpath, cut, mlrt_status_name(st),
                    err.message);
        tried++;
    }
    CHECK_MSG(bad == 0, "%s: %zu of %zu truncations not refused as truncated", cpath, bad, tried);
    vs->truncations += (int)tried;

    /* flipped bytes: never a crash; with a checksum, never wrong output */
    int has_checksum = !is_lz4 && n >= 5 && (in[4] & 4);
    uint8_t *mut = malloc(n ? n : 1);
    size_t fstep = n <= 600 ? 1 : on > 100000 ? n / 10 + 1 : n / 150 + 1, wrong = 0;
    for (size_t pos = 0; pos < n; pos += fstep) {
        for (int m = 0; m < 2; m++) {
            memcpy(mut, in, n);
            mut[pos] ^= m ? 0xFF : (uint8_t)(1u << (pos % 8));
            st = run(f, mut, n, on, &o, &err);
            if (st == MLRT_OK && has_checksum && memcmp(o, orig, on) != 0) wrong++;
            free(o);
            vs->flips++;
        }
    }
    CHECK_MSG(wrong == 0, "%s: %zu corruptions decoded to wrong output despite the checksum", cpath, wrong);
    free(mut);
    free(comp);
    free(orig);
}

static void test_vectors(const char *only) {
    char path[1024];
    snprintf(path, sizeof path, "%s/manifest.txt", g_vector_dir);
    FILE *m = fopen(path, "r");
    if (!m) {
        CHECK_MSG(0, "no %s: run tests/gen/decompress.py first", path);
        return;
    }
    vec_stats vs = {0};
    char codec[16], cname[256], oname[256], cpath[1024], opath[1024];
    while (fscanf(m, "%15s %255s %255s", codec, cname, oname) == 3) {
        if (strcmp(codec, only) != 0) continue;
        snprintf(cpath, sizeof cpath, "%s/%s", g_vector_dir, cname);
        snprintf(opath, sizeof opath, "%s/%s", g_vector_dir, oname);
        vector(codec, cpath, opath, &vs);
    }
    fclose(m);
    printf("     %s: %d vectors, %d decoded exactly, %d wrong-length checks, %d truncations, %d corruptions\n",
           only, vs.files, vs.ok, vs.sizes, vs.truncations, vs.flips);
    CHECK_MSG(vs.files >= 20, "expected 20 or more %s vectors, found %d", only, vs.files);
}

/* ---------------------------------------------------------------- speed */

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void bench_one(const char *dir, const char *file, int is_lz4) {
    char cpath[1024], opath[1024];
    snprintf(cpath, sizeof cpath, "%s/%s", dir, file);
    snprintf(opath, sizeof opath, "%s/%.*s.bin", dir, (int)strcspn(file, "."), file);
    size_t cn, on;
    uint8_t *comp = read_file(cpath, &cn), *orig = read_file(opath, &on);
    if (!comp || !orig) { printf("bench: missing %s\n", cpath); free(comp); free(orig); return; }
    uint8_t *out = malloc(on);
    mlrt_error err;
    int reps = 0;
    double t0 = now(), t = 0;
    do {
        mlrt_status st = is_lz4 ? mlrt__lz4_block_decode(comp + 4, cn - 4, out, on, &err)
                                : mlrt__zstd_decode(comp, cn, out, on, &err);
        if (st) { printf("bench: %s failed: %s\n", file, err.message); break; }
        reps++;
    } while ((t = now() - t0) < 1.0);
    if (memcmp(out, orig, on)) printf("bench: %s decoded wrong\n", file);
    printf("bench: %-26s %8zu -> %zu bytes  %7.0f MB/s\n", file, cn, on, (double)on * reps / t / 1e6);
    free(out);
    free(comp);
    free(orig);
}

static void bench(const char *dir) {
    bench_one(dir, "floats.lz4.lz4", 1);
    bench_one(dir, "floats.lz4hc.lz4", 1);
    bench_one(dir, "floats.z3-stream.zst", 0);
    bench_one(dir, "floats.z19-stream.zst", 0);
    bench_one(dir, "floats.z1-check.zst", 0);
    bench_one(dir, "text.z3.zst", 0);
    bench_one(dir, "text.lz4.lz4", 1);
    size_t n;
    char path[1024];
    snprintf(path, sizeof path, "%s/floats.bin", dir);
    uint8_t *p = read_file(path, &n);
    if (!p) return;
    double t0 = now(), t = 0;
    int reps = 0;
    volatile uint64_t sink = 0;
    do { sink += mlrt__crc32(p, n); reps++; } while ((t = now() - t0) < 0.5);
    printf("bench: crc32 %7.0f MB/s\n", (double)n * reps / t / 1e6);
    t0 = now(); reps = 0;
    do { sink += mlrt__xxh64(p, n, 0); reps++; } while ((t = now() - t0) < 0.5);
    printf("bench: xxh64 %7.0f MB/s\n", (double)n * reps / t / 1e6 + 0 * (double)sink);
    free(p);
}

static void test_lz4_vectors(void) { test_vectors("lz4"); }
static void test_zstd_vectors(void) { test_vectors("zstd"); }

static const test_case decompress_tests[] = {
    {"crc32", test_crc32},
    {"xxh64", test_xxh64},
    {"lz4_hand_made", test_lz4_hand},
    {"zstd_frames", test_zstd_frames},
    {"zstd_huffman", test_zstd_huffman},
    {"zstd_sequences", test_zstd_sequences},
    {"lz4_vectors", test_lz4_vectors},
    {"zstd_vectors", test_zstd_vectors},
    {0},
};

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--bench") == 0) {
        bench(argc > 2 ? argv[2] : g_vector_dir);
        return 0;
    }
    if (argc > 1) g_vector_dir = argv[1];
    static const test_case *const suites[] = {decompress_tests, NULL};
    return run_tests(suites, argc > 2 ? argv[2] : NULL, TEST_TIMEOUT_S); /* the vector sweep under ASan: about a minute */
}
