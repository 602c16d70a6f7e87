"""drive() and the Dahl law against closed forms."""
import numpy as np
import pytest

from hystmech import drive
from hystmech.components import Dahl, LuGre


def test_dahl_matches_exact_exponential_on_a_ramp():
    # on a monotone ramp w(u) = 1 + (w0 - 1) exp(-rho (u - u0)) exactly
    el = Dahl(rho=50.0, Fc=2.0, w0=-0.3)
    t = np.linspace(0, 1, 101)
    u = 0.1 * t
    r = drive(el, t, u)
    w_exact = 1 + (-0.3 - 1) * np.exp(-50.0 * u)
    assert np.max(np.abs(r.force - 2.0 * w_exact)) < 1e-12


def test_lugre_with_python_callable_g_matches_builtin_stribeck():
    import math

    t = np.linspace(0, 4, 401)
    u = np.sin(2 * t)
    a = LuGre(sigma0=3, sigma1=0.5, Fc=1, Fs=2, vs=0.7, beta=2.0)
    b = LuGre(sigma0=3, sigma1=0.5, Fc=1, Fs=2, vs=0.7, beta=2.0,
              g=lambda v: 1 + math.exp(-(abs(v) / 0.7) ** 2.0))
    ra, rb = drive(a, t, u), drive(b, t, u)
    assert np.max(np.abs(ra.force - rb.force)) < 1e-12


@pytest.mark.parametrize("kw, name", [
    (dict(t=[0, 1, 1], u=[0, 1, 2]), "t must be strictly increasing"),
    (dict(t=[0, 1, 2], u=[0, np.nan, 2]), "u must be finite"),
    (dict(t=[0, 1, 2], u=[0, 1]), "u must have the same length"),
    (dict(t=[0, 1, np.inf], u=[0, 1, 2]), "t must be finite"),
])
def test_drive_rejects_bad_input(kw, name):
    with pytest.raises(ValueError, match=name):
        drive(Dahl(rho=1, Fc=1), **kw)
