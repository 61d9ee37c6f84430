/* fuzz_common.h — oracles shared by the libFuzzer targets in tests/fuzz/.
 *
 * Beyond "no sanitizer report", every target checks what a caller relies on:
 *  - a refusal carries a valid status and a one-line, NUL-terminated, UTF-8 message;
 *  - a loaded model is self-consistent (layer chain, sizes), its info JSON parses with mlrt's
 *    own strict JSON reader, a batch equals the same rows predicted one by one bit for bit,
 *    and so do a fork's batch and the layers run slice by slice (the threads' paths),
 *    the outputs are those of a plain double-precision forward pass over the packed weights,
 *    and they are finite whenever the weights cannot overflow float (a bound computed here);
 *  - a validated tensor set tiles the data section exactly, as the readers promise.
 * Any violation aborts, which libFuzzer reports as a crash with a reproducer. */
#ifndef MLRT__FUZZ_COMMON_H
#define MLRT__FUZZ_COMMON_H

#include "mlrt.h"
#include "codecs/codecs.h"
#include "formats/formats.h"
#include "model/model.h"
#include "api/api.h"
#include "model/graph.h" /* mlrt__onnx_sniff: detection tries ONNX before the tensor formats */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Inputs beyond this are skipped. run.sh passes -max_len=65536; this guard keeps a run with a
 * larger -max_len from spending its time (and memory: a model takes up to ~256x the bytes of
 * its widest layer in scratch space) on inputs that exercise nothing new. */
#define FUZZ_MAX_INPUT (1u << 20)

#define FUZZ_ASSERT(cond, ...)                                                                       \
    do {                                                                                             \
        if (!(cond)) {                                                                               \
            fprintf(stderr, "\nfuzz oracle failed at %s:%d: %s\n  ", __FILE__, __LINE__, #cond);    \
            fprintf(stderr, __VA_ARGS__);                                                            \
            fputc('\n', stderr);                                                                     \
            abort();                                                                                 \
        }                                                                                            \
    } while (0)

/* A refusal: a real error code and a message fit for a log line and for JavaScript. */
static void fuzz_check_error(mlrt_status st, const mlrt_error *e) {
    FUZZ_ASSERT(st > MLRT_OK && st < MLRT_STATUS_COUNT_, "status %d", (int)st);
    FUZZ_ASSERT(e->code == st, "err.code %d but returned %d", (int)e->code, (int)st);
    size_t len = strnlen(e->message, MLRT_ERROR_MESSAGE_MAX);
    FUZZ_ASSERT(len > 0 && len < MLRT_ERROR_MESSAGE_MAX, "message length %zu", len);
    FUZZ_ASSERT(mlrt__utf8_valid((const uint8_t *)e->message, len), "message not UTF-8: %s", e->message);
    for (size_t i = 0; i < len; i++)
        FUZZ_ASSERT((unsigned char)e->message[i] >= 0x20 && e->message[i] != 0x7f, "control byte in message: %s",
                    e->message);
}

/* JSON produced by mlrt (info, inspect) must be valid JSON: an object, UTF-8, no duplicate keys. */
/* A file the format's reader refused with st: load and inspect must refuse it with the same code. */
static void fuzz_check_refused_alike(const uint8_t *data, size_t size, mlrt_status st) {
    mlrt_error e;
    mlrt_model *m = mlrt_load_from_bytes(data, size, &e);
    FUZZ_ASSERT(m == NULL && e.code == st, "reader %s, load %s", mlrt_status_name(st), m ? "OK" : mlrt_status_name(e.code));
    char *js = mlrt_inspect(data, size, &e);
    FUZZ_ASSERT(js == NULL && e.code == st, "reader %s, inspect %s", mlrt_status_name(st), js ? "OK" : mlrt_status_name(e.code));
}

static void fuzz_check_json_output(const char *s) {
    FUZZ_ASSERT(s != NULL, "no JSON");
    mlrt__json_doc doc;
    mlrt_error e;
    mlrt_status st = mlrt__json_parse((const uint8_t *)s, strlen(s), "output", &doc, &e);
    FUZZ_ASSERT(st == MLRT_OK, "mlrt's own JSON output does not parse (%s): %.400s", e.message, s);
    FUZZ_ASSERT(doc.root->type == MLRT__JSON_OBJECT, "JSON output is not an object");
    mlrt__json_free(&doc);
}

/* Whether mlrt's JSON output s (an object) has the top-level member key: a key inside the file's own
 * metadata (which the output carries) does not count, whatever its text. */
static bool fuzz_json_has(const char *s, const char *key) {
    mlrt__json_doc doc;
    mlrt_error e;
    FUZZ_ASSERT(mlrt__json_parse((const uint8_t *)s, strlen(s), "output", &doc, &e) == MLRT_OK, "output: %s", e.message);
    bool has = mlrt__json_get(doc.root, key) != NULL;
    mlrt__json_free(&doc);
    return has;
}

/* The invariants mlrt__read_safetensors / mlrt__read_bintensors promise on success. */
static void fuzz_check_tensorset(const mlrt__tensorset *ts, size_t file_size) {
    FUZZ_ASSERT(ts->data_begin >= 8 && ts->data_begin <= file_size, "data_begin %zu of %zu", ts->data_begin,
                file_size);
    size_t data_len = file_size - ts->data_begin, pos = 0;
    FUZZ_ASSERT(ts->count <= MLRT__MAX_TENSORS, "%zu tensors", ts->count);
    for (size_t i = 0; i < ts->count; i++) {
        const mlrt__tensor *t = &ts->tensors[i];
        FUZZ_ASSERT(t->name && t->name_len > 0 && strlen(t->name) == t->name_len, "tensor %zu name", i);
        FUZZ_ASSERT(mlrt__utf8_valid((const uint8_t *)t->name, t->name_len), "tensor %zu name not UTF-8", i);
        FUZZ_ASSERT((unsigned)t->dtype < MLRT_DTYPE_COUNT_, "dtype %d", (int)t->dtype);
        FUZZ_ASSERT(t->rank <= MLRT__MAX_RANK, "rank %u", t->rank);
        uint64_t count = 1;
        for (uint32_t d = 0; d < t->rank; d++) FUZZ_ASSERT(mlrt__mul_u64(count, t->shape[d], &count), "overflow");
        FUZZ_ASSERT(count == t->count, "count %llu vs shape product %llu", (unsigned long long)t->count,
                    (unsigned long long)count);
        FUZZ_ASSERT(t->begin == pos, "tensor '%s' begins at %zu, previous ended at %zu", t->name, t->begin, pos);
        FUZZ_ASSERT(t->end >= t->begin && t->end <= data_len, "tensor '%s' [%zu, %zu) of %zu", t->name, t->begin,
                    t->end, data_len);
        FUZZ_ASSERT((uint64_t)(t->end - t->begin) == count * mlrt_dtype_size(t->dtype), "tensor '%s' span", t->name);
        pos = t->end;
    }
    FUZZ_ASSERT(pos == data_len, "tensors end at %zu of %zu", pos, data_len);
    for (size_t i = 0; i < ts->meta_count; i++) {
        const mlrt__kv *kv = &ts->meta[i];
        FUZZ_ASSERT(kv->key && kv->value, "metadata %zu", i);
        FUZZ_ASSERT(mlrt__utf8_valid((const uint8_t *)kv->key, kv->key_len) &&
                        mlrt__utf8_valid((const uint8_t *)kv->value, kv->value_len),
                    "metadata %zu not UTF-8", i);
    }
}

/* A tensor set's model, built from one reading of it while d keeps another for the oracle; NULL with *e
 * when the tensors make no model (d is then empty). */
static mlrt_model *fuzz_build_tensors(const uint8_t *file, const mlrt__tensorset *ts, mlrt__desc *d, mlrt_error *e) {
    mlrt__desc built;
    if (mlrt__recognize(file, ts, MLRT_LAYOUT_AUTO, &built, e)) {
        mlrt__desc_free(&built);
        memset(d, 0, sizeof *d);
        return NULL;
    }
    mlrt_model *m = mlrt__build(&built, e);
    mlrt_error again;
    FUZZ_ASSERT(mlrt__recognize(file, ts, MLRT_LAYOUT_AUTO, d, &again) == MLRT_OK, "a second reading differs: %s", again.message);
    return m;
}

/* The statuses recognising and building may give for a valid tensor set. */
static int fuzz_is_model_error(mlrt_status st) {
    return st == MLRT_ERR_NOT_A_MODEL || st == MLRT_ERR_BAD_DIMENSIONS || st == MLRT_ERR_UNSUPPORTED ||
           st == MLRT_ERR_BAD_HEADER || st == MLRT_ERR_NON_FINITE || st == MLRT_ERR_OUT_OF_MEMORY;
}

static double fuzz_act(mlrt_activation a, double v) {
    switch (a) {
    case MLRT_ACT_RELU: return v > 0 ? v : 0;
    case MLRT_ACT_LEAKY_RELU: return v > 0 ? v : 0.01 * v;
    case MLRT_ACT_SIGMOID: return 1 / (1 + exp(-v));
    case MLRT_ACT_TANH: return tanh(v);
    case MLRT_ACT_SILU: return v / (1 + exp(-v));
    case MLRT_ACT_GELU: return 0.5 * v * (1 + erf(v / sqrt(2.0)));
    default: return v;
    }
}

/* Rows the harness runs on a model this wide: fewer for very wide inputs, so that its own buffers
 * stay far below libFuzzer's malloc limit (a valid 155-byte tree may take 2^24 features). */
static size_t fuzz_rows(size_t width, size_t rows) { return width > (1u << 20) ? 1 : rows; }

/* Runs a model on rows of zeros, ones and minus ones, and checks it as described at the top. */
/* Trees, forests, KMeans: batch = single, every output and label well-formed, and each tree's
 * leaf for every row found again by a plain pointer walk over the description d the model was
 * built from (a second read of the same file). */
static void fuzz_exercise_classic(mlrt_model *m, const mlrt__desc *d) {
    size_t in = mlrt_input_size(m), out = mlrt_output_size(m);
    FUZZ_ASSERT(in >= 1 && out >= 1 && mlrt_layer_count(m) == 0, "in %zu out %zu", in, out);
    fuzz_check_json_output(mlrt_model_info_json(m));
    enum { ROWS = 4 };
    static const float row_value[ROWS] = {0.0f, 1.0f, -1.0f, NAN};
    const bool kmeans = mlrt_model_kind(m) == MLRT_KIND_KMEANS;
    size_t rows = fuzz_rows(in > out ? in : out, kmeans ? ROWS - 1 : ROWS); /* KMeans takes finite inputs only */
    float *x = malloc(rows * in * sizeof(float)), *y = malloc(rows * out * sizeof(float)), *y1 = malloc(out * sizeof(float));
    uint32_t labels[ROWS], l1;
    FUZZ_ASSERT(x && y && y1, "out of memory");
    for (size_t r = 0; r < rows; r++)
        for (size_t i = 0; i < in; i++) x[r * in + i] = row_value[r] * (float)(i % 3);
    mlrt_error e;
    mlrt_status st = mlrt_predict_batch(m, x, rows, y, &e);
    FUZZ_ASSERT(st == MLRT_OK || (kmeans && st == MLRT_ERR_NON_FINITE), "predict_batch: %s", e.message);
    mlrt_status lst = mlrt_predict_labels(m, x, rows, labels, &e);
    FUZZ_ASSERT(mlrt_model_task(m) == MLRT_TASK_REGRESSION ? lst == MLRT_ERR_INVALID_ARGUMENT : lst == st, "labels: %s", e.message);
    for (size_t r = 0; r < rows && st == MLRT_OK; r++) {
        FUZZ_ASSERT(mlrt_predict(m, x + r * in, y1, &e) == MLRT_OK, "predict: %s", e.message);
        FUZZ_ASSERT(memcmp(y1, y + r * out, out * sizeof(float)) == 0, "row %zu: batch differs from single", r);
        if (lst == MLRT_OK) {
            FUZZ_ASSERT(mlrt_predict_labels(m, x + r * in, 1, &l1, &e) == MLRT_OK && l1 == labels[r], "row %zu label", r);
            if (kmeans) FUZZ_ASSERT(labels[r] < out, "cluster %u of %zu", labels[r], out);
        }
        if (!d->forest) continue;
        const mlrt__forest *f = d->forest;
        float sum = 0.0f;
        bool hit = false;
        for (uint32_t t = 0; t < f->n_trees; t++) { /* the oracle walk */
            uint32_t n = f->root[t], steps = 0;
            while (f->nodes[n].left != n) {
                const mlrt__tree_node *nd = &f->nodes[n];
                FUZZ_ASSERT(nd->feature < in && nd->left < f->n_nodes && nd->right < f->n_nodes, "node %u out of range", n);
                n = x[r * in + nd->feature] <= nd->v.threshold ? nd->left : nd->right;
                FUZZ_ASSERT(++steps <= f->depth[t], "tree %u is deeper than its depth %u", t, f->depth[t]);
            }
            if (f->regression) sum += f->nodes[n].v.value;
            else {
                FUZZ_ASSERT(f->nodes[n].v.cls < f->n_classes, "leaf class %u of %u", f->nodes[n].v.cls, f->n_classes);
                hit |= y[r * out + f->nodes[n].v.cls] > 0;
            }
        }
        if (f->regression) FUZZ_ASSERT(y[r] == (mlrt_model_kind(m) == MLRT_KIND_RANDOM_FOREST ? sum / (float)f->n_trees : sum), "row %zu value", r);
        else FUZZ_ASSERT(hit, "row %zu: no leaf's class has a score", r);
        if (!f->regression && lst == MLRT_OK) {
            bool known = false;
            for (uint32_t c = 0; c < f->n_classes; c++) known |= mlrt_class_label(m, c) == labels[r];
            FUZZ_ASSERT(known, "row %zu: label %u is not a class", r, labels[r]);
        }
    }
    free(x), free(y), free(y1);
}

/* The threads' paths: a fork's batch, and the layers run slice by slice (MLRT_SLICE outputs,
 * alternating between the model and its fork), give the batch's bits `want`. */
static void fuzz_check_fork_and_slices(mlrt_model *m, const float *x, size_t rows, const float *want) {
    mlrt_error e;
    mlrt_model *f = mlrt_model_fork(m, &e);
    if (!f) {
        FUZZ_ASSERT(e.code == MLRT_ERR_OUT_OF_MEMORY, "fork: %s", e.message);
        return;
    }
    size_t out = mlrt_output_size(m), nl = mlrt_layer_count(m), width = 0;
    for (size_t i = 0; i < nl; i++) width = mlrt_layer(m, i).outputs > width ? mlrt_layer(m, i).outputs : width;
    float *y = malloc(rows * out * sizeof(float)), *buf = malloc(2 * width * rows * sizeof(float));
    FUZZ_ASSERT(y && buf, "out of memory");
    FUZZ_ASSERT(mlrt_predict_batch(f, x, rows, y, &e) == MLRT_OK, "the fork's batch: %s", e.message);
    FUZZ_ASSERT(memcmp(y, want, rows * out * sizeof(float)) == 0, "the fork's batch differs from the model's");
    memset(y, 0, rows * out * sizeof(float));
    const float *in = x;
    for (size_t i = 0; i < nl; i++) {
        mlrt_layer_info l = mlrt_layer(m, i);
        float *o = i + 1 == nl ? y : buf + (i & 1) * width * rows;
        size_t step = l.activation == MLRT_ACT_SOFTMAX ? l.outputs : MLRT_SLICE;
        for (size_t o0 = 0, k = 0; o0 < l.outputs; o0 += step, k++) {
            mlrt_status s = mlrt_layer_slice(k & 1 ? f : m, i, in, o, rows, o0, o0 + step < l.outputs ? o0 + step : l.outputs, &e);
            FUZZ_ASSERT(s == MLRT_OK, "layer %zu, slice at %zu: %s", i, o0, e.message);
        }
        in = o;
    }
    FUZZ_ASSERT(memcmp(y, want, rows * out * sizeof(float)) == 0, "the layers slice by slice differ from the batch");
    free(y), free(buf);
    mlrt_free(f);
}

/* d: the description m was built from, read again (the classical models' oracle walks it). */
static void fuzz_exercise_model(mlrt_model *m, const mlrt__desc *d) {
    if (d->type == MLRT__DESC_FOREST || d->type == MLRT__DESC_KMEANS) {
        fuzz_exercise_classic(m, d);
        return;
    }
    size_t in = mlrt_input_size(m), out = mlrt_output_size(m), nl = mlrt_layer_count(m);
    FUZZ_ASSERT(in >= 1 && out >= 1 && nl >= 1 && nl <= MLRT__MAX_LAYERS, "in %zu out %zu layers %zu", in, out, nl);
    FUZZ_ASSERT(mlrt_layer(m, 0).inputs == in && mlrt_layer(m, nl - 1).outputs == out, "layer chain ends");
    uint64_t params = 0;
    for (size_t i = 0; i < nl; i++) {
        mlrt_layer_info li = mlrt_layer(m, i);
        FUZZ_ASSERT(li.inputs >= 1 && li.outputs >= 1 && (unsigned)li.activation < MLRT_ACT_COUNT_, "layer %zu", i);
        if (i + 1 < nl) FUZZ_ASSERT(li.outputs == mlrt_layer(m, i + 1).inputs, "layers %zu/%zu do not chain", i, i + 1);
        params += (uint64_t)li.inputs * li.outputs;
    }
    FUZZ_ASSERT(params <= mlrt_param_count(m) && mlrt_param_count(m) <= MLRT__MAX_PARAMS, "param count");
    fuzz_check_json_output(mlrt_model_info_json(m));

    enum { ROWS = 3 };
    static const float row_value[ROWS] = {0.0f, 1.0f, -1.0f};
    size_t width = in;
    for (size_t i = 0; i < nl; i++) width = mlrt_layer(m, i).outputs > width ? mlrt_layer(m, i).outputs : width;
    const size_t rows = fuzz_rows(width, ROWS);
    float *x = malloc(rows * in * sizeof(float)), *y = malloc(rows * out * sizeof(float));
    float *y1 = malloc(out * sizeof(float));
    FUZZ_ASSERT(x && y && y1, "out of memory");
    for (size_t r = 0; r < rows; r++)
        for (size_t i = 0; i < in; i++) x[r * in + i] = row_value[r];
    /* A prediction either succeeds with finite outputs or, when finite weights overflow float,
     * is refused with NON_FINITE (checked against the bound below); a batch is refused iff one
     * of its rows is, and otherwise equals the rows predicted one at a time, bit for bit. */
    mlrt_error e;
    mlrt_status st = mlrt_predict_batch(m, x, rows, y, &e), row_st[ROWS];
    FUZZ_ASSERT(st == MLRT_OK || st == MLRT_ERR_NON_FINITE, "predict_batch: %s", e.message);
    bool any_refused = false;
    for (size_t r = 0; r < rows; r++) {
        row_st[r] = mlrt_predict(m, x + r * in, y1, &e);
        FUZZ_ASSERT(row_st[r] == MLRT_OK || row_st[r] == MLRT_ERR_NON_FINITE, "predict: %s", e.message);
        any_refused |= row_st[r] != MLRT_OK;
        if (row_st[r] != MLRT_OK) continue;
        for (size_t o = 0; o < out; o++) FUZZ_ASSERT(isfinite(y1[o]), "row %zu output %zu is not finite but OK", r, o);
        if (st == MLRT_OK)
            FUZZ_ASSERT(memcmp(y1, y + r * out, out * sizeof(float)) == 0, "row %zu: batch differs from single", r);
        else
            memcpy(y + r * out, y1, out * sizeof(float));
    }
    FUZZ_ASSERT(any_refused == (st != MLRT_OK), "the batch was %s but %s row was refused", st ? "refused" : "accepted",
                any_refused ? "a" : "no");
    if (st == MLRT_OK) fuzz_check_fork_and_slices(m, x, rows, y);

    /* A double-precision forward pass over the weights as the model holds them (mlrt_layer_weights:
     * the packed or quantized weights as f32), with a bound on every value. */
    double *a = malloc(width * sizeof(double)), *z = malloc(width * sizeof(double));
    FUZZ_ASSERT(a && z, "out of memory");
    for (size_t r = 0; r < rows; r++) {
        /* bound: |every value| <= bound; err: what float rounding can have changed so far
         * (summation: (in + 2) ulp of the sum of magnitudes; activations: Lipschitz <= 2, plus
         * a few ulp of their own) */
        double bound = 1, peak = 1, err = 0; /* peak: the largest bound before any squashing */
        for (size_t i = 0; i < in; i++) a[i] = row_value[r];
        for (size_t l = 0; l < nl; l++) {
            const mlrt_layer_info li = mlrt_layer(m, l);
            const struct { size_t in, out; mlrt_activation act; } L = {li.inputs, li.outputs, li.activation}, *dl = &L;
            const bool quantized = d->layers[l].w_dtype == MLRT_APR_Q8 || d->layers[l].w_dtype == MLRT_APR_Q4;
            float *w = malloc(dl->in * dl->out * sizeof(float)), *bias = malloc(dl->out * sizeof(float));
            FUZZ_ASSERT(w && bias && mlrt_layer_weights(m, l, w, bias, &e) == MLRT_OK, "layer_weights %zu", l);
            double maxw = 0, maxb = 0, mag = 0;
            for (size_t o = 0; o < dl->out; o++) {
                double s = bias[o], sa = fabs(bias[o]);
                for (size_t i = 0; i < dl->in; i++) {
                    double wi = w[o * dl->in + i];
                    s += wi * a[i];
                    sa += fabs(wi * a[i]);
                    maxw = fabs(wi) > maxw ? fabs(wi) : maxw;
                }
                maxb = fabs(bias[o]) > maxb ? fabs(bias[o]) : maxb;
                mag = sa > mag ? sa : mag;
                z[o] = s;
            }
            free(w), free(bias);
            double bound_in = bound;
            bound = (double)dl->in * maxw * bound + maxb;
            peak = bound > peak ? bound : peak;
            err = err * (double)dl->in * maxw + (double)(dl->in + 2) * 0x1p-23 * (mag + (double)dl->in * maxw * err);
            if (quantized) /* int16 activations: each off by at most half a step of max|a| / 32767 (+ its rounding) */
                err += (double)dl->in * maxw * (bound_in + err) * (0.5 / 32767 + 0x1p-20);
            if (dl->act == MLRT_ACT_SOFTMAX) {
                double mx = z[0], sum = 0;
                for (size_t o = 1; o < dl->out; o++) mx = z[o] > mx ? z[o] : mx;
                for (size_t o = 0; o < dl->out; o++) sum += (z[o] = exp(z[o] - mx));
                for (size_t o = 0; o < dl->out; o++) z[o] /= sum;
            } else {
                for (size_t o = 0; o < dl->out; o++) z[o] = fuzz_act(dl->act, z[o]);
            }
            if (dl->act == MLRT_ACT_SOFTMAX || dl->act == MLRT_ACT_SIGMOID || dl->act == MLRT_ACT_TANH)
                bound = bound < 1 ? bound : 1;
            if (dl->act != MLRT_ACT_IDENTITY) err = 2 * err + (double)(dl->out + 8) * 0x1p-22 * (1 + bound);
            memcpy(a, z, dl->out * sizeof(double));
        }
        const float *got = y + r * out;
        if (row_st[r] != MLRT_OK) { /* refused as overflowing: only where overflow is possible */
            FUZZ_ASSERT(peak >= 1e37, "row %zu refused as non-finite though |values| <= %g", r, peak);
            continue;
        }
        if (peak < 1e30) /* and each is the double forward pass's, within the rounding bound */
            for (size_t o = 0; o < out; o++)
                FUZZ_ASSERT(fabs(got[o] - a[o]) <= 4 * err + 1e-30, "row %zu output %zu: %.9g, want %.9g (error bound %g)",
                            r, o, (double)got[o], a[o], 4 * err);
    }
    free(a);
    free(z);
    free(x);
    free(y);
    free(y1);
}

/* inspect on bytes that loaded as a model (or a tensor file) must succeed and be valid JSON. */
static void fuzz_check_inspect_ok(const uint8_t *data, size_t size, const char *format) {
    mlrt_error e;
    char *js = mlrt_inspect(data, size, &e);
    FUZZ_ASSERT(js != NULL, "inspect failed on a valid %s file: %s", format, e.message);
    fuzz_check_json_output(js);
    char want[48];
    snprintf(want, sizeof want, "{\"format\":\"%s\"", format);
    FUZZ_ASSERT(strncmp(js, want, strlen(want)) == 0, "inspect: %.200s", js);
    mlrt_string_free(js);
}

#endif
