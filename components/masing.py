"""Masing model with viscous damping, a differential inclusion.

    ẇ + β(w/η) ∋ u̇,   w(t0) = w0 ∈ [−η, η],   η = α/k
    F = k·w + k0·u + c·u̇ − F0

β is the maximal monotone graph of eq. (7) (the sub-differential of the indicator of
[−1, 1]): w follows u̇ while |w| < η (stick) and stays on ±η while u keeps pushing
outwards (slip). Between input samples joined by straight lines the solution is the
play/stop operator, so the segment update below is exact.

Bastien, Michon, Manin & Dufour (2007), J. Sound Vib. 302, eqs. (6)-(11).
"""
import numpy as np
from numba import njit

from .base import (ForceElement, Param, check_finite, check_nonnegative, check_positive)

# p = [k, k0, eta, F0, c]
# x = [w]


@njit(cache=True)
def masing_advance(x, u0, u1, dt, v, p, rtol):
    # exact for a monotone (linear) segment: the stop operator w <- clip(w + Δu, −η, η)
    eta = p[2]
    w = x[0] + (u1 - u0)
    if w > eta:
        w = eta
    elif w < -eta:
        w = -eta
    x[0] = w


@njit(cache=True)
def masing_rate(x, u, v, p, out):
    # smooth part of the inclusion ẇ + β(w/η) ∋ u̇ (the projection does the rest)
    out[0] = v


@njit(cache=True)
def masing_force(x, u, v, p):
    return p[0] * x[0] + p[1] * u + p[4] * v - p[3]


@njit(cache=True)
def masing_jac(x, u, v, p, J):
    J[:, :] = 0.0
    J[0, 2] = 1.0
    J[1, 0] = p[0]
    J[1, 1] = p[1]
    J[1, 2] = p[4]


@njit(cache=True)
def masing_pjac(x, u, v, p, Jp):
    """∂(ẇ, F)/∂p for p = [k, k0, η, F0, c] (rows ẇ, F): ∂F/∂(k, k0, F0, c) =
    (w, u, −1, u̇); η acts through the box [−η, η] only (identify/assembly.py projects
    onto it and differentiates the projection)."""
    for j in range(5):
        Jp[0, j] = 0.0
        Jp[1, j] = 0.0
    Jp[1, 0] = x[0]
    Jp[1, 1] = u
    Jp[1, 3] = -1.0
    Jp[1, 4] = v


@njit(cache=True)
def masing_slope(x, u, v, p):
    # tangent dF/du on the active branch: k + k0 while sticking, k0 while slipping
    eta = p[2]
    if (x[0] >= eta and v > 0.0) or (x[0] <= -eta and v < 0.0):
        return p[1]
    return p[0] + p[1]


class Masing(ForceElement):
    """Masing model with viscous damping, Bastien et al. (2007), eqs. (6)-(11).

    F = k·w + k0·u + c·u̇ − F0 [N], ẇ + β(w/η) ∋ u̇ with η = alpha/k [m].

    k [N/m] > 0 stiffness of the spring in series with the dry friction element,
    k0 [N/m] >= 0 parallel spring, alpha [N] > 0 friction threshold,
    F0 [N] force offset (eq. (11c)), c [N·s/m] >= 0 viscous damping,
    w0 [m] initial deflection of spring k, |w0| <= η.
    kind = "inclusion": state w in the box [−η, η]; drive() is exact (play/stop).
    """

    kind = "inclusion"
    p_layout = ('k', 'k0', 'eta', 'F0', 'c')
    param_info = (
        Param('k', 'N/m', meaning='series spring stiffness (the elastic-slider branch)',
              range='in (0, inf)'),
        Param('k0', 'N/m', meaning='parallel spring stiffness',
              range='in [0, inf)'),
        Param('alpha', 'N', meaning='dry friction threshold of the slider',
              range='in (0, inf)'),
        Param('F0', 'N', meaning='force offset',
              range='any real'),
        Param('c', 'N.s/m', meaning='viscous damping in parallel',
              range='in [0, inf)'),
        Param('w0', 'm', meaning='initial deflection of spring k',
              range='in [-alpha/k, alpha/k]'),
    )
    state_names = ("w",)
    citation = "Bastien, Michon, Manin & Dufour (2007), eqs. (6)-(11)"

    advance = staticmethod(masing_advance)
    force = staticmethod(masing_force)
    rate = staticmethod(masing_rate)
    jac = staticmethod(masing_jac)
    pjac = staticmethod(masing_pjac)
    slope = staticmethod(masing_slope)

    def __init__(self, *, k, k0, alpha, F0=0.0, c=0.0, w0=0.0):
        k = check_positive("k", k)
        k0 = check_nonnegative("k0", k0)
        alpha = check_positive("alpha", alpha)
        F0 = check_finite("F0", F0)
        c = check_nonnegative("c", c)
        w0 = check_finite("w0", w0)
        eta = alpha / k
        if not eta > 0.0:
            raise ValueError(f"eta = alpha/k must be in (0, inf) (got {eta!r})")
        if abs(w0) > eta:
            raise ValueError(f"w0 must be in [-eta, eta] = [{-eta:g}, {eta:g}] m "
                             f"(eta = alpha/k) (got {w0!r})")
        self._setup(dict(k=k, k0=k0, alpha=alpha, F0=F0, c=c, w0=w0),
                    [k, k0, eta, F0, c], [w0])
        self.eta = eta
        self.box_lo = np.array([-eta])
        self.box_hi = np.array([eta])
        self.box_p = np.array([2])          # the box is [−p[2], p[2]]
        self.x_scale = np.array([eta])

    def stored_energy(self, X, U):
        """½k·w² + ½k0·u² − F0·u [J] (springs k, k0 and the offset force of
        Bastien et al. (2007), eq. (11)); the damper and the slider store nothing."""
        pr = self.params
        X = np.asarray(X, dtype=float).reshape(-1, 1)
        U = np.asarray(U, dtype=float)
        return 0.5 * pr["k"] * X[:, 0] ** 2 + 0.5 * pr["k0"] * U ** 2 - pr["F0"] * U
