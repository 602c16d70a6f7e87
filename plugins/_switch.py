"""Switch points of a law and the mean force over an input segment cut at them: the
step-mean force the plugin hosts return when a jump or kink of the law's force falls
inside a step (a relay threshold, a Masing face, a Preisach memory corner), so that the
switch is placed at its position along the step rather than at a stage or step point.
The C twin lives in plugins/mujoco_plugin.c (mean_force)."""
from __future__ import annotations

import numpy as np

from ..components.base import ForceElement

__all__ = ["switch_of", "inside", "mean_force"]


def switch_of(law: ForceElement):
    """sw(x, u, dir) -> the next input value from u in the direction dir where the law's
    force jumps or kinks (its C kernel LAW_switch, same x and p as the Python kernels),
    or None for a smooth law or one without a C form."""
    if law.kind == "smooth":
        return None
    import ctypes

    from ..fmu.export import FMUExportError, law_spec
    from ._build import PluginBuildError, kernel_library

    try:
        spec = law_spec(law)
        fn = getattr(kernel_library(spec), f"{spec.prefix}_switch")
    except (FMUExportError, PluginBuildError, AttributeError, OSError):
        # no C form or no compiler: the host keeps its pointwise trial forces
        return None
    dp = ctypes.POINTER(ctypes.c_double)
    fn.argtypes = [dp, ctypes.c_double, ctypes.c_double, dp]
    fn.restype = ctypes.c_double
    p = np.ascontiguousarray(law.p, dtype=float)
    pp = p.ctypes.data_as(dp)

    def sw(x, u, direction):
        return fn(x.ctypes.data_as(dp), u, direction, pp)

    sw.keep = p
    return sw


def inside(w, a, b, direction):
    """Is the switch point w strictly inside the segment a -> b (direction ±1)?"""
    return direction * (w - a) > 0.0 and direction * (b - w) > 0.0


def mean_force(law, sw, x, a, b, T, v, rtol):
    """Mean force [N] over the monotone input segment a -> b travelled in the time T [s]
    at the constant speed (b − a)/T, advancing x along it: cut at the switch points,
    midpoint rule on the pieces (exact for a force constant or linear between switches)."""
    d = 1.0 if b > a else -1.0
    vs = (b - a) / T
    cur, acc = a, 0.0
    for _ in range(64):
        if cur == b:
            break
        w = sw(x, cur, d)
        nxt = w if inside(w, cur, b, d) else b
        mid = 0.5 * (cur + nxt)
        law.advance(x, cur, mid, T * (mid - cur) / (b - a), vs, law.p, rtol)
        acc += (nxt - cur) * law.force(x, mid, v, law.p)
        law.advance(x, mid, nxt, T * (nxt - mid) / (b - a), vs, law.p, rtol)
        cur = nxt
    if cur != b:
        # more than 64 switch points in one segment: the rest as one piece
        law.advance(x, cur, b, T * (b - cur) / (b - a), vs, law.p, rtol)
        acc += (b - cur) * law.force(x, b, v, law.p)
    return acc / (b - a)
