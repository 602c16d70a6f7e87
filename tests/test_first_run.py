"""What the first `hystmech run` of a fresh install pays for, and what it no longer does
(issue 31): the generated code's cache key found from the import lines (not a parse of
every module), one compile of the energy integrands for the loop and the sample
evaluation, none at all in the loop of a run without the energy account, pyplot
imported while the runner computes."""
import ast
import functools
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hystmech.systems import Assembly, Harmonic, compile_cache, simulate

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_DIRS = ("core", "components", "systems", "fmu", "analysis", "identify", "plugins",
                "scenarios")


def _key(n):
    return type(n).__name__, getattr(n, "module", None), getattr(n, "level", 0), \
        tuple((a.name, a.asname) for a in n.names)


def _walked(data: bytes) -> set:
    # the truth: every import statement anywhere in the module's syntax tree
    return {_key(n) for n in ast.walk(ast.parse(data))
            if isinstance(n, (ast.Import, ast.ImportFrom))}


def test_import_lines_give_what_a_walk_of_the_whole_tree_gives():
    files = [p for d in PACKAGE_DIRS for p in (ROOT / d).rglob("*.py")]
    assert len(files) > 50
    for f in files:
        data = f.read_bytes()
        # all of them (a line inside a string, e.g. a generated module's template, may
        # add one: one more module hashed into the key, never one missed)
        assert _walked(data) <= {_key(n) for n in compile_cache.import_nodes(data)}, f


@pytest.mark.parametrize("src", [
    "import a\nimport b.c as d, e\n",
    "from . import x\nfrom ..p import (y,\n    z as w)  # a comment\n",
    "from .q import r, \\\n    s\n",
    "def f():\n    if 1:\n        from .inner import g\n    return g\n",
    "x = 1; import hidden\n",                    # after ";": the whole tree is walked
    "if x: from .cond import h\n",               # after ":"
    "from .m import (a,  # (a comment with a parenthesis)\n    b)\n",
    '"""A docstring.\n\nimport of the data is lazy: see below\n"""\nimport real\n',
    "s = '''\nfrom nowhere import nothing\n'''\nimport real\n",
])
def test_import_lines_on_the_hard_cases(src):
    data = src.encode()
    got = {_key(n) for n in compile_cache.import_nodes(data)}
    # never fewer imports than the tree holds (an import missed would leave stale
    # machine code in the cache); a line inside a string may add one more module to hash
    assert _walked(data) <= got
    assert got - _walked(data) <= {("ImportFrom", "nowhere", 0, (("nothing", None),))}


def _oscillator():
    a = Assembly()
    a.add_dof("m", mass=1.5)
    a.add_spring("m", "ground", k=40.0, name="s")
    a.add_damper("m", "ground", c=0.3, name="d")
    a.add_force("m", Harmonic(0.0, 2.0, 3.0, 0.0), name="f")
    return a


@pytest.fixture(scope="module")
def energy_off_then_on(tmp_path_factory):
    return functools.cache(lambda method: _energy_off_then_on(
        method, tmp_path_factory.mktemp(f"cache-{method}")))


def _energy_off_then_on(method, cache):
    """The oscillator run on its generated code (in a cache of its own: a module no
    other test compiled, so numba's overloads here are this run's), with the energy
    account off and then on: the runs and the number of compiled ``powers`` overloads
    after each (the RK45 pair serves both tests below: one compile of each loop)."""
    opts = dict(rtol=1e-10) if method == "RK45" else dict(h=1e-4)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HYSTMECH_ENGINE", "0")
        mp.setenv("HYSTMECH_CACHE", str(cache))
        a = _oscillator()
        r0 = simulate(a, (0.0, 2.0), method=method, energy=False, **opts)
        mod = r0.model.code.mod
        loop = mod.rk45 if method == "RK45" else mod.projection
        n0 = len(mod.powers.overloads)
        sig0 = [str(s).count("none") for s in loop.signatures]
        r1 = simulate(a, (0.0, 2.0), method=method, energy=True, **opts)
        n1 = len(mod.powers.overloads)
        e = r1.energy()                             # quadratures from fun_full's powers
        pw = r1._eval()["PW"]                       # sample evaluation's powers
        n2 = len(mod.powers.overloads)
    return dict(r0=r0, r1=r1, n_off=n0, sig_off=sig0, n_on=n1, n_samples=n2, energy=e,
                pw=pw, overloads=list(mod.powers.overloads))


def test_energy_integrands_compiled_once_for_the_loop_and_the_samples(energy_off_then_on):
    """fun_full called powers with the literal offset N and the sample evaluation with
    the literal 0: numba compiled powers twice per structure (0.4-0.9 s CPU). Both now
    pass an int64: one compile, and the integrands are still right (energy balance of
    the integrated account; c·v² of the damper at the samples)."""
    run = energy_off_then_on("RK45")
    r, e, pw = run["r1"], run["energy"], run["pw"]
    assert abs(e["residual"]).max() < 1e-7 * max(1.0, abs(e["input"]).max())
    v = r.v("m")
    np.testing.assert_allclose(pw[:, 0], 0.3 * v * v, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(pw[:, 1], 2.0 * np.cos(3.0 * r.t) * v, rtol=1e-12, atol=1e-14)
    assert run["n_samples"] == 1, run["overloads"]


@pytest.mark.parametrize("method", ["RK45", "projection"])
def test_a_run_without_the_energy_account_compiles_no_integrands(method,
                                                                 energy_off_then_on):
    """energy=False (the shipped scenarios' runs, the first-result benchmark) passes None
    to the generated loop, whose energy branch numba then drops before typing: powers
    is not compiled into the loop (it was: ~1 s CPU of the first RK45 run). The same
    loop with energy=True still integrates the account (energy balance to 1e-7 for
    RK45; projection's left-point quadrature is first order: a looser bound) and the
    states do not depend on the flag (bitwise)."""
    run = energy_off_then_on(method)
    r0, r1 = run["r0"], run["r1"]
    assert run["n_off"] == 0
    assert run["sig_off"] == [1]
    assert run["n_on"] == 1
    assert np.array_equal(r0.x("m"), r1.x("m")) and np.array_equal(r0.v("m"), r1.v("m"))
    e = run["energy"]
    tol = 1e-7 if method == "RK45" else 1e-2
    assert abs(e["residual"]).max() < tol * max(1.0, abs(e["input"]).max())


RUNNER = """
import threading

import numpy as np

from hystmech.runner_io import ScenarioOutput


def run(cfg, out, progress):
    names = [t.name for t in threading.enumerate()]
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([0.0, 1.0], [0.0, 1.0])
    return ScenarioOutput(summary={"threads": names}, timeseries={"t": np.arange(3.0)},
                          figures={"line": fig})
"""


def test_pyplot_imported_beside_the_runner(tmp_path):
    """run_scenario starts the pyplot import in a thread before the runner (the runner's
    own import waits for it), draws on Agg, and leaves no thread running after the run."""
    import threading

    from hystmech.scenario import run_scenario

    (tmp_path / "myrunner.py").write_text(RUNNER)
    (tmp_path / "s.toml").write_text('title = "t"\nrunner = "myrunner:run"\n')
    before = os.environ.get("MPLBACKEND")
    res = run_scenario(str(tmp_path / "s.toml"), tmp_path / "out", trust_runner=True,
                       progress=False)
    assert "hystmech-import-pyplot" in res.summary["threads"] or \
        "matplotlib.pyplot" in sys.modules     # (already imported: the thread ended at once)
    assert (tmp_path / "out" / "line.png").read_bytes()[:4] == b"\x89PNG"
    assert not [t for t in threading.enumerate() if t.name == "hystmech-import-pyplot"]
    import matplotlib

    assert matplotlib.get_backend().lower() == "agg"
    assert os.environ.get("MPLBACKEND") == before       # as it was before the run


def test_a_runner_importing_pyplot_at_once_draws_on_agg(tmp_path):
    """In a new process (matplotlib not imported yet) the runner imports pyplot before
    the thread can have selected Agg: $MPLBACKEND does it."""
    code = f"""
import os, sys
from pathlib import Path
from hystmech.scenario import run_scenario
assert "matplotlib" not in sys.modules
os.environ.pop("MPLBACKEND", None)
res = run_scenario({str(tmp_path / "s.toml")!r}, Path({str(tmp_path / "out")!r}),
                   trust_runner=True, progress=False)
import matplotlib
print(res.summary["threads"][0], matplotlib.get_backend(), os.environ.get("MPLBACKEND"))
"""
    (tmp_path / "myrunner.py").write_text(RUNNER.replace(
        "    names = [t.name for t in threading.enumerate()]\n    import matplotlib.pyplot as plt\n",
        "    import matplotlib.pyplot as plt\n    names = [plt.get_backend()]\n"))
    (tmp_path / "s.toml").write_text('title = "t"\nrunner = "myrunner:run"\n')
    env = {k: v for k, v in os.environ.items() if k not in ("MPLBACKEND", "DISPLAY")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    # the runner drew on Agg; after the run $MPLBACKEND is unset again
    assert out.stdout.lower().split() == ["agg", "agg", "none"]


PROBE = """
import os


def record(path):
    with open(path, "w") as f:
        f.write(f"{os.sched_getscheduler(0)} {os.getsid(0)} {os.getpgid(0)}")
"""


@pytest.mark.skipif(not hasattr(os, "SCHED_IDLE"), reason="no SCHED_IDLE on this OS")
def test_background_compile_stays_behind_the_run(tmp_path, monkeypatch):
    """The engine's background compile (compile_cache.background) runs as SCHED_IDLE in
    the caller's session: with autogroup scheduling (Linux's default) a child in a
    session of its own was weighed like the run itself, whatever its nice value, and
    took a full share of the CPU from the first `hystmech run` it was to stay behind."""
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core: nothing runs in the background")
    (tmp_path / "probe_sched.py").write_text(PROBE)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path),
                                                      os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv(compile_cache.ENV, str(tmp_path / "cache"))
    monkeypatch.delenv(compile_cache.PREFETCH, raising=False)    # a user's default
    out = tmp_path / "sched"
    child = compile_cache.background("probe", "probe_sched:record", (out,))
    assert child is not None
    assert child.wait(timeout=120) == 0
    policy, sid, pgid = map(int, out.read_text().split())
    assert policy == os.SCHED_IDLE
    assert sid == os.getsid(0)                    # the caller's session (and autogroup)
    assert pgid == child.pid != os.getpgid(0)     # its own group: no terminal Ctrl-C
