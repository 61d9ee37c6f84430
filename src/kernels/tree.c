/* kernels/tree.c — decision-tree walks and k-means distances, bit for bit as aprender computes them.
 *
 * Trees: every node is 16 bytes (feature, threshold, left, right) and a leaf points to itself,
 * so one step is the same branch-free select for every row, at a split or at a leaf:
 *   n = x[n.feature] <= n.threshold ? n.left : n.right        (NaN compares false: goes right)
 * Rows walk a tree level by level, all rows of the tile at each level: the steps of different rows
 * are independent (the CPU overlaps their loads), and the tree stays in cache for the whole tile.
 * The walk stops early once every row sits in a leaf. A single row has no other rows to overlap
 * with: it walks eight trees side by side instead. Only comparisons: exact in every build.
 *
 * k-means: d[q] = sum_j (x[j] - c[q][j])^2, summed in f32 in j order like aprender. Four centroids
 * run side by side, one per SIMD lane; each lane does the same sub, mul and add in the same order
 * as the scalar loop, so SIMD128 and scalar builds give the same bits (no FMA: -ffp-contract=off). */
#include "kernels.h"

typedef float v4 __attribute__((vector_size(16)));
typedef float v4u __attribute__((vector_size(16), aligned(4)));

/* A node of the walkers' layout (kernels.h): the four u32 [feature, threshold bits, left, right]. */
typedef struct node { uint32_t feature; float threshold; uint32_t left, right; } node;
_Static_assert(sizeof(node) == 16, "a node is four u32");

void mlrt__tree_walk(const uint32_t *tree, uint32_t root, uint32_t depth, const float *x, size_t stride, size_t rows,
                     uint32_t *at) {
    const node *nodes = (const node *)tree;
    for (size_t r = 0; r < rows; r++) at[r] = root;
    for (uint32_t level = 0; level < depth; level++) {
        /* hot loop: one level for every row */
        for (size_t r = 0; r < rows; r++) {
            const node *n = &nodes[at[r]];
            at[r] = x[r * stride + n->feature] <= n->threshold ? n->left : n->right;
        }
        if ((level & 3) == 3 && level + 1 < depth) { /* every 4 levels: is every row in a leaf? */
            size_t r = 0;
            while (r < rows && nodes[at[r]].left == at[r]) r++;
            if (r == rows) return;
        }
    }
}

void mlrt__trees_walk_row(const uint32_t *tree, const uint32_t *root, const uint32_t *depth, uint32_t n_trees,
                          const float *x, uint32_t *leaf) {
    const node *nodes = (const node *)tree;
    enum { G = 8 };
    for (uint32_t t0 = 0; t0 < n_trees; t0 += G) {
        uint32_t g = n_trees - t0 < G ? n_trees - t0 : G, levels = 0, at[G];
        for (uint32_t j = 0; j < g; j++) {
            at[j] = root[t0 + j];
            if (depth[t0 + j] > levels) levels = depth[t0 + j];
        }
        /* hot loop: one level of g trees (a tree already in its leaf stays there) */
        for (uint32_t level = 0; level < levels; level++)
            for (uint32_t j = 0; j < g; j++) {
                const node *nd = &nodes[at[j]];
                at[j] = x[nd->feature] <= nd->threshold ? nd->left : nd->right;
            }
        for (uint32_t j = 0; j < g; j++) leaf[t0 + j] = at[j];
    }
}

void mlrt__kmeans_distances(const float *c4, size_t k, size_t dim, const float *x, size_t rows, float *d) {
    for (size_t r = 0; r < rows; r++, x += dim, d += k) {
        for (size_t q0 = 0; q0 < k; q0 += 4) {
            const float *c = c4 + q0 * dim; /* (q0/4 * dim) * 4 */
            v4 acc = {0, 0, 0, 0};
            /* hot loop: four centroids at once, coordinates in order */
            for (size_t j = 0; j < dim; j++) {
                v4 t = (v4){x[j], x[j], x[j], x[j]} - *(const v4u *)(c + 4 * j);
                acc = acc + t * t;
            }
            for (size_t l = 0; l < 4 && q0 + l < k; l++) d[q0 + l] = acc[l];
        }
    }
}
