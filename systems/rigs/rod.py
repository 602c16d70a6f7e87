"""Planar discrete Cosserat rod with a history-dependent bending moment law.

A rod of length L clamped at s = 0 (position and frame fixed) is cut into N straight
segments of length h = L/N. Unknowns are the N+1 centreline nodes r_j = (x_j, y_j), the
N segment frame angles θ_1..θ_N and the two end-frame angles θ_0 (clamped) and
θ_{N+1} (tip). Strains and laws (Manfredo, Dörlich, Linn & Arnold (2023), §2):

* segment strain Γ = R(θ)ᵀ·Δr/h, force F = diag(GA, EA)·(Γ − Γ_0)  (eq. (1));
* vertex curvature K_j = (θ_{j+1} − θ_j)/ℓ_j (ℓ_j = h, h/2 at the ends) and bending
  moment M_j = M̂[K_j] (eqs. (2)-(3)): any hystmech force element taking the curvature
  [1/m] as its input and returning the moment [N·m] as its force, e.g.
  ``LinearSpring(k=EI)``, ``Preisach(...)`` or their sum. Every vertex keeps its own
  copy of the element's state (its own hysteresis memory).

Solvers: :func:`quasi_static` (Newton on the static equilibrium at each step of a load
path, banded tangent stiffness with the moment law's tangent on its active branch, line
search and load-step cutting) and :func:`dynamic` (Newmark average acceleration with the
moment operator advanced once per committed time step).

    >>> from hystmech.systems.rod import Rod, quasi_static
    >>> rod = Rod(N=40, L=0.4, law=LinearSpring(k=0.05))
    >>> res = quasi_static(rod, tip_force=np.linspace(0, 1, 11))   # transverse tip load [N]
    >>> res.tip[-1]                                                # tip position [m]
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.linalg.lapack import dgbtrf as _gbtrf, dgbtrs as _gbtrs

from ...components.base import ForceElement, check_positive, check_range
from . import rod_kernels as rk

__all__ = ["Rod", "RodState", "StaticResult", "DynamicResult", "RodConvergenceError",
           "quasi_static", "dynamic"]


class RodConvergenceError(ValueError):
    """Newton's method failed at a load/time step even after step cutting.

    ``step`` is the index of the load step (or time step) that failed, ``result`` holds
    the converged steps before it (a StaticResult / DynamicResult), ``reason`` the cause.
    """

    def __init__(self, message, step, result=None, reason=""):
        super().__init__(message)
        self.step = step
        self.result = result
        self.reason = reason


@dataclass
class RodState:
    """A committed configuration: dofs q, vertex curvatures K [1/m], memories X."""

    q: np.ndarray
    K: np.ndarray
    X: np.ndarray

    def copy(self) -> "RodState":
        return RodState(self.q.copy(), self.K.copy(), self.X.copy())


def _elastic_parts(law) -> tuple:
    """The stateless parts of a moment law (the law itself when it is stateless): their
    stored energy depends on the curvature alone (e.g. linear springs), so it is the
    path-independent part of the moment work (used to split it in dynamic()). Read
    from the declared protocol: ``parts``, ``n_states`` and ``stored_energy``."""
    parts = law.parts or (law,)
    out = []
    for el in parts:
        if el.n_states == 0 and el.stored_energy(np.zeros((1, 0)), np.zeros(1)) is not None:
            out.append(el)
    return tuple(out)


class Rod:
    """Planar discrete Cosserat rod clamped at s = 0.

    N [-] ≥ 2 segments, L [m] > 0, law: force element mapping curvature [1/m] to bending
    moment [N·m] (Manfredo et al. (2023), eq. (3)). EA, GA [N] > 0: axial and shear
    stiffness of eq. (1); None (default) makes the rod quasi-inextensible and
    unshearable (penalty 1e6·EI0/L², EI0 = the law's initial tangent). rhoA [kg/m] and
    rhoI [kg·m] ≥ 0: mass and rotary inertia per length (only for :func:`dynamic`).
    memory0: the law's state at K = 0 given to every vertex (default law.x0), e.g. a
    demagnetised Preisach memory. For long dynamic runs give physical EA, GA: the stiff
    default penalty makes the Newmark iteration fragile.
    """

    def __init__(self, *, N, L, law, EA=None, GA=None, rhoA=0.0, rhoI=0.0, memory0=None):
        if isinstance(N, bool) or not isinstance(N, (int, np.integer)) or N < 2:
            raise ValueError(f"N must be an integer in [2, inf) (got {N!r})")
        self.N = int(N)
        self.L = check_positive("L", L)
        if not isinstance(law, ForceElement):
            raise ValueError("law must be a hystmech force element (curvature [1/m] -> "
                             f"moment [N·m]), got {type(law).__name__}")
        if law.advance is None or law.force is None:
            raise ValueError(f"law {law.name} has no advance/force kernels")
        self.law = law
        if memory0 is None:
            self.memory0 = law.x0.copy()
        else:
            self.memory0 = np.ascontiguousarray(np.asarray(memory0, dtype=float).ravel())
            if self.memory0.size != law.n_states or not np.all(np.isfinite(self.memory0)):
                raise ValueError(f"memory0 must be a finite state vector of the law "
                                 f"({law.n_states} values), got {self.memory0.size}")
        self.h = self.L / self.N
        slope = law.slope
        self._has_slope = slope is not None
        self._slope = slope if slope is not None else law.force
        # the law's initial tangent sets the scales (and must be positive: a rod
        # without bending stiffness has no unique static shape)
        S = self._tangents(np.zeros(self.N + 1), np.zeros(self.N + 1), self.initial_memory(),
                           np.full(self.N + 1, 1e-6 / self.L))[1]
        self.EI0 = float(S[0])
        if not (math.isfinite(self.EI0) and self.EI0 > 0):
            raise ValueError(f"law {law!r} must have a positive initial bending stiffness "
                             f"EI (dM/dK at K = 0) in (0, inf) (got {self.EI0!r})")
        penalty = 1e6 * self.EI0 / self.L ** 2
        self.EA = penalty if EA is None else check_positive("EA", EA)
        self.GA = penalty if GA is None else check_positive("GA", GA)
        self.rhoA = check_range("rhoA", rhoA, lo=0.0)
        self.rhoI = check_range("rhoI", rhoI, lo=0.0)
        self.elastic_parts = _elastic_parts(law)
        self.n_dof = 3 * self.N + 4
        self.ell = np.full(self.N + 1, self.h)
        self.ell[0] = self.ell[-1] = 0.5 * self.h
        self.s_nodes = np.linspace(0.0, self.L, self.N + 1)

    # -- indices ------------------------------------------------------------------------
    def i_theta(self, j):
        return 3 * j

    def i_x(self, j):
        return 3 * j + 1

    def i_y(self, j):
        return 3 * j + 2

    @property
    def i_tip_theta(self) -> int:
        return 3 * self.N + 3

    # -- states -------------------------------------------------------------------------
    def initial_memory(self) -> np.ndarray:
        return np.ascontiguousarray(np.tile(self.memory0, (self.N + 1, 1)))

    def straight(self) -> RodState:
        """The straight, unloaded reference state along the x axis with fresh memories."""
        q = np.zeros(self.n_dof)
        q[1:3 * self.N + 2:3] = self.s_nodes
        return RodState(q, np.zeros(self.N + 1), self.initial_memory())

    def positions(self, q) -> np.ndarray:
        """Node positions (N+1, 2) [m] of the dof vector q."""
        q = np.asarray(q)
        return np.stack([q[..., 1:3 * self.N + 2:3], q[..., 2:3 * self.N + 3:3]], axis=-1)

    def angles(self, q) -> np.ndarray:
        """Frame angles θ_0..θ_{N+1} [rad]."""
        return np.asarray(q)[..., 0::3]

    def curvature(self, q) -> np.ndarray:
        K = np.empty(self.N + 1)
        rk.curvatures(np.ascontiguousarray(q, dtype=float), self.N, self.h, K)
        return K

    # -- kernels wrappers -----------------------------------------------------------------
    def _tangents(self, K, K_prev, X_prev, dK=None, X_trial=None):
        nn = self.N + 1
        M = np.empty(nn); S = np.empty(nn)
        if X_trial is None:
            X_trial = np.empty_like(X_prev)
        rk.moments_kernel(self.law, self._slope)(K, K_prev, X_prev, X_trial, self._has_slope,
                                                 self.law.p, 1e-7 / self.L, M, S)
        return M, S, X_trial

    def __repr__(self):
        return (f"Rod(N={self.N}, L={self.L!r}, law={self.law!r}, EA={self.EA:.4g}, "
                f"GA={self.GA:.4g}, rhoA={self.rhoA!r}, rhoI={self.rhoI!r})")


# ---------------------------------------------------------------------------------------
@dataclass
class StaticResult:
    """Quasi-static load path solution, arrays over the n converged load steps.

    q (n, n_dof) dofs, r (n, N+1, 2) node positions [m], theta (n, N+2) frame angles
    [rad], K (n, N+1) vertex curvatures [1/m], M (n, N+1) vertex moments [N·m],
    tip (n, 2) tip position [m], tip_force (n, 2) [N] and tip_moment (n,) [N·m]
    acting on the tip (applied loads, or reactions where the tip is prescribed),
    iterations (n,) Newton iterations per step; state: the last committed RodState.
    """

    rod: Rod
    q: np.ndarray
    K: np.ndarray
    M: np.ndarray
    tip_force: np.ndarray
    tip_moment: np.ndarray
    iterations: np.ndarray
    state: RodState = field(repr=False)

    @property
    def r(self):
        return self.rod.positions(self.q)

    @property
    def theta(self):
        return self.rod.angles(self.q)

    @property
    def tip(self):
        return self.r[:, -1, :]

    @property
    def n_steps(self):
        return self.q.shape[0]

    def dissipated_energy(self) -> np.ndarray:
        """Net work Σ_steps ℓ_j·½(M_k + M_{k+1})·ΔK_j absorbed by each vertex [J]."""
        dK = np.diff(self.K, axis=0)
        Mm = 0.5 * (self.M[1:] + self.M[:-1])
        return self.rod.ell * np.sum(Mm * dK, axis=0)


def _series(name, a, n_cols=None):
    if a is None:
        return None
    arr = np.asarray(a, dtype=float)
    if n_cols is not None and arr.ndim == 1:
        arr = np.stack([np.zeros_like(arr), arr], axis=1)  # transverse (y) component
    want = 1 if n_cols is None else 2
    if arr.ndim != want or (n_cols is not None and arr.shape[1] != 2) or arr.shape[0] < 1:
        shape = "(n,)" if n_cols is None else "(n,) or (n, 2)"
        raise ValueError(f"{name} must be an array of shape {shape} over the load steps "
                         f"(got shape {arr.shape})")
    bad = ~np.isfinite(arr)
    if bad.any():
        k = int(np.flatnonzero(bad.reshape(arr.shape[0], -1).any(axis=1))[0])
        raise ValueError(f"{name} must be finite: non-finite value at load step {k}")
    return arr


class _Problem:
    """Residual/tangent of one step: g(q) − f_ext with prescribed dofs as unit rows."""

    def __init__(self, rod: Rod, fixed_idx, free_tip=False):
        self.rod = rod
        # a free tip carries no moment: its half-cell is dropped (K_N ≡ 0) so that a
        # staircase law never has to find M = 0 exactly there
        self.free_tip = free_tip
        n = rod.n_dof
        self.g = np.empty(n)
        self.ab = np.empty((2 * rk.BW + 1, n))
        self.fixed = np.asarray(fixed_idx, dtype=np.int64)
        w = np.full(n, rod.L ** 2 / rod.EI0)       # force rows scaled by EI0/L²
        w[0::3] = rod.L / rod.EI0                  # moment rows scaled by EI0/L
        self.w = w
        self.dq_scale = np.full(n, 1.0 / rod.L)
        self.dq_scale[0::3] = 1.0
        self.K = np.empty(rod.N + 1)
        self.X_trial = np.empty_like(rod.initial_memory())

    def evaluate(self, q, state: RodState, fext, fixed_val, mass_term=None):
        rod = self.rod
        rk.curvatures(q, rod.N, rod.h, self.K)
        M, S, _ = rod._tangents(self.K, state.K, state.X, X_trial=self.X_trial)
        if self.free_tip:
            M[-1] = 0.0
            S[-1] = 0.0
        rk.assemble(q, rod.N, rod.h, rod.EA, rod.GA, M, S, self.g, self.ab)
        r = self.g - fext
        if mass_term is not None:
            mass_term(q, r, self.ab)
        rr = r.copy()
        rr[self.fixed] = q[self.fixed] - fixed_val
        rk.fix_rows(self.ab, self.fixed)
        if self.free_tip:
            i = rod.i_tip_theta
            rk.fix_rows(self.ab, np.array([i], dtype=np.int64))
            self.ab[rk.BW + 3, i - 3] = -1.0
            rr[i] = q[i] - q[i - 3]
        return rr, M

    def _factor(self):
        abl = np.zeros((3 * rk.BW + 1, self.ab.shape[1]))
        abl[rk.BW:] = self.ab
        lu, piv, info = _gbtrf(abl, rk.BW, rk.BW, overwrite_ab=True)
        if info != 0:
            raise _NewtonFail("singular tangent stiffness")
        return lu, piv

    def _lu_solve(self, lu, piv, b):
        x, info = _gbtrs(lu, rk.BW, rk.BW, b, piv)
        return x

    def solve(self, q, state, fext, fixed_val, tol, max_iter, mass_term=None):
        """Newton from q with the banded tangent. The correction is scaled down so that no
        angle turns by more than 0.5 rad per iteration (a residual-based line search
        would reject sound steps: the stiff eq. (1) terms make the residual of a good
        rotation step huge). A piecewise-smooth law (Preisach branches, Masing stick/slip)
        can make full steps cycle between two branches: once the corrections stop
        shrinking, the steps are under-relaxed. Converged when the scaled correction
        (positions/L, angles in rad) is below tol. Returns (q, M, iterations) or raises
        _NewtonFail (the caller then cuts the load step)."""
        q = q.copy()
        r, M = self.evaluate(q, state, fext, fixed_val, mass_term)
        nd_prev = nd_prev2 = np.inf
        relax = 1.0
        for it in range(1, max_iter + 1):
            if not np.all(np.isfinite(r)):
                raise _NewtonFail("non-finite residual")
            lu, piv = self._factor()
            dq = -self._lu_solve(lu, piv, r)
            if not np.all(np.isfinite(dq)):
                raise _NewtonFail("singular tangent stiffness")
            nd = float(np.max(np.abs(dq * self.dq_scale)))
            if nd <= tol:
                return q + dq, self.evaluate(q + dq, state, fext, fixed_val, mass_term)[1], it
            if it > 6 and nd > 0.5 * nd_prev2:
                relax = max(0.25, 0.5 * relax)      # cycling: land between the branches
            else:
                relax = min(1.0, 2.0 * relax)
            scale = relax
            if nd * scale > 0.5:
                scale = 0.5 / nd
            nd_prev2, nd_prev = nd_prev, nd
            q = q + scale * dq
            r, M = self.evaluate(q, state, fext, fixed_val, mass_term)
        raise _NewtonFail(f"no convergence in {max_iter} iterations (last correction "
                          f"{nd:.3g})")


class _NewtonFail(Exception):
    pass


def quasi_static(rod: Rod, *, tip_force=None, tip_moment=None, tip_rotation=None,
                 tip_position=None, start: RodState | None = None, tol: float = 1e-10,
                 max_iter: int = 30, max_cuts: int = 10, progress=None) -> StaticResult:
    """Quasi-static equilibrium of ``rod`` along a load path, one Newton solve per step.

    Each given array runs over the same n load steps (solved in order from ``start``,
    default the straight rod with fresh memories):
    tip_force (n,) transverse or (n, 2) [N] dead load at the tip node; tip_moment (n,)
    [N·m] on the tip frame; tip_rotation (n,) [rad] prescribed tip frame angle;
    tip_position (n, 2) [m] prescribed tip node. tip_force/tip_position and
    tip_moment/tip_rotation exclude each other. Equilibrium: internal forces of
    Manfredo et al. (2023) eqs. (1)-(3) balance the loads; the moment law at each vertex
    is advanced from its last committed curvature (trial Newton evaluations use a
    copy). A step Newton cannot solve is cut in halves up to ``max_cuts`` times;
    after that RodConvergenceError names the step and keeps the solved steps in
    ``err.result``. tol: Newton stops when the correction is below tol (positions
    relative to L, angles in rad). progress: True (a bar on stderr), a callable
    progress(fraction, message) called after each load step, or None.
    """
    from ...progress import resolve

    progress = resolve(progress, "load steps")
    if not isinstance(rod, Rod):
        raise ValueError(f"rod must be a Rod (got {type(rod).__name__})")
    tf = _series("tip_force", tip_force, n_cols=2)
    tm = _series("tip_moment", tip_moment)
    tr = _series("tip_rotation", tip_rotation)
    tp = _series("tip_position", tip_position, n_cols=2)
    if tf is not None and tp is not None:
        raise ValueError("give either tip_force or tip_position, not both")
    if tm is not None and tr is not None:
        raise ValueError("give either tip_moment or tip_rotation, not both")
    given = [(k, a) for k, a in (("tip_force", tf), ("tip_moment", tm),
                                 ("tip_rotation", tr), ("tip_position", tp)) if a is not None]
    if not given:
        raise ValueError("give at least one of tip_force, tip_moment, tip_rotation, "
                         "tip_position")
    n = given[0][1].shape[0]
    for k, a in given:
        if a.shape[0] != n:
            raise ValueError(f"{k} has {a.shape[0]} load steps, {given[0][0]} has {n}: "
                             "all load arrays must have the same length")
    tol = check_range("tol", tol, lo=0.0, hi=1.0, lo_open=True)
    if not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise ValueError(f"max_iter must be an integer in [1, inf) (got {max_iter!r})")
    if not isinstance(max_cuts, (int, np.integer)) or max_cuts < 0:
        raise ValueError(f"max_cuts must be an integer in [0, inf) (got {max_cuts!r})")

    N = rod.N
    fixed = [0, 1, 2]                      # clamp: θ_0, x_0, y_0
    if tr is not None:
        fixed.append(rod.i_tip_theta)
    if tp is not None:
        fixed += [rod.i_x(N), rod.i_y(N)]
    prob = _Problem(rod, fixed, free_tip=(tm is None and tr is None))
    state = rod.straight() if start is None else start.copy()
    q0_clamp = state.q[:3].copy()

    def loads(k):
        """f_ext and prescribed values at load step k."""
        f = np.zeros(rod.n_dof)
        vals = list(q0_clamp)
        if tf is not None:
            f[rod.i_x(N)], f[rod.i_y(N)] = tf[k]
        if tm is not None:
            f[rod.i_tip_theta] = tm[k]
        if tr is not None:
            vals.append(tr[k])
        if tp is not None:
            vals += list(tp[k])
        return f, np.array(vals)

    Q = np.empty((n, rod.n_dof)); KK = np.empty((n, N + 1)); MM = np.empty((n, N + 1))
    TF = np.empty((n, 2)); TM = np.empty(n); IT = np.zeros(n, dtype=np.int64)

    def partial(k):
        return StaticResult(rod, Q[:k].copy(), KK[:k].copy(), MM[:k].copy(), TF[:k].copy(),
                            TM[:k].copy(), IT[:k].copy(), state.copy())

    # loads of the start state: unloaded, with the prescribed dofs where they are now
    f_prev = np.zeros(rod.n_dof)
    v_prev = state.q[np.asarray(fixed)].copy()
    dq_scale_fixed = prob.dq_scale[prob.fixed]
    for k in range(n):
        f_k, v_k = loads(k)
        # sub-steps: no prescribed dof moves by more than 0.25 rad (0.25 L) in one of
        # them, so Newton's first, linearised step (which moves all dofs consistently
        # with the prescribed ones) stays below its 0.5 rad cap
        jump = float(np.max(np.abs((v_k - v_prev) * dq_scale_fixed)))
        dl_max = 1.0 / max(1, math.ceil(jump / 0.25))
        cur, dl, cuts, its = 0.0, dl_max, 0, 0
        while cur < 1.0:
            nxt = min(cur + dl, 1.0)
            f = (1.0 - nxt) * f_prev + nxt * f_k
            vals = (1.0 - nxt) * v_prev + nxt * v_k
            try:
                q, M, it = prob.solve(state.q, state, f, vals, tol, max_iter)
            except _NewtonFail as e:
                cuts += 1
                if cuts > max_cuts:
                    raise RodConvergenceError(
                        f"quasi_static: Newton failed at load step {k} of {n} "
                        f"({e}; {max_cuts} step cuts tried). The {k} converged steps are "
                        "kept in err.result", step=k, result=partial(k), reason=str(e)
                    ) from None
                dl *= 0.5
                continue
            its += it
            K = prob.K.copy()
            rk.commit(K, state.K, prob.X_trial, state.X)
            state.q = q
            cur = nxt
            dl = min(2.0 * dl, dl_max)     # grow again after a successful cut step
        f_prev, v_prev = f_k, v_k
        Q[k] = state.q; KK[k] = state.K; MM[k] = M; IT[k] = its
        g = prob.g   # internal forces at the converged q
        TF[k] = g[rod.i_x(N)], g[rod.i_y(N)]
        TM[k] = g[rod.i_tip_theta]
        if progress is not None:
            progress((k + 1) / n, f"load step {k + 1}/{n}")
    return partial(n)


# ---------------------------------------------------------------------------------------
@dataclass
class DynamicResult:
    """Time history: t (n,) [s], q (n, n_dof), K, M (n, N+1), energies (n,) [J]:
    kinetic T, segment strain energy V (eq. (1)), W_bend (net work absorbed by the moment
    laws since t = 0, Σ ℓ_j ∫ M_j dK_j, trapezoid rule over the committed steps),
    W_damp (work of the viscous damping), W_ext (work of the tip load).
    T + V + W_bend + W_damp − W_ext = const is the energy balance (``energy_balance``;
    exact for the Newmark average-acceleration rule up to the Newton tolerance when the
    internal forces are linear, O(dt²) otherwise).

    Split of the moment work: V_bend = Σ ℓ_j E_el(K_j) is the stored energy of the
    law's stateless parts (Rod.elastic_parts, e.g. ½·EI_el·K² for a linear spring;
    the parts' declared ``stored_energy``) and W_hyst = W_bend − (V_bend − V_bend[0])
    the work absorbed by the rest (the hysteretic part, accumulated per vertex). The
    mechanical energy E_mech = T + V + V_bend then drops between two instants by
    ΔW_hyst + ΔW_damp − ΔW_ext (see :meth:`cycles`)."""

    rod: Rod
    t: np.ndarray
    q: np.ndarray
    K: np.ndarray
    M: np.ndarray
    T: np.ndarray
    V: np.ndarray
    W_bend: np.ndarray
    W_damp: np.ndarray
    W_ext: np.ndarray
    state: RodState = field(repr=False)

    @property
    def r(self):
        return self.rod.positions(self.q)

    @property
    def tip(self):
        return self.r[:, -1, :]

    @property
    def energy_balance(self):
        return self.T + self.V + self.W_bend + self.W_damp - self.W_ext

    @property
    def V_bend(self):
        K = np.asarray(self.K, dtype=float)
        e = np.zeros(K.shape)
        X0 = np.zeros((K.size, 0))
        for el in self.rod.elastic_parts:
            e += np.asarray(el.stored_energy(X0, K.ravel()), dtype=float).reshape(K.shape)
        return np.sum(self.rod.ell * e, axis=1)

    @property
    def W_hyst(self):
        Vb = self.V_bend
        return self.W_bend - (Vb - Vb[0])

    @property
    def E_mech(self):
        return self.T + self.V + self.V_bend

    def tip_maxima(self, period, component=1):
        """Indices of the maxima of the tip displacement (component 1 = y) that are the
        largest value within ± period/2 [s] (one per cycle of a mode of that period:
        the wiggles of higher modes are skipped)."""
        y = self.tip[:, component]
        half = 0.5 * float(period)
        out = []
        for i in range(0, y.size - 1):
            # i = 0 counts when the rod starts from rest at a turning point (a release)
            if not ((i == 0 or y[i] >= y[i - 1]) and y[i] > y[i + 1]):
                continue
            w = (self.t >= self.t[i] - half) & (self.t <= self.t[i] + half)
            if y[i] >= y[w].max() and self.t[i] + half <= self.t[-1]:
                out.append(i)
        return np.array(out, dtype=int)

    def cycles(self, period):
        """Energy account of each cycle between successive first-mode tip maxima
        (:meth:`tip_maxima` with the first-mode period [s]). Returns a dict of arrays:
        i0, i1 (sample indices), lost = E_mech(i0) − E_mech(i1) [J] (the drop of kinetic
        + segment + elastic bending energy), W_hyst, W_damp, W_ext [J] over the cycle,
        and balance_error = lost − (W_hyst + W_damp − W_ext) [J]."""
        im = self.tip_maxima(period)
        a, b = im[:-1], im[1:]
        E = self.E_mech
        Wh, Wd, We = self.W_hyst, self.W_damp, self.W_ext
        lost = E[a] - E[b]
        dh, dd, de = Wh[b] - Wh[a], Wd[b] - Wd[a], We[b] - We[a]
        return dict(i0=a, i1=b, lost=lost, W_hyst=dh, W_damp=dd, W_ext=de,
                    balance_error=lost - (dh + dd - de))


def dynamic(rod: Rod, t_end, dt, *, start: RodState | None = None, tip_force=None,
            damping: float = 0.0, newmark_gamma: float = 0.5, save_every: int = 1,
            tol: float = 1e-10,
            max_iter: int = 30, max_cuts: int = 10, progress=None) -> DynamicResult:
    """Time integration of the rod from rest in configuration ``start``.

    Lumped masses ρA·ℓ_j at the nodes and rotary inertia ρI·h per segment frame;
    Newmark scheme with γ = newmark_gamma, β = (γ + ½)²/4: γ = ½ (default) is the
    average acceleration rule (no numerical dissipation for linear systems); γ > ½
    damps the stiff axial/shear modes of eq. (1) (needed for large motions of a
    quasi-inextensible rod). Newton on q_{n+1} at each step. The rate-independent moment law of every
    vertex is advanced from its committed curvature to the trial curvature inside Newton
    and committed once per converged step (Manfredo et al. (2023), eq. (3)).
    t_end, dt [s] > 0; tip_force: None, a constant (2,) vector [N] or a callable t -> (2,);
    damping [1/s] ≥ 0: mass-proportional viscous damping c = damping·mass.
    A time step Newton cannot solve is cut in halves (up to max_cuts times) before
    RodConvergenceError names it (converged steps kept in ``err.result``). progress: True
    (a bar on stderr), a callable progress(fraction, message) called every 100 steps, or
    None.
    """
    from ...progress import resolve

    progress = resolve(progress, "time steps")
    if not isinstance(rod, Rod):
        raise ValueError(f"rod must be a Rod (got {type(rod).__name__})")
    t_end = check_positive("t_end", t_end)
    dt = check_range("dt", dt, lo=0.0, hi=t_end, lo_open=True)
    damping = check_range("damping", damping, lo=0.0)
    if rod.rhoA <= 0:
        raise ValueError(f"dynamic needs a rod with mass: rhoA must be in (0, inf) "
                         f"(got {rod.rhoA!r})")
    gamma = check_range("newmark_gamma", newmark_gamma, lo=0.5, hi=1.0)
    beta = 0.25 * (gamma + 0.5) ** 2
    if not isinstance(save_every, (int, np.integer)) or save_every < 1:
        raise ValueError(f"save_every must be an integer in [1, inf) (got {save_every!r})")
    if tip_force is None:
        def ftip(t):
            return (0.0, 0.0)
    elif callable(tip_force):
        ftip = tip_force
    else:
        c = np.asarray(tip_force, dtype=float)
        if c.shape != (2,) or not np.all(np.isfinite(c)):
            raise ValueError("tip_force must be None, a finite (2,) vector [N] or a callable")
        def ftip(t):
            return c

    N = rod.N
    mass = np.zeros(rod.n_dof)
    mass[1:3 * N + 2:3] = rod.rhoA * rod.ell
    mass[2:3 * N + 3:3] = rod.rhoA * rod.ell
    mass[3:3 * N + 1:3] = rod.rhoI * rod.h
    cdamp = damping * mass
    fixed = [0, 1, 2]
    prob = _Problem(rod, fixed, free_tip=True)
    state = rod.straight() if start is None else start.copy()
    vals = state.q[:3].copy()
    n_steps = int(math.ceil(t_end / dt - 1e-9))
    v = np.zeros(rod.n_dof)
    a = np.zeros(rod.n_dof)

    def f_of(t):
        f = np.zeros(rod.n_dof)
        fx, fy = ftip(t)
        f[rod.i_x(N)] = fx; f[rod.i_y(N)] = fy
        if not (np.isfinite(fx) and np.isfinite(fy)):
            raise ValueError(f"tip_force must be finite (got ({fx!r}, {fy!r}) at t = {t!r})")
        return f

    # initial acceleration from the equilibrium of the start state
    M0, S0, _ = rod._tangents(state.K, state.K, state.X)
    g0 = np.empty(rod.n_dof); ab0 = np.empty((2 * rk.BW + 1, rod.n_dof))
    rk.assemble(state.q, N, rod.h, rod.EA, rod.GA, M0, S0, g0, ab0)
    f_old = f_of(0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(mass > 0, (f_old - g0 - cdamp * v) / np.where(mass > 0, mass, 1), 0.0)
    a[:3] = 0.0
    ns = n_steps // save_every + 1
    keep = dict(t=np.empty(ns), q=np.empty((ns, rod.n_dof)), K=np.empty((ns, N + 1)),
                M=np.empty((ns, N + 1)), T=np.empty(ns), V=np.empty(ns), Wb=np.empty(ns),
                Wd=np.empty(ns), We=np.empty(ns))
    Wb = Wd = We = 0.0
    M_old = M0

    def store(i, t):
        keep["t"][i] = t; keep["q"][i] = state.q; keep["K"][i] = state.K
        keep["M"][i] = M_old
        keep["T"][i] = 0.5 * float(np.sum(mass * v * v))
        keep["V"][i] = rk.segment_energy(state.q, N, rod.h, rod.EA, rod.GA)
        keep["Wb"][i] = Wb; keep["Wd"][i] = Wd; keep["We"][i] = We

    def result(i):
        return DynamicResult(rod, keep["t"][:i].copy(), keep["q"][:i].copy(),
                             keep["K"][:i].copy(), keep["M"][:i].copy(), keep["T"][:i].copy(),
                             keep["V"][:i].copy(), keep["Wb"][:i].copy(),
                             keep["Wd"][:i].copy(), keep["We"][:i].copy(), state.copy())

    store(0, 0.0)
    i_save = 1
    for k in range(1, n_steps + 1):
        t_k = min(k * dt, t_end)
        t_cur = (k - 1) * dt
        dl = t_k - t_cur
        cuts = 0
        while t_cur < t_k:
            t = min(t_cur + dl, t_k)
            h_ = t - t_cur
            c1 = 1.0 / (beta * h_ ** 2); c2 = gamma / (beta * h_)
            qn, vn, an = state.q, v, a

            def mass_term(q, r, ab, qn=qn, vn=vn, an=an, c1=c1, c2=c2, h_=h_):
                acc = c1 * (q - qn - h_ * vn - (0.5 - beta) * h_ ** 2 * an)
                vel = vn + h_ * ((1.0 - gamma) * an + gamma * acc)
                r += mass * acc + cdamp * vel
                ab[rk.BW] += c1 * mass + c2 * cdamp

            f = f_of(t)
            try:
                q, M, _ = prob.solve(state.q, state, f, vals, tol, max_iter, mass_term)
            except _NewtonFail as e:
                cuts += 1
                if cuts > max_cuts:
                    raise RodConvergenceError(
                        f"dynamic: Newton failed at time step {k} (t = {t:.6g} s; {e}; "
                        f"{max_cuts} step cuts tried). The steps before it are kept in "
                        "err.result", step=k, result=result(i_save), reason=str(e)) from None
                dl *= 0.5
                continue
            acc = c1 * (q - qn - h_ * vn - (0.5 - beta) * h_ ** 2 * an)
            vel = vn + h_ * ((1.0 - gamma) * an + gamma * acc)
            dq = q - qn
            K = prob.K.copy()
            Wb += float(np.sum(rod.ell * 0.5 * (M + M_old) * (K - state.K)))
            Wd += float(np.sum(0.5 * (cdamp * (vel + vn)) * dq))
            We += float(np.sum(0.5 * (f + f_old) * dq))
            rk.commit(K, state.K, prob.X_trial, state.X)
            state.q = q
            v, a, M_old, f_old = vel, acc, M, f
            t_cur = t
            dl = 2.0 * dl
        if k % save_every == 0 and i_save < ns:
            store(i_save, t_k)
            i_save += 1
        if progress is not None and k % 100 == 0:
            progress(k / n_steps, f"time step {k}/{n_steps}")
    return result(i_save)
