"""Energy balance of a PyElastica cable with hystmech hysteretic bending (scenario
elastica-cable-3d, plugins/elastica_cases.py EnergyLedger): PositionVerlet's discrete
energy identity — kinetic energy with the step's inertia changes by exactly the loads'
work along Δx' = dt/2·(v_n + v⁻) — gives work in = element + damper + Δ stored to
rounding, where PyElastica's own energy functions leave a gap of ~1e-3."""
import math

import numpy as np
import pytest

ea = pytest.importorskip("elastica")

from hystmech.components.masing_vector import MasingVector  # noqa: E402
from hystmech.plugins import elastica as hel  # noqa: E402
from hystmech.plugins.elastica_cases import EnergyLedger, clamped_rod  # noqa: E402


def test_energy_balance_closes_with_the_steppers_quadrature():
    """A clamped rod, tip load ramped in plane then cycled out of plane, a MasingVector
    element at every node, AnalyticalLinearDamper: over the cycle the tip load's work
    equals the element couples' work + the damper's loss + Δ(kinetic + elastic) to
    1e-10 (target 1e-6); the element term is the law's own loop ∮M dκ ℓ up to the
    rod's stretch (1 %); PyElastica's energy functions miss the balance by > 1e-4."""
    N, L, r, E, rho, c, dt = 6, 0.4, 0.02, 1e5, 1000.0, 2.0, 4e-4
    EI = E * math.pi * r ** 4 / 4
    Tr, Tc = 0.2, 0.4

    def tip(t):
        return 0.3 * min(t / Tr, 1.0), 0.3 * math.sin(2 * math.pi * (t - Tr) / Tc) * (t >= Tr)

    rows = []

    class Rec(ea.CallBackBaseClass):
        def make_callback(self, system, time, current_step):
            if current_step > 0:
                ledger.record(system)
            ke = system.compute_translational_energy() + system.compute_rotational_energy()
            pe = system.compute_bending_energy() + system.compute_shear_energy()
            rows.append([*ledger.values(), float(mem.work.sum()), float(ke + pe)])

    sim, rod = clamped_rod(N, L, r, rho, E, tip_force=tip, damping=c, dt=dt)
    mem = hel.add_hysteretic_bending(sim, rod, MasingVector(k=2 * EI, alpha=3 * EI))
    ledger = EnergyLedger(rod, c, dt)
    sim.collect_diagnostics(rod).using(Rec)
    sim.finalize()
    n0, n1 = int(round(Tr / dt)), int(round(Tc / dt))
    hel.integrate(sim, (n0 + n1) * dt, n0 + n1)
    a, b = np.array(rows[n0]), np.array(rows[-1])
    win, wel, wint, wd, kin, wlaw, est = b - a
    assert win > 0 and wel > 0.05 * win and wd > 0.05 * win     # all terms matter
    assert abs(win - wel - wd - (kin - wint)) <= 1e-10 * win
    assert wel == pytest.approx(wlaw, rel=1e-2)
    assert abs(win - wlaw - wd - est) > 1e-4 * win
