"""Generic identification: fit any force element's parameters to a measured force history.

Nonlinear least squares (scipy.optimize.least_squares, trust-region reflective) on
the residual r = (F_model(t) − F_measured(t)) / std(F_measured), the model force being
``hystmech.drive(element, t, u)``; bounds per parameter, several starts (the given
values, then seeded random points inside the bounds), and parameter standard errors
from the Jacobian at the optimum: cov = s² (JᵀJ)⁻¹, s² = ‖r‖² / (m − n).
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from .dataset import Dataset
from .result import FitResult


def _element_class(law):
    from ..components import ForceElement, get_element_class

    if isinstance(law, str):
        return get_element_class(law), {}
    if isinstance(law, ForceElement):
        return type(law), dict(law.params)
    if isinstance(law, type) and issubclass(law, ForceElement):
        return law, {}
    raise ValueError(f"law must be an element class name, class or instance (got {law!r})")


class _Map:
    """Optimisation variables z <-> parameters p: log scale for positive bounds spanning
    more than a decade, linear (normalised by the bound width) otherwise."""

    def __init__(self, bounds: dict):
        self.names = list(bounds)
        self.lo = np.array([float(bounds[k][0]) for k in self.names])
        self.hi = np.array([float(bounds[k][1]) for k in self.names])
        for k, lo, hi in zip(self.names, self.lo, self.hi):
            if not (np.isfinite(lo) and np.isfinite(hi) and hi > lo):
                raise ValueError(f"bounds of {k} must be finite with lo < hi (got ({lo!r}, {hi!r}))")
        self.log = (self.lo > 0) & (self.hi / np.where(self.lo > 0, self.lo, 1.0) > 10.0)

    def to_z(self, p):
        p = np.asarray(p, float)
        return np.where(self.log, np.log(np.where(self.log, p, 1.0)),
                        (p - self.lo) / (self.hi - self.lo))

    def to_p(self, z):
        z = np.asarray(z, float)
        return np.where(self.log, np.exp(np.where(self.log, z, 0.0)), self.lo + z * (self.hi - self.lo))

    def dp_dz(self, p):
        return np.where(self.log, p, self.hi - self.lo)

    @property
    def zbounds(self):
        return self.to_z(self.lo), self.to_z(self.hi)


def _expand(bounds: dict, start: dict, inst_params: dict):
    """Scalar optimisation variables for possibly array-valued parameters: a parameter
    whose start/instance value (or bound) is an array of N values becomes N variables
    ``name[i]``. Returns (scalar bounds dict, scalar start dict, shapes name -> N or None)."""
    sb, ss, shapes = {}, {}, {}
    for k, bk in bounds.items():
        ref = start.get(k, inst_params.get(k))
        lo, hi = (np.asarray(b, float) for b in bk)
        size = max(np.size(ref) if ref is not None else 1, lo.size, hi.size)
        arr = ref is not None and np.ndim(ref) > 0 or lo.ndim > 0 or hi.ndim > 0
        if not arr:
            sb[k] = (float(lo), float(hi))
            if ref is not None:
                ss[k] = float(ref)
            shapes[k] = None
            continue
        lo, hi = np.broadcast_to(lo, size), np.broadcast_to(hi, size)
        r = None if ref is None else np.broadcast_to(np.asarray(ref, float), size)
        for i in range(size):
            sb[f"{k}[{i}]"] = (float(lo[i]), float(hi[i]))
            if r is not None:
                ss[f"{k}[{i}]"] = float(r[i])
        shapes[k] = size
    return sb, ss, shapes


def _collect(names, p, shapes):
    """Constructor keywords from the scalar variables (arrays re-assembled)."""
    kw = {}
    it = dict(zip(names, (float(x) for x in p)))
    for k, size in shapes.items():
        kw[k] = it[k] if size is None else np.array([it[f"{k}[{i}]"] for i in range(size)])
    return kw


def fit_element(ds: Dataset, law, bounds: dict, *, start: dict | None = None,
                fixed: dict | None = None, n_starts: int = 3, seed: int = 0,
                use_velocity: bool = False, rtol: float = 1e-6, decimate: int = 1,
                max_nfev: int = 200, x0=None, tol: float = 1e-10,
                diff_step: float = 1e-4, uncertainty: str = "ar") -> FitResult:
    """Fit the parameters named in ``bounds`` of a force element to ds.force.

    law: element class name (e.g. "BoucWen"), class, or an instance whose parameters
    give the start values and the fixed ones. bounds: name -> (lo, hi) in SI units
    (kept inside the law's allowed range); an array parameter (Maxwell-slip k, delta)
    is fitted element-wise, its bounds scalars or arrays, its variables named
    ``k[0], k[1], ...`` in stderr. start: start values (default: the instance's
    values, else the geometric/arithmetic middle of the bounds). fixed: other
    constructor keywords. n_starts: the start plus n_starts − 1 random points
    (seeded); a random point the law rejects (e.g. LuGre Fs < Fc) is redrawn, up to 50
    times, and skipped if none is admissible; an iterate the law rejects gets a large
    residual (the trust region shrinks away from it). use_velocity: drive with the
    measured velocity ds.v. decimate: fit on every k-th sample (faster; the prediction
    uses all samples). tol: ftol = xtol = gtol of least_squares; diff_step: relative
    finite-difference step in the scaled variables (not too small: adaptive integrators
    make the force slightly noisy in the parameters). uncertainty: covariance method
    of :func:`hystmech.identify.uncertainty.analyse` ("ar", "hac", "classic", "bootstrap").

    Returns a FitResult with params (all constructor keywords), merit, stderr and
    ``uncertainty`` (covariance, 95 % intervals, residual tests, identifiability) and
    details (cost per start, nfev, convergence status). Warns (RuntimeWarning) when no
    start converges, a parameter combination is not identifiable or a parameter ends
    on a bound.
    """
    from scipy.optimize import least_squares

    from ..drive import drive
    from .uncertainty import analyse

    cls, inst_params = _element_class(law)
    if not bounds:
        raise ValueError("bounds must name at least one parameter to fit")
    fixed = {**inst_params, **dict(fixed or {})}
    for k in bounds:
        fixed.pop(k, None)
    sbounds, sstart, shapes = _expand(bounds, dict(start or {}), inst_params)
    mp = _Map(sbounds)
    p_start = np.array([float(sstart[k]) if k in sstart else
                        (math.sqrt(lo * hi) if lg else 0.5 * (lo + hi))
                        for k, lo, hi, lg in zip(mp.names, mp.lo, mp.hi, mp.log)])
    if np.any(p_start < mp.lo) or np.any(p_start > mp.hi):
        k = mp.names[int(np.flatnonzero((p_start < mp.lo) | (p_start > mp.hi))[0])]
        raise ValueError(f"start value of {k} must lie inside its bounds {sbounds[k]}")
    decimate = max(int(decimate), 1)
    sub = ds if decimate == 1 else ds._take(slice(None, None, decimate))
    t, u, f = sub.t, sub.u, sub.force
    v = sub.v if use_velocity else None
    scale = float(np.std(f)) or 1.0

    def make(p):
        kw = dict(fixed)
        kw.update(_collect(mp.names, p, shapes))
        return cls(**kw)

    def feasible(p):
        try:
            make(p)
            return True
        except ValueError:
            return False

    def resid(z):
        try:
            el = make(mp.to_p(z))
        except ValueError:
            return np.full(f.size, 1e3)
        try:
            F = drive(el, t, u, v, rtol=rtol, x0=x0).force
        except FloatingPointError:
            return np.full(f.size, 1e3)
        return (F - f) / scale

    if not feasible(p_start):
        try:
            make(p_start)
        except ValueError as e:
            raise ValueError(f"{cls.__name__} rejects the start values: {e}") from None
    zlo, zhi = mp.zbounds
    rng = np.random.default_rng(seed)
    starts = [np.clip(mp.to_z(p_start), zlo, zhi)]
    skipped = redrawn = 0
    for _ in range(max(int(n_starts), 1) - 1):
        for _try in range(50):
            z0 = zlo + rng.random(zlo.size) * (zhi - zlo)
            if feasible(mp.to_p(z0)):
                starts.append(z0)
                break
            redrawn += 1
        else:
            skipped += 1
    runs = []
    for z0 in starts:
        sol = least_squares(resid, z0, bounds=(zlo, zhi), max_nfev=max_nfev, x_scale=1.0,
                            diff_step=diff_step, ftol=tol, xtol=tol, gtol=tol)
        runs.append(sol)
    best = min(runs, key=lambda s: s.cost)
    if not any(s.status > 0 for s in runs):
        warnings.warn(f"fit of {cls.__name__}: no start converged within {max_nfev} evaluations "
                      f"({best.message}); the result is the best point found", RuntimeWarning,
                      stacklevel=2)
    p_best = mp.to_p(best.x)
    # Jacobian in the parameters themselves: ∂r/∂p = ∂r/∂z / (dp/dz)
    Jp = best.jac / mp.dp_dz(p_best)[None, :]
    unc = analyse(best.fun, Jp, names=mp.names, values=p_best,
                  bounds=dict(zip(mp.names, zip(mp.lo, mp.hi))), method=uncertainty,
                  inputs=u, what=f"fit of {cls.__name__}", warn=False, log=mp.lo > 0)
    for m in unc.warnings:
        warnings.warn(m, RuntimeWarning, stacklevel=2)
    el = make(p_best)
    F = drive(el, ds.t, ds.u, ds.v if use_velocity else None, rtol=rtol, x0=x0).force
    params = dict(el.params)
    details = {"costs": [float(s.cost) for s in runs], "nfev": [int(s.nfev) for s in runs],
               "status": [int(s.status) for s in runs], "message": best.message,
               "fitted": list(mp.names), "starts_skipped_infeasible": skipped,
               "starts_redrawn_infeasible": redrawn}
    return FitResult(law=cls.__name__, params=params, stderr=unc.stderr(), data=ds, predicted=F,
                     details=details, uncertainty=unc)
