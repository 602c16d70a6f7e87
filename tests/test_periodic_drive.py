"""Steady hysteresis loops by Newton on the period map (systems/periodic.periodic_state)
against the closed forms of the Dahl and LuGre loops (Ikhouane, Mañosa & Pujol)."""
import numpy as np
import pytest

from hystmech.analysis import dahl_steady_loop, lugre_steady_loop, variation
from hystmech.components import Dahl, LuGre
from hystmech.signals import piecewise_linear
from hystmech.systems.periodic.shooting import periodic_state


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


def _preisach():
    from hystmech.components import Preisach

    rng = np.random.default_rng(3)
    a1 = rng.uniform(-1.0, 0.8, 40)
    return Preisach(a1=a1, a2=a1 + rng.uniform(0.05, 1.0, 40), weights=rng.uniform(0.1, 1.0, 40),
                    k0=0.5)


KNOTS = [0.0, 1.2, 0.3, 0.9, -1.1, 0.0]     # a major loop with one minor loop


def test_operator_periodic_state_with_unrecorded_memory_is_the_long_run_loop():
    # drive() records 2 of the Preisach's 3 + 2·depth states; the period map must carry
    # the whole memory stack: after one period it holds the cycle's dominant extrema
    # only (wiping-out), so the full state is periodic to rounding
    from hystmech.drive import drive

    P = _preisach()
    assert P.n_report_states < P.n_states
    t, u = piecewise_linear(KNOTS, periods=1, gamma=1.0, samples_per_unit=50)
    s = periodic_state(P, t, u)
    assert s.residual == 0.0
    t3, u3 = piecewise_linear(KNOTS, periods=3, gamma=1.0, samples_per_unit=50)
    F3 = drive(P, t3, u3).force
    assert np.max(np.abs(F3[-t.size:] - s.result.force)) < 1e-12 * np.ptp(F3)


def test_sum_of_dahl_and_operator_newton_on_the_dahl_state_only():
    # Dahl + Preisach in parallel: Newton on the Dahl state, operator memory carried over;
    # truth: the last of 30 periods driven from x0; the multiplier is Dahl's contraction
    # exp(−ρ·V) over the input's total variation V (Ikhouane, Mañosa & Pujol, eq. (8))
    from hystmech.drive import drive

    rho = 0.5
    S = Dahl(rho=rho, Fc=2.0) + _preisach()
    t, u = piecewise_linear(KNOTS, periods=1, gamma=1.0, samples_per_unit=50)
    s = periodic_state(S, t, u)
    assert s.residual < 1e-10 and s.multipliers.size == 1
    V = float(np.sum(np.abs(np.diff(KNOTS))))
    assert s.multipliers[0].real == pytest.approx(np.exp(-rho * V), rel=1e-6)
    t30, u30 = piecewise_linear(KNOTS, periods=30, gamma=1.0, samples_per_unit=50)
    F30 = drive(S, t30, u30).force
    assert np.max(np.abs(F30[-t.size:] - s.result.force)) < 1e-9 * np.ptp(F30)
