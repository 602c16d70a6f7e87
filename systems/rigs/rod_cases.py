"""Scenario runners of the Cosserat-rod cases (scenarios/cable-*.toml).

Cable-like values (documented in the TOML files): L = 0.4 m, moment law
M = EI_el·K + P[K] with EI_el = 0.02 N·m² and a continuous Preisach operator P
(Manfredo, Dörlich, Linn & Arnold (2023), eqs. (7)-(16): kernel constant on the cells of
the triangle of eq. (14), m = 35 1/m, 100 levels) in the dissipative stop form
κ·K − P[K] (see :func:`cable_preisach`), total kernel weight M_h = 0.3 N·m, comparable
to the elastic moments at the curvatures of their §5 protocol (up to 31.4 1/m). The
kernel ω(r, s) = exp(−r/r0)·exp(−(s/s0)²) is symmetric in s and the vertices start
from the AC-demagnetised memory (M(0) = 0).

* ``cable-pure-bending``: clamp + prescribed tip rotation θ_L = K(t)·L, so the curvature
  is uniform; K(t) follows the §5 protocol (9 levels, 3 cycles each, 27 cycles).
* ``cable-cantilever-cyclic``: cyclic transverse tip load, quasi-static; loop of tip load
  against deflection, residual curvature, work of the load per cycle against the sum of
  the vertices' dissipated energies.
* ``cable-dynamic``: the cantilever released from a bent state; energy lost per cycle.
``law.type = "stops"`` selects the alternative EI_el·K + Σ Masing stops (a continuous
Prandtl-Ishlinskii law) in the two cantilever cases.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ...runner_io import ScenarioError, ScenarioOutput

# §5 of Manfredo et al. (2023) names K^4 = 6.9, K^6 = 10.4, K^7 = 17.45, K^9 = 31.4 1/m;
# the other levels are not given: K^1..K^3 split 0..6.9 evenly, K^5 and K^8 are midpoints.
PROTOCOL_LEVELS = (1.725, 3.45, 5.175, 6.9, 8.65, 10.4, 17.45, 24.425, 31.4)


def protocol_curvature(levels=PROTOCOL_LEVELS, cycles_per_level=3, points_per_cycle=80):
    """Curvature history [1/m] of the §5 cyclic bending protocol (Manfredo et al.
    (2023), Fig. 7): for each level, ``cycles_per_level`` one-sided cycles 0 → K^k → 0."""
    out = [np.zeros(1)]
    half = max(2, points_per_cycle // 2)
    for K in levels:
        for _ in range(cycles_per_level):
            up = np.linspace(0.0, K, half + 1)[1:]
            out += [up, up[::-1][1:], np.zeros(1)]
    return np.concatenate(out)


def cable_preisach(cfg: dict):
    """Cable moment law M = EI_el·K + (κ·K − P[K]) [N·m] with P a Preisach operator
    (Manfredo et al. (2023), eqs. (7)-(16)) of kernel ω(r, s) ∝ exp(−r/r0)·exp(−(s/s0)²) ≥ 0
    with total weight M_h [N·m] on the triangle of eq. (14) (half-size m [1/m],
    ``levels`` per side); ``continuous`` (default True) selects the cellwise constant
    kernel with a continuous output and exact tangent.

    Why the stop form κK − P[K]: the loops of a Preisach operator with a non-negative
    kernel run counterclockwise in the (K, M) plane (∮ P dK = −loop area < 0; the relay
    output lags the input), i.e. they would *return* energy as a moment law. Mechanical
    loops run clockwise (the moment is higher on loading), so the hysteretic moment is
    κK − P[K] (Prandtl-Ishlinskii stops are the special case of kernels on lines
    r = r_j). κ [N·m²] is the largest branch slope of P, so the law stays monotone:
    tangent EI_el + κ right after a reversal, softening towards EI_el as the branch
    sweeps the kernel. Returns (law, P) with P = κK − P[K] as one Preisach element."""
    from ...components.linear import LinearSpring
    from ...components.preisach import Preisach

    m = float(cfg.get("m", 35.0)); n = int(cfg.get("levels", 100))
    r0 = float(cfg.get("r0", 4.0)); s0 = float(cfg.get("s0", 15.0))
    Mh = float(cfg.get("M_h", 0.3)); EI = float(cfg.get("EI_el", 0.02))
    cont = bool(cfg.get("continuous", True))

    def om(r, s):
        return np.exp(-r / r0) * np.exp(-(s / s0) ** 2)

    c = Mh / Preisach.from_kernel(om, m, n).p[3]
    Pp = Preisach.from_kernel(lambda r, s: c * om(r, s), m, n, continuous=True)
    # largest slope along the two major branches (every other branch sweeps a subset
    # of the same non-negative kernel, so its slope is smaller)
    us = np.linspace(-m, m, 4 * n + 1)
    x_lo = Pp.state_after([-2 * m])
    x_hi = Pp.state_after([2 * m])
    kappa = max(max(Pp.slope(x_lo, u, 1.0, Pp.p) for u in us),
                max(Pp.slope(x_hi, u, -1.0, Pp.p) for u in us))
    P = Preisach.from_kernel(lambda r, s: -c * om(r, s), m, n, continuous=cont, k0=kappa)
    return LinearSpring(k=EI) + P, P


def demagnetized_memory(law):
    """The law's state with every Preisach part AC-demagnetised
    (Preisach.demagnetized_state), the other parts at their x0."""
    return law.demagnetized_state()


def cable_stops(cfg: dict):
    """EI_el·K + Σ_i Masing(k_i, α_i): continuous Prandtl-Ishlinskii moment law; the
    stops yield at curvatures K_y,i = α_i/k_i [1/m]."""
    from ...components.combine import SumElement
    from ...components.linear import LinearSpring
    from ...components.masing import Masing

    EI = float(cfg.get("EI_el", 0.02))
    ks = list(cfg.get("k_stops", [0.01, 0.01, 0.01]))
    Ky = list(cfg.get("K_yield", [1.0, 3.0, 8.0]))
    if len(ks) != len(Ky):
        raise ScenarioError("law.k_stops and law.K_yield must have the same length")
    parts = [LinearSpring(k=EI)] + [Masing(k=k, k0=0.0, alpha=k * ky) for k, ky in zip(ks, Ky)]
    return SumElement(*parts)


def _plt():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def run_pure_bending(cfg: dict, out: Path, progress) -> ScenarioOutput:
    from ... import drive
    from ...limits import first
    from .rod import Rod, quasi_static

    rc = cfg.get("rod", {}); lc = cfg.get("law", {}); pc = cfg.get("protocol", {})
    law, P = cable_preisach(lc)
    rod = Rod(N=int(rc.get("N", 20)), L=float(rc.get("L", 0.4)), law=law,
              memory0=demagnetized_memory(law))
    K = protocol_curvature(tuple(pc.get("levels", PROTOCOL_LEVELS)),
                           int(pc.get("cycles_per_level", 3)),
                           int(pc.get("points_per_cycle", 80)))
    K = np.asarray(first(K, least=2))   # a work-limited run: the first load steps
    res = quasi_static(rod, tip_rotation=K * rod.L, progress=progress)
    ref = drive(law, np.arange(K.size, dtype=float), K, x0=rod.memory0).force
    err = float(np.max(np.abs(res.M - ref[:, None])))
    plt = _plt()
    fig, ax = plt.subplots(1, 2, figsize=(11, 4))
    ax[0].plot(K, res.M[:, rod.N // 2], lw=0.8, label="rod, mid vertex")
    ax[0].plot(K, ref, "--", lw=0.6, label="driven operator")
    ax[0].set_xlabel("K [1/m]"); ax[0].set_ylabel("M [N·m]"); ax[0].legend()
    ax[1].plot(K); ax[1].set_xlabel("load step"); ax[1].set_ylabel("K [1/m]")
    fig.suptitle(cfg.get("title", "pure bending"))
    metrics = {"max_vertex_moment_minus_driven_operator_Nm": err,
               "max_curvature_spread_1_per_m": float(np.max(np.ptp(res.K, axis=1))),
               "K_max_1_per_m": float(K.max()), "cycles": 3 * len(pc.get("levels", PROTOCOL_LEVELS)),
               "M_max_Nm": float(res.M.max()), "newton_iterations_max": int(res.iterations.max())}
    return ScenarioOutput(summary={"rod": repr(rod), "metrics": metrics},
                          timeseries={"K": K, "M_mid": res.M[:, rod.N // 2], "M_driven": ref,
                                      "tip_moment": res.tip_moment},
                          figures={"pure_bending": fig})


def cantilever_law(lc: dict):
    """(law, memory0) of the cantilever cases: ``type`` "preisach" (default,
    :func:`cable_preisach`, demagnetised) or "stops" (:func:`cable_stops`)."""
    kind = str(lc.get("type", "preisach"))
    if kind == "preisach":
        law, _ = cable_preisach(lc)
        return law, demagnetized_memory(law)
    if kind == "stops":
        law = cable_stops(lc)
        return law, law.x0.copy()
    raise ScenarioError(f"law.type must be 'preisach' or 'stops' (got {kind!r})")


def _cantilever(cfg):
    from .rod import Rod
    rc = cfg.get("rod", {})
    law, mem = cantilever_law(cfg.get("law", {}))
    return Rod(N=int(rc.get("N", 40)), L=float(rc.get("L", 0.4)), law=law,
               EA=rc.get("EA"), GA=rc.get("GA"), rhoA=float(rc.get("rhoA", 0.0)),
               rhoI=float(rc.get("rhoI", 0.0)), memory0=mem)


def vertex_dissipation(rod, K, i0, i1, sub=10):
    """Σ_j ℓ_j ∮ M_j dK_j [J] over the load steps i0..i1 (a closed cycle): each vertex's
    curvature history K[:, j] (linear between steps, ``sub`` samples per step) driven
    on its own through the moment law from the rod's initial memory (hystmech.drive),
    loop energy by hystmech.analysis.loop_energy. Independent of the rod solver's
    moments. Returns the per-vertex energies ℓ_j ∮ M_j dK_j (N+1,)."""
    from ... import drive
    from ...analysis import loop_energy

    K = np.asarray(K, dtype=float)
    out = np.empty(K.shape[1])
    s = np.arange(sub) / sub
    for j in range(K.shape[1]):
        k = K[:, j]
        Kf = np.append((k[:-1, None] + s[None, :] * np.diff(k)[:, None]).ravel(), k[-1])
        M = drive(rod.law, np.arange(Kf.size, dtype=float), Kf, x0=rod.memory0,
                  store_state=False).force
        a, b = i0 * sub, i1 * sub + 1
        out[j] = rod.ell[j] * loop_energy(Kf[a:b], M[a:b])
    return out


def cyclic_path(P_max, cycles, steps_per_quarter):
    q = int(steps_per_quarter)
    seg = [np.linspace(0, P_max, q + 1)]
    for _ in range(int(cycles)):
        seg += [np.linspace(P_max, -P_max, 2 * q + 1)[1:], np.linspace(-P_max, P_max, 2 * q + 1)[1:]]
    seg.append(np.linspace(P_max, 0.0, q + 1)[1:])
    return np.concatenate(seg)


def run_cantilever_cyclic(cfg: dict, out: Path, progress) -> ScenarioOutput:
    from .rod import quasi_static

    rod = _cantilever(cfg)
    lc = cfg.get("load", {})
    P_max = float(lc.get("P_max", 3.0))
    q = int(lc.get("steps_per_quarter", 25))
    cycles = int(lc.get("cycles", 2))
    if cycles < 2:
        raise ScenarioError(f"load.cycles must be in [2, inf) to compare two cycles (got {cycles})")
    from ...limits import first

    full = cyclic_path(P_max, cycles, q)
    path = np.asarray(first(full))      # a work-limited run: the first load steps
    res = quasi_static(rod, tip_force=path, progress=progress)
    tip = res.tip
    n_c = 4 * q
    cyc = {}
    if path.size == full.size:
        # the last two full cycles (each from +P_max back to +P_max)
        b = path.size - 1 - q
        a = b - n_c
        F = path[a:b + 1]; y = tip[a:b + 1, 1]
        W_cycle = float(np.sum(0.5 * (F[1:] + F[:-1]) * np.diff(y)))
        D = vertex_dissipation(rod, res.K, a, b)
        cyc = {"tip_work_last_cycle_J": W_cycle,
               "vertex_dissipation_last_cycle_J": float(D.sum()),
               "work_minus_dissipation_rel": float(W_cycle / D.sum() - 1.0),
               "shape_drift_over_last_cycle_m": float(np.max(np.abs(res.r[b] - res.r[a]))),
               "last_two_cycles_max_difference_m":
                   float(np.max(np.abs(res.r[a - n_c:a + 1] - res.r[a:b + 1])))}
    plt = _plt()
    fig, ax = plt.subplots(1, 2, figsize=(11, 4.5))
    for k in np.linspace(0, path.size - 1, 9).astype(int):
        r = res.r[k]
        ax[0].plot(r[:, 0], r[:, 1], lw=1, label=f"step {k}, P = {path[k]:.2f} N")
    ax[0].set_aspect("equal"); ax[0].set_xlabel("x [m]"); ax[0].set_ylabel("y [m]")
    ax[0].legend(fontsize=6)
    ax[1].plot(tip[:, 1], path, lw=1)
    ax[1].set_xlabel("tip deflection y [m]"); ax[1].set_ylabel("tip load P [N]")
    fig.suptitle(cfg.get("title", "cantilever"))
    fig2, ax2 = plt.subplots(figsize=(6, 4))
    ax2.plot(rod.s_nodes, res.K[-1]); ax2.set_xlabel("s [m]")
    ax2.set_ylabel("residual curvature after unloading [1/m]")
    metrics = {"P_max_N": P_max, "P_max_L2_over_EI0": P_max * rod.L ** 2 / rod.EI0,
               "tip_deflection_max_m": float(np.max(np.abs(tip[:, 1]))),
               "curvature_max_1_per_m": float(np.max(np.abs(res.K))),
               "residual_tip_deflection_m": float(tip[-1, 1]),
               "residual_curvature_max_1_per_m": float(np.max(np.abs(res.K[-1]))),
               **cyc,           # (the cycle balance needs the whole path)
               "newton_iterations_max": int(res.iterations.max()),
               "newton_iterations_mean": float(res.iterations.mean())}
    return ScenarioOutput(summary={"rod": repr(rod), "metrics": metrics},
                          timeseries={"P": path, "tip_x": tip[:, 0], "tip_y": tip[:, 1]},
                          figures={"cantilever_shapes_and_loop": fig, "residual_curvature": fig2})


def run_dynamic(cfg: dict, out: Path, progress) -> ScenarioOutput:
    from .rod import dynamic, quasi_static

    rod = _cantilever(cfg)
    lc = cfg.get("load", {}); sc = cfg.get("solver", {})
    P0 = float(lc.get("P_release", 2.0))
    st = quasi_static(rod, tip_force=np.linspace(0, P0, int(lc.get("steps", 20)))).state
    omega1 = 1.875104 ** 2 * np.sqrt(rod.EI0 / (rod.rhoA * rod.L ** 4))
    T1 = 2 * np.pi / omega1
    from ...limits import max_work

    dt = T1 / float(sc.get("steps_per_period", 400))
    t_end = float(sc.get("periods", 8)) * T1
    if max_work() is not None:          # a work-limited run: the first time steps
        t_end = min(t_end, max_work() * dt)
    d = dynamic(rod, t_end, dt,
                start=st, damping=float(sc.get("damping", 0.0)),
                newmark_gamma=float(sc.get("newmark_gamma", 0.5)), progress=progress)
    y = d.tip[:, 1]
    # first-mode period from the response itself (the hysteretic law softens it)
    im0 = d.tip_maxima(0.5 * T1)
    T_obs = float(np.median(np.diff(d.t[im0]))) if im0.size > 1 else T1
    cyc = d.cycles(T_obs)
    plt = _plt()
    fig, ax = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    ax[0].plot(d.t, y); ax[0].plot(d.t[cyc["i0"]], y[cyc["i0"]], "o", ms=3)
    ax[0].set_ylabel("tip y [m]")
    ax[1].plot(d.t, d.E_mech, label="T + V + ½EI_el K² (mechanical)")
    ax[1].plot(d.t, d.W_hyst, label="work absorbed by the hysteretic part")
    ax[1].plot(d.t, d.energy_balance - d.energy_balance[0], label="energy balance error")
    ax[1].set_xlabel("t [s]"); ax[1].set_ylabel("[J]"); ax[1].legend(fontsize=7)
    E0 = float(d.E_mech[0])
    metrics = {"T1_linear_s": T1, "T1_observed_s": T_obs, "n_cycles": int(cyc["lost"].size),
               "energy_lost_per_cycle_J": cyc["lost"].tolist(),
               "hysteretic_work_per_cycle_J": cyc["W_hyst"].tolist(),
               "damping_work_per_cycle_J": cyc["W_damp"].tolist(),
               "cycle_balance_error_rel": (float(np.max(np.abs(cyc["balance_error"]))
                                           / max(np.max(np.abs(cyc["lost"])), 1e-300))
                                          if cyc["lost"].size else None),
               "tip_maxima_m": y[cyc["i0"]].tolist(),
               "initial_mechanical_energy_J": E0,
               "energy_balance_error_J": float(np.ptp(d.energy_balance)),
               "energy_balance_error_rel": float(np.ptp(d.energy_balance) / E0)}
    return ScenarioOutput(summary={"rod": repr(rod), "metrics": metrics},
                          timeseries={"t": d.t, "tip_x": d.tip[:, 0], "tip_y": y,
                                      "T": d.T, "V": d.V, "V_bend": d.V_bend,
                                      "W_bend": d.W_bend, "W_hyst": d.W_hyst},
                          figures={"dynamic": fig})
