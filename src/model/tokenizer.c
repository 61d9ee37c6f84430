/* model/tokenizer.c — a WordPiece tokenizer built from its description (ir/ir.h), and encoding:
 * added tokens split out of the raw text, each piece between them normalized, pre-tokenized and
 * WordPiece-encoded (model/tokenizer_text.c), then truncation, the post-processor's template and
 * padding, as Hugging Face's Rust `tokenizers` applies them (spec bert-encoder.md §2.1, 2.5-2.7). */
#include "model.h"
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- the vocabulary's hash table */

static uint32_t hash_bytes(uint32_t h, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) h = MLRT__FNV_STEP(h, s[i]);
    return h;
}

void mlrt_tokenizer_free(mlrt_tokenizer *t) {
    if (!t) return;
    mlrt__tok_desc_free(&t->d);
    free(t->slots);
    free(t->raw.order);
    free(t->normed.order);
    mlrt__vec *v[] = {&t->norm, &t->run, &t->run_tmp, &t->states, &t->seq[0], &t->seq[1], &t->ids, &t->type_ids,
                      &t->mask_, &t->lengths, &t->row_at, &t->splits};
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) free(v[i]->p);
    free(t->info_json);
    free(t);
}

/* The bytes an added token is matched by: its content in raw text, its normalized form in normalized text. */
static const char *match_bytes(const mlrt__tok_added *a, uint32_t *len) {
    *len = a->normalized ? a->norm_len : a->len;
    return a->normalized ? a->norm : a->content;
}

/* Added token i into its matcher, longest first (so that the first one that matches at a position is the
 * longest): the raw text's, or the normalized text's by its normalized form, made here (an empty form never
 * matches). False when out of memory. */
static bool index_added(mlrt_tokenizer *t, uint32_t i) {
    mlrt__tok_added *a = &t->d.added[i];
    if (a->normalized) {
        t->norm.len = 0;
        if (!mlrt__tok_normalize(t, (const uint8_t *)a->content, a->len) || !(a->norm = malloc(t->norm.len + 1))) return false;
        memcpy(a->norm, t->norm.p, t->norm.len), a->norm[t->norm.len] = 0;
        a->norm_len = (uint32_t)t->norm.len;
    }
    mlrt__tok_matcher *m = a->normalized ? &t->normed : &t->raw;
    uint32_t len, prev, j = m->n;
    const char *bytes = match_bytes(a, &len);
    if (!len) return true;
    for (; j > 0; j--) { /* insertion: after those at least as long */
        match_bytes(&t->d.added[m->order[j - 1]], &prev);
        if (prev >= len) break;
        m->order[j] = m->order[j - 1];
    }
    m->order[j] = i, m->n++;
    m->first[(uint8_t)bytes[0]] = 1;
    return true;
}

mlrt_tokenizer *mlrt__tokenizer_build(mlrt__tok_desc *d, mlrt_error *err) {
    mlrt_tokenizer *t = calloc(1, sizeof *t);
    if (!t) {
        mlrt__tok_desc_free(d);
        mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "tokenizer: out of memory");
        return NULL;
    }
    t->d = *d;
    memset(d, 0, sizeof *d);
    d = &t->d;
    uint32_t cap = 16;
    while (cap < d->n_vocab + d->n_vocab / 2) cap *= 2; /* n_vocab <= 2^22: no overflow */
    t->mask = cap - 1;
    t->slots = calloc(cap, sizeof *t->slots);
    t->raw.order = malloc((d->n_added ? d->n_added : 1) * sizeof *t->raw.order);
    t->normed.order = malloc((d->n_added ? d->n_added : 1) * sizeof *t->normed.order);
    if (!t->slots || !t->raw.order || !t->normed.order) {
        mlrt_tokenizer_free(t);
        mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "%s: out of memory for the vocabulary's index", d->source);
        return NULL;
    }
    for (uint32_t id = 0; id < d->n_vocab; id++) {
        uint32_t len = d->off[id + 1] - 1 - d->off[id];
        if (len > t->max_token_bytes) t->max_token_bytes = len;
        uint32_t at = mlrt__tok_slot(hash_bytes(MLRT__FNV_INIT, d->pool + d->off[id], len), t->mask);
        while (t->slots[at]) at = (at + 1) & t->mask;
        t->slots[at] = id + 1;
    }
    t->prefix_hash = hash_bytes(MLRT__FNV_INIT, d->prefix, d->prefix_len);
    for (uint32_t i = 0; i < d->n_added; i++)
        if (!index_added(t, i)) {
            mlrt_tokenizer_free(t);
            mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "tokenizer: out of memory");
            return NULL;
        }
    if (!(t->info_json = mlrt__tok_info(t))) {
        mlrt_tokenizer_free(t);
        mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "tokenizer: out of memory");
        return NULL;
    }
    return t;
}

/* ---------------------------------------------------------------- one sequence */

/* The added token of m matching s [n] at its start, longest first (leftmost-longest as the scan goes
 * left to right), or -1. */
static long added_at(const mlrt_tokenizer *t, const mlrt__tok_matcher *m, const uint8_t *s, size_t n) {
    if (!m->first[s[0]]) return -1;
    for (uint32_t k = 0; k < m->n; k++) {
        uint32_t len;
        const char *bytes = match_bytes(&t->d.added[m->order[k]], &len);
        if (len <= n && memcmp(bytes, s, len) == 0) return m->order[k];
    }
    return -1;
}

/* lstrip: where the run of White_Space that ends at s + i begins, not before from (Rust: \s*$ on the text
 * before the match, and never into the previous match). */
static size_t space_before(const uint8_t *s, size_t from, size_t i) {
    for (size_t k = i; k > from && mlrt__uni_is_white_space(mlrt__utf8_prev(s, from, &k));) i = k;
    return i;
}

/* rstrip: where the run of White_Space that starts at s + i ends (Rust: ^\s* on the text after it). */
static size_t space_after(const uint8_t *s, size_t i, size_t n) {
    for (size_t k = i; i < n && mlrt__uni_is_white_space(mlrt__utf8_next(s, &k)); k = i) i = k;
    return i;
}

/* One added token's id appended, a split after it (for truncation). */
static bool push_added(mlrt_tokenizer *t, mlrt__vec *out, uint32_t id) {
    if (!mlrt__vec_reserve(out, 1, sizeof(int32_t))) return false;
    ((int32_t *)out->p)[out->len++] = (int32_t)id;
    return mlrt__tok_split(t, out, false);
}

/* The normalized piece in t->norm -> ids: the added tokens matched in normalized text split out of it
 * (leftmost-longest), the words between them pre-tokenized and encoded. */
static bool normalized_piece(mlrt_tokenizer *t, mlrt__vec *out) {
    const uint8_t *s = t->norm.p;
    size_t n = t->norm.len, gap = 0;
    for (size_t i = 0; t->normed.n && i < n && !t->stop; i++) {
        long b = added_at(t, &t->normed, s + i, n - i);
        if (b < 0) continue;
        const mlrt__tok_added *a = &t->d.added[b];
        size_t begin = a->lstrip ? space_before(s, gap, i) : i, end = i + a->norm_len;
        if ((begin > gap && !mlrt__tok_words(t, s + gap, begin - gap, out)) || (!t->stop && !push_added(t, out, a->id))) return false;
        gap = a->rstrip ? space_after(s, end, n) : end;
        i = gap - 1;
    }
    return t->stop || gap >= n || mlrt__tok_words(t, s + gap, n - gap, out);
}

/* Truncating left: Rust tokenizes the splits from the last one back and keeps those from the word
 * that reaches the limit on. */
static void limit_left(mlrt_tokenizer *t, mlrt__vec *out) {
    const uint32_t *sp = t->splits.p;
    size_t total = 0, first = t->splits.len;
    for (size_t k = t->splits.len; k-- > 0;) {
        size_t begin = k ? sp[k - 1] >> 1 : 0, end = sp[k] >> 1;
        total += end - begin;
        first = k;
        if ((sp[k] & 1) && total >= t->limit) break;
    }
    size_t cut = first < t->splits.len && first ? sp[first - 1] >> 1 : 0;
    if (cut) {
        int32_t *ids = (int32_t *)out->p + t->seq_start;
        memmove(ids, ids + cut, (out->len - t->seq_start - cut) * sizeof *ids);
        out->len -= cut;
    }
}

/* text [n] -> ids appended to out: added tokens, and the pieces between them normalized and encoded;
 * limit: Rust's tokenize_with_limit (0: none). */
static bool encode_sequence(mlrt_tokenizer *t, const uint8_t *s, size_t n, mlrt__vec *out, size_t limit, bool left) {
    t->limit = limit, t->limit_left = left, t->stop = false, t->seq_start = out->len, t->splits.len = 0;
    bool ok = true;
    size_t gap = 0;
    for (size_t i = 0; i <= n && ok && !t->stop; i++) {
        long a = i < n ? added_at(t, &t->raw, s + i, n - i) : -1;
        if (a < 0 && i < n) continue;
        const mlrt__tok_added *m = a < 0 ? NULL : &t->d.added[a];
        size_t begin = m && m->lstrip ? space_before(s, gap, i) : i; /* (the text before the match ends here) */
        if (begin > gap) {
            t->norm.len = 0;
            if (!mlrt__tok_normalize(t, s + gap, begin - gap) || !normalized_piece(t, out)) { ok = false; break; }
        }
        if (!m || t->stop) break;
        ok = push_added(t, out, m->id);
        gap = m->rstrip ? space_after(s, i + m->len, n) : i + m->len;
        i = gap - 1;
    }
    if (ok && limit && left) limit_left(t, out);
    t->limit = 0, t->stop = false;
    return ok;
}

static mlrt_status check_text(const char *what, const char *s, size_t n, mlrt_error *err) {
    if (!s && n) return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "tokenizer: %s is NULL", what);
    size_t bad = s ? mlrt__utf8_invalid_at((const uint8_t *)s, n) : n;
    if (bad < n) return mlrt__fail(err, MLRT_ERR_INVALID_UTF8, "tokenizer: %s is not valid UTF-8 at byte %zu", what, bad);
    return MLRT_OK;
}

/* ---------------------------------------------------------------- options */

typedef struct plan {
    mlrt__tok_truncation truncation;
    uint32_t max_length;            /* truncation's, incl. specials */
    bool truncate_left;
    mlrt__tok_padding padding;
    uint32_t pad_length;            /* FIXED */
} plan;

/* cut: -1 the file's truncation direction, 0 right, 1 left. */
static mlrt_status make_plan(const mlrt_tokenizer *t, const mlrt_encode_options *o, int cut, plan *p, mlrt_error *err) {
    const mlrt__tok_desc *d = &t->d;
    static const mlrt_encode_options none = {0, MLRT_TRUNCATION_DEFAULT, MLRT_PADDING_DEFAULT};
    if (!o) o = &none;
    if ((unsigned)o->truncation > MLRT_TRUNCATION_ONLY_SECOND || (unsigned)o->padding > MLRT_PADDING_MAX_LENGTH)
        return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "tokenizer: options: unknown truncation %d or padding %d",
                          (int)o->truncation, (int)o->padding);
    if (o->max_length > MLRT__TOK_MAX_LENGTH)
        return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "tokenizer: options: max_length %u is beyond the limit %u",
                          o->max_length, MLRT__TOK_MAX_LENGTH);
    p->truncate_left = cut < 0 ? d->truncate_left : cut;
    p->truncation = o->truncation == MLRT_TRUNCATION_DEFAULT ? (d->truncation ? d->truncation : o->max_length ? MLRT__TRUNC_LONGEST_FIRST : MLRT__TRUNC_NONE)
                    : (mlrt__tok_truncation)(o->truncation - MLRT_TRUNCATION_NONE);
    p->max_length = o->max_length ? o->max_length : d->truncation ? d->max_length : 0;
    if (p->truncation && !p->max_length)
        return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "tokenizer: options: truncation needs max_length (the file sets none)");
    p->padding = o->padding == MLRT_PADDING_DEFAULT ? d->padding
                 : o->padding == MLRT_PADDING_NONE ? MLRT__PAD_NONE
                 : o->padding == MLRT_PADDING_LONGEST ? MLRT__PAD_LONGEST : MLRT__PAD_FIXED;
    p->pad_length = o->padding == MLRT_PADDING_DEFAULT ? d->pad_length
                    : o->max_length ? o->max_length : d->padding == MLRT__PAD_FIXED ? d->pad_length : d->max_length;
    if (p->padding == MLRT__PAD_FIXED && !p->pad_length)
        return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "tokenizer: options: padding to max_length needs max_length");
    return MLRT_OK;
}

/* ---------------------------------------------------------------- truncation, template */

/* Keeps n of v's ids: the first n, or the last n (truncating on the left). */
static void keep(mlrt__vec *v, size_t n, bool left) {
    if (v->len <= n) return;
    if (left) memmove(v->p, (int32_t *)v->p + (v->len - n), n * sizeof(int32_t));
    v->len = n;
}

/* Rust's truncate_encodings with max_length less the template's tokens (utils/truncation.rs). */
static mlrt_status truncate(mlrt_tokenizer *t, const plan *p, bool pair, mlrt_error *err) {
    if (!p->truncation) return MLRT_OK;
    uint32_t added = t->d.post_process ? (pair ? t->d.added_pair : t->d.added_single) : 0;
    if (p->max_length < added)
        return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "tokenizer: max_length %u is less than the %u special tokens of %s",
                          p->max_length, added, pair ? "a pair" : "one sequence");
    size_t max = p->max_length - added, n1 = t->seq[0].len, n2 = pair ? t->seq[1].len : 0;
    if (!max) { /* Rust: nothing is left of either sequence, whatever the strategy */
        t->seq[0].len = t->seq[1].len = 0;
        return MLRT_OK;
    }
    if (n1 + n2 <= max) return MLRT_OK;
    size_t remove = n1 + n2 - max;
    if (p->truncation == MLRT__TRUNC_LONGEST_FIRST) {
        if (!pair) { keep(&t->seq[0], n1 - remove, p->truncate_left); return MLRT_OK; }
        bool swap = n1 > n2;
        size_t a = swap ? n2 : n1, b; /* a: the shorter */
        b = a > max ? a : (a > max - a ? a : max - a);
        if (a + b > max) { a = max / 2; b = a + max % 2; }
        keep(&t->seq[0], swap ? b : a, p->truncate_left);
        keep(&t->seq[1], swap ? a : b, p->truncate_left);
        return MLRT_OK;
    }
    bool second = p->truncation == MLRT__TRUNC_ONLY_SECOND;
    if (second && !pair)
        return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "tokenizer: truncation only_second needs a pair, %zu tokens must go", remove);
    mlrt__vec *v = &t->seq[second];
    if (v->len <= remove)
        return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "tokenizer: truncation %s: the %s sequence has %zu tokens, but %zu must go",
                          second ? "only_second" : "only_first", second ? "second" : "first", v->len, remove);
    keep(v, v->len - remove, p->truncate_left);
    return MLRT_OK;
}

/* Appends the post-processed encoding of seq[0] (and seq[1]) to t->ids, type_ids, mask_. */
static bool assemble(mlrt_tokenizer *t, bool pair) {
    const mlrt__tok_desc *d = &t->d;
    static const mlrt__tok_piece plain[2] = {{-1, 0, 0}, {-1, 1, 1}}; /* no post-processor: A, then B with type 1 */
    const mlrt__tok_piece *pieces = !d->post_process ? plain : pair ? d->pair : d->single;
    uint32_t n_pieces = !d->post_process ? 1u + pair : pair ? d->n_pair : d->n_single;
    size_t total = (pair ? d->added_pair : d->added_single) * d->post_process + t->seq[0].len + (pair ? t->seq[1].len : 0);
    if (!mlrt__vec_reserve(&t->ids, total, 4) || !mlrt__vec_reserve(&t->type_ids, total, 4) || !mlrt__vec_reserve(&t->mask_, total, 1))
        return false;
    int32_t *ids = (int32_t *)t->ids.p + t->ids.len, *types = (int32_t *)t->type_ids.p + t->type_ids.len;
    size_t k = 0;
    for (uint32_t i = 0; i < n_pieces; i++) {
        const mlrt__tok_piece *pc = &pieces[i];
        const int32_t *src;
        size_t n;
        if (pc->special >= 0) src = (const int32_t *)d->specials[pc->special].ids, n = d->specials[pc->special].n_ids;
        else src = t->seq[pc->seq].p, n = t->seq[pc->seq].len;
        if (n) memcpy(ids + k, src, n * sizeof *ids);
        for (size_t j = 0; j < n; j++) types[k + j] = (int32_t)pc->type_id;
        k += n;
    }
    memset((uint8_t *)t->mask_.p + t->mask_.len, 1, k);
    t->ids.len += k, t->type_ids.len += k, t->mask_.len += k;
    return true;
}

/* One text (and pair) -> appended to t->ids, type_ids, mask_ (not padded). */
static mlrt_status encode_one(mlrt_tokenizer *t, const char *text, size_t len, const char *pair, size_t pair_len,
                              const plan *p, mlrt_error *err) {
    mlrt_status st;
    if ((st = check_text("text", text, len, err)) || (pair && (st = check_text("pair", pair, pair_len, err)))) return st;
    t->seq[0].len = t->seq[1].len = 0;
    size_t limit = p->truncation ? p->max_length : 0; /* Rust: not for the first sequence under only_second */
    if (!encode_sequence(t, (const uint8_t *)text, len, &t->seq[0], p->truncation == MLRT__TRUNC_ONLY_SECOND ? 0 : limit, p->truncate_left) ||
        (pair && !encode_sequence(t, (const uint8_t *)pair, pair_len, &t->seq[1], limit, p->truncate_left)))
        return mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "tokenizer: out of memory encoding %zu bytes of text", len + pair_len);
    if ((st = truncate(t, p, pair != NULL, err))) return st;
    if (!assemble(t, pair != NULL)) return mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "tokenizer: out of memory");
    return MLRT_OK;
}

/* Lays out `rows` rows (at row_at[r], lengths[r] long in t->ids, type_ids, mask_) as rows of width
 * w, filled with padding (right or left as the file says); padded: the lengths become w. */
static bool pad_rows(mlrt_tokenizer *t, size_t rows, size_t w, bool padded) {
    size_t total;
    if (__builtin_mul_overflow(rows, w, &total)) return false;
    mlrt__vec ids = {0}, types = {0}, mask = {0};
    if (!mlrt__vec_reserve(&ids, total, 4) || !mlrt__vec_reserve(&types, total, 4) || !mlrt__vec_reserve(&mask, total, 1)) {
        free(ids.p), free(types.p), free(mask.p);
        return false;
    }
    const mlrt__tok_desc *d = &t->d;
    uint32_t *len = t->lengths.p;
    const size_t *at = t->row_at.p;
    for (size_t r = 0; r < rows; r++) {
        size_t n = len[r], pad = w - n, real = d->pad_left ? pad : 0, fill = d->pad_left ? 0 : n;
        int32_t *I = (int32_t *)ids.p + r * w, *T = (int32_t *)types.p + r * w;
        uint8_t *M = (uint8_t *)mask.p + r * w;
        memcpy(I + real, (int32_t *)t->ids.p + at[r], n * 4);
        memcpy(T + real, (int32_t *)t->type_ids.p + at[r], n * 4);
        memcpy(M + real, (uint8_t *)t->mask_.p + at[r], n);
        for (size_t k = 0; k < pad; k++) I[fill + k] = (int32_t)d->pad_id, T[fill + k] = (int32_t)d->pad_type_id;
        memset(M + fill, 0, pad);
        if (padded) len[r] = (uint32_t)w;
    }
    free(t->ids.p), free(t->type_ids.p), free(t->mask_.p);
    t->ids = ids, t->type_ids = types, t->mask_ = mask;
    t->ids.len = t->type_ids.len = t->mask_.len = total;
    return true;
}

/* The padded width of rows whose longest is `longest` (0: no padding). */
static size_t pad_width(const mlrt_tokenizer *t, const plan *p, size_t longest) {
    if (!p->padding) return longest;
    size_t w = p->padding == MLRT__PAD_FIXED ? p->pad_length : longest, m = t->d.pad_multiple;
    if (w < longest) w = longest; /* padding never truncates */
    if (m && w % m) w += m - w % m;
    return w;
}

/* ---------------------------------------------------------------- the API */

static mlrt_status encode_rows(mlrt_tokenizer *t, const char *texts, const size_t *ends, const char *pairs,
                               const size_t *pair_ends, size_t n, const mlrt_encode_options *options, int cut, size_t *width,
                               mlrt_error *err) {
    plan p = {0};
    mlrt_status st = make_plan(t, options, cut, &p, err);
    if (st) return st;
    t->ids.len = t->type_ids.len = t->mask_.len = t->lengths.len = t->row_at.len = 0;
    if (!mlrt__vec_reserve(&t->lengths, n ? n : 1, sizeof(uint32_t)) || !mlrt__vec_reserve(&t->row_at, n ? n : 1, sizeof(size_t)))
        return mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "tokenizer: out of memory for %zu rows", n);
    size_t longest = 0;
    for (size_t r = 0; r < n; r++) {
        size_t a = r ? ends[r - 1] : 0, pa = r && pairs ? pair_ends[r - 1] : 0;
        if (ends[r] < a || (pairs && pair_ends[r] < pa))
            return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "tokenizer: batch: text %zu ends before it starts", r);
        size_t before = t->ids.len;
        st = encode_one(t, texts + a, ends[r] - a, pairs ? pairs + pa : NULL, pairs ? pair_ends[r] - pa : 0, &p, err);
        if (st) {
            if (n > 1 && err) { /* name the row */
                char msg[MLRT_ERROR_MESSAGE_MAX];
                mlrt__format_to(msg, sizeof msg, "%s", err->message);
                mlrt__fail(err, st, "%s (batch row %zu)", msg, r);
            }
            return st;
        }
        ((size_t *)t->row_at.p)[r] = before;
        size_t len = t->ids.len - before;
        if (len > UINT32_MAX) return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "tokenizer: batch row %zu has too many tokens", r);
        ((uint32_t *)t->lengths.p)[r] = (uint32_t)len;
        if (len > longest) longest = len;
    }
    t->lengths.len = t->row_at.len = n;
    size_t w = pad_width(t, &p, longest);
    bool uniform = true; /* no padding needed when every row is already w long */
    for (size_t r = 0; r < n; r++) uniform &= ((uint32_t *)t->lengths.p)[r] == w;
    if (!uniform && !pad_rows(t, n, w, p.padding != MLRT__PAD_NONE))
        return mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "tokenizer: out of memory padding %zu rows to %zu", n, w);
    *width = w;
    return MLRT_OK;
}

mlrt_status mlrt_tokenizer_encode(mlrt_tokenizer *t, const char *text, size_t len, const char *pair, size_t pair_len,
                                  const mlrt_encode_options *options, mlrt_encoding *out, mlrt_error *err) {
    if (!t || !out) return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "tokenizer_encode: NULL %s", t ? "out" : "tokenizer");
    memset(out, 0, sizeof *out);
    if (!text && len) return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "tokenizer_encode: text is NULL");
    size_t ends[1] = {len}, pair_ends[1] = {pair_len}, w;
    mlrt_status st = encode_rows(t, text ? text : "", ends, pair, pair_ends, 1, options, -1, &w, err);
    if (st) return st;
    out->n = w;
    out->ids = t->ids.p, out->type_ids = t->type_ids.p, out->attention_mask = t->mask_.p;
    return MLRT_OK;
}

static mlrt_status encode_batch(mlrt_tokenizer *t, const char *texts, const size_t *ends, const char *pairs, const size_t *pair_ends,
                                size_t n, const mlrt_encode_options *options, int cut, mlrt_batch_encoding *out, mlrt_error *err) {
    if (!t || !out || (n && (!ends || (pairs && !pair_ends))))
        return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "tokenizer_encode_batch: a NULL argument");
    memset(out, 0, sizeof *out);
    bool missing = false;
    for (size_t r = 0; r < n && !texts; r++) missing |= ends[r] != 0;
    if (missing)
        return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "tokenizer_encode_batch: texts is NULL");
    size_t w;
    mlrt_status st = encode_rows(t, texts ? texts : "", ends, pairs, pair_ends, n, options, cut, &w, err);
    if (st) return st;
    out->rows = n, out->width = w;
    out->ids = t->ids.p, out->type_ids = t->type_ids.p, out->attention_mask = t->mask_.p, out->lengths = t->lengths.p;
    return MLRT_OK;
}

mlrt_status mlrt_tokenizer_encode_batch(mlrt_tokenizer *t, const char *texts, const size_t *ends, const char *pairs,
                                        const size_t *pair_ends, size_t n, const mlrt_encode_options *options,
                                        mlrt_batch_encoding *out, mlrt_error *err) {
    return encode_batch(t, texts, ends, pairs, pair_ends, n, options, -1, out, err);
}

mlrt_status mlrt__tokenizer_encode_batch_cut(mlrt_tokenizer *t, const char *texts, const size_t *ends, size_t n,
                                             const mlrt_encode_options *options, bool cut_left, mlrt_batch_encoding *out,
                                             mlrt_error *err) {
    return encode_batch(t, texts, ends, NULL, NULL, n, options, cut_left, out, err);
}
