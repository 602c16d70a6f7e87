"""Linear, state-free force elements: spring, viscous damper, and both in parallel.

    LinearSpring:  F = k (u − u0)
    LinearDamper:  F = c u̇
    SpringDamper:  F = k (u − u0) + c u̇

Building blocks for assemblies (e.g. the springs k0 and damper c of the Masing model
with viscous damping, Bastien et al. (2007), eq. (11c)) and for sums with hysteresis
laws (a linear-elastic moment law EI·K is ``LinearSpring(k=EI)``). No state:
n_states = 0, advance and rate do nothing.
"""
import numpy as np
from numba import njit

from .base import ForceElement, Param, check_finite, check_nonnegative

# LinearSpring: p = [k, u0]
# LinearDamper: p = [c]
# SpringDamper: p = [k, c, u0]


@njit(cache=True)
def no_advance(x, u0, u1, dt, v, p, rtol):
    pass


@njit(cache=True)
def no_rate(x, u, v, p, out):
    pass


@njit(cache=True)
def spring_force(x, u, v, p):
    return p[0] * (u - p[1])


@njit(cache=True)
def spring_jac(x, u, v, p, J):
    J[0, 0] = p[0]
    J[0, 1] = 0.0


@njit(cache=True)
def spring_pjac(x, u, v, p, Jp):
    # ∂F/∂(k, u0) = (u − u0, −k): the parameter Jacobian of identify/assembly.py
    Jp[0, 0] = u - p[1]
    Jp[0, 1] = -p[0]


@njit(cache=True)
def spring_slope(x, u, v, p):
    return p[0]


@njit(cache=True)
def damper_force(x, u, v, p):
    return p[0] * v


@njit(cache=True)
def damper_jac(x, u, v, p, J):
    J[0, 0] = 0.0
    J[0, 1] = p[0]


@njit(cache=True)
def damper_pjac(x, u, v, p, Jp):
    Jp[0, 0] = v


@njit(cache=True)
def damper_slope(x, u, v, p):
    return 0.0


@njit(cache=True)
def spring_damper_force(x, u, v, p):
    return p[0] * (u - p[2]) + p[1] * v


@njit(cache=True)
def spring_damper_jac(x, u, v, p, J):
    J[0, 0] = p[0]
    J[0, 1] = p[1]


@njit(cache=True)
def spring_damper_pjac(x, u, v, p, Jp):
    Jp[0, 0] = u - p[2]
    Jp[0, 1] = v
    Jp[0, 2] = -p[0]


class _Linear(ForceElement):
    kind = "smooth"
    state_names = ()
    advance = staticmethod(no_advance)
    rate = staticmethod(no_rate)

    def _finish(self, params, p):
        self._setup(params, p, np.zeros(0))
        self.x_scale = np.ones(0)

    def stored_energy(self, X, U):
        """½k·(u − u0)² [J] (zero for a pure damper)."""
        k = self.params.get("k", 0.0)
        return 0.5 * k * (np.asarray(U, dtype=float) - self.params.get("u0", 0.0)) ** 2


class LinearSpring(_Linear):
    """Linear spring F = k·(u − u0): k [N/m] (any finite value, also negative for
    destabilising springs), u0 [m] free length offset."""

    p_layout = ('k', 'u0')
    param_info = (
        Param('k', 'N/m', meaning='stiffness (F = k·(u − u0))',
              range='any real'),
        Param('u0', 'm', meaning='unstretched displacement',
              range='any real'),
    )
    citation = "Hooke's law"
    force = staticmethod(spring_force)
    jac = staticmethod(spring_jac)
    pjac = staticmethod(spring_pjac)
    slope = staticmethod(spring_slope)

    def __init__(self, *, k, u0=0.0):
        k = check_finite("k", k)
        u0 = check_finite("u0", u0)
        self._finish(dict(k=k, u0=u0), [k, u0])


class LinearDamper(_Linear):
    """Linear viscous damper F = c·u̇: c [N·s/m] >= 0."""

    p_layout = ('c',)
    param_info = (
        Param('c', 'N.s/m', meaning='viscous coefficient (F = c·v)',
              range='in [0, inf)'),
    )
    citation = "linear viscous damping"
    force = staticmethod(damper_force)
    jac = staticmethod(damper_jac)
    pjac = staticmethod(damper_pjac)
    slope = staticmethod(damper_slope)

    def __init__(self, *, c):
        c = check_nonnegative("c", c)
        self._finish(dict(c=c), [c])


class SpringDamper(_Linear):
    """Spring and damper in parallel (Kelvin-Voigt) F = k·(u − u0) + c·u̇:
    k [N/m], c [N·s/m] >= 0, u0 [m]."""

    p_layout = ('k', 'c', 'u0')
    param_info = (
        Param('k', 'N/m', meaning='stiffness (F = k·(u − u0) + c·v)',
              range='any real'),
        Param('c', 'N.s/m', meaning='viscous coefficient',
              range='in [0, inf)'),
        Param('u0', 'm', meaning='unstretched displacement',
              range='any real'),
    )
    citation = "Kelvin-Voigt element"
    force = staticmethod(spring_damper_force)
    jac = staticmethod(spring_damper_jac)
    pjac = staticmethod(spring_damper_pjac)
    slope = staticmethod(spring_slope)

    def __init__(self, *, k, c, u0=0.0):
        k = check_finite("k", k)
        c = check_nonnegative("c", c)
        u0 = check_finite("u0", u0)
        self._finish(dict(k=k, c=c, u0=u0), [k, c, u0])
