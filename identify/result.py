"""The result of an identification: parameters, fit quality, plot, scenario TOML."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import metrics
from .dataset import Dataset


@dataclass
class FitResult:
    """Fitted parameters of one law and how well they reproduce the data.

    law: element class name in hystmech.components (or a model of hystmech.identify);
    params: its constructor keywords [SI]; merit: fit-quality figures (``nrmse`` =
    RMSE / force range, ``r2``, ``rmse`` [N]); stderr: standard errors of the fitted
    parameters where known; data / predicted: the data fitted and the model's force on
    them; details: intermediate quantities of the method (windows, regression lines ...).
    """

    law: str
    params: dict
    merit: dict = field(default_factory=dict)
    stderr: dict = field(default_factory=dict)
    data: Dataset | None = field(default=None, repr=False)
    predicted: np.ndarray | None = field(default=None, repr=False)
    details: dict = field(default_factory=dict, repr=False)
    uncertainty: object = field(default=None, repr=False)
    # a named classmethod of the law that takes params (e.g. Duhem.polynomial), or None
    constructor: str | None = None

    def __post_init__(self):
        if self.data is not None and self.predicted is not None and not self.merit:
            self.merit = metrics.summary(self.data.t, self.data.force, self.predicted)

    def summary(self) -> str:
        """A readable table: the parameters with their standard errors and 95 % intervals
        (when the fit has an uncertainty analysis), residual tests, warnings and merit."""
        lines = [f"{self.law} fit"]
        if self.uncertainty is not None:
            lines.append(self.uncertainty.summary())
        else:
            for k, v in self.params.items():
                se = self.stderr.get(k)
                if isinstance(v, (int, float)):
                    lines.append(f"{k:>10} = {v:.6g}" + (f"  (SE {se:.3g})" if se is not None else ""))
        if self.merit:
            lines.append("merit: " + ", ".join(f"{k} = {v:.4g}" for k, v in self.merit.items()
                                               if isinstance(v, (int, float))))
        return "\n".join(lines)

    def intervals(self) -> dict:
        """name -> (lo, hi) 95 % confidence interval (empty without an uncertainty analysis)."""
        return {} if self.uncertainty is None else self.uncertainty.intervals()

    def element(self):
        """The fitted force element (a hystmech.components class)."""
        from ..components import get_element_class

        cls = get_element_class(self.law)
        return (getattr(cls, self.constructor) if self.constructor else cls)(**self.params)

    def plot(self, ax=None, title: str | None = None):
        """Measured and fitted force against time and against displacement.
        Returns the matplotlib Figure."""
        import matplotlib.pyplot as plt

        if self.data is None or self.predicted is None:
            raise ValueError("this fit result holds no data/prediction to plot")
        if ax is None:
            fig, ax = plt.subplots(1, 2, figsize=(11, 4))
        else:
            fig = ax[0].figure
        d = self.data
        ax[0].plot(d.t, d.force, lw=0.8, label="measured")
        ax[0].plot(d.t, self.predicted, lw=0.8, ls="--", label="fitted model")
        ax[0].set_xlabel("t [s]")
        ax[0].set_ylabel("F [N]")
        ax[0].legend(loc="best")
        ax[1].plot(d.u, d.force, lw=0.8, label="measured")
        ax[1].plot(d.u, self.predicted, lw=0.8, ls="--", label="fitted model")
        ax[1].set_xlabel("u [m]")
        ax[1].set_ylabel("F [N]")
        nr = self.merit.get("nrmse")
        fig.suptitle(title or f"{self.law}" + (f"  (NRMSE {100 * nr:.2f} %)" if nr is not None else ""))
        return fig

    def to_toml(self, title: str | None = None, input_cfg: dict | None = None,
                reference: str = "") -> str:
        """A scenario TOML (runner "drive") with the fitted element, accepted by
        ``hystmech run``; input_cfg is its [input] table (default: a triangle spanning
        the data's displacement range with the data's mean cycle period)."""
        if input_cfg is None:
            d = self.data
            lo, hi = (float(np.min(d.u)), float(np.max(d.u))) if d is not None else (-1e-3, 1e-3)
            cyc = d.cycles() if d is not None else []
            period = float(np.mean([c.t[-1] - c.t[0] for c in cyc])) if cyc else 1.0
            input_cfg = {"type": "piecewise_linear", "knots_u": [0.5 * (lo + hi), hi, lo, 0.5 * (lo + hi)],
                         "knots_t": [0.0, 1.0, 3.0, 4.0], "periods": 3, "gamma": period / 4.0,
                         "samples_per_unit": 500}
        lines = [f"title = {_toml_value(title or f'{self.law} identified from measured data')}",
                 f"reference = {_toml_value(reference or 'hystmech identify')}",
                 'runner = "drive"', "", "# fit quality on the identification data"]
        for k, v in self.merit.items():
            if isinstance(v, (int, float)) and np.isfinite(v):
                lines.append(f"# {k} = {v:.6g}")
        lines += ["", "[element]", f"type = {_toml_value(self.law)}"]
        if self.constructor:
            lines.append(f"constructor = {_toml_value(self.constructor)}")
        for k, v in self.params.items():
            lines.append(f"{k} = {_toml_value(v)}")
        lines += ["", "[input]"]
        for k, v in input_cfg.items():
            lines.append(f"{k} = {_toml_value(v)}")
        return "\n".join(lines) + "\n"


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return repr(float(v))
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, (list, tuple, np.ndarray)):
        return "[" + ", ".join(_toml_value(x) for x in list(v)) + "]"
    raise ValueError(f"cannot write {type(v).__name__} value {v!r} to a scenario TOML")
