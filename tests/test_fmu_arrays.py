"""FMI 3.0 array parameters (issue 34 item 3): Preisach a1, a2, weights and Maxwell-slip
k, delta, z0 are array variables (one value reference, <Dimension>), set by fmpy as
arrays; FMI 2.0 keeps the scalars name[i]. Checked against the exact relay operator and
against FMUs built with the new values."""
import zipfile

import numpy as np
import pytest

import hystmech
from hystmech.components import get_element_class
from hystmech.fmu import FMUElement, FMUError, export_fmu

import fmu_references as ref

A1 = np.array([-0.004, -0.002, 0.0])
A2 = np.array([-0.001, 0.003, 0.002])
W = np.array([3.0, 5.0, 2.0])


def _preisach(weights=W, a1=A1):
    return get_element_class("Preisach")(a1=a1, a2=A2, weights=weights, initial=-1,
                                         max_depth=8)


def _maxwell(k=(1e4, 2e4, 3e4)):
    return get_element_class("MaxwellSlip")(k=list(k), delta=[1e-4, 2e-4, 3e-4],
                                            z0=[0.0, 1e-4, 0.0])


@pytest.fixture(scope="module")
def fmus(tmp_path_factory):
    d = tmp_path_factory.mktemp("arrays")
    return {"P3": export_fmu(_preisach(), d / "P3.fmu", fmi_version=3),
            "P2": export_fmu(_preisach(), d / "P2.fmu", fmi_version=2),
            "M3": export_fmu(_maxwell(), d / "M3.fmu", fmi_version=3),
            "d": d}


def test_array_parameters_are_fmi3_arrays(fmus):
    from fmpy import read_model_description
    from fmpy.validation import validate_fmu

    for key, arrays in (("P3", {"a1": A1, "a2": A2, "weights": W}),
                        ("M3", {"k": [1e4, 2e4, 3e4], "delta": [1e-4, 2e-4, 3e-4],
                                "z0": [0.0, 1e-4, 0.0]})):
        md = read_model_description(str(fmus[key]))
        byname = {v.name: v for v in md.modelVariables}
        for name, val in arrays.items():
            v = byname[name]
            # the length is the structural parameter's value (fmu/fmi3_structural.py)
            (dim,) = v.dimensions
            assert dim.start is None and dim.variable.causality == "structuralParameter"
            assert int(dim.variable.start) == len(val) and v.shape == (len(val),)
            assert v.causality == "parameter"
            assert np.array_equal(np.array(v.start.split(), dtype=float), val)
            assert f"{name}[0]" not in byname
        assert validate_fmu(str(fmus[key])) == []
    names = {v.name for v in read_model_description(str(fmus["P2"])).modelVariables}
    assert {"weights[0]", "weights[2]"} <= names and "weights" not in names


def _sine_input(t, A, om):
    sig = np.zeros(t.size, dtype=[("time", float), ("u", float), ("v", float)])
    sig["time"], sig["u"], sig["v"] = t, A * np.sin(om * t), A * om * np.cos(om * t)
    return sig


def test_fmpy_sets_array_start_values(fmus):
    """fmpy's simulate_fmu(start_values={"weights": w, "a1": a}) on the FMI 3.0 FMU gives
    the co-simulation of an FMU exported with those values, bitwise, and not the
    default's; Maxwell-slip k likewise."""
    from fmpy import simulate_fmu

    t = np.linspace(0.0, 0.65, 261)
    sig = _sine_input(t, 0.0035, 2 * np.pi * 2)
    w2, a1 = np.array([1.0, -2.0, 4.0]), np.array([-0.005, -0.0025, -0.0005])

    def run(path, sv):
        return simulate_fmu(str(path), fmi_type="CoSimulation", input=sig, output=["F"],
                            output_interval=t[1] - t[0], stop_time=t[-1], start_values=sv)["F"]
    built = export_fmu(_preisach(w2, a1), fmus["d"] / "P3w.fmu", fmi_version=3)
    F_set = run(fmus["P3"], {"weights": w2, "a1": a1})
    assert np.array_equal(F_set, run(built, {}))
    assert np.max(np.abs(F_set - run(fmus["P3"], {}))) > 1.0
    k2 = [5e3, 4e4, 1e4]
    builtm = export_fmu(_maxwell(k2), fmus["d"] / "M3k.fmu", fmi_version=3)
    sigm = _sine_input(t, 5e-4, 2 * np.pi * 2)
    Fm = simulate_fmu(str(fmus["M3"]), fmi_type="CoSimulation", input=sigm, output=["F"],
                      output_interval=t[1] - t[0], stop_time=t[-1],
                      start_values={"k": np.array(k2)})["F"]
    Fb = simulate_fmu(str(builtm), fmi_type="CoSimulation", input=sigm, output=["F"],
                      output_interval=t[1] - t[0], stop_time=t[-1])["F"]
    assert np.array_equal(Fm, Fb)


def test_fmu_element_array_parameter_gives_the_exact_operator(fmus):
    """FMUElement(parameters={"weights": w}) of the FMI 3.0 FMU under drive: the exact
    relay operator with those weights (fmu_references.preisach), to round-off."""
    A, f = 0.0035, 2.0
    om = 2 * np.pi * f
    t = np.linspace(0.0, 1.3 / f, 261)
    w2 = np.array([1.0, -2.0, 4.0])
    fe = FMUElement(fmus["P3"], parameters={"weights": w2})
    try:
        F = hystmech.drive(fe, t, A * np.sin(om * t)).force
    finally:
        fe.close()
    assert np.max(np.abs(F - ref.preisach(t, A, om, A1, A2, w2, -1, 0.0, 0.0))) <= 1e-12
    with pytest.raises(FMUError, match="array parameter 'weights'.*compiled=None or False"):
        FMUElement(fmus["P3"], parameters={"weights": w2}, compiled=True)


def test_array_calls_checked_like_scalars(fmus):
    """fmi3SetFloat64/GetFloat64 on an array value reference: all values round-trip; too
    few values, or values the law refuses (a1 not below a2), are refused with a message
    naming the reason."""
    from fmpy import extract, read_model_description
    from fmpy.fmi3 import FMU3Slave

    path = str(fmus["P3"])
    md = read_model_description(path)
    vr = {v.name: v.valueReference for v in md.modelVariables}
    msgs = []
    f = FMU3Slave(guid=md.guid, unzipDirectory=extract(path),
                  modelIdentifier=md.coSimulation.modelIdentifier, instanceName="a")
    f.instantiate(logMessage=lambda env, st, cat, m: msgs.append(m.decode()))
    f.enterInitializationMode(startTime=0.0)
    f.setFloat64([vr["weights"]], [7.0, 8.0, 9.0])
    assert f.getFloat64([vr["weights"]], nValues=3) == [7.0, 8.0, 9.0]
    with pytest.raises(Exception):
        f.setFloat64([vr["weights"]], [1.0, 2.0])
    assert any("nValues = 2, but the value references hold 3 values" in m for m in msgs)
    f.reset()  # an error leaves the instance in the error state
    f.enterInitializationMode(startTime=0.0)
    # a1 = 0 is not below a2[0] = -0.001: the law's own check refuses the whole array
    with pytest.raises(Exception):
        f.setFloat64([vr["a1"]], [0.0, 0.0, 0.0])
    assert any("a2 must be in (a1, inf)" in m for m in msgs), msgs[-3:]
    f.freeInstance()
