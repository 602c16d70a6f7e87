"""hystmech elements on Exudyn position markers (a translational element along a fixed
tilted axis) and rigid-body markers (a torsional element about a fixed tilted axis),
against a 1-DOF hystmech Assembly (event-driven, i.e. exact up to its event tolerance)
and against the closed-form harmonic rotation θ0·cos(sqrt(k/J)·t); bad input."""
import numpy as np
import pytest

exu = pytest.importorskip("exudyn")

from exudyn.itemInterface import (LoadForceVector, LoadTorqueVector,  # noqa: E402
                                  MarkerBodyPosition, MarkerBodyRigid,
                                  MarkerNodeCoordinate, MarkerNodePosition, MassPoint,
                                  NodePoint, NodeRigidBodyRxyz, ObjectGround,
                                  ObjectRigidBody)
from exudyn.rigidBodyUtilities import (RotationMatrix2RotXYZ,  # noqa: E402
                                       RotXYZ2RotationMatrix)

from hystmech.components import get_element_class  # noqa: E402
from hystmech.plugins import exudyn as hex  # noqa: E402
from hystmech.systems import simulate  # noqa: E402

from plugin_rig import one_dof  # noqa: E402
from test_plugins_exudyn import solve_direct  # noqa: E402

AXIS = np.array([1.0, 2.0, 2.0]) / 3.0      # tilted, unit
M, K, F0, W = 1.0, 50.0, 3.0, 2 * np.pi


def masing():
    return get_element_class("Masing")(k=200.0, k0=20.0, alpha=1.0)


def dahl():
    return get_element_class("Dahl")(rho=300.0, Fc=0.5, w0=0.0)


def assembly_reference(mass, x0, te, law=None):
    """The 1-DOF problem in hystmech's Assembly: event-driven solver (Masing), RK45 at
    rtol 1e-11 (smooth laws)."""
    law = masing() if law is None else law
    a = one_dof(law, mass, K, F0, W, x0=x0)
    if law.kind == "smooth":
        return simulate(a, (0, te[-1]), method="RK45", t_eval=te, rtol=1e-11, atol=1e-15,
                        energy=False).x("m")
    return simulate(a, (0, te[-1]), method="event", t_eval=te, energy=False).x("m")


def solve(mbs, T, h, record):
    """Exudyn's own SolveDynamic (RK44, fixed step), the user's post-step recorder
    installed with set_post_step (chained after hystmech's commit)."""
    out = []
    hex.set_post_step(mbs, lambda mbs_, t: out.append((t, record(mbs_))) or True)
    mbs.Assemble()
    solve_direct(mbs, int(round(T / h)), T)
    t = np.array([o[0] for o in out])
    return t, np.array([o[1] for o in out])


def point_rig(x0, law=None, route="commit"):
    """A mass point (reference position off the origin) tied to a ground point by a
    Masing element and a linear spring, both along AXIS, forced along AXIS."""
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    g = mbs.AddObject(ObjectGround(referencePosition=[0.4, -1.0, 0.2]))
    mg = mbs.AddMarker(MarkerBodyPosition(bodyNumber=g, localPosition=[0.1, 0.0, 0.3]))
    pref = np.array([0.3, -0.2, 0.5])
    n = mbs.AddNode(NodePoint(referenceCoordinates=list(pref),
                              initialCoordinates=list(x0 * AXIS)))
    mbs.AddObject(MassPoint(nodeNumber=n, mass=M))
    mn = mbs.AddMarker(MarkerNodePosition(nodeNumber=n))
    e = hex.add_element(mbs, masing() if law is None else law, [mg, mn], axis=3 * AXIS,
                        name="masing", route=route)
    hex.add_element(mbs, get_element_class("LinearSpring")(k=K), [mg, mn], axis=AXIS,
                    route=route)
    mbs.AddLoad(LoadForceVector(markerNumber=mn, loadVector=[0, 0, 0],
                                loadVectorUserFunction=lambda mbs, t, load:
                                list(F0 * np.sin(W * t) * AXIS)))
    return SC, mbs, n, e


def test_translational_masing_along_tilted_axis_matches_assembly():
    """Masing + spring along the tilted axis (2 mm pre-displaced start, reference point
    off the origin): the displacement along the axis follows the 1-DOF Assembly to
    1e-7 of max|x| under RK44 at h = 4e-4 (the
    event reference's own accuracy is about 2e-9); the motion stays on the axis (normal
    component ≤ 1e-12 m); the handle reads the committed state and force."""
    T, h = 0.5, 4e-4
    SC, mbs, n, e = point_rig(0.002)
    t, X = solve(mbs, T, h, lambda m: np.asarray(
        m.GetNodeOutput(n, exu.OutputVariableType.Displacement)).copy())
    s = X @ AXIS
    te = np.linspace(0.02, T, 25)
    xr = assembly_reference(M, 0.002, te)
    assert np.max(np.abs(np.interp(te, t, s) - xr)) <= 1e-7 * np.max(np.abs(xr))
    assert np.max(np.abs(X - np.outer(s, AXIS))) <= 1e-12
    assert e.name == "masing" and e.state().shape == (masing().n_states,)
    assert e.displacement() == pytest.approx(s[-1], abs=1e-14)
    # the handle's force at the end: the law driven along the recorded path
    import hystmech
    tt = np.linspace(0, T, len(s))
    assert e.force() == pytest.approx(float(hystmech.drive(masing(), tt, s).force[-1]),
                                      abs=1e-9)


def body_rig(law, theta0, torque=None, J=0.2):
    """A rigid body of isotropic inertia J (reference orientation not the identity)
    turned by theta0 about AXIS from its reference, with a torsional element to the
    ground about AXIS (and an optional torque M(t) about AXIS)."""
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    g = mbs.AddObject(ObjectGround())
    mg = mbs.AddMarker(MarkerBodyRigid(bodyNumber=g))
    r_ref = [0.3, -0.2, 0.5]
    A_ref = RotXYZ2RotationMatrix(r_ref)
    c, s, a = np.cos(theta0), np.sin(theta0), AXIS
    S = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    A0 = (c * np.eye(3) + s * S + (1 - c) * np.outer(a, a)) @ A_ref
    r0 = RotationMatrix2RotXYZ(A0)
    nr = mbs.AddNode(NodeRigidBodyRxyz(
        referenceCoordinates=[0, 0, 0] + list(r_ref),
        initialCoordinates=[0, 0, 0] + list(np.asarray(r0) - r_ref)))
    b = mbs.AddObject(ObjectRigidBody(nodeNumber=nr, mass=1.0, inertia=[J, J, J, 0, 0, 0]))
    mb = mbs.AddMarker(MarkerBodyRigid(bodyNumber=b))
    e = hex.add_element(mbs, law, [mg, mb], rotation_axis=-2 * AXIS)
    if torque is not None:
        mbs.AddLoad(LoadTorqueVector(markerNumber=mb, loadVector=[0, 0, 0],
                                     loadVectorUserFunction=lambda mbs, t, load:
                                     list(torque(t) * AXIS)))

    def angle(m):
        # the rotation angle about AXIS of A·A_refᵀ, independent of the connector
        A = np.asarray(m.GetNodeOutput(nr, exu.OutputVariableType.RotationMatrix)
                       ).reshape(3, 3)
        R = A @ A_ref.T
        v = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]]) / 2
        return np.arctan2(v @ AXIS, (np.trace(R) - 1) / 2)
    return SC, mbs, e, angle, [mg, mb]


def test_torsional_linear_spring_closed_form_oscillation():
    """LinearSpring(k) about the tilted axis (given as −2·AXIS: direction and sign
    of the axis set the sense of u): θ(t) = θ0·cos(sqrt(k/J)·t) over one period under
    RK44 to 1e-9 relative at h = 1e-3, the error falling 16× (4th order, ≥ 12×) from
    h = 2e-3; u of the element is minus the angle about +AXIS."""
    k, J, th0 = 5.0, 0.2, 0.3
    T = 2 * np.pi / np.sqrt(k / J)
    err = []
    for h in (2e-3, 1e-3):
        SC, mbs, e, angle, _ = body_rig(get_element_class("LinearSpring")(k=k), th0, J=J)
        t, th = solve(mbs, T, h, angle)
        err.append(np.max(np.abs(th - th0 * np.cos(np.sqrt(k / J) * t))))
    assert err[1] <= 1e-9 * th0 and err[0] / err[1] >= 12.0, err
    # the element's own moment at the end: −k·θ about −AXIS, i.e. F = k·u, u = −θ
    assert e.force() == pytest.approx(-k * th[-1], abs=1e-9)
    assert e.displacement() == pytest.approx(-th[-1], abs=1e-12)


def test_torsional_masing_matches_assembly():
    """A Masing torsional element (2 mrad pre-rotated start, harmonic torque): the angle
    follows the 1-DOF Assembly (J as mass, the same spring added as a LinearSpring
    element) to 1e-7 of max|θ| under RK44 at h = 4e-4."""
    T, h, J = 0.5, 4e-4, M
    SC, mbs, e, angle, markers = body_rig(masing(), 0.002,
                                          torque=lambda t: F0 * np.sin(W * t), J=J)
    # the linear spring in parallel: a second torsional element about the same axis
    hex.add_element(mbs, get_element_class("LinearSpring")(k=K), markers,
                    rotation_axis=AXIS)
    t, th = solve(mbs, T, h, angle)
    te = np.linspace(0.02, T, 25)
    xr = assembly_reference(J, 0.002, te)
    # rotation_axis = −2·AXIS: u = −θ, the pair acts symmetrically: the same dynamics
    assert np.max(np.abs(np.interp(te, t, th) - xr)) <= 1e-7 * np.max(np.abs(xr))


def test_bad_input():
    """Zero-length or non-finite axes, both axes at once, coordinate markers given an
    axis, position markers given a rotation axis or no axis: ValueError naming the
    parameter."""
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    g = mbs.AddObject(ObjectGround())
    mg = mbs.AddMarker(MarkerBodyPosition(bodyNumber=g))
    n = mbs.AddNode(NodePoint())
    mbs.AddObject(MassPoint(nodeNumber=n, mass=1.0))
    mn = mbs.AddMarker(MarkerNodePosition(nodeNumber=n))
    mc = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=n, coordinate=0))
    el = masing()
    with pytest.raises(ValueError, match="axis must have a nonzero length"):
        hex.add_element(mbs, el, [mg, mn], axis=[0, 0, 0])
    with pytest.raises(ValueError, match="axis must be 3 finite"):
        hex.add_element(mbs, el, [mg, mn], axis=[1, np.nan, 0])
    with pytest.raises(ValueError, match="axis must be 3 finite"):
        hex.add_element(mbs, el, [mg, mn], axis=[1, 0])
    with pytest.raises(ValueError, match="not both"):
        hex.add_element(mbs, el, [mg, mn], axis=[1, 0, 0], rotation_axis=[1, 0, 0])
    with pytest.raises(ValueError, match="wrong type for a translational"):
        hex.add_element(mbs, el, [mg, mc], axis=[1, 0, 0])
    with pytest.raises(ValueError, match="wrong type for a torsional"):
        hex.add_element(mbs, el, [mg, mn], rotation_axis=[1, 0, 0])
    with pytest.raises(ValueError, match="rotation_axis must have a nonzero length"):
        hex.add_element(mbs, el, [mg, mn], rotation_axis=[0, 0, 0])
    with pytest.raises(ValueError, match="give axis"):
        hex.add_element(mbs, el, [mg, mn])
    with pytest.raises(ValueError, match="no marker 99"):
        hex.add_element(mbs, el, [mg, 99], axis=[1, 0, 0])
    assert hex._host(mbs).items == []        # nothing half-added


def test_translational_dahl_ode1_route_under_dopri5():
    """The ode1 route (state integrated by Exudyn) on position markers: Dahl + spring
    along the tilted axis under the adaptive DOPRI5 (rtol 1e-10, steps ≤ 1e-4 s) over
    0.1 s follows the Assembly
    (RK45 at rtol 1e-11) to 1e-7 of max|x|."""
    T = 0.1
    SC, mbs, n, e = point_rig(0.002, dahl(), route="ode1")
    t, X, _ = hex.simulate(SC, mbs, T, 1e-4, solver="DOPRI5", record=[n])
    s = X[:, 0] / AXIS[0]          # the motion stays on the axis (checked above)
    te = np.linspace(0.01, T, 10)
    xr = assembly_reference(M, 0.002, te, dahl())
    assert np.max(np.abs(np.interp(te, t, s) - xr)) <= 1e-7 * np.max(np.abs(xr))


def test_torsional_angle_counts_turns():
    """A constant torque 1 N·m about the tilted axis spins a body (J = 0.2 kg·m², a
    rotation-vector node) past 2π: the element's u follows θ = t²/(2J) (10 rad at
    2 s) to 1e-9 rad, not wrapped to ±π."""
    from exudyn.itemInterface import NodeRigidBodyRotVecLG
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    g = mbs.AddObject(ObjectGround())
    mg = mbs.AddMarker(MarkerBodyRigid(bodyNumber=g))
    nr = mbs.AddNode(NodeRigidBodyRotVecLG(referenceCoordinates=[0] * 6))
    b = mbs.AddObject(ObjectRigidBody(nodeNumber=nr, mass=1.0,
                                      inertia=[0.2, 0.2, 0.2, 0, 0, 0]))
    mb = mbs.AddMarker(MarkerBodyRigid(bodyNumber=b))
    e = hex.add_element(mbs, get_element_class("LinearSpring")(k=0.0), [mg, mb],
                        rotation_axis=AXIS)
    mbs.AddLoad(LoadTorqueVector(markerNumber=mb, loadVector=list(AXIS)))
    t, u = solve(mbs, 2.0, 1e-3, lambda m: e.displacement())
    assert u[-1] > 2 * np.pi
    assert np.max(np.abs(u - t ** 2 / 0.4)) <= 1e-9
