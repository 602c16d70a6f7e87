"""The hystmech MuJoCo plugin under MuJoCo's integrators at their default step: the LuGre
arm of the scenario mujoco-lugre-joint under implicitfast (sticks, follows the converged
trajectory), a stiff viscous Masing damper handed to MuJoCo's implicit damping, and RK4
stable wherever the equivalent native spring-damper is. References: an independent
plain-Python ODE (scipy LSODA at rtol 1e-10) and hystmech's Assembly."""
import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

mujoco = pytest.importorskip("mujoco")

from hystmech.components import get_element_class  # noqa: E402
from hystmech.plugins import mujoco as hmj  # noqa: E402
from hystmech.plugins.mujoco_cases import ARM  # noqa: E402

# the README's LuGre arm (scenarios/mujoco-lugre-joint.toml)
S0, S1, S2, FC, FS, VS = 1e5, 316.0, 0.4, 1.0, 1.5, 1e-3
KD, RATE = 2.0, 0.1
T_END = 10.6          # one stick phase, the slip, and the next stick


def lugre():
    return get_element_class("LuGre")(sigma0=S0, sigma1=S1, Fc=FC, Fs=FS, vs=VS, beta=2.0,
                                      sigma2=S2)


def arm_model(h, integrator, native=False, implicit_damping=0.0):
    xml = ARM.format(h=h, L=0.5, m=12.0, kd=KD).replace('integrator="Euler"',
                                                        f'integrator="{integrator}"')
    if native:        # the equivalent spring-damper of the sticking bristles
        xml = xml.replace('axis="0 0 1"/>', f'axis="0 0 1" stiffness="{S0}" '
                                            f'damping="{S1 + S2}"/>')
    spec = mujoco.MjSpec.from_string(xml)
    if not native:
        hmj.add_element(spec, lugre(), joint="hinge", name="friction",
                        implicit_damping=implicit_damping)
    return spec.compile()


def run_arm(model, T=T_END, qvel0=0.0):
    d = mujoco.MjData(model)
    d.qvel[0] = qvel0
    n = int(round(T / model.opt.timestep))
    q, v = np.empty(n), np.empty(n)
    for i in range(n):
        d.ctrl[0] = RATE * d.time
        mujoco.mj_step(model, d)
        q[i], v[i] = d.qpos[0], d.qvel[0]
    return q, v


def reference(J, t):
    """LuGre (Canudas de Wit et al. (1995); Ikhouane et al., eq. (1)) on the arm, as a
    plain-Python ODE: independent of hystmech."""
    def rhs(tt, y):
        q, v, z = y
        g = FC + (FS - FC) * math.exp(-(v / VS) ** 2)
        zd = v - S0 * abs(v) * z / g
        return [v, (KD * (RATE * tt - q) - (S0 * z + S1 * zd + S2 * v)) / J, zd]

    r = solve_ivp(rhs, (0.0, t[-1]), [0.0, 0.0, 0.0], method="LSODA", t_eval=t,
                  rtol=1e-10, atol=1e-13)
    assert r.success
    return r.y[0], r.y[1]


@pytest.mark.parametrize("h", [1e-3, 2e-3, 4e-3])
def test_lugre_arm_sticks_under_implicitfast(h):
    """implicitfast at h = 1e-3, MuJoCo's default 2e-3 and 4e-3: in the stick phases of
    the converged run (|v| < 1e-5 rad/s) the bristles creep at 4e-6 to 1e-5 rad/s (so
    |v| <= 1e-5 has no margin by definition, even for the exact solution); the MuJoCo
    run follows that creep to 5e-7 rad/s from 0.2 s after each phase's entry (no
    chatter; at h = 4e-3 the entry rings for less than that), keeps |qvel| <= 1e-5 over
    the whole stick set at h <= 2e-3, and the angle stays within 1 % of the converged
    trajectory over stick, slip and re-stick."""
    model = arm_model(h, "implicitfast")
    d = mujoco.MjData(model)
    mujoco.mj_forward(model, d)
    J = float(d.M[0])
    q, v = run_arm(model)
    t = np.arange(1, q.size + 1) * h
    qr, vr = reference(J, t)
    stick = np.abs(vr) < 1e-5
    assert stick.sum() > 0.5 * q.size and np.max(np.abs(vr)) > 0.3   # stick and slip
    entry = np.flatnonzero(np.diff(np.r_[0, stick.astype(int)]) == 1)   # the start too
    settled = stick.copy()
    for i in entry:
        settled[i: i + int(round(0.2 / h))] = False
    assert settled.sum() > 0.4 * q.size
    assert np.max(np.abs(v[settled] - vr[settled])) <= 5e-7
    if h <= 2e-3:
        assert np.max(np.abs(v[stick])) <= 1e-5
    assert np.max(np.abs(q - qr)) <= 0.01 * np.max(np.abs(qr))


def test_rk4_stable_where_the_spring_damper_is():
    """RK4 at h = 8e-3, where the native spring-damper (σ0, σ1 + σ2) is still stable:
    the LuGre arm stays bounded and finite through stick and slip."""
    h = 8e-3
    qn, vn = run_arm(arm_model(h, "RK4", native=True), T=2.0, qvel0=0.3)
    assert np.all(np.isfinite(vn)) and np.max(np.abs(vn[-50:])) < 1e-4 * 0.3
    # (at 1.2e-2 the native spring-damper itself diverges under RK4)
    q, v = run_arm(arm_model(h, "RK4"))
    assert np.all(np.isfinite(v)) and np.max(np.abs(v)) < 0.5
    assert np.max(np.abs(v)) > 0.3            # it did slip


M, K, C = 1.0, 400.0, 3000.0       # h·C/M = 3 at h = 1e-3: explicit damping unstable
KM, K0, ALPHA, F0, W = 2e3, 100.0, 5.0, 600.0, 4 * np.pi
H = 1e-3


def masing_run(implicit_damping, h=H, T=1.0):
    Masing = get_element_class("Masing")
    el = Masing(k=KM, k0=K0, alpha=ALPHA, c=C)
    xml = (f'<mujoco><option timestep="{h}" gravity="0 0 0" integrator="implicitfast"/>'
           f'<worldbody><body><joint name="x" type="slide" axis="1 0 0" stiffness="{K}"/>'
           f'<inertial pos="0 0 0" mass="{M}" diaginertia="1 1 1"/></body></worldbody>'
           f'</mujoco>')
    spec = mujoco.MjSpec.from_string(xml)
    hmj.add_element(spec, el, joint="x", name="m", implicit_damping=implicit_damping)
    model = spec.compile()
    d = mujoco.MjData(model)
    n = int(round(T / h))
    x = np.empty(n)
    for i in range(n):
        d.qfrc_applied[0] = F0 * math.sin(W * d.time)
        mujoco.mj_step(model, d)
        x[i] = d.qpos[0]
    return x


def masing_reference(t):
    """M ẍ = −K x − (k w + k0 x + c ẋ) + F0 sin(ωt), Masing (Bastien et al. (2007),
    eqs. (6)–(11)) in plain Python: w = x − x_s while sticking (|w| < η), w = ±η while
    slipping; slip starts when |w| reaches η, ends when ẋ changes sign (events; LSODA:
    the damping makes it stiff)."""
    eta = ALPHA / KM
    y, t0, xs, slip, out = np.zeros(2), 0.0, 0.0, 0, []

    def rhs(tt, y, xs, slip):
        w = slip * eta if slip else y[0] - xs
        return [y[1], (-K * y[0] - (KM * w + K0 * y[0] + C * y[1]) + F0 * math.sin(W * tt)) / M]

    while t0 < t[-1]:
        if slip:      # the velocity falls to 0 (slip +1) or rises to 0 (slip −1)
            ev = lambda tt, y, xs, slip: y[1]                     # noqa: E731
            ev.direction = -slip
        else:         # |w| rises to η
            ev = lambda tt, y, xs, slip: eta - abs(y[0] - xs)     # noqa: E731
            ev.direction = -1
        ev.terminal = True
        te = t[(t > t0)]
        r = solve_ivp(rhs, (t0, t[-1]), y, args=(xs, slip), t_eval=te, events=ev,
                      method="LSODA", rtol=1e-11, atol=1e-14)
        if r.y.size:
            out.append(r.y[0])
        if r.status != 1:
            break
        t0, y = r.t_events[0][0], r.y_events[0][0]
        if slip:      # velocity reversal: stick with w = ±η at the current x
            xs, slip = y[0] - slip * eta, 0
        else:         # |w| reached η: slip in the direction of motion
            slip = 1 if y[1] > 0 else -1
    return np.concatenate(out)[: t.size]


def test_stiff_viscous_part_through_implicit_damping(tmp_path, monkeypatch):
    """Masing with a viscous c where h·c/m = 3: handed to MuJoCo's implicit damping
    (implicit_damping = c: the joint's damping += c, the plugin returns F − c·v) the run
    is stable and within 1 % of an independent event-driven reference; left in the
    explicit plugin force the same run diverges."""
    monkeypatch.chdir(tmp_path)          # MuJoCo's warnings go to MUJOCO_LOG.TXT
    x = masing_run(C)
    t = np.arange(1, x.size + 1) * H
    xr = masing_reference(t)
    assert np.max(np.abs(x - xr)) <= 0.01 * np.max(np.abs(xr))
    assert np.ptp(xr) > 3 * ALPHA / KM                # it slipped both ways
    xe = masing_run(0.0)
    assert not (np.all(np.isfinite(xe)) and np.max(np.abs(xe - xr)) < 0.1 * np.max(np.abs(xr)))


# -- RK4: stages advance copies of the committed state, one commit per step ------------
K1, V1 = 50.0, 0.5               # spring [N/m], initial velocity [m/s] of a unit mass
RK4_XML = """<mujoco><option timestep="{h}" gravity="0 0 0" integrator="RK4"/>
<worldbody><body><joint name="x" type="slide" axis="1 0 0" stiffness="{k}"/>
<inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/></body></worldbody></mujoco>"""


def _rk4_end(el, h, T):
    spec = mujoco.MjSpec.from_string(RK4_XML.format(h=h, k=K1))
    hmj.add_element(spec, el, joint="x", name="e")
    model = spec.compile()
    d = mujoco.MjData(model)
    d.qvel[0] = V1
    for _ in range(int(round(T / h))):
        mujoco.mj_step(model, d)
    return d.qpos[0]


def _free_reference(rate, force, T):
    """x(T) of ẍ = −K1 x − F(z, ẋ), ż = rate(z, ẋ), x(0) = 0, ẋ(0) = V1, z(0) = 0:
    plain Python, DOP853 at rtol 1e-13 (independent of hystmech)."""
    def rhs(t, y):
        return [y[1], -K1 * y[0] - force(y[2], y[1]), rate(y[2], y[1])]

    r = solve_ivp(rhs, (0.0, T), [0.0, V1, 0.0], method="DOP853", rtol=1e-13, atol=1e-15)
    assert r.success and r.y[1, -1] > 0          # the motion stays monotone
    return r.y[0, -1]


@pytest.mark.parametrize("law", ["Dahl", "LuGre"])
def test_rk4_fourth_order_from_a_fresh_element(law):
    """MuJoCo's RK4 with the element started at the first step (plugin_state marks it
    not started): every stage evaluates a copy of the committed state advanced along the
    chord from the step's start, the first step included, and the step commits once, so
    a smooth monotone motion converges at order 4 against an independent reference.
    Dahl: ẇ = ρ(u̇ − |u̇|w), F = Fc·w (Ikhouane et al., §1); LuGre: Ikhouane et al.,
    eq. (1). (Stage forces held at x0 in the first step, as before, gave order 2.)"""
    if law == "Dahl":
        rho, fc, T = 300.0, 0.5, 0.15
        el = get_element_class("Dahl")(rho=rho, Fc=fc, w0=0.0)
        xr = _free_reference(lambda z, v: rho * (v - abs(v) * z), lambda z, v: fc * z, T)
    else:
        s0, s1, s2, c, s, vs, T = 1e3, 5.0, 0.4, 1.0, 1.5, 0.05, 0.05
        el = get_element_class("LuGre")(sigma0=s0, sigma1=s1, Fc=c, Fs=s, vs=vs, beta=2.0,
                                        sigma2=s2)

        def zd(z, v):
            return v - s0 * abs(v) * z / (c + (s - c) * math.exp(-(v / vs) ** 2))

        xr = _free_reference(zd, lambda z, v: s0 * z + s1 * zd(z, v) + s2 * v, T)
    hs = T / np.array([75.0, 150.0, 300.0])
    e = np.array([abs(_rk4_end(el, h, T) - xr) for h in hs])
    order = np.log2(e[:-1] / e[1:])
    assert np.all((order > 3.8) & (order < 4.3)), (e, order)
    assert e[-1] < 1e-8 * abs(xr), e
