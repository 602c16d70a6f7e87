"""Exported FMUs: valid (fmpy validate, fmutool -check), and simulated by fmpy they give
the force of hystmech.drive (co-simulation to 1e-6, model exchange to the integrator's
tolerance); clear errors for what cannot be exported."""
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

import hystmech
from hystmech.fmu import FMUExportError, export_fmu
from hystmech.fmu.metadata import is_tunable

from fmu_probe import open_fmi2
from test_fmu_cases import available, make_input

CASES = available()
BIN = Path(sys.executable).parent


@pytest.fixture(scope="session")
def fmus(tmp_path_factory):
    """One FMU per law per session (compiled objects are cached by content)."""
    d = tmp_path_factory.mktemp("fmus")
    return {name: export_fmu(case[0](), d / f"{name}.fmu") for name, case in CASES.items()}


def _input_array(t, u):
    v = np.empty_like(t)
    v[:-1] = np.diff(u) / np.diff(t)
    v[-1] = v[-2]
    sig = np.zeros(t.size, dtype=[("time", float), ("u", float), ("v", float)])
    sig["time"], sig["u"], sig["v"] = t, u, v
    return sig


@pytest.mark.parametrize("name", sorted(CASES))
def test_fmu_is_valid_and_complete(fmus, name):
    from fmpy import read_model_description
    from fmpy.validation import validate_fmu

    path = fmus[name]
    assert validate_fmu(str(path)) == []
    md = read_model_description(str(path))
    assert md.coSimulation is not None and md.modelExchange is not None
    assert md.coSimulation.canGetAndSetFMUstate
    names = {v.name: v for v in md.modelVariables}
    assert names["u"].causality == "input" and names["u"].unit == "m"
    assert names["v"].unit == "m/s" and names["F"].causality == "output"
    assert names["F"].unit == "N"
    el = CASES[name][0]()
    for pi in el.param_info:
        val = el.params.get(pi.name)
        if val is None:
            continue
        key = pi.name if np.ndim(val) == 0 else f"{pi.name}[0]"
        assert names[key].causality == "parameter"
        assert names[key].variability == ("tunable" if is_tunable(el, key) else "fixed")
    if el.kind == "smooth":
        assert md.numberOfContinuousStates == el.n_states
    with zipfile.ZipFile(path) as zf:
        files = set(zf.namelist())
    assert "sources/fmi2_model.c" in files and "sources/hm_law.h" in files
    assert f"binaries/linux64/hystmech_{type(el).__name__}.so" in files


@pytest.mark.parametrize("name", sorted(CASES))
def test_cosimulation_matches_drive(fmus, name):
    from fmpy import simulate_fmu

    ctor, amp, freq = CASES[name]
    el = ctor()
    t, u = make_input(amp, freq, T=0.5, n=1001)
    ref = hystmech.drive(el, t, u, rtol=1e-10)
    dt = t[1] - t[0]
    res = simulate_fmu(str(fmus[name]), fmi_type="CoSimulation", input=_input_array(t, u),
                       output=["F"], step_size=dt, output_interval=dt, stop_time=t[-1],
                       start_values={"rtol": 1e-10})
    assert res["time"].size == t.size
    scale = np.max(np.abs(ref.force))
    assert np.max(np.abs(res["F"] - ref.force)) <= 1e-6 * scale


@pytest.mark.parametrize("name", sorted(CASES))
def test_model_exchange_matches_drive(fmus, name):
    """The FMU's model-exchange interface (continuous states + derivatives for smooth
    laws, a memory that moves at events for inclusions and operators) imported by
    FMUElement (its event host where the FMU has event indicators) gives drive's force
    to the tolerance."""
    from hystmech.fmu import FMUElement

    ctor, amp, freq = CASES[name]
    el = ctor()
    t, u = make_input(amp, freq, T=0.2, n=201)
    ref = hystmech.drive(el, t, u, rtol=1e-10)
    fe = FMUElement(fmus[name], mode="me")
    res = hystmech.drive(fe, t, u, rtol=1e-9)
    scale = np.max(np.abs(ref.force))
    assert np.max(np.abs(res.force - ref.force)) <= 1e-6 * scale
    fe.close()


def test_fmutool_check_passes(fmus):
    for name in ("Dahl", "MaxwellSlip", "SumDahlSpring"):
        if name not in fmus:
            continue
        r = subprocess.run([str(BIN / "fmutool"), "-input", str(fmus[name]), "-check"],
                           capture_output=True, text=True, timeout=600)
        out = r.stdout + r.stderr
        assert r.returncode == 0, out
        assert "compliant with FMI-2.0" in out and "No semantic error" in out
        assert "ERROR" not in out


def test_parameters_are_tunable_at_initialisation(fmus):
    """Setting rho and Fc in the FMU gives the law with those values (Dahl: exact)."""
    from fmpy import simulate_fmu
    from hystmech.components import Dahl

    t, u = make_input(0.02, 2.0, T=0.3, n=301)
    res = simulate_fmu(str(fmus["Dahl"]), fmi_type="CoSimulation", input=_input_array(t, u),
                       output=["F"], step_size=1e-3, output_interval=1e-3, stop_time=t[-1],
                       start_values={"rho": 50.0, "Fc": 3.0, "w0": -0.5})
    ref = hystmech.drive(Dahl(rho=50.0, Fc=3.0, w0=-0.5), t, u)
    assert np.max(np.abs(res["F"] - ref.force)) <= 1e-12 * 3.0


def test_sum_parameters_are_named_by_part_and_tunable(fmus):
    """A SumElement FMU: parameters part<i>.<name>; setting part0.rho, part1.k gives the
    sum of the laws with those values (Dahl + spring: exact updates, so to rounding)."""
    from fmpy import read_model_description, simulate_fmu
    from hystmech.components import Dahl, LinearSpring

    md = read_model_description(str(fmus["SumDahlSpring"]))
    names = {v.name for v in md.modelVariables}
    assert {"part0.rho", "part0.Fc", "part0.w0", "part1.k", "part1.u0", "part0.w"} <= names
    t, u = make_input(0.02, 2.0, T=0.3, n=301)
    res = simulate_fmu(str(fmus["SumDahlSpring"]), fmi_type="CoSimulation",
                       input=_input_array(t, u), output=["F"], step_size=1e-3,
                       output_interval=1e-3, stop_time=t[-1],
                       start_values={"part0.rho": 50.0, "part1.k": -7.0})
    ref = hystmech.drive(Dahl(rho=50.0, Fc=2.0, w0=0.1) + LinearSpring(k=-7.0, u0=1e-3), t, u)
    assert np.max(np.abs(res["F"] - ref.force)) <= 1e-12 * np.max(np.abs(ref.force))
    with pytest.raises(Exception):
        simulate_fmu(str(fmus["SumDahlSpring"]), fmi_type="CoSimulation", stop_time=0.01,
                     start_values={"part0.rho": -1.0})


def test_fmu_rejects_bad_parameter_with_the_law_message(fmus):
    from fmpy import simulate_fmu

    with pytest.raises(Exception):
        simulate_fmu(str(fmus["Dahl"]), fmi_type="CoSimulation", stop_time=0.01,
                     start_values={"rho": -1.0})


def test_get_set_state_rolls_back(fmus):
    """fmi2GetFMUstate/SetFMUstate: repeating a step from a saved state is exact, and
    serialisation round-trips."""
    md, s = open_fmi2(fmus["Dahl"], "s")
    vr = {v.name: v.valueReference for v in md.modelVariables}
    s.setReal([vr["u"], vr["v"]], [0.0, 0.05])
    s.doStep(0.0, 0.01)
    st = s.getFMUstate()
    blob = s.serializeFMUstate(st)
    s.doStep(0.01, 0.01)
    F1 = s.getReal([vr["F"]])[0]
    s.setFMUstate(st)
    s.doStep(0.01, 0.01)
    assert s.getReal([vr["F"]])[0] == F1
    st2 = s.deSerializeFMUstate(blob)
    s.setFMUstate(st2)
    s.doStep(0.01, 0.01)
    assert s.getReal([vr["F"]])[0] == F1
    s.terminate()
    s.freeInstance()


def test_cli_export_and_errors(tmp_path):
    exe = str(BIN / "hystmech")
    out = tmp_path / "dahl.fmu"
    r = subprocess.run([exe, "export-fmu", "Dahl", "--param", "rho=200", "--param", "Fc=2",
                        "-o", str(out)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    from fmpy.validation import validate_fmu

    assert validate_fmu(str(out)) == []
    # bad value: exit 2, one line naming the parameter and its range
    r = subprocess.run([exe, "export-fmu", "Dahl", "--param", "rho=-1", "--param", "Fc=2",
                        "-o", str(tmp_path / "x.fmu")], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "rho must be in (0, inf)" in r.stderr
    # no compiler: a clear error, exit 2
    env = dict(os.environ, CC=str(tmp_path / "no-such-cc"))
    r = subprocess.run([exe, "export-fmu", "Dahl", "--param", "rho=1", "--param", "Fc=2",
                        "-o", str(tmp_path / "y.fmu")], capture_output=True, text=True, env=env)
    assert r.returncode == 2 and "no C compiler found" in r.stderr
    assert not (tmp_path / "y.fmu").exists()
    # from a scenario's [element] table
    r = subprocess.run([exe, "export-fmu", "--scenario", "lugre-example-4", "-o",
                        str(tmp_path / "l.fmu")], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert validate_fmu(str(tmp_path / "l.fmu")) == []


def test_no_compiler_error_from_python(tmp_path, monkeypatch):
    from hystmech.components import Dahl

    monkeypatch.setenv("CC", "/nonexistent/cc")
    with pytest.raises(FMUExportError, match="no C compiler found"):
        export_fmu(Dahl(rho=1.0, Fc=1.0), tmp_path / "d.fmu")


def test_python_callables_cannot_be_exported(tmp_path):
    from hystmech.components import LuGre

    el = LuGre(sigma0=1.0, sigma1=1.0, Fc=1.0, Fs=2.0, vs=1.0, g=lambda v: 1.0 + v * v)
    with pytest.raises(FMUExportError, match="'g' is a Python callable"):
        export_fmu(el, tmp_path / "l.fmu")
    try:
        from hystmech.components import Duhem
    except (ImportError, ValueError):
        return
    el = Duhem(A=10.0, hu=lambda u: 1.0 + u, hl=lambda u: -1.0 + u)
    with pytest.raises(FMUExportError, match="callable"):
        export_fmu(el, tmp_path / "d.fmu")


@pytest.mark.parametrize("name", sorted(CASES))
def test_fmi3_export_valid_and_matches_drive(tmp_path, name):
    """--fmi 3: the same law through the FMI 3.0 boilerplate (fmu/templates/fmi3_model.c)."""
    from fmpy import read_model_description, simulate_fmu
    from fmpy.validation import validate_fmu

    ctor, amp, freq = CASES[name]
    el = ctor()
    path = export_fmu(el, tmp_path / f"{name}3.fmu", fmi_version=3)
    assert validate_fmu(str(path)) == []
    md = read_model_description(str(path))
    assert md.fmiVersion == "3.0" and md.modelExchange is not None
    assert md.coSimulation.canGetAndSetFMUstate
    with zipfile.ZipFile(path) as zf:
        assert f"binaries/x86_64-linux/hystmech_{type(el).__name__}.so" in zf.namelist()
        assert "sources/buildDescription.xml" in zf.namelist()
    t, u = make_input(amp, freq, T=0.3, n=601)
    ref = hystmech.drive(el, t, u)
    dt = t[1] - t[0]
    res = simulate_fmu(str(path), fmi_type="CoSimulation", input=_input_array(t, u),
                       output=["F"], step_size=dt, output_interval=dt, stop_time=t[-1])
    assert np.max(np.abs(res["F"] - ref.force)) <= 1e-6 * np.max(np.abs(ref.force))


def test_log_categories(tmp_path):
    """<LogCategories> (FMI 2.0 and 3.0 descriptions) lists logEvents and the status
    categories; fmi2SetDebugLogging switches them one by one: a Masing ME FMU logs each
    event under logEvents while it is on and not after it is switched off, an unknown
    category is refused, and an error reaches the logger whatever is switched on."""
    from fmpy import extract, read_model_description
    from fmpy.fmi1 import FMICallException
    from fmpy.fmi2 import (FMU2Model, fmi2CallbackAllocateMemoryTYPE, fmi2CallbackFreeMemoryTYPE,
                           fmi2CallbackFunctions, fmi2CallbackLoggerTYPE)
    from hystmech.fmu.export import LOG_CATEGORIES
    import ctypes

    make = CASES["Masing"][0]
    for v in (2, 3):
        p = export_fmu(make(), tmp_path / f"M{v}.fmu", fmi_version=v, platforms="native")
        text = zipfile.ZipFile(p).read("modelDescription.xml").decode()
        assert [n for n, _ in LOG_CATEGORIES] == re.findall(r'<Category name="(\w+)"', text)
    md = read_model_description(str(p.with_name("M2.fmu")))
    cats = []
    cb = fmi2CallbackFunctions()
    cb.logger = fmi2CallbackLoggerTYPE(lambda env, name, st, cat, msg: cats.append(
        (st, cat.decode())))
    libc = ctypes.CDLL(None)
    libc.calloc.restype = ctypes.c_void_p
    cb.allocateMemory = fmi2CallbackAllocateMemoryTYPE(lambda n, s: libc.calloc(n, s))
    cb.freeMemory = fmi2CallbackFreeMemoryTYPE(lambda ptr: libc.free(ctypes.c_void_p(ptr)))
    f = FMU2Model(guid=md.guid, unzipDirectory=extract(str(p.with_name("M2.fmu"))),
                  modelIdentifier=md.modelExchange.modelIdentifier, instanceName="log")
    f.instantiate(callbacks=cb, loggingOn=False)
    f.setDebugLogging(True, ["logEvents"])
    f.setupExperiment(startTime=0.0)
    f.enterInitializationMode()
    f.exitInitializationMode()

    def event(t, u):
        f.enterEventMode()
        f.setTime(t)
        f.setReal([1, 2], [u, 0.1])
        f.newDiscreteStates()
        f.enterContinuousTimeMode()

    f.newDiscreteStates()
    f.enterContinuousTimeMode()
    event(0.1, 1e-5)
    event(0.2, 2e-5)
    assert cats.count((0, "logEvents")) == 3
    f.setDebugLogging(False, ["logEvents"])
    event(0.3, 3e-5)
    assert cats.count((0, "logEvents")) == 3
    with pytest.raises(FMICallException):
        f.setDebugLogging(True, ["logNoSuchThing"])
    with pytest.raises(FMICallException):
        f.setReal([1], [float("nan")])
    assert cats[-1] == (3, "logStatusError") and cats[-2] == (3, "logStatusError")
    f.freeInstance()


def test_display_units(tmp_path):
    """SI units carry display units with their conversion factors (FMI 2.0 and 3.0: a
    value in mm is 1000 × the value in m): read back with fmpy, and the FMUs stay
    valid (fmpy validate)."""
    from fmpy import read_model_description
    from fmpy.validation import validate_fmu

    for v in (2, 3):
        p = export_fmu(CASES["SpringDamper"][0](), tmp_path / f"SD{v}.fmu", fmi_version=v,
                       platforms="native")
        assert validate_fmu(str(p)) == []
        units = {u.name: {d.name: d.factor for d in u.displayUnits}
                 for u in read_model_description(str(p)).unitDefinitions}
        assert units["m"]["mm"] == 1000.0 and units["N"]["kN"] == 1e-3
        assert units["m/s"] == {"mm/s": 1000.0} and units["N/m"]["N/mm"] == 1e-3
