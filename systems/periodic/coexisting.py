"""Coexisting periodic orbits and isolas: the orbits a continued branch does not pass
through.

Pseudo-arclength continuation (:mod:`hystmech.systems.periodic.continuation`) follows one
connected curve of periodic orbits; an isola (a closed curve of orbits disconnected
from the main branch, e.g. created by nonlinear damping) or a sheet the branch never
joins is invisible to it, and so is the state a brute-force sweep jumps to. At chosen
parameter values (``search_sites``: every fold of the branch, every orbit whose real
multiplier comes within ``near`` of +1 — a near-fold, where a sheet may be about to
appear — and the resonance peak) this module shoots from many starting states:

* the branch's orbit perturbed along the eigenvectors of its multipliers nearest +1
  (the directions in which the flow is slowest, so another orbit is nearest);
* harmonic-balance guesses: single-harmonic motions x(t) = A·cos(Ω(t − t0) − θ) of
  every DOF at amplitudes ``amplitudes`` × the branch's excursion and four phases θ,
  each refined by a few periods of integration before Newton's method;
* user states (``extra_states``, e.g. the end states of the other sweep direction).

An orbit whose measure differs from every orbit of the branch at that parameter (by
more than ``distinct``, relative) is new; it is continued in both directions
(:func:`continue_orbits` stops once around a closed curve: an isola) and returned with
a branch id. Seydel (2010), *Practical Bifurcation and Stability Analysis*, §2.10 and
§7.7 (isolas; multiple starting guesses).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..result import SimulationError
from .continuation import Branch, continue_orbits
from .shooting import ConvergenceError, Shooter, default_fd_eps, newton_shoot, peak_to_peak


@dataclass
class CoexistingBranch:
    """A branch found by :func:`search_coexisting`: branch_id (1, 2, ...; 0 is the
    searched branch), kind "isola" (closed curve) or "disconnected" (it leaves the
    parameter range without meeting the searched branch), the site (parameter value) it
    was found at, how ("perturbed", "harmonic-balance" or "given"), and its halves
    (one Branch for an isola, else the parts followed towards each end; none when
    continue_found is False), orbit: (p, state, measure) of the orbit found."""
    branch_id: int
    kind: str
    site: float
    source: str
    parts: list = field(default_factory=list)
    orbit: tuple = None     # (p, state at the site's section, measure) as found

    @property
    def p(self) -> np.ndarray:
        return np.concatenate([b.p for b in self.parts])

    @property
    def measure(self) -> np.ndarray:
        return np.concatenate([b.measure for b in self.parts])

    @property
    def stability(self) -> np.ndarray:
        return np.concatenate([b.stability for b in self.parts])


def search_sites(branch: Branch, *, near: float = 0.02, max_sites: int = 6) -> list:
    """Indices of the branch's orbits to search at: its folds, its orbits whose real
    multiplier nearest +1 is within ``near`` of it, and its largest measure (the
    resonance peak), at most max_sites of them spread over the parameter range."""
    if not (math.isfinite(near) and near > 0):
        raise ValueError(f"near must be in (0, inf) (got {near!r})")
    idx = [int(s["index"]) for s in branch.special if s["kind"] == "fold"]
    for i, mu in enumerate(branch.multipliers):
        mu = np.asarray(mu)
        real = mu[np.abs(mu.imag) <= 1e-9 * np.maximum(np.abs(mu), 1e-300)].real
        if real.size and np.min(np.abs(real - 1.0)) < near:
            idx.append(i)
    idx.append(int(np.argmax(branch.measure)))
    idx = sorted(set(idx))
    if len(idx) > max_sites:
        keep = np.unique(np.round(np.linspace(0, len(idx) - 1, max_sites)).astype(int))
        idx = [idx[k] for k in keep]
    return idx


def _known_measures(branch: Branch, p: float) -> np.ndarray:
    """The measures of the branch's orbits at parameter p (interpolated on every
    segment of the branch that crosses p)."""
    P, A = branch.p, branch.measure
    out = [A[i] for i in np.flatnonzero(P == p)]
    for i in np.flatnonzero((P[:-1] - p) * (P[1:] - p) < 0):
        w = (p - P[i]) / (P[i + 1] - P[i])
        out.append(A[i] + w * (A[i + 1] - A[i]))
    return np.asarray(out, float)


def _new(value, known, distinct):
    scale = max(np.max(np.abs(known)) if len(known) else 0.0, abs(value), 1e-300)
    return all(abs(value - k) > distinct * scale for k in known)


def search_coexisting(branch: Branch, build: Callable, p_range, *, sites=None,
                      amplitudes=(0.5, 1.5, 2.5, 4.0), perturbations=(0.1, 0.3),
                      extra_states=(), transient_periods: int = 3, near: float = 0.02,
                      max_sites: int = 6, distinct: float = 1e-3, period: Callable | None = None,
                      t0: float = 0.0, method: str = "auto", options: dict | None = None,
                      measure: Callable | None = None, tol: float = 1e-8,
                      continue_found: bool = True, n_samples: int = 256, **kw) -> list:
    """Periodic orbits of build(p) that coexist with ``branch`` but are not on it, and
    the branches (isolas, disconnected sheets) they lie on (module docstring).

    branch: from :func:`continue_orbits` (period 1·T orbits); p_range: (low, high), where
    the found orbits are continued; sites: indices of branch orbits to search at
    (default :func:`search_sites`); amplitudes: of the harmonic-balance guesses, in
    units of the branch orbit's excursion of each DOF; perturbations: sizes of the
    perturbations along the slow eigenvectors, same units; extra_states: (index, state)
    pairs of further starting states at the site of branch orbit ``index``, e.g. the end
    states of the other sweep direction; distinct: relative difference of the measure
    that makes an orbit new; measure(SimResult of one period) -> float (default
    peak-to-peak of the first state, as the branch's). kw: further options of
    :func:`continue_orbits`. Returns a list of :class:`CoexistingBranch` (ids 1, 2, …)."""
    lo, hi = (float(v) for v in p_range)
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"p_range must be (low, high) with low < high (got {p_range!r})")
    if int(transient_periods) < 0:
        raise ValueError(f"transient_periods must be in [0, inf) (got {transient_periods!r})")
    for name, vals in (("amplitudes", amplitudes), ("perturbations", perturbations)):
        if any(not (math.isfinite(a) and a > 0) for a in vals):
            raise ValueError(f"{name} must be numbers in (0, inf) (got {vals!r})")
    if not (math.isfinite(distinct) and distinct > 0):
        raise ValueError(f"distinct must be in (0, inf) (got {distinct!r})")
    if branch.n_periods != 1:
        raise ValueError("search_coexisting: the branch must be of period-1 orbits")
    meas = measure or (lambda r: peak_to_peak(r.t, r.y[:, 0]))
    sites = search_sites(branch, near=near, max_sites=max_sites) if sites is None else \
        [int(i) for i in sites]
    extra = {}
    for i, y in extra_states:
        extra.setdefault(int(i), []).append(np.asarray(y, float))
    found = []
    for i in sites:
        if not 0 <= i < branch.p.size:
            raise ValueError(f"sites must be indices in [0, {branch.p.size - 1}] (got {i})")
        p = float(branch.p[i])
        if not lo <= p <= hi:
            continue
        phase = float(branch.phase[i]) if branch.phase is not None else 0.0
        sh = Shooter(build(p), None if period is None else period(p), t0=t0, phase=phase,
                     method=method, options=options)
        y_b = branch.y[i]
        scale = sh.scales(y_b)
        # a Newton iterate far outside every guess is refused (the damped step is then
        # shortened): runaway iterates make stiff, endless adaptive integrations
        bound = np.abs(y_b) + 2.0 * max(max(amplitudes), max(perturbations), 1.0) * scale
        sh.flow = _bounded(sh.flow, bound)
        eps = default_fd_eps(sh.assembly)
        known = list(_known_measures(branch, p))
        for c in found:
            known += [c.orbit[2]] if c.orbit[0] == p else []
            for b in c.parts:
                known += list(_known_measures(b, p))
        for y, src in _candidates(sh, y_b, scale, branch.monodromy[i], amplitudes,
                                  perturbations, extra.get(i, [])):
            try:
                for _ in range(int(transient_periods)):
                    y = sh.flow(y)
                sc = sh.use_scale(sh.scales(y))
                y, _, _, _, _ = newton_shoot(sh, y, sc, tol=tol, eps=eps)
                value = float(meas(sh.sample(y, n_samples)))
            except (ConvergenceError, SimulationError, np.linalg.LinAlgError, ValueError):
                continue
            if not (math.isfinite(value) and _new(value, known, distinct)):
                continue
            known.append(value)
            cb = CoexistingBranch(branch_id=len(found) + 1, kind="disconnected", site=p,
                                  source=src)
            if continue_found:
                _follow(cb, build, p, y, lo, hi, period=period, t0=t0 + phase * sh.period,
                        method=method, options=options, measure=measure, tol=tol,
                        n_samples=n_samples, **kw)
                if cb.parts and _meets(cb, branch, distinct):
                    continue        # a part of the searched branch after all
            cb.orbit = (p, y.copy(), value)
            for b in cb.parts:      # the rest of that curve is known from now on
                known += list(_known_measures(b, p))
            found.append(cb)
    return found


def _bounded(flow, bound):
    def f(y):
        if not np.all(np.abs(np.asarray(y, float)) <= bound):
            raise SimulationError("search_coexisting: iterate outside the searched region", 0.0)
        return flow(y)
    return f


def _candidates(sh: Shooter, y_b, scale, M, amplitudes, perturbations, extra):
    """Starting states at one site (module docstring): (state, source) pairs."""
    free = sh.free
    s = scale[free]
    if M is not None and np.size(M):
        w, V = np.linalg.eig(np.asarray(M, float))
        for j in np.argsort(np.abs(w - 1.0))[:2]:
            v = np.real(V[:, j]) if abs(w[j].imag) <= 1e-9 else np.real(V[:, j] + V[:, j].conj())
            v = v / max(np.max(np.abs(v / s)), 1e-300)
            for a in perturbations:
                for sg in (1.0, -1.0):
                    y = y_b.copy()
                    y[free] += sg * a * v * s
                    yield y, "perturbed"
    nq = len(sh.assembly.dofs)
    Om = 2.0 * math.pi / sh.period
    x_exc = 0.5 * scale[:nq]
    base = sh.assembly.initial_state()
    for a in amplitudes:
        for th in (0.0, 0.5 * math.pi, math.pi, 1.5 * math.pi):
            y = base.copy()
            y[:nq] = a * x_exc * math.cos(th)
            y[nq:2 * nq] = a * x_exc * Om * math.sin(th)
            yield y, "harmonic-balance"
    for y in extra:
        yield y.copy(), "given"


def _follow(cb, build, p, y, lo, hi, **kw):
    """Continue the orbit (y, p) towards hi and, unless that closes the curve, towards lo."""
    parts = []
    for end in (hi, lo):
        if end == p:
            continue
        try:
            b = continue_orbits(build, p, end, y0=y, p_bounds=(lo, hi), **kw)
        except (ConvergenceError, SimulationError, ValueError, np.linalg.LinAlgError):
            continue
        parts.append(b)
        if b.message.startswith("the branch closed"):
            cb.kind = "isola"
            break
    cb.parts = parts


def _meets(cb, branch, distinct):
    """Whether the found branch runs into the searched one: some orbit of it has the
    measure of an orbit of the searched branch at the same parameter."""
    for b in cb.parts:
        for p, a in zip(b.p, b.measure):
            k = _known_measures(branch, float(p))
            if k.size and not _new(float(a), k, 10 * distinct):
                return True
    return False


def coexisting_rows(found: list, *, prefix: str = "") -> list:
    """CSV rows "<prefix>branch_id,kind,p,measure,stability" of the found branches (the
    searched branch is id 0 and not repeated here)."""
    rows = []
    for cb in found:
        for b in cb.parts:
            for k in range(b.p.size):
                rows.append(f"{prefix}{cb.branch_id},{cb.kind},{float(b.p[k])!r},"
                            f"{float(b.measure[k])!r},{b.stability[k]}")
    return rows
