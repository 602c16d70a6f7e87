"""Frequency-response sweep of the belt rig, Bastien et al. (2007), §4.4 (small grids)."""
import concurrent.futures as cf
import csv
import math

import pytest

from hystmech.systems.sweep import (COLUMNS, frf_grid, read_frf, run_sweep, stuck_linear_amplitude,
                                    tension_amplitude)

SHORT = dict(t_window=(0.6, 0.9))      # short runs: the machinery, not the physics


class _Stop(Exception):
    pass


def test_interrupted_sweep_resumes_with_missing_points_only(tmp_path):
    pts = frf_grid(["masing"], [13.0, 120.0], [40.0, 70.0, 100.0])
    path = tmp_path / "frf.csv"
    seen = []

    def interrupt_after_two(frac, msg):
        seen.append(frac)
        if len(seen) == 3:           # initial call + two finished points
            raise _Stop

    with cf.ThreadPoolExecutor(max_workers=1) as ex:
        with pytest.raises(_Stop):
            run_sweep(pts, path, executor=ex, progress=interrupt_after_two, **SHORT)
    first = read_frf(path)
    assert len(first) == 2
    with open(path, "a") as fh:      # a line cut by the interruption
        fh.write("masing,120.0,10")
    with cf.ThreadPoolExecutor(max_workers=1) as ex:
        r = run_sweep(pts, path, executor=ex, **SHORT)
    assert r["computed"] == len(pts) - 2
    rows = list(csv.reader(open(path)))
    assert tuple(rows[0]) == COLUMNS and len(rows) == 1 + len(pts)
    again = read_frf(path)
    for k, v in first.items():
        assert again[k] == v         # kept, not recomputed
    for m, a, w in pts:
        assert r["values"][(m, a, w)] == tension_amplitude(m, a, w, **SHORT)["T_amplitude"]
    with cf.ThreadPoolExecutor(max_workers=1) as ex:
        assert run_sweep(pts, path, executor=ex, **SHORT)["computed"] == 0


def test_default_process_pool_matches_serial(tmp_path):
    pts = frf_grid(["masing", "mdm"], [27.0], [55.0])
    r = run_sweep(pts, tmp_path / "frf.csv", max_workers=2, **SHORT)
    assert r["computed"] == 2
    for p in pts:
        assert r["values"][p] == pytest.approx(tension_amplitude(*p, **SHORT)["T_amplitude"],
                                               rel=1e-12)


def test_dask_executor_gives_the_process_pool_numbers(tmp_path):
    distributed = pytest.importorskip("distributed")
    pts = frf_grid(["masing"], [27.0, 200.0], [35.0, 90.0])
    with cf.ProcessPoolExecutor(max_workers=2) as ex:
        ref = run_sweep(pts, tmp_path / "pool.csv", executor=ex, **SHORT)["values"]
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        r = run_sweep(pts, tmp_path / "dask.csv", executor=client.get_executor(), **SHORT)
    assert r["computed"] == len(pts)
    for p in pts:
        assert r["values"][p] == pytest.approx(ref[p], rel=1e-12)


@pytest.mark.parametrize("model,f1,omega", [("masing", 13.0, 65.0), ("masing", 120.0, 55.0),
                                            ("masing", 300.0, 30.0), ("mdm", 67.0, 60.0)])
def test_steady_state_detection_agrees_with_fixed_window(model, f1, omega):
    full = tension_amplitude(model, f1, omega)                     # t in [17, 20] s
    ss = tension_amplitude(model, f1, omega, steady_state=True)
    assert math.isfinite(ss["t_stop"]) and ss["t_stop"] < 20.0
    assert ss["T_amplitude"] == pytest.approx(full["T_amplitude"], rel=1e-2)


def test_low_amplitude_sweep_is_the_stiff_linear_response():
    # §4.4: f1 <= 27 N, the tensioner sticks and the rig is linear (stiffness k + k0)
    for w in (20.0, 45.0, 110.0):
        a = tension_amplitude("masing", 27.0, w, steady_state=True)["T_amplitude"]
        assert a == pytest.approx(stuck_linear_amplitude(27.0, [w])[0], rel=2e-3)


def test_frf_scenario_small_grid(tmp_path):
    import json

    from hystmech.scenario import run_scenario

    over = {"grid": {"models": ["masing"], "f1": [13.0, 200.0], "n_omega": 3,
                     "omega_min": 30.0, "omega_max": 90.0},
            "simulation": {"t_window": [0.6, 0.9]}, "sweep": {"workers": 1}}
    run_scenario("belt-tensioner-frf", tmp_path, progress=lambda *a: None, overrides=over)
    rows = list(csv.reader(open(tmp_path / "frf.csv")))
    assert tuple(rows[0]) == ("model", "f1", "omega", "T_amplitude") and len(rows) == 7
    assert (tmp_path / "fig21_frf.png").stat().st_size > 1000
    s = json.loads((tmp_path / "summary.json").read_text())
    assert s["n_points"] == 6 and "masing_f1_13_omega_peak" in s["metrics"]


def test_bad_grid_values():
    with pytest.raises(ValueError, match="model"):
        frf_grid(["dahl"], [13.0], [40.0])
    with pytest.raises(ValueError, match="omega"):
        frf_grid(["mdm"], [13.0], [-1.0])
    with pytest.raises(ValueError, match="t_window"):
        tension_amplitude("masing", 13.0, 40.0, t_window=(2.0, 1.0))
