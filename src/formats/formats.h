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

#endif
