"""What keeps the shipped laws' own kernels cheap to compile (once per install, numba's
disk cache) without changing a bit of what they compute: the tabulated arc-length map
(components/power_law_table.py) inlines its table evaluation four times, not once per
branch (21 copies made Bouc-Wen's first compile 30 s); the series map
(components/power_law_map.py) calls side_travel from one site with a run-time flag (a
constant True/False is a literal type: one compile per value)."""
import ast
import inspect
import textwrap

import numpy as np
import pytest

from _rigs import in_a_new_process
from hystmech.components import power_law_map as plm
from hystmech.components import power_law_table as plt_


def _inlined_copies(disp, target) -> int:
    """How many copies of the compiled function ``target`` numba inlines into ``disp``:
    its calls of ``target`` plus, through every inline="always" callee, theirs."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(disp.py_func)))
    glb = disp.py_func.__globals__
    n = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            f = glb.get(node.func.id)
            if f is target:
                n += 1
            elif getattr(f, "targetoptions", {}).get("inline") == "always":
                n += _inlined_copies(f, target)
    return n


def test_table_map_inlines_its_table_evaluation_at_most_four_times():
    # one forward and one inverse evaluation for the start and for the end of a
    # segment (towards 0, then away): four; each copy of _pp is a loop and a degree-9
    # polynomial that numba types, inlines and lowers again
    assert plt_._pp.targetoptions.get("inline") == "always"     # inlined: per call speed
    assert _inlined_copies(plt_._advance, plt_._pp) <= 4
    # the by-name functions (table building, tests): one copy each
    for f in (plt_.f_sat, plt_.inv_sat, plt_.f_grow, plt_.inv_grow, plt_.f_above,
              plt_.inv_above):
        assert _inlined_copies(f, plt_._pp) == 1


def test_series_map_calls_side_travel_from_one_site_with_a_run_time_flag():
    tree = ast.parse(textwrap.dedent(inspect.getsource(plm.power_law_advance.py_func)))
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Name) and n.func.id == "side_travel"]
    assert len(calls) == 1
    assert not isinstance(calls[0].args[1], ast.Constant)


def _two_sided(y, L, q0, q1, q2, m, rtol):
    # power_law_advance as its short step or two side_travel calls (towards 0 up to 0,
    # then away), each typed with a plain boolean from Python
    tol = min(max(1e-3 * rtol, 1e-16), 1e-6)
    acc = 0.1 * np.sqrt(tol)
    sa = 1.0 if q0 > 0.0 else -1.0
    a = abs(q0)
    ka = q1 + q2 if sa > 0.0 else q2 - q1
    kb = q2 - q1 if sa > 0.0 else q1 + q2
    if y != 0.0:
        yn = plm._short_step(y, L, q0, q1 + q2 if y > 0.0 else q2 - q1, m, tol, 0.0)
        if yn == yn:
            return yn
    if y * sa < 0.0:
        w, left = plm.side_travel(abs(y), True, L, a, sa * kb, m, tol, acc)
        if left <= 0.0 or w != 0.0:
            return -sa * w
        L = left
    w, _ = plm.side_travel(abs(y) if y * sa > 0.0 else 0.0, False, L, a, sa * ka, m, tol,
                           acc)
    return sa * w


@pytest.mark.parametrize("q1, q2, m", [(0.5, 0.5, 2.0), (2.0, 0.5, 0.6), (0.5, 1.5, 0.6),
                                       (3e-4, 2e-4, 1.5), (0.8, -1.1, 0.8)])
def test_series_map_is_bit_for_bit_its_two_sides(q1, q2, m):
    # starts on both sides of 0, segments that stay on the return branch, reach 0 and go
    # on, go past the saturation value; long segments (no short Taylor step)
    rng = np.random.default_rng(5)
    sides = {"toward, stays": 0, "toward, crosses 0": 0, "away": 0}
    for _ in range(300):
        q0 = rng.choice([-1.0, 1.0]) * rng.uniform(0.5, 2.0)
        y = rng.uniform(-1.5, 1.5)
        L = 10.0 ** rng.uniform(-1.0, 0.5)
        got = plm.power_law_advance(y, L, q0, q1, q2, m, 1e-8, 0.0)
        assert got == _two_sided(y, L, q0, q1, q2, m, 1e-8)
        if y * q0 < 0.0:
            sides["toward, crosses 0" if got * q0 > 0.0 else "toward, stays"] += 1
        else:
            sides["away"] += 1
    assert min(sides.values()) > 0, sides


def _composed(y, L, q0, q1, q2, m, T, o):
    # table_advance as its tables: the region's σ(τ) at the start, shifted by the
    # scaled arc length, inverted at the end (the switch at 0 where a return branch's σ
    # reaches 0); each table through its by-name function
    fwd = {"S": plt_.f_sat, "G": plt_.f_grow, "A": plt_.f_above}
    inv = {"S": plt_.inv_sat, "G": plt_.inv_grow, "A": plt_.inv_above}
    sa = 1.0 if q0 > 0.0 else -1.0
    a = abs(q0)
    ba = sa * (q1 + q2 if sa > 0.0 else q2 - q1)
    bb = sa * (q2 - q1 if sa > 0.0 else q1 + q2)

    def scale(b):
        lam = (a / abs(b)) ** (1.0 / m)
        return lam, a / lam, 1.0 / lam
    if y * sa < 0.0:
        lam, al, il = scale(bb)
        f = "S" if bb > 0.0 else "G"
        s1 = fwd[f](T, o, abs(y) * il) - L * al
        if s1 > 0.0:
            return -sa * lam * inv[f](T, o, s1), f"toward {f}"
        L = -s1 / al
        s, f, where = 0.0, ("S" if ba > 0.0 else "G"), "through 0 "
    else:
        t = abs(y) * scale(ba)[2]
        f = "G" if ba < 0.0 else ("A" if t > 1.0 else "S")
        s, where = fwd[f](T, o, t), ""
    lam, al, il = scale(ba)
    return sa * lam * inv[f](T, o, s + L * al), f"{where}away {f}"


@pytest.mark.parametrize("q1, q2, m", [(0.5, 0.3, 2.0), (2.0, 0.5, 0.6), (0.5, 1.5, 0.6),
                                       (0.8, -1.1, 0.8)])
def test_table_map_is_bit_for_bit_its_tables_region_by_region(q1, q2, m):
    # every region of the tables: below the saturation (S), above it (A), the growing
    # branch (G, hardening or a return branch with γ > β), towards 0 on S and G, and
    # through 0 onto the other side
    T = plt_.table_vector(m)
    o = plt_._MEMO + 1
    Tr = T.view()
    Tr.flags.writeable = False          # the by-name functions' read-only vector
    rng = np.random.default_rng(7)
    seen = set()
    for _ in range(300):
        q0 = rng.choice([-1.0, 1.0]) * rng.uniform(0.5, 2.0)
        y = rng.uniform(-1.3, 1.3) * (abs(q0) / max(abs(q1 + q2), abs(q1 - q2))) ** (1 / m)
        L = 10.0 ** rng.uniform(-3.0, 0.0)
        got = plt_.table_advance(y, L, q0, q1, q2, m, 1e-8, T, 0, np.nan, np.nan)
        if got != got:
            continue                    # outside the tables: the series map's part
        ref, region = _composed(y, L, q0, q1, q2, m, Tr, o)
        assert got == ref, (y, L, q0, region)
        seen.add(region)
    # |q2| < q1: both sides' away branches saturate (S, or A beyond the saturation value)
    # and the return branches grow (G); |q2| > q1: one side of each kind
    want = {"away S", "away A", "toward G", "through 0 away S"}
    if abs(q2) > q1:
        want |= {"away G", "toward S", "through 0 away G"}
    assert seen == want


def test_duhem_compiles_its_adaptive_integrator_once_for_both_envelopes():
    # Duhem's kernels are built per pair of user envelopes (closures, compiled in every
    # process); one Dormand-Prince driver with a flag picking h_u or h_l is compiled
    # instead of one per envelope (2-3 s each). Counted with numba's event API on a new
    # pair; the result equals the same kernels run as Python (dp45 in plain floats)
    import math

    from numba.core import event as ev

    from hystmech import drive
    from hystmech.components import Duhem
    from hystmech.components.duhem import make_kernels
    from hystmech.drive import _drive_loop

    def hu(x):
        return 1.0 + 0.5 * x + 0.2 * math.sin(3.0 * x)

    def hl(x):
        return -1.0 + 0.5 * x - 0.1 * math.cos(2.0 * x)

    names = []

    class Listener(ev.Listener):
        def on_start(self, e):
            pass

        def on_end(self, e):
            names.append(e.data["dispatcher"].py_func.__qualname__)

    el = Duhem(A=6.0, hu=hu, hl=hl, F0=0.1)
    t = np.linspace(0.0, 2.0, 401)
    u = 1.5 * np.sin(2 * np.pi * t) + 0.3 * np.sin(2 * np.pi * 5.3 * t)
    listener = Listener()
    ev.register("numba:compile", listener)
    try:
        r = drive(el, t, u)
    finally:
        ev.unregister("numba:compile", listener)
    assert names.count("dp45_solve") == 1, names
    adv, _, frc, _, _, _ = make_kernels(hu, hl, compile_=False)
    F, X, bad_in, bad_F = _drive_loop.py_func(adv, frc, t, u, np.empty(0), el.x0.copy(),
                                              el.p, 1e-8, 1)
    assert (bad_in, bad_F) == (-1, -1)
    np.testing.assert_allclose(r.force, F, rtol=1e-13, atol=1e-13)
    assert np.ptp(r.force) > 1.5                   # both envelopes reached: a loop


_RK_NEW_PROCESS = r"""
import numpy as np
from hystmech.components._ode import rk_advance
from hystmech.components.bouc_wen import bouc_wen_rate
x = np.array([0.1])
rk_advance(bouc_wen_rate, x, 0.0, 0.4, -0.8, np.array([3.0, 40.0, 0.2, 1.5, 0.0]), 1e-9,
           np.ones(1))
OUT = x.tolist()
"""


def test_rk_advance_of_a_module_level_rate_is_loaded_from_disk_in_a_new_process(
        tmp_path, monkeypatch):
    # rk_advance (a law's rate over one input segment, adaptive Dormand-Prince; the
    # model-exchange FMU element's advance) took the rate kernel as an argument and was
    # compiled in every process; for a module-level kernel it is a generated module in
    # the generated-code cache: a new process loads it (no compile event), and each
    # segment is bit for bit the integrator run as Python on the same kernel
    from hystmech.components._ode import rk_advance
    from hystmech.components.bouc_wen import bouc_wen_rate

    monkeypatch.setenv("HYSTMECH_CACHE", str(tmp_path))
    rng = np.random.default_rng(3)
    p = np.array([3.0, 40.0, 0.2, 1.5, 0.0])
    x, xp = np.array([0.1]), np.array([0.1])
    steps = 0
    for _ in range(200):
        v, dt = rng.normal(0.0, 1.0), 10.0 ** rng.uniform(-3.0, 0.0)
        steps += rk_advance(bouc_wen_rate, x, 0.0, dt, v, p, 1e-9, np.ones(1))
        rk_advance.py_func(bouc_wen_rate.py_func, xp, 0.0, dt, v, p, 1e-9, np.ones(1))
        assert x[0] == xp[0]
        xp[0] = x[0]
    assert steps > 400                               # adaptive: several steps a segment
    assert any("rk_segment" in f.read_text() for f in tmp_path.glob("asm_*.py"))
    compiled, xn = in_a_new_process(_RK_NEW_PROCESS)
    assert [c for c in compiled if "_ode" in c or "_hystmech_asm_" in c] == [], compiled
    xr = np.array([0.1])
    rk_advance.py_func(bouc_wen_rate.py_func, xr, 0.0, 0.4, -0.8, p, 1e-9, np.ones(1))
    assert xn == xr.tolist()
