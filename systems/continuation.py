"""Pseudo-arclength continuation of periodic orbits in a parameter (Ω, f1, ...).

The orbits y*(p) of a family of forced assemblies ``build(p)`` (shooting residual
R(y, p) = φ_{nT(p)}(y; p) − y of :mod:`hystmech.systems.periodic`) form curves in
(y, p). They are followed by pseudo-arclength continuation (Keller's method): from a
point x_k = (y_k, p_k) with unit tangent t_k (null vector of [R_y, R_p]) the predictor
x_k + Δs·t_k is corrected by Newton's method on

    R(y, p) = 0,    t_kᵀ (x − x_k) − Δs = 0,

which passes folds (turning points in p) where plain continuation in p stops. Unknowns
are scaled by each state's excursion over the period and p by the range, so Δs is
dimensionless. The step Δs grows after quick corrections and is halved after slow or
failed ones. Along the branch the Floquet multipliers flag folds (the p-component of
the tangent changes sign, a multiplier crosses +1), period doublings (a real
multiplier crosses −1; :func:`switch_period_doubling` starts the 2T branch) and
Neimark–Sacker bifurcations (a complex pair crosses the unit circle).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..components.base import check_finite, check_positive
from .solvers import SimulationError
from .periodic import (ConvergenceError, PeriodicOrbit, Shooter, crossing_counts, floquet,
                       finish_orbit, instability, newton_shoot, peak_to_peak)


@dataclass
class Branch:
    """A continued branch of periodic orbits.

    p: parameter values; y: full states at t0 (rows); measure: the user's measure of
    each orbit (default peak-to-peak of the first DOF [m]); stable: Floquet-stable;
    multipliers: per point; n_periods: orbit period in forcing periods; special: list of
    {"kind": "fold" | "period-doubling" | "neimark-sacker" | "end", "p", "measure",
    "index"} (fold p and measure estimated by the parabola through the three points
    around the turning point); message: why the continuation stopped.
    """

    p: np.ndarray
    y: np.ndarray
    measure: np.ndarray
    stable: np.ndarray
    multipliers: list
    n_periods: int
    special: list
    message: str
    n_sims: int
    wall_s: float
    names: list = field(default_factory=list)
    monodromy: list = field(default_factory=list, repr=False)

    def folds(self) -> list:
        return [s for s in self.special if s["kind"] == "fold"]

    def bifurcations(self, kind: str) -> list:
        return [s for s in self.special if s["kind"] == kind]


def _default_measure(res) -> float:
    return peak_to_peak(res.t, res.y[:, 0])


def continue_orbits(build: Callable, p_start: float, p_end: float, *, y0=None,
                    period: Callable | None = None, n_periods: int = 1, t0: float = 0.0,
                    method: str = "auto", options: dict | None = None,
                    measure: Callable | None = None, ds: float = 0.02, ds_min: float = 1e-5,
                    ds_max: float = 0.1, max_points: int = 400, tol: float = 1e-7,
                    fd_eps: float = 1e-6, transient_periods: int = 0, n_samples: int = 256,
                    max_corrector: int = 8, progress: Callable | None = None) -> Branch:
    """Follow the periodic orbits of ``build(p)`` from p_start towards p_end.

    build(p) -> Assembly (e.g. the belt rig at Ω = p, Bastien et al. (2007), eqs.
    (38)–(52)); period(p) -> T [s] (default 2π/Ω of the assembly's Harmonic forcing);
    n_periods: orbits of period n·T (n = 3 for the Ω ≈ ω1/3 subharmonic); y0: guess of
    the first orbit's state at t0 (default the initial state after transient_periods);
    measure(SimResult over one period) -> float, stored per point; ds, ds_min, ds_max:
    dimensionless arclength steps (p scaled by |p_end − p_start|, states by their
    excursion); tol: scaled shooting residual; stops when p leaves [p_start, p_end], at
    max_points, or when Δs < ds_min. progress(fraction, message) after each point.
    """
    p_start = check_finite("p_start", p_start)
    p_end = check_finite("p_end", p_end)
    if p_end == p_start:
        raise ValueError("p_end must differ from p_start")
    for name, v in (("ds", ds), ("ds_min", ds_min), ("ds_max", ds_max), ("tol", tol),
                    ("fd_eps", fd_eps)):
        check_positive(name, v)
    if not ds_min <= ds <= ds_max:
        raise ValueError(f"ds must be in [ds_min, ds_max] = [{ds_min!r}, {ds_max!r}] (got {ds!r})")
    if int(max_points) < 2:
        raise ValueError(f"max_points must be in [2, inf) (got {max_points!r})")
    measure = measure or _default_measure
    tic = time.perf_counter()
    lo_p, hi_p = min(p_start, p_end), max(p_start, p_end)
    ps = hi_p - lo_p
    made = []

    def shooter(p):
        asm = build(p)
        T = None if period is None else period(p)
        made.append(Shooter(asm, T, n_periods=n_periods, t0=t0, method=method,
                            options=options))
        return made[-1]

    # -- first orbit: plain shooting at p_start ----------------------------------------
    sh = shooter(p_start)
    y = sh.assembly.initial_state() if y0 is None else np.asarray(y0, float).ravel().copy()
    for _ in range(int(transient_periods)):
        y = sh.flow(y)
    scale = sh.scales(y)
    y, J, err, it, fy = newton_shoot(sh, y, scale, tol=tol, eps=fd_eps)
    free = sh.free
    m = free.size

    def sample(sh, y):
        res = sh.sample(y, n_samples)
        return res, sh.scales(y, res)

    res, scale = sample(sh, y)

    def full_jac(sh, y, p, fy, scale):
        """Scaled [R_y, R_p] at (y, p) and the monodromy."""
        M, _ = sh.jacobian(y, scale, fy, eps=fd_eps)
        dp = fd_eps * max(abs(p), ps) * 10.0
        p2 = p + dp if p + dp <= hi_p or p - dp < lo_p else p - dp
        sh2 = shooter(p2)
        y2 = y.copy()
        f2 = sh2.flow(y2)
        s = scale[free]
        G = np.empty((m, m + 1))
        G[:, :m] = (M - np.eye(m)) * s[None, :] / s[:, None]
        G[:, m] = (f2[free] - fy[free]) / (p2 - p) * ps / s
        return G, M

    def tangent(G, t_prev):
        # null vector of G: the last right singular vector
        _, _, Vt = np.linalg.svd(G)
        t = Vt[-1]
        t = t / np.linalg.norm(t)
        if t_prev is not None and float(t @ t_prev) < 0:
            t = -t
        return t

    fy = sh.flow(y)
    G, M = full_jac(sh, y, p_start, fy, scale)
    direction = 1.0 if p_end > p_start else -1.0
    t = tangent(G, None)
    if t[m] * direction < 0:
        t = -t

    P, Y, MEAS, ST, MU, MON = [], [], [], [], [], []
    special = []

    def record(p, y, res, M):
        mu = floquet(M)
        P.append(p)
        Y.append(y.copy())
        MEAS.append(float(measure(res)))
        ST.append(instability(mu) is None)
        MU.append(mu)
        MON.append(M)

    record(p_start, y, res, M)
    p = p_start
    tp_prev = t[m]
    message = f"reached max_points = {max_points}"
    h = float(ds)
    while len(P) < max_points:
        # predictor in scaled coordinates (states relative to the current scale)
        s = scale[free]
        x = np.concatenate([y[free] / s, [p / ps]])
        xp = x + h * t
        yg = y.copy()
        yg[free] = xp[:m] * s
        pg = xp[m] * ps
        ok = False
        A = np.vstack([G, t[None, :]])
        k = 0
        try:
            shk = shooter(pg)
            yg = np.clip(yg, shk.lo, shk.hi)
            fg = shk.flow(yg)
            r = (fg[free] - yg[free]) / s
            xg = np.concatenate([yg[free] / s, [pg / ps]])
            g = float(t @ (xg - x) - h)
            for k in range(1, max_corrector + 1):
                if float(np.max(np.abs(r))) <= tol and abs(g) <= 1e-6:
                    ok = True
                    break
                dx = -np.linalg.solve(A, np.concatenate([r, [g]]))
                pn = (xg[m] + dx[m]) * ps
                shn = shooter(pn)
                yn = yg.copy()
                yn[free] = (xg[:m] + dx[:m]) * s
                yn = np.clip(yn, shn.lo, shn.hi)
                fn = shn.flow(yn)
                rn = (fn[free] - yn[free]) / s
                if not np.all(np.isfinite(rn)):
                    break
                xn = np.concatenate([yn[free] / s, [pn / ps]])
                d = xn - xg
                # Broyden update of the R rows; the arclength row is exact
                A[:m] += np.outer(rn - r - A[:m] @ d, d) / max(float(d @ d), 1e-300)
                yg, pg, fg, r, xg = yn, pn, fn, rn, xn
                g = float(t @ (xn - x) - h)
            else:
                ok = float(np.max(np.abs(r))) <= tol and abs(g) <= 1e-6
        except (SimulationError, ConvergenceError, ValueError, np.linalg.LinAlgError):
            ok = False
        if not ok:
            h *= 0.5
            if h < ds_min:
                message = f"step size fell below ds_min = {ds_min:g} at p = {p:.6g}"
                break
            continue
        # accepted point: fresh Jacobian, tangent, measure, multipliers
        shk = shooter(pg)
        res, scale_new = sample(shk, yg)
        G, M = full_jac(shk, yg, pg, fg, scale_new)
        # express the previous tangent in the new scaling to orient the new one
        t_old = t.copy()
        t_old[:m] *= s / scale_new[free]
        t_new = tangent(G, t_old)
        y, p, scale, t = yg, pg, scale_new, t_new
        record(p, y, res, M)
        i = len(P) - 1
        if tp_prev * t[m] < 0 and i >= 2:
            special.append(_fold(P, MEAS, i))
        tp_prev = t[m]
        c0, c1 = crossing_counts(MU[i - 1]), crossing_counts(MU[i])
        if c0[1] != c1[1]:
            special.append(_crossing("period-doubling", P, MEAS, MU, i, -1.0))
        if c0[2] != c1[2]:
            special.append(_crossing("neimark-sacker", P, MEAS, MU, i, None))
        if progress is not None:
            progress(min(1.0, abs(p - p_start) / ps), f"p = {p:.6g}, measure = {MEAS[-1]:.6g}, "
                     f"{'stable' if ST[-1] else 'unstable'}")
        if k <= 3:
            h = min(ds_max, 1.5 * h)
        elif k >= 6:
            h = max(ds_min, 0.5 * h)
        if not lo_p - 1e-12 * ps <= p <= hi_p + 1e-12 * ps:
            message = f"left the parameter range at p = {p:.6g}"
            break
    return Branch(p=np.array(P), y=np.array(Y), measure=np.array(MEAS), stable=np.array(ST),
                  multipliers=MU, n_periods=int(n_periods), special=special, message=message,
                  n_sims=sum(x.n_sims for x in made), wall_s=time.perf_counter() - tic, names=list(sh.names),
                  monodromy=MON)


def _fold(P, MEAS, i):
    """Fold between points i−2 .. i: vertex of the parabola p(σ) through them (σ the
    point index), measure interpolated at the same σ."""
    sig = np.array([0.0, 1.0, 2.0])
    pp = np.array(P[i - 2:i + 1])
    mm = np.array(MEAS[i - 2:i + 1])
    c = np.polyfit(sig, pp, 2)
    sv = -c[1] / (2 * c[0]) if c[0] != 0 else 1.0
    sv = min(max(sv, 0.0), 2.0)
    return {"kind": "fold", "p": float(np.polyval(c, sv)),
            "measure": float(np.polyval(np.polyfit(sig, mm, 2), sv)), "index": i - 1}


def _crossing(kind, P, MEAS, MU, i, target):
    """Bifurcation between points i−1 and i, located by linear interpolation of the
    modulus of the crossing multiplier to 1."""
    def lead(mu):
        mu = np.asarray(mu)
        if target is not None:
            cand = mu[np.abs(mu.imag) <= 1e-3 * np.abs(mu)]
            cand = cand[cand.real < 0] if target < 0 else cand[cand.real > 0]
        else:
            cand = mu[np.abs(mu.imag) > 1e-3 * np.abs(mu)]
        return float(np.abs(cand).max()) if cand.size else 0.0
    a, b = lead(MU[i - 1]), lead(MU[i])
    w = 0.5 if a == b else min(max((1.0 - a) / (b - a), 0.0), 1.0)
    return {"kind": kind, "p": float(P[i - 1] + w * (P[i] - P[i - 1])),
            "measure": float(MEAS[i - 1] + w * (MEAS[i] - MEAS[i - 1])), "index": i}


def switch_period_doubling(branch: Branch, build: Callable, index: int | None = None, *,
                           p_end: float, amplitude: float = 0.05, **kw) -> Branch:
    """Start the period-2n·T branch born at a period doubling of ``branch`` and follow it
    towards p_end. index: the point just past the bifurcation (default the first
    period-doubling found); the guess is the n·T orbit plus ``amplitude`` × (its
    excursion) along the eigenvector of the multiplier nearest −1, tried on both sides
    (the doubled branch exists on the side where the n·T orbit is unstable).
    kw: further options of :func:`continue_orbits`."""
    if index is None:
        pds = branch.bifurcations("period-doubling")
        if not pds:
            raise ValueError("the branch has no period-doubling point; give index")
        index = pds[0]["index"]
    index = int(index)
    if not 0 <= index < branch.p.size:
        raise ValueError(f"index must be in [0, {branch.p.size - 1}] (got {index!r})")
    mu = np.asarray(branch.multipliers[index])
    M = branch.monodromy[index]
    w, V = np.linalg.eig(M)
    j = int(np.argmin(np.abs(w + 1.0)))
    v = np.real(V[:, j])
    p = float(branch.p[index])
    n2 = 2 * branch.n_periods
    opts = {k: kw[k] for k in ("t0", "method", "options") if k in kw}
    per = kw.get("period")
    sh = Shooter(build(p), None if per is None else per(p), n_periods=n2, **opts)
    y1 = branch.y[index]
    scale = sh.scales(y1)
    free = sh.free
    vn = v / np.max(np.abs(v / scale[free]))
    last = None
    for a in (amplitude, 2 * amplitude, 4 * amplitude):
        for sg in (1.0, -1.0):
            y = y1.copy()
            y[free] += sg * a * vn
            try:
                y2, _, err, it, fy = newton_shoot(sh, y, scale, tol=kw.get("tol", 1e-7))
            except (ConvergenceError, SimulationError) as e:
                last = e
                continue
            if np.max(np.abs((y2 - y1)[free] / scale[free])) > 1e-3:
                kw2 = {k: v for k, v in kw.items() if k not in ("n_periods",)}
                return continue_orbits(build, p, p_end, y0=y2, n_periods=n2, **kw2)
    raise ConvergenceError(f"switch_period_doubling: no period-{n2} orbit found near p = {p:g} "
                           f"(multiplier {mu[np.argmin(np.abs(mu + 1))]:.4g}; last: {last})")
