/* model/tokenizer_text.c — the per-character steps of the WordPiece tokenizer, exactly as Hugging
 * Face's Rust `tokenizers` runs them (spec bert-encoder.md §2.2-2.4):
 *   BertNormalizer  clean_text (delete U+0000, U+FFFD and Cc/Cf/Co of Unicode 8.0 except \t \n \r;
 *                   White_Space -> ' '), CJK ideographs spaced, strip_accents (NFD of Unicode 9.0,
 *                   canonical reordering, then Mn of 8.0 deleted), lowercase (Rust's to_lowercase)
 *   BertPreTokenizer  split on White_Space (dropped) and around each punctuation character
 *                   (ASCII punctuation and symbols, P* of 8.0)
 *   WordPiece       greedy longest match first, "##" continuations; a word of more than
 *                   max_input_chars_per_word characters, or one with a piece outside the
 *                   vocabulary, is one [UNK].
 * The text is valid UTF-8 (the caller checked); every buffer grows with checked sizes. */
#include "model.h"
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- normalizer */

static bool is_cjk(uint32_t c) { /* the Rust ranges: note the gap U+2B820-2B91F */
    return (c >= 0x4e00 && c <= 0x9fff) || (c >= 0x3400 && c <= 0x4dbf) || (c >= 0x20000 && c <= 0x2a6df) ||
           (c >= 0x2a700 && c <= 0x2b81f) || (c >= 0x2b920 && c <= 0x2ceaf) || (c >= 0xf900 && c <= 0xfaff) ||
           (c >= 0x2f800 && c <= 0x2fa1f);
}

/* The last step: lowercase, then UTF-8 into t->norm. */
static bool emit(mlrt_tokenizer *t, uint32_t c) {
    if (!mlrt__vec_reserve(&t->norm, 8, 1)) return false;
    uint8_t *o = (uint8_t *)t->norm.p + t->norm.len;
    if (t->d.lowercase) {
        uint32_t l = mlrt__uni_lower(c);
        if (c == 0x130) t->norm.len += mlrt__utf8_put(o, 'i') + mlrt__utf8_put(o + 1, 0x307);
        else t->norm.len += mlrt__utf8_put(o, l);
    } else {
        t->norm.len += mlrt__utf8_put(o, c);
    }
    return true;
}

/* Canonical reordering of the waiting run (characters with a combining class, kept after the Mn
 * strip), a stable sort by class, then out. The relative order of the kept characters is the one
 * reordering all of them would give: a stable sort orders any two by their own classes alone. */
static bool flush_run(mlrt_tokenizer *t) {
    uint32_t *r = t->run.p; /* each: class << 24 | code point */
    size_t n = t->run.len;
    if (n > 1) { /* counting sort by class: stable, linear for any run */
        t->run_tmp.len = 0;
        if (!mlrt__vec_reserve(&t->run_tmp, n, sizeof(uint32_t))) return false;
        uint32_t *tmp = t->run_tmp.p;
        size_t count[257] = {0};
        for (size_t i = 0; i < n; i++) count[(r[i] >> 24) + 1]++;
        for (int k = 1; k < 257; k++) count[k] += count[k - 1];
        for (size_t i = 0; i < n; i++) tmp[count[r[i] >> 24]++] = r[i];
        memcpy(r, tmp, n * sizeof *r);
    }
    for (size_t i = 0; i < n; i++)
        if (!emit(t, r[i] & 0xffffff)) return false;
    t->run.len = 0;
    return true;
}

/* strip_accents: NFD, reordering, then Mn of Unicode 8.0 deleted. */
static bool strip(mlrt_tokenizer *t, uint32_t c) {
    uint32_t parts[MLRT__UNI_NFD_MAX];
    size_t n = mlrt__uni_nfd(c, parts);
    for (size_t i = 0; i < n; i++) {
        uint32_t p = parts[i];
        int cls = mlrt__uni_strip_class(p);
        if (cls < 0) { /* deleted; with class 0 it still ends a run */
            if (cls == MLRT__UNI_STRIP_ENDS_RUN && t->run.len && !flush_run(t)) return false;
            continue;
        }
        if (!cls) {
            if ((t->run.len && !flush_run(t)) || !emit(t, p)) return false;
            continue;
        }
        if (!mlrt__vec_reserve(&t->run, 1, sizeof(uint32_t))) return false;
        ((uint32_t *)t->run.p)[t->run.len++] = (uint32_t)cls << 24 | p;
    }
    return true;
}

static bool after_cjk(mlrt_tokenizer *t, uint32_t c) {
    if (t->d.strip_accents) return strip(t, c);
    return emit(t, c);
}

/* HOT LOOP: every character of the text */
bool mlrt__tok_normalize(mlrt_tokenizer *t, const uint8_t *s, size_t n) {
    const mlrt__tok_desc *d = &t->d;
    if (!d->normalize) {
        if (!mlrt__vec_reserve(&t->norm, n, 1)) return false;
        if (n) memcpy((uint8_t *)t->norm.p + t->norm.len, s, n);
        t->norm.len += n;
        return true;
    }
    t->run.len = 0;
    size_t i = 0;
    while (i < n) {
        if (s[i] < 0x80) { /* ASCII: no CJK, no decomposition, class 0 */
            uint32_t c = s[i++];
            if (d->clean_text && (c < 0x20 || c == 0x7f)) {
                if (c != '\t' && c != '\n' && c != '\r') continue;
                c = ' ';
            }
            if (t->run.len && !flush_run(t)) return false;
            if (!mlrt__vec_reserve(&t->norm, 1, 1)) return false;
            ((uint8_t *)t->norm.p)[t->norm.len++] = (uint8_t)(d->lowercase && c >= 'A' && c <= 'Z' ? c + 32 : c);
            continue;
        }
        uint32_t c = mlrt__utf8_next(s, &i);
        if (d->clean_text) {
            if (c == 0xfffd || mlrt__uni_is_other8(c)) continue;
            if (mlrt__uni_is_white_space(c)) c = ' ';
        }
        if (d->chinese_chars && is_cjk(c)) {
            if (!after_cjk(t, ' ') || !after_cjk(t, c) || !after_cjk(t, ' ')) return false;
        } else if (!after_cjk(t, c)) {
            return false;
        }
    }
    return !t->run.len || flush_run(t);
}

/* ---------------------------------------------------------------- pre-tokenizer and WordPiece */

static bool is_punct(uint32_t c) {
    if (c < 0x80) return (c >= 0x21 && c <= 0x2f) || (c >= 0x3a && c <= 0x40) || (c >= 0x5b && c <= 0x60) || (c >= 0x7b && c <= 0x7e);
    return mlrt__uni_is_punct8(c);
}

static bool push_id(mlrt__vec *out, uint32_t id) {
    if (!mlrt__vec_reserve(out, 1, sizeof(int32_t))) return false;
    ((int32_t *)out->p)[out->len++] = (int32_t)id;
    return true;
}

/* WordPiece on one word w [n] of `chars` characters. */
static bool wordpiece(mlrt_tokenizer *t, const uint8_t *w, size_t n, size_t chars, mlrt__vec *out) {
    const mlrt__tok_desc *d = &t->d;
    if (chars > d->max_chars_per_word) return push_id(out, d->unk_id);
    size_t mark = out->len, start = 0;
    /* states[k] = (length of the k-th candidate from start, its hash state), shortest first */
    if (!mlrt__vec_reserve(&t->states, 2 * chars, sizeof(uint32_t))) return false;
    uint32_t *states = t->states.p;
    /* HOT LOOP: every candidate substring hashed once, then looked up from the longest */
    while (start < n) {
        bool cont = start > 0;
        size_t limit = t->max_token_bytes - (cont ? d->prefix_len : 0), k = 0, i = start;
        if (cont && d->prefix_len > t->max_token_bytes) limit = 0;
        uint32_t h = cont ? t->prefix_hash : MLRT__FNV_INIT;
        while (i < n && i - start < limit) {
            uint8_t b = w[i];
            size_t len = b < 0x80 ? 1 : b < 0xe0 ? 2 : b < 0xf0 ? 3 : 4;
            if (i + len - start > limit) break;
            for (size_t j = 0; j < len; j++) h = MLRT__FNV_STEP(h, w[i + j]);
            i += len;
            states[2 * k] = (uint32_t)(i - start); /* <= max_token_bytes */
            states[2 * k + 1] = h;
            k++;
        }
        long id = -1;
        size_t end = start;
        while (k > 0 && id < 0) {
            k--;
            end = start + states[2 * k];
            id = mlrt__tok_lookup(t, cont, w + start, end - start, states[2 * k + 1]);
        }
        if (id < 0) { /* no piece fits here: the whole word is [UNK] */
            out->len = mark;
            return push_id(out, d->unk_id);
        }
        if (!push_id(out, (uint32_t)id)) return false;
        start = end;
    }
    return true;
}

/* One word, then the split's bookkeeping (truncation's limit). */
static bool word(mlrt_tokenizer *t, const uint8_t *w, size_t n, size_t chars, mlrt__vec *out) {
    return wordpiece(t, w, n, chars, out) && mlrt__tok_split(t, out, true);
}

bool mlrt__tok_words(mlrt_tokenizer *t, const uint8_t *s, size_t n, mlrt__vec *out) {
    if (!t->d.pre_tokenize) {
        if (!n) return true;
        size_t chars = 0;
        for (size_t i = 0; i < n; i++) chars += (s[i] & 0xc0) != 0x80;
        return word(t, s, n, chars, out);
    }
    size_t i = 0, start = 0, chars = 0; /* the current word: s[start .. i), chars characters */
    while (i < n && !t->stop) {
        size_t at = i;
        uint32_t c = s[i] < 0x80 ? s[i++] : mlrt__utf8_next(s, &i);
        bool space = c < 0x80 ? c == ' ' || (c >= 0x09 && c <= 0x0d) : mlrt__uni_is_white_space(c);
        if (!space && !is_punct(c)) { chars++; continue; }
        if (chars && !word(t, s + start, at - start, chars, out)) return false;
        if (!space && !t->stop && !word(t, s + at, i - at, 1, out)) return false;
        start = i;
        chars = 0;
    }
    return !chars || t->stop || word(t, s + start, n - start, chars, out);
}

/* ---------------------------------------------------------------- the vocabulary, and splits */

long mlrt__tok_lookup(const mlrt_tokenizer *t, bool with_prefix, const uint8_t *s, size_t n, uint32_t h) {
    const mlrt__tok_desc *d = &t->d;
    size_t p = with_prefix ? d->prefix_len : 0;
    for (uint32_t at = mlrt__tok_slot(h, t->mask);; at = (at + 1) & t->mask) {
        uint32_t id = t->slots[at];
        if (!id--) return -1;
        const char *tok = d->pool + d->off[id];
        if (d->off[id + 1] - 1 - d->off[id] == p + n && (!p || memcmp(tok, d->prefix, p) == 0) &&
            memcmp(tok + p, s, n) == 0)
            return id;
    }
}

bool mlrt__tok_split(mlrt_tokenizer *t, const mlrt__vec *out, bool word) {
    if (!t->limit) return true;
    if (!t->limit_left) { /* Rust stops after the word that reaches the limit (added tokens count, never stop) */
        t->stop = word && out->len - t->seq_start >= t->limit;
        return true;
    }
    if (!mlrt__vec_reserve(&t->splits, 1, sizeof(uint32_t)) || out->len - t->seq_start > UINT32_MAX / 2) return false;
    ((uint32_t *)t->splits.p)[t->splits.len++] = (uint32_t)(out->len - t->seq_start) << 1 | word;
    return true;
}
