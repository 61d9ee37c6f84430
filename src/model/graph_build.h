/* model/graph_build.h — what the planner's files share while an ONNX graph becomes a plan. */
#ifndef MLRT_GRAPH_BUILD_H
#define MLRT_GRAPH_BUILD_H
#include "graph.h"

typedef struct bld {
    mlrt_onnx *g;
    mlrt_graph *gr;
    int32_t *vmap;                  /* [g->n_values] file value -> plan value, -1 until planned */
    uint32_t *uses;                 /* [g->n_values] node inputs reading it (+2^20 for a graph output) */
    uint32_t cap_vals, cap_ops;
    uint32_t node;                  /* the node being planned */
    bool mixes_batch;               /* batch mode failed at an op that mixes samples */
    mlrt_error *err;
} bld;

mlrt_status mlrt_bld_fail(bld *b, mlrt_status code, const char *fmt, ...);
mlrt_status mlrt_bld_rows_apart(bld *b, bool ok, const char *why);
int32_t mlrt_bld_val(bld *b, uint32_t rank, const int64_t *dims);
int32_t mlrt_bld_const(bld *b, uint32_t rank, const int64_t *dims, float *f, int64_t *i);
mlrt_gop *mlrt_bld_op(bld *b, mlrt_gop_kind kind, int32_t out);
mlrt_status mlrt_bld_attr(bld *b, const char *name, uint32_t type, const mlrt_onnx_attr **a);
mlrt_status mlrt_bld_int(bld *b, const char *name, int64_t def, int64_t *v);
mlrt_status mlrt_bld_float(bld *b, const char *name, float def, float *v);
mlrt_status mlrt_bld_ints(bld *b, const char *name, uint32_t n, const int64_t **v, uint32_t *got);
int32_t mlrt_bld_in(bld *b, uint32_t k);
mlrt_status mlrt_bld_arity(bld *b, uint32_t lo, uint32_t hi);
mlrt_status mlrt_bld_const_ints(bld *b, uint32_t k, const int64_t **v, uint64_t *n);
mlrt_status mlrt_bld_const_scalar(bld *b, uint32_t k, float def, float *v);
mlrt_status mlrt_bld_axis(bld *b, int64_t axis, uint32_t rank, uint32_t *out);
void mlrt_bld_set_out(bld *b, int32_t v);
mlrt_status mlrt_bld_reshaped(bld *b, int32_t in, uint32_t rank, const int64_t *dims);
uint64_t mlrt_dims_prod(const int64_t *d, uint32_t from, uint32_t to);
/* How many node inputs read the current node's input k (for fusion: 1 means only this node). */
uint32_t mlrt_bld_in_uses(bld *b, uint32_t k);
/* Emits op (inputs and geometry set) and, when all its inputs are constants, runs it now: its
 * output becomes a constant. */
mlrt_status mlrt_bld_finish(bld *b, mlrt_gop *op);

/* graph.c */
mlrt_status mlrt_bld_nodes(bld *b);
/* graph_plan.c: nodes, then packing and the arena */
mlrt_status mlrt_bld_plan(bld *b);
mlrt_model *mlrt_graph_model(const mlrt_onnx *g, mlrt_graph *gr, mlrt_error *err);

/* graph_ops.c: one planner per op (the node is b->node) */
mlrt_status mlrt_op_gemm(bld *b);
mlrt_status mlrt_op_matmul(bld *b);
mlrt_status mlrt_op_conv(bld *b);
mlrt_status mlrt_op_pool(bld *b);
mlrt_status mlrt_op_binary(bld *b);
mlrt_status mlrt_op_unary(bld *b);
mlrt_status mlrt_op_softmax(bld *b);
mlrt_status mlrt_op_batchnorm(bld *b);
mlrt_status mlrt_op_flatten(bld *b);
mlrt_status mlrt_op_reshape(bld *b);
mlrt_status mlrt_op_transpose(bld *b);
mlrt_status mlrt_op_squeeze(bld *b);
mlrt_status mlrt_op_concat(bld *b);
mlrt_status mlrt_op_identity(bld *b);
mlrt_status mlrt_op_constant(bld *b);
mlrt_status mlrt_op_shape(bld *b);
mlrt_status mlrt_op_gather(bld *b);
mlrt_status mlrt_op_pad(bld *b);
mlrt_status mlrt_op_cast(bld *b);
mlrt_status mlrt_op_slice(bld *b);
#endif
