"""The generic engine's analysis loops (systems/methods/engine.py ANALYSIS_LOOPS): the
variational equations integrated with the state (``var_solve``, behind
periodic/monodromy.py's VariationalMap: monodromy, periodic orbits, continuation, folds
and bifurcations) and the projection scheme's chained Jacobian (``proj_monodromy``,
behind ProjectionMap), over a model's arrays.

Checked against independent truths: the monodromy against central differences of the
period map (runs of the state alone, no Jacobian kernel in them); the runs against the
independent implementation of the same templates, the structure's generated
straight-line code (systems/codegen.py), bit for bit (the same operations in the same
order: the engine's ``fun`` and ``jac`` sum every term in the generated order); and for
what it is for: a new structure runs on the cached engine without building its module
or compiling anything.
"""
import math

import numpy as np
import pytest

from hystmech.components import Dahl, LuGre, Masing, MaxwellSlip, ViscousDahl
from hystmech.systems import Assembly, Harmonic, compile_cache
from hystmech.systems.methods import engine as E
from hystmech.systems.model import Model
from hystmech.systems.periodic.monodromy import ProjectionMap, VariationalMap

from _rigs import rig_bw_lugre


def rig_smooth():
    """Two DOFs (tests/_rigs.py rig_bw_lugre, forced at the period T): a Bouc-Wen
    isolator to ground, a LuGre contact between the masses and a viscous Dahl to the
    imposed base; gravity, a preloaded spring, a damper to the base (every branch of the
    engine's fun and jac: DOF, imposed and ground ends, springs, dampers, three laws)."""
    a = rig_bw_lugre(30.0, 30.0)
    a.add_element("vd", ViscousDahl(kx=1e3, kw=1e3, rho=1e3), "base", "m2")
    return a


def rig_inclusions():
    """Two DOFs with a Masing element and a two-slider Maxwell-slip forced hard enough
    that the sliders slip (the projection clamps) over part of the period."""
    a = Assembly()
    a.add_dof("m1", mass=1.0)
    a.add_dof("m2", mass=0.5)
    a.impose("base", Harmonic(0.0, 2e-3, 10.0))
    a.add_spring("m1", "ground", k=1e3)
    a.add_spring("m2", "m1", k=3e3)
    a.add_damper("m2", "ground", c=0.5)
    a.add_element("ms", Masing(k=1e3, k0=0.0, alpha=0.5), "m1", "ground")
    a.add_element("mx", MaxwellSlip(k=[200.0, 100.0], delta=[2e-3, 6e-3]), "m2", "base")
    a.add_force("m1", Harmonic(0.0, 6.0, 10.0))
    return a


T = 2 * math.pi / 30.0


def _varmap(a, choice, span=T, rtol=1e-10):
    with E.use(choice):
        vm = VariationalMap(a, span, rtol=rtol)
    return vm


def test_engine_monodromy_is_the_derivative_of_the_period_map():
    # truth: central differences of the period map φ (runs of the state alone: var_fun
    # never calls jac for them), each column with its own step, at rtol 1e-12
    a = rig_smooth()
    vm = _varmap(a, "engine", rtol=1e-12)
    assert vm.model._code is None                      # the engine ran, no module built
    y0 = np.array(a.initial_state(), float)
    N = y0.size
    _, M = vm.flow_monodromy(y0)
    scale = np.maximum(np.abs(vm.flow(y0)), 1e-4)
    Ms = np.abs(M) * scale[None, :] / scale[:, None]   # M in the states' own scales
    worst = 0.0
    for j in range(N):
        d = 1e-5 * scale[j]
        e = np.zeros(N)
        e[j] = d
        col = (vm.flow(y0 + e) - vm.flow(y0 - e)) / (2 * d)
        # entries compared in the states' own scales, relative to the largest: the laws'
        # |v| (Bouc-Wen, LuGre) make φ smooth only piecewise, a central difference
        # across such a kink errs O(d/scale) = 1e-5 of it
        worst = max(worst, (np.abs(col - M[:, j]) * scale[j] / scale).max())
    assert worst < 1e-4 * Ms.max(), (worst, Ms.max())
    assert np.abs(M).max() > 1e-2                      # not a trivial map


def test_engine_variational_map_equals_the_generated_code():
    a = rig_smooth()
    y0 = np.array(a.initial_state(), float)
    ve = _varmap(a, "engine")
    vg = _varmap(a, "generated")
    assert ve.model._code is None and vg.model.code.how == "disk"
    ye, Me = ve.flow_monodromy(y0)
    yg, Mg = vg.flow_monodromy(y0)
    assert np.array_equal(ye, yg) and np.array_equal(Me, Mg)
    # the state alone (z of length N) and a looser tolerance: other step sequences
    assert np.array_equal(ve.flow(y0, 1e-6), vg.flow(y0, 1e-6))
    _, Me2, dMe = ve.monodromy_with_error(y0)
    _, Mg2, dMg = vg.monodromy_with_error(y0)
    assert np.array_equal(Me2, Mg2) and np.array_equal(dMe, dMg)
    assert np.abs(dMe).max() > 0.0                     # the two tolerances differ


def test_engine_projection_jacobian_equals_the_generated_code():
    a = rig_inclusions()
    y0 = np.array(a.initial_state(), float)
    clamped = 0
    for span in (0.13, 0.31, 2 * math.pi / 10):
        with E.use("engine"):
            pe = ProjectionMap(a, span, h=1e-4)
        with E.use("generated"):
            pg = ProjectionMap(a, span, h=1e-4)
        assert pe.model._code is None and pe._code.how == "disk"
        assert pg._code is pg.model.code
        ye, Me = pe.flow_monodromy(y0)
        yg, Mg = pg.flow_monodromy(y0)
        assert np.array_equal(ye, yg) and np.array_equal(Me, Mg)
        # a slider slipping at the last step: its row of the chained Jacobian is zero
        # (the derivative of the projection along the face normal), the branch covered
        clamped += int(np.any(np.all(Me[2 * 2:] == 0.0, axis=1)))
    assert clamped >= 1


@pytest.mark.parametrize("loop", E.ANALYSIS_LOOPS)
def test_a_new_structure_runs_its_analysis_on_the_cached_engine_and_compiles_nothing(
        loop, monkeypatch):
    if compile_cache.cache_dir() is None:
        pytest.skip("disk cache disabled: the engine is not cached")
    monkeypatch.setenv(E.ENV, "auto")                  # the default, tiered choice
    monkeypatch.setenv(compile_cache.PREFETCH, "0")
    E.warm(loop, Model)                                # once per cache (the background's job)
    eng = E.cached(loop)
    assert eng is not None

    def misses():
        return sum(sum(getattr(eng, f).stats.cache_misses.values())
                   for f in (loop, "fun", "jac", "step"))
    before = misses()
    # a structure no test runs on its generated code: three DOFs, its laws
    a = Assembly()
    for i in range(3):
        a.add_dof(f"p{i}", mass=0.3 + 0.2 * i)
    a.add_spring("p0", "ground", k=2e3)
    a.add_spring("p1", "p0", k=1.1e3)
    a.add_spring("p2", "p1", k=9e2)
    a.add_damper("p2", "ground", c=0.3)
    a.add_force("p0", Harmonic(0.0, 3.0, 9.0))
    if loop == "var_solve":
        a.add_element("d", Dahl(rho=3e4, Fc=0.7), "p1", "ground")
        a.add_element("l", LuGre(sigma0=1e4, sigma1=20.0, Fc=0.5, Fs=0.8, vs=0.02),
                      "p2", "p0")
        mp = VariationalMap(a, 0.05, rtol=1e-8)
        y, M = mp.flow_monodromy(a.initial_state())
    else:
        a.add_element("ms", Masing(k=8e2, k0=0.0, alpha=0.4), "p1", "ground")
        a.add_element("mx", MaxwellSlip(k=[150.0, 90.0], delta=[1e-3, 4e-3]), "p2", "p0")
        mp = ProjectionMap(a, 0.05, h=1e-4)
        y, M = mp.flow_monodromy(a.initial_state())
    assert E.for_loop(mp.model, loop) is eng
    assert mp.model._code is None                      # its generated module never built
    assert not mp.model.generated_ready(loop)          # nor compiled on disk
    # one type signature for every structure (loaded from the disk cache when another
    # process warmed the loop, compiled here when this one did)
    assert len(getattr(eng, loop).signatures) == 1
    assert misses() == before                          # nothing compiled in this process
    assert np.all(np.isfinite(y)) and np.all(np.isfinite(M))
    # M is a derivative of the map: a product of invertible factors for the smooth flow
    if loop == "var_solve":
        assert abs(np.linalg.det(M)) > 0.0


def test_models_the_engine_cannot_run_keep_their_generated_code():
    # a Dahl whose kernels are not the set's (a user's own numba kernels) and without a
    # jac kernel: the generated module runs the variational equations
    from numba import njit

    base = Dahl(rho=2e4, Fc=1.0)

    class MyDahl(Dahl):
        pass
    MyDahl.force = staticmethod(njit(base.force.py_func))
    # (with its jac it would run on the engine through C wrappers, systems/law_wrappers.py;
    # without one the variational loop cannot)
    MyDahl.jac = None
    a = Assembly()
    a.add_dof("m", mass=1.0)
    a.add_spring("m", "ground", k=1e3)
    a.add_element("e", MyDahl(rho=2e4, Fc=1.0), "m", "ground")
    a.add_force("m", Harmonic(0.0, 1.0, 10.0))
    with E.use("engine"):
        m = Model(a)
        assert E.for_loop(m, "var_solve") is None
    with pytest.raises(ValueError, match="loop must be one of"):
        E.for_loop(m, "rk45")
