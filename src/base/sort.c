/* base/sort.c — heapsort for the readers' checks (tensor offsets, class labels), and the first of n keys
 * that repeats an earlier one (JSON's duplicate keys, a vocabulary's repeated tokens). */
#include "base.h"
#include <stdlib.h>
#include <string.h>

static void swap(unsigned char *a, unsigned char *b, size_t size) {
    for (size_t k = 0; k < size; k++) {
        unsigned char t = a[k];
        a[k] = b[k], b[k] = t;
    }
}

/* Moves element i down the max-heap of the first n elements until its children are no larger. */
static void sift_down(unsigned char *a, size_t i, size_t n, size_t size, int (*cmp)(const void *, const void *)) {
    for (size_t child; (child = 2 * i + 1) < n; i = child) {
        if (child + 1 < n && cmp(a + child * size, a + (child + 1) * size) < 0) child++;
        if (cmp(a + i * size, a + child * size) >= 0) return;
        swap(a + i * size, a + child * size, size);
    }
}

void mlrt__sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *)) {
    unsigned char *a = base;
    if (n < 2) return;
    for (size_t i = n / 2; i-- > 0;) sift_down(a, i, n, size, cmp);
    for (size_t end = n - 1; end > 0; end--) {
        swap(a, a + end * size, size);
        sift_down(a, 0, end, size, cmp);
    }
}

/* ---- the first repeated key ---- */

static int key_cmp(const void *ctx, mlrt__key_fn key, size_t a, size_t b) {
    size_t na, nb;
    const char *x = key(ctx, a, &na), *y = key(ctx, b, &nb);
    int c = memcmp(x, y, na < nb ? na : nb);
    return c ? c : (na > nb) - (na < nb);
}

/* By key, then index: a total order, so that each key's indices come out ascending. */
static int index_cmp(const void *ctx, mlrt__key_fn key, uint32_t a, uint32_t b) {
    int c = key_cmp(ctx, key, a, b);
    return c ? c : (a > b) - (a < b);
}

static void sift_index(const void *ctx, mlrt__key_fn key, uint32_t *v, size_t i, size_t n) {
    for (size_t child; (child = 2 * i + 1) < n; i = child) {
        if (child + 1 < n && index_cmp(ctx, key, v[child], v[child + 1]) < 0) child++;
        if (index_cmp(ctx, key, v[i], v[child]) >= 0) return;
        uint32_t t = v[i];
        v[i] = v[child], v[child] = t;
    }
}

/* The indices sorted by key (v: [n] scratch); of each key that repeats, its first two indices: the pair
 * whose second comes first. */
static void repeat_sorted(size_t n, const void *ctx, mlrt__key_fn key, uint32_t *v, size_t *first, size_t *again) {
    for (size_t i = 0; i < n; i++) v[i] = (uint32_t)i;
    for (size_t i = n / 2; i-- > 0;) sift_index(ctx, key, v, i, n);
    for (size_t end = n - 1; end > 0; end--) {
        uint32_t t = v[0];
        v[0] = v[end], v[end] = t;
        sift_index(ctx, key, v, 0, end);
    }
    for (size_t i = 1; i < n; i++)
        if (!key_cmp(ctx, key, v[i - 1], v[i]) && (i == 1 || key_cmp(ctx, key, v[i - 2], v[i - 1])) && v[i] < *again)
            *first = v[i - 1], *again = v[i];
}

bool mlrt__first_repeat(size_t n, const void *ctx, mlrt__key_fn key, size_t *first, size_t *again) {
    *first = *again = SIZE_MAX;
    if (n < 2) return true;
    size_t cap = 4, probes = 0, i = 0;
    while (cap < 2 * n) cap *= 2;
    uint32_t *set = calloc(cap, sizeof *set); /* index + 1, or 0: empty */
    if (!set) return false;
    for (; i < n && *again == SIZE_MAX && probes <= 8 * n; i++) {
        size_t len;
        const char *k = key(ctx, i, &len);
        size_t at = mlrt__repeat_slot(k, len, cap);
        for (; set[at]; at = (at + 1) & (cap - 1), probes++)
            if (!key_cmp(ctx, key, set[at] - 1, i)) *first = set[at] - 1, *again = i;
        set[at] = (uint32_t)i + 1;
    }
    if (*again == SIZE_MAX && i < n) repeat_sorted(n, ctx, key, set, first, again); /* (set: cap >= 2n of scratch) */
    free(set);
    return true;
}
