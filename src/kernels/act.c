/* kernels/act.c — elementwise activations: the one implementation that the dense kernels' epilogue
 * (mlrt__activate, mlrt_activation) and the graph's elementwise ops (mlrt__act_apply) share, and
 * exp, erf and GELU of our own.
 *
 * exp, erf, erfc and the two GELUs are evaluated in double from polynomials of our own and rounded
 * once to float: IEEE double arithmetic (with -ffp-contract=off) gives the same bits in the
 * SIMD128, scalar, WASI and native builds, which libm's erff / expf / tanhf do not promise. Each
 * double is within about 1e-11 (relative) of the true value, so the float result is the true
 * value rounded, or one ulp from it (tests/c/test_graph_kernels.c measures this over a dense
 * sweep against double precision).
 *   exp(a):   a = k ln2 + r, |r| <= ln2 / 2 (ln2 split in two so k * LN2_HI is exact), e^r by its
 *             Taylor series to r^11 (error < 6e-15), times 2^k built from the exponent bits.
 *   erf(t):   |t| < 1: t times the Taylor series in t^2 to t^26 (alternating: error < 7e-12);
 *             t >= 1: 1 - erfc(t).
 *   erfc(t):  t >= 1: exp(-t^2) f(1/t) / t, f a Chebyshev series fitted on [1, 3] and [3, 27]
 *             (tools/onnx/fit_erfc.py: relative error < 1.1e-11); t < 1: 1 - erf(t).
 *   gelu(x) = x Phi(x) = x erfc(-x / sqrt 2) / 2 (exact: no cancellation for x < 0);
 *   gelu_tanh(x) = x (1 + tanh u) / 2 = x / (1 + e^(-2u)), u = sqrt(2/pi) (x + 0.044715 x^3).
 *   expm1(a): |a| < 0.35: a times the same series less its constant term (no cancellation); else e^a - 1.
 *   tanh(x) = expm1(2x) / (expm1(2x) + 2); sigmoid(x) = 1 / (1 + e^-x); log(s) (LogSoftmax) =
 *             k ln2 + 2 atanh((m - 1) / (m + 1)), s = m 2^k with m in [sqrt(1/2), sqrt 2).
 * So sigmoid, tanh, SiLU and softmax give the same bits in every build too (libm's expf, tanhf and
 * logf, which they used before, gave the true value rounded or one ulp from it, build by build). */
#include "kernels.h"
#include "simd.h"
#include <math.h>
#include <string.h>

/* ------------------------------------------------------------------ exp */

#define LN2_HI 0x1.62e42fefa3000p-1   /* ln 2, its low 12 bits cleared: k * LN2_HI is exact for |k| < 2^11 */
#define LN2_LO 0x1.3de6af278ece6p-42  /* ln 2 - LN2_HI */
#define LOG2E 1.4426950408889634

/* e^a in double, for the functions below: 0 under -708, +inf over 709, NaN for NaN. */
__attribute__((noinline)) static double exp_d(double a) {
    if (a != a) return a;
    if (a > 709.0) return INFINITY;
    if (a < -708.0) return 0.0;
    const double shift = 0x1.8p52; /* adding it rounds to an integer (round to nearest) */
    double k = (a * LOG2E + shift) - shift;
    double r = (a - k * LN2_HI) - k * LN2_LO;
    double p = 2.505210838544172e-08;
    p = p * r + 2.755731922398589e-07;
    p = p * r + 2.7557319223985893e-06;
    p = p * r + 2.48015873015873e-05;
    p = p * r + 0.0001984126984126984;
    p = p * r + 0.001388888888888889;
    p = p * r + 0.008333333333333333;
    p = p * r + 0.041666666666666664;
    p = p * r + 0.16666666666666666;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    uint64_t bits = (uint64_t)((int64_t)k + 1023) << 52; /* 2^k: k in [-1022, 1023] */
    double scale;
    memcpy(&scale, &bits, 8);
    return p * scale;
}

__attribute__((noinline)) float mlrt__expf(float x) {
    if (x > 88.8f) return INFINITY;
    return (float)exp_d((double)x);
}

/* e^a - 1 in double, without cancellation near 0. */
static double expm1_d(double a) {
    if (!(a > -0.35 && a < 0.35)) return exp_d(a) - 1.0;
    double p = 2.505210838544172e-08; /* exp_d's series from r^11 down to r^1, divided by r */
    p = p * a + 2.755731922398589e-07;
    p = p * a + 2.7557319223985893e-06;
    p = p * a + 2.48015873015873e-05;
    p = p * a + 0.0001984126984126984;
    p = p * a + 0.001388888888888889;
    p = p * a + 0.008333333333333333;
    p = p * a + 0.041666666666666664;
    p = p * a + 0.16666666666666666;
    p = p * a + 0.5;
    p = p * a + 1.0;
    return a * p;
}

__attribute__((noinline)) float mlrt__tanhf(float x) {
    if (x > 10.0f) return 1.0f; /* (tanh(10) rounds to 1 in float) */
    if (x < -10.0f) return -1.0f;
    double e = expm1_d(2.0 * (double)x);
    return (float)(e / (e + 2.0));
}

__attribute__((noinline)) float mlrt__sigmoidf(float x) { return (float)(1.0 / (1.0 + exp_d(-(double)x))); }

/* log(s) for s > 0 finite, in double: s = m 2^k, m in [sqrt(1/2), sqrt 2), log m = 2 atanh(z), z = (m - 1) / (m + 1),
 * |z| < 0.172: the series to z^25 (error < 1e-20). */
__attribute__((noinline)) float mlrt__logf(float s) {
    if (!(s > 0.0f)) return s == 0.0f ? -INFINITY : NAN;
    if (s == INFINITY) return s;
    double m = s;
    int k = 0;
    uint64_t bits;
    memcpy(&bits, &m, 8);
    k = (int)((bits >> 52) & 0x7ff) - 1023;                 /* (a float is never subnormal in double) */
    bits = (bits & 0x000fffffffffffffull) | 0x3ff0000000000000ull; /* m in [1, 2) */
    memcpy(&m, &bits, 8);
    if (m > 1.4142135623730951) m *= 0.5, k++;
    double z = (m - 1.0) / (m + 1.0), z2 = z * z, p = 1.0 / 25;
    for (int n = 23; n >= 1; n -= 2) p = p * z2 + 1.0 / n;
    return (float)((double)k * 0.6931471805599453 + 2.0 * z * p);
}

/* ------------------------------------------------------------------ erf, erfc */

/* erf(t) / t = sum_n (2 / sqrt pi) (-1)^n t^2n / (n! (2n + 1)), n = 0..13: for |t| < 1 */
static const double ERF_SERIES[14] = {
    1.1283791670955126, -0.37612638903183754, 0.11283791670955126, -0.026866170645131252, 0.005223977625442188,
    -0.0008548327023450853, 0.00012055332981789664, -1.492565035840625e-05, 1.6462114365889248e-06,
    -1.6365844691234924e-07, 1.4807192815879218e-08, -1.2290555301717928e-09, 9.422759064650411e-11,
    -6.7113668551641105e-12,
};

/* f(v) = t erfc(t) exp(t^2), v = 1/t, as Chebyshev series in u = (v - mid) / half (tools/onnx/fit_erfc.py) */
/* t in [1, 3]: mid 2/3, half 1/3; worst relative error 1.09e-11 */
static const double ERFC_LO[13] = {
    0.48244359007358784, -0.05533301074747559, -4.197163977403922e-05,
    0.0006121787001134692, -0.0001078144528812282, 1.105334442562809e-05,
    -3.3413184519761624e-07, -1.5246361065043953e-07, 4.415808912152643e-08,
    -7.496348843181224e-09, 8.568553519578808e-10, -3.611755514440273e-11,
    -1.3040858242411116e-11,
};
/* t in [3, 27]: mid 5/27, half 4/27; worst relative error 4.80e-13 */
static const double ERFC_HI[12] = {
    0.5526834376415917, -0.013562150270444152, -0.0022858594917338094,
    0.0001639685047531711, 5.769888354595744e-06, -1.8129073236947864e-06,
    8.917256021802229e-08, 1.349111168656715e-08, -2.6002305751717053e-09,
    8.896260572930801e-11, 3.2074535170788943e-11, -5.7456051750774874e-12,
};

/* sum_k c[k] T_k(u) (Clenshaw's recurrence) */
static double chebyshev(const double *c, int n, double u) {
    double b1 = 0.0, b2 = 0.0;
    for (int k = n - 1; k >= 1; k--) {
        double b0 = c[k] + 2.0 * u * b1 - b2;
        b2 = b1, b1 = b0;
    }
    return c[0] + u * b1 - b2;
}

static double erf_small(double t) { /* |t| < 1 */
    double z = t * t, p = ERF_SERIES[13];
    for (int n = 12; n >= 0; n--) p = p * z + ERF_SERIES[n];
    return t * p;
}

__attribute__((noinline)) static double erfc_large(double t) { /* t >= 1 */
    if (t >= 27.0) return 0.0;
    double v = 1.0 / t;
    double f = t < 3.0 ? chebyshev(ERFC_LO, 13, (v - 2.0 / 3.0) * 3.0) : chebyshev(ERFC_HI, 12, (v - 5.0 / 27.0) * 6.75);
    return exp_d(-(t * t)) * f * v;
}

static double erfc_d(double x) {
    if (x >= 1.0) return erfc_large(x);
    if (x > -1.0) return 1.0 - erf_small(x);
    return 2.0 - erfc_large(-x); /* (NaN: here, and NaN) */
}

__attribute__((noinline)) float mlrt__erff(float x) {
    double t = x;
    if (t > -1.0 && t < 1.0) return (float)erf_small(t);
    if (x != x) return x;
    double e = 1.0 - erfc_large(fabs(t));
    return (float)(x < 0 ? -e : e);
}

/* ------------------------------------------------------------------ GELU */

__attribute__((noinline)) float mlrt__gelu(float x) {
    if (x < -30.0f) return -0.0f; /* x Phi(x) underflows; -inf too */
    double t = x;
    return (float)(0.5 * t * erfc_d(-t * 0.7071067811865476));
}

__attribute__((noinline)) float mlrt__gelu_tanh(float x) {
    if (x < -30.0f) return -0.0f;
    double t = x, u = 0.7978845608028654 * (t + 0.044715 * (t * t * t));
    return (float)(t / (1.0 + exp_d(-2.0 * u)));
}

/* ------------------------------------------------------------------ the activations */

__attribute__((noinline)) void mlrt__act_apply(const mlrt__act *a, const float *x, float *y, size_t n) {
    const float alpha = a->alpha, lo = a->lo, hi = a->hi;
    /* In place, on y alone: a loop reading x and writing y vectorizes only behind a check that they do
     * not overlap, which fails when x == y (the fused epilogues), and then runs scalar. */
    if (x != y) memmove(y, x, n * sizeof *y);
    /* hot loops: one per function */
    switch (a->kind) {
    case MLRT__ACT_RELU: for (size_t i = 0; i < n; i++) y[i] = y[i] > 0.0f ? y[i] : 0.0f; break;
    case MLRT__ACT_LEAKY_RELU: for (size_t i = 0; i < n; i++) y[i] = y[i] >= 0.0f ? y[i] : alpha * y[i]; break;
    case MLRT__ACT_SIGMOID: for (size_t i = 0; i < n; i++) y[i] = mlrt__sigmoidf(y[i]); break;
    case MLRT__ACT_TANH: for (size_t i = 0; i < n; i++) y[i] = mlrt__tanhf(y[i]); break;
    case MLRT__ACT_SILU: for (size_t i = 0; i < n; i++) y[i] = y[i] * mlrt__sigmoidf(y[i]); break;
    case MLRT__ACT_GELU: for (size_t i = 0; i < n; i++) y[i] = mlrt__gelu(y[i]); break;
    case MLRT__ACT_GELU_TANH: for (size_t i = 0; i < n; i++) y[i] = mlrt__gelu_tanh(y[i]); break;
    case MLRT__ACT_ERF: for (size_t i = 0; i < n; i++) y[i] = mlrt__erff(y[i]); break;
    case MLRT__ACT_CLIP: for (size_t i = 0; i < n; i++) y[i] = y[i] < lo ? lo : y[i] > hi ? hi : y[i]; break;
    default: break; /* identity */
    }
}

/* softmax over y [n] in place */
static void softmax(float *y, size_t n) {
    float m = y[0], s = 0.0f;
    for (size_t i = 1; i < n; i++) m = y[i] > m ? y[i] : m;
    for (size_t i = 0; i < n; i++) { y[i] = mlrt__expf(y[i] - m); s += y[i]; }
    float inv = 1.0f / s;
    for (size_t i = 0; i < n; i++) y[i] *= inv;
}

__attribute__((noinline)) void mlrt__activate(mlrt_activation act, float *y, size_t n) {
    if (act == MLRT_ACT_IDENTITY || act >= MLRT_ACT_COUNT_) return;
    if (act == MLRT_ACT_SOFTMAX) { softmax(y, n); return; }
    mlrt__act a = {(mlrt__act_kind)act, 0.01f, 0.0f, 0.0f}; /* (LeakyReLU's slope as the dense layers use it) */
    mlrt__act_apply(&a, y, y, n);
}

/* ------------------------------------------------------------------ exp and GELU, four at a time (encoders) */

/* gelu(x) = x Phi(x) in float vectors, for the encoder's feed-forward layers (millions per text:
 * the double-precision mlrt__gelu above is too slow there). With a = |x|, E = e^(-x^2/2) (mlrt__exp4x) and
 * R(a) = Phi(-a) e^(a^2/2):
 *   gelu(x) = x E R(a) (x < 0),  x - x E R(a) (x >= 0: no cancellation, E R <= 1/2),
 *   E = e^(-h/2 - l/2), x^2 = h + l (h: x's top 12 bits squared, exact; l small), so that E keeps its
 *   few ulp where a rounded x^2 would lose x^2/2 of them,
 *   R(a) = Q(a - 1) for a < 2, u G(u) with u = 1/a beyond, Q and G fitted (tools/fit/encoder_fits.py).
 * Plain multiplies and adds: the same bits in every build; within a few ulp of x Phi(x)
 * (tests/c/test_encoder.c sweeps it against double precision); 0 for x < -13.2, where x Phi(x) is below
 * float's normal range. */
static const float GELU_Q[11] = {2.615782917e-01f, -1.373640001e-01f, 6.210711971e-02f, -2.508524247e-02f, 9.255580604e-03f,
                                 -3.168179421e-03f, 1.014595851e-03f, -3.023722384e-04f, 8.818673086e-05f, -2.919729741e-05f,
                                 7.222363365e-06f};
static const float GELU_G[10] = {3.989422917e-01f, -9.383520592e-06f, -3.983703554e-01f, -1.289183553e-02f, 1.328806877e+00f,
                                 -5.497738719e-01f, -6.796862602e+00f, 1.731290245e+01f, -1.817209816e+01f, 7.438931465e+00f};

__attribute__((always_inline)) static inline v4 gelu4(v4 x) {
    v4 a = (v4)((i4)x & 0x7fffffff), xc = select4(a < splat(16.0f), x, splat(16.0f)); /* (E = 0 from 13.3 on) */
    v4 xh = (v4)((i4)xc & (int32_t)0xfffff000), xl = xc - xh;
    v4 e = mlrt__exp4x(xh * xh * splat(-0.5f), splat(0.0f) - (xh * xl + xl * xl * splat(0.5f)));
    i4 near = a < splat(2.0f);
    const int32_t all = near[0] & near[1] & near[2] & near[3], any = near[0] | near[1] | near[2] | near[3];
    v4 q = splat(0.0f), g = splat(0.0f), u = splat(1.0f); /* only the polynomials some lane takes */
    if (any) {
        v4 s = a - splat(1.0f);
        q = splat(GELU_Q[10]);
        MLRT__ROLLED for (int k = 9; k >= 0; k--) q = q * s + splat(GELU_Q[k]); /* (rolled: 2 KB smaller, as fast) */
    }
    if (!all) {
        u = splat(1.0f) / select4(near, splat(2.0f), a), g = splat(GELU_G[9]);
        MLRT__ROLLED for (int k = 8; k >= 0; k--) g = g * u + splat(GELU_G[k]);
    }
    v4 c = (x * select4(near, q, g * u)) * e; /* (in this order: no subnormal on the way) */
    return select4(x < splat(0.0f), c, x - c);
}

/* y [n4], n4 a multiple of 4: the one place gelu4 is inlined. */
__attribute__((noinline)) static void gelu_run(float *y, size_t n4) {
    for (size_t i = 0; i < n4; i += 4) st(y + i, gelu4(ld(y + i))); /* hot loop: the feed-forward activations */
}

void mlrt__gelu_n(float *y, size_t n) {
    const size_t n4 = n & ~(size_t)3, k = n - n4;
    gelu_run(y, n4);
    if (k) { /* the last 1..3 through a copy */
        float t[4] = {0};
        memcpy(t, y + n4, k * sizeof *y);
        gelu_run(t, 4);
        memcpy(y + n4, t, k * sizeof *y);
    }
}
