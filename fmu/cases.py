"""The belt–tensioner rig of Bastien et al. (2007), §4, with its tensioner as an FMU:

(a) co-simulation: the exported modified Dahl FMU stepped at communication step H by a
    small Jacobi master; the masses (eqs. (38b)-(38c)) are integrated over each step
    with RK4 while the tensioner force is held, the FMU receives u2(t) = u2_k + v2_k·(t − t_k);
(b) model exchange: the FMU's state joined to the rig state, integrated monolithically
    (scipy DOP853 on eqs. (38a)-(38c) with the FMU's derivatives);
against the monolithic native simulation (hystmech.systems.belt_tensioner.simulate_belt).
Scenario ``belt-tensioner-cosim``: ``run(cfg, out, progress)``.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ..systems.belt_tensioner import FORCING, MDM_PARAMS, RIG, T_START, static_init


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


def rig_cosim(fmu_path, *, t_end: float = 3.3, H: float = 1e-5, t0: float = T_START,
              record_from: float = 3.0, dt_out: float = 1e-4, rig: dict | None = None,
              progress=None) -> dict:
    """Co-simulate the rig with a co-simulation tensioner FMU at communication step H [s].

    Returns t, u2, T (belt tension [N]) and F (tensioner force [N]) sampled every dt_out
    from record_from, and T_amplitude = max T − min T over that window."""
    from .element import FMUElement

    if not (H > 0 and math.isfinite(H)):
        raise ValueError(f"H must be in (0, inf) s (got {H!r})")
    r = _rig(rig)
    fe = FMUElement(fmu_path, mode="cs", rollback=False)
    m1, m2, K, C, g = r["m1"], r["m2"], r["K"], r["C"], r["g"]
    f0, f1, Om, phi = r["f0"], r["f1"], r["Omega0"], r["phi"]
    F_t0 = f0 + f1 * math.cos(Om * t0 + phi) + (m1 + m2) * g
    T0 = F_t0 - m2 * g
    n = int(round((t_end - t0) / H))
    stride = max(1, int(round(dt_out / H)))
    u1 = v1 = u2 = v2 = 0.0
    fe._set_inputs(0.0, 0.0)
    F = fe._get_output()
    if abs(F - F_t0) > 1e-9 * abs(F_t0):
        raise ValueError(f"{fmu_path}: the FMU's initial force {F!r} N differs from the "
                         f"static initialisation F(t0) = {F_t0!r} N (eq. (51))")
    rec = []
    cos = math.cos

    def acc(t, a1, b1, a2, b2):
        T = K * (a1 - a2) + C * (b1 - b2) + T0
        return (f0 + f1 * cos(Om * t + phi) - T) / m1 + g, (T - F) / m2 + g

    t = t0
    for k in range(n):
        if t >= record_from - 0.5 * H and k % stride == 0:
            rec.append((t, u2, K * (u1 - u2) + C * (v1 - v2) + T0, F))
        # masses over [t, t + H] with the tensioner force held (RK4)
        p1, q1 = acc(t, u1, v1, u2, v2)
        h2 = 0.5 * H
        p2, q2 = acc(t + h2, u1 + h2 * v1, v1 + h2 * p1, u2 + h2 * v2, v2 + h2 * q1)
        p3, q3 = acc(t + h2, u1 + h2 * (v1 + h2 * p1), v1 + h2 * p2,
                     u2 + h2 * (v2 + h2 * q1), v2 + h2 * q2)
        p4, q4 = acc(t + H, u1 + H * (v1 + h2 * p2), v1 + H * p3,
                     u2 + H * (v2 + h2 * q2), v2 + H * q3)
        nu1 = u1 + H * (v1 + H / 6 * (p1 + p2 + p3))
        nv1 = v1 + H / 6 * (p1 + 2 * p2 + 2 * p3 + p4)
        nu2 = u2 + H * (v2 + H / 6 * (q1 + q2 + q3))
        nv2 = v2 + H / 6 * (q1 + 2 * q2 + 2 * q3 + q4)
        # the tensioner over the same step, input u2(t) = u2_k + v2_k (t − t_k)
        fe._set_inputs(u2, v2)
        fe._do_step(t, H)
        u1, v1, u2, v2 = nu1, nv1, nu2, nv2
        t = t0 + (k + 1) * H
        fe._set_inputs(u2, v2)
        F = fe._get_output()
        if progress is not None and k % 20000 == 0:
            progress(k / n, f"co-simulation t = {t:.3f} s")
    rec.append((t, u2, K * (u1 - u2) + C * (v1 - v2) + T0, F))
    fe.close()
    a = np.array(rec)
    if not np.all(np.isfinite(a)):
        raise FloatingPointError(f"co-simulation: non-finite values (H = {H!r} s too large?)")
    return dict(t=a[:, 0], u2=a[:, 1], T=a[:, 2], F=a[:, 3],
                T_amplitude=_window_stats(a[:, 0], a[:, 2], record_from), steps=n)


def rig_model_exchange(fmu_path, *, t_end: float = 3.3, t0: float = T_START,
                       record_from: float = 3.0, dt_out: float = 1e-4, rtol: float = 1e-8,
                       rig: dict | None = None) -> dict:
    """The rig with a model-exchange tensioner FMU: its continuous state joined to
    (u1, v1, u2, v2) and everything integrated by scipy's DOP853 at rtol."""
    from scipy.integrate import solve_ivp

    from .element import FMUElement

    r = _rig(rig)
    fe = FMUElement(fmu_path, mode="me")
    m1, m2, K, C, g = r["m1"], r["m2"], r["K"], r["C"], r["g"]
    f0, f1, Om, phi = r["f0"], r["f1"], r["Omega0"], r["phi"]
    x0, pre, F_t0, T0 = _init(fe, r, t0)
    nx = fe.n_states
    xd = np.empty(nx)
    empty = np.zeros(0)

    def rhs(t, y):
        u1, v1, u2, v2 = y[:4]
        x = np.ascontiguousarray(y[4:])
        T = K * (u1 - u2) + C * (v1 - v2) + T0
        F = fe.force(x, u2, v2, empty) + pre
        fe.rate(x, u2, v2, empty, xd)
        f = f0 + f1 * math.cos(Om * t + phi)
        return np.concatenate([[v1, (f - T) / m1 + g, v2, (T - F) / m2 + g], xd])

    y0 = np.concatenate([np.zeros(4), x0])
    t_eval = np.arange(record_from, t_end + 0.5 * dt_out, dt_out)
    t_eval = t_eval[t_eval <= t_end]
    scale = np.concatenate([[1e-3, 1e-2, 1e-3, 1e-2], np.abs(fe.x_scale)])
    sol = solve_ivp(rhs, (t0, t_end), y0, method="DOP853", t_eval=t_eval, rtol=rtol,
                    atol=rtol * scale, max_step=1e-3)
    if not sol.success:
        raise FloatingPointError(f"model exchange: {sol.message}")
    Y = sol.y.T
    T = K * (Y[:, 0] - Y[:, 2]) + C * (Y[:, 1] - Y[:, 3]) + T0
    F = np.array([fe.force(np.ascontiguousarray(y[4:]), y[2], y[3], empty) + pre for y in Y])
    fe.close()
    return dict(t=sol.t, u2=Y[:, 2], T=T, F=F, T_amplitude=_window_stats(sol.t, T, record_from),
                steps=int(sol.nfev))


def rig_monolithic(*, t_end: float = 3.3, record_from: float = 3.0, dt_out: float = 1e-4,
                   rtol: float = 1e-8) -> dict:
    """The native modified Dahl tensioner in the compiled rig (reference)."""
    from ..systems.belt_tensioner import paper_tensioner, simulate_belt

    res = simulate_belt(paper_tensioner("mdm"), method="rk45", t_end=t_end, rtol=rtol,
                        record_from=record_from, window=record_from, dt_out=dt_out)
    return dict(t=res.t, u2=res.u2, T=res.T, F=res.F,
                T_amplitude=_window_stats(res.t, res.T, record_from))


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
    cs = rig_cosim(path, t_end=t_end, H=H, record_from=window,
                   progress=lambda f, m="": prog(0.1 + 0.6 * f, m))
    prog(0.7, "model exchange")
    me = rig_model_exchange(path, t_end=t_end, record_from=window, rtol=rtol)
    prog(1.0, "done")
    A = mono["T_amplitude"]
    return dict(mono=mono, cs=cs, me=me, fmu=str(path),
                rel_cs=abs(cs["T_amplitude"] - A) / A, rel_me=abs(me["T_amplitude"] - A) / A)


def run(cfg: dict, out, progress):
    """Scenario runner: the comparison plot and the amplitudes (metrics)."""
    import matplotlib.pyplot as plt

    from ..scenario import ScenarioError, ScenarioOutput

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
