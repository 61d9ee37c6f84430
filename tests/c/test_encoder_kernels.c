/* test_encoder_kernels.c — the encoder's own kernels against double precision: the vector exp
 * (mlrt__exp4x) and GELU (mlrt__gelu_n) over dense sweeps, one head of attention (mlrt__attention)
 * for odd sizes. */
#include "builders.h"
#include "kernels/simd.h"

/* The vector exp and GELU against double precision over dense sweeps. */
static void test_exp_gelu_sweep(void) {
    double worst = 0;
    for (float x = -87.0f; x <= 0.0f; x += 0.0013f) {
        v4 y = mlrt__exp4x(splat(x), splat(0.0f));
        double t = exp((double)x), rel = fabs(y[0] - t) / t;
        worst = rel > worst ? rel : worst;
    }
    CHECK_MSG(worst < 2.5e-7, "exp4: worst relative error %.3g", worst);
    const double exp_worst = worst;
    CHECK(mlrt__exp4x(splat(-88.0f), splat(0.0f))[0] == 0.0f && mlrt__exp4x(splat(-1e30f), splat(0.0f))[0] == 0.0f &&
          mlrt__exp4x(splat(0.0f), splat(0.0f))[0] == 1.0f);
    worst = 0;
    double worst_at = 0;
    enum { N = 4001 };
    float *v = tmalloc(N * 4);
    for (int i = 0; i < N; i++) v[i] = -20.0f + 40.0f * (float)i / (N - 1) + 1e-4f * (float)(i % 7);
    float *g = tmalloc(N * 4);
    memcpy(g, v, N * 4);
    mlrt__gelu_n(g, N);
    for (int i = 0; i < N; i++) {
        double t = 0.5 * v[i] * erfc(-v[i] / sqrt(2.0)), err = fabs(g[i] - t), ulp = fabs(t) * 1.2e-7;
        if (fabs(t) < 1.2e-38) { /* below the normal range: 0 */
            CHECK(fabsf(g[i]) < 1.2e-38f);
            continue;
        }
        if (err / ulp > worst) worst = err / ulp, worst_at = v[i];
    }
    CHECK_MSG(worst <= 4.0, "gelu_n: worst error %.2f ulp at %g", worst, worst_at);
    printf("    (mlrt__exp4x: %.3g relative; gelu_n: %.2f ulp at %g)\n", exp_worst, worst, worst_at);
    float big[5] = {1e30f, -1e30f, 0.0f, -0.0f, 3.0f};
    mlrt__gelu_n(big, 5);
    CHECK(big[0] == 1e30f && big[1] == 0.0f && big[2] == 0.0f);
}

/* One head against a double-precision softmax attention, for odd sizes; with a relative position bias
 * (MPNet's) over positions with gaps (a row with masked tokens among its own), and without. */
static void test_attention_kernel(void) {
    static const size_t ns[] = {1, 2, 3, 5, 16, 17, 33}, ds[] = {3, 6, 8, 12, 23, 32, 48};
    enum { SPAN = 80 }; /* more than any position below */
    float rel[2 * SPAN - 1];
    uint32_t pos[64];
    rng_seed(7);
    for (size_t i = 0; i < LEN(rel); i++) rel[i] = rng_float(-1.5f, 1.5f);
    for (size_t j = 0; j < LEN(pos); j++) pos[j] = (uint32_t)(j + (j > 4) + 2 * (j > 20)); /* gaps after 4 and 20 */
    for (int with = 0; with < 2; with++)
    for (size_t a = 0; a < LEN(ns); a++)
        for (size_t b = 0; b < LEN(ds); b++) {
            const mlrt__attn_bias bias = {rel + SPAN - 1, pos, pos}, *bp = with ? &bias : NULL;
            size_t n = ns[a], d = ds[b], stride = d + 5, n16 = (n + 15) & ~(size_t)15;
            float *q = tmalloc(n * stride * 4), *k = tmalloc(n * stride * 4), *v = tmalloc(n * stride * 4), *o = tmalloc(n * stride * 4);
            float *kt = tmalloc(d * n16 * 4), *p = tmalloc(2 * n16 * 4);
            for (size_t i = 0; i < n * stride; i++) q[i] = rng_float(-2, 2), k[i] = rng_float(-2, 2), v[i] = rng_float(-1, 1);
            float scale = 1.0f / sqrtf((float)d);
            mlrt__attention(q, n, k, v, stride, n, d, scale, bp, o, kt, p);
            double worst = 0;
            for (size_t i = 0; i < n; i++) {
                double s[64], m = -1e300, sum = 0;
                for (size_t j = 0; j < n; j++) {
                    s[j] = 0;
                    for (size_t c = 0; c < d; c++) s[j] += (double)q[i * stride + c] * k[j * stride + c];
                    s[j] = s[j] * scale + (with ? rel[SPAN - 1 + pos[j] - pos[i]] : 0), m = s[j] > m ? s[j] : m;
                }
                for (size_t j = 0; j < n; j++) s[j] = exp(s[j] - m), sum += s[j];
                for (size_t c = 0; c < d; c++) {
                    double y = 0;
                    for (size_t j = 0; j < n; j++) y += s[j] / sum * v[j * stride + c];
                    worst = fabs(y - o[i * stride + c]) > worst ? fabs(y - o[i * stride + c]) : worst;
                }
            }
            CHECK_MSG(worst < 2e-6, "n %zu d %zu%s: worst %.3g", n, d, with ? " (bias)" : "", worst);
            /* the first nq queries alone (paired otherwise), and the last alone: the same bits */
            float *o1 = tmalloc(n * stride * 4);
            const mlrt__attn_bias last = {rel + SPAN - 1, pos + n - 1, pos};
            mlrt__attention(q + (n - 1) * stride, 1, k, v, stride, n, d, scale, with ? &last : NULL, o1, kt, p);
            CHECK_MSG(memcmp(o1, o + (n - 1) * stride, d * 4) == 0, "n %zu d %zu: the last query alone differs", n, d);
            for (size_t nq = 1; nq < n && nq <= 3; nq++) {
                mlrt__attention(q, nq, k, v, stride, n, d, scale, bp, o1, kt, p);
                for (size_t i = 0; i < nq; i++)
                    CHECK_MSG(memcmp(o1 + i * stride, o + i * stride, d * 4) == 0, "n %zu d %zu: query %zu of %zu differs", n, d, i, nq);
            }
        }
}

const test_case encoder_kernel_tests[] = {
    T(test_exp_gelu_sweep), T(test_attention_kernel), {0},
};
