"""Bouc-Wen hysteresis with a linear elastic part.

    ż = A u̇ − β |u̇| |z|^(n−1) z − γ u̇ |z|^n,    F = k_el u + z     (z in newtons)

Not in the source papers, but the field's most used law; the Dahl model is its special
case n = 1, β = ρ, γ = 0, A = ρ·Fc (then z = Fc·w; Ikhouane, Mañosa & Pujol, §1).

Classes (σ = sgn u̇ constant on a segment, s = |u̇|·t the arc length):
dz/ds = σ(A − (β + γ)|z|^n) while z moves away from 0 ("ahead", sgn z = σ) and
dz/ds = σ(A + (β − γ)|z|^n) while z returns towards 0 ("behind"). Hence
  - bounded (softening) class, β + γ > 0 and β ≥ 0: z stays within
    ±max(|z0|, z*), z* = (A/(β + γ))^(1/n) (γ ≤ β: every z0; γ > β additionally
    needs |z0| below the unstable point (A/(γ − β))^(1/n) of the return branch when
    n > 1; Ikhouane, Mañosa & Rodellar's classes I-II of the Bouc-Wen model);
  - hardening class, β + γ < 0 (e.g. the Noël & Schoukens benchmark, γ < −β):
    on loading z grows like e^{|β+γ| s} (n = 1) or a power of s (n < 1), finite
    for every finite input, bounded for bounded inputs with reversals; n > 1 would
    make z blow up at a finite displacement (∫dz/(A + |β+γ||z|^n) < ∞): refused;
  - β + γ = 0: linear growth on loading (z = z0 + σA s); β < 0 with n > 1 lets the
    return branch blow up: refused.
The constructor refuses exactly the ill-posed sets (n > 1 with β + γ < 0, or β < 0,
or with |z0| beyond the return branch's unstable point).

Integration. For n = 1 the segment map is the closed-form exponential of
modified_dahl.linear_law_advance (one switch at z = 0). Otherwise
power_law_map.power_law_advance solves the closed-form arc-length integral of
dz/ds = σA − β sgn(z)|z|^n − σγ|z|^n (an incomplete beta function of |z|^n) for z
at the segment's length: the switch at z = 0 (not Lipschitz for n < 1) at its
exact arc length, z* approached to rounding, one to three series per sample
whatever the input's roughness or amplitude; a large n with |z0| far beyond z*
(|z0|^n past the largest double) falls back to z* through the closed-form tail of
the integral.
"""
import math

import numpy as np
from numba import njit

from .base import ForceElement, Param, check_finite, check_positive, check_range
from .modified_dahl import linear_law_advance, spow
from .power_law_map import power_law_advance
from .power_law_table import memo_key, table_advance, table_kernel_p

# p = [A, beta, gamma, n, k_el]


@njit(cache=True)
def bouc_wen_advance(x, u0, u1, dt, v, p, rtol):
    A, beta, gamma, n = p[0], p[1], p[2], p[3]
    sg = 1.0 if v > 0.0 else -1.0
    # v = 0 needs no test (the maps of arc length 0 are the identity): a conditional
    # update of x costs a host's loop far more than the map itself
    y = x[0]
    L = abs(v) * dt
    if n == 1.0:
        z = linear_law_advance(y, L, sg * A, beta, sg * gamma)
    else:
        z = np.nan
        if p.size > 5:
            # kernel_p: the arc-length tables of n after the parameters; z is the key
            # of the memo of its arc-length coordinate
            z = table_advance(y, L, sg * A, beta, sg * gamma, n, rtol, p, 5, y, 0.0)
            memo_key(p, 5, z, 0.0)
        if z != z:
            z = power_law_advance(y, L, sg * A, beta, sg * gamma, n, rtol, 0.0)
    x[0] = z


@njit(cache=True)
def bouc_wen1_advance(x, u0, u1, dt, v, p, rtol):
    """``advance`` of a BoucWen with n = 1 (the constructor picks it): the closed-form
    map alone. The same result as bouc_wen_advance; without its n != 1 branch a host's
    loop stays small enough to keep the expm1 of the next sample off the z chain
    (drive(BoucWen n = 1) about 60 -> 80 M samples/s)."""
    sg = 1.0 if v > 0.0 else -1.0
    x[0] = linear_law_advance(x[0], abs(v) * dt, sg * p[0], p[1], sg * p[2])


@njit(cache=True)
def bouc_wen_zscale(A, beta, gamma, n):
    """The natural size of z [N]: z* = (A/(β + γ))^(1/n) in the bounded class, else
    the size (A/|β − γ|)^(1/n) at which the return branch's nonlinearity equals A,
    else (β = γ = 0, z = A u) the value after 1 m, A."""
    if beta + gamma > 0.0:
        return (A / (beta + gamma)) ** (1.0 / n)
    if beta != gamma:
        return (A / abs(beta - gamma)) ** (1.0 / n)
    return A


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
        az = max(az, 1e-6 * bouc_wen_zscale(A, beta, gamma, n))
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
def bouc_wen_pjac(x, u, v, p, Jp):
    """∂(ż, F)/∂p for p = [A, β, γ, n, k_el] (rows ż, F), the parameter Jacobian of the
    forward sensitivity equations (identify/assembly.py): ∂ż/∂A = u̇,
    ∂ż/∂β = −|u̇| sgn(z)|z|^n, ∂ż/∂γ = −u̇ |z|^n, ∂ż/∂n = (ż − A u̇)·ln|z| (0 at z = 0),
    ∂F/∂k_el = u."""
    z, n = x[0], p[3]
    szn = spow(z, n)
    azn = abs(z) ** n
    lz = math.log(abs(z)) if z != 0.0 else 0.0
    Jp[0, 0] = v
    Jp[0, 1] = -abs(v) * szn
    Jp[0, 2] = -v * azn
    Jp[0, 3] = -(p[1] * abs(v) * szn + p[2] * v * azn) * lz
    Jp[0, 4] = 0.0
    Jp[1, 0] = 0.0
    Jp[1, 1] = 0.0
    Jp[1, 2] = 0.0
    Jp[1, 3] = 0.0
    Jp[1, 4] = u


@njit(cache=True)
def bouc_wen_slope(x, u, v, p):
    """dF/du = k_el + dz/du on the branch of direction sgn(v) (increasing for v = 0)."""
    z, n = x[0], p[3]
    sv = -1.0 if v < 0.0 else 1.0
    return p[4] + p[0] - p[1] * sv * spow(z, n) - p[2] * abs(z) ** n


class BoucWen(ForceElement):
    """Bouc-Wen law ż = A·u̇ − β·|u̇|·|z|^(n−1)·z − γ·u̇·|z|^n, F = k_el·u + z.

    A [N/m] > 0, beta and gamma [1/(m·N^(n−1))] finite, n [-] > 0 (n < 1 allowed:
    the right-hand side is then not Lipschitz at z = 0, the integration handles it),
    k_el [N/m] finite, z0 [N] finite. Bounded (softening) class β + γ > 0, β ≥ 0:
    on a long monotone branch z tends to ±(A/(β + γ))^(1/n). Hardening class
    β + γ < 0 (the Noël & Schoukens benchmark is BoucWen(A=5e4, beta=800,
    gamma=-1100, n=1)): z grows without bound on loading, allowed for n ≤ 1.
    Refused as ill-posed (z reaches infinity at a finite displacement): n > 1 with
    β + γ < 0 or β < 0, and n > 1, γ > β with |z0| ≥ (A/(γ − β))^(1/n).
    Dahl(rho, Fc) = BoucWen(A=rho·Fc, beta=rho, gamma=0, n=1).
    """

    kind = "smooth"
    p_layout = ('A', 'beta', 'gamma', 'n', 'k_el')
    param_info = (
        Param('A', 'N/m', meaning='initial stiffness of the hysteretic force z',
              range='in (0, inf)'),
        Param('beta', '1/(m.N^(n-1))', meaning='loop-shape coefficient β of β·|u̇|·|z|^(n−1)·z',
              range='any real; >= 0 when n > 1'),
        Param('gamma', '1/(m.N^(n-1))', meaning='loop-shape coefficient γ of γ·u̇·|z|^n',
              range='any real; >= -beta when n > 1'),
        Param('n', '1', meaning='sharpness exponent of the elastic-plastic transition',
              range='in (0, inf)'),
        Param('k_el', 'N/m', meaning='parallel linear stiffness (F = k_el·u + z)',
              range='any real'),
        Param('z0', 'N', meaning='initial hysteretic force z',
              range='any real; |z0| < (A/(gamma − beta))^(1/n) when n > 1, gamma > beta'),
    )
    state_names = ("z",)
    citation = "Bouc-Wen model (Dahl as the case n = 1)"

    advance = staticmethod(bouc_wen_advance)
    force = staticmethod(bouc_wen_force)
    rate = staticmethod(bouc_wen_rate)
    jac = staticmethod(bouc_wen_jac)
    pjac = staticmethod(bouc_wen_pjac)
    slope = staticmethod(bouc_wen_slope)

    def __init__(self, *, A, beta, gamma, n, k_el=0.0, z0=0.0):
        A = check_positive("A", A)
        beta = check_finite("beta", beta)
        gamma = check_finite("gamma", gamma)
        n = check_positive("n", n)
        k_el = check_finite("k_el", k_el)
        z0 = check_finite("z0", z0)
        if n > 1.0:
            if beta < 0.0:
                raise ValueError(f"beta must be in [0, inf) when n > 1 (got {beta!r}): "
                                 "z would reach infinity at a finite displacement")
            if beta + gamma < 0.0:
                raise ValueError(f"gamma must be in [-beta, inf) = [{-beta:g}, inf) when "
                                 f"n > 1 (got {gamma!r}): the hardening form β + γ < 0 "
                                 "reaches infinity at a finite displacement for n > 1")
            if gamma > beta:
                zu = math.pow(A / (gamma - beta), 1.0 / n)
                if abs(z0) >= zu:
                    raise ValueError(f"z0 must be in (-{zu:g}, {zu:g}) for gamma > beta "
                                     f"and n > 1 (got {z0!r}): beyond it the return "
                                     "branch diverges")
        self._setup(dict(A=A, beta=beta, gamma=gamma, n=n, k_el=k_el, z0=z0),
                    [A, beta, gamma, n, k_el], [z0])
        self.x_scale = np.array([max(bouc_wen_zscale(A, beta, gamma, n), abs(z0))])
        if n == 1.0:
            self.advance = bouc_wen1_advance

    def kernel_p(self, work: int = 0) -> np.ndarray:
        """p followed by the arc-length tables of n (power_law_table.py) for n ≠ 1
        when they exist or ``work`` segments pay for building them."""
        A, beta, gamma, n = self.p[:4]
        if n == 1.0:
            return self.p
        pairs = [(A, abs(k)) for k in (beta + gamma, beta - gamma) if k != 0.0]
        return table_kernel_p(self.p, n, work, pairs)

    @property
    def bounded(self) -> bool:
        """True in the bounded class β + γ > 0, β ≥ 0 (|z| ≤ max(|z0|, z_max()))."""
        p = self.params
        return p["beta"] + p["gamma"] > 0.0 and p["beta"] >= 0.0

    def z_max(self) -> float:
        """(A/(β + γ))^(1/n) [N]: the value z tends to on a long increasing branch;
        inf outside the bounded class."""
        p = self.params
        if not self.bounded:
            return math.inf
        return math.pow(p["A"] / (p["beta"] + p["gamma"]), 1.0 / p["n"])
