/* formats/bert.c — a BERT-family sentence encoder's folder (Hugging Face / sentence-transformers) or
 * aprender .apr v2 file, read into an encoder description (ir/ir.h, mlrt__enc_desc).
 *
 *   modules.json                 [{idx, name, path, type}]: Transformer, then Pooling, then Normalize; the
 *                                Transformer's path ("", or "0_Transformer" in older folders) holds the files
 *                                below but the pooling's and config_sentence_transformers.json
 *   config.json                  BertConfig: sizes, hidden_act "gelu", absolute positions, no decoder
 *   model.safetensors            the tensors, with or without the "bert." prefix
 *   model.apr                    .apr v2 (`apr import --arch bert`): the same names, sizes in metadata; from
 *                                `mlrt convert`, also "mlrt_embedding": the settings of the files below, used
 *                                when they are not given (pooling: modules.json / 1_Pooling; lengths:
 *                                sentence_bert_config.json)
 *   sentence_bert_config.json    max_seq_length (else min(max_position_embeddings, tokenizer_config.json's
 *                                model_max_length)), do_lower_case
 *   <pooling>/config.json        pooling_mode_* flags, word_embedding_dimension, include_prompt
 *   config_sentence_transformers.json   prompts {name: text}, default_prompt_name (mlrt_embed prepends it)
 * Missing config fields take BertConfig's defaults, as transformers does; every present field must
 * have its type, and the tensors must have the shapes the config gives. Tensors the forward pass
 * does not use (pooler.*, embeddings.position_ids, cls.*) are listed in info, not refused. */
#include "formats.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ST_PREFIX "sentence_transformers.models."

typedef struct ctx {
    const mlrt_file *files;
    size_t n;
    const uint8_t *data;            /* the weights file's data section */
    const mlrt__tensorset *ts;
    const char *prefix;             /* "" or a family's ("bert.", "mpnet.", "distilbert.") */
    const char *fmt;                /* "safetensors" / "apr": tensor messages start with it */
    bool *used;                     /* [ts->count] */
    mlrt__enc_desc *d;
    mlrt_error *err;
} ctx;

/* ------------------------------------------------------------------ files */

/* The file dir + name, or NULL. */
static const mlrt_file *find_file(const ctx *c, const char *dir, const char *name) {
    size_t dl = strlen(dir);
    for (size_t i = 0; i < c->n; i++) {
        const char *f = c->files[i].name;
        if (!strncmp(f, dir, dl) && !strcmp(f + dl, name)) return &c->files[i];
    }
    return NULL;
}

/* ------------------------------------------------------------------ config.json */

/* The families of encoders read: what their files call things, and how they differ from BERT. */
typedef struct family {
    const char *model_type, *arch;  /* config.json's model_type; architectures' prefix */
    const char *prefix;             /* the tensor names' prefix in task models' files ("bert.": BertForMaskedLM) */
    const char *layer;              /* a layer's tensors ("encoder.layer.%u.") */
    const char *lin[6], *ln[2];     /* query, key, value, attention output, intermediate, output; the two LayerNorms */
    const char *sizes[4];           /* config.json's names of hidden, layers, heads, ffn */
    const char *act;                /* config.json's name of the activation */
    uint32_t layers, vocab, positions; /* the config class's defaults (hidden 768, heads 12, ffn 3072) */
    bool types, mpnet;              /* a token type table; MPNet's positions and relative position bias */
} family;
static const family FAMILIES[3] = {
    {"bert", "Bert", "bert.", "encoder.layer.%u.",
     {"attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense", "intermediate.dense", "output.dense"},
     {"attention.output.LayerNorm", "output.LayerNorm"}, {"hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size"},
     "hidden_act", 12, 30522, 512, true, false},
    {"mpnet", "MPNet", "mpnet.", "encoder.layer.%u.",
     {"attention.attn.q", "attention.attn.k", "attention.attn.v", "attention.attn.o", "intermediate.dense", "output.dense"},
     {"attention.LayerNorm", "output.LayerNorm"}, {"hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size"},
     "hidden_act", 12, 30527, 514, false, true},
    {"distilbert", "DistilBert", "distilbert.", "transformer.layer.%u.",
     {"attention.q_lin", "attention.k_lin", "attention.v_lin", "attention.out_lin", "ffn.lin1", "ffn.lin2"},
     {"sa_layer_norm", "output_layer_norm"}, {"dim", "n_layers", "n_heads", "hidden_dim"}, "activation", 6, 30522, 512, false, false},
};

static const family *family_of(const char *model_type) {
    for (int i = 0; model_type && i < 3; i++)
        if (!strcmp(model_type, FAMILIES[i].model_type)) return &FAMILIES[i];
    return NULL;
}

typedef struct config {
    uint32_t hidden, layers, heads, ffn, vocab, positions, types;
    double eps;
    char arch[64];
    bool have_heads;                /* from config.json or .apr metadata (shapes cannot tell) */
    const family *fam;
    uint32_t buckets;               /* MPNet's relative_attention_num_buckets */
    /* what an .apr of `mlrt convert` records of its folder's sentence-transformers files (metadata
     * "mlrt_embedding"), used when none of those files is given */
    bool st_set;
    uint32_t st_pooling, st_max_length; /* MLRT__EPOOL_* bits; 0: not recorded */
    bool st_normalize, st_lower_case, st_include_prompt;
    mlrt__buf st_prompts;           /* info's "prompts" and "defaultPromptName" members, or empty: not recorded */
    char *st_prompt;                /* the default prompt's text, or NULL */
    uint32_t st_prompt_len;
} config;

/* The sizes in config.json (its family's names) or .apr metadata (apr import's, the aliases too); check:
 * each must equal what config.json gave. */
static mlrt_status read_sizes(const mlrt__json *o, const char *file, bool apr, bool check, config *cf, mlrt_error *err) {
    static const char *const keys[7][2] = {{"hidden_size", NULL}, {"num_hidden_layers", "num_layers"},
                                           {"num_attention_heads", "num_heads"}, {"intermediate_size", NULL}, {"vocab_size", NULL},
                                           {"max_position_embeddings", NULL}, {"type_vocab_size", NULL}};
    uint32_t *dst[7] = {&cf->hidden, &cf->layers, &cf->heads, &cf->ffn, &cf->vocab, &cf->positions, &cf->types};
    mlrt_status st = MLRT_OK;
    for (int k = 0; k < 7 && !st; k++)
        for (int a = 0; a < 1 + apr && keys[k][a] && !st; a++) {
            uint32_t x = *dst[k];
            const char *key = !apr && k < 4 ? cf->fam->sizes[k] : keys[k][a];
            if (!mlrt__json_get(o, key)) continue;
            st = mlrt__cfg_uint(o, file, key, 1, k == 1 ? MLRT__ENC_MAX_LAYERS : k == 5 ? MLRT__ENC_MAX_POSITIONS : MLRT__MAX_DIM, &x, err);
            if (!st && check && x != *dst[k])
                st = mlrt__fail(err, MLRT_ERR_BAD_DIMENSIONS, "%s: %s is %u but config.json gives %u", file, key, x, *dst[k]);
            *dst[k] = x;
            cf->have_heads |= k == 2;
        }
    return st;
}

static mlrt_status read_config(const mlrt_file *f, config *cf, mlrt_error *err) {
    mlrt__json_doc doc;
    mlrt_status st = mlrt__cfg_object(f, &doc, err);
    if (st) return st;
    const mlrt__json *o = doc.root, *v;
    const char *s, *file = f->name;
    bool decoder = false, cross = false;
    if (!(st = mlrt__cfg_str(o, file, "model_type", false, &s, err)) && !(cf->fam = family_of(s)))
        st = mlrt__fail_in(err, s ? MLRT_ERR_UNSUPPORTED : MLRT_ERR_BAD_HEADER, file, s ? "model_type '%s': only \"bert\", \"mpnet\" and "
                           "\"distilbert\" are supported" : "model_type is missing: expected \"bert\", \"mpnet\" or \"distilbert\"", s);
    if (st) cf->fam = &FAMILIES[0];
    const char *prefix = cf->fam->arch;
    cf->layers = cf->fam->layers, cf->vocab = cf->fam->vocab, cf->positions = cf->fam->positions, cf->buckets = 32; /* its defaults */
    if (!st && (v = mlrt__json_get(o, "architectures")) && v->type != MLRT__JSON_NULL) {
        if (v->type != MLRT__JSON_ARRAY)
            st = mlrt__fail_in(err, MLRT_ERR_BAD_HEADER, file, "architectures: expected an array of strings, got %s", mlrt__json_type_name(v->type));
        for (const mlrt__json *a = v->child; a && !st; a = a->next)
            if (a->type != MLRT__JSON_STRING)
                st = mlrt__fail_in(err, MLRT_ERR_BAD_HEADER, file, "architectures: expected strings, got %s", mlrt__json_type_name(a->type));
            else if (strncmp(a->str, prefix, strlen(prefix)) != 0)
                st = mlrt__fail_in(err, MLRT_ERR_UNSUPPORTED, file, "architectures: '%s' is not a model of model_type '%s' (%s...)", a->str,
                                   cf->fam->model_type, prefix);
        if (!st && v->child) mlrt__format_to(cf->arch, sizeof cf->arch, "%s", v->child->str);
    }
    if (!st) st = read_sizes(o, file, false, false, cf, err);
    if (!cf->fam->types) cf->types = 0; /* (MPNet and DistilBERT have no token type table) */
    /* MPNet's 32 buckets (MPNetEncoder computes them with its default, whatever the config): the table needs them all */
    if (!st && cf->fam->mpnet) st = mlrt__cfg_uint(o, file, "relative_attention_num_buckets", 32, MLRT__MAX_DIM, &cf->buckets, err);
    if (!st && (v = mlrt__json_get(o, "layer_norm_eps")) && (!mlrt__json_f64(v, &cf->eps) || !(cf->eps > 0) || !isfinite((float)cf->eps)))
        st = mlrt__fail_in(err, MLRT_ERR_BAD_HEADER, file, "layer_norm_eps: expected a positive number, got %s",
                           v->type == MLRT__JSON_NUMBER ? "one that is not" : mlrt__json_type_name(v->type));
    if (!st && !(st = mlrt__cfg_str(o, file, cf->fam->act, false, &s, err)) && s && strcmp(s, "gelu") != 0)
        st = mlrt__fail_in(err, MLRT_ERR_UNSUPPORTED, file, "%s '%s': only \"gelu\" (exact, erf) is supported", cf->fam->act, s);
    if (!st && !(st = mlrt__cfg_str(o, file, "position_embedding_type", true, &s, err)) && s && strcmp(s, "absolute") != 0)
        st = mlrt__fail_in(err, MLRT_ERR_UNSUPPORTED, file, "position_embedding_type '%s': only \"absolute\" is supported", s);
    if (!st) st = mlrt__cfg_bool(o, file, "is_decoder", &decoder, err);
    if (!st) st = mlrt__cfg_bool(o, file, "add_cross_attention", &cross, err);
    if (!st && (decoder || cross))
        st = mlrt__fail_in(err, MLRT_ERR_UNSUPPORTED, file, "%s is true: decoders are not supported, only the encoder",
                           decoder ? "is_decoder" : "add_cross_attention");
    mlrt__json_free(&doc);
    return st;
}

static const char *const POOL_MODES[6] = {"cls", "max", "mean", "mean_sqrt_len", "weightedmean", "lasttoken"}; /* bit i */

/* "prompts" ({name: text}, or null) and "default_prompt_name" (null, or one of them) of
 * config_sentence_transformers.json or an .apr's record: info's members into facts, the default prompt's
 * text into *text (NULL: none; sentence-transformers prepends it to every text). The file's other keys
 * (__version__, similarity_fn_name, ...) do not change an embedding. */
static mlrt_status read_prompts(const mlrt__json *o, const char *file, mlrt__buf *facts, char **text, uint32_t *len, mlrt_error *err) {
    const mlrt__json *ps = mlrt__json_get(o, "prompts"), *name = mlrt__json_get(o, "default_prompt_name"), *def = NULL;
    if (ps && ps->type != MLRT__JSON_OBJECT && ps->type != MLRT__JSON_NULL)
        return mlrt__fail_in(err, MLRT_ERR_BAD_HEADER, file, "prompts: expected an object of texts by name, got %s", mlrt__json_type_name(ps->type));
    if (name && name->type != MLRT__JSON_STRING && name->type != MLRT__JSON_NULL)
        return mlrt__fail_in(err, MLRT_ERR_BAD_HEADER, file, "default_prompt_name: expected a string or null, got %s", mlrt__json_type_name(name->type));
    mlrt__buf_puts(facts, ",\"prompts\":{");
    for (const mlrt__json *k = ps ? ps->child : NULL; k; k = k->next) {
        if (k->type != MLRT__JSON_STRING)
            return mlrt__fail_in(err, MLRT_ERR_BAD_HEADER, file, "prompts.%s: expected a string, got %s", k->key, mlrt__json_type_name(k->type));
        if (k->len > MLRT__ENC_MAX_PROMPT)
            return mlrt__fail_in(err, MLRT_ERR_BAD_DIMENSIONS, file, "prompts.%s: %zu bytes, more than the limit %u", k->key, k->len, MLRT__ENC_MAX_PROMPT);
        mlrt__buf_puts(facts, k == ps->child ? "" : ",");
        mlrt__buf_json_string(facts, k->key, k->key_len);
        mlrt__buf_puts(facts, ":");
        mlrt__buf_json_string(facts, k->str, k->len);
        if (name && name->type == MLRT__JSON_STRING && k->key_len == name->len && !memcmp(k->key, name->str, name->len)) def = k;
    }
    mlrt__buf_puts(facts, "},\"defaultPromptName\":");
    if (name && name->type == MLRT__JSON_STRING && !def)
        return mlrt__fail_in(err, MLRT_ERR_BAD_HEADER, file, "default_prompt_name '%s' is not one of the prompts", name->str);
    if (def) mlrt__buf_json_string(facts, name->str, name->len);
    else mlrt__buf_puts(facts, "null");
    if (def && def->len) { /* (an empty prompt is none: current sentence-transformers ignores it whole) */
        if (!(*text = malloc(def->len + 1))) return mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "%s: out of memory", file);
        memcpy(*text, def->str, def->len + 1), *len = (uint32_t)def->len;
    }
    return facts->oom ? mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "%s: out of memory", file) : MLRT_OK;
}

/* "mlrt_embedding": {"pooling": "cls+mean" (info's names), "normalize": b, "max_seq_length": n?, "do_lower_case": b?,
 * "include_prompt": b?, "prompts": {...}?, "default_prompt_name": s?}. */
static mlrt_status read_st_record(const mlrt__json *o, config *cf, mlrt_error *err) {
    const char *file = "apr: metadata mlrt_embedding", *pool = NULL;
    if (o->type != MLRT__JSON_OBJECT)
        return mlrt__fail(err, MLRT_ERR_BAD_HEADER, "%s: expected an object, got %s", file, mlrt__json_type_name(o->type));
    const mlrt__json *v = mlrt__json_get(o, "normalize");
    static const char *const keys[] = {"pooling", "normalize", "max_seq_length", "do_lower_case", "include_prompt", "prompts",
                                       "default_prompt_name", NULL};
    mlrt_status st = mlrt__cfg_only_keys(o, file, keys, err);
    if (!st) st = mlrt__cfg_str(o, file, "pooling", false, &pool, err);
    if (!st && (!pool || !v)) st = mlrt__fail(err, MLRT_ERR_BAD_HEADER, "%s: '%s' is missing", file, pool ? "normalize" : "pooling");
    for (const char *p = pool; !st && p && *p;) { /* mode names joined by '+' */
        size_t n = strcspn(p, "+");
        int i = 0;
        while (i < 6 && (strlen(POOL_MODES[i]) != n || strncmp(p, POOL_MODES[i], n))) i++;
        if (i == 6 || cf->st_pooling >> i & 1)
            st = mlrt__fail(err, MLRT_ERR_BAD_HEADER, "%s: pooling '%s': expected pooling modes (%s, ...) joined by '+', each once", file,
                            pool, POOL_MODES[0]);
        else cf->st_pooling |= 1u << i;
        p += n + (p[n] == '+');
        if (!st && !*p && p[-1] == '+') st = mlrt__fail(err, MLRT_ERR_BAD_HEADER, "%s: pooling '%s' ends with '+'", file, pool);
    }
    if (!st && !cf->st_pooling) st = mlrt__fail(err, MLRT_ERR_BAD_HEADER, "%s: pooling is empty", file);
    if (!st) st = mlrt__cfg_bool(o, file, "normalize", &cf->st_normalize, err);
    if (!st) st = mlrt__cfg_uint(o, file, "max_seq_length", 1, MLRT__ENC_MAX_POSITIONS, &cf->st_max_length, err);
    if (!st) st = mlrt__cfg_bool(o, file, "do_lower_case", &cf->st_lower_case, err);
    cf->st_include_prompt = true;
    if (!st) st = mlrt__cfg_bool(o, file, "include_prompt", &cf->st_include_prompt, err);
    if (!st && (mlrt__json_get(o, "prompts") || mlrt__json_get(o, "default_prompt_name")))
        st = read_prompts(o, file, &cf->st_prompts, &cf->st_prompt, &cf->st_prompt_len, err);
    cf->st_set = !st;
    return st;
}

/* .apr v2 metadata (`apr import`): the sizes it records; num_heads is needed unless config.json gave it. */
static mlrt_status read_apr_metadata(const mlrt__tensorset *ts, bool have_config, config *cf, mlrt_error *err) {
    if (!ts->meta_json) return MLRT_OK;
    mlrt__json_doc doc;
    const char *file = "apr: metadata", *arch = NULL, *hf = NULL;
    mlrt_status st = mlrt__json_parse((const uint8_t *)ts->meta_json, strlen(ts->meta_json), file, &doc, err);
    if (st) return st;
    const mlrt__json *o = doc.root, *v, *eps = mlrt__json_get(o, "rms_norm_eps"); /* newer apr import: layer_norm_eps */
    const family *fam = NULL;
    if (!(st = mlrt__cfg_str(o, file, "architecture", true, &arch, err)) && arch && !(fam = family_of(strcmp(arch, "Bert") ? arch : "bert")))
        st = mlrt__fail(err, MLRT_ERR_NOT_A_MODEL, "apr: metadata architecture '%s' is not bert, mpnet or distilbert", arch);
    fam = fam ? fam : &FAMILIES[0];
    if (!st && have_config && fam != cf->fam)
        st = mlrt__fail(err, MLRT_ERR_BAD_HEADER, "apr: metadata architecture '%s' but config.json's model_type is %s", arch,
                        cf->fam->model_type);
    if (!st && !have_config) cf->fam = fam, cf->buckets = 32;
    if (!st && fam->mpnet) st = mlrt__cfg_uint(o, file, "relative_attention_num_buckets", have_config ? cf->buckets : 32, have_config ? cf->buckets : MLRT__MAX_DIM,
                                         &cf->buckets, err);
    if (!st) st = mlrt__cfg_str(o, file, "hf_architecture", true, &hf, err);
    if (!st && hf && !cf->arch[0]) mlrt__format_to(cf->arch, sizeof cf->arch, "%s", hf);
    if (!st) st = read_sizes(o, file, true, have_config, cf, err);
    if (!st && (v = mlrt__json_get(o, "mlrt_embedding"))) st = read_st_record(v, cf, err);
    if (!st && !have_config && eps && eps->type != MLRT__JSON_NULL && (!mlrt__json_f64(eps, &cf->eps) || !(cf->eps > 0) || !isfinite((float)cf->eps)))
        st = mlrt__fail(err, MLRT_ERR_BAD_HEADER, "apr: metadata rms_norm_eps: expected a positive number");
    mlrt__json_free(&doc);
    return st;
}

/* ------------------------------------------------------------------ sentence-transformers */

static bool has_dotdot(const char *p) {
    for (; *p; p++)
        if (p[0] == '.' && p[1] == '.') return true;
    return false;
}

/* A module's path as a folder name ("1_Pooling/"), or "" for the top. */
static char *folder_of(const char *path, const char *file, mlrt_error *err) {
    size_t n = strlen(path);
    char *p = malloc(n + 2);
    if (!p) { mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "%s: out of memory", file); return NULL; }
    memcpy(p, path, n);
    p[n] = '/', p[n + 1] = 0;
    if (!n) p[0] = 0;
    return p;
}

/* modules.json: where the Transformer's files are (d->dir), the Pooling and Dense modules' paths, Normalize. */
static mlrt_status read_modules(const mlrt_file *f, char **pool_dir, char **dense_dirs, mlrt__enc_desc *d, mlrt_error *err) {
    static const uint8_t none[1] = {0};
    mlrt__json_doc doc;
    mlrt_status st = mlrt__json_parse(f->bytes ? f->bytes : none, f->len, f->name, &doc, err);
    if (st) return st;
    const char *file = f->name;
    if (doc.root->type != MLRT__JSON_ARRAY || doc.root->count == 0)
        st = mlrt__fail_in(err, MLRT_ERR_BAD_HEADER, file, "expected a non-empty array of modules, got %s",
                           doc.root->type == MLRT__JSON_ARRAY ? "an empty one" : mlrt__json_type_name(doc.root->type));
    int stage = 0; /* 1: Transformer seen, 2: Pooling, 3: Dense, 4: Normalize */
    size_t i = 0;
    for (const mlrt__json *m = st ? NULL : doc.root->child; m && !st; m = m->next, i++) {
        const char *type, *path, *name;
        uint32_t idx = 0;
        if (m->type != MLRT__JSON_OBJECT) {
            st = mlrt__fail_in(err, MLRT_ERR_BAD_HEADER, file, "module %zu: expected an object, got %s", i, mlrt__json_type_name(m->type));
            break;
        }
        if ((st = mlrt__cfg_uint(m, file, "idx", 0, UINT32_MAX, &idx, err)) || (st = mlrt__cfg_str(m, file, "name", false, &name, err)) ||
            (st = mlrt__cfg_str(m, file, "path", false, &path, err)) || (st = mlrt__cfg_str(m, file, "type", false, &type, err)))
            break;
        if (!type || !path) {
            st = mlrt__fail_in(err, MLRT_ERR_BAD_HEADER, file, "module %zu has no '%s'", i, type ? "path" : "type");
            break;
        }
        const char *t = strncmp(type, ST_PREFIX, strlen(ST_PREFIX)) == 0 ? type + strlen(ST_PREFIX) : "";
        int want = !strcmp(t, "Transformer") ? 1 : !strcmp(t, "Pooling") ? 2 : !strcmp(t, "Dense") ? 3 : !strcmp(t, "Normalize") ? 4 : 0;
        if (!want) st = mlrt__fail_in(err, MLRT_ERR_UNSUPPORTED, file, "module %zu: type '%s' is not supported (Transformer, Pooling, Dense, Normalize)", i, type);
        else if (want != stage + 1 && !(want == 3 && stage == 3) && !(want == 4 && stage == 2))
            st = mlrt__fail_in(err, MLRT_ERR_UNSUPPORTED, file, "module %zu (%s): expected Transformer, Pooling[, Dense...][, Normalize] in that order", i, t);
        else if (want == 3 && d->n_dense == MLRT__ENC_MAX_DENSE)
            st = mlrt__fail_in(err, MLRT_ERR_UNSUPPORTED, file, "module %zu: more than %d Dense modules", i, MLRT__ENC_MAX_DENSE);
        else if (has_dotdot(path) || path[0] == '/')
            st = mlrt__fail_in(err, MLRT_ERR_BAD_HEADER, file, "module %zu: path '%s' is not a folder of the model", i, path);
        else if ((want == 2 || want == 3) && !path[0])
            st = mlrt__fail_in(err, MLRT_ERR_BAD_HEADER, file, "module %zu (%s): the path is empty: its config.json is in a folder of its own", i, t);
        else if (want < 4 && !(*(want == 1 ? &d->dir : want == 2 ? pool_dir : &dense_dirs[d->n_dense++]) = folder_of(path, file, err)))
            st = MLRT_ERR_OUT_OF_MEMORY;
        stage = want;
        d->normalize = want == 4;
    }
    if (!st && stage < 2) st = mlrt__fail_in(err, MLRT_ERR_UNSUPPORTED, file, "no Pooling module after the Transformer");
    mlrt__json_free(&doc);
    return st;
}

/* Whether s, ASCII letters lowercased, is lower. */
static bool lower_is(const char *s, const char *lower) {
    for (; *s && *s + (*s >= 'A' && *s <= 'Z') * 32 == *lower; s++, lower++) {}
    return !*s && !*lower;
}

/* 1_Pooling/config.json: the pooling modes (keys sentence-transformers' Pooling takes; no others). */
static mlrt_status read_pooling(const mlrt_file *f, uint32_t hidden, uint32_t *modes, bool *include, mlrt_error *err) {
    static const char *const flags[6] = {"pooling_mode_cls_token", "pooling_mode_max_tokens", "pooling_mode_mean_tokens",
                                         "pooling_mode_mean_sqrt_len_tokens", "pooling_mode_weightedmean_tokens",
                                         "pooling_mode_lasttoken"};
    mlrt__json_doc doc;
    mlrt_status st = mlrt__cfg_object(f, &doc, err);
    if (st) return st;
    const char *file = f->name;
    uint32_t dim = hidden;
    *include = true;
    *modes = MLRT__EPOOL_MEAN; /* the constructor's defaults */
    for (const mlrt__json *k = doc.root->child; k && !st; k = k->next) {
        int i = 0;
        while (i < 6 && strcmp(k->key, flags[i])) i++;
        bool on = false;
        if (i < 6) {
            if (!(st = mlrt__cfg_bool(doc.root, file, flags[i], &on, err))) *modes = on ? *modes | 1u << i : *modes & ~(1u << i);
        } else if (!strcmp(k->key, "word_embedding_dimension")) st = mlrt__cfg_uint(doc.root, file, k->key, 1, MLRT__MAX_DIM, &dim, err);
        else if (!strcmp(k->key, "include_prompt")) st = mlrt__cfg_bool(doc.root, file, k->key, include, err);
        else if (strcmp(k->key, "pooling_mode")) st = mlrt__fail_in(err, MLRT_ERR_BAD_HEADER, file, "unknown key '%s'", k->key);
    }
    const char *mode = NULL; /* the constructor's pooling_mode: one mode by name (any case), over the flags */
    if (!st && !(st = mlrt__cfg_str(doc.root, file, "pooling_mode", true, &mode, err)) && mode) {
        static const char *const names[6] = {"cls", "max", "mean", "mean_sqrt_len_tokens", "weightedmean", "lasttoken"};
        int i = 0;
        while (i < 6 && !lower_is(mode, names[i])) i++;
        if (i == 6)
            st = mlrt__fail_in(err, MLRT_ERR_BAD_HEADER, file, "pooling_mode '%s': expected cls, lasttoken, max, mean, mean_sqrt_len_tokens "
                               "or weightedmean", mode);
        *modes = 1u << i;
    }
    if (!st && dim != hidden)
        st = mlrt__fail_in(err, MLRT_ERR_BAD_DIMENSIONS, file, "word_embedding_dimension is %u but the model's hidden size is %u", dim, hidden);
    if (!st && !*modes) st = mlrt__fail_in(err, MLRT_ERR_BAD_HEADER, file, "no pooling mode is set");
    mlrt__json_free(&doc);
    return st;
}

/* tokenizer_config.json: truncation_side (transformers cuts on that side, "right" by default, whatever
 * tokenizer.json's direction); without a max_seq_length (d->max_length 0), sentence-transformers
 * truncates to min(max_position_embeddings, model_max_length); transformers writes a huge number (1e30)
 * for "none". */
static mlrt_status read_tokenizer_config(const ctx *c, uint32_t positions, mlrt__enc_desc *d, mlrt_error *err) {
    const mlrt_file *f = find_file(c, c->d->dir, "tokenizer_config.json");
    mlrt__json_doc doc;
    if (!f) return MLRT_OK;
    mlrt_status st = mlrt__cfg_object(f, &doc, err);
    if (st) return st;
    const char *side = NULL;
    st = mlrt__cfg_str(doc.root, f->name, "truncation_side", true, &side, err);
    if (!st && side && strcmp(side, "right") && strcmp(side, "left"))
        st = mlrt__fail_in(err, MLRT_ERR_BAD_HEADER, f->name, "truncation_side: expected \"right\" or \"left\", got \"%s\"", side);
    d->cut_left = !st && side && !strcmp(side, "left");
    const mlrt__json *v = d->max_length ? NULL : mlrt__json_get(doc.root, "model_max_length");
    double x = 0;
    if (!st && v && v->type != MLRT__JSON_NULL) {
        if (!mlrt__json_f64(v, &x))
            st = mlrt__fail_in(err, MLRT_ERR_BAD_HEADER, f->name, "model_max_length: expected a number, got %s", mlrt__json_type_name(v->type));
        else if (x < 1 || (x < positions && x != (uint32_t)x))
            st = mlrt__fail_in(err, MLRT_ERR_BAD_DIMENSIONS, f->name, "model_max_length: expected a whole number from 1");
        else if (x < positions)
            d->max_length = (uint32_t)x;
    }
    mlrt__json_free(&doc);
    return st;
}

/* sentence_bert_config.json: the maximum length (null or absent: read_tokenizer_config), lowercasing; without
 * the file, what an .apr records. */
static mlrt_status read_lengths(const ctx *c, const config *cf, mlrt__enc_desc *d, mlrt_error *err) {
    const uint32_t positions = cf->fam->mpnet ? cf->positions - 2 : cf->positions; /* (MPNet's positions start at 2) */
    const mlrt_file *f = find_file(c, c->d->dir, "sentence_bert_config.json");
    mlrt__json_doc doc;
    d->max_length = 0;
    mlrt_status st = f ? mlrt__cfg_object(f, &doc, err) : MLRT_OK;
    if (st) return st;
    if (!f && cf->st_set) {
        if (cf->st_max_length > positions)
            return mlrt__fail(err, MLRT_ERR_BAD_DIMENSIONS, "apr: metadata mlrt_embedding: max_seq_length %u is more than "
                              "the %u tokens the positions allow", cf->st_max_length, positions);
        d->max_length = cf->st_max_length, d->lower_case = cf->st_lower_case;
    }
    if (f) {
        const mlrt__json *v = mlrt__json_get(doc.root, "max_seq_length");
        if (v && v->type != MLRT__JSON_NULL) st = mlrt__cfg_uint(doc.root, f->name, "max_seq_length", 1, positions, &d->max_length, err);
        if (!st) st = mlrt__cfg_bool(doc.root, f->name, "do_lower_case", &d->lower_case, err);
        mlrt__json_free(&doc);
        if (st == MLRT_ERR_BAD_DIMENSIONS) /* longer than the positions: say why */
            mlrt__fail_in(err, st, f->name, "max_seq_length is more than the %u tokens max_position_embeddings allows, or 0", positions);
    }
    if (!st) st = read_tokenizer_config(c, positions, d, err);
    if (!d->max_length) d->max_length = positions;
    return st;
}

/* ------------------------------------------------------------------ tensors */

/* prefix + name, marked used; its shape must be exactly dims [rank]. */
static mlrt_status tensor(ctx *c, const char *name, uint32_t rank, uint64_t d0, uint64_t d1, const mlrt__tensor **out) {
    char full[160];
    mlrt__format_to(full, sizeof full, "%s%s", c->prefix, name);
    const mlrt__tensor *t = mlrt__tensorset_find(c->ts, full);
    size_t at = strlen(full);
    if (!t && at > 7 && !strcmp(full + at - 7, ".weight")) { /* legacy LayerNorm names */
        memcpy(full + at - 7, ".gamma", 7);
        t = mlrt__tensorset_find(c->ts, full);
    } else if (!t && at > 5 && !strcmp(full + at - 5, ".bias")) {
        memcpy(full + at - 5, ".beta", 6);
        t = mlrt__tensorset_find(c->ts, full);
    }
    if (!t) return mlrt__fail(c->err, MLRT_ERR_NOT_A_MODEL, "%s: tensor '%s%s' is missing", c->fmt, c->prefix, name);
    c->used[t - c->ts->tensors] = true;
    uint64_t want[2] = {d0, d1};
    bool ok = t->rank == rank;
    for (uint32_t k = 0; ok && k < rank; k++) ok = t->shape[k] == want[k];
    if (!ok)
        return mlrt__fail(c->err, MLRT_ERR_BAD_DIMENSIONS, "%s: tensor '%s' has %u dimensions [%llu%s%llu...]; the config gives [%llu%s%llu]",
                          c->fmt, t->name, t->rank, (unsigned long long)(t->rank ? t->shape[0] : 0), t->rank > 1 ? ", " : "",
                          (unsigned long long)(t->rank > 1 ? t->shape[1] : 0), (unsigned long long)d0, rank > 1 ? ", " : "",
                          (unsigned long long)(rank > 1 ? d1 : 0));
    if (!mlrt__dtype_is_float(t->dtype) && !mlrt__dtype_is_quantized(t->dtype))
        return mlrt__fail(c->err, MLRT_ERR_UNSUPPORTED, "%s: tensor '%s' is %s; weights must be F32, F16, BF16 or quantized",
                          c->fmt, t->name, mlrt_dtype_name(t->dtype));
    *out = t;
    return MLRT_OK;
}

static mlrt_status vec(ctx *c, const char *name, uint32_t rank, uint64_t d0, uint64_t d1, mlrt__enc_src *s) {
    const mlrt__tensor *t;
    mlrt_status st = tensor(c, name, rank, d0, d1, &t);
    if (!st) *s = (mlrt__enc_src){t->name, c->data + t->begin, t->dtype, t->count};
    return st;
}

/* A Linear layer "<name>.weight" [out][in] and "<name>.bias" [out]. */
static mlrt_status linear(ctx *c, const char *name, uint32_t in, uint32_t out, mlrt__dense_src *s) {
    char w[160], b[160];
    const mlrt__tensor *tw, *tb;
    mlrt__format_to(w, sizeof w, "%s.weight", name);
    mlrt__format_to(b, sizeof b, "%s.bias", name);
    mlrt_status st = tensor(c, w, 2, out, in, &tw);
    if (!st) st = tensor(c, b, 1, out, 0, &tb);
    if (!st) *s = (mlrt__dense_src){tw->name, tb->name, in, out, c->data + tw->begin, tw->dtype, false, c->data + tb->begin,
                                    tb->dtype, MLRT_ACT_IDENTITY, false};
    return st;
}

static mlrt_status layer(ctx *c, uint32_t i, const config *cf, mlrt__enc_layer *l) {
    char p[96], n[128];
    mlrt__format_to(p, sizeof p, cf->fam->layer, i);
    const uint32_t h = cf->hidden;
    mlrt_status st = MLRT_OK;
    for (int k = 0; k < 6 && !st; k++) {
        mlrt__format_to(n, sizeof n, "%s%s", p, cf->fam->lin[k]);
        st = linear(c, n, k == 5 ? cf->ffn : h, k == 4 ? cf->ffn : h, &l->w[k]);
    }
    mlrt__enc_src *ln[4] = {&l->ln1_w, &l->ln1_b, &l->ln2_w, &l->ln2_b};
    for (int k = 0; k < 4 && !st; k++) {
        mlrt__format_to(n, sizeof n, "%s%s.%s", p, cf->fam->ln[k / 2], k % 2 ? "bias" : "weight");
        st = vec(c, n, 1, h, 0, ln[k]);
    }
    return st;
}

/* type_vocab_size, which .apr metadata does not record, from its table's shape. */
static void types_from_shape(const ctx *c, config *cf) {
    char n[96];
    mlrt__format_to(n, sizeof n, "%sembeddings.token_type_embeddings.weight", c->prefix);
    const mlrt__tensor *t = mlrt__tensorset_find(c->ts, n);
    if (t && t->rank == 2 && t->shape[0] >= 1 && t->shape[0] <= MLRT__MAX_DIM) cf->types = (uint32_t)t->shape[0];
}

/* The prefix of the word embeddings' name (a family's, else ""), or NULL: no encoder of the families. */
static const char *prefix_of(const mlrt__tensorset *ts) {
    char n[64];
    for (int i = 0; i <= 3; i++) {
        const char *p = i < 3 ? FAMILIES[i].prefix : "";
        mlrt__format_to(n, sizeof n, "%sembeddings.word_embeddings.weight", p);
        if (mlrt__tensorset_find(ts, n)) return p;
    }
    return NULL;
}

bool mlrt__is_bert(const mlrt__tensorset *ts) {
    return prefix_of(ts) != NULL;
}

/* ------------------------------------------------------------------ the folder */

/* The weights file: its tensors read into ts, checked to be a BERT encoder's (*bert). */
static mlrt_status read_weights(ctx *c, mlrt__tensorset *ts, const mlrt_file **wf, bool *bert, mlrt_error *err) {
    static const uint8_t none[8] = {0};
    const mlrt_file *f = find_file(c, c->d->dir, "model.safetensors");
    bool apr = !f;
    if (!f) f = find_file(c, c->d->dir, "model.apr");
    if (!f && find_file(c, c->d->dir, "pytorch_model.bin"))
        return mlrt__fail(err, MLRT_ERR_UNSUPPORTED, "load_files: pytorch_model.bin is not read: give model.safetensors");
    for (size_t i = 0; !f && i < c->n; i++) { /* one in a subfolder: the names were not made relative to the model's folder */
        const char *slash = strrchr(c->files[i].name, '/');
        if (slash && (!strcmp(slash, "/model.safetensors") || !strcmp(slash, "/model.apr")))
            return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT,
                              "load_files: '%s' is in a subfolder: name the files as paths inside the model's folder "
                              "('model.safetensors', '1_Pooling/config.json')", c->files[i].name);
    }
    if (!f) return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "load_files: no model.safetensors or model.apr among the %zu files", c->n);
    const uint8_t *b = f->bytes ? f->bytes : none;
    mlrt_status st;
    if (apr && (f->len < 4 || (memcmp(b, "APR\0", 4) && memcmp(b, "APR2", 4))))
        return mlrt__fail(err, MLRT_ERR_NOT_A_MODEL, "load_files: %s is not an .apr v2 tensor file (magic APR\\0): not an encoder", f->name);
    if ((st = apr ? mlrt__read_apr_v2(b, f->len, ts, err) : mlrt__read_safetensors(b, f->len, ts, err))) return st;
    *wf = f;
    *bert = (c->prefix = prefix_of(ts)) != NULL;
    if (!*bert)
        return mlrt__fail(err, MLRT_ERR_NOT_A_MODEL, "load_files: %s holds no BERT-family encoder (no "
                          "[bert.|mpnet.|distilbert.]embeddings.word_embeddings.weight)", f->name);
    c->ts = ts, c->data = b + ts->data_begin, c->fmt = mlrt_format_name(ts->format);
    return MLRT_OK;
}

static mlrt_status read_config_files(ctx *c, config *cf, mlrt_error *err) {
    const mlrt_file *f = find_file(c, c->d->dir, "config.json");
    mlrt_status st = MLRT_OK;
    cf->fam = &FAMILIES[0];
    if (f) {
        *cf = (config){.hidden = 768, .heads = 12, .ffn = 3072, .types = 2, .eps = 1e-12, .fam = &FAMILIES[0]}; /* BertConfig's defaults (and the families') */
        st = read_config(f, cf, err);
        cf->have_heads = true;
    } else if (c->ts->format != MLRT_FORMAT_APR) {
        return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "load_files: config.json is missing");
    }
    if (!st && c->ts->format == MLRT_FORMAT_APR) st = read_apr_metadata(c->ts, f != NULL, cf, err);
    if (st) return st;
    if (!cf->types && cf->fam->types) types_from_shape(c, cf);
    if (!cf->eps) cf->eps = 1e-12;
    if (!cf->arch[0]) mlrt__format_to(cf->arch, sizeof cf->arch, "%sModel", cf->fam->arch);
    if (!cf->have_heads)
        return mlrt__fail(err, MLRT_ERR_BAD_HEADER, "apr: the metadata has no num_heads: give config.json");
    if (!cf->hidden || !cf->layers || !cf->ffn || !cf->vocab || !cf->positions || (!cf->types && cf->fam->types))
        return mlrt__fail(err, MLRT_ERR_BAD_HEADER, "apr: the metadata lacks the encoder's sizes: give config.json");
    if (cf->fam->mpnet && cf->positions < 3) /* (its first position is 2) */
        return mlrt__fail(err, MLRT_ERR_BAD_DIMENSIONS, "%s: max_position_embeddings %u: MPNet needs at least 3", f ? f->name : "apr: metadata",
                          cf->positions);
    if (cf->hidden % cf->heads)
        return mlrt__fail(err, MLRT_ERR_BAD_DIMENSIONS, "%s: hidden_size %u is not a multiple of num_attention_heads %u",
                          f ? f->name : "apr: metadata", cf->hidden, cf->heads);
    return MLRT_OK;
}

static mlrt_status read_tensors(ctx *c, const config *cf, mlrt__enc_desc *d) {
    mlrt_status st = vec(c, "embeddings.word_embeddings.weight", 2, cf->vocab, cf->hidden, &d->word);
    if (!st) st = vec(c, "embeddings.position_embeddings.weight", 2, cf->positions, cf->hidden, &d->pos);
    if (!st && cf->fam->types) st = vec(c, "embeddings.token_type_embeddings.weight", 2, cf->types, cf->hidden, &d->type);
    if (!st && cf->fam->mpnet) st = vec(c, "encoder.relative_attention_bias.weight", 2, cf->buckets, cf->heads, &d->rel);
    if (!st) st = vec(c, "embeddings.LayerNorm.weight", 1, cf->hidden, 0, &d->ln_w);
    if (!st) st = vec(c, "embeddings.LayerNorm.bias", 1, cf->hidden, 0, &d->ln_b);
    if (!st && !(d->layer = calloc(cf->layers, sizeof *d->layer)))
        st = mlrt__fail(c->err, MLRT_ERR_OUT_OF_MEMORY, "%s: out of memory", c->fmt);
    for (uint32_t i = 0; i < cf->layers && !st; i++) st = layer(c, i, cf, &d->layer[i]);
    return st;
}

/* The pooling modes and Normalize: modules.json's, else 1_Pooling/config.json's, else what an .apr records,
 * else mean. */
static mlrt_status read_pooling_files(ctx *c, const char *pool_dir, bool modules, const config *cf, mlrt__enc_desc *d, mlrt_error *err) {
    const mlrt_file *f = find_file(c, pool_dir ? pool_dir : "1_Pooling/", "config.json");
    if (pool_dir && !f)
        return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "load_files: modules.json names a Pooling module in '%s' but no "
                          "%sconfig.json was given", pool_dir, pool_dir);
    d->pooling = MLRT__EPOOL_MEAN, d->include_prompt = true;
    if (!modules && !f && cf->st_set) {
        d->pooling = cf->st_pooling, d->normalize = cf->st_normalize, d->include_prompt = cf->st_include_prompt;
        return MLRT_OK;
    }
    if (!modules) d->normalize = c->ts->format == MLRT_FORMAT_APR; /* `apr embed` normalizes; sentence-transformers does not */
    return f ? read_pooling(f, d->hidden, &d->pooling, &d->include_prompt, err) : MLRT_OK;
}

/* <dir>/config.json of a Dense module: its sizes, bias and activation (the keys of sentence-transformers' Dense). */
static mlrt_status read_dense_config(const mlrt_file *f, uint32_t *in, uint32_t *out, bool *bias, mlrt_activation *act, mlrt_error *err) {
    static const char *const acts[4] = {"torch.nn.modules.linear.Identity", "torch.nn.modules.activation.Tanh",
                                        "torch.nn.modules.activation.ReLU", "torch.nn.modules.activation.Sigmoid"};
    static const mlrt_activation ids[4] = {MLRT_ACT_IDENTITY, MLRT_ACT_TANH, MLRT_ACT_RELU, MLRT_ACT_SIGMOID};
    mlrt__json_doc doc;
    mlrt_status st = mlrt__cfg_object(f, &doc, err);
    if (st) return st;
    const char *file = f->name, *a = acts[1]; /* (Dense's default activation: Tanh) */
    *in = *out = 0, *bias = true;
    static const char *const keys[] = {"in_features", "out_features", "bias", "activation_function", "module_input_name",
                                       "module_output_name", NULL}; /* (Dense's config_keys) */
    st = mlrt__cfg_only_keys(doc.root, file, keys, err);
    const char *io[2] = {NULL, NULL}; /* the feature it reads and writes: the sentence embedding, or unsupported */
    for (int j = 0; j < 2 && !st; j++)
        if (!(st = mlrt__cfg_str(doc.root, file, keys[4 + j], true, &io[j], err)) && io[j] && strcmp(io[j], "sentence_embedding"))
            st = mlrt__fail_in(err, MLRT_ERR_UNSUPPORTED, file, "%s '%s': mlrt runs Dense modules on the sentence embedding", keys[4 + j], io[j]);
    if (!st) st = mlrt__cfg_uint(doc.root, file, "in_features", 1, MLRT__MAX_DIM, in, err);
    if (!st) st = mlrt__cfg_uint(doc.root, file, "out_features", 1, MLRT__MAX_DIM, out, err);
    if (!st) st = mlrt__cfg_bool(doc.root, file, "bias", bias, err);
    if (!st && mlrt__json_get(doc.root, "activation_function")) st = mlrt__cfg_str(doc.root, file, "activation_function", false, &a, err);
    if (!st && (!*in || !*out)) st = mlrt__fail_in(err, MLRT_ERR_BAD_HEADER, file, "'%s' is missing", *in ? "out_features" : "in_features");
    int i = 0;
    while (!st && i < 4 && strcmp(a, acts[i])) i++;
    if (!st && i == 4)
        st = mlrt__fail_in(err, MLRT_ERR_UNSUPPORTED, file, "activation_function '%s': mlrt runs Identity, Tanh, ReLU and Sigmoid", a);
    if (!st) *act = ids[i];
    mlrt__json_free(&doc);
    return st;
}

/* The Dense modules in dirs [n], each <dir>/config.json and <dir>/model.safetensors ("linear.weight"
 * [out][in], "linear.bias" [out]), after a pooling of dim floats. */
static mlrt_status read_dense(const ctx *c, char *const *dirs, uint32_t n, uint32_t dim, mlrt__enc_desc *d, mlrt_error *err) {
    static const uint8_t none[8] = {0};
    mlrt_status st = MLRT_OK;
    for (uint32_t i = 0; i < n && !st; i++) {
        const char *dir = dirs[i];
        mlrt__enc_dense *m = &d->dense[i];
        const mlrt_file *cf = find_file(c, dir, "config.json"), *wf = find_file(c, dir, "model.safetensors");
        const bool bin = cf && !wf && find_file(c, dir, "pytorch_model.bin"); /* (only its weights in the old format) */
        if (!cf || !wf)
            return mlrt__fail(err, bin ? MLRT_ERR_UNSUPPORTED : MLRT_ERR_INVALID_ARGUMENT,
                              "load_files: modules.json names a Dense module in '%s' but no %s%s was given%s", dir, dir,
                              cf ? "model.safetensors" : "config.json", bin ? " (pytorch_model.bin is not read)" : "");
        uint32_t in, out;
        bool bias;
        mlrt__tensorset ts;
        if ((st = read_dense_config(cf, &in, &out, &bias, &m->w.act, err))) return st;
        if (in != dim)
            return mlrt__fail_in(err, MLRT_ERR_BAD_DIMENSIONS, cf->name, "in_features is %u but the embedding before it has %u floats", in, dim);
        if ((st = mlrt__read_safetensors(wf->bytes ? wf->bytes : none, wf->len, &ts, err))) { /* (said of which file) */
            char msg[MLRT_ERROR_MESSAGE_MAX];
            memcpy(msg, err->message, sizeof msg);
            return mlrt__fail_in(err, st, wf->name, "%s", msg);
        }
        const uint8_t *data = (wf->bytes ? wf->bytes : none) + ts.data_begin;
        for (int k = 0; k < 1 + bias && !st; k++) {
            const char *name = k ? "linear.bias" : "linear.weight";
            const mlrt__tensor *t = mlrt__tensorset_find(&ts, name);
            mlrt__format_to(m->names[k], sizeof m->names[k], "%s%s", dir, name);
            if (!t) st = mlrt__fail(err, MLRT_ERR_NOT_A_MODEL, "%s: tensor '%s' is missing", wf->name, name);
            else if (t->rank != 2 - (uint32_t)k || t->shape[0] != out || (!k && t->shape[1] != in))
                st = k ? mlrt__fail(err, MLRT_ERR_BAD_DIMENSIONS, "%s: tensor '%s' is not [%u] (out_features)", wf->name, name, out)
                       : mlrt__fail(err, MLRT_ERR_BAD_DIMENSIONS, "%s: tensor '%s' is not [%u, %u] (out_features, in_features)", wf->name, name, out, in);
            else if (!mlrt__dtype_is_float(t->dtype))
                st = mlrt__fail(err, MLRT_ERR_UNSUPPORTED, "%s: tensor '%s' is %s; weights must be F32, F16 or BF16", wf->name, name, mlrt_dtype_name(t->dtype));
            else if (k) m->w.b = data + t->begin, m->w.b_dtype = t->dtype;
            else m->w.w = data + t->begin, m->w.w_dtype = t->dtype;
        }
        mlrt__tensorset_free(&ts);
        m->w.name = m->names[0], m->w.b_name = m->names[1], m->w.in = in, m->w.out = out, dim = out;
    }
    return st;
}

/* config_sentence_transformers.json's prompts into facts and d; without the file, what an .apr records. */
static mlrt_status read_prompt_file(const ctx *c, config *cf, mlrt__buf *facts, mlrt__enc_desc *d, mlrt_error *err) {
    const mlrt_file *f = find_file(c, "", "config_sentence_transformers.json");
    if (!f) {
        mlrt__buf_puts(facts, cf->st_prompts.len ? cf->st_prompts.data : ",\"prompts\":{},\"defaultPromptName\":null");
        d->prompt = cf->st_prompt, d->prompt_len = cf->st_prompt_len, cf->st_prompt = NULL;
        return MLRT_OK;
    }
    mlrt__json_doc doc;
    mlrt_status st = mlrt__cfg_object(f, &doc, err);
    if (st) return st;
    st = read_prompts(doc.root, f->name, facts, &d->prompt, &d->prompt_len, err);
    mlrt__json_free(&doc);
    return st;
}

static void facts(const ctx *c, const config *cf, const mlrt__buf *prompts, mlrt__enc_desc *d) {
    const char *const *modes = POOL_MODES;
    uint32_t k = 0;
    for (int i = 0; i < 6; i++) k += d->pooling >> i & 1;
    mlrt__buf b = {0};
    mlrt__buf_puts(&b, "\"architecture\":");
    mlrt__buf_json_string(&b, cf->arch, strlen(cf->arch));
    mlrt__buf_printf(&b, ",\"dim\":%u,\"hiddenSize\":%u,\"layers\":%u,\"heads\":%u,\"ffn\":%u,\"vocabSize\":%u",
                     d->n_dense ? d->dense[d->n_dense - 1].w.out : k * cf->hidden,
                     cf->hidden, cf->layers, cf->heads, cf->ffn, cf->vocab);
    mlrt__buf_printf(&b, ",\"maxPositions\":%u,\"typeVocabSize\":%u,\"maxLength\":%u,\"layerNormEps\":", cf->positions, cf->types,
                     d->max_length);
    mlrt__buf_number(&b, cf->eps, false);
    mlrt__buf_puts(&b, ",\"hiddenAct\":\"gelu\",\"pooling\":\"");
    for (int i = 0, first = 1; i < 6; i++)
        if (d->pooling >> i & 1) mlrt__buf_printf(&b, "%s%s", first ? "" : "+", modes[i]), first = 0;
    mlrt__buf_printf(&b, "\",\"normalize\":%s,\"lowerCase\":%s,\"truncationSide\":\"%s\"", d->normalize ? "true" : "false",
                     d->lower_case ? "true" : "false", d->cut_left ? "left" : "right");
    mlrt__buf_puts(&b, ",\"dense\":[");
    for (uint32_t i = 0; i < d->n_dense; i++)
        mlrt__buf_printf(&b, "%s{\"in\":%u,\"out\":%u,\"bias\":%s,\"activation\":\"%s\"}", i ? "," : "", d->dense[i].w.in, d->dense[i].w.out,
                         d->dense[i].w.b ? "true" : "false", mlrt_activation_name(d->dense[i].w.act));
    mlrt__buf_puts(&b, "]");
    mlrt__buf_puts(&b, prompts->data ? prompts->data : "");
    mlrt__buf_printf(&b, ",\"includePrompt\":%s", d->include_prompt ? "true" : "false");
    mlrt__buf_printf(&b, ",\"tensorPrefix\":\"%s\",\"unusedTensors\":[", c->prefix);
    for (size_t i = 0, first = 1; i < c->ts->count; i++)
        if (!c->used[i]) {
            mlrt__buf_puts(&b, first ? "" : ",");
            mlrt__buf_json_string(&b, c->ts->tensors[i].name, c->ts->tensors[i].name_len);
            first = 0;
        }
    mlrt__buf_puts(&b, "]");
    if (b.oom) free(b.data), b.data = NULL;
    d->facts_json = b.data;
}

mlrt_status mlrt__read_encoder(const mlrt_file *files, size_t n, mlrt__tensorset *ts, mlrt__enc_desc *d, bool *bert,
                               mlrt_error *err) {
    memset(ts, 0, sizeof *ts);
    memset(d, 0, sizeof *d);
    *bert = false;
    ctx c = {files, n, NULL, NULL, "", "load_files", NULL, d, err};
    char *pool_dir = NULL, *dense_dirs[MLRT__ENC_MAX_DENSE] = {0};
    const mlrt_file *mod = find_file(&c, "", "modules.json"), *wf = NULL;
    mlrt_status st = mod ? read_modules(mod, &pool_dir, dense_dirs, d, err) : MLRT_OK;
    if (!st && !d->dir && !(d->dir = folder_of("", "load_files", err))) st = MLRT_ERR_OUT_OF_MEMORY;
    config cf = {0};
    if (!st) st = read_weights(&c, ts, &wf, bert, err);
    if (!st) st = read_config_files(&c, &cf, err);
    if (!st && !(c.used = calloc(ts->count + 1, 1))) st = mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "load_files: out of memory");
    if (!st) {
        d->format = ts->format, d->ts = ts;
        d->hidden = cf.hidden, d->layers = cf.layers, d->heads = cf.heads, d->ffn = cf.ffn, d->vocab = cf.vocab;
        d->positions = cf.positions, d->types = cf.types, d->eps = (float)cf.eps, d->mpnet = cf.fam->mpnet;
        st = read_tensors(&c, &cf, d);
    }
    if (!st) d->dtype = d->layer[0].w[0].w_dtype;
    if (!st) st = read_pooling_files(&c, pool_dir, mod != NULL, &cf, d, err);
    uint32_t pooled = 0;
    for (int i = 0; i < 6; i++) pooled += (d->pooling >> i & 1) * d->hidden;
    if (!st) st = read_dense(&c, dense_dirs, d->n_dense, pooled, d, err);
    if (!st) st = read_lengths(&c, &cf, d, err);
    mlrt__buf prompts = {0};
    if (!st) st = read_prompt_file(&c, &cf, &prompts, d, err);
    if (!st && (facts(&c, &cf, &prompts, d), !d->facts_json || prompts.oom))
        st = mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "load_files: out of memory");
    free(pool_dir), free(c.used), free(prompts.data), free(cf.st_prompts.data), free(cf.st_prompt);
    for (int i = 0; i < MLRT__ENC_MAX_DENSE; i++) free(dense_dirs[i]);
    if (st) mlrt__enc_desc_free(d);
    return st;
}
