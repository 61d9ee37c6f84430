/* model/tokenizer_info.c — the other ways to use a tokenizer: decoding ids back to text (the
 * WordPiece decoder of Hugging Face's Rust `tokenizers`, decoders/wordpiece.rs), the normalizer
 * alone, an id's token, and the description as JSON. */
#include "model.h"
#include <stdlib.h>
#include <string.h>

/* As Rust: an added token matched in normalized text is its normalized form (the vocabulary's own
 * tokens otherwise). */
const char *mlrt_tokenizer_token(const mlrt_tokenizer *t, int32_t id) {
    if (!t || id < 0 || (uint32_t)id >= t->d.n_ids) return NULL;
    for (uint32_t i = 0; i < t->d.n_added; i++)
        if (t->d.added[i].id == (uint32_t)id && (t->d.added[i].normalized || (uint32_t)id >= t->d.n_vocab))
            return t->d.added[i].normalized ? t->d.added[i].norm : t->d.added[i].content;
    return (uint32_t)id < t->d.n_vocab ? t->d.pool + t->d.off[id] : NULL;
}

/* As Rust: a token is special when its text is a special added token's content (so a special token
 * matched in normalized text, whose text is its normalized form, is skipped only when that is the same). */
bool mlrt__tok_is_special(const mlrt_tokenizer *t, int32_t id) {
    const char *s = mlrt_tokenizer_token(t, id);
    for (uint32_t i = 0; s && i < t->d.n_added; i++)
        if (t->d.added[i].special && !strcmp(t->d.added[i].content, s)) return true;
    return false;
}

/* Appends s [n] to b with every `from` replaced by `to`, left to right. */
static void replace_all(mlrt__buf *b, const char *s, size_t n, const char *from, const char *to) {
    size_t f = strlen(from), run = 0;
    for (size_t i = 0; i + f <= n;) {
        if (memcmp(s + i, from, f) == 0) {
            mlrt__buf_append(b, s + run, i - run);
            mlrt__buf_puts(b, to);
            i += f;
            run = i;
        } else {
            i++;
        }
    }
    mlrt__buf_append(b, s + run, n - run);
}

/* The WordPiece decoder's cleanup of one token, replacement after replacement. */
static void cleanup(mlrt__buf *out, const char *tok, size_t n) {
    static const char *const rules[][2] = {{" .", "."}, {" ?", "?"}, {" !", "!"}, {" ,", ","}, {" ' ", "'"}, {" n't", "n't"},
                                           {" 'm", "'m"}, {" do not", " don't"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
    mlrt__buf a = {0}, b = {0};
    mlrt__buf_append(&a, tok, n);
    for (size_t r = 0; r < sizeof rules / sizeof *rules && !a.oom; r++) {
        b.len = 0;
        replace_all(&b, a.data, a.len, rules[r][0], rules[r][1]);
        mlrt__buf t = a; a = b; b = t;
    }
    if (a.oom || b.oom) out->oom = true;
    else mlrt__buf_append(out, a.data, a.len);
    free(a.data);
    free(b.data);
}

char *mlrt_tokenizer_decode(const mlrt_tokenizer *t, const int32_t *ids, size_t n, int skip_special, size_t *out_len,
                            mlrt_error *err) {
    if (!t || (!ids && n)) {
        mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "tokenizer_decode: NULL %s", t ? "ids" : "tokenizer");
        return NULL;
    }
    const mlrt__tok_desc *d = &t->d;
    mlrt__buf out = {0}, tok = {0};
    mlrt__buf_append(&out, "", 0);
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        const char *s = mlrt_tokenizer_token(t, ids[i]);
        if (!s) {
            free(out.data);
            free(tok.data);
            mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "tokenizer_decode: ids[%zu] = %d is no token (ids are 0..%u)", i, (int)ids[i],
                       d->n_ids - 1);
            return NULL;
        }
        if (skip_special && mlrt__tok_is_special(t, ids[i])) continue;
        size_t len = strlen(s);
        tok.len = 0;
        if (!d->decode_wordpiece) {
            if (kept) mlrt__buf_append(&out, " ", 1);
            mlrt__buf_append(&out, s, len);
        } else {
            if (kept && len >= d->decode_prefix_len && memcmp(s, d->decode_prefix, d->decode_prefix_len) == 0) {
                mlrt__buf_append(&tok, s + d->decode_prefix_len, len - d->decode_prefix_len);
            } else {
                if (kept) mlrt__buf_append(&tok, " ", 1);
                mlrt__buf_append(&tok, s, len);
            }
            if (d->decode_cleanup) cleanup(&out, tok.data ? tok.data : "", tok.len);
            else mlrt__buf_append(&out, tok.data ? tok.data : "", tok.len);
            out.oom |= tok.oom;
        }
        kept++;
    }
    free(tok.data);
    if (out.oom) {
        free(out.data);
        mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "tokenizer_decode: out of memory");
        return NULL;
    }
    if (out_len) *out_len = out.len;
    return out.data;
}

char *mlrt_tokenizer_normalize(mlrt_tokenizer *t, const char *text, size_t len, size_t *out_len, mlrt_error *err) {
    if (!t || (!text && len)) {
        mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "tokenizer_normalize: NULL %s", t ? "text" : "tokenizer");
        return NULL;
    }
    size_t bad = text ? mlrt__utf8_invalid_at((const uint8_t *)text, len) : len;
    if (bad < len) {
        mlrt__fail(err, MLRT_ERR_INVALID_UTF8, "tokenizer: text is not valid UTF-8 at byte %zu", bad);
        return NULL;
    }
    t->norm.len = 0;
    char *s = NULL;
    if (mlrt__tok_normalize(t, (const uint8_t *)(text ? text : ""), len) && (s = malloc(t->norm.len + 1))) {
        if (t->norm.len) memcpy(s, t->norm.p, t->norm.len);
        s[t->norm.len] = 0;
        if (out_len) *out_len = t->norm.len;
    }
    if (!s) mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "tokenizer_normalize: out of memory");
    return s;
}

/* ---------------------------------------------------------------- info */

static void json_token(mlrt__buf *b, const char *key, const char *s) {
    mlrt__buf_printf(b, ",\"%s\":", key);
    mlrt__buf_json_string(b, s, strlen(s));
}

char *mlrt__tok_info(const mlrt_tokenizer *t) {
    const mlrt__tok_desc *d = &t->d;
    mlrt__buf b = {0};
    mlrt__buf_printf(&b, "{\"source\":\"%s\",\"model\":\"WordPiece\",\"vocabSize\":%u,\"idCount\":%u", d->source, d->n_vocab, d->n_ids);
    json_token(&b, "unkToken", d->pool + d->off[d->unk_id]);
    json_token(&b, "continuingSubwordPrefix", d->prefix);
    mlrt__buf_printf(&b, ",\"maxInputCharsPerWord\":%u,\"normalizer\":", d->max_chars_per_word);
    if (d->normalize)
        mlrt__buf_printf(&b, "{\"type\":\"BertNormalizer\",\"cleanText\":%s,\"handleChineseChars\":%s,\"stripAccents\":%s,\"lowercase\":%s}",
                         d->clean_text ? "true" : "false", d->chinese_chars ? "true" : "false",
                         d->strip_accents ? "true" : "false", d->lowercase ? "true" : "false");
    else
        mlrt__buf_puts(&b, "null");
    mlrt__buf_printf(&b, ",\"preTokenizer\":%s", d->pre_tokenize ? "\"BertPreTokenizer\"" : "null");
    mlrt__buf_puts(&b, ",\"specialTokens\":{");
    for (uint32_t i = 0, k = 0; i < d->n_added; i++) {
        if (!d->added[i].special) continue;
        if (k++) mlrt__buf_puts(&b, ",");
        mlrt__buf_json_string(&b, d->added[i].content, d->added[i].len);
        mlrt__buf_printf(&b, ":%u", d->added[i].id);
    }
    mlrt__buf_puts(&b, "},\"postProcessor\":");
    if (d->post_process) mlrt__buf_printf(&b, "{\"addedSingle\":%u,\"addedPair\":%u}", d->added_single, d->added_pair);
    else mlrt__buf_puts(&b, "null");
    static const char *const strategies[] = {"none", "longest_first", "only_first", "only_second"};
    mlrt__buf_puts(&b, ",\"truncation\":");
    if (d->truncation)
        mlrt__buf_printf(&b, "{\"maxLength\":%u,\"strategy\":\"%s\",\"direction\":\"%s\"}", d->max_length, strategies[d->truncation],
                         d->truncate_left ? "left" : "right");
    else
        mlrt__buf_puts(&b, "null");
    mlrt__buf_puts(&b, ",\"padding\":");
    if (d->padding) {
        mlrt__buf_printf(&b, "{\"strategy\":\"%s\"", d->padding == MLRT__PAD_FIXED ? "max_length" : "longest");
        if (d->padding == MLRT__PAD_FIXED) mlrt__buf_printf(&b, ",\"length\":%u", d->pad_length);
        mlrt__buf_printf(&b, ",\"direction\":\"%s\",\"padId\":%u,\"padTypeId\":%u,\"padToMultipleOf\":", d->pad_left ? "left" : "right",
                         d->pad_id, d->pad_type_id);
        if (d->pad_multiple) mlrt__buf_printf(&b, "%u}", d->pad_multiple);
        else mlrt__buf_puts(&b, "null}");
    } else {
        mlrt__buf_puts(&b, "null");
    }
    uint32_t max = d->truncation ? d->max_length : d->model_max_length;
    if (max) mlrt__buf_printf(&b, ",\"maxLength\":%u", max);
    else mlrt__buf_puts(&b, ",\"maxLength\":null");
    mlrt__buf_puts(&b, ",\"decoder\":");
    if (d->decode_wordpiece) {
        mlrt__buf_puts(&b, "{\"type\":\"WordPiece\"");
        json_token(&b, "prefix", d->decode_prefix);
        mlrt__buf_printf(&b, ",\"cleanup\":%s}", d->decode_cleanup ? "true" : "false");
    } else {
        mlrt__buf_puts(&b, "null");
    }
    mlrt__buf_puts(&b, "}");
    if (b.oom) { free(b.data); return NULL; }
    return b.data;
}

const char *mlrt_tokenizer_info_json(const mlrt_tokenizer *t) { return t ? t->info_json : NULL; }
