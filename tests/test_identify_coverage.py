"""Coverage of the reported 95 % intervals under 5 % AR(1) coloured noise (issue 30
§3): for each law, over 50 noise seeds, each true parameter lies inside its interval
in at least 90 % of the fits. Data from the independent references of
tests/identify_refs.py (DOP853 at rtol 1e-11 / exact play operators); the noise is
AR(1) with φ = 0.9 per sample, scaled to 5 % of the force's standard deviation.
Slow (several minutes): .ci/run's slow step."""
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy.signal import lfilter

sys.path.insert(0, str(Path(__file__).parent))
import identify_refs as R  # noqa: E402

from hystmech.identify import Dataset  # noqa: E402

SEEDS = 50
PHI = 0.9


def _noise(F, seed, level=0.05):
    e = lfilter([1.0], [1.0, -PHI], np.random.default_rng(seed).standard_normal(F.size))
    return level * np.std(F) * e / np.std(e)


def _coverage(fit, truth, F, make_ds):
    hits = {k: 0 for k in truth}
    for s in range(SEEDS):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = fit(make_ds(F + _noise(F, s)))
        for k, ok in r.uncertainty.contains(truth).items():
            hits[k] += ok
    cov = {k: h / SEEDS for k, h in hits.items()}
    assert all(c >= 0.9 for c in cov.values()), cov
    return cov


def _masing_input(per_period=1000):
    return R.sine(A=5.2e-4, f=9.4 / (2 * np.pi), periods=4, fs=per_period * 9.4 / (2 * np.pi))


@pytest.mark.slow
def test_bouc_wen_coverage():
    from hystmech.identify import fit_element

    truth = dict(A=2e4, beta=50.0, gamma=20.0, n=1.3)
    t, u, v, Aw = R.sine(fs=2000.0)
    F = R.bouc_wen(t, Aw, **truth)
    bounds = {"A": (5e3, 1e5), "beta": (5.0, 500.0), "gamma": (-30.0, 60.0), "n": (0.8, 2.5)}
    _coverage(lambda ds: fit_element(ds, "BoucWen", bounds, start=truth, n_starts=1, rtol=1e-9),
              truth, F, lambda f: Dataset(t=t, u=u, force=f, v=v))


@pytest.mark.slow
def test_modified_dahl_coverage():
    from hystmech.identify import fit_modified_dahl

    truth = dict(a=7.146e4, b=9.596e2, d=5.322e4, e=3.972e2, Lambda=117355.0, mu=0.37)
    t, u, v, Aw = _masing_input()
    F = R.modified_dahl(t, Aw, F0=700.0, **truth)
    _coverage(fit_modified_dahl, truth, F, lambda f: Dataset(t=t, u=u, force=f, v=v))


@pytest.mark.slow
def test_masing_coverage():
    from hystmech.identify import fit_masing

    truth = dict(k=4.84e5, k0=2.34e5, alpha=1.63e2, F0=-5.73e2, c=1.93e4)
    t, u, v, Aw = _masing_input(2000)
    F = R.masing(t, Aw, **truth)
    _coverage(fit_masing, truth, F, lambda f: Dataset(t=t, u=u, force=f, v=v))


@pytest.mark.slow
def test_viscous_dahl_coverage():
    from hystmech.identify import fit_viscous_dahl

    truth = dict(kx1=1.6e3, kw1=520.0, kx2=1.3e3, kw2=630.0, rho=500.0)
    t, u, v, Aw = R.sine(fs=2000.0)
    F = R.viscous_dahl(t, Aw, **truth)
    _coverage(fit_viscous_dahl, truth, F, lambda f: Dataset(t=t, u=u, force=f, v=v))
