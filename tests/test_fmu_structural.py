"""FMI 3.0 structural parameters (issue 34 item 3, fmu/fmi3_structural.py): the length of
Maxwell-slip's k, delta, z0 (and states Z) and of the discrete Preisach's a1, a2, weights
is a <UInt64 causality="structuralParameter"> the arrays' <Dimension> refer to. Driven
through fmpy's low-level FMI 3.0 API (instantiate, Configuration Mode, set the length,
set the arrays at that length, step) and checked against independent truths: the exact
stop operators of the Maxwell-slip elements and the exact relay operator
(fmu_references.preisach), and against the native element of that size under drive.
FMI 2.0 FMUs keep the exported sizes."""
import numpy as np
import pytest

import hystmech
from hystmech.components import get_element_class
from hystmech.fmu import FMUExportError, export_fmu

import fmu_references as ref

CAP = 8
K3, D3 = [1e4, 2e4, 3e4], [1e-4, 2e-4, 3e-4]
A1 = [-0.004, -0.002, 0.0]
A2 = [-0.001, 0.003, 0.002]
W = [3.0, 5.0, 2.0]


def _maxwell(k=K3, delta=D3):
    return get_element_class("MaxwellSlip")(k=list(k), delta=list(delta))


def _preisach(a1=A1, a2=A2, w=W):
    return get_element_class("Preisach")(a1=list(a1), a2=list(a2), weights=list(w),
                                         initial=-1, max_depth=8)


@pytest.fixture(scope="module")
def fmus(tmp_path_factory):
    d = tmp_path_factory.mktemp("structural")
    return {"M": export_fmu(_maxwell(), d / "M.fmu", fmi_version=3, max_size=CAP),
            "P": export_fmu(_preisach(), d / "P.fmu", fmi_version=3, max_size=CAP),
            "M2": export_fmu(_maxwell(), d / "M2.fmu", fmi_version=2)}


class _Inst:
    """One co-simulation instance through fmpy's low-level FMI 3.0 API, its log kept."""

    def __init__(self, path):
        from fmpy import extract, read_model_description
        from fmpy.fmi3 import FMU3Slave

        md = read_model_description(str(path))
        self.vr = {v.name: v.valueReference for v in md.modelVariables}
        self.msgs = []
        self.f = FMU3Slave(guid=md.guid, unzipDirectory=extract(str(path)),
                           modelIdentifier=md.coSimulation.modelIdentifier, instanceName="s")
        self.f.instantiate(logMessage=lambda env, st, cat, m: self.msgs.append(m.decode()))

    def resize(self, name, n):
        self.f.enterConfigurationMode()
        self.f.setUInt64([self.vr[name]], [n])
        self.f.exitConfigurationMode()

    def run(self, arrays, t, u, v):
        for name, val in arrays.items():
            self.f.setFloat64([self.vr[name]], list(val))
        self.f.enterInitializationMode(startTime=0.0)
        self.f.exitInitializationMode()
        F = np.empty_like(t)
        for i in range(t.size):
            self.f.setFloat64([self.vr["u"], self.vr["v"]], [u[i], v[i]])
            F[i] = self.f.getFloat64([self.vr["F"]])[0]
            if i + 1 < t.size:
                self.f.doStep(t[i], t[i + 1] - t[i])
        return F

    def close(self):
        self.f.freeInstance()


def _stops(u, k, delta):
    """Maxwell-slip as its definition: each element a stop operator Z_i (Z_i follows u,
    clipped to [-Δ_i, Δ_i]), F = Σ k_i Z_i — exact on every piecewise-linear input."""
    k, delta = np.asarray(k), np.asarray(delta)
    Z = np.zeros(k.size)
    out = np.empty(u.size)
    for i in range(u.size):
        if i:
            Z = np.clip(Z + (u[i] - u[i - 1]), -delta, delta)
        out[i] = k @ Z
    return out


def _sine(A, f=2.0, n=401, periods=1.5):
    """Samples of A sin(ωt) and the chord slopes v_k = (u_{k+1} − u_k)/h: the FMU then
    follows the piecewise-linear input, as drive() and the references take it."""
    om = 2 * np.pi * f
    t = np.linspace(0.0, periods / f, n)
    u = A * np.sin(om * t)
    v = np.diff(u, append=u[-1]) / (t[1] - t[0])
    return t, u, v, om


def test_structural_parameter_declared_and_valid(fmus):
    """The length is a UInt64 structural parameter (start: the exported 3, min 1, max the
    capacity 8, variability fixed); the sized arrays' only <Dimension> refers to it;
    fmpy's validate_fmu finds no problem."""
    import zipfile

    from fmpy import read_model_description
    from fmpy.validation import validate_fmu
    from lxml import etree

    for key, name, arrays in (("M", "n_elements", ("k", "delta", "z0", "Z")),
                              ("P", "n_relays", ("a1", "a2", "weights"))):
        md = read_model_description(str(fmus[key]))
        by = {v.name: v for v in md.modelVariables}
        sp = by[name]
        assert (sp.type, sp.causality, sp.variability) == ("UInt64", "structuralParameter",
                                                           "fixed")
        assert int(sp.start) == 3
        with zipfile.ZipFile(fmus[key]) as zf:
            (el,) = [e for e in etree.fromstring(zf.read("modelDescription.xml")).iter("UInt64")]
        assert (el.get("min"), el.get("max")) == ("1", str(CAP))
        for a in arrays:
            (dim,) = by[a].dimensions
            assert dim.valueReference == sp.valueReference and dim.start is None
            assert by[a].shape == (3,)
        assert validate_fmu(str(fmus[key])) == []


def test_fmi2_keeps_the_exported_sizes(fmus):
    """FMI 2.0 has no structural parameters: the scalars k[0..2] as exported, no
    length variable; asking for a capacity is refused, naming max_size."""
    from fmpy import read_model_description

    names = {v.name for v in read_model_description(str(fmus["M2"])).modelVariables}
    assert {"k[0]", "k[2]"} <= names and "k[3]" not in names and "n_elements" not in names
    with pytest.raises(FMUExportError, match="max_size needs fmi_version=3"):
        export_fmu(_maxwell(), fmus["M2"].parent / "x.fmu", fmi_version=2, max_size=CAP)
    with pytest.raises(FMUExportError, match=r"max_size must be an integer in \[3, 1024\]"):
        export_fmu(_maxwell(), fmus["M2"].parent / "x.fmu", fmi_version=3, max_size=2)
    with pytest.raises(FMUExportError, match="Dahl has none"):
        export_fmu(get_element_class("Dahl")(rho=200.0, Fc=2.0),
                   fmus["M2"].parent / "x.fmu", fmi_version=3, max_size=CAP)


@pytest.mark.parametrize("n", [5, CAP, 2, 1])
def test_maxwell_slip_resized_is_the_law_of_that_size(fmus, n):
    """Grown to 5 and 8 (the capacity) or shrunk to 2 and 1 in Configuration Mode, the
    arrays set at that length: F equals the exact stop operators of those n elements
    and the native MaxwellSlip of that size under drive, to round-off; the state array
    Z has n values, each within its ±Δ_i."""
    k = [1e4 * (1 + i) for i in range(n)]
    delta = [1e-4 * (1 + 0.5 * i) for i in range(n)]
    t, u, v, _ = _sine(8e-4)
    s = _Inst(fmus["M"])
    try:
        s.resize("n_elements", n)
        assert s.f.getUInt64([s.vr["n_elements"]]) == [n]
        F = s.run({"k": k, "delta": delta, "z0": [0.0] * n}, t, u, v)
        Z = np.array(s.f.getFloat64([s.vr["Z"]], nValues=n))
    finally:
        s.close()
    scale = np.abs(_stops(u, k, delta)).max()
    assert np.max(np.abs(F - _stops(u, k, delta))) <= 1e-12 * scale
    native = hystmech.drive(_maxwell(k, delta), t, u)
    assert np.max(np.abs(F - native.force)) <= 1e-12 * scale
    assert np.all(np.abs(Z) <= np.array(delta) * (1 + 1e-12))
    np.testing.assert_allclose(Z, native.state[-1], rtol=0, atol=1e-15)


@pytest.mark.parametrize("n", [6, 2])
def test_preisach_resized_is_the_exact_relay_operator(fmus, n):
    """The discrete Preisach FMU resized to n relays (thresholds and weights set at that
    length) gives the exact relay operator with those relays (fmu_references.preisach)
    and the native Preisach of that size under drive."""
    rng = np.random.default_rng(n)
    a1 = np.sort(rng.uniform(-0.004, 0.001, n))
    a2 = a1 + rng.uniform(5e-4, 3e-3, n)
    w = rng.uniform(0.5, 5.0, n)
    A = 0.0035
    t, u, v, om = _sine(A, n=261, periods=1.3)
    s = _Inst(fmus["P"])
    try:
        s.resize("n_relays", n)
        F = s.run({"a1": a1, "a2": a2, "weights": w}, t, u, v)
    finally:
        s.close()
    exact = ref.preisach(t, A, om, a1, a2, w, -1, 0.0, 0.0)
    assert np.max(np.abs(F - exact)) <= 1e-12
    assert np.max(np.abs(F - hystmech.drive(_preisach(a1, a2, w), t, u).force)) <= 1e-12


def test_sizes_out_of_range_and_calls_out_of_place_are_refused(fmus):
    """0 and capacity + 1 are refused with a message naming the range and the value; the
    length cannot be set outside Configuration Mode, and nothing but the structural
    parameter can be set inside it; arrays of the old length after a resize are refused
    (nValues); every refusal leaves the length as it was."""
    s = _Inst(fmus["M"])
    f, vr = s.f, s.vr
    try:
        with pytest.raises(Exception):  # not in Configuration Mode
            f.setUInt64([vr["n_elements"]], [4])
        assert "set in configuration mode only" in s.msgs[-1]
        f.enterConfigurationMode()
        for bad in (0, CAP + 1):
            with pytest.raises(Exception):
                f.setUInt64([vr["n_elements"]], [bad])
            assert f"must be in [1, {CAP}]" in s.msgs[-1] and f"(got {bad})" in s.msgs[-1]
        assert f.getUInt64([vr["n_elements"]]) == [3]
        with pytest.raises(Exception):
            f.setFloat64([vr["k"]], K3)
        assert "not allowed in configuration mode" in s.msgs[-1]
        with pytest.raises(Exception):
            f.doStep(0.0, 1e-3)
        f.setUInt64([vr["n_elements"]], [5])
        f.exitConfigurationMode()
        # grown entries repeat the last value (a valid law until the importer sets them)
        assert f.getFloat64([vr["k"]], nValues=5) == K3 + [K3[-1]] * 2
        f.enterInitializationMode(startTime=0.0)
        with pytest.raises(Exception):  # sizes are fixed once initialization starts
            f.enterConfigurationMode()
        assert "not allowed in initialization mode" in s.msgs[-1]
        with pytest.raises(Exception):
            f.setFloat64([vr["k"]], K3)
        assert "nValues = 3, but the value references hold 5 values" in s.msgs[-1]
    finally:
        s.close()


def test_fmu_element_sets_the_length_before_the_arrays(fmus):
    """FMUElement(parameters={"n_elements": 6, "k": ..., ...}) configures the length
    (also again after the restart a second drive makes) and equals the native law of
    six elements and its exact stop operators; a length beyond the capacity is refused
    with the FMU's message."""
    from hystmech.fmu import FMUElement, FMUError

    k = [1e4, 3e4, 2e4, 5e4, 4e4, 6e4]
    delta = [1e-4, 2e-4, 1.5e-4, 3e-4, 2.5e-4, 4e-4]
    t, u, _, _ = _sine(8e-4)
    fe = FMUElement(fmus["M"], parameters={"n_elements": 6, "k": k, "delta": delta,
                                           "z0": [0.0] * 6})
    try:
        runs = [hystmech.drive(fe, t, u).force for _ in range(2)]
    finally:
        fe.close()
    exact = _stops(u, k, delta)
    for F in runs:
        assert np.max(np.abs(F - exact)) <= 1e-12 * np.abs(exact).max()
    assert np.max(np.abs(runs[0] - hystmech.drive(_maxwell(k, delta), t, u).force)) <= \
        1e-12 * np.abs(exact).max()
    with pytest.raises(FMUError, match=rf"n_elements.*must be in \[1, {CAP}\].*got 9"):
        FMUElement(fmus["M"], parameters={"n_elements": 9})


def test_fmu_state_carries_the_length_and_corrupt_lengths_are_refused(fmus):
    """A serialized FMU state of a resized instance (its last field the length, 5)
    restores that length and those states into an instance of the exported length; a
    state whose length is 0, beyond the capacity or not an integer is refused as
    corrupted, with a message."""
    import struct

    k, delta = [1e4, 2e4, 3e4, 4e4, 5e4], [1e-4, 2e-4, 3e-4, 4e-4, 5e-4]
    t, u, v, _ = _sine(8e-4, n=41, periods=0.2)
    s, s2 = _Inst(fmus["M"]), _Inst(fmus["M"])
    try:
        s.resize("n_elements", 5)
        s.run({"k": k, "delta": delta}, t, u, v)
        Z = s.f.getFloat64([s.vr["Z"]], nValues=5)
        assert max(abs(z) for z in Z) > 0.5e-4
        b = bytes(s.f.serializeFMUState(s.f.getFMUState()))
        assert struct.unpack("<d", b[-8:]) == (5.0,)
        g = s2.f
        g.enterInitializationMode(startTime=0.0)
        g.exitInitializationMode()
        g.setFMUState(g.deserializeFMUState(b))
        assert g.getUInt64([s2.vr["n_elements"]]) == [5]
        assert g.getFloat64([s2.vr["Z"]], nValues=5) == Z
        for bad in (0.0, CAP + 1.0, 2.5):
            with pytest.raises(Exception):
                g.deserializeFMUState(b[:-8] + struct.pack("<d", bad))
            assert "corrupted state: structural parameter out of range" in s2.msgs[-1]
    finally:
        s.close()
        s2.close()


def test_default_capacity_keeps_the_exported_table(tmp_path):
    """Without max_size the capacity is the exported length and the Preisach table keeps
    its exported size (distinct thresholds of the export: a1 two values, a2 two): two
    relays within it give the exact relay operator; two relays with more distinct
    thresholds than the table holds are refused with the law's message."""
    p = export_fmu(_preisach(a1=[-0.004, -0.004, -0.001], a2=[0.001, 0.002, 0.002]),
                   tmp_path / "P.fmu", fmi_version=3)
    A = 0.0035
    t, u, v, om = _sine(A, n=261, periods=1.3)
    a1, a2, w = np.array([-0.003, -0.001]), np.array([0.001, 0.002]), np.array([1.0, 2.0])
    s = _Inst(p)
    try:
        s.resize("n_relays", 2)
        F = s.run({"a1": a1, "a2": a2, "weights": w}, t, u, v)
        s.f.reset()
        s.resize("n_relays", 3)
        with pytest.raises(Exception):  # three distinct a1: the table holds two
            s.f.setFloat64([s.vr["a1"]], [-0.004, -0.003, -0.001])
        assert "more distinct thresholds than the FMU was built for" in s.msgs[-1]
    finally:
        s.close()
    assert np.max(np.abs(F - ref.preisach(t, A, om, a1, a2, w, -1, 0.0, 0.0))) <= 1e-12
