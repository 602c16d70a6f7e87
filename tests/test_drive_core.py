"""drive() and the Dahl law against closed forms."""
import numpy as np
import pytest

from hystmech import drive
from hystmech.components import Dahl, LuGre

from _rigs import in_a_new_process


def test_dahl_matches_exact_exponential_on_a_ramp():
    # on a monotone ramp w(u) = 1 + (w0 - 1) exp(-rho (u - u0)) exactly
    el = Dahl(rho=50.0, Fc=2.0, w0=-0.3)
    t = np.linspace(0, 1, 101)
    u = 0.1 * t
    r = drive(el, t, u)
    w_exact = 1 + (-0.3 - 1) * np.exp(-50.0 * u)
    assert np.max(np.abs(r.force - 2.0 * w_exact)) < 1e-12


def test_lugre_with_python_callable_g_matches_builtin_stribeck():
    import math

    t = np.linspace(0, 4, 401)
    u = np.sin(2 * t)
    a = LuGre(sigma0=3, sigma1=0.5, Fc=1, Fs=2, vs=0.7, beta=2.0)
    b = LuGre(sigma0=3, sigma1=0.5, Fc=1, Fs=2, vs=0.7, beta=2.0,
              g=lambda v: 1 + math.exp(-(abs(v) / 0.7) ** 2.0))
    ra, rb = drive(a, t, u), drive(b, t, u)
    assert np.max(np.abs(ra.force - rb.force)) < 1e-12


@pytest.mark.parametrize("kw, name", [
    (dict(t=[0, 1, 1], u=[0, 1, 2]), "t must be strictly increasing"),
    (dict(t=[0, 1, 2], u=[0, np.nan, 2]), "u must be finite"),
    (dict(t=[0, 1, 2], u=[0, 1]), "u must have the same length"),
    (dict(t=[0, 1, np.inf], u=[0, 1, 2]), "t must be finite"),
])
def test_drive_rejects_bad_input(kw, name):
    with pytest.raises(ValueError, match=name):
        drive(Dahl(rho=1, Fc=1), **kw)


@pytest.mark.parametrize("make", [
    lambda: Dahl(rho=40.0, Fc=2.0, w0=0.2),
    lambda: LuGre(sigma0=1e3, sigma1=3.0, Fc=1.0, Fs=1.5, vs=0.01, beta=2.0, sigma2=0.4),
    lambda: LuGre(sigma0=1.0, sigma1=1.0, Fc=1.0, Fs=2.0, vs=1.0),
])
def test_affine_fast_path_equals_the_general_segment_loop(make):
    # drive() reuses the affine segment map of one-state laws while v and dt stay within
    # 0.01·rtol; the general loop calls advance/force on every segment: both must agree
    # well within rtol
    from hystmech.drive import _drive_loop

    el = make()
    rng = np.random.default_rng(3)
    t = np.cumsum(np.r_[0.0, rng.choice([1e-3, 2e-3], 3000)])   # repeated and changing dt
    knots = np.r_[0.0, np.cumsum(rng.normal(0, 0.05, 30))]
    u = np.interp(t, np.linspace(0, t[-1], knots.size), knots)
    r = drive(el, t, u)
    F, X, bad_in, bad_F = _drive_loop(el.advance, el.force, t, u, np.empty(0), el.x0,
                                         el.p, 1e-8, 1)
    assert bad_in == -1 and bad_F == -1
    scale = np.max(np.abs(F))
    assert np.max(np.abs(r.force - F)) <= 1e-9 * scale
    assert np.max(np.abs(r.state[:, 0] - X[:, 0])) <= 1e-9 * max(np.max(np.abs(X)), 1e-300)


def test_drive_loop_of_a_shipped_law_comes_from_the_disk_cache_and_equals_the_closure(
        tmp_path, monkeypatch):
    # drive's loop of module-level kernels is a generated module in the generated-code
    # cache (a new process loads it instead of compiling it); it must compute exactly
    # what the in-memory closure (cache disabled) computes
    import sys

    from hystmech.components import BoucWen
    from hystmech.interrupt import watching

    dmod = sys.modules["hystmech.drive"]
    el = BoucWen(A=1.0, beta=500.0, gamma=500.0, n=1.5, k_el=10.0)
    t = np.linspace(0.0, 1.0, 3001)
    u = 1e-3 * np.sin(2 * np.pi * 3 * t) + 4e-4 * np.sin(2 * np.pi * 7.3 * t)
    monkeypatch.setenv("HYSTMECH_CACHE", str(tmp_path))
    cached = dmod._make_inlined_loop(el.advance, el.force)
    files = list(tmp_path.glob("asm_*.py"))
    assert len(files) == 1 and "_drive_loop" in files[0].read_text()
    monkeypatch.setenv("HYSTMECH_CACHE", "0")
    closure = dmod._make_inlined_loop(el.advance, el.force)
    assert closure is not cached
    out = []
    for loop in (cached, closure):
        with watching() as irq:
            out.append(loop(t, u, np.empty(0), el.x0.copy(), el.kernel_p(t.size), 1e-8, 1,
                            irq))
    (F1, X1, b1, f1), (F2, X2, b2, f2) = out
    assert (b1, f1) == (b2, f2) == (-1, -1)
    assert np.array_equal(F1, F2) and np.array_equal(X1, X2)
    assert np.abs(F1).max() > 0.5 * 1e-3 * 10.0      # the law did run


_AFFINE_NEW_PROCESS = """
import numpy as np
from hystmech import drive
from hystmech.components import Dahl
t = np.linspace(0.0, 1.0, 2001)
u = 1e-3 * np.sin(2 * np.pi * 3 * t)
OUT = drive(Dahl(rho=1e4, Fc=1.0), t, u).force.tolist()
"""


def test_affine_drive_loop_is_loaded_from_disk_in_a_new_process_and_equals_the_closure(
        tmp_path, monkeypatch):
    # drive's affine loop (Dahl, LuGre) took the law's map as an argument and was
    # compiled again in every process; for a module-level map it is now a generated
    # module in the generated-code cache: a new process loads it (no "numba:compile"
    # event, numba's event API) and computes exactly what the loop taking the map as an
    # argument (the old path, kept for closures) computes
    import sys

    from hystmech.interrupt import watching

    dmod = sys.modules["hystmech.drive"]
    el = Dahl(rho=1e4, Fc=1.0)
    t = np.linspace(0.0, 1.0, 2001)
    u = 1e-3 * np.sin(2 * np.pi * 3 * t)
    monkeypatch.setenv("HYSTMECH_CACHE", str(tmp_path))
    monkeypatch.setattr(dmod, "_AFFINE", type(dmod._AFFINE)())     # no loop kept yet
    loop = dmod._affine_loop(el.affine)
    assert any("_drive_affine_loop" in f.read_text() for f in tmp_path.glob("asm_*.py"))
    with watching() as irq:
        F1, X1, b1, f1 = loop(t, u, el.x0.copy(), el.p, 1e-10, 1, irq)
        F2, X2, b2, f2 = dmod._drive_affine_loop(el.affine, t, u, el.x0.copy(), el.p,
                                                 1e-10, 1, irq)
    assert (b1, f1) == (b2, f2) == (-1, -1)
    assert np.array_equal(F1, F2) and np.array_equal(X1, X2)
    assert np.abs(F1).max() > 0.5                     # the law did run (|F| -> Fc = 1)
    compiled, F = in_a_new_process(_AFFINE_NEW_PROCESS)
    assert [c for c in compiled if "drive" in c or "_hystmech_asm_" in c] == [], compiled
    assert np.array_equal(np.array(F), F1)


_SUM_NEW_PROCESS = r"""
import numpy as np
from hystmech import drive
from hystmech.components import BoucWen, Dahl, LinearSpring, Masing
el = (Dahl(rho=1e4, Fc=1.0) + LinearSpring(k=50.0)
      + BoucWen(A=1.0, beta=500.0, gamma=500.0, n=1.5) + Masing(k=40.0, k0=5.0, alpha=0.01))
t = np.linspace(0.0, 1.0, 3001)
u = 1e-3 * np.sin(2 * np.pi * 3 * t) + 4e-4 * np.sin(2 * np.pi * 7.3 * t)
r = drive(el, t, u)
OUT = [r.force.tolist(), r.state.tolist()]
"""


def test_drive_loop_of_a_sum_of_shipped_laws_is_loaded_from_disk_in_a_new_process(
        tmp_path, monkeypatch):
    # a sum's kernels are exec'd source (combine.py), so drive's loop for it was a
    # closure compiled again in every process (1-3 s per sum and process); for a sum of
    # module-level kernels the loop is now a generated module holding the sum's source
    # (ForceElement.kernel_source): a new process loads it (no "numba:compile" event)
    # and computes bit for bit what the in-memory closure (cache disabled) computes, on
    # a sum with an exact map (Dahl), a stateless part, a series-map part (Bouc-Wen
    # n = 1.5, reversals) and an operator (Masing, slips and sticks)
    import sys

    from hystmech.components import BoucWen, LinearSpring, Masing
    from hystmech.interrupt import watching

    dmod = sys.modules["hystmech.drive"]
    el = (Dahl(rho=1e4, Fc=1.0) + LinearSpring(k=50.0)
          + BoucWen(A=1.0, beta=500.0, gamma=500.0, n=1.5) + Masing(k=40.0, k0=5.0, alpha=0.01))
    t = np.linspace(0.0, 1.0, 3001)
    u = 1e-3 * np.sin(2 * np.pi * 3 * t) + 4e-4 * np.sin(2 * np.pi * 7.3 * t)
    monkeypatch.setenv("HYSTMECH_CACHE", str(tmp_path))
    cached = dmod._make_inlined_loop(el.advance, el.force, el.kernel_source())
    files = list(tmp_path.glob("asm_*.py"))
    assert len(files) == 1 and "def advance(" in files[0].read_text()
    monkeypatch.setenv("HYSTMECH_CACHE", "0")
    closure = dmod._make_inlined_loop(el.advance, el.force, el.kernel_source())
    assert closure is not cached
    out = []
    for loop in (cached, closure):
        with watching() as irq:
            out.append(loop(t, u, np.empty(0), el.x0.copy(), el.kernel_p(t.size), 1e-8,
                            el.n_states, irq))
    (F1, X1, b1, f1), (F2, X2, b2, f2) = out
    assert (b1, f1) == (b2, f2) == (-1, -1)
    assert np.array_equal(F1, F2) and np.array_equal(X1, X2)
    # every part ran: Dahl's w and Bouc-Wen's z moved, the Masing element slipped
    assert np.ptp(X1[:, 0]) > 0.5 and np.ptp(X1[:, 1]) > 1e-4
    assert np.ptp(X1[:, 2:]) > 0.0
    monkeypatch.setenv("HYSTMECH_CACHE", str(tmp_path))
    compiled, (F, X) = in_a_new_process(_SUM_NEW_PROCESS)
    assert [c for c in compiled if "drive" in c or "_hystmech_asm_" in c] == [], compiled
    assert np.array_equal(np.array(F), F1) and np.array_equal(np.array(X), X1)
