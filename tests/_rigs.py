"""What several test files share: the reference rigs, the engine-vs-generated comparison
of a run and the new-process compile probe.

A structure compared with its generated code (systems/codegen.py) costs a compile of its
module per method; the engine has no per-structure code (its branches are per law, per
kind of connection end, per input kind and per observed kind), so each method is
compared on ONE structure holding every branch, shared by the files that compare it:
the projection scheme on :func:`rig_all_parts` observed through :data:`SIGNAL`
(tests/test_engine.py, tests/test_tiered.py), run once per worker by
:func:`projection_pair` (the generated module then comes from the disk cache in the
other worker).
"""
import functools
import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from hystmech.components import BoucWen, Dahl, LuGre, Masing
from hystmech.systems import Assembly, Harmonic, Observe, simulate
from hystmech.systems.methods import engine as E


# -- rigs ---------------------------------------------------------------------------------

def two_masses() -> Assembly:
    """The common frame of the 2-DOF reference rigs: gravity, m1 (displaced) and m2, an
    imposed base, a preloaded spring m1-ground and a link m2-m1 (each file adds its
    laws, dampers and forces)."""
    a = Assembly(gravity=9.81)
    a.add_dof("m1", mass=1.0, x0=0.001)
    a.add_dof("m2", mass=2.0)
    a.impose("base", Harmonic(0.0, 1e-3, 30.0, 0.2))
    a.add_spring("m1", "ground", k=1e3, u0=0.0005, preload=0.2)
    a.add_spring("m2", "m1", k=5e2, name="link")
    return a


def rig_bw_lugre(omega1: float = 20.0, omega2: float = 13.0) -> Assembly:
    """:func:`two_masses` with a damper to the base, a Bouc-Wen isolator to ground, a
    LuGre contact between the masses and two harmonic forces (omega1, omega2 [rad/s])."""
    a = two_masses()
    a.add_damper("base", "m2", c=1.0)
    a.add_element("bw", BoucWen(A=5e4, beta=800.0, gamma=-1100.0, n=1.0), "m1", "ground")
    a.add_element("lugre", LuGre(sigma0=1e4, sigma1=30.0, Fc=1.0, Fs=1.5, vs=0.01),
                  "m2", "m1")
    a.add_force("m1", Harmonic(0.1, 2.0, omega1, 0.3))
    a.add_force("m2", Harmonic(0.0, 1.0, omega2))
    return a


class Wave:
    """An input numba cannot compile (a callable object): sampled into tables."""

    def __call__(self, t):
        return 0.5 * math.sin(7.0 * t)


def rig_all_parts() -> Assembly:
    """Every part of the projection record in one structure (four DOFs): DOF-DOF and
    ground connections, the ground and an imposed motion as first and as second end (the
    engine's tables map them to the nodes' last slot and to an imposed node), a spring and
    a damper on the same pair, harmonic and sampled (Python) inputs, an inclusion's box
    (Masing, with and without k0), four laws. One structure compared costs one compile of
    its generated projection loop; three rigs with one part each cost three, and test no
    branch more."""
    a = Assembly(gravity=9.81)
    a.add_dof("m1", mass=1.0, x0=0.001)
    a.add_dof("m2", mass=2.0)
    a.add_dof("m", mass=0.8, x0=-0.002)
    a.add_dof("n", mass=0.3)
    a.impose("base", Harmonic(0.0, 1e-3, 30.0, 0.1))
    a.add_spring("m1", "ground", k=1e3, u0=0.0005, preload=0.2)
    a.add_spring("m2", "m1", k=5e2, name="link")
    a.add_damper("m1", "ground", c=2.0)
    a.add_damper("m2", "m1", c=1.0, name="link_c")
    a.add_element("dahl", Dahl(rho=2e4, Fc=1.0), "m1", "ground")
    a.add_element("lugre", LuGre(sigma0=1e4, sigma1=30.0, Fc=1.0, Fs=1.5, vs=0.01), "m2", "m1")
    a.add_force("m1", Harmonic(0.1, 2.0, 20.0, 0.3))
    a.add_force("m2", Wave())
    a.add_spring("m", "base", k=2e3, name="k")
    a.add_element("masing", Masing(k=1e3, k0=0.0, alpha=2.0), "m", "base")
    a.add_element("bw", BoucWen(A=5e4, beta=800.0, gamma=-1100.0, n=1.0), "m", "ground")
    # ground- and imposed-first ends, a spring and a damper on the same pair
    a.add_spring("ground", "m", k=8e2, u0=0.001, preload=-0.3)
    a.add_damper("ground", "m", c=1.5)
    a.add_spring("n", "m", k=4e2, name="nm")
    a.add_damper("base", "n", c=0.7, name="bn")
    a.add_element("dahl_n", Dahl(rho=1e4, Fc=0.8), "ground", "n")
    a.add_element("masing_b", Masing(k=5e2, k0=1e2, alpha=1.0), "base", "m")
    a.add_force("n", Harmonic(0.0, 1.5, 15.0))
    return a


# the observed signal's names are structure (compiled into the generated code: one module
# per name list), its window is data: one list with springs, dampers and elements out of
# their order, three windows (0 = from the start)
SIGNAL = ("masing_b", "bn", "link", "nm", "lugre", "k", "dahl_n", "link_c", "masing")
WINDOWS = (0.05, 0.0, 0.02)


# -- engine vs generated code ----------------------------------------------------------------

def engine_and_generated(a, span, **kw):
    """(run on the engine, run on the structure's generated code) of ``simulate(a,
    span, **kw)``, each checked to have run where it was sent; the engine's run checked
    to have built no generated module."""
    with E.use("engine"):
        r = simulate(a, span, **kw)
    assert r.model.engine() is not None                # the engine ran
    assert r.model._code is None                       # the structure's module not built
    with E.use("generated"):
        g = simulate(a, span, **kw)
    assert g.model.engine() is None
    return r, g


def assert_same_run(r, g, rel, abs_quad=1e-15, observed=True):
    """Engine run ``r`` equal to generated run ``g`` to ``rel`` (the same operations in
    the same order): states relative to each state's largest value, the energy
    quadratures, the observed signal's statistics and every element's force at the
    samples (the two sample evaluations)."""
    scale = np.max(np.abs(g.y), axis=0) + 1e-300
    assert np.max(np.abs(r.y - g.y) / scale) < rel
    np.testing.assert_allclose(r.quad, g.quad, rtol=rel, atol=abs_quad)
    if observed:
        for k in ("max", "min", "amplitude"):
            assert r.observed[k] == pytest.approx(g.observed[k], rel=rel, abs=abs_quad), k
    for name in [e.name for e in r.model.asm.elements]:
        np.testing.assert_allclose(r.force(name), g.force(name), rtol=rel, atol=rel)


@functools.cache
def projection_pair():
    """The projection scheme's comparison, run once per process: for each window of
    :data:`WINDOWS`, (engine run, generated run) of :func:`rig_all_parts` over 0.1 s at
    h = 1e-5 with the energy account and :data:`SIGNAL` observed."""
    a = rig_all_parts()
    return a, [engine_and_generated(a, (0.0, 0.1), method="projection", h=1e-5,
                                    energy=True, observe=Observe(SIGNAL, window=w))
               for w in WINDOWS]


# -- a new process -----------------------------------------------------------------------------

_PROBE = r"""
import json, sys
from numba.core import event as ev
compiled = []
class _Listener(ev.Listener):
    def on_start(self, e):
        pass
    def on_end(self, e):
        f = e.data["dispatcher"].py_func
        compiled.append(f"{f.__module__}.{f.__qualname__}")
ev.register("numba:compile", _Listener())
sys.path[:0] = json.loads(sys.argv[1])
ns = {}
exec(compile(sys.argv[2], "<probe>", "exec"), ns)
print(json.dumps([compiled, ns.get("OUT")]))
"""


def in_a_new_process(code: str, path=(), timeout=300):
    """Run ``code`` in a new Python process (this environment, ``path`` put first on
    sys.path) recording every top-level numba compile (numba's event API). Returns
    (names "module.qualname" of the functions compiled, the JSON value ``code`` left in
    its variable ``OUT``)."""
    res = subprocess.run([sys.executable, "-c", _PROBE, json.dumps([str(p) for p in path]),
                          code], capture_output=True, text=True, timeout=timeout,
                         env=dict(os.environ))
    assert res.returncode == 0, res.stderr[-2000:]
    compiled, out = json.loads(res.stdout.strip().splitlines()[-1])
    return compiled, out
