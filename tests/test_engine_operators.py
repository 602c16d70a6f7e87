"""The shipped operators (Relay, Preisach, Prandtl-Ishlinskii) on the generic engine
(systems/methods/engine.py: their force in the law switch, their memory's update in
the generic ``ops`` after each accepted projection step). Checked against the
structure's generated code (systems/codegen.py ``_ops``, an independent writing of the
same update) bit for bit, against the return-point memory every Preisach operator has
(wiping-out), and for what it is for: a new structure with an operator runs in a new
process without compiling anything; a sum with an operator part runs there through its
C wrappers (systems/law_wrappers.py)."""
import textwrap

import numpy as np
import pytest

from hystmech.components import Masing
from hystmech.components.preisach import Preisach, PrandtlIshlinskii, Relay
from hystmech.systems import GROUND, Assembly, Harmonic, simulate
from hystmech.systems.methods import engine as E
from hystmech.systems.model import Model

from _rigs import assert_same_run, engine_and_generated, in_a_new_process


def preisach():
    """A continuous Preisach operator (weights from a kernel on the half-plane, a
    linear part k0) [N]."""
    return Preisach.from_kernel(lambda r, s: -2e3 * (1.0 + 30.0 * r + 20.0 * s), 0.01, 3,
                                continuous=True, k0=40.0, max_depth=24)


def rig():
    """Two DOFs, an imposed base, an inclusion (Masing) and every operator kind: a relay
    to ground, a Preisach between the masses, a Prandtl-Ishlinskii to the base."""
    a = Assembly()
    a.add_dof("m1", mass=1.0)
    a.add_dof("m2", mass=0.5)
    a.add_spring("m1", GROUND, k=400.0)
    a.add_spring("m1", "m2", k=150.0, preload=0.2)
    a.add_damper("m1", GROUND, c=0.8)
    a.impose("base", Harmonic(0.0, 0.01, 3.1))
    a.add_spring("m2", "base", k=100.0)
    a.add_element("ms", Masing(k=300.0, k0=0.0, alpha=1.0), "m1", "base")
    a.add_element("rl", Relay(a1=-2e-3, a2=3e-3), "m1", GROUND)
    a.add_element("pr", preisach(), "m1", "m2")
    a.add_element("pi", PrandtlIshlinskii(r=np.array([1e-3, 3e-3]), weights=[-20.0, -10.0],
                                          h=5e-4, u_bound=0.03, k0=30.0, max_depth=24),
                  "m2", "base")
    a.add_force("m1", Harmonic(0.0, 3.0, 2.0))
    return a


def test_operators_on_the_engine_equal_the_generated_code_bit_for_bit():
    a = rig()
    r, g = engine_and_generated(a, (0.0, 0.6), method="projection", h=1e-4, energy=True)
    assert [E.op_id(e.element) is not None for e in a.elements] == [False, True, True, True]
    # every element, operator or law, called through its table of C wrappers
    assert (r.model.prm.EL[:, 6] >= E.TABLE_MIN).all()
    assert np.array_equal(r.y, g.y)
    assert_same_run(r, g, 1e-300, abs_quad=0.0, observed=False)
    # the run exercises the operators: the relay switches both ways, the Preisach and
    # the Prandtl-Ishlinskii forces move
    assert set(np.unique(r.force("rl"))) == {-1.0, 1.0}
    assert np.ptp(r.force("pr")) > 0.1 and np.ptp(r.force("pi")) > 0.05


def test_sums_with_an_operator_part_on_the_engine_equal_the_generated_code():
    # a sum with an operator part (its kernels generated per sum: a user's kernels to
    # the engine) runs through its C wrappers (law_wrappers.py: force with zero rates, and
    # advance after each accepted step), bit for bit the generated code; the Dahl's
    # state inside the second sum moves with the sum's advance only
    from hystmech.components import Dahl, LinearDamper

    from hystmech.systems import law_wrappers as U

    a = Assembly()
    a.add_dof("m", mass=1.0)
    a.add_spring("m", GROUND, k=500.0)
    a.impose("base", Harmonic(0.0, 0.004, 7.0))
    a.add_element("s1", Masing(k=300.0, k0=0.0, alpha=1.0) + LinearDamper(c=2.0)
                  + Relay(a1=-1e-3, a2=2e-3), "m", GROUND)
    a.add_element("s2", Dahl(rho=2e4, Fc=0.5) + preisach(), "m", "base")
    a.add_force("m", Harmonic(0.0, 2.0, 3.0))
    r, g = engine_and_generated(a, (0.0, 0.4), method="projection", h=1e-4, energy=True)
    assert (r.model.prm.EL[:, 6] >= U.TABLE_MIN).all()
    assert np.array_equal(r.y, g.y)
    assert_same_run(r, g, 1e-300, abs_quad=0.0, observed=False)
    assert np.ptp(r.state("s2")[:, 0]) > 0.1                 # the Dahl's state moves


def test_wiping_out_on_the_engine():
    # a Preisach operator driven by a periodic displacement with inner turning points
    # (u = u1 − u2, two imposed ends: a fundamental and its third harmonic), so that
    # each cycle runs minor loops inside the major one: the cycle's extrema wipe out
    # every older memory (Mayergoyz's wiping-out property), so from the second cycle on
    # the force repeats, cycle after cycle
    w = 2.0 * np.pi                                     # one cycle per second
    a = Assembly()
    a.add_dof("m", mass=1.0)
    a.add_spring("m", GROUND, k=1e3)
    a.impose("b1", Harmonic(0.0, 0.012, w))
    a.impose("b2", Harmonic(0.0, 0.006, 3.0 * w, 0.4))
    a.add_element("pr", preisach(), "b1", "b2")
    with E.use("engine"):
        r = simulate(a, (0.0, 3.0), method="projection", h=1e-3)
    assert r.model.engine() is not None
    F, u = r.force("pr"), r.deflection("pr")[0]
    n = 1000                                            # steps per cycle
    turns = np.sum(np.diff(np.sign(np.diff(u[n:2 * n + 1]))) != 0)
    assert turns >= 4                                   # minor loops in every cycle
    np.testing.assert_allclose(F[2 * n:3 * n], F[n:2 * n], rtol=1e-9, atol=1e-9)
    assert np.ptp(F[n:2 * n]) > 0.1
    # and the memory is what makes it: a cycle dissipates (∮F du > 0, a force that were
    # a function of u alone would give 0)
    c = slice(n, 2 * n + 1)
    work = np.sum(0.5 * (F[c][1:] + F[c][:-1]) * np.diff(u[c]))
    assert work > 0.01 * np.ptp(F[c]) * np.ptp(u[c])


def test_a_new_structure_with_operators_compiles_nothing_in_a_new_process():
    E.warm("projection", Model)
    code = textwrap.dedent('''
        import os
        os.environ["HYSTMECH_ENGINE"] = "1"
        import numpy as np
        from hystmech.components import Masing
        from hystmech.components.preisach import PrandtlIshlinskii, Relay
        from hystmech.systems import Assembly, Harmonic, simulate

        def build(extra):
            a = Assembly()
            a.add_dof("m", mass=1.0)
            a.add_spring("m", "ground", k=1e3)
            a.add_force("m", Harmonic(0.0, 2.0, 10.0))
            a.add_element("r", Relay(a1=-1e-3, a2=1e-3), "m", "ground")
            a.add_element("s", Masing(k=300.0, k0=0.0, alpha=1.0) + Relay(a1=-1e-3, a2=2e-3),
                          "m", "ground")
            if extra:
                a.add_dof("m2", mass=2.0)
                a.add_spring("m", "m2", k=500.0)
                a.add_element("p", PrandtlIshlinskii(r=np.array([1e-3]), weights=[-20.0],
                                                     h=5e-4, u_bound=0.03, k0=30.0),
                              "m2", "ground")
            return a
        r = simulate(build(False), (0.0, 0.2), method="projection", h=1e-5)
        r2 = simulate(build(True), (0.0, 0.2), method="projection", h=1e-5)
        OUT = [r.y[:, 0].tolist(), r.model.engine() is not None,
               r2.model.engine() is not None]
    ''')
    first, out1 = in_a_new_process(code)
    second, out2 = in_a_new_process(code)
    assert out1[1] and out1[2] and out2 == out1
    for names in (first, second):
        assert not [n for n in names if n.startswith("_hystmech_asm_")], names
    assert second == [], second          # the sum's C wrappers too come from the disk cache
