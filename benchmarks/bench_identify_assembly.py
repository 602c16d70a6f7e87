"""Output-error identification of an assembly: the Noël & Schoukens Bouc-Wen benchmark.

Measured in this run: the CPU time of one simulation of the 10 training periods
(81920 samples at 750 Hz, RK4 with 6 steps per sample) without and with the forward
sensitivities of 6 parameters, against the baseline of one hystmech ``simulate`` of the
same record with its default adaptive RK45 (rtol 1e-8) through the rig
systems/rigs/bouc_wen_benchmark.py — how an output-error fit evaluated a model before —
on 1/8 period (its time scaled by 80); and the CPU time of the whole fit from the
training data (target <= 60 s) with the test RMSEs (targets 1.0e-5 m multisine,
1.2e-5 m sweep).

Run:  python benchmarks/bench_identify_assembly.py [--no-baseline]
"""
import sys
import time

import numpy as np


def main():
    from hystmech.identify import noel_schoukens as ns
    from hystmech.identify.assembly import OutputErrorProblem

    d = ns.load()
    x = ns.experiment(d["train_u"], d["train_y"], float(d["fs"]), "fourier",
                      float(d["noise_rms"]), 6, "train")
    prob = OutputErrorProblem(ns.assembly(), list(ns.FREE), [x])
    prob.simulate(prob.theta0, 0, True)                     # compile
    t0 = time.process_time()
    prob.simulate(prob.theta0, 0, False)
    t_sim = time.process_time() - t0
    t0 = time.process_time()
    prob.simulate(prob.theta0, 0, True)
    t_sens = time.process_time() - t0
    print(f"one simulation of 10 periods (81920 samples): {t_sim:.3f} s CPU; with the "
          f"sensitivities of 6 parameters: {t_sens:.3f} s CPU")
    if "--no-baseline" not in sys.argv:
        from hystmech.systems.rigs import bouc_wen_benchmark as rig

        N, fs = int(d["period"]), float(d["fs"])
        tg = np.arange(N) / fs
        n = N // 8                   # 1/8 period, scaled to the 10 periods
        rig.simulate_case(tg, d["train_u"][:N], tg[:16], rtol=1e-8)     # compile
        t0 = time.process_time()
        rig.simulate_case(tg, d["train_u"][:N], tg[:n], rtol=1e-8)
        t_base = 80 * (time.process_time() - t0)
        print(f"baseline: simulate() RK45 rtol 1e-8 through the rig, 1/8 period x 80: "
              f"{t_base:.2f} s CPU -> ratio {t_base / t_sim:.1f}x")
    t0 = time.process_time()
    res = ns.fit(d)
    t_fit = time.process_time() - t0
    err = ns.rmse(ns.simulate_test(res, d))
    print(f"fit from the 10 training periods: {t_fit:.1f} s CPU (target <= 60 s), "
          f"{res.nfev} simulations + {res.njev} with sensitivities")
    for k, (e, ec) in err.items():
        print(f"  {k}: RMSE {e:.3e} m vs noisy output, {ec:.3e} m vs clean")
    print(res.summary())


if __name__ == "__main__":
    main()
