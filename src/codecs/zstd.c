/* codecs/zstd.c — a Zstandard frame decoder written from RFC 8878, decoding one frame straight into
 * the caller's buffer (so the whole output is the window: no ring buffer, no copies).
 *
 *   frame    = magic 0xFD2FB528, header, block+, [checksum: low 32 bits of XXH64(content), LE]
 *   header   = descriptor (FCS flag 2 | single segment 1 | unused 1 | reserved 1 | checksum 1 | dict 2)
 *              [window descriptor] [dictionary id 0/1/2/4] [content size 0/1/2/4/8, the 2-byte form +256]
 *   block    = u24 LE (last 1 | type 2 | size 21), content: raw bytes, one RLE byte, or compressed
 *   compressed block = literals section, sequences section
 *     literals  = raw | RLE | Huffman (tree + 1 or 4 streams) | Huffman with the previous tree
 *     sequences = count, modes (LL, OF, ML: predefined | RLE | FSE table | repeat previous),
 *                 then one backward bitstream of FSE states and extra bits
 * Each sequence copies literals, then a match from an offset back (three repeat offsets).
 *
 * Entropy streams (Huffman, sequences) are read backward from their last byte, whose highest set
 * bit marks where the data starts; each must be consumed exactly. FSE table descriptions are read
 * forward. Offsets in messages count from the start of the input. */
#include "codecs.h"
#include <stdlib.h>
#include <string.h>

#define FMT "zstd"
#define MAGIC 0xFD2FB528u
#define SKIPPABLE_MASK 0xFFFFFFF0u
#define SKIPPABLE_MAGIC 0x184D2A50u
#define BLOCK_MAX (128u * 1024u)
#define LIT_PAD 32               /* slack after the literals for 16-byte wild copies */
#define HUF_MAX_BITS 11
#define HUF_MAX_WEIGHTS 255      /* explicit weights; the last symbol's weight is implied */
#define HUFW_MAX_LOG 6           /* FSE accuracy of the compressed Huffman weights */
#define LL_MAX_LOG 9
#define ML_MAX_LOG 9
#define OF_MAX_LOG 8
#define LL_MAX_CODE 35
#define ML_MAX_CODE 52
#define OF_MAX_CODE 31
#define FSE_MAX_LOG 9

/* ------------------------------------------------------------------ tables of the format */

static const uint32_t LL_BASE[LL_MAX_CODE + 1] = {
    0,  1,  2,  3,  4,  5,  6,  7,  8,  9,   10,  11,  12,  13,   14,   15,   16,   18,
    20, 22, 24, 28, 32, 40, 48, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536};
static const uint8_t LL_BITS[LL_MAX_CODE + 1] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  0,  0,  0,  1,  1,
                                                 1, 1, 2, 2, 3, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
static const uint32_t ML_BASE[ML_MAX_CODE + 1] = {
    3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13,  14,  15,  16,  17,   18,   19,   20,   21,    22,    23,    24,
    25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35,  37,  39,  41,  43,   47,   51,   59,   67,    83,    99,    131,
    259, 515, 1027, 2051, 4099, 8195, 16387, 32771, 65539};
static const uint8_t ML_BITS[ML_MAX_CODE + 1] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  0,  0,  0,  0,
                                                 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  1,  1,  1,  1,
                                                 2, 2, 3, 3, 4, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

/* Predefined distributions (RFC 8878 §3.1.1.3.2.2); -1 = "less than 1". */
static const int16_t LL_DEFAULT[LL_MAX_CODE + 1] = {4, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 2, 2,
                                                    2, 2, 2, 2, 2, 2, 2, 3, 2, 1, 1, 1, 1, 1, -1, -1, -1, -1};
static const int16_t ML_DEFAULT[ML_MAX_CODE + 1] = {1, 4, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                                    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                                    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1, -1};
static const int16_t OF_DEFAULT[29] = {1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1,
                                       1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1};

/* ------------------------------------------------------------------ decoder state */

typedef struct fse_cell {
    uint16_t next;    /* baseline of the next state */
    uint8_t nbits;    /* bits read and added to `next` */
    uint8_t symbol;
} fse_cell;

typedef struct fse_table {
    fse_cell cell[1 << FSE_MAX_LOG];  /* [1 << log] */
    unsigned log;
} fse_table;

typedef struct huf_cell {
    uint8_t symbol, nbits;
} huf_cell;

typedef struct zdec {
    const uint8_t *in;
    size_t in_len;
    uint8_t *out;
    size_t out_len, op;              /* output [0, out_len), op bytes written */
    uint64_t window;                 /* Window_Size: the farthest a match may reach back */
    size_t block_max;                /* min(Window_Size, 128 KiB): block content and output limit */
    unsigned block_no;               /* for messages */
    mlrt_error *err;
    size_t rep[3];                   /* repeat offsets, most recent first */
    bool have_huf, have_ll, have_of, have_ml;  /* tables from an earlier block, for repeat modes */
    unsigned huf_bits;               /* Max_Number_of_Bits of the current Huffman table */
    huf_cell huf[1 << HUF_MAX_BITS]; /* [1 << huf_bits], indexed by the next huf_bits bits */
    fse_table ll, of, ml;
    const uint8_t *lit;              /* the current block's literals: [lit_len] */
    size_t lit_len;
    uint8_t lit_buf[BLOCK_MAX + LIT_PAD];
} zdec;

static mlrt_status corrupt(zdec *d, size_t at, const char *what) {
    return mlrt__fail(d->err, MLRT_ERR_BAD_HEADER, FMT ": %s at byte %zu (block %u)", what, at, d->block_no);
}

static mlrt_status truncated(zdec *d, size_t at, const char *what) {
    return mlrt__fail(d->err, MLRT_ERR_TRUNCATED, FMT ": input ends at byte %zu inside %s", at, what);
}

static unsigned highbit(uint32_t v) { return 31u - (unsigned)__builtin_clz(v); } /* v > 0 */

/* ------------------------------------------------------------------ backward bitstream */

/* Reads a stream from its last byte toward its first. `bits` holds the next bits left-aligned,
 * each bit at the same distance from the read position as in the stream, zero before the
 * stream's first byte; reading past the start yields zeros and drives `avail` negative. */
typedef struct bitrev {
    uint64_t bits;
    int avail;                 /* valid bits in `bits`; < 0 once more bits were read than exist */
    const uint8_t *p, *begin;  /* bytes [begin, p) not yet loaded */
} bitrev;

/* Afterwards avail >= 57 or the whole stream is loaded: up to 57 bits may be read. */
static inline __attribute__((always_inline)) void br_refill(bitrev *b) {
    if (b->avail > 56 || b->avail < 0) return;
    if (b->p - b->begin >= 8) {
        b->bits |= mlrt__rd_u64(b->p - 8) >> b->avail;
        int n = (64 - b->avail) >> 3;
        b->p -= n;
        b->avail += 8 * n;
    } else {
        while (b->avail <= 56 && b->p > b->begin) {
            b->bits |= (uint64_t)*--b->p << (56 - b->avail);
            b->avail += 8;
        }
    }
}

static inline __attribute__((always_inline)) uint64_t br_read(bitrev *b, unsigned n) { /* n <= 57 after a refill */
    uint64_t v = (b->bits >> 1) >> (63 - n);
    b->bits <<= n;
    b->avail -= (int)n;
    return v;
}

static inline bool br_done(const bitrev *b) { return b->avail == 0 && b->p == b->begin; }

/* The stream is in[at, at + len); skips the zero bits and the 1 marking its end. */
static mlrt_status br_init(zdec *d, bitrev *b, size_t at, size_t len, const char *what) {
    if (len == 0) return corrupt(d, at, what);
    uint8_t last = d->in[at + len - 1];
    if (last == 0) return corrupt(d, at + len - 1, what);
    b->bits = 0;
    b->avail = 0;
    b->begin = d->in + at;
    b->p = b->begin + len;
    br_refill(b);
    br_read(b, 8 - highbit(last));
    return MLRT_OK;
}

/* ------------------------------------------------------------------ FSE tables */

/* n <= 16 bits at bit position `pos` of a forward little-endian bitstream; zeros past its end. */
static uint32_t bits_at(const uint8_t *p, size_t nbytes, size_t pos, unsigned n) {
    uint32_t v = 0;
    size_t byte = pos >> 3;
    for (unsigned i = 0; i < 3 && byte + i < nbytes; i++) v |= (uint32_t)p[byte + i] << (8 * i);
    return (v >> (pos & 7)) & ((1u << n) - 1);
}

/* Reads an FSE table description from in[at, end): the accuracy log, then one probability per
 * symbol (value - 1, -1 meaning "less than 1"), each in as few bits as the points still to
 * distribute allow, zeros followed by 2-bit repeat counts. It ends when the points reach
 * 1 << log exactly and occupies whole bytes: *used. */
static mlrt_status read_fse_description(zdec *d, size_t at, size_t end, unsigned max_symbol, unsigned max_log,
                                        int16_t *prob, unsigned *nsym, unsigned *log, size_t *used) {
    const uint8_t *p = d->in + at;
    size_t nbytes = end - at, pos = 4;
    if (nbytes == 0) return corrupt(d, at, "FSE table description missing");
    *log = (p[0] & 15u) + 5;
    if (*log > max_log) return corrupt(d, at, "FSE table accuracy log too large");
    int remaining = (1 << *log) + 1, threshold = 1 << *log;
    unsigned nbits = *log + 1, sym = 0, nonzero = 0;
    while (remaining > 1) {
        if (sym > max_symbol) return corrupt(d, at, "FSE table describes a symbol beyond the largest code");
        int max = 2 * threshold - 1 - remaining, value = (int)bits_at(p, nbytes, pos, nbits - 1);
        if (value < max) {
            pos += nbits - 1;
        } else {
            value = (int)bits_at(p, nbytes, pos, nbits);
            if (value >= threshold) value -= max;
            pos += nbits;
        }
        int pr = value - 1;
        prob[sym++] = (int16_t)pr;
        remaining -= pr < 0 ? 1 : pr;
        nonzero += pr != 0;
        if (pr == 0) { /* 2-bit repeat flags: that many more zeros; 3 means another flag follows */
            unsigned r;
            do {
                r = bits_at(p, nbytes, pos, 2);
                pos += 2;
                if (sym + r > max_symbol + 1) return corrupt(d, at, "FSE table zero run passes the largest code");
                for (unsigned i = 0; i < r; i++) prob[sym++] = 0;
            } while (r == 3 && (pos + 7) / 8 <= nbytes);
        }
        if ((pos + 7) / 8 > nbytes) return corrupt(d, at, "FSE table description runs past its section");
        while (remaining < threshold) {
            nbits--;
            threshold >>= 1;
        }
    }
    if (remaining != 1) return corrupt(d, at, "FSE table probabilities overshoot the table size");
    if (nonzero < 2) return corrupt(d, at, "FSE table with fewer than two symbols");
    *nsym = sym;
    *used = (pos + 7) / 8;
    return MLRT_OK;
}

/* Builds the decoding table: "less than 1" symbols take single cells from the end; the others
 * are spread with step 5/8 size + 3 (skipping those cells); then each symbol's cells, in state
 * order, get the bits and baseline that lead to its next states. */
static mlrt_status build_fse(zdec *d, size_t at, fse_table *t, const int16_t *prob, unsigned nsym, unsigned log) {
    uint32_t size = 1u << log, high = size - 1, step = (size >> 1) + (size >> 3) + 3, pos = 0;
    uint16_t next[256];
    for (unsigned s = 0; s < nsym; s++) {
        if (prob[s] == -1) {
            t->cell[high--].symbol = (uint8_t)s;
            next[s] = 1;
        } else {
            next[s] = (uint16_t)prob[s];
        }
    }
    for (unsigned s = 0; s < nsym; s++)
        for (int i = 0; i < prob[s]; i++) {
            t->cell[pos].symbol = (uint8_t)s;
            do pos = (pos + step) & (size - 1); while (pos > high);
        }
    if (pos != 0) return corrupt(d, at, "FSE table spread does not fill the table");
    for (uint32_t u = 0; u < size; u++) {
        uint32_t x = next[t->cell[u].symbol]++;
        unsigned nb = log - highbit(x);
        t->cell[u].nbits = (uint8_t)nb;
        t->cell[u].next = (uint16_t)((x << nb) - size);
    }
    t->log = log;
    return MLRT_OK;
}

/* ------------------------------------------------------------------ Huffman tables */

/* weights[0..n) explicit; the last symbol's weight completes the sum of 2^(w-1) to a power of
 * two, which gives Max_Number_of_Bits. Codes are handed out from the lowest weight up, symbols
 * in order within a weight; a code of nbits fills 2^(max - nbits) cells of the table. */
static mlrt_status build_huffman(zdec *d, size_t at, uint8_t *w, size_t n) {
    uint32_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        if (w[i] > HUF_MAX_BITS) return corrupt(d, at, "Huffman weight above 11");
        if (w[i]) sum += 1u << (w[i] - 1);
    }
    if (sum == 0) return corrupt(d, at, "Huffman tree with no weights");
    unsigned maxbits = highbit(sum) + 1;
    if (maxbits > HUF_MAX_BITS) return corrupt(d, at, "Huffman tree deeper than 11 bits");
    uint32_t left = (1u << maxbits) - sum;
    if (left & (left - 1)) return corrupt(d, at, "Huffman weights do not complete to a power of two");
    w[n++] = (uint8_t)(highbit(left) + 1);
    size_t ones = 0;
    for (size_t i = 0; i < n; i++) ones += w[i] == 1;
    if (ones < 2) return corrupt(d, at, "Huffman tree without two weight-1 symbols");
    uint32_t pos = 0;
    for (unsigned wt = 1; wt <= maxbits; wt++) {
        huf_cell c = {0, (uint8_t)(maxbits + 1 - wt)};
        for (size_t s = 0; s < n; s++) {
            if (w[s] != wt) continue;
            c.symbol = (uint8_t)s;
            for (uint32_t k = 0; k < 1u << (wt - 1); k++) d->huf[pos++] = c;
        }
    }
    d->huf_bits = maxbits;
    return MLRT_OK;
}

/* Weights compressed with FSE: two states share one table and one stream, alternating, until a
 * state update would read past the stream's start; then the other state's symbol is the last. */
static mlrt_status read_fse_weights(zdec *d, size_t at, size_t size, uint8_t *w, size_t *n) {
    int16_t prob[256];
    unsigned nsym, log;
    size_t used;
    fse_table t;
    bitrev b;
    mlrt_status st = read_fse_description(d, at, at + size, 255, HUFW_MAX_LOG, prob, &nsym, &log, &used);
    if (st || (st = build_fse(d, at, &t, prob, nsym, log))) return st;
    if ((st = br_init(d, &b, at + used, size - used, "Huffman weights stream empty or unterminated"))) return st;
    uint32_t s[2];
    s[0] = (uint32_t)br_read(&b, log);
    s[1] = (uint32_t)br_read(&b, log);
    for (size_t k = 0;; k ^= 1) {
        if (*n >= HUF_MAX_WEIGHTS) return corrupt(d, at, "more than 255 Huffman weights");
        fse_cell c = t.cell[s[k]];
        w[(*n)++] = c.symbol;
        br_refill(&b);
        s[k] = c.next + (uint32_t)br_read(&b, c.nbits);
        if (b.avail < 0) {
            if (*n >= HUF_MAX_WEIGHTS) return corrupt(d, at, "more than 255 Huffman weights");
            w[(*n)++] = t.cell[s[k ^ 1]].symbol;
            return MLRT_OK;
        }
    }
}

/* Huffman_Tree_Description at in[at, end): a header byte, then FSE-compressed weights (< 128:
 * that many bytes) or 4-bit weights (>= 128: header - 127 of them, two per byte, high nibble first). */
static mlrt_status read_huffman_tree(zdec *d, size_t at, size_t end, size_t *used) {
    if (at >= end) return corrupt(d, at, "Huffman tree description missing");
    uint8_t hb = d->in[at], w[HUF_MAX_WEIGHTS + 1];
    size_t n = 0;
    if (hb >= 128) {
        n = hb - 127u;
        size_t bytes = (n + 1) / 2;
        if (end - at - 1 < bytes) return corrupt(d, at, "Huffman weights run past the literals section");
        for (size_t i = 0; i < n; i++) {
            uint8_t b = d->in[at + 1 + i / 2];
            w[i] = i & 1 ? b & 15 : b >> 4;
        }
        *used = 1 + bytes;
    } else {
        if (end - at - 1 < hb) return corrupt(d, at, "Huffman weights run past the literals section");
        mlrt_status st = read_fse_weights(d, at + 1, hb, w, &n);
        if (st) return st;
        *used = 1 + (size_t)hb;
    }
    return build_huffman(d, at, w, n);
}

/* ------------------------------------------------------------------ Huffman streams */

static inline __attribute__((always_inline)) uint8_t huf_symbol(bitrev *b, const huf_cell *t, unsigned shift) {
    huf_cell c = t[b->bits >> shift];
    b->bits <<= c.nbits;
    b->avail -= c.nbits;
    return c.symbol;
}

static void huf_run(bitrev *b, const huf_cell *t, unsigned shift, uint8_t *o, size_t n) {
    size_t i = 0;
    /* hot loop: four symbols of at most 11 bits per refill */
    for (; n - i >= 4; i += 4) {
        br_refill(b);
        o[i] = huf_symbol(b, t, shift);
        o[i + 1] = huf_symbol(b, t, shift);
        o[i + 2] = huf_symbol(b, t, shift);
        o[i + 3] = huf_symbol(b, t, shift);
    }
    for (; i < n; i++) {
        br_refill(b);
        o[i] = huf_symbol(b, t, shift);
    }
}

/* Decodes regen literals from the Huffman streams in[at, at + len) into lit_buf. */
static mlrt_status huf_streams(zdec *d, size_t at, size_t len, size_t regen, bool four) {
    const huf_cell *t = d->huf;
    unsigned shift = 64 - d->huf_bits;
    uint8_t *o = d->lit_buf;
    mlrt_status st;
    if (!four) {
        bitrev b;
        if ((st = br_init(d, &b, at, len, "Huffman stream empty or unterminated"))) return st;
        huf_run(&b, t, shift, o, regen);
        return br_done(&b) ? MLRT_OK : corrupt(d, at, "Huffman stream not consumed exactly");
    }
    if (len < 6) return corrupt(d, at, "Huffman jump table runs past the literals section");
    size_t size[4], start[4], seg = (regen + 3) / 4;
    size[0] = (size_t)d->in[at] | (size_t)d->in[at + 1] << 8;
    size[1] = (size_t)d->in[at + 2] | (size_t)d->in[at + 3] << 8;
    size[2] = (size_t)d->in[at + 4] | (size_t)d->in[at + 5] << 8;
    if (size[0] + size[1] + size[2] + 6 >= len) return corrupt(d, at, "Huffman jump table exceeds the streams");
    if (3 * seg > regen) return corrupt(d, at, "too few literals for four Huffman streams");
    size[3] = len - 6 - size[0] - size[1] - size[2];
    start[0] = at + 6;
    for (int k = 1; k < 4; k++) start[k] = start[k - 1] + size[k - 1];
    bitrev b0, b1, b2, b3; /* four variables, not an array, so they can live in registers */
    if ((st = br_init(d, &b0, start[0], size[0], "Huffman stream empty or unterminated")) ||
        (st = br_init(d, &b1, start[1], size[1], "Huffman stream empty or unterminated")) ||
        (st = br_init(d, &b2, start[2], size[2], "Huffman stream empty or unterminated")) ||
        (st = br_init(d, &b3, start[3], size[3], "Huffman stream empty or unterminated")))
        return st;
    size_t last = regen - 3 * seg, i = 0;
    uint8_t *o1 = o + seg, *o2 = o + 2 * seg, *o3 = o + 3 * seg;
    /* hot loop: the four streams interleaved, four symbols each per refill */
    for (; last - i >= 4; i += 4) {
        br_refill(&b0); br_refill(&b1); br_refill(&b2); br_refill(&b3);
        for (size_t j = 0; j < 4; j++) {
            o[i + j] = huf_symbol(&b0, t, shift);
            o1[i + j] = huf_symbol(&b1, t, shift);
            o2[i + j] = huf_symbol(&b2, t, shift);
            o3[i + j] = huf_symbol(&b3, t, shift);
        }
    }
    huf_run(&b0, t, shift, o + i, seg - i);
    huf_run(&b1, t, shift, o1 + i, seg - i);
    huf_run(&b2, t, shift, o2 + i, seg - i);
    huf_run(&b3, t, shift, o3 + i, last - i);
    const bitrev *bs[4] = {&b0, &b1, &b2, &b3};
    for (int k = 0; k < 4; k++)
        if (!br_done(bs[k])) return corrupt(d, start[k], "Huffman stream not consumed exactly");
    return MLRT_OK;
}

/* ------------------------------------------------------------------ literals section */

/* The literals section at in[at, end) -> d->lit / d->lit_len; *used = its size. */
static mlrt_status read_literals(zdec *d, size_t at, size_t end, size_t *used) {
    const uint8_t *p = d->in + at;
    size_t n = end - at;
    if (n == 0) return corrupt(d, at, "compressed block is empty");
    unsigned type = p[0] & 3, sf = (p[0] >> 2) & 3;
    d->lit = d->lit_buf;
    if (type <= 1) { /* raw or RLE: 1, 2 or 3 header bytes holding 5, 12 or 20 bits of size */
        size_t hlen = (sf & 1) == 0 ? 1 : sf == 1 ? 2 : 3;
        if (n < hlen) return corrupt(d, at, "literals header runs past the block");
        size_t regen = hlen == 1 ? p[0] >> 3u
                     : hlen == 2 ? (p[0] >> 4u) + ((size_t)p[1] << 4)
                                 : (p[0] >> 4u) + ((size_t)p[1] << 4) + ((size_t)p[2] << 12);
        if (regen > d->block_max) return corrupt(d, at, "literals larger than the block maximum");
        size_t body = type == 0 ? regen : 1;
        if (n - hlen < body) return corrupt(d, at, "literals run past the block");
        if (type == 0) memcpy(d->lit_buf, p + hlen, regen);
        else memset(d->lit_buf, p[hlen], regen);
        d->lit_len = regen;
        *used = hlen + body;
        return MLRT_OK;
    }
    /* Huffman: 3, 4 or 5 header bytes; sizes of 10, 14 or 18 bits; sf 0 = one stream */
    size_t hlen = sf <= 1 ? 3 : sf == 2 ? 4 : 5;
    unsigned sbits = sf <= 1 ? 10 : sf == 2 ? 14 : 18;
    if (n < hlen) return corrupt(d, at, "literals header runs past the block");
    uint64_t h = 0;
    for (size_t i = 0; i < hlen; i++) h |= (uint64_t)p[i] << (8 * i);
    size_t regen = (size_t)(h >> 4) & ((1u << sbits) - 1), csize = (size_t)(h >> (4 + sbits)) & ((1u << sbits) - 1);
    if (regen > d->block_max) return corrupt(d, at, "literals larger than the block maximum");
    if (csize > n - hlen) return corrupt(d, at, "compressed literals run past the block");
    size_t tree = 0;
    mlrt_status st;
    if (type == 2) {
        d->have_huf = false;
        if ((st = read_huffman_tree(d, at + hlen, at + hlen + csize, &tree))) return st;
        d->have_huf = true;
    } else if (!d->have_huf) {
        return corrupt(d, at, "treeless literals without an earlier Huffman table");
    }
    if ((st = huf_streams(d, at + hlen + tree, csize - tree, regen, sf != 0))) return st;
    d->lit_len = regen;
    *used = hlen + csize;
    return MLRT_OK;
}

/* ------------------------------------------------------------------ sequences */

typedef struct table_kind {
    const char *name;
    const int16_t *def;       /* predefined distribution */
    unsigned def_n, def_log, max_code, max_log;
} table_kind;

static const table_kind LL_KIND = {"literal lengths", LL_DEFAULT, LL_MAX_CODE + 1, 6, LL_MAX_CODE, LL_MAX_LOG};
static const table_kind OF_KIND = {"offsets", OF_DEFAULT, 29, 5, OF_MAX_CODE, OF_MAX_LOG};
static const table_kind ML_KIND = {"match lengths", ML_DEFAULT, ML_MAX_CODE + 1, 6, ML_MAX_CODE, ML_MAX_LOG};

/* One symbol table of the sequences section: mode 0 predefined, 1 RLE (one symbol byte),
 * 2 an FSE description, 3 the table of the last block that had sequences. */
static mlrt_status read_seq_table(zdec *d, size_t *at, size_t end, unsigned mode, const table_kind *k,
                                  fse_table *t, bool *have) {
    int16_t prob[ML_MAX_CODE + 1];
    unsigned nsym, log;
    size_t used;
    mlrt_status st;
    switch (mode) {
    case 0:
        if ((st = build_fse(d, *at, t, k->def, k->def_n, k->def_log))) return st;
        break;
    case 1:
        if (*at >= end) return corrupt(d, *at, "RLE symbol runs past the block");
        if (d->in[*at] > k->max_code)
            return mlrt__fail(d->err, MLRT_ERR_BAD_HEADER, FMT ": RLE %s code %u at byte %zu is above %u (block %u)",
                             k->name, d->in[*at], *at, k->max_code, d->block_no);
        t->log = 0;
        t->cell[0] = (fse_cell){0, 0, d->in[*at]};
        *at += 1;
        break;
    case 2:
        if ((st = read_fse_description(d, *at, end, k->max_code, k->max_log, prob, &nsym, &log, &used)) ||
            (st = build_fse(d, *at, t, prob, nsym, log)))
            return st;
        *at += used;
        break;
    default:
        if (!*have)
            return mlrt__fail(d->err, MLRT_ERR_BAD_HEADER, FMT ": %s table at byte %zu repeats a table no earlier "
                             "block defined (block %u)", k->name, *at, d->block_no);
        break;
    }
    *have = true;
    return MLRT_OK;
}

/* Copies a match of len bytes from offset back; the caller checked both ranges. */
static inline __attribute__((always_inline)) void copy_match(uint8_t *dst, size_t offset, size_t len, size_t room) {
    const uint8_t *src = dst - offset;
    if (offset >= 16 && room >= len + 15) {
        /* hot loop: 16-byte chunks, each reading only bytes already written */
        for (size_t i = 0; i < len; i += 16) memcpy(dst + i, src + i, 16);
        return;
    }
    if (offset >= len) { memcpy(dst, src, len); return; }
    if (offset == 1) { memset(dst, *src, len); return; }
    size_t span = offset; /* [src, dst) is one period; copies double without overlapping */
    while (len > span) {
        memcpy(dst, src, span);
        dst += span;
        len -= span;
        span *= 2;
    }
    memcpy(dst, src, len);
}

/* Output room for n more bytes of this block, under both out_len and Block_Maximum_Size. */
static mlrt_status check_room(zdec *d, size_t op, size_t block_start, size_t n, size_t at) {
    if (n > d->out_len - op)
        return mlrt__fail(d->err, MLRT_ERR_SIZE_MISMATCH, FMT ": frame decodes to more than %zu bytes (block %u "
                         "at byte %zu)", d->out_len, d->block_no, at);
    if (op + n - block_start > d->block_max)
        return mlrt__fail(d->err, MLRT_ERR_BAD_HEADER, FMT ": block %u at byte %zu decodes to more than the block "
                         "maximum of %zu bytes", d->block_no, at, d->block_max);
    return MLRT_OK;
}

static mlrt_status decode_sequences(zdec *d, size_t at, size_t end, uint32_t nseq) {
    bitrev b;
    mlrt_status st = br_init(d, &b, at, end - at, "sequences bitstream empty or unterminated");
    if (st) return st;
    const fse_cell *llt = d->ll.cell, *oft = d->of.cell, *mlt = d->ml.cell;
    uint32_t ls = (uint32_t)br_read(&b, d->ll.log);
    uint32_t os = (uint32_t)br_read(&b, d->of.log);
    uint32_t ms = (uint32_t)br_read(&b, d->ml.log);
    uint8_t *out = d->out;
    size_t op = d->op, block_start = d->op, r0 = d->rep[0], r1 = d->rep[1], r2 = d->rep[2];
    const uint8_t *lit = d->lit, *lit_end = d->lit + d->lit_len;
    /* hot loop: decode one sequence (offset, match length, literal length, then the next
     * states LL, ML, OF), then execute it */
    for (uint32_t i = 0; i < nseq; i++) {
        fse_cell lc = llt[ls], oc = oft[os], mc = mlt[ms];
        br_refill(&b);
        uint64_t ofv = ((uint64_t)1 << oc.symbol) + br_read(&b, oc.symbol);
        br_refill(&b);
        size_t ml = ML_BASE[mc.symbol] + (size_t)br_read(&b, ML_BITS[mc.symbol]);
        size_t ll = LL_BASE[lc.symbol] + (size_t)br_read(&b, LL_BITS[lc.symbol]);
        if (i + 1 < nseq) {
            br_refill(&b);
            ls = lc.next + (uint32_t)br_read(&b, lc.nbits);
            ms = mc.next + (uint32_t)br_read(&b, mc.nbits);
            os = oc.next + (uint32_t)br_read(&b, oc.nbits);
        }
        size_t off;
        if (ofv > 3) {
            off = (size_t)(ofv - 3);
            r2 = r1;
            r1 = r0;
            r0 = off;
        } else { /* repeat offsets; with no literals they shift by one and 3 means r0 - 1 */
            unsigned idx = (unsigned)ofv - 1 + (ll == 0);
            if (idx == 0) {
                off = r0;
            } else {
                off = idx == 1 ? r1 : idx == 2 ? r2 : r0 - 1;
                if (idx != 1) r2 = r1;
                r1 = r0;
                r0 = off;
            }
        }
        if (ll > (size_t)(lit_end - lit))
            return mlrt__fail(d->err, MLRT_ERR_BAD_HEADER, FMT ": sequence %u of block %u (bitstream at byte %zu) "
                             "uses more literals than the block has", i, d->block_no, at);
        if ((st = check_room(d, op, block_start, ll + ml, at))) return st;
        if (ll <= 16 && d->out_len - op >= 16) memcpy(out + op, lit, 16); /* lit_buf has LIT_PAD slack */
        else memcpy(out + op, lit, ll);
        op += ll;
        lit += ll;
        if (off == 0 || off > op || off > d->window)
            return mlrt__fail(d->err, MLRT_ERR_BAD_HEADER, FMT ": sequence %u of block %u (bitstream at byte %zu) "
                             "has offset %zu with %zu bytes decoded (window %llu)", i, d->block_no, at, off, op,
                             (unsigned long long)d->window);
        copy_match(out + op, off, ml, d->out_len - op);
        op += ml;
    }
    if (!br_done(&b)) return corrupt(d, at, "sequences bitstream not consumed exactly");
    size_t rest = (size_t)(lit_end - lit);
    if ((st = check_room(d, op, block_start, rest, at))) return st;
    memcpy(out + op, lit, rest);
    d->op = op + rest;
    d->rep[0] = r0;
    d->rep[1] = r1;
    d->rep[2] = r2;
    return MLRT_OK;
}

/* Sequences section at in[at, end): count, modes, tables, bitstream. */
static mlrt_status read_sequences(zdec *d, size_t at, size_t end) {
    if (at >= end) return corrupt(d, at, "block ends before its sequences section");
    uint32_t nseq = d->in[at++];
    if (nseq >= 128) {
        size_t extra = nseq == 255 ? 2 : 1;
        if (end - at < extra) return corrupt(d, at, "sequence count runs past the block");
        nseq = nseq == 255 ? d->in[at] + ((uint32_t)d->in[at + 1] << 8) + 0x7F00
                           : ((nseq - 128) << 8) + d->in[at];
        at += extra;
    }
    if (nseq == 0) {
        if (at != end) return corrupt(d, at, "bytes after a sequences section with no sequences");
        mlrt_status st = check_room(d, d->op, d->op, d->lit_len, at);
        if (st) return st;
        memcpy(d->out + d->op, d->lit, d->lit_len);
        d->op += d->lit_len;
        return MLRT_OK;
    }
    if (at >= end) return corrupt(d, at, "sequence modes run past the block");
    uint8_t modes = d->in[at++];
    if (modes & 3) return corrupt(d, at - 1, "reserved bits set in the sequence modes");
    mlrt_status st;
    if ((st = read_seq_table(d, &at, end, modes >> 6, &LL_KIND, &d->ll, &d->have_ll)) ||
        (st = read_seq_table(d, &at, end, (modes >> 4) & 3, &OF_KIND, &d->of, &d->have_of)) ||
        (st = read_seq_table(d, &at, end, (modes >> 2) & 3, &ML_KIND, &d->ml, &d->have_ml)))
        return st;
    return decode_sequences(d, at, end, nseq);
}

/* ------------------------------------------------------------------ blocks and frame */

static mlrt_status decode_blocks(zdec *d, size_t *pos) {
    for (;;) {
        size_t at = *pos;
        if (d->in_len - at < 3) return truncated(d, at, "a block header");
        uint32_t h = (uint32_t)d->in[at] | (uint32_t)d->in[at + 1] << 8 | (uint32_t)d->in[at + 2] << 16;
        unsigned last = h & 1, type = (h >> 1) & 3;
        size_t size = h >> 3;
        d->block_no++;
        at += 3;
        if (type == 3) return corrupt(d, at - 3, "reserved block type");
        if (size > d->block_max)
            return mlrt__fail(d->err, MLRT_ERR_BAD_HEADER, FMT ": block %u at byte %zu has size %zu, above the "
                             "block maximum of %zu", d->block_no, at - 3, size, d->block_max);
        size_t body = type == 1 ? 1 : size;
        if (d->in_len - at < body) return truncated(d, d->in_len, "a block");
        mlrt_status st;
        if (type == 2) {
            size_t used = 0;
            if ((st = read_literals(d, at, at + size, &used)) || (st = read_sequences(d, at + used, at + size)))
                return st;
        } else {
            if ((st = check_room(d, d->op, d->op, size, at))) return st;
            if (type == 0) memcpy(d->out + d->op, d->in + at, size);
            else memset(d->out + d->op, d->in[at], size);
            d->op += size;
        }
        *pos = at + body;
        if (last) return MLRT_OK;
    }
}

/* Frame_Header at in[*pos...): sets the window, checks content size and dictionary. */
static mlrt_status read_frame_header(zdec *d, size_t *pos, bool *checksum) {
    static const uint8_t did_bytes[4] = {0, 1, 2, 4}, fcs_bytes[4] = {0, 2, 4, 8};
    size_t at = *pos;
    if (d->in_len - at < 1) return truncated(d, at, "the frame header");
    uint8_t fhd = d->in[at];
    bool single = (fhd >> 5) & 1;
    if (fhd & 8) return corrupt(d, at, "reserved bit set in the frame header");
    *checksum = (fhd >> 2) & 1;
    size_t did_n = did_bytes[fhd & 3], fcs_n = (fhd >> 6) == 0 ? single : fcs_bytes[fhd >> 6];
    size_t len = 1 + (single ? 0 : 1) + did_n + fcs_n;
    if (d->in_len - at < len) return truncated(d, d->in_len, "the frame header");
    const uint8_t *p = d->in + at + 1;
    if (!single) {
        unsigned exp = *p >> 3, mant = *p & 7;
        uint64_t base = (uint64_t)1 << (10 + exp);
        d->window = base + (base >> 3) * mant;
        p++;
    }
    uint64_t dict = 0, fcs = 0;
    for (size_t i = 0; i < did_n; i++) dict |= (uint64_t)p[i] << (8 * i);
    p += did_n;
    for (size_t i = 0; i < fcs_n; i++) fcs |= (uint64_t)p[i] << (8 * i);
    if (fcs_n == 2) fcs += 256;
    if (dict != 0)
        return mlrt__fail(d->err, MLRT_ERR_UNSUPPORTED, FMT ": frame at byte %zu needs dictionary %llu "
                         "(dictionaries are not supported)", at - 4, (unsigned long long)dict);
    if (fcs_n && fcs != d->out_len)
        return mlrt__fail(d->err, MLRT_ERR_SIZE_MISMATCH, FMT ": frame at byte %zu declares %llu content bytes, "
                         "expected %zu", at - 4, (unsigned long long)fcs, d->out_len);
    if (single) d->window = fcs;
    d->block_max = d->window < BLOCK_MAX ? (size_t)d->window : BLOCK_MAX;
    *pos = at + len;
    return MLRT_OK;
}

/* Skips skippable frames (magic 0x184D2A5?, u32 LE size, that many bytes) from *pos. */
static mlrt_status skip_skippable(const uint8_t *in, size_t in_len, size_t *pos, mlrt_error *err) {
    while (in_len - *pos >= 4 && (mlrt__rd_u32(in + *pos) & SKIPPABLE_MASK) == SKIPPABLE_MAGIC) {
        if (in_len - *pos < 8)
            return mlrt__fail(err, MLRT_ERR_TRUNCATED, FMT ": input ends at byte %zu inside a skippable frame header",
                             in_len);
        uint32_t size = mlrt__rd_u32(in + *pos + 4);
        if (in_len - *pos - 8 < size)
            return mlrt__fail(err, MLRT_ERR_TRUNCATED, FMT ": skippable frame at byte %zu declares %u bytes, "
                             "only %zu remain", *pos, size, in_len - *pos - 8);
        *pos += 8 + (size_t)size;
    }
    return MLRT_OK;
}

static mlrt_status decode_frame(zdec *d, size_t pos) {
    bool checksum = false;
    mlrt_status st;
    pos += 4;
    if ((st = read_frame_header(d, &pos, &checksum)) || (st = decode_blocks(d, &pos))) return st;
    if (d->op != d->out_len)
        return mlrt__fail(d->err, MLRT_ERR_SIZE_MISMATCH, FMT ": frame decodes to %zu bytes, expected %zu", d->op,
                         d->out_len);
    if (checksum) {
        if (d->in_len - pos < 4) return truncated(d, d->in_len, "the content checksum");
        uint32_t want = mlrt__rd_u32(d->in + pos), got = (uint32_t)mlrt__xxh64(d->out, d->out_len, 0);
        if (want != got)
            return mlrt__fail(d->err, MLRT_ERR_BAD_HEADER, FMT ": content checksum at byte %zu is %x, the content's "
                             "is %x", pos, want, got);
        pos += 4;
    }
    if ((st = skip_skippable(d->in, d->in_len, &pos, d->err))) return st;
    if (pos == d->in_len) return MLRT_OK;
    if (d->in_len - pos >= 4 && mlrt__rd_u32(d->in + pos) == MAGIC)
        return mlrt__fail(d->err, MLRT_ERR_UNSUPPORTED, FMT ": a second frame at byte %zu (one frame is supported)",
                         pos);
    return mlrt__fail(d->err, MLRT_ERR_BAD_HEADER, FMT ": %zu unexpected bytes after the frame at byte %zu",
                     d->in_len - pos, pos);
}

mlrt_status mlrt__zstd_decode(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len, mlrt_error *err) {
    static uint8_t no_output;
    if ((!in && in_len) || (!out && out_len))
        return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, FMT ": NULL buffer with a nonzero length");
    if (!out) out = &no_output;
    size_t pos = 0;
    mlrt_status st = in_len ? skip_skippable(in, in_len, &pos, err) : MLRT_OK;
    if (st) return st;
    if (in_len - pos < 4)
        return mlrt__fail(err, MLRT_ERR_TRUNCATED, FMT ": input ends at byte %zu before a frame", in_len);
    if (mlrt__rd_u32(in + pos) != MAGIC)
        return mlrt__fail(err, MLRT_ERR_BAD_HEADER, FMT ": no frame magic at byte %zu (found %x)", pos,
                         mlrt__rd_u32(in + pos));
    zdec *d = calloc(1, sizeof *d);
    if (!d) return mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, FMT ": out of memory for the decoder state");
    d->in = in;
    d->in_len = in_len;
    d->out = out;
    d->out_len = out_len;
    d->err = err;
    d->rep[0] = 1;
    d->rep[1] = 4;
    d->rep[2] = 8;
    st = decode_frame(d, pos);
    free(d);
    return st;
}

/* ------------------------------------------------------------------ XXH64 */

#define P1 0x9E3779B185EBCA87ull
#define P2 0xC2B2AE3D27D4EB4Full
#define P3 0x165667B19E3779F9ull
#define P4 0x85EBCA77C2B2AE63ull
#define P5 0x27D4EB2F165667C5ull

static inline __attribute__((always_inline)) uint64_t rotl64(uint64_t x, unsigned r) { return x << r | x >> (64 - r); }
static inline __attribute__((always_inline)) uint64_t xx_round(uint64_t acc, uint64_t lane) { return rotl64(acc + lane * P2, 31) * P1; }
static inline uint64_t xx_merge(uint64_t h, uint64_t v) { return (h ^ xx_round(0, v)) * P1 + P4; }

uint64_t mlrt__xxh64(const uint8_t *p, size_t n, uint64_t seed) {
    size_t i = 0;
    uint64_t h;
    if (n >= 32) {
        uint64_t v1 = seed + P1 + P2, v2 = seed + P2, v3 = seed, v4 = seed - P1;
        /* hot loop: four lanes of 8 bytes */
        for (; n - i >= 32; i += 32) {
            v1 = xx_round(v1, mlrt__rd_u64(p + i));
            v2 = xx_round(v2, mlrt__rd_u64(p + i + 8));
            v3 = xx_round(v3, mlrt__rd_u64(p + i + 16));
            v4 = xx_round(v4, mlrt__rd_u64(p + i + 24));
        }
        h = rotl64(v1, 1) + rotl64(v2, 7) + rotl64(v3, 12) + rotl64(v4, 18);
        h = xx_merge(xx_merge(xx_merge(xx_merge(h, v1), v2), v3), v4);
    } else {
        h = seed + P5;
    }
    h += n;
    for (; n - i >= 8; i += 8) h = rotl64(h ^ xx_round(0, mlrt__rd_u64(p + i)), 27) * P1 + P4;
    if (n - i >= 4) {
        h = rotl64(h ^ (uint64_t)mlrt__rd_u32(p + i) * P1, 23) * P2 + P3;
        i += 4;
    }
    for (; i < n; i++) h = rotl64(h ^ p[i] * P5, 11) * P1;
    h ^= h >> 33;
    h *= P2;
    h ^= h >> 29;
    h *= P3;
    return h ^ (h >> 32);
}
