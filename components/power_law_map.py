"""Exact segment map of the scalar power-law ODE shared by Bouc-Wen and modified Dahl.

    dy/ds = g(y) = q0 − q1 sgn(y)|y|^m − q2 |y|^m        (s the arc length of the input)

On each side of y = 0, g(y) = q0 − k|y|^m, so w = |y| obeys dw/ds = ±(a − b w^m) with
a = |q0| and a constant b: the arc length is the closed-form integral

    s = ∫ dw / (a − b w^m) = (λ/(a m)) ∫ x^(p−1) dx / (1 ∓ x),   x = (w/λ)^m,
    λ = (a/|b|)^(1/m),  p = 1/m,

an incomplete beta function B(x; p, 0) (b > 0, the saturating side) or B(y; p, 1 − p),
y = x/(1 + x) (b < 0). ``power_law_advance`` evaluates it with convergent series, each
used where its ratio is at most 1/2 (so a handful of terms), as the difference between
the segment's start and a trial end: around x = 0 (powers of x or y), around the
saturation x = 1 (powers of 1 − x below it, of 1 − 1/x above it, with the logarithm of
the distance to 1 in closed form: the approach to the saturation value
w* = λ is exact however close) and towards infinity (powers of 1/x or 1/(1 + x)). It
solves "arc length = segment length" for the end by a safeguarded Halley iteration in a
variable in which the arc length is nearly linear (w, −ln|1 − x|, x^(p−1)), starting from
the second-order step, so that a sample costs one to three series whatever its length;
y = 0 (where g is not Lipschitz for m < 1) is reached at its exact arc length and the
rest of the segment continues from 0 on the other side (at most one switch: g(0) = q0
keeps its sign). A huge segment costs the same: the solution then lies at w* to
rounding (or beyond the largest double for a growing branch). A segment so short that
the Taylor polynomial of degree 6 about its start (one power) meets the tolerance and
stays within 25 % of |y| takes that polynomial instead (the samples of a smooth,
densely sampled input).

Accuracy: series truncated at 1e-3·rtol relative to the segment's arc length, the
iteration stopped when its next correction is below that; the map agrees with
LSODA/DOP853 references to about 1e-10 relative at rtol = 1e-8.

The C twin (hm_power_law_advance in hm_law.h) is a line-by-line mirror.
"""
import math

import numpy as np
from numba import njit

# region kinds: the expansion and Newton variable used on a range of x = (w/λ)^m
_NP = 0   # b > 0, x ≤ 1/2: v = w/λ, series in x
_CP = 1   # b > 0, 1/2 < x < 1: v = −ln(1 − x), series in 1 − x
_AP = 2   # b > 0, 1 < x ≤ 2: v = −ln(1 − 1/x), series in 1 − 1/x
_HP = 3   # b > 0, x > 2: v = −(x^(p−1) − 1)/(p − 1), series in 1/x
_NM = 4   # b < 0, x ≤ 1: v = w/λ, series in x/(1 + x)
_FM = 5   # b < 0, x > 1: v = (x^(p−1) − 1)/(p − 1), series in 1/(1 + x)
_LN2 = 0.6931471805599453
_MAXTERMS = 4000


@njit(cache=True, inline="always")
def _eta(lnx, p):
    # (x^(p−1) − 1)/(p − 1), continuous through p = 1 (→ ln x)
    q = p - 1.0
    if q == 0.0:
        return lnx
    return math.expm1(q * lnx) / q


@njit(cache=True, inline="always")
def _lnx_of_eta(eta, p):
    q = p - 1.0
    if q == 0.0:
        return eta
    return math.log1p(q * eta) / q


@njit(cache=True)
def _v_of_lnx(kind, lnx, p, m):
    """The Newton variable of region ``kind`` at x = e^lnx (increasing in the arc
    length travelled towards the region's attractor, see _darc)."""
    if kind == _NP or kind == _NM:
        return math.exp(p * lnx)
    if kind == _CP:
        return -math.log(-math.expm1(lnx))
    if kind == _AP:
        return -math.log(-math.expm1(-lnx))
    if kind == _HP:
        return -_eta(lnx, p)
    return _eta(lnx, p)


@njit(cache=True)
def _lnx_of_v(kind, v, p, m):
    if kind == _NP or kind == _NM:
        return m * math.log(v) if v > 0.0 else -np.inf
    if kind == _CP:
        return math.log1p(-math.exp(-v))
    if kind == _AP:
        return -math.log1p(-math.exp(-v))
    if kind == _HP:
        return _lnx_of_eta(-v, p)
    return _lnx_of_eta(v, p)


@njit(cache=True)
def _v_cut(kind, p):
    """The value of v on the region's far edge: x = 1/2 (NP, CP), x = 2 (AP, HP),
    x = 1 (NM, FM)."""
    if kind == _NP:
        return math.exp(-p * _LN2)
    if kind == _CP or kind == _AP:
        return _LN2
    if kind == _HP:
        return -_eta(_LN2, p)
    if kind == _NM:
        return 1.0
    return 0.0


@njit(cache=True, inline="always")
def _point(kind, v, p, m):
    """What the series of region ``kind`` need at v: (P0, P1, P2), and the arc
    length's first two derivatives in v, d1 > 0 and d2 (units λ/(a m))."""
    if kind == _NP:
        x = v ** m
        d1 = m / (1.0 - x)
        d2 = m * d1 * x / (v * (1.0 - x)) if v > 0.0 else 0.0
        return x, v, 0.0, d1, d2
    if kind == _NM:
        x = v ** m
        a = v * (1.0 + x) ** (-p)           # y^p, y = x/(1 + x)
        d1 = m / (1.0 + x)
        d2 = -m * d1 * x / (v * (1.0 + x)) if v > 0.0 else 0.0
        return x / (1.0 + x), a, 0.0, d1, d2
    if kind == _CP:
        e = math.exp(-v)                     # 1 − x
        d1 = (1.0 - e) ** (p - 1.0)          # x^(p−1)
        return e, 0.0, 0.0, d1, (p - 1.0) * d1 * e / (1.0 - e)
    if kind == _AP:
        e = math.exp(-v)                     # 1 − 1/x
        d1 = (1.0 - e) ** (-p)               # x^p
        return e, 0.0, 0.0, d1, -p * d1 * e / (1.0 - e)
    if kind == _HP:
        lx = _lnx_of_eta(-v, p)
        X = math.exp(-lx)                    # 1/x
        a = 1.0 - (p - 1.0) * v              # X^(1−p) = x^(p−1)
        d1 = 1.0 / (1.0 - X)
        return X, -lx, a, d1, X / a * d1 * d1
    lx = _lnx_of_eta(v, p)                   # _FM
    x = math.exp(lx)
    X = 1.0 / (1.0 + x)                      # 1/(1 + x)
    l = -math.log1p(x)
    a = X ** (1.0 - p)
    d1 = x * X
    return X, l, a, d1, x / (1.0 + (p - 1.0) * v) * X * X


@njit(cache=True)
def _darc(kind, vb, B0, B1, B2, v, P0, P1, P2, p, m, tol):
    """Arc length from v_b to v (signed, increasing in v) in units of λ/(a m): the
    integral ∫ x^(p−1) dx/|1 ∓ x| between the two points (B = _point at v_b, P at v)
    by the series of the region, truncated where a term falls below tol relative to
    the sum."""
    if v == vb:
        return 0.0
    tot = 0.0
    if kind == _NP:
        # T Σ_j x^j/(j + p),  x = T^m
        a1 = P1
        a0 = B1
        for j in range(_MAXTERMS):
            t = (a1 - a0) / (j + p)
            tot += t
            if abs(t) <= 0.25 * tol * abs(tot):
                break
            a1 *= P0
            a0 *= B0
        return tot
    if kind == _NM:
        # y^p Σ_k (p)_k/k! y^k/(p + k),  y = x/(1 + x)
        a1 = P1
        a0 = B1
        c = 1.0
        for k in range(_MAXTERMS):
            t = c * (a1 - a0) / (p + k)
            tot += t
            if k > p and abs(t) <= 0.25 * tol * abs(tot):
                break
            c *= (p + k) / (k + 1.0)
            a1 *= P0
            a0 *= B0
        return tot
    if kind == _CP or kind == _AP:
        # CP: ln(ε_b/ε) + Σ_k≥1 d_k (ε_b^k − ε^k)/k,  ε = 1 − x,  d_k = Π_{i≤k} (i − p)/i
        # AP: ln(y_b/y) + Σ_k≥1 (p)_k/k! (y_b^k − y^k)/k,  y = 1 − 1/x
        tot = v - vb
        d = 1.0
        a1 = 1.0
        a0 = 1.0
        sh = -p if kind == _CP else p - 1.0
        kmin = p if kind == _CP else 2.0 * p
        for k in range(1, _MAXTERMS):
            d *= (k + sh) / k
            if d == 0.0:
                break
            a1 *= P0
            a0 *= B0
            t = d * (a0 - a1) / k
            tot += t
            if k > kmin and abs(t) <= 0.25 * tol * abs(tot):
                break
        return tot
    # HP: Σ_j (X^c − X_b^c)/c,  X = 1/x,  c = j − p + 1;  FM: Σ_k d_k (X_b^c − X^c)/c,
    # X = 1/(1 + x). The term with |c| < 1/2 via expm1 (exact through c = 0, where it
    # is a logarithm).
    a1 = P2
    a0 = B2
    d = 1.0 if kind == _HP else -1.0
    for k in range(_MAXTERMS):
        if k > 0 and kind == _FM:
            d *= (k - p) / k
            if d == 0.0:
                break
        c = k - p + 1.0
        if abs(c) < 0.5:
            t = d * a0 * _em1c(c, P1 - B1)
        else:
            t = d * (a1 - a0) / c
        tot += t
        if k > p and abs(t) <= 0.25 * tol * abs(tot):
            break
        a1 *= P0
        a0 *= B0
    return tot


@njit(cache=True, inline="always")
def _em1c(c, r):
    # (e^(c r) − 1)/c, = r at c = 0
    if c == 0.0:
        return r
    return math.expm1(c * r) / c


@njit(cache=True, inline="always")
def _halley(f, d1, d2):
    # the root step of f + d1 δ + d2 δ²/2 (Halley); Newton's where that is unsafe
    den = 2.0 * d1 * d1 - f * d2
    if den > d1 * d1:
        return -2.0 * f * d1 / den
    return -f / d1


@njit(cache=True, inline="always")
def _t_lin(kind, v, P0, P2, d1, d2, p, dv):
    # T = (w/λ) = x^p at v + dv, to first order in dv from what _point gave at v (the
    # accepted correction dv is so small that the second-order term is below rounding)
    if kind == _NP or kind == _NM:
        return v + dv
    if kind == _CP:
        return (1.0 - P0) * d1 + p * d1 * P0 * dv
    if kind == _AP:
        return d1 + d2 * dv
    if kind == _HP:
        return (P2 - p * dv) / P0
    x = 1.0 / P0 - 1.0
    return x * (1.0 + (p - 1.0) * v) + p * x * dv


@njit(cache=True)
def _solve(kind, vb, sig, vend, p, m, tol, acc, B0, B1, B2, d1, d2):
    """Travel the arc length sig ≥ 0 (units λ/(a m)) from v_b towards v_end on region
    ``kind`` (B0, B1, B2, d1, d2 = _point at v_b); returns (the end's v, the arc length
    left over when v_end is reached first, else 0, and w/λ at the end or NaN when it
    is to be worked out from v). Safeguarded Halley iteration: the bracket shrinks on
    every evaluation and a step leaving it bisects; the second-order step from v_b
    starts it, and a correction small enough for the next error to be below tol ends
    it."""
    if sig <= 0.0:
        return vb, 0.0, np.nan
    dirv = 1.0 if vend > vb else -1.0
    lo = min(vb, vend)
    hi = max(vb, vend)
    target = dirv * sig
    v = vb + _halley(-target, d1, d2)
    tried_end = False
    if not (lo < v < hi):
        if (v - vb) * dirv > 0.0:
            v = vend
            tried_end = True
        else:
            v = 0.5 * (vb + vend)
        if abs(v) == np.inf:
            v = vb + target / d1
            tried_end = False
    for _ in range(200):
        if abs(v) == np.inf:
            return v, 0.0, np.nan
        P0, P1, P2, d1, d2 = _point(kind, v, p, m)
        f = _darc(kind, vb, B0, B1, B2, v, P0, P1, P2, p, m, tol) - target
        if v == vend and f * dirv <= 0.0:
            return vend, sig - abs(f + target), np.nan
        if f < 0.0:
            lo = v
        else:
            hi = v
        dv = _halley(f, d1, d2)
        vn = v + dv
        # the size of v: w/λ itself in the regions near 0 (tiny when λ is huge, e.g.
        # m ≪ 1), else of order 1
        vs = max(abs(v), abs(vb)) if (kind == _NP or kind == _NM) else max(abs(v), 1.0)
        if (vn - vend) * dirv >= 0.0 and not tried_end:
            v = vend                    # the end may be reached: test it once
            tried_end = True
            continue
        if not (lo <= vn <= hi):
            if abs(hi) == np.inf or abs(lo) == np.inf:
                vn = min(max(v - 2.0 * f / d1, lo), hi)
            else:
                vn = 0.5 * (lo + hi)
        elif (abs(dv) <= acc * vs and abs(d2 / d1) * dv * dv <= tol * vs):
            # the next error is of order |d2/d1| δ² (less after Halley's step): below
            # tol (the curvature test matters where the arc length is not analytic,
            # near y = 0 for m < 1)
            return vn, 0.0, _t_lin(kind, v, P0, P2, d1, d2, p, dv)
        if vn == v:
            return v, 0.0, np.nan
        v = vn
    return v, 0.0, np.nan


@njit(cache=True)
def _next_kind(kind, toward_zero):
    if toward_zero:
        return _NP if kind == _CP else _NM
    if kind == _NP:
        return _CP
    if kind == _HP:
        return _AP
    return _FM


@njit(cache=True, inline="always")
def _start(T, x, pos, p, m):
    """Region, v and _point at w = λT, x = T^m (computed from T and x directly: fewer
    transcendental calls than _point)."""
    if pos:
        if x <= 0.5:
            d1 = m / (1.0 - x)
            d2 = m * d1 * x / (T * (1.0 - x)) if T > 0.0 else 0.0
            return _NP, T, x, T, 0.0, d1, d2
        if x < 1.0:
            e = 1.0 - x
            d1 = T / x                                  # x^(p−1)
            return _CP, -math.log(e), e, 0.0, 0.0, d1, (p - 1.0) * d1 * e / x
        if x <= 2.0:
            e = 1.0 - 1.0 / x
            return _AP, -math.log(e), e, 0.0, 0.0, T, -p * T * e / (1.0 - e)
        lx = math.log(x)
        X = 1.0 / x
        a = T / x                                       # x^(p−1)
        d1 = 1.0 / (1.0 - X)
        return _HP, -_eta(lx, p), X, -lx, a, d1, X / a * d1 * d1
    if x <= 1.0:
        a = T * (1.0 + x) ** (-p)
        d1 = m / (1.0 + x)
        d2 = -m * d1 * x / (T * (1.0 + x)) if T > 0.0 else 0.0
        return _NM, T, x / (1.0 + x), a, 0.0, d1, d2
    lx = math.log(x)
    X = 1.0 / (1.0 + x)
    a = X ** (1.0 - p)
    d1 = x * X
    return _FM, _eta(lx, p), X, -math.log1p(x), a, d1, T / x * x / (1.0 + (p - 1.0) * _eta(lx, p)) * X * X


_FAR = 8.0


@njit(cache=True, inline="always")
def _tail(lx, pos, p):
    """ln of the arc length to infinity, ∫_x^∞ t^(p−1) dt/(t ∓ 1) (− for b > 0), at
    x = e^lx ≥ e^8 and p < 1: x^(p−1) Σ_k (±1)^k x^(−k)/(k + 1 − p), and its
    derivative in lx."""
    X = math.exp(-lx)
    sgn = 1.0 if pos else -1.0
    tot = 0.0
    der = 0.0
    c = 1.0
    for k in range(60):
        t = c / (k + 1.0 - p)
        tot += t
        der += k * t
        if abs(t) <= 1e-17 * abs(tot):
            break
        c *= sgn * X
    # d ln G/d lx = (p − 1) − Σ k t_k/Σ t_k
    return (p - 1.0) * lx + math.log(tot), (p - 1.0) - der / tot


@njit(cache=True)
def _far_fall(lx, lf, sig, pos, p):
    """Fall from x = e^lx towards x = e^lf < e^lx over the arc length sig (units
    λ/(a m)): returns (ln x at the end, the arc length left over at x_far, else 0)."""
    if not (sig > 0.0):
        return lx, 0.0
    g0, _ = _tail(lx, pos, p)
    gf, _ = _tail(lf, pos, p)
    # the arc length from x to x_far is G(x_far) − G(x)
    if sig >= math.exp(gf) - math.exp(g0):
        return lf, sig - (math.exp(gf) - math.exp(g0))
    # ln(G(x) + sig) without overflow or underflow (G(x) may be far below 1e-308)
    ls = math.log(sig)
    if ls > g0:
        g1 = ls + math.log1p(math.exp(g0 - ls))
    else:
        g1 = g0 + math.log1p(math.exp(ls - g0))
    if not (g1 > g0):
        return lx, 0.0          # an arc length below the resolution of G at x
    # Newton in ln x on ln G (nearly linear: ln G ≈ (p − 1) ln x − ln(1 − p))
    l1 = (g1 + math.log(1.0 - p)) / (p - 1.0)
    l1 = min(max(l1, lf), lx)
    for _ in range(50):
        g, dg = _tail(l1, pos, p)
        dl = -(g - g1) / dg
        l1 = min(max(l1 + dl, lf), lx)
        if abs(dl) <= 1e-15 * l1:
            break
    return l1, 0.0


@njit(cache=True)
def side_travel(w0, toward_zero, S, a, b, m, tol, acc):
    """Move w = |y| ≥ 0 along dw/ds = a − b w^m (away from 0) or −(a − b w^m) (towards
    0) over the arc length S [m]; returns (the new w, the arc length [m] left when w
    reached 0 first (toward_zero only), else 0)."""
    if b == 0.0:
        if not toward_zero:
            return w0 + a * S, 0.0
        if a * S >= w0:
            return 0.0, S - w0 / a
        return w0 - a * S, 0.0
    pos = b > 0.0
    p = 1.0 / m
    lam = (a / abs(b)) ** p
    # in units λ/(a m) of _darc; any arc beyond 1e300 of them ends where 1e300 does
    # (at the saturation value, or past the largest double), and inf/inf is no number
    sig = min(S * (a * m) / lam, 1e300)
    T = w0 / lam
    if T > 1.0 and m > 1.0 and pos != toward_zero:
        # falling from beyond λ (x > 1): far out (x^(p−1) below e^−8, e.g. |D| = 100
        # with μ = 150: x = 1e300) the region variable η loses x to cancellation and
        # T^m overflows; the fall to x_far = e^(8/(1−p)) takes a closed-form tail
        lx = m * math.log(T)
        if (1.0 - p) * lx > _FAR:
            lf = _FAR / (1.0 - p)
            lx, sig = _far_fall(lx, lf, sig, pos, p)
            if lx > lf:
                return lam * math.exp(p * lx), 0.0
            T = math.exp(p * lf)
    x = T ** m
    if pos and x == 1.0:
        return w0, 0.0               # at the equilibrium w* = λ (to rounding)
    # beyond the unstable point λ of a return branch (b > 0, allowed for m ≤ 1): w
    # grows away from it without bound (past every double at a finite arc length for
    # m > 1, which the constructors exclude)
    outward = toward_zero and pos and x > 1.0
    kind, v, B0, B1, B2, d1, d2 = _start(T, x, pos, p, m)
    while True:
        # the region's end in the direction of travel
        if outward:
            if kind == _AP:
                vend = _v_cut(kind, p)
            else:
                vend = -np.inf if p >= 1.0 else -1.0 / (1.0 - p)
        elif toward_zero:
            vend = 0.0 if (kind == _NP or kind == _NM) else _v_cut(kind, p)
        elif kind == _NP or kind == _NM or kind == _HP:
            vend = _v_cut(kind, p)
        elif kind == _FM:
            # η = (x^(p−1) − 1)/(p − 1) tends to 1/(1 − p) for p < 1 (a finite arc
            # length to infinity: the constructors exclude it)
            vend = np.inf if p >= 1.0 else 1.0 / (1.0 - p)
        else:
            vend = np.inf
        v, sig, T = _solve(kind, v, sig, vend, p, m, tol, acc, B0, B1, B2, d1, d2)
        if sig <= 0.0 or v != vend:
            break
        # the region's end reached with arc length left: on to the next region
        if kind == _NP or kind == _NM:
            if toward_zero:
                return 0.0, sig * lam / (a * m)
        elif (kind == _FM and not toward_zero) or (kind == _HP and outward):
            return np.inf, 0.0
        lnx = _lnx_of_v(kind, v, p, m)
        kind = _HP if outward else _next_kind(kind, toward_zero)
        v = _v_of_lnx(kind, lnx, p, m)
        B0, B1, B2, d1, d2 = _point(kind, v, p, m)
    if kind == _NP or kind == _NM:
        return lam * v, 0.0
    if T == T:
        return lam * T, 0.0
    if kind == _CP:
        return lam * (-math.expm1(-v)) ** p, 0.0
    if kind == _AP:
        return lam * (-math.expm1(-v)) ** (-p), 0.0
    return lam * math.exp(p * _lnx_of_v(kind, v, p, m)), 0.0


_THIRD = 1.0 / 3.0
_SIXTH = 1.0 / 6.0


@njit(cache=True, inline="always")
def _short_step(y, h, q0, kap, m, tol, scale):
    """y(h) by the Taylor polynomial of degree 6 of dy/ds = q0 − κ|y|^m about y ≠ 0
    (coefficients from one power by the recurrence of |y|^m), or NaN when h is not
    short: the step must stay within 25 % of |y| of its start (far from the branch
    point y = 0) and the last two terms below 0.1·tol·max(|y|, scale). Smooth, densely sampled
    inputs take it on nearly every sample; any other step the exact map."""
    sy = 1.0 if y > 0.0 else -1.0
    a0 = abs(y)
    w0 = a0 ** m
    c1 = q0 - kap * w0
    if abs(c1) * h > 0.25 * a0:
        return np.nan
    # the recurrence's divisions by 2..6 as products with constants, and by |y| as one
    # reciprocal: off the sample's dependency chain (a sixth of drive's time on a sine)
    inv = 1.0 / a0
    km = -kap * inv
    A1 = sy * c1
    w1 = m * A1 * w0 * inv
    c2 = -kap * w1 * 0.5
    A2 = sy * c2
    w2 = ((m - 1.0) * A1 * w1 + 2.0 * m * A2 * w0) * 0.5
    c3 = km * w2 * _THIRD
    A3 = sy * c3
    w3 = ((m - 2.0) * A1 * w2 * inv + (2.0 * m - 1.0) * A2 * w1 + 3.0 * m * A3 * w0) * _THIRD
    c4 = km * w3 * 0.25
    A4 = sy * c4
    w4 = ((m - 3.0) * A1 * w3 * inv + (2.0 * m - 2.0) * A2 * w2 * inv + (3.0 * m - 1.0) * A3 * w1
          + 4.0 * m * A4 * w0) * 0.25
    c5 = km * w4 * 0.2
    A5 = sy * c5
    w5 = ((m - 4.0) * A1 * w4 * inv + (2.0 * m - 3.0) * A2 * w3 * inv
          + (3.0 * m - 2.0) * A3 * w2 * inv + (4.0 * m - 1.0) * A4 * w1 + 5.0 * m * A5 * w0) * 0.2
    c6 = km * w5 * _SIXTH
    h2 = h * h
    h5 = h2 * h2 * h
    if abs(c5) * h5 + abs(c6) * h5 * h > 0.1 * tol * max(a0, scale):
        return np.nan
    return y + h * (c1 + h * (c2 + h * (c3 + h * (c4 + h * (c5 + h * c6)))))


@njit(cache=True)
def power_law_advance(y, L, q0, q1, q2, m, rtol, scale):
    """y(L) for dy/ds = g(y) = q0 − q1 sgn(y)|y|^m − q2 |y|^m, L [m] ≥ 0 the arc length.

    The segment map shared by the modified Dahl gap (q0 = c, q1 = Λ, q2 = 0, m = μ;
    Bastien et al. (2007), eqs. (3)-(4)) and the Bouc-Wen state (q0 = σA, q1 = β,
    q2 = σγ, m = n), exact to the series tolerance 1e-3·rtol (see the module
    docstring): one switch at y = 0 located at its exact arc length, the saturation
    value y* = sgn(q0)(|q0|/k)^(1/m) approached (never passed) to rounding, any L.
    ``scale`` ≥ 0: the size of the quantity whose accuracy matters (the force for
    the modified Dahl gap; 0 for Bouc-Wen, whose state is y itself): a short-segment
    Taylor step may err by 1e-4·rtol·max(|y|, scale).
    """
    if not (L > 0.0):
        return y
    if q0 == 0.0:
        if y == 0.0:
            return 0.0
        kap = q1 + q2 if y > 0.0 else q1 - q2        # d|y|/ds = −κ|y|^m
        if m == 1.0:
            return y * math.exp(-kap * L)
        r = abs(y) ** (1.0 - m) - (1.0 - m) * kap * L
        if r <= 0.0:
            return 0.0                  # m < 1: reaches 0 and stays (finite s)
        return math.copysign(r ** (1.0 / (1.0 - m)), y)
    tol = min(max(1e-3 * rtol, 1e-16), 1e-6)
    if y != 0.0:
        yn = _short_step(y, L, q0, q1 + q2 if y > 0.0 else q2 - q1, m, tol, scale)
        if yn == yn:
            return yn
    # a correction δ leaves an error of order δ² (δ³ where Halley's step is good; not
    # near y = 0 for m < 1, where the arc length is not analytic): below tol for δ ≤ acc
    acc = 0.1 * math.sqrt(tol)
    sa = 1.0 if q0 > 0.0 else -1.0
    a = abs(q0)
    ka = q1 + q2 if sa > 0.0 else q2 - q1
    kb = q2 - q1 if sa > 0.0 else q1 + q2
    # one call site with a run-time flag: a constant True/False would be a literal type,
    # and numba compiled side_travel once for each
    toward = y * sa < 0.0
    w0 = abs(y) if (toward or y * sa > 0.0) else 0.0
    while True:
        w, left = side_travel(w0, toward, L, a, sa * (kb if toward else ka), m, tol, acc)
        if not toward:
            return sa * w
        if left <= 0.0 or w != 0.0:
            return -sa * w
        # 0 reached: the rest of the segment from 0 on the other side
        toward = False
        L = left
        w0 = 0.0
