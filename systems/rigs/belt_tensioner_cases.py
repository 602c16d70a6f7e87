"""The belt–tensioner rig of Bastien et al. (2007), §4: scenario runner and plots
(``belt-tensioner-mdm``, ``belt-tensioner-masing``). The physics (parameters, static
initialisation eq. (51), the rig as an Assembly, the closed-form linear FRF,
:func:`~hystmech.systems.rigs.belt_tensioner.simulate_belt`) is in
:mod:`hystmech.systems.rigs.belt_tensioner`.
"""
from __future__ import annotations

import numpy as np

from ...components.base import ForceElement
from .belt_tensioner import FORCING, H_PAPER, RIG, T_START, paper_tensioner, simulate_belt


# -- scenario runner -------------------------------------------------------------------------
_PAPER_METRICS = {
    "mdm": {"max_rel_F_minus_T_over_T": 4.36e-3, "max_rel_F_minus_T_over_F": 4.34e-3},
    "masing": {"max_rel_F_minus_T_over_T": 4.42e-3, "max_rel_F_minus_T_over_F": 4.40e-3},
}


def _tensioner_from_config(tc: dict, Omega0: float) -> tuple[str, ForceElement]:
    tc = dict(tc)
    model = tc.pop("model", None)
    if model is None:
        if "type" not in tc:
            raise ValueError("tensioner.model must be 'mdm' or 'masing' (or give tensioner.type)")
        from ...runner_io import build_element

        el = build_element(tc)
        return el.name, el
    el = paper_tensioner(model, Omega0=Omega0)
    if tc:
        try:
            el = el.with_params(**tc)
        except TypeError as e:
            raise ValueError(f"tensioner: {e}") from None
    return str(model).lower(), el


def _known(table: dict, name: str, allowed) -> dict:
    table = dict(table or {})
    bad = [k for k in table if k not in allowed]
    if bad:
        raise ValueError(f"unknown key {bad[0]!r} in [{name}]; allowed: {', '.join(allowed)}")
    return table


def run(cfg: dict, out, progress):
    """Scenario runner ``belt-tensioner-*``: the rig to t_end with the paper's values,
    Figs. 17–20 of Bastien et al. (2007) and the F ≈ T check of eq. (58)."""
    from ...runner_io import ScenarioOutput

    rig = _known(cfg.get("rig"), "rig", RIG)
    frc = _known(cfg.get("forcing"), "forcing", FORCING)
    sol = _known(cfg.get("solver"), "solver", ("method", "h", "rtol", "t_end", "t0", "dt_out"))
    outc = _known(cfg.get("output"), "output", ("plot_window", "metric_window"))
    Omega0 = float(frc.get("Omega0", FORCING["Omega0"]))
    model, el = _tensioner_from_config(cfg.get("tensioner", {"model": "mdm"}), Omega0)
    method = sol.get("method", "projection" if el.kind == "inclusion" else "RK45")
    t_end = float(sol.get("t_end", 3.3))
    pw = [float(v) for v in outc.get("plot_window", [3.0, 3.3])]
    mw = [float(v) for v in outc.get("metric_window", [3.0, 3.15])]
    if len(pw) != 2 or len(mw) != 2 or not (pw[0] < pw[1] <= t_end) or not (mw[0] < mw[1] <= t_end):
        raise ValueError(f"output.plot_window and output.metric_window must be [start, end] "
                         f"within (t0, t_end = {t_end:g}]")
    progress(0.0, f"belt rig with {el.name}, method {method}, to t = {t_end:g} s")
    res = simulate_belt(el, t_end=t_end, t0=float(sol.get("t0", T_START)), method=method,
                        h=float(sol.get("h", H_PAPER)), rtol=float(sol.get("rtol", 1e-8)),
                        dt_out=float(sol.get("dt_out", 1e-5)),
                        record_from=min(pw[0], mw[0]), **rig, **frc)
    progress(1.0, "done")
    # (after the run: `hystmech run` imports pyplot meanwhile, core/scenario.py)
    import matplotlib.pyplot as plt

    t, T, F = res.t, res.T, res.F
    m = (t >= mw[0] - 1e-12) & (t <= mw[1] + 1e-12)
    p = (t >= pw[0] - 1e-12) & (t <= pw[1] + 1e-12)
    metrics = {
        "max_rel_F_minus_T_over_T": float(np.max(np.abs((F[m] - T[m]) / T[m]))),
        "max_rel_F_minus_T_over_F": float(np.max(np.abs((F[m] - T[m]) / F[m]))),
        "T_min": float(T[p].min()), "T_max": float(T[p].max()),
        "u1_min": float(res.u1[p].min()), "u1_max": float(res.u1[p].max()),
        "u2_min": float(res.u2[p].min()), "u2_max": float(res.u2[p].max()),
    }
    figs = {}
    for stem, y, lab in (("fig17_tension", T, "T [N]"), ("fig18_u1", res.u1, "u1 [m]"),
                         ("fig19_u2", res.u2, "u2 [m]")):
        fig, ax = plt.subplots(figsize=(7, 3.5))
        ax.plot(t[p], y[p], lw=1.0)
        if stem == "fig17_tension":
            ax.plot(t[p], F[p], "--", lw=0.8, label="F (tensioner)")
            ax.legend(["T (belt)", "F (tensioner)"])
        ax.set_xlabel("t [s]")
        ax.set_ylabel(lab)
        ax.set_title(f"{el.name}: {lab.split()[0]} against time (Bastien et al. 2007, "
                     f"Fig. {stem[3:5]})", fontsize=9)
        ax.grid(alpha=0.3)
        figs[stem] = fig
    fig, ax = plt.subplots(figsize=(5, 4))
    ax.plot(res.u2[p], F[p], lw=1.0)
    ax.set_xlabel("u2 [m]")
    ax.set_ylabel("F [N]")
    ax.set_title(f"{el.name}: F against u2 (Bastien et al. 2007, Fig. 20)", fontsize=9)
    ax.grid(alpha=0.3)
    figs["fig20_force_deflection"] = fig
    info = {k: v for k, v in res.info.items() if k not in ("final_state", "state_names")}
    summary = {"element": repr(el), "static_init": {k: info[k] for k in ("T0", "F_t0", "preload",
                                                                          "f_t0")},
               "solver": {k: info[k] for k in ("method", "n_steps", "h", "rtol", "dt_out")
                          if k in info},
               "metrics": metrics, "paper": _PAPER_METRICS.get(model, {})}
    ts = {k: v[p] for k, v in res.signals().items()}
    return ScenarioOutput(summary=summary, timeseries=ts, figures=figs)
