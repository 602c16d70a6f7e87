"""Continuous inputs in model exchange, importer by importer (issue 34 item 4), with
u = A sin(ωt), v = du/dt against the independent references of tests/fmu_references.py:

- hystmech's own host, exposed as ``hystmech.fmu.simulate_me`` (inputs evaluated at
  every right-hand-side, indicator and completed-step call): Dahl, LuGre, Bouc-Wen (and
  Masing, with events) within 1e-6 of the force scale, FMI 2.0 and 3.0;
- fmpy 0.3.32's ``simulate_fmu`` (model exchange, CVode) on the same FMUs and the same
  input sampled finely: it never applies the inputs in its right-hand side, and CVode
  stops (docs/guide/fmi.md says so; a newer fmpy that fixes it fails this test and the
  guide must be updated);
- fmpy's co-simulation steps at output_interval whatever step_size says.
PyFMI's simulate() (which evaluates the inputs in its right-hand side) is checked in
tests/test_fmu_pyfmi_me.py."""
import numpy as np
import pytest

from hystmech.components import get_element_class
from hystmech.fmu import export_fmu, simulate_me

import fmu_references as ref

LAWS = {
    "Dahl": ("Dahl", dict(rho=200.0, Fc=2.0), 0.02, 5.0,
             lambda t, A, om: ref.dahl(t, A, om, rho=200.0, Fc=2.0)),
    "LuGre": ("LuGre", dict(sigma0=1e4, sigma1=30.0, Fc=1.0, Fs=1.5, vs=0.01, beta=2.0,
                            sigma2=0.4), 0.002, 1.0,
              lambda t, A, om: ref.lugre(t, A, om, 1e4, 30.0, 1.0, 1.5, 0.01, 2.0, 0.4)),
    "BoucWen": ("BoucWen", dict(A=1e4, beta=2.0, gamma=0.5, n=1.5, k_el=100.0), 0.05, 1.0,
                lambda t, A, om: ref.bouc_wen(t, A, om, 1e4, 2.0, 0.5, 1.5, 100.0)),
    "Masing": ("Masing", dict(k=1e5, k0=1e3, alpha=50.0, F0=1.0, c=10.0), 0.002, 2.0,
               lambda t, A, om: ref.masing(t, A, om, 1e5, 1e3, 50.0, 1.0, 10.0)),
}


@pytest.fixture(scope="module")
def fmus(tmp_path_factory):
    d = tmp_path_factory.mktemp("inputs")
    return {(n, v): export_fmu(get_element_class(c)(**kw), d / f"{n}{v}.fmu", fmi_version=v)
            for n, (c, kw, _, _, _) in LAWS.items() for v in (2, 3)}


def _sine(name):
    _, _, A, f, reference = LAWS[name]
    om = 2 * np.pi * f
    return (lambda s: A * np.sin(om * s)), (lambda s: A * om * np.cos(om * s)), A, om, f, \
        reference


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("name", sorted(LAWS))
def test_simulate_me_with_continuous_inputs(fmus, name, version):
    """1.3 periods through the turning points at rtol 1e-10: within 1e-6 of the force
    scale (measured: Dahl 6.7e-9, LuGre 3.8e-8, Bouc-Wen 4.7e-9, Masing 5e-16)."""
    u, v, A, om, f, reference = _sine(name)
    t = np.linspace(0.0, 1.3 / f, 201)
    r = simulate_me(fmus[name, version], t, u, v, rtol=1e-10)
    Fr = reference(t, A, om)
    assert np.max(np.abs(r.y - Fr)) <= 1e-6 * np.max(np.abs(Fr))
    assert r.x.shape == (t.size, 0 if name == "Masing" else 1)
    if name == "Masing":  # the event host entered event mode at the turning points
        assert r.events >= 2


def test_simulate_me_bad_input(fmus):
    u, v, *_ = _sine("Dahl")
    with pytest.raises(ValueError, match="t must start at 0 s"):
        simulate_me(fmus["Dahl", 2], [0.1, 0.2], u, v)
    with pytest.raises(ValueError, match="give v"):
        simulate_me(fmus["Dahl", 2], [0.0, 0.2], u)
    with pytest.raises(ValueError, match="rtol must be in"):
        simulate_me(fmus["Dahl", 2], [0.0, 0.2], u, v, rtol=0.0)


@pytest.mark.parametrize("name", ["Dahl", "LuGre", "BoucWen"])
def test_fmpy_model_exchange_does_not_follow_a_continuous_input(fmus, name):
    """fmpy 0.3.32, CVode at rtol 1e-10, the sine sampled 2000 times per run as an input
    table (fmpy interpolates it linearly, but only at output points and in its root
    function): CVode stops (error -3 or -1) or the force is off by more than 1e-3 of its
    scale, where simulate_me is within 1e-6."""
    import fmpy
    from fmpy import simulate_fmu

    if fmpy.__version__ != "0.3.32":
        pytest.skip("measured with fmpy 0.3.32 (the guide names that version)")
    u, v, A, om, f, reference = _sine(name)
    T = 1.3 / f
    ts = np.linspace(0.0, T, 2001)
    sig = np.zeros(ts.size, dtype=[("time", float), ("u", float), ("v", float)])
    sig["time"], sig["u"], sig["v"] = ts, u(ts), v(ts)
    try:
        res = simulate_fmu(str(fmus[name, 2]), fmi_type="ModelExchange", solver="CVode",
                           relative_tolerance=1e-10, input=sig, output=["F"],
                           output_interval=T / 200, stop_time=T)
    except Exception as e:  # noqa: BLE001 - fmpy raises a plain Exception for CVode
        assert "CVode error" in str(e), e
        return
    Fr = reference(res["time"], A, om)
    assert np.max(np.abs(res["F"] - Fr)) > 1e-3 * np.max(np.abs(Fr))


def test_fmpy_cosimulation_steps_at_output_interval_ignoring_step_size(fmus):
    """fmpy 0.3.32's simulate_fmu in co-simulation: step_size 1e-4 or 1e-2 with the same
    output_interval 1e-2 give bitwise the same forces (one doStep per output interval),
    and a run at output_interval 1e-4 differs (it does step finer)."""
    from fmpy import simulate_fmu

    u, v, *_ = _sine("LuGre")
    ts = np.linspace(0.0, 0.5, 501)
    sig = np.zeros(ts.size, dtype=[("time", float), ("u", float), ("v", float)])
    sig["time"], sig["u"], sig["v"] = ts, u(ts), v(ts)

    def run(step, out):
        r = simulate_fmu(str(fmus["LuGre", 2]), fmi_type="CoSimulation", input=sig,
                         output=["F"], step_size=step, output_interval=out, stop_time=0.5)
        return r["time"], r["F"]
    t_a, Fa = run(1e-4, 1e-2)
    t_b, Fb = run(1e-2, 1e-2)
    assert t_a.size == 51 and np.array_equal(Fa, Fb)
    t_c, Fc = run(1e-4, 1e-4)
    k = np.searchsorted(t_c, t_a[-1] - 1e-12)
    assert abs(Fc[k] - Fa[-1]) > 1e-9 * np.max(np.abs(Fa))
