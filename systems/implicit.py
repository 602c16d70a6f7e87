"""The first-order implicit (projection) scheme for assemblies with inclusions.

Bastien et al. (2007), eqs. (A.7)-(A.9): with the state U = (positions, velocities,
element states) and A = ∂ψ_Q the sub-differential of the indicator of the box Q of the
inclusion states (Masing, Maxwell-slip: kind "inclusion", box [box_lo, box_hi]),

    U^{p+1} = (I + hA)^{-1}(U^p + h·f(t_p, U^p)),

where f is the smooth part (equations of motion, element rates) and the resolvent
(I + hA)^{-1} is the projection onto Q, i.e. a clip of each inclusion component to its
box. Any number of inclusion elements is handled by the same step (§4.2.2).
Operators (relay, Preisach) are advanced with their own memory update over each step's
input segment. The scheme is of first order (eq. (A.10)).

The loop is compiled: it calls the assembly's generated right-hand side, itself made of
the elements' numba kernels.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .solvers import _powers


@njit
def _projection_loop(core, ops, t0, h, nsteps, h_last, y0, args, FE, UB, VB, lo, hi, rec,
                     energy, nquad, ne, rtol):
    mass, sa, sb, sk, su0, spre, da, db, dc, fdof, grav, ea, eb, eo, po, P = args
    N = y0.size
    nq = mass.size
    nb = UB.shape[1]
    y = y0.copy()
    yn = np.empty(N)
    dy = np.empty(N)
    Fel = np.empty(ne)
    Uel = np.empty(ne)
    Vel = np.empty(ne)
    fnode = np.empty(nq + nb)
    pw = np.empty(nquad)
    Q = np.zeros(nquad)
    Yout = np.empty((rec.size, N))
    Qout = np.empty((rec.size, nquad))
    k = 0
    while k < rec.size and rec[k] == 0:
        Yout[k] = y
        Qout[k] = Q
        k += 1
    status = 0
    p_done = 0
    for p in range(nsteps):
        t = t0 + p * h
        hp = h if p < nsteps - 1 else h_last
        core(t, y, UB[p], VB[p], FE[p], mass, sa, sb, sk, su0, spre, da, db, dc, fdof, grav,
             ea, eb, eo, po, P, dy, Fel, Uel, Vel, fnode)
        if energy:
            # left-point quadrature, consistent with the explicit f(t_p, U^p) of (A.9)
            _powers(y, VB[p], FE[p], mass, da, db, dc, fdof, Fel, Vel, fnode, pw)
            for i in range(nquad):
                Q[i] += hp * pw[i]
        s = 0.0
        for i in range(N):
            v = y[i] + hp * dy[i]
            # resolvent of the box indicator = projection (eq. (A.9))
            if v < lo[i]:
                v = lo[i]
            elif v > hi[i]:
                v = hi[i]
            yn[i] = v
            s += v
        ops(y, yn, UB[p], UB[p + 1], hp, nq, ea, eb, eo, po, P, rtol)
        if not math.isfinite(s):
            status = 2
            break
        tmp = y
        y = yn
        yn = tmp
        p_done = p + 1
        while k < rec.size and rec[k] == p + 1:
            Yout[k] = y
            Qout[k] = Q
            k += 1
    return status, p_done, Yout[:k], Qout[:k]


def step_grid(t0: float, t1: float, h: float):
    """(nsteps, h_last): steps of size h from t0, the last one shortened to end at t1."""
    n = int(math.ceil((t1 - t0) / h - 1e-9))
    n = max(n, 1)
    h_last = (t1 - t0) - (n - 1) * h
    return n, h_last


def run_projection(model, t0, t1, y0, t_eval, energy, opts):
    """Run the projection scheme; returns (T, Y, Q, stats, ok, message, t_reached)."""
    opts = dict(opts)
    h = opts.pop("h", 1e-5)
    try:
        h = float(h)
    except (TypeError, ValueError):
        raise ValueError(f"h must be a step in s, > 0 (got {h!r})") from None
    if not (math.isfinite(h) and h > 0):
        raise ValueError(f"h must be in (0, inf) s (got {h!r})")
    rtol = float(opts.pop("rtol", 1e-8))
    max_points = int(opts.pop("max_points", 200_001))
    if opts:
        raise ValueError(f"unknown option {next(iter(opts))!r} for method 'projection'; "
                         "allowed: h, rtol, max_points")
    if h > (t1 - t0):
        raise ValueError(f"h must be <= t_end - t_start = {t1 - t0!r} s (got {h!r})")
    nsteps, h_last = step_grid(t0, t1, h)
    grid = t0 + h * np.arange(nsteps + 1)
    grid[-1] = t1
    FE, UB, VB = model.forcing_on(grid)
    if t_eval is None:
        stride = max(1, int(math.ceil((nsteps + 1) / max_points)))
        rec = np.arange(0, nsteps + 1, stride, dtype=np.int64)
        if rec[-1] != nsteps:
            rec = np.append(rec, nsteps)
    else:
        rec = np.clip(np.rint((t_eval - t0) / h).astype(np.int64), 0, nsteps)
    nquad = model.nquad
    status, p_done, Y, Q = _projection_loop(
        model.core, model.ops_compiled(), float(t0), h, nsteps, float(h_last), y0,
        model.args(), FE, UB, VB, model.box_lo, model.box_hi, rec, bool(energy), nquad,
        model.ne, rtol)
    T = grid[rec[:Y.shape[0]]]
    t_r = float(grid[p_done])
    stats = {"nsteps": int(p_done), "h": h}
    ok = status == 0
    msg = "the end of the time span was reached" if ok else "non-finite state"
    return T, Y, (Q if energy else None), stats, ok, msg, t_r
