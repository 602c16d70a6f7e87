"""method="projection": the first-order implicit scheme of Bastien et al. (2007),
eqs. (A.7)-(A.9), compiled.

With the state U = (positions, velocities, element states) and A = ∂ψ_Q the
sub-differential of the indicator of the box Q of the inclusion states (Masing,
Maxwell-slip: kind "inclusion", box [box_lo, box_hi]),

    U^{p+1} = (I + hA)^{-1}(U^p + h·f(t_p, U^p)),

where f is the smooth part and the resolvent (I + hA)^{-1} is the projection onto Q, a
clip of each inclusion component to its box (any number of inclusion elements,
§4.2.2). Operators (relay, Preisach) are advanced by their own memory update over each
step's input segment. First order (eq. (A.10)); explicit in the linear part, so h must
resolve the fastest mode (checked: see :func:`~hystmech.systems.model.Model.stability_limit`).

Options: h [s] (default 1e-5, eq. (57)); rtol of the operators' advance (1e-8);
max_points (thin the default every-step output to at most this many points), stride
and record_from (keep every stride-th step from record_from [s] on); max_steps (1e9:
a step h that needs more over t_span is refused before the run, as is an h below the
time resolution).
"""
from __future__ import annotations

import math

import numpy as np
from ...interrupt import raise_if_stopped, watching
from ...limits import check_memory
from . import MethodResult, check_options
from .rk45 import energy_flag

NAME = "projection"
OPTIONS = ("h", "rtol", "max_points", "stride", "record_from", "max_steps")
DEFAULT_MAX_STEPS = 1e9   # refused up front above this (the CLI's default step limit)
SMOOTH_ONLY = False
COMPILED = True


def projection(t0, h, nsteps, h_last, y0, prm, TF, TU, TV, lo, hi, rec, energy, nquad, nw,
               nin, rtol, obs, k_obs, has_ops, irq):
    """TEMPLATE compiled into each structure's generated module (systems/codegen.py),
    where core, scratch, inputs_rot, step, ops, powers, signal and stop are that
    structure's straight-line functions (globals, so numba can cache the loop; the
    calls marked ``# INLINE`` are replaced by the functions' statements, see
    codegen._inline_calls); nw: size of the work vector, nin: its inputs part.

    Steps p = 0..nsteps-1 of eq. (A.9); records the state after step rec[k] (0: the
    initial state), feeds the observed signal to ``obs`` from step k_obs on and calls
    the user's stop(t, y) at every recorded sample. Returns (status, steps done, Y, Q,
    state reached): status 0 done, 2 non-finite state, 4 stopped by the observer, 5 by
    the callback, 6 by a signal (``irq[0] != 0``, polled every 1024 steps; see
    hystmech.interrupt)."""
    N = y0.size
    y = y0.copy()
    yn = np.empty(N)
    dy = np.empty(N)
    w = np.zeros(nw)
    w1 = np.zeros(nw)
    V = scratch(prm)
    bind_locals(prm, V)  # INLINE
    pw = np.zeros(nquad)
    Q = np.zeros(nquad)
    nrec = rec.size
    Yout = np.empty((nrec, N))
    Qout = np.empty((nrec, nquad))
    # cos(Ωt + φ) of every harmonic input row by a rotation recurrence, re-anchored every
    # 1024 steps (saves a cos per input and step; drift stays at round-off level)
    nf = prm.HF.shape[0]
    nb = prm.HU.shape[0]
    nr = nf + 2 * nb
    om = np.empty(nr)
    ph = np.empty(nr)
    for j in range(nf):
        om[j] = prm.HF[j, 2]
        ph[j] = prm.HF[j, 3]
    for j in range(nb):
        om[nf + j] = prm.HU[j, 2]
        ph[nf + j] = prm.HU[j, 3]
        om[nf + nb + j] = prm.HV[j, 2]
        ph[nf + nb + j] = prm.HV[j, 3]
    cs = np.empty(nr)
    sn = np.empty(nr)
    cr = np.empty(nr)
    sr = np.empty(nr)
    for r in range(nr):
        cs[r] = math.cos(om[r] * t0 + ph[r])
        sn[r] = math.sin(om[r] * t0 + ph[r])
        cr[r] = math.cos(om[r] * h)
        sr[r] = math.sin(om[r] * h)
    inputs_rot(t0, 0, cs, prm, TF, TU, TV, w)
    k = 0
    pn = 0
    status = 0
    p_done = 0
    for p in range(nsteps + 1):
        t = t0 + p * h
        core(t, y, prm, dy, w, V)  # INLINE
        while k < nrec and rec[k] == p:
            for i in range(N):
                Yout[k, i] = y[i]
            for i in range(nquad):
                Qout[k, i] = Q[i]
            k += 1
            if stop(t, y):
                status = 5
        if p >= k_obs:
            sg = signal(y, w, prm)  # INLINE
            if observe(obs, t, sg):
                status = 4
        if status != 0 or p == nsteps or (p & 1023) == 1023:
            # one test per step for the rare events: the end, a stop, or time to read the
            # signal flag (hystmech.interrupt)
            if status == 0 and p < nsteps and irq[0] != 0:
                status = 6
            if status != 0 or p == nsteps:
                break
        hp = h if p < nsteps - 1 else h_last
        if energy is not None and energy:
            # left-point quadrature, consistent with the explicit f(t_p, U^p) of (A.9);
            # (energy None: a branch numba drops before typing, see rk45.energy_flag;
            # the offset an int64 as in fun_full: one compile of powers)
            powers(y, w, prm, pw, np.int64(0))
            for i in range(nquad):
                Q[i] += hp * pw[i]
        # without operators the step is taken in place (the state then stays in the
        # loop's registers and cache lines: ~8 ns a step of the belt rig less than
        # copying a new state back); yn keeps the old one for a non-finite outcome
        if has_ops:
            s = step(y, dy, hp, lo, hi, yn)  # INLINE
        else:
            for i in range(N):
                yn[i] = y[i]
            s = step(y, dy, hp, lo, hi, y)  # INLINE
        if ((p + 1) & 1023) == 0:
            tn = t0 + (p + 1) * h
            for r in range(nr):
                cs[r] = math.cos(om[r] * tn + ph[r])
                sn[r] = math.sin(om[r] * tn + ph[r])
        else:
            for r in range(nr):
                c_new = cs[r] * cr[r] - sn[r] * sr[r]
                sn[r] = sn[r] * cr[r] + cs[r] * sr[r]
                cs[r] = c_new
        t_in = t + hp
        pn = p + 1
        if has_ops:
            inputs_rot(t_in, pn, cs, prm, TF, TU, TV, w1)  # INLINE
            ops(y, yn, w, w1, hp, prm, rtol)
            s = 0.0
            for i in range(N):
                s += yn[i]
            if math.isfinite(s):
                # copies, not swaps: a swapped array variable costs reference counting
                for i in range(N):
                    y[i] = yn[i]
                for i in range(nin):
                    w[i] = w1[i]
        else:
            inputs_rot(t_in, pn, cs, prm, TF, TU, TV, w)  # INLINE
        if not math.isfinite(s):
            if not has_ops:
                for i in range(N):
                    y[i] = yn[i]
            status = 2
            break
        p_done = p + 1
    return status, p_done, Yout[:k], Qout[:k], y


def step_grid(t0: float, t1: float, h: float):
    """(nsteps, h_last): steps of size h from t0, the last one shortened to end at t1."""
    n = int(math.ceil((t1 - t0) / h - 1e-9))
    n = max(n, 1)
    h_last = (t1 - t0) - (n - 1) * h
    return n, h_last


def _first_step_at(t, t0, h, nsteps):
    # first step index whose time t0 + k·h is at or after t (nsteps + 1: never)
    if not t <= t0 + nsteps * h:
        return nsteps + 1
    return max(0, int(math.ceil((t - t0) / h - 1e-9)))


def run(model, t0, t1, y0, t_eval, energy, obs, options, method=NAME) -> MethodResult:
    """Run the projection scheme (see the module docstring)."""
    opts = check_options(NAME, options, OPTIONS)
    h = opts.get("h", 1e-5)
    try:
        h = float(h)
    except (TypeError, ValueError):
        raise ValueError(f"h must be a step in s, > 0 (got {h!r})") from None
    if not (math.isfinite(h) and h > 0):
        raise ValueError(f"h must be in (0, inf) s (got {h!r})")
    if h > (t1 - t0):
        raise ValueError(f"h must be <= t_end - t_start = {t1 - t0!r} s (got {h!r})")
    res = 4.0 * np.finfo(float).eps * max(abs(t0), abs(t1))
    if not h > res:
        raise ValueError(f"h = {h!r} s is below the time resolution {res:.3g} s at "
                         f"t = {max(abs(t0), abs(t1))!r} s: the steps would not advance t")
    max_steps = opts.get("max_steps", DEFAULT_MAX_STEPS)
    if isinstance(max_steps, bool) or not isinstance(max_steps, (int, float, np.integer)) \
            or not max_steps >= 1:
        raise ValueError(f"max_steps must be a number >= 1 (got {max_steps!r})")
    n_ask = (t1 - t0) / h
    if n_ask > max_steps:
        raise ValueError(f"h = {h:g} s over {t1 - t0:g} s is {n_ask:.3g} steps, above "
                         f"max_steps = {float(max_steps):.3g} (pass max_steps=N to allow more)")
    model.check_step(h, NAME)
    rtol = float(opts.get("rtol", 1e-8))
    max_points = int(opts.get("max_points", 200_001))
    nsteps, h_last = step_grid(t0, t1, h)
    if model.has_tables:
        check_memory(8.0 * (nsteps + 1) * 4, f"the input tables of {nsteps + 1} steps")
    if t_eval is not None:
        rec = np.clip(np.rint((t_eval - t0) / h).astype(np.int64), 0, nsteps)
    else:
        rfrom = opts.get("record_from")
        k0 = 0 if rfrom is None else _first_step_at(float(rfrom), t0, h, nsteps)
        if "stride" in opts:
            stride = int(opts["stride"])
            if stride < 1:
                raise ValueError(f"stride must be an integer >= 1 (got {opts['stride']!r})")
        else:
            stride = max(1, int(math.ceil((nsteps + 1 - min(k0, nsteps)) / max_points)))
        rec = np.arange(k0, nsteps + 1, stride, dtype=np.int64)
    k_obs = nsteps + 1 if obs is None else _first_step_at(model.observer_start(obs), t0, h,
                                                          nsteps)
    # the generic engine when the model's laws and inputs allow (no compile for a new
    # structure), else the structure's generated code: the same loop either way
    eng = model.engine()
    code = eng or model.code
    if model.has_tables:
        grid = t0 + h * np.arange(nsteps + 1)
        grid[-1] = t1
        TF, TU, TV = model.tables_on(grid)
    else:
        TF = TU = TV = np.zeros((1, 1))
    L = model.layout
    with watching() as irq:
        status, p_done, Y, Q, y_last = code.projection(
            float(t0), h, nsteps, float(h_last), y0, model.prm, TF, TU, TV, model.box_lo,
            model.box_hi, rec, energy_flag(energy, eng), L.nquad, L.n_work, L.nf + 2 * L.nb, rtol,
            model.obs_or_dummy(obs), k_obs, model.ops_present(), irq)
        if status == 6:
            raise_if_stopped(irq)
    def time_of(k):
        return np.where(k == nsteps, t1, t0 + h * k)
    T = time_of(rec[:Y.shape[0]])
    msg = {0: "the end of the time span was reached", 2: "non-finite state",
           4: "steady state reached", 5: "stopped by the callback"}[status]
    return MethodResult(T, Y, Q if energy else None, {"nsteps": int(p_done), "h": h},
                        status != 2, msg, float(time_of(p_done)), status in (4, 5), y_last)
