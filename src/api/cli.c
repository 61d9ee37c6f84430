/* api/cli.c — the mlrt command line (built for WASI as wasm/mlrt-wasi.wasm, and natively).
 *
 *   mlrt inspect FILE          format, model kind, tensors and metadata as JSON
 *   mlrt predict FILE INPUT    INPUT: raw little-endian f32 (n x inputs values) or a JSON
 *                              array (flat, or of rows); prints the outputs as JSON
 *   mlrt labels FILE INPUT     the same inputs; prints one label per row as a JSON array (a
 *                              classifier's stored class label, KMeans' nearest centroid)
 *   mlrt tokenize TOK TEXT     TOK: a tokenizer.json, a vocab.txt or a model folder; prints
 *   mlrt tokenize TOK --input FILE     {"ids":[...],"tokens":[...]} per text (FILE: one per line)
 *   mlrt embed MODEL TEXT      MODEL: an encoder's folder, or an .apr with its folder's other files
 *   mlrt embed MODEL --input FILE      beside it; prints each text's embedding as a JSON array
 * Exit status: 0 ok, 1 the model or input was refused (message on stderr), 2 usage. */
#include "../codecs/codecs.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static int cmd_inspect(const char *path) {
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
/* ---- sentence encoders: embed (issue 21) ---- */

static int embed_line(mlrt_model *m, const char *s, size_t n, float *v, size_t dim) {
    mlrt_error e;
    if (mlrt_embed(m, s, &n, 1, v, &e)) return fail(&e);
    print_floats(v, dim);
    putchar('\n');
    return 0;
}

static int cmd_embed(const char *model, const char *text, const char *input) {
    static const char *const names[] = {"model.safetensors", "config.json", "tokenizer.json", "vocab.txt", "tokenizer_config.json",
                                        "modules.json", "1_Pooling/config.json", "sentence_bert_config.json"};
    enum { N = sizeof names / sizeof *names };
    mlrt_file files[N + 1];
    uint8_t *bytes[N + 1] = {0};
    size_t n = 0, len, at = strlen(model);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", model);
    bool apr = at > 4 && !strcmp(model + at - 4, ".apr");
    if (apr) { /* its folder's other files */
        char *slash = strrchr(dir, '/');
        if (slash) *slash = 0;
        else snprintf(dir, sizeof dir, ".");
        if (!(bytes[n] = read_file(model, &len))) return 1;
        files[n++] = (mlrt_file){"model.apr", bytes[n - 1], len};
    }
    for (size_t k = apr; k < N; k++)
        if ((bytes[n] = read_in(dir, names[k], &len))) files[n] = (mlrt_file){names[k], bytes[n], len}, n++;
    mlrt_error e;
    mlrt_model *m = mlrt_load_files(files, n, NULL, &e);
    for (size_t k = 0; k < n; k++) free(bytes[k]);
    if (!m) return fail(&e);
    size_t dim = mlrt_output_count(m) ? (size_t)mlrt_output(m, 0)->dims[1] : 0;
    float *v = malloc((dim ? dim : 1) * sizeof *v);
    int rc = !v || mlrt_model_kind(m) != MLRT_KIND_ENCODER;
    if (rc) fprintf(stderr, "mlrt: %s: not an encoder\n", model);
    else if (text) rc = embed_line(m, text, strlen(text), v, dim);
    else {
        uint8_t *all = read_file(input, &len);
        rc = !all;
        for (size_t i = 0; all && i < len && !rc;) {
            const uint8_t *nl = memchr(all + i, '\n', len - i);
            size_t end = nl ? (size_t)(nl - all) : len, k = end - i;
            if (k && all[i + k - 1] == '\r') k--;
            rc = embed_line(m, (const char *)all + i, k, v, dim);
            i = end + 1;
        }
        free(all);
    }
    free(v);
    mlrt_free(m);
    return rc;
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "inspect") == 0) return cmd_inspect(argv[2]);
    if (argc == 4 && strcmp(argv[1], "predict") == 0) return cmd_predict(argv[2], argv[3], false);
    if (argc == 4 && strcmp(argv[1], "labels") == 0) return cmd_predict(argv[2], argv[3], true);
    if (argc == 4 && strcmp(argv[1], "tokenize") == 0 && strcmp(argv[3], "--input") != 0) return cmd_tokenize(argv[2], argv[3], NULL);
    if (argc == 5 && strcmp(argv[1], "tokenize") == 0 && strcmp(argv[3], "--input") == 0) return cmd_tokenize(argv[2], NULL, argv[4]);
    if (argc == 4 && strcmp(argv[1], "embed") == 0 && strcmp(argv[3], "--input") != 0) return cmd_embed(argv[2], argv[3], NULL);
    if (argc == 5 && strcmp(argv[1], "embed") == 0 && strcmp(argv[3], "--input") == 0) return cmd_embed(argv[2], NULL, argv[4]);
    fprintf(stderr, "usage: mlrt inspect FILE\n       mlrt predict FILE INPUT   (INPUT: raw f32 LE or a JSON array)\n"
                    "       mlrt labels FILE INPUT\n       mlrt tokenize TOKENIZER TEXT | --input FILE\n"
                    "       mlrt embed MODEL TEXT | --input FILE   (MODEL: an encoder's folder, or an .apr beside its files)\n");
    return 2;
}
