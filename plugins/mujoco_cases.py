"""Scenario runner ``mujoco-lugre-joint``: an arm on a vertical hinge (a pendulum
swinging in the horizontal plane, so gravity does not act on its angle) with LuGre
friction in the joint, dragged through a torsional spring whose far end turns at a
constant rate: the stick-slip benchmark of Canudas de Wit et al. (1995) as a MuJoCo
model with the hystmech LuGre plugin, against the same system in hystmech's Assembly.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

ARM = """<mujoco model="lugre-arm">
  <option timestep="{h}" gravity="0 0 -9.81" integrator="Euler"/>
  <worldbody>
    <body name="arm">
      <joint name="hinge" type="hinge" axis="0 0 1"/>
      <geom type="capsule" fromto="0 0 0 {L} 0 0" size="0.02" mass="{m}"/>
    </body>
  </worldbody>
  <actuator><position name="drive" joint="hinge" kp="{kd}"/></actuator>
</mujoco>"""


def _lugre(lc: dict):
    from ..components import get_element_class

    return get_element_class("LuGre")(
        sigma0=float(lc.get("sigma0", 1e5)), sigma1=float(lc.get("sigma1", 316.0)),
        Fc=float(lc.get("Fc", 1.0)), Fs=float(lc.get("Fs", 1.5)),
        vs=float(lc.get("vs", 0.001)), beta=float(lc.get("beta", 2.0)),
        sigma2=float(lc.get("sigma2", 0.4)))


def stick_phases(v, drive_rate, frac=0.02):
    """Number of sticking phases: maximal runs with |v| < frac·drive_rate entered from
    a slip (|v| > drive_rate)."""
    n, slipping = 0, False
    for vi in np.abs(v):
        if vi > drive_rate:
            slipping = True
        elif vi < frac * drive_rate and slipping:
            n += 1
            slipping = False
    return n


def run_lugre_joint(cfg: dict, out: Path, progress):
    import mujoco
    import mujoco.rollout

    from ..runner_io import ScenarioError, ScenarioOutput
    from ..systems import Assembly, simulate
    from . import mujoco as hmj

    ac = cfg.get("arm", {}); dc = cfg.get("drive", {}); rc = cfg.get("run", {})
    law = _lugre(cfg.get("law", {}))
    h = float(rc.get("h", 1e-4)); T = float(rc.get("t_end", 20.0))
    kd = float(dc.get("k", 2.0)); rate = float(dc.get("rate", 0.1))
    if not (0 < h <= 1e-3):
        raise ScenarioError(f"run.h must be in (0, 1e-3] s (got {h})")
    if not (T > 0 and T / h <= 5e6):
        raise ScenarioError(f"run.t_end must be in (0, 5e6·h] (got {T})")
    spec = mujoco.MjSpec.from_string(ARM.format(h=h, L=float(ac.get("length", 0.5)),
                                                m=float(ac.get("mass", 12.0)), kd=kd))
    hmj.add_element(spec, law, joint="hinge", name="friction")
    model = spec.compile()
    d = mujoco.MjData(model)
    mujoco.mj_forward(model, d)
    J = float(d.M[0])                        # the arm's moment of inertia [kg·m²]
    n = int(round(T / h))
    t = np.arange(1, n + 1) * h
    progress(0.05, f"MuJoCo: {n} steps")
    full = mujoco.mjtState.mjSTATE_FULLPHYSICS
    s0 = np.empty(mujoco.mj_stateSize(model, full))
    mujoco.mj_getState(model, d, s0, full)
    ctrl = (rate * (t - h))[None, :, None]
    st, _ = mujoco.rollout.rollout(model, d, s0, ctrl)
    q, v = st[0, :, 1], st[0, :, 2]
    progress(0.3, "hystmech Assembly (BDF)")
    a = Assembly()
    a.add_dof("arm", mass=J)
    a.impose("drive", lambda tt: rate * tt, lambda tt: rate + 0.0 * tt)
    a.add_spring("arm", "drive", k=kd)
    a.add_element("friction", law, "arm", "ground")
    every = max(1, n // 4000)
    te = t[every - 1::every]
    r = simulate(a, (0.0, T), method="BDF", t_eval=te, rtol=1e-9, atol=1e-12)
    qm, vm = q[every - 1::every], v[every - 1::every]
    qr, vr = r.x("arm"), r.v("arm")
    Fr = r.force("friction")
    # friction torque from the MuJoCo element states along the run
    adr = int(model.plugin_stateadr[0])
    off = st.shape[2] - model.npluginstate      # the plugin state is the last block
    # the element's block of plugin_state starts with the law's state x
    X = st[0, every - 1::every, off + adr: off + adr + law.n_states]
    Fm = np.array([law.force_of(x, 0.0, vi) for x, vi in zip(X, vm)])
    err_q = float(np.max(np.abs(qm - qr)) / np.max(np.abs(qr)))
    nstick_m, nstick_r = stick_phases(vm, rate), stick_phases(vr, rate)
    progress(0.9, "figures")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(1, 3, figsize=(14, 4))
    ax[0].plot(te, qm, lw=0.9, label="MuJoCo + hystmech plugin")
    ax[0].plot(te, qr, "--", lw=0.8, label="hystmech Assembly (BDF)")
    ax[0].plot(te, rate * te, ":", lw=0.6, label="drive")
    ax[0].set_xlabel("t [s]"); ax[0].set_ylabel("angle [rad]"); ax[0].legend()
    ax[1].plot(te, vm, lw=0.9); ax[1].plot(te, vr, "--", lw=0.8)
    ax[1].set_xlabel("t [s]"); ax[1].set_ylabel("angular velocity [rad/s]")
    ax[2].plot(vm, Fm, lw=0.6); ax[2].plot(vr, Fr, "--", lw=0.6)
    ax[2].set_xlabel("angular velocity [rad/s]"); ax[2].set_ylabel("friction torque [N·m]")
    fig.suptitle(cfg.get("title", "LuGre joint stick-slip"))
    metrics = {"inertia_kg_m2": J, "steps": n,
               "max_angle_error_rel": err_q,
               "max_velocity_error_rad_s": float(np.max(np.abs(vm - vr))),
               "stick_phases_mujoco": nstick_m, "stick_phases_assembly": nstick_r,
               "peak_velocity_mujoco_rad_s": float(vm.max()),
               "peak_velocity_assembly_rad_s": float(vr.max()),
               "max_friction_torque_Nm": float(np.max(np.abs(Fm)))}
    return ScenarioOutput(summary={"law": repr(law), "metrics": metrics},
                          timeseries={"t": te, "angle_mujoco": qm, "angle_assembly": qr,
                                      "velocity_mujoco": vm, "velocity_assembly": vr,
                                      "torque_mujoco": Fm, "torque_assembly": Fr},
                          figures={"lugre_joint": fig})


# declared for `hystmech run` (entry point hystmech.runners, see pyproject.toml): the
# tables and keys the runner reads, and its work estimate
def _schema():
    from ..schema import REAL, Table

    return {"arm": Table({"length": REAL, "mass": REAL}),
            "drive": Table({"k": REAL, "rate": REAL}),
            "law": Table({k: REAL for k in ("sigma0", "sigma1", "sigma2", "Fc", "Fs", "vs",
                                            "beta")}),
            "run": Table({"h": REAL, "t_end": REAL})}


def _work(cfg):
    rc = cfg.get("run", {}) if isinstance(cfg.get("run", {}), dict) else {}
    h, T = float(rc.get("h", 1e-4)), float(rc.get("t_end", 20.0))
    if not (h > 0 and T > 0):
        return {}
    return {"steps": (T / h, f"run.h = {h:g} s over {T:g} s is {T / h:.3g} MuJoCo steps")}


run_lugre_joint.SCHEMA = _schema()
run_lugre_joint.WORK = _work
