"""The belt–tensioner rig of Bastien et al. (2007), §4, with its tensioner as an FMU:

(a) co-simulation: the exported modified Dahl FMU as a co-simulation element stepped at
    communication step H by the rig's projection loop (eq. (A.9), masses explicit over
    the step with the tensioner force held; the FMU receives u2(t) = u2_k + v2_k·(t − t_k)
    and advances its own state inside fmi2DoStep);
(b) model exchange: the FMU's state joined to the rig state, integrated monolithically
    by the rig's compiled Dormand–Prince (rk45) with the FMU's derivatives;
against the monolithic native simulation. All three runs are
``hystmech.systems.rigs.belt_tensioner.simulate_belt``: the FMU elements' kernels are
compiled calls into the FMU binary (fmu/native.py).
Scenario ``belt-tensioner-cosim``: ``run(cfg, out, progress)``.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ..systems.rigs.belt_tensioner import FORCING, MDM_PARAMS, RIG, T_START, static_init


def _rig(rig: dict | None):
    r = dict(RIG)
    r.update(FORCING)
    r.update(rig or {})
    return r


def _init(el, r, t0):
    f_t0 = r["f0"] + r["f1"] * math.cos(r["Omega0"] * t0 + r["phi"])
    return static_init(el, t0=t0, m1=r["m1"], m2=r["m2"], g=r["g"], f_t0=f_t0)


def tensioner_fmu(path, *, t0: float = T_START, rig: dict | None = None, fmi_version=2):
    """Export the identified modified Dahl tensioner (eqs. (33)-(35)) with its initial
    force F(t0) from the static initialisation, eq. (51). Returns the FMU path."""
    from ..components.modified_dahl import ModifiedDahl
    from .export import export_fmu

    r = _rig(rig)
    probe = ModifiedDahl(**MDM_PARAMS)
    _, _, F_t0, _ = _init(probe, r, t0)
    return export_fmu(ModifiedDahl(**MDM_PARAMS, F0=F_t0), path, fmi_version=fmi_version)


def _window_stats(t, T, t_from):
    m = t >= t_from - 1e-12
    return float(T[m].max() - T[m].min())


def _belt(el, *, method, t_end, t0, record_from, dt_out, rig, **kw) -> dict:
    from ..systems.rigs.belt_tensioner import simulate_belt

    res = simulate_belt(el, method=method, t_end=t_end, t0=t0, record_from=record_from,
                        window=record_from, dt_out=dt_out, **_rig(rig), **kw)
    return dict(t=res.t, u2=res.u2, T=res.T, F=res.F,
                T_amplitude=_window_stats(res.t, res.T, record_from),
                steps=int(res.info["n_steps"]))


def rig_cosim(fmu_path, *, t_end: float = 3.3, H: float = 1e-5, t0: float = T_START,
              record_from: float = 3.0, dt_out: float = 1e-4, rig: dict | None = None) -> dict:
    """Co-simulate the rig with a co-simulation tensioner FMU at communication step H [s].

    Returns t, u2, T (belt tension [N]) and F (tensioner force [N]) sampled every dt_out
    from record_from, and T_amplitude = max T − min T over that window."""
    from .element import FMUElement

    if not (H > 0 and math.isfinite(H)):
        raise ValueError(f"H must be in (0, inf) s (got {H!r})")
    fe = FMUElement(fmu_path, mode="cs", rollback=False)
    try:
        r = _rig(rig)
        _, _, F_t0, _ = _init(fe, r, t0)
        F = fe.force_of(fe.x0, 0.0, 0.0)
        if abs(F - F_t0) > 1e-9 * abs(F_t0):
            raise ValueError(f"{fmu_path}: the FMU's initial force {F!r} N differs from the "
                             f"static initialisation F(t0) = {F_t0!r} N (eq. (51))")
        return _belt(fe, method="projection", h=H, t_end=t_end, t0=t0,
                     record_from=record_from, dt_out=max(dt_out, H), rig=rig)
    finally:
        fe.close()


def rig_model_exchange(fmu_path, *, t_end: float = 3.3, t0: float = T_START,
                       record_from: float = 3.0, dt_out: float = 1e-4, rtol: float = 1e-8,
                       rig: dict | None = None) -> dict:
    """The rig with a model-exchange tensioner FMU: its continuous state joined to
    (u1, v1, u2, v2), everything integrated by the rig's adaptive Dormand–Prince at rtol."""
    from .element import FMUElement

    # the modified Dahl law's event indicators only mark its non-Lipschitz envelopes
    # (no discrete state): integrated monolithically, as the comparison intends
    fe = FMUElement(fmu_path, mode="me", me_host=False)
    try:
        return _belt(fe, method="rk45", rtol=rtol, t_end=t_end, t0=t0,
                     record_from=record_from, dt_out=dt_out, rig=rig)
    finally:
        fe.close()


def rig_monolithic(*, t_end: float = 3.3, record_from: float = 3.0, dt_out: float = 1e-4,
                   rtol: float = 1e-8) -> dict:
    """The native modified Dahl tensioner in the compiled rig (reference)."""
    from ..systems.rigs.belt_tensioner import paper_tensioner

    return _belt(paper_tensioner("mdm"), method="rk45", rtol=rtol, t_end=t_end, t0=T_START,
                 record_from=record_from, dt_out=dt_out, rig=None)


def compare(out_dir, *, t_end=3.3, window=3.0, H=1e-5, rtol=1e-8, progress=None) -> dict:
    """Monolithic vs co-simulation vs model exchange on the rig: the three runs and the
    relative differences of the tension amplitude over [window, t_end]."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    prog = progress or (lambda f, m="": None)
    prog(0.0, "monolithic reference")
    mono = rig_monolithic(t_end=t_end, record_from=window, rtol=rtol)
    path = tensioner_fmu(out_dir / "ModifiedDahl_tensioner.fmu")
    prog(0.1, "co-simulation")
    cs = rig_cosim(path, t_end=t_end, H=H, record_from=window)
    prog(0.5, "model exchange")
    me = rig_model_exchange(path, t_end=t_end, record_from=window, rtol=rtol)
    prog(1.0, "done")
    A = mono["T_amplitude"]
    return dict(mono=mono, cs=cs, me=me, fmu=str(path),
                rel_cs=abs(cs["T_amplitude"] - A) / A, rel_me=abs(me["T_amplitude"] - A) / A)


def run(cfg: dict, out, progress):
    """Scenario runner: the comparison plot and the amplitudes (metrics)."""
    import matplotlib.pyplot as plt

    from ..runner_io import ScenarioError, ScenarioOutput

    sim = dict(cfg.get("simulation", {}))
    allowed = {"t_end", "window", "H", "rtol"}
    bad = set(sim) - allowed
    if bad:
        raise ScenarioError(f"unknown [simulation] option {sorted(bad)[0]!r}; allowed: "
                            f"{', '.join(sorted(allowed))}")
    t_end = float(sim.get("t_end", 3.3))
    window = float(sim.get("window", 3.0))
    H = float(sim.get("H", 1e-5))
    rtol = float(sim.get("rtol", 1e-8))
    if not (T_START < window < t_end):
        raise ScenarioError(f"simulation.window must be in ({T_START}, t_end = {t_end}) s "
                            f"(got {window})")
    if not (0 < H <= 1e-3):
        raise ScenarioError(f"simulation.H must be in (0, 1e-3] s (got {H})")
    res = compare(out, t_end=t_end, window=window, H=H, rtol=rtol, progress=progress)
    fig, ax = plt.subplots(1, 2, figsize=(11, 4))
    for key, lab, st in (("mono", "monolithic (native element)", "-"),
                         ("cs", f"co-simulation FMU, H = {H:g} s", "--"),
                         ("me", "model-exchange FMU", ":")):
        r = res[key]
        ax[0].plot(r["t"], r["T"], st, label=f"{lab}: ΔT = {r['T_amplitude']:.2f} N")
        ax[1].plot(r["u2"] * 1e3, r["F"], st, label=lab)
    ax[0].set_xlabel("t [s]"); ax[0].set_ylabel("belt tension T [N]")
    ax[0].legend(fontsize=8)
    ax[1].set_xlabel("u2 [mm]"); ax[1].set_ylabel("tensioner force F [N]")
    fig.suptitle("Belt–tensioner rig, Bastien et al. (2007) §4: modified Dahl tensioner as FMU")
    m = res["mono"]
    metrics = {"T_amplitude_monolithic": m["T_amplitude"],
               "T_amplitude_cosim": res["cs"]["T_amplitude"],
               "T_amplitude_model_exchange": res["me"]["T_amplitude"],
               "rel_diff_cosim": res["rel_cs"], "rel_diff_model_exchange": res["rel_me"],
               "cosim_steps": res["cs"]["steps"]}
    ts = {"t": m["t"], "T_monolithic": m["T"],
          "T_cosim": np.interp(m["t"], res["cs"]["t"], res["cs"]["T"]),
          "T_model_exchange": np.interp(m["t"], res["me"]["t"], res["me"]["T"])}
    summary = {"fmu": res["fmu"], "window_s": [window, t_end], "H_s": H, "rtol": rtol,
               "metrics": metrics}
    return ScenarioOutput(summary=summary, timeseries=ts, figures={"tension_cosim": fig})
