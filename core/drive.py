"""Driven simulation: a force element under an imposed displacement history."""
from __future__ import annotations

import numbers
import weakref
from dataclasses import dataclass, field

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core.errors import NumbaError
from numba.extending import intrinsic, overload

from .components.base import ForceElement, is_compiled
from .interrupt import raise_if_stopped, watching
from .limits import RTOL_MIN, check_memory


@dataclass
class DriveResult:
    """Result of :func:`drive`: arrays of length n = len(t).

    t [s], u [m], v [m/s], force [N], state (n, n_states), and the element.
    """

    t: np.ndarray
    u: np.ndarray
    force: np.ndarray
    state: np.ndarray
    element: ForceElement = field(repr=False)
    v_given: np.ndarray | None = field(default=None, repr=False)

    @property
    def v(self) -> np.ndarray:
        """Velocity [m/s] at each sample: the measured v if one was given, else the slope
        of the segment ending there (the first segment's at t[0]), as the loop used it.
        Worked out on first use: storing it from the loop costs a quarter of the time
        of a fast law."""
        if self.v_given is None:
            vout = np.empty(self.t.size)
            vout[1:] = np.diff(self.u) / np.diff(self.t)
            vout[0] = vout[1]
            self.v_given = vout
        return self.v_given

    def signals(self) -> dict:
        """Named signals (for CSV output): t, u, v, F and one column per state."""
        out = {"t": self.t, "u": self.u, "v": self.v, "F": self.force}
        names = self.element.state_names
        for i in range(self.state.shape[1]):
            key = names[i] if i < len(names) else f"x{i}"
            out[key] = self.state[:, i]
        return out


def _borrowed(a):
    """The array a without its reference count (a view that must not outlive a; a itself
    where the loop runs as Python, for kernels of an external model).

    Inside a kernel inlined into the drive loop every branch that ends the kernel
    decrements the counts of x and p that its entry incremented; numba prunes such pairs
    only when no call that may raise lies between them, so a kernel that calls another
    compiled function (Bouc-Wen's arc-length tables, its series map) paid four atomic
    updates per sample, a third of its time on a rough input. Without a count they
    vanish."""
    return a


@intrinsic
def _uncounted(typingctx, a):
    if not isinstance(a, types.Array):
        return None

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        ary.meminfo = ary.meminfo.type(None)
        return ary._getvalue()
    return a(a), codegen


@overload(_borrowed)
def _borrowed_compiled(a):
    if isinstance(a, types.Array):
        return lambda a: _uncounted(a)


# Not cached on disk: the loop takes the law's kernels as arguments, and numba's cache
# index keys such specialisations on dispatcher types held by weak reference; an index
# written by another process then fails to re-save ("underlying object has vanished").
# Compiling costs about a second per law and process.
#
# The loops below take the raw samples (t, u) and work out the slopes, the output
# velocities and the input checks in the same pass: at tens of millions of samples per
# second, separate numpy passes (diff, divide, isfinite) cost as much as the law itself.
# Each returns the index of the first bad input sample (t not strictly increasing or not
# finite, u not finite; the loop stops there) and the first non-finite force, or -1.
@njit(cache=False)
def _drive_loop(advance, force, t, u, vuser, x0, p, rtol, n_out, irq=None):
    n = t.size
    x = x0.copy()
    xk = _borrowed(x)
    pk = _borrowed(p)
    F = np.empty(n)
    X = np.empty((n, n_out))
    given = vuser.size == n
    bad_in = -1
    bad_F = -1
    for j in range(n_out):
        X[0, j] = x[j]
    # F[0] first: kernels of an external model (FMU) read its current state
    F[0] = force(xk, u[0], vuser[0] if given else (u[1] - u[0]) / (t[1] - t[0]), pk)
    if not abs(F[0]) < np.inf:
        bad_F = 0
    for k in range(n - 1):
        dt = t[k + 1] - t[k]
        du = u[k + 1] - u[k]
        if not (dt > 0.0 and abs(dt) < np.inf and abs(du) < np.inf) or (k & 1023) == 1023:
            # one test per sample for both rare events: a bad input, or time to read the
            # signal flag (core/interrupt.py; Python raises on return)
            if not (dt > 0.0 and abs(dt) < np.inf and abs(du) < np.inf):
                bad_in = k + 1
                break
            if irq is not None:
                if irq[0] != 0:
                    bad_in = -2
                    break
        if given:
            v = 0.5 * (vuser[k] + vuser[k + 1])
            vo = vuser[k + 1]
        else:
            v = du / dt
            vo = v
        advance(xk, u[k], u[k + 1], dt, v, pk, rtol)
        f = force(xk, u[k + 1], vo, pk)
        F[k + 1] = f
        if bad_F < 0 and not abs(f) < np.inf:
            bad_F = k + 1
        for j in range(n_out):
            X[k + 1, j] = x[j]
    return F, X, bad_in, bad_F


# the same loop as a generated module in the disk cache (systems/compile_cache.py), for
# kernels importable by module and name (every shipped law): numba cannot cache a
# closure, so each new process compiled every law's loop again (2 s for Bouc-Wen with
# its kernels cached; 143 s of the README suite's CPU on empty caches, 2026-11-28)
_CACHED_LOOP = """from numba import njit

from {drive} import _drive_loop
from hystmech.systems.compile_cache import resolve

_adv = njit(inline="always")(resolve({am!r}, {aq!r}).py_func)
_frc = njit(inline="always")(resolve({fm!r}, {fq!r}).py_func)
_body = njit(inline="always")(_drive_loop.py_func)


@njit(cache=True)
def loop(t, u, vuser, x0, p, rtol, n_out, irq):
    return _body(_adv, _frc, t, u, vuser, x0, p, rtol, n_out, irq)
"""


def _cached_loop(advance, force):
    """The drive loop for module-level kernels from the generated-code cache, or None
    (closures, exec'd kernels, cache disabled: the caller compiles in memory)."""
    # imported here: `import hystmech` loads no subpackage (tests/test_lazy_import.py)
    from .systems import compile_cache

    ra, rf = compile_cache.kernel_ref(advance), compile_cache.kernel_ref(force)
    if ra is None or rf is None:
        return None
    src = _CACHED_LOOP.format(drive=__name__, am=ra[0], aq=ra[1], fm=rf[0], fq=rf[1])
    mod, _ = compile_cache.load(src, sorted({__name__, ra[0], rf[0]}))
    return None if mod is None else mod.loop


# a law whose advance/force are generated source over named module-level kernels (a sum
# of shipped laws, ForceElement.kernel_source): the same loop with that source in the
# module, so that a new process loads it instead of compiling it (1-3 s per sum and
# process; 35 s of the README suite's CPU on empty caches)
_CACHED_SOURCE_LOOP = """from numba import njit

from {drive} import _drive_loop
from hystmech.systems.compile_cache import resolve

{names}

{source}

_adv = njit(inline="always")(advance)
_frc = njit(inline="always")(force)
_body = njit(inline="always")(_drive_loop.py_func)


@njit(cache=True)
def loop(t, u, vuser, x0, p, rtol, n_out, irq):
    return _body(_adv, _frc, t, u, vuser, x0, p, rtol, n_out, irq)
"""


def _cached_source_loop(kernel_source):
    """The drive loop of generated kernels ``(source, {name: kernel})`` from the
    generated-code cache when every named kernel is importable, else None."""
    from .systems import compile_cache

    source, names = kernel_source
    refs = {k: compile_cache.kernel_ref(f) for k, f in sorted(names.items())}
    if any(r is None for r in refs.values()):
        return None
    lines = "\n".join(f"{k} = resolve({m!r}, {q!r})" for k, (m, q) in refs.items())
    src = _CACHED_SOURCE_LOOP.format(drive=__name__, names=lines, source=source)
    mod, _ = compile_cache.load(src, sorted({__name__} | {m for m, _ in refs.values()}))
    return None if mod is None else mod.loop


def _make_inlined_loop(advance, force, kernel_source=None):
    # _drive_loop with the kernels inlined at numba IR level: a call boundary would cost
    # atomic increments/decrements of x and p on every sample (LLVM inlines a small
    # kernel by itself, a large one, e.g. with the n != 1 branch of Bouc-Wen, it calls:
    # drive(BoucWen n = 1) 44 vs 36 M samples/s); the loop also hands the kernels
    # uncounted views (_borrowed) for the branches numba cannot prune.
    # kernel_source: the element's ForceElement.kernel_source() (generated kernels)
    loop = _cached_loop(advance, force)
    if loop is None and kernel_source is not None:
        loop = _cached_source_loop(kernel_source)
    if loop is not None:
        return loop
    adv = njit(inline="always")(advance.py_func)
    frc = njit(inline="always")(force.py_func)
    body = njit(inline="always")(_drive_loop.py_func)

    @njit(cache=False)
    def loop(t, u, vuser, x0, p, rtol, n_out, irq):
        return body(adv, frc, t, u, vuser, x0, p, rtol, n_out, irq)

    return loop


# the affine loop likewise, from the generated-code cache for a module-level affine map
# (Dahl, LuGre): taking the map as an argument, _drive_affine_loop was compiled again in
# every process (1.6 s CPU per law and process, e.g. every xdist worker)
_CACHED_AFFINE = """from numba import njit

from {drive} import _drive_affine_loop
from hystmech.systems.compile_cache import resolve

_aff = njit(inline="always")(resolve({am!r}, {aq!r}).py_func)
_body = njit(inline="always")(_drive_affine_loop.py_func)


@njit(cache=True)
def loop(t, u, x0, p, tol, n_out, irq):
    return _body(_aff, t, u, x0, p, tol, n_out, irq)
"""
_AFFINE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _affine_loop(affine):
    """The affine drive loop for this map: the cached generated module's loop, or (a
    closure, cache disabled) _drive_affine_loop compiled in memory for it."""
    loop = _AFFINE.get(affine)
    if loop is None:
        from .systems import compile_cache

        ra = compile_cache.kernel_ref(affine)
        mod = None
        if ra is not None:
            src = _CACHED_AFFINE.format(drive=__name__, am=ra[0], aq=ra[1])
            mod, _ = compile_cache.load(src, sorted({__name__, ra[0]}))
        if mod is not None:
            loop = mod.loop
        else:
            def loop(t, u, x0, p, tol, n_out, irq, _a=affine):
                return _drive_affine_loop(_a, t, u, x0, p, tol, n_out, irq)
        _AFFINE[affine] = loop
    return loop


_INLINED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _inlined_loop(advance, force, kernel_source=None):
    """The drive loop compiled for these two kernels (one per kernel pair and process)."""
    per = _INLINED.get(advance)
    if per is None:
        per = _INLINED[advance] = {}
    if force not in per:
        per[force] = _make_inlined_loop(advance, force, kernel_source)
    return per[force]


@njit(cache=False)
def _drive_affine_loop(affine, t, u, x0, p, tol, n_out, irq):
    # Same result as _drive_loop for laws with an affine segment map (see base.py): the
    # map is recomputed only when v or dt change by more than tol = 0.01·rtol relative;
    # sampled inputs jitter at about 1e-11 (dt = t[k+1] - t[k] carries the rounding of
    # t), so an exact-equality test would recompute on nearly every sample.
    n = t.size
    x = x0[0]
    F = np.empty(n)
    X = np.empty((n, n_out))
    c = np.empty(4)
    bad_in = -1
    bad_F = -1
    dt_c = t[1] - t[0]
    v_c = (u[1] - u[0]) / dt_c
    if not (dt_c > 0.0 and abs(dt_c) < np.inf and abs(v_c) < np.inf):
        return F, X, 1, bad_F
    affine(v_c, dt_c, p, c)
    F[0] = c[2] * x + c[3]
    if not abs(F[0]) < np.inf:
        bad_F = 0
    if n_out > 0:
        X[0, 0] = x
    for k in range(n - 1):
        dt = t[k + 1] - t[k]
        du = u[k + 1] - u[k]
        if not (dt > 0.0 and abs(dt) < np.inf and abs(du) < np.inf) or (k & 1023) == 1023:
            if not (dt > 0.0 and abs(dt) < np.inf and abs(du) < np.inf):
                bad_in = k + 1
                break
            if irq[0] != 0:
                bad_in = -2
                break
        v = du / dt
        if abs(v - v_c) > tol * abs(v_c) or abs(dt - dt_c) > tol * dt_c:
            v_c = v
            dt_c = dt
            affine(v_c, dt_c, p, c)
        x = c[0] * x + c[1]
        f = c[2] * x + c[3]
        F[k + 1] = f
        if bad_F < 0 and not abs(f) < np.inf:
            bad_F = k + 1
        if n_out > 0:
            X[k + 1, 0] = x
    return F, X, bad_in, bad_F


def _as_array(name: str, a) -> np.ndarray:
    # the cheap part of _as_series (the finiteness is checked in the drive loop); real
    # numbers only: booleans and complex values are not displacements or times
    raw = a if isinstance(a, np.ndarray) else None
    if raw is None:
        try:
            raw = np.asarray(a)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be a 1-D array of finite numbers") from None
    if raw.dtype.kind not in "iuf":
        what = {"b": "booleans", "c": "complex numbers", "U": "strings", "S": "bytes",
                "O": "objects"}.get(raw.dtype.kind, f"dtype {raw.dtype}")
        if raw.dtype.kind != "O" or any(isinstance(x, (bool, complex, np.bool_, str))
                                        for x in raw.ravel()[:1000]):
            raise ValueError(f"{name} must be an array of real numbers (got {what})")
    try:
        arr = np.ascontiguousarray(np.asarray(raw, dtype=np.float64))
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a 1-D array of finite numbers") from None
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array (got shape {arr.shape})")
    return arr


def _as_series(name: str, a, n: int | None = None) -> np.ndarray:
    arr = _as_array(name, a)
    if n is not None and arr.size != n:
        raise ValueError(f"{name} must have the same length as t ({n}), got {arr.size}")
    bad = ~np.isfinite(arr)
    if bad.any():
        idx = np.flatnonzero(bad)
        raise ValueError(f"{name} must be finite: {idx.size} NaN/infinite sample(s), "
                         f"first at index {idx[0]}")
    return arr


def check_time(t) -> np.ndarray:
    """Validate a time vector: 1-D, finite, at least 2 samples, strictly increasing."""
    t = _as_series("t", t)
    if t.size < 2:
        raise ValueError(f"t must hold at least 2 samples (got {t.size})")
    dt = np.diff(t)
    if np.any(dt <= 0):
        k = int(np.flatnonzero(dt <= 0)[0])
        raise ValueError(f"t must be strictly increasing (t[{k + 1}] = {float(t[k + 1])!r} <= "
                         f"t[{k}] = {float(t[k])!r})")
    return t


def drive(element: ForceElement, t, u, v=None, *, rtol: float = 1e-8, x0=None,
          store_state: bool = True) -> DriveResult:
    """Simulate ``element`` under the imposed displacement u(t).

    t [s] strictly increasing, u [m] displacement samples joined by straight lines, so
    that on [t_k, t_{k+1}] the velocity is the segment's slope; the state is advanced
    segment by segment and follows every kink exactly. If ``v`` [m/s] is given
    (measured velocity), the state uses (v_k + v_{k+1})/2 on segment k.
    The output force at t_k uses the velocity of the segment that ends at t_k
    (for k = 0, the first segment).

    rtol (default 1e-8) is the relative tolerance of the segment updates that are not
    exact: the exact segment map of Bouc-Wen (n ≠ 1) and modified Dahl (μ ≠ 1)
    (components/power_law_map.py: its series are truncated and its Halley iteration
    stopped at 1e-3·rtol of each segment's arc length; runs of 5e5 samples or more
    use its arc length tabulated per exponent, power_law_table.py, which agrees with
    the series to about 1e-14 of the saturation value whatever rtol), the adaptive
    Dormand-Prince steps of Duhem (components/_ode.py); laws with an exact
    update (Dahl, LuGre, viscous + Dahl, Bouc-Wen n = 1, modified Dahl μ = 1, Masing,
    Maxwell-slip, Preisach) are exact to rounding, except that one-state laws with an
    affine segment map (Dahl, LuGre) reuse that map while v and dt stay within
    0.01·rtol of the values it was made for.
    x0 overrides the element's initial state. store_state=False keeps only the force
    (and the final state) to save memory on long runs; the arrays are checked against
    the memory limit (:func:`hystmech.limits.check_memory`) before they are made.
    Ctrl-C stops the compiled loop within 1024 samples (:mod:`hystmech.interrupt`).
    """
    if not isinstance(element, ForceElement):
        raise ValueError(f"element must be a hystmech force element (got {type(element).__name__})")
    t = _as_array("t", t)
    u = _as_array("u", u)
    n = t.size
    if n < 2:
        raise ValueError(f"t must hold at least 2 samples (got {n})")
    if u.size != n:
        raise ValueError(f"u must have the same length as t ({n}), got {u.size}")
    if not (t[1] > t[0]):
        # the first segment's slope is the first output's velocity: checked before the loop
        check_time(t)
    if isinstance(rtol, (bool, np.bool_)) or not isinstance(rtol, (numbers.Real, np.floating)) \
            or not (RTOL_MIN <= float(rtol) < 1):
        raise ValueError(f"rtol must be in [{RTOL_MIN:g}, 1) (got {rtol!r}); below "
                         f"{RTOL_MIN:g} the steps fall under the float64 resolution")
    rtol = float(rtol)
    if v is None:
        vuser = np.empty(0)
    else:
        vuser = _as_series("v", v, n)
    if x0 is None:
        xs = element.x0.copy()
    else:
        xs = np.ascontiguousarray(np.asarray(x0, dtype=np.float64).ravel())
        if xs.size != element.n_states:
            raise ValueError(f"x0 must have {element.n_states} component(s) (got {xs.size})")
    n_out = element.n_states if store_state else 0
    n_out = min(n_out, element.n_report_states)
    check_memory(8.0 * n * (1 + n_out), f"drive's force and {n_out} state(s) at {n} samples",
                 "store_state=False keeps the force only")
    affine = element.affine  # declared on ForceElement (None unless the law has one)
    with watching() as irq:
        if v is None and affine is not None and is_compiled(affine) and element.n_states == 1:
            loop = _affine_loop(affine)
            _check_before_compile(loop, t, u)
            out = loop(t, u, xs, element.p, 0.01 * float(rtol), n_out, irq)
        else:
            out = _run_loop(element, t, u, vuser, xs, float(rtol), n_out, irq)
        F, X, bad_in, bad_F = out
        if bad_in == -2:
            raise_if_stopped(irq)
    if bad_in >= 0:
        check_time(t)  # raises the message naming the first bad sample of t or u
        _as_series("u", u, n)
        k = bad_in
        raise ValueError(f"t and u must have finite differences: t[{k}] - t[{k - 1}] or "
                         f"u[{k}] - u[{k - 1}] overflows")
    return _checked(element, t, u, None if v is None else vuser, F, X, bad_F)


def _run_loop(element, t, u, vuser, xs, rtol, n_out, irq):
    adv, frc = element.advance, element.force
    # p, or p with parameter-derived tables the law's Python kernels use (ForceElement)
    p = element.kernel_p(t.size)
    if not (is_compiled(adv) and is_compiled(frc)):
        # user callables numba cannot compile
        return _drive_loop.py_func(adv, frc, t, u, vuser, xs, p, rtol, n_out, irq)
    loop = _inlined_loop(adv, frc, element.kernel_source())
    _check_before_compile(_drive_loop if loop is None else loop, t, u)
    if loop is not None:
        try:
            return loop(t, u, vuser, xs, p, rtol, n_out, irq)
        except NumbaError:
            # a kernel numba compiles but cannot inline (e.g. it recurses): drop the
            # inlined loop for this pair, keep the one with kernel arguments
            _INLINED[adv][frc] = None
    return _drive_loop(adv, frc, t, u, vuser, xs, p, rtol, n_out, irq)


def _check_before_compile(loop, t, u) -> None:
    # the loop checks t and u as it goes (no separate pass over long series), but its
    # first call in a process compiles it (seconds: 17 s for a modified Dahl on a fresh
    # install) or loads it from disk; a mistake in t or u is refused before that
    if not loop.signatures:
        check_time(t)
        _as_series("u", u, t.size)


def _checked(element, t, u, vout, F, X, k) -> DriveResult:
    if k >= 0:
        raise FloatingPointError(f"{element.name}: non-finite force at sample {k} "
                                 f"(t = {t[k]!r}); check the parameters and the input")
    return DriveResult(t=t, u=u, force=F, state=X, element=element, v_given=vout)
