"""Identification of the viscous + Dahl model, symmetric and asymmetric.

    F = κx ẋ + κw w,  ẇ = ρ(ẋ − |ẋ| w)                   (eqs. (10)-(12))
    asymmetric: Fv = κx1 ẋ (ẋ ≥ 0), κx2 ẋ (ẋ ≤ 0); Fd = κw1 w (w ≥ 0), κw2 w (w ≤ 0)
                                                          (eqs. (27)-(33))

of *A modified viscous + Dahl model for large-scale MR dampers* (Ikhouane group):
κx, κw per direction by the linear regression of eq. (15) over windows where
Proposition 1 holds (w = ±1), then ρ by inverting h(ν) = 1 − (2/ν) tanh(ν/2) from the
area of the loop w versus x, eq. (19), with w recovered from eqs. (34)-(35); then
(default) an output-error least-squares refinement of the whole model, exact on its
own data at any ρ·stroke (the regression needs w = ±1 in its windows).

For the varying damper voltage of the Dyke (1996) data, :func:`fit_voltage_viscous_dahl`
fits κx, κw linear in the voltage (the paper's §3 remark), see :func:`voltage_viscous_dahl_force`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import metrics
from ._models import dahl_state, first_order_lag
from .dataset import Dataset
from .result import FitResult

CITE = "A modified viscous + Dahl model for large-scale MR dampers (Ikhouane group)"


# -- eq. (19): the loop area is inverted by hystmech.analysis (one implementation) -------------
from ..analysis.dahl_loop import rho_from_loop_area as rho_from_area  # noqa: E402


# -- eq. (15): regression windows -------------------------------------------------------------
@dataclass
class Window:
    """A regression window of eq. (15): integrate from t0, regress on [t1, t2] [s];
    direction +1 (increasing x, w = 1) or -1 (decreasing x, w = -1)."""

    t0: float
    t1: float
    t2: float
    direction: int


def find_windows(ds: Dataset, vmin: float | None = None, skip: float = 0.25,
                 t1_frac: float = 0.2, min_samples: int = 20) -> list[Window]:
    """Windows where Proposition 1 holds, found from the velocity.

    Runs of samples with |ẋ| > vmin [m/s] (default: 20 % of max |ẋ|) and one sign;
    t0 is where the run has covered ``skip`` of its stroke (so that w has converged
    to ±1, Proposition 1), t1 = t0 + t1_frac (t2 − t0) and t2 is the end of the run.
    """
    v = ds.velocity
    if vmin is None:
        vmin = 0.2 * float(np.max(np.abs(v)))
    vmin = float(vmin)
    if not vmin > 0:
        raise ValueError(f"vmin must be in (0, inf) m/s (got {vmin!r})")
    s = np.where(v > vmin, 1, np.where(v < -vmin, -1, 0))
    out = []
    k, n = 0, s.size
    while k < n:
        if s[k] == 0:
            k += 1
            continue
        j = k
        while j + 1 < n and s[j + 1] == s[k]:
            j += 1
        if j - k + 1 >= min_samples:
            stroke = abs(ds.u[j] - ds.u[k])
            moved = np.abs(ds.u[k:j + 1] - ds.u[k])
            i0 = k + int(np.argmax(moved >= skip * stroke))
            if j - i0 + 1 >= min_samples:
                t0, t2 = ds.t[i0], ds.t[j]
                out.append(Window(float(t0), float(t0 + t1_frac * (t2 - t0)), float(t2), int(s[k])))
        k = j + 1
    if not out:
        raise ValueError(f"no window with |velocity| > vmin = {vmin:g} m/s of one sign and "
                         f"at least {min_samples} samples; give the windows or lower vmin")
    return out


def _as_windows(windows) -> list[Window]:
    out = []
    for w in windows:
        if isinstance(w, Window):
            out.append(w)
            continue
        w = tuple(w)
        if len(w) == 3:      # (t0, t2, direction): t1 = t0 + 20 %
            t0, t2, d = w
            out.append(Window(float(t0), float(t0 + 0.2 * (t2 - t0)), float(t2), int(d)))
        elif len(w) == 4:
            out.append(Window(float(w[0]), float(w[1]), float(w[2]), int(w[3])))
        else:
            raise ValueError("a window is (t0, t2, direction) or (t0, t1, t2, direction)")
        if out[-1].direction not in (1, -1):
            raise ValueError(f"window direction must be +1 or -1 (got {out[-1].direction})")
        if not out[-1].t0 < out[-1].t1 < out[-1].t2:
            raise ValueError(f"window times must satisfy t0 < t1 < t2 (got {w})")
    return out


def regression_points(ds: Dataset, win: Window):
    """(α, β) of eq. (15) on [t1, t2]: α = (x(t) − x(t0))/(t − t0),
    β = (1/(t − t0)) ∫_{t0}^{t} F dτ (trapezoidal rule)."""
    seg = ds.window(win.t0, win.t2, min_samples=3)
    t, x, f = seg.t, seg.u, seg.force
    cum = np.concatenate([[0.0], np.cumsum(0.5 * (f[1:] + f[:-1]) * np.diff(t))])
    sel = t >= win.t1
    sel[0] = False
    dt = t[sel] - t[0]
    v = ds.velocity[np.searchsorted(ds.t, t[0]):][: t.size]
    if np.any(np.sign(v) != win.direction):
        k = int(np.flatnonzero(np.sign(v) != win.direction)[0])
        raise ValueError(f"window [{win.t0:g}, {win.t2:g}] s: the velocity changes sign at "
                         f"t = {t[k]:g} s, so Proposition 1 does not hold there")
    return (x[sel] - x[0]) / dt, cum[sel] / dt


def _linreg(a, b):
    A = np.column_stack([a, np.ones_like(a)])
    coef, *_ = np.linalg.lstsq(A, b, rcond=None)
    res = b - A @ coef
    dof = max(a.size - 2, 1)
    cov = np.linalg.inv(A.T @ A) * float(res @ res) / dof
    ss = float(np.sum((b - b.mean()) ** 2))
    return coef, np.sqrt(np.diag(cov)), (1 - float(res @ res) / ss) if ss > 0 else float("nan")


def regression(ds: Dataset, windows, direction: int):
    """Pooled regression of eq. (15) over the windows of one direction.
    Returns (κx, κw, se(κx), se(κw), R², α, β) with κw the dry level (> 0)."""
    pts = [regression_points(ds, w) for w in windows if w.direction == direction]
    if not pts:
        name = "increasing" if direction > 0 else "decreasing"
        raise ValueError(f"no regression window with {name} displacement")
    a = np.concatenate([p[0] for p in pts])
    b = np.concatenate([p[1] for p in pts])
    if a.size < 3 or np.ptp(a) <= 0:
        raise ValueError("regression of eq. (15) needs a velocity that varies over the window(s)")
    coef, se, r2 = _linreg(a, b)
    return float(coef[0]), float(direction * coef[1]), float(se[0]), float(se[1]), r2, a, b


# -- the model --------------------------------------------------------------------------------
def viscous_dahl_force(u, v, rho, kx1, kw1, kx2=None, kw2=None, w0=0.0):
    """Force [N] of the (asymmetric) viscous + Dahl model along u [m] with velocity v
    [m/s] (eqs. (27)-(33); kx2 = kx1, kw2 = kw1 gives eqs. (10)-(12)). Returns (F, w)."""
    kx2 = kx1 if kx2 is None else kx2
    kw2 = kw1 if kw2 is None else kw2
    w = dahl_state(np.ascontiguousarray(u, dtype=float), float(rho), float(w0))
    v = np.asarray(v, float)
    F = np.where(v >= 0, kx1 * v, kx2 * v) + np.where(w >= 0, kw1 * w, kw2 * w)
    return F, w


def _dry_state(ds, kx1, kw1, kx2, kw2):
    v = ds.velocity
    fd = ds.force - np.where(v >= 0, kx1 * v, kx2 * v)     # eq. (27)
    return np.where(fd >= 0, fd / kw1, fd / kw2)             # eqs. (34)-(35)


def rho_from_cycles(ds: Dataset, kx1, kw1, kx2, kw2, skip_first: bool = True):
    """ρ [1/m] from the loops (x, w) of the complete displacement cycles of ds, with w
    recovered by eqs. (34)-(35) and ρ by inverting eq. (19); returns (median ρ, per-cycle)."""
    w = _dry_state(ds, kx1, kw1, kx2, kw2)
    tp = ds.cycles()
    if not tp:
        raise ValueError("ρ needs at least one complete displacement cycle (min to min) in the data")
    if skip_first and len(tp) >= 3:
        tp = tp[1:]   # the first cycle may hold the transient from w(0)
    rhos = []
    for cyc in tp:
        i0 = int(np.searchsorted(ds.t, cyc.t[0]))
        i1 = i0 + cyc.t.size
        x, ww = ds.u[i0:i1], w[i0:i1]
        area = -float(np.sum(0.5 * (ww[1:] + ww[:-1]) * np.diff(x)))
        # the loop w(x) runs clockwise (w↑ above w↓): the closed integral of w dx is −area
        area = abs(area)
        rhos.append(rho_from_area(area, x.min(), x.max()))
    return float(np.median(rhos)), np.asarray(rhos)


def _vd_design(u, v, rho, w0, asymmetric):
    """Columns multiplying (κx1, κx2, κw1, κw2) (asymmetric) or (κx, κw): the force is
    linear in them once ρ and w0 fix w (eqs. (10), (27)-(33))."""
    w = dahl_state(u, float(rho), float(w0))
    if asymmetric:
        return np.column_stack([np.where(v >= 0, v, 0.0), np.where(v < 0, v, 0.0),
                                np.where(w >= 0, w, 0.0), np.where(w < 0, w, 0.0)])
    return np.column_stack([v, w])


def _output_error(ds, asymmetric, rho_starts, w0_starts):
    """Least squares of the model force on the measured one over (log ρ, w0), the κ's
    solved exactly for each (variable projection): exact on the model's own data at any
    ρ·stroke, where the regression of eq. (15) needs w = ±1 (ρ·stroke >> 1)."""
    from scipy.optimize import least_squares

    u = np.ascontiguousarray(ds.u, dtype=float)
    v, f = ds.velocity, ds.force
    scale = float(np.std(f)) or 1.0

    def solve(z):
        A = _vd_design(u, v, np.exp(z[0]), z[1], asymmetric)
        coef, *_ = np.linalg.lstsq(A, f, rcond=None)
        return coef, A

    def resid(z):
        coef, A = solve(z)
        return (A @ coef - f) / scale

    span = float(np.ptp(u)) or 1.0
    lo = np.array([np.log(1e-3 / span), -1.0])
    hi = np.array([np.log(1e6 / span), 1.0])
    cands = []
    for r0 in rho_starts:
        for w0 in w0_starts:
            z = np.clip([np.log(r0), w0], lo, hi)
            r = resid(z)
            cands.append((float(r @ r), z))
    cands.sort(key=lambda c: c[0])
    best = None
    for _, z0 in cands[:3]:
        sol = least_squares(resid, z0, bounds=(lo, hi), x_scale=[1.0, 0.1], ftol=1e-15,
                            xtol=1e-15, gtol=1e-15, max_nfev=200)
        if best is None or sol.cost < best.cost:
            best = sol
    coef, _ = solve(best.x)
    return float(np.exp(best.x[0])), float(best.x[1]), coef


def vd_residual_jacobian(ds, params, asymmetric):
    """Residuals F_model − F_measured and their Jacobian in the parameters (κ's exact,
    ρ and w0 by central differences of the exact Dahl state). Returns (names, θ, r, J)."""
    from .uncertainty import jacobian_fd

    names = ["kx1", "kw1", "kx2", "kw2", "rho", "w0"] if asymmetric else ["kx", "kw", "rho", "w0"]
    theta = np.array([params[k] for k in names], float)
    u = np.ascontiguousarray(ds.u, dtype=float)
    v, f = ds.velocity, ds.force

    def fun(th):
        if asymmetric:
            F, _ = viscous_dahl_force(u, v, th[4], th[0], th[1], th[2], th[3], w0=th[5])
        else:
            F, _ = viscous_dahl_force(u, v, th[2], th[0], th[1], w0=th[3])
        return F - f

    steps = np.maximum(np.abs(theta) * 1e-6, 1e-12)
    steps[-1] = 1e-6
    return names, theta, fun(theta), jacobian_fd(fun, theta, abs_step=steps)


def fit_viscous_dahl(ds: Dataset, windows=None, *, asymmetric: bool = True,
                     vmin: float | None = None, skip: float = 0.25, refine: bool = True,
                     uncertainty: str = "ar") -> FitResult:
    """Identify the viscous + Dahl model from a displacement/force record.

    The paper's method first: κx, κw for increasing (1) and decreasing (2)
    displacement by the regression of eq. (15) over ``windows`` (list of Window or
    (t0, t2, ±1) / (t0, t1, t2, ±1); found from the velocity by :func:`find_windows`
    when None); ρ from the loop area of the complete cycles (eq. (19)). That needs
    w = ±1 inside the windows (ρ·stroke >> 1). refine=True (default) then minimises the
    output error of the model force over (ρ, w0) with the κ's solved exactly for each
    (variable projection), started from the regression's ρ and a scan of ρ·stroke in
    [0.1, 3000]: exact on the model's own data at any ρ·stroke (where the regression
    alone is biased or gives a negative κ). asymmetric=False fits one κx, κw over both
    directions. uncertainty: covariance method of
    :func:`~hystmech.identify.uncertainty.analyse` for the final parameters.
    Returns a FitResult (law ``AsymmetricViscousDahl`` or ``ViscousDahl``) with standard
    errors, 95 % intervals (``uncertainty``), the regression's own estimates and R² in
    details, and the model's force on the data.
    """
    from .uncertainty import analyse

    user_windows = windows is not None
    details = {}
    reg = None
    try:
        wins = find_windows(ds, vmin=vmin, skip=skip) if windows is None else _as_windows(windows)
        details["windows"] = [w.__dict__ for w in wins]
        reg = _regression_estimate(ds, wins, asymmetric, details)
    except ValueError as e:
        if user_windows or not refine:
            raise
        details["regression_error"] = str(e)
    if not refine:
        kx1, kw1, kx2, kw2, rho, w0, stderr = reg
    else:
        span = float(np.ptp(ds.u)) or 1.0
        rho_starts = [10 ** e / span for e in np.linspace(-1, 3.5, 19)]
        if reg is not None:
            rho_starts.insert(0, reg[4])
            details["regression"] = dict(zip(("kx1", "kw1", "kx2", "kw2", "rho", "w0"), reg[:6]))
        rho, w0, coef = _output_error(ds, asymmetric, rho_starts, (-0.9, 0.0, 0.9))
        if asymmetric:
            kx1, kx2, kw1, kw2 = (float(c) for c in coef)
        else:
            kx1 = kx2 = float(coef[0])
            kw1 = kw2 = float(coef[1])
    for name, val, strict in (("kx1", kx1, False), ("kw1", kw1, True), ("kx2", kx2, False),
                              ("kw2", kw2, True)):
        if not (val > 0 or (not strict and val == 0)):
            raise ValueError(f"identified {name} = {val:.4g} is not positive: the data do not "
                             "follow the viscous + Dahl model (check the sign convention of "
                             "force and displacement, or the windows of eq. (15))")
    if asymmetric:
        params = dict(kx1=kx1, kw1=kw1, kx2=kx2, kw2=kw2, rho=rho, w0=w0)
        law = "AsymmetricViscousDahl"
    else:
        params = dict(kx=kx1, kw=kw1, rho=rho, w0=w0)
        law = "ViscousDahl"
    F, _ = viscous_dahl_force(ds.u, ds.velocity, rho, kx1, kw1, kx2, kw2, w0=w0)
    unc = None
    if refine:
        names, theta, r, J = vd_residual_jacobian(ds, params, asymmetric)
        unc = analyse(r, J, names=names, values=theta, method=uncertainty, inputs=ds.u,
                      what=f"fit of {law}", log=names[:-1])
        stderr = unc.stderr()
    return FitResult(law=law, params=params, stderr=stderr, data=ds, predicted=F, details=details,
                     uncertainty=unc)


def _regression_estimate(ds, wins, asymmetric, details):
    """The paper's estimate: regression of eq. (15), then ρ from the loop area (eq. (19)).
    Returns (kx1, kw1, kx2, kw2, ρ, w0, stderr)."""
    if asymmetric:
        kx1, kw1, sx1, sw1, r21, a1, b1 = regression(ds, wins, +1)
        kx2, kw2, sx2, sw2, r22, a2, b2 = regression(ds, wins, -1)
        stderr = {"kx1": sx1, "kw1": sw1, "kx2": sx2, "kw2": sw2}
        details.update(regression_r2=[r21, r22], alpha=[a1, a2], beta=[b1, b2])
    else:
        pts = [(regression_points(ds, w), w.direction) for w in wins]
        a = np.concatenate([p[0][0] for p in pts])
        b = np.concatenate([p[0][1] for p in pts])
        sgn = np.concatenate([np.full(p[0][0].size, p[1]) for p in pts])
        A = np.column_stack([a, sgn])
        coef, *_ = np.linalg.lstsq(A, b, rcond=None)
        res = b - A @ coef
        cov = np.linalg.inv(A.T @ A) * float(res @ res) / max(a.size - 2, 1)
        kx1 = kx2 = float(coef[0])
        kw1 = kw2 = float(coef[1])
        stderr = {"kx": float(np.sqrt(cov[0, 0])), "kw": float(np.sqrt(cov[1, 1]))}
        details.update(regression_r2=[1 - float(res @ res) / float(np.sum((b - b.mean()) ** 2))])
    for name, val in (("kx1", kx1), ("kw1", kw1), ("kx2", kx2), ("kw2", kw2)):
        if not val > 0:
            raise ValueError(f"identified {name} = {val:.4g} is not positive: the windows do "
                             "not satisfy Proposition 1 (pick later t0 or higher speeds)")
    rho, rhos = rho_from_cycles(ds, kx1, kw1, kx2, kw2)
    details["rho_per_cycle"] = rhos
    w_est = _dry_state(ds, kx1, kw1, kx2, kw2)
    w0 = float(np.clip(w_est[0], -1.0, 1.0))
    if len(rhos) > 1:
        stderr["rho"] = float(np.std(rhos, ddof=1) / np.sqrt(len(rhos)))
    return kx1, kw1, kx2, kw2, rho, w0, stderr


def plot_regression(result: FitResult):
    """The points (α, β) of eq. (15) and the regression lines (as the paper's Figs. 9-10)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 2, figsize=(10, 4))
    p = result.params
    for i, (kx, kw, sgn) in enumerate(((p.get("kx1", p.get("kx")), p.get("kw1", p.get("kw")), 1),
                                       (p.get("kx2", p.get("kx")), p.get("kw2", p.get("kw")), -1))):
        if "alpha" not in result.details:
            break
        a, b = result.details["alpha"][i], result.details["beta"][i]
        ax[i].plot(a, b, ".", ms=2, label="data")
        ax[i].plot(a, kx * a + sgn * kw, "-", label=f"κx = {kx:.5g}, κw = {kw:.5g}")
        ax[i].set_xlabel("(x(t) − x(t0))/(t − t0) [m/s]")
        ax[i].set_ylabel("∫F dτ/(t − t0) [N]")
        ax[i].legend()
    return fig


# -- voltage-dependent variant for the Dyke (1996) data -------------------------------------
VOLTAGE_TERMS = ("c0", "c1", "a0", "a1", "k0", "F0")


def voltage_viscous_dahl_force(t, u, v, volt, *, rho, c0, c1, a0, a1, k0=0.0, F0=0.0,
                               tau=0.0, w0=0.0):
    """Viscous + Dahl force with coefficients linear in the damper voltage V [V]:

        F = κx(V') ẋ + κw(V') w + k0 x + F0,  κx = c0 + c1 V',  κw = a0 + a1 V',
        ẇ = ρ(ẋ − |ẋ| w),  τ V̇' + V' = V

    (viscous + Dahl paper, eqs. (10)-(12), with κx, κw depending on the voltage as its
    §3 suggests; the first-order lag τ [s] of the coil and the stiffness/offset k0 [N/m],
    F0 [N] of the accumulator are extensions for the real damper, 0 disables them).
    t [s], u [m], v [m/s], volt [V] equal-length arrays. Returns F [N].
    """
    vf = first_order_lag(t, volt, tau)
    w = dahl_state(np.ascontiguousarray(u, dtype=float), float(rho), float(w0))
    return (c0 + c1 * vf) * v + (a0 + a1 * vf) * w + k0 * np.asarray(u) + F0


def _voltage_design(t, u, v, volt, rho, tau, w0, stiffness):
    vf = first_order_lag(t, volt, tau)
    w = dahl_state(np.ascontiguousarray(u, dtype=float), float(rho), float(w0))
    cols = [v, vf * v, w, vf * w, u if stiffness else np.zeros_like(u), np.ones_like(u)]
    return np.column_stack(cols)


def fit_voltage_viscous_dahl(ds: Dataset, voltage: str = "voltage", *, fit_lag: bool = True,
                             stiffness: bool = True, rho0: float | None = None) -> FitResult:
    """Fit :func:`voltage_viscous_dahl_force` to a record with a varying voltage channel.

    Given ρ and τ the force is linear in (c0, c1, a0, a1, k0, F0), so those are solved
    exactly by linear least squares inside a scipy.optimize.least_squares search over
    (log ρ, log τ) (variable projection). Returns a FitResult with law
    ``VoltageViscousDahl`` (a model of hystmech.identify, not a registry element).
    """
    from scipy.optimize import least_squares

    volt = ds.channel(voltage)
    t, u, v, f = ds.t, ds.u, ds.velocity, ds.force
    scale = float(np.std(f)) or 1.0
    span = float(np.ptp(u)) or 1.0

    def solve(z):
        rho = float(np.exp(z[0]))
        tau = float(np.exp(z[1])) if fit_lag else 0.0
        A = _voltage_design(t, u, v, volt, rho, tau, 0.0, stiffness)
        keep = np.any(A != 0, axis=0)
        coef = np.zeros(A.shape[1])
        coef[keep], *_ = np.linalg.lstsq(A[:, keep], f, rcond=None)
        return rho, tau, coef, A

    def resid(z):
        _, _, coef, A = solve(z)
        return (A @ coef - f) / scale

    # ρ start: a few candidates spread over ν = ρ·span in [1, 1000]
    best = None
    cands = [rho0] if rho0 else [10 ** e / span for e in (0.5, 1.5, 2.5)]
    for r0 in cands:
        z0 = [np.log(r0), np.log(0.01)] if fit_lag else [np.log(r0)]
        if not fit_lag:
            z0 = [np.log(r0), 0.0]
        lo = [np.log(1e-2 / span), np.log(1e-5)]
        hi = [np.log(1e5 / span), np.log(1.0)]
        sol = least_squares(resid, z0, bounds=(lo, hi), x_scale=1.0, diff_step=1e-4,
                            max_nfev=200) if fit_lag else \
            least_squares(lambda z: resid([z[0], 0.0]), z0[:1], bounds=(lo[:1], hi[:1]),
                          diff_step=1e-4, max_nfev=200)
        z = sol.x if fit_lag else np.r_[sol.x, 0.0]
        if best is None or sol.cost < best[0]:
            best = (sol.cost, z)
    rho, tau, coef, A = solve(best[1])
    params = dict(rho=rho, tau=tau, **{k: float(c) for k, c in zip(VOLTAGE_TERMS, coef)})
    F = A @ coef
    return FitResult(law="VoltageViscousDahl", params=params, data=ds, predicted=F,
                     details={"voltage_channel": voltage})


def predict_voltage_viscous_dahl(params: dict, ds: Dataset, voltage: str = "voltage") -> np.ndarray:
    """Force [N] of the fitted voltage model on another record (validation)."""
    p = dict(params)
    return voltage_viscous_dahl_force(ds.t, ds.u, ds.velocity, ds.channel(voltage), **p)
