"""PyFMI with model exchange (issue 34 item 5), with the shared wheel (PyFMI 3.0-dev and
its Assimulo interface; CI installs it with its dependencies, see .ci/run):

- PyFMI's own ``load_fmu(kind="ME").simulate(input=...)`` (Assimulo's CVode, the input a
  function of time that PyFMI evaluates in the right-hand side) of hystmech's Dahl,
  LuGre, Masing and Preisach FMUs, FMI 2.0 and 3.0, against the independent references
  of tests/fmu_references.py (closed forms, exact operators, DOP853);
- ``FMUElement(..., backend="pyfmi")`` in FMI 3.0 model exchange against the native law;
- a PyFMI model-exchange element in an Assembly (its event host: events entered) against
  the native element in the same Assembly, FMI 2.0 and 3.0.
Skips when PyFMI (or its Assimulo interface) cannot be imported."""
import numpy as np
import pytest

import hystmech
from hystmech.components import get_element_class
from hystmech.fmu import FMUElement, FMUError, export_fmu

import fmu_references as ref

pytest.importorskip("pyfmi")
pytest.importorskip("assimulo")

PREISACH = dict(a1=np.array([-0.004, -0.002, -0.003, 0.0, 0.001]),
                a2=np.array([-0.001, 0.003, 0.001, 0.002, 0.004]),
                weights=np.array([3.0, 5.0, 2.0, 4.0, 1.5]), initial=-1, k0=200.0,
                offset=0.5)

# law, its parameters, amplitude A [m], frequency [Hz], the reference F(t) for A sin(ωt)
LAWS = {
    "Dahl": ("Dahl", dict(rho=200.0, Fc=2.0), 0.02, 5.0,
             lambda t, A, om: ref.dahl(t, A, om, rho=200.0, Fc=2.0)),
    "LuGre": ("LuGre", dict(sigma0=1e4, sigma1=30.0, Fc=1.0, Fs=1.5, vs=0.01, beta=2.0,
                            sigma2=0.4), 0.002, 1.0,
              lambda t, A, om: ref.lugre(t, A, om, 1e4, 30.0, 1.0, 1.5, 0.01, 2.0, 0.4)),
    "Masing": ("Masing", dict(k=1e5, k0=1e3, alpha=50.0, F0=1.0, c=10.0), 0.002, 2.0,
               lambda t, A, om: ref.masing(t, A, om, 1e5, 1e3, 50.0, 1.0, 10.0)),
    "Preisach": ("Preisach", dict(PREISACH, max_depth=16), 0.0035, 2.0,
                 lambda t, A, om: ref.preisach(t, A, om, PREISACH["a1"], PREISACH["a2"],
                                               PREISACH["weights"], -1, 200.0, 0.5)),
}


def _law(name):
    cls, kw, _, _, _ = LAWS[name]
    return get_element_class(cls)(**kw)


@pytest.fixture(scope="module")
def fmus(tmp_path_factory):
    d = tmp_path_factory.mktemp("pyfmi_me")
    return {(n, v): export_fmu(_law(n), d / f"{n}{v}.fmu", fmi_version=v)
            for n in LAWS for v in (2, 3)}


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("name", sorted(LAWS))
def test_pyfmi_simulate_me_with_a_continuous_input(fmus, tmp_path, name, version):
    """PyFMI's simulate() of the ME FMU, u = A sin(ωt) and v = du/dt given as a function
    of time, 1.3 periods through the turning points: F within 1e-6 of the force scale
    of the reference at every output point (measured: Dahl 4.4e-9, LuGre 1.4e-7,
    Masing 5e-16, Preisach 1e-16)."""
    from pyfmi import load_fmu

    _, _, A, f, reference = LAWS[name]
    om = 2 * np.pi * f
    m = load_fmu(str(fmus[name, version]), kind="ME", log_level=2,
                 log_file_name=str(tmp_path / "log.txt"))
    opts = m.simulate_options()
    opts["CVode_options"].update(rtol=1e-10, atol=1e-12, verbosity=50)
    opts["ncp"] = 400
    # PyFMI 3.0-dev reads FMI 3.0 array variables (Preisach a1, a2, weights) with one
    # value per value reference, which the FMU refuses: record F only
    opts["filter"] = ["F"]
    # PyFMI keeps FMI 3.0 results in a file only
    opts["result_handling"] = "memory" if version == 2 else "binary"
    opts["result_file_name"] = str(tmp_path / "result.mat")
    r = m.simulate(final_time=1.3 / f, options=opts,
                   input=(["u", "v"], lambda t: np.array([A * np.sin(om * t),
                                                          A * om * np.cos(om * t)])))
    t, F = np.asarray(r["time"]), np.asarray(r["F"])
    assert t[-1] == pytest.approx(1.3 / f) and t.size >= 400
    Fr = reference(t, A, om)
    assert np.max(np.abs(F - Fr)) <= 1e-6 * np.max(np.abs(Fr))


@pytest.mark.parametrize("name", sorted(LAWS))
def test_backend_pyfmi_fmi3_model_exchange_equals_the_native_law(fmus, name):
    """FMUElement(backend="pyfmi") on the FMI 3.0 FMU in model exchange (the mode it
    picks for FMI 3.0) gives drive's force of the native law, and fmpy's to round-off."""
    _, _, A, f, _ = LAWS[name]
    t = np.linspace(0.0, 1.3 / f, 261)
    u = A * np.sin(2 * np.pi * f * t)
    native = hystmech.drive(_law(name), t, u, rtol=1e-10).force
    out = {}
    for backend in ("pyfmi", "fmpy"):
        fe = FMUElement(fmus[name, 3], mode="me" if backend == "fmpy" else None,
                        backend=backend, compiled=False)
        assert fe.mode == "me"
        try:
            out[backend] = hystmech.drive(fe, t, u, rtol=1e-10).force
        finally:
            fe.close()
    scale = np.max(np.abs(native))
    assert np.max(np.abs(out["pyfmi"] - native)) <= 1e-6 * scale
    assert np.max(np.abs(out["pyfmi"] - out["fmpy"])) <= 1e-12 * scale


def test_backend_pyfmi_refuses_fmi3_co_simulation(fmus):
    with pytest.raises(FMUError, match="model exchange only.*backend='fmpy'"):
        FMUElement(fmus["Dahl", 3], mode="cs", backend="pyfmi")


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("name", ["Masing", "Preisach", "Dahl"])
def test_pyfmi_model_exchange_in_an_assembly_equals_the_native_element(fmus, name, version):
    """A mass on a spring driven at its base, the law between mass and ground: the PyFMI
    ME element gives the displacement of the native element in the same Assembly and
    method. Masing, Preisach: the event host (events entered), projection method, to
    round-off; Dahl: its continuous state integrated with the assembly by RK45 at rtol
    1e-9 (the explicit projection step is unstable for this oscillator), to 1e-6."""
    from hystmech.systems import Assembly, Harmonic, simulate

    _, _, A, f, _ = LAWS[name]
    om = 2 * np.pi * f * 3
    smooth = name == "Dahl"
    kw = dict(method="RK45", rtol=1e-9, atol=1e-12) if smooth else dict(
        method="projection", h=1e-3)

    def run(el):
        asm = (Assembly().add_dof("m", mass=1.0)
               .impose("b", Harmonic(0.0, A, om, -np.pi / 2), Harmonic(0.0, A * om, om, 0.0))
               .add_spring("b", "m", k=2e4).add_element("e", el, "m"))
        t = np.linspace(0.0, 0.2, 201)
        return simulate(asm, (0.0, 0.2), t_eval=t, energy=False, **kw).x("m")

    fe = FMUElement(fmus[name, version], mode="me", backend="pyfmi")
    try:
        x = run(fe)
        if not smooth:
            assert fe.n_events > 0
    finally:
        fe.close()
    xn = run(_law(name))
    assert np.max(np.abs(x - xn)) <= (1e-6 if smooth else 1e-12) * np.max(np.abs(xn))
