"""Harmonic balance (AFT) against shooting and an independent DOP853 integration; on
the generic engine equal to the generated code, a new structure compiling nothing."""
import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from hystmech.components import BoucWen, Dahl, Masing
from hystmech.components.linear import LinearDamper, LinearSpring, SpringDamper
from hystmech.systems import Assembly, Harmonic, compile_cache
from hystmech.systems.methods import engine as E
from hystmech.systems.model import Model
from hystmech.systems.periodic.harmonic_balance import harmonic_balance
from hystmech.systems.periodic.shooting import periodic_orbit

from test_periodic import oscillator

M_, C_, K_, K3_, F_ = 1.0, 0.05, 1.0, 0.1, 0.5


def duffing_period_map(y0, Om, t0):
    def f(t, y):
        return [y[1], (F_ * math.cos(Om * t) - C_ * y[1] - K_ * y[0] - K3_ * y[0] ** 3) / M_]
    T = 2 * math.pi / Om
    return solve_ivp(f, (t0, t0 + T), y0, method="DOP853", rtol=1e-12, atol=1e-13).y[:, -1]


def test_harmonic_balance_equals_shooting_and_converges_exponentially():
    Om = 1.6     # inside the bistable window: the large (resonant) orbit
    asm = oscillator(M_, C_, K_, F_, Om, K3_)
    o = periodic_orbit(asm, y0=[2.5, 0.0], options=dict(rtol=1e-11))
    assert 0.5 * np.ptp(o.simulate(64).y[:, 0]) > 2.0
    guess = o.simulate(32).y[:-1]
    errs = []
    for H in (3, 5, 7, 9, 15):
        hb = harmonic_balance(asm, H, y_guess=guess, t0=o.t0)
        assert hb.residual < 1e-10
        errs.append(np.max(np.abs(hb.y0 - o.y0)))
    # the truncation error falls by a factor > 5 per two harmonics (odd-harmonic
    # response of a cubic oscillator), down to the shooting's own accuracy
    assert errs[0] > 1e-3 and errs[1] < 0.2 * errs[0] and errs[2] < 0.2 * errs[1]
    assert errs[-1] < 1e-8
    assert hb.tail < 1e-9
    # independent: the HB state at t0, integrated over one period by DOP853, returns
    yT = duffing_period_map(hb.y0, Om, hb.t0)
    assert np.max(np.abs(yT - hb.y0)) < 1e-8
    # the whole period, not only the section
    t = hb.t0 + np.linspace(0.0, 2 * math.pi / Om, 9)
    assert np.max(np.abs(hb.evaluate(t) - o.shooter.run(o.y0, t).y)) < 1e-7


def test_harmonic_balance_bad_input():
    asm = oscillator(M_, C_, K_, F_, 1.6, K3_)
    with pytest.raises(ValueError, match="n_harmonics"):
        harmonic_balance(asm, 0)
    with pytest.raises(ValueError, match="n_time"):
        harmonic_balance(asm, 5, n_time=8)
    with pytest.raises(ValueError, match="y_guess"):
        harmonic_balance(asm, 5, y_guess=[np.nan, 0.0])
    a = Assembly()
    a.add_dof("x", mass=1.0)
    a.add_element("m", Masing(k=10.0, k0=1.0, alpha=1.0, F0=0.0), "x")
    a.add_force("x", Harmonic(0.0, 1.0, 1.0, 0.0))
    with pytest.raises(ValueError, match="smooth"):
        harmonic_balance(a, 3)


# -- on the generic engine (methods/engine.py): an assembly of shipped laws --------------------
OM_R = 9.0


def shipped_rig():
    """Two DOFs, springs with a rest length and a preload, dampers, an imposed harmonic
    base, a harmonic force, a Dahl and a Bouc-Wen: every connection kind of the
    engine's right-hand side and Jacobian."""
    a = Assembly()
    a.add_dof("m1", mass=1.0)
    a.add_dof("m2", mass=0.5)
    a.add_spring("m1", "ground", k=120.0, u0=1e-3, name="s1")
    a.add_spring("m1", "m2", k=80.0, preload=0.2, name="s2")
    a.add_damper("m1", "ground", c=0.6, name="d1")
    a.impose("base", Harmonic(0.0, 0.01, OM_R, 0.4))
    a.add_spring("m2", "base", k=60.0, name="s3")
    a.add_damper("m2", "base", c=0.3, name="d3")
    a.add_element("dl", Dahl(rho=5.0, Fc=0.5), "m1", "ground")
    a.add_element("bw", BoucWen(A=5.0, beta=20.0, gamma=5.0, n=1.0), "m2", "m1")
    a.add_force("m1", Harmonic(0.0, 4.0, OM_R, 0.0))
    return a


def test_harmonic_balance_on_the_engine_equals_the_generated_code():
    """The engine's f and J (compiled once per install) give the generated module's
    orbit bit for bit, and that orbit is the shooting one to the truncation error."""
    o = periodic_orbit(shipped_rig(), options=dict(rtol=1e-10))
    guess = o.simulate(32).y[:-1]
    out = {}
    for choice in ("engine", "generated"):
        with E.use(choice):
            out[choice] = harmonic_balance(shipped_rig(), 9, y_guess=guess, t0=o.t0, tol=1e-9)
    he, hg = out["engine"], out["generated"]
    assert np.array_equal(he.c, hg.c) and he.iterations == hg.iterations
    assert he.residual < 1e-9
    exc = np.ptp(o.simulate(64).y, axis=0)
    # (the Dahl's and Bouc-Wen's corners: harmonics decay slowly, tail ~3e-4)
    assert np.max(np.abs(he.y0 - o.y0) / exc) < 20 * he.tail


def test_harmonic_balance_of_a_new_structure_compiles_nothing(monkeypatch):
    if compile_cache.cache_dir() is None:
        pytest.skip("disk cache disabled: the engine is not cached")
    monkeypatch.setenv(E.ENV, "auto")                  # the default, tiered choice
    monkeypatch.setenv(compile_cache.PREFETCH, "0")
    E.warm("var_solve", Model)                         # once per cache
    eng = E.cached("var_solve")
    assert eng is not None

    def no_build(*args, **kw):
        raise AssertionError("a generated module was built")
    monkeypatch.setattr("hystmech.systems.codegen.build", no_build)

    def misses():
        return sum(sum(getattr(eng, f).stats.cache_misses.values()) for f in ("fun", "jac"))
    before = misses()
    # a structure no test builds: three DOFs in a chain, shipped linear elements
    a = Assembly()
    for i in range(3):
        a.add_dof(f"p{i}", mass=0.4 + 0.3 * i)
    a.add_element("e0", SpringDamper(k=900.0, c=0.4), "p0", "ground")
    a.add_element("e1", LinearSpring(k=700.0), "p1", "p0")
    a.add_spring("p2", "p1", k=500.0)
    a.add_element("e2", LinearDamper(c=0.2), "p2", "ground")
    a.add_force("p0", Harmonic(0.0, 2.0, 13.0))
    hb = harmonic_balance(a, 3, scale=np.full(6, 0.01))
    assert misses() == before
    # linear: the one harmonic of the forcing, and the steady state of the complex
    # frequency response (M(iΩ)² + C iΩ + K) X = F
    Mm = np.diag([0.4, 0.7, 1.0])
    K = np.array([[1600.0, -700.0, 0.0], [-700.0, 1200.0, -500.0], [0.0, -500.0, 500.0]])
    Cd = np.diag([0.4, 0.0, 0.2])
    X = np.linalg.solve(-13.0 ** 2 * Mm + 13j * Cd + K, np.array([2.0, 0.0, 0.0]))
    np.testing.assert_allclose(hb.c[:3, 1] - 1j * hb.c[:3, 2], X, rtol=1e-9, atol=1e-12)
