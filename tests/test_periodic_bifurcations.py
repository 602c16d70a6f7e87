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

from hystmech.components.base import ForceElement
from hystmech.components.linear import no_advance, no_rate
from hystmech.systems import Assembly, Harmonic
from hystmech.systems.periodic.continuation import continue_orbits, switch_branch
from hystmech.systems.periodic.shooting import periodic_orbit

from test_periodic import Cubic, oscillator

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
