"""Directional derivatives of exported FMUs (issue 20 item 5): fmi2GetDirectionalDerivative
and FMI 3.0's directional and adjoint derivatives in model exchange, from the laws' C
jac twins (components/*.c). The Jacobian ∂(der(x), F)/∂(x, u, v) read through the FMI
calls equals a central finite difference of the FMU's own derivatives and output to
1e-7, and the Python jac kernel to rounding; laws without a C jac declare
providesDirectionalDerivative="false" and the call is an error."""
import math
import re
import zipfile

import numpy as np
import pytest

from hystmech.fmu import export_fmu
from hystmech.fmu.export import law_spec, provides_jacobian

from test_fmu_cases import available

CASES = available()
WITH_JAC = [n for n in ("Dahl", "LuGre", "BoucWen", "SpringDamper") if n in CASES]


def _model(path, name="j"):
    from fmpy import extract, read_model_description
    from fmpy.fmi2 import FMU2Model

    md = read_model_description(str(path))
    f = FMU2Model(guid=md.guid, unzipDirectory=extract(str(path)),
                  modelIdentifier=md.modelExchange.modelIdentifier, instanceName=name)
    f.instantiate()
    f.setupExperiment(startTime=0.0)
    f.enterInitializationMode()
    f.exitInitializationMode()
    while f.newDiscreteStates()[0]:
        pass
    f.enterContinuousTimeMode()
    return md, f


def _eval(f, nx, x, u, v):
    from ctypes import POINTER, c_double

    if nx:
        xb = np.ascontiguousarray(x, dtype=float)
        f.setContinuousStates(xb.ctypes.data_as(POINTER(c_double)), nx)
    f.setReal([1, 2], [u, v])
    dx = np.zeros(nx)
    if nx:
        f.getDerivatives(dx.ctypes.data_as(POINTER(c_double)), nx)
    return np.concatenate([dx, f.getReal([3])])


@pytest.mark.parametrize("name", WITH_JAC)
def test_directional_derivatives_equal_finite_differences(tmp_path, name):
    make, amp, freq = CASES[name]
    el = make()
    path = export_fmu(el, tmp_path / f"{name}.fmu")
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
        _eval(f, nx, x, u, v)
        J = np.column_stack([f.getDirectionalDerivative(unknowns, knowns, list(e))
                             for e in np.eye(nx + 2)])
        fd = np.zeros_like(J)
        for j in range(nx + 2):
            hj = 1e-6 * max(abs(base[j]), 1e-3 * (amp if j == nx else vs if j == nx + 1 else 1.0))
            p, m = base.copy(), base.copy()
            p[j] += hj
            m[j] -= hj
            fd[:, j] = (_eval(f, nx, p[:nx], p[nx], p[nx + 1])
                        - _eval(f, nx, m[:nx], m[nx], m[nx + 1])) / (2 * hj)
        _eval(f, nx, x, u, v)
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
    from fmpy import extract, read_model_description
    from fmpy.fmi3 import FMU3Model

    make, amp, _ = CASES["BoucWen"]
    el = make()
    path = export_fmu(el, tmp_path / "BW3.fmu", fmi_version=3)
    md = read_model_description(str(path))
    f = FMU3Model(guid=md.guid, unzipDirectory=extract(str(path)),
                  modelIdentifier=md.modelExchange.modelIdentifier, instanceName="j3")
    f.instantiate()
    f.enterInitializationMode(startTime=0.0)
    f.setFloat64([1, 2], [0.3 * amp, 0.2])
    f.exitInitializationMode()
    f.enterContinuousTimeMode()
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


def test_laws_without_jacobian_say_so(tmp_path):
    """Preisach (an operator) has no Jacobian: declared false, and the call is an error."""
    from fmpy.fmi1 import FMICallException

    make, _, _ = CASES["Preisach"]
    assert not provides_jacobian(law_spec(make()))
    path = export_fmu(make(), tmp_path / "P.fmu")
    md_text = zipfile.ZipFile(path).read("modelDescription.xml").decode()
    assert 'providesDirectionalDerivative="false"' in md_text
    md, f = _model(path)
    with pytest.raises(FMICallException):
        f.getDirectionalDerivative([3], [1], [1.0])
    f.freeInstance()
