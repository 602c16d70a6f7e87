"""Output-error identification of an assembly: the Noël & Schoukens Bouc-Wen benchmark.

Measured in this run: the CPU time of one simulation of the 10 training periods
(81920 samples at 750 Hz, RK4 with 6 steps per sample) without and with the forward
sensitivities of 6 parameters, against the baseline of one hystmech ``simulate`` of the
same record with its default adaptive RK45 (rtol 1e-8) through the rig
systems/rigs/bouc_wen_benchmark.py — how an output-error fit evaluated a model before —
on 1/8 period (its time scaled by 80); and the CPU time of the whole fit from the
training data (target <= 60 s) with the test RMSEs (targets 1.0e-5 m multisine,
1.2e-5 m sweep).

With ``--laws``: fit times of a one-DOF rig (mass, spring, damper, the law to ground,
a multisine force; 400 samples at 400 Hz, RK4 with 8 steps per sample) for laws whose
parameters became free in fit_assembly, each as a multiple of one simulation with
sensitivities measured in the same run (data from the model at the true values, the
start 20-30 % off); then an operator: a continuous Preisach's 6 cell weights and k0
(241 samples, start 20 % off).

Run:  python benchmarks/bench_identify_assembly.py [--no-baseline] [--laws]
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


def laws():
    from hystmech.components import AsymmetricViscousDahl, Dahl, LuGre, ModifiedDahl
    from hystmech.identify.assembly import Experiment, OutputErrorProblem, fit_assembly
    from hystmech.systems import Assembly
    from hystmech.systems.assembly import GROUND

    fs, n = 400.0, 400
    t = np.arange(n) / fs
    u = 3.0 * sum(np.cos(2 * np.pi * f * t + ph) for f, ph in ((1.3, 0.3), (2.9, 1.9),
                                                               (4.1, 4.0), (6.7, 2.2)))
    cases = [
        (Dahl, dict(rho=300.0, Fc=2.0), dict(rho=240.0, Fc=2.4)),
        (AsymmetricViscousDahl, dict(kx1=1.5, kw1=2.0, kx2=1.0, kw2=3.0, rho=250.0),
         dict(kx1=1.0, kw1=2.5, kx2=1.4, kw2=2.2, rho=200.0)),
        (ModifiedDahl, dict(Lambda=60.0, mu=1.6, a=100.0, b=1.5, d=80.0, e=-1.0),
         dict(Lambda=45.0, mu=1.4, a=120.0, b=1.2, d=60.0, e=-1.2)),
        (LuGre, dict(sigma0=2000.0, sigma1=5.0, Fc=1.0, Fs=1.5, vs=0.02, beta=2.0),
         dict(sigma0=1600.0, sigma1=5.0, Fc=0.8, Fs=1.8, vs=0.02, beta=2.0)),
    ]
    for cls, truth, start in cases:
        def rig(params):
            a = Assembly()
            a.add_dof("m", mass=1.0)
            a.add_spring("m", GROUND, k=400.0, name="s")
            a.add_damper("m", GROUND, c=0.8, name="d")
            a.add_element("law", cls(**params), "m", GROUND)
            a.add_force("m", 0.0, name="u")
            return a
        free = ["law." + k for k, v in truth.items() if start[k] != v]
        x = Experiment(dt=1 / fs, inputs={"u": u}, outputs={"m.x": 0 * t}, sigma=1e-4,
                       interpolation="cubic", substeps=8)
        P = OutputErrorProblem(rig(truth), free, [x])
        y = P.simulate(P.theta0)[0][:, 0]
        x.outputs["m.x"] = y
        P = OutputErrorProblem(rig(start), free, [x])
        P.simulate(P.theta0, 0, True)                       # compile
        t0 = time.process_time()
        for _ in range(5):
            P.simulate(P.theta0, 0, True)
        t_one = (time.process_time() - t0) / 5
        t0 = time.process_time()
        res = fit_assembly(rig(start), free, [x], uncertainty=None)
        t_fit = time.process_time() - t0
        worst = max(abs(res.values[k] / truth[k[4:]] - 1) for k in free)
        print(f"{cls.__name__:>22s}: {len(free)} parameters, fit {t_fit:.3f} s CPU = "
              f"{t_fit / t_one:.1f} x one simulation with sensitivities ({t_one * 1e3:.2f} ms); "
              f"{res.nfev} + {res.njev} simulations; worst relative error {worst:.1e}")

    operator()


def operator():
    """A mass on a spring, a damper and a continuous Preisach operator (3 levels: 6 cell
    weights, and k0 free), driven by a multisine force of decaying envelope."""
    from hystmech.components.preisach import Preisach
    from hystmech.identify.assembly import Experiment, OutputErrorProblem, fit_assembly
    from hystmech.systems import Assembly
    from hystmech.systems.assembly import GROUND

    fs, n, m = 400.0, 241, 0.01
    t = np.arange(n) / fs
    u = 1.5 * (1.4 * np.exp(-1.2 * t) + 0.25) * sum(
        np.cos(2 * np.pi * f * t + ph) for f, ph in ((1.3, 0.3), (2.9, 1.9), (4.1, 4.0),
                                                     (6.7, 2.2)))
    base = Preisach.from_kernel(lambda r, s: -2e4 * (1.0 + 30.0 * r + 20.0 * s), m, 3,
                                continuous=True, k0=400.0, max_depth=24)

    def rig(w, k0):
        a = Assembly()
        a.add_dof("m", mass=1.0)
        a.add_spring("m", GROUND, k=400.0, name="s")
        a.add_damper("m", GROUND, c=0.8, name="d")
        a.add_element("law", Preisach(a1=base.a1, a2=base.a2, weights=w, k0=k0,
                                      grid=(m, 3), max_depth=24), "m", GROUND)
        a.add_force("m", 0.0, name="u")
        return a
    free = ["law.weights", "law.k0"]
    x = Experiment(dt=1 / fs, inputs={"u": u}, outputs={"m.x": 0 * t}, substeps=8)
    P = OutputErrorProblem(rig(base.weights, 400.0), free, [x])
    truth = P.theta0.copy()
    x.outputs["m.x"] = P.simulate(truth)[0][:, 0]
    f = np.where(np.arange(truth.size) % 2, 0.8, 1.2)
    start = rig(base.weights * f[:-1], 400.0 * f[-1])
    P = OutputErrorProblem(start, free, [x])
    P.simulate(P.theta0, 0, True)                           # compile
    t0 = time.process_time()
    for _ in range(5):
        P.simulate(P.theta0, 0, True)
    t_one = (time.process_time() - t0) / 5
    t0 = time.process_time()
    res = fit_assembly(start, free, [x], uncertainty=None)
    t_fit = time.process_time() - t0
    worst = float(np.max(np.abs(res.theta / truth - 1)))
    print(f"{'Preisach (continuous)':>22s}: {len(free) + 5} parameters, fit {t_fit:.3f} s CPU = "
          f"{t_fit / t_one:.1f} x one simulation with sensitivities ({t_one * 1e3:.2f} ms); "
          f"{res.nfev} + {res.njev} simulations; worst relative error {worst:.1e}")


if __name__ == "__main__":
    if "--laws" in sys.argv:
        laws()
    else:
        main()
