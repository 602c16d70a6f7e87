"""Duhem model with envelope curves h_u (upper) and h_l (lower).

    Ḟ =  A u̇ (h_u(u) − F)   if u̇ ≥ 0
    Ḟ = −A u̇ (h_l(u) − F)   if u̇ ≤ 0

Bastien, Michon, Manin & Dufour (2007), J. Sound Vib. 302, eq. (2). The Dahl model
(eq. (1a)) is the case h_u ≡ 1, h_l ≡ −1 (force in units of Fc), A = Λ; the modified
Dahl model with μ = 1 is the case of linear envelopes.

Integration. The force depends on u only (rate independence): with the arc length
s = |u̇|·t, dF/ds = A (h(u(s)) − F) on each segment (h = h_u for u̇ > 0, h_l for
u̇ < 0), integrated with adaptive Dormand-Prince 5(4) steps to the relative
tolerance rtol. Numba-compilable envelopes run compiled; others in pure Python.
"""
import math

import numpy as np

from .base import ForceElement, Param, check_finite, check_positive, jit_user_callable
from .modified_dahl import (_A21, _A31, _A32, _A41, _A42, _A43, _A51, _A52, _A53, _A54,
                            _A61, _A62, _A63, _A64, _A65, _B1, _B3, _B4, _B5, _B6,
                            _C2, _C3, _C4, _C5, _E1, _E3, _E4, _E5, _E6, _E7)

# p = [A]

_KERNELS = {}  # (hu, hl, compiled) -> kernels, so equal envelopes compile once


def _make_envelope_rk(h, deco):
    @deco
    def envelope_rk(F, u0, r, L, A, rtol, scale):
        """F(L) for dF/ds = A (h(u0 + r s) − F), s in [0, L]; adaptive DOPRI 5(4)."""
        s = 0.0
        hs = L
        hmin = L * 1e-14
        k1 = A * (h(u0) - F)
        while s < L:
            if s + hs > L:
                hs = L - s
            k2 = A * (h(u0 + r * (s + _C2 * hs)) - (F + hs * _A21 * k1))
            k3 = A * (h(u0 + r * (s + _C3 * hs)) - (F + hs * (_A31 * k1 + _A32 * k2)))
            k4 = A * (h(u0 + r * (s + _C4 * hs))
                      - (F + hs * (_A41 * k1 + _A42 * k2 + _A43 * k3)))
            k5 = A * (h(u0 + r * (s + _C5 * hs))
                      - (F + hs * (_A51 * k1 + _A52 * k2 + _A53 * k3 + _A54 * k4)))
            k6 = A * (h(u0 + r * (s + hs))
                      - (F + hs * (_A61 * k1 + _A62 * k2 + _A63 * k3 + _A64 * k4
                                   + _A65 * k5)))
            Fn = F + hs * (_B1 * k1 + _B3 * k3 + _B4 * k4 + _B5 * k5 + _B6 * k6)
            k7 = A * (h(u0 + r * (s + hs)) - Fn)
            e = hs * (_E1 * k1 + _E3 * k3 + _E4 * k4 + _E5 * k5 + _E6 * k6 + _E7 * k7)
            err = abs(e) / (rtol * max(abs(F), abs(Fn), scale))
            if err <= 1.0 or hs <= hmin:
                s += hs
                F = Fn
                k1 = k7
                hs = hs * (5.0 if err == 0.0 else min(5.0, 0.9 * err ** -0.2))
            else:
                hs = hs * max(0.1, 0.9 * err ** -0.2)
        return F

    return envelope_rk


def make_kernels(hu, hl, compile_=True, key=None):
    """Kernels of the Duhem law for envelopes hu(u), hl(u) [N] (numba functions when
    ``compile_``, plain Python callables otherwise). ``key`` (default (hu, hl)) lets
    elements with the same envelopes share one compilation."""
    key = ((hu, hl) if key is None else key) + (compile_,)
    try:
        if key in _KERNELS:
            return _KERNELS[key]
    except TypeError:  # unhashable callables: no sharing
        key = None
    if compile_:
        from numba import njit as deco
    else:
        def deco(fn):
            return fn
    rk_u = _make_envelope_rk(hu, deco)
    rk_l = _make_envelope_rk(hl, deco)

    @deco
    def advance(x, u0, u1, dt, v, p, rtol):
        if v == 0.0:
            return
        L = abs(v) * dt
        r = (u1 - u0) / L  # du/ds, = sgn(v) when v is the segment slope
        scale = max(abs(x[0]), 1.0)
        if v > 0.0:
            x[0] = rk_u(x[0], u0, r, L, p[0], rtol, scale)
        else:
            x[0] = rk_l(x[0], u0, r, L, p[0], rtol, scale)

    @deco
    def rate(x, u, v, p, out):
        if v >= 0.0:
            out[0] = p[0] * v * (hu(u) - x[0])
        else:
            out[0] = -p[0] * v * (hl(u) - x[0])

    @deco
    def force(x, u, v, p):
        return x[0]

    @deco
    def jac(x, u, v, p, J):
        du = 1e-7 * (abs(u) + 1e-6)
        if v >= 0.0:
            dh = (hu(u + du) - hu(u - du)) / (2.0 * du)
            J[0, 0] = -p[0] * v
            J[0, 1] = p[0] * v * dh
            J[0, 2] = p[0] * (hu(u) - x[0])
        else:
            dh = (hl(u + du) - hl(u - du)) / (2.0 * du)
            J[0, 0] = p[0] * v
            J[0, 1] = -p[0] * v * dh
            J[0, 2] = -p[0] * (hl(u) - x[0])
        J[1, 0] = 1.0
        J[1, 1] = 0.0
        J[1, 2] = 0.0

    @deco
    def slope(x, u, v, p):
        # dF/du on the branch of direction sgn(v) (increasing branch for v = 0)
        if v >= 0.0:
            return p[0] * (hu(u) - x[0])
        return -p[0] * (hl(u) - x[0])

    kern = (advance, rate, force, jac, slope)
    if key is not None:
        _KERNELS[key] = kern
    return kern


class Duhem(ForceElement):
    """Duhem model, Bastien et al. (2007), eq. (2).

    A [1/m] > 0, hu and hl: callables u [m] -> N (upper and lower envelope curves of
    the hysteresis loop), F0 [N] initial force. State: the force F.
    Numba-compilable envelopes (plain arithmetic, ``math`` functions) run at full
    speed; any other callable works through the pure-Python kernels.
    """

    kind = "smooth"
    param_info = (Param("A", "1/m", "> 0"), Param("hu", "N", "callable u -> N"),
                  Param("hl", "N", "callable u -> N"), Param("F0", "N"))
    state_names = ("F",)
    citation = "Bastien, Michon, Manin & Dufour (2007), eq. (2)"

    def __init__(self, *, A, hu, hl, F0=0.0):
        A = check_positive("A", A)
        F0 = check_finite("F0", F0)
        for name, fn in (("hu", hu), ("hl", hl)):
            if not callable(fn):
                raise ValueError(f"{name} must be a callable of the displacement u [m] "
                                 f"returning a force [N] (got {type(fn).__name__})")
            try:
                h0 = float(fn(0.0))
            except Exception as exc:  # noqa: BLE001 - report any failure of user code
                raise ValueError(f"{name} must be a callable of the displacement u [m] "
                                 f"returning a force [N] ({name}(0.0) raised {exc!r})") from None
            if not math.isfinite(h0):
                raise ValueError(f"{name} must return finite forces (got {name}(0) = {h0!r})")
        jhu, jhl = jit_user_callable(hu, "hu"), jit_user_callable(hl, "hl")
        if jhu is not None and jhl is not None:
            kern = make_kernels(jhu, jhl, compile_=True, key=(hu, hl))
        else:
            kern = make_kernels(getattr(hu, "py_func", hu), getattr(hl, "py_func", hl),
                                compile_=False, key=(hu, hl))
        self.advance, self.rate, self.force, self.jac, self.slope = kern
        self.hu, self.hl = hu, hl
        self._setup(dict(A=A, hu=hu, hl=hl, F0=F0), [A], [F0])
        self.x_scale = np.array([max(abs(F0), abs(float(hu(0.0))), abs(float(hl(0.0))),
                                     1.0)])
