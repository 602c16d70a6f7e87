"""Floquet stability decided per multiplier at its own accuracy — never by a blanket
tolerance.

A periodic orbit is asymptotically stable when every Floquet multiplier μ has |μ| < 1
(Seydel (2010), *Practical Bifurcation and Stability Analysis*, §7.4). A computed
multiplier carries an error e (from the monodromy's error and the eigenvalue's
condition, :func:`hystmech.systems.periodic.monodromy.multiplier_errors`); it is

* inside the unit circle when |μ| + e < 1,
* outside when |μ| − e > 1,
* undecided otherwise.

The orbit is "unstable" when a multiplier is outside, "stable" when all are inside, and
"undecided" otherwise: an orbit whose stability cannot be told at the accuracy reached
is reported so, never as stable.

Neutral multipliers that belong to the structure of the problem, not to the orbit's
stability, are removed exactly before this test: a slider of an inclusion (Masing,
Maxwell-slip) that is stuck strictly inside its box over the whole period keeps any
small offset it is given, so its row of the monodromy is the unit row e_jᵀ, μ = 1
exactly, and the other multipliers are the eigenvalues of M with row and column j
deleted (:func:`neutral_states`, :func:`reduce_neutral`).
"""
from __future__ import annotations

import numpy as np

STABLE, UNSTABLE, UNDECIDED = "stable", "unstable", "undecided"


def classify(multipliers, errors) -> str:
    """"stable", "unstable" or "undecided" from the multipliers and their error bounds
    (same order, see the module docstring)."""
    mu = np.abs(np.asarray(multipliers, dtype=complex))
    err = np.asarray(errors, dtype=float)
    if mu.size == 0:
        return STABLE
    if err.shape != mu.shape or np.any(~(err >= 0)):
        raise ValueError("errors must be one non-negative (or inf) bound per multiplier")
    if np.any(mu - err > 1.0):
        return UNSTABLE
    if np.all(mu + err < 1.0):
        return STABLE
    return UNDECIDED


def outside(multipliers, errors) -> np.ndarray:
    """Mask of the multipliers that are certainly outside the unit circle."""
    mu = np.asarray(multipliers, dtype=complex)
    return np.abs(mu) - np.asarray(errors, float) > 1.0


def crossing_kinds(multipliers, errors):
    """(n_plus, n_minus, n_complex): multipliers certainly outside the unit circle that are
    real positive, real negative, complex (a complex multiplier is one whose imaginary
    part exceeds its error). A change of n_plus between two orbits of a branch is a fold
    or branch point, of n_minus a period doubling, of n_complex a Neimark–Sacker
    bifurcation."""
    mu = np.asarray(multipliers, dtype=complex)
    err = np.asarray(errors, float)
    out = outside(mu, err)
    cplx = np.abs(mu.imag) > err
    return (int(np.sum(out & ~cplx & (mu.real > 0))), int(np.sum(out & ~cplx & (mu.real < 0))),
            int(np.sum(out & cplx)))


def bifurcation_kind(multipliers, errors) -> str | None:
    """How the orbit is unstable: None (no multiplier certainly outside), "fold" (real
    μ > 1), "period-doubling" (real μ < −1) or "neimark-sacker" (complex pair), from the
    largest multiplier that is certainly outside."""
    mu = np.asarray(multipliers, dtype=complex)
    err = np.asarray(errors, float)
    out = np.flatnonzero(outside(mu, err))
    if out.size == 0:
        return None
    i = out[np.argmax(np.abs(mu[out]))]
    if abs(mu[i].imag) > err[i]:
        return "neimark-sacker"
    return "fold" if mu[i].real > 0 else "period-doubling"


def neutral_states(y_samples, lo, hi, inclusion_mask) -> np.ndarray:
    """Indices of the inclusion states that stay constant over the sampled period
    (y_samples, rows = times) strictly inside their box (lo < y < hi): stuck sliders,
    whose monodromy row is exactly e_jᵀ (module docstring)."""
    Y = np.asarray(y_samples, float)
    if Y.ndim != 2 or Y.shape[1] != len(inclusion_mask):
        raise ValueError("y_samples must be (n_times, n_states) with one mask entry per state")
    const = np.ptp(Y, axis=0) == 0.0
    inside = (Y[0] > np.asarray(lo)) & (Y[0] < np.asarray(hi))
    return np.flatnonzero(np.asarray(inclusion_mask, bool) & const & inside)


def reduce_neutral(M, neutral):
    """M with the rows and columns ``neutral`` deleted, after checking that each of those
    rows is the unit row (else the state is not neutral and nothing is deleted for it).
    Returns (reduced M, indices kept)."""
    M = np.asarray(M, float)
    keep = np.ones(M.shape[0], bool)
    for j in np.asarray(neutral, int):
        row = M[j].copy()
        row[j] -= 1.0
        if np.max(np.abs(row)) <= 1e-12:
            keep[j] = False
    idx = np.flatnonzero(keep)
    return M[np.ix_(idx, idx)], idx
