/* codecs/crc32.c — CRC-32/ISO-HDLC (the zlib/PNG/.apr crc): reflected polynomial 0xEDB88320,
 * register preset to 0xFFFFFFFF and inverted at the end. Slicing-by-8: eight bytes per step.
 *
 *   table[0][b]     = crc of the single byte b (register starting at 0, no final inversion)
 *   table[k][b]     = table[0][b] advanced through k more zero bytes
 * so a step folds 8 input bytes into the register with 8 independent lookups. */
#include "codecs.h"

#define POLY 0xEDB88320u

static uint32_t table[8][256];
static bool table_ready;

static void build_tables(void) {
    for (uint32_t b = 0; b < 256; b++) {
        uint32_t c = b;
        for (int i = 0; i < 8; i++) c = (c >> 1) ^ (POLY & (0u - (c & 1u)));
        table[0][b] = c;
    }
    for (uint32_t b = 0; b < 256; b++)
        for (int k = 1; k < 8; k++) table[k][b] = (table[k - 1][b] >> 8) ^ table[0][table[k - 1][b] & 0xff];
    table_ready = true;
}

uint32_t mlrt__crc32_update(uint32_t crc, const uint8_t *p, size_t n) {
    if (!table_ready) build_tables();
    uint32_t c = ~crc;
    /* hot loop: 8 bytes per step */
    while (n >= 8) {
        uint32_t lo = c ^ mlrt__rd_u32(p), hi = mlrt__rd_u32(p + 4);
        c = table[7][lo & 0xff] ^ table[6][(lo >> 8) & 0xff] ^ table[5][(lo >> 16) & 0xff] ^ table[4][lo >> 24] ^
            table[3][hi & 0xff] ^ table[2][(hi >> 8) & 0xff] ^ table[1][(hi >> 16) & 0xff] ^ table[0][hi >> 24];
        p += 8;
        n -= 8;
    }
    while (n--) c = (c >> 8) ^ table[0][(c ^ *p++) & 0xff];
    return ~c;
}

uint32_t mlrt__crc32(const uint8_t *p, size_t n) { return mlrt__crc32_update(0, p, n); }
