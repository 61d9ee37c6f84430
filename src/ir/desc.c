/* ir/desc.c — freeing and reading the neutral descriptions. */
#include "ir.h"
#include <stdlib.h>
#include <string.h>

void mlrt__tensorset_free(mlrt__tensorset *ts) {
    for (size_t i = 0; i < ts->count; i++) free(ts->tensors[i].name);
    for (size_t i = 0; i < ts->meta_count; i++) {
        free(ts->meta[i].key);
        free(ts->meta[i].value);
    }
    free(ts->tensors);
    free(ts->meta);
    free(ts->meta_json);
    free(ts->extra_json);
    memset(ts, 0, sizeof *ts);
}

const mlrt__tensor *mlrt__tensorset_find(const mlrt__tensorset *ts, const char *name) {
    size_t n = strlen(name);
    for (size_t i = 0; i < ts->count; i++)
        if (ts->tensors[i].name_len == n && memcmp(ts->tensors[i].name, name, n) == 0) return &ts->tensors[i];
    return NULL;
}

const char *mlrt__tensorset_meta(const mlrt__tensorset *ts, const char *key) {
    size_t n = strlen(key);
    for (size_t i = 0; i < ts->meta_count; i++)
        if (ts->meta[i].key_len == n && memcmp(ts->meta[i].key, key, n) == 0) return ts->meta[i].value;
    return NULL;
}

void mlrt__json_metadata(mlrt__buf *b, const mlrt__tensorset *ts) {
    if (ts && ts->meta_json) { mlrt__buf_puts(b, ts->meta_json); return; }
    mlrt__buf_puts(b, "{");
    for (size_t i = 0; ts && i < ts->meta_count; i++) {
        if (i) mlrt__buf_puts(b, ",");
        mlrt__buf_json_string(b, ts->meta[i].key, ts->meta[i].key_len);
        mlrt__buf_puts(b, ":");
        mlrt__buf_json_string(b, ts->meta[i].value, ts->meta[i].value_len);
    }
    mlrt__buf_puts(b, "}");
}

void mlrt__forest_free(mlrt__forest *f) {
    if (!f) return;
    free(f->nodes);
    free(f->root);
    free(f->depth);
    free(f->classes);
    free(f);
}

void mlrt__kmeans_free(mlrt__kmeans *km) {
    if (!km) return;
    free(km->c);
    free(km);
}

void mlrt__desc_free(mlrt__desc *d) {
    mlrt__forest_free(d->forest);
    mlrt__kmeans_free(d->kmeans);
    free(d->owned);
    d->forest = NULL, d->kmeans = NULL, d->owned = NULL;
}

void mlrt__ir_graph_free(mlrt__ir_graph *g) {
    if (!g) return;
    for (uint32_t k = 0; g->vals && k < g->n_vals; k++) free(g->vals[k].data);
    free(g->vals), free(g->ops), free(g->inputs), free(g->outputs), free(g->syms), free(g->facts_json);
    free(g->ids), free(g->strings);
    memset(g, 0, sizeof *g);
}

void mlrt__enc_desc_free(mlrt__enc_desc *d) {
    free(d->layer), free(d->facts_json), free(d->prompt), free(d->dir);
    memset(d, 0, sizeof *d);
}
