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


def overlay_figures(ds: Dataset, predicted, title: str = "", band=None) -> dict:
    """Matplotlib figures: force time histories (with the 95 % band of the prediction
    when ``band`` = its standard deviation [N] is given), force-displacement loops,
    and the residual's autocorrelation (with the ±2.58/√n white-noise bounds) and
    power spectrum (Welch)."""
    import matplotlib.pyplot as plt

    figs = {}
    fig, ax = plt.subplots(2, 1, figsize=(10, 6), sharex=True)
    ax[0].plot(ds.t, ds.force, lw=0.7, label="measured")
    ax[0].plot(ds.t, predicted, lw=0.7, ls="--", label="predicted")
    if band is not None:
        ax[0].fill_between(ds.t, predicted - 1.96 * band, predicted + 1.96 * band, color="C1",
                           alpha=0.3, lw=0, label="95 % band (parameter covariance)")
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
    figs["residuals"] = residual_figure(ds.t, ds.force - np.asarray(predicted), title)
    return figs


def residual_figure(t, e, title: str = ""):
    """Autocorrelation of the residual e with the 99 % bounds of white noise, and its
    power spectral density (scipy.signal.welch on the uniform resampling)."""
    import matplotlib.pyplot as plt
    from scipy.signal import welch

    from .uncertainty import ljung_box

    e = np.asarray(e, float)
    n = e.size
    L = int(min(n - 1, max(20, n // 20)))
    lb = ljung_box(e, min(20, n // 5))
    acf = _acf(e, L)
    fig, ax = plt.subplots(1, 2, figsize=(11, 4))
    ax[0].vlines(np.arange(L + 1), 0, acf, lw=0.8)
    ax[0].axhspan(-2.58 / np.sqrt(n), 2.58 / np.sqrt(n), color="C2", alpha=0.25,
                  label="99 % bound, white noise")
    ax[0].set_xlabel("lag [samples]")
    ax[0].set_ylabel("residual autocorrelation")
    ax[0].set_title(f"Ljung-Box p = {lb['p_value']:.2g}")
    ax[0].legend(loc="upper right")
    t = np.asarray(t, float)
    fs = (n - 1) / (t[-1] - t[0])
    eu = np.interp(t[0] + np.arange(n) / fs, t, e)
    f, P = welch(eu, fs=fs, nperseg=min(n, 1024))
    ax[1].semilogy(f[1:], P[1:], lw=0.8)
    ax[1].set_xlabel("f [Hz]")
    ax[1].set_ylabel("residual PSD [N²/Hz]")
    fig.suptitle(title)
    return fig


def _acf(e, L):
    from .uncertainty import _acf as acf

    return acf(e, L)


def align_force(ds: Dataset, predicted, max_lag: float | None = None):
    """The force channel's delay τ [s] relative to the prediction from the displacement
    (cross-correlation peak, :func:`~hystmech.identify.metrics.phase_lag`), and ds with
    the force moved back by τ (linear interpolation; samples whose shifted time leaves
    the record are cut). τ > 0: the force was recorded late (e.g. a filter or a
    sample-and-hold skew between the channels)."""
    tau = -metrics.phase_lag(ds.t, ds.force, predicted, max_lag=max_lag)
    keep = (ds.t + tau >= ds.t[0]) & (ds.t + tau <= ds.t[-1])
    sub = ds._take(keep)
    sub.force = np.interp(sub.t + tau, ds.t, ds.force)
    return tau, sub


def prediction_band(element_params: dict, law: str, names, cov, ds: Dataset, use_velocity=False,
                    rel_step: float = 1e-6):
    """Standard deviation [N] of the predicted force from the covariance ``cov`` of the
    fitted parameters ``names`` (linear propagation: s_t² = g_t C g_tᵀ, g_t = ∂F_t/∂θ by
    central differences of the driven element)."""
    from ..components import get_element_class
    from ..drive import drive

    cls = get_element_class(law)
    cov = np.asarray(cov, float)
    G = []
    for k in names:
        base, _, idx = k.partition("[")
        cols = []
        for sgn in (1, -1):
            p = {kk: (np.array(v, float) if isinstance(v, list) else v)
                 for kk, v in element_params.items()}
            if idx:
                i = int(idx[:-1])
                h = rel_step * max(abs(p[base][i]), 1e-12)
                p[base] = p[base].copy()
                p[base][i] += sgn * h
            else:
                h = rel_step * max(abs(p[base]), 1e-12)
                p[base] = p[base] + sgn * h
            cols.append(drive(cls(**p), ds.t, ds.u, ds.v if use_velocity else None).force)
        G.append((cols[0] - cols[1]) / (2 * h))
    G = np.column_stack(G)
    return np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", G, cov, G), 0.0))


def compare(ds: Dataset, scenario, out=None, *, use_velocity: bool = False,
            align: bool = False, fit=None) -> dict:
    """Simulate the [element] of a scenario (name, TOML path or config dict) with the
    measured displacement of ds (and measured velocity if use_velocity) and compare.

    align: estimate the force channel's delay relative to the displacement by
    cross-correlation with the prediction, move the force back by it and compare on
    the overlap (the delay is reported as ``alignment.force_delay_s``). fit: the
    summary.json of ``hystmech identify`` (path or dict with law, params and
    uncertainty.cov/names) whose parameter covariance gives a 95 % band of the
    prediction (reported as its mean half-width and the share of measured samples
    inside it). Writes, when ``out`` is given, summary.json (metrics of
    :func:`compare_arrays`), timeseries.csv (t, u, F measured, F predicted[, its
    standard deviation]) and PNG overlays (time history, loops, residual
    autocorrelation and spectrum), all atomically. Returns the summary dict.
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
    alignment = None
    if align:
        tau, ds = align_force(ds, pred)
        pred = drive(el, ds.t, ds.u, ds.v if use_velocity else None, x0=x0).force
        alignment = {"force_delay_s": float(tau), "n_samples_kept": int(len(ds))}
    band = None
    if fit is not None:
        f = json.loads(Path(fit).read_text()) if not isinstance(fit, dict) else fit
        unc = f.get("uncertainty") or {}
        if "cov" not in unc:
            raise ValueError("fit has no parameter covariance (uncertainty.cov): give the "
                             "summary.json of a hystmech identify run")
        band = prediction_band(f["params"], f["law"], unc["names"], unc["cov"], ds,
                               use_velocity)
    summary = {"scenario": cfg.get("name", ""), "element": repr(el), "measured": ds.source,
               "n_samples": int(len(ds)), "metrics": compare_arrays(ds, pred)}
    if alignment is not None:
        summary["alignment"] = alignment
    if band is not None:
        inside = np.abs(ds.force - pred) <= 1.96 * band
        summary["band"] = {"mean_half_width_95": float(np.mean(1.96 * band)),
                           "share_of_samples_inside": float(np.mean(inside))}
    _check_finite_metrics(summary["metrics"], "comparison")
    if out is not None:
        import matplotlib

        from ..scenario import prepare_out_dir

        matplotlib.use("Agg")
        out = prepare_out_dir(out)
        figs = overlay_figures(ds, pred, title=f"{el.name} vs {Path(ds.source).name or 'measured'}",
                               band=band)
        cols = {"t": ds.t, "u": ds.u, "F_measured": ds.force, "F_predicted": pred}
        if band is not None:
            cols["F_predicted_sd"] = band
        write_timeseries(out / "timeseries.csv", cols)
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
