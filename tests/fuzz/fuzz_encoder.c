/* fuzz_encoder.c — libFuzzer target for encoder folders (mlrt_load_files: formats/bert.c and
 * model/encoder.c). The input is a folder: its first byte says which files the rest is split into
 * (at each "\n--\n"), the others taken from a small valid BERT built here:
 *   bit 0 clear: config.json, modules.json, 1_Pooling/config.json, sentence_bert_config.json, tokenizer_config.json,
 *                config_sentence_transformers.json, 2_Dense/config.json, 2_Dense/model.safetensors
 *   bit 0 set:   model.safetensors (the weights; config.json and the rest valid), then the same list
 * and bits 1-7 leave out modules.json, the pooling file, sentence_bert_config.json, tokenizer_config.json,
 * config_sentence_transformers.json, the Dense module's two files. The default modules.json runs
 * Transformer, Pooling, Dense (8 -> 4, Tanh), Normalize. The weights hold an MPNet's and a DistilBERT's names
 * for the layer too (attention.attn.q ..., encoder.relative_attention_bias; transformer.layer.0.attention.q_lin
 * ...): a config.json of model_type "mpnet" or "distilbert" runs them.
 * Oracles: a refusal is well-formed (fuzz_check_error); a model's info parses; it runs a batch of
 * four texts of different lengths (ids from the input) whose rows each have the bits of the same text
 * alone and unpadded, finite, of the width info gives, unit length when info says normalize. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { H = 8, L = 1, A = 2, I = 12, V = 20, P = 8, TV = 2 };
enum { FILES = 9 }; /* the folder's files, below */

static uint8_t *g_weights, *g_dense;
static size_t g_weights_len, g_dense_len;

static const char CONFIG[] = "{\"model_type\":\"bert\",\"architectures\":[\"BertModel\"],\"hidden_size\":8,\"num_hidden_layers\":1,"
                             "\"num_attention_heads\":2,\"intermediate_size\":12,\"vocab_size\":20,\"max_position_embeddings\":8,"
                             "\"type_vocab_size\":2,\"layer_norm_eps\":1e-12,\"hidden_act\":\"gelu\"}";
static const char MODULES[] = "[{\"idx\":0,\"name\":\"0\",\"path\":\"\",\"type\":\"sentence_transformers.models.Transformer\"},"
                              "{\"idx\":1,\"name\":\"1\",\"path\":\"1_Pooling\",\"type\":\"sentence_transformers.models.Pooling\"},"
                              "{\"idx\":2,\"name\":\"2\",\"path\":\"2_Dense\",\"type\":\"sentence_transformers.models.Dense\"},"
                              "{\"idx\":3,\"name\":\"3\",\"path\":\"3_Normalize\",\"type\":\"sentence_transformers.models.Normalize\"}]";
static const char POOLING[] = "{\"word_embedding_dimension\":8,\"pooling_mode_mean_tokens\":true}";
static const char SBERT[] = "{\"max_seq_length\":8,\"do_lower_case\":false}";
static const char TOKCFG[] = "{\"do_lower_case\":true,\"model_max_length\":6}";
static const char DENSE[] = "{\"in_features\":8,\"out_features\":4,\"bias\":true,\"activation_function\":\"torch.nn.modules.activation.Tanh\"}";
static const char STCFG[] = "{\"prompts\":{\"query\":\"query: \",\"none\":\"\"},\"default_prompt_name\":\"query\"}";

/* The Dense module's SafeTensors: linear.weight [4][8], linear.bias [4]. */
static void build_dense(void) {
    static const char hdr[] = "{\"linear.bias\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]},"
                              "\"linear.weight\":{\"dtype\":\"F32\",\"shape\":[4,8],\"data_offsets\":[16,144]}}";
    const size_t h = (sizeof hdr - 1 + 7) / 8 * 8;
    g_dense_len = 8 + h + 144;
    FUZZ_ASSERT((g_dense = calloc(1, g_dense_len)), "out of memory");
    g_dense[0] = (uint8_t)h;
    memset(g_dense + 8, ' ', h);
    memcpy(g_dense + 8, hdr, sizeof hdr - 1);
    for (int k = 0; k < 36; k++) {
        float v = (float)((k * 37) % 17 - 8) / 16.0f;
        memcpy(g_dense + 8 + h + 4 * k, &v, 4);
    }
}

/* A BertModel of the sizes above in SafeTensors, with small deterministic weights. */
static void build_weights(void) {
    build_dense();
    static const struct { const char *name; int o, i; } t[] = {
        {"embeddings.word_embeddings.weight", V, H}, {"embeddings.position_embeddings.weight", P, H},
        {"embeddings.token_type_embeddings.weight", TV, H}, {"embeddings.LayerNorm.weight", H, 0}, {"embeddings.LayerNorm.bias", H, 0},
        {"encoder.layer.0.attention.self.query.weight", H, H}, {"encoder.layer.0.attention.self.query.bias", H, 0},
        {"encoder.layer.0.attention.self.key.weight", H, H}, {"encoder.layer.0.attention.self.key.bias", H, 0},
        {"encoder.layer.0.attention.self.value.weight", H, H}, {"encoder.layer.0.attention.self.value.bias", H, 0},
        {"encoder.layer.0.attention.output.dense.weight", H, H}, {"encoder.layer.0.attention.output.dense.bias", H, 0},
        {"encoder.layer.0.attention.output.LayerNorm.weight", H, 0}, {"encoder.layer.0.attention.output.LayerNorm.bias", H, 0},
        {"encoder.layer.0.intermediate.dense.weight", I, H}, {"encoder.layer.0.intermediate.dense.bias", I, 0},
        {"encoder.layer.0.output.dense.weight", H, I}, {"encoder.layer.0.output.dense.bias", H, 0},
        {"encoder.layer.0.output.LayerNorm.weight", H, 0}, {"encoder.layer.0.output.LayerNorm.bias", H, 0},
        {"pooler.dense.weight", H, H}, {"pooler.dense.bias", H, 0},
        /* MPNet's names for the same layer (unused by a BERT config; a config of model_type "mpnet" reads them) */
        {"encoder.layer.0.attention.attn.q.weight", H, H}, {"encoder.layer.0.attention.attn.q.bias", H, 0},
        {"encoder.layer.0.attention.attn.k.weight", H, H}, {"encoder.layer.0.attention.attn.k.bias", H, 0},
        {"encoder.layer.0.attention.attn.v.weight", H, H}, {"encoder.layer.0.attention.attn.v.bias", H, 0},
        {"encoder.layer.0.attention.attn.o.weight", H, H}, {"encoder.layer.0.attention.attn.o.bias", H, 0},
        {"encoder.layer.0.attention.LayerNorm.weight", H, 0}, {"encoder.layer.0.attention.LayerNorm.bias", H, 0},
        {"encoder.relative_attention_bias.weight", 32, A},
        /* and DistilBERT's (a config.json of model_type "distilbert") */
        {"transformer.layer.0.attention.q_lin.weight", H, H}, {"transformer.layer.0.attention.q_lin.bias", H, 0},
        {"transformer.layer.0.attention.k_lin.weight", H, H}, {"transformer.layer.0.attention.k_lin.bias", H, 0},
        {"transformer.layer.0.attention.v_lin.weight", H, H}, {"transformer.layer.0.attention.v_lin.bias", H, 0},
        {"transformer.layer.0.attention.out_lin.weight", H, H}, {"transformer.layer.0.attention.out_lin.bias", H, 0},
        {"transformer.layer.0.sa_layer_norm.weight", H, 0}, {"transformer.layer.0.sa_layer_norm.bias", H, 0},
        {"transformer.layer.0.ffn.lin1.weight", I, H}, {"transformer.layer.0.ffn.lin1.bias", I, 0},
        {"transformer.layer.0.ffn.lin2.weight", H, I}, {"transformer.layer.0.ffn.lin2.bias", H, 0},
        {"transformer.layer.0.output_layer_norm.weight", H, 0}, {"transformer.layer.0.output_layer_norm.bias", H, 0}};
    mlrt__buf h = {0};
    size_t off = 0, n = sizeof t / sizeof t[0];
    mlrt__buf_puts(&h, "{");
    for (size_t k = 0; k < n; k++) {
        size_t count = (size_t)t[k].o * (t[k].i ? t[k].i : 1);
        mlrt__buf_printf(&h, "%s\"%s\":{\"dtype\":\"F32\",\"shape\":[%d", k ? "," : "", t[k].name, t[k].o);
        if (t[k].i) mlrt__buf_printf(&h, ",%d", t[k].i);
        mlrt__buf_printf(&h, "],\"data_offsets\":[%zu,%zu]}", off, off + 4 * count);
        off += 4 * count;
    }
    mlrt__buf_puts(&h, "}");
    while (h.len % 8) mlrt__buf_puts(&h, " ");
    g_weights_len = 8 + h.len + off;
    g_weights = malloc(g_weights_len);
    FUZZ_ASSERT(g_weights && !h.oom, "out of memory");
    for (int b = 0; b < 8; b++) g_weights[b] = (uint8_t)((uint64_t)h.len >> (8 * b));
    memcpy(g_weights + 8, h.data, h.len);
    float *w = (float *)(g_weights + 8 + h.len);
    uint32_t s = 12345;
    for (size_t k = 0; k < off / 4; k++) {
        s = s * 1664525u + 1013904223u;
        w[k] = ((float)(s >> 8) / 16777216.0f - 0.5f) * 0.2f;
    }
    free(h.data);
}

/* Embeddings of ids [rows][width] (mask: lengths) -> y; MLRT_OK or the status. */
static mlrt_status run(mlrt_model *m, const int32_t *ids, const uint8_t *mask, size_t rows, size_t width, float *y, size_t dim) {
    mlrt_tensor in[2] = {{"input_ids", MLRT_I32, 2, {(int64_t)rows, (int64_t)width}, (void *)ids},
                         {"attention_mask", MLRT_U8, 2, {(int64_t)rows, (int64_t)width}, (void *)mask}};
    mlrt_error e;
    mlrt_status st = mlrt_run(m, in, 2, &e);
    if (st) fuzz_check_error(st, &e);
    else memcpy(y, mlrt_output(m, 0)->data, rows * dim * sizeof *y);
    return st;
}

static void exercise(mlrt_model *m, const uint8_t *data, size_t size) {
    const char *info = mlrt_model_info_json(m);
    fuzz_check_json_output(info);
    FUZZ_ASSERT(mlrt_model_kind(m) == MLRT_KIND_ENCODER, "kind %d", (int)mlrt_model_kind(m));
    const mlrt_tensor *out = mlrt_output(m, 0);
    size_t dim = (size_t)out->dims[1], vocab = 0, positions = (size_t)mlrt_input(m, 0)->dims[1];
    const char *at = strstr(info, "\"vocabSize\":");
    FUZZ_ASSERT(at && dim >= 1, "info: %.300s", info);
    vocab = strtoul(at + 12, NULL, 10);
    at = strstr(info, "\"maxPositions\":");
    positions = at ? strtoul(at + 15, NULL, 10) : 0;
    bool normalize = strstr(info, "\"normalize\":true") != NULL;
    enum { ROWS = 4 };
    size_t width = positions < 6 ? positions : 6, len[ROWS] = {width, 1, width > 2 ? width - 2 : 1, width > 1 ? 2 : 1};
    int32_t ids[ROWS * 6];
    uint8_t mask[ROWS * 6];
    for (size_t r = 0; r < ROWS; r++)
        for (size_t t = 0; t < width; t++) {
            ids[r * width + t] = (int32_t)((size ? data[(r * 7 + t) % size] : t) % vocab);
            mask[r * width + t] = t < len[r];
        }
    float *y = malloc(ROWS * dim * sizeof *y), *y1 = malloc(dim * sizeof *y1);
    FUZZ_ASSERT(y && y1, "out of memory");
    mlrt_status st = run(m, ids, mask, ROWS, width, y, dim);
    FUZZ_ASSERT(st == MLRT_OK || st == MLRT_ERR_NON_FINITE, "run: %s", mlrt_status_name(st));
    for (size_t r = 0; r < ROWS && st == MLRT_OK; r++) {
        FUZZ_ASSERT(run(m, ids + r * width, mask + r * width, 1, len[r], y1, dim) == MLRT_OK, "row %zu alone refused", r);
        FUZZ_ASSERT(memcmp(y1, y + r * dim, dim * sizeof *y) == 0, "row %zu alone differs from the batch", r);
        double n2 = 0;
        for (size_t k = 0; k < dim; k++) {
            FUZZ_ASSERT(isfinite(y1[k]), "row %zu value %zu", r, k);
            n2 += (double)y1[k] * y1[k];
        }
        if (normalize) FUZZ_ASSERT(fabs(n2 - 1) < 1e-4 || n2 < 1e-20, "row %zu: |v|^2 = %g", r, n2);
    }
    free(y), free(y1);
}

/* The files loaded again with take_files (each in a block of its own, which the call takes; the model
 * packs its weights where they lie): the same refusal, or the same bits for one text of ids 0, 1, 2. */
static void same_taking(const mlrt_file *files, size_t n, mlrt_model *m, const mlrt_error *e) {
    mlrt_file f[FILES];
    for (size_t i = 0; i < n; i++) {
        uint8_t *b = malloc(files[i].len ? files[i].len : 1);
        FUZZ_ASSERT(b, "out of memory");
        memcpy(b, files[i].bytes, files[i].len);
        f[i] = (mlrt_file){files[i].name, b, files[i].len};
    }
    const mlrt_load_options take = {.take_files = 1};
    mlrt_error et;
    mlrt_model *t = mlrt_load_files(f, n, &take, &et);
    FUZZ_ASSERT(!m == !t, "take_files: %s", t ? "loaded" : et.message);
    if (!m) {
        FUZZ_ASSERT(et.code == e->code && !strcmp(et.message, e->message), "take_files: %s vs %s", et.message, e->message);
        return;
    }
    const char *info = mlrt_model_info_json(m);
    const char *at = strstr(info, "\"vocabSize\":");
    size_t dim = (size_t)mlrt_output(m, 0)->dims[1], vocab = at ? strtoul(at + 12, NULL, 10) : 1;
    int32_t ids[3] = {0, (int32_t)(1 % vocab), (int32_t)(2 % vocab)};
    uint8_t mask[3] = {1, 1, 1};
    const char *mp = strstr(info, "\"maxPositions\":");
    size_t width = mp && strtoul(mp + 15, NULL, 10) >= 3 ? 3 : 1;
    float *a = malloc(dim * sizeof *a), *b = malloc(dim * sizeof *b);
    FUZZ_ASSERT(a && b, "out of memory");
    mlrt_status sa = run(m, ids, mask, 1, width, a, dim), sb = run(t, ids, mask, 1, width, b, dim);
    FUZZ_ASSERT(sa == sb && (sa || !memcmp(a, b, dim * sizeof *a)), "take_files changed the embedding");
    free(a), free(b);
    mlrt_free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1 || size > FUZZ_MAX_INPUT) return 0;
    if (!g_weights) build_weights();
    const uint8_t mode = data[0];
    static const char *const names[FILES] = {"model.safetensors", "config.json", "modules.json", "1_Pooling/config.json",
                                             "sentence_bert_config.json", "tokenizer_config.json", "config_sentence_transformers.json",
                                             "2_Dense/config.json", "2_Dense/model.safetensors"};
    const uint8_t *defaults[FILES] = {g_weights, (const uint8_t *)CONFIG, (const uint8_t *)MODULES, (const uint8_t *)POOLING,
                                      (const uint8_t *)SBERT, (const uint8_t *)TOKCFG, (const uint8_t *)STCFG, (const uint8_t *)DENSE, g_dense};
    size_t lens[FILES] = {g_weights_len, sizeof CONFIG - 1, sizeof MODULES - 1, sizeof POOLING - 1, sizeof SBERT - 1, sizeof TOKCFG - 1,
                          sizeof STCFG - 1, sizeof DENSE - 1, g_dense_len};
    const uint8_t *p = data + 1, *end = data + size;
    for (int k = mode & 1 ? 0 : 1; k < FILES && p <= end; k++) { /* the input's parts replace the defaults in order */
        const uint8_t *q = p;
        while (q + 4 <= end && memcmp(q, "\n--\n", 4)) q++;
        if (q + 4 > end) q = end;
        defaults[k] = p, lens[k] = (size_t)(q - p);
        p = q + 4;
    }
    mlrt_file files[FILES];
    size_t n = 0;
    for (int k = 0; k < FILES; k++)
        if (!(k >= 2 && mode >> (k - 1) & 1)) files[n++] = (mlrt_file){names[k], defaults[k], lens[k]};
    mlrt_error e;
    mlrt_model *m = mlrt_load_files(files, n, NULL, &e);
    same_taking(files, n, m, &e);
    if (!m) {
        fuzz_check_error(e.code, &e);
        return 0;
    }
    exercise(m, data, size);
    if (defaults[2] == (const uint8_t *)MODULES && defaults[7] == (const uint8_t *)DENSE && !(mode & 0x42)) /* the default Dense ran */
        FUZZ_ASSERT(mlrt_output(m, 0)->dims[1] == 4, "the Dense module's 4 outputs, got %lld", (long long)mlrt_output(m, 0)->dims[1]);
    mlrt_free(m);
    return 0;
}
