"""The belt–tensioner rig on the generic Assembly path reproduces the results of the
dedicated loops it replaced (tests/data/belt_reference.json, recorded with those loops
by tests/data/record_belt_reference.py before they were deleted): the projection
scheme step for step (1e-9 relative), RK45 at the same tolerance to 1e-6."""
import json
import math
from pathlib import Path

import numpy as np
import pytest

from hystmech.systems.rigs.belt_tensioner import paper_tensioner, simulate_belt
from hystmech.systems.periodic.sweep import SS_AGREEMENT, SS_DEFAULT, tension_amplitude

REF = json.loads((Path(__file__).parent / "data" / "belt_reference.json").read_text())
TOL = {"projection": 1e-9, "rk45": 1e-6}


@pytest.mark.parametrize("model", ["masing", "mdm"])
def test_figs17_20_metrics_reproduced(model):
    R = REF["figs17_20"][model]
    r = simulate_belt(paper_tensioner(model), t_end=3.3, method=R["method"], h=1e-5,
                      rtol=1e-8, dt_out=1e-5, record_from=3.0)
    t, T, F = r.t, r.T, r.F
    m = (t >= 3.0 - 1e-12) & (t <= 3.15 + 1e-12)
    got = {"max_rel_F_minus_T_over_T": np.max(np.abs((F[m] - T[m]) / T[m])),
           "T_min": T.min(), "T_max": T.max(), "u1_min": r.u1.min(), "u1_max": r.u1.max(),
           "u2_min": r.u2.min(), "u2_max": r.u2.max()}
    tol = TOL[R["method"]]
    for k, v in got.items():
        assert v == pytest.approx(R[k], rel=tol), k
    idx = [int(np.argmin(np.abs(t - s))) for s in R["samples_t"]]
    np.testing.assert_allclose(T[idx], R["samples_T"], rtol=tol)
    np.testing.assert_allclose(r.u2[idx], R["samples_u2"], rtol=10 * tol)
    if R["method"] == "projection":
        assert r.info["n_steps"] == R["n_steps"]


@pytest.mark.parametrize("i", range(5))
def test_fig21_points_reproduced(i):
    P = REF["fig21_points"][i]
    tol = TOL["projection" if P["model"] == "masing" else "rk45"]
    r = tension_amplitude(P["model"], P["f1"], P["omega"])
    assert r["T_amplitude"] == pytest.approx(P["T_amplitude"], rel=tol)
    if P["model"] == "masing":
        s = tension_amplitude(P["model"], P["f1"], P["omega"], steady_state=True)
        assert s["T_amplitude"] == pytest.approx(P["ss_T_amplitude"], rel=tol)
        if P["ss_t_stop"] is None:
            assert math.isnan(s["t_stop"])
        else:
            assert s["t_stop"] == pytest.approx(P["ss_t_stop"], rel=1e-12)
    else:
        # the modified Dahl steady-state stop now watches from t = 0 (the dedicated loop
        # watched from the window start, 17 s): it stops earlier, on another block, and
        # agrees with the recorded 20 s protocol within the documented tolerance
        s = tension_amplitude(P["model"], P["f1"], P["omega"], steady_state=True,
                              ss_tol=SS_DEFAULT["ss_tol"])
        assert s["t_stop"] < 17.0
        assert s["T_amplitude"] == pytest.approx(P["T_amplitude"], rel=SS_AGREEMENT)


# three runs of the belt rig (monolithic, co-simulation, model exchange), 17 s: slow;
# tests/test_fmu_cosim.py compares the FMU rig with the monolithic one by default
@pytest.mark.slow
def test_cosim_numbers_reproduced(tmp_path):
    from hystmech.fmu import cases

    C = REF["cosim"]
    mono = cases.rig_monolithic(t_end=0.06, record_from=0.03, rtol=1e-8)
    path = cases.tensioner_fmu(tmp_path / "t.fmu")
    cs = cases.rig_cosim(path, t_end=0.06, H=2e-5, record_from=0.03)
    me = cases.rig_model_exchange(path, t_end=0.06, record_from=0.03, rtol=1e-8)
    for name, run, tol in (("monolithic", mono, 1e-6), ("cosim", cs, 1e-9),
                           ("model_exchange", me, 1e-6)):
        for k in ("T_amplitude", "T_end", "u2_end"):
            got = run["T_amplitude"] if k == "T_amplitude" else \
                float(run["T" if k == "T_end" else "u2"][-1])
            assert got == pytest.approx(C[name][k], rel=tol, abs=1e-12), (name, k)
