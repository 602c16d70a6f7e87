"""Output-error identification of assemblies (identify/assembly.py).

Truths: central finite differences of the same compiled model (sensitivities);
reference responses integrated by our own right-hand sides with scipy's DOP853 at
rtol 1e-11 (parameter recovery); the Noël & Schoukens benchmark data generated
independently (benchmarks/gen_noel_schoukens_data.py) and its published parameters.
"""
import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from hystmech.components.bouc_wen import BoucWen
from hystmech.components.lugre import LuGre
from hystmech.identify.assembly import Experiment, OutputErrorProblem, fit_assembly
from hystmech.systems import Assembly
from hystmech.systems.assembly import GROUND

FS = 400.0
N = 800
T = np.arange(N) / FS
FREQS = np.array([1.3, 2.9, 4.1, 6.7, 9.2, 13.4])
PH = np.array([0.3, 1.9, 4.0, 2.2, 5.1, 0.7])


def force(t, amp):
    return amp * np.sum(np.cos(2 * np.pi * FREQS * np.asarray(t)[..., None] + PH), axis=-1)


def two_dof(law, where):
    a = Assembly()
    a.add_dof("m1", mass=1.0)
    a.add_dof("m2", mass=0.5)
    a.add_spring("m1", GROUND, k=400.0, name="s1")
    a.add_spring("m1", "m2", k=150.0, name="s2")
    a.add_damper("m1", GROUND, c=0.8, name="d1")
    a.impose("base", 0.0)          # a support moved by the experiments (at rest in the
    a.add_spring("m2", "base", k=100.0, name="s3")     # recovery tests)
    a.add_damper("m2", "base", c=0.3, name="d3")
    a.add_element("law", law, *where)
    a.add_force("m1", 0.0, name="u")
    return a


def bw_reference(p, amp):
    """Own RHS: m1, m2 with Bouc-Wen z between m2 and ground (ż = A v − β|v|z − γ v|z|)."""
    def rhs(t, s):
        x1, x2, v1, v2, z = s
        f1 = force(t, amp) - p["k1"] * x1 - p["k2"] * (x1 - x2) - p["c1"] * v1
        f2 = p["k2"] * (x1 - x2) - z - 100.0 * x2 - 0.3 * v2
        zd = p["A"] * v2 - p["beta"] * abs(v2) * z - p["gamma"] * v2 * abs(z)
        return [v1, v2, f1 / p["m1"], f2 / p["m2"], zd]
    s = solve_ivp(rhs, (0, T[-1]), np.zeros(5), method="DOP853", rtol=1e-11, atol=1e-14,
                  t_eval=T)
    return s.y


def lugre_reference(p, amp):
    """Own RHS: LuGre (ẋ = −σ0|v|x/g + v, F = σ0 x + σ1 ẋ, g Stribeck, β = 1) between
    m1 and m2."""
    def rhs(t, s):
        x1, x2, v1, v2, b = s
        v = v1 - v2
        g = p["Fc"] + (p["Fs"] - p["Fc"]) * math.exp(-abs(v / p["vs"]))
        bd = -p["sigma0"] * abs(v) / g * b + v
        F = p["sigma0"] * b + p["sigma1"] * bd
        f1 = force(t, amp) - p["k1"] * x1 - p["k2"] * (x1 - x2) - p["c1"] * v1 - F
        f2 = p["k2"] * (x1 - x2) + F - 100.0 * x2 - 0.3 * v2
        return [v1, v2, f1 / p["m1"], f2 / p["m2"], bd]
    s = solve_ivp(rhs, (0, T[-1]), np.zeros(5), method="DOP853", rtol=1e-11, atol=1e-14,
                  t_eval=T)
    return s.y


BW = dict(m1=1.0, m2=0.5, k1=400.0, k2=150.0, c1=0.8, A=300.0, beta=20.0, gamma=-8.0)


def test_sensitivities_match_central_differences_of_the_same_model():
    a = two_dof(BoucWen(A=300.0, beta=20.0, gamma=-8.0, n=1.0), ("m2", GROUND))
    u = force(T, 3.0)
    chans = ("m1.x", "m2.a", "law.z", "law.F", "s2.F", "d1.F", "d3.F")
    base = 0.01 * np.sin(2 * np.pi * 3.1 * T) ** 2
    x = Experiment(dt=1 / FS, inputs={"u": u, "base": base}, outputs={c: u * 0 for c in chans},
                   interpolation="cubic")
    free = ["m1.m", "s2.k", "d1.c", "law.A", "law.beta", "law.gamma", "u.gain", "m2.v0",
            "law.z0", "s3.k", "d3.c"]
    P = OutputErrorProblem(a, free, [x])
    th = P.theta0.copy()
    th[free.index("m2.v0")] = 0.01
    th[free.index("law.z0")] = 0.05
    Y, S = P.simulate(th, 0, True)
    for c, nm in enumerate(free):
        d = 1e-7 * max(abs(th[c]), 1e-2)
        tp, tm = th.copy(), th.copy()
        tp[c] += d
        tm[c] -= d
        fd = (P.simulate(tp)[0] - P.simulate(tm)[0]) / (2 * d)
        for o in range(len(chans)):
            scale = np.abs(S[:, o, :]).max(axis=0) @ np.abs(th) / len(th)
            err = np.abs(fd[:, o] - S[:, o, c]).max() / max(np.abs(S[:, o, c]).max(),
                                                            1e-12 * scale)
            assert err < 1e-5, (nm, chans[o], err)


def test_recovers_two_dof_bouc_wen_from_clean_reference_data():
    Y = bw_reference(BW, 3.0)
    start = dict(A=200.0, beta=30.0, gamma=-4.0)
    a = two_dof(BoucWen(A=start["A"], beta=start["beta"], gamma=start["gamma"], n=1.0),
                ("m2", GROUND))
    a.springs[1].k = 120.0
    x = Experiment(dt=1 / FS, inputs={"u": force(T, 3.0), "base": 0 * T},
                   outputs={"m1.x": Y[0], "m2.x": Y[1]},
                   sigma=1e-3, interpolation="cubic", substeps=6)
    res = fit_assembly(a, ["s2.k", "law.A", "law.beta", "law.gamma"], [x])
    truth = {"s2.k": 150.0, "law.A": 300.0, "law.beta": 20.0, "law.gamma": -8.0}
    for k, v in res.values.items():
        assert abs(v / truth[k] - 1) < 1e-3, (k, v, truth[k])


LG = dict(m1=1.0, m2=0.5, k1=400.0, k2=150.0, c1=0.8, sigma0=2000.0, sigma1=5.0, Fc=1.0,
          Fs=1.5, vs=0.05)


def test_recovers_two_dof_lugre_from_clean_reference_data():
    Y = lugre_reference(LG, 2.0)
    a = two_dof(LuGre(sigma0=1500.0, sigma1=5.0, Fc=0.8, Fs=1.8, vs=0.05), ("m1", "m2"))
    x = Experiment(dt=1 / FS, inputs={"u": force(T, 2.0), "base": 0 * T},
                   outputs={"m1.x": Y[0], "m2.x": Y[1]},
                   sigma=1e-3, interpolation="cubic", substeps=8)
    res = fit_assembly(a, ["law.sigma0", "law.Fc", "law.Fs", "s1.k"], [x],
                       bounds={"law.Fc": (0.1, 10), "law.Fs": (0.1, 10)})
    truth = {"law.sigma0": 2000.0, "law.Fc": 1.0, "law.Fs": 1.5, "s1.k": 400.0}
    for k, v in res.values.items():
        assert abs(v / truth[k] - 1) < 1e-3, (k, v, truth[k])


def test_multistart_skips_starts_the_law_refuses_and_bad_input_is_a_value_error():
    a = two_dof(LuGre(sigma0=2000.0, sigma1=5.0, Fc=1.0, Fs=1.05, vs=0.05), ("m1", "m2"))
    u = force(T[:200], 2.0)
    x = Experiment(dt=1 / FS, inputs={"u": u, "base": 0 * u}, outputs={"m1.x": np.zeros(200)},
                   substeps=2)
    res = fit_assembly(a, ["law.Fc", "law.Fs"], [x], starts=6, spread=0.5, seed=3,
                       max_nfev=3, uncertainty=None)
    assert res.skipped >= 1 and res.starts == 7      # some random starts have Fs < Fc
    assert res.values["law.Fs"] >= res.values["law.Fc"]
    with pytest.raises(ValueError, match="free parameter .law.nope."):
        OutputErrorProblem(a, ["law.nope"], [x])
    with pytest.raises(ValueError, match="interpolation"):
        Experiment(dt=0.1, inputs={"u": u, "base": u}, outputs={"m1.x": u},
                   interpolation="spline")
    with pytest.raises(ValueError, match="x0 is not a valid"):
        fit_assembly(a, ["law.Fc", "law.Fs"], [x], x0=[2.0, 1.0])


def test_fourier_interpolation_reproduces_a_sampled_multisine_and_its_derivative():
    from hystmech.identify.assembly import fine_inputs

    n, dt, r = 64, 0.01, 3
    w1, w2 = 2 * np.pi * 3 / (n * dt), 2 * np.pi * 20 / (n * dt)
    f = lambda t: np.cos(w1 * t + 0.4) + 0.5 * np.sin(w2 * t)            # noqa: E731
    df = lambda t: -w1 * np.sin(w1 * t + 0.4) + 0.5 * w2 * np.cos(w2 * t)  # noqa: E731
    xf, dxf = fine_inputs(f(np.arange(n) * dt), dt, r, "fourier")
    tf = np.arange(xf.size) * dt / (2 * r)
    assert xf.size == (n - 1) * 2 * r + 1
    assert np.abs(xf - f(tf)).max() < 1e-12
    assert np.abs(dxf - df(tf)).max() < 1e-12 * w2


@pytest.mark.parametrize("law, x", [
    (BoucWen(A=300.0, beta=20.0, gamma=-8.0, n=1.0), 0.7),
    (BoucWen(A=300.0, beta=20.0, gamma=5.0, n=1.6), -0.4),
    (BoucWen(A=300.0, beta=20.0, gamma=5.0, n=0.6), 0.3),
    (LuGre(sigma0=2000.0, sigma1=5.0, Fc=1.0, Fs=1.5, vs=0.05, beta=1.3, sigma2=0.4), 3e-4),
])
def test_pjac_kernels_match_central_differences_of_rate_and_force(law, x):
    n = law.n_states
    for u, v in ((0.01, 0.03), (-0.02, -0.2), (0.0, 1e-3)):
        Jp = np.zeros((n + 1, law.p.size))
        xs = np.full(n, x)
        law.pjac(xs, u, v, law.p, Jp)
        for j in range(law.p.size):
            d = 1e-6 * max(abs(law.p[j]), 1e-3)
            pp, pm = law.p.copy(), law.p.copy()
            pp[j] += d
            pm[j] -= d
            rp, rm = np.zeros(n), np.zeros(n)
            law.rate(xs, u, v, pp, rp)
            law.rate(xs, u, v, pm, rm)
            fd = np.append((rp - rm) / (2 * d),
                           (law.force(xs, u, v, pp) - law.force(xs, u, v, pm)) / (2 * d))
            # the differences' rounding: ~1e-16·|value|/d
            mag = max(np.abs(rp).max(), abs(law.force(xs, u, v, pp)))
            np.testing.assert_allclose(Jp[:, j], fd, rtol=1e-6, atol=1e-14 * mag / d,
                                       err_msg=f"{type(law).__name__} p[{j}]")
