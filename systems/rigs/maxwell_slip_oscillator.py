"""Single-degree-of-freedom oscillator with modified Maxwell-slip friction.

A mass m [kg] on a spring K [N/m] (and a small viscous damper c [N·s/m]) rubs through
the 5-asperity modified Maxwell-slip element of Jankowski, Marszał & Stefański (2017),
eqs. (1)-(7), with the parameter set of REFERENCE.md (kt = 1e6 N/m, kn = 2e6 N/m,
μ = 0.5, d = 1.1e-6 m and the paper's five asperity heights, so Δ_i = h_i − d).

Default mass and spring: m = 1 kg, K = 4e4 N/m. When every asperity slips the
oscillator rings at √(K/m)/2π = 31.8 Hz; when they all stick the asperity springs
(5·kt = 5e6 N/m) add up to √((K + 5kt)/m)/2π = 357 Hz, so a large free decay shows
both the Coulomb-like slipping regime (amplitude loss per half cycle ≈ 2ΣFc_i/K with
ΣFc_i = Σ kt·Δ_i = 4.93 N, i.e. ≈ 0.25 mm) and the final pre-sliding micro-vibration.

Excitation: ``"free"`` (decay from x0), ``"force"`` F(t) = F1·cos(Ωt) on the mass, or
``"base"`` (spring, damper and friction attached to a base moving as
x_b = Xb·cos(Ωt)).
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ...components.base import check_finite, check_nonnegative, check_positive
from ..assembly import Assembly, Harmonic
from ..simulate import simulate

HEIGHTS = (1.21667e-6, 1.65000e-6, 2.08330e-6, 2.51670e-6, 2.95000e-6)   # m, the paper's
FRICTION = dict(kt=1e6, kn=2e6, mu=0.5, d=1.1e-6)                       # REFERENCE.md set


def paper_friction(**changes):
    """The 5-asperity MaxwellSlip element (Jankowski et al. (2017), eq. (2) Δ_i)."""
    from ...components.maxwell_slip import MaxwellSlip

    kw = dict(FRICTION, heights=HEIGHTS)
    kw.update(changes)
    return MaxwellSlip.from_heights(**kw)


def maxwell_slip_oscillator(*, m: float = 1.0, K: float = 4e4, c: float = 2.0, friction=None,
                            excitation: str = "free", x0: float = 1e-3, v0: float = 0.0,
                            amplitude: float = 0.0, omega: float = 2 * math.pi * 25.0) -> Assembly:
    """The oscillator as an :class:`Assembly` (DOF "mass"; element "friction").

    m [kg] > 0, K [N/m] > 0, c [N·s/m] >= 0; friction: a MaxwellSlip element (default:
    :func:`paper_friction`); excitation "free" | "force" (amplitude [N]) | "base"
    (amplitude [m], base DOF "base"); omega [rad/s] > 0; x0 [m], v0 [m/s] initial state.
    """
    m = check_positive("m", m)
    K = check_positive("K", K)
    c = check_nonnegative("c", c)
    if excitation not in ("free", "force", "base"):
        raise ValueError(f"excitation must be one of free, force, base (got {excitation!r})")
    amplitude = check_finite("amplitude", amplitude)
    omega = check_positive("omega", omega)
    fr = paper_friction() if friction is None else friction
    a = Assembly()
    a.add_dof("mass", mass=m, x0=x0, v0=v0)
    anchor = "ground"
    if excitation == "base":
        a.impose("base", u=Harmonic(0.0, amplitude, omega, 0.0))
        anchor = "base"
    a.add_spring("mass", anchor, k=K, name="spring")
    if c > 0:
        a.add_damper("mass", anchor, c=c, name="damper")
    a.add_element("friction", fr, "mass", anchor)
    if excitation == "force":
        a.add_force("mass", Harmonic(0.0, amplitude, omega, 0.0), name="shaker")
    return a


def natural_frequencies(m=1.0, K=4e4, friction=None):
    """(slipping, sticking) natural frequencies [Hz]: √(K/m)/2π and √((K + Σk_i)/m)/2π."""
    fr = paper_friction() if friction is None else friction
    ks = float(np.sum(np.asarray(fr.k)[np.asarray(fr.delta) > 0]))
    return math.sqrt(K / m) / (2 * math.pi), math.sqrt((K + ks) / m) / (2 * math.pi)


def _one_case(cfg, name, case, progress, frac):
    osc = dict(cfg.get("oscillator", {}))
    solver = dict(cfg.get("solver", {}))
    method = solver.pop("method", "projection")
    t_end = float(case.pop("t_end", 0.5))
    a = maxwell_slip_oscillator(**osc, **case)
    progress(frac, f"{name}: {method} to t = {t_end} s")
    r = simulate(a, (0.0, t_end), method=method, **solver)
    return a, r


def run(cfg: dict, out: Path, progress):
    """Scenario runner: free decay and forced response, plots, energy balance."""
    import matplotlib.pyplot as plt

    from ...runner_io import ScenarioOutput

    from ...limits import first

    cases = {k: dict(v) for k, v in cfg.get("cases", {"free": {"excitation": "free"}}).items()}
    cases = dict(first(cases.items()))   # a work-limited run: the first N cases, each whole
    figs, metrics, series = {}, {}, {}
    osc = dict(cfg.get("oscillator", {}))
    f_slip, f_stick = natural_frequencies(osc.get("m", 1.0), osc.get("K", 4e4))
    metrics["f_slip_Hz"] = f_slip
    metrics["f_stick_Hz"] = f_stick
    for ci, (name, case) in enumerate(cases.items()):
        a, r = _one_case(cfg, name, case, progress, ci / max(len(cases), 1))
        el = a.element("friction")
        x = r.x("mass")
        F = r.force("friction")
        Z = r.state("friction")
        slip = el.slipping(Z)
        series[f"{name}.t"] = r.t
        series[f"{name}.x"] = x
        series[f"{name}.F_friction"] = F
        metrics[f"{name}.x_max_m"] = float(np.max(np.abs(x)))
        metrics[f"{name}.energy_balance_rel_error"] = r.energy_error()
        e = r.energy()
        metrics[f"{name}.dissipated_friction_J"] = float(e["dissipated"]["friction"][-1])
        metrics[f"{name}.slip_fraction_per_asperity"] = slip.mean(axis=0).tolist()
        if case.get("excitation", "free") == "free":
            # amplitude loss per half cycle in the slipping regime vs Coulomb 2ΣFc/K
            v = r.v("mass")
            turn = np.flatnonzero(v[1:] * v[:-1] < 0) + 1
            amps = np.abs(x[np.concatenate([[0], turn])])
            amps = amps[amps > 20 * np.max(el.delta)]
            if amps.size >= 2:
                metrics[f"{name}.decay_per_half_cycle_m"] = float(np.mean(-np.diff(amps)))
                metrics[f"{name}.coulomb_decay_per_half_cycle_m"] = float(
                    2 * np.sum(el.k * el.delta) / osc.get("K", 4e4))
        fig, ax = plt.subplots(2, 2, figsize=(11, 7))
        ax[0, 0].plot(r.t, x * 1e6)
        ax[0, 0].set_xlabel("t [s]"); ax[0, 0].set_ylabel("x [µm]")
        ax[0, 0].set_title("displacement")
        u = r.deflection("friction")[0]
        ax[0, 1].plot(u * 1e6, F)
        ax[0, 1].set_xlabel("relative displacement [µm]"); ax[0, 1].set_ylabel("F friction [N]")
        ax[0, 1].set_title("friction force against displacement")
        for i in range(Z.shape[1]):
            ax[1, 0].plot(r.t, el.k[i] * Z[:, i], label=f"asperity {i + 1}", rasterized=True)
        ax[1, 0].set_xlabel("t [s]"); ax[1, 0].set_ylabel("k_i Z_i [N]")
        ax[1, 0].legend(fontsize=7, loc="upper right")
        ax[1, 0].set_title("asperity forces (eq. (7))")
        ax[1, 1].imshow(slip.T, aspect="auto", interpolation="nearest", cmap="Greys",
                        extent=[r.t[0], r.t[-1], Z.shape[1] + 0.5, 0.5])
        ax[1, 1].set_xlabel("t [s]"); ax[1, 1].set_ylabel("asperity")
        ax[1, 1].set_title("slip (black) / stick (white)")
        fig.suptitle(f"Maxwell-slip oscillator: {name}")
        fig.tight_layout()
        figs[f"{name}"] = fig
    progress(1.0, "done")
    n = max(v.size for v in series.values())
    ts = {k: np.pad(v, (0, n - v.size), constant_values=np.nan) for k, v in series.items()}
    summary = {"metrics": metrics,
               "model": "Jankowski, Marszał & Stefański (2017), eqs. (1)-(7); REFERENCE.md set"}
    return ScenarioOutput(summary=summary, timeseries=ts, figures=figs)
