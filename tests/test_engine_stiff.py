"""The generic engine's stiff loops (systems/methods/engine.py): Radau IIA 5 ("radau5") and
the DOP54 ⇄ Radau switch ("auto") over a model's arrays, with the generic analytic
Jacobian ``jac`` (the laws' jac kernels behind one compiled switch).

Checked against independent truths: the Jacobian against a central difference of the
right-hand side ``core`` (which never calls a jac kernel) on random states; the runs
against the independent implementation of the same loops, the structure's generated
straight-line code (systems/codegen.py), to round-off (the same operations in the same
order); and for what it is for: a new structure runs on the cached engine without
building its module or compiling anything.
"""
import numpy as np
import pytest

from hystmech.components import BoucWen, Dahl, LuGre, ModifiedDahl, ViscousDahl
from hystmech.systems import Assembly, Harmonic, compile_cache, simulate
from hystmech.systems.methods import engine as E
from hystmech.systems.model import Model

from _rigs import engine_and_generated, rig_bw_lugre


@pytest.fixture(autouse=True)
def _engine_on(monkeypatch):
    monkeypatch.setenv(E.ENV, "1")          # always the engine (methods/engine.py mode)


def rig_stiff_lugre():
    """A block on a moving belt through a stiff LuGre contact (σ0 = 1e5 N/m): the bristle
    dynamics have |λ| ~ σ0·|v|/g(v) ~ 1e4–1e5 1/s, so "auto" leaves Dormand–Prince for
    Radau (Hairer & Wanner's stiffness test, methods/auto.py)."""
    a = Assembly()
    a.add_dof("m", mass=1.0)
    a.impose("belt", Harmonic(0.0, 0.02, 6.0))
    a.add_spring("m", "ground", k=2e3, name="k")
    a.add_damper("m", "ground", c=0.5)
    a.add_element("contact", LuGre(sigma0=1e5, sigma1=600.0, Fc=1.0, Fs=1.5, vs=0.01,
                                   sigma2=0.4), "m", "belt")
    return a


def rig_dahl():
    a = Assembly()
    a.add_dof("m", mass=0.5)
    a.add_spring("ground", "m", k=8e2)
    a.add_element("dahl", Dahl(rho=2e4, Fc=1.0), "ground", "m")
    a.add_force("m", Harmonic(0.0, 1.5, 15.0))
    return a


def rig_three_laws():
    """Three DOFs, the ground and an imposed motion at both ends of connections, a
    modified Dahl, a viscous Dahl (two states) and a Dahl."""
    a = Assembly()
    for i, m in enumerate((0.7, 1.1, 0.4)):
        a.add_dof(f"q{i}", mass=m)
    a.impose("base", Harmonic(0.0, 2e-3, 25.0))
    a.add_spring("q0", "ground", k=1.5e3)
    a.add_spring("q1", "q0", k=7e2)
    a.add_spring("base", "q2", k=4e2, u0=1e-4)
    a.add_damper("q2", "q1", c=0.8)
    a.add_element("md", ModifiedDahl(F0=0.0, a=7.146e4, b=9.596e2, d=5.322e4, e=3.972e2,
                                     Lambda=117355.0, mu=0.37), "q1", "ground")
    a.add_element("vd", ViscousDahl(kx=1e3, kw=1e3, rho=1e3), "q2", "q0")
    a.add_element("d", Dahl(rho=1e4, Fc=0.5), "base", "q0")
    a.add_force("q1", Harmonic(0.0, 2.0, 11.0))
    return a


def rig_all_laws():
    """One structure for the comparisons with the generated code (each structure compared
    costs a compile of its module per method). The engine has no per-structure code: its
    branches are per law (the switches over ``law_force_rate`` and ``law_jac``), per end
    of a connection (a DOF, the ground, an imposed motion, first or second), per input
    (harmonic forces and motions) and per phase of the method. This rig holds each of the
    branches the four rigs above exercise one by one: the five laws (LuGre, Bouc-Wen, Dahl,
    modified Dahl, viscous Dahl of two states), ground- and imposed-first ends, gravity, a
    preloaded spring, harmonic forces, and a stiff LuGre contact on a moving belt (σ0 =
    1e5 N/m) so that "auto" runs its explicit phase, switches to Radau (the generic
    Jacobian) and back (4 switches at rtol 1e-7; which laws sit where decides whether the
    stiffness test fires, measured: the modified Dahl on q keeps auto explicit)."""
    a = Assembly(gravity=9.81)
    a.add_dof("m1", mass=1.0, x0=0.001)
    a.add_dof("m2", mass=2.0)
    a.add_dof("q", mass=0.7)
    a.impose("belt", Harmonic(0.0, 0.02, 6.0))
    a.impose("base", Harmonic(0.0, 1e-3, 30.0, 0.2))
    a.add_spring("m1", "ground", k=1e3, u0=0.0005, preload=0.2)
    a.add_spring("m2", "m1", k=5e2, name="link")
    a.add_damper("base", "m2", c=1.0)
    a.add_spring("ground", "q", k=2e3, name="k")
    a.add_damper("q", "m1", c=0.5)
    a.add_element("contact", LuGre(sigma0=1e5, sigma1=600.0, Fc=1.0, Fs=1.5, vs=0.01,
                                   sigma2=0.4), "q", "belt")
    a.add_element("bw", BoucWen(A=5e4, beta=800.0, gamma=-1100.0, n=1.0), "m1", "ground")
    a.add_element("lugre", LuGre(sigma0=1e4, sigma1=30.0, Fc=1.0, Fs=1.5, vs=0.01),
                  "m2", "m1")
    a.add_element("dahl", Dahl(rho=2e4, Fc=1.0), "ground", "m2")
    a.add_element("md", ModifiedDahl(F0=0.0, a=7.146e4, b=9.596e2, d=5.322e4, e=3.972e2,
                                     Lambda=117355.0, mu=0.37), "m2", "ground")
    a.add_element("vd", ViscousDahl(kx=1e3, kw=1e3, rho=1e3), "base", "q")
    a.add_force("m1", Harmonic(0.1, 2.0, 20.0, 0.3))
    a.add_force("m2", Harmonic(0.0, 1.0, 13.0))
    return a


RIGS = [rig_stiff_lugre, rig_bw_lugre, rig_dahl, rig_three_laws, rig_all_laws]


def _jacobians(a, y, t):
    with E.use("engine"):
        m = Model(a, method="radau5")
    eng = m.engine()
    assert eng is not None
    N, L = m.N, m.layout
    J = np.zeros((N, N))
    eng.jac(t, y, m.prm, J, np.zeros(L.n_work), eng.scratch(m.prm))
    return m, eng, J


@pytest.mark.parametrize("build", RIGS)
def test_jacobian_is_the_derivative_of_the_right_hand_side(build):
    # truth: a central difference of the engine's core (the force and rate kernels only,
    # no jac kernel), step scaled per component, on random states of the rig's scale
    rng = np.random.default_rng(7)
    a = build()
    for k in range(4):
        with E.use("engine"):
            m = Model(a, method="radau5")
        N, L = m.N, m.layout
        y = np.concatenate([rng.normal(scale=1e-3, size=m.nq), rng.normal(scale=0.05, size=m.nq),
                            rng.normal(scale=0.3, size=N - 2 * m.nq) * m.x_scale])
        t = float(rng.uniform(0.0, 0.2))
        m, eng, J = _jacobians(a, y, t)
        w = np.zeros(L.n_work)
        eng.inputs(t, m.prm, w)
        V = eng.scratch(m.prm)
        D = np.zeros((N, N))
        scale = np.concatenate([np.full(m.nq, 1e-3), np.full(m.nq, 0.05),
                                np.maximum(np.abs(m.x_scale), 1e-12)])
        for j in range(N):
            h = 1e-6 * scale[j]
            fp, fm = np.empty(N), np.empty(N)
            yp, ym = y.copy(), y.copy()
            yp[j] += h
            ym[j] -= h
            eng.core(t, yp, m.prm, fp, w.copy(), V)
            eng.core(t, ym, m.prm, fm, w.copy(), V)
            D[:, j] = (fp - fm) / (yp[j] - ym[j])
        # each entry against its column's and row's size (a 1e5 N/m bristle beside 1 kg)
        tol = 1e-6 * (np.abs(D) + np.max(np.abs(D), axis=1, keepdims=True) * 1e-3) + 1e-9
        assert np.all(np.abs(J - D) <= tol), np.max(np.abs(J - D) - tol)
        assert np.count_nonzero(J) > 2 * m.nq      # the elements' blocks are there


def _assert_jacobian_equals_the_generated_one(a):
    # the same operations in the same order as codegen._jac: bit for bit, on the structure
    # with every law's jac kernel and every kind of connection end (rig_all_laws), at three
    # random states. Called after the generated radau5 run: its module's ``jac`` is then
    # compiled already (a test of its own compiled it once more, standalone)
    rng = np.random.default_rng(11)
    for _ in range(3):
        with E.use("engine"):
            N = Model(a, method="radau5").N
        y = rng.normal(scale=1e-3, size=N)
        m, eng, J = _jacobians(a, y, 0.37)
        G = np.zeros((N, N))
        m.code.jac(0.37, y, m.prm, G, np.zeros(m.layout.n_work), m.code.scratch(m.prm))
        np.testing.assert_array_equal(J, G)


@pytest.mark.parametrize("method", ["auto", "radau5"])
def test_engine_reproduces_the_generated_code(method):
    """Engine vs generated code on rig_all_laws, bit for bit: "auto" (its explicit
    phase, the switch to Radau and back, the implicit phase with the generic Jacobian),
    "radau5" (and, with its generated module compiled, the generic Jacobian against the
    generated ``jac`` at three random states)."""
    a = rig_all_laws()                  # every branch of the loops at one compile (above)
    kw = dict(method=method, energy=True, rtol=1e-7)
    t_eval = np.linspace(0.0, 0.3, 61)
    r, g = engine_and_generated(a, (0.0, 0.3), t_eval=t_eval, **kw)
    assert g.model.code.how == "disk"
    assert r.stats == g.stats                      # the same steps, rejections, switches
    # the same operations in the same order: bit for bit (measured on every rig here)
    np.testing.assert_array_equal(r.y, g.y)
    np.testing.assert_array_equal(r.quad, g.quad)
    for name in [e.name for e in a.elements]:
        np.testing.assert_allclose(r.force(name), g.force(name), rtol=1e-12, atol=1e-12)
    if method == "auto":
        # the contact is stiff: the switch to Radau took place (and the engine's
        # implicit phase, with the generic Jacobian, ran)
        assert r.stats["steps_implicit"] > 0 and r.stats["switches"] >= 1
        assert r.stats["steps_explicit"] > 0
    else:
        _assert_jacobian_equals_the_generated_one(a)


@pytest.mark.parametrize("method, funcs", [
    ("auto", ("auto_stiff", "auto_stiff_explicit", "auto_stiff_implicit")),
    ("radau5", ("radau5",))])
def test_a_new_structure_runs_on_the_cached_engine_and_compiles_nothing(method, funcs,
                                                                        monkeypatch):
    if compile_cache.cache_dir() is None:
        pytest.skip("disk cache disabled: the engine is not cached")
    monkeypatch.setenv(E.ENV, "auto")                  # the default, tiered choice
    monkeypatch.setenv(compile_cache.PREFETCH, "0")
    E.warm(E.LOOPS[method], Model)                     # once per cache (the background's job)
    eng = E.cached(E.LOOPS[method])
    assert eng is not None

    def misses():
        return sum(sum(getattr(eng, f).stats.cache_misses.values())
                   for f in (*funcs, "eval_samples", "jac"))
    before = misses()
    sigs = {f: set(getattr(eng, f).signatures) for f in funcs}
    # a structure no test runs on its generated code: four DOFs, three laws, stiff
    a = Assembly()
    for i in range(4):
        a.add_dof(f"p{i}", mass=0.6 + 0.2 * i)
        a.add_spring(f"p{i}", f"p{i - 1}" if i else "ground", k=1.2e3 + 150 * i)
    a.add_damper("p3", "p0", c=0.4)
    a.add_element("lu", LuGre(sigma0=1e5, sigma1=600.0, Fc=1.0, Fs=1.5, vs=0.01), "p2",
                  "ground")
    a.add_element("bw", BoucWen(A=4e4, beta=700.0, gamma=-1000.0, n=1.0), "p1", "p3")
    a.add_element("dd", Dahl(rho=1.5e4, Fc=0.7), "p0", "ground")
    a.add_force("p3", Harmonic(0.0, 3.0, 9.0))
    r = simulate(a, (0.0, 0.05), method=method)
    assert r.model.engine() is eng
    assert r.model._code is None                      # its generated module never built
    assert not r.model.generated_ready(funcs[-1])     # nor compiled on disk
    # no new specialisation: a signature this process did not hold before the run was
    # loaded from the disk cache (where warm put it), not compiled (the run alone in a
    # process with a warm cache loads the loops it calls)
    for f in funcs:
        disp = getattr(eng, f)
        assert set(disp.signatures) - sigs[f] <= set(disp.stats.cache_hits), f
    assert misses() == before                          # nothing compiled in this process
    assert np.all(np.isfinite(r.y)) and r.t[-1] == pytest.approx(0.05)
