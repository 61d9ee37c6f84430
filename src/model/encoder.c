/* model/encoder.c — the encoder family: a BERT-family sentence encoder built from its description
 * (ir/ir.h, mlrt__enc_desc), run on token ids (mlrt_run) or texts (mlrt_embed).
 *
 * A batch's rows are texts padded to one width. Only the tokens with attention mask 1 are computed:
 * they are gathered, text after text, into one matrix of hidden states (a chunk of at most `cap`
 * tokens, whole texts), keeping each token's position in its row. Then, as BertModel computes them:
 *   h = LayerNorm((word[id] + type[tt]) + pos[p])
 *   per layer: q, k, v = h Wq + bq, ...; ctx = attention per text and head (the text's own tokens are
 *              its keys); h = LayerNorm(ctx Wo + bo + h); h = LayerNorm(GELU(h W1 + b1) W2 + b2 + h)
 *   per text:  pooling (sentence-transformers' modes, concatenated), L2 normalization if asked.
 * DistilBERT (DistilBertModel) has no token types (type is one row of zeros); only its names differ.
 * MPNet (MPNetModel) differs in three places: no token types; p counts the row's
 * ids that are not 1 (padding_idx), from 2 (an id 1 takes position 1); and each head adds to a score the
 * bias of its bucket of (key's index - query's index) in the row (the buckets of MPNetEncoder's
 * relative_position_bucket with its 32 buckets and distance 128), the same table in every layer.
 * When the pooling reads one token per text (CLS or LAST alone), the last layer computes its query,
 * attention output and feed-forward for that token only (its keys and values for every token).
 * A masked key gets exactly zero weight in BertModel's softmax (e^(min - max) = 0), so leaving pads
 * out changes nothing, and every kernel computes a token from its own row and its text's keys only:
 * a text gives the same bits alone as in any batch, whatever the padding or the chunking.
 * Dense layers are the dense family's packed kernels (f32 panels, or APR Q8/Q4 kept quantized),
 * run over tiles of MLRT__TILE_ROWS tokens. Embedding tables are kept in the file's element type
 * (F32, F16, BF16 or APR_Q8) and converted row by row, exactly. */
#include "model.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct table {
    mlrt_dtype dtype;               /* F32, F16, BF16, or APR_Q8 (q * scale) */
    uint8_t *bytes;                 /* [rows][cols] elements as in the file (Q8: the int8 values) */
    float scale;                    /* APR_Q8 */
} table;

enum { Q, K, V, O, UP, DOWN }; /* a layer's dense weights */
typedef struct layer {
    mlrt__dense w[6];               /* query, key, value, attention output, intermediate, output */
    float *ln;                      /* [4][hidden]: attention LayerNorm weight, bias; output LayerNorm weight, bias */
} layer;

typedef struct encoder {
    uint32_t hidden, layers, heads, ffn, vocab, positions, types, dim, max_length, pooling;
    float eps;
    bool normalize, lower_case, cut_left, borrowed, mpnet;
    bool typeless;                  /* no token type table in the file (MPNet, DistilBERT): type is one row of zeros */
    bool skip_prompt;               /* Pooling's include_prompt false: a prompt's tokens are not pooled (but by CLS) */
    char *prompt;                   /* [prompt_len + 1] the default prompt (mlrt_embed prepends it), or NULL */
    uint32_t prompt_len;
    bool word_in_file;              /* word.bytes lies in one of blocks */
    table word;
    float *pos, *type, *ln;         /* [positions][hidden], [types][hidden], [2][hidden] */
    float *rel;                     /* MPNet: [heads][2 positions - 1] the score bias at distance d in [h][positions - 1 + d]; or NULL */
    layer *layer;                   /* [layers] (a fork borrows its parent's, and everything above) */
    mlrt__dense dense[MLRT__ENC_MAX_DENSE]; /* [n_dense] sentence-transformers' Dense modules after the pooling */
    uint32_t n_dense, pooled, widest; /* the pooling's floats (dim without Dense modules); the widest Dense side */
    char *facts;
    uint8_t **blocks;               /* [n_blocks] the files' blocks that weights are used in place in (owned) */
    size_t n_blocks;
    mlrt_tokenizer *tok;            /* owned, or NULL */
    uint64_t bytes;                 /* weight bytes held */
    /* scratch, each model and fork its own */
    uint32_t cap;                   /* tokens a chunk holds */
    float *h, *q, *k, *v, *c;       /* [cap][hidden] x 5 */
    float *f;                       /* a tile's feed-forward [MLRT__TILE_ROWS][ffn], or the picked tokens' attention [cap][hidden] */
    float *kt, *p;                  /* attention: [head width][positions + 15], [2][positions + 15] */
    float *dx;                      /* the Dense modules' rows: [2][widest] */
    uint32_t *tok_pos, *starts;     /* [cap] each token's position; [cap + 1] where each text of the chunk starts */
    uint32_t *emb_pos;              /* [cap] each token's position embedding (BERT: tok_pos; MPNet: counted) */
    int32_t *ids, *tt;              /* [cap] the chunk's token ids and type ids */
    int16_t *xq;                    /* quantized layers' row scratch [MLRT__QX(in_q)] */
    int32_t *xsum;
    uint32_t *xnz;
    mlrt__vec prompted;             /* mlrt_embed: the texts after their prompt */
    mlrt__vec lower;                /* mlrt_embed: lowercased texts */
    mlrt__vec lower_ends;           /* size_t */
} encoder;

/* A batch as mlrt_run or mlrt_embed gives it: rows x width, ids int64 or int32. */
typedef struct batch {
    size_t rows, width;
    const int64_t *ids64;
    const int32_t *ids32;           /* (one of the two) */
    const uint8_t *mask;            /* or NULL: all ones */
    const int64_t *tt64;
    const int32_t *tt32;            /* or both NULL: zeros */
    uint32_t skip;                  /* positions 0..skip-1 left out of the pooling but CLS (a prompt's tokens) */
} batch;

static int64_t at_i(const int64_t *a64, const int32_t *a32, size_t i) { return a64 ? a64[i] : a32 ? a32[i] : 0; }

/* ------------------------------------------------------------------ the forward pass */

/* y [rows][l->out] = x [rows][l->in] W + b, a tile at a time. */
static void dense(encoder *e, const mlrt__dense *l, const float *x, float *y, size_t rows) {
    for (size_t r = 0; r < rows; r += MLRT__TILE_ROWS) {
        size_t n = rows - r < MLRT__TILE_ROWS ? rows - r : MLRT__TILE_ROWS;
        if (l->wq) mlrt__quant_forward(l, x + r * l->in, l->in, y + r * l->out, l->out, n, 0, l->out, e->xq, e->xsum, e->xnz);
        else mlrt__dense_forward(l, x + r * l->in, l->in, y + r * l->out, l->out, n);
    }
}

static void norm(const encoder *e, const float *scale, const float *x, const float *res, float *y, size_t rows) {
    mlrt__norm p = {rows, e->hidden, e->eps, scale, scale + e->hidden};
    mlrt__layernorm(&p, x, res, y, NULL, NULL);
}

/* A table's row as f32. */
static void row_of(const table *t, size_t r, size_t cols, float *out) {
    if (t->dtype != MLRT_APR_Q8) { mlrt__to_f32_n(t->bytes + r * cols * mlrt_dtype_size(t->dtype), t->dtype, out, cols); return; }
    const int8_t *q = (const int8_t *)t->bytes + r * cols;
    for (size_t i = 0; i < cols; i++) out[i] = (float)q[i] * t->scale;
}

/* One layer over the chunk's n tokens of nt texts, e->h in place; or, when the pooling reads one token
 * per text (pick: 1 the first, CLS; 2 the last), the last layer for that token only: every token's keys
 * and values, but the query, the attention output and the feed-forward of those nt tokens, whose
 * hidden states it leaves in e->c [nt][H] (each row's result is its own: the bits of the whole layer). */
static void run_layer(encoder *e, const layer *L, size_t n, size_t nt, size_t d, float scale, int pick) {
    const size_t H = e->hidden, rows = pick ? nt : n;
    float *hs = pick ? e->c : e->h, *cs = pick ? e->f : e->c; /* [rows][H]: the hidden states updated; the attention output */
    dense(e, &L->w[K], e->h, e->k, n);
    dense(e, &L->w[V], e->h, e->v, n);
    for (size_t s = 0; pick && s < nt; s++) memcpy(hs + s * H, e->h + (pick == 2 ? e->starts[s + 1] - 1 : e->starts[s]) * H, H * sizeof *hs);
    dense(e, &L->w[Q], hs, e->q, rows);
    const size_t span = 2 * (size_t)e->positions - 1;
    for (size_t s = 0; s < nt; s++)
        for (size_t a = 0; a < e->heads; a++) {
            size_t at = e->starts[s] * H + a * d, len = e->starts[s + 1] - e->starts[s], me = pick ? s * H + a * d : at;
            const uint32_t *kpos = e->tok_pos + e->starts[s];
            mlrt__attn_bias bias = {e->rel ? e->rel + a * span + e->positions - 1 : NULL, pick == 2 ? kpos + len - 1 : kpos, kpos};
            mlrt__attention(e->q + me, pick ? 1 : len, e->k + at, e->v + at, H, len, d, scale, e->rel ? &bias : NULL, cs + me, e->kt,
                            e->p);
        }
    dense(e, &L->w[O], cs, e->q, rows);
    norm(e, L->ln, e->q, hs, hs, rows);
    for (size_t r = 0; r < rows; r += MLRT__TILE_ROWS) { /* the feed-forward a tile at a time: f holds one */
        const size_t t = rows - r < MLRT__TILE_ROWS ? rows - r : MLRT__TILE_ROWS;
        dense(e, &L->w[UP], hs + r * H, e->f, t);
        mlrt__gelu_n(e->f, t * e->ffn);
        dense(e, &L->w[DOWN], e->f, e->q + r * H, t);
    }
    norm(e, L->ln + 2 * H, e->q, hs, hs, rows);
}

/* One text's pooling in mode m of its n tokens h [n][H] (positions pos [n]; the first `skip` positions
 * masked out, but for CLS) into o [H], as sentence-transformers pools; with every token masked, max
 * gives -1e9 (its fill), the others 0 (the means: 0 over at least 1e-9; last: a masked token times 0). */
static void pool(const encoder *e, const float *h, size_t n, const uint32_t *pos, uint32_t skip, int m, float *o) {
    const size_t H = e->hidden;
    size_t k = 0;
    while (m != MLRT__TPOOL_CLS && k < n && pos[k] < skip) k++;
    if (k < n) mlrt__pool_tokens(h + k * H, H, n - k, H, pos + k, (mlrt__tpool)m, o);
    else for (size_t i = 0; i < H; i++) o[i] = m == MLRT__TPOOL_MAX ? -1e9f : 0.0f;
}

/* The chunk's n tokens of nt texts (e->ids, tt, tok_pos, starts) -> out [nt][dim]; the first skip
 * positions of each are not pooled (but by CLS). */
static void forward(encoder *e, size_t n, size_t nt, uint32_t skip, float *out) {
    const size_t H = e->hidden, d = H / e->heads;
    const float scale = 1.0f / sqrtf((float)d);
    for (size_t t = 0; t < n; t++) { /* (word + type) + position, as BertEmbeddings adds them */
        float *h = e->h + t * H;
        const float *ty = e->type + (size_t)e->tt[t] * H, *po = e->pos + (size_t)e->emb_pos[t] * H;
        row_of(&e->word, (size_t)e->ids[t], H, h);
        for (size_t i = 0; i < H; i++) h[i] = (h[i] + ty[i]) + po[i];
    }
    norm(e, e->ln, e->h, NULL, e->h, n);
    /* one token per text pooled: 1 the first, 2 the last */
    int pick = !e->layers ? 0 : e->pooling == MLRT__EPOOL_CLS ? 1 : e->pooling == MLRT__EPOOL_LAST ? 2 : 0;
    for (size_t s = 0; pick == 2 && s < nt; s++) /* (a text the prompt masks whole pools zeros) */
        if (e->tok_pos[e->starts[s + 1] - 1] < skip) pick = 0;
    for (uint32_t l = 0; l < e->layers; l++) run_layer(e, &e->layer[l], n, nt, d, scale, l + 1 == e->layers ? pick : 0);
    for (size_t s = 0; s < nt; s++, out += e->dim) {
        float *o = e->n_dense ? e->dx : out, *x = o; /* (pooled into dx when Dense modules follow) */
        size_t a = e->starts[s];
        if (pick) memcpy(o, e->c + s * H, H * sizeof *o); /* (the token run_layer kept: what CLS or LAST pools) */
        else
            for (int m = 0; m < 6; m++)
                if (e->pooling >> m & 1) pool(e, e->h + a * H, e->starts[s + 1] - a, e->tok_pos + a, skip, m, o), o += H;
        for (uint32_t k = 0; k < e->n_dense; k++) { /* x -> y, through the two rows of dx, the last into out */
            float *y = k + 1 == e->n_dense ? out : x == e->dx ? e->dx + e->widest : e->dx;
            mlrt__dense_forward(&e->dense[k], x, e->dense[k].in, y, e->dense[k].out, 1);
            x = y;
        }
        if (e->normalize) mlrt__l2_normalize(out, e->dim);
    }
}

/* The chunk buffers, for up to e->cap tokens, in one block (allocated at the first run). */
static bool scratch(encoder *e) {
    if (e->h) return true;
    const size_t cap = e->cap, H = e->hidden, n16 = e->positions + 15;
    size_t in_q = 0;
    for (uint32_t l = 0; l < e->layers; l++)
        for (int k = 0; k < 6; k++) {
            const mlrt__dense *w = &e->layer[l].w[k];
            in_q = w->wq && w->in_q > in_q ? w->in_q : in_q;
        }
    const uint64_t f = (uint64_t)MLRT__TILE_ROWS * e->ffn > (uint64_t)cap * H ? (uint64_t)MLRT__TILE_ROWS * e->ffn : (uint64_t)cap * H;
    uint64_t floats = 5 * (uint64_t)H * cap + f + (H / e->heads + 2) * n16 + 2 * (uint64_t)e->widest, words = 5 * cap + 1 + in_q / 4 + 1 + in_q + 2;
    uint64_t bytes = (floats + words) * 4 + MLRT__QX(in_q) * 2; /* (sizes up to 2^24 each: no overflow in 64 bits) */
    float *all = bytes < SIZE_MAX / 2 ? malloc((size_t)bytes) : NULL;
    if (!all) return false;
    e->h = all, e->q = all + cap * H, e->k = e->q + cap * H, e->v = e->k + cap * H, e->c = e->v + cap * H, e->f = e->c + cap * H;
    e->kt = e->f + f, e->p = e->kt + H / e->heads * n16, e->dx = e->p + 2 * n16;
    e->tok_pos = (uint32_t *)(all + floats), e->starts = e->tok_pos + cap, e->ids = (int32_t *)e->starts + cap + 1, e->tt = e->ids + cap;
    e->emb_pos = (uint32_t *)e->tt + cap, e->xsum = (int32_t *)e->emb_pos + cap, e->xnz = (uint32_t *)e->xsum + in_q / 4 + 1, e->xq = (int16_t *)(e->xnz + in_q + 2);
    return true;
}

/* Checks a batch (ids, types, masks), then runs it a chunk of whole texts at a time into out [rows][dim]. */
static mlrt_status run_batch(mlrt_model *m, const batch *b, float *out, mlrt_error *err) {
    encoder *e = m->impl;
    const bool cls = e->pooling & MLRT__EPOOL_CLS;
    for (size_t r = 0; r < b->rows; r++) {
        size_t real = 0, counted = 1; /* (MPNet: the position of the last id that is not 1) */
        for (size_t t = 0; t < b->width; t++) {
            size_t i = r * b->width + t;
            counted += e->mpnet && at_i(b->ids64, b->ids32, i) != 1;
            if (b->mask && !b->mask[i]) {
                if (cls && t == 0)
                    return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "run: attention_mask[%zu][0] is 0 but the model pools the "
                                      "first token (CLS): pad on the right", r);
                continue;
            }
            int64_t id = at_i(b->ids64, b->ids32, i), tt = at_i(b->tt64, b->tt32, i);
            if (id < 0 || id >= e->vocab)
                return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "run: input_ids[%zu][%zu] is %lld, not in 0..%u", r, t, (long long)id,
                                  e->vocab - 1);
            if (tt < 0 || tt >= e->types)
                return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "run: token_type_ids[%zu][%zu] is %lld, not in 0..%u", r, t,
                                  (long long)tt, e->types - 1);
            if (id != 1 && counted >= e->positions)
                return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "run: input_ids[%zu][%zu] would take position %zu; the model has %u "
                                  "(MPNet counts the ids that are not 1 from 2)", r, t, counted, e->positions);
            real++;
        }
        if (!real) return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "run: row %zu has no token with attention_mask 1", r);
    }
    if (b->width > e->positions)
        return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "run: %zu tokens per row; the model has %u positions", b->width, e->positions);
    if (!scratch(e)) return mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "run: out of memory for the encoder's buffers");
    size_t r = 0;
    while (r < b->rows) {
        size_t n = 0, nt = 0, r0 = r;
        for (; r < b->rows; r++, nt++) { /* whole texts while they fit (one always does: width <= positions <= cap) */
            size_t real = 0;
            for (size_t t = 0; t < b->width; t++) real += !b->mask || b->mask[r * b->width + t];
            if (n + real > e->cap) break;
            e->starts[nt] = (uint32_t)n;
            for (size_t t = 0, counted = 1; t < b->width; t++) {
                size_t i = r * b->width + t;
                int64_t id = at_i(b->ids64, b->ids32, i);
                counted += e->mpnet && id != 1;
                if (b->mask && !b->mask[i]) continue;
                e->ids[n] = (int32_t)id, e->tt[n] = (int32_t)at_i(b->tt64, b->tt32, i);
                e->emb_pos[n] = (uint32_t)(!e->mpnet ? t : id != 1 ? counted : 1);
                e->tok_pos[n++] = (uint32_t)t;
            }
        }
        e->starts[nt] = (uint32_t)n;
        forward(e, n, nt, b->skip, out + r0 * e->dim);
    }
    return mlrt__check_outputs(out, b->rows, e->dim, 0, e->dim, err);
}

static mlrt_status enc_run(mlrt_model *m, const mlrt_tensor *in, mlrt_error *err) {
    const encoder *e = m->impl;
    batch b = {(size_t)in[0].dims[0], (size_t)in[0].dims[1], in[0].data, NULL, in[1].data, in[2].data, NULL, 0};
    int64_t dims[2] = {(int64_t)b.rows, e->dim};
    float *y = mlrt__output(m, 0, 2, dims, err);
    return y ? run_batch(m, &b, y, err) : err->code;
}

/* ------------------------------------------------------------------ texts */

/* The case class of the first character before s[i] (after it: case_after) that is not Case_Ignorable,
 * within [begin, end); 0 at the text's edge. */
static int case_before(const uint8_t *s, size_t begin, size_t i) {
    while (i > begin) {
        int c = mlrt__uni_case_class(mlrt__utf8_prev(s, begin, &i));
        if (c != MLRT__UNI_CASE_IGNORABLE) return c;
    }
    return 0;
}
static int case_after(const uint8_t *s, size_t i, size_t end) {
    while (i < end) {
        int c = mlrt__uni_case_class(mlrt__utf8_next(s, &i));
        if (c != MLRT__UNI_CASE_IGNORABLE) return c;
    }
    return 0;
}

/* texts lowercased as sentence-transformers' do_lower_case does (Python's str.lower: per character,
 * U+0130 to i + U+0307, and Unicode's Final_Sigma: a capital sigma after a cased character and not
 * before one, case-ignorables skipped, becomes U+03C2) into e->lower, ends into e->lower_ends. */
static mlrt_status lowercase(encoder *e, const char *texts, const size_t *ends, size_t n, mlrt_error *err) {
    size_t total = n ? ends[n - 1] : 0, bad = mlrt__utf8_invalid_at((const uint8_t *)texts, total);
    if (bad < total) return mlrt__fail(err, MLRT_ERR_INVALID_UTF8, "embed: the texts are not UTF-8 at byte %zu", bad);
    e->lower.len = e->lower_ends.len = 0;
    if (!mlrt__vec_reserve(&e->lower, total * 2 + 8, 1) || !mlrt__vec_reserve(&e->lower_ends, n, sizeof(size_t)))
        return mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "embed: out of memory");
    uint8_t *o = e->lower.p;
    size_t *oe = e->lower_ends.p, k = 0;
    const uint8_t *s = (const uint8_t *)texts;
    for (size_t i = 0, t = 0; t < n; t++) {
        size_t begin = i;
        while (i < ends[t]) {
            size_t at = i;
            uint32_t cp = mlrt__utf8_next(s, &i);
            if (cp == 0x3a3 && case_before(s, begin, at) == MLRT__UNI_CASED && case_after(s, i, ends[t]) != MLRT__UNI_CASED)
                cp = 0x3c2; /* lowers to itself */
            if (!mlrt__vec_reserve(&e->lower, 12, 1)) return mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "embed: out of memory");
            o = e->lower.p;
            e->lower.len += mlrt__utf8_put(o + e->lower.len, mlrt__uni_lower(cp));
            if (cp == 0x130) e->lower.len += mlrt__utf8_put(o + e->lower.len, 0x307);
        }
        oe[k++] = e->lower.len;
    }
    return MLRT_OK;
}

/* Each of the k texts s (ends rel) after the prompt p [pl], into e->prompted; rel: their new ends. */
static mlrt_status prefix(encoder *e, const char *p, size_t pl, const char *s, size_t *rel, size_t k, mlrt_error *err) {
    const size_t total = k ? rel[k - 1] : 0;
    e->prompted.len = 0;
    if (total > SIZE_MAX / 2 || pl > (SIZE_MAX / 2 - total) / (k + 1) || !mlrt__vec_reserve(&e->prompted, total + k * pl + 1, 1))
        return mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "embed: out of memory for the prompted texts");
    char *o = e->prompted.p;
    for (size_t j = 0, from = 0, at = 0; j < k; j++) {
        memcpy(o + at, p, pl), at += pl;
        memcpy(o + at, s + from, rel[j] - from), at += rel[j] - from;
        from = rel[j], rel[j] = at;
    }
    return MLRT_OK;
}

/* The positions a prompt covers, as sentence-transformers counts them to leave out of the pooling: the
 * prompt tokenized alone (lowercased as the texts are), less its last token when that is a special
 * token ([SEP]; a tokenizer without a post-processor adds none). */
static mlrt_status prompt_tokens(encoder *e, const char *p, size_t pl, const mlrt_encode_options *opt, uint32_t *skip, mlrt_error *err) {
    size_t end = pl;
    mlrt_status st = MLRT_OK;
    if (e->lower_case && !(st = lowercase(e, p, &end, 1, err))) p = e->lower.p, end = *(const size_t *)e->lower_ends.p;
    mlrt_batch_encoding be;
    if (!st) st = mlrt__tokenizer_encode_batch_cut(e->tok, p, &end, 1, opt, e->cut_left, &be, err);
    if (!st) *skip = (uint32_t)be.width - (be.width && mlrt__tok_is_special(e->tok, be.ids[be.width - 1]));
    return st;
}

mlrt_status mlrt_embed_prompt(mlrt_model *m, const char *prompt, size_t prompt_len, const char *texts, const size_t *ends, size_t n,
                              float *out, mlrt_error *err) {
    if (!m || m->kind != MLRT_KIND_ENCODER)
        return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "embed: %s", m ? "the model is not an encoder" : "no model");
    encoder *e = m->impl;
    if (!e->tok)
        return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "embed: the encoder was loaded without tokenizer.json or vocab.txt: "
                          "give token ids to mlrt_run");
    if ((n && (!ends || !out || (!texts && ends[n - 1]))) || (prompt_len && !prompt))
        return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "embed: a NULL argument");
    for (size_t i = 0; i < n; i++)
        if (i && ends[i] < ends[i - 1])
            return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "embed: ends[%zu] = %zu is before ends[%zu] = %zu", i, ends[i], i - 1, ends[i - 1]);
    const char *p = prompt ? prompt : e->prompt;
    const size_t pl = prompt ? prompt_len : e->prompt_len, bad = pl ? mlrt__utf8_invalid_at((const uint8_t *)p, pl) : 0;
    if (bad < pl) return mlrt__fail(err, MLRT_ERR_INVALID_UTF8, "embed: the prompt is not UTF-8 at byte %zu", bad);
    enum { TEXTS = 64 }; /* texts tokenized at a time */
    mlrt_encode_options opt = {e->max_length, MLRT_TRUNCATION_LONGEST_FIRST, MLRT_PADDING_LONGEST};
    uint32_t skip = 0;
    mlrt_status st = pl && e->skip_prompt ? prompt_tokens(e, p, pl, &opt, &skip, err) : MLRT_OK; /* ("": none, as current ST) */
    for (size_t i = 0; i < n && !st; i += TEXTS) {
        size_t k = n - i < TEXTS ? n - i : TEXTS, base = i ? ends[i - 1] : 0, rel[TEXTS];
        for (size_t j = 0; j < k; j++) rel[j] = ends[i + j] - base;
        const char *s = texts ? texts + base : "";
        if (pl && !(st = prefix(e, p, pl, s, rel, k, err))) s = e->prompted.p;
        if (!st && e->lower_case && !(st = lowercase(e, s, rel, k, err))) s = e->lower.p, memcpy(rel, e->lower_ends.p, k * sizeof *rel);
        mlrt_batch_encoding be;
        if (!st) st = mlrt__tokenizer_encode_batch_cut(e->tok, s, rel, k, &opt, e->cut_left, &be, err);
        batch b = {be.rows, be.width, NULL, be.ids, be.attention_mask, NULL, be.type_ids, skip};
        if (!st) st = run_batch(m, &b, out + i * e->dim, err);
    }
    return st;
}

mlrt_status mlrt_embed(mlrt_model *m, const char *texts, const size_t *ends, size_t n, float *out, mlrt_error *err) {
    return mlrt_embed_prompt(m, NULL, 0, texts, ends, n, out, err);
}

mlrt_tokenizer *mlrt_model_tokenizer(mlrt_model *m) {
    return m && m->kind == MLRT_KIND_ENCODER ? ((encoder *)m->impl)->tok : NULL;
}

/* ------------------------------------------------------------------ the family */

static void enc_free(mlrt_model *m) {
    encoder *e = m->impl;
    if (!e) return;
    if (!e->borrowed) {
        for (uint32_t l = 0; e->layer && l < e->layers; l++) {
            for (int k = 0; k < 6; k++) mlrt__dense_release(&e->layer[l].w[k]);
            free(e->layer[l].ln);
        }
        for (uint32_t k = 0; k < e->n_dense; k++) mlrt__dense_release(&e->dense[k]);
        free(e->layer), free(e->pos), free(e->type), free(e->ln), free(e->rel), free(e->facts);
        if (!e->word_in_file) free(e->word.bytes);
        for (size_t i = 0; i < e->n_blocks; i++) free(e->blocks[i]);
        free(e->blocks);
        mlrt_tokenizer_free(e->tok), free(e->prompt);
    }
    free(e->h), free(e->prompted.p), free(e->lower.p), free(e->lower_ends.p);
    free(e);
}

static void *enc_fork(const mlrt_model *m, mlrt_error *err) {
    encoder *e = malloc(sizeof *e);
    if (!e) { mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "fork: out of memory"); return NULL; }
    *e = *(const encoder *)m->impl;
    e->borrowed = true, e->tok = NULL; /* (a fork tokenizes nothing: the tokenizer is not shared) */
    e->h = NULL; /* (its scratch: allocated at its first run) */
    e->prompted = e->lower = e->lower_ends = (mlrt__vec){0};
    return e;
}

static void enc_facts(mlrt__buf *b, const mlrt_model *m) {
    const encoder *e = m->impl;
    mlrt__buf_puts(b, ",");
    mlrt__buf_puts(b, e->facts);
    mlrt__buf_puts(b, e->tok ? ",\"tokenizer\":true" : ",\"tokenizer\":false");
}

static uint64_t enc_params(const mlrt_model *m) {
    const encoder *e = m->impl;
    const uint64_t H = e->hidden, I = e->ffn;
    uint64_t p = ((uint64_t)e->vocab + e->positions + (e->typeless ? 0 : e->types) + 2) * H + e->layers * (4 * H * H + 2 * H * I + 9 * H + I);
    if (e->mpnet) p += 32 * (uint64_t)e->heads; /* (the buckets used) */
    for (uint32_t k = 0; k < e->n_dense; k++) p += (uint64_t)e->dense[k].in * e->dense[k].out + (e->dense[k].has_bias ? e->dense[k].out : 0);
    return p;
}

static uint64_t enc_weight_bytes(const mlrt_model *m) { return ((const encoder *)m->impl)->bytes; }

static const mlrt__family encoder_family = {
    "encoder", enc_run, NULL, NULL, enc_fork, enc_free, enc_facts, enc_params, enc_weight_bytes, NULL,
};

/* ------------------------------------------------------------------ building */

static mlrt_status not_finite(const float *v, size_t n, const char *fmt, const char *name, mlrt_error *err) {
    size_t k = 0;
    while (k < n && isfinite(v[k])) k++;
    return k == n ? MLRT_OK : mlrt__fail(err, MLRT_ERR_NON_FINITE, "%s: tensor '%s' [%zu] is not finite", fmt, name, k);
}

/* A tensor as f32 (quantized ones dequantized), all finite. */
MLRT__SMALL static mlrt_status vec_f32(const mlrt__enc_src *s, const char *fmt, float *out, mlrt_error *err) {
    if (mlrt__dtype_is_quantized(s->dtype)) {
        mlrt_status st = mlrt__quant_dequantize(s->p, s->dtype, (size_t)s->count, out, fmt, s->name, err);
        if (st) return st;
    } else {
        mlrt__to_f32_n(s->p, s->dtype, out, (size_t)s->count);
    }
    return mlrt__all_finite(out, (size_t)s->count) ? MLRT_OK : not_finite(out, (size_t)s->count, fmt, s->name, err);
}

static float *new_f32(const mlrt__enc_src *s, const char *fmt, mlrt_status *st, mlrt_error *err) {
    float *v = malloc((size_t)s->count * sizeof *v + 4);
    *st = v ? vec_f32(s, fmt, v, err) : mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "%s: out of memory for '%s'", fmt, s->name);
    if (*st) free(v), v = NULL;
    return v;
}

/* ------------------------------------------------------------------ using the file's block in place */

/* With mlrt_load_options.take_files the files' blocks are the model's to keep: the word embeddings are read
 * where they lie, and f32 or APR Q8 dense weights are packed over their own bytes, so that the model holds
 * one copy of its weights, not the file's and its own. Only when the tensors so used share no byte (the
 * readers refuse overlapping tensors; this keeps the rule local). */
typedef struct taking {
    mlrt__block *blocks;            /* [n] the caller's; a block the model keeps is moved to e->blocks */
    size_t n;
    bool ok;                        /* blocks given, and the ranges below are disjoint */
} taking;

typedef struct range { uintptr_t begin, end; } range;

static int cmp_range(const void *a, const void *b) {
    const range *x = a, *y = b;
    return x->begin < y->begin ? -1 : x->begin > y->begin;
}

/* (The readers checked that a tensor's bytes lie in its file: no overflow.) */
static range range_of(const uint8_t *p, mlrt_dtype dtype, uint64_t count) {
    uint64_t bytes = 0;
    mlrt__dtype_bytes(dtype, count, &bytes);
    return (range){(uintptr_t)p, (uintptr_t)p + (size_t)bytes};
}

/* Whether the weights may be used in place: no tensor the model reads overlaps another. */
static bool disjoint(const mlrt__enc_desc *d, mlrt_status *st, mlrt_error *err) {
    range *r = malloc((6 + 16 * (size_t)d->layers) * sizeof *r);
    if (!r) { *st = mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "out of memory for the model"); return false; }
    size_t n = 0;
    const mlrt__enc_src *v[6] = {&d->word, &d->pos, &d->type, &d->ln_w, &d->ln_b, &d->rel};
    for (int k = 0; k < 6; k++) r[n++] = range_of(v[k]->p, v[k]->dtype, v[k]->count); /* (absent: [0, 0)) */
    for (uint32_t l = 0; l < d->layers; l++) {
        const mlrt__enc_layer *L = &d->layer[l];
        const mlrt__enc_src *ln[4] = {&L->ln1_w, &L->ln1_b, &L->ln2_w, &L->ln2_b};
        for (int k = 0; k < 4; k++) r[n++] = range_of(ln[k]->p, ln[k]->dtype, ln[k]->count);
        for (int k = 0; k < 6; k++) {
            const mlrt__dense_src *w = &L->w[k];
            r[n++] = range_of(w->w, w->w_dtype, (uint64_t)w->in * w->out);
            if (w->b) r[n++] = range_of(w->b, w->b_dtype, w->out);
        }
    }
    mlrt__sort(r, n, sizeof *r, cmp_range);
    size_t i = 1;
    while (i < n && r[i].begin >= r[i - 1].end) i++;
    free(r);
    return i >= n;
}

/* Keeps (in e->blocks, by the caller's index) the block that [p, p + len) lies in; false when none does. */
static bool keep_block(encoder *e, const taking *t, const void *p, size_t len) {
    const uintptr_t a = (uintptr_t)p;
    for (size_t i = 0; t->ok && i < t->n; i++) {
        const uintptr_t b = (uintptr_t)t->blocks[i].bytes;
        if (b && a >= b && a - b <= t->blocks[i].len && len <= t->blocks[i].len - (a - b)) {
            e->blocks[i] = t->blocks[i].bytes;
            return true;
        }
    }
    return false;
}

/* Hands the kept blocks to the model: the caller frees the others. */
static void take_kept(encoder *e, taking *t) {
    for (size_t i = 0; i < e->n_blocks; i++)
        if (e->blocks[i]) t->blocks[i].bytes = NULL;
}

/* The word embeddings as the file holds them when rows convert exactly (F32, F16, BF16, APR_Q8), else as f32. */
MLRT__SMALL static mlrt_status word_table(encoder *e, const mlrt__enc_src *s, const taking *tk, const char *fmt, mlrt_error *err) {
    mlrt_status st = MLRT_OK;
    table *t = &e->word;
    t->dtype = s->dtype;
    if (s->dtype != MLRT_F32 && s->dtype != MLRT_F16 && s->dtype != MLRT_BF16 && s->dtype != MLRT_APR_Q8) {
        t->dtype = MLRT_F32;
        t->bytes = (uint8_t *)new_f32(s, fmt, &st, err);
        e->bytes += s->count * 4;
        return st;
    }
    size_t es = s->dtype == MLRT_APR_Q8 ? 1 : mlrt_dtype_size(s->dtype), bytes = (size_t)s->count * es;
    const uint8_t *src = s->p;
    if (s->dtype == MLRT_APR_Q8) {
        t->scale = mlrt__to_f32(src, MLRT_F32), src += 4;
        if (!isfinite(t->scale * 128.0f)) return mlrt__fail(err, MLRT_ERR_NON_FINITE, "%s: tensor '%s' APR_Q8 scale is not finite (x 128)", fmt, s->name);
    }
    if (keep_block(e, tk, src, bytes)) {
        t->bytes = (uint8_t *)(uintptr_t)src, e->word_in_file = true; /* read where it lies */
    } else {
        if (!(t->bytes = malloc(bytes + 4))) return mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "%s: out of memory for '%s'", fmt, s->name);
        memcpy(t->bytes, src, bytes);
    }
    e->bytes += bytes;
    if (s->dtype == MLRT_APR_Q8) return MLRT_OK;
    float buf[256];
    for (size_t i = 0; i < s->count && !st; i += 256) { /* finite, in runs of 256 (f32: read where they lie) */
        size_t k = s->count - i < 256 ? (size_t)s->count - i : 256;
        if (s->dtype == MLRT_F32 && mlrt__all_finite(t->bytes + i * es, k)) continue;
        mlrt__to_f32_n(t->bytes + i * es, s->dtype, buf, k);
        if (!mlrt__all_finite(buf, k)) {
            size_t j = 0;
            while (isfinite(buf[j])) j++;
            st = mlrt__fail(err, MLRT_ERR_NON_FINITE, "%s: tensor '%s' [%zu] is not finite", fmt, s->name, i + j);
        }
    }
    return st;
}

MLRT__SMALL static mlrt_status build_layer(encoder *e, const mlrt__enc_layer *s, const taking *tk, const char *fmt, layer *L,
                                           mlrt_error *err) {
    mlrt_status st = MLRT_OK;
    for (int k = 0; k < 6 && !st; k++) {
        mlrt__dense *w = &L->w[k];
        const mlrt__dense_src *src = &s->w[k];
        range r = range_of(src->w, src->w_dtype, (uint64_t)src->in * src->out);
        if (tk->ok && (src->w_dtype == MLRT_F32 || src->w_dtype == MLRT_APR_Q8) && keep_block(e, tk, src->w, r.end - r.begin)) {
            if ((st = mlrt__dense_pack_over(src, fmt, w, err))) break;
        } else if ((st = mlrt__dense_pack(src, fmt, w, err))) {
            break;
        }
        e->bytes += (w->wq ? w->q_bytes + w->qscale_bytes : (uint64_t)w->out_padded * w->in * 4) + w->out_padded * 4;
    }
    const mlrt__enc_src *ln[4] = {&s->ln1_w, &s->ln1_b, &s->ln2_w, &s->ln2_b};
    if (!st && !(L->ln = malloc(4 * (size_t)e->hidden * sizeof *L->ln)))
        st = mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "%s: out of memory", fmt);
    for (int k = 0; k < 4 && !st; k++) st = vec_f32(ln[k], fmt, L->ln + k * e->hidden, err);
    e->bytes += 4 * e->hidden * 4;
    return st;
}

/* MPNetEncoder's bucket of the distance r = key's index - query's index: |r| itself below 8, then one bucket
 * per half octave up to 15 (its log-spaced formula, whose float32 steps give exactly these bounds), 16 more
 * for keys after the query. */
static uint32_t mpnet_bucket(ptrdiff_t r) {
    static const uint8_t from[8] = {8, 12, 16, 23, 32, 46, 64, 91}; /* the least distance of buckets 8..15 */
    const size_t n = (size_t)(r < 0 ? -r : r);
    uint32_t b = n < 8 ? (uint32_t)n : 7;
    while (n >= 8 && b < 15 && n >= from[b - 7]) b++;
    return b + (r > 0 ? 16 : 0);
}

/* MPNet's bias of every distance for each head: e->rel [heads][2 positions - 1] from the table [buckets][heads]. */
MLRT__SMALL static mlrt_status relative_bias(encoder *e, const mlrt__enc_src *s, const char *fmt, mlrt_error *err) {
    const size_t P = e->positions, span = 2 * P - 1;
    mlrt_status st;
    const uint64_t bytes = (uint64_t)e->heads * span * sizeof *e->rel; /* (heads < 2^25, span < 2^17: no overflow in 64 bits) */
    float *t = new_f32(s, fmt, &st, err);
    if (t && !(e->rel = bytes < SIZE_MAX / 2 ? malloc((size_t)bytes) : NULL))
        st = mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "%s: out of memory for the position bias", fmt);
    for (size_t i = 0; !st && i < span; i++) {
        const uint32_t b = mpnet_bucket((ptrdiff_t)i - (ptrdiff_t)(P - 1));
        for (size_t a = 0; a < e->heads; a++) e->rel[a * span + i] = t[b * e->heads + a];
    }
    free(t);
    e->bytes += e->heads * span * 4;
    return st;
}

/* The inputs input_ids, attention_mask, token_type_ids [batch, sequence] and the output sentence_embedding. */
static mlrt_status io_lists(mlrt_model *m, const encoder *e) {
    static const char *const names[3] = {"input_ids", "attention_mask", "token_type_ids"};
    m->n_inputs = 3, m->n_outputs = 1;
    if (!(m->inputs = calloc(3, sizeof *m->inputs)) || !(m->outputs = calloc(1, sizeof *m->outputs))) return MLRT_ERR_OUT_OF_MEMORY;
    for (int k = 0; k < 3; k++) {
        mlrt__io *io = &m->inputs[k];
        io->t = (mlrt_tensor){names[k], k == 1 ? MLRT_U8 : MLRT_I64, 2, {-1, -1}, NULL};
        io->sym[0] = "batch", io->sym[1] = "sequence", io->max[1] = e->positions;
        io->optional = k > 0;
    }
    m->outputs[0].t = (mlrt_tensor){"sentence_embedding", MLRT_F32, 2, {-1, e->dim}, NULL};
    m->outputs[0].sym[0] = "batch";
    return MLRT_OK;
}

MLRT__SMALL mlrt_model *mlrt__build_encoder(mlrt__enc_desc *d, mlrt_tokenizer *tok, mlrt__block *blocks, size_t n_blocks,
                                            mlrt_error *err) {
    encoder *e = calloc(1, sizeof *e);
    if (e) e->tok = tok, e->facts = d->facts_json, d->facts_json = NULL;
    mlrt_model *m = e ? mlrt__model_new(&encoder_family, e, d->format, MLRT_KIND_ENCODER, err) : NULL;
    if (!m) {
        if (!e) mlrt_tokenizer_free(tok), mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "out of memory for the model");
        return NULL;
    }
    e->hidden = d->hidden, e->layers = d->layers, e->heads = d->heads, e->ffn = d->ffn, e->vocab = d->vocab;
    e->positions = d->positions, e->types = d->types ? d->types : 1, e->eps = d->eps, e->pooling = d->pooling, e->mpnet = d->mpnet;
    e->typeless = !d->types;
    e->normalize = d->normalize, e->lower_case = d->lower_case, e->cut_left = d->cut_left, e->max_length = d->max_length;
    e->prompt = d->prompt, e->prompt_len = d->prompt_len, e->skip_prompt = !d->include_prompt, d->prompt = NULL;
    for (int k = 0; k < 6; k++) e->pooled += (d->pooling >> k & 1) * d->hidden;
    e->dim = e->widest = e->pooled;
    e->cap = d->positions > 256 ? d->positions : 256;
    const char *fmt = mlrt_format_name(d->format);
    mlrt_status st = MLRT_OK;
    if (tok && tok->d.n_ids > d->vocab)
        st = mlrt__fail(err, MLRT_ERR_BAD_DIMENSIONS, "load_files: %s has %u token ids but the model's vocab_size is %u",
                        tok->d.source, tok->d.n_ids, d->vocab);
    taking tk = {blocks, n_blocks, false};
    if (!st && blocks && n_blocks) {
        tk.ok = disjoint(d, &st, err) && (e->blocks = calloc(n_blocks, sizeof *e->blocks));
        e->n_blocks = e->blocks ? n_blocks : 0;
    }
    if (!st) st = word_table(e, &d->word, &tk, fmt, err);
    if (!st && (e->pos = new_f32(&d->pos, fmt, &st, err)) &&
        !(e->type = e->typeless ? calloc(d->hidden, sizeof *e->type) : new_f32(&d->type, fmt, &st, err)) && !st) /* (none: a row of zeros) */
        st = mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "%s: out of memory", fmt);
    if (!st && !(e->ln = malloc(2 * (size_t)d->hidden * sizeof *e->ln))) st = mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "%s: out of memory", fmt);
    if (!st && d->mpnet) st = relative_bias(e, &d->rel, fmt, err);
    if (!st) st = vec_f32(&d->ln_w, fmt, e->ln, err);
    if (!st) st = vec_f32(&d->ln_b, fmt, e->ln + d->hidden, err);
    e->bytes += ((uint64_t)d->positions + e->types + 2) * d->hidden * 4;
    if (!st && !(e->layer = calloc(d->layers, sizeof *e->layer))) st = mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "%s: out of memory", fmt);
    for (uint32_t l = 0; l < d->layers && !st; l++) st = build_layer(e, &d->layer[l], &tk, fmt, &e->layer[l], err);
    for (uint32_t k = 0; k < d->n_dense && !st; k++) { /* (packed apart: their files' blocks are not kept) */
        const mlrt__dense_src *w = &d->dense[k].w;
        if (!(st = mlrt__dense_pack(w, fmt, &e->dense[k], err))) e->n_dense = k + 1;
        e->dim = w->out, e->widest = w->out > e->widest ? w->out : e->widest;
        e->bytes += (uint64_t)e->dense[k].out_padded * (w->in + 1) * 4;
    }
    if (!st && io_lists(m, e)) st = mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "out of memory for the model");
    take_kept(e, &tk); /* (the model frees them from here on, with itself) */
    if (st) {
        mlrt_free(m);
        return NULL;
    }
    m->dtype = d->dtype, m->task = MLRT_TASK_EMBEDDING;
    return mlrt__model_finish(m, d->ts, err);
}

/* ------------------------------------------------------------------ warming up */

/* The loading's packing and the forward pass's kernels, a few times over small buffers of their own, with no
 * model: dense layers in f32 and APR Q8 packed in place, run on 16 rows and on 1, LayerNorm with a residual,
 * GELU, attention with and without a bias, the pooling and the L2 norm. An engine that compiles wasm in tiers
 * (V8) runs a function's first calls on baseline code and compiles it optimized in the background once it
 * has run a while, but a call already running stays on baseline code. A host that calls this before it reads
 * an encoder's weights has those compiled while it reads: the packing and the first embedding run optimized. */
mlrt_status mlrt__encoder_warm_up(mlrt_error *err) {
    /* rows; f32 width; Q8 inputs and outputs (4 runs of 16 x 256 x 128: enough of q8_rows4 for V8 to optimize
     * it); head width. 4-6 ms on the first call, most of it compiling these functions to baseline code, as
     * the first embedding would; 0.6 ms on optimized code */
    enum { R = 16, W = 64, QI = 256, QO = 128, D = 16, REPS = 4, FLOATS = 4 * R * QI + W * W + D * R + 4 * R };
    float *x = malloc(FLOATS * sizeof *x), *y = x + R * QI, *z = y + R * QI, *o = z + R * QI;
    float *w = o + R * QI, *kt = w + W * W, *p = kt + D * R, *rel = p + 2 * R; /* rel [2R - 1] */
    uint8_t *q8 = calloc(4 + QI * QO, 1);
    int16_t *xq = malloc(MLRT__QX(QI) * sizeof *xq);
    int32_t xsum[QI / 4 + 1];
    uint32_t nz[QI + 2], pos[R];
    mlrt_status st = !x || !q8 || !xq ? mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "warm_up: out of memory") : MLRT_OK;
    for (size_t i = 0; !st && i < FLOATS; i++) x[i] = (float)(i % 7) * 0.25f - 0.75f; /* (Q8 skips zeros) */
    const float scale = 0.015625f;
    if (!st) memcpy(q8, &scale, 4); /* APR_Q8: the scale, then the weights (zeros) */
    for (uint32_t i = 0; i < R; i++) pos[i] = i;
    const mlrt__attn_bias bias = {rel + R - 1, pos, pos};
    const mlrt__norm norm = {R, W, 1e-12f, w, NULL};
    for (int k = 0; k < REPS && !st; k++) {
        mlrt__dense f32 = {0}, q = {0};
        mlrt__dense_src s = {"w", "b", W, W, (const uint8_t *)w, MLRT_F32, false, NULL, MLRT_F32, MLRT_ACT_IDENTITY, false};
        if (!(st = mlrt__dense_pack_over(&s, "warm_up", &f32, err))) { /* (packed in place: w and q8 stay ours) */
            s.w = q8, s.w_dtype = MLRT_APR_Q8, s.in = QI, s.out = QO;
            st = mlrt__dense_pack_over(&s, "warm_up", &q, err);
        }
        for (size_t rows = R; rows && !st; rows = rows > 1 ? 1 : 0) {
            mlrt__dense_forward(&f32, x, W, y, W, rows);
            mlrt__quant_forward(&q, x, QI, z, QO, rows, 0, QO, xq, xsum, nz);
        }
        if (!st) {
            mlrt__layernorm(&norm, x, z, y, NULL, NULL);
            mlrt__gelu_n(y, R * W);
            for (int b = 0; b < 2; b++) mlrt__attention(x, R, y, z, W, R, D, 0.25f, b ? &bias : NULL, o, kt, p);
            mlrt__pool_tokens(o, W, R, W, pos, MLRT__TPOOL_MEAN, z);
            mlrt__l2_normalize(z, W);
        }
        mlrt__dense_release(&f32), mlrt__dense_release(&q);
    }
    free(x), free(q8), free(xq);
    return st;
}
