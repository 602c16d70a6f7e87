"""Fit-quality figures for a predicted versus a measured force history."""
from __future__ import annotations

import numpy as np


def rmse(meas, pred) -> float:
    """Root-mean-square error [N]."""
    e = np.asarray(pred, float) - np.asarray(meas, float)
    return float(np.sqrt(np.mean(e * e)))


def nrmse(meas, pred) -> float:
    """RMSE divided by the range (max - min) of the measured signal [-]."""
    rng = float(np.ptp(meas))
    return rmse(meas, pred) / rng if rng > 0 else float("inf")


def r2(meas, pred) -> float:
    """Coefficient of determination 1 - SS_res / SS_tot [-]."""
    m = np.asarray(meas, float)
    ss_tot = float(np.sum((m - m.mean()) ** 2))
    ss_res = float(np.sum((np.asarray(pred, float) - m) ** 2))
    return 1.0 - ss_res / ss_tot if ss_tot > 0 else float("nan")


def max_error(meas, pred) -> float:
    """Largest absolute error [N]."""
    return float(np.max(np.abs(np.asarray(pred, float) - np.asarray(meas, float))))


def phase_lag(t, meas, pred, max_lag: float | None = None) -> float:
    """Time shift [s] of pred relative to meas that maximises their cross-correlation
    (positive: the prediction lags), refined by a parabola through the peak.
    Uses the uniform resampling of t; max_lag defaults to a tenth of the record."""
    t = np.asarray(t, float)
    n = t.size
    dt = (t[-1] - t[0]) / (n - 1)
    tu = t[0] + dt * np.arange(n)
    a = np.interp(tu, t, meas) - np.mean(meas)
    b = np.interp(tu, t, pred) - np.mean(pred)
    L = int(min(n - 1, round((max_lag if max_lag else 0.1 * (t[-1] - t[0])) / dt)))
    nfft = 1 << int(np.ceil(np.log2(2 * n)))
    c = np.fft.irfft(np.conj(np.fft.rfft(a, nfft)) * np.fft.rfft(b, nfft), nfft)
    lags = np.r_[np.arange(0, L + 1), np.arange(-L, 0)]
    # normalised over the overlap (Cauchy-Schwarz: exactly 1 at the lag of a pure
    # scaling or delay), so the record's ends do not pull the peak towards zero
    ca = np.r_[0.0, np.cumsum(a * a)]
    cb = np.r_[0.0, np.cumsum(b * b)]
    pos = lags >= 0
    ea = np.where(pos, ca[n - np.abs(lags)], ca[n] - ca[np.abs(lags)])
    eb = np.where(pos, cb[n] - cb[np.abs(lags)], cb[n - np.abs(lags)])
    den = np.sqrt(np.maximum(ea * eb, 1e-300))
    vals = c[lags % nfft] / den
    k = int(np.argmax(vals))
    shift = float(lags[k])
    if 0 < k < lags.size - 1 and lags[k - 1] == lags[k] - 1 and lags[k + 1] == lags[k] + 1:
        y0, y1, y2 = vals[k - 1], vals[k], vals[k + 1]
        den = y0 - 2 * y1 + y2
        if den != 0:
            shift += 0.5 * (y0 - y2) / den
    return shift * dt


def cycle_energies(u, force, cycles_idx) -> np.ndarray:
    """Energy dissipated per cycle [J]: the closed integral of F du over each
    (start, end) index pair (trapezoidal rule)."""
    u = np.asarray(u, float)
    f = np.asarray(force, float)
    out = []
    for a, b in cycles_idx:
        du = np.diff(u[a:b + 1])
        out.append(float(np.sum(0.5 * (f[a:b] + f[a + 1:b + 1]) * du)))
    return np.asarray(out)


def fit_percent(meas, pred) -> float:
    """Fit [%] as MATLAB's ``compare``: 100 (1 − ‖y − ŷ‖ / ‖y − mean(y)‖) (NRMSE
    normalised by the standard deviation; 100 is perfect, below 0 worse than the mean)."""
    m = np.asarray(meas, float)
    den = float(np.linalg.norm(m - m.mean()))
    return 100.0 * (1.0 - float(np.linalg.norm(np.asarray(pred, float) - m)) / den) if den > 0 \
        else float("nan")


def peak_error(meas, pred) -> float:
    """Relative error of the peak |F|: (max |ŷ| − max |y|) / max |y| [-]."""
    pk = float(np.max(np.abs(meas)))
    return (float(np.max(np.abs(pred))) - pk) / pk if pk > 0 else float("nan")


def summary(t, meas, pred) -> dict:
    """RMSE [N], NRMSE [-], fit [%] (MATLAB compare), max error [N], peak error [-], R² [-]
    and phase lag [s] in one dict."""
    return {"rmse": rmse(meas, pred), "nrmse": nrmse(meas, pred),
            "fit_percent": fit_percent(meas, pred), "max_error": max_error(meas, pred),
            "peak_error": peak_error(meas, pred), "r2": r2(meas, pred),
            "phase_lag_s": phase_lag(t, meas, pred)}
