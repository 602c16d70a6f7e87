"""Bouc-Wen model of an MR damper fitted to measured data (optionally voltage dependent).

    F = a(V') ζ + c(V') ẋ + k0 x + F0,  a = a0 + a1 V',  c = c0 + c1 V',  τ V̇' + V' = V
    ζ̇ = A ẋ − β |ẋ| |ζ|^(n−1) ζ − γ ẋ |ζ|^n,  A = β + γ (so that ζ saturates at ±1)

ζ is the state of hystmech.components.BoucWen (F = z there), normalised so that the
linear coefficients carry the force scale; this is the Bouc-Wen damper of Spencer et
al. (1997) without its internal series damper, with a and c linear in the voltage as
for the viscous + Dahl model. Given (β, γ/β, n, τ) the force is linear in
(a0, a1, c0, c1, k0, F0): those are solved by linear least squares inside a
scipy.optimize.least_squares search over the nonlinear ones (variable projection).
With voltage=None the coefficients are constants (a1 = c1 = 0).
"""
from __future__ import annotations

import numpy as np

from ._models import first_order_lag
from .dataset import Dataset
from .result import FitResult

LINEAR_TERMS = ("a0", "a1", "c0", "c1", "k0", "F0")


def bouc_wen_state(u, beta, gratio, n):
    """Normalised Bouc-Wen state ζ(t) along u [m] (A = β + γ, γ = gratio·β), computed
    by hystmech.drive with the BoucWen element."""
    from ..components import get_element_class
    from ..drive import drive

    gamma = gratio * beta
    el = get_element_class("BoucWen")(A=beta + gamma, beta=beta, gamma=gamma, n=n)
    t = np.arange(np.asarray(u).size, dtype=float)   # rate independent: any time grid
    return drive(el, t, u, rtol=1e-6, store_state=False).force


def bouc_wen_damper_force(t, u, v, volt=None, *, beta, gratio, n, a0, c0, a1=0.0, c1=0.0,
                          k0=0.0, F0=0.0, tau=0.0) -> np.ndarray:
    """Force [N] of the (voltage-dependent) Bouc-Wen damper model of the module docstring.
    t [s], u [m], v [m/s], volt [V] (None: constant coefficients a0, c0)."""
    z = bouc_wen_state(u, beta, gratio, n)
    vf = 0.0 if volt is None else first_order_lag(t, volt, tau)
    return (a0 + a1 * vf) * z + (c0 + c1 * vf) * np.asarray(v) + k0 * np.asarray(u) + F0


def fit_bouc_wen_damper(ds: Dataset, voltage: str | None = "voltage", *, n_starts: int = 3,
                        seed: int = 0, decimate: int = 1) -> FitResult:
    """Fit the Bouc-Wen damper model to ds (voltage channel name, or None).

    Nonlinear parameters: log β [1/m], γ/β in (−1, 1], n in [0.5, 4], log τ [s];
    several starts (seeded). Returns a FitResult with law ``BoucWenDamper``.
    """
    from scipy.optimize import least_squares

    sub = ds if decimate <= 1 else ds._take(slice(None, None, int(decimate)))
    volt = sub.channel(voltage) if voltage else None
    t, u, v, f = sub.t, sub.u, sub.velocity, sub.force
    scale = float(np.std(f)) or 1.0
    span = float(np.ptp(u)) or 1.0

    def design(z):
        beta, gr, n = float(np.exp(z[0])), float(z[1]), float(z[2])
        tau = float(np.exp(z[3])) if volt is not None else 0.0
        zeta = bouc_wen_state(u, beta, gr, n)
        vf = first_order_lag(t, volt, tau) if volt is not None else np.zeros_like(u)
        A = np.column_stack([zeta, vf * zeta, v, vf * v, u, np.ones_like(u)])
        if volt is None:
            A[:, 1] = 0.0
            A[:, 3] = 0.0
        return A

    def solve(z):
        A = design(z)
        keep = np.any(A != 0, axis=0)
        coef = np.zeros(A.shape[1])
        coef[keep], *_ = np.linalg.lstsq(A[:, keep], f, rcond=None)
        return coef, A

    def resid(z):
        coef, A = solve(z)
        return (A @ coef - f) / scale

    lo = np.array([np.log(0.1 / span), -0.95, 0.5, np.log(1e-4)])
    hi = np.array([np.log(1e5 / span), 1.0, 4.0, np.log(0.5)])
    rng = np.random.default_rng(seed)
    starts = [np.array([np.log(30.0 / span), 0.5, 1.0, np.log(0.01)])]
    starts += [lo + rng.random(4) * (hi - lo) for _ in range(max(n_starts, 1) - 1)]
    best = None
    for z0 in starts:
        sol = least_squares(resid, z0, bounds=(lo, hi), diff_step=1e-3, max_nfev=60)
        if best is None or sol.cost < best.cost:
            best = sol
    coef, _ = solve(best.x)
    params = dict(beta=float(np.exp(best.x[0])), gratio=float(best.x[1]), n=float(best.x[2]),
                  tau=float(np.exp(best.x[3])) if volt is not None else 0.0,
                  **{k: float(c) for k, c in zip(LINEAR_TERMS, coef)})
    F = predict_bouc_wen_damper(params, ds, voltage)
    return FitResult(law="BoucWenDamper", params=params, data=ds, predicted=F,
                     details={"voltage_channel": voltage, "cost": float(best.cost)})


def predict_bouc_wen_damper(params: dict, ds: Dataset, voltage: str | None = "voltage") -> np.ndarray:
    """Force [N] of the fitted Bouc-Wen damper model on another record."""
    volt = ds.channel(voltage) if voltage else None
    return bouc_wen_damper_force(ds.t, ds.u, ds.velocity, volt, **params)
