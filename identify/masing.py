"""Identification of the Masing model with viscous damping, Bastien et al. (2007), §2.2.4.

    F = k w + k0 u + c u̇ − F0,  ẇ + β(w/η) ∋ u̇,  η = α/k              (eq. (11))

The loop's geometry gives k, k0, α, F0 (eqs. (26a)-(26f)): the corners A (u_min) and
C (u_max), the stick-slip corner B and the slope jump p_B^- − p_B^+ = k there; c
follows from the energy dissipated by the viscous element (eqs. (28), (30)).

Measured loops are noisy, so the corner data are not read off single samples: the
branches of eqs. (21) and (25),

    increasing: F = k0 u + kη − F0 + k·min(u − u_B, 0) + c u̇,   u_B = u_A + 2η
    decreasing: F = k0 u − kη − F0 + k·max(u − u_D, 0) + c u̇,   u_D = u_C − 2η

are fitted by least squares to every sample (linear in k0, k, F0, c for a given η, a
bounded scalar search over η); the corner values F_A, F_C and one-sided slopes p_B^±
of this fitted loop then go through eqs. (26a)-(26f)
(:func:`hystmech.analysis.masing.identify_masing`), and c through the energy balance.
"""
from __future__ import annotations

import numpy as np

from .dataset import Dataset
from .result import FitResult


def _design(u, v, up, uA, uC, eta):
    hinge = np.where(up, eta + np.minimum(u - (uA + 2 * eta), 0.0),
                     -eta + np.maximum(u - (uC - 2 * eta), 0.0))
    return np.column_stack([u, -np.ones_like(u), hinge, v])   # k0, F0, k, c


def _branch_fit(u, v, f, up, uA, uC, eta):
    A = _design(u, v, up, uA, uC, eta)
    coef, *_ = np.linalg.lstsq(A, f, rcond=None)
    r = f - A @ coef
    return coef, float(r @ r)


def fit_masing(ds: Dataset, *, vmin_frac: float = 0.0, polish: bool = True,
               uncertainty: str = "ar") -> FitResult:
    """Identify k, k0, α, F0 (eqs. (26a)-(26f)) and c (eqs. (28), (30)) of the Masing
    model with viscous damping from a record of a periodic input (constant extrema,
    e.g. Bastien et al. (2007) eq. (29)) with at least one complete cycle.

    polish=True (default) then refines k, k0, α, F0, c by output-error least squares
    from that estimate (:func:`~hystmech.identify.fit_element`), which gives standard
    errors and 95 % intervals (``uncertainty``: covariance method, "ar" holds under
    coloured noise). Returns a FitResult (law ``Masing``) whose details hold the corner
    data (u_A, u_B, u_C, F_A, F_C, pB_minus, pB_plus), the energies per cycle [J], the
    regression's own c and the geometric estimate (``geometric``) for comparison.
    """
    from scipy.optimize import minimize_scalar

    from ..analysis.masing import identify_masing
    from ..drive import drive
    from ..components import get_element_class

    cycles = ds.cycles()
    if not cycles:
        raise ValueError("Masing identification needs at least one complete displacement cycle")
    if len(cycles) >= 3:
        cycles = cycles[1:]      # the first cycle may still hold the start-up transient
    u, f, v = ds.u, ds.force, ds.velocity
    uA = float(np.median([c.u.min() for c in cycles]))
    uC = float(np.median([c.u.max() for c in cycles]))
    in_cycles = (ds.t >= cycles[0].t[0]) & (ds.t <= cycles[-1].t[-1])
    sel = in_cycles & (np.abs(v) > vmin_frac * np.max(np.abs(v)))
    up = v > 0
    us, vs, fs_, ups = u[sel], v[sel], f[sel], up[sel]
    half = 0.5 * (uC - uA)
    res = minimize_scalar(lambda e: _branch_fit(us, vs, fs_, ups, uA, uC, e)[1],
                          bounds=(1e-6 * half, half * (1 - 1e-6)), method="bounded",
                          options={"xatol": 1e-10 * half})
    # a coarse grid guards against a local minimum of the scalar search
    grid = np.linspace(0.02, 0.98, 49) * half
    costs = [_branch_fit(us, vs, fs_, ups, uA, uC, e)[1] for e in grid]
    eta = float(res.x)
    if min(costs) < res.fun:
        g = grid[int(np.argmin(costs))]
        res = minimize_scalar(lambda e: _branch_fit(us, vs, fs_, ups, uA, uC, e)[1],
                              bounds=(max(g - half / 48, 1e-6 * half), min(g + half / 48, half)),
                              method="bounded", options={"xatol": 1e-10 * half})
        eta = float(res.x)
    (k0_r, F0_r, k_r, c_r), _ = _branch_fit(us, vs, fs_, ups, uA, uC, eta)
    uB = uA + 2 * eta
    # corner data of the fitted loop (eqs. (20)-(23)); u̇ = 0 at A and C
    F_A = (k_r + k0_r) * uA - F0_r - k_r * (uA + eta)            # eq. (22a)
    F_C = k0_r * uC + k_r * eta - F0_r                             # eq. (22b)
    acc = np.gradient(v, ds.t)
    near = up & (np.abs(u - uB) <= 0.02 * (uC - uA))
    Gp = float(np.median(acc[near] / v[near])) if near.any() else 0.0   # G'_+(u_B)
    pB_minus = k_r + k0_r + c_r * Gp                               # eq. (23b)
    pB_plus = k0_r + c_r * Gp                                      # eq. (23a)
    geo = identify_masing(u_A=uA, u_B=uB, u_C=uC, F_A=F_A, F_C=F_C,
                          pB_minus=pB_minus, pB_plus=pB_plus)      # eqs. (26a)-(26f)
    k, k0, alpha, F0 = geo["k"], geo["k0"], geo["alpha"], geo["F0"]
    # c from the viscous energy per cycle (eq. (28)); π x1² Ω c for a sine (eq. (30))
    E_tot, int_v2 = [], []
    for cyc in cycles:
        E_tot.append(float(np.sum(0.5 * (cyc.force[1:] + cyc.force[:-1]) * np.diff(cyc.u))))
        du, dt = np.diff(cyc.u), np.diff(cyc.t)
        int_v2.append(float(np.sum(du * du / dt)))
    E_total = float(np.mean(E_tot))
    E_dry = 2 * alpha * (uC - uA - 2 * alpha / k)                  # parallelogram area
    c = max(E_total - E_dry, 0.0) / float(np.mean(int_v2))
    eta = alpha / k
    w0 = float(np.clip((f[0] - k0 * u[0] - c * v[0] + F0) / k, -eta, eta))
    params = dict(k=k, k0=k0, alpha=alpha, F0=F0, c=c, w0=w0)
    details = dict(u_A=uA, u_B=uB, u_C=uC, F_A=F_A, F_C=F_C, pB_minus=pB_minus, pB_plus=pB_plus,
                   E_total=E_total, E_dry=E_dry, E_viscous=E_total - E_dry,
                   E_per_cycle=E_tot, c_regression=float(c_r), geometric=dict(params))
    if polish:
        return _polish(ds, params, details, uncertainty)
    el = get_element_class("Masing")(**params)
    F = drive(el, ds.t, ds.u, ds.v).force
    return FitResult(law="Masing", params=params, data=ds, predicted=F, details=details)


def _polish(ds, params, details, uncertainty):
    """Output-error least squares of k, k0, α, F0, c, w0 started from the geometric
    estimate: the estimate whose covariance :func:`fit_element` reports. A parameter
    ending on a bound is refitted with wider bounds."""
    import warnings

    from ..components import get_element_class
    from .generic import fit_element

    frange = float(np.ptp(ds.force)) or 1.0
    vmax = float(np.max(np.abs(ds.velocity))) or 1.0
    umax = float(np.ptp(ds.u)) or 1.0
    p = dict(params)
    widen = 1.0
    for _ in range(4):
        bnds = {"k": (p["k"] / (1 + 9 * widen), p["k"] * (1 + 9 * widen)),
                "alpha": (p["alpha"] / (1 + 9 * widen), p["alpha"] * (1 + 9 * widen)),
                "k0": (0.0, p["k0"] + widen * (abs(p["k0"]) + frange / umax)),
                "F0": (p["F0"] - widen * (abs(p["F0"]) + frange), p["F0"] + widen * (abs(p["F0"]) + frange)),
                "c": (0.0, p["c"] + widen * (abs(p["c"]) + frange / vmax))}
        # w0 is fitted too: a start value read off one noisy sample biases the others
        # through the first half-cycle (the play holds it until it saturates)
        eta = p["alpha"] / p["k"]
        bnds["w0"] = (-0.999 * eta, 0.999 * eta)
        p["w0"] = float(np.clip(p["w0"], -0.99 * eta, 0.99 * eta))
        el = get_element_class("Masing")(**p)
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            r = fit_element(ds, el, bnds, n_starts=1, use_velocity=ds.v is not None,
                            uncertainty=uncertainty, diff_step=1e-6)
        p = dict(r.params)
        # k0 = 0 and c = 0 are admissible physical values, not a bound of the search
        hit = [k for k in r.uncertainty.on_bound
               if not (k in ("k0", "c") and r.params[k] == 0.0) and k != "w0"]
        if not hit:
            break
        widen *= 4.0
    for m in rec:
        warnings.warn(m.message, m.category, stacklevel=3)
    r.details.update(details)
    return r
