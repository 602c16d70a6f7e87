"""Folds of periodic orbits located exactly, and continued in two parameters.

A fold (saddle-node, turning point, jump of a frequency response) of the periodic orbits
y*(p) of the shooting residual R(y, p) = φ(y; p) − y is where a Floquet multiplier is
+1: M − I is singular. It is located by Newton's method on the minimally augmented
system (Govaerts (2000), *Numerical Methods for Bifurcations of Dynamical Equilibria*,
§3.4; the bordered form used by MatCont and COCO)

    R(y, p) = 0,    g(y, p) = 0,    [[M − I, b], [cᵀ, 0]]·[v; g] = [0; 1],

with b, c the left and right null vectors of M − I at the previous iterate (the
bordered matrix stays regular at the fold, g vanishes there with a sign change). M is
the exact monodromy of the variational equations (:mod:`hystmech.systems.periodic.monodromy`);
∂R/∂p and the derivatives of g by central differences of these exact maps. Adding a
second parameter q (e.g. the forcing amplitude f1) the same m + 1 equations in the
m + 2 unknowns (y, p, q) define the fold curve in (p, q), followed by pseudo-arclength
continuation: the edges of a bistable region of the frequency response and the cusp
where they meet (the point of the curve where q turns back).

Smooth assemblies with compiled jac kernels only (the modified Dahl tensioner, Duffing
oscillators, LuGre); the folds of non-smooth laws are located on their branches from
the turning point of Ω (:mod:`hystmech.systems.periodic.continuation`).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .monodromy import VariationalMap
from .shooting import forcing_omega


class FoldError(RuntimeError):
    """Newton's method on the fold system did not converge."""


class _Maps:
    """Period maps of build(p, q) at a fixed section phase, by the variational equations."""

    def __init__(self, build, n_periods, phase, scale, rtol, period):
        self.build, self.n, self.phase = build, int(n_periods), float(phase)
        self.scale = np.asarray(scale, float)
        self.rtol, self.period = rtol, period
        self._cache = {}
        self.n_runs = 0

    def vm(self, p, q):
        key = (float(p), float(q))
        hit = self._cache.get(key)
        if hit is None:
            asm = self.build(float(p), float(q))
            T = forcing_omega_period(asm) if self.period is None else self.period(p, q)
            hit = VariationalMap(asm, self.n * T, self.phase * T, rtol=self.rtol,
                                 scale=self.scale)
            if len(self._cache) > 64:
                self._cache.clear()
            self._cache[key] = hit
        return hit

    def R(self, y, p, q):
        self.n_runs += 1
        return self.vm(p, q).flow(y) - y

    def RM(self, y, p, q):
        self.n_runs += 1
        fy, M = self.vm(p, q).flow_monodromy(y)
        return fy - y, M


def forcing_omega_period(asm) -> float:
    """2π/Ω [s] of the assembly's harmonic forcing."""
    return 2.0 * math.pi / forcing_omega(asm)


def _bordered(A, b, c):
    m = A.shape[0]
    B = np.zeros((m + 1, m + 1))
    B[:m, :m] = A
    B[:m, m] = b
    B[m, :m] = c
    rhs = np.zeros(m + 1)
    rhs[m] = 1.0
    sol = np.linalg.solve(B, rhs)
    solT = np.linalg.solve(B.T, rhs)
    return sol[m], sol[:m], solT[:m]


def _null_vectors(A):
    U, S, Vt = np.linalg.svd(A)
    return U[:, -1], Vt[-1]


@dataclass
class FoldPoint:
    """A fold located exactly: state y [state units] at the section, parameters p, q,
    the multiplier nearest +1 (= 1 at the fold up to the tolerance), all multipliers,
    scaled residual of the fold system."""
    y: np.ndarray
    p: float
    q: float
    multiplier: float
    multipliers: np.ndarray
    residual: float


class FoldSystem:
    """The fold system of build(p, q) (module docstring) in scaled unknowns.

    build(p, q) -> Assembly (smooth, forced at a period T(p, q): ``period`` [s], default
    2π/Ω of its harmonic forcing); scale: the size of each state (its excursion over the
    period); p_scale, q_scale: sizes of the parameters; phase: section at phase·T;
    rtol: of the variational integration."""

    def __init__(self, build: Callable, scale, *, p_scale: float, q_scale: float,
                 phase: float = 0.0, n_periods: int = 1, rtol: float = 1e-10,
                 period: Callable | None = None):
        for name, v in (("p_scale", p_scale), ("q_scale", q_scale)):
            if not (math.isfinite(v) and v > 0):
                raise ValueError(f"{name} must be in (0, inf) (got {v!r})")
        self.s = np.maximum(np.abs(np.asarray(scale, float)), 1e-300)
        self.ps, self.qs = float(p_scale), float(q_scale)
        self.maps = _Maps(build, n_periods, phase, self.s, rtol, period)
        self.m = self.s.size
        self.b = self.c = None

    def _A(self, y, p, q):
        r, M = self.maps.RM(y, p, q)
        s = self.s
        A = (M - np.eye(self.m)) * s[None, :] / s[:, None]
        return r / s, A, M

    def set_border(self, y, p, q):
        _, A, _ = self._A(y, p, q)
        self.b, self.c = _null_vectors(A)

    def F(self, x):
        """Scaled residual (R/s, g) at x = (y/s, p/ps, q/qs); and the scaled A, M."""
        y, p, q = x[:self.m] * self.s, x[self.m] * self.ps, x[self.m + 1] * self.qs
        r, A, M = self._A(y, p, q)
        g, _, _ = _bordered(A, self.b, self.c)
        return np.concatenate([r, [g]]), A, M

    def jacobian(self, x, F0=None, h: float = 1e-6):
        """∂F/∂x, (m + 1) × (m + 2): the state columns of R from the exact monodromy,
        the rest by central differences of the exact maps."""
        m = self.m
        if F0 is None:
            F0, A, _ = self.F(x)
        else:
            A = None
        Jx = np.zeros((m + 1, m + 2))
        for j in range(m + 2):
            e = np.zeros(m + 2)
            e[j] = h
            Fp = self.F(x + e)[0]
            Fm = self.F(x - e)[0]
            Jx[:, j] = (Fp - Fm) / (2 * h)
        if A is not None:
            Jx[:m, :m] = A
        return Jx

    def point(self, x, M=None) -> FoldPoint:
        y, p, q = x[:self.m] * self.s, x[self.m] * self.ps, x[self.m + 1] * self.qs
        F, A, M = self.F(x)
        mu = np.linalg.eigvals(M)
        mu = mu[np.argsort(-np.abs(mu))]
        real = mu[np.abs(mu.imag) <= 1e-9].real
        lead = float(real[np.argmin(np.abs(real - 1.0))]) if real.size else math.nan
        return FoldPoint(y=y, p=float(p), q=float(q), multiplier=lead, multipliers=mu,
                         residual=float(np.max(np.abs(F))))

    def correct(self, x, t=None, x_prev=None, ds=0.0, *, fixed: int | None = None,
                tol: float = 1e-9, max_iter: int = 12, J=None):
        """Newton on F = 0 plus one more equation: the arclength condition
        t·(x − x_prev) = ds, or x[fixed] held (fixed = m: p, m + 1: q). The Jacobian
        (``J``, or computed at the first iterate) is kept while the residual falls by
        half per step (chord method), else recomputed. Returns (x, J)."""
        m = self.m
        x = np.asarray(x, float).copy()
        if self.b is None:
            self.set_border(x[:m] * self.s, x[m] * self.ps, x[m + 1] * self.qs)
        last = np.inf
        for it in range(max_iter):
            F, A, _ = self.F(x)
            if fixed is not None:
                extra = 0.0
                row = np.zeros(m + 2)
                row[fixed] = 1.0
            else:
                extra = float(t @ (x - x_prev) - ds)
                row = t
            res = np.concatenate([F, [extra]])
            err = float(np.max(np.abs(res)))
            if err <= tol:
                return x, J
            if J is None or err > 0.5 * last:
                J = self.jacobian(x, F)
            last = err
            dx = np.linalg.solve(np.vstack([J, row[None, :]]), -res)
            x = x + dx
            if np.max(np.abs(dx)) <= tol:
                return x, J
        F, _, _ = self.F(x)
        if np.max(np.abs(F)) <= 1e3 * tol:
            return x, J
        raise FoldError(f"fold system: no convergence in {max_iter} Newton steps "
                        f"(scaled residual {np.max(np.abs(F)):.3g})")


def locate_fold(build: Callable, y, p, *, q: float = 0.0, scale, p_scale: float,
                phase: float = 0.0, n_periods: int = 1, period: Callable | None = None,
                tol: float = 1e-9) -> FoldPoint:
    """The fold nearest to the orbit y at parameter p [e.g. Ω in rad/s] of build(p, q),
    by Newton's method on the bordered fold system with q fixed (module docstring).
    y: state at the section phase·T (e.g. a branch point next to the turning point);
    scale: each state's excursion. Returns the :class:`FoldPoint`."""
    fs = FoldSystem(build, scale, p_scale=p_scale, q_scale=max(abs(q), 1.0), phase=phase,
                    n_periods=n_periods, period=period)
    x = np.concatenate([np.asarray(y, float) / fs.s, [p / fs.ps, q / fs.qs]])
    x, _ = fs.correct(x, fixed=fs.m + 1, tol=tol)
    return fs.point(x)


@dataclass
class FoldCurve:
    """A fold curve in (p, q): per point the parameters, state at the section, multiplier
    nearest +1 (1 on the curve), the measure (user's, of one period); cusps: points
    where q turns back (the cusp of the bistable region in the (p, q) plane), located by
    the parabola through the three points around the turn; message: why it stopped."""
    p: np.ndarray
    q: np.ndarray
    y: np.ndarray
    multiplier: np.ndarray
    measure: np.ndarray
    cusps: list
    message: str
    n_runs: int
    cpu_s: float
    extra: dict = field(default_factory=dict)


def continue_folds(build: Callable, y, p, q, *, scale, p_scale: float, q_scale: float,
                   q_range, p_range=None, phase: float = 0.0, n_periods: int = 1,
                   period: Callable | None = None, ds: float = 0.05, ds_min: float = 1e-4,
                   ds_max: float = 0.2, max_points: int = 200, direction: float = 1.0,
                   measure: Callable | None = None, tol: float = 1e-9,
                   progress=None) -> FoldCurve:
    """Follow the fold curve of build(p, q) from a fold near (y, p, q) by pseudo-arclength
    continuation of the fold system in (y, p, q) (module docstring).

    y: state at the section near the fold; p, q: its parameters; scale: state sizes;
    p_scale, q_scale: parameter sizes (the arclength ds is measured in these units);
    q_range (and p_range): stop when the curve leaves them; direction: initial sign of
    dq; measure(y, p, q) -> float per point (e.g. the tension amplitude). The curve is
    progress: True (a bar on stderr), a callable progress(fraction, message) called after
    each point (fraction of max_points), or None. The curve is
    followed through cusps (q turns back, p goes on): both edges of a bistable region
    come out of one run."""
    tic = time.process_time()
    fs = FoldSystem(build, scale, p_scale=p_scale, q_scale=q_scale, phase=phase,
                    n_periods=n_periods, period=period)
    m = fs.m
    qlo, qhi = min(q_range), max(q_range)
    plo, phi = (-np.inf, np.inf) if p_range is None else (min(p_range), max(p_range))
    x = np.concatenate([np.asarray(y, float) / fs.s, [p / fs.ps, q / fs.qs]])
    x, J = fs.correct(x, fixed=m + 1, tol=tol)

    def tangent(x, J, prev=None):
        t = np.linalg.svd(J)[2][-1]
        if prev is not None:
            if t @ prev < 0:
                t = -t
        elif t[m + 1] * direction < 0:
            t = -t
        return t / np.linalg.norm(t)

    from ...progress import resolve

    progress = resolve(progress, "fold curve")
    pts = [x.copy()]
    t = tangent(x, J if J is not None else fs.jacobian(x))
    tq = [t[m + 1]]
    h = ds
    message = f"reached max_points = {max_points}"
    while len(pts) < max_points:
        try:
            xn, Jn = fs.correct(x + h * t, t, x, h, tol=tol, J=J)
            ok = np.linalg.norm(xn - x) <= 2.0 * h
        except (FoldError, np.linalg.LinAlgError, ValueError, RuntimeError):
            ok = False
        if not ok:
            h *= 0.5
            J = None
            fs.set_border(x[:m] * fs.s, x[m] * fs.ps, x[m + 1] * fs.qs)
            if h < ds_min:
                message = f"step fell below ds_min at p = {x[m] * fs.ps:.6g}, q = {x[m + 1] * fs.qs:.6g}"
                break
            continue
        # new borders at the new point (null vectors of its M − I)
        fs.set_border(xn[:m] * fs.s, xn[m] * fs.ps, xn[m + 1] * fs.qs)
        J = fs.jacobian(xn)
        tn = tangent(xn, J, t)
        x, t = xn, tn
        pts.append(x.copy())
        tq.append(t[m + 1])
        h = min(ds_max, 1.3 * h)
        pq, qq = x[m] * fs.ps, x[m + 1] * fs.qs
        if progress is not None:
            progress(len(pts) / max_points, f"fold curve point {len(pts)}: p = {pq:.5g}, "
                                            f"q = {qq:.5g}")
        if len(pts) > 8 and np.linalg.norm(x - pts[0]) < 0.75 * h:
            message = "the curve closed on its first point"
            break
        if not (qlo <= qq <= qhi and plo <= pq <= phi):
            message = f"left the parameter range at p = {pq:.6g}, q = {qq:.6g}"
            break
    X = np.array(pts)
    P, Q = X[:, m] * fs.ps, X[:, m + 1] * fs.qs
    Y = X[:, :m] * fs.s[None, :]
    mult = np.array([fs.point(xx).multiplier for xx in X])
    meas = np.array([measure(Y[i], P[i], Q[i]) for i in range(P.size)]) if measure else \
        np.full(P.size, np.nan)
    cusps = []
    tq = np.array(tq)
    for i in np.flatnonzero(tq[:-1] * tq[1:] < 0):
        j = min(max(int(i), 1), P.size - 2)
        sig = np.array([-1.0, 0.0, 1.0])
        cq = np.polyfit(sig, Q[j - 1:j + 2], 2)
        sv = -cq[1] / (2 * cq[0]) if cq[0] != 0 else 0.0
        sv = min(max(sv, -1.0), 1.0)
        cusps.append({"p": float(np.polyval(np.polyfit(sig, P[j - 1:j + 2], 2), sv)),
                      "q": float(np.polyval(cq, sv)), "index": int(j)})
    return FoldCurve(p=P, q=Q, y=Y, multiplier=mult, measure=meas, cusps=cusps,
                     message=message, n_runs=fs.maps.n_runs, cpu_s=time.process_time() - tic)


# -- crossings where the parameter stays regular: branch points, period doublings,
#    Neimark-Sacker bifurcations ---------------------------------------------------------

CROSSING_KINDS = ("branch-point", "period-doubling", "neimark-sacker")


@dataclass
class CrossingPoint:
    """A multiplier crossing of the unit circle located exactly on a branch: kind
    ("branch-point": a real μ through +1 with p going on, "period-doubling": through −1,
    "neimark-sacker": a complex pair); p the parameter; y the orbit's state at the
    section t0 + phase·T; multiplier the crossing one (|μ| = 1 up to ``residual``),
    angle = |arg μ| [rad] (the torus' rotation number is angle/2π per period),
    multipliers all of them, multiplier_error the error bound of the crossing one,
    iterations of the secant."""
    kind: str
    p: float
    y: np.ndarray
    multiplier: complex
    angle: float
    multipliers: np.ndarray
    multiplier_error: float
    residual: float
    phase: float
    iterations: int


def crossing_test(kind: str, mu, err=None):
    """The test function of a crossing and its multiplier: |μ| − 1 of the real μ > 0
    nearest to +1 ("branch-point"), of the real μ < 0 nearest to −1
    ("period-doubling"), or of the complex pair nearest to the unit circle
    ("neimark-sacker"; complex: |Im μ| above its error bound). Returns (g, μ, index);
    g is nan when there is no such multiplier."""
    mu = np.asarray(mu, complex)
    err = np.zeros(mu.size) if err is None else np.asarray(err, float)
    cplx = np.abs(mu.imag) > np.maximum(err, 1e-9 * np.abs(mu))
    if kind == "branch-point":
        cand = np.flatnonzero(~cplx & (mu.real > 0))
        key = np.abs(mu.real[cand] - 1.0) if cand.size else None
    elif kind == "period-doubling":
        cand = np.flatnonzero(~cplx & (mu.real < 0))
        key = np.abs(mu.real[cand] + 1.0) if cand.size else None
    elif kind == "neimark-sacker":
        cand = np.flatnonzero(cplx)
        key = np.abs(np.abs(mu[cand]) - 1.0) if cand.size else None
    else:
        raise ValueError(f"kind must be one of {CROSSING_KINDS} (got {kind!r})")
    if not cand.size:
        return math.nan, complex(math.nan), -1
    i = int(cand[np.argmin(key)])
    return float(abs(mu[i]) - 1.0), complex(mu[i]), i


def locate_crossing(kind: str, build: Callable, y, p_a: float, p_b: float, *,
                    period: Callable | None = None, n_periods: int = 1, t0: float = 0.0,
                    phase: float = 0.0, method: str = "auto", options: dict | None = None,
                    tol: float = 1e-9, shoot_tol: float = 1e-10, max_iter: int = 30,
                    fd_eps: float | None = None) -> CrossingPoint:
    """A branch point, period doubling or Neimark–Sacker bifurcation between p_a and p_b
    located exactly: the root of the test function g(p) = |μ(p)| − 1 of the crossing
    multiplier (:func:`crossing_test`; Seydel (2010), §5.4 / §7.6: a test function
    with a sign change, its root by a safeguarded secant), where the orbit at each
    trial p is solved by Newton shooting from the previous one and μ is the exact
    (variational) or finite-difference multiplier with its error bound. p regularly
    parameterises the branch there (unlike at a fold, :func:`locate_fold`).

    build(p) -> Assembly; y: the orbit's state at p_a at the section t0 + phase·T;
    tol: on |p − p*| relative to |p_b − p_a| and on |g|. ValueError when g does not
    change sign between p_a and p_b."""
    from .monodromy import multiplier_errors
    from .shooting import Shooter, default_fd_eps, drop_neutral, newton_shoot

    if kind not in CROSSING_KINDS:
        raise ValueError(f"kind must be one of {CROSSING_KINDS} (got {kind!r})")
    p_a, p_b = float(p_a), float(p_b)
    if not (math.isfinite(p_a) and math.isfinite(p_b)) or p_a == p_b:
        raise ValueError(f"p_a, p_b must be finite and differ (got {p_a!r}, {p_b!r})")
    span = abs(p_b - p_a)
    eps = default_fd_eps(build(p_a)) if fd_eps is None else fd_eps
    state = {"y": np.asarray(y, float).copy()}

    def evaluate(p):
        sh = Shooter(build(p), None if period is None else period(p), n_periods=n_periods,
                     t0=t0, phase=phase, method=method, options=options)
        scale = sh.use_scale(sh.scales(state["y"]))
        yy, _, res, _, _ = newton_shoot(sh, state["y"], scale, tol=shoot_tol, eps=eps)
        scale = sh.scales(yy)
        M, dM, keep, _ = sh.monodromy_with_error(yy, scale, eps=eps)
        mu, err = multiplier_errors(M, dM, np.maximum(scale, sh.floor)[sh.free][keep])
        mu, err = drop_neutral(mu, err, sh.last_n_neutral)
        g, mc, i = crossing_test(kind, mu, err)
        state["y"] = yy
        return g, mc, yy, mu, (err[i] if i >= 0 else math.nan)

    ga, *_ = evaluate(p_a)
    ya = state["y"].copy()
    gb, *rest = evaluate(p_b)
    if not (math.isfinite(ga) and math.isfinite(gb)) or ga * gb > 0:
        raise ValueError(f"locate_crossing: the {kind} test function does not change sign "
                         f"between p = {p_a:.8g} ({ga:.3g}) and {p_b:.8g} ({gb:.3g})")
    # Illinois (modified regula falsi): superlinear like the secant, always bracketed
    a, b, fa, fb = p_a, p_b, ga, gb
    best = (abs(gb), p_b, rest)
    state["y"] = ya
    it = 0
    for it in range(1, max_iter + 1):
        p = b - fb * (b - a) / (fb - fa) if fb != fa else 0.5 * (a + b)
        g, *rest = evaluate(p)
        if not math.isfinite(g):
            raise ValueError(f"locate_crossing: no {kind} multiplier at p = {p:.8g}")
        if abs(g) < best[0]:
            best = (abs(g), p, [rest[0], rest[1], rest[2], rest[3]])
        if g * fb < 0:
            a, fa = b, fb
        else:
            fa *= 0.5       # the end kept twice: halve its value (Illinois)
        b, fb = p, g
        if abs(b - a) <= tol * span or abs(g) <= tol:
            break
    _, p, (mc, yy, mu, e) = best
    return CrossingPoint(kind=kind, p=float(p), y=yy.copy(), multiplier=mc,
                         angle=float(abs(np.angle(mc))), multipliers=mu,
                         multiplier_error=float(e), residual=float(best[0]),
                         phase=float(phase), iterations=it)
