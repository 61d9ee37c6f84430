/* base/sort.c — heapsort for the readers' checks (duplicate keys, tensor offsets, class labels). */
#include "base.h"
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
