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
    from hystmech.identify.comparison import compare
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


# -- degenerate data and paths (issue 15, item 5) ------------------------------------------
def _write(path, t, u, F):
    with open(path, "w") as fh:
        fh.write("t,u,F\n")
        for row in zip(t, u, F):
            fh.write(",".join(repr(float(x)) for x in row) + "\n")
    return path


DAHL_TOML = 'runner = "drive"\n[element]\ntype = "Dahl"\nrho = 300.0\nFc = 100.0\n'


@pytest.mark.parametrize("case, extra, needle", [
    ("constant_u", [], "the measured displacement is constant (displacement = 0.01 m"),
    ("zero_force", [], "the measured force is constant (force = 0 N at all 401 samples)"),
    ("good", ["--disp-scale", "0"], "--disp-scale must be a finite non-zero factor (got 0)"),
    ("good", ["--force-scale", "nan"], "--force-scale must be a finite non-zero factor"),
    ("good", ["--time-scale", "-1"], "--time-scale must be positive"),
    ("overflow", [], "displacement values up to 1e+198 m overflow"),
    ("good", ["--force-scale", "1e305"], "force values up to"),
])
@pytest.mark.parametrize("cmd", ["compare", "identify"])
def test_degenerate_data_is_one_line_exit_2_for_compare_and_identify(tmp_path, capsys, case,
                                                                     extra, needle, cmd):
    t = np.linspace(0, 2, 401)
    u = 0.01 * np.sin(2 * np.pi * t)
    F = 100 * np.tanh(50 * u)
    u, F = {"good": (u, F), "constant_u": (0 * u + 0.01, F), "zero_force": (u, 0 * F),
            "overflow": (u * 1e200, F)}[case]
    csv = _write(tmp_path / "d.csv", t, u, F)
    (tmp_path / "s.toml").write_text(DAHL_TOML)
    out = tmp_path / "out"
    args = (["compare", csv, "--scenario", tmp_path / "s.toml"] if cmd == "compare"
            else ["identify", "viscous-dahl", csv])
    with np.errstate(all="raise"):          # no silent overflow on the way to the message
        rc = main([str(a) for a in args] + extra + ["--out", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1, err
    assert needle in err[0], err[0]
    assert not out.exists() or not any(out.iterdir())


def test_identify_with_zero_force_in_python_is_a_value_error_not_zero_division():
    from hystmech.identify.cli import LAWS, identify
    from hystmech.identify.dataset import Dataset

    t = np.linspace(0, 2, 401)
    ds = Dataset(t=t, u=0.01 * np.sin(2 * np.pi * t), force=np.zeros_like(t))
    for law in LAWS:
        with pytest.raises(ValueError, match="force is constant"):
            identify(law, ds)


def test_a_non_finite_prediction_is_exit_1_naming_the_sample(tmp_path, capsys, monkeypatch):
    # a model whose force becomes NaN part-way: the comparison is not written
    from hystmech.identify.comparison import compare_arrays
    from hystmech.identify.dataset import Dataset

    t = np.linspace(0, 2, 401)
    ds = Dataset(t=t, u=0.01 * np.sin(2 * np.pi * t), force=np.sin(2 * np.pi * t))
    pred = np.sin(2 * np.pi * t)
    pred[250:] = np.nan
    from hystmech.scenario import NonFiniteResult

    with pytest.raises(NonFiniteResult, match=r"F_predicted = nan at t = 1\.25 s \(sample 250\)"):
        compare_arrays(ds, pred)


@pytest.mark.parametrize("kind", ["empty", "file", "under_file", "devnull"])
def test_compare_out_that_cannot_be_a_directory_is_exit_2(masing_csv, tmp_path, capsys, kind):
    f = tmp_path / "afile"
    f.write_text("x")
    out = {"empty": "", "file": f, "under_file": f / "x", "devnull": "/dev/null"}[kind]
    rc = main(["compare", str(masing_csv), *UNITS, "--scenario", "lugre-example-4",
               "--out", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "--out" in err[0], err
    assert f.read_text() == "x"


def test_loop_area_error_is_none_when_the_measured_record_has_no_loop():
    # an elastic (single-valued) F(u) encloses no area: a relative area error would be
    # rounding noise divided by ~0, so it is reported as undefined
    from hystmech.identify.comparison import compare_arrays
    from hystmech.identify.dataset import Dataset

    t = np.linspace(0, 4, 2001)
    u = 0.01 * np.sin(2 * np.pi * t - np.pi / 2)
    ds = Dataset(t=t, u=u, force=1e4 * u)
    m = compare_arrays(ds, 1e4 * u + 0.5 * np.gradient(u, t))
    assert m["n_cycles"] >= 2 and m["loop_area_error"] is None


@pytest.mark.parametrize("content, needle", [
    (bytes(range(128, 256)), "not a UTF-8 text CSV file"),
    (b"t,u,F\n0,1,2\n\x00", "m.csv"),
    (None, "is a directory"),
])
def test_measured_file_that_is_not_text_or_not_a_file_is_exit_2(tmp_path, capsys, content, needle):
    p = tmp_path / "m.csv"
    if content is None:
        p.mkdir()
    else:
        p.write_bytes(content)
    (tmp_path / "s.toml").write_text(DAHL_TOML)
    rc = main(["compare", str(p), "--scenario", str(tmp_path / "s.toml"), "--out",
               str(tmp_path / "o")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and needle in err[0], err


def test_identify_offers_every_law_and_help_names_the_true_defaults(capsys):
    assert main(["identify", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())      # argparse wraps to the terminal
    for law in ("dahl", "lugre", "bouc-wen", "maxwell-slip", "viscous-dahl", "modified-dahl",
                "masing", "preisach"):
        assert law in out
    assert "(default F;" in out and "(default u)" in out and "(default t)" in out


def test_identify_dahl_from_npz_with_the_csv_default_names(tmp_path, capsys):
    """One default name per quantity: an .npz with arrays t, u, F loads with no column
    option (the force array used to default to 'force' for .npz only); the Dahl fit
    recovers the exact solution's parameters and writes its interval table."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    import identify_refs as R

    t, u, v, Aw = R.sine(fs=1000.0)
    np.savez(tmp_path / "d.npz", t=t, u=u, F=R.dahl(t, Aw, rho=800.0, Fc=50.0))
    assert main(["identify", "dahl", str(tmp_path / "d.npz"), "--out", str(tmp_path / "o")]) == 0
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert s["params"]["rho"] == pytest.approx(800.0, rel=1e-4)
    assert s["params"]["Fc"] == pytest.approx(50.0, rel=1e-4)
    assert "95 % interval" in (tmp_path / "o" / "parameters.txt").read_text()
    # an archive of the older Dataset.to_npz (key 'force') still loads
    np.savez(tmp_path / "old.npz", t=t, u=u, force=R.dahl(t, Aw, rho=800.0, Fc=50.0))
    from hystmech.identify import load_npz

    assert load_npz(tmp_path / "old.npz").force[100] == pytest.approx(R.dahl(t, Aw, rho=800.0, Fc=50.0)[100])


# -- issue 30 §4: fit %, peak error, alignment, bands, residual plots --------------------------
def test_fit_percent_is_matlabs_and_peak_error_is_relative():
    from hystmech.identify.metrics import fit_percent, peak_error

    y = np.sin(np.linspace(0, 20, 2000)) + 0.3
    e = np.random.default_rng(0).standard_normal(y.size)
    e *= 0.1 * np.linalg.norm(y - y.mean()) / np.linalg.norm(e)
    assert fit_percent(y, y) == pytest.approx(100.0)
    assert fit_percent(y, y + e) == pytest.approx(90.0, abs=1e-9)
    assert fit_percent(y, np.full_like(y, y.mean())) == pytest.approx(0.0, abs=1e-9)
    assert peak_error(y, 1.1 * y) == pytest.approx(0.1)


def test_align_recovers_a_4_ms_force_delay_and_removes_the_loop_area_error(tmp_path, capsys):
    """The measured force lags the displacement by 4 ms (a channel skew): without --align
    the loop-area error is off by more than 1 %; with it the delay is reported to 0.2 ms
    and the error is ten times smaller."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    import identify_refs as R

    t, u, v, Aw = R.sine(A=0.01, f=1.0, periods=4, fs=2000.0)
    P = dict(kx1=1.6e3, kw1=520.0, kx2=1.6e3, kw2=520.0, rho=500.0)
    F = R.viscous_dahl(t - 0.004, Aw, **P)          # force recorded 4 ms late
    F[t < 0.004] = 0.0
    p = _write(tmp_path / "d.csv", t, u, F)
    toml = tmp_path / "vd.toml"
    toml.write_text('runner = "drive"\n[element]\ntype = "ViscousDahl"\nkx = 1600.0\n'
                    'kw = 520.0\nrho = 500.0\n')
    assert main(["compare", str(p), "--scenario", str(toml), "--out", str(tmp_path / "a")]) == 0
    s0 = json.loads((tmp_path / "a" / "summary.json").read_text())
    assert abs(s0["metrics"]["loop_area_error"]) > 0.01
    assert main(["compare", str(p), "--scenario", str(toml), "--align",
                 "--out", str(tmp_path / "b")]) == 0
    s1 = json.loads((tmp_path / "b" / "summary.json").read_text())
    assert s1["alignment"]["force_delay_s"] == pytest.approx(0.004, abs=2e-4)
    assert abs(s1["metrics"]["loop_area_error"]) < 0.1 * abs(s0["metrics"]["loop_area_error"])
    assert s1["metrics"]["fit_percent"] > s0["metrics"]["fit_percent"]
    assert "force channel delay = 0.00" in capsys.readouterr().out
    assert (tmp_path / "b" / "residuals.png").stat().st_size > 0


def test_prediction_band_matches_monte_carlo_over_the_covariance(tmp_path):
    """The band's linear propagation of the fit's covariance against the spread of
    predictions from 200 parameter draws N(θ̂, C) (independent of the derivative)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    import identify_refs as R
    from hystmech.identify import Dataset, fit_element
    from hystmech.identify.comparison import compare

    t, u, v, Aw = R.sine(A=0.002, fs=500.0)
    F = R.dahl(t, Aw, rho=800.0, Fc=50.0)
    F = F + 0.05 * np.std(F) * np.random.default_rng(0).standard_normal(F.size)
    ds = Dataset(t=t, u=u, force=F)
    r = fit_element(ds, "Dahl", {"rho": (10.0, 1e4), "Fc": (1.0, 1e3)})
    fit = {"law": "Dahl", "params": r.params, "uncertainty": r.uncertainty.to_dict()}
    s = compare(ds, {"name": "x", "element": {"type": "Dahl", **r.params}}, tmp_path, fit=fit)
    sd_band = np.loadtxt(tmp_path / "timeseries.csv", delimiter=",", skiprows=1)[:, -1]
    rng = np.random.default_rng(1)
    draws = rng.multivariate_normal([r.params["rho"], r.params["Fc"]], r.uncertainty.cov, 200)
    preds = [R.dahl_exact(u, a, b) for a, b in draws]
    sd_mc = np.std(preds, axis=0)
    k = sd_mc > 0.1 * sd_mc.max()
    assert np.median(sd_band[k] / sd_mc[k]) == pytest.approx(1.0, abs=0.12)
    assert s["band"]["mean_half_width_95"] > 0
