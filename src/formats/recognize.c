/* formats/recognize.c — which model a set of named tensors is.
 *
 *   linear regression    'coefficients' [n] + 'intercept' [1], or 'weights' [n] + 'bias' [1] when
 *                        metadata model_type is "linear_regression" (aprender's .apr v2 files)
 *   logistic regression  the same + metadata model_type = "logistic_regression"
 *   MLP (named)          '<prefix>.weight' (PyTorch) or '<prefix>.kernel' (Keras, JAX/Flax; '/' also
 *                        separates) + '<prefix>.bias' [out] per layer, layers in natural order of
 *                        prefix: fc1 < fc2 < fc10, layers.0 < layers.2
 *   MLP (aprender)       '0', '1', ... in parameter order: weight, then bias [out]
 * A weight is [out, in] or [in, out]: see "orientation" below.
 * MLP activations come from __metadata__ "activations" ("relu,relu,softmax"); by default
 * ReLU between layers and softmax at the end (identity when there is a single output).
 * APR_Q8 / APR_Q4 weights stay quantized (kernels/quant.c); GGUF Q4_K / Q6_K are dequantized to f32 at load. */
#include "formats.h"
#include <stdlib.h>
#include <string.h>

typedef struct layer_ref {
    const char *name;          /* prefix or tensor name, for messages */
    size_t name_len;
    const mlrt__tensor *w, *b;  /* b may be NULL */
} layer_ref;

typedef struct ctx {
    const uint8_t *data;       /* start of the data section */
    const mlrt__tensorset *ts;
    const char *fmt;
    mlrt_weight_layout layout; /* the caller's, or AUTO */
    mlrt__desc *d;             /* what is recognised */
    mlrt_error *err;
} ctx;

/* --------------------------------------------------------- activations */

static bool activation_from_name(const char *s, size_t n, mlrt_activation *out) {
    static const struct { const char *name; mlrt_activation act; } names[] = {
        {"identity", MLRT_ACT_IDENTITY}, {"linear", MLRT_ACT_IDENTITY}, {"none", MLRT_ACT_IDENTITY},
        {"relu", MLRT_ACT_RELU}, {"sigmoid", MLRT_ACT_SIGMOID}, {"logistic", MLRT_ACT_SIGMOID},
        {"tanh", MLRT_ACT_TANH}, {"softmax", MLRT_ACT_SOFTMAX}, {"gelu", MLRT_ACT_GELU},
        {"leaky_relu", MLRT_ACT_LEAKY_RELU}, {"silu", MLRT_ACT_SILU}, {"swish", MLRT_ACT_SILU},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strlen(names[i].name) == n && memcmp(names[i].name, s, n) == 0) { *out = names[i].act; return true; }
    return false;
}

/* A metadata value and its length: an escaped NUL ("relu\u0000x") is part of the value. */
static const char *meta_value(const mlrt__tensorset *ts, const char *key, size_t *len) {
    const char *v = mlrt__tensorset_meta(ts, key);
    for (size_t i = 0; v && i < ts->meta_count; i++)
        if (ts->meta[i].value == v) *len = ts->meta[i].value_len;
    return v;
}

static mlrt_status read_activations(ctx *c, mlrt__dense_src *src, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) src[i].act = i + 1 < n ? MLRT_ACT_RELU : MLRT_ACT_SOFTMAX;
    if (src[n - 1].out == 1) src[n - 1].act = MLRT_ACT_IDENTITY;
    size_t len = 0;
    const char *spec = meta_value(c->ts, "activations", &len);
    if (!spec) return MLRT_OK;
    const char *stop = spec + len;
    uint32_t i = 0;
    for (const char *p = spec;; i++) {
        const char *end = memchr(p, ',', (size_t)(stop - p));
        if (!end) end = stop;
        const char *a = p, *z = end;
        while (a < z && *a == ' ') a++;
        while (z > a && z[-1] == ' ') z--;
        if (i < n && !activation_from_name(a, (size_t)(z - a), &src[i].act))
            return mlrt__fail(c->err, MLRT_ERR_UNSUPPORTED, "%s: metadata 'activations' names unknown activation '%.*s'",
                             c->fmt, (int)(z - a), a);
        if (end == stop) break;
        p = end + 1;
    }
    if (i + 1 != n)
        return mlrt__fail(c->err, MLRT_ERR_BAD_HEADER, "%s: metadata 'activations' lists %u activations for %u layers",
                         c->fmt, i + 1, n);
    return MLRT_OK;
}

/* --------------------------------------------------------------- layers */

static mlrt_status float_tensor(ctx *c, const mlrt__tensor *t) {
    if (mlrt__dtype_is_quantized(t->dtype)) return MLRT_OK;
    if (!mlrt__dtype_is_float(t->dtype))
        return mlrt__fail(c->err, MLRT_ERR_NOT_A_MODEL, "%s: tensor '%s' is %s; weights must be F16, BF16, F32, F64, APR_Q8, APR_Q4, Q4_K or Q6_K",
                         c->fmt, t->name, mlrt_dtype_name(t->dtype));
    return MLRT_OK;
}

/* ------------------------------------------------------------ orientation
 *
 * A 2-D weight [a, b] is [out, in] (PyTorch) or [in, out] (Keras, JAX/Flax, aprender). Per layer,
 * each orientation is allowed unless the bias contradicts it (its length must be the layer's out),
 * or the caller fixed the layout; consecutive layers must chain (out of one = in of the next).
 * Among the assignments that satisfy all of this, the one that follows the names best wins:
 * 'kernel' -> [in, out], 'weight' -> [out, in], no hint -> [out, in]. A layer whose orientation
 * two valid assignments disagree on, and whose name gives no hint, took PyTorch's order: "guessed". */

enum { OUT_IN = 0, IN_OUT = 1 };

typedef struct orient {
    uint64_t a, b;          /* the weight's shape */
    bool allowed[2];        /* by the bias and the caller */
    int hint;               /* OUT_IN / IN_OUT from the name, -1: none */
} orient;

static uint64_t o_in(const orient *o, int s) { return s == IN_OUT ? o->a : o->b; }
static uint64_t o_out(const orient *o, int s) { return s == IN_OUT ? o->b : o->a; }
static int o_score(const orient *o, int s) { return o->hint == s ? 2 : (o->hint < 0 && s == OUT_IN) ? 1 : 0; }

static int name_hint(const mlrt__tensor *w) {
    size_t n = w->name_len;
    if (n >= 6 && memcmp(w->name + n - 6, "kernel", 6) == 0) return IN_OUT;
    if (n >= 6 && memcmp(w->name + n - 6, "weight", 6) == 0) return OUT_IN;
    return -1;
}

/* Chooses s[i] for n layers (Viterbi over the chain); false when no assignment is valid.
 * guessed[i]: both orientations of layer i occur in some valid assignment. */
static bool choose_orientation(const orient *o, uint32_t n, int *s, bool *guessed) {
    int score[MLRT__MAX_LAYERS][2], from[MLRT__MAX_LAYERS][2];
    bool fwd[MLRT__MAX_LAYERS][2], bwd[MLRT__MAX_LAYERS][2];
    for (uint32_t i = 0; i < n; i++)
        for (int t = 0; t < 2; t++) {
            score[i][t] = -1;
            fwd[i][t] = o[i].allowed[t] && (i == 0 || ((fwd[i - 1][0] && o_out(&o[i - 1], 0) == o_in(&o[i], t)) ||
                                                       (fwd[i - 1][1] && o_out(&o[i - 1], 1) == o_in(&o[i], t))));
            if (!fwd[i][t]) continue;
            if (i == 0) { score[i][t] = o_score(&o[i], t); continue; }
            for (int p = 0; p < 2; p++)
                if (score[i - 1][p] >= 0 && o_out(&o[i - 1], p) == o_in(&o[i], t) && score[i - 1][p] + o_score(&o[i], t) > score[i][t])
                    score[i][t] = score[i - 1][p] + o_score(&o[i], t), from[i][t] = p;
        }
    for (uint32_t k = n; k-- > 0;)
        for (int t = 0; t < 2; t++)
            bwd[k][t] = o[k].allowed[t] && (k + 1 == n || ((bwd[k + 1][0] && o_out(&o[k], t) == o_in(&o[k + 1], 0)) ||
                                                          (bwd[k + 1][1] && o_out(&o[k], t) == o_in(&o[k + 1], 1))));
    int last = score[n - 1][1] > score[n - 1][0] ? 1 : 0;
    if (score[n - 1][last] < 0) return false;
    for (uint32_t k = n; k-- > 0;) {
        s[k] = last;
        guessed[k] = fwd[k][0] && bwd[k][0] && fwd[k][1] && bwd[k][1];
        if (k) last = from[k][last];
    }
    return true;
}

/* Why no orientation works: the first contradiction in the layers' preferred orientations. */
static mlrt_status explain_orientation(ctx *c, const layer_ref *refs, const orient *o, uint32_t n) {
    int s[MLRT__MAX_LAYERS];
    for (uint32_t i = 0; i < n; i++) {
        const mlrt__tensor *w = refs[i].w, *b = refs[i].b;
        s[i] = o[i].allowed[OUT_IN] && o[i].allowed[IN_OUT] ? (o[i].hint == IN_OUT ? IN_OUT : OUT_IN)
             : o[i].allowed[OUT_IN] ? OUT_IN : IN_OUT;
        if (!o[i].allowed[OUT_IN] && !o[i].allowed[IN_OUT])
            return mlrt__fail(c->err, MLRT_ERR_BAD_DIMENSIONS, "%s: bias '%s' must have shape [%llu] to match weight '%s'", c->fmt,
                              b ? b->name : "", (unsigned long long)(c->layout == MLRT_LAYOUT_IN_OUT ? o[i].b : o[i].a), w->name);
        if (i > 0 && o_in(&o[i], s[i]) != o_out(&o[i - 1], s[i - 1])) {
            return mlrt__fail(c->err, MLRT_ERR_BAD_DIMENSIONS, "%s: layer '%.*s' takes %llu inputs but layer '%.*s' gives %llu"
                              " (as [out, in] or [in, out])",
                              c->fmt, (int)refs[i].name_len, refs[i].name, (unsigned long long)o_in(&o[i], s[i]),
                              (int)refs[i - 1].name_len, refs[i - 1].name, (unsigned long long)o_out(&o[i - 1], s[i - 1]));
        }
    }
    return mlrt__fail(c->err, MLRT_ERR_BAD_DIMENSIONS, "%s: the layers' shapes do not chain in any orientation", c->fmt);
}

/* The description, once its layers are set. */
static void describe(ctx *c, mlrt_kind kind, mlrt_dtype dtype, uint32_t n_layers) {
    c->d->type = MLRT__DESC_DENSE;
    c->d->format = c->ts->format;
    c->d->kind = kind;
    c->d->dtype = dtype;
    c->d->n_layers = n_layers;
    c->d->ts = c->ts;
}

/* Turns layer references into dense sources, checking shapes, orientation, chaining and limits. */
static mlrt_status build_mlp(ctx *c, const layer_ref *refs, uint32_t n) {
    mlrt__dense_src *src = c->d->layers;
    orient o[MLRT__MAX_LAYERS];
    uint64_t params = 0;
    for (uint32_t i = 0; i < n; i++) {
        const mlrt__tensor *w = refs[i].w, *b = refs[i].b;
        mlrt_status st = float_tensor(c, w);
        if (!st && b) st = float_tensor(c, b);
        if (st) return st;
        if (w->rank != 2) {
            return mlrt__fail(c->err, MLRT_ERR_NOT_A_MODEL, "%s: weight '%s' has %u dimensions; a dense weight is [out, in] or [in, out]",
                             c->fmt, w->name, w->rank);
        }
        uint64_t a = w->shape[0], bb = w->shape[1];
        if (a == 0 || bb == 0 || a > MLRT__MAX_DIM || bb > MLRT__MAX_DIM)
            return mlrt__fail(c->err, MLRT_ERR_BAD_DIMENSIONS, "%s: weight '%s' shape [%llu, %llu] must have dimensions in 1..%u",
                             c->fmt, w->name, (unsigned long long)a, (unsigned long long)bb, MLRT__MAX_DIM);
        bool bias_ok = !b || b->rank == 1;
        o[i] = (orient){a, bb, {bias_ok && (!b || b->shape[0] == a), bias_ok && (!b || b->shape[0] == bb)}, name_hint(w)};
        /* quantized weights are packed from [out, in] only */
        if (c->layout == MLRT_LAYOUT_IN_OUT || mlrt__dtype_is_quantized(w->dtype)) o[i].allowed[OUT_IN] &= !(c->layout == MLRT_LAYOUT_IN_OUT);
        if (c->layout == MLRT_LAYOUT_OUT_IN || mlrt__dtype_is_quantized(w->dtype)) o[i].allowed[IN_OUT] = false;
        params += a * bb + (b ? b->count : 0);
        if (params > MLRT__MAX_PARAMS)
            return mlrt__fail(c->err, MLRT_ERR_BAD_DIMENSIONS, "%s: more than %llu parameters", c->fmt,
                             (unsigned long long)MLRT__MAX_PARAMS);
    }
    int s[MLRT__MAX_LAYERS];
    bool guessed[MLRT__MAX_LAYERS];
    if (!choose_orientation(o, n, s, guessed)) {
        return explain_orientation(c, refs, o, n);
    }
    for (uint32_t i = 0; i < n; i++) {
        const mlrt__tensor *w = refs[i].w, *b = refs[i].b;
        src[i] = (mlrt__dense_src){w->name, b ? b->name : "", (uint32_t)o_in(&o[i], s[i]), (uint32_t)o_out(&o[i], s[i]),
                                  c->data + w->begin, w->dtype, s[i] == IN_OUT, b ? c->data + b->begin : NULL,
                                  b ? b->dtype : MLRT_F32, MLRT_ACT_IDENTITY,
                                  guessed[i] && o[i].hint < 0 && c->layout == MLRT_LAYOUT_AUTO};
    }
    mlrt_status st = read_activations(c, src, n);
    if (!st) describe(c, MLRT_KIND_MLP, refs[0].w->dtype, n);
    return st;
}

/* ------------------------------------------------------ aprender numbering */

static bool decimal_name(const mlrt__tensor *t, uint64_t *v) {
    if (t->name_len == 0 || t->name_len > 9 || (t->name[0] == '0' && t->name_len > 1)) return false;
    uint64_t x = 0;
    for (size_t i = 0; i < t->name_len; i++) {
        if (t->name[i] < '0' || t->name[i] > '9') return false;
        x = x * 10 + (uint64_t)(t->name[i] - '0');
    }
    *v = x;
    return true;
}

static mlrt_status numbered_mlp(ctx *c) {
    size_t n = c->ts->count;
    const mlrt__tensor **by_index = calloc(n, sizeof *by_index);
    layer_ref refs[MLRT__MAX_LAYERS];
    uint32_t layers = 0;
    mlrt_status st = MLRT_OK;
    if (!by_index) return mlrt__fail(c->err, MLRT_ERR_OUT_OF_MEMORY, "out of memory");
    for (size_t i = 0; i < n; i++) {
        uint64_t k = 0;
        if (!decimal_name(&c->ts->tensors[i], &k) || k >= n || by_index[k]) {
            st = mlrt__fail(c->err, MLRT_ERR_NOT_A_MODEL, "%s: numbered tensors must be '0'..'%zu' without gaps; found '%s'",
                           c->fmt, n - 1, c->ts->tensors[i].name);
            goto done;
        }
        by_index[k] = &c->ts->tensors[i];
    }
    for (size_t k = 0; k < n; layers++) {
        if (layers == MLRT__MAX_LAYERS) {
            st = mlrt__fail(c->err, MLRT_ERR_NOT_A_MODEL, "%s: more than %d layers", c->fmt, MLRT__MAX_LAYERS);
            goto done;
        }
        const mlrt__tensor *w = by_index[k++], *b = NULL;
        if (w->rank != 2) {
            st = mlrt__fail(c->err, MLRT_ERR_NOT_A_MODEL, "%s: tensor '%s' has %u dimensions where a [out, in] weight comes next",
                           c->fmt, w->name, w->rank);
            goto done;
        }
        if (k < n && by_index[k]->rank == 1) b = by_index[k++];
        refs[layers] = (layer_ref){w->name, w->name_len, w, b};
    }
    st = build_mlp(c, refs, layers);
done:
    free(by_index);
    return st;
}

/* ------------------------------------------------------- PyTorch naming */

static bool suffix(const mlrt__tensor *t, const char *s, size_t *prefix_len) {
    size_t n = strlen(s);
    if (t->name_len <= n || memcmp(t->name + t->name_len - n, s, n) != 0) return false;
    *prefix_len = t->name_len - n;
    return true;
}

/* Natural order: runs of digits compare as numbers, "fc2" < "fc10", "layers.2" < "layers.10". */
static int natural_cmp(const char *a, size_t an, const char *b, size_t bn) {
    size_t i = 0, j = 0;
    while (i < an && j < bn) {
        bool da = a[i] >= '0' && a[i] <= '9', db = b[j] >= '0' && b[j] <= '9';
        if (da && db) {
            while (i < an && a[i] == '0') i++;
            while (j < bn && b[j] == '0') j++;
            size_t si = i, sj = j;
            while (i < an && a[i] >= '0' && a[i] <= '9') i++;
            while (j < bn && b[j] >= '0' && b[j] <= '9') j++;
            if (i - si != j - sj) return i - si < j - sj ? -1 : 1;
            int c = memcmp(a + si, b + sj, i - si);
            if (c) return c;
        } else {
            if (a[i] != b[j]) return (unsigned char)a[i] < (unsigned char)b[j] ? -1 : 1;
            i++, j++;
        }
    }
    return (an - i > 0) - (bn - j > 0);
}

/* '<layer>.weight' (PyTorch) or '<layer>.kernel' (Keras, JAX/Flax; also with '/'): *prefix_len = len('<layer>'). */
static bool weight_name(const mlrt__tensor *t, size_t *prefix_len) {
    return suffix(t, ".weight", prefix_len) || suffix(t, "/weight", prefix_len) || suffix(t, ".kernel", prefix_len) ||
           suffix(t, "/kernel", prefix_len);
}

static int cmp_refs(const void *x, const void *y) {
    const layer_ref *a = x, *b = y;
    int c = natural_cmp(a->name, a->name_len, b->name, b->name_len);
    return c ? c : (a->name_len > b->name_len) - (a->name_len < b->name_len);
}

static mlrt_status pytorch_mlp(ctx *c) {
    layer_ref refs[MLRT__MAX_LAYERS];
    uint32_t n = 0;
    /* weights first: each names a layer */
    for (size_t i = 0; i < c->ts->count; i++) {
        const mlrt__tensor *t = &c->ts->tensors[i];
        size_t plen;
        if (!weight_name(t, &plen)) continue;
        if (n == MLRT__MAX_LAYERS)
            return mlrt__fail(c->err, MLRT_ERR_NOT_A_MODEL, "%s: more than %d layers", c->fmt, MLRT__MAX_LAYERS);
        refs[n++] = (layer_ref){t->name, plen, t, NULL};
    }
    /* then every other tensor must be the bias of one of them */
    for (size_t i = 0; i < c->ts->count; i++) {
        const mlrt__tensor *t = &c->ts->tensors[i];
        size_t plen;
        if (weight_name(t, &plen)) continue;
        uint32_t k = 0;
        bool is_bias = suffix(t, ".bias", &plen) || suffix(t, "/bias", &plen);
        if (is_bias)
            while (k < n && !(refs[k].name_len == plen && memcmp(refs[k].name, t->name, plen) == 0)) k++;
        if (!is_bias || k == n)
            return mlrt__fail(c->err, MLRT_ERR_NOT_A_MODEL,
                             "%s: tensor '%s' is not part of a dense layer (expected '<layer>.weight' or '<layer>.kernel', "
                             "and '<layer>.bias')",
                             c->fmt, t->name);
        refs[k].b = t;
    }
    mlrt__sort(refs, n, sizeof *refs, cmp_refs);
    return build_mlp(c, refs, n);
}

/* ---------------------------------------------------------- regression */

/* The whole model_type value, or NULL (also when it holds a NUL). */
static const char *model_type(ctx *c) {
    size_t len = 0;
    const char *t = meta_value(c->ts, "model_type", &len);
    return t && strlen(t) == len ? t : NULL;
}

static bool type_is(const char *type, const char *snake, const char *camel) {
    return type && (strcmp(type, snake) == 0 || strcmp(type, camel) == 0);
}

static mlrt_status regression(ctx *c, const mlrt__tensor *coef, const char *icpt_name) {
    const mlrt__tensor *icpt = mlrt__tensorset_find(c->ts, icpt_name);
    if (!icpt) {
        return mlrt__fail(c->err, MLRT_ERR_NOT_A_MODEL, "%s: a regression model is exactly '%s' and '%s'; '%s' is missing",
                         c->fmt, coef->name, icpt_name, icpt_name);
    }
    if (c->ts->count != 2) {
        return mlrt__fail(c->err, MLRT_ERR_NOT_A_MODEL, "%s: a regression model is exactly '%s' and '%s'; other tensors are present",
                         c->fmt, coef->name, icpt_name);
    }
    mlrt_status st = float_tensor(c, coef);
    if (!st) st = float_tensor(c, icpt);
    if (st) return st;
    bool vector = coef->rank == 1 || (coef->rank == 2 && (coef->shape[0] == 1 || coef->shape[1] == 1));
    if (!vector || coef->count == 0 || coef->count > MLRT__MAX_DIM)
        return mlrt__fail(c->err, MLRT_ERR_BAD_DIMENSIONS, "%s: '%s' must be a vector of 1..%u values", c->fmt, coef->name,
                         MLRT__MAX_DIM);
    if (icpt->count != 1 || icpt->rank > 1)
        return mlrt__fail(c->err, MLRT_ERR_BAD_DIMENSIONS, "%s: '%s' must hold exactly one value, has %llu", c->fmt,
                         icpt->name, (unsigned long long)icpt->count);
    bool logistic = type_is(model_type(c), "logistic_regression", "LogisticRegression");
    c->d->layers[0] = (mlrt__dense_src){coef->name, icpt->name, (uint32_t)coef->count, 1, c->data + coef->begin, coef->dtype,
                                        false, c->data + icpt->begin, icpt->dtype,
                                        logistic ? MLRT_ACT_SIGMOID : MLRT_ACT_IDENTITY, false};
    describe(c, logistic ? MLRT_KIND_LOGISTIC_REGRESSION : MLRT_KIND_LINEAR_REGRESSION, coef->dtype, 1);
    return MLRT_OK;
}

mlrt_status mlrt__recognize(const uint8_t *file, const mlrt__tensorset *ts, mlrt_weight_layout layout, mlrt__desc *d,
                            mlrt_error *err) {
    memset(d, 0, sizeof *d);
    ctx c = {file + ts->data_begin, ts, mlrt_format_name(ts->format), layout, d, err};
    if (ts->count == 0)
        return mlrt__fail(err, MLRT_ERR_NOT_A_MODEL, "%s: the file holds no tensors", c.fmt);
    if (mlrt__is_bert(ts))
        return mlrt__fail(err, MLRT_ERR_NOT_A_MODEL, "%s: a BERT encoder: load it with its config.json and "
                          "tokenizer through mlrt_load_files (rt.loadEncoder)", c.fmt);
    const mlrt__tensor *coef = mlrt__tensorset_find(ts, "coefficients");
    if (coef) return regression(&c, coef, "intercept");
    const char *type = model_type(&c);
    coef = mlrt__tensorset_find(ts, "weights");
    if (coef && (type_is(type, "linear_regression", "LinearRegression") ||
                 type_is(type, "logistic_regression", "LogisticRegression")))
        return regression(&c, coef, "bias");
    uint64_t k;
    if (decimal_name(&ts->tensors[0], &k)) return numbered_mlp(&c);
    for (size_t i = 0; i < ts->count; i++) {
        size_t plen;
        if (weight_name(&ts->tensors[i], &plen)) return pytorch_mlp(&c);
    }
    return mlrt__fail(err, MLRT_ERR_NOT_A_MODEL,
                     "%s: no model recognised: expected 'coefficients' + 'intercept', '<layer>.weight' / '<layer>.bias' pairs, "
                     "or numbered tensors '0', '1', ...; first tensor is '%s'", c.fmt, ts->tensors[0].name);
}
