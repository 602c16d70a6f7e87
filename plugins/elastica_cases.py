"""Scenario runner ``elastica-cable-3d``: a clamped cable (PyElastica Cosserat rod
with the cable moment law of Manfredo, Dörlich, Linn & Arnold (2023): the rod's EI_el
plus one hystmech hysteretic element per Voronoi node and bending axis), bent in plane
by a tip load, then cycled out of plane until the cycle has settled, then unloaded:
tip loops, residual curvature, energy per cycle and its balance; its planar pre-load
against hystmech.systems.rigs.rod.

Settled: two consecutive cycles whose element dissipations agree to ``load.settle_tol``
(relative, default 1e-3), at most ``load.cycles`` cycles. Energy balance over the last
(settled) cycle, every term with PositionVerlet's own quadrature (:class:`EnergyLedger`):
work of the tip load = work taken from the rod by the element couples + damper loss +
Δ stored energy (kinetic, with the inertia J/ε the stepper uses, plus elastic, measured
as minus the rod's internal forces' and couples' work along the run). It closes to
rounding (~1e-13 relative). PyElastica's own energy functions do not close it (a gap
of ~2e-3 of the work in, independent of dt): its bending/shear energies are not the
potentials of its dilatation-scaled internal forces and couples (−W_internal differs
from Δ(bending + shear energy) by ~5 %), its rotational energy ½ω·Jω/ε leaves out the
work of its ε-rate couple, and the element couples transcribed with 1/ε³ do ~0.9 % less
work on the rod than the law's own loop ∮M dκ ℓ (HystereticBendingMemory.work): both
are reported.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from numba import njit


@njit(cache=True)
def _ledger_step(acc, v0, w0, v1, w1, g, dt, m, J, e, fe, te, fi, ti):
    # PositionVerlet: v⁻ = v_n + dt·a(mid), ω⁻ likewise, then the damper scales them by g;
    # with Δx' = dt/2·(v_n + v⁻), Δθ' = dt/2·(ω_n + ω⁻) (material frame) the kinetic
    # energy with the step's inertia (m, J/ε at mid-step) changes by exactly the loads'
    # work: ½m(v⁻² − v_n²) = F·Δx', ½ω⁻·(J/ε)ω⁻ − ½ω_n·(J/ε)ω_n = τ·Δθ' (uniform damper:
    # one factor g = exp(−c·dt) for v and ω)
    kin0 = 0.0
    kin1 = 0.0
    for k in range(v1.shape[1]):
        for i in range(3):
            dx = 0.5 * dt * (v0[i, k] + v1[i, k] / g)
            acc[0] += fe[i, k] * dx
            acc[2] += fi[i, k] * dx
            kin0 += 0.5 * m[k] * v0[i, k] * v0[i, k]
            kin1 += 0.5 * m[k] * v1[i, k] * v1[i, k]
    for k in range(w1.shape[1]):
        for i in range(3):
            dth = 0.5 * dt * (w0[i, k] + w1[i, k] / g)
            acc[1] -= te[i, k] * dth
            acc[2] += ti[i, k] * dth
            j0 = 0.0
            j1 = 0.0
            for j in range(3):
                j0 += J[i, j, k] * w0[j, k]
                j1 += J[i, j, k] * w1[j, k]
            kin0 += 0.5 * w0[i, k] * j0 / e[k]
            kin1 += 0.5 * w1[i, k] * j1 / e[k]
    # the damper removes ½m(v⁻² − v²) = (1/g² − 1)·½m v², and likewise for ω
    acc[3] += (1.0 / (g * g) - 1.0) * kin1
    acc[4] += kin1 - kin0
    v0[...] = v1
    w0[...] = w1


class EnergyLedger:
    """Energy terms of a PyElastica Cosserat rod under PositionVerlet with an
    AnalyticalLinearDamper (uniform constant c), accumulated once per step (call
    :meth:`record` from a callback, after every step) with the stepper's own
    quadrature, so that they balance to rounding:

    ``work_in`` [J] (external forces: Σ F·Δx') = ``element`` (work taken from the rod by
    the external couples, here the hystmech elements: −Σ τ·Δθ') + ``damper`` +
    ``kinetic − internal`` (Δ kinetic energy with the inertia m, J/ε of each step, minus
    the internal forces' and couples' work: the change of stored energy).
    ``values()``: [work_in, element, internal, damper, kinetic]."""

    def __init__(self, rod, c: float, dt: float):
        import math

        if not (c >= 0 and dt > 0):
            raise ValueError(f"need c >= 0 [1/s] and dt > 0 [s] (got {c!r}, {dt!r})")
        self.g = math.exp(-c * dt)
        self.dt = float(dt)
        self.acc = np.zeros(5)
        self.v0 = rod.velocity_collection.copy()
        self.w0 = rod.omega_collection.copy()

    def record(self, rod):
        """Add the step just completed (call before the external loads are zeroed:
        from a CallBackBaseClass, which PyElastica runs first)."""
        _ledger_step(self.acc, self.v0, self.w0, rod.velocity_collection,
                     rod.omega_collection, self.g, self.dt, rod.mass,
                     rod.mass_second_moment_of_inertia, rod.dilatation,
                     rod.external_forces, rod.external_torques, rod.internal_forces,
                     rod.internal_torques)

    def values(self):
        return self.acc.copy()


def clamped_rod(N: int, L: float, r: float, rho: float, E: float, *, tip_force=None,
                damping: float | None = None, dt: float | None = None):
    """(sim, rod): a PyElastica simulator holding one straight Cosserat rod of N elements
    along x (normal z), length L [m], radius r [m], density rho [kg/m³], Young's modulus
    E [Pa] (shear modulus E/3), clamped at its first node (position and director);
    with the tip load ``tip_force(t) -> (F_y, F_z)`` [N] when given and PyElastica's
    AnalyticalLinearDamper (constant ``damping`` [1/s], time step ``dt`` [s]) when
    ``damping`` is given. Not finalized: elements, loads and callbacks may be added."""
    import elastica as ea

    class Sim(ea.BaseSystemCollection, ea.Constraints, ea.Forcing, ea.CallBacks, ea.Damping):
        pass

    class TipForce(ea.NoForces):
        def apply_forces(self, system, time=np.float64(0.0)):
            fy, fz = tip_force(float(time))
            system.external_forces[1, -1] += fy
            system.external_forces[2, -1] += fz

    sim = Sim()
    rod = ea.CosseratRod.straight_rod(N, np.zeros(3), np.array([1.0, 0, 0]),
                                      np.array([0, 0, 1.0]), L, r, rho, youngs_modulus=E,
                                      shear_modulus=E / 3)
    sim.append(rod)
    sim.constrain(rod).using(ea.OneEndFixedBC, constrained_position_idx=(0,),
                             constrained_director_idx=(0,))
    if tip_force is not None:
        sim.add_forcing_to(rod).using(TipForce)
    if damping is not None:
        sim.dampen(rod).using(ea.AnalyticalLinearDamper, uniform_damping_constant=damping,
                              time_step=dt)
    return sim, rod


def run_cable_3d(cfg: dict, out: Path, progress):
    import elastica as ea

    from ..components.linear import LinearSpring
    from ..runner_io import ScenarioError, ScenarioOutput
    from ..systems.rigs.rod import Rod, quasi_static
    from . import elastica as hel

    rc = cfg.get("rod", {}); lc = cfg.get("law", {}); pc = cfg.get("load", {})
    N = int(rc.get("N", 12)); L = float(rc.get("L", 0.4)); r = float(rc.get("radius", 0.02))
    rho = float(rc.get("density", 1000.0)); c = float(rc.get("damping", 4.0))
    dt = float(rc.get("dt", 4e-4))
    Fy = float(pc.get("F_inplane", 0.6)); Fz = float(pc.get("F_outofplane", 0.6))
    Tr = float(pc.get("ramp", 3.0)); Tc = float(pc.get("cycle", 6.0))
    nc = int(pc.get("cycles", 2)); Ts = float(pc.get("settle", 3.0))
    Th = float(pc.get("hold", 3.0))
    settle_tol = float(pc.get("settle_tol", 1e-3))
    if not (0 < settle_tol < 1):
        raise ScenarioError(f"load.settle_tol must be in (0, 1) (got {settle_tol})")
    if not (2 <= N <= 200):
        raise ScenarioError(f"rod.N must be in [2, 200] (got {N})")
    if not (0 < dt <= 1e-3):
        raise ScenarioError(f"rod.dt must be in (0, 1e-3] s (got {dt})")
    if not (2 <= nc <= 20):
        raise ScenarioError(f"load.cycles (the most cycles run until settled) must be in "
                            f"[2, 20] (got {nc})")
    from ..systems.rigs.rod_cases import cable_preisach

    law_full, P = cable_preisach({"levels": int(lc.get("levels", 30)),
                                  **{k: lc[k] for k in ("EI_el", "M_h", "m", "r0", "s0")
                                     if k in lc}})
    EI = float(law_full.parts[0].params["k"])
    m0 = P.demagnetized_state()
    E = EI / (math.pi * r ** 4 / 4)        # the rod's own bending stiffness is EI_el
    tc0 = Tr + Th                          # start of the out-of-plane cycles

    rec = []
    tt = {"t1": math.inf}                  # end of the cycles, set once settled

    def tip_force(t):
        t1 = tt["t1"]
        fy = Fy * min(t / Tr, 1.0) if t < t1 else Fy * max(0.0, 1.0 - (t - t1) / Tr)
        fz = Fz * math.sin(2 * math.pi * (t - tc0) / Tc) if tc0 <= t < t1 else 0.0
        return fy, fz

    acc = {"win": 0.0, "tip": None}

    class Record(ea.CallBackBaseClass):
        def __init__(self, every, memory):
            super().__init__()
            self.every, self.memory = every, memory

        def make_callback(self, system, time, current_step):
            tip = system.position_collection[:, -1].copy()
            if acc["tip"] is not None:
                # the step's tip impulse acted at t − dt/2 (PositionVerlet)
                fy, fz = tip_force(float(time) - 0.5 * dt)
                acc["win"] += fy * (tip[1] - acc["tip"][1]) + fz * (tip[2] - acc["tip"][2])
            acc["tip"] = tip
            if current_step > 0:           # (finalize() calls back once at t = 0)
                ledger.record(system)
            if current_step % self.every == 0:
                fy, fz = tip_force(float(time))
                ke = float(system.compute_translational_energy()
                           + system.compute_rotational_energy())
                pe = float(system.compute_bending_energy() + system.compute_shear_energy())
                rec.append([float(time), *tip, fy, fz, *system.kappa[:2, 0],
                            float(self.memory.work.sum()), acc["win"], ke + pe,
                            *ledger.values()])

    sim, rod = clamped_rod(N, L, r, rho, E, tip_force=tip_force, damping=c, dt=dt)
    mem = hel.add_hysteretic_bending(sim, rod, P, x0=m0)
    ledger = EnergyLedger(rod, c, dt)
    cyc_steps = int(round(Tc / dt))
    every = max(1, int(round(0.01 / dt)))
    while cyc_steps % every:
        every -= 1                         # a record at every cycle edge
    sim.collect_diagnostics(rod).using(Record, every=every, memory=mem)
    sim.finalize()
    stepper = ea.PositionVerlet()
    n0 = int(round(tc0 / dt))
    progress(0.05, f"PyElastica PositionVerlet, {n0} steps of pre-load, then cycles")
    time_ = ea.integrate(stepper, sim, n0 * dt, n0, progress_bar=False)
    W_cyc, settled = [], False
    for k in range(nc):
        w0 = float(mem.work.sum())
        time_ = ea.integrate(stepper, sim, cyc_steps * dt, cyc_steps, restart_time=time_,
                             progress_bar=False)
        W_cyc.append(float(mem.work.sum()) - w0)
        progress(0.05 + 0.6 * (k + 1) / nc, f"cycle {k + 1}: {W_cyc[-1]:.6g} J")
        if k > 0 and abs(W_cyc[-1] - W_cyc[-2]) <= settle_tol * abs(W_cyc[-1]):
            settled = True
            break
    tt["t1"] = time_
    n_end = int(round((Tr + Ts) / dt))
    ea.integrate(stepper, sim, n_end * dt, n_end, restart_time=time_, progress_bar=False)
    steps = n0 + len(W_cyc) * cyc_steps + n_end
    t1 = tt["t1"]
    A = np.array(rec)
    t, tip, F, kap, W = A[:, 0], A[:, 1:4], A[:, 4:6], A[:, 6:8], A[:, 8]
    Win_tip, Est_pyel = A[:, 9], A[:, 10]
    Win, Wel, Wint, Wd, Kin = A[:, 11], A[:, 12], A[:, 13], A[:, 14], A[:, 15]
    progress(0.8, "planar pre-load against hystmech.systems.rigs.rod")
    # the in-plane state after the ramp and hold (y only, at rest) vs the hystmech rod
    # clamped at the first Voronoi domain (PyElastica locks the first element)
    i_pre = int(np.searchsorted(t, tc0 - 1e-9)) - 1
    S = rod.shear_matrix[:, :, 0].diagonal()
    law = LinearSpring(k=EI) + P
    dx = L / N
    hr = Rod(N=N, L=L - dx / 2, law=law, EA=S[2], GA=S[0], memory0=law.demagnetized_state())
    ref = quasi_static(hr, tip_force=np.linspace(0.0, Fy, 31))
    tip_ref = ref.tip[-1] + np.array([dx / 2, 0.0])
    # per out-of-plane cycle (edges at recorded samples): element dissipation, work of
    # the tip load, damper loss, Δ stored energy; the balance over the last cycle
    edges = [tc0 + k * Tc for k in range(len(W_cyc) + 1)]
    idx = [int(np.argmin(np.abs(t - e))) for e in edges]
    def delta(a, k):
        return float(a[idx[k + 1]] - a[idx[k]])

    per = [dict(work_in_J=delta(Win, k), element_J=delta(Wel, k), damper_J=delta(Wd, k),
                delta_stored_J=delta(Kin, k) - delta(Wint, k),
                element_law_loop_J=delta(W, k),
                work_in_tip_displacement_J=delta(Win_tip, k),
                delta_stored_pyelastica_energies_J=delta(Est_pyel, k))
           for k in range(len(W_cyc))]
    last = per[-1]
    resid = (last["work_in_J"] - last["element_J"] - last["damper_J"]
             - last["delta_stored_J"]) / last["work_in_J"]
    resid_pyel = (last["work_in_J"] - last["element_law_loop_J"] - last["damper_J"]
                  - last["delta_stored_pyelastica_energies_J"]) / last["work_in_J"]
    progress(0.9, "figures")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(1, 3, figsize=(15, 4))
    cyc = (t >= tc0) & (t <= t1)
    ax[0].plot(tip[cyc, 2] * 1e3, F[cyc, 1], lw=0.8)
    ax[0].set_xlabel("tip z [mm]"); ax[0].set_ylabel("out-of-plane tip force [N]")
    ax[1].plot(tip[:, 1] * 1e3, tip[:, 2] * 1e3, lw=0.8)
    ax[1].set_xlabel("tip y [mm]"); ax[1].set_ylabel("tip z [mm]")
    ax[2].plot(t, kap[:, 0], lw=0.8, label="κ₁ (in plane)")
    ax[2].plot(t, kap[:, 1], lw=0.8, label="κ₂ (out of plane)")
    ax[2].set_xlabel("t [s]"); ax[2].set_ylabel("curvature at the first node [1/m]")
    ax[2].legend()
    fig.suptitle(cfg.get("title", "cable cycled out of plane"))
    metrics = {"steps": steps, "EI_el_Nm2": EI,
               "preload_tip_y_elastica_m": float(tip[i_pre, 1]),
               "preload_tip_y_hystmech_rod_m": float(tip_ref[1]),
               "preload_tip_rel_diff": float(abs(tip[i_pre, 1] - tip_ref[1]) / abs(tip_ref[1])),
               "preload_tip_speed_m_s": float(np.linalg.norm(
                   (tip[i_pre] - tip[i_pre - 1]) / (t[i_pre] - t[i_pre - 1]))),
               "cycles_run": len(W_cyc), "settled": settled,
               "settle_criterion": f"element dissipation of two consecutive cycles "
                                   f"within {settle_tol:g} (relative)",
               "dissipated_per_cycle_elements_J": W_cyc,
               "energy_per_cycle": per,
               "energy_balance_residual_last_cycle_rel": float(resid),
               "energy_balance_terms": "work_in = element + damper + delta_stored, each "
                                       "with PositionVerlet's quadrature (EnergyLedger)",
               "energy_balance_residual_with_pyelastica_energies_rel": float(resid_pyel),
               "residual_curvature_first_node_1_per_m": [float(kap[-1, 0]), float(kap[-1, 1])],
               "residual_tip_m": [float(tip[-1, 1]), float(tip[-1, 2])],
               "max_tip_speed_at_end_m_s": float(np.max(np.abs(rod.velocity_collection[:, -1])))}
    return ScenarioOutput(summary={"law": repr(P), "metrics": metrics},
                          timeseries={"t": t, "tip_x": tip[:, 0], "tip_y": tip[:, 1],
                                      "tip_z": tip[:, 2], "F_y": F[:, 0], "F_z": F[:, 1],
                                      "kappa1_node0": kap[:, 0], "kappa2_node0": kap[:, 1],
                                      "W_hysteresis": W},
                          figures={"cable_3d": fig})


# declared for `hystmech run` (entry point hystmech.runners, see pyproject.toml)
def _schema():
    from ..schema import COUNT, REAL, Table

    return {"rod": Table({"N": COUNT, "L": REAL, "radius": REAL, "density": REAL,
                          "damping": REAL, "dt": REAL}),
            "law": Table({"EI_el": REAL, "M_h": REAL, "m": REAL, "levels": COUNT, "r0": REAL,
                          "s0": REAL}),
            "load": Table({"F_inplane": REAL, "F_outofplane": REAL, "ramp": REAL, "hold": REAL,
                           "cycle": REAL, "cycles": COUNT, "settle": REAL,
                           "settle_tol": REAL})}


def _work(cfg):
    def t(name):
        v = cfg.get(name, {})
        return v if isinstance(v, dict) else {}

    rc, pc = t("rod"), t("load")
    dt = float(rc.get("dt", 4e-4))
    T = (2 * float(pc.get("ramp", 3.0)) + float(pc.get("hold", 3.0))
         + int(pc.get("cycles", 2)) * float(pc.get("cycle", 6.0)) + float(pc.get("settle", 3.0)))
    if not (dt > 0 and T > 0):
        return {}
    return {"steps": (T / dt, f"rod.dt = {dt:g} s over {T:g} s is {T / dt:.3g} "
                               f"PositionVerlet steps")}


run_cable_3d.SCHEMA = _schema()
run_cable_3d.WORK = _work
