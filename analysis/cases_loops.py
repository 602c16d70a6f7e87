"""Scenario runners for the closed-form loops (``runner = "hystmech.analysis.cases_loops:…"``).

run_example1         Ikhouane, Mañosa & Pujol, Example 1 (eq. (16), Fig. 4)
run_convergence      Examples 2 and 3 (Figs. 7-9, 11-13): y_γ → y*_u → y°_u
run_minor_loops      Example 4 (Figs. 14-17): closed-form loops, minor loop highlighted,
                     simulated slow steady loop overlaid
run_mr_damper_fig11  viscous + Dahl paper, Fig. 11: w-loop of the asymmetric model under
                     a wave-periodic displacement vs eqs. (16)-(18)
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ..components.base import check_array, check_positive, check_range
from ..drive import drive
from ..runner_io import ScenarioError, ScenarioOutput, build_element
from ..signals import piecewise_linear
from .dahl_loop import dahl_loop_area, dahl_steady_loop, rho_from_loop_area
from .energy import loop_energy
from .lugre_loop import lugre_slow_limit, lugre_steady_loop, slow_params, theorem_a
from .variation import variation


def _opt(cfg: dict, table: str, allowed: dict) -> dict:
    """Options of [table] with defaults; unknown keys are a ScenarioError."""
    got = dict(cfg.get(table, {}))
    bad = [k for k in got if k not in allowed]
    if bad:
        raise ScenarioError(f"unknown option {table}.{bad[0]}; allowed: {', '.join(allowed)}")
    return {**allowed, **got}


def _plt():
    import matplotlib.pyplot as plt

    return plt


# -- Example 1: Dahl model followed by a first-order filter, eq. (16) -----------------------
def _example1_response(gamma, periods, n_per_period, rtol):
    """Integrate eq. (16) with u = sin(2πt/γ), x(0) = y(0) = 0, piece by piece between
    the input reversals (the right-hand side is smooth inside each piece)."""
    from scipy.integrate import solve_ivp

    w = 2 * np.pi / gamma
    tn = np.linspace(0.0, periods, periods * n_per_period + 1)      # t / γ
    t = gamma * tn
    cuts = np.concatenate([[0.0], gamma * (0.25 + 0.5 * np.arange(2 * periods)), [t[-1]]])
    X = np.empty((2, t.size))
    z = np.zeros(2)

    def rhs(s, z):
        ud = w * math.cos(w * s)
        return [ud - abs(ud) * z[0], -z[1] + z[0]]

    for a, b in zip(cuts[:-1], cuts[1:]):
        sel = (t >= a) & (t <= b)
        sol = solve_ivp(rhs, (a, b), z, method="DOP853", rtol=rtol, atol=rtol * 1e-2,
                        dense_output=True, max_step=gamma / 50)
        X[:, sel] = sol.sol(t[sel])
        z = sol.y[:, -1].copy()
    return tn, np.sin(2 * np.pi * tn), X[0], X[1]


def _dahl_reference(u, rising, rho=1.0, lo=-1.0, hi=1.0):
    wu, wd = dahl_steady_loop(rho, lo, hi, np.clip(u, lo, hi))
    return np.where(rising, wu, wd)


def run_example1(cfg: dict, out: Path, progress) -> ScenarioOutput:
    """Ikhouane, Mañosa & Pujol, Example 1 (eq. (16), Fig. 4): the output-versus-input
    graph of a Dahl model (ρ = 1) followed by ẏ = −y + x converges, as γ → ∞, to the Dahl
    steady loop of the viscous + Dahl paper's eqs. (16)-(18) between −1 and 1."""
    plt = _plt()
    o = _opt(cfg, "run", {"gammas": [20.0, 200.0, 2000.0], "periods": 6,
                          "samples_per_period": 2000, "rtol": 1e-10})
    gammas = [check_positive("gammas", g) for g in o["gammas"]]
    periods = int(check_range("periods", o["periods"], 2, 100))
    n = int(check_range("samples_per_period", o["samples_per_period"], 100, 10 ** 6))
    rtol = check_range("rtol", o["rtol"], 1e-13, 1e-4)
    ts = {}
    metrics = {"dahl_loop_area_eq19": dahl_loop_area(1.0, -1.0, 1.0)}
    last = None
    for i, g in enumerate(gammas):
        progress(i / len(gammas), f"eq. (16) with gamma = {g:g}")
        tn, u, x, y = _example1_response(g, periods, n, rtol)
        rising = np.cos(2 * np.pi * tn) > 0
        last = tn >= periods - 1
        ref = _dahl_reference(u, rising)
        key = f"{g:g}"
        metrics[f"gamma_{key}"] = {
            "max_abs_y_minus_limit_loop": float(np.max(np.abs(y[last] - ref[last]))),
            "max_abs_x_minus_dahl_loop": float(np.max(np.abs(x[last] - ref[last]))),
            "loop_area_steady": loop_energy(u[last], y[last]),
        }
        ts["t_over_gamma"], ts["u"] = tn, u
        ts[f"x_gamma_{key}"], ts[f"y_gamma_{key}"] = x, y
    ts["y_limit"] = _dahl_reference(ts["u"], np.cos(2 * np.pi * ts["t_over_gamma"]) > 0)
    progress(1.0, "done")
    fig, ax = plt.subplots(figsize=(6.5, 5))
    first = ts["t_over_gamma"] <= 1.0
    styles = ["-.", "--", "-"]
    for i, g in enumerate(gammas):
        y = ts[f"y_gamma_{g:g}"]
        ax.plot(ts["u"][first], y[first], ":", lw=0.8, color=f"C{i}")
        ax.plot(ts["u"][last], y[last], styles[i % 3], color=f"C{i}",
                label=f"steady state, γ = {g:g}")
    ax.plot(ts["u"][last], ts["y_limit"][last], color="k", lw=0.6,
            label="limit: Dahl loop, eqs. (16)-(18) of the MR paper")
    ax.set_xlabel("u_γ"); ax.set_ylabel("y_γ")
    ax.set_title("Example 1, eq. (16): y_γ vs u_γ (dotted: transient)  [Fig. 4]")
    ax.legend(fontsize=8)
    return ScenarioOutput(summary={"metrics": metrics, "solver": {"method": "DOP853",
                                                                  "rtol": rtol}},
                          timeseries=ts, figures={"fig04_example1": fig})


# -- Examples 2 and 3: y_γ → y*_u → y°_u ----------------------------------------------------
def run_convergence(cfg: dict, out: Path, progress) -> ScenarioOutput:
    """Ikhouane, Mañosa & Pujol, Examples 2-3 (Figs. 7-9 and 11-13): LuGre outputs y_γ
    for increasing γ (eq. (3), driven with u(t/γ)) against the slow limit y*_u (eq. (4)),
    and the convergence of y*_{u,k} to the steady y°_u (eqs. (6), (8))."""
    plt = _plt()
    if "element" not in cfg:
        raise ScenarioError("this scenario needs an [element] table (LuGre)")
    el = build_element(cfg["element"])
    o = _opt(cfg, "run", {"knots_u": [0.0, 1.0, 0.0], "periods": 4, "gammas": [1.0, 10.0, 100.0],
                          "k_max": 3, "samples_per_unit": 200, "rtol": 1e-8,
                          "figures": ["fig07", "fig08", "fig09"]})
    knots = check_array("knots_u", o["knots_u"], min_len=3)
    periods = int(check_range("periods", o["periods"], 1, 1000))
    k_max = int(check_range("k_max", o["k_max"], 0, periods - 1))
    gammas = [check_positive("gammas", g) for g in o["gammas"]]
    names = list(o["figures"])
    if len(names) != 3:
        raise ScenarioError("run.figures must name 3 figures (y vs t, y*_k vs t, loops)")
    tn, u = piecewise_linear(knots, periods=periods, samples_per_unit=o["samples_per_unit"])
    loop = lugre_steady_loop(el, knots)
    sigma0, g0 = slow_params(el)
    P = loop.period
    rho = variation(tn, u)
    ystar = lugre_slow_limit(el, u)                                   # eq. (4)
    yo = loop.F_at(rho)                                               # eqs. (6), (8)
    ts = {"t": tn, "u": u, "y_star": ystar, "y_steady": yo}
    metrics = {"g0": g0, "varrho_period": P, "y_steady_at_0_eq8": float(loop.knots_F[0])}
    sup = {}
    for i, g in enumerate(gammas):
        progress(i / (len(gammas) + 1), f"LuGre with gamma = {g:g}")
        y = drive(el, g * tn, u, rtol=o["rtol"]).force                 # y_γ(t) = F_γ(γt)
        ts[f"y_gamma_{g:g}"] = y
        sup[f"{g:g}"] = float(np.max(np.abs(y - ystar)))
    metrics["sup_abs_y_gamma_minus_y_star"] = sup
    # y*_{u,k}(t) = y*_u(t + kT), t ∈ [0, T]
    idx = [int(np.argmin(np.abs(tn - k * P))) for k in range(k_max + 2)]
    errs = [float(np.max(np.abs(ystar[idx[k]:idx[k + 1] + 1] - yo[idx[0]:idx[1] + 1])))
            for k in range(k_max + 1)]
    metrics["sup_abs_y_star_k_minus_y_steady"] = errs
    metrics["contraction_per_period_theory"] = math.exp(-sigma0 / g0 * P)
    metrics["contraction_per_period_measured"] = [errs[k + 1] / errs[k]
                                                  for k in range(k_max) if errs[k] > 0]
    progress(1.0, "done")
    figs = {}
    f1, ax = plt.subplots(figsize=(7, 4))
    for i, g in enumerate(gammas):
        ax.plot(tn, ts[f"y_gamma_{g:g}"], ["--", "-.", ":"][i % 3], label=f"y_γ, γ = {g:g}")
    ax.plot(tn, ystar, "k", lw=1, label="y*_u, eq. (4)")
    ax.set_xlabel("t"); ax.set_ylabel("y"); ax.legend(fontsize=8)
    ax.set_title(f"{cfg.get('name', '')}: y_γ(t) converges to y*_u(t)")
    figs[names[0]] = f1
    f2, ax = plt.subplots(figsize=(7, 4))
    t1 = tn[idx[0]:idx[1] + 1]
    for k in range(k_max + 1):
        ax.plot(t1, ystar[idx[k]:idx[k] + t1.size], "--", label=f"y*_u,{k}")
    ax.plot(t1, yo[:t1.size], "k", lw=1.2, label="y°_u, eqs. (6), (8)")
    ax.set_xlabel("t"); ax.set_ylabel("y"); ax.legend(fontsize=8)
    ax.set_title("y*_{u,k} → y°_u as k → ∞")
    figs[names[1]] = f2
    f3, ax = plt.subplots(figsize=(6, 5))
    for k in range(k_max + 1):
        ax.plot(u[idx[k]:idx[k + 1] + 1], ystar[idx[k]:idx[k + 1] + 1], ":",
                label=f"(u, y*_u,{k})")
    ax.plot(loop.u, loop.F, "k", lw=1.2, label="hysteresis loop G°_u")
    for j, m in enumerate(loop.minor_loops):
        _, ua, Fa = loop.arc(j)
        ax.plot(ua, Fa, "r", lw=2, label="minor loop" if j == 0 else None)
    ax.set_xlabel("u"); ax.set_ylabel("y"); ax.legend(fontsize=8)
    ax.set_title("graphs converge to the hysteresis loop")
    figs[names[2]] = f3
    summary = {"element": repr(el), "metrics": metrics, "solver": {"rtol": o["rtol"]}}
    return ScenarioOutput(summary=summary, timeseries=ts, figures=figs)


# -- Example 4: closed-form loops with their minor loops --------------------------------------
def run_minor_loops(cfg: dict, out: Path, progress) -> ScenarioOutput:
    """Ikhouane, Mañosa & Pujol, Example 4 (Figs. 14-17): the closed-form hysteresis
    loop (Theorem A, and the general multimodal construction), its minor loop
    highlighted, and the steady loop of a slow LuGre simulation (γ) overlaid."""
    plt = _plt()
    if "element" not in cfg or "cases" not in cfg:
        raise ScenarioError("this scenario needs an [element] table and [[cases]]")
    sim = _opt(cfg, "simulation", {"gamma": 1e4, "periods": 6, "samples_per_unit": 100,
                                   "rtol": 1e-8})
    gamma = check_positive("simulation.gamma", sim["gamma"])
    periods = int(check_range("simulation.periods", sim["periods"], 2, 1000))
    metrics, figs, ts = {}, {}, {}
    cases = cfg["cases"]
    for ci, case in enumerate(cases):
        case = dict(case)
        label = str(case.pop("label", f"case {ci + 1}"))
        stem = str(case.pop("figure", f"loop_{ci + 1}"))
        if "knots_u" not in case:
            raise ScenarioError(f"cases[{ci}].knots_u is missing (the input's knot values)")
        knots = check_array("knots_u", case.pop("knots_u"), min_len=3)
        el = build_element({**cfg["element"], **case})
        progress(ci / len(cases), f"{label}: closed form and slow simulation")
        sigma0, g0 = slow_params(el)
        loop = lugre_steady_loop(el, knots, n_per_unit=400)
        m = {"sigma0": sigma0, "g0": g0, "knots_u": knots.tolist(),
             "varrho_knots": loop.knots_varrho.tolist(),
             "F_at_knots": loop.knots_F.tolist(),
             "dissipated_energy_per_cycle": loop.energy(),
             "minor_loops": [{"varrho_open": ml.varrho_open, "varrho_close": ml.varrho_close,
                              "u_open": ml.u_open, "u_turn": ml.u_turn,
                              "F_open": float(loop.F_at(ml.varrho_open)),
                              "F_close": float(loop.F_at(ml.varrho_close)),
                              "enclosed_area": loop.energy(ml.varrho_open, ml.varrho_close)}
                             for ml in loop.minor_loops]}
        if knots.size == 5:      # bimodal: Theorem A's explicit formulas, eqs. (11)-(14)
            _, yA, rA = theorem_a(sigma0, g0, knots[0], knots[2], knots[1], knots[3], loop.varrho)
            m["theorem_a_varrho_1_to_5"] = list(rA)
            m["max_abs_theorem_a_minus_general"] = float(np.max(np.abs(yA - loop.F)))
        t, u = piecewise_linear(knots, periods=periods, gamma=gamma,
                                samples_per_unit=sim["samples_per_unit"])
        r = drive(el, t, u, rtol=sim["rtol"])
        rho = variation(t, u)
        last = rho >= rho[-1] - loop.period - 1e-9
        err = np.abs(r.force[last] - loop.F_at(rho[last] - (rho[-1] - loop.period)))
        m["simulation"] = {"gamma": gamma, "periods": periods,
                           "max_abs_F_minus_closed_form": float(err.max()),
                           "relative_to_g0": float(err.max() / g0)}
        metrics[label] = m
        ts[f"{stem}_varrho"], ts[f"{stem}_u"], ts[f"{stem}_F"] = loop.varrho, loop.u, loop.F
        fig, ax = plt.subplots(figsize=(6, 5))
        ax.plot(loop.u, loop.F, color="0.55", lw=1, ls="--", label="hysteresis loop G°_u")
        for j, ml in enumerate(loop.minor_loops):
            _, ua, Fa = loop.arc(j)
            ax.plot(ua, Fa, "k", lw=2, label="minor loop" if j == 0 else None)
            ax.plot([ml.u_open], [loop.F_at(ml.varrho_open)], "o", mfc="none", mec="C3", ms=8,
                    label="(u(t1), y°(t1))" if j == 0 else None)
            ax.plot([ml.u_open], [loop.F_at(ml.varrho_close)], "s", mfc="none", mec="C0", ms=8,
                    label="(u(t5), y°(t5))" if j == 0 else None)
        ax.plot(r.u[last], r.force[last], ".", ms=2, color="C2",
                label=f"LuGre simulated, γ = {gamma:g}, last period")
        ax.set_xlabel("u [m]"); ax.set_ylabel("F [N]")
        ax.set_title(f"{label}: σ0 = {sigma0:g}, u knots = {knots.tolist()}", fontsize=9)
        ax.legend(fontsize=7)
        figs[stem] = fig
        if ci == 0:
            f0, a0 = plt.subplots(figsize=(6, 3))
            a0.plot(loop.varrho, loop.u)
            a0.set_xlabel("t = ϱ"); a0.set_ylabel("u")
            a0.set_title(f"{label}: normalized input (Fig. 14)")
            figs["fig14_input"] = f0
    progress(1.0, "done")
    return ScenarioOutput(summary={"metrics": metrics, "solver": {"rtol": sim["rtol"]}},
                          timeseries=ts, figures=figs)


# -- viscous + Dahl paper, Fig. 11 -------------------------------------------------------------
def wave_periodic(*, x_min, x_max, period, rise_time, ripple=0.15, periods=4, dt=1e-3):
    """Wave-periodic displacement (viscous + Dahl paper, §4, properties (i)-(iv)): rises
    from x_min to x_max in rise_time [s], falls back in period − rise_time, with speed
    (Δx/T±)(1 + ripple·cos(2πτ/T±)); starts at x_min. Returns (t [s], x [m]); every
    reversal is a sample."""
    from ..components.base import check_finite

    x_min, x_max = check_finite("x_min", x_min), check_finite("x_max", x_max)
    periods = int(check_range("periods", periods, 1, 10 ** 6))
    if not x_max > x_min:
        raise ValueError(f"x_max must be in (x_min, inf) (got {x_max!r})")
    period = check_positive("period", period)
    rise_time = check_range("rise_time", rise_time, 0.0, period, lo_open=True, hi_open=True)
    ripple = check_range("ripple", ripple, 0.0, 1.0, hi_open=True)
    dt = check_positive("dt", dt)
    D = x_max - x_min
    ts, xs = [], []
    for k in range(periods):
        for (T, sgn, x0, t0) in ((rise_time, 1.0, x_min, 0.0),
                                 (period - rise_time, -1.0, x_max, rise_time)):
            n = max(2, int(round(T / dt)) + 1)
            tau = np.linspace(0.0, T, n)
            x = x0 + sgn * D * (tau / T + ripple * np.sin(2 * np.pi * tau / T) / (2 * np.pi))
            s = slice(1, None) if ts else slice(None)
            ts.append(tau[s] + t0 + k * period)
            xs.append(x[s])
    return np.concatenate(ts), np.concatenate(xs)


def run_mr_damper_fig11(cfg: dict, out: Path, progress) -> ScenarioOutput:
    """Viscous + Dahl paper, Fig. 11: the asymmetric model (eqs. (27)-(33)) driven by a
    wave-periodic displacement; w recovered from the force by eqs. (32)-(35) over the
    fourth period against the steady loop of eqs. (16)-(18), and ρ identified back from
    the loop area (eq. (19))."""
    plt = _plt()
    if "element" not in cfg:
        raise ScenarioError("this scenario needs an [element] table (AsymmetricViscousDahl)")
    el = build_element(cfg["element"])
    p = el.params
    for k in ("kx1", "kw1", "kx2", "kw2", "rho"):
        if k not in p:
            raise ScenarioError(f"element must be AsymmetricViscousDahl (missing {k})")
    o = _opt(cfg, "input", {"x_min": -0.1197, "x_max": 0.1209, "period": 5.0,
                            "rise_time": 2.5, "ripple": 0.15, "periods": 4, "dt": 1e-3})
    progress(0.0, "driving the asymmetric viscous + Dahl model")
    t, x = wave_periodic(**o)
    r = drive(el, t, x)
    Fv = np.where(r.v >= 0, p["kx1"] * r.v, p["kx2"] * r.v)            # eqs. (32)-(33)
    Fd = r.force - Fv                                                   # eq. (27)
    w = np.where(Fd >= 0, Fd / p["kw1"], Fd / p["kw2"])                 # eqs. (34)-(35)
    T = o["period"]
    t4 = t[-1] - T
    last = t >= t4 - 1e-9
    rising = r.v > 0
    xc = np.clip(x, o["x_min"], o["x_max"])
    wu, wd = dahl_steady_loop(p["rho"], o["x_min"], o["x_max"], xc)
    wbar = np.where(rising, wu, wd)
    wbar[np.isclose(x, o["x_max"])] = wu[np.isclose(x, o["x_max"])]
    area_num = loop_energy(x[last], w[last])
    area_eq19 = dahl_loop_area(p["rho"], o["x_min"], o["x_max"])
    rho_id = rho_from_loop_area(area_num, o["x_min"], o["x_max"])
    speed = np.abs(np.diff(x) / np.diff(t))
    metrics = {
        "steady_period_s": [float(t4), float(t[-1])],
        "max_abs_w_minus_eq16_18_steady": float(np.max(np.abs(w[last] - wbar[last]))),
        "loop_area_numerical": area_num,
        "loop_area_eq19": area_eq19,
        "rho_model": p["rho"],
        "rho_identified_from_area": rho_id,
        "rho_relative_error": abs(rho_id - p["rho"]) / p["rho"],
        "min_abs_velocity": float(speed.min()),
        "max_abs_velocity": float(speed.max()),
    }
    progress(1.0, "done")
    fig, ax = plt.subplots(1, 3, figsize=(14, 4), layout="constrained")
    ax[0].plot(t, x); ax[0].set_xlabel("t [s]"); ax[0].set_ylabel("x [m]")
    ax[0].set_title("wave-periodic displacement (Fig. 6)")
    ax[1].plot(t, r.force); ax[1].set_xlabel("t [s]"); ax[1].set_ylabel("F [N]")
    ax[1].set_title("force (Fig. 7)")
    xs = np.linspace(o["x_min"], o["x_max"], 2001)
    a, b = dahl_steady_loop(p["rho"], o["x_min"], o["x_max"], xs)
    ax[2].plot(x[last], w[last], "k", lw=2, label="w from eqs. (34)-(35), 4th period")
    ax[2].plot(xs, a, color="0.6", lw=1, label="w̄↑, eq. (17)")
    ax[2].plot(xs, b, color="0.6", lw=1, ls="--", label="w̄↓, eq. (18)")
    ax[2].set_xlabel("Displacement (m)"); ax[2].set_ylabel("w"); ax[2].legend(fontsize=8)
    ax[2].set_title(f"Fig. 11: ρ = {p['rho']:g} 1/m")
    ts = {"t": t, "x": x, "v": r.v, "F": r.force, "Fd": Fd, "w": w, "w_eq16_18": wbar}
    return ScenarioOutput(summary={"element": repr(el), "metrics": metrics}, timeseries=ts,
                          figures={"fig11_w_loop": fig})
