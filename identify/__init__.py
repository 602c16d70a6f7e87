"""Identification of hysteresis laws from measured data, and predicted-versus-measured
comparison.

Data: :class:`Dataset`, :func:`load_csv`, :func:`load_npz`, :func:`load_dyke`.
Fits (each returns a FitResult with params, merit, stderr, plot(), to_toml()):
:func:`fit_viscous_dahl`, :func:`fit_voltage_viscous_dahl`, :func:`fit_modified_dahl`,
:func:`fit_masing`, :func:`fit_preisach` (PreisachFit), :func:`fit_element` (generic),
:func:`fit_bouc_wen_damper`. Comparison: :func:`compare`, :func:`compare_arrays`.
Uncertainty (covariance valid under coloured noise, intervals, residual tests,
identifiability): :func:`analyse` -> :class:`Uncertainty`.
Names are imported lazily, so ``import hystmech.identify`` stays cheap.
"""
import importlib

_WHERE = {
    "Dataset": "dataset", "load_csv": "dataset", "load_npz": "dataset", "load": "dataset",
    "load_dyke": "dataset", "turning_points": "dataset", "dyke_data_dir": "dataset",
    "FitResult": "result",
    "fit_viscous_dahl": "viscous_dahl", "fit_voltage_viscous_dahl": "viscous_dahl",
    "find_windows": "viscous_dahl", "Window": "viscous_dahl", "rho_from_area": "viscous_dahl",
    "viscous_dahl_force": "viscous_dahl", "voltage_viscous_dahl_force": "viscous_dahl",
    "predict_voltage_viscous_dahl": "viscous_dahl", "plot_regression": "viscous_dahl",
    "fit_modified_dahl": "modified_dahl", "envelope_lines": "modified_dahl",
    "fit_masing": "masing",
    "fit_preisach": "preisach", "PreisachFit": "preisach", "assemble": "preisach",
    "fit_element": "generic",
    "fit_bouc_wen_damper": "bouc_wen", "predict_bouc_wen_damper": "bouc_wen",
    "compare": "comparison", "compare_arrays": "comparison",
    "analyse": "uncertainty", "Uncertainty": "uncertainty", "ljung_box": "uncertainty",
    "cross_correlation_test": "uncertainty",
}

__all__ = sorted(_WHERE)


def __getattr__(name):
    if name in _WHERE:
        value = getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
        # cached: later accesses skip the import
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
