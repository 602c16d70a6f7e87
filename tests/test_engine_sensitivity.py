"""The identification's forward sensitivity equations on the generic engine
(systems/methods/engine.py ``sensitivity``/``for_sensitivity``: identify/assembly.py's
template over the generic ``core``, ``jac_core``, ``pjac_core`` and ``conn_core``).

Checked against the independent implementation of the same template, the structure's
generated sensitivity module (systems/codegen.py build_sensitivity: straight-line
``pjac_core``/``conn_core`` per structure), bit for bit: the generic functions write
every entry with the operations of the generated code. That the sensitivities are the
derivatives of the outputs is checked against central differences of independent runs
in tests/test_identify_assembly*.py, which run on the engine in the suite
(tests/conftest.py sets HYSTMECH_ENGINE=1), operators (Preisach, Prandtl-Ishlinskii,
Relay) included. And for what it is for: a new structure, an operator's included, runs
its sensitivities on the cached engine without building a module or compiling; a user's
own kernels (closures) keep a generated module per structure, cached on disk under
their fingerprint (a new process loads it and compiles nothing) on the generated path,
and run through their C wrappers (systems/law_wrappers.py) in the engine's sensitivity
module, bit for bit the same.
"""
import os
import subprocess
import sys

import numpy as np
import pytest
from numba import njit

from hystmech.components import BoucWen, Dahl, LuGre, Masing
from hystmech.components.preisach import Preisach, PrandtlIshlinskii, Relay
from hystmech.identify import assembly as IA
from hystmech.identify.assembly import Experiment, OutputErrorProblem
from hystmech.systems import GROUND, Assembly, compile_cache
from hystmech.systems.methods import engine as E

FS = 400.0
T = np.arange(400) / FS


def _force(t):
    f = np.array([1.3, 2.9, 4.1, 6.7])
    ph = np.array([0.3, 1.9, 4.0, 2.2])
    return 3.0 * np.sum(np.cos(2 * np.pi * f * np.asarray(t)[..., None] + ph), axis=-1)


def rig():
    """Two DOFs, an imposed base, springs with a rest length and a preload, dampers, a
    Bouc-Wen to ground, a LuGre between the masses and a Masing (an inclusion: its box
    projection in the template) to the base, and every operator kind (a relay to
    ground, a continuous Preisach between the masses, a Prandtl-Ishlinskii to the
    base: their memory update and tangents): every kind of column of ∂f/∂θ and every
    row kind of the connection forces."""
    a = Assembly()
    a.add_dof("m1", mass=1.0)
    a.add_dof("m2", mass=0.5)
    a.add_spring("m1", GROUND, k=400.0, u0=1e-3, name="s1")
    a.add_spring("m1", "m2", k=150.0, preload=0.2, name="s2")
    a.add_damper("m1", GROUND, c=0.8, name="d1")
    a.impose("base", 0.0)
    a.add_spring("m2", "base", k=100.0, name="s3")
    a.add_damper("m2", "base", c=0.3, name="d3")
    a.add_element("bw", BoucWen(A=300.0, beta=20.0, gamma=-8.0, n=1.0), "m2", GROUND)
    a.add_element("lg", LuGre(sigma0=1e4, sigma1=30.0, Fc=1.0, Fs=1.5, vs=0.01), "m1", "m2")
    a.add_element("ms", Masing(k=300.0, k0=0.0, alpha=1.0), "m1", "base")
    a.add_element("rl", Relay(a1=-2e-3, a2=3e-3), "m1", GROUND)
    a.add_element("pr", Preisach.from_kernel(lambda r, s: -2e3 * (1.0 + 30.0 * r + 20.0 * s),
                                             0.01, 3, continuous=True, k0=40.0, max_depth=24),
                  "m1", "m2")
    a.add_element("pi", PrandtlIshlinskii(r=np.array([1e-3, 3e-3]), weights=[-20.0, -10.0],
                                          h=5e-4, u_bound=0.03, k0=30.0, max_depth=24),
                  "m2", "base")
    a.add_force("m1", 0.0, name="u")
    return a


FREE = ["m1.m", "s1.u0", "s2.k", "s2.preload", "d1.c", "s3.k", "d3.c", "bw.A", "bw.beta",
        "bw.gamma", "bw.z0", "lg.sigma0", "lg.Fc", "ms.k", "ms.eta", "u.gain", "m2.v0",
        "pr.weights[1]", "pr.k0", "pi.weights", "pi.offset"]
CHANS = ("m1.x", "m2.a", "bw.z", "bw.F", "lg.F", "ms.F", "ms.w", "s1.F", "s2.F", "d1.F",
         "d3.F", "rl.F", "pr.F", "pi.F")


def _experiment():
    u = _force(T)
    return Experiment(dt=1 / FS, inputs={"u": u, "base": 0.01 * np.sin(2 * np.pi * 3.1 * T) ** 2},
                      outputs={c: u * 0 for c in CHANS}, interpolation="cubic")


def test_engine_sensitivities_equal_the_generated_code():
    a, x = rig(), _experiment()
    out = {}
    for choice in ("engine", "generated"):
        with E.use(choice):
            P = OutputErrorProblem(a, FREE, [x])
        th = P.theta0.copy()
        th[FREE.index("m2.v0")] = 0.01
        th[FREE.index("bw.z0")] = 0.05
        out[choice] = (P.code, *P.simulate(th, 0, True))
    (ce, Ye, Se), (cg, Yg, Sg) = out["engine"], out["generated"]
    assert ce is E.sensitivity(IA._template_source(), (IA.__name__,)).mod
    assert cg is not ce
    assert np.array_equal(Ye, Yg) and np.array_equal(Se, Sg)
    # every free parameter moves some output (no column left at zero by either path)
    assert np.all(np.abs(Se).max(axis=(0, 1)) > 0.0)
    # the relay switches both ways (its memory update and its force's jump)
    assert set(np.unique(Ye[:, CHANS.index("rl.F")])) == {-1.0, 1.0}
    # the Masing slips: its state clipped to the box's face, whose sensitivity to the
    # half-width is then exactly ±1 (the projection's branch of the template)
    s_w = Se[:, CHANS.index("ms.w"), FREE.index("ms.eta")]
    assert np.any(np.abs(s_w) == 1.0)


def test_a_new_structure_runs_its_sensitivities_on_the_cached_engine_and_compiles_nothing(
        monkeypatch):
    if compile_cache.cache_dir() is None:
        pytest.skip("disk cache disabled: the engine is not cached")
    x = _experiment()
    with E.use("engine"):                         # compiled once per cache
        P0 = OutputErrorProblem(rig(), FREE[:3], [x])
    P0.simulate(P0.theta0, 0, True)
    monkeypatch.setenv(E.ENV, "auto")             # the default, tiered choice

    def no_build(*args, **kw):
        raise AssertionError("a generated sensitivity module was built")
    monkeypatch.setattr("hystmech.systems.codegen.build_sensitivity", no_build)
    eng = E.sensitivity(IA._template_source(), (IA.__name__,))
    before = sum(eng.mod.sens_simulate.stats.cache_misses.values())
    nsig = len(eng.mod.sens_simulate.signatures)
    # a structure no test builds: one DOF, a Dahl, a LuGre and a Prandtl-Ishlinskii
    # operator in parallel to ground
    a = Assembly()
    a.add_dof("q", mass=0.7)
    a.add_spring("q", GROUND, k=250.0, name="k")
    a.add_element("d", Dahl(rho=2e3, Fc=0.5), "q", GROUND)
    a.add_element("l", LuGre(sigma0=5e3, sigma1=10.0, Fc=0.3, Fs=0.4, vs=0.02), "q", GROUND)
    a.add_element("pi", PrandtlIshlinskii(r=np.array([2e-3]), weights=[-30.0], h=1e-3,
                                          u_bound=0.05, k0=20.0), "q", GROUND)
    a.add_force("q", 0.0, name="u")
    u = _force(T)
    xe = Experiment(dt=1 / FS, inputs={"u": u}, outputs={"q.x": u * 0, "d.F": u * 0,
                                                         "pi.F": u * 0})
    P = OutputErrorProblem(a, ["k.k", "d.rho", "l.Fc", "pi.weights", "pi.k0"], [xe])
    assert P.code is eng.mod
    Y, S = P.simulate(P.theta0, 0, True)
    assert len(eng.mod.sens_simulate.signatures) == nsig
    assert sum(eng.mod.sens_simulate.stats.cache_misses.values()) == before
    assert np.all(np.isfinite(S)) and np.all(np.abs(S).max(axis=(0, 1)) > 0.0)


# -- a user's kernels: the generated module, cached on disk under their fingerprint ----------
def stribeck(vs):
    """A user's Stribeck curve g(v) [N] of another form than LuGre's default, made by a
    factory: a closure over vs [m/s] (its value is part of the compiled code)."""
    @njit
    def g(v):
        return 1.0 + 0.5 / (1.0 + (v / vs) ** 2)
    return g


def user_problem(g=None):
    """The one-DOF rig of tests/test_identify_assembly_laws.py with its LuGre of a user's
    g and f (the same structure and kernels: one module on disk serves both files), or
    with another g."""
    import test_identify_assembly_laws as L

    law = L.laws()["lugre-user-g"]
    if g is not None:
        law = LuGre(**{**law.params, "g": g})
    u = _force(T)
    xe = Experiment(dt=1 / FS, inputs={"u": u}, outputs={"m.x": u * 0, "law.F": u * 0})
    return OutputErrorProblem(L.one_dof(law), ["s.k", "law.sigma0", "law.sigma1"], [xe])


_CHILD = """
import sys
import numpy as np
sys.path.insert(0, {tests!r})
import test_engine_sensitivity as T
P = T.user_problem()
Y, S = P.simulate(P.theta0, 0, True)
d = P.code.sens_simulate
print(sum(d.stats.cache_misses.values()), sum(d.stats.cache_hits.values()), P.code.__name__)
np.save({out!r}, np.concatenate([Y.ravel(), S.ravel()]))
"""


def test_a_users_kernels_sensitivities_run_on_the_engine_as_their_generated_module():
    # a LuGre with a user's g and f (closures): its kernels through their C wrappers
    # (law_wrappers.py: force and rates, jac, pjac) in the engine's sensitivity module,
    # bit for bit the structure's generated module, every free column nonzero
    with E.use("engine"):
        P = user_problem()
    with E.use("generated"):
        G = user_problem()
    assert P.code is E.sensitivity(IA._template_source(), (IA.__name__,)).mod
    assert G.code is not P.code
    th = P.theta0 * np.array([1.1, 0.9, 1.2])
    Y, S = P.simulate(th, 0, True)
    Yg, Sg = G.simulate(th, 0, True)
    assert np.array_equal(Y, Yg) and np.array_equal(S, Sg)
    assert np.all(np.isfinite(S)) and np.all(np.abs(S).max(axis=(0, 1)) > 0.0)


def test_a_users_kernels_generated_sensitivity_module_is_cached_on_disk_per_fingerprint(
        tmp_path):
    # the generated path (HYSTMECH_ENGINE=0, and the tiered default before the engine's
    # sensitivity module is compiled) keeps one module per user's kernels on disk
    if compile_cache.cache_dir() is None:
        pytest.skip("disk cache disabled")
    with E.use("generated"):
        _generated_module_cached_per_fingerprint(tmp_path)


def _generated_module_cached_per_fingerprint(tmp_path):
    P = user_problem()
    assert E.for_sensitivity(P.model, IA._template_source(), (IA.__name__,)) is None
    Y, S = P.simulate(P.theta0, 0, True)
    assert np.all(np.isfinite(S)) and np.all(np.abs(S).max(axis=(0, 1)) > 0.0)
    # the same kernels made anew: the same module; a closure over another value (and
    # the same over one value, made twice): another module, and one
    assert user_problem().code is P.code
    g2, g3 = user_problem(stribeck(0.02)).code, user_problem(stribeck(0.03)).code
    assert g2 is not P.code and g3 is not g2
    assert user_problem(stribeck(0.02)).code is g2
    out = tmp_path / "ys.npy"
    r = subprocess.run([sys.executable, "-c", _CHILD.format(
        tests=os.path.dirname(__file__), out=str(out))], capture_output=True, text=True,
        timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    misses, hits, name = r.stdout.split()[-3:]
    # a new process: loaded from numba's cache of the module file, nothing compiled
    assert (int(misses), int(hits)) == (0, 1) and name == P.code.__name__
    assert np.array_equal(np.load(out), np.concatenate([Y.ravel(), S.ravel()]))
