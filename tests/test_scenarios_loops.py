"""Fast runs of the closed-form-loop scenarios, their metrics checked against the papers'
closed forms (values derived here independently of the runners)."""
import json
import math

import pytest

from hystmech.scenario import run_scenario


def _run(name, tmp_path, **overrides):
    out = tmp_path / name
    run_scenario(name, out=out, progress=lambda *a: None, overrides=overrides)
    summary = json.loads((out / "summary.json").read_text())
    assert (out / "timeseries.csv").stat().st_size > 0
    return summary["metrics"], sorted(p.name for p in out.glob("*.png"))


def test_example1_dahl_filter_converges_to_dahl_loop(tmp_path):
    m, figs = _run("lugre-example-1", tmp_path,
                   run={"gammas": [20.0, 2000.0], "periods": 5, "samples_per_period": 400})
    assert figs == ["fig04_example1.png"]
    # Dahl steady loop between -1 and 1 with rho = 1: area 4 (1 - tanh(1)) (eq. (19))
    assert m["dahl_loop_area_eq19"] == pytest.approx(4 * (1 - math.tanh(1.0)), rel=1e-12)
    for g in ("20", "2000"):
        assert m[f"gamma_{g}"]["max_abs_x_minus_dahl_loop"] < 1e-6
    e20 = m["gamma_20"]["max_abs_y_minus_limit_loop"]
    e2000 = m["gamma_2000"]["max_abs_y_minus_limit_loop"]
    assert e2000 < 5e-3 and 50 < e20 / e2000 < 150          # the filter lag is O(1/γ)
    assert m["gamma_2000"]["loop_area_steady"] == pytest.approx(m["dahl_loop_area_eq19"],
                                                                rel=1e-2)


def test_example2_y_gamma_and_y_star_convergence(tmp_path):
    m, figs = _run("lugre-example-2", tmp_path,
                   run={"knots_u": [0.0, 1.0, 0.0], "periods": 4, "gammas": [1.0, 10.0, 100.0],
                        "k_max": 3, "samples_per_unit": 50, "rtol": 1e-8,
                        "figures": ["a", "b", "c"]})
    assert figs == ["a.png", "b.png", "c.png"]
    a, g0 = 1.0 / 2.0, 2.0
    # triangle 0 -> 1 -> 0: the periodic solution of eq. (6) starts at -g0 tanh(a/2)
    assert m["y_steady_at_0_eq8"] == pytest.approx(-g0 * math.tanh(a / 2), abs=1e-12)
    for q in m["contraction_per_period_measured"]:
        assert q == pytest.approx(math.exp(-a * 2.0), rel=1e-9)
    s = m["sup_abs_y_gamma_minus_y_star"]
    assert s["100"] < 0.02 and s["10"] / s["100"] > 5 and s["1"] / s["10"] > 5


def test_example3_contraction_and_minor_loop(tmp_path):
    m, figs = _run("lugre-example-3", tmp_path,
                   run={"knots_u": [0.0, 1.0, 0.2, 1.5, 0.0], "periods": 3,
                        "gammas": [100.0], "k_max": 2, "samples_per_unit": 50,
                        "figures": ["f11", "f12", "f13"]})
    assert m["varrho_period"] == pytest.approx(4.6, abs=1e-12)
    for q in m["contraction_per_period_measured"]:
        assert q == pytest.approx(math.exp(-0.5 * 4.6), rel=1e-9)
    assert m["sup_abs_y_gamma_minus_y_star"]["100"] < 0.02


def test_example4_minor_loops_match_theorem_a_and_simulation(tmp_path):
    m, figs = _run("lugre-example-4", tmp_path,
                   simulation={"gamma": 1e4, "periods": 4, "samples_per_unit": 30, "rtol": 1e-8})
    assert "fig15_loop_sigma0_6.png" in figs and "fig14_input.png" in figs
    # Theorem A (b): the minor loop is [rho_1, rho_5], rho_5 = rho_2 + u_max1 - u_min2
    expected = {"Fig. 15": (1.0, 1.5 + 0.5), "Fig. 16": (1.0, 1.5 + 0.5),
                "Fig. 17": (1.0, 1.8 + 0.8)}
    for label, (r1, r5) in expected.items():
        c = m[label]
        assert c["max_abs_theorem_a_minus_general"] < 1e-12
        (ml,) = c["minor_loops"]
        assert ml["varrho_open"] == pytest.approx(r1, abs=1e-12)
        assert ml["varrho_close"] == pytest.approx(r5, abs=1e-12)
        assert c["simulation"]["relative_to_g0"] < 1e-3
        assert c["dissipated_energy_per_cycle"] > 0
    # the multimodal case: four reversal pairs, three minor loops
    mm = m["multimodal (Theorem A generalised)"]
    assert len(mm["minor_loops"]) == 3 and mm["simulation"]["relative_to_g0"] < 1e-3


def test_mr_damper_fig11_w_loop_and_rho_from_area(tmp_path):
    m, figs = _run("mr-damper-fig11", tmp_path)
    assert figs == ["fig11_w_loop.png"]
    assert m["max_abs_w_minus_eq16_18_steady"] < 1e-9
    assert m["min_abs_velocity"] > 0.01                       # the paper's |x'| > 0.01 m/s
    assert m["loop_area_numerical"] == pytest.approx(m["loop_area_eq19"], rel=1e-4)
    assert abs(m["rho_identified_from_area"] - 768.73) / 768.73 < 2e-3
