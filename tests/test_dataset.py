"""Dataset: CSV/npz loading with column names and unit factors, windows, resampling,
cycles, and the bad-input errors of issue 6 §6."""
import numpy as np
import pytest

from hystmech.identify.dataset import Dataset, load_csv, load_npz, turning_points


def _dyke_like(path, rows):
    # the Dyke files: quoted header, trailing comma on every line, fs on the first row only
    lines = ['"t","D","Y","fs","V","F",']
    for k, (t, d, y, v, f) in enumerate(rows):
        fs = "3004.8" if k == 0 else ""
        lines.append(f"{t},{d},{y},{fs},{v},{f},")
    path.write_text("\n".join(lines) + "\n")


def _rows(n=50):
    t = np.arange(n) * 0.01
    d = 2.0 * np.sin(2 * np.pi * t)          # cm
    return [(t[k], d[k], 1.5, 2.0 * 2 * np.pi * np.cos(2 * np.pi * t[k]), 100.0 * d[k])
            for k in range(n)]


def test_csv_columns_by_name_and_units(tmp_path):
    p = tmp_path / "m.csv"
    _dyke_like(p, _rows())
    ds = load_csv(p, time="t", disp="D", force="F", velocity="V", channels={"voltage": "Y"},
                  disp_scale=0.01)
    assert len(ds) == 50
    t = np.arange(50) * 0.01
    np.testing.assert_allclose(ds.u, 0.02 * np.sin(2 * np.pi * t), atol=1e-12)   # cm -> m
    np.testing.assert_allclose(ds.v, 0.02 * 2 * np.pi * np.cos(2 * np.pi * t), atol=1e-12)
    np.testing.assert_allclose(ds.channel("voltage"), 1.5)
    np.testing.assert_allclose(ds.force, 200.0 * np.sin(2 * np.pi * t), atol=1e-9)


def test_missing_column_is_named(tmp_path):
    p = tmp_path / "m.csv"
    _dyke_like(p, _rows())
    with pytest.raises(ValueError, match="no column named 'X'.*columns: t, D, Y, fs, V, F"):
        load_csv(p, time="t", disp="X", force="F")


def test_unused_sparse_column_is_fine_but_selected_one_is_reported(tmp_path):
    p = tmp_path / "m.csv"
    _dyke_like(p, _rows())
    load_csv(p, time="t", disp="D", force="F")           # fs mostly empty but not used
    with pytest.raises(ValueError, match=r"49 row\(s\) with empty .* 'fs'.*line\(s\) 3, 4"):
        load_csv(p, time="t", disp="D", force="fs")


def test_nan_rows_counted_and_located_never_dropped_silently(tmp_path):
    rows = _rows()
    rows[10] = (rows[10][0], float("nan"), 1.5, 0.0, 1.0)
    rows[20] = (rows[20][0], rows[20][1], 1.5, 0.0, "")
    p = tmp_path / "m.csv"
    _dyke_like(p, rows)
    with pytest.raises(ValueError, match=r"2 row\(s\).*line\(s\) 12, 22"):
        load_csv(p, time="t", disp="D", force="F")
    with pytest.warns(UserWarning, match="2 row"):
        ds = load_csv(p, time="t", disp="D", force="F", drop_nan=True)
    assert len(ds) == 48


def test_non_monotonic_time(tmp_path):
    rows = _rows()
    rows[30] = (rows[28][0],) + rows[30][1:]
    p = tmp_path / "m.csv"
    _dyke_like(p, rows)
    with pytest.raises(ValueError, match=r"strictly increasing: 1 non-increasing step.*t\[30\] = 0.28 <= t\[29\] = 0.29"):
        load_csv(p, time="t", disp="D", force="F")


def test_missing_file():
    with pytest.raises(FileNotFoundError):
        load_csv("/nonexistent/x.csv")


def _sine(n=2001, periods=5.0):
    t = np.linspace(0, periods, n)
    return Dataset(t=t, u=np.sin(2 * np.pi * t - np.pi / 2), force=np.cos(2 * np.pi * t))


def test_window_and_too_few_samples():
    ds = _sine()
    w = ds.window(1.0, 2.0)
    assert w.t[0] >= 1.0 and w.t[-1] <= 2.0 and len(w) == 401
    with pytest.raises(ValueError, match=r"holds 1 sample\(s\); at least 8"):
        ds.window(1.0, 1.001)
    with pytest.raises(ValueError, match="t0 < t1"):
        ds.window(2.0, 1.0)


def test_resample_is_exact_for_linear_signals():
    t = np.sort(np.random.default_rng(0).uniform(0, 1, 200))
    ds = Dataset(t=t, u=3 * t + 1, force=-2 * t)
    r = ds.resample(fs=1000.0)
    np.testing.assert_allclose(np.diff(r.t), 1e-3, rtol=1e-9)
    np.testing.assert_allclose(r.u, 3 * r.t + 1, rtol=1e-12)
    with pytest.raises(ValueError, match="exactly one"):
        ds.resample()


def test_cycles_between_minima_of_a_sine():
    ds = _sine()                                 # starts at a minimum: 5 full cycles
    cyc = ds.cycles()
    assert len(cyc) == 5
    for k, c in enumerate(cyc):
        assert c.t[0] == pytest.approx(k, abs=1e-9) and c.t[-1] == pytest.approx(k + 1, abs=1e-9)
    # a record cut mid-stroke yields no partial cycle
    assert len(ds.window(0.25, 5.0).cycles()) == 4
    # noise smaller than tol does not split cycles
    noisy = Dataset(t=ds.t, u=ds.u + 1e-3 * np.random.default_rng(1).standard_normal(len(ds)),
                    force=ds.force)
    assert len(noisy.cycles(tol=0.05)) == 5


def test_turning_points_alternate():
    u = np.array([0, 1, 0.2, 2, -1, -0.7, -2, 0.0])
    tp = turning_points(u, tol=0.5)      # the 0.3 rebound at -1 is below tol
    np.testing.assert_array_equal(tp, [0, 1, 2, 3, 6, 7])
    vals = u[tp]
    assert np.all(np.sign(np.diff(vals))[1:] == -np.sign(np.diff(vals))[:-1])


def test_npz_roundtrip(tmp_path):
    ds = _sine()
    ds.channels["voltage"] = np.full(len(ds), 2.0)
    ds.to_npz(tmp_path / "d.npz")
    back = load_npz(tmp_path / "d.npz")
    np.testing.assert_array_equal(back.u, ds.u)
    np.testing.assert_array_equal(back.channel("voltage"), 2.0)
    with pytest.raises(ValueError, match="no array named 'zz'"):
        load_npz(tmp_path / "d.npz", disp="zz")


def test_constructor_rejects_nan_and_length_mismatch():
    t = np.linspace(0, 1, 20)
    u = np.sin(t)
    u[3] = np.nan
    with pytest.raises(ValueError, match="displacement has 1 NaN.*index 3"):
        Dataset(t=t, u=u, force=t)
    with pytest.raises(ValueError, match="same length"):
        Dataset(t=t, u=t[:-1], force=t)


def test_check_usable_names_degenerate_data():
    t = np.linspace(0.0, 1.0, 50)
    u = 1e-3 * np.sin(2 * np.pi * t)
    F = 10.0 * np.cos(2 * np.pi * t)
    ds = Dataset(t=t, u=u, force=F)
    assert ds.check_usable() is ds
    with pytest.raises(ValueError, match=r"displacement is constant \(displacement = 0 m at all 50"):
        Dataset(t=t, u=0 * u, force=F).check_usable()
    with pytest.raises(ValueError, match=r"force is constant \(force = 2\.5 N"):
        Dataset(t=t, u=u, force=0 * F + 2.5).check_usable()
    # a displacement varying only by rounding of a large offset is constant too
    with pytest.raises(ValueError, match="displacement is constant"):
        Dataset(t=t, u=1.0 + 1e-14 * np.sin(7 * t), force=F).check_usable()
    # squares must not overflow (RMSE, energies, correlations): 1e160**2 > 1.8e308
    with pytest.raises(ValueError, match=r"force values up to 1e\+160 N overflow"):
        Dataset(t=t, u=u, force=1e160 * np.cos(2 * np.pi * t)).check_usable()
    assert np.isfinite(np.sum((1e150 * np.cos(2 * np.pi * t)) ** 2))   # the limit is safe


# -- issue 30 §4: channels on their own time bases --------------------------------------------
def _interleaved(tmp_path):
    """Rows alternate: (t, u, -) at t = k·h and (t, -, F) at t = k·h + h/2, as a logger
    writing each channel when it samples it. Truth: u = sin(2πt)/100, F = 50 cos(2πt)."""
    h = 1e-3
    lines = ["t,u,F"]
    for k in range(2000):
        t = k * h
        lines.append(f"{t!r},{float(np.sin(2 * np.pi * t)) / 100!r},")
        lines.append(f"{t + h / 2!r},,{50 * float(np.cos(2 * np.pi * (t + h / 2)))!r}")
    p = tmp_path / "interleaved.csv"
    p.write_text("\n".join(lines) + "\n")
    return p


def test_interleaved_rows_resample_onto_the_displacement_times(tmp_path):
    p = _interleaved(tmp_path)
    with pytest.raises(ValueError, match="--resample"):
        load_csv(p)
    with pytest.warns(UserWarning, match="resampled onto the displacement's"):
        ds = load_csv(p, resample=True)
    # linear interpolation of a 1 Hz cosine sampled at 1 kHz: error <= h²ω²/8 · 50
    assert np.max(np.abs(ds.force - 50 * np.cos(2 * np.pi * ds.t))) < 50 * (2 * np.pi * 1e-3) ** 2 / 8 * 1.01
    assert np.array_equal(ds.u, np.sin(2 * np.pi * ds.t) / 100)   # the base itself, untouched
    assert ds.t[0] >= 5e-4 - 1e-15 and len(ds) == 1999


def test_force_with_its_own_time_column(tmp_path):
    t = np.linspace(0, 1, 501)
    tf = t + 0.0007                                          # force sampled 0.7 ms later
    rows = np.c_[t, np.sin(2 * np.pi * t), tf, np.cos(2 * np.pi * tf)]
    p = tmp_path / "two_clocks.csv"
    np.savetxt(p, rows, delimiter=",", header="t,u,tF,F", comments="")
    with pytest.warns(UserWarning):
        ds = load_csv(p, force_time="tF")
    assert np.max(np.abs(ds.force - np.cos(2 * np.pi * ds.t))) < (2 * np.pi * 2e-3) ** 2 / 8 * 1.01


def test_compare_cli_reads_interleaved_rows_with_resample(tmp_path, capsys):
    from hystmech.cli import main

    p = _interleaved(tmp_path)
    toml = tmp_path / "d.toml"
    toml.write_text('runner = "drive"\n[element]\ntype = "Dahl"\nrho = 300.0\nFc = 50.0\n')
    assert main(["compare", str(p), "--scenario", str(toml), "--out", str(tmp_path / "a")]) == 2
    assert "--resample" in capsys.readouterr().err
    assert main(["compare", str(p), "--scenario", str(toml), "--resample",
                 "--out", str(tmp_path / "b")]) == 0
