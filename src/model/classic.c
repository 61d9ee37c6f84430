/* model/classic.c — trees, forests and k-means as runnable models: prediction, labels, facts.
 *
 * Outputs, per row (mlrt_task):
 *   decision tree classifier   one-hot of the leaf's class, in class order
 *   random forest classifier   votes[c] / trees, in class order (aprender's predict_proba)
 *   tree / forest regressor    one value: the leaf's; a forest's sum over trees in tree order, in f32,
 *                              divided by the tree count
 *   k-means                    the squared distance to each centroid
 * Labels: the class with the most votes (ties: the smallest label), the nearest centroid (ties:
 * the lowest index; strict <, so NaN never wins). A distance that overflows f32 is +inf; a row is
 * refused only when every distance overflows (it then has no nearest centroid). */
#include "model.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TREE_TILE 256 /* rows per tile: each tree is walked for all of them before the next tree */

_Static_assert(sizeof(mlrt__tree_node) == 16, "the tree walkers read a node as four u32 (kernels/kernels.h)");

typedef struct classic {
    mlrt__forest *forest;           /* decision tree / random forest, else NULL */
    uint32_t *at;                   /* [max(TREE_TILE, n_trees)] scratch: each row's node while walking a tree, or each
                                     * tree's leaf for a single row */
    mlrt__kmeans *kmeans;           /* k-means, else NULL */
    float *c4;                      /* k-means: the centroids four side by side [ceil(k/4)][dim][4] (kernels/kernels.h) */
} classic;

static void classic_free(mlrt_model *m) {
    classic *s = m->impl;
    if (!s) return;
    mlrt__forest_free(s->forest);
    mlrt__kmeans_free(s->kmeans);
    free(s->at), free(s->c4), free(s);
}

/* ------------------------------------------------------------ prediction */

/* out [rows][out_size] for rows < TREE_TILE. */
static void forest_tile(const mlrt_model *m, const float *x, size_t rows, float *out) {
    const classic *s = m->impl;
    const mlrt__forest *f = s->forest;
    const uint32_t *nodes = (const uint32_t *)f->nodes;
    const size_t no = m->out_size;
    memset(out, 0, rows * no * sizeof *out);
    if (rows == 1) { /* one row: its leaf in every tree, trees side by side; then the same sums in tree order */
        mlrt__trees_walk_row(nodes, f->root, f->depth, f->n_trees, x, s->at);
        for (uint32_t t = 0; t < f->n_trees; t++) {
            if (f->regression) out[0] += f->nodes[s->at[t]].v.value;
            else out[f->nodes[s->at[t]].v.cls] += 1.0f;
        }
    }
    for (uint32_t t = 0; t < f->n_trees && rows > 1; t++) {
        mlrt__tree_walk(nodes, f->root[t], f->depth[t], x, m->in_size, rows, s->at);
        if (f->regression)
            for (size_t r = 0; r < rows; r++) out[r] += f->nodes[s->at[r]].v.value; /* f32, tree order */
        else
            for (size_t r = 0; r < rows; r++) out[r * no + f->nodes[s->at[r]].v.cls] += 1.0f; /* votes: exact */
    }
    if (m->kind == MLRT_KIND_RANDOM_FOREST) {
        const float n = (float)f->n_trees;
        for (size_t k = 0; k < rows * no; k++) out[k] /= n;
    }
}

static mlrt_status classic_predict(mlrt_model *m, const float *in, size_t n, float *out, mlrt_error *err) {
    const classic *s = m->impl;
    /* trees take NaN and infinities (comparisons decide); k-means needs finite inputs */
    mlrt_status st = mlrt__check_rows(m, in, n, out, s->kmeans != NULL, "predict", err);
    if (st) return st;
    if (s->kmeans) {
        const size_t k = s->kmeans->k;
        mlrt__kmeans_distances(s->c4, k, s->kmeans->dim, in, n, out);
        for (size_t r = 0; r < n; r++) { /* a distance may overflow to +inf, but then another must be finite */
            size_t q = 0;
            while (q < k && isinf(out[r * k + q])) q++;
            if (q == k)
                return mlrt__fail(err, MLRT_ERR_NON_FINITE, "predict: every distance of row %zu to the %zu centroids "
                                  "overflowed f32", r, k);
        }
        return MLRT_OK;
    }
    for (size_t r = 0; r < n; r += TREE_TILE) {
        size_t rows = n - r < TREE_TILE ? n - r : TREE_TILE;
        forest_tile(m, in + r * m->in_size, rows, out + r * m->out_size);
    }
    return MLRT_OK;
}

/* ------------------------------------------------------------ facts */

static void classic_facts(mlrt__buf *b, const mlrt_model *m) {
    const classic *s = m->impl;
    if (s->forest)
        mlrt__buf_printf(b, ",\"trees\":{\"count\":%u,\"depth\":%u,\"nodes\":%u,\"leaves\":%u,\"nFeatures\":%u}",
                         s->forest->n_trees, s->forest->max_depth, s->forest->n_nodes, s->forest->n_leaves, m->in_size);
    if (s->kmeans) mlrt__buf_printf(b, ",\"clusters\":%u,\"nFeatures\":%u", s->kmeans->k, s->kmeans->dim);
}

/* Trees: nodes; k-means: centroid coordinates. */
static uint64_t classic_params(const mlrt_model *m) {
    const classic *s = m->impl;
    return s->forest ? s->forest->n_nodes : (uint64_t)s->kmeans->k * s->kmeans->dim;
}

static uint64_t classic_weight_bytes(const mlrt_model *m) {
    const classic *s = m->impl;
    return s->forest ? (uint64_t)s->forest->n_nodes * sizeof(mlrt__tree_node) + (uint64_t)s->forest->n_trees * 8 +
                           (uint64_t)m->n_classes * 4
                     : (uint64_t)(s->kmeans->k + 3) / 4 * 4 * s->kmeans->dim * 4;
}

static const mlrt__family classic_family = {
    "classic", mlrt__run_rows, classic_predict, NULL, NULL, classic_free, classic_facts, classic_params,
    classic_weight_bytes, NULL,
};

/* ------------------------------------------------------------ building */

/* A model of the classic family around s; NULL (s freed) when out of memory. */
static mlrt_model *new_model(classic *s, const mlrt__desc *d, mlrt_task task, uint32_t in, uint32_t out, mlrt_error *err) {
    mlrt_model *m = mlrt__model_new(&classic_family, s, MLRT_FORMAT_APR, d->kind, err);
    if (!m) return NULL;
    m->payload = d->payload;
    if (mlrt__model_rows_io(m, in, out) || mlrt__model_labels(m, task, out)) {
        mlrt_free(m);
        mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "out of memory for the model");
        return NULL;
    }
    return m;
}

mlrt_model *mlrt__build_forest(mlrt__desc *d, mlrt_error *err) {
    classic *s = calloc(1, sizeof *s);
    mlrt__forest *f = d->forest;
    if (!s || !(s->at = malloc((f->n_trees > TREE_TILE ? f->n_trees : TREE_TILE) * sizeof *s->at))) {
        free(s);
        mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "out of memory for the model");
        return NULL;
    }
    s->forest = f, d->forest = NULL;
    uint32_t out = f->regression ? 1 : f->n_classes;
    mlrt_model *m = new_model(s, d, f->regression ? MLRT_TASK_REGRESSION : MLRT_TASK_CLASSIFICATION, f->n_features, out, err);
    if (!m) return NULL;
    m->classes = f->classes, f->classes = NULL; /* the model's now */
    return mlrt__model_finish(m, d->ts, err);
}

mlrt_model *mlrt__build_kmeans(mlrt__desc *d, mlrt_error *err) {
    mlrt__kmeans *km = d->kmeans;
    const size_t k = km->k, dim = km->dim;
    classic *s = calloc(1, sizeof *s);
    if (!s || !(s->c4 = calloc((k + 3) / 4 * 4 * dim, sizeof *s->c4))) {
        free(s);
        mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "out of memory for %zu centroid coordinates", k * dim);
        return NULL;
    }
    for (size_t q = 0; q < k; q++) /* four centroids side by side, one per SIMD lane */
        for (size_t j = 0; j < dim; j++) s->c4[(q / 4 * dim + j) * 4 + q % 4] = km->c[q * dim + j];
    s->kmeans = km, d->kmeans = NULL;
    mlrt_model *m = new_model(s, d, MLRT_TASK_CLUSTERING, km->dim, km->k, err);
    return m ? mlrt__model_finish(m, d->ts, err) : NULL;
}
