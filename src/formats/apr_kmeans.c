/* formats/apr_kmeans.c — aprender's KMeans (0x0006) and NgramLm (0x0010) .apr v1 payloads.
 *
 *   KMeans   usize n_clusters, usize max_iter, f32 tol, Option<u64> random_state,
 *            Option<Matrix<f32>> centroids (Vec<f32>, rows, cols), Option<Vec<usize>> labels,
 *            f32 inertia, usize n_iter, then usize n_init in the current layout (none in the legacy
 *            one): the two differ by exactly 8 trailing bytes.
 *   NgramLm  aprender-shell's MarkovModel: usize n, HashMap<String, HashMap<String, u32>> ngrams,
 *            HashMap<String, u32> command_freq, usize total_commands, usize last_trained_pos.
 *            A command-suggestion model: described for inspect, never run (its suggestion order
 *            depends on Rust's random HashMap order).
 * Policy: non-finite centroids and unfitted models (centroids None) are refused. */
#include "formats.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FMT "apr: KMeans"

static mlrt_status invariant(mlrt_error *err, mlrt_status code, const char *what, uint64_t a, uint64_t b) {
    return mlrt__fail(err, code, FMT " payload: %s (%llu vs %llu)", what, (unsigned long long)a, (unsigned long long)b);
}

mlrt_status mlrt__read_apr_kmeans(const uint8_t *raw, size_t n, mlrt__desc *d, mlrt_error *err) {
    mlrt__bincode c = {raw, n, 0, "KMeans", err};
    uint64_t k = 0, max_iter = 0, seed, count = 0, rows = 0, cols = 0, n_labels = 0, n_iter = 0, n_init = 1;
    float tol, inertia;
    bool has_seed = false, fitted = false, has_labels = false;
    const uint8_t *data = NULL, *labels = NULL;
    mlrt_status st = mlrt__bc_u64(&c, "n_clusters", &k);
    if (!st) st = mlrt__bc_u64(&c, "max_iter", &max_iter);
    if (!st) st = mlrt__bc_f32(&c, "tol", &tol);
    if (!st) st = mlrt__bc_opt_u64(&c, "random_state", &has_seed, &seed);
    if (!st) st = mlrt__bc_tag(&c, "the centroids' Option tag", &fitted);
    if (!st && fitted) st = mlrt__bc_vec(&c, "centroids", 4, "floats", &data, &count);
    if (!st && fitted) st = mlrt__bc_u64(&c, "centroids rows", &rows);
    if (!st && fitted) st = mlrt__bc_u64(&c, "centroids cols", &cols);
    if (!st) st = mlrt__bc_tag(&c, "the labels' Option tag", &has_labels);
    if (!st && has_labels) st = mlrt__bc_vec(&c, "labels", 8, "labels", &labels, &n_labels);
    if (!st) st = mlrt__bc_f32(&c, "inertia", &inertia);
    if (!st) st = mlrt__bc_u64(&c, "n_iter", &n_iter);
    bool current = !st && n - c.pos == 8; /* the n_init field of the current layout */
    if (current) st = mlrt__bc_u64(&c, "n_init", &n_init);
    if (!st && c.pos != n)
        st = mlrt__fail(err, MLRT_ERR_BAD_PAYLOAD,
                       FMT " payload is %zu bytes: the legacy layout ends at byte %zu, the current one (with n_init) at byte %zu",
                       n, c.pos, c.pos + 8);
    uint64_t cells = 0;
    if (!st && !fitted) st = mlrt__fail(err, MLRT_ERR_NOT_A_MODEL, FMT " has no centroids: it was never fitted");
    if (!st && (k == 0 || k > MLRT__MAX_DIM))
        st = mlrt__fail(err, MLRT_ERR_BAD_DIMENSIONS, FMT " payload: n_clusters is %llu; mlrt needs 1..%u", (unsigned long long)k, MLRT__MAX_DIM);
    if (!st && rows != k) st = invariant(err, MLRT_ERR_BAD_PAYLOAD, "the centroids' rows differ from n_clusters", rows, k);
    if (!st && (cols == 0 || cols > MLRT__MAX_DIM))
        st = mlrt__fail(err, MLRT_ERR_BAD_DIMENSIONS, FMT " payload: the centroids have %llu columns; mlrt needs 1..%u",
                       (unsigned long long)cols, MLRT__MAX_DIM);
    if (!st && (!mlrt__mul_u64(rows, cols, &cells) || cells != count))
        st = mlrt__fail(err, MLRT_ERR_SIZE_MISMATCH, FMT " payload: the centroids hold %llu floats, not %llu rows x %llu cols",
                       (unsigned long long)count, (unsigned long long)rows, (unsigned long long)cols);
    if (!st && cells > MLRT__MAX_PARAMS)
        st = invariant(err, MLRT_ERR_BAD_DIMENSIONS, "more centroid coordinates than mlrt's limit", cells, MLRT__MAX_PARAMS);
    for (uint64_t i = 0; i < n_labels && !st; i++)
        if (mlrt__rd_u64(labels + 8 * i) >= k)
            st = mlrt__fail(err, MLRT_ERR_BAD_PAYLOAD, FMT " payload: training label %llu is %llu, not a cluster below %llu",
                           (unsigned long long)i, (unsigned long long)mlrt__rd_u64(labels + 8 * i), (unsigned long long)k);
    if (!st && n_iter > max_iter) st = invariant(err, MLRT_ERR_BAD_PAYLOAD, "n_iter exceeds max_iter", n_iter, max_iter);
    if (!st && current && n_init == 0) st = mlrt__fail(err, MLRT_ERR_BAD_PAYLOAD, FMT " payload: n_init is 0; aprender keeps it >= 1");
    if (st) return st;
    mlrt__kmeans *km = calloc(1, sizeof *km);
    if (!km || !(km->c = malloc((size_t)cells * sizeof *km->c))) {
        free(km);
        return mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, FMT ": out of memory for %llu centroid coordinates", (unsigned long long)cells);
    }
    km->k = (uint32_t)k;
    km->dim = (uint32_t)cols;
    memcpy(km->c, data, (size_t)cells * sizeof *km->c);
    for (size_t i = 0; i < cells; i++)
        if (!isfinite(km->c[i])) {
            mlrt__kmeans_free(km);
            return mlrt__fail(err, MLRT_ERR_NON_FINITE, FMT " payload: centroid %zu coordinate %zu is not finite", i / cols,
                              i % cols);
        }
    d->type = MLRT__DESC_KMEANS, d->kind = MLRT_KIND_KMEANS, d->kmeans = km;
    d->payload = (mlrt__payload_desc){"KMeans", current ? "current" : "legacy"};
    return MLRT_OK;
}

/* ---------------------------------------------------------------- NgramLm */

/* A HashMap<String, u32>: *entries = its entry count. */
static mlrt_status string_counts(mlrt__bincode *c, const char *what, uint64_t *entries) {
    mlrt_status st = mlrt__bc_u64(c, what, entries);
    for (uint64_t i = 0; i < *entries && !st; i++) {
        const uint8_t *s = NULL;
        uint64_t len;
        uint32_t count;
        if (!(st = mlrt__bc_string(c, what, &s, &len))) st = mlrt__bc_u32(c, what, &count);
    }
    return st;
}

mlrt_status mlrt__apr_ngram_describe(const uint8_t *raw, size_t n, char **json, mlrt_error *err) {
    mlrt__bincode c = {raw, n, 0, "NgramLm", err};
    uint64_t order = 0, contexts = 0, transitions = 0, commands = 0, total = 0, pos = 0;
    *json = NULL;
    mlrt_status st = mlrt__bc_u64(&c, "n", &order);
    if (!st) st = mlrt__bc_u64(&c, "ngrams", &contexts);
    for (uint64_t i = 0; i < contexts && !st; i++) {
        const uint8_t *s = NULL;
        uint64_t len, next = 0;
        if (!(st = mlrt__bc_string(&c, "an n-gram context", &s, &len))) st = string_counts(&c, "an n-gram's next tokens", &next);
        transitions += next;
    }
    if (!st) st = string_counts(&c, "command_freq", &commands);
    if (!st) st = mlrt__bc_u64(&c, "total_commands", &total);
    if (!st) st = mlrt__bc_u64(&c, "last_trained_pos", &pos);
    if (!st) st = mlrt__bc_consumed(&c);
    if (!st && (order < 2 || order > 5))
        st = mlrt__fail(err, MLRT_ERR_BAD_PAYLOAD, "apr: NgramLm payload: n is %llu; aprender-shell keeps it in 2..5",
                       (unsigned long long)order);
    if (st) return st;
    mlrt__buf b = {0};
    mlrt__buf_printf(&b, "\"ngram\":{\"estimator\":\"MarkovModel\",\"n\":%llu,\"contexts\":%llu,\"transitions\":%llu,"
                        "\"commands\":%llu,\"totalCommands\":%llu,\"lastTrainedPos\":%llu}",
                    (unsigned long long)order, (unsigned long long)contexts, (unsigned long long)transitions,
                    (unsigned long long)commands, (unsigned long long)total, (unsigned long long)pos);
    if (b.oom) {
        free(b.data);
        return mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "apr: out of memory");
    }
    *json = b.data;
    return MLRT_OK;
}
