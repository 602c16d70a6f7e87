"""Scenario runner: viscous + Dahl and Bouc-Wen models of the Dyke (1996) MR damper,
fitted on one measured file and validated on another (NRMSE of the force)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..runner_io import ScenarioOutput
from . import metrics
from .bouc_wen import fit_bouc_wen_damper, predict_bouc_wen_damper
from .dataset import dyke_data_dir, load_dyke
from .viscous_dahl import fit_voltage_viscous_dahl, predict_voltage_viscous_dahl


def _resolve(name: str) -> Path:
    p = Path(name)
    return p if p.is_absolute() or p.exists() else dyke_data_dir() / name


def run(cfg: dict, out: Path, progress) -> ScenarioOutput:
    """[data] fit, validate (file names in the data directory or paths), t_max (optional
    cut of both records [s], for quick runs), decimate_bouc_wen (fit on every k-th
    sample). Fits :func:`fit_voltage_viscous_dahl` and :func:`fit_bouc_wen_damper` and
    reports NRMSE, R², RMSE on both files; figure: overlay on the validation file."""
    import matplotlib.pyplot as plt

    data = dict(cfg.get("data", {}))
    fit_ds = load_dyke(_resolve(data.get("fit", "ranran_50.csv")))
    val_ds = load_dyke(_resolve(data.get("validate", "ransim_u.csv")))
    if "t_max" in data:
        fit_ds = fit_ds.window(None, float(data["t_max"]))
        val_ds = val_ds.window(None, float(data["t_max"]))
    progress(0.05, "fitting viscous + Dahl (κx, κw linear in the voltage)")
    vd = fit_voltage_viscous_dahl(fit_ds)
    p_vd = predict_voltage_viscous_dahl(vd.params, val_ds)
    progress(0.35, "fitting Bouc-Wen")
    bw = fit_bouc_wen_damper(fit_ds, decimate=int(data.get("decimate_bouc_wen", 3)),
                             n_starts=int(data.get("n_starts", 3)))
    p_bw = predict_bouc_wen_damper(bw.params, val_ds)
    progress(0.95, "validating")
    m = {}
    for name, r, p in (("viscous_dahl", vd, p_vd), ("bouc_wen", bw, p_bw)):
        m[f"{name}_nrmse_validation"] = metrics.nrmse(val_ds.force, p)
        m[f"{name}_r2_validation"] = metrics.r2(val_ds.force, p)
        m[f"{name}_rmse_validation_N"] = metrics.rmse(val_ds.force, p)
        m[f"{name}_nrmse_fit"] = r.merit["nrmse"]
    fig, ax = plt.subplots(2, 1, figsize=(11, 7))
    ax[0].plot(val_ds.t, val_ds.force, lw=0.6, color="k", label="measured (ransim_u)")
    ax[0].plot(val_ds.t, p_vd, lw=0.6, label=f"viscous + Dahl(V), NRMSE {100 * m['viscous_dahl_nrmse_validation']:.2f} %")
    ax[0].plot(val_ds.t, p_bw, lw=0.6, ls="--", label=f"Bouc-Wen(V), NRMSE {100 * m['bouc_wen_nrmse_validation']:.2f} %")
    ax[0].set_xlabel("t [s]")
    ax[0].set_ylabel("F [N]")
    ax[0].legend(loc="upper right", fontsize=8)
    k = (val_ds.t >= 2.0) & (val_ds.t <= 4.0)
    ax[1].plot(val_ds.t[k], val_ds.force[k], color="k", lw=0.8, label="measured")
    ax[1].plot(val_ds.t[k], p_vd[k], lw=0.8, label="viscous + Dahl(V)")
    ax[1].plot(val_ds.t[k], p_bw[k], lw=0.8, ls="--", label="Bouc-Wen(V)")
    ax[1].set_xlabel("t [s] (zoom)")
    ax[1].set_ylabel("F [N]")
    fig.suptitle("Dyke (1996) MR damper: fitted on ranran_50, validated on ransim_u")
    summary = {"metrics": m, "viscous_dahl": vd.params, "bouc_wen": bw.params,
               "fit_file": fit_ds.source, "validation_file": val_ds.source}
    progress(1.0, "done")
    return ScenarioOutput(summary=summary, figures={"validation_overlay": fig},
                          timeseries={"t": val_ds.t, "F_measured": val_ds.force,
                                      "F_viscous_dahl": p_vd, "F_bouc_wen": p_bw})
