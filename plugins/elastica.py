"""Hysteretic bending for PyElastica Cosserat rods: one hystmech moment element per
Voronoi node and bending axis (optionally torsion).

PyElastica's bending law is hard-coded, τ = B(κ − κ0) (internal couple per Voronoi
node, material frame). :func:`add_hysteretic_bending` adds a second couple M = M̂[κ]
per node and axis, a hystmech force element taking the curvature κ [1/m] as its input
and returning a moment [N·m], transcribed into element torques exactly as PyElastica
transcribes its own couple (difference of M/ε³ plus the quadrature of
(κ × M)·l̂/ε³), so that ``LinearSpring(k = 0.2·EI)`` equals raising the bend matrix by
20 %. Default law: the hysteretic part κK − P[K] of the cable law of Manfredo, Dörlich,
Linn & Arnold (2023) (``systems.rigs.rod_cases.cable_preisach``), with the rod's own bend
matrix as the elastic part EI_el.

Host discipline: the forcing evaluates a trial copy of the committed memories at the
stage's curvatures; a callback commits once per step. PositionVerlet is required
(PEFRL evaluates the forcing at several stages and PyElastica accumulates external
torques across them); any other stepper raises a RuntimeError at its second force
evaluation within one step.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..components.base import ForceElement
from ._build import engine
from ._switch import inside as _inside, mean_force as _mean_force, switch_of as _switch_of

__all__ = ["add_hysteretic_bending", "HystereticBendingMemory", "cable_hysteresis",
           "add_element", "ElementMemory"]


@njit(cache=False)
def _trial(advance, force, X, Xt, Kc, K, dt, p, rtol, M):
    # every (node, axis) element advanced from its committed curvature to K on a copy
    nn, na = K.shape[0], K.shape[1]
    for i in range(nn):
        for a in range(na):
            for j in range(X.shape[2]):
                Xt[i, a, j] = X[i, a, j]
            x = Xt[i, a]
            u0 = Kc[i, a]
            u1 = K[i, a]
            if dt > 0.0:
                advance(x, u0, u1, dt, (u1 - u0) / dt, p, rtol)
            elif u1 != u0:
                advance(x, u0, u1, 0.0, 0.0, p, rtol)
            M[i, a] = force(x, u1, (u1 - u0) / dt if dt > 0.0 else 0.0, p)


@njit(cache=False)
def _torques(M3, kappa, rest_voronoi_lengths, voronoi_dilatation, out):
    # PyElastica's transcription of a Voronoi couple into element torques
    # (rod/cosserat_rod.py, _compute_internal_torques): Δ(M/ε³) + A[(κ × M)·l̂/ε³]
    nv = M3.shape[1]
    ne = nv + 1
    c = np.empty((3, nv))
    q = np.empty((3, nv))
    for k in range(nv):
        e3 = voronoi_dilatation[k] ** 3
        for i in range(3):
            c[i, k] = M3[i, k] / e3
        kx, ky, kz = kappa[0, k], kappa[1, k], kappa[2, k]
        mx, my, mz = M3[0, k], M3[1, k], M3[2, k]
        s = rest_voronoi_lengths[k] / e3
        q[0, k] = (ky * mz - kz * my) * s
        q[1, k] = (kz * mx - kx * mz) * s
        q[2, k] = (kx * my - ky * mx) * s
    for i in range(3):
        # two-point difference: out[k] = c[k] - c[k-1] with zero padding
        out[i, 0] += c[i, 0]
        for k in range(1, ne - 1):
            out[i, k] += c[i, k] - c[i, k - 1]
        out[i, ne - 1] += -c[i, nv - 1]
        # trapezoidal quadrature: 0.5·(q[k] + q[k-1]) with zero padding
        out[i, 0] += 0.5 * q[i, 0]
        for k in range(1, ne - 1):
            out[i, k] += 0.5 * (q[i, k] + q[i, k - 1])
        out[i, ne - 1] += 0.5 * q[i, nv - 1]


class HystereticBendingMemory:
    """The committed memories of one rod: X (nodes, axes, n_states), the committed
    curvatures Kc (nodes, axes) and time; the pending trial of the current step; and
    the per-node moments of the last evaluation (M, for read-out)."""

    def __init__(self, law: ForceElement, n_nodes: int, axes, x0=None):
        self.law = law
        self.axes = tuple(int(a) for a in axes)
        na = len(self.axes)
        x0 = law.x0 if x0 is None else np.asarray(x0, dtype=float).ravel()
        self.X = np.tile(x0, (n_nodes, na, 1)).astype(float)
        self.Xt = self.X.copy()
        self.Kc = np.zeros((n_nodes, na))
        self.Kt = np.zeros((n_nodes, na))
        self.tc = 0.0
        self.tt = 0.0
        self.M = np.zeros((n_nodes, na))
        self.Mc = np.zeros((n_nodes, na))
        self.ell = np.zeros(n_nodes)
        self.work = np.zeros((n_nodes, na))
        self.pending = False
        self.rtol = 1e-8
        self.commits = 0

    def commit(self):
        """Accept the trial of the step: memories, curvatures, time; and add the
        step's moment work Σ ½(M_old + M_new)·ΔK·ℓ [J] per element (``work``; over a
        closed cycle the energy dissipated by the hysteresis)."""
        if self.pending:
            self.work += 0.5 * (self.Mc + self.M) * (self.Kt - self.Kc) * self.ell[:, None]
            self.Mc[...] = self.M
            self.X[...] = self.Xt
            self.Kc[...] = self.Kt
            self.tc = self.tt
            self.pending = False
            self.commits += 1


def cable_hysteresis(levels: int = 30):
    """The hysteretic part κK − P[K] of the cable moment law of Manfredo et al. (2023)
    (``systems.rigs.rod_cases.cable_preisach``, eqs. (7)-(16), continuous kernel) and its
    elastic bending stiffness EI_el [N·m²]: (P, EI_el, memory0 of P)."""
    from ..systems.rigs.rod_cases import cable_preisach

    cfg = {"levels": int(levels)}
    law, P = cable_preisach(cfg)
    EI = float(law.parts[0].params["k"])
    return P, EI, P.demagnetized_state()


def _classes():
    ea = engine("elastica")

    class HystereticBending(ea.NoForces):
        """NoForces whose torques are the hystmech moments of the rod's memory."""

        def __init__(self, memory: HystereticBendingMemory):
            super().__init__()
            self.memory = memory

        def apply_torques(self, system, time: np.float64 = np.float64(0.0)) -> None:
            mem = self.memory
            if mem.pending:
                raise RuntimeError(
                    "hystmech hysteretic bending: the forcing was evaluated twice within "
                    "one time step; use elastica.PositionVerlet (PEFRL and other multi-"
                    "stage steppers accumulate external torques across stages)")
            law = mem.law
            K = np.ascontiguousarray(system.kappa.T[:, list(mem.axes)])
            dt = float(time) - mem.tc
            _trial(law.advance, law.force, mem.X, mem.Xt, mem.Kc, K, dt, law.p, mem.rtol,
                   mem.M)
            mem.Kt[...] = K
            mem.ell[...] = system.rest_voronoi_lengths
            mem.tt = float(time)
            mem.pending = True
            M3 = np.zeros((3, K.shape[0]))
            for j, a in enumerate(mem.axes):
                M3[a] = mem.M[:, j]
            _torques(M3, np.ascontiguousarray(system.kappa),
                     np.ascontiguousarray(system.rest_voronoi_lengths),
                     np.ascontiguousarray(system.voronoi_dilatation), system.external_torques)

    class CommitMemory(ea.CallBackBaseClass):
        """Commits the trial memories once per step (PyElastica calls callbacks once
        per step, after the last kinematic update)."""

        def __init__(self, memory: HystereticBendingMemory):
            super().__init__()
            self.memory = memory

        def make_callback(self, system, time, current_step: int) -> None:
            self.memory.commit()

    return HystereticBending, CommitMemory


def add_hysteretic_bending(sim, rod, law: ForceElement | None = None, *, torsion: bool = False,
                           x0=None, rtol: float = 1e-8) -> HystereticBendingMemory:
    """Add one hystmech moment element per Voronoi node of ``rod`` and bending axis
    (d1, d2; and the twist d3 if ``torsion``) to the PyElastica simulator ``sim``
    (needs the Forcing and CallBacks mixins), before ``sim.finalize()``; returns the
    rod's memory (committed states, last moments). The element maps the curvature
    component κ [1/m] to a couple [N·m] added to the rod's own B(κ − κ0). Default law:
    the hysteretic part of the cable law of Manfredo et al. (2023), starting from its
    AC-demagnetised memory. Integrate with ``elastica.PositionVerlet`` only."""
    ea = engine("elastica")
    if law is None:
        law, _, x0d = cable_hysteresis()
        x0 = x0d if x0 is None else x0
    if not isinstance(law, ForceElement):
        raise ValueError(f"law must be a hystmech force element (got {type(law).__name__})")
    for mixin in ("Forcing", "CallBacks"):
        if not isinstance(sim, getattr(ea, mixin)):
            raise ValueError(f"the simulator must derive from elastica.{mixin}")
    if not (isinstance(rtol, (int, float)) and 0 < rtol < 1):
        raise ValueError(f"rtol must be in (0, 1) (got {rtol!r})")
    axes = (0, 1, 2) if torsion else (0, 1)
    mem = HystereticBendingMemory(law, rod.kappa.shape[1], axes, x0)
    mem.rtol = float(rtol)
    HB, CM = _classes()
    sim.add_forcing_to(rod).using(HB, memory=mem)
    sim.collect_diagnostics(rod).using(CM, memory=mem)
    return mem


class ElementMemory:
    """The committed state of one force element on a node of a PyElastica system: x,
    the committed input u [m] and time; the anchor (the node's position at the first
    force evaluation); the pending trial; the force of the last evaluation F [N]."""

    def __init__(self, law: ForceElement, direction, node: int, rtol: float):
        self.law = law
        self.direction = np.asarray(direction, dtype=float)
        self.node = int(node)
        self.rtol = float(rtol)
        self.x = np.array(law.x0, dtype=float)
        self.xt = self.x.copy()
        self.u = 0.0
        self.t = 0.0
        self.ut = 0.0
        self.tt = 0.0
        self.anchor = None
        self.F = 0.0
        self.pending = False
        self.commits = 0
        self.switch = _switch_of(law)

    def commit(self):
        """Accept the trial of the step (once per step)."""
        if self.pending:
            self.x[...] = self.xt
            self.u, self.t = self.ut, self.tt
            self.pending = False
            self.commits += 1


def _element_classes():
    ea = engine("elastica")

    class ElementForce(ea.NoForces):
        """NoForces adding −F·e at one node, F the hystmech element's force at the
        node's displacement u = (r − r_first)·e and velocity v = ṙ·e."""

        def __init__(self, memory: ElementMemory):
            super().__init__()
            self.memory = memory

        def apply_forces(self, system, time: np.float64 = np.float64(0.0)) -> None:
            mem = self.memory
            if mem.pending:
                raise RuntimeError(
                    "hystmech element: the forcing was evaluated twice within one time "
                    "step; use elastica.PositionVerlet (PEFRL and other multi-stage "
                    "steppers accumulate external forces across stages)")
            e, k = mem.direction, mem.node
            r = system.position_collection[:, k]
            if mem.anchor is None:
                # u = 0 at the first force evaluation, as in the MuJoCo plugin
                mem.anchor = r.copy()
                mem.t = float(time)
            u = float((r - mem.anchor) @ e)
            v = float(system.velocity_collection[:, k] @ e)
            law = mem.law
            mem.xt[...] = mem.x
            dt = float(time) - mem.t
            sw = mem.switch
            d = 1.0 if v > 0.0 else -1.0
            uf = u + 0.5 * dt * v
            if (sw is not None and dt > 0.0 and u != mem.u and v != 0.0
                    and (_inside(sw(mem.xt, mem.u, 1.0 if u > mem.u else -1.0), mem.u, u,
                                 1.0 if u > mem.u else -1.0)
                         or _inside(sw(mem.xt, u, d), u, uf, d))):
                # a jump or kink near: the impulse h·F of PositionVerlet's half-step
                # force stands for the integral of F over the step [t_n, t_n+1]; take the
                # mean over it (second half of the committed -> trial segment, then the
                # predicted u + v·(t − t_n+1/2)), so a relay's jump is placed exactly
                um = 0.5 * (mem.u + u)
                vs = (u - mem.u) / dt
                law.advance(mem.xt, mem.u, um, 0.5 * dt, vs, law.p, mem.rtol)
                Fb = _mean_force(law, sw, mem.xt, um, u, 0.5 * dt, v, mem.rtol)
                Ff = _mean_force(law, sw, mem.xt.copy(), u, uf, 0.5 * dt, v, mem.rtol)
                mem.F = 0.5 * (Fb + Ff)
            else:
                if dt > 0.0:
                    law.advance(mem.xt, mem.u, u, dt, (u - mem.u) / dt, law.p, mem.rtol)
                elif u != mem.u:
                    law.advance(mem.xt, mem.u, u, 0.0, 0.0, law.p, mem.rtol)
                mem.F = float(law.force(mem.xt, u, v, law.p))
            mem.ut, mem.tt, mem.pending = u, float(time), True
            system.external_forces[:, k] -= mem.F * e

    class CommitElement(ea.CallBackBaseClass):
        def __init__(self, memory: ElementMemory):
            super().__init__()
            self.memory = memory

        def make_callback(self, system, time, current_step: int) -> None:
            self.memory.commit()

    return ElementForce, CommitElement


def add_element(sim, system, law: ForceElement, *, direction, node: int = 0,
                rtol: float = 1e-8) -> ElementMemory:
    """Add the force element ``law`` between the ground and node ``node`` of the
    PyElastica ``system`` (a rigid body: node 0, its centre of mass; a rod: any node)
    along the unit vector ``direction``, to the simulator ``sim`` (Forcing and CallBacks
    mixins) before ``sim.finalize()``: u = (r − r_first)·e [m] (r_first the position at
    the first step), v = ṙ·e [m/s], and the force −F·e [N]. Trial in the forcing,
    commit in a callback once per step; integrate with ``elastica.PositionVerlet``
    (:func:`integrate`). Returns the element's memory (committed state, last force)."""
    ea = engine("elastica")
    if not isinstance(law, ForceElement):
        raise ValueError(f"law must be a hystmech force element (got {type(law).__name__})")
    for mixin in ("Forcing", "CallBacks"):
        if not isinstance(sim, getattr(ea, mixin)):
            raise ValueError(f"the simulator must derive from elastica.{mixin}")
    e = np.asarray(direction, dtype=float)
    if e.shape != (3,) or not np.all(np.isfinite(e)) or abs(np.linalg.norm(e) - 1) > 1e-12:
        raise ValueError(f"direction must be a unit 3-vector (got {direction!r})")
    n = system.position_collection.shape[1]
    if not (isinstance(node, (int, np.integer)) and -n <= node < n):
        raise ValueError(f"node must be an integer in [{-n}, {n - 1}] (got {node!r})")
    if not (isinstance(rtol, (int, float)) and 0 < rtol < 1):
        raise ValueError(f"rtol must be in (0, 1) (got {rtol!r})")
    mem = ElementMemory(law, e, int(node) % n, rtol)
    EF, CE = _element_classes()
    sim.add_forcing_to(system).using(EF, memory=mem)
    sim.collect_diagnostics(system).using(CE, memory=mem)
    return mem


def integrate(sim, final_time: float, total_steps: int, *, stepper=None, progress=False):
    """``elastica.integrate`` with PositionVerlet (the only stepper the hysteretic
    bending allows); ValueError naming PositionVerlet for any other."""
    ea = engine("elastica")
    stepper = ea.PositionVerlet() if stepper is None else stepper
    if not isinstance(stepper, ea.PositionVerlet):
        raise ValueError(f"stepper must be elastica.PositionVerlet (got "
                         f"{type(stepper).__name__}): multi-stage steppers accumulate the "
                         f"external torques across stages")
    return ea.integrate(stepper, sim, float(final_time), int(total_steps),
                        progress_bar=progress)
