"""Fits of the laws without a dedicated method, with starts and bounds read off the
record (amplitude, force level, speed), through :func:`~hystmech.identify.fit_element`
(output-error least squares, several starts, intervals valid under coloured noise).
Used by ``hystmech identify dahl|lugre|bouc-wen|maxwell-slip``."""
from __future__ import annotations

import numpy as np

from .dataset import Dataset
from .generic import fit_element
from .result import FitResult


def _scales(ds: Dataset):
    U = 0.5 * float(np.ptp(ds.u))
    Fr = 0.5 * float(np.ptp(ds.force))
    V = float(np.max(np.abs(ds.velocity)))
    if not (U > 0 and Fr > 0 and V > 0):
        raise ValueError("the record needs a moving displacement and a varying force")
    return U, Fr, V


def fit_dahl(ds: Dataset, *, n_starts: int = 3, seed: int = 0) -> FitResult:
    """Dahl ρ [1/m], Fc [N]: start ρ·amplitude = 3, Fc = half the force range; bounds
    ρ·amplitude in [1e-3, 1e4], Fc in [1e-2, 1e2] x that level."""
    U, Fr, _ = _scales(ds)
    return fit_element(ds, "Dahl", {"rho": (1e-3 / U, 1e4 / U), "Fc": (Fr / 100, Fr * 100)},
                       start={"rho": 3.0 / U, "Fc": Fr}, n_starts=n_starts, seed=seed,
                       rtol=1e-9)


def fit_lugre(ds: Dataset, *, n_starts: int = 4, seed: int = 0) -> FitResult:
    """LuGre σ0, σ1, Fc, Fs, vs, σ2 (β = 1): start Fc = 0.8, Fs = 1.0 x half the force
    range, vs = a tenth of the peak speed, σ0 a pre-sliding distance of 1 % of the
    amplitude; random starts with Fs < Fc are redrawn. Drives with the measured
    velocity when the record has one."""
    U, Fr, V = _scales(ds)
    s0 = Fr / (0.01 * U)
    bounds = {"sigma0": (s0 / 1e3, s0 * 1e3), "sigma1": (s0 * U / V * 1e-6, s0 * U / V * 10),
              "Fc": (Fr / 100, Fr * 10), "Fs": (Fr / 100, Fr * 10), "vs": (V / 1e4, V * 10),
              "sigma2": (Fr / V * 1e-6, Fr / V * 10)}
    start = {"sigma0": s0, "sigma1": s0 * U / V * 1e-3, "Fc": 0.8 * Fr, "Fs": Fr,
             "vs": V / 10, "sigma2": Fr / V * 1e-2}
    return fit_element(ds, "LuGre", bounds, start=start, n_starts=n_starts, seed=seed,
                       use_velocity=ds.v is not None, rtol=1e-9)


def fit_bouc_wen(ds: Dataset, *, n: float | None = None, n_starts: int = 3,
                 seed: int = 0) -> FitResult:
    """Bouc-Wen A, β, γ, k_el with n = 1 (the Noël & Schoukens benchmark's), then n free
    from there when ``n`` is None; start: initial stiffness 5 x (force range/amplitude),
    saturation z = A/(β + γ) at the force level."""
    U, Fr, _ = _scales(ds)
    K = Fr / U
    A0 = 5 * K
    b1 = {"A": (K / 100, K * 1e4), "beta": (0.0, 100 * A0 / Fr), "gamma": (-50 * A0 / Fr, 100 * A0 / Fr),
          "k_el": (-10 * K, 10 * K)}
    r = fit_element(ds, "BoucWen", b1, start={"A": A0, "beta": 0.7 * A0 / Fr, "gamma": 0.3 * A0 / Fr,
                                              "k_el": 0.0},
                    fixed={"n": 1.0 if n is None else float(n)}, n_starts=n_starts, seed=seed,
                    rtol=1e-9)
    if n is not None:
        return r
    p = r.params
    S = abs(p["beta"]) + abs(p["gamma"])
    # β, γ scale as z_s^(1 − n) when n moves (A/(β + γ) = z_s^n): bounds a decade and a
    # half either side of the n = 1 values
    b2 = {"A": (p["A"] / 100, p["A"] * 100), "n": (0.3, 4.0), "beta": (0.0, 40 * S),
          "gamma": (-4 * S, 40 * S), "k_el": b1["k_el"]}
    try:
        r2 = fit_element(ds, "BoucWen", b2, start={k: p[k] for k in b2 if k != "n"} | {"n": 1.0},
                         n_starts=1, rtol=1e-9)
    except ValueError:
        return r
    return r2 if r2.merit["rmse"] <= r.merit["rmse"] else r


def fit_maxwell_slip(ds: Dataset, *, elements: int = 3) -> FitResult:
    """Maxwell-slip k_i [N/m], δ_i [m] of ``elements`` elasto-slip elements: slip
    deflections δ spread over the amplitude, stiffnesses sharing the force level."""
    U, Fr, _ = _scales(ds)
    N = int(elements)
    if N < 1:
        raise ValueError(f"elements must be in [1, inf) (got {elements})")
    delta = U * np.arange(1, N + 1) / (N + 1)
    k = Fr / (N * delta)
    from ..components import get_element_class

    el = get_element_class("MaxwellSlip")(k=k, delta=delta)
    return fit_element(ds, el, {"k": (float(k.min()) / 1e3, float(k.max()) * 1e3),
                                "delta": (U * 1e-4, 2 * U)}, n_starts=1)
