"""Periodic orbits by shooting and their continuation (systems/periodic.py,
systems/continuation.py) against closed forms and independent time integration."""
import math

import numpy as np
import pytest
from numba import njit
from scipy.integrate import solve_ivp

from hystmech.components.base import ForceElement
from hystmech.components.linear import no_advance, no_rate
from hystmech.systems import Assembly, Harmonic
from hystmech.systems.periodic.continuation import continue_orbits
from hystmech.systems.periodic.shooting import (Shooter, crossing_counts, forcing_omega, instability,
                                       peak_to_peak, periodic_orbit)


# -- a cubic spring F = k3·u³ (Duffing) ------------------------------------------------------
@njit(cache=True)
def cubic_force(x, u, v, p):
    return p[0] * u * u * u


@njit(cache=True)
def cubic_jac(x, u, v, p, J):
    J[0, 0] = 3.0 * p[0] * u * u
    J[0, 1] = 0.0


class Stateless(ForceElement):
    """A smooth law without states F(u, v): subclasses set the force and jac kernels
    and p_layout; the constructor takes those parameters by keyword, in that order."""
    kind = "smooth"
    state_names = ()
    advance = staticmethod(no_advance)
    rate = staticmethod(no_rate)

    def __init__(self, **params):
        self._setup(params, [params[k] for k in self.p_layout], np.zeros(0))


class Cubic(Stateless):
    p_layout = ("k3",)
    force = staticmethod(cubic_force)
    jac = staticmethod(cubic_jac)


def oscillator(m, c, k, F, Om, k3=None):
    a = Assembly()
    a.add_dof("x", mass=m)
    a.add_spring("x", "ground", k=k)
    a.add_damper("x", "ground", c=c)
    if k3 is not None:
        a.add_element("cubic", Cubic(k3=k3), "x")
    a.add_force("x", Harmonic(0.0, F, Om, 0.0))
    return a


def test_linear_oscillator_floquet_multipliers_are_exp_lambda_T():
    m, c, k, F, Om = 2.0, 0.8, 50.0, 3.0, 5.0
    o = periodic_orbit(oscillator(m, c, k, F, Om))
    T = 2 * math.pi / Om
    lam = np.linalg.eigvals(np.array([[0.0, 1.0], [-k / m, -c / m]]))
    mu_exact = np.exp(lam * T)
    mu = o.multipliers
    # same set: match each exact multiplier to the nearest computed one
    for z in mu_exact:
        assert np.min(np.abs(mu - z)) < 1e-6
    assert o.stable and o.bifurcation is None
    # the orbit itself: the closed-form steady amplitude F/|k − mΩ² + icΩ|
    r = o.simulate(400)
    X = F / abs(k - m * Om ** 2 + 1j * c * Om)
    assert peak_to_peak(r.t, r.x("x")) / 2 == pytest.approx(X, rel=1e-7)


# 14 s: slow; the default suite checks multipliers against closed forms (linear
# oscillator, variational monodromy) and located crossings (test_periodic_bifurcations)
@pytest.mark.slow
def test_unstable_orbit_multipliers_and_classification():
    # a destabilising spring (k = −4 N/m, element LinearSpring): the forced periodic
    # solution exists but λ = (−c ± √(c² + 16))/2 > 0 gives a real multiplier > 1
    from hystmech.components.linear import LinearSpring

    c, Om = 0.5, 3.0
    a = Assembly()
    a.add_dof("x", mass=1.0)
    a.add_damper("x", "ground", c=c)
    a.add_element("neg", LinearSpring(k=-4.0), "x")
    a.add_force("x", Harmonic(0.0, 1.0, Om, 0.0))
    o = periodic_orbit(a, options=dict(rtol=1e-11))
    lam = np.linalg.eigvals(np.array([[0.0, 1.0], [4.0, -c]]))
    mu_exact = np.sort(np.exp(lam * 2 * math.pi / Om))
    assert np.sort(o.multipliers.real) == pytest.approx(mu_exact, rel=1e-5)
    assert not o.stable and o.bifurcation == "fold"
    assert instability([1.5, 0.2]) == "fold"
    assert instability([-1.2, 0.1]) == "period-doubling"
    assert instability([0.9 + 0.8j, 0.9 - 0.8j]) == "neimark-sacker"
    assert instability([0.99, -0.5]) is None
    assert crossing_counts([1.5, -1.2, 0.9 + 0.8j, 0.9 - 0.8j, 0.1]) == (1, 1, 2)


M_, C_, K_, K3_, F_ = 1.0, 0.05, 1.0, 0.1, 0.1


def hb_folds():
    """First-order harmonic balance of the Duffing oscillator:
    A²[(k + ¾k3A² − mΩ²)² + (cΩ)²] = F²; the folds are the extremes of Ω(A)."""
    A = np.linspace(0.05, 2.5, 400001)
    kap = K_ + 0.75 * K3_ * A ** 2
    b = C_ ** 2 - 2 * kap * M_
    D = b * b - 4 * M_ ** 2 * (kap ** 2 - F_ ** 2 / A ** 2)
    with np.errstate(invalid="ignore"):
        Wp = np.sqrt((-b + np.sqrt(np.where(D >= 0, D, np.nan))) / (2 * M_ ** 2))
        Wm = np.sqrt((-b - np.sqrt(np.where(D >= 0, D, np.nan))) / (2 * M_ ** 2))
    i = np.nanargmax(Wm)                       # jump-down fold (resonance peak)
    j = np.nanargmin(np.where(A > 0.5, Wp, np.nan))   # jump-up fold
    return (Wm[i], A[i]), (Wp[j], A[j])


def duffing_reference_amplitude(Om, y0, periods):
    """Plain-Python Duffing integrated by scipy DOP853 (independent of hystmech)."""
    def f(t, y):
        return [y[1], (F_ * math.cos(Om * t) - C_ * y[1] - K_ * y[0] - K3_ * y[0] ** 3) / M_]
    T = 2 * math.pi / Om
    sol = solve_ivp(f, (0, periods * T), y0, method="DOP853", rtol=1e-10, atol=1e-12,
                    t_eval=np.linspace((periods - 1) * T, periods * T, 2001))
    return 0.5 * np.ptp(sol.y[0])


@pytest.fixture(scope="module")
def duffing_branch():
    return continue_orbits(lambda Om: oscillator(M_, C_, K_, F_, Om, K3_), 0.6, 2.0,
                           ds=0.02, ds_max=0.05, options=dict(rtol=1e-9),
                           measure=lambda r: 0.5 * np.ptp(r.y[:, 0]))


def test_duffing_folds_and_backbone_against_harmonic_balance(duffing_branch):
    br = duffing_branch
    folds = br.folds()
    assert len(folds) == 2
    (w_dn, a_dn), (w_up, a_up) = hb_folds()
    hi, lo = sorted(folds, key=lambda s: -s["p"])
    # first-order HB is accurate to O((¾k3A²/k)²) ≈ 0.5 % here
    assert hi["p"] == pytest.approx(w_dn, rel=5e-3)
    assert hi["measure"] == pytest.approx(a_dn, rel=1e-2)
    assert lo["p"] == pytest.approx(w_up, rel=5e-3)
    assert lo["measure"] == pytest.approx(a_up, rel=1e-2)
    # backbone Ω² = k/m + ¾k3A²/m at the resonance peak
    assert hi["p"] == pytest.approx(math.sqrt(K_ / M_ + 0.75 * K3_ * hi["measure"] ** 2 / M_),
                                    rel=5e-3)
    # between the folds the middle branch is unstable through a multiplier > 1
    p = br.p
    between = (p > lo["p"] + 1e-3) & (p < hi["p"] - 1e-3)
    idx = np.flatnonzero(between)
    mid = [i for i in idx if hi["index"] < i < lo["index"]]
    assert mid and not br.stable[mid].any()
    assert all(instability(br.multipliers[i]) == "fold" for i in mid)
    outside = (p < lo["p"] - 1e-2) | (p > hi["p"] + 1e-2)
    assert br.stable[outside].all()


@pytest.mark.parametrize("Om", [0.9, 1.3])
def test_duffing_branch_against_long_time_integration(duffing_branch, Om):
    br = duffing_branch
    i = int(np.argmin(np.abs(br.p - Om)))
    # re-shoot exactly at Om from the nearest branch point
    o = periodic_orbit(oscillator(M_, C_, K_, F_, Om, K3_), y0=br.y[i],
                       options=dict(rtol=1e-10))
    amp = peak_to_peak(*(lambda r: (r.t, r.x("x")))(o.simulate(1000))) / 2
    ref = duffing_reference_amplitude(Om, [0.0, 0.0], 160)   # 160 periods ≫ 2m/c
    assert amp == pytest.approx(ref, rel=1e-5)


def test_bad_input():
    a = oscillator(1.0, 0.1, 1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="period"):
        Shooter(a, period=-1.0)
    with pytest.raises(ValueError, match="n_periods"):
        Shooter(a, n_periods=0)
    with pytest.raises(ValueError, match="y0"):
        periodic_orbit(a, y0=[0.0])
    b = Assembly()
    b.add_dof("x", mass=1.0)
    b.add_spring("x", "ground", k=1.0)
    with pytest.raises(ValueError, match="period"):
        forcing_omega(b)
    with pytest.raises(ValueError, match="ds"):
        continue_orbits(lambda p: a, 1.0, 2.0, ds=1.0, ds_max=0.1)


def test_subharmonic_option_multipliers_of_the_3T_map():
    m, c, k, F, Om = 1.0, 0.3, 9.0, 1.0, 1.0
    o = periodic_orbit(oscillator(m, c, k, F, Om), n_periods=3, options=dict(rtol=1e-11))
    lam = np.linalg.eigvals(np.array([[0.0, 1.0], [-k / m, -c / m]]))
    for z in np.exp(lam * 3 * 2 * math.pi / Om):
        assert np.min(np.abs(o.multipliers - z)) < 1e-6
    # the unique orbit of a linear oscillator is T-periodic, so also 3T-periodic
    X = F / abs(k - m * Om ** 2 + 1j * c * Om)
    r = o.simulate(1200)
    assert peak_to_peak(r.t, r.x("x")) / 2 == pytest.approx(X, rel=1e-7)


def test_subharmonic_3T_orbit_of_a_duffing_oscillator_against_long_integration():
    # ẍ + 0.1ẋ + x + x³ = 6·cos(4t): a stable 1/3-subharmonic coexists with the T-periodic
    # orbit; shooting with n_periods = 3 from a state in its basin finds it
    c, F, Om = 0.1, 6.0, 4.0
    T = 2 * math.pi / Om
    o = periodic_orbit(oscillator(1.0, c, 1.0, F, Om, k3=1.0), n_periods=3, y0=[1.52, 0.23],
                       transient_periods=20, section="fixed", options=dict(rtol=1e-10))

    def f(t, y):
        return [y[1], F * math.cos(Om * t) - c * y[1] - y[0] - y[0] ** 3]
    kw = dict(method="DOP853", rtol=1e-12, atol=1e-12)
    s = solve_ivp(f, (0.0, 3 * T), o.y0, t_eval=[T, 2 * T, 3 * T], **kw).y.T
    assert np.max(np.abs(s[2] - o.y0)) < 1e-7                   # returns after 3T ...
    assert min(np.max(np.abs(s[0] - o.y0)), np.max(np.abs(s[1] - o.y0))) > 0.5   # not T
    # the attractor of 240 periods of plain integration from the same guess
    L = solve_ivp(f, (0.0, 240 * T), [1.52, 0.23], **kw).y[:, -1]
    assert min(np.max(np.abs(L - q)) for q in (o.y0, s[0], s[1])) < 1e-6
    # Liouville: det M = exp(∫ tr J dt) = exp(−c·3T); stable
    assert abs(np.prod(o.multipliers)) == pytest.approx(math.exp(-c * 3 * T), rel=1e-5)
    assert o.stable and o.n_periods == 3


def twin_well(g, om=1.2):
    """ẍ + 0.3ẋ − x + x³ = g·cos(1.2t) (Holmes' twin-well Duffing oscillator)."""
    from hystmech.components.linear import LinearSpring

    a = Assembly()
    a.add_dof("x", mass=1.0)
    a.add_damper("x", "ground", c=0.3)
    a.add_element("neg", LinearSpring(k=-1.0), "x")
    a.add_element("cub", Cubic(k3=1.0), "x")
    a.add_force("x", Harmonic(0.0, g, om, 0.0))
    return a


# 19 s (a branch through the doubling and the switched branch): slow, run by .ci/run;
# tests/test_periodic_bifurcations.py locates crossings in the default suite
@pytest.mark.slow
def test_period_doubling_detection_and_branch_switching():
    from hystmech.systems.periodic.continuation import switch_period_doubling

    kw = dict(ds=0.05, ds_max=0.1, tol=1e-8, options=dict(rtol=1e-10))
    br = continue_orbits(twin_well, 0.22, 0.30, y0=[1.0, 0.0], transient_periods=30, **kw)
    pds = br.bifurcations("period-doubling")
    assert len(pds) == 1
    i = pds[0]["index"]
    # a real multiplier crosses −1 between the two points around the detection
    before = br.multipliers[i - 1]
    after = br.multipliers[i]
    assert np.all(np.abs(before) < 1) and np.min(after.real) < -1.0
    assert br.p[i - 1] <= pds[0]["p"] <= br.p[i]
    g_pd = pds[0]["p"]
    b2 = switch_period_doubling(br, twin_well, p_end=0.30, **kw)
    assert b2.n_periods == 2
    assert abs(b2.p[0] - g_pd) < 0.01          # the 2T branch is born at the doubling
    assert b2.stable[0]
    # independent check: the 2T orbits return after 2T, not after T (scipy, plain RHS)
    T = 2 * math.pi / 1.2
    for j in (0, b2.p.size // 2, b2.p.size - 1):
        g = float(b2.p[j])

        def f(t, y):
            return [y[1], g * math.cos(1.2 * t) - 0.3 * y[1] + y[0] - y[0] ** 3]
        y0 = b2.y[j]
        y1 = solve_ivp(f, (0, T), y0, method="DOP853", rtol=1e-12, atol=1e-12).y[:, -1]
        y2 = solve_ivp(f, (0, 2 * T), y0, method="DOP853", rtol=1e-12, atol=1e-12).y[:, -1]
        assert np.max(np.abs(y2 - y0)) < 1e-6
        assert np.max(np.abs(y1 - y0)) > 1e-3 * (j > 0) + 1e-4
    # the cascade goes on: the 2T branch doubles again further along
    pd4 = b2.bifurcations("period-doubling")
    assert pd4 and pd4[0]["p"] > g_pd + 0.005


def test_variational_monodromy_against_closed_form_and_finite_differences():
    m, c, k, F, Om = 2.0, 0.8, 50.0, 3.0, 5.0
    o = periodic_orbit(oscillator(m, c, k, F, Om), monodromy="variational",
                       options=dict(rtol=1e-10))
    lam = np.linalg.eigvals(np.array([[0.0, 1.0], [-k / m, -c / m]]))
    for z in np.exp(lam * 2 * math.pi / Om):
        assert np.min(np.abs(o.multipliers - z)) < 1e-8
    # Duffing orbit: the variational equations (cubic element's jac) and central
    # finite differences of the compiled simulation give the same multipliers
    asm = oscillator(M_, C_, K_, F_, 1.1, K3_)
    ov = periodic_orbit(asm, y0=[1.5, 0.0], monodromy="variational", options=dict(rtol=1e-10))
    of = periodic_orbit(asm, y0=ov.y0, options=dict(rtol=1e-10), monodromy="fd")
    assert ov.monodromy_source == "variational" and of.monodromy_source == "finite-differences"
    assert np.sort_complex(ov.multipliers) == pytest.approx(np.sort_complex(of.multipliers),
                                                            abs=1e-6)
    with pytest.raises(ValueError, match="monodromy"):
        periodic_orbit(asm, monodromy="exact")


def test_variational_monodromy_needs_smooth_elements():
    from hystmech.components import Masing

    a = Assembly()
    a.add_dof("x", mass=1.0)
    a.add_element("m", Masing(k=10.0, k0=1.0, alpha=1.0, F0=0.0), "x")
    a.add_force("x", Harmonic(0.0, 1.0, 1.0, 0.0))
    with pytest.raises(ValueError, match="smooth"):
        periodic_orbit(a, monodromy="variational")


def test_operator_assembly_orbit_equals_long_simulation():
    # mass-spring-damper with a Prandtl-Ishlinskii operator (play operators on a relay
    # grid): Newton runs on the DOFs, the operator memory is whatever the periodic
    # motion wipes it to
    from hystmech.components.preisach import PrandtlIshlinskii
    from hystmech.systems import simulate

    Om = 8.0
    a = Assembly()
    a.add_dof("x", mass=1.0)
    a.add_spring("x", "ground", k=50.0)
    a.add_damper("x", "ground", c=1.0)
    a.add_element("pi", PrandtlIshlinskii(r=[0.01, 0.02, 0.04], weights=[20.0, 10.0, 5.0],
                                          h=0.002, u_bound=0.2), "x")
    a.add_force("x", Harmonic(0.0, 2.0, Om, 0.0))
    o = periodic_orbit(a, options=dict(h=1e-4), tol=1e-4)
    assert o.stable and o.multipliers.size == 2 and np.abs(o.multipliers).max() < 0.9
    r = o.simulate(2000)
    T = 2 * math.pi / Om
    rl = simulate(a, (0.0, 60 * T), method="projection", h=1e-4, energy=False,
                  t_eval=np.linspace(59 * T, 60 * T, 2001))
    assert peak_to_peak(r.t, r.x("x")) == pytest.approx(peak_to_peak(rl.t, rl.x("x")),
                                                         rel=2e-3)
    F = r.force("pi")
    assert abs(F[-1] - F[0]) < 0.01 * np.ptp(F)     # memory wiped out to the same state
