"""method="radau5": compiled Radau IIA order 5 (Hairer & Wanner (1996), §IV.8) on the
assembly's compiled right-hand side and analytic Jacobian.

The core is :func:`~hystmech.systems.methods.radau.radau_solve` (scipy's ``Radau``
algorithm in numba: simplified Newton with reused real and complex LUs, embedded error
estimate, Gustafsson step control, Jacobian reuse, collocation dense output). It is
compiled into each structure's generated module through the templates below
(:func:`radau5`; for method "auto" the ``auto_stiff`` templates of methods/auto.py),
which hand it the structure's ``fun_full`` and ``jac`` as globals, so the whole loop is
cached on disk with the structure (systems/codegen.py, systems/templates.py); the same
templates over the generic ``fun_full`` and ``jac`` are the generic engine's loops
(methods/engine.py: a new structure built from shipped laws compiles nothing). An
element without a ``jac`` kernel gets a compiled forward-difference Jacobian
(:func:`stiff_jac_fd`, generated code only).

Options: rtol (1e-8), atol (see :func:`~hystmech.systems.methods.rk45.default_atol`),
max_step, first_step, max_steps. The energy quadratures ride along without error
control. Ctrl-C stops the loop at the next step (:mod:`hystmech.interrupt`). Observers and the callback run on the output samples after the integration
(as for the scipy methods).
"""
from __future__ import annotations

import inspect
import re

import numpy as np

from ...components import _ode
from ...interrupt import raise_if_stopped, watching
from . import MethodResult, check_options, radau
from .radau import STATUS_MESSAGES
from .rk45 import default_atol

NAME = "radau5"
OPTIONS = ("rtol", "atol", "max_step", "first_step", "max_steps")
SMOOTH_ONLY = True
COMPILED = False        # observers and callback on the output samples


def stiff_fun(t, y, a, out):
    """TEMPLATE: fun(t, y, args, out) of the stiff cores over the structure's
    fun_full; a = (prm, w, V, energy, ysc)."""
    fun_full(t, y, a[0], out, a[1], a[2], a[3])  # noqa: F821 - structure global


def stiff_jac_an(t, y, a, J):
    """TEMPLATE: analytic (N, N) Jacobian from the elements' jac kernels."""
    jac(t, y, a[0], J, a[1], a[2])  # noqa: F821 - structure global


def stiff_jac_fd(t, y, a, J):
    """TEMPLATE: forward-difference (N, N) Jacobian, step √eps·max(|y_j|, atol_j/rtol)."""
    N = J.shape[0]
    f0 = np.empty(y.size)
    f1 = np.empty(y.size)
    yy = y.copy()
    ysc = a[4]
    fun_full(t, y, a[0], f0, a[1], a[2], False)  # noqa: F821
    for j in range(N):
        d = 1.4901161193847656e-08 * max(abs(y[j]), ysc[j])
        yy[j] = y[j] + d
        d = yy[j] - y[j]
        fun_full(t, yy, a[0], f1, a[1], a[2], False)  # noqa: F821
        for i in range(N):
            J[i, j] = (f1[i] - f0[i]) / d
        yy[j] = y[j]


def radau5(t0, t1, z0, nd, prm, energy, nw, ysc, rtol, atol, first_step, max_step, t_eval,
           max_steps, irq):
    """TEMPLATE compiled into each structure's module: radau_solve on its globals.
    Returns (status, t reached, T, Z, counters)."""
    a = (prm, np.zeros(nw), scratch(prm), energy, ysc)  # noqa: F821
    return radau_solve(t0, t1, z0, nd, a, rtol, atol,  # noqa: F821
                       first_step, max_step, t_eval, max_steps, irq)


TEMPLATES = (stiff_fun, stiff_jac_an, stiff_jac_fd, radau5)
# the cores that take the right-hand side as an argument, rewritten by core_source
# (methods/auto.py adds its own: auto.CORES)
CORES = (_ode.dp45_step, radau.initial_step, radau._collocation, radau.radau_step,
         radau.radau_solve)


# cores inlined at numba IR level into their one caller instead of compiled as
# functions of their own: numba links every callee's optimised LLVM IR into each caller
# and runs the module passes and the machine-code generation over all of it again, so
# a chain template -> core -> radau_step -> _collocation -> stiff_fun paid the Radau
# step's optimisation once per level (the engine's auto_stiff_implicit: 31 s of CPU,
# 3.7 s of it the one-line template's own re-optimisation of auto_implicit). Inlined,
# each template is one compiled function that calls the one compiled radau_step (shared
# by radau5 and the implicit phase of auto) and stiff_fun.
INLINED_CORES = ("radau_initial_step", "initial_step", "_collocation", "radau_solve",
                 "auto_start", "auto_explicit", "auto_implicit")
INLINE_CORE = '@njit(cache=True, inline="always")'


def core_source(functions) -> str:
    """Source of the cores ``functions`` that take the right-hand side (CORES here and
    auto.CORES: radau.py, auto.py and components/_ode.py's dp45_step), rewritten
    for a structure's module: the ``fun``/``jac`` arguments dropped and their calls
    made to the globals stiff_fun/stiff_jac. numba cannot cache code that passes a
    function as a value (it holds the dispatcher's address), so the loops are compiled
    per structure with the calls bound, as the RK45 template is."""
    out = []
    for fn in functions:
        src = inspect.getsource(getattr(fn, "py_func", fn))
        src = "\n".join(ln for ln in src.splitlines() if not ln.startswith("@"))
        src = src.replace("(fun, jac, ", "(").replace("(fun, ", "(")
        src = re.sub(r"\bfun\(", "stiff_fun(", src)
        src = re.sub(r"\bjac\(", "stiff_jac(", src)
        src = re.sub(r"\binitial_step\(", "radau_initial_step(", src)
        if fn.__name__ == "auto_explicit":
            # the explicit step through rk45's dopri_step template (same tableau, norm
            # and stage layout as dp45_step): its one call site of the right-hand side
            # is inlined, where dp45_step's six each pay the reference counting of
            # every array in args (measured 1.3 µs → see bench_stiff)
            a = "e = dp45_step(t, y, h, args, K, ynew, atol, rtol, nd)"
            assert a in src and "    K = np.empty((7, n))\n" in src
            src = src.replace(a, "e = dopri_step(t, y, h, K, ytmp, ynew, kout_, args[0], "
                                 "args[1], args[2], args[3], nd, rtol, atol)")
            src = src.replace("    K = np.empty((7, n))\n",
                              "    K = np.empty((7, n))\n    kout_ = np.empty(n)\n")
        out.append((fn.__name__, src))
    return "".join(f"\n\n{INLINE_CORE if name in INLINED_CORES else '@njit(cache=True)'}\n{s}"
                   for name, s in out)


def core_globals(functions) -> dict:
    """{name: (module, object)} of the module-level names the rewritten cores
    ``functions`` use (looked up where each core is defined)."""
    defined = {getattr(fn, "py_func", fn).__name__ for fn in functions}
    defined |= {"radau_initial_step", "stiff_fun", "stiff_jac", "math", "np"}
    out = {}
    for fn in functions:
        py = getattr(fn, "py_func", fn)
        glb = py.__globals__
        for name in py.__code__.co_names:
            if name in defined or name in out or name not in glb:
                continue
            out[name] = (glb["__name__"], glb[name])
    return out


def compilable(model) -> bool:
    """True when the model's code (the generic engine's loops, methods/engine.py, or the
    structure's generated module) is numba-compiled with inputs computable at any t."""
    return not model.has_tables and (model.engine() is not None
                                     or model.code.how in ("disk", "memory"))


def run_stiff(model, t0, t1, y0, t_eval, energy, obs, options, method, phases=None):
    """Run the compiled core ``method`` ("radau5", or "auto" with its ``phases``:
    methods/auto.py's run_phases) on the model."""
    opts = check_options(method, options, OPTIONS)
    rtol = float(opts.get("rtol", 1e-8))
    if not (1e-14 <= rtol < 1):
        raise ValueError(f"rtol must be in [1e-14, 1) (got {rtol!r})")
    N = model.N
    atol = opts.get("atol")
    atol = default_atol(model, rtol) if atol is None else atol
    try:
        atol = np.ascontiguousarray(np.broadcast_to(np.asarray(atol, float), (N,)))
    except ValueError:
        raise ValueError(f"atol must be a number or {N} numbers (got shape "
                         f"{np.shape(atol)})") from None
    if not np.all(np.isfinite(atol) & (atol >= 0)) or not np.all(atol + rtol > 0):
        raise ValueError("atol must be finite and >= 0")
    max_step = float(opts.get("max_step", np.inf))
    if not max_step > 0:
        raise ValueError(f"max_step must be > 0 (got {max_step!r})")
    first_step = float(opts.get("first_step", 0.0) or 0.0)
    if not (first_step >= 0 and np.isfinite(first_step)):
        raise ValueError(f"first_step must be >= 0 s (got {first_step!r})")
    max_steps = int(opts.get("max_steps", 50_000_000))
    if max_steps < 1:
        raise ValueError(f"max_steps must be >= 1 (got {max_steps!r})")
    nquad = model.nquad if energy else 0
    ysc = np.maximum(atol / rtol, 1e-300)
    z0 = np.ascontiguousarray(np.concatenate([y0, np.zeros(nquad)]), dtype=float)
    te = np.zeros(0) if t_eval is None else np.ascontiguousarray(t_eval, dtype=float)
    with watching() as irq:
        if method == "radau5":
            # the generic engine when the model runs there (no compile for a new
            # structure, methods/engine.py), else the structure's generated code
            code = model.engine() or model.code
            status, t_r, T, Z, cnt = code.radau5(
                float(t0), float(t1), z0, int(N), model.prm, bool(energy),
                model.layout.n_work, ysc, rtol, atol, first_step, max_step, te, max_steps, irq)
        else:
            status, t_r, T, Z, cnt = phases(model, float(t0), float(t1), z0, int(N),
                                                  bool(energy), ysc, rtol, atol, first_step,
                                                  max_step, te, max_steps, irq)
        if status == 6:
            raise_if_stopped(irq)
    stats = {"nfev": int(cnt[0]), "njev": int(cnt[1]), "nlu": int(cnt[2]),
             "nsteps": int(cnt[3]), "nrejected": int(cnt[4])}
    if method == "auto":
        stats.update(steps_explicit=int(cnt[5]), steps_implicit=int(cnt[6]),
                     switches=int(cnt[7]))
    Y = Z[:, :N]
    Q = Z[:, N:] if energy else None
    stopped = False
    if obs is not None and T.size:
        k = model.observe_samples(obs, T, Y)
        if k < T.size:
            T, Y, Q, stopped = T[:k], Y[:k], None if Q is None else Q[:k], True
    return MethodResult(T, Y, Q, stats, status == 0, STATUS_MESSAGES[int(status)], float(t_r),
                        stopped)


def run(model, t0, t1, y0, t_eval, energy, obs, options, method=NAME) -> MethodResult:
    """Run the compiled Radau IIA 5 (see the module docstring)."""
    if not compilable(model):
        raise ValueError("method='radau5' (compiled) needs numba-compilable forces, imposed "
                         "motions and element kernels; use Harmonic inputs or "
                         "method='Radau' (scipy)")
    return run_stiff(model, t0, t1, y0, t_eval, energy, obs, options, "radau5")
