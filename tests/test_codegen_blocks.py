"""Elements with many states (more than codegen._UNROLL) are copied in loops by the
generated code instead of line by line. Checked against the same physics written as
many small elements (the unrolled path) and against finite differences."""
import numpy as np
import pytest

from hystmech.components import Dahl, Masing, MaxwellSlip
from hystmech.components.combine import SumElement
from hystmech.systems import Assembly, Harmonic, codegen, simulate

from model_checks import assert_jacobian_matches_fd


@pytest.fixture(autouse=True)
def _generated_code(monkeypatch):
    # these tests are about the structures' generated code (the suite otherwise runs
    # the models it can on the generic engine: conftest.py)
    monkeypatch.setenv("HYSTMECH_ENGINE", "0")


N_BIG = codegen._UNROLL + 4


def _rig(els, x0=0.0):
    a = Assembly()
    a.add_dof("m", mass=1.0, x0=x0)
    a.add_spring("m", "ground", k=200.0)
    for i, el in enumerate(els):
        a.add_element(f"e{i}", el, "m", "ground")
    a.add_force("m", Harmonic(0.0, 3.0, 9.0, 0.0))
    return a


@pytest.mark.slow
def test_maxwell_slip_block_equals_as_many_masing_elements(tmp_path, monkeypatch):
    # parallel stops on one deflection are a Maxwell-slip element (Jankowski et al.
    # (2017), eq. (7)): the block of N_BIG sliders is copied in loops, the single-slider
    # elements line by line; and the same block written out line by line gives the same
    # trajectory as its loop form
    k = np.linspace(100.0, 600.0, N_BIG)
    fs = np.linspace(0.1, 2.0, N_BIG)
    run = dict(t_span=(0.0, 1.0), method="projection", h=1e-4)
    r1 = simulate(_rig([Masing(k=ki, k0=0.0, alpha=fi) for ki, fi in zip(k, fs)], 0.01), **run)
    r2 = simulate(_rig([MaxwellSlip(k=k, delta=fs / k)], 0.01), **run)
    assert np.ptp(r1.x("m")) > 1e-3
    assert "for _i in range" in codegen._core(r2.model)            # the loop form ran
    assert "for _i in range" not in codegen._core(r1.model)
    np.testing.assert_allclose(r1.x("m"), r2.x("m"), rtol=0, atol=1e-12)
    monkeypatch.setattr(codegen, "_UNROLL", 10**6)
    monkeypatch.setenv("HYSTMECH_CACHE", str(tmp_path))         # a fresh structure build
    r3 = simulate(_rig([MaxwellSlip(k=k, delta=fs / k)], 0.01), **run)
    assert "for _i in range" not in codegen._step(r3.model)
    np.testing.assert_allclose(r3.y, r2.y, rtol=0, atol=1e-14)


@pytest.mark.slow
def test_smooth_block_and_its_jacobian_equal_separate_elements():
    parts = [Dahl(rho=200.0 + 40.0 * i, Fc=0.05 + 0.01 * i) for i in range(N_BIG)]
    t = np.linspace(0.0, 0.5, 51)
    r1 = simulate(_rig(parts), (0.0, 0.5), method="radau5", rtol=1e-10, t_eval=t)
    r2 = simulate(_rig([SumElement(*parts)]), (0.0, 0.5), method="radau5", rtol=1e-10,
                  t_eval=t)
    assert np.ptp(r1.x("m")) > 1e-3
    np.testing.assert_allclose(r2.x("m"), r1.x("m"), rtol=0, atol=1e-9 * np.ptp(r1.x("m")))
    # the block's analytic Jacobian (loop form) against central differences
    m = r2.model
    assert "for _r in range" in codegen._jac(m) and "for _i in range" in codegen._core(m)
    assert_jacobian_matches_fd(m, t[25], r2.y[25])
