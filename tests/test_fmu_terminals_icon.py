"""Terminals and icons of exported FMUs (issue 34 item 2): FMI 3.0 terminalsAndIcons.xml
valid against the FMI 3.0 schema (fmi3TerminalsAndIcons.xsd as shipped with fmpy), its
flange members the FMU's u, v, F with the sign convention of hystmech's Assembly (checked
by an Assembly run against the closed form); model.png (FMI 2.0 and 3.0) drawn from the
law's loop: a hysteretic law's icon encloses an area, a spring's is a line."""
import re
import zipfile
from pathlib import Path

import numpy as np
import pytest

from hystmech.components import get_element_class
from hystmech.fmu import export_fmu
from hystmech.fmu.icon import FILL, ICON_PX

LAWS = {
    "Masing": lambda: get_element_class("Masing")(k=1e5, k0=1e3, alpha=50.0, F0=1.0, c=10.0),
    "Preisach": lambda: get_element_class("Preisach")(
        a1=[-0.004, -0.002, 0.0], a2=[-0.001, 0.003, 0.002], weights=[3.0, 5.0, 2.0],
        initial=-1, max_depth=8),
    "Dahl": lambda: get_element_class("Dahl")(rho=200.0, Fc=2.0),
    "LinearSpring": lambda: get_element_class("LinearSpring")(k=1e3, u0=0.0),
}


@pytest.fixture(scope="module")
def fmus(tmp_path_factory):
    d = tmp_path_factory.mktemp("icons")
    return {(n, v): export_fmu(mk(), d / f"{n}{v}.fmu", fmi_version=v)
            for n, mk in LAWS.items() for v in (2, 3)}


def _schema():
    import fmpy
    from lxml import etree

    xsd = Path(fmpy.__file__).parent / "schema" / "fmi3" / "fmi3TerminalsAndIcons.xsd"
    return etree.XMLSchema(etree.parse(str(xsd)))


@pytest.mark.parametrize("name", sorted(LAWS))
def test_fmi3_terminals_valid_and_name_the_flange_variables(fmus, name):
    from fmpy.validation import validate_fmu
    from lxml import etree

    p = fmus[name, 3]
    with zipfile.ZipFile(p) as zf:
        doc = etree.fromstring(zf.read("terminalsAndIcons/terminalsAndIcons.xml"))
        md = etree.fromstring(zf.read("modelDescription.xml"))
    schema = _schema()
    assert schema.validate(doc), schema.error_log
    causality = {e.get("name"): e.get("causality") for e in md.find("ModelVariables")}
    (term,) = doc.iter("Terminal")
    members = {m.get("variableName"): m.get("memberName")
               for m in term.iter("TerminalMemberVariable")}
    assert members == {"u": "s_rel", "v": "v_rel", "F": "f"}
    assert [causality[v] for v in ("u", "v", "F")] == ["input", "input", "output"]
    assert "u = s_a - s_b" in term.get("description")
    assert "-F on flange a, +F on flange b" in term.get("description")
    assert validate_fmu(str(p)) == []


def test_the_terminal_sign_convention_is_the_assemblys():
    """The convention the terminal states (u = s_a − s_b, −F on a) is the Assembly's: a
    mass m at s_a = x0 > 0 on a spring F = k·u to ground oscillates as x0·cos(ωt),
    ω² = k/m (the spring pulls back: −F on a)."""
    from hystmech.systems import Assembly, simulate

    k, m, x0 = 1e3, 2.0, 1e-3
    asm = (Assembly().add_dof("a", mass=m, x0=x0)
           .add_element("spring", get_element_class("LinearSpring")(k=k, u0=0.0), "a"))
    t = np.linspace(0.0, 0.2, 41)
    x = simulate(asm, (0.0, 0.2), method="RK45", t_eval=t, rtol=1e-10, atol=1e-14,
                 energy=False).x("a")
    assert np.max(np.abs(x - x0 * np.cos(np.sqrt(k / m) * t))) <= 1e-7 * x0


def _fill_fraction(png_bytes, tmp_path):
    import matplotlib.image as mpimg

    f = tmp_path / "icon.png"
    f.write_bytes(png_bytes)
    img = mpimg.imread(str(f))
    assert img.shape[:2] == (ICON_PX, ICON_PX)
    rgb = np.array([int(FILL[i:i + 2], 16) / 255 for i in (1, 3, 5)])
    near = np.all(np.abs(img[..., :3] - rgb) < 0.02, axis=-1) & (img[..., 3] > 0.9)
    return near.mean()


@pytest.mark.parametrize("version", [2, 3])
def test_icon_is_the_laws_loop(fmus, tmp_path, version):
    """model.png in every FMU (FMI 3.0: also terminalsAndIcons/icon.png, the same
    image): the filled interior of the loop covers 5 % of the icon or more for Masing,
    Preisach and Dahl (measured 42 %, 9 %, 53 %), nothing for a linear spring (no
    hysteresis: a line)."""
    frac = {}
    for name in LAWS:
        with zipfile.ZipFile(fmus[name, version]) as zf:
            png = zf.read("model.png")
            if version == 3:
                assert zf.read("terminalsAndIcons/icon.png") == png
        frac[name] = _fill_fraction(png, tmp_path)
    assert frac["LinearSpring"] < 1e-3, frac
    for name in ("Masing", "Preisach", "Dahl"):
        assert frac[name] > 0.05, frac


@pytest.fixture(scope="module")
def rot_fmus(tmp_path_factory):
    d = tmp_path_factory.mktemp("rot")
    return {(n, v): export_fmu(LAWS[n](), d / f"{n}{v}.fmu", fmi_version=v, flange="rotational")
            for n in ("Masing", "LinearSpring") for v in (2, 3)}


@pytest.mark.parametrize("name", ["Masing", "LinearSpring"])
def test_rotational_terminal_for_a_torsion_law(rot_fmus, name):
    """export_fmu(..., flange="rotational"): the FMI 3.0 terminal is a rotational
    flange pair (valid against fmi3TerminalsAndIcons.xsd) whose members phi_rel, w_rel,
    tau are the FMU's u, v, F with the Assembly's sign convention; u, v, F in rad,
    rad/s, N.m and the parameters' units carried over (stiffness N.m/rad, viscous
    coefficient N.m.s/rad, F0 in N.m) in FMI 2.0 and 3.0; validate_fmu finds nothing."""
    from fmpy import read_model_description
    from fmpy.validation import validate_fmu
    from lxml import etree

    with zipfile.ZipFile(rot_fmus[name, 3]) as zf:
        doc = etree.fromstring(zf.read("terminalsAndIcons/terminalsAndIcons.xml"))
    schema = _schema()
    assert schema.validate(doc), schema.error_log
    (term,) = doc.iter("Terminal")
    assert term.get("terminalKind") == "hystmech.Mechanics.Rotational.RelativeFlanges"
    assert {m.get("variableName"): m.get("memberName")
            for m in term.iter("TerminalMemberVariable")} == {"u": "phi_rel", "v": "w_rel",
                                                                "F": "tau"}
    assert "u = phi_a - phi_b [rad]" in term.get("description")
    assert "-F on flange a, +F on flange b" in term.get("description")
    expect = {"u": "rad", "v": "rad/s", "F": "N.m", "k": "N.m/rad"}
    if name == "Masing":
        expect.update(c="N.m.s/rad", F0="N.m", alpha="N.m", w="rad")
    for v in (2, 3):
        units = {x.name: x.unit for x in read_model_description(
            str(rot_fmus[name, v])).modelVariables}
        assert {k: units[k] for k in expect} == expect
        assert validate_fmu(str(rot_fmus[name, v])) == []
    with pytest.raises(ValueError, match="flange must be one of 'translational', "
                                         "'rotational' \\(got 'axial'\\)"):
        export_fmu(LAWS[name](), rot_fmus[name, 3].parent / "x.fmu", flange="axial")


def test_rotational_fmu_drives_an_inertia_as_the_terminal_states():
    """The sign the rotational terminal states (u = phi_a - phi_b, -tau on flange a): the
    exported torsion spring (FMI 3.0, tau = k_t·u) imported as an element on an inertia J
    at phi_a = phi0 twists back, phi0·cos(ωt) with ω² = k_t/J (closed form), in hystmech's
    Assembly (the connector the terminal describes)."""
    from hystmech.fmu import FMUElement
    from hystmech.systems import Assembly, simulate
    import tempfile

    kt, J, phi0 = 40.0, 0.01, 0.05
    with tempfile.TemporaryDirectory() as d:
        p = export_fmu(get_element_class("LinearSpring")(k=kt, u0=0.0), Path(d) / "t.fmu",
                       fmi_version=3, flange="rotational")
        fe = FMUElement(p)
        try:
            asm = Assembly().add_dof("a", mass=J, x0=phi0).add_element("torsion", fe, "a")
            t = np.linspace(0.0, 0.1, 41)
            phi = simulate(asm, (0.0, 0.1), t_eval=t, energy=False).x("a")
        finally:
            fe.close()
    # the first-order projection scheme (default h = 1e-5 s) is 2.0e-3·phi0 off after
    # one period (measured); the opposite sign would grow as phi0·cosh(ωt), 280·phi0
    assert np.max(np.abs(phi - phi0 * np.cos(np.sqrt(kt / J) * t))) <= 3e-3 * phi0
