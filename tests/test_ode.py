"""The one Dormand-Prince 5(4) stepper (components/_ode.py) against closed forms:
order of the step, order of the embedded estimate and of the dense output, the
adaptive driver's accuracy, and Python = compiled."""
import math

import numpy as np
from numba import njit

from hystmech.components._ode import (DP_A, DP_B, DP_C, DP_E, dp45_dense, dp45_solve,
                                      dp45_step, rk_advance)


@njit(cache=True)
def _fun(t, y, args, out):
    # y' = −a y + cos t, y0 = 1: y = C e^(−a t) + (a cos t + sin t)/(1 + a²)
    out[0] = -args[0] * y[0] + math.cos(t)
    out[1] = y[0]  # quadrature of y


def _exact(t, a=2.0):
    c = 1.0 - a / (1 + a * a)
    y = c * math.exp(-a * t) + (a * math.cos(t) + math.sin(t)) / (1 + a * a)
    q = c * (1 - math.exp(-a * t)) / a + (a * math.sin(t) + 1 - math.cos(t)) / (1 + a * a)
    return np.array([y, q])


@njit(cache=True)
def _one_step(h, K, yn, atol):
    y = np.array([1.0, 0.0])
    _fun(0.0, y, (2.0,), K[0])
    err = dp45_step(_fun, 0.0, y, h, (2.0,), K, yn, atol, 1e-300, 2)
    return err


def test_tableau_is_consistent():
    # row sums of A are the nodes c; b and the embedded weights sum to 1
    assert np.allclose(DP_A.sum(axis=1), DP_C)
    assert math.isclose(DP_B.sum(), 1.0, rel_tol=1e-15)
    assert abs(DP_E.sum()) < 1e-16


def test_step_local_error_order_5_and_estimate_order_4():
    errs, ests = [], []
    atol = np.array([1.0, 1.0])
    for h in (0.2, 0.1, 0.05):
        K, yn = np.empty((7, 2)), np.empty(2)
        ests.append(_one_step(h, K, yn, atol))
        errs.append(abs(yn[0] - _exact(h)[0]))
    # local error of a 5th-order step ~ h^6; the embedded estimate ~ h^5
    for i in range(2):
        assert 5.5 < math.log2(errs[i] / errs[i + 1]) < 6.6
        assert 4.6 < math.log2(ests[i] / ests[i + 1]) < 5.4


def test_dense_output_order_4():
    errs = []
    for h in (0.2, 0.1, 0.05):
        K, yn, out = np.empty((7, 2)), np.empty(2), np.empty(2)
        _one_step(h, K, yn, np.ones(2))
        dp45_dense(K, np.array([1.0, 0.0]), h, 0.37, out)
        errs.append(abs(out[0] - _exact(0.37 * h)[0]))
    for i in range(2):
        assert 4.5 < math.log2(errs[i] / errs[i + 1]) < 5.6  # local error ~ h^5


def test_solve_meets_tolerance_python_equals_compiled():
    @njit
    def solve(rtol):
        y = np.array([1.0, 0.0])
        atol = np.array([rtol, rtol])
        n = dp45_solve(_fun, 0.0, 3.0, y, (2.0,), atol, rtol, 3.0, np.empty((7, 2)),
                       np.empty(2))
        return y, n

    for rtol in (1e-6, 1e-10):
        y, n = solve(rtol)
        assert np.max(np.abs(y - _exact(3.0))) < 50 * rtol
        yp, npy = solve.py_func(rtol)
        assert npy == n
        np.testing.assert_allclose(yp, y, rtol=1e-13, atol=1e-15)


def test_rk_advance_on_a_law_rate():
    @njit
    def rate(x, u, v, p, out):
        out[0] = v * (p[0] - x[0])  # Dahl-like: x → p0 along the arc length

    x = np.array([0.25])
    rk_advance(rate, x, 0.0, 2.0, 0.7, np.array([1.0]), 1e-10, np.ones(1))
    assert abs(x[0] - (1.0 - 0.75 * math.exp(-1.4))) < 1e-9
    x2 = np.array([0.25])
    rk_advance.py_func(rate.py_func, x2, 0.0, 2.0, 0.7, np.array([1.0]), 1e-10, np.ones(1))
    assert abs(x2[0] - x[0]) < 1e-15
