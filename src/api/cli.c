/* api/cli.c — the mlrt command line (built for WASI as wasm/mlrt-wasi.wasm, and natively).
 *
 *   mlrt inspect FILE          format, model kind, tensors and metadata as JSON
 *   mlrt predict FILE INPUT    INPUT: raw little-endian f32 (n x inputs values) or a JSON
 *                              array (flat, or of rows); prints the outputs as JSON
 *   mlrt labels FILE INPUT     the same inputs; prints one label per row as a JSON array (a
 *                              classifier's stored class label, KMeans' nearest centroid)
 *   mlrt tokenize TOK TEXT     TOK: a tokenizer.json, a vocab.txt or a model folder; prints
 *   mlrt tokenize TOK --input FILE     {"ids":[...],"tokens":[...]} per text (FILE: one per line)
 *   mlrt embed MODEL --text TEXT | --input FILE [--output json|f32|npy] [--out FILE] [--prompt TEXT]
 *                              MODEL: a sentence encoder's folder (model.safetensors or model.apr,
 *                              config.json, tokenizer.json, sentence-transformers' files), or its
 *                              .apr / .safetensors file with those files beside it; one embedding
 *                              per text (FILE: one per line): a JSON array of arrays, raw
 *                              little-endian f32 (n x dim), or a NumPy .npy of shape (n, dim);
 *                              --prompt: before every text (default: the model's default prompt)
 *   mlrt inspect DIR           an encoder folder: its info as JSON
 * Exit status: 0 ok, 1 the model or input was refused (message on stderr), 2 usage. */
#include "../codecs/codecs.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static uint8_t *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); return NULL; }
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break;
        uint8_t *bigger = realloc(buf, cap *= 2);
        if (!bigger) { free(buf); buf = NULL; }
        else buf = bigger;
    }
    if (!buf || ferror(f)) { fprintf(stderr, "%s: read failed\n", path); free(buf); buf = NULL; }
    fclose(f);
    *len = n;
    return buf;
}

static int fail(const mlrt_error *e) {
    fprintf(stderr, "mlrt: %s: %s\n", mlrt_status_name(e->code), e->message);
    return 1;
}

/* Numbers from a JSON array, flat or nested one level: appended to *vals. */
static int json_numbers(const mlrt__json *v, float **vals, size_t *n, size_t *cap, int depth) {
    if (v->type == MLRT__JSON_ARRAY && depth < 2) {
        for (const mlrt__json *c = v->child; c; c = c->next)
            if (json_numbers(c, vals, n, cap, depth + 1)) return 1;
        return 0;
    }
    if (v->type != MLRT__JSON_NUMBER || depth == 0) return 1;
    if (*n == *cap) {
        float *more = realloc(*vals, (*cap = *cap ? *cap * 2 : 1024) * sizeof **vals);
        if (!more) return 1;
        *vals = more;
    }
    char tmp[64];
    size_t len = v->len < sizeof tmp - 1 ? v->len : sizeof tmp - 1;
    memcpy(tmp, v->str, len);
    tmp[len] = 0;
    (*vals)[(*n)++] = strtof(tmp, NULL);
    return 0;
}

static float *read_input(const char *path, size_t *count) {
    size_t len;
    uint8_t *raw = read_file(path, &len);
    if (!raw) return NULL;
    size_t i = 0;
    while (i < len && (raw[i] == ' ' || raw[i] == '\n' || raw[i] == '\r' || raw[i] == '\t')) i++;
    float *vals = NULL;
    *count = 0;
    if (i < len && raw[i] == '[') {
        mlrt__json_doc doc;
        mlrt_error e;
        size_t cap = 0;
        if (mlrt__json_parse(raw, len, "input", &doc, &e)) { fail(&e); free(raw); return NULL; }
        if (json_numbers(doc.root, &vals, count, &cap, 0)) {
            fprintf(stderr, "mlrt: %s: input must be a JSON array of numbers or of arrays of numbers\n", path);
            free(vals);
            vals = NULL;
        }
        mlrt__json_free(&doc);
    } else if (len % 4) {
        fprintf(stderr, "mlrt: %s: %zu bytes is not a whole number of f32 values\n", path, len);
    } else {
        vals = malloc(len ? len : 1);
        for (size_t k = 0; vals && k < len / 4; k++) {
            uint32_t u = mlrt__rd_u32(raw + 4 * k);
            memcpy(&vals[k], &u, 4);
        }
        *count = len / 4;
    }
    free(raw);
    return vals;
}

static void print_floats(const float *v, size_t n) {
    putchar('[');
    for (size_t i = 0; i < n; i++) printf(i ? ",%.9g" : "%.9g", (double)v[i]);
    putchar(']');
}

static int cmd_predict(const char *model_path, const char *input_path, bool labels) {
    size_t len, count;
    uint8_t *bytes = read_file(model_path, &len);
    if (!bytes) return 1;
    mlrt_error e;
    mlrt_model *m = mlrt_load_from_bytes(bytes, len, &e);
    free(bytes);
    if (!m) return fail(&e);
    float *in = read_input(input_path, &count);
    int rc = 1;
    size_t ni = mlrt_input_size(m), no = mlrt_output_size(m);
    if (in && (count == 0 || count % ni))
        fprintf(stderr, "mlrt: %s: %zu values is not a multiple of the model's %zu inputs\n", input_path, count, ni);
    else if (in) {
        size_t rows = count / ni;
        float *out = malloc(rows * no * sizeof *out);
        uint32_t *lab = labels ? malloc(rows * sizeof *lab) : NULL;
        if (!out || (labels && !lab)) fprintf(stderr, "mlrt: out of memory\n");
        else if (labels && mlrt_predict_labels(m, in, rows, lab, &e)) fail(&e);
        else if (labels) {
            putchar('[');
            for (size_t r = 0; r < rows; r++) printf(r ? ",%u" : "%u", lab[r]);
            puts("]");
            rc = 0;
        } else if (mlrt_predict_batch(m, in, rows, out, &e)) fail(&e);
        else {
            if (rows > 1) putchar('[');
            for (size_t r = 0; r < rows; r++) {
                if (r) putchar(',');
                print_floats(out + r * no, no);
            }
            puts(rows > 1 ? "]" : "");
            rc = 0;
        }
        free(out);
        free(lab);
    }
    free(in);
    mlrt_free(m);
    return rc;
}

static bool is_dir(const char *path);
static int cmd_inspect_folder(const char *path);

static int cmd_inspect(const char *path) {
    if (is_dir(path)) return cmd_inspect_folder(path);
    size_t len;
    uint8_t *bytes = read_file(path, &len);
    if (!bytes) return 1;
    mlrt_error e;
    char *json = mlrt_inspect(bytes, len, &e);
    free(bytes);
    if (!json) return fail(&e);
    puts(json);
    mlrt_string_free(json);
    return 0;
}

/* ---- text: tokenize (issue 20) ---- */

/* A file of the folder dir (or NULL when it cannot be read), quietly. */
static uint8_t *read_in(const char *dir, const char *name, size_t *len) {
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path) return NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fclose(f);
    return read_file(path, len);
}

static int tokenize_line(mlrt_tokenizer *t, const char *s, size_t n) {
    mlrt_encoding enc;
    mlrt_error e;
    if (mlrt_tokenizer_encode(t, s, n, NULL, 0, NULL, &enc, &e)) return fail(&e);
    mlrt__buf b = {0};
    mlrt__buf_puts(&b, "{\"ids\":[");
    for (size_t i = 0; i < enc.n; i++) mlrt__buf_printf(&b, i ? ",%d" : "%d", (int)enc.ids[i]);
    mlrt__buf_puts(&b, "],\"tokens\":[");
    for (size_t i = 0; i < enc.n; i++) {
        const char *tok = mlrt_tokenizer_token(t, enc.ids[i]);
        if (i) mlrt__buf_puts(&b, ",");
        mlrt__buf_json_string(&b, tok, strlen(tok));
    }
    mlrt__buf_puts(&b, "]}");
    if (b.oom) { fprintf(stderr, "mlrt: out of memory\n"); free(b.data); return 1; }
    puts(b.data);
    free(b.data);
    return 0;
}

static int cmd_tokenize(const char *tok_path, const char *text, const char *input) {
    mlrt_file files[2] = {{"tokenizer.json", NULL, 0}, {"tokenizer_config.json", NULL, 0}};
    uint8_t *bytes[2] = {NULL, NULL};
    size_t nf = 1, lens[2] = {0, 0};
    if ((bytes[0] = read_in(tok_path, "tokenizer.json", &lens[0]))) {
    } else if ((bytes[0] = read_in(tok_path, "vocab.txt", &lens[0]))) {
        files[0].name = "vocab.txt";
        if ((bytes[1] = read_in(tok_path, "tokenizer_config.json", &lens[1]))) nf = 2;
    } else if ((bytes[0] = read_file(tok_path, &lens[0]))) {
        size_t i = 0;
        while (i < lens[0] && strchr(" \t\r\n", bytes[0][i])) i++;
        if (i == lens[0] || bytes[0][i] != '{') files[0].name = "vocab.txt";
    } else {
        return 1;
    }
    for (size_t k = 0; k < 2; k++) files[k].bytes = bytes[k], files[k].len = lens[k];
    mlrt_error e;
    mlrt_tokenizer *t = mlrt_tokenizer_load(files, nf, &e);
    free(bytes[0]);
    free(bytes[1]);
    if (!t) return fail(&e);
    int rc = 0;
    if (text) {
        rc = tokenize_line(t, text, strlen(text));
    } else {
        size_t len;
        uint8_t *all = read_file(input, &len);
        if (!all) rc = 1;
        for (size_t at = 0; all && at < len && !rc;) {
            const uint8_t *nl = memchr(all + at, '\n', len - at);
            size_t end = nl ? (size_t)(nl - all) : len, n = end - at;
            if (n && all[at + n - 1] == '\r') n--;
            rc = tokenize_line(t, (const char *)all + at, n);
            at = end + 1;
        }
        free(all);
    }
    mlrt_tokenizer_free(t);
    return rc;
}
/* ---- end of text ---- */

/* ---- sentence encoders: embed, inspect of a folder (issue 21) ---- */

enum { MAX_FILES = 48 };

/* An encoder's files by their names in the folder ("1_Pooling/config.json"); names and bytes malloc'd. */
typedef struct folder {
    size_t n;
    mlrt_file f[MAX_FILES];
} folder;

/* The names mlrt_load_files reads in a folder and in each module folder modules.json names. */
static const char *const KNOWN[] = {"model.safetensors", "model.apr", "config.json", "tokenizer.json", "vocab.txt",
                                    "tokenizer_config.json", "modules.json", "sentence_bert_config.json",
                                    "config_sentence_transformers.json"};
enum { WEIGHT_NAMES = 2 }; /* the first two of KNOWN */

static bool is_dir(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static void folder_free(folder *d) {
    for (size_t i = 0; i < d->n; i++) free((char *)d->f[i].name), free((uint8_t *)d->f[i].bytes);
    d->n = 0;
}

/* dir/sub/name as "sub/name" (or "name"), when that file is there and not yet read. */
static void folder_add(folder *d, const char *dir, const char *sub, const char *name) {
    char rel[1024];
    size_t len;
    if ((size_t)snprintf(rel, sizeof rel, "%s%s%s", sub, *sub ? "/" : "", name) >= sizeof rel || d->n == MAX_FILES) return;
    for (size_t i = 0; i < d->n; i++)
        if (!strcmp(d->f[i].name, rel)) return;
    char *copy = malloc(strlen(rel) + 1);
    uint8_t *bytes = copy ? read_in(dir, rel, &len) : NULL;
    if (!bytes) { free(copy); return; }
    d->f[d->n++] = (mlrt_file){strcpy(copy, rel), bytes, len};
}

/* The folder path, or the folder of the weights file path (read as model.apr or model.safetensors). */
static int read_folder(const char *path, folder *d) {
    char dir[4096];
    bool file = !is_dir(path);
    memset(d, 0, sizeof *d);
    if ((size_t)snprintf(dir, sizeof dir, "%s", path) >= sizeof dir) { fprintf(stderr, "mlrt: %s: path too long\n", path); return 1; }
    if (file) {
        char *slash = strrchr(dir, '/');
        if (slash) slash[slash == dir] = 0; /* "/x.apr" -> "/" */
        else strcpy(dir, ".");
        size_t len;
        uint8_t *bytes = read_file(path, &len);
        char *name = bytes ? malloc(32) : NULL;
        if (!name) { free(bytes); return 1; }
        strcpy(name, len >= 4 && !memcmp(bytes, "APR", 3) ? "model.apr" : "model.safetensors");
        d->f[d->n++] = (mlrt_file){name, bytes, len};
    }
    for (size_t k = file ? WEIGHT_NAMES : 0; k < sizeof KNOWN / sizeof *KNOWN; k++) folder_add(d, dir, "", KNOWN[k]);
    folder_add(d, dir, "1_Pooling", "config.json");
    const mlrt_file *mods = NULL;
    for (size_t i = 0; i < d->n; i++)
        if (!strcmp(d->f[i].name, "modules.json")) mods = &d->f[i];
    mlrt__json_doc doc;
    mlrt_error e;
    if (mods && !mlrt__json_parse(mods->bytes, mods->len, "modules.json", &doc, &e)) { /* (a bad one: mlrt_load_files says so) */
        for (const mlrt__json *m = doc.root->type == MLRT__JSON_ARRAY ? doc.root->child : NULL; m; m = m->next) {
            const mlrt__json *p = m->type == MLRT__JSON_OBJECT ? mlrt__json_get(m, "path") : NULL;
            if (!p || p->type != MLRT__JSON_STRING || !p->len || strstr(p->str, "..") || p->str[0] == '/') continue;
            for (size_t k = file ? WEIGHT_NAMES : 0; k < sizeof KNOWN / sizeof *KNOWN; k++) folder_add(d, dir, p->str, KNOWN[k]);
        }
        mlrt__json_free(&doc);
    }
    return 0;
}

static mlrt_model *load_folder(const char *path, mlrt_error *e) {
    folder d;
    if (read_folder(path, &d)) return NULL;
    mlrt_model *m = NULL;
    if (!d.n) fprintf(stderr, "mlrt: %s: no model files in this folder (model.safetensors or model.apr, config.json, ...)\n", path);
    else {
        const mlrt_load_options take = {.take_files = 1}; /* (the model keeps the weights file's block) */
        m = mlrt_load_files(d.f, d.n, &take, e);
        for (size_t i = 0; i < d.n; i++) d.f[i].bytes = NULL; /* (taken, freed or kept) */
        if (!m) fail(e);
    }
    folder_free(&d);
    return m;
}

static int cmd_inspect_folder(const char *path) {
    mlrt_error e;
    mlrt_model *m = load_folder(path, &e);
    if (!m) return 1;
    puts(mlrt_model_info_json(m));
    mlrt_free(m);
    return 0;
}

/* The embedding width, from the model's info. */
static size_t embedding_dim(const mlrt_model *m) {
    const char *info = mlrt_model_info_json(m);
    mlrt__json_doc doc;
    mlrt_error e;
    uint64_t dim = 0;
    if (mlrt__json_parse((const uint8_t *)info, strlen(info), "info", &doc, &e)) return 0;
    const mlrt__json *v = mlrt__json_get(doc.root, "dim");
    if (!v || !mlrt__json_u64(v, &dim)) dim = 0;
    mlrt__json_free(&doc);
    return (size_t)dim;
}

/* Writes n x dim floats as json, f32 (little-endian) or npy (format 1.0, '<f4', C order). */
static int write_embeddings(FILE *o, const float *v, size_t n, size_t dim, const char *format) {
    if (!strcmp(format, "json")) {
        putc('[', o);
        for (size_t r = 0; r < n; r++) {
            fputs(r ? ",[" : "[", o);
            for (size_t k = 0; k < dim; k++) fprintf(o, k ? ",%.9g" : "%.9g", (double)v[r * dim + k]);
            putc(']', o);
        }
        fputs("]\n", o);
        return ferror(o);
    }
    if (!strcmp(format, "npy")) {
        char dict[128];
        int len = snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': (%zu, %zu), }", n, dim);
        size_t pad = (64 - (10 + (size_t)len + 1) % 64) % 64, hlen = (size_t)len + pad + 1;
        uint8_t head[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (uint8_t)hlen, (uint8_t)(hlen >> 8)};
        fwrite(head, 1, 10, o);
        fputs(dict, o);
        for (size_t i = 0; i < pad; i++) putc(' ', o);
        putc('\n', o);
    }
    for (size_t i = 0; i < n * dim; i++) { /* little-endian whatever the host */
        uint32_t u;
        memcpy(&u, &v[i], 4);
        uint8_t b[4] = {(uint8_t)u, (uint8_t)(u >> 8), (uint8_t)(u >> 16), (uint8_t)(u >> 24)};
        fwrite(b, 1, 4, o);
    }
    return ferror(o);
}

/* The texts of --text (one) or of --input FILE (one per line, a final \r dropped): one buffer, ends. */
static char *embed_texts(const char *text, const char *input, size_t **ends, size_t *n) {
    size_t len;
    char *all = text ? NULL : (char *)read_file(input, &len);
    if (text) {
        len = strlen(text);
        if ((all = malloc(len + 1))) memcpy(all, text, len);
    }
    if (!all) return NULL;
    size_t lines = 1;
    for (size_t i = 0; i < len; i++) lines += all[i] == '\n';
    *n = 0;
    if (!(*ends = malloc(lines * sizeof **ends))) { free(all); return NULL; }
    size_t w = 0;
    for (size_t at = 0; at < len || (text && *n == 0);) { /* (--text "": one empty text) */
        const char *nl = text ? NULL : memchr(all + at, '\n', len - at);
        size_t end = nl ? (size_t)(nl - all) : len, k = end - at;
        if (!text && k && all[at + k - 1] == '\r') k--;
        memmove(all + w, all + at, k);
        w += k;
        (*ends)[(*n)++] = w;
        at = end + 1;
    }
    return all;
}

static int cmd_embed(int argc, char **argv) {
    const char *model = NULL, *text = NULL, *input = NULL, *format = "json", *out = NULL, *prompt = NULL;
    for (int i = 2; i < argc; i++) {
        const char **opt = !strcmp(argv[i], "--text") ? &text : !strcmp(argv[i], "--input") ? &input
                         : !strcmp(argv[i], "--output") ? &format : !strcmp(argv[i], "--out") ? &out
                         : !strcmp(argv[i], "--prompt") ? &prompt : NULL;
        if (opt && i + 1 < argc && (opt == &format || !*opt)) *opt = argv[++i];
        else if (!opt && argv[i][0] != '-' && !model) model = argv[i];
        else return fprintf(stderr, "mlrt: embed: unexpected argument '%s'\n", argv[i]), 2;
    }
    if (!model || !text == !input) return fprintf(stderr, "mlrt: embed: give MODEL and --text TEXT or --input FILE (one text per line)\n"), 2;
    if (strcmp(format, "json") && strcmp(format, "f32") && strcmp(format, "npy"))
        return fprintf(stderr, "mlrt: embed: --output must be json, f32 or npy, got '%s'\n", format), 2;
    mlrt_error e;
    mlrt_model *m = load_folder(model, &e);
    if (!m) return 1;
    size_t *ends = NULL, n = 0, dim = embedding_dim(m);
    char *texts = embed_texts(text, input, &ends, &n);
    float *v = texts && dim ? malloc((n ? n : 1) * dim * sizeof *v) : NULL;
    int rc = 1;
    if (!dim) fprintf(stderr, "mlrt: embed: %s holds a %s, not a sentence encoder\n", model, mlrt_kind_name(mlrt_model_kind(m)));
    else if (!v) { if (texts) fprintf(stderr, "mlrt: out of memory\n"); } /* (else read_file said why) */
    else if (mlrt_embed_prompt(m, prompt, prompt ? strlen(prompt) : 0, texts, ends, n, v, &e)) fail(&e);
    else {
        FILE *o = out ? fopen(out, "wb") : stdout;
        if (!o) perror(out);
        else if (write_embeddings(o, v, n, dim, format) | (out ? fclose(o) : fflush(o))) fprintf(stderr, "mlrt: embed: writing %s failed\n", out ? out : "stdout");
        else rc = 0;
    }
    free(v), free(texts), free(ends);
    mlrt_free(m);
    return rc;
}
/* ---- end of sentence encoders ---- */

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "inspect") == 0) return cmd_inspect(argv[2]);
    if (argc == 4 && strcmp(argv[1], "predict") == 0) return cmd_predict(argv[2], argv[3], false);
    if (argc == 4 && strcmp(argv[1], "labels") == 0) return cmd_predict(argv[2], argv[3], true);
    if (argc == 4 && strcmp(argv[1], "tokenize") == 0 && strcmp(argv[3], "--input") != 0) return cmd_tokenize(argv[2], argv[3], NULL);
    if (argc == 5 && strcmp(argv[1], "tokenize") == 0 && strcmp(argv[3], "--input") == 0) return cmd_tokenize(argv[2], NULL, argv[4]);
    if (argc >= 3 && strcmp(argv[1], "embed") == 0) return cmd_embed(argc, argv);
    fprintf(stderr, "usage: mlrt inspect FILE | DIR\n       mlrt predict FILE INPUT   (INPUT: raw f32 LE or a JSON array)\n"
                    "       mlrt labels FILE INPUT\n       mlrt tokenize TOKENIZER TEXT | --input FILE\n"
                    "       mlrt embed MODEL --text TEXT | --input FILE [--output json|f32|npy] [--out FILE]\n");
    return 2;
}
