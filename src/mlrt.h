/* mlrt.h — the whole public C API of mlrt, a small strict inference runtime.
 *
 *   mlrt_error err;
 *   mlrt_model *m = mlrt_load_from_bytes(bytes, len, &err);   // any supported format
 *   if (!m) { fprintf(stderr, "%s: %s\n", mlrt_status_name(err.code), err.message); ... }
 *   float out[10];
 *   mlrt_predict(m, input, out, &err);                         // input: mlrt_input_size(m) floats
 *   mlrt_free(m);
 *
 * Every loader validates the whole file before it returns: a bad file is refused
 * here, with a status and a message naming what is wrong and where, never later.
 * The caller may free `bytes` as soon as mlrt_load_from_bytes returns.
 * All multi-byte values in every format are little endian.
 */
#ifndef MLRT_H
#define MLRT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Stable status codes. The names (mlrt_status_name) are what JavaScript sees as MlrtError.code. */
typedef enum mlrt_status {
    MLRT_OK = 0,
    MLRT_ERR_INVALID_ARGUMENT = 1, /* the call itself is wrong: NULL pointer, zero batch, ... */
    MLRT_ERR_UNKNOWN_FORMAT = 2,   /* the bytes are none of the formats mlrt reads */
    MLRT_ERR_TRUNCATED = 3,        /* the file ends inside a section it declares */
    MLRT_ERR_SIZE_MISMATCH = 4,    /* sizes disagree: file size vs dims, shape vs byte span */
    MLRT_ERR_BAD_DIMENSIONS = 5,   /* a dimension is zero, negative, too large or inconsistent */
    MLRT_ERR_SHAPE_OVERFLOW = 6,   /* a shape product or byte count overflows */
    MLRT_ERR_BAD_OFFSETS = 7,      /* tensor byte ranges out of bounds, overlapping, or with holes */
    MLRT_ERR_UNKNOWN_DTYPE = 8,    /* an element type mlrt does not know */
    MLRT_ERR_INVALID_UTF8 = 9,     /* text that must be UTF-8 is not */
    MLRT_ERR_INVALID_JSON = 10,    /* a JSON header is not valid JSON */
    MLRT_ERR_DUPLICATE_KEY = 11,   /* the same key twice in a header or metadata map */
    MLRT_ERR_HEADER_TOO_LARGE = 12,/* a declared header length beyond the limit or the file */
    MLRT_ERR_BAD_HEADER = 13,      /* the header parses but its fields have the wrong type/shape */
    MLRT_ERR_NOT_A_MODEL = 14,     /* valid tensors that form no model mlrt can run */
    MLRT_ERR_UNSUPPORTED = 15,     /* a valid file using a feature mlrt does not implement */
    MLRT_ERR_OUT_OF_MEMORY = 16,
    MLRT_ERR_NON_FINITE = 17,      /* a weight or an input is NaN or infinite */
    MLRT_ERR_CHECKSUM_MISMATCH = 18,     /* a stored CRC32 differs from the one of the bytes (.apr) */
    MLRT_ERR_UNSUPPORTED_VERSION = 19,   /* a container version mlrt does not read (.apr) */
    MLRT_ERR_UNSUPPORTED_MODEL_TYPE = 20,/* an .apr model type mlrt cannot run (NgramLm, GradientBoosting, ...) */
    MLRT_ERR_MODEL_TYPE_MISMATCH = 21,   /* the file holds another model type than the caller expected */
    MLRT_ERR_ENCRYPTED = 22,             /* an encrypted .apr payload: the host must decrypt it first */
    MLRT_ERR_INVALID_MSGPACK = 23,       /* MessagePack metadata that does not parse */
    MLRT_ERR_BAD_PAYLOAD = 24,           /* an .apr payload that does not decode as its model type */
    MLRT_STATUS_COUNT_ = 25
} mlrt_status;

#define MLRT_ERROR_MESSAGE_MAX 320

typedef struct mlrt_error {
    mlrt_status code;
    char message[MLRT_ERROR_MESSAGE_MAX]; /* "safetensors: tensor 'w1' data_offsets [0, 4096) exceed data size 1024" */
} mlrt_error;

typedef enum mlrt_format {
    MLRT_FORMAT_BIN = 1,         /* raw MLP: 3 x i32 dims, then f64 or f32 weights */
    MLRT_FORMAT_SAFETENSORS = 2,
    MLRT_FORMAT_BINTENSORS = 3,
    MLRT_FORMAT_APR = 4,         /* aprender's .apr: "APRN" (v1, one model) or "APR\0" (v2, tensors) */
    MLRT_FORMAT_ONNX = 5         /* ONNX ModelProto: a graph of ops (the ones mlrt runs: see the README) */
} mlrt_format;

typedef enum mlrt_kind {
    MLRT_KIND_MLP = 1,                 /* dense layers, activation per layer */
    MLRT_KIND_LINEAR_REGRESSION = 2,   /* y = w.x + b, one output */
    MLRT_KIND_LOGISTIC_REGRESSION = 3, /* p = sigmoid(w.x + b), one output */
    MLRT_KIND_DECISION_TREE = 4,       /* aprender DecisionTreeClassifier / DecisionTreeRegressor */
    MLRT_KIND_RANDOM_FOREST = 5,       /* aprender RandomForestClassifier / RandomForestRegressor */
    MLRT_KIND_KMEANS = 6,              /* aprender KMeans */
    MLRT_KIND_GRAPH = 7,               /* an ONNX graph: named inputs and outputs (mlrt_run) */
    MLRT_KIND_ENCODER = 8              /* a BERT-family sentence encoder: token ids in, one embedding per text out */
} mlrt_kind;

/* What the outputs of mlrt_predict mean:
 *   classification  one score per class, in mlrt_class_label order (a tree: one-hot of its leaf;
 *                   a forest: vote shares; an MLP: its outputs; logistic regression: p(class 1))
 *   regression      the predicted values (one for trees, forests and linear regression)
 *   clustering      the squared distance to each centroid (KMeans)
 *   embedding       an encoder's vector per text (mlrt_run, mlrt_embed: no rows of floats) */
typedef enum mlrt_task {
    MLRT_TASK_CLASSIFICATION = 1, MLRT_TASK_REGRESSION = 2, MLRT_TASK_CLUSTERING = 3,
    MLRT_TASK_EMBEDDING = 4        /* encoders: one vector per text */
} mlrt_task;

/* Element types, numbered as the BinTensors Dtype enum up to MLRT_U64; then the block-quantized
 * types of .apr v2, which have no whole number of bytes per element; then the SafeTensors dtypes
 * added after BinTensors forked (listed by inspect, never run). */
typedef enum mlrt_dtype {
    MLRT_BOOL = 0, MLRT_U8, MLRT_I8, MLRT_F8_E5M2, MLRT_F8_E4M3, MLRT_I16, MLRT_U16,
    MLRT_F16, MLRT_BF16, MLRT_I32, MLRT_U32, MLRT_F32, MLRT_F64, MLRT_I64, MLRT_U64,
    MLRT_APR_Q4,  /* per 32 elements: f16 scale + 16 bytes of 4-bit values */
    MLRT_APR_Q8,  /* one f32 scale per tensor, then one i8 per element */
    MLRT_Q4_K,    /* GGUF: 144 bytes per 256 elements */
    MLRT_Q6_K,    /* GGUF: 210 bytes per 256 elements */
    MLRT_F4,      /* SafeTensors float4 e2m1: two per byte; the element count must fill whole bytes */
    MLRT_F6_E2M3, /* SafeTensors float6: four per three bytes, likewise */
    MLRT_F6_E3M2,
    MLRT_F8_E8M0, /* SafeTensors 8-bit exponent-only scale */
    MLRT_C64,     /* SafeTensors complex64: two f32 */
    MLRT_DTYPE_COUNT_
} mlrt_dtype;

typedef enum mlrt_activation {
    MLRT_ACT_IDENTITY = 0, MLRT_ACT_RELU, MLRT_ACT_SIGMOID, MLRT_ACT_TANH, MLRT_ACT_SOFTMAX,
    MLRT_ACT_GELU, MLRT_ACT_LEAKY_RELU, MLRT_ACT_SILU,
    MLRT_ACT_COUNT_
} mlrt_activation;

typedef struct mlrt_layer_info {
    uint32_t inputs, outputs;
    mlrt_activation activation;
    int has_bias;                      /* 0: the file has no bias for this layer (all zero) */
} mlrt_layer_info;

typedef struct mlrt_model mlrt_model;

/* Loading. Returns NULL and fills *err (err may be NULL) on any problem. */
mlrt_model *mlrt_load_from_bytes(const uint8_t *bytes, size_t len, mlrt_error *err);

/* How a tensor file's 2-D dense weights are laid out. PyTorch stores [out][in]; Keras, JAX/Flax
 * and aprender [in][out]. AUTO decides per layer from the bias shapes, the chain of layer widths
 * and the names ('kernel': [in][out], 'weight': [out][in]); where nothing decides (square layers
 * without other hints) it takes PyTorch's order and info says "weightLayoutGuessed": true. */
typedef enum mlrt_weight_layout {
    MLRT_LAYOUT_AUTO = 0, MLRT_LAYOUT_OUT_IN = 1, MLRT_LAYOUT_IN_OUT = 2
} mlrt_weight_layout;

typedef struct mlrt_load_options {
    /* NULL, or the aprender model type the file must hold ("LinearRegression", "DecisionTree",
     * "NeuralSequential", ... as in .apr v1 headers); another one is MLRT_ERR_MODEL_TYPE_MISMATCH.
     * .apr v1 files are checked by their header's type right after the header is read; every
     * other file by the model it builds: mlp = NeuralSequential, linear_regression =
     * LinearRegression, logistic_regression = LogisticRegression. */
    const char *expect;
    /* SafeTensors / BinTensors / .apr v2 dense weights: AUTO, or every layer as given (a bias or a
     * width that contradicts it is then MLRT_ERR_BAD_DIMENSIONS). */
    mlrt_weight_layout weight_layout;
    /* mlrt_load_files, nonzero: the files' bytes come from mlrt_alloc and the call takes them (on failure too). An
     * encoder keeps the weights file's block and uses its weights there (f32 and APR Q8 dense weights
     * packed over their own bytes): one copy of the weights in memory instead of two. */
    int take_files;
} mlrt_load_options;
mlrt_model *mlrt_load_from_bytes_ex(const uint8_t *bytes, size_t len, const mlrt_load_options *options,
                                    mlrt_error *err);
void mlrt_free(mlrt_model *model);

/* Inference. in: inputs floats (x n), out: outputs floats (x n). Inputs must be finite, except
 * for trees and forests, where a NaN feature goes right at every split on it (as in aprender). */
mlrt_status mlrt_predict(mlrt_model *model, const float *in, float *out, mlrt_error *err);
mlrt_status mlrt_predict_batch(mlrt_model *model, const float *in, size_t n, float *out, mlrt_error *err);
/* One label per row (x n): a classifier's class label as stored (the best score; ties go to the
 * smallest label), or KMeans' nearest centroid (ties: the lowest index). Regressors have no
 * labels: MLRT_ERR_INVALID_ARGUMENT. */
mlrt_status mlrt_predict_labels(mlrt_model *model, const float *in, size_t n, uint32_t *labels, mlrt_error *err);
/* A model that shares `model`'s weights but has scratch of its own, so that it can run
 * mlrt_predict_batch on another thread at the same time (rows give the same bits in either).
 * Dense models (mlp, linear and logistic regression, f32 or quantized) and encoders (mlrt_run on
 * a fork; it has no tokenizer); others are MLRT_ERR_UNSUPPORTED. Free it with mlrt_free before the
 * model it came from. */
mlrt_model *mlrt_model_fork(const mlrt_model *model, mlrt_error *err);
/* Layer i of a dense model on `rows` rows, x [rows][its inputs] -> y [rows][its outputs], outputs
 * [o0, o1) only: one thread's share of a large layer, on the model or a fork. o0 is a multiple of
 * MLRT_SLICE, o1 one too or the layer's outputs; a softmax layer runs whole. Each output gets the
 * bits mlrt_predict_batch gives it. Layer 0 checks the inputs, the last layer its outputs, as
 * mlrt_predict_batch does; other misuse is MLRT_ERR_INVALID_ARGUMENT. */
#define MLRT_SLICE 32
mlrt_status mlrt_layer_slice(mlrt_model *model, size_t i, const float *x, float *y, size_t rows, size_t o0, size_t o1,
                             mlrt_error *err);

/* ---- typed, named inputs and outputs: every model ----
 *
 *   mlrt_tensor in[2] = {{"input_ids", MLRT_I64, 2, {1, 7}, ids}, {"attention_mask", MLRT_I64, 2, {1, 7}, mask}};
 *   if (mlrt_run(m, in, 2, &err) == MLRT_OK) { const mlrt_tensor *y = mlrt_output(m, 0); ... }
 *
 * A model lists its inputs and outputs (mlrt_input, mlrt_output before any run): name, element type,
 * rank and dims, where -1 is a dimension that varies per call (the batch, a sequence length;
 * mlrt_model_info_json names it and gives its largest value). mlrt_run takes the inputs in any
 * order, by name (or, with a NULL name, in the model's order); each must have the model's element
 * type (an I64 input also takes I32; a U8 mask also takes BOOL, I32 or I64) and its fixed dims.
 * Dense models, trees, forests and k-means have one input "input" [batch, inputs] F32 and one
 * output "output" [batch, outputs] F32, which mlrt_predict_batch runs too. */
#define MLRT_MAX_DIMS 8
typedef struct mlrt_tensor {
    const char *name;              /* NUL-terminated */
    mlrt_dtype dtype;              /* MLRT_F32, MLRT_I32, MLRT_I64, MLRT_U8 or MLRT_BOOL */
    uint32_t rank;
    int64_t dims[MLRT_MAX_DIMS];   /* [rank]; in a model's list, -1 for a dimension that varies per call */
    void *data;                    /* product of dims elements, row-major; NULL in a model's list of inputs */
} mlrt_tensor;
size_t mlrt_input_count(const mlrt_model *model);
size_t mlrt_output_count(const mlrt_model *model);
const mlrt_tensor *mlrt_input(const mlrt_model *model, size_t i);   /* NULL past the count */
/* Before a run: output i as the model lists it. After mlrt_run: its result (data owned by the model,
 * valid until the next mlrt_run or mlrt_free). */
const mlrt_tensor *mlrt_output(const mlrt_model *model, size_t i);
mlrt_status mlrt_run(mlrt_model *model, const mlrt_tensor *inputs, size_t n_inputs, mlrt_error *err);

/* Introspection. */
size_t mlrt_input_size(const mlrt_model *model);   /* floats per row of mlrt_predict; 0: no such input */
size_t mlrt_output_size(const mlrt_model *model);  /* floats per row of mlrt_predict's output */
mlrt_format mlrt_model_format(const mlrt_model *model);
mlrt_kind mlrt_model_kind(const mlrt_model *model);
mlrt_task mlrt_model_task(const mlrt_model *model);
size_t mlrt_class_count(const mlrt_model *model);               /* classifiers; 0 otherwise */
uint32_t mlrt_class_label(const mlrt_model *model, size_t i);   /* ascending: 3, 7, 12 as stored */
mlrt_dtype mlrt_weight_dtype(const mlrt_model *model);   /* as stored in the file */
uint64_t mlrt_param_count(const mlrt_model *model);
size_t mlrt_layer_count(const mlrt_model *model);
mlrt_layer_info mlrt_layer(const mlrt_model *model, size_t i);
/* Layer i's weights as f32 (quantized weights dequantized): w [outputs][inputs], row-major
 * (PyTorch nn.Linear order); b [outputs] (may be NULL). For converters and writers. */
mlrt_status mlrt_layer_weights(const mlrt_model *model, size_t i, float *w, float *b, mlrt_error *err);
/* The model's description as one JSON object (format, kind, sizes, layers, metadata).
 * Owned by the model; valid until mlrt_free. */
const char *mlrt_model_info_json(const mlrt_model *model);

/* Lists the tensors and metadata of any valid tensor file (for .apr also the container's header)
 * without building a model; a valid file that makes no model mlrt runs says why in "notAModel".
 * Returns a malloc'd NUL-terminated JSON object (free with mlrt_string_free), or NULL with *err. */
char *mlrt_inspect(const uint8_t *bytes, size_t len, mlrt_error *err);
void mlrt_string_free(char *s);

/* ---- for hosts that reach mlrt through a foreign-function interface (the wasm module's JavaScript) ---- */
void *mlrt_alloc(size_t size);      /* memory for the host to fill and pass in; NULL when out of memory */
void mlrt_dealloc(void *p);         /* what mlrt_alloc gave */
/* What this build was compiled for: bit 0 SIMD128, bit 1 relaxed SIMD, bit 2 threads (shared memory). */
uint32_t mlrt_build_flags(void);

/* Names. */
const char *mlrt_status_name(mlrt_status code);      /* "BAD_OFFSETS" */
const char *mlrt_format_name(mlrt_format format);    /* "safetensors" */
const char *mlrt_kind_name(mlrt_kind kind);          /* "mlp", "random_forest" */
const char *mlrt_task_name(mlrt_task task);          /* "classification" */
const char *mlrt_dtype_name(mlrt_dtype dtype);       /* "F32" */
const char *mlrt_activation_name(mlrt_activation a); /* "relu" */
size_t mlrt_dtype_size(mlrt_dtype dtype);            /* bytes per element; 0 for block-quantized types */

/* ---- text: a WordPiece tokenizer, token for token Hugging Face's Rust `tokenizers` ----
 *
 *   mlrt_file files[] = {{"tokenizer.json", bytes, len}};
 *   mlrt_tokenizer *t = mlrt_tokenizer_load(files, 1, &err);
 *   mlrt_encoding e;
 *   mlrt_tokenizer_encode(t, "Hello world", 11, NULL, 0, NULL, &e, &err);   // e.ids [e.n] ...
 *   mlrt_tokenizer_free(t);
 *
 * Reads tokenizer.json of BERT-family models (BertNormalizer, BertPreTokenizer, WordPiece,
 * TemplateProcessing / BertProcessing, added tokens, truncation, padding), or vocab.txt with an
 * optional tokenizer_config.json. Other components (BPE, Unigram, ByteLevel, Metaspace, ...) are
 * MLRT_ERR_UNSUPPORTED naming the component. Text must be UTF-8: anything else is
 * MLRT_ERR_INVALID_UTF8 with the byte offset, never replaced. A tokenizer is used by one thread at
 * a time (encodings live in its buffers). */

/* A file of a model folder, by its name in the repository ("tokenizer.json", "vocab.txt", ...). */
typedef struct mlrt_file {
    const char *name;
    const uint8_t *bytes;
    size_t len;
} mlrt_file;

typedef struct mlrt_tokenizer mlrt_tokenizer;

/* files: "tokenizer.json", or "vocab.txt" with an optional "tokenizer_config.json"; other names
 * are ignored. The bytes may be freed when this returns. NULL with *err on any problem. */
mlrt_tokenizer *mlrt_tokenizer_load(const mlrt_file *files, size_t n, mlrt_error *err);
void mlrt_tokenizer_free(mlrt_tokenizer *tokenizer);

typedef enum mlrt_truncation {
    MLRT_TRUNCATION_DEFAULT = 0,   /* the file's truncation (none for vocab.txt) */
    MLRT_TRUNCATION_NONE,
    MLRT_TRUNCATION_LONGEST_FIRST, /* pairs: trim the longer sequence first */
    MLRT_TRUNCATION_ONLY_FIRST,
    MLRT_TRUNCATION_ONLY_SECOND
} mlrt_truncation;

typedef enum mlrt_padding {
    MLRT_PADDING_DEFAULT = 0,      /* the file's padding (none for vocab.txt) */
    MLRT_PADDING_NONE,
    MLRT_PADDING_LONGEST,          /* a batch: to its longest encoding */
    MLRT_PADDING_MAX_LENGTH        /* to max_length (or the file's fixed length) */
} mlrt_padding;

/* NULL options = all defaults: the file's truncation and padding, as Hugging Face applies them. */
typedef struct mlrt_encode_options {
    uint32_t max_length;           /* 0: the file's; else the length truncation and MAX_LENGTH padding use,
                                    * special tokens included (truncation LONGEST_FIRST unless set) */
    mlrt_truncation truncation;
    mlrt_padding padding;
} mlrt_encode_options;

/* One encoding: n tokens. The arrays belong to the tokenizer: valid until its next encode or free. */
typedef struct mlrt_encoding {
    size_t n;
    const int32_t *ids;            /* [n] */
    const int32_t *type_ids;       /* [n] 0 for the first sequence and its specials, 1 for the second's */
    const uint8_t *attention_mask; /* [n] 1, 0 for padding */
} mlrt_encoding;

/* Encodes text [len] (UTF-8), or the pair text, pair [pair_len] when pair is not NULL. */
mlrt_status mlrt_tokenizer_encode(mlrt_tokenizer *tokenizer, const char *text, size_t len, const char *pair,
                                  size_t pair_len, const mlrt_encode_options *options, mlrt_encoding *out,
                                  mlrt_error *err);

/* n encodings in rows of `width` tokens: row r is ids[r * width ...], lengths[r] of them real (the
 * rest padding, or unused when the batch is not padded). The arrays belong to the tokenizer. */
typedef struct mlrt_batch_encoding {
    size_t rows, width;
    const int32_t *ids;            /* [rows][width] */
    const int32_t *type_ids;       /* [rows][width] */
    const uint8_t *attention_mask; /* [rows][width] */
    const uint32_t *lengths;       /* [rows] tokens of each row, padding included */
} mlrt_batch_encoding;

/* n texts in one buffer: text i is texts[ends[i-1] .. ends[i]) (ends[-1] = 0). pairs/pair_ends:
 * the second texts likewise, or NULL. Padding LONGEST pads every row to the longest. */
mlrt_status mlrt_tokenizer_encode_batch(mlrt_tokenizer *tokenizer, const char *texts, const size_t *ends,
                                        const char *pairs, const size_t *pair_ends, size_t n,
                                        const mlrt_encode_options *options, mlrt_batch_encoding *out,
                                        mlrt_error *err);

/* The text of ids [n] as the WordPiece decoder gives it (continuations joined, cleanup of spaces
 * before punctuation); skip_special: leave out the special added tokens. A malloc'd NUL-terminated
 * string (mlrt_string_free) of *out_len bytes (out_len may be NULL; the text may hold NULs), or
 * NULL with *err (an id that is no token: MLRT_ERR_INVALID_ARGUMENT). */
char *mlrt_tokenizer_decode(const mlrt_tokenizer *tokenizer, const int32_t *ids, size_t n, int skip_special,
                            size_t *out_len, mlrt_error *err);

/* text [len] after the normalizer (and nothing else), as UTF-8: a malloc'd NUL-terminated string
 * of *out_len bytes (out_len may be NULL), or NULL with *err. */
char *mlrt_tokenizer_normalize(mlrt_tokenizer *tokenizer, const char *text, size_t len, size_t *out_len,
                               mlrt_error *err);

/* The token of an id (vocabulary or added token), NUL-terminated, or NULL. Owned by the tokenizer. */
const char *mlrt_tokenizer_token(const mlrt_tokenizer *tokenizer, int32_t id);

/* A JSON object: source file, vocabSize, specials, normalizer flags, truncation, padding, ...
 * Owned by the tokenizer. */
const char *mlrt_tokenizer_info_json(const mlrt_tokenizer *tokenizer);
/* ---- end of text ---- */

/* ---- sentence encoders: BERT-family models (all-MiniLM, bge, e5, gte, ...; MPNet, DistilBERT) ----
 *
 *   mlrt_file files[] = {{"model.safetensors", w, w_len}, {"config.json", c, c_len},
 *                        {"tokenizer.json", t, t_len}, {"modules.json", m, m_len},
 *                        {"1_Pooling/config.json", p, p_len}};
 *   mlrt_model *enc = mlrt_load_files(files, 5, NULL, &err);
 *   size_t ends[2] = {5, 11};
 *   float v[2 * 384];
 *   mlrt_embed(enc, "helloworld!", ends, 2, v, &err);       // "hello", "world!"
 *
 * A folder's files by their names in the model's repository: "model.safetensors" (F32, F16 or BF16)
 * or "model.apr" (aprender .apr v2, as `apr import --arch bert` writes it, F32/F16/BF16/Q8/Q4),
 * "config.json" (BertModel's, MPNetModel's or DistilBertModel's; optional with an .apr whose metadata holds the sizes),
 * "tokenizer.json" or "vocab.txt" (+ "tokenizer_config.json"): optional, mlrt_embed needs one,
 * and sentence-transformers' "modules.json", "1_Pooling/config.json", "sentence_bert_config.json",
 * "config_sentence_transformers.json", which decide pooling (mean, CLS, max, ...), L2 normalization,
 * the maximum length and the prompts. Without
 * modules.json: mean pooling, normalized for an .apr (`apr embed`), not for SafeTensors
 * (sentence-transformers). A Transformer module in a subfolder ("0_Transformer") is found by its
 * path. Other names are ignored. One file that is no encoder ("model.onnx", an MLP's
 * SafeTensors, ...) loads as mlrt_load_from_bytes_ex would load it. The bytes may be freed when
 * this returns. An encoder has inputs "input_ids" [batch, sequence] I64 (I32 accepted),
 * "attention_mask" (U8; BOOL, I32, I64 of 0/1 accepted; optional: all ones) and "token_type_ids"
 * (I64; optional: zeros), and one output "sentence_embedding" [batch, dim] F32. Positions are
 * 0..sequence-1 in every row; a row's tokens with mask 0 are left out of its attention and pooling,
 * so a text gives the same bits alone as padded in any batch. */
mlrt_model *mlrt_load_files(const mlrt_file *files, size_t n, const mlrt_load_options *options, mlrt_error *err);
/* The tokenizer an encoder was loaded with (owned by the model), or NULL: another kind, or no
 * tokenizer file was given. */
mlrt_tokenizer *mlrt_model_tokenizer(mlrt_model *model);
/* n UTF-8 texts in one buffer, text i = texts[ends[i-1] .. ends[i]) (ends[-1] = 0), embedded into
 * out [n][dim]: tokenized by the model's tokenizer (truncated to the model's maximum length), then
 * run as mlrt_run runs them. A text's embedding has the same bits alone as in any batch. */
mlrt_status mlrt_embed(mlrt_model *model, const char *texts, const size_t *ends, size_t n, float *out, mlrt_error *err);
/* mlrt_embed with a prompt, prompt [prompt_len] (UTF-8), prepended to every text, as sentence-transformers'
 * encode(prompt=...) does: NULL is the model's default prompt (config_sentence_transformers.json's
 * default_prompt_name; mlrt_embed uses it), "" none. With Pooling's include_prompt false, the prompt's
 * tokens ([CLS] and the prompt's own, counted by tokenizing it alone) are left out of the pooling but CLS. */
mlrt_status mlrt_embed_prompt(mlrt_model *model, const char *prompt, size_t prompt_len, const char *texts, const size_t *ends,
                              size_t n, float *out, mlrt_error *err);
/* Runs the encoders' packing and kernels (and the .apr checksum) for a moment over buffers of its own,
 * with no model; changes nothing. For hosts that compile wasm in tiers (V8 optimizes a function in the
 * background once it has run a while): called before an encoder's weights are read, it gets the loading's
 * packing and the first embedding optimized code. Errors: OUT_OF_MEMORY. */
mlrt_status mlrt_warm_up(mlrt_error *err);

#ifdef __cplusplus
}
#endif
#endif /* MLRT_H */
