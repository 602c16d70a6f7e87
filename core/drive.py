"""Driven simulation: a force element under an imposed displacement history."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit

from .components.base import ForceElement, is_compiled


@dataclass
class DriveResult:
    """Result of :func:`drive`: arrays of length n = len(t).

    t [s], u [m], v [m/s], force [N], state (n, n_states), and the element.
    """

    t: np.ndarray
    u: np.ndarray
    v: np.ndarray
    force: np.ndarray
    state: np.ndarray
    element: ForceElement = field(repr=False)

    def signals(self) -> dict:
        """Named signals (for CSV output): t, u, v, F and one column per state."""
        out = {"t": self.t, "u": self.u, "v": self.v, "F": self.force}
        names = self.element.state_names
        for i in range(self.state.shape[1]):
            key = names[i] if i < len(names) else f"x{i}"
            out[key] = self.state[:, i]
        return out


# Not cached on disk: the loop takes the law's kernels as arguments, and numba's cache
# index keys such specialisations on dispatcher types held by weak reference; an index
# written by another process then fails to re-save ("underlying object has vanished").
# Compiling costs about a second per law and process.
@njit(cache=False)
def _drive_loop(advance, force, t, u, vseg, vout, x0, p, rtol, n_out):
    n = t.size
    x = x0.copy()
    F = np.empty(n)
    X = np.empty((n, n_out))
    for j in range(n_out):
        X[0, j] = x[j]
    F[0] = force(x, u[0], vout[0], p)
    for k in range(n - 1):
        advance(x, u[k], u[k + 1], t[k + 1] - t[k], vseg[k], p, rtol)
        F[k + 1] = force(x, u[k + 1], vout[k + 1], p)
        for j in range(n_out):
            X[k + 1, j] = x[j]
    return F, X


@njit(cache=False)
def _drive_affine_loop(affine, t, u, vseg, x0, p, tol, n_out):
    # Same result as _drive_loop for laws with an affine segment map (see base.py): the
    # map is recomputed only when v or dt change by more than tol = 0.01·rtol relative;
    # sampled inputs jitter at about 1e-11 (dt = t[k+1] - t[k] carries the rounding of
    # t), so an exact-equality test would recompute on nearly every sample.
    n = t.size
    x = x0[0]
    F = np.empty(n)
    X = np.empty((n, n_out))
    c = np.empty(4)
    v_c = vseg[0]
    dt_c = t[1] - t[0]
    affine(v_c, dt_c, p, c)
    F[0] = c[2] * x + c[3]
    if n_out > 0:
        X[0, 0] = x
    for k in range(n - 1):
        dt = t[k + 1] - t[k]
        v = vseg[k]
        if abs(v - v_c) > tol * abs(v_c) or abs(dt - dt_c) > tol * dt_c:
            v_c = v
            dt_c = dt
            affine(v_c, dt_c, p, c)
        x = c[0] * x + c[1]
        F[k + 1] = c[2] * x + c[3]
        if n_out > 0:
            X[k + 1, 0] = x
    return F, X


def _as_series(name: str, a, n: int | None = None) -> np.ndarray:
    try:
        arr = np.ascontiguousarray(np.asarray(a, dtype=np.float64))
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a 1-D array of finite numbers") from None
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array (got shape {arr.shape})")
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
        raise ValueError(f"t must be strictly increasing (t[{k + 1}] = {t[k + 1]!r} <= "
                         f"t[{k}] = {t[k]!r})")
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
    exact: the Taylor steps of Bouc-Wen (n ≠ 1) and modified Dahl (μ ≠ 1), the
    adaptive Dormand-Prince steps of Duhem (components/_ode.py); laws with an exact
    update (Dahl, LuGre, viscous + Dahl, Bouc-Wen n = 1, modified Dahl μ = 1, Masing,
    Maxwell-slip, Preisach) are exact to rounding, except that one-state laws with an
    affine segment map (Dahl, LuGre) reuse that map while v and dt stay within
    0.01·rtol of the values it was made for.
    x0 overrides the element's initial state. store_state=False keeps only the force
    (and the final state) to save memory on long runs.
    """
    if not isinstance(element, ForceElement):
        raise ValueError(f"element must be a hystmech force element (got {type(element).__name__})")
    t = check_time(t)
    n = t.size
    u = _as_series("u", u, n)
    if not (isinstance(rtol, (int, float)) and np.isfinite(rtol) and 0 < rtol < 1):
        raise ValueError(f"rtol must be in (0, 1) (got {rtol!r})")
    slope = np.diff(u) / np.diff(t)
    if v is None:
        vseg = slope
        vout = np.empty(n)
        vout[1:] = slope
        vout[0] = slope[0]
    else:
        vout = _as_series("v", v, n)
        vseg = 0.5 * (vout[1:] + vout[:-1])
    vseg = np.ascontiguousarray(vseg)
    if x0 is None:
        xs = element.x0.copy()
    else:
        xs = np.ascontiguousarray(np.asarray(x0, dtype=np.float64).ravel())
        if xs.size != element.n_states:
            raise ValueError(f"x0 must have {element.n_states} component(s) (got {xs.size})")
    n_out = element.n_states if store_state else 0
    n_out = min(n_out, element.n_report_states)
    affine = element.affine  # declared on ForceElement (None unless the law has one)
    if v is None and affine is not None and is_compiled(affine) and element.n_states == 1:
        F, X = _drive_affine_loop(affine, t, u, vseg, xs, element.p, 0.01 * float(rtol), n_out)
        return _checked(element, t, u, vout, F, X)
    loop = _drive_loop
    if not (is_compiled(element.advance) and is_compiled(element.force)):
        loop = _drive_loop.py_func  # user callables numba cannot compile
    F, X = loop(element.advance, element.force, t, u, vseg, vout, xs, element.p,
                float(rtol), n_out)
    return _checked(element, t, u, vout, F, X)


def _checked(element, t, u, vout, F, X) -> DriveResult:
    bad = ~np.isfinite(F)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise FloatingPointError(f"{element.name}: non-finite force at sample {k} "
                                 f"(t = {t[k]!r}); check the parameters and the input")
    return DriveResult(t=t, u=u, v=vout, force=F, state=X, element=element)
