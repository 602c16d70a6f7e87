"""Harmonic balance (AFT) against shooting and an independent DOP853 integration."""
import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from hystmech.components import Masing
from hystmech.systems import Assembly, Harmonic
from hystmech.systems.periodic.harmonic_balance import harmonic_balance
from hystmech.systems.periodic.shooting import periodic_orbit

from test_periodic import oscillator

M_, C_, K_, K3_, F_ = 1.0, 0.05, 1.0, 0.1, 0.5


def duffing_period_map(y0, Om, t0):
    def f(t, y):
        return [y[1], (F_ * math.cos(Om * t) - C_ * y[1] - K_ * y[0] - K3_ * y[0] ** 3) / M_]
    T = 2 * math.pi / Om
    return solve_ivp(f, (t0, t0 + T), y0, method="DOP853", rtol=1e-12, atol=1e-13).y[:, -1]


def test_harmonic_balance_equals_shooting_and_converges_exponentially():
    Om = 1.6     # inside the bistable window: the large (resonant) orbit
    asm = oscillator(M_, C_, K_, F_, Om, K3_)
    o = periodic_orbit(asm, y0=[2.5, 0.0], options=dict(rtol=1e-11))
    assert 0.5 * np.ptp(o.simulate(64).y[:, 0]) > 2.0
    guess = o.simulate(32).y[:-1]
    errs = []
    for H in (3, 5, 7, 9, 15):
        hb = harmonic_balance(asm, H, y_guess=guess, t0=o.t0)
        assert hb.residual < 1e-10
        errs.append(np.max(np.abs(hb.y0 - o.y0)))
    # the truncation error falls by a factor > 5 per two harmonics (odd-harmonic
    # response of a cubic oscillator), down to the shooting's own accuracy
    assert errs[0] > 1e-3 and errs[1] < 0.2 * errs[0] and errs[2] < 0.2 * errs[1]
    assert errs[-1] < 1e-8
    assert hb.tail < 1e-9
    # independent: the HB state at t0, integrated over one period by DOP853, returns
    yT = duffing_period_map(hb.y0, Om, hb.t0)
    assert np.max(np.abs(yT - hb.y0)) < 1e-8
    # the whole period, not only the section
    t = hb.t0 + np.linspace(0.0, 2 * math.pi / Om, 9)
    assert np.max(np.abs(hb.evaluate(t) - o.shooter.run(o.y0, t).y)) < 1e-7


def test_harmonic_balance_bad_input():
    asm = oscillator(M_, C_, K_, F_, 1.6, K3_)
    with pytest.raises(ValueError, match="n_harmonics"):
        harmonic_balance(asm, 0)
    with pytest.raises(ValueError, match="n_time"):
        harmonic_balance(asm, 5, n_time=8)
    with pytest.raises(ValueError, match="y_guess"):
        harmonic_balance(asm, 5, y_guess=[np.nan, 0.0])
    a = Assembly()
    a.add_dof("x", mass=1.0)
    a.add_element("m", Masing(k=10.0, k0=1.0, alpha=1.0, F0=0.0), "x")
    a.add_force("x", Harmonic(0.0, 1.0, 1.0, 0.0))
    with pytest.raises(ValueError, match="smooth"):
        harmonic_balance(a, 3)
