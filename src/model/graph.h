/* model/graph.h — ONNX graphs: the file as parsed (formats/onnx.c), and the plan that runs it
 * (model/graph.c builds it, model/graph_run.c runs it on the kernels of kernels/conv.c and
 * kernels/tensor_ops.c). Not part of the public API. */
#ifndef MLRT__GRAPH_H
#define MLRT__GRAPH_H
#include "../formats/formats.h"
#include "model.h"

/* ---------------------------------------------------------------- the file, as parsed */

#define MLRT__ONNX_FLOAT 1    /* TensorProto.DataType */
#define MLRT__ONNX_INT64 7
#define MLRT__ONNX_DOUBLE 11
#define MLRT__ONNX_MAX_NODES 100000
#define MLRT__ONNX_OPSET_MIN 7
#define MLRT__ONNX_OPSET_MAX 21
#define MLRT__BATCH_SYM INT64_MIN /* a shape value that stands for the (symbolic) batch dimension */
#define MLRT__MAX_ACTIVATION (1u << 24) /* floats in one computed value of one sample (64 MiB) */
#define MLRT__MAX_ARENA (1u << 25)      /* floats of activations and scratch for one run of the plan (128 MiB) */

typedef struct mlrt__str { const char *p; uint32_t n; } mlrt__str; /* bytes in the file, not NUL-terminated */

/* An initializer or a Constant's value: dims checked, data converted and owned. */
typedef struct mlrt__onnx_tensor {
    mlrt__str name;
    int32_t type;                   /* MLRT__ONNX_FLOAT or MLRT__ONNX_INT64 (DOUBLE was converted to FLOAT) */
    uint32_t rank;
    int64_t dims[MLRT__MAX_RANK];    /* [rank], each >= 0 */
    uint64_t count;                 /* product of dims */
    float *f;                       /* [count] FLOAT */
    int64_t *i;                     /* [count] INT64 */
    size_t at, bytes;               /* where its values are in the file: raw_data, or else the whole TensorProto */
} mlrt__onnx_tensor;

/* AttributeProto.AttributeType values mlrt reads. */
enum { MLRT__ATTR_FLOAT = 1, MLRT__ATTR_INT = 2, MLRT__ATTR_STRING = 3, MLRT__ATTR_TENSOR = 4,
       MLRT__ATTR_FLOATS = 6, MLRT__ATTR_INTS = 7 };

typedef struct mlrt__onnx_attr {
    mlrt__str name;
    uint32_t type;                  /* MLRT__ATTR_*; other types are kept as their number, for messages */
    float f;                        /* FLOAT */
    int64_t i;                      /* INT */
    mlrt__str s;                     /* STRING */
    uint32_t n;                     /* FLOATS / INTS: how many */
    float *floats;                  /* [n] */
    int64_t *ints;                  /* [n] */
    mlrt__onnx_tensor *t;            /* TENSOR */
} mlrt__onnx_attr;

typedef struct mlrt__onnx_node {
    mlrt__str op, name, domain;
    uint32_t n_in, n_out, n_attr;
    int32_t *in;                    /* [n_in] value ids; -1: an omitted optional input ("") */
    int32_t *out;                   /* [n_out] value ids; -1: an omitted optional output */
    mlrt__onnx_attr *attr;           /* [n_attr] */
} mlrt__onnx_node;

typedef struct mlrt__onnx_value {
    mlrt__str name;
    int32_t producer;               /* the node that outputs it, or -1: a graph input or an initializer */
    mlrt__onnx_tensor *init;         /* an initializer (a graph input of the same name then has it as its default) */
    bool is_input;                  /* a graph input without an initializer */
    int32_t elem_type;              /* graph inputs and outputs: TensorProto.DataType (0: not given) */
    int32_t rank;                   /* graph inputs and outputs: -1 when the file gives no shape */
    int64_t dims[MLRT__MAX_RANK];    /* [rank]; -1: a symbolic dimension */
} mlrt__onnx_value;

typedef struct mlrt__onnx {
    int64_t ir_version, opset;      /* opset: the ai.onnx version imported */
    mlrt__str producer, graph_name;
    mlrt__onnx_value *values;        /* [n_values]: initializers and graph inputs, then node outputs in node order */
    uint32_t n_values;
    mlrt__onnx_node *nodes;          /* [n_nodes], checked to be in topological order */
    uint32_t n_nodes;
    int32_t *inputs, *outputs;      /* [n_inputs], [n_outputs] value ids (inputs: those without initializers) */
    uint32_t n_inputs, n_outputs, n_init;
    mlrt__onnx_tensor *inits;        /* [n_init] */
} mlrt__onnx;

/* Reads and checks the whole ModelProto: wire format, types, names defined once, topological
 * order, opsets, initializer sizes. g points into b; free with mlrt__onnx_free before b. */
mlrt_status mlrt__read_onnx(const uint8_t *b, size_t n, mlrt__onnx *g, mlrt_error *err);
void mlrt__onnx_free(mlrt__onnx *g);
/* True when b looks like a ModelProto: its top-level keys are ModelProto's, with their wire types. */
bool mlrt__onnx_sniff(const uint8_t *b, size_t n);
const mlrt__onnx_attr *mlrt__onnx_attr_find(const mlrt__onnx_node *node, const char *name);
bool mlrt__str_eq(mlrt__str s, const char *c);

/* ---------------------------------------------------------------- the plan */

typedef enum mlrt__gop_kind {
    MLRT__GOP_DENSE,       /* rows of in floats -> rows of out (Gemm, MatMul + Add): dense[0] */
    MLRT__GOP_CONV,        /* 2-D NCHW convolution: im2col + dense[g] per group (pixels as rows), or depthwise */
    MLRT__GOP_MAXPOOL, MLRT__GOP_AVGPOOL, MLRT__GOP_GLOBALAVG,
    MLRT__GOP_BINARY,      /* Add Sub Mul Div, numpy broadcasting */
    MLRT__GOP_UNARY,       /* Relu LeakyRelu Sigmoid Tanh Clip */
    MLRT__GOP_AFFINE,      /* y = x * scale[c] + shift[c] on axis 1 (BatchNormalization left standing) */
    MLRT__GOP_SOFTMAX,     /* Softmax, LogSoftmax (log = 1): over [outer][n][inner] */
    MLRT__GOP_TRANSPOSE, MLRT__GOP_CONCAT, MLRT__GOP_PAD,
    MLRT__GOP_SLICE        /* perm: [0, 8) first index per axis, [8, 16) steps */
} mlrt__gop_kind;

typedef enum { MLRT__BIN_ADD, MLRT__BIN_SUB, MLRT__BIN_MUL, MLRT__BIN_DIV } mlrt__bin_kind;
typedef enum { MLRT__UN_RELU, MLRT__UN_LEAKY, MLRT__UN_SIGMOID, MLRT__UN_TANH, MLRT__UN_CLIP } mlrt__un_kind;

/* A value of the plan: a constant, or a tensor computed per call in the arena. In batch mode every
 * computed value has dims[0] == 1 standing for the batch: at run time it holds `rows` samples. */
typedef struct mlrt__gval {
    uint32_t rank;
    int64_t dims[MLRT__MAX_RANK];    /* [rank] */
    uint64_t count;                 /* product of dims (per sample in batch mode) */
    bool is_const, is_int;          /* constants are folded at load; int64 values are always constants */
    float *f;                       /* constant FLOAT [count] (owned) */
    int64_t *i;                     /* constant INT64 [count] (owned); may hold MLRT__BATCH_SYM */
    int32_t alias;                  /* computed: the value whose storage this one is (a reshape), or -1 */
    size_t off;                     /* computed, not an alias: where it starts in the arena, in floats */
    uint32_t last_use;              /* computed: the last op that reads it */
    int32_t op;                     /* computed while planning: the op that writes it, or -1 */
    uint32_t uses;                  /* while planning: how many ops read it (graph output: many) */
} mlrt__gval;

typedef struct mlrt__gop {
    mlrt__gop_kind kind;
    uint32_t node;                  /* the ONNX node it runs, for messages */
    int32_t in[8];                  /* value ids; CONCAT may have more: see ins */
    int32_t *ins;                   /* CONCAT: [n_in] */
    uint32_t n_in;
    int32_t out;
    uint32_t sub;                   /* BINARY: mlrt__bin_kind; UNARY: mlrt__un_kind; SOFTMAX: 1 for LogSoftmax */
    mlrt_activation act;            /* fused into DENSE / CONV */
    float alpha, lo, hi;            /* LeakyRelu alpha; Clip bounds */
    /* DENSE: rows per sample = outer; CONV: geometry */
    uint64_t outer, inner;          /* SOFTMAX / CONCAT / AFFINE: the tensor as [outer][axis][inner] */
    uint32_t axis_n;                /* SOFTMAX: the axis' length */
    uint32_t c, h, w;               /* CONV/POOL input: channels, height, width */
    uint32_t oc, oh, ow;            /* CONV/POOL output */
    uint32_t kh, kw, sh, sw, dh, dw;/* kernel, strides, dilations */
    int32_t pt, pl, pb, pr;         /* pads: top, left, bottom, right */
    uint32_t groups;                /* CONV: groups; depthwise when groups == c and c == oc / mult */
    bool depthwise, count_pad;      /* AVGPOOL: count_include_pad */
    bool direct;                    /* CONV: stride 1, at most MLRT__CONV_MAX_TAPS taps: no patches (kernels/conv.c);
                                     * wdw is then packed [groups][ceil(ocg / 4)][k][4] */
    mlrt__dense *dense;              /* DENSE: [1] */
    float *wsrc, *bsrc;             /* DENSE / CONV while planning: weights [oc][k] and bias [oc] (or NULL), before
                                     * BatchNormalization is folded in and they become dense / wdw, bdw */
    uint32_t k_in;                  /* DENSE / CONV: inputs per output (in; c / groups * kh * kw) */
    float *wdw;                     /* CONV: weights [oc][k_in] (direct: [groups][ceil(ocg / 4)][k_in][4]); AFFINE: scale [c] */
    float *bdw;                     /* CONV: bias [oc]; AFFINE: shift [c] */
    int64_t *perm;                  /* TRANSPOSE: [rank]; PAD: pads [2 * rank] */
    float pad_value;
} mlrt__gop;

typedef struct mlrt__graph {
    mlrt__gval *vals;                /* [n_vals] */
    uint32_t n_vals;
    mlrt__gop *ops;                  /* [n_ops] in run order */
    uint32_t n_ops;
    int32_t input, output;          /* value ids */
    bool batched;                   /* dim 0 of the input is the batch: predict_batch runs rows at once */
    uint32_t tile_rows;             /* samples per run of the plan (batch mode), else 1 */
    const float *x;                 /* while running: the caller's input rows */
    float *arena;                   /* [arena_floats]: every computed value for tile_rows samples */
    size_t arena_floats;
    float *col;                     /* [zeros_floats + col_floats] CONV scratch: zeros (the dense kernel's bias when it
                                     * runs a convolution), then the patches of one image and group */
    size_t col_floats, zeros_floats;
    uint64_t weight_bytes, params;
    uint64_t macs;                  /* multiply-adds (and window reads) per sample: the plan's cost */
    char *facts_json;               /* the model's "onnx":{...} member of info */
    char *names;                    /* the input's and the output's names, NUL-terminated, one after the other */
} mlrt__graph;
extern const mlrt__family mlrt__graph_family;

/* Builds the plan from a parsed file: every op checked, shapes inferred, BatchNormalization folded,
 * activations fused, weights packed, the arena planned. On failure *err names the node. */
mlrt_model *mlrt__onnx_model(mlrt__onnx *g, mlrt_error *err); /* takes the initializers' data from g */
/* The graph's description for inspect, when it builds no model too ("onnx":{...} members). */
char *mlrt__onnx_describe(const mlrt__onnx *g);
void mlrt__graph_free(mlrt__graph *gr);
/* Runs ops [0, n_ops) for `rows` samples: x is the input, the result is left in the output value. */
void mlrt__graph_run(const mlrt__graph *gr, const float *x, size_t rows);
/* Runs one op for `rows` samples (constants folded at load: rows = 1). */
void mlrt__graph_run_op(const mlrt__graph *gr, const mlrt__gop *op, size_t rows);
float *mlrt__graph_value(const mlrt__graph *gr, int32_t v);

/* ---------------------------------------------------------------- kernels (kernels/conv.c) */
#define MLRT__CONV_MAX_TAPS 64
/* Floats after a direct convolution's padded planes that its last pixel vectors may read. */
#define MLRT__CONV_SLACK(op) ((size_t)((op)->kh - 1) * (op)->dh * ((op)->w + (op)->pl + (op)->pr) + (size_t)((op)->kw - 1) * (op)->dw + 16)
/* col: the patches of one image and group (kernels/conv.c); zeros: at least as many zeros as pixels, rounded up to 8. */
void mlrt__conv_forward(const mlrt__gop *op, const float *x, float *y, const float *zeros, float *col, size_t images);
void mlrt__pool_forward(const mlrt__gop *op, const float *x, float *y, size_t images);

/* ---------------------------------------------------------------- kernels (kernels/tensor_ops.c) */
/* y = a op b with numpy broadcasting: shapes of rank r (padded with leading 1s). */
void mlrt__binary(mlrt__bin_kind k, const float *a, const int64_t *ad, const float *b, const int64_t *bd,
                 float *y, const int64_t *yd, uint32_t r);
void mlrt__unary(const mlrt__gop *op, const float *x, float *y, size_t n);
void mlrt__softmax(const float *x, float *y, size_t outer, size_t n, size_t inner, bool log);
void mlrt__transpose(const float *x, const int64_t *xd, const int64_t *perm, uint32_t r, float *y);
void mlrt__pad(const float *x, const int64_t *xd, const int64_t *pads, uint32_t r, float value, float *y);
/* y = x[first[d] + i[d] * step[d]] over y's index i (yd: y's dims); the int64 version for shapes. */
void mlrt__slice(const float *x, const int64_t *xd, const int64_t *first, const int64_t *step, uint32_t r, float *y,
                const int64_t *yd);
void mlrt__slice_i64(const int64_t *x, const int64_t *xd, const int64_t *first, const int64_t *step, uint32_t r,
                    int64_t *y, const int64_t *yd);
void mlrt__affine(const float *x, const float *scale, const float *shift, size_t outer, size_t c, size_t inner,
                 float *y);

#endif
