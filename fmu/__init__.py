"""FMI: export force elements as native FMUs, import FMUs as force elements.

``export_fmu(element, path, fmi_version=2)`` writes an FMU whose C code is the law's
own C kernel (components/LAW.c) plus the shared FMI boilerplate (fmu/templates/);
``FMUElement(path, inputs=..., output=...)`` wraps any FMU (through fmpy) as a force
element usable in ``hystmech.drive`` and in assemblies; ``simulate_me(path, t, u, v)``
runs an FMU's model exchange with continuous inputs u(t), v(t) (hystmech's own FMI host,
which evaluates the inputs in the right-hand side, where fmpy 0.3.32 does not);
``export_ssp(assembly, path)`` / ``import_ssp(path)`` write / read an assembly as an SSP
package of connected FMUs (fmu/ssp_export.py, fmu/ssp_import.py).
"""
from .export import FMUExportError, export_fmu


def __getattr__(name):
    if name in ("export_ssp", "import_ssp"):
        from . import ssp_export, ssp_import

        return getattr(ssp_export if name == "export_ssp" else ssp_import, name)
    if name == "FMUElement":
        from .element import FMUElement

        return FMUElement
    if name in ("simulate_me", "MEResult"):
        from . import me_inputs as mod

        return getattr(mod, name)
    if name == "FMUError":
        from .element import FMUError

        return FMUError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["export_fmu", "FMUElement", "FMUExportError", "FMUError", "simulate_me",
           "MEResult", "export_ssp", "import_ssp"]
