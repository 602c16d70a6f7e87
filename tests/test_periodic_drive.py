"""Steady hysteresis loops by Newton on the period map (systems/periodic.periodic_state)
against the closed forms of the Dahl and LuGre loops (Ikhouane, Mañosa & Pujol)."""
import numpy as np
import pytest

from hystmech.analysis import dahl_steady_loop, lugre_steady_loop, variation
from hystmech.components import Dahl, LuGre
from hystmech.signals import piecewise_linear
from hystmech.systems.periodic import periodic_state


def test_dahl_periodic_state_is_the_closed_form_loop():
    rho, Fc, xmin, xmax, n = 3.0, 2.0, -0.4, 0.7, 400
    u = np.concatenate([np.linspace(xmin, xmax, n + 1), np.linspace(xmax, xmin, n + 1)[1:]])
    t = np.linspace(0.0, 2.0, u.size)
    s = periodic_state(Dahl(rho=rho, Fc=Fc), t, u)
    F = s.result.force
    wu, _ = dahl_steady_loop(rho, xmin, xmax, u[:n + 1])
    _, wd = dahl_steady_loop(rho, xmin, xmax, u[n:])
    assert np.max(np.abs(F[:n + 1] / Fc - wu)) < 1e-12
    assert np.max(np.abs(F[n:] / Fc - wd)) < 1e-12
    # w forgets its start as exp(−ρ·|Δu|): one multiplier exp(−2ρ(x_max − x_min))
    assert s.multipliers[0].real == pytest.approx(np.exp(-2 * rho * (xmax - xmin)), rel=1e-6)
    assert s.iterations <= 3


@pytest.mark.parametrize("sigma0, knots", [(1.0, [0.0, 1.0, 0.2, 1.5, 0.0]),
                                           (6.0, [0.0, 1.0, 0.5, 1.5, 0.0])])
def test_slow_lugre_periodic_state_is_the_closed_form_loop(sigma0, knots):
    # slow input (γ = 1e4): the loop of Theorem 2, with its minor loop (Theorem A)
    el = LuGre(sigma0=sigma0, sigma1=1.0, Fc=1.0, Fs=2.0, vs=1.0, beta=1.0)
    loop = lugre_steady_loop(el, knots)
    t, u = piecewise_linear(knots, periods=1, gamma=1e4, samples_per_unit=40)
    s = periodic_state(el, t, u)
    r = variation(t, u)
    assert np.max(np.abs(s.result.force - loop.F_at(r))) < 1e-3 * el.g0()
    # the period map contracts by exp(−a·P), a = σ0/g(0), P = total variation (eq. (8))
    a = loop.sigma0 / loop.g0
    assert s.multipliers[0].real == pytest.approx(np.exp(-a * loop.period), rel=1e-3)
    assert s.iterations <= 4


def test_bad_input():
    el = Dahl(rho=1.0, Fc=1.0)
    with pytest.raises(ValueError, match="one period"):
        periodic_state(el, [0.0, 1.0, 2.0], [0.0, 1.0, 0.5])
    with pytest.raises(ValueError, match="same length"):
        periodic_state(el, [0.0, 1.0], [0.0, 1.0, 0.0])
    with pytest.raises(ValueError, match="x0"):
        periodic_state(el, [0.0, 1.0, 2.0], [0.0, 1.0, 0.0], x0=[0.0, 0.0])
