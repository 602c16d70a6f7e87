"""Quasi-static rod benchmark (issue 5): N = 100 segments, at every vertex the cable
moment law EI_el·K + (κK − P[K]) with a continuous Preisach operator of 100 levels
(systems/rod_cases.cable_preisach, demagnetised start), 1000 load steps of a cyclic
transverse tip LOAD on the clamped cantilever (±1 N, tip deflection ~0.7 L).

hystmech: Newton on the banded analytic tangent (the laws' exact slopes).
Baseline: the same Newton iteration (same residual, same convergence test, same load
steps) with a dense finite-difference Jacobian (one residual per column) and a dense
solve; timed on the first few load steps and scaled by the Newton iterations the fast
solver needed for all 1000. Target: >= 10x.
"""
import time

import numpy as np


def main():
    from hystmech.systems.rigs import rod as R
    from hystmech.systems.rigs import rod_kernels as rk
    from hystmech.systems.rigs.rod_cases import cable_preisach, cyclic_path, demagnetized_memory

    law, _ = cable_preisach({"levels": 100})
    rod = R.Rod(N=100, L=0.4, law=law, memory0=demagnetized_memory(law))
    path = cyclic_path(1.0, 5, 45)[:1000]         # 1000 steps, 5 cycles of ±1 N
    R.quasi_static(rod, tip_force=path[:5])       # compile
    t0 = time.perf_counter()
    res = R.quasi_static(rod, tip_force=path)
    t_fast = time.perf_counter() - t0
    its = int(res.iterations.sum())

    # baseline: dense FD-Jacobian Newton on the same residual, same start, same steps
    prob = R._Problem(rod, [0, 1, 2], free_tip=True)
    state = rod.straight()
    n = rod.n_dof
    vals = np.zeros(3)

    def resid(q, f):
        r, _ = prob.evaluate(q, state, f, vals)
        return r

    n_slow = 4
    t0 = time.perf_counter()
    its_slow = 0
    for k in range(1, n_slow + 1):
        f = np.zeros(n)
        f[rod.i_y(rod.N)] = path[k]
        q = state.q.copy()
        for it in range(30):
            r = resid(q, f)
            J = np.empty((n, n))
            for c in range(n):
                e = q.copy()
                e[c] += 1e-7
                J[:, c] = (resid(e, f) - r) / 1e-7
            dq = np.linalg.solve(J, -r)
            q = q + dq
            its_slow += 1
            if np.max(np.abs(dq * prob.dq_scale)) < 1e-10:
                break
        resid(q, f)
        rk.commit(prob.K.copy(), state.K, prob.X_trial, state.X)
        state.q = q
    dev = float(np.max(np.abs(state.q - res.q[n_slow])))
    t_slow = (time.perf_counter() - t0) / its_slow * its   # same number of iterations
    ratio = t_slow / t_fast
    print(f"rod quasi-static, N=100, continuous Preisach 100 levels/vertex, 1000 tip-load "
          f"steps: {t_fast:.2f} s ({its} Newton iterations, max tip deflection "
          f"{np.max(np.abs(res.tip[:, 1])):.3f} m)")
    print(f"dense FD-Jacobian Newton: {its_slow} iterations timed on {n_slow} steps "
          f"(same solution within {dev:.1e}), scaled to {its} iterations: {t_slow:.1f} s")
    print(f"speed-up {ratio:.0f}x (target >= 10x)")
    return ratio >= 10


if __name__ == "__main__":
    main()
