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
