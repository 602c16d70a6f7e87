"""hystmech laws as native MuJoCo plugins (hystmech.plugins.mujoco) against hystmech's
own Assembly: a forced 1-DOF mass–spring with each law in parallel (tight references:
compiled RK45 at rtol 1e-11 for smooth laws, the event-driven solver for inclusions,
the projection scheme at h = 1e-6 for operators; for relays an independent
event-driven solve_ivp reference), the measured convergence order of
MuJoCo's semi-implicit Euler, bitwise save/restore/replay, several laws in one model,
tendons and mjd_transitionFD (the displacement convention, MJCF without Python, fuzzing
and the integrators: test_plugins_mujoco_*.py)."""
import math
import sys

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")
import mujoco.rollout  # noqa: E402

from hystmech.components import get_element_class  # noqa: E402
from hystmech.components.combine import SumElement  # noqa: E402
from hystmech.plugins import mujoco as hmj  # noqa: E402
from hystmech.systems import Assembly, Harmonic, simulate  # noqa: E402

from plugin_rig import CASES, law_params, reference, relays_reference  # noqa: E402
from test_fmu_cases import KIND  # noqa: E402

T = 1.0                            # horizon [s]

XML = """<mujoco><option timestep="{h}" gravity="0 0 0" integrator="Euler"/>
<worldbody><body name="b"><joint name="x" type="slide" axis="1 0 0" stiffness="{k}"/>
<inertial pos="0 0 0" mass="{m}" diaginertia="1 1 1"/></body></worldbody></mujoco>"""


def run_mujoco(el, m, k, F0, w, h, T_=T):
    spec = mujoco.MjSpec.from_string(XML.format(h=h, k=k, m=m))
    hmj.add_element(spec, el, joint="x", name="e")
    model = spec.compile()
    d = mujoco.MjData(model)
    # MuJoCo's semi-implicit Euler is the leapfrog scheme with qvel at half steps: from
    # rest under the element's initial force F(x0) (e.g. a relay at +1) the velocity
    # before the first step stands for v(−h/2) = +h/2·F(x0)/m, else the start is off by
    # an O(h) velocity
    d.qvel[0] = 0.5 * h * el.force_of(el.x0, 0.0, 0.0) / m
    n = int(round(T_ / h))
    ctrl = (F0 * np.sin(w * np.arange(n) * h))[None, :, None]
    full = mujoco.mjtState.mjSTATE_FULLPHYSICS
    s0 = np.empty(mujoco.mj_stateSize(model, full))
    mujoco.mj_getState(model, d, s0, full)
    st, _ = mujoco.rollout.rollout(model, d, s0, ctrl,
                                   control_spec=mujoco.mjtState.mjSTATE_QFRC_APPLIED)
    return st[0, :, 1]            # qpos after steps 1..n (column 0 is the time)


# laws whose output jumps when a relay switches: against the independent event-driven
# reference (the Assembly's projection scheme places each switch within its own step,
# an error of ~1e-5 of max|x| at h = 1e-6)
DISCONTINUOUS = {"Relay", "Preisach"}
# other operators against the first-order projection reference at h = 1e-6 (its own
# error is a few 1e-6 of max|x|), on a shorter horizon to keep that reference cheap
OPERATORS = {n for n in CASES if KIND[n] == "operator"}


def rel_error(name, h, T_=T):
    el, prm, te, xr = (relays_reference if name in DISCONTINUOUS else reference)(name, T_)
    x = run_mujoco(el, *prm, h, T_)
    idx = np.rint(te / h).astype(int) - 1
    return float(np.max(np.abs(x[idx] - xr)) / np.max(np.abs(xr)))


# the cable law (EI·K + continuous Preisach, a sum) is checked through its parts below:
# both parts are laws checked here, and its Assembly reference alone costs 15 s
@pytest.mark.parametrize("name", law_params(sorted(set(CASES) - {"CableLaw"})))
def test_one_dof_matches_assembly(name):
    T_ = 0.5 if name in OPERATORS else T
    assert rel_error(name, 1e-5, T_) <= 1e-5


@pytest.mark.parametrize("name", sorted(DISCONTINUOUS))
def test_relay_switches_second_order(name):
    """A relay's jump inside a step is placed exactly: MuJoCo's semi-implicit Euler is
    the leapfrog scheme, and the plugin returns the mean force over the step's window
    (cut at the switch points), so the error against the event-driven reference falls
    as h², not h (a force held at its value at q_n would place each jump up to h/2 off)."""
    hs = np.array([8e-5, 4e-5, 2e-5, 1e-5])
    e = np.array([rel_error(name, h) for h in hs])
    order = np.polyfit(np.log(hs), np.log(e), 1)[0]
    assert 1.7 < order < 3.2, (e, order)
    assert e[-1] <= 1e-8, e


@pytest.mark.parametrize("name, expected, hs", [
    ("LuGre", 2, (1.6e-4, 8e-5, 4e-5)), ("Masing", 1, (4e-5, 2e-5, 1e-5)),
    ("SumDahlSpring", 2, (4e-5, 2e-5, 1e-5))])
def test_euler_convergence_order(name, expected, hs):
    """MuJoCo's semi-implicit Euler is the leapfrog scheme (qvel at half steps, started
    at v(−h/2) in run_mujoco): second order for a force depending on u alone (Dahl is
    rate-independent; Dahl + spring here), first order once the force depends on the
    velocity, which MuJoCo takes half a step late (Masing's c·u̇). LuGre's step force is
    centred: its window's back half at the velocity of the step behind, its front half
    at the implicit velocity of the step ahead (hm_implicit_step): second order (below
    h = 4e-5 the error meets the reference's floor, ~2e-10)."""
    e = np.array([rel_error(name, h) for h in hs])
    order = np.log2(e[:-1] / e[1:])
    assert np.all((order > expected - 0.1) & (order < expected + 0.15)), (e, order)


def test_sum_equals_its_parts_as_separate_plugins():
    """A parallel sum (hystmech.Sum) equals its parts added as separate plugins on the
    same joint: the cable law of Manfredo et al. (2023). Not bit for bit: the switch
    window of the leapfrog integration (plugins/mujoco_plugin.c) averages the whole
    sum's force where a switch of the Preisach part falls in a step, the separate
    linear part stays pointwise: an O(h²) difference per switch."""
    law = CASES["CableLaw"][0]()
    runs = []
    for els in ([law], list(law.parts)):
        spec = mujoco.MjSpec.from_string(XML.format(h=1e-4, k=0.01, m=1e-3))
        for i, el in enumerate(els):
            hmj.add_element(spec, el, joint="x", name=f"e{i}")
        model = spec.compile()
        d = mujoco.MjData(model)
        xs = []
        for _ in range(4000):
            d.qfrc_applied[0] = 12.0 * math.sin(2 * math.pi * 2.0 * d.time)
            mujoco.mj_step(model, d)
            xs.append(d.qpos[0])
        runs.append(np.array(xs))
    np.testing.assert_allclose(runs[0], runs[1], rtol=0, atol=1e-6 * np.max(np.abs(runs[1])))
    assert np.max(np.abs(runs[0])) > 10.0   # curvatures well into the Preisach triangle


# -- several laws in one model, tendons -----------------------------------------------
CHAIN = """<mujoco><option timestep="{h}" gravity="0 0 0" integrator="Euler"/>
<worldbody><body name="b1"><joint name="q1" type="slide" axis="1 0 0" stiffness="{k1}"/>
<inertial pos="0 0 0" mass="{m1}" diaginertia="1 1 1"/>
<body name="b2"><joint name="q2" type="slide" axis="1 0 0" stiffness="{k2}"/>
<inertial pos="0 0 0" mass="{m2}" diaginertia="1 1 1"/></body></body></worldbody>
<tendon><fixed name="t2"><joint joint="q2" coef="1"/></fixed></tendon></mujoco>"""


def chain_elements():
    LuGre = get_element_class("LuGre")
    Masing = get_element_class("Masing")
    Dahl = get_element_class("Dahl")
    return (LuGre(sigma0=1e3, sigma1=5.0, Fc=1.0, Fs=1.5, vs=0.01, beta=2.0, sigma2=0.4),
            Masing(k=200.0, k0=0.0, alpha=1.0),
            Dahl(rho=300.0, Fc=0.5, w0=0.0))


def chain_model(h, *, tendon=True, els=None):
    e1, e2, e3 = els or chain_elements()
    spec = mujoco.MjSpec.from_string(CHAIN.format(h=h, k1=50.0, k2=80.0, m1=1.0, m2=0.5))
    hmj.add_element(spec, e1, joint="q1", name="lugre")
    hmj.add_element(spec, e2, joint="q2", name="masing")
    if tendon:
        hmj.add_element(spec, e3, tendon="t2", name="dahl")
    else:
        hmj.add_element(spec, e3, joint="q2", name="dahl")
    return spec


def chain_force(t):
    return 6.0 * math.sin(2 * math.pi * 1.0 * t)


def run_chain(model, n, record_state=False):
    d = mujoco.MjData(model)
    X, S = [], []
    for _ in range(n):
        d.qfrc_applied[:] = chain_force(d.time)   # on body 2: both relative dofs
        mujoco.mj_step(model, d)
        X.append(d.qpos.copy())
        if record_state:
            S.append(d.plugin_state.copy())
    return np.array(X), (np.array(S) if record_state else None), d


def test_several_laws_in_one_model_match_assembly():
    """A 2-DOF chain (relative slide joints) with LuGre on joint 1, Masing on joint 2
    and Dahl on a fixed tendon over joint 2, forced on the outer body; against the same
    system in absolute coordinates in hystmech's Assembly (projection scheme at
    h = 1e-6, first order)."""
    h, T_ = 1e-5, 0.6
    model = chain_model(h).compile()
    X, _, _ = run_chain(model, int(round(T_ / h)))
    e1, e2, e3 = chain_elements()
    a = Assembly()
    a.add_dof("m1", mass=1.0)
    a.add_dof("m2", mass=0.5)
    a.add_spring("m1", "ground", k=50.0)
    a.add_spring("m2", "m1", k=80.0)
    a.add_element("lugre", e1, "m1", "ground")
    a.add_element("masing", e2, "m2", "m1")
    a.add_element("dahl", e3, "m2", "m1")
    a.add_force("m2", Harmonic(amplitude=6.0, omega=2 * np.pi, phase=-np.pi / 2))
    te = np.linspace(T_ / 30, T_, 30)
    r = simulate(a, (0, T_), method="projection", t_eval=te, h=1e-6, energy=False)
    idx = np.rint(te / h).astype(int) - 1
    x1, x2 = X[idx, 0], X[idx, 0] + X[idx, 1]
    scale = max(np.max(np.abs(r.x("m1"))), np.max(np.abs(r.x("m2"))))
    assert np.max(np.abs(x1 - r.x("m1"))) <= 2e-5 * scale
    assert np.max(np.abs(x2 - r.x("m2"))) <= 2e-5 * scale
    # a real stick-slip/hysteresis run, not a linear one
    assert np.ptp(r.force("masing")) > 1.5


def test_tendon_equals_joint():
    """An element on a fixed tendon of coefficient 1 over a joint is the element on the
    joint (u = tendon length, F along the tendon Jacobian). A Masing element there: the
    laws with a mean kernel (Dahl, LuGre, Bouc-Wen, modified Dahl) take their step force
    at the joint's implicit velocity on a joint only (a tendon's velocity response to its
    own force is not formed), so on a tendon they differ from the joint run by the
    explicit step's O(h) share."""
    n = 20000
    e1, e2, _ = chain_elements()
    els = (e1, e2, get_element_class("Masing")(k=150.0, k0=0.0, alpha=0.5))
    Xt, _, dt_ = run_chain(chain_model(1e-5, tendon=True, els=els).compile(), n)
    Xj, _, dj = run_chain(chain_model(1e-5, tendon=False, els=els).compile(), n)
    np.testing.assert_allclose(Xt, Xj, rtol=0, atol=1e-12 * np.max(np.abs(Xj)))


PLAIN_XML = """<mujoco><option timestep="2e-5" integrator="{integ}"/><worldbody>
<body><joint name="x" type="slide" axis="1 0 0" stiffness="40"/>
<inertial pos="0 0 0" mass="0.01" diaginertia="1 1 1"/>
<body pos="0.1 0 0"><joint name="y" type="hinge" axis="0 1 0" stiffness="0.5"/>
<geom type="capsule" fromto="0 0 0 0.1 0 0" size="0.01" mass="0.001"/></body></body>
</worldbody><tendon><fixed name="t"><joint joint="x" coef="1"/><joint joint="y" coef="0.3"/>
</fixed></tendon></mujoco>"""


@pytest.mark.parametrize("integ", ["Euler", "RK4"])
def test_plain_law_callbacks_equal_the_generic_path(integ):
    """A law without switch points and state check has its own compute/advance
    callbacks in the plugin library (the common case with its kernels called directly:
    plugins/mujoco_plugin.c, HM_PLAIN_CALLBACKS); the same law as a one-part
    hystmech.Sum runs through the generic callbacks, whose numbers they must give bit
    for bit: LuGre sliding far above vs (e^-r underflows, g = Fc) and sticking, Bouc-Wen,
    on a joint and on a tendon, with the position set after mj_forward (a not-started
    element), a finite-difference linearisation (displacements at an unchanged time) and
    a state restored on the way."""
    G = get_element_class
    laws = [G("LuGre")(sigma0=1e4, sigma1=30.0, Fc=0.2, Fs=0.3, vs=1e-3, beta=2.0, sigma2=0.05),
            G("BoucWen")(A=3.0, beta=200.0, gamma=100.0, n=1.5)]
    full = mujoco.mjtState.mjSTATE_FULLPHYSICS
    speeds = []
    for law in laws:
        for target in ({"joint": "x"}, {"tendon": "t"}):
            runs = []
            for el in (law, SumElement(law)):
                spec = mujoco.MjSpec.from_string(PLAIN_XML.format(integ=integ))
                hmj.add_element(spec, el, name="e", **target)
                m = spec.compile()
                d = mujoco.MjData(m)
                mujoco.mj_forward(m, d)
                d.qpos[0], d.qvel[0], d.qvel[1] = 2e-3, 0.4, 0.3
                out, vx = [], []
                for i in range(1500):
                    d.qfrc_applied[0] = 0.5 * math.sin(2 * math.pi * 25.0 * d.time)
                    if i == 500 and integ != "RK4":
                        A = np.zeros((2 * m.nv, 2 * m.nv))
                        mujoco.mjd_transitionFD(m, d, 1e-6, 1, A, None, None, None)
                        out.append(A.ravel())
                    if i == 800:
                        s = np.empty(mujoco.mj_stateSize(m, full))
                        mujoco.mj_getState(m, d, s, full)
                        mujoco.mj_step(m, d, 7)
                        mujoco.mj_setState(m, d, s, full)
                    mujoco.mj_step(m, d)
                    out.append(np.concatenate([d.qpos, d.qvel, d.plugin_state,
                                               d.qfrc_passive]))
                    vx.append(d.qvel[0])
                runs.append(np.concatenate(out))
            assert np.array_equal(runs[0].view(np.int64), runs[1].view(np.int64)), \
                (law, target)
            assert np.all(np.isfinite(runs[0]))
            speeds.append(np.abs(vx))
    # LuGre on the joint slid far above vs = 1e-3 (|v|/vs > 27.3: e^-r underflows) and
    # came near rest
    assert speeds[0].max() > 30 * 1e-3 and speeds[0].min() < 1e-3


def test_save_restore_replay_bitwise():
    """The element states live in mjData.plugin_state: save (mj_getState and
    mj_copyData), step, restore, replay gives bit-identical trajectories."""
    model = chain_model(1e-4).compile()
    _, _, d = run_chain(model, 3000)
    full = mujoco.mjtState.mjSTATE_FULLPHYSICS
    saved = np.empty(mujoco.mj_stateSize(model, full))
    mujoco.mj_getState(model, d, saved, full)
    dcopy = mujoco.MjData(model)
    mujoco.mj_copyData(dcopy, model, d)

    def go(dd):
        out = []
        for _ in range(3000):
            dd.qfrc_applied[:] = chain_force(dd.time)
            mujoco.mj_step(model, dd)
            out.append(np.concatenate([dd.qpos, dd.qvel, dd.plugin_state]))
        return np.array(out)

    first = go(d)
    mujoco.mj_setState(model, d, saved, full)
    second = go(d)
    third = go(dcopy)
    # bit for bit
    assert np.array_equal(first.view(np.int64), second.view(np.int64))
    assert np.array_equal(first.view(np.int64), third.view(np.int64))
    # and the memory did change along the run (the replay is not trivially equal)
    assert np.nanmax(np.ptp(first[:, 4:], axis=0)) > 0


def test_mjcf_round_trip_and_readers():
    """The spec written as MJCF (config attributes by the laws' Python names) compiles
    to the same model; readers give the committed state and force by name."""
    spec = chain_model(1e-4)
    xml = spec.to_xml()
    assert 'plugin="hystmech.LuGre"' in xml and 'key="sigma0"' in xml
    m1 = spec.compile()
    m2 = mujoco.MjModel.from_xml_string(xml)
    X1, _, d1 = run_chain(m1, 2000)
    X2, _, d2 = run_chain(m2, 2000)
    assert np.array_equal(X1, X2)
    e1, e2, e3 = chain_elements()
    x = hmj.element_state(m1, d1, "lugre")
    u = hmj.element_u(m1, d1, "lugre")
    # LuGre (a law with a fast transient: its mean over the step's window is handed to
    # MuJoCo) commits at the last step's midpoint under Euler too; the force at the
    # current u is from the bristle state moved on along the half step at constant
    # velocity, z(t) = z_ss + (z0 - z_ss) e^(-a t), a = σ0|v|/g(v) (Ikhouane et al.,
    # eq. (1) at constant v)
    h, q, v = m1.opt.timestep, d1.qpos[0], d1.qvel[0]
    assert u == pytest.approx(q - 0.5 * h * v, abs=1e-15)
    vs_ = (q - u) / (0.5 * h)
    g = 1.0 + 0.5 * math.exp(-(vs_ / 0.01) ** 2)
    a = 1e3 * abs(vs_) / g
    z = vs_ / a + (x[0] - vs_ / a) * math.exp(-a * 0.5 * h)
    assert hmj.element_force(m1, d1, "lugre") == pytest.approx(
        e1.force_of(np.array([z]), q, v), rel=1e-9)
    # Masing (a switch law: committed at the last step's midpoint under Euler): the force
    # at the current u from the committed w moved on by the stop operator (Bastien et
    # al. (2007), eq. (11)), w <- clip(w + (q - u_c), -eta, eta)
    xm = hmj.element_state(m1, d1, "masing")
    um = hmj.element_u(m1, d1, "masing")
    eta = e2.p[2]
    assert um == pytest.approx(d1.qpos[1] - 0.5 * m1.opt.timestep * d1.qvel[1], abs=1e-15)
    w = np.clip(xm + (d1.qpos[1] - um), -eta, eta)
    assert hmj.element_force(m1, d1, "masing") == pytest.approx(
        e2.force_of(w, d1.qpos[1], d1.qvel[1]), rel=1e-14)
    with pytest.raises(ValueError, match="no plugin instance named"):
        hmj.element_state(m1, d1, "nope")


def test_transition_fd_runs_and_sees_the_tangent():
    """mjd_transitionFD through the plugin: ∂v⁺/∂x = −h·(k + ¾·dF/du)/m with dF/du the
    Dahl tangent on the active branch (forward differences along the motion). ¾: Dahl's
    step force is its mean over the step's window [t − h/2, t + h/2] (components/dahl.c
    dahl_mean) from the state committed at the window's start, so a displacement δ of q
    at an unchanged time moves the back half's end by δ (its mean by slope·δ/2) and the
    front half by δ: (1/2 + 1)/2 of the pointwise tangent."""
    Dahl = get_element_class("Dahl")
    el = Dahl(rho=300.0, Fc=0.5, w0=0.0)
    h, k, m = 1e-4, 50.0, 1.0
    spec = mujoco.MjSpec.from_string(XML.format(h=h, k=k, m=m))
    hmj.add_element(spec, el, joint="x", name="e")
    model = spec.compile()
    d = mujoco.MjData(model)
    for _ in range(1000):
        d.qfrc_applied[0] = 2.0 * math.sin(2 * math.pi * d.time)
        mujoco.mj_step(model, d)
    assert d.qvel[0] > 0
    A = np.zeros((2, 2))
    B = np.zeros((2, 0))
    mujoco.mjd_transitionFD(model, d, 1e-7, 0, A, B, None, None)
    assert np.all(np.isfinite(A))
    x = hmj.element_state(model, d, "e")
    slope = el.slope(x, hmj.element_u(model, d, "e"), 1.0, el.p)
    assert A[1, 0] == pytest.approx(-h * (k + 0.75 * slope) / m, rel=1e-3)
    assert A[0, 0] == pytest.approx(1.0 - h * h * (k + 0.75 * slope) / m, rel=1e-6)


def test_kernel_failure_is_counted_per_instance(tmp_path, monkeypatch):
    """A Preisach memory deeper than max_depth (a decaying oscillation nests its
    reversals) is a kernel failure (hm_fail): counted in that instance's state, while
    an instance of the same law with enough depth in the same model is unaffected
    (reported once through mju_warning)."""
    Preisach = get_element_class("Preisach")
    kw = dict(a1=np.array([-0.004, -0.002, -0.003, 0.0, 0.001]),
              a2=np.array([-0.001, 0.003, 0.001, 0.002, 0.004]),
              weights=np.array([3.0, 5.0, 2.0, 4.0, 1.5]), initial=-1, k0=200.0, offset=0.5)
    xml = """<mujoco><option timestep="1e-4" gravity="0 0 0" integrator="Euler"/>
    <worldbody><body><joint name="x" type="slide" axis="1 0 0" stiffness="100" damping="0.3"/>
    <inertial pos="0 0 0" mass="0.01" diaginertia="1 1 1"/>
    <body><joint name="y" type="slide" axis="0 1 0" stiffness="100" damping="0.3"/>
    <inertial pos="0 0 0" mass="0.01" diaginertia="1 1 1"/></body></body></worldbody></mujoco>"""
    monkeypatch.chdir(tmp_path)          # MuJoCo's warning handler writes MUJOCO_LOG.TXT
    spec = mujoco.MjSpec.from_string(xml)
    hmj.add_element(spec, Preisach(**kw, max_depth=2), joint="x", name="shallow")
    hmj.add_element(spec, Preisach(**kw, max_depth=64), joint="y", name="deep")
    model = spec.compile()
    d = mujoco.MjData(model)
    d.qvel[:] = 1.0
    for _ in range(4000):
        mujoco.mj_step(model, d)
    assert hmj.element_failures(model, d, "shallow") > 0
    assert hmj.element_failures(model, d, "deep") == 0


def test_bad_input_and_missing_engine(monkeypatch):
    Dahl = get_element_class("Dahl")
    el = Dahl(rho=300.0, Fc=0.5, w0=0.0)
    spec = mujoco.MjSpec.from_string(XML.format(h=1e-4, k=1.0, m=1.0))
    with pytest.raises(ValueError, match="exactly one of joint= and tendon="):
        hmj.add_element(spec, el, name="e")
    with pytest.raises(ValueError, match="no joint named 'nope'"):
        hmj.add_element(spec, el, joint="nope", name="e")
    with pytest.raises(ValueError, match="rtol must be in"):
        hmj.add_element(spec, el, joint="x", name="e", rtol=2.0)
    Duhem = get_element_class("LuGre")
    with pytest.raises(ValueError, match="callable"):
        hmj.add_element(spec, Duhem(sigma0=1e3, sigma1=1.0, Fc=1.0, Fs=1.5, vs=0.01,
                                    g=lambda v: 1.0), joint="x", name="e")
    from hystmech.plugins import _build

    monkeypatch.setitem(sys.modules, "mujoco", None)
    with pytest.raises(ImportError, match=r"hystmech\[mujoco\]"):
        _build.engine("mujoco")


MJCF_DAHL = """<mujoco><option timestep="1e-4" gravity="0 0 0" integrator="Euler"/>
<extension><plugin plugin="hystmech.Dahl"><instance name="fr">
<config key="rho" value="300"/><config key="Fc" value="0.5"/><config key="w0" value="0"/>
<config key="joint" value="x"/></instance></plugin></extension>
<worldbody><body><joint name="x" type="slide" axis="1 0 0" stiffness="50"/>
<inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/></body></worldbody></mujoco>"""


def test_mjcf_only_after_a_single_import(tmp_path):
    """An MJCF file naming plugin="hystmech.Dahl" loads after `import
    hystmech.plugins.mujoco` alone (fresh process, no register/add_element call) and
    runs as the model built with add_element; without mujoco that import fails with an
    ImportError naming the extra."""
    import subprocess

    prog = (
        "import sys, math, numpy as np, mujoco, hystmech.plugins.mujoco as hmj\n"
        f"m = mujoco.MjModel.from_xml_string({MJCF_DAHL!r})\n"
        "d = mujoco.MjData(m)\n"
        "for _ in range(2000):\n"
        "    d.qfrc_applied[0] = 2.0 * math.sin(2 * math.pi * d.time)\n"
        "    mujoco.mj_step(m, d)\n"
        "print(repr(float(d.qpos[0])), repr(float(hmj.element_force(m, d, 'fr'))))\n")
    r = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True,
                       cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    q, F = map(float, r.stdout.split()[-2:])
    Dahl = get_element_class("Dahl")
    spec = mujoco.MjSpec.from_string(XML.format(h=1e-4, k=50.0, m=1.0))
    hmj.add_element(spec, Dahl(rho=300.0, Fc=0.5, w0=0.0), joint="x", name="fr")
    model = spec.compile()
    d = mujoco.MjData(model)
    for _ in range(2000):
        d.qfrc_applied[0] = 2.0 * math.sin(2 * math.pi * d.time)
        mujoco.mj_step(model, d)
    assert q == d.qpos[0] and abs(q) > 1e-3
    assert F == hmj.element_force(model, d, "fr")
    r = subprocess.run([sys.executable, "-c", "import sys; sys.modules['mujoco'] = None\n"
                        "import hystmech.plugins.mujoco"], capture_output=True, text=True,
                       cwd=tmp_path, timeout=300)
    assert r.returncode != 0 and "pip install 'hystmech[mujoco]'" in r.stderr, r.stderr
