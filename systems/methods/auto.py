"""Compiled automatic stiffness switching: Dormand–Prince 5(4) ⇄ Radau IIA 5.

Like LSODA (Petzold (1983), *SIAM J. Sci. Stat. Comput.* 4:136), the integration
starts with the explicit method and moves to the implicit one only while the
problem is stiff, so a non-stiff system with many reversals pays explicit prices and
a stiff one (LuGre with σ0 = 1e5 in stick) does not crawl at the explicit
stability limit.

- Explicit → implicit: the stiffness test of DOPRI5 (Hairer & Wanner (1996), §IV.2,
  and the code ``dopri5.f``): after each accepted step, h·|λ| is estimated from the
  last two stages, which both sit at t + h, h·λ ≈ h·‖K7 − K6‖ / ‖y₁ − y₆‖; when it
  exceeds 2 on 15 accepted steps without 6 consecutive steps below it, the step size
  is stability-limited (the boundary of the DP stability region is at −3.3 on the
  real axis). dopri5.f uses 3.25, but under its PI step control the steps settle just
  inside the boundary (on Robertson's problem h·|λ| stays in 2.1–3.2 for thousands
  of steps), so 3.25 is rarely crossed; accuracy-limited steps of non-stiff systems
  have h·|λ| well below 1 (the Bouc-Wen benchmark never switches, rtol 1e-6 … 1e-9).
- Implicit → explicit: every 5 accepted Radau steps a fresh Jacobian at the current
  point gives the spectral radius ρ (power iteration); when the step size Radau
  chooses satisfies h·ρ < 2 (well inside the explicit stability region) on 3
  consecutive checks, accuracy limits the step and the explicit method is cheaper.

The explicit half is the one Dormand–Prince stepper of ``components/_ode.py``
(``dp45_step``, its maximum error norm and free 4th-order dense output) with the PI
step-size control of ``dopri5.f``; the implicit half is ``radau.radau_step`` (scipy's
RMS norm and Gustafsson controller). Both halves are the generic compiled cores
(callables ``fun(t, y, args, out)`` and ``jac(t, y, args, J)``, trailing quadrature
components, see ``radau.py``); output at t_eval comes from the dense output of
whichever method took the step.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit
from numba.extending import register_jitable

from . import radau5, scipy_ivp
from .radau import (C_NFEV, C_NJEV, C_NLU, C_NREJ, C_NSTEP, EPS, R_H, all_finite,
                    initial_step, out_start, out_step, radau_reset, radau_step,
                    radau_workspace)
from ...components._ode import DP_A, dp45_step

STIFF_HLAMBDA = 2.0    # h·|λ| beyond this: near the stability boundary (−3.3)
STIFF_STEPS = 15       # dopri5.f: that many times (without 6 non-stiff steps in a row)
NONSTIFF_RESET = 6
PI_BETA = 0.04         # dopri5.f step-size control
PI_EXPO1 = 0.2 - 0.75 * PI_BETA
BACK_HRHO = 2.0        # Radau's h·ρ below this: the explicit method is stable
BACK_CHECKS = 3        # consecutive checks, one every BACK_EVERY Radau steps
BACK_EVERY = 5


# -- stiffness measures ---------------------------------------------------------------------

@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def dp_hlambda(K, y, y_new, h, nd, work):
    """h·|λ| seen by the last accepted DP step (dopri5.f): stages 6 and 7 are both
    evaluated at t + h, at y₆ and y₁."""
    for i in range(nd):
        acc = 0.0
        for j in range(5):
            acc += DP_A[5, j] * K[j, i]
        work[i] = y[i] + h * acc
    num = 0.0
    den = 0.0
    for i in range(nd):
        num += (K[6, i] - K[5, i]) ** 2
        den += (y_new[i] - work[i]) ** 2
    if den > 0.0:
        return h * math.sqrt(num / den)
    return 0.0


@njit(cache=True)
def spectral_radius(J, v, w, iters):
    """Estimate of max |eigenvalue| of J by power iteration: the geometric mean of the
    growth factors of the second half of the iterations (also right for a dominant
    complex pair, where single growth factors oscillate)."""
    n = J.shape[0]
    s = 0.0
    for i in range(n):
        v[i] = 1.0 + 0.37 * i
        s += v[i] * v[i]
    s = math.sqrt(s)
    for i in range(n):
        v[i] /= s
    acc = 0.0
    cnt = 0
    for k in range(iters):
        nw = 0.0
        for i in range(n):
            a = 0.0
            for j in range(n):
                a += J[i, j] * v[j]
            w[i] = a
            nw += a * a
        nw = math.sqrt(nw)
        if not nw > 0.0 or not math.isfinite(nw):
            return 0.0 if nw == 0.0 else math.inf
        if k >= iters // 2:
            acc += math.log(nw)
            cnt += 1
        for i in range(n):
            v[i] = w[i] / nw
    return math.exp(acc / cnt)


# -- the driver -------------------------------------------------------------------------------
# The run is split into phases, each a function that returns when the method changes
# (status SWITCH), so that a caller can compile the implicit phase only once a system
# turns out stiff: the generated module of a structure holds both, and run_stiff in
# radau5.py calls them in turn from Python; a non-stiff system never compiles the Radau
# code (about two thirds of the stiff cores' compilation).
# Counters c: [nfev, njev, nlu, nsteps, nrejected, steps_explicit, steps_implicit,
# switches].

SWITCH = 4


@register_jitable
def auto_start(fun, t0, t1, y0, nd, args, rtol, atol, first_step, max_step, t_eval):
    """Start of a run: f = fun(t0, y0), the first step size and the output buffers.
    Returns (status (0, or 2 for a non-finite f), f, h, T, Y, nout, ie, c)."""
    n = y0.size
    c = np.zeros(8, np.int64)
    f = np.empty(n)
    fun(t0, y0, args, f)
    c[0] = 1
    Tout, Yout, nout, ie = out_start(t0, y0, t_eval)
    if not all_finite(f):
        return 2, f, 0.0, Tout, Yout, nout, ie, c
    if first_step > 0.0:
        h = min(first_step, max_step)
    else:
        ynew = np.empty(n)
        ytmp = np.empty(n)
        h = initial_step(fun, t0, y0, f, args, t1, max_step, 5, rtol, atol, nd, ynew, ytmp)
        c[0] += 1
    return 0, f, h, Tout, Yout, nout, ie, c


@register_jitable
def auto_explicit(fun, t, t1, y, f, h, nd, args, rtol, atol, max_step, t_eval, max_steps,
                  Tout, Yout, nout, ie, c, irq):
    """Dormand–Prince steps from (t, y), f = fun(t, y), step h, until t1 or until the
    stiffness test fires (status SWITCH; y, f and the returned h then start the
    implicit phase). Returns (status, t, h, T, Y, nout, ie)."""
    n = y.size
    K = np.empty((7, n))
    ynew = np.empty(n)
    ytmp = np.empty(n)
    for i in range(n):
        K[0, i] = f[i]
    err_old = 1e-4
    last_rejected = False
    iasti = 0
    nonsti = 0
    status = 0
    while t < t1:
        if c[3] >= max_steps:
            status = 3
            break
        if irq[0] != 0:         # a signal (radau_solve); one load per six evaluations
            status = 6
            break
        if t + h > t1:
            h = t1 - t
        if h < 10.0 * EPS * max(abs(t), 1e-290):
            status = 1
            break
        e = dp45_step(fun, t, y, h, args, K, ynew, atol, rtol, nd)
        c[0] += 6
        if not e <= 1.0:
            c[4] += 1
            last_rejected = True
            h /= min(5.0, e ** PI_EXPO1 / 0.9) if math.isfinite(e) else 5.0
            continue
        t_new = t + h
        hl = dp_hlambda(K, y, ynew, h, nd, ytmp)
        Tout, Yout, nout, ie = out_step(Tout, Yout, nout, ie, t_eval, t, t_new, ynew, True,
                                        K, y, K, y, h)
        t = t_new
        for i in range(n):
            y[i] = ynew[i]
            K[0, i] = K[6, i]
        c[3] += 1
        c[5] += 1
        # PI step-size control of dopri5.f (Hairer, Nørsett & Wanner (1993), §II.4,
        # β = 0.04), no increase right after a rejection: fewer rejections where the
        # right-hand side is only piecewise smooth (|u̇| at reversals)
        fac = max(0.1, min(5.0, e ** PI_EXPO1 / err_old ** PI_BETA / 0.9))
        err_old = max(e, 1e-4)
        h_next = h / fac
        if last_rejected:
            h_next = min(h_next, h)
        last_rejected = False
        h = min(h_next, max_step)
        if not all_finite(y):
            status = 2
            break
        if hl > STIFF_HLAMBDA:
            nonsti = 0
            iasti += 1
            if iasti >= STIFF_STEPS and t < t1:
                c[7] += 1
                status = SWITCH
                break
        else:
            nonsti += 1
            if nonsti >= NONSTIFF_RESET:
                iasti = 0
    for i in range(n):
        f[i] = K[0, i]
    return status, t, h, Tout, Yout, nout, ie


@register_jitable
def auto_implicit(fun, jac, t, t1, y, f, h, nd, args, rtol, atol, max_step, t_eval,
                  max_steps, Tout, Yout, nout, ie, c, irq):
    """Radau IIA steps from (t, y), f = fun(t, y), step h, until t1 or until the
    explicit method is stable again at Radau's step size (status SWITCH; y, f and the
    returned h then start the explicit phase). Returns (status, t, h, T, Y, nout, ie)."""
    n = y.size
    (fw, J, LUr, pr, LUc, pc, Z, F, W, dW, fr, fc, ynew, ytmp, err, Q, yold, rs,
     cnt) = radau_workspace(n, nd)
    Jt = np.zeros((nd, nd))
    v = np.empty(nd)
    w = np.empty(nd)
    for i in range(n):
        fw[i] = f[i]
    jac(t, y, args, J)
    c[1] += 1
    radau_reset(rs, h, rtol)
    back = 0
    since_check = 0
    status = 0
    while t < t1:
        if c[3] + cnt[C_NSTEP] >= max_steps:
            status = 3
            break
        if irq[0] != 0:
            status = 6
            break
        ok, t_new = radau_step(fun, jac, t, y, t1, args, rtol, atol, nd, max_step, fw, J, LUr,
                               pr, LUc, pc, Z, F, W, dW, fr, fc, ynew, ytmp, err, Q, yold,
                               rs, cnt)
        if not ok:
            status = 1
            break
        Tout, Yout, nout, ie = out_step(Tout, Yout, nout, ie, t_eval, t, t_new, y, False, Q,
                                        yold, F, y, 0.0)
        t = t_new
        c[6] += 1
        if not all_finite(y):
            status = 2
            break
        since_check += 1
        if since_check >= BACK_EVERY and t < t1:
            since_check = 0
            jac(t, y, args, Jt)
            c[1] += 1
            rho = spectral_radius(Jt, v, w, 24)
            if rs[R_H] * rho < BACK_HRHO:
                back += 1
            else:
                back = 0
            if back >= BACK_CHECKS:
                c[7] += 1
                status = SWITCH
                break
    for i in range(n):
        f[i] = fw[i]
    c[0] += cnt[C_NFEV]
    c[1] += cnt[C_NJEV]
    c[2] += cnt[C_NLU]
    c[3] += cnt[C_NSTEP]
    c[4] += cnt[C_NREJ]
    return status, t, min(rs[R_H], max_step), Tout, Yout, nout, ie


@njit(cache=False)  # takes the right-hand side as an argument: compiled per system
def auto_solve(fun, jac, t0, t1, y0, nd, args, rtol, atol, first_step, max_step, t_eval,
               max_steps, irq):
    """Integrate y' = fun(t, y, args, out) over [t0, t1], switching between
    Dormand–Prince 5(4) and Radau IIA 5 on detected stiffness (module docstring):
    :func:`auto_start`, then :func:`auto_explicit` and :func:`auto_implicit` in turn.

    Arguments as :func:`radau.radau_solve`. Returns (status, t_reached, T, Y,
    counters [nfev, njev, nlu, nsteps, nrejected, steps_explicit, steps_implicit,
    switches])."""
    y = y0.copy()
    status, f, h, Tout, Yout, nout, ie, c = auto_start(fun, t0, t1, y, nd, args, rtol, atol,
                                                       first_step, max_step, t_eval)
    t = t0
    stiff = False
    while status == 0 and t < t1 or status == SWITCH:
        if stiff:
            status, t, h, Tout, Yout, nout, ie = auto_implicit(
                fun, jac, t, t1, y, f, h, nd, args, rtol, atol, max_step, t_eval, max_steps,
                Tout, Yout, nout, ie, c, irq)
        else:
            status, t, h, Tout, Yout, nout, ie = auto_explicit(
                fun, t, t1, y, f, h, nd, args, rtol, atol, max_step, t_eval, max_steps,
                Tout, Yout, nout, ie, c, irq)
        if status == SWITCH:
            stiff = not stiff
    return status, t, Tout[:nout], Yout[:nout], c


# -- the templates compiled into each structure's module (systems/templates.py) ---------------

def auto_stiff(t0, t1, z0, nd, prm, energy, nw, ysc, rtol, atol, first_step, max_step,
               t_eval):
    """TEMPLATE: the start of method "auto" (methods/auto.py, auto_start) on the globals."""
    a = (prm, np.zeros(nw), scratch(prm), energy, ysc)  # noqa: F821
    return auto_start(t0, t1, z0, nd, a, rtol, atol,  # noqa: F821
                      first_step, max_step, t_eval)


def auto_stiff_explicit(t, t1, y, f, h, nd, prm, energy, nw, ysc, rtol, atol, max_step,
                        t_eval, max_steps, T, Y, nout, ie, c, irq):
    """TEMPLATE: the explicit phase of method "auto" (auto_explicit) on the globals."""
    a = (prm, np.zeros(nw), scratch(prm), energy, ysc)  # noqa: F821
    return auto_explicit(t, t1, y, f, h, nd, a, rtol, atol, max_step,  # noqa: F821
                         t_eval, max_steps, T, Y, nout, ie, c, irq)


def auto_stiff_implicit(t, t1, y, f, h, nd, prm, energy, nw, ysc, rtol, atol, max_step,
                        t_eval, max_steps, T, Y, nout, ie, c, irq):
    """TEMPLATE: the implicit phase of method "auto" (auto_implicit) on the globals;
    compiled only when a run first turns stiff."""
    a = (prm, np.zeros(nw), scratch(prm), energy, ysc)  # noqa: F821
    return auto_implicit(t, t1, y, f, h, nd, a, rtol, atol, max_step,  # noqa: F821
                         t_eval, max_steps, T, Y, nout, ie, c, irq)


TEMPLATES = (auto_stiff, auto_stiff_explicit, auto_stiff_implicit)
# the cores rewritten by radau5.core_source to call the structure's right-hand side
CORES = (auto_start, auto_explicit, auto_implicit)


def run_phases(model, t0, t1, z0, N, energy, ysc, rtol, atol, first_step, max_step, te,
               max_steps, irq):
    """Method "auto" as its phases (auto_solve's loop, run from Python so that the
    implicit phase is compiled only when a system first turns stiff)."""
    # the generic engine when the model runs there (methods/engine.py), else the
    # structure's generated module
    code, prm, nw = model.engine() or model.code, model.prm, model.layout.n_work
    status, f, h, T, Z, nout, ie, c = code.auto_stiff(t0, t1, z0, N, prm, energy, nw, ysc,
                                                      rtol, atol, first_step, max_step, te)
    y = z0.copy()
    t = t0
    stiff = False
    while status == 0 and t < t1 or status == SWITCH:
        phase = code.auto_stiff_implicit if stiff else code.auto_stiff_explicit
        status, t, h, T, Z, nout, ie = phase(t, t1, y, f, h, N, prm, energy, nw, ysc, rtol,
                                             atol, max_step, te, max_steps, T, Z, nout, ie, c,
                                             irq)
        if status == SWITCH:
            stiff = not stiff
    return status, t, T[:nout], Z[:nout], c


# -- the method module (registry name "auto") -----------------------------------------------

NAME = "auto"
OPTIONS = ("rtol", "atol", "max_step", "first_step", "max_steps")
SMOOTH_ONLY = True      # simulate() sends inclusions and operators to "projection"
COMPILED = False        # observers and callback on the output samples


def run(model, t0, t1, y0, t_eval, energy, obs, options, method=NAME):
    """method="auto" on a smooth assembly: :func:`auto_solve` compiled into the
    structure's module (the ``auto_stiff`` template of methods/radau5.py); scipy BDF
    (methods/scipy_ivp.py) when an input or kernel cannot be compiled."""
    if not radau5.compilable(model):
        return scipy_ivp.run(model, t0, t1, y0, t_eval, energy, obs, options, method="BDF")
    return radau5.run_stiff(model, t0, t1, y0, t_eval, energy, obs, options, "auto",
                            run_phases)
