"""Assemblies of masses, springs, dampers and force elements, their solvers and rigs.

``Assembly`` builds the system, ``simulate`` integrates it (scipy BDF with an analytic
Jacobian, a compiled RK45, or the implicit projection scheme of Bastien et al. (2007),
eqs. (A.7)-(A.9)), ``SimResult`` carries named signals and the energy account.
"""
from .assembly import GROUND, Assembly, Harmonic
from .methods import METHODS
from .observers import Observe
from .result import SimResult, SimulationError
from .simulate import simulate
from .belt_tensioner import belt_assembly, paper_tensioner, simulate_belt
from .sweep import frf_grid, run_sweep

__all__ = ["Assembly", "Harmonic", "GROUND", "simulate", "SimResult", "SimulationError",
           "METHODS", "Observe", "simulate_belt", "belt_assembly", "paper_tensioner", "run_sweep",
           "frf_grid"]
