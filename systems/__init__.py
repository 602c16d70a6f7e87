"""Assemblies of masses, springs, dampers and force elements, their solvers and rigs.

``Assembly`` builds the system, ``simulate`` integrates it (scipy BDF with an analytic
Jacobian, a compiled RK45, or the implicit projection scheme of Bastien et al. (2007),
eqs. (A.7)-(A.9)), ``SimResult`` carries named signals and the energy account.
"""
from .assembly import GROUND, Assembly, Harmonic
from .solvers import METHODS, SimResult, SimulationError, simulate

__all__ = ["Assembly", "Harmonic", "GROUND", "simulate", "SimResult", "SimulationError",
           "METHODS"]
