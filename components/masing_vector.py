"""Vector Masing (elastoplastic, kinematic) law with a circular yield surface: the
isotropic two-input form of the Masing model of Bastien, Michon, Manin & Dufour
(2007), eqs. (6)-(11):

    ẇ + N_D(w) ∋ u̇,   D = {|w| ≤ η},  η = α/k,    F = k·w + k0·u + c·u̇

(w, u, F 2-vectors; N_D the normal cone of the disk: the sweeping process of Moreau).
Inside the disk w follows u; on its boundary w slides along the circle and the force
k·w has magnitude α (the yield circle) and follows the direction of the input
increment. Along a straight input segment u0 -> u1 (direction e, length L) the
solution is closed-form: the straight stick path until |w| = η, then on the circle
the angle φ between e and w obeys dφ/ds = −sin(φ)/η, i.e.
tan(φ/2) = tan(φ0/2)·exp(−s/η). On a uniaxial path (u and w along e) it is the scalar
stop operator clip(w + Δu, −η, η) exactly, so MasingVector reduces to Masing (F0 = 0).

Circular orbit u = R(cos ωt, sin ωt), R > η: the steady state has |w| = η, w leading
u by the angle arccos(η/R) (|F − k0·u − c·u̇| = α).
"""
import math

import numpy as np
from numba import njit

from .base import Param, check_finite, check_nonnegative, check_positive
from .vector_base import VectorForceElement

# p = [k, k0, eta, c];  x = [w1, w2]


@njit(cache=True)
def masing_vector_advance(x, u0, u1, dt, v, p, rtol):
    eta = p[2]
    d0 = u1[0] - u0[0]
    d1 = u1[1] - u0[1]
    w0 = x[0]
    w1 = x[1]
    a0 = w0 + d0
    a1 = w1 + d1
    if a0 * a0 + a1 * a1 <= eta * eta:
        x[0] = a0
        x[1] = a1
        return
    dd = d0 * d0 + d1 * d1
    if dd == 0.0:
        # no motion (w on the circle up to rounding): nothing to do
        return
    # the last exit from the disk along w + s·d, s in [0, 1]
    wd = w0 * d0 + w1 * d1
    c = w0 * w0 + w1 * w1 - eta * eta
    disc = wd * wd - dd * c
    s = (-wd + math.sqrt(disc if disc > 0.0 else 0.0)) / dd
    if s < 0.0:
        s = 0.0
    b0 = w0 + s * d0
    b1 = w1 + s * d1
    r = math.sqrt(b0 * b0 + b1 * b1)
    b0 = eta * b0 / r
    b1 = eta * b1 / r
    # on the circle: tan(φ/2) = tan(φ0/2)·exp(−L/η), φ the angle from w to e, written
    # with cos φ0 = ŵ·e and sin φ0 = ŵ × e (no angle computed: one exp per segment)
    ld = math.sqrt(dd)
    L = (1.0 - s) * ld
    e0 = d0 / ld
    e1 = d1 / ld
    c0 = (b0 * e0 + b1 * e1) / eta
    s0 = (b0 * e1 - b1 * e0) / eta
    if s0 == 0.0:
        # w along ±e: the uniaxial case, the stop operator exactly
        x[0] = b0
        x[1] = b1
        return
    # tan(φ0/2) by whichever half-angle formula is well conditioned
    t = s0 / (1.0 + c0) if c0 >= 0.0 else (1.0 - c0) / s0
    t *= math.exp(-L / eta)
    if abs(t) <= 1.0:
        q = 1.0 + t * t
        cp = (1.0 - t * t) / q
        sp = 2.0 * t / q
    else:
        r = 1.0 / t
        q = r * r + 1.0
        cp = (r * r - 1.0) / q
        sp = 2.0 * r / q
    # w = η·(e rotated by −φ)
    x[0] = eta * (e0 * cp + e1 * sp)
    x[1] = eta * (e1 * cp - e0 * sp)


@njit(cache=True)
def masing_vector_force(x, u, v, p, out):
    out[0] = p[0] * x[0] + p[1] * u[0] + p[3] * v[0]
    out[1] = p[0] * x[1] + p[1] * u[1] + p[3] * v[1]


class MasingVector(VectorForceElement):
    """Vector Masing law with a circular yield surface (isotropic elastoplastic with
    kinematic hardening k0), Bastien et al. (2007), eqs. (6)-(11) in two dimensions.

    F = k·w + k0·u + c·u̇ [N or N·m], ẇ + N_D(w) ∋ u̇, D the disk |w| ≤ η = alpha/k.
    k [N/m] > 0 series stiffness, k0 [N/m] >= 0 parallel stiffness, alpha [N] > 0
    yield force (radius of the yield circle of k·w), c [N·s/m] >= 0 viscous damping,
    w0 (2-vector) initial deflection, |w0| <= η.
    """

    kind = "inclusion"
    state_names = ("w1", "w2")
    param_info = (
        Param('k', 'N/m', meaning='series stiffness (isotropic)',
              range='in (0, inf)'),
        Param('k0', 'N/m', meaning='parallel stiffness (kinematic hardening)',
              range='in [0, inf)'),
        Param('alpha', 'N', meaning='yield force: radius of the yield circle of k·w',
              range='in (0, inf)'),
        Param('c', 'N.s/m', meaning='viscous damping',
              range='in [0, inf)'),
        Param('w0', 'm', meaning='initial deflection w (2-vector)',
              range='|w0| <= alpha/k'),
    )
    citation = "Bastien et al. (2007), eqs. (6)-(11), circular yield surface"
    advance = staticmethod(masing_vector_advance)
    force = staticmethod(masing_vector_force)

    def __init__(self, *, k, k0=0.0, alpha, c=0.0, w0=(0.0, 0.0)):
        k = check_positive("k", k)
        k0 = check_nonnegative("k0", k0)
        alpha = check_positive("alpha", alpha)
        c = check_nonnegative("c", c)
        w = np.asarray(w0, dtype=float).ravel()
        if w.size != 2 or not np.all(np.isfinite(w)):
            raise ValueError(f"w0 must be a finite 2-vector (got {w0!r})")
        eta = alpha / k
        if np.hypot(*w) > eta * (1.0 + 1e-12):
            raise ValueError(f"w0 must lie in the disk |w0| <= alpha/k = {eta:g} "
                             f"(got |w0| = {np.hypot(*w):g})")
        self._setup(dict(k=k, k0=k0, alpha=alpha, c=c, w0=tuple(w)), [k, k0, eta, c], w)
