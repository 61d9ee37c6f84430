/* kernels/kernels.h — the hot loops: dense layers (f32 and quantized), trees, k-means. Kernels take
 * plain parameters (arrays, sizes, packed weights) and use only the base (README, "Architecture"). */
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
 * refuses non-finite scales, naming the tensor and the block. */
mlrt_status mlrt__quant_pack(mlrt__dense *d, const uint8_t *src, mlrt_dtype dtype, const char *fmt, const char *name,
                            mlrt_error *err);
/* Dequantizes n elements of an APR_Q8 / APR_Q4 tensor (x = q * scale) or a GGUF Q4_K / Q6_K one
 * into out; refuses non-finite scales, naming the tensor (and the block). For biases, and for
 * k-quant weights, which run as f32. */
mlrt_status mlrt__quant_dequantize(const uint8_t *src, mlrt_dtype dtype, size_t n, float *out, const char *fmt,
                                  const char *name, mlrt_error *err);
/* Quantized layer d's weight w[o][i] as f32, exactly q * scale. */
float mlrt__quant_weight(const mlrt__dense *d, size_t o, size_t i);
/* Like mlrt__dense_forward_range for a quantized layer; xq [in_q], xsum [in_q / 4], nz [in_q + 2]: scratch. */
void mlrt__quant_forward(const mlrt__dense *l, const float *x, size_t x_stride, float *y, size_t y_stride, size_t rows,
                        size_t o0, size_t o1, int16_t *xq, int32_t *xsum, uint32_t *nz);

#endif
