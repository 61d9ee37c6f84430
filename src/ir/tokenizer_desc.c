/* ir/tokenizer_desc.c — freeing a tokenizer's description, and its vocabulary in byte order (for
 * the readers' checks: duplicates, names that must be tokens). */
#include "ir.h"
#include <stdlib.h>
#include <string.h>

void mlrt__tok_desc_free(mlrt__tok_desc *d) {
    free(d->pool);
    free(d->off);
    free(d->sorted);
    for (uint32_t i = 0; i < d->n_added && d->added; i++) free(d->added[i].content);
    free(d->added);
    for (uint32_t i = 0; i < d->n_specials && d->specials; i++) free(d->specials[i].name);
    free(d->specials);
    memset(d, 0, sizeof *d);
}

/* token a vs s [n], as bytes */
static int cmp_token(const mlrt__tok_desc *d, uint32_t a, const char *s, size_t n) {
    size_t an = d->off[a + 1] - 1 - d->off[a], m = an < n ? an : n;
    int c = memcmp(d->pool + d->off[a], s, m);
    return c ? c : (an > n) - (an < n);
}

static int cmp_ids(const mlrt__tok_desc *d, uint32_t a, uint32_t b) {
    return cmp_token(d, a, d->pool + d->off[b], d->off[b + 1] - 1 - d->off[b]);
}

/* heapsort: no recursion, no extra memory */
static void sift(const mlrt__tok_desc *d, uint32_t *v, size_t at, size_t n) {
    for (;;) {
        size_t c = 2 * at + 1;
        if (c >= n) return;
        if (c + 1 < n && cmp_ids(d, v[c + 1], v[c]) > 0) c++;
        if (cmp_ids(d, v[c], v[at]) <= 0) return;
        uint32_t t = v[c]; v[c] = v[at]; v[at] = t;
        at = c;
    }
}

bool mlrt__tok_desc_sort(mlrt__tok_desc *d, long *dup_a, long *dup_b) {
    size_t n = d->n_vocab;
    free(d->sorted);
    d->sorted = malloc((n ? n : 1) * sizeof *d->sorted);
    if (!d->sorted) return false;
    for (size_t i = 0; i < n; i++) d->sorted[i] = (uint32_t)i;
    uint32_t *v = d->sorted;
    for (size_t i = n / 2; i-- > 0;) sift(d, v, i, n);
    for (size_t end = n; end > 1; end--) {
        uint32_t t = v[0]; v[0] = v[end - 1]; v[end - 1] = t;
        sift(d, v, 0, end - 1);
    }
    *dup_a = *dup_b = -1;
    for (size_t i = 1; i < n; i++) {
        if (cmp_ids(d, v[i - 1], v[i]) == 0) {
            *dup_a = v[i - 1] < v[i] ? v[i - 1] : v[i];
            *dup_b = v[i - 1] < v[i] ? v[i] : v[i - 1];
            break;
        }
    }
    return true;
}

long mlrt__tok_desc_find(const mlrt__tok_desc *d, const char *s, size_t n) {
    size_t lo = 0, hi = d->n_vocab;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = cmp_token(d, d->sorted[mid], s, n);
        if (!c) return d->sorted[mid];
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return -1;
}
