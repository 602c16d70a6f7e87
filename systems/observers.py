"""Observers run inside the compiled integration loops: windowed extrema of one
observed signal and a steady-state stop.

The observed signal s(t) is a sum of connection forces chosen by the caller (e.g. the
belt tension T = spring + damper force of Bastien et al. (2007), eq. (38a)). Its state
is one record of :data:`OBS_DTYPE` (named fields, not magic indices), passed to the
loops as a length-1 structured array and updated in place:

* window: max/min of s over t >= ``win_from``;
* steady state (``ss_on``): from ``ss_from`` on, the extremes of s over blocks of
  ``blk_len`` seconds (a few forcing periods) are compared with the previous block's;
  after ``n_confirm`` consecutive blocks equal within ``tol``·amplitude the run stops
  and ``t_stop`` is set (the last block's amplitude is ``prev_amp``).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

OBS_DTYPE = np.dtype([
    ("win_from", np.float64), ("win_max", np.float64), ("win_min", np.float64),
    ("ss_on", np.int64), ("ss_from", np.float64), ("blk_len", np.float64),
    ("blk_end", np.float64), ("blk_max", np.float64), ("blk_min", np.float64),
    ("prev_amp", np.float64), ("prev_max", np.float64), ("prev_min", np.float64),
    ("n_ok", np.int64), ("n_confirm", np.int64), ("tol", np.float64),
    ("n_blocks", np.int64), ("t_stop", np.float64)])


def new_observer(win_from: float = math.inf, *, steady_state: bool = False,
                 ss_from: float = 0.0, block: float = 1.0, tol: float = 2e-4,
                 n_confirm: int = 3) -> np.ndarray:
    """A fresh observer record (length-1 structured array of :data:`OBS_DTYPE`).

    win_from [s]: start of the extrema window (inf: none); steady_state: stop once
    n_confirm consecutive blocks of ``block`` seconds starting at ss_from [s] have
    extremes equal within tol·amplitude."""
    o = np.zeros(1, dtype=OBS_DTYPE)
    r = o[0]
    r["win_from"] = win_from
    r["win_max"], r["win_min"] = -1e300, 1e300
    r["ss_on"] = 1 if steady_state else 0
    r["ss_from"] = ss_from
    r["blk_len"] = block
    r["blk_end"] = ss_from + block
    r["blk_max"], r["blk_min"] = -1e300, 1e300
    r["prev_amp"] = math.nan
    r["n_confirm"] = n_confirm
    r["tol"] = tol
    r["t_stop"] = math.nan
    return o


def first_time(o: np.ndarray) -> float:
    """Earliest time from which the observer needs the signal [s]."""
    r = o[0]
    t = float(r["win_from"])
    if r["ss_on"]:
        t = min(t, float(r["ss_from"]))
    return t


@njit(cache=True)
def observe(obs, t, s):
    """Feed s(t) to the observer record obs[0]; True when the run should stop."""
    o = obs[0]
    if t >= o.win_from:
        if s > o.win_max:
            o.win_max = s
        if s < o.win_min:
            o.win_min = s
    if o.ss_on == 0 or t < o.ss_from:
        return False
    if s > o.blk_max:
        o.blk_max = s
    if s < o.blk_min:
        o.blk_min = s
    if t < o.blk_end:
        return False
    # a block has ended: compare its extremes with the previous block's
    amp = o.blk_max - o.blk_min
    tol = o.tol * max(amp, 1e-300)
    if (o.n_blocks > 0 and abs(amp - o.prev_amp) <= tol and abs(o.blk_max - o.prev_max) <= tol
            and abs(o.blk_min - o.prev_min) <= tol):
        o.n_ok += 1
    else:
        o.n_ok = 0
    o.prev_amp = amp
    o.prev_max = o.blk_max
    o.prev_min = o.blk_min
    o.n_blocks += 1
    o.blk_max = -1e300
    o.blk_min = 1e300
    o.blk_end += o.blk_len
    if o.n_ok >= o.n_confirm:
        o.t_stop = t
        return True
    return False


class Observe:
    """What :func:`~hystmech.systems.simulate` observes inside its loop.

    signal: names of springs, dampers and elements whose forces are summed into the
    observed signal s(t) [N] (e.g. ("belt", "belt_damping"): the belt tension T of
    Bastien et al. (2007), eq. (38a)); window [s]: track max/min of s from there on;
    steady_state: stop once ``confirm`` consecutive blocks of ``block`` seconds (a few
    forcing periods), counted from ``start`` [s], have extremes equal within
    tol·amplitude."""

    def __init__(self, signal, *, window: float | None = None, steady_state: bool = False,
                 block: float | None = None, tol: float = 2e-4, confirm: int = 3,
                 start: float | None = None):
        self.signal = (signal,) if isinstance(signal, str) else tuple(signal)
        if not self.signal:
            raise ValueError("Observe: signal must name at least one connection")
        self.window = window
        self.steady_state = bool(steady_state)
        if self.steady_state and not (block is not None and block > 0 and math.isfinite(block)):
            raise ValueError(f"Observe: block must be a duration in s > 0 (got {block!r})")
        if not 0.0 < tol < 1.0:
            raise ValueError(f"Observe: tol must be in (0, 1) (got {tol!r})")
        if int(confirm) < 1:
            raise ValueError(f"Observe: confirm must be >= 1 (got {confirm!r})")
        self.block, self.tol, self.confirm, self.start = block, tol, int(confirm), start

    def record(self, t0: float) -> np.ndarray:
        win = t0 if self.window is None else float(self.window)
        start = win if self.start is None else float(self.start)
        return new_observer(win, steady_state=self.steady_state, ss_from=start,
                            block=self.block or 1.0, tol=self.tol, n_confirm=self.confirm)


def summary(o: np.ndarray) -> dict:
    """What an observer saw: max, min and amplitude of s over the window [N], t_stop
    [s] (NaN if not stopped) and the last block's amplitude ss_amplitude (NaN if none)."""
    r = o[0]
    mx, mn = float(r["win_max"]), float(r["win_min"])
    seen = mx >= mn
    return {"max": mx if seen else math.nan, "min": mn if seen else math.nan,
            "amplitude": mx - mn if seen else math.nan, "t_stop": float(r["t_stop"]),
            "ss_amplitude": float(r["prev_amp"]) if r["n_blocks"] > 0 else math.nan}
