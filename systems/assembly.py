"""Lumped-parameter mechanical assemblies: masses, springs, dampers, force elements.

An :class:`Assembly` holds degrees of freedom (DOFs) moving along one common axis x
(positive direction chosen by the user, e.g. downward as in Bastien et al. (2007),
§4.1.2), and connections between two DOFs or between a DOF and ``"ground"``.

Sign conventions (one rule for everything that connects two points a and b):

* a connection ``(a, b)`` sees the relative displacement u = x_a − x_b and velocity
  v = ẋ_a − ẋ_b (the ground has x = 0): u is measured from the reference configuration
  x = 0, and an element starts in its initial state at the u that the DOFs' x0 give (no
  path from 0 is traversed) — the displacement convention of every hystmech host
  (hystmech.plugins.convention; a MuJoCo joint's reference is its springref/qpos0);
* it produces a force F(u, v, ...) that acts as **−F on a and +F on b**: a positive F
  pulls a back towards b (tension when a is above b along +x). A spring is F = k·u;
* an external force f(t) on a DOF acts along +x; gravity ``g`` [m/s²] acts along +x
  on every mass (set ``gravity = 9.81`` when +x points downward, −9.81 when upward);
* an imposed DOF follows x(t) given by the user (massless; the actuator provides
  whatever force that takes, and its work is accounted as input work).

With these rules the belt–tensioner rig of Bastien et al. (2007), eqs. (38a)–(38c),
reads: belt spring-damper between "m1" and "m2" (T = K(u1 − u2) + C(u̇1 − u̇2) + T0,
so ``preload = T0``), tensioner element between "m2" and "ground", shaker force on "m1",
``gravity = 9.81``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..components.base import ForceElement, check_finite, check_nonnegative, check_positive

GROUND = "ground"


@dataclass(frozen=True)
class Harmonic:
    """f(t) = f0 + amplitude·cos(omega·t + phase)  (Bastien et al. (2007), eq. (52)).

    Units: f0 and amplitude in N (forces) or m (imposed motions), omega [rad/s],
    phase [rad]. Harmonic inputs are passed to the compiled solvers as numbers, so a
    sweep over amplitude or frequency does not recompile anything.
    """

    f0: float = 0.0
    amplitude: float = 0.0
    omega: float = 0.0
    phase: float = 0.0

    def __post_init__(self):
        for name in ("f0", "amplitude", "omega", "phase"):
            check_finite(name, getattr(self, name))

    def __call__(self, t):
        return self.f0 + self.amplitude * np.cos(self.omega * np.asarray(t) + self.phase)

    def derivative(self, t):
        return -self.amplitude * self.omega * np.sin(self.omega * np.asarray(t) + self.phase)


@dataclass
class _Dof:
    name: str
    mass: float
    x0: float
    v0: float


@dataclass
class _Imposed:
    name: str
    u: object          # callable t -> m, or Harmonic
    v: object          # callable t -> m/s, or Harmonic derivative, or None


@dataclass
class _Spring:
    name: str
    a: str
    b: str
    k: float
    u0: float
    preload: float


@dataclass
class _Damper:
    name: str
    a: str
    b: str
    c: float


@dataclass
class _Element:
    name: str
    element: ForceElement
    a: str
    b: str
    x0: np.ndarray


@dataclass
class _Force:
    name: str
    dof: str
    f: object           # callable t -> N, Harmonic, or float


class Assembly:
    """A small mechanical system; build it with the ``add_*`` methods, run it with
    :func:`hystmech.systems.simulate`.

    Example (Bastien et al. (2007), eqs. (38a)–(38c))::

        a = Assembly(gravity=9.81)
        a.add_dof("m1", mass=73.84)
        a.add_dof("m2", mass=0.15)
        a.add_spring("m1", "m2", k=5.6e5, preload=T0, name="belt")
        a.add_damper("m1", "m2", c=160.0, name="belt_damping")
        a.add_element("tensioner", Masing(...), "m2", "ground")
        a.add_force("m1", Harmonic(3.5, 122.1, 73.15, 0.40), name="shaker")
    """

    def __init__(self, gravity: float = 0.0):
        self.gravity = gravity
        self.dofs: dict[str, _Dof] = {}
        self.imposed: dict[str, _Imposed] = {}
        self.springs: list[_Spring] = []
        self.dampers: list[_Damper] = []
        self.elements: list[_Element] = []
        self.forces: list[_Force] = []
        self._version = 0

    # -- building ------------------------------------------------------------------------
    @property
    def gravity(self) -> float:
        """Gravitational acceleration along +x [m/s²]."""
        return self._gravity

    @gravity.setter
    def gravity(self, g):
        self._gravity = check_finite("gravity", g)

    def _new_name(self, name, kind, existing):
        if name is None:
            name = f"{kind}{len(existing)}"
        name = str(name)
        if not name or name == GROUND:
            raise ValueError(f"{kind} name must be a non-empty string other than 'ground' (got {name!r})")
        return name

    def _check_unique(self, name):
        taken = (set(self.dofs) | set(self.imposed) | {s.name for s in self.springs}
                 | {d.name for d in self.dampers} | {e.name for e in self.elements}
                 | {f.name for f in self.forces})
        if name in taken:
            raise ValueError(f"name {name!r} is already used in this assembly")

    def add_dof(self, name: str, *, mass: float, x0: float = 0.0, v0: float = 0.0) -> "Assembly":
        """A degree of freedom of mass ``mass`` [kg] > 0, initial position x0 [m] and
        velocity v0 [m/s]."""
        name = self._new_name(name, "dof", self.dofs)
        self._check_unique(name)
        mass = check_positive(f"mass of DOF {name!r}", mass)
        self.dofs[name] = _Dof(name, mass, check_finite(f"x0 of DOF {name!r}", x0),
                               check_finite(f"v0 of DOF {name!r}", v0))
        return self

    def impose(self, name: str, u, v=None) -> "Assembly":
        """A DOF whose displacement is imposed: u(t) [m] (callable or :class:`Harmonic`),
        v(t) [m/s] its derivative (recommended; otherwise a central difference is used)."""
        name = self._new_name(name, "imposed", self.imposed)
        self._check_unique(name)
        if isinstance(u, (int, float)):
            u = Harmonic(f0=float(u))
        if not callable(u):
            raise ValueError(f"u of imposed DOF {name!r} must be a callable of t [s] or a Harmonic")
        if v is None and isinstance(u, Harmonic):
            v = Harmonic(0.0, -u.amplitude * u.omega, u.omega, u.phase - math.pi / 2) \
                if u.omega != 0.0 else Harmonic(0.0)
            # cos(θ − π/2) = sin θ, so this is −A·Ω·sin(Ωt + φ), the exact derivative
        if v is not None and not callable(v):
            raise ValueError(f"v of imposed DOF {name!r} must be a callable of t [s] or None")
        self.imposed[name] = _Imposed(name, u, v)
        return self

    def _check_node(self, node, what):
        node = str(node)
        if node != GROUND and node not in self.dofs and node not in self.imposed:
            known = ", ".join(["ground", *self.dofs, *self.imposed])
            raise ValueError(f"{what}: unknown DOF {node!r}; known: {known}")
        return node

    def _check_pair(self, a, b, what):
        a = self._check_node(a, what)
        b = self._check_node(b, what)
        if a == b:
            raise ValueError(f"{what}: connects {a!r} to itself")
        return a, b

    def add_spring(self, a: str, b: str, *, k: float, u0: float = 0.0, preload: float = 0.0,
                   name: str | None = None) -> "Assembly":
        """Linear spring between a and b: F = k·(u − u0) + preload, u = x_a − x_b.

        k [N/m] any finite value (k < 0 is a negative stiffness, as for
        :class:`~hystmech.components.LinearSpring`), u0 [m] free length offset, preload [N]
        force at u = u0 (e.g. the initial belt tension T0 of Bastien et al. (2007),
        eq. (38a))."""
        name = self._new_name(name, "spring", self.springs)
        self._check_unique(name)
        a, b = self._check_pair(a, b, f"spring {name!r}")
        k = check_finite(f"k of spring {name!r}", k)
        self.springs.append(_Spring(name, a, b, k, check_finite(f"u0 of spring {name!r}", u0),
                                    check_finite(f"preload of spring {name!r}", preload)))
        return self

    def add_damper(self, a: str, b: str, *, c: float, name: str | None = None) -> "Assembly":
        """Linear viscous damper between a and b: F = c·v, c [N·s/m] >= 0."""
        name = self._new_name(name, "damper", self.dampers)
        self._check_unique(name)
        a, b = self._check_pair(a, b, f"damper {name!r}")
        c = check_nonnegative(f"c of damper {name!r}", c)
        self.dampers.append(_Damper(name, a, b, c))
        return self

    def add_element(self, name: str, element: ForceElement, a: str, b: str = GROUND, *,
                    x0=None) -> "Assembly":
        """A force element of :mod:`hystmech.components` between a and b (it sees
        u = x_a − x_b, v = ẋ_a − ẋ_b; its force F acts as −F on a, +F on b).
        x0 overrides the element's initial state."""
        name = self._new_name(name, "element", self.elements)
        self._check_unique(name)
        if not isinstance(element, ForceElement):
            raise ValueError(f"element {name!r} must be a hystmech force element "
                             f"(got {type(element).__name__})")
        a, b = self._check_pair(a, b, f"element {name!r}")
        xs = element.x0.copy() if x0 is None else np.asarray(x0, dtype=float).ravel().copy()
        if xs.size != element.n_states:
            raise ValueError(f"x0 of element {name!r} must have {element.n_states} component(s) "
                             f"(got {xs.size})")
        if not np.all(np.isfinite(xs)):
            raise ValueError(f"x0 of element {name!r} must be finite")
        if element.kind == "inclusion":
            lo, hi = np.asarray(element.box_lo, float), np.asarray(element.box_hi, float)
            if np.any(xs < lo - 1e-12 * np.maximum(1, abs(lo))) or \
                    np.any(xs > hi + 1e-12 * np.maximum(1, abs(hi))):
                raise ValueError(f"x0 of element {name!r} must lie in its box "
                                 f"[{lo.tolist()}, {hi.tolist()}] (got {xs.tolist()})")
        self.elements.append(_Element(name, element, a, b, xs))
        return self

    def add_force(self, dof: str, f, *, name: str | None = None) -> "Assembly":
        """External force f(t) [N] on ``dof`` along +x: a callable of t [s], a
        :class:`Harmonic`, or a constant."""
        name = self._new_name(name, "force", self.forces)
        self._check_unique(name)
        dof = str(dof)
        if dof not in self.dofs:
            hint = " (an imposed DOF takes no force)" if dof in self.imposed else ""
            raise ValueError(f"force {name!r}: unknown DOF {dof!r}{hint}; known: "
                             f"{', '.join(self.dofs)}")
        if isinstance(f, (int, float)):
            f = Harmonic(f0=check_finite(f"force {name!r}", f))
        if not callable(f):
            raise ValueError(f"force {name!r} must be a callable of t [s], a Harmonic or a number")
        self.forces.append(_Force(name, dof, f))
        return self

    # -- queries -------------------------------------------------------------------------
    def element(self, name: str) -> ForceElement:
        for e in self.elements:
            if e.name == name:
                return e.element
        raise KeyError(f"no element {name!r}; elements: {', '.join(e.name for e in self.elements)}")

    @property
    def kinds(self) -> set:
        return {e.element.kind for e in self.elements}

    @property
    def smooth(self) -> bool:
        """True when every element is a smooth ODE (BDF / RK applicable)."""
        return all(e.element.kind == "smooth" for e in self.elements)

    def state_names(self) -> list[str]:
        """Names of the state vector's components: DOF positions, DOF velocities, then
        each element's states as ``element.state``."""
        names = [f"{d}.x" for d in self.dofs] + [f"{d}.v" for d in self.dofs]
        for e in self.elements:
            sn = list(e.element.state_names)
            for i in range(e.element.n_states):
                names.append(f"{e.name}.{sn[i] if i < len(sn) else f'x{i}'}")
        return names

    def initial_state(self) -> np.ndarray:
        """The state vector at t_start: x0, v0 of each DOF, then each element's x0."""
        parts = [np.array([d.x0 for d in self.dofs.values()]),
                 np.array([d.v0 for d in self.dofs.values()])]
        parts += [e.x0 for e in self.elements]
        return np.concatenate(parts) if parts else np.zeros(0)

    def __repr__(self) -> str:
        return (f"Assembly({len(self.dofs)} DOF, {len(self.imposed)} imposed, "
                f"{len(self.springs)} springs, {len(self.dampers)} dampers, "
                f"elements={[e.name for e in self.elements]}, gravity={self.gravity})")
