"""Generate the Noël & Schoukens (2016) Bouc-Wen benchmark data shipped in
scenarios/data/noel_schoukens.npz, with an integrator independent of hystmech.

    m ÿ + c ẏ + k y + z = u(t),
    ż = α ẏ − β (γ |ẏ| |z|^(ν−1) z + δ ẏ |z|^ν)

m = 2 kg, c = 10 N s/m, k = 5e4 N/m, α = 5e4 N/m, β = 1e3, γ = 0.8, δ = −1.1, ν = 1.
The input is built as the benchmark's example script (BoucWen_ExampleIntegration.m)
does: a random-phase multisine defined at the integration rate fs·upsamp = 750·20 Hz
on the lines 1..ceil(fmax/fres) without those below floor(fmin/fres) (5–150 Hz), scaled
to u = A·u/std(u) with A = 50 N, repeated over the periods; between the 15 kHz samples
the force is the band-limited signal itself (degree-7 Lagrange interpolation, see
``force``; the benchmark's Newmark integrator at h = 1/15000 s sees the samples at its
nodes: interpolated linearly instead, the response moves by 4e-8 m at most, measured on
the first 2 s). The sweep (test) is B sin(2π(f0 t + r t²/2)), 40 N, 20 → 50 Hz at
10 Hz/min (Noël & Schoukens (2016), §5), evaluated by its formula. Integration: our own right-hand side (below,
not hystmech's), scipy's DOP853 at rtol 1e-11, from rest, output read at the 750 Hz
samples by the integrator's dense output (the benchmark decimates its 15 kHz output
with FIR filters instead: within the 0–375 Hz band the two agree). Output noise:
white Gaussian, 8e-6 m RMS (the benchmark's 8e-3 mm), on the training set and on
copies of the test outputs (the clean test outputs are stored too).

Run:  python benchmarks/gen_noel_schoukens_data.py [out.npz]   (~10 min on one core)
"""
from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit
from scipy.integrate import solve_ivp

FS, UPSAMP, N = 750.0, 20, 8192
TRUE = dict(m=2.0, c=10.0, k=5e4, alpha=5e4, beta=1e3, gamma=0.8, delta=-1.1, nu=1.0)
NOISE = 8e-6


def multisine_fine(seed, A=50.0, fmin=5.0, fmax=150.0):
    """One period of the benchmark's multisine on the 15 kHz integration grid."""
    fsint = FS * UPSAMP
    nint = N * UPSAMP
    fres = fsint / nint
    lines = np.arange(1, math.ceil(fmax / fres) + 1)
    lines = lines[lines >= math.floor(fmin / fres)]
    rng = np.random.default_rng(seed)
    U = np.zeros(nint, complex)
    U[lines] = np.exp(2j * np.pi * rng.uniform(size=lines.size))
    u = 2.0 * np.real(np.fft.ifft(U))
    return A * u / np.std(u, ddof=1)


SWEEP = (40.0, 20.0, 10.0 / 60.0, 180.0)    # B [N], f0 [Hz], r [Hz/s], T [s]: 20 -> 50 Hz


@njit(cache=True)
def force(t, ug, fsint, sweep):
    """u(t): the sweep's formula, or the multisine's 15 kHz samples (one period, ug)
    interpolated by the degree-7 Lagrange polynomial through the 8 nearest samples: the
    band-limited (5–150 Hz) signal to ~1e-14 relative ((ωh)^8/8!, ωh = 0.063), smooth
    enough for DOP853 at rtol 1e-11 (a linear interpolant's kink at every sample would
    force ~20 steps per 15 kHz interval)."""
    if sweep[0] > 0.0:
        B, f0, r = sweep[0], sweep[1], sweep[2]
        return B * math.sin(2 * math.pi * (f0 * t + 0.5 * r * t * t))
    x = t * fsint
    i = int(math.floor(x))
    a = x - i
    n = ug.size
    s = 0.0
    for j in range(-3, 5):
        w = 1.0
        for l in range(-3, 5):
            if l != j:
                w *= (a - l) / (j - l)
        s += w * ug[(i + j) % n]
    return s


@njit(cache=True)
def rhs(t, s, ug, fsint, sweep, m, c, k, alpha, beta, gamma, delta, nu):
    """The benchmark's equations (module docstring), state s = (y, ẏ, z)."""
    y, v, z = s[0], s[1], s[2]
    u = force(t, ug, fsint, sweep)
    az = abs(z)
    zdot = alpha * v - beta * (gamma * abs(v) * az ** (nu - 1.0) * z + delta * v * az ** nu)
    out = np.empty(3)
    out[0] = v
    out[1] = (u - k * y - c * v - z) / m
    out[2] = zdot
    return out


def simulate(ug, n_out, label, sweep=(0.0, 0.0, 0.0)):
    """y at the n_out samples k/fs of the response from rest to the force: one period
    ug of the multisine at 15 kHz, or the sweep (B, f0, r)."""
    sweep = np.asarray(sweep, float)
    p = TRUE
    fsint = FS * UPSAMP
    t_out = np.arange(n_out) / FS
    s = np.zeros(3)
    Y = np.empty(n_out)
    chunk = 7500                      # samples per solve_ivp call (10 s): progress
    t0 = time.process_time()
    Y[0] = 0.0
    for a in range(0, n_out - 1, chunk):
        b = min(n_out - 1, a + chunk)          # integrate t_out[a] -> t_out[b]
        sol = solve_ivp(lambda t, x: rhs(t, x, ug, fsint, sweep, p["m"], p["c"], p["k"],
                                         p["alpha"], p["beta"], p["gamma"], p["delta"],
                                         p["nu"]),
                        (t_out[a], t_out[b]), s, method="DOP853", rtol=1e-11,
                        atol=[1e-15, 1e-13, 1e-9], t_eval=t_out[a + 1:b + 1])
        if not sol.success:
            raise RuntimeError(sol.message)
        Y[a + 1:b + 1] = sol.y[0]
        s = sol.y[:, -1].copy()
        print(f"{label}: {b + 1}/{n_out} samples, {time.process_time() - t0:.0f} s CPU",
              flush=True)
    return Y


def _record(name, fn):
    """fn() once: its result kept in a scratch file beside the output, so that a rerun
    after an interruption loses no finished record."""
    tmp = Path(OUT).with_suffix(f".{name}.partial.npy")
    if tmp.exists():
        return np.load(tmp)
    y = fn()
    np.save(str(tmp) + ".tmp.npy", y)
    Path(str(tmp) + ".tmp.npy").replace(tmp)
    return y


OUT = None


def main(out):
    global OUT
    OUT = out
    rng = np.random.default_rng(20160425)
    ms_train = multisine_fine(seed=1)
    ms_test = multisine_fine(seed=2)
    P_train, P_test = 10, 2
    data = {}
    for name, one, P in (("train", ms_train, P_train), ("test_multisine", ms_test, P_test)):
        data[f"{name}_y_clean"] = _record(name, lambda: simulate(one, P * N, name))
        data[f"{name}_u"] = np.tile(one[::UPSAMP], P)
    B, f0, r, T = SWEEP
    n = int(round(T * FS)) + 1
    data["test_sweep_y_clean"] = _record("test_sweep", lambda: simulate(
        ms_train, n, "test_sweep", (B, f0, r)))
    t = np.arange(n) / FS
    data["test_sweep_u"] = B * np.sin(2 * np.pi * (f0 * t + 0.5 * r * t ** 2))
    for name in ("train", "test_multisine", "test_sweep"):
        yc = data[f"{name}_y_clean"]
        data[f"{name}_y"] = yc + NOISE * rng.standard_normal(yc.size)
    data["fs"] = np.array(FS)
    data["period"] = np.array(N)
    data["noise_rms"] = np.array(NOISE)
    data["true_params"] = np.array([TRUE[k] for k in ("m", "c", "k", "alpha", "beta", "gamma",
                                                      "delta", "nu")])
    # float32 keeps 7 digits: 1e-10 m of a 2e-3 m signal, 5e-6 N of 50 N, far below
    # the 8e-6 m noise (the file stays < 5 MB)
    comp = {k: (v.astype(np.float32) if v.ndim else v) for k, v in data.items()}
    np.savez_compressed(out, **comp)
    for name in ("train", "test_multisine", "test_sweep"):
        Path(out).with_suffix(f".{name}.partial.npy").unlink()
    print(f"wrote {out} ({Path(out).stat().st_size / 1e6:.2f} MB)")


if __name__ == "__main__":
    here = Path(__file__).resolve().parents[1] / "scenarios" / "data" / "noel_schoukens.npz"
    main(sys.argv[1] if len(sys.argv) > 1 else here)
