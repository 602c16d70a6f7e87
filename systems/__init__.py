"""Assemblies of masses, springs, dampers and force elements, and their solvers.

``Assembly`` builds the system, ``simulate`` integrates it (scipy BDF with an analytic
Jacobian, a compiled RK45, Radau IIA, or the implicit projection scheme of Bastien et al.
(2007), eqs. (A.7)-(A.9)), ``SimResult`` carries named signals and the energy account.

Subpackages: :mod:`hystmech.systems.methods` (one solver method per file, ``METHODS``
registry), :mod:`hystmech.systems.rigs` (the papers' rigs as assemblies and their
scenario runners), :mod:`hystmech.systems.periodic` (periodic orbits, continuation,
frequency-response sweeps). Layering: this core imports neither subpackage of rigs or
periodic analysis; they build on it.
"""
from .assembly import GROUND, Assembly, Harmonic
from .methods import METHODS
from .observers import Observe
from .result import SimResult, SimulationError
from .simulate import simulate

__all__ = ["Assembly", "Harmonic", "GROUND", "simulate", "SimResult", "SimulationError",
           "METHODS", "Observe"]
