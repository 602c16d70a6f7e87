"""The papers' rigs built as assemblies: the belt–tensioner–mass rig of Bastien et al.
(2007), §4; the MR-damper rig (viscous + Dahl paper); the Maxwell-slip oscillator
(Jankowski, Marszał & Stefański (2017)); the Bouc-Wen benchmark (Noël & Schoukens); the
Cosserat rod with a Preisach moment law (Manfredo et al. (2023)). Physics in the modules
named after the rig, scenario runners in ``*_cases.py`` (and ``run`` functions)."""
import importlib

# name -> module, imported on first use (PEP 562): a scenario runner importing one rig
# (e.g. belt_tensioner_cases) does not pay for the others (the rod's scipy.linalg, 0.4 s)
_WHERE = {"belt_assembly": "belt_tensioner", "paper_tensioner": "belt_tensioner",
          "simulate_belt": "belt_tensioner", "maxwell_slip_oscillator": "maxwell_slip_oscillator",
          "mr_damper_rig": "mr_damper", "Rod": "rod", "quasi_static": "rod", "dynamic": "rod"}

__all__ = list(_WHERE)


def __getattr__(name):
    if name in _WHERE:
        return getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_WHERE))
