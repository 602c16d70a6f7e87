"""Compiled stiff integration: ``simulate(..., method="auto")`` (issue 14 item 3).

1. The Bouc-Wen benchmark of Noël & Schoukens (m = 2 kg, c = 10 N·s/m, k = 5e4 N/m,
   ż = α ẏ − β(γ|ẏ|z + δ ẏ|z|), α = 5e4, β = 1e3, γ = 0.8, δ = −1.1, ν = 1, i.e.
   hystmech BoucWen(A=5e4, beta=800, gamma=-1100, n=1)), driven by a random-phase
   multisine (5–150 Hz, 50 N RMS, seed 0) over 8192 samples at 750 Hz; the input is
   the multisine on the benchmark's 20× upsampled grid (15 kHz), cubic Hermite
   interpolation of u and u' (C¹; piecewise-linear input would put a kink in every
   15 kHz interval and the step sizes of every adaptive method with it).
   Target: ≤ 0.5 s (the issue measured 55 s with scipy BDF), error ≤ 1e-6·max|y|
   against scipy LSODA at rtol 1e-10 on a plain-Python right-hand side written here.
   scipy BDF on the same compiled right-hand side is timed on the first 512 samples
   and scaled ×16 (it is linear in time).
2. Canudas de Wit et al. (1995) LuGre stick-slip: 1 kg on a 2 N/m spring pulled at
   0.1 m/s, σ0 = 1e5 N/m, σ1 = √1e5 N·s/m, σ2 = 0.4 N·s/m, Fc = 1 N, Fs = 1.5 N,
   vs = 0.001 m/s (g(ν) = Fc + (Fs − Fc)exp(−(ν/vs)²)), 20 s. Target: "auto" ≥ 10×
   faster than scipy BDF on the same compiled right-hand side at the same accuracy
   (both against scipy Radau at rtol 1e-10 on a plain-Python right-hand side).

Times are the best of 3 warm runs (compilation and numba-cache loading excluded, and
reported separately).
"""
import math
import time

import numpy as np
from numba import njit

FS = 750.0
NS = 8192
UP = 20


def _multisine(seed=0):
    # u and u' on the 15 kHz grid, exactly (one period of the band-limited signal)
    rng = np.random.default_rng(seed)
    n = NS * UP
    k = np.arange(n // 2 + 1)
    f = k * FS / NS
    X = np.zeros(n // 2 + 1, complex)
    band = (f >= 5.0) & (f <= 150.0)
    X[band] = np.exp(2j * np.pi * rng.random(band.sum()))
    u = np.fft.irfft(X, n)
    du = np.fft.irfft(2j * np.pi * f * X, n)
    sc = 50.0 / np.sqrt(np.mean(u ** 2))
    return u * sc, du * sc


U_FINE, DU_FINE = _multisine()
DT_FINE = 1.0 / (FS * UP)


@njit
def bw_force(t):
    """The multisine [N] at t [s]: cubic Hermite between the 15 kHz samples of u and
    u' (C¹, relative error ~ (2π·150 Hz·dt)⁴/384 ≈ 4e-8)."""
    s = t / DT_FINE
    i = min(int(s), U_FINE.size - 2)
    w = s - i
    w2 = w * w
    w3 = w2 * w
    return ((2 * w3 - 3 * w2 + 1) * U_FINE[i] + (w3 - 2 * w2 + w) * DT_FINE * DU_FINE[i]
            + (-2 * w3 + 3 * w2) * U_FINE[i + 1] + (w3 - w2) * DT_FINE * DU_FINE[i + 1])


def _bouc_wen_element():
    from hystmech.components import BoucWen

    # the hardening class γ < −β of the benchmark (issue 14 item 1, accepted since comp's fix)
    return BoucWen(A=5e4, beta=800.0, gamma=-1100.0, n=1.0), "BoucWen"


def bouc_wen_assembly():
    from hystmech.systems import Assembly

    el, note = _bouc_wen_element()
    a = Assembly()
    a.add_dof("m", mass=2.0)
    a.add_spring("m", "ground", k=5e4)
    a.add_damper("m", "ground", c=10.0)
    a.add_element("bw", el, "m")
    a.add_force("m", bw_force)
    return a, note


def bouc_wen_reference(t):
    from scipy.integrate import solve_ivp

    alpha, beta, gamma, delta = 5e4, 1e3, 0.8, -1.1

    def f(tt, s):
        y, v, z = s
        i = min(int(tt / DT_FINE), U_FINE.size - 2)     # cubic Hermite, as bw_force
        w = tt / DT_FINE - i
        h00, h10 = 2 * w ** 3 - 3 * w ** 2 + 1, w ** 3 - 2 * w ** 2 + w
        h01, h11 = -2 * w ** 3 + 3 * w ** 2, w ** 3 - w ** 2
        u = (h00 * U_FINE[i] + h10 * DT_FINE * DU_FINE[i] + h01 * U_FINE[i + 1]
             + h11 * DT_FINE * DU_FINE[i + 1])
        return [v, (u - 10.0 * v - 5e4 * y - z) / 2.0,
                alpha * v - beta * (gamma * abs(v) * z + delta * v * abs(z))]

    sol = solve_ivp(f, (0.0, t[-1]), [0.0, 0.0, 0.0], method="LSODA", t_eval=t,
                    rtol=1e-10, atol=[1e-14, 1e-12, 1e-9])
    return sol.y[0]


@njit(cache=True)
def pull_u(t):
    return 0.1 * t


@njit(cache=True)
def pull_v(t):
    return 0.1


def lugre_assembly():
    from hystmech.components import LuGre
    from hystmech.systems import Assembly

    a = Assembly()
    a.add_dof("m", mass=1.0)
    a.impose("pull", u=pull_u, v=pull_v)
    a.add_spring("pull", "m", k=2.0)
    a.add_element("fr", LuGre(sigma0=1e5, sigma1=math.sqrt(1e5), sigma2=0.4, Fc=1.0,
                              Fs=1.5, vs=0.001, beta=2.0), "m")
    return a


def lugre_reference(t):
    from scipy.integrate import solve_ivp

    s0, s1, s2, Fc, Fs, vs = 1e5, math.sqrt(1e5), 0.4, 1.0, 1.5, 0.001

    def f(tt, s):
        x, v, z = s
        g = Fc + (Fs - Fc) * math.exp(-(v / vs) ** 2)
        zd = v - s0 * abs(v) / g * z
        F = s0 * z + s1 * zd + s2 * v
        return [v, 2.0 * (0.1 * tt - x) - F, zd]

    def jac(tt, s):
        x, v, z = s
        e = math.exp(-(v / vs) ** 2)
        g = Fc + (Fs - Fc) * e
        dg = (Fs - Fc) * e * (-2.0 * v / vs ** 2)
        sv = math.copysign(1.0, v) if v != 0 else 0.0
        dzd_dv = 1.0 - s0 * z * (sv / g - abs(v) * dg / g ** 2)
        dzd_dz = -s0 * abs(v) / g
        return [[0, 1, 0], [-2.0, -s1 * dzd_dv - s2, -s0 - s1 * dzd_dz], [0, dzd_dv, dzd_dz]]

    sol = solve_ivp(f, (0.0, t[-1]), [0.0, 0.0, 0.0], method="Radau", t_eval=t, jac=jac,
                    rtol=1e-10, atol=[1e-13, 1e-12, 1e-15])
    return sol.y[0], sol.y[1]


def _best(fn, n=3):
    best = math.inf
    out = None
    for _ in range(n):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def _bw_handwritten():
    """The Bouc-Wen benchmark as one hand-written compiled right-hand side, run by the
    same compiled auto core: the cost of the method without the generic assembly RHS."""
    import numba

    from hystmech.systems.methods.auto import auto_solve
    from hystmech.systems.methods.radau import signatures, specialise

    args = (np.zeros(0),)       # unused
    fs, js = signatures(numba.typeof(args))

    @njit(fs)
    def fun(t, y, a, out):
        v, z = y[1], y[2]
        out[0] = v
        out[1] = (bw_force(t) - 10.0 * v - 5e4 * y[0] - z) / 2.0
        out[2] = 5e4 * v - 800.0 * abs(v) * z + 1100.0 * v * abs(z)

    @njit(js)
    def jac(t, y, a, J):
        v, z = y[1], y[2]
        J[0, 0], J[0, 1], J[0, 2] = 0.0, 1.0, 0.0
        J[1, 0], J[1, 1], J[1, 2] = -2.5e4, -5.0, -0.5
        J[2, 0] = 0.0
        J[2, 1] = 5e4 - 800.0 * np.sign(v) * z + 1100.0 * abs(z)
        J[2, 2] = -800.0 * abs(v) + 1100.0 * v * np.sign(z)

    entry = specialise(auto_solve, args)
    return lambda t, rtol, atol: entry(fun, jac, 0.0, float(t[-1]), np.zeros(3), 3, args,
                                       rtol, atol, 0.0, np.inf, t, 50_000_000)


def bench_bouc_wen():
    from hystmech.systems import simulate
    from hystmech.systems.methods.rk45 import default_atol as _default_atol
    from hystmech.systems.model import Model

    a, note = bouc_wen_assembly()
    t = np.arange(NS) / FS
    t0 = time.perf_counter()
    yref = bouc_wen_reference(t)
    t_ref = time.perf_counter() - t0
    ymax = np.max(np.abs(yref))
    t0 = time.perf_counter()
    simulate(a, (0.0, t[-1]), method="auto", t_eval=t[:50])
    t_first = time.perf_counter() - t0
    print(f"Bouc-Wen benchmark ({note}), 8192 samples at 750 Hz, max|y| = {ymax:.3e} m; "
          f"reference LSODA rtol 1e-10 (plain Python) {t_ref:.1f} s")
    print(f"  first call of auto (compilation / numba cache load): {t_first:.1f} s")
    hand = _bw_handwritten()
    atol = _default_atol(Model(a), 1.0)
    ok = False
    for rtol in (1e-8, 1e-9):
        t_auto, r = _best(lambda: simulate(a, (0.0, t[-1]), method="auto", t_eval=t,
                                           rtol=rtol))
        err = float(np.max(np.abs(r.x("m") - yref)) / ymax)
        at = np.ascontiguousarray(atol * rtol / 1.0)
        at[:2] = atol[:2]
        hand(t[:10], rtol, at)
        t_hand, out = _best(lambda: hand(t, rtol, at))
        err_h = float(np.max(np.abs(out[3][:, 0] - yref)) / ymax)
        per = t_auto / r.stats["nfev"] * 1e9
        print(f"  auto rtol {rtol:g}: {t_auto * 1e3:.0f} ms (target <= 500 ms), error "
              f"{err:.1e} of max|y| (target <= 1e-6); {r.stats['nfev']} evaluations "
              f"({per:.0f} ns each, generic assembly RHS), stats {r.stats}")
        print(f"    same auto core on a hand-written compiled RHS: {t_hand * 1e3:.0f} ms, "
              f"error {err_h:.1e}, {int(out[4][0])} evaluations")
        ok = ok or (t_auto <= 0.5 and err <= 1e-6)
    nb = NS // 16
    simulate(a, (0.0, t[10]), method="BDF", t_eval=t[:10])
    t0 = time.perf_counter()
    simulate(a, (0.0, t[nb - 1]), method="BDF", t_eval=t[:nb])
    t_bdf = (time.perf_counter() - t0) * 16
    print(f"  scipy BDF (rtol 1e-8), same compiled RHS: {t_bdf:.1f} s (512 samples x 16) "
          f"-> auto at rtol 1e-9 is {t_bdf / t_auto:.0f}x faster")
    print(f"  energy balance residual (auto): {r.energy_error():.1e}")
    return ok


def bench_lugre():
    from hystmech.systems import simulate

    a = lugre_assembly()
    t = np.linspace(0.0, 20.0, 2001)
    t0 = time.perf_counter()
    simulate(a, (0.0, 20.0), method="auto", t_eval=t)
    t_first = time.perf_counter() - t0
    simulate(a, (0.0, 1.0), method="BDF")
    t_auto, ra = _best(lambda: simulate(a, (0.0, 20.0), method="auto", t_eval=t))
    t_bdf, rb = _best(lambda: simulate(a, (0.0, 20.0), method="BDF", t_eval=t), 2)
    xref, vref = lugre_reference(t)
    sc = np.max(np.abs(xref))
    ea = float(np.max(np.abs(ra.x("m") - xref)) / sc)
    eb = float(np.max(np.abs(rb.x("m") - xref)) / sc)
    ratio = t_bdf / t_auto
    ok = ratio >= 10 and ea <= max(2 * eb, 1e-6)
    print("Canudas LuGre stick-slip (sigma0 = 1e5), 20 s, rtol 1e-8 for both")
    print(f"  auto: {t_auto * 1e3:.1f} ms (first call {t_first:.1f} s), stats {ra.stats}")
    print(f"  scipy BDF (same compiled RHS + analytic Jacobian): {t_bdf * 1e3:.0f} ms, "
          f"stats {rb.stats}")
    print(f"  ratio {ratio:.1f}x (target >= 10x); error in x vs Radau rtol 1e-10 "
          f"(plain Python): auto {ea:.1e}, BDF {eb:.1e} of max|x| = {sc:.3f} m")
    print(f"  energy balance residual: auto {ra.energy_error():.1e}, BDF "
          f"{rb.energy_error():.1e}")
    return ok


def main():
    ok1 = bench_bouc_wen()
    ok2 = bench_lugre()
    return ok1 and ok2


if __name__ == "__main__":
    raise SystemExit(0 if main() else 1)
