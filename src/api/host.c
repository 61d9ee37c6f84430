/* api/host.c — what a host needs that drives mlrt through a foreign-function interface: memory to
 * pass buffers in, and what the build was compiled for. The wasm builds export exactly mlrt.h's
 * functions (the Makefile's WASM_API); this file keeps no state of its own (errors come back in the
 * caller's mlrt_error). */
#include "../mlrt.h"
#include <stddef.h>
#include <stdlib.h>

#if UINTPTR_MAX == 0xffffffffu /* wasm32: the layout the JavaScript module reads and writes */
_Static_assert(sizeof(mlrt_error) == 324 && offsetof(mlrt_error, message) == 4, "mlrt_error layout");
_Static_assert(sizeof(mlrt_tensor) == 88 && offsetof(mlrt_tensor, dtype) == 4 && offsetof(mlrt_tensor, rank) == 8 &&
                   offsetof(mlrt_tensor, dims) == 16 && offsetof(mlrt_tensor, data) == 80,
               "mlrt_tensor layout");
_Static_assert(sizeof(mlrt_load_options) == 12 && sizeof(mlrt_layer_info) == 16, "mlrt_load_options, mlrt_layer_info layout");
_Static_assert(sizeof(mlrt_file) == 12 && offsetof(mlrt_file, bytes) == 4 && offsetof(mlrt_file, len) == 8 && sizeof(size_t) == 4,
               "mlrt_file layout (loadTokenizer, loadEncoder), size_t ends (embed)");
#endif

void *mlrt_alloc(size_t size) { return malloc(size ? size : 1); }
void mlrt_dealloc(void *p) { free(p); }

uint32_t mlrt_build_flags(void) {
    uint32_t f = 0;
#if defined(__wasm_simd128__)
    f |= 1;
#endif
#if defined(__wasm_relaxed_simd__)
    f |= 2;
#endif
#if defined(__wasm_atomics__) || defined(__EMSCRIPTEN_PTHREADS__)
    f |= 4;
#endif
    return f;
}
