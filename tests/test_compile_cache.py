"""Disk cache of compiled assembly code (systems/compile_cache.py): a second process loads
what the first compiled and gets bit-identical results; anything that can change the
machine code (here: an edited helper module of a user's law) gives a new cache file."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from numba import njit

from hystmech.systems import Assembly, Harmonic, compile_cache, simulate

# A user's law in its own package: a Maxwell element (spring k in series with a damper
# k·tau), F = gain()·k·x, dx/dt = v − x/tau, whose gain() lives in a helper module it
# imports, so that editing the helper must invalidate compiled code that inlined it.
_GAIN = """from numba import njit

GAIN = {gain!r}


@njit
def gain():
    return GAIN
"""

_LAW = """import numpy as np
from numba import njit

from hystmech.components.base import ForceElement

from ._gain import gain


@njit
def relax_force(x, u, v, p):
    return gain() * p[0] * x[0]


@njit
def relax_rate(x, u, v, p, out):
    out[0] = v - x[0] / p[1]


@njit
def relax_advance(x, u0, u1, dt, v, p, rtol):
    x[0] += dt * (v - x[0] / p[1])


class Relax(ForceElement):
    kind = "smooth"
    state_names = ("x",)
    force = staticmethod(relax_force)
    rate = staticmethod(relax_rate)
    advance = staticmethod(relax_advance)

    def __init__(self, *, k, tau):
        self._setup(dict(k=k, tau=tau), [k, tau], [0.0])
"""

_RUN = """import json, sys
from hystmech.components import Dahl
from hystmech.systems import Assembly, Harmonic, simulate
from mylaws.law import Relax


def rig(k):
    a = Assembly()
    a.add_dof("m", mass=1.0, x0=1e-3)
    a.add_spring("m", "ground", k=100.0)
    a.add_element("relax", Relax(k=k, tau=0.05), "m")
    a.add_element("dahl", Dahl(rho=2e3, Fc=4.0), "m")
    a.add_force("m", Harmonic(0.0, 3.0, 9.0, 0.2))
    return a


out = {"results": {}}
for job in sys.argv[1:]:
    method, k = job.split(":")
    opts = dict(rtol=1e-8) if method == "RK45" else dict(h=1e-4)
    r = simulate(rig(float(k)), (0.0, 0.5), method=method, **opts)
    last = list(r.y[-1]) + [r.force("relax")[-1]]
    out["results"][job] = [float(v).hex() for v in last]
    out["path"] = r.model.compile_cache["path"]
    out["hits"] = out.get("hits", 0) + r.model.cache_hits()
print(json.dumps(out))
"""


def _write_law(root, gain):
    pkg = root / "mylaws"
    pkg.mkdir(exist_ok=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "law.py").write_text(_LAW)
    (pkg / "_gain.py").write_text(_GAIN.format(gain=gain))


def _run(root, cache, *jobs, engine="0"):
    # engine "0": the generated code, whose disk cache this file tests; "1": the generic
    # engine, which runs a user's law through C wrappers cached on disk as well
    env = dict(os.environ, HYSTMECH_CACHE=str(cache), PYTHONDONTWRITEBYTECODE="1",
               HYSTMECH_ENGINE=engine,
               PYTHONPATH=os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]))
    p = subprocess.run([sys.executable, "-c", _RUN, *jobs], env=env, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


def _vals(res, job):
    return np.array([float.fromhex(s) for s in res["results"][job]])


@pytest.mark.slow
def test_second_process_loads_the_cache_and_edits_invalidate_it(tmp_path):
    cache = tmp_path / "cache"
    _write_law(tmp_path, 1.0)
    jobs = ("RK45:50", "projection:50", "projection:100")
    first = _run(tmp_path, cache, *jobs)
    second = _run(tmp_path, cache, *jobs)
    assert first["path"] is not None and first["path"] == second["path"]
    assert first["hits"] == 0                 # compiled and written by the first process
    assert second["hits"] >= 3                # rk45, projection, eval_samples loaded
    assert first["results"] == second["results"]      # bit for bit
    assert np.all(np.isfinite(_vals(first, "RK45:50")))
    # the uncached in-memory path gives the same numbers
    off = _run(tmp_path, "off", "projection:50", "projection:100")
    assert off["path"] is None and off["hits"] == 0
    for job in ("projection:50", "projection:100"):
        assert off["results"][job] == first["results"][job]
    # edit the helper the kernel inlines: gain 2 with k = 50 is the same law as gain 1
    # with k = 100; stale machine code would give the k = 50, gain 1 numbers instead
    _write_law(tmp_path, 2.0)
    edited = _run(tmp_path, cache, "projection:50")
    assert edited["path"] != first["path"]
    assert edited["hits"] == 0
    assert os.path.exists(first["path"]) and os.path.exists(edited["path"])
    np.testing.assert_allclose(_vals(edited, "projection:50"),
                               _vals(first, "projection:100"), rtol=1e-12, atol=1e-15)
    assert np.max(np.abs(_vals(edited, "projection:50") - _vals(first, "projection:50"))) > 1e-6
    # the engine's wrappers of the user's kernels: the same edit reaches them too (a
    # fresh cache, gain 1 then 2), and they give the generated code's numbers
    cache_e = tmp_path / "cache_engine"
    _write_law(tmp_path, 1.0)
    eng = _run(tmp_path, cache_e, "projection:50", "projection:100", engine="1")
    for job in ("projection:50", "projection:100"):
        assert eng["results"][job] == first["results"][job]
    _write_law(tmp_path, 2.0)
    eng2 = _run(tmp_path, cache_e, "projection:50", engine="1")
    assert eng2["results"]["projection:50"] == edited["results"]["projection:50"]


def test_changed_key_inputs_give_a_new_file(tmp_path, monkeypatch):
    monkeypatch.setenv("HYSTMECH_CACHE", str(tmp_path))
    src = "VALUE = 3\n"
    monkeypatch.setattr(compile_cache, "module_hashes", lambda mods: {"law": "a" * 64})
    m1, p1 = compile_cache.load(src, ["law"])
    monkeypatch.setattr(compile_cache, "module_hashes", lambda mods: {"law": "b" * 64})
    m2, p2 = compile_cache.load(src, ["law"])
    assert p1 != p2 and p1.exists() and p2.exists()
    assert m1 is not m2 and m1.VALUE == m2.VALUE == 3
    assert "# law " + "b" * 64 in p2.read_text()
    # a different source with the same inputs is a different file too
    m3, p3 = compile_cache.load("VALUE = 4\n", ["law"])
    assert p3 not in (p1, p2) and m3.VALUE == 4
    assert len(list(tmp_path.glob(compile_cache.PREFIX + "*.py"))) == 3


def test_existing_file_is_kept_and_a_damaged_one_replaced(tmp_path):
    path = tmp_path / "asm_x.py"
    compile_cache._write_once(path, "A = 1\n")
    st = path.stat()
    compile_cache._write_once(path, "A = 1\n")     # another process with the same file
    st2 = path.stat()
    assert (st2.st_ino, st2.st_mtime_ns) == (st.st_ino, st.st_mtime_ns)
    path.write_text("A =")                   # truncated by a crash
    compile_cache._write_once(path, "A = 1\n")
    assert path.read_text() == "A = 1\n"
    assert [q.name for q in tmp_path.iterdir()] == ["asm_x.py"]     # no temporary left


def _smd():
    a = Assembly()
    a.add_dof("m", mass=2.0, x0=0.01)
    a.add_spring("m", "ground", k=800.0)
    a.add_damper("m", "ground", c=4.0)
    a.add_force("m", Harmonic(1.0))
    return a


@pytest.mark.slow
@pytest.mark.parametrize("setting,reason", [("off", "disabled"), ("file", "not usable")])
def test_disabled_or_unwritable_cache_falls_back_to_memory(tmp_path, monkeypatch, setting,
                                                           reason):
    if setting == "file":
        blocker = tmp_path / "plain-file"
        blocker.write_text("")
        setting = str(blocker / "cache")      # cannot be created: a file is in the way
    monkeypatch.setenv("HYSTMECH_CACHE", setting)
    t = np.linspace(0.0, 0.2, 21)
    r = simulate(_smd(), (0.0, 0.2), t_eval=t, rtol=1e-10)
    assert r.model.code.how != "disk" and reason in r.model.compile_cache["reason"]
    # m x'' + c x' + k x = 1 N from x0 = 0.01 m: closed form
    m, c, k, xs = 2.0, 4.0, 800.0, 1.0 / 800.0
    wn, z = np.sqrt(k / m), c / (2 * np.sqrt(k * m))
    wd = wn * np.sqrt(1 - z * z)
    y0 = 0.01 - xs
    ex = xs + np.exp(-z * wn * t) * (y0 * np.cos(wd * t) + z * wn * y0 / wd * np.sin(wd * t))
    np.testing.assert_allclose(r.x("m"), ex, atol=1e-8)


def test_only_module_level_kernels_are_referenced():
    from hystmech.components.dahl import Dahl, dahl_force

    assert compile_cache.kernel_ref(Dahl.force) == ("hystmech.components.dahl", "dahl_force")
    assert compile_cache.resolve(*compile_cache.kernel_ref(Dahl.force)) is dahl_force

    def make(g):
        @njit
        def f(x, u, v, p):
            return g * x[0]
        return f
    assert compile_cache.kernel_ref(make(2.0)) is None          # run-time closure
    ns = {"njit": njit}
    exec(textwrap.dedent("""
        @njit
        def h(x, u, v, p):
            return x[0]
    """), ns)
    assert compile_cache.kernel_ref(ns["h"]) is None            # exec'd, no source file


def test_an_unusable_cache_leaves_the_usable_one_importable(tmp_path, monkeypatch):
    # numba re-imports a cached function's module by name when it loads the machine
    # code; a failed load of the same code elsewhere must not unregister that module
    good = tmp_path / "good"
    monkeypatch.setenv("HYSTMECH_CACHE", str(good))
    m1, p1 = compile_cache.load("VALUE = 5\n", [])
    blocker = tmp_path / "plain-file"
    blocker.write_text("")
    monkeypatch.setenv("HYSTMECH_CACHE", str(blocker / "cache"))
    m2, reason = compile_cache.load("VALUE = 5\n", [])
    assert m2 is None and "not usable" in reason
    assert sys.modules[m1.__name__] is m1
    monkeypatch.setenv("HYSTMECH_CACHE", str(good))
    assert compile_cache.load("VALUE = 5\n", [])[0] is m1


def test_a_stamp_is_found_only_by_the_installed_copy_that_wrote_it(tmp_path, monkeypatch):
    # two copies of hystmech sharing one cache folder: each its own stamps, so neither
    # loads the module the other's source made
    from hystmech.systems import compile_cache as C

    monkeypatch.setenv("HYSTMECH_CACHE", str(tmp_path))
    mods = ["hystmech.systems.observers"]
    monkeypatch.setattr(C, "_COPY", "copy-a")
    C.load_stamped("t", lambda: "X = 1\n", mods)
    monkeypatch.setattr(C, "_LOADED", {})
    assert C.find_stamped("t") is not None and C.find_stamped("t")[0].X == 1
    monkeypatch.setattr(C, "_COPY", "copy-b")
    assert C.find_stamped("t") is None
    C.load_stamped("t", lambda: "X = 2\n", mods)
    monkeypatch.setattr(C, "_LOADED", {})
    assert C.find_stamped("t")[0].X == 2
    monkeypatch.setattr(C, "_COPY", "copy-a")
    assert C.find_stamped("t")[0].X == 1


def test_stamped_load_skips_making_the_source_while_the_files_are_unchanged(tmp_path,
                                                                           monkeypatch):
    import json

    from hystmech.systems import compile_cache as C

    monkeypatch.setenv("HYSTMECH_CACHE", str(tmp_path))
    made = []

    def make():
        made.append(1)
        return "X = 41 + 1\n"
    mods = ["hystmech.systems.observers"]
    m1, p1 = C.load_stamped("t", make, mods)
    assert m1.X == 42 and len(made) == 1
    monkeypatch.setattr(C, "_LOADED", {})          # as in a new process
    m2, p2 = C.load_stamped("t", make, mods)
    assert p2 == p1 and m2.X == 42 and len(made) == 1     # the source was not made
    # a file the key was computed from changed (its recorded size differs): made anew
    memo = C.stamp_path(tmp_path, "t")
    rec = json.loads(memo.read_text())
    assert any(f.endswith("observers.py") for f in rec["files"])
    f = next(iter(rec["files"]))
    rec["files"][f][1] += 1
    memo.write_text(json.dumps(rec))
    monkeypatch.setattr(C, "_LOADED", {})
    m3, p3 = C.load_stamped("t", make, mods)
    assert len(made) == 2 and p3 == p1 and m3.X == 42
