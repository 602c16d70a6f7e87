"""The Preisach operator's state_commit (components/preisach.py): a host that keeps a
trial block advanced in place and commits it with state_commit (header and at most three
stack entries per commit) holds the same committed memory, bitwise on its live part, as
a host that copies the whole live memory (state_copy) at every step — along any input
path: reversals, wiping-out, saturation resets, deep AC-demagnetised stacks, and moves
whose start differs from the memory's last input (two memory-curve moves per advance)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from hystmech.components import Preisach

SETTINGS = settings(max_examples=60, deadline=None)
vals = st.floats(-2.5, 2.5, allow_nan=False)        # beyond ±2: saturation (a reset)


def smooth_preisach(n=20, m=2.0, **kw):
    omega = lambda r, s: np.exp(-r) * (1.0 + 0.5 * np.cos(s))   # noqa: E731
    return Preisach.from_kernel(omega, m, n, **kw)


def live(P, x):
    D, n = int(P.p[2]), int(x[1])
    return np.concatenate([x[:3 + n], x[3 + D:3 + D + n]])


def check_path(P, x0, moves):
    """Host A: trial xt advanced in place, committed xc by state_commit; host B: every
    trial a full live copy of the committed memory (state_copy), advanced once. Garbage
    (NaN) past the live stack in both, so a read past it would show."""
    xc = np.full_like(x0, np.nan)
    P.state_copy(x0, xc, P.p)
    xt = np.full_like(x0, np.nan)
    P.state_copy(xc, xt, P.p)
    ref = xc.copy()
    depths = set()
    for a, b, same in moves:
        u0 = float(xt[0]) if same else a
        P.advance(xt, u0, b, 1.0, 0.0, P.p, 1e-8)
        trial = np.full_like(x0, np.nan)
        P.state_copy(ref, trial, P.p)
        P.advance(trial, u0, b, 1.0, 0.0, P.p, 1e-8)
        P.state_commit(xt, xc, P.p)
        ref = trial
        np.testing.assert_array_equal(live(P, xc), live(P, ref))
        np.testing.assert_array_equal(live(P, xc), live(P, xt))
        assert P.force_of(xc, b, 0.0) == P.force_of(ref, b, 0.0)
        depths.add(int(xc[1]))
    return depths


@pytest.mark.parametrize("cont", [False, True])
@SETTINGS
@given(u=st.lists(vals, min_size=1, max_size=30),
       moves=st.lists(st.tuples(vals, vals, st.booleans()), min_size=1, max_size=40))
def test_state_commit_equals_a_full_copy_along_any_path(u, moves, cont):
    P = smooth_preisach(continuous=cont)
    check_path(P, P.state_after(u), moves)


@pytest.mark.parametrize("cont", [False, True])
def test_state_commit_from_a_deep_demagnetised_memory(cont):
    """From the AC-demagnetised memory (a stack as deep as the levels), a decaying
    random walk with reversals at every scale wipes it out level by level, then
    saturates (a reset) and builds it again."""
    P = smooth_preisach(n=30, continuous=cont)
    x0 = P.demagnetized_state()
    assert int(x0[1]) >= 20                                # a deep stack to start from
    rng = np.random.default_rng(7)
    t = np.arange(3000)
    u = 2.4 * np.sin(2 * np.pi * t / 700) * np.exp(-t / 2500) + 0.05 * rng.standard_normal(t.size)
    moves = [(u[k] + 0.01 * rng.standard_normal(), u[k + 1], rng.random() < 0.8)
             for k in range(t.size - 1)]
    depths = check_path(P, x0, moves)
    assert min(depths) <= 2 and max(depths) >= 10         # wiped out and built again
