/* model/model.c — what every model family shares: the public calls, each checked here and then
 * handed to the model's family (mlrt__family); the lists of inputs and outputs and the checks of a
 * run's tensors against them; labels; info. (api/load.c picks a description's builder: model.c calls
 * no family, so that the families' files and this one never call each other in a circle.) */
#include "model.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ building */

mlrt_model *mlrt__model_new(const mlrt__family *family, void *impl, mlrt_format format, mlrt_kind kind,
                            mlrt_error *err) {
    mlrt_model *m = calloc(1, sizeof *m);
    if (!m) {
        family->free(&(mlrt_model){.family = family, .impl = impl});
        mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "out of memory for the model");
        return NULL;
    }
    m->family = family, m->impl = impl, m->format = format, m->kind = kind, m->dtype = MLRT_F32;
    return m;
}

mlrt_status mlrt__model_rows_io(mlrt_model *m, uint32_t in, uint32_t out) {
    m->in_size = in, m->out_size = out;
    m->n_inputs = m->n_outputs = 1;
    m->inputs = calloc(1, sizeof *m->inputs);
    m->outputs = calloc(1, sizeof *m->outputs);
    if (!m->inputs || !m->outputs) return MLRT_ERR_OUT_OF_MEMORY;
    m->inputs[0].t = (mlrt_tensor){"input", MLRT_F32, 2, {-1, in}, NULL};
    m->outputs[0].t = (mlrt_tensor){"output", MLRT_F32, 2, {-1, out}, NULL};
    m->inputs[0].sym[0] = m->outputs[0].sym[0] = "batch";
    return MLRT_OK;
}

mlrt_status mlrt__model_labels(mlrt_model *m, mlrt_task task, uint32_t n) {
    m->task = task;
    m->n_classes = task == MLRT_TASK_CLASSIFICATION ? n : 0;
    return MLRT_OK;
}

enum { LABEL_ROWS = 64 }; /* rows per predict_labels tile */

/* predict_labels' scores for a classifier or a clusterer of rows: made by the first predict_labels (a
 * load allocates nothing that grows with the outputs). */
static mlrt_status label_scratch(mlrt_model *m) {
    if (m->task == MLRT_TASK_REGRESSION || !m->out_size) return MLRT_OK;
    size_t per = MLRT__SCRATCH_BYTES / 4 / m->out_size;
    m->label_rows = per < LABEL_ROWS ? (per ? (uint32_t)per : 1) : LABEL_ROWS;
    m->label_scores = malloc((size_t)m->label_rows * m->out_size * sizeof *m->label_scores);
    return m->label_scores ? MLRT_OK : MLRT_ERR_OUT_OF_MEMORY;
}

/* ------------------------------------------------------------------ info */

static void json_tensor_list(mlrt__buf *b, const mlrt__io *io, uint32_t n) {
    mlrt__buf_puts(b, "[");
    for (uint32_t k = 0; k < n; k++) {
        const mlrt_tensor *t = &io[k].t;
        mlrt__buf_puts(b, k ? ",{\"name\":" : "{\"name\":");
        mlrt__buf_json_string(b, t->name, strlen(t->name));
        mlrt__buf_printf(b, ",\"dtype\":\"%s\",\"shape\":[", mlrt_dtype_name(t->dtype));
        for (uint32_t d = 0; d < t->rank; d++) {
            if (d) mlrt__buf_puts(b, ",");
            if (t->dims[d] >= 0) mlrt__buf_printf(b, "%lld", (long long)t->dims[d]);
            else mlrt__buf_json_string(b, io[k].sym[d] ? io[k].sym[d] : "?", strlen(io[k].sym[d] ? io[k].sym[d] : "?"));
        }
        mlrt__buf_puts(b, "]");
        bool limits = false;
        for (uint32_t d = 0; d < t->rank; d++)
            if (t->dims[d] < 0 && io[k].max[d] > 0) {
                mlrt__buf_puts(b, limits ? "," : ",\"maxDims\":{");
                mlrt__buf_json_string(b, io[k].sym[d], strlen(io[k].sym[d]));
                mlrt__buf_printf(b, ":%lld", (long long)io[k].max[d]);
                limits = true;
            }
        mlrt__buf_puts(b, limits ? "}}" : "}");
    }
    mlrt__buf_puts(b, "]");
}

/* The model's members of info after "kind": task, classes (stored labels only; implicit ones are
 * counted, never listed), then the family's facts. For info and inspect. */
static void facts(mlrt__buf *b, const mlrt_model *m) {
    mlrt__buf_printf(b, ",\"task\":\"%s\"", mlrt_task_name(m->task));
    if (m->task == MLRT_TASK_CLASSIFICATION) {
        mlrt__buf_printf(b, ",\"classCount\":%u", m->n_classes);
        if (m->classes) {
            mlrt__buf_puts(b, ",\"classes\":[");
            for (uint32_t i = 0; i < m->n_classes; i++) mlrt__buf_printf(b, "%s%u", i ? "," : "", m->classes[i]);
            mlrt__buf_puts(b, "]");
        }
    }
    m->family->facts(b, m);
    if (m->payload.estimator)
        mlrt__buf_printf(b, ",\"payload\":{\"estimator\":\"%s\",\"layout\":\"%s\"}", m->payload.estimator, m->payload.layout);
}

void mlrt__model_facts_json(mlrt__buf *b, const mlrt_model *m) { facts(b, m); }

/* An encoder's weights as its info says them: "f32", "f16", "bf16", "q8", "q4". */
static const char *enc_dtype(mlrt_dtype t) {
    return t == MLRT_F16 ? "f16" : t == MLRT_BF16 ? "bf16" : t == MLRT_APR_Q8 ? "q8" : t == MLRT_APR_Q4 ? "q4" : t == MLRT_F32 ? "f32"
         : mlrt_dtype_name(t);
}

static char *describe(const mlrt_model *m, const mlrt__tensorset *ts) {
    mlrt__buf b = {0};
    mlrt__buf_printf(&b, "{\"format\":\"%s\",\"kind\":\"%s\"", mlrt_format_name(m->format), mlrt_kind_name(m->kind));
    facts(&b, m);
    mlrt__buf_printf(&b, ",\"inputSize\":%u,\"outputSize\":%u,\"dtype\":\"%s\",\"params\":%llu,\"weightBytes\":%llu",
                     m->in_size, m->out_size, m->kind == MLRT_KIND_ENCODER ? enc_dtype(m->dtype) : mlrt_dtype_name(m->dtype),
                     (unsigned long long)m->family->params(m), (unsigned long long)m->family->weight_bytes(m));
    if (m->kind != MLRT_KIND_ENCODER) mlrt__buf_puts(&b, ",\"layers\":["); /* (an encoder's "layers" is its count) */
    for (uint32_t i = 0; i < m->n_layers; i++)
        mlrt__buf_printf(&b, "%s{\"inputs\":%u,\"outputs\":%u,\"activation\":\"%s\"}", i ? "," : "", m->layers[i].inputs,
                         m->layers[i].outputs, mlrt_activation_name(m->layers[i].activation));
    mlrt__buf_puts(&b, m->kind != MLRT_KIND_ENCODER ? "],\"inputs\":" : ",\"inputs\":");
    json_tensor_list(&b, m->inputs, m->n_inputs);
    mlrt__buf_puts(&b, ",\"outputs\":");
    json_tensor_list(&b, m->outputs, m->n_outputs);
    mlrt__buf_puts(&b, ",\"metadata\":");
    mlrt__json_metadata(&b, ts);
    if (ts && ts->extra_json) {
        mlrt__buf_puts(&b, ",");
        mlrt__buf_puts(&b, ts->extra_json);
    }
    mlrt__buf_puts(&b, "}");
    if (b.oom) { free(b.data); return NULL; }
    return b.data;
}

mlrt_model *mlrt__model_finish(mlrt_model *m, const mlrt__tensorset *ts, mlrt_error *err) {
    if (!(m->info_json = describe(m, ts))) {
        mlrt_free(m);
        mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "out of memory for the model");
        return NULL;
    }
    return m;
}

void mlrt_free(mlrt_model *m) {
    if (!m) return;
    m->family->free(m);
    for (uint32_t k = 0; k < m->n_outputs; k++) free(m->outputs[k].t.data);
    free(m->label_scores);
    if (!m->parent) { /* a fork borrows the rest */
        free(m->classes);
        free(m->inputs);
        free(m->layers);
        free(m->info_json);
    }
    free(m->outputs);
    free(m);
}

mlrt_model *mlrt_model_fork(const mlrt_model *m, mlrt_error *err) {
    if (!m) { mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "fork: model is NULL"); return NULL; }
    if (m->parent || !m->family->fork) {
        mlrt__fail(err, MLRT_ERR_UNSUPPORTED, "fork: only a loaded dense model or encoder (%s here) runs on several threads",
                   mlrt_kind_name(m->kind));
        return NULL;
    }
    mlrt_model *f = malloc(sizeof *f);
    mlrt__io *outputs = calloc(m->n_outputs, sizeof *outputs);
    if (!f || !outputs) {
        free(f), free(outputs);
        mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "fork: out of memory");
        return NULL;
    }
    *f = *m;
    f->parent = m;
    f->label_scores = NULL;
    for (uint32_t k = 0; k < m->n_outputs; k++) outputs[k] = m->outputs[k], outputs[k].t.data = NULL, outputs[k].cap = 0;
    f->outputs = outputs;
    if (!(f->impl = m->family->fork(m, err))) {
        free(outputs), free(f);
        return NULL;
    }
    return f;
}

/* ------------------------------------------------------------------ rows */

mlrt_status mlrt__check_rows(const mlrt_model *m, const float *in, size_t n, const void *out, bool finite,
                             const char *what, mlrt_error *err) {
    if (!m || !in || !out || n == 0)
        return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "%s: %s", what,
                          !m ? "no model" : n == 0 ? "batch size is 0" : "NULL buffer");
    if (!m->family->predict)
        return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "%s: a %s model takes named inputs, not rows of floats: use mlrt_run",
                          what, mlrt_kind_name(m->kind));
    for (size_t k = 0; finite && k < n * m->in_size; k++)
        if (!isfinite(in[k]))
            return mlrt__fail(err, MLRT_ERR_NON_FINITE, "%s: input %zu of row %zu is not finite", what, k % m->in_size,
                              k / m->in_size);
    return MLRT_OK;
}

mlrt_status mlrt__check_outputs(const float *y, size_t rows, size_t width, size_t o0, size_t o1, mlrt_error *err) {
    for (size_t r = 0; r < rows; r++)
        for (size_t o = o0; o < o1; o++)
            if (!isfinite(y[r * width + o]))
                return mlrt__fail(err, MLRT_ERR_NON_FINITE, "predict: output %zu of row %zu overflowed to a non-finite value", o, r);
    return MLRT_OK;
}

mlrt_status mlrt_predict_batch(mlrt_model *m, const float *in, size_t n, float *out, mlrt_error *err) {
    if (!m || !m->family->predict) return mlrt__check_rows(m, in, n, out, false, "predict", err);
    return m->family->predict(m, in, n, out, err);
}

mlrt_status mlrt_predict(mlrt_model *m, const float *in, float *out, mlrt_error *err) {
    return mlrt_predict_batch(m, in, 1, out, err);
}

mlrt_status mlrt__run_rows(mlrt_model *m, const mlrt_tensor *in, mlrt_error *err) {
    size_t n = (size_t)in[0].dims[0];
    int64_t dims[2] = {(int64_t)n, m->out_size};
    float *y = mlrt__output(m, 0, 2, dims, err);
    return y ? m->family->predict(m, in[0].data, n, y, err) : err->code;
}

/* Index of the best score: the first maximum (the smallest label); 0 when every score is NaN. */
static size_t argmax(const float *s, size_t n) {
    size_t best = 0;
    for (size_t i = 1; i < n; i++)
        if (s[i] > s[best] || (s[best] != s[best] && s[i] == s[i])) best = i;
    return best;
}

/* Index of the smallest distance, as aprender: strict <, from +inf, so ties go low and NaN never wins. */
static size_t argmin(const float *d, size_t n) {
    size_t best = 0;
    float min = INFINITY;
    for (size_t i = 0; i < n; i++)
        if (d[i] < min) min = d[i], best = i;
    return best;
}

mlrt_status mlrt_predict_labels(mlrt_model *m, const float *in, size_t n, uint32_t *labels, mlrt_error *err) {
    mlrt_status st = mlrt__check_rows(m, in, n, labels, false, "predict_labels", err);
    if (st) return st;
    if (m->task == MLRT_TASK_REGRESSION)
        return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT,
                          "predict_labels: a %s regressor predicts values, not labels: use predict", mlrt_kind_name(m->kind));
    if (!m->label_scores && label_scratch(m))
        return mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "predict_labels: out of memory for %u scores", m->out_size);
    size_t no = m->out_size, tile = m->label_rows;
    float *scores = m->label_scores;
    for (size_t r = 0; r < n && !st; r += tile) {
        size_t rows = n - r < tile ? n - r : tile;
        st = m->family->predict(m, in + r * m->in_size, rows, scores, err);
        for (size_t k = 0; k < rows && !st; k++) {
            const float *s = scores + k * no;
            size_t c = m->task == MLRT_TASK_CLUSTERING ? argmin(s, no)
                     : no == 1 && m->n_classes == 2 ? (s[0] >= 0.5f) /* p(class 1) */
                     : argmax(s, no);
            labels[r + k] = m->task == MLRT_TASK_CLUSTERING ? (uint32_t)c : mlrt_class_label(m, c);
        }
    }
    return st;
}

mlrt_status mlrt_layer_slice(mlrt_model *m, size_t i, const float *x, float *y, size_t rows, size_t o0, size_t o1,
                             mlrt_error *err) {
    if (!m || !m->family->slice || i >= m->n_layers || !x || !y || rows == 0)
        return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "layer_slice: %s",
                          !m || !m->family->slice ? "not a loaded dense model" : i >= m->n_layers ? "no such layer"
                          : rows == 0 ? "no rows" : "NULL buffer");
    const mlrt_layer_info *l = &m->layers[i];
    if (o0 % MLRT_SLICE || o0 >= o1 || o1 > l->outputs || (o1 % MLRT_SLICE && o1 != l->outputs) ||
        (l->activation == MLRT_ACT_SOFTMAX && (o0 || o1 != l->outputs)))
        return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "layer_slice: outputs [%zu, %zu) of layer %zu (%u outputs, %s) "
                          "are not a slice of it", o0, o1, i, l->outputs, mlrt_activation_name(l->activation));
    if (i == 0) {
        mlrt_status st = mlrt__check_rows(m, x, rows, y, true, "predict", err);
        if (st) return st;
    }
    return m->family->slice(m, i, x, y, rows, o0, o1, err);
}

/* ------------------------------------------------------------------ named inputs */

size_t mlrt_input_count(const mlrt_model *m) { return m ? m->n_inputs : 0; }
size_t mlrt_output_count(const mlrt_model *m) { return m ? m->n_outputs : 0; }
const mlrt_tensor *mlrt_input(const mlrt_model *m, size_t i) { return m && i < m->n_inputs ? &m->inputs[i].t : NULL; }
const mlrt_tensor *mlrt_output(const mlrt_model *m, size_t i) { return m && i < m->n_outputs ? &m->outputs[i].t : NULL; }

void *mlrt__output(mlrt_model *m, uint32_t k, uint32_t rank, const int64_t *dims, mlrt_error *err) {
    mlrt__io *o = &m->outputs[k];
    uint64_t count = 1, bytes;
    for (uint32_t d = 0; d < rank; d++) count *= (uint64_t)dims[d], o->t.dims[d] = dims[d];
    o->t.rank = rank;
    if (!mlrt__dtype_bytes(o->t.dtype, count, &bytes) || bytes > SIZE_MAX / 2) {
        mlrt__fail(err, MLRT_ERR_SHAPE_OVERFLOW, "run: output '%s' would hold %llu elements", o->t.name, (unsigned long long)count);
        return NULL;
    }
    if (bytes > o->cap || !o->t.data) {
        void *p = realloc(o->t.data, bytes ? bytes : 1);
        if (!p) {
            mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "run: out of memory for output '%s' (%llu bytes)", o->t.name,
                       (unsigned long long)bytes);
            return NULL;
        }
        o->t.data = p, o->cap = bytes;
    }
    return o->t.data;
}

/* Element types a caller may give for an input of type want, converted on the way in. */
static bool accepts(mlrt_dtype want, mlrt_dtype got) {
    if (want == got) return true;
    if (want == MLRT_I64) return got == MLRT_I32;
    if (want == MLRT_U8) return got == MLRT_BOOL || got == MLRT_I32 || got == MLRT_I64;
    return false;
}

/* in's data as want's element type: in place, or converted into *tmp (freed by the caller). */
static mlrt_status convert(const mlrt_tensor *in, mlrt_dtype want, uint64_t count, void **data, void **tmp,
                           mlrt_error *err) {
    *data = in->data, *tmp = NULL;
    if (in->dtype == want) return MLRT_OK;
    *tmp = malloc(count * mlrt_dtype_size(want) + 1);
    if (!*tmp) return mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "run: out of memory for input '%s'", in->name);
    for (uint64_t i = 0; i < count; i++) {
        int64_t v = in->dtype == MLRT_I32 ? ((const int32_t *)in->data)[i]
                  : in->dtype == MLRT_I64 ? ((const int64_t *)in->data)[i] : ((const uint8_t *)in->data)[i];
        if (want == MLRT_I64) ((int64_t *)*tmp)[i] = v;
        else if (v != 0 && v != 1)
            return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "run: input '%s' element %llu is %lld; a mask holds 0 or 1",
                              in->name, (unsigned long long)i, (long long)v);
        else ((uint8_t *)*tmp)[i] = (uint8_t)v;
    }
    *data = *tmp;
    return MLRT_OK;
}

/* Checks given input g against the model's input `want`; sets the varying dims' values in seen. */
static mlrt_status check_input(const mlrt__io *want, const mlrt_tensor *g, int64_t *seen_val, const char **seen_sym,
                               uint32_t *n_seen, uint64_t *count, mlrt_error *err) {
    const mlrt_tensor *w = &want->t;
    if (!accepts(w->dtype, g->dtype))
        return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "run: input '%s' is %s; the model takes %s", w->name,
                          mlrt_dtype_name(g->dtype), mlrt_dtype_name(w->dtype));
    if (g->rank != w->rank)
        return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "run: input '%s' has rank %u; the model takes rank %u", w->name,
                          g->rank, w->rank);
    *count = 1;
    for (uint32_t d = 0; d < w->rank; d++) {
        int64_t v = g->dims[d];
        if (w->dims[d] >= 0 && v != w->dims[d])
            return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "run: input '%s' dim %u is %lld; the model takes %lld", w->name, d,
                              (long long)v, (long long)w->dims[d]);
        if (w->dims[d] < 0) {
            if (v < 1 || (want->max[d] > 0 && v > want->max[d]))
                return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "run: input '%s' dim %u (%s) is %lld; it must be 1..%lld",
                                  w->name, d, want->sym[d], (long long)v, (long long)(want->max[d] > 0 ? want->max[d] : INT32_MAX));
            uint32_t s = 0;
            while (s < *n_seen && strcmp(seen_sym[s], want->sym[d])) s++;
            if (s < *n_seen && seen_val[s] != v)
                return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "run: input '%s' has %s %lld, another input %lld", w->name,
                                  want->sym[d], (long long)v, (long long)seen_val[s]);
            if (s == *n_seen && s < 2 * MLRT_MAX_DIMS) seen_sym[s] = want->sym[d], seen_val[s] = v, (*n_seen)++;
        }
        if (!mlrt__mul_u64(*count, (uint64_t)v, count) || *count > ((uint64_t)1 << 40))
            return mlrt__fail(err, MLRT_ERR_SHAPE_OVERFLOW, "run: input '%s' has too many elements", w->name);
    }
    if (*count && !g->data) return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "run: input '%s' has NULL data", w->name);
    return MLRT_OK;
}

mlrt_status mlrt_run(mlrt_model *m, const mlrt_tensor *inputs, size_t n, mlrt_error *err) {
    mlrt_error local;
    if (!err) err = &local; /* the families read a failure's code from it */
    if (!m || (!inputs && n)) return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "run: %s", m ? "NULL inputs" : "no model");
    uint32_t required = 0;
    for (uint32_t k = 0; k < m->n_inputs; k++) required += !m->inputs[k].optional;
    if (n < required || n > m->n_inputs) {
        char range[32] = "";
        if (required < m->n_inputs) mlrt__format_to(range, sizeof range, " to %u", m->n_inputs);
        return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "run: %zu inputs given; the model takes %u%s", n, required, range);
    }
    mlrt_tensor *in = calloc(m->n_inputs + 1, sizeof *in);
    void **tmp = calloc(m->n_inputs + 1, sizeof *tmp);
    mlrt_status st = in && tmp ? MLRT_OK : mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "run: out of memory");
    int64_t seen_val[2 * MLRT_MAX_DIMS];
    const char *seen_sym[2 * MLRT_MAX_DIMS];
    uint32_t n_seen = 0;
    for (size_t k = 0; k < n && !st; k++) { /* in the model's order: by name, or by position without names */
        const mlrt_tensor *g = &inputs[k];
        uint32_t i = (uint32_t)k;
        if (g->name) {
            for (i = 0; i < m->n_inputs && strcmp(m->inputs[i].t.name, g->name); i++) {}
            if (i == m->n_inputs) { st = mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "run: the model has no input '%s'", g->name); break; }
        }
        if (in[i].name) { st = mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "run: input '%s' is given twice", m->inputs[i].t.name); break; }
        uint64_t count = 0;
        st = check_input(&m->inputs[i], g, seen_val, seen_sym, &n_seen, &count, err);
        if (!st) st = convert(g, m->inputs[i].t.dtype, count, &in[i].data, &tmp[i], err);
        in[i].name = m->inputs[i].t.name, in[i].dtype = m->inputs[i].t.dtype, in[i].rank = g->rank;
        memcpy(in[i].dims, g->dims, sizeof in[i].dims);
    }
    for (uint32_t k = 0; k < m->n_inputs && !st; k++)
        if (!in[k].name && !m->inputs[k].optional)
            st = mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "run: input '%s' is missing", m->inputs[k].t.name);
    if (!st) st = m->family->run(m, in, err);
    for (uint32_t k = 0; tmp && k < m->n_inputs; k++) free(tmp[k]);
    free(tmp), free(in);
    return st;
}

/* ------------------------------------------------------------------ introspection */

size_t mlrt_input_size(const mlrt_model *m) { return m->in_size; }
size_t mlrt_output_size(const mlrt_model *m) { return m->out_size; }
mlrt_format mlrt_model_format(const mlrt_model *m) { return m->format; }
mlrt_kind mlrt_model_kind(const mlrt_model *m) { return m->kind; }
mlrt_task mlrt_model_task(const mlrt_model *m) { return m->task; }
size_t mlrt_class_count(const mlrt_model *m) { return m->n_classes; }
uint32_t mlrt_class_label(const mlrt_model *m, size_t i) {
    return i >= m->n_classes ? 0 : m->classes ? m->classes[i] : (uint32_t)i; /* implicit labels: the output's index */
}
mlrt_dtype mlrt_weight_dtype(const mlrt_model *m) { return m->dtype; }
size_t mlrt_layer_count(const mlrt_model *m) { return m->n_layers; }
const char *mlrt_model_info_json(const mlrt_model *m) { return m->info_json; }
uint64_t mlrt_param_count(const mlrt_model *m) { return m->family->params(m); }

mlrt_layer_info mlrt_layer(const mlrt_model *m, size_t i) {
    mlrt_layer_info none = {0, 0, MLRT_ACT_IDENTITY, 0};
    return i < m->n_layers ? m->layers[i] : none;
}

mlrt_status mlrt_layer_weights(const mlrt_model *m, size_t i, float *w, float *b, mlrt_error *err) {
    if (!m || i >= m->n_layers || !w || !m->family->layer_weights)
        return mlrt__fail(err, MLRT_ERR_INVALID_ARGUMENT, "layer_weights: %s", !m ? "no model" : !w ? "NULL buffer" : "no such layer");
    m->family->layer_weights(m, i, w, b);
    return MLRT_OK;
}
