"""Scenario runner ``elastica-cable-3d``: a clamped cable (PyElastica Cosserat rod
with the cable moment law of Manfredo, Dörlich, Linn & Arnold (2023): the rod's EI_el
plus one hystmech hysteretic element per Voronoi node and bending axis), bent in plane
by a tip load, then cycled out of plane, then unloaded: tip loops, residual curvature,
energy dissipated per cycle; its planar pre-load against hystmech.systems.rigs.rod."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np


def run_cable_3d(cfg: dict, out: Path, progress):
    import elastica as ea

    from ..components.linear import LinearSpring
    from ..scenario import ScenarioError, ScenarioOutput
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
    if not (2 <= N <= 200):
        raise ScenarioError(f"rod.N must be in [2, 200] (got {N})")
    if not (0 < dt <= 1e-3):
        raise ScenarioError(f"rod.dt must be in (0, 1e-3] s (got {dt})")
    if not (1 <= nc <= 20):
        raise ScenarioError(f"load.cycles must be in [1, 20] (got {nc})")
    from ..systems.rigs.rod_cases import cable_preisach

    law_full, P = cable_preisach({"levels": int(lc.get("levels", 30)),
                                  **{k: lc[k] for k in ("EI_el", "M_h", "m", "r0", "s0")
                                     if k in lc}})
    EI = float(law_full.parts[0].params["k"])
    m0 = P.demagnetized_state()
    E = EI / (math.pi * r ** 4 / 4)        # the rod's own bending stiffness is EI_el
    tc0 = Tr + Th                          # start of the out-of-plane cycles
    t1 = tc0 + nc * Tc                     # their end
    T = t1 + Tr + Ts

    def tip_force(t):
        fy = Fy * min(t / Tr, 1.0) if t < t1 else Fy * max(0.0, 1.0 - (t - t1) / Tr)
        fz = Fz * math.sin(2 * math.pi * (t - tc0) / Tc) if tc0 <= t < t1 else 0.0
        return fy, fz

    class TipForce(ea.NoForces):
        def apply_forces(self, system, time=np.float64(0.0)):
            fy, fz = tip_force(float(time))
            system.external_forces[1, -1] += fy
            system.external_forces[2, -1] += fz

    rec = []

    class Record(ea.CallBackBaseClass):
        def __init__(self, every, memory):
            super().__init__()
            self.every, self.memory = every, memory

        def make_callback(self, system, time, current_step):
            if current_step % self.every == 0:
                fy, fz = tip_force(float(time))
                rec.append([float(time), *system.position_collection[:, -1], fy, fz,
                            *system.kappa[:2, 0], float(self.memory.work.sum())])

    class Sim(ea.BaseSystemCollection, ea.Constraints, ea.Forcing, ea.CallBacks, ea.Damping):
        pass

    sim = Sim()
    rod = ea.CosseratRod.straight_rod(N, np.zeros(3), np.array([1.0, 0, 0]),
                                      np.array([0, 0, 1.0]), L, r, rho, youngs_modulus=E,
                                      shear_modulus=E / 3)
    sim.append(rod)
    sim.constrain(rod).using(ea.OneEndFixedBC, constrained_position_idx=(0,),
                             constrained_director_idx=(0,))
    sim.add_forcing_to(rod).using(TipForce)
    sim.dampen(rod).using(ea.AnalyticalLinearDamper, uniform_damping_constant=c, time_step=dt)
    mem = hel.add_hysteretic_bending(sim, rod, P, x0=m0)
    every = max(1, int(round(0.01 / dt)))
    sim.collect_diagnostics(rod).using(Record, every=every, memory=mem)
    sim.finalize()
    steps = int(round(T / dt))
    progress(0.05, f"PyElastica PositionVerlet, {steps} steps")
    hel.integrate(sim, T, steps)
    A = np.array(rec)
    t, tip, F, kap, W = A[:, 0], A[:, 1:4], A[:, 4:6], A[:, 6:8], A[:, 8]
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
    # dissipation per out-of-plane cycle: hysteretic elements and the tip load's work
    edges = [tc0 + k * Tc for k in range(nc + 1)]
    idx = [int(np.argmin(np.abs(t - e))) for e in edges]
    W_cyc = [float(W[idx[k + 1]] - W[idx[k]]) for k in range(nc)]
    Wtip = [float(np.trapezoid(F[idx[k]:idx[k + 1] + 1, 1], tip[idx[k]:idx[k + 1] + 1, 2]))
            for k in range(nc)]
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
               "dissipated_per_cycle_elements_J": W_cyc,
               "work_of_tip_force_per_cycle_J": Wtip,
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
                           "cycle": REAL, "cycles": COUNT, "settle": REAL})}


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
