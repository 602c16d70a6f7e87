"""The displacement convention (hystmech.plugins.convention) in MuJoCo and in the
Assembly: u from the reference configuration (springref / qpos0 / tendon length at
qpos0 / config ref), the element starting at the u the run starts at. Closed forms for
preloaded springs released at t = 0; a Bouc-Wen element started away from the reference
in both hosts gives the same trajectory."""
import math

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")
import mujoco.rollout  # noqa: E402

from hystmech.components import get_element_class  # noqa: E402
from hystmech.plugins import convention  # noqa: E402
from hystmech.plugins import mujoco as hmj  # noqa: E402

M, KS = 2.0, 50.0          # mass [kg], element spring [N/m]: ω = 5 rad/s


def spring_run(*, joint_attrs="", ref=None, q_start=None, tendon=False, h=2e-4, T=0.6,
               u0=0.0):
    """A slide joint whose only force is a LinearSpring element (k = KS, free length
    u0); returns (t, qpos, model, data)."""
    xml = (f'<mujoco><option timestep="{h}" gravity="0 0 0" integrator="RK4"/><worldbody>'
           f'<body><joint name="x" type="slide" axis="1 0 0" {joint_attrs}/>'
           f'<inertial pos="0 0 0" mass="{M}" diaginertia="1 1 1"/></body></worldbody>'
           f'<tendon><fixed name="t"><joint joint="x" coef="2"/></fixed></tendon></mujoco>')
    spec = mujoco.MjSpec.from_string(xml)
    el = get_element_class("LinearSpring")(k=KS, u0=u0)
    if tendon:
        hmj.add_element(spec, el, tendon="t", name="s", ref=ref)
    else:
        hmj.add_element(spec, el, joint="x", name="s", ref=ref)
    model = spec.compile()
    d = mujoco.MjData(model)
    if q_start is not None:
        d.qpos[0] = q_start          # set before the first step
    n = int(round(T / h))
    q = np.empty(n)
    for i in range(n):
        mujoco.mj_step(model, d)
        q[i] = d.qpos[0]
    return np.arange(1, n + 1) * h, q, model, d


def closed_form(t, q_start, q_ref, k=KS):
    w = math.sqrt(k / M)
    return q_ref + (q_start - q_ref) * np.cos(w * t)


@pytest.mark.parametrize("case", ["qpos0", "ref_attr", "springref", "config_ref",
                                  "tendon", "preload"])
def test_reference_configuration(case):
    """The equilibrium of the element's spring is the convention's reference, and a
    position set before the first step is released from there: x(t) = q_ref +
    (q_start − q_ref)·cos(ωt) (RK4 at h = 2e-4: ~1e-12)."""
    kw, k = {}, KS
    if case == "qpos0":              # q_ref = qpos0 = 0
        kw, q_ref, q_start = dict(q_start=0.3), 0.0, 0.3
    elif case == "ref_attr":         # joint ref: qpos0 = 0.1 (no springref)
        kw, q_ref, q_start = dict(joint_attrs='ref="0.1"'), 0.1, 0.1
        kw["q_start"] = 0.25
        q_start = 0.25
    elif case == "springref":        # springref wins over qpos0
        kw, q_ref, q_start = dict(joint_attrs='ref="0.1" springref="0.2"', q_start=0.0), 0.2, 0.0
    elif case == "config_ref":       # the explicit offset wins over both
        kw, q_ref, q_start = dict(joint_attrs='springref="0.2"', ref=-0.15, q_start=0.0), -0.15, 0.0
    elif case == "tendon":           # tendon L = 2q, reference its length at qpos0 = 0.1
        kw, q_ref, q_start = dict(joint_attrs='ref="0.1"', tendon=True, q_start=0.0), 0.1, 0.0
        k = 4 * KS                   # the spring on L = 2q acts with 4k on q
    else:                            # LinearSpring free length u0: preloaded at q = 0
        kw, q_ref, q_start = dict(u0=0.05), 0.05, 0.0
    t, q, model, d = spring_run(**kw)
    np.testing.assert_allclose(q, closed_form(t, q_start, q_ref, k), rtol=0, atol=1e-9)
    if case != "tendon" and case != "preload":
        assert hmj.element_reference(model, d, "s") == pytest.approx(convention.joint_reference(
            float(model.qpos0[0]), float(model.qpos_spring[0]), kw.get("ref")), abs=1e-15)
    if case == "tendon":
        assert hmj.element_reference(model, d, "s") == pytest.approx(0.2, abs=1e-15)


def test_set_qpos_before_first_step_matches_assembly():
    """The Bouc-Wen rig of the plugin tests (force k_el·u + z, so it feels where u = 0
    is) started at qpos = 0.05 set after mj_forward and before the first step (the
    common order) follows hystmech's Assembly with add_dof(x0=0.05): both measure u from
    x = 0 and start the element at u = 0.05 in its initial state. (Same Assembly as
    test_plugins_mujoco's BoucWen case but x0: its compiled model is shared.)"""
    from hystmech.systems import Assembly, Harmonic, simulate

    from plugin_rig import CASES, rig

    ctor, amp, _ = CASES["BoucWen"]
    el = ctor()
    m, k, F0, w = rig(el, amp)
    h, T, x0 = 1e-5, 0.5, amp
    xml = (f'<mujoco><option timestep="{h}" gravity="0 0 0" integrator="Euler"/>'
           f'<worldbody><body><joint name="x" type="slide" axis="1 0 0" stiffness="{k}"/>'
           f'<inertial pos="0 0 0" mass="{m}" diaginertia="1 1 1"/></body></worldbody>'
           f'</mujoco>')
    n = int(round(T / h))
    full = mujoco.mjtState.mjSTATE_FULLPHYSICS
    ctrl = (F0 * np.sin(w * np.arange(n) * h))[None, :, None]

    def run(ref=None):
        spec = mujoco.MjSpec.from_string(xml)
        hmj.add_element(spec, el, joint="x", name="bw", ref=ref)
        model = spec.compile()
        d = mujoco.MjData(model)
        mujoco.mj_forward(model, d)
        d.qpos[0] = x0
        s0 = np.empty(mujoco.mj_stateSize(model, full))
        mujoco.mj_getState(model, d, s0, full)
        st, _ = mujoco.rollout.rollout(model, d, s0, ctrl,
                                       control_spec=mujoco.mjtState.mjSTATE_QFRC_APPLIED)
        return st[0, :, 1]

    a = Assembly()
    a.add_dof("m", mass=m, x0=x0)
    a.add_spring("m", "ground", k=k)
    a.add_element("e", el, "m", "ground")
    a.add_force("m", Harmonic(amplitude=F0, omega=w, phase=-np.pi / 2))
    te = np.linspace(T / 50, T, 50)
    r = simulate(a, (0, T), method="RK45", t_eval=te, rtol=1e-11, atol=1e-15, energy=False)
    idx = np.rint(te / h).astype(int) - 1
    xr = r.x("m")
    assert np.max(np.abs(run()[idx] - xr)) <= 1e-4 * np.max(np.abs(xr))
    # u measured from the start instead (ref = x0): another trajectory, so the
    # convention is what is tested here
    assert np.max(np.abs(run(ref=x0)[idx] - xr)) > 1e-2 * np.max(np.abs(xr))


def test_joint_reference_helper():
    assert convention.joint_reference(0.1, 0.0) == 0.1
    assert convention.joint_reference(0.1, 0.2) == 0.2
    assert convention.joint_reference(0.1, 0.2, ref=-1.0) == -1.0
    with pytest.raises(ValueError, match="springref must be finite"):
        convention.joint_reference(0.0, float("nan"))
