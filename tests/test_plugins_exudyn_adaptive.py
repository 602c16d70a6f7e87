"""The compiled adaptive route of the Exudyn host (route="ode1", coordinate markers: the
law's state is the velocity of a unit-mass ODE2 node, force and rate from the C kernels
in one ObjectGenericODE2 user function) in plain use — ``mbs.Assemble();
exu.SolveDynamic(mbs, settings)`` with DOPRI5 and automatic step size — against an
independent scipy reference (DOP853, rtol 1e-13, of the same equations written from the
law's Python rate and force): the solver's tolerance is honoured (the error falls by at
least half for every tenfold reduction of rtol, as the built-in connector's does), and
the element's state after the solve is the reference's."""
import numpy as np
import pytest

exu = pytest.importorskip("exudyn")
from scipy.integrate import solve_ivp  # noqa: E402

from hystmech.components import get_element_class as G  # noqa: E402
from hystmech.plugins import exudyn as hex  # noqa: E402
from hystmech.plugins.exudyn_build import ode_ready  # noqa: E402

T, K, M, X0 = 0.5, 2000.0, 1.0, 0.01

LAWS = {
    "Dahl": lambda: G("Dahl")(rho=300.0, Fc=0.5, w0=0.0),
    "LuGre": lambda: G("LuGre")(sigma0=1e4, sigma1=30.0, Fc=1.0, Fs=1.5, vs=0.01, beta=2.0,
                                sigma2=0.4),
    "BoucWen": lambda: G("BoucWen")(A=1e4, beta=2.0, gamma=0.5, n=1.5, k_el=100.0),
}


def exudyn_solve(law, rtol, *, ground_first=True):
    """Mass M on a built-in spring K and the element, free vibration from X0, DOPRI5;
    returns (u(T), element state, handle)."""
    from exudyn.itemInterface import (CoordinateSpringDamper, MarkerNodeCoordinate,
                                      NodeGenericODE2, NodePointGround, ObjectGenericODE2)
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    g = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=mbs.AddNode(NodePointGround()),
                                           coordinate=0))
    n = mbs.AddNode(NodeGenericODE2(numberOfODE2Coordinates=1, referenceCoordinates=[0.0],
                                    initialCoordinates=[X0], initialCoordinates_t=[0.0]))
    mbs.AddObject(ObjectGenericODE2(nodeNumbers=[n], massMatrix=[[M]]))
    mk = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=n, coordinate=0))
    mbs.AddObject(CoordinateSpringDamper(markerNumbers=[g, mk], stiffness=K))
    if law is None:
        e = None
        mbs.AddObject(CoordinateSpringDamper(markerNumbers=[g, mk], stiffness=10.0,
                                             damping=0.1))
    else:
        # markers [ground, mass]: u = q(mass); [mass, ground]: u = −q(mass) (the force
        # then acts with the opposite sign on the mass: the same physics mirrored)
        e = hex.add_element(mbs, law, [g, mk] if ground_first else [mk, g], route="ode1")
    mbs.Assemble()
    s = exu.SimulationSettings()
    s.timeIntegration.numberOfSteps = 50
    s.timeIntegration.endTime = T
    s.timeIntegration.automaticStepSize = True
    s.timeIntegration.relativeTolerance = rtol
    s.timeIntegration.absoluteTolerance = rtol * 1e-2
    s.solution.file.write = False
    s.timeIntegration.verboseMode = 0
    exu.SolveDynamic(mbs, s, solverType=exu.DynamicSolverType.DOPRI5)
    u = float(np.ravel(mbs.GetNodeOutput(n, exu.OutputVariableType.Coordinates))[0])
    return u, (e.state() if e is not None else None), e


def scipy_reference(law, sign=1.0):
    """u(T) and the state x(T) of M ü = −K u − s·F(x, s·u, s·v), ẋ = rate(x, s·u, s·v)
    (s = sign: the element's u is s times the mass coordinate)."""
    if law is None:
        def f(t, y):
            return [y[1], (-(K + 10.0) * y[0] - 0.1 * y[1]) / M]
        y0 = [X0, 0.0]
    else:
        def f(t, y):
            x, u, v = y[2:], sign * y[0], sign * y[1]
            return [y[1], (-K * y[0] - sign * law.force_of(x, u, v)) / M,
                    *law.rate_of(x, u, v)]
        y0 = [X0, 0.0, *law.x0]
    r = solve_ivp(f, (0.0, T), y0, method="DOP853", rtol=1e-13, atol=1e-16)
    return r.y[0, -1], r.y[2:, -1]


needs_compiled = pytest.mark.skipif(not ode_ready(), reason="compiled Exudyn host unavailable")


@needs_compiled
@pytest.mark.parametrize("name", [None, *LAWS])
def test_dopri5_error_falls_with_rtol(name):
    law = LAWS[name]() if name else None
    ur, xr = scipy_reference(law)
    errs = []
    for rtol in (1e-5, 1e-6, 1e-7, 1e-8):
        u, x, e = exudyn_solve(law, rtol)
        if e is not None:
            assert e.compiled and e.route == "ode1"
        errs.append(abs(u - ur))
    errs = np.array(errs)
    # every tenfold tightening at least halves the error (the built-in connector: ~10×)
    assert np.all(errs[1:] <= 0.5 * errs[:-1]), errs
    assert errs[-1] <= 1e-8 * X0 * 100, errs


@needs_compiled
@pytest.mark.parametrize("name", list(LAWS))
def test_state_and_mirrored_markers_match_reference(name):
    """The element's state after the solve is the reference's; markers given as [mass,
    ground] (u = −q) give the mirrored reference."""
    for ground_first, sign in ((True, 1.0), (False, -1.0)):
        law = LAWS[name]()
        ur, xr = scipy_reference(law, sign)
        u, x, e = exudyn_solve(law, 1e-9, ground_first=ground_first)
        scale = max(1.0, float(np.max(np.abs(xr))))
        assert abs(u - ur) <= 1e-8, (ground_first, u, ur)
        assert np.max(np.abs(x - xr)) <= 1e-6 * scale, (ground_first, x, xr)


@needs_compiled
def test_systems_created_and_dropped_keep_their_own_elements():
    """The compiled route finds an element by its system and object index (the same
    index in every one of these systems): systems of different laws built, solved and
    dropped in turn each give exactly the result of that law alone."""
    import gc

    alone = {name: exudyn_solve(LAWS[name](), 1e-8)[0] for name in LAWS}
    for k in range(6):
        name = list(LAWS)[k % 3]
        u = exudyn_solve(LAWS[name](), 1e-8)[0]
        assert u == alone[name], (k, name)
        if k % 2:
            gc.collect()
