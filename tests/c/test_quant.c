/* test_quant.c — APR_Q8 / APR_Q4 weights that stay quantized: packing, the kernels against a double
 * reference on odd shapes, extreme values, models from .apr v2 files, malformed scales. The encoders
 * and decoders here are the tests' own, written from the format description, not shared with src/. */
#include "builders.h"

/* ------------------------------------------------------------ encoders (aprender's rules) */

static uint16_t t_f16_bits(float f) { /* round to nearest even */
    uint32_t u;
    memcpy(&u, &f, 4);
    uint32_t sign = (u >> 16) & 0x8000u, exp = (u >> 23) & 0xffu, man = u & 0x7fffffu, h, rem, half;
    if (exp == 0xff) return (uint16_t)(sign | 0x7c00u | (man ? 0x200u : 0));
    int e = (int)exp - 127 + 15;
    if (e >= 31) return (uint16_t)(sign | 0x7c00u);
    if (e <= 0) {
        if (e < -10) return (uint16_t)sign;
        man |= 0x800000u;
        unsigned shift = (unsigned)(14 - e);
        h = man >> shift, rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
    } else {
        h = (uint32_t)e << 10 | man >> 13, rem = man & 0x1fffu, half = 0x1000u;
    }
    if (rem > half || (rem == half && (h & 1))) h++;
    return (uint16_t)(sign | h);
}

static float t_f16_value(uint16_t h) {
    int e = h >> 10 & 0x1f, m = h & 0x3ff;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
    return (float)(h & 0x8000 ? -v : v);
}

static float t_round_away(float v) { return v < 0 ? -floorf(-v + 0.5f) : floorf(v + 0.5f); }

static uint8_t *t_enc_q8(const float *w, size_t n) {
    uint8_t *t = tmalloc(4 + n);
    float max = 0;
    for (size_t i = 0; i < n; i++) max = fabsf(w[i]) > max ? fabsf(w[i]) : max;
    float s = max == 0 ? 1.0f : max / 127.0f;
    memcpy(t, &s, 4);
    for (size_t i = 0; i < n; i++) {
        float q = t_round_away(w[i] / s);
        t[4 + i] = (uint8_t)(int8_t)(q > 127 ? 127 : q < -127 ? -127 : q);
    }
    return t;
}

static uint8_t *t_enc_q4(const float *w, size_t n) {
    size_t blocks = (n + 31) / 32;
    uint8_t *t = tmalloc(blocks * 18);
    memset(t, 0, blocks * 18);
    for (size_t b = 0; b < blocks; b++) {
        size_t k = n - b * 32 < 32 ? n - b * 32 : 32;
        float max = 0;
        for (size_t i = 0; i < k; i++) max = fabsf(w[b * 32 + i]) > max ? fabsf(w[b * 32 + i]) : max;
        float s = max / 7.0f;
        uint16_t h = t_f16_bits(s);
        t[b * 18] = (uint8_t)h, t[b * 18 + 1] = (uint8_t)(h >> 8);
        for (size_t i = 0; i < k; i++) {
            float q = s == 0 ? 0 : t_round_away(w[b * 32 + i] / s);
            int v = (int)(q > 7 ? 7 : q < -8 ? -8 : q) + 8;
            t[b * 18 + 2 + i / 2] |= (uint8_t)(i & 1 ? v << 4 : v);
        }
    }
    return t;
}

/* Element e of a quantized tensor as the format defines it: exactly q * scale in f32. */
static float t_deq(mlrt_dtype dt, const uint8_t *t, size_t e) {
    if (dt == MLRT_APR_Q8) {
        float s;
        memcpy(&s, t, 4);
        return (float)(int8_t)t[4 + e] * s;
    }
    const uint8_t *b = t + e / 32 * 18;
    uint8_t v = b[2 + e % 32 / 2];
    int n = (e & 1 ? v >> 4 : v & 15) - 8;
    return (float)n * t_f16_value((uint16_t)(b[0] | b[1] << 8));
}

/* ------------------------------------------------------------ one layer against the reference */

/* Packs tensor (dt, [out][in]) into a layer with a random bias, checks mlrt__quant_weight returns
 * every weight exactly, runs the rows of x through mlrt__quant_forward and compares each output with
 * a double reference: the dequantized weights applied to the dequantized int16 activations
 * (xq = rint(x * 32767 / max|x|)) — and, within the activation rounding, to x itself. */
static void check_layer_at(const char *file, int line, mlrt_dtype dt, const uint8_t *tensor, uint32_t in, uint32_t out,
                           const float *x, size_t rows) {
    mlrt__dense d = {0};
    d.in = in, d.out = out, d.out_padded = (out + 7) / 8 * 8, d.act = MLRT_ACT_IDENTITY;
    d.b = tmalloc(d.out_padded * sizeof(float));
    for (size_t o = 0; o < d.out_padded; o++) d.b[o] = o < out ? rng_float(-1, 1) : 0;
    mlrt_error e = {0};
    mlrt_status st = mlrt__quant_pack(&d, tensor, dt, false, "test", "w", &e);
    check_at(st == MLRT_OK, file, line, "pack %s [%u, %u]: %s", mlrt_dtype_name(dt), out, in, e.message);
    if (st) { free(d.q), free(d.qscale); return; }
    int bad_weights = 0;
    for (size_t o = 0; o < out; o++)
        for (size_t i = 0; i < in; i++) {
            float a = mlrt__quant_weight(&d, o, i), b = t_deq(dt, tensor, o * in + i);
            bad_weights += memcmp(&a, &b, 4) != 0;
        }
    check_at(bad_weights == 0, file, line, "%s [%u, %u]: %d weights differ from q * scale", mlrt_dtype_name(dt), out, in,
             bad_weights);
    int16_t *xq = tmalloc(MLRT__QX(d.in_q) * sizeof *xq);
    int32_t *xsum = tmalloc((d.in_q / 4 + 1) * sizeof *xsum);
    uint32_t *nz = tmalloc((d.in_q + 2) * sizeof *nz);
    float *y = tmalloc(rows * out * sizeof(float));
    mlrt__quant_forward(&d, x, in, y, out, rows, 0, out, xq, xsum, nz);
    double worst = 0, worst_x = 0;
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + r * in;
        float amax = 0;
        for (size_t i = 0; i < in; i++) amax = fabsf(xr[i]) > amax ? fabsf(xr[i]) : amax;
        float inv = amax > 0 ? 32767.0f / amax : 0, xs = amax / 32767.0f;
        for (size_t o = 0; o < out; o++) {
            double want = d.b[o], exact = d.b[o], mag = 0, wabs = 0;
            for (size_t i = 0; i < in; i++) {
                double w = t_deq(dt, tensor, o * in + i), xd = (double)rintf(xr[i] * inv) * xs;
                want += w * xd, exact += w * xr[i], mag += fabs(w * xd), wabs += fabs(w);
            }
            double got = y[r * out + o], err = fabs(got - want) / (1e-5 * (1 + mag + fabs(d.b[o])));
            double err_x = fabs(got - exact) / (0.5 * xs * wabs * 1.001 + 1e-5 * (1 + mag + fabs(d.b[o])));
            worst = err > worst ? err : worst;
            worst_x = err_x > worst_x ? err_x : worst_x;
        }
    }
    check_at(worst <= 1, file, line, "%s [%u, %u] x %zu rows: error vs the reference %.3g x tolerance", mlrt_dtype_name(dt),
             out, in, rows, worst);
    check_at(worst_x <= 1, file, line, "%s [%u, %u] x %zu rows: error vs float x %.3g x the activation rounding bound",
             mlrt_dtype_name(dt), out, in, rows, worst_x);
    free(d.q);
    free(d.qscale);
}
#define CHECK_LAYER(dt, t, in, out, x, rows) check_layer_at(__FILE__, __LINE__, (dt), (t), (in), (out), (x), (rows))

/* Random weights whose magnitude changes from one 32-element block to the next (distinct Q4 scales
 * on both sides of a block that straddles two rows), and rows with runs of zeros. */
static float *t_weights(size_t n) {
    float *w = tmalloc(n * sizeof(float));
    for (size_t e = 0; e < n; e++) w[e] = rng_float(-1, 1) * (float)(1 + e / 32 % 5);
    return w;
}
static float *t_rows(size_t in, size_t rows) {
    float *x = tmalloc((rows * in + 1) * sizeof(float));
    for (size_t k = 0; k < rows * in; k++) x[k] = rng_int(0, 2) == 0 ? 0.0f : rng_float(-3, 3);
    if (rows > 3) memset(x + 2 * in, 0, in * sizeof(float)); /* an all-zero row: y = b */
    return x;
}

static void test_quant_kernels_odd_shapes(void) {
    static const uint32_t ins[] = {1, 2, 3, 4, 5, 6, 8, 12, 15, 16, 17, 24, 31, 32, 33, 48, 100, 784};
    static const uint32_t outs[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 24, 32, 33, 40, 64, 72};
    rng_seed(1234);
    for (size_t a = 0; a < LEN(ins); a++)
        for (size_t b = 0; b < LEN(outs); b++) {
            uint32_t in = ins[a], out = outs[b];
            size_t rows = 1 + (a + b) % 7;
            float *w = t_weights((size_t)in * out), *x = t_rows(in, rows);
            CHECK_LAYER(MLRT_APR_Q8, t_enc_q8(w, (size_t)in * out), in, out, x, rows);
            CHECK_LAYER(MLRT_APR_Q4, t_enc_q4(w, (size_t)in * out), in, out, x, rows);
        }
}

/* Q8: a row's outputs have the same bits alone as in any batch (blocks of four rows over every pair,
 * a row alone over its runs of nonzero pairs; both add the i32 sums of the same fixed groups of 256
 * inputs), and in a slice of the outputs: dense rows, sparse ones, zero runs across group borders,
 * an all-zero row, a row with a NaN; more rows than one chunk (MLRT__Q8_ROWS: 64, or 4 past 2048 inputs). */
static void q8_rows_same_bits(uint32_t in, size_t rows) {
    const uint32_t out = 72;
    float *w = t_weights((size_t)in * out), *x = tmalloc(rows * in * sizeof(float));
    for (size_t r = 0; r < rows; r++)
        for (size_t i = 0; i < in; i++) {
            int zero = r % 3 == 0 ? rng_int(0, 9) < 8 : r % 3 == 1 ? rng_int(0, 9) == 0 : i >= 200 && i < 330;
            x[r * in + i] = zero || r == 7 ? 0.0f : rng_float(-3, 3);
        }
    x[(rows - 2) * in + 5] = NAN;
    mlrt__dense d = {0};
    d.in = in, d.out = out, d.out_padded = out, d.act = MLRT_ACT_RELU;
    d.b = tmalloc(out * sizeof(float));
    for (size_t o = 0; o < out; o++) d.b[o] = rng_float(-1, 1);
    mlrt_error e;
    CHECK_INT(mlrt__quant_pack(&d, t_enc_q8(w, (size_t)in * out), MLRT_APR_Q8, false, "test", "w", &e), MLRT_OK);
    int16_t *xq = tmalloc(MLRT__QX(d.in_q) * sizeof *xq);
    int32_t *xsum = tmalloc((d.in_q / 4 + 1) * sizeof *xsum);
    uint32_t *nz = tmalloc((d.in_q + 2) * sizeof *nz);
    float *all = tmalloc(rows * out * sizeof(float)), *one = tmalloc(out * sizeof(float)), *part = tmalloc(rows * out * sizeof(float));
    mlrt__quant_forward(&d, x, in, all, out, rows, 0, out, xq, xsum, nz);
    mlrt__quant_forward(&d, x, in, part, out, rows, 32, out, xq, xsum, nz);
    int differ = 0;
    for (size_t r = 0; r < rows; r++) {
        mlrt__quant_forward(&d, x + r * in, in, one, out, 1, 0, out, xq, xsum, nz);
        differ += memcmp(one, all + r * out, out * sizeof(float)) != 0;
        differ += memcmp(one + 32, part + r * out + 32, (out - 32) * sizeof(float)) != 0;
    }
    CHECK_INT(differ, 0);
    CHECK(isinf(all[(rows - 2) * out]) && all[7 * out] == (d.b[0] > 0 ? d.b[0] : 0.0f));
    for (size_t k = 2; k <= 5; k++) { /* batches of 2..5 rows: blocks with a repeated row, a row left alone */
        mlrt__quant_forward(&d, x + 3 * in, in, part, out, k, 0, out, xq, xsum, nz);
        CHECK(memcmp(part, all + 3 * out, k * out * sizeof(float)) == 0);
    }
    free(d.q), free(d.qsum);
}
static void test_quant_q8_rows_same_bits(void) {
    rng_seed(4242);
    q8_rows_same_bits(600, 70);
    q8_rows_same_bits(2100, 11);
}

static void test_quant_layouts_and_groups(void) {
    rng_seed(77);
    struct { uint32_t in; mlrt__wq wq; uint32_t group; } q4[] = {
        {1, MLRT__WQ_Q4_ROWS, 32}, {2, MLRT__WQ_Q4_ROWS, 32}, {17, MLRT__WQ_Q4_ROWS, 32}, {4, MLRT__WQ_Q4, 4},
        {12, MLRT__WQ_Q4, 4},     {24, MLRT__WQ_Q4, 8},      {48, MLRT__WQ_Q4, 16},     {784, MLRT__WQ_Q4, 16},
        {64, MLRT__WQ_Q4, 32},
    };
    for (size_t k = 0; k < LEN(q4); k++) {
        mlrt__dense d = {0};
        d.in = q4[k].in, d.out = 9, d.out_padded = 16;
        float *w = t_weights((size_t)d.in * 9);
        mlrt_error e;
        CHECK_INT(mlrt__quant_pack(&d, t_enc_q4(w, (size_t)d.in * 9), MLRT_APR_Q4, false, "test", "w", &e), MLRT_OK);
        CHECK_INT(d.wq, q4[k].wq);
        CHECK_INT(d.group, q4[k].group);
        size_t blocks = ((size_t)d.in * 9 + 31) / 32;
        if (d.wq == MLRT__WQ_Q4) CHECK_INT(d.q_bytes + d.qscale_bytes, 16 * d.in / 2 + 16 * (d.in / d.group) * 4);
        else CHECK_INT(d.q_bytes + d.qscale_bytes, blocks * 16 + blocks * 4);
        free(d.q), free(d.qscale);
    }
    /* Q8: groups of 256 inputs keep the i32 sums exact: 70,000 inputs of -128 x 32767 would overflow one i32 */
    size_t in = 70000;
    uint8_t *t = tmalloc(4 + in);
    float one = 1.0f;
    memcpy(t, &one, 4);
    memset(t + 4, 0x80, in);
    float *x = tmalloc(2 * in * sizeof(float));
    for (size_t i = 0; i < 2 * in; i++) x[i] = i < in ? 1000.0f : (i & 1 ? -1.0f : 1.0f);
    CHECK_LAYER(MLRT_APR_Q8, t, (uint32_t)in, 1, x, 2);
}

static void test_quant_extreme_values(void) {
    rng_seed(99);
    const uint32_t in = 784, out = 17;
    const size_t n = (size_t)in * out;
    float *x = tmalloc(3 * in * sizeof(float));
    for (size_t i = 0; i < in; i++) x[i] = 1e28f, x[in + i] = i & 1 ? -3e-30f : 3e-30f, x[2 * in + i] = rng_float(-1, 1);
    x[2 * in + 5] = -7e10f; /* one huge value: every other activation rounds to 0 */
    /* Q8: every weight -128, every weight 127, alternating */
    uint8_t *q8 = tmalloc(4 + n);
    float s = 0.03125f;
    for (int pattern = 0; pattern < 3; pattern++) {
        memcpy(q8, &s, 4);
        for (size_t e = 0; e < n; e++) q8[4 + e] = pattern == 0 ? 0x80 : pattern == 1 ? 0x7f : (e & 1 ? 0x80 : 0x7f);
        CHECK_LAYER(MLRT_APR_Q8, q8, in, out, x, 3);
    }
    /* Q4: nibbles all 0 (-8), all 15 (+7), alternating, with the largest f16 scale; all-zero blocks */
    size_t blocks = (n + 31) / 32;
    uint8_t *q4 = tmalloc(blocks * 18);
    for (int pattern = 0; pattern < 4; pattern++) {
        for (size_t b = 0; b < blocks; b++) {
            uint16_t h = pattern == 3 && b % 3 == 0 ? 0 : 0x7bff; /* 65504; scale 0 for a third of the blocks */
            q4[b * 18] = (uint8_t)h, q4[b * 18 + 1] = (uint8_t)(h >> 8);
            memset(q4 + b * 18 + 2, pattern == 0 ? 0x00 : pattern == 1 ? 0xff : pattern == 2 ? 0xf0 : 0x88, 16);
        }
        CHECK_LAYER(MLRT_APR_Q4, q4, in, out, x, 3);
    }
    /* all-zero weights as aprender writes them: Q8 scale 1.0 and q = 0; Q4 scale 0 */
    float *zeros = tmalloc(n * sizeof(float));
    memset(zeros, 0, n * sizeof(float));
    CHECK_LAYER(MLRT_APR_Q8, t_enc_q8(zeros, n), in, out, x, 3);
    CHECK_LAYER(MLRT_APR_Q4, t_enc_q4(zeros, n), in, out, x, 3);
}

/* ------------------------------------------------------------ models from .apr v2 files */

/* A 2-layer MLP [h, in] -> [out, h] with weights in wdt (129 Q8, 128 Q4) and biases in bdt (0 F32,
 * 1 F16, 129, 128); the f32 values the file means go to w1/b1/w2/b2 (as the tests dequantize them). */
typedef struct t_mlp {
    uint32_t in, h, out;
    float *w1, *b1, *w2, *b2;
    bytes file;
} t_mlp;

static uint8_t *t_encode(uint8_t dt, const float *v, size_t n, size_t *nbytes, float *meant) {
    uint8_t *t;
    if (dt == 129) t = t_enc_q8(v, n), *nbytes = 4 + n;
    else if (dt == 128) t = t_enc_q4(v, n), *nbytes = (n + 31) / 32 * 18;
    else if (dt == 1) {
        t = tmalloc(2 * n), *nbytes = 2 * n;
        for (size_t i = 0; i < n; i++) {
            uint16_t h = t_f16_bits(v[i]);
            t[2 * i] = (uint8_t)h, t[2 * i + 1] = (uint8_t)(h >> 8);
            meant[i] = t_f16_value(h);
        }
        return t;
    } else {
        t = tmalloc(4 * n), *nbytes = 4 * n;
        memcpy(t, v, 4 * n);
        memcpy(meant, v, 4 * n);
        return t;
    }
    for (size_t i = 0; i < n; i++) meant[i] = t_deq(dt == 129 ? MLRT_APR_Q8 : MLRT_APR_Q4, t, i);
    return t;
}

static t_mlp t_mlp_file(uint32_t in, uint32_t h, uint32_t out, uint8_t wdt, uint8_t bdt) {
    t_mlp m = {in, h, out, tmalloc(4 * (size_t)in * h), tmalloc(4 * h), tmalloc(4 * (size_t)h * out), tmalloc(4 * out), {0}};
    float *w1 = t_weights((size_t)in * h), *w2 = t_weights((size_t)h * out), *b1 = t_weights(h), *b2 = t_weights(out);
    size_t n[4];
    const uint8_t *d[4] = {t_encode(bdt, b1, h, &n[0], m.b1), t_encode(wdt, w1, (size_t)in * h, &n[1], m.w1),
                           t_encode(bdt, b2, out, &n[2], m.b2), t_encode(wdt, w2, (size_t)h * out, &n[3], m.w2)};
    v2t t[4] = {{"fc1.bias", bdt, 1, {h}, d[0], n[0]}, {"fc1.weight", wdt, 2, {h, in}, d[1], n[1]},
                {"fc2.bias", bdt, 1, {out}, d[2], n[2]}, {"fc2.weight", wdt, 2, {out, h}, d[3], n[3]}};
    m.file = v2_file("{\"model_type\":\"mlp\",\"activations\":\"relu,identity\"}", t, 4);
    return m;
}

static void test_quant_models_from_files(void) {
    rng_seed(5);
    static const uint8_t wdts[] = {129, 128}, bdts[] = {0, 1, 129, 128};
    static const uint32_t shapes[][3] = {{33, 20, 3}, {784, 40, 10}, {16, 9, 1}, {5, 3, 2}};
    for (size_t a = 0; a < LEN(wdts); a++)
        for (size_t b = 0; b < LEN(bdts); b++)
            for (size_t s = 0; s < LEN(shapes); s++) {
                t_mlp f = t_mlp_file(shapes[s][0], shapes[s][1], shapes[s][2], wdts[a], bdts[b]);
                mlrt_model *m = LOAD_OK(f.file);
                if (!m) continue;
                CHECK_INT(mlrt_weight_dtype(m), wdts[a] == 129 ? MLRT_APR_Q8 : MLRT_APR_Q4);
                /* the weights and biases come back exactly as the file means them */
                float *w = tmalloc(4 * (size_t)f.in * f.h), *bias = tmalloc(4 * f.h);
                mlrt_error e;
                CHECK_INT(mlrt_layer_weights(m, 0, w, bias, &e), MLRT_OK);
                CHECK(memcmp(w, f.w1, 4 * (size_t)f.in * f.h) == 0);
                CHECK(memcmp(bias, f.b1, 4 * f.h) == 0);
                CHECK_INT(mlrt_layer_weights(m, 1, w, bias, &e), MLRT_OK);
                CHECK(memcmp(w, f.w2, 4 * (size_t)f.h * f.out) == 0);
                CHECK(memcmp(bias, f.b2, 4 * f.out) == 0);
                /* a batch larger than a tile gives what single predictions give, bit for bit */
                const size_t rows = 70;
                float *x = t_rows(f.in, rows), *y = tmalloc(4 * rows * f.out), *y1 = tmalloc(4 * f.out);
                CHECK_INT(mlrt_predict_batch(m, x, rows, y, &e), MLRT_OK);
                int differ = 0;
                for (size_t r = 0; r < rows; r++) {
                    CHECK_INT(mlrt_predict(m, x + r * f.in, y1, &e), MLRT_OK);
                    differ += memcmp(y1, y + r * f.out, 4 * f.out) != 0;
                }
                CHECK_INT(differ, 0);
                /* and close to a double reference of the dequantized model (int16 activations: ~1e-4 of the terms) */
                double worst = 0;
                for (size_t r = 0; r < rows; r++) {
                    double hbuf[64], z;
                    for (size_t j = 0; j < f.h; j++) {
                        hbuf[j] = f.b1[j];
                        for (size_t i = 0; i < f.in; i++) hbuf[j] += (double)f.w1[j * f.in + i] * x[r * f.in + i];
                        hbuf[j] = hbuf[j] > 0 ? hbuf[j] : 0;
                    }
                    for (size_t o = 0; o < f.out; o++) { /* relative to the sum of |terms|: z may cancel to ~0 */
                        double mag = 1 + fabs(f.b2[o]);
                        z = f.b2[o];
                        for (size_t j = 0; j < f.h; j++) z += (double)f.w2[o * f.h + j] * hbuf[j], mag += fabs(f.w2[o * f.h + j] * hbuf[j]);
                        double err = fabs(z - y[r * f.out + o]) / mag;
                        worst = err > worst ? err : worst;
                    }
                }
                CHECK(worst < 2e-3);
                if (worst >= 2e-3) fprintf(stderr, "  wdt %u bdt %u shape %zu: worst %.3g\n", wdts[a], bdts[b], s, worst);
            }
    /* weightBytes: Q8 = 1 byte per weight (panels padded to 8 outputs, inputs to pairs) */
    t_mlp f = t_mlp_file(784, 40, 10, 129, 0);
    mlrt_model *m = LOAD_OK(f.file);
    if (m) CHECK_CONTAINS(mlrt_model_info_json(m), "\"dtype\":\"APR_Q8\",\"params\":31810,\"weightBytes\":32000,");
    f = t_mlp_file(784, 40, 10, 128, 0); /* 40 x 784 / 2 + 40 x 49 groups of 16 x 4; 16 x 40 / 2 + 16 x 5 groups of 8 x 4 */
    m = LOAD_OK(f.file);
    if (m) CHECK_CONTAINS(mlrt_model_info_json(m), "\"weightBytes\":24160,");
}

static void test_quant_malformed(void) {
    rng_seed(6);
    float *w = t_weights(4 * 40);
    uint8_t *q8 = t_enc_q8(w, 160), *q4 = t_enc_q4(w, 160);
    const float bad_f32[] = {NAN, INFINITY, -INFINITY, 3e38f};
    const char *why[] = {"APR_Q8 scale is NaN", "APR_Q8 scale is infinite", "APR_Q8 scale is infinite",
                         "APR_Q8 scale is too large"};
    for (size_t k = 0; k < LEN(bad_f32); k++) {
        uint8_t *t = tmalloc(164);
        memcpy(t, q8, 164);
        memcpy(t, &bad_f32[k], 4);
        v2t one[1] = {{"fc1.weight", 129, 2, {4, 40}, t, 164}};
        APR_FAILS(v2_file("{}", one, 1), MLRT_ERR_NON_FINITE, why[k]);
        char msg[96];
        snprintf(msg, sizeof msg, "tensor 'fc1.bias' %s", why[k]);
        v2t biased[2] = {{"fc1.bias", 129, 1, {160}, t, 164}, {"fc1.weight", 0, 2, {160, 1}, w, 640}};
        APR_FAILS(v2_file("{}", biased, 2), MLRT_ERR_NON_FINITE, msg);
    }
    const uint16_t bad_f16[] = {0x7e00, 0x7c00, 0xfc00, 0xffff};
    const char *why16[] = {"APR_Q4 scale of block 3 is NaN", "APR_Q4 scale of block 3 is infinite",
                           "APR_Q4 scale of block 3 is infinite", "APR_Q4 scale of block 3 is NaN"};
    for (size_t k = 0; k < LEN(bad_f16); k++) {
        uint8_t *t = tmalloc(90);
        memcpy(t, q4, 90);
        t[3 * 18] = (uint8_t)bad_f16[k], t[3 * 18 + 1] = (uint8_t)(bad_f16[k] >> 8);
        v2t one[1] = {{"fc1.weight", 128, 2, {4, 40}, t, 90}};
        char msg[96];
        snprintf(msg, sizeof msg, "tensor 'fc1.weight' %s", why16[k]);
        APR_FAILS(v2_file("{}", one, 1), MLRT_ERR_NON_FINITE, msg);
    }
    /* sizes are the container's business: one byte short or long is refused before any model */
    v2t short8[1] = {{"fc1.weight", 129, 2, {4, 40}, q8, 163}}, long4[1] = {{"fc1.weight", 128, 2, {4, 40}, q4, 90 + 0}};
    APR_FAILS(v2_file("{}", short8, 1), MLRT_ERR_SIZE_MISMATCH, "'fc1.weight' is APR_Q8 with 160 elements (164 bytes) but its size is 163");
    long4[0].shape[1] = 41; /* 164 elements need 6 blocks = 108 bytes */
    APR_FAILS(v2_file("{}", long4, 1), MLRT_ERR_SIZE_MISMATCH, "'fc1.weight' is APR_Q4 with 164 elements (108 bytes) but its size is 90");
    /* GGUF k-quants with a non-finite super-block scale */
    static const uint8_t zeros[1024] = {0};
    uint8_t qk[288] = {0};
    qk[144 + 2] = 0x00, qk[144 + 3] = 0x7c; /* super-block 1: dmin = inf */
    v2t k4[1] = {{"fc1.weight", 12, 2, {2, 200}, qk, 288}};
    APR_FAILS(v2_file("{}", k4, 1), MLRT_ERR_NON_FINITE, "tensor 'fc1.weight' Q4_K dmin of super-block 1 is infinite");
    uint8_t q6[210] = {0};
    q6[208] = 0x01, q6[209] = 0xfc; /* d = NaN */
    v2t k6[2] = {{"fc1.bias", 14, 1, {256}, q6, 210}, {"fc1.weight", 0, 2, {256, 1}, zeros, 1024}};
    APR_FAILS(v2_file("{}", k6, 2), MLRT_ERR_NON_FINITE, "tensor 'fc1.bias' Q6_K d of super-block 0 is NaN");
}

/* GGUF Q4_K / Q6_K: dequantized at load (GGML's element order), then run as f32. */
static void test_quant_gguf_k_quants(void) {
    rng_seed(31);
    uint8_t k4[288], k6[420];
    for (size_t i = 0; i < sizeof k4; i++) k4[i] = (uint8_t)rng_u32();
    for (size_t i = 0; i < sizeof k6; i++) k6[i] = (uint8_t)rng_u32();
    for (int b = 0; b < 2; b++) { /* finite, moderate super-block scales */
        k4[b * 144 + 1] = 0x3c, k4[b * 144 + 3] = 0x38; /* d in [1, 2), dmin in [0.5, 1) */
        k6[b * 210 + 209] = 0x24;                        /* d ~ 2^-6 */
    }
    /* hand-decoded elements of super-block 0 (llama.cpp's dequantize_row_q4_K / _q6_K, by hand) */
    float d4 = t_f16_value((uint16_t)(k4[0] | k4[1] << 8)), m4 = t_f16_value((uint16_t)(k4[2] | k4[3] << 8));
    const uint8_t *sc = k4 + 4;
    float want4[4] = {   /* elements 0 (sub-block 0, low nibble of qs[0]), 33 (1, high of qs[1]), 200 (6, low of qs[104]), 255 (7, high of qs[127]) */
        d4 * (float)(sc[0] & 63) * (float)(k4[16] & 15) - m4 * (float)(sc[4] & 63),
        d4 * (float)(sc[1] & 63) * (float)(k4[17] >> 4) - m4 * (float)(sc[5] & 63),
        d4 * (float)((sc[10] & 15) | (sc[2] >> 6) << 4) * (float)(k4[16 + 104] & 15) - m4 * (float)((sc[10] >> 4) | (sc[6] >> 6) << 4),
        d4 * (float)((sc[11] & 15) | (sc[3] >> 6) << 4) * (float)(k4[16 + 127] >> 4) - m4 * (float)((sc[11] >> 4) | (sc[7] >> 6) << 4)};
    float d6 = t_f16_value((uint16_t)(k6[208] | k6[209] << 8));
    float want6[3] = {   /* elements 0 (ql[0] low, qh[0] bits 0-1, scale 0), 100 (ql[36] high, qh[4] bits 6-7, scale 6), 250 (ql[90] high, qh[58] bits 6-7, scale 15) */
        d6 * (float)(int8_t)k6[192] * (float)(((k6[0] & 15) | (k6[128] & 3) << 4) - 32),
        d6 * (float)(int8_t)k6[192 + 6] * (float)(((k6[36] >> 4) | (k6[128 + 4] >> 6 & 3) << 4) - 32),
        d6 * (float)(int8_t)k6[192 + 15] * (float)(((k6[64 + 26 + 32] >> 4) | (k6[128 + 32 + 26] >> 6 & 3) << 4) - 32)};
    v2t t4[1] = {{"fc.weight", 12, 2, {2, 150}, k4, 288}}, t6[1] = {{"fc.weight", 14, 2, {2, 150}, k6, 420}};
    mlrt_model *m4m = LOAD_OK(v2_file("{\"activations\":\"identity\"}", t4, 1));
    mlrt_model *m6m = LOAD_OK(v2_file("{\"activations\":\"identity\"}", t6, 1));
    if (!m4m || !m6m) return;
    float *w = tmalloc(300 * sizeof(float));
    mlrt_error e;
    CHECK_INT(mlrt_weight_dtype(m4m), MLRT_Q4_K);
    CHECK_INT(mlrt_layer_weights(m4m, 0, w, NULL, &e), MLRT_OK);
    CHECK_BITS(w[0], want4[0]);
    CHECK_BITS(w[33], want4[1]);
    CHECK_BITS(w[200], want4[2]);
    CHECK_BITS(w[255], want4[3]);
    CHECK_CONTAINS(mlrt_model_info_json(m4m), "\"dtype\":\"Q4_K\",\"params\":300,\"weightBytes\":4800,"); /* as f32: 8 x 150 x 4 (a panel of 8 outputs) */
    CHECK_INT(mlrt_layer_weights(m6m, 0, w, NULL, &e), MLRT_OK);
    CHECK_BITS(w[0], want6[0]);
    CHECK_BITS(w[100], want6[1]);
    CHECK_BITS(w[250], want6[2]);
    float x[150], y[2];
    for (int i = 0; i < 150; i++) x[i] = 1;
    CHECK_INT(mlrt_predict(m6m, x, y, &e), MLRT_OK);
}

const test_case quant_tests[] = {
    T(test_quant_kernels_odd_shapes),
    T(test_quant_q8_rows_same_bits),
    T(test_quant_layouts_and_groups),
    T(test_quant_extreme_values),
    T(test_quant_models_from_files),
    T(test_quant_malformed),
    T(test_quant_gguf_k_quants),
    {0},
};
