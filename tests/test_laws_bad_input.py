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
    (dict(t=[0.0, 1.0, 2.0], u=[0.0, 1.0, 2.0], rtol=0.0), r"rtol must be in \[1e-14, 1\)"),
])
def test_bad_drive_input(el, kw, match):
    with pytest.raises(ValueError, match=match):
        drive(el, **kw)


def _stribeck(vs):
    # a user's Stribeck curve: new kernels, so a drive loop no test has compiled
    from numba import njit

    @njit
    def g(v):
        return 1.0 + 0.5 / (1.0 + (v / vs) ** 2)
    return g


@pytest.mark.parametrize("kw, match", [
    (dict(t=[0.0, 2.0, 1.0], u=[0.0, 1.0, 2.0]), r"t must be strictly increasing"),
    (dict(t=[0.0, np.nan, 2.0], u=[0.0, 1.0, 2.0]), r"t must be finite"),
    (dict(t=[0.0, 1.0, 2.0], u=[0.0, np.inf, 2.0]), r"u must be finite"),
])
def test_bad_series_refused_before_the_laws_loop_is_compiled(kw, match):
    # the loop checks t and u as it goes, but its first call compiles it (seconds): the
    # mistake is refused at once, with the loop's own message, and nothing is compiled
    from numba.core.event import install_recorder

    law = LuGre(sigma0=1e4, sigma1=30.0, Fc=1.0, Fs=1.5, vs=0.01, g=_stribeck(0.0123))
    with install_recorder("numba:compile") as rec:
        with pytest.raises(ValueError, match=match):
            drive(law, **kw)
    assert rec.buffer == []
    # and a good series then runs (the same loop, now compiled, checks as it goes)
    F = drive(law, [0.0, 1.0, 2.0], [0.0, 1e-3, 0.0]).force
    assert np.all(np.isfinite(F))


# -- the shared check_* helpers: bool and str refused, NumPy real scalars accepted ---------
GOOD = {
    "Dahl": dict(rho=20.0, Fc=3.0, w0=0.1),
    "LuGre": dict(sigma0=1e5, sigma1=300.0, Fc=1.0, Fs=1.5, vs=0.01, beta=1.0, sigma2=0.4),
    "ModifiedDahl": dict(MD),
    "ViscousDahl": dict(kx=2.0, kw=3.0, rho=40.0, w0=0.2),
    "AsymmetricViscousDahl": dict(kx1=1.6e5, kw1=5.3e4, kx2=1.3e5, kw2=6.3e4, rho=768.7),
    "BoucWen": dict(A=1.0, beta=0.5, gamma=0.5, n=1.5, k_el=2.0),
    "Masing": dict(k=4.84e5, k0=2.34e5, alpha=163.0, F0=-573.0, c=1.93e4),
    "LinearSpring": dict(k=2.0, u0=0.1),
    "SpringDamper": dict(k=2.0, c=0.5, u0=0.1),
}


def _law(name):
    from hystmech.components import get_element_class

    return get_element_class(name)


@pytest.mark.parametrize("law, param", [(n, p) for n, ps in GOOD.items() for p in ps])
@pytest.mark.parametrize("bad", [True, False, "2.5", b"1", None, [1.0], 1 + 0j])
def test_bool_str_and_non_scalars_are_refused_naming_the_parameter(law, param, bad):
    with pytest.raises((TypeError, ValueError), match=rf"\b{param} must be") as ei:
        _law(law)(**{**GOOD[law], param: bad})
    if isinstance(bad, (bool, str, bytes)):
        assert isinstance(ei.value, TypeError) and isinstance(ei.value, ValueError)


@pytest.mark.parametrize("law", list(GOOD))
def test_numpy_real_scalars_and_0d_arrays_give_the_same_element(law):
    # same packed parameter vector and the same force on a short drive as plain floats
    ref = _law(law)(**GOOD[law])
    t = np.linspace(0.0, 1.0, 101)
    u = 1e-3 * np.sin(2 * np.pi * t)
    F_ref = drive(ref, t, u).force
    for conv in (np.float32, np.float64, np.longdouble, np.array,
                 lambda x: np.array(x, dtype=np.float32)):
        kw = {k: conv(v) for k, v in GOOD[law].items()}
        if conv is np.float32 or getattr(conv, "__name__", "") == "<lambda>":
            # float32 rounds the values: compare with the float64 of the rounded values
            ref_k = _law(law)(**{k: float(np.float32(v)) for k, v in GOOD[law].items()})
        else:
            ref_k = ref
        el = _law(law)(**kw)
        np.testing.assert_array_equal(el.p, ref_k.p)
        np.testing.assert_array_equal(drive(el, t, u).force, drive(ref_k, t, u).force)
    assert np.isfinite(F_ref).all()


def test_integer_numpy_scalars_are_real_numbers():
    el = _law("Dahl")(rho=np.int64(20), Fc=np.int32(3), w0=np.array(0))
    np.testing.assert_array_equal(el.p, _law("Dahl")(rho=20.0, Fc=3.0, w0=0.0).p)


def test_check_helpers_directly():
    from hystmech.components.base import check_array, check_finite, check_range

    assert check_range("x", np.array(0.5), 0, 1) == 0.5
    with pytest.raises(ValueError, match=r"x must be a real scalar \(got an array of shape \(2,\)\)"):
        check_finite("x", np.array([1.0, 2.0]))
    with pytest.raises(TypeError, match="x must be a real number, not a boolean"):
        check_finite("x", np.bool_(True))
    with pytest.raises(ValueError, match="x must be a finite real number"):
        check_finite("x", 10 ** 400)                      # too large for a float
    with pytest.raises(TypeError, match="h must hold real numbers, not booleans"):
        check_array("h", [True, False])
    with pytest.raises(TypeError, match="h must hold real numbers, not strings"):
        check_array("h", ["1.0", "2.0"])
    with pytest.raises(TypeError, match="h must hold real numbers"):
        check_array("h", np.array([1.0, True], dtype=object))
    np.testing.assert_array_equal(check_array("h", np.arange(3, dtype=np.int16)), [0.0, 1.0, 2.0])
