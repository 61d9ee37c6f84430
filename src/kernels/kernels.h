/* kernels/kernels.h — the hot loops: dense layers (f32 and quantized), trees, k-means, elementwise
 * activations, convolution and pooling, layer normalization and the tensor ops of graphs. Kernels
 * take plain parameters (arrays, sizes, packed weights, geometry structs) and use only the base
 * (README, "Architecture"). */
#ifndef MLRT__KERNELS_H
#define MLRT__KERNELS_H
#include "../base/base.h"

/* How a dense layer holds its weights (mlrt__dense.wq). */
typedef enum mlrt__wq {
    MLRT__WQ_F32 = 0,   /* w: f32 panels */
    MLRT__WQ_Q8,        /* q: i8 panels of input pairs (quads in the relaxed build), one scale for the tensor (APR_Q8) */
    MLRT__WQ_Q4,        /* q: 4-bit panels of input quads, a scale per output per group (APR_Q4, in % 4 == 0) */
    MLRT__WQ_Q4_ROWS    /* q: the file's 4-bit blocks as they are, a scale per block (APR_Q4, any in) */
} mlrt__wq;

/* Q8 inputs per packed unit (MLRT__Q8_K) and per i32 partial sum (MLRT__Q8_GROUP), from how a row's
 * activations are quantized (kernels/quant.c): int16 everywhere but in the relaxed-SIMD build, which
 * quantizes them to 7 bits for i32x4.relaxed_dot_i8x16_i7x16_add_s (4 inputs per lane). */
#if defined(__wasm_relaxed_simd__)
#define MLRT__Q8_K 4
#define MLRT__Q8_GROUP 65536 /* 65536 x 127 x 128 < 2^31 */
#else
#define MLRT__Q8_K 2
#define MLRT__Q8_GROUP 256   /* 256 x 32767 x 128 < 2^31 */
#endif

typedef struct mlrt__dense {
    uint32_t in, out;               /* weight is [out][in] logically */
    uint32_t out_padded;            /* out rounded up to MLRT__PANEL */
    float *w;                       /* f32: packed [out_padded / MLRT__PANEL][in][MLRT__PANEL]; NULL when quantized */
    float *b;                       /* [out_padded], zero past out (and all zero without bias) */
    bool has_bias;
    mlrt_activation act;
    /* quantized weights (kernels/quant.c); wq == MLRT__WQ_F32 leaves them unused */
    mlrt__wq wq;
    uint32_t in_q;                  /* in rounded up to the packing unit: MLRT__Q8_K (Q8), 4 (Q4); in (Q4 rows) */
    uint32_t group;                 /* inputs per integer partial sum: MLRT__Q8_GROUP (Q8), gcd(in, 32) (Q4) */
    uint8_t *q;                     /* in bands of np = up to 4 panels (32 outputs; mlrt__q*_at):
                                     * Q8: int8 [band][in_q/K][np * 8 outputs][K inputs], K = MLRT__Q8_K
                                     * Q4: [band][in_q/4][np * 8 outputs][2] bytes; byte (o, t) of quad k holds
                                     *     input 4k+t in its low nibble, input 4k+2+t in its high nibble
                                     * Q4 rows: [ceil(out*in/32)][16] the file's nibbles, flattened [out][in] */
    float *qscale;                  /* Q4: [band][in_q/group][np * 8]; Q4 rows: [ceil(out*in/32)] */
    int32_t *qsum;                  /* Q8, relaxed build: sum over i of q[o][i] [out_padded] (the zero point's term) */
    float qs;                       /* Q8: the tensor's scale */
    size_t q_bytes, qscale_bytes;   /* what q and qscale (or qsum) hold */
    bool in_file;                   /* w (f32) or q (Q8) was packed where the file held the weight, in a
                                     * block the model owns: it is not freed with the layer */
} mlrt__dense;

/* Where quantized weight (o, i) lives: panels of 8 outputs are interleaved in bands of up to 4, so
 * that one pointer walks a band (every band but the last holds 4 panels). */
static inline size_t mlrt__qband_np(const mlrt__dense *d, size_t o) {
    size_t left = d->out_padded / 8 - o / 32 * 4;
    return left < 4 ? left : 4;
}
static inline size_t mlrt__q8_at(const mlrt__dense *d, size_t o, size_t i) {
    return o / 32 * 32 * (size_t)d->in_q + i / MLRT__Q8_K * 8 * MLRT__Q8_K * mlrt__qband_np(d, o) + o % 32 * MLRT__Q8_K +
           i % MLRT__Q8_K;
}
static inline size_t mlrt__q4_at(const mlrt__dense *d, size_t o, size_t i) { /* the high nibble when i & 2 */
    return o / 32 * 16 * (size_t)d->in + i / 4 * 16 * mlrt__qband_np(d, o) + o % 32 * 2 + (i & 1);
}
static inline size_t mlrt__q4_scale_at(const mlrt__dense *d, size_t o, size_t g) {
    return o / 32 * 32 * (size_t)(d->in / d->group) + g * 8 * mlrt__qband_np(d, o) + o % 32;
}

/* ---- kernels (kernels/dense.c) ---- */
#define MLRT__PANEL 8       /* outputs per packed weight panel */
#define MLRT__TILE_ROWS 64  /* batch rows processed per scratch tile, at most */
#define MLRT__SCRATCH_BYTES (4u << 20) /* tiles shrink so that scratch stays under this (>= 1 row) */
/* y[r][o] = act(b[o] + sum_i x[r][i] w[o][i]) for r < rows; x: [rows][x_stride], y: [rows][y_stride] */
void mlrt__dense_forward(const mlrt__dense *l, const float *x, size_t x_stride, float *y, size_t y_stride,
                        size_t rows);
/* The same for outputs [o0, o1) only: o0 a multiple of MLRT_SLICE, o1 one too or l->out; the
 * activation elementwise. Each output gets the bits of the whole layer (mlrt_layer_slice). */
void mlrt__dense_forward_range(const mlrt__dense *l, const float *x, size_t x_stride, float *y, size_t y_stride,
                              size_t rows, size_t o0, size_t o1);
/* act over y [n] in place (softmax: over the n; the rest elementwise, as mlrt__act_apply; kernels/act.c). */
void mlrt__activate(mlrt_activation act, float *y, size_t n);
/* Packs a file's f32 weights (little endian, any alignment; [out][in], or [in][out] when in_major)
 * into panels: dst[p][i][j] = W[p * MLRT__PANEL + j][i], zero past out (dst: out_padded x in).
 * False when a weight is inf or NaN (dst is then incomplete). */
bool mlrt__dense_pack_f32(const uint8_t *w, bool in_major, size_t in, size_t out, float *dst);

/* ---- tree and k-means kernels (kernels/tree.c) ---- */
/* A tree node, as the walkers read it: four u32 [feature, threshold (f32 bits), left, right]; a leaf
 * points to itself twice (ir/ir.h's mlrt__tree_node has this layout). A split goes left when
 * x[feature] <= threshold; NaN goes right. */
/* Walks one tree (root, depth levels) for rows [0, rows) of x [rows][stride]: at[r] = the leaf row r ends in. */
void mlrt__tree_walk(const uint32_t *nodes, uint32_t root, uint32_t depth, const float *x, size_t stride, size_t rows,
                     uint32_t *at);
/* One row x through every tree, eight at a time: leaf[t] = the leaf x ends in, in tree t. */
void mlrt__trees_walk_row(const uint32_t *nodes, const uint32_t *root, const uint32_t *depth, uint32_t n_trees,
                          const float *x, uint32_t *leaf);
/* d[r][q] = sum_j (x[r][j] - c[q][j])^2 in f32, j ascending, for q < k (d: [rows][k]); c4: the centroids
 * four side by side, one per SIMD lane: coordinate j of centroid q at (q/4 * dim + j) * 4 + q % 4
 * ([ceil(k/4)][dim][4], padding lanes 0). */
void mlrt__kmeans_distances(const float *c4, size_t k, size_t dim, const float *x, size_t rows, float *d);

/* ---- quantized kernels (kernels/quant.c) ---- */
/* Packs an APR_Q8 / APR_Q4 weight [out][in] from the file into d (d->in, out, out_padded set);
 * refuses non-finite scales, naming the tensor and the block. over: an APR_Q8 weight whose packing
 * takes its bytes exactly (in % MLRT__Q8_K == 0, out % 8 == 0) is packed where it lies (src writable;
 * d->in_file), through one band of scratch. */
mlrt_status mlrt__quant_pack(mlrt__dense *d, const uint8_t *src, mlrt_dtype dtype, bool over, const char *fmt,
                            const char *name, mlrt_error *err);
/* Dequantizes n elements of an APR_Q8 / APR_Q4 tensor (x = q * scale) or a GGUF Q4_K / Q6_K one
 * into out; refuses non-finite scales, naming the tensor (and the block). For biases, and for
 * k-quant weights, which run as f32. */
mlrt_status mlrt__quant_dequantize(const uint8_t *src, mlrt_dtype dtype, size_t n, float *out, const char *fmt,
                                  const char *name, mlrt_error *err);
/* Quantized layer d's weight w[o][i] as f32, exactly q * scale. */
float mlrt__quant_weight(const mlrt__dense *d, size_t o, size_t i);
/* Q8 rows quantized together (kernels/quant.c; blocks of 4 of them share each weight load): up to 64
 * (a tile), 4 for inputs wider than 2048 (scratch). */
#define MLRT__Q8_ROWS_MAX 64
#define MLRT__Q8_ROWS(in_q) ((in_q) <= 2048 ? MLRT__Q8_ROWS_MAX : 4)
/* Like mlrt__dense_forward_range for a quantized layer; scratch: xq [MLRT__QX(in_q)] (enough for
 * every layer of in_q or fewer: 2 x rows x in_q), xsum [in_q / 4], nz [in_q + 2]. */
#define MLRT__QX(in_q) (2 * (MLRT__Q8_ROWS_MAX * (size_t)((in_q) < 2048 ? (in_q) : 2048) + 4 * (size_t)(in_q)))
void mlrt__quant_forward(const mlrt__dense *l, const float *x, size_t x_stride, float *y, size_t y_stride, size_t rows,
                        size_t o0, size_t o1, int16_t *xq, int32_t *xsum, uint32_t *nz);


/* ---- elementwise activations (kernels/act.c): one implementation for dense layers and graphs ---- */
/* mlrt_activation's elementwise functions (same numbers; softmax is not elementwise), then the graphs'. */
typedef enum mlrt__act_kind {
    MLRT__ACT_IDENTITY = MLRT_ACT_IDENTITY, MLRT__ACT_RELU = MLRT_ACT_RELU, MLRT__ACT_SIGMOID = MLRT_ACT_SIGMOID,
    MLRT__ACT_TANH = MLRT_ACT_TANH, MLRT__ACT_GELU = MLRT_ACT_GELU, MLRT__ACT_LEAKY_RELU = MLRT_ACT_LEAKY_RELU,
    MLRT__ACT_SILU = MLRT_ACT_SILU,
    MLRT__ACT_ERF = MLRT_ACT_COUNT_, /* erf(x) */
    MLRT__ACT_GELU_TANH,             /* x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) / 2 */
    MLRT__ACT_CLIP,                  /* min(max(x, lo), hi) */
    MLRT__ACT_KIND_COUNT_
} mlrt__act_kind;
typedef struct mlrt__act {
    mlrt__act_kind kind;
    float alpha;                    /* LEAKY_RELU: the slope below 0 */
    float lo, hi;                   /* CLIP: the bounds */
} mlrt__act;
/* y[i] = f(x[i]) for i < n (y may be x). */
void mlrt__act_apply(const mlrt__act *a, const float *x, float *y, size_t n);
/* Ours, the same bits in every build (kernels/act.c): the true value rounded, or one ulp from it. */
float mlrt__expf(float x);
float mlrt__tanhf(float x);
float mlrt__sigmoidf(float x);  /* 1 / (1 + e^-x) */
float mlrt__logf(float s);      /* s > 0 (LogSoftmax's sum) */
float mlrt__erff(float x);
float mlrt__gelu(float x);       /* x Phi(x): exact GELU */
float mlrt__gelu_tanh(float x);  /* GELU's tanh approximation */
/* y[i] = gelu(y[i]) for i < n, in float vectors (the encoders' feed-forward layers): a few ulp from
 * mlrt__gelu, the same bits in every build. */
void mlrt__gelu_n(float *y, size_t n);

/* ---- layer normalization (kernels/norm.c) ---- */
/* Over rows of n: h = x (+ res, when res is not NULL), mean and biased variance of h's row in
 * double, y = (h - mean) / sqrt(var + eps) * scale + bias (scale [n]; bias [n] or NULL). mean and
 * inv_std (each [rows] or NULL) get the row's mean and 1 / sqrt(var + eps). y may be x or res. */
typedef struct mlrt__norm {
    size_t rows, n;
    float eps;
    const float *scale, *bias;      /* [n], [n] or NULL */
} mlrt__norm;
void mlrt__layernorm(const mlrt__norm *p, const float *x, const float *res, float *y, float *mean, float *inv_std);

/* ---- the encoder's kernels (kernels/attention.c) ---- */
/* A bias added to the scores by the distance between key and query (MPNet's relative positions): key j's
 * score for query i gains rel[kpos[j] - qpos[i]] (rel points at distance 0; it may be read on both sides). */
typedef struct mlrt__attn_bias {
    const float *rel;               /* [-(span - 1) .. span - 1], span more than any position */
    const uint32_t *qpos, *kpos;    /* [nq] the queries' positions, [n] the keys' */
} mlrt__attn_bias;
/* One head of self-attention over one text of n tokens: out_i = sum_j softmax_j((q_i . k_j) scale + b_ij) v_j
 * for the first nq queries (nq <= n; each query's result is the same whatever nq); b_ij the bias's, or 0
 * when bias is NULL. q, k, v, out: token i's head columns [d] at i * stride from each pointer; kt [d][n16],
 * p [2][n16]: scratch (n16 = n rounded up to 16). */
void mlrt__attention(const float *q, size_t nq, const float *k, const float *v, size_t stride, size_t n, size_t d, float scale,
                     const mlrt__attn_bias *bias, float *out, float *kt, float *p);
/* sentence-transformers' pooling of one text's n token vectors h [n][stride] (positions pos [n]) into out [dim]:
 * CLS the first, LAST the last, MAX per column, MEAN the sum / n, MEAN_SQRT the sum / sqrt(n),
 * WEIGHTED sum (pos + 1) h / sum (pos + 1). Sums in token order. */
typedef enum mlrt__tpool {
    MLRT__TPOOL_CLS, MLRT__TPOOL_MAX, MLRT__TPOOL_MEAN, MLRT__TPOOL_MEAN_SQRT, MLRT__TPOOL_WEIGHTED, MLRT__TPOOL_LAST
} mlrt__tpool;
void mlrt__pool_tokens(const float *h, size_t stride, size_t n, size_t dim, const uint32_t *pos, mlrt__tpool mode,
                       float *out);
/* v / max(|v|, 1e-12), |v| summed in double. */
void mlrt__l2_normalize(float *v, size_t n);

/* ---- convolution and pooling on NCHW tensors (kernels/conv.c; 1-D ops run as height 1) ---- */
typedef struct mlrt__conv_geom {
    uint32_t c, h, w;               /* input: channels, height, width */
    uint32_t oc, oh, ow;            /* output */
    uint32_t kh, kw, sh, sw, dh, dw;/* kernel, strides, dilations */
    int32_t pt, pl, pb, pr;         /* pads: top, left, bottom, right */
    uint32_t groups;                /* convolutions: groups (c and oc divide by it); pooling: 1 */
} mlrt__conv_geom;
#define MLRT__CONV_MAX_TAPS 64
typedef enum mlrt__conv_form {
    MLRT__CONV_PATCHES,             /* im2col + the dense kernel, per image and group: w [oc][k_in] */
    MLRT__CONV_DIRECT,              /* stride 1, at most MLRT__CONV_MAX_TAPS taps: w [groups][ceil(ocg / 4)][k_in][4] */
    MLRT__CONV_DEPTHWISE            /* one input channel per group: w [oc][kh * kw] */
} mlrt__conv_form;
typedef struct mlrt__conv {
    mlrt__conv_geom g;
    mlrt__conv_form form;
    uint32_t k_in;                  /* inputs per output: c / groups * kh * kw */
    mlrt_activation act;            /* after the bias */
    const float *w;                 /* packed by mlrt__conv_pack, in form's layout */
    const float *b;                 /* [oc] */
} mlrt__conv;
/* The form a convolution of geometry g runs in. */
mlrt__conv_form mlrt__conv_form_of(const mlrt__conv_geom *g);
/* w [oc][k_in] (ONNX's [oc][c / groups][kh][kw]) into dst in c's form; dst: mlrt__conv_weight_floats(c). */
size_t mlrt__conv_weight_floats(const mlrt__conv *c);
void mlrt__conv_pack(const mlrt__conv *c, const float *w, float *dst);
/* Scratch a run needs: col floats (patches or padded planes) and zeros (at least the pixels, the dense
 * kernel's bias when it runs a convolution). */
void mlrt__conv_scratch(const mlrt__conv *c, uint64_t *col, uint64_t *zeros);
/* images of x [c][h][w] -> y [oc][oh][ow]; zeros, col: the scratch (zeros stay zero). */
void mlrt__conv_forward(const mlrt__conv *c, const float *x, float *y, const float *zeros, float *col, size_t images);
typedef enum mlrt__pool_kind { MLRT__POOL_MAX, MLRT__POOL_AVG, MLRT__POOL_GLOBAL_AVG } mlrt__pool_kind;
/* planes of x [h][w] -> y [oh][ow]; count_pad: an average divides by the window clipped to the padded input. */
void mlrt__pool_forward(const mlrt__conv_geom *g, mlrt__pool_kind kind, bool count_pad, const float *x, float *y,
                        size_t planes);

/* ---- tensor ops (kernels/tensor_ops.c): shapes of rank r, dims [r] ---- */
typedef enum mlrt__bin_kind { MLRT__BIN_ADD, MLRT__BIN_SUB, MLRT__BIN_MUL, MLRT__BIN_DIV } mlrt__bin_kind;
/* y = a op b with numpy broadcasting (ad, bd: padded with leading 1s to rank r; yd: y's dims). */
void mlrt__binary(mlrt__bin_kind k, const float *a, const int64_t *ad, const float *b, const int64_t *bd, float *y,
                  const int64_t *yd, uint32_t r);
void mlrt__binary_i64(mlrt__bin_kind k, const int64_t *a, const int64_t *ad, const int64_t *b, const int64_t *bd,
                      int64_t *y, const int64_t *yd, uint32_t r); /* a division by 0 gives 0 (callers check) */
/* softmax (log: log-softmax) of x viewed as [outer][n][inner] over the n. */
void mlrt__softmax(const float *x, float *y, size_t outer, size_t n, size_t inner, bool log);
/* y = x with its axes permuted: y's axis d is x's axis perm[d]; es: bytes per element (4 or 8). */
void mlrt__transpose(const void *x, const int64_t *xd, const int64_t *perm, uint32_t r, void *y, size_t es);
/* y = x padded with value: pads [2r] (begins, then ends), each >= 0. */
void mlrt__pad(const float *x, const int64_t *xd, const int64_t *pads, uint32_t r, float value, float *y);
/* y = x[first[d] + i[d] * step[d]] over y's index i (yd: y's dims); es: bytes per element (4 or 8). */
void mlrt__slice(const void *x, const int64_t *xd, const int64_t *first, const int64_t *step, uint32_t r, void *y,
                 const int64_t *yd, size_t es);
/* y = x * scale[c] + shift[c] on x viewed as [outer][c][inner]. */
void mlrt__affine(const float *x, const float *scale, const float *shift, size_t outer, size_t c, size_t inner,
                  float *y);
/* Gather along an axis: x viewed as [outer][n][inner] (es bytes per element), idx [m] (negative:
 * from the end) -> y [outer][m][inner]. Returns the position of the first index out of [-n, n), or
 * -1 when every index is in range (y is then complete). */
int64_t mlrt__gather(const void *x, size_t outer, size_t n, size_t inner, size_t es, const int64_t *idx, size_t m,
                     void *y);
/* Element type conversions; mlrt__cast_f32_i64 rounds toward 0 and returns the position of the first
 * value that is NaN or beyond int64 (-1: none). */
void mlrt__cast_i64_f32(const int64_t *x, float *y, size_t n);
int64_t mlrt__cast_f32_i64(const float *x, int64_t *y, size_t n);

#endif
