"""Hysteretic bending and torsion for PyElastica Cosserat rods, and a hystmech element
on a node of a rigid body or rod.

PyElastica's bending law is hard-coded, τ = B(κ − κ_rest) (internal couple per Voronoi
node, material frame). :func:`add_hysteretic_bending` (or the forcing class
:class:`HystereticBending` in Elastica's own idiom) adds a second couple per node,
M = M̂[κ − κ_rest], from hystmech elements taking the strain from the rest
configuration (curvatures κ1, κ2 and twist τ = κ3, minus rest_kappa) as input and
returning a couple [N·m], transcribed into element torques exactly as PyElastica
transcribes its own couple (difference of M/ε³ plus the quadrature of
(κ × M)·l̂/ε³), so that ``LinearSpring(k = 0.2·EI)`` equals raising the bend matrix by
20 % and a pre-curved rod at rest stays at its rest curvature. Bending: one scalar law
per axis (anisotropic, square yield surface) or one vector law per node on the pair
(κ1, κ2) (isotropic, circular yield surface: MasingVector, BoucWenBiaxial); torsion:
its own scalar law. Default bending law: the hysteretic part κK − P[K] of the cable
law of Manfredo, Dörlich, Linn & Arnold (2023) (``systems.rod_cases.cable_preisach``),
with the rod's own bend matrix as the elastic part EI_el.

Every node's trial and the torque transcription are one compiled call per step
(numba, batched over nodes). Host discipline: the forcing evaluates a trial copy of
the committed memories at the step's strains; a callback commits once per step (or,
for the bare forcing class, the next step's evaluation does). PositionVerlet is
required (PEFRL evaluates the forcing at several stages and PyElastica accumulates
external torques across them): a second evaluation within one step raises a
RuntimeError. The memory is a set of rod attributes (``hystmech_bending_*``), saved and
restored by ``elastica.save_state`` / ``load_state`` with the rod.

Displacement convention (shared by the plugin hosts): strains from the rest
configuration (rest_kappa), node displacements from the initial configuration (the
position when the element is added), an explicit origin ``u0`` overriding.
"""
from __future__ import annotations

import weakref

import numpy as np
from numba import njit

from ..components.base import ForceElement
from ._build import engine
from ._switch import inside as _inside, mean_force as _mean_force, switch_of as _switch_of

__all__ = ["add_hysteretic_bending", "HystereticBendingMemory", "HystereticBending",
           "CommitMemory", "bending_memory", "cable_hysteresis", "add_element",
           "ElementMemory"]


def _scalar_axes(advance, force, a0, a1):
    """Kernel of the scalar law on strain axes a0 .. a1-1 of node i (trial in X)."""
    @njit(cache=False)
    def step(i, X, Kc, Kt, dt, p, rtol, M, tmp):
        for a in range(a0, a1):
            x = X[i, a - a0]
            u0 = Kc[i, a]
            u1 = Kt[i, a]
            v = 0.0
            if dt > 0.0:
                v = (u1 - u0) / dt
                advance(x, u0, u1, dt, v, p, rtol)
            elif u1 != u0:
                advance(x, u0, u1, 0.0, 0.0, p, rtol)
            M[i, a] = force(x, u1, v, p)
    return step


def _vector_axes(advance, force):
    """Kernel of a vector (two-input) law on the bending pair of node i."""
    @njit(cache=False)
    def step(i, X, Kc, Kt, dt, p, rtol, M, tmp):
        x = X[i, 0]
        u0, u1, v, out = tmp[0], tmp[1], tmp[2], tmp[3]
        for a in range(2):
            u0[a] = Kc[i, a]
            u1[a] = Kt[i, a]
            v[a] = (u1[a] - u0[a]) / dt if dt > 0.0 else 0.0
        if dt > 0.0 or u1[0] != u0[0] or u1[1] != u0[1]:
            advance(x, u0, u1, dt if dt > 0.0 else 0.0, v, p, rtol)
        force(x, u1, v, p, out)
        M[i, 0] = out[0]
        M[i, 1] = out[1]
    return step


@njit(cache=False)
def _no_torsion(i, X, Kc, Kt, dt, p, rtol, M, tmp):
    M[i, 2] = 0.0


@njit(cache=True)
def _torques(M, kappa, rest_voronoi_lengths, voronoi_dilatation, out, c, q):
    # PyElastica's transcription of a Voronoi couple into element torques
    # (rod/cosserat_rod.py, _compute_internal_torques): Δ(M/ε³) + A[(κ × M)·l̂/ε³];
    # M (nodes, 3) in the material frame, c and q (3, nodes) work arrays
    nv = M.shape[0]
    ne = nv + 1
    for k in range(nv):
        e3 = voronoi_dilatation[k] ** 3
        for i in range(3):
            c[i, k] = M[k, i] / e3
        kx, ky, kz = kappa[0, k], kappa[1, k], kappa[2, k]
        mx, my, mz = M[k, 0], M[k, 1], M[k, 2]
        s = rest_voronoi_lengths[k] / e3
        q[0, k] = (ky * mz - kz * my) * s
        q[1, k] = (kz * mx - kx * mz) * s
        q[2, k] = (kx * my - ky * mx) * s
    for i in range(3):
        # two-point difference c[k] − c[k−1] and trapezoid ½(q[k] + q[k−1]), zero-padded
        out[i, 0] += c[i, 0] + 0.5 * q[i, 0]
        for k in range(1, ne - 1):
            out[i, k] += c[i, k] - c[i, k - 1] + 0.5 * (q[i, k] + q[i, k - 1])
        out[i, ne - 1] += -c[i, nv - 1] + 0.5 * q[i, nv - 1]


_KERNELS: dict = {}


def _kernel(bend, tors):
    """One compiled call per step: every node's trial (bending law, torsion law) on the
    strains κ − κ_rest and the couples transcribed into the rod's external torques.
    Compiled once per (bending kernel, torsion kernel) pair and kept."""
    key = (bend, tors)
    if key in _KERNELS:
        return _KERNELS[key]

    @njit(cache=False)
    def run(kappa, rest, vdil, rvl, ext, Xb, Xbt, Xs, Xst, Kc, Kt, M, dt, pb, ps, rtol,
            tmp, c, q):
        nv = kappa.shape[1]
        for i in range(nv):
            for a in range(3):
                Kt[i, a] = kappa[a, i] - rest[a, i]
            for j in range(Xb.shape[1]):
                for k in range(Xb.shape[2]):
                    Xbt[i, j, k] = Xb[i, j, k]
            bend(i, Xbt, Kc, Kt, dt, pb, rtol, M, tmp)
            for j in range(Xs.shape[1]):
                for k in range(Xs.shape[2]):
                    Xst[i, j, k] = Xs[i, j, k]
            tors(i, Xst, Kc, Kt, dt, ps, rtol, M, tmp)
        _torques(M, kappa, rvl, vdil, ext, c, q)

    _KERNELS[key] = run
    return run


@njit(cache=True)
def _commit(Xb, Xbt, Xs, Xst, Kc, Kt, Mc, M, ell, work):
    # accept the trial; the step's moment work ½(M_old + M_new)·Δ(κ − κ_rest)·ℓ [J]
    nv = Kc.shape[0]
    for i in range(nv):
        for a in range(3):
            work[i, a] += 0.5 * (Mc[i, a] + M[i, a]) * (Kt[i, a] - Kc[i, a]) * ell[i]
            Mc[i, a] = M[i, a]
            Kc[i, a] = Kt[i, a]
    Xb[...] = Xbt
    Xs[...] = Xst


_SCALARS = ("Xb", "Xs", "Kc", "Mc", "work", "tc", "Xbt", "Xst", "Kt", "M", "tt", "pending")


class HystereticBendingMemory:
    """The element memory of one rod: per Voronoi node the committed states of the
    bending law ``Xb`` (nodes, 2 axes or 1 vector law, n_states) and of the torsion
    law ``Xs``, the committed strains ``Kc`` (nodes, 3) = κ − κ_rest at the committed
    time ``tc``, the last committed moments ``Mc`` [N·m] and the moment work ``work``
    [J] per node and axis; the pending trial (``Xbt``, ``Xst``, ``Kt``, ``M``, ``tt``).
    Every array is also an attribute ``hystmech_bending_<name>`` of the rod, so
    ``elastica.save_state`` / ``load_state`` save and restore the memory with the rod.

    ``law``: a scalar hystmech ForceElement (one per bending axis d1, d2: an
    anisotropic section; its yield surface is a square) or a
    :class:`~hystmech.components.vector_base.VectorForceElement` (one per node on the
    pair (κ1, κ2): isotropic, e.g. MasingVector, BoucWenBiaxial) or None (no bending
    element); ``torsion``: a scalar law on the twist τ − τ_rest, or None.
    Displacement convention: the strains are measured from the rest configuration
    (rest_kappa: rest curvature and rest twist); the memory starts at x0 with the
    committed strains of the rod as built."""

    def __init__(self, rod, law, torsion=None, *, x0=None, x0_torsion=None,
                 rtol: float = 1e-8):
        from ..components.vector_base import VectorForceElement

        if law is not None and not isinstance(law, (ForceElement, VectorForceElement)):
            raise ValueError(f"law must be a hystmech force element or vector element "
                             f"(got {type(law).__name__})")
        if torsion is not None and not isinstance(torsion, ForceElement):
            raise ValueError(f"torsion must be a scalar hystmech force element or None "
                             f"(got {type(torsion).__name__})")
        if law is None and torsion is None:
            raise ValueError("give a bending law, a torsion law or both")
        if not (isinstance(rtol, (int, float)) and 0 < rtol < 1):
            raise ValueError(f"rtol must be in (0, 1) (got {rtol!r})")
        if hasattr(rod, "hystmech_bending_Xb"):
            raise ValueError("this rod already has hystmech hysteretic bending")
        nv = rod.kappa.shape[1]
        self.law, self.torsion, self.rtol = law, torsion, float(rtol)
        self.vector = isinstance(law, VectorForceElement)

        def states(el, x, nax):
            if el is None:
                return np.zeros((nv, 1, 1))
            xs = el.x0 if x is None else np.asarray(x, dtype=float).ravel()
            if xs.size != el.n_states or not np.all(np.isfinite(xs)):
                raise ValueError(f"the initial state of {el.name} must hold "
                                 f"{el.n_states} finite value(s)")
            return np.tile(xs, (nv, nax, 1)).astype(float)

        Xb = states(law, x0, 1 if self.vector else 2)
        Xs = states(torsion, x0_torsion, 1)
        K0 = np.ascontiguousarray((rod.kappa - rod.rest_kappa).T, dtype=float)
        arrays = dict(Xb=Xb, Xs=Xs, Kc=K0, Mc=np.zeros((nv, 3)), work=np.zeros((nv, 3)),
                      tc=np.zeros(1), Xbt=Xb.copy(), Xst=Xs.copy(), Kt=K0.copy(),
                      M=np.zeros((nv, 3)), tt=np.zeros(1), pending=np.zeros(1))
        for k, a in arrays.items():
            setattr(rod, f"hystmech_bending_{k}", a)
            setattr(self, k, a)
        if law is None:
            bend = _no_bending
        elif self.vector:
            bend = _cached(("v", law.advance, law.force),
                           lambda: _vector_axes(law.advance, law.force))
        else:
            bend = _cached(("s", law.advance, law.force, 0, 2),
                           lambda: _scalar_axes(law.advance, law.force, 0, 2))
        tors = _no_torsion if torsion is None else _cached(
            ("s", torsion.advance, torsion.force, 2, 3),
            lambda: _scalar_axes(torsion.advance, torsion.force, 2, 3))
        self._run = _kernel(bend, tors)
        self._pb = law.p if law is not None else np.zeros(1)
        self._ps = torsion.p if torsion is not None else np.zeros(1)
        self._tmp = np.zeros((4, 2))
        self._c = np.empty((3, nv))
        self._q = np.empty((3, nv))
        self.ell = np.ascontiguousarray(rod.rest_voronoi_lengths, dtype=float)
        self.callback = False       # a CommitMemory callback commits once per step
        self._tlast = [None, None]  # the last two evaluation times (no callback)
        self._changes = 0
        self.commits = 0

    @property
    def axes(self):
        return (0, 1, 2) if self.torsion is not None else (0, 1)

    def evaluate(self, rod, time: float):
        """The trial of one step at ``time`` [s] from the committed memory, its
        couples added to ``rod.external_torques``."""
        if self.pending[0] != 0.0:
            if self.callback:
                raise RuntimeError(
                    "hystmech hysteretic bending: the forcing was evaluated twice within "
                    "one time step; use elastica.PositionVerlet (PEFRL and other multi-"
                    "stage steppers accumulate external torques across stages)")
            self._guard(time)
            self.commit()
        dt = time - self.tc[0]
        self._run(rod.kappa, rod.rest_kappa, rod.voronoi_dilatation,
                  rod.rest_voronoi_lengths, rod.external_torques, self.Xb, self.Xbt,
                  self.Xs, self.Xst, self.Kc, self.Kt, self.M, dt, self._pb, self._ps,
                  self.rtol, self._tmp, self._c, self._q)
        self.tt[0] = time
        self.pending[0] = 1.0

    def _guard(self, time):
        # without the commit callback a multi-stage stepper shows as evaluation times
        # with changing intervals (PositionVerlet: one evaluation per step, equal steps)
        t1, t2 = self._tlast
        if t1 is not None and t2 is not None and time > t2 > t1:
            d0, d1 = t2 - t1, time - t2
            self._changes = self._changes + 1 if abs(d1 - d0) > 1e-9 * d1 else 0
            if self._changes >= 3:
                raise RuntimeError(
                    "hystmech hysteretic bending: the forcing is evaluated at unequal "
                    "intervals (a multi-stage stepper); use elastica.PositionVerlet")
        self._tlast = [t2, time]

    def commit(self):
        """Accept the pending trial (once per step): memories, strains, time, and the
        step's moment work (``work``; over a closed cycle the hysteresis loss)."""
        if self.pending[0] != 0.0:
            _commit(self.Xb, self.Xbt, self.Xs, self.Xst, self.Kc, self.Kt, self.Mc,
                    self.M, self.ell, self.work)
            self.tc[0] = self.tt[0]
            self.pending[0] = 0.0
            self.commits += 1

    @property
    def X(self):
        """The committed states of the bending law (nodes, axes, n_states)."""
        return self.Xb


_KERNEL_PARTS: dict = {}


def _cached(key, make):
    if key not in _KERNEL_PARTS:
        _KERNEL_PARTS[key] = make()
    return _KERNEL_PARTS[key]


@njit(cache=False)
def _no_bending(i, X, Kc, Kt, dt, p, rtol, M, tmp):
    M[i, 0] = 0.0
    M[i, 1] = 0.0


def cable_hysteresis(levels: int = 30):
    """The hysteretic part κK − P[K] of the cable moment law of Manfredo et al. (2023)
    (``systems.rod_cases.cable_preisach``, eqs. (7)-(16), continuous kernel) and its
    elastic bending stiffness EI_el [N·m²]: (P, EI_el, memory0 of P)."""
    from ..systems.rod_cases import cable_preisach

    cfg = {"levels": int(levels)}
    law, P = cable_preisach(cfg)
    EI = float(law.parts[0].params["k"])
    return P, EI, P.demagnetized_state()


_CLASSES: dict = {}
# rod -> its memory (not a rod attribute: elastica.save_state saves every attribute)
_MEMORIES = weakref.WeakKeyDictionary()


def _classes():
    if _CLASSES:
        return _CLASSES["HB"], _CLASSES["CM"]
    ea = engine("elastica")

    class HystereticBending(ea.NoForces):
        """PyElastica forcing: hystmech moment elements at every Voronoi node of a
        Cosserat rod, driven by κ − κ_rest (bending) and τ − τ_rest (twist), added to
        the rod's own couple B(κ − κ_rest). Elastica's idiom::

            sim.add_forcing_to(rod).using(HystereticBending, law=MasingVector(...),
                                          torsion=Masing(...))

        or ``memory=HystereticBendingMemory(rod, law, ...)`` (the memory is then
        allocated at once and is saved/restored by elastica's restart utilities;
        with ``law=`` it is allocated at the first evaluation and reachable as
        ``bending_memory(rod)``). Without a commit callback (:func:`add_hysteretic_bending`
        adds one) the trial of a step is committed at the next step's evaluation.
        Integrate with elastica.PositionVerlet."""

        def __init__(self, law=None, *, torsion=None, x0=None, x0_torsion=None,
                     rtol: float = 1e-8, memory=None):
            super().__init__()
            if memory is None and law is None and torsion is None:
                law, _, x0d = cable_hysteresis()
                x0 = x0d if x0 is None else x0
            self.memory = memory
            self._args = (law, torsion, x0, x0_torsion, rtol)

        def apply_torques(self, system, time: np.float64 = np.float64(0.0)) -> None:
            mem = self.memory
            if mem is None:
                law, torsion, x0, x0t, rtol = self._args
                mem = self.memory = HystereticBendingMemory(system, law, torsion, x0=x0,
                                                            x0_torsion=x0t, rtol=rtol)
                _MEMORIES[system] = mem
            mem.evaluate(system, float(time))

    class CommitMemory(ea.CallBackBaseClass):
        """Commits the trial memories once per step (PyElastica calls callbacks once
        per step, after the last kinematic update)."""

        def __init__(self, memory: HystereticBendingMemory):
            super().__init__()
            self.memory = memory
            memory.callback = True

        def make_callback(self, system, time, current_step: int) -> None:
            self.memory.commit()

    _CLASSES["HB"], _CLASSES["CM"] = HystereticBending, CommitMemory
    return HystereticBending, CommitMemory


def __getattr__(name):
    # the PyElastica classes are built on first use (elastica is an optional extra)
    if name == "HystereticBending":
        return _classes()[0]
    if name == "CommitMemory":
        return _classes()[1]
    raise AttributeError(name)


def bending_memory(rod) -> HystereticBendingMemory:
    """The :class:`HystereticBendingMemory` of ``rod`` (after its first step when the
    forcing was given a law rather than a memory)."""
    mem = _MEMORIES.get(rod)
    if mem is None:
        raise ValueError("this rod has no hystmech hysteretic bending (yet)")
    return mem


def add_hysteretic_bending(sim, rod, law=None, *, torsion=False, x0=None,
                           x0_torsion=None, rtol: float = 1e-8) -> HystereticBendingMemory:
    """Add hystmech moment elements at every Voronoi node of ``rod`` to the PyElastica
    simulator ``sim`` (Forcing and CallBacks mixins), before ``sim.finalize()``, and a
    callback committing them once per step; returns the rod's memory.

    ``law`` maps the bending strain κ − κ_rest [1/m] to a couple [N·m] added to the
    rod's own B(κ − κ_rest): a scalar law (one per axis d1, d2) or a vector law
    (isotropic, on the pair; components.masing_vector.MasingVector,
    components.bouc_wen_biaxial.BoucWenBiaxial); default: the hysteretic part of the
    cable law of Manfredo et al. (2023) from its AC-demagnetised memory. ``torsion``:
    a scalar law on the twist τ − τ_rest [1/m] with its own parameters, or
    False/None; True reuses a scalar bending law for the twist. Integrate with
    ``elastica.PositionVerlet`` only."""
    ea = engine("elastica")
    if law is None:
        law, _, x0d = cable_hysteresis()
        x0 = x0d if x0 is None else x0
    for mixin in ("Forcing", "CallBacks"):
        if not isinstance(sim, getattr(ea, mixin)):
            raise ValueError(f"the simulator must derive from elastica.{mixin}")
    if torsion is True:
        if not isinstance(law, ForceElement):
            raise ValueError("torsion=True reuses a scalar bending law; with a vector law "
                             "give the torsion law itself (torsion=Masing(...))")
        torsion, x0_torsion = law, x0 if x0_torsion is None else x0_torsion
    elif torsion is False:
        torsion = None
    mem = HystereticBendingMemory(rod, law, torsion, x0=x0, x0_torsion=x0_torsion,
                                  rtol=rtol)
    _MEMORIES[rod] = mem
    HB, CM = _classes()
    sim.add_forcing_to(rod).using(HB, memory=mem)
    sim.collect_diagnostics(rod).using(CM, memory=mem)
    return mem


class ElementMemory:
    """The committed state of one force element on a node of a PyElastica system: x,
    the committed input u [m] and time t [s] (attributes ``hystmech_element<k>_x`` and
    ``_ut`` of the system, so elastica's save_state / load_state carry them); the
    anchor (the node's position in the initial configuration, when the element is
    added) and the origin u0 [m]; the pending trial; the force of the last evaluation
    F [N]."""

    def __init__(self, law: ForceElement, direction, node: int, rtol: float, system=None,
                 u0: float = 0.0):
        self.law = law
        self.direction = np.asarray(direction, dtype=float)
        self.node = int(node)
        self.rtol = float(rtol)
        self.u0 = float(u0)
        self.xc = np.array(law.x0, dtype=float)
        self.xt = self.xc.copy()
        self.ut_c = np.array([-self.u0, 0.0])     # committed u [m], t [s]
        self.anchor = None
        if system is not None:
            self.anchor = np.array(system.position_collection[:, self.node], dtype=float)
            k = 0
            while hasattr(system, f"hystmech_element{k}_x"):
                k += 1
            setattr(system, f"hystmech_element{k}_x", self.xc)
            setattr(system, f"hystmech_element{k}_ut", self.ut_c)
        self.ut = 0.0
        self.tt = 0.0
        self.F = 0.0
        self.pending = False
        self.commits = 0
        self.switch = _switch_of(law)

    @property
    def x(self):
        return self.xc

    @property
    def u(self):
        return float(self.ut_c[0])

    @property
    def t(self):
        return float(self.ut_c[1])

    def commit(self):
        """Accept the trial of the step (once per step)."""
        if self.pending:
            self.xc[...] = self.xt
            self.ut_c[0], self.ut_c[1] = self.ut, self.tt
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
            # u from the initial configuration (the anchor), shifted by u0
            u = float((r - mem.anchor) @ e) - mem.u0
            v = float(system.velocity_collection[:, k] @ e)
            law = mem.law
            mem.xt[...] = mem.xc
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
                rtol: float = 1e-8, u0: float = 0.0) -> ElementMemory:
    """Add the force element ``law`` between the ground and node ``node`` of the
    PyElastica ``system`` (a rigid body: node 0, its centre of mass; a rod: any node)
    along the unit vector ``direction``, to the simulator ``sim`` (Forcing and CallBacks
    mixins) before ``sim.finalize()``: u = (r − r_0)·e − u0 [m] (r_0 the node's position
    now, in the initial configuration; u0 an explicit origin), v = ṙ·e [m/s], and the
    force −F·e [N]; the element starts at x0 at time 0 (any initial velocity). Trial in the forcing,
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
    if not (isinstance(u0, (int, float)) and np.isfinite(u0)):
        raise ValueError(f"u0 must be a finite number [m] (got {u0!r})")
    mem = ElementMemory(law, e, int(node) % n, rtol, system, u0)
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
