"""Parameter sensitivities (``pjac`` kernels) of every smooth law, through fit_assembly.

Truths: (1) central differences of the law's own rate and force kernels in p (each
kernel is the hand derivative of its paper equation); (2) central differences, in the
parameters, of whole runs of a one-DOF rig integrated by scipy's DOP853 at rtol 1e-11
from right-hand sides written here from the papers' equations (not hystmech's): the
continuous-time sensitivities, which the RK4 forward sensitivities of
identify/assembly.py approach at the integration's accuracy; (3) recovery of known
parameters from clean data of those independent references.
"""
import math

import numpy as np
import pytest
from numba import njit
from scipy.integrate import solve_ivp

from hystmech.components.bouc_wen import BoucWen
from hystmech.components.combine import SumElement
from hystmech.components.dahl import Dahl
from hystmech.components.duhem import Duhem
from hystmech.components.linear import LinearDamper, LinearSpring, SpringDamper
from hystmech.components.lugre import LuGre
from hystmech.components.masing import Masing
from hystmech.components.maxwell_slip import MaxwellSlip
from hystmech.components.modified_dahl import ModifiedDahl
from hystmech.components.preisach import PrandtlIshlinskii, Relay
from hystmech.components.viscous_dahl import (AsymmetricViscousDahl, NaiveAsymmetricViscousDahl,
                                              ViscousDahl)
from hystmech.identify.assembly import Experiment, OutputErrorProblem, fit_assembly
from hystmech.systems import Assembly
from hystmech.systems.assembly import GROUND


@njit
def hu(u):
    return 3.0 * u + 1.0 + 2e4 * u ** 3


@njit
def hl(u):
    return 3.0 * u - 1.0 + 2e4 * u ** 3


@njit
def lorentz_g(v):
    # a Stribeck curve of another form than the default: Fc + (Fs − Fc)/(1 + (v/vs)²)
    return 1.0 + 0.5 / (1.0 + (v / 0.02) ** 2)


@njit
def quad_f(v):
    return 0.3 * v + 2.0 * v * abs(v)


def laws():
    return {
        "dahl": Dahl(rho=300.0, Fc=2.0, w0=0.1),
        "viscous-dahl": ViscousDahl(kx=1.5, kw=2.0, rho=250.0),
        "asymmetric-viscous-dahl": AsymmetricViscousDahl(kx1=1.5, kw1=2.0, kx2=1.0, kw2=3.0,
                                                         rho=250.0),
        "naive-asymmetric-viscous-dahl": NaiveAsymmetricViscousDahl(kx1=1.5, kw1=2.0, kx2=1.0,
                                                                    kw2=3.0, rho=250.0),
        "modified-dahl-mu1.6": ModifiedDahl(Lambda=60.0, mu=1.6, a=100.0, b=1.5, d=80.0, e=-1.0),
        "modified-dahl-mu0.37": ModifiedDahl(Lambda=900.0, mu=0.37, a=100.0, b=1.5, d=80.0,
                                             e=-1.0),
        "duhem": Duhem(A=200.0, hu=hu, hl=hl),
        "lugre-beta2": LuGre(sigma0=2000.0, sigma1=5.0, Fc=1.0, Fs=1.5, vs=0.02, beta=2.0,
                             sigma2=0.4),
        "lugre-user-g": LuGre(sigma0=2000.0, sigma1=5.0, Fc=1.0, Fs=1.5, vs=0.02, g=lorentz_g,
                              f=quad_f),
        "bouc-wen-n1.5": BoucWen(A=600.0, beta=40.0, gamma=10.0, n=1.5, k_el=20.0),
        "linear-spring": LinearSpring(k=50.0, u0=1e-3),
        "linear-damper": LinearDamper(c=0.7),
        "spring-damper": SpringDamper(k=50.0, c=0.7, u0=1e-3),
        "sum": SumElement(Dahl(rho=300.0, Fc=2.0), SpringDamper(k=50.0, c=0.7)),
        "masing": Masing(k=300.0, k0=50.0, alpha=1.5, F0=0.2, c=0.3),
    }


def _fd_kernel(law, xs, u, v):
    """pjac and the fourth-order central difference of (rate, force) in each p slot
    (step 1e-4 relative: truncation ~1e-16, rounding ~1e-12 of the terms' size)."""
    n = law.n_states
    Jp = np.zeros((n + 1, law.p.size))
    law.pjac(xs, u, v, law.p, Jp)
    fd = np.zeros_like(Jp)

    def ev(p):
        r = np.zeros(n)
        if n:
            law.rate(xs, u, v, p, r)
        return np.append(r, law.force(xs, u, v, p))
    mag = np.abs(ev(law.p)).max()
    tol = np.zeros(law.p.size)
    for j in range(law.p.size):
        d = 1e-4 * max(abs(law.p[j]), 1e-3)
        # truncation, and ~1 ulp of the values over the step
        tol[j] = 1e-10 * max(mag, 1.0) + 1e-14 * mag / d
        f = []
        for k in (2, 1, -1, -2):
            pk = law.p.copy()
            pk[j] += k * d
            f.append(ev(pk))
        fd[:, j] = (-f[0] + 8 * f[1] - 8 * f[2] + f[3]) / (12 * d)
    return Jp, fd, tol


@pytest.mark.parametrize("name", list(laws()))
def test_pjac_kernel_matches_central_differences_of_the_laws_rate_and_force(name):
    law = laws()[name]
    n = law.n_states
    # both sides of u̇ = 0 and of the state's sign (asymmetric laws switch on both)
    for xv in (0.4, -0.3):
        for u, v in ((0.01, 0.03), (-0.02, -0.2), (0.003, 1e-3), (-0.004, -0.05)):
            xs = np.full(n, xv * float(law.x_scale[0]) if n else 0.0)
            Jp, fd, tol = _fd_kernel(law, xs, u, v)
            for j in range(tol.size):
                np.testing.assert_allclose(Jp[:, j], fd[:, j], rtol=1e-7, atol=tol[j],
                                           err_msg=f"{name} p[{j}] at x={xs}, u={u}, v={v}")


def test_a_sum_names_its_parts_parameters_and_has_their_pjac():
    s = laws()["sum"]
    Jp = np.zeros((2, s.p.size))
    s.pjac(np.array([0.3]), 0.01, 0.05, s.p, Jp)
    a = np.zeros((2, 2))
    Dahl(rho=300.0, Fc=2.0).pjac(np.array([0.3]), 0.01, 0.05, np.array([300.0, 2.0]), a)
    np.testing.assert_array_equal(Jp[:, :2], a)
    np.testing.assert_array_equal(Jp[1, 2:], [0.01, 0.05, -50.0])


# -- whole runs: the RK4 forward sensitivities against differences of DOP853 runs ------------
FS = 400.0
NS = 401
T = np.arange(NS) / FS
FREQS = np.array([1.3, 2.9, 4.1, 6.7])
PH = np.array([0.3, 1.9, 4.0, 2.2])
M, K, C = 1.0, 400.0, 0.8


def force_in(t, amp=3.0):
    return amp * np.sum(np.cos(2 * np.pi * FREQS * np.asarray(t)[..., None] + PH), axis=-1)


def spow(z, n):
    return math.copysign(abs(z) ** n, z)


# each law written from its paper's equation: (ẋ of the states, F) of (states, u, u̇, p)
def ref_law(name):
    if name == "dahl":                     # Ikhouane et al. §1
        return (lambda z, u, v, p: [p["rho"] * (v - abs(v) * z[0])],
                lambda z, u, v, p: p["Fc"] * z[0])
    if name == "asymmetric-viscous-dahl":  # viscous + Dahl paper, eqs. (27)-(33)
        return (lambda z, u, v, p: [p["rho"] * (v - abs(v) * z[0])],
                lambda z, u, v, p: (p["kx1"] if v >= 0 else p["kx2"]) * v
                + (p["kw1"] if z[0] >= 0 else p["kw2"]) * z[0])
    if name == "modified-dahl-mu1.6":      # Bastien et al. (2007), eqs. (3)-(4)
        def rate(z, u, v, p):
            D = p["a"] * u + p["b"] - z[0] if v >= 0 else p["d"] * u + p["e"] - z[0]
            return [p["Lambda"] * abs(v) * spow(D, p["mu"])]
        return rate, lambda z, u, v, p: z[0]
    if name == "duhem":                    # Bastien et al. (2007), eq. (2)
        return (lambda z, u, v, p: [p["A"] * v * (hu(u) - z[0]) if v >= 0
                                    else -p["A"] * v * (hl(u) - z[0])],
                lambda z, u, v, p: z[0])
    if name == "lugre-beta2":              # Canudas de Wit et al.; Stribeck β = 2
        def g(v, p):
            return p["Fc"] + (p["Fs"] - p["Fc"]) * math.exp(-abs(v / p["vs"]) ** p["beta"])

        def xd(z, v, p):
            return v - p["sigma0"] * abs(v) * z[0] / g(v, p)
        return (lambda z, u, v, p: [xd(z, v, p)],
                lambda z, u, v, p: p["sigma0"] * z[0] + p["sigma1"] * xd(z, v, p)
                + p["sigma2"] * v)
    if name == "lugre-user-g":
        def xd(z, v, p):
            return v - p["sigma0"] * abs(v) * z[0] / (1.0 + 0.5 / (1.0 + (v / 0.02) ** 2))
        return (lambda z, u, v, p: [xd(z, v, p)],
                lambda z, u, v, p: p["sigma0"] * z[0] + p["sigma1"] * xd(z, v, p)
                + 0.3 * v + 2.0 * v * abs(v))
    if name == "bouc-wen-n1.5":            # ż = A u̇ − β|u̇||z|^(n−1)z − γu̇|z|^n
        return (lambda z, u, v, p: [p["A"] * v - p["beta"] * abs(v) * spow(z[0], p["n"])
                                    - p["gamma"] * v * abs(z[0]) ** p["n"]],
                lambda z, u, v, p: p["k_el"] * u + z[0])
    if name == "sum":
        return (lambda z, u, v, p: [p["part0.rho"] * (v - abs(v) * z[0])],
                lambda z, u, v, p: p["part0.Fc"] * z[0] + p["part1.k"] * u + p["part1.c"] * v)
    raise KeyError(name)


def ref_run(name, p, z0):
    rate, F = ref_law(name)

    def rhs(t, s):
        x, v, z = s[0], s[1], s[2:]
        f = force_in(t) - K * x - C * v - F(z, x, v, p)
        return [v, f / p["m"], *rate(z, x, v, p)]
    s = solve_ivp(rhs, (0, T[-1]), [0.0, 0.0, *z0], method="DOP853", rtol=1e-11, atol=1e-14,
                  t_eval=T)
    assert s.success
    Fe = np.array([F(s.y[2:, i], s.y[0, i], s.y[1, i], p) for i in range(T.size)])
    return np.stack([s.y[0], Fe], 1)


def one_dof(law):
    a = Assembly()
    a.add_dof("m", mass=M)
    a.add_spring("m", GROUND, k=K, name="s")
    a.add_damper("m", GROUND, c=C, name="d")
    a.add_element("law", law, "m", GROUND)
    a.add_force("m", 0.0, name="u")
    return a


WHOLE = {
    "dahl": ["rho", "Fc"],
    "asymmetric-viscous-dahl": ["kx1", "kw1", "kx2", "kw2", "rho"],
    "modified-dahl-mu1.6": ["Lambda", "mu", "a", "b", "d", "e"],
    "duhem": ["A"],
    "lugre-beta2": ["sigma0", "sigma1", "Fc", "Fs", "vs", "beta", "sigma2"],
    "lugre-user-g": ["sigma0", "sigma1"],
    "bouc-wen-n1.5": ["A", "beta", "gamma", "n", "k_el"],
    "sum": ["part0.rho", "part0.Fc", "part1.k", "part1.c"],
}


# the differences' step where 0.1 % leaves the reference's own error (~1e-6 of F) over a
# weak sensitivity dominant (LuGre's Stribeck exponent moves F only near u̇ = 0)
STEP = {("lugre-beta2", "beta"): 1e-2}


@pytest.mark.parametrize("name", list(WHOLE))
def test_forward_sensitivities_match_differences_of_independent_dop853_runs(name):
    """The RK4 forward sensitivities (exact for the discrete model) against the
    continuous-time ones, here the central differences (step 0.1 %) of the independent
    DOP853 runs: within 2 % in the root-mean-square over the record at 16 RK4 steps per
    sample (what is left: the RK4 error at the velocity reversals, where |u̇| has a kink;
    the differences' own error, O(step²) ≈ 1e-6 relative (1e-4 at LuGre's 1 % step
    below), and the runs' rtol 1e-11 over the step, ≈ 1e-8, are far below it; a missing
    or wrong term of a kernel is an error of the order of the sensitivity itself)."""
    law = laws()[name]
    a = one_dof(law)
    free = ["law." + k for k in WHOLE[name]] + ["m.m"]
    x = Experiment(dt=1 / FS, inputs={"u": force_in(T)},
                   outputs={"m.x": 0 * T, "law.F": 0 * T}, interpolation="cubic", substeps=16)
    P = OutputErrorProblem(a, free, [x])
    S = P.simulate(P.theta0, 0, True)[1]
    th = P.theta0
    p = {k: float(v) for k, v in zip(WHOLE[name], th[:-1])}
    p["m"] = M
    z0 = list(law.x0)
    for c, nm in enumerate(free):
        key = nm.split(".", 1)[1] if nm != "m.m" else "m"
        d = STEP.get((name, key), 1e-3) * abs(p[key])
        f = []
        for k in (1, -1):
            pk = dict(p)
            pk[key] += k * d
            f.append(ref_run(name, pk, z0))
        fd = (f[0] - f[1]) / (2 * d)
        for o in range(2):
            err = np.linalg.norm(S[:, o, c] - fd[:, o]) / np.linalg.norm(fd[:, o])
            assert err < 2e-2, (name, nm, ("x", "F")[o], err)


# -- recovery from clean data of the independent references ----------------------------------
@pytest.mark.parametrize("name, start", [
    ("asymmetric-viscous-dahl", dict(kx1=1.0, kw1=2.5, kx2=1.4, kw2=2.2, rho=200.0)),
    ("modified-dahl-mu1.6", dict(Lambda=45.0, mu=1.4, a=120.0, b=1.2, d=60.0, e=-1.2)),
])
def test_fit_assembly_recovers_a_laws_parameters_from_independent_clean_data(name, start):
    law = laws()[name]
    truth = {k: float(law.params[k]) for k in start}
    Y = ref_run(name, {**truth, "m": M}, list(law.x0))
    a = one_dof(type(law)(**{**law.params, **start}))
    x = Experiment(dt=1 / FS, inputs={"u": force_in(T)}, outputs={"m.x": Y[:, 0]},
                   sigma=1e-4, interpolation="cubic", substeps=8)
    res = fit_assembly(a, ["law." + k for k in start], [x], uncertainty=None)
    for k, v in res.values.items():
        assert abs(v / truth[k[4:]] - 1) < 1e-3, (k, v, truth[k[4:]])


# -- inclusions: the projected RK4 scheme and its exact sensitivities ------------------------
def masing_reference(p, w0=0.0):
    """Bastien et al. (2007) eq. (11) on the one-DOF rig, F = k w + k0 u + c u̇ − F0:
    stick (ẇ = u̇) while |w| < η = α/k, slip (ẇ = 0 at w = ±η) until u̇ changes sign;
    DOP853 at rtol 1e-11 with the switches located as events."""
    eta = p["alpha"] / p["k"]

    def F(x, v, w):
        return p["k"] * w + p["k0"] * x + p["c"] * v - p["F0"]

    def rhs(t, s, slip):
        x, v, w = s
        return [v, (force_in(t) - K * x - C * v - F(x, v, w)) / p["m"], 0.0 if slip else v]
    t, s, slip = 0.0, np.array([0.0, 0.0, w0]), 0
    out = np.full((T.size, 3), np.nan)
    while True:
        if slip:
            def ev(tt, ss, sl):
                return ss[1]
            ev.direction = -slip
        else:
            def ev(tt, ss, sl):
                return (ss[2] - eta) * (ss[2] + eta)
            ev.direction = 1
        ev.terminal = True
        sol = solve_ivp(rhs, (t, T[-1]), s, method="DOP853", rtol=1e-11, atol=1e-14,
                        t_eval=T[T >= t], events=ev, args=(slip,))
        k = np.searchsorted(T, sol.t[0]) if sol.t.size else T.size
        out[k:k + sol.t.size] = sol.y.T
        if sol.status != 1:
            break
        t, s = sol.t_events[0][0], sol.y_events[0][0].copy()
        if slip:
            slip = 0
        else:
            slip = 1 if s[2] > 0 else -1
            s[2] = slip * eta
    assert not np.isnan(out).any()
    return np.column_stack([out[:, 0], [F(*r) for r in out]])


@pytest.mark.parametrize("law, free", [
    (Masing(k=300.0, k0=50.0, alpha=1.5, F0=0.2, c=0.3),
     ["law.k", "law.k0", "law.eta", "law.F0", "law.c", "m.m", "law.w0"]),
    (MaxwellSlip(k=[200.0, 100.0], delta=[2e-3, 6e-3]),
     ["law.k_1", "law.k_2", "law.Delta_1", "law.Delta_2", "m.m", "law.Z20"]),
])
def test_inclusions_sensitivities_are_exact_for_the_projected_scheme(law, free):
    """Every stage state projected onto the box: the sensitivities (the projection's
    derivative: a clipped state follows its bound) against central differences of the
    same discrete model."""
    a = one_dof(law)
    st = [c for c in a.state_names() if c.startswith("law.")]
    x = Experiment(dt=1 / FS, inputs={"u": force_in(T)},
                   outputs={"m.x": 0 * T, "law.F": 0 * T, **{c: 0 * T for c in st}},
                   interpolation="cubic", substeps=8)
    P = OutputErrorProblem(a, free, [x])
    th = P.theta0.copy()
    th[-1] = 1e-3                          # an initial state inside the box
    Y, S = P.simulate(th, 0, True)
    assert np.abs(Y[:, 2]).max() == pytest.approx(float(law.box_hi[0]))   # it slips
    for c, nm in enumerate(free):
        d = 1e-7 * max(abs(th[c]), 1e-3)
        tp, tm = th.copy(), th.copy()
        tp[c] += d
        tm[c] -= d
        fd = (P.simulate(tp)[0] - P.simulate(tm)[0]) / (2 * d)
        for o in range(Y.shape[1]):
            err = np.linalg.norm(fd[:, o] - S[:, o, c]) / max(np.linalg.norm(S[:, o, c]), 1e-300)
            assert err < 1e-5, (nm, o, err)


def test_fit_assembly_recovers_masing_from_an_independent_event_driven_reference():
    truth = dict(k=300.0, k0=50.0, alpha=1.5, F0=0.2, c=0.3, m=M)
    Y = masing_reference(truth)
    a = one_dof(Masing(k=250.0, k0=60.0, alpha=1.2, F0=0.2, c=0.3))
    x = Experiment(dt=1 / FS, inputs={"u": force_in(T)}, outputs={"m.x": Y[:, 0]},
                   sigma=1e-4, interpolation="cubic", substeps=16)
    res = fit_assembly(a, ["law.k", "law.k0", "law.eta"], [x], uncertainty=None)
    want = {"law.k": 300.0, "law.k0": 50.0, "law.eta": 1.5 / 300.0}
    for k, v in res.values.items():
        assert abs(v / want[k] - 1) < 1e-3, (k, v, want[k])


# -- undeclared boxes and sums with an operator part: refused, naming the law and why --------
@pytest.mark.parametrize("make", [
    lambda: SumElement(Masing(k=100.0, k0=10.0, alpha=1.0), LinearDamper(c=0.5)),
    lambda: SumElement(PrandtlIshlinskii(r=[1e-3, 2e-3], weights=[10.0, 5.0], h=1e-4,
                                         u_bound=0.02), LinearSpring(k=10.0)),
], ids=["masing-damper", "pi-spring"])
def test_undeclared_boxes_and_operator_sums_are_refused_with_the_reason_and_the_alternative(make):
    # (built here, not at collection: the operator's construction compiles its kernels)
    law = make()
    a = one_dof(law)
    x = Experiment(dt=1 / FS, inputs={"u": force_in(T)}, outputs={"m.x": 0 * T})
    with pytest.raises(ValueError) as e:
        OutputErrorProblem(a, ["m.m"], [x])
    msg = str(e.value)
    assert type(law).__name__ in msg and "'law'" in msg
    if law.kind == "inclusion":
        assert "inclusion" in msg and "fit_element" in msg and "hystmech identify" in msg
    else:
        assert "operator part" in msg and "its own element" in msg


def test_a_user_functions_numbers_are_refused_as_free_parameters():
    a = one_dof(laws()["lugre-user-g"])
    x = Experiment(dt=1 / FS, inputs={"u": force_in(T)}, outputs={"m.x": 0 * T})
    with pytest.raises(ValueError, match="free parameter 'law.Fs'.*reads only sigma0, sigma1"):
        OutputErrorProblem(a, ["law.Fs"], [x])


# -- per-experiment initial states ------------------------------------------------------------
def test_per_experiment_initial_states_have_exact_sensitivities_and_are_recovered():
    truth = dict(rho=300.0, Fc=2.0)
    w0 = {"a": 0.5, "b": -0.4}
    Y = {k: ref_run("dahl", {**truth, "m": M}, [w]) for k, w in w0.items()}
    a = one_dof(Dahl(rho=240.0, Fc=2.4))
    xs = [Experiment(dt=1 / FS, inputs={"u": force_in(T)}, outputs={"m.x": Y[k][:, 0]},
                     sigma=1e-4, interpolation="cubic", substeps=8, name=k) for k in w0]
    free = ["law.rho", "law.Fc", "law.w0@a", "law.w0@b", "m.v0@b"]
    P = OutputErrorProblem(a, free, xs)
    th = np.array([240.0, 2.4, 0.2, -0.1, 0.01])
    for e in range(2):
        _, S = P.simulate(th, e, True)
        # an experiment's initial state moves only that experiment
        assert np.all(S[:, 0, 2 + (1 - e)] == 0.0)
        if e == 0:
            assert np.all(S[:, 0, 4] == 0.0)
        for c in range(len(free)):
            d = 1e-6 * max(abs(th[c]), 1e-2)
            tp, tm = th.copy(), th.copy()
            tp[c] += d
            tm[c] -= d
            fd = (P.simulate(tp, e)[0] - P.simulate(tm, e)[0]) / (2 * d)
            assert np.abs(fd[:, 0] - S[:, 0, c]).max() <= 1e-6 * max(np.abs(S[:, 0, c]).max(),
                                                                      1e-12), (e, free[c])
    res = fit_assembly(a, free[:4], xs, x0=th[:4], uncertainty=None)
    want = {"law.rho": 300.0, "law.Fc": 2.0, "law.w0@a": 0.5, "law.w0@b": -0.4}
    for k, v in res.values.items():
        assert abs(v / want[k] - 1) < 1e-3, (k, v, want[k])
    with pytest.raises(ValueError, match="exactly one named 'c'"):
        OutputErrorProblem(a, ["law.w0@c"], xs)
    with pytest.raises(ValueError, match="only initial states take an experiment"):
        OutputErrorProblem(a, ["law.rho@a"], xs)
