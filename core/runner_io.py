"""What a scenario runner returns and raises, shared by the runners of every subpackage
(rigs, periodic analysis, closed forms, identification, FMU and engine cases).

It sits below :mod:`hystmech.scenario` (which reads scenario files, checks them and writes
the outputs a runner returns) and imports only the force elements, so a runner in a
lower layer never imports the scenario machinery that calls it.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from pathlib import Path

import difflib

import numpy as np

from .components import get_element_class


class ScenarioError(ValueError):
    """A scenario that cannot be found, parsed or run as written (CLI: exit 2)."""


class NonFiniteResult(ArithmeticError):
    """A run whose outputs became NaN/inf; nothing is written (CLI: exit 1)."""


@dataclass
class ScenarioOutput:
    """What a runner returns; run_scenario writes it into ``out`` (set on return)."""

    summary: dict = field(default_factory=dict)           # metrics, JSON-serialisable
    timeseries: dict = field(default_factory=dict)        # name -> 1-D array (equal lengths)
    figures: dict = field(default_factory=dict)           # file stem -> matplotlib Figure
    files: dict = field(default_factory=dict)             # extra name -> bytes/str
    out: Path | None = None                               # where run_scenario wrote


# -- elements from configuration ----------------------------------------------------------
def build_element(cfg: dict):
    """Force element from an [element] table: ``type = "Dahl"`` plus its parameters."""
    cfg = dict(cfg)
    typ = cfg.pop("type", None)
    if typ is None:
        raise ScenarioError("element.type is missing (e.g. type = \"Dahl\")")
    cls = get_element_class(str(typ))
    factory = cls
    ctor = cfg.pop("constructor", None)
    if ctor is not None:
        factory = getattr(cls, str(ctor), None)
        if factory is None or not callable(factory):
            raise ScenarioError(f"element.constructor: {typ} has no constructor {ctor!r}")
    sig = inspect.signature(factory)
    allowed = [p for p in sig.parameters if p not in ("self",)]
    unknown = [k for k in cfg if k not in allowed]
    if unknown:
        raise ScenarioError(f"unknown parameter {unknown[0]!r} for {typ}"
                            f"{nearest(unknown[0], allowed)}")
    try:
        return factory(**cfg)
    except TypeError as e:
        raise ScenarioError(f"element {typ}: {e}") from None


def nearest(key: str, allowed) -> str:
    """' (did you mean 'x'?)' for the closest allowed key, else the list of keys."""
    allowed = list(allowed)
    near = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
    if near:
        return f"; did you mean {near[0]!r}?"
    return f"; allowed: {', '.join(allowed) if allowed else '(none)'}"


def jsonable(x):
    """``x`` with NumPy values turned into JSON types (non-finite floats become None)."""
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return jsonable(x.tolist())
    if isinstance(x, (np.floating, float)):
        return float(x) if np.isfinite(x) else None
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (str, int, bool)) or x is None:
        return x
    return str(x)
