/* model/classic.c — trees, forests and k-means as runnable models: prediction, labels, facts.
 *
 * Outputs, per row (mlrt_task):
 *   decision tree classifier   one-hot of the leaf's class, in class order
 *   random forest classifier   votes[c] / trees, in class order (aprender's predict_proba)
 *   tree / forest regressor    one value: the leaf's; a forest's sum over trees in tree order, in f32,
 *                              divided by the tree count
 *   k-means                    the squared distance to each centroid
 * Labels: the class with the most votes (ties: the smallest label), the nearest centroid (ties:
 * the lowest index; strict <, so NaN never wins). */
#include "../internal.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TREE_TILE 256 /* rows per tile: each tree is walked for all of them before the next tree */

void mlrt__forest_free(mlrt__forest *f) {
    if (!f) return;
    free(f->nodes);
    free(f->root);
    free(f->depth);
    free(f->classes);
    free(f->at);
    free(f);
}

void mlrt__kmeans_free(mlrt__kmeans *km) {
    if (!km) return;
    free(km->c);
    free(km);
}

static mlrt_model *new_model(mlrt_kind kind, mlrt_task task, uint32_t in, uint32_t out, mlrt_error *err) {
    mlrt_model *m = calloc(1, sizeof *m);
    if (!m) {
        mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "out of memory for the model");
        return NULL;
    }
    m->format = MLRT_FORMAT_APR;
    m->kind = kind;
    m->task = task;
    m->dtype = MLRT_F32;
    m->in_size = in;
    m->out_size = out;
    return m;
}

enum { LABEL_ROWS = 64 }; /* rows per predict_labels tile */

mlrt_status mlrt__model_label_scratch(mlrt_model *m) {
    if (m->task == MLRT_TASK_REGRESSION) return MLRT_OK;
    size_t per = MLRT__SCRATCH_BYTES / 4 / m->out_size;
    m->label_rows = per < LABEL_ROWS ? (per ? (uint32_t)per : 1) : LABEL_ROWS;
    m->label_scores = malloc((size_t)m->label_rows * m->out_size * sizeof *m->label_scores);
    return m->label_scores ? MLRT_OK : MLRT_ERR_OUT_OF_MEMORY;
}

/* The JSON string of info; frees m and fails when it cannot be made. */
static mlrt_model *finish(mlrt_model *m, mlrt__payload_desc desc, const mlrt__tensorset *ts, mlrt_error *err) {
    mlrt__buf b = {0};
    if (mlrt__model_label_scratch(m)) b.oom = true;
    mlrt__buf_printf(&b, "{\"format\":\"apr\",\"kind\":\"%s\"", mlrt_kind_name(m->kind));
    m->payload = desc;
    mlrt__model_facts_json(&b, m);
    mlrt__buf_printf(&b, ",\"inputSize\":%u,\"outputSize\":%u,\"dtype\":\"F32\",\"params\":%llu,\"weightBytes\":%llu,"
                        "\"layers\":[],\"metadata\":",
                    m->in_size, m->out_size, (unsigned long long)mlrt_param_count(m),
                    (unsigned long long)(m->forest ? (uint64_t)m->forest->n_nodes * sizeof(mlrt__tree_node) +
                                                         (uint64_t)m->forest->n_trees * 8 + m->forest->n_classes * 4
                                                   : (uint64_t)(m->kmeans->k + 3) / 4 * 4 * m->kmeans->dim * 4));
    mlrt__json_metadata(&b, ts);
    if (ts && ts->extra_json) {
        mlrt__buf_puts(&b, ",");
        mlrt__buf_puts(&b, ts->extra_json);
    }
    mlrt__buf_puts(&b, "}");
    if (b.oom) {
        free(b.data);
        mlrt_free(m);
        mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "out of memory for the model");
        return NULL;
    }
    m->info_json = b.data;
    return m;
}

mlrt_model *mlrt__model_forest(mlrt_kind kind, uint32_t in_size, mlrt__forest *f, mlrt__payload_desc desc,
                              const mlrt__tensorset *ts, mlrt_error *err) {
    uint32_t out = f->regression ? 1 : f->n_classes;
    mlrt_model *m = new_model(kind, f->regression ? MLRT_TASK_REGRESSION : MLRT_TASK_CLASSIFICATION, in_size, out, err);
    if (!m || !(f->at = malloc((f->n_trees > TREE_TILE ? f->n_trees : TREE_TILE) * sizeof *f->at))) {
        mlrt__forest_free(f);
        if (m) mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "out of memory for the model");
        free(m);
        return NULL;
    }
    m->forest = f;
    m->n_classes = f->n_classes;
    m->classes = f->classes; /* shared: freed with the forest */
    return finish(m, desc, ts, err);
}

mlrt_model *mlrt__model_kmeans(mlrt__kmeans *km, mlrt__payload_desc desc, const mlrt__tensorset *ts, mlrt_error *err) {
    mlrt_model *m = new_model(MLRT_KIND_KMEANS, MLRT_TASK_CLUSTERING, km->dim, km->k, err);
    if (!m) {
        mlrt__kmeans_free(km);
        return NULL;
    }
    m->kmeans = km;
    return finish(m, desc, ts, err);
}

void mlrt__model_facts_json(mlrt__buf *b, const mlrt_model *m) {
    mlrt__buf_printf(b, ",\"task\":\"%s\"", mlrt_task_name(m->task));
    if (m->task == MLRT_TASK_CLASSIFICATION) {
        mlrt__buf_puts(b, ",\"classes\":[");
        for (uint32_t i = 0; i < m->n_classes; i++) mlrt__buf_printf(b, "%s%u", i ? "," : "", m->classes[i]);
        mlrt__buf_puts(b, "]");
    }
    if (m->forest)
        mlrt__buf_printf(b, ",\"trees\":{\"count\":%u,\"depth\":%u,\"nodes\":%u,\"leaves\":%u,\"nFeatures\":%u}",
                        m->forest->n_trees, m->forest->max_depth, m->forest->n_nodes, m->forest->n_leaves, m->in_size);
    if (m->kmeans) mlrt__buf_printf(b, ",\"clusters\":%u,\"nFeatures\":%u", m->kmeans->k, m->kmeans->dim);
    if (m->payload.estimator)
        mlrt__buf_printf(b, ",\"payload\":{\"estimator\":\"%s\",\"layout\":\"%s\"}", m->payload.estimator, m->payload.layout);
}

/* ------------------------------------------------------------ prediction */

/* out [rows][out_size] for rows < TREE_TILE. */
static void forest_tile(const mlrt_model *m, const float *x, size_t rows, float *out) {
    const mlrt__forest *f = m->forest;
    const size_t no = m->out_size;
    memset(out, 0, rows * no * sizeof *out);
    if (rows == 1) { /* one row: its leaf in every tree, trees side by side; then the same sums in tree order */
        mlrt__trees_walk_row(f->nodes, f->root, f->depth, f->n_trees, x, f->at);
        for (uint32_t t = 0; t < f->n_trees; t++) {
            if (f->regression) out[0] += f->nodes[f->at[t]].v.value;
            else out[f->nodes[f->at[t]].v.cls] += 1.0f;
        }
    }
    for (uint32_t t = 0; t < f->n_trees && rows > 1; t++) {
        mlrt__tree_walk(f->nodes, f->root[t], f->depth[t], x, m->in_size, rows, f->at);
        if (f->regression)
            for (size_t r = 0; r < rows; r++) out[r] += f->nodes[f->at[r]].v.value; /* f32, tree order */
        else
            for (size_t r = 0; r < rows; r++) out[r * no + f->nodes[f->at[r]].v.cls] += 1.0f; /* votes: exact */
    }
    if (m->kind == MLRT_KIND_RANDOM_FOREST) {
        const float n = (float)f->n_trees;
        for (size_t k = 0; k < rows * no; k++) out[k] /= n;
    }
}

/* predict for trees, forests and k-means (mlrt_predict_batch calls it). */
mlrt_status mlrt__classic_predict(mlrt_model *m, const float *in, size_t n, float *out, mlrt_error *err) {
    mlrt_status st = mlrt__check_rows(m, in, n, out, "predict", err);
    if (st) return st;
    if (m->kmeans) {
        mlrt__kmeans_distances(m->kmeans, in, n, out);
        for (size_t k = 0; k < n * m->out_size; k++) /* finite inputs and centroids can still overflow */
            if (!isfinite(out[k]))
                return mlrt__fail(err, MLRT_ERR_NON_FINITE, "predict: the distance of row %zu to centroid %zu overflowed",
                                 k / m->out_size, k % m->out_size);
        return MLRT_OK;
    }
    for (size_t r = 0; r < n; r += TREE_TILE) {
        size_t rows = n - r < TREE_TILE ? n - r : TREE_TILE;
        forest_tile(m, in + r * m->in_size, rows, out + r * m->out_size);
    }
    return MLRT_OK;
}

/* Index of the best score: the first maximum (the smallest label); 0 when every score is NaN. */
static size_t argmax(const float *s, size_t n) {
    size_t best = 0;
    for (size_t i = 1; i < n; i++)
        if (s[i] > s[best] || (s[best] != s[best] && s[i] == s[i])) best = i;
    return best;
}

/* Index of the smallest distance, as aprender: strict <, from +inf, so ties go low and NaN never wins. */
static size_t argmin(const float *d, size_t n) {
    size_t best = 0;
    float min = INFINITY;
    for (size_t i = 0; i < n; i++)
        if (d[i] < min) min = d[i], best = i;
    return best;
}

mlrt_status mlrt_predict_labels(mlrt_model *m, const float *in, size_t n, uint32_t *labels, mlrt_error *err) {
    mlrt_status st = mlrt__check_rows(m, in, n, labels, "predict_labels", err);
    if (st) return st;
    if (m->task == MLRT_TASK_REGRESSION)
        return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT,
                         "predict_labels: a %s regressor predicts values, not labels: use predict", mlrt_kind_name(m->kind));
    size_t no = m->out_size, tile = m->label_rows;
    float *scores = m->label_scores;
    for (size_t r = 0; r < n && !st; r += tile) {
        size_t rows = n - r < tile ? n - r : tile;
        st = mlrt_predict_batch(m, in + r * m->in_size, rows, scores, err);
        for (size_t k = 0; k < rows && !st; k++) {
            const float *s = scores + k * no;
            if (m->task == MLRT_TASK_CLUSTERING) labels[r + k] = (uint32_t)argmin(s, no);
            else if (no == 1 && m->n_classes == 2) labels[r + k] = m->classes[s[0] >= 0.5f]; /* p(class 1) */
            else labels[r + k] = m->classes[argmax(s, no)];
        }
    }
    return st;
}
