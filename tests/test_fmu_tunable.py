"""Tunable parameters (issue 20 item 5): parameters that size nothing and bound no state
(viscous coefficients, spring stiffnesses, friction levels; fmu/metadata.py) have
variability "tunable" and can be changed at a communication point (co-simulation) or
in event mode (model exchange); the state carries on and the new value acts from then
on. Checked with fmpy against the law's closed form on drive's states; the others stay
fixed after initialisation, and a tunable value outside its range is refused with the
instance unchanged."""
import re
import zipfile

import numpy as np
import pytest

import hystmech
from hystmech.fmu import export_fmu

from fmu_probe import open_fmi2, to_continuous_time
from test_fmu_cases import available, make_input

CASES = available()


def test_mr_damper_coefficients_change_mid_run(tmp_path):
    """ViscousDahl (an MR damper whose coil current changes at t = 0.1 s): kx and kw
    set at that communication point; F = kx·v + kw·w (eqs. (10)-(12)) with w from drive
    (w does not depend on kx, kw) and the coefficients in force at each point, to 1e-12."""
    from fmpy.fmi1 import FMICallException

    make, amp, freq = CASES["ViscousDahl"]
    el = make()
    path = export_fmu(el, tmp_path / "VD.fmu", platforms="native")
    text = zipfile.ZipFile(path).read("modelDescription.xml").decode()
    tun = set(re.findall(r'name="([^"]+)"[^>]*variability="tunable"', text))
    assert tun == {"kx", "kw"}
    md, f = open_fmi2(path, "tu")
    vr = {v.name: v.valueReference for v in md.modelVariables}
    t, u = make_input(amp, freq, T=0.2, n=201)
    v = np.append(np.diff(u) / np.diff(t), 0.0)  # chord slope of the segment ahead
    kx = np.where(t < 0.1 - 1e-12, 1e3, 2.5e3)
    kw = np.where(t < 0.1 - 1e-12, 50.0, 120.0)
    F = np.empty(t.size)
    for k in range(t.size):
        if k and kx[k] != kx[k - 1]:
            f.setReal([vr["kx"], vr["kw"]], [kx[k], kw[k]])
        f.setReal([1, 2], [u[k], v[k]])
        F[k] = f.getReal([3])[0]
        if k + 1 < t.size:
            f.doStep(t[k], t[k + 1] - t[k])
    with pytest.raises(FMICallException):  # out of range: refused, nothing changes
        f.setReal([vr["kw"]], [-1.0])
    assert f.getReal([vr["kw"]])[0] == 120.0
    with pytest.raises(FMICallException):  # rho is fixed
        f.setReal([vr["rho"]], [600.0])
    f.freeInstance()
    w = hystmech.drive(el, t, u).state[:, 0]
    ref = kx * v + kw * w
    np.testing.assert_allclose(F, ref, rtol=0, atol=1e-12 * np.abs(ref).max())
    assert np.abs(F[100:] - (1e3 * v + 50.0 * w)[100:]).max() > 10.0  # the change shows


def test_tunable_in_event_mode_only_for_model_exchange(tmp_path):
    """Masing in model exchange: c is tunable in event mode (F changes by Δc·v, eq. (11c)),
    refused in continuous-time mode; k (which sets η, the bound of w) is fixed."""
    from fmpy.fmi1 import FMICallException

    el = CASES["Masing"][0]()
    path = export_fmu(el, tmp_path / "M.fmu", platforms="native")
    md, f = open_fmi2(path, "me", me=True, start={"u": 1e-5, "v": 0.2})
    vr = {v.name: v.valueReference for v in md.modelVariables}
    F1 = f.getReal([3])[0]
    f.setReal([vr["c"]], [30.0])
    F2 = f.getReal([3])[0]
    assert F2 - F1 == pytest.approx((30.0 - el.params["c"]) * 0.2, rel=1e-12)
    with pytest.raises(FMICallException):
        f.setReal([vr["k"]], [2e5])
    to_continuous_time(f)
    with pytest.raises(FMICallException):
        f.setReal([vr["c"]], [40.0])
    assert f.getReal([vr["c"]])[0] == 30.0
    f.freeInstance()
