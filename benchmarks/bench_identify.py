"""Preisach kernel identification: about 5000 triangles from 10^4 samples (issue 6 §7).

Baseline (the straightforward way): Δ assembled densely (T × n float64) and solved with
numpy.linalg.lstsq (minimum-norm, SVD). hystmech: Δ kept as the sparse switch matrix
behind a LinearOperator, solved by scipy lsmr. Both measured in this run: wall time and
peak memory (tracemalloc), and the residual norms, which must agree.
Target: hystmech under 10 s and 2 GB, same residual.
"""
import time
import tracemalloc

import numpy as np


def _data(n=10_000):
    # the cyclic bending protocol of Manfredo et al. (2023), §5: 27 cycles 0 -> K -> 0
    levels = [1.725, 3.45, 5.175, 6.9, 8.65, 10.4, 17.45, 24.425, 31.4]
    knots = [0.0]
    for L in levels:
        knots += [L, 0.0] * 3
    knots = np.asarray(knots)
    seg = np.abs(np.diff(knots))
    v = np.concatenate([np.linspace(a, b, max(int(n * abs(b - a) / seg.sum()), 4), endpoint=False)
                        for a, b in zip(knots[:-1], knots[1:])])
    v = np.r_[v, np.zeros(max(n - v.size, 1))][:n]     # exactly n samples
    rng = np.random.default_rng(0)
    # a smooth hysteretic moment plus 1 % noise
    y = np.tanh(v / 8.0) + 0.1 * np.sin(v / 3.0) + 0.01 * rng.standard_normal(v.size)
    return v, y


def _measure(fn):
    tracemalloc.start()
    t0 = time.perf_counter()
    out = fn()
    dt = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return out, dt, peak


def main() -> bool:
    from hystmech.identify.preisach import assemble, fit_preisach

    v, y = _data()
    d = 0.63          # rounding tolerance giving about 5000 swept triangles
    fit_preisach(v[:400], y[:400], d)                # compile the numba kernel first
    fit, t_h, m_h = _measure(lambda: fit_preisach(v, y, d))
    n = fit.mesh.n

    def baseline():
        _, op = assemble(v, d)
        D = op.dense()
        x, *_ = np.linalg.lstsq(D, y, rcond=None)
        return float(np.linalg.norm(D @ x - y))

    res_b, t_b, m_b = _measure(baseline)
    same = abs(fit.residual_norm - res_b) <= 1e-6 * res_b
    print(f"samples T = {v.size}, triangles n = {n}")
    print(f"baseline  dense Δ + numpy.linalg.lstsq: {t_b:7.2f} s  peak {m_b / 2**20:8.1f} MiB  "
          f"residual {res_b:.9g}")
    print(f"hystmech  sparse Δ + scipy lsmr        : {t_h:7.2f} s  peak {m_h / 2**20:8.1f} MiB  "
          f"residual {fit.residual_norm:.9g}")
    print(f"speed-up x{t_b / t_h:.1f}, memory ratio x{m_b / max(m_h, 1):.1f}; target: < 10 s, "
          f"< 2 GB, same residual (rel. 1e-6): {'yes' if same else 'NO'}")
    return bool(t_h < 10.0 and m_h < 2 * 2**30 and same)


if __name__ == "__main__":
    raise SystemExit(0 if main() else 1)
