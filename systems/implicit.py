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
    # elements with Python kernels (e.g. an imported FMU) run the same loop uncompiled
    if model.gen is not None:             # disk-cached per-structure wrapper
        loop = model.gen.projection
    else:
        kernels = (model.core, model.ops_compiled())
        raw = _projection_loop if model.compiled else _projection_loop.py_func

        def loop(*a):
            return raw(*kernels, *a)
    status, p_done, Y, Q = loop(
        float(t0), h, nsteps, float(h_last), y0,
        model.args(), FE, UB, VB, model.box_lo, model.box_hi, rec, bool(energy), nquad,
        model.ne, rtol)
    T = grid[rec[:Y.shape[0]]]
    t_r = float(grid[p_done])
    stats = {"nsteps": int(p_done), "h": h}
    ok = status == 0
    msg = "the end of the time span was reached" if ok else "non-finite state"
    return T, Y, (Q if energy else None), stats, ok, msg, t_r


# ==========================================================================================
# event-driven reference solver for box inclusions
# ==========================================================================================

def run_event(model, t0, t1, y0, t_eval, energy, opts):
    """Event-driven integration of an assembly with box inclusions (reference solver).

    Between events each inclusion component is either free (it follows its smooth
    rate) or held on a face of its box (rate set to 0); a free component that reaches
    a face is held there, a held one is released when its smooth rate points back into
    the box. The smooth pieces are integrated by scipy (``integrator``, default
    DOP853) to ``rtol`` (default 1e-10) with events located by root finding, so the
    solution is accurate to the integrator's tolerance, not O(h) like the projection
    scheme. Python-driven: for short reference runs and tests.
    Returns (T, Y, Q, stats, ok, message, t_reached).
    """
    from scipy.integrate import solve_ivp

    from .solvers import _default_atol

    opts = dict(opts)
    integrator = opts.pop("integrator", "DOP853")
    rtol = float(opts.pop("rtol", 1e-10))
    atol = opts.pop("atol", None)
    max_events = int(opts.pop("max_events", 100_000))
    max_step = float(opts.pop("max_step", np.inf))
    if opts:
        raise ValueError(f"unknown option {next(iter(opts))!r} for method 'event'; allowed: "
                         "integrator, rtol, atol, max_events, max_step")
    if model.ops_present():
        raise ValueError("method 'event' does not handle operator elements (relay, "
                         "Preisach); use method='projection'")
    N, nq, nquad = model.N, model.nq, model.nquad
    nqd = nquad if energy else 0
    lo, hi = model.box_lo, model.box_hi
    inc = [i for i in range(N) if np.isfinite(lo[i]) or np.isfinite(hi[i])]
    if atol is None:
        atol = _default_atol(model, rtol)
    atol = np.broadcast_to(np.asarray(atol, float), (N,)).copy()
    if energy:
        atol = np.concatenate([atol, np.full(nquad, 1e30)])
    args = model.args()
    dy = np.empty(N)
    Fel = np.empty(model.ne)
    Uel = np.empty(model.ne)
    Vel = np.empty(model.ne)
    fnode = np.empty(nq + model.nb)
    pw = np.empty(nquad)
    cache = {"t": None, "z": None, "out": None}

    def raw(t, z):
        if cache["t"] == t and np.array_equal(cache["z"], z):
            return cache["out"]
        fext, ub, vb = model.forcing_at(t)
        y = np.ascontiguousarray(z[:N])
        model.core(t, y, ub, vb, fext, *args, dy, Fel, Uel, Vel, fnode)
        out = np.empty(N + nqd)
        out[:N] = dy
        if energy:
            _powers(y, vb, fext, model.mass, model.da, model.db, model.dc, model.fdof,
                    Fel, Vel, fnode, pw)
            out[N:] = pw
        cache.update(t=t, z=z.copy(), out=out)
        return out

    held = {}                        # component -> +1 (upper face) / -1 (lower face)

    released = set()                 # released at the last event: not re-held at once

    def hold_check(t, z):
        r = raw(t, z)
        for i in inc:
            if i in held or i in released:
                continue
            if z[i] >= hi[i] and r[i] > 0:
                held[i] = 1
            elif z[i] <= lo[i] and r[i] < 0:
                held[i] = -1

    def settle(t, z):
        # switches that happen together (e.g. several asperities released when the
        # velocity reverses) are located as one event: decide every component's status
        # from the rates a hair after t, by an explicit probe step
        dt = 1e-9 * (t1 - t0)
        for _ in range(len(inc) + 1):
            zp = z + dt * rhs(t, z)
            r = raw(t + dt, zp)
            changed = False
            for i in inc:
                if i in held:
                    if (held[i] > 0 and r[i] < 0) or (held[i] < 0 and r[i] > 0):
                        held.pop(i)
                        released.add(i)
                        changed = True
                else:
                    tol = 1e-12 * (hi[i] - lo[i])
                    if z[i] >= hi[i] - tol and r[i] > 0 and i not in released:
                        held[i] = 1
                        z[i] = hi[i]
                        changed = True
                    elif z[i] <= lo[i] + tol and r[i] < 0 and i not in released:
                        held[i] = -1
                        z[i] = lo[i]
                        changed = True
            if not changed:
                break

    def rhs(t, z):
        out = raw(t, z).copy()
        for i in held:
            out[i] = 0.0
        return out

    def make_events():
        evs = []
        meta = []
        for i in inc:
            if i in held:
                s = held[i]

                def ev(t, z, i=i):
                    return raw(t, z)[i]
                ev.terminal = True
                ev.direction = -1.0 if s > 0 else 1.0     # rate turns back into the box
                evs.append(ev)
                meta.append(("release", i))
            else:
                # a component released at the last event starts on its face: move
                # that face out by a hair so the restart itself is not an event
                eps_h = 1e-12 * (hi[i] - lo[i]) if i in released else 0.0
                eps_l = eps_h
                if np.isfinite(hi[i]):
                    def evh(t, z, i=i, e=eps_h):
                        return z[i] - hi[i] - e
                    evh.terminal = True
                    evh.direction = 1.0
                    evs.append(evh)
                    meta.append(("hold", i, 1))
                if np.isfinite(lo[i]):
                    def evl(t, z, i=i, e=eps_l):
                        return z[i] - lo[i] + e
                    evl.terminal = True
                    evl.direction = -1.0
                    evs.append(evl)
                    meta.append(("hold", i, -1))
        return evs, meta

    z = np.concatenate([y0, np.zeros(nqd)])
    t = t0
    hold_check(t, z)
    Ts, Zs = [np.array([t0])], [z[None, :].copy()]
    nevents = 0
    nfev = 0
    while t < t1:
        evs, meta = make_events()
        te = None
        if t_eval is not None:
            te = t_eval[(t_eval > t) & (t_eval <= t1)]
        sol = solve_ivp(rhs, (t, t1), z, method=integrator, rtol=rtol, atol=atol, events=evs,
                        t_eval=te, max_step=max_step)
        nfev += sol.nfev
        if sol.status == -1:
            return (np.concatenate(Ts), np.concatenate(Zs)[:, :N],
                    np.concatenate(Zs)[:, N:] if energy else None,
                    {"nfev": nfev, "nevents": nevents}, False, sol.message, t)
        st = np.asarray(sol.t, dtype=float)
        if st.size:
            Ts.append(st)
            Zs.append(np.asarray(sol.y).reshape(N + nqd, -1).T)
        if sol.status == 0:
            break
        # the earliest terminal event
        k_best, t_best = None, np.inf
        for k, tev in enumerate(sol.t_events):
            if tev.size and tev[0] < t_best:
                k_best, t_best = k, tev[0]
        z = sol.y_events[k_best][0].copy()
        t = float(t_best)
        kind = meta[k_best]
        released.clear()
        if kind[0] == "hold":
            i = kind[1]
            z[i] = hi[i] if kind[2] > 0 else lo[i]
            held[i] = kind[2]
        else:
            held.pop(kind[1])
            released.add(kind[1])
        for i in inc:                                   # numerical overshoot
            z[i] = min(max(z[i], lo[i]), hi[i])
        settle(t, z)
        nevents += 1
        if nevents > max_events:
            return (np.concatenate(Ts), np.concatenate(Zs)[:, :N],
                    np.concatenate(Zs)[:, N:] if energy else None,
                    {"nfev": nfev, "nevents": nevents}, False,
                    f"more than max_events = {max_events} stick/slip events", t)
        if t_eval is None:
            Ts.append(np.array([t]))
            Zs.append(z[None, :].copy())
    T = np.concatenate(Ts)
    Z = np.concatenate(Zs)
    if t_eval is not None:
        keep = np.isin(T, t_eval)
        # t_eval[0] may equal t0: keep the initial point only then
        T, Z = T[keep], Z[keep]
    else:
        keep = np.concatenate([[True], np.diff(T) > 0])
        T, Z = T[keep], Z[keep]
    return (T, Z[:, :N], Z[:, N:] if energy else None,
            {"nfev": nfev, "nevents": nevents}, True, "the end of the time span was reached", t1)
