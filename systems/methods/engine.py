"""The generic engine: the methods' loops over a model's arrays, compiled once per install.

Where :mod:`~hystmech.systems.codegen` writes straight-line code per assembly structure
(a compile per structure), the engine reads the structure from the
:class:`~hystmech.systems.codegen.Params` record at run time (spring, damper and element
connections, state offsets, parameter slices, input kinds, observed connections: the
``SA`` ... ``OB`` fields) and calls each element's law through C function pointers: a
law's kernels are wrapped once per law and install in ``numba.cfunc`` wrappers
(systems/law_wrappers.py), the model's record holds the address of the law's table of
wrappers (:func:`law_table`), so no law's code is compiled into the engine and one
engine serves the shipped laws and a user's own alike; operators likewise (their force
with zero rates and their memory's update; the sensitivity module alone has the shipped
operators behind compiled switches, :func:`op_set`, for their tangents). Its module is generated once and cached on
disk like the generated modules (:mod:`~hystmech.systems.compile_cache`: keyed by the hash of
its source and of every module it draws on), so a new structure built from shipped laws
runs without compiling (docs/layout.md, "A model's structure is data").

The structure functions below (``core``, ``inputs_rot``, ``step``, ``signal``,
``powers``) have the signatures of the generated ones, so the methods' templates are
the same source in both paths; where a template marks a call ``# INLINE`` the generic
body is inlined as the generated one is (:func:`codegen.inline_calls`). Every loop
visits the connections in the order the generated code writes them, so the two paths
compute the same floating-point operations in the same order.

Methods on the engine so far: ``projection``, ``RK45`` (the one Dormand–Prince
template of methods/rk45.py over a generic ``fun_full``), ``radau5`` and ``auto`` (the
stiff templates and cores of methods/radau5.py, radau.py and auto.py over the generic
``fun_full`` and the generic analytic Jacobian ``jac``: the laws' ``jac`` kernels
through their wrappers), ``event`` and scipy's methods'
right-hand side and Jacobian (``core`` and ``jac_core`` called from Python,
methods/scipy_ivp.py) and ``eval_samples``, the sample evaluation of every result.
The analyses' loops run there too: the variational equations and the projection
scheme's chained Jacobian (systems/variational.py's templates, ``var_solve`` and
``proj_monodromy``: :data:`ANALYSIS_LOOPS`, :func:`for_loop`), and the identification's
forward sensitivity equations (identify/assembly.py's template compiled with the engine
and generic ``pjac_core``/``conn_core``, the shipped operators with their tangents
``ops_tan``/``ops_sens`` included: :func:`sensitivity`, :func:`for_sensitivity`,
:func:`sens_runnable`; the harmonic balance calls the variational loop's ``fun`` and
``jac``).
:func:`runnable` says whether a model can run on it: every element a law with compiled
kernels (shipped or a user's) or an operator with compiled kernels (projection scheme:
its force behind the law call, its memory's update in ``ops``; for the stiff methods and the analyses every element with a ``jac`` kernel),
inputs Harmonic or sampled tables, no compiled ``stop`` callback; other models run their
generated code.

Which code runs is chosen per model as a tiered JIT chooses (:func:`for_model`): the
structure's generated code when it is compiled already (fastest per step: the engine
costs about 1.9x per step with the projection scheme and 1.6x with RK45 on the belt
rig), else the engine when its loop is compiled (a new structure's first result in
about a second of CPU instead of 7–20 s), else the generated code, compiled as before,
while a background process compiles the engine's loop once per install.
``HYSTMECH_ENGINE=1`` always takes the engine, ``0`` never; :func:`use` sets the choice
for a block (the library's sweeps and continuation ask for the generated code).
"""
from __future__ import annotations

import contextlib
import importlib
import inspect
import math
import os

import numpy as np
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic
from numba.np.arrayobj import populate_array

from ...components.base import is_compiled
from .. import compile_cache
from ..codegen import (DECOR, DECOR_INLINE, Compiled, Templates, _first_def, _own_decorators,
                       inline_calls, internal_decorators)
from .. import law_wrappers, variational
from ..law_wrappers import TABLE_MIN
from ..templates import eval_samples, templates
from . import auto, projection, radau, radau5, rk45

@intrinsic
def span(typingctx, a, start, n):
    """a[start:start + n] of a 1-D C array without a reference count (meminfo NULL): a
    view that must not outlive ``a``. A slice made per element and call costs numba an
    atomic increment and decrement of ``a``'s count (calls of NRT_incref/NRT_decref) it
    cannot prune across the law switch's branches; this view costs none (the same trick
    as core/drive.py's ``_borrowed``). No bounds check: the model record's offsets are
    checked when it is built (codegen.Params)."""
    if not (isinstance(a, types.Array) and a.ndim == 1 and a.layout == "C"):
        return None
    ret = types.Array(a.dtype, 1, "C")

    def codegen(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, args[0])
        i0 = context.cast(builder, args[1], sig.args[1], types.intp)
        cnt = context.cast(builder, args[2], sig.args[2], types.intp)
        out = context.make_array(ret)(context, builder)
        isz = context.get_constant(types.intp, context.get_abi_sizeof(
            context.get_data_type(a.dtype)))
        populate_array(out, data=builder.gep(ary.data, [i0]),
                       shape=cgutils.pack_array(builder, [cnt]),
                       strides=cgutils.pack_array(builder, [isz]), itemsize=isz,
                       meminfo=None)
        return out._getvalue()
    return ret(a, start, n), codegen


# the generic structure functions: same signatures as the generated ones (codegen.py);
# temporaries are prefixed g_ so that, inlined into a template, they meet none of its
# names


def core(t, y, prm, dy, w, V):
    """GENERIC right-hand side ẏ of the smooth part with the inputs already in w (see
    codegen._core): springs, dampers, elements, external forces, in that order.

    V = scratch(prm): the nodes' positions, velocities and forces (DOFs, imposed
    motions, then the ground in the last slot, which the record's ground index −1
    reaches: numba wraps a negative index as Python does), so every connection reads
    and writes its two ends without a branch; then the run's constants (see scratch):
    one table of the linear connections, springs then dampers, each
    F = k·(x_a − x_b − u0) + pre + c·(v_a − v_b) (a spring's c and a damper's k, u0,
    pre are 0: the same floating-point value as the two formulas apart), the nodes'
    weights m·g, the observed connections' weights; the observed signal is summed here
    (V[6][0]) as the connections are visited."""
    g_nq = prm.mass.size
    g_nb = prm.HU.shape[0]
    g_nf = prm.HF.shape[0]
    g_ne = prm.EL.shape[0]
    g_A = g_nf + 2 * g_nb
    for g_i in range(g_nq):
        V[0][g_i] = y[g_i]
        V[1][g_i] = y[np.uint64(g_nq + g_i)]
        V[2][g_i] = V[5][g_i]
    for g_i in range(g_nb):
        V[0][np.uint64(g_nq + g_i)] = w[np.uint64(g_nf + g_i)]
        V[1][np.uint64(g_nq + g_i)] = w[np.uint64(g_nf + g_nb + g_i)]
        V[2][np.uint64(g_nq + g_i)] = 0.0
    g_sg = 0.0
    g_nl = V[3].shape[0]
    for g_s in range(g_nl):
        g_a = np.uint64(V[4][g_s, 0])
        g_b = np.uint64(V[4][g_s, 1])
        g_F = V[3][g_s, 0] * (V[0][g_a] - V[0][g_b] - V[3][g_s, 1]) + V[3][g_s, 2] \
            + V[3][g_s, 3] * (V[1][g_a] - V[1][g_b])
        V[2][g_a] -= g_F
        V[2][g_b] += g_F
        g_sg += V[3][g_s, 4] * g_F
    for g_e in range(g_ne):
        g_a = np.uint64(V[4][g_nl + g_e, 0])
        g_b = np.uint64(V[4][g_nl + g_e, 1])
        g_o = prm.EL[g_e, 2]
        g_n = prm.EL[g_e, 3]
        g_u = V[0][g_a] - V[0][g_b]
        g_v = V[1][g_a] - V[1][g_b]
        g_F = law_force_rate(prm.EL[g_e, 6], span(y, g_o, g_n), g_u, g_v,  # noqa: F821
                             span(prm.P, prm.EL[g_e, 4], prm.EL[g_e, 5] - prm.EL[g_e, 4]),
                             span(dy, g_o, g_n))
        w[np.uint64(g_A + g_e)] = g_F
        w[np.uint64(g_A + g_ne + g_e)] = g_u
        w[np.uint64(g_A + 2 * g_ne + g_e)] = g_v
        V[2][g_a] -= g_F
        V[2][g_b] += g_F
        g_sg += V[5][g_nq + g_nb + 1 + g_e] * g_F
    V[6][0] = g_sg
    for g_j in range(prm.FD.size):
        V[2][np.uint64(prm.FD[g_j])] += w[g_j]
    g_W = g_A + 3 * g_ne
    for g_i in range(g_nq):
        g_f = V[2][g_i]
        w[np.uint64(g_W + g_i)] = g_f
        dy[g_i] = y[np.uint64(g_nq + g_i)]
        dy[np.uint64(g_nq + g_i)] = g_f / prm.mass[g_i]
    for g_i in range(g_nb):
        w[np.uint64(g_W + g_nq + g_i)] = V[2][np.uint64(g_nq + g_i)]
    return 0


def inputs_rot(t, p, cs, prm, TF, TU, TV, w):
    """GENERIC inputs at step p: Harmonic rows from cos(Ωt + φ) in cs, tables from TF,
    TU, TV (see codegen._input_lines)."""
    g_nf = prm.HF.shape[0]
    g_nb = prm.HU.shape[0]
    for g_j in range(g_nf):
        if prm.KI[g_j] == 0:
            w[g_j] = prm.HF[g_j, 0] + prm.HF[g_j, 1] * cs[g_j]
        else:
            w[g_j] = TF[p, g_j]
    for g_j in range(g_nb):
        if prm.KI[g_nf + g_j] == 0:
            w[g_nf + g_j] = prm.HU[g_j, 0] + prm.HU[g_j, 1] * cs[g_nf + g_j]
        else:
            w[g_nf + g_j] = TU[p, g_j]
        if prm.KI[g_nf + g_nb + g_j] == 0:
            w[g_nf + g_nb + g_j] = prm.HV[g_j, 0] + prm.HV[g_j, 1] * cs[g_nf + g_nb + g_j]
        else:
            w[g_nf + g_nb + g_j] = TV[p, g_j]
    return 0


def inputs(t, prm, w):
    """GENERIC inputs at time t [s]: every row Harmonic (a model with sampled tables or
    compiled callables runs its generated code for the methods that need inputs at any
    t; see codegen._input_lines)."""
    g_nf = prm.HF.shape[0]
    g_nb = prm.HU.shape[0]
    for g_j in range(g_nf):
        w[g_j] = prm.HF[g_j, 0] + prm.HF[g_j, 1] * math.cos(prm.HF[g_j, 2] * t + prm.HF[g_j, 3])
    for g_j in range(g_nb):
        w[g_nf + g_j] = prm.HU[g_j, 0] + prm.HU[g_j, 1] * math.cos(prm.HU[g_j, 2] * t
                                                                  + prm.HU[g_j, 3])
        w[g_nf + g_nb + g_j] = prm.HV[g_j, 0] + prm.HV[g_j, 1] * math.cos(prm.HV[g_j, 2] * t
                                                                          + prm.HV[g_j, 3])
    return 0


def _fun_full_source() -> str:
    """GENERIC ``fun_full(t, y, prm, dy, w, V, energy)``: inputs at t, then core, then
    (energy) the energy integrands into dy[N:], written out in one body as codegen._fun
    writes the generated one (the templates inline it at their stage calls)."""
    _, _, ins, _ = _first_def(inspect.getsource(inputs))
    _, _, body, _ = _first_def(inspect.getsource(core))
    return "\n".join(["def fun_full(t, y, prm, dy, w, V, energy):", *ins, *body,
                      "    if energy:",
                      "        g_N = 2 * g_nq",
                      "        for g_e in range(g_ne):",
                      "            g_N += prm.EL[g_e, 3]",
                      "        powers(y, w, prm, dy, g_N)",
                      "    return 0"]) + "\n"


def _fun_source() -> str:
    """GENERIC ``fun(t, y, prm, dy, w, V)``: inputs at t, then core, in one body, as
    codegen._fun writes the generated one (the variational templates call it)."""
    _, _, ins, _ = _first_def(inspect.getsource(inputs))
    _, _, body, _ = _first_def(inspect.getsource(core))
    return "\n".join(["def fun(t, y, prm, dy, w, V):", *ins, *body, "    return 0"]) + "\n"


def step(y, dy, h, lo, hi, yn):
    """GENERIC Euler step + projection on the boxes (see codegen._step). Every component
    is clipped, a free one to (−inf, inf), which leaves a finite value as it is (and a
    non-finite one non-finite, for the finite check of the sum); no branch."""
    g_acc = 0.0
    for g_i in range(y.size):
        g_z = min(max(y[g_i] + h * dy[g_i], lo[g_i]), hi[g_i])
        yn[g_i] = g_z
        g_acc += g_z
    return g_acc


def step_keep(y, dy, h, lo, hi, yn):
    """GENERIC step in place (y) keeping the old state in yn: the projection loop's copy
    and step fused into one loop (see step)."""
    g_acc = 0.0
    for g_i in range(y.size):
        g_y = y[g_i]
        yn[g_i] = g_y
        g_z = min(max(g_y + h * dy[g_i], lo[g_i]), hi[g_i])
        y[g_i] = g_z
        g_acc += g_z
    return g_acc


def signal(y, w, prm):
    """GENERIC observed connection-force sum (see codegen._signal) at the state core
    was last evaluated at: core sums it into V[6][0] as it visits the connections
    (every template observes right after an evaluation; the RK45 loop evaluates at a
    dense-output point first, or reads y and w: signal_yw). Only ever inlined."""
    return V[6][0]  # noqa: F821


def signal_yw(y, w, prm):
    """GENERIC observed connection-force sum from the state y and the inputs in w (the
    RK45 loop's outputs, where the scratch V may hold another point; see signal)."""
    g_nq = prm.mass.size
    g_nb = prm.HU.shape[0]
    g_nf = prm.HF.shape[0]
    g_sg = 0.0
    for g_r in range(prm.OB.shape[0]):
        g_i = prm.OB[g_r, 1]
        g_kind = prm.OB[g_r, 0]
        if g_kind == 2:
            g_sg += w[g_nf + 2 * g_nb + g_i]
        else:
            g_a = prm.SA[g_i] if g_kind == 0 else prm.DA[g_i]
            g_b = prm.SB[g_i] if g_kind == 0 else prm.DB[g_i]
            g_off = 0 if g_kind == 0 else g_nq
            g_woff = g_nf if g_kind == 0 else g_nf + g_nb
            g_qa = 0.0
            if g_a >= 0:
                g_qa = y[g_off + g_a] if g_a < g_nq else w[g_woff + g_a - g_nq]
            g_qb = 0.0
            if g_b >= 0:
                g_qb = y[g_off + g_b] if g_b < g_nq else w[g_woff + g_b - g_nq]
            if g_kind == 0:
                g_sg += prm.k[g_i] * (g_qa - g_qb - prm.u0[g_i]) + prm.pre[g_i]
            else:
                g_sg += prm.c[g_i] * (g_qa - g_qb)
    return g_sg


def signal_needs_w(prm):
    """GENERIC (codegen._signal's SIGNAL_NEEDS_W, known at run time here): whether the
    observed signal reads the work vector (an element's force or an imposed motion)."""
    g_nq = prm.mass.size
    g_needs = False
    for g_r in range(prm.OB.shape[0]):
        g_i = prm.OB[g_r, 1]
        if prm.OB[g_r, 0] == 2:
            g_needs = True
        elif prm.OB[g_r, 0] == 0:
            g_needs = g_needs or prm.SA[g_i] >= g_nq or prm.SB[g_i] >= g_nq
        else:
            g_needs = g_needs or prm.DA[g_i] >= g_nq or prm.DB[g_i] >= g_nq
    return g_needs


def powers(y, w, prm, pw, off):
    """GENERIC integrands of the energy account (see codegen._powers)."""
    g_nq = prm.mass.size
    g_nb = prm.HU.shape[0]
    g_nf = prm.HF.shape[0]
    g_ne = prm.EL.shape[0]
    g_A = g_nf + 2 * g_nb
    g_k = 0
    for g_e in range(g_ne):
        pw[off + g_k] = w[g_A + g_e] * w[g_A + 2 * g_ne + g_e]
        g_k += 1
    for g_s in range(prm.DA.size):
        g_a = prm.DA[g_s]
        g_b = prm.DB[g_s]
        g_va = 0.0
        if g_a >= 0:
            g_va = y[g_nq + g_a] if g_a < g_nq else w[g_nf + g_nb + g_a - g_nq]
        g_vb = 0.0
        if g_b >= 0:
            g_vb = y[g_nq + g_b] if g_b < g_nq else w[g_nf + g_nb + g_b - g_nq]
        g_dv = g_va - g_vb
        pw[off + g_k] = prm.c[g_s] * g_dv * g_dv
        g_k += 1
    for g_j in range(prm.FD.size):
        pw[off + g_k] = w[g_j] * y[g_nq + prm.FD[g_j]]
        g_k += 1
    for g_j in range(g_nb):
        pw[off + g_k] = -w[g_A + 3 * g_ne + g_nq + g_j] * w[g_nf + g_nb + g_j]
        g_k += 1
    return 0


def jac_core(t, y, prm, J, w, V):
    """GENERIC analytic ∂ẏ/∂y with the inputs already in w (see codegen._jac): the
    identity block, springs, dampers, then each element through its law's ``jac``
    kernel (Je rows 0..n−1 = ∂ẋe/∂(xe, u, v), row n = ∂F/∂(xe, u, v)), every entry
    summed in the order, and with the operations, of the generated code. Imposed
    motions and the ground are inputs: no column."""
    g_nq = prm.mass.size
    g_nb = prm.HU.shape[0]
    g_nf = prm.HF.shape[0]
    g_ns = prm.SA.size
    J[:, :] = 0.0
    for g_i in range(g_nq):
        J[g_i, g_nq + g_i] = 1.0
    for g_s in range(g_ns + prm.DA.size):
        if g_s < g_ns:
            g_a = prm.SA[g_s]
            g_b = prm.SB[g_s]
            g_k = prm.k[g_s]
            g_off = 0
        else:
            g_a = prm.DA[g_s - g_ns]
            g_b = prm.DB[g_s - g_ns]
            g_k = prm.c[g_s - g_ns]
            g_off = g_nq
        for g_r in range(2):
            g_nd = g_a if g_r == 0 else g_b
            if 0 <= g_nd < g_nq:
                # F = k·(q_a − q_b): −F on a, +F on b; (−k)/m as the generated code writes it
                g_cf = (-g_k if g_r == 0 else g_k) / prm.mass[g_nd]
                if 0 <= g_a < g_nq:
                    J[g_nq + g_nd, g_off + g_a] += g_cf
                if 0 <= g_b < g_nq:
                    J[g_nq + g_nd, g_off + g_b] -= g_cf
    for g_e in range(prm.EL.shape[0]):
        g_a = prm.EL[g_e, 0]
        g_b = prm.EL[g_e, 1]
        g_o = prm.EL[g_e, 2]
        g_n = prm.EL[g_e, 3]
        g_xa = 0.0
        g_va = 0.0
        if g_a >= 0:
            g_xa = y[g_a] if g_a < g_nq else w[g_nf + g_a - g_nq]
            g_va = y[g_nq + g_a] if g_a < g_nq else w[g_nf + g_nb + g_a - g_nq]
        g_xb = 0.0
        g_vb = 0.0
        if g_b >= 0:
            g_xb = y[g_b] if g_b < g_nq else w[g_nf + g_b - g_nq]
            g_vb = y[g_nq + g_b] if g_b < g_nq else w[g_nf + g_nb + g_b - g_nq]
        g_Je = np.zeros((g_n + 1, g_n + 2))
        law_jac(prm.EL[g_e, 6], span(y, g_o, g_n), g_xa - g_xb, g_va - g_vb,  # noqa: F821
                span(prm.P, prm.EL[g_e, 4], prm.EL[g_e, 5] - prm.EL[g_e, 4]), g_Je)
        g_fa = 0 <= g_a < g_nq
        g_fb = 0 <= g_b < g_nq
        for g_r in range(g_n):
            for g_c in range(g_n):
                J[g_o + g_r, g_o + g_c] += g_Je[g_r, g_c]
            if g_fa:
                J[g_o + g_r, g_a] += g_Je[g_r, g_n]
                J[g_o + g_r, g_nq + g_a] += g_Je[g_r, g_n + 1]
            if g_fb:
                J[g_o + g_r, g_b] -= g_Je[g_r, g_n]
                J[g_o + g_r, g_nq + g_b] -= g_Je[g_r, g_n + 1]
        for g_r in range(2):
            g_nd = g_a if g_r == 0 else g_b
            if 0 <= g_nd < g_nq:
                g_wt = (-1.0 if g_r == 0 else 1.0) / prm.mass[g_nd]
                for g_c in range(g_n):
                    J[g_nq + g_nd, g_o + g_c] += g_wt * g_Je[g_n, g_c]
                if g_fa:
                    J[g_nq + g_nd, g_a] += g_wt * g_Je[g_n, g_n]
                    J[g_nq + g_nd, g_nq + g_a] += g_wt * g_Je[g_n, g_n + 1]
                if g_fb:
                    J[g_nq + g_nd, g_b] -= g_wt * g_Je[g_n, g_n]
                    J[g_nq + g_nd, g_nq + g_b] -= g_wt * g_Je[g_n, g_n + 1]
    return 0


def jac(t, y, prm, J, w, V):
    """GENERIC analytic Jacobian with the inputs at t (see codegen._jac)."""
    inputs(t, prm, w)
    return jac_core(t, y, prm, J, w, V)


def ops(y0, y1, w0, w1, dt, prm, rtol):
    """GENERIC operators' update over an accepted step (see codegen._ops): each
    operator's memory copied from y0 into y1, then advanced over the step's input
    segment u0 → u1 (u0 from y0, w0; u1 from y1, w1) at v = (u1 − u0)/dt [m/s] through
    its ``advance`` kernel (the law switch ``op_advance``)."""
    for g_e in range(prm.EL.shape[0]):
        if prm.EL[g_e, 7] != 2:
            continue
        g_o, g_n, g_p0, g_p1, g_u0 = op_u(prm, g_e, y0, w0)  # noqa: F821
        g_u1 = op_u(prm, g_e, y1, w1)[4]  # noqa: F821
        for g_i in range(g_o, g_o + g_n):
            y1[g_i] = y0[g_i]
        op_advance(prm.EL[g_e, 6], y1[g_o:g_o + g_n], g_u0, g_u1, dt,  # noqa: F821
                   (g_u1 - g_u0) / dt, prm.P[g_p0:g_p1], rtol)
    return 0


def stop(t, y):
    """GENERIC: no callback (a model with one runs its generated code)."""
    return False


def scratch(prm):
    """GENERIC scratch, made once per loop: the nodes' positions, velocities and forces
    (nq + nb + 1, the ground last, held at 0; see core), the linear connections' table
    (springs then dampers: k, u0, pre, c, observed weight) and their end nodes, the
    nodes' weights m·g followed by the elements' observed weights, and the observed
    signal's slot. Seven arrays whatever the structure, so the engine's argument
    types do not depend on it."""
    nq = prm.mass.size
    n = nq + prm.HU.shape[0] + 1
    ns = prm.SA.size
    nl = ns + prm.DA.size
    ne = prm.EL.shape[0]
    LC = np.zeros((nl, 5))
    LI = np.empty((nl + ne, 2), dtype=np.int64)
    for s in range(ns):
        LC[s, 0] = prm.k[s]
        LC[s, 1] = prm.u0[s]
        LC[s, 2] = prm.pre[s]
        LI[s, 0] = prm.SA[s]
        LI[s, 1] = prm.SB[s]
    for s in range(prm.DA.size):
        LC[ns + s, 3] = prm.c[s]
        LI[ns + s, 0] = prm.DA[s]
        LI[ns + s, 1] = prm.DB[s]
    for e in range(ne):
        LI[nl + e, 0] = prm.EL[e, 0]
        LI[nl + e, 1] = prm.EL[e, 1]
    for r in range(nl + ne):
        for c in range(2):
            if LI[r, c] < 0:
                LI[r, c] = n - 1     # the ground: the nodes' last slot
    B = np.zeros(n + ne)
    for i in range(nq):
        B[i] = prm.mass[i] * prm.grav
    for r in range(prm.OB.shape[0]):
        kind = prm.OB[r, 0]
        i = prm.OB[r, 1]
        if kind == 0:
            LC[i, 4] += 1.0
        elif kind == 1:
            LC[ns + i, 4] += 1.0
        else:
            B[n + i] += 1.0
    return (np.zeros(n), np.zeros(n), np.zeros(n), LC, LI, B, np.zeros(1))


# -- the forward sensitivity equations (identify/assembly.py) --------------------------------
# the structure functions the identification's template calls beside core and jac_core,
# as codegen.build_sensitivity writes them per structure (_pjac, _conn, _ops_sens): the same
# entries with the same operations. Operators (Preisach, Prandtl-Ishlinskii, Relay: the
# operator set, :func:`op_set`) run here too: their force in the sensitivity module's law
# switch, their tangents and memory update behind switches of their own; they have no
# columns among θ (codegen.param_columns), so the element parameters' columns are counted
# as the elements are visited

def pjac_core(t, y, prm, dy, G, w, V):
    """GENERIC ∂ẏ/∂θ at the point where core just left dy = ẏ (see codegen._pjac; θ as
    in codegen.param_columns: masses, spring k, u0, preload, damper c, the elements'
    parameter vectors but the operators', external force values), the element
    parameters through the laws' ``pjac`` wrappers (:func:`law_table`; a law without
    one leaves its columns zero)."""
    nq = prm.mass.size
    nb = prm.HU.shape[0]
    nf = prm.HF.shape[0]
    ns = prm.SA.size
    nd = prm.DA.size
    G[:, :] = 0.0
    for i in range(nq):
        # v̇_i = f_i/m_i with f_i ∋ m_i·g: ∂v̇_i/∂m_i = (g − v̇_i)/m_i
        G[nq + i, i] = (prm.grav - dy[nq + i]) / prm.mass[i]
    for s in range(ns + nd):
        if s < ns:
            a = prm.SA[s]
            b = prm.SB[s]
        else:
            a = prm.DA[s - ns]
            b = prm.DB[s - ns]
        xa = 0.0
        va = 0.0
        if a >= 0:
            xa = y[a] if a < nq else w[nf + a - nq]
            va = y[nq + a] if a < nq else w[nf + nb + a - nq]
        xb = 0.0
        vb = 0.0
        if b >= 0:
            xb = y[b] if b < nq else w[nf + b - nq]
            vb = y[nq + b] if b < nq else w[nf + nb + b - nq]
        for q in range(3 if s < ns else 1):
            if s < ns:
                col = nq + q * ns + s
                dF = xa - xb - prm.u0[s] if q == 0 else (-prm.k[s] if q == 1 else 1.0)
            else:
                col = nq + 3 * ns + s - ns
                dF = va - vb
            if 0 <= a < nq:
                G[nq + a, col] -= dF / prm.mass[a]
            if 0 <= b < nq:
                G[nq + b, col] += dF / prm.mass[b]
    ce = nq + 3 * ns + nd           # the next element's first column
    for e in range(prm.EL.shape[0]):
        if prm.EL[e, 7] == 2:       # an operator: no columns (its tangents: ops_tan)
            continue
        a = prm.EL[e, 0]
        b = prm.EL[e, 1]
        o = prm.EL[e, 2]
        n = prm.EL[e, 3]
        p0 = prm.EL[e, 4]
        npe = prm.EL[e, 5] - p0
        c0 = ce
        ce += npe
        xa = 0.0
        va = 0.0
        if a >= 0:
            xa = y[a] if a < nq else w[nf + a - nq]
            va = y[nq + a] if a < nq else w[nf + nb + a - nq]
        xb = 0.0
        vb = 0.0
        if b >= 0:
            xb = y[b] if b < nq else w[nf + b - nq]
            vb = y[nq + b] if b < nq else w[nf + nb + b - nq]
        Jp = np.zeros((n + 1, npe))
        if not law_pjac(prm.EL[e, 6], span(y, o, n), xa - xb, va - vb,  # noqa: F821
                        span(prm.P, p0, npe), Jp):
            continue
        for j in range(npe):
            for r in range(n):
                G[o + r, c0 + j] = Jp[r, j]
            if 0 <= a < nq:
                G[nq + a, c0 + j] -= Jp[n, j] / prm.mass[a]
            if 0 <= b < nq:
                G[nq + b, c0 + j] += Jp[n, j] / prm.mass[b]
    for j in range(prm.FD.size):
        d = prm.FD[j]
        G[nq + d, ce + j] = 1.0 / prm.mass[d]
    return 0


def conn_core(t, y, prm, w, V, F, FY, FT):
    """GENERIC every connection's force F (springs, dampers, elements), FY = ∂F/∂y and
    FT = ∂F/∂θ with the inputs in w (see codegen._conn): the elements through the laws'
    ``jac`` and ``pjac`` kernels; an operator's row holds its force only (its
    derivatives: the template's ops_tan)."""
    nq = prm.mass.size
    nb = prm.HU.shape[0]
    nf = prm.HF.shape[0]
    ns = prm.SA.size
    nd = prm.DA.size
    FY[:, :] = 0.0
    FT[:, :] = 0.0
    ne = prm.EL.shape[0]
    ce = nq + 3 * ns + nd           # the next element's first column of θ
    for row in range(ns + nd + ne):
        if row < ns:
            a = prm.SA[row]
            b = prm.SB[row]
        elif row < ns + nd:
            a = prm.DA[row - ns]
            b = prm.DB[row - ns]
        else:
            a = prm.EL[row - ns - nd, 0]
            b = prm.EL[row - ns - nd, 1]
        xa = 0.0
        va = 0.0
        if a >= 0:
            xa = y[a] if a < nq else w[nf + a - nq]
            va = y[nq + a] if a < nq else w[nf + nb + a - nq]
        xb = 0.0
        vb = 0.0
        if b >= 0:
            xb = y[b] if b < nq else w[nf + b - nq]
            vb = y[nq + b] if b < nq else w[nf + nb + b - nq]
        if row < ns:
            s = row
            F[row] = prm.k[s] * (xa - xb - prm.u0[s]) + prm.pre[s]
            FT[row, nq + s] = xa - xb - prm.u0[s]
            FT[row, nq + ns + s] = -prm.k[s]
            FT[row, nq + 2 * ns + s] = 1.0
            if 0 <= a < nq:
                FY[row, a] += prm.k[s]
            if 0 <= b < nq:
                FY[row, b] += -prm.k[s]
            continue
        if row < ns + nd:
            s = row - ns
            F[row] = prm.c[s] * (va - vb)
            FT[row, nq + 3 * ns + s] = va - vb
            if 0 <= a < nq:
                FY[row, nq + a] += prm.c[s]
            if 0 <= b < nq:
                FY[row, nq + b] += -prm.c[s]
            continue
        e = row - ns - nd
        o = prm.EL[e, 2]
        n = prm.EL[e, 3]
        p0 = prm.EL[e, 4]
        npe = prm.EL[e, 5] - p0
        u = xa - xb
        v = va - vb
        d = np.empty(n)
        F[row] = law_force_rate(prm.EL[e, 6], span(y, o, n), u, v,  # noqa: F821
                                span(prm.P, p0, npe), d)
        if prm.EL[e, 7] == 2:
            continue
        c0 = ce
        ce += npe
        Je = np.zeros((n + 1, n + 2))
        law_jac(prm.EL[e, 6], span(y, o, n), u, v, span(prm.P, p0, npe), Je)  # noqa: F821
        for j in range(n):
            FY[row, o + j] = Je[n, j]
        for q in range(2):
            if 0 <= a < nq:
                FY[row, q * nq + a] += Je[n, n + q]
            if 0 <= b < nq:
                FY[row, q * nq + b] += -Je[n, n + q]
        Jp = np.zeros((n + 1, npe))
        if law_pjac(prm.EL[e, 6], span(y, o, n), u, v, span(prm.P, p0, npe), Jp):  # noqa: F821
            for j in range(npe):
                FT[row, c0 + j] = Jp[n, j]
    return 0


def zero_smooth(prm, J):
    """GENERIC J[r, c] = 0 for the rows and columns r, c that are not an operator's
    memory (codegen._jac skip_ops): the template reads J on those only (its ``sm``), and
    an N × N zeroing with a memory of 50 states was the better part of a stage."""
    g_N = J.shape[0]
    g_ne = prm.EL.shape[0]
    g_r0 = 0
    for g_e in range(g_ne + 1):
        if g_e < g_ne and prm.EL[g_e, 7] != 2:
            continue
        g_r1 = prm.EL[g_e, 2] if g_e < g_ne else g_N
        for g_r in range(g_r0, g_r1):
            g_c0 = 0
            for g_f in range(g_ne + 1):
                if g_f < g_ne and prm.EL[g_f, 7] != 2:
                    continue
                g_c1 = prm.EL[g_f, 2] if g_f < g_ne else g_N
                for g_c in range(g_c0, g_c1):
                    J[g_r, g_c] = 0.0
                if g_f < g_ne:
                    g_c0 = prm.EL[g_f, 2] + prm.EL[g_f, 3]
        if g_e < g_ne:
            g_r0 = prm.EL[g_e, 2] + prm.EL[g_e, 3]
    return 0


def _sens_jac_source() -> str:
    # the template's ∂f/∂y: jac_core without the operators' rows (their tangents are
    # ops_tan's) and zeroing the rest only, as the generated sensitivity code's
    # (codegen._jac skip_ops)
    src = inspect.getsource(jac_core).replace("def jac_core(", "def sens_jac_core(", 1)
    zero = "    J[:, :] = 0.0\n"
    loop = "    for g_e in range(prm.EL.shape[0]):\n        g_a = prm.EL[g_e, 0]\n"
    assert src.count(zero) == 1 and src.count(loop) == 1
    return src.replace(zero, "    zero_smooth(prm, J)\n").replace(
        loop, "    for g_e in range(prm.EL.shape[0]):\n        if prm.EL[g_e, 7] == 2:\n"
        "            continue\n        g_a = prm.EL[g_e, 0]\n")


def op_u(prm, e, y, w):
    """An operator element e's row of ``prm.EL``: (o, n, p0, p1, u) — its memory slots
    y[o:o+n], its parameters P[p0:p1] and its input u = x_a − x_b [m] (a moving end's
    displacement from y, a prescribed end's from w, the ground's 0). Shared by ``ops``
    and the sensitivity module's ``op_ends`` (inlined)."""
    nq = prm.mass.size
    nf = prm.HF.shape[0]
    a = prm.EL[e, 0]
    b = prm.EL[e, 1]
    xa = 0.0
    if a >= 0:
        xa = y[a] if a < nq else w[nf + a - nq]
    xb = 0.0
    if b >= 0:
        xb = y[b] if b < nq else w[nf + b - nq]
    return prm.EL[e, 2], prm.EL[e, 3], prm.EL[e, 4], prm.EL[e, 5], xa - xb


def op_ends(prm, e, y, S, w, du, with_du):
    """:func:`op_u` of operator element e; with ``with_du`` also du[c] = ∂u/∂θ_c from
    the derivative rows S of its moving ends. Shared by ``ops_tan`` and ``ops_sens``
    (inlined into the sensitivity loops)."""
    nq = prm.mass.size
    a = prm.EL[e, 0]
    b = prm.EL[e, 1]
    if with_du:
        fa = 0 <= a < nq
        fb = 0 <= b < nq
        for c in range(du.size):
            if fa and fb:
                du[c] = S[a, c] - S[b, c]
            elif fa:
                du[c] = S[a, c]
            elif fb:
                du[c] = -S[b, c]
            else:
                du[c] = 0.0
    return op_u(prm, e, y, w)  # noqa: F821


def ops_tan(y, S, Sm, prm, w, DP, dS, DF, du):
    """GENERIC operators' force tangents (see codegen._ops_sens): for each operator k
    (in element order), DF[k, :] = dF/dθ through its ``force_tan`` kernel (the memory's
    derivative rows from Sm, the input's from S, ∂p/∂θ from DP's columns of its
    parameters), added to the velocity rows of dS as −F/m on a, +F/m on b."""
    nq = prm.mass.size
    ns = du.size
    k = 0
    for e in range(prm.EL.shape[0]):
        if prm.EL[e, 7] != 2:
            continue
        o, n, p0, p1, u = op_ends(prm, e, y, S, w, du, True)
        op_ftan(prm.EL[e, 6], y[o:o + n], Sm[o:o + n], u, du, prm.P[p0:p1],  # noqa: F821
                DP[:, p0:p1], DF[k])
        a = prm.EL[e, 0]
        b = prm.EL[e, 1]
        for c in range(ns):
            if 0 <= a < nq:
                dS[nq + a, c] -= DF[k, c] / prm.mass[a]
            if 0 <= b < nq:
                dS[nq + b, c] += DF[k, c] / prm.mass[b]
        k += 1
    return 0


def ops_sens(y0, y1, S0, S1, w0, w1, dt, prm, DP, du0, du1, rtol, with_s):
    """GENERIC operators' memory advanced over a step's input segment in y1 (as the
    simulation's ``ops``), with its derivative rows in S1 (``advance_tan``; see
    codegen._ops_sens)."""
    for e in range(prm.EL.shape[0]):
        if prm.EL[e, 7] != 2:
            continue
        _, _, _, _, u0 = op_ends(prm, e, y0, S0, w0, du0, with_s)
        o, n, p0, p1, u1 = op_ends(prm, e, y1, S1, w1, du1, with_s)
        if with_s:
            op_atan(prm.EL[e, 6], y1[o:o + n], S1[o:o + n], u0, u1, du0, du1,  # noqa: F821
                    prm.P[p0:p1], DP[:, p0:p1])
        else:
            op_advance(prm.EL[e, 6], y1[o:o + n], u0, u1, dt, (u1 - u0) / dt,  # noqa: F821
                       prm.P[p0:p1], rtol)
    return 0


# which code runs a model the engine can run (for_model): "auto" (unset; tiered), "1"
# (always the engine), "0" (always the structure's generated code)
ENV = "HYSTMECH_ENGINE"
N_SCRATCH = 7     # arrays in scratch(prm)

_FUNCTIONS = (core, inputs, inputs_rot, step, step_keep, signal, signal_yw, signal_needs_w, powers, ops,
              stop, scratch, jac_core, jac)
# the functions of the generated path's "hot" set: inlined where marked (codegen.py)
_HOT = ("core", "inputs_rot", "step", "step_keep", "signal", "signal_yw", "signal_needs_w", "fun_full")


# -- the laws: through their C wrappers ---------------------------------------------------

def _kernel_of(cls, name: str):
    # the class-level kernel, inherited ones included (LinearSpring's ``rate`` is its
    # base _Linear's no_rate), as an element of the class reaches it: the first class of
    # the MRO that sets it; None when only ForceElement's default (None) does
    for c in cls.__mro__:
        if name in c.__dict__:
            k = c.__dict__[name]
            return getattr(k, "__func__", k)
    return None


def _compiled(*kernels) -> bool:
    # the one test of what the engine can call: numba functions (their C wrappers are
    # compiled from them); None, a Python function or a closure's generated code is not
    return all(is_compiled(k) for k in kernels)


def _callable(el, need_jac: bool) -> bool:
    # whether the engine's loops can call element ``el``: a law through its ``force``
    # and ``rate`` (and ``jac`` for the stiff and analysis loops), an operator through
    # its ``force`` (zero rates) and ``advance`` (no Jacobian: the stiff and analysis
    # loops do not take operators)
    if el.kind == "operator":
        return not need_jac and _compiled(el.force, el.advance)
    return _compiled(el.force, el.rate) and (not need_jac or _compiled(el.jac))


def law_table(element, jac: bool = False, sens: bool = False):
    """The int64 table of C wrappers (systems/law_wrappers.py) through which the engine
    calls ``element``'s law, or None when its ``force``/``rate`` are not compiled numba
    kernels (the model then runs its generated code). Every law, shipped or a user's,
    is reached this way: its kernels are compiled once per law and install (cfuncs in
    the disk cache), not into the engine, whose every loop would otherwise carry every
    law's kernels (compiling all its loops on fresh caches took 126.8 s of CPU with
    the shipped laws and operators in switches, 98.7 s through their wrappers; the
    indirect call cost 3 % per RK45 step on a 2-DOF LuGre + Bouc-Wen rig, the same
    results to the last digit printed). jac: with the ``jac`` wrapper
    where the law has a compiled ``jac`` (the stiff and analysis loops need it: a table
    whose ``jac`` slot stays 0 keeps the model off them); sens: with ``pjac`` too where
    the law has one (else its parameters' columns stay zero, as in the generated
    code)."""
    el = element
    if el.kind == "operator" or not _compiled(el.force, el.rate):
        return None
    slots = ("fr", "jac") if jac and _compiled(el.jac) else ("fr",)
    if sens and _compiled(el.pjac):
        slots += ("pjac",)
    return law_wrappers.law_table(el, slots)


def _dispatch_sources(ops) -> str:
    # the engine's law calls: a law or operator through its table's C wrappers (the id
    # is the table's address, >= TABLE_MIN); in the sensitivity module a shipped
    # operator (ids 0 ... len(ops) - 1) through op_force_rate, one compiled function,
    # not inlined into every copy of the switch
    fr = [DECOR_INLINE, "def law_force_rate(law, x, u, v, p, d):",
          f"    if law >= {TABLE_MIN}:", "        return call_fr(law, x, u, v, p, d)"]
    if ops:
        fr += [f"    if 0 <= law < {len(ops)}:",
               "        return op_force_rate(law, x, u, v, p, d)"]
    fr.append("    return math.nan")
    jac = [DECOR_INLINE, "def law_jac(law, x, u, v, p, Je):",
           f"    if law >= {TABLE_MIN}:", "        call_jac(law, x, u, v, p, Je)",
           "    return 0"]
    return "\n".join(fr) + "\n\n\n" + "\n".join(jac) + "\n"


def _pjac_dispatch_source() -> str:
    # False: the law has no pjac wrapper (its parameters' columns stay zero)
    return "\n".join([DECOR_INLINE, "def law_pjac(law, x, u, v, p, Jp):",
                      f"    if law >= {TABLE_MIN}:",
                      "        return call_pjac(law, x, u, v, p, Jp)",
                      "    return False"]) + "\n"


def source() -> str:
    """The engine module's source (see the module docstring)."""
    # (the functions only its loops call get no Python wrapper: codegen.INTERNAL)
    return internal_decorators(_source(()))


def _source(ops) -> str:
    # ops: the shipped operators behind compiled switches (the sensitivity module: their
    # tangents have no C wrappers), () for the engine, which calls every operator, as
    # every law, through its table of C wrappers
    tpl = templates()
    head = ['"""The generic engine of hystmech (systems/methods/engine.py)."""',
            "import math", "", "import numpy as np",
            "from numba import njit", "",
            "from hystmech.systems.compile_cache import resolve",
            "from hystmech.systems.methods.engine import span",
            "from hystmech.systems.law_wrappers import call_adv, call_fr, call_jac, call_pjac",
            "from hystmech.systems.observers import observe",
            "from hystmech.systems.methods.rk45 import DP_A, DP_C, dp45_dense, dp45_factor, "
            "dp45_norm", ""]
    for k, ks in enumerate(ops):
        for pre, fn in zip(("opforce", "adv", "ftan", "atan"), ks):
            mod, qual = compile_cache.kernel_ref(fn)
            head.append(f"{pre}_{k} = resolve({mod!r}, {qual!r})")
    # the stiff cores' module-level names (radau.py, auto.py), as systems/templates.py
    # hands them to the generated modules
    have = {"DP_A", "DP_C", "dp45_dense", "dp45_factor", "dp45_norm"}
    for name, (mod, _) in sorted(radau5.core_globals(_STIFF_CORES).items()):
        if name not in have:
            head.append(f"from {mod} import {name}")
    src = "\n".join(head) + "\n\n\n" + _dispatch_sources(ops) + \
        _op_dispatch_source(ops) + f"\n\n{DECOR_INLINE}\n" + inspect.getsource(op_u)

    texts = {}
    for fn in _FUNCTIONS:
        texts[fn.__name__] = inspect.getsource(fn)
    texts["fun"] = _fun_source()
    texts["fun_full"] = _fun_full_source()
    texts["fun_full_call"] = _fun_full_source().replace("def fun_full(", "def fun_full_call(")

    for name, text in texts.items():
        src += f"\n\n{DECOR_INLINE if name in _HOT else DECOR}\n" + text
    loops = ""
    for fn in (projection.projection, eval_samples, *rk45.TEMPLATES):
        loops += f"\n\n{DECOR_INLINE if fn.__name__ in tpl.inline else DECOR}\n" + \
            inspect.getsource(fn)
    # the RK45 outputs observe the state they are at (the scratch V may hold the last
    # stage's nodes): signal_yw, which reads y and w, and the run-time needs_w test
    def observing_here(text):
        return text.replace("sg = signal(zi, w, prm)  # INLINE",
                            "sg = signal_yw(zi, w, prm)  # INLINE") \
            .replace("SIGNAL_NEEDS_W", "signal_needs_w(prm)")
    def one_copy(text):
        # fun_full, with every law inlined, is large: inlined only at the stage loop's
        # call (the hot one); the first evaluation, the initial step and the outputs
        # call one compiled copy (an RK45 loop with six inlined copies took 46 s of
        # CPU to compile on a fresh install)
        out = []
        for ln in text.split("\n"):
            if "fun_full(" in ln and "fun_full(ts, zs," not in ln:
                ln = ln.replace("fun_full(", "fun_full_call(").replace("  # INLINE", "")
                # energy off as a run-time bool, not the literal False: numba would
                # compile a second copy of fun_full_call for the literal's type
                ln = ln.replace(", V, False)", ", V, V[6].size < 0)")
            out.append(ln)
        return "\n".join(out)
    def fused_step(text):
        # the projection loop's copy of the old state and its in-place step: one loop
        old = ("            for i in range(N):\n                yn[i] = y[i]\n"
               "            s = step(y, dy, hp, lo, hi, y)  # INLINE")
        assert old in text
        return text.replace(old, "            s = step_keep(y, dy, hp, lo, hi, yn)  # INLINE")
    loops = one_copy(loops)
    inline = {name: one_copy(observing_here(text)) for name, text in tpl.inline.items()}

    fn_texts = [t for name, t in texts.items() if name in _HOT]
    return src + inline_calls(fused_step(observing_here(loops)), fn_texts, inline, N_SCRATCH) \
        + _stiff_source() + _own_decorators(variational.template_source())


# the stiff methods' templates and cores (methods/radau5.py, radau.py, auto.py): the same
# source the generated modules carry (systems/templates.py), over the generic fun_full
# (inlined in stiff_fun, as there) and jac; every law of the set has a jac kernel, so the
# analytic Jacobian only (stiff_jac_fd is the generated path's, for kernels without one)
_STIFF_TEMPLATES = (radau5.stiff_fun, radau5.stiff_jac_an, radau5.radau5, *auto.TEMPLATES)
_STIFF_CORES = radau5.CORES + auto.CORES


def _stiff_source() -> str:
    out = ""
    for fn in _STIFF_TEMPLATES:
        out += f"\n\n{DECOR}\n" + inspect.getsource(fn)
    out += _own_decorators(radau5.core_source(_STIFF_CORES))
    return out + "\n\nstiff_jac = stiff_jac_an\n"


_SENS_FUNCTIONS = (pjac_core, conn_core, zero_smooth, ops_tan, ops_sens)
_SENS_STAGE_CALLS = (pjac_core, ops_tan)      # called once by the template's stage
# the template's call of ∂f/∂y, to the sensitivity module's own (_sens_jac_source)
_SENS_JAC_CALL = "jac_core(t, y, prm, J, w, V)"
# an operator's kernels, as the sensitivity module's switches call them
_OP_KERNELS = ("force", "advance", "force_tan", "advance_tan")


def op_set() -> tuple:
    """((force, advance, force_tan, advance_tan, name), ...) of the shipped operators
    (Preisach, Prandtl-Ishlinskii, Relay: classes of
    :data:`hystmech.components.REGISTRY` of kind "operator") whose four kernels are
    module-level numba functions, in a fixed order (their ids, :func:`op_id`): the
    sensitivity module's switches call them (their tangents have no C wrappers); the
    engine calls every operator through its wrappers (:func:`op_table`)."""
    if _OPS:
        return _OPS[0]
    from ...components import REGISTRY

    out, seen = [], set()
    for name, mod in sorted(REGISTRY.items()):
        cls = getattr(importlib.import_module(f"hystmech.components.{mod}"), name)
        if cls.kind != "operator":
            continue
        ks = tuple(_kernel_of(cls, k) for k in _OP_KERNELS)
        if any(k is None or compile_cache.kernel_ref(k) is None for k in ks):
            continue
        if tuple(map(id, ks)) in seen:
            continue
        seen.add(tuple(map(id, ks)))
        out.append((*ks, name))
    _OPS.append(tuple(out))
    return _OPS[0]


_OPS: list = []


def op_id(element) -> int | None:
    """The engine's id of operator ``element``'s kernels (after the law set's ids), or
    None when they are not the operator set's."""
    for i, ks in enumerate(op_set()):
        if all(getattr(element, k) is f for k, f in zip(_OP_KERNELS, ks)):
            return i
    return None


def sens_runnable(m, bind: bool = True) -> bool:
    """Whether model ``m``'s forward sensitivities can run on the engine's sensitivity
    module: every element a law with compiled ``force``, ``rate`` and ``jac`` kernels
    (its ``pjac`` where it has one: else its parameters' columns stay zero, as in the
    generated code) or an operator of :func:`op_set`, inputs Harmonic or sampled
    tables, no compiled ``stop`` callback; with ``bind`` the ids (a law's: the address
    of its table of C wrappers, :func:`law_table`, built here; an operator's: its
    :func:`op_id`) are then written into ``m.prm.EL``."""
    if m.callback is not None or not m.compiled or (m.prm.KI < 0).any():
        return False
    for e in m.asm.elements:
        el = e.element
        if not (op_id(el) is not None if el.kind == "operator" else _callable(el, True)):
            return False
    if bind:
        _bind(m, True, True)
    return True


def _op_dispatch_source(ops) -> str:
    # the shipped operators' force (their memory has no rate: zero, as the generated
    # core writes it; called from law_force_rate), the switches of their tangent and
    # update kernels (ids 0 ... len(ops) - 1); a user's operator (or a sum with an
    # operator part) advances through its C wrapper (law_wrappers.py), the id the address
    # of its table
    # (the engine, ops == (), has op_advance alone: its force and tangent switches
    # serve the sensitivity module only)
    out = ""
    calls = {"op_ftan": ("x, S, u, du, p, DP, out", "ftan"),
             "op_atan": ("x, S, u0, u1, du0, du1, p, DP", "atan"),
             "op_advance": ("x, u0, u1, dt, v, p, rtol", "adv")}
    if not ops:
        calls = {"op_advance": calls["op_advance"]}
    else:
        lines = ["", "", DECOR, "def op_force_rate(law, x, u, v, p, d):",
                 "    for g_i in range(d.size):", "        d[g_i] = 0.0"]
        for k in range(len(ops)):
            lines += [f"    {'if' if k == 0 else 'elif'} law == {k}:",
                      f"        return opforce_{k}(x, u, v, p)"]
        lines.append("    return math.nan")
        out += "\n".join(lines) + "\n"
    for fn, (args, pre) in calls.items():
        lines = ["", "", DECOR, f"def {fn}(law, {args}):"]
        if fn == "op_advance":
            lines += [f"    if law >= {TABLE_MIN}:", f"        call_adv(law, {args})",
                      "        return 0"]
        for k in range(len(ops)):
            lines += [f"    {'if' if k == 0 else 'elif'} law == {k}:",
                      f"        {pre}_{k}({args})"]
        lines.append("    return 0")
        out += "\n".join(lines) + "\n"
    return out


def _sens_source(template: str) -> str:
    # the engine's source with the laws' pjac call, the operators' kernels behind
    # their switches, the generic sensitivity structure functions and the analysis'
    # template (its loops call core, jac_core, pjac_core, conn_core, ops_tan, ops_sens
    # and scratch as globals)
    out = internal_decorators(_source(op_set())) + "\n\n"
    out += "\n\n" + _pjac_dispatch_source()
    out += f"\n\n{DECOR_INLINE}\n" + inspect.getsource(op_ends)
    # the stage's callees inlined into it, as in the generated module (codegen
    # build_sensitivity): the engine's sensitivities ran 32 % faster (core is inlined
    # already, _HOT)
    for fn in _SENS_FUNCTIONS:
        dec = DECOR_INLINE if fn in _SENS_STAGE_CALLS else DECOR
        out += f"\n\n{dec}\n" + inspect.getsource(fn)
    out += f"\n\n{DECOR_INLINE}\n" + _sens_jac_source()
    assert template.count(_SENS_JAC_CALL) == 1
    template = template.replace(_SENS_JAC_CALL, "sens_" + _SENS_JAC_CALL)
    return out + "\n\n" + _own_decorators(template) + "\n"


def _sens_modules(template_modules) -> list:
    mods = set(modules()) | set(template_modules)
    for ks in op_set():
        mods |= {compile_cache.kernel_ref(f)[0] for f in ks[:4]}
    return sorted(mods)


_SENS: dict = {}


def sensitivity(template: str, template_modules=()) -> Compiled | None:
    """The engine compiled with an analysis' sensitivity ``template`` (the forward
    sensitivity equations of identify/assembly.py: its loops over ``core``,
    ``jac_core``, ``pjac_core``, ``conn_core``, ``ops_tan``, ``ops_sens``), once per
    install and template (keyed as the engine, with ``template_modules``, the modules
    the template comes from); None when the disk cache is disabled."""
    d = str(compile_cache.cache_dir())
    key = (d, template)
    if key not in _SENS:
        mod, where = compile_cache.load_stamped(
            "engine-sens", lambda: _sens_source(template), _sens_modules(template_modules))
        _SENS[key] = None if mod is None else Compiled(mod, "disk", where)
    return _SENS[key]


def for_sensitivity(m, template: str, template_modules=()) -> Compiled | None:
    """The engine's sensitivity module (:func:`sensitivity`) if model ``m``'s forward
    sensitivities are to run on it, else None (the structure's generated sensitivity
    module, codegen.build_sensitivity): with $HYSTMECH_ENGINE=1 for every model it can
    run (shipped laws with ``jac`` kernels and shipped operators: :func:`sens_runnable`),
    compiled on first use; by default (tiered) when its loop is compiled already (this process
    or the disk cache), else the generated code; ``0`` never."""
    md = mode()
    if md == "generated" or not sens_runnable(m, bind=False):
        return None
    if md == "auto":
        hit = _SENS.get((str(compile_cache.cache_dir()), template))
        if hit is None:
            found = compile_cache.find_stamped("engine-sens")
            hit = None if found is None else Compiled(found[0], "disk", found[1])
        if hit is None or not _ready(getattr(hit.mod, "sens_simulate", None)):
            return None
        # (the stamp names the template's module file: a changed template is restamped)
        _SENS[(str(compile_cache.cache_dir()), template)] = hit
    else:
        hit = sensitivity(template, template_modules)
    if hit is not None:
        sens_runnable(m)
    return hit


def modules() -> list:
    """The modules the engine's compiled file depends on (its cache key)."""
    mods = {__name__, "hystmech.systems.observers", "hystmech.systems.templates",
            projection.__name__, rk45.__name__, "hystmech.components._ode",
            radau5.__name__, radau.__name__, auto.__name__, variational.__name__,
            "hystmech.systems.law_wrappers"}
    return sorted(mods)


_ENGINE: dict = {}

# the engine's loop each method runs (methods not listed run their generated code)
LOOPS = {"projection": "projection", "RK45": "rk45", "event": "core", "BDF": "core",
         "Radau": "core", "LSODA": "core", "radau5": "radau5", "auto": "auto"}
# the compiled functions of a loop (default: the loop's own name): "auto" runs in
# phases (methods/auto.py run_phases), all compiled by warm; the generated module's
# phase every run calls says whether the structure's own code is compiled
_LOOP_FUNCTIONS = {"auto": ("auto_stiff", "auto_stiff_explicit", "auto_stiff_implicit"),
                   "core": ("core", "jac_core")}   # (scipy's BDF/Radau/LSODA take jac_core)
_GENERATED_PROBE = {"auto": "auto_stiff_explicit"}
_STIFF_LOOPS = ("radau5", "auto")
# the analyses' loops (systems/variational.py's templates, not a method's): the
# variational equations integrated with the state (periodic/monodromy.py
# VariationalMap) and the projection scheme's chained Jacobian (ProjectionMap); they
# read no samples, and need every law's jac kernel (as the stiff loops)
ANALYSIS_LOOPS = ("var_solve", "proj_monodromy")
_JAC_LOOPS = _STIFF_LOOPS + ANALYSIS_LOOPS + ("sens_simulate",)
_MODES = {"": "auto", "auto": "auto", "1": "engine", "engine": "engine",
          "0": "generated", "generated": "generated"}


def mode() -> str:
    """The choice $HYSTMECH_ENGINE asks for: "auto" (unset or ``auto``: tiered, see
    :func:`for_model`), "engine" (``1``: the engine wherever it can run, compiled on
    first use) or "generated" (``0``: the structure's generated code, compiled per
    structure; the fastest per step, for long runs and sweeps)."""
    v = os.environ.get(ENV, "auto").strip().lower()
    if v not in _MODES:
        raise ValueError(f"${ENV} must be 0 (generated code), 1 (the engine) or auto "
                         f"(tiered, the default) (got {os.environ.get(ENV)!r})")
    return _MODES[v]


@contextlib.contextmanager
def use(choice: str, *, keep_explicit: bool = False):
    """Within the block (or the decorated function), run models on ``choice``:
    "generated" (the structure's own compiled code: a sweep or a continuation of one
    structure, where per-step speed pays its compile), "engine" or "auto". Set through
    $HYSTMECH_ENGINE, so the worker processes a sweep starts inside inherit it.
    keep_explicit: leave an explicit $HYSTMECH_ENGINE of 0 or 1 as it is (the
    library's sweeps: the choice is the default only)."""
    value = {"generated": "0", "engine": "1", "auto": "auto"}.get(choice)
    if value is None:
        raise ValueError(f"choice must be 'generated', 'engine' or 'auto' (got {choice!r})")
    old = os.environ.get(ENV)
    if keep_explicit and mode() != "auto":
        value = old
    os.environ[ENV] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(ENV, None)
        else:
            os.environ[ENV] = old


def _tag() -> str:
    # the stamp file is per installed copy (compile_cache.stamp_path)
    return "engine"


def engine() -> Compiled | None:
    """The compiled engine (loaded from the disk cache, compiled on first use), or None
    when the disk cache is disabled or unusable (models then run their generated code)."""
    d = str(compile_cache.cache_dir())
    if d not in _ENGINE:
        mod, where = compile_cache.load_stamped(_tag(), source, modules())
        _ENGINE[d] = None if mod is None else Compiled(mod, "disk", where)
    return _ENGINE[d]


def _ready(disp) -> bool:
    # compiled in this process or on disk (numba's index of the function)
    return disp is not None and (bool(disp.signatures) or compile_cache.cached_on_disk(disp))


def cached(loop: str) -> Compiled | None:
    """The engine when its ``loop`` and its sample evaluation are compiled (in this
    process or in the disk cache), found without making its source; else None."""
    eng = _ENGINE.get(str(compile_cache.cache_dir()))
    if eng is None:
        hit = compile_cache.find_stamped(_tag())
        if hit is None:
            return None
        eng = Compiled(hit[0], "disk", hit[1])
    funcs = _LOOP_FUNCTIONS.get(loop, (loop,))
    if loop not in ANALYSIS_LOOPS:
        funcs = (*funcs, "eval_samples")
    if not all(_ready(getattr(eng, f, None)) for f in funcs):
        return None
    _ENGINE[str(compile_cache.cache_dir())] = eng
    return eng


def runnable(m, loop: str | None = None, bind: bool = True) -> bool:
    """Whether model ``m`` can run on the engine (every element a law with compiled
    ``force`` and ``rate`` kernels, shipped or a user's, or an operator with compiled
    ``force`` and ``advance`` kernels; inputs Harmonic or
    sampled tables, no compiled ``stop`` callback; for the stiff methods and the
    analyses' loops every law with a compiled ``jac``); with ``bind`` its law ids (a
    law's: the address of its table of C wrappers, :func:`law_table`, built here) are
    then written into ``m.prm.EL``; without, nothing is built (the tiered choice asks
    first, and builds the wrappers only when the model is to run on the engine). loop:
    the engine loop asked for (default: the one of ``m.method``)."""
    if m.callback is not None or not m.compiled or (m.prm.KI < 0).any():
        return False
    need_jac = (loop or LOOPS.get(m.method)) in _JAC_LOOPS
    if not all(_callable(e.element, need_jac) for e in m.asm.elements):
        return False
    if bind:
        # scipy's implicit methods ("core") take the Jacobian too
        _bind(m, need_jac or (loop or LOOPS.get(m.method)) == "core", False)
    return True


def _bind(m, jac: bool, sens: bool) -> None:
    # the elements' ids in m.prm.EL: a law's, the address of its table of C wrappers
    # (built, compiled on a law's first use, kept alive by the model); an operator's,
    # its table's address on the engine, its op_id in the sensitivity module (sens),
    # whose switches call the shipped operators' tangents (they have no C wrappers)
    tables, ids = [], []
    for e in m.asm.elements:
        el = e.element
        if el.kind == "operator" and sens:
            ids.append(op_id(el))
            continue
        t = op_table(el) if el.kind == "operator" else law_table(el, jac, sens)
        tables.append(t)
        ids.append(int(t.ctypes.data))
    m._law_tables = tables
    if ids:
        m.prm.EL[:, 6] = ids


def op_table(el):
    """The table of operator ``el``'s C wrappers (its force with zero rates, its
    ``advance``: systems/law_wrappers.py), or None when its kernels are not compiled."""
    if not _compiled(el.force, el.advance):
        return None
    return law_wrappers.law_table(el, ("fr", "adv"))


_WARMING: set = set()


def warm(loop: str, model_cls) -> None:
    """Compile the engine's ``loop`` ("projection", "rk45", "core", "radau5" or "auto")
    and its sample
    evaluation by running a small reference model (``model_cls``:
    :class:`~hystmech.systems.model.Model`) on it, as the method's ``run`` does (the
    argument types of every model are the same), unless the disk cache has them. Holds
    a lock in the cache directory meanwhile, so processes sharing it (the suite's
    workers) compile once."""
    if loop in ANALYSIS_LOOPS:
        _warm_analysis(loop, model_cls)
        return
    from ...components import Dahl, Masing
    from . import get

    with _warming(loop) as a:
        if a is not None:
            if loop == "rk45":
                a.add_element("e", Dahl(rho=2e4, Fc=1.0), "m", "ground")
                method, t1, opts = "RK45", 1e-3, {}
            elif loop in _STIFF_LOOPS:
                # stiff (a damper of 1e5 N·s/m on 1 kg): "auto" turns to Radau within
                # its first steps, so each of its phases is compiled
                a.add_element("e", Dahl(rho=2e4, Fc=1.0), "m", "ground")
                a.add_damper("m", "ground", c=1e5)
                method, t1, opts = loop, 1e-3, {}
            else:
                a.add_element("e", Masing(k=1e3, k0=0.0, alpha=2.0), "m", "ground")
                method, t1, opts = (("projection", 1e-4, {"h": 1e-5}) if loop == "projection"
                                    else ("event", 1e-4, {}))
            with use("engine"):
                m = model_cls(a, method=method)
                out = get(method).run(m, 0.0, t1, a.initial_state(), None, True, None, opts,
                                      method=method)
                FE, UB, VB = m.forcing_on(out.t)        # the sample evaluation
                m.eval_on(out.t, np.ascontiguousarray(out.y), FE, UB, VB)
                if loop == "core":                      # scipy's implicit methods' Jacobian
                    eng = m.engine()
                    eng.jac_core(0.0, a.initial_state(), m.prm, np.zeros((m.N, m.N)),
                                 np.zeros(m.layout.n_work), eng.scratch(m.prm))


def _warm_analysis(loop: str, model_cls) -> None:
    # an analysis' loop (ANALYSIS_LOOPS), compiled by one call with the argument types
    # of periodic/monodromy.py's VariationalMap (z of the state alone and with Φ: one
    # type) or ProjectionMap on a small reference model
    from ...components import Dahl, Masing

    with _warming(loop) as a:
        if a is not None:
            law = Dahl(rho=2e4, Fc=1.0) if loop == "var_solve" else \
                Masing(k=1e3, k0=0.0, alpha=2.0)
            a.add_element("e", law, "m", "ground")
            with use("engine"):
                m = model_cls(a)
                eng = for_loop(m, loop)
            if eng is None:
                return
            y0 = np.array(a.initial_state(), dtype=float)
            N = y0.size
            if loop == "var_solve":
                z = np.concatenate([y0, np.eye(N).ravel()])
                eng.var_solve(z, 0.0, 1e-3, m.prm, m.layout.n_work, N,
                              np.full(z.size, 1e-9), 1e-6, 1e-4)
            else:
                eng.proj_monodromy(y0.copy(), 0.0, 1e-4, 10, 1e-4, m.prm, m.box_lo,
                                   m.box_hi, m.layout.n_work, np.empty((N, N)))


def warm_laws() -> None:
    """Compile the C wrappers (systems/law_wrappers.py) of every shipped law and
    operator whose kernels are module-level numba functions into the disk cache, as the
    engine's loops are: the background child that compiles an engine loop
    (``model.warm_engine``) calls it after the loop, so a user's next new structure with
    another shipped law compiles nothing. Each wrapper already on disk is loaded, not
    compiled (about 1 s for all; 40 s of CPU to compile them and the laws' kernels on
    empty caches). Processes that take the engine at once ($HYSTMECH_ENGINE=1, the test
    suite) compile a law's wrappers on its first use instead."""
    from ...components import REGISTRY

    def ok(k):
        # (a module-level kernel: the disk cache's key names it)
        return _compiled(k) and compile_cache.kernel_ref(k) is not None

    for name, mod in sorted(REGISTRY.items()):
        cls = getattr(importlib.import_module(f"hystmech.components.{mod}"), name)
        k = {n: _kernel_of(cls, n) for n in ("force", "rate", "jac", "pjac", "advance")}
        if cls.kind == "operator":
            if ok(k["force"]) and ok(k["advance"]):
                law_wrappers.wrapper("fr0", (k["force"],))
                law_wrappers.wrapper("adv", (k["advance"],))
            continue
        if not (ok(k["force"]) and ok(k["rate"])):
            continue
        law_wrappers.wrapper("fr", (k["force"], k["rate"]))
        for slot in ("jac", "pjac"):
            if ok(k[slot]):
                law_wrappers.wrapper(slot, (k[slot],))


@contextlib.contextmanager
def _warming(loop: str):
    # what warm and _warm_analysis share: nothing to do (None) when the loop is cached,
    # being warmed in this process or there is no disk cache; else, under the cache
    # directory's lock for the loop (the suite's workers compile it once), the reference
    # assembly the loop is compiled on (one DOF on a spring, a harmonic force), None
    # when another process compiled it meanwhile
    d = None if loop in _WARMING or cached(loop) is not None else compile_cache.cache_dir()
    if d is None:
        yield None
        return
    from ..assembly import Assembly, Harmonic

    _WARMING.add(loop)
    try:
        with compile_cache.file_lock(d / f"engine-{loop}.lock"):
            if cached(loop) is not None:
                yield None
                return
            a = Assembly()
            a.add_dof("m", mass=1.0)
            a.add_spring("m", "ground", k=1e3)
            a.add_force("m", Harmonic(0.0, 1.0, 10.0))
            yield a
    finally:
        _WARMING.discard(loop)


def for_model(m) -> Compiled | None:
    """The engine if model ``m`` is to run on it (its law ids then written into
    ``m.prm.EL``), else None: it runs its generated code (:attr:`Model.code`).

    The choice, as a tiered JIT makes it ($HYSTMECH_ENGINE unset or ``auto``), for a
    model the engine can run (:func:`runnable`) and the method it is built for
    (``m.method``; :data:`LOOPS`, the sample evaluation for a model built without one):

    1. the structure's generated code when its loop is compiled (this process or the
       disk cache): the fastest per step, nothing to compile;
    2. else the engine when its loop is compiled: a new structure runs at once;
    3. else (a fresh install, or the first run of a method) the generated code,
       compiled as before, while a background process compiles the engine's loop
       (:func:`compile_cache.background`; off with $HYSTMECH_PREFETCH=0), so no first
       run is slower than before and the next new structure runs on the engine.

    The analyses' loops (the variational equations, the projection scheme's chained
    Jacobian) are chosen alike by :func:`for_loop`; the identification's sensitivity
    equations run their generated code. Each loop is compiled in the background on its
    first demand (a user of RK45 alone never compiles the stiff loops). ``1`` always
    takes the engine (compiling it, once per cache, where missing); ``0`` never."""
    method = m.method
    return _choose(m, LOOPS.get(method) if method is not None else "eval_samples")


def for_loop(m, loop: str) -> Compiled | None:
    """The engine if model ``m`` is to run the analysis loop ``loop`` (one of
    :data:`ANALYSIS_LOOPS`: "var_solve", the variational equations; "proj_monodromy",
    the projection scheme's chained Jacobian) on it, else None (its generated code,
    ``m.code``): the tiered choice of :func:`for_model` for that loop."""
    if loop not in ANALYSIS_LOOPS:
        raise ValueError(f"loop must be one of {ANALYSIS_LOOPS} (got {loop!r})")
    return _choose(m, loop)


def _choose(m, loop):
    # (the model's tables of C wrappers are built only when it takes the engine: a law's
    # first wrappers compile, which a run on the generated code does not need)
    md = mode()
    if md == "generated" or not runnable(m, loop, bind=False):
        return None
    if md == "engine":
        if loop in ("projection", "rk45", "core", *_JAC_LOOPS):
            warm(loop, type(m))     # (once per cache directory: processes sharing it wait)
        eng = engine()
        if eng is not None:
            runnable(m, loop)
        return eng
    if loop is None:
        return None
    if m.generated_ready(_GENERATED_PROBE.get(loop, loop)):
        return None
    eng = cached(loop)
    if eng is not None:
        runnable(m, loop)
        return eng
    if loop != "eval_samples":
        # (the child's entry is the model layer's: warm needs the Model class)
        compile_cache.background(f"engine-{loop}", "hystmech.systems.model:warm_engine",
                                 (loop,))
    return None
