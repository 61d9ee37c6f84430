/* api/tokenizer_load.c — mlrt_tokenizer_load: a model folder's files (by name) -> the format's
 * reader -> a tokenizer description -> the tokenizer the model layer builds from it. */
#include "api.h"
#include <stdlib.h>
#include <string.h>

/* The file named name, or NULL; *twice set when two have that name. */
static const mlrt_file *find(const mlrt_file *files, size_t n, const char *name, const char **twice) {
    const mlrt_file *f = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!files[i].name || strcmp(files[i].name, name) != 0) continue;
        if (f) *twice = name;
        f = f ? f : &files[i];
    }
    return f;
}

mlrt_tokenizer *mlrt_tokenizer_load(const mlrt_file *files, size_t n, mlrt_error *err) {
    if (!files && n) {
        mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "tokenizer_load: files is NULL");
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        if (!files[i].bytes && files[i].len) {
            mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "tokenizer_load: file %zu (%s) has no bytes", i,
                       files[i].name ? files[i].name : "unnamed");
            return NULL;
        }
    }
    const char *twice = NULL;
    const mlrt_file *json = find(files, n, "tokenizer.json", &twice), *vocab = find(files, n, "vocab.txt", &twice),
                    *config = find(files, n, "tokenizer_config.json", &twice);
    if (twice) {
        mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "tokenizer_load: %s given twice", twice);
        return NULL;
    }
    static const uint8_t none[1] = {0};
    mlrt__tok_desc d;
    mlrt_status st;
    /* The parse's room claimed at once (about 3.3 bytes per byte of the file, measured on bert-base's
     * tokenizer.json), then freed for it: the wasm heap grows by what each allocation lacks, and each
     * memory.grow costs a millisecond or more in V8 (25 grows and ~40 ms of a 77 ms load without it). */
    const mlrt_file *main = json ? json : vocab;
    void *volatile room = main && main->len < SIZE_MAX / 4 ? malloc(3 * main->len + main->len / 2 + 65536) : NULL; /* (kept) */
    free(room);
    if (json)
        st = mlrt__read_tokenizer_json(json->bytes ? json->bytes : none, json->len, &d, err);
    else if (vocab)
        st = mlrt__read_vocab_txt(vocab->bytes ? vocab->bytes : none, vocab->len,
                                  config ? (config->bytes ? config->bytes : none) : NULL, config ? config->len : 0, &d, err);
    else
        st = mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT,
                        "tokenizer_load: no tokenizer.json or vocab.txt among the %zu files given", n);
    if (st) return NULL;
    return mlrt__tokenizer_build(&d, err);
}
