/* formats/bin.c — the raw MLP format (no magic, little endian):
 *   i32 inputs, i32 hidden, i32 outputs,
 *   W1 [inputs][hidden], b1 [hidden], W2 [hidden][outputs], b2 [outputs]
 * as f64 (file size 12 + 8n) or f32 (12 + 4n), n the parameter count.
 * Hidden ReLU, output softmax. */
#include "formats.h"
#include <string.h>

#define FMT "bin"

mlrt_status mlrt__read_bin(const uint8_t *b, size_t n, mlrt__desc *d, mlrt_error *err) {
    memset(d, 0, sizeof *d);
    if (n < 12) return mlrt__fail(err, MLRT_ERR_TRUNCATED, FMT ": file is %zu bytes, shorter than the 12-byte header", n);
    int32_t dim[3] = {(int32_t)mlrt__rd_u32(b), (int32_t)mlrt__rd_u32(b + 4), (int32_t)mlrt__rd_u32(b + 8)};
    for (int i = 0; i < 3; i++) {
        if (dim[i] <= 0 || (uint32_t)dim[i] > MLRT__MAX_DIM)
            return mlrt__fail(err, MLRT_ERR_BAD_DIMENSIONS, FMT ": dimensions (inputs %d, hidden %d, outputs %d) must each be in 1..%u",
                              dim[0], dim[1], dim[2], MLRT__MAX_DIM);
    }
    uint64_t in = (uint64_t)dim[0], hid = (uint64_t)dim[1], out = (uint64_t)dim[2];
    uint64_t params = in * hid + hid + hid * out + out; /* each term < 2^48: no overflow */
    if (params > MLRT__MAX_PARAMS)
        return mlrt__fail(err, MLRT_ERR_BAD_DIMENSIONS, FMT ": %llux%llux%llu has %llu parameters, more than the limit of %llu",
                          (unsigned long long)in, (unsigned long long)hid, (unsigned long long)out,
                          (unsigned long long)params, (unsigned long long)MLRT__MAX_PARAMS);
    uint64_t size64 = 12 + params * 8, size32 = 12 + params * 4;
    mlrt_dtype dtype;
    if (n == size64) dtype = MLRT_F64;
    else if (n == size32) dtype = MLRT_F32;
    else
        return mlrt__fail(err, n < size32 ? MLRT_ERR_TRUNCATED : MLRT_ERR_SIZE_MISMATCH,
                          FMT ": dimensions %llux%llux%llu need %llu bytes (f64) or %llu bytes (f32), but the file is %zu bytes",
                          (unsigned long long)in, (unsigned long long)hid, (unsigned long long)out,
                          (unsigned long long)size64, (unsigned long long)size32, n);
    size_t es = mlrt_dtype_size(dtype);
    const uint8_t *w1 = b + 12, *b1 = w1 + in * hid * es, *w2 = b1 + hid * es, *b2 = w2 + hid * out * es;
    d->type = MLRT__DESC_DENSE, d->format = MLRT_FORMAT_BIN, d->kind = MLRT_KIND_MLP, d->dtype = dtype, d->n_layers = 2;
    d->layers[0] = (mlrt__dense_src){"w1", "b1", (uint32_t)in, (uint32_t)hid, w1, dtype, true, b1, dtype, MLRT_ACT_RELU, false};
    d->layers[1] = (mlrt__dense_src){"w2", "b2", (uint32_t)hid, (uint32_t)out, w2, dtype, true, b2, dtype, MLRT_ACT_SOFTMAX, false};
    return MLRT_OK;
}
