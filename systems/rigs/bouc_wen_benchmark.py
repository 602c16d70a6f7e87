"""The Bouc-Wen hysteretic benchmark of Noël & Schoukens as an Assembly.

    m ÿ + c ẏ + k y + z = u(t),
    ż = α ẏ − β (γ |ẏ| |z|^(ν−1) z + δ ẏ |z|^ν)

m = 2 kg, c = 10 N·s/m, k = 5·10⁴ N/m, α = 5·10⁴ N/m, β = 10³, γ = 0.8, δ = −1.1,
ν = 1 (J.P. Noël & M. Schoukens, *Hysteretic benchmark with a dynamic
nonlinearity*, Workshop on Nonlinear System Identification Benchmarks, 2016). In
hystmech's Bouc-Wen form ż = A u̇ − β_h |u̇||z|^(n−1) z − γ_h u̇ |z|^n this is
BoucWen(A=α, beta=β·γ, gamma=β·δ, n=ν) = BoucWen(A=5e4, beta=800, gamma=-1100, n=1),
the hardening class β_h + γ_h < 0 (components/bouc_wen.py).

Excitations, the two of the benchmark (sampled at fs = 750 Hz): the random-phase
multisine of its estimation data (5–150 Hz, flat amplitude on the DFT lines, RMS 50 N,
N = 8192 samples per period: the benchmark's example script ``BoucWen_ExampleIntegration.m``,
fmin = 5, fmax = 150, A = 50 with u = A·u/std(u)) and the sine sweep of its test data set
``uval_sinesweep`` (amplitude 40 N, 20 → 50 Hz at 10 Hz/min, i.e. 180 s; Noël &
Schoukens (2016), §5 "Test signals"). The sweep's amplitude, band and rate were checked
against several independent descriptions of §5 and of the test file (153000 samples,
204 s at 750 Hz: the 24 s beyond the 180 s sweep are not described there, so they are
not reproduced); the PDF itself could not be read here. Between
samples the force is interpolated linearly on an upsampled grid (``upsample`` points per
sample, the multisine upsampled exactly by zero-padding its spectrum), so the force
seen by the integrator is a continuous function of time. Run through the public
:func:`hystmech.systems.simulate` API.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ...components.base import check_positive, check_range
from ..assembly import GROUND, Assembly

PARAMS = dict(m=2.0, c=10.0, k=5e4, alpha=5e4, beta=1e3, gamma=0.8, delta=-1.1, nu=1.0)


def bouc_wen_law(p: dict | None = None):
    """The benchmark's hysteretic force as hystmech's BoucWen (see the module docstring)."""
    from ...components.bouc_wen import BoucWen

    q = {**PARAMS, **(p or {})}
    return BoucWen(A=q["alpha"], beta=q["beta"] * q["gamma"], gamma=q["beta"] * q["delta"],
                   n=q["nu"])


def multisine(rms: float = 50.0, f_band=(5.0, 150.0), fs: float = 750.0, N: int = 8192,
              seed: int = 0, upsample: int = 8):
    """Random-phase multisine u [N] on the DFT lines k·fs/N inside f_band [Hz], equal
    amplitudes, RMS ``rms`` [N]; returned on the grid t = j/(fs·upsample) over one
    period N/fs (periodic: u(N/fs) = u(0) is not repeated)."""
    rms = check_positive("rms", rms)
    fs = check_positive("fs", fs)
    lo, hi = float(f_band[0]), float(f_band[1])
    check_range("f_band[1]", hi, lo=lo, hi=fs / 2, lo_open=True)
    M = N * upsample
    lines = np.arange(N // 2 + 1) * fs / N
    sel = (lines >= lo) & (lines <= hi)
    rng = np.random.default_rng(seed)
    U = np.zeros(M // 2 + 1, dtype=complex)
    U[:N // 2 + 1][sel] = np.exp(2j * np.pi * rng.uniform(size=int(sel.sum())))
    u = np.fft.irfft(U, n=M)
    u *= rms / np.sqrt(np.mean(u[::upsample] ** 2))
    return np.arange(M) / (fs * upsample), u


def sine_sweep(B: float = 40.0, f0: float = 20.0, f1: float = 50.0, rate: float = 10.0,
               fs: float = 750.0, upsample: int = 8):
    """Linear sine sweep u(t) = B sin(2π (f0 t + r t²/2)) [N] from f0 to f1 [Hz] at the
    rate ``rate`` [Hz/min] (r = rate/60 Hz/s, duration T = (f1 − f0)/r), on the grid
    t = j/(fs·upsample), 0 ≤ t ≤ T. The defaults are the benchmark's test sweep (40 N,
    20 → 50 Hz at 10 Hz/min; Noël & Schoukens (2016), §5)."""
    B = check_positive("B", B)
    fs = check_positive("fs", fs)
    rate = check_positive("rate", rate)
    check_range("f1", float(f1), lo=float(f0), hi=fs / 2, lo_open=True)
    r = rate / 60.0
    T = (f1 - f0) / r
    t = np.arange(int(math.floor(T * fs * upsample)) + 1) / (fs * upsample)
    return t, B * np.sin(2 * np.pi * (f0 * t + 0.5 * r * t ** 2))


def assembly(t_grid, u_grid, p: dict | None = None) -> Assembly:
    """The benchmark as an Assembly: DOF "y" (mass m) on the spring k, the damper c and
    the Bouc-Wen element "hysteresis" to ground, driven by u(t) interpolated linearly
    on (t_grid, u_grid) (periodically beyond the grid when it is one period)."""
    from numba import njit

    q = {**PARAMS, **(p or {})}
    T = np.ascontiguousarray(t_grid, dtype=float)
    U = np.ascontiguousarray(u_grid, dtype=float)
    period = T[-1] + (T[1] - T[0])
    Tp = np.append(T, period)
    Up = np.append(U, U[0])

    @njit
    def force(t):
        return np.interp(t % period, Tp, Up)

    a = Assembly()
    a.add_dof("y", mass=q["m"])
    a.add_spring("y", GROUND, k=q["k"])
    a.add_damper("y", GROUND, c=q["c"])
    a.add_element("hysteresis", bouc_wen_law(q), "y", GROUND)
    a.add_force("y", force)
    return a


def simulate_case(t_grid, u_grid, t_out, p=None, rtol: float = 1e-8, method: str = "RK45"):
    """y(t_out) [m], z(t_out) [N] of the benchmark under the force (t_grid, u_grid)."""
    from .. import simulate

    a = assembly(t_grid, u_grid, p)
    r = simulate(a, (0.0, float(t_out[-1])), method=method, t_eval=t_out, rtol=rtol,
                 energy=False)
    return r.x("y"), r.state("hysteresis")[:, 0], r


def run(cfg: dict, out: Path, progress):
    """Scenario runner ``bouc-wen-benchmark``: the sine-sweep and multisine responses,
    y(t), the loop z(y) and the output spectrum, written as CSV/JSON/PNG (the last
    multisine period, the whole sweep; the shorter series is padded in the CSV)."""
    import matplotlib.pyplot as plt

    from ...runner_io import ScenarioOutput

    p = {**PARAMS, **dict(cfg.get("system", {}))}
    sig = dict(cfg.get("signals", {}))
    fs = float(sig.get("fs", 750.0))
    N = int(sig.get("N", 8192))
    up = int(sig.get("upsample", 8))
    sol = dict(cfg.get("solver", {}))
    rtol = float(sol.get("rtol", 1e-8))
    method = str(sol.get("method", "RK45"))
    periods = int(sig.get("multisine_periods", 2))
    cases = {
        "multisine": multisine(float(sig.get("rms", 50.0)),
                               (float(sig.get("f_min", 5.0)), float(sig.get("f_max", 150.0))),
                               fs, N, int(sig.get("seed", 0)), up),
        "sweep": sine_sweep(float(sig.get("B", 40.0)), float(sig.get("f0", 20.0)),
                            float(sig.get("f1", 50.0)), float(sig.get("rate", 10.0)), fs, up),
    }
    from ...limits import first

    # a work-limited run (hystmech run --max-work N): the first N signals, each whole
    cases = dict(first(cases.items()))
    series, metrics, figs = {}, {}, {}
    for i, (name, (tg, ug)) in enumerate(cases.items()):
        progress(i / len(cases), f"{name}: simulating")
        if name == "multisine":
            t_out = np.arange(periods * N) / fs
        else:  # the whole sweep, on the sample grid
            t_out = np.arange(int(math.floor(tg[-1] * fs)) + 1) / fs
        import time

        t0 = time.perf_counter()
        y, z, r = simulate_case(tg, ug, t_out, p, rtol, method)
        metrics[f"{name}.wall_s"] = time.perf_counter() - t0
        if name == "multisine":  # the last period: steady state
            y, z, t_last = y[-N:], z[-N:], t_out[-N:]
            u_s = np.interp(t_last % (tg[-1] + tg[1] - tg[0]), tg, ug)
        else:
            t_last = t_out
            u_s = np.interp(t_last, tg, ug)
        series[f"{name}.t"] = t_last
        series[f"{name}.u"] = u_s
        series[f"{name}.y"] = y
        series[f"{name}.z"] = z
        Y = np.fft.rfft(y) / y.size
        f = np.fft.rfftfreq(y.size, 1 / fs)
        metrics[f"{name}.y_rms_m"] = float(np.sqrt(np.mean(y ** 2)))
        metrics[f"{name}.y_max_m"] = float(np.max(np.abs(y)))
        metrics[f"{name}.z_max_N"] = float(np.max(np.abs(z)))
        metrics[f"{name}.loop_work_J"] = float(np.sum(0.5 * (z[1:] + z[:-1]) * np.diff(y)))
        fig, ax = plt.subplots(1, 3, figsize=(14, 4))
        ax[0].plot(t_last, y * 1e3, lw=0.6)
        ax[0].set_xlabel("t [s]"); ax[0].set_ylabel("y [mm]"); ax[0].set_title("output y(t)")
        ax[1].plot(y * 1e3, z, lw=0.5)
        ax[1].set_xlabel("y [mm]"); ax[1].set_ylabel("z [N]"); ax[1].set_title("loop z(y)")
        ax[2].semilogy(f, np.abs(Y) + 1e-30, lw=0.6)
        ax[2].set_xlabel("f [Hz]"); ax[2].set_ylabel("|Y| [m]"); ax[2].set_title("spectrum")
        fig.suptitle(f"Noël-Schoukens Bouc-Wen benchmark: {name}")
        fig.tight_layout()
        figs[name] = fig
    progress(1.0, "done")
    summary = {"metrics": metrics,
               "model": "Noël & Schoukens (2016) Bouc-Wen benchmark; BoucWen(A=5e4, "
                        "beta=800, gamma=-1100, n=1), solved by hystmech.systems.simulate"}
    return ScenarioOutput(summary=summary, timeseries=series, figures=figs)
