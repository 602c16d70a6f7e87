"""Pseudo-arclength continuation of periodic orbits in a parameter (Ω, f1, ...).

The orbits y*(p) of a family of forced assemblies ``build(p)`` (shooting residual
R(y, p) = φ_{nT(p)}(y; p) − y of :mod:`hystmech.systems.periodic.shooting`) form curves in
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

from ...components.base import check_finite, check_positive
from ..result import SimulationError
from ..methods import engine
from .monodromy import multiplier_errors
from .shooting import (ConvergenceError, Shooter, crossing_counts, default_fd_eps,
                       drop_neutral, floquet, min_norm_solve, newton_shoot, peak_to_peak)
from .stability import classify

BROYDEN_MU_ERR = 0.05   # error bound given to the multipliers of a Broyden-updated
                        # monodromy; a point whose multipliers come closer than this to
                        # the unit circle gets a fresh one (and its own error estimate)


@dataclass
class Branch:
    """A continued branch of periodic orbits.

    p: parameter values; y: full states at t0 (rows); measure: the user's measure of
    each orbit (default peak-to-peak of the first DOF [m]); stability: per point
    "stable", "unstable" or "undecided" (:mod:`hystmech.systems.periodic.stability`: every
    multiplier against 1 at its own error bound, ``multiplier_errors``); stable:
    stability == "stable"; multipliers: per point; n_periods: orbit period in forcing
    periods; special: list of {"kind": "fold" | "branch-point" | "period-doubling" |
    "neimark-sacker" | "restart", "p", "measure", "index", "exact"}: folds of smooth
    assemblies are located exactly (``exact`` True: Newton on the bordered fold system,
    :func:`hystmech.systems.periodic.bifurcation.locate_fold`, with its "multiplier" and "y"),
    else by the parabola through the three points around the turning point; the other
    crossings by interpolating the crossing multiplier's modulus to 1; message: why the
    continuation stopped; phase: the section of each point, t0 + phase·T (it moves off
    velocity reversals); monodromy_source: "variational", "projection-jacobian"
    (inclusions by the projection scheme) or "finite-differences".
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
    phase: np.ndarray = field(default=None, repr=False)
    fresh: np.ndarray = field(default=None, repr=False)
    stability: np.ndarray = field(default=None)
    multiplier_errors: list = field(default_factory=list, repr=False)
    monodromy_source: str = ""

    def folds(self) -> list:
        return [s for s in self.special if s["kind"] == "fold"]

    def bifurcations(self, kind: str) -> list:
        return [s for s in self.special if s["kind"] == kind]


def _default_measure(res) -> float:
    return peak_to_peak(res.t, res.y[:, 0])


# one structure run many times: its generated code, the fastest per step, compiled
# once, unless $HYSTMECH_ENGINE says otherwise (methods/engine.py: use)
@engine.use("generated", keep_explicit=True)
def continue_orbits(build: Callable, p_start: float, p_end: float, *, y0=None,
                    period: Callable | None = None, n_periods: int = 1, t0: float = 0.0,
                    method: str = "auto", options: dict | None = None,
                    measure: Callable | None = None, ds: float = 0.02, ds_min: float = 1e-5,
                    ds_max: float = 0.1, max_points: int = 400, tol: float = 1e-7,
                    fd_eps: float | None = None, transient_periods: int = 0, n_samples: int = 256,
                    max_corrector: int = 8, jacobian_every: int = 1, max_restarts: int = 3,
                    state_weight: float = 1.0, max_measure_step: float | None = None,
                    closed_tol: float = 1.5, p_bounds=None,
                    progress: Callable | None = None) -> Branch:
    """Follow the periodic orbits of ``build(p)`` from p_start towards p_end.

    build(p) -> Assembly (e.g. the belt rig at Ω = p, Bastien et al. (2007), eqs.
    (38)–(52)); period(p) -> T [s] (default 2π/Ω of the assembly's Harmonic forcing);
    n_periods: orbits of period n·T (n = 3 for the Ω ≈ ω1/3 subharmonic); y0: guess of
    the first orbit's state at t0 (default the initial state after transient_periods);
    measure(SimResult over one period) -> float, stored per point; ds, ds_min, ds_max:
    dimensionless arclength steps (p scaled by |p_end − p_start|, states by their
    excursion); tol: scaled shooting residual; stops when p leaves [p_start, p_end], at
    max_points, or when Δs < ds_min and max_restarts restarts are used (a restart
    shoots at fixed p one step ds further, past a point where the orbits' map is not
    smooth, and is listed in ``special`` as kind "restart"). jacobian_every: a finite-difference Jacobian
    (and monodromy) every so many points, Broyden updates from the corrector between
    them (also fresh after a slow correction, a failed step, a moved section, or when
    the updated monodromy signals a bifurcation, which is thereby confirmed);
    ``Branch.fresh`` says which points have fresh multipliers; smooth assemblies with
    compiled jac kernels get the exact (variational) monodromy at every point, whatever
    jacobian_every says. state_weight < 1 lets
    the steps in p grow where the orbit changes fast (e.g. small superharmonic wiggles);
    max_measure_step: a step is retried at half length when the measure changes by more
    than this fraction (resolves sharp resonance peaks).
    p_bounds: (low, high) the range to stay in when wider than [p_start, p_end].
    closed_tol: a branch that comes back to within closed_tol steps of its first point
    (in the scaled coordinates, after moving away more than 4·ds) is closed — an isola —
    and stops there (0: never). Branch points, period doublings and Neimark–Sacker
    points of smooth assemblies are located exactly (``exact`` True, with their
    "multiplier", its "angle" [rad], "y" and "phase":
    :func:`hystmech.systems.periodic.bifurcation.locate_crossing`).
    progress: True (a bar on stderr), a callable progress(fraction, message) called after
    each point, or None.
    """
    from ...progress import resolve

    progress = resolve(progress, "continuation")
    p_start = check_finite("p_start", p_start)
    p_end = check_finite("p_end", p_end)
    if p_end == p_start:
        raise ValueError("p_end must differ from p_start")
    if fd_eps is None:
        fd_eps = default_fd_eps(build(p_start))
    for name, v in (("ds", ds), ("ds_min", ds_min), ("ds_max", ds_max), ("tol", tol),
                    ("fd_eps", fd_eps), ("state_weight", state_weight)):
        check_positive(name, v)
    if not (math.isfinite(closed_tol) and closed_tol >= 0):
        raise ValueError(f"closed_tol must be in [0, inf) (got {closed_tol!r})")
    if not ds_min <= ds <= ds_max:
        raise ValueError(f"ds must be in [ds_min, ds_max] = [{ds_min!r}, {ds_max!r}] (got {ds!r})")
    if int(jacobian_every) < 1:
        raise ValueError(f"jacobian_every must be in [1, inf) (got {jacobian_every!r})")
    if int(max_points) < 2:
        raise ValueError(f"max_points must be in [2, inf) (got {max_points!r})")
    measure = measure or _default_measure
    tic = time.perf_counter()
    lo_p, hi_p = min(p_start, p_end), max(p_start, p_end)
    if p_bounds is not None:
        # a wider range to stay in (e.g. an isola found at an inner p, which comes back
        # past its first point): the travel starts towards p_end, stops outside p_bounds
        lo_p, hi_p = (float(v) for v in p_bounds)
        if not (math.isfinite(lo_p) and math.isfinite(hi_p) and lo_p <= p_start <= hi_p
                and lo_p <= p_end <= hi_p and lo_p < hi_p):
            raise ValueError(f"p_bounds must be (low, high) around p_start and p_end "
                             f"(got {p_bounds!r})")
    ps = hi_p - lo_p
    made = []
    sec = {"phase": 0.0}     # section t0 + phase·T(p), moved off velocity reversals
    tols = {"scale": None}   # excursions of the last orbit: absolute tolerances

    def shooter(p):
        asm = build(p)
        T = None if period is None else period(p)
        made.append(Shooter(asm, T, n_periods=n_periods, t0=t0, phase=sec["phase"],
                            method=method, options=options))
        if tols["scale"] is not None:
            made[-1].use_scale(tols["scale"])
        return made[-1]

    def converge(sh, y):
        """Newton at fixed p with the section moved off velocity reversals (before, on
        the guess's period, and after, on the orbit's). Returns (shooter, y, φ(y),
        sample, scale)."""
        res = sh.sample(y, n_samples)
        for attempt in range(3):
            if sh.assembly.elements and attempt < 2:
                q = sh.section_quality(res)
                if q[0] < 0.3:
                    k = int(np.argmax(q[:-1]))
                    sec["phase"] += k / n_samples * sh.n_periods
                    y = res.y[k].copy()
                    sh = shooter(float(p_now[0]))
                elif attempt > 0:
                    break
            elif attempt > 0:
                break
            scale = sh.scales(y)
            tols["scale"] = sh.use_scale(scale)
            y, _, _, _, fy = newton_shoot(sh, y, scale, tol=tol, eps=fd_eps)
            res = sh.sample(y, n_samples)
        return sh, y, fy, res, sh.scales(y, res)

    # -- first orbit: plain shooting at p_start ----------------------------------------
    p_now = [p_start]
    sh = shooter(p_start)
    y = sh.assembly.initial_state() if y0 is None else np.asarray(y0, float).ravel().copy()
    for _ in range(int(transient_periods)):
        y = sh.flow(y)
    sh, y, fy, res, scale = converge(sh, y)
    exact = sh.variational() is not None
    proj_exact = sh.projection_map() is not None
    if exact or proj_exact:
        jacobian_every = 1      # the variational/projection monodromy is cheap and exact
    free = sh.free
    m = free.size
    # states in units of excursion·√m/state_weight: a unit step moves the states as a
    # whole as much as the parameter by its whole range (state_weight = 1)
    sw = math.sqrt(max(m, 1)) / state_weight
    tol_r = tol / sw

    def fd_jac(sh, y, p, fy, scale):
        """Unscaled [R_y, R_p] at (y, p) by finite differences (m + 1 periods)."""
        M, _ = sh.jacobian(y, scale, fy, eps=fd_eps)
        dp = 1e-5 * max(abs(p), ps)
        p2 = p + dp if p + dp <= hi_p or p - dp < lo_p else p - dp
        f2 = shooter(p2).flow(y.copy())
        Gu = np.empty((m, m + 1))
        Gu[:, :m] = M - np.eye(m)
        Gu[:, m] = (f2[free] - fy[free]) / (p2 - p)
        return Gu

    def scaled(Gu, s):
        G = np.empty_like(Gu)
        G[:, :m] = Gu[:, :m] * s[None, :] / s[:, None]
        G[:, m] = Gu[:, m] * ps / s
        return G

    def unscaled(G, s):
        Gu = np.empty_like(G)
        Gu[:, :m] = G[:, :m] * s[:, None] / s[None, :]
        Gu[:, m] = G[:, m] * s / ps
        return Gu

    def tangent(G, t_prev=None, sign_p=None):
        """Unit null vector of G = [R_y, R_p] (m × (m+1)), oriented along t_prev or by
        the sign of its p component. Where p parameterises the branch (R_p in the range
        of R_y) it is (−R_y⁺R_p, 1) normalised, with the minimum-norm R_y⁺: when the
        orbits are not isolated (a neutral state, e.g. a stuck Masing slider, μ = 1)
        this is the tangent that does not drift along the family. At a fold (R_y
        singular, R_p outside its range) it is the last right singular vector."""
        Gy, Gp = G[:, :m], G[:, m]
        ty, *_ = np.linalg.lstsq(Gy, -Gp, rcond=1e-6)
        res = np.linalg.norm(Gy @ ty + Gp)
        regular = bool(np.all(np.isfinite(ty)) and
                       res <= 1e-6 * max(np.linalg.norm(Gp), 1e-300))
        t = np.concatenate([ty, [1.0]]) if regular else np.linalg.svd(G)[2][-1]
        t = t / np.linalg.norm(t)
        if t_prev is not None and float(t @ t_prev) < 0:
            t = -t
        if sign_p is not None and t[m] * sign_p < 0:
            t = -t
        tangent.regular = regular
        return t

    Gu = fd_jac(sh, y, p_start, fy, scale)
    t = tangent(scaled(Gu, scale[free] * sw), sign_p=1.0 if p_end > p_start else -1.0)

    P, Y, MEAS, ST, MU, MON, PH, FRESH, ERR = [], [], [], [], [], [], [], [], []
    special = []

    def record(p, y, res, Gu, fresh, shr, scl, mu_err=None):
        M = Gu[:, :m] + np.eye(m)
        mu = floquet(M)
        if mu_err is not None:
            mu, err = mu_err        # computed already (at a turning point)
        elif not fresh and np.all(np.abs(np.abs(mu) - 1.0) > BROYDEN_MU_ERR):
            err = np.full(mu.size, BROYDEN_MU_ERR)
        else:
            # fresh monodromy with its own error estimate (and the stuck sliders'
            # neutral rows removed); a Broyden one near the circle is replaced
            mu, err = _fresh_multipliers(shr, y, scl, M if fresh else None, fd_eps, free)
            fresh = True
        P.append(p)
        Y.append(y.copy())
        MEAS.append(float(measure(res)))
        ST.append(classify(mu, err))
        MU.append(mu)
        ERR.append(err)
        MON.append(M)
        PH.append(sec["phase"])
        FRESH.append(fresh)

    record(p_start, y, res, Gu, True, sh, scale)
    p = p_start
    tp_prev = t[m]
    message = f"reached max_points = {max_points}"
    h = float(ds)
    since_fresh = 0
    restarts = 0
    far = 0.0
    t_first = t[m]
    while len(P) < max_points:
        s = scale[free] * sw
        x = np.concatenate([y[free] / s, [p / ps]])
        xp = x + h * t
        yg = y.copy()
        yg[free] = xp[:m] * s
        pg = xp[m] * ps
        ok = False
        G = scaled(Gu, s)
        A = np.vstack([G, t[None, :]])
        k = 0
        try:
            shk = shooter(pg)
            yg = np.clip(yg, shk.lo, shk.hi)
            res = shk.sample(yg, n_samples)     # the period run, sampled for the measure
            fg = res.y[-1]
            r = (fg[free] - yg[free]) / s
            xg = np.concatenate([yg[free] / s, [pg / ps]])
            g = float(t @ (xg - x) - h)
            for k in range(1, max_corrector + 1):
                if float(np.max(np.abs(r))) <= tol_r and abs(g) <= 1e-6:
                    ok = True
                    break
                dx = -min_norm_solve(A, np.concatenate([r, [g]]))
                pn = (xg[m] + dx[m]) * ps
                shn = shooter(pn)
                yn = yg.copy()
                yn[free] = (xg[:m] + dx[:m]) * s
                yn = np.clip(yn, shn.lo, shn.hi)
                resn = shn.sample(yn, n_samples)
                fn = resn.y[-1]
                rn = (fn[free] - yn[free]) / s
                if not np.all(np.isfinite(rn)):
                    break
                xn = np.concatenate([yn[free] / s, [pn / ps]])
                d = xn - xg
                # Broyden update of the R rows; the arclength row is exact
                A[:m] += np.outer(rn - r - A[:m] @ d, d) / max(float(d @ d), 1e-300)
                yg, pg, fg, r, xg, shk, res = yn, pn, fn, rn, xn, shn, resn
                g = float(t @ (xn - x) - h)
            else:
                ok = float(np.max(np.abs(r))) <= tol_r and abs(g) <= 1e-6
        except (SimulationError, ConvergenceError, ValueError, np.linalg.LinAlgError):
            ok = False
        if ok and float(np.linalg.norm(xg - x)) > 2.0 * h:
            # the corrector runs in the hyperplane normal to the tangent; where the tangent
            # is nearly normal to p it can slide far along the branch (it skipped 10 rad/s
            # past the Masing resonance peak at f1 = 300 N): a point at more than twice
            # the step is refused
            ok = False
        if not ok:
            h *= 0.5
            Gu = fd_jac(shooter(p), y, p, shooter(p).flow(y), scale) if since_fresh else Gu
            since_fresh = 0
            if h < ds_min:
                # a point where the orbits' map is not smooth (Masing: the slider's stick
                # phase vanishes): restart past it by shooting at fixed p a step further
                d = float(np.sign(P[-1] - P[-2])) if len(P) > 1 else float(np.sign(p_end - p_start))
                pn = p + d * ds * ps
                if restarts < max_restarts and lo_p - ds * ps <= pn <= hi_p + ds * ps:
                    try:
                        p_now[0] = pn
                        shn, yn, fn, resn, scn = converge(shooter(pn), y.copy())
                        Gn = fd_jac(shn, yn, pn, fn, scn)
                    except (SimulationError, ConvergenceError, ValueError,
                            np.linalg.LinAlgError) as e:
                        message = (f"step size fell below ds_min = {ds_min:g} at p = {p:.6g} "
                                   f"and the restart at p = {pn:.6g} failed: {e}")
                        break
                    restarts += 1
                    y, p, scale, Gu = yn, pn, scn, Gn
                    tols["scale"] = scale
                    t = tangent(scaled(Gu, scale[free] * sw), sign_p=d)
                    tp_prev = t[m]
                    record(p, y, resn, Gu, True, shn, scn)
                    special.append({"kind": "restart", "p": p, "measure": MEAS[-1],
                                    "index": len(P) - 1})
                    h = float(ds)
                    since_fresh = 0
                    if not lo_p - 1e-12 * ps <= p <= hi_p + 1e-12 * ps:
                        message = f"left the parameter range at p = {p:.6g}"
                        break
                    continue
                message = (f"step size fell below ds_min = {ds_min:g} at p = {p:.6g}, "
                           f"{restarts} of max_restarts = {max_restarts} restarts used "
                           f"(the branch does not reach p = {p_end:.6g})")
                break
            continue
        if max_measure_step is not None and h > 2 * ds_min:
            # resolve sharp peaks: the measure may change by max_measure_step (relative)
            mv = float(measure(res))
            if abs(mv - MEAS[-1]) > max_measure_step * max(abs(MEAS[-1]), 1e-300):
                h *= 0.5
                continue
        # accepted point: maybe move the section; Jacobian fresh or Broyden-updated
        p_now[0] = pg
        moved = False
        if shk.assembly.elements and shk.section_quality(res)[0] < 0.3:
            try:
                shk, yg, fg, res, scale_new = converge(shk, yg)
                moved = True
            except (SimulationError, ConvergenceError) as e:
                message = f"could not move the section at p = {pg:.6g}: {e}"
                break
        else:
            scale_new = shk.scales(yg, res)
        since_fresh += 1
        fresh = moved or k > 5 or since_fresh >= jacobian_every
        if fresh:
            Gu = fd_jac(shk, yg, pg, fg, scale_new)
            since_fresh = 0
        else:
            Gu = unscaled(A[:m], s)
        # a bifurcation seen on a Broyden Jacobian is confirmed on a fresh one
        if not fresh:
            mu_try = floquet(Gu[:, :m] + np.eye(m))
            if crossing_counts(mu_try) != crossing_counts(MU[-1], ERR[-1]):
                Gu = fd_jac(shk, yg, pg, fg, scale_new)
                fresh = True
                since_fresh = 0
        s_new = scale_new[free] * sw
        if moved:       # new coordinates: keep only the direction of travel in p
            t_new = tangent(scaled(Gu, s_new), sign_p=np.sign(t[m]) or 1.0)
        else:
            # orient by the secant from the previous point (robust to a noisy tangent)
            sec_dir = np.concatenate([(yg[free] - y[free]) / s_new, [(pg - p) / ps]])
            t_new = tangent(scaled(Gu, s_new), sec_dir)
        mu_err = None
        if not moved and (t_new[m] * t[m] < 0 or abs(t_new[m]) < 0.05):
            # a turning point is confirmed on a fresh Jacobian and by a real multiplier
            # crossing +1 (a saddle-node changes the stability); without that crossing
            # the flow is only piecewise smooth there (e.g. a grazing stick-slip
            # transition) and the travel in p goes on the same way
            if not fresh:
                Gu = fd_jac(shk, yg, pg, fg, scale_new)
                fresh = True
                since_fresh = 0
                t_new = tangent(scaled(Gu, s_new), sec_dir)
            if t_new[m] * t[m] < 0:
                # the new orbit's multipliers as record() gets them: with their error
                # bounds and without the stuck sliders' neutral μ = 1 (the raw
                # monodromy keeps those, and one of them a hair above 1 posed as a
                # crossing: fake folds of the linear, stuck Masing rig at 13 N)
                mu_err = _fresh_multipliers(shk, yg, scale_new, Gu[:, :m] + np.eye(m),
                                            fd_eps, free)
                if not _plus_crossing_possible(MU[-1], ERR[-1], *mu_err):
                    t_new = tangent(scaled(Gu, s_new), sign_p=float(np.sign(t[m])) or 1.0)
        y, p, scale, t = yg, pg, scale_new, t_new
        tols["scale"] = scale
        record(p, y, res, Gu, fresh, shk, scale, mu_err)
        i = len(P) - 1
        c0, c1 = crossing_counts(MU[i - 1], ERR[i - 1]), crossing_counts(MU[i], ERR[i])
        if tp_prev * t[m] < 0 and i >= 2:
            fd = _fold(P, MEAS, i)
            if exact and t0 == 0.0:
                fd = _exact_fold(fd, build, period, n_periods, PH[i], Y, P, i, scale,
                                 ps, measure, n_samples, method, options)
            special.append(fd)
        elif c0[0] != c1[0] and sum(c0) != sum(c1) and i >= 1:
            # a real multiplier crosses +1 and p goes on: a branch point (symmetry-breaking
            # pitchfork or transcritical) of the periodic orbits
            special.append(_crossing("branch-point", P, MEAS, MU, i, 1.0))
        tp_prev = t[m]
        # a complex pair meeting on the real axis outside the unit circle changes the
        # kinds but not the number of multipliers outside: no bifurcation
        n_out_changed = sum(c0) != sum(c1)
        if c0[1] != c1[1] and n_out_changed:
            special.append(_crossing("period-doubling", P, MEAS, MU, i, -1.0))
        if c0[2] != c1[2] and n_out_changed:
            special.append(_crossing("neimark-sacker", P, MEAS, MU, i, None))
        if exact:
            for j, sp in enumerate(special):
                if sp["index"] == i and sp["kind"] in ("branch-point", "period-doubling",
                                                       "neimark-sacker") and "exact" not in sp:
                    special[j] = _exact_crossing(sp, build, period, n_periods, t0, PH[i - 1],
                                                 Y[i - 1], P[i - 1], P[i], measure,
                                                 n_samples, method, options)
        if closed_tol and len(P) > 4:
            # back on the first point, travelling the same way: a closed branch (an
            # isola), once around. States compare at equal sections; where the section
            # has moved, the parameter and the measure (phase-invariant) do
            if PH[-1] == PH[0]:
                d = _distance(Y[-1], P[-1], Y[0], P[0], scale, free, sw, ps)
            else:
                d = math.hypot((P[-1] - P[0]) / ps, (MEAS[-1] - MEAS[0])
                               / max(abs(MEAS[0]), 1e-300))
            far = max(far, d)
            if far > 4.0 * ds and d <= closed_tol * max(h, ds) and t[m] * t_first > 0:
                message = "the branch closed on its first point (an isola)"
                break
        if progress is not None:
            progress(min(1.0, abs(p - p_start) / ps), f"p = {p:.6g}, measure = {MEAS[-1]:.6g}, "
                     f"{ST[-1]}")
        if k <= 3:
            h = min(ds_max, 1.5 * h)
        elif k >= 6:
            h = max(ds_min, 0.5 * h)
        if not lo_p - 1e-12 * ps <= p <= hi_p + 1e-12 * ps:
            message = f"left the parameter range at p = {p:.6g}"
            break
    ST = np.array(ST)
    return Branch(p=np.array(P), y=np.array(Y), measure=np.array(MEAS), stable=ST == "stable",
                  multipliers=MU, n_periods=int(n_periods), special=special, message=message,
                  n_sims=sum(x.n_sims for x in made), wall_s=time.perf_counter() - tic,
                  names=list(sh.names), monodromy=MON, phase=np.array(PH),
                  fresh=np.array(FRESH), stability=ST, multiplier_errors=ERR,
                  monodromy_source=("variational" if exact else "projection-jacobian"
                                    if proj_exact else "finite-differences"))


def _fresh_multipliers(sh, y, scale, M, fd_eps, free):
    """(multipliers, error bounds) of the orbit y from a fresh monodromy (M, or computed
    when None), without the stuck sliders' neutral multipliers."""
    Mx, dM, keep, _ = sh.monodromy_with_error(y, scale, eps=fd_eps, M=M)
    mu, err = multiplier_errors(Mx, dM, np.maximum(scale, sh.floor)[free][keep])
    return drop_neutral(mu, err, sh.last_n_neutral)


def _plus_crossing_possible(mu0, err0, mu1, err1) -> bool:
    """Whether a real multiplier may cross +1 between two orbits: the numbers certainly
    outside the unit circle on the real positive axis differ, or a real positive
    multiplier of either is within its error bound of 1 (undecided). A turning point
    in p without that (a saddle-node changes the stability) is no fold."""
    if crossing_counts(mu0, err0)[0] != crossing_counts(mu1, err1)[0]:
        return True
    for mu, err in ((mu0, err0), (mu1, err1)):
        mu = np.asarray(mu, dtype=complex)
        err = np.asarray(err, float)
        near = (np.abs(mu.imag) <= err) & (mu.real > 0) & (np.abs(mu - 1.0) <= err)
        if near.any():
            return True
    return False


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
            "measure": float(np.polyval(np.polyfit(sig, mm, 2), sv)), "index": i - 1,
            "exact": False}


def _exact_fold(fd, build, period, n_periods, phase, Y, P, i, scale, ps, measure, n_samples,
                method, options):
    """The fold ``fd`` (parabola estimate) refined by Newton on the bordered fold system
    from the branch point nearest to it; ``fd`` unchanged (``exact`` False) if that
    fails."""
    from .bifurcation import FoldError, locate_fold

    pp = np.asarray(P[i - 2:i + 1])
    span = float(np.ptp(pp))
    for j in np.argsort(np.abs(pp - fd["p"])) + i - 2:
        try:
            f = locate_fold(lambda p, q: build(p), Y[j], P[j], scale=scale, p_scale=ps,
                            phase=phase, n_periods=n_periods,
                            period=None if period is None else (lambda p, q: period(p)))
        except (FoldError, SimulationError, np.linalg.LinAlgError, ValueError):
            continue
        # the fold between these three points, not a neighbouring one: within their
        # span in p and in state (scaled by the excursions)
        ys = np.asarray(Y[i - 2:i + 1])
        d_state = np.max(np.abs(ys - f.y[None, :]) / scale[None, :], axis=1).min()
        d_pts = np.max(np.abs(np.diff(ys, axis=0)) / scale[None, :])
        if abs(f.p - fd["p"]) <= span + 1e-12 * ps and d_state <= d_pts:
            break
    else:
        return fd
    sh = Shooter(build(f.p), None if period is None else period(f.p), n_periods=n_periods,
                 phase=phase, method=method, options=options)
    out = dict(fd, p=f.p, measure=float(measure(sh.sample(f.y, n_samples))), exact=True,
               multiplier=f.multiplier, y=f.y)
    return out


def _distance(y1, p1, y0, p0, scale, free, sw, ps):
    """Scaled distance of two points (y, p) of a branch (the arclength metric)."""
    s = scale[free] * sw
    return float(np.linalg.norm(np.concatenate([(y1 - y0)[free] / s, [(p1 - p0) / ps]])))


def _exact_crossing(sp, build, period, n_periods, t0, phase, y, p_a, p_b, measure,
                    n_samples, method, options):
    """The crossing ``sp`` (interpolated) located exactly between p_a and p_b
    (:func:`hystmech.systems.periodic.bifurcation.locate_crossing`); ``sp`` with
    ``exact`` False if that fails (e.g. the multiplier's error hides the sign change)."""
    from .bifurcation import locate_crossing

    try:
        c = locate_crossing(sp["kind"], build, y, p_a, p_b, period=period,
                            n_periods=n_periods, t0=t0, phase=phase, method=method,
                            options=options)
    except (ValueError, ConvergenceError, SimulationError, np.linalg.LinAlgError):
        return dict(sp, exact=False)
    sh = Shooter(build(c.p), None if period is None else period(c.p), n_periods=n_periods,
                 t0=t0, phase=phase, method=method, options=options)
    return dict(sp, p=c.p, measure=float(measure(sh.sample(c.y, n_samples))), exact=True,
                multiplier=c.multiplier, angle=c.angle, y=c.y, phase=phase)


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


def switch_branch(branch: Branch, build: Callable, index: int | None = None, *,
                  p_range, step: float = 0.05, period: Callable | None = None,
                  t0: float = 0.0, method: str = "auto", options: dict | None = None,
                  tol: float = 1e-8, **kw) -> list:
    """The branches that cross ``branch`` at a branch point (symmetry-breaking pitchfork
    or transcritical bifurcation of the periodic orbits), followed within p_range.

    At a branch point (y*, p*) the null space of [R_y, R_p] (R the shooting residual)
    is two-dimensional (Seydel (2010), §5.5; Keller (1977)): one direction is the
    tangent of ``branch`` (its secant there), the other, orthogonal to it in the
    scaled coordinates, is the tangent of the second branch. From (y*, p*) ± step·t₂
    Newton's method on R = 0 with the arclength condition t₂·(x − x*) = ±step gives a
    point on each half of the second branch, each then followed by
    :func:`continue_orbits` to the end of p_range it heads for. index: the
    "branch-point" entry of ``branch.special`` to switch at (default the first); its
    exact location is used when there is one. step: along t₂, in units of the orbit's
    excursion. kw: further options of :func:`continue_orbits`. Returns the list of
    branches found (ValueError when the branch has no branch point)."""
    bps = branch.bifurcations("branch-point")
    if index is None:
        if not bps:
            raise ValueError("the branch has no branch point; give index")
        sp = bps[0]
    else:
        idx = [s for s in bps if s["index"] == int(index)]
        if not idx:
            raise ValueError(f"index must be that of a branch point "
                             f"{[s['index'] for s in bps]} (got {index!r})")
        sp = idx[0]
    lo, hi = (float(v) for v in p_range)
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"p_range must be (low, high) with low < high (got {p_range!r})")
    check_positive("step", step)
    i = int(sp["index"])
    if sp.get("exact"):
        ys, ps_, phase = np.asarray(sp["y"], float), float(sp["p"]), float(sp["phase"])
    else:
        ys, ps_, phase = branch.y[i], float(branch.p[i]), float(branch.phase[i])
    n = branch.n_periods

    def shooter(p):
        return Shooter(build(p), None if period is None else period(p), n_periods=n,
                       t0=t0, phase=phase, method=method, options=options)

    sh = shooter(ps_)
    scale = sh.use_scale(sh.scales(ys))
    free = sh.free
    m = free.size
    s = scale[free]
    pscale = max(hi - lo, 1e-300)

    def G(y, p):
        """Scaled residual and [R_y, R_p] at (y, p)."""
        shp = shooter(p)
        shp.use_scale(scale)
        M, fy = shp.jacobian(y, scale)
        dp = 1e-6 * pscale
        f2 = shooter(p + dp)
        f2.use_scale(scale)
        fp = f2.flow(y)
        A = np.empty((m, m + 1))
        A[:, :m] = (M - np.eye(m)) * s[None, :] / s[:, None]
        A[:, m] = (fp[free] - fy[free]) / dp * pscale / s
        return (fy[free] - y[free]) / s, A

    _, A = G(ys, ps_)
    # the first branch's direction: its secant around the branch point
    j0, j1 = max(i - 1, 0), min(i, branch.p.size - 1)
    t1 = np.concatenate([(branch.y[j1] - branch.y[j0])[free] / s,
                         [(branch.p[j1] - branch.p[j0]) / pscale]])
    t1 /= max(np.linalg.norm(t1), 1e-300)
    V = np.linalg.svd(A)[2][-2:]          # the two-dimensional null space, approximately
    a = V @ t1
    t2 = a[1] * V[0] - a[0] * V[1]        # the combination orthogonal to t1
    t2 = t2 - (t2 @ t1) * t1
    t2 /= max(np.linalg.norm(t2), 1e-300)
    x0 = np.concatenate([ys[free] / s, [ps_ / pscale]])
    out = []
    for sgn in (1.0, -1.0):
        x = x0 + sgn * step * t2
        ok = False
        for _ in range(20):
            y = ys.copy()
            y[free] = x[:m] * s
            p = x[m] * pscale
            try:
                r, A = G(y, p)
            except (SimulationError, ValueError):
                break
            g = float(t2 @ (x - x0) - sgn * step)
            res = np.concatenate([r, [g]])
            if np.max(np.abs(res)) <= tol:
                ok = True
                break
            x = x + np.linalg.solve(np.vstack([A, t2[None, :]]), -res)
        if not ok:
            continue
        y = ys.copy()
        y[free] = x[:m] * s
        p = float(x[m] * pscale)
        # the direction this half of the second branch goes in p: its tangent there,
        # oriented away from the branch point
        tn = np.linalg.svd(A)[2][-1]
        if tn @ (x - x0) < 0:
            tn = -tn
        end = hi if tn[m] >= 0 else lo
        if not lo <= p <= hi or p == end:
            continue
        try:
            out.append(continue_orbits(build, p, end, y0=y, period=period, n_periods=n,
                                       t0=t0 + phase * (shooter(p).period), method=method,
                                       options=options, tol=tol, **kw))
        except (ConvergenceError, SimulationError, ValueError) as e:
            if not out and sgn < 0:
                raise ConvergenceError(f"switch_branch: the second branch at p = {ps_:.8g} "
                                       f"could not be followed: {e}") from e
    return out
