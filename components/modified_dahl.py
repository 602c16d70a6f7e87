"""Modified Dahl model (Al Majid) with linear envelopes.

    Ḟ =  Λ u̇ sgn(h_u(u) − F) |h_u(u) − F|^μ     if u̇ ≥ 0
    Ḟ = −Λ u̇ sgn(h_l(u) − F) |h_l(u) − F|^μ     if u̇ ≤ 0
    h_u(u) = a u + b,   h_l(u) = d u + e

Bastien, Michon, Manin & Dufour (2007), J. Sound Vib. 302, eqs. (3)-(4).

Integration. On one input segment the velocity v is constant, so with the arc length
s = |v|·t the distance to the active envelope, D = h(u) − F, obeys the AUTONOMOUS
scalar ODE

    dD/ds = c − Λ sgn(D) |D|^μ,   c = a (v > 0) or −d (v < 0)

(c is scaled by the ratio of the segment's slope to v when a measured v is given).
Its right-hand side decreases strictly in D, so D tends monotonically to the single
equilibrium D* = sgn(c)(|c|/Λ)^(1/μ) and never crosses it; D = 0 (the envelope
itself, where the right-hand side is not Lipschitz for μ < 1) is crossed with the
finite speed c. ``power_law_advance`` crosses D = 0 exactly through the inverse
function s(D) (a convergent series), integrates elsewhere with high-order Taylor
steps in s (about one per input sample) and, where a step would overshoot D*, stops
at D* (the true
solution cannot pass it): the integration neither stalls at the envelope nor
crosses the curve h(u) − D*. μ = 1 (and c = 0) have closed forms and use them.
"""
import math

import numpy as np
from numba import njit

from .base import ForceElement, Param, check_finite, check_positive

# p = [Lambda, mu, a, b, d, e]

@njit(cache=True)
def spow(y, m):
    """sgn(y)·|y|^m (finite at y = 0 for every m > 0)."""
    if y > 0.0:
        return y ** m
    if y < 0.0:
        return -((-y) ** m)
    return 0.0


@njit(cache=True)
def power_rhs(y, q0, q1, q2, m):
    """g(y) = q0 − q1·sgn(y)|y|^m − q2·|y|^m."""
    return q0 - q1 * spow(y, m) - q2 * abs(y) ** m


@njit(cache=True)
def _side_k(y, q1, q2):
    # on the side sgn(y) of zero, g(y) = q0 − k·|y|^m
    return q1 + q2 if y > 0.0 else q2 - q1


@njit(cache=True)
def _series_s(Z, q0, k, m):
    # s(Z) = ∫_0^Z dz / (q0 − k|z|^m) as the geometric series
    # (sgn Z / q0) Σ_j (k/q0)^j |Z|^(jm+1) / (jm+1), used where |k|·|Z|^m ≤ |q0|/2
    az = abs(Z)
    r = k * az ** m / q0
    tot = 0.0
    term = 1.0
    for j in range(200):
        c = term / (j * m + 1.0)
        tot += c
        if abs(c) < 1e-17 * abs(tot):
            break
        term *= r
    return math.copysign(az, Z) * tot / q0


@njit(cache=True)
def _series_inv(target, side, q0, k, m, zmax):
    # Z on the given side (±1) with s(Z) = target; s' = 1/g is within a factor 3 of 1/q0
    Z = min(max(q0 * target * side, 0.0), zmax) * side
    for _ in range(60):
        g = q0 - k * abs(Z) ** m
        dZ = (_series_s(Z, q0, k, m) - target) * g
        Zn = Z - dZ
        if Zn * side < 0.0:
            Zn = 0.5 * Z
        elif abs(Zn) > zmax:
            Zn = side * zmax
        if abs(Zn - Z) <= 1e-16 * max(abs(Zn), 1e-300):
            return Zn
        Z = Zn
    return Z


@njit(cache=True, inline="always")
def _phi(k, s):
    # (1 − e^(−k s))/k, = s for k = 0: how far dy/ds = q0 − k y moves y per unit g(y).
    # For |x| = |k s| ≤ 1/16 (a sampled input: |κ Δu| of the order of 1e-3) the series
    # Σ_j (−x)^j/(j + 1)!, j ≤ 9, whose first omitted term is below 3e-20 relative: as
    # accurate as expm1 (a few ulp of Horner rounding), several times cheaper, and no
    # division (coefficients 1/(j + 1)! written out so that they are constants)
    x = k * s
    if abs(x) <= 0.0625:
        return s * (1.0 + x * (-0.5 + x * (0.16666666666666666 + x * (
            -0.041666666666666664 + x * (0.008333333333333333 + x * (
                -0.001388888888888889 + x * (0.0001984126984126984 + x * (
                    -2.48015873015873e-05 + x * (2.7557319223985893e-06 + x * (
                        -2.755731922398589e-07))))))))))
    return -math.expm1(-x) / k


@njit(cache=True, inline="always")
def linear_law_advance(y, L, q0, q1, q2):
    """y(L) for dy/ds = q0 − q1·y − q2·|y| (power_law_advance with m = 1), exactly.

    On each side of 0, g(y) = q0 − κ y is linear (κ = q1 + q2 for y > 0, q1 − q2 for
    y < 0; the side of y = 0 is that of q0), so y(s) = y + g(y)(1 − e^(−κs))/κ. The
    solution crosses 0 at most once (g(0) = q0 keeps its sign): when g(y) points to 0
    the arc length to reach it is s0 = −ln(1 − κ r)/κ, r = −y/g(y), and the rest of
    the segment is the same map from 0 on the other side (same idea as Dahl's).
    Every κ is allowed (κ < 0: exponential growth, e.g. hardening Bouc-Wen).
    """
    # (L = 0 needs no test: f = 0 below and y comes back unchanged; an early return here
    # costs a fifth of drive's rate.)
    # One branch per side, each with its own expm1 written differently: the side is
    # that of the last sample nearly always, so the branch is predicted and the CPU
    # starts the next sample's expm1 before y is known; a κ selected by the side of y
    # (or one expm1 call on a selected argument, which the compiler makes of two
    # identical ones) puts the expm1 on the sample-to-sample chain, and computing both
    # sides costs more (drive(BoucWen n = 1): 55 -> 75 M samples/s against both).
    # y + g(y)·φ is written y·(1 − κφ) + q0·φ (one multiply-add on the chain).
    # κ = 0 (β = ±γ) is replaced by 1e-200: φ and s0 below are then L and r to rounding.
    kp = q1 + q2
    km = q1 - q2
    kp = kp if kp != 0.0 else 1e-200
    km = km if km != 0.0 else 1e-200
    if y > 0.0 or (y == 0.0 and q0 > 0.0):
        k = kp
        f = -math.expm1(-kp * L) / kp
        yn = y * (1.0 - kp * f) + q0 * f
        if yn > 0.0 or y == 0.0:
            return yn
    else:
        k = km
        f = math.expm1(-km * L) / (-km)
        yn = y * (1.0 - km * f) + q0 * f
        if yn <= 0.0 or y == 0.0:
            return yn
    g = q0 - k * y
    # y moved towards 0 and the map of its side passes it: 0 is reached at the arc length
    # s0 = −ln(1 − κ r)/κ, r = −y/g (1 − κ r = q0/g > 0 here); the rest of the segment
    # is the map from 0 on the side of q0
    r = -y / g
    s0 = r if k == 0.0 else -math.log1p(-k * r) / k
    if s0 >= L:
        return yn
    return q0 * _phi(kp if q0 > 0.0 else km, L - s0)


_TAYLOR_K = 16  # highest Taylor coefficient of a power-law step


@njit(cache=True)
def _taylor_coeffs(y, q0, kap, m, h, tol, c):
    """Taylor coefficients c[k] of y(s) about s = 0 for dy/ds = q0 − κ|y|^m on the side
    sgn(y) ≠ 0, up to the first k with |c[k]|·h^k and |c[k−1]|·h^(k−1) ≤ tol (or
    _TAYLOR_K). Returns (k, |c[k]|·h^k). One pow: w = |y|^m is expanded by the
    recurrence k a_0 w_k = Σ_{j=1..k} (m j − (k − j)) a_j w_{k−j} (a = |y|), and
    (k+1) y_{k+1} = δ_k0 q0 − κ w_k."""
    sy = 1.0 if y > 0.0 else -1.0
    a0 = abs(y)
    inv = 1.0 / a0
    w = c[_TAYLOR_K + 1:]
    c[0] = y
    w[0] = a0 ** m
    c[1] = q0 - kap * w[0]
    hk = h
    prev = abs(c[1]) * hk
    term = prev
    for k in range(1, _TAYLOR_K):
        acc = 0.0
        for j in range(1, k + 1):
            acc += (m * j - (k - j)) * (sy * c[j]) * w[k - j]
        w[k] = acc * inv / k
        c[k + 1] = -kap * w[k] / (k + 1)
        hk *= h
        term = abs(c[k + 1]) * hk
        if term <= tol and prev <= tol:
            return k + 1, term
        prev = term
    return _TAYLOR_K, term


@njit(cache=True)
def power_law_advance(y, L, q0, q1, q2, m, rtol, scale):
    """y(L) for the scalar autonomous ODE dy/ds = g(y) = q0 − q1 sgn(y)|y|^m − q2 |y|^m.

    The form shared by the modified Dahl gap (q0 = c, q1 = Λ, q2 = 0, m = μ) and the
    Bouc-Wen state (q0 = σA, q1 = β, q2 = σγ, m = n). A segment map far cheaper
    than adaptive Runge-Kutta: m = 1 in closed form (linear_law_advance); q0 = 0 in
    closed form (|y|^(1−m) changes linearly in s); otherwise Taylor steps in s of
    order up to 16 whose coefficients come from one power |y|^m by a recurrence
    (usually one step per input sample), the error of a step (its last terms) below
    0.01·rtol·max(|y|, scale). Around y = 0, where g is not Lipschitz for m < 1 and
    not smooth for any m, the zone |κ||y|^m ≤ 1e-3|q0| is crossed exactly through
    the inverse function s(y) = ∫dy/g(y) (a fast geometric series) and Newton's
    method: the switch is located exactly, at most once per segment (g(0) = q0 keeps
    its sign). Where g vanishes at y* ahead, y moves monotonically to it and never
    passes it: a step that would overshoot ends AT y*, and y is set to y* once
    |y − y*| ≤ 1e-3·rtol·scale.
    """
    if L <= 0.0:
        return y
    if m == 1.0:
        return linear_law_advance(y, L, q0, q1, q2)
    if q0 == 0.0:
        if y == 0.0:
            return 0.0
        kap = _side_k(y, q1, q2)        # dy/ds = −κ sgn(y)|y|^m on this side
        r = abs(y) ** (1.0 - m) - (1.0 - m) * kap * L
        if r <= 0.0:
            return 0.0                  # m < 1: reaches 0 and stays (finite s)
        return math.copysign(r ** (1.0 / (1.0 - m)), y)
    sa = 1.0 if q0 > 0.0 else -1.0      # side ahead of zero
    ka = _side_k(sa, q1, q2)
    kb = _side_k(-sa, q1, q2)
    ystar = sa * (q0 / ka) ** (1.0 / m) if q0 / ka > 0.0 else np.nan
    kmax = max(abs(ka), abs(kb))
    eps = (1e-3 * abs(q0) / kmax) ** (1.0 / m) if kmax > 0.0 else np.inf
    if eps == np.inf:
        return y + q0 * L               # g ≡ q0
    snap = 1e-3 * rtol * scale
    c = np.empty(2 * (_TAYLOR_K + 1))
    s = 0.0
    while s < L:
        rem = L - s
        if ystar == ystar and abs(y - ystar) <= snap:
            return ystar
        if abs(y) < eps:
            if y * sa < 0.0:
                # behind zero, in the zone: the exact arc length to reach it
                sy = _series_s(y, q0, kb, m)     # < 0 (s(0) = 0)
                if -sy >= rem:
                    return _series_inv(sy + rem, -sa, q0, kb, m, eps)
                s += -sy
                y = 0.0
                rem = L - s
            # at or ahead of zero, in the zone: exact up to the zone's edge
            s_y = _series_s(y, q0, ka, m)
            target = s_y + rem
            se = _series_s(sa * eps, q0, ka, m)
            if se >= target:
                return _series_inv(target, sa, q0, ka, m, eps)
            s += se - s_y
            y = sa * eps
            continue
        kap = _side_k(y, q1, q2)
        # no step meets a tolerance below round-off: floor it at 1e-15 (relative)
        tol = max(0.01 * rtol, 1e-15) * max(abs(y), scale)
        h = rem
        for _ in range(60):
            kk, err = _taylor_coeffs(y, q0, kap, m, h, tol, c)
            yn = c[kk]
            for j in range(kk - 1, -1, -1):
                yn = yn * h + c[j]
            if err <= tol and yn * y > 0.0:
                break
            # too long for the series (or it would jump over 0): shorten
            if err > tol:
                h *= 0.8 * (tol / err) ** (1.0 / kk)
            else:
                h *= 0.5
        if ystar == ystar and y * sa > 0.0 and (yn - ystar) * (ystar - y) >= 0.0:
            return ystar  # overshoot: the exact solution stops short of y*
        s += h
        y = yn
    return y


@njit(cache=True)
def gap_advance(D, c, lam, mu, L, rtol, scale):
    """D(L) for dD/ds = c − Λ sgn(D)|D|^μ (the distance to the active envelope)."""
    if c == 0.0:
        # separable: |D|^(1−μ) changes linearly in s (finite-time arrival if μ < 1)
        if D == 0.0:
            return 0.0
        if mu == 1.0:
            return D * math.exp(-lam * L)
        r = abs(D) ** (1.0 - mu) - (1.0 - mu) * lam * L
        if r <= 0.0:
            return 0.0
        return math.copysign(r ** (1.0 / (1.0 - mu)), D)
    if mu == 1.0:
        Ds = c / lam
        return Ds + (D - Ds) * math.exp(-lam * L)
    return power_law_advance(D, L, c, lam, 0.0, mu, rtol, scale)


@njit(cache=True)
def modified_dahl_advance(x, u0, u1, dt, v, p, rtol):
    lam, mu, a, b, d, e = p[0], p[1], p[2], p[3], p[4], p[5]
    if v == 0.0:
        return  # Ḟ = 0 on both branches
    L = abs(v) * dt
    r = (u1 - u0) / L  # = sgn(v) when v is the segment slope
    scale = max(abs(x[0]), abs(b), abs(e), 1.0)
    if v > 0.0:
        D = gap_advance(a * u0 + b - x[0], a * r, lam, mu, L, rtol, scale)
        x[0] = a * u1 + b - D
    else:
        E = gap_advance(d * u0 + e - x[0], d * r, lam, mu, L, rtol, scale)
        x[0] = d * u1 + e - E


@njit(cache=True)
def modified_dahl_rate(x, u, v, p, out):
    if v >= 0.0:
        out[0] = p[0] * v * spow(p[2] * u + p[3] - x[0], p[1])
    else:
        out[0] = -p[0] * v * spow(p[4] * u + p[5] - x[0], p[1])


@njit(cache=True)
def modified_dahl_force(x, u, v, p):
    return x[0]


@njit(cache=True)
def _dpow(D, lam, mu, c, h):
    # d/dD of |D|^μ = μ|D|^(μ−1). For μ < 1 it is infinite on the envelope D = 0, so
    # |D| is floored at max(|D*|, 1e-6·max(|h|, 1 N)), D* = (|c|/Λ)^(1/μ) being the
    # distance at which the branch settles: implicit solvers then see the stiffness
    # of the settled branch instead of an infinite entry. The exact solution crosses
    # D = 0 with the finite speed c, so the floor only slows Newton's convergence
    # during that crossing and never changes the converged solution.
    if mu >= 1.0:
        return mu * abs(D) ** (mu - 1.0)
    floor = max((abs(c) / lam) ** (1.0 / mu), 1e-6 * max(abs(h), 1.0))
    return mu * max(abs(D), floor) ** (mu - 1.0)


@njit(cache=True)
def modified_dahl_jac(x, u, v, p, J):
    lam, mu, a, b, d, e = p[0], p[1], p[2], p[3], p[4], p[5]
    if v >= 0.0:
        h = a * u + b
        g = _dpow(h - x[0], lam, mu, a, h)
        J[0, 0] = -lam * v * g
        J[0, 1] = lam * v * g * a
        J[0, 2] = lam * spow(h - x[0], mu)
    else:
        h = d * u + e
        g = _dpow(h - x[0], lam, mu, d, h)
        J[0, 0] = lam * v * g
        J[0, 1] = -lam * v * g * d
        J[0, 2] = -lam * spow(h - x[0], mu)
    J[1, 0] = 1.0
    J[1, 1] = 0.0
    J[1, 2] = 0.0


@njit(cache=True)
def modified_dahl_slope(x, u, v, p):
    """dF/du on the branch of direction sgn(v) (upper branch for v = 0)."""
    if v >= 0.0:
        return p[0] * spow(p[2] * u + p[3] - x[0], p[1])
    return -p[0] * spow(p[4] * u + p[5] - x[0], p[1])


class ModifiedDahl(ForceElement):
    """Modified Dahl model, Bastien et al. (2007), eqs. (3)-(4).

    Lambda [N^(1−μ)/m] > 0 transient rate between the envelopes, mu [-] > 0 loop-shape
    exponent (μ = 1: Duhem model with A = Λ; μ < 1 allowed, e.g. the paper's 0.37),
    a [N/m] ≥ 0, b [N] upper envelope h_u = a·u + b, d [N/m] ≥ 0, e [N] ≤ b lower
    envelope h_l = d·u + e (non-falling envelopes, ordered at u = 0), F0 [N] initial
    force. State: the force F [N].
    Paper values (eqs. (33)-(35)): a = 7.146e4, b = 9.596e2, d = 5.322e4, e = 3.972e2,
    Lambda = 117355, mu = 0.37, F0 = 1.009e3 at t0 = 0.1988 s.
    """

    kind = "smooth"
    p_layout = ('Lambda', 'mu', 'a', 'b', 'd', 'e')
    param_info = (Param("Lambda", "N^(1-mu)/m", "> 0"), Param("mu", "1", "> 0"),
                  Param("a", "N/m", "upper envelope slope, >= 0"),
                  Param("b", "N", "upper envelope offset"),
                  Param("d", "N/m", "lower envelope slope, >= 0"),
                  Param("e", "N", "lower envelope offset, <= b"),
                  Param("F0", "N", "initial force"))
    state_names = ("F",)
    citation = "Bastien, Michon, Manin & Dufour (2007), eqs. (3)-(4)"

    advance = staticmethod(modified_dahl_advance)
    force = staticmethod(modified_dahl_force)
    rate = staticmethod(modified_dahl_rate)
    jac = staticmethod(modified_dahl_jac)
    slope = staticmethod(modified_dahl_slope)

    def __init__(self, *, Lambda, mu, a, b, d, e, F0=0.0):
        Lambda = check_positive("Lambda", Lambda)
        mu = check_positive("mu", mu)
        a, b = check_finite("a", a), check_finite("b", b)
        d, e = check_finite("d", d), check_finite("e", e)
        F0 = check_finite("F0", F0)
        # h_u and h_l are the upper and lower asymptotes of the loop (Bastien et al.
        # (2007), §2.1.3): a falling envelope would put the settled branch on the far
        # side of it (D* = sgn(a)(|a|/Λ)^(1/μ) < 0), and swapped envelopes are no loop
        if a < 0.0:
            raise ValueError(f"a must be in [0, inf) (got {a!r}): the upper envelope "
                             "h_u = a·u + b must not fall")
        if d < 0.0:
            raise ValueError(f"d must be in [0, inf) (got {d!r}): the lower envelope "
                             "h_l = d·u + e must not fall")
        if e > b:
            raise ValueError(f"e must be in (-inf, b] = (-inf, {b:g}] (got {e!r}): the "
                             "lower envelope must not lie above the upper one at u = 0")
        self._setup(dict(Lambda=Lambda, mu=mu, a=a, b=b, d=d, e=e, F0=F0),
                    [Lambda, mu, a, b, d, e], [F0])
        self.x_scale = np.array([max(abs(b), abs(e), abs(F0), 1.0)])

    def h_u(self, u):
        """Upper envelope h_u(u) = a·u + b [N], Bastien et al. (2007), eq. (4)."""
        return self.params["a"] * np.asarray(u) + self.params["b"]

    def h_l(self, u):
        """Lower envelope h_l(u) = d·u + e [N], Bastien et al. (2007), eq. (4)."""
        return self.params["d"] * np.asarray(u) + self.params["e"]

    def settled_gap(self):
        """(D*_u, D*_l) [N]: the distances h_u − F and F − h_l at which a long monotone
        branch settles, (|a|/Λ)^(1/μ)·sgn(a) and (|d|/Λ)^(1/μ)·sgn(d)."""
        p = self.params
        return (math.copysign((abs(p["a"]) / p["Lambda"]) ** (1 / p["mu"]), p["a"]),
                math.copysign((abs(p["d"]) / p["Lambda"]) ** (1 / p["mu"]), p["d"]))
