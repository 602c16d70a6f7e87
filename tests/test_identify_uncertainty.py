"""Honest uncertainty (issue 30 §2), checked against independent truths: the exact
covariance of ordinary least squares under AR(1) noise, the coverage of 95 % intervals
over many seeds, the χ² law of the Ljung–Box statistic under white noise, and
identifiability of models whose null direction is known analytically."""
import warnings

import numpy as np
import pytest
from scipy.signal import lfilter

from hystmech.identify.uncertainty import analyse, cross_correlation_test, ljung_box

N, PHI, SIG = 2000, 0.9, 0.1


def _design(n=N):
    t = np.linspace(0.0, 1.0, n)
    return np.column_stack([np.ones(n), np.sin(6 * np.pi * t), np.cos(6 * np.pi * t), t])


def _ar1(rng, n=N, phi=PHI, sig=SIG):
    return sig * lfilter([1.0], [1.0, -phi], rng.standard_normal(n))


def _exact_ols_cov(X, phi=PHI, sig=SIG):
    """(XᵀX)⁻¹ Xᵀ Σ X (XᵀX)⁻¹ with the stationary AR(1) covariance Σ_ij = σ²φ^|i−j|/(1−φ²)
    (the noise starts at 0 here, so the first ~50 samples are slightly less variable:
    irrelevant at n = 2000)."""
    n = X.shape[0]
    k = np.arange(n)
    Sig = sig ** 2 / (1 - phi ** 2) * phi ** np.abs(k[:, None] - k[None, :])
    B = np.linalg.inv(X.T @ X)
    return B @ X.T @ Sig @ X @ B


def test_ar_and_hac_cover_under_ar1_noise_where_the_classic_error_undercovers():
    X = _design()
    beta = np.array([1.0, 2.0, -0.5, 0.3])
    se_true = np.sqrt(np.diag(_exact_ols_cov(X)))
    hits = {"ar": np.zeros(4), "hac": np.zeros(4), "classic": np.zeros(4)}
    se_hac = {"ar": [], "hac": []}
    seeds = 200
    for s in range(seeds):
        y = X @ beta + _ar1(np.random.default_rng(s))
        b, *_ = np.linalg.lstsq(X, y, rcond=None)
        r = X @ b - y
        for m in hits:
            u = analyse(r, X, values=b, method=m, warn=False)
            hits[m] += (u.ci[:, 0] <= beta) & (beta <= u.ci[:, 1])
            if m != "classic":
                se_hac[m].append(u.se)
    cov_classic = hits["classic"] / seeds
    # binomial sd of a 95 % coverage over 200 seeds is 1.5 %
    for m in ("ar", "hac"):
        cov = hits[m] / seeds
        assert np.all(cov >= 0.90) and np.all(cov <= 0.99), (m, cov)
        # the standard error estimates the exact OLS standard error under AR(1)
        ratio = np.mean(se_hac[m], axis=0) / se_true
        assert np.all(np.abs(ratio - 1.0) < 0.15), (m, ratio)
    assert np.all(cov_classic < 0.6), cov_classic      # white-noise SE: ~1/3 of the truth


def test_bootstrap_is_much_closer_than_classic_under_ar1_noise():
    X = _design()
    beta = np.array([1.0, 2.0, -0.5, 0.3])
    se_true = np.sqrt(np.diag(_exact_ols_cov(X)))
    se = []
    for s in range(40):
        y = X @ beta + _ar1(np.random.default_rng(s))
        b, *_ = np.linalg.lstsq(X, y, rcond=None)
        se.append(analyse(X @ b - y, X, values=b, method="bootstrap", warn=False, n_boot=200,
                          seed=s).se)
    ratio = np.mean(se, axis=0) / se_true
    assert np.all((ratio > 0.7) & (ratio < 1.2)), ratio


def test_classic_equals_textbook_ols_standard_error_under_white_noise():
    X = _design(500)
    rng = np.random.default_rng(1)
    y = X @ np.array([1.0, 2.0, -0.5, 0.3]) + 0.1 * rng.standard_normal(500)
    b, *_ = np.linalg.lstsq(X, y, rcond=None)
    r = y - X @ b
    u = analyse(r, X, values=b, method="classic", warn=False)
    ref = np.sqrt(np.diag(np.linalg.inv(X.T @ X)) * (r @ r) / (500 - 4))
    assert u.se == pytest.approx(ref, rel=1e-10)
    assert u.ci[:, 1] - u.ci[:, 0] == pytest.approx(2 * 1.959963984540054 * ref, rel=1e-10)
    assert np.allclose(np.diag(u.corr), 1.0)
    # white residuals: AR and HAC agree with the classic error to sampling accuracy
    for m in ("ar", "hac"):
        h = analyse(r, X, values=b, warn=False, method=m)
        assert np.all(np.abs(h.se / ref - 1) < 0.2), m
    assert u.whiteness["white"]


def test_ljung_box_has_its_chi2_size_on_white_noise_and_rejects_ar1():
    rej = [not ljung_box(np.random.default_rng(s).standard_normal(1000))["white"] for s in range(300)]
    assert 0.025 <= np.mean(rej) <= 0.08          # nominal 5 %, binomial sd 1.3 %
    e = lfilter([1.0], [1.0, -0.3], np.random.default_rng(0).standard_normal(1000))
    lb = ljung_box(e)
    assert not lb["white"] and lb["p_value"] < 1e-6
    # ρ_1 of an AR(1) is φ
    assert lb["acf"][1] == pytest.approx(0.3, abs=0.07)


def test_cross_correlation_finds_input_left_in_the_residuals():
    t = np.linspace(0, 10, 4000)
    u = np.sin(2 * np.pi * 0.7 * t)          # a smooth, strongly autocorrelated input
    rng = np.random.default_rng(3)
    e = 0.5 * rng.standard_normal(t.size)
    assert cross_correlation_test(u, e)["uncorrelated"]
    # coloured noise independent of u: still uncorrelated (Bartlett's variance)
    ok = [cross_correlation_test(u, lfilter([1], [1, -0.95], np.random.default_rng(s).standard_normal(t.size)))["uncorrelated"]
          for s in range(40)]
    assert np.mean(ok) >= 0.9
    leak = e + 0.1 * np.roll(u, 5)
    c = cross_correlation_test(u, leak)
    assert not c["uncorrelated"]
    # the largest cross-correlation sits at the leak's delay (5 samples)
    assert int(np.argmax(np.abs(c["ccf"]))) - c["lags"] in range(-8, 9)


def test_identifiability_names_the_product_and_the_ratio():
    # r = a·b·x − y depends on a·b only: null direction (1, −1) in log space
    x = np.linspace(0, 1, 200)
    a, b, c = 2.0, 3.0, 0.5
    J = np.column_stack([b * x, a * x, x ** 2])            # ∂r/∂(a, b, c) for r = a b x + c x² − y
    with pytest.warns(RuntimeWarning, match=r"only a\*b is determined \(a/b is not\)"):
        u = analyse(1e-3 * np.sin(40 * x), J, names=["a", "b", "c"], values=[a, b, c])
    assert np.isinf(u.se[0]) and np.isinf(u.se[1]) and np.isfinite(u.se[2])
    # r = (a/b)·x: only a/b is determined
    J = np.column_stack([x / b, -a * x / b ** 2])
    u = analyse(1e-3 * np.sin(40 * x), J, names=["a", "b"], values=[a, b], warn=False)
    assert "only a/b is determined" in u.identifiability[0]["message"]
    # a parameter without effect
    J = np.column_stack([x, np.zeros_like(x)])
    u = analyse(1e-3 * np.sin(40 * x), J, names=["k", "dead"], values=[1.0, 2.0], warn=False)
    assert u.identifiability[0]["params"] == ["dead"]
    assert np.isfinite(u.se[0]) and np.isinf(u.se[1])
    # a squared product: r = a²·b·x -> null direction (1, −2): only a²·b
    J = np.column_stack([2 * a * b * x, a * a * x])
    u = analyse(1e-3 * np.sin(40 * x), J, names=["a", "b"], values=[a, b], warn=False)
    assert "only a^2*b is determined" in u.identifiability[0]["message"]


def test_dahl_at_10_micrometres_flags_rho_times_fc():
    """Dahl with ρ·A = 0.01: F ≈ Fc·ρ·u (Ikhouane et al. §1, the linear limit of the
    exact solution of ẇ = ρ(u̇ − |u̇|w)), so only ρ·Fc is well determined. The data are
    the exact piecewise solution, not the library's integrator."""
    from hystmech.components import Dahl
    from hystmech.identify import Dataset, fit_element

    t = np.linspace(0, 3, 3001)
    u = 10e-6 * np.sin(2 * np.pi * t)
    w = _dahl_exact(u, 1e3)
    F = 50.0 * w + 0.01 * 50.0 * np.std(w) * np.random.default_rng(0).standard_normal(t.size)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        r = fit_element(Dataset(t=t, u=u, force=F), Dahl(rho=3e2, Fc=20.0),
                        {"rho": (1.0, 1e6), "Fc": (1.0, 1e4)})
    msgs = [str(m.message) for m in rec]
    assert any("only rho*Fc is well determined" in m for m in msgs), msgs
    assert "rho*Fc" in r.summary()
    # the product itself is determined to well under 1 %
    assert r.params["rho"] * r.params["Fc"] == pytest.approx(5e4, rel=5e-3)
    assert abs(r.uncertainty.corr[0, 1]) > 0.99
    # at 1 mm the loop saturates (ρ·A = 1): no warning, both within 0.5 %
    u = 1e-3 * np.sin(2 * np.pi * t)
    F = 50.0 * _dahl_exact(u, 1e3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = fit_element(Dataset(t=t, u=u, force=F), Dahl(rho=3e2, Fc=20.0),
                        {"rho": (1.0, 1e6), "Fc": (1.0, 1e4)}, rtol=1e-9)
    assert r.params["rho"] == pytest.approx(1e3, rel=5e-3)
    assert r.params["Fc"] == pytest.approx(50.0, rel=5e-3)


def _dahl_exact(u, rho, w0=0.0):
    """Exact Dahl state along a finely sampled u (piecewise linear between samples):
    w ← s + (w − s)·exp(−ρ|Δu|), s = sgn Δu."""
    w = np.empty(u.size)
    w[0] = w0
    for k in range(u.size - 1):
        du = u[k + 1] - u[k]
        s = 1.0 if du > 0 else -1.0
        w[k + 1] = s + (w[k] - s) * np.exp(-rho * abs(du)) if du != 0 else w[k]
    return w


def test_parameter_on_bound_is_named():
    X = _design(300)
    rng = np.random.default_rng(0)
    b = np.array([1.0, 2.0, -0.5, 0.3])
    r = 0.01 * rng.standard_normal(300)
    with pytest.warns(RuntimeWarning, match=r"p3 = 0.3 ends on its upper bound 0.3"):
        u = analyse(r, X, values=b, bounds=[(-5, 5)] * 3 + [(0.0, 0.3)])
    assert u.on_bound == ["p3"]


def test_summary_is_a_table_with_the_intervals_and_the_tests():
    X = _design(400)
    rng = np.random.default_rng(0)
    b = np.array([1.0, 2.0, -0.5, 0.3])
    u = analyse(0.01 * rng.standard_normal(400), X, names=["c", "s", "k", "slope"], values=b,
                inputs=X[:, 1], warn=False)
    s = u.summary()
    for name in ("c", "s", "k", "slope", "Ljung-Box", "cross-correlation", "95 % interval"):
        assert name in s
    lo, hi = u.intervals()["slope"]
    assert f"{lo:12.6g}" in s and f"{hi:12.6g}" in s
    assert u.to_dict()["params"]["s"]["ci"] == [lo2 for lo2 in u.intervals()["s"]]


def test_bad_input_is_a_value_error_naming_it():
    with pytest.raises(ValueError, match="method must be one of"):
        analyse(np.zeros(10), np.ones((10, 1)), method="magic")
    with pytest.raises(ValueError, match="jacobian must be"):
        analyse(np.zeros(10), np.ones((9, 1)))
    with pytest.raises(ValueError, match="level must be in"):
        analyse(np.zeros(10), np.ones((10, 1)), level=95)
    with pytest.raises(ValueError, match="finite"):
        analyse(np.full(10, np.nan), np.ones((10, 1)))
