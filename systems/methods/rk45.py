"""method="RK45": compiled adaptive Dormand–Prince 5(4) with dense output.

For smooth assemblies where scipy's per-step Python overhead dominates. The tableau,
the error norm (max over the dynamic state of |e_i| / max(atol_i, rtol·max(|y_i|,
|ŷ_i|))), the dense output and the step-size factor are those of the one
Dormand–Prince stepper, components/_ode.py (Hairer, Nørsett & Wanner (1993),
§II.4-II.5); the energy quadratures ride along without error control. Outputs at
t_eval by the free 4th-order continuous extension, else at every accepted step.

Options: rtol (1e-6), atol (default: 1e-12 m, 1e-10 m/s, rtol·x_scale for element
states), max_step, first_step, max_steps, record_from [s] (keep outputs from there on;
earlier ones are still observed). No step-size check against the stability limit:
the error control keeps the adaptive step inside DP5's stability region by itself
(a large max_step only caps it).
"""
from __future__ import annotations

import math

import numpy as np
from ...components._ode import DP_A, DP_C, dp45_dense, dp45_factor, dp45_norm  # noqa: F401
from ...interrupt import raise_if_stopped, watching
from . import MethodResult, check_options

NAME = "RK45"
OPTIONS = ("rtol", "atol", "max_step", "first_step", "max_steps", "record_from")
SMOOTH_ONLY = True
COMPILED = True

def dopri_step(t, z, h, K, zs, zn, kout, prm, w, V, energy, N, rtol, atol):
    """TEMPLATE (see :func:`rk45`): one Dormand–Prince 5(4) trial step from (t, z) with
    K[0] = f(t, z): stages into K[1..6] (K[6] = f(t + h, zn), FSAL), the 5th-order
    solution into zn. The tableau (DP_A, DP_C), the error norm (``dp45_norm``: max over the first N
    components of |e_i| / max(atol_i, rtol·max(|y_i|, |ŷ_i|)), inf when ŷ is not
    finite) are those of components/_ode.py's ``dp45_step``; only the stage calls are
    written here, because the right-hand side is this structure's compiled global
    (passed to dp45_step as an argument it would make the loop uncacheable)."""
    M = z.size
    bind_locals(prm, V)  # INLINE
    # one call site of the right-hand side, which the code generator replaces by the
    # right-hand side's statements (a call, even one numba inlines, increfs and decrefs
    # every array of prm and V at each stage: ~0.3 µs a step on the belt rig);
    # row 6 of DP_A holds the weights b of the 5th-order solution (DP_C[6] = 1)
    for s in range(1, 7):
        for i in range(M):
            acc = 0.0
            for j in range(s):
                acc += DP_A[s, j] * K[j, i]
            zs[i] = z[i] + h * acc
        ts = t + DP_C[s] * h
        fun_full(ts, zs, prm, kout, w, V, energy)  # INLINE
        for i in range(M):
            K[s, i] = kout[i]
    for i in range(M):
        zn[i] = zs[i]
    return dp45_norm(K, z, zn, h, atol, rtol, N)


def initial_step(t, z, K, zs, kout, prm, w, V, energy, N, rtol, atol, t1):
    """TEMPLATE (see :func:`rk45`). Hairer, Nørsett & Wanner (1993), II.4: starting step from f(t, z) = K[0]."""
    d0 = 0.0
    d1 = 0.0
    for i in range(N):
        sc = atol[i] + rtol * abs(z[i])
        d0 += (z[i] / sc) ** 2
        d1 += (K[0, i] / sc) ** 2
    d0 = math.sqrt(d0 / N)
    d1 = math.sqrt(d1 / N)
    h0 = 1e-6 if (d0 < 1e-5 or d1 < 1e-5) else 0.01 * d0 / d1
    h0 = min(h0, t1 - t)
    for i in range(z.size):
        zs[i] = z[i] + h0 * K[0, i]
    fun_full(t + h0, zs, prm, kout, w, V, energy)
    for i in range(z.size):
        K[1, i] = kout[i]
    d2 = 0.0
    for i in range(N):
        sc = atol[i] + rtol * abs(z[i])
        d2 += ((K[1, i] - K[0, i]) / sc) ** 2
    d2 = math.sqrt(d2 / N) / h0
    if max(d1, d2) <= 1e-15:
        h1 = max(1e-6, h0 * 1e-3)
    else:
        h1 = (0.01 / max(d1, d2)) ** 0.2
    return min(100 * h0, h1)


def emit(te, zi, fresh, prm, kout, w, V, obs, observing, t_out0, Tout, Zout, nout):
    """TEMPLATE (see :func:`rk45`): one output (te, zi) of the loop: feed the observed
    signal to ``obs`` (``fresh``: zi is not the state w was last evaluated at, so the
    inputs and forces are evaluated first when the signal needs them), keep the output
    from t_out0 on (growing the buffers) and call the user's stop(te, zi) on kept ones.
    Returns (status: 0, 4 observer stop or 5 callback stop, nout, Tout, Zout). Inlined
    by the code generator where marked (its locals st, ncap, T2, Z2, sg, ir, jc). Rows
    are copied element by element: an array assigned to a slice makes numba compile its
    shape-mismatch error message (string formatting, ~8 s CPU once per process)."""
    bind_locals(prm, V)  # INLINE
    st = 0
    if observing:
        if SIGNAL_NEEDS_W:
            # (nested: the generator drops the block when the signal reads no w)
            if fresh:
                fun_full(te, zi, prm, kout, w, V, False)  # INLINE
        sg = signal(zi, w, prm)  # INLINE
        if observe(obs, te, sg):
            st = 4
    if te >= t_out0:
        if nout == Tout.size:
            ncap = 2 * nout
            T2 = np.empty(ncap)
            Z2 = np.empty((ncap, zi.size))
            for ir in range(nout):
                T2[ir] = Tout[ir]
                for jc in range(zi.size):
                    Z2[ir, jc] = Zout[ir, jc]
            Tout = T2
            Zout = Z2
        Tout[nout] = te
        for jc in range(zi.size):
            Zout[nout, jc] = zi[jc]
        nout += 1
        if stop(te, zi):
            st = 5
    return st, nout, Tout, Zout


def rk45(t0, t1, z0, prm, rtol, atol, h_init, max_step, t_eval, t_out0, max_steps, energy,
         N, nw, obs, observing, irq):
    """TEMPLATE compiled into each structure's generated module (systems/codegen.py),
    where fun_full (right-hand side plus energy integrands), scratch, signal and stop
    are that structure's functions. Adaptive DP5(4) from t0 to t1. Outputs (see
    :func:`emit`): at t_eval (dense output) or, if empty, at every accepted step; kept
    from t_out0 on; the observed signal is fed to ``obs`` at every output time and the
    user's stop(t, z) called at every kept one.
    One stage loop and two outputs inlined (the start's, and the accepted step's: by the
    dense output or at the step's end), where there were four (each with and without
    t_eval): the routine LLVM optimises is the stepper and two :func:`emit`. The first
    step size is a call (:func:`initial_step`).
    Returns (status, t reached, T, Z, nfev, nsteps, nrejected, z reached): status 0 done, 1 step
    below resolution, 2 non-finite, 3 max_steps, 4 observer stop, 5 callback stop, 6 a
    signal (irq[0] != 0, polled every 1024 trial steps; see hystmech.interrupt)."""
    M = z0.size
    w = np.zeros(nw)
    V = scratch(prm)
    bind_locals(prm, V)  # INLINE
    kout = np.empty(M)
    K = np.empty((7, M))
    z = z0.copy()
    zn = np.empty(M)
    zs = np.empty(M)
    zi = np.empty(M)
    dense = t_eval.size > 0
    cap = 1024
    if dense:
        cap = 0
        for i in range(t_eval.size):
            if t_eval[i] >= t_out0:
                cap += 1
        cap = max(cap, 1)
    Tout = np.empty(cap)
    Zout = np.empty((cap, M))
    nout = 0
    ie = 0
    status = 0
    t = t0
    fun_full(t, z, prm, kout, w, V, energy)
    for i in range(M):
        K[0, i] = kout[i]
    nfev = 1
    h = h_init
    if h <= 0:
        h = initial_step(t, z, K, zs, kout, prm, w, V, energy, N, rtol, atol, t1)
        nfev += 1
    h = min(h, max_step)
    nsteps = 0
    nrej = 0
    # outputs at t0 (w was filled at (t0, z) by the first evaluation, then overwritten by
    # initial_step: fresh)
    while status == 0:
        if dense:
            if ie >= t_eval.size or t_eval[ie] > t0:
                break
            te = t_eval[ie]
            ie += 1
        else:
            te = t
        status, nout, Tout, Zout = emit(te, z, True, prm, kout, w, V, obs, observing, t_out0, Tout, Zout, nout)  # INLINE
        if not dense:
            break
    while t < t1 and status == 0:
        if nsteps >= max_steps:
            status = 3
            break
        if ((nsteps + nrej) & 1023) == 1023 and irq[0] != 0:
            status = 6
            break
        last = False
        if t + h * (1.0 + 1e-9) >= t1:
            # the last step lands on t1 exactly (t + h may round below it, and a step
            # ending a hair before t1 would leave a remainder below resolution)
            h = t1 - t
            last = True
        if h < 10.0 * 2.2e-16 * max(abs(t), 1e-300):
            status = 1
            break
        err = dopri_step(t, z, h, K, zs, zn, kout, prm, w, V, energy, N, rtol, atol)  # INLINE
        nfev += 6
        if not math.isfinite(err):
            if h < 1e-12 * max(1.0, abs(t)):
                status = 2
                break
            h *= 0.1
            nrej += 1
            continue
        if err > 1.0:
            nrej += 1
            h *= dp45_factor(err)
            continue
        tn = t1 if last else t + h
        # the step's outputs: at t_eval by the dense output, else at (tn, zn), where w
        # holds the inputs and forces of the last stage (not fresh)
        while status == 0:
            if dense:
                if ie >= t_eval.size or t_eval[ie] > tn:
                    break
                te = t_eval[ie]
                ie += 1
                dp45_dense(K, z, h, (te - t) / h, zi)
            else:
                te = tn
                for i in range(M):
                    zi[i] = zn[i]
            status, nout, Tout, Zout = emit(te, zi, dense, prm, kout, w, V, obs, observing, t_out0, Tout, Zout, nout)  # INLINE
            if not dense:
                break
        t = tn
        for i in range(M):
            z[i] = zn[i]
            K[0, i] = K[6, i]
        nsteps += 1
        h = min(h * dp45_factor(err), max_step)
    return status, t, Tout[:nout], Zout[:nout], nfev, nsteps, nrej, z


# the templates in the order compiled (systems/templates.py, methods/engine.py) and those
# whose call sites the code generator replaces by their statements
TEMPLATES = (dopri_step, initial_step, emit, rk45)
INLINE = ("dopri_step", "emit")


def energy_flag(energy, engine) -> bool | None:
    """The loops' ``energy`` argument: None for a run without the energy account on a
    structure's generated code (its fun_full tests ``energy is not None and energy``,
    a branch numba drops before typing when the argument's type is None, so the first
    run neither compiles nor links the integrands: ~1 s CPU of an RK45 compile); a
    bool on the generic engine, whose loops are compiled once for a bool."""
    return bool(energy) if energy or engine is not None else None


def default_atol(model, rtol):
    """1e-12 m on DOF positions, 1e-10 m/s on velocities, rtol·x_scale on element states."""
    nq = model.nq
    return np.concatenate([np.full(nq, 1e-12), np.full(nq, 1e-10), rtol * model.x_scale])


def run(model, t0, t1, y0, t_eval, energy, obs, options, method=NAME) -> MethodResult:
    """Run the compiled RK45 (see the module docstring)."""
    opts = check_options(NAME, options, OPTIONS)
    if model.has_tables:
        raise ValueError("method='RK45' needs numba-compilable forces and imposed motions "
                         "(Harmonic inputs or numba-compatible callables); use method='BDF'")
    # element kernels that numba cannot compile (e.g. an FMU's Python kernels) run the
    # same generated loop in the interpreter (model.code.how == "python")
    rtol = float(opts.get("rtol", 1e-6))
    if not (0 < rtol < 1):
        raise ValueError(f"rtol must be in (0, 1) (got {rtol!r})")
    atol = opts.get("atol")
    if atol is None:
        atol = default_atol(model, rtol)
    atol = np.broadcast_to(np.asarray(atol, float), (model.N,)).copy()
    max_step = float(opts.get("max_step", np.inf))
    if not max_step > 0:
        raise ValueError(f"max_step must be > 0 (got {max_step!r})")
    first_step = float(opts.get("first_step", 0.0) or 0.0)
    max_steps = int(opts.get("max_steps", 50_000_000))
    t_out0 = float(opts.get("record_from", -np.inf))
    nquad = model.nquad if energy else 0
    z0 = np.concatenate([y0, np.zeros(nquad)])
    te = np.zeros(0) if t_eval is None else np.ascontiguousarray(t_eval, dtype=float)
    # the generic engine when the model can run there (no compile for a new structure),
    # else the structure's generated code: the same loop either way
    eng = model.engine()
    code = eng or model.code
    with watching() as irq:
        status, t_r, T, Z, nfev, nsteps, nrej, z_last = code.rk45(
            float(t0), float(t1), z0, model.prm, rtol, atol, first_step, max_step, te, t_out0,
            max_steps, energy_flag(energy, eng), model.N, model.layout.n_work, model.obs_or_dummy(obs),
            obs is not None, irq)
        if status == 6:
            raise_if_stopped(irq)
    msgs = {0: "the end of the time span was reached",
            1: "step size fell below machine resolution",
            2: "non-finite state",
            3: "too many steps (max_steps)",
            4: "steady state reached",
            5: "stopped by the callback"}
    stats = {"nfev": int(nfev), "nsteps": int(nsteps), "nrejected": int(nrej)}
    return MethodResult(T, Z[:, :model.N], Z[:, model.N:] if energy else None, stats,
                        status in (0, 4, 5), msgs[status], float(t_r), status in (4, 5),
                        z_last[:model.N])
