"""Folds, stability and fold curves of the Duffing oscillator (issue 21) against
references written here, independent of hystmech: scipy DOP853 with the variational
equations (monodromy, fold system solved by scipy's fsolve) and a vectorised
fixed-step RK4 brute-force integration across each fold.

m ẍ + c ẋ + k x + k3 x³ = F cos(Ω t), m = 1, c = 0.05, k = 1, k3 = 0.1."""
import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.optimize import fsolve

from hystmech.systems.periodic.bifurcation import continue_folds
from hystmech.systems.periodic.continuation import continue_orbits
from hystmech.systems.periodic.stability import classify, reduce_neutral

from test_periodic import oscillator

M_, C_, K_, K3_ = 1.0, 0.05, 1.0, 0.1
RANGES = {0.5: (1.1, 1.9), 0.065: (1.0, 1.12), 0.06: (1.0, 1.12)}


def ref_monodromy(y0, Om, F, t0):
    """(φ(y0), M) over one period from t0 by DOP853 at rtol 1e-11 (plain Python)."""
    def f(t, z):
        x, v = z[0], z[1]
        P = z[2:].reshape(2, 2)
        J = np.array([[0.0, 1.0], [-(K_ + 3 * K3_ * x * x) / M_, -C_ / M_]])
        a = (F * math.cos(Om * t) - C_ * v - K_ * x - K3_ * x ** 3) / M_
        return np.concatenate([[v, a], (J @ P).ravel()])
    T = 2 * math.pi / Om
    s = solve_ivp(f, (t0, t0 + T), np.r_[y0, 1.0, 0.0, 0.0, 1.0], method="DOP853",
                  rtol=1e-11, atol=1e-12)
    return s.y[:2, -1], s.y[2:, -1].reshape(2, 2)


def ref_fold(y, Om, F, phase):
    """The fold at fixed F from the guess (y, Ω): φ(y) = y, det(M − I) = 0, section at
    phase·2π/Ω (fsolve on the DOP853 maps)."""
    def g(z):
        fy, M = ref_monodromy(z[:2], z[2], F, phase * 2 * math.pi / z[2])
        return np.r_[fy - z[:2], np.linalg.det(M - np.eye(2))]
    z, info, ier, msg = fsolve(g, np.r_[y, Om], xtol=1e-12, full_output=True)
    assert ier == 1, msg
    return z


def rk4_amplitudes(y0, t0, Om, F, periods=400, steps=200):
    """Brute force: each column (y0[:, i], t0[i], Om[i], F[i]) integrated by a fixed-step
    RK4 (vectorised over the runs, h = T/steps); 0.5·peak-to-peak of x over the last
    period."""
    x, v = np.array(y0[0], float), np.array(y0[1], float)
    Om, F = np.asarray(Om, float), np.asarray(F, float)
    h = 2 * math.pi / Om / steps
    t = np.array(t0, float)

    def acc(t, x, v):
        return (F * np.cos(Om * t) - C_ * v - K_ * x - K3_ * x ** 3) / M_
    xmax, xmin = np.full(x.shape, -np.inf), np.full(x.shape, np.inf)
    for n in range(periods * steps):
        k1x, k1v = v, acc(t, x, v)
        k2x, k2v = v + 0.5 * h * k1v, acc(t + 0.5 * h, x + 0.5 * h * k1x, v + 0.5 * h * k1v)
        k3x, k3v = v + 0.5 * h * k2v, acc(t + 0.5 * h, x + 0.5 * h * k2x, v + 0.5 * h * k2v)
        k4x, k4v = v + h * k3v, acc(t + h, x + h * k3x, v + h * k3v)
        x = x + h / 6 * (k1x + 2 * k2x + 2 * k3x + k4x)
        v = v + h / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)
        t = t + h
        if n >= (periods - 1) * steps:
            xmax, xmin = np.maximum(xmax, x), np.minimum(xmin, x)
    return 0.5 * (xmax - xmin)


@pytest.fixture(scope="module")
def branches():
    out = {}
    for F, (a, b) in RANGES.items():
        out[F] = continue_orbits(lambda Om, F=F: oscillator(M_, C_, K_, F, Om, K3_), a, b,
                                 ds=0.02, ds_max=0.1, options=dict(rtol=1e-9),
                                 measure=lambda r: 0.5 * np.ptp(r.y[:, 0]))
    return out


@pytest.mark.parametrize("F", list(RANGES))
def test_duffing_folds_exact_against_independent_fold_system(branches, F):
    br = branches[F]
    folds = br.folds()
    assert len(folds) == 2, br.special
    for f in folds:
        assert f["exact"] and abs(f["multiplier"] - 1.0) < 1e-8
        z = ref_fold(f["y"], f["p"], F, br.phase[f["index"]])
        assert f["p"] == pytest.approx(z[2], abs=1e-7)
    if F == 0.5:        # the jumps found by the DOP853 sweeps: 1.817–1.818, 1.223–1.224
        hi, lo = sorted(f["p"] for f in folds)[::-1]
        assert 1.817 < hi < 1.818 and 1.223 < lo < 1.224


def stable_sheets(br, Om):
    """Amplitudes of the stable parts of the branch at Ω (linear interpolation)."""
    out = []
    for i in range(br.p.size - 1):
        a, b = br.p[i], br.p[i + 1]
        if br.stable[i] and br.stable[i + 1] and min(a, b) <= Om <= max(a, b) and a != b:
            out.append(br.measure[i] + (br.measure[i + 1] - br.measure[i]) * (Om - a) / (b - a))
    return np.array(out)


def test_duffing_folds_are_the_brute_force_jump_frequencies(branches):
    """From the orbit at each fold, a long integration just inside the bistable window
    stays on that orbit's sheet, just outside it jumps to the other sheet."""
    y0, t0, om, ff, want = [], [], [], [], []
    for F, br in branches.items():
        fl = sorted(br.folds(), key=lambda s: s["p"])
        width = fl[1]["p"] - fl[0]["p"]
        for f, inside in ((fl[0], +1.0), (fl[1], -1.0)):
            for sgn in (+1.0, -1.0):
                # outside the window further (the passage past the fold's ghost is slow)
                Om = f["p"] + sgn * min((0.1 if sgn == inside else 0.5) * width, 0.01)
                y0.append(f["y"])
                t0.append(br.phase[f["index"]] * 2 * math.pi / f["p"])
                om.append(Om)
                ff.append(F)
                want.append((sgn == inside, f["measure"], stable_sheets(br, Om)))
    A = rk4_amplitudes(np.array(y0).T, t0, om, ff, periods=160, steps=64)
    for a, (stays, a_fold, sheets) in zip(A, want):
        assert np.min(np.abs(sheets / a - 1.0)) < 1e-2      # settled on a stable sheet
        if stays:
            # inside the window: two stable sheets, it stays on the fold's own one
            assert sheets.size == 2
            own = sheets[np.argmin(np.abs(sheets - a_fold))]
            assert abs(a / own - 1.0) < 1e-2, (a, a_fold, sheets)
        else:
            # outside: one stable sheet, far from the fold's amplitude (it jumped)
            assert sheets.size == 1 and abs(a / a_fold - 1.0) > 0.05, (a, a_fold, sheets)


@pytest.mark.parametrize("F", list(RANGES))
def test_duffing_stability_equals_independent_variational_multipliers(branches, F):
    br = branches[F]
    assert br.monodromy_source == "variational"
    idx = range(0, br.p.size, 3) if br.p.size > 60 else range(br.p.size)
    n_unstable = 0
    for i in idx:
        T = 2 * math.pi / br.p[i]
        _, M = ref_monodromy(br.y[i], br.p[i], F, br.phase[i] * T)
        mu_ref = np.abs(np.linalg.eigvals(M)).max()
        want = "unstable" if mu_ref > 1.0 else "stable"
        assert br.multipliers[i].size == 2
        assert np.abs(br.multipliers[i]).max() == pytest.approx(mu_ref, abs=1e-6)
        if abs(mu_ref - 1.0) > 1e-6:
            assert br.stability[i] == want, (i, br.p[i], mu_ref)
        else:
            assert br.stability[i] in (want, "undecided")
        n_unstable += want == "unstable"
    assert n_unstable >= 2


def test_duffing_fold_curve_through_the_cusp_against_independent_fold_system(branches):
    br = branches[0.065]
    f = max(br.folds(), key=lambda s: s["p"])
    ph = br.phase[f["index"]]
    fc = continue_folds(lambda Om, F: oscillator(M_, C_, K_, F, Om, K3_), f["y"], f["p"], 0.065,
                        scale=np.ones(2), p_scale=0.1, q_scale=0.01, q_range=(0.05, 0.07),
                        phase=ph, direction=-1.0, ds=0.1, ds_max=0.4, max_points=60)
    assert len(fc.cusps) == 1
    cusp = fc.cusps[0]
    assert 0.05 < cusp["q"] < 0.06     # F = 0.06 still has two folds, see above
    assert np.all(np.abs(fc.multiplier - 1.0) < 1e-8)
    # both edges: the curve came back up to F = 0.065 on the other side
    assert fc.q[-1] >= 0.065 and fc.p[-1] < f["p"]
    lo = min(s["p"] for s in br.folds())
    # every few points of the curve (with the ones nearest the cusp) against the fold
    # system solved independently at the same F
    k = cusp["index"]
    check = sorted(set(range(0, fc.p.size, 4)) | {k - 1, k, k + 1})
    for i in check:
        z = ref_fold(fc.y[i], fc.p[i], fc.q[i], ph)
        assert fc.p[i] == pytest.approx(z[2], abs=1e-4)
        assert np.max(np.abs(z[:2] - fc.y[i])) < 1e-4
    # the edge past the cusp meets the branch's other fold at F = 0.065 (linear
    # interpolation between curve points)
    assert np.interp(0.065, fc.q[k + 1:], fc.p[k + 1:]) == pytest.approx(lo, abs=1e-3)


def test_classify_never_calls_an_undecidable_orbit_stable():
    assert classify([0.999, 0.5], [1e-4, 1e-4]) == "stable"
    assert classify([1.0005, 0.5], [1e-4, 1e-4]) == "unstable"
    assert classify([1.00005, 0.5], [1e-4, 1e-4]) == "undecided"
    assert classify([0.99995, 0.5], [1e-4, 1e-4]) == "undecided"
    with pytest.raises(ValueError, match="errors"):
        classify([0.5], [-1.0])
    # a stuck slider's unit row is removed, a non-unit row is kept
    M = np.array([[0.5, 0.2, 0.1], [0.0, 1.0, 0.0], [0.3, 0.0, 0.2]])
    R, keep = reduce_neutral(M, [1])
    assert list(keep) == [0, 2]
    assert np.allclose(np.sort(np.linalg.eigvals(R)), np.sort(
        np.linalg.eigvals(M)[np.abs(np.linalg.eigvals(M) - 1) > 1e-12]))
    _, keep = reduce_neutral(M, [0])
    assert list(keep) == [0, 1, 2]


def test_stuck_masing_belt_branch_has_no_fake_fold_and_covers_the_range():
    """The Masing belt tensioner at f1 = 13 N (scenario belt-tensioner-frf-continuation,
    its [continuation] settings) is stuck, i.e. linear (stiffness k + k0, damping
    c0(Ω), Bastien et al. (2007), eqs. (21a), (31)): no fold can exist. The raw
    monodromy keeps the stuck slider's neutral μ = 1; one a hair above 1 posed as a
    multiplier crossing +1, so a turning point of the piecewise-smooth projection map
    near the resonance (Ω ≈ 66.2 rad/s) was written as a fold (a jump frequency) and
    the branch turned back out of the range at Ω = 8.6 rad/s."""
    from hystmech.systems.periodic.frf_continuation import frf_branch
    from hystmech.systems.rigs.belt_tensioner import (MASING_PARAMS,
                                                      linear_tension_amplitude,
                                                      masing_damping)

    br = frf_branch("masing", 13.0, 10.0, 125.0, h=1e-5, tol=1e-3, ds=0.02, ds_max=0.03,
                    state_weight=0.2, jacobian_every=3, max_points=500, n_samples=256,
                    max_measure_step=0.1)
    assert not br.folds()
    assert br.message.startswith("left the parameter range") and br.p[-1] >= 125.0
    # forward all the way (a few sub-step wiggles of the non-smooth map aside)
    assert np.diff(br.p).min() > -0.01 * (125.0 - 10.0)
    assert all(s["kind"] == "restart" for s in br.special)
    assert br.stable.all()
    # the linear closed form of the stuck rig, across the resonance peak
    k = MASING_PARAMS["k"] + MASING_PARAMS["k0"]
    ref = np.array([linear_tension_amplitude(w, k_t=k, c_t=masing_damping(w), f1=13.0)
                    for w in br.p])
    assert br.measure == pytest.approx(ref, rel=0.01)
    grid = np.linspace(60.0, 75.0, 301)
    peak = max(linear_tension_amplitude(w, k_t=k, c_t=masing_damping(w), f1=13.0)
               for w in grid)
    assert br.measure.max() == pytest.approx(peak, rel=0.01)
    assert br.measure.max() > 5 * br.measure[0]


def test_masing_belt_branch_that_cannot_continue_says_where_and_reports_no_fold():
    """At f1 = 200 N (scenario settings) the Masing branch's map is not smooth near the
    peak: it stops, with no fold reported, and says where and after how many restarts."""
    from hystmech.systems.periodic.frf_continuation import frf_branch

    br = frf_branch("masing", 200.0, 10.0, 125.0, h=1e-5, tol=1e-3, ds=0.02, ds_max=0.03,
                    state_weight=0.2, jacobian_every=3, max_points=500, n_samples=256,
                    max_measure_step=0.1)
    assert not br.folds()
    if br.p[-1] < 125.0:
        assert "step size fell below ds_min" in br.message
        assert f"at p = {br.p[-1]:.6g}" in br.message
        assert "3 of max_restarts = 3 restarts used" in br.message
        assert "does not reach p = 125" in br.message
