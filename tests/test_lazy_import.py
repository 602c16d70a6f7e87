"""``import hystmech`` reaches every subpackage and every law (PEP 562 lazy attributes)
without importing them: the modules loaded by ``import hystmech`` stay those that
:func:`hystmech.drive` needs, and each law class found in components/*.py is listed by
``hystmech.components`` and importable from the top level."""
import importlib
import inspect
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import hystmech
from hystmech import components
from hystmech.components.base import ForceElement
from hystmech.components.vector_base import VectorForceElement

SUBPACKAGES = ("analysis", "components", "fmu", "identify", "plugins", "scenarios", "systems")


def _law_classes_in_files() -> dict:
    """Every public force-element class defined in a module of components/ (the files
    themselves, not the registry): name -> class."""
    out = {}
    for info in pkgutil.iter_modules(components.__path__):
        if info.name.startswith("_") or info.name in ("base", "vector_base"):
            continue
        mod = importlib.import_module(f"hystmech.components.{info.name}")
        for name, obj in vars(mod).items():
            if (inspect.isclass(obj) and obj.__module__ == mod.__name__
                    and not name.startswith("_")
                    and issubclass(obj, (ForceElement, VectorForceElement))):
                out[name] = obj
    return out


def test_import_loads_no_subpackage():
    # the cost of `import hystmech` does not grow: the lazy attributes import nothing
    code = ("import sys, json, hystmech; "
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith('hystmech'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    loaded = set(json.loads(out.strip().splitlines()[-1]))
    # drive and its layers below (limits -> safeio -> runner_io: small, stdlib-only);
    # no law module, no subpackage (systems, fmu, identify, plugins, analysis, ...)
    assert loaded == {"hystmech", "hystmech.components", "hystmech.components.base",
                      "hystmech.drive", "hystmech.interrupt", "hystmech.limits",
                      "hystmech.safeio", "hystmech.runner_io"}, loaded


@pytest.mark.parametrize("name", SUBPACKAGES)
def test_subpackages_reachable_as_attributes(name):
    mod = getattr(hystmech, name)
    assert mod is importlib.import_module(f"hystmech.{name}")
    assert name in dir(hystmech)


def test_unknown_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'LuGree'"):
        hystmech.LuGree
    with pytest.raises(AttributeError, match="no attribute 'LuGree'"):
        components.LuGree


def test_every_law_in_components_and_top_level():
    found = _law_classes_in_files()
    # the vector laws too (their own protocol, vector_base.py)
    assert {"LuGre", "Dahl", "MasingVector", "BoucWenBiaxial"} <= set(found)
    listed_c, listed_h = set(dir(components)), set(dir(hystmech))
    for name, cls in found.items():
        assert getattr(components, name) is cls, name
        assert name in listed_c and name in listed_h, name
        ns = {}
        exec(f"from hystmech import {name}", ns)
        assert ns[name] is cls, name
    assert set(components.LAWS) == set(found)


def test_engine_plugin_reachable_after_import():
    pytest.importorskip("mujoco")
    code = "import hystmech; print(hystmech.plugins.mujoco.__name__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.split()[-1] == "hystmech.plugins.mujoco"
