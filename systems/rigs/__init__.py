"""The papers' rigs built as assemblies: the belt–tensioner–mass rig of Bastien et al.
(2007), §4; the MR-damper rig (viscous + Dahl paper); the Maxwell-slip oscillator
(Jankowski, Marszał & Stefański (2017)); the Bouc-Wen benchmark (Noël & Schoukens); the
Cosserat rod with a Preisach moment law (Manfredo et al. (2023)). Physics in the modules
named after the rig, scenario runners in ``*_cases.py`` (and ``run`` functions)."""
from .belt_tensioner import belt_assembly, paper_tensioner, simulate_belt
from .maxwell_slip_oscillator import maxwell_slip_oscillator
from .mr_damper import mr_damper_rig
from .rod import Rod, dynamic, quasi_static

__all__ = ["belt_assembly", "paper_tensioner", "simulate_belt", "maxwell_slip_oscillator",
           "mr_damper_rig", "Rod", "quasi_static", "dynamic"]
