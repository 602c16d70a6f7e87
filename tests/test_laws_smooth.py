"""Smooth hysteresis laws against closed forms, reference solutions and the properties
every hysteresis law must have (issue 2, §6)."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.integrate import solve_ivp

from hystmech import drive
from hystmech.components import (AsymmetricViscousDahl, BoucWen, Dahl, Duhem, LinearDamper,
                                 LinearSpring, LuGre, ModifiedDahl, NaiveAsymmetricViscousDahl,
                                 SpringDamper, SumElement, ViscousDahl)

# Bastien et al. (2007), eqs. (33)-(35)
PAPER_MD = dict(a=7.146e4, b=9.596e2, d=5.322e4, e=3.972e2, Lambda=117355.0, mu=0.37)
# viscous + Dahl paper, §5-§7
PAPER_MR = dict(kx1=1.6299e5, kw1=5.2620e4, kx2=1.3352e5, kw2=6.2986e4, rho=768.73)


def triangle(lo, hi, periods, n_per):
    """Periodic triangle wave from lo up to hi and back, n_per samples per period."""
    s = np.linspace(0.0, periods, periods * n_per + 1)
    ph = s % 1.0
    return s, lo + (hi - lo) * (1.0 - np.abs(2.0 * ph - 1.0))


def paper_md_input(n=6001, periods=2):
    # Bastien et al. (2007), eqs. (29), (32), started at t0 of eq. (34)
    Om, phi, x0, x1 = 9.4, 4.8, 5.4e-4, 5.2e-4
    t = 1.988e-1 + np.linspace(0.0, periods * 2 * np.pi / Om, n)
    return t, x0 + x1 * np.sin(Om * t + phi)


def cycle_energy(F, u):
    """∮F du over samples (trapezoid) [J]."""
    return float(np.sum(0.5 * (F[1:] + F[:-1]) * np.diff(u)))


# --- Dahl ----------------------------------------------------------------------------
def test_dahl_steady_loop_matches_closed_form_eqs_16_18():
    rho, Fc, Xmin, Xmax = 20.0, 3.0, -0.07, 0.13
    s, u = triangle(Xmin, Xmax, 12, 2000)
    r = drive(Dahl(rho=rho, Fc=Fc, w0=-0.4), s, u)
    # closed form of the viscous + Dahl paper, eqs. (16)-(18)
    a = 2.0 / (1.0 + math.exp(-rho * (Xmax - Xmin)))
    last = slice(11 * 2000, 12 * 2000 + 1)
    uu, w = u[last], r.force[last] / Fc
    up = np.r_[False, np.diff(uu) > 0]
    dn = np.r_[False, np.diff(uu) < 0]
    w_up = 1.0 - a * np.exp(-rho * (uu - Xmin))
    w_dn = -1.0 + a * np.exp(rho * (uu - Xmax))
    assert up.sum() > 900 and dn.sum() > 900
    assert np.max(np.abs(w[up] - w_up[up])) < 1e-6
    assert np.max(np.abs(w[dn] - w_dn[dn])) < 1e-6


@settings(max_examples=25, deadline=None)
@given(w0=st.floats(-1.0, 1.0), rho=st.floats(0.1, 1e3),
       steps=st.lists(st.floats(-2.0, 2.0), min_size=2, max_size=30))
def test_dahl_state_stays_in_unit_interval(w0, rho, steps):
    u = np.r_[0.0, np.cumsum(steps)]
    t = np.arange(u.size, dtype=float)
    for el in (Dahl(rho=rho, Fc=1.0, w0=w0), ViscousDahl(kx=1.0, kw=1.0, rho=rho, w0=w0)):
        r = drive(el, t, u)
        assert np.all(np.abs(r.state[:, 0]) <= 1.0)


# --- rate independence ----------------------------------------------------------------
def _rate_independent_laws():
    return [Dahl(rho=8.0, Fc=2.0, w0=0.2),
            Duhem(A=6.0, hu=lambda x: 1.0 + 0.5 * x + 0.2 * math.sin(3.0 * x),
                  hl=lambda x: -1.0 + 0.5 * x, F0=0.1),
            ModifiedDahl(**PAPER_MD, F0=1.009e3),
            ModifiedDahl(**{**PAPER_MD, "mu": 1.0}, F0=1.009e3),
            BoucWen(A=4.0, beta=2.0, gamma=0.5, n=0.6, k_el=1.0)]


@pytest.mark.parametrize("el", _rate_independent_laws(), ids=lambda e: e.name)
def test_rate_independence_time_stretched_10x(el):
    if isinstance(el, ModifiedDahl):
        t, u = paper_md_input(3001)
    else:
        t = np.linspace(0.0, 3.0, 1201)
        u = 0.8 * np.sin(2.0 * t) + 0.3 * np.sin(5.0 * t)
    a = drive(el, t, u, rtol=1e-10)
    b = drive(el, 10.0 * t, u, rtol=1e-10)  # same graph, ten times slower
    scale = np.max(np.abs(a.force))
    assert np.max(np.abs(a.force - b.force)) < 1e-9 * scale


# --- dissipation ----------------------------------------------------------------------
def _all_laws():
    return [Dahl(rho=8.0, Fc=2.0),
            LuGre(sigma0=1.0, sigma1=1.0, Fc=1.0, Fs=2.0, vs=1.0, beta=1.0),
            Duhem(A=6.0, hu=lambda x: 1.0 + 0.5 * x, hl=lambda x: -1.0 + 0.5 * x),
            ModifiedDahl(Lambda=50.0, mu=0.37, a=0.5, b=1.0, d=0.5, e=-1.0),
            ModifiedDahl(Lambda=5.0, mu=1.0, a=0.5, b=1.0, d=0.5, e=-1.0),
            ViscousDahl(kx=0.3, kw=1.0, rho=5.0),
            AsymmetricViscousDahl(kx1=0.3, kw1=1.0, kx2=0.2, kw2=1.5, rho=5.0),
            BoucWen(A=4.0, beta=2.0, gamma=-1.0, n=2.0, k_el=0.5),
            BoucWen(A=4.0, beta=2.0, gamma=1.0, n=0.5),
            SpringDamper(k=2.0, c=0.4)]


LAWS = _all_laws()


@settings(max_examples=15, deadline=None)
@given(amp=st.floats(0.01, 2.0), off=st.floats(-1.0, 1.0), law=st.integers(0, len(LAWS) - 1))
def test_dissipation_over_a_closed_cycle_is_nonnegative(amp, off, law):
    el = LAWS[law]
    s, u = triangle(off - amp, off + amp, 8, 800)
    r = drive(el, s, u)
    c0, c1 = 7 * 800, 8 * 800 + 1  # last cycle: steady, the loop is closed
    E = cycle_energy(r.force[c0:c1], u[c0:c1])
    assert E >= -1e-9 * amp * (1.0 + np.max(np.abs(r.force)))


# --- modified Dahl ----------------------------------------------------------------------
@pytest.mark.parametrize("mu", [0.37, 1.0])
def test_modified_dahl_force_stays_between_envelopes(mu):
    el = ModifiedDahl(**{**PAPER_MD, "mu": mu}, F0=1.009e3)
    t, u = paper_md_input(8001, periods=3)
    r = drive(el, t, u)
    F = r.force
    assert np.all(F <= el.h_u(u)) and np.all(F >= el.h_l(u))
    # sharper: the gap never closes below the settled distance D* (never crossed)
    Du, Dl = el.settled_gap()
    assert np.min(el.h_u(u) - F) >= Du * (1 - 1e-9)
    assert np.min(F - el.h_l(u)) >= Dl * (1 - 1e-9)


def test_modified_dahl_mu1_matches_exponential_on_a_ramp():
    # μ = 1: dD/du = a − Λ D with D = h_u − F, so D = D* + (D0 − D*) e^{−Λ(u − u0)}
    P = dict(PAPER_MD, mu=1.0)
    u0, F0 = 2e-4, 900.0
    u = np.linspace(u0, 9e-4, 301)
    t = np.linspace(0.0, 1.0, 301)
    r = drive(ModifiedDahl(**P, F0=F0), t, u)
    Ds = P["a"] / P["Lambda"]
    D0 = P["a"] * u0 + P["b"] - F0
    F_exact = P["a"] * u + P["b"] - (Ds + (D0 - Ds) * np.exp(-P["Lambda"] * (u - u0)))
    assert np.max(np.abs(r.force - F_exact)) < 1e-9 * F0
    # and on the way down, toward h_l: E = h_l − F, dE/ds = −d − Λ E with s = u0 − u
    r = drive(ModifiedDahl(**P, F0=F0), t, u[::-1])
    Es = -P["d"] / P["Lambda"]
    E0 = P["d"] * u[-1] + P["e"] - F0
    F_exact = P["d"] * u[::-1] + P["e"] - (Es + (E0 - Es) * np.exp(-P["Lambda"] * (u[-1] - u[::-1])))
    assert np.max(np.abs(r.force - F_exact)) < 1e-9 * F0


def _reference_md_ramp(P, F0, u0, u1):
    """High-accuracy solution of eq. (3) in u on an increasing ramp (scipy DOP853),
    restarted exactly where F crosses the envelope (the non-Lipschitz point)."""
    a, b, lam, mu = P["a"], P["b"], P["Lambda"], P["mu"]

    def f(u, F):
        D = a * u + b - F[0]
        return [lam * math.copysign(abs(D) ** mu, D)]

    def hit(u, F):
        return a * u + b - F[0]

    hit.terminal = True
    s1 = solve_ivp(f, [u0, u1], [F0], method="DOP853", rtol=1e-13, atol=1e-12, events=hit)
    if s1.status != 1:
        return s1.y[0, -1]
    uc = s1.t_events[0][0]
    # leave the crossing with the exact leading-order behaviour D ≈ a (u − uc)
    du = 1e-12
    s2 = solve_ivp(f, [uc + du, u1], [a * uc + b], method="DOP853", rtol=1e-13, atol=1e-12)
    return s2.y[0, -1]


@pytest.mark.parametrize("F0", [1000.0, 1100.0])  # below, then above the upper envelope
def test_modified_dahl_mu037_matches_reference_solution(F0):
    P = PAPER_MD
    u = np.linspace(2e-4, 8e-4, 61)
    t = np.linspace(0.0, 0.3, 61)
    r = drive(ModifiedDahl(**P, F0=F0), t, u)
    ref = _reference_md_ramp(P, F0, u[0], u[-1])
    assert abs(r.force[-1] - ref) < 1e-8 * F0


def test_adaptive_rk_error_falls_with_rtol():
    el = Duhem(A=40.0, hu=lambda x: 1.0 + 0.5 * x + 0.3 * math.sin(4.0 * x),
               hl=lambda x: -1.0 + 0.5 * x - 0.2 * math.cos(3.0 * x))
    t = np.linspace(0.0, 1.0, 21)
    u = 1.5 * np.sin(2 * np.pi * t)
    ref = drive(el, t, u, rtol=1e-13).force
    errs = [np.max(np.abs(drive(el, t, u, rtol=rt).force - ref)) for rt in (1e-3, 1e-5, 1e-7)]
    assert errs[0] > errs[1] > errs[2]
    for e, rt in zip(errs, (1e-3, 1e-5, 1e-7)):
        assert e < 20 * rt * 2.0


@pytest.mark.slow
def test_modified_dahl_mu1_equals_duhem_with_linear_envelopes():
    P = dict(Lambda=5.0, mu=1.0, a=0.5, b=1.0, d=0.3, e=-1.0)
    t = np.linspace(0.0, 4.0, 801)
    u = 0.9 * np.sin(3 * t) + 0.2 * np.sin(7 * t)
    md = drive(ModifiedDahl(**P, F0=0.2), t, u)
    du = drive(Duhem(A=5.0, hu=lambda x: 0.5 * x + 1.0, hl=lambda x: 0.3 * x - 1.0, F0=0.2),
               t, u, rtol=1e-12)
    assert np.max(np.abs(md.force - du.force)) < 1e-9


# --- asymmetric MR model ------------------------------------------------------------------
def test_asymmetric_dry_force_continuous_while_naive_jumps():
    # reversals of a triangle between Xmin and Xmax of the paper (§7), speed 0.1 m/s
    Xmin, Xmax = -0.1197, 0.1209
    n = 40000
    s, u = triangle(Xmin, Xmax, 2, n)
    t = s * 2 * (Xmax - Xmin) / 0.1
    asym = drive(AsymmetricViscousDahl(**PAPER_MR), t, u)
    naive = drive(NaiveAsymmetricViscousDahl(**PAPER_MR), t, u)
    v = asym.v
    # viscous part of eqs. (32)-(33) (asymmetric) and (21)-(22) (naive)
    Fv_a = np.where(v >= 0, PAPER_MR["kx1"] * v, PAPER_MR["kx2"] * v)
    Fv_n = np.where(v > 0, PAPER_MR["kx1"] * v, PAPER_MR["kx2"] * v)
    Fd_a, Fd_n = asym.force - Fv_a, naive.force - Fv_n
    rev = np.flatnonzero(np.sign(v[1:]) != np.sign(v[:-1]))  # between samples k and k+1
    assert rev.size >= 3
    w = asym.state[:, 0]
    kw_max = max(PAPER_MR["kw1"], PAPER_MR["kw2"])
    for k in rev:
        # w (and with it a continuous dry force) moves by at most 2ρ|Δu| per sample
        small = 2 * kw_max * PAPER_MR["rho"] * abs(u[k + 1] - u[k])
        assert abs(Fd_a[k + 1] - Fd_a[k]) <= small
        jump = abs(Fd_n[k + 1] - Fd_n[k])
        expected = abs(PAPER_MR["kw1"] - PAPER_MR["kw2"]) * abs(w[k])
        assert abs(jump - expected) <= small
        assert expected > 5 * small


# --- Bouc-Wen ---------------------------------------------------------------------------------
@settings(max_examples=15, deadline=None)
@given(rho=st.floats(0.5, 50.0), Fc=st.floats(0.1, 10.0), w0=st.floats(-1.0, 1.0),
       steps=st.lists(st.floats(-0.5, 0.5), min_size=2, max_size=25))
def test_bouc_wen_n1_equals_dahl(rho, Fc, w0, steps):
    u = np.r_[0.0, np.cumsum(steps)]
    t = np.arange(u.size, dtype=float)
    d = drive(Dahl(rho=rho, Fc=Fc, w0=w0), t, u)
    b = drive(BoucWen(A=rho * Fc, beta=rho, gamma=0.0, n=1.0, z0=Fc * w0), t, u)
    assert np.max(np.abs(d.force - b.force)) < 1e-8 * Fc


def test_bouc_wen_noninteger_n_matches_reference():
    A, beta, gamma, n = 10.0, 5.0, 2.0, 0.5
    el = BoucWen(A=A, beta=beta, gamma=gamma, n=n, z0=-1.0)
    u = np.linspace(0.0, 0.25, 11)
    r = drive(el, np.linspace(0, 1, 11), u)

    def f(x, z):
        return [A - beta * math.copysign(abs(z[0]) ** n, z[0]) - gamma * abs(z[0]) ** n]

    def hit(x, z):
        return z[0]

    hit.terminal = True
    s1 = solve_ivp(f, [0, 0.25], [-1.0], method="DOP853", rtol=1e-13, atol=1e-14, events=hit)
    x0 = s1.t_events[0][0]
    s2 = solve_ivp(f, [x0 + 1e-12, 0.25], [A * 1e-12], method="DOP853", rtol=1e-13, atol=1e-14)
    assert abs(r.force[-1] - s2.y[0, -1]) < 1e-7


# --- linear elements and sums ---------------------------------------------------------------
def test_linear_elements_closed_form():
    t = np.linspace(0.0, 2.0, 201)
    u = np.sin(3 * t)
    v = np.r_[np.diff(u)[0], np.diff(u)] / 0.01
    assert np.allclose(drive(LinearSpring(k=3.0, u0=0.1), t, u).force, 3.0 * (u - 0.1),
                       rtol=0, atol=1e-12)
    assert np.allclose(drive(LinearDamper(c=2.0), t, u).force, 2.0 * v, rtol=0, atol=1e-9)
    r = drive(SpringDamper(k=3.0, c=2.0, u0=0.1), t, u)
    assert r.state.shape == (201, 0)
    assert np.allclose(r.force, 3.0 * (u - 0.1) + 2.0 * v, rtol=0, atol=1e-9)


def test_sum_element_equals_sum_of_driven_forces():
    parts = [Dahl(rho=5.0, Fc=2.0, w0=0.1), LinearSpring(k=3.0, u0=0.1),
             BoucWen(A=4.0, beta=2.0, gamma=0.5, n=1.5),
             ModifiedDahl(Lambda=50.0, mu=0.37, a=0.5, b=1.0, d=0.5, e=-1.0)]
    total = parts[0] + parts[1] + SumElement(parts[2], parts[3])
    assert isinstance(total, SumElement) and len(total.parts) == 4
    assert total.n_states == 3 and total.kind == "smooth"
    t = np.linspace(0.0, 3.0, 601)
    u = np.sin(2.0 * t) + 0.3 * np.sin(7.0 * t)
    r = drive(total, t, u)
    expected = sum(drive(p, t, u).force for p in parts)
    assert np.max(np.abs(r.force - expected)) < 1e-12 * np.max(np.abs(expected))
    assert np.allclose(total.part_states(r.state, 2)[:, 0], drive(parts[2], t, u).state[:, 0],
                       rtol=0, atol=1e-12)
    # slope of the sum = sum of the slopes
    x = r.state[300]
    assert total.slope(x, u[300], 0.5, total.p) == pytest.approx(
        sum(p.slope(total.part_states(x, i), u[300], 0.5, p.p) for i, p in enumerate(parts)))


# --- Jacobians against finite differences ------------------------------------------------------
JAC_CASES = [
    (ModifiedDahl(**PAPER_MD), [1000.0], 6e-4, 0.004),
    (ModifiedDahl(**PAPER_MD), [900.0], 6e-4, -0.004),
    (BoucWen(A=4.0, beta=2.0, gamma=0.5, n=1.5, k_el=0.7), [0.4], 0.2, 0.3),
    (BoucWen(A=4.0, beta=2.0, gamma=0.5, n=0.5), [-0.4], 0.2, -0.3),
    (ViscousDahl(kx=0.3, kw=1.0, rho=5.0), [0.3], 0.1, 0.2),
    (AsymmetricViscousDahl(**PAPER_MR), [-0.3], 0.1, -0.2),
    (Duhem(A=6.0, hu=lambda x: 1.0 + 0.5 * x * x, hl=lambda x: -1.0 + 0.5 * x), [0.2], 0.3, 0.4),
    (SpringDamper(k=2.0, c=0.4), [], 0.1, 0.2),
    (Dahl(rho=3.0, Fc=2.0) + BoucWen(A=4.0, beta=2.0, gamma=0.5, n=1.5), [0.2, 0.3], 0.1, 0.5),
]


@pytest.mark.parametrize("el, x, u, v", JAC_CASES, ids=lambda c: getattr(c, "name", ""))
def test_jacobian_matches_finite_differences(el, x, u, v):
    x = np.array(x, dtype=float)
    n = el.n_states
    J = np.zeros((n + 1, n + 2))
    el.jac(x, u, v, el.p, J)

    def g(z):
        out = np.zeros(n)
        el.rate(z[:n], z[n], z[n + 1], el.p, out)
        return np.r_[out, el.force(z[:n], z[n], z[n + 1], el.p)]

    z = np.r_[x, u, v]
    num = np.zeros_like(J)
    for j in range(n + 2):
        hj = 1e-6 * max(abs(z[j]), 1e-3)
        zp, zm = z.copy(), z.copy()
        zp[j] += hj
        zm[j] -= hj
        num[:, j] = (g(zp) - g(zm)) / (2 * hj)
    assert np.allclose(J, num, rtol=1e-5, atol=1e-6 * (1 + np.max(np.abs(num))))


@pytest.mark.parametrize("el, x, u, v", [
    (Dahl(rho=3.0, Fc=2.0), [0.2], 0.1, 0.4),
    (ModifiedDahl(**PAPER_MD), [1000.0], 6e-4, -0.004),
    (BoucWen(A=4.0, beta=2.0, gamma=0.5, n=1.5, k_el=0.7), [-0.4], 0.2, 0.3),
], ids=lambda c: getattr(c, "name", ""))
def test_slope_is_rate_over_velocity(el, x, u, v):
    # on a branch of a rate-independent law, dF/du = (∂F/∂x·ẋ + ∂F/∂u·v)/v
    x = np.array(x, dtype=float)
    out = np.zeros(1)
    el.rate(x, u, v, el.p, out)
    J = np.zeros((2, 3))
    el.jac(x, u, v, el.p, J)
    assert el.slope(x, u, v, el.p) == pytest.approx((J[1, 0] * out[0] + J[1, 1] * v) / v,
                                                    rel=1e-12)
