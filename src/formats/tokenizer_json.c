/* formats/tokenizer_json.c — Hugging Face tokenizer.json (the Rust `tokenizers` serde format,
 * version "1.0") of BERT-family models, read strictly into a tokenizer description (ir/ir.h).
 *
 * Read: BertNormalizer, BertPreTokenizer, the WordPiece model, TemplateProcessing,
 * BertProcessing and RobertaProcessing (MPNet's), the WordPiece decoder, added_tokens, truncation and padding; each may be null
 * where Rust allows it. Refused, naming the field:
 *   not UTF-8 (with the byte offset)                               INVALID_UTF8
 *   not JSON; the same key twice (a token twice in model.vocab)    INVALID_JSON, DUPLICATE_KEY
 *   an unknown top-level key, a missing field, a wrong type, a
 *   component type Rust does not know, vocab ids that are not
 *   0..n-1 exactly once, a special token missing from the
 *   vocabulary, a template naming a token it does not define       BAD_HEADER
 *   version other than "1.0"                                       UNSUPPORTED_VERSION
 *   components Rust knows and mlrt does not run (BPE, Unigram,
 *   WordLevel, ByteLevel, Metaspace, Sequence, ...), added-token
 *   flag single_word                                               UNSUPPORTED
 * Unknown keys inside a component are ignored, as Rust does. Stricter than Rust (which defers or
 * ignores these): unk_token must be in the vocabulary, special ids must be the vocabulary's, an
 * added token's id must be the one Rust assigns, truncation.max_length must cover the specials. */
#include "formats.h"
#include <stdlib.h>
#include <string.h>

#define FILE_NAME "tokenizer.json"

typedef struct rd {
    mlrt__tok_desc *d;
    mlrt_error *err;
} rd;

#define fail(r, code, ...) mlrt__fail_in((r)->err, code, FILE_NAME, __VA_ARGS__)

static mlrt_status bad(rd *r, const char *path, const char *what) {
    return fail(r, MLRT_ERR_BAD_HEADER, "%s: %s", path, what);
}

static mlrt_status wrong_type(rd *r, const char *path, const char *want, const mlrt__json *v) {
    return fail(r, MLRT_ERR_BAD_HEADER, "%s: expected %s, got %s", path, want,
                      v ? mlrt__json_type_name(v->type) : "nothing (the field is missing)");
}

/* obj.key, which must be present (required) and of type want (or null when nullable). */
static mlrt_status field(rd *r, const mlrt__json *obj, const char *path, const char *key, mlrt__json_type want,
                         bool nullable, const mlrt__json **out) {
    char p[128];
    mlrt__format_to(p, sizeof p, "%s%s%s", path, *path ? "." : "", key);
    const mlrt__json *v = mlrt__json_get(obj, key);
    *out = v;
    if (v && v->type == MLRT__JSON_NULL && nullable) return MLRT_OK;
    bool ok = v && (v->type == want || (want == MLRT__JSON_TRUE && v->type == MLRT__JSON_FALSE));
    if (ok) return MLRT_OK;
    const char *names[] = {"null", "a boolean", "a boolean", "a number", "a string", "an array", "an object"};
    char want_s[48];
    mlrt__format_to(want_s, sizeof want_s, "%s%s", names[want], nullable ? " or null" : "");
    return wrong_type(r, p, want_s, v);
}

static mlrt_status get_bool(rd *r, const mlrt__json *obj, const char *path, const char *key, bool *out) {
    const mlrt__json *v;
    mlrt_status st = field(r, obj, path, key, MLRT__JSON_TRUE, false, &v);
    if (!st) *out = v->type == MLRT__JSON_TRUE;
    return st;
}

/* A non-negative integer <= max. */
static mlrt_status get_uint(rd *r, const mlrt__json *obj, const char *path, const char *key, uint64_t max,
                            uint32_t *out) {
    const mlrt__json *v;
    mlrt_status st = field(r, obj, path, key, MLRT__JSON_NUMBER, false, &v);
    if (st) return st;
    uint64_t x;
    if (!mlrt__json_u64(v, &x) || x > max)
        return fail(r, MLRT_ERR_BAD_HEADER, "%s%s%s: %.*s is not an integer from 0 to %llu",
                          path, *path ? "." : "", key, (int)v->len, v->str, (unsigned long long)max);
    *out = (uint32_t)x;
    return MLRT_OK;
}

static mlrt_status get_string(rd *r, const mlrt__json *obj, const char *path, const char *key,
                              const mlrt__json **out) {
    return field(r, obj, path, key, MLRT__JSON_STRING, false, out);
}

/* A component's "type": one of the names mlrt runs (ok, NULL-terminated) -> its index; one that
 * Rust knows (known) -> UNSUPPORTED; anything else -> BAD_HEADER. */
static mlrt_status component_type(rd *r, const mlrt__json *obj, const char *path, const char *const *ok,
                                  const char *const *known, int *index) {
    const mlrt__json *t;
    mlrt_status st = get_string(r, obj, path, "type", &t);
    if (st) return st;
    for (int i = 0; ok[i]; i++)
        if (strcmp(t->str, ok[i]) == 0) { *index = i; return MLRT_OK; }
    for (int i = 0; known[i]; i++)
        if (strcmp(t->str, known[i]) == 0)
            return fail(r, MLRT_ERR_UNSUPPORTED, "%s: type '%s' is not supported (mlrt runs %s)",
                              path, t->str, ok[0]);
    return fail(r, MLRT_ERR_BAD_HEADER, "%s: unknown type '%s'", path, t->str);
}

/* The id of token s (vocabulary first, then the added tokens outside it), or -1. */
static long token_id(const mlrt__tok_desc *d, const char *s, size_t n) {
    long id = mlrt__tok_desc_find(d, s, n);
    for (uint32_t i = 0; id < 0 && i < d->n_added; i++)
        if (d->added[i].len == n && memcmp(d->added[i].content, s, n) == 0) id = d->added[i].id;
    return id;
}

/* Token s [n] must be the vocabulary's (or an added token's) with id `id`. */
static mlrt_status check_token(rd *r, const char *path, const char *s, size_t n, uint64_t id) {
    long want = token_id(r->d, s, n);
    if (want >= 0 && (uint64_t)want == id) return MLRT_OK;
    return fail(r, MLRT_ERR_BAD_HEADER, "%s: token \"%s\" %s, but the file gives id %llu", path, s,
                      want < 0 ? "is not in the vocabulary" : "has another id", (unsigned long long)id);
}

/* ---------------------------------------------------------------- model */

static mlrt_status read_vocab(rd *r, const mlrt__json *vocab) {
    mlrt__tok_desc *d = r->d;
    if (vocab->count == 0) return bad(r, "model.vocab", "the vocabulary is empty");
    if (vocab->count > MLRT__TOK_MAX_VOCAB)
        return fail(r, MLRT_ERR_BAD_HEADER, "model.vocab: %zu tokens, more than the limit %u",
                          vocab->count, MLRT__TOK_MAX_VOCAB);
    uint32_t n = (uint32_t)vocab->count;
    const mlrt__json **by_id = calloc(n, sizeof *by_id);
    size_t pool = 0;
    for (const mlrt__json *c = vocab->child; c; c = c->next) pool += c->key_len + 1;
    d->pool = malloc(pool);
    d->off = malloc(((size_t)n + 1) * sizeof *d->off);
    if (!by_id || !d->pool || !d->off) {
        free(by_id);
        return fail(r, MLRT_ERR_OUT_OF_MEMORY, "model.vocab: out of memory for %u tokens", n);
    }
    mlrt_status st = MLRT_OK;
    for (const mlrt__json *c = vocab->child; c && !st; c = c->next) {
        uint64_t id;
        if (c->type != MLRT__JSON_NUMBER || !mlrt__json_u64(c, &id))
            st = fail(r, MLRT_ERR_BAD_HEADER, "model.vocab: token \"%s\": the id must be a non-negative integer, got %s",
                            c->key, c->type == MLRT__JSON_NUMBER ? "a number that is not one" : mlrt__json_type_name(c->type));
        else if (id >= n)
            st = fail(r, MLRT_ERR_BAD_HEADER, "model.vocab: token \"%s\" has id %llu, but ids must be 0..%u (one per token, no holes)",
                            c->key, (unsigned long long)id, n - 1);
        else if (by_id[id])
            st = fail(r, MLRT_ERR_BAD_HEADER, "model.vocab: tokens \"%s\" and \"%s\" both have id %llu",
                            by_id[id]->key, c->key, (unsigned long long)id);
        else if (c->key_len > MLRT__TOK_MAX_TOKEN)
            st = fail(r, MLRT_ERR_BAD_HEADER, "model.vocab: token %llu is %zu bytes long, more than the limit %u",
                            (unsigned long long)id, c->key_len, MLRT__TOK_MAX_TOKEN);
        else
            by_id[id] = c;
    }
    if (!st) { /* n distinct ids below n: every id is taken */
        size_t at = 0;
        for (uint32_t i = 0; i < n; i++) {
            d->off[i] = (uint32_t)at;
            memcpy(d->pool + at, by_id[i]->key, by_id[i]->key_len + 1);
            at += by_id[i]->key_len + 1;
        }
        d->off[n] = (uint32_t)at;
        d->pool_len = at;
        d->n_vocab = d->n_ids = n;
        long a, b;
        if (!mlrt__tok_desc_check(d, &a, &b))
            st = fail(r, MLRT_ERR_OUT_OF_MEMORY, "model.vocab: out of memory");
        else if (a >= 0) /* the JSON reader refuses equal keys; equal tokens can still differ in escapes only */
            st = fail(r, MLRT_ERR_DUPLICATE_KEY, "model.vocab: token \"%s\" has ids %ld and %ld",
                            d->pool + d->off[a], a, b);
    }
    free(by_id);
    return st;
}

static mlrt_status read_model(rd *r, const mlrt__json *m) {
    static const char *const ok[] = {"WordPiece", NULL};
    static const char *const known[] = {"BPE", "Unigram", "WordLevel", NULL};
    mlrt_status st;
    int type;
    if (mlrt__json_get(m, "type") && (st = component_type(r, m, "model", ok, known, &type))) return st;
    const mlrt__json *unk, *prefix, *vocab;
    uint32_t max_chars;
    if ((st = get_string(r, m, "model", "unk_token", &unk)) || (st = get_string(r, m, "model", "continuing_subword_prefix", &prefix)) ||
        (st = get_uint(r, m, "model", "max_input_chars_per_word", UINT32_MAX, &max_chars)) ||
        (st = field(r, m, "model", "vocab", MLRT__JSON_OBJECT, false, &vocab)))
        return st;
    if (prefix->len > MLRT__TOK_MAX_TOKEN) return bad(r, "model.continuing_subword_prefix", "longer than a token may be");
    if ((st = read_vocab(r, vocab))) return st;
    mlrt__tok_desc *d = r->d;
    memcpy(d->prefix, prefix->str, prefix->len + 1);
    d->prefix_len = (uint32_t)prefix->len;
    d->max_chars_per_word = max_chars;
    long id = mlrt__tok_desc_find(d, unk->str, unk->len);
    if (id < 0)
        return fail(r, MLRT_ERR_BAD_HEADER, "model.unk_token: \"%s\" is not in model.vocab", unk->str);
    d->unk_id = (uint32_t)id;
    return MLRT_OK;
}

/* ---------------------------------------------------------------- normalizer, pre-tokenizer, decoder */

static mlrt_status read_normalizer(rd *r, const mlrt__json *n) {
    static const char *const ok[] = {"BertNormalizer", NULL};
    static const char *const known[] = {"Sequence", "NFC", "NFD", "NFKC", "NFKD", "Lowercase", "StripAccents", "Strip",
                                        "Replace", "Prepend", "Precompiled", "Nmt", "ByteLevel", NULL};
    int type;
    mlrt_status st = component_type(r, n, "normalizer", ok, known, &type);
    mlrt__tok_desc *d = r->d;
    if (st || (st = get_bool(r, n, "normalizer", "clean_text", &d->clean_text)) ||
        (st = get_bool(r, n, "normalizer", "handle_chinese_chars", &d->chinese_chars)) ||
        (st = get_bool(r, n, "normalizer", "lowercase", &d->lowercase)))
        return st;
    const mlrt__json *strip = mlrt__json_get(n, "strip_accents");
    if (strip && (st = field(r, n, "normalizer", "strip_accents", MLRT__JSON_TRUE, true, &strip))) return st;
    d->strip_accents = strip && strip->type != MLRT__JSON_NULL ? strip->type == MLRT__JSON_TRUE : d->lowercase;
    d->normalize = true;
    return MLRT_OK;
}

static mlrt_status read_pre_tokenizer(rd *r, const mlrt__json *p) {
    static const char *const ok[] = {"BertPreTokenizer", NULL};
    static const char *const known[] = {"ByteLevel", "Whitespace", "WhitespaceSplit", "Punctuation", "Sequence", "Metaspace",
                                        "CharDelimiterSplit", "Split", "Digits", "UnicodeScripts", "FixedLength", NULL};
    int type;
    mlrt_status st = component_type(r, p, "pre_tokenizer", ok, known, &type);
    if (!st) r->d->pre_tokenize = true;
    return st;
}

static mlrt_status read_decoder(rd *r, const mlrt__json *dec) {
    static const char *const ok[] = {"WordPiece", NULL};
    static const char *const known[] = {"ByteLevel", "Metaspace", "BPEDecoder", "CTC", "Sequence", "Replace", "Fuse", "Strip",
                                        "ByteFallback", NULL};
    int type;
    const mlrt__json *prefix;
    mlrt__tok_desc *d = r->d;
    mlrt_status st = component_type(r, dec, "decoder", ok, known, &type);
    if (st || (st = get_string(r, dec, "decoder", "prefix", &prefix)) ||
        (st = get_bool(r, dec, "decoder", "cleanup", &d->decode_cleanup)))
        return st;
    if (prefix->len > MLRT__TOK_MAX_TOKEN) return bad(r, "decoder.prefix", "longer than a token may be");
    memcpy(d->decode_prefix, prefix->str, prefix->len + 1);
    d->decode_prefix_len = (uint32_t)prefix->len;
    d->decode_wordpiece = true;
    return MLRT_OK;
}

/* ---------------------------------------------------------------- added tokens */

static mlrt_status read_added(rd *r, const mlrt__json *list) {
    mlrt__tok_desc *d = r->d;
    if (list->count > MLRT__TOK_MAX_ADDED)
        return fail(r, MLRT_ERR_BAD_HEADER, "added_tokens: %zu tokens, more than the limit %u",
                          list->count, MLRT__TOK_MAX_ADDED);
    d->added = calloc(list->count ? list->count : 1, sizeof *d->added);
    if (!d->added) return fail(r, MLRT_ERR_OUT_OF_MEMORY, "added_tokens: out of memory");
    uint32_t i = 0;
    for (const mlrt__json *t = list->child; t; t = t->next, i++) {
        char path[40];
        mlrt__format_to(path, sizeof path, "added_tokens[%u]", i);
        if (t->type != MLRT__JSON_OBJECT) return wrong_type(r, path, "an object", t);
        const mlrt__json *content;
        uint32_t id;
        bool flags[5];
        static const char *const names[5] = {"special", "single_word", "lstrip", "rstrip", "normalized"};
        mlrt_status st;
        if ((st = get_uint(r, t, path, "id", UINT32_MAX, &id)) || (st = get_string(r, t, path, "content", &content))) return st;
        for (int k = 0; k < 5; k++)
            if ((st = get_bool(r, t, path, names[k], &flags[k]))) return st;
        if (flags[1]) /* (lstrip, rstrip and normalized are matched as Rust does: model/tokenizer.c) */
                return fail(r, MLRT_ERR_UNSUPPORTED, "%s (\"%s\"): %s: true is not supported", path,
                                  content->str, names[1]);
        if (content->len == 0 || content->len > MLRT__TOK_MAX_TOKEN)
            return fail(r, MLRT_ERR_BAD_HEADER, "%s.content: %zu bytes (must be 1 to %u)", path,
                              content->len, MLRT__TOK_MAX_TOKEN);
        for (uint32_t k = 0; k < i; k++)
            if (d->added[k].len == content->len && memcmp(d->added[k].content, content->str, content->len) == 0)
                return fail(r, MLRT_ERR_DUPLICATE_KEY, "%s: \"%s\" is also added_tokens[%u]", path,
                                  content->str, k);
        long in_vocab = mlrt__tok_desc_find(d, content->str, content->len); /* else the next id after it, special or not */
        uint32_t want = in_vocab >= 0 ? (uint32_t)in_vocab : d->n_ids;
        if (id != want)
            return fail(r, MLRT_ERR_BAD_HEADER, "%s: \"%s\" has id %u, but its id is %u (%s)", path,
                              content->str, id, want, in_vocab >= 0 ? "its id in model.vocab" : "the next one after the vocabulary");
        if (in_vocab < 0) d->n_ids++;
        mlrt__tok_added *a = &d->added[i];
        a->content = malloc(content->len + 1);
        if (!a->content) return fail(r, MLRT_ERR_OUT_OF_MEMORY, "added_tokens: out of memory");
        memcpy(a->content, content->str, content->len + 1);
        a->len = (uint32_t)content->len;
        a->id = id;
        a->special = flags[0];
        a->normalized = flags[4], a->lstrip = flags[2], a->rstrip = flags[3];
        d->n_added = i + 1;
    }
    return MLRT_OK;
}

/* ---------------------------------------------------------------- post-processor */

/* A [token, id] pair of BertProcessing. */
static mlrt_status bert_pair(rd *r, const mlrt__json *p, const char *key, mlrt__tok_special *sp) {
    const mlrt__json *v;
    char path[40];
    mlrt__format_to(path, sizeof path, "post_processor.%s", key);
    mlrt_status st = field(r, p, "post_processor", key, MLRT__JSON_ARRAY, false, &v);
    uint64_t id;
    if (st) return st;
    if (v->count != 2 || v->child->type != MLRT__JSON_STRING || !mlrt__json_u64(v->child->next, &id) || id > UINT32_MAX)
        return bad(r, path, "expected [token, id]");
    if ((st = check_token(r, path, v->child->str, v->child->len, id))) return st;
    sp->name = malloc(v->child->len + 1);
    if (!sp->name) return fail(r, MLRT_ERR_OUT_OF_MEMORY, "out of memory");
    memcpy(sp->name, v->child->str, v->child->len + 1);
    sp->n_ids = 1;
    sp->ids[0] = (uint32_t)id;
    return MLRT_OK;
}

static mlrt_status read_special_tokens(rd *r, const mlrt__json *map) {
    mlrt__tok_desc *d = r->d;
    if (map->count > MLRT__TOK_MAX_ADDED) return bad(r, "post_processor.special_tokens", "too many special tokens");
    d->specials = calloc(map->count ? map->count : 1, sizeof *d->specials);
    if (!d->specials) return fail(r, MLRT_ERR_OUT_OF_MEMORY, "out of memory");
    for (const mlrt__json *s = map->child; s; s = s->next) {
        char path[160];
        mlrt__format_to(path, sizeof path, "post_processor.special_tokens[\"%s\"]", s->key);
        const mlrt__json *id, *ids, *tokens;
        mlrt_status st;
        if (s->type != MLRT__JSON_OBJECT) return wrong_type(r, path, "an object", s);
        if ((st = get_string(r, s, path, "id", &id)) || (st = field(r, s, path, "ids", MLRT__JSON_ARRAY, false, &ids)) ||
            (st = field(r, s, path, "tokens", MLRT__JSON_ARRAY, false, &tokens)))
            return st;
        if (id->len != s->key_len || memcmp(id->str, s->key, s->key_len) != 0) return bad(r, path, "its id differs from its key");
        if (ids->count == 0 || ids->count > MLRT__TOK_MAX_SPECIAL_IDS || ids->count != tokens->count)
            return fail(r, MLRT_ERR_BAD_HEADER, "%s: %zu ids and %zu tokens (must be the same, 1 to %u)",
                              path, ids->count, tokens->count, MLRT__TOK_MAX_SPECIAL_IDS);
        mlrt__tok_special *sp = &d->specials[d->n_specials];
        const mlrt__json *t = tokens->child;
        for (const mlrt__json *v = ids->child; v; v = v->next, t = t->next) {
            uint64_t x;
            if (!mlrt__json_u64(v, &x) || x > UINT32_MAX || t->type != MLRT__JSON_STRING)
                return bad(r, path, "ids must be integers and tokens strings");
            if ((st = check_token(r, path, t->str, t->len, x))) return st;
            sp->ids[sp->n_ids++] = (uint32_t)x;
        }
        sp->name = malloc(s->key_len + 1);
        if (!sp->name) return fail(r, MLRT_ERR_OUT_OF_MEMORY, "out of memory");
        memcpy(sp->name, s->key, s->key_len + 1);
        d->n_specials++;
    }
    return MLRT_OK;
}

/* A template (single or pair): pieces, each {"SpecialToken":{id,type_id}} or {"Sequence":{id,type_id}}. */
static mlrt_status read_template(rd *r, const mlrt__json *p, const char *key, mlrt__tok_piece *out, uint32_t *n_out,
                                 uint32_t *added) {
    mlrt__tok_desc *d = r->d;
    const mlrt__json *list;
    mlrt_status st = field(r, p, "post_processor", key, MLRT__JSON_ARRAY, false, &list);
    if (st) return st;
    if (list->count > MLRT__TOK_MAX_TEMPLATE)
        return fail(r, MLRT_ERR_BAD_HEADER, "post_processor.%s: %zu pieces, more than the limit %u", key,
                          list->count, MLRT__TOK_MAX_TEMPLATE);
    uint32_t n = 0, seen[2] = {0, 0};
    *added = 0;
    for (const mlrt__json *piece = list->child; piece; piece = piece->next, n++) {
        char path[64];
        mlrt__format_to(path, sizeof path, "post_processor.%s[%u]", key, n);
        if (piece->type != MLRT__JSON_OBJECT || piece->count != 1)
            return bad(r, path, "expected {\"SpecialToken\": ...} or {\"Sequence\": ...}");
        const mlrt__json *body = piece->child, *id;
        bool special = strcmp(body->key, "SpecialToken") == 0;
        if (!special && strcmp(body->key, "Sequence") != 0)
            return fail(r, MLRT_ERR_BAD_HEADER, "%s: unknown piece '%s'", path, body->key);
        char bpath[80];
        mlrt__format_to(bpath, sizeof bpath, "%s.%s", path, body->key);
        if (body->type != MLRT__JSON_OBJECT) return wrong_type(r, bpath, "an object", body);
        if ((st = get_string(r, body, bpath, "id", &id)) || (st = get_uint(r, body, bpath, "type_id", UINT32_MAX, &out[n].type_id)))
            return st;
        out[n].special = -1;
        if (special) {
            for (uint32_t k = 0; k < d->n_specials; k++)
                if (strcmp(d->specials[k].name, id->str) == 0) out[n].special = (int32_t)k;
            if (out[n].special < 0)
                return fail(r, MLRT_ERR_BAD_HEADER, "%s: special token \"%s\" is not in post_processor.special_tokens",
                                  bpath, id->str);
            *added += d->specials[out[n].special].n_ids;
        } else {
            bool b = strcmp(id->str, "B") == 0;
            if (!b && strcmp(id->str, "A") != 0)
                return fail(r, MLRT_ERR_BAD_HEADER, "%s.id: \"%s\" (expected \"A\" or \"B\")", bpath, id->str);
            out[n].seq = b;
            seen[b]++;
        }
    }
    bool pair = strcmp(key, "pair") == 0;
    if (seen[0] != 1 || seen[1] != (pair ? 1u : 0u))
        return fail(r, MLRT_ERR_BAD_HEADER, "post_processor.%s: must hold sequence A once%s", key,
                          pair ? " and sequence B once" : " and no sequence B");
    *n_out = n;
    return MLRT_OK;
}

/* Whether a BertProcessing or RobertaProcessing object is read as RobertaProcessing: Rust reads the post-processor
 * as an untagged enum that tries RobertaProcessing first, so the shape decides, not "type" (npm tokenizers 0.23.2:
 * both flags booleans -> Roberta; either missing or of another type -> BertProcessing, even under "RobertaProcessing"). */
static bool roberta_shape(const mlrt__json *p) {
    const mlrt__json *t = mlrt__json_get(p, "trim_offsets"), *a = mlrt__json_get(p, "add_prefix_space");
    return t && a && (t->type == MLRT__JSON_TRUE || t->type == MLRT__JSON_FALSE) && (a->type == MLRT__JSON_TRUE || a->type == MLRT__JSON_FALSE);
}

static mlrt_status read_post_processor(rd *r, const mlrt__json *p) {
    static const char *const ok[] = {"TemplateProcessing", "BertProcessing", "RobertaProcessing", NULL};
    static const char *const known[] = {"ByteLevel", "Sequence", NULL};
    int type;
    mlrt__tok_desc *d = r->d;
    mlrt_status st = component_type(r, p, "post_processor", ok, known, &type);
    if (st) return st;
    if (type == 0) {
        const mlrt__json *map;
        if ((st = field(r, p, "post_processor", "special_tokens", MLRT__JSON_OBJECT, false, &map)) ||
            (st = read_special_tokens(r, map)) || (st = read_template(r, p, "single", d->single, &d->n_single, &d->added_single)) ||
            (st = read_template(r, p, "pair", d->pair, &d->n_pair, &d->added_pair)))
            return st;
    } else {
        d->specials = calloc(2, sizeof *d->specials);
        if (!d->specials) return fail(r, MLRT_ERR_OUT_OF_MEMORY, "out of memory");
        if ((st = bert_pair(r, p, "cls", &d->specials[0]))) return st;
        d->n_specials = 1;
        if ((st = bert_pair(r, p, "sep", &d->specials[1]))) return st;
        d->n_specials = 2;
        /* Bert: [CLS] A [SEP] B:1 [SEP]:1; Roberta: <s> A </s> </s> B </s>, every type id 0 (offsets' trimming aside, which
         * no output shows) */
        static const mlrt__tok_piece single[3] = {{0, 0, 0}, {-1, 0, 0}, {1, 0, 0}};
        static const mlrt__tok_piece pair[2][6] = {{{0, 0, 0}, {-1, 0, 0}, {1, 0, 0}, {-1, 1, 1}, {1, 0, 1}},
                                                   {{0, 0, 0}, {-1, 0, 0}, {1, 0, 0}, {1, 0, 0}, {-1, 1, 0}, {1, 0, 0}}};
        const bool roberta = roberta_shape(p);
        memcpy(d->single, single, sizeof single);
        memcpy(d->pair, pair[roberta], sizeof pair[roberta]);
        d->n_single = 3, d->n_pair = 5 + roberta, d->added_single = 2, d->added_pair = 3 + roberta;
    }
    d->post_process = true;
    return MLRT_OK;
}

/* ---------------------------------------------------------------- truncation, padding */

static mlrt_status direction(rd *r, const mlrt__json *obj, const char *path, bool required, bool *left) {
    const mlrt__json *v = mlrt__json_get(obj, "direction");
    *left = false;
    if (!v && !required) return MLRT_OK;
    mlrt_status st = get_string(r, obj, path, "direction", &v);
    if (st) return st;
    *left = strcmp(v->str, "Left") == 0;
    if (!*left && strcmp(v->str, "Right") != 0)
        return fail(r, MLRT_ERR_BAD_HEADER, "%s.direction: \"%s\" (expected \"Left\" or \"Right\")", path, v->str);
    return MLRT_OK;
}

static mlrt_status read_truncation(rd *r, const mlrt__json *t) {
    mlrt__tok_desc *d = r->d;
    const mlrt__json *strategy;
    uint32_t stride;
    mlrt_status st;
    if ((st = get_uint(r, t, "truncation", "max_length", MLRT__TOK_MAX_LENGTH, &d->max_length)) ||
        (st = get_string(r, t, "truncation", "strategy", &strategy)) || (st = get_uint(r, t, "truncation", "stride", UINT32_MAX, &stride)) ||
        (st = direction(r, t, "truncation", false, &d->truncate_left)))
        return st;
    static const char *const names[] = {"LongestFirst", "OnlyFirst", "OnlySecond"};
    for (int k = 0; k < 3; k++)
        if (strcmp(strategy->str, names[k]) == 0) d->truncation = (mlrt__tok_truncation)(MLRT__TRUNC_LONGEST_FIRST + k);
    if (!d->truncation)
        return fail(r, MLRT_ERR_BAD_HEADER, "truncation.strategy: \"%s\" (expected LongestFirst, OnlyFirst or OnlySecond)",
                          strategy->str);
    return MLRT_OK;
}

static mlrt_status read_padding(rd *r, const mlrt__json *p) {
    mlrt__tok_desc *d = r->d;
    const mlrt__json *strategy = mlrt__json_get(p, "strategy"), *token, *multiple = mlrt__json_get(p, "pad_to_multiple_of");
    mlrt_status st;
    if (strategy && strategy->type == MLRT__JSON_STRING && strcmp(strategy->str, "BatchLongest") == 0) {
        d->padding = MLRT__PAD_LONGEST;
    } else if (strategy && strategy->type == MLRT__JSON_OBJECT && strategy->count == 1 && strcmp(strategy->child->key, "Fixed") == 0) {
        if ((st = get_uint(r, strategy, "padding.strategy", "Fixed", MLRT__TOK_MAX_LENGTH, &d->pad_length))) return st;
        d->padding = MLRT__PAD_FIXED;
    } else {
        return bad(r, "padding.strategy", "expected \"BatchLongest\" or {\"Fixed\": n}");
    }
    if ((st = direction(r, p, "padding", true, &d->pad_left)) || (st = get_uint(r, p, "padding", "pad_id", UINT32_MAX, &d->pad_id)) ||
        (st = get_uint(r, p, "padding", "pad_type_id", UINT32_MAX, &d->pad_type_id)) || (st = get_string(r, p, "padding", "pad_token", &token)))
        return st;
    if (multiple && multiple->type != MLRT__JSON_NULL &&
        (st = get_uint(r, p, "padding", "pad_to_multiple_of", MLRT__TOK_MAX_LENGTH, &d->pad_multiple)))
        return st;
    return check_token(r, "padding.pad_token", token->str, token->len, d->pad_id);
}

/* ---------------------------------------------------------------- the file */

mlrt_status mlrt__read_tokenizer_json(const uint8_t *b, size_t n, mlrt__tok_desc *d, mlrt_error *err) {
    memset(d, 0, sizeof *d);
    d->source = FILE_NAME;
    rd r = {d, err};
    size_t bad_at = mlrt__utf8_invalid_at(b, n);
    if (bad_at < n) return fail(&r, MLRT_ERR_INVALID_UTF8, "not valid UTF-8 at byte %zu", bad_at);
    mlrt__json_doc doc;
    mlrt_status st = mlrt__json_parse(b, n, FILE_NAME, &doc, err);
    if (st) return st;
    const mlrt__json *root = doc.root;
    static const char *const keys[] = {"version", "truncation", "padding", "added_tokens", "normalizer", "pre_tokenizer",
                                       "post_processor", "decoder", "model"};
    const mlrt__json *v[9] = {0};
    if (root->type != MLRT__JSON_OBJECT) st = wrong_type(&r, "the top level", "an object", root);
    for (const mlrt__json *c = root->type == MLRT__JSON_OBJECT ? root->child : NULL; c && !st; c = c->next) {
        int k = 0;
        while (k < 9 && strcmp(c->key, keys[k]) != 0) k++;
        if (k == 9) st = fail(&r, MLRT_ERR_BAD_HEADER, "unknown top-level key '%s'", c->key);
        else v[k] = c;
    }
    const mlrt__json *ignored;
    if (!st && v[0] && !(st = field(&r, root, "", "version", MLRT__JSON_STRING, false, &ignored)) && strcmp(v[0]->str, "1.0") != 0)
        st = fail(&r, MLRT_ERR_UNSUPPORTED_VERSION, "version \"%s\" (mlrt reads \"1.0\")", v[0]->str);
    /* type checks of the optional members, then each in the order its checks need: the vocabulary
     * before the added tokens, these before the post-processor and padding, which name tokens */
    static const mlrt__json_type types[9] = {MLRT__JSON_STRING, MLRT__JSON_OBJECT, MLRT__JSON_OBJECT, MLRT__JSON_ARRAY,
                                             MLRT__JSON_OBJECT, MLRT__JSON_OBJECT, MLRT__JSON_OBJECT, MLRT__JSON_OBJECT,
                                             MLRT__JSON_OBJECT};
    for (int k = 1; k < 9 && !st; k++)
        if (v[k] || k == 8) st = field(&r, root, "", keys[k], types[k], k != 3 && k != 8, &ignored);
    bool set[9];
    for (int k = 0; k < 9; k++) set[k] = v[k] && v[k]->type != MLRT__JSON_NULL;
    if (!st) st = read_model(&r, v[8]);
    if (!st && set[3]) st = read_added(&r, v[3]);
    if (!st && set[4]) st = read_normalizer(&r, v[4]);
    if (!st && set[5]) st = read_pre_tokenizer(&r, v[5]);
    if (!st && set[6]) st = read_post_processor(&r, v[6]);
    if (!st && set[7]) st = read_decoder(&r, v[7]);
    if (!st && set[1]) st = read_truncation(&r, v[1]);
    if (!st && set[2]) st = read_padding(&r, v[2]);
    if (!st && d->truncation && d->max_length < d->added_single)
        st = fail(&r, MLRT_ERR_BAD_HEADER, "truncation.max_length %u is less than the %u tokens the post-processor adds",
                        d->max_length, d->added_single);
    mlrt__json_free(&doc);
    if (st) mlrt__tok_desc_free(d);
    d->source = FILE_NAME;
    return st;
}
