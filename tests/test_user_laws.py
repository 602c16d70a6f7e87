"""A user's numba law called through C function pointers (systems/law_wrappers.py): the
cfunc wrappers and the pointer-calling intrinsics give the kernels' own results bit for
bit, are built once per kernel objects, and a new process loads them from the disk cache
without compiling the user's kernels again."""
import math
import textwrap

import numpy as np
from numba import njit

from hystmech.components.base import ForceElement
from hystmech.systems import law_wrappers as U

from _rigs import in_a_new_process

# a Dahl-like law with a user shape function g (a closure): F = σ0 z + σ1 ż,
# ż = v − σ0 |v| z / g(v), with its analytic Jacobian (the LuGre form, user g)
_LAW = textwrap.dedent('''
    import math
    import numpy as np
    from numba import njit

    def make(vs):
        @njit
        def g(v):
            return 1.0 + 0.5 * math.exp(-(v / vs) ** 2)

        @njit
        def rate(x, u, v, p, d):
            d[0] = v - p[0] * abs(v) * x[0] / g(v)

        @njit
        def force(x, u, v, p):
            return p[0] * x[0] + p[1] * (v - p[0] * abs(v) * x[0] / g(v)) + p[2] * u

        @njit
        def jac(x, u, v, p, J):
            a = p[0] * abs(v) / g(v)
            J[0, 0] = -a
            J[0, 1] = 0.0
            J[0, 2] = 1.0 - p[0] * math.copysign(1.0, v) * x[0] / g(v)
            J[1, 0] = p[0] - p[1] * a
            J[1, 1] = p[2]
            J[1, 2] = p[1] * J[0, 2]
        return force, rate, jac
''')


@njit
def _through(tab, x, u, v, p):
    d = np.empty(x.size)
    F = U.call_fr(tab, x, u, v, p, d)
    Je = np.full((x.size + 1, x.size + 2), -7.0)
    ok = U.call_jac(tab, x, u, v, p, Je)
    Jp = np.full((x.size + 1, p.size), -7.0)
    okp = U.call_pjac(tab, x, u, v, p, Jp)
    return F, d, Je, ok, Jp, okp


def _element(force, rate, jac):
    el = ForceElement.__new__(ForceElement)
    el.force, el.rate, el.jac, el.pjac = force, rate, jac, None
    return el


def test_pointer_call_bitwise_and_once(tmp_path, monkeypatch):
    (tmp_path / "userlaw_mod.py").write_text(_LAW)
    monkeypatch.syspath_prepend(str(tmp_path))
    import userlaw_mod
    force, rate, jac = userlaw_mod.make(1e-3)
    el = _element(force, rate, jac)
    tab = U.law_table(el, ("fr", "jac", "pjac"))
    assert tab[0] >= U.TABLE_MIN and tab[1] >= U.TABLE_MIN and tab[2] == 0  # no pjac
    p = np.array([1e5, 300.0, 2.0])
    rng = np.random.default_rng(3)
    for _ in range(20):
        x = rng.normal(0.0, 1e-5, 1)
        u, v = rng.normal(0.0, 1e-3), rng.normal(0.0, 2e-3)
        F, d, Je, ok, Jp, okp = _through(int(tab.ctypes.data), x, u, v, p)
        d0 = np.empty(1)
        rate(x, u, v, p, d0)
        J0 = np.zeros((2, 3))
        jac(x, u, v, p, J0)
        # the kernels' own values, bit for bit (an indirect call adds no arithmetic)
        assert F == force(x, u, v, p) and np.array_equal(d, d0) and np.array_equal(Je, J0)
        assert ok and not okp and (Jp == -7.0).all()        # no pjac: left as it is
        # and the law itself: ż = v − σ0|v|z/g(v), g(v) = 1 + 0.5 exp(−(v/vs)²)
        g = 1.0 + 0.5 * math.exp(-(v / 1e-3) ** 2)
        assert d[0] == v - 1e5 * abs(v) * x[0] / g
    # one wrapper per kernel objects; a new closure value: another
    assert U.wrapper("fr", (force, rate)) is U.wrapper("fr", (force, rate))
    f2, r2, _ = userlaw_mod.make(2e-3)
    assert U.wrapper("fr", (f2, r2)) is not U.wrapper("fr", (force, rate))


def test_new_process_loads_the_wrappers(tmp_path):
    (tmp_path / "userlaw_mod.py").write_text(_LAW)
    code = textwrap.dedent('''
        import ctypes
        import numpy as np
        import userlaw_mod
        from hystmech.components.base import ForceElement
        from hystmech.systems import law_wrappers as U
        force, rate, jac = userlaw_mod.make(1e-3)
        el = ForceElement.__new__(ForceElement)
        el.force, el.rate, el.jac, el.pjac = force, rate, jac, None
        tab = U.law_table(el, ("fr", "jac"))
        x, p, d = np.array([3e-6]), np.array([1e5, 300.0, 2.0]), np.empty(1)
        ptr = lambda a: a.ctypes.data_as(ctypes.POINTER(ctypes.c_double))
        F = U.wrapper("fr", (force, rate)).ctypes(ptr(x), 1, 1e-4, -2e-3, ptr(p), 3, ptr(d))
        OUT = [F, float(d[0]), force(x, 1e-4, -2e-3, p)]
    ''')
    first, out1 = in_a_new_process(code, path=[tmp_path])
    second, out2 = in_a_new_process(code, path=[tmp_path])
    assert out1[0] == out1[2] and out2 == out1           # the kernel's value, both times
    names = lambda c: sorted({n.split(".")[-1] for n in c if "userlaw_mod" in n})
    # the first process compiles the user's kernels for the wrappers (rate, jac); the
    # second loads both wrappers from the disk cache: it compiles only what the direct
    # reference call force(...) needs (force and its callee g)
    assert names(first) == ["force", "g", "jac", "rate"]
    assert names(second) == ["force", "g"]


def test_engine_runs_a_user_law_bitwise_as_generated_code():
    # LuGre with the user's own Stribeck curve (closure kernels, not module-level ones)
    # beside a shipped Dahl: the engine calls the LuGre through its C wrappers; the run
    # equals the structure's generated code bit for bit (no arithmetic added)
    from hystmech.components import Dahl, LuGre
    from hystmech.systems import Assembly, Harmonic
    from hystmech.systems.methods import engine as E

    from _rigs import assert_same_run, engine_and_generated

    g = njit(lambda v: 1.0 + 0.5 * math.exp(-abs(v / 0.01)))
    a = Assembly()
    a.add_dof("m", mass=1.0)
    a.add_spring("m", "ground", k=1e3)
    a.add_force("m", Harmonic(0.0, 2.0, 10.0))
    a.add_element("l", LuGre(sigma0=1e4, sigma1=30.0, Fc=1.0, Fs=1.5, vs=0.01, g=g), "m",
                  "ground")
    a.add_element("d", Dahl(rho=2e4, Fc=0.5), "m", "ground")
    for method, kw in (("projection", {"h": 1e-5}), ("RK45", {}), ("auto", {})):
        r, gen = engine_and_generated(a, (0.0, 0.2), method=method, **kw)
        assert r.model.prm.EL[0, 6] >= U.TABLE_MIN            # through its table
        assert np.array_equal(r.y, gen.y), method
        assert_same_run(r, gen, 1e-300, abs_quad=0.0, observed=False)


def test_a_new_process_compiles_no_module_for_a_user_law(tmp_path):
    # the engine's projection loop compiled (once per install); a new process runs a
    # user-law model (LuGre with a user g beside a Dahl) and a second structure with
    # the same kernels: no generated module (_hystmech_asm_*) is compiled, and the
    # second process loads the LuGre's C wrappers from the disk cache (no rate compile)
    from hystmech.systems.methods import engine as E
    from hystmech.systems.model import Model

    E.warm("projection", Model)
    (tmp_path / "userg.py").write_text(
        "import math\nfrom numba import njit\n\n\n@njit\ndef g(v):\n"
        "    return 1.0 + 0.5 * math.exp(-abs(v / 0.01))\n")
    code = textwrap.dedent('''
        import os
        os.environ["HYSTMECH_ENGINE"] = "1"
        from hystmech.components import Dahl, LuGre
        from hystmech.systems import Assembly, Harmonic, simulate
        import userg

        def build(extra):
            a = Assembly()
            a.add_dof("m", mass=1.0)
            a.add_spring("m", "ground", k=1e3)
            a.add_force("m", Harmonic(0.0, 2.0, 10.0))
            a.add_element("l", LuGre(sigma0=1e4, sigma1=30.0, Fc=1.0, Fs=1.5, vs=0.01,
                                     g=userg.g), "m", "ground")
            a.add_element("d", Dahl(rho=2e4, Fc=0.5), "m", "ground")
            if extra:
                a.add_dof("m2", mass=2.0)
                a.add_spring("m", "m2", k=500.0)
            return a
        r = simulate(build(False), (0.0, 0.2), method="projection", h=1e-5)
        r2 = simulate(build(True), (0.0, 0.2), method="projection", h=1e-5)
        OUT = [r.y[:, 0].tolist(), r.model.engine() is not None,
               r2.model.engine() is not None]
    ''')
    first, out1 = in_a_new_process(code, path=[tmp_path])
    second, out2 = in_a_new_process(code, path=[tmp_path])
    assert out1[1] and out1[2] and out2 == out1          # on the engine, the same run
    for names in (first, second):
        assert not [n for n in names if n.startswith("_hystmech_asm_")], names
    assert not [n for n in second if n.endswith(".rate")], second


def test_a_sum_of_shipped_laws_compiles_nothing_in_a_new_process(tmp_path):
    # Masing + viscous damper (Bastien et al. (2007), eq. (11c)) as one SumElement: its
    # kernels are generated per sum, so calling them from Python (the explicit step's
    # stability probe, initial_tangent) compiled each per process; a second process of
    # the same model, and a new structure with the same sum, compile nothing at all
    from hystmech.systems.methods import engine as E
    from hystmech.systems.model import Model

    E.warm("projection", Model)
    code = textwrap.dedent('''
        import os
        os.environ["HYSTMECH_ENGINE"] = "1"
        from hystmech.components import LinearDamper, Masing
        from hystmech.systems import Assembly, Harmonic, simulate

        def build(n):
            a = Assembly()
            for i in range(n):
                a.add_dof(f"m{i}", mass=1.0)
                a.add_element(f"e{i}", Masing(k=1e3, k0=0.0, alpha=2.0) + LinearDamper(c=2.0),
                              f"m{i}", "ground" if i == 0 else f"m{i - 1}")
            a.add_force("m0", Harmonic(0.0, 5.0, 10.0))
            return a
        r = simulate(build(1), (0.0, 0.05), method="projection", h=1e-5)
        r2 = simulate(build(2), (0.0, 0.05), method="projection", h=1e-5)
        OUT = [r.y[:, 0].tolist(), r.model.engine() is not None,
               r2.model.engine() is not None]
    ''')
    _, out1 = in_a_new_process(code)
    second, out2 = in_a_new_process(code)
    assert out1[1] and out1[2] and out2 == out1
    assert second == [], second


@njit
def _raising_force(x, u, v, p):
    if abs(u) > p[1]:
        raise ValueError("u is out of this law's range")
    return p[0] * x[0]


@njit
def _raising_rate(x, u, v, p, d):
    d[0] = v - abs(v) * x[0]


@njit
def _raising_advance(x, u0, u1, dt, v, p, rtol):
    x[0] += dt * (v - abs(v) * x[0])


class _Raising(ForceElement):
    kind = "smooth"
    state_names = ("z",)
    force = staticmethod(_raising_force)
    rate = staticmethod(_raising_rate)
    advance = staticmethod(_raising_advance)

    def __init__(self, *, k, umax):
        self._setup(dict(k=k, umax=umax), [k, umax], [0.0])


def test_a_user_kernel_that_raises_stops_the_run_never_a_silent_zero_force():
    """An exception cannot cross the C call: a bare cfunc prints it and returns 0.0 (a
    wrong force, the run going on to its end). The wrapper gives NaN instead, so the
    engine's loops stop where the kernel raised — |u| first exceeds umax = 0.05 m at
    t ≈ 0.04 s (x(0) = 0.01 m, ẋ(0) = 1 m/s) — with the part computed so far."""
    import pytest

    from hystmech.systems import Assembly, SimulationError, simulate

    a = Assembly()
    a.add_dof("m", mass=1.0, x0=0.01, v0=1.0)
    a.add_spring("m", "ground", k=10.0)
    a.add_element("b", _Raising(k=5.0, umax=0.05), "m")
    for method in ("projection", "RK45"):
        with pytest.raises(SimulationError) as err:
            simulate(a, (0.0, 1.0), method=method)
        part = err.value.partial
        assert part.model.engine() is not None, method      # on the engine
        # it stopped within a step of where |x| first exceeds umax, not at the end
        assert 0.035 < part.t[-1] < 0.045, (method, part.t[-1])
        assert 0.049 < np.max(np.abs(part.x("m"))) < 0.0501, method
