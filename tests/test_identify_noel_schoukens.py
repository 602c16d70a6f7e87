"""The Noël & Schoukens (2016) Bouc-Wen benchmark identified by output error from its
training data alone (identify/noel_schoukens.py). Truth: the benchmark's published
parameters (m = 2, c = 10, k = 5e4, α = 5e4, β·γ = 800, β·δ = −1100) and test records
generated independently (benchmarks/gen_noel_schoukens_data.py: own RHS, DOP853 at
rtol 1e-11); the noise floor of the test outputs is 8e-6 m RMS."""
import warnings

import numpy as np
import pytest

from hystmech.identify import noel_schoukens as ns


@pytest.fixture(scope="module")
def data():
    return ns.load()


def test_shipped_data_are_the_benchmark_records(data):
    fs, N = float(data["fs"]), int(data["period"])
    assert fs == 750.0 and N == 8192
    assert data["train_u"].size == 10 * N and data["test_multisine_u"].size == 2 * N
    assert data["test_sweep_u"].size == 180 * 750 + 1
    # the multisine: 50 N RMS, flat on the DFT lines 5-150 Hz, periodic
    u = data["train_u"]
    assert abs(np.std(u[:N]) / 50.0 - 1) < 1e-3
    U = np.abs(np.fft.rfft(u[:N]))
    f = np.fft.rfftfreq(N, 1 / fs)
    band = (f > 5.2) & (f < 149.8)
    assert U[band].min() > 0.99 * U[band].max() and U[f > 151].max() < 1e-3 * U[band].max()
    np.testing.assert_allclose(u[N:2 * N], u[:N], atol=1e-4)
    # output noise 8e-6 m RMS
    noise = data["train_y"] - data["train_y_clean"] if "train_y_clean" in data else \
        data["test_sweep_y"] - data["test_sweep_y_clean"]
    assert abs(np.std(noise) / 8e-6 - 1) < 0.02


@pytest.mark.slow
def test_full_fit_reaches_the_noise_floor_with_every_true_parameter_in_its_interval(data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        res = ns.fit(data, periods=10)
    err = ns.rmse(ns.simulate_test(res, data))
    assert err["test_multisine"][0] <= 1.0e-5
    assert err["test_sweep"][0] <= 1.2e-5
    inside = {r[0]: r[6] for r in ns.table(res)}
    assert all(inside.values()), inside
