#!/usr/bin/python3
"""fit_erfc.py — the Chebyshev coefficients of kernels/act.c's erfc, fitted here (mpmath as the reference).

    /usr/bin/python3 tools/onnx/fit_erfc.py

For t >= 1, act.c computes erfc(t) = exp(-t^2) * f(v) / t with v = 1/t and
    f(v) = t * erfc(t) * exp(t^2)        (smooth, -> 1/sqrt(pi) as t -> infinity)
evaluated as a Chebyshev series in u = (v - mid) / half on two intervals of t: [1, 3] (12th degree)
and [3, 27] (11th degree; past 27, exp(-t^2) underflows double). The fit is least squares at 400
Chebyshev nodes of v; the script prints each interval's worst relative error over 5000 points (about
1e-11 and 5e-13: far below float's 6e-8, so act.c's float results round from an almost exact double).
It prints the C arrays that act.c holds.
"""
import sys

sys.path = [p for p in sys.path if p != '']
import mpmath
import numpy as np

mpmath.mp.dps = 40


def f(t):
    t = mpmath.mpf(t)
    return t * mpmath.erfc(t) * mpmath.exp(t * t)


def fit(lo, hi, deg):
    vlo, vhi = 1 / hi, 1 / lo
    mid, half = (vlo + vhi) / 2, (vhi - vlo) / 2
    n = 400
    u = np.cos(np.pi * (np.arange(n) + 0.5) / n)
    y = np.array([float(f(1 / (mid + half * x))) for x in u])
    c = np.polynomial.chebyshev.chebfit(u, y, deg)
    vv = np.linspace(vlo, vhi, 5000)
    want = np.array([float(f(1 / v)) for v in vv])
    got = np.polynomial.chebyshev.chebval((vv - mid) / half, c)
    return c, mid, half, np.max(np.abs(got / want - 1))


for name, lo, hi, deg in [('ERFC_LO', 1, 3, 12), ('ERFC_HI', 3, 27, 11)]:
    c, mid, half, worst = fit(lo, hi, deg)
    print(f'/* t in [{lo}, {hi}]: v = 1/t, u = (v - {mid!r}) / {half!r}; worst relative error {worst:.2e} */')
    print(f'static const double {name}[{deg + 1}] = {{')
    for k in range(0, deg + 1, 3):
        print('    ' + ', '.join(repr(float(x)) for x in c[k:k + 3]) + ',')
    print('};')
