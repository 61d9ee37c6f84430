/* api/wasm.c — the exports the JavaScript module calls (wasm/mlrt.mjs).
 * Pointers are offsets into the wasm memory; sizes are in bytes unless named otherwise.
 * The last error is kept here for the JS side to read after a failed call. */
#include "../base/base.h"
#include <stdlib.h>

#if defined(__EMSCRIPTEN__)
#include <emscripten.h>
#define EXPORT EMSCRIPTEN_KEEPALIVE
#else
#define EXPORT /* native builds link these like any other function */
#endif

static mlrt_error last_error;

EXPORT void *mlrt_wasm_alloc(size_t size) { return malloc(size ? size : 1); }
EXPORT void mlrt_wasm_free(void *p) { free(p); }

/* The instruction sets this module was compiled for: bit 0 SIMD128, bit 1 relaxed SIMD. */
EXPORT int mlrt_wasm_build(void) {
    int f = 0;
#if defined(__wasm_simd128__)
    f |= 1;
#endif
#if defined(__wasm_relaxed_simd__)
    f |= 2;
#endif
    return f;
}

EXPORT int mlrt_wasm_error_code(void) { return last_error.code; }
EXPORT const char *mlrt_wasm_error_message(void) { return last_error.message; }
EXPORT const char *mlrt_wasm_status_name(int code) { return mlrt_status_name((mlrt_status)code); }

/* expect: NULL, or the NUL-terminated aprender model type the file must hold; layout: an
 * mlrt_weight_layout (mlrt_load_options). */
EXPORT mlrt_model *mlrt_wasm_load(const uint8_t *bytes, size_t len, const char *expect, int layout) {
    last_error.code = MLRT_OK;
    last_error.message[0] = 0;
    mlrt_load_options options = {expect, (mlrt_weight_layout)layout};
    return mlrt_load_from_bytes_ex(bytes, len, &options, &last_error);
}

EXPORT void mlrt_wasm_dispose(mlrt_model *m) { mlrt_free(m); }

/* A model sharing m's weights with scratch of its own, for another thread (mlrt_model_fork);
 * 0 with the error set. Freed with mlrt_wasm_dispose, before m. */
EXPORT mlrt_model *mlrt_wasm_fork(const mlrt_model *m) { return mlrt_model_fork(m, &last_error); }

/* Layer i on n rows, outputs [o0, o1) (mlrt_layer_slice): x is n x its inputs floats, y n x its outputs. */
EXPORT int mlrt_wasm_layer_slice(mlrt_model *m, size_t i, const float *x, size_t n, float *y, size_t o0, size_t o1) {
    return mlrt_layer_slice(m, i, x, y, n, o0, o1, &last_error);
}

EXPORT const char *mlrt_wasm_info(const mlrt_model *m) { return mlrt_model_info_json(m); }

/* n rows: in is n x inputs floats, out is n x outputs floats. Returns a status. */
EXPORT int mlrt_wasm_predict(mlrt_model *m, const float *in, size_t n, float *out) {
    return mlrt_predict_batch(m, in, n, out, &last_error);
}

/* n rows: in is n x inputs floats, labels is n uint32. Returns a status. */
EXPORT int mlrt_wasm_predict_labels(mlrt_model *m, const float *in, size_t n, uint32_t *labels) {
    return mlrt_predict_labels(m, in, n, labels, &last_error);
}

/* A malloc'd JSON string (free with mlrt_wasm_free), or 0 with the error set. */
EXPORT char *mlrt_wasm_inspect(const uint8_t *bytes, size_t len) {
    return mlrt_inspect(bytes, len, &last_error);
}

/* Layer i's weights, dequantized to f32: w [outputs][inputs], b [outputs]. Returns a status,
 * or -1 after success when the layer has no bias in the file (b is then all zero). */
EXPORT int mlrt_wasm_layer_weights(const mlrt_model *m, size_t i, float *w, float *b) {
    mlrt_status s = mlrt_layer_weights(m, i, w, b, &last_error);
    return s == MLRT_OK && !mlrt_layer(m, i).has_bias ? -1 : (int)s;
}
