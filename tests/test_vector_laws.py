"""The isotropic two-input laws (components.masing_vector.MasingVector,
components.bouc_wen_biaxial.BoucWenBiaxial) against their scalar counterparts on
planar paths, the closed-form steady state of the vector Masing law on a circular
orbit, rate independence, non-negative dissipation per cycle, and bad input."""
import numpy as np
import pytest

import hystmech
from hystmech.components import get_element_class
from hystmech.components.bouc_wen_biaxial import BoucWenBiaxial
from hystmech.components.masing_vector import MasingVector

t = np.linspace(0.0, 4.0, 801)
u = 0.05 * np.sin(2 * np.pi * t) * np.exp(-0.2 * t)


@pytest.mark.parametrize("angle", [0.0, np.pi / 2, 0.7, -2.0])
def test_planar_paths_reduce_to_the_scalar_laws(angle):
    """Along any fixed direction e the vector laws are their scalar laws along e:
    MasingVector = Masing (F0 = 0) to 1e-15 of the force scale, BoucWenBiaxial =
    BoucWen(n = 2) to 1e-12, both at the same rtol; the orthogonal force is zero
    to rounding (1e-13)."""
    e = np.array([np.cos(angle), np.sin(angle)])
    n = np.array([-e[1], e[0]])
    pairs = [(get_element_class("Masing")(k=100.0, k0=5.0, alpha=2.0, c=0.3),
              MasingVector(k=100.0, k0=5.0, alpha=2.0, c=0.3), 1e-15),
             (get_element_class("BoucWen")(A=100.0, beta=2000.0, gamma=500.0, n=2, k_el=3.0),
              BoucWenBiaxial(A=100.0, beta=2000.0, gamma=500.0, k_el=3.0), 1e-12)]
    for scalar, vec, tol in pairs:
        Fs = hystmech.drive(scalar, t, u, rtol=1e-12).force
        F, _ = vec.drive(t, np.outer(u, e), rtol=1e-12)
        scale = np.max(np.abs(Fs))
        assert np.max(np.abs(F @ e - Fs)) <= tol * scale, vec
        assert np.max(np.abs(F @ n)) <= 1e-13 * scale


def test_masing_vector_circular_orbit_closed_form():
    """u = R(cos ωt, sin ωt), R > η = α/k, k0 = c = 0: after the transient (which decays
    like exp(−s/η) in the arc length s) |F| = α exactly and F leads u by arccos(η/R);
    the input polygon's chords (10⁴ per revolution) put the angle within 1e-6."""
    k, alpha, R = 100.0, 2.0, 0.05
    eta = alpha / k
    tt = np.linspace(0.0, 3.0, 30001)
    U = R * np.c_[np.cos(2 * np.pi * tt), np.sin(2 * np.pi * tt)]
    F, X = MasingVector(k=k, alpha=alpha).drive(tt, U)
    for i in (-1, -2501, -5001):
        assert abs(np.hypot(*F[i]) - alpha) <= 1e-12 * alpha
        lead = np.arctan2(U[i, 0] * F[i, 1] - U[i, 1] * F[i, 0], U[i] @ F[i])
        assert abs(lead - np.arccos(eta / R)) <= 1e-6, lead


def test_rate_independence_and_dissipation():
    """Both laws depend on the path only (the same path at another speed gives the same
    forces to rounding) and dissipate a non-negative work ∮F·du over a closed
    non-proportional cycle (a square)."""
    sq = np.array([[0, 0], [0.04, 0], [0.04, 0.04], [0, 0.04], [0, 0]], dtype=float)
    U = np.vstack([np.linspace(sq[j], sq[j + 1], 50, endpoint=False) for j in range(4)]
                  + [sq[-1:]])
    U = np.vstack([U, U[1:], U[1:]])
    for law in (MasingVector(k=100.0, alpha=2.0), BoucWenBiaxial(A=100.0, beta=2000.0,
                                                                  gamma=500.0)):
        t1 = np.arange(U.shape[0]) * 0.01
        F1, _ = law.drive(t1, U)
        F2, _ = law.drive(t1 * 7.3, U)
        assert np.max(np.abs(F1 - F2)) <= 1e-12 * np.max(np.abs(F1))
        dU = np.diff(U, axis=0)
        W = np.sum(0.5 * (F1[1:] + F1[:-1]) * dU, axis=1)
        n = (U.shape[0] - 1) // 3
        for c in range(3):
            assert W[c * n:(c + 1) * n].sum() > 0.0


def test_bad_input():
    with pytest.raises(ValueError, match="alpha"):
        MasingVector(k=1.0, alpha=0.0)
    with pytest.raises(ValueError, match="w0 must lie in the disk"):
        MasingVector(k=1.0, alpha=1.0, w0=(1.0, 1.0))
    with pytest.raises(ValueError, match="gamma must be in"):
        BoucWenBiaxial(A=1.0, beta=1.0, gamma=-2.0)
    with pytest.raises(ValueError, match="U must be an"):
        MasingVector(k=1.0, alpha=1.0).drive([0.0, 1.0], [0.0, 1.0])
    with pytest.raises(ValueError, match="finite"):
        MasingVector(k=1.0, alpha=1.0).drive([0.0, 1.0], [[0.0, 0.0], [np.nan, 0.0]])
