"""The C kernels beside each law's Python definition (components/LAW.c) agree with
the Python kernels: same parameter mapping, rate, force and segment update."""
import numpy as np
import pytest

import hystmech
from hystmech.fmu.ckernels import CKernels

from test_fmu_cases import available, make_input

CASES = available()


@pytest.mark.parametrize("name", sorted(CASES))
def test_c_kernels_match_python(name):
    ctor, amp, freq = CASES[name]
    el = ctor()
    ck = CKernels(el)
    # constructor parameters -> (p, x0): the C setup reproduces the Python constructor
    p, x0 = ck.setup()
    np.testing.assert_array_equal(p, el.p)
    np.testing.assert_array_equal(x0, el.x0)
    # realistic states: along a driven trajectory
    t, u = make_input(amp, freq, n=401)
    r = hystmech.drive(el, t, u)
    # full states along the trajectory (drive may store only the leading ones)
    X = np.empty((t.size, el.n_states))
    x = el.x0.copy()
    for k in range(t.size):
        if k:
            el.advance(x, u[k - 1], u[k], t[k] - t[k - 1], (u[k] - u[k - 1]) / (t[k] - t[k - 1]),
                       el.p, 1e-8)
        X[k] = x
    rng = np.random.default_rng(1)
    vmax = amp * 2 * np.pi * freq * 2
    for k in rng.integers(0, t.size, 40):
        x = np.ascontiguousarray(X[k], dtype=float)
        uk = u[k]
        v = rng.uniform(-vmax, vmax) * rng.choice([1.0, 1.0, 0.0])
        scale = max(np.max(np.abs(r.force)), 1e-12)
        assert ck.force(x, uk, v, el.p) == pytest.approx(el.force(x, uk, v, el.p),
                                                         rel=1e-13, abs=1e-13 * scale)
        if el.rate is not None and ck._rate is not None and el.n_states:
            o1, o2 = np.zeros(el.n_states), np.zeros(el.n_states)
            el.rate(x, uk, v, el.p, o1)
            ck.rate(x, uk, v, el.p, o2)
            np.testing.assert_allclose(o2, o1, rtol=1e-13, atol=1e-13 * np.max(np.abs(o1)) + 1e-300)
        dt = 10 ** rng.uniform(-5, -1.5)
        x1, x2 = x.copy(), x.copy()
        el.advance(x1, uk, uk + v * dt, dt, v, el.p, 1e-8)
        ck.advance(x2, uk, uk + v * dt, dt, v, el.p, 1e-8)
        xs = np.asarray(getattr(el, "x_scale", np.ones(el.n_states)))
        np.testing.assert_allclose(x2, x1, rtol=1e-10, atol=1e-10 * (np.max(xs) if xs.size else 1))


@pytest.mark.parametrize("name", sorted(CASES))
def test_c_setup_rejects_what_python_rejects(name):
    el = CASES[name][0]()
    ck = CKernels(el)
    q = np.array(ck.spec.q_values)
    # the first parameter made non-finite must be rejected with a message naming a
    # parameter, exactly where the Python constructor rejects it
    bad = q.copy()
    bad[0] = np.nan
    with pytest.raises(ValueError, match=r"must"):
        ck.setup(bad)


def _continuous_preisach(n=9, **kw):
    from hystmech.components import Preisach

    # a kernel of both signs, so that E is not monotone and every cell matters
    return Preisach.from_kernel(lambda r, s: (1.0 + 3.0 * r) * np.cos(2.0 * s) - 0.5, 1.5, n,
                                continuous=True, k0=0.3, offset=-0.2, max_depth=24, **kw)


def test_continuous_preisach_c_matches_python_on_random_memories():
    """Continuous mode (p[8] == 0, E the exact integral of the cellwise constant kernel,
    Manfredo et al. (2023), eqs. (12)-(16)): the C kernel gives Python's force and memory
    update on random memories (random nested reversals, inside and beyond the triangle
    |u| <= m, extrema on and off the grid nodes) and random inputs, to 1e-12."""
    el = _continuous_preisach()
    ck = CKernels(el)
    p, x0 = ck.setup()
    np.testing.assert_array_equal(p, el.p)
    np.testing.assert_array_equal(x0, el.x0)
    m, h = 1.5, 3.0 / 9
    rng = np.random.default_rng(7)
    scale = np.sum(np.abs(el.weights)) + 1.0
    n_cmp = 0
    for trial in range(60):
        # a decaying alternating history: nested dominant extrema
        k = rng.integers(1, 9)
        amp = np.sort(rng.uniform(0.05, 1.3 * m, k))[::-1]
        hist = amp * np.where(np.arange(k) % 2 == 0, 1.0, -1.0) * rng.choice([-1.0, 1.0])
        hist += rng.uniform(-0.1, 0.1, k)
        if trial % 3 == 0:                          # extrema exactly on grid nodes
            hist = np.clip(np.round((hist + m) / h) * h - m, -m, m)
        x = el.state_after(hist)
        for u in np.concatenate([rng.uniform(-1.4 * m, 1.4 * m, 6),
                                 [-m + h * rng.integers(0, 10), x[0], 2 * m, -2 * m]]):
            for v in (0.0, 1.0, -1.0):
                Fp = el.force(x, u, v, el.p)
                Fc = ck.force(x, u, v, el.p)
                assert Fc == pytest.approx(Fp, rel=1e-12, abs=1e-12 * scale)
            x1, x2 = x.copy(), x.copy()
            el.advance(x1, x[0], u, 1.0, u - x[0], el.p, 1e-8)
            ck.advance(x2, x[0], u, 1.0, u - x[0], el.p, 1e-8)
            np.testing.assert_allclose(x2, x1, rtol=1e-12, atol=1e-12 * scale)
            n_cmp += 1
    assert n_cmp == 60 * 10


def test_continuous_preisach_c_setup_tunes_weights_and_checks_the_grid():
    """In the FMU the cell weights stay tunable (the C setup rebuilds the node table as
    the Python constructor does); thresholds off the grid are rejected by both."""
    from hystmech.components import Preisach

    el = _continuous_preisach(n=6)
    ck = CKernels(el)
    q = np.array(ck.spec.q_values)
    N = el.a1.size
    w2 = el.weights * np.linspace(2.0, -1.0, N)
    q[2 * N:3 * N] = w2
    p, x0 = ck.setup(q)
    ref = Preisach(a1=el.a1, a2=el.a2, weights=w2, k0=0.3, offset=-0.2, max_depth=24,
                   slope_width=el.params["slope_width"], grid=(1.5, 6))
    np.testing.assert_array_equal(p, ref.p)
    np.testing.assert_array_equal(x0, ref.x0)
    bad = np.array(ck.spec.q_values)
    bad[3] += 1e-3                                   # a1[3] off its cell centre
    with pytest.raises(ValueError, match=r"a1 and a2 must be the 21 cell thresholds"):
        Preisach(a1=bad[:N], a2=el.a2, weights=el.weights, grid=(1.5, 6))
    with pytest.raises(ValueError, match=r"a1 and a2 must be the 21 cell thresholds"):
        ck.setup(bad)
    bad = np.array(ck.spec.q_values)
    bad[-2] = -1.0                                   # grid[0] = m
    with pytest.raises(ValueError, match=r"m must be in \(0, inf\)"):
        ck.setup(bad)


def test_sum_c_kernel_names_the_part_in_errors():
    """A SumElement's generated C law (fmu/export.py: hm_sum.c) passes each part its
    own parameter slice: a bad part1 parameter is reported with the part's name and
    the law's own message (the same check as the Python constructor)."""
    from hystmech.components import Dahl, LinearSpring

    el = LinearSpring(k=5.0, u0=0.0) + Dahl(rho=200.0, Fc=2.0, w0=0.1)
    ck = CKernels(el)
    assert ck.spec.q_names == ["part0.k", "part0.u0", "part1.rho", "part1.Fc", "part1.w0"]
    q = np.array(ck.spec.q_values)
    q[2] = -1.0
    with pytest.raises(ValueError, match=r"rho must be in \(0, inf\)"):
        Dahl(rho=-1.0, Fc=2.0)
    with pytest.raises(ValueError, match=r"^part1 \(Dahl\): rho must be in \(0, inf\)"):
        ck.setup(q)
