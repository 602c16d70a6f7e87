"""Small compiled helpers shared by the identification routines (not public API)."""
from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True)
def dahl_state(u, rho, w0):
    """Dahl state w along a piecewise-linear displacement u [m] (exact per segment):
    w_{k+1} = s + (w_k - s) exp(-rho |u_{k+1} - u_k|), s = sgn(u_{k+1} - u_k).
    Ikhouane, Mañosa & Pujol, §1 (the solution of ẇ = ρ(u̇ − |u̇|w) for constant u̇)."""
    n = u.size
    w = np.empty(n)
    w[0] = w0
    for k in range(n - 1):
        du = u[k + 1] - u[k]
        if du > 0.0:
            w[k + 1] = 1.0 + (w[k] - 1.0) * math.exp(-rho * du)
        elif du < 0.0:
            w[k + 1] = -1.0 + (w[k] + 1.0) * math.exp(rho * du)
        else:
            w[k + 1] = w[k]
    return w


def first_order_lag(t, x, tau):
    """y with tau·ẏ + y = x, y(0) = x(0), x held linear between samples (exact for
    piecewise-linear x); tau = 0 returns x."""
    if tau <= 0:
        return np.asarray(x, float)
    return _lag(np.asarray(t, float), np.asarray(x, float), float(tau))


@njit(cache=True)
def _lag(t, x, tau):
    y = np.empty(x.size)
    y[0] = x[0]
    for k in range(x.size - 1):
        h = t[k + 1] - t[k]
        a = math.exp(-h / tau)
        slope = (x[k + 1] - x[k]) / h
        # exact response to a ramp input over the step
        y[k + 1] = a * y[k] + (1.0 - a) * x[k] + slope * (h - tau * (1.0 - a))
    return y
