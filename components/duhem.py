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

from .base import (ForceElement, Param, check_array, check_finite, check_positive,
                   jit_user_callable)
from ._ode import dp45_solve

# p = [A]

_KERNELS = {}  # (hu, hl, compiled) -> kernels, so equal envelopes compile once
_POLYS = {}    # coefficients -> compiled polynomial, so equal envelopes compile once


def polynomial_envelope(c):
    """The numba function u ↦ Σ_i c[i]·u^i [N] (Horner) of the coefficients c [N/m^i]."""
    c = tuple(float(x) for x in c)
    if c in _POLYS:
        return _POLYS[c]
    from numba import njit

    n = len(c)

    @njit(cache=False)
    def h(u):
        s = 0.0
        for i in range(n - 1, -1, -1):
            s = s * u + c[i]
        return s
    _POLYS[c] = h
    return h


def _make_envelope_rk(hu, hl, deco):
    # one integrator for both envelopes (a flag picks h): numba compiles the adaptive
    # Dormand-Prince driver once per law, not once per envelope (2-3 s each)
    @deco
    def envelope_rhs(s, F, args, out):
        # dF/ds = A (h(u0 + r s) − F), args = (A, u0, r, up), h = h_u if up else h_l
        if args[3]:
            h = hu(args[1] + args[2] * s)
        else:
            h = hl(args[1] + args[2] * s)
        out[0] = args[0] * (h - F[0])

    @deco
    def envelope_rk(F, u0, r, L, A, rtol, scale, up):
        """F(L) for dF/ds = A (h(u0 + r s) − F), s in [0, L], h = h_u if ``up`` else
        h_l; adaptive Dormand-Prince 5(4) (components/_ode.py, atol = rtol·scale)."""
        W = np.empty((10, 1))  # stages, state, trial state, atol
        W[7, 0] = F
        W[9, 0] = rtol * scale
        dp45_solve(envelope_rhs, 0.0, L, W[7], (A, u0, r, up), W[9], rtol, L, W[:7], W[8])
        return W[7, 0]

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
    rk = _make_envelope_rk(hu, hl, deco)

    @deco
    def advance(x, u0, u1, dt, v, p, rtol):
        if v == 0.0:
            return
        L = abs(v) * dt
        r = (u1 - u0) / L  # du/ds, = sgn(v) when v is the segment slope
        scale = max(abs(x[0]), 1.0)
        x[0] = rk(x[0], u0, r, L, p[0], rtol, scale, v > 0.0)

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
    def pjac(x, u, v, p, Jp):
        # ∂(Ḟ, F)/∂A of eq. (2): u̇(h_u(u) − F) for u̇ ≥ 0, −u̇(h_l(u) − F) otherwise
        # (the parameter Jacobian of the forward sensitivity equations,
        # identify/assembly.py; the envelopes are code, not parameters)
        if v >= 0.0:
            Jp[0, 0] = v * (hu(u) - x[0])
        else:
            Jp[0, 0] = -v * (hl(u) - x[0])
        Jp[1, 0] = 0.0

    @deco
    def slope(x, u, v, p):
        # dF/du on the branch of direction sgn(v) (increasing branch for v = 0)
        if v >= 0.0:
            return p[0] * (hu(u) - x[0])
        return -p[0] * (hl(u) - x[0])

    kern = (advance, rate, force, jac, slope, pjac)
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
    p_layout = ('A',)
    param_info = (
        Param('A', '1/m', meaning='rate at which F approaches the envelopes',
              range='in (0, inf)'),
        Param('hu', 'm -> N', meaning='upper envelope curve h_u(u) of the loop',
              range='callable u -> N'),
        Param('hl', 'm -> N', meaning='lower envelope curve h_l(u) of the loop',
              range='callable u -> N'),
        Param('F0', 'N', meaning='initial force',
              range='any real'),
    )
    state_names = ("F",)
    citation = "Bastien, Michon, Manin & Dufour (2007), eq. (2)"

    @classmethod
    def polynomial(cls, *, A, cu, cl, F0=0.0):
        """Duhem model with polynomial envelopes h_u(u) = Σ_i cu[i]·u^i and
        h_l(u) = Σ_i cl[i]·u^i [N] (coefficients in N/m^i, lowest power first; linear
        envelopes are the modified Dahl model with μ = 1). What ``hystmech identify
        duhem`` fits, and how a scenario TOML writes it (constructor = "polynomial")."""
        cu, cl = check_array("cu", cu), check_array("cl", cl)
        el = cls(A=A, hu=polynomial_envelope(cu), hl=polynomial_envelope(cl), F0=F0)
        el.coefficients = {"cu": cu.tolist(), "cl": cl.tolist()}
        return el

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
        self.advance, self.rate, self.force, self.jac, self.slope, self.pjac = kern
        self.hu, self.hl = hu, hl
        self._setup(dict(A=A, hu=hu, hl=hl, F0=F0), [A], [F0])
        self.x_scale = np.array([max(abs(F0), abs(float(hu(0.0))), abs(float(hl(0.0))),
                                     1.0)])
