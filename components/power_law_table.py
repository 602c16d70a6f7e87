"""Tabulated arc length of the power-law ODE: the fast path of power_law_map.

On a side of y = 0 the state w = |y| of dy/ds = q0 − q1 sgn(y)|y|^m − q2|y|^m obeys
dw/ds = ±(a − b w^m); with w = λτ, λ = (a/|b|)^(1/m), and s = (λ/a)σ this is
dτ/dσ = ±(1 ∓ τ^m), the same for every parameter set with the same m. The arc
length from 0,

    F(τ) = ∫_0^τ dt/(1 − t^m)   (b > 0, "sat", τ < 1)
    F(τ) = ∫_0^τ dt/(1 + t^m)   (b < 0, "grow"),

and its inverse are tabulated once per m as piecewise polynomials (degree 9 on uniform
cells, Chebyshev interpolants of values from convergent series, cells doubled until
the interpolation error is below 1e-14) in variables in which they are analytic:
F = τΦ(τ^m) near 0; F = (−ln(1 − x) + H(x))/m, x = τ^m, towards the saturation
τ = 1; τ = σΨ(σ^m) near 0; 1 − τ = qK(q), q = e^(−mσ), far along. A segment then
costs a power or logarithm, an exponential or power, and two polynomial evaluations:
σ_end = F(τ0) ± σ_L, τ_end = F⁻¹(σ_end), the switch at y = 0 where σ_end reaches 0
(at its exact arc length, as in the series map).

The tables are parameter-derived, immutable data (not state): the laws append them to
the p their Python kernels receive (``ForceElement.kernel_p``); the C twins keep the
series map of power_law_map, with which the tables agree to a few 1e-15 relative to
the saturation value. States outside the tables' range (beyond the saturation value or
a return branch's unstable point, x > 4 on a growing branch) take the series map.
"""
import math

import numpy as np
from numba import njit

from .power_law_map import _short_step

DEG = 9
_X_H = 0.5          # sat: x = τ^m up to which F = τΦ(x)
_XG = 4.0           # grow: the table covers x ≤ 4
# layout: [m, σ_h, y_h, q_h, σ_gmax, y_gmax, offsets of the six tables, tables...]
_HEAD = 12
PHI, H, PSI, K, PHIG, PSIG = range(6)


# -- series for the node values (build time only) ------------------------------------------
@njit(cache=True)
def _phi_sat(x, m):
    # Σ_j x^j/(jm + 1), x ≤ 1/2
    tot = 0.0
    t = 1.0
    for j in range(400):
        term = t / (j * m + 1.0)
        tot += term
        if term < 1e-18 * tot:
            break
        t *= x
    return tot


@njit(cache=True)
def _h_sat(x, m, bh):
    # H(x) = B(x; 1/m, 0) + ln(1 − x) on [1/2, 1]: B(1/2) − ln 2 + Σ d_k (2^−k − ε^k)/k,
    # ε = 1 − x, d_k = Π_{i ≤ k} (i − p)/i
    p = 1.0 / m
    eps = 1.0 - x
    tot = bh - math.log(2.0)
    d = 1.0
    for k in range(1, 400):
        d *= (k - p) / k
        term = d * (0.5 ** k - eps ** k) / k
        tot += term
        if abs(term) < 1e-18 * max(abs(tot), 1.0) and k > 2:
            break
    return tot


@njit(cache=True)
def _f_grow(tau, m):
    # ∫_0^τ dt/(1 + t^m) = (1/m) y^p Σ_k (p)_k/k! y^k/(p + k), y = x/(1 + x), x = τ^m
    p = 1.0 / m
    x = tau ** m
    y = x / (1.0 + x)
    tot = 0.0
    c = 1.0
    yk = 1.0
    for k in range(20000):
        term = c * yk / (p + k)
        tot += term
        if term < 1e-18 * tot and k > p:
            break
        c *= (p + k) / (k + 1.0)
        yk *= y
    return y ** p * tot / m


@njit(cache=True)
def _f(t, m, sat, bh):
    if not sat:
        return _f_grow(t, m)
    x = t ** m
    if x <= _X_H:
        return t * _phi_sat(x, m)
    return (-math.log1p(-x) + _h_sat(x, m, bh)) / m


@njit(cache=True)
def _invert(sigma, m, sat, bh, hi):
    # F(τ) = σ on [0, hi] by Newton (F' = 1/(1 ∓ τ^m)), bisection where a step leaves
    # the bracket
    lo = 0.0
    t = min(sigma, hi)
    for _ in range(200):
        f = _f(t, m, sat, bh) - sigma
        if f > 0.0:
            hi = min(hi, t)
        else:
            lo = max(lo, t)
        tn = t - f * ((1.0 - t ** m) if sat else (1.0 + t ** m))
        if not (lo <= tn <= hi):
            tn = 0.5 * (lo + hi)
        if abs(tn - t) <= 2e-16 * abs(t):
            return tn
        t = tn
    return t


@njit(cache=True)
def _values(which, v, m, bh, top):
    """The tabulated function ``which`` at the points v (see _build)."""
    p = 1.0 / m
    out = np.empty(v.size)
    for i in range(v.size):
        x = v[i]
        if which == PHI:
            out[i] = _phi_sat(x, m)
        elif which == H:
            out[i] = _h_sat(x, m, bh)
        elif which == PSI or which == PSIG:
            sg = x ** p
            out[i] = _invert(sg, m, which == PSI, bh, top) / sg if x > 0.0 else 1.0
        elif which == K:
            # 1 − x = q e^(H(x)) by fixed point (q ≤ q_h: a contraction), then 1 − τ
            if x == 0.0:
                out[i] = p * math.exp(_h_sat(1.0, m, bh))
                continue
            eps = x * math.exp(_h_sat(0.75, m, bh))
            for _ in range(200):
                en = x * math.exp(_h_sat(1.0 - eps, m, bh))
                done = abs(en - eps) <= 1e-17 * en
                eps = en
                if done:
                    break
            out[i] = -math.expm1(p * math.log1p(-eps)) / x
        else:
            out[i] = _f_grow(x ** p, m) / x ** p if x > 0.0 else 1.0
    return out


def _fit(which, lo, hi, m, bh, top, tol=1e-14):
    """Uniform cells of degree-DEG Chebyshev interpolants of _values(which) on [lo, hi],
    doubled until the error between the nodes is below tol (relative to max(|f|, 1));
    as [lo, 1/h, n, DEG, monomial coefficients in z ∈ [−1, 1]...]."""
    k = np.arange(DEG + 1)
    z = np.cos(np.pi * (k + 0.5) / (DEG + 1))
    zc = np.cos(np.pi * (np.arange(DEG) + 1.0) / (DEG + 1))     # between the nodes
    n = 4
    while True:
        h = (hi - lo) / n
        c0 = lo + (np.arange(n) + 0.5) * h
        vals = _values(which, (c0[:, None] + 0.5 * h * z).ravel(), m, bh, top).reshape(n, -1)
        chk = _values(which, (c0[:, None] + 0.5 * h * zc).ravel(), m, bh, top).reshape(n, -1)
        coefs = np.zeros((n, DEG + 1))
        worst = 0.0
        for i in range(n):
            c = np.polynomial.chebyshev.cheb2poly(
                np.polynomial.chebyshev.chebfit(z, vals[i], DEG))
            coefs[i, :c.size] = c                     # cheb2poly may drop zero tails
            got = np.polynomial.polynomial.polyval(zc, coefs[i])
            worst = max(worst, float(np.max(np.abs(got - chk[i]) /
                                            np.maximum(np.abs(chk[i]), 1.0))))
        if worst <= tol or n >= 512:
            return np.concatenate([[lo, 1.0 / h, n, DEG], coefs.ravel()])
        n *= 2


def _build(m: float) -> np.ndarray:
    th = _X_H ** (1.0 / m)                           # τ at x = 1/2
    sig_h = th * _phi_sat(_X_H, m)
    bh = m * sig_h                                   # B(1/2; 1/m, 0)
    y_h = sig_h ** m
    q_h = math.exp(-m * sig_h)
    tg = _XG ** (1.0 / m)
    sig_g = _f_grow(tg, m)
    y_g = sig_g ** m
    tabs = [_fit(PHI, 0.0, _X_H, m, bh, 0.0), _fit(H, _X_H, 1.0, m, bh, 0.0),
            _fit(PSI, 0.0, y_h, m, bh, th), _fit(K, 0.0, q_h, m, bh, 0.0),
            _fit(PHIG, 0.0, _XG, m, bh, 0.0), _fit(PSIG, 0.0, y_g, m, bh, tg)]
    offs = np.cumsum([_HEAD] + [t.size for t in tabs[:-1]])
    out = np.concatenate([[m, sig_h, y_h, q_h, sig_g, y_g], offs.astype(float)] + tabs)
    out.flags.writeable = False
    return out


_TABLES: dict = {}


def power_law_table(m: float) -> np.ndarray:
    """The tables of exponent m > 0, m ≠ 1, as one read-only float64 vector (kept per
    m in this process)."""
    m = float(m)
    tab = _TABLES.get(m)
    if tab is None:
        if len(_TABLES) >= 64:
            _TABLES.pop(next(iter(_TABLES)))
        tab = _TABLES[m] = _build(m)
    return tab


# building the tables of one m takes about 0.2 s, what the series map spends on about
# 5e5 rough samples: used for runs of that size (built once per m and process)
BUILD_WORK = 500_000


def table_kernel_p(p, m: float, work: int, pairs=()) -> np.ndarray:
    """p followed by the scales λ = (a/|b|)^(1/m) of the law's usual (a, |b|) pairs
    and the tables of m, for runs of ``work`` ≥ BUILD_WORK segments (else p: the
    result of a call does not depend on what ran before it)."""
    if work < BUILD_WORK:
        return p
    lam = [len(pairs)] + [v for a, b in pairs for v in (a, b, (a / b) ** (1.0 / m))]
    return np.concatenate([p, lam, power_law_table(m)])


# -- evaluation (the kernels) ----------------------------------------------------------------
@njit(cache=True, inline="always")
def _poly(T, off, v):
    lo = T[off]
    r = (v - lo) * T[off + 1]
    n = int(T[off + 2])
    i = int(r)
    if i >= n:
        i = n - 1
    elif i < 0:
        i = 0
    z = 2.0 * (r - i) - 1.0
    c = off + 4 + i * (DEG + 1)
    acc = T[c + DEG]
    for j in range(DEG - 1, -1, -1):
        acc = acc * z + T[c + j]
    return acc


@njit(cache=True, inline="always")
def _arc(T, o, tau, sat):
    """F(τ) [units λ/a], or −1 where τ is outside the tables."""
    m = T[o]
    x = tau ** m
    if sat:
        if x <= _X_H:
            return tau * _poly(T, o + int(T[o + 6 + PHI]), x)
        if x < 1.0:
            return (-math.log1p(-x) + _poly(T, o + int(T[o + 6 + H]), x)) / m
        return -1.0
    if x <= _XG:
        return tau * _poly(T, o + int(T[o + 6 + PHIG]), x)
    return -1.0


@njit(cache=True, inline="always")
def _inv(T, o, sig, sat):
    """τ at the arc length σ ≥ 0 from 0, or −1 outside the tables."""
    m = T[o]
    if sat:
        if sig <= T[o + 1]:
            return sig * _poly(T, o + int(T[o + 6 + PSI]), sig ** m) if sig > 0.0 else 0.0
        q = math.exp(-m * sig)
        return 1.0 - q * _poly(T, o + int(T[o + 6 + K]), q)
    if sig <= T[o + 4]:
        return sig * _poly(T, o + int(T[o + 6 + PSIG]), sig ** m) if sig > 0.0 else 0.0
    return -1.0


@njit(cache=True, inline="always")
def _scale(T, c, a, b, m):
    # λ = (a/b)^(1/m) from table_kernel_p's list at T[c] when (a, b) is there
    for j in range(int(T[c])):
        k = c + 1 + 3 * j
        if T[k] == a and T[k + 1] == b:
            return T[k + 2]
    return (a / b) ** (1.0 / m)


@njit(cache=True)
def table_advance(y, L, q0, q1, q2, m, rtol, scale, T, c):
    """power_law_advance(y, L, q0, q1, q2, m, rtol, scale) from what table_kernel_p
    put at T[c:] (the scales λ, then the tables of exponent m; q0 ≠ 0, L > 0), or
    NaN where a state leaves the tables' range (the caller then takes the series
    map). A short segment far from 0 takes the series map's checked Taylor step
    first (cheaper still)."""
    o = c + 1 + 3 * int(T[c])
    if y != 0.0:
        yn = _short_step(y, L, q0, q1 + q2 if y > 0.0 else q2 - q1, m,
                         min(max(1e-3 * rtol, 1e-16), 1e-6), scale)
        if yn == yn:
            return yn
    sa = 1.0 if q0 > 0.0 else -1.0
    a = abs(q0)
    ka = q1 + q2 if sa > 0.0 else q2 - q1
    kb = q2 - q1 if sa > 0.0 else q1 + q2
    if y * sa < 0.0:
        # towards 0: dw/ds = −(a − b w^m), b = sa·kb
        b = sa * kb
        w = abs(y)
        if b == 0.0:
            if a * L < w:
                return y + sa * a * L
            L -= w / a
        else:
            lam = _scale(T, c, a, abs(b), m)
            s0 = _arc(T, o, w / lam, b > 0.0)
            if s0 < 0.0:
                return np.nan
            s1 = s0 - L * a / lam
            if s1 > 0.0:
                t1 = _inv(T, o, s1, b > 0.0)
                if t1 < 0.0:
                    return np.nan
                return -sa * lam * t1
            # 0 reached: the rest of the segment from 0 on the other side
            L = -s1 * lam / a
        y = 0.0
    b = sa * ka
    w = abs(y)
    if b == 0.0:
        return y + sa * a * L
    lam = _scale(T, c, a, abs(b), m)
    s0 = _arc(T, o, w / lam, b > 0.0) if w > 0.0 else 0.0
    if s0 < 0.0:
        return np.nan
    t1 = _inv(T, o, s0 + L * a / lam, b > 0.0)
    if t1 < 0.0:
        return np.nan
    return sa * lam * t1
