"""Assembly API: linear analytic solutions, sign conventions, Jacobian, energy, bad input."""
import math

import numpy as np
import pytest

from hystmech.components import Dahl, LinearSpring
from hystmech.systems import Assembly, Harmonic, SimulationError, simulate

from model_checks import assert_jacobian_matches_fd


def _smd(x0=0.01, v0=0.0, F=0.0, g=0.0):
    a = Assembly(gravity=g)
    a.add_dof("m", mass=2.0, x0=x0, v0=v0)
    a.add_spring("m", "ground", k=800.0)
    a.add_damper("m", "ground", c=4.0)
    if F:
        a.add_force("m", F)
    return a


def _smd_exact(t, x0, v0, xs, m=2.0, k=800.0, c=4.0):
    # underdamped m x'' + c x' + k x = k xs, closed form
    wn = math.sqrt(k / m)
    z = c / (2 * math.sqrt(k * m))
    wd = wn * math.sqrt(1 - z * z)
    y0 = x0 - xs
    return xs + np.exp(-z * wn * t) * (y0 * np.cos(wd * t) + (v0 + z * wn * y0) / wd * np.sin(wd * t))


@pytest.mark.parametrize("method,rtol", [("BDF", 1e-10), ("RK45", 1e-10)])
def test_spring_mass_damper_analytic(method, rtol):
    # constant force 3 N and gravity 9.81 m/s² along +x: static offset (F + m g)/k
    a = _smd(x0=0.01, v0=-0.2, F=3.0, g=9.81)
    t = np.linspace(0.0, 1.0, 201)
    r = simulate(a, (0.0, 1.0), method=method, t_eval=t, rtol=rtol)
    xs = (3.0 + 2.0 * 9.81) / 800.0
    ex = _smd_exact(t, 0.01, -0.2, xs)
    assert np.max(np.abs(r.x("m") - ex)) < 1e-6 * np.max(np.abs(ex))
    # acceleration from the equations of motion
    np.testing.assert_allclose(r.a("m"), (3.0 + 2 * 9.81 - 800 * r.x("m") - 4 * r.v("m")) / 2.0,
                               rtol=1e-12, atol=1e-9)
    assert r.energy_error() < 1e-6


def test_sign_convention_element_equals_spring():
    # a LinearSpring element between a and b must act exactly like add_spring(a, b):
    # u = x_a − x_b, force −F on a, +F on b
    def rig(use_element):
        a = Assembly(gravity=9.81)
        a.add_dof("m1", mass=1.0, x0=0.01)
        a.add_dof("m2", mass=3.0)
        a.add_spring("m2", "ground", k=1e3)
        if use_element:
            a.add_element("s", LinearSpring(k=500.0), "m1", "m2")
        else:
            a.add_spring("m1", "m2", k=500.0, name="s")
        return a
    t = np.linspace(0, 0.5, 51)
    r1 = simulate(rig(True), (0, 0.5), t_eval=t, rtol=1e-10)
    r2 = simulate(rig(False), (0, 0.5), t_eval=t, rtol=1e-10)
    np.testing.assert_allclose(r1.x("m1"), r2.x("m1"), atol=1e-10)
    np.testing.assert_allclose(r1.force("s"), r2.force("s"), atol=1e-6)
    np.testing.assert_allclose(r1.force("s"), 500.0 * (r1.x("m1") - r1.x("m2")), atol=1e-9)


def test_static_equilibrium_under_gravity_two_springs():
    # series springs under gravity settle (damped) at the closed-form equilibrium
    a = Assembly(gravity=9.81)
    a.add_dof("m1", mass=1.0)
    a.add_dof("m2", mass=2.0)
    a.add_spring("m1", "ground", k=1e3, preload=5.0)
    a.add_spring("m2", "m1", k=2e3)
    a.add_damper("m1", "ground", c=30.0)
    a.add_damper("m2", "m1", c=30.0)
    r = simulate(a, (0.0, 5.0), rtol=1e-10)
    x1 = (3.0 * 9.81 - 5.0) / 1e3
    x2 = x1 + 2.0 * 9.81 / 2e3
    assert r.x("m1")[-1] == pytest.approx(x1, rel=1e-6)
    assert r.x("m2")[-1] == pytest.approx(x2, rel=1e-6)


def _smooth_rig():
    a = Assembly(gravity=9.81)
    a.add_dof("m1", mass=1.5, x0=1e-3)
    a.add_dof("m2", mass=0.3)
    a.impose("base", u=Harmonic(0.0, 2e-3, 20.0, 0.1))
    a.add_spring("m1", "base", k=2e4, preload=3.0)
    a.add_damper("m1", "m2", c=5.0)
    a.add_spring("m1", "m2", k=5e3)
    a.add_element("dahl", Dahl(rho=2e3, Fc=4.0), "m2", "ground")
    a.add_element("dahl12", Dahl(rho=5e3, Fc=1.0, w0=0.3), "m1", "m2")
    a.add_force("m2", Harmonic(1.0, 5.0, 33.0, 0.0), name="shaker")
    return a


def test_analytic_jacobian_matches_finite_differences():
    a = _smooth_rig()
    r = simulate(a, (0.0, 0.2), rtol=1e-8, energy=False)
    m = r.model
    rng = np.random.default_rng(1)
    for k in rng.integers(0, len(r.t), 5):
        assert_jacobian_matches_fd(m, r.t[k], r.y[k])


def test_energy_balance_smooth_rig_bdf_and_rk45():
    a = _smooth_rig()
    for method, kw in (("BDF", dict(rtol=1e-10)), ("RK45", dict(rtol=1e-10))):
        r = simulate(a, (0.0, 0.5), method=method, **kw)
        e = r.energy()
        assert abs(e["work_imposed"]["base"][-1]) > 1e-4
        assert abs(e["work_forces"]["shaker"][-1]) > 1e-4
        assert r.energy_error() < 1e-6, method
        # Dahl dissipates: absorbed work never decreases over a whole run
        assert e["dissipated"]["dahl"][-1] > 0


def test_bdf_and_rk45_agree():
    a = _smooth_rig()
    t = np.linspace(0, 0.5, 51)
    r1 = simulate(a, (0.0, 0.5), method="BDF", t_eval=t, rtol=1e-10)
    r2 = simulate(a, (0.0, 0.5), method="RK45", t_eval=t, rtol=1e-10)
    # the Dahl rates switch with sgn(v): at velocity reversals both methods lose order
    # and their global errors (against DOP853 at rtol 1e-12 on the same right-hand side)
    # reach 8e-8 in the element states (~0.06-0.3): agreement to 2e-7 absolute
    np.testing.assert_allclose(r1.y, r2.y, rtol=1e-6, atol=2e-7)


def test_signals_and_state_names():
    a = _smooth_rig()
    r = simulate(a, (0.0, 0.05), method="RK45")
    s = r.signals()
    for key in ("t", "m1.x", "m1.v", "m1.a", "base.x", "dahl.F", "dahl.w", "dahl12.w"):
        assert key in s and s[key].shape == r.t.shape
    assert a.state_names() == ["m1.x", "m2.x", "m1.v", "m2.v", "dahl.w", "dahl12.w"]


# -- bad input ---------------------------------------------------------------------------

def test_bad_input_names_the_item():
    a = Assembly()
    with pytest.raises(ValueError, match="mass of DOF 'm'"):
        a.add_dof("m", mass=0.0)
    with pytest.raises(ValueError, match="mass"):
        a.add_dof("m", mass=-1.0)
    a.add_dof("m", mass=1.0)
    with pytest.raises(ValueError, match="unknown DOF 'nope'"):
        a.add_spring("m", "nope", k=1.0)
    with pytest.raises(ValueError, match=r"k of spring .* must be a finite"):
        a.add_spring("m", "ground", k=float("inf"))
    with pytest.raises(ValueError, match=r"c of damper .* must be in \[0, inf\)"):
        a.add_damper("m", "ground", c=-2.0)
    with pytest.raises(ValueError, match="unknown DOF 'x'"):
        a.add_element("d", Dahl(rho=1.0, Fc=1.0), "x", "ground")
    with pytest.raises(ValueError, match="unknown DOF 'q'"):
        a.add_force("q", 1.0)
    with pytest.raises(ValueError, match="already used"):
        a.add_dof("m", mass=1.0)
    with pytest.raises(ValueError, match="itself"):
        a.add_spring("m", "m", k=1.0)
    a.add_spring("m", "ground", k=1.0)
    with pytest.raises(ValueError, match="t_end must be > t_start"):
        simulate(a, (1.0, 1.0))
    with pytest.raises(ValueError, match="t_end must be > t_start"):
        simulate(a, (2.0, 1.0))
    with pytest.raises(ValueError, match="h must be in"):
        simulate(a, (0.0, 1.0), method="projection", h=-1e-3)
    with pytest.raises(ValueError, match="method must be one of"):
        simulate(a, (0.0, 1.0), method="Euler")
    with pytest.raises(ValueError, match="x0 must have"):
        simulate(a, (0.0, 1.0), x0=[1.0])


def test_nonsmooth_element_rejected_by_bdf():
    from hystmech.components import Masing

    a = Assembly()
    a.add_dof("m", mass=1.0)
    a.add_element("fr", Masing(k=1.0, k0=0.0, alpha=1.0), "m")
    with pytest.raises(ValueError, match="fr is non-smooth"):
        simulate(a, (0.0, 1.0), method="BDF")


def test_failure_reports_time_and_keeps_partial():
    # explicit projection step far beyond stability (h·ω = 1e3): refused up front,
    # naming h and the bound 2/ω (ω = 1e6 rad/s), rather than returning garbage
    a = Assembly()
    a.add_dof("m", mass=1e-3, x0=1e-3)
    a.add_spring("m", "ground", k=1e9)
    with pytest.raises(ValueError, match=r"h = 0\.001 s .*h <= 2e-06 s"):
        simulate(a, (0.0, 1.0), method="projection", h=1e-3)
    # a force that turns NaN at t = 0.3 s: the projection scheme stops there and
    # keeps the finite part
    c = _smd(F=0.0)
    c.add_force("m", lambda t: 1.0 if t < 0.3 else float("nan"), name="bad")
    with pytest.raises(SimulationError) as ei:
        simulate(c, (0.0, 1.0), method="projection", h=1e-4)
    err = ei.value
    assert err.t_reached == pytest.approx(0.3, abs=2e-4)
    assert "failed at t =" in str(err)
    p = err.partial
    assert p is not None and p.t.size >= 2 and np.all(np.isfinite(p.y))
    assert p.t[-1] <= err.t_reached
    # a force that turns NaN at t = 0.3 s: BDF stops there with a clear message
    b = _smd(F=0.0)
    b.add_force("m", lambda t: 1.0 if t < 0.3 else float("nan"), name="bad")
    with pytest.raises(SimulationError, match="non-finite") as ei:
        simulate(b, (0.0, 1.0), method="BDF")
    assert ei.value.t_reached == pytest.approx(0.3, abs=0.05)


GAIN = 2.0


def _forced(amp):
    # a builder that makes a new lambda each call, as scripts and sweeps do
    return Assembly().add_dof("m", mass=1.0).add_spring("m", "ground", k=100.0) \
        .add_force("m", lambda t: amp * GAIN * math.cos(3.0 * t))


@pytest.mark.slow
def test_a_new_lambda_of_the_same_source_reuses_its_compile_and_sees_new_values():
    from hystmech.systems import model as mdl

    global GAIN
    t = np.linspace(0.0, 1.0, 11)

    def x_of(a):
        return simulate(a, (0.0, 1.0), method="RK45", rtol=1e-10, t_eval=t, energy=False).x("m")

    def exact(F):
        # m x'' + k x = F cos(3t) from rest: F/(k − 9m)·(cos 3t − cos 10t)
        return F / (100.0 - 9.0) * (np.cos(3.0 * t) - np.cos(10.0 * t))
    a1, a2 = _forced(1.5), _forced(1.5)
    f1, f2 = a1.forces[0].f, a2.forces[0].f
    assert f1 is not f2
    np.testing.assert_allclose(x_of(a1), exact(3.0), atol=1e-9)
    np.testing.assert_allclose(x_of(a2), exact(3.0), atol=1e-9)
    k1, k2 = mdl._source_key(f1)[0], mdl._source_key(f2)[0]
    assert k1 is not None and k1 == k2
    assert mdl._jit_scalar(f1) is mdl._jit_scalar(f2)
    # a different closure value or global value is a different compile, never a stale one
    np.testing.assert_allclose(x_of(_forced(0.5)), exact(1.0), atol=1e-9)
    GAIN = 4.0
    try:
        np.testing.assert_allclose(x_of(_forced(0.5)), exact(2.0), atol=1e-9)
    finally:
        GAIN = 2.0
    # a global array (numba would freeze its contents) is not keyed: no reuse
    arr = np.array([1.0])
    assert mdl._source_key(lambda t: arr[0] * t)[0] is None


def test_negative_spring_is_a_negative_stiffness():
    """add_spring accepts k < 0 as LinearSpring does: springs k1 = 3 and k2 = -1 N/m on a
    1 kg mass oscillate at the net stiffness, x(t) = x0 cos(sqrt(2) t)."""
    a = Assembly()
    a.add_dof("m", mass=1.0, x0=0.01)
    a.add_spring("m", "ground", k=3.0)
    a.add_spring("m", "ground", k=-1.0)
    t = np.linspace(0.0, 5.0, 51)
    r = simulate(a, (0.0, 5.0), method="RK45", t_eval=t, rtol=1e-10)
    assert np.max(np.abs(r.x("m") - 0.01 * np.cos(np.sqrt(2.0) * t))) < 1e-9
