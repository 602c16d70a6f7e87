"""Identification on synthetic data with known truth and 1 % noise (issue 6 §3).

Noise: Gaussian, standard deviation 1 % of the standard deviation of the noise-free
force (seeded), added to the measured force only (the displacement is the imposed,
noise-free input, as in the papers' set-ups)."""
import numpy as np
import pytest
from numba import njit

import hystmech
from hystmech.identify.dataset import Dataset


def _noisy(F, seed=0, level=0.01):
    return F + level * np.std(F) * np.random.default_rng(seed).standard_normal(F.size)


# -- viscous + Dahl: the MR-damper rig with the paper's values --------------------------------
@pytest.mark.slow
def test_viscous_dahl_from_rig_within_2_percent():
    from hystmech.identify.viscous_dahl import fit_viscous_dahl
    from hystmech.systems.rigs.mr_damper import PAPER, mr_damper_rig_data

    t, x, v, F = mr_damper_rig_data(periods=3, fs=2000.0)
    ds = Dataset(t=t, u=x, force=_noisy(F), v=v)
    r = fit_viscous_dahl(ds)
    for k in ("kx1", "kw1", "kx2", "kw2", "rho"):
        assert r.params[k] == pytest.approx(PAPER[k], rel=0.02), k
    assert r.merit["r2"] > 0.999
    assert min(r.details["regression_r2"]) > 0.99


def test_windows_where_velocity_changes_sign_are_rejected():
    from hystmech.identify.viscous_dahl import fit_viscous_dahl

    t = np.linspace(0, 4, 4001)
    ds = Dataset(t=t, u=np.sin(np.pi * t), force=np.cos(np.pi * t))
    with pytest.raises(ValueError, match="changes sign"):
        fit_viscous_dahl(ds, windows=[(0.1, 0.9, 1)])


# -- modified Dahl under the identification input, eqs. (29), (32)-(35) ------------------------
MD_TRUTH = dict(a=7.146e4, b=9.596e2, d=5.322e4, e=3.972e2, Lambda=117355.0, mu=0.37)


def test_modified_dahl_within_2_percent():
    from hystmech.components import ModifiedDahl
    from hystmech.identify.modified_dahl import fit_modified_dahl

    Om, phi, x0, x1 = 9.4, 4.8, 5.4e-4, 5.2e-4
    T = 2 * np.pi / Om
    P, S = 12, 2000
    t = np.linspace(0, (P + 1) * T, (P + 1) * S + 1)
    u = x0 + x1 * np.sin(Om * t + phi)
    F = hystmech.drive(ModifiedDahl(F0=700.0, **MD_TRUTH), t, u, rtol=1e-9).force
    k = t >= T - 1e-12                     # after the transient of the first period
    ds = Dataset(t=t[k] - t[k][0], u=u[k], force=_noisy(F)[k])
    r = fit_modified_dahl(ds)
    for name, val in MD_TRUTH.items():
        assert r.params[name] == pytest.approx(val, rel=0.02), name
        assert abs(r.params[name] - val) < 4 * r.stderr[name], name   # honest error bars


# -- Masing with viscous damping, eq. (36) -----------------------------------------------------
MS_TRUTH = dict(k=4.84e5, k0=2.34e5, alpha=1.63e2, F0=-5.73e2, c=1.93e4)


def test_masing_within_1_and_2_percent():
    from hystmech.analysis.masing import damping_from_energy, viscous_energy
    from hystmech.components import Masing
    from hystmech.identify.masing import fit_masing

    Om, phi, x0, x1 = 9.4, 4.8, 5.4e-4, 5.2e-4
    T = 2 * np.pi / Om
    t = np.linspace(0, 7 * T, 7 * 2000 + 1)
    u = x0 + x1 * np.sin(Om * t + phi)
    v = x1 * Om * np.cos(Om * t + phi)
    F = hystmech.drive(Masing(**MS_TRUTH), t, u, v).force
    k = t >= T - 1e-12
    ds = Dataset(t=t[k] - t[k][0], u=u[k], force=_noisy(F)[k], v=v[k])
    r = fit_masing(ds)
    for name in ("k", "k0", "alpha", "F0"):
        assert r.params[name] == pytest.approx(MS_TRUTH[name], rel=0.01), name
    assert r.params["c"] == pytest.approx(MS_TRUTH["c"], rel=0.02)
    # the viscous energy per cycle is π x1² Ω c (eq. (30))
    assert r.details["E_viscous"] == pytest.approx(viscous_energy(c=MS_TRUTH["c"], x1=x1, Omega=Om),
                                                   rel=0.02)
    assert damping_from_energy(E=r.details["E_viscous"], x1=x1, Omega=Om) == \
        pytest.approx(r.params["c"], rel=1e-3)


# -- Preisach under the cyclic bending protocol (Manfredo et al. 2023, §5) ---------------------
LEVELS = [1.725, 3.45, 5.175, 6.9, 8.65, 10.4, 17.45, 24.425, 31.4]   # K4, K6, K7, K9 from §5


def protocol(n=6000):
    """27 cycles 0 -> K_k -> 0, three per level; returns curvature and cycle number."""
    knots = [0.0]
    for L in LEVELS:
        knots += [L, 0.0] * 3
    knots = np.asarray(knots)
    seg = np.abs(np.diff(knots))
    v, cyc = [], []
    for c, (a, b) in enumerate(zip(knots[:-1], knots[1:])):
        m = max(int(n * abs(b - a) / seg.sum()), 4)
        v.append(np.linspace(a, b, m, endpoint=False))
        cyc.append(np.full(m, c // 2))
    return np.r_[np.concatenate(v), 0.0], np.r_[np.concatenate(cyc), 26]


def omega(r, s, R=2.4, s0=4.0, S=4.0):
    """Smooth (C¹) kernel supported inside the part of the plane cycles 1-18 sweep."""
    return np.clip(1 - (r / R) ** 2, 0, None) ** 2 * np.clip(1 - ((s - s0) / S) ** 2, 0, None) ** 2


@njit(cache=True)
def _relays(v, A, B, wgt, st):
    # eqs. (4)-(7) directly: each relay R_{B, A} switches up at v >= A, down at v <= B
    y = np.empty(v.size)
    for k in range(v.size):
        acc = 0.0
        for j in range(A.size):
            if v[k] >= A[j]:
                st[j] = 1.0
            elif v[k] <= B[j]:
                st[j] = -1.0
            acc += st[j] * wgt[j]
        y[k] = acc
    return y


def preisach_truth(v, h=0.05):
    """Output of the continuous kernel by a fine relay grid (midpoint rule, spacing h),
    from the demagnetised state ψ(0) = 0 (eq. (10))."""
    g = np.arange(-3.0, 10.6, h) + h / 2
    A, B = np.meshgrid(g, g, indexing="ij")
    msk = B < A
    A, B = A[msk], B[msk]
    r, s = (A - B) / 2, (A + B) / 2
    w = omega(r, s) * h * h / 2
    keep = w > 0
    A, B, w, s = A[keep], B[keep], w[keep], s[keep]
    return _relays(v, A, B, w, np.where(s < 0, 1.0, -1.0))


def test_preisach_fit_cycles_1_18_predicts_19_27():
    from hystmech.identify.preisach import fit_preisach

    v, cyc = protocol()
    y = preisach_truth(v)
    y_noisy = _noisy(y)
    tr = cyc < 18
    fit = fit_preisach(v[tr], y_noisy[tr], d=0.25)
    pred = fit.predict(v)
    rmse = np.sqrt(np.mean((pred[~tr] - y[~tr]) ** 2))
    assert rmse < 0.02 * np.ptp(y)
    # the identified triangles' total weight approaches the kernel's mass
    g = np.linspace(0, 2.4, 241)[:, None], np.linspace(0, 8.0, 801)[None, :]
    mass = np.trapezoid(np.trapezoid(omega(g[0], g[1]), dx=0.01, axis=1), dx=0.01)
    assert fit.x.sum() == pytest.approx(mass, rel=0.03)


def test_preisach_min_norm_equals_dense_lstsq_and_options():
    """Compressed-row solvers against scipy/numpy on the dense, uncompressed Δ: the
    minimum-norm solution, x >= 0 (lsq_linear BVLS, same optimal residual), Tikhonov
    (dense lstsq of the stacked system, same solution) and both together."""
    from scipy.optimize import lsq_linear

    from hystmech.identify.preisach import _smoothing_matrix, assemble, fit_preisach

    v, cyc = protocol(n=800)
    v, y = v[cyc < 12], _noisy(preisach_truth(v)[cyc < 12])
    fit = fit_preisach(v, y, d=0.5)
    mesh, op = assemble(v, 0.5)
    Dd = op.dense()
    n = mesh.n
    x_ref, *_ = np.linalg.lstsq(Dd, y, rcond=None)          # minimum-norm solution
    np.testing.assert_allclose(np.r_[fit.x, fit.offset], x_ref, atol=1e-6 * np.abs(x_ref).max())
    assert fit.residual_norm == pytest.approx(np.linalg.norm(Dd @ x_ref - y), rel=1e-6, abs=1e-9)
    lb, ub = np.r_[np.zeros(n), -np.inf], np.full(n + 1, np.inf)
    nn = fit_preisach(v, y, d=0.5, nonnegative=True)
    ref = lsq_linear(Dd, y, bounds=(lb, ub), method="bvls", tol=1e-12)
    assert nn.x.min() >= 0.0
    assert nn.residual_norm == pytest.approx(np.linalg.norm(ref.fun), rel=1e-8)
    assert nn.residual_norm > fit.residual_norm          # the constraint is active here
    lam = 0.3
    G = _smoothing_matrix(mesh).toarray()
    G = np.c_[G, np.zeros(G.shape[0])]
    S = np.r_[Dd, lam * G]
    z = np.r_[y, np.zeros(G.shape[0])]
    xs, *_ = np.linalg.lstsq(S, z, rcond=None)
    sm = fit_preisach(v, y, d=0.5, smoothing=lam)
    np.testing.assert_allclose(np.r_[sm.x, sm.offset], xs, rtol=0, atol=1e-8 * np.abs(xs).max())
    both = fit_preisach(v, y, d=0.5, smoothing=lam, nonnegative=True)
    ref = lsq_linear(S, z, bounds=(lb, ub), method="bvls", tol=1e-12)
    xb = np.r_[both.x, both.offset]
    assert both.x.min() >= 0.0
    assert np.linalg.norm(S @ xb - z) == pytest.approx(np.linalg.norm(ref.fun), rel=1e-8)
    # the iterative fall-backs for problems too big for dense matrices agree too
    import hystmech.identify.preisach as P

    lim = P.DENSE_LIMIT
    try:
        P.DENSE_LIMIT = 10
        nn2 = fit_preisach(v, y, d=0.5, nonnegative=True)
        sm2 = fit_preisach(v, y, d=0.5, smoothing=lam)
    finally:
        P.DENSE_LIMIT = lim
    assert nn2.x.min() >= 0 and nn2.residual_norm == pytest.approx(nn.residual_norm, rel=1e-6)
    np.testing.assert_allclose(np.r_[sm2.x, sm2.offset], xs, rtol=0, atol=1e-5 * np.abs(xs).max())
    with pytest.raises(ValueError, match="tolerance d must be in"):
        fit_preisach(v, y, d=0.0)
    with pytest.raises(ValueError, match="smoothing must be in"):
        fit_preisach(v, y, d=0.5, smoothing=-1.0)
    with pytest.raises(ValueError, match="initial must be"):
        fit_preisach(v, y, d=0.5, initial=0)


def test_preisach_smoothing_matrix_spares_a_constant_kernel():
    from hystmech.identify.preisach import _smoothing_matrix, full_mesh

    N = 6
    mesh = full_mesh(0.5, -3, 3)
    assert mesh.n == N * (N + 1) // 2
    G = _smoothing_matrix(mesh)
    assert G.shape[0] == N * (N - 1)                 # two inner edges per square
    np.testing.assert_allclose(G @ (2.7 * mesh.area_rs()), 0.0, atol=1e-15)
    # its pairs are exactly the cells sharing an edge (two corners in (α, β))
    V = [set(map(tuple, np.round(c / 0.5).astype(int).tolist())) for c in mesh.vertices_ab()]
    edges = {(a, b) for a in range(mesh.n) for b in range(a + 1, mesh.n) if len(V[a] & V[b]) == 2}
    Gc = G.tocoo()
    pairs = {}
    for r, c in zip(Gc.row, Gc.col):
        pairs.setdefault(r, []).append(c)
    assert {tuple(sorted(p)) for p in pairs.values()} == edges


@pytest.mark.parametrize("initial", ["demagnetized", -1, 1])
def test_preisach_element_reproduces_predict_exactly(initial):
    """The exported continuous Preisach element (memory stack + Everett function of
    hystmech.components) driven with the rounded input equals the identification
    model's own evaluation (cell switching, eqs. (15)-(17)), from the same initial
    memory — on the training record, on the whole §5 protocol and on a history that
    also goes negative (sweeping the cells the demagnetised memory cuts in half)."""
    from hystmech.identify.preisach import fit_preisach

    v, cyc = protocol(n=3000)
    y = _noisy(preisach_truth(v))
    tr = cyc < 12
    fit = fit_preisach(v[tr], y[tr], d=0.25, initial=initial)
    el = fit.element()
    m, n = fit.grid
    assert m == pytest.approx(0.25 * n / 2) and el.continuous
    k = np.arange(v.size)
    wild = np.r_[v[tr], -0.8 * v[::3] + 0.6 * np.sin(0.37 * k[::3])]
    for h in (v[tr], v, wild):
        p = fit.predict(h)
        q = hystmech.drive(el, np.arange(h.size, dtype=float), fit.rounded(h), x0=el.x0).force
        assert np.max(np.abs(q - p)) <= 1e-10 * np.max(np.abs(p))
    np.testing.assert_array_equal(fit.predict(v[tr]), fit.fitted)
    # without rounding: the same kernel, the output within one cell's switching of it
    raw = fit.predict(v, rounded=False)
    assert np.max(np.abs(raw - fit.predict(v))) < 0.1 * np.ptp(y)
    assert np.max(np.abs(raw - fit.predict(v))) > 0


def test_identify_preisach_cli_scenario_reproduces_the_fit(tmp_path):
    """``hystmech identify preisach`` writes a scenario whose element, driven by the
    measured input (what ``hystmech compare`` does), gives the fit's predicted output."""
    import json

    from hystmech.cli import main
    from hystmech.identify.cli import identify
    from hystmech.scenario import build_element, load_scenario

    v, cyc = protocol(n=1500)
    keep = cyc < 12
    t = np.linspace(0.0, 50.0, int(keep.sum()))
    u, F = v[keep] * 1e-3, _noisy(preisach_truth(v)[keep])      # input stored in mm
    csv = tmp_path / "bend.csv"
    np.savetxt(csv, np.c_[t, 1e3 * u, F], delimiter=",", header="t,u_mm,M", comments="",
               fmt="%.17g")
    opts = ["--disp", "u_mm", "--disp-scale", "1e-3", "--force", "M"]
    out = tmp_path / "id"
    assert main(["identify", "preisach", str(csv), *opts, "--d", "3e-4", "--out", str(out)]) == 0
    el = build_element(load_scenario(str(out / "scenario.toml"))["element"])
    assert el.continuous
    res = identify("preisach", load_csv_like(csv), d=3e-4)
    pred = hystmech.drive(el, t, u).force
    assert np.max(np.abs(pred - res.predicted)) <= 1e-10 * np.max(np.abs(res.predicted))
    assert res.merit["nrmse"] < 0.01
    cmp = tmp_path / "cmp"
    assert main(["compare", str(csv), *opts, "--scenario", str(out / "scenario.toml"),
                 "--out", str(cmp)]) == 0
    m = json.loads((cmp / "summary.json").read_text())["metrics"]
    s = json.loads((out / "summary.json").read_text())["metrics"]
    assert m["rmse"] == pytest.approx(s["rmse"], rel=1e-9)
    assert main(["run", str(out / "scenario.toml"), "--out", str(tmp_path / "run")]) == 0


def load_csv_like(csv):
    from hystmech.identify.dataset import load

    return load(csv, time="t", disp="u_mm", force="M", disp_scale=1e-3)


def test_preisach_kernel_plot():
    from hystmech.identify.preisach import fit_preisach

    v, cyc = protocol(n=400)
    f = fit_preisach(v[cyc < 6], preisach_truth(v)[cyc < 6], d=1.0)
    fig = f.plot_kernel()
    assert len(fig.axes) == 3


# -- generic least squares ---------------------------------------------------------------------
def test_generic_fit_recovers_dahl_with_standard_errors():
    from hystmech.components import Dahl
    from hystmech.identify.generic import fit_element

    t = np.linspace(0, 3, 3001)
    u = 0.01 * np.sin(2 * np.pi * t)
    F = hystmech.drive(Dahl(rho=800.0, Fc=50.0), t, u).force
    ds = Dataset(t=t, u=u, force=_noisy(F))
    r = fit_element(ds, "Dahl", {"rho": (10.0, 1e4), "Fc": (1.0, 1e3)}, n_starts=3)
    assert r.params["rho"] == pytest.approx(800.0, rel=0.02)
    assert r.params["Fc"] == pytest.approx(50.0, rel=0.01)
    for k in ("rho", "Fc"):
        assert 0 < r.stderr[k] and abs(r.params[k] - (800.0 if k == "rho" else 50.0)) < 5 * r.stderr[k]
    with pytest.raises(ValueError, match="bounds of rho"):
        fit_element(ds, "Dahl", {"rho": (10.0, 1.0)})
    with pytest.raises(ValueError, match="unknown element"):
        fit_element(ds, "NoSuchLaw", {"x": (0.0, 1.0)})


def test_generic_fit_warns_when_not_converged():
    from hystmech.identify.generic import fit_element

    t = np.linspace(0, 1, 401)
    u = 0.01 * np.sin(2 * np.pi * t)
    ds = Dataset(t=t, u=u, force=30 * np.tanh(200 * u) + 1.0)
    with pytest.warns(RuntimeWarning, match="no start converged"):
        fit_element(ds, "Dahl", {"rho": (10.0, 1e4), "Fc": (1.0, 1e3)}, n_starts=1, max_nfev=2)


# -- real data (small form of the scenario) ---------------------------------------------------
def test_real_data_scenario_small(tmp_path):
    import json

    from hystmech.identify.dataset import dyke_data_dir
    from hystmech.scenario import run_scenario

    if not (dyke_data_dir() / "ranran_50.csv").exists():
        pytest.skip("Dyke (1996) data not available")
    cfg_data = {"fit": "ranran_50.csv", "validate": "ransim_u.csv", "t_max": 1.5,
                "decimate_bouc_wen": 4, "n_starts": 1}
    run_scenario("mr-damper-real-data", tmp_path, progress=lambda f, m="": None,
                 overrides={"data": cfg_data})
    m = json.loads((tmp_path / "summary.json").read_text())["metrics"]
    for k in ("viscous_dahl_nrmse_validation", "bouc_wen_nrmse_validation"):
        assert 0 < m[k] < 0.2
    assert (tmp_path / "validation_overlay.png").stat().st_size > 10_000
