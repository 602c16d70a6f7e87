"""hystmech force elements inside Exudyn, as Exudyn connectors with a force user
function.

``add_element(mbs, element, [m0, m1])`` adds a ``CoordinateSpringDamper`` between two
coordinate markers: the element sees u = q(m1) − q(m0), v = q̇(m1) − q̇(m0) (Exudyn's
displacement and velocity of the connector) and acts with −F on m1, +F on m0 (a
positive F pulls m1 back towards m0, like a spring k·u).

``add_element(mbs, element, [m0, m1], axis=a)`` with two position markers
(``MarkerBodyPosition``/``MarkerNodePosition``, or rigid markers; a marker on
``ObjectGround`` for the ground) adds a translational element along the fixed global
direction a, a ``CartesianSpringDamper``: u = (p1 − p0)·a from the reference
configuration, force −F·a on m1, +F·a on m0. ``rotation_axis=a`` with two rigid
markers (``MarkerBodyRigid``/``MarkerNodeRigid``) adds a torsional element, a
``TorsionalSpringDamper`` about a (global, reference configuration, fixed in both
bodies): u = relative rotation [rad], counted over turns, moment [N·m]. Both routes and
the one commit below serve all three joints.

Two routes:

``route="commit"`` (default, every law): trial/commit. The spring-force user function,
called by the solver at every stage, advances a COPY of the state committed at the last
accepted step from the committed (u, t) to the stage's (u, t) and returns its force; one
post-step user function, called once per accepted step, commits every element of the
system in one call. Both are compiled (plugins/exudyn_host.cpp, built by
plugins/exudyn_build.py: the law's C kernel, called by Exudyn through a C function
pointer, no Python per evaluation; the commit adopts the trial state of the step's last
force evaluation, which Exudyn makes at the accepted state). In plain use
(``mbs.Assemble(); exu.SolveDynamic(mbs, settings)``, no user post-step function) the
system's post-step function is the compiled host's too: Python runs at a solve's first
steps (reading the solver settings, checking the order of evaluations) and its last
(writing the states to the data nodes), not per step. A user post-step function (or a
pre-step one, which may read the data nodes) puts the Python commit back, once per
step (the user's function is Python anyway). Without a C++ compiler or
pybind11 it is a Python function (``Element.compiled`` tells which). The committed
state (and its u, t) lives in a ``NodeGenericData`` (written from the compiled host at
the solve's end, and every step when user pre-/post-step functions could read it), so
``mbs.systemData.GetSystemState()`` / ``SetSystemState`` and restart files carry it.
For fixed-step solvers, explicit (RK44 ...) or implicit (GeneralizedAlpha,
TrapezoidalIndex2: every Newton iteration is a trial). Under explicit fixed-step solvers,
a step whose predicted path u_n + v_n·s (s ∈ [0, h]) crosses a switch point of the law
(relay threshold, Masing face, Preisach memory corner) returns, at every stage, the mean
force over that path cut at the switch points (plugins/_switch.py, as the MuJoCo and
Elastica hosts do): RK44 integrates it exactly and each switch is placed with an O(h²)
error, so relay laws converge at second order instead of first. h comes from
:func:`simulate`, or from two equal intervals between accepted steps when Exudyn's
solver is called directly (until then, the plain trial).

``route="ode1"`` (smooth laws): the state is integrated by the solver itself with ẋ =
rate(x, u, v), for adaptive solvers (DOPRI5: the state is in their error estimate) and
implicit ones. Between coordinate markers it is compiled: x is the velocity of a
unit-mass ``NodeGenericODE2`` and one ``ObjectGenericODE2`` over the markers' nodes and
that node has the compiled host's force user function (``generic`` in exudyn_host.cpp:
connector force on the markers' coordinates, ẋ on the state, from the law's C kernels; no
Python per stage). On position/rigid markers, or without the compiled host, it is an
``ObjectGenericODE1`` with Python user functions.
The commit route cannot honour an adaptive solver's tolerance (the element's state is
not part of its error estimate): :func:`simulate` refuses it under DOPRI5, ODE23,
DVERK6 and RK67, and a host solved directly by ``exudyn.SolveDynamic`` raises at the
third consecutive change of the step length.

User pre- and post-step functions: Exudyn holds one post-step user function per
system, and hystmech's commit is that function. A post-step function installed before
the first ``add_element`` is taken over and chained (called after the commit); one
installed later by ``mbs.SetPostStepUserFunction`` is detected at the first force
evaluation of the solve (the elements are not yet anchored) and chained the same way,
so the commits stay on either way. :func:`set_post_step` installs one explicitly. The
pre-step user function is not used by hystmech and stays the user's.

Displacement convention (shared by the plugin hosts, plugins/convention.py): u is measured from the
reference configuration: for coordinate markers the nodes' coordinates (Exudyn's
displacement from ``referenceCoordinates``), so u = 0 in the reference configuration
and a node started away from it (``initialCoordinates``) starts pre-displaced, as in
hystmech's Assembly; an explicit ``u0`` [m or rad] shifts the origin, u = q(m1) −
q(m0) − u0.
"""
from __future__ import annotations

import os
import weakref

import numpy as np

from ..components.base import ForceElement
from ._build import engine
from ._switch import inside, mean_force, switch_of

__all__ = ["add_element", "set_post_step", "element_state", "element_force", "Host",
           "Element", "ADAPTIVE"]

# Exudyn's explicit solvers with an embedded error estimate (automatic step size)
ADAPTIVE = ("DOPRI5", "ODE23", "DVERK6", "RK67")

# data node layout: [initialised, u committed, t committed, x ...]
HDR = 3


class _Item:
    __slots__ = ("element", "name", "connector", "node", "ltg", "route", "ode_node", "p",
                 "advance", "force", "rtol", "sw", "mean", "u0", "cache", "measure", "slot", "tag",
                 "oslot", "state_t")


class Element(int):
    """The handle :func:`add_element` returns: the connector's object index (an int,
    usable wherever Exudyn takes one) with the element's ``name``, ``law`` and
    ``route``, and readers of its committed ``state()``, current ``force()`` [N or
    N·m] and ``displacement()`` u [m or rad] in the system ``mbs``."""

    def __new__(cls, index, mbs, item):
        h = super().__new__(cls, int(index))
        h._mbs, h._it = mbs, item
        return h

    @property
    def name(self) -> str:
        return self._it.name

    @property
    def law(self) -> ForceElement:
        return self._it.element

    @property
    def route(self) -> str:
        return self._it.route

    @property
    def compiled(self) -> bool:
        """True when the force user function is the compiled host's (no Python per
        force evaluation; plugins/exudyn_host.cpp; on route="ode1" also no Python per
        rate evaluation), False on the Python fallback."""
        return self._it.slot is not None or self._it.oslot is not None

    def state(self) -> np.ndarray:
        """The committed state (a copy)."""
        return element_state(self._mbs, self._it.name)

    def force(self) -> float:
        """The force at the committed state and the current u, v."""
        return element_force(self._mbs, self._it.name)

    def displacement(self) -> float:
        """The element's current input u [m or rad]: from the reference configuration,
        minus ``u0`` (for a torsional element the angle counted over turns)."""
        return self._it.measure(self._mbs)[0] - self._it.u0

    def __repr__(self):
        return f"Element({int(self)}, name={self.name!r}, law={self.law!r})"


class Host:
    """The hystmech elements of one Exudyn MainSystem and its post-step commit."""

    def __init__(self, mbs):
        self.mbs = mbs
        self.items: list[_Item] = []
        self.user_post = None
        self._ltg_ready = False
        self._disp = engine("exudyn").OutputVariableType.Displacement
        # the step size [s]: set by simulate(), else inferred from two equal intervals
        # between accepted steps (fixed-step solvers); None until known
        self.h = None
        self.h_given = False
        self._t_last = None
        self._dt_last = None
        self._changes = 0          # consecutive step-length changes (adaptive solver?)
        self.calls = 0             # trial calls since the last commit
        self._in_post = False
        # the compiled host (plugins/exudyn_host.cpp): its module, this system's host
        # number there and the elements by slot; None until a compiled element is added
        self.nat = None
        self.hid = None
        self.slots: dict[int, _Item] = {}
        self.n_python = 0          # commit-route elements on Python user functions
        self.live = False          # the compiled slots hold this solve's committed states
        self._t_post = None        # time of the last post-step call
        self._t_end = np.inf       # end time of the running solve (sync the data there)
        self._t_last_step = np.inf
        self._sync_every = True    # user code may read the data coordinates every step
        self._measured = False     # commit from the measured u (no end-of-step call)
        self.recorder = None       # hystmech's own recording function (reads no state)
        self._starting = False
        self._verify = 0           # steps left whose adopted trial is checked

    def adopt_post_step(self):
        """Keep hystmech's commit installed: a foreign post-step user function found
        on the system becomes the chained user function (called after the commit).
        Returns True if one was found."""
        cur = self.mbs.GetPostStepUserFunction()
        f = cur.get("function") if isinstance(cur, dict) else cur
        if f is None or f == 0 or self._ours(f):
            return False
        if isinstance(cur, dict) and cur.get("type", "Python") != "Python":
            raise ValueError("a symbolic post-step user function cannot be chained with "
                             "hystmech's commit: install a Python one with "
                             "hystmech.plugins.exudyn.set_post_step")
        self.user_post = f
        self.mbs.SetPostStepUserFunction(self.post_step)
        return True

    def _ours(self, f) -> bool:
        return f == self.post_step or (self.nat is not None and f is self.nat.post_step)

    def install_post_step(self):
        """The system's post-step user function: the compiled host's (the commit in C,
        no Python per step) when every commit-route element is compiled and no user
        function is chained, else the Python commit (which chains the user's)."""
        if self.user_post is None and self.items and \
                not any(i.route == "commit" for i in self.items):
            # nothing to commit (route="ode1" only): no post-step function at all
            self.mbs.SetPostStepUserFunction(0)
            return
        native = (self.nat is not None and self.n_python == 0 and self.user_post is None)
        self.mbs.SetPostStepUserFunction(self.nat.post_step if native else self.post_step)

    def _ltg(self):
        # data coordinate indices are known only after mbs.Assemble()
        if not self._ltg_ready:
            for it in self.items:
                if it.node is not None:
                    ltg = np.asarray(self.mbs.systemData.GetNodeLTGData(it.node), dtype=int)
                    # a node's data coordinates are contiguous: slice, not fancy-index
                    assert np.all(np.diff(ltg) == 1)
                    it.ltg = slice(int(ltg[0]), int(ltg[-1]) + 1)
            self._ltg_ready = True

    def refuse_adaptive(self, mbs):
        """At a solve's start: RuntimeError if the solve is adaptive (exudyn.SolveDynamic
        stores its settings in mbs.sys["simulationSettings"]) and an element is on the
        commit route."""
        st = mbs.sys.get("simulationSettings")
        if st is None or not any(i.route == "commit" for i in self.items):
            return
        ti = st.timeIntegration
        if ti.automaticStepSize and str(ti.solverType).split(".")[-1] in ADAPTIVE:
            raise RuntimeError(
                f"hystmech: {str(ti.solverType).split('.')[-1]} with automaticStepSize is "
                f"adaptive: route='commit' elements cannot honour its tolerance (their "
                f"states are not in its error estimate); use route='ode1' (smooth laws), "
                f"a fixed-step solver (RK44, GeneralizedAlpha) or automaticStepSize=False")

    def post_step(self, mbs, t):
        """Commit every trial/commit element over the accepted step (one call), then
        the chained user function."""
        if self._in_post:
            # a chained user function that itself calls this one (a wrapper)
            return True
        self._in_post = True
        try:
            return self._post_step(mbs, t)
        finally:
            self._in_post = False

    def _post_step(self, mbs, t):
        if not self._ltg_ready:
            self._ltg()
        self.calls = 0
        if self.hid is not None:
            self._commit_native(mbs, t)
            if self.n_python == 0:
                # every commit-route element is compiled: nothing else to commit
                if self.user_post is not None:
                    return self.user_post(mbs, t)
                return True
        if not self.h_given and any(i.route == "commit" and i.slot is None
                                    for i in self.items):
            if self._t_last is not None:
                dt = t - self._t_last
                same = self._dt_last is not None and abs(dt - self._dt_last) <= 1e-9 * dt
                self.h = dt if (dt > 0.0 and same) else None
                if self._dt_last is not None and dt > 0.0 and not same:
                    self._changes += 1
                    if self._changes >= 3 and any(i.route == "commit" for i in self.items):
                        raise RuntimeError(
                            "hystmech: the step length changed at three consecutive steps "
                            "(an adaptive solver): route='commit' elements cannot honour its "
                            "tolerance; use route='ode1' (smooth laws) or a fixed-step "
                            "solver (RK44, GeneralizedAlpha)")
                else:
                    self._changes = 0
                self._dt_last = dt
            self._t_last = t
        D = None
        for it in self.items:
            if it.route != "commit" or it.slot is not None:
                continue
            if D is None:
                D = np.array(mbs.systemData.GetDataCoordinates())
            s = D[it.ltg]
            u = it.measure(mbs)[0] - it.u0
            if s[0] == 0.0:
                s[0], s[1], s[2] = 1.0, u, t       # the first call (t = start): anchor
                self.refuse_adaptive(mbs)
            else:
                dt = t - s[2]
                if dt > 0.0 or u != s[1]:
                    x = np.ascontiguousarray(s[HDR:])
                    it.advance(x, s[1], u, dt, (u - s[1]) / dt if dt > 0.0 else 0.0, it.p,
                               it.rtol)
                    s[HDR:] = x
                s[1], s[2] = u, t
            D[it.ltg] = s
            it.cache = s          # the committed state the next step's trials start from
        if D is not None:
            mbs.systemData.SetDataCoordinates(D)
        if self.user_post is not None:
            return self.user_post(mbs, t)
        return True

    # -- the compiled host ---------------------------------------------------------
    def native_slot(self, it: _Item, x0) -> int | None:
        """A slot of the compiled host for a commit-route element, or None when the
        host or the law's C kernels are unavailable (then the Python user function)."""
        from .exudyn_build import host_module, law_kernels

        nat = host_module()
        k = law_kernels(it.element) if nat is not None else None
        if k is None:
            return None
        self._open_native(nat)
        p = np.ascontiguousarray(it.element.p, dtype=float)
        x = np.ascontiguousarray(x0, dtype=float)
        # a random tag beside the slot number: a connector of another system (or a
        # number changed by hand) cannot be served this element's state
        it.tag = float(int.from_bytes(os.urandom(6), "little") + 1)
        sid = nat.new_slot(self.hid, -1, k["adv"], k["force"], k["sw"], k["fail"],
                           p.ctypes.data, p.size, x.ctypes.data, x.size, it.u0, it.rtol,
                           it.tag)
        self.slots[sid] = it
        return sid

    def ode_slot(self, it: _Item, layout) -> int | None:
        """A compiled adaptive-route slot (hm_generic in exudyn_host.cpp) for a smooth
        law between coordinate markers, or None (then the Python ODE1 route)."""
        from .exudyn_build import host_module, law_kernels, ode_ready

        if layout is None or not ode_ready():
            return None
        nat = host_module()
        k = law_kernels(it.element)
        if k is None or not k.get("rate"):
            return None
        self._open_native(nat)
        nq, i0, i1, ix = layout
        p = np.ascontiguousarray(it.element.p, dtype=float)
        return nat.new_ode_slot(self.hid, nat.ms_address(self.mbs), k["force"], k["rate"],
                                p.ctypes.data, p.size, nq, i0, i1, ix,
                                it.element.n_states, it.u0)

    def _open_native(self, nat):
        if self.hid is None:
            self.nat = nat
            ref = weakref.ref(self)

            def event(what, sid, t):
                h = ref()
                if h is not None:
                    return h._event(what, sid, t)
                return True

            # the compiled host must not keep the system alive; closed with it
            self.hid = nat.new_host(event)
            weakref.finalize(self, nat.close_host, self.hid)

    def _event(self, what, sid, t):
        """Called by the compiled host (with the GIL) on rare events: a slot not
        anchored in this solve or time running backwards ("anchor"), many force
        evaluations without a commit ("check"), or a step its compiled post-step
        function hands over ("post", sid = the result of its commit, 1000 when it did
        not commit: see exudyn_host.cpp)."""
        if what == "post":
            if sid == 1000:
                return bool(self.post_step(self.mbs, t))
            self._after_commit(self.mbs, t, sid)
            self._t_post = t
            self._tail(self.mbs, t)
            return True
        if what == "anchor":
            if not self._starting:       # _start's own measurements evaluate the force
                self._start(self.mbs, t)
        elif not self._ours(self.mbs.GetPostStepUserFunction().get("function")):
            raise RuntimeError(
                "hystmech: the system's post-step user function was replaced after the "
                "elements were anchored, so their states stopped being committed; install "
                "yours with hystmech.plugins.exudyn.set_post_step (or before add_element "
                "/ before mbs.Assemble())")

    def _start(self, mbs, t):
        """A solve starts (its first post-step call or force evaluation): take over a
        foreign post-step function, read the solver settings, load every compiled
        slot's committed state from the data coordinates (anchor it at the current u
        if the data node is fresh)."""
        self._starting = True
        try:
            self._start_unguarded(mbs, t)
        finally:
            self._starting = False

    def _start_unguarded(self, mbs, t):
        self._ltg()
        self.adopt_post_step()
        self.refuse_adaptive(mbs)
        st = mbs.sys.get("simulationSettings")
        pre = mbs.GetPreStepUserFunction()
        pre = pre.get("function") if isinstance(pre, dict) else pre
        self._sync_every = (st is None or (pre is not None and pre != 0)
                            or (self.user_post is not None
                                and self.user_post is not self.recorder))
        if st is None:
            # solved by other means than exudyn.SolveDynamic: nothing known about the
            # solver, so commit from the measured u (correct, slower)
            self._measured, self._t_end, windowed = True, np.inf, False
        else:
            ti = st.timeIntegration
            solver = str(ti.solverType).split(".")[-1]
            implicit = solver in ("GeneralizedAlpha", "TrapezoidalIndex2")
            # explicit solvers evaluate the forces last at the accepted state only
            # with their end-of-step accelerations
            self._measured = (not implicit
                              and not ti.explicit.computeEndOfStepAccelerations)
            self._t_end = float(ti.endTime)
            windowed = not implicit and solver not in ADAPTIVE
        h = self.h if (self.h_given and self.h is not None) else np.nan
        self.nat.set_solver(self.hid, h, self.h_given, bool(windowed and
                                                            (not self.h_given
                                                             or self.h is not None)))
        D = np.array(mbs.systemData.GetDataCoordinates())
        for sid, it in self.slots.items():
            s = D[it.ltg]
            if s[0] == 0.0:
                s[0], s[1], s[2] = 1.0, it.measure(mbs)[0] - it.u0, t
                D[it.ltg] = s
            x = np.ascontiguousarray(s[HDR:])
            self.nat.anchor(sid, x.ctypes.data, float(s[1]), float(s[2]))
        mbs.systemData.SetDataCoordinates(D)
        self.live = True
        self._t_post = None
        self._verify = 3
        # the last step's time, up to the rounding of t_start + n·h
        self._t_last_step = (self._t_end - 1e-12 * max(1.0, abs(self._t_end))
                             if np.isfinite(self._t_end) else np.inf)

    def _commit_native(self, mbs, t):
        nat, hid = self.nat, self.hid
        # a solve's first post-step call (also after states anchored by a force
        # evaluation before it: GeneralizedAlpha's initial accelerations, or a reader
        # outside any solve) reads this solve's settings
        if not self.live or self._t_post is None or t <= self._t_post:
            self._start(mbs, t)
        else:
            if self._verify > 0:
                # the first steps of a solve: the latest evaluation must be at the
                # measured u; if this solver's order of evaluations is other than
                # expected, commit from the measured u for the rest of the solve
                self._verify -= 1
                for sid, it in self.slots.items():
                    tl, ul, ok = nat.last(sid)
                    if ok and tl == t and ul != it.measure(mbs)[0] - it.u0:
                        self._measured = True
            r = nat.commit(hid, t, not self._measured)
            self._after_commit(mbs, t, r)
        self._t_post = t
        self._tail(mbs, t)

    def _after_commit(self, mbs, t, r):
        """The compiled commit's result r: errors, slots to commit from the measured u
        (r > 0), the inferred step."""
        nat, hid = self.nat, self.hid
        if r == -1:
            raise RuntimeError(
                "hystmech: the step length changed at three consecutive steps (an "
                "adaptive solver): route='commit' elements cannot honour its "
                "tolerance; use route='ode1' (smooth laws) or a fixed-step solver "
                "(RK44, GeneralizedAlpha)")
        if r == -2:
            raise RuntimeError(f"hystmech: at t = {t:g} s: {nat.take_error(hid)}")
        if r > 0:
            for sid in nat.needs(hid, t):
                it = self.slots[sid]
                nat.commit_at(sid, it.measure(mbs)[0], t)
        if not self.h_given:
            h = nat.h(hid)
            self.h = None if np.isnan(h) else h

    def _tail(self, mbs, t):
        if t >= self._t_last_step:
            self.finish(mbs)
            return
        if self._sync_every:
            self.sync(mbs)
        # nothing left for Python per step: the compiled post-step function commits
        # alone until the solve's last step (Python again from there on)
        fast = (self.live and self._verify == 0 and not self._sync_every
                and not self._measured and self.n_python == 0 and self.user_post is None)
        self.nat.set_fast(self.hid, fast, self._t_last_step)

    def sync(self, mbs):
        """Write the compiled slots' committed states into their data nodes (so that
        the system state, restart files and the readers carry them)."""
        if self.hid is None or not self.live:
            return
        self._ltg()
        D = np.array(mbs.systemData.GetDataCoordinates())
        for sid, it in self.slots.items():
            x = self.committed(sid)
            if x is not None:
                D[it.ltg] = x
        mbs.systemData.SetDataCoordinates(D)

    def committed(self, sid):
        """[1, u_c, t_c, x...] of a compiled slot anchored in this solve, else None."""
        it = self.slots[sid]
        out = np.empty(HDR + it.element.n_states)
        x = out[HDR:]
        uc, tc, anchored = self.nat.committed(sid, x.ctypes.data)
        if not anchored:
            return None
        out[0], out[1], out[2] = 1.0, uc, tc
        return out

    def finish(self, mbs):
        """The solve ended: write the states to the data nodes; the next solve loads
        them from there (a restart from a saved system state included)."""
        if self.hid is not None and self.live:
            self.sync(mbs)
            self.nat.release(self.hid)
            self.nat.set_fast(self.hid, False, np.inf)
            self.live = False

    def trial_function(self, it: _Item):
        """The spring-force user function of one element: trial on a copy.

        Laws with switch points (relay thresholds, Masing faces, Preisach corners):
        RK44's pointwise stage forces place a jump inside the step up to h/2 off (an
        O(h) error per switch). Exudyn calls the first stage at the committed (t_n, u_n,
        v_n); when a switch point lies in the step's predicted window u_n + v_n·s,
        s ∈ [0, h], that stage and every later one of the step return the mean force
        over the window, cut at the switch points. RK44 integrates that constant
        exactly, and the predicted switch time is off by O(h²), so the switch costs
        O(h²) per event instead of O(h). No switch in the window (or h unknown, or an
        implicit solver with no stage at t_n): the plain trial, unchanged."""
        adv, frc, p, rtol, sw = it.advance, it.force, it.p, it.rtol, it.sw
        law = it.element

        u0 = it.u0

        def uf(mbs, t, itemNumber, u, v, k, d, offset):
            if not self._ltg_ready:
                self._ltg()
            u -= u0
            s = it.cache
            if s is None or t < s[2]:
                # no commit seen yet in this solve (or a restart to an earlier time):
                # the committed state from the system's data coordinates
                s = it.cache = np.asarray(mbs.systemData.GetDataCoordinates())[it.ltg]
            x = s[HDR:].copy()
            self.calls += 1
            if s[0] == 0.0:
                # not anchored: hystmech's commit did not run at the solve's start
                # (Exudyn calls the post-step function once at t_start), so a user
                # replaced it: chain theirs and anchor here, at the solve's first force
                # evaluation (t_start, u_start under every Exudyn solver)
                if self.adopt_post_step():
                    D = np.array(mbs.systemData.GetDataCoordinates())
                    for j in self.items:
                        if j.route == "commit":
                            sj = D[j.ltg]
                            sj[0], sj[1], sj[2] = 1.0, j.measure(mbs)[0] - j.u0, t
                            D[j.ltg] = sj
                    mbs.systemData.SetDataCoordinates(D)
                    for j in self.items:
                        j.cache = D[j.ltg] if j.route == "commit" else None
                    s = it.cache
                    x = s[HDR:].copy()
                    self.refuse_adaptive(mbs)
            elif self.calls > 256 and self.calls % 256 == 1:
                if not self._ours(mbs.GetPostStepUserFunction().get("function")):
                    raise RuntimeError(
                        "hystmech: the system's post-step user function was replaced "
                        "after the elements were anchored, so their states stopped being "
                        "committed; install yours with hystmech.plugins.exudyn."
                        "set_post_step (or before add_element / before mbs.Assemble())")
            if s[0] != 0.0:
                uc = float(s[1])
                tc = float(s[2])
                dt = t - tc
                if sw is not None:
                    h = self.h
                    if dt == 0.0 and u == uc:
                        # the step's first stage: decide the window once per step
                        it.mean = None
                        if h is not None and v != 0.0:
                            dr = 1.0 if v > 0.0 else -1.0
                            ue = uc + v * h
                            if ue != uc and inside(sw(x, uc, dr), uc, ue, dr):
                                it.mean = (tc, uc, mean_force(law, sw, x.copy(), uc, ue, h,
                                                              v, rtol))
                    m = it.mean
                    if m is not None and m[0] == tc and m[1] == uc and h is not None \
                            and 0.0 <= dt <= h * (1.0 + 1e-9):
                        return m[2]
                if dt > 0.0:
                    adv(x, uc, u, dt, (u - uc) / dt, p, rtol)
                elif u != uc:
                    adv(x, uc, u, 0.0, v, p, rtol)
            return float(frc(x, u, v, p))
        return uf


def _host(mbs) -> Host:
    h = mbs.sys.get("hystmech_host")
    if h is None:
        h = Host(mbs)
        mbs.sys["hystmech_host"] = h
        if not h.adopt_post_step():
            mbs.SetPostStepUserFunction(h.post_step)
    return h


def set_post_step(mbs, function):
    """Install ``function(mbs, t) -> bool`` as the system's post-step user function,
    run after hystmech's commit of the elements' states (Exudyn holds only one;
    ``mbs.SetPostStepUserFunction`` before or after ``add_element`` is chained too)."""
    h = _host(mbs)
    h.user_post = function
    h.install_post_step()


# marker types Exudyn accepts for a position (translation) and an orientation (rotation)
_POSITION = ("BodyPosition", "NodePosition", "BodyRigid", "NodeRigid")
_RIGID = ("BodyRigid", "NodeRigid")


def _unit_axis(axis, what):
    try:
        a = np.asarray(axis, dtype=float).ravel()
    except (TypeError, ValueError):
        a = np.empty(0)
    if a.size != 3 or not np.all(np.isfinite(a)):
        raise ValueError(f"{what} must be 3 finite numbers (a direction in global "
                         f"coordinates; got {axis!r})")
    n = float(np.linalg.norm(a))
    if not n > 1e-12:
        raise ValueError(f"{what} must have a nonzero length (got {axis!r})")
    return a / n


def _types(mbs, markers):
    types = []
    for m in markers:
        try:
            types.append(mbs.GetMarker(m)["markerType"])
        except Exception:
            raise ValueError(f"markers: no marker {m} in this system") from None
    return types


def _marker_types(mbs, markers, allowed, what):
    types = _types(mbs, markers)
    bad = [(m, t) for m, t in zip(markers, types) if t not in allowed]
    if bad:
        raise ValueError(f"markers {bad} have the wrong type for {what}: need "
                         f"{' or '.join('Marker' + a for a in allowed)}")


def _frame(a):
    """A rotation matrix whose third column is the unit vector a."""
    e = np.eye(3)[int(np.argmin(np.abs(a)))]
    b1 = np.cross(a, e)
    b1 /= np.linalg.norm(b1)
    return np.column_stack([b1, np.cross(a, b1), a])


def add_element(mbs, element: ForceElement, markers, *, name: str | None = None,
                x0=None, route: str = "commit", rtol: float = 1e-8,
                u0: float = 0.0, axis=None, rotation_axis=None) -> Element:
    """Add the force element ``element`` between the markers ``markers = [m0, m1]`` of
    the Exudyn MainSystem ``mbs`` (before ``mbs.Assemble()``). Three joints:

    * coordinate markers (default; ``MarkerNodeCoordinate`` ...): a
      ``CoordinateSpringDamper``, u = q(m1) − q(m0) [m or rad], F [N or N·m] acts as
      −F on m1, +F on m0;
    * ``axis=[ax, ay, az]`` with two position markers (``MarkerBodyPosition``,
      ``MarkerNodePosition``, or rigid markers; ground: a marker on ``ObjectGround``):
      a translational element along the fixed global direction ``axis`` (its length is
      ignored), a ``CartesianSpringDamper``: u = (p1 − p1_ref − p0 + p0_ref)·axis [m],
      v = (ṗ1 − ṗ0)·axis, force −F·axis on m1 and +F·axis on m0 [N];
    * ``rotation_axis=[ax, ay, az]`` with two rigid markers (``MarkerBodyRigid``,
      ``MarkerNodeRigid``): a torsional element, a ``TorsionalSpringDamper`` about the
      direction ``rotation_axis`` (global, in the reference configuration, fixed in
      both bodies): u = relative rotation of m1 against m0 about it [rad] (continuous
      over turns), moment −F on m1 and +F on m0 [N·m]. Exudyn measures the angle about
      the joint axis only: exact for a relative rotation about that axis (a revolute
      joint), a projection otherwise. Two markers with that orientation are added.

    u is measured from the reference configuration (plugins/convention.py); ``u0`` [m
    or rad] shifts its origin (u − u0). ``route``: "commit" (trial/commit, any law,
    fixed-step solvers) or "ode1" (smooth laws, state integrated by the solver, also
    adaptive solvers). ``x0`` overrides the initial state; ``rtol`` the segment
    tolerance. Returns an :class:`Element` handle (an int: the connector index)."""
    exu = engine("exudyn")
    from exudyn.itemInterface import (CartesianSpringDamper, CoordinateSpringDamper,
                                      NodeGenericData, NodeGenericODE1, NodeGenericODE2,
                                      ObjectGenericODE1, ObjectGenericODE2,
                                      TorsionalSpringDamper)

    if not isinstance(element, ForceElement):
        raise ValueError(f"element must be a hystmech force element (got {type(element).__name__})")
    if route not in ("commit", "ode1"):
        raise ValueError(f"route must be 'commit' or 'ode1' (got {route!r})")
    if route == "ode1" and element.kind != "smooth":
        raise ValueError(f"route 'ode1' needs a smooth law; {element.name} is an "
                         f"{element.kind}: use route='commit' with a fixed-step solver")
    try:
        m0, m1 = (int(m) for m in markers)
    except (TypeError, ValueError):
        raise ValueError(f"markers must be two marker indices (got {markers!r})") from None
    if not (isinstance(rtol, (int, float)) and 0 < rtol < 1):
        raise ValueError(f"rtol must be in (0, 1) (got {rtol!r})")
    if not (isinstance(u0, (int, float)) and np.isfinite(u0)):
        raise ValueError(f"u0 must be a finite number [m or rad] (got {u0!r})")
    if axis is not None and rotation_axis is not None:
        raise ValueError("give axis (translation) or rotation_axis (torsion), not both")
    xs = element.x0.copy() if x0 is None else np.asarray(x0, dtype=float).ravel()
    if xs.size != element.n_states or not np.all(np.isfinite(xs)):
        raise ValueError(f"x0 must hold {element.n_states} finite value(s)")
    OV = exu.OutputVariableType
    if axis is None and rotation_axis is None:
        pos = [t for t in _types(mbs, (m0, m1)) if t in _POSITION]
        if len(pos) == 2:
            raise ValueError("markers are position/rigid markers: give axis=[ax, ay, az] "
                             "(translational element) or rotation_axis= (torsional, rigid "
                             "markers); without them the markers must be coordinate markers")
    if axis is not None:
        a = _unit_axis(axis, "axis")
        _marker_types(mbs, (m0, m1), _POSITION, "a translational element (axis)")
        ref = exu.ConfigurationType.Reference
        a0, a1, a2 = (float(c) for c in a)
        uref = float(_dot3(mbs.GetMarkerOutput(m1, OV.Position, configuration=ref)
                           - mbs.GetMarkerOutput(m0, OV.Position, configuration=ref),
                           a0, a1, a2))
    elif rotation_axis is not None:
        a = _unit_axis(rotation_axis, "rotation_axis")
        _marker_types(mbs, (m0, m1), _RIGID, "a torsional element (rotation_axis)")
        R = _frame(a)
        ref = exu.ConfigurationType.Reference
        mk = []
        for m in (m0, m1):
            # a marker of the same body/node turned so that its local z is the axis in
            # the reference configuration: Exudyn's idiom (localHT) for the joint frame
            A = np.asarray(mbs.GetMarkerOutput(m, OV.RotationMatrix, configuration=ref),
                           dtype=float).reshape(3, 3)
            d = dict(mbs.GetMarker(m))
            d.pop("name", None)
            H = np.array(d["localHT"], dtype=float)
            H[:3, :3] = H[:3, :3] @ (A.T @ R)
            d["localHT"] = H
            mk.append(mbs.AddMarker(d))
    host = _host(mbs)
    it = _Item()
    it.element, it.route, it.rtol = element, route, float(rtol)
    it.p, it.advance, it.force = element.p, element.advance, element.force
    it.name = name or f"hystmech{len(host.items)}"
    it.sw = switch_of(element) if route == "commit" else None
    it.mean = None
    it.u0 = float(u0)
    it.cache = None
    it.node = it.ode_node = it.ltg = it.slot = it.oslot = None
    it.state_t = False
    lay = None
    if route == "ode1" and xs.size and axis is None and rotation_axis is None:
        lay = _ode_layout(mbs, m0, m1, xs.size)
        it.oslot = host.ode_slot(it, lay[1:] if lay is not None else None)
    if it.oslot is not None:
        # compiled adaptive route: the state is the velocity of a unit-mass ODE2 node,
        # one ObjectGenericODE2 returns the force and the rate (exudyn_host.cpp, OdeSlot)
        n = xs.size
        nodes, nq, i0, i1, ix = lay
        it.ode_node = mbs.AddNode(NodeGenericODE2(
            name=f"{it.name}.state", numberOfODE2Coordinates=n, referenceCoordinates=[0.0] * n,
            initialCoordinates=[0.0] * n, initialCoordinates_t=list(xs)))
        it.state_t = True
        M = np.zeros((nq, nq))
        M[ix:, ix:] = np.eye(n)
        it.connector = mbs.AddObject(ObjectGenericODE2(
            name=it.name, nodeNumbers=nodes + [it.ode_node], massMatrix=M,
            forceUserFunction=host.nat.generic))
        host.nat.set_ode_item(it.oslot, int(it.connector))
        q_of = [(mbs.GetMarker(m)["nodeNumber"], mbs.GetMarker(m)["coordinate"], i >= 0)
                for m, i in ((m0, i0), (m1, i1))]

        def ode_measure(mbs):
            uv = [0.0, 0.0]
            for sgn, (nd, c, live) in zip((-1.0, 1.0), q_of):
                if live:
                    uv[0] += sgn * float(np.ravel(mbs.GetNodeOutput(nd, OV.Coordinates))[c])
                    uv[1] += sgn * float(np.ravel(mbs.GetNodeOutput(nd, OV.Coordinates_t))[c])
            return uv[0], uv[1]
    elif route == "commit":
        it.node = mbs.AddNode(NodeGenericData(
            name=f"{it.name}.state", numberOfDataCoordinates=HDR + xs.size,
            initialCoordinates=[0.0, 0.0, 0.0] + list(xs)))
        uf = host.trial_function(it)
        # the compiled trial (no Python per force evaluation) when it can be built
        it.slot = host.native_slot(it, xs)
    elif xs.size == 0:
        # a stateless law (LinearSpring ...): Exudyn has no node of zero coordinates
        p, x_none = element.p, np.empty(0)

        def uf(mbs, t, itemNumber, u, v, k, d, offset):
            return float(it.force(x_none, u - it.u0, v, p))
    else:
        n = xs.size
        it.ode_node = mbs.AddNode(NodeGenericODE1(
            name=f"{it.name}.state", referenceCoordinates=[0.0] * n,
            initialCoordinates=list(xs), numberOfODE1Coordinates=n))
        rate = element.rate
        p = element.p

        def uf(mbs, t, itemNumber, u, v, k, d, offset):
            x = np.asarray(mbs.GetNodeOutput(it.ode_node, exu.OutputVariableType.Coordinates))
            return float(it.force(np.ascontiguousarray(x, dtype=float), u - it.u0, v, p))

        def rhs(mbs, t, itemNumber, q):
            u, v = it.measure(mbs)
            u -= it.u0
            out = np.empty(n)
            rate(np.ascontiguousarray(q, dtype=float), u, v, p, out)
            return out

        mbs.AddObject(ObjectGenericODE1(name=f"{it.name}.ode", nodeNumbers=[it.ode_node],
                                        systemMatrix=np.zeros((n, n)), rhsVector=[0.0] * n,
                                        rhsUserFunction=rhs))
    nat, sid = host.nat, it.slot
    if it.oslot is not None:
        measure = ode_measure
    elif axis is not None:
        f1 = uf

        def puf(mbs, t, itemNumber, d, v, k, c, offset):
            F = f1(mbs, t, itemNumber, _dot3(d, a0, a1, a2) - uref, _dot3(v, a0, a1, a2),
                   0.0, 0.0, 0.0)
            # Exudyn applies −f on m1, +f on m0
            return [F * a0, F * a1, F * a2]

        def measure(mbs):
            return (_dot3(mbs.GetObjectOutput(it.connector, OV.Displacement), a0, a1, a2)
                    - uref, _dot3(mbs.GetObjectOutput(it.connector, OV.Velocity), a0, a1, a2))

        if sid is None:
            it.connector = mbs.AddObject(CartesianSpringDamper(
                name=it.name, markerNumbers=[m0, m1], springForceUserFunction=puf))
        else:
            # the slot number rides in stiffness[0], its tag in damping[0] (unused with
            # a user function)
            it.connector = mbs.AddObject(CartesianSpringDamper(
                name=it.name, markerNumbers=[m0, m1], stiffness=[float(sid), 0.0, 0.0],
                damping=[it.tag, 0.0, 0.0], springForceUserFunction=nat.cartesian))
            nat.set_axis(sid, a0, a1, a2, uref)
    elif rotation_axis is not None:
        f1 = uf

        def tuf(mbs, t, itemNumber, rotation, angularVelocity, k, d, offset):
            return f1(mbs, t, itemNumber, rotation, angularVelocity, 0.0, 0.0, 0.0)

        def measure(mbs):
            return (float(mbs.GetObjectOutput(it.connector, OV.Rotation)),
                    float(mbs.GetObjectOutput(it.connector, OV.AngularVelocityLocal)))

        # the data node lets Exudyn count turns (continuous angle beyond ±π)
        turns = mbs.AddNode(NodeGenericData(name=f"{it.name}.turns",
                                            numberOfDataCoordinates=1,
                                            initialCoordinates=[0.0]))
        # the compiled slot number rides in offset, its tag in damping (unused with a
        # user function)
        it.connector = mbs.AddObject(TorsionalSpringDamper(
            name=it.name, markerNumbers=mk, nodeNumber=turns,
            **({"springTorqueUserFunction": tuf} if sid is None else
               {"springTorqueUserFunction": nat.spring, "offset": float(sid),
                "damping": it.tag})))
    else:
        def measure(mbs):
            return (float(mbs.GetObjectOutput(it.connector, OV.Displacement)),
                    float(mbs.GetObjectOutput(it.connector, OV.Velocity)))

        # the compiled slot number rides in offset, its tag in damping (unused with a
        # user function)
        it.connector = mbs.AddObject(CoordinateSpringDamper(
            name=it.name, markerNumbers=[m0, m1], stiffness=0.0,
            **({"springForceUserFunction": uf, "damping": 0.0} if sid is None else
               {"springForceUserFunction": nat.spring, "offset": float(sid),
                "damping": it.tag})))
    if sid is not None:
        nat.set_item(sid, int(it.connector))
    it.measure = measure
    host.items.append(it)
    host.n_python += it.route == "commit" and it.slot is None
    host.install_post_step()
    host._ltg_ready = False
    # a new element: the next post-step call or force evaluation anchors every slot
    host.live = False
    return Element(it.connector, mbs, it)


# node types whose coordinates are all ODE2 coordinates (an ObjectGenericODE2 may span them)
_ODE2_NODES = {"GenericODE2": None, "Point": 3, "Point2D": 2}


def _ode_layout(mbs, m0, m1, n):
    """(nodes, nq, i0, i1, ix) of the compiled adaptive route's ObjectGenericODE2: the
    markers' nodes, the length of its coordinate vector (the n states last, from ix),
    u's coordinate indices in it (-1: a ground marker); None when a marker is not a
    coordinate marker on such a node or on ground."""
    nodes, off, idx, nq = [], {}, [], 0
    for m in (m0, m1):
        d = mbs.GetMarker(m)
        if d.get("markerType") != "NodeCoordinate":
            return None
        nd, c = int(d["nodeNumber"]), int(d["coordinate"])
        nt = mbs.GetNode(nd)["nodeType"]
        if nt == "PointGround":
            idx.append(-1)
            continue
        if nt not in _ODE2_NODES:
            return None
        if nd not in off:
            k = _ODE2_NODES[nt]
            k = int(mbs.GetNode(nd)["numberOfODE2Coordinates"]) if k is None else k
            off[nd] = nq
            nodes.append(nd)
            nq += k
        idx.append(off[nd] + c)
    if idx == [-1, -1]:
        return None
    return nodes, nq + n, idx[0], idx[1], nq


def _dot3(d, a0, a1, a2):
    # the same arithmetic in the force call and in the commit, so that the step's first
    # stage is recognised (u equal to the committed u, bit for bit)
    return float(d[0]) * a0 + float(d[1]) * a1 + float(d[2]) * a2


def _item(mbs, name) -> _Item:
    for it in _host(mbs).items:
        if it.name == name or it.connector == name:
            return it
    raise ValueError(f"no hystmech element named {name!r} in this system")


def element_state(mbs, name) -> np.ndarray:
    """The committed state of element ``name`` (its name or connector index)."""
    exu = engine("exudyn")
    it = _item(mbs, name)
    if it.route == "ode1":
        if it.ode_node is None:
            return np.empty(0)
        OV = exu.OutputVariableType
        return np.array(mbs.GetNodeOutput(it.ode_node,
                                          OV.Coordinates_t if it.state_t else OV.Coordinates))
    host = _host(mbs)
    if it.slot is not None and host.live:
        s = host.committed(it.slot)
        if s is not None:
            return s[HDR:]
    host._ltg()
    return np.array(np.asarray(mbs.systemData.GetDataCoordinates())[it.ltg][HDR:])


def element_force(mbs, name) -> float:
    """The force [N] of element ``name`` at its committed state, current u and v."""
    exu = engine("exudyn")
    it = _item(mbs, name)
    u, v = it.measure(mbs)
    u -= it.u0
    return float(it.force(np.ascontiguousarray(element_state(mbs, name)), u, v, it.p))


def from_assembly(assembly, *, route: str = "commit"):
    """Build a hystmech :class:`~hystmech.systems.Assembly` (DOFs, springs with preload,
    dampers, force elements, external forces, gravity) as an Exudyn system; returns
    ``(SC, mbs, nodes)`` with ``nodes`` mapping each DOF name to its NodeGenericODE2
    and each element name to its connector. Imposed DOFs are not supported."""
    exu = engine("exudyn")
    from exudyn.itemInterface import (CoordinateSpringDamper, LoadCoordinate,
                                      MarkerNodeCoordinate, NodeGenericODE2,
                                      NodePointGround, ObjectGenericODE2)

    from ..systems.assembly import GROUND, Harmonic

    if assembly.imposed:
        raise ValueError("from_assembly: imposed DOFs are not supported (give them a "
                         "mass and a force, or build the Exudyn system by hand)")
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    ground = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=mbs.AddNode(NodePointGround()),
                                                coordinate=0))
    nodes, mk = {}, {GROUND: ground}
    for d in assembly.dofs.values():
        n = mbs.AddNode(NodeGenericODE2(name=d.name, numberOfODE2Coordinates=1,
                                        referenceCoordinates=[0.0], initialCoordinates=[d.x0],
                                        initialCoordinates_t=[d.v0]))
        mbs.AddObject(ObjectGenericODE2(nodeNumbers=[n], massMatrix=[[d.mass]]))
        nodes[d.name] = n
        mk[d.name] = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=n, coordinate=0))
        if assembly.gravity != 0.0:
            mbs.AddLoad(LoadCoordinate(markerNumber=mk[d.name], load=d.mass * assembly.gravity))
    for s in assembly.springs:
        mbs.AddObject(CoordinateSpringDamper(name=s.name, markerNumbers=[mk[s.b], mk[s.a]],
                                             stiffness=s.k, offset=s.u0))
        if s.preload != 0.0:
            # F = k(u − u0) + preload acts as −F on a, +F on b
            mbs.AddLoad(LoadCoordinate(markerNumber=mk[s.a], load=-s.preload))
            if s.b != GROUND:
                mbs.AddLoad(LoadCoordinate(markerNumber=mk[s.b], load=s.preload))
    for d in assembly.dampers:
        mbs.AddObject(CoordinateSpringDamper(name=d.name, markerNumbers=[mk[d.b], mk[d.a]],
                                             damping=d.c))
    for e in assembly.elements:
        nodes[e.name] = add_element(mbs, e.element, [mk[e.b], mk[e.a]], name=e.name, x0=e.x0,
                                    route=route)
    for f in assembly.forces:
        if isinstance(f.f, (int, float)):
            mbs.AddLoad(LoadCoordinate(name=f.name, markerNumber=mk[f.dof], load=float(f.f)))
        else:
            fn = f.f
            if isinstance(fn, Harmonic):
                f0, A, w, ph = fn.f0, fn.amplitude, fn.omega, fn.phase
                import math

                def fn(t, f0=f0, A=A, w=w, ph=ph):
                    return f0 + A * math.cos(w * t + ph)
            mbs.AddLoad(LoadCoordinate(name=f.name, markerNumber=mk[f.dof], load=0.0,
                                       loadUserFunction=lambda mbs, t, load, fn=fn: float(fn(t))))
    return SC, mbs, nodes


def simulate(SC, mbs, t_end: float, h: float, *, t_start: float = 0.0, solver: str = "RK44",
             record=(), rtol: float = 1e-10, atol: float = 1e-12, assemble: bool = True):
    """Assemble and solve ``mbs`` from ``t_start`` to ``t_end`` [s] with Exudyn's ``solver``
    (fixed step ``h`` [s]; for "DOPRI5" h is the largest step and rtol/atol the
    tolerances); returns (t, X, V) with X[:, j], V[:, j] the coordinate and velocity
    of node record[j] after
    every accepted step (including t_start). ``assemble=False`` keeps the initial
    state set by ``mbs.systemData.SetSystemState(state, ConfigurationType.Initial)``
    (a restart)."""
    exu = engine("exudyn")
    out = []
    nodes = list(record)

    def rec(mbs_, t):
        row = [t]
        for n in nodes:
            row.append(float(np.ravel(mbs_.GetNodeOutput(n, C))[0]))
            row.append(float(np.ravel(mbs_.GetNodeOutput(n, Ct))[0]))
        out.append(row)
        return True

    C, Ct = exu.OutputVariableType.Coordinates, exu.OutputVariableType.Coordinates_t
    set_post_step(mbs, rec)
    # reads node coordinates only: the compiled states need not be written every step
    _host(mbs).recorder = rec
    if assemble:
        mbs.Assemble()
    sim = exu.SimulationSettings()
    if not (t_end > t_start and h > 0):
        raise ValueError(f"need t_end > t_start and h > 0 (got {t_start}, {t_end}, {h})")
    if solver not in exu.DynamicSolverType.__members__:
        raise ValueError(f"solver must be one of {list(exu.DynamicSolverType.__members__)} "
                         f"(got {solver!r})")
    commit = [it.name for it in _host(mbs).items if it.route == "commit"]
    if solver in ADAPTIVE and commit:
        raise ValueError(f"solver {solver!r} is adaptive: the route='commit' element(s) "
                         f"{commit} cannot honour its tolerance (their states are not in "
                         f"its error estimate); use route='ode1' (smooth laws) or a "
                         f"fixed-step solver (RK44, GeneralizedAlpha)")
    sim.timeIntegration.numberOfSteps = int(round((t_end - t_start) / h))
    sim.timeIntegration.startTime = t_start
    sim.timeIntegration.endTime = t_end
    sim.solution.file.write = False
    sim.timeIntegration.verboseMode = 0
    host = _host(mbs)
    # the fixed step of the step-mean force at switch points: explicit fixed-step
    # solvers only (an implicit solver has no stage at t_n, DOPRI5 no fixed step)
    explicit = solver not in ADAPTIVE + ("GeneralizedAlpha", "TrapezoidalIndex2")
    host.h = (t_end - t_start) / sim.timeIntegration.numberOfSteps if explicit else None
    host.h_given = True
    if solver in ADAPTIVE:
        sim.timeIntegration.automaticStepSize = True
        sim.timeIntegration.relativeTolerance = rtol
        sim.timeIntegration.absoluteTolerance = atol
    try:
        exu.SolveDynamic(mbs, sim, solverType=exu.DynamicSolverType.__members__[solver])
    finally:
        host.finish(mbs)
    A = np.array(out)
    return A[:, 0], A[:, 1::2], A[:, 2::2]
