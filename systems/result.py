"""Result of a simulation: :class:`SimResult` (named signals, energy account) and
:class:`SimulationError` (a failed run with the part computed)."""
from __future__ import annotations

import numpy as np


class SimulationError(RuntimeError):
    """A simulation that could not reach t_end: ``t_reached`` [s] is the last time
    computed and ``partial`` the :class:`SimResult` up to it."""

    def __init__(self, message, t_reached, partial=None):
        super().__init__(message)
        self.t_reached = t_reached
        self.partial = partial


class SimResult:
    """Result of :func:`simulate` (arrays over the output times ``t``).

    ``x(dof)``, ``v(dof)``, ``a(dof)`` [m, m/s, m/s²]; ``force(element)`` [N] and
    ``state(element)``; ``y`` the full state (columns ``names``); ``signals()`` every
    named signal; ``energy()`` the energy account; ``method``, ``stats``, ``message``.
    """

    def __init__(self, model, t, Y, Q, method, stats, message="", success=True):
        self.model = model
        self.assembly = model.asm
        self.t = np.asarray(t, dtype=float)
        self.y = np.asarray(Y, dtype=float)
        self.quad = None if Q is None else np.asarray(Q, dtype=float)
        self.method = method
        self.stats = dict(stats)
        self.message = message
        self.success = success
        self.names = model.asm.state_names()
        self._ev = None
        self.observed = None        # what an Observe saw (set by simulate)
        self.t_reached = float(self.t[-1]) if self.t.size else float("nan")

    def __len__(self):
        return self.t.size

    def _eval(self):
        if self._ev is None:
            m = self.model
            FE, UB, VB = m.forcing_on(self.t)
            A, F, U, V, FN, PW = m.eval_on(self.t, np.ascontiguousarray(self.y), FE, UB, VB)
            self._ev = dict(FE=FE, UB=UB, VB=VB, A=A, F=F, U=U, V=V, FN=FN, PW=PW)
        return self._ev

    def _dof(self, name):
        m = self.model
        if name in m.dof_names:
            return m.dof_names.index(name)
        raise KeyError(f"no DOF {name!r}; DOFs: {', '.join(m.dof_names)}")

    def _el(self, name):
        names = [e.name for e in self.assembly.elements]
        if name in names:
            return names.index(name)
        raise KeyError(f"no element {name!r}; elements: {', '.join(names)}")

    def x(self, dof: str) -> np.ndarray:
        """Position [m] of a DOF (free or imposed)."""
        if dof in self.model.imposed_names:
            return self._eval()["UB"][:, self.model.imposed_names.index(dof)]
        return self.y[:, self._dof(dof)]

    def v(self, dof: str) -> np.ndarray:
        """Velocity [m/s] of a DOF (free or imposed)."""
        if dof in self.model.imposed_names:
            return self._eval()["VB"][:, self.model.imposed_names.index(dof)]
        return self.y[:, self.model.nq + self._dof(dof)]

    def a(self, dof: str) -> np.ndarray:
        """Acceleration [m/s²] of a free DOF, from the equations of motion."""
        return self._eval()["A"][:, self._dof(dof)]

    def force(self, element: str) -> np.ndarray:
        """Force F [N] of an element, spring or damper (acting −F on a, +F on b)."""
        names = [e.name for e in self.assembly.elements]
        if element in names:
            return self._eval()["F"][:, names.index(element)]
        for s in self.assembly.springs:
            if s.name == element:
                return s.k * (self.rel(s.a, s.b)[0] - s.u0) + s.preload
        for d in self.assembly.dampers:
            if d.name == element:
                return d.c * self.rel(d.a, d.b)[1]
        for j, f in enumerate(self.assembly.forces):
            if f.name == element:
                return self._eval()["FE"][:, j]
        raise KeyError(f"no element, spring, damper or force {element!r}")

    def rel(self, a: str, b: str):
        """(u, v) = (x_a − x_b, ẋ_a − ẋ_b) [m, m/s]; "ground" is 0."""
        def xv(n):
            if n == "ground":
                return 0.0, 0.0
            return self.x(n), self.v(n)
        xa, va = xv(a)
        xb, vb = xv(b)
        return xa - xb + 0 * self.t, va - vb + 0 * self.t

    def deflection(self, element: str):
        """(u, v) seen by an element [m, m/s]."""
        i = self._el(element)
        ev = self._eval()
        return ev["U"][:, i], ev["V"][:, i]

    def state(self, element: str) -> np.ndarray:
        """States of an element, shape (n, n_states)."""
        i = self._el(element)
        o = int(self.model.eo[i])
        return self.y[:, o:o + self.model.sizes[i]]

    def signals(self) -> dict:
        """Every named signal as 1-D arrays (for CSV): t, DOF x/v/a, imposed x/v,
        element F and states, spring and damper forces."""
        out = {"t": self.t}
        for d in self.model.dof_names:
            out[f"{d}.x"] = self.x(d)
            out[f"{d}.v"] = self.v(d)
            out[f"{d}.a"] = self.a(d)
        for d in self.model.imposed_names:
            out[f"{d}.x"] = self.x(d)
            out[f"{d}.v"] = self.v(d)
        for s in self.assembly.springs:
            out[f"{s.name}.F"] = self.force(s.name)
        for s in self.assembly.dampers:
            out[f"{s.name}.F"] = self.force(s.name)
        ns = 2 * self.model.nq
        for i, e in enumerate(self.assembly.elements):
            out[f"{e.name}.F"] = self._eval()["F"][:, i]
            nrep = min(e.element.n_states, e.element.n_report_states)
            for j in range(nrep):
                out[self.names[ns + j]] = self.y[:, ns + j]
            ns += e.element.n_states
        return out

    def energy(self) -> dict:
        """Energy account [J] at the output times (Bastien et al. (2007) rig, §4.1).

        kinetic Σ½m·ẋ²; potential = springs Σ(½k(u − u0)² + preload·u) + gravity
        Σ(−m·g·x) + energy stored in elements that report it; input = work of external
        forces ∫f·ẋ dt + work of imposed motions ∫(−R)·ẋ dt (R: force of the
        connections on the imposed DOF); absorbed[element] = ∫F·v dt;
        dissipated[element] = absorbed − Δstored; dissipated[damper] = ∫c·v² dt.
        ``residual`` = input − (Δkinetic + Δpotential + Σ dissipated), ≈ 0.
        """
        m = self.model
        asm = self.assembly
        nq = m.nq
        if self.quad is None:
            raise ValueError("this result was computed with energy=False")
        Q = self.quad - self.quad[0]
        kin = 0.5 * (m.prm.mass * self.y[:, nq:2 * nq] ** 2).sum(axis=1)
        pot_s = np.zeros(self.t.size)
        for s in asm.springs:
            u = self.rel(s.a, s.b)[0]
            pot_s += 0.5 * s.k * (u - s.u0) ** 2 + s.preload * u
        pot_g = -(m.prm.mass * m.prm.grav * self.y[:, :nq]).sum(axis=1)
        out = {"t": self.t, "kinetic": kin, "potential_springs": pot_s,
               "potential_gravity": pot_g, "absorbed": {}, "stored": {}, "dissipated": {},
               "work_forces": {}, "work_imposed": {}}
        k = 0
        ev = self._eval()
        stored_total = np.zeros(self.t.size)
        for i, e in enumerate(asm.elements):
            W = Q[:, k]
            k += 1
            out["absorbed"][e.name] = W
            st = e.element.stored_energy(self.state(e.name), ev["U"][:, i])
            if st is not None:
                out["stored"][e.name] = st
                stored_total += st
                out["dissipated"][e.name] = W - (st - st[0])
            else:
                out["dissipated"][e.name] = W
        for d in asm.dampers:
            out["dissipated"][d.name] = Q[:, k]
            k += 1
        for f in asm.forces:
            out["work_forces"][f.name] = Q[:, k]
            k += 1
        for b in m.imposed_names:
            out["work_imposed"][b] = Q[:, k]
            k += 1
        inp = sum(out["work_forces"].values(), np.zeros(self.t.size)) + \
            sum(out["work_imposed"].values(), np.zeros(self.t.size))
        pot = pot_s + pot_g + stored_total
        diss = sum(out["dissipated"].values(), np.zeros(self.t.size))
        out["potential"] = pot
        out["input"] = inp
        out["dissipated_total"] = diss
        out["residual"] = inp - ((kin - kin[0]) + (pot - pot[0]) + diss)
        return out

    def energy_error(self) -> float:
        """max |residual| / max(energy scale): relative error of the energy balance."""
        e = self.energy()
        scale = max(np.max(np.abs(e["input"])), np.max(np.abs(e["kinetic"] - e["kinetic"][0])),
                    np.max(np.abs(e["potential"] - e["potential"][0])),
                    np.max(np.abs(e["dissipated_total"])), 1e-300)
        return float(np.max(np.abs(e["residual"])) / scale)

    def __repr__(self):
        return (f"SimResult(method={self.method!r}, n={self.t.size}, "
                f"t=[{self.t[0]:g}, {self.t[-1]:g}], success={self.success})")
