/* model/graph.h — the graph family's own header: plans of a graph (ir/ir.h's mlrt__ir_graph), the
 * op table whose rows plan and run each kind of op, and what the rows share. Only model/graph*.c
 * include it (tests too).
 *
 * A plan is the graph for one set of dims: every value's shape inferred, constants folded, ops fused,
 * weights packed, computed values placed in one arena. In batch mode (the graph's inputs have a
 * symbolic or fixed-1 first dim, and no op mixes samples) dim 0 of every computed value is planned
 * as 1 and stands for the batch: a run takes a tile of many rows at once. A graph whose inputs have
 * other symbolic dims (a sequence length) gets one plan per set of their values, made when a run
 * first needs it; the plans share the packed weights (mlrt__gweights).
 *
 * Adding an op: a kind in ir/ir.h, a file model/graph_op_NAME.c with its row (mlrt__op_def), the row
 * in graph_ops.c's table, a kernel if it needs one (kernels/), and its import row in the format. */
#ifndef MLRT__GRAPH_H
#define MLRT__GRAPH_H
#include "model.h"

#define MLRT__BATCH_SYM INT64_MIN        /* a shape value that stands for the (symbolic) batch dimension */
#define MLRT__MAX_ACTIVATION (1u << 24)  /* elements in one computed value of one sample (64 MiB of floats) */
#define MLRT__MAX_ARENA (1u << 25)       /* 4-byte units of activations and scratch for one run of a plan (128 MiB) */
#define MLRT__GRAPH_MAX_LEN 4096         /* a varying dim (not the batch) at most */
#define MLRT__GRAPH_PLANS 4              /* plans a model keeps, one per set of varying dims */
/* A NUL-terminated name for "%.*s", cut to n bytes. */
#define MLRT__CUT(s, n) (int)(strlen(s) > (n) ? (n) : strlen(s)), (s)

/* A value of a plan: a constant, a graph input, or a tensor computed per run in the arena. */
typedef struct mlrt__gval {
    mlrt_dtype dtype;               /* MLRT_F32 or MLRT_I64 */
    uint32_t rank;
    int64_t dims[MLRT__MAX_RANK];   /* [rank]; batch mode: dims[0] of a value that is not constant stands for the rows */
    uint64_t count;                 /* product of dims (per sample in batch mode) */
    bool is_const, owned;           /* owned: the plan frees data (else the graph's or another value's) */
    bool graph_data;                /* constants: data is the graph's (stable across plans: packs may keep it) */
    void *data;                     /* constants: [count] (an I64 shape may hold MLRT__BATCH_SYM) */
    int32_t input;                  /* a graph input: its index; else -1 */
    int32_t alias;                  /* a view: the value whose storage it is (never a view itself), else -1 */
    size_t off;                     /* computed, not a view: where it starts in the arena, in 4-byte units */
    uint32_t last_use;              /* the last op that reads it */
    int32_t op;                     /* computed while planning: the op that writes it, or -1 */
} mlrt__gval;

typedef struct mlrt__gop {
    mlrt__op_kind kind;             /* its row of mlrt__op_table */
    uint32_t ir;                    /* the graph's op it comes from (messages, the weights it packed) */
    uint32_t n_in, n_out;
    int32_t *in, *out;              /* [n_in], [n_out] value ids (-1: absent); one block, owned */
    void *p;                        /* the parameters: its row's own struct (graph_op_*.c), owned */
} mlrt__gop;

/* A plan. */
typedef struct mlrt__graph {
    mlrt__gval *vals;               /* [n_vals] */
    mlrt__gop *ops;                 /* [n_ops] in run order */
    int32_t *inputs, *outputs;      /* [n_inputs], [n_outputs] value ids */
    uint32_t n_vals, n_ops, n_inputs, n_outputs;
    bool batched;                   /* dim 0 of the inputs is the batch: a run takes tile_rows rows at once */
    uint32_t tile_rows;             /* samples per run of the plan (batch mode), else 1 */
    int64_t *len;                   /* [graph's n_syms] the symbols' values it was planned for (batch: 1) */
    const void **x;                 /* [n_inputs] while running: each input's data for this tile */
    void *arena;                    /* [arena_units] 4-byte units: every computed value for tile_rows samples;
                                     * allocated by the first run (a load touches no activations) */
    float *col;                     /* [zeros_floats + col_floats] convolutions' scratch: zeros, then patches */
    size_t arena_units, col_floats, zeros_floats;
    uint64_t weight_bytes, params;
    uint64_t macs;                  /* multiply-adds (and window reads) per sample: the plan's cost */
} mlrt__graph;

/* Packed weights a model's plans share, per op of the graph (the first plan packs them). Each
 * row's own struct starts with this header. */
typedef struct mlrt__gpack {
    void (*release)(struct mlrt__gpack *w);
} mlrt__gpack;

/* The planner's state while it turns the graph into a plan. */
typedef struct mlrt__planner {
    const mlrt__ir_graph *ir;
    mlrt__graph *g;                 /* the plan being made */
    mlrt__gpack **packs;            /* [ir->n_ops] the model's packed weights (NULL: none yet) */
    int32_t *vmap;                  /* [ir->n_vals] graph value -> plan value, -1 until planned */
    uint32_t *uses;                 /* [ir->n_vals] op inputs reading it (+2^20: a graph output) */
    uint32_t cap_vals, cap_ops;
    uint32_t at;                    /* the graph's op being planned */
    const struct mlrt__op_def *def; /* its row of the op table (mlrt__plan_emit folds through it) */
    bool fixed_batch;               /* the inputs have a fixed first dim of 1 (an export with batch 1) */
    bool mixes_batch;               /* batch mode failed at an op that mixes samples */
    bool over_limit;                /* planning failed on an activation or arena limit */
    mlrt_error *err;
} mlrt__planner;

/* An output's shape, as an op's plan infers it. */
typedef struct mlrt__gshape {
    mlrt_dtype dtype;
    uint32_t rank;
    int64_t dims[MLRT__MAX_RANK];
} mlrt__gshape;

/* One row of the op table: what a kind of op does at each stage. */
typedef struct mlrt__op_def {
    const char *name;
    uint8_t min_in, max_in;         /* the op's inputs (255: any number) */
    uint8_t n_out;                  /* outputs it computes; others must be unused */
    uint8_t i64_in;                 /* bit k: input k may be an int64 tensor computed per run */
    /* import: checks the op against its inputs (shapes, constants) and makes its parameters (*p, its
     * own struct, allocated; NULL when it has none). */
    mlrt_status (*import)(mlrt__planner *pl, const mlrt__ir_op *op, void **p);
    /* shape: the outputs' element types and shapes (out [n_out]). */
    mlrt_status (*shape)(mlrt__planner *pl, const mlrt__ir_op *op, const void *p, mlrt__gshape *out);
    /* plan: fuses the op into the one before it, or emits it (mlrt__plan_emit: folded now when its inputs
     * are constants), or binds its outputs otherwise (a view); takes p. NULL: mlrt__plan_emit. */
    mlrt_status (*plan)(mlrt__planner *pl, const mlrt__ir_op *op, void *p, const mlrt__gshape *out);
    /* pack: after every op, its weights packed (shared through pl->packs) and its scratch sized. NULL: none. */
    mlrt_status (*pack)(mlrt__planner *pl, mlrt__gop *op);
    /* run: the op for `rows` samples (rows = 1 when folded at load). */
    mlrt_status (*run)(mlrt__graph *g, const mlrt__gop *op, size_t rows, mlrt_error *err);
    /* cost: multiply-adds (or elements read) per sample, and weights. */
    void (*cost)(const mlrt__graph *g, const mlrt__gop *op, uint64_t *macs, uint64_t *params);
    void (*free)(void *p);          /* the parameters (NULL: free()) */
} mlrt__op_def;
extern const mlrt__op_def *const mlrt__op_table[MLRT__OP_KIND_COUNT_];

/* The rows (graph_op_*.c) */
extern const mlrt__op_def mlrt__op_gemm, mlrt__op_matmul, mlrt__op_conv, mlrt__op_pool, mlrt__op_binary, mlrt__op_act,
    mlrt__op_softmax, mlrt__op_batchnorm, mlrt__op_layernorm, mlrt__op_flatten, mlrt__op_reshape, mlrt__op_squeeze,
    mlrt__op_unsqueeze, mlrt__op_identity, mlrt__op_transpose, mlrt__op_concat, mlrt__op_pad, mlrt__op_slice,
    mlrt__op_shape, mlrt__op_gather, mlrt__op_cast;

/* The parameters of the ops that multiply by weights (Gemm and MatMul as dense ops, Conv): their
 * weights as the graph has them, and what later ops fused in; packed after planning. Fusions
 * (an activation, a BatchNormalization, a bias Add, a Softmax) change only this. */
typedef struct mlrt__glinear {
    bool conv;                      /* a convolution (mlrt__gconv), else a dense op (mlrt__gdense) */
    uint32_t k_in, oc;              /* inputs per output, outputs (channels) */
    const float *w;                 /* dense: B [k_in][oc] ([oc][k_in] when w_trans) times alpha; conv: W [oc][k_in] */
    bool w_trans, w_graph;          /* w_graph: w (and c) is the graph's data, the same in every plan */
    float alpha, beta;
    const float *c;                 /* the bias: beta * c[o % c_count]; NULL: none */
    uint64_t c_count;
    float *bn_scale, *bn_shift;     /* [oc] a BatchNormalization folded in (owned), or NULL */
    mlrt_activation act;            /* after the bias */
    struct mlrt__gpacked *pack;     /* packed (pack): shared through pl->packs, or owned when own */
    bool own;
} mlrt__glinear;

/* A dense or convolution op's packed weights, and the recipe they were made from. */
typedef struct mlrt__gpacked {
    mlrt__gpack h;
    mlrt__glinear recipe;           /* (its BatchNormalization arrays copied and owned; pack NULL) */
    uint8_t form;                   /* convolutions: mlrt__conv_form */
    mlrt__dense dense;              /* a dense op's layer */
    float *cw, *cb;                 /* a convolution's weights in its form's layout, and bias [oc] */
} mlrt__gpacked;

/* Packs l's weights for op (graph_linear.c): the model's pack of the same recipe when it has one,
 * else packed now (kept for the model's next plans when its weights are the graph's). form: a
 * convolution's mlrt__conv_form and groups. */
mlrt_status mlrt__glinear_pack(mlrt__planner *pl, const mlrt__gop *op, mlrt__glinear *l, uint8_t form, uint32_t groups);
void mlrt__glinear_release(mlrt__glinear *l);

/* ---- what the rows share (graph_values.c) ---- */
/* A failure at the op being planned: "onnx: node 3 (Conv 'c1'): ...". */
mlrt_status mlrt__plan_fail(mlrt__planner *pl, mlrt_status code, const char *fmt, ...);
/* Refuses batch mode (ok false) where an op would mix the samples of a batch. */
mlrt_status mlrt__plan_rows_apart(mlrt__planner *pl, bool ok, const char *why);
/* Input k of the op as a plan value (-1: absent), and its value. */
int32_t mlrt__plan_in(const mlrt__planner *pl, const mlrt__ir_op *op, uint32_t k);
#define MLRT__PV(pl, id) (&(pl)->g->vals[id])
/* How many ops read input k (a graph output counts 2^20). */
uint32_t mlrt__plan_uses(const mlrt__planner *pl, const mlrt__ir_op *op, uint32_t k);
/* Input k, computed (not a constant, not int64) of rank lo..hi. */
mlrt_status mlrt__plan_computed(mlrt__planner *pl, const mlrt__ir_op *op, uint32_t k, uint32_t lo, uint32_t hi);
/* Input k (absent: fine), a constant float tensor; finite unless `packed` (packing checks those). */
mlrt_status mlrt__plan_const_float(mlrt__planner *pl, const mlrt__ir_op *op, uint32_t k, const char *what, bool packed);
/* Input k, a constant int64 vector (shapes, axes, pads). */
mlrt_status mlrt__plan_const_ints(mlrt__planner *pl, const mlrt__ir_op *op, uint32_t k, const int64_t **v, uint64_t *n);
/* Input k, a constant scalar (absent: def). */
mlrt_status mlrt__plan_const_scalar(mlrt__planner *pl, const mlrt__ir_op *op, uint32_t k, float def, float *v);
/* axis (negative: from the end) in [0, rank). */
mlrt_status mlrt__plan_axis(mlrt__planner *pl, int64_t axis, uint32_t rank, uint32_t *out);
uint64_t mlrt__dims_prod(const int64_t *d, uint32_t from, uint32_t to);
/* A new value of shape s (computed); -1: out of memory. */
int32_t mlrt__plan_value(mlrt__planner *pl, const mlrt__gshape *s);
/* A new constant that owns data; -1: out of memory (data freed). */
int32_t mlrt__plan_const(mlrt__planner *pl, mlrt_dtype dtype, uint32_t rank, const int64_t *dims, void *data);
/* A new op of kind with inputs in [n_in] writing the values out [n_out] (created from shapes; rank UINT32_MAX:
 * none), taking p; NULL: out of memory (p is the caller's still). */
mlrt__gop *mlrt__plan_op(mlrt__planner *pl, mlrt__op_kind kind, const int32_t *in, uint32_t n_in, const mlrt__gshape *out,
                         uint32_t n_out, void *p);
/* The graph op's output k is plan value v. */
void mlrt__plan_bind(mlrt__planner *pl, const mlrt__ir_op *op, uint32_t k, int32_t v);
/* The default plan: the op with its outputs, run now when every input is a constant. */
mlrt_status mlrt__plan_emit(mlrt__planner *pl, const mlrt__ir_op *op, void *p, const mlrt__gshape *out);
/* Output 0 a view of input 0 with shape out[0] (a constant: the same data). */
mlrt_status mlrt__plan_view(mlrt__planner *pl, const mlrt__ir_op *op, void *p, const mlrt__gshape *out);
/* The dense or convolution op that alone writes input k, ready to take a fusion (no activation yet), or NULL. */
mlrt__gop *mlrt__plan_fusable(mlrt__planner *pl, const mlrt__ir_op *op, uint32_t k);

/* ---- running (graph_values.c) ---- */
/* v's data in this run (a view: its root's). */
void *mlrt__gdata(const mlrt__graph *g, int32_t v);
/* v's dims for a run of `rows` samples, padded with leading 1s to rank r. */
void mlrt__grun_dims(const mlrt__graph *g, int32_t v, size_t rows, uint32_t r, int64_t *d);
/* Samples of v in a run of `rows` (1 for constants and unbatched plans). */
static inline size_t mlrt__grows(const mlrt__graph *g, int32_t v, size_t rows) {
    return g->batched && !g->vals[v].is_const ? rows : 1;
}

/* ---- plans (graph_plan.c, graph_run.c) ---- */
/* The plan of ir for the symbols' values len [ir->n_syms] (the batch: 1), in batch mode or not. */
mlrt__graph *mlrt__plan(const mlrt__ir_graph *ir, const int64_t *len, bool batched, mlrt__gpack **packs, bool *mixes,
                        bool *over_limit, mlrt_error *err);
void mlrt__graph_free(mlrt__graph *g);
/* Runs every op for `rows` samples (the inputs at g->x); allocates the arena on the first run. */
mlrt_status mlrt__graph_run(mlrt__graph *g, size_t rows, mlrt_error *err);

#endif
