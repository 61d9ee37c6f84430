/* base/dtype.c — element types: names, sizes, byte counts, and conversion to f32. */
#include "base.h"
#include <math.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "mlrt reads little-endian files with memcpy: big-endian hosts are not supported"
#endif

/* bytes for n elements = ceil(n / block) * block_bytes + header; size: per element, 0 if blocked.
 * F4 and F6 pack elements across bytes: their count must be a whole number of blocks. */
static const struct { const char *name; uint8_t size; uint16_t block, block_bytes; uint8_t header; } dtypes[MLRT_DTYPE_COUNT_] = {
    {"BOOL", 1, 1, 1, 0}, {"U8", 1, 1, 1, 0}, {"I8", 1, 1, 1, 0}, {"F8_E5M2", 1, 1, 1, 0}, {"F8_E4M3", 1, 1, 1, 0},
    {"I16", 2, 1, 2, 0}, {"U16", 2, 1, 2, 0}, {"F16", 2, 1, 2, 0}, {"BF16", 2, 1, 2, 0}, {"I32", 4, 1, 4, 0},
    {"U32", 4, 1, 4, 0}, {"F32", 4, 1, 4, 0}, {"F64", 8, 1, 8, 0}, {"I64", 8, 1, 8, 0}, {"U64", 8, 1, 8, 0},
    {"APR_Q4", 0, 32, 18, 0}, {"APR_Q8", 0, 1, 1, 4}, {"Q4_K", 0, 256, 144, 0}, {"Q6_K", 0, 256, 210, 0},
    {"F4", 0, 2, 1, 0}, {"F6_E2M3", 0, 4, 3, 0}, {"F6_E3M2", 0, 4, 3, 0}, {"F8_E8M0", 1, 1, 1, 0}, {"C64", 8, 1, 8, 0},
};

bool mlrt__dtype_packs_bits(mlrt_dtype d) {
    return d == MLRT_F4 || d == MLRT_F6_E2M3 || d == MLRT_F6_E3M2;
}

uint32_t mlrt__dtype_block(mlrt_dtype d) {
    return (unsigned)d < MLRT_DTYPE_COUNT_ ? dtypes[d].block : 1;
}

const char *mlrt_dtype_name(mlrt_dtype d) {
    return (unsigned)d < MLRT_DTYPE_COUNT_ ? dtypes[d].name : "?";
}

size_t mlrt_dtype_size(mlrt_dtype d) {
    return (unsigned)d < MLRT_DTYPE_COUNT_ ? dtypes[d].size : 0;
}

bool mlrt__dtype_bytes(mlrt_dtype d, uint64_t count, uint64_t *bytes) {
    if ((unsigned)d >= MLRT_DTYPE_COUNT_) return false;
    uint64_t blocks = count / dtypes[d].block + (count % dtypes[d].block != 0);
    return mlrt__mul_u64(blocks, dtypes[d].block_bytes, bytes) && mlrt__add_u64(*bytes, dtypes[d].header, bytes);
}

bool mlrt__dtype_is_quantized(mlrt_dtype d) {
    return d >= MLRT_APR_Q4 && d <= MLRT_Q6_K;
}

bool mlrt__dtype_from_name(const char *s, size_t n, mlrt_dtype *out) {
    for (int i = 0; i < MLRT_DTYPE_COUNT_; i++) {
        if (mlrt__dtype_is_quantized((mlrt_dtype)i)) continue; /* .apr's, not SafeTensors names */
        if (strlen(dtypes[i].name) == n && memcmp(dtypes[i].name, s, n) == 0) {
            *out = (mlrt_dtype)i;
            return true;
        }
    }
    return false;
}

bool mlrt__dtype_is_float(mlrt_dtype d) {
    return d == MLRT_F16 || d == MLRT_BF16 || d == MLRT_F32 || d == MLRT_F64;
}

/* ---------------------------------------------------------- conversion */

static float f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = h >> 10 & 0x1f, man = h & 0x3ff, bits;
    if (exp == 0x1f) bits = sign | 0x7f800000u | man << 13;         /* inf / nan */
    else if (exp) bits = sign | (exp + 112) << 23 | man << 13;       /* normal */
    else if (!man) bits = sign;                                      /* zero */
    else {                                                           /* subnormal */
        int e = 113;
        while (!(man & 0x400)) { man <<= 1; e--; }
        bits = sign | (uint32_t)e << 23 | (man & 0x3ff) << 13;
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

void mlrt__to_f32_n(const uint8_t *p, mlrt_dtype dtype, float *out, size_t n) {
    size_t es = mlrt_dtype_size(dtype);
    switch (dtype) {
    case MLRT_F32: /* wasm and every supported host are little endian */
        memcpy(out, p, n * sizeof(float));
        break;
    case MLRT_F64:
        for (size_t k = 0; k < n; k++) { uint64_t u = mlrt__rd_u64(p + 8 * k); double v; memcpy(&v, &u, 8); out[k] = (float)v; }
        break;
    default:
        for (size_t k = 0; k < n; k++) out[k] = mlrt__to_f32(p + k * es, dtype);
        break;
    }
}

float mlrt__to_f32(const uint8_t *p, mlrt_dtype dtype) {
    switch (dtype) {
    case MLRT_F32: { uint32_t u = mlrt__rd_u32(p); float f; memcpy(&f, &u, 4); return f; }
    case MLRT_F64: { uint64_t u = mlrt__rd_u64(p); double d; memcpy(&d, &u, 8); return (float)d; }
    case MLRT_F16: return f16_to_f32((uint16_t)(p[0] | p[1] << 8));
    case MLRT_BF16: { uint32_t u = (uint32_t)(p[0] | p[1] << 8) << 16; float f; memcpy(&f, &u, 4); return f; }
    default: return NAN;
    }
}

bool mlrt__all_finite(const void *v, size_t n) {
    const uint8_t *p = v; /* (at any alignment) */
    uint32_t special = 0; /* any value with an all-ones exponent: inf or NaN */
    for (size_t k = 0; k < n; k++) {
        uint32_t u;
        memcpy(&u, p + 4 * k, 4);
        special |= (u & 0x7f800000u) == 0x7f800000u;
    }
    return !special;
}
