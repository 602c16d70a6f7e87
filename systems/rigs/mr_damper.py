"""MR-damper test rig: a piston driven by a hydraulic actuator through the damper.

Newton's law for the piston (viscous + Dahl paper, eq. (1)):  m·ẍ = Fh − F,
with F the damper force of the asymmetric viscous + Dahl model (eqs. (27)-(33),
:class:`~hystmech.components.AsymmetricViscousDahl`, identified values of §5–7) and Fh
the actuator force. The actuator is modelled as a stiff PD tracking loop,
Fh = Kp·(x_ref − x) + Kd·(ẋ_ref − ẋ), i.e. a spring Kp and a damper Kd between the
piston and an imposed reference DOF "ref" moving along the wave-periodic displacement
of the paper's Fig. 6 (period 5 s: increasing for 2.5 s from Xmin to Xmax, then
decreasing; here x_ref(τ) = Xmin + ΔX·(τ − β·sin(2πτ)/2π), τ = t/2.5 on the rise, and
its mirror image on the fall, so |ẋ_ref| ranges over (ΔX/2.5)·[1 − β, 1 + β]
= [0.067, 0.125] m/s for β = 0.3 — above the paper's 0.01 m/s floor and covering its
regression-window speeds 0.0804–0.1067 m/s).

Assumptions (not in the paper): piston mass m = 50 kg, Kp = 1e9 N/m, Kd = 4e5 N·s/m
(tracking error ≈ F/Kp < 0.1 mm). The damper force F, piston x and ẋ are what the
paper's transducers measure; :func:`mr_damper_rig_data` returns them as synthetic
measurements.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ...components.base import check_nonnegative, check_positive, check_range
from ..assembly import Assembly
from ..simulate import simulate

# identified values (viscous + Dahl paper, §5–7; REFERENCE.md)
PAPER = dict(kx1=1.6299e5, kw1=5.2620e4, kx2=1.3352e5, kw2=6.2986e4, rho=768.73)
XMIN, XMAX = -0.1197, 0.1209            # m
PERIOD = 5.0                            # s


def wave_reference(Xmin=XMIN, Xmax=XMAX, period=PERIOD, beta=0.3):
    """(x_ref(t), v_ref(t)): the wave-periodic displacement [m] and velocity [m/s]
    (viscous + Dahl paper, §4 properties (i)-(iv), Fig. 6). Vectorised callables."""
    dX = Xmax - Xmin
    half = 0.5 * period

    def phase(t):
        s = np.mod(np.asarray(t, dtype=float), period)
        up = s < half
        tau = np.where(up, s, s - half) / half
        return up, tau

    def x_ref(t):
        up, tau = phase(t)
        q = dX * (tau - beta * np.sin(2 * np.pi * tau) / (2 * np.pi))
        r = np.where(up, Xmin + q, Xmax - q)
        return r if r.ndim else float(r)

    def v_ref(t):
        up, tau = phase(t)
        sp = dX / half * (1 - beta * np.cos(2 * np.pi * tau))
        r = np.where(up, sp, -sp)
        return r if r.ndim else float(r)

    return x_ref, v_ref


def mr_damper_rig(*, m=50.0, Kp=1e9, Kd=4e5, damper=None, Xmin=XMIN, Xmax=XMAX,
                  period=PERIOD, beta=0.3, w0=0.0) -> Assembly:
    """The rig as an :class:`Assembly`: DOF "piston", imposed "ref", spring "actuator_P"
    and damper "actuator_D" (ref → piston), element "damper" (piston → ground).

    m [kg] > 0, Kp [N/m] > 0, Kd [N·s/m] >= 0, damper: a force element (default
    AsymmetricViscousDahl with the paper's values and w(0) = w0), Xmin < Xmax [m],
    period [s] > 0, beta in [0, 0.9] shape of the wave (see module docstring).
    """
    from ...components.viscous_dahl import AsymmetricViscousDahl

    m = check_positive("m", m)
    Kp = check_positive("Kp", Kp)
    Kd = check_nonnegative("Kd", Kd)
    period = check_positive("period", period)
    beta = check_range("beta", beta, 0.0, 0.9)
    if not Xmax > Xmin:
        raise ValueError(f"Xmax must be > Xmin = {Xmin!r} (got {Xmax!r})")
    el = damper if damper is not None else AsymmetricViscousDahl(**PAPER, w0=w0)
    x_ref, v_ref = wave_reference(Xmin, Xmax, period, beta)
    a = Assembly()
    a.add_dof("piston", mass=m, x0=Xmin)
    a.impose("ref", u=x_ref, v=v_ref)
    a.add_spring("ref", "piston", k=Kp, name="actuator_P")
    a.add_damper("ref", "piston", c=Kd, name="actuator_D")
    a.add_element("damper", el, "piston", "ground")
    return a


def mr_damper_rig_data(*, periods: int = 4, fs: float = 1000.0, noise_F: float = 0.0,
                       noise_x: float = 0.0, seed: int = 0, rtol: float = 1e-8, **rig):
    """Synthetic "measured" data of the MR-damper rig: (t [s], x [m], v [m/s], F [N]).

    periods (>= 1) of the 5-s wave sampled at fs [Hz]; x, v the piston displacement and
    velocity, F the damper force (the force transducer). Optional Gaussian noise of
    standard deviation noise_F [N] and noise_x [m] (seeded). Other keywords go to
    :func:`mr_damper_rig` (m, Kp, Kd, damper, Xmin, Xmax, period, beta, w0).
    """
    periods = int(periods)
    if periods < 1:
        raise ValueError(f"periods must be >= 1 (got {periods})")
    fs = check_positive("fs", fs)
    noise_F = check_nonnegative("noise_F", noise_F)
    noise_x = check_nonnegative("noise_x", noise_x)
    a = mr_damper_rig(**rig)
    period = float(rig.get("period", PERIOD))
    t_end = periods * period
    n = int(round(t_end * fs)) + 1
    t = np.linspace(0.0, t_end, n)
    r = simulate(a, (0.0, t_end), method="BDF", t_eval=t, rtol=rtol, energy=False)
    x, v, F = r.x("piston").copy(), r.v("piston").copy(), r.force("damper").copy()
    if noise_F or noise_x:
        rng = np.random.default_rng(seed)
        F += noise_F * rng.standard_normal(n)
        x += noise_x * rng.standard_normal(n)
    return t, x, v, F


def dahl_w_from_force(F, v, kx1, kw1, kx2, kw2):
    """w from measured force and velocity, eqs. (32)-(35): Fd = F − Fv, w = Fd/κw."""
    Fv = np.where(v >= 0, kx1 * v, kx2 * v)
    Fd = F - Fv
    return np.where(Fd >= 0, Fd / kw1, Fd / kw2)


def dahl_steady_branches(x, rho, Xmin, Xmax):
    """(w↑(x), w↓(x)) of the steady Dahl loop, eqs. (16)-(18)."""
    a = 2.0 / (1.0 + math.exp(-rho * (Xmax - Xmin)))
    return 1.0 - a * np.exp(-rho * (x - Xmin)), -1.0 + a * np.exp(rho * (x - Xmax))


def regression_eq15(t, x, F, t0, t1, t2):
    """(κx, κw) by linear regression of eq. (15) on [t1, t2] from the origin t0."""
    i0 = int(np.searchsorted(t, t0))
    ts, xs, Fs = t[i0:], x[i0:], F[i0:]
    I = np.concatenate([[0.0], np.cumsum(0.5 * (Fs[1:] + Fs[:-1]) * np.diff(ts))])
    sel = (ts >= t1) & (ts <= t2)
    dt = ts[sel] - ts[0]
    alpha = (xs[sel] - xs[0]) / dt
    beta = I[sel] / dt
    kx, kw = np.polyfit(alpha, beta, 1)
    return float(kx), float(kw)


def run(cfg: dict, out: Path, progress):
    """Scenario runner: force against time and displacement, the w-loop of Fig. 11."""
    import matplotlib.pyplot as plt

    from ...runner_io import ScenarioOutput

    rig = dict(cfg.get("rig", {}))
    samp = dict(cfg.get("sampling", {}))
    progress(0.0, "simulating the MR-damper rig")
    t, x, v, F = mr_damper_rig_data(**samp, **rig)
    progress(0.8, "analysing the last period")
    period = float(rig.get("period", PERIOD))
    last = t >= t[-1] - period - 1e-9
    p = dict(PAPER)
    w = dahl_w_from_force(F, v, p["kx1"], p["kw1"], p["kx2"], p["kw2"])
    xl, wl, vl = x[last], w[last], v[last]
    Xmin_a, Xmax_a = float(xl.min()), float(xl.max())
    wu, wd = dahl_steady_branches(xl, p["rho"], Xmin_a, Xmax_a)
    w_th = np.where(vl >= 0, wu, wd)
    # away from the reversals (where the PD loop's transient makes a tiny minor loop)
    inner = (xl > Xmin_a + 0.01) & (xl < Xmax_a - 0.01)
    t0p = t[-1] - period
    kx1, kw1 = regression_eq15(t, x, F, t0p + 0.2041, t0p + 0.6924, t0p + 2.1572)
    kx2, kw2 = regression_eq15(t, -x, -F, t0p + 2.5 + 0.2041, t0p + 2.5 + 0.6924,
                               t0p + 2.5 + 2.1572)
    metrics = {
        "F_min_N": float(F.min()), "F_max_N": float(F.max()),
        "x_min_m": Xmin_a, "x_max_m": Xmax_a,
        "v_abs_min_m_s": float(np.min(np.abs(v[last & (np.abs(v) > 0)]))),
        "w_loop_max_abs_error_vs_eq16_18": float(np.max(np.abs(wl - w_th)[inner])),
        "kx1_eq15": kx1, "kw1_eq15": kw1, "kx2_eq15": kx2, "kw2_eq15": kw2,
        "kx1_paper": p["kx1"], "kw1_paper": p["kw1"], "kx2_paper": p["kx2"], "kw2_paper": p["kw2"],
    }
    fig, ax = plt.subplots(1, 3, figsize=(15, 4))
    ax[0].plot(t, F / 1e3)
    ax[0].set_xlabel("t [s]"); ax[0].set_ylabel("F [kN]"); ax[0].set_title("force against time (Fig. 7)")
    ax[1].plot(x[last], F[last] / 1e3)
    ax[1].set_xlabel("x [m]"); ax[1].set_ylabel("F [kN]"); ax[1].set_title("force against displacement")
    ax[2].plot(xl, wl, "k", label="w from F, eqs. (34)-(35)")
    xs = np.linspace(Xmin_a, Xmax_a, 400)
    bu, bd = dahl_steady_branches(xs, p["rho"], Xmin_a, Xmax_a)
    ax[2].plot(xs, bu, color="0.6", ls="--", label="w↑, w↓ eqs. (16)-(18)")
    ax[2].plot(xs, bd, color="0.6", ls="--")
    ax[2].set_xlabel("x [m]"); ax[2].set_ylabel("w"); ax[2].set_title("w-loop (Fig. 11)")
    ax[2].legend(fontsize=8)
    fig.tight_layout()
    fig2, ax2 = plt.subplots(figsize=(6, 4))
    ax2.plot(t, x)
    ax2.set_xlabel("t [s]"); ax2.set_ylabel("x [m]"); ax2.set_title("piston displacement (Fig. 6)")
    progress(1.0, "done")
    summary = {"metrics": metrics,
               "assumptions": {"m_kg": rig.get("m", 50.0), "Kp_N_m": rig.get("Kp", 1e9),
                               "Kd_Ns_m": rig.get("Kd", 4e5), "beta": rig.get("beta", 0.3)}}
    return ScenarioOutput(summary=summary, timeseries={"t": t, "x": x, "v": v, "F": F, "w": w},
                          figures={"force": fig, "displacement": fig2})
