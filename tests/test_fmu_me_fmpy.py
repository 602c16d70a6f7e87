"""Model exchange checked with fmpy's own simulation (fmpy.simulate_fmu, CVode), not
only with FMUElement's integrator.

Input: the displacement samples u_k joined by straight lines and the segment velocity
v_k held on each segment (time stamps repeated so that fmpy treats each change of v as
an input event, as drive does). fmpy 0.3.32 sets continuous inputs only at its
communication points, not inside CVode's right-hand side (fmpy/sundials CVodeSolver.f
never calls input.apply), so between two output points the FMU sees u held at its value
at the left point. Laws whose state rate does not involve u (Dahl, LuGre, viscous + Dahl,
Bouc-Wen) are therefore compared with hystmech.drive; the modified Dahl law (rate through
the envelopes h(u)) is compared with the exact solution of that held-input problem (u
held in the input as well, see _held_input).
"""
import math

import numpy as np
import pytest

import hystmech
from hystmech.components import get_element_class
from hystmech.fmu import export_fmu
from test_fmu_cases import CASES, make_input

MDM = dict(Lambda=117355.0, a=7.146e4, b=9.596e2, d=5.322e4, e=3.972e2, F0=600.0)


def _held_v_input(t, u):
    """Rows (t_k, u_k, v_{k-1}) then (t_k, u_k, v_k): u continuous, v stepping at t_k."""
    v = np.diff(u) / np.diff(t)
    sig = np.zeros(2 * t.size - 2, dtype=[("time", float), ("u", float), ("v", float)])
    sig["time"] = np.repeat(t, 2)[1:-1]
    sig["u"] = np.repeat(u, 2)[1:-1]
    sig["v"] = np.repeat(v, 2)
    return sig


def _held_input(t, u):
    """Rows (t_k, u_k, v_k) then (t_{k+1}, u_k, v_k): u and v both held on each segment.
    fmpy interpolates the input inside CVode's root function (fmpy/sundials: g calls
    input.apply(t)) but not inside its right-hand side, so an FMU with event indicators
    and a rate that depends on u sees two different inputs within one CVode step unless
    u is held: this input makes fmpy's problem the held-input one in both."""
    v = np.diff(u) / np.diff(t)
    sig = np.zeros(2 * t.size - 2, dtype=[("time", float), ("u", float), ("v", float)])
    sig["time"] = np.repeat(t, 2)[1:-1]
    sig["u"] = np.repeat(u[:-1], 2)
    sig["v"] = np.repeat(v, 2)
    return sig


def _fmpy_me(path, t, u, rtol, held_u=False, **kw):
    from fmpy import simulate_fmu

    sig = _held_input(t, u) if held_u else _held_v_input(t, u)
    res = simulate_fmu(str(path), fmi_type="ModelExchange", solver="CVode",
                       relative_tolerance=rtol, input=sig, output=["F"],
                       output_interval=t[1] - t[0], stop_time=t[-1], **kw)
    # at an input event fmpy records before and after it: the value before it is the
    # output at t_k with the velocity of the segment that ends there (drive's convention)
    k = np.minimum(np.searchsorted(res["time"], t, side="left"), res.size - 1)
    assert np.allclose(res["time"][k], t, rtol=0, atol=1e-12)
    return res["F"][k]


@pytest.mark.parametrize("name", ["Dahl", "LuGre", "ViscousDahl", "BoucWen"])
def test_fmpy_model_exchange_matches_drive(tmp_path, name):
    ctor, amp, freq = CASES[name]
    el = ctor()
    t, u = make_input(amp, freq, T=0.2, n=201)
    ref = hystmech.drive(el, t, u, rtol=1e-11)
    F = _fmpy_me(export_fmu(el, tmp_path / f"{name}.fmu"), t, u, rtol=1e-9)
    scale = np.max(np.abs(ref.force))
    # CVode at rtol 1e-9 (abstol = rtol·nominal) over 200 restarts at the input events
    # (measured: 1e-8 .. 1e-7 of the force scale)
    assert np.max(np.abs(F - ref.force)) <= 2e-6 * scale


def _mdm_held_exact(t, u, F0, Lambda, a, b, d, e):
    """Exact modified Dahl force with μ = 1 when (u, v) = (u_k, v_k) is held on
    [t_k, t_{k+1}]: Ḟ = Λ|v|(h(u_k) − F), h the active envelope (eqs. (3)-(4))."""
    F = np.empty(t.size)
    F[0] = x = F0
    for k in range(t.size - 1):
        v = (u[k + 1] - u[k]) / (t[k + 1] - t[k])
        h = a * u[k] + b if v >= 0 else d * u[k] + e
        x = h + (x - h) * math.exp(-Lambda * abs(v) * (t[k + 1] - t[k]))
        F[k + 1] = x
    return F


def test_fmpy_model_exchange_modified_dahl_mu1_exact_under_fmpy_input_hold(tmp_path):
    """Modified Dahl, μ = 1: fmpy's run equals the closed-form solution of the problem fmpy
    actually poses (u held between output points) to CVode's tolerance, while that problem
    differs from drive's (linear u) by far more: the gap is fmpy's input hold, not the FMU."""
    el = get_element_class("ModifiedDahl")(mu=1.0, **MDM)
    t, u = make_input(0.01, 5.0, T=0.2, n=201)
    F = _fmpy_me(export_fmu(el, tmp_path / "mdm1.fmu"), t, u, rtol=1e-9, held_u=True)
    exact = _mdm_held_exact(t, u, **MDM)
    scale = np.max(np.abs(exact))
    assert np.max(np.abs(F - exact)) <= 1e-6 * scale
    ref = hystmech.drive(el, t, u, rtol=1e-11)
    assert np.max(np.abs(ref.force - exact)) > 1e-2 * scale


def _mdm_held_exact_mu(t, u, F0, Lambda, mu, a, b, d, e):
    """Exact modified Dahl force for μ < 1 with (u, v) = (u_k, v_k) held on each
    [t_k, t_{k+1}] (fmpy's input): the gap D = h(u_k) − F obeys Ḋ = −Λ|v| sgn(D)|D|^μ,
    so |D|^(1−μ) falls linearly and D stays 0 once it gets there (the non-Lipschitz
    point, Bastien et al. (2007), eqs. (3)-(4))."""
    F = np.empty(t.size)
    F[0] = x = F0
    for k in range(t.size - 1):
        v = (u[k + 1] - u[k]) / (t[k + 1] - t[k])
        h = a * u[k] + b if v >= 0 else d * u[k] + e
        D = h - x
        r = abs(D) ** (1.0 - mu) - (1.0 - mu) * Lambda * abs(v) * (t[k + 1] - t[k])
        x = h - math.copysign(max(r, 0.0) ** (1.0 / (1.0 - mu)), D)
        F[k + 1] = x
    return F


def test_event_indicators_do_not_depend_on_the_exported_mu(tmp_path):
    """Exported with μ = 1 (Lipschitz), run with μ = 0.37 set at instantiation: the FMU
    still has its three indicators (sized for the worst case, constant while μ ≥ 1), so
    CVode restarts where F meets the envelope in finite time and fmpy's run equals the
    exact solution of its held-input problem (it failed at 1.1e-3 s with no indicators).
    A smooth sum carries its parts' indicators."""
    from fmpy import read_model_description

    el = get_element_class("ModifiedDahl")(mu=1.0, **MDM)
    path = export_fmu(el, tmp_path / "mdm_any_mu.fmu", platforms="native")
    assert read_model_description(str(path)).numberOfEventIndicators == 3
    t, u = make_input(0.01, 5.0, T=0.2, n=201)
    F = _fmpy_me(path, t, u, rtol=1e-9, held_u=True, start_values={"mu": 0.37})
    exact = _mdm_held_exact_mu(t, u, mu=0.37, **MDM)
    scale = np.max(np.abs(exact))
    assert np.max(np.abs(F - exact)) <= 1e-6 * scale
    s = el + get_element_class("LinearSpring")(k=30.0)
    sp = export_fmu(s, tmp_path / "mdm_sum.fmu", platforms="native")
    assert read_model_description(str(sp)).numberOfEventIndicators == 3
