"""The projection-consistent Jacobian of the projection scheme's period map (Masing,
Maxwell-slip): Bastien et al. (2007), eqs. (A.7)-(A.9), differentiated step by step
(systems/periodic/monodromy.py, ProjectionMap), checked against finite differences of
the same discrete map, perturbation decay of long runs, and the closed-form multipliers
of a stuck (linear) slider."""
import math

import numpy as np
import pytest

from hystmech.components import Masing, MaxwellSlip
from hystmech.systems import Assembly, Harmonic, simulate
from hystmech.systems.periodic.monodromy import ProjectionMap
from hystmech.systems.periodic.shooting import Shooter, periodic_orbit

H = 1e-3        # projection step [s]; T = 1 s is then exactly 1000 steps


def masing_rig(F, alpha=1.0, c=0.05, Om=2 * math.pi):
    a = Assembly()
    a.add_dof("x", mass=1.0)
    a.add_element("m", Masing(k=10.0, k0=1.0, alpha=alpha, c=c), "x")
    a.add_force("x", Harmonic(0.0, F, Om, 0.0))
    return a


def maxwell_rig():
    a = Assembly()
    a.add_dof("x", mass=1.0)
    a.add_element("s", MaxwellSlip(k=[5.0, 5.0], delta=[0.05, 0.2]), "x")
    a.add_spring("x", "ground", k=1.0)
    a.add_damper("x", "ground", c=0.05)
    a.add_force("x", Harmonic(0.0, 1.0, 2.0, 0.0))
    return a


@pytest.mark.parametrize("make, y", [(lambda: masing_rig(3.0), [0.1, -1.0, 0.02]),
                                     (maxwell_rig, [0.05, 0.3, 0.01, -0.1])])
def test_exact_jacobian_equals_finite_differences_of_the_same_map(make, y):
    # the discrete map is piecewise affine in y (Euler step + clip): central differences
    # inside one piece are exact up to round-off, so their error falls with eps to the
    # round-off floor ~1e-16/eps, and is far larger once eps crosses a clamp switch
    a = make()
    sh = Shooter(a, options=dict(h=H))
    y = np.array(y)
    fy, M = ProjectionMap(a, sh.span, 0.0, h=H).flow_monodromy(y)
    assert np.allclose(fy, sh.flow(y), rtol=0, atol=1e-12)
    err = {}
    for eps in (1e-5, 1e-6, 1e-7, 1e-8):
        D = np.empty_like(M)
        for j in range(y.size):
            e = np.zeros(y.size)
            e[j] = eps
            D[:, j] = (sh.flow(y + e) - sh.flow(y - e)) / (2 * eps)
        err[eps] = np.abs(D - M).max() / np.abs(M).max()
    assert err[1e-6] < 1e-8 and err[1e-7] < 1e-7 and err[1e-8] < 1e-6, err
    # round-off regime: the difference grows as eps shrinks (an FD, not a copy of M)
    assert err[1e-8] > err[1e-6]


def test_multipliers_equal_perturbation_decay_of_long_runs():
    a = masing_rig(3.0)
    o = periodic_orbit(a, options=dict(h=H))
    assert o.monodromy_source == "projection-jacobian" and o.monodromy.shape == (3, 3)
    mu = float(np.abs(o.multipliers).max())
    assert 0.2 < mu < 0.95
    # a slightly perturbed orbit and the orbit itself, 14 periods by one long run each
    T = 1.0
    n = 14
    t0 = o.t0           # the section shooting chose (off velocity reversals)
    te = t0 + np.arange(n + 1) * T
    d0 = 1e-7 * np.array([1.0, -2.0, 0.0])
    ra = simulate(a, (t0, t0 + n * T), x0=o.y0, method="projection", h=H, t_eval=te)
    rb = simulate(a, (t0, t0 + n * T), x0=o.y0 + d0, method="projection", h=H, t_eval=te)
    d = rb.y - ra.y
    # the deviation is the linear map's: d_k = M^k d_0 (the map is piecewise affine)
    Mk = np.eye(3)
    for k in range(1, 9):
        Mk = o.monodromy @ Mk
        assert np.linalg.norm(d[k] - Mk @ d0) < 1e-5 * np.linalg.norm(d[k])
    # decay rate per period over the last 10 periods
    rate = (np.linalg.norm(d[n]) / np.linalg.norm(d[n - 10])) ** 0.1
    assert rate == pytest.approx(mu, rel=2e-3)


def test_stuck_slider_neutral_multiplier_is_exactly_one():
    # alpha large: the slider never slips; the rig is the linear system ẋ = v,
    # m·v̇ = F(t) − k0·x − k·w − c·v, ẇ = v, and (A.9) is explicit Euler on it: the
    # multipliers of one period are the eigenvalues of (I + h·A)^n, one of them the
    # stuck slider's neutral μ = 1 (every offset of w is another periodic orbit)
    k, k0, c = 10.0, 1.0, 0.05
    a = masing_rig(0.5, alpha=100.0)
    sh = Shooter(a, options=dict(h=H))
    _, M = ProjectionMap(a, sh.span, 0.0, h=H).flow_monodromy(np.zeros(3))
    A = np.array([[0.0, 1.0, 0.0], [-k0, -c, -k], [0.0, 1.0, 0.0]])
    ref = np.linalg.matrix_power(np.eye(3) + H * A, 1000)
    assert np.abs(M - ref).max() < 1e-11
    mu = np.linalg.eigvals(M)
    assert np.min(np.abs(mu - 1.0)) < 1e-12
    o = periodic_orbit(a, options=dict(h=H))
    assert o.monodromy_source == "projection-jacobian" and o.shooter.last_n_neutral == 1
    mu_ref = np.linalg.eigvals(ref)
    mu_ref = mu_ref[np.argsort(np.abs(mu_ref - 1.0))[1:]]
    assert np.sort_complex(o.multipliers) == pytest.approx(np.sort_complex(mu_ref), abs=1e-10)
