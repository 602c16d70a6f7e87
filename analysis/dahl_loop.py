"""Steady hysteresis loop of the Dahl state w between two displacement extrema, its
area, and the inverse of the area function.

*A modified viscous + Dahl model for large-scale MR dampers* (Ikhouane group),
eqs. (16)-(19): for a wave-periodic displacement x between Xmin and Xmax,

    a = 2 / (1 + exp(−ρ (Xmax − Xmin)))                  (16)
    w̄↑(x) = 1 − a·exp(−ρ (x − Xmin))                      (17)
    w̄↓(x) = −1 + a·exp(ρ (x − Xmax))                      (18)
    ∫ (w̄↑ − w̄↓) dx = 2 (Xmax − Xmin) h(ν),  ν = ρ (Xmax − Xmin),
    h(ν) = 1 − (2/ν) tanh(ν/2)  (h(0) = 0, strictly increasing to 1)   (19)
"""
from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq

from ..components.base import check_array, check_finite, check_nonnegative, check_positive


def _check_span(x_min, x_max):
    x_min = check_finite("x_min", x_min)
    x_max = check_finite("x_max", x_max)
    if not x_max > x_min:
        raise ValueError(f"x_max must be in (x_min, inf) = ({x_min:g}, inf) (got {x_max!r})")
    return x_min, x_max


def dahl_steady_loop(rho, x_min, x_max, x):
    """(w̄↑(x), w̄↓(x)) [-] of the steady Dahl loop, viscous + Dahl paper eqs. (16)-(18).

    rho [1/m] > 0; x_min < x_max [m]; x [m] array (values outside [x_min, x_max] are
    rejected: the loop is only defined between the extrema).
    """
    rho = check_positive("rho", rho)
    x_min, x_max = _check_span(x_min, x_max)
    x = np.asarray(x, dtype=float)
    if not np.all(np.isfinite(x)):
        raise ValueError("x must be finite")
    if x.size and (x.min() < x_min or x.max() > x_max):
        raise ValueError(f"x must be in [x_min, x_max] = [{x_min:g}, {x_max:g}] "
                         f"(got values in [{x.min():g}, {x.max():g}])")
    a = 2.0 / (1.0 + math.exp(-rho * (x_max - x_min)))
    return 1.0 - a * np.exp(-rho * (x - x_min)), -1.0 + a * np.exp(rho * (x - x_max))


def dahl_h(nu):
    """h(ν) = 1 − (2/ν) tanh(ν/2), h(0) = 0 (viscous + Dahl paper, after eq. (19))."""
    nu = np.asarray(nu, dtype=float)
    small = np.abs(nu) < 1e-2
    safe = np.where(small, 1.0, nu)
    big = 1.0 - (2.0 / safe) * np.tanh(safe / 2.0)
    # series near 0, where the difference above loses all its digits
    ser = nu ** 2 / 12.0 - nu ** 4 / 120.0 + 17.0 * nu ** 6 / 20160.0
    out = np.where(small, ser, big)
    return float(out) if out.ndim == 0 else out


def dahl_loop_area(rho, x_min, x_max) -> float:
    """Area ∫_{Xmin}^{Xmax} (w̄↑ − w̄↓) dx [m] of the steady w-loop (viscous + Dahl paper,
    eq. (19)); multiply by κw (or Fc) for the energy dissipated per cycle [J]."""
    rho = check_positive("rho", rho)
    x_min, x_max = _check_span(x_min, x_max)
    D = x_max - x_min
    return 2.0 * D * dahl_h(rho * D)


def rho_from_loop_area(area, x_min, x_max) -> float:
    """ρ [1/m] whose steady loop between x_min and x_max [m] encloses ``area`` [m]:
    inverse of eq. (19) (h is strictly increasing; solved with scipy brentq).

    The achievable areas are 0 < area < 2 (x_max − x_min) (ρ → 0 and ρ → ∞).
    """
    area = check_nonnegative("area", area)
    x_min, x_max = _check_span(x_min, x_max)
    D = x_max - x_min
    target = area / (2.0 * D)
    if not 0.0 < target < 1.0:
        raise ValueError(f"area must be in (0, 2*(x_max - x_min)) = (0, {2 * D:g}) "
                         f"(got {area!r})")
    lo = 0.5 * math.sqrt(12.0 * target)            # h(ν) ≤ ν²/12
    while dahl_h(lo) >= target:
        lo *= 0.5
    hi = 2.0 / (1.0 - target) + 1.0                # h(ν) ≥ 1 − 2/ν
    if dahl_h(hi) <= target:
        raise ValueError(f"area = {area!r} is too close to 2*(x_max - x_min) = {2 * D:g} to "
                         f"be inverted in double precision")
    nu = brentq(lambda z: dahl_h(z) - target, lo, hi, xtol=1e-300, rtol=1e-15, maxiter=200)
    return nu / D
