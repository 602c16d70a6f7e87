"""Branch points with branch switching, Neimark–Sacker points located exactly, and the
search for coexisting orbits / isolas (issue 21, systems/periodic/continuation.py,
bifurcation.py, coexisting.py), against references written here with scipy DOP853
(rtol 1e-11): the variational equations of the symmetric orbit, long integrations
from the found states, and the harmonic-balance closed form of the isola."""
import math

import numpy as np
import pytest
from numba import njit
from scipy.integrate import solve_ivp
from scipy.optimize import fsolve

from hystmech.systems import Assembly, Harmonic
from hystmech.systems.periodic.continuation import continue_orbits, switch_branch
from hystmech.systems.periodic.shooting import periodic_orbit

from test_periodic import Cubic, Stateless, oscillator

DOP = dict(method="DOP853", rtol=1e-11, atol=1e-12)

# -- a symmetric pair of Duffing oscillators: pitchfork of the in-phase orbit -------------
# ẍ_i + c ẋ_i + x_i + k3 x_i³ + kc (x_i − x_j) = F cos Ωt, i = 1, 2 (kc < 0: the
# antisymmetric mode is the softer one, so the in-phase orbit's antisymmetric part is
# parametrically excited on the upper branch and breaks the x1 ↔ x2 symmetry)
C2, K32, F2, KC = 0.05, 0.5, 0.2, -0.05


def pair(Om):
    a = Assembly()
    for d in ("x1", "x2"):
        a.add_dof(d, mass=1.0)
        a.add_spring(d, "ground", k=1.0)
        a.add_damper(d, "ground", c=C2)
        a.add_element("cub" + d, Cubic(k3=K32), d)
        a.add_force(d, Harmonic(0.0, F2, Om, 0.0))
    a.add_spring("x1", "x2", k=KC)
    return a


def pair_rhs(Om):
    def f(t, y):
        x, v = y[:2], y[2:4]
        a = F2 * math.cos(Om * t) - C2 * v - x - K32 * x ** 3 - KC * (x - x[::-1])
        return np.concatenate([v, a])
    return f


def pair_monodromy(y0, Om):
    """(φ_T(y0), M) of the pair by DOP853 with the variational equations."""
    def f(t, z):
        x, v = z[:2], z[2:4]
        J = np.zeros((4, 4))
        J[0, 2] = J[1, 3] = 1.0
        J[2, 0] = -1 - 3 * K32 * x[0] ** 2 - KC
        J[3, 1] = -1 - 3 * K32 * x[1] ** 2 - KC
        J[2, 1] = J[3, 0] = KC
        J[2, 2] = J[3, 3] = -C2
        return np.concatenate([pair_rhs(Om)(t, z[:4]), (J @ z[4:].reshape(4, 4)).ravel()])
    s = solve_ivp(f, (0.0, 2 * math.pi / Om), np.r_[y0, np.eye(4).ravel()], **DOP).y[:, -1]
    return s[:4], s[4:].reshape(4, 4)


def ref_branch_point(x0, v0, Om):
    """Ω where the in-phase orbit x1 = x2 = x gains an antisymmetric multiplier +1:
    x periodic (x'' + c x' + x + k3 x³ = F cos Ωt) and det(M_a − I) = 0 for
    u'' + c u' + (1 + 2 kc + 3 k3 x²) u = 0 (fsolve on DOP853 maps)."""
    def g(z):
        x, v, W = z
        def f(t, q):
            u = q[2:].reshape(2, 2)
            ka = 1 + 2 * KC + 3 * K32 * q[0] ** 2
            return np.r_[q[1], F2 * math.cos(W * t) - C2 * q[1] - q[0] - K32 * q[0] ** 3,
                         u[1], -ka * u[0] - C2 * u[1]]
        s = solve_ivp(f, (0, 2 * math.pi / W), [x, v, 1, 0, 0, 1], **DOP).y[:, -1]
        Ma = s[2:].reshape(2, 2)
        return [s[0] - x, s[1] - v, np.linalg.det(Ma - np.eye(2))]
    z, info, ier, msg = fsolve(g, [x0, v0, Om], xtol=1e-12, full_output=True)
    assert ier == 1, msg
    return z


# -- a polynomial damper F = (c0 + c2 u² + c4 u⁴)·v: van der Pol (c0 < 0) and a
#    nonlinear damping whose frequency response has an isola -------------------------------
@njit(cache=True)
def poly_force(x, u, v, p):
    return (p[0] + p[1] * u * u + p[2] * u ** 4) * v


@njit(cache=True)
def poly_jac(x, u, v, p, J):
    J[0, 0] = (2.0 * p[1] * u + 4.0 * p[2] * u ** 3) * v
    J[0, 1] = p[0] + p[1] * u * u + p[2] * u ** 4


class PolyDamper(Stateless):
    p_layout = ("c0", "c2", "c4")
    force = staticmethod(poly_force)
    jac = staticmethod(poly_jac)


def poly_oscillator(c0, c2, c4, F, Om):
    """ẍ + (c0 + c2 x² + c4 x⁴)·ẋ + x = F cos Ωt."""
    a = Assembly()
    a.add_dof("x", mass=1.0)
    a.add_spring("x", "ground", k=1.0)
    a.add_element("damper", PolyDamper(c0=c0, c2=c2, c4=c4), "x")
    a.add_force("x", Harmonic(0.0, F, Om, 0.0))
    return a


def poly_rhs(c0, c2, c4, F, Om):
    return lambda t, y: [y[1], F * math.cos(Om * t) - (c0 + c2 * y[0] ** 2 + c4 * y[0] ** 4)
                         * y[1] - y[0]]


@pytest.fixture(scope="module")
def pitchfork():
    o = periodic_orbit(oscillator(1.0, C2, 1.0, F2, 1.35, K32), y0=[1.3, 0.5],
                       section="fixed", options=dict(rtol=1e-10))
    y0 = np.r_[o.y0[0], o.y0[0], o.y0[1], o.y0[1]]
    kw = dict(ds=0.05, ds_max=0.1, tol=1e-9, options=dict(rtol=1e-10))
    br = continue_orbits(pair, 1.35, 1.42, y0=y0, **kw)
    sides = switch_branch(br, pair, p_range=(1.35, 1.42), max_points=10, **kw)
    return br, sides


def test_branch_point_located_exactly_against_independent_variational_equations(pitchfork):
    br, _ = pitchfork
    bps = br.bifurcations("branch-point")
    assert len(bps) == 1 and bps[0]["exact"]
    bp = bps[0]
    y = bp["y"]
    assert abs(y[0] - y[1]) < 1e-7 and abs(y[2] - y[3]) < 1e-7   # on the in-phase orbit
    x, v, Om = ref_branch_point(y[0], y[2], bp["p"])
    assert abs(bp["p"] - Om) < 1e-6
    assert abs(bp["multiplier"] - 1.0) < 1e-6
    # stable before, unstable after: the symmetric orbit loses stability there
    i = bp["index"]
    assert br.stability[i - 1] == "stable" and br.stability[i] == "unstable"


def test_branch_switching_gives_the_two_mirror_asymmetric_branches(pitchfork):
    br, sides = pitchfork
    bp = br.bifurcations("branch-point")[0]
    assert len(sides) == 2
    a, b = sides
    # mirror images under x1 <-> x2, born at the branch point
    assert np.max(np.abs(a.y[0][[1, 0, 3, 2]] - b.y[0])) < 1e-5
    assert abs(a.p[0] - bp["p"]) < 1e-3 and abs(b.p[0] - bp["p"]) < 1e-3
    for j in (a.p.size // 2, a.p.size - 1):
        y, p = a.y[j], float(a.p[j])
        T = 2 * math.pi / p
        ref = solve_ivp(pair_rhs(p), (0.0, T), y, **DOP).y[:, -1]
        assert np.max(np.abs(ref - y)) < 1e-6           # T-periodic (DOP853)
        assert abs(y[0] - y[1]) > 0.05                  # and asymmetric
        fy, M = pair_monodromy(y, p)
        mu = np.linalg.eigvals(M)
        assert np.sort(np.abs(mu)) == pytest.approx(np.sort(np.abs(a.multipliers[j])),
                                                    abs=1e-6)
        want = "stable" if np.abs(mu).max() < 1 - 1e-6 else "unstable"
        assert a.stability[j] == want


def amplitudes(y, p, t0):
    """0.5·peak-to-peak of x1 and x2 over one period from y at t0 (DOP853)."""
    T = 2 * math.pi / p
    r = solve_ivp(pair_rhs(p), (t0, t0 + T), y, t_eval=np.linspace(t0, t0 + T, 801), **DOP)
    return 0.5 * np.ptp(r.y[:2], axis=1)


@pytest.mark.slow
def test_asymmetric_orbits_attract_the_perturbed_symmetric_orbit():
    """The pitchfork is supercritical: past it, a long DOP853 run from the (now
    unstable) in-phase orbit, nudged antisymmetrically, ends on the stable asymmetric
    orbit that switch_branch found, up to the mirror x1 <-> x2; that branch turns back
    at a fold where it loses stability."""
    o = periodic_orbit(oscillator(1.0, C2, 1.0, F2, 1.35, K32), y0=[1.3, 0.5],
                       section="fixed", options=dict(rtol=1e-10))
    kw = dict(ds=0.05, ds_max=0.1, tol=1e-9, options=dict(rtol=1e-10))
    br = continue_orbits(pair, 1.35, 1.45, y0=np.r_[o.y0[0], o.y0[0], o.y0[1], o.y0[1]], **kw)
    a = switch_branch(br, pair, p_range=(1.35, 1.45), **kw)[0]
    fold = [s for s in a.special if s["kind"] == "fold"]
    assert fold and a.stability[0] == "stable"
    j = int(np.argmin(np.abs(a.p - 0.5 * (a.p[0] + fold[0]["p"]))))   # halfway, stable
    assert a.stability[j] == "stable" and a.p[j] < fold[0]["p"]
    p = float(a.p[j])
    k = int(np.argmin(np.abs(br.p - p) + 10 * (br.stability != "unstable")))
    T = 2 * math.pi / p
    start = br.y[k] + np.r_[1e-3, -1e-3, 0, 0]
    t_end = 300 * T + br.phase[k] * T
    end = solve_ivp(pair_rhs(p), (br.phase[k] * T, t_end), start, **DOP).y[:, -1]
    got = amplitudes(end, p, t_end)
    want = amplitudes(a.y[j], p, a.phase[j] * T)
    assert np.sort(got) == pytest.approx(np.sort(want), abs=1e-5)
    assert abs(got[0] - got[1]) > 0.02


def test_switch_branch_bad_input(pitchfork):
    br, _ = pitchfork
    with pytest.raises(ValueError, match="p_range"):
        switch_branch(br, pair, p_range=(1.42, 1.35))
    with pytest.raises(ValueError, match="index"):
        switch_branch(br, pair, index=0, p_range=(1.35, 1.45))


# -- Neimark–Sacker: the forced van der Pol oscillator leaving its locking region --------
EPS, F_VDP = 0.2, 0.3


def vdp(Om):
    """ẍ − ε(1 − x²)ẋ + x = F cos Ωt."""
    return poly_oscillator(-EPS, EPS, 0.0, F_VDP, Om)


def ref_neimark_sacker(y, Om, t0_phase):
    """Independent: for ẋ = (v, F cos Ωt − x + ε(1 − x²)v) the multipliers of a
    periodic orbit satisfy μ1·μ2 = det M = exp(ε∫(1 − x²)dt) (Liouville), so a complex
    pair is on the unit circle where the mean of x² over the orbit is 1. fsolve on
    (x0, v0, Ω): the orbit periodic and mean x² = 1 (DOP853 with ∫x² dt appended)."""
    def g(z):
        x, v, W = z
        T = 2 * math.pi / W
        t0 = t0_phase * T
        f = poly_rhs(-EPS, EPS, 0.0, F_VDP, W)
        s = solve_ivp(lambda t, q: [*f(t, q[:2]), q[0] ** 2], (t0, t0 + T), [x, v, 0.0],
                      **DOP).y[:, -1]
        return [s[0] - x, s[1] - v, s[2] / T - 1.0]
    z, info, ier, msg = fsolve(g, [y[0], y[1], Om], xtol=1e-12, full_output=True)
    assert ier == 1, msg
    return z


@pytest.fixture(scope="module")
def vdp_branch():
    o = periodic_orbit(vdp(1.0), y0=[2.0, 0.0], transient_periods=20, section="fixed",
                       options=dict(rtol=1e-10))
    return continue_orbits(vdp, 1.0, 1.15, y0=o.y0, ds=0.05, ds_max=0.1, tol=1e-9,
                           options=dict(rtol=1e-10))


def test_neimark_sacker_located_exactly_against_liouville_and_dop853(vdp_branch):
    ns = vdp_branch.bifurcations("neimark-sacker")
    assert len(ns) == 1 and ns[0]["exact"]
    s = ns[0]
    assert abs(abs(s["multiplier"]) - 1.0) < 1e-8
    x, v, Om = ref_neimark_sacker(s["y"], s["p"], s["phase"])
    assert abs(s["p"] - Om) < 1e-7
    # the angle of the pair from the independent DOP853 monodromy at that orbit
    T = 2 * math.pi / Om
    t0 = s["phase"] * T
    f = poly_rhs(-EPS, EPS, 0.0, F_VDP, Om)

    def fv(t, z):
        J = np.array([[0.0, 1.0], [-1.0 - 2 * EPS * z[0] * z[1], EPS * (1 - z[0] ** 2)]])
        return np.r_[f(t, z[:2]), (J @ z[2:].reshape(2, 2)).ravel()]
    M = solve_ivp(fv, (t0, t0 + T), [x, v, 1, 0, 0, 1], **DOP).y[2:, -1].reshape(2, 2)
    mu = np.linalg.eigvals(M)
    assert np.abs(mu) == pytest.approx([1.0, 1.0], abs=1e-7)
    assert s["angle"] == pytest.approx(abs(np.angle(mu[0])), abs=1e-6)
    i = s["index"]
    assert vdp_branch.stability[i - 1] == "stable" and vdp_branch.stability[i] == "unstable"


def poincare(Om, y0, n_skip, n_keep):
    """Stroboscopic points x(kT), k = n_skip .. n_skip + n_keep − 1 (DOP853)."""
    T = 2 * math.pi / Om
    te = T * np.arange(n_skip, n_skip + n_keep)
    return solve_ivp(poly_rhs(-EPS, EPS, 0.0, F_VDP, Om), (0.0, te[-1]), y0, t_eval=te,
                     **DOP).y


@pytest.mark.slow
def test_neimark_sacker_separates_locked_from_quasi_periodic_motion(vdp_branch):
    """Long DOP853 runs on both sides of the reported Ω_NS: locked (the stroboscopic
    points converge to the orbit's state) just before it, quasi-periodic (they fill a
    closed curve whose rotation per period is the reported angle) just after."""
    s = vdp_branch.bifurcations("neimark-sacker")[0]
    Om = s["p"]
    P = poincare(Om - 0.03, [2.0, 0.0], 800, 20)
    assert np.ptp(P, axis=1).max() < 1e-5
    P = poincare(Om + 0.02, [2.0, 0.0], 400, 200)
    assert np.ptp(P, axis=1).min() > 0.05          # a torus, not a point
    c = P.mean(axis=1, keepdims=True)
    ang = np.unwrap(np.arctan2(P[1] - c[1], P[0] - c[0]))
    rot = abs(ang[-1] - ang[0]) / (P.shape[1] - 1)   # rotation per forcing period
    # born with the pair's angle; 0.02 rad/s further it has grown by ~20 %
    assert rot == pytest.approx(s["angle"], rel=0.3)


# -- an isola of the frequency response created by nonlinear damping -------------------
# ẍ + (c0 + c2 x² + c4 x⁴)ẋ + x = F cos Ωt. One-harmonic balance (x = A cos(Ωt − θ)):
# F² = A²[(1 − Ω²)² + Ω²·c(A)²], c(A) = c0 + c2 A²/4 + c4 A⁴/8, so near Ω = 1 orbits
# exist where A·c(A) <= F: A <= 0.67 (the main resonance peak) and 1.88 <= A <= 3.26,
# a closed curve around Ω = 1 that no continuation of the main branch reaches.
C0, C2I, C4I, FI = 0.2, -0.2, 0.026, 0.12


def isola_system(Om):
    return poly_oscillator(C0, C2I, C4I, FI, Om)


def hb_isola_amplitudes():
    """The roots of A·c(A) = F (one-harmonic balance at Ω = 1), from the cubic in A²
    multiplied out: c4/8·A⁵ + c2/4·A³ + c0·A − F = 0."""
    r = np.roots([C4I / 8, 0, C2I / 4, 0, C0, -FI])
    return np.sort(r[np.abs(r.imag) < 1e-12].real)


def half_ptp(r):
    return 0.5 * np.ptp(r.y[:, 0])


@pytest.fixture(scope="module")
def main_branch():
    o = periodic_orbit(isola_system(0.9), y0=[0.3, 0.0], transient_periods=30,
                       section="fixed", options=dict(rtol=1e-10))
    kw = dict(ds=0.05, ds_max=0.1, tol=1e-9, options=dict(rtol=1e-10), measure=half_ptp)
    return continue_orbits(isola_system, 0.9, 1.1, y0=o.y0, **kw), kw


def test_coexisting_orbits_found_at_the_peak_against_harmonic_balance_and_dop853(main_branch):
    from hystmech.systems.periodic.coexisting import search_coexisting

    br, kw = main_branch
    assert not br.folds() and br.measure.max() < 0.75       # the main branch: no jump
    found = search_coexisting(br, isola_system, (0.9, 1.1), continue_found=False, **kw)
    amps = sorted(c.orbit[2] for c in found)
    roots = hb_isola_amplitudes()
    assert len(amps) == 2                                   # the isola's two sheets
    assert amps[0] == pytest.approx(roots[1], rel=0.05)
    assert amps[1] == pytest.approx(roots[2], rel=0.05)
    # coexistence by DOP853: the large orbit is an attractor next to the main one
    big = max(found, key=lambda c: c.orbit[2])
    p, y, a = big.orbit
    T = 2 * math.pi / p
    f = poly_rhs(C0, C2I, C4I, FI, p)
    t0 = br.phase[int(np.argmax(br.measure))] * T
    r = solve_ivp(f, (t0, t0 + 80 * T), y + np.r_[0.05, 0.0],
                  t_eval=t0 + T * np.linspace(79, 80, 201), **DOP)
    assert 0.5 * np.ptp(r.y[0]) == pytest.approx(a, rel=1e-4)
    r0 = solve_ivp(f, (0.0, 80 * T), [0.0, 0.0], t_eval=T * np.linspace(79, 80, 201), **DOP)
    assert 0.5 * np.ptp(r0.y[0]) < 0.75


@pytest.fixture(scope="module")
def isola(main_branch):
    from hystmech.systems.periodic.coexisting import search_coexisting

    br, kw = main_branch
    found = search_coexisting(br, isola_system, (0.9, 1.1), max_points=300,
                              **dict(kw, ds=0.1, ds_max=0.5))
    return br, found


@pytest.mark.slow
def test_isola_found_and_closed_against_harmonic_balance_and_dop853(isola):
    br, found = isola
    assert not br.folds() and br.measure.max() < 0.75       # the main branch: no jump
    assert len(found) == 1
    iso = found[0]
    assert iso.kind == "isola" and len(iso.parts) == 1
    b = iso.parts[0]
    assert b.message.startswith("the branch closed")
    folds = sorted(s["p"] for s in b.folds())
    assert len(folds) == 2 and folds[0] < 1.0 < folds[1]    # closed curve around Ω = 1
    # the complex pair that leaves the circle (Neimark–Sacker: ∫c(x)dt = 0 on the upper
    # sheet) meets the real axis outside it before the fold: not a branch point
    assert not b.bifurcations("branch-point")
    assert folds[1] - folds[0] < 0.1
    # the isola's amplitudes at Ω ≈ 1 against one-harmonic balance (a few % off: higher
    # harmonics), and its stable/unstable halves
    roots = hb_isola_amplitudes()
    near1 = np.abs(b.p - 1.0) < 5e-3
    hi_a, lo_a = b.measure[near1].max(), b.measure[near1].min()
    assert hi_a == pytest.approx(roots[2], rel=0.05)
    assert lo_a == pytest.approx(roots[1], rel=0.05)
    assert "stable" in set(b.stability) and "unstable" in set(b.stability)
    # coexistence checked by DOP853: from the isola's stable orbit at the site and from
    # the main branch's orbit, long runs stay on two different periodic motions
    p, y, a = iso.orbit
    j = int(np.argmax(np.where(b.stability == "stable", b.measure, -1)))
    pj = float(b.p[j])
    T = 2 * math.pi / pj
    f = poly_rhs(C0, C2I, C4I, FI, pj)
    t0 = b.phase[j] * T
    r = solve_ivp(f, (t0, t0 + 60 * T), b.y[j] + np.r_[0.02, 0.0],
                  t_eval=t0 + T * np.linspace(59, 60, 201), **DOP)
    assert 0.5 * np.ptp(r.y[0]) == pytest.approx(b.measure[j], rel=1e-3)
    r0 = solve_ivp(f, (0.0, 60 * T), [0.0, 0.0], t_eval=T * np.linspace(59, 60, 201), **DOP)
    assert 0.5 * np.ptp(r0.y[0]) < 0.75


def test_bad_input_of_the_locators_and_the_search(main_branch):
    from hystmech.systems.periodic.bifurcation import crossing_test, locate_crossing
    from hystmech.systems.periodic.coexisting import search_coexisting

    br, kw = main_branch
    with pytest.raises(ValueError, match="kind"):
        crossing_test("hopf", [0.5])
    with pytest.raises(ValueError, match="kind"):
        locate_crossing("fold", isola_system, br.y[0], 0.9, 0.95)
    with pytest.raises(ValueError, match="p_a, p_b"):
        locate_crossing("neimark-sacker", isola_system, br.y[0], 0.9, 0.9)
    with pytest.raises(ValueError, match="does not change sign"):   # stable all along
        locate_crossing("neimark-sacker", isola_system, br.y[0], 0.9, 0.91,
                        options=dict(rtol=1e-10))
    with pytest.raises(ValueError, match="p_range"):
        search_coexisting(br, isola_system, (1.1, 0.9))
    with pytest.raises(ValueError, match="amplitudes"):
        search_coexisting(br, isola_system, (0.9, 1.1), amplitudes=(1.0, -2.0))
    with pytest.raises(ValueError, match="sites"):
        search_coexisting(br, isola_system, (0.9, 1.1), sites=[10 ** 6])
    with pytest.raises(ValueError, match="p_bounds"):
        continue_orbits(isola_system, 0.95, 1.0, y0=br.y[5], p_bounds=(0.96, 1.1))
