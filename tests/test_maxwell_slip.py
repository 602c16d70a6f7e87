"""Modified Maxwell-slip model (Jankowski, Marszał & Stefański (2017)) against the
behaviour of §3.1 with the REFERENCE.md parameter set."""
import numpy as np
import pytest

from hystmech import drive
from hystmech.components import MaxwellSlip

HEIGHTS = [1.21667e-6, 1.65000e-6, 2.08330e-6, 2.51670e-6, 2.95000e-6]
REF = dict(kt=1e6, kn=2e6, mu=0.5, d=1.1e-6, heights=HEIGHTS)
A1 = A2 = 1.0e-6


def delta_t(theta):
    return A1 * np.sin(theta) + A2 * np.sin(2 * theta)


def segment_angles():
    # extrema of sin θ + sin 2θ: cos θ + 2 cos 2θ = 0 -> 4c² + c − 2 = 0
    c1 = (-1 + np.sqrt(33)) / 8
    c2 = (-1 - np.sqrt(33)) / 8
    tB = np.arccos(c1)
    tD = np.arccos(c2)
    return {"0": 0.0, "B": tB, "D": tD, "F": 2 * np.pi - tD, "H": 2 * np.pi - tB,
            "J": 2 * np.pi + tB}


def knots_input(n_seg=400, extra=()):
    pts = segment_angles()
    names = ["0", "B", "D", "F", "H", "J"]
    th = [np.linspace(pts[a], pts[b], n_seg + 1)[:-1] for a, b in zip(names, names[1:])]
    th = np.concatenate(th + [[pts["J"]], list(extra)])
    th = np.unique(th)
    return th, pts


def test_from_heights_gives_reference_deltas():
    el = MaxwellSlip.from_heights(**REF)
    np.testing.assert_allclose(el.delta, [0.11667e-6, 0.55e-6, 0.9833e-6, 1.4167e-6, 1.85e-6],
                               rtol=0, atol=1e-10)


def test_extrema_values_of_the_reference_signal():
    pts = segment_angles()
    vals = {k: delta_t(v) for k, v in pts.items()}
    assert vals["B"] == pytest.approx(1.760e-6, abs=1e-9)
    assert vals["D"] == pytest.approx(-0.369e-6, abs=1e-9)
    assert vals["F"] == pytest.approx(0.369e-6, abs=1e-9)
    assert vals["H"] == pytest.approx(-1.760e-6, abs=1e-9)


def test_per_segment_slip_pattern_matches_reference():
    el = MaxwellSlip.from_heights(**REF)
    th, pts = knots_input()
    r = drive(el, th, delta_t(th))
    names = ["0", "B", "D", "F", "H", "J"]
    expected = {"0B": {1, 2, 3, 4}, "BD": {1, 2, 3}, "DF": {1}, "FH": {1, 2, 3, 4},
                "HJ": {1, 2, 3, 4}}
    for a, b in zip(names, names[1:]):
        sel = (th > pts[a]) & (th <= pts[b])
        sgn = np.sign(delta_t(pts[b]) - delta_t(pts[a]))
        z = r.state[sel]
        # an asperity slips on the segment when Z_i reaches the boundary it is pushed to
        slipped = {i + 1 for i in range(5) if np.any(sgn * z[:, i] >= el.delta[i] * (1 - 1e-12))}
        assert slipped == expected[a + b], (a + b, slipped)
    # asperity 5 never slips, its force is k·δ_t throughout
    np.testing.assert_allclose(r.state[:, 4], r.u, rtol=0, atol=1e-18)


def test_inner_loop_closes_exactly_at_D_and_rejoins_the_outer_curve():
    el = MaxwellSlip.from_heights(**REF)
    pts = segment_angles()
    uD = delta_t(pts["D"])
    # the angle on F -> H where δ_t returns to the value at D (bisection, δ_t decreasing)
    lo, hi = pts["F"], pts["H"]
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if delta_t(mid) > uD:
            lo = mid
        else:
            hi = mid
    th, _ = knots_input(extra=[lo])
    u = delta_t(th)
    r = drive(el, th, u)
    iD = int(np.argmin(np.abs(th - pts["D"])))
    iR = int(np.argmin(np.abs(th - lo)))
    assert abs(u[iR] - u[iD]) < 1e-20
    # return-point memory: same state, same force at the return point as at D
    np.testing.assert_allclose(r.state[iR], r.state[iD], rtol=0, atol=1e-18)
    assert r.force[iR] == pytest.approx(r.force[iD], rel=1e-12)
    # wiping-out: after D, F -> H continues the curve 0 -> B -> H without the inner loop
    sel = (th > lo) & (th <= pts["H"])
    th2 = np.concatenate([th[th <= pts["D"]], th[sel]])
    r2 = drive(el, th2, delta_t(th2))
    n_after = int(sel.sum())
    np.testing.assert_allclose(r.force[sel], r2.force[-n_after:], rtol=1e-12, atol=1e-15)


def test_force_bounded_by_coulomb_levels_and_rate_independent():
    el = MaxwellSlip.from_heights(**REF)
    th, _ = knots_input(n_seg=100)
    u = delta_t(th)
    r1 = drive(el, th, u)
    r2 = drive(el, 37.0 * th ** 1.3 + th, u)  # same path, another time law
    np.testing.assert_array_equal(r1.force, r2.force)
    coulomb = 0.5 * 2e6 * (np.array(HEIGHTS) - 1.1e-6)
    fa = el.asperity_forces(r1.state)
    assert np.all(np.abs(fa) <= coulomb * (1 + 1e-12))
    np.testing.assert_allclose(fa.sum(axis=1), r1.force, rtol=1e-13, atol=1e-18)


def test_asperities_out_of_contact_carry_no_force():
    el = MaxwellSlip.from_heights(kt=1e6, kn=2e6, mu=0.5, d=2.0e-6, heights=HEIGHTS)
    assert np.all(el.delta >= 0)
    np.testing.assert_array_equal(el.delta[:2], 0.0)
    t = np.linspace(0, 1, 201)
    r = drive(el, t, 2e-6 * np.sin(2 * np.pi * t))
    np.testing.assert_array_equal(el.asperity_forces(r.state)[:, :2], 0.0)


def test_slope_is_sum_of_sticking_stiffnesses():
    el = MaxwellSlip(k=[1.0, 2.0, 4.0], delta=[0.1, 0.2, 0.3])
    x = np.array([0.1, 0.05, -0.3])
    assert el.slope(x, 0.0, 1.0, el.p) == 6.0    # asperity 1 slips forward
    assert el.slope(x, 0.0, -1.0, el.p) == 3.0   # asperity 3 slips backward


@pytest.mark.parametrize("kw, msg", [
    (dict(k=[1.0, -1.0], delta=[0.1, 0.1]), r"k must be in \(0, inf\)"),
    (dict(k=[1.0, 1.0], delta=[0.1, -0.1]), r"delta must be in \[0, inf\)"),
    (dict(k=[1.0, 1.0], delta=[0.1]), "delta must have the same length"),
    (dict(k=[1.0, np.nan], delta=[0.1, 0.1]), "k must be finite"),
    (dict(k=[1.0], delta=[0.1], z0=[0.2]), r"z0 must be in \[-delta_i, delta_i\]"),
])
def test_bad_input(kw, msg):
    with pytest.raises(ValueError, match=msg):
        MaxwellSlip(**kw)


def test_bad_heights():
    with pytest.raises(ValueError, match="heights must be a 1-D array"):
        MaxwellSlip.from_heights(kt=1, kn=1, mu=0.5, d=0.0, heights=[[1e-6, 2e-6]])
    with pytest.raises(ValueError, match=r"kt must be in \(0, inf\)"):
        MaxwellSlip.from_heights(kt=-1, kn=1, mu=0.5, d=0.0, heights=[1e-6])


def test_scenario_maxwell_slip_loops_small(tmp_path):
    from hystmech.scenario import load_scenario, run_scenario

    cfg = load_scenario("maxwell-slip-loops")
    inp = dict(cfg["input"], n_per_segment=60)
    res = run_scenario("maxwell-slip-loops", out=tmp_path, progress=lambda f, m="": None,
                       overrides={"input": inp})
    met = res.summary["metrics"]
    assert met["slip_pattern"] == met["slip_pattern_reference"]
    assert met["inner_loop_return_error_N"] < 1e-12 * abs(met["points_N"]["B"])
    assert met["points_um"]["B"] == pytest.approx(1.760, abs=1e-3)
    assert (tmp_path / "fig3_macro_loop.png").exists()
