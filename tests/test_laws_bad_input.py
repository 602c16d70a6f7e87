"""Bad parameters and inputs raise ValueError naming the parameter and its allowed range."""
import numpy as np
import pytest

from hystmech import drive
from hystmech.components import (AsymmetricViscousDahl, BoucWen, Dahl, Duhem, LinearDamper,
                                 LuGre, ModifiedDahl, SumElement, ViscousDahl)

MD = dict(Lambda=117355.0, mu=0.37, a=7.146e4, b=9.596e2, d=5.322e4, e=3.972e2)


@pytest.mark.parametrize("make, match", [
    (lambda: Dahl(rho=0.0, Fc=1.0), r"rho must be in \(0, inf\)"),
    (lambda: Dahl(rho=-2.0, Fc=1.0), r"rho must be in \(0, inf\)"),
    (lambda: Dahl(rho=1.0, Fc=1.0, w0=1.5), r"w0 must be in \[-1, 1\]"),
    (lambda: Dahl(rho=1.0, Fc=1.0, w0=-1.01), r"w0 must be in \[-1, 1\]"),
    (lambda: ViscousDahl(kx=1.0, kw=1.0, rho=0.0), r"rho must be in \(0, inf\)"),
    (lambda: ViscousDahl(kx=1.0, kw=1.0, rho=1.0, w0=2.0), r"w0 must be in \[-1, 1\]"),
    (lambda: ViscousDahl(kx=-1.0, kw=1.0, rho=1.0), r"kx must be in \[0, inf\)"),
    (lambda: AsymmetricViscousDahl(kx1=1, kw1=1, kx2=1, kw2=1, rho=-1), r"rho must be in \(0, inf\)"),
    (lambda: AsymmetricViscousDahl(kx1=1, kw1=1, kx2=1, kw2=0, rho=1), r"kw2 must be in \(0, inf\)"),
    (lambda: AsymmetricViscousDahl(kx1=1, kw1=1, kx2=1, kw2=1, rho=1, w0=-3),
     r"w0 must be in \[-1, 1\]"),
    (lambda: LuGre(sigma0=1, sigma1=1, Fc=2, Fs=1, vs=1), r"Fs must be in \[Fc, inf\)"),
    (lambda: ModifiedDahl(**{**MD, "mu": 0.0}), r"mu must be in \(0, inf\)"),
    (lambda: ModifiedDahl(**{**MD, "mu": -0.37}), r"mu must be in \(0, inf\)"),
    (lambda: ModifiedDahl(**{**MD, "Lambda": 0.0}), r"Lambda must be in \(0, inf\)"),
    (lambda: ModifiedDahl(**{**MD, "a": np.nan}), r"a must be a finite real number"),
    (lambda: Duhem(A=0.0, hu=lambda u: 1.0, hl=lambda u: -1.0), r"A must be in \(0, inf\)"),
    (lambda: Duhem(A=1.0, hu=3.0, hl=lambda u: -1.0), r"hu must be a callable"),
    (lambda: Duhem(A=1.0, hu=lambda u: 1.0, hl=lambda u: float("inf")), r"hl must return finite"),
    (lambda: BoucWen(A=1.0, beta=1.0, gamma=-2.0, n=2.0), r"gamma must be in \[-beta, inf\) = \[-1, inf\) when n > 1"),
    (lambda: BoucWen(A=1.0, beta=-1.0, gamma=2.0, n=1.5), r"beta must be in \[0, inf\) when n > 1"),
    (lambda: BoucWen(A=1.0, beta=1.0, gamma=3.0, n=2.0, z0=0.8), r"z0 must be in \(-0.707107, 0.707107\)"),
    (lambda: ModifiedDahl(**{**MD, "a": -1.0}), r"a must be in \[0, inf\)"),
    (lambda: ModifiedDahl(**{**MD, "d": -1.0}), r"d must be in \[0, inf\)"),
    (lambda: ModifiedDahl(**{**MD, "e": 2e3}), r"e must be in \(-inf, b\] = \(-inf, 959.6\]"),
    (lambda: LuGre(sigma0=1, sigma1=1, Fc=2, Fs=1.9, vs=1), r"Fs must be in \[Fc, inf\).*static"),
    (lambda: BoucWen(A=1.0, beta=1.0, gamma=0.0, n=0.0), r"n must be in \(0, inf\)"),
    (lambda: BoucWen(A=-1.0, beta=1.0, gamma=0.0, n=1.0), r"A must be in \(0, inf\)"),
    (lambda: LinearDamper(c=-1.0), r"c must be in \[0, inf\)"),
    (lambda: SumElement(), r"elements must hold at least one"),
    (lambda: SumElement(Dahl(rho=1, Fc=1), 3.0), r"elements must be hystmech force elements"),
])
def test_bad_parameters_name_the_parameter_and_range(make, match):
    with pytest.raises(ValueError, match=match):
        make()


EL = [Dahl(rho=1.0, Fc=1.0), ModifiedDahl(**MD, F0=1000.0),
      BoucWen(A=1.0, beta=1.0, gamma=0.0, n=1.0)]


@pytest.mark.parametrize("el", EL, ids=lambda e: e.name)
@pytest.mark.parametrize("kw, match", [
    (dict(t=[0.0, 1.0, 1.0], u=[0.0, 1.0, 2.0]), r"t must be strictly increasing"),
    (dict(t=[0.0, 2.0, 1.0], u=[0.0, 1.0, 2.0]), r"t must be strictly increasing"),
    (dict(t=[0.0, 1.0, 2.0], u=[0.0, np.nan, 2.0]), r"u must be finite"),
    (dict(t=[0.0, 1.0, 2.0], u=[0.0, np.inf, 2.0]), r"u must be finite"),
    (dict(t=[0.0, np.nan, 2.0], u=[0.0, 1.0, 2.0]), r"t must be finite"),
    (dict(t=[0.0, 1.0, 2.0], u=[0.0, 1.0]), r"u must have the same length as t"),
    (dict(t=[0.0, 1.0, 2.0], u=[0.0, 1.0, 2.0], v=[1.0, 1.0]), r"v must have the same length"),
    (dict(t=[0.0, 1.0, 2.0], u=[0.0, 1.0, 2.0], v=[1.0, -np.inf, 1.0]), r"v must be finite"),
    (dict(t=[0.0, 1.0, 2.0], u=[0.0, 1.0, 2.0], rtol=0.0), r"rtol must be in \(0, 1\)"),
])
def test_bad_drive_input(el, kw, match):
    with pytest.raises(ValueError, match=match):
        drive(el, **kw)
