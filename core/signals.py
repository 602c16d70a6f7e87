"""Input signals for scenarios and tests: sampled displacement histories u(t) [m]."""
from __future__ import annotations

import numpy as np

from .components.base import check_array, check_finite, check_positive
from .limits import check_memory


def piecewise_linear(knots_u, knots_t=None, *, periods: int = 1, gamma: float = 1.0,
                     samples_per_unit: int = 200):
    """Periodic piecewise-linear input through the knots (u_0, ..., u_m = u_0 for a
    periodic input) reached at times knots_t (default: |Δu| per segment, i.e. unit
    speed as the normalized input of Ikhouane, Mañosa & Pujol, eq. (10)), repeated
    ``periods`` times and slowed by the time-scale factor ``gamma``.

    Returns (t [s], u [m]); every knot is a sample so that drive() follows each kink.
    """
    ku = check_array("knots_u", knots_u, min_len=2)
    if knots_t is None:
        kt = np.concatenate([[0.0], np.cumsum(np.abs(np.diff(ku)))])
    else:
        kt = check_array("knots_t", knots_t, min_len=2)
        if kt.size != ku.size:
            raise ValueError(f"knots_t must have the same length as knots_u ({ku.size})")
    if np.any(np.diff(kt) <= 0):
        raise ValueError("knots_t must be strictly increasing (consecutive equal knots_u?)")
    gamma = check_positive("gamma", gamma)
    if isinstance(periods, bool) or not float(periods).is_integer():
        raise ValueError(f"periods must be a whole number >= 1 (got {periods!r})")
    periods = int(periods)
    samples_per_unit = check_positive("samples_per_unit", samples_per_unit)
    if periods < 1:
        raise ValueError(f"periods must be >= 1 (got {periods})")
    T = kt[-1] - kt[0]
    per_seg = np.maximum(2.0, np.ceil(np.diff(kt) * float(samples_per_unit)) + 1.0) - 1.0
    n_samples = periods * float(per_seg.sum()) + 1.0
    check_memory(n_samples * 16.0 * 3, f"a piecewise-linear input of {n_samples:.3g} samples "
                 f"({periods} period(s) of {ku.size} knots)")
    ts, us = [], []
    for k in range(periods):
        for i in range(ku.size - 1):
            m = max(2, int(np.ceil((kt[i + 1] - kt[i]) * samples_per_unit)) + 1)
            s = np.linspace(kt[i], kt[i + 1], m)
            if ts:
                s = s[1:]
            ts.append(s + k * T)
            us.append(np.interp(s, kt[i:i + 2], ku[i:i + 2]))
    t = np.concatenate(ts)
    u = np.concatenate(us)
    keep = np.concatenate([[True], np.diff(t) > 0])
    return gamma * (t[keep] - kt[0]), u[keep]


def _count(name, n) -> int:
    """A sample count >= 2, refused above the memory limit before anything is made."""
    if isinstance(n, bool) or not isinstance(n, (int, float, np.integer, np.floating)) \
            or not float(n).is_integer() or n < 2:
        raise ValueError(f"{name} must be a whole number of samples >= 2 (got {n!r})")
    check_memory(float(n) * 16.0 * 3, f"an input of {name} = {float(n):.3g} samples")
    return int(n)


def sine(*, amplitude: float, omega: float, duration: float, offset: float = 0.0,
         phase: float = 0.0, n: int = 20001, t0: float = 0.0):
    """u(t) = offset + amplitude·sin(omega·t + phase) on [t0, t0 + duration] with n samples
    (Bastien et al. (2007), eq. (29) form)."""
    amplitude = check_finite("amplitude", amplitude)
    omega = check_positive("omega", omega)
    duration = check_positive("duration", duration)
    n = _count("n", n)
    t = np.linspace(t0, t0 + duration, n)
    return t, offset + amplitude * np.sin(omega * t + phase)


def two_harmonic(*, A1: float, A2: float, omega: float, duration: float, n: int = 20001):
    """δ(t) = A1 sin(ωt) + A2 sin(2ωt) (Jankowski, Marszał & Stefański (2017), eq. (8))."""
    omega = check_positive("omega", omega)
    duration = check_positive("duration", duration)
    n = _count("n", n)
    t = np.linspace(0.0, duration, n)
    return t, A1 * np.sin(omega * t) + A2 * np.sin(2 * omega * t)


def from_config(cfg: dict):
    """Build (t, u) from a scenario's [input] table (see README, "Scenario format")."""
    cfg = dict(cfg)
    kind = cfg.pop("type", None)
    makers = {"piecewise_linear": piecewise_linear, "sine": sine, "two_harmonic": two_harmonic}
    if kind not in makers:
        raise ValueError(f"input.type must be one of {', '.join(makers)} (got {kind!r})")
    try:
        return makers[kind](**cfg)
    except TypeError as e:
        raise ValueError(f"input ({kind}): {e}") from None
