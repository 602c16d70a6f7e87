"""Stepped-sine up/down sweeps by brute-force time integration: the independent check
of the folds and bistable windows found by continuation.

A frequency response with a bistable window is seen by a slow sweep as a jump: going up
in Ω the response stays on the upper sheet until its fold, going down it stays on the
lower sheet until the other fold. ``stepped_sweep`` integrates the forced assembly
``build(Ω)`` for ``dwell`` forcing periods at each Ω of a grid, starting every step from
the state at the end of the previous one. Each step lasts an integer number of periods
and starts at t = 0, so the forcing phase Ω·t is continuous across steps (a phase jump
would be a perturbation that can knock the response off a weakly attracting sheet).
The measure is taken over the last ``n_measure`` periods and its change against the
``n_measure`` periods before is reported, so a step that has not settled (near a fold
the decay rate goes to zero) is visible in the output instead of being silently trusted.
"""
from __future__ import annotations

import math
import time
from typing import Callable

import numpy as np

from ..result import SimulationError
from ..methods import engine
from ..simulate import simulate


# one structure run many times: its generated code, the fastest per step, compiled
# once, unless $HYSTMECH_ENGINE says otherwise (methods/engine.py: use)
@engine.use("generated", keep_explicit=True)
def stepped_sweep(build: Callable, omegas, *, dwell: int = 200, n_measure: int = 5,
                  measure: Callable, y0=None, method: str = "RK45",
                  options: dict | None = None, samples_per_period: int = 64) -> dict:
    """One stepped sweep over ``omegas`` [rad/s] in the given order (ascending: up sweep).

    build(Ω) -> Assembly forced at Ω (its Harmonic inputs at pulsation Ω); dwell: forcing
    periods simulated per step (>= 2·n_measure); measure(SimResult) -> float over the
    sampled periods (e.g. the tension amplitude of the belt rig, Bastien et al. (2007),
    eq. (59a)); y0: state at the first step (default the assembly's initial state);
    method/options: of :func:`hystmech.systems.simulate` (default RK45 at rtol 1e-8).
    Returns {"omega", "measure", "settle" (relative change of the measure between the
    last two blocks of n_measure periods), "cpu_s"}.
    """
    om = np.asarray(omegas, dtype=float).ravel()
    if om.size < 1 or not np.all(np.isfinite(om)) or np.any(om <= 0):
        raise ValueError("omegas must be a non-empty list of finite pulsations in (0, inf) rad/s")
    dwell, n_measure = int(dwell), int(n_measure)
    if n_measure < 1:
        raise ValueError(f"n_measure must be in [1, inf) (got {n_measure})")
    if dwell < 2 * n_measure:
        raise ValueError(f"dwell must be in [2·n_measure = {2 * n_measure}, inf) periods "
                         f"(got {dwell})")
    opts = dict(options or {"rtol": 1e-8})
    tic = time.process_time()
    y = None if y0 is None else np.asarray(y0, float).ravel().copy()
    out_m, out_s = [], []
    for w in om:
        asm = build(float(w))
        if y is None:
            y = asm.initial_state()
        T = 2.0 * math.pi / w
        t1 = dwell * T
        ta = t1 - 2 * n_measure * T
        te = ta + np.linspace(0.0, 2 * n_measure * T, 2 * n_measure * samples_per_period + 1)
        te[-1] = t1
        try:
            res = simulate(asm, (0.0, t1), x0=y, method=method, t_eval=te, **opts)
        except SimulationError as e:
            raise SimulationError(f"stepped_sweep at Ω = {w!r} rad/s: {e}") from None
        k = n_measure * samples_per_period
        a_prev = float(measure(_window(res, 0, k + 1)))
        a_last = float(measure(_window(res, k, 2 * k + 1)))
        out_m.append(a_last)
        out_s.append(abs(a_last - a_prev) / max(abs(a_last), 1e-300))
        y = res.y[-1].copy()
    return {"omega": om, "measure": np.array(out_m), "settle": np.array(out_s),
            "cpu_s": time.process_time() - tic}


class _Window:
    """A slice of a SimResult with the accessors a measure uses (t, y, force)."""

    def __init__(self, res, i, j):
        self._res, self._i, self._j = res, i, j
        self.t = res.t[i:j]
        self.y = res.y[i:j]

    def force(self, name):
        return self._res.force(name)[self._i:self._j]

    def deflection(self, name):
        u, v = self._res.deflection(name)
        return u[self._i:self._j], v[self._i:self._j]


def _window(res, i, j):
    return _Window(res, i, j)


def bistable_window(up: dict, down: dict, *, rel_gap: float = 0.05):
    """(Ω_lo, Ω_hi) [rad/s] of the window where the up and down sweeps over the same grid
    disagree by more than rel_gap of the larger measure (two coexisting stable responses),
    or None. The jump of the up sweep bounds it on one side, that of the down sweep on
    the other; each edge is known to the grid step."""
    wu, mu = np.asarray(up["omega"]), np.asarray(up["measure"])
    wd, md = np.asarray(down["omega"]), np.asarray(down["measure"])
    order = np.argsort(wd)
    wd, md = wd[order], md[order]
    o2 = np.argsort(wu)
    wu, mu = wu[o2], mu[o2]
    if wu.size != wd.size or np.any(np.abs(wu - wd) > 1e-9 * np.abs(wu)):
        raise ValueError("up and down sweeps must use the same grid of omegas")
    diff = np.abs(mu - md) > rel_gap * np.maximum(np.abs(mu), np.abs(md))
    if not diff.any():
        return None
    idx = np.flatnonzero(diff)
    return float(wu[idx[0]]), float(wu[idx[-1]])
