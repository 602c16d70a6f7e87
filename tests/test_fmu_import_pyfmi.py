"""The PyFMI backend (``FMUElement(..., backend="pyfmi")``, fmu/pyfmi_backend.py) equals
the fmpy backend to 1e-12 on every law's FMU, in co-simulation and in model exchange
(events included), and follows the native law (issue 20, item 7). Skips only when PyFMI
cannot be imported (CI installs the wheel from ../shared/wheels, see .ci/run)."""
import numpy as np
import pytest

import hystmech
from hystmech.fmu import FMUElement, export_fmu
from test_fmu_cases import available, make_input

pytest.importorskip("pyfmi")

CASES = dict(available())


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    d = tmp_path_factory.mktemp("pyfmi")
    return {name: export_fmu(case[0](), d / f"{name}.fmu") for name, case in CASES.items()}


def _drive(path, mode, backend, t, u):
    fe = FMUElement(path, mode=mode, backend=backend, compiled=False)
    try:
        return hystmech.drive(fe, t, u, rtol=1e-10).force, fe
    finally:
        fe.close()


@pytest.mark.parametrize("name", sorted(CASES))
def test_pyfmi_equals_fmpy_on_every_law(name, exported):
    ctor, amp, freq = CASES[name]
    t, u = make_input(amp, freq, T=0.1, n=21)
    for mode in ("me", "cs"):
        Fa, _ = _drive(exported[name], mode, "fmpy", t, u)
        Fb, fe = _drive(exported[name], mode, "pyfmi", t, u)
        scale = np.max(np.abs(Fa))
        assert np.max(np.abs(Fb - Fa)) <= 1e-12 * scale, mode
    if name == "Masing":
        # and the native law: co-simulation is exact on the sampled path (play operator)
        ref = hystmech.drive(ctor(), t, u).force
        assert np.max(np.abs(Fb - ref)) <= 1e-12 * np.max(np.abs(ref))


def test_pyfmi_model_exchange_with_events_in_an_assembly(exported):
    """Masing imported in ME through PyFMI in an assembly: events entered, = fmpy."""
    from hystmech.systems import Assembly, Harmonic, simulate

    def run(backend):
        fe = FMUElement(exported["Masing"], mode="me", backend=backend)
        asm = (Assembly().add_dof("m", mass=1.0)
               .impose("b", Harmonic(0.0, 0.004, 12.566, -1.5707963), Harmonic(0.0, 0.05, 12.566, 0.0))
               .add_spring("b", "m", k=2e4).add_element("e", fe, "m"))
        r = simulate(asm, (0.0, 0.1), method="projection", h=1e-3, energy=False)
        assert fe.n_events > 0
        fe.close()
        return r.x("m")
    xa, xb = run("fmpy"), run("pyfmi")
    assert np.max(np.abs(xa - xb)) <= 1e-12 * np.max(np.abs(xa))


def test_pyfmi_rollback_repeats_a_step_exactly(exported):
    fe = FMUElement(exported["Dahl"], mode="cs", backend="pyfmi", rollback=True)
    x = fe.x0.copy()
    fe.advance(x, 0.0, 0.001, 0.01, 0.1, fe.p, 1e-8)
    x_mid = x.copy()
    fe.advance(x, 0.001, 0.003, 0.01, 0.2, fe.p, 1e-8)
    F1 = fe.force(x, 0.003, 0.2, fe.p)
    fe.advance(x_mid, 0.001, 0.003, 0.01, 0.2, fe.p, 1e-8)
    assert fe.force(x_mid, 0.003, 0.2, fe.p) == F1
    fe.close()


def test_pyfmi_error_carries_the_fmu_text(exported):
    from hystmech.fmu import FMUError

    fe = FMUElement(exported["Dahl"], mode="cs", backend="pyfmi")
    x = fe.x0.copy()
    with pytest.raises(FMUError, match="step size must be"):
        fe.advance(x, 0.0, 0.0, -1.0, 0.0, fe.p, 1e-8)
    with pytest.raises(FMUError, match="compiled"):
        FMUElement(exported["Dahl"], backend="pyfmi", compiled=True)
    fe.close()
