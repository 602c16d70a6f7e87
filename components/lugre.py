"""LuGre model of dynamic friction with the Stribeck effect.

    ẋ = −σ0 |u̇| / g(u̇) · x + u̇,    F = σ0 x + σ1 ẋ + f(u̇)
    g(ν) = Fc + (Fs − Fc) exp(−|ν / vs|^β),   f(ν) = σ2 ν   (defaults)

Ikhouane, Mañosa & Pujol, *Minor loops of the Dahl and LuGre models*, eq. (1) and §4.2.
"""
import math

import numpy as np
from numba import njit

from .base import (ForceElement, Param, check_nonnegative, check_positive, check_finite,
                   jit_user_callable)

# p = [sigma0, sigma1, Fc, Fs, vs, beta, sigma2]


@njit(cache=True)
def stribeck_g(v, p):
    """Stribeck curve g(ν) = Fc + (Fs − Fc) exp(−|ν/vs|^β)  [N]."""
    r = abs(v / p[4])
    # pow is the costliest call of the kernel; skip it for beta = 1 and 2 (the usual values)
    if p[5] == 2.0:
        r = r * r
    elif p[5] != 1.0:
        r = r ** p[5]
    # e^{-r} underflows to exactly 0 from r ≈ 745.13 on (Fc + (Fs − Fc)·0 = Fc): skip it
    if r >= 746.0:
        return p[2]
    return p[2] + (p[3] - p[2]) * math.exp(-r)


@njit(cache=True)
def _segment(x0, v, dt, a):
    # exact solution of ẋ = −a x + v with constant a >= 0, v over dt;
    # (1 − e^{−z})/z written with expm1 so that small z keeps full precision
    z = a * dt
    if z < 1e-300:
        return x0 + v * dt
    em = math.expm1(-z)  # e^{-z} = 1 + em: one transcendental call for both terms
    return x0 * (1.0 + em) + v * dt * (-em / z)


def make_kernels(g, f, compile_=True):
    """Kernels of the LuGre law for friction curve g(ν) [N] and viscous law f(ν) [N]."""
    deco = njit if compile_ else (lambda fn: fn)
    expm1 = math.expm1

    @deco
    def advance(x, u0, u1, dt, v, p, rtol):
        # the rate is linear in x with constant coefficients while v is constant
        a = p[0] * abs(v) / g(v)
        z = a * dt
        if z < 1e-300:
            x[0] = x[0] + v * dt
        else:
            em = expm1(-z)  # e^{-z} = 1 + em: one transcendental call for both terms
            x[0] = x[0] * (1.0 + em) + v * dt * (-em / z)

    @deco
    def rate(x, u, v, p, out):
        out[0] = -p[0] * abs(v) / g(v) * x[0] + v

    @deco
    def force(x, u, v, p):
        xd = -p[0] * abs(v) / g(v) * x[0] + v
        return p[0] * x[0] + p[1] * xd + f(v)

    @deco
    def jac(x, u, v, p, J):
        gv = g(v)
        hv = 1e-7 * (abs(v) + 1e-6)
        dg = (g(v + hv) - g(v - hv)) / (2.0 * hv)
        sv = 1.0 if v > 0 else (-1.0 if v < 0 else 0.0)
        dx_dx = -p[0] * abs(v) / gv
        dx_dv = -p[0] * x[0] * (sv / gv - abs(v) * dg / (gv * gv)) + 1.0
        df = (f(v + hv) - f(v - hv)) / (2.0 * hv)
        J[0, 0] = dx_dx
        J[0, 1] = 0.0
        J[0, 2] = dx_dv
        J[1, 0] = p[0] + p[1] * dx_dx
        J[1, 1] = 0.0
        J[1, 2] = p[1] * dx_dv + df

    @deco
    def pjac(x, u, v, p, Jp):
        # ∂(ẋ, F)/∂p through σ0 and σ1 only: a user's g and f are code whose own
        # numbers are not in p (LuGre.pjac_names; identify/assembly.py refuses the rest)
        gv = g(v)
        for j in range(7):
            Jp[0, j] = 0.0
            Jp[1, j] = 0.0
        Jp[0, 0] = -abs(v) * x[0] / gv
        Jp[1, 0] = x[0] + p[1] * Jp[0, 0]
        Jp[1, 1] = -p[0] * abs(v) / gv * x[0] + v

    return advance, rate, force, jac, pjac


@njit(cache=True)
def lugre_advance(x, u0, u1, dt, v, p, rtol):
    x[0] = _segment(x[0], v, dt, p[0] * abs(v) / stribeck_g(v, p))


@njit(cache=True)
def lugre_rate(x, u, v, p, out):
    out[0] = -p[0] * abs(v) / stribeck_g(v, p) * x[0] + v


@njit(cache=True)
def lugre_force(x, u, v, p):
    xd = -p[0] * abs(v) / stribeck_g(v, p) * x[0] + v
    return p[0] * x[0] + p[1] * xd + p[6] * v


@njit(cache=True)
def lugre_jac(x, u, v, p, J):
    gv = stribeck_g(v, p)
    sv = 1.0 if v > 0 else (-1.0 if v < 0 else 0.0)
    r = abs(v / p[4])
    # dg/dν of the Stribeck curve; |ν|^(β−1) is taken as 0 at ν = 0 for β > 1
    if r > 0.0:
        dg = -(p[3] - p[2]) * math.exp(-r ** p[5]) * p[5] * r ** (p[5] - 1.0) * sv / p[4]
    else:
        dg = 0.0
    dx_dx = -p[0] * abs(v) / gv
    dx_dv = -p[0] * x[0] * (sv / gv - abs(v) * dg / (gv * gv)) + 1.0
    J[0, 0] = dx_dx
    J[0, 1] = 0.0
    J[0, 2] = dx_dv
    J[1, 0] = p[0] + p[1] * dx_dx
    J[1, 1] = 0.0
    J[1, 2] = p[1] * dx_dv + p[6]


@njit(cache=True)
def lugre_pjac(x, u, v, p, Jp):
    """∂(ẋ, F)/∂p for p = [σ0, σ1, Fc, Fs, vs, β, σ2] (rows ẋ, F) of the default
    Stribeck curve, the parameter Jacobian of the forward sensitivity equations
    (identify/assembly.py): ẋ = −σ0|u̇|x/g + u̇, F = σ0 x + σ1 ẋ + σ2 u̇,
    g = Fc + (Fs − Fc) e^(−r), r = |u̇/vs|^β."""
    s0, s1 = p[0], p[1]
    a = abs(v / p[4])
    r = a ** p[5] if a > 0.0 else 0.0
    e = math.exp(-r) if r < 746.0 else 0.0
    g = p[2] + (p[3] - p[2]) * e
    xd = -s0 * abs(v) / g * x[0] + v
    q = s0 * abs(v) * x[0] / (g * g)          # ∂ẋ/∂g
    dg = (1.0 - e, e, (p[3] - p[2]) * e * p[5] * r / p[4],
          -(p[3] - p[2]) * e * r * (math.log(a) if a > 0.0 else 0.0))
    for j in range(7):
        Jp[0, j] = 0.0
        Jp[1, j] = 0.0
    Jp[0, 0] = -abs(v) * x[0] / g
    Jp[1, 0] = x[0] + s1 * Jp[0, 0]
    Jp[1, 1] = xd
    for j in range(4):
        Jp[0, 2 + j] = q * dg[j]
        Jp[1, 2 + j] = s1 * q * dg[j]
    Jp[1, 6] = v


@njit(cache=True)
def lugre_affine(v, dt, p, out):
    # On a segment of constant velocity the exact update and the output are affine in x:
    # x_new = out[0]·x + out[1], F = out[2]·x_new + out[3]; drive() reuses these four
    # numbers while consecutive segments share v and dt (uniformly sampled linear pieces)
    a = p[0] * abs(v) / stribeck_g(v, p)
    z = a * dt
    if z < 1e-300:
        out[0] = 1.0
        out[1] = v * dt
    else:
        em = math.expm1(-z)
        out[0] = 1.0 + em
        out[1] = v * dt * (-em / z)
    out[2] = p[0] - p[1] * a
    out[3] = (p[1] + p[6]) * v


class LuGre(ForceElement):
    """LuGre friction, Ikhouane, Mañosa & Pujol, eq. (1); Stribeck g of §4.2.

    sigma0 [N/m] > 0 bristle stiffness, sigma1 [N·s/m] >= 0 micro-damping,
    Fc [N] > 0 Coulomb level, Fs [N] >= Fc stiction level, vs [m/s] > 0 Stribeck
    velocity, beta [-] > 0, sigma2 [N·s/m] >= 0 viscous coefficient, x0 [m] initial
    bristle deflection. ``g`` (ν ↦ N, > 0) and ``f`` (ν ↦ N, f(0) = 0) replace the
    default Stribeck curve and viscous law; numba-compilable callables keep full
    speed, others run in pure Python.
    """

    kind = "smooth"
    p_layout = ('sigma0', 'sigma1', 'Fc', 'Fs', 'vs', 'beta', 'sigma2')
    param_info = (
        Param('sigma0', 'N/m', meaning='bristle stiffness σ0 (F = σ0·x + σ1·ẋ + f(v))',
              range='in (0, inf)'),
        Param('sigma1', 'N.s/m', meaning='micro-damping σ1 of the bristle deflection rate',
              range='in [0, inf)'),
        Param('Fc', 'N', meaning='Coulomb friction level, g(v) for |v| >> vs',
              range='in (0, inf)'),
        Param('Fs', 'N', meaning='static (breakaway) friction level, g(0)',
              range='>= Fc (in [Fc, inf))'),
        Param('vs', 'm/s', meaning='Stribeck velocity of g(v) = Fc + (Fs − Fc)·exp(−|v/vs|^β)',
              range='in (0, inf)'),
        Param('beta', '1', meaning='Stribeck exponent β of g(v)',
              range='in (0, inf)'),
        Param('sigma2', 'N.s/m', meaning='viscous coefficient σ2 of the default f(v) = σ2·v',
              range='in [0, inf)'),
        Param('x0', 'm', meaning='initial bristle deflection x',
              range='any real'),
        Param('g', 'm/s -> N', meaning='Stribeck curve g(v) replacing the default (None: the default)',
              range='callable with g(v) > 0, or None'),
        Param('f', 'm/s -> N', meaning='viscous friction f(v) replacing σ2·v (None: the default)',
              range='callable with f(0) = 0, or None'),
    )
    state_names = ("x",)
    citation = "Ikhouane, Mañosa & Pujol, eq. (1)"

    advance = staticmethod(lugre_advance)
    force = staticmethod(lugre_force)
    rate = staticmethod(lugre_rate)
    jac = staticmethod(lugre_jac)
    pjac = staticmethod(lugre_pjac)
    affine = staticmethod(lugre_affine)

    def __init__(self, *, sigma0, sigma1, Fc, Fs, vs, beta=1.0, sigma2=0.0, x0=0.0,
                 g=None, f=None):
        sigma0 = check_positive("sigma0", sigma0)
        sigma1 = check_nonnegative("sigma1", sigma1)
        Fc = check_positive("Fc", Fc)
        Fs = check_finite("Fs", Fs)
        if Fs < Fc and Fc - Fs <= 2.0 ** -23 * Fc:
            # equal within float32 rounding (e.g. Fc=2.3, Fs=np.float32(2.3)): Fs = Fc
            Fs = Fc
        if Fs < Fc:
            raise ValueError(f"Fs must be in [Fc, inf) = [{Fc:g}, inf) (got {Fs!r}): the "
                             "static (breakaway) friction Fs is at least the Coulomb "
                             "friction Fc (Ikhouane, Mañosa & Pujol, §4.2)")
        vs = check_positive("vs", vs)
        beta = check_positive("beta", beta)
        sigma2 = check_nonnegative("sigma2", sigma2)
        x0 = check_finite("x0", x0)
        params = dict(sigma0=sigma0, sigma1=sigma1, Fc=Fc, Fs=Fs, vs=vs, beta=beta,
                      sigma2=sigma2, x0=x0)
        p = [sigma0, sigma1, Fc, Fs, vs, beta, sigma2]
        if g is not None or f is not None:
            params.update(g=g, f=f)
            if g is None:
                g = njit(lambda v: Fc + (Fs - Fc) * math.exp(-abs(v / vs) ** beta))
            if f is None:
                f = njit(lambda v: sigma2 * v)
            for name, fn in (("g", g), ("f", f)):
                if not callable(fn):
                    raise ValueError(f"{name} must be a callable of the velocity [m/s]")
            g0 = float(g(0.0))
            if not (math.isfinite(g0) and g0 > 0):
                raise ValueError(f"g must be > 0 (got g(0) = {g0!r})")
            f0 = float(f(0.0))
            if f0 != 0.0:
                raise ValueError(f"f must satisfy f(0) = 0 (got f(0) = {f0!r})")
            jg, jf = jit_user_callable(g, "g"), jit_user_callable(f, "f")
            if jg is not None and jf is not None:
                kern = make_kernels(jg, jf, compile_=True)
            else:
                kern = make_kernels(getattr(g, "py_func", g), getattr(f, "py_func", f),
                                    compile_=False)
            self.advance, self.rate, self.force, self.jac, self.pjac = kern
            self.affine = None
            # lugre_pjac differentiates the default curve; with a user's g or f the
            # kernels read σ0 and σ1 from p and nothing else
            self.pjac_names = ("sigma0", "sigma1")
            self.g = g
        else:
            self.g = lambda v: float(stribeck_g(float(v), self.p))
        self._setup(params, p, [x0])
        self.x_scale = np.array([Fs / sigma0])

    def g0(self) -> float:
        """g(0) [N], the only value of g that enters the slow-input hysteresis loop
        (Ikhouane, Mañosa & Pujol, Theorem 2)."""
        return float(self.g(0.0))
