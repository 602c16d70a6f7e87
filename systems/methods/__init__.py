"""Integration methods of assemblies: one module per method, one registry.

The protocol (after scipy.integrate's ``solve_ivp`` METHODS): a method module defines

``NAME``
    the name users pass as ``simulate(..., method=NAME)`` (its canonical spelling;
    :func:`canonical` matches any case);
``OPTIONS``
    the option names it accepts (anything else is a ValueError);
``SMOOTH_ONLY``
    True when it needs smooth elements only (no inclusion, no operator);
``COMPILED``
    True when it runs the assembly's compiled code (and so the observers
    inside its loop);
``run(model, t0, t1, y0, t_eval, energy, obs, options, method) -> MethodResult``
                  integrate the :class:`~hystmech.systems.model.Model` from y0 over
                  [t0, t1] [s]; ``obs`` is None or an observer record
                  (:mod:`~hystmech.systems.observers`) to feed with the observed signal;
                  ``method`` the registry name (one module may serve several).

It reads the compiled functions of the model (``model.code``: ``fun(t, y, prm, dy,
work)``, ``jac(t, y, prm, J, work)``, ``core``, ``powers``, ``projection``, ``rk45``, ...)
(or, where the model is to run there, the same loop in the generic engine,
``model.engine()``: :mod:`~hystmech.systems.methods.engine`, chosen per model by
``engine.for_model`` from the method the model is built for, :data:`engine.LOOPS`)
and returns the states at
its output times; :func:`~hystmech.systems.simulate.simulate`
owns the rest (checks, failure handling, result). Adding a method is one file here and
one line in :data:`REGISTRY`.
"""
from __future__ import annotations

import importlib
from typing import NamedTuple

import numpy as np


class MethodResult(NamedTuple):
    """What a method returns: output times t (n,) [s], states y (n, N), energy
    quadratures quad (n, nquad) or None, stats, success, message, the time reached
    [s], whether an observer or the user's callback stopped the run early, and the
    state reached (None when the method does not report it)."""
    t: np.ndarray
    y: np.ndarray
    quad: np.ndarray | None
    stats: dict
    success: bool
    message: str
    t_reached: float
    stopped: bool = False
    y_last: np.ndarray | None = None


# name -> module (relative to this package); simulate() sends "auto" to "projection"
# for inclusions and operators
REGISTRY = {
    "auto": "auto",
    "radau5": "radau5",
    "BDF": "scipy_ivp",
    "Radau": "scipy_ivp",
    "LSODA": "scipy_ivp",
    "RK45": "rk45",
    "projection": "projection",
    "event": "event",
}

METHODS = tuple(REGISTRY)
_BY_FOLDED = {k.casefold(): k for k in REGISTRY}


def canonical(name, allowed=METHODS) -> str:
    """The registry spelling of method ``name``, matched without regard to case
    ("rk45", "Rk45" and "RK45" are all ``"RK45"``), so that the API, scenario files
    and the CLI accept one vocabulary; ValueError naming the allowed methods (in
    their canonical spelling) otherwise. ``allowed``: a subset a caller accepts."""
    key = _BY_FOLDED.get(name.casefold()) if isinstance(name, str) else None
    if key is None or key not in allowed:
        raise ValueError(f"method must be one of {', '.join(allowed)} (any case; got {name!r})")
    return key


def get(name: str):
    """The module implementing method ``name`` (any case)."""
    return importlib.import_module(f"{__name__}.{REGISTRY[canonical(name)]}")


def check_options(method: str, options: dict, allowed) -> dict:
    """options as a dict, with a ValueError naming the first unknown one."""
    opts = dict(options)
    for k in opts:
        if k not in allowed:
            raise ValueError(f"unknown option {k!r} for method {method!r}; allowed: "
                             f"{', '.join(allowed)}")
    return opts
