"""simulate(): the one driver of every integration method of assemblies.

It checks the inputs, builds the compiled :class:`~hystmech.systems.model.Model`,
picks the method from the registry (:mod:`~hystmech.systems.methods`), hands it the
observers, and turns what the method returns into a :class:`SimResult` or a
:class:`SimulationError` carrying the part computed.
"""
from __future__ import annotations

import numpy as np

from ..limits import check_memory
from . import methods
from .model import Model
from .observers import Observe, summary
from .result import SimResult, SimulationError

METHODS = methods.METHODS


def _check_span(t_span):
    try:
        if isinstance(t_span, (str, bytes)) or len(t_span) != 2 \
                or any(isinstance(v, (str, bytes, bool, np.bool_)) for v in t_span):
            raise TypeError
        t0, t1 = (float(v) for v in t_span)
    except (TypeError, ValueError):
        raise ValueError(f"t_span must be (t_start, t_end) in s (got {t_span!r})") from None
    if not (np.isfinite(t0) and np.isfinite(t1)):
        raise ValueError(f"t_span must be finite (got {t_span!r})")
    if t1 <= t0:
        raise ValueError(f"t_span: t_end must be > t_start (got t_start = {t0!r}, t_end = {t1!r})")
    return t0, t1


def _initial(asm, model, x0):
    y0 = asm.initial_state()
    if x0 is None:
        return y0
    names = asm.state_names()
    if isinstance(x0, dict):
        y0 = y0.copy()
        for key, val in x0.items():
            key = str(key)
            if key in model.dof_names:          # "m1": position, or (position, velocity)
                vals = np.atleast_1d(np.asarray(val, float))
                i = model.dof_names.index(key)
                y0[i] = vals[0]
                if vals.size > 1:
                    y0[model.nq + i] = vals[1]
            elif key in [e.name for e in asm.elements]:
                i = [e.name for e in asm.elements].index(key)
                vals = np.atleast_1d(np.asarray(val, float))
                if vals.size != model.sizes[i]:
                    raise ValueError(f"x0[{key!r}] must have {model.sizes[i]} component(s)")
                y0[model.eo[i]:model.eo[i] + model.sizes[i]] = vals
            elif key in names:
                y0[names.index(key)] = float(val)
            else:
                raise ValueError(f"x0: unknown DOF, element or state {key!r}; states: "
                                 f"{', '.join(names)}")
    else:
        y0 = np.asarray(x0, dtype=float).ravel()
        if y0.size != model.N:
            raise ValueError(f"x0 must have {model.N} components ({', '.join(names)}); "
                             f"got {y0.size}")
    if not np.all(np.isfinite(y0)):
        i = int(np.flatnonzero(~np.isfinite(y0))[0])
        raise ValueError(f"x0 must be finite ({names[i]} = {y0[i]!r})")
    lo, hi = model.box_lo, model.box_hi
    bad = (y0 < lo - 1e-12 * np.maximum(1, np.abs(lo))) | (y0 > hi + 1e-12 * np.maximum(1, np.abs(hi)))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"x0: {names[i]} = {y0[i]!r} is outside its box [{lo[i]!r}, {hi[i]!r}]")
    return np.clip(y0, lo, hi)


def simulate(assembly, t_span, x0=None, method: str = "auto", t_eval=None, *,
             energy: bool = True, progress=None, observe: Observe | None = None,
             callback=None, **options) -> SimResult:
    """Integrate an :class:`~hystmech.systems.Assembly` over t_span = (t_start, t_end) [s].

    method (one module each in :mod:`hystmech.systems.methods`; any case, e.g. ``"rk45"``
    is ``"RK45"``; unknown options are refused before anything is compiled):
      ``"auto"``: ``"projection"`` when an inclusion (Masing, Maxwell-slip) or an
      operator (relay, Preisach) is present, else compiled Dormand-Prince 5(4)
      switching to Radau IIA 5 while stiff (methods/auto.py; scipy ``"BDF"`` when an
      input cannot be compiled); options rtol (1e-8), atol, max_step, first_step,
      max_steps.
      ``"radau5"``: compiled Radau IIA order 5 (Hairer & Wanner (1996), §IV.8) with
      the analytic Jacobian (methods/radau5.py); same options.
      ``"BDF"`` (also ``"Radau"``, ``"LSODA"``): scipy.integrate.solve_ivp with the
      analytic Jacobian assembled from the elements' jac kernels; options rtol (1e-8),
      atol, max_step, first_step ...
      ``"RK45"``: compiled adaptive Dormand-Prince 5(4) with dense output; options rtol
      (1e-6), atol, max_step, first_step, max_steps, record_from.
      ``"projection"``: the first-order implicit scheme of Bastien et al. (2007),
      eqs. (A.7)-(A.9), :math:`U^{p+1} = (I + hA)^{-1}(U^p + h f(t_p, U^p))` with the
      resolvent the projection onto the inclusions' box, compiled; options h [s] (default 1e-5, eq. (57); must lie within
      the explicit stability limit of the linear part), rtol of the operators' advance,
      stride, record_from, max_points.
      ``"event"``: event-driven reference for inclusions (scipy DOP853 between
      stick/slip events located by root finding); options integrator, rtol, atol,
      max_events, max_step.

    x0: full state vector (names: ``assembly.state_names()``) or a dict
    {dof: x or (x, v), element: state, "dof.v": v}; default from the assembly.
    t_eval: output times (default: every step, thinned to ≤ 200 001 points for the
    projection scheme). energy: also integrate the energy account (see
    :meth:`SimResult.energy`).
    observe: an :class:`~hystmech.systems.observers.Observe` (windowed extrema of a
    connection-force sum, steady-state stop), run inside the compiled loops; its
    findings are ``result.observed``. callback: stop(t, y) -> bool called at every
    output sample (numba-compilable for the compiled methods); True ends the run there.
    Raises :class:`SimulationError` (with ``.partial`` and ``.t_reached``) when the
    solver fails or the state becomes non-finite.
    """
    from .assembly import Assembly

    if not isinstance(assembly, Assembly):
        raise ValueError(f"assembly must be a hystmech.systems.Assembly (got {type(assembly).__name__})")
    t0, t1 = _check_span(t_span)
    method = methods.canonical(method)      # any case: "rk45" is "RK45"
    if observe is not None and not isinstance(observe, Observe):
        raise ValueError("observe must be a hystmech.systems.observers.Observe or None")
    if callback is not None and not callable(callback):
        raise ValueError("callback must be a callable stop(t, y) -> bool or None")
    if method == "auto" and not assembly.smooth:
        method = "projection"
    impl = methods.get(method)
    if impl.SMOOTH_ONLY and not assembly.smooth:
        bad = [e.name for e in assembly.elements if e.element.kind != "smooth"]
        raise ValueError(f"method {method!r} needs smooth elements only; {', '.join(bad)} "
                         f"{'is' if len(bad) == 1 else 'are'} non-smooth: use method='projection'")
    if impl.OPTIONS is not None:
        # before the model is compiled: a misspelt option is refused at once
        methods.check_options(method, options, impl.OPTIONS)
    model = Model(assembly, observe=observe.signal if observe is not None else (),
                  callback=callback if impl.COMPILED else None, method=method)
    y0 = _initial(assembly, model, x0)
    if t_eval is not None:
        try:
            te = np.asarray(t_eval)
            if te.dtype.kind not in "iuf" or te.ndim != 1:
                raise TypeError
            t_eval = te.astype(float)
        except (TypeError, ValueError):
            raise ValueError(f"t_eval must be a 1-D array of times in s (got "
                             f"{type(t_eval).__name__} of shape {np.shape(t_eval)})") from None
        check_memory(8.0 * t_eval.size * (model.N + 2), f"simulate's output at {t_eval.size} "
                     "times of t_eval")
        if t_eval.size == 0 or not np.all(np.isfinite(t_eval)) or np.any(np.diff(t_eval) <= 0) \
                or t_eval[0] < t0 or t_eval[-1] > t1:
            raise ValueError(f"t_eval must be strictly increasing finite times within "
                             f"t_span = [{t0!r}, {t1!r}]")
    obs = observe.record(t0) if observe is not None else None
    from ..progress import resolve

    progress = resolve(progress, "simulate")
    if progress is not None:
        progress(0.0, f"simulating {assembly!r} with {method}")
    out = impl.run(model, t0, t1, y0, t_eval, energy, obs, options, method=method)
    T, Y, Q, ok, msg, t_r = out.t, out.y, out.quad, out.success, out.message, out.t_reached
    if callback is not None and not impl.COMPILED and len(T):
        k = next((i for i in range(len(T)) if callback(float(T[i]), Y[i])), None)
        if k is not None:
            T, Y, Q, t_r, msg = T[:k + 1], Y[:k + 1], None if Q is None else Q[:k + 1], \
                float(T[k]), "stopped by the callback"
    res = SimResult(model, T, Y, Q, method, out.stats, msg, ok)
    if ok and (Y.size and not np.all(np.isfinite(Y))):
        i = int(np.flatnonzero(~np.all(np.isfinite(Y), axis=1))[0])
        ok = False
        msg = "non-finite state"
        t_r = float(T[i])
        res = SimResult(model, T[:i], Y[:i], None if Q is None else Q[:i], method, out.stats,
                        msg, False)
    res.t_reached = t_r
    res.y_last = out.y_last if out.y_last is not None else (Y[-1] if len(Y) else None)
    res.observed = summary(obs) if obs is not None else None
    if not ok:
        raise SimulationError(f"{method} failed at t = {t_r!r} s of [{t0!r}, {t1!r}]: {msg}; "
                              f"the part computed so far is in .partial", t_r, res)
    if progress is not None:
        progress(1.0, "done")
    return res
