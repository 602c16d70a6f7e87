"""The generic loops every structure's compiled module carries, collected from their owners.

Each integration method and analysis owns the template of its loop (a plain Python
function calling the structure's ``core``, ``fun``, ``jac``, ``step``, ... as globals):
the projection scheme (methods/projection.py), Dormand-Prince RK45 (methods/rk45.py),
Radau IIA and the "auto" switch (methods/radau5.py over methods/radau.py and
methods/auto.py), the variational equations and the projection scheme's chained
Jacobian (:mod:`hystmech.systems.variational`), and the sample evaluation below.
:func:`templates` hands them to the one code generator (:mod:`hystmech.systems.codegen`)
as a :class:`~hystmech.systems.codegen.Templates` record, so the generator stands at the
ground floor and imports none of them. A new analysis adds its template here.
"""
from __future__ import annotations

import inspect

import numpy as np

from . import variational
from .codegen import DECOR, DECOR_INLINE, Templates
from .methods import auto, projection, radau, radau5, rk45


def eval_samples(t, Y, FE, UB, VB, prm, nq, ne, nquad, nw):
    """TEMPLATE compiled into each structure's generated module (systems/codegen.py),
    where core, scratch and powers are that structure's functions. Accelerations,
    element forces, u, v, node forces and energy integrands at every sample (rows of
    Y) with the inputs FE, UB, VB sampled there."""
    n = t.size
    N = Y.shape[1]
    nf = FE.shape[1]
    nb = UB.shape[1]
    A = np.empty((n, nq))
    F = np.empty((n, ne))
    U = np.empty((n, ne))
    V = np.empty((n, ne))
    FN = np.empty((n, nq + nb))
    PW = np.empty((n, nquad))
    dy = np.empty(N)
    w = np.zeros(nw)
    S = scratch(prm)
    pw = np.empty(nquad)
    y = np.empty(N)
    a0 = nf + 2 * nb
    for i in range(n):
        for j in range(N):
            y[j] = Y[i, j]
        for j in range(nf):
            w[j] = FE[i, j]
        for j in range(nb):
            w[nf + j] = UB[i, j]
            w[nf + nb + j] = VB[i, j]
        core(t[i], y, prm, dy, w, S)
        powers(y, w, prm, pw, np.int64(0))    # int64 as fun_full's call: one compile
        for j in range(nq):
            A[i, j] = dy[nq + j]
        for j in range(ne):
            F[i, j] = w[a0 + j]
            U[i, j] = w[a0 + ne + j]
            V[i, j] = w[a0 + 2 * ne + j]
        for j in range(nq + nb):
            FN[i, j] = w[a0 + 3 * ne + j]
        for j in range(nquad):
            PW[i, j] = pw[j]
    return A, F, U, V, FN, PW


# templates inlined into their caller at numba IR level: a call boundary inside a hot
# loop makes numba incref/decref every array of the Params record and the scratch tuple
# (atomic operations, ~2 µs per Dormand–Prince step measured), which inlining lets it prune
_INLINE = rk45.INLINE
_TEMPLATES: list = []


def templates() -> Templates:
    """The generic loops of every structure's module (see the module docstring)."""
    if _TEMPLATES:
        return _TEMPLATES[0]
    out = ""
    for fn in (projection.projection, *rk45.TEMPLATES, eval_samples, *radau5.TEMPLATES,
               *auto.TEMPLATES):
        out += f"\n\n{DECOR_INLINE if fn.__name__ in _INLINE else DECOR}\n" + \
            inspect.getsource(fn)
    out += radau5.core_source(radau5.CORES + auto.CORES)
    out += variational.template_source()
    glb = {name: (rk45.__name__, getattr(rk45, name))
           for name in ("DP_A", "DP_C", "dp45_dense", "dp45_factor", "dp45_norm")}
    glb.update(radau5.core_globals(radau5.CORES + auto.CORES))
    tpl = Templates(
        source=out,
        inline={fn.__name__: inspect.getsource(fn) for fn in rk45.TEMPLATES
                if fn.__name__ in _INLINE},
        globals=glb,
        modules=(__name__, projection.__name__, rk45.__name__, radau5.__name__,
                 radau.__name__, auto.__name__, variational.__name__,
                 "hystmech.components._ode"))
    _TEMPLATES.append(tpl)
    return tpl
