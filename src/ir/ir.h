/* ir/ir.h — the neutral descriptions that formats hand to the model layer: a file's tensors, a
 * model's dense layers, trees, centroids, a graph of ops and a tokenizer, as plain structs. A format fills
 * one (formats/), the model layer builds a runnable model from it (model/) and takes what it
 * owns. ir/ uses only the base; it knows no file format and runs nothing (README, "Architecture"). */
#ifndef MLRT__IR_H
#define MLRT__IR_H
#include "../base/base.h"

/* ---------------------------------------------------------------- a tensor file */

/* One tensor of a file, parsed and validated but not yet a model. */
typedef struct mlrt__tensor {
    char *name;                     /* [name_len + 1], UTF-8, NUL-terminated */
    size_t name_len;
    mlrt_dtype dtype;
    uint32_t rank;
    uint64_t shape[MLRT__MAX_RANK]; /* [rank] */
    uint64_t count;                 /* product of shape */
    size_t begin, end;              /* byte range [begin, end) in the data section */
} mlrt__tensor;

typedef struct mlrt__kv {
    char *key, *value;              /* NUL-terminated UTF-8 */
    size_t key_len, value_len;
} mlrt__kv;

/* The tensors and metadata SafeTensors, BinTensors and .apr v2 files share (and an .apr v1 file's
 * metadata, with no tensors). */
typedef struct mlrt__tensorset {
    mlrt_format format;
    mlrt__tensor *tensors;          /* [count], in file order (ascending begin) */
    size_t count;
    mlrt__kv *meta;                 /* [meta_count] string -> string metadata (.apr v2: its top-level strings) */
    size_t meta_count;
    char *meta_json;                /* the metadata as a JSON object when it is more than strings (.apr), or NULL */
    char *extra_json;               /* more members for info and inspect ("\"apr\":{...}"), or NULL */
    size_t data_begin;              /* where the data section starts in the file */
} mlrt__tensorset;

void mlrt__tensorset_free(mlrt__tensorset *ts);
const mlrt__tensor *mlrt__tensorset_find(const mlrt__tensorset *ts, const char *name);
const char *mlrt__tensorset_meta(const mlrt__tensorset *ts, const char *key); /* NULL if absent */
void mlrt__json_metadata(mlrt__buf *b, const mlrt__tensorset *ts);           /* {"k":"v",...}; ts may be NULL */

/* ---------------------------------------------------------------- dense layers */

/* One dense layer's weights as a file holds them, before packing. */
typedef struct mlrt__dense_src {
    const char *name, *b_name;      /* for messages: the weight and bias tensors' names ("w1", "b1") */
    uint32_t in, out;
    const uint8_t *w;               /* in the file (or in mlrt__desc.owned) */
    mlrt_dtype w_dtype;
    bool w_in_major;                /* true: [in][out] (the .bin layout); false: [out][in] (nn.Linear) */
    const uint8_t *b;               /* [out] in the file, or NULL for no bias */
    mlrt_dtype b_dtype;
    mlrt_activation act;
    bool w_guessed;                 /* nothing in the file told the orientation: w_in_major is PyTorch's default */
} mlrt__dense_src;

/* ---------------------------------------------------------------- trees and k-means */

#define MLRT__MAX_TREE_DEPTH 4096          /* levels below a root; deeper trees are refused */
#define MLRT__MAX_TREE_NODES (1u << 26)    /* nodes in one model */
#define MLRT__MAX_CLASSES    65536         /* distinct class labels */

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
    uint32_t n_features;            /* the input width */
    mlrt__tree_node *nodes;         /* [n_nodes]: each tree in pre-order (left child = parent + 1), tree after tree */
    uint32_t *root;                 /* [n_trees] */
    uint32_t *depth;                /* [n_trees] */
    uint32_t *classes;              /* [n_classes] classifiers: the stored labels, ascending */
    uint32_t n_classes;
} mlrt__forest;
void mlrt__forest_free(mlrt__forest *f);

typedef struct mlrt__kmeans {
    uint32_t k, dim;
    float *c;                       /* [k][dim] centroids, finite */
} mlrt__kmeans;
void mlrt__kmeans_free(mlrt__kmeans *km);

/* ---------------------------------------------------------------- a model, as a file describes it */

typedef enum mlrt__desc_type {
    MLRT__DESC_NONE = 0,
    MLRT__DESC_DENSE,               /* layers */
    MLRT__DESC_FOREST,              /* forest */
    MLRT__DESC_KMEANS               /* kmeans */
} mlrt__desc_type;

/* What an .apr v1 payload decoded as, for info and inspect ("RandomForestClassifier", "E2"). */
typedef struct mlrt__payload_desc {
    const char *estimator;          /* aprender's Rust type */
    const char *layout;             /* "E1" / "E2" (trees), "legacy" / "current" (KMeans) */
} mlrt__payload_desc;

/* A model a format read, for the model layer to build (mlrt__build, model/). The builder takes the
 * pointers it keeps (forest, kmeans) and sets them to NULL; mlrt__desc_free frees the rest. */
typedef struct mlrt__desc {
    mlrt__desc_type type;
    mlrt_format format;
    mlrt_kind kind;
    const mlrt__tensorset *ts;      /* the file's metadata and extra info members, or NULL (borrowed) */
    mlrt__payload_desc payload;     /* .apr v1 classical models: what the payload decoded as */
    /* DENSE */
    mlrt_dtype dtype;               /* the weights' element type in the file */
    uint32_t n_layers;
    mlrt__dense_src layers[MLRT__MAX_LAYERS]; /* [n_layers] */
    /* FOREST, KMEANS (owned until built) */
    mlrt__forest *forest;
    mlrt__kmeans *kmeans;
    void *owned;                    /* bytes the layers point into (a decompressed payload), or NULL */
} mlrt__desc;
void mlrt__desc_free(mlrt__desc *d);

/* ---------------------------------------------------------------- a BERT-family encoder */

#define MLRT__ENC_MAX_LAYERS 256
#define MLRT__ENC_MAX_POSITIONS 65536         /* max_position_embeddings */
#define MLRT__ENC_MAX_PROMPT (1u << 20)        /* bytes of a prompt in the files */
#define MLRT__ENC_MAX_DENSE 8                  /* sentence-transformers Dense modules after the pooling */

/* sentence-transformers' pooling modes; several are concatenated in this order. */
enum {
    MLRT__EPOOL_CLS = 1, MLRT__EPOOL_MAX = 2, MLRT__EPOOL_MEAN = 4, MLRT__EPOOL_MEAN_SQRT = 8,
    MLRT__EPOOL_WEIGHTED = 16, MLRT__EPOOL_LAST = 32
};

/* One tensor of the file that is not a dense layer's weight: its bytes, checked against its shape. */
typedef struct mlrt__enc_src {
    const char *name;               /* the file's tensor name, for messages */
    const uint8_t *p;               /* [count] elements of dtype, in the file */
    mlrt_dtype dtype;               /* F32, F16, BF16, or a quantized .apr type */
    uint64_t count;
} mlrt__enc_src;

typedef struct mlrt__enc_layer {
    mlrt__dense_src w[6];           /* query, key, value, attention output ([hidden][hidden]), intermediate
                                     * ([ffn][hidden]), output ([hidden][ffn]): [out][in] + [out] biases */
    mlrt__enc_src ln1_w, ln1_b;     /* attention.output.LayerNorm [hidden] */
    mlrt__enc_src ln2_w, ln2_b;     /* output.LayerNorm [hidden] */
} mlrt__enc_layer;

/* A sentence-transformers Dense module (after the pooling): act(W x + b), in its folder's model.safetensors. */
typedef struct mlrt__enc_dense {
    mlrt__dense_src w;              /* [out][in] (+ [out]), act IDENTITY, TANH, RELU or SIGMOID; in the file */
    char names[2][96];              /* the weight's and bias's names, for messages ("2_Dense/linear.weight") */
} mlrt__enc_dense;

/* A BERT (or MPNet) encoder as a folder's files describe it (formats/bert.c): config, tensors (pointing into
 * the weights file), pooling. Owns dir, layer, prompt and facts_json; borrows ts. */
typedef struct mlrt__enc_desc {
    char *dir;                      /* the Transformer module's folder: "" (the top) or "0_Transformer/" (its
                                     * config, weights and tokenizer files are there) */
    mlrt_format format;
    const mlrt__tensorset *ts;      /* the weights file's metadata, for info */
    uint32_t hidden, layers, heads, ffn, vocab, positions, types; /* types 0: no token type table (MPNet) */
    float eps;                      /* layer_norm_eps */
    bool mpnet;                     /* MPNet: positions counted from padding_idx 1 + 1 over the ids that are not 1,
                                     * and a relative position bias on the attention scores (rel) */
    mlrt_dtype dtype;               /* the dense weights' element type in the file */
    uint32_t pooling;               /* MLRT__EPOOL_* bits */
    uint32_t n_dense;
    mlrt__enc_dense dense[MLRT__ENC_MAX_DENSE]; /* after the pooling, in order */
    bool normalize;                 /* L2 after pooling (and the Dense modules) */
    uint32_t max_length;            /* tokens mlrt_embed truncates to (<= positions) */
    bool lower_case;                /* sentence-transformers' do_lower_case: texts lowercased before tokenizing */
    bool cut_left;                  /* tokenizer_config.json's truncation_side "left" (transformers: it, not
                                     * tokenizer.json's direction, decides; default right) */
    char *prompt;                   /* [prompt_len + 1] the default prompt's text, prepended to every text
                                     * (config_sentence_transformers.json's default_prompt_name), or NULL */
    uint32_t prompt_len;
    bool include_prompt;            /* Pooling's include_prompt (default true): false leaves the prompt's
                                     * tokens ([CLS] and the prompt's own) out of the pooling but CLS */
    mlrt__enc_src word, pos, type, ln_w, ln_b; /* [vocab][hidden], [positions][hidden], [types][hidden], [hidden] */
    mlrt__enc_src rel;              /* MPNet: encoder.relative_attention_bias [relative_attention_num_buckets >= 32][heads],
                                     * of which MPNetEncoder uses the first 32 rows; else p NULL */
    mlrt__enc_layer *layer;         /* [layers] */
    char *facts_json;               /* the members of info the files give ("architecture":...,"unusedTensors":[...]) */
} mlrt__enc_desc;
void mlrt__enc_desc_free(mlrt__enc_desc *d);

/* ---------------------------------------------------------------- text: a tokenizer */

/* Limits every tokenizer reader enforces before allocating. */
#define MLRT__TOK_MAX_VOCAB      (1u << 22)   /* vocabulary entries */
#define MLRT__TOK_MAX_TOKEN      1024         /* bytes of one vocabulary or added token */
#define MLRT__TOK_MAX_ADDED      4096         /* added tokens */
#define MLRT__TOK_MAX_TEMPLATE   16           /* pieces of a post-processor template */
#define MLRT__TOK_MAX_SPECIAL_IDS 8           /* ids of one template special token */
#define MLRT__TOK_MAX_LENGTH     (1u << 24)   /* truncation max_length, padding length */

typedef enum mlrt__tok_truncation {
    MLRT__TRUNC_NONE = 0, MLRT__TRUNC_LONGEST_FIRST, MLRT__TRUNC_ONLY_FIRST, MLRT__TRUNC_ONLY_SECOND
} mlrt__tok_truncation;

typedef enum mlrt__tok_padding {
    MLRT__PAD_NONE = 0, MLRT__PAD_LONGEST, MLRT__PAD_FIXED
} mlrt__tok_padding;

/* A token of added_tokens, split out of the raw text before normalization. */
typedef struct mlrt__tok_added {
    char *content;                  /* [len + 1] UTF-8, NUL-terminated, len >= 1 */
    uint32_t len;
    uint32_t id;                    /* the vocabulary's id of content, or n_vocab + k for the k-th one outside it */
    bool special;                   /* skipped by decode when asked */
    bool normalized;                /* matched in normalized text, as content through the normalizer (norm) */
    bool lstrip, rstrip;            /* the White_Space before (after) a match is the token's, not the text's */
    char *norm;                     /* [norm_len + 1] that form (set when the tokenizer is built), or NULL */
    uint32_t norm_len;
} mlrt__tok_added;

/* A post-processor special token: what a SpecialToken piece of the template inserts. */
typedef struct mlrt__tok_special {
    char *name;                     /* NUL-terminated */
    uint32_t n_ids;                 /* 1..MLRT__TOK_MAX_SPECIAL_IDS */
    uint32_t ids[MLRT__TOK_MAX_SPECIAL_IDS];
} mlrt__tok_special;

/* One piece of a template: a special token, or sequence A (seq 0) or B (seq 1). */
typedef struct mlrt__tok_piece {
    int32_t special;                /* index into specials, or -1 for a sequence */
    uint8_t seq;                    /* 0: A, 1: B (sequences only) */
    uint32_t type_id;
} mlrt__tok_piece;

/* A WordPiece tokenizer as tokenizer.json or vocab.txt (+ tokenizer_config.json) describes it,
 * validated: ids in range, every name resolved. Owns every pointer; mlrt__tok_desc_free frees them
 * (the builder may take pool, off and added: it then sets them to NULL). */
typedef struct mlrt__tok_desc {
    const char *source;             /* "tokenizer.json" or "vocab.txt": the file messages name */
    /* model: WordPiece */
    uint32_t n_vocab;               /* tokens with ids 0..n_vocab-1, no holes, no two alike */
    char *pool;                     /* [pool_len] the tokens, each NUL-terminated, in id order */
    size_t pool_len;
    uint32_t *off;                  /* [n_vocab + 1] token i = pool[off[i] .. off[i+1] - 1) */
    uint32_t unk_id;                /* unk_token's id (in the vocabulary) */
    char prefix[MLRT__TOK_MAX_TOKEN + 1]; /* continuing_subword_prefix ("##"), NUL-terminated */
    uint32_t prefix_len;
    uint32_t max_chars_per_word;    /* max_input_chars_per_word (100) */
    /* normalizer: BertNormalizer, or none */
    bool normalize;                 /* false: normalizer null */
    bool clean_text, chinese_chars, strip_accents, lowercase; /* strip_accents resolved (null: = lowercase) */
    /* pre-tokenizer: BertPreTokenizer, or none (the whole normalized text is one word) */
    bool pre_tokenize;
    /* added tokens (no single_word) */
    mlrt__tok_added *added;         /* [n_added] in file order */
    uint32_t n_added;
    uint32_t n_ids;                 /* n_vocab + the added tokens outside the vocabulary */
    /* post-processor: a template for one sequence and for pairs, or none */
    bool post_process;
    mlrt__tok_special *specials;    /* [n_specials] */
    uint32_t n_specials;
    mlrt__tok_piece single[MLRT__TOK_MAX_TEMPLATE], pair[MLRT__TOK_MAX_TEMPLATE];
    uint32_t n_single, n_pair;
    uint32_t added_single, added_pair; /* ids the template adds: to one sequence, to a pair */
    /* truncation (the file's default) */
    mlrt__tok_truncation truncation;
    uint32_t max_length;            /* truncation: final length incl. specials */
    bool truncate_left;             /* direction Left: keep the last tokens */
    /* padding (the file's default) */
    mlrt__tok_padding padding;
    uint32_t pad_length;            /* PAD_FIXED */
    uint32_t pad_multiple;          /* pad_to_multiple_of, 0: none */
    bool pad_left;
    uint32_t pad_id, pad_type_id;
    /* decoder: WordPiece (prefix, cleanup), or none (tokens joined by spaces) */
    bool decode_wordpiece;
    char decode_prefix[MLRT__TOK_MAX_TOKEN + 1];
    uint32_t decode_prefix_len;
    bool decode_cleanup;
    uint32_t model_max_length;      /* tokenizer_config.json's model_max_length (0: not given), for info */
} mlrt__tok_desc;

void mlrt__tok_desc_free(mlrt__tok_desc *d);
/* A token that comes twice (pool, off, n_vocab set): *dup_a < *dup_b, its first two ids (the first
 * repeat in id order), or -1 when none does. False when out of memory. */
bool mlrt__tok_desc_check(const mlrt__tok_desc *d, long *dup_a, long *dup_b);
/* The lowest id of token s [n] in d's vocabulary, or -1. */
long mlrt__tok_desc_find(const mlrt__tok_desc *d, const char *s, size_t n);

/* ---------------------------------------------------------------- a graph of ops */

/* A graph as a format reads it (formats/onnx_import.c), for the model layer to plan and run
 * (model/graph*.c): values (constants, the graph's inputs, what the ops compute) and ops in run
 * order, each with a kind and the parameters of that kind. Shapes of computed values are left to
 * the planner, which infers them; the graph knows no file format. */

#define MLRT__IR_SYM(k) (-1 - (int64_t)(k))    /* a dim that is the graph's symbol k (mlrt__ir_graph.syms) */
#define MLRT__IR_SYM_OF(d) ((uint32_t)(-1 - (d)))

typedef struct mlrt__ir_value {
    const char *name;               /* NUL-terminated (the graph's strings); "" for constants a format made */
    mlrt_dtype dtype;               /* MLRT_F32 or MLRT_I64; MLRT_DTYPE_COUNT_: not known (computed values) */
    int32_t rank;                   /* -1: not known (computed values, unless the file declares a graph output's) */
    int64_t dims[MLRT__MAX_RANK];   /* [rank]: >= 0, or MLRT__IR_SYM(k) */
    bool is_const;
    uint64_t count;                 /* constants: product of dims */
    void *data;                     /* constants: [count] F32 or I64 (owned) */
} mlrt__ir_value;

typedef enum mlrt__op_kind {
    MLRT__OP_GEMM,                  /* y = alpha A' B' + beta C (A' = A or A^T, B' likewise) */
    MLRT__OP_MATMUL,                /* numpy's matmul */
    MLRT__OP_CONV,                  /* NCHW convolution (1-D or 2-D) */
    MLRT__OP_POOL,                  /* max, average or global average pooling */
    MLRT__OP_ADD, MLRT__OP_SUB, MLRT__OP_MUL, MLRT__OP_DIV, /* numpy broadcasting */
    MLRT__OP_ACT,                   /* an elementwise function (inputs 1, 2: a clip's bounds) */
    MLRT__OP_SOFTMAX,
    MLRT__OP_BATCHNORM,             /* inputs x, scale, bias, mean, var */
    MLRT__OP_LAYERNORM,             /* inputs x, scale, bias; outputs y, mean, 1 / std */
    MLRT__OP_FLATTEN, MLRT__OP_RESHAPE, MLRT__OP_SQUEEZE, MLRT__OP_UNSQUEEZE, MLRT__OP_IDENTITY, /* views */
    MLRT__OP_TRANSPOSE, MLRT__OP_CONCAT,
    MLRT__OP_PAD,                   /* inputs x, pads, value, axes */
    MLRT__OP_SLICE,                 /* inputs x, starts, ends, axes, steps */
    MLRT__OP_SHAPE, MLRT__OP_GATHER, MLRT__OP_CAST,
    MLRT__OP_KIND_COUNT_
} mlrt__op_kind;

/* The elementwise functions of MLRT__OP_ACT. */
typedef enum mlrt__ir_fn {
    MLRT__FN_RELU, MLRT__FN_LEAKY_RELU, MLRT__FN_SIGMOID, MLRT__FN_TANH, MLRT__FN_ERF, MLRT__FN_GELU, MLRT__FN_CLIP
} mlrt__ir_fn;
typedef enum mlrt__ir_pad_mode { MLRT__PADS_EXPLICIT, MLRT__PADS_SAME_UPPER, MLRT__PADS_SAME_LOWER, MLRT__PADS_VALID } mlrt__ir_pad_mode;
typedef enum mlrt__ir_pool { MLRT__IR_POOL_MAX, MLRT__IR_POOL_AVG, MLRT__IR_POOL_GLOBAL_AVG } mlrt__ir_pool;

/* Each kind's parameters. A list keeps how many values the file gave (0: none; more than it
 * holds: only the first are kept, and the planner refuses the count). */
typedef struct mlrt__ir_gemm { bool trans_a, trans_b; float alpha, beta; } mlrt__ir_gemm;
typedef struct mlrt__ir_window {    /* CONV, POOL */
    int64_t kernel[2], strides[2], dilations[2], pads[4]; /* pads: the begins, then the ends */
    uint8_t n_kernel, n_strides, n_dilations, n_pads;
    uint8_t pad_mode;               /* mlrt__ir_pad_mode */
    uint8_t pool;                   /* POOL: mlrt__ir_pool */
    bool ceil_mode, count_include_pad;
    int64_t group;                  /* CONV */
} mlrt__ir_window;
typedef struct mlrt__ir_act { uint8_t fn; uint8_t approximate; float alpha; } mlrt__ir_act; /* fn: mlrt__ir_fn;
                                     * GELU: approximate 1 is the tanh form; LEAKY_RELU: alpha */
typedef struct mlrt__ir_softmax { int64_t axis; bool log, flatten; } mlrt__ir_softmax; /* flatten: over all axes from
                                     * axis on (opsets before 13), not over axis alone */
typedef struct mlrt__ir_norm { int64_t axis; float epsilon; } mlrt__ir_norm;      /* BATCHNORM, LAYERNORM */
typedef struct mlrt__ir_axis { int64_t axis; } mlrt__ir_axis;                      /* FLATTEN, CONCAT, GATHER */
typedef struct mlrt__ir_reshape { bool allow_zero; } mlrt__ir_reshape;
typedef struct mlrt__ir_transpose { uint8_t n_perm; int64_t perm[MLRT__MAX_RANK]; } mlrt__ir_transpose; /* 0: reversed */
typedef struct mlrt__ir_shape { int64_t start, end; bool has_end; } mlrt__ir_shape;
typedef struct mlrt__ir_cast { mlrt_dtype to; } mlrt__ir_cast;                     /* MLRT_F32 or MLRT_I64 */

typedef struct mlrt__ir_op {
    mlrt__op_kind kind;
    uint32_t n_in, n_out;
    int32_t *in, *out;              /* [n_in], [n_out] value ids; -1: an absent input, an output nobody names */
    uint32_t node;                  /* the file's node, for messages: "node 3 (Conv 'c1')" */
    const char *type, *name;        /* the file's op type and node name (NUL-terminated) */
    union {
        mlrt__ir_gemm gemm;
        mlrt__ir_window window;
        mlrt__ir_act act;
        mlrt__ir_softmax softmax;
        mlrt__ir_norm norm;
        mlrt__ir_axis axis;
        mlrt__ir_reshape reshape;
        mlrt__ir_transpose transpose;
        mlrt__ir_shape shape;
        mlrt__ir_cast cast;
    } p;
} mlrt__ir_op;

typedef struct mlrt__ir_graph {
    const char *format;             /* "onnx": messages about the graph start with it */
    mlrt__ir_value *vals;           /* [n_vals] */
    mlrt__ir_op *ops;               /* [n_ops] in run order: an op reads values defined before it */
    int32_t *inputs, *outputs;      /* [n_inputs], [n_outputs] value ids */
    const char **syms;              /* [n_syms] the symbolic dims' names (a graph input's dims refer to them) */
    uint32_t n_vals, n_ops, n_inputs, n_outputs, n_syms;
    char *facts_json;               /* the format's member of info ("onnx":{...}), or NULL */
    int32_t *ids;                   /* the ops' in and out lists (one block) */
    char *strings;                  /* the names (one block) */
} mlrt__ir_graph;
void mlrt__ir_graph_free(mlrt__ir_graph *g);

#endif
