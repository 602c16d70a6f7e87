"""Bouc-Wen hysteresis with a linear elastic part.

    ż = A u̇ − β |u̇| |z|^(n−1) z − γ u̇ |z|^n,    F = k_el u + z     (z in newtons)

Not in the source papers, but the field's most used law; the Dahl model is its special
case n = 1, β = ρ, γ = 0, A = ρ·Fc (then z = Fc·w; Ikhouane, Mañosa & Pujol, §1).

Integration. With the arc length s = |u̇|·t and σ = sgn(u̇) (constant on a segment),
dz/ds = σA − β sgn(z)|z|^n − σγ|z|^n is an autonomous scalar ODE. For the bounded
class used here (A > 0, β > 0, −β < γ ≤ β) its right-hand side is non-increasing in
z with the single zero z* = σ(A/(β + γ))^(1/n): z moves monotonically to z* and
never passes it. modified_dahl.power_law_advance integrates this family exactly
across z = 0 (not Lipschitz for n < 1) and with adaptive Dormand-Prince steps
elsewhere, stopping at z* where a step would overshoot.
"""
import math

import numpy as np
from numba import njit

from .base import ForceElement, Param, check_finite, check_positive, check_range
from .modified_dahl import power_law_advance, spow

# p = [A, beta, gamma, n, k_el]


@njit(cache=False)  # calls power_law_advance: see modified_dahl._NOCACHE
def bouc_wen_advance(x, u0, u1, dt, v, p, rtol):
    A, beta, gamma, n = p[0], p[1], p[2], p[3]
    if v == 0.0:
        return
    sg = 1.0 if v > 0.0 else -1.0
    scale = max((A / (beta + gamma)) ** (1.0 / n), abs(x[0]))
    x[0] = power_law_advance(x[0], abs(v) * dt, sg * A, beta, sg * gamma, n, rtol, scale)


@njit(cache=True)
def bouc_wen_rate(x, u, v, p, out):
    z, n = x[0], p[3]
    out[0] = p[0] * v - p[1] * abs(v) * spow(z, n) - p[2] * v * abs(z) ** n


@njit(cache=True)
def bouc_wen_force(x, u, v, p):
    return p[4] * u + x[0]


@njit(cache=True)
def bouc_wen_jac(x, u, v, p, J):
    A, beta, gamma, n = p[0], p[1], p[2], p[3]
    z = x[0]
    # d|z|^n/d|z| = n|z|^(n−1) is infinite at z = 0 for n < 1; |z| is floored at
    # 1e-6·z* so implicit solvers get a finite, large stiffness there (z crosses 0
    # with the finite speed A|v|, so only Newton's convergence rate is affected).
    az = abs(z)
    if n < 1.0:
        az = max(az, 1e-6 * (A / (beta + gamma)) ** (1.0 / n))
    dn = n * az ** (n - 1.0) if (n != 1.0) else 1.0
    sz = 1.0 if z > 0.0 else (-1.0 if z < 0.0 else 0.0)
    sv = 1.0 if v > 0.0 else (-1.0 if v < 0.0 else 0.0)
    J[0, 0] = -(beta * abs(v) + gamma * v * sz) * dn
    J[0, 1] = 0.0
    J[0, 2] = A - beta * sv * spow(z, n) - gamma * abs(z) ** n
    J[1, 0] = 1.0
    J[1, 1] = p[4]
    J[1, 2] = 0.0


@njit(cache=True)
def bouc_wen_slope(x, u, v, p):
    """dF/du = k_el + dz/du on the branch of direction sgn(v) (increasing for v = 0)."""
    z, n = x[0], p[3]
    sv = -1.0 if v < 0.0 else 1.0
    return p[4] + p[0] - p[1] * sv * spow(z, n) - p[2] * abs(z) ** n


class BoucWen(ForceElement):
    """Bouc-Wen law ż = A·u̇ − β·|u̇|·|z|^(n−1)·z − γ·u̇·|z|^n, F = k_el·u + z.

    A [N/m] > 0, beta [1/(m·N^(n−1))] > 0, gamma (same unit) in (−beta, beta],
    n [-] > 0 (n < 1 allowed: the right-hand side is then not Lipschitz at z = 0, the
    integration handles it), k_el [N/m] finite, z0 [N] finite. On a long monotone
    branch z tends to ±(A/(β + γ))^(1/n). The restriction β > 0, |γ| ≤ β (γ ≠ −β)
    is the class of bounded, physically consistent Bouc-Wen loops.
    Dahl(rho, Fc) = BoucWen(A=rho·Fc, beta=rho, gamma=0, n=1).
    """

    kind = "smooth"
    param_info = (Param("A", "N/m", "> 0"), Param("beta", "1/(m.N^(n-1))", "> 0"),
                  Param("gamma", "1/(m.N^(n-1))", "in (-beta, beta]"),
                  Param("n", "1", "> 0"), Param("k_el", "N/m"), Param("z0", "N"))
    state_names = ("z",)
    citation = "Bouc-Wen model (Dahl as the case n = 1)"

    advance = staticmethod(bouc_wen_advance)
    force = staticmethod(bouc_wen_force)
    rate = staticmethod(bouc_wen_rate)
    jac = staticmethod(bouc_wen_jac)
    slope = staticmethod(bouc_wen_slope)

    def __init__(self, *, A, beta, gamma, n, k_el=0.0, z0=0.0):
        A = check_positive("A", A)
        beta = check_positive("beta", beta)
        gamma = check_range("gamma", gamma, -beta, beta, lo_open=True)
        n = check_positive("n", n)
        k_el = check_finite("k_el", k_el)
        z0 = check_finite("z0", z0)
        self._setup(dict(A=A, beta=beta, gamma=gamma, n=n, k_el=k_el, z0=z0),
                    [A, beta, gamma, n, k_el], [z0])
        self.x_scale = np.array([max(self.z_max(), abs(z0))])

    def z_max(self) -> float:
        """(A/(β + γ))^(1/n) [N]: the value z tends to on a long increasing branch."""
        p = self.params
        return math.pow(p["A"] / (p["beta"] + p["gamma"]), 1.0 / p["n"])
