"""What keeps the compile of a structure's generated module small (systems/codegen.py,
systems/compile_cache.py): dead branches of inlined templates dropped, numba
decorators rewritten for the in-memory and Python paths, no array assigned to a slice
in the loops (numba would compile its shape-mismatch message), and the sample
evaluation compiled by a second process (`hystmech run`) and loaded from the disk
cache by the first."""
import os
import re

import numpy as np
import pytest

from hystmech.systems import Assembly, Harmonic, codegen, compile_cache, simulate
from hystmech.systems.templates import templates


@pytest.fixture(autouse=True)
def _generated_code(monkeypatch):
    # these tests are about the structures' generated code (the suite otherwise runs
    # the models it can on the generic engine: conftest.py)
    monkeypatch.setenv("HYSTMECH_ENGINE", "0")


def test_constant_false_blocks_are_dropped_and_others_kept():
    src = "\n".join([
        "def f(x, fresh):",
        "    a = 0",
        "    if True and FLAG:",
        "        a = 1",
        "        if x:",
        "            a = 2",
        "",
        "    if False:",
        "        a = 3",
        "    if fresh and FLAG:",          # not constant: kept
        "        a = 4",
        "    if False:",                   # with an else: kept
        "        a = 5",
        "    else:",
        "        a = 6",
        "    if not FLAG:",                # constant true: kept
        "        a = 7",
        "    return a"])
    out = codegen.prune_constant_ifs(src, {"FLAG": False})
    ns = {"FLAG": False}
    exec(out, ns)
    assert "a = 1" not in out and "a = 2" not in out and "a = 3" not in out
    assert all(f"a = {k}" in out for k in (4, 5, 6, 7))
    # the same function as the original with the constant bound
    ref = {"FLAG": False}
    exec(src, ref)
    for x in (0, 1):
        for fresh in (False, True):
            assert ns["f"](x, fresh) == ref["f"](x, fresh)
    assert codegen.prune_constant_ifs(src, {"FLAG": True}).count("a = 1") == 1


def test_decorators_for_the_memory_and_python_paths():
    src = ("@njit(cache=True)\ndef a():\n    return 1\n\n"
           f"{codegen.DECOR}\ndef b():\n    return 2\n\n"
           f"{codegen.DECOR_INLINE}\ndef c():\n    return 3\n")
    mem = codegen._in_memory(src)
    assert "cache=True" not in mem
    assert mem.count("@njit") == 3 and 'inline="always"' in mem
    assert "no_cfunc_wrapper=True" in mem
    assert "@njit" not in codegen._undecorated(src)
    assert codegen._own_decorators(src).count(codegen.DECOR) == 2


def test_loops_assign_no_array_to_a_slice():
    # Z[i] = z or Z[:n] = Y[:n] in a compiled loop makes numba compile its
    # shape-mismatch error message (string formatting: seconds once per process)
    src = templates().source
    rows = re.findall(r"^\s*(?:Zout|Yout|Z2|Y2|T2)\[[^]]*\] = (?!0\.0)\w+(?:\[[^]]*\])?$",
                      src, re.M)
    assert [r for r in rows if not re.search(r"\[[^]:]*\] = \w+\[[^]:]*\]$", r)] == []


def _rig():
    a = Assembly()
    a.add_dof("m", mass=1.5)
    a.add_spring("m", "ground", k=40.0, name="s")
    a.add_damper("m", "ground", c=0.3, name="d")
    a.add_force("m", Harmonic(0.0, 2.0, 3.0, 0.0))
    return a


def test_sample_evaluation_compiled_by_a_second_process(tmp_path, monkeypatch):
    from hystmech.systems.model import Model

    monkeypatch.setenv("HYSTMECH_CACHE", str(tmp_path))
    monkeypatch.setenv(compile_cache.PREFETCH, "1")
    m = Model(_rig())
    code = m.code                       # generated, written, child started; no loop compiled
    if not isinstance(code.eval_samples, compile_cache.Prefetched):
        pytest.skip("no second core: nothing prefetched")
    t = np.linspace(0.0, 2.0, 7)
    Y = np.random.default_rng(1).normal(size=(t.size, m.N))
    FE, UB, VB = m.forcing_on(t)
    A = m.eval_on(t, Y, FE, UB, VB)[0]  # waits for the child, then loads its machine code
    assert code.eval_samples.child is None
    assert sum(code.mod.eval_samples.stats.cache_hits.values()) == 1
    assert sum(code.mod.eval_samples.stats.cache_misses.values()) == 0
    # Newton: m a = f(t) − k x − c v at every sample
    f = 2.0 * np.cos(3.0 * t)
    np.testing.assert_allclose(1.5 * A[:, 0], f - 40.0 * Y[:, 0] - 0.3 * Y[:, 1],
                               rtol=0, atol=1e-12)
    assert not list(tmp_path.glob(".prefetch-*"))


def test_prefetch_only_where_asked(tmp_path, monkeypatch):
    # off, or asked by another process (a sweep's workers inherit the variable): no child
    from hystmech.systems.model import Model

    monkeypatch.setenv("HYSTMECH_CACHE", str(tmp_path))
    for v in ("0", str(os.getpid() + 1)):
        monkeypatch.setenv(compile_cache.PREFETCH, v)
        codegen._MEMORY.clear()
        m = Model(_rig())
        assert compile_cache.prefetch(m.code.mod, m.code.path, "eval_samples",
                                      codegen._sample_args(m)) is None


def _function(src: str, name: str) -> str:
    # the text of top-level function ``name`` in a module's source
    mt = re.search(rf"^def {name}\(.*?(?=^@njit|^def |\Z)", src, re.M | re.S)
    assert mt, name
    return mt.group(0)


def _rk45_shape(rk45: str):
    return {"stage loops": rk45.count("for s in range(1, 7):"),
            "observer calls": len(re.findall(r"\bobserve\(obs, ", rk45)),
            "kept rows": rk45.count("Tout[nout] = "),
            "callback calls": rk45.count("if stop("),
            "buffer growths": rk45.count("np.empty(ncap)"),
            "dense outputs": rk45.count("dp45_dense("),
            "fun_full_call": rk45.count("fun_full_call(")}


def test_rk45_loop_inlines_its_parts_once_or_twice():
    # LLVM's optimisation of the RK45 routine dominated its compile (docs/layout.md):
    # the stage loop (with the right-hand side) is inlined once, the output (observer,
    # kept row, callback, buffer growth) twice, the dense output once; the first step
    # size stays a call. Checked on a generated module and on the engine's source.
    from hystmech.components import Dahl
    from hystmech.systems.methods import engine
    from hystmech.systems.model import Model

    a = _rig()
    a.add_element("dahl", Dahl(rho=2e4, Fc=1.0), "m", "ground")
    m = Model(a)
    gen = codegen.generate(m, {}, templates())
    for src in (gen, engine.source()):
        rk45 = _function(src, "rk45")
        shape = _rk45_shape(rk45)
        # the first evaluation, and each output's fresh one where the signal reads w
        assert 1 <= shape.pop("fun_full_call") <= 3
        # one output for the start, one for the accepted steps (four before: each
        # with and without t_eval)
        assert shape == {"stage loops": 1, "observer calls": 2, "kept rows": 2,
                         "callback calls": 2, "buffer growths": 2, "dense outputs": 1}
        assert "initial_step(" in rk45 and "def initial_step(" in src
        assert "# INLINE" not in rk45 and "bind_locals" not in rk45


def test_unused_bound_locals_are_dropped():
    # bind_locals binds every array of Params and the scratch tuple; a loop keeps only
    # those it reads (each bound array is typed, lowered and reference-counted)
    src = "\n".join([
        "def f(prm, V):",
        "    bind_locals(prm, V)  # INLINE",
        "    return prm_k[0] + V_1[0]",
        "",
        "",
        "def g(prm, V):",
        "    bind_locals(prm, V)  # INLINE",
        "    return prm_mass[0] * prm_c[1]"])
    out = codegen.inline_calls(src, (), {}, 2)
    f, g = _function(out, "f"), _function(out, "g")
    assert re.findall(r"(\w+) = (?:prm\.\w+|V\[\d\])", f) == ["prm_k", "V_1"]
    assert re.findall(r"(\w+) = (?:prm\.\w+|V\[\d\])", g) == ["prm_mass", "prm_c"]
    ns = {}
    exec(out, ns)
    prm = codegen.Params(*[np.arange(1.0, 4.0) * (i + 1) for i in range(len(codegen.Params._fields))])
    V = (np.array([7.0]), np.array([11.0]))
    assert ns["f"](prm, V) == prm.k[0] + 11.0
    assert ns["g"](prm, V) == prm.mass[0] * prm.c[1]


def _decorator(src: str, name: str) -> str:
    # the decorator line of top-level function ``name``
    mt = re.search(rf"^(@njit.*)\ndef {name}\(", src, re.M)
    assert mt, name
    return mt.group(1)


def test_stiff_cores_inlined_into_their_one_caller_and_one_radau_step():
    # numba links each callee's optimised IR into every caller and optimises and
    # generates machine code for all of it again: a chain template -> core ->
    # radau_step -> _collocation paid the Radau step's optimisation at every level
    # (docs/layout.md). The single-use cores are inlined at IR level; radau_step stays one
    # compiled function that radau5 and the implicit phase of auto both call, and the
    # right-hand side and Jacobian are called, not copied into each core.
    from hystmech.systems.methods import engine

    gen = codegen.generate(_model_with_dahl(), {}, templates())
    for src in (gen, engine.source()):
        for core in ("radau_solve", "auto_start", "auto_explicit", "auto_implicit",
                     "_collocation", "radau_initial_step"):
            assert 'inline="always"' in _decorator(src, core), core
        step = _function(src, "radau_step")
        assert 'inline="always"' not in _decorator(src, "radau_step")
        assert "_collocation(" in step and "stiff_fun(" in step
        assert "radau_step(" in _function(src, "radau_solve")
        assert "radau_step(" in _function(src, "auto_implicit")
        for core in ("radau_step", "radau_solve", "auto_implicit", "_collocation"):
            assert "def fun_full" not in _function(src, core)
        assert 'inline="always"' not in _decorator(src, "stiff_fun")


def _model_with_dahl():
    from hystmech.components import Dahl
    from hystmech.systems.model import Model

    a = _rig()
    a.add_element("dahl", Dahl(rho=2e4, Fc=1.0), "m", "ground")
    return Model(a)
