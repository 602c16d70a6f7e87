"""Model exchange with events over one input segment: the FMI step discipline of a host.

An FMU imported in model exchange whose modelDescription declares event indicators
(hystmech's inclusions and operators, sums containing one, foreign FMUs with state
events) cannot be integrated as a plain smooth right-hand side: its discrete memory
moves only in event mode, which a host must enter where an indicator changes sign
(FMI 2.0 §3.1, FMI 3.0 §3.1). :func:`advance_segment` is that host for one input
segment u(t) = u0 + v (t − t0) of an assembly step or a ``drive`` sample:

- the continuous states are integrated by the one Dormand-Prince 5(4) stepper
  (:mod:`hystmech.components._ode`, ``dp45_step``) with atol = rtol·x_scale;
- after every step the event indicators are compared with those at its start; a
  sign change (from a non-zero value) is located by bisection on the step's dense
  output (``dp45_dense``) to rounding, and the event is handled just after it
  (enter event mode, new discrete states until none is needed, continuous-time mode,
  the states read back): as fmpy's and the Modelica tools' hosts do;
- ``fmi2CompletedIntegratorStep`` after every accepted step (an event it asks for is
  handled at once);
- time events (``nextEventTime``) end a step exactly there;
- a discontinuity of the inputs at t0 (the velocity of the new segment differs from
  the last one) that changes the sign of an indicator is an event at t0.

The FMU is reached through an ``ops`` object (the importing element): ``put(t, xc, u,
v)``, ``derivatives(out)``, ``indicators(out)``, ``completed() -> bool`` and
``event() -> next event time (inf if none)``; so the same host serves every backend.
"""
from __future__ import annotations

import numpy as np

from ..components._ode import dp45_dense, dp45_factor, dp45_step

MAX_EVENTS_PER_SEGMENT = 10_000   # more is chattering: reported, never looped forever


def _crossed(z0, z1):
    """Indicators whose sign changed from a non-zero value."""
    return [i for i in range(z0.size) if z0[i] != 0.0 and (z1[i] > 0.0) != (z0[i] > 0.0)]


class SegmentError(RuntimeError):
    """The FMU asked to terminate, or events chattered (message says which)."""


def advance_segment(ops, t0, xc, u0, v, dt, rtol, xscale, z_last, t_next, h0):
    """Advance the FMU from t0 over dt [s] with u(t) = u0 + v (t − t0) [m], v [m/s].

    xc: continuous states at t0 (updated in place); z_last: the indicators at the end
    of the previous segment (None at the start of a run); t_next: the pending time
    event [s] (inf if none); h0: first trial step [s] (≤ 0: dt). Returns (z at the
    end, t_next, last accepted step [s], events handled)."""
    nx, nz = xc.size, ops.nz
    t1 = t0 + dt
    z0 = np.empty(nz)
    z1 = np.empty(nz)
    events = 0

    def u_at(t):
        return u0 + v * (t - t0)

    def z_at(t, x, out):
        ops.put(t, x, u_at(t), v)
        if nz:
            ops.indicators(out)

    def handle(t):
        nonlocal events, t_next
        events += 1
        if events > MAX_EVENTS_PER_SEGMENT:
            raise SegmentError(f"more than {MAX_EVENTS_PER_SEGMENT} events in the segment "
                               f"[{t0!r}, {t1!r}] s (chattering)")
        ops.put(t, xc, u_at(t), v)
        t_next = ops.event()
        if nx:
            ops.states(xc)

    z_at(t0, xc, z0)
    if z_last is not None and nz and _crossed(z_last, z0):
        handle(t0)                        # the new segment's inputs switched something
        z_at(t0, xc, z0)
    if t_next <= t0:
        handle(t0)
        z_at(t0, xc, z0)
    if dt <= 0.0:
        return z0, t_next, h0, events

    def rhs(t, x, args, out):
        ops.put(t, x, u_at(t), v)
        ops.derivatives(out)

    K = np.empty((7, nx))
    xn = np.empty(nx)
    xd = np.empty(nx)
    atol = rtol * np.asarray(xscale, float)
    if nx:
        rhs(t0, xc, None, K[0])
    h = dt if not (h0 > 0.0) else min(h0, dt)
    hmin = 1e-14 * max(dt, 1e-300)
    t = t0
    last_h = h
    while t < t1:
        stop = min(t1, t_next)
        if t + h >= stop:
            h = stop - t
        if nx:
            err = dp45_step(rhs, t, xc, h, None, K, xn, atol, rtol, nx)
            if err > 1.0 and h > hmin:
                h *= dp45_factor(err)
                continue
        else:
            err = 0.0
        tn = stop if t + h >= stop else t + h
        z_at(tn, xn, z1)
        hit = _crossed(z0, z1) if nz else []
        if hit:
            # locate the earliest sign change to rounding; the event is handled just
            # after it, where the indicator has changed sign
            a, b = t, tn
            while b - a > 4.0 * 2.2e-16 * max(1.0, abs(b)):
                m = 0.5 * (a + b)
                if nx:
                    dp45_dense(K, xc, h, (m - t) / h, xd)
                z_at(m, xd, z1)
                if _crossed(z0, z1):
                    b = m
                else:
                    a = m
            if nx:
                dp45_dense(K, xc, h, (b - t) / h, xd)
                xc[:] = xd
            handle(b)
            t = b
            z_at(t, xc, z0)
            if nx:
                rhs(t, xc, None, K[0])
            h = max(tn - b, hmin)
            continue
        t = tn
        if nx:
            xc[:] = xn
            K[0] = K[6]
        last_h = h
        ops.put(t, xc, u_at(t), v)
        if ops.completed() or t >= t_next:
            handle(t)
            if nx:
                rhs(t, xc, None, K[0])
            z_at(t, xc, z0)
        else:
            z0[:] = z1
        h = h * dp45_factor(err) if nx else t1 - t
    return z0, t_next, last_h, events
