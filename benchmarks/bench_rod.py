"""Quasi-static rod benchmark: N = 100 segments, a Preisach moment law of 100 levels at
every vertex (EI_el·K + Preisach, the cable-pure-bending law), 1000 load steps of a
cyclic tip rotation on the clamped cantilever. hystmech: banded analytic tangent (law
slopes). Baseline: the same Newton iteration with a dense finite-difference Jacobian
(one residual per column) and a dense solve, timed on a few steps and scaled to 1000.
Target (issue 5): >= 10x.
"""
import time

import numpy as np


def main():
    from hystmech.systems import rod as R
    from hystmech.systems import rod_kernels as rk
    from hystmech.systems.rod_cases import cable_preisach, protocol_curvature

    law, _ = cable_preisach({"levels": 100})
    rod = R.Rod(N=100, L=0.4, law=law)
    K = protocol_curvature(levels=(6.9, 17.45), cycles_per_level=2, points_per_cycle=250)[:1000]
    R.quasi_static(rod, tip_rotation=K[:5] * rod.L)      # compile
    t0 = time.perf_counter()
    res = R.quasi_static(rod, tip_rotation=K * rod.L)
    t_fast = time.perf_counter() - t0
    its = int(res.iterations.sum())

    # baseline: dense FD Jacobian Newton on the same residual, same start, same steps
    fixed = [0, 1, 2, rod.i_tip_theta]
    prob = R._Problem(rod, fixed)
    state = rod.straight()
    n = rod.n_dof
    f = np.zeros(n)

    def resid(q, vals):
        r, _ = prob.evaluate(q, state, f, vals)
        return r

    n_slow = 5
    t0 = time.perf_counter()
    its_slow = 0
    for k in range(1, n_slow + 1):
        vals = np.array([0.0, 0.0, 0.0, K[k] * rod.L])
        q = state.q.copy()
        for it in range(30):
            r = resid(q, vals)
            J = np.empty((n, n))
            eps = 1e-7
            for c in range(n):
                e = q.copy(); e[c] += eps
                J[:, c] = (resid(e, vals) - r) / eps
            dq = np.linalg.solve(J, -r)
            q = q + dq
            its_slow += 1
            if np.max(np.abs(dq * prob.dq_scale)) < 1e-10:
                break
        resid(q, vals)
        Kc = prob.K.copy()
        rk.commit(Kc, state.K, prob.X_trial, state.X)
        state.q = q
    t_slow = (time.perf_counter() - t0) / its_slow * its   # same number of Newton iterations
    ratio = t_slow / t_fast
    print(f"rod quasi-static N=100, Preisach 100 levels/vertex, 1000 steps: {t_fast:.2f} s "
          f"({its} Newton iterations)")
    print(f"dense FD-Jacobian Newton: {its_slow} iterations timed on {n_slow} steps, scaled "
          f"to {its} iterations: {t_slow:.1f} s")
    print(f"speed-up {ratio:.0f}x (target >= 10x)")
    return ratio >= 10


if __name__ == "__main__":
    main()
