"""Harmonic balance with alternating frequency–time (AFT): periodic orbits as truncated
Fourier series, a second discretisation to cross-check shooting.

Every state of a smooth or regularised assembly (DOF positions and velocities, the
elements' internal states, e.g. the modified Dahl force) is written as

    y_i(t) = a_i0 + Σ_{k=1..H} a_ik cos(kΩ(t − t0)) + b_ik sin(kΩ(t − t0)),

and the first-order equations ẏ = f(t, y) are projected on the same basis (Galerkin):
D·c − P·f(t_n, E·c) = 0, with E the evaluation of the series at n_t equally spaced times
of one period, P its discrete projection (the real FFT) and D the derivative in
coefficient space. f and its Jacobian are the compiled model's (``fun`` and ``jac``: the
elements' own kernels; the generic engine's, compiled once per install with the
variational loop that calls them, for an assembly of shipped laws — methods/engine.py
``for_loop`` — else the structure's generated module, ``Model.code``), evaluated in
the time domain (AFT: Cameron &
Griffin (1989), J. Appl. Mech. 56, 149–154), so any law whose right-hand side is a
function — including the regularised non-smooth ones — works; the projection-scheme
inclusions (Masing) and operators are not functions of the state and are refused.
Newton's method uses the exact Jacobian D − P·diag(J(t_n))·E.

The truncation error shows in the size of the last harmonics (``tail``); the result is
checked independently by integrating y(t0) over one period (``periodicity``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..methods import engine as _engine
from .shooting import ConvergenceError


@dataclass
class HBOrbit:
    """A periodic orbit by harmonic balance: coefficients c (N, 2H+1) per state, in the
    order (a0, a1, b1, …, aH, bH); omega [rad/s]; t0 [s]; residual (max scaled balance
    residual); tail: max over states of the last harmonic's amplitude relative to the
    state's excursion (the truncation error's size); iterations."""
    c: np.ndarray
    omega: float
    t0: float
    n_harmonics: int
    residual: float
    tail: float
    iterations: int
    names: list

    def evaluate(self, t) -> np.ndarray:
        """The states at times t [s] (rows)."""
        t = np.atleast_1d(np.asarray(t, float))
        return _basis(self.omega * (t - self.t0), self.n_harmonics) @ self.c.T

    @property
    def y0(self) -> np.ndarray:
        """The state at t0 (the shooting section)."""
        return self.evaluate([self.t0])[0]


def _basis(theta, H):
    E = np.empty((theta.size, 2 * H + 1))
    E[:, 0] = 1.0
    for k in range(1, H + 1):
        E[:, 2 * k - 1] = np.cos(k * theta)
        E[:, 2 * k] = np.sin(k * theta)
    return E


def harmonic_balance(assembly, n_harmonics: int, *, y_guess=None, t0: float = 0.0,
                     n_time: int | None = None, tol: float = 1e-10, max_iter: int = 30,
                     scale=None) -> HBOrbit:
    """The periodic orbit of a smooth (or regularised) assembly forced at Ω (its Harmonic
    inputs) by harmonic balance with AFT (module docstring).

    n_harmonics H >= 1; y_guess: samples of a guess over one period (rows: states at
    n equally spaced times from t0, e.g. a shooting orbit's PeriodicOrbit.simulate(n).y
    without its last row), or one state (a constant guess); n_time: time samples per
    period (default 4H + 4, at least 32: products of harmonics alias above it); tol:
    on the balance residual scaled by each state's excursion; scale: those excursions
    (default from the guess). ValueError for inclusions/operators or bad input;
    :class:`~hystmech.systems.periodic.shooting.ConvergenceError` when Newton does not
    converge."""
    from ..model import Model
    from .shooting import forcing_omega

    H = int(n_harmonics)
    if H < 1 or H != n_harmonics:
        raise ValueError(f"n_harmonics must be an integer in [1, inf) (got {n_harmonics!r})")
    if any(e.element.kind != "smooth" for e in assembly.elements):
        raise ValueError("harmonic balance needs smooth or regularised laws (the state's "
                         "right-hand side a function); got an inclusion or operator")
    if not (math.isfinite(tol) and tol > 0):
        raise ValueError(f"tol must be in (0, inf) (got {tol!r})")
    Om = forcing_omega(assembly)
    m = Model(assembly)
    if not m.has_jac:
        raise ValueError("harmonic balance needs the elements' jac kernels")
    # f and J: the engine's when the tiered choice takes it for the variational loop
    # (whose callees they are: nothing compiled for a new structure), else the
    # structure's generated module (every one of a model with has_jac holds its jac)
    code = _engine.for_loop(m, "var_solve") or m.code
    N = m.N
    nt = max(4 * H + 4, 32) if n_time is None else int(n_time)
    if nt < 2 * H + 1:
        raise ValueError(f"n_time must be in [2·n_harmonics + 1, inf) (got {nt})")
    theta = 2 * math.pi * np.arange(nt) / nt
    tn = t0 + theta / Om
    E = _basis(theta, H)
    P = E.T * (2.0 / nt)
    P[0] *= 0.5
    D1 = np.zeros((2 * H + 1, 2 * H + 1))
    for k in range(1, H + 1):
        D1[2 * k - 1, 2 * k] = k * Om        # d/dt (b sin) → kΩ b cos
        D1[2 * k, 2 * k - 1] = -k * Om       # d/dt (a cos) → −kΩ a sin
    nc = 2 * H + 1
    if y_guess is None:
        Yg = np.tile(assembly.initial_state(), (nt, 1))
    else:
        Yg = np.atleast_2d(np.asarray(y_guess, float))
        if Yg.shape[1] != N:
            raise ValueError(f"y_guess must have {N} columns (states {m.asm.state_names()})")
        if Yg.shape[0] == 1:
            Yg = np.tile(Yg, (nt, 1))
        else:
            th_g = 2 * math.pi * np.arange(Yg.shape[0]) / Yg.shape[0]
            Eg = _basis(th_g, min(H, (Yg.shape[0] - 1) // 2))
            cg = np.linalg.lstsq(Eg, Yg, rcond=None)[0]
            Yg = _basis(theta, min(H, (Yg.shape[0] - 1) // 2)) @ cg
    if not np.all(np.isfinite(Yg)):
        raise ValueError("y_guess must be finite")
    C = (P @ Yg).T                              # (N, nc)
    s = np.maximum(np.ptp(Yg, axis=0), 1e-3 * np.max(np.abs(Yg), axis=0)) \
        if scale is None else np.asarray(scale, float)
    s = np.maximum(s, 1e-12)
    w = np.zeros(m.layout.n_work)
    V = code.scratch(m.prm)
    dy = np.zeros(N)
    J = np.zeros((N, N))
    Fn = np.empty((nt, N))
    Jn = np.empty((nt, N, N))

    def residual(C, with_jac):
        Y = E @ C.T
        for n in range(nt):
            yn = np.ascontiguousarray(Y[n])
            code.fun(tn[n], yn, m.prm, dy, w, V)
            Fn[n] = dy
            if with_jac:
                code.jac(tn[n], yn, m.prm, J, w, V)
                Jn[n] = J
        R = C @ D1.T - (P @ Fn).T               # (N, nc)
        if not with_jac:
            return R, None
        A = np.zeros((N * nc, N * nc))
        for i in range(N):
            A[i * nc:(i + 1) * nc, i * nc:(i + 1) * nc] += D1
            for j in range(N):
                A[i * nc:(i + 1) * nc, j * nc:(j + 1) * nc] -= (P * Jn[:, i, j][None, :]) @ E
        return R, A

    sv = np.repeat(s, nc)
    err = math.inf
    for it in range(1, max_iter + 1):
        R, A = residual(C, True)
        if not np.all(np.isfinite(R)):
            raise ConvergenceError("harmonic balance: non-finite residual", None, math.nan)
        err = float(np.max(np.abs(R) / (s[:, None] * Om)))
        if err <= tol:
            break
        dc = np.linalg.solve(A * sv[None, :], -R.ravel()) * sv
        lam = 1.0
        for _ in range(8):
            Cn = C + lam * dc.reshape(N, nc)
            Rn, _ = residual(Cn, False)
            en = float(np.max(np.abs(Rn) / (s[:, None] * Om)))
            if np.isfinite(en) and en < err:
                break
            lam *= 0.5
        C = Cn
    else:
        R, _ = residual(C, False)
        err = float(np.max(np.abs(R) / (s[:, None] * Om)))
        if err > tol:
            raise ConvergenceError(f"harmonic balance: no convergence in {max_iter} Newton "
                                   f"steps (scaled residual {err:.3g} > tol {tol:g})", None, err)
    exc = np.maximum(np.ptp(E @ C.T, axis=0), 1e-300)
    tail = float(np.max(np.hypot(C[:, -2], C[:, -1]) / exc))
    return HBOrbit(c=C, omega=Om, t0=float(t0), n_harmonics=H, residual=err, tail=tail,
                   iterations=it, names=list(assembly.state_names()))
