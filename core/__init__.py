"""hystmech: mechanical systems with hysteresis and dynamic friction.

Force elements live in :mod:`hystmech.components`, assemblies and solvers in
:mod:`hystmech.systems`, closed forms in :mod:`hystmech.analysis`, identification in
:mod:`hystmech.identify`, FMI export/import in :mod:`hystmech.fmu`, engine plugins in
:mod:`hystmech.plugins`.

After ``import hystmech`` every subpackage is reachable as an attribute
(``hystmech.fmu.export_fmu``) and every law imports from the top level
(``from hystmech import LuGre``); both are imported on first use (PEP 562), so
``import hystmech`` costs no more than :func:`drive` needs.

Examples
--------
>>> import hystmech
>>> from hystmech import Dahl
>>> law = Dahl(rho=200.0, Fc=2.0)
>>> hystmech.components.Dahl is Dahl
True
"""
import importlib

from . import components as _components
from .drive import DriveResult, drive

__version__ = "0.1.0"
__all__ = ["drive", "DriveResult", "__version__"]

# subpackages and public modules reached as attributes, imported on first use
_SUBMODULES = ("analysis", "components", "fmu", "identify", "plugins", "scenarios", "systems",
              "scenario", "signals", "limits", "schema", "runners")


def _law_names() -> tuple[str, ...]:
    return tuple(_components.LAWS)


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    if name in _components.LAWS:
        return getattr(_components, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_SUBMODULES) | set(_law_names()))
