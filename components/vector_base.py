"""The protocol of a two-input (vector) force element: an isotropic law whose input is
a 2-vector u [m or 1/m] (e.g. the two bending curvatures of a rod's cross-section) and
whose output is a 2-vector F [N or N·m], so that its yield surface is a circle rather
than the square of one scalar law per axis.

Kernels (numba, same trial/commit use as the scalar protocol of components/base.py):

    advance(x, u0, u1, dt, v, p, rtol)   x along the straight input segment u0 -> u1
                                         (2-vectors) travelled in dt [s] at v (2-vector)
    force(x, u, v, p, out)               out[:] = F(x, u, v) (2-vector)

A uniaxial input path (u along one fixed direction) reduces each law exactly to its
scalar counterpart (documented per law).
"""
from __future__ import annotations

import math

import numpy as np

from .base import check_finite, check_positive

__all__ = ["VectorForceElement"]


class VectorForceElement:
    """Base class of the vector (two-input) force elements: ``p``, ``x0``,
    ``n_states``, ``kind`` and the ``advance``/``force`` kernels; ``force_of`` and
    ``drive`` evaluate them from Python."""

    kind: str = "smooth"
    n_in = 2
    citation: str = ""
    advance = None
    force = None
    state_copy = None     # as components/base.py: None, hosts copy every state
    state_commit = None   # as components/base.py: None, hosts commit with state_copy

    def _setup(self, params: dict, p, x0):
        self.params = dict(params)
        self.p = np.ascontiguousarray(np.asarray(p, dtype=float).ravel())
        self.x0 = np.ascontiguousarray(np.asarray(x0, dtype=float).ravel())
        self.n_states = int(self.x0.size)

    def kernel_p(self, work: int = 0) -> np.ndarray:
        """The vector a host may pass to the kernels instead of ``p`` (components/
        base.py, kernel_p: p followed by law-specific data or work space, the same
        results; a fresh vector per call, for one loop at a time); ``p`` here."""
        return self.p

    @property
    def name(self) -> str:
        return type(self).__name__

    def force_of(self, x, u, v) -> np.ndarray:
        """F [N or N·m] (2-vector) at state x, input u, rate v."""
        out = np.empty(2)
        type(self).force(np.ascontiguousarray(x, dtype=float), np.asarray(u, float),
                         np.asarray(v, float), self.p, out)
        return out

    def drive(self, t, U, *, rtol: float = 1e-10):
        """Drive the law along the piecewise-linear input path U (n × 2) sampled at
        times t [s] from x0; returns (F (n × 2), X (n × n_states))."""
        t = np.asarray(t, dtype=float)
        U = np.asarray(U, dtype=float)
        if U.ndim != 2 or U.shape[1] != 2 or U.shape[0] != t.size or t.size < 1:
            raise ValueError("U must be an (n, 2) array sampled at the n times t")
        if not (np.all(np.isfinite(U)) and np.all(np.isfinite(t)) and np.all(np.diff(t) > 0)):
            raise ValueError("t must be finite and increasing, U finite")
        x = self.x0.copy()
        F = np.empty_like(U)
        X = np.empty((t.size, self.n_states))
        adv, frc = type(self).advance, type(self).force
        p = self.kernel_p(t.size)
        # the first sample's rate: the first segment's slope (as hystmech.drive)
        v = (U[1] - U[0]) / (t[1] - t[0]) if t.size > 1 else np.zeros(2)
        frc(x, U[0], v, p, F[0])
        X[0] = x
        for i in range(1, t.size):
            dt = t[i] - t[i - 1]
            v = (U[i] - U[i - 1]) / dt
            adv(x, U[i - 1], U[i], dt, v, p, rtol)
            frc(x, U[i], v, p, F[i])
            X[i] = x
        return F, X

    def __repr__(self):
        return f"{self.name}({', '.join(f'{k}={v!r}' for k, v in self.params.items())})"


def check_bouc_wen_2d(A, beta, gamma, k_el, z0, n=2.0, slack=0.0):
    """Validated (A, beta, gamma, k_el, z) of a biaxial Bouc-Wen law of the bounded class:
    A [N/m] > 0, beta >= 0, beta + gamma > 0, k_el [N/m] finite, z0 a finite 2-vector [N]
    inside the yield circle |z| <= (A/(beta + gamma))^(1/n) (times 1 + slack); ValueError
    naming the parameter and its range otherwise."""
    A = check_positive("A", A)
    beta = check_finite("beta", beta)
    gamma = check_finite("gamma", gamma)
    k_el = check_finite("k_el", k_el)
    if beta < 0.0:
        raise ValueError(f"beta must be in [0, inf) (got {beta!r})")
    if beta + gamma <= 0.0:
        raise ValueError(f"gamma must be in (-beta, inf) = ({-beta:g}, inf) (got "
                         f"{gamma!r}): the bounded class")
    z = np.asarray(z0, dtype=float).ravel()
    if z.size != 2 or not np.all(np.isfinite(z)):
        raise ValueError(f"z0 must be a finite 2-vector (got {z0!r})")
    r = A / (beta + gamma)
    zmax = math.sqrt(r) if n == 2.0 else r ** (1.0 / n)   # sqrt: exact at the closed end
    if np.hypot(*z) > zmax * (1.0 + slack):
        raise ValueError(f"z0 must lie in the circle |z0| <= {zmax:g} (got "
                         f"|z0| = {np.hypot(*z):g})")
    return A, beta, gamma, k_el, z
