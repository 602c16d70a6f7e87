"""Scenario runners and input signals for the non-smooth, rate-independent elements:
Masing loop (Bastien et al. (2007)), modified Maxwell-slip loops (Jankowski, Marszał &
Stefański (2017)) and the Preisach cable-bending protocol (Manfredo et al. (2023)).

Reusable inputs: :func:`cable_bending_protocol`, :func:`two_harmonic_segments`.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ..components.base import check_finite, check_positive

# nine curvature levels [1/m] of the cyclic bending protocol of Manfredo et al. (2023), §5.
# Levels 4, 6, 7, 9 are given in the paper (6.9, 10.4, 17.45, 31.4); the others are not:
# 1-3 divide [0, 6.9] evenly, 5 and 8 are the midpoints of their neighbours.
CABLE_LEVELS = (1.725, 3.45, 5.175, 6.9, 8.65, 10.4, 17.45, 24.425, 31.4)


def cable_bending_protocol(levels=CABLE_LEVELS, cycles_per_level: int = 3,
                           points_per_cycle: int = 200, rate: float = 1.0):
    """Cyclic pure-bending curvature history, Manfredo et al. (2023), §5 (their Fig. 7).

    For each maximum curvature K_B^k in ``levels`` [1/m], ``cycles_per_level`` cycles
    0 -> K_B^k -> 0 are run (9 levels × 3 = 27 cycles up to 31.4 1/m by default), at the
    constant curvature rate ``rate`` [1/(m·s)] (the operator is rate independent; time
    only orders the samples). Returns t [s], K [1/m] (piecewise linear, turning points
    included exactly).
    """
    lv = np.asarray(levels, dtype=float)
    if lv.ndim != 1 or lv.size < 1 or not np.all(np.isfinite(lv)) or np.any(lv <= 0):
        raise ValueError("levels must be a 1-D array of finite curvatures in (0, inf) 1/m")
    if int(cycles_per_level) < 1:
        raise ValueError(f"cycles_per_level must be an integer in [1, inf) (got {cycles_per_level!r})")
    if int(points_per_cycle) < 2:
        raise ValueError(f"points_per_cycle must be an integer in [2, inf) (got {points_per_cycle!r})")
    rate = check_positive("rate", rate)
    half = max(int(points_per_cycle) // 2, 1)
    K = [np.zeros(1)]
    for Kmax in lv:
        up = np.linspace(0.0, Kmax, half + 1)[1:]
        dn = np.linspace(Kmax, 0.0, half + 1)[1:]
        for _ in range(int(cycles_per_level)):
            K += [up, dn]
    K = np.concatenate(K)
    t = np.concatenate([[0.0], np.cumsum(np.abs(np.diff(K)) / rate)])
    return t, K


def two_harmonic_segments(A1, A2, omega, n_per_segment: int = 200, periods: float = 1.0):
    """δ_t = A1 sin ωt + A2 sin 2ωt (Jankowski et al. (2017), eq. (8)) sampled so that every
    turning point is a sample (A1 = A2 case: extrema where cos θ + 2cos 2θ = 0).

    Returns t [s], u [m] and a dict of the named points 0, B, D, F, H, J (sample indices)
    of the first period and the next maximum J, plus R, the sample on F -> H where δ_t
    is back at its value at D (return point of the inner loop). Only A1 = A2 > 0 is supported here.
    """
    A1 = check_positive("A1", A1)
    A2 = check_positive("A2", A2)
    if A1 != A2:
        raise ValueError("two_harmonic_segments needs A1 = A2 (the reference case)")
    omega = check_positive("omega", omega)
    c1 = (-1 + math.sqrt(33)) / 8
    c2 = (-1 - math.sqrt(33)) / 8
    th = {"0": 0.0, "B": math.acos(c1), "D": math.acos(c2), "F": 2 * math.pi - math.acos(c2),
          "H": 2 * math.pi - math.acos(c1), "J": 2 * math.pi + math.acos(c1)}
    # R: where F -> H passes the value at D again (return point of the inner loop)
    f = lambda x: A1 * math.sin(x) + A2 * math.sin(2 * x)   # noqa: E731
    lo, hi = th["F"], th["H"]
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if f(mid) > f(th["D"]) else (lo, mid)
    th["R"] = lo
    names = ["0", "B", "D", "F", "R", "H", "J"]
    counts = [n_per_segment, n_per_segment, n_per_segment, n_per_segment // 2,
              n_per_segment - n_per_segment // 2, n_per_segment]
    parts = [np.linspace(th[a], th[b], c + 1)[:-1]
             for a, b, c in zip(names, names[1:], counts)]
    theta = np.concatenate(parts + [[th["J"]]])
    idx = dict(zip(names, np.r_[0, np.cumsum(counts)].tolist()))
    t = theta / omega
    u = A1 * np.sin(theta) + A2 * np.sin(2 * theta)
    return t, u, idx


# -- runners -----------------------------------------------------------------------------
def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def run_masing_loop(cfg: dict, out: Path, progress):
    """Masing scenario: parallelogram (Fig. 5), damped loop with its dry skeleton (Fig. 6),
    predicted loop for the identification input (Fig. 10) and F(t) (Fig. 12(b)), with the
    identified values eq. (36) and input eqs. (29), (32); identification round trip."""
    from .. import drive
    from ..components.masing import Masing
    from .masing import (damping_at_frequency, identify_masing_loop, masing_corners,
                         masing_loop, viscous_energy)

    plt = _plt()
    P = dict(cfg.get("masing", {}))
    inp = dict(cfg.get("input", {}))
    k, k0, alpha, F0 = (float(P[n]) for n in ("k", "k0", "alpha", "F0"))
    c = float(P.get("c", 0.0))
    x0, x1 = float(inp["x0"]), float(inp["x1"])
    Omega, phi = float(inp["Omega"]), float(inp.get("phi", 0.0))
    periods = int(inp.get("periods", 3))
    n = int(inp.get("samples_per_period", 20000))
    Omega0 = float(cfg.get("rig", {}).get("Omega0", 73.15))
    progress(0.05, "driving the damped Masing element")
    T = 2 * math.pi / Omega
    t = np.linspace(0.0, periods * T, periods * n + 1)
    u = x0 + x1 * np.sin(Omega * t + phi)
    v = x1 * Omega * np.cos(Omega * t + phi)
    el = Masing(k=k, k0=k0, alpha=alpha, F0=F0, c=c)
    r = drive(el, t, u, v=v)
    el0 = Masing(k=k, k0=k0, alpha=alpha, F0=F0, c=0.0)
    r0 = drive(el0, t, u, v=v)
    last = slice(-n - 1, None)
    progress(0.5, "closed-form loop and identification")
    Fcf, Fep = masing_loop(k=k, k0=k0, alpha=alpha, F0=F0, c=c, u=u[last], udot=v[last])
    cor = masing_corners(k=k, k0=k0, alpha=alpha, F0=F0, u_min=float(u[last].min()),
                         u_max=float(u[last].max()))
    ident = identify_masing_loop(u[last], r.force[last], t=t[last])
    rel = {key: ident[key] / val - 1.0 for key, val in
           dict(k=k, k0=k0, alpha=alpha, F0=F0).items()}
    rel["c"] = ident["c"] / c - 1.0 if c > 0 else ident["c"]
    E_v = viscous_energy(c=c, x1=x1, Omega=Omega) if c > 0 else 0.0
    metrics = dict(
        max_abs_drive_minus_closed_form_N=float(np.max(np.abs(r.force[last] - Fcf))),
        corners={kk: cor[kk] for kk in ("u_A", "u_B", "u_C", "u_D", "F_A", "F_B", "F_C", "F_D")},
        eta_m=alpha / k,
        loop_energy_J=ident["E_total"], viscous_energy_J=ident["E_viscous"],
        viscous_energy_eq30_J=E_v,
        identified={kk: ident[kk] for kk in ("k", "k0", "alpha", "F0", "c", "u_min", "u_max")},
        identified_rel_error=rel,
        c0_eq31=damping_at_frequency(c=c, Omega=Omega, Omega0=Omega0) if c > 0 else 0.0,
        c0_paper_eq56=2.48e3)
    progress(0.8, "plotting")
    fig, ax = plt.subplots(2, 2, figsize=(11, 8))
    a = ax[0, 0]
    a.plot(u[last] * 1e3, r0.force[last], "k-", lw=1.2)
    for nm, uu, FF in (("A", cor["u_A"], cor["F_A"]), ("B", cor["u_B"], cor["F_B"]),
                       ("C", cor["u_C"], cor["F_C"]), ("D", cor["u_D"], cor["F_D"])):
        a.plot(uu * 1e3, FF, "ro")
        a.annotate(nm, (uu * 1e3, FF), textcoords="offset points", xytext=(5, 5))
    a.set_title("Fig. 5: parallelogram of the Masing model (c = 0)")
    a.set_xlabel("u [mm]"); a.set_ylabel("F [N]")
    a = ax[0, 1]
    a.plot(u[last] * 1e3, r.force[last], "b-", label="F (damped)")
    a.plot(u[last] * 1e3, Fep, "k-.", label="dry skeleton F_ep")
    a.set_title(f"Fig. 6: damped loop, c = {c:g} N·s/m"); a.legend()
    a.set_xlabel("u [mm]"); a.set_ylabel("F [N]")
    a = ax[1, 0]
    a.plot(u[last] * 1e3, r.force[last], "b-", label="simulated (eq. 36 values)")
    Fid, _ = masing_loop(k=ident["k"], k0=ident["k0"], alpha=ident["alpha"], F0=ident["F0"],
                         c=ident["c"], u=u[last], udot=v[last])
    a.plot(u[last] * 1e3, Fid, "r--", label="re-identified (eqs. 26, 28-30)")
    a.set_title("Fig. 10: loop for the identification input (29), (32)"); a.legend()
    a.set_xlabel("u [mm]"); a.set_ylabel("F [N]")
    a = ax[1, 1]
    a.plot(t, r.force, "b-", label="F(t)")
    a.plot(t, r0.force, "k:", label="c = 0")
    a.set_title("Fig. 12(b)-like: force versus time"); a.legend()
    a.set_xlabel("t [s]"); a.set_ylabel("F [N]")
    fig.tight_layout()
    from ..runner_io import ScenarioOutput

    progress(1.0, "done")
    return ScenarioOutput(summary={"metrics": metrics},
                          timeseries={"t": t, "u": u, "v": v, "F": r.force, "F_c0": r0.force,
                                      "w": r.state[:, 0]},
                          figures={"masing_loops": fig})


def run_maxwell_slip_loops(cfg: dict, out: Path, progress):
    """Modified Maxwell-slip scenario, Jankowski et al. (2017) Figs. 2-5: per-asperity
    loops, the excitation with points B, D, F, H, J, the 5-asperity macro loop with its
    inner loop, and the step-by-step segments."""
    from .. import drive
    from ..components.maxwell_slip import MaxwellSlip
    from ..runner_io import ScenarioOutput

    plt = _plt()
    P = dict(cfg["element"])
    P.pop("type", None)
    P.pop("constructor", None)
    el = MaxwellSlip.from_heights(**P)
    inp = cfg["input"]
    t, u, idx = two_harmonic_segments(inp["A1"], inp["A2"], inp["omega"],
                                      int(inp.get("n_per_segment", 400)))
    progress(0.2, "driving 5 asperities")
    r = drive(el, t, u)
    Fa = el.asperity_forces(r.state)
    names = ["0", "B", "D", "F", "H", "J"]
    pattern = {}
    for a, b in zip(names, names[1:]):
        sel = slice(idx[a] + 1, idx[b] + 1)
        sgn = np.sign(u[idx[b]] - u[idx[a]])
        z = r.state[sel]
        pattern[a + "->" + b] = [i + 1 for i in range(el.k.size)
                                 if el.delta[i] > 0 and np.any(sgn * z[:, i] >= el.delta[i] * (1 - 1e-12))]
    F_ret = r.force[idx["R"]]
    metrics = dict(delta_um=(el.delta * 1e6).tolist(),
                   points_um={nm: float(u[i] * 1e6) for nm, i in idx.items()},
                   points_N={nm: float(r.force[i]) for nm, i in idx.items()},
                   slip_pattern=pattern,
                   slip_pattern_reference={"0->B": [1, 2, 3, 4], "B->D": [1, 2, 3],
                                           "D->F": [1], "F->H": [1, 2, 3, 4],
                                           "H->J": [1, 2, 3, 4]},
                   inner_loop_return_error_N=float(abs(F_ret - r.force[idx["D"]])),
                   inner_loop_return_state_error_m=float(np.max(np.abs(r.state[idx["R"]]
                                                                       - r.state[idx["D"]]))))
    progress(0.6, "plotting")
    fig2, ax = plt.subplots(2, 3, figsize=(13, 7))
    for i in range(5):
        a = ax.flat[i]
        a.plot(u * 1e6, Fa[:, i], "k-")
        for nm in names[1:]:
            a.plot(u[idx[nm]] * 1e6, Fa[idx[nm], i], "ro", ms=3)
        a.set_title(f"({'abcde'[i]}) h{i + 1} = {el.construction['heights'][i] * 1e6:.5f} µm")
        a.set_xlabel("δ_t [µm]"); a.set_ylabel("F_asp [N]")
    a = ax.flat[5]
    a.plot(t, u * 1e6, "k-")
    for nm in names:
        a.plot(t[idx[nm]], u[idx[nm]] * 1e6, "ro")
        a.annotate(nm, (t[idx[nm]], u[idx[nm]] * 1e6), textcoords="offset points", xytext=(4, 4))
    a.set_title("(f) excitation δ_t, eq. (8)"); a.set_xlabel("t [s]"); a.set_ylabel("δ_t [µm]")
    fig2.suptitle("Fig. 2: contribution of individual asperities")
    fig2.tight_layout()
    fig3, a = plt.subplots(figsize=(6, 5))
    a.plot(u * 1e6, r.force, "k-")
    for nm in names[1:]:
        a.plot(u[idx[nm]] * 1e6, r.force[idx[nm]], "ro")
        a.annotate(nm, (u[idx[nm]] * 1e6, r.force[idx[nm]]), textcoords="offset points",
                   xytext=(4, 4))
    a.set_title("Fig. 3: non-local memory loop, 5 asperities")
    a.set_xlabel("δ_t [µm]"); a.set_ylabel("F_F [N]")
    fig5, ax5 = plt.subplots(2, 3, figsize=(13, 7))
    for i, (a_, b_) in enumerate(zip(names, names[1:])):
        a = ax5.flat[i]
        a.plot(u * 1e6, r.force, color="0.85")
        s = slice(idx[a_], idx[b_] + 1)
        a.plot(u[s] * 1e6, r.force[s], "b-", lw=2)
        a.set_title(f"({'abcde'[i]}) segment {a_}-{b_}: slip {pattern[a_ + '->' + b_]}")
        a.set_xlabel("δ_t [µm]"); a.set_ylabel("F_F [N]")
    a = ax5.flat[5]
    a.plot(t, r.state.mean(axis=1) * 1e6, "g-", label="mean Z")
    a.plot(t, (u[:, None] - r.state).mean(axis=1) * 1e6, "m-", label="X (mean slip position)")
    a.legend(); a.set_xlabel("t [s]"); a.set_ylabel("[µm]")
    fig5.suptitle("Figs. 4-5: step-by-step formation of the loop")
    fig5.tight_layout()
    ts = {"t": t, "u": u, "F": r.force}
    for i in range(5):
        ts[f"F_asp{i + 1}"] = Fa[:, i]
    progress(1.0, "done")
    return ScenarioOutput(summary={"element": repr(el), "metrics": metrics}, timeseries=ts,
                          figures={"fig2_asperities": fig2, "fig3_macro_loop": fig3,
                                   "fig4_5_segments": fig5})


def run_preisach_cable_protocol(cfg: dict, out: Path, progress):
    """Preisach operator with a smooth kernel under the 27-cycle, 9-level bending
    protocol of Manfredo et al. (2023) §5; moment-curvature loops and the memory curve on
    the Preisach triangle (eq. (14)) at a few instants (like their Fig. 5)."""
    from .. import drive
    from ..components.preisach import Preisach
    from ..runner_io import ScenarioOutput

    plt = _plt()
    pc = dict(cfg.get("protocol", {}))
    t, K = cable_bending_protocol(levels=pc.get("levels", CABLE_LEVELS),
                                  cycles_per_level=int(pc.get("cycles_per_level", 3)),
                                  points_per_cycle=int(pc.get("points_per_cycle", 200)))
    kc = dict(cfg.get("kernel", {}))
    A = check_finite("kernel.amplitude", kc.get("amplitude", 2e-3))
    r0 = check_positive("kernel.r0", kc.get("r0", 6.0))
    s0 = check_positive("kernel.s0", kc.get("s0", 15.0))
    n = int(kc.get("n", 120))
    m = float(np.max(np.abs(K)))                          # eq. (14)
    omega = lambda r, s: A * np.exp(-r / r0) * np.exp(-(s / s0) ** 2)   # noqa: E731
    P = Preisach.from_kernel(omega, m, n, k0=float(kc.get("k0", 0.0)), initial=-1)
    progress(0.2, f"driving Preisach ({P.a1.size} relays) over {t.size} samples")
    res = drive(P, t, K)
    x = P.x0.copy()
    instants = [int(i) for i in pc.get("snapshot_samples", [])] or \
        [int(f * (t.size - 1)) for f in (0.12, 0.37, 0.55, 0.8, 1.0)]
    instants = sorted(set(min(max(i, 0), t.size - 1) for i in instants))
    snaps = {}
    k_prev = 0
    for i in instants:
        for k_ in range(k_prev, i):
            P.advance(x, K[k_], K[k_ + 1], 1.0, 0.0, P.p, 1e-8)
        k_prev = i
        snaps[i] = x.copy()
    progress(0.7, "plotting")
    fig, ax = plt.subplots(1, 3, figsize=(15, 4.5))
    ax[0].plot(t, K, "k-")
    for i in instants:
        ax[0].plot(t[i], K[i], "o")
    ax[0].set_xlabel("t [s] (order parameter)"); ax[0].set_ylabel("K_B [1/m]")
    ax[0].set_title("Protocol: 9 levels × 3 cycles (Fig. 7)")
    ax[1].plot(K, res.force, "b-", lw=0.8)
    ax[1].set_xlabel("K_B [1/m]"); ax[1].set_ylabel("M_B [N·m]")
    ax[1].set_title("Moment-curvature loops")
    rr = np.linspace(0, m, 300)
    ax[2].plot(rr, m - rr, "k-"); ax[2].plot(rr, -m + rr, "k-")
    for i in instants:
        psi = P.memory_curve(snaps[i], rr)
        psi = np.clip(psi, -m + rr, m - rr)
        ax[2].plot(rr, psi, label=f"t = {t[i]:.0f} s, K = {K[i]:.1f}")
    ax[2].set_xlabel("r"); ax[2].set_ylabel("s"); ax[2].legend(fontsize=7)
    ax[2].set_title("Memory curves on the Preisach triangle (eq. 14, Fig. 5)")
    fig.tight_layout()
    cyc_max = []
    per = 2 * (int(pc.get("points_per_cycle", 200)) // 2)
    for c_ in range(27 if "levels" not in pc else len(pc["levels"]) * int(pc.get("cycles_per_level", 3))):
        s = slice(c_ * per, (c_ + 1) * per + 1)
        cyc_max.append(float(res.force[s].max()))
    metrics = dict(n_relays=int(P.a1.size), n_samples=int(t.size), m_per_m=m,
                   max_stack_depth=int(res.state[:, 1].max()),
                   M_range_Nm=[float(res.force.min()), float(res.force.max())],
                   cycle_peak_moments_Nm=cyc_max,
                   # rate independence: the 2nd and 3rd cycles of a level repeat exactly
                   repeat_cycle_difference_Nm=float(max(abs(cyc_max[3 * j + 1] - cyc_max[3 * j + 2])
                                                        for j in range(len(cyc_max) // 3))),
                   levels_per_m=list(pc.get("levels", CABLE_LEVELS)))
    progress(1.0, "done")
    return ScenarioOutput(summary={"metrics": metrics},
                          timeseries={"t": t, "K": K, "M": res.force, "depth": res.state[:, 1]},
                          figures={"preisach_cable": fig})
