/* model/model.c — a runnable model: packed dense layers, prediction, introspection. */
#include "../internal.h"
#include "graph.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- building */

void mlrt_free(mlrt_model *m) {
    if (!m) return;
    if (m->parent) { /* a fork owns its scratch only */
        free(m->label_scores);
        free(m->scratch);
        free(m->xq);
        free(m->xsum);
        free(m->xnz);
        free(m);
        return;
    }
    if (m->forest) mlrt__forest_free(m->forest); /* owns m->classes */
    else free(m->classes);
    mlrt__kmeans_free(m->kmeans);
    mlrt__graph_free(m->graph);
    free(m->label_scores);
    for (uint32_t i = 0; i < m->n_layers; i++) {
        free(m->layers[i].w);
        free(m->layers[i].b);
        free(m->layers[i].q);
        free(m->layers[i].qscale);
        free(m->layers[i].qsum);
    }
    free(m->layers);
    free(m->scratch);
    free(m->xq);
    free(m->xsum);
    free(m->xnz);
    free(m->info_json);
    free(m);
}

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

/* Bytes of weights the model holds (packed weights and their scales; biases not counted). */
MLRT__SMALL static uint64_t weight_bytes(const mlrt_model *m) {
    uint64_t n = 0;
    for (uint32_t i = 0; i < m->n_layers; i++) {
        const mlrt__dense *d = &m->layers[i];
        n += d->wq ? d->q_bytes + d->qscale_bytes : (uint64_t)d->out_padded * d->in * sizeof(float);
    }
    return n;
}

/* Converts and packs one layer; refuses non-finite weights. */
mlrt_status mlrt__dense_pack(const mlrt__dense_src *s, const char *fmt, mlrt__dense *d, mlrt_error *err) {
    d->in = s->in;
    d->out = s->out;
    d->act = s->act;
    d->has_bias = s->b != NULL;
    d->out_padded = (s->out + MLRT__PANEL - 1) / MLRT__PANEL * MLRT__PANEL;
    d->b = calloc(d->out_padded, sizeof(float));
    if (!d->b) return mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "%s: out of memory for the weights of '%s'", fmt, s->name);
    if (s->w_dtype == MLRT_APR_Q8 || s->w_dtype == MLRT_APR_Q4) { /* stays quantized: [out][in] only (tensor files) */
        mlrt_status st = mlrt__quant_pack(d, s->w, s->w_dtype, fmt, s->name, err);
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

MLRT__SMALL static char *describe(const mlrt_model *m, const mlrt__tensorset *ts) {
    mlrt__buf b = {0};
    mlrt__buf_printf(&b, "{\"format\":\"%s\",\"kind\":\"%s\"", mlrt_format_name(m->format), mlrt_kind_name(m->kind));
    mlrt__model_facts_json(&b, m);
    if (m->weight_layout)
        mlrt__buf_printf(&b, ",\"weightLayout\":\"%s\",\"weightLayoutGuessed\":%s", m->weight_layout,
                        m->weight_layout_guessed ? "true" : "false");
    mlrt__buf_printf(&b, ",\"inputSize\":%u,\"outputSize\":%u,\"dtype\":\"%s\",\"params\":%llu,\"weightBytes\":%llu,\"layers\":[",
                    m->in_size, m->out_size,
                    mlrt_dtype_name(m->dtype), (unsigned long long)mlrt_param_count(m), (unsigned long long)weight_bytes(m));
    for (uint32_t i = 0; i < m->n_layers; i++)
        mlrt__buf_printf(&b, "%s{\"inputs\":%u,\"outputs\":%u,\"activation\":\"%s\"}", i ? "," : "",
                        m->layers[i].in, m->layers[i].out, mlrt_activation_name(m->layers[i].act));
    mlrt__buf_puts(&b, "],\"metadata\":");
    mlrt__json_metadata(&b, ts);
    if (ts && ts->extra_json) {
        mlrt__buf_puts(&b, ",");
        mlrt__buf_puts(&b, ts->extra_json);
    }
    mlrt__buf_puts(&b, "}");
    if (b.oom) { free(b.data); return NULL; }
    return b.data;
}

/* What predicting writes to, sized from the layers and m->tile_rows: the activations' ping-pong
 * tiles, the quantized layers' row buffers, and predict_labels' scores. Each model and each fork
 * has its own. False when out of memory (what was allocated stays for mlrt_free). */
static bool alloc_run_scratch(mlrt_model *m) {
    uint32_t max_in_q = 0;
    for (uint32_t i = 0; i < m->n_layers; i++)
        if (m->layers[i].wq && m->layers[i].in_q > max_in_q) max_in_q = m->layers[i].in_q;
    if (max_in_q && (!(m->xq = malloc(max_in_q * sizeof *m->xq)) || !(m->xsum = malloc((max_in_q / 4 + 1) * sizeof *m->xsum)) ||
                     !(m->xnz = malloc((max_in_q + 2) * sizeof *m->xnz))))
        return false;
    return (m->scratch = malloc((size_t)m->tile_rows * 2 * m->max_width * sizeof(float))) && !mlrt__model_label_scratch(m);
}

MLRT__SMALL mlrt_model *mlrt__model_build(mlrt_format format, mlrt_kind kind, mlrt_dtype dtype,
                             const mlrt__dense_src *src, uint32_t n_layers,
                             const mlrt__tensorset *ts, mlrt_error *err) {
    mlrt_model *m = calloc(1, sizeof *m);
    if (!m || !(m->layers = calloc(n_layers, sizeof *m->layers))) {
        free(m);
        mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "out of memory for the model");
        return NULL;
    }
    m->format = format;
    m->kind = kind;
    m->dtype = dtype;
    m->in_size = src[0].in;
    m->out_size = src[n_layers - 1].out;
    if (ts && kind == MLRT_KIND_MLP) { /* from a tensor file: which way its weights were read */
        uint32_t in_major = 0;
        for (uint32_t i = 0; i < n_layers; i++) {
            in_major += src[i].w_in_major;
            m->weight_layout_guessed |= src[i].w_guessed;
        }
        m->weight_layout = in_major == 0 ? "out_in" : in_major == n_layers ? "in_out" : "mixed";
    }
    for (uint32_t i = 0; i < n_layers; i++) {
        m->n_layers = i + 1;
        if (mlrt__dense_pack(&src[i], mlrt_format_name(format), &m->layers[i], err)) { mlrt_free(m); return NULL; }
        if (m->layers[i].out_padded > m->max_width) m->max_width = m->layers[i].out_padded;
    }
    size_t row_bytes = 2 * (size_t)m->max_width * sizeof(float);
    m->tile_rows = MLRT__SCRATCH_BYTES / row_bytes < MLRT__TILE_ROWS ? (uint32_t)(MLRT__SCRATCH_BYTES / row_bytes) : MLRT__TILE_ROWS;
    if (m->tile_rows == 0) m->tile_rows = 1;
    if (mlrt__model_dense_task(m) || !alloc_run_scratch(m) || !(m->info_json = describe(m, ts))) {
        mlrt_free(m);
        mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "out of memory for the model");
        return NULL;
    }
    return m;
}

/* ----------------------------------------------------------- prediction */

/* A dense model's task: a logistic regression or an MLP with a sigmoid or softmax output, or more
 * than one output, classifies (labels: the output index; one sigmoid output: 0 / 1); else regression. */
MLRT__SMALL mlrt_status mlrt__model_dense_task(mlrt_model *m) {
    mlrt_activation last = m->layers[m->n_layers - 1].act;
    bool classifies = m->kind == MLRT_KIND_LOGISTIC_REGRESSION ||
                      (m->kind == MLRT_KIND_MLP && (m->out_size > 1 || last == MLRT_ACT_SIGMOID || last == MLRT_ACT_SOFTMAX));
    m->task = classifies ? MLRT_TASK_CLASSIFICATION : MLRT_TASK_REGRESSION;
    if (!classifies) return MLRT_OK;
    m->n_classes = m->out_size == 1 ? 2 : m->out_size;
    if (!(m->classes = malloc(m->n_classes * sizeof *m->classes))) return MLRT_ERR_OUT_OF_MEMORY;
    for (uint32_t i = 0; i < m->n_classes; i++) m->classes[i] = i;
    return MLRT_OK;
}

mlrt_status mlrt__check_rows(const mlrt_model *m, const float *in, size_t n, const void *out, const char *what,
                            mlrt_error *err) {
    if (!m || !in || !out || n == 0)
        return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "%s: %s", what,
                         !m ? "no model" : n == 0 ? "batch size is 0" : "NULL buffer");
    if (m->forest) return MLRT_OK; /* trees take NaN and infinities: comparisons decide */
    for (size_t k = 0; k < n * m->in_size; k++)
        if (!isfinite(in[k]))
            return mlrt__fail(err, MLRT_ERR_NON_FINITE, "%s: input %zu of row %zu is not finite", what, k % m->in_size,
                             k / m->in_size);
    return MLRT_OK;
}

/* Finite weights and inputs can still overflow float: never hand back inf or NaN as a result.
 * Outputs [o0, o1) of rows x `width`. */
static mlrt_status check_outputs(const float *y, size_t rows, size_t width, size_t o0, size_t o1, mlrt_error *err) {
    for (size_t r = 0; r < rows; r++)
        for (size_t o = o0; o < o1; o++)
            if (!isfinite(y[r * width + o]))
                return mlrt__fail(err, MLRT_ERR_NON_FINITE, "predict: output %zu of row %zu overflowed to a non-finite value", o, r);
    return MLRT_OK;
}

mlrt_status mlrt_predict_batch(mlrt_model *m, const float *in, size_t n, float *out, mlrt_error *err) {
    if (m && (m->forest || m->kmeans)) return mlrt__classic_predict(m, in, n, out, err);
    if (m && m->graph) return mlrt__graph_predict(m, in, n, out, err);
    mlrt_status st = mlrt__check_rows(m, in, n, out, "predict", err);
    if (st) return st;
    float *buf[2] = {m->scratch, m->scratch + (size_t)m->tile_rows * m->max_width};
    for (size_t r = 0; r < n; r += m->tile_rows) {
        size_t rows = n - r < m->tile_rows ? n - r : m->tile_rows;
        const float *x = in + r * m->in_size;
        size_t xs = m->in_size;
        for (uint32_t i = 0; i < m->n_layers; i++) {
            bool last = i + 1 == m->n_layers;
            float *y = last ? out + r * m->out_size : buf[i & 1];
            size_t ys = last ? m->out_size : m->max_width;
            if (m->layers[i].wq) mlrt__quant_forward(&m->layers[i], x, xs, y, ys, rows, 0, m->layers[i].out, m->xq, m->xsum, m->xnz);
            else mlrt__dense_forward(&m->layers[i], x, xs, y, ys, rows);
            x = y;
            xs = ys;
        }
    }
    return check_outputs(out, n, m->out_size, 0, m->out_size, err);
}

mlrt_status mlrt_layer_slice(mlrt_model *m, size_t i, const float *x, float *y, size_t rows, size_t o0, size_t o1,
                             mlrt_error *err) {
    if (!m || m->forest || m->kmeans || m->graph || !m->scratch || i >= m->n_layers || !x || !y || rows == 0)
        return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "layer_slice: %s",
                         !m || m->forest || m->kmeans || m->graph || !m->scratch ? "not a loaded dense model"
                         : i >= m->n_layers ? "no such layer" : rows == 0 ? "no rows" : "NULL buffer");
    const mlrt__dense *l = &m->layers[i];
    if (o0 % MLRT_SLICE || o0 >= o1 || o1 > l->out || (o1 % MLRT_SLICE && o1 != l->out) ||
        (l->act == MLRT_ACT_SOFTMAX && (o0 || o1 != l->out)))
        return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "layer_slice: outputs [%zu, %zu) of layer %zu (%u outputs, %s) "
                         "are not a slice of it", o0, o1, i, l->out, mlrt_activation_name(l->act));
    if (i == 0) {
        mlrt_status st = mlrt__check_rows(m, x, rows, y, "predict", err);
        if (st) return st;
    }
    if (l->wq) mlrt__quant_forward(l, x, l->in, y, l->out, rows, o0, o1, m->xq, m->xsum, m->xnz);
    else mlrt__dense_forward_range(l, x, l->in, y, l->out, rows, o0, o1);
    return i + 1 == m->n_layers ? check_outputs(y, rows, l->out, o0, o1, err) : MLRT_OK;
}

/* Scratch of its own (activations, the quantized layers' row buffers, predict_labels' scores), everything else
 * borrowed: layers, classes and the description stay the parent's. */
mlrt_model *mlrt_model_fork(const mlrt_model *m, mlrt_error *err) {
    if (!m) { mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "fork: model is NULL"); return NULL; }
    if (m->parent || !m->scratch || m->forest || m->kmeans || m->graph) {
        mlrt__fail(err, MLRT_ERR_UNSUPPORTED, "fork: only a loaded dense model (%s here) runs on several threads",
                  mlrt_kind_name(m->kind));
        return NULL;
    }
    mlrt_model *f = malloc(sizeof *f);
    if (!f) { mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "fork: out of memory"); return NULL; }
    *f = *m;
    f->parent = m;
    f->scratch = NULL, f->xq = NULL, f->xsum = NULL, f->xnz = NULL, f->label_scores = NULL;
    if (!alloc_run_scratch(f)) { mlrt_free(f); mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "fork: out of memory for scratch"); return NULL; }
    return f;
}

mlrt_status mlrt_predict(mlrt_model *m, const float *in, float *out, mlrt_error *err) {
    return mlrt_predict_batch(m, in, 1, out, err);
}

/* -------------------------------------------------------- introspection */

size_t mlrt_input_size(const mlrt_model *m) { return m->in_size; }
size_t mlrt_output_size(const mlrt_model *m) { return m->out_size; }
mlrt_format mlrt_model_format(const mlrt_model *m) { return m->format; }
mlrt_kind mlrt_model_kind(const mlrt_model *m) { return m->kind; }
mlrt_task mlrt_model_task(const mlrt_model *m) { return m->task; }
size_t mlrt_class_count(const mlrt_model *m) { return m->n_classes; }
uint32_t mlrt_class_label(const mlrt_model *m, size_t i) { return i < m->n_classes ? m->classes[i] : 0; }
mlrt_dtype mlrt_weight_dtype(const mlrt_model *m) { return m->dtype; }
size_t mlrt_layer_count(const mlrt_model *m) { return m->n_layers; }
const char *mlrt_model_info_json(const mlrt_model *m) { return m->info_json; }

/* Dense: weights and biases; trees: nodes; k-means: centroid coordinates. */
MLRT__SMALL uint64_t mlrt_param_count(const mlrt_model *m) {
    if (m->forest) return m->forest->n_nodes;
    if (m->kmeans) return (uint64_t)m->kmeans->k * m->kmeans->dim;
    if (m->graph) return m->graph->params;
    uint64_t n = 0;
    for (uint32_t i = 0; i < m->n_layers; i++) n += (uint64_t)m->layers[i].in * m->layers[i].out + (m->layers[i].has_bias ? m->layers[i].out : 0);
    return n;
}

MLRT__SMALL mlrt_status mlrt_layer_weights(const mlrt_model *m, size_t i, float *w, float *b, mlrt_error *err) {
    if (!m || i >= m->n_layers || !w)
        return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "layer_weights: %s", !m ? "no model" : !w ? "NULL buffer" : "no such layer");
    const mlrt__dense *d = &m->layers[i];
    const size_t panel_floats = (size_t)d->in * MLRT__PANEL;
    for (size_t o = 0; o < d->out; o++) /* undo pack_layer: output o sits in lane o % PANEL of its panel */
        for (size_t k = 0; k < d->in; k++)
            w[o * d->in + k] = d->wq ? mlrt__quant_weight(d, o, k) : d->w[(o / MLRT__PANEL) * panel_floats + k * MLRT__PANEL + o % MLRT__PANEL];
    if (b)
        for (size_t o = 0; o < d->out; o++) b[o] = d->b[o];
    return MLRT_OK;
}

mlrt_layer_info mlrt_layer(const mlrt_model *m, size_t i) {
    mlrt_layer_info li = {0, 0, MLRT_ACT_IDENTITY, 0};
    if (i < m->n_layers) {
        li.inputs = m->layers[i].in;
        li.outputs = m->layers[i].out;
        li.activation = m->layers[i].act;
        li.has_bias = m->layers[i].has_bias;
    }
    return li;
}
