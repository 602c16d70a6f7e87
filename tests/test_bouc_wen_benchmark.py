"""The Noël-Schoukens Bouc-Wen benchmark as an Assembly (systems/bouc_wen_benchmark.py)
against an independent plain-Python LSODA solution of its equations."""
import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from hystmech.systems.rigs.bouc_wen_benchmark import PARAMS, multisine, simulate_case


def test_multisine_is_periodic_with_the_requested_rms_and_band():
    t, u = multisine(rms=50.0, f_band=(5.0, 150.0), fs=750.0, N=1024, seed=3, upsample=4)
    us = u[::4]
    assert math.isclose(np.sqrt(np.mean(us ** 2)), 50.0, rel_tol=1e-12)
    spec = np.abs(np.fft.rfft(us))
    f = np.fft.rfftfreq(us.size, 1 / 750.0)
    assert np.max(spec[(f < 5.0) | (f > 150.0)]) < 1e-9 * np.max(spec)


@pytest.mark.slow
def test_simulate_matches_lsoda_reference():
    tg, ug = multisine(rms=50.0, fs=750.0, N=1024, seed=1, upsample=4)
    t_out = np.arange(226) / 750.0  # 0.3 s
    y, z, _ = simulate_case(tg, ug, t_out, rtol=1e-10)
    p = PARAMS
    period = tg[-1] + tg[1] - tg[0]
    Tp, Up = np.append(tg, period), np.append(ug, ug[0])

    def rhs(t, s):
        yy, v, zz = s
        u = np.interp(t % period, Tp, Up)
        a = (u - p["c"] * v - p["k"] * yy - zz) / p["m"]
        dz = p["alpha"] * v - p["beta"] * (p["gamma"] * abs(v) * zz + p["delta"] * v * abs(zz))
        return [v, a, dz]

    ref = solve_ivp(rhs, (0.0, t_out[-1]), [0.0, 0.0, 0.0], method="LSODA", t_eval=t_out,
                    rtol=1e-11, atol=[1e-14, 1e-11, 1e-8], max_step=1 / 3000.0)
    assert np.max(np.abs(y - ref.y[0])) <= 1e-6 * np.max(np.abs(ref.y[0]))
    assert np.max(np.abs(z - ref.y[2])) <= 1e-6 * np.max(np.abs(ref.y[2]))


def test_sine_sweep_phase_is_the_integral_of_a_linear_frequency():
    # zero crossings of B sin(2π∫f dt) with f = f0 + r t over T = (f1 - f0)/r: 2∫f dt
    from hystmech.systems.rigs.bouc_wen_benchmark import sine_sweep

    t, u = sine_sweep(B=40.0, f0=20.0, f1=50.0, rate=10.0, fs=750.0, upsample=4)
    T = 30.0 / (10.0 / 60.0)
    assert math.isclose(t[-1], T, abs_tol=1 / 3000.0)
    crossings = np.count_nonzero(np.signbit(u[1:]) != np.signbit(u[:-1]))
    assert abs(crossings - 2 * (20.0 * T + 0.5 * (10.0 / 60.0) * T ** 2)) <= 2
    assert math.isclose(np.max(np.abs(u)), 40.0, rel_tol=1e-4)
