"""method="event": event-driven reference solver for assemblies with box inclusions.

Each inclusion component is either free or held on a face of its box; switches are
located by root finding and the smooth pieces integrated by scipy (DOP853 at rtol
1e-10 by default), so the solution is accurate to the integrator's tolerance, not O(h)
like the projection scheme. Python-driven: for short reference runs and tests; the
observers run on the output samples afterwards.

Options: integrator, rtol, atol, max_events, max_step.
"""
from __future__ import annotations

import numpy as np

from . import MethodResult
from .rk45 import default_atol
from .scipy_ivp import rhs_python

NAME = "event"
OPTIONS = ("integrator", "rtol", "atol", "max_events", "max_step")
SMOOTH_ONLY = False
COMPILED = False


def run(model, t0, t1, y0, t_eval, energy, obs, options, method="event") -> MethodResult:
    """Event-driven integration of an assembly with box inclusions (reference solver).

    Between events each inclusion component is either free (it follows its smooth
    rate) or held on a face of its box (rate set to 0); a free component that reaches
    a face is held there, a held one is released when its smooth rate points back into
    the box. The smooth pieces are integrated by scipy (``integrator``, default
    DOP853) to ``rtol`` (default 1e-10) with events located by root finding, so the
    solution is accurate to the integrator's tolerance, not O(h) like the projection
    scheme. Python-driven: for short reference runs and tests.
    """
    from scipy.integrate import solve_ivp

    opts = dict(options)
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
        atol = default_atol(model, rtol)
    atol = np.broadcast_to(np.asarray(atol, float), (N,)).copy()
    if energy:
        atol = np.concatenate([atol, np.full(nquad, 1e30)])
    fun, _ = rhs_python(model, energy)
    cache = {"t": None, "z": None, "out": None}

    def raw(t, z):
        if cache["t"] == t and np.array_equal(cache["z"], z):
            return cache["out"]
        out = fun(t, z)
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
            return MethodResult(np.concatenate(Ts), np.concatenate(Zs)[:, :N],
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
            return MethodResult(np.concatenate(Ts), np.concatenate(Zs)[:, :N],
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
    Y, Q = Z[:, :N], (Z[:, N:] if energy else None)
    stopped = False
    if obs is not None and T.size:
        k = model.observe_samples(obs, T, Y)
        if k < T.size:
            T, Y, Q, stopped = T[:k], Y[:k], None if Q is None else Q[:k], True
    return MethodResult(T, Y, Q, {"nfev": nfev, "nevents": nevents}, True,
                        "the end of the time span was reached", t1 if not stopped else
                        float(T[-1]), stopped)
