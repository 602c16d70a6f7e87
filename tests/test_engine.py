"""The generic engine (systems/methods/engine.py): the projection scheme over a model's
arrays, compiled once per install.

Checked against the independent implementation of the same scheme, the structure's
generated straight-line code (systems/codegen.py), on structures that exercise every
part of the record (DOF-DOF and ground connections, imposed motions, external forces,
an inclusion's box, a Python input sampled into tables, an observed signal, the energy
account), and for what it is for: a new structure compiles nothing.
"""
import math

import numpy as np
import pytest

from hystmech.components import BoucWen, Dahl, LuGre, Masing
from hystmech.systems import Assembly, Harmonic, Observe, simulate
from hystmech.systems.methods import engine as E
from hystmech.systems.model import Model

from _rigs import WINDOWS, assert_same_run, projection_pair, two_masses


@pytest.fixture(autouse=True)
def _engine_on(monkeypatch):
    monkeypatch.setenv(E.ENV, "1")          # always the engine (methods/engine.py mode)


def _generated(monkeypatch):
    monkeypatch.setattr(Model, "engine", lambda self: None)


def rig_imposed_inclusion():
    a = Assembly()
    a.add_dof("m", mass=0.5)
    a.impose("base", Harmonic(0.0, 1e-3, 30.0))
    a.add_spring("m", "base", k=2e3, name="k")
    a.add_element("masing", Masing(k=1e3, k0=0.0, alpha=2.0), "m", "base")
    a.add_element("bw", BoucWen(A=5e4, beta=800.0, gamma=-1100.0, n=1.0), "m", "ground")
    return a


def test_engine_reproduces_the_generated_code():
    # the projection comparison shared with tests/test_tiered.py (tests/_rigs.py: one
    # structure with every part of the record, three windows of one observed list)
    a, pairs = projection_pair()
    for w, (r, g) in zip(WINDOWS, pairs):
        # the same operations in the same order: equal to round-off (bit for bit here)
        assert_same_run(r, g, rel=1e-12)
        assert r.energy_error() == pytest.approx(g.energy_error(), rel=1e-9, abs=1e-12), w


def test_a_new_structure_compiles_nothing():
    # structure 1 loads (or compiles, once per install) the engine
    r1 = simulate(rig_imposed_inclusion(), (0.0, 0.01), method="projection", h=1e-5)
    eng = r1.model.engine()
    n_sig = len(eng.projection.signatures)
    assert n_sig >= 1
    # another structure: more DOFs, other connections, other laws
    a = Assembly()
    for i in range(3):
        a.add_dof(f"m{i}", mass=1.0 + i)
        a.add_spring(f"m{i}", f"m{i - 1}" if i else "ground", k=1e3)
    a.add_element("l", LuGre(sigma0=1e4, sigma1=30.0, Fc=1.0, Fs=1.5, vs=0.01), "m2", "ground")
    a.add_element("d", Dahl(rho=1e4, Fc=0.5), "m0", "m1")
    a.add_force("m1", Harmonic(0.0, 1.0, 10.0))
    r2 = simulate(a, (0.0, 0.01), method="projection", h=1e-5)
    assert r2.model.engine() is eng
    assert len(eng.projection.signatures) == n_sig      # no new specialisation
    assert r2.model.code.projection.signatures == []    # nor its generated loop
    assert np.all(np.isfinite(r2.y))


def test_user_kernels_run_through_their_c_wrappers():
    # LuGre with the user's own Stribeck curve: closure kernels, not module-level
    # ones; the engine calls them through C wrappers (systems/law_wrappers.py; bit for bit:
    # tests/test_law_wrappers.py); without a jac kernel the stiff loops are refused
    import numba

    g = numba.njit(lambda v: 1.0 + 0.5 * math.exp(-abs(v / 0.01)))
    a = Assembly()
    a.add_dof("m", mass=1.0)
    a.add_spring("m", "ground", k=1e3)
    a.add_element("l", LuGre(sigma0=1e4, sigma1=30.0, Fc=1.0, Fs=1.5, vs=0.01, g=g), "m",
                  "ground")
    m = Model(a)
    assert E.runnable(m, "projection") and m.prm.EL[0, 6] >= E.TABLE_MIN
    el = a.elements[0].element
    if el.jac is not None:
        assert E.runnable(m, "radau5")
        el.jac = None
        assert not E.runnable(Model(a), "radau5")


def test_the_engine_can_be_refused(monkeypatch):
    monkeypatch.setenv(E.ENV, "0")
    assert Model(rig_imposed_inclusion()).engine() is None


def test_every_law_is_called_through_its_table_of_c_wrappers():
    # no law's code is compiled into the engine: a shipped law, as a user's, is called
    # through the table of its kernels' C wrappers, whose address is the element's id
    from hystmech.components import REGISTRY
    import importlib

    src = E.source()
    for name, mod in REGISTRY.items():
        cls = getattr(importlib.import_module(f"hystmech.components.{mod}"), name)
        if cls.kind == "operator":
            continue
        for k in ("force", "rate", "jac"):
            kern = getattr(cls, k, None)
            qual = getattr(getattr(kern, "py_func", None), "__qualname__", None)
            if qual is not None:
                assert f"{qual!r}" not in src, (name, k)
    el = Dahl(rho=1.0, Fc=1.0)
    tab = E.law_table(el, jac=True)
    assert tab[0] != 0 and tab[1] != 0
    a = Assembly()
    a.add_dof("m", mass=1.0)
    a.add_spring("m", "ground", k=1e3)
    a.add_element("d", el, "m", "ground")
    m = Model(a)
    assert E.runnable(m, "radau5") and m.prm.EL[0, 6] == int(tab.ctypes.data)


@pytest.mark.parametrize("method,opts", [("RK45", {"rtol": 1e-10, "atol": 1e-12}),
                                         ("projection", {"h": 1e-5})])
def test_linear_elements_run_on_the_engine_as_the_assemblys_own_springs(method, opts):
    # LinearSpring, LinearDamper and SpringDamper (state-free; their rate kernel is
    # inherited from their base class) have C wrappers: a structure using them runs
    # on the engine, builds no generated module, and gives the motion of the same rig
    # written with the assembly's own springs and dampers (another code path: the
    # record's spring and damper rows instead of the law calls)
    from hystmech.components import LinearDamper, LinearSpring, SpringDamper

    def rig(as_elements):
        a = Assembly()
        a.add_dof("m1", mass=1.0, x0=0.002)
        a.add_dof("m2", mass=0.5)
        a.add_force("m2", Harmonic(0.0, 2.0, 13.0))
        if as_elements:
            a.add_element("k1", LinearSpring(k=2e3, u0=0.0), "m1", "ground")
            a.add_element("c1", LinearDamper(c=3.0), "m1", "ground")
            a.add_element("kc", SpringDamper(k=1e3, c=1.5, u0=0.0), "m2", "m1")
        else:
            a.add_spring("m1", "ground", k=2e3)
            a.add_damper("m1", "ground", c=3.0)
            a.add_spring("m2", "m1", k=1e3)
            a.add_damper("m2", "m1", c=1.5)
        return a

    els = rig(True)
    for e in els.elements:
        assert E.law_table(e.element) is not None, type(e.element).__name__
    r = simulate(els, (0.0, 0.2), method=method, **opts)
    assert r.model.engine() is not None
    assert r.model._code is None                # its generated module never built
    ref = simulate(rig(False), (0.0, 0.2), method=method, **opts)
    scale = np.max(np.abs(ref.y[:2]))
    assert np.max(np.abs(r.y[:2] - ref.y[:2])) <= 1e-9 * scale

# -- RK45 on the engine -------------------------------------------------------------------

def rig_smooth():
    """Two DOFs between ground and a moving base (tests/_rigs.py two_masses): DOF-DOF,
    ground and imposed-motion ends, three smooth laws (Dahl, LuGre, Bouc-Wen), forces,
    gravity, preload."""
    a = two_masses()
    a.add_spring("m2", "base", k=3e2, name="kb")
    a.add_damper("m1", "ground", c=2.0)
    a.add_damper("m2", "m1", c=1.0, name="link_c")
    a.add_element("dahl", Dahl(rho=2e4, Fc=1.0), "m1", "ground")
    a.add_element("lugre", LuGre(sigma0=1e4, sigma1=30.0, Fc=1.0, Fs=1.5, vs=0.01), "m2", "m1")
    a.add_element("bw", BoucWen(A=5e4, beta=800.0, gamma=-1100.0, n=1.0), "m2", "base")
    a.add_force("m1", Harmonic(0.1, 2.0, 20.0, 0.3))
    a.add_force("m2", Harmonic(0.0, 1.0, 45.0))
    return a


def _reference(a, t_eval):
    """The same equations assembled by hand here (Newton's law per DOF from the
    connection forces, the laws' own rate/force equations as plain Python) and solved by
    scipy's DOP853 at rtol 1e-12: independent of the engine's record and loops."""
    from scipy.integrate import solve_ivp

    els = [e.element for e in a.elements]
    base = a.imposed["base"]
    f1, f2 = (f.f for f in a.forces)
    sp = {s.name: s for s in a.springs}
    names_s = [s.name for s in a.springs]
    names_d = [d.name for d in a.dampers]
    k_g, k_l, k_b = (sp[n] for n in names_s)
    c_g, c_l = (d.c for d in a.dampers)
    sizes = [el.n_states for el in els]
    off = np.cumsum([4] + sizes)

    def rhs(t, y):
        x1, x2, v1, v2 = y[:4]
        ub, vb = float(base.u(t)), float(base.v(t))
        conn = [(x1, v1, 0.0, 0.0), (x2, v2, x1, v1), (x2, v2, ub, vb)]   # dahl, lugre, bw
        dy = np.empty_like(y)
        F = []
        for i, (el, (xa, va, xb, vb_)) in enumerate(zip(els, conn)):
            z = y[off[i]:off[i + 1]].copy()
            F.append(el.force.py_func(z, xa - xb, va - vb_, el.p))
            d = np.empty(sizes[i])
            el.rate.py_func(z, xa - xb, va - vb_, el.p, d)
            dy[off[i]:off[i + 1]] = d
        Fg = k_g.k * (x1 - k_g.u0) + k_g.preload + c_g * v1
        Fl = k_l.k * (x2 - x1 - k_l.u0) + k_l.preload + c_l * (v2 - v1)
        Fb = k_b.k * (x2 - ub - k_b.u0) + k_b.preload
        m1, m2 = a.dofs["m1"].mass, a.dofs["m2"].mass
        f_1 = m1 * a.gravity - Fg + Fl - F[0] + F[1] + float(f1(t))
        f_2 = m2 * a.gravity - Fl - Fb - F[1] - F[2] + float(f2(t))
        dy[:4] = (v1, v2, f_1 / m1, f_2 / m2)
        return dy

    sol = solve_ivp(rhs, (t_eval[0], t_eval[-1]), a.initial_state(), method="DOP853",
                    t_eval=t_eval, rtol=1e-12, atol=1e-14)
    assert sol.success
    return sol.y.T


def test_rk45_on_the_engine_reproduces_the_generated_code_and_scipy(monkeypatch):
    a = rig_smooth()
    te = np.linspace(0.0, 0.3, 61)
    obs = Observe(("kb", "link_c", "lugre"), window=0.1)
    kw = dict(method="RK45", rtol=1e-9, energy=True, observe=obs)
    r = simulate(a, (0.0, 0.3), t_eval=te, **kw)
    assert r.model.engine() is not None
    assert r.model.code.rk45.signatures == []          # the generated loop did not run
    _generated(monkeypatch)
    g = simulate(a, (0.0, 0.3), t_eval=te, **kw)
    assert g.model.engine() is None
    scale = np.max(np.abs(g.y), axis=0) + 1e-300
    assert np.max(np.abs(r.y - g.y) / scale) < 1e-10
    assert r.stats["nsteps"] == g.stats["nsteps"]
    assert np.allclose(r.quad, g.quad, rtol=1e-10, atol=1e-14)
    for k in ("max", "min", "amplitude"):
        assert r.observed[k] == pytest.approx(g.observed[k], rel=1e-10, abs=1e-14)
    # every-step output (no t_eval): the outputs observed where the last stage left w
    r2 = simulate(a, (0.0, 0.3), **kw)
    monkeypatch.undo()
    monkeypatch.setenv(E.ENV, "1")
    r3 = simulate(a, (0.0, 0.3), **kw)
    assert r3.model.engine() is not None
    assert np.max(np.abs(r3.y - r2.y) / scale) < 1e-10
    assert r3.observed["amplitude"] == pytest.approx(r2.observed["amplitude"], rel=1e-10)
    # against scipy's DOP853 on the equations written by hand (rtol 1e-9 here)
    ref = _reference(a, te)
    err = np.max(np.abs(r.y - ref) / (np.max(np.abs(ref), axis=0) + 1e-300))
    assert err < 1e-6


# -- event (and scipy's methods) on the engine's core ----------------------------------------

def test_event_on_the_engine_reproduces_the_generated_code(monkeypatch):
    # Masing (an inclusion: stick/slip events) and Bouc-Wen on a moving base
    a = rig_imposed_inclusion()
    te = np.linspace(0.0, 0.1, 41)
    r = simulate(a, (0.0, 0.1), t_eval=te, method="event", energy=True)
    assert r.model.engine() is not None
    assert r.model._code is None                 # the generated module was not even built
    _generated(monkeypatch)
    g = simulate(a, (0.0, 0.1), t_eval=te, method="event", energy=True)
    scale = np.max(np.abs(g.y), axis=0) + 1e-300
    assert np.max(np.abs(r.y - g.y) / scale) < 1e-10
    assert np.allclose(r.quad, g.quad, rtol=1e-10, atol=1e-14)


def test_event_on_the_engine_against_scipy_on_the_equations_by_hand():
    # no inclusion: the event method is DOP853 on the engine's core, at rtol 1e-10
    a = rig_smooth()
    te = np.linspace(0.0, 0.2, 41)
    r = simulate(a, (0.0, 0.2), t_eval=te, method="event", energy=False)
    assert r.model.engine() is not None
    ref = _reference(a, te)
    # (the difference is the two integrations' tolerances: 2.5e-8 measured)
    assert np.max(np.abs(r.y - ref) / (np.max(np.abs(ref), axis=0) + 1e-300)) < 1e-6
