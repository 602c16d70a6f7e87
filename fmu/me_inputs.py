"""Run a model-exchange FMU with continuous inputs: hystmech's own FMI host, exposed.

``simulate_me(fmu, t, u, v)`` integrates an FMU's model exchange with the inputs given as
functions of time and evaluated at every right-hand-side, event-indicator and
completed-step evaluation (what FMI 2.0/3.0 model exchange asks of a host). It is the
host of fmu/me_events.py (``advance_segment``: Dormand-Prince 5(4), event location on the
dense output, event mode, ``fmi2CompletedIntegratorStep`` after every step, time events)
driven from one output time to the next, with a context whose ``put`` sets the inputs
u(t), v(t) instead of the segment's straight line.

Why it exists: fmpy 0.3.32's ``simulate_fmu`` (model exchange, CVode or Euler) sets the
inputs only at its communication points and inside its root function, never in the
right-hand side, and does not restart the solver when an input changes; with a
continuously varying input an FMU whose rates depend on v (LuGre, Bouc-Wen, Dahl) is
integrated with stale inputs (Dahl 23 % off, LuGre and Bouc-Wen stop with CVode error
-3). This helper gives the right numbers with the FMU files fmpy loads (through fmpy's
FMI calls, or PyFMI's with ``backend="pyfmi"``).
"""
from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np


class MEResult(NamedTuple):
    """Output of :func:`simulate_me`: times t [s], the output y at each time (e.g. F
    [N]), the continuous states x (len(t), nx), and the number of events handled."""

    t: np.ndarray
    y: np.ndarray
    x: np.ndarray
    events: int


class _Inputs:
    """The FMU calls of fmu/me_events.py on an FMUElement, with the inputs taken from
    u(t), v(t) at the time of every call (the host's straight-line u is ignored)."""

    def __init__(self, element, u, v):
        self.el, self.u, self.v = element, u, v

    def put(self, t, xc, u, v):
        self.el.put(t, xc, float(self.u(t)), float(self.v(t)) if self.v is not None else 0.0)

    def derivatives(self, out):
        self.el.derivatives(out)

    def indicators(self, out):
        self.el.indicators(out)

    def states(self, out):
        self.el.states(out)

    def completed(self):
        return self.el.completed()

    def event(self):
        return self.el.event()


def simulate_me(fmu, t, u: Callable, v: Callable | None = None, *, inputs=("u", "v"),
                output: str = "F", rtol: float = 1e-10, parameters=None,
                backend: str = "fmpy") -> MEResult:
    """Model exchange of ``fmu`` (path of an FMI 2.0/3.0 FMU) from t[0] = 0 to t[-1] [s],
    the output recorded at the times ``t`` (increasing), with continuous inputs.

    u, v: functions of time t [s] giving the inputs named by ``inputs`` (hystmech's laws:
    u [m], v = du/dt [m/s]; give v whenever the FMU has a second input); they are
    evaluated wherever the host evaluates the FMU, so a smooth input is integrated as
    such. rtol: relative tolerance of the Dormand-Prince steps (absolute: rtol times each
    state's nominal). parameters: {name: value} set before initialisation. backend:
    "fmpy" or "pyfmi" (fmu/pyfmi_backend.py).
    """
    from .element import FMUElement, FMUError

    t = np.asarray(t, dtype=float)
    if t.ndim != 1 or t.size < 2 or not np.all(np.isfinite(t)):
        raise ValueError("t must be a 1-D array of at least 2 finite times [s]")
    if t[0] != 0.0:
        raise ValueError(f"t must start at 0 s, the FMU's start time (got {t[0]!r})")
    if not np.all(np.diff(t) > 0.0):
        raise ValueError("t must be strictly increasing")
    if not callable(u) or (v is not None and not callable(v)):
        raise ValueError("u and v must be functions of time t [s]")
    if not (isinstance(rtol, (int, float)) and 0.0 < rtol < 1.0):
        raise ValueError(f"rtol must be in (0, 1) (got {rtol!r})")
    inputs = tuple(inputs)[: 1 if v is None else 2]
    el = FMUElement(fmu, mode="me", me_host=True, compiled=False, inputs=inputs,
                    output=output, parameters=parameters, backend=backend)
    more = [m.name for m in el.md.modelVariables if m.causality == "input"
            and m.name not in inputs]
    if v is None and more:
        el.close()
        raise ValueError(f"the FMU has the input {more[0]!r} besides {inputs[0]!r}: give v "
                         f"(a function of time) for it")
    from .me_events import CHATTER, MAX_EVENTS_PER_SEGMENT, advance_segment

    try:
        ctx = _Inputs(el, u, v)
        vt = (lambda s: float(v(s))) if v is not None else (lambda s: 0.0)
        el._initial_inputs(float(u(0.0)), vt(0.0))   # the start state sees u(0), v(0)
        xc = np.empty(el.nx)
        if el.nx:
            el.states(xc)
        ys = np.empty(t.size)
        xs = np.empty((t.size, el.nx))
        ctx.put(0.0, xc, 0.0, 0.0)
        ys[0], xs[0] = el._get_output(), xc
        z, z_last = np.empty(el.nz), np.empty(el.nz)
        t_next, h, events = el._t_event, 0.0, 0
        for k in range(t.size - 1):
            t0, t1 = t[k], t[k + 1]
            t_next, h, ev = advance_segment(ctx, t0, xc, float(u(t0)), vt(t0), t1 - t0,
                                            float(rtol), el._xscale_c, z, z_last, k > 0,
                                            t_next, h)
            if ev == CHATTER:
                raise FMUError(f"FMU {str(fmu)!r}: more than {MAX_EVENTS_PER_SEGMENT} "
                               f"events between {t0!r} and {t1!r} s (chattering)")
            events += ev
            z_last, z = z, z_last
            ctx.put(t1, xc, 0.0, 0.0)
            ys[k + 1], xs[k + 1] = el._get_output(), xc
    finally:
        el.close()
    return MEResult(t, ys, xs, events)
