/* model/dense.c — the dense family: MLPs, linear and logistic regression. Layers packed for the
 * kernels at load (f32 panels, or APR Q8/Q4 kept quantized), run a tile of rows at a time through
 * two ping-pong activation buffers; forks share the layers and own their scratch. */
#include "model.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct dense {
    uint32_t n_layers;
    mlrt__dense *layers;            /* [n_layers] packed (a fork borrows its parent's) */
    uint32_t max_width;             /* widest activation, padded */
    uint32_t tile_rows;             /* batch rows per tile: MLRT__TILE_ROWS, fewer for very wide layers */
    float *scratch;                 /* [2][tile_rows][max_width] ping-pong activations */
    int16_t *xq;                    /* quantized layers: activation rows as int16 [MLRT__QX(max_in_q)] */
    int32_t *xsum;                  /* quantized layers: the row's sum per Q4 group [max_in_q / 4] */
    uint32_t *xnz;                  /* quantized layers: the row's runs of nonzero Q8 input pairs [max_in_q / 2 + 1][2] */
    const char *weight_layout;      /* from tensors: "out_in", "in_out" or "mixed"; else NULL */
    bool weight_layout_guessed;     /* some layer's orientation was PyTorch's default, not the file's evidence */
    bool borrowed;                  /* a fork's: layers are the parent's */
} dense;

/* ------------------------------------------------------------------ packing */

/* The bias as f32 (quantized biases dequantized: they are tiny); refuses non-finite values. */
MLRT__SMALL static mlrt_status pack_bias(const mlrt__dense_src *s, const char *fmt, mlrt__dense *d, mlrt_error *err) {
    if (!s->b) return MLRT_OK;
    if (mlrt__dtype_is_quantized(s->b_dtype)) {
        mlrt_status st = mlrt__quant_dequantize(s->b, s->b_dtype, s->out, d->b, fmt, s->b_name, err);
        if (st) return st;
    }
    for (size_t o = 0; o < s->out; o++) {
        if (!mlrt__dtype_is_quantized(s->b_dtype)) d->b[o] = mlrt__to_f32(s->b + o * mlrt_dtype_size(s->b_dtype), s->b_dtype);
        if (!isfinite(d->b[o]))
            return mlrt__fail(err, MLRT_ERR_NON_FINITE, "%s: bias '%s' [%zu] is not finite", fmt, s->b_name, o);
    }
    return MLRT_OK;
}

/* f32 [out][in] packed where the file holds it (out == out_padded: panel p's rows take the same bytes in
 * the file as packed), a panel at a time through one panel of scratch. False when out of memory or a
 * weight is not finite: the panels done are finite, the rest untouched, so the caller's pass in file
 * order then names the first one that is not. */
static bool pack_f32_over(const mlrt__dense_src *s, mlrt__dense *d) {
    const size_t panel = (size_t)s->in * MLRT__PANEL;
    float *tmp = malloc(panel * sizeof *tmp), *w = (float *)(uintptr_t)s->w;
    bool ok = tmp != NULL;
    for (size_t o = 0; ok && o < s->out; o += MLRT__PANEL, w += panel)
        if ((ok = mlrt__dense_pack_f32((const uint8_t *)w, false, s->in, MLRT__PANEL, tmp))) memcpy(w, tmp, panel * sizeof *tmp);
    free(tmp);
    if (ok) d->w = (float *)(uintptr_t)s->w, d->in_file = true;
    return ok;
}

/* Converts and packs one layer; refuses non-finite weights. over: packed where the file holds the weights
 * when the packing takes their bytes exactly (f32 [out][in], aligned, or APR Q8: see pack_f32_over and
 * mlrt__quant_pack); s->w must then be writable and read by nothing else afterwards. */
static mlrt_status pack(const mlrt__dense_src *s, const char *fmt, mlrt__dense *d, bool over, mlrt_error *err) {
    d->in = s->in;
    d->out = s->out;
    d->act = s->act;
    d->has_bias = s->b != NULL;
    d->out_padded = (s->out + MLRT__PANEL - 1) / MLRT__PANEL * MLRT__PANEL;
    d->b = calloc(d->out_padded, sizeof(float));
    if (!d->b) return mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "%s: out of memory for the weights of '%s'", fmt, s->name);
    if (s->w_dtype == MLRT_APR_Q8 || s->w_dtype == MLRT_APR_Q4) { /* stays quantized: [out][in] only (tensor files) */
        mlrt_status st = mlrt__quant_pack(d, s->w, s->w_dtype, over, fmt, s->name, err);
        return st ? st : pack_bias(s, fmt, d, err);
    }
    if (mlrt__dtype_is_quantized(s->w_dtype)) { /* GGUF k-quants: dequantized here, run as f32 */
        float *f = malloc((size_t)s->in * s->out * sizeof(float));
        if (!f) return mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "%s: out of memory for the weights of '%s'", fmt, s->name);
        mlrt_status st = mlrt__quant_dequantize(s->w, s->w_dtype, (size_t)s->in * s->out, f, fmt, s->name, err);
        mlrt__dense_src f32 = *s;
        f32.w = (const uint8_t *)f, f32.w_dtype = MLRT_F32;
        if (!st) free(d->b), st = mlrt__dense_pack(&f32, fmt, d, err);
        free(f);
        return st;
    }
    if (over && s->w_dtype == MLRT_F32 && !s->w_in_major && d->out == d->out_padded && (uintptr_t)s->w % sizeof(float) == 0 &&
        pack_f32_over(s, d))
        return pack_bias(s, fmt, d, err);
    const size_t packed = (size_t)d->out_padded * s->in * sizeof(float);
    d->w = malloc(packed);
    if (!d->w) return mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "%s: out of memory for the weights of '%s'", fmt, s->name);
    /* f32, the common case: packed with vectors straight from the file (every slot written). */
    if (s->w_dtype == MLRT_F32 && mlrt__dense_pack_f32(s->w, s->w_in_major, s->in, s->out, d->w))
        return pack_bias(s, fmt, d, err);
    memset(d->w, 0, packed);
    /* Other dtypes, and f32 with a weight to name: walk the file's weights in file order, a run of
     * up to RUN values at a time: convert (dtype switch outside the loop), check finiteness, then
     * place in the panels. */
    enum { RUN = 256 };
    float run[RUN];
    const size_t rows = s->w_in_major ? s->in : s->out, cols = s->w_in_major ? s->out : s->in;
    const size_t ws = mlrt_dtype_size(s->w_dtype), panel_floats = (size_t)s->in * MLRT__PANEL;
    for (size_t r = 0; r < rows; r++) {
        for (size_t c0 = 0; c0 < cols; c0 += RUN) {
            size_t n = cols - c0 < RUN ? cols - c0 : RUN;
            mlrt__to_f32_n(s->w + (r * cols + c0) * ws, s->w_dtype, run, n);
            if (!mlrt__all_finite(run, n)) {
                size_t k = 0;
                while (isfinite(run[k])) k++;
                size_t o = s->w_in_major ? c0 + k : r, i = s->w_in_major ? r : c0 + k;
                return mlrt__fail(err, MLRT_ERR_NON_FINITE, "%s: weight '%s' [out %zu][in %zu] is not finite", fmt, s->name, o, i);
            }
            if (s->w_in_major) { /* row r is input i = r: outputs c0.. go to consecutive panel slots */
                for (size_t k = 0; k < n; k++) {
                    size_t o = c0 + k;
                    d->w[(o / MLRT__PANEL) * panel_floats + r * MLRT__PANEL + o % MLRT__PANEL] = run[k];
                }
            } else {           /* row r is output o = r: inputs c0.. are MLRT__PANEL apart in one panel */
                float *dst = d->w + (r / MLRT__PANEL) * panel_floats + c0 * MLRT__PANEL + r % MLRT__PANEL;
                for (size_t k = 0; k < n; k++) dst[k * MLRT__PANEL] = run[k];
            }
        }
    }
    return pack_bias(s, fmt, d, err);
}

mlrt_status mlrt__dense_pack(const mlrt__dense_src *s, const char *fmt, mlrt__dense *d, mlrt_error *err) {
    return pack(s, fmt, d, false, err);
}

mlrt_status mlrt__dense_pack_over(const mlrt__dense_src *s, const char *fmt, mlrt__dense *d, mlrt_error *err) {
    return pack(s, fmt, d, true, err);
}

void mlrt__dense_release(mlrt__dense *l) {
    if (!l->in_file) free(l->w), free(l->q);
    free(l->b), free(l->qscale), free(l->qsum);
}

/* ------------------------------------------------------------------ the family */

static void dense_free(mlrt_model *m) {
    dense *s = m->impl;
    if (!s) return;
    for (uint32_t i = 0; !s->borrowed && i < s->n_layers; i++) mlrt__dense_release(&s->layers[i]);
    if (!s->borrowed) free(s->layers);
    free(s->scratch), free(s->xq), free(s->xsum), free(s->xnz);
    free(s);
}

/* What predicting writes to, sized from the layers and tile_rows: the activations' ping-pong tiles and
 * the quantized layers' row buffers. Each model and each fork has its own. False when out of memory
 * (what was allocated stays for dense_free). */
static bool alloc_run_scratch(dense *s) {
    uint32_t max_in_q = 0;
    for (uint32_t i = 0; i < s->n_layers; i++)
        if (s->layers[i].wq && s->layers[i].in_q > max_in_q) max_in_q = s->layers[i].in_q;
    if (max_in_q && (!(s->xq = malloc(MLRT__QX(max_in_q) * sizeof *s->xq)) || !(s->xsum = malloc((max_in_q / 4 + 1) * sizeof *s->xsum)) ||
                     !(s->xnz = malloc((max_in_q + 2) * sizeof *s->xnz))))
        return false;
    return (s->scratch = malloc((size_t)s->tile_rows * 2 * s->max_width * sizeof(float))) != NULL;
}

static void *dense_fork(const mlrt_model *m, mlrt_error *err) {
    const dense *p = m->impl;
    dense *s = malloc(sizeof *s);
    if (!s) { mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "fork: out of memory"); return NULL; }
    *s = *p;
    s->borrowed = true;
    s->scratch = NULL, s->xq = NULL, s->xsum = NULL, s->xnz = NULL;
    if (!alloc_run_scratch(s)) {
        dense_free(&(mlrt_model){.impl = s});
        mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "fork: out of memory for scratch");
        return NULL;
    }
    return s;
}

static mlrt_status dense_predict(mlrt_model *m, const float *in, size_t n, float *out, mlrt_error *err) {
    mlrt_status st = mlrt__check_rows(m, in, n, out, true, "predict", err);
    if (st) return st;
    dense *s = m->impl;
    float *buf[2] = {s->scratch, s->scratch + (size_t)s->tile_rows * s->max_width};
    for (size_t r = 0; r < n; r += s->tile_rows) {
        size_t rows = n - r < s->tile_rows ? n - r : s->tile_rows;
        const float *x = in + r * m->in_size;
        size_t xs = m->in_size;
        for (uint32_t i = 0; i < s->n_layers; i++) {
            const mlrt__dense *l = &s->layers[i];
            bool last = i + 1 == s->n_layers;
            float *y = last ? out + r * m->out_size : buf[i & 1];
            size_t ys = last ? m->out_size : s->max_width;
            if (l->wq) mlrt__quant_forward(l, x, xs, y, ys, rows, 0, l->out, s->xq, s->xsum, s->xnz);
            else mlrt__dense_forward(l, x, xs, y, ys, rows);
            x = y;
            xs = ys;
        }
    }
    return mlrt__check_outputs(out, n, m->out_size, 0, m->out_size, err);
}

static mlrt_status dense_slice(mlrt_model *m, size_t i, const float *x, float *y, size_t rows, size_t o0, size_t o1,
                               mlrt_error *err) {
    dense *s = m->impl;
    const mlrt__dense *l = &s->layers[i];
    if (l->wq) mlrt__quant_forward(l, x, l->in, y, l->out, rows, o0, o1, s->xq, s->xsum, s->xnz);
    else mlrt__dense_forward_range(l, x, l->in, y, l->out, rows, o0, o1);
    return i + 1 == s->n_layers ? mlrt__check_outputs(y, rows, l->out, o0, o1, err) : MLRT_OK;
}

static void dense_facts(mlrt__buf *b, const mlrt_model *m) {
    const dense *s = m->impl;
    if (s->weight_layout)
        mlrt__buf_printf(b, ",\"weightLayout\":\"%s\",\"weightLayoutGuessed\":%s", s->weight_layout,
                         s->weight_layout_guessed ? "true" : "false");
}

/* Weights and biases. */
static uint64_t dense_params(const mlrt_model *m) {
    const dense *s = m->impl;
    uint64_t n = 0;
    for (uint32_t i = 0; i < s->n_layers; i++) n += (uint64_t)s->layers[i].in * s->layers[i].out + (s->layers[i].has_bias ? s->layers[i].out : 0);
    return n;
}

/* Bytes of weights the model holds (packed weights and their scales; biases not counted). */
static uint64_t dense_weight_bytes(const mlrt_model *m) {
    const dense *s = m->impl;
    uint64_t n = 0;
    for (uint32_t i = 0; i < s->n_layers; i++) {
        const mlrt__dense *d = &s->layers[i];
        n += d->wq ? d->q_bytes + d->qscale_bytes : (uint64_t)d->out_padded * d->in * sizeof(float);
    }
    return n;
}

static void dense_layer_weights(const mlrt_model *m, size_t i, float *w, float *b) {
    const mlrt__dense *d = &((const dense *)m->impl)->layers[i];
    const size_t panel_floats = (size_t)d->in * MLRT__PANEL;
    for (size_t o = 0; o < d->out; o++) /* undo the packing: output o sits in lane o % PANEL of its panel */
        for (size_t k = 0; k < d->in; k++)
            w[o * d->in + k] = d->wq ? mlrt__quant_weight(d, o, k) : d->w[(o / MLRT__PANEL) * panel_floats + k * MLRT__PANEL + o % MLRT__PANEL];
    if (b)
        for (size_t o = 0; o < d->out; o++) b[o] = d->b[o];
}

static const mlrt__family dense_family = {
    "dense", mlrt__run_rows, dense_predict, dense_slice, dense_fork, dense_free, dense_facts, dense_params,
    dense_weight_bytes, dense_layer_weights,
};

/* ------------------------------------------------------------------ building */

/* A logistic regression, or an MLP with a sigmoid or softmax output or more than one output,
 * classifies (labels: the output index; one sigmoid output: 0 / 1); anything else regresses. */
static mlrt_task task_of(mlrt_kind kind, uint32_t outputs, mlrt_activation last) {
    bool classifies = kind == MLRT_KIND_LOGISTIC_REGRESSION ||
                      (kind == MLRT_KIND_MLP && (outputs > 1 || last == MLRT_ACT_SIGMOID || last == MLRT_ACT_SOFTMAX));
    return classifies ? MLRT_TASK_CLASSIFICATION : MLRT_TASK_REGRESSION;
}

MLRT__SMALL mlrt_model *mlrt__build_dense(const mlrt__desc *desc, mlrt_error *err) {
    const mlrt__dense_src *src = desc->layers;
    const uint32_t n_layers = desc->n_layers;
    dense *s = calloc(1, sizeof *s);
    if (s && !(s->layers = calloc(n_layers, sizeof *s->layers))) free(s), s = NULL;
    mlrt_model *m = s ? mlrt__model_new(&dense_family, s, desc->format, desc->kind, err) : NULL;
    if (!m) {
        if (!s) mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "out of memory for the model");
        return NULL;
    }
    m->dtype = desc->dtype;
    m->payload = desc->payload;
    if (desc->ts && desc->kind == MLRT_KIND_MLP) { /* from a tensor file: which way its weights were read */
        uint32_t in_major = 0;
        for (uint32_t i = 0; i < n_layers; i++) {
            in_major += src[i].w_in_major;
            s->weight_layout_guessed |= src[i].w_guessed;
        }
        s->weight_layout = in_major == 0 ? "out_in" : in_major == n_layers ? "in_out" : "mixed";
    }
    for (uint32_t i = 0; i < n_layers; i++) {
        s->n_layers = i + 1;
        if (mlrt__dense_pack(&src[i], mlrt_format_name(desc->format), &s->layers[i], err)) { mlrt_free(m); return NULL; }
        if (s->layers[i].out_padded > s->max_width) s->max_width = s->layers[i].out_padded;
    }
    size_t row_bytes = 2 * (size_t)s->max_width * sizeof(float);
    s->tile_rows = MLRT__SCRATCH_BYTES / row_bytes < MLRT__TILE_ROWS ? (uint32_t)(MLRT__SCRATCH_BYTES / row_bytes) : MLRT__TILE_ROWS;
    if (s->tile_rows == 0) s->tile_rows = 1;
    const uint32_t outputs = src[n_layers - 1].out;
    mlrt_task task = task_of(desc->kind, outputs, src[n_layers - 1].act);
    m->n_layers = n_layers;
    if (!alloc_run_scratch(s) || !(m->layers = malloc(n_layers * sizeof *m->layers)) ||
        mlrt__model_rows_io(m, src[0].in, outputs) || mlrt__model_labels(m, task, outputs == 1 ? 2 : outputs)) {
        mlrt_free(m);
        mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "out of memory for the model");
        return NULL;
    }
    for (uint32_t i = 0; i < n_layers; i++)
        m->layers[i] = (mlrt_layer_info){s->layers[i].in, s->layers[i].out, s->layers[i].act, s->layers[i].has_bias};
    return mlrt__model_finish(m, desc->ts, err);
}
