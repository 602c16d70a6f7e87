"""Predicted versus measured: simulate a scenario's element with a measured input and
compare its force with the measured one."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from . import metrics
from .dataset import Dataset


def compare_arrays(ds: Dataset, predicted) -> dict:
    """Figures of merit of a predicted force history against ds.force: RMSE [N], NRMSE
    (RMSE / measured range), max error [N], R², phase lag [s] (cross-correlation), and the
    energy dissipated per displacement cycle ∮F du [J], measured and predicted, with the
    relative error of its mean (loop-area error)."""
    from ..scenario import check_finite_outputs

    pred = np.asarray(predicted, dtype=float)
    if pred.shape != ds.force.shape:
        raise ValueError(f"prediction has {pred.size} samples, the measurement {ds.force.size}")
    ds.check_usable("a comparison")
    check_finite_outputs({"t": ds.t, "F_predicted": pred})
    if float(np.max(np.abs(pred))) > 1e150:
        from ..runner_io import NonFiniteResult

        i = int(np.argmax(np.abs(pred) > 1e150))
        raise NonFiniteResult(f"the predicted force reaches {pred[i]:.3g} N at t = "
                              f"{ds.t[i]:.6g} s (sample {i}): too large to compare")
    out = metrics.summary(ds.t, ds.force, pred)
    cyc = ds.cycles()
    if cyc:
        idx = []
        for c in cyc:
            i0 = int(np.searchsorted(ds.t, c.t[0]))
            idx.append((i0, i0 + c.t.size - 1))
        Em = metrics.cycle_energies(ds.u, ds.force, idx)
        Ep = metrics.cycle_energies(ds.u, pred, idx)
        # a loop area below 1e-9 of the u-range x F-range rectangle is no loop: the
        # relative error of its area is undefined (would be rounding noise / 0)
        scale = float(np.ptp(ds.u)) * float(np.ptp(ds.force))
        area_ok = abs(Em.mean()) > 1e-9 * scale
        out.update(n_cycles=len(idx), energy_per_cycle_measured=Em.tolist(),
                   energy_per_cycle_predicted=Ep.tolist(),
                   loop_area_error=float((Ep.mean() - Em.mean()) / Em.mean()) if area_ok else None)
    else:
        out.update(n_cycles=0, loop_area_error=None)
    return out


def overlay_figures(ds: Dataset, predicted, title: str = "") -> dict:
    """Matplotlib figures: force time histories and force-displacement loops, measured
    and predicted."""
    import matplotlib.pyplot as plt

    figs = {}
    fig, ax = plt.subplots(2, 1, figsize=(10, 6), sharex=True)
    ax[0].plot(ds.t, ds.force, lw=0.7, label="measured")
    ax[0].plot(ds.t, predicted, lw=0.7, ls="--", label="predicted")
    ax[0].set_ylabel("F [N]")
    ax[0].legend(loc="best")
    ax[1].plot(ds.t, np.asarray(predicted) - ds.force, lw=0.6, color="C3")
    ax[1].set_ylabel("error [N]")
    ax[1].set_xlabel("t [s]")
    fig.suptitle(title)
    figs["time_history"] = fig
    fig, ax = plt.subplots(figsize=(6, 5))
    ax.plot(ds.u, ds.force, lw=0.7, label="measured")
    ax.plot(ds.u, predicted, lw=0.7, ls="--", label="predicted")
    ax.set_xlabel("u [m]")
    ax.set_ylabel("F [N]")
    ax.legend(loc="best")
    ax.set_title(title)
    figs["loops"] = fig
    return figs


def compare(ds: Dataset, scenario, out=None, *, use_velocity: bool = False) -> dict:
    """Simulate the [element] of a scenario (name, TOML path or config dict) with the
    measured displacement of ds (and measured velocity if use_velocity) and compare.

    Writes, when ``out`` is given, summary.json (metrics of :func:`compare_arrays`),
    timeseries.csv (t, u, F measured, F predicted) and PNG overlays, all atomically.
    Returns the summary dict.
    """
    from ..drive import drive
    from ..runner_io import ScenarioError, build_element, jsonable
    from ..safeio import atomic_write
    from ..scenario import load_scenario, save_figure, write_timeseries

    cfg = scenario if isinstance(scenario, dict) else load_scenario(scenario)
    ds.check_usable("a comparison")
    if "element" not in cfg:
        raise ScenarioError(f"scenario {cfg.get('name', '?')!r} has no [element] table to "
                            "simulate with the measured input")
    el = build_element(cfg["element"])
    x0 = None
    res = drive(el, ds.t, ds.u, ds.v if use_velocity else None, x0=x0)
    pred = res.force
    summary = {"scenario": cfg.get("name", ""), "element": repr(el), "measured": ds.source,
               "n_samples": int(len(ds)), "metrics": compare_arrays(ds, pred)}
    _check_finite_metrics(summary["metrics"], "comparison")
    if out is not None:
        import matplotlib

        from ..scenario import prepare_out_dir

        matplotlib.use("Agg")
        out = prepare_out_dir(out)
        figs = overlay_figures(ds, pred, title=f"{el.name} vs {Path(ds.source).name or 'measured'}")
        write_timeseries(out / "timeseries.csv", {"t": ds.t, "u": ds.u, "F_measured": ds.force,
                                                  "F_predicted": pred})
        for stem, fig in figs.items():
            save_figure(fig, out / f"{stem}.png")
        atomic_write(out / "summary.json", json.dumps(jsonable(summary), indent=2))
    return summary


def _check_finite_metrics(m: dict, what: str) -> None:
    """NonFiniteResult if a scalar figure of merit is NaN/inf (R² of a constant record is
    caught before; here only what overflowed despite the checks)."""
    import math

    from ..runner_io import NonFiniteResult

    for k, v in m.items():
        if isinstance(v, float) and not math.isfinite(v):
            raise NonFiniteResult(f"the {what} figure {k} = {v} is not finite; nothing was written")
