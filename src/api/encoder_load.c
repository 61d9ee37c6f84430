/* api/encoder_load.c — mlrt_load_files: a model folder's files (by name) -> formats/bert.c's
 * description of the encoder + the tokenizer of its files -> model/encoder.c's model. One file that
 * is no encoder loads as mlrt_load_from_bytes_ex loads it. And mlrt_warm_up, which a host runs before
 * it reads an encoder's files. */
#include "api.h"
#include <stdlib.h>
#include <string.h>

/* The tokenizer of the Transformer's folder dir ("" or "0_Transformer/": tokenizer.json, or vocab.txt and
 * tokenizer_config.json), or NULL (and no error) when it has none. */
static mlrt_tokenizer *tokenizer(const mlrt_file *files, size_t n, const char *dir, mlrt_error *err, bool *failed) {
    const size_t dl = strlen(dir);
    mlrt_file *in = malloc(n * sizeof *in); /* the folder's files, named inside it */
    size_t k = 0;
    bool any = false;
    for (size_t i = 0; in && i < n; i++)
        if (!strncmp(files[i].name, dir, dl)) {
            in[k] = files[i], in[k].name += dl;
            any |= !strcmp(in[k].name, "tokenizer.json") || !strcmp(in[k].name, "vocab.txt"), k++;
        }
    mlrt_tokenizer *t = any ? mlrt_tokenizer_load(in, k, err) : NULL;
    *failed = !in || (any && !t);
    if (!in) mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "load_files: out of memory");
    free(in);
    return t;
}

static mlrt_model *load_files(const mlrt_file *files, size_t n, const mlrt_load_options *options, mlrt__block *blocks,
                              mlrt_error *err) {
    for (size_t i = 0; i < n; i++)
        if (!files[i].name || (!files[i].bytes && files[i].len)) {
            mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "load_files: file %zu %s", i, files[i].name ? "has no bytes" : "has no name");
            return NULL;
        }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < i; j++)
            if (!strcmp(files[i].name, files[j].name)) {
                mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "load_files: %s is given twice", files[i].name);
                return NULL;
            }
    mlrt__tensorset ts;
    mlrt__enc_desc d;
    bool bert, failed = false;
    mlrt_status st = mlrt__read_encoder(files, n, &ts, &d, &bert, err);
    if (st && !bert && n == 1 && st != MLRT_ERR_OUT_OF_MEMORY && st != MLRT_ERR_UNSUPPORTED) { /* one file of another kind */
        mlrt__tensorset_free(&ts);
        mlrt_load_options o = options ? *options : (mlrt_load_options){0};
        o.take_files = 0;
        return mlrt_load_from_bytes_ex(files[0].bytes, files[0].len, &o, err);
    }
    if (!st && options && options->expect)
        st = mlrt__fail(err, MLRT_ERR_MODEL_TYPE_MISMATCH, "load_files: expected %s but the files hold a BERT encoder", options->expect);
    mlrt_tokenizer *tok = st ? NULL : tokenizer(files, n, d.dir, err, &failed);
    mlrt_model *m = st || failed ? NULL : mlrt__build_encoder(&d, tok, blocks, blocks ? n : 0, err);
    mlrt__enc_desc_free(&d);
    mlrt__tensorset_free(&ts);
    return m;
}

mlrt_model *mlrt_load_files(const mlrt_file *files, size_t n, const mlrt_load_options *options, mlrt_error *err) {
    mlrt_error local;
    if (!err) err = &local;
    if (!files || !n) {
        mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "load_files: %s", files ? "no files" : "files is NULL");
        return NULL;
    }
    mlrt__block *blocks = NULL;
    if (options && options->take_files && !(blocks = malloc(n * sizeof *blocks))) {
        for (size_t i = 0; i < n; i++) free((void *)(uintptr_t)files[i].bytes);
        mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "load_files: out of memory");
        return NULL;
    }
    for (size_t i = 0; blocks && i < n; i++) blocks[i] = (mlrt__block){(uint8_t *)(uintptr_t)files[i].bytes, files[i].len};
    mlrt_model *m = load_files(files, n, options, blocks, err);
    for (size_t i = 0; blocks && i < n; i++) free(blocks[i].bytes); /* what the model did not keep */
    free(blocks);
    return m;
}

mlrt_status mlrt_warm_up(mlrt_error *err) {
    mlrt_error local;
    if (!err) err = &local;
    uint8_t *b = calloc(1, 1 << 16); /* .apr's checksum, which runs over the whole file in one call */
    if (!b) return mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "warm_up: out of memory");
    for (int k = 0; k < 4; k++) b[k] = (uint8_t)mlrt__crc32(b, 1 << 16); /* (kept, so the calls stay) */
    free(b);
    return mlrt__encoder_warm_up(err);
}
