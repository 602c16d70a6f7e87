"""Speed of the non-smooth / rate-independent elements (issue 3 §7).

1. Preisach with 200 levels per side (20 100 relays) over 10^6 random-walk samples:
   hystmech (memory stack + Everett table, numba) against a numpy-vectorised brute-force
   relay update. The brute force is timed on the first 5 000 samples and scaled to 10^6
   (it is linear in the number of samples); outputs are compared on those samples.
   Target: >= 100x.
2. Masing and a 5-asperity Maxwell-slip element driven over 10^6 samples against the same
   update written as a plain Python loop (timed on 10^5 samples, scaled x10; outputs
   compared there). Target: >= 20x.
"""
import math
import time

import numpy as np

N = 1_000_000


def _random_walk(n, m, seed=0):
    rng = np.random.default_rng(seed)
    w = np.cumsum(rng.normal(0.0, 0.01 * m, n))
    # fold into [-m, m] (triangle wave) so the walk keeps crossing the thresholds
    y = np.mod(w + m, 4 * m)
    return np.where(y < 2 * m, y - m, 3 * m - y)


def bench_preisach():
    from hystmech import drive
    from hystmech.components import Preisach

    m, n = 1.0, 200
    P = Preisach.from_kernel(lambda r, s: np.exp(-2 * r) * (1 + 0.3 * np.cos(3 * s)), m, n)
    u = _random_walk(N, m)
    t = np.arange(N, dtype=float)
    drive(P, t[:100], u[:100])                      # compile / load cache
    t0 = time.perf_counter()
    res = drive(P, t, u, store_state=False)
    t_h = time.perf_counter() - t0
    nb = 5_000
    a1, a2, w = P.a1, P.a2, P.weights
    R = -np.ones(a1.size)
    out = np.empty(nb)
    t0 = time.perf_counter()
    for k in range(nb):
        v = u[k]
        R = np.where(v >= a2, 1.0, np.where(v <= a1, -1.0, R))
        out[k] = w @ R
    t_b = (time.perf_counter() - t0) * (N / nb)
    err = float(np.max(np.abs(out - res.force[:nb])) / np.abs(w).sum())
    ratio = t_b / t_h
    print(f"preisach: {a1.size} relays, {N} samples: hystmech {t_h:.3f} s, numpy brute force "
          f"{t_b:.1f} s (timed on {nb} samples, scaled) -> {ratio:.0f}x (target >= 100x); "
          f"max |diff|/sum|w| = {err:.1e}")
    return ratio >= 100 and err < 1e-12


def _python_masing(u, k, k0, eta, F0, w0):
    w = w0
    F = [k * w + k0 * u[0] - F0]
    for i in range(1, len(u)):
        w = w + (u[i] - u[i - 1])
        if w > eta:
            w = eta
        elif w < -eta:
            w = -eta
        F.append(k * w + k0 * u[i] - F0)
    return np.array(F)


def _python_maxwell(u, k, delta):
    z = [0.0] * len(k)
    F = [0.0]
    for i in range(1, len(u)):
        du = u[i] - u[i - 1]
        f = 0.0
        for j in range(len(k)):
            zj = z[j] + du
            if zj > delta[j]:
                zj = delta[j]
            elif zj < -delta[j]:
                zj = -delta[j]
            z[j] = zj
            f += k[j] * zj
        F.append(f)
    return np.array(F)


def bench_inclusions():
    from hystmech import drive
    from hystmech.components import Masing, MaxwellSlip

    ok = True
    t = np.arange(N, dtype=float)
    nb = 100_000
    # Masing, eq. (36) values, random walk over about ±3η
    el = Masing(k=4.84e5, k0=2.34e5, alpha=1.63e2, F0=-5.73e2)
    u = _random_walk(N, 3 * el.eta, seed=1)
    drive(el, t[:100], u[:100])
    t0 = time.perf_counter()
    r = drive(el, t, u, store_state=False)
    t_h = time.perf_counter() - t0
    t0 = time.perf_counter()
    Fp = _python_masing(u[:nb], 4.84e5, 2.34e5, el.eta, -5.73e2, 0.0)
    t_p = (time.perf_counter() - t0) * (N / nb)
    err = float(np.max(np.abs(Fp - r.force[:nb])))
    ratio = t_p / t_h
    print(f"masing: {N} samples: hystmech {t_h:.3f} s, Python loop {t_p:.2f} s (timed on {nb}, "
          f"scaled) -> {ratio:.0f}x (target >= 20x); max |diff| = {err:.1e} N")
    ok &= ratio >= 20 and err < 1e-9
    # 5-asperity Maxwell-slip, REFERENCE.md parameters
    ms = MaxwellSlip.from_heights(kt=1e6, kn=2e6, mu=0.5, d=1.1e-6,
                                  heights=[1.21667e-6, 1.65e-6, 2.0833e-6, 2.5167e-6, 2.95e-6])
    u = _random_walk(N, 2e-6, seed=2)
    drive(ms, t[:100], u[:100])
    t0 = time.perf_counter()
    r = drive(ms, t, u, store_state=False)
    t_h = time.perf_counter() - t0
    t0 = time.perf_counter()
    Fp = _python_maxwell(u[:nb], ms.k.tolist(), ms.delta.tolist())
    t_p = (time.perf_counter() - t0) * (N / nb)
    err = float(np.max(np.abs(Fp - r.force[:nb])))
    ratio = t_p / t_h
    print(f"maxwell-slip (5 asperities): {N} samples: hystmech {t_h:.3f} s, Python loop "
          f"{t_p:.2f} s (timed on {nb}, scaled) -> {ratio:.0f}x (target >= 20x); "
          f"max |diff| = {err:.1e} N")
    ok &= ratio >= 20 and err < 1e-9
    return ok


def main():
    a = bench_preisach()
    b = bench_inclusions()
    return bool(a and b)


if __name__ == "__main__":
    raise SystemExit(0 if main() else 1)
