"""The projection scheme of Bastien et al. (2007), eqs. (A.7)-(A.10), in assemblies."""
import numpy as np
import pytest

from hystmech.components import Masing, MaxwellSlip
from hystmech.systems import Assembly, Harmonic, simulate


def _mass_on_masing():
    a = Assembly()
    a.add_dof("m", mass=1.0)
    a.add_spring("m", "ground", k=100.0)
    a.add_element("fr", Masing(k=400.0, k0=0.0, alpha=2.0, c=0.5), "m")
    a.add_force("m", Harmonic(0.0, 6.0, 7.0, 0.3))
    return a


def test_first_order_convergence_against_event_reference():
    # reference: event-driven stick/slip solution to rtol 1e-12 (not O(h)); eq. (A.10)
    # predicts error ∝ h, i.e. a ratio of 2 when h halves
    a = _mass_on_masing()
    te = np.linspace(0.0, 1.0, 101)
    ref = simulate(a, (0.0, 1.0), method="event", t_eval=te, rtol=1e-12, atol=1e-14)
    assert ref.stats["nevents"] >= 4          # the mass sticks and slips several times
    scale = np.array([np.ptp(ref.x("m")), np.ptp(ref.v("m")), 2 * a.element("fr").eta])
    errs = []
    for h in (2e-4, 1e-4, 5e-5, 2.5e-5):
        r = simulate(a, (0.0, 1.0), method="projection", h=h, t_eval=te)
        np.testing.assert_allclose(r.t, te, atol=1e-12)
        errs.append(np.max(np.abs(r.y - ref.y) / scale))
    ratios = np.array(errs[:-1]) / np.array(errs[1:])
    assert np.all((ratios > 1.7) & (ratios < 2.3)), (errs, ratios)
    assert errs[-1] < 2e-3


def test_reference_solver_energy_balance_and_box():
    a = _mass_on_masing()
    r = simulate(a, (0.0, 1.0), method="event", rtol=1e-12, atol=1e-14)
    assert r.energy_error() < 1e-8
    w = r.state("fr")[:, 0]
    eta = a.element("fr").eta
    assert np.all(np.abs(w) <= eta * (1 + 1e-9))
    e = r.energy()
    assert e["dissipated"]["fr"][-1] > 0


def _triangle(t, period=1.0, amp=1e-3):
    s = (t / period) % 1.0
    return amp * np.where(s < 0.5, 4 * s - 1, 3 - 4 * s)


def _triangle_v(t, period=1.0, amp=1e-3):
    # slope of the segment that starts at t (right derivative: the scheme uses v(t_p))
    s = ((t + 1e-9) / period) % 1.0
    return np.where(s < 0.5, 4 * amp / period, -4 * amp / period)


def _stop_operator(u, eta, w0=0.0):
    # exact stop (play) operator at the samples of a piecewise-linear input whose
    # kinks are samples: w <- clip(w + Δu, −η, η) on each monotone piece
    w = np.empty_like(u)
    w[0] = w0
    for i in range(1, u.size):
        w[i] = min(max(w[i - 1] + (u[i] - u[i - 1]), -eta), eta)
    return w


@pytest.mark.slow
def test_driven_masing_agrees_with_exact_play_operator():
    # the element sees an imposed displacement; with the triangle's kinks on the grid,
    # h·v(t_p) is the exact increment and (A.9) must reproduce the stop operator
    h = 1e-3
    el = Masing(k=1e4, k0=50.0, alpha=4.0, c=0.0)           # η = 4e-4 m < amplitude
    a = Assembly()
    a.add_dof("dummy", mass=1.0)
    a.add_spring("dummy", "ground", k=1.0)
    a.impose("base", u=_triangle, v=_triangle_v)
    a.add_element("fr", el, "base", "ground")
    r = simulate(a, (0.0, 3.0), method="projection", h=h)
    u = _triangle(r.t)
    w_exact = _stop_operator(u, el.eta)
    np.testing.assert_allclose(r.state("fr")[:, 0], w_exact, rtol=0, atol=1e-15)
    F = r.force("fr")
    np.testing.assert_allclose(F, el.params["k"] * w_exact + 50.0 * u, rtol=1e-12, atol=1e-12)


def _two_dof(ms_el):
    a = Assembly(gravity=9.81)
    a.add_dof("m1", mass=2.0)
    a.add_dof("m2", mass=0.5)
    a.add_spring("m1", "m2", k=3e3)
    a.add_damper("m1", "m2", c=2.0)
    a.add_spring("m2", "ground", k=500.0)
    a.add_element("masing12", Masing(k=2e3, k0=0.0, alpha=1.5, c=0.2), "m1", "m2")
    a.add_element("masing1", Masing(k=1e3, k0=100.0, alpha=3.0, F0=-5.0), "m1", "ground")
    a.add_element("slip", ms_el, "m2", "ground")
    a.add_force("m1", Harmonic(0.0, 25.0, 12.0, 0.0))
    return a


def test_several_inclusion_elements_converge_first_order():
    ms = MaxwellSlip(k=[800.0, 600.0, 400.0], delta=[1e-3, 3e-3, 6e-3])
    a = _two_dof(ms)
    te = np.linspace(0.0, 0.8, 81)
    ref = simulate(a, (0.0, 0.8), method="event", t_eval=te, rtol=1e-11, atol=1e-14)
    assert ref.stats["nevents"] >= 5
    assert ref.energy_error() < 1e-7
    scale = np.maximum(np.ptp(ref.y, axis=0), 1e-12)
    errs = []
    for h in (1e-4, 5e-5, 2.5e-5):
        r = simulate(a, (0.0, 0.8), method="projection", h=h, t_eval=te)
        errs.append(np.max(np.abs(r.y - ref.y) / scale))
        lo, hi = r.model.box_lo, r.model.box_hi
        assert np.all((r.y >= lo) & (r.y <= hi))       # the projection keeps the box
    ratios = np.array(errs[:-1]) / np.array(errs[1:])
    assert np.all((ratios > 1.7) & (ratios < 2.3)), (errs, ratios)


def test_parallel_masing_elements_equal_one_maxwell_slip():
    # two stop operators in parallel on the same deflection are a 2-asperity
    # Maxwell-slip element (Jankowski et al. (2017), eq. (7)): same trajectory
    def rig(els):
        a = Assembly()
        a.add_dof("m", mass=1.0, x0=0.01)
        a.add_spring("m", "ground", k=200.0)
        for i, el in enumerate(els):
            a.add_element(f"e{i}", el, "m", "ground")
        return a

    r1 = simulate(rig([Masing(k=300.0, k0=0.0, alpha=0.6), Masing(k=500.0, k0=0.0, alpha=2.0)]),
                  (0.0, 1.0), method="projection", h=1e-4)
    r2 = simulate(rig([MaxwellSlip(k=[300.0, 500.0], delta=[0.6 / 300.0, 2.0 / 500.0])]),
                  (0.0, 1.0), method="projection", h=1e-4)
    np.testing.assert_allclose(r1.x("m"), r2.x("m"), rtol=0, atol=1e-13)
    np.testing.assert_allclose(r1.force("e0") + r1.force("e1"), r2.force("e0"), atol=1e-10)


def test_projection_bad_step():
    a = _mass_on_masing()
    for h in (0.0, -1e-3, float("nan")):
        with pytest.raises(ValueError, match="h must be"):
            simulate(a, (0.0, 1.0), method="projection", h=h)
