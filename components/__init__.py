"""Force elements: one module per hysteresis law (see base.py for the protocol).

Classes are imported lazily (PEP 562) so that ``import hystmech.components`` stays cheap
and each law's numba kernels compile only when that law is used; ``dir()`` lists them.

Examples
--------
>>> from hystmech.components import LuGre, MasingVector
>>> LuGre(sigma0=1e5, sigma1=300.0, Fc=1.0, Fs=1.5, vs=0.001).params["Fs"]
1.5
>>> MasingVector(k=2.0, alpha=0.1).n_in
2
"""
import importlib

from .base import ForceElement, Param

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

# vector (two-input) laws of a 2-vector input (vector_base.py);
# not force elements of the scalar protocol, so kept apart from REGISTRY
VECTOR_REGISTRY = {
    "MasingVector": "masing_vector",
    "BoucWenBiaxial": "bouc_wen_biaxial",
    "BoucWenIsotropic": "bouc_wen_isotropic",
}

# every law class of the package: scalar and vector
LAWS = {**REGISTRY, **VECTOR_REGISTRY}

__all__ = ["ForceElement", "VectorForceElement", "Param", "REGISTRY", "VECTOR_REGISTRY", "LAWS",
           "get_element_class", *LAWS]


def get_element_class(name: str):
    """The force-element class called ``name`` (ValueError listing the known ones)."""
    if name not in REGISTRY:
        raise ValueError(f"unknown element {name!r}; known elements: {', '.join(sorted(REGISTRY))}")
    return _load(name, REGISTRY[name])


def _load(name: str, module: str):
    try:
        mod = importlib.import_module(f".{module}", __name__)
    except ModuleNotFoundError as e:
        raise ValueError(f"element {name!r} is not available ({e})") from None
    return getattr(mod, name)


def __getattr__(name):
    if name in LAWS:
        return _load(name, LAWS[name])
    if name == "VectorForceElement":
        from .vector_base import VectorForceElement
        return VectorForceElement
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
