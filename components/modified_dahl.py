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
finite speed c. The arc length is a closed-form integral of D (an incomplete beta
function), and ``power_law_map.power_law_advance`` solves it for D at the segment's
length (series and a safeguarded Newton iteration, one to three series per sample
whatever the input's roughness): D = 0 is crossed at its exact arc length, D* is
approached (never passed) to rounding, however long the segment. μ = 1 (and c = 0)
have closed forms and use them. A large μ (tested to 400) is exact too: a gap far beyond
D* (|D|^μ past the largest double, e.g. |D| = 100 at μ = 150) falls back to it through
the closed-form tail of the arc-length integral.
"""
import math

import numpy as np
from numba import njit

from .base import ForceElement, Param, check_finite, check_positive
from .power_law_map import power_law_advance
from .power_law_table import memo_key, table_advance, table_kernel_p

# p = [Lambda, mu, a, b, d, e]

@njit(cache=True)
def spow(y, m):
    """sgn(y)·|y|^m (finite at y = 0 for every m > 0)."""
    if y > 0.0:
        return y ** m
    if y < 0.0:
        return -((-y) ** m)
    return 0.0


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


@njit(cache=True)
def gap_advance(D, c, lam, mu, L, rtol, scale):
    """D(L) for dD/ds = c − Λ sgn(D)|D|^μ (the distance to the active envelope):
    the exponential for μ = 1, else the exact map of power_law_map (which has the
    separable case c = 0 in closed form too)."""
    if mu == 1.0 and c != 0.0:
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
    if v > 0.0:
        D0, c = a * u0 + b - x[0], a * r
    else:
        D0, c = d * u0 + e - x[0], d * r
    if p.size > 6 and mu != 1.0 and c != 0.0:
        # kernel_p: the arc-length tables of μ after the parameters; (F, u0) is the key
        # of the memo of the gap's arc-length coordinate. r is ±1 up to the rounding of
        # |v|·dt when v is the segment's slope: snapped, c is the same number on every
        # sample (the tables' cached scales and the memo are keyed by it)
        if abs(abs(r) - 1.0) <= 1e-15:
            c = a if v > 0.0 else -d
        D = table_advance(D0, L, c, lam, 0.0, mu, rtol, p, 6, x[0], u0)
        if D == D:
            x[0] = (a * u1 + b - D) if v > 0.0 else (d * u1 + e - D)
            memo_key(p, 6, x[0], u1)
            return
    # the accuracy that matters is that of F (the gap is F's distance to an envelope)
    D = gap_advance(D0, c, lam, mu, L, rtol, max(abs(x[0]), abs(b), abs(e), 1.0))
    if v > 0.0:
        x[0] = a * u1 + b - D
    else:
        x[0] = d * u1 + e - D


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
def modified_dahl_pjac(x, u, v, p, Jp):
    """∂(Ḟ, F)/∂p for p = [Λ, μ, a, b, d, e] of eqs. (3)-(4) (rows Ḟ, F), the parameter
    Jacobian of the forward sensitivity equations (identify/assembly.py). With D the
    gap to the active envelope (h_u − F for u̇ ≥ 0, h_l − F otherwise) and
    σ = sgn u̇ (+1 at u̇ = 0): Ḟ = σΛu̇ sgn(D)|D|^μ, so ∂Ḟ/∂Λ = Ḟ/Λ,
    ∂Ḟ/∂μ = Ḟ·ln|D|, and through D = (a or d)·u + (b or e) − F:
    ∂Ḟ/∂(a or d) = σΛu̇ μ|D|^(μ−1)·u, ∂Ḟ/∂(b or e) = σΛu̇ μ|D|^(μ−1); the other
    envelope's columns are 0. On the envelope (D = 0) the derivatives are those of the
    law's limit from either side: 0 for ∂/∂μ and, for μ < 1 where μ|D|^(μ−1) is
    infinite, 0 (D = 0 is crossed at a single instant, of measure zero in time)."""
    lam, mu = p[0], p[1]
    for j in range(6):
        Jp[0, j] = 0.0
        Jp[1, j] = 0.0
    if v >= 0.0:
        D = p[2] * u + p[3] - x[0]
        sv, k = v, 2
    else:
        D = p[4] * u + p[5] - x[0]
        sv, k = -v, 4
    if D == 0.0:
        dn = 1.0 if mu == 1.0 else 0.0
        lz = 0.0
    else:
        dn = mu * abs(D) ** (mu - 1.0)
        lz = math.log(abs(D))
    Fd = lam * sv * spow(D, mu)
    Jp[0, 0] = sv * spow(D, mu)
    Jp[0, 1] = Fd * lz
    Jp[0, k] = lam * sv * dn * u
    Jp[0, k + 1] = lam * sv * dn


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
    param_info = (
        Param('Lambda', 'N^(1-mu)/m', meaning='transient rate Λ between the envelopes',
              range='in (0, inf)'),
        Param('mu', '1', meaning='loop-shape exponent μ (μ = 1: Duhem model with A = Λ)',
              range='in (0, inf)'),
        Param('a', 'N/m', meaning='slope of the upper envelope h_u = a·u + b',
              range='in [0, inf)'),
        Param('b', 'N', meaning='offset of the upper envelope h_u = a·u + b',
              range='any real'),
        Param('d', 'N/m', meaning='slope of the lower envelope h_l = d·u + e',
              range='in [0, inf)'),
        Param('e', 'N', meaning='offset of the lower envelope h_l = d·u + e',
              range='<= b (in (-inf, b])'),
        Param('F0', 'N', meaning='initial force',
              range='any real'),
    )
    state_names = ("F",)
    citation = "Bastien, Michon, Manin & Dufour (2007), eqs. (3)-(4)"

    advance = staticmethod(modified_dahl_advance)
    force = staticmethod(modified_dahl_force)
    rate = staticmethod(modified_dahl_rate)
    jac = staticmethod(modified_dahl_jac)
    pjac = staticmethod(modified_dahl_pjac)
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

    def kernel_p(self, work: int = 0) -> np.ndarray:
        """p followed by the arc-length tables of μ (power_law_table.py) for μ ≠ 1
        when they exist or ``work`` segments pay for building them."""
        lam, mu, a, b, d, e = self.p
        if mu == 1.0:
            return self.p
        pairs = [(s, lam) for s in (a, d) if s > 0.0]
        return table_kernel_p(self.p, mu, work, pairs)

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
