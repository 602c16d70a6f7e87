"""Directional derivatives of exported FMUs (issue 20 item 5): fmi2GetDirectionalDerivative
and FMI 3.0's directional and adjoint derivatives in model exchange, for every law: smooth
laws from their C jac twins (components/*.c; sums assembled from their parts'), where
∂(der(x), F)/∂(x, u, v) read through the FMI calls equals a central finite difference of
the FMU's own derivatives and output to 1e-7 and the Python jac kernel to rounding;
inclusions and operators from LAW_dforce, where ∂F/∂(u, v) on the current branch equals
central differences of the FMU's output to 1e-7. A sum of an inclusion and a law with
continuous states declares providesDirectionalDerivative="false" and the call is an
error."""
import math
import re
import zipfile

import numpy as np
import pytest

from hystmech.fmu import export_fmu
from hystmech.fmu.export import law_spec, provides_jacobian

from fmu_probe import me_eval, open_fmi2, open_fmi3_me, to_continuous_time
from test_fmu_cases import KIND, available

CASES = available()
SMOOTH = [n for n in CASES if KIND[n] == "smooth"]
OPERATORS = [n for n in CASES if n not in SMOOTH]
# the default suite checks a few laws of each kind; the rest run in CI's slow step
SLOW = {"ViscousDahl", "AsymmetricViscousDahl", "MaxwellSlip", "Relay", "Preisach"}


def _some_slow(names):
    return [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in names]


def _model(path, name="j"):
    md, f = open_fmi2(path, name, me=True)
    to_continuous_time(f)
    return md, f


def _eval(f, x, u, v):
    dx, F = me_eval(f, x, u, v)
    return np.append(dx, F)


def test_the_cases_kinds_are_those_of_the_built_laws():
    # (the parametrization reads KIND, so that collection builds no law)
    assert sorted(KIND) == sorted(CASES)
    assert {n: c[0]().kind for n, c in CASES.items()} == KIND


@pytest.mark.parametrize("name", _some_slow(SMOOTH))
def test_directional_derivatives_equal_finite_differences(tmp_path, name):
    make, amp, freq = CASES[name]
    el = make()
    path = export_fmu(el, tmp_path / f"{name}.fmu", platforms="native")
    md_text = zipfile.ZipFile(path).read("modelDescription.xml").decode()
    assert re.search(r'<ModelExchange[^>]*providesDirectionalDerivative="true"', md_text)
    md, f = _model(path)
    nx = md.numberOfContinuousStates
    unknowns = [200000 + i for i in range(nx)] + [3]
    knowns = [100000 + j for j in range(nx)] + [1, 2]
    rng = np.random.default_rng(1)
    vs = 2 * math.pi * freq * amp
    for _ in range(3):
        x = np.asarray(el.x0, float) * 0.5 + (0.2 * rng.random(nx) - 0.1) * np.asarray(
            el.x_scale if getattr(el, "x_scale", None) is not None else np.ones(nx), float)
        u = amp * (2 * rng.random() - 1)
        v = vs * (0.3 + rng.random()) * rng.choice([-1.0, 1.0])
        base = np.concatenate([x, [u, v]])
        _eval(f, x, u, v)
        J = np.column_stack([f.getDirectionalDerivative(unknowns, knowns, list(e))
                             for e in np.eye(nx + 2)])
        fd = np.zeros_like(J)
        for j in range(nx + 2):
            hj = 1e-6 * max(abs(base[j]), 1e-3 * (amp if j == nx else vs if j == nx + 1 else 1.0))
            p, m = base.copy(), base.copy()
            p[j] += hj
            m[j] -= hj
            fd[:, j] = (_eval(f, p[:nx], p[nx], p[nx + 1])
                        - _eval(f, m[:nx], m[nx], m[nx + 1])) / (2 * hj)
        _eval(f, x, u, v)
        scale = np.maximum(np.abs(J).max(axis=1, keepdims=True), 1e-300)
        np.testing.assert_allclose(J / scale, fd / scale, rtol=0, atol=1e-7)
        # the C jac mirrors the Python jac kernel
        Jp = np.zeros((nx + 1, nx + 2))
        el.jac(x, u, v, el.p, Jp)
        np.testing.assert_allclose(J, Jp, rtol=1e-13, atol=1e-300)
    f.terminate()
    f.freeInstance()


def test_fmi3_directional_and_adjoint(tmp_path):
    """FMI 3.0 (Bouc-Wen): the directional derivative along a seed and the adjoint
    derivative (Jᵀ·seed) from the same Jacobian, consistent to rounding."""
    make, amp, _ = CASES["BoucWen"]
    el = make()
    path = export_fmu(el, tmp_path / "BW3.fmu", fmi_version=3)
    md, f = open_fmi3_me(path, "j3", u=0.3 * amp, v=0.2)
    from ctypes import POINTER, c_double

    x = np.array([2.5])
    f.setContinuousStates(x.ctypes.data_as(POINTER(c_double)), 1)
    unk, kn = [200000, 3], [100000, 1, 2]
    J = np.column_stack([f.getDirectionalDerivative(unk, kn, list(e)) for e in np.eye(3)])
    Jp = np.zeros((2, 3))
    el.jac(np.array([2.5]), 0.3 * amp, 0.2, el.p, Jp)
    np.testing.assert_allclose(J, Jp, rtol=1e-13)
    seed = [0.7, -1.3]
    adj = f.getAdjointDerivative(unk, kn, seed, nSensitivity=len(kn))
    np.testing.assert_allclose(adj, J.T @ seed, rtol=1e-13)
    f.terminate()
    f.freeInstance()


@pytest.mark.parametrize("name", _some_slow(OPERATORS))
def test_operator_derivatives_equal_finite_differences(tmp_path, name):
    """Inclusions and operators (no continuous states): ∂F/∂u and ∂F/∂v at the current
    state on the current branch equal central differences of the FMU's own output to
    1e-7 (of the largest slope on the path), at 20 points of a two-harmonic input with
    reversals, the memory moved to each sample in event mode as a host does at events;
    points whose two one-sided differences disagree (a threshold or corner within the
    difference step) are not compared, and at least 12 of 20 must be."""
    make, amp, freq = CASES[name]
    el = make()
    path = export_fmu(el, tmp_path / f"{name}.fmu", platforms="native")
    md, f = _model(path)
    assert md.numberOfContinuousStates == 0
    from test_fmu_cases import make_input

    t, u = make_input(amp, freq, T=1.0 / freq, n=201)

    def F_at(uu, vv):
        f.setReal([1, 2], [uu, vv])
        return f.getReal([3])[0]

    rows = []
    for k in range(0, 200, 10):
        for j in range(max(k - 9, 0), k + 1):  # the memory follows the path to u_k
            f.enterEventMode()
            f.setTime(t[j])
            f.setReal([1, 2], [u[j], (u[j + 1] - u[j]) / (t[j + 1] - t[j])])
            to_continuous_time(f)
        v = (u[k + 1] - u[k]) / (t[k + 1] - t[k])
        f.setTime(t[k + 1])
        F_at(u[k + 1], v)
        J = [f.getDirectionalDerivative([3], [1, 2], e)[0] for e in ([1.0, 0.0], [0.0, 1.0])]
        h, hv = 1e-7 * amp, 1e-3 * abs(v) + 1e-9
        F0 = F_at(u[k + 1], v)
        fwd = (F_at(u[k + 1] + h, v) - F0) / h
        bwd = (F0 - F_at(u[k + 1] - h, v)) / h
        dv = (F_at(u[k + 1], v + hv) - F_at(u[k + 1], v - hv)) / (2 * hv)
        F_at(u[k + 1], v)
        rows.append((J[0], J[1], fwd, bwd, dv))
    a = np.array(rows)
    scale = max(np.abs(a[:, :2]).max(), 1e-300)
    smooth_here = np.abs(a[:, 2] - a[:, 3]) <= 1e-6 * max(np.abs(a[:, 2:4]).max(), scale)
    assert smooth_here.sum() >= 12, a
    fd = 0.5 * (a[:, 2] + a[:, 3])
    np.testing.assert_allclose(a[smooth_here, 0], fd[smooth_here], rtol=0, atol=1e-7 * scale)
    np.testing.assert_allclose(a[:, 1], a[:, 4], rtol=0, atol=1e-7 * scale)
    f.terminate()
    f.freeInstance()


def test_fmi3_operator_directional_and_adjoint(tmp_path):
    """FMI 3.0, Masing (an inclusion): with u moved from the anchor while the spring k
    sticks, ∂F/∂u = k + k0 and ∂F/∂v = c (F = k·w + k0·u + c·u̇ − F0, Bastien et al.
    (2007), eq. (11c)); once w slides on the face, ∂F/∂u = k0; the adjoint is Jᵀ·seed."""
    el = CASES["Masing"][0]()
    k, k0, eta, c = el.p[0], el.p[1], el.p[2], el.p[4]
    path = export_fmu(el, tmp_path / "M3.fmu", fmi_version=3, platforms="native")
    md_text = zipfile.ZipFile(path).read("modelDescription.xml").decode()
    assert re.search(r'<ModelExchange[^>]*providesDirectionalDerivatives="true"[^>]*'
                     r'providesAdjointDerivatives="true"', md_text)
    md, f = open_fmi3_me(path, "m3", u=0.0, v=0.1)
    f.setTime(1e-3)
    f.setFloat64([1, 2], [0.25 * eta, 0.1])  # w0 = 1e-4 = eta/10: still sticking
    J = [f.getDirectionalDerivative([3], [1, 2], e)[0] for e in ([1.0, 0.0], [0.0, 1.0])]
    np.testing.assert_allclose(J, [k + k0, c], rtol=1e-14)
    np.testing.assert_allclose(f.getAdjointDerivative([3], [1, 2], [0.7], nSensitivity=2),
                               [0.7 * (k + k0), 0.7 * c], rtol=1e-14)
    f.setFloat64([1, 2], [2.0 * eta, 0.1])  # w reached +eta on the way: sliding
    assert f.getDirectionalDerivative([3], [1], [1.0])[0] == pytest.approx(k0, rel=1e-14)
    f.terminate()
    f.freeInstance()


def test_laws_without_jacobian_say_so(tmp_path):
    """A sum of an inclusion and a law with continuous states (Masing + Dahl) has no
    Jacobian: declared false, and the call is an error."""
    from fmpy.fmi1 import FMICallException

    el = CASES["Masing"][0]() + CASES["Dahl"][0]()
    assert not provides_jacobian(law_spec(el))
    path = export_fmu(el, tmp_path / "MD.fmu", platforms="native")
    md_text = zipfile.ZipFile(path).read("modelDescription.xml").decode()
    assert 'providesDirectionalDerivative="false"' in md_text
    md, f = _model(path)
    with pytest.raises(FMICallException):
        f.getDirectionalDerivative([3], [1], [1.0])
    f.freeInstance()
