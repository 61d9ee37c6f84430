/* kernels/quant_pack.c — APR_Q8 / APR_Q4 weights from the file into the layouts of kernels/quant.c (once
 * per load, built for size), their checks, and the way back to f32 (biases, mlrt_layer_weights).
 *   APR_Q8  f32 scale, then one int8 per element:           w[e] = q[e] * scale
 *   APR_Q4  per 32 elements: f16 scale + 16 bytes; element e of a block is the low nibble of byte
 *           e/2 when e is even, the high nibble when odd:     w[e] = (nibble - 8) * scale[e / 32] */
#include "kernels.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define Q4_BLOCK 32
#define Q4_BLOCK_BYTES 18

/* ------------------------------------------------------------ the file's elements */

static inline unsigned q4_nibble(const uint8_t *nibbles16, size_t e) { /* e: element index inside its block */
    uint8_t b = nibbles16[e / 2];
    return e & 1 ? b >> 4 : b & 15u;
}

static const char *non_finite_name(float v) { return isnan(v) ? "NaN" : "infinite"; }

/* The scale of every block (Q4) or of the tensor (Q8) must make every weight a finite f32. */
static mlrt_status check_scales(const uint8_t *src, mlrt_dtype dtype, size_t n, const char *fmt, const char *name,
                                mlrt_error *err) {
    if (dtype == MLRT_APR_Q8) {
        float s = mlrt__to_f32(src, MLRT_F32);
        if (!isfinite(s))
            return mlrt__fail(err, MLRT_ERR_NON_FINITE, "%s: tensor '%s' APR_Q8 scale is %s", fmt, name, non_finite_name(s));
        if (!isfinite(s * 128.0f))
            return mlrt__fail(err, MLRT_ERR_NON_FINITE, "%s: tensor '%s' APR_Q8 scale is too large: 128 x scale overflows f32",
                             fmt, name);
        return MLRT_OK;
    }
    for (size_t b = 0; b * Q4_BLOCK < n; b++) { /* an f16 times 8 is always finite */
        float s = mlrt__to_f32(src + b * Q4_BLOCK_BYTES, MLRT_F16);
        if (!isfinite(s))
            return mlrt__fail(err, MLRT_ERR_NON_FINITE, "%s: tensor '%s' APR_Q4 scale of block %zu is %s", fmt, name, b,
                             non_finite_name(s));
    }
    return MLRT_OK;
}

/* ------------------------------------------------------------ GGUF k-quants (dequantized at load) */

/* GGML's super-blocks of 256 elements (element order as llama.cpp's dequantize_row_*):
 *   Q4_K  144 bytes: f16 d, f16 dmin, scales[12] (8 pairs of 6-bit scale and min), qs[128];
 *         sub-block j of 32 (j = 0..7): x = d * sc[j] * nibble - dmin * m[j], the nibbles of
 *         sub-blocks 2i and 2i+1 being the low and high halves of qs[32i .. 32i+32)
 *   Q6_K  210 bytes: ql[128] low 4 bits, qh[64] high 2 bits, int8 scales[16], f16 d;
 *         x = d * scales[e / 16] * (q - 32), q 6 bits, in two halves of 128 elements */
static void q4k_scale_min(const uint8_t *sc, int j, int *scale, int *min) {
    if (j < 4) {
        *scale = sc[j] & 63, *min = sc[j + 4] & 63;
    } else {
        *scale = (sc[j + 4] & 15) | (sc[j - 4] >> 6) << 4;
        *min = (sc[j + 4] >> 4) | (sc[j] >> 6) << 4;
    }
}

static float q4k_element(const uint8_t *blk, size_t e) { /* e < 256 */
    int j = (int)(e / 32), scale, min;
    q4k_scale_min(blk + 4, j, &scale, &min);
    uint8_t b = blk[16 + e / 64 * 32 + e % 32];
    float d = mlrt__to_f32(blk, MLRT_F16) * (float)scale, m = mlrt__to_f32(blk + 2, MLRT_F16) * (float)min;
    return d * (float)(j & 1 ? b >> 4 : b & 15) - m;
}

static float q6k_element(const uint8_t *blk, size_t e) { /* e < 256 */
    size_t half = e / 128, l = e % 32, quarter = e % 128 / 32; /* quarters: ql low, ql+32 low, ql high, ql+32 high */
    const uint8_t *ql = blk + 64 * half, *qh = blk + 128 + 32 * half;
    int low = ql[l + 32 * (quarter & 1)] >> (4 * (quarter >> 1)) & 15, high = qh[l] >> (2 * quarter) & 3;
    float d = mlrt__to_f32(blk + 208, MLRT_F16);
    return d * (float)(int8_t)blk[192 + 8 * half + l / 16 + 2 * quarter] * (float)((low | high << 4) - 32);
}

static mlrt_status dequantize_k(const uint8_t *src, mlrt_dtype dtype, size_t n, float *out, const char *fmt,
                                const char *name, mlrt_error *err) {
    const size_t bytes = dtype == MLRT_Q4_K ? 144 : 210;
    for (size_t b = 0; b * 256 < n; b++) {
        const uint8_t *blk = src + b * bytes;
        float d = mlrt__to_f32(blk + (dtype == MLRT_Q4_K ? 0 : 208), MLRT_F16);
        float dmin = dtype == MLRT_Q4_K ? mlrt__to_f32(blk + 2, MLRT_F16) : 0.0f;
        if (!isfinite(d) || !isfinite(dmin))
            return mlrt__fail(err, MLRT_ERR_NON_FINITE, "%s: tensor '%s' %s %s of super-block %zu is %s", fmt, name,
                             mlrt_dtype_name(dtype), isfinite(d) ? "dmin" : "d", b, non_finite_name(isfinite(d) ? dmin : d));
        for (size_t e = 0; e < 256 && b * 256 + e < n; e++)
            out[b * 256 + e] = dtype == MLRT_Q4_K ? q4k_element(blk, e) : q6k_element(blk, e);
    }
    return MLRT_OK;
}

mlrt_status mlrt__quant_dequantize(const uint8_t *src, mlrt_dtype dtype, size_t n, float *out, const char *fmt,
                                  const char *name, mlrt_error *err) {
    if (dtype == MLRT_Q4_K || dtype == MLRT_Q6_K) return dequantize_k(src, dtype, n, out, fmt, name, err);
    mlrt_status st = check_scales(src, dtype, n, fmt, name, err);
    if (st) return st;
    if (dtype == MLRT_APR_Q8) {
        float s = mlrt__to_f32(src, MLRT_F32);
        for (size_t k = 0; k < n; k++) out[k] = (float)(int8_t)src[4 + k] * s;
    } else {
        for (size_t k = 0; k < n; k++) {
            const uint8_t *blk = src + k / Q4_BLOCK * Q4_BLOCK_BYTES;
            out[k] = (float)((int)q4_nibble(blk + 2, k % Q4_BLOCK) - 8) * mlrt__to_f32(blk, MLRT_F16);
        }
    }
    return MLRT_OK;
}

/* ------------------------------------------------------------ packing */

static uint32_t gcd32(uint32_t in) { uint32_t low = in & (0u - in); return low < 32 ? low : 32; }

/* Rows [o0, o1) of an APR Q8 weight (src: the tensor, its scale first) into their band(s) at dst (where
 * row o0's band starts; o0 a multiple of 32); each row's sum into d->qsum when the build keeps them. */
static void pack_q8_rows(mlrt__dense *d, const uint8_t *src, size_t o0, size_t o1, uint8_t *dst) {
    const size_t in = d->in, K = MLRT__Q8_K, base = mlrt__q8_at(d, o0, 0);
    src += 4 + o0 * in;
    for (size_t o = o0; o < o1; o++, src += in) {
        /* mlrt__q8_at(d, o, i) = mlrt__q8_at(d, o, 0) + i / K * step + i % K: one row's K inputs lie
         * together, the next K a band's row of outputs further on */
        uint8_t *q = dst + (mlrt__q8_at(d, o, 0) - base);
        const size_t step = 8 * K * mlrt__qband_np(d, o);
        size_t i = 0;
        for (; i + K <= in; i += K, q += step) memcpy(q, src + i, K); /* hot: every weight, K at a time */
        for (size_t k = 0; i < in; i++, k++) q[k] = src[i];
        if (d->qsum) { /* (the relaxed build's zero-point term) */
            int32_t sum = 0; /* -2^31 <= sum < 2^31: in <= MLRT__MAX_DIM = 2^24 */
            for (size_t k = 0; k < in; k++) sum += (int8_t)src[k];
            d->qsum[o] = sum;
        }
    }
}

/* Packed where the file holds the weight (in == in_q, out == out_padded: a band's rows take the same bytes
 * in the file as packed), a band at a time through one band of scratch. */
static bool pack_q8_over(mlrt__dense *d, uint8_t *src) {
    uint8_t *band = malloc(32 * (size_t)d->in);
    if (!band) return false;
    for (size_t o0 = 0; o0 < d->out; o0 += 32) {
        size_t o1 = d->out - o0 < 32 ? d->out : o0 + 32;
        pack_q8_rows(d, src, o0, o1, band);
        memcpy(src + 4 + o0 * d->in, band, (o1 - o0) * d->in);
    }
    free(band);
    d->q = src + 4, d->in_file = true;
    return true;
}

static void pack_q4(mlrt__dense *d, const uint8_t *src) {
    const size_t in = d->in, g = d->group, groups = in / g;
    for (size_t o = 0; o < d->out; o++) {
        for (size_t i = 0; i < in; i++) {
            size_t e = o * in + i;
            unsigned n = q4_nibble(src + e / Q4_BLOCK * Q4_BLOCK_BYTES + 2, e % Q4_BLOCK);
            d->q[mlrt__q4_at(d, o, i)] |= (uint8_t)(i & 2 ? n << 4 : n);
        }
        for (size_t k = 0; k < groups; k++) /* the whole group lies in one file block */
            d->qscale[mlrt__q4_scale_at(d, o, k)] =
                mlrt__to_f32(src + (o * in + k * g) / Q4_BLOCK * Q4_BLOCK_BYTES, MLRT_F16);
    }
}

static void pack_q4_rows(mlrt__dense *d, const uint8_t *src, size_t blocks) {
    for (size_t b = 0; b < blocks; b++) {
        d->qscale[b] = mlrt__to_f32(src + b * Q4_BLOCK_BYTES, MLRT_F16);
        memcpy(d->q + b * 16, src + b * Q4_BLOCK_BYTES + 2, 16);
    }
}

mlrt_status mlrt__quant_pack(mlrt__dense *d, const uint8_t *src, mlrt_dtype dtype, bool over, const char *fmt,
                            const char *name, mlrt_error *err) {
    const size_t n = (size_t)d->in * d->out, blocks = (n + Q4_BLOCK - 1) / Q4_BLOCK;
    mlrt_status st = check_scales(src, dtype, n, fmt, name, err);
    if (st) return st;
    if (dtype == MLRT_APR_Q8) {
        d->wq = MLRT__WQ_Q8;
        d->in_q = (d->in + MLRT__Q8_K - 1) & ~(uint32_t)(MLRT__Q8_K - 1);
        d->group = MLRT__Q8_GROUP;
        d->q_bytes = (size_t)d->out_padded * d->in_q;
        if (MLRT__Q8_K == 4) d->qscale_bytes = (size_t)d->out_padded * sizeof *d->qsum;
    } else if (d->in % 4 == 0) {
        d->wq = MLRT__WQ_Q4;
        d->in_q = d->in;
        d->group = gcd32(d->in);
        d->q_bytes = (size_t)d->out_padded * d->in / 2;
        d->qscale_bytes = (size_t)d->out_padded * (d->in / d->group) * sizeof(float);
    } else {
        d->wq = MLRT__WQ_Q4_ROWS;
        d->in_q = d->in;
        d->group = Q4_BLOCK;
        d->q_bytes = blocks * 16;
        d->qscale_bytes = blocks * sizeof(float);
    }
    if (d->wq == MLRT__WQ_Q8 && d->qscale_bytes) d->qsum = calloc(d->qscale_bytes, 1);
    else if (d->qscale_bytes) d->qscale = malloc(d->qscale_bytes);
    if (d->qscale_bytes && !d->qscale && !d->qsum)
        return mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "%s: out of memory for the weights of '%s'", fmt, name);
    if (d->wq == MLRT__WQ_Q8) d->qs = mlrt__to_f32(src, MLRT_F32);
    if (over && d->wq == MLRT__WQ_Q8 && d->in_q == d->in && d->out_padded == d->out && pack_q8_over(d, (uint8_t *)(uintptr_t)src))
        return MLRT_OK;
    if (!(d->q = calloc(d->q_bytes, 1)))
        return mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "%s: out of memory for the weights of '%s'", fmt, name);
    if (d->wq == MLRT__WQ_Q8) pack_q8_rows(d, src, 0, d->out, d->q);
    else if (d->wq == MLRT__WQ_Q4) pack_q4(d, src);
    else pack_q4_rows(d, src, blocks);
    return MLRT_OK;
}

float mlrt__quant_weight(const mlrt__dense *d, size_t o, size_t i) {
    if (d->wq == MLRT__WQ_Q8) return (float)(int8_t)d->q[mlrt__q8_at(d, o, i)] * d->qs;
    if (d->wq == MLRT__WQ_Q4) {
        uint8_t b = d->q[mlrt__q4_at(d, o, i)];
        int n = (int)(i & 2 ? b >> 4 : b & 15u) - 8;
        return (float)n * d->qscale[mlrt__q4_scale_at(d, o, i / d->group)];
    }
    size_t e = o * d->in + i;
    return (float)((int)q4_nibble(d->q + e / Q4_BLOCK * 16, e % Q4_BLOCK) - 8) * d->qscale[e / Q4_BLOCK];
}

