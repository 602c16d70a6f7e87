"""The size at which the documentation's gallery examples run (docs/examples).

Every example reads one knob, the environment variable ``HYSTMECH_GALLERY``, through
:func:`scenario_overrides`, and runs the same code at that size:

``full``     the scenario as shipped (as ``hystmech run NAME`` runs it; long sweeps
             take minutes);
``reduced``  (default, also when unset) the long scenarios on smaller grids or shorter
             runs, each example saying what it reduces;
``ci``       what CI builds: every example executed, the slow ones smaller still, so
             the whole gallery takes a few minutes.

Examples
--------
>>> import os
>>> os.environ["HYSTMECH_GALLERY"] = "ci"
>>> gallery_size()
'ci'
>>> scenario_overrides("cable-dynamic", reduced={"solver": {"periods": 3.0}},
...                    ci={"solver": {"periods": 1.0}})["solver"]["periods"]
1.0
>>> os.environ["HYSTMECH_GALLERY"] = "full"
>>> scenario_overrides("cable-dynamic", reduced={"solver": {"periods": 3.0}}) is None
True
>>> del os.environ["HYSTMECH_GALLERY"]
"""
from __future__ import annotations

import os

__all__ = ["SIZES", "gallery_size", "scenario_overrides"]

SIZES = ("ci", "reduced", "full")
ENV = "HYSTMECH_GALLERY"


def gallery_size() -> str:
    """``HYSTMECH_GALLERY`` as one of :data:`SIZES` ("reduced" when unset or empty);
    ValueError naming the variable and the allowed values otherwise."""
    size = os.environ.get(ENV, "").strip().lower() or "reduced"
    if size not in SIZES:
        raise ValueError(f"{ENV} must be one of {', '.join(SIZES)} (got "
                         f"{os.environ.get(ENV)!r})")
    return size


def scenario_overrides(name: str, *, reduced: dict | None = None,
                       ci: dict | None = None) -> dict | None:
    """The ``overrides`` of :func:`hystmech.scenario.run_scenario` for scenario ``name``
    at the current :func:`gallery_size`: None at ``full``; at ``reduced`` the tables of
    ``reduced``; at ``ci`` those of ``ci`` over those of ``reduced``. Each given table
    is merged key by key into the scenario's own (the other keys stay as shipped)."""
    size = gallery_size()
    if size == "full":
        return None
    changes: dict = {}
    for level in ((reduced or {}), (ci or {}) if size == "ci" else {}):
        for table, keys in level.items():
            changes.setdefault(table, {}).update(keys)
    if not changes:
        return None
    from .scenario import load_scenario

    cfg = load_scenario(name)
    return {table: {**cfg.get(table, {}), **keys} for table, keys in changes.items()}
