/* formats/formats.h — files to descriptions: each reader validates a whole file and fills a neutral
 * description (ir/ir.h) for the model layer to build. Formats use codecs, ir and the base
 * (README, "Architecture"). */
#ifndef MLRT__FORMATS_H
#define MLRT__FORMATS_H
#include "../codecs/codecs.h"
#include "../ir/ir.h"

/* ---- tensor files (formats/tensorset.c, safetensors.c, bintensors.c, apr_v2.c) ---- */
/* Checks shape product -> bytes (mlrt__dtype_bytes) == end - begin, with overflow checks. fmt_name: "safetensors". */
mlrt_status mlrt__tensor_check_span(const mlrt__tensor *t, const char *fmt_name, mlrt_error *err);
/* The order of tensors in a file: by begin, then end, then name (for mlrt__sort). */
int mlrt__tensor_cmp_begin(const void *a, const void *b);
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

/* ---- models: each fills *d (zeroed first; mlrt__desc_free after use, built or not) ---- */
/* The raw MLP .bin (formats/bin.c). */
mlrt_status mlrt__read_bin(const uint8_t *b, size_t n, mlrt__desc *d, mlrt_error *err);
/* Which model the tensors of a tensor file form (formats/recognize.c): dense layers; file is the whole
 * file (the tensors' data is at ts->data_begin); d borrows ts. */
mlrt_status mlrt__recognize(const uint8_t *file, const mlrt__tensorset *ts, mlrt_weight_layout layout, mlrt__desc *d,
                            mlrt_error *err);
/* ---- BERT-family sentence encoders (formats/bert.c) ---- */
/* The tensors hold a BERT encoder's word embeddings (with or without the "bert." prefix). */
bool mlrt__is_bert(const mlrt__tensorset *ts);
/* ---- JSON configuration files' fields (formats/config_json.c): absent fields keep *out (a string: NULL);
 * a present one of another type or out of range fails, naming file and key. ---- */
/* Parses a file that must hold a JSON object; doc->root is it. */
mlrt_status mlrt__cfg_object(const mlrt_file *f, mlrt__json_doc *doc, mlrt_error *err);
/* An integer in [lo, hi]. */
mlrt_status mlrt__cfg_uint(const mlrt__json *obj, const char *file, const char *key, uint64_t lo, uint64_t hi, uint32_t *out,
                           mlrt_error *err);
mlrt_status mlrt__cfg_bool(const mlrt__json *obj, const char *file, const char *key, bool *out, mlrt_error *err);
/* A string (or null, giving NULL, when null_ok). */
mlrt_status mlrt__cfg_str(const mlrt__json *obj, const char *file, const char *key, bool null_ok, const char **out, mlrt_error *err);
/* Every key of obj is one of keys (NULL-terminated), else BAD_HEADER naming the first that is not. */
mlrt_status mlrt__cfg_only_keys(const mlrt__json *obj, const char *file, const char *const *keys, mlrt_error *err);

/* A folder's files (mlrt_load_files): modules.json, config.json, the weights (model.safetensors or
 * model.apr, read into ts, which the caller frees with mlrt__tensorset_free whatever happens), the
 * pooling and length configs, into d (zeroed first; on failure freed). *bert: the weights file was
 * found and holds a BERT encoder (false: the caller may load the files another way). */
mlrt_status mlrt__read_encoder(const mlrt_file *files, size_t n, mlrt__tensorset *ts, mlrt__enc_desc *d, bool *bert,
                               mlrt_error *err);
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
/* The model in f's payload (d borrows f->ts). Decrypts nothing: an encrypted payload is MLRT_ERR_ENCRYPTED. */
mlrt_status mlrt__read_apr_v1_model(const mlrt__apr_v1 *f, mlrt__desc *d, mlrt_error *err);
/* More members for inspect about a payload that makes no model (NgramLm: "\"ngram\":{...}"), malloc'd, or NULL. */
char *mlrt__apr_v1_payload_json(const mlrt__apr_v1 *f);
/* The classical payloads (formats/apr_trees.c, formats/apr_kmeans.c): raw is the decompressed bincode. */
mlrt_status mlrt__read_apr_tree(const uint8_t *raw, size_t n, mlrt__desc *d, mlrt_error *err);
mlrt_status mlrt__read_apr_forest(const uint8_t *raw, size_t n, mlrt__desc *d, mlrt_error *err);
mlrt_status mlrt__read_apr_kmeans(const uint8_t *raw, size_t n, mlrt__desc *d, mlrt_error *err);
/* NgramLm: validates the payload and describes it as JSON members ("\"ngram\":{...}"), malloc'd. */
mlrt_status mlrt__apr_ngram_describe(const uint8_t *raw, size_t n, char **json, mlrt_error *err);

/* ---- text: tokenizer files (formats/tokenizer_json.c, formats/vocab_txt.c) ---- */
/* Fill *d (zeroed first) from the whole file; on failure d is freed. */
mlrt_status mlrt__read_tokenizer_json(const uint8_t *b, size_t n, mlrt__tok_desc *d, mlrt_error *err);
/* config: tokenizer_config.json's bytes, or NULL. */
mlrt_status mlrt__read_vocab_txt(const uint8_t *vocab, size_t n, const uint8_t *config, size_t config_len,
                                 mlrt__tok_desc *d, mlrt_error *err);

/* ---- ONNX (formats/onnx.c: the ModelProto as parsed; formats/onnx_import.c: into a graph) ---- */
#define MLRT__ONNX_FLOAT 1    /* TensorProto.DataType */
#define MLRT__ONNX_INT32 6
#define MLRT__ONNX_INT64 7
#define MLRT__ONNX_DOUBLE 11
#define MLRT__ONNX_MAX_NODES 100000
#define MLRT__ONNX_OPSET_MIN 7
#define MLRT__ONNX_OPSET_MAX 21

typedef struct mlrt__str { const char *p; uint32_t n; } mlrt__str; /* bytes in the file, not NUL-terminated */
bool mlrt__str_eq(mlrt__str s, const char *c);

/* An initializer or a Constant's value: dims checked, data converted and owned. */
typedef struct mlrt__onnx_tensor {
    mlrt__str name;
    int32_t type;                   /* MLRT__ONNX_FLOAT or MLRT__ONNX_INT64 (DOUBLE was converted to FLOAT) */
    uint32_t rank;
    int64_t dims[MLRT__MAX_RANK];   /* [rank], each >= 0 */
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
    mlrt__str s;                    /* STRING */
    uint32_t n;                     /* FLOATS / INTS: how many */
    float *floats;                  /* [n] */
    int64_t *ints;                  /* [n] */
    mlrt__onnx_tensor *t;           /* TENSOR */
} mlrt__onnx_attr;

typedef struct mlrt__onnx_node {
    mlrt__str op, name, domain;
    uint32_t n_in, n_out, n_attr;
    int32_t *in;                    /* [n_in] value ids; -1: an omitted optional input ("") */
    int32_t *out;                   /* [n_out] value ids; -1: an omitted optional output */
    mlrt__onnx_attr *attr;          /* [n_attr] */
} mlrt__onnx_node;

typedef struct mlrt__onnx_value {
    mlrt__str name;
    int32_t producer;               /* the node that outputs it, or -1: a graph input or an initializer */
    mlrt__onnx_tensor *init;        /* an initializer (a graph input of the same name then has it as its default) */
    bool is_input;                  /* a graph input without an initializer */
    int32_t elem_type;              /* graph inputs and outputs: TensorProto.DataType (0: not given) */
    int32_t rank;                   /* graph inputs and outputs: -1 when the file gives no shape */
    int64_t dims[MLRT__MAX_RANK];   /* [rank]; -1: a symbolic dimension */
    mlrt__str dim_name[MLRT__MAX_RANK]; /* a symbolic dimension's name (dim_param), or empty */
} mlrt__onnx_value;

typedef struct mlrt__onnx {
    int64_t ir_version, opset;      /* opset: the ai.onnx version imported */
    mlrt__str producer, graph_name;
    mlrt__onnx_value *values;       /* [n_values]: initializers and graph inputs, then node outputs in node order */
    uint32_t n_values;
    mlrt__onnx_node *nodes;         /* [n_nodes], checked to be in topological order */
    uint32_t n_nodes;
    int32_t *inputs, *outputs;      /* [n_inputs], [n_outputs] value ids (inputs: those without initializers) */
    uint32_t n_inputs, n_outputs, n_init;
    mlrt__onnx_tensor *inits;       /* [n_init] */
} mlrt__onnx;

/* Reads and checks the whole ModelProto: wire format, types, names defined once, topological
 * order, opsets, initializer sizes. g points into b; free with mlrt__onnx_free before b. */
mlrt_status mlrt__read_onnx(const uint8_t *b, size_t n, mlrt__onnx *g, mlrt_error *err);
void mlrt__onnx_free(mlrt__onnx *g);
/* True when b looks like a ModelProto: its top-level keys are ModelProto's, with their wire types. */
bool mlrt__onnx_sniff(const uint8_t *b, size_t n);
const mlrt__onnx_attr *mlrt__onnx_attr_find(const mlrt__onnx_node *node, const char *name);
/* The file's description for info and inspect: "onnx":{irVersion, opset, producer, graph, inputs,
 * outputs, nodes, ops: {type: count}, initializers}, malloc'd (NULL: out of memory). */
char *mlrt__onnx_describe(const mlrt__onnx *g);
/* The ONNX graph as a neutral graph (formats/onnx_import.c): every node's op found for its opset,
 * its attributes read and checked, the attributes older opsets had instead of inputs made constant
 * inputs. Takes the constants' data from g; ir is zeroed first (mlrt__ir_graph_free after use). On
 * failure *err names the node: "onnx: node 3 (Conv 'c1'): ...". */
mlrt_status mlrt__import_onnx(mlrt__onnx *g, mlrt__ir_graph *ir, mlrt_error *err);

#endif
