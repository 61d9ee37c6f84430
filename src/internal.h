/* internal.h — what the C files of mlrt share with each other (not part of the public API). */
#ifndef MLRT__INTERNAL_H
#define MLRT__INTERNAL_H

#include "base/base.h"


/* ---- a tensor file, parsed and validated but not yet a model ---- */
typedef struct mlrt__tensor {
    char *name;                     /* [name_len + 1], UTF-8, NUL-terminated */
    size_t name_len;
    mlrt_dtype dtype;
    uint32_t rank;
    uint64_t shape[MLRT__MAX_RANK];  /* [rank] */
    uint64_t count;                 /* product of shape */
    size_t begin, end;              /* byte range [begin, end) in the data section */
} mlrt__tensor;

typedef struct mlrt__kv {
    char *key, *value;              /* NUL-terminated UTF-8 */
    size_t key_len, value_len;
} mlrt__kv;

typedef struct mlrt__tensorset {
    mlrt_format format;
    mlrt__tensor *tensors;           /* [count], in file order (ascending begin) */
    size_t count;
    mlrt__kv *meta;                  /* [meta_count] string -> string metadata (.apr v2: its top-level strings) */
    size_t meta_count;
    char *meta_json;                /* the metadata as a JSON object when it is more than strings (.apr), or NULL */
    char *extra_json;               /* more members for info and inspect ("\"apr\":{...}"), or NULL */
    size_t data_begin;              /* where the data section starts in the file */
} mlrt__tensorset;

void mlrt__tensorset_free(mlrt__tensorset *ts);
const mlrt__tensor *mlrt__tensorset_find(const mlrt__tensorset *ts, const char *name);
const char *mlrt__tensorset_meta(const mlrt__tensorset *ts, const char *key); /* NULL if absent */
void mlrt__json_metadata(mlrt__buf *b, const mlrt__tensorset *ts);             /* {"k":"v",...}; ts may be NULL */

/* Checks shape product -> bytes (mlrt__dtype_bytes) == end - begin, with overflow checks. fmt_name: "safetensors". */
mlrt_status mlrt__tensor_check_span(const mlrt__tensor *t, const char *fmt_name, mlrt_error *err);
/* Sorts by begin and checks the ranges tile [0, data_len) exactly (offsets relative to data start). */
mlrt_status mlrt__tensorset_check_layout(mlrt__tensorset *ts, uint64_t data_len, const char *fmt_name,
                                        mlrt_error *err);
/* The u64 LE length SafeTensors and BinTensors begin with, checked against the limit and the file. */
mlrt_status mlrt__read_header_length(const uint8_t *b, size_t n, const char *fmt_name, const char *what,
                                    uint64_t *len, mlrt_error *err);

/* ---- format readers: fill *ts from the whole file, validating everything ---- */
mlrt_status mlrt__read_safetensors(const uint8_t *b, size_t n, mlrt__tensorset *ts, mlrt_error *err);
mlrt_status mlrt__read_bintensors(const uint8_t *b, size_t n, mlrt__tensorset *ts, mlrt_error *err);
mlrt_status mlrt__read_apr_v2(const uint8_t *b, size_t n, mlrt__tensorset *ts, mlrt_error *err);

/* ---- models ---- */
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

/* ---- trees, forests, k-means (formats/apr_trees.c, formats/apr_kmeans.c, model/classic.c, kernels/tree.c) ---- */
#define MLRT__MAX_TREE_DEPTH 4096           /* levels below a root; deeper trees are refused */
#define MLRT__MAX_TREE_NODES (1u << 26)     /* nodes in one model */
#define MLRT__MAX_CLASSES    65536          /* distinct class labels */

typedef struct mlrt__tree_node {
    uint32_t feature;               /* a split goes left when x[feature] <= v.threshold (NaN goes right); a leaf: 0 */
    union {
        float threshold;            /* a split */
        float value;                /* a regressor's leaf */
        uint32_t cls;               /* a classifier's leaf: index into mlrt__forest.classes */
    } v;
    uint32_t left, right;           /* the children's indices in mlrt__forest.nodes; a leaf points to itself twice */
} mlrt__tree_node;

/* A decision tree is a forest of one. */
typedef struct mlrt__forest {
    bool regression;
    uint32_t n_trees;
    uint32_t n_nodes, n_leaves;
    uint32_t max_depth;             /* the deepest tree's levels below its root (0: a lone leaf) */
    mlrt__tree_node *nodes;          /* [n_nodes]: each tree in pre-order (left child = parent + 1), tree after tree */
    uint32_t *root;                 /* [n_trees] */
    uint32_t *depth;                /* [n_trees] */
    uint32_t *classes;              /* [n_classes] classifiers: the stored labels, ascending */
    uint32_t n_classes;
    uint32_t *at;                   /* [max(tile rows, n_trees)] scratch: each row's node while walking a tree, or
                                     * each tree's leaf for a single row */
} mlrt__forest;

typedef struct mlrt__kmeans {
    uint32_t k, dim;
    float *c;                       /* [ceil(k/4)][dim][4]: centroid q's coordinate j at (q/4 * dim + j) * 4 + q % 4;
                                     * four centroids side by side, one per SIMD lane (padding lanes 0) */
} mlrt__kmeans;

/* What an .apr v1 payload decoded as, for info and inspect ("RandomForestClassifier", "E2"). */
typedef struct mlrt__payload_desc {
    const char *estimator;          /* aprender's Rust type */
    const char *layout;             /* "E1" / "E2" (trees), "legacy" / "current" (KMeans) */
} mlrt__payload_desc;

struct mlrt_model {
    mlrt_format format;
    mlrt_kind kind;
    mlrt_task task;
    uint32_t n_classes;
    uint32_t *classes;              /* [n_classes] classification: the labels, ascending */
    mlrt__forest *forest;            /* decision_tree / random_forest, else NULL */
    mlrt__kmeans *kmeans;            /* kmeans, else NULL */
    struct mlrt__graph *graph;       /* an ONNX graph's plan, else NULL */
    mlrt__payload_desc payload;      /* .apr v1 classical models: what the payload decoded as */
    float *label_scores;            /* [label_rows][out_size] classification and clustering: predict_labels' scratch */
    uint32_t label_rows;
    mlrt_dtype dtype;               /* element type of the weights in the file */
    uint32_t n_layers;
    mlrt__dense *layers;             /* [n_layers] */
    uint32_t in_size, out_size;
    uint32_t max_width;             /* widest activation, padded */
    uint32_t tile_rows;             /* batch rows per tile: MLRT__TILE_ROWS, fewer for very wide layers */
    float *scratch;                 /* [2][tile_rows][max_width] ping-pong activations */
    int16_t *xq;                    /* quantized layers: one activation row as int16 [max_in_q] */
    int32_t *xsum;                  /* quantized layers: the row's sum per Q4 group [max_in_q / 4] */
    uint32_t *xnz;                  /* quantized layers: the row's runs of nonzero Q8 input pairs [max_in_q / 2 + 1][2] */
    char *info_json;                /* mlrt_model_info_json */
    const char *weight_layout;      /* dense models from tensors: "out_in", "in_out" or "mixed"; else NULL */
    bool weight_layout_guessed;     /* some layer's orientation was PyTorch's default, not the file's evidence */
    const mlrt_model *parent;       /* mlrt_model_fork: the model whose weights this one borrows, else NULL */
};

/* Weights of one dense layer as the loader found them, before packing. */
typedef struct mlrt__dense_src {
    const char *name, *b_name;      /* for messages: the weight and bias tensors' names ("w1", "b1") */
    uint32_t in, out;
    const uint8_t *w;               /* in the file */
    mlrt_dtype w_dtype;
    bool w_in_major;                /* true: [in][out] (the .bin layout); false: [out][in] (nn.Linear) */
    const uint8_t *b;               /* [out] in the file, or NULL for no bias */
    mlrt_dtype b_dtype;
    mlrt_activation act;
    bool w_guessed;                 /* nothing in the file told the orientation: w_in_major is PyTorch's default */
} mlrt__dense_src;

/* Builds a model from dense layers (packs + converts the weights). */
mlrt_model *mlrt__model_build(mlrt_format format, mlrt_kind kind, mlrt_dtype dtype,
                             const mlrt__dense_src *src, uint32_t n_layers,
                             const mlrt__tensorset *ts, mlrt_error *err);

/* Converts and packs one dense layer into d (d zeroed); refuses non-finite weights. fmt: for messages. */
mlrt_status mlrt__dense_pack(const mlrt__dense_src *s, const char *fmt, mlrt__dense *d, mlrt_error *err);
/* ONNX graphs (model/graph*.c): m->graph is the plan. */
struct mlrt__graph;

/* Trees, forests and k-means (model/classic.c): take ownership of f / km (freed on failure too). */
mlrt_model *mlrt__model_forest(mlrt_kind kind, uint32_t in_size, mlrt__forest *f, mlrt__payload_desc desc,
                              const mlrt__tensorset *ts, mlrt_error *err);
mlrt_model *mlrt__model_kmeans(mlrt__kmeans *km, mlrt__payload_desc desc, const mlrt__tensorset *ts, mlrt_error *err);
void mlrt__forest_free(mlrt__forest *f);
mlrt_status mlrt__classic_predict(mlrt_model *m, const float *in, size_t n, float *out, mlrt_error *err);
/* A predict call's arguments (what: "predict") and its n rows of inputs: finite, except for trees. */
mlrt_status mlrt__check_rows(const mlrt_model *m, const float *in, size_t n, const void *out, const char *what,
                            mlrt_error *err);
void mlrt__kmeans_free(mlrt__kmeans *km);
/* Allocates predict_labels' scratch for a classifier or a clusterer (classic.c). */
mlrt_status mlrt__model_label_scratch(mlrt_model *m);
/* Sets a dense model's task and classes from its shape (model.c). */
mlrt_status mlrt__model_dense_task(mlrt_model *m);
/* The model's members of info after "kind" (task, classes, trees, clusters, payload), for info and inspect. */
void mlrt__model_facts_json(mlrt__buf *b, const mlrt_model *m);

/* Format readers that build models. */
mlrt_model *mlrt__load_bin(const uint8_t *b, size_t n, mlrt_error *err);
/* ---- .apr v1 (apr_v1.c): one model in a checksummed container ---- */
/* aprender's model types (the v1 header's u16); the ones mlrt runs: */
#define MLRT__APR_LINEAR_REGRESSION 0x0001
#define MLRT__APR_LOGISTIC_REGRESSION 0x0002
#define MLRT__APR_DECISION_TREE 0x0003
#define MLRT__APR_RANDOM_FOREST 0x0004
#define MLRT__APR_KMEANS 0x0006
#define MLRT__APR_NGRAM_LM 0x0010
#define MLRT__APR_NEURAL_SEQUENTIAL 0x0020
const char *mlrt__apr_type_name(uint16_t code);                   /* "LinearRegression"; NULL if unknown */
bool mlrt__apr_type_from_name(const char *name, uint16_t *code);

/* A v1 file whose container is valid: checksum, header, sections, metadata. */
typedef struct mlrt__apr_v1 {
    uint16_t type;                  /* model type code */
    uint8_t compression, flags;
    uint32_t raw_size;              /* the payload's length before compression */
    const uint8_t *payload;         /* [payload_size] in the file, from byte payload_at */
    size_t payload_at, payload_size;
    mlrt__tensorset ts;              /* no tensors: the metadata JSON and the "apr" member of info/inspect */
} mlrt__apr_v1;
/* expect: the model type the caller wants (0: any), checked right after the header. */
mlrt_status mlrt__read_apr_v1(const uint8_t *b, size_t n, uint16_t expect, mlrt__apr_v1 *f, mlrt_error *err);
/* Decrypts nothing: an encrypted payload is MLRT_ERR_ENCRYPTED. Does not free f. */
mlrt_model *mlrt__apr_v1_model(const mlrt__apr_v1 *f, mlrt_error *err);
/* More members for inspect about a payload that makes no model (NgramLm: "\"ngram\":{...}"), malloc'd, or NULL. */
char *mlrt__apr_v1_payload_json(const mlrt__apr_v1 *f);
mlrt_model *mlrt__model_from_tensors(const uint8_t *file, const mlrt__tensorset *ts, mlrt_weight_layout layout,
                                    mlrt_error *err);
/* The classical payloads (formats/apr_trees.c, formats/apr_kmeans.c): raw is the decompressed bincode. */
mlrt_model *mlrt__apr_tree_model(const uint8_t *raw, size_t n, const mlrt__tensorset *ts, mlrt_error *err);
mlrt_model *mlrt__apr_forest_model(const uint8_t *raw, size_t n, const mlrt__tensorset *ts, mlrt_error *err);
mlrt_model *mlrt__apr_kmeans_model(const uint8_t *raw, size_t n, const mlrt__tensorset *ts, mlrt_error *err);
/* NgramLm: validates the payload and describes it as JSON members ("\"ngram\":{...}"), malloc'd. */
mlrt_status mlrt__apr_ngram_describe(const uint8_t *raw, size_t n, char **json, mlrt_error *err);


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
/* Walks one tree (root, depth levels) for rows [0, rows) of x [rows][stride]: at[r] = the leaf row r ends in. */
void mlrt__tree_walk(const mlrt__tree_node *nodes, uint32_t root, uint32_t depth, const float *x, size_t stride,
                    size_t rows, uint32_t *at);
/* One row x through every tree, eight at a time: leaf[t] = the leaf x ends in, in tree t. */
void mlrt__trees_walk_row(const mlrt__tree_node *nodes, const uint32_t *root, const uint32_t *depth, uint32_t n_trees,
                         const float *x, uint32_t *leaf);
/* d[r][q] = sum_j (x[r][j] - c[q][j])^2 in f32, j ascending, for q < km->k (d: [rows][km->k]). */
void mlrt__kmeans_distances(const mlrt__kmeans *km, const float *x, size_t rows, float *d);

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


/* ---- text: tokenizer ---- (formats/tokenizer_json.c, formats/vocab_txt.c, model/tokenizer*.c, api/tokenizer_load.c) */
#include "ir/ir.h"
/* Readers: fill *d (zeroed first) from the whole file; on failure d is freed. */
mlrt_status mlrt__read_tokenizer_json(const uint8_t *b, size_t n, mlrt__tok_desc *d, mlrt_error *err);
/* config: tokenizer_config.json's bytes, or NULL. */
mlrt_status mlrt__read_vocab_txt(const uint8_t *vocab, size_t n, const uint8_t *config, size_t config_len,
                                 mlrt__tok_desc *d, mlrt_error *err);
/* Builds the runnable tokenizer from d, taking what it owns (d is left empty, built or not). */
mlrt_tokenizer *mlrt__tokenizer_build(mlrt__tok_desc *d, mlrt_error *err);

/* A growable array of elements of one size (bytes, ids, ...): false, and nothing changed, when
 * n more would overflow or not be allocated. */
typedef struct mlrt__vec {
    void *p;                        /* [cap] elements */
    size_t len, cap;
} mlrt__vec;
bool mlrt__vec_reserve(mlrt__vec *v, size_t more, size_t elem);

struct mlrt_tokenizer {
    mlrt__tok_desc d;               /* the description it was built from (owned) */
    uint32_t *slots;                /* [mask + 1] the vocabulary's hash table: id + 1, 0 empty (open addressing) */
    uint32_t mask;
    uint32_t prefix_hash;           /* the hash state after continuing_subword_prefix */
    uint32_t max_token_bytes;       /* the longest vocabulary token */
    uint8_t added_first[256];       /* 1 when some added token starts with this byte */
    uint32_t *added_order;          /* [n_added] indices of the added tokens, longest first */
    /* scratch, reused by every call */
    mlrt__vec norm;                 /* bytes: one normalized piece of text */
    mlrt__vec run;                  /* uint32_t: a run of combining characters waiting to be reordered */
    mlrt__vec run_tmp;              /* uint32_t: the counting sort's copy of a long run */
    mlrt__vec states;               /* uint32_t [2]: WordPiece's (end, hash) per character boundary */
    mlrt__vec seq[2];               /* int32_t: the ids of sequences A and B */
    mlrt__vec ids, type_ids, mask_; /* int32_t, int32_t, uint8_t: the last encoding (or batch) */
    mlrt__vec lengths;              /* uint32_t: a batch's row lengths */
    mlrt__vec row_at;               /* size_t: where each row of a batch starts before padding */
    /* Rust's tokenize_with_limit (an early exit that truncation's pair arithmetic sees): while a
     * sequence is encoded under truncation, its words stop once `limit` tokens are reached */
    size_t limit;                   /* max_length, or 0: no limit */
    bool limit_left;                /* truncating left: the words are cut from the front afterwards */
    bool stop;                      /* set when the limit is reached (truncating right) */
    size_t seq_start;               /* where the sequence's ids start in its vec */
    mlrt__vec splits;               /* uint32_t: truncating left, each split's end << 1 | (1: a word) */
    char *info_json;
};

/* Normalizes text [n] (valid UTF-8) as the tokenizer's normalizer does, appended to t->norm
 * (model/tokenizer_text.c). False when out of memory. */
bool mlrt__tok_normalize(mlrt_tokenizer *t, const uint8_t *text, size_t n);
/* Pre-tokenizes and WordPiece-encodes s [n] (normalized text), appending ids to out. */
bool mlrt__tok_words(mlrt_tokenizer *t, const uint8_t *s, size_t n, mlrt__vec *out);
/* The vocabulary id of prefix (if with_prefix) + s [n] whose FNV-1a state is h, or -1 (model/tokenizer.c). */
long mlrt__tok_lookup(const mlrt_tokenizer *t, bool with_prefix, const uint8_t *s, size_t n, uint32_t h);
/* A split (a word, or an added token: word false) of the sequence being encoded ended at out->len
 * (model/tokenizer.c). False when out of memory. */
bool mlrt__tok_split(mlrt_tokenizer *t, const mlrt__vec *out, bool word);
/* The description as info JSON, malloc'd, or NULL when out of memory (model/tokenizer_info.c). */
char *mlrt__tok_info(const mlrt_tokenizer *t);
#define MLRT__FNV_INIT 2166136261u
#define MLRT__FNV_STEP(h, byte) (((h) ^ (uint8_t)(byte)) * 16777619u)
/* ---- end of text: tokenizer ---- */

#endif
