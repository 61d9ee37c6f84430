/* model/graph_run.c — running a plan: each op through its row of the op table, on its values in the
 * arena, a tile of samples at a time; the arena is allocated by the first run. */
#include "graph.h"
#include <stdlib.h>
#include <string.h>

mlrt_status mlrt__graph_run(mlrt__graph *g, size_t rows, mlrt_error *err) {
    if (!g->arena) {
        g->arena = malloc(g->arena_units * 4 + 16);
        g->col = calloc(g->zeros_floats + g->col_floats + 4, sizeof(float)); /* the zeros stay zero */
        if (!g->arena || !g->col) {
            free(g->arena), free(g->col);
            g->arena = NULL, g->col = NULL;
            return mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "run: out of memory for the graph's %zu MiB of activations",
                              (g->arena_units + g->col_floats) >> 18);
        }
    }
    for (uint32_t k = 0; k < g->n_ops; k++) {
        const mlrt__gop *op = &g->ops[k];
        mlrt_status st = mlrt__op_table[op->kind]->run(g, op, rows, err);
        if (st) return st;
    }
    return MLRT_OK;
}
