"""Exact monodromy matrices: the variational equations integrated along the orbit.

For a smooth assembly ẏ = f(t, y) the derivative of the period map φ_T with respect to
the initial state, the monodromy matrix M = Φ(t0 + T), solves the variational equations

    Φ' = J(t, y(t))·Φ,   Φ(t0) = I,   J = ∂f/∂y,

integrated together with the state (Seydel (2010), *Practical Bifurcation and Stability
Analysis*, §7.5). J is the compiled model's analytic Jacobian (the elements' ``jac``
kernels assembled by :mod:`hystmech.systems.codegen`, ``Model.code.jac``), the right-hand
side the compiled ``Model.code.fun``; the augmented system is integrated by the one
Dormand-Prince stepper (:func:`hystmech.components._ode.dp45_solve`) in compiled code
(the templates in :mod:`hystmech.systems.variational`, compiled with the structure).
Every function here takes the :class:`~hystmech.systems.model.Model` of the assembly
when the caller has one (``model=``; :class:`~hystmech.systems.periodic.Shooter` builds
one per assembly and shares it), else builds it.

Accuracy is not assumed: :func:`variational_map` integrates twice (rtol and 100·rtol)
and returns the difference of the two monodromies as ``dM``, an upper estimate of the
error of M (the error of the tighter run is about 100 times smaller). The error of each
Floquet multiplier follows from its eigenvalue condition number
(:func:`multiplier_errors`), so stability is decided per multiplier at its own accuracy
(:mod:`hystmech.systems.periodic.stability`).

Inclusions (Masing, Maxwell-slip) integrated by the projection scheme (Bastien et al.
(2007), eqs. (A.7)-(A.9)) have the projection-consistent Jacobian instead
(:func:`proj_monodromy`, :class:`ProjectionMap`): one step U⁺ = P_Q(U + h·f(t, U)) has
the derivative D·(I + h·J) with J = ∂f/∂U (the ``jac`` kernels) and D the derivative of
the projection P_Q: 1 on every component the step leaves inside its box (a stuck slider,
the mechanical states), 0 on a component clamped to a face of the box (a sliding slider:
the normal of the yield set). The chained product over the period's steps is the exact
derivative of the discrete period map the scheme computes (not of the continuous flow),
so its multipliers are exact for that map up to round-off. Operators (relay, Preisach)
and elements without a compiled ``jac`` have neither: :func:`supports_variational` /
:func:`supports_projection_jacobian` say so and the callers fall back to finite
differences with an error estimate (:func:`fd_monodromy_error`).
"""
from __future__ import annotations

import math

import numpy as np

from ..methods import engine as _engine
from ..methods.projection import step_grid
from ..model import Model
from ..result import SimulationError


def _jac_model(assembly, model=None):
    """The assembly's model (``model`` if given, else built) when it has a compiled
    ``jac`` for every element and compiled inputs (no tables), else None."""
    if model is None:
        try:
            model = Model(assembly)
        except Exception:   # noqa: BLE001 - a model that does not build has no jac either
            return None
    m = model
    # (every generated module of a model with has_jac holds its jac: asking m.code
    # would build that module, which the engine's loops do without)
    ok = m.has_jac and m.compiled and not m.has_tables
    return m if ok else None


def _loops(m, loop):
    # the compiled functions running ``loop`` for model m: the generic engine's when the
    # tiered choice takes it (methods/engine.py for_loop: nothing compiled for a new
    # structure built from shipped laws), else the structure's generated module
    return _engine.for_loop(m, loop) or m.code


def _variational_model(assembly, model=None):
    # the kinds first: a non-smooth assembly is refused without compiling its model
    if any(e.element.kind != "smooth" for e in assembly.elements):
        return None
    return _jac_model(assembly, model)


def _projection_model(assembly, model=None):
    kinds = [e.element.kind for e in assembly.elements]
    if "operator" in kinds or "inclusion" not in kinds:
        return None
    return _jac_model(assembly, model)


def supports_variational(assembly, model=None) -> bool:
    """True when every element of the assembly is smooth with a compiled ``jac`` kernel
    and the inputs are compiled (the variational equations are then integrated here);
    model: the assembly's Model if already built."""
    return _variational_model(assembly, model) is not None


def supports_projection_jacobian(assembly, model=None) -> bool:
    """True when the assembly has inclusions, no operators, and every element a compiled
    ``jac`` kernel with compiled inputs: the projection scheme's period map then has the
    projection-consistent Jacobian (:class:`ProjectionMap`); model: the assembly's Model
    if already built."""
    return _projection_model(assembly, model) is not None


class ProjectionMap:
    """The period map of the projection scheme (Bastien et al. (2007), eq. (A.9)) at
    step h [s] over span [s] from t0 [s], with its exact (projection-consistent)
    Jacobian; the same step grid as ``simulate(method="projection", options={"h": h})``."""

    def __init__(self, assembly, span: float, t0: float = 0.0, *, h: float = 1e-5,
                 model=None):
        model = _projection_model(assembly, model)
        if model is None:
            raise ValueError("the projection-consistent Jacobian needs inclusions, no "
                             "operators, compiled jac kernels and compiled inputs")
        if not (math.isfinite(span) and span > 0):
            raise ValueError(f"span must be in (0, inf) s (got {span!r})")
        if not (math.isfinite(h) and 0 < h <= span):
            raise ValueError(f"h must be in (0, span = {span!r}] s (got {h!r})")
        self.model = m = model
        self._code = _loops(m, "proj_monodromy")
        self.N = m.N
        self.t0, self.h = float(t0), float(h)
        self.nsteps, self.h_last = step_grid(self.t0, self.t0 + float(span), self.h)

    def flow_monodromy(self, y):
        """(φ(y), M) with M = ∂φ/∂y the product of the per-step Jacobians."""
        m = self.model
        z = np.array(y, dtype=float)
        M = np.empty((self.N, self.N))
        self._code.proj_monodromy(z, self.t0, self.h, self.nsteps, self.h_last, m.prm,
                              m.box_lo, m.box_hi, m.layout.n_work, M)
        if not (np.all(np.isfinite(z)) and np.all(np.isfinite(M))):
            raise SimulationError("projection Jacobian: non-finite state or Jacobian")
        return z, M

    def roundoff(self, M) -> np.ndarray:
        """Error estimate of M: the round-off of the chained product, nsteps·ε·|M|
        entrywise (the map's kinks are not smoothed: M is its one-sided derivative)."""
        return self.nsteps * np.finfo(float).eps * np.abs(M) + np.finfo(float).tiny


class VariationalMap:
    """The period map of a smooth assembly with its exact monodromy.

    assembly: smooth, forced with period T [s] (``span``: the time integrated, n·T);
    t0 [s]: the section; rtol: relative tolerance of the Dormand-Prince integration;
    scale: the size of each state (absolute tolerances rtol·1e-3·scale, and the monodromy
    entries ∂y_i/∂y0_j are controlled at rtol·scale_i/scale_j); model: the assembly's
    Model if already built."""

    def __init__(self, assembly, span: float, t0: float = 0.0, *, rtol: float = 1e-10,
                 scale=None, model=None):
        model = _variational_model(assembly, model)
        if model is None:
            raise ValueError("the variational equations need smooth elements with compiled "
                             "jac kernels and compiled (Harmonic or numba) inputs")
        if not (math.isfinite(span) and span > 0):
            raise ValueError(f"span must be in (0, inf) s (got {span!r})")
        if not 0.0 < rtol < 1e-3:
            raise ValueError(f"rtol must be in (0, 1e-3) (got {rtol!r})")
        m = model
        self.model = m
        self.N = m.N
        self.t0, self.t1 = float(t0), float(t0) + float(span)
        self.rtol = float(rtol)
        N = m.N
        self._solve = _loops(m, "var_solve").var_solve
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
