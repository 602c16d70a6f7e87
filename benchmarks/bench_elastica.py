"""Cost of hystmech's hysteretic bending in PyElastica (issues 19, 33): a 50-element
cantilever (49 Voronoi nodes, an element at every node), 2 000 PositionVerlet steps,
plain ``elastica.integrate``, against the same rod without elements in the same run.
Target: ≤ 1.3× the bare rod per step for Masing per axis, MasingVector and the truly
isotropic Bouc-Wen (BoucWenIsotropic, n = 2); LinearSpring, BoucWenIsotropic with
n = 1.5 (a pow per stage), Park-Wen-Ang's BoucWenBiaxial and the cable law (30-level
Preisach per axis, the kernels' own cost dominating) are reported, and beside them the
rod with an empty Python forcing (``NoForces`` with an empty ``apply_torques``), the
least any forcing a PyElastica user writes costs. CPU time of this
process, compilation outside the timing. Estimator: the 2000 steps in 10 windows of 200;
``repeats`` copies of every variant's simulation advance through each window in turn,
interleaved, and a variant's time is the sum over the windows of its fastest copy (on
the shared 2-core machine under load the best of 3 whole runs moved single ratios by
±0.3 between runs; a window's minimum is less often hit by a burst of other load).

    python benchmarks/run.py elastica
"""
import contextlib
import io
import math
import time

import numpy as np

TARGET = 1.3
NOOP = "no-op Python forcing"


def main(repeats=7):
    import elastica as ea

    from hystmech.components import BoucWenIsotropic, get_element_class
    from hystmech.components.bouc_wen_biaxial import BoucWenBiaxial
    from hystmech.components.masing_vector import MasingVector
    from hystmech.plugins import elastica as hel

    N, steps, r, E = 50, 2000, 0.02, 1e6
    EI = E * math.pi * r ** 4 / 4
    P, _, m0 = hel.cable_hysteresis(levels=30)
    laws = {"Masing per axis": (get_element_class("Masing")(k=2 * EI, k0=0.0,
                                                             alpha=0.05 * EI), None),
            "MasingVector": (MasingVector(k=2 * EI, alpha=0.05 * EI), None),
            "LinearSpring per axis": (get_element_class("LinearSpring")(k=0.2 * EI), None),
            "BoucWenIsotropic n=2": (BoucWenIsotropic(A=2 * EI, beta=1 / (0.05 * EI) ** 2,
                                                      gamma=1 / (0.05 * EI) ** 2, n=2),
                                     None),
            "BoucWenIsotropic n=1.5": (BoucWenIsotropic(A=2 * EI,
                                                        beta=1 / (0.05 * EI) ** 1.5,
                                                        gamma=1 / (0.05 * EI) ** 1.5,
                                                        n=1.5), None),
            "BoucWenBiaxial": (BoucWenBiaxial(A=2 * EI, beta=1 / (0.05 * EI) ** 2,
                                              gamma=1 / (0.05 * EI) ** 2), None),
            "cable Preisach per axis": (P, m0)}

    class Sim(ea.BaseSystemCollection, ea.Constraints, ea.Forcing, ea.CallBacks):
        pass

    class NoOp(ea.NoForces):
        # what a PyElastica user's own Python forcing costs at the least: an empty hook
        def apply_torques(self, system, time=np.float64(0.0)):
            pass

    def build(variant):
        sim = Sim()
        rod = ea.CosseratRod.straight_rod(N, np.zeros(3), np.array([1.0, 0, 0]),
                                          np.array([0, 0, 1.0]), 0.4, r, 1000.0,
                                          youngs_modulus=E, shear_modulus=E / 3)
        sim.append(rod)
        sim.constrain(rod).using(ea.OneEndFixedBC, constrained_position_idx=(0,),
                                 constrained_director_idx=(0,))
        sim.add_forcing_to(rod).using(ea.EndpointForces, np.zeros(3),
                                      np.array([0.0, 0.5, 0.3]), ramp_up_time=0.1)
        if variant == NOOP:
            sim.add_forcing_to(rod).using(NoOp)
        elif variant != "bare":
            law, x0 = laws[variant]
            hel.add_hysteretic_bending(sim, rod, law, x0=x0)
        sim.finalize()
        with contextlib.redirect_stdout(io.StringIO()):   # elastica's "Final time"
            hel.integrate(sim, 10 * 1e-4, 10)        # compile outside the timing
        return sim

    variants = ["bare", NOOP, *laws]
    sims = {v: [build(v) for _ in range(repeats)] for v in variants}
    best = {v: 0.0 for v in variants}
    windows = 10
    n = steps // windows
    for w in range(windows):
        win = {v: math.inf for v in variants}
        for k in range(repeats):
            for v in variants:
                with contextlib.redirect_stdout(io.StringIO()):   # elastica's "Final time"
                    t0 = time.process_time()
                    ea.integrate(ea.PositionVerlet(), sims[v][k], n * 1e-4, n,
                                 restart_time=w * n * 1e-4, progress_bar=False)
                    win[v] = min(win[v], time.process_time() - t0)
        for v in variants:
            best[v] += win[v]
    ok = True
    base = best["bare"] / steps * 1e6
    print(f"PyElastica cantilever, {N} elements, {steps} PositionVerlet steps: bare rod "
          f"{base:.1f} µs/step")
    for v in [NOOP, *laws]:
        ratio = best[v] / best["bare"]
        target = v in ("Masing per axis", "MasingVector", "BoucWenIsotropic n=2")
        ok &= (ratio <= TARGET) or not target
        print(f"  {v:<24s} {best[v] / steps * 1e6:7.1f} µs/step  {ratio:5.2f}× bare"
              + (f"  (target ≤ {TARGET}×: {'met' if ratio <= TARGET else 'MISSED'})"
                 if target else ""))
    return ok


if __name__ == "__main__":
    main()
