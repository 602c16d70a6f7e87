"""Model exchange as a Modelica tool runs it: a host integrator (scipy's DOP853 stepped by
hand) drives the exported FMU through fmpy's low-level FMU2Model API with continuous
inputs u(t), v(t) = u'(t), locates sign changes of the event indicators on its dense
output, handles events (fmi2EnterEventMode / fmi2NewDiscreteStates) and calls
fmi2CompletedIntegratorStep after every accepted step. Inclusions and operators change
their memory only in event mode (FMI 2.0 §3.1); the truth is hystmech.drive on a fine
grid that holds every turning point of u exactly (exact for the rate-independent laws:
their state depends only on the sequence of input extrema)."""
import math

import numpy as np
import pytest
from scipy.integrate import DOP853
from scipy.optimize import brentq

import hystmech
from hystmech.components import get_element_class
from fmu_probe import open_fmi2, to_continuous_time
from test_fmu_cases import available

CASES = dict(available())
# sums of an inclusion and smooth laws: the smooth parts' states are continuous states
# of the FMU (integrated by the host), the Masing part moves with the anchor
CASES["MasingDahl"] = (lambda: CASES["Masing"][0]() + CASES["Dahl"][0](), 0.002, 2.0)
CASES["MasingLuGre"] = (lambda: CASES["Masing"][0]() + CASES["LuGre"][0](), 0.002, 2.0)
NONSMOOTH = [n for n in ("Masing", "MaxwellSlip", "Relay", "Preisach", "PreisachContinuous",
                         "CableLaw", "MasingDahl", "MasingLuGre") if n in CASES]


def _signal(amp, freq):
    w = 2 * np.pi * freq

    def u(t):
        return amp * (np.sin(w * t) + 0.3 * np.sin(3.7 * w * t + 0.4))

    def v(t):
        return amp * w * (np.cos(w * t) + 1.11 * np.cos(3.7 * w * t + 0.4))

    return u, v


def _truth(el, u, v, t_out, T):
    """drive() on a fine grid holding t_out and every zero of v (the turning points)."""
    g = np.linspace(0.0, T, 40001)
    vg = v(g)
    turns = [brentq(v, a, b, xtol=1e-15) for a, b, va, vb in zip(g[:-1], g[1:], vg[:-1], vg[1:])
             if va * vb < 0]
    grid = np.unique(np.concatenate([g, turns, t_out]))
    res = hystmech.drive(el, grid, u(grid), rtol=1e-12)
    idx = np.searchsorted(grid, t_out)
    X = np.asarray(res.state)
    if X.ndim < 2 or X.shape[1] != el.n_states:  # memory not reported: F has no v term
        return np.asarray(res.force)[idx]
    # the force with the analytic velocity (drive uses the segment slope there)
    return np.array([el.force(X[i], u(grid[i]), v(grid[i]), el.p) for i in idx])


class MEHost:
    """A model-exchange master: DOP853 on [FMU states, ∫F dt], step by step."""

    def __init__(self, path, u, v, rtol):
        self.md, self.fmu = open_fmi2(path, "host", me=True, tolerance=rtol,
                                      start={"u": u(0.0), "v": v(0.0)})
        self.u, self.v, self.rtol = u, v, rtol
        self.nx = self.md.numberOfContinuousStates
        self.nz = self.md.numberOfEventIndicators
        self.events = 0
        self._event_iteration()
        self.fmu.enterContinuousTimeMode()

    def _inputs(self, t):
        self.fmu.setReal([1, 2], [float(self.u(t)), float(self.v(t))])

    def _event_iteration(self):
        while True:
            more, term, *_ = self.fmu.newDiscreteStates()
            assert not term
            if not more:
                break

    @staticmethod
    def _ptr(a):
        from ctypes import POINTER, c_double

        return a.ctypes.data_as(POINTER(c_double))

    def _put(self, t, y):
        f = self.fmu
        f.setTime(t)
        if self.nx:
            x = np.ascontiguousarray(y[:self.nx], dtype=float)
            f.setContinuousStates(self._ptr(x), self.nx)
        self._inputs(t)

    def rhs(self, t, y):
        self._put(t, y)
        dx = np.zeros(self.nx)
        if self.nx:
            self.fmu.getDerivatives(self._ptr(dx), self.nx)
        return np.concatenate([dx, self.fmu.getReal([3])])

    def z(self, t, y):
        self._put(t, y)
        z = np.zeros(self.nz)
        if self.nz:
            self.fmu.getEventIndicators(self._ptr(z), self.nz)
        return z

    def F(self, t, y):
        self._put(t, y)
        return self.fmu.getReal([3])[0]

    def run(self, t_out):
        """F at t_out (the integrator stops at each output time); accepted steps."""
        x0 = np.zeros(self.nx)
        if self.nx:
            self.fmu.getContinuousStates(self._ptr(x0), self.nx)
        y = np.concatenate([x0, [0.0]])
        t, out, steps = 0.0, [self.F(0.0, y)], 0
        for t_next in t_out[1:]:
            sol = DOP853(self.rhs, t, y, t_next, rtol=self.rtol, atol=1e-12 * np.maximum(
                1.0, np.abs(y)), first_step=None)
            z0 = self.z(t, y)
            while sol.status == "running":
                sol.step()
                steps += 1
                z1 = self.z(sol.t, sol.y)
                cross = np.nonzero(np.sign(z1) != np.sign(z0))[0]
                cross = [i for i in cross if z0[i] != 0.0]
                if cross:
                    dense = sol.dense_output()
                    # the earliest crossing, located to rounding; the event is handled
                    # just after it (where the sign has changed)
                    te = min(brentq(lambda s, i=i: self.z(s, dense(s))[i], sol.t_old, sol.t,
                                    xtol=1e-15, rtol=1e-15) for i in cross)
                    ta = te
                    for k in range(60):
                        zz = self.z(ta, dense(ta))
                        if any(np.sign(zz[i]) != np.sign(z0[i]) for i in cross):
                            break
                        ta = min(te + 2.0 ** k * 1e-15 * max(1.0, te), sol.t)
                    ya = dense(ta)
                    self._put(ta, ya)
                    self.fmu.enterEventMode()
                    self._event_iteration()
                    self.fmu.enterContinuousTimeMode()
                    self.events += 1
                    t, y = ta, ya
                    sol = DOP853(self.rhs, t, y, t_next, rtol=self.rtol,
                                 atol=1e-12 * np.maximum(1.0, np.abs(y)))
                    z0 = self.z(t, y)
                    continue
                self._put(sol.t, sol.y)
                enter, term = self.fmu.completedIntegratorStep()
                assert not term
                if enter:
                    self.fmu.enterEventMode()
                    self._event_iteration()
                    self.fmu.enterContinuousTimeMode()
                    self.events += 1
                z0 = self.z(sol.t, sol.y)
            assert sol.status == "finished", sol.message
            t, y = sol.t, sol.y.copy()
            out.append(self.F(t, y))
        return np.array(out), steps

    def close(self):
        self.fmu.terminate()
        self.fmu.freeInstance()


def _me_run(name, tmp_path, rtol=1e-8, periods=1.0):
    from hystmech.fmu import export_fmu

    ctor, amp, freq = CASES[name]
    el = ctor()
    u, v = _signal(amp, freq)
    T = periods / freq
    t_out = np.linspace(0.0, T, 41)
    path = export_fmu(el, tmp_path / f"{name}.fmu")
    host = MEHost(path, u, v, rtol)
    n_cont = sum(p.n_states for p in (getattr(el, "parts", None) or [el]) if p.kind == "smooth")
    assert host.nx == n_cont
    if name.startswith("Masing") and name != "Masing":
        from fmpy.validation import validate_fmu

        assert validate_fmu(str(path)) == []
    F, steps = host.run(t_out)
    host.close()
    ref = _truth(el, u, v, t_out, T)
    return F, ref, steps, host.events


@pytest.mark.parametrize("name", NONSMOOTH + ["Dahl", "BoucWen", "ModifiedDahl", "LuGre"])
def test_host_integrator_with_events_matches_drive(tmp_path, name):
    """ME error <= 1e-6 of the force scale at rtol 1e-8, for every exportable kind."""
    F, ref, steps, events = _me_run(name, tmp_path)
    scale = np.max(np.abs(ref))
    err = np.max(np.abs(F - ref))
    print(f"{name}: error {err / scale:.2e} of the force scale, {steps} steps, {events} events")
    assert err <= 1e-6 * scale


@pytest.mark.parametrize("name", ["Masing", "Preisach"])
def test_operator_step_count_within_3x_of_a_smooth_law(tmp_path, name):
    """Events restart the integrator at every switch; still the inclusion/operator
    costs at most 3x the steps of a smooth hysteresis law of the same force and input
    scale (Dahl with rho = 5/amplitude, Fc = the force scale). Measured: Masing 83,
    Preisach 170 against Dahl 144."""
    from hystmech.components import get_element_class

    _, amp, freq = CASES[name]
    F, ref, steps, events = _me_run(name, tmp_path)
    assert events > 0
    fc = float(np.max(np.abs(ref)))
    CASES["_smooth"] = (lambda: get_element_class("Dahl")(rho=5.0 / amp, Fc=fc, w0=0.0),
                        amp, freq)
    try:
        F2, ref2, steps2, _ = _me_run("_smooth", tmp_path)
    finally:
        del CASES["_smooth"]
    assert np.max(np.abs(F2 - ref2)) <= 1e-6 * np.max(np.abs(ref2))
    print(f"{name}: {steps} steps, {events} events; Dahl: {steps2} steps")
    assert steps <= 3 * steps2


def _fmpy_me(path, t, u, rtol):
    from fmpy import simulate_fmu
    from test_fmu_me_fmpy import _held_v_input

    res = simulate_fmu(str(path), fmi_type="ModelExchange", solver="CVode",
                       relative_tolerance=rtol, input=_held_v_input(t, u), output=["F"],
                       output_interval=t[1] - t[0], stop_time=t[-1])
    k = np.minimum(np.searchsorted(res["time"], t, side="left"), res.size - 1)
    return res["F"][k]


@pytest.mark.parametrize("name", [n for n in NONSMOOTH if not n.startswith("Masing")])
def test_fmpy_cvode_runs_operators_exactly(tmp_path, name):
    """fmpy.simulate_fmu (CVode) on an inclusion/operator FMU: the input is the linear
    interpolation of the samples (fmpy applies it at root-function evaluations too) with
    v stepping at the samples (input events), so the events put the anchor on every
    turning point and F equals drive() on the same samples (rate-independent laws)."""
    from hystmech.fmu import export_fmu
    from test_fmu_cases import make_input

    ctor, amp, freq = CASES[name]
    el = ctor()
    t, u = make_input(amp, freq, T=0.5, n=201)
    ref = hystmech.drive(el, t, u, rtol=1e-12).force
    # (Masing's F has c·v, whose value at an input event depends on the side of it)
    F = _fmpy_me(export_fmu(el, tmp_path / f"{name}.fmu"), t, u, 1e-8)
    assert np.max(np.abs(F - ref)) <= 1e-9 * np.max(np.abs(ref))


@pytest.mark.parametrize("name", ["Preisach", "Relay", "BoucWen"])
def test_fmi3_model_exchange_events(tmp_path, name):
    """The FMI 3.0 FMU (same core): event indicators declared as variables
    (<EventIndicator>), fmpy's FMI 3.0 CVode run equals drive as for FMI 2.0."""
    from hystmech.fmu import export_fmu
    from test_fmu_cases import make_input

    ctor, amp, freq = CASES[name]
    el = ctor()
    t, u = make_input(amp, freq, T=0.5, n=201)
    ref = hystmech.drive(el, t, u, rtol=1e-12).force
    path = export_fmu(el, tmp_path / f"{name}3.fmu", fmi_version=3)
    from fmpy import read_model_description
    md = read_model_description(str(path))
    # inclusions/operators: reversal and switch; Bouc-Wen: z = 0 (live only for n < 1)
    assert len(md.eventIndicators) == (2 if el.kind != "smooth" else 1)
    F = _fmpy_me(path, t, u, 1e-10)
    tol = 1e-9 if el.kind != "smooth" else 2e-6  # smooth: CVode's tolerance
    assert np.max(np.abs(F - ref)) <= tol * np.max(np.abs(ref))


def _cvode_run(path, u, v, t_out, rtol):
    """sundials CVode (fmpy's binding) as the host, the inputs set for every evaluation
    (fmpy's own loop sets them only at communication points and in the root function),
    events at the roots found, fmi2CompletedIntegratorStep after every output step."""
    from fmpy.sundials import CVodeSolver

    md, f = open_fmi2(path, "cv", me=True, tolerance=rtol, start={"u": u(0.0), "v": v(0.0)})

    def event():
        while True:
            more, term, *_ = f.newDiscreteStates()
            if not more:
                break

    event()
    f.enterContinuousTimeMode()

    def set_time(t):
        f.setTime(t)
        f.setReal([1, 2], [float(u(t)), float(v(t))])

    class NoInput:
        @staticmethod
        def apply(t, *a, **k):
            pass

    nx, nz = md.numberOfContinuousStates, md.numberOfEventIndicators
    solver = CVodeSolver(set_time=set_time, startTime=0.0, maxStep=float("inf"),
                         relativeTolerance=rtol, nx=nx, nz=nz, get_x=f.getContinuousStates,
                         set_x=f.setContinuousStates, get_dx=f.getDerivatives,
                         get_z=f.getEventIndicators, get_nominals=f.getNominalsOfContinuousStates,
                         input=NoInput, maxNumSteps=5000)
    t, F, events = 0.0, [f.getReal([3])[0]], 0
    for t_next in t_out[1:]:
        while t < t_next:
            state_event, roots, t = solver.step(t, t_next)
            set_time(t)
            step_event, _ = f.completedIntegratorStep()
            if state_event or step_event:
                f.enterEventMode()
                event()
                f.enterContinuousTimeMode()
                solver.reset(t)
                events += 1
        F.append(f.getReal([3])[0])
    f.terminate()
    f.freeInstance()
    return np.asarray(F), events


@pytest.mark.parametrize("name", ["ModifiedDahl", "Masing", "Preisach"])
def test_cvode_host_with_continuous_inputs(tmp_path, name):
    """CVode (BDF, as in Modelica tools) with continuous inputs: the modified Dahl law with
    the paper's mu = 0.37 (non-Lipschitz at the envelopes) integrates without failure and
    matches drive; so do the inclusion and the operator with their events."""
    from hystmech.fmu import export_fmu

    ctor, amp, freq = CASES[name]
    el = ctor()
    u, v = _signal(amp, freq)
    T = 1.0 / freq
    t_out = np.linspace(0.0, T, 41)
    F, events = _cvode_run(export_fmu(el, tmp_path / f"{name}.fmu"), u, v, t_out, 1e-9)
    ref = _truth(el, u, v, t_out, T)
    err = np.max(np.abs(F - ref)) / np.max(np.abs(ref))
    print(f"{name}: CVode error {err:.2e}, {events} events")
    assert events > 0
    assert err <= 1e-6


def test_memory_moves_only_at_events_not_in_completed_step(tmp_path):
    """Issue 20 item 6: the stored memory of an operator FMU (continuous Preisach) changes
    only in event mode. After an input history with reversals (each an event), u rises
    monotonically to u_a (F read) and on to u_b; fmi2CompletedIntegratorStep at u_b (no
    crossing, no event) must not move the memory: F at u_a read again afterwards (a host
    evaluating inside the completed step) is the same, and both equal hystmech.drive
    along the same polyline (rate independence: only the extrema matter)."""
    from hystmech.fmu import export_fmu

    el = CASES["PreisachContinuous"][0]()
    path = export_fmu(el, tmp_path / "PC.fmu")
    md, f = open_fmi2(path, "m", me=True, start={"u": 0.0, "v": 1.0})
    to_continuous_time(f)

    def event():
        f.enterEventMode()
        to_continuous_time(f)

    def go(t, u, v):
        f.setTime(t)
        f.setReal([1, 2], [u, v])

    turns = [0.0, 0.003, -0.002]  # history: up to 3 mm, down to -2 mm (memory corners)
    t = 0.0
    for k in range(1, len(turns)):
        d = 1.0 if turns[k] > turns[k - 1] else -1.0
        for s in np.linspace(turns[k - 1], turns[k], 21)[1:]:
            t += 1e-3
            go(t, float(s), d)
            enter, _ = f.completedIntegratorStep()
            if enter:
                event()
        go(t, turns[k], -d)  # the reversal: v changes sign, an event
        event()
    from ctypes import POINTER, c_double

    def z():
        out = np.zeros(md.numberOfEventIndicators)
        f.getEventIndicators(out.ctypes.data_as(POINTER(c_double)), out.size)
        return out

    ua = 0.0005  # up from -2 mm to 0.5 mm, events at the switch points on the way
    for s in np.linspace(turns[-1], ua, 41)[1:]:
        t += 1e-3
        go(t, float(s), 1.0)
        enter, _ = f.completedIntegratorStep()
        if enter:
            event()
    d = z()[1]  # distance to the next switch point (memory corner, kernel cell edge)
    assert d > 0.0
    ub, um = ua + 0.5 * d, ua + 0.25 * d
    go(t + 0.5e-3, um, 1.0)
    F_mid = f.getReal([3])[0]
    go(t + 1e-3, ub, 1.0)  # an accepted step from u_a to u_b, no crossing
    assert np.all(z() > 0.0)
    enter, _ = f.completedIntegratorStep()
    assert not enter
    go(t + 0.5e-3, um, 1.0)  # a point inside the completed step
    F_mid_after = f.getReal([3])[0]
    f.terminate()
    f.freeInstance()
    path_u = np.array(turns + [um])
    ref = hystmech.drive(el, np.arange(path_u.size, dtype=float), path_u).force[-1]
    assert F_mid == pytest.approx(ref, rel=1e-10, abs=1e-12)
    assert F_mid_after == pytest.approx(F_mid, rel=1e-13, abs=1e-15)


def test_bouc_wen_event_indicator_does_not_depend_on_n(tmp_path):
    """Issue 20 item 5: Bouc-Wen has one event indicator (z = 0, the non-Lipschitz point
    of |z|^n for n < 1) whatever n was exported with: constant for n >= 1, z itself
    when n < 1 is set before initialisation."""
    from ctypes import POINTER, c_double

    from fmpy import read_model_description

    from hystmech.fmu import export_fmu

    BW = get_element_class("BoucWen")
    p15 = export_fmu(BW(A=1e4, beta=2.0, gamma=0.5, n=1.5), tmp_path / "a.fmu")
    p05 = export_fmu(BW(A=1e4, beta=2.0, gamma=0.5, n=0.5), tmp_path / "b.fmu")
    assert [read_model_description(str(p)).numberOfEventIndicators for p in (p15, p05)] == [1, 1]

    def indicators(path, start):
        md, f = open_fmi2(path, "z", me=True, start={**start, "u": 1e-3, "v": 0.5})
        z = np.zeros(md.numberOfEventIndicators)
        f.getEventIndicators(z.ctypes.data_as(POINTER(c_double)), z.size)
        f.terminate()
        f.freeInstance()
        return z

    assert indicators(p15, {})[0] == 1.0                        # n >= 1: inactive
    assert indicators(p15, {"n": 0.5, "z0": 2.5})[0] == 2.5     # n < 1: z itself
