"""Fits of two rate-independent operators to force measured under imposed displacement.

Relay (Manfredo et al. (2023), eqs. (4)-(6)), with a weight and an offset::

    F = offset + w·R_{a1,a2}[u],   R = +1 after u ≥ a2, −1 after u ≤ a1

read off the record: the two force levels give w and the offset (their mean and
half-difference); every sample bounds a threshold (a low output means u < a2, the
sample where the output switches up means u ≥ a2 there, and alike for a1), so each
threshold is known to lie in an interval between two samples: the estimate is its
middle, its standard error that of a uniform spread over it (width/√12).

Prandtl–Ishlinskii (a Preisach operator with its kernel on lines, components/preisach.py)::

    F = offset + k0·u + Σ_j c_j·p_{r_j}[u],   p_r[u]_k = min(u_k + r, max(u_k − r, p_{k−1}))

with play operators starting at 0 for u = 0 (as ``PrandtlIshlinskii``). The output is
linear in (c, k0, offset) and piecewise linear in the radii r (∂p_r/∂r = −1 while the
play is dragged up, +1 while dragged down, carried unchanged inside the play), so
Gauss–Newton (scipy's trust-region least squares) with this exact Jacobian lands on
the radii exactly once the pattern of dragged samples is right; the start is the
linear least-squares fit of the weights on radii spread over the amplitude, and
several such spreads are tried.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .dataset import Dataset
from .result import FitResult


# -- relay --------------------------------------------------------------------------------------
def fit_relay(ds: Dataset) -> FitResult:
    """Relay thresholds a1 < a2 [m], weight w [N] and offset [N] from force ds.force
    under displacement ds.u (see the module docstring). Returns a FitResult whose law is
    a one-relay Preisach operator (the scenario element carries the weight and offset);
    stderr from the thresholds' brackets and the levels' scatter; details: the brackets."""
    u, F = np.asarray(ds.u, float), np.asarray(ds.force, float)
    lo_l, hi_l = float(F.min()), float(F.max())
    if not hi_l > lo_l:
        raise ValueError("the force must take two levels (it is constant)")
    hi = F > 0.5 * (lo_l + hi_l)
    if hi.all() or (~hi).all():
        raise ValueError("the relay must switch in the record")
    up = np.flatnonzero(hi[1:] & ~hi[:-1]) + 1       # first samples at +1
    down = np.flatnonzero(~hi[1:] & hi[:-1]) + 1     # first samples at −1
    if up.size == 0 or down.size == 0:
        raise ValueError("the record must switch the relay both up and down (at least one "
                         "rising and one falling crossing of its thresholds)")
    # a2 in (max u where the output is −1, min u where it switched up]
    b2 = (float(u[~hi].max()), float(u[up].min()))
    b1 = (float(u[down].max()), float(u[hi].min()))
    if not (b2[0] < b2[1] and b1[0] < b1[1]):
        raise ValueError("the force is not that of a relay of this displacement (a switch "
                         "happens where the output stays elsewhere)")
    a1, a2 = 0.5 * sum(b1), 0.5 * sum(b2)
    if not a1 < a2:
        raise ValueError(f"the switching thresholds are not ordered (a1 = {a1:g} >= a2 = "
                         f"{a2:g}): not a relay")
    Fh, Fl = F[hi], F[~hi]
    mh, ml = float(Fh.mean()), float(Fl.mean())
    w, off = 0.5 * (mh - ml), 0.5 * (mh + ml)
    sh = float(Fh.std(ddof=1)) / math.sqrt(Fh.size) if Fh.size > 1 else 0.0
    sl = float(Fl.std(ddof=1)) / math.sqrt(Fl.size) if Fl.size > 1 else 0.0
    initial = 1 if hi[0] else -1
    pred = np.where(hi, off + w, off - w)
    params = dict(a1=[a1], a2=[a2], weights=[w], initial=initial, offset=off)
    stderr = {"a1": (b1[1] - b1[0]) / math.sqrt(12), "a2": (b2[1] - b2[0]) / math.sqrt(12),
              "weights": 0.5 * math.hypot(sh, sl), "offset": 0.5 * math.hypot(sh, sl)}
    return FitResult(law="Preisach", params=params, stderr=stderr, data=ds, predicted=pred,
                     details={"a1_bracket": list(b1), "a2_bracket": list(b2),
                              "switches_up": int(up.size), "switches_down": int(down.size)})


# -- Prandtl–Ishlinskii ---------------------------------------------------------------------------
@njit(cache=True)
def play_outputs(u, r, P, D):
    """Play operators of radii r (m,) along the samples u (n,): P[k, j] = p_{r_j}[u]_k
    (from p = 0 at u = 0, then the first sample), D[k, j] = ∂P[k, j]/∂r_j."""
    n, m = u.size, r.size
    for j in range(m):
        p, d = 0.0, 0.0
        for k in range(n):
            if p < u[k] - r[j]:
                p, d = u[k] - r[j], -1.0
            elif p > u[k] + r[j]:
                p, d = u[k] + r[j], 1.0
            P[k, j] = p
            D[k, j] = d


def _model(u, r):
    n, m = u.size, r.size
    P, D = np.empty((n, m)), np.empty((n, m))
    play_outputs(np.ascontiguousarray(u, dtype=float), np.asarray(r, float), P, D)
    return P, D


def prandtl_ishlinskii_force(u, r, c, k0=0.0, offset=0.0):
    """F = offset + k0·u + Σ c_j p_{r_j}[u] [N] along the sampled u (plays from 0 at u = 0)."""
    P, _ = _model(np.asarray(u, float), np.atleast_1d(r))
    return offset + k0 * np.asarray(u, float) + P @ np.atleast_1d(np.asarray(c, float))


def fit_prandtl_ishlinskii(ds: Dataset, *, elements: int = 3, h: float | None = None,
                           spreads: int = 4) -> FitResult:
    """Radii r_j [m], weights c_j [N/m], k0 [N/m] and offset [N] of a Prandtl–Ishlinskii
    operator with ``elements`` plays, by least squares with the exact Jacobian (module
    docstring) from ``spreads`` starts (radii spread over the amplitude). h [m]: relay
    spacing of the scenario element (default amplitude/250; the element equals the fitted
    operator within h·Σ|c_j|/2). Uncertainty: hystmech.identify.uncertainty.analyse."""
    from scipy.optimize import least_squares

    from .uncertainty import analyse

    N = int(elements)
    if N < 1:
        raise ValueError(f"elements must be in [1, inf) (got {elements})")
    u, F = np.asarray(ds.u, float), np.asarray(ds.force, float)
    U = float(np.max(np.abs(u)))
    if not (U > 0 and np.ptp(F) > 0):
        raise ValueError("the record needs a moving displacement and a varying force")
    if h is not None and not (math.isfinite(h) and h > 0):
        raise ValueError(f"h must be in (0, inf) m (got {h!r})")
    h = float(h) if h is not None else U / 250.0
    scale = float(np.std(F)) or 1.0

    def linear(r):
        P, _ = _model(u, r)
        X = np.column_stack([P, u, np.ones_like(u)])
        return np.linalg.lstsq(X, F, rcond=None)[0]

    def resid(z):
        r, c, k0, off = z[:N], z[N:2 * N], z[2 * N], z[2 * N + 1]
        P, _ = _model(u, r)
        return (off + k0 * u + P @ c - F) / scale

    def jac(z):
        r, c = z[:N], z[N:2 * N]
        P, D = _model(u, r)
        return np.column_stack([D * c, P, u, np.ones_like(u)]) / scale

    lo = np.r_[np.full(N, 1e-6 * U), np.full(N + 2, -np.inf)]
    hi = np.r_[np.full(N, U), np.full(N + 2, np.inf)]
    best = None
    for s in range(max(int(spreads), 1)):
        # radii spread evenly, then towards small and large amplitudes
        q = (np.arange(1, N + 1) / (N + 1)) ** (1.0, 0.5, 2.0, 0.7, 1.4)[s % 5]
        r0 = U * q
        z0 = np.r_[r0, linear(r0)]
        sol = least_squares(resid, z0, jac=jac, bounds=(lo, hi), method="trf",
                            x_scale="jac", ftol=1e-15, xtol=1e-15, gtol=1e-15, max_nfev=200)
        if best is None or sol.cost < best.cost:
            best = sol
    z = best.x
    order = np.argsort(z[:N])
    r, c = z[:N][order], z[N:2 * N][order]
    k0, off = float(z[2 * N]), float(z[2 * N + 1])
    names = [f"r[{i}]" for i in range(N)] + [f"weights[{i}]" for i in range(N)] + ["k0", "offset"]
    zs = np.r_[r, c, k0, off]
    unc = analyse(resid(zs), jac(zs), names=names, values=zs,
                  bounds={f"r[{i}]": (lo[i], hi[i]) for i in range(N)}, inputs=u,
                  what="fit of PrandtlIshlinskii", warn=True, log=[True] * N + [False] * (N + 2))
    params = dict(r=r.tolist(), weights=c.tolist(), h=h, u_bound=U, k0=k0, offset=off)
    pred = prandtl_ishlinskii_force(u, r, c, k0, off)
    return FitResult(law="PrandtlIshlinskii", params=params, stderr=unc.stderr(), data=ds,
                     predicted=pred, uncertainty=unc,
                     details={"cost": float(best.cost), "nfev": int(best.nfev),
                              "element_accuracy_N": 0.5 * h * float(np.abs(c).sum())})
