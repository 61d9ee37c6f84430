/* formats/vocab_txt.c — a BERT vocab.txt (one token per line, the line number is the id) and the
 * optional tokenizer_config.json beside it, read strictly into the tokenizer description that
 * transformers' BertTokenizerFast builds from them: BertNormalizer(clean_text, chinese chars =
 * tokenize_chinese_chars, strip_accents, lowercase = do_lower_case), BertPreTokenizer,
 * WordPiece("##", 100), "[CLS] A [SEP]" / "[CLS] A [SEP] B:1 [SEP]:1", the WordPiece decoder, the
 * five special tokens as added tokens, no truncation or padding.
 *
 * vocab.txt: UTF-8 (else INVALID_UTF8 with the byte offset); lines end in \n (a \r before it and
 * trailing spaces are dropped, as Rust's trim_end does); an empty line or a token twice is refused
 * (BAD_HEADER / DUPLICATE_KEY, naming both lines); the special tokens must be in it.
 * tokenizer_config.json: the keys used are type-checked (do_lower_case, strip_accents,
 * tokenize_chinese_chars: booleans, strip_accents also null; model_max_length: a number;
 * unk/sep/pad/cls/mask_token: a string or {"content": string}; tokenizer_class: BertTokenizer or
 * BertTokenizerFast, others UNSUPPORTED); the others are ignored. */
#include "formats.h"
#include <stdlib.h>
#include <string.h>

#define VOCAB "vocab.txt"
#define CONFIG "tokenizer_config.json"

/* Rust's str::trim_end: drops trailing White_Space. Returns the new length. */
static size_t trim_end(const uint8_t *s, size_t n) {
    for (;;) {
        size_t k = n;
        while (k > 0 && (s[k - 1] & 0xc0) == 0x80) k--;
        if (k == 0) return n;
        size_t i = k - 1;
        uint32_t cp = mlrt__utf8_next(s, &i);
        if (!mlrt__uni_is_white_space(cp)) return n;
        n = k - 1;
    }
}

static mlrt_status read_vocab(const uint8_t *b, size_t n, mlrt__tok_desc *d, mlrt_error *err) {
    size_t bad = mlrt__utf8_invalid_at(b, n);
    if (bad < n) return mlrt__fail_in(err, MLRT_ERR_INVALID_UTF8, VOCAB, "not valid UTF-8 at byte %zu", bad);
    size_t lines = 0;
    for (size_t i = 0; i < n; i++) lines += b[i] == '\n';
    if (n && b[n - 1] != '\n') lines++;
    if (lines == 0) return mlrt__fail_in(err, MLRT_ERR_BAD_HEADER, VOCAB, "the file is empty");
    if (lines > MLRT__TOK_MAX_VOCAB)
        return mlrt__fail_in(err, MLRT_ERR_BAD_HEADER, VOCAB, "%zu tokens, more than the limit %u", lines, MLRT__TOK_MAX_VOCAB);
    d->pool = malloc(n + 1);
    d->off = malloc((lines + 1) * sizeof *d->off);
    if (!d->pool || !d->off) return mlrt__fail_in(err, MLRT_ERR_OUT_OF_MEMORY, VOCAB, "out of memory for %zu tokens", lines);
    size_t at = 0, start = 0;
    uint32_t id = 0;
    while (start < n) {
        const uint8_t *nl = memchr(b + start, '\n', n - start);
        size_t end = nl ? (size_t)(nl - b) : n, len = trim_end(b + start, end - start);
        if (len == 0) return mlrt__fail_in(err, MLRT_ERR_BAD_HEADER, VOCAB, "line %u is empty", id + 1);
        if (len > MLRT__TOK_MAX_TOKEN)
            return mlrt__fail_in(err, MLRT_ERR_BAD_HEADER, VOCAB, "line %u is %zu bytes long, more than the limit %u", id + 1, len,
                              MLRT__TOK_MAX_TOKEN);
        d->off[id++] = (uint32_t)at;
        memcpy(d->pool + at, b + start, len);
        d->pool[at + len] = 0;
        at += len + 1;
        start = end + 1;
    }
    d->off[id] = (uint32_t)at;
    d->pool_len = at;
    d->n_vocab = d->n_ids = id;
    long x, y;
    if (!mlrt__tok_desc_check(d, &x, &y)) return mlrt__fail_in(err, MLRT_ERR_OUT_OF_MEMORY, VOCAB, "out of memory");
    if (x >= 0)
        return mlrt__fail_in(err, MLRT_ERR_DUPLICATE_KEY, VOCAB, "line %ld repeats line %ld (\"%s\")", y + 1, x + 1,
                          d->pool + d->off[x]);
    return MLRT_OK;
}

/* A special token's name from the config: a string or {"content": string}; def when absent. */
static mlrt_status special_name(const mlrt__json *cfg, const char *key, const char *def, const char **out, mlrt_error *err) {
    const mlrt__json *v = mlrt__json_get(cfg, key);
    *out = def;
    if (!v || v->type == MLRT__JSON_NULL) return MLRT_OK;
    if (v->type == MLRT__JSON_OBJECT) v = mlrt__json_get(v, "content");
    if (!v || v->type != MLRT__JSON_STRING || v->len == 0 || v->len > MLRT__TOK_MAX_TOKEN)
        return mlrt__fail_in(err, MLRT_ERR_BAD_HEADER, CONFIG, "%s: expected a token (a string, or an object with \"content\")", key);
    *out = v->str;
    return MLRT_OK;
}

static mlrt_status config_bool(const mlrt__json *cfg, const char *key, bool nullable, bool def, bool *out, bool *given,
                               mlrt_error *err) {
    const mlrt__json *v = mlrt__json_get(cfg, key);
    *out = def;
    if (given) *given = false;
    if (!v || (nullable && v->type == MLRT__JSON_NULL)) return MLRT_OK;
    if (v->type != MLRT__JSON_TRUE && v->type != MLRT__JSON_FALSE)
        return mlrt__fail_in(err, MLRT_ERR_BAD_HEADER, CONFIG, "%s: expected a boolean%s, got %s", key, nullable ? " or null" : "",
                          mlrt__json_type_name(v->type));
    *out = v->type == MLRT__JSON_TRUE;
    if (given) *given = true;
    return MLRT_OK;
}

/* Names the config gives; pointers into the parsed document. */
typedef struct config {
    const char *unk, *sep, *pad, *cls, *mask;
} config;

static mlrt_status read_config(const mlrt__json *cfg, mlrt__tok_desc *d, config *names, mlrt_error *err) {
    if (cfg->type != MLRT__JSON_OBJECT)
        return mlrt__fail_in(err, MLRT_ERR_BAD_HEADER, CONFIG, "expected an object, got %s", mlrt__json_type_name(cfg->type));
    bool strip_given;
    mlrt_status st;
    if ((st = config_bool(cfg, "do_lower_case", false, true, &d->lowercase, NULL, err)) ||
        (st = config_bool(cfg, "tokenize_chinese_chars", false, true, &d->chinese_chars, NULL, err)) ||
        (st = config_bool(cfg, "strip_accents", true, false, &d->strip_accents, &strip_given, err)))
        return st;
    if (!strip_given) d->strip_accents = d->lowercase;
    const mlrt__json *cls = mlrt__json_get(cfg, "tokenizer_class");
    if (cls && cls->type != MLRT__JSON_STRING)
        return mlrt__fail_in(err, MLRT_ERR_BAD_HEADER, CONFIG, "tokenizer_class: expected a string, got %s", mlrt__json_type_name(cls->type));
    if (cls && strcmp(cls->str, "BertTokenizer") != 0 && strcmp(cls->str, "BertTokenizerFast") != 0)
        return mlrt__fail_in(err, MLRT_ERR_UNSUPPORTED, CONFIG, "tokenizer_class: '%s' (mlrt reads BertTokenizer with vocab.txt)", cls->str);
    const mlrt__json *max = mlrt__json_get(cfg, "model_max_length");
    if (max) {
        uint64_t x;
        if (max->type != MLRT__JSON_NUMBER)
            return mlrt__fail_in(err, MLRT_ERR_BAD_HEADER, CONFIG, "model_max_length: expected a number, got %s", mlrt__json_type_name(max->type));
        /* "no limit" is written as 1e30 (a float): 0 */
        d->model_max_length = mlrt__json_u64(max, &x) && x <= MLRT__TOK_MAX_LENGTH ? (uint32_t)x : 0;
    }
    if ((st = special_name(cfg, "unk_token", "[UNK]", &names->unk, err)) || (st = special_name(cfg, "sep_token", "[SEP]", &names->sep, err)) ||
        (st = special_name(cfg, "pad_token", "[PAD]", &names->pad, err)) || (st = special_name(cfg, "cls_token", "[CLS]", &names->cls, err)) ||
        (st = special_name(cfg, "mask_token", "[MASK]", &names->mask, err)))
        return st;
    return MLRT_OK;
}

mlrt_status mlrt__read_vocab_txt(const uint8_t *vocab, size_t n, const uint8_t *cfg_bytes, size_t cfg_len, mlrt__tok_desc *d,
                                 mlrt_error *err) {
    memset(d, 0, sizeof *d);
    mlrt__json_doc doc = {0};
    config names = {"[UNK]", "[SEP]", "[PAD]", "[CLS]", "[MASK]"};
    d->lowercase = d->chinese_chars = d->strip_accents = true;
    mlrt_status st = read_vocab(vocab, n, d, err);
    if (!st && cfg_bytes) {
        size_t bad = mlrt__utf8_invalid_at(cfg_bytes, cfg_len);
        if (bad < cfg_len) st = mlrt__fail_in(err, MLRT_ERR_INVALID_UTF8, CONFIG, "not valid UTF-8 at byte %zu", bad);
        else if (!(st = mlrt__json_parse(cfg_bytes, cfg_len, CONFIG, &doc, err))) st = read_config(doc.root, d, &names, err);
    }
    /* the five special tokens, as BertTokenizerFast adds them, in this order */
    const char *const specials[5] = {names.pad, names.unk, names.cls, names.sep, names.mask};
    static const char *const keys[5] = {"pad_token", "unk_token", "cls_token", "sep_token", "mask_token"};
    long ids[5];
    if (!st) d->added = calloc(5, sizeof *d->added);
    if (!st && !d->added) st = mlrt__fail_in(err, MLRT_ERR_OUT_OF_MEMORY, VOCAB, "out of memory");
    for (int k = 0; k < 5 && !st; k++) {
        size_t len = strlen(specials[k]);
        ids[k] = mlrt__tok_desc_find(d, specials[k], len);
        if (ids[k] < 0) {
            st = mlrt__fail_in(err, MLRT_ERR_BAD_HEADER, VOCAB, "the %s \"%s\" is not in the vocabulary", keys[k], specials[k]);
            break;
        }
        bool again = false;
        for (int j = 0; j < k; j++) again |= ids[j] == ids[k];
        if (again) continue;
        mlrt__tok_added *a = &d->added[d->n_added];
        if (!(a->content = malloc(len + 1))) { st = mlrt__fail_in(err, MLRT_ERR_OUT_OF_MEMORY, VOCAB, "out of memory"); break; }
        memcpy(a->content, specials[k], len + 1);
        a->len = (uint32_t)len, a->id = (uint32_t)ids[k], a->special = true;
        d->n_added++;
    }
    if (!st) {
        d->specials = calloc(2, sizeof *d->specials);
        if (!d->specials || !(d->specials[0].name = malloc(strlen(names.cls) + 1)) || !(d->specials[1].name = malloc(strlen(names.sep) + 1))) {
            st = mlrt__fail_in(err, MLRT_ERR_OUT_OF_MEMORY, VOCAB, "out of memory");
        } else {
            d->n_specials = 2;
            strcpy(d->specials[0].name, names.cls);
            strcpy(d->specials[1].name, names.sep);
            d->specials[0].n_ids = d->specials[1].n_ids = 1;
            d->specials[0].ids[0] = (uint32_t)ids[2], d->specials[1].ids[0] = (uint32_t)ids[3];
            static const mlrt__tok_piece single[3] = {{0, 0, 0}, {-1, 0, 0}, {1, 0, 0}};
            static const mlrt__tok_piece pair[5] = {{0, 0, 0}, {-1, 0, 0}, {1, 0, 0}, {-1, 1, 1}, {1, 0, 1}};
            memcpy(d->single, single, sizeof single);
            memcpy(d->pair, pair, sizeof pair);
            d->n_single = 3, d->n_pair = 5, d->added_single = 2, d->added_pair = 3;
            d->post_process = true;
            d->unk_id = (uint32_t)ids[1];
            d->pad_id = (uint32_t)ids[0];
            memcpy(d->prefix, "##", 3);
            d->prefix_len = 2;
            d->max_chars_per_word = 100;
            d->normalize = d->clean_text = d->pre_tokenize = true;
            d->decode_wordpiece = d->decode_cleanup = true;
            memcpy(d->decode_prefix, "##", 3);
            d->decode_prefix_len = 2;
        }
    }
    mlrt__json_free(&doc);
    if (st) mlrt__tok_desc_free(d);
    d->source = VOCAB;
    return st;
}
