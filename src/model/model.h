/* model/model.h — what runs: struct mlrt_model, the interface every model family implements, and
 * the builders that turn a format's description (ir/ir.h) into a model. The model layer uses
 * kernels, ir and the base (README, "Architecture").
 *
 * A family is one kind of model behind one table of functions (mlrt__family): dense layers (MLPs,
 * linear and logistic regression: model/dense.c), the classical models (trees, forests, k-means:
 * model/classic.c) and graphs (model/graph*.c, their own header model/graph.h). model.c checks every call's arguments, then hands
 * it to the model's family: nothing outside a family looks at its state. */
#ifndef MLRT__MODEL_H
#define MLRT__MODEL_H
#include "../ir/ir.h"
#include "../kernels/kernels.h"

/* One input or output as a model lists it. */
typedef struct mlrt__io {
    mlrt_tensor t;                  /* name, dtype, rank, dims (-1: varies per call); data: the last run's result
                                     * (outputs), else NULL */
    const char *sym[MLRT_MAX_DIMS]; /* a varying dimension's name ("batch", "sequence"), else NULL */
    int64_t max[MLRT_MAX_DIMS];     /* a varying dimension's largest value */
    size_t cap;                     /* outputs: bytes data holds */
    bool optional;                  /* inputs: mlrt_run may leave it out (the family gets data NULL) */
} mlrt__io;

typedef struct mlrt__family {
    const char *name;               /* "dense", "classic", "graph" */
    /* inputs [m->n_inputs] in the model's order, checked against its list (dtypes converted, dims
     * fixed where the list fixes them); writes every output with mlrt__output. */
    mlrt_status (*run)(mlrt_model *m, const mlrt_tensor *in, mlrt_error *err);
    /* n rows of m->in_size floats -> n rows of m->out_size (NULL: the family has no rows); the rows are checked. */
    mlrt_status (*predict)(mlrt_model *m, const float *in, size_t n, float *out, mlrt_error *err);
    /* Outputs [o0, o1) of layer i (mlrt_layer_slice, checked); NULL: the family has no layers to slice. */
    mlrt_status (*slice)(mlrt_model *m, size_t i, const float *x, float *y, size_t rows, size_t o0, size_t o1,
                         mlrt_error *err);
    /* State of its own for another thread, the weights shared (mlrt_model_fork); NULL: does not fork. */
    void *(*fork)(const mlrt_model *m, mlrt_error *err);
    void (*free)(mlrt_model *m);    /* the family's state m->impl (a fork's: its own part only) */
    /* info members after "task" and "classes" (trees, clusters, layers, the graph, ...) */
    void (*facts)(mlrt__buf *b, const mlrt_model *m);
    uint64_t (*params)(const mlrt_model *m);
    uint64_t (*weight_bytes)(const mlrt_model *m);
    /* Layer i's weights as f32 [out][in] and bias [out] (mlrt_layer_weights, checked); NULL: none. */
    void (*layer_weights)(const mlrt_model *m, size_t i, float *w, float *b);
} mlrt__family;

struct mlrt_model {
    const mlrt__family *family;
    void *impl;                     /* the family's state */
    mlrt_format format;
    mlrt_kind kind;
    mlrt_task task;
    mlrt_dtype dtype;               /* element type of the weights in the file */
    uint32_t n_classes;
    uint32_t *classes;              /* [n_classes] classification: the labels, ascending (owned) */
    uint32_t in_size, out_size;     /* floats per row (mlrt_predict); 0 when the model takes no rows */
    uint32_t n_inputs, n_outputs;
    mlrt__io *inputs, *outputs;     /* [n_inputs], [n_outputs] */
    uint32_t n_layers;
    mlrt_layer_info *layers;        /* [n_layers] dense models: mlrt_layer */
    mlrt__payload_desc payload;     /* .apr v1 classical models: what the payload decoded as */
    float *label_scores;            /* [label_rows][out_size] classification and clustering: predict_labels' scratch */
    uint32_t label_rows;
    char *info_json;                /* mlrt_model_info_json */
    const mlrt_model *parent;       /* mlrt_model_fork: the model whose weights and lists this one borrows, else NULL */
};

/* ---- model.c: what every family shares ---- */
/* A model of `family` with state impl; NULL (impl freed through family->free) when out of memory. */
mlrt_model *mlrt__model_new(const mlrt__family *family, void *impl, mlrt_format format, mlrt_kind kind, mlrt_error *err);
/* The one input "input" [batch, in] F32 and one output "output" [batch, out] F32 of a model of rows. */
mlrt_status mlrt__model_rows_io(mlrt_model *m, uint32_t in, uint32_t out);
/* Sets m->task and m->classes: classification with labels 0..n-1 (n > 0), or regression (n == 0). */
mlrt_status mlrt__model_labels(mlrt_model *m, mlrt_task task, uint32_t n);
/* The rest of a new model: predict_labels' scratch and info (ts: the file's metadata, or NULL).
 * Frees m and returns NULL when out of memory. */
mlrt_model *mlrt__model_finish(mlrt_model *m, const mlrt__tensorset *ts, mlrt_error *err);
/* Output k of this run, [rank] dims: its buffer, grown as needed (NULL: out of memory, *err set). */
void *mlrt__output(mlrt_model *m, uint32_t k, uint32_t rank, const int64_t *dims, mlrt_error *err);
/* The model's members of info after "kind" (task, classes, the family's facts), for info and inspect. */
void mlrt__model_facts_json(mlrt__buf *b, const mlrt_model *m);
/* A predict call's arguments (what: "predict") and its n rows of inputs: finite unless finite is false. */
mlrt_status mlrt__check_rows(const mlrt_model *m, const float *in, size_t n, const void *out, bool finite,
                             const char *what, mlrt_error *err);
/* No output of rows x width (columns [o0, o1)) is inf or NaN: finite weights and inputs can overflow. */
mlrt_status mlrt__check_outputs(const float *y, size_t rows, size_t width, size_t o0, size_t o1, mlrt_error *err);
/* The run of a model of rows (family->run for dense and classic): input 0 [n, in] -> output 0 [n, out]. */
mlrt_status mlrt__run_rows(mlrt_model *m, const mlrt_tensor *in, mlrt_error *err);

/* ---- the builders: each takes what it keeps from d ---- */
mlrt_model *mlrt__build_dense(const mlrt__desc *d, mlrt_error *err);   /* model/dense.c */
mlrt_model *mlrt__build_forest(mlrt__desc *d, mlrt_error *err);        /* model/classic.c */
mlrt_model *mlrt__build_kmeans(mlrt__desc *d, mlrt_error *err);        /* model/classic.c */
/* A graph (model/graph.c): planned for its inputs' dims, checked op by op (*err names the op). Takes
 * ir whole (ir is zeroed), built or not. format: the file's, for info. */
mlrt_model *mlrt__build_graph(mlrt__ir_graph *ir, mlrt_format format, mlrt_error *err);
/* A block of memory from malloc that a builder may keep (mlrt_load_options.take_files). */
typedef struct mlrt__block {
    uint8_t *bytes;
    size_t len;
} mlrt__block;
/* A sentence encoder (model/encoder.c) with its tokenizer tok (taken; may be NULL). Takes d's facts_json.
 * blocks [n_blocks] (or NULL): the files' blocks, which d's tensors may point into; the model keeps those
 * it uses its weights in place in (setting their bytes to NULL here, on failure too: it freed them then),
 * and the caller frees the rest. */
mlrt_model *mlrt__build_encoder(mlrt__enc_desc *d, mlrt_tokenizer *tok, mlrt__block *blocks, size_t n_blocks,
                                mlrt_error *err);
/* Runs the encoders' packing and kernels a little over buffers of their own, with no model (mlrt_warm_up). */
mlrt_status mlrt__encoder_warm_up(mlrt_error *err);

/* Converts and packs one dense layer into l (zeroed); refuses non-finite weights. fmt: for messages (dense.c). */
mlrt_status mlrt__dense_pack(const mlrt__dense_src *s, const char *fmt, mlrt__dense *l, mlrt_error *err);
mlrt_status mlrt__dense_pack_over(const mlrt__dense_src *s, const char *fmt, mlrt__dense *l, mlrt_error *err); /* packed where s->w lies */
void mlrt__dense_release(mlrt__dense *l);                               /* what mlrt__dense_pack allocated */


/* ---- text: the tokenizer engine (model/tokenizer.c, tokenizer_text.c, tokenizer_info.c) ---- */
/* Builds the runnable tokenizer from d, taking what it owns (d is left empty, built or not). */
mlrt_tokenizer *mlrt__tokenizer_build(mlrt__tok_desc *d, mlrt_error *err);
/* mlrt_tokenizer_encode_batch of single texts, cut on the left or the right whatever the file's
 * truncation direction (transformers' truncation_side; an encoder's texts). */
mlrt_status mlrt__tokenizer_encode_batch_cut(mlrt_tokenizer *t, const char *texts, const size_t *ends, size_t n,
                                             const mlrt_encode_options *options, bool cut_left, mlrt_batch_encoding *out,
                                             mlrt_error *err);

/* Added tokens matched at a position of text, longest first (the first that matches is the longest). */
typedef struct mlrt__tok_matcher {
    uint8_t first[256];             /* 1 when some token's matched bytes start with this byte */
    uint32_t *order;                /* [n] indices into d.added, their matched bytes longest first */
    uint32_t n;
} mlrt__tok_matcher;

struct mlrt_tokenizer {
    mlrt__tok_desc d;               /* the description it was built from (owned) */
    uint32_t *slots;                /* [mask + 1] the vocabulary's hash table: id + 1, 0 empty (open addressing) */
    uint32_t mask;
    uint32_t prefix_hash;           /* the hash state after continuing_subword_prefix */
    uint32_t max_token_bytes;       /* the longest vocabulary token */
    mlrt__tok_matcher raw;          /* the added tokens matched in raw text, by their content */
    mlrt__tok_matcher normed;       /* those matched in normalized text (normalized: true), by their normalized form */
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
/* The vocabulary id of prefix (if with_prefix) + s [n] whose FNV-1a state is h, or -1 (model/tokenizer_text.c). */
long mlrt__tok_lookup(const mlrt_tokenizer *t, bool with_prefix, const uint8_t *s, size_t n, uint32_t h);
/* A split (a word, or an added token: word false) of the sequence being encoded ended at out->len
 * (model/tokenizer_text.c). False when out of memory. */
bool mlrt__tok_split(mlrt_tokenizer *t, const mlrt__vec *out, bool word);
/* Whether id's token is a special token, as Rust's decode skips them (model/tokenizer_info.c). */
bool mlrt__tok_is_special(const mlrt_tokenizer *t, int32_t id);
/* The description as info JSON, malloc'd, or NULL when out of memory (model/tokenizer_info.c). */
char *mlrt__tok_info(const mlrt_tokenizer *t);
/* The slot of hash h in the vocabulary's table of mask + 1 slots. */
static inline uint32_t mlrt__tok_slot(uint32_t h, uint32_t mask) { return (h ^ h >> 15) * 0x2c1b3c6du >> 7 & mask; }

#endif
