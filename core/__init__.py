"""hystmech: mechanical systems with hysteresis and dynamic friction.

Force elements live in :mod:`hystmech.components`, assemblies and solvers in
:mod:`hystmech.systems`, closed forms in :mod:`hystmech.analysis`, identification in
:mod:`hystmech.identify`, FMI export/import in :mod:`hystmech.fmu`.
"""
from .drive import DriveResult, drive

__version__ = "0.1.0"
__all__ = ["drive", "DriveResult", "__version__"]
