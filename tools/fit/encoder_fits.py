#!/usr/bin/python3
"""Fits the float polynomials of the encoder's vector exp and GELU (src/kernels/simd.h, src/kernels/act.c)
and checks them evaluated in float32, as the kernels evaluate them (plain multiplies and adds, Horner).

  exp:  e^r = 1 + r + r^2 P(r), |r| <= ln2/2, P of degree 4
  GELU: gelu(x) = x Phi(x); with a = |x|, E = e^(-x^2/2) and R(a) = Phi(-a) e^(a^2/2) = erfcx(a/sqrt2)/2,
        gelu(x) = x E R(a) for x < 0, x - x E R(a) for x >= 0 (no cancellation: E R <= 1/2);
        R(a) = Q(a - 1) for a < 2 (Q of degree 10), R(a) = u G(u), u = 1/a, for a >= 2 (G of degree 9).
Weighted least squares on Chebyshev nodes (relative error): near minimax. Prints C initializers and the
worst relative errors of the float32 evaluation. Run: /usr/bin/python3 tools/fit/encoder_fits.py"""
import numpy as np
from scipy.special import erfcx

f32 = np.float32


def fit(fn, a, b, deg, n=4000):
    k = np.arange(n)
    x = (a + b) / 2 + (b - a) / 2 * np.cos(np.pi * (k + 0.5) / n)
    y = fn(x)
    V = np.vander(x, deg + 1, increasing=True)
    w = 1 / np.abs(y)
    c, *_ = np.linalg.lstsq(V * w[:, None], y * w, rcond=None)
    return [float(f32(v)) for v in c]


def horner32(c, x):
    p = np.full_like(x, f32(c[-1]))
    for ck in c[-2::-1]:
        p = (p * x).astype(f32) + f32(ck)
    return p.astype(f32)


R = lambda a: 0.5 * erfcx(a / np.sqrt(2))
L = np.log(2) / 2
EXP = fit(lambda r: (np.expm1(r) - r) / (r * r), -L * 1.01, L * 1.01, 4)
RLO = fit(lambda s: R(s + 1.0), -1.0, 1.0, 10)
GHI = fit(lambda u: R(1 / u) / u, 1e-4, 0.5, 9)


def exp32(r):
    r = r.astype(f32)
    return (f32(1) + r + (r * r).astype(f32) * horner32(EXP, r)).astype(f32)


if __name__ == '__main__':
    for name, c in (('EXP', EXP), ('RLO', RLO), ('GHI', GHI)):
        print(name, '{' + ', '.join('%.9ef' % v for v in c) + '}')
    r = np.linspace(-L, L, 200001)
    print('exp on |r| <= ln2/2: worst relative error %.3g' % np.max(np.abs(exp32(r) / np.exp(r) - 1)))
    a = np.linspace(0, 2, 200001).astype(f32)
    print('R, a < 2: %.3g' % np.max(np.abs(horner32(RLO, (a - f32(1)).astype(f32)) / R(a.astype(float)) - 1)))
    u = np.linspace(1 / 400, 0.5, 200001).astype(f32)
    print('R, a >= 2: %.3g' % np.max(np.abs((horner32(GHI, u) * u).astype(f32) / R(1 / u.astype(float)) - 1)))
