"""Variation function ρ_u and normalized input ψ_u of a sampled input.

    ρ_u(t) = ∫_0^t |u̇(τ)| dτ                     (eq. (5))
    ψ_u(ρ_u(t)) = u(t),  |dψ_u/dϱ| = 1 a.e.       (eqs. (9)-(10))

Ikhouane, Mañosa & Pujol, *Minor loops of the Dahl and LuGre models*, §3.2.2.
The samples are joined by straight lines (as in :func:`hystmech.drive`), so ρ_u is
exact at the samples and ψ_u is the piecewise-linear curve through the extrema
(turning points) of u, with slope ±1 in ϱ.
"""
from __future__ import annotations

import numpy as np

from ..components.base import check_array


def _check_tu(t, u):
    from ..drive import check_time

    u = check_array("u", u, min_len=2)
    if t is None:
        return None, u
    t = check_time(t)
    if t.size != u.size:
        raise ValueError(f"u must have the same length as t ({t.size}), got {u.size}")
    return t, u


def variation(t, u) -> np.ndarray:
    """ρ_u(t_k) = Σ_{j<k} |u_{j+1} − u_j| [m] at every sample (eq. (5)).

    t [s] strictly increasing (only checked: ρ_u does not depend on the time scale),
    u [m] samples joined by straight lines. Returns an array of len(u), ρ_u(t_0) = 0.
    """
    _, u = _check_tu(t, u)
    return np.concatenate([[0.0], np.cumsum(np.abs(np.diff(u)))])


def turning_points(u) -> np.ndarray:
    """Indices of the first sample, every strict reversal of direction of u, and the
    last sample. Flat stretches (equal samples) are skipped: a reversal is placed at
    the last sample of a plateau that separates a rise from a fall."""
    u = np.asarray(u, dtype=float)
    d = np.diff(u)
    nz = np.flatnonzero(d != 0.0)
    idx = [0]
    if nz.size:
        s = np.sign(d[nz])
        change = np.flatnonzero(s[1:] != s[:-1])
        # the reversal sample is where the next non-flat increment starts
        idx.extend(int(nz[c + 1]) for c in change)
    if idx[-1] != u.size - 1:
        idx.append(u.size - 1)
    return np.asarray(idx, dtype=np.int64)


def normalized_input(t, u):
    """Knots (ϱ_i, ψ_i) of the normalized input ψ_u (eqs. (9)-(10)).

    ϱ_i = ρ_u(t_i) [m] at the first sample, at every reversal of u and at the last
    sample; ψ_i = u(t_i) [m]. Between knots ψ_u is linear with slope ±1, so
    ``np.interp(varrho, varrho_knots, psi_knots)`` evaluates ψ_u exactly and
    ψ_u(ρ_u(t)) = u(t) at every sample.
    """
    _, u = _check_tu(t, u)
    idx = turning_points(u)
    rho = variation(None, u)
    return rho[idx], u[idx]


def psi(varrho, varrho_knots, psi_knots) -> np.ndarray:
    """ψ_u(ϱ) [m] from the knots of :func:`normalized_input` (eq. (10))."""
    return np.interp(np.asarray(varrho, dtype=float), varrho_knots, psi_knots)
