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

The FMU is reached through six calls on a context (``fmu_put`` ... ``fmu_states``):
in Python the importing element's methods (every backend); in numba code fmu/native.py's
overloads calling the FMU's C entry points, which compile this same host into the loop.
"""
from __future__ import annotations

import numpy as np

from numba.extending import register_jitable

from ..components._ode import dp45_dense, dp45_factor, dp45_step

MAX_EVENTS_PER_SEGMENT = 10_000   # more is chattering: reported, never looped forever
CHATTER = -1                      # events count returned for chattering


# The FMU calls of the host. As Python they call the context's methods; fmu/native.py
# overloads them for numba (context = the element's p, the FMU's C entry points).
def fmu_put(ctx, t, xc, u, v):
    """Time t [s], continuous states xc and inputs (u [m], v [m/s])."""
    ctx.put(t, xc, u, v)


def fmu_derivatives(ctx, out):
    """ẋ of the continuous states at what fmu_put set."""
    ctx.derivatives(out)


def fmu_indicators(ctx, out):
    """The event indicators at what fmu_put set."""
    ctx.indicators(out)


def fmu_completed(ctx):
    """fmi2CompletedIntegratorStep: True when the FMU asks for an event now."""
    return ctx.completed()


def fmu_event(ctx):
    """Event mode, new discrete states until none is needed, continuous-time mode: the
    next time event [s] (inf if none)."""
    return ctx.event()


def fmu_states(ctx, out):
    """The continuous states, read back after an event."""
    ctx.states(out)


@register_jitable
def _crossed(z0, z1):
    """True when an indicator changed sign from a non-zero value."""
    for i in range(z0.size):
        if z0[i] != 0.0 and (z1[i] > 0.0) != (z0[i] > 0.0):
            return True
    return False


@register_jitable
def _seg_rhs(t, x, args, out):
    # the FMU's derivatives along the segment u = u0 + v (t − t0)
    ctx, t0, u0, v = args
    fmu_put(ctx, t, x, u0 + v * (t - t0), v)
    fmu_derivatives(ctx, out)


@register_jitable
def _z_at(ctx, t, x, u, v, out):
    fmu_put(ctx, t, x, u, v)
    if out.size:
        fmu_indicators(ctx, out)


@register_jitable
def _handle(ctx, t, xc, u, v):
    # event mode at (t, xc): returns the next time event; the states read back
    fmu_put(ctx, t, xc, u, v)
    t_next = fmu_event(ctx)
    if xc.size:
        fmu_states(ctx, xc)
    return t_next


@register_jitable
def advance_segment(ctx, t0, xc, u0, v, dt, rtol, xscale, z0, z_last, has_last,
                    t_next, h0):
    """Advance the FMU from t0 over dt [s] with u(t) = u0 + v (t − t0) [m], v [m/s].

    ctx reaches the FMU through the six calls below: in Python an object with the
    methods of the same names (the importing element, any backend); in numba code the
    block addresses p of fmu/native.py, whose overloads of these calls compile the
    whole host into the caller.
    xc: continuous states at t0 (updated in place); z0 (nz) receives the indicators at
    the end; z_last: those at the end of the previous segment (has_last False at the
    start of a run); t_next: the pending time event [s] (inf if none); h0: first trial
    step [s] (≤ 0: dt). Returns (t_next, last accepted step [s], events handled, or
    CHATTER)."""
    nx = xc.size
    nz = z0.size
    t1 = t0 + dt
    z1 = np.empty(nz)
    events = 0
    _z_at(ctx, t0, xc, u0, v, z0)
    if (has_last and nz > 0 and _crossed(z_last, z0)) or t_next <= t0:
        # the new segment's inputs switched something, or a time event is due
        t_next = _handle(ctx, t0, xc, u0, v)
        events += 1
        _z_at(ctx, t0, xc, u0, v, z0)
    if dt <= 0.0:
        return t_next, h0, events
    args = (ctx, t0, u0, v)
    K = np.empty((7, nx))
    xn = np.empty(nx)
    xd = np.empty(nx)
    atol = np.empty(nx)
    for i in range(nx):
        atol[i] = rtol * xscale[i]
    if nx:
        _seg_rhs(t0, xc, args, K[0])
    h = min(h0, dt) if h0 > 0.0 else dt
    hmin = 1e-14 * dt
    t = t0
    last_h = h
    err = 0.0
    while t < t1:
        stop = min(t1, t_next)
        if t + h >= stop:
            h = stop - t
        if nx:
            err = dp45_step(_seg_rhs, t, xc, h, args, K, xn, atol, rtol, nx)
            if err > 1.0 and h > hmin:
                h *= dp45_factor(err)
                continue
        tn = stop if t + h >= stop else t + h
        _z_at(ctx, tn, xn, u0 + v * (tn - t0), v, z1)
        if nz > 0 and _crossed(z0, z1):
            # locate the earliest sign change to rounding; the event is handled just
            # after it, where the indicator has changed sign
            a, b = t, tn
            while b - a > 8.9e-16 * max(1.0, abs(b)):
                m = 0.5 * (a + b)
                if nx:
                    dp45_dense(K, xc, h, (m - t) / h, xd)
                _z_at(ctx, m, xd, u0 + v * (m - t0), v, z1)
                if _crossed(z0, z1):
                    b = m
                else:
                    a = m
            if nx:
                dp45_dense(K, xc, h, (b - t) / h, xd)
                for i in range(nx):
                    xc[i] = xd[i]
            events += 1
            if events > MAX_EVENTS_PER_SEGMENT:
                return t_next, last_h, CHATTER
            t_next = _handle(ctx, b, xc, u0 + v * (b - t0), v)
            t = b
            _z_at(ctx, t, xc, u0 + v * (t - t0), v, z0)
            if nx:
                _seg_rhs(t, xc, args, K[0])
            h = max(tn - b, hmin)
            continue
        t = tn
        for i in range(nx):
            xc[i] = xn[i]
            K[0, i] = K[6, i]
        last_h = h
        ut = u0 + v * (t - t0)
        fmu_put(ctx, t, xc, ut, v)
        if fmu_completed(ctx) or t >= t_next:
            events += 1
            t_next = _handle(ctx, t, xc, ut, v)
            if nx:
                _seg_rhs(t, xc, args, K[0])
            _z_at(ctx, t, xc, ut, v, z0)
        else:
            for i in range(nz):
                z0[i] = z1[i]
        h = h * dp45_factor(err) if nx else t1 - t
    return t_next, last_h, events
