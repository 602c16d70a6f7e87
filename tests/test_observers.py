"""Observers inside the compiled loops (systems/observers.py): windowed extrema, the
steady-state stop and the user's callback, checked against the recorded output and
the closed-form steady state of a forced linear oscillator."""
import math

import numpy as np
import pytest
from numba import njit

from hystmech.systems import Assembly, Harmonic, Observe, simulate

M, K, C, F1, W = 2.0, 800.0, 8.0, 5.0, 15.0


def _osc():
    a = Assembly()
    a.add_dof("m", mass=M)
    a.add_spring("m", "ground", k=K, name="spring")
    a.add_damper("m", "ground", c=C, name="damper")
    a.add_force("m", Harmonic(0.0, F1, W, 0.0))
    return a


@pytest.mark.parametrize("method,kw", [("RK45", dict(rtol=1e-9)),
                                       ("projection", dict(h=1e-4))])
def test_window_extrema_equal_the_recorded_output(method, kw):
    # the observer sees every output sample (RK45 with t_eval) or every step
    # (projection: h equals the output spacing here)
    t = np.linspace(0.0, 2.0, 20001)
    r = simulate(_osc(), (0.0, 2.0), method=method, t_eval=t, energy=False,
                 observe=Observe(("spring", "damper"), window=1.0), **kw)
    s = r.force("spring") + r.force("damper")
    w = r.t >= 1.0
    assert r.observed["max"] == pytest.approx(s[w].max(), rel=1e-12)
    assert r.observed["min"] == pytest.approx(s[w].min(), rel=1e-12)
    assert math.isnan(r.observed["t_stop"])


def test_steady_state_stop_gives_the_closed_form_amplitude():
    # x = Re(X e^{iWt}), X = F1 / (K − M W² + i C W): the spring + damper force
    # K x + C ẋ has the amplitude |K + i C W|·|X| (observing the signal of the window
    # test above: the same compiled structure)
    X = F1 / complex(K - M * W * W, C * W)
    block = 2 * (2 * math.pi / W)
    r = simulate(_osc(), (0.0, 60.0), method="RK45", rtol=1e-10, energy=False,
                 t_eval=np.arange(0.0, 60.0, 1e-4),
                 observe=Observe(("spring", "damper"), steady_state=True, block=block,
                                 tol=1e-5, confirm=3, start=0.0))
    assert r.observed["t_stop"] < 30.0                      # stopped early, not at 60 s
    assert r.t[-1] == pytest.approx(r.observed["t_stop"])
    assert r.observed["ss_amplitude"] == pytest.approx(2 * abs(complex(K, C * W)) * abs(X),
                                                       rel=1e-4)


@njit
def _stop_at_half(t, y):
    return t >= 0.5


@pytest.mark.parametrize("method,kw", [("RK45", dict(rtol=1e-9)),
                                       ("projection", dict(h=1e-4))])
def test_callback_stops_the_run_and_keeps_the_prefix(method, kw):
    t = np.linspace(0.0, 1.0, 101)
    # (observing what the window test observes: the same compiled structure)
    full = simulate(_osc(), (0.0, 1.0), method=method, t_eval=t, energy=False,
                    observe=Observe(("spring", "damper")), **kw)
    cut = simulate(_osc(), (0.0, 1.0), method=method, t_eval=t, energy=False,
                   callback=_stop_at_half, **kw)
    assert cut.t[-1] == pytest.approx(0.5) and cut.message == "stopped by the callback"
    np.testing.assert_array_equal(cut.y, full.y[:cut.t.size])


def test_plain_python_callback_is_compiled_or_run_as_python():
    t = np.linspace(0.0, 1.0, 101)
    r = simulate(_osc(), (0.0, 1.0), method="projection", h=1e-4, t_eval=t, energy=False,
                 callback=lambda t, y: t >= 0.25)
    assert r.t[-1] == pytest.approx(0.25) and r.model.code.how == "memory"
