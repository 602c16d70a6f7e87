"""Exact monodromy matrices: the variational equations integrated along the orbit.

For a smooth assembly ẏ = f(t, y) the derivative of the period map φ_T with respect to
the initial state, the monodromy matrix M = Φ(t0 + T), solves the variational equations

    Φ' = J(t, y(t))·Φ,   Φ(t0) = I,   J = ∂f/∂y,

integrated together with the state (Seydel (2010), *Practical Bifurcation and Stability
Analysis*, §7.5). J is the compiled model's analytic Jacobian (the elements' ``jac``
kernels assembled by :mod:`hystmech.systems.codegen`, ``Model.code.jac``), the right-hand
side the compiled ``Model.code.fun``; the augmented system is integrated by the one
Dormand-Prince stepper (:func:`hystmech.components._ode.dp45_solve`) in compiled code.

Accuracy is not assumed: :func:`variational_map` integrates twice (rtol and 100·rtol)
and returns the difference of the two monodromies as ``dM``, an upper estimate of the
error of M (the error of the tighter run is about 100 times smaller). The error of each
Floquet multiplier follows from its eigenvalue condition number
(:func:`multiplier_errors`), so stability is decided per multiplier at its own accuracy
(:mod:`hystmech.systems.periodic.stability`).

Non-smooth laws (inclusions, operators) and elements without a compiled ``jac`` have no
variational equations here: :func:`supports_variational` says so and the callers fall back
to finite differences with an error estimate (:func:`fd_monodromy_error`).
"""
from __future__ import annotations

import math

import numpy as np
from ..result import SimulationError


def var_fun(t, z, a, out):
    """TEMPLATE compiled into each structure's module (systems/codegen.py): the
    right-hand side of z = (y, Φ row-major), out = (f(t, y), J(t, y)·Φ), over the
    structure's globals ``fun`` and ``jac``; z of length N: the state alone.
    a = (prm, w, V, J, dy, y)."""
    prm, w, V, J, dy, y = a
    N = y.size
    for i in range(N):
        y[i] = z[i]
    fun(t, y, prm, dy, w, V)  # noqa: F821 - structure global
    for i in range(N):
        out[i] = dy[i]
    if z.size == N:
        return
    jac(t, y, prm, J, w, V)  # noqa: F821 - structure global
    for i in range(N):
        for j in range(N):
            s = 0.0
            for k in range(N):
                s += J[i, k] * z[N + k * N + j]
            out[N + i * N + j] = s


def var_solve(z, t0, t1, prm, nw, N, atol, rtol, h0):
    """TEMPLATE: integrate z = (y[, Φ]) from t0 to t1 in place by the Dormand-Prince
    loop (components/_ode.py's dp45_solve, bound to var_fun). Returns the steps taken."""
    a = (prm, np.zeros(nw), scratch(prm), np.zeros((N, N)), np.zeros(N),  # noqa: F821
         np.zeros(N))
    K = np.empty((7, z.size))
    zn = np.empty(z.size)
    return var_dp45_solve(t0, t1, z, a, atol, rtol, h0, K, zn)  # noqa: F821


def template_source() -> str:
    """Source of the templates above and of components/_ode.py's dp45_solve and
    dp45_step rewritten to call ``var_fun`` as a global (numba cannot cache a loop that
    takes a function as a value, see methods/radau5.py's core_source), for the
    generated module of every structure (compiled only when first called)."""
    import inspect
    import re

    from ...components import _ode

    out = ""
    for fn in (var_fun, var_solve):
        out += "\n\n@njit(cache=True)\n" + inspect.getsource(fn)
    for fn, new in ((_ode.dp45_solve, "var_dp45_solve"), (_ode.dp45_step, "var_dp45_step")):
        src = inspect.getsource(getattr(fn, "py_func", fn))
        src = "\n".join(ln for ln in src.splitlines() if not ln.startswith("@"))
        src = src.replace(f"def {fn.__name__}(fun, ", f"def {new}(")
        src = src.replace("dp45_step(fun, ", "var_dp45_step(")
        src = re.sub(r"\bfun\(", "var_fun(", src)
        out += "\n\n@njit(cache=True)\n" + src
    return out


def supports_variational(assembly) -> bool:
    """True when every element of the assembly is smooth with a compiled ``jac`` kernel
    and the inputs are compiled (the variational equations are then integrated here)."""
    from ..model import Model

    if any(e.element.kind != "smooth" for e in assembly.elements):
        return False
    try:
        m = Model(assembly)
    except Exception:       # noqa: BLE001 - a model that does not build has no jac either
        return False
    return bool(m.has_jac and m.compiled and m.code.jac is not None and not m.has_tables)


class VariationalMap:
    """The period map of a smooth assembly with its exact monodromy.

    assembly: smooth, forced with period T [s] (``span``: the time integrated, n·T);
    t0 [s]: the section; rtol: relative tolerance of the Dormand-Prince integration;
    scale: the size of each state (absolute tolerances rtol·1e-3·scale, and the monodromy
    entries ∂y_i/∂y0_j are controlled at rtol·scale_i/scale_j)."""

    def __init__(self, assembly, span: float, t0: float = 0.0, *, rtol: float = 1e-10,
                 scale=None):
        from ..model import Model

        if not supports_variational(assembly):
            raise ValueError("the variational equations need smooth elements with compiled "
                             "jac kernels and compiled (Harmonic or numba) inputs")
        if not (math.isfinite(span) and span > 0):
            raise ValueError(f"span must be in (0, inf) s (got {span!r})")
        if not 0.0 < rtol < 1e-3:
            raise ValueError(f"rtol must be in (0, 1e-3) (got {rtol!r})")
        m = Model(assembly)
        self.model = m
        self.N = m.N
        self.t0, self.t1 = float(t0), float(t0) + float(span)
        self.rtol = float(rtol)
        N = m.N
        self._solve = m.code.var_solve
        self.set_scale(np.ones(N) if scale is None else scale)
        self.n_runs = 0

    def set_scale(self, scale):
        s = np.maximum(np.abs(np.asarray(scale, float)), 1e-300)
        if s.size != self.N:
            raise ValueError(f"scale must have {self.N} entries (got {s.size})")
        self.scale = s
        self._atol_y = 1e-3 * s
        self._atol_M = 1e-3 * (s[:, None] / s[None, :]).ravel()

    def _run(self, z, atol, rtol):
        m = self.model
        self._solve(z, self.t0, self.t1, m.prm, m.layout.n_work, self.N, atol, rtol,
                    (self.t1 - self.t0) / 64)

    def flow(self, y, rtol: float | None = None) -> np.ndarray:
        """φ(y): the state at t0 + span from y at t0."""
        r = self.rtol if rtol is None else rtol
        z = np.array(y, dtype=float)
        self.n_runs += 1
        self._run(z, r * self._atol_y, r)
        if not np.all(np.isfinite(z)):
            raise SimulationError(f"variational map: non-finite state at t = {self.t1!r} s")
        return z

    def flow_monodromy(self, y, rtol: float | None = None):
        """(φ(y), M) with M = ∂φ/∂y by the variational equations."""
        r = self.rtol if rtol is None else rtol
        N = self.N
        z = np.concatenate([np.asarray(y, float), np.eye(N).ravel()])
        atol = r * np.concatenate([self._atol_y, self._atol_M])
        self.n_runs += 1
        self._run(z, atol, r)
        if not np.all(np.isfinite(z)):
            raise SimulationError(f"variational map: non-finite state at t = {self.t1!r} s")
        return z[:N].copy(), z[N:].reshape(N, N).copy()

    def monodromy_with_error(self, y):
        """(φ(y), M, dM): M at rtol, dM = M(100·rtol) − M(rtol), an upper estimate of
        the error of M."""
        fy, M = self.flow_monodromy(y)
        _, M2 = self.flow_monodromy(y, min(100.0 * self.rtol, 1e-4))
        return fy, M, M2 - M


def multiplier_errors(M, dM, scale=None):
    """Error bound of each Floquet multiplier (eigenvalue of M) for an error dM of M:
    κ_i·‖dM‖₂ with κ_i = ‖w_i‖‖v_i‖ / |w_iᴴv_i| the eigenvalue condition number (left and
    right eigenvectors; Golub & Van Loan (2013), §7.2.2), in the order of the returned
    multipliers (decreasing modulus, as :func:`hystmech.systems.periodic.floquet`).
    scale: the size of each state; M and dM are compared in the coordinates y/scale
    (the multipliers do not change, the norm of dM then weighs every state alike).
    Returns (mu, err). A defective (non-diagonalisable) M gives an infinite bound."""
    from scipy.linalg import eig

    M = np.asarray(M, float)
    if M.size == 0:
        return np.zeros(0, complex), np.zeros(0)
    dM = np.asarray(dM, float)
    if scale is not None:
        s = np.asarray(scale, float)
        M = M * s[None, :] / s[:, None]
        dM = dM * s[None, :] / s[:, None]
    w, vl, vr = eig(M, left=True, right=True)
    order = np.argsort(-np.abs(w), kind="stable")
    w, vl, vr = w[order], vl[:, order], vr[:, order]
    nrm = float(np.linalg.norm(np.asarray(dM, float), 2))
    den = np.abs(np.einsum("ij,ij->j", vl.conj(), vr))
    kap = np.linalg.norm(vl, axis=0) * np.linalg.norm(vr, axis=0) / np.maximum(den, 1e-300)
    kap[den < 1e-14] = np.inf
    return w, kap * nrm + 4 * np.finfo(float).eps * np.abs(w)


def fd_monodromy_error(M_fine, M_coarse) -> np.ndarray:
    """Error estimate of a finite-difference monodromy: the difference between the
    monodromy at the step in use and at a step twice (forward differences, error O(ε)) or
    the forward- against the central-difference one."""
    return np.asarray(M_coarse, float) - np.asarray(M_fine, float)
