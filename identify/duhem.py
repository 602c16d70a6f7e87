"""Fit of the Duhem model with polynomial envelopes (Bastien et al. (2007), eq. (2)):

    Ḟ = A u̇ (h_u(u) − F)  (u̇ ≥ 0),   Ḟ = −A u̇ (h_l(u) − F)  (u̇ ≤ 0),
    h_u(u) = Σ_i cu_i u^i,   h_l(u) = Σ_i cl_i u^i

to force measured under imposed displacement, the samples joined by straight lines.
The law is rate independent: along a segment of arc length L (u = u_k + σs, σ = ±1)
dF/ds = A(h(u) − F) has the exact solution

    F(L) = P(L) + (F_k − P(0)) e^(−AL),   P(s) = Σ_j (−σ/A)^j h^(j)(u(s))

(P the polynomial particular solution, j up to the degree). F is affine in
(cu, cl, F0) for a fixed A, so the fit is variable projection: the linear least
squares of those coefficients inside a scalar least squares over log A; uncertainty
from the full Jacobian (exact columns for the coefficients, a central difference in A
of the exact map) by hystmech.identify.uncertainty.analyse.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .dataset import Dataset
from .result import FitResult


@njit(cache=True)
def _poly_d(c, u, j):
    # j-th derivative of Σ_i c[i] u^i at u
    s = 0.0
    for i in range(c.size - 1, j - 1, -1):
        f = 1.0
        for q in range(j):
            f *= i - q
        s = s * u + f * c[i]
    return s


@njit(cache=True)
def duhem_polynomial_run(u, A, cu, cl, F0, out):
    """Exact Duhem force [N] along the piecewise-linear u (module docstring) from F0."""
    F = F0
    out[0] = F
    for k in range(u.size - 1):
        du = u[k + 1] - u[k]
        if du != 0.0:
            c = cu if du > 0.0 else cl
            sg = 1.0 if du > 0.0 else -1.0
            P0 = 0.0
            P1 = 0.0
            fac = 1.0
            for j in range(c.size):
                P0 += fac * _poly_d(c, u[k], j)
                P1 += fac * _poly_d(c, u[k + 1], j)
                fac *= -sg / A
            F = P1 + (F - P0) * math.exp(-A * abs(du))
        out[k + 1] = F


def duhem_polynomial_force(u, A, cu, cl, F0=0.0):
    out = np.empty(np.size(u))
    duhem_polynomial_run(np.ascontiguousarray(u, dtype=float), float(A),
                         np.asarray(cu, float), np.asarray(cl, float), float(F0), out)
    return out


def _regressors(u, A, m):
    """Columns ∂F/∂(cu_0..cu_m−1, cl_0..cl_m−1, F0): F is linear in them at fixed A."""
    X = np.empty((u.size, 2 * m + 1))
    z = np.zeros(m)
    for i in range(m):
        e = np.zeros(m)
        e[i] = 1.0
        X[:, i] = duhem_polynomial_force(u, A, e, z, 0.0)
        X[:, m + i] = duhem_polynomial_force(u, A, z, e, 0.0)
    X[:, 2 * m] = duhem_polynomial_force(u, A, z, z, 1.0)
    return X


def fit_duhem(ds: Dataset, *, degree: int = 3) -> FitResult:
    """A [1/m], envelope coefficients cu, cl [N/m^i] (degree ``degree``) and F0 [N] of
    the Duhem model (module docstring); the scenario element is
    ``Duhem.polynomial(A=, cu=, cl=, F0=)``."""
    from scipy.optimize import least_squares

    from .uncertainty import analyse

    deg = int(degree)
    if not 0 <= deg <= 7 or deg != degree:
        raise ValueError(f"degree must be an integer in [0, 7] (got {degree!r})")
    m = deg + 1
    u, F = np.asarray(ds.u, float), np.asarray(ds.force, float)
    U = 0.5 * float(np.ptp(u))
    if not (U > 0 and np.ptp(F) > 0):
        raise ValueError("the record needs a moving displacement and a varying force")
    scale = float(np.std(F)) or 1.0
    us = float(np.max(np.abs(u)))           # coefficients scaled by the amplitude's powers
    sc = np.r_[us ** -np.arange(m), us ** -np.arange(m), 1.0]

    def inner(logA):
        X = _regressors(u, math.exp(logA), m) * sc
        th = np.linalg.lstsq(X, F, rcond=None)[0]
        return X, th

    def resid(z):
        X, th = inner(z[0])
        return (X @ th - F) / scale

    # a coarse scan of A·amplitude over five decades, then least squares from the best
    grid = np.log(np.logspace(-2, 3, 26) / U)
    z0 = grid[int(np.argmin([np.sum(resid([g]) ** 2) for g in grid]))]
    sol = least_squares(resid, [z0], bounds=([grid[0] - 2], [grid[-1] + 2]), method="trf",
                        ftol=1e-15, xtol=1e-15, gtol=1e-15, diff_step=1e-6, max_nfev=200)
    A = math.exp(float(sol.x[0]))
    X, th = inner(sol.x[0])
    coef = th * sc
    cu, cl, F0 = coef[:m], coef[m:2 * m], float(coef[2 * m])
    # full Jacobian in (A, cu, cl, F0): the coefficient columns are X itself
    hA = 1e-6 * A
    dA = (duhem_polynomial_force(u, A + hA, cu, cl, F0)
          - duhem_polynomial_force(u, A - hA, cu, cl, F0)) / (2 * hA)
    J = np.column_stack([dA, _regressors(u, A, m)]) / scale
    names = ["A"] + [f"cu[{i}]" for i in range(m)] + [f"cl[{i}]" for i in range(m)] + ["F0"]
    vals = np.r_[A, coef]
    pred = duhem_polynomial_force(u, A, cu, cl, F0)
    unc = analyse((pred - F) / scale, J, names=names, values=vals, inputs=u,
                  what="fit of Duhem", warn=True, log=[True] + [False] * (2 * m + 1))
    params = dict(A=A, cu=cu.tolist(), cl=cl.tolist(), F0=F0)
    return FitResult(law="Duhem", params=params, stderr=unc.stderr(), data=ds, predicted=pred,
                     uncertainty=unc, constructor="polynomial",
                     details={"degree": deg, "nfev": int(sol.nfev)})
