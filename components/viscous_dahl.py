"""Viscous + Dahl model of an MR damper, and its asymmetric modification.

    F = κx ẋ + κw w,   ẇ = ρ(ẋ − |ẋ| w),   −1 ≤ w(0) ≤ 1                  eqs. (10)-(12)

    asymmetric (eqs. (27)-(33)):   F = Fv + Fd,
        Fd = κw1 w (w ≥ 0),  κw2 w (w ≤ 0)       continuous in time, as w is
        Fv = κx1 ẋ (ẋ ≥ 0),  κx2 ẋ (ẋ ≤ 0)

    naive variant (eqs. (21)-(26), kept for the paper's comparison only):
        F = κx1 ẋ + κw1 w (ẋ > 0),   κx2 ẋ + κw2 w (ẋ ≤ 0)
        its dry force jumps by (κw1 − κw2)·w whenever the velocity changes sign.

*A modified viscous + Dahl model for large-scale MR dampers* (Ikhouane group).
The state w follows the Dahl equation, whose segment update is exact.
"""
import math

import numpy as np
from numba import njit

from .base import ForceElement, Param, check_nonnegative, check_positive, check_range

# ViscousDahl:                p = [kx, kw, rho]
# AsymmetricViscousDahl:      p = [kx1, kw1, kx2, kw2, rho]
# NaiveAsymmetricViscousDahl: p = [kx1, kw1, kx2, kw2, rho]


@njit(cache=True)
def _dahl_w(w, v, dt, rho):
    # exact: w = sgn(v) + (w0 − sgn(v)) exp(−ρ|v|dt) while v is constant
    if v > 0.0:
        return 1.0 + (w - 1.0) * math.exp(-rho * v * dt)
    if v < 0.0:
        return -1.0 + (w + 1.0) * math.exp(rho * v * dt)
    return w


@njit(cache=True)
def _dahl_dwdv(w, v, rho):
    return rho * (1.0 - (1.0 if v > 0.0 else (-1.0 if v < 0.0 else 0.0)) * w)


# --- symmetric, eqs. (10)-(12) -------------------------------------------------------
@njit(cache=True)
def viscous_dahl_advance(x, u0, u1, dt, v, p, rtol):
    x[0] = _dahl_w(x[0], v, dt, p[2])


@njit(cache=True)
def viscous_dahl_rate(x, u, v, p, out):
    out[0] = p[2] * (v - abs(v) * x[0])


@njit(cache=True)
def viscous_dahl_force(x, u, v, p):
    return p[0] * v + p[1] * x[0]


@njit(cache=True)
def viscous_dahl_jac(x, u, v, p, J):
    J[0, 0] = -p[2] * abs(v)
    J[0, 1] = 0.0
    J[0, 2] = _dahl_dwdv(x[0], v, p[2])
    J[1, 0] = p[1]
    J[1, 1] = 0.0
    J[1, 2] = p[0]


@njit(cache=True)
def viscous_dahl_pjac(x, u, v, p, Jp):
    """∂(ẇ, F)/∂p for p = [κx, κw, ρ] (rows ẇ, F) of eqs. (10)-(12): ∂F/∂κx = ẋ,
    ∂F/∂κw = w, ∂ẇ/∂ρ = ẋ − |ẋ|w (parameter Jacobian of the forward sensitivity
    equations, identify/assembly.py)."""
    for j in range(3):
        Jp[0, j] = 0.0
        Jp[1, j] = 0.0
    Jp[0, 2] = v - abs(v) * x[0]
    Jp[1, 0] = v
    Jp[1, 1] = x[0]


# --- asymmetric, eqs. (27)-(33) ------------------------------------------------------
@njit(cache=True)
def asym_advance(x, u0, u1, dt, v, p, rtol):
    x[0] = _dahl_w(x[0], v, dt, p[4])


@njit(cache=True)
def asym_rate(x, u, v, p, out):
    out[0] = p[4] * (v - abs(v) * x[0])


@njit(cache=True)
def asym_force(x, u, v, p):
    w = x[0]
    Fd = p[1] * w if w >= 0.0 else p[3] * w   # eqs. (30)-(31)
    Fv = p[0] * v if v >= 0.0 else p[2] * v   # eqs. (32)-(33)
    return Fv + Fd


@njit(cache=True)
def asym_jac(x, u, v, p, J):
    J[0, 0] = -p[4] * abs(v)
    J[0, 1] = 0.0
    J[0, 2] = _dahl_dwdv(x[0], v, p[4])
    J[1, 0] = p[1] if x[0] >= 0.0 else p[3]
    J[1, 1] = 0.0
    J[1, 2] = p[0] if v >= 0.0 else p[2]


@njit(cache=True)
def asym_pjac(x, u, v, p, Jp):
    """∂(ẇ, F)/∂p for p = [κx1, κw1, κx2, κw2, ρ] of eqs. (27)-(33): the viscous
    coefficient of the side of ẋ (ẋ ≥ 0: κx1), the dry level of the side of w
    (w ≥ 0: κw1), ∂ẇ/∂ρ = ẋ − |ẋ|w."""
    for j in range(5):
        Jp[0, j] = 0.0
        Jp[1, j] = 0.0
    Jp[0, 4] = v - abs(v) * x[0]
    if v >= 0.0:
        Jp[1, 0] = v
    else:
        Jp[1, 2] = v
    if x[0] >= 0.0:
        Jp[1, 1] = x[0]
    else:
        Jp[1, 3] = x[0]


# --- naive, eqs. (21)-(26) -----------------------------------------------------------
@njit(cache=True)
def naive_force(x, u, v, p):
    if v > 0.0:                        # eq. (21)
        return p[0] * v + p[1] * x[0]
    return p[2] * v + p[3] * x[0]      # eq. (22)


@njit(cache=True)
def naive_jac(x, u, v, p, J):
    J[0, 0] = -p[4] * abs(v)
    J[0, 1] = 0.0
    J[0, 2] = _dahl_dwdv(x[0], v, p[4])
    J[1, 0] = p[1] if v > 0.0 else p[3]
    J[1, 1] = 0.0
    J[1, 2] = p[0] if v > 0.0 else p[2]


@njit(cache=True)
def naive_pjac(x, u, v, p, Jp):
    """∂(ẇ, F)/∂p of eqs. (21)-(26): κx1, κw1 for ẋ > 0, κx2, κw2 otherwise."""
    for j in range(5):
        Jp[0, j] = 0.0
        Jp[1, j] = 0.0
    Jp[0, 4] = v - abs(v) * x[0]
    k = 0 if v > 0.0 else 2
    Jp[1, k] = v
    Jp[1, k + 1] = x[0]


def _check_w0(w0):
    return check_range("w0", w0, -1.0, 1.0)


class ViscousDahl(ForceElement):
    """Viscous + Dahl MR-damper model, viscous + Dahl paper, eqs. (10)-(12).

    kx [N·s/m] >= 0 viscous coefficient κx, kw [N] > 0 dry-friction level κw,
    rho [1/m] > 0, w0 [-] in [−1, 1]. F = κx·ẋ + κw·w.
    """

    kind = "smooth"
    p_layout = ('kx', 'kw', 'rho')
    param_info = (
        Param('kx', 'N.s/m', meaning='viscous coefficient (F = kx·v + kw·w)',
              range='in [0, inf)'),
        Param('kw', 'N', meaning='Dahl (dry friction) force level',
              range='in (0, inf)'),
        Param('rho', '1/m', meaning='Dahl shape parameter of dw/du = rho·(1 − w·sgn u̇)',
              range='in (0, inf)'),
        Param('w0', '1', meaning='initial normalised Dahl state w',
              range='in [-1, 1]'),
    )
    state_names = ("w",)
    citation = "A modified viscous + Dahl model for large-scale MR dampers, eqs. (10)-(12)"

    advance = staticmethod(viscous_dahl_advance)
    force = staticmethod(viscous_dahl_force)
    rate = staticmethod(viscous_dahl_rate)
    jac = staticmethod(viscous_dahl_jac)
    pjac = staticmethod(viscous_dahl_pjac)

    def __init__(self, *, kx, kw, rho, w0=0.0):
        kx = check_nonnegative("kx", kx)
        kw = check_positive("kw", kw)
        rho = check_positive("rho", rho)
        w0 = _check_w0(w0)
        self._setup(dict(kx=kx, kw=kw, rho=rho, w0=w0), [kx, kw, rho], [w0])
        self.x_scale = np.ones(1)

    def dry_force(self, w):
        """Dry-friction part Fd = κw·w [N] of eq. (10)."""
        return self.params["kw"] * np.asarray(w)


class AsymmetricViscousDahl(ForceElement):
    """Asymmetric viscous + Dahl model, viscous + Dahl paper, eqs. (27)-(33).

    Fd = κw1·w for w ≥ 0 and κw2·w for w ≤ 0 (continuous in time because w is);
    Fv = κx1·ẋ for ẋ ≥ 0 and κx2·ẋ for ẋ ≤ 0; ẇ = ρ(ẋ − |ẋ|w).
    kx1, kx2 [N·s/m] >= 0, kw1, kw2 [N] > 0, rho [1/m] > 0, w0 [-] in [−1, 1].
    Paper values: κx1 = 1.6299e5, κw1 = 5.2620e4, κx2 = 1.3352e5, κw2 = 6.2986e4,
    ρ = 768.73.
    """

    kind = "smooth"
    p_layout = ('kx1', 'kw1', 'kx2', 'kw2', 'rho')
    param_info = (
        Param('kx1', 'N.s/m', meaning='viscous coefficient for v >= 0',
              range='in [0, inf)'),
        Param('kw1', 'N', meaning='Dahl force level for v >= 0',
              range='in (0, inf)'),
        Param('kx2', 'N.s/m', meaning='viscous coefficient for v < 0',
              range='in [0, inf)'),
        Param('kw2', 'N', meaning='Dahl force level for v < 0',
              range='in (0, inf)'),
        Param('rho', '1/m', meaning='Dahl shape parameter',
              range='in (0, inf)'),
        Param('w0', '1', meaning='initial normalised Dahl state w',
              range='in [-1, 1]'),
    )
    state_names = ("w",)
    citation = "A modified viscous + Dahl model for large-scale MR dampers, eqs. (27)-(33)"

    advance = staticmethod(asym_advance)
    force = staticmethod(asym_force)
    rate = staticmethod(asym_rate)
    jac = staticmethod(asym_jac)
    pjac = staticmethod(asym_pjac)

    def __init__(self, *, kx1, kw1, kx2, kw2, rho, w0=0.0):
        kx1 = check_nonnegative("kx1", kx1)
        kw1 = check_positive("kw1", kw1)
        kx2 = check_nonnegative("kx2", kx2)
        kw2 = check_positive("kw2", kw2)
        rho = check_positive("rho", rho)
        w0 = _check_w0(w0)
        self._setup(dict(kx1=kx1, kw1=kw1, kx2=kx2, kw2=kw2, rho=rho, w0=w0),
                    [kx1, kw1, kx2, kw2, rho], [w0])
        self.x_scale = np.ones(1)

    def dry_force(self, w, v=None):
        """Dry-friction part Fd [N] of eqs. (30)-(31) (v is ignored: Fd depends on w only)."""
        w = np.asarray(w, dtype=float)
        return np.where(w >= 0, self.params["kw1"] * w, self.params["kw2"] * w)


class NaiveAsymmetricViscousDahl(AsymmetricViscousDahl):
    """NOT RECOMMENDED: the naive asymmetric model of eqs. (21)-(26) of the viscous + Dahl
    paper, F = κx1·ẋ + κw1·w for ẋ > 0 and κx2·ẋ + κw2·w for ẋ ≤ 0.

    Kept only to reproduce the paper's argument: its dry force jumps by (κw1 − κw2)·w
    at every velocity reversal, which contradicts the continuity of dry friction
    observed in experiments. Use :class:`AsymmetricViscousDahl` (eqs. (27)-(33)).
    """

    citation = "A modified viscous + Dahl model for large-scale MR dampers, eqs. (21)-(26)"
    force = staticmethod(naive_force)
    jac = staticmethod(naive_jac)
    pjac = staticmethod(naive_pjac)

    def dry_force(self, w, v=None):
        """Dry-friction part Fd [N] of eqs. (25)-(26): κw1·w for ẋ > 0, κw2·w for ẋ ≤ 0."""
        if v is None:
            raise ValueError("v must be given: the naive model's dry force depends on sgn(v)")
        w = np.asarray(w, dtype=float)
        return np.where(np.asarray(v) > 0, self.params["kw1"] * w, self.params["kw2"] * w)
