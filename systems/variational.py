"""Templates of the variational equations, compiled into every structure's module.

The monodromy matrix of a smooth assembly solves Φ' = J(t, y(t))·Φ, Φ(t0) = I, integrated
with the state (Seydel (2010), *Practical Bifurcation and Stability Analysis*, §7.5):
:func:`var_fun` is that augmented right-hand side over the structure's ``fun`` and ``jac``
and :func:`var_solve` integrates it by the one Dormand-Prince loop
(components/_ode.py's dp45_solve). :func:`proj_monodromy` chains the projection scheme's
per-step Jacobians D·(I + h·J) (Bastien et al. (2007), eq. (A.9)). They are handed to
the generator (:mod:`hystmech.systems.templates`) and used by
:mod:`hystmech.systems.periodic.monodromy` through ``Model.code``; this module sits
below both, so the generator never imports the analysis it serves.
"""
from __future__ import annotations

import inspect
import re

import numpy as np

from ..components import _ode


def var_fun(t, z, a, out):
    """TEMPLATE compiled into each structure's module (systems/codegen.py): the
    right-hand side of z = (y, Φ row-major), out = (f(t, y), J(t, y)·Φ), over the
    structure's globals ``fun`` and ``jac``; z of length N: the state alone.
    a = (prm, w, V, J, dy, y)."""
    prm, w, V, J, dy, y = a
    N = y.size
    for i in range(N):
        y[i] = z[i]
    fun(t, y, prm, dy, w, V)  # noqa: F821 - structure global
    for i in range(N):
        out[i] = dy[i]
    if z.size == N:
        return
    jac(t, y, prm, J, w, V)  # noqa: F821 - structure global
    for i in range(N):
        for j in range(N):
            s = 0.0
            for k in range(N):
                s += J[i, k] * z[N + k * N + j]
            out[N + i * N + j] = s


def var_solve(z, t0, t1, prm, nw, N, atol, rtol, h0):
    """TEMPLATE: integrate z = (y[, Φ]) from t0 to t1 in place by the Dormand-Prince
    loop (components/_ode.py's dp45_solve, bound to var_fun). Returns the steps taken."""
    a = (prm, np.zeros(nw), scratch(prm), np.zeros((N, N)), np.zeros(N),  # noqa: F821
         np.zeros(N))
    K = np.empty((7, z.size))
    zn = np.empty(z.size)
    return var_dp45_solve(t0, t1, z, a, atol, rtol, h0, K, zn)  # noqa: F821


def proj_monodromy(y, t0, h, nsteps, h_last, prm, lo, hi, nw, M):
    """TEMPLATE compiled into each structure's module (systems/codegen.py): steps
    p = 0..nsteps-1 of the projection scheme (Bastien et al. (2007), eq. (A.9)) from y at
    t0 (in place: y ends as the state reached) with M (N, N) set to the product of the
    per-step Jacobians D_p·(I + h_p·J(t_p, y_p)); D_p = 0 on a component the step clamps
    to its box (the derivative of the projection along the face normal), 1 elsewhere.
    Over the structure's globals ``fun``, ``jac``, ``step`` and ``scratch``."""
    N = y.size
    w = np.zeros(nw)
    V = scratch(prm)  # noqa: F821 - structure global
    dy = np.empty(N)
    yn = np.empty(N)
    J = np.zeros((N, N))
    A = np.empty((N, N))
    for i in range(N):
        for j in range(N):
            M[i, j] = 1.0 if i == j else 0.0
    for p in range(nsteps):
        t = t0 + p * h
        hp = h if p < nsteps - 1 else h_last
        fun(t, y, prm, dy, w, V)  # noqa: F821 - structure global
        jac(t, y, prm, J, w, V)  # noqa: F821 - structure global
        for i in range(N):
            z = y[i] + hp * dy[i]
            if z > hi[i] or z < lo[i]:
                # clamped: the projection's derivative is zero along the face normal
                for j in range(N):
                    A[i, j] = 0.0
                continue
            for j in range(N):
                s = M[i, j]
                for k in range(N):
                    s += hp * J[i, k] * M[k, j]
                A[i, j] = s
        step(y, dy, hp, lo, hi, yn)  # noqa: F821 - structure global
        for i in range(N):
            y[i] = yn[i]
            for j in range(N):
                M[i, j] = A[i, j]
    return 0


def template_source() -> str:
    """Source of the templates above and of components/_ode.py's dp45_solve and
    dp45_step rewritten to call ``var_fun`` as a global (numba cannot cache a loop that
    takes a function as a value, see methods/radau5.py's core_source), for the
    generated module of every structure (compiled only when first called)."""
    out = ""
    for fn in (var_fun, var_solve, proj_monodromy):
        out += "\n\n@njit(cache=True)\n" + inspect.getsource(fn)
    for fn, new in ((_ode.dp45_solve, "var_dp45_solve"), (_ode.dp45_step, "var_dp45_step")):
        src = inspect.getsource(getattr(fn, "py_func", fn))
        src = "\n".join(ln for ln in src.splitlines() if not ln.startswith("@"))
        src = src.replace(f"def {fn.__name__}(fun, ", f"def {new}(")
        src = src.replace("dp45_step(fun, ", "var_dp45_step(")
        src = re.sub(r"\bfun\(", "var_fun(", src)
        out += "\n\n@njit(cache=True)\n" + src
    return out
