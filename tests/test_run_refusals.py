"""Issue 29, "Refuse what would be lost" and "Names that disagree": each finding of the
issue, reproduced as the user met it, with the outcome the issue asks for (exit code 2,
one line naming both cases / the key / what is missing, no empty --out left behind).

The CLI runs in-process (hystmech.cli.main); the truth is the issue's specification.
"""
import contextlib
import io
import subprocess
import sys
import time

import numpy as np
import pytest

from hystmech.cli import main
from hystmech.scenario import scenario_dir


def cli(argv):
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        code = main([str(a) for a in argv])
    return code, [ln for ln in err.getvalue().splitlines() if ln.strip()], out.getvalue()


def refused(argv, *needles):
    code, lines, _ = cli(argv)
    assert code == 2, lines
    assert len(lines) == 1 and lines[0].startswith("hystmech: error: "), lines
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


def test_two_cases_naming_one_figure_are_refused_naming_both(tmp_path):
    # the issue's reproduction: sed 's#figure = "fig15_loop_sigma0_6"#figure =
    # "fig16_loop_sigma0_1"#' scenarios/lugre-example-4.toml > d.toml (4 PNGs instead of 5)
    text = (scenario_dir() / "lugre-example-4.toml").read_text()
    assert 'figure = "fig15_loop_sigma0_6"' in text
    p = tmp_path / "d.toml"
    p.write_text(text.replace('figure = "fig15_loop_sigma0_6"', 'figure = "fig16_loop_sigma0_1"'))
    out = tmp_path / "o"
    refused(["run", p, "--out", out], "cases[0] (Fig. 15)", "cases[1] (Fig. 16)",
            "'fig16_loop_sigma0_1'")
    assert not out.exists()          # the refusal leaves no empty folder behind


def test_figure_names_in_one_list_and_across_tables_are_checked(tmp_path):
    from hystmech.runner_io import ScenarioError
    from hystmech.scenario import check_figure_names

    with pytest.raises(ScenarioError, match=r"\[run\] figures\[0\] and \[run\] figures\[2\]"):
        check_figure_names({"run": {"figures": ["a", "b", "a"]}})
    # distinct names pass, and so do the shipped scenarios (every one of them)
    from hystmech.scenario import list_scenarios, load_scenario

    check_figure_names({"run": {"figures": ["a", "b"]}, "cases": [{"figure": "c"}]})
    for name, _ in list_scenarios():
        check_figure_names(load_scenario(name))


def test_a_toml_without_runner_says_runner_is_missing_and_what_the_default_needs(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text('[tensioner]\nmodel = "mdm"\n[forcing]\nf1 = 100.0\n')
    out = tmp_path / "o"
    refused(["run", p, "--out", out], "names no runner", 'runner = "NAME"',
            "belt-tensioner-frf", '"drive"', "[element] and [input]", "[tensioner], [forcing]")
    assert not out.exists()


def test_a_refused_run_leaves_no_empty_out_folder_but_keeps_an_existing_one(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text('runner = "drive"\n[element]\ntype = "Dahl"\nrho = -1.0\nFc = 2.0\n'
                 '[input]\ntype = "sine"\namplitude = 0.01\nomega = 6.0\nn = 50\n')
    deep = tmp_path / "a" / "b" / "c"
    refused(["run", p, "--out", deep], "rho")
    assert not (tmp_path / "a").exists()
    mine = tmp_path / "mine"
    mine.mkdir()
    refused(["run", p, "--out", mine], "rho")
    assert mine.is_dir()             # a folder the user made is the user's


def test_the_lock_message_shows_the_holders_whole_command_with_its_folder(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    # a holder whose command line is longer than the 120 characters shown before
    code = ("import fcntl, os, sys, time; fd = os.open(sys.argv[-1], os.O_RDONLY); "
            "fcntl.flock(fd, fcntl.LOCK_EX); print('locked', flush=True); time.sleep(60)")
    holder = subprocess.Popen([sys.executable, "-c", code, "--scenario", "x" * 80, "--out",
                               str(out)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        p = tmp_path / "s.toml"
        p.write_text('[element]\ntype = "Dahl"\nrho = 300.0\nFc = 2.0\n[input]\n'
                     'type = "sine"\namplitude = 0.01\nomega = 6.0\nn = 50\n')
        line = refused(["run", p, "--out", out], f"pid {holder.pid}", f"--out {out})")
        assert "x" * 80 in line
    finally:
        holder.kill()
        holder.wait()


FRF_SMALL = """runner = "belt-tensioner-frf"
[grid]
models = ["masing"]
f1 = [13.0]
omega_min = 40.0
omega_max = 100.0
n_omega = {n}
[simulation]
t_window = [0.6, 0.9]
[sweep]
workers = 1
steady_state = false
"""


def test_resuming_a_sweep_on_another_grid_is_refused_naming_the_key(tmp_path):
    out = tmp_path / "o"
    p = tmp_path / "s.toml"
    p.write_text(FRF_SMALL.format(n=2))
    code, lines, _ = cli(["run", p, "--out", out, "--max-work", "1", "--quiet"])
    assert code == 0, lines
    rows = (out / "frf.csv").read_text().splitlines()
    assert len(rows) == 2             # header + the first point of the grid
    p.write_text(FRF_SMALL.format(n=3))
    refused(["run", p, "--out", out], "grid.n_omega = 2.0", "asks for 3.0")
    assert (out / "frf.csv").read_text().splitlines() == rows      # nothing mixed in
    # the same grid resumes: the point already computed is kept, the other one added
    p.write_text(FRF_SMALL.format(n=2))
    code, lines, _ = cli(["run", p, "--out", out, "--quiet"])
    assert code == 0, lines
    new = (out / "frf.csv").read_text().splitlines()
    assert new[:2] == rows and len(new) == 3


# -- one vocabulary of method names ------------------------------------------------------------
def test_method_names_are_case_insensitive_with_one_canonical_spelling():
    from hystmech.systems.methods import METHODS, canonical

    for m in METHODS:
        assert canonical(m) == m
        assert canonical(m.lower()) == m and canonical(m.upper()) == m
    with pytest.raises(ValueError, match=r"method must be one of auto, radau5, BDF.*'rk4'"):
        canonical("rk4")


def test_the_sweep_and_the_rig_accept_what_simulate_accepts():
    # the issue: simulate refused 'rk45', the sweep's own check refused 'RK45'
    from hystmech.systems.periodic.sweep import point_settings
    from hystmech.systems.rigs.belt_tensioner import METHODS
    from hystmech.systems.methods import canonical

    for m in METHODS:
        assert canonical(m) == m      # the rig's names are simulate's
    a, b = point_settings(method="rk45"), point_settings(method="RK45")
    assert a == b and a["method"] == "RK45"       # one setting for a resume
    assert point_settings(method="Projection")["method"] == "projection"
    with pytest.raises(ValueError, match="method must be one of projection, RK45, BDF"):
        point_settings(method="radau5")


def test_simulate_refuses_an_unknown_option_before_compiling_anything(monkeypatch):
    from hystmech.components import get_element_class
    from hystmech.systems import Assembly
    from hystmech.systems import simulate as sim_mod

    a = Assembly()
    a.add_dof("m", mass=1.0, x0=0.01)
    a.add_spring("m", "ground", k=100.0)
    a.add_element("f", get_element_class("Dahl")(rho=300.0, Fc=2.0), "m")

    def no_model(*args, **kw):
        raise AssertionError("the model was built before the options were checked")

    monkeypatch.setattr(sys.modules["hystmech.systems.simulate"], "Model", no_model)
    simulate = sys.modules["hystmech.systems.simulate"].simulate
    t0 = time.process_time()
    with pytest.raises(ValueError, match=r"unknown option 'hh' for method 'RK45'; allowed: rtol"):
        simulate(a, (0.0, 1.0), method="rk45", hh=1e-3)
    with pytest.raises(ValueError, match=r"unknown option 'hh' for method 'projection'"):
        simulate(a, (0.0, 1.0), method="Projection", hh=1e-3)
    assert time.process_time() - t0 < 1.0
    assert sim_mod is not None
