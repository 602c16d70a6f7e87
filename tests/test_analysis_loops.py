"""Closed forms of hystmech.analysis against the papers' formulas and against drive().

Truths used: Ikhouane, Mañosa & Pujol, Theorem 2 (eqs. (4)-(8)) and Theorem A
(eqs. (10)-(14)); the viscous + Dahl paper, eqs. (16)-(19); slow LuGre/Dahl
simulations by drive() (exact per linear segment) after the transient.
"""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.integrate import quad

from hystmech import drive
from hystmech.analysis import (cycle_energies, dahl_h, dahl_loop_area, dahl_steady_loop,
                               lugre_slow_limit, lugre_steady_loop, lugre_steady_output,
                               loop_energy, normalized_input, rho_from_loop_area, theorem_a,
                               variation)
from hystmech.components import Dahl, LuGre
from hystmech.signals import piecewise_linear

EX2 = dict(sigma0=1.0, sigma1=1.0, Fc=1.0, Fs=2.0, vs=1.0, beta=1.0)

# (sigma0, knots) of the papers' examples: Example 2, Example 3, Fig. 15, Fig. 16, Fig. 17
PAPER_CASES = [
    (1.0, [0.0, 1.0, 0.0]),
    (1.0, [0.0, 1.0, 0.2, 1.5, 0.0]),
    (6.0, [0.0, 1.0, 0.5, 1.5, 0.0]),
    (1.0, [0.0, 1.0, 0.5, 1.5, 0.0]),
    (1.0, [0.0, 1.0, 0.2, 1.5, 0.0]),
]


def _simulated_steady(el, knots, gamma, tol_transient=1e-6, spu=40):
    """drive() el under the slow periodic input; returns (rho_u, F) of the last period."""
    loop = lugre_steady_loop(el, knots)
    a = loop.sigma0 / loop.g0
    periods = max(2, int(math.ceil(math.log(1.0 / tol_transient) / (a * loop.period))) + 1)
    t, u = piecewise_linear(knots, periods=periods, gamma=gamma, samples_per_unit=spu)
    r = drive(el, t, u)
    rho = variation(t, u)
    last = rho >= rho[-1] - loop.period - 1e-9
    return loop, rho[last] - (rho[-1] - loop.period), r.force[last], u[last]


# -- variation and normalized input ------------------------------------------------------
@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-5, 5), min_size=2, max_size=30), st.integers(1, 7))
def test_psi_of_rho_is_u_and_slopes_are_unit(vals, sub):
    # densely sampled piecewise-linear path with repeated and non-reversal samples
    knots = np.round(np.asarray(vals), 3)
    s = np.linspace(0, 1, sub + 1)[:-1]
    u = np.concatenate([k0 + s * (k1 - k0) for k0, k1 in zip(knots[:-1], knots[1:])]
                       + [knots[-1:]])
    t = np.cumsum(np.full(u.size, 0.3))
    rho = variation(t, u)
    assert rho[0] == 0.0 and np.all(np.diff(rho) >= 0)
    assert rho[-1] == pytest.approx(np.abs(np.diff(knots)).sum(), rel=1e-12, abs=1e-12)
    rk, pk = normalized_input(t, u)
    assert np.allclose(np.interp(rho, rk, pk), u, atol=1e-9)            # eq. (9)
    d = np.diff(rk)
    slopes = np.diff(pk)[d > 0] / d[d > 0]
    assert np.allclose(np.abs(slopes), 1.0)                              # |ψ'| = 1
    # consecutive legs alternate in direction: the interior knots are the extrema
    sg = np.sign(np.diff(pk)[d > 0])
    assert np.all(sg[1:] != sg[:-1])


# -- Theorem A against the general construction ---------------------------------------
bimodal = st.tuples(st.floats(0.05, 1.0), st.floats(0.05, 1.0), st.floats(0.05, 1.0),
                    st.floats(0.0, 1.0)).map(
    lambda d: (0.0, d[0], d[0] + d[1], d[0] + d[1] + d[2] * (1 - d[3]) + 0.02))


@pytest.mark.parametrize("sigma0, knots", PAPER_CASES[1:])
def test_theorem_a_equals_multimodal_construction_paper_cases(sigma0, knots):
    _check_theorem_a(sigma0, 2.0, knots)


@settings(max_examples=30, deadline=None)
@given(st.floats(0.2, 20.0), st.floats(0.3, 3.0), st.floats(0.0, 0.9), st.floats(0.05, 1.0),
       st.floats(0.1, 1.0), st.floats(0.0, 1.0))
def test_theorem_a_equals_multimodal_construction_random(sigma0, g0, umin2, d1, dmax, c):
    umin1, umax1 = 0.0, umin2 + d1
    umax2 = umax1 + c * dmax
    if umin1 == umin2 and umax1 == umax2:
        umax2 += 0.1
    _check_theorem_a(sigma0, g0, [umin1, umax1, umin2, umax2, umin1])


def _check_theorem_a(sigma0, g0, knots):
    umin1, umax1, umin2, umax2 = knots[:4]
    loop = lugre_steady_loop({"sigma0": sigma0, "g0": g0}, knots, n_per_unit=300)
    p, y, (r1, r2, r3, r4, r5) = theorem_a(sigma0, g0, umin1, umin2, umax1, umax2, loop.varrho)
    assert loop.period == pytest.approx(r4, abs=1e-12)
    assert np.max(np.abs(p - loop.u)) < 1e-12
    assert np.max(np.abs(y - loop.F)) < 1e-9 * g0
    assert len(loop.minor_loops) == 1                                   # Theorem A (b)
    m = loop.minor_loops[0]
    assert m.varrho_open == pytest.approx(r1, abs=1e-12)
    assert m.varrho_close == pytest.approx(r5, abs=1e-12)


def test_steady_start_value_matches_eq8_integral():
    # eq. (8) with the time-parametrised Example 2 input u(t) = t, 2 - t, by quadrature
    sigma0, g0 = 1.0, 2.0
    a = sigma0 / g0
    rho = lambda t: t                                   # noqa: E731  (u' = ±1)
    udot = lambda t: 1.0 if t < 1 else -1.0             # noqa: E731
    I = quad(lambda t: math.exp(a * rho(t)) * udot(t), 0, 2, points=[1.0])[0]
    y0 = sigma0 * math.exp(-a * 2) * I / (1 - math.exp(-a * 2))
    loop = lugre_steady_loop({"sigma0": sigma0, "g0": g0}, [0.0, 1.0, 0.0])
    assert loop.knots_F[0] == pytest.approx(y0, abs=1e-12)


def test_dahl_slow_limit_is_dahl_closed_form():
    # two independent closed forms of the same loop: Theorem 2 with σ0 = ρFc, g(0) = Fc,
    # and the viscous + Dahl paper's eqs. (16)-(18)
    rho, Fc, xmin, xmax = 3.0, 2.5, -0.4, 0.7
    loop = lugre_steady_loop(Dahl(rho=rho, Fc=Fc), [xmin, xmax, xmin], n_per_unit=500)
    up = loop.varrho <= loop.knots_varrho[1]
    wu, _ = dahl_steady_loop(rho, xmin, xmax, loop.u[up])
    _, wd = dahl_steady_loop(rho, xmin, xmax, loop.u[~up])
    assert np.max(np.abs(loop.F[up] / Fc - wu)) < 1e-12
    assert np.max(np.abs(loop.F[~up] / Fc - wd)) < 1e-12
    assert loop.energy() == pytest.approx(Fc * dahl_loop_area(rho, xmin, xmax), rel=1e-12)


# -- simulated slow LuGre against the closed form ---------------------------------------------
@pytest.mark.parametrize("sigma0, knots", PAPER_CASES)
def test_slow_lugre_matches_closed_form_paper_examples(sigma0, knots):
    el = LuGre(**{**EX2, "sigma0": sigma0})
    loop, r, F, u = _simulated_steady(el, knots, gamma=1e4)
    g0 = el.g0()
    assert np.max(np.abs(F - loop.F_at(r))) < 1e-3 * g0
    assert np.max(np.abs(F - lugre_steady_output(el, u))) < 1e-3 * g0


reversal_lists = st.lists(st.integers(5, 100), min_size=2, max_size=10)


@settings(max_examples=12, deadline=None)
@given(st.integers(-100, 100), reversal_lists, st.floats(0.5, 8.0), st.floats(1.0, 3.0),
       st.floats(0.0, 1.0))
def test_slow_lugre_matches_closed_form_random_multimodal(i0, steps, sigma0, Fs, sigma1):
    # alternate up/down legs of random lengths (multiples of 1 cm), back to u0 at the end
    k = [i0]
    for i, d in enumerate(steps):
        k.append(k[-1] + (d if i % 2 == 0 else -d))
    if k[-1] != i0:
        k.append(i0)
    knots = 0.01 * np.asarray(k, dtype=float)
    el = LuGre(sigma0=sigma0, sigma1=sigma1, Fc=1.0, Fs=Fs, vs=0.5)
    loop, r, F, _ = _simulated_steady(el, knots, gamma=1e4)
    assert np.max(np.abs(F - loop.F_at(r))) < 1e-3 * el.g0()
    # minor loops: closed in u, inside the major loop's range, two reversals each
    n_rev = np.sum(np.diff(np.sign(np.diff(loop.knots_u))) != 0) + \
        (np.sign(loop.knots_u[1] - loop.knots_u[0]) != np.sign(loop.knots_u[-1] - loop.knots_u[-2]))
    assert len(loop.minor_loops) == n_rev // 2 - 1
    lo, hi = loop.knots_u.min(), loop.knots_u.max()
    for m in loop.minor_loops:
        assert loop.psi_at(m.varrho_close) == pytest.approx(m.u_open, abs=1e-9)
        assert loop.psi_at(m.varrho_turn) == pytest.approx(m.u_turn, abs=1e-9)
        assert m.varrho_open < m.varrho_turn < m.varrho_close <= m.varrho_open + loop.period
        assert lo <= min(m.u_open, m.u_turn) and max(m.u_open, m.u_turn) <= hi
        # enclosed area: exact leg integrals vs trapezoid on the sampled arc (a minor
        # loop does not close in force, so its area may even be negative)
        _, u_arc, F_arc = loop.arc(loop.minor_loops.index(m), n_per_unit=4000)
        assert loop_energy(u_arc, F_arc) == pytest.approx(
            loop.energy(m.varrho_open, m.varrho_close), abs=1e-5 * el.g0())
    # over a whole period the state returns: dissipation is positive
    assert loop.energy() > 0


def test_slow_limit_y_star_matches_drive_and_converges_to_steady():
    # Example 3: y_γ → y*_u (eq. (4)), and y*_{u,k} → y° geometrically with the
    # contraction factor exp(−σ0 ϱ4 / g(0)) per period (Theorem 2 (b))
    el = LuGre(**EX2)
    knots = [0.0, 1.0, 0.2, 1.5, 0.0]
    t, u = piecewise_linear(knots, periods=4, gamma=1e4, samples_per_unit=50)
    ystar = lugre_slow_limit(el, u)
    assert np.max(np.abs(drive(el, t, u).force - ystar)) < 1e-3 * el.g0()
    loop = lugre_steady_loop(el, knots)
    rho = variation(t, u)
    n = int(np.argmin(np.abs(rho - loop.period)))
    errs = [np.max(np.abs(ystar[k * n:(k + 1) * n + 1] - loop.F_at(rho[:n + 1])))
            for k in range(4)]
    q = math.exp(-1.0 / 2.0 * 4.6)
    assert np.allclose(np.array(errs[1:]) / np.array(errs[:-1]), q, rtol=1e-6)


# -- the Dahl loop of the viscous + Dahl paper ----------------------------------------
def test_dahl_drive_matches_eqs_16_to_18():
    rho, xmin, xmax = 768.73, -0.1197, 0.1209
    el = Dahl(rho=rho, Fc=1.0, w0=0.3)
    t, x = piecewise_linear([xmin, xmax, xmin], periods=3, samples_per_unit=20000)
    r = drive(el, t, x)
    last = t >= t[-1] - 2 * (xmax - xmin) - 1e-12
    xs, ws = x[last], r.state[last, 0]
    k = int(np.argmax(xs))
    wu, _ = dahl_steady_loop(rho, xmin, xmax, xs[:k + 1])
    _, wd = dahl_steady_loop(rho, xmin, xmax, xs[k:])
    assert np.max(np.abs(ws[:k + 1] - wu)) < 1e-6
    assert np.max(np.abs(ws[k:] - wd)) < 1e-6


@pytest.mark.parametrize("rho", [0.05, 1.0, 7.0, 768.73])
def test_area_formula_eq19_against_numerical_loop_energy(rho):
    xmin, xmax = -0.1197, 0.1209
    n = 400001
    xu = np.linspace(xmin, xmax, n)
    wu, wd = dahl_steady_loop(rho, xmin, xmax, xu)
    # the loop run clockwise: up along w↑, back down along w↓
    E = loop_energy(np.concatenate([xu, xu[::-1]]), np.concatenate([wu, wd[::-1]]))
    assert E == pytest.approx(dahl_loop_area(rho, xmin, xmax), rel=1e-8)
    assert loop_energy(np.concatenate([xu, xu[::-1]]), np.concatenate([wd, wu[::-1]])) < 0


@pytest.mark.parametrize("rho", [1e-4, 0.3, 5.0, 768.73, 5e3])
def test_rho_from_loop_area_round_trip(rho):
    xmin, xmax = -0.1197, 0.1209
    A = dahl_loop_area(rho, xmin, xmax)
    assert rho_from_loop_area(A, xmin, xmax) == pytest.approx(rho, rel=1e-7)


def test_h_is_continuous_increasing_and_bounded():
    nu = np.concatenate([np.linspace(0, 0.02, 2001), np.geomspace(0.0201, 1e4, 2000)])
    h = dahl_h(nu)
    assert h[0] == 0.0 and np.all(np.diff(h) > 0) and h[-1] < 1
    # across the switch to the series at 1e-2 (relative agreement)
    a, b = dahl_h(0.01 * (1 - 1e-12)), dahl_h(0.01 * (1 + 1e-12))
    assert abs(a - b) / b < 1e-8


@pytest.mark.parametrize("kw, match", [
    (dict(area=0.0, x_min=0.0, x_max=1.0), r"area must be in \(0, 2"),
    (dict(area=2.0, x_min=0.0, x_max=1.0), r"area must be in \(0, 2"),
    (dict(area=-1.0, x_min=0.0, x_max=1.0), "area must be in"),
    (dict(area=0.5, x_min=1.0, x_max=1.0), "x_max must be in"),
    (dict(area=float("nan"), x_min=0.0, x_max=1.0), "area must be a finite"),
])
def test_rho_from_loop_area_rejects_unreachable(kw, match):
    with pytest.raises(ValueError, match=match):
        rho_from_loop_area(**kw)


def test_bad_inputs_name_the_parameter():
    with pytest.raises(ValueError, match="knots_u must describe one period"):
        lugre_steady_loop({"sigma0": 1, "g0": 1}, [0.0, 1.0])
    with pytest.raises(ValueError, match="knots_u must not be constant"):
        lugre_steady_loop({"sigma0": 1, "g0": 1}, [1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="sigma0 must be in"):
        lugre_steady_loop({"sigma0": -1, "g0": 1}, [0.0, 1.0, 0.0])
    with pytest.raises(ValueError, match="rho must be in"):
        dahl_steady_loop(0.0, -1, 1, [0.0])
    with pytest.raises(ValueError, match=r"x must be in \[x_min, x_max\]"):
        dahl_steady_loop(1.0, -1, 1, [2.0])
    with pytest.raises(ValueError, match="Definition 1"):
        theorem_a(1, 1, 0.0, 1.2, 1.0, 1.5, [0.0])
    with pytest.raises(ValueError, match="t must be strictly increasing"):
        variation([0, 1, 1], [0, 1, 2])


# -- energy ----------------------------------------------------------------------------
def test_cycle_energies_of_simulated_lugre_converge_to_closed_form():
    el = LuGre(**{**EX2, "sigma0": 6.0})
    knots = [0.0, 1.0, 0.5, 1.5, 0.0]
    t, u = piecewise_linear(knots, periods=4, gamma=1e4, samples_per_unit=400)
    r = drive(el, t, u)
    loop = lugre_steady_loop(el, knots)
    ts, te, E = cycle_energies(t, u, r.force, period=4.0 * 1e4)
    assert ts.size == 4 and np.all(E > 0)
    # the first cycle starts from x0 = 0, the next ones are steady
    assert abs(E[-1] - loop.energy()) < 2e-3 * loop.energy()
    assert loop_energy(loop.u, loop.F) == pytest.approx(loop.energy(), rel=1e-4)
    # by maxima: one piece per local maximum of u (two per period here)
    _, _, Em = cycle_energies(t, u, r.force)
    assert Em.size == 7
