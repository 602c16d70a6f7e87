"""hystmech force elements inside multibody engines.

``hystmech.plugins.mujoco``
    native MuJoCo passive-force plugins (extra ``mujoco``)
``hystmech.plugins.exudyn``
    Exudyn user-function connectors (extra ``exudyn``)
``hystmech.plugins.elastica``
    hysteretic bending of PyElastica Cosserat rods, and an element on a node of a rigid
    body or rod (extra ``elastica``)

Every host follows the trial/commit discipline of the element protocol
(components/base.py): a force evaluation advances a copy of the state committed at the
last accepted step; the committed state changes once per accepted step.
"""
import importlib as _importlib

_ENGINES = ("mujoco", "exudyn", "elastica")


def __getattr__(name):
    # each engine's module imported on first use: ``hystmech.plugins.mujoco`` after
    # ``import hystmech`` (the engine itself is an extra, imported only then)
    if name in _ENGINES:
        return _importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_ENGINES))
