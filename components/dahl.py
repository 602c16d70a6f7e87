"""Dahl model of dynamic dry friction.

    ẇ = ρ (u̇ − |u̇| w),   F = Fc · w,   −1 ≤ w(0) ≤ 1

Ikhouane, Mañosa & Pujol, *Minor loops of the Dahl and LuGre models*, §1;
*A modified viscous + Dahl model for large-scale MR dampers* (Ikhouane group), eqs. (6)-(8).
"""
import math

import numpy as np
from numba import njit

from .base import ForceElement, Param, check_positive, check_range

# p = [rho, Fc]


@njit(cache=True)
def dahl_advance(x, u0, u1, dt, v, p, rtol):
    # v is constant on the segment, so the linear ODE has the exact solution
    # w = sgn(v) + (w0 - sgn(v)) exp(-rho |v| dt).
    if v > 0.0:
        s = 1.0
    elif v < 0.0:
        s = -1.0
    else:
        return
    x[0] = s + (x[0] - s) * math.exp(-p[0] * abs(v) * dt)


@njit(cache=True)
def dahl_rate(x, u, v, p, out):
    out[0] = p[0] * (v - abs(v) * x[0])


@njit(cache=True)
def dahl_force(x, u, v, p):
    return p[1] * x[0]


@njit(cache=True)
def dahl_jac(x, u, v, p, J):
    J[:, :] = 0.0
    J[0, 0] = -p[0] * abs(v)
    J[0, 2] = p[0] * (1.0 - (1.0 if v > 0 else (-1.0 if v < 0 else 0.0)) * x[0])
    J[1, 0] = p[1]


@njit(cache=True)
def dahl_pjac(x, u, v, p, Jp):
    """∂(ẇ, F)/∂p for p = [ρ, Fc] (rows ẇ, F): ∂ẇ/∂ρ = u̇ − |u̇|w, ∂F/∂Fc = w
    (the parameter Jacobian of the forward sensitivity equations, identify/assembly.py)."""
    Jp[0, 0] = v - abs(v) * x[0]
    Jp[0, 1] = 0.0
    Jp[1, 0] = 0.0
    Jp[1, 1] = x[0]


@njit(cache=True)
def dahl_slope(x, u, v, p):
    # dF/du = Fc·ρ(1 − sgn(v)·w) on the branch of direction sgn(v) (increasing for v = 0)
    s = -1.0 if v < 0.0 else 1.0
    return p[1] * p[0] * (1.0 - s * x[0])


@njit(cache=True)
def dahl_affine(v, dt, p, out):
    # exact segment map w_new = out[0]·w + out[1] and output F = out[2]·w + out[3]
    # (see lugre_affine)
    s = 1.0 if v > 0.0 else (-1.0 if v < 0.0 else 0.0)
    e = math.exp(-p[0] * abs(v) * dt)
    out[0] = e
    out[1] = s * (1.0 - e)
    out[2] = p[1]
    out[3] = 0.0


class Dahl(ForceElement):
    """Dahl friction: ẇ = ρ(u̇ − |u̇|w), F = Fc·w.

    rho [1/m] > 0, Fc [N] > 0, w0 [-] in [−1, 1].
    Ikhouane, Mañosa & Pujol, §1; viscous + Dahl paper, eqs. (6)-(8).
    """

    kind = "smooth"
    p_layout = ('rho', 'Fc')
    param_info = (
        Param('rho', '1/m', meaning='shape parameter: inverse of the displacement over which the force saturates (dw/du = rho·(1 − w·sgn u̇))',
              range='in (0, inf)'),
        Param('Fc', 'N', meaning='Coulomb friction level, the saturated force F = Fc·w',
              range='in (0, inf)'),
        Param('w0', '1', meaning='initial normalised state w = F/Fc',
              range='in [-1, 1]'),
    )
    state_names = ("w",)
    citation = "Ikhouane, Mañosa & Pujol, §1"

    advance = staticmethod(dahl_advance)
    force = staticmethod(dahl_force)
    rate = staticmethod(dahl_rate)
    jac = staticmethod(dahl_jac)
    pjac = staticmethod(dahl_pjac)
    affine = staticmethod(dahl_affine)
    slope = staticmethod(dahl_slope)

    def __init__(self, *, rho, Fc, w0=0.0):
        rho = check_positive("rho", rho)
        Fc = check_positive("Fc", Fc)
        w0 = check_range("w0", w0, -1.0, 1.0)
        self._setup(dict(rho=rho, Fc=Fc, w0=w0), [rho, Fc], [w0])
        self.x_scale = np.ones(1)
