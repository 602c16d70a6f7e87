"""Identification of the modified Dahl model, Bastien et al. (2007), §2.1.3 and §3.2.1.

    Ḟ = Λ u̇ sgn(h_u − F)|h_u − F|^μ (u̇ ≥ 0),  −Λ u̇ sgn(h_l − F)|h_l − F|^μ (u̇ ≤ 0),
    h_u = a u + b,  h_l = d u + e                                        (eqs. (3)-(4))

1. the envelopes h_u, h_l are asymptotes of the loop: straight lines fitted by least
   squares to the ends of the increasing and decreasing branches (where the loop runs
   along them), as in the paper's Fig. 9;
2. Λ and μ by nonlinear least squares on the loop (the paper's "successive comparisons
   between measured and predicted loops"): a scan over μ with Λ optimised for each,
   then a joint scipy least_squares polish;
3. optionally (``polish=True``) all six parameters together, started from 1-2.
"""
from __future__ import annotations

import warnings

import numpy as np

from .dataset import Dataset
from .generic import fit_element
from .result import FitResult


def envelope_lines(ds: Dataset, frac: float = 0.25):
    """(a, b, d, e): h_u = a u + b fitted to the increasing branches for u in the top
    ``frac`` of the stroke, h_l = d u + e to the decreasing branches in the bottom
    ``frac`` (least squares), Bastien et al. (2007), §3.2.1 and Fig. 9."""
    if not 0.0 < frac < 1.0:
        raise ValueError(f"frac must be in (0, 1) (got {frac!r})")
    u, f, v = ds.u, ds.force, ds.velocity
    lo, hi = float(u.min()), float(u.max())
    up = (v > 0) & (u >= hi - frac * (hi - lo))
    dn = (v < 0) & (u <= lo + frac * (hi - lo))
    if up.sum() < 4 or dn.sum() < 4:
        raise ValueError("the record needs both increasing and decreasing branches reaching "
                         "the ends of the stroke to fit the envelopes h_u and h_l")
    a, b = np.polyfit(u[up], f[up], 1)
    d, e = np.polyfit(u[dn], f[dn], 1)
    return float(a), float(b), float(d), float(e)


def fit_modified_dahl(ds: Dataset, *, frac: float = 0.25, mu_grid=(0.2, 0.35, 0.5, 0.75, 1.0, 1.5),
                      polish: bool = True, rtol: float = 1e-9) -> FitResult:
    """Identify a, b, d, e, Λ, μ of the modified Dahl model from a periodic loop record.

    F0 (the model's initial force) is the first measured force sample, as in the
    paper's eq. (34). Returns a FitResult (law ``ModifiedDahl``) with the final fit's
    merit and standard errors; details hold the envelope-only estimates and the μ scan.
    """
    from scipy.optimize import minimize_scalar

    from ..components import get_element_class
    from ..drive import drive

    MD = get_element_class("ModifiedDahl")
    a, b, d, e = envelope_lines(ds, frac)
    F0 = float(ds.force[0])
    gap = max(abs(a * ds.u.mean() + b - (d * ds.u.mean() + e)), 1e-12 * abs(b) + 1e-12)
    stroke = float(np.ptp(ds.u))
    scale = float(np.std(ds.force)) or 1.0

    def cost(lam, mu):
        el = MD(Lambda=lam, mu=mu, a=a, b=b, d=d, e=e, F0=F0)
        try:
            F = drive(el, ds.t, ds.u, rtol=rtol).force
        except FloatingPointError:
            return 1e6
        r = (F - ds.force) / scale
        return float(r @ r)

    scan = []
    for mu in mu_grid:
        # Λ for which the gap closes over ~1/3 of the stroke: Λ ~ gap^(1-μ)/(stroke/3)
        lam0 = max(gap ** (1.0 - mu), 1e-12) / (stroke / 3.0)
        res = minimize_scalar(lambda z: cost(np.exp(z), mu), bounds=(np.log(lam0) - 5, np.log(lam0) + 5),
                              method="bounded", options={"xatol": 1e-3})
        scan.append((float(res.fun), float(np.exp(res.x)), float(mu)))
    _, lam_s, mu_s = min(scan)
    el0 = MD(Lambda=lam_s, mu=mu_s, a=a, b=b, d=d, e=e, F0=F0)
    r = fit_element(ds, el0, {"Lambda": (lam_s / 1e3, lam_s * 1e3), "mu": (0.02, 5.0)},
                    n_starts=1, rtol=rtol)
    details = {"envelopes": dict(a=a, b=b, d=d, e=e), "mu_scan": scan,
               "lambda_mu_fit": dict(Lambda=r.params["Lambda"], mu=r.params["mu"])}
    if polish:
        # the envelope lines are only estimates (the branches may not reach their
        # asymptotes within the stroke): a polish that ends on a bound is repeated from
        # there with wider bounds
        widen = 0.5
        for _ in range(4):
            p = r.params
            bnds = {"Lambda": (p["Lambda"] / 10, p["Lambda"] * 10),
                    "mu": (0.5 * p["mu"], 2.0 * p["mu"])}
            for k in ("a", "b", "d", "e"):
                w = widen * abs(p[k]) + 1e-9
                bnds[k] = (p[k] - w, p[k] + w)
            with warnings.catch_warnings(record=True) as rec:
                warnings.simplefilter("always")
                r = fit_element(ds, r.element(), bnds, n_starts=1, rtol=rtol)
            if not r.uncertainty.on_bound:
                break
            widen *= 2.0
        for m in rec:
            warnings.warn(m.message, m.category, stacklevel=2)
    r.details.update(details)
    return r
