"""hystmech identify / compare from the command line: round trip through a scenario
TOML that ``hystmech run`` accepts, metrics against closed forms, bad input -> exit 2
with one line and nothing written."""
import json

import numpy as np
import pytest

import hystmech
from hystmech.cli import main

TRUTH = dict(k=4.84e5, k0=2.34e5, alpha=1.63e2, F0=-5.73e2, c=1.93e4)


@pytest.fixture()
def masing_csv(tmp_path):
    from hystmech.components import Masing

    Om, x0, x1 = 9.4, 5.4e-4, 5.2e-4
    T = 2 * np.pi / Om
    t = np.linspace(0, 5 * T, 5 * 1500 + 1)
    u = x0 + x1 * np.sin(Om * t - np.pi / 2)
    F = hystmech.drive(Masing(**TRUTH), t, u).force
    F = F + 0.01 * np.std(F) * np.random.default_rng(3).standard_normal(F.size)
    p = tmp_path / "loop.csv"
    # displacement in mm, force in kN: unit factors on the command line
    np.savetxt(p, np.c_[t, 1e3 * u, 1e-3 * F], delimiter=",", header="time,disp_mm,F_kN",
               comments="")
    return p


UNITS = ["--time", "time", "--disp", "disp_mm", "--force", "F_kN", "--disp-scale", "1e-3",
         "--force-scale", "1e3"]


def test_identify_writes_scenario_that_run_accepts(masing_csv, tmp_path, capsys):
    out = tmp_path / "id"
    assert main(["identify", "masing", str(masing_csv), *UNITS, "--out", str(out)]) == 0
    toml = (out / "scenario.toml").read_text()
    assert 'type = "Masing"' in toml
    s = json.loads((out / "summary.json").read_text())
    for k in ("k", "k0", "alpha", "F0"):
        assert s["params"][k] == pytest.approx(TRUTH[k], rel=0.02), k
    run_out = tmp_path / "run"
    assert main(["run", str(out / "scenario.toml"), "--out", str(run_out)]) == 0
    assert (run_out / "summary.json").exists()
    # compare the identified scenario with the measured file: near-perfect agreement
    cmp_out = tmp_path / "cmp"
    assert main(["compare", str(masing_csv), *UNITS, "--scenario", str(out / "scenario.toml"),
                 "--out", str(cmp_out)]) == 0
    m = json.loads((cmp_out / "summary.json").read_text())["metrics"]
    assert m["r2"] > 0.99 and m["nrmse"] < 0.02
    assert abs(m["loop_area_error"]) < 0.02 and abs(m["phase_lag_s"]) < 1e-3
    assert m["n_cycles"] == 5          # the record starts and ends at a minimum
    for f in ("time_history.png", "loops.png", "timeseries.csv"):
        assert (cmp_out / f).stat().st_size > 0


def test_compare_loop_area_error_and_phase_lag_are_right(tmp_path):
    """A Dahl scenario compared with data from a Dahl of twice the Coulomb level: the
    loop areas differ by a factor 2 exactly (area ∝ Fc, eq. (19)), R² < 1."""
    from hystmech.components import Dahl
    from hystmech.identify.compare import compare
    from hystmech.identify.dataset import Dataset

    t = np.linspace(0, 4, 4001)
    u = 0.01 * np.sin(2 * np.pi * t - np.pi / 2)
    F = hystmech.drive(Dahl(rho=300.0, Fc=20.0), t, u).force
    ds = Dataset(t=t, u=u, force=F)
    cfg = {"name": "half", "element": {"type": "Dahl", "rho": 300.0, "Fc": 10.0}}
    s = compare(ds, cfg, tmp_path)
    assert s["metrics"]["loop_area_error"] == pytest.approx(-0.5, rel=1e-9)
    assert s["metrics"]["phase_lag_s"] == pytest.approx(0.0, abs=1e-3)
    # a pure delay is measured as such
    from hystmech.identify.metrics import phase_lag

    assert phase_lag(t, np.sin(2 * np.pi * t), np.sin(2 * np.pi * (t - 0.05))) == \
        pytest.approx(0.05, abs=2e-4)


def test_bad_input_exit_2_one_line_nothing_written(masing_csv, tmp_path, capsys):
    out = tmp_path / "bad"
    rc = main(["identify", "masing", str(masing_csv), "--time", "time", "--disp", "nope",
               "--out", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "no column named 'nope'" in err[0]
    assert not out.exists() or not any(out.iterdir())
    # NaN rows: counted and located
    lines = masing_csv.read_text().splitlines()
    lines[5] = lines[5].split(",")[0] + ",," + lines[5].split(",")[2]
    bad = tmp_path / "nan.csv"
    bad.write_text("\n".join(lines) + "\n")
    rc = main(["compare", str(bad), *UNITS, "--scenario", "lugre-example-4", "--out", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "1 row(s)" in err[0] and "line(s) 6" in err[0]
    assert not (out / "summary.json").exists()
    rc = main(["compare", str(masing_csv), *UNITS, "--scenario", "no-such-scenario"])
    assert rc == 2
    rc = main(["identify", "masing", str(masing_csv), *UNITS, "--t0", "0.0", "--t1", "1e-4",
               "--out", str(out)])
    assert rc == 2 and "at least" in capsys.readouterr().err
