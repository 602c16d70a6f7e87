"""Hysteretic bending of PyElastica Cosserat rods (hystmech.plugins.elastica): the
moment transcription against PyElastica's own bending law (a per-node LinearSpring is
a raised bend matrix, to rounding), the planar cantilever with the cable law of
Manfredo et al. (2023) against hystmech.systems.rigs.rod at equilibrium, trial/commit once
per step, and the PositionVerlet requirement; a hystmech element on a rigid body
(add_element): the forced 1-DOF rig with each law against hystmech's Assembly (and an
event-driven reference for the relay laws) at h = 1e-5, and the measured order of
PositionVerlet with trial/commit."""
import numpy as np
import pytest

ea = pytest.importorskip("elastica")

from hystmech.components import get_element_class  # noqa: E402
from hystmech.plugins import elastica as hel  # noqa: E402
from hystmech.plugins.elastica_cases import clamped_rod  # noqa: E402

from _rigs import in_a_new_process  # noqa: E402
from plugin_rig import CASES, law_params, one_dof, reference, relays_reference  # noqa: E402
from test_fmu_cases import KIND  # noqa: E402


class Sim(ea.BaseSystemCollection, ea.Constraints, ea.Forcing, ea.CallBacks, ea.Damping):
    pass


def cantilever(n, L, r, E, rho, *, tip, ramp, law=None, x0=None, raise_B=1.0, add_B=None,
               damping=None, dt=None, twist=0.0, torsion=False):
    sim, rod = clamped_rod(n, L, r, rho, E, damping=damping or None, dt=dt)
    rod.bend_matrix[0, 0, :] *= raise_B
    rod.bend_matrix[1, 1, :] *= raise_B
    if add_B is not None:
        for i in range(3):
            rod.bend_matrix[i, i, :] += np.broadcast_to(add_B, 3)[i]
    sim.add_forcing_to(rod).using(ea.EndpointForces, np.zeros(3), np.asarray(tip, float),
                                  ramp_up_time=ramp)
    if twist:
        sim.add_forcing_to(rod).using(ea.UniformTorques, torque=twist,
                                      direction=np.array([1.0, 0.0, 0.0]))
    mem = (hel.add_hysteretic_bending(sim, rod, law, x0=x0, torsion=torsion)
           if law is not None else None)
    sim.finalize()
    return sim, rod, mem


def test_per_node_linear_spring_is_a_raised_bend_matrix():
    """LinearSpring(k = 0.2·EI) on both bending axes of every Voronoi node equals the
    rod whose bend matrix is 1.2·EI, in 3D (tip force along both normals)."""
    LinearSpring = get_element_class("LinearSpring")
    kw = dict(n=20, L=0.4, r=0.005, E=1e6, rho=1000.0, tip=[0.0, 0.02, 0.03], ramp=0.01)
    simA, rodA, _ = cantilever(**kw, raise_B=1.2)
    EI = float(rodA.bend_matrix[0, 0, 3]) / 1.2
    simB, rodB, mem = cantilever(**kw, law=LinearSpring(k=0.2 * EI))
    steps = 1500
    hel.integrate(simA, steps * 1e-5, steps)
    hel.integrate(simB, steps * 1e-5, steps)
    scale = np.max(np.abs(rodA.position_collection[1:]))
    assert scale > 1e-4                                   # a real 3D deflection
    assert np.max(np.abs(rodA.position_collection - rodB.position_collection)) <= 1e-12 * scale
    assert np.max(np.abs(rodA.director_collection - rodB.director_collection)) <= 1e-12
    assert mem.commits == steps                           # one commit per step


def test_planar_cable_equilibrium_matches_hystmech_rod():
    """The cable law of Manfredo et al. (2023) (rod's own EI_el + the hysteretic part
    per node) under a slowly ramped transverse tip load, relaxed by damping, against
    hystmech.systems.rigs.rod's quasi-static equilibrium on the same monotone load path with
    the same EI_el + hysteretic law, EA and GA. PyElastica's clamp locks the first
    element, so its bending starts at the first Voronoi domain (s = dx/2): the hystmech
    rod is clamped there (length L − dx/2)."""
    from hystmech.systems.rigs.rod import Rod, quasi_static

    P, EI, m0 = hel.cable_hysteresis(levels=30)
    L, r, rho, N, F, dt = 0.4, 0.02, 1000.0, 20, 0.8, 2e-4
    E = EI / (np.pi * r ** 4 / 4)
    sim, rod, mem = cantilever(N, L, r, E, rho, tip=[0.0, F, 0.0], ramp=1.5, law=P, x0=m0,
                               damping=8.0, dt=dt)
    hel.integrate(sim, 3.0, int(round(3.0 / dt)))
    assert np.max(np.abs(rod.velocity_collection)) < 1e-3   # at rest
    tip = rod.position_collection[:2, -1]
    S = rod.shear_matrix[:, :, 0].diagonal()
    law = get_element_class("LinearSpring")(k=EI) + P
    dx = L / N
    hr = Rod(N=N, L=L - dx / 2, law=law, EA=S[2], GA=S[0], memory0=law.demagnetized_state())
    ref = quasi_static(hr, tip_force=np.linspace(0.0, F, 41))
    tip_ref = ref.tip[-1] + np.array([dx / 2, 0.0])
    assert np.max(np.abs(tip - tip_ref)) <= 5e-3 * abs(tip_ref[1])
    # the hysteresis is engaged: the clamp curvature is well into the Preisach triangle
    assert ref.K[-1, 1] > 5.0
    # and it dissipated energy on the way (non-negative work of the hysteretic part)
    assert mem.work.sum() > 0


@pytest.mark.parametrize("kt", [1.0, 2.0])
def test_torsion_elements_are_a_raised_twist_stiffness(kt):
    """A torsion law of its own (LinearSpring(kt·k) on τ − τ_rest) next to the bending
    law LinearSpring(k): the rod equals one with k added to the bend matrix's bending
    entries and kt·k to its twist entry (tip force and a uniform twisting torque);
    kt = 1 is also torsion=True (the bending law reused)."""
    LinearSpring = get_element_class("LinearSpring")
    kw = dict(n=12, L=0.4, r=0.005, E=1e6, rho=1000.0, tip=[0.0, 0.02, 0.0], ramp=0.01,
              twist=2e-4)
    k = 1e-4
    simA, rodA, _ = cantilever(**kw, add_B=np.array([k, k, kt * k]))
    simB, rodB, mem = cantilever(**kw, law=LinearSpring(k=k),
                                 torsion=True if kt == 1.0 else LinearSpring(k=kt * k))
    assert mem.axes == (0, 1, 2)
    steps = 1000
    hel.integrate(simA, steps * 1e-5, steps)
    hel.integrate(simB, steps * 1e-5, steps)
    assert np.max(np.abs(rodA.kappa[2])) > 1e-3                 # twisted
    np.testing.assert_allclose(rodB.director_collection, rodA.director_collection,
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose(rodB.kappa, rodA.kappa, rtol=0,
                               atol=1e-12 * np.max(np.abs(rodA.kappa)))


def curved_rod(n=10, L=0.3, R=0.25, r=0.005, E=1e6):
    """A rod built on a circular arc of radius R in the (x, y) plane, its rest strains
    those of the arc (rest κ1 = 1/R)."""
    s = np.linspace(0.0, L, n + 1)
    th = s / R
    pos = np.vstack([R * np.sin(th), R * (1 - np.cos(th)), 0 * th])
    thm = 0.5 * (th[1:] + th[:-1])
    D = np.zeros((3, 3, n))
    for i in range(n):
        t = np.array([np.cos(thm[i]), np.sin(thm[i]), 0.0])
        D[0, :, i] = [0.0, 0.0, 1.0]
        D[1, :, i] = np.cross(t, [0.0, 0.0, 1.0])
        D[2, :, i] = t
    rod = ea.CosseratRod.straight_rod(n, np.zeros(3), np.array([1.0, 0, 0]),
                                      np.array([0, 0, 1.0]), L, r, 1000.0, youngs_modulus=E,
                                      shear_modulus=E / 3, position=pos, directors=D)
    rod.rest_kappa[:] = rod.kappa
    rod.rest_sigma[:] = rod.sigma
    return rod


@pytest.mark.parametrize("which", ["linear", "masing", "vector+torsion"])
def test_precurved_rod_holds_its_rest_curvature(which):
    """The elements are driven by κ − κ_rest (and τ − τ_rest): a rod built at its rest
    curvature (4 /m), clamped and unloaded, stays there to 1e-12 with any law at rest.
    Driven by κ instead, a LinearSpring(0.2·EI) pulled it to 4/1.2 = 3.33 /m."""
    from hystmech.components.masing_vector import MasingVector
    LinearSpring = get_element_class("LinearSpring")
    Masing = get_element_class("Masing")
    rod = curved_rod()
    EI = float(rod.bend_matrix[0, 0, 0])
    law, tors = {"linear": (LinearSpring(k=0.2 * EI), None),
                 "masing": (Masing(k=0.5 * EI, k0=0.0, alpha=0.1 * EI), None),
                 "vector+torsion": (MasingVector(k=0.5 * EI, alpha=0.1 * EI),
                                    Masing(k=0.3 * EI, k0=0.0, alpha=0.1 * EI))}[which]
    sim = Sim()
    sim.append(rod)
    sim.constrain(rod).using(ea.OneEndFixedBC, constrained_position_idx=(0,),
                             constrained_director_idx=(0,))
    hel.add_hysteretic_bending(sim, rod, law, torsion=tors)
    sim.finalize()
    k0 = rod.rest_kappa.copy()
    assert abs(k0[0, 0] - 4.0) < 1e-2
    hel.integrate(sim, 200 * 1e-5, 200)
    assert np.max(np.abs(rod.kappa - k0)) <= 1e-12


def test_isotropic_vector_law_same_deflection_at_45_degrees():
    """A tip load at 45° between the section's axes deflects the tip as much as one
    along an axis with the isotropic vector laws (MasingVector, BoucWenBiaxial on this
    proportional load: ratio 1.000 ± 1e-3, while the elements yield; BoucWenIsotropic,
    n = 1.5: 1 ± 1e-9), whereas one scalar Masing per axis (square yield surface) does
    not."""
    from hystmech.components.bouc_wen_biaxial import BoucWenBiaxial
    from hystmech.components.bouc_wen_isotropic import BoucWenIsotropic
    from hystmech.components.masing_vector import MasingVector
    Masing = get_element_class("Masing")
    kw = dict(n=8, L=0.3, r=0.005, E=1e6, rho=1000.0, ramp=0.004)
    EI = 1e6 * np.pi * 0.005 ** 4 / 4
    ratios = {}
    for name, law in (("vector", MasingVector(k=2 * EI, alpha=0.02 * EI)),
                      ("biaxial", BoucWenBiaxial(A=2 * EI, beta=1.0 / (0.02 * EI) ** 2,
                                                 gamma=1.0 / (0.02 * EI) ** 2)),
                      ("isotropic", BoucWenIsotropic(A=2 * EI, beta=1.0 / (0.02 * EI) ** 1.5,
                                                     gamma=1.0 / (0.02 * EI) ** 1.5, n=1.5)),
                      ("scalar", Masing(k=2 * EI, k0=0.0, alpha=0.02 * EI))):
        d = []
        for ang in (0.0, np.pi / 4):
            F = 0.004
            sim, rod, mem = cantilever(**kw, tip=[0.0, F * np.cos(ang), F * np.sin(ang)],
                                       law=law)
            hel.integrate(sim, 500 * 2e-5, 500)
            d.append(np.hypot(*rod.position_collection[1:, -1]))
            if name == "vector":
                # yielding: the moment reached the circle |M| = alpha
                assert np.max(np.hypot(mem.M[:, 0], mem.M[:, 1])) > 0.999 * 0.02 * EI
        ratios[name] = d[1] / d[0]
        assert d[0] > 5e-5
    assert abs(ratios["vector"] - 1.0) <= 1e-3, ratios
    assert abs(ratios["biaxial"] - 1.0) <= 1e-3, ratios
    # the truly isotropic law (Harvey & Gavin): the rod and the law both commute with
    # rotations about the rod's axis, so the deflections agree to rounding
    assert abs(ratios["isotropic"] - 1.0) <= 1e-9, ratios
    assert abs(ratios["scalar"] - 1.0) > 5e-3, ratios


def test_forcing_class_in_elastica_idiom_and_restart():
    """``sim.add_forcing_to(rod).using(HystereticBending, law=...)`` (no callback: the
    next step commits) equals add_hysteretic_bending; a run saved with
    elastica.save_state and reloaded by load_state into a fresh simulator continues
    exactly as the uninterrupted run (the element memory rides in the rod's state)."""
    import tempfile

    from hystmech.components.masing_vector import MasingVector
    from hystmech.plugins.elastica import HystereticBending
    EI = 1e6 * np.pi * 0.005 ** 4 / 4
    law = MasingVector(k=2 * EI, alpha=0.02 * EI)
    kw = dict(n=10, L=0.3, r=0.005, E=1e6, rho=1000.0, tip=[0.0, 0.003, 0.002],
              ramp=0.004)
    simA, rodA, memA = cantilever(**kw, law=law)
    hel.integrate(simA, 600 * 2e-5, 600)

    sim, rod = clamped_rod(10, 0.3, 0.005, 1000.0, 1e6)
    sim.add_forcing_to(rod).using(ea.EndpointForces, np.zeros(3),
                                  np.array([0.0, 0.003, 0.002]), ramp_up_time=0.004)
    sim.add_forcing_to(rod).using(HystereticBending, law=law)
    sim.finalize()
    hel.integrate(sim, 600 * 2e-5, 600)
    np.testing.assert_allclose(rod.position_collection, rodA.position_collection, rtol=0,
                               atol=1e-13)
    assert hel.bending_memory(rod).commits == 600         # the last one committed on read
    # restart: 300 steps, save, a fresh simulator loads and runs 300 more
    with tempfile.TemporaryDirectory() as d:
        simB, rodB, memB = cantilever(**kw, law=law)
        ea.integrate(ea.PositionVerlet(), simB, 300 * 2e-5, 300, progress_bar=False)
        ea.save_state(simB, d, time=300 * 2e-5)
        simC, rodC, memC = cantilever(**kw, law=law)
        t = ea.load_state(simC, d)
        ea.integrate(ea.PositionVerlet(), simC, 300 * 2e-5, 300, restart_time=t,
                     progress_bar=False)
    assert np.max(np.abs(memC.Xb)) > 0.5 * 0.02 * EI / (2 * EI)       # memory engaged
    np.testing.assert_allclose(rodC.position_collection, rodA.position_collection,
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose(memC.Xb, memA.Xb, rtol=0, atol=1e-12)


def test_position_verlet_is_required():
    LinearSpring = get_element_class("LinearSpring")
    sim, rod, mem = cantilever(8, 0.4, 0.005, 1e6, 1000.0, tip=[0, 0.01, 0], ramp=0.01,
                               law=LinearSpring(k=1e-4))
    with pytest.raises(ValueError, match="PositionVerlet"):
        hel.integrate(sim, 1e-3, 10, stepper=ea.PEFRL())
    with pytest.raises(RuntimeError, match="PositionVerlet"):
        ea.integrate(ea.PEFRL(), sim, 1e-3, 10, progress_bar=False)


def test_every_stepper_pyelastica_offers_is_supported_or_refused_by_name():
    """The steppers of the installed PyElastica (1.0: the symplectic PositionVerlet and
    PEFRL; its timestepper package has no explicit steppers, the RungeKutta4 and
    EulerForward of earlier releases are gone): PositionVerlet runs (one commit per
    step), every other one is refused by integrate with a ValueError naming it."""
    import importlib.util
    import inspect

    from elastica.timestepper.symplectic_steppers import SymplecticStepperMixin
    offered = {c for mod in (ea, ea.timestepper)
               for _, c in inspect.getmembers(mod, inspect.isclass)
               if issubclass(c, SymplecticStepperMixin) and c is not SymplecticStepperMixin}
    assert {c.__name__ for c in offered} >= {"PositionVerlet", "PEFRL"}
    assert importlib.util.find_spec("elastica.timestepper.explicit_steppers") is None
    LinearSpring = get_element_class("LinearSpring")
    for cls in offered:
        sim, rod, mem = cantilever(8, 0.4, 0.005, 1e6, 1000.0, tip=[0, 0.01, 0],
                                   ramp=0.01, law=LinearSpring(k=1e-4))
        if cls is ea.PositionVerlet:
            hel.integrate(sim, 1e-3, 10, stepper=cls())
            assert mem.commits == 10
        else:
            with pytest.raises(ValueError, match=cls.__name__):
                hel.integrate(sim, 1e-3, 10, stepper=cls())


def test_pefrl_sums_external_torques_over_its_stages():
    """The documented reason PEFRL (the other stepper PyElastica documents for rods) is
    refused: a forcing adding a constant torque T0 at each evaluation sees, under PEFRL,
    the rod's external torque grow T0, 2·T0, 3·T0, 4·T0 over one step's four stages
    (PyElastica zeroes it only at the step's end); under PositionVerlet, T0 once."""
    seen = []

    class Probe(ea.NoForces):
        def apply_torques(self, system, time=np.float64(0.0)):
            system.external_torques[2, 0] += 1.0
            seen.append(float(system.external_torques[2, 0]))

    class S(ea.BaseSystemCollection, ea.Forcing):
        pass

    for stepper, expect in ((ea.PEFRL(), [1.0, 2.0, 3.0, 4.0]), (ea.PositionVerlet(), [1.0])):
        sim = S()
        rod = ea.CosseratRod.straight_rod(4, np.zeros(3), np.array([1.0, 0, 0]),
                                          np.array([0, 0, 1.0]), 0.4, 0.005, 1000.0,
                                          youngs_modulus=1e6, shear_modulus=1e6 / 3)
        sim.append(rod)
        sim.add_forcing_to(rod).using(Probe)
        sim.finalize()
        seen.clear()
        ea.integrate(stepper, sim, 2e-6, 2, progress_bar=False)
        assert seen == expect * 2, (type(stepper).__name__, seen)


# -- a force element on a rigid body: the forced 1-DOF rig of the other engines ---------
class RigSim(ea.BaseSystemCollection, ea.Forcing, ea.CallBacks):
    pass


class SpringAndDrive(ea.NoForces):
    """The rig's linear spring to the ground and its harmonic force F0·sin(ωt) [N]."""

    def __init__(self, k, F0, w):
        super().__init__()
        self.k, self.F0, self.w = k, F0, w

    def apply_forces(self, system, time=np.float64(0.0)):
        system.external_forces[0, 0] += (self.F0 * np.sin(self.w * time)
                                         - self.k * system.position_collection[0, 0])


class Record(ea.CallBackBaseClass):
    def __init__(self, out):
        super().__init__()
        self.out = out

    def make_callback(self, system, time, current_step):
        self.out.append((float(time), float(system.position_collection[0, 0])))


def run_rigid(el, m, k, F0, w, h, T, v0=0.0):
    """A sphere of mass m on the spring, the element along x through
    hystmech.plugins.elastica.add_element, PositionVerlet (Elastica's own loop)."""
    sim = RigSim()
    r = 0.01
    body = ea.Sphere(np.zeros(3), r, m / (4.0 / 3.0 * np.pi * r ** 3))
    body.velocity_collection[0, 0] = v0
    sim.append(body)
    sim.add_forcing_to(body).using(SpringAndDrive, k=k, F0=F0, w=w)
    mem = hel.add_element(sim, body, el, direction=[1.0, 0.0, 0.0])
    out = []
    sim.collect_diagnostics(body).using(Record, out=out)
    sim.finalize()
    n = int(round(T / h))
    hel.integrate(sim, T, n)
    a = np.array(out)
    assert mem.commits == n
    return a[:, 0], a[:, 1]


DISCONTINUOUS = {"Relay", "Preisach"}
OPERATORS = {n for n in CASES if KIND[n] == "operator"}


def rigid_error(name, h):
    # relays against the independent event-driven reference (the Assembly's projection
    # scheme places each switch within its own step); operators over 0.5 s (several
    # switches; the horizon of the MuJoCo tests, whose references are cached)
    T = 0.5 if name in OPERATORS else 0.1
    el, prm, te, xr = (relays_reference if name in DISCONTINUOUS else reference)(name, T)
    t, x = run_rigid(el, *prm, h, T)
    return float(np.max(np.abs(np.interp(te, t, x) - xr)) / np.max(np.abs(xr)))


@pytest.mark.parametrize("name", law_params(sorted(set(CASES) - {"CableLaw"})))
def test_one_dof_rigid_body_matches_assembly(name):
    """Each law between the ground and a rigid sphere on a spring, forced, integrated by
    PositionVerlet at h = 1e-5: within 1e-5 of max|x| of hystmech's Assembly (compiled
    RK45 at rtol 1e-11, event-driven for inclusions, projection at h = 1e-6 for
    operators, whose own error is ~2e-6 here; exact switch events for relays)."""
    assert rigid_error(name, 1e-5) <= 1e-5


@pytest.mark.parametrize("name, expected", [("Relay", 2), ("Dahl", 2), ("LuGre", 1)])
def test_position_verlet_order_with_trial_commit(name, expected):
    """PositionVerlet with the element's force at the half step (trial from the state
    committed at the previous half step) is second order for a force depending on u
    alone, a relay's jumps included (the force is the step's mean, cut at the switch
    points), and first order once it depends on the velocity, which Elastica gives at
    the start of the step (LuGre's σ1ẋ + σ2u̇)."""
    e = np.array([rigid_error(name, h) for h in (4e-5, 2e-5, 1e-5)])
    order = np.log2(e[:-1] / e[1:])
    assert np.all((order > expected - 0.15) & (order < expected + 0.3)), (e, order)


def test_add_element_bad_input():
    LinearSpring = get_element_class("LinearSpring")
    sim = RigSim()
    body = ea.Sphere(np.zeros(3), 0.01, 1000.0)
    sim.append(body)
    with pytest.raises(ValueError, match="direction must be a unit 3-vector"):
        hel.add_element(sim, body, LinearSpring(k=1.0), direction=[1.0, 1.0, 0.0])
    with pytest.raises(ValueError, match="node must be an integer"):
        hel.add_element(sim, body, LinearSpring(k=1.0), direction=[1.0, 0, 0], node=3)
    with pytest.raises(ValueError, match="law must be a hystmech force element"):
        hel.add_element(sim, body, "spring", direction=[1.0, 0, 0])


def test_position_verlet_second_order_from_a_moving_start():
    """The element's u is measured from the initial configuration and its state starts
    there at t = 0: started with a velocity (v0 = 0.05 m/s), PositionVerlet with a Dahl
    element converges at second order to the Assembly started the same way (compiled
    RK45 at rtol 1e-11). Anchored at the first force evaluation (x0 + h/2·v0), it was
    first order."""
    from hystmech.systems import simulate
    Dahl = get_element_class("Dahl")
    el = Dahl(rho=300.0, Fc=0.5, w0=0.0)
    m, k, F0, w, v0, T = 0.05, 20.0, 0.6, 2 * np.pi * 0.4, 0.05, 0.1
    a = one_dof(el, m, k, F0, w, v0=v0)
    te = np.linspace(T / 20, T, 20)
    xr = simulate(a, (0, T), method="RK45", t_eval=te, rtol=1e-11, atol=1e-15,
                  energy=False).x("m")
    err = []
    for h in (2e-4, 1e-4, 5e-5):
        t, x = run_rigid(el, m, k, F0, w, h, T, v0=v0)
        err.append(np.max(np.abs(np.interp(te, t, x) - xr)) / np.max(np.abs(xr)))
    order = np.log2(np.array(err[:-1]) / np.array(err[1:]))
    assert np.all((order > 1.7) & (order < 2.4)), (err, order)


def _cable_rod_non_proportional(levels=12, steps=400):
    # a 8-element cantilever with the cable law's hysteretic part per bending axis and on
    # the twist, driven by a tip force turning in the cross-section while its size
    # grows and shrinks and a twisting end couple (a non-proportional strain path with
    # reversals of every size on every axis)
    P, EI, m0 = hel.cable_hysteresis(levels=levels)

    class Drive(ea.NoForces):
        def apply_forces(self, system, time=np.float64(0.0)):
            t = float(time)
            a = 0.004 * np.sin(np.pi * t / (steps * 2e-5)) * (1.0 + 0.5 * np.sin(90.0 * t))
            system.external_forces[1, -1] += a * np.cos(700.0 * t)
            system.external_forces[2, -1] += a * np.sin(1100.0 * t)

        def apply_torques(self, system, time=np.float64(0.0)):
            system.external_torques[2, -1] += 2e-4 * np.sin(1500.0 * float(time))

    sim, rod = clamped_rod(8, 0.3, 0.005, 1000.0, 1e6)
    sim.add_forcing_to(rod).using(Drive)
    mem = hel.add_hysteretic_bending(sim, rod, P, x0=m0, torsion=True)
    sim.finalize()
    return sim, rod, mem, P


def test_preisach_commit_of_the_changed_levels_equals_the_full_copy(monkeypatch):
    """The per-node commit of a Preisach memory copies only what the step's advance
    wrote (the law's state_commit): along a non-proportional 3D path the rod, the couples
    and the committed live memories are bitwise those of the same run committing with a
    full copy of every live memory (state_copy), and the memories did move (stacks
    wiped out and rebuilt)."""
    steps = 400
    sim, rod, mem, P = _cable_rod_non_proportional(steps=steps)
    D = int(P.p[2])
    n0 = mem.Xb[:, :, 1].copy()
    hel.integrate(sim, steps * 2e-5, steps)
    monkeypatch.setattr(hel, "_commit_of", hel._copy_of)
    simF, rodF, memF, _ = _cable_rod_non_proportional(steps=steps)
    assert memF._run is not mem._run                       # the full-copy kernel
    hel.integrate(simF, steps * 2e-5, steps)
    assert np.array_equal(rod.position_collection, rodF.position_collection)
    assert np.array_equal(rod.director_collection, rodF.director_collection)
    assert np.array_equal(mem.Mc, memF.Mc)
    for X, XF in ((mem.Xb, memF.Xb), (mem.Xs, memF.Xs)):
        for i in range(X.shape[0]):
            for a in range(X.shape[1]):
                n = int(X[i, a, 1])
                assert np.array_equal(X[i, a, :3 + n], XF[i, a, :3 + n])
                assert np.array_equal(X[i, a, 3 + D:3 + D + n], XF[i, a, 3 + D:3 + D + n])
    assert np.max(np.abs(mem.Xs[:, 0, 0])) > 0.0                             # twisted
    assert np.count_nonzero(mem.Xb[:, :, 1] != n0) > mem.Xb[:, :, 1].size // 2  # moved


def test_a_trial_that_is_not_committed_leaves_the_committed_memory():
    """Trial/commit: an evaluation advances a copy of the committed memory. After a
    completed step, a trial at other strains (the rod bent further by hand) changes the
    couples but not the committed memories, strains or time; a second evaluation within
    the step is refused and changes nothing either."""
    steps = 200
    sim, rod, mem, P = _cable_rod_non_proportional(steps=steps)
    hel.integrate(sim, steps * 2e-5, steps)
    t = mem.tc
    before = [np.array(getattr(mem, k)) for k in ("Xb", "Xs", "Kc", "Mc", "work")]
    tc = mem.tc
    M0 = mem.M.copy()
    kappa = rod.kappa.copy()
    rod.kappa[:2] += 0.3 * np.abs(rod.kappa[:2]).max() + 0.5
    mem.evaluate(rod, tc + 2e-5)
    rod.kappa[...] = kappa
    assert np.max(np.abs(mem.M - M0)) > 0.0                 # the trial moved the couples
    with pytest.raises(RuntimeError, match="twice within one time step"):
        mem.evaluate(rod, tc + 2e-5)
    assert mem.tc == tc == t
    for k, b in zip(("Xb", "Xs", "Kc", "Mc", "work"), before):
        assert np.array_equal(getattr(mem, k), b), k


def test_bare_forcing_class_refuses_a_multi_stage_stepper():
    """Without the commit callback (the forcing class alone) a multi-stage stepper shows
    as evaluations at unequal intervals: PEFRL is refused naming PositionVerlet."""
    from hystmech.plugins.elastica import HystereticBending
    LinearSpring = get_element_class("LinearSpring")
    sim, rod = clamped_rod(8, 0.4, 0.005, 1000.0, 1e6)
    sim.add_forcing_to(rod).using(HystereticBending, law=LinearSpring(k=1e-4))
    sim.finalize()
    with pytest.raises(RuntimeError, match="unequal intervals.*PositionVerlet"):
        ea.integrate(ea.PEFRL(), sim, 1e-3, 10, progress_bar=False)


def _bent_rod(law, *, commit_callback=False, N=10, second=None):
    """A clamped rod bent out of plane with law at every node (add_hysteretic_bending),
    optionally with the explicit CommitMemory callback, and optionally a second rod of
    ``second`` elements appended first (so the rods share PyElastica's memory block: the
    kernel's rod arrays are then rows of a wider block)."""
    sim, rod = clamped_rod(N, 0.3, 0.005, 1000.0, 1e6)
    if second is not None:
        other = ea.CosseratRod.straight_rod(second, np.array([0.0, 1.0, 0.0]),
                                            np.array([1.0, 0, 0]), np.array([0, 0, 1.0]),
                                            0.2, 0.005, 1000.0, youngs_modulus=1e6,
                                            shear_modulus=1e6 / 3)
        sim.append(other)
        sim.constrain(other).using(ea.OneEndFixedBC, constrained_position_idx=(0,),
                                   constrained_director_idx=(0,))
        sim.add_forcing_to(other).using(ea.EndpointForces, np.zeros(3),
                                        np.array([0.0, 0.0, 0.004]), ramp_up_time=0.002)
    sim.add_forcing_to(rod).using(ea.EndpointForces, np.zeros(3),
                                  np.array([0.0, 0.003, 0.002]), ramp_up_time=0.004)
    sim.add_forcing_to(rod).using(ea.UniformTorques, 2e-4, np.array([1.0, 0.0, 0.0]))
    Masing = get_element_class("Masing")
    EI = 1e6 * np.pi * 0.005 ** 4 / 4
    mem = hel.add_hysteretic_bending(sim, rod, law, torsion=Masing(k=EI, k0=0.0,
                                                                   alpha=0.01 * EI))
    if commit_callback:
        sim.collect_diagnostics(rod).using(hel.CommitMemory, memory=mem)
    sim.finalize()
    return sim, rod, mem


def test_commit_inside_the_next_call_equals_the_commit_callback():
    """Without a callback (each step's trial committed inside the next step's compiled
    call, the last one on read) plain ``elastica.integrate`` gives bitwise the rod and
    the committed memories of the same run committing from a CommitMemory callback once
    per step; after the run the last step is committed (commits = steps, tc = the last
    step's evaluation time, t_end − h/2), and the memory did yield."""
    from hystmech.components.masing_vector import MasingVector
    EI = 1e6 * np.pi * 0.005 ** 4 / 4
    law = MasingVector(k=2 * EI, alpha=0.02 * EI)
    steps, h = 500, 2e-5
    runs = []
    for cb in (False, True):
        sim, rod, mem = _bent_rod(law, commit_callback=cb)
        assert mem.callback is cb
        ea.integrate(ea.PositionVerlet(), sim, steps * h, steps, progress_bar=False)
        runs.append((rod, mem))
    (rod, mem), (rodC, memC) = runs
    assert mem.commits == memC.commits == steps
    assert mem.tc == memC.tc == pytest.approx(steps * h - h / 2, abs=1e-15)
    assert np.array_equal(rod.position_collection, rodC.position_collection)
    assert np.array_equal(rod.director_collection, rodC.director_collection)
    for k in ("Xb", "Xs", "Kc", "Mc", "work", "M"):
        assert np.array_equal(getattr(mem, k), getattr(memC, k)), k
    w = np.hypot(mem.Xb[:, 0, 0], mem.Xb[:, 0, 1])
    assert np.max(w) == pytest.approx(law.p[2], rel=1e-12)            # slipped somewhere


def test_rod_sharing_the_memory_block_with_another_rod():
    """The rod's arrays are handed to the kernel as addresses with their row strides:
    a rod that shares PyElastica's memory block with another rod (its arrays rows of a
    wider block, not contiguous) gives bitwise the rod and memories of the same rod
    alone."""
    Masing = get_element_class("Masing")
    EI = 1e6 * np.pi * 0.005 ** 4 / 4
    law = Masing(k=2 * EI, k0=0.0, alpha=0.02 * EI)
    steps = 300
    out = []
    for second in (None, 7):
        sim, rod, mem = _bent_rod(law, second=second)
        ea.integrate(ea.PositionVerlet(), sim, steps * 2e-5, steps, progress_bar=False)
        out.append((rod, mem))
    (rodA, memA), (rodB, memB) = out
    assert rodB.kappa.strides[0] > rodB.kappa.shape[1] * 8                # a wider block
    assert np.array_equal(rodA.position_collection, rodB.position_collection)
    assert np.array_equal(rodA.director_collection, rodB.director_collection)
    for k in ("Xb", "Xs", "Kc", "Mc", "work"):
        assert np.array_equal(getattr(memA, k), getattr(memB, k)), k
    assert np.max(np.abs(memA.Xb)) == pytest.approx(0.01, rel=1e-12)      # slipped (η)


def test_memory_refuses_a_rod_of_another_size():
    LinearSpring = get_element_class("LinearSpring")
    sim, rod, mem = cantilever(8, 0.4, 0.005, 1e6, 1000.0, tip=[0, 0.01, 0], ramp=0.01,
                               law=LinearSpring(k=1e-4))
    _, other = clamped_rod(6, 0.4, 0.005, 1000.0, 1e6)
    with pytest.raises(ValueError, match="7 Voronoi nodes, the rod has 5"):
        mem.evaluate(other, 1e-5)


_NEW_PROCESS = """
import numpy as np
from test_plugins_elastica import _cached_kernel_runs
np.savez({out!r}, **_cached_kernel_runs())
"""


def _cached_kernel_runs():
    # one short bent-rod run per pair of shipped laws: Masing per axis with Masing
    # torsion, MasingVector, BoucWenIsotropic (its advance a cache=False dp45 caller)
    from hystmech.components.bouc_wen_isotropic import BoucWenIsotropic
    from hystmech.components.masing_vector import MasingVector
    Masing = get_element_class("Masing")
    EI = 1e6 * np.pi * 0.005 ** 4 / 4
    laws = {"masing": (Masing(k=2 * EI, k0=0.0, alpha=0.02 * EI),
                       Masing(k=EI, k0=0.0, alpha=0.01 * EI)),
            "vector": (MasingVector(k=2 * EI, alpha=0.02 * EI), None),
            "bwi": (BoucWenIsotropic(A=2 * EI, beta=1 / (0.02 * EI) ** 2,
                                     gamma=1 / (0.02 * EI) ** 2, n=2.0), None)}
    out = {}
    for name, (law, torsion) in laws.items():
        sim, rod, mem = cantilever(6, 0.4, 0.005, 1e6, 1000.0, tip=[0.0, 0.02, 0.01],
                                   ramp=1e-3, law=law, torsion=torsion or False)
        hel.integrate(sim, 200 * 2e-5, 200)
        out[name] = rod.position_collection.copy()
        out[name + "_Xb"] = mem.Xb.copy()
        out[name + "_commits"] = np.array(mem.commits)
    return out


def test_kernel_of_shipped_laws_is_loaded_from_disk_in_a_new_process(tmp_path):
    """The per-step kernel of a pair of shipped laws is compiled once per install, not
    once per process: after this process ran it, a new process (the suite's other
    worker, a user's next script) loads it from numba's disk cache — no "numba:compile"
    event of any hystmech function (numba's event API) — and gives bitwise the rod and
    the memory of this process's compiled kernel. Fails when the kernel is compiled
    per process (a closure over the law's kernels, cache=False)."""
    import os
    here = _cached_kernel_runs()
    for name in ("masing", "vector", "bwi"):
        assert int(here[name + "_commits"]) == 200
        assert np.max(np.abs(here[name + "_Xb"])) > 0.0           # the law was driven
    compiled, _ = in_a_new_process(_NEW_PROCESS.format(out=str(tmp_path / "o.npz")),
                                   path=[os.path.dirname(__file__)])
    assert [c for c in compiled if c.startswith("hystmech.")] == [], compiled
    there = np.load(tmp_path / "o.npz")
    for k, v in here.items():
        assert np.array_equal(there[k], v), k
