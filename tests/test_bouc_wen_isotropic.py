"""The truly isotropic biaxial Bouc-Wen law (components/bouc_wen_isotropic.py, Harvey &
Gavin 2014) against independent truths: the uniaxial BoucWen on planar paths, rotation
equivariance (an L-shaped path and the same path rotated by 45°, a random path rotated
by an arbitrary angle), the closed-form steady state on a circular orbit (derived in the
module docstring from the law's equation), rate independence and dissipation; and the
frame dependence of Park-Wen-Ang's BoucWenBiaxial that this law removes."""
import numpy as np
import pytest

import hystmech
from hystmech.components import BoucWenIsotropic, get_element_class
from hystmech.components.bouc_wen_biaxial import BoucWenBiaxial

A, BETA, GAMMA = 100.0, 2000.0, 500.0


def _rot(th):
    c, s = np.cos(th), np.sin(th)
    return np.array([[c, -s], [s, c]])


@pytest.mark.parametrize("n", [1.0, 2.0, 3.5, 0.6])
@pytest.mark.parametrize("angle", [0.0, 0.7, -2.0])
def test_planar_paths_are_the_uniaxial_bouc_wen(n, angle):
    """Along a fixed direction e the law is BoucWen(A, β, γ, n, k_el) along e to 1e-12
    of the force scale (same rtol); the orthogonal force is zero to 1e-12 (the rounding of u·e)."""
    t = np.linspace(0.0, 4.0, 801)
    u = 0.05 * np.sin(2 * np.pi * t) * np.exp(-0.2 * t)
    e = np.array([np.cos(angle), np.sin(angle)])
    beta, gamma = BETA ** (n / 2), GAMMA ** (n / 2)  # keep z* of the order of 0.1-1
    Fs = hystmech.drive(get_element_class("BoucWen")(A=A, beta=beta, gamma=gamma, n=n,
                                                     k_el=3.0), t, u, rtol=1e-12).force
    F, _ = BoucWenIsotropic(A=A, beta=beta, gamma=gamma, n=n, k_el=3.0).drive(
        t, np.outer(u, e), rtol=1e-12)
    scale = np.max(np.abs(Fs))
    assert np.max(np.abs(F @ e - Fs)) <= 1e-12 * scale
    assert np.max(np.abs(F @ np.array([-e[1], e[0]]))) <= 1e-12 * scale


def test_nearly_planar_path_through_the_integrator():
    """A state 1e-9·z* off the line of motion takes the 2-D integrator, not the scalar
    map: it still follows the uniaxial law to 1e-8 of z* (the offset decays)."""
    t = np.linspace(0.0, 2.0, 401)
    u = 0.05 * np.sin(2 * np.pi * t)
    law = BoucWenIsotropic(A=A, beta=BETA, gamma=GAMMA, n=3.0)
    zs = law.z_max()
    off = BoucWenIsotropic(A=A, beta=BETA, gamma=GAMMA, n=3.0, z0=(0.0, 1e-9 * zs))
    F0, _ = law.drive(t, np.c_[u, 0 * u], rtol=1e-11)
    F1, _ = off.drive(t, np.c_[u, 0 * u], rtol=1e-11)
    assert np.max(np.abs(F1 - F0)) <= 1e-8 * zs
    assert np.max(np.abs(F0)) > 0.5 * zs


def _L_path(m=400):
    leg1 = np.c_[np.linspace(0, 0.03, m), np.zeros(m)]
    leg2 = np.c_[np.full(m, 0.03), np.linspace(0, 0.03, m)]
    leg3 = np.c_[np.linspace(0.03, -0.02, m), np.full(m, 0.03)]
    return np.vstack([leg1, leg2[1:], leg3[1:]])


@pytest.mark.parametrize("n", [2.0, 1.5, 4.0])
def test_rotated_L_path_gives_the_same_force_magnitude(n):
    """An L-shaped path (with a third leg back across) and the same path rotated by 45°:
    the |F| histories agree to 1e-6 of max|F| and F rotates with the path (k_el ≠ 0).
    Park-Wen-Ang's BoucWenBiaxial (n = 2) fails the same check by more than 1e-2."""
    U = _L_path()
    t = np.arange(U.shape[0]) * 1e-3
    R = _rot(np.pi / 4)
    law = BoucWenIsotropic(A=A, beta=BETA ** (n / 2), gamma=GAMMA ** (n / 2), n=n, k_el=5.0)
    F, _ = law.drive(t, U)
    Fr, _ = law.drive(t, U @ R.T)
    m = np.hypot(*F.T)
    assert np.max(np.abs(np.hypot(*Fr.T) - m)) <= 1e-6 * m.max()
    assert np.max(np.abs(Fr - F @ R.T)) <= 1e-6 * m.max()
    if n == 2.0:
        pwa = BoucWenBiaxial(A=A, beta=BETA, gamma=GAMMA, k_el=5.0)
        G, _ = pwa.drive(t, U)
        Gr, _ = pwa.drive(t, U @ R.T)
        assert np.max(np.abs(np.hypot(*Gr.T) - np.hypot(*G.T))) > 1e-2 * m.max()


def test_random_path_rotation_equivariance():
    """A random-walk input path rotated by 1.1 rad gives the rotated force path
    (1e-7 of max|F|, n = 2.5)."""
    rng = np.random.default_rng(3)
    U = np.cumsum(rng.normal(scale=2e-3, size=(600, 2)), axis=0)
    t = np.arange(U.shape[0]) * 1e-3
    law = BoucWenIsotropic(A=A, beta=300.0, gamma=100.0, n=2.5, k_el=1.0)
    R = _rot(1.1)
    F, _ = law.drive(t, U)
    Fr, _ = law.drive(t, U @ R.T)
    assert np.max(np.abs(Fr - F @ R.T)) <= 1e-7 * np.max(np.hypot(*F.T))


@pytest.mark.parametrize("n", [2.0, 1.3, 5.0])
def test_circular_orbit_closed_form(n):
    """u = R(cos ωt, sin ωt), R = 4 r*/A: after the transient |z| = r* = (A/(β+γ))^(1/n)
    and z leads u by arccos(r*/(A R)) (module docstring), so
    |F| = sqrt(k_el² R² + r*² + 2 k_el r*²/A) constant: over the last revolution |F|
    stays within 1e-6 of it; the lead angle within 1e-5 rad (input chords, 10⁴ per
    revolution). Park-Wen-Ang's law ripples by more than 1e-3 on the same orbit."""
    beta, gamma, k_el = BETA ** (n / 2), GAMMA ** (n / 2), 7.0
    law = BoucWenIsotropic(A=A, beta=beta, gamma=gamma, n=n, k_el=k_el)
    rs = law.z_max()
    R = 4.0 * rs / A
    tt = np.linspace(0.0, 3.0, 30001)
    U = R * np.c_[np.cos(2 * np.pi * tt), np.sin(2 * np.pi * tt)]
    F, X = law.drive(tt, U)
    last = slice(-10001, None)
    Fm = np.sqrt(k_el ** 2 * R ** 2 + rs ** 2 + 2 * k_el * rs ** 2 / A)
    m = np.hypot(*F[last].T)
    assert np.max(np.abs(m - Fm)) <= 1e-6 * Fm
    assert np.max(np.abs(np.hypot(*X[last].T) - rs)) <= 1e-6 * rs
    Z, Uu = X[last], U[last]
    lead = np.arctan2(Uu[:, 0] * Z[:, 1] - Uu[:, 1] * Z[:, 0], np.sum(Uu * Z, axis=1))
    assert np.max(np.abs(lead - np.arccos(rs / (A * R)))) <= 1e-5
    if n == 2.0:
        G, _ = BoucWenBiaxial(A=A, beta=beta, gamma=gamma, k_el=k_el).drive(tt, U)
        g = np.hypot(*G[last].T)
        assert g.max() - g.min() > 1e-3 * g.max()


def test_rate_independence_and_dissipation():
    """The same path at another speed gives the same forces (rounding); the work ∮F·du
    over a closed square cycle is positive for every cycle."""
    sq = np.array([[0, 0], [0.04, 0], [0.04, 0.04], [0, 0.04], [0, 0]], dtype=float)
    U = np.vstack([np.linspace(sq[j], sq[j + 1], 50, endpoint=False) for j in range(4)]
                  + [sq[-1:]])
    U = np.vstack([U, U[1:], U[1:]])
    law = BoucWenIsotropic(A=A, beta=BETA, gamma=GAMMA, n=1.7)
    t1 = np.arange(U.shape[0]) * 0.01
    F1, _ = law.drive(t1, U)
    F2, _ = law.drive(t1 * 7.3, U)
    assert np.max(np.abs(F1 - F2)) <= 1e-12 * np.max(np.abs(F1))
    W = np.sum(0.5 * (F1[1:] + F1[:-1]) * np.diff(U, axis=0), axis=1)
    k = (U.shape[0] - 1) // 3
    for c in range(3):
        assert W[c * k:(c + 1) * k].sum() > 0.0


def test_bad_input():
    with pytest.raises(ValueError, match="n must be in"):
        BoucWenIsotropic(A=1.0, beta=1.0, gamma=0.0, n=0.0)
    with pytest.raises(ValueError, match="gamma must be in"):
        BoucWenIsotropic(A=1.0, beta=1.0, gamma=-2.0, n=2.0)
    with pytest.raises(ValueError, match="beta must be in"):
        BoucWenIsotropic(A=1.0, beta=-1.0, gamma=2.0, n=2.0)
    with pytest.raises(ValueError, match="z0 must lie in the circle"):
        BoucWenIsotropic(A=1.0, beta=1.0, gamma=0.0, n=2.0, z0=(1.0, 1.0))
    with pytest.raises(ValueError, match="A must be a finite"):
        BoucWenIsotropic(A=float("nan"), beta=1.0, gamma=0.0, n=2.0)


@pytest.mark.parametrize("beta, gamma", [(2000.0, 500.0), (500.0, 2000.0), (1000.0, 1000.0),
                                         (2500.0, -500.0)])
def test_n2_segment_closed_form_against_scipy(beta, gamma):
    """n = 2 takes a closed form per segment (no integrator): random states inside the
    yield circle, random directions and lengths (short to many yield strains, a < 0
    rising through 0 included) against scipy's DOP853 on dz/ds = A·e − (β|z·e| + γ z·e)·z
    at rtol 1e-12 (the law's equation, integrated independently): 1e-9 of r*."""
    from scipy.integrate import solve_ivp

    law = BoucWenIsotropic(A=A, beta=beta, gamma=gamma, n=2.0)
    rs = law.z_max()
    p = law.kernel_p()
    rng = np.random.default_rng(3)
    worst = 0.0
    for _ in range(60):
        r, th = rs * np.sqrt(rng.uniform(0.0, 0.999)), rng.uniform(-np.pi, np.pi)
        z0 = np.array([r * np.cos(th), r * np.sin(th)])
        ph = rng.uniform(-np.pi, np.pi)
        e = np.array([np.cos(ph), np.sin(ph)])
        L = (rs / A) * 10.0 ** rng.uniform(-4.0, 1.0)

        def f(s, z):
            ze = z @ e
            return A * e - (beta * abs(ze) + gamma * ze) * z

        ref = solve_ivp(f, (0.0, L), z0, method="DOP853", rtol=1e-12, atol=1e-14 * rs).y[:, -1]
        x = z0.copy()
        u0 = np.array([0.3, -0.2])
        type(law).advance(x, u0, u0 + L * e, 1.0, L * e, p, 1e-8)
        worst = max(worst, np.max(np.abs(x - ref)))
    assert worst <= 1e-9 * rs
