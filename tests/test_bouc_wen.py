"""Bouc-Wen over its whole admissible class (hardening γ < −β as in the Noël &
Schoukens benchmark, softening, γ > β) against an independent reference: scipy
solve_ivp on a plain-Python right-hand side in the displacement u, restarted at
every input kink and at every zero of z (where the right-hand side has a kink).
Plus the operator properties: rate independence, bounded state in the bounded
class, non-negative dissipation per cycle, and the C twin = Python."""
import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from hystmech import drive
from hystmech.components import BoucWen, LuGre, ModifiedDahl

# Noël & Schoukens: ż = α ẏ − β(γ|ẏ||z|^{ν−1}z + δ ẏ|z|^ν), α = 5e4, β = 1e3,
# γ = 0.8, δ = −1.1, ν = 1 -> hystmech's A = α, beta = β·γ, gamma = β·δ
NS = dict(A=5e4, beta=800.0, gamma=-1100.0, n=1.0)


def reference(A, beta, gamma, n, z0, knots):
    """z at the knots of a piecewise-linear u, by solve_ivp (LSODA, rtol 1e-12) of
    dz/du = A − β sgn(du) sgn(z)|z|^n − γ|z|^n on each monotone piece, with an event
    at z = 0 (the right-hand side is not smooth there)."""
    out = [z0]
    z = z0
    for a, b in zip(knots[:-1], knots[1:]):
        sg = 1.0 if b > a else -1.0

        def f(u, y):
            return [A - beta * sg * math.copysign(abs(y[0]) ** n, y[0])
                    - gamma * abs(y[0]) ** n]

        def hit(u, y):
            return y[0]

        hit.terminal = True
        lo, hi = a, b
        while True:
            s = solve_ivp(f, (lo, hi), [z], method="LSODA", rtol=1e-12,
                          atol=1e-12 * max(abs(z), 1.0), events=hit if z != 0.0 else None)
            z = s.y[0, -1]
            if s.status == 1 and abs(s.t[-1] - hi) > 0:  # crossed zero: restart there
                lo, z = s.t[-1], 0.0
                # step off zero on the side the flow goes (g(0) = A·sgn(du) direction)
                continue
            break
        out.append(z)
    return np.array(out)


def zigzag(amp, n_turns, seed=0, n_per=5):
    rng = np.random.default_rng(seed)
    turns = amp * rng.uniform(-1.0, 1.0, n_turns)
    turns[0] = 0.0
    u = np.concatenate([np.linspace(a, b, n_per, endpoint=False)
                        for a, b in zip(turns[:-1], turns[1:])] + [turns[-1:]])
    return turns, u


@pytest.mark.parametrize("kw, z0, amp", [
    (NS, 0.0, 2e-3),                                          # hardening, benchmark
    (dict(A=4.0, beta=2.0, gamma=-3.0, n=0.5), 0.3, 0.4),     # hardening, n < 1
    (dict(A=4.0, beta=2.0, gamma=0.5, n=1.0), -1.0, 0.8),     # softening class I
    (dict(A=4.0, beta=1.0, gamma=1.5, n=1.0), 0.5, 0.8),      # class II, γ > β
    (dict(A=4.0, beta=1.0, gamma=1.5, n=1.5), 0.5, 0.8),      # class II, n > 1
    (dict(A=4.0, beta=2.0, gamma=-1.0, n=2.0), 0.2, 0.8),     # softening, n > 1
    (dict(A=3.0, beta=1.0, gamma=-1.0, n=1.0), 0.0, 0.5),     # β + γ = 0: linear growth
])
def test_matches_independent_reference(kw, z0, amp):
    turns, u = zigzag(amp, 12)
    el = BoucWen(**kw, z0=z0)
    r = drive(el, np.linspace(0.0, 1.0, u.size), u, rtol=1e-11)
    ref = reference(kw["A"], kw["beta"], kw["gamma"], kw["n"], z0, turns)
    # the drive samples include the turning points
    idx = np.arange(turns.size) * 5
    got = r.state[idx, 0]
    scale = max(np.max(np.abs(ref)), el.x_scale[0])
    tol = 1e-9 if kw["n"] == 1.0 else 1e-8
    assert np.max(np.abs(got - ref)) <= tol * scale


def test_noel_schoukens_loading_branch_closed_form():
    # on loading from z = 0: dz/du = A + 300 z, z = (A/300)(e^{300 u} − 1)
    u = np.linspace(0.0, 3e-3, 31)
    r = drive(BoucWen(**NS), np.arange(u.size, dtype=float), u)
    exact = NS["A"] / 300.0 * np.expm1(300.0 * u)
    assert np.max(np.abs(r.force - exact)) < 1e-12 * np.max(exact)


def test_x_scale_is_the_natural_size_in_every_class():
    assert BoucWen(A=4.0, beta=2.0, gamma=2.0, n=1.0).x_scale[0] == pytest.approx(1.0)
    assert BoucWen(**NS).x_scale[0] == pytest.approx(5e4 / 1900.0)
    assert BoucWen(A=3.0, beta=1.0, gamma=-1.0, n=1.0).x_scale[0] == pytest.approx(1.5)
    assert BoucWen(A=3.0, beta=0.0, gamma=0.0, n=1.0).x_scale[0] == pytest.approx(3.0)
    assert math.isinf(BoucWen(**NS).z_max())
    assert not BoucWen(**NS).bounded


@pytest.mark.parametrize("kw", [dict(A=4.0, beta=2.0, gamma=0.5, n=1.0),
                                dict(A=4.0, beta=1.0, gamma=1.5, n=1.5),
                                dict(A=4.0, beta=2.0, gamma=-1.0, n=0.5)])
def test_bounded_class_stays_bounded_and_dissipates(kw):
    el = BoucWen(**kw, z0=0.3)
    zmax = max(el.z_max(), 0.3)
    t = np.linspace(0.0, 8.0, 8001)
    u = 3.0 * np.sin(2 * np.pi * t) * (1 + 0.3 * np.sin(0.7 * t))
    r = drive(el, t, u)
    assert np.max(np.abs(r.state[:, 0])) <= zmax * (1 + 1e-9)
    # one steady cycle of a periodic input: the hysteretic work ∮ z du > 0
    t = np.linspace(0.0, 4.0, 4001)
    u = 2.0 * np.sin(2 * np.pi * t)
    z = drive(el, t, u).state[:, 0]
    last = slice(3000, 4001)
    w = np.sum(0.5 * (z[last][1:] + z[last][:-1]) * np.diff(u[last]))
    assert w > 0.0


def test_hardening_dissipates_per_cycle():
    t = np.linspace(0.0, 4.0, 4001)
    u = 1e-3 * np.sin(2 * np.pi * t)
    z = drive(BoucWen(**NS), t, u).state[:, 0]
    last = slice(3000, 4001)
    w = np.sum(0.5 * (z[last][1:] + z[last][:-1]) * np.diff(u[last]))
    assert w > 0.0


@pytest.mark.parametrize("kw", [NS, dict(A=4.0, beta=2.0, gamma=-3.0, n=0.5),
                                dict(A=4.0, beta=1.0, gamma=1.5, n=1.5)])
def test_rate_independent(kw):
    turns, u = zigzag(1e-3 if kw is NS else 0.5, 10, seed=3)
    el = BoucWen(**kw)
    t = np.linspace(0.0, 1.0, u.size)
    a = drive(el, t, u).force
    b = drive(el, 17.0 * t ** 1.0 + 3.0, u).force
    assert np.max(np.abs(a - b)) <= 1e-9 * np.max(np.abs(a))


@pytest.mark.parametrize("kw", [NS, dict(A=4.0, beta=2.0, gamma=-3.0, n=0.5),
                                dict(A=4.0, beta=1.0, gamma=1.5, n=1.5)])
def test_c_twin_matches(kw):
    from hystmech.fmu.ckernels import CKernels
    from hystmech.fmu.export import FMUExportError

    el = BoucWen(**kw, z0=0.1)
    try:
        ck = CKernels(el)
    except FMUExportError as exc:  # no C compiler
        pytest.skip(str(exc))
    p, x0 = ck.setup()
    np.testing.assert_array_equal(p, el.p)
    rng = np.random.default_rng(2)
    for _ in range(30):
        x = np.array([rng.uniform(-2, 2) * el.x_scale[0]])
        v = rng.choice([-1.0, 1.0]) * rng.uniform(0.1, 2.0) * (1e-3 if kw is NS else 1.0)
        dt = 10 ** rng.uniform(-3, 0)
        x1, x2 = x.copy(), x.copy()
        el.advance(x1, 0.0, v * dt, dt, v, el.p, 1e-10)
        ck.advance(x2, 0.0, v * dt, dt, v, el.p, 1e-10)
        assert abs(x1[0] - x2[0]) <= 1e-12 * max(abs(x1[0]), el.x_scale[0])


def test_ill_posed_sets_are_refused_in_c_too():
    from hystmech.fmu.ckernels import CKernels
    from hystmech.fmu.export import FMUExportError

    try:
        ck = CKernels(BoucWen(A=1.0, beta=1.0, gamma=0.0, n=2.0))
    except FMUExportError as exc:
        pytest.skip(str(exc))
    for q in ([1.0, 1.0, -2.0, 2.0, 0.0, 0.0], [1.0, -1.0, 2.0, 1.5, 0.0, 0.0],
              [1.0, 1.0, 3.0, 2.0, 0.0, 0.8]):
        with pytest.raises(ValueError, match="must be in"):
            ck.setup(np.array(q))
    ck.setup(np.array([5e4, 800.0, -1100.0, 1.0, 0.0, 0.0]))  # the benchmark is accepted


def test_numpy_scalars_accepted():
    el = BoucWen(A=np.float32(4.0), beta=np.int64(2), gamma=np.array(0.5), n=np.float64(1))
    assert el.p.tolist() == [4.0, 2.0, 0.5, 1.0, 0.0]
    lg = LuGre(sigma0=1e5, sigma1=300.0, Fc=np.float32(2.3), Fs=2.3, vs=0.01)
    assert lg.params["Fs"] >= lg.params["Fc"]
    lg = LuGre(sigma0=1e5, sigma1=300.0, Fc=2.3, Fs=np.float32(2.3), vs=0.01)
    assert lg.params["Fs"] == lg.params["Fc"] == 2.3
    md = ModifiedDahl(Lambda=np.float32(5.0), mu=np.array(1.0), a=np.int32(1), b=1.0,
                      d=0.5, e=np.float16(-1.0))
    assert md.p.dtype == np.float64


@pytest.mark.parametrize("du", [1e-4, 6.2e-3, 0.05])
def test_n1_segment_map_matches_the_closed_form_with_one_crossing(du):
    # n = 1: on each side of z = 0 the map is z* + (z0 − z*)e^(−κΔu) (κ = β ± γ = 10, 6
    # here); from z0 = −0.4 on loading the behind branch reaches 0 at u0, then the
    # ahead branch from 0. Truth: that closed form, written here with numpy.
    A, beta, gamma = 5.0, 8.0, 2.0
    el = BoucWen(A=A, beta=beta, gamma=gamma, n=1.0, z0=-0.4)
    u = np.arange(0.0, 0.6, du)
    r = drive(el, np.arange(u.size, dtype=float), u)
    kb, ka = beta - gamma, beta + gamma  # behind (z < 0, loading), ahead (z > 0)
    u0 = -math.log(A / (A + kb * 0.4)) / kb  # dz/du = A − kb z from z = −0.4 reaches 0
    exact = np.where(u < u0, A / kb + (-0.4 - A / kb) * np.exp(-kb * u),
                     A / ka * -np.expm1(-ka * (u - u0)))
    assert np.max(np.abs(r.force - exact)) < 1e-13 * A / ka


def test_n1_with_beta_equal_gamma_is_linear_on_the_return_branch():
    # β = γ: κ = 0 behind, dz/du = −A on unloading while z > 0 (a straight line), then
    # the ahead branch κ = 2β from 0 on the negative side
    A, b = 3.0, 1.5
    el = BoucWen(A=A, beta=b, gamma=b, n=1.0, z0=0.6)
    u = np.linspace(0.0, -1.0, 201)
    r = drive(el, np.arange(u.size, dtype=float), u)
    u0 = -0.6 / A
    exact = np.where(u > u0, 0.6 + A * u, -A / (2 * b) * -np.expm1(-2 * b * (u0 - u)))
    assert np.max(np.abs(r.force - exact)) < 1e-13 * A


def test_drive_velocity_is_the_segment_slope():
    t = np.array([0.0, 0.5, 1.5, 2.0])
    u = np.array([0.0, 1.0, 0.0, 3.0])
    r = drive(BoucWen(A=1.0, beta=0.5, gamma=0.5, n=1.0), t, u)
    assert np.array_equal(r.v, [2.0, 2.0, -1.0, 6.0])
    v = np.array([1.0, 2.0, 3.0, 4.0])
    assert np.array_equal(drive(BoucWen(A=1.0, beta=0.5, gamma=0.5, n=1.0), t, u, v).v, v)
