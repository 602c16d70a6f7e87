"""Periodic steady states of assemblies and driven elements: shooting with Floquet
multipliers (``shooting``), pseudo-arclength continuation (``continuation``), the belt
rig's frequency response by continuation (``frf_continuation``) and by brute-force
sweeps (``sweep``, resumable, process pools or Dask)."""
from .continuation import Branch, continue_orbits
from .shooting import PeriodicOrbit, Shooter, periodic_orbit, periodic_state
from .sweep import frf_grid, run_sweep

__all__ = ["Shooter", "PeriodicOrbit", "periodic_orbit", "periodic_state", "Branch",
           "continue_orbits", "frf_grid", "run_sweep"]
