"""Biaxial Bouc-Wen hysteresis of Park, Wen & Ang (1986) (Earthquake Eng. Struct.
Dyn. 14, 543-557), exponent n = 2, with a linear elastic part:

    ż = A·u̇ − H(z, u̇)·u̇,
    H = [[z1²(γ + β·sgn(u̇1 z1)),  z1 z2 (γ + β·sgn(u̇2 z2))],
         [z1 z2 (γ + β·sgn(u̇1 z1)), z2²(γ + β·sgn(u̇2 z2))]],
    F = k_el·u + z            (z, u, F 2-vectors; z in force units)

i.e. ż = A·u̇ − z·(β(|u̇1 z1| + |u̇2 z2|) + γ u̇·z). Its ultimate (yield) surface is the
circle |z| = sqrt(A/(β + γ)), but the law is NOT isotropic: β(|u̇1 z1| + |u̇2 z2|)
depends on the coordinate frame (Harvey & Gavin (2014), Earthquake Eng. Struct. Dyn.
43): an L-shaped path and the same path rotated by 45° give |F| histories about 0.1 of
max|F| apart, and on a circular orbit |z| ripples by a few per cent. The truly
isotropic law (any n) is components/bouc_wen_isotropic.py, BoucWenIsotropic; this one
is kept under its own name for models calibrated with Park-Wen-Ang's form. On a proportional path (z and u̇ along one direction e,
any e) it is the scalar BoucWen with n = 2 along e, exactly: the advance then calls
the scalar law's segment map, so the biaxial law equals BoucWen(n = 2) on any planar
path through the origin to rounding; otherwise the Dormand-Prince integrator of
components/_ode.py over the segment's arc length at rtol.
"""
import math

import numpy as np
from numba import njit
from numba.extending import register_jitable

from ._ode import dp45_solve
from .base import Param
from .bouc_wen import bouc_wen_advance
from .vector_base import VectorForceElement, check_bouc_wen_2d

# p = [A, beta, gamma, k_el];  x = [z1, z2]


# register_jitable, not njit: handed to dp45_solve as a value, a jitted function is a
# Python object whose address numba embeds (a "dynamic global": the caller could not
# be cached); a registered function is a typing-time constant with no runtime value
@register_jitable
def _bw2_rhs(s, z, args, out):
    # dz/ds along the unit direction e of a segment (s its arc length)
    e0, e1, A, beta, gamma = args
    h = beta * (abs(e0 * z[0]) + abs(e1 * z[1])) + gamma * (e0 * z[0] + e1 * z[1])
    out[0] = A * e0 - z[0] * h
    out[1] = A * e1 - z[1] * h


@njit(cache=True)
def bouc_wen_biaxial_advance(x, u0, u1, dt, v, p, rtol):
    d0 = u1[0] - u0[0]
    d1 = u1[1] - u0[1]
    L = math.sqrt(d0 * d0 + d1 * d1)
    if L == 0.0:
        return
    e0 = d0 / L
    e1 = d1 / L
    A, beta, gamma = p[0], p[1], p[2]
    zn = math.sqrt(x[0] * x[0] + x[1] * x[1])
    zmax = math.sqrt(A / (beta + gamma))
    # z along ±e up to rounding (relative to the size of z or of the yield circle)
    if abs(x[0] * e1 - x[1] * e0) <= 1e-13 * max(zn, zmax):
        # z along ±e: the scalar n = 2 law along e (u̇ = L/1 s over 1 s: arc length L)
        ps = np.array([A, beta, gamma, 2.0, 0.0])
        zs = np.array([x[0] * e0 + x[1] * e1])
        bouc_wen_advance(zs, 0.0, L, 1.0, L, ps, rtol)
        x[0] = zs[0] * e0
        x[1] = zs[0] * e1
        return
    sc = max(zmax, math.sqrt(x[0] * x[0] + x[1] * x[1]))
    atol = np.array([rtol * sc, rtol * sc])
    K = np.empty((7, 2))
    yn = np.empty(2)
    dp45_solve(_bw2_rhs, 0.0, L, x, (e0, e1, A, beta, gamma), atol, rtol, L, K, yn)


@njit(cache=True)
def bouc_wen_biaxial_force(x, u, v, p, out):
    out[0] = p[3] * u[0] + x[0]
    out[1] = p[3] * u[1] + x[1]


class BoucWenBiaxial(VectorForceElement):
    """Biaxial Bouc-Wen law of Park, Wen & Ang (1986), n = 2 (frame-dependent: not
    isotropic, see BoucWenIsotropic for the rotation-equivariant form):
    ż = A·u̇ − z·(β(|u̇1 z1| + |u̇2 z2|) + γ·u̇·z), F = k_el·u + z.

    A [N/m] > 0, beta >= 0 and gamma with beta + gamma > 0 [1/(m·N)] (the bounded
    class: z tends to the circle |z| = sqrt(A/(β + γ))), k_el [N/m] finite, z0
    (2-vector) [N] inside that circle. Rate-independent (the segment map depends on
    the path only)."""

    kind = "smooth"
    state_names = ("z1", "z2")
    param_info = (
        Param('A', 'N/m', meaning='initial stiffness of the hysteretic force z (2-vector)',
              range='in (0, inf)'),
        Param('beta', '1/(m.N)', meaning='loop-shape coefficient β',
              range='in [0, inf)'),
        Param('gamma', '1/(m.N)', meaning='loop-shape coefficient γ',
              range='> -beta (in (-beta, inf))'),
        Param('k_el', 'N/m', meaning='parallel linear stiffness (F = k_el·u + z)',
              range='any real'),
        Param('z0', 'N', meaning='initial hysteretic force z (2-vector)',
              range='|z0| <= sqrt(A/(beta + gamma))'),
    )
    citation = "Park, Wen & Ang (1986), biaxial Bouc-Wen, n = 2"
    advance = staticmethod(bouc_wen_biaxial_advance)
    force = staticmethod(bouc_wen_biaxial_force)

    def __init__(self, *, A, beta, gamma, k_el=0.0, z0=(0.0, 0.0)):
        A, beta, gamma, k_el, z = check_bouc_wen_2d(A, beta, gamma, k_el, z0)
        self._setup(dict(A=A, beta=beta, gamma=gamma, k_el=k_el, z0=tuple(z)),
                    [A, beta, gamma, k_el], z)
