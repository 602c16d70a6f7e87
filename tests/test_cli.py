"""The command line: `hystmech list | run` and its usage errors (exit code 2, one line)."""
import json
import subprocess
import sys

import pytest


def _cli(*args, cwd=None):
    # the time-out is a ceiling against a hang, not a speed limit: a first run compiles,
    # which takes minutes at load 10 on 2 cores
    return subprocess.run([sys.executable, "-m", "hystmech", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=900)


def test_list_names_every_shipped_scenario_and_marks_the_default():
    from hystmech.scenario import DEFAULT_SCENARIO, scenario_dir

    r = _cli("list")
    assert r.returncode == 0, r.stderr
    names = {line.split()[0] for line in r.stdout.splitlines() if line.strip()}
    assert names == {p.stem for p in scenario_dir().glob("*.toml")}
    assert any(line.startswith(DEFAULT_SCENARIO) and "(default)" in line
               for line in r.stdout.splitlines())


def test_run_a_toml_path_writes_summary_timeseries_and_plot(tmp_path):
    # a drive scenario given by path: Dahl on a ramp, whose force has the closed form
    # F = Fc (1 - exp(-rho u)) from w0 = 0 (Ikhouane, Mañosa & Pujol, §1)
    toml = tmp_path / "dahl.toml"
    toml.write_text('title = "Dahl ramp"\nrunner = "drive"\n'
                    '[element]\ntype = "Dahl"\nrho = 20.0\nFc = 3.0\n'
                    '[input]\ntype = "piecewise_linear"\nknots_u = [0.0, 0.5]\n')
    out = tmp_path / "out"
    r = _cli("run", str(toml), "--out", str(out))
    assert r.returncode == 0, r.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["config"]["element"]["type"] == "Dahl"
    assert summary["metrics"]["F_max"] == pytest.approx(3.0 * (1 - __import__("math").exp(-10.0)),
                                                        rel=1e-9)
    header = (out / "timeseries.csv").read_text().splitlines()[0].split(",")
    assert header[:4] == ["t", "u", "v", "F"]
    assert (out / "force.png").stat().st_size > 1000


@pytest.mark.parametrize("content, needle", [
    (None, "unknown scenario"),
    ("title = \n", "malformed TOML"),
    ('runner = "drive"\n[element]\ntype = "Dahll"\n[input]\ntype = "sine"\n'
     'amplitude = 1.0\nomega = 1.0\nduration = 1.0\n', "unknown element 'Dahll'"),
    ('runner = "drive"\n[element]\ntype = "Dahl"\nrho = 1.0\nFc = 1.0\nsigma = 2.0\n'
     '[input]\ntype = "sine"\namplitude = 1.0\nomega = 1.0\nduration = 1.0\n',
     "unknown parameter 'sigma'"),
    ('runner = "drive"\n[element]\ntype = "Dahl"\nrho = -1.0\nFc = 1.0\n'
     '[input]\ntype = "sine"\namplitude = 1.0\nomega = 1.0\nduration = 1.0\n',
     "rho must be in (0, inf)"),
    ('runner = "drive"\n[element]\ntype = "Dahl"\nrho = 1.0\nFc = 1.0\n'
     '[input]\ntype = "square"\n', "input.type must be one of"),
])
def test_usage_errors_exit_2_with_one_line_and_no_traceback(tmp_path, content, needle):
    if content is None:
        target = "no-such-scenario"
    else:
        target = str(tmp_path / "bad.toml")
        (tmp_path / "bad.toml").write_text(content)
    r = _cli("run", target, "--out", str(tmp_path / "out"))
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert needle in lines[0]
    assert "Traceback" not in r.stderr
    assert not (tmp_path / "out" / "summary.json").exists()


def test_unknown_subcommand_and_option_exit_2():
    for args in (("frobnicate",), ("run", "--bogus")):
        r = _cli(*args)
        assert r.returncode == 2
        assert len(r.stderr.strip().splitlines()) == 1


def test_a_run_that_fails_exits_1_with_one_line(tmp_path):
    # a (trusted, local) runner that raises at run time fails cleanly
    (tmp_path / "myrun.py").write_text("def run(cfg, out, progress):\n"
                                       "    raise TypeError('wrong call')\n")
    (tmp_path / "bad.toml").write_text('runner = "myrun:run"\n')
    r = _cli("run", str(tmp_path / "bad.toml"), "--out", str(tmp_path / "out"),
             "--trust-runner")
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "failed: TypeError" in lines[0], r.stderr
    assert not (tmp_path / "out" / "summary.json").exists()


@pytest.mark.parametrize("runner", ["os:system", "subprocess:run", "math:sqrt"])
def test_a_module_function_runner_is_refused_with_exit_2(tmp_path, runner):
    # a scenario file is data: importing os/subprocess from it would run arbitrary code
    (tmp_path / "evil.toml").write_text(f'runner = "{runner}"\n[x]\ncmd = "touch PWNED"\n')
    for extra in ((), ("--trust-runner",)):   # trusted: only modules beside the file
        r = _cli("run", str(tmp_path / "evil.toml"), "--out", str(tmp_path / "out"), *extra,
                 cwd=tmp_path)
        assert r.returncode == 2, r.stderr
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and runner in lines[0], r.stderr
        assert not (tmp_path / "PWNED").exists() and not (tmp_path / "out").exists()
