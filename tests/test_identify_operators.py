"""``hystmech identify relay | prandtl-ishlinskii | duhem``: recovery of known parameters
from clean data of independent references (tests/identify_refs.py: exact play operators,
a relay written here from its definition, Duhem by scipy's DOP853 at rtol 1e-11), and bad
input exiting with code 2 and one line."""
import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import identify_refs as R  # noqa: E402

from hystmech.cli import main  # noqa: E402
from hystmech.identify.dataset import Dataset  # noqa: E402


def relay_ref(u, a1, a2, w, off, s0=-1.0):
    """F = off + w·R, R = +1 after u ≥ a2, −1 after u ≤ a1 (Manfredo et al., eq. (6))."""
    s, out = s0, np.empty(u.size)
    for k, x in enumerate(u):
        s = 1.0 if x >= a2 else (-1.0 if x <= a1 else s)
        out[k] = off + w * s
    return out


def _csv(path, t, u, F):
    np.savetxt(path, np.c_[t, u, F], delimiter=",", header="t,u,F", comments="", fmt="%.17g")
    return path


def _run(tmp_path, law, csv, *extra):
    out = tmp_path / f"id-{law}"
    code = main(["identify", law, str(csv), "--disp", "u", "--force", "F", "--out", str(out),
                 *extra])
    return code, out


def test_identify_relay_recovers_thresholds_weight_and_offset(tmp_path):
    t = np.arange(2 * 20000 + 1) / 20000.0            # 2 periods of 1 Hz at 20 kHz
    u = 0.01 * np.sin(2 * np.pi * 1.3 * t)
    truth = dict(a1=-0.003, a2=0.004, w=12.0, off=1.5)
    F = relay_ref(u, truth["a1"], truth["a2"], truth["w"], truth["off"])
    code, out = _run(tmp_path, "relay", _csv(tmp_path / "r.csv", t, u, F))
    assert code == 0
    p = json.loads((out / "summary.json").read_text())["params"]
    got = dict(a1=p["a1"][0], a2=p["a2"][0], w=p["weights"][0], off=p["offset"])
    for k, v in truth.items():
        assert abs(got[k] / v - 1) < 1e-3, (k, got[k], v)
    se = json.loads((out / "summary.json").read_text())["stderr"]
    assert 0 < se["a2"] < 1e-3 * truth["a2"]
    # the scenario's element reproduces the record
    import hystmech
    from hystmech.scenario import build_element, load_scenario

    el = build_element(load_scenario(str(out / "scenario.toml"))["element"])
    assert np.max(np.abs(hystmech.drive(el, t, u).force - F)) == 0.0


def test_identify_prandtl_ishlinskii_recovers_radii_weights_k0_offset(tmp_path):
    t = np.arange(8001) / 2000.0
    u = 0.01 * np.exp(-0.25 * t) * np.sin(2 * np.pi * t)     # minor loops of every size
    r, c, k0, off = [0.002, 0.005], [200.0, 100.0], 50.0, 0.3
    F = off + k0 * u + sum(ci * (u - R.play(u, ri)) for ri, ci in zip(r, c))
    code, out = _run(tmp_path, "prandtl-ishlinskii", _csv(tmp_path / "pi.csv", t, u, F),
                     "--elements", "2")
    assert code == 0
    p = json.loads((out / "summary.json").read_text())["params"]
    for got, want in ((p["r"], r), (p["weights"], c), ([p["k0"], p["offset"]], [k0, off])):
        np.testing.assert_allclose(got, want, rtol=1e-3)
    # the scenario element is the fitted operator within h·Σ|c|/2
    import hystmech
    from hystmech.scenario import build_element, load_scenario

    el = build_element(load_scenario(str(out / "scenario.toml"))["element"])
    err = np.max(np.abs(hystmech.drive(el, t, u).force - F))
    assert err <= 0.5 * p["h"] * sum(abs(x) for x in p["weights"]) * 1.001


def test_identify_duhem_recovers_A_envelopes_and_F0(tmp_path):
    t, u, _, Aw = R.sine(A=0.01, f=1.0, periods=3, fs=2000.0)
    truth = dict(A=300.0, cu=[50.0, 2e4, 1e5, 4e7], cl=[-50.0, 2e4, -1e5, 4e7], F0=20.0)
    F = R.duhem(t, Aw, **truth)
    code, out = _run(tmp_path, "duhem", _csv(tmp_path / "d.csv", t, u, F), "--degree", "3")
    assert code == 0
    s = json.loads((out / "summary.json").read_text())
    p = s["params"]
    assert abs(p["A"] / truth["A"] - 1) < 1e-3
    assert abs(p["F0"] - truth["F0"]) < 1e-3 * truth["F0"]
    np.testing.assert_allclose(p["cu"], truth["cu"], rtol=1e-3)
    np.testing.assert_allclose(p["cl"], truth["cl"], rtol=1e-3)
    ci = s["uncertainty"]["intervals"] if "intervals" in s["uncertainty"] else None
    assert ci is None or all(lo <= hi for lo, hi in ci.values())
    # the scenario's element (Duhem.polynomial) reproduces the record
    import hystmech
    from hystmech.scenario import build_element, load_scenario

    el = build_element(load_scenario(str(out / "scenario.toml"))["element"])
    Fe = hystmech.drive(el, t, u, rtol=1e-10).force
    assert np.max(np.abs(Fe - F)) < 1e-4 * np.ptp(F)


@pytest.mark.parametrize("law, F, needle", [
    ("relay", lambda t, u: 0 * t + 2.0, "the measured force is constant"),
    ("relay", lambda t, u: np.where(t < 1.0, -1.0, 1.0), "both up and down"),
    ("prandtl-ishlinskii", lambda t, u: 0 * t + 1.0, "the measured force is constant"),
])
def test_bad_records_exit_2_with_one_line(tmp_path, capsys, law, F, needle):
    t = np.arange(2001) / 1000.0
    u = 0.01 * np.sin(2 * np.pi * t)
    code, out = _run(tmp_path, law, _csv(tmp_path / "bad.csv", t, u, F(t, u)))
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0], err
    assert not (out / "scenario.toml").exists()


def test_bad_options_exit_2(tmp_path, capsys):
    t = np.arange(2001) / 1000.0
    u = 0.01 * np.sin(2 * np.pi * t)
    csv = _csv(tmp_path / "ok.csv", t, u, 100 * u)
    code, _ = _run(tmp_path, "prandtl-ishlinskii", csv, "--elements", "0")
    assert code == 2
    assert "--elements must be in [1, inf)" in capsys.readouterr().err
    code, _ = _run(tmp_path, "duhem", csv, "--degree", "9")
    assert code == 2
    assert "--degree must be in [0, 7]" in capsys.readouterr().err
    code, _ = _run(tmp_path, "prandtl-ishlinskii", csv, "--d", "-1")
    assert code == 2
    assert "--d must be in (0, inf)" in capsys.readouterr().err
