"""Truly isotropic biaxial Bouc-Wen hysteresis (Harvey & Gavin (2014), "Truly isotropic
biaxial hysteresis with arbitrary knee sharpness", Earthquake Eng. Struct. Dyn. 43),
general exponent n, with a linear elastic part:

    ż = A·u̇ − |z|^(n−2)·(β·|z·u̇| + γ·z·u̇)·z,     F = k_el·u + z

(z, u, F 2-vectors; z in force units). The nonlinear term depends on z and u̇ only
through |z|, z·u̇ and z itself, so the law commutes with every rotation of the plane
(rotation-equivariant: rotate the input path, the force path rotates with it), unlike
Park, Wen & Ang's β(|u̇1 z1| + |u̇2 z2|) (components/bouc_wen_biaxial.py), which
depends on the coordinate frame. On a planar path (z and u̇ along one direction e)
z·u̇ = z u̇, |z·u̇| = |z||u̇| and the law is the uniaxial Bouc-Wen
ż = A u̇ − β|u̇||z|^(n−1) z − γ u̇|z|^n along e (components/bouc_wen.py), exactly.

Along a straight input segment (unit direction e, arc length s) write z = r(cos φ e +
sin φ e⊥): dr/ds = cos φ·(A − (β·sgn(cos φ) + γ) r^n), dφ/ds = −A sin φ / r. Hence
|z| never leaves the circle r* = (A/(β + γ))^(1/n) once on it while z·u̇ > 0 (the yield
circle), and z turns towards the direction of motion.

Circular orbit u = R(cos ωt, sin ωt), R > r*/A (steady state: z of constant length at
a constant angle to the tangent): the component of dz/ds along z gives
|z|^n (β + γ) = A, i.e. |z| = r* exactly, and the component across z gives the lead
of z over u, arccos(r*/(A R)); so |F|² = k_el² R² + r*² + 2 k_el r*²/A, constant.

Integration. For n = 2, every segment by a closed form: with
a = z·e and b = z·e⊥, a obeys the uniaxial law a' = A − (β|a| + γa)·a (a Riccati
equation: tanh, or tan for a < 0 when γ < β, split once where a rises through 0) and
(A − (β·sgn a + γ)·a²)/b² is constant on each side of a = 0, so b follows from a (one
exponential and one square root per segment; exact to rounding; on the line of motion,
b = 0, it is the uniaxial law's exact map). For other n, a segment along which z lies
along ±e (to rounding) is the scalar law's exact segment map
(components/power_law_map.py; the closed-form exponential for n = 1), so planar paths
equal BoucWen to rounding; otherwise the Dormand-Prince integrator of components/_ode.py over the segment's arc length at rtol
(atol = rtol·max(|z|, r*)).
"""
import math

import numpy as np
from numba import njit
from numba.extending import register_jitable

from ._ode import dp45_solve
from .base import Param, check_positive
from .modified_dahl import linear_law_advance
from .power_law_map import power_law_advance
from .vector_base import VectorForceElement, check_bouc_wen_2d

# p = [A, beta, gamma, n, k_el];  x = [z1, z2]
# kernel_p() = p, r*, then _WORK doubles of the integrator's work space
_WORK = 18


# register_jitable, not njit: handed to dp45_solve as a value, a jitted function is a
# Python object whose address numba embeds (a "dynamic global": the caller could not
# be cached); a registered function is a typing-time constant with no runtime value
@register_jitable
def _bwi_rhs(s, z, args, out):
    # dz/ds along the segment's unit direction e (s its arc length)
    e0, e1, A, beta, gamma, n = args
    ze = e0 * z[0] + e1 * z[1]
    r2 = z[0] * z[0] + z[1] * z[1]
    if r2 == 0.0:
        h = 0.0   # |z|^(n−2)·|z·e|·|z| ≤ |z|^n → 0 for every n > 0
    elif n == 2.0:
        h = beta * abs(ze) + gamma * ze
    elif n == 1.0:
        h = (beta * abs(ze) + gamma * ze) / math.sqrt(r2)
    elif n == 3.0:
        h = math.sqrt(r2) * (beta * abs(ze) + gamma * ze)
    else:
        h = r2 ** (0.5 * n - 1.0) * (beta * abs(ze) + gamma * ze)
    out[0] = A * e0 - h * z[0]
    out[1] = A * e1 - h * z[1]


@njit(cache=True)
def _bwi2_riccati(a, b, s, A, c):
    # n = 2 on one side of a = 0 (c = β·sgn(a) + γ): a' = A − c·a², b'/b = −c·a, closed
    # form over the arc length s; (A − c·a²)/b² is invariant (b'·b = −c·a·b², and
    # (A − c·a²)' = −2c·a·a' = −2c·a·(A − c·a²)), so b follows a without a quadrature
    if c == 0.0:
        return a + A * s, b
    k = math.sqrt(A / abs(c))
    w = math.sqrt(A * abs(c)) * s
    if c > 0.0:
        # a = k·tanh(w + atanh(a/k)) in a form without overflow: q = 1 − e^(−2w)
        q = -math.expm1(-2.0 * w)
        den = k * (2.0 - q) + a * q
        return k * (a * (2.0 - q) + k * q) / den, 2.0 * k * b * math.sqrt(1.0 - q) / den
    # c < 0 (a < 0 with γ < β, until a = 0): a = k·tan(w + atan(a/k))
    cw, sw = math.cos(w), math.sin(w)
    den = k * cw - a * sw
    return k * (a * cw + k * sw) / den, k * b / den


@njit(cache=True)
def _bwi2_segment(a, b, L, A, beta, gamma):
    # n = 2 along a straight segment of arc length L: a = z·e, b = z·e⊥. a obeys the
    # uniaxial Bouc-Wen law n = 2 along e (h·a = (β|a| + γa)·a), b decays by the same h;
    # a < 0 rises through 0 at most once (a' = A > 0 there): split the segment there
    if a < 0.0:
        c = gamma - beta
        if c == 0.0:
            s0 = -a / A
        else:
            k = math.sqrt(A / abs(c))
            r = -a / k
            s0 = (math.atan(r) if c < 0.0 else
                  (math.atanh(r) if r < 1.0 else math.inf)) / math.sqrt(A * abs(c))
        if L <= s0:
            return _bwi2_riccati(a, b, L, A, c)
        # at a = 0 the invariant gives b² = b0²·A/(A − c·a0²)
        b = b * math.sqrt(A / (A - c * a * a))
        a = 0.0
        L = L - s0
    return _bwi2_riccati(a, b, L, A, beta + gamma)


@njit(cache=True)
def bouc_wen_isotropic_advance(x, u0, u1, dt, v, p, rtol):
    d0 = u1[0] - u0[0]
    d1 = u1[1] - u0[1]
    L = math.sqrt(d0 * d0 + d1 * d1)
    if L == 0.0:
        return
    e0 = d0 / L
    e1 = d1 / L
    A, beta, gamma, n = p[0], p[1], p[2], p[3]
    if n == 2.0:
        # the closed form (_bwi2_segment), on and off the line of motion: exact to
        # rounding, no integrator, no series
        a = x[0] * e0 + x[1] * e1
        b = x[1] * e0 - x[0] * e1
        a, b = _bwi2_segment(a, b, L, A, beta, gamma)
        x[0] = a * e0 - b * e1
        x[1] = a * e1 + b * e0
        return
    zn = math.sqrt(x[0] * x[0] + x[1] * x[1])
    if p.size >= 6 + _WORK:
        zmax = p[5]     # kernel_p: r* precomputed (a pow less per segment)
    else:
        zmax = (A / (beta + gamma)) ** (1.0 / n)
    if abs(x[0] * e1 - x[1] * e0) <= 1e-13 * max(zn, zmax):
        # z along ±e: the scalar law along e, u̇ > 0 (arc length L)
        y = x[0] * e0 + x[1] * e1
        if n == 1.0:
            y = linear_law_advance(y, L, A, beta, gamma)
        else:
            y = power_law_advance(y, L, A, beta, gamma, n, rtol, 0.0)
        x[0] = y * e0
        x[1] = y * e1
        return
    sc = rtol * max(zmax, zn)
    if p.size >= 6 + _WORK:
        # kernel_p: work space after the parameters (no allocation per segment)
        K = p[6:20].reshape((7, 2))
        yn = p[20:22]
        atol = p[22:24]
        atol[0] = sc
        atol[1] = sc
    else:
        atol = np.array([sc, sc])
        K = np.empty((7, 2))
        yn = np.empty(2)
    dp45_solve(_bwi_rhs, 0.0, L, x, (e0, e1, A, beta, gamma, n), atol, rtol, L, K, yn)


@njit(cache=True)
def bouc_wen_isotropic_force(x, u, v, p, out):
    out[0] = p[4] * u[0] + x[0]
    out[1] = p[4] * u[1] + x[1]


class BoucWenIsotropic(VectorForceElement):
    """Truly isotropic biaxial Bouc-Wen law of Harvey & Gavin (2014), any n:
    ż = A·u̇ − |z|^(n−2)(β|z·u̇| + γ z·u̇)·z, F = k_el·u + z [N or N·m].

    A [N/m] > 0, n [-] > 0, beta >= 0 and gamma with beta + gamma > 0
    [1/(m·N^(n−1))] (the bounded class: |z| tends to the yield circle
    r* = (A/(β + γ))^(1/n)), k_el [N/m] finite, z0 (2-vector) [N] with |z0| <= r*.
    Rotation-equivariant; on any planar path it is BoucWen(A, beta, gamma, n, k_el)
    along that path; rate-independent."""

    kind = "smooth"
    citation = "Harvey & Gavin (2014), truly isotropic biaxial Bouc-Wen, any n"
    param_info = (
        Param('A', 'N/m', meaning='initial stiffness of the hysteretic force z (2-vector)',
              range='in (0, inf)'),
        Param('beta', '1/(m.N^(n-1))', meaning='loop-shape coefficient β (|z·u̇| term)',
              range='in [0, inf)'),
        Param('gamma', '1/(m.N^(n-1))', meaning='loop-shape coefficient γ (z·u̇ term)',
              range='> -beta (in (-beta, inf)): the bounded class'),
        Param('n', '-', meaning='knee sharpness exponent', range='in (0, inf)'),
        Param('k_el', 'N/m', meaning='parallel linear stiffness (F = k_el·u + z)',
              range='any real'),
        Param('z0', 'N', meaning='initial hysteretic force z (2-vector)',
              range='|z0| <= (A/(beta + gamma))^(1/n)'),
    )
    advance = staticmethod(bouc_wen_isotropic_advance)
    force = staticmethod(bouc_wen_isotropic_force)

    def __init__(self, *, A, beta, gamma, n, k_el=0.0, z0=(0.0, 0.0)):
        n = check_positive("n", n)
        A, beta, gamma, k_el, z = check_bouc_wen_2d(A, beta, gamma, k_el, z0, n=n, slack=1e-12)
        self._setup(dict(A=A, beta=beta, gamma=gamma, n=n, k_el=k_el, z0=tuple(z)),
                    [A, beta, gamma, n, k_el], z)

    def kernel_p(self, work: int = 0) -> np.ndarray:
        """p followed by r* and the Dormand-Prince work space (stages, trial state,
        atol): the same results as p, without an allocation or a pow per segment; a
        fresh vector per call, for one loop at a time (components/base.py, kernel_p)."""
        return np.concatenate([self.p, [self.z_max()], np.zeros(_WORK)])

    def z_max(self) -> float:
        """r* = (A/(β + γ))^(1/n) [N]: the radius of the yield circle."""
        p = self.params
        return (p["A"] / (p["beta"] + p["gamma"])) ** (1.0 / p["n"])
