"""Energy dissipated over sampled closed loops (hysteresis-loop area).

Sign convention: ∮ F du > 0 for a loop run clockwise in the (u, F) plane, which is the
dissipative sense of friction and hysteresis loops (force higher on the way up than on
the way down), as in the papers' loops (e.g. Bastien et al. (2007), eq. (30);
viscous + Dahl paper, eq. (19)).
"""
from __future__ import annotations

import numpy as np

from ..components.base import check_array, check_positive


def _pair(u, F):
    u = check_array("u", u, min_len=2)
    F = check_array("F", F, min_len=2)
    if F.size != u.size:
        raise ValueError(f"F must have the same length as u ({u.size}), got {F.size}")
    return u, F


def loop_energy(u, F) -> float:
    """∮ F du [J] of the sampled curve (u [m], F [N]) closed by the straight chord from
    the last sample back to the first (trapezoid rule). Positive for clockwise,
    dissipative loops. For a curve that closes in u only (a minor-loop arc) the chord
    is vertical and adds nothing.
    """
    u, F = _pair(u, F)
    uc = np.append(u, u[0])
    Fc = np.append(F, F[0])
    return float(np.sum(0.5 * (Fc[1:] + Fc[:-1]) * np.diff(uc)))


def cycle_energies(t, u, F, period=None):
    """Energy ∮ F du [J] of each cycle of a sampled response (:func:`loop_energy`).

    period [s]: cut at t0 + k·period (the sample nearest each cut); whole periods only.
    Without period: cut at every local maximum of u (a reversal from rising to falling),
    which for a bimodal or multimodal input gives one piece per maximum, not per period.
    Returns (t_start [s], t_end [s], energy [J]) arrays, one entry per cycle.
    """
    from ..drive import check_time

    t = check_time(t)
    u, F = _pair(u, F)
    if u.size != t.size:
        raise ValueError(f"u must have the same length as t ({t.size}), got {u.size}")
    if period is not None:
        period = check_positive("period", period)
        n = int(np.floor((t[-1] - t[0]) / period * (1 + 1e-12)))
        cuts = [int(np.argmin(np.abs(t - (t[0] + k * period)))) for k in range(n + 1)]
    else:
        from .variation import turning_points

        idx = turning_points(u)
        # a reversal from rising to falling: the next move (after any plateau) is down
        cuts = [int(i) for i in idx[1:-1] if u[i + 1] < u[i]]
    ts, te, E = [], [], []
    for a, b in zip(cuts[:-1], cuts[1:]):
        if b - a < 2:
            continue
        ts.append(t[a]); te.append(t[b])
        E.append(loop_energy(u[a:b + 1], F[a:b + 1]))
    return np.array(ts), np.array(te), np.array(E)
