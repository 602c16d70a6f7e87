"""Periodic steady states of forced assemblies by shooting, with Floquet stability.

A periodic orbit of an :class:`~hystmech.systems.Assembly` forced with period
T = 2π/Ω (``Harmonic`` forces or imposed motions) is a state y* at t0 that the flow over
n·T maps onto itself: the shooting residual

    R(y) = φ_{nT}(y) − y = 0

is solved by Newton's method, J = M − I with M = ∂φ_{nT}/∂y the monodromy matrix. Its
eigenvalues are the Floquet multipliers μ: the orbit is asymptotically stable when every
|μ| < 1; a multiplier leaving the unit circle through +1 is a fold (saddle-node, jump of
the frequency response), through −1 a period doubling, and a complex pair a
Neimark–Sacker (torus) bifurcation.

Where the monodromy comes from (per kind of law):

* smooth laws with a compiled ``jac`` kernel: the variational equations integrated
  along the orbit (:mod:`hystmech.systems.periodic.monodromy`), exact to the integration
  tolerance, with an error bound per multiplier.
* other laws: finite differences of the compiled simulation
  (:func:`hystmech.systems.simulate`) — one extra period per unknown, forward
  differences inside Newton (with Broyden rank-one updates between full Jacobians);
  step ``fd_eps`` relative to each unknown's scale (its excursion over the period). The
  converged orbit's monodromy is computed at steps ε and 2ε and their difference is its
  error estimate.
* stability is decided per multiplier at that accuracy (:mod:`hystmech.systems.periodic.stability`):
  "stable", "unstable" or "undecided", no blanket tolerance; a stuck slider's exact
  neutral multiplier μ = 1 is removed structurally.
* inclusions (Masing, Maxwell-slip): the discrete map is the projection scheme
  (Bastien et al. (2007), eqs. (A.7)–(A.9)) at the step ``h``, piecewise smooth in y;
  its Jacobian is the projection-consistent one, the chained per-step derivatives
  (:class:`hystmech.systems.periodic.monodromy.ProjectionMap`: identity on a stuck
  slider, zero along the face normal on a clamped step), exact for that discrete map up
  to round-off; without compiled jac kernels (or with ``monodromy="fd"``) finite
  differences taken into the box when a state sits on a face, so the one-sided
  derivative of the stuck/slipping branch is used.
* operators (relay, Preisach): Newton runs on the DOF positions/velocities (and the
  states of the other elements) only. The operator memory at t0 is not an unknown: it
  is carried over from the end of the previous period of the iteration, which is exact
  at convergence because a periodic input wipes the memory out (Preisach/Mayergoyz
  wiping-out property: after one cycle the memory holds only the cycle's dominant
  extrema, the same after every cycle). The multipliers are those of the DOF map with
  the memory frozen during one period.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from ...components.base import check_finite, check_positive
from ..assembly import Assembly, Harmonic
from ..model import Model
from ..result import SimulationError
from ..simulate import simulate
from .monodromy import (ProjectionMap, VariationalMap, multiplier_errors,
                        supports_projection_jacobian, supports_variational)
from .stability import (UNDECIDED, bifurcation_kind, classify, crossing_kinds, neutral_states,
                        reduce_neutral)


# -- forcing period ----------------------------------------------------------------------------

def forcing_omega(assembly: Assembly) -> float:
    """The common pulsation Ω [rad/s] of the assembly's Harmonic forces and imposed
    motions (Bastien et al. (2007), eq. (52)); ValueError when there is none or when
    they differ (give the period explicitly then)."""
    oms = set()
    for f in assembly.forces:
        if isinstance(f.f, Harmonic):
            if f.f.omega != 0.0 and f.f.amplitude != 0.0:
                oms.add(abs(f.f.omega))
        else:
            raise ValueError(f"period: force {f.name!r} is not a Harmonic; give period= [s]")
    for b in assembly.imposed.values():
        if isinstance(b.u, Harmonic):
            if b.u.omega != 0.0 and b.u.amplitude != 0.0:
                oms.add(abs(b.u.omega))
        else:
            raise ValueError(f"period: imposed motion {b.name!r} is not a Harmonic; give period= [s]")
    if not oms:
        raise ValueError("period: the assembly has no harmonic forcing with omega > 0; give "
                         "period= [s]")
    w = max(oms)
    for o in oms:
        r = w / o
        if abs(r - round(r)) > 1e-9 * r:
            raise ValueError(f"period: the forcing pulsations {sorted(oms)} rad/s are not "
                             f"commensurate; give period= [s]")
    return min(oms)


def operator_states(element) -> np.ndarray:
    """Boolean mask of the element's states that are an operator's memory (relay,
    Preisach): all of them for an operator, those of its operator parts for a parallel
    sum (``parts``, whose states are concatenated in order), none otherwise. Shooting
    carries these over from the end of the previous period instead of solving for them
    (wiping-out property, see the module docstring)."""
    if element.parts:
        masks = [operator_states(el) for el in element.parts]
        return np.concatenate(masks) if masks else np.zeros(0, dtype=bool)
    return np.full(element.n_states, element.kind == "operator")


# -- the flow over one period ---------------------------------------------------------------

class Shooter:
    """The period map y(t0) -> y(t0 + n·T) of an assembly, by the compiled simulation.

    assembly: the forced system; period T [s] (default 2π/Ω of its Harmonic forcing);
    n_periods n >= 1 (subharmonic orbits of period n·T); t0 [s] + phase·T the time of
    the section (phase in forcing periods); method/options: those of :func:`hystmech.systems.simulate` (``"auto"``:
    ``"RK45"`` at rtol 1e-9 for smooth assemblies with Harmonic inputs, else the
    projection scheme at h = 1e-5 s).
    """

    def __init__(self, assembly: Assembly, period: float | None = None, *, n_periods: int = 1,
                 t0: float = 0.0, phase: float = 0.0, method: str = "auto",
                 options: dict | None = None):
        if not isinstance(assembly, Assembly):
            raise ValueError(f"assembly must be a hystmech.systems.Assembly "
                             f"(got {type(assembly).__name__})")
        self.assembly = assembly
        if period is None:
            period = 2.0 * math.pi / forcing_omega(assembly)
        self.period = check_positive("period", period)
        if int(n_periods) != n_periods or int(n_periods) < 1:
            raise ValueError(f"n_periods must be an integer in [1, inf) (got {n_periods!r})")
        self.n_periods = int(n_periods)
        # the section t0 + phase·T: a phase stays put when the period changes
        self.t0 = check_finite("t0", t0) + check_finite("phase", phase) * self.period
        opts = dict(options or {})
        if method == "auto":
            if assembly.smooth:
                method = "RK45"
                opts.setdefault("rtol", 1e-9)
            else:
                method = "projection"
        self.method = method
        self.options = opts
        # adaptive solvers: absolute tolerances follow each state's excursion (set by
        # use_scale) instead of simulate's fixed 1e-12 m floor, which would cap the
        # accuracy of small orbits
        self.auto_atol = method in ("RK45", "BDF", "Radau", "LSODA") and "atol" not in opts
        names = assembly.state_names()
        self.names = names
        N = len(names)
        self.N = N
        nq = len(assembly.dofs)
        lo = np.full(N, -np.inf)
        hi = np.full(N, np.inf)
        free = np.ones(N, dtype=bool)
        xs = np.concatenate([np.full(nq, 1e-9), np.full(nq, 1e-7)])
        o = 2 * nq
        kinds = []
        for e in assembly.elements:
            el = e.element
            n = el.n_states
            sc = np.broadcast_to(np.asarray(el.x_scale if el.x_scale is not None else 1.0,
                                            float), (n,))
            xs = np.concatenate([xs, 1e-6 * np.maximum(np.abs(sc), 1e-300)])
            if el.box_lo is not None:
                lo[o:o + n] = el.box_lo
            if el.box_hi is not None:
                hi[o:o + n] = el.box_hi
            free[o:o + n] &= ~operator_states(el)
            kinds.append(el.kind)
            o += n
        self.kinds = kinds
        self.smooth = all(k == "smooth" for k in kinds)
        self.lo, self.hi = lo, hi
        self.free = np.flatnonzero(free)
        self.floor = xs
        self.n_sims = 0
        self.inclusion = np.zeros(N, dtype=bool)
        o = 2 * nq
        for e in assembly.elements:
            n = e.element.n_states
            self.inclusion[o:o + n] = e.element.kind == "inclusion"
            o += n
        self._model = None
        self._vmap = None
        self._vmap_ok = None
        self._pmap = None
        self._pmap_ok = None
        self.use_variational = True     # False: finite differences even when smooth
        self.last_n_neutral = 0         # stuck inclusions at the last monodromy_with_error

    def variational(self):
        """The :class:`~hystmech.systems.periodic.monodromy.VariationalMap` of this period map
        (smooth assemblies with compiled jac kernels), or None."""
        if not self.use_variational:
            return None
        if self._vmap_ok is None:
            m = self.model() if self.smooth else None
            self._vmap_ok = bool(m is not None and supports_variational(self.assembly, m))
            if self._vmap_ok:
                self._vmap = VariationalMap(self.assembly, self.span, self.t0,
                                            rtol=1e-10, scale=np.maximum(self.floor, 1e-300),
                                            model=m)
        return self._vmap

    def projection_map(self):
        """The :class:`~hystmech.systems.periodic.monodromy.ProjectionMap` of this period
        map (inclusions without operators, compiled jac kernels, integrated by the
        projection scheme), or None: its Jacobian is exact for the discrete map."""
        if not self.use_variational or self.method != "projection":
            return None
        if self._pmap_ok is None:
            kinds = self.kinds
            m = self.model() if "inclusion" in kinds and "operator" not in kinds else None
            self._pmap_ok = bool(m is not None and supports_projection_jacobian(self.assembly, m))
            if self._pmap_ok:
                self._pmap = ProjectionMap(self.assembly, self.span, self.t0,
                                           h=float(self.options.get("h", 1e-5)), model=m)
        return self._pmap

    def model(self):
        """The compiled :class:`~hystmech.systems.model.Model` of the assembly, built once
        and shared by the variational and projection maps (None if it does not build)."""
        if self._model is None:
            try:
                self._model = Model(self.assembly)
            except Exception:   # noqa: BLE001 - no model: finite differences instead
                self._model = False
        return self._model or None

    @property
    def span(self) -> float:
        return self.n_periods * self.period

    def run(self, y, t_eval=None, energy=False):
        """simulate() from the full state y at t0 over n·T; the SimResult."""
        self.n_sims += 1
        t1 = self.t0 + self.span
        te = [t1] if t_eval is None else t_eval
        return simulate(self.assembly, (self.t0, t1), x0=np.clip(y, self.lo, self.hi),
                        method=self.method, t_eval=te, energy=energy, **self.options)

    def flow(self, y) -> np.ndarray:
        """The full state at t0 + n·T from the full state y at t0."""
        return self.run(y).y[-1].copy()

    def sample(self, y, n: int = 400, energy: bool = False):
        """One period n·T sampled at n + 1 equally spaced times (SimResult)."""
        te = self.t0 + self.span * np.linspace(0.0, 1.0, int(n) + 1)
        te[-1] = self.t0 + self.span
        return self.run(y, te, energy)

    # -- derivatives ---------------------------------------------------------------------
    def jacobian(self, y, scale, fy=None, *, eps: float = 1e-4, central: bool = False):
        """∂φ/∂y on the free unknowns (columns/rows ``self.free``) by finite differences,
        steps eps·scale, one-sided into the box for inclusion states on a face.
        Smooth assemblies with compiled jac kernels: the variational equations instead
        (exact, :mod:`hystmech.systems.periodic.monodromy`); inclusions integrated by the
        projection scheme: its projection-consistent Jacobian (exact for the discrete
        map). Returns (M (m, m), φ(y) full)."""
        free = self.free
        if fy is None:
            fy = self.flow(y)
        vm = self.variational()
        if vm is not None:
            self.n_sims += 1
            _, Mv = vm.flow_monodromy(np.clip(y, self.lo, self.hi))
            return Mv[np.ix_(free, free)], fy
        pm = self.projection_map()
        if pm is not None:
            self.n_sims += 1
            _, Mp = pm.flow_monodromy(np.clip(y, self.lo, self.hi))
            return Mp[np.ix_(free, free)], fy
        M = np.empty((free.size, free.size))
        for j, i in enumerate(free):
            d = eps * scale[i]
            room_up = self.hi[i] - y[i]
            room_dn = y[i] - self.lo[i]
            if central and room_up > d and room_dn > d:
                yp = y.copy()
                ym = y.copy()
                yp[i] += d
                ym[i] -= d
                M[:, j] = (self.flow(yp)[free] - self.flow(ym)[free]) / (2 * d)
                continue
            sgn = 1.0 if room_up >= d or room_up >= room_dn else -1.0
            dd = sgn * min(d, max(room_up if sgn > 0 else room_dn, 0.0))
            if dd == 0.0:
                M[:, j] = 0.0
                continue
            yp = y.copy()
            yp[i] += dd
            M[:, j] = (self.flow(yp)[free] - fy[free]) / dd
        return M, fy

    def monodromy_with_error(self, y, scale, *, eps: float = 1e-4, M=None):
        """The monodromy of the free unknowns at y with an error estimate, the stuck
        sliders' neutral rows removed (:mod:`hystmech.systems.periodic.stability`). Returns
        (M, dM, kept indices into ``free``, source "variational" | "projection-jacobian" |
        "finite-differences").
        M: the monodromy at y if already known (variational: only the check run is
        made; finite differences: it is the one at step eps)."""
        vm = self.variational()
        free = self.free
        if vm is not None:
            vm.set_scale(np.maximum(scale, self.floor))
            yc = np.clip(y, self.lo, self.hi)
            if M is None:
                self.n_sims += 1
                M = vm.flow_monodromy(yc)[1][np.ix_(free, free)]
            self.n_sims += 1
            M2 = vm.flow_monodromy(yc, min(100.0 * vm.rtol, 1e-4))[1][np.ix_(free, free)]
            dM = M2 - M
            src = "variational"
        elif self.projection_map() is not None:
            pm = self.projection_map()
            if M is None:
                self.n_sims += 1
                M = pm.flow_monodromy(np.clip(y, self.lo, self.hi))[1][np.ix_(free, free)]
            dM = pm.roundoff(M)
            src = "projection-jacobian"
        else:
            fy = self.flow(y)
            if M is None:
                M, _ = self.jacobian(y, scale, fy, eps=eps, central=self.smooth)
            M2, _ = self.jacobian(y, scale, fy, eps=2 * eps, central=self.smooth)
            dM = M2 - M
            src = "finite-differences"
        keep = np.arange(free.size)
        if self.inclusion[free].any():
            res = self.sample(y, 64)
            nz = neutral_states(res.y[:, free], self.lo[free], self.hi[free],
                                self.inclusion[free])
            if nz.size:
                M, keep = reduce_neutral(M, nz)
                dM = dM[np.ix_(keep, keep)]
            self.last_n_neutral = stuck_elements(self, res)
        else:
            self.last_n_neutral = 0
        return M, dM, keep, src

    def section_quality(self, res) -> np.ndarray:
        """Per sample of ``res`` (one period): min over elements of |v_e| / max|v_e|.
        Hysteretic laws switch branch where an element's velocity reverses, so the flow
        has a kink in the initial state when the section sits on a reversal (v_e = 0);
        the best section is where every element moves fastest (1: no elements)."""
        q = np.ones(res.t.size)
        for e in self.assembly.elements:
            v = np.abs(res.deflection(e.name)[1])
            q = np.minimum(q, v / max(float(v.max()), 1e-300))
        return q

    def use_scale(self, scale):
        """Absolute tolerances rtol·1e-3·scale for the adaptive solvers (unless the
        user gave atol), also of the variational equations; returns scale."""
        if self._vmap is not None:
            self._vmap.set_scale(np.maximum(np.asarray(scale, float), self.floor))
        if self.auto_atol:
            self.options = dict(self.options, atol=float(self.options.get("rtol", 1e-6))
                                * 1e-3 * np.asarray(scale, float))
        return scale

    def scales(self, y, res=None):
        """Scale of each state: its excursion over one period from y (floored)."""
        if res is None:
            res = self.sample(y, 64)
        Y = res.y
        s = np.maximum(np.ptp(Y, axis=0), 1e-3 * np.max(np.abs(Y), axis=0))
        return np.maximum(s, self.floor)


def stuck_elements(sh, res) -> int:
    """Number of inclusion elements whose states stay strictly inside their box over the
    sampled period (no slip: the element acts as a spring, and every offset of its
    stuck slider gives another periodic orbit, so the monodromy has one multiplier 1
    per such element, Bastien et al. (2007), §3)."""
    n = 0
    o = 2 * len(sh.assembly.dofs)
    for e in sh.assembly.elements:
        k = e.element.n_states
        if e.element.kind == "inclusion" and k:
            Y = res.y[:, o:o + k]
            if np.all((Y > sh.lo[o:o + k]) & (Y < sh.hi[o:o + k])):
                n += 1
        o += k
    return n


def drop_neutral(mu, err, n):
    """The multipliers and errors without the n multipliers nearest to +1 (the stuck
    sliders' exact neutral multipliers, :func:`stuck_elements`)."""
    if n <= 0 or mu.size == 0:
        return mu, err
    idx = np.argsort(np.abs(mu - 1.0))[:n]
    keep = np.setdiff1d(np.arange(mu.size), idx)
    return mu[keep], err[keep]


# -- results ---------------------------------------------------------------------------------

def floquet(monodromy) -> np.ndarray:
    """Floquet multipliers: the eigenvalues of the monodromy matrix, sorted by
    decreasing modulus."""
    M = np.asarray(monodromy, dtype=float)
    if M.size == 0:
        return np.zeros(0, dtype=complex)
    mu = np.linalg.eigvals(M)
    return mu[np.argsort(-np.abs(mu), kind="stable")]


def instability(multipliers, errors=None) -> str | None:
    """How the orbit leaves the unit circle: None (no multiplier certainly outside),
    ``"fold"`` (real μ > 1: saddle-node, the orbit's branch turns back),
    ``"period-doubling"`` (real μ < −1) or ``"neimark-sacker"`` (complex pair). errors:
    the error bound of each multiplier (default 0: the multipliers taken as exact); see
    :mod:`hystmech.systems.periodic.stability`."""
    mu = np.asarray(multipliers, dtype=complex)
    err = np.zeros(mu.shape) if errors is None else np.asarray(errors, float)
    return bifurcation_kind(mu, err)


def crossing_counts(multipliers, errors=None):
    """(n_plus, n_minus, n_complex): multipliers certainly outside the unit circle that
    are real positive, real negative, complex (errors: bound per multiplier, default 0).
    A change between two orbits of a branch marks a fold, a period doubling or a
    Neimark–Sacker bifurcation between them."""
    mu = np.asarray(multipliers, dtype=complex)
    err = np.zeros(mu.shape) if errors is None else np.asarray(errors, float)
    return crossing_kinds(mu, err)


@dataclass
class PeriodicOrbit:
    """A periodic orbit found by :func:`periodic_orbit`.

    y0: full state at t0 (names ``names``); period [s] of the forcing and n_periods
    (the orbit repeats after n_periods·period); multipliers: Floquet multipliers (of the
    free unknowns without the exactly neutral stuck sliders, see the module docstring);
    multiplier_errors: the error bound of each; monodromy matrix; stability: "stable",
    "unstable" or "undecided" (:mod:`hystmech.systems.periodic.stability`); stable: stability ==
    "stable"; bifurcation: how it is unstable (``instability``); monodromy_source:
    "variational", "projection-jacobian" or "finite-differences"; residual: max |φ(y0) − y0| / scale;
    iterations, n_sims (simulations used).
    """

    y0: np.ndarray
    period: float
    n_periods: int
    t0: float
    multipliers: np.ndarray
    monodromy: np.ndarray
    stable: bool
    bifurcation: str | None
    residual: float
    iterations: int
    n_sims: int
    names: list
    shooter: Shooter = field(repr=False)
    scale: np.ndarray = field(repr=False, default=None)
    multiplier_errors: np.ndarray = field(default=None)
    stability: str = "undecided"
    monodromy_source: str = ""

    @property
    def omega(self) -> float:
        """Forcing pulsation Ω = 2π/period [rad/s]."""
        return 2.0 * math.pi / self.period

    def simulate(self, n: int = 400, energy: bool = False):
        """One period of the orbit sampled at n + 1 times (a SimResult)."""
        return self.shooter.sample(self.y0, n, energy)


class ConvergenceError(RuntimeError):
    """Newton's method of the shooting did not converge; ``y`` is the last iterate."""

    def __init__(self, message, y=None, residual=math.nan):
        super().__init__(message)
        self.y = y
        self.residual = residual


# -- Newton --------------------------------------------------------------------------------

def min_norm_solve(A, b, rcond: float = 1e-9):
    """The minimum-norm least-squares solution of A·x = b, singular values below
    rcond·max dropped. Orbits are not isolated when a state is neutral (e.g. a stuck
    Masing slider: every stuck offset w gives a periodic orbit, multiplier 1); the
    minimum-norm Newton step then does not drift along that family."""
    return np.linalg.lstsq(A, b, rcond=rcond)[0]


def newton_shoot(sh: Shooter, y, scale, *, tol: float = 1e-8, max_iter: int = 30,
                 eps: float = 1e-4, J=None, broyden: bool = True):
    """Newton iterations on R(y) = φ(y) − y (free unknowns), scaled by ``scale``.

    J: initial Jacobian ∂R/∂y (e.g. from the previous orbit of a branch), else finite
    differences; broyden: rank-one (good Broyden) updates between Jacobians, a fresh
    finite-difference Jacobian when an update fails to reduce the residual.
    Returns (y, J, residual, iterations, φ(y))."""
    free = sh.free
    y = np.clip(np.asarray(y, float).copy(), sh.lo, sh.hi)
    fy = sh.flow(y)
    r = fy[free] - y[free]
    s = scale[free]
    err = float(np.max(np.abs(r / s))) if free.size else 0.0
    fresh = False
    it = 0
    for it in range(1, max_iter + 1):
        if err <= tol:
            return y, J, err, it - 1, fy
        if J is None:
            M, _ = sh.jacobian(y, scale, fy, eps=eps)
            J = M - np.eye(free.size)
            fresh = True
        dz = -min_norm_solve(J * s[None, :], r) * s   # scaled columns: conditioning
        # damped step: halve until the scaled residual decreases (or give up halving)
        lam = 1.0
        accepted = False
        for _ in range(6):
            yn = y.copy()
            yn[free] = np.clip(y[free] + lam * dz, sh.lo[free], sh.hi[free])
            # operator memory: carried over from the end of the last period (wiped out)
            yn[~np.isin(np.arange(sh.N), free)] = fy[~np.isin(np.arange(sh.N), free)]
            try:
                fn = sh.flow(yn)
            except SimulationError:
                lam *= 0.5
                continue
            rn = fn[free] - yn[free]
            en = float(np.max(np.abs(rn / s)))
            if np.isfinite(en) and (en < err or lam < 0.1):
                accepted = True
                break
            lam *= 0.5
        if not accepted:
            if fresh:
                raise ConvergenceError(f"shooting: Newton's step does not reduce the residual "
                                       f"({err:.3g})", y, err)
            J = None
            continue
        if broyden and en < err:
            dy = yn[free] - y[free]
            J = J + np.outer(rn - r - J @ dy, dy) / max(float(dy @ dy), 1e-300)
            fresh = False
        else:
            J = None
        if en > 0.5 * err and not fresh:
            J = None       # slow progress: refresh the Jacobian
        y, fy, r, err = yn, fn, rn, en
    if err <= tol:
        return y, J, err, max_iter, fy
    raise ConvergenceError(f"shooting: no convergence in {max_iter} Newton iterations "
                           f"(scaled residual {err:.3g} > tol {tol:g})", y, err)


def default_fd_eps(assembly: Assembly) -> float:
    """Finite-difference step of the monodromy, relative to each state's excursion:
    1e-4, or 1e-2 with an operator (a Preisach/Prandtl-Ishlinskii operator is a sum of
    relays on a grid: a step below the grid spacing sees single relay flips, not the
    operator's slope)."""
    return 1e-2 if any(e.element.kind == "operator" for e in assembly.elements) else 1e-4


def periodic_orbit(assembly: Assembly, period: float | None = None, y0=None, *,
                   n_periods: int = 1, t0: float = 0.0, method: str = "auto",
                   transient_periods: int = 0, tol: float = 1e-8, max_iter: int = 30,
                   fd_eps: float | None = None, section: str = "auto", monodromy: str = "auto",
                   options: dict | None = None) -> PeriodicOrbit:
    """Periodic orbit of a forced assembly by shooting with Newton's method.

    assembly: forced with period T [s] (default 2π/Ω of its Harmonic inputs, Bastien et
    al. (2007), eq. (52)); y0: initial guess of the full state at t0 [s] (default the
    assembly's initial state after ``transient_periods`` periods); n_periods: look for an
    orbit of period n·T (subharmonic); method/options: of
    :func:`hystmech.systems.simulate`; fd_eps: finite-difference step relative to the
    excursion (default :func:`default_fd_eps`); tol: on max |φ(y) − y| / scale, scale = the
    excursion of each state over one period; section: ``"auto"`` moves t0 off velocity
    reversals of the elements (where hysteretic laws make the flow non-smooth),
    ``"fixed"`` keeps it; monodromy (Newton's Jacobian and the converged orbit's):
    ``"auto"`` (the variational equations, :mod:`hystmech.systems.periodic.monodromy`, where the
    assembly is smooth with compiled jac kernels; the projection-consistent Jacobian for
    inclusions integrated by the projection scheme; else finite differences), ``"fd"``
    or ``"variational"`` (ValueError when not possible). Returns a :class:`PeriodicOrbit` with its
    Floquet multipliers and stability (see the module docstring for the monodromy).
    """
    sh = Shooter(assembly, period, n_periods=n_periods, t0=t0, method=method, options=options)
    tol = check_positive("tol", tol)
    fd_eps = default_fd_eps(assembly) if fd_eps is None else check_positive("fd_eps", fd_eps)
    if int(max_iter) < 1:
        raise ValueError(f"max_iter must be in [1, inf) (got {max_iter!r})")
    if int(transient_periods) < 0:
        raise ValueError(f"transient_periods must be in [0, inf) (got {transient_periods!r})")
    y = assembly.initial_state() if y0 is None else np.asarray(y0, dtype=float).ravel().copy()
    if y.size != sh.N:
        raise ValueError(f"y0 must have {sh.N} components ({', '.join(sh.names)}); got {y.size}")
    if not np.all(np.isfinite(y)):
        raise ValueError("y0 must be finite")
    for _ in range(int(transient_periods)):
        y = sh.flow(y)
    if monodromy not in ("auto", "fd", "variational"):
        raise ValueError(f"monodromy must be 'auto', 'fd' or 'variational' (got {monodromy!r})")
    if monodromy == "variational" and sh.variational() is None:
        raise ValueError("monodromy='variational' needs smooth elements with compiled jac "
                         "kernels and compiled (Harmonic) inputs")
    sh.use_variational = monodromy != "fd"
    if section not in ("auto", "fixed"):
        raise ValueError(f"section must be 'auto' or 'fixed' (got {section!r})")
    if section == "auto" and assembly.elements:
        sh, y = rephase(sh, y)
    o = _converge(sh, y, tol=tol, max_iter=int(max_iter), eps=fd_eps)
    if section == "auto" and assembly.elements:
        sh2, y2 = rephase(o.shooter, o.y0)
        if sh2 is not o.shooter:
            o = _converge(sh2, y2, tol=tol, max_iter=int(max_iter), eps=fd_eps)
    return o


def rephase(sh: Shooter, y, res=None, *, min_quality: float = 0.3, n: int = 256):
    """Move the section of ``sh`` to where the elements move fastest when their
    velocity nearly reverses at t0 (see :meth:`Shooter.section_quality`). Returns
    (shooter, state at its section): the same ones when t0 is good enough."""
    if res is None:
        res = sh.sample(y, n)
    q = sh.section_quality(res)
    if q[0] >= min_quality:
        return sh, y
    k = int(np.argmax(q[:-1]))
    new = Shooter(sh.assembly, sh.period, n_periods=sh.n_periods, t0=float(res.t[k]),
                  method=sh.method, options=sh.options)
    new.use_variational = sh.use_variational
    new.n_sims = sh.n_sims
    return new, res.y[k].copy()


def _converge(sh: Shooter, y, *, tol, max_iter, eps, J=None, scale=None):
    if scale is None:
        scale = sh.use_scale(sh.scales(y))
    y, J, err, it, fy = newton_shoot(sh, y, scale, tol=tol, max_iter=max_iter, eps=eps, J=J)
    # the orbit's scale may differ from the guess's: re-check on the orbit's own scale
    scale2 = sh.scales(y)
    if sh.auto_atol and np.any(scale2 < 0.5 * scale):
        sh.use_scale(scale2)
    free = sh.free
    err2 = float(np.max(np.abs((fy[free] - y[free]) / scale2[free]))) if free.size else 0.0
    if err2 > tol:
        y, J, err2, it2, fy = newton_shoot(sh, y, scale2, tol=tol, max_iter=max_iter,
                                           eps=eps, J=J)
        it += it2
    return finish_orbit(sh, y, scale2, err2, it, eps=eps)


def finish_orbit(sh: Shooter, y, scale, residual, iterations, *, eps=1e-4):
    """The converged orbit with its monodromy (variational, or finite differences with
    an error estimate), Floquet multipliers, their errors and the stability verdict."""
    M, dM, keep, src = sh.monodromy_with_error(y, scale, eps=eps)
    mu, err = multiplier_errors(M, dM, np.maximum(scale, sh.floor)[sh.free][keep])
    mu, err = drop_neutral(mu, err, sh.last_n_neutral)
    st = classify(mu, err)
    return PeriodicOrbit(y0=y.copy(), period=sh.period, n_periods=sh.n_periods, t0=sh.t0,
                         multipliers=mu, monodromy=M, stable=st == "stable",
                         bifurcation=instability(mu, err), residual=float(residual),
                         iterations=int(iterations), n_sims=sh.n_sims, names=list(sh.names),
                         shooter=sh, scale=scale, multiplier_errors=err, stability=st,
                         monodromy_source=src)


# -- amplitudes ---------------------------------------------------------------------------

def peak_to_peak(t, x) -> float:
    """max(x) − min(x) [same unit] of a sampled periodic signal, each extremum refined
    by the parabola through it and its two neighbours (cyclic samples, last = first)."""
    x = np.asarray(x, dtype=float)
    if x.size < 4:
        return float(np.ptp(x))
    xc = x[:-1] if abs(x[-1] - x[0]) <= 1e-9 * max(np.abs(x).max(), 1e-300) else x
    n = xc.size

    def refine(i):
        a, b, c = xc[(i - 1) % n], xc[i], xc[(i + 1) % n]
        den = a - 2 * b + c
        if den == 0.0:
            return b
        d = 0.5 * (a - c) / den
        return b - 0.25 * (a - c) * d

    return float(refine(int(np.argmax(xc))) - refine(int(np.argmin(xc))))


# -- elements under a periodic input (drive-type problems) --------------------------------

@njit(cache=False)
def _advance_period(advance, t, u, vseg, x0, p, rtol):
    # the full state after one input period by the law's own segment update (drive()
    # records only the n_report_states leading states, e.g. not a Preisach stack);
    # not cached on disk for the reason given at core/drive.py's _drive_loop
    x = x0.copy()
    for k in range(t.size - 1):
        advance(x, u[k], u[k + 1], t[k + 1] - t[k], vseg[k], p, rtol)
    return x


class _DriveMap(Shooter):
    """The period map x(t0) -> x(t0 + T) of one element driven by a periodic
    displacement (the segment updates of hystmech.drive), in the interface newton_shoot
    uses. Operator memory (:func:`operator_states`) is carried over, not solved for."""

    def __init__(self, element, t, u, v, rtol):
        from ...components.base import is_compiled

        self.element = element
        self.t, self.u, self.v, self.rtol = t, u, v, rtol
        # segment velocities as drive() takes them: the slope, or the mean of v
        self.vseg = np.ascontiguousarray(np.diff(u) / np.diff(t) if v is None
                                         else 0.5 * (v[1:] + v[:-1]))
        self.advance_period = (_advance_period if is_compiled(element.advance)
                               else _advance_period.py_func)
        n = element.n_states
        self.N = n
        names = list(element.state_names)
        self.names = names + [f"x{i}" for i in range(len(names), n)]
        self.lo = np.full(n, -np.inf)
        self.hi = np.full(n, np.inf)
        if element.box_lo is not None:
            self.lo = np.asarray(element.box_lo, float).copy()
        if element.box_hi is not None:
            self.hi = np.asarray(element.box_hi, float).copy()
        self.free = np.flatnonzero(~operator_states(element))
        self.smooth = element.kind == "smooth"
        sc = np.broadcast_to(np.asarray(element.x_scale if element.x_scale is not None
                                        else 1.0, float), (n,))
        self.floor = 1e-6 * np.maximum(np.abs(sc), 1e-300)
        self.n_sims = 0
        self.use_variational = False    # segment updates: finite differences
        self.last_n_neutral = 0
        self._vmap = None

    def run_drive(self, x):
        from ...drive import drive

        self.n_sims += 1
        return drive(self.element, self.t, self.u, self.v, rtol=self.rtol,
                     x0=np.clip(x, self.lo, self.hi))

    def flow(self, y):
        self.n_sims += 1
        x = np.ascontiguousarray(np.clip(np.asarray(y, float), self.lo, self.hi))
        return self.advance_period(self.element.advance, self.t, self.u, self.vseg, x,
                                   self.element.p, float(self.rtol))

    def scales(self, y, res=None):
        """Excursion of each state over the period (the recorded ones; the others,
        e.g. an operator's memory stack, by their size), floored."""
        X = (self.run_drive(y) if res is None else res).state
        y = np.asarray(y, float)
        s = np.maximum(1e-3 * np.abs(y), self.floor)
        r = X.shape[1]
        if r:
            s[:r] = np.maximum(np.maximum(np.ptp(X, axis=0), 1e-3 * np.max(np.abs(X), axis=0)),
                               self.floor[:r])
        return s


@dataclass
class SteadyLoop:
    """Result of :func:`periodic_state`: x0 the periodic state at t[0]; result the
    DriveResult of one period from it (t, u, force, state); iterations (Newton steps),
    n_periods (periods simulated in all, Jacobians included), residual (max |x(T) − x0|
    / scale), multipliers (eigenvalues of ∂x(T)/∂x0: the contraction per period)."""

    x0: np.ndarray
    result: object
    iterations: int
    n_periods: int
    residual: float
    multipliers: np.ndarray


def periodic_state(element, t, u, v=None, *, rtol: float = 1e-10, tol: float = 1e-10,
                   max_iter: int = 20, x0=None, fd_eps: float = 1e-6) -> SteadyLoop:
    """Steady hysteresis loop of an element under a periodic input, by Newton's method
    on the period map instead of simulating period after period.

    t [s], u [m] (and optionally v [m/s]): one period of the input for
    :func:`hystmech.drive` (u[-1] must equal u[0]); x0: initial guess (default the
    element's x0). The fixed point x* = φ_T(x*) of the period map is the state on the
    attracting loop (for the Dahl/LuGre models the closed forms of Ikhouane, Mañosa &
    Pujol, Theorem 2, eqs. (6), (8)); the Jacobian is by finite differences of the
    exact (or rtol-accurate) segment updates. Operators (relay, Preisach) reach it in
    one period by the wiping-out property and need no Newton step; in a parallel sum
    (``parts``) their memory is carried over while Newton solves for the other parts'
    states. The period map advances the full state (every state, also those drive()
    does not record, e.g. a Preisach memory stack) with the law's ``advance`` kernel.
    """
    from ...components.base import ForceElement

    if not isinstance(element, ForceElement):
        raise ValueError(f"element must be a hystmech force element (got {type(element).__name__})")
    t = np.asarray(t, dtype=float).ravel()
    u = np.asarray(u, dtype=float).ravel()
    if t.size < 2 or u.size != t.size:
        raise ValueError(f"t and u must have the same length >= 2 (got {t.size}, {u.size})")
    span = float(np.ptp(u)) if u.size else 0.0
    if not np.all(np.isfinite(u)) or abs(u[-1] - u[0]) > 1e-9 * max(span, 1e-300):
        raise ValueError(f"u must describe one period: finite, with u[-1] == u[0] "
                         f"(got {u[0]!r} and {u[-1]!r})")
    tol = check_positive("tol", tol)
    sh = _DriveMap(element, t, u, v, rtol)
    x = element.x0.copy() if x0 is None else np.asarray(x0, dtype=float).ravel().copy()
    if x.size != element.n_states:
        raise ValueError(f"x0 must have {element.n_states} component(s) (got {x.size})")
    if sh.free.size < sh.N:
        x = sh.flow(x)                  # one period wipes the operator memory out
    if sh.free.size == 0:
        scale = sh.scales(x)
        err = float(np.max(np.abs(sh.flow(x) - x) / scale)) if x.size else 0.0
        return SteadyLoop(x0=x, result=sh.run_drive(x), iterations=0, n_periods=sh.n_sims,
                          residual=err, multipliers=np.zeros(0))
    scale = sh.scales(x)
    x, J, err, it, fx = newton_shoot(sh, x, scale, tol=tol, max_iter=max_iter, eps=fd_eps)
    M, _ = sh.jacobian(x, scale, eps=fd_eps, central=sh.smooth)
    mu = floquet(M)
    if mu.size and np.abs(mu).max() < 1.0:
        # a contracting loop: one more period multiplies the error Newton left (its
        # finite-difference Jacobian carries the rounding of every segment) by |μ|
        x2 = sh.flow(x)
        err2 = float(np.max(np.abs((sh.flow(x2) - x2)[sh.free] / scale[sh.free])))
        if err2 < err:
            x, err = x2, err2
    res = sh.run_drive(x)
    return SteadyLoop(x0=x, result=res, iterations=it, n_periods=sh.n_sims, residual=err,
                      multipliers=mu)
