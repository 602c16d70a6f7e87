"""Masing model with viscous damping (Bastien et al. (2007), eqs. (6)-(11)) and its loop
analysis / identification (eqs. (21)-(31))."""
import math

import numpy as np
import pytest

from hystmech import drive
from hystmech.analysis.masing import (damping_at_frequency, damping_from_energy,
                                      identify_masing, identify_masing_loop, loop_area,
                                      masing_corners, masing_loop, viscous_energy)
from hystmech.components import Masing

# eq. (36) and the identification input eqs. (29), (32)
EQ36 = dict(k=4.84e5, k0=2.34e5, alpha=1.63e2, F0=-5.73e2)
C36 = 1.93e4
X0, X1, OMEGA, PHI = 5.4e-4, 5.2e-4, 9.4, 4.8


def sine_run(c, periods=3, n=4000, **kw):
    T = 2 * math.pi / OMEGA
    t = np.linspace(0.0, periods * T, periods * n + 1)
    u = X0 + X1 * np.sin(OMEGA * t + PHI)
    v = X1 * OMEGA * np.cos(OMEGA * t + PHI)
    el = Masing(**EQ36, c=c, **kw)
    return t, u, v, drive(el, t, u, v=v), n


def test_exact_stop_operator_on_piecewise_linear_input():
    el = Masing(k=2.0, k0=0.5, alpha=1.0, F0=0.3, w0=0.1)   # eta = 0.5
    t = np.arange(6.0)
    u = np.array([0.0, 2.0, 1.2, 1.7, -1.0, 0.0])
    r = drive(el, t, u)
    w = [0.1, 0.5, -0.3, 0.2, -0.5, 0.5]   # play/stop by hand
    np.testing.assert_allclose(r.state[:, 0], w, rtol=0, atol=1e-15)
    np.testing.assert_allclose(r.force, 2.0 * np.array(w) + 0.5 * u - 0.3, rtol=0, atol=1e-14)


def test_steady_damped_loop_matches_eqs_21_25():
    t, u, v, r, n = sine_run(C36)
    last = slice(-n - 1, None)
    F, Fep = masing_loop(**EQ36, c=C36, u=u[last], udot=v[last])
    scale = np.max(np.abs(F))
    assert np.max(np.abs(r.force[last] - F)) < 1e-12 * scale
    # the dry skeleton is the parallelogram with the corners of eqs. (21)-(22)
    cor = masing_corners(**EQ36, u_min=u[last].min(), u_max=u[last].max())
    assert np.min(Fep) == pytest.approx(cor["F_A"], rel=1e-12)
    assert np.max(Fep) == pytest.approx(cor["F_C"], rel=1e-12)
    assert cor["u_B"] - cor["u_A"] == pytest.approx(2 * EQ36["alpha"] / EQ36["k"], rel=1e-12)


def test_loop_energy_is_dry_plus_viscous_eq_30():
    t, u, v, r, n = sine_run(C36, n=20000)
    last = slice(-n - 1, None)
    E = loop_area(u[last], r.force[last])
    eta = EQ36["alpha"] / EQ36["k"]
    E_dry = 2 * EQ36["alpha"] * (2 * X1 - 2 * eta)
    assert E == pytest.approx(E_dry + viscous_energy(c=C36, x1=X1, Omega=OMEGA), rel=1e-6)


def test_identification_formulas_round_trip_exactly():
    cor = masing_corners(**EQ36, u_min=2e-5, u_max=1.05e-3)
    par = identify_masing(u_A=cor["u_A"], u_B=cor["u_B"], u_C=cor["u_C"], F_A=cor["F_A"],
                          F_C=cor["F_C"], pB_minus=cor["pB_minus"], pB_plus=cor["pB_plus"])
    for key in EQ36:
        assert par[key] == pytest.approx(EQ36[key], rel=1e-12)
    assert par["u_min"] == 2e-5 and par["u_max"] == 1.05e-3


@pytest.mark.parametrize("c", [0.0, C36])
def test_measured_loop_to_parameters_and_back(c):
    # simulate the identification experiment of eqs. (29), (32) with the eq. (36) values,
    # identify from the last period only, then rebuild the loop from the parameters
    t, u, v, r, n = sine_run(c, n=20000)
    last = slice(-n - 1, None)
    got = identify_masing_loop(u[last], r.force[last], t=t[last])
    for key in EQ36:
        assert got[key] == pytest.approx(EQ36[key], rel=1e-4), key
    assert got["c"] == pytest.approx(c, rel=1e-4, abs=1.0)
    F2, _ = masing_loop(**{k: got[k] for k in EQ36}, c=got["c"], u=u[last], udot=v[last])
    assert np.max(np.abs(F2 - r.force[last])) < 2e-3 * np.ptp(r.force[last])


def test_damping_energy_and_frequency_rescaling():
    E = viscous_energy(c=C36, x1=X1, Omega=OMEGA)
    assert damping_from_energy(E=E, x1=X1, Omega=OMEGA) == pytest.approx(C36, rel=1e-14)
    # eq. (56): c0 = 2.48e3 N s/m at Ω0 = 73.15 rad/s
    assert damping_at_frequency(c=C36, Omega=OMEGA, Omega0=73.15) == pytest.approx(2.48e3, rel=3e-3)


def test_slope_on_active_branch():
    el = Masing(**EQ36)
    eta = el.eta
    assert el.slope(np.array([eta]), 0.0, 1.0, el.p) == EQ36["k0"]
    assert el.slope(np.array([eta]), 0.0, -1.0, el.p) == EQ36["k0"] + EQ36["k"]
    assert el.slope(np.array([0.0]), 0.0, 1.0, el.p) == EQ36["k0"] + EQ36["k"]


@pytest.mark.parametrize("kw, msg", [
    (dict(k=0.0, k0=1.0, alpha=1.0), r"k must be in \(0, inf\)"),
    (dict(k=1.0, k0=-1.0, alpha=1.0), r"k0 must be in \[0, inf\)"),
    (dict(k=1.0, k0=1.0, alpha=0.0), r"alpha must be in \(0, inf\)"),
    (dict(k=1.0, k0=1.0, alpha=1.0, c=-1.0), r"c must be in \[0, inf\)"),
    (dict(k=2.0, k0=1.0, alpha=1.0, w0=0.6), r"w0 must be in \[-eta, eta\]"),
    (dict(k=1.0, k0=1.0, alpha=math.inf), "alpha must be a finite"),
])
def test_bad_input(kw, msg):
    with pytest.raises(ValueError, match=msg):
        Masing(**kw)


def test_identification_rejects_inconsistent_loop():
    with pytest.raises(ValueError, match="pB_minus - pB_plus"):
        identify_masing(u_A=0, u_B=1, u_C=2, F_A=0, F_C=1, pB_minus=1.0, pB_plus=2.0)
    with pytest.raises(ValueError, match="u_max - u_min"):
        masing_corners(**EQ36, u_min=0.0, u_max=1e-4)


def test_scenario_masing_loop_small(tmp_path):
    from hystmech.scenario import load_scenario, run_scenario

    cfg = load_scenario("masing-loop")
    inp = dict(cfg["input"], samples_per_period=4000, periods=2)
    res = run_scenario("masing-loop", out=tmp_path, progress=lambda f, m="": None,
                       overrides={"input": inp})
    met = res.summary["metrics"]
    assert met["max_abs_drive_minus_closed_form_N"] < 1e-9
    assert met["c0_eq31"] == pytest.approx(met["c0_paper_eq56"], rel=3e-3)
    for key, err in met["identified_rel_error"].items():
        assert abs(err) < 1e-3, key
    assert (tmp_path / "masing_loops.png").exists()
