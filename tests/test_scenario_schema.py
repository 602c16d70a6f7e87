"""Scenario files are data: registered runners only, typed schemas, limits on work,
non-finite results never written (issue 15, items 1-3 and 5). The CLI runs in-process
(hystmech.cli.main(argv)) so these cases stay fast; exit codes and the one-line rule are
what is checked."""
import json
import math
import sys
from importlib import metadata

import pytest

from hystmech import limits, runners, schema
from hystmech.cli import main
from hystmech.scenario import load_scenario, scenario_dir

DAHL = ('runner = "drive"\n[element]\ntype = "Dahl"\nrho = 20.0\nFc = 3.0\n'
        '[input]\ntype = "sine"\namplitude = 0.1\nomega = 1.0\nduration = 1.0\nn = 201\n')


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    err = capsys.readouterr().err
    lines = [ln for ln in err.replace("\r", "\n").splitlines()
             if ln.strip() and not ln.lstrip().startswith("[")]   # progress lines
    return code, lines


def test_every_shipped_scenario_names_a_registered_runner_and_passes_its_schema():
    names = sorted(p.stem for p in scenario_dir().glob("*.toml"))
    assert names
    for n in names:
        cfg = load_scenario(n)
        r = runners.resolve(cfg["runner"], cfg["_path"])
        assert r.schema is not None, n
        schema.check(cfg, r.schema, r.name)
        est = limits.check(r, cfg)
        caps = dict(limits.DEFAULT_LIMITS, memory=limits.memory_limit())
        assert all(v[0] <= caps[q] for q, v in est.items()), (n, est)


def test_every_registry_entry_imports_and_declares_schema_and_work():
    for name, path in runners.REGISTRY.items():
        r = runners.resolve(name)
        assert callable(r.fn) and r.name == name
        assert r.schema is not None, name
        assert runners.resolve(path).fn is r.fn        # the import path names it too
    missing_work = set(runners.REGISTRY) - set(runners.WORK) - {"mr-damper-real-data"}
    assert not missing_work


@pytest.mark.parametrize("body, needle", [
    (DAHL.replace("rho = 20.0", 'rho = "100"'), "element.rho must be a number (got the string '100')"),
    (DAHL.replace("rho = 20.0", "rho = true"), "element.rho must be a number (got the boolean true)"),
    (DAHL.replace("n = 201", "n = 2.7"), "input.n must be a whole number >= 0 (got 2.7)"),
    (DAHL.replace("n = 201", "n = -3"), "input.n must be a whole number >= 0"),
    (DAHL.replace("n = 201", "n = nan"), "input.n must be a whole number"),
    (DAHL.replace("omega = 1.0", "omega = inf"), "input.omega must be a finite number"),
    (DAHL.replace("omega = 1.0", "omaga = 1.0"), "unknown key 'omaga' in [input]; did you mean 'omega'?"),
    (DAHL.replace("rho = 20.0", "rhoo = 20.0"), "unknown parameter 'rhoo' in [element]; did you mean 'rho'?"),
    (DAHL + "[solvr]\nrtol = 1e-8\n", "unknown table 'solvr' for runner 'drive'; did you mean 'solver'?"),
    (DAHL.replace('type = "sine"', 'type = "sinus"'), "did you mean 'sine'?"),
    (DAHL.replace('type = "Dahl"\n', ""), "element.type is missing"),
    ('runner = "drive"\n[element]\ntype = "Dahl"\nrho = 1.0\nFc = 1.0\n',
     "runner 'drive' needs the [input] table"),
    (DAHL.replace('runner = "drive"', 'runner = 3'), "runner must be a string"),
    ('name = "/tmp/elsewhere"\n' + DAHL, "name must be a plain name"),
    ('name = "../up"\n' + DAHL, "name must be a plain name"),
    (DAHL.replace('runner = "drive"', 'runner = "drivee"'), "unknown runner 'drivee'"),
])
def test_schema_errors_exit_2_with_one_line(tmp_path, capsys, body, needle):
    (tmp_path / "s.toml").write_text(body)
    code, lines = run_cli(capsys, "run", tmp_path / "s.toml", "--out", tmp_path / "out")
    assert code == 2 and len(lines) == 1, lines
    assert needle in lines[0], lines[0]
    assert not (tmp_path / "out").exists()      # refused before anything was created


def test_schema_of_a_shipped_rig_names_the_nearest_key(tmp_path, capsys):
    src = (scenario_dir() / "masing-loop.toml").read_text()
    (tmp_path / "m.toml").write_text(src.replace("alpha =", "alfa ="))
    code, lines = run_cli(capsys, "run", tmp_path / "m.toml", "--out", tmp_path / "o")
    assert code == 2 and lines == ["hystmech: error: unknown key 'alfa' in [masing]; "
                                   "did you mean 'alpha'?"]
    (tmp_path / "f.toml").write_text((scenario_dir() / "belt-tensioner-frf.toml").read_text()
                                     .replace("reduced = false", "reduced = 1"))
    code, lines = run_cli(capsys, "run", tmp_path / "f.toml", "--out", tmp_path / "o")
    assert code == 2 and "grid.reduced must be true or false (got 1)" in lines[0]


@pytest.mark.parametrize("scenario, edit, needle", [
    ("belt-tensioner-masing", ("h = 1e-5", "h = 1e-12"),
     "h = 1e-12 s over 3.2984 s is 3.3e+12 steps, above the limit of 1e+09 steps"),
    ("cable-dynamic", ("periods = 6", "periods = 1e8"), "is 4e+10 steps"),
    ("masing-loop", ("periods = 3", "periods = 100000000"), "is 2e+12 samples"),
    ("belt-tensioner-frf", ("n_omega = 116", "n_omega = 100000"), "3.2e+06 grid points"),
])
def test_work_above_the_limit_is_refused_up_front_with_the_estimate(tmp_path, capsys,
                                                                    scenario, edit, needle):
    src = (scenario_dir() / f"{scenario}.toml").read_text()
    assert edit[0] in src
    (tmp_path / "s.toml").write_text(src.replace(edit[0], edit[1]))
    code, lines = run_cli(capsys, "run", tmp_path / "s.toml", "--out", tmp_path / "out")
    assert code == 2 and len(lines) == 1 and needle in lines[0], lines
    assert "--no-limits" in lines[0]
    assert not (tmp_path / "out").exists()


def test_sample_estimate_of_a_drive_input_and_the_limit_flags(tmp_path, capsys):
    # piecewise_linear: periods × path length × samples_per_unit, the count drive() stores
    cfg = {"runner": "drive", "element": {"type": "Dahl", "rho": 1.0, "Fc": 1.0},
           "input": {"type": "piecewise_linear", "knots_u": [0.0, 2.0, -1.0, 0.0],
                     "periods": 3, "samples_per_unit": 50.0}}
    r = runners.resolve("drive")
    est = limits.check(r, cfg)
    assert est["samples"][0] == pytest.approx(3 * 6.0 * 50.0)
    from hystmech.signals import from_config

    t, _ = from_config(cfg["input"])
    assert abs(t.size - est["samples"][0]) <= 3 * 3 + 1     # one shared knot per segment
    with pytest.raises(ValueError, match="above the limit of 100 samples"):
        limits.check(r, cfg, {"samples": 100})
    assert limits.check(r, cfg, False)                      # --no-limits
    body = DAHL.replace("n = 201", "n = 5000")
    (tmp_path / "s.toml").write_text(body)
    code, lines = run_cli(capsys, "run", tmp_path / "s.toml", "--out", tmp_path / "o",
                          "--max-samples", "1000")
    assert code == 2 and "input.n = 5e+03 samples, above the limit of 1e+03" in lines[0]
    code, lines = run_cli(capsys, "run", tmp_path / "s.toml", "--out", tmp_path / "o",
                          "--max-samples", "0")
    assert code == 2 and len(lines) == 1


def test_trusted_runner_only_from_the_scenario_directory(tmp_path, capsys):
    sub = tmp_path / "case"
    sub.mkdir()
    (sub / "myrun.py").write_text(
        "import numpy as np\nfrom hystmech.scenario import ScenarioOutput\n"
        "def run(cfg, out, progress):\n"
        "    t = np.linspace(0, 1, 11)\n"
        "    return ScenarioOutput(summary={'metrics': {'k': cfg['p']['k']}},"
        " timeseries={'t': t, 'y': 2 * t})\n")
    (sub / "s.toml").write_text('runner = "myrun:run"\n[p]\nk = 4.0\n')
    code, lines = run_cli(capsys, "run", sub / "s.toml", "--out", tmp_path / "o")
    assert code == 2 and "--trust-runner" in lines[0]
    code, lines = run_cli(capsys, "run", sub / "s.toml", "--out", tmp_path / "o",
                          "--trust-runner")
    assert code == 0, lines
    assert json.loads((tmp_path / "o" / "summary.json").read_text())["metrics"]["k"] == 4.0
    # a module path that leaves the directory, or a module found only on sys.path
    (tmp_path / "up.py").write_text("def run(c, o, p):\n    raise SystemExit(99)\n")
    for spec in ("..up:run", "json:loads", "hystmech.cli:main"):
        (sub / "t.toml").write_text(f'runner = "{spec}"\n')
        code, lines = run_cli(capsys, "run", sub / "t.toml", "--out", tmp_path / "o2",
                              "--trust-runner")
        assert code == 2 and len(lines) == 1 and spec in lines[0], lines


def test_runner_declared_by_an_installed_package_entry_point(tmp_path, capsys, monkeypatch):
    (tmp_path / "toy_pkg.py").write_text(
        "import numpy as np\nfrom hystmech.scenario import ScenarioOutput\n"
        "from hystmech.schema import Table, REAL\n"
        "def run(cfg, out, progress):\n"
        "    a = cfg['toy']['a']\n"
        "    return ScenarioOutput(summary={'metrics': {'a2': a * a}})\n"
        "run.SCHEMA = {'toy': Table({'a': REAL})}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    ep = metadata.EntryPoint(name="toy", value="toy_pkg:run", group=runners.ENTRY_POINT_GROUP)
    monkeypatch.setattr(runners, "_entry_points", lambda: {"toy": ep})
    (tmp_path / "s.toml").write_text('runner = "toy"\n[toy]\na = 3.0\n')
    code, lines = run_cli(capsys, "run", tmp_path / "s.toml", "--out", tmp_path / "o")
    assert code == 0, lines
    assert json.loads((tmp_path / "o" / "summary.json").read_text())["metrics"]["a2"] == 9.0
    (tmp_path / "s.toml").write_text('runner = "toy"\n[toy]\na = "3"\n')
    code, lines = run_cli(capsys, "run", tmp_path / "s.toml", "--out", tmp_path / "o3")
    assert code == 2 and "toy.a must be a number" in lines[0]


def test_non_finite_result_exits_1_naming_time_and_quantity_and_writes_nothing(tmp_path, capsys):
    (tmp_path / "blow.py").write_text(
        "import numpy as np\nfrom hystmech.scenario import ScenarioOutput\n"
        "def run(cfg, out, progress):\n"
        "    t = np.linspace(0, 1, 11)\n"
        "    with np.errstate(over='ignore'):\n"
        "        F = np.exp(800.0 * t)       # overflows to inf from t = 0.9 s\n"
        "    return ScenarioOutput(summary={'metrics': {}}, timeseries={'t': t, 'F': F})\n")
    (tmp_path / "s.toml").write_text('runner = "blow:run"\n')
    code, lines = run_cli(capsys, "run", tmp_path / "s.toml", "--out", tmp_path / "o",
                          "--trust-runner")
    i = next(k for k in range(11) if 80.0 * k > math.log(sys.float_info.max))   # 9
    assert code == 1 and len(lines) == 1, lines
    assert f"F = inf at t = {i / 10:g} s (sample {i})" in lines[0], lines
    assert not (tmp_path / "o").exists()     # nothing written: not even an empty --out


def test_padding_after_a_shorter_series_is_not_a_non_finite_result():
    from hystmech.scenario import NonFiniteResult, check_finite_outputs

    nan = float("nan")
    check_finite_outputs({"a.t": [0.0, 1.0, nan], "a.x": [1.0, 2.0, nan],
                          "b.t": [0.0, 1.0, 2.0], "b.x": [0.0, 0.0, 1.0]})
    with pytest.raises(NonFiniteResult, match=r"a\.x = nan at t = 1 s \(sample 1\)"):
        check_finite_outputs({"a.t": [0.0, 1.0, nan], "a.x": [1.0, nan, nan]})
    with pytest.raises(NonFiniteResult, match=r"a\.t = nan"):
        check_finite_outputs({"a.t": [0.0, nan, 2.0], "a.x": [1.0, 1.0, 1.0]})


@pytest.mark.parametrize("kind", ["empty", "file", "under_file", "devnull", "readonly"])
def test_out_paths_that_cannot_be_a_directory_are_usage_errors(tmp_path, capsys, kind):
    import os

    (tmp_path / "s.toml").write_text(DAHL)
    f = tmp_path / "afile"
    f.write_text("x")
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    out = {"empty": "", "file": f, "under_file": f / "sub", "devnull": os.devnull,
           "readonly": ro / "sub"}[kind]
    if kind == "readonly" and os.access(ro, os.W_OK):
        ro = None   # root writes anywhere: use a directory that refuses even root
        out = "/proc/hystmech-out"
    code, lines = run_cli(capsys, "run", tmp_path / "s.toml", "--out", out)
    assert code == 2 and len(lines) == 1, lines
    assert f.read_text() == "x"


def test_scenario_path_that_is_a_directory_is_a_usage_error(tmp_path, capsys):
    code, lines = run_cli(capsys, "run", tmp_path, "--out", tmp_path / "o")
    assert code == 2 and lines == [f"hystmech: error: scenario path {tmp_path} is a directory, "
                                   "not a TOML file"]
