/* model/graph_build.h — what the planner's files share while an ONNX graph becomes a plan. */
#ifndef MLRT__GRAPH_BUILD_H
#define MLRT__GRAPH_BUILD_H
#include "graph.h"

typedef struct bld {
    mlrt__onnx *g;
    mlrt__graph *gr;
    int32_t *vmap;                  /* [g->n_values] file value -> plan value, -1 until planned */
    uint32_t *uses;                 /* [g->n_values] node inputs reading it (+2^20 for a graph output) */
    uint32_t cap_vals, cap_ops;
    uint32_t node;                  /* the node being planned */
    bool mixes_batch;               /* batch mode failed at an op that mixes samples */
    mlrt_error *err;
} bld;

mlrt_status mlrt__bld_fail(bld *b, mlrt_status code, const char *fmt, ...);
mlrt_status mlrt__bld_rows_apart(bld *b, bool ok, const char *why);
int32_t mlrt__bld_val(bld *b, uint32_t rank, const int64_t *dims);
int32_t mlrt__bld_const(bld *b, uint32_t rank, const int64_t *dims, float *f, int64_t *i);
mlrt__gop *mlrt__bld_op(bld *b, mlrt__gop_kind kind, int32_t out);
mlrt_status mlrt__bld_attr(bld *b, const char *name, uint32_t type, const mlrt__onnx_attr **a);
mlrt_status mlrt__bld_int(bld *b, const char *name, int64_t def, int64_t *v);
mlrt_status mlrt__bld_float(bld *b, const char *name, float def, float *v);
mlrt_status mlrt__bld_ints(bld *b, const char *name, uint32_t n, const int64_t **v, uint32_t *got);
int32_t mlrt__bld_in(bld *b, uint32_t k);
mlrt_status mlrt__bld_arity(bld *b, uint32_t lo, uint32_t hi);
mlrt_status mlrt__bld_const_ints(bld *b, uint32_t k, const int64_t **v, uint64_t *n);
mlrt_status mlrt__bld_const_scalar(bld *b, uint32_t k, float def, float *v);
mlrt_status mlrt__bld_axis(bld *b, int64_t axis, uint32_t rank, uint32_t *out);
void mlrt__bld_set_out(bld *b, int32_t v);
mlrt_status mlrt__bld_reshaped(bld *b, int32_t in, uint32_t rank, const int64_t *dims);
uint64_t mlrt__dims_prod(const int64_t *d, uint32_t from, uint32_t to);
/* How many node inputs read the current node's input k (for fusion: 1 means only this node). */
uint32_t mlrt__bld_in_uses(bld *b, uint32_t k);
/* Emits op (inputs and geometry set) and, when all its inputs are constants, runs it now: its
 * output becomes a constant. */
mlrt_status mlrt__bld_finish(bld *b, mlrt__gop *op);

/* graph.c */
mlrt_status mlrt__bld_nodes(bld *b);
/* graph_plan.c: nodes, then packing and the arena */
mlrt_status mlrt__bld_plan(bld *b);
mlrt_model *mlrt__graph_model(const mlrt__onnx *g, mlrt__graph *gr, mlrt_error *err);

/* graph_ops.c: one planner per op (the node is b->node) */
mlrt_status mlrt__op_gemm(bld *b);
mlrt_status mlrt__op_matmul(bld *b);
mlrt_status mlrt__op_conv(bld *b);
mlrt_status mlrt__op_pool(bld *b);
mlrt_status mlrt__op_binary(bld *b);
mlrt_status mlrt__op_unary(bld *b);
mlrt_status mlrt__op_softmax(bld *b);
mlrt_status mlrt__op_batchnorm(bld *b);
mlrt_status mlrt__op_flatten(bld *b);
mlrt_status mlrt__op_reshape(bld *b);
mlrt_status mlrt__op_transpose(bld *b);
mlrt_status mlrt__op_squeeze(bld *b);
mlrt_status mlrt__op_concat(bld *b);
mlrt_status mlrt__op_identity(bld *b);
mlrt_status mlrt__op_constant(bld *b);
mlrt_status mlrt__op_shape(bld *b);
mlrt_status mlrt__op_gather(bld *b);
mlrt_status mlrt__op_pad(bld *b);
mlrt_status mlrt__op_cast(bld *b);
mlrt_status mlrt__op_slice(bld *b);
#endif
