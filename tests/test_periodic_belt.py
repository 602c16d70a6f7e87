"""Periodic orbits and continuation of the belt–tensioner rig of Bastien et al. (2007),
§4, against the closed-form linear FRF and the brute-force time simulation of Fig. 21."""
import numpy as np
import pytest

from hystmech.components.linear import SpringDamper
from hystmech.systems.rigs import belt_assembly, paper_tensioner
from hystmech.systems.rigs.belt_tensioner import (MASING_PARAMS, linear_tension_amplitude,
                                             masing_damping)
from hystmech.systems.periodic.continuation import continue_orbits
from hystmech.systems.periodic.shooting import peak_to_peak, periodic_orbit
from hystmech.systems.periodic.sweep import tension_amplitude

K_STUCK = MASING_PARAMS["k"] + MASING_PARAMS["k0"]     # eq. (21a): stuck Masing stiffness


def tension(res):
    """Peak-to-peak belt tension T = K(u1 − u2) + C(u̇1 − u̇2) + T0 over one period [N]."""
    return peak_to_peak(res.t, res.force("belt") + res.force("belt_damping"))


def rig(element, f1, Om):
    # the sweep's forcing, eqs. (59a)-(59b): f0 = 0, φ = 0, static start at t0 = 0
    return belt_assembly(element, t0=0.0, f0=0.0, f1=f1, Omega0=Om, phi=0.0)[0]


def test_linear_rig_continuation_equals_closed_form_frf():
    # the stuck Masing tensioner is the linear spring k + k0 with c0(Ω) (eqs. (21a), (31))
    f1 = 13.0
    br = continue_orbits(lambda Om: rig(SpringDamper(k=K_STUCK, c=masing_damping(Om)), f1, Om),
                         58.0, 74.0, ds=0.05, ds_max=0.2, tol=1e-9, n_samples=256,
                         options=dict(rtol=1e-11), measure=tension)
    assert br.p.size >= 5 and br.p.max() >= 74.0 and "left the parameter range" in br.message
    ref = np.array([linear_tension_amplitude(w, k_t=K_STUCK, c_t=masing_damping(w), f1=f1)
                    for w in br.p])
    assert br.measure == pytest.approx(ref, rel=1e-6)
    assert ref.max() > 2 * ref.min()          # the branch crosses the resonance peak
    assert br.stable.all() and not br.folds()


@pytest.mark.parametrize("f1, omegas", [(13.0, (40.0, 66.0)),    # stuck
                                        (300.0, (30.0,))])        # slipping: w on its box
def test_masing_orbit_equals_sweep_amplitude(f1, omegas):
    for Om in omegas:
        o = periodic_orbit(rig(paper_tensioner("masing", Omega0=Om), f1, Om), tol=1e-7)
        res = o.simulate(2000)
        sweep = tension_amplitude("masing", f1, Om, steady_state=True)["T_amplitude"]
        assert tension(res) == pytest.approx(sweep, rel=5e-3)
        w = res.state("tensioner")[:, 0]
        eta = -paper_tensioner("masing").box_lo[0]
        if f1 == 13.0:
            # stuck: the slider never reaches its box, and its offset is neutral: the
            # monodromy has μ = 1, removed structurally from the multipliers reported
            assert np.abs(w).max() < 0.9 * eta
            assert np.min(np.abs(np.linalg.eigvals(o.monodromy) - 1.0)) < 1e-6
            assert o.multipliers.size == o.monodromy.shape[0] - 1
            assert o.stability == "stable" and np.abs(o.multipliers).max() < 0.9
        else:
            assert np.abs(w).max() == pytest.approx(eta, rel=1e-9)
            assert o.stable


def test_masing_stuck_continuation_matches_sweep():
    f1 = 13.0
    br = continue_orbits(lambda Om: rig(paper_tensioner("masing", Omega0=Om), f1, Om),
                         62.0, 70.0, ds=0.3, ds_max=0.5, tol=1e-7, measure=tension,
                         n_samples=1024)
    assert br.p.size >= 3 and br.stable.all()
    for Om, amp in zip(br.p[:3], br.measure[:3]):
        sweep = tension_amplitude("masing", f1, float(Om), steady_state=True)["T_amplitude"]
        assert amp == pytest.approx(sweep, rel=5e-3)


def test_scenario_runner_writes_branches_over_given_sweep(tmp_path):
    from hystmech.systems.periodic.frf_continuation import run

    # a brute-force file as belt-tensioner-frf writes it (two points of the sweep)
    Om = (62.0, 64.0)
    amps = [tension_amplitude("masing", 13.0, w, steady_state=True)["T_amplitude"] for w in Om]
    csv = tmp_path / "frf.csv"
    csv.write_text("model,f1,omega,T_amplitude\n" + "".join(
        f"masing,13.0,{w!r},{a!r}\n" for w, a in zip(Om, amps)))
    cfg = {"branches": {"models": ["masing"], "f1": [13.0], "omega_min": 62.0,
                        "omega_max": 64.0},
           "continuation": {"ds": 0.3, "ds_max": 0.5, "masing_tol": 1e-7},
           "overlay": {"frf_csv": str(csv)}}
    out = run(cfg, tmp_path, lambda f, m: None)
    lines = out.files["frf_branches.csv"].strip().splitlines()
    assert lines[0] == ("model,f1,omega,T_amplitude,stability,max_multiplier,"
                        "max_multiplier_error,fresh_jacobian,leading_real_multiplier")
    rows = [ln.split(",") for ln in lines[1:]]
    w = np.array([float(r[2]) for r in rows])
    a = np.array([float(r[3]) for r in rows])
    assert w[0] == 62.0 and w[-1] >= 64.0 and all(r[4] == "stable" for r in rows)
    # stuck Masing: the linear FRF with k + k0, c0(Ω), within the projection scheme's error
    ref = [linear_tension_amplitude(x, k_t=K_STUCK, c_t=masing_damping(x), f1=13.0) for x in w]
    assert a == pytest.approx(ref, rel=5e-3)
    assert out.files["frf_folds.csv"].strip() == "model,f1,kind,omega,T_amplitude,exact"
    assert "frf_continuation" in out.figures
    with pytest.raises(ValueError, match="frf_csv"):
        run({**cfg, "overlay": {"frf_csv": str(tmp_path / "missing.csv")}}, tmp_path,
            lambda f, m: None)
    with pytest.raises(ValueError, match="unknown key"):
        run({**cfg, "branches": {"modles": ["mdm"]}}, tmp_path, lambda f, m: None)


def test_frf_branch_bad_input():
    from hystmech.systems.periodic.frf_continuation import frf_branch

    with pytest.raises(ValueError, match="model"):
        frf_branch("dahl", 10.0)
    with pytest.raises(ValueError, match="f1"):
        frf_branch("mdm", -1.0)
    with pytest.raises(ValueError, match="omega_max"):
        frf_branch("mdm", 10.0, 50.0, 40.0)


def test_fold_evidence_decay_time_is_the_slow_eigenvalue_of_an_overdamped_oscillator():
    # x'' + 5x' + 4x = cos(Ωt): eigenvalues −1, −4, real multipliers exp(λT); no fold, and a
    # transient decays to 1 % in ln(100)/1 s whatever Ω
    import math

    from hystmech.systems import Assembly, Harmonic
    from hystmech.systems.periodic.continuation import continue_orbits
    from hystmech.systems.periodic.frf_continuation import fold_evidence

    def build(Om):
        a = Assembly()
        a.add_dof("x", mass=1.0)
        a.add_spring("x", "ground", k=4.0)
        a.add_damper("x", "ground", c=5.0)
        a.add_force("x", Harmonic(0.0, 1.0, Om, 0.0))
        return a
    br = continue_orbits(build, 1.5, 2.5, ds=0.2, ds_max=0.3, tol=1e-9,
                         options=dict(rtol=1e-10))
    ev = fold_evidence(br)
    assert not br.folds()
    assert ev["multiplier"] == pytest.approx(math.exp(-2 * math.pi / ev["omega"]), rel=1e-6)
    assert ev["decay_s_1pct"] == pytest.approx(math.log(100.0), rel=1e-6)


def test_frf_branch_of_period_3T_on_the_rig_is_the_T_orbit_with_cubed_multipliers():
    # the Ω ≈ ω1/3 range at 300 N: the 3T orbit the branch finds is the T orbit (no
    # multiplier of the T branch crosses a cube root of unity, so no distinct 3T orbit
    # is born from it) and its monodromy is M_T³ (Floquet), so the multipliers are cubes
    from hystmech.systems.periodic.frf_continuation import frf_branch, rig_at
    from hystmech.systems.periodic.shooting import periodic_orbit

    b3 = frf_branch("mdm", 300.0, 14.0, 14.3, ds=0.5, ds_max=0.5, max_points=2, n_periods=3)
    assert b3.n_periods == 3 and b3.p[0] == 14.0
    kw = dict(method="RK45", options=dict(rtol=1e-9), section="fixed", tol=1e-9,
              t0=float(b3.phase[0]) * 2 * np.pi / 14.0)
    o1 = periodic_orbit(rig_at("mdm", 300.0)(14.0), y0=b3.y[0], **kw)
    o3 = periodic_orbit(rig_at("mdm", 300.0)(14.0), y0=b3.y[0], n_periods=3, **kw)
    assert np.max(np.abs(o3.y0 - o1.y0)[:4] / o1.scale[:4]) < 1e-6
    assert np.max(np.abs(np.sort_complex(o3.multipliers)
                         - np.sort_complex(o1.multipliers ** 3))) < 1e-5
