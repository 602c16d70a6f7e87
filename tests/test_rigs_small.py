"""Small versions of the rigs: Maxwell-slip oscillator, MR-damper rig."""
import math

import numpy as np
import pytest

from hystmech.systems import simulate
from hystmech.systems.rigs.maxwell_slip_oscillator import maxwell_slip_oscillator, paper_friction


@pytest.mark.parametrize("excitation,amplitude", [("force", 8.0), ("base", 2e-5)])
def test_maxwell_slip_oscillator_energy_balance(excitation, amplitude):
    # input work = kinetic + potential (spring + asperity springs) + dissipated, to 1e-6
    # (event-driven solution: stick/slip switches located, smooth pieces at rtol 1e-12)
    a = maxwell_slip_oscillator(excitation=excitation, amplitude=amplitude, omega=150.0,
                                x0=0.0)
    r = simulate(a, (0.0, 0.06), method="event", rtol=1e-12, atol=1e-15)
    e = r.energy()
    assert abs(e["input"][-1]) > 1e-7
    assert e["dissipated"]["friction"][-1] > 0
    assert np.all(np.diff(e["dissipated"]["friction"]) > -1e-12)   # friction never gives energy
    assert r.energy_error() < 1e-6


def test_maxwell_slip_free_decay_coulomb_decrement():
    # when all asperities slip the friction is Coulomb-like with level ΣkΔ, so each
    # half cycle loses 2ΣkΔ/K of amplitude (classical dry-friction oscillator)
    K = 4e4
    a = maxwell_slip_oscillator(K=K, c=0.0, x0=1e-3)
    r = simulate(a, (0.0, 0.05), method="projection", h=1e-6)
    v = r.v("mass")
    x = r.x("mass")
    turn = np.flatnonzero(v[1:] * v[:-1] < 0) + 1
    amps = np.abs(np.concatenate([[x[0]], x[turn]]))
    amps = amps[amps > 1e-4]
    el = paper_friction()
    expected = 2 * np.sum(el.k * el.delta) / K
    # pre-sliding (asperity springs) shortens the slip by ~Δ_max on each side
    np.testing.assert_allclose(-np.diff(amps), expected, rtol=0.02)


def test_mr_damper_rig_data_recovers_paper_values():
    # synthetic measurements of the rig, then the paper's own eq. (15) regression on the
    # window of §5 and the steady w-loop of eqs. (16)-(18): independent closed forms
    from hystmech.systems.rigs.mr_damper import (PAPER, dahl_steady_branches,
                                                dahl_w_from_force, mr_damper_rig_data,
                                                regression_eq15)

    t, x, v, F = mr_damper_rig_data(periods=2, fs=500.0)
    assert t.shape == x.shape == v.shape == F.shape
    t0 = 5.0
    kx1, kw1 = regression_eq15(t, x, F, t0 + 0.2041, t0 + 0.6924, t0 + 2.1572)
    assert kx1 == pytest.approx(PAPER["kx1"], rel=1e-3)
    assert kw1 == pytest.approx(PAPER["kw1"], rel=1e-3)
    last = t >= 5.0
    assert np.min(np.abs(v[last][5:])) > 0.01          # the wave never stops (§7)
    w = dahl_w_from_force(F, v, PAPER["kx1"], PAPER["kw1"], PAPER["kx2"], PAPER["kw2"])
    xl = x[last]
    wu, wd = dahl_steady_branches(xl, PAPER["rho"], xl.min(), xl.max())
    inner = (xl > xl.min() + 0.01) & (xl < xl.max() - 0.01)
    wth = np.where(v[last] >= 0, wu, wd)
    assert np.max(np.abs(w[last] - wth)[inner]) < 1e-3


def test_mr_damper_rig_bad_input():
    from hystmech.systems.rigs.mr_damper import mr_damper_rig, mr_damper_rig_data

    with pytest.raises(ValueError, match="m must be"):
        mr_damper_rig(m=0.0)
    with pytest.raises(ValueError, match="Xmax"):
        mr_damper_rig(Xmin=0.1, Xmax=0.0)
    with pytest.raises(ValueError, match="periods"):
        mr_damper_rig_data(periods=0)
