/* base/utf8.c — UTF-8 validation: where the first invalid byte is, and whether there is one. */
#include "base.h"
#include <string.h>

/* ---------------------------------------------------------------- UTF-8 */

size_t mlrt__utf8_invalid_at(const uint8_t *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        uint64_t w8; /* eight ASCII bytes at a time (a tokenizer.json is mostly ASCII) */
        if (n - i >= 8 && (memcpy(&w8, s + i, 8), !(w8 & 0x8080808080808080ull))) { i += 8; continue; }
        uint8_t c = s[i];
        if (c < 0x80) { i++; continue; }
        size_t len;
        uint32_t cp, min;
        if ((c & 0xe0) == 0xc0) { len = 2; cp = c & 0x1f; min = 0x80; }
        else if ((c & 0xf0) == 0xe0) { len = 3; cp = c & 0x0f; min = 0x800; }
        else if ((c & 0xf8) == 0xf0) { len = 4; cp = c & 0x07; min = 0x10000; }
        else return i;
        if (n - i < len) return i;
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xc0) != 0x80) return i;
            cp = cp << 6 | (s[i + k] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
        i += len;
    }
    return n;
}

bool mlrt__utf8_valid(const uint8_t *s, size_t n) { return mlrt__utf8_invalid_at(s, n) == n; }
