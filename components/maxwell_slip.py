"""Modified Maxwell-slip model: N elasto-slip asperities in parallel.

    X_i = δ_t − Z_i                                   (eq. 1)
    Δ_i = μ·kn·(h_i − d)/kt                           (eq. 2)
    Ż_i = δ̇_t while |Z_i| < Δ_i (stick), 0 in slip   (eqs. 3-6)
    F = Σ_i k_i·Z_i,  Z_i ∈ [−Δ_i, Δ_i]               (eq. 7)

Each asperity deflection Z_i is a stop operator of threshold Δ_i: an inclusion
Ż_i + ∂I_[−Δi,Δi](Z_i) ∋ u̇, updated exactly on each linear input segment. The force of
an asperity in slip, k_i·Δ_i·sgn(Z_i), is its Coulomb level μ·kn·(h_i − d).

Jankowski, Marszał & Stefański (2017), Tribol. Lett. 65:56, eqs. (1)-(7).
"""
import numpy as np
from numba import njit

from .base import ForceElement, Param, check_array, check_finite, check_positive

# p = [n, k_1 .. k_n, Delta_1 .. Delta_n]
# x = [Z_1 .. Z_n]


@njit(cache=True)
def maxwell_slip_advance(x, u0, u1, dt, v, p, rtol):
    n = int(p[0])
    du = u1 - u0
    for i in range(n):
        d = p[1 + n + i]
        z = x[i] + du
        if z > d:
            z = d
        elif z < -d:
            z = -d
        x[i] = z


@njit(cache=True)
def maxwell_slip_rate(x, u, v, p, out):
    n = int(p[0])
    for i in range(n):
        out[i] = v


@njit(cache=True)
def maxwell_slip_force(x, u, v, p):
    n = int(p[0])
    f = 0.0
    for i in range(n):
        f += p[1 + i] * x[i]
    return f


@njit(cache=True)
def maxwell_slip_jac(x, u, v, p, J):
    n = int(p[0])
    J[:, :] = 0.0
    for i in range(n):
        J[i, n + 1] = 1.0
        J[n, i] = p[1 + i]


@njit(cache=True)
def maxwell_slip_pjac(x, u, v, p, Jp):
    """∂(Ż, F)/∂p for p = [n, k_1..k_n, Δ_1..Δ_n]: ∂F/∂k_i = Z_i (eq. 7); Δ_i acts
    through the box [−Δ_i, Δ_i] only (identify/assembly.py projects onto it)."""
    n = int(p[0])
    Jp[:, :] = 0.0
    for i in range(n):
        Jp[n, 1 + i] = x[i]


@njit(cache=True)
def maxwell_slip_slope(x, u, v, p):
    # sum of the stiffnesses of the asperities that stick when u moves with sign(v)
    n = int(p[0])
    s = 0.0
    for i in range(n):
        d = p[1 + n + i]
        if d <= 0.0:
            continue
        if (x[i] >= d and v > 0.0) or (x[i] <= -d and v < 0.0):
            continue
        s += p[1 + i]
    return s


class MaxwellSlip(ForceElement):
    """Modified Maxwell-slip friction, Jankowski, Marszał & Stefański (2017), eqs. (1)-(7).

    k [N/m]: 1-D array of asperity tangential stiffnesses k_i > 0.
    delta [m]: 1-D array (same length) of slip deflections Δ_i >= 0; an asperity with
    Δ_i = 0 carries no force (it is not in contact).
    z0 [m]: initial deflections Z_i(0) with |Z_i(0)| <= Δ_i (default 0).
    Force F = Σ k_i Z_i [N]; per-asperity forces: :meth:`asperity_forces`.
    See :meth:`from_heights` for the paper's parametrisation by asperity heights.
    """

    kind = "inclusion"
    def p_names(self) -> tuple[str, ...]:
        """p = [n, k_1 .. k_n, Delta_1 .. Delta_n] (n elements)."""
        n = int(self.p[0])
        return (("n",) + tuple(f"k_{i + 1}" for i in range(n))
                + tuple(f"Delta_{i + 1}" for i in range(n)))

    param_info = (
        Param('k', 'N/m', meaning='asperity tangential stiffnesses k_i (1-D array)',
              range='in (0, inf) elementwise'),
        Param('delta', 'm', meaning='slip deflections Δ_i (1-D array, length of k); Δ_i = 0: no contact',
              range='in [0, inf) elementwise'),
        Param('z0', 'm', meaning='initial asperity deflections Z_i(0) (1-D array; None: 0)',
              range='|z0_i| <= delta_i'),
    )
    citation = "Jankowski, Marszał & Stefański (2017), eqs. (1)-(7)"

    advance = staticmethod(maxwell_slip_advance)
    force = staticmethod(maxwell_slip_force)
    rate = staticmethod(maxwell_slip_rate)
    jac = staticmethod(maxwell_slip_jac)
    pjac = staticmethod(maxwell_slip_pjac)
    slope = staticmethod(maxwell_slip_slope)

    def __init__(self, *, k, delta, z0=None):
        k = check_array("k", k)
        delta = check_array("delta", delta)
        if delta.size != k.size:
            raise ValueError(f"delta must have the same length as k ({k.size}) "
                             f"(got {delta.size})")
        if np.any(k <= 0):
            i = int(np.flatnonzero(k <= 0)[0])
            raise ValueError(f"k must be in (0, inf) elementwise (got k[{i}] = {k[i]!r})")
        if np.any(delta < 0):
            i = int(np.flatnonzero(delta < 0)[0])
            raise ValueError(f"delta must be in [0, inf) elementwise "
                             f"(got delta[{i}] = {delta[i]!r})")
        if z0 is None:
            z0 = np.zeros(k.size)
        else:
            z0 = check_array("z0", z0)
            if z0.size != k.size:
                raise ValueError(f"z0 must have the same length as k ({k.size}) "
                                 f"(got {z0.size})")
            bad = np.abs(z0) > delta
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise ValueError(f"z0 must be in [-delta_i, delta_i] elementwise (got z0[{i}] = "
                                 f"{z0[i]!r}, delta[{i}] = {delta[i]!r})")
        n = k.size
        self._setup(dict(k=k.copy(), delta=delta.copy(), z0=z0.copy()),
                    np.concatenate([[float(n)], k, delta]), z0)
        self.k = k.copy()
        self.delta = delta.copy()
        self.state_names = tuple(f"Z{i + 1}" for i in range(n))
        self.box_lo = -delta.copy()
        self.box_hi = delta.copy()
        self.box_p = 1 + k.size + np.arange(k.size)    # Z_i in [−p[1+n+i], p[1+n+i]]
        scale = np.where(delta > 0, delta, max(float(delta.max()), 1e-12))
        self.x_scale = scale

    def stored_energy(self, X, U):
        """Σ ½k_i·Z_i² [J] in the asperity springs (Jankowski, Marszał & Stefański
        (2017), eq. (7))."""
        X = np.asarray(X, dtype=float).reshape(-1, self.k.size)
        return 0.5 * (self.k * X ** 2).sum(axis=1)

    @classmethod
    def from_heights(cls, *, kt, kn, mu, d, heights, z0=None):
        """Asperities of heights h_i [m] pressed with separation distance d [m].

        Δ_i = μ·kn·(h_i − d)/kt (eq. (2)); kt [N/m] > 0 tangential and kn [N/m] > 0
        normal asperity stiffness, mu [-] > 0 friction coefficient, heights a 1-D
        array of finite values. Asperities with h_i <= d are not in contact: they get
        Δ_i = 0 and carry no force (never a negative Δ).
        """
        kt = check_positive("kt", kt)
        kn = check_positive("kn", kn)
        mu = check_positive("mu", mu)
        d = check_finite("d", d)
        h = check_array("heights", heights)
        delta = np.maximum(mu * kn * (h - d) / kt, 0.0)
        el = cls(k=np.full(h.size, kt), delta=delta, z0=z0)
        el.construction = dict(kt=kt, kn=kn, mu=mu, d=d, heights=h.copy())
        return el

    def asperity_forces(self, state) -> np.ndarray:
        """Per-asperity forces k_i·Z_i [N] (eq. (7)) for a state (n,) or states (T, n)."""
        z = np.asarray(state, dtype=float)
        if z.shape[-1] != self.k.size:
            raise ValueError(f"state must have {self.k.size} components in its last axis "
                             f"(got shape {z.shape})")
        return z * self.k

    def slipping(self, state) -> np.ndarray:
        """Boolean mask |Z_i| >= Δ_i (eq. (4)) for a state (n,) or states (T, n)."""
        z = np.asarray(state, dtype=float)
        return (np.abs(z) >= self.delta) & (self.delta > 0)
