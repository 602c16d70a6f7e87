"""The Noël & Schoukens (2016) Bouc-Wen benchmark identified by output error.

    m ÿ + c ẏ + k y + z = u,   ż = α ẏ − β (γ |ẏ| |z|^(ν−1) z + δ ẏ |z|^ν)

(J.P. Noël & M. Schoukens, *Hysteretic benchmark with a dynamic nonlinearity*,
Workshop on Nonlinear System Identification Benchmarks, 2016; true values m = 2 kg,
c = 10 N s/m, k = 5e4 N/m, α = 5e4 N/m, β = 1e3, γ = 0.8, δ = −1.1, ν = 1). In
hystmech's Bouc-Wen form (components/bouc_wen.py) z is BoucWen(A = α, beta = β·γ,
gamma = β·δ, n = ν): only the products β·γ and β·δ are determined by any data (β
scales both), so those are the parameters fitted and reported ("beta_gamma",
"beta_delta").

Data: scenarios/data/noel_schoukens.npz, made by benchmarks/gen_noel_schoukens_data.py
(its docstring: the benchmark's own input recipe, an independent integrator): training
10 multisine periods of 8192 samples at 750 Hz with 8e-6 m output noise; tests a
multisine (2 periods from rest, the second scored) and the 40 N 20 → 50 Hz sine sweep.
:func:`fit` identifies the model from the training record alone
(:func:`hystmech.identify.assembly.fit_assembly`); :func:`test_rmse` simulates the
fitted model on the test inputs.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from ..limits import capped

TRUE = {"y.m": 2.0, "damper.c": 10.0, "spring.k": 5e4, "hysteresis.A": 5e4,
        "hysteresis.beta": 800.0, "hysteresis.gamma": -1100.0, "hysteresis.n": 1.0}
LABELS = {"y.m": "m [kg]", "damper.c": "c [N s/m]", "spring.k": "k [N/m]",
          "hysteresis.A": "alpha [N/m]", "hysteresis.beta": "beta*gamma [1/m]",
          "hysteresis.gamma": "beta*delta [1/m]", "hysteresis.n": "nu [-]"}
FREE = ("y.m", "damper.c", "spring.k", "hysteresis.A", "hysteresis.beta", "hysteresis.gamma")
# the start of the fit: every parameter 25-50 % off its true value
START = {"y.m": 1.5, "damper.c": 15.0, "spring.k": 3.5e4, "hysteresis.A": 7e4,
         "hysteresis.beta": 500.0, "hysteresis.gamma": -600.0, "hysteresis.n": 1.0}


def load(path=None) -> dict:
    """The benchmark's records {name: array} (see the module docstring)."""
    from importlib import resources

    if path is None:
        p = resources.files("hystmech.scenarios").joinpath("data/noel_schoukens.npz")
        path = Path(str(p))
    with np.load(path) as z:
        return {k: np.asarray(z[k], float) for k in z.files}


def assembly(p: dict | None = None):
    """The benchmark's model as an Assembly: DOF "y", "spring", "damper", Bouc-Wen
    element "hysteresis" to ground, force "u" (its samples come with each experiment)."""
    from ..components.bouc_wen import BoucWen
    from ..systems.assembly import GROUND, Assembly

    q = {**TRUE, **(p or {})}
    a = Assembly()
    a.add_dof("y", mass=q["y.m"])
    a.add_spring("y", GROUND, k=q["spring.k"], name="spring")
    a.add_damper("y", GROUND, c=q["damper.c"], name="damper")
    a.add_element("hysteresis", BoucWen(A=q["hysteresis.A"], beta=q["hysteresis.beta"],
                                        gamma=q["hysteresis.gamma"], n=q["hysteresis.n"]),
                  "y", GROUND)
    a.add_force("y", 0.0, name="u")
    return a


def experiment(u, y, fs, how, sigma, substeps, name):
    from .assembly import Experiment

    return Experiment(dt=1.0 / fs, inputs={"u": u}, outputs={"y.x": y}, sigma=sigma,
                      interpolation=how, substeps=substeps, name=name)


def fit(data: dict | None = None, *, periods: int = 10, free=FREE, start=None,
        substeps: int = 6, starts: int = 0, progress=None):
    """Fit the free parameters to the first ``periods`` training periods (from rest);
    returns the :class:`~hystmech.identify.assembly.AssemblyFit`."""
    from .assembly import fit_assembly

    d = load() if data is None else data
    fs, N = float(d["fs"]), int(d["period"])
    if not 1 <= periods <= d["train_u"].size // N:
        raise ValueError(f"periods must be in [1, {d['train_u'].size // N}] (got {periods!r})")
    n = periods * N
    x = experiment(d["train_u"][:n], d["train_y"][:n], fs, "fourier", float(d["noise_rms"]),
                   substeps, "train")
    s = {**START, **(start or {})}
    asm = assembly(s)
    box = {"y.m": (1e-6, np.inf), "damper.c": (0.0, np.inf), "spring.k": (0.0, np.inf),
           "hysteresis.A": (1e-6, np.inf), "hysteresis.beta": (-np.inf, np.inf),
           "hysteresis.gamma": (-np.inf, np.inf), "hysteresis.n": (0.2, 3.0)}
    bounds = {k: box[k] for k in free}
    return fit_assembly(asm, list(free), [x], bounds=bounds, starts=starts, progress=progress)


def simulate_test(fitres, data: dict, substeps: int = 6) -> dict:
    """{test name: (model output, clean output, noisy output, scored slice)}."""
    fs, N = float(data["fs"]), int(data["period"])
    prob = fitres.problem
    out = {}
    for name, how, sl in (("test_multisine", "fourier", slice(N, 2 * N)),
                          ("test_sweep", "cubic", slice(0, None))):
        u, y = data[f"{name}_u"], data[f"{name}_y"]
        x = experiment(u, y, fs, how, 1.0, substeps, name)
        Y, _ = prob.simulate(fitres.theta, x=x)
        out[name] = (Y[:, 0], data[f"{name}_y_clean"], y, sl)
    return out


def rmse(sim: dict) -> dict:
    """{name: (RMSE vs the noisy test output, RMSE vs the clean one)} [m]."""
    r = {}
    for k, (ym, yc, yn, sl) in sim.items():
        r[k] = (float(np.sqrt(np.mean((ym[sl] - yn[sl]) ** 2))),
                float(np.sqrt(np.mean((ym[sl] - yc[sl]) ** 2))))
    return r


def table(fitres) -> list:
    """Rows (label, true, fitted, SE, 95 % lo, 95 % hi, inside) of the fit."""
    ci = fitres.intervals()
    se = fitres.uncertainty.stderr() if fitres.uncertainty is not None else {}
    rows = []
    for k, v in fitres.values.items():
        lo, hi = ci.get(k, (np.nan, np.nan))
        rows.append((LABELS.get(k, k), TRUE[k], v, se.get(k, np.nan), lo, hi,
                     bool(lo <= TRUE[k] <= hi)))
    return rows


def run(cfg: dict, out: Path, progress):
    """Scenario runner ``noel-schoukens-identification``: fit from the training data,
    the parameter table with 95 % intervals (CSV, JSON), test RMSEs and plots."""
    import matplotlib.pyplot as plt

    from ..runner_io import ScenarioOutput

    c = dict(cfg.get("fit", {}))
    # a work-limited run (hystmech run --max-work N) fits on its first N training
    # periods (at least 2: one period leaves k and the hysteresis weakly separated)
    periods = capped(int(c.get("periods", 10)), least=2)
    substeps = int(c.get("substeps", 6))
    free = tuple(c.get("free", FREE))
    unknown = [k for k in free if k not in TRUE]
    if unknown:
        raise ValueError(f"fit.free: unknown parameter(s) {unknown}; allowed: {', '.join(TRUE)}")
    start = {k: float(v) for k, v in dict(cfg.get("start", {})).items()}
    progress(0.0, "loading the benchmark data")
    data = load()
    progress(0.05, f"fitting {len(free)} parameters to {periods} training periods")
    t0 = time.process_time()
    res = fit(data, periods=periods, free=free, start=start, substeps=substeps,
              starts=int(c.get("starts", 0)),
              progress=lambda f, msg: progress(0.05 + 0.75 * f, msg))
    cpu = time.process_time() - t0
    progress(0.8, "simulating the test inputs")
    sim = simulate_test(res, data, substeps)
    err = rmse(sim)
    rows = table(res)
    csv = "parameter,true,fitted,se,ci95_lo,ci95_hi,true_inside\n" + "".join(
        ",".join([r[0]] + [f"{v:.10g}" for v in r[1:6]] + [str(r[6])]) + "\n" for r in rows)
    summary = {"metrics": {"fit_cpu_s": cpu,
                           **{f"test_rmse_m_{k}": v[0] for k, v in err.items()},
                           **{f"test_rmse_vs_clean_m_{k}": v[1] for k, v in err.items()}},
               "fit_cpu_s": cpu, "periods": periods, "substeps": substeps,
               "nfev": res.nfev, "njev": res.njev,
               "test_rmse_m": {k: v[0] for k, v in err.items()},
               "test_rmse_vs_clean_m": {k: v[1] for k, v in err.items()},
               "noise_rms_m": float(data["noise_rms"]),
               "parameters": [dict(zip(("name", "true", "fitted", "se", "lo", "hi", "inside"), r))
                              for r in rows],
               "warnings": list(getattr(res.uncertainty, "warnings", []) or [])}
    fs = float(data["fs"])
    fig, axs = plt.subplots(3, 1, figsize=(9, 9))
    for ax, (k, (ym, yc, yn, sl)) in zip(axs[:2], sim.items()):
        t = np.arange(ym.size) / fs
        ax.plot(t[sl], yn[sl] * 1e3, lw=0.5, label="measured (noisy)")
        ax.plot(t[sl], (ym[sl] - yn[sl]) * 1e3, lw=0.5, label="model − measured")
        ax.set(xlabel="t [s]", ylabel="y [mm]",
               title=f"{k}: RMSE {err[k][0]:.3g} m (noise {float(data['noise_rms']):.2g} m)")
        ax.legend(loc="upper right", fontsize=7)
    lab = [r[0] for r in rows]
    rel = [(r[2] / r[1] - 1) * 100 for r in rows]
    e = [[(r[2] - r[4]) / abs(r[1]) * 100 for r in rows],
         [(r[5] - r[2]) / abs(r[1]) * 100 for r in rows]]
    axs[2].errorbar(range(len(rows)), rel, yerr=e, fmt="o", capsize=4)
    axs[2].axhline(0, color="k", lw=0.5)
    axs[2].set_xticks(range(len(rows)), lab, fontsize=7)
    axs[2].set(ylabel="fitted / true − 1 [%]", title="parameters with 95 % intervals")
    fig.tight_layout()
    progress(1.0, "done")
    return ScenarioOutput(summary=summary, figures={"noel_schoukens_identification": fig},
                          files={"parameters.csv": csv})
