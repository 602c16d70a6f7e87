"""fit_preisach against an independent relay array (plain numpy, written here), on the
fitter's grid, from saturation: clean data → the output reproduced and every weight the
record distinguishes recovered within 0.1 % (issue 30), including the relays with one
threshold beyond the input's range (which switch once from saturation).

Convention of the reference (that of Manfredo et al. (2023), eqs. (4)-(6), and of
``hystmech.components.Preisach.grid`` with h = d): the grid g_k = k·d; one relay per cell
of the (a1, a2) plane, a1 in level p = [g_p, g_p+1], a2 in level q >= p; off the diagonal
at the cell's centre a1 = (p + ½)·d, a2 = (q + ½)·d, on it at the half-cell's centroid
a1 = (p + ⅓)·d, a2 = (p + ⅔)·d. A relay's output is +1 once the input has reached a2,
−1 once it has reached a1 (a sample-by-sample update: an input moving in straight lines
between its samples switches the same relays). The input samples lie on the grid nodes, so
no relay threshold is ever hit exactly and rounding (fit_preisach's first step) is exact.
The reference plane reaches beyond the input's range (levels −K − 3 ... K + 2 for an input
in [−K·d, K·d]), as a material's does.
"""
import numpy as np
import pytest

D = 2e-4          # grid step [m]: the d


def relay_plane(K, extra=3, seed=0):
    """Relays (a1, a2, weight) on the levels −K − extra ... K + extra − 1, with their
    level indices (p = a1's, q = a2's); weights positive, non-constant, O(1e-3)."""
    lv = np.arange(-K - extra, K + extra)
    P, Q = np.meshgrid(lv, lv, indexing="ij")
    keep = P <= Q
    p, q = P[keep], Q[keep]
    diag = p == q
    a1 = np.where(diag, p + 1 / 3, p + 0.5) * D
    a2 = np.where(diag, p + 2 / 3, q + 0.5) * D
    rng = np.random.default_rng(seed)
    w = (1.0 + 0.5 * np.sin(0.3 * p) * np.cos(0.2 * q) + 0.3 * rng.random(p.size)) * 1e-3
    w = np.where(diag, 0.5, 1.0) * w
    return a1, a2, w, p, q


def relay_output(a1, a2, w, u, initial):
    """Σ w·R[u] of the relay array started at R = initial (±1), sample by sample."""
    R = np.full(a1.size, float(initial))
    y = np.empty(u.size)
    for k in range(u.size):
        R = np.where(u[k] >= a2, 1.0, np.where(u[k] <= a1, -1.0, R))
        y[k] = w @ R
    return y


def relay_states(a1, a2, u, initial):
    """The relays' outputs R[u] (samples × relays), as relay_output."""
    R = np.full(a1.size, float(initial))
    S = np.empty((u.size, a1.size))
    for k in range(u.size):
        R = S[k] = np.where(u[k] >= a2, 1.0, np.where(u[k] <= a1, -1.0, R))
    return S


def forc_input(K, initial):
    """First-order reversal curves on the grid from saturation (initial −1): from −K up
    to a, down to b < a, back to −K, for every pair of levels; mirrored for +1. Each
    cell of the input's triangle and each strip beyond it then switches at its own
    moments, so every weight is determined."""
    seq = [-K]
    for a in range(-K + 1, K + 1):
        for b in range(a - 1, -K - 1, -1):
            seq += [a, b, -K]
    k = np.array(seq, dtype=float)
    return (k if initial == -1 else -k) * D


def expected_weights(fit, a1, a2, w, p, q, K, initial):
    """Reference weight of each fitted cell (i = a2's level, j = a1's level): the relay
    in it, or for a strip cell (j = −K − 1 from −1, i = K from +1) the sum of the relays
    with the same other level and the threshold beyond the input's range."""
    if initial == -1:
        pp = np.where(p < -K, -K - 1, p)
        qq = q
    else:
        pp = p
        qq = np.where(q > K - 1, K, q)
    key = {}
    for a, b, wt in zip(qq, pp, w):
        key[(int(a), int(b))] = key.get((int(a), int(b)), 0.0) + wt
    return np.array([key[(int(i), int(j))] for i, j in zip(fit.mesh.i, fit.mesh.j)])


@pytest.mark.parametrize("initial", [-1, 1])
def test_fit_preisach_recovers_every_weight_of_a_relay_array_from_saturation(initial):
    from hystmech.identify.preisach import fit_preisach

    K = 12                                             # 24 levels in the input's range
    a1, a2, w, p, q = relay_plane(K)
    u = forc_input(K, initial)
    y = relay_output(a1, a2, w, u, initial)
    fit = fit_preisach(u, y, D, initial=initial)
    assert np.max(np.abs(fit.fitted - y)) <= 1e-6 * np.ptp(y)
    ref = expected_weights(fit, a1, a2, w, p, q, K, initial)
    strip = fit.mesh.j == -K - 1 if initial == -1 else fit.mesh.i == K
    # every cell of the triangle below the input's range plus every strip is identified
    assert fit.mesh.n == K * (2 * K + 1) + 2 * K
    assert strip.sum() == 2 * K
    np.testing.assert_allclose(fit.x, ref, rtol=1e-3)
    # the offset: the relays that never switch after the first sample, at their states
    S = relay_states(a1, a2, u, initial)
    const = np.ptp(S, axis=0) == 0
    assert fit.offset == pytest.approx(w[const] @ S[0, const], abs=1e-3 * np.ptp(y))
    # the exported element (continuous Preisach on the fit's grid, same start) gives it too
    assert fit.grid == pytest.approx(((K + 1) * D, 2 * K + 2))
    assert np.max(np.abs(fit.drive(u).force - y)) <= 1e-6 * np.ptp(y)


def test_fit_preisach_reproduces_a_relay_array_under_a_modulated_sine():
    """The probe of issue 30 at 40 levels: a sine of varying amplitude rounded to the
    grid, the reference plane wider than the input; before the strip cells the training
    residual was 0.9 % of the output's range (0.41 % at 200 levels)."""
    from hystmech.identify.preisach import fit_preisach

    K = 20
    a1, a2, w, *_ = relay_plane(K)
    t = np.arange(0.0, 6.0, 1e-3)
    u = np.rint(0.995 * K * np.sin(2 * np.pi * t) * (0.3 + 0.7 * np.abs(np.sin(0.2 * np.pi * t)))) * D
    y = relay_output(a1, a2, w, u, -1)
    fit = fit_preisach(u, y, D, initial=-1)
    assert np.max(np.abs(fit.fitted - y)) <= 1e-6 * np.ptp(y)
    assert np.max(np.abs(fit.predict(u) - y)) <= 1e-6 * np.ptp(y)


@pytest.mark.slow
def test_fit_preisach_200_levels_reproduces_a_relay_array():
    """The issue's case: d = 2e-4 over ±20 mm, 200 levels (about 20 000 cells and strips),
    the modulated sine of the test above (6000 samples). The output is reproduced; the
    weights are not all separable from this record (cells switching together share
    their weight, minimum norm), so weight recovery is checked at 24 levels above."""
    from hystmech.identify.preisach import fit_preisach

    K = 100
    a1, a2, w, *_ = relay_plane(K)
    t = np.arange(0.0, 6.0, 1e-3)
    u = np.rint(0.995 * K * np.sin(2 * np.pi * t) * (0.3 + 0.7 * np.abs(np.sin(0.2 * np.pi * t)))) * D
    y = relay_output(a1, a2, w, u, -1)
    fit = fit_preisach(u, y, D, initial=-1)
    assert fit.grid[1] == 2 * (int(np.max(np.abs(u))/D + 0.5) + 1)
    assert np.max(np.abs(fit.fitted - y)) <= 1e-6 * np.ptp(y)
