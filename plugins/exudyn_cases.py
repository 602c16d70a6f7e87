"""Scenario runner ``exudyn-belt-tensioner``: the belt–tensioner–mass rig of Bastien,
Michon, Manin & Dufour (2007), eqs. (38)-(51), built in Exudyn from hystmech's
``belt_assembly`` with the paper's identified tensioner as a hystmech element
(trial/commit, RK44), against hystmech's own rig (``simulate_belt``)."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np


def run_belt_tensioner(cfg: dict, out: Path, progress):
    from ..runner_io import ScenarioError, ScenarioOutput
    from ..systems import simulate
    from ..systems.rigs import belt_assembly, paper_tensioner, simulate_belt
    from . import exudyn as hex

    tc = cfg.get("tensioner", {}); rc = cfg.get("run", {})
    model = str(tc.get("model", "mdm"))
    if model not in ("mdm", "masing"):
        raise ScenarioError(f"tensioner.model must be 'mdm' or 'masing' (got {model!r})")
    h = float(rc.get("h", 1e-5)); T = float(rc.get("t_end", 0.5)); t0 = 1.6e-3
    if not (0 < h <= 1e-4):
        raise ScenarioError(f"run.h must be in (0, 1e-4] s (got {h})")
    if not (t0 < T <= 10.0):
        raise ScenarioError(f"run.t_end must be in ({t0}, 10] s (got {T})")
    el = paper_tensioner(model)
    a, info = belt_assembly(el, t0=t0)
    progress(0.05, f"Exudyn RK44, {int(round((T - t0) / h))} steps")
    w0 = time.perf_counter()
    SC, mbs, nodes = hex.from_assembly(a)
    t, X, V = hex.simulate(SC, mbs, T, h, t_start=t0, record=[nodes["m1"], nodes["m2"]])
    wall = time.perf_counter() - w0
    progress(0.6, "hystmech rig")
    every = max(1, t.size // 5000)
    t, X, V = t[::every], X[::every], V[::every]
    K = next(s.k for s in a.springs if s.name == "belt")
    C = next(d.c for d in a.dampers if d.name == "belt_damping")
    Tb = K * (X[:, 0] - X[:, 1]) + C * (V[:, 0] - V[:, 1]) + info["T0"]   # eq. (38a)
    # hystmech's tight reference: compiled RK45 (smooth modified Dahl) or the
    # event-driven solver (Masing) on the same Assembly; and the paper's rig solver
    te = t[1:]
    if el.kind == "smooth":
        r = simulate(a, (t0, T), method="RK45", t_eval=te, rtol=1e-11, atol=1e-14, energy=False)
        rb = simulate_belt(el, t_end=T, t0=t0, method="rk45", rtol=1e-10)
    else:
        r = simulate(a, (t0, T), method="event", t_eval=te, energy=False)
        rb = simulate_belt(el, t_end=T, t0=t0, method="projection", h=1e-5)
    err = {d: float(np.max(np.abs(X[1:, j] - r.x(d))) / np.max(np.abs(r.x(d))))
           for j, d in enumerate(("m1", "m2"))}
    u2b = np.interp(t, rb.t, rb.u2)
    progress(0.9, "figures")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(1, 2, figsize=(12, 4))
    ax[0].plot(t, X[:, 1] * 1e3, lw=0.8, label="Exudyn + hystmech tensioner")
    ax[0].plot(rb.t, rb.u2 * 1e3, "--", lw=0.7, label=f"hystmech rig ({'rk45' if el.kind == 'smooth' else 'projection'})")
    ax[0].set_xlabel("t [s]"); ax[0].set_ylabel("u2 [mm]"); ax[0].legend()
    ax[1].plot(t, Tb, lw=0.8, label="Exudyn"); ax[1].plot(rb.t, rb.T, "--", lw=0.7, label="hystmech")
    ax[1].set_xlabel("t [s]"); ax[1].set_ylabel("belt tension T [N]"); ax[1].legend()
    fig.suptitle(cfg.get("title", "belt tensioner in Exudyn"))
    win = t >= min(0.5 * T, T - 0.1)
    metrics = {"tensioner": model, "steps": int(round((T - t0) / h)),
               "exudyn_wall_s": wall,
               "max_rel_error_u1_vs_assembly": err["m1"],
               "max_rel_error_u2_vs_assembly": err["m2"],
               "max_rel_diff_u2_vs_simulate_belt": float(np.max(np.abs(X[:, 1] - u2b))
                                                         / np.max(np.abs(u2b))),
               "T_amplitude_exudyn_N": float(np.ptp(Tb[win])),
               "T_amplitude_hystmech_N": float(np.ptp(np.interp(t[win], rb.t, rb.T))),
               "T0_N": info["T0"]}
    return ScenarioOutput(summary={"tensioner": repr(el), "metrics": metrics},
                          timeseries={"t": t, "u1": X[:, 0], "u2": X[:, 1], "T": Tb,
                                      "u2_hystmech": u2b},
                          figures={"belt_exudyn": fig})


# declared for `hystmech run` (entry point hystmech.runners, see pyproject.toml)
def _schema():
    from ..schema import REAL, Str, Table

    return {"tensioner": Table({"model": Str("mdm", "masing")}),
            "run": Table({"h": REAL, "t_end": REAL})}


def _work(cfg):
    rc = cfg.get("run", {}) if isinstance(cfg.get("run", {}), dict) else {}
    h, T = float(rc.get("h", 1e-5)), float(rc.get("t_end", 0.5))
    if not (h > 0 and T > 0):
        return {}
    return {"steps": (T / h, f"run.h = {h:g} s over {T:g} s is {T / h:.3g} Exudyn steps")}


run_belt_tensioner.SCHEMA = _schema()
run_belt_tensioner.WORK = _work
