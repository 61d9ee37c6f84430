/* ir/tokenizer_desc.c — freeing a tokenizer's description, and the readers' checks of its vocabulary
 * (a token that comes twice, names that must be tokens). */
#include "ir.h"
#include <stdlib.h>
#include <string.h>

void mlrt__tok_desc_free(mlrt__tok_desc *d) {
    free(d->pool);
    free(d->off);
    for (uint32_t i = 0; i < d->n_added && d->added; i++) free(d->added[i].content), free(d->added[i].norm);
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

static const char *token_key(const void *ctx, size_t i, size_t *len) {
    const mlrt__tok_desc *d = ctx;
    *len = d->off[i + 1] - 1 - d->off[i];
    return d->pool + d->off[i];
}

bool mlrt__tok_desc_check(const mlrt__tok_desc *d, long *dup_a, long *dup_b) {
    size_t a, b;
    if (!mlrt__first_repeat(d->n_vocab, d, token_key, &a, &b)) return false;
    *dup_a = a == SIZE_MAX ? -1 : (long)a, *dup_b = b == SIZE_MAX ? -1 : (long)b;
    return true;
}

/* A linear scan: the readers look up a handful of special tokens. */
long mlrt__tok_desc_find(const mlrt__tok_desc *d, const char *s, size_t n) {
    for (uint32_t i = 0; i < d->n_vocab; i++)
        if (!cmp_token(d, i, s, n)) return i;
    return -1;
}
