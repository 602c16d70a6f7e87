"""Relay, Preisach and Prandtl-Ishlinskii operators (Manfredo et al. (2023), eqs. (4)-(12))
against brute-force relay summation and the properties of hysteresis operators."""
import math

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

from hystmech import drive
from hystmech.components import Masing, MaxwellSlip, PrandtlIshlinskii, Preisach, Relay

SETTINGS = settings(max_examples=40, deadline=None)


def brute_force(a1, a2, w, initial, u, k0=0.0, offset=0.0):
    """Eqs. (5)-(6) relay by relay (inputs joined by straight lines: only the samples
    can switch a relay), summed with the weights."""
    R = np.full(a1.size, float(initial))
    out = np.empty(len(u))
    for k, v in enumerate(u):
        R = np.where(v >= a2, 1.0, np.where(v <= a1, -1.0, R))
        out[k] = offset + k0 * v + w @ R
    return out


def run(P, u):
    u = np.asarray(u, dtype=float)
    return drive(P, np.arange(u.size, dtype=float), u)


# relays on a coarse grid (so that inputs hit thresholds exactly) or anywhere
grid_vals = st.integers(-8, 8).map(lambda k: k / 4.0)
any_vals = st.floats(-2.5, 2.5, allow_nan=False)


@st.composite
def relay_sets(draw, on_grid):
    n = draw(st.integers(1, 25))
    a = [sorted(draw(st.lists(grid_vals if on_grid else any_vals, min_size=2, max_size=2,
                              unique=True))) for _ in range(n)]
    w = draw(st.lists(st.floats(-3, 3, allow_nan=False), min_size=n, max_size=n))
    return (np.array([x[0] for x in a]), np.array([x[1] for x in a]), np.array(w))


@SETTINGS
@given(rel=relay_sets(on_grid=True), u=st.lists(grid_vals, min_size=2, max_size=60),
       init=st.sampled_from([-1, 1]))
def test_equals_brute_force_relay_sum_with_threshold_ties(rel, u, init):
    a1, a2, w = rel
    P = Preisach(a1=a1, a2=a2, weights=w, initial=init, k0=0.7, offset=-0.2)
    ref = brute_force(a1, a2, w, init, u, 0.7, -0.2)
    got = run(P, u).force
    assert np.max(np.abs(got - ref)) <= 1e-12 * (np.abs(w).sum() + 1)


@SETTINGS
@given(rel=relay_sets(on_grid=False), u=st.lists(any_vals, min_size=2, max_size=60),
       init=st.sampled_from([-1, 1]))
def test_equals_brute_force_relay_sum_random_thresholds(rel, u, init):
    a1, a2, w = rel
    P = Preisach.from_relays(a1, a2, w, initial=init)
    ref = brute_force(a1, a2, w, init, u)
    got = run(P, u).force
    assert np.max(np.abs(got - ref)) <= 1e-12 * np.abs(w).sum()
    # the stored memory gives every relay's state
    x = P.state_after(u)
    R = np.full(a1.size, float(init))
    for v in u:
        R = np.where(v >= a2, 1.0, np.where(v <= a1, -1.0, R))
    np.testing.assert_array_equal(P.relay_states(x), R)


def smooth_preisach(n=40, m=2.0, **kw):
    # continuous=True gives the cellwise-constant-density (continuous) mode
    omega = lambda r, s: np.exp(-r) * (1.0 + 0.5 * np.cos(s))   # noqa: E731
    return Preisach.from_kernel(omega, m, n, **kw)


@pytest.mark.parametrize("cont", [False, True])
@SETTINGS
@given(prefix=st.lists(any_vals, min_size=1, max_size=10),
       ab=st.lists(st.floats(-1.8, 1.8), min_size=4, max_size=4, unique=True))
def test_wiping_out(prefix, ab, cont):
    # ..., a, b, c, d with a < c < b < d: the excursion (b, c) is wiped out by d
    a, c, b, d = sorted(ab)
    P = smooth_preisach(continuous=cont)
    x1 = P.state_after(prefix + [a, b, c, d])
    x2 = P.state_after(prefix + [a, d])
    for uu in np.linspace(-2.2, 2.2, 23):
        assert P.force_of(x1, uu, 0.0) == pytest.approx(P.force_of(x2, uu, 0.0), abs=1e-12)
    np.testing.assert_array_equal(P.stack(x1), P.stack(x2))


@pytest.mark.parametrize("cont", [False, True])
@SETTINGS
@given(p1=st.lists(any_vals, max_size=8), p2=st.lists(any_vals, max_size=8),
       lims=st.lists(st.floats(-1.5, 1.5), min_size=2, max_size=2, unique=True),
       top=st.floats(1.6, 2.4))
def test_congruent_minor_loops_between_same_extrema(p1, p2, lims, top, cont):
    u1, u2 = sorted(lims)
    P = smooth_preisach(continuous=cont)
    cyc = np.r_[np.linspace(u1, u2, 15), np.linspace(u2, u1, 15)[1:]]
    loops = []
    for pre in (p1, p2):
        x = P.state_after(pre + [top, u1])
        F = run_from(P, x, np.r_[cyc, cyc[1:]])
        loops.append(F - F[0])
    np.testing.assert_allclose(loops[0], loops[1], rtol=0, atol=1e-12)
    # and the loop closes (return-point memory)
    n = cyc.size
    np.testing.assert_allclose(loops[0][n - 1:], loops[0][:n], rtol=0, atol=1e-12)


def run_from(P, x, u):
    return drive(P, np.arange(len(u), dtype=float), np.asarray(u, dtype=float), x0=x).force


@pytest.mark.parametrize("cont", [False, True])
@SETTINGS
@given(prefix=st.lists(any_vals, min_size=1, max_size=10),
       v=st.lists(st.floats(-1.9, 1.9), min_size=3, max_size=3, unique=True))
def test_return_point_memory(prefix, v, cont):
    # from a minimum m up to M, an inner excursion down to a (m < a < M) and back to M:
    # the operator returns to the state it had at M
    m, a, M = sorted(v)
    P = smooth_preisach(continuous=cont)
    xM = P.state_after(prefix + [m, M])
    xR = P.state_after(prefix + [m, M, a, M])
    np.testing.assert_array_equal(P.stack(xM), P.stack(xR))
    assert P.force_of(xR, M, 0.0) == pytest.approx(P.force_of(xM, M, 0.0), abs=1e-12)


@pytest.mark.parametrize("cont", [False, True])
@SETTINGS
@given(u=st.lists(any_vals, min_size=2, max_size=40), v=st.lists(any_vals, min_size=1,
                                                                 max_size=20))
def test_state_copy_is_a_copy_of_the_live_memory(u, v, cont):
    """The trial copy a host makes with state_copy (the live stack only) continues
    exactly as a full copy: after the history u, a state filled with garbage and given
    the live part by state_copy yields, along any continuation v, the same outputs and
    the same live memory as the full copy (bitwise)."""
    P = smooth_preisach(n=20, continuous=cont)
    x = P.state_after(u)
    full = x.copy()
    live = np.full_like(x, np.nan)
    P.state_copy(x, live, P.p)
    D = int(P.p[2])
    n = int(x[1])
    assert np.isnan(live[3 + n:3 + D]).all()               # nothing past the stack copied
    prev = float(x[0])
    for w in v:
        P.advance(full, prev, w, 1.0, 0.0, P.p, 1e-8)
        P.advance(live, prev, w, 1.0, 0.0, P.p, 1e-8)
        prev = w
        assert P.force_of(live, w, 0.0) == P.force_of(full, w, 0.0)
        m = int(full[1])
        assert live[1] == m
        np.testing.assert_array_equal(live[:3 + m], full[:3 + m])
        np.testing.assert_array_equal(live[3 + D:3 + D + m], full[3 + D:3 + D + m])


@pytest.mark.parametrize("cont", [False, True])
@SETTINGS
@given(u=st.lists(any_vals, min_size=2, max_size=30), seed=st.integers(0, 1000))
def test_rate_independence_and_trial_copies(u, seed, cont):
    P = smooth_preisach(n=20, continuous=cont)
    rng = np.random.default_rng(seed)
    t1 = np.arange(len(u), dtype=float)
    t2 = np.cumsum(rng.uniform(0.01, 100.0, len(u)))
    r1, r2 = drive(P, t1, u), drive(P, t2, u)
    np.testing.assert_array_equal(r1.force, r2.force)
    # a trial advance on a copy (Newton iterations) leaves x alone and agrees with the
    # non-destructive force evaluation
    x = P.state_after(u)
    keep = x.copy()
    trial = x.copy()
    P.advance(trial, x[0], 0.37, 1.0, 0.0, P.p, 1e-8)
    np.testing.assert_array_equal(x, keep)
    assert P.force_of(trial, 0.37, 0.0) == P.force_of(x, 0.37, 0.0)


def test_refining_linear_segments_changes_nothing():
    P = smooth_preisach()
    u = np.array([0.0, 1.5, -0.5, 1.0, -1.7, 0.3])
    uf = np.concatenate([np.linspace(u[k], u[k + 1], 9)[:-1] for k in range(u.size - 1)]
                        + [[u[-1]]])
    F = run(P, u).force
    Ff = run(P, uf).force
    np.testing.assert_allclose(Ff[::8], F, rtol=0, atol=1e-13)


def test_constant_kernel_everett_closed_form():
    # ω = 1: E(α, β) = (α − β)²/4, W = m²; from negative saturation up to u:
    # M = 2E(u, −m) − W; then down to v: M = 2[E(u, −m) − E(u, v)] − W
    m, n = 2.0, 40
    P = Preisach.from_everett(lambda a, b: (a - b) ** 2 / 4.0, m, n)
    Pk = Preisach.from_kernel(lambda r, s: np.ones_like(r), m, n)
    np.testing.assert_allclose(P.weights, Pk.weights, rtol=1e-12)
    assert P.weights.sum() == pytest.approx(m * m, rel=1e-14)
    h = 2 * m / n
    u, v = -m + 31 * h, -m + 7 * h
    F = run(P, [-m, u, v]).force
    assert F[1] == pytest.approx(2 * (u + m) ** 2 / 4 - m * m, abs=1e-12)
    assert F[2] == pytest.approx(2 * ((u + m) ** 2 / 4 - (u - v) ** 2 / 4) - m * m, abs=1e-12)
    # tangent on the descending branch from u: dM/dv = (u − v) (within one cell)
    x = P.state_after([-m, u, v + 0.5 * h])
    assert P.slope(x, v + 0.5 * h, -1.0, P.p) == pytest.approx(u - v - 0.5 * h, abs=h)


def test_maxwell_slip_is_a_prandtl_ishlinskii_preisach_operator():
    # REFERENCE.md Δ_i = 7, 33, 59, 85, 111 × (1/60) µm; inputs on the 1/60 µm grid
    h = 1e-6 / 60
    delta = np.array([7, 33, 59, 85, 111]) * h
    kt = 1e6
    ms = MaxwellSlip(k=np.full(5, kt), delta=delta)
    pi = PrandtlIshlinskii(r=delta, weights=np.full(5, -kt), k0=5 * kt, h=h, u_bound=2e-6)
    th = np.linspace(0, 4 * np.pi, 1601)
    u = np.round(1e-6 * (np.sin(th) + np.sin(2 * th)) / h) * h
    F1, F2 = run(ms, u).force, run(pi, u).force
    assert np.max(np.abs(F1 - F2)) < 1e-12 * np.max(np.abs(F1))
    # the plays are the asperity slip positions X_i = δ − Z_i (eq. (1))
    x = pi.state_after(u)
    np.testing.assert_allclose(pi.play_outputs(x), u[-1] - run(ms, u).state[-1], atol=1e-18)


def test_masing_is_a_prandtl_ishlinskii_preisach_operator():
    k, k0, alpha, F0 = 4.84e5, 2.34e5, 1.63e2, -5.73e2     # eq. (36), c = 0
    eta = alpha / k
    h = eta / 50
    pi = PrandtlIshlinskii(r=[eta], weights=[-k], k0=k + k0, offset=-F0, h=h, u_bound=1.2e-3)
    th = np.linspace(0, 6 * np.pi, 901)
    u = np.round((5.4e-4 + 5.2e-4 * np.sin(th + 4.8)) / h) * h
    # the play starts at 0 for u = 0, so w(0) = u(0) − 0 (|u(0)| < η)
    el = Masing(k=k, k0=k0, alpha=alpha, F0=F0, w0=u[0])
    F1, F2 = run(el, u).force, run(pi, u).force
    assert np.max(np.abs(F1 - F2)) < 1e-12 * np.max(np.abs(F1))


def test_prandtl_ishlinskii_off_grid_error_bounded_by_grid_step():
    el = Masing(k=2.0, k0=0.0, alpha=1.0)        # η = 0.5
    u = 1.3 * np.sin(np.linspace(0, 9, 500))
    errs = []
    for h in (0.02, 0.01, 0.005):
        pi = PrandtlIshlinskii(r=[0.5], weights=[-2.0], k0=2.0, h=h, u_bound=1.5)
        errs.append(np.max(np.abs(run(pi, u).force - run(el, u).force)))
        assert errs[-1] <= 2.0 * h / 2 * (1 + 1e-9) + 1e-12
    assert errs[0] > errs[2]


def test_relay_follows_eqs_5_6():
    R = Relay(a1=-0.3, a2=0.2, initial=1)
    t = np.linspace(0, 10, 1001)
    r = drive(R, t, np.sin(t))
    ref = brute_force(np.array([-0.3]), np.array([0.2]), np.array([1.0]), 1, np.sin(t))
    np.testing.assert_array_equal(r.force, ref)


def test_stack_overflow_is_an_error_and_depth_is_reported():
    P = smooth_preisach(n=10, max_depth=4)
    u = [0.0, 1.5, -1.5, 1.0, -1.0, 0.5, -0.5, 0.2]
    with pytest.raises(ValueError, match="memory stack overflow"):
        run(P, u)
    P = smooth_preisach(n=10, max_depth=16)
    r = run(P, u)
    assert r.state.shape == (len(u), 2)             # only (u_last, depth) per sample
    assert r.state[-1, 1] == 7                      # LO, 1.5, -1.5, 1.0, -1.0, 0.5, -0.5


@pytest.mark.parametrize("kw, msg", [
    (dict(a1=[0.0, 1.0], a2=[1.0, 1.0], weights=[1, 1]), r"a2 must be in \(a1, inf\)"),
    (dict(a1=[0.0, 2.0], a2=[1.0, 1.0], weights=[1, 1]), r"a2 must be in \(a1, inf\)"),
    (dict(a1=[0.0, np.nan], a2=[1.0, 1.0], weights=[1, 1]), "a1 must be finite"),
    (dict(a1=[0.0], a2=[np.inf], weights=[1]), "a2 must be finite"),
    (dict(a1=[0.0], a2=[1.0], weights=[np.nan]), "weights must be finite"),
    (dict(a1=[0.0], a2=[1.0], weights=[1.0], initial=0), "initial must be -1 or"),
    (dict(a1=[0.0, 0.1], a2=[1.0, 2.0], weights=[1.0, 1.0], initial=[1, -1]), "initial must be"),
    (dict(a1=[[0.0]], a2=[[1.0]], weights=[[1.0]]), "a1 must be a 1-D array"),
    (dict(a1=[0.0], a2=[1.0], weights=[1.0], max_depth=1), r"max_depth must be an integer"),
])
def test_bad_input(kw, msg):
    with pytest.raises(ValueError, match=msg):
        Preisach(**kw)


def test_bad_input_relay_kernel_pi():
    with pytest.raises(ValueError, match=r"a2 must be in \(a1, inf\)"):
        Relay(a1=1.0, a2=1.0)
    with pytest.raises(ValueError, match="initial must be -1 or"):
        Relay(a1=0.0, a2=1.0, initial=0.5)
    with pytest.raises(ValueError, match="omega must be finite"):
        Preisach.from_kernel(lambda r, s: np.full_like(r, np.nan), 1.0, 4)
    with pytest.raises(ValueError, match=r"m must be in \(0, inf\)"):
        Preisach.from_kernel(lambda r, s: r, -1.0, 4)
    with pytest.raises(ValueError, match=r"r must be in \(0, inf\)"):
        PrandtlIshlinskii(r=[-0.1], weights=[1.0], h=0.01, u_bound=1.0)


def test_cable_protocol_and_scenario_small(tmp_path):
    from hystmech.analysis.cases_nonsmooth import cable_bending_protocol
    from hystmech.scenario import load_scenario, run_scenario

    t, K = cable_bending_protocol(points_per_cycle=10)
    assert K.max() == 31.4 and K.min() == 0.0
    peaks = K[1:-1][(K[1:-1] > K[:-2]) & (K[1:-1] > K[2:])]
    assert peaks.size == 27
    np.testing.assert_allclose(peaks[[9, 15, 18, 24]], [6.9, 10.4, 17.45, 31.4])
    assert np.all(np.diff(t) > 0)
    cfg = load_scenario("preisach-cable-protocol")
    res = run_scenario("preisach-cable-protocol", out=tmp_path, progress=lambda f, m="": None,
                       overrides={"protocol": dict(cfg["protocol"], points_per_cycle=20),
                                  "kernel": dict(cfg["kernel"], n=30)})
    met = res.summary["metrics"]
    assert met["repeat_cycle_difference_Nm"] == 0.0      # 2nd and 3rd cycles repeat exactly
    assert met["cycle_peak_moments_Nm"] == sorted(met["cycle_peak_moments_Nm"])
    assert (tmp_path / "preisach_cable.png").exists()


# -- continuous mode: cellwise constant kernel, exact Everett integral -------------------
def refined_relays(P, m, n, q):
    """Relays of the continuous operator's density on every cell split into q×q
    sub-squares (q(q−1)/2 + q sub-cells on a diagonal half-cell), each carrying the
    density times its area: the brute-force discretisation that converges to eq. (12)."""
    h = 2 * m / n
    hs = h / q
    _, _, I, J, _ = Preisach.grid(m, n)
    ka, kb = np.meshgrid(np.arange(q), np.arange(q), indexing="ij")
    ka, kb = ka.ravel(), kb.ravel()
    a1s, a2s, ws = [], [], []
    for c in range(I.size):
        i, j = I[c], J[c]
        if i != j:
            rho = P.weights[c] / (h * h)
            a1s.append(-m + i * h + (ka + 0.5) * hs)
            a2s.append(-m + j * h + (kb + 0.5) * hs)
            ws.append(np.full(ka.size, rho * hs * hs))
        else:
            rho = P.weights[c] / (0.5 * h * h)
            up = kb > ka
            dg = kb == ka
            a1s += [-m + i * h + (ka[up] + 0.5) * hs, -m + i * h + (ka[dg] + 1 / 3) * hs]
            a2s += [-m + i * h + (kb[up] + 0.5) * hs, -m + i * h + (kb[dg] + 2 / 3) * hs]
            ws += [np.full(up.sum(), rho * hs * hs), np.full(dg.sum(), 0.5 * rho * hs * hs)]
    return np.concatenate(a1s), np.concatenate(a2s), np.concatenate(ws)


def test_continuous_is_the_limit_of_refined_relay_sums_first_order():
    m, n = 2.0, 8
    P = smooth_preisach(n=n, m=m, continuous=True)
    rng = np.random.default_rng(3)
    knots = np.r_[-2.0, rng.uniform(-1.9, 1.9, 30)]
    u = np.concatenate([np.linspace(knots[k], knots[k + 1], 7)[:-1]
                        for k in range(knots.size - 1)] + [knots[-1:]])
    F = run(P, u).force
    qs = (4, 8, 16, 32)
    errs = [np.max(np.abs(brute_force(*refined_relays(P, m, n, q), -1, u) - F)) for q in qs]
    order = -np.polyfit(np.log(qs), np.log(errs), 1)[0]
    # the relay staircase is O(relay spacing) away from the exact integral
    assert 0.85 < order < 1.2, (errs, order)
    assert errs[-1] < 0.02 * np.ptp(F)


def test_continuous_equals_discrete_at_grid_nodes():
    m, n = 2.0, 10
    Pd = smooth_preisach(n=n, m=m)
    Pc = smooth_preisach(n=n, m=m, continuous=True)
    rng = np.random.default_rng(5)
    u = -m + (2 * m / n) * rng.integers(0, n + 1, 60)
    np.testing.assert_allclose(run(Pc, u).force, run(Pd, u).force, rtol=0, atol=1e-12)


def test_continuous_constant_kernel_is_exact_off_grid():
    # ω = 1 is constant on every cell: the continuous mode is then the continuous Preisach
    # operator itself, E(α, β) = (α − β)²/4 at any α, β, not only on the grid
    m, n = 2.0, 7
    P = Preisach.from_everett(lambda a, b: (a - b) ** 2 / 4.0, m, n, continuous=True,
                              k0=0.3)
    rng = np.random.default_rng(11)
    for _ in range(20):
        u, v = np.sort(rng.uniform(-m, m, 2))[::-1]       # up to u, down to v
        F = run(P, [-m, u, v]).force
        assert F[1] == pytest.approx(0.3 * u + 2 * (u + m) ** 2 / 4 - m * m, abs=1e-12)
        assert F[2] == pytest.approx(0.3 * v + 2 * ((u + m) ** 2 - (u - v) ** 2) / 4 - m * m,
                                     abs=1e-12)
        x = P.state_after([-m, u, v])
        # exact tangents: descending from u, dM/dv = k0 + (u − v); reversing at v: k0
        assert P.slope(x, v, -1.0, P.p) == pytest.approx(0.3 + (u - v), abs=1e-12)
        assert P.slope(x, v, +1.0, P.p) == pytest.approx(0.3, abs=1e-12)


@SETTINGS
@given(u=st.lists(any_vals, min_size=2, max_size=25), d=st.sampled_from([1.0, -1.0]),
       step=st.floats(0.0, 0.5))
def test_continuous_slope_is_the_derivative_of_the_output(u, d, step):
    P = smooth_preisach(n=12, continuous=True, k0=0.2)
    x = P.state_after(u + [u[-1] + d * step])    # at a reversal (step 0) or along a branch
    c = x[0]
    h = 1e-6
    # the output is smooth between kinks: grid nodes (cell edges of the density) and the
    # stored extrema (where a branch is wiped out); stay clear of them
    kinks = np.r_[P.stack(x)[:-1], -2.0 + (4.0 / 12) * np.arange(13)]
    assume(np.all(np.abs(kinks - c) > 4 * h))
    for sgn in (d, -d):
        fd = (P.force_of(x, c + sgn * h, 0.0) - P.force_of(x, c, 0.0)) / (sgn * h)
        # one-sided difference of a piecewise quadratic: error <= max|M''|·h/2
        assert P.slope(x, c, sgn, P.p) == pytest.approx(fd, abs=1e-5)


def test_continuous_output_has_no_jumps():
    P = smooth_preisach(n=10, continuous=True)
    Pd = smooth_preisach(n=10)
    s = np.linspace(0, 1, 4001)
    u = 2.1 * np.sin(7 * s) * np.exp(-1.5 * s)
    F = run(P, u).force
    # the largest tangent met along the path (both directions at every sample)
    x = P.x0.copy()
    smax = 0.0
    for k in range(u.size):
        P.advance(x, x[0], u[k], 1.0, 0.0, P.p, 1e-8)
        smax = max(smax, abs(P.slope(x, u[k], 1.0, P.p)), abs(P.slope(x, u[k], -1.0, P.p)))
    du = np.abs(np.diff(u))
    # Lipschitz in the input (the slope varies by O(du) within a step: factor 1.05)
    assert np.all(np.abs(np.diff(F)) <= 1.05 * smax * du + 1e-12)
    # while the relay model jumps by whole cell weights
    assert np.max(np.abs(np.diff(run(Pd, u).force))) > 5 * smax * du.max()


def test_continuous_params_round_trip_and_bad_grid():
    P = smooth_preisach(n=6, continuous=True)
    Q = P.with_params(k0=0.5)
    assert Q.continuous and Q.p[8] == 0.0
    u = [0.0, 1.3, -0.4, 0.9]
    np.testing.assert_allclose(run(Q, u).force - 0.5 * np.array(u), run(P, u).force,
                               atol=1e-12)
    with pytest.raises(ValueError, match="cell thresholds of Preisach.grid"):
        Preisach(a1=[0.0], a2=[1.0], weights=[1.0], grid=(2.0, 6))


def test_demagnetized_state_of_a_symmetric_kernel_has_zero_output():
    # ω(r, s) = ω(r, −s): after an alternating input of decaying amplitude the memory
    # curve zig-zags about s = 0 and the +1 and −1 regions carry equal weight at u = 0
    om = lambda r, s: np.exp(-r) * np.exp(-s ** 2)   # noqa: E731
    P = Preisach.from_kernel(om, 2.0, 40, continuous=True, offset=0.25)
    x = P.demagnetized_state()
    assert P.force_of(x, 0.0, 0.0) == pytest.approx(0.25, abs=1e-12)
    assert P.force_of(P.x0, 0.0, 0.0) < 0.25 - 0.1 * P.weights.sum()   # virgin: not so
    with pytest.raises(ValueError, match="step must be in"):
        P.demagnetized_state(step=1e-4)                                 # stack too deep
