"""Planar Cosserat rod (systems/rod.py) against closed forms, conservation and the
properties of hysteretic moment laws."""
import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.special import ellipe, ellipeinc, ellipk, ellipkinc

from hystmech import drive
from hystmech.components.linear import LinearSpring
from hystmech.components.masing import Masing
from hystmech.components.preisach import Preisach
from hystmech.systems.rigs.rod import Rod, RodConvergenceError, dynamic, quasi_static

EI, L = 0.05, 0.4


def elastica_tip(alpha):
    """Tip (x, y)/L of an inextensible elastica cantilever under a transverse dead tip
    load with α = P·L²/EI (Bisshopp & Drucker 1945): √α = K(k) − F(φ0, k),
    x/L = √(2 sin θ_L/α), y/L = 1 − 2(E(k) − E(φ0, k))/√α, k² = (1 + sin θ_L)/2,
    sin φ0 = 1/(k√2)."""
    def phi0(m):
        return np.arcsin(np.sqrt(1.0 / (2.0 * m)))

    m = brentq(lambda m: ellipk(m) - ellipkinc(phi0(m), m) - np.sqrt(alpha),
               0.5 + 1e-15, 1 - 1e-15, xtol=1e-15)
    return np.array([np.sqrt(2 * (2 * m - 1) / alpha),
                     1 - 2 * (ellipe(m) - ellipeinc(phi0(m), m)) / np.sqrt(alpha)])


def elastic_rod(N):
    return Rod(N=N, L=L, law=LinearSpring(k=EI))


def test_small_tip_load_matches_beam_theory():
    P = 1e-3 * EI / L ** 2
    res = quasi_static(elastic_rod(20), tip_force=[0.0, P])
    ref = P * L ** 3 / (3 * EI)
    assert abs(res.tip[-1, 1] / ref - 1) < 0.01


def test_end_moment_gives_circular_arc_up_to_full_circle():
    rod = elastic_rod(60)
    phis = np.array([0.5, 1, 1.5, 2]) * np.pi
    res = quasi_static(rod, tip_moment=np.concatenate([[0], phis]) * EI / L)
    for k, phi in enumerate(phis, start=1):
        K = phi / L
        ref = np.array([np.sin(K * L) / K, (1 - np.cos(K * L)) / K])
        assert np.hypot(*(res.tip[k] - ref)) < 1e-3 * L
        np.testing.assert_allclose(res.K[k], K, rtol=1e-8)


def test_large_tip_load_matches_elastica():
    alphas = np.array([1.0, 5.0, 10.0])
    res = quasi_static(elastic_rod(40), tip_force=np.concatenate([[0], alphas]) * EI / L ** 2)
    for k, a in enumerate(alphas, start=1):
        assert np.hypot(*(res.tip[k] / L - elastica_tip(a))) < 1e-3


def test_tip_error_converges_at_second_order():
    Ns = [8, 16, 32]
    errs = []
    for N in Ns:
        res = quasi_static(elastic_rod(N), tip_force=[0.0, 5.0 * EI / L ** 2])
        errs.append(np.hypot(*(res.tip[-1] / L - elastica_tip(5.0))))
    order = np.polyfit(np.log(Ns), np.log(errs), 1)[0]
    assert -2.2 < order < -1.8


def masing_law():
    # elastic-plastic moment with hardening: M = EI·w + 0.3 EI·K, |w| <= 2 1/m
    return Masing(k=EI, k0=0.3 * EI, alpha=2.0 * EI)


@pytest.mark.parametrize("N", [8, 16])
def test_cycle_repeats_without_drift_and_work_equals_dissipation(N):
    rod = Rod(N=N, L=L, law=masing_law())
    P = 3.0 * EI / L ** 2
    q = 20
    cyc = np.concatenate([np.linspace(P, -P, 2 * q + 1)[1:], np.linspace(-P, P, 2 * q + 1)[1:]])
    path = np.concatenate([np.linspace(0, P, q + 1), cyc, cyc])
    res = quasi_static(rod, tip_force=path)
    n1, n2 = q + cyc.size, q + 2 * cyc.size
    assert res.K[n1:].std() > 1.0                         # bent far beyond yield (2 1/m)
    # no drift: the second cycle retraces the first one
    assert np.max(np.abs(res.q[n1:n2 + 1] - res.q[q:n1 + 1])) < 1e-8
    # work of the tip load over the last cycle = Σ vertex loop energies; the vertex loop
    # energies from each vertex's curvature history driven through the law on its own
    F = path[n1:n2 + 1]
    y = res.tip[n1:n2 + 1, 1]
    x = res.tip[n1:n2 + 1, 0]
    W = np.sum(0.5 * (F[1:] + F[:-1]) * np.diff(y))
    D = 0.0
    law = masing_law()
    sub = 10
    for j in range(rod.N + 1):
        K = res.K[:, j]
        Kf = np.concatenate([np.linspace(K[i], K[i + 1], sub, endpoint=False)
                             for i in range(K.size - 1)] + [K[-1:]])
        Mf = drive(law, np.arange(Kf.size, dtype=float), Kf).force[n1 * sub:]
        Kc = Kf[n1 * sub:]
        D += rod.ell[j] * np.sum(0.5 * (Mf[1:] + Mf[:-1]) * np.diff(Kc))
    assert D > 0
    assert abs(W / D - 1) < 2e-3
    assert np.ptp(x) > 0.05 * L      # genuinely finite deflection


@pytest.mark.parametrize("ppc", [80, 4])
def test_pure_bending_every_vertex_carries_the_driven_preisach_moment(ppc):
    # uniform curvature: every vertex follows the same history, so its moment is the
    # continuous Preisach law driven directly (also with coarse steps of up to 6 rad
    # of tip rotation, which the solver sub-steps)
    from hystmech.systems.rigs.rod_cases import cable_preisach, protocol_curvature

    law, P = cable_preisach({"levels": 60})
    rod = Rod(N=20, L=L, law=law)
    K = protocol_curvature(levels=(3.45, 6.9, 31.4), cycles_per_level=2, points_per_cycle=ppc)
    res = quasi_static(rod, tip_rotation=K * L)
    ref = drive(law, np.arange(K.size, dtype=float), K).force
    assert np.ptp(ref) > 0.5
    np.testing.assert_allclose(res.M, np.broadcast_to(ref[:, None], res.M.shape), rtol=0,
                               atol=1e-9 * np.ptp(ref))
    np.testing.assert_allclose(res.tip_moment, ref, rtol=0, atol=1e-9 * np.ptp(ref))


def cable_rod(N, levels=40, **kw):
    from hystmech.systems.rigs.rod_cases import cable_preisach, demagnetized_memory

    law, _ = cable_preisach({"levels": levels})
    return Rod(N=N, L=L, law=law, memory0=demagnetized_memory(law), **kw)


def test_preisach_cantilever_repeats_and_tip_work_equals_vertex_dissipation():
    from hystmech.systems.rigs.rod_cases import cyclic_path, vertex_dissipation

    rod = cable_rod(12)
    q = 10
    path = cyclic_path(1.0, 3, q)          # 1 N: tip deflection ~0.7 L
    res = quasi_static(rod, tip_force=path)
    a, b = q + 8 * q, q + 12 * q            # third full cycle, +P_max to +P_max
    assert np.max(np.abs(res.K)) > 5.0      # far into the kernel (r0 = 4 1/m)
    assert np.ptp(res.tip[:, 1]) > 1.2 * L
    # no drift: the third cycle retraces the second one (the first still wipes parts
    # of the demagnetised start memory), and every cycle closes
    np.testing.assert_allclose(res.q[a:b + 1], res.q[a - 4 * q:a + 1], rtol=0, atol=1e-6)
    # work of the tip load over the cycle = Σ of the vertices' loop energies, each from
    # its own curvature history driven through the law (hystmech.drive + loop_energy)
    F, y = path[a:b + 1], res.tip[a:b + 1, 1]
    W = np.sum(0.5 * (F[1:] + F[:-1]) * np.diff(y))
    D = vertex_dissipation(rod, res.K, a, b)
    assert W > 0 and np.all(D >= -1e-12)    # clockwise, dissipative moment loops
    assert abs(W / D.sum() - 1) < 1e-3
    # the residual curvature after unloading (hysteresis) is real
    k0 = np.flatnonzero(path[a:] == 0.0)[0] + a
    assert np.max(np.abs(res.K[k0])) > 0.5


def test_dynamic_preisach_energy_lost_per_cycle_is_the_hysteretic_work():
    rod = cable_rod(8, rhoA=0.1, rhoI=1e-6, EA=1e4, GA=1e4)
    st = quasi_static(rod, tip_force=np.linspace(0, 1.0, 8)).state
    T1 = 2 * np.pi / (1.875104 ** 2 * np.sqrt(rod.EI0 / (0.1 * L ** 4)))
    d = dynamic(rod, 3.3 * T1, T1 / 150, start=st)
    cyc = d.cycles(1.08 * T1)           # the hysteretic law softens the first mode a bit
    assert cyc["lost"].size >= 2
    assert np.all(cyc["lost"] > 0) and np.all(np.diff(cyc["lost"]) < 0)
    # E_mech(max_k) − E_mech(max_k+1) = hysteretic moment work over that cycle
    np.testing.assert_allclose(cyc["lost"], cyc["W_hyst"], rtol=1e-3)
    # the whole balance (O(dt²) from the nonlinear eq. (1) segment forces)
    assert np.ptp(d.energy_balance) < 5e-3 * d.E_mech[0]


def test_dynamic_linear_frequency_and_energy_conservation():
    rhoA = 0.1
    rod = Rod(N=12, L=L, law=LinearSpring(k=EI), rhoA=rhoA, rhoI=1e-7, EA=1e4, GA=1e4)
    st = quasi_static(rod, tip_force=[0.0, 0.01 * EI / L ** 2]).state
    w1 = 1.875104 ** 2 * np.sqrt(EI / (rhoA * L ** 4))
    T1 = 2 * np.pi / w1
    d = dynamic(rod, 2.2 * T1, T1 / 100, start=st)
    y = d.tip[:, 1]
    i = np.flatnonzero((y[:-1] > 0) & (y[1:] <= 0))
    tc = d.t[i] + (d.t[i + 1] - d.t[i]) * y[i] / (y[i] - y[i + 1])
    assert abs(np.mean(np.diff(tc)) / T1 - 1) < 0.02
    E0 = 0.5 * np.sum(rod.ell * EI * st.K ** 2)
    assert np.ptp(d.energy_balance) < 1e-3 * E0


def test_dynamic_hysteresis_dissipates():
    rod = Rod(N=8, L=L, law=masing_law(), rhoA=0.1, rhoI=1e-6, EA=1e4, GA=1e4)
    st = quasi_static(rod, tip_force=np.linspace(0, 3 * EI / L ** 2, 6)).state
    d = dynamic(rod, 1.0, 1e-3, start=st)
    y = d.tip[:, 1]
    assert np.max(np.abs(y[d.t > 0.7])) < 0.8 * y[0]          # amplitude decays
    assert np.ptp(d.energy_balance) < 1e-3 * np.ptp(d.W_bend)  # integrator conserves


@pytest.mark.parametrize("kw, word", [
    (dict(N=1), "N"), (dict(N=2.5), "N"), (dict(L=0.0), "L"), (dict(L=-1.0), "L"),
    (dict(law=LinearSpring(k=-1.0)), "EI"), (dict(law=LinearSpring(k=0.0)), "EI"),
    (dict(EA=0.0), "EA"),
])
def test_bad_rod_input(kw, word):
    args = dict(N=4, L=L, law=LinearSpring(k=EI))
    args.update(kw)
    with pytest.raises(ValueError, match=word):
        Rod(**args)


def test_bad_load_path_names_the_step():
    rod = elastic_rod(4)
    with pytest.raises(ValueError, match="tip_force.*load step 2"):
        quasi_static(rod, tip_force=[0.0, 0.1, np.nan])
    with pytest.raises(ValueError, match="tip_moment"):
        quasi_static(rod, tip_moment=[0.0, np.inf])


def test_newton_failure_names_step_and_keeps_results():
    rod = elastic_rod(10)
    path = np.array([0.0, 0.01, 0.02, 50.0]) * EI / L ** 2
    with pytest.raises(RodConvergenceError, match="load step 3") as ei:
        quasi_static(rod, tip_force=path, max_iter=6, max_cuts=0)
    err = ei.value
    assert err.step == 3 and err.result.n_steps == 3
    assert err.result.tip[2, 1] > 0


@pytest.mark.slow
def test_scenarios_run_small(tmp_path):
    from hystmech.scenario import load_scenario
    from hystmech.systems.rigs import rod_cases

    cfg = load_scenario("cable-pure-bending")
    cfg["rod"]["N"] = 20
    cfg["protocol"] = {"levels": [5.0, 12.0], "cycles_per_level": 1, "points_per_cycle": 20}
    cfg["law"]["levels"] = 40
    out = rod_cases.run_pure_bending(cfg, tmp_path, lambda f, m: None)
    assert out.summary["metrics"]["max_vertex_moment_minus_driven_operator_Nm"] < 1e-9
    cfg = load_scenario("cable-cantilever-cyclic")
    cfg["rod"]["N"] = 10
    cfg["law"]["levels"] = 40
    cfg["load"].update(steps_per_quarter=8)
    met = rod_cases.run_cantilever_cyclic(cfg, tmp_path, lambda f, m: None).summary["metrics"]
    assert met["residual_curvature_max_1_per_m"] > 0.5
    assert met["tip_work_last_cycle_J"] > 0 and abs(met["work_minus_dissipation_rel"]) < 2e-3
    assert met["shape_drift_over_last_cycle_m"] < 1e-8
    cfg = load_scenario("cable-dynamic")
    cfg["rod"]["N"] = 6
    cfg["law"]["levels"] = 40
    cfg["solver"].update(periods=3.3, steps_per_period=100)
    met = rod_cases.run_dynamic(cfg, tmp_path, lambda f, m: None).summary["metrics"]
    assert met["n_cycles"] >= 2 and min(met["energy_lost_per_cycle_J"]) > 0
    assert met["cycle_balance_error_rel"] < 1e-2
    assert met["energy_balance_error_rel"] < 2e-2
