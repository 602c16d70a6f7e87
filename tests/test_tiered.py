"""The tiered choice of code per model (systems/methods/engine.py ``for_model``).

A model the generic engine can run takes its structure's generated code when that is
compiled already (fastest per step), else the engine when its loop is compiled (a new
structure runs at once), else the generated code, compiled as before, while a detached
child compiles the engine's loop. Checked on what the choice leaves behind (the
model's lazy ``code`` attribute, the engine's compiled signatures, the marker and the
child of compile_cache.background), not on timing; and the two tiers give the same
numbers on a general assembly (projection scheme, to 1e-12: the same operations in the
same order, tests/test_engine.py).
"""
import math
import os
import time

import numpy as np
import pytest

from hystmech.components import BoucWen, Dahl, LuGre, Masing, MaxwellSlip
from hystmech.systems import Assembly, Harmonic, Observe, compile_cache, simulate
from hystmech.systems import model as model_mod
from hystmech.systems.methods import engine as E
from hystmech.systems.model import Model

from _rigs import assert_same_run, projection_pair


@pytest.fixture
def tiered(monkeypatch):
    # the default choice (the suite runs on the engine: tests/conftest.py), nothing
    # started in the background
    monkeypatch.setenv(E.ENV, "auto")
    monkeypatch.setenv(compile_cache.PREFETCH, "0")


def _small():
    a = Assembly()
    a.add_dof("m", mass=1.0)
    a.add_spring("m", "ground", k=1e3)
    a.add_element("d", Dahl(rho=2e4, Fc=1.0), "m", "ground")
    a.add_force("m", Harmonic(0.0, 1.0, 10.0))
    return a


def _spy(monkeypatch, generated_ready, engine_cached):
    """Stand-ins for the two probes and the background start, recording their calls."""
    calls = {"probe": [], "background": [], "warm": []}

    def ready(self, loop):
        calls["probe"].append(loop)
        return generated_ready
    monkeypatch.setattr(Model, "generated_ready", ready)
    monkeypatch.setattr(E, "cached", lambda loop: engine_cached)
    monkeypatch.setattr(E, "warm", lambda loop, cls: calls["warm"].append(loop))
    monkeypatch.setattr(E, "engine", lambda: engine_cached)
    monkeypatch.setattr(compile_cache, "background",
                        lambda tag, target, args=(): calls["background"].append((tag, args))
                        or bg_target.__setitem__(0, target))
    return calls


ENGINE = object()       # stands for the compiled engine
bg_target = [None]


@pytest.mark.parametrize("method, loop, probe", [
    ("projection", "projection", "projection"), ("RK45", "rk45", "rk45"),
    ("event", "core", "core"), ("BDF", "core", "core"), ("radau5", "radau5", "radau5"),
    ("auto", "auto", "auto_stiff_explicit")])
def test_the_selection_rule(method, loop, probe, tiered, monkeypatch):
    # fresh install: nothing compiled -> generated code, the engine's loop compiled apart;
    # the model's laws get no C wrappers (compiled on a law's first use: not needed by
    # the generated code)
    from hystmech.systems import law_wrappers

    def no_wrapper(slot, ks):
        raise AssertionError(f"a {slot} wrapper built for a run on the generated code")
    calls = _spy(monkeypatch, generated_ready=False, engine_cached=None)
    with monkeypatch.context() as mp:
        mp.setattr(law_wrappers, "wrapper", no_wrapper)
        mp.setattr(law_wrappers, "_TABLES", {})
        assert E.for_model(Model(_small(), method=method)) is None
    assert calls["probe"] == [probe]
    assert calls["background"] == [(f"engine-{loop}", (loop,))]
    assert bg_target[0] == "hystmech.systems.model:warm_engine"
    # the structure's generated loop compiled -> tier 2, whatever the engine
    for eng in (None, ENGINE):
        calls = _spy(monkeypatch, generated_ready=True, engine_cached=eng)
        assert E.for_model(Model(_small(), method=method)) is None
        assert calls["background"] == []
    # a new structure, the engine's loop compiled -> the engine (tier 1)
    calls = _spy(monkeypatch, generated_ready=False, engine_cached=ENGINE)
    m = Model(_small(), method=method)
    assert E.for_model(m) is ENGINE
    assert calls["background"] == [] and calls["warm"] == []
    # law ids written: the address of the law's table of C wrappers
    assert m.prm.EL[0, 6] == int(E.law_table(m.asm.elements[0].element).ctypes.data)


def test_methods_without_an_engine_loop_keep_their_generated_code(tiered, monkeypatch):
    # (a simulate() method with no loop in LOOPS: the model is built for none)
    monkeypatch.delitem(E.LOOPS, "radau5")
    calls = _spy(monkeypatch, generated_ready=False, engine_cached=ENGINE)
    assert E.for_model(Model(_small(), method="radau5")) is None
    assert calls == {"probe": [], "background": [], "warm": []}


def test_models_the_engine_cannot_run_are_not_probed(tiered, monkeypatch):
    import numba

    g = numba.njit(lambda v: 1.0 + 0.5 * math.exp(-abs(v / 0.01)))   # a user's closure
    a = Assembly()
    a.add_dof("m", mass=1.0)
    el = LuGre(sigma0=1e4, sigma1=30.0, Fc=1.0, Fs=1.5, vs=0.01, g=g)
    el.jac = None      # a user law runs on the engine, but not a stiff loop without jac
    a.add_element("l", el, "m")
    calls = _spy(monkeypatch, generated_ready=False, engine_cached=ENGINE)
    assert E.for_model(Model(a, method="auto")) is None
    assert calls == {"probe": [], "background": [], "warm": []}


def test_environment_overrides(monkeypatch):
    monkeypatch.setenv(E.ENV, "0")          # never: even with the engine compiled
    calls = _spy(monkeypatch, generated_ready=False, engine_cached=ENGINE)
    assert E.for_model(Model(_small(), method="projection")) is None
    assert calls["probe"] == []
    monkeypatch.setenv(E.ENV, "1")          # always: even with the generated code compiled
    calls = _spy(monkeypatch, generated_ready=True, engine_cached=ENGINE)
    assert E.for_model(Model(_small(), method="RK45")) is ENGINE
    assert calls["warm"] == ["rk45"] and calls["probe"] == []
    monkeypatch.setenv(E.ENV, "yes")
    with pytest.raises(ValueError, match="HYSTMECH_ENGINE must be 0 .* 1 .* auto"):
        E.for_model(Model(_small(), method="RK45"))


def test_use_sets_and_restores_the_choice(monkeypatch):
    monkeypatch.delenv(E.ENV, raising=False)
    with E.use("generated"):
        assert E.mode() == "generated" and os.environ[E.ENV] == "0"
        with E.use("engine"):
            assert E.mode() == "engine"
        assert E.mode() == "generated"
    assert E.ENV not in os.environ and E.mode() == "auto"
    # the library's sweeps: the default only, an explicit setting wins
    monkeypatch.setenv(E.ENV, "1")
    with E.use("generated", keep_explicit=True):
        assert E.mode() == "engine"
    monkeypatch.setenv(E.ENV, "auto")
    with E.use("generated", keep_explicit=True):
        assert E.mode() == "generated"
    assert os.environ[E.ENV] == "auto"

    @E.use("generated")
    def inside():
        return E.mode()
    assert inside() == "generated" and E.mode() == "auto"
    with pytest.raises(ValueError, match="choice must be"):
        with E.use("fast"):
            pass


def test_background_starts_once_and_only_where_allowed(tmp_path, monkeypatch):
    monkeypatch.setenv(compile_cache.ENV, str(tmp_path))
    marker = tmp_path / "job.warming"
    done = tmp_path / "ran"
    monkeypatch.setenv(compile_cache.PREFETCH, "0")      # the suite's setting
    assert compile_cache.background("job", "os:mkdir", (done,)) is None
    assert not marker.exists()
    monkeypatch.setenv(compile_cache.PREFETCH, str(os.getpid() + 1))  # another process's
    assert compile_cache.background("job", "os:mkdir", (done,)) is None
    monkeypatch.delenv(compile_cache.PREFETCH)           # a user's default
    if (os.cpu_count() or 1) < 2:
        assert compile_cache.background("job", "os:mkdir", (done,)) is None
        pytest.skip("one core: nothing runs in the background")
    marker.write_text("")                                # another process is at it
    assert compile_cache.background("job", "os:mkdir", (done,)) is None
    old = time.time() - compile_cache.STALE_WARMING - 10
    os.utime(marker, (old, old))                         # ... but died long ago
    child = compile_cache.background("job", "os:mkdir", (done,))
    assert child is not None
    assert child.wait(timeout=120) == 0
    assert done.is_dir() and not marker.exists()         # ran with its argument, cleaned up


def test_a_new_structure_runs_on_the_cached_engine_and_builds_no_module(tiered):
    if compile_cache.cache_dir() is None:
        pytest.skip("disk cache disabled: the engine is not cached")
    E.warm("projection", Model)                    # once per cache (the background's job)
    eng = E.cached("projection")
    assert eng is not None
    misses = sum(eng.projection.stats.cache_misses.values())     # compiled in-process
    # a structure no test runs on its generated code: five DOFs, three laws
    a = Assembly()
    for i in range(5):
        a.add_dof(f"q{i}", mass=0.5 + 0.1 * i)
        a.add_spring(f"q{i}", f"q{i - 1}" if i else "ground", k=2e3 + 100 * i)
    a.add_damper("q4", "q1", c=0.3)
    a.add_element("bw", BoucWen(A=5e4, beta=800.0, gamma=-1100.0, n=1.0), "q3", "ground")
    a.add_element("ms", MaxwellSlip(k=[1e3, 2e3], delta=[5e-4, 8e-4]), "q0", "q2")
    a.add_element("ma", Masing(k=1e3, k0=0.0, alpha=2.0), "q4", "ground")
    a.add_force("q2", Harmonic(0.0, 1.0, 12.0))
    r = simulate(a, (0.0, 0.01), method="projection", h=1e-5)
    assert r.model.engine() is eng
    assert r.model._code is None                      # its generated module never built
    assert not r.model.generated_ready("projection")  # nor compiled on disk
    # one specialisation, loaded from the disk cache or compiled by warm(): no compile
    assert len(eng.projection.signatures) == 1
    assert sum(eng.projection.stats.cache_misses.values()) == misses
    assert np.all(np.isfinite(r.y)) and np.all(np.isfinite(r.force("ms")))


def test_tier_two_when_compiled_and_the_tiers_agree(tiered, monkeypatch, tmp_path):
    if compile_cache.cache_dir() is None:
        pytest.skip("disk cache disabled")
    # the tiers agree: the engine (tier 1) and the generated code (tier 2) on the
    # general assembly of the engine's comparison (tests/_rigs.py, shared with
    # tests/test_engine.py: every part of the projection record, three windows)
    for e, g in projection_pair()[1]:
        assert_same_run(e, g, rel=1e-12)
    # tier 2 once compiled, in a cache of its own: what the disk holds for this
    # structure is this test's alone (seen once in a full suite run: the stamp not found
    # with the shared cache); a structure of one DOF (its loop compiles in seconds) and
    # the engine's loop reported compiled, so that only tier 2 keeps the generated code
    monkeypatch.setenv(compile_cache.ENV, str(tmp_path))
    monkeypatch.setattr(E, "cached", lambda loop: ENGINE)
    a = _small()
    obs = Observe(("d",), window=0.02)
    kw = dict(method="projection", h=1e-5, energy=True, observe=obs)
    assert E.runnable(Model(a, observe=obs.signal, method="projection"))
    with E.use("generated"):                # tier 2 asked for: compiled for this structure
        g = simulate(a, (0.0, 0.05), **kw)
    assert g.model.engine() is None and g.model.code.projection.signatures
    # the default now takes it: compiled in this process ...
    r = simulate(a, (0.0, 0.05), **kw)
    assert r.model.engine() is None
    np.testing.assert_array_equal(r.y, g.y)
    # ... and from the disk cache alone (a new process: nothing in memory), through the
    # structure's stamp, without building its module to ask
    monkeypatch.setattr(model_mod, "_CODE", {})
    m = Model(a, observe=obs.signal, method="projection")
    tag = m._structure_tag()
    stamp = compile_cache.stamp_path(tmp_path, tag)
    assert m.generated_ready("projection"), (tag, stamp.is_file() and stamp.read_text(),
                                             compile_cache.find_stamped(tag))
    assert m.engine() is None and m._code is None


def test_the_background_compile_wraps_every_shipped_law(monkeypatch):
    # the child that compiles an engine loop (model.warm_engine) then compiles the C
    # wrappers of every shipped law and operator (engine.warm_laws), so a user's next
    # structure with another shipped law finds them on disk: checked on what is asked
    # of law_wrappers.wrapper (recorded, nothing compiled) against what runnable asks
    # for each law's kernels (law_table's slots)
    import importlib

    from hystmech.components import REGISTRY
    from hystmech.components.base import is_compiled
    from hystmech.systems import law_wrappers

    asked, order = set(), []
    monkeypatch.setattr(law_wrappers, "wrapper",
                        lambda slot, ks: asked.add((slot, tuple(map(id, ks)))))
    monkeypatch.setattr(E, "warm", lambda loop, cls: order.append(("warm", loop)))
    monkeypatch.setattr(E, "warm_laws",
                        lambda real=E.warm_laws: (order.append(("laws",)), real()))
    model_mod.warm_engine("rk45")
    assert order == [("warm", "rk45"), ("laws",)]
    n_laws = 0
    for name, mod in REGISTRY.items():
        cls = getattr(importlib.import_module(f"hystmech.components.{mod}"), name)
        k = {s: E._kernel_of(cls, s) for s in ("force", "rate", "jac", "pjac", "advance")}
        if cls.kind == "operator":
            need = [("fr0", (k["force"],)), ("adv", (k["advance"],))]
        else:
            if not (is_compiled(k["force"]) and is_compiled(k["rate"])):
                continue
            need = [("fr", (k["force"], k["rate"]))]
            need += [(s, (k[s],)) for s in ("jac", "pjac") if k[s] is not None
                     and is_compiled(k[s])]
        n_laws += 1
        for slot, ks in need:
            assert (slot, tuple(map(id, ks))) in asked, (name, slot)
    assert n_laws >= 12          # Dahl, LuGre, Bouc-Wen, ..., Preisach, Relay
