"""Force elements: one module per hysteresis law (see base.py for the protocol).

Classes are imported lazily so that ``import hystmech.components`` stays cheap and
each law's numba kernels compile only when that law is used.
"""
import importlib

from .base import ForceElement, Param
from .bouc_wen_isotropic import BoucWenIsotropic

# class name -> module (a newcomer finds a law by its file name)
REGISTRY = {
    "Dahl": "dahl",
    "LuGre": "lugre",
    "Duhem": "duhem",
    "ModifiedDahl": "modified_dahl",
    "ViscousDahl": "viscous_dahl",
    "AsymmetricViscousDahl": "viscous_dahl",
    "NaiveAsymmetricViscousDahl": "viscous_dahl",
    "BoucWen": "bouc_wen",
    "Masing": "masing",
    "MaxwellSlip": "maxwell_slip",
    "Relay": "preisach",
    "Preisach": "preisach",
    "PrandtlIshlinskii": "preisach",
    "LinearSpring": "linear",
    "LinearDamper": "linear",
    "SpringDamper": "linear",
    "SumElement": "combine",
}

__all__ = ["ForceElement", "Param", "REGISTRY", "get_element_class", *REGISTRY,
           "BoucWenIsotropic"]


def get_element_class(name: str):
    """The force-element class called ``name`` (ValueError listing the known ones)."""
    if name not in REGISTRY:
        raise ValueError(f"unknown element {name!r}; known elements: {', '.join(sorted(REGISTRY))}")
    try:
        mod = importlib.import_module(f".{REGISTRY[name]}", __name__)
    except ModuleNotFoundError as e:
        raise ValueError(f"element {name!r} is not available ({e})") from None
    return getattr(mod, name)


def __getattr__(name):
    if name in REGISTRY:
        return get_element_class(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
