/* ir/tokenizer_desc.c — freeing a tokenizer's description, and the readers' checks of its vocabulary
 * (a token that comes twice, names that must be tokens). */
#include "ir.h"
#include <stdlib.h>
#include <string.h>

void mlrt__tok_desc_free(mlrt__tok_desc *d) {
    free(d->pool);
    free(d->off);
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

/* By sorting the ids by their tokens (v: [n] scratch): O(n log n) whatever the tokens. */
static void duplicates_sorted(const mlrt__tok_desc *d, uint32_t *v, long *dup_a, long *dup_b) {
    size_t n = d->n_vocab;
    for (size_t i = 0; i < n; i++) v[i] = (uint32_t)i;
    for (size_t i = n / 2; i-- > 0;) sift(d, v, i, n);
    for (size_t end = n; end > 1; end--) {
        uint32_t t = v[0]; v[0] = v[end - 1]; v[end - 1] = t;
        sift(d, v, 0, end - 1);
    }
    for (size_t i = 1; i < n; i++) {
        if (cmp_ids(d, v[i - 1], v[i]) == 0) {
            *dup_a = v[i - 1] < v[i] ? v[i - 1] : v[i];
            *dup_b = v[i - 1] < v[i] ? v[i] : v[i - 1];
            return;
        }
    }
}

/* Through a hash set of the ids, linear in the vocabulary (sorting bert-base's 30,522 tokens took about
 * 19 ms of a tokenizer's load in wasm); tokens made to collide (more than 8 probes a token on average)
 * fall back to sorting. */
bool mlrt__tok_desc_check(const mlrt__tok_desc *d, long *dup_a, long *dup_b) {
    const size_t n = d->n_vocab;
    size_t cap = 4, probes = 0, i = 0;
    while (cap < 2 * n) cap *= 2; /* (n < 2^31: ids are uint32 and pool offsets too) */
    uint32_t *set = calloc(cap, sizeof *set); /* id + 1, or 0: empty */
    if (!set) return false;
    *dup_a = *dup_b = -1;
    for (; i < n && *dup_a < 0 && probes <= 8 * n; i++) {
        const char *s = d->pool + d->off[i];
        const size_t len = d->off[i + 1] - 1 - d->off[i];
        uint32_t h = MLRT__FNV_INIT;
        for (size_t k = 0; k < len; k++) h = MLRT__FNV_STEP(h, s[k]);
        size_t at = (h ^ h >> 16) & (cap - 1);
        for (; set[at]; at = (at + 1) & (cap - 1), probes++)
            if (!cmp_token(d, set[at] - 1, s, len)) *dup_a = set[at] - 1, *dup_b = (long)i;
        set[at] = (uint32_t)i + 1;
    }
    if (*dup_a < 0 && i < n) duplicates_sorted(d, set, dup_a, dup_b); /* (set: cap >= 2n ids of scratch) */
    free(set);
    return true;
}

/* A linear scan: the readers look up a handful of special tokens. */
long mlrt__tok_desc_find(const mlrt__tok_desc *d, const char *s, size_t n) {
    for (uint32_t i = 0; i < d->n_vocab; i++)
        if (!cmp_token(d, i, s, n)) return i;
    return -1;
}
