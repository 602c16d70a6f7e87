"""Record the belt–tensioner rig results of the dedicated loops (systems/belt_tensioner.py
as of commit 05f8a1f, before issue 10 moved the rig onto the generic Assembly path) into
belt_reference.json. Run once with that old code: ``python tests/data/record_belt_reference.py``.
tests/test_rig_reference.py checks that the generic path reproduces these numbers."""
import json
import math
from pathlib import Path

import numpy as np

from hystmech.systems.rigs.belt_tensioner import paper_tensioner, simulate_belt
from hystmech.systems.periodic.sweep import tension_amplitude

out = {"produced_by": "tests/data/record_belt_reference.py on the dedicated loops of "
                      "systems/belt_tensioner.py at commit 05f8a1f"}

# Figs. 17-20 (scenarios belt-tensioner-mdm / -masing): metrics over [3.0, 3.15] s,
# extremes over the plot window [3.0, 3.3] s, and T, u2 at a few times
figs = {}
for model, method in (("masing", "projection"), ("mdm", "rk45")):
    el = paper_tensioner(model)
    r = simulate_belt(el, t_end=3.3, method=method, h=1e-5, rtol=1e-8, dt_out=1e-5,
                      record_from=3.0)
    t, T, F = r.t, r.T, r.F
    m = (t >= 3.0 - 1e-12) & (t <= 3.15 + 1e-12)
    idx = [int(np.argmin(np.abs(t - s))) for s in (3.0, 3.1, 3.2, 3.3)]
    figs[model] = {
        "method": method,
        "max_rel_F_minus_T_over_T": float(np.max(np.abs((F[m] - T[m]) / T[m]))),
        "T_min": float(T.min()), "T_max": float(T.max()),
        "u1_min": float(r.u1.min()), "u1_max": float(r.u1.max()),
        "u2_min": float(r.u2.min()), "u2_max": float(r.u2.max()),
        "samples_t": [float(t[i]) for i in idx], "samples_T": [float(T[i]) for i in idx],
        "samples_u2": [float(r.u2[i]) for i in idx],
        "n_steps": int(r.info["n_steps"]),
    }
out["figs17_20"] = figs

# a handful of Fig. 21 points (t_window [17, 20] s, f0 = phi = 0, c0 by eq. (31))
pts = []
for model, f1, om in (("masing", 13.0, 30.0), ("masing", 120.0, 73.15), ("masing", 300.0, 110.0),
                      ("mdm", 67.0, 50.0), ("mdm", 200.0, 90.0)):
    r = tension_amplitude(model, f1, om)
    pts.append({"model": model, "f1": f1, "omega": om, "T_amplitude": r["T_amplitude"]})
    # steady-state stopped variant (the sweep's ss mode)
    s = tension_amplitude(model, f1, om, steady_state=True)
    pts[-1].update(ss_T_amplitude=s["T_amplitude"],
                   ss_t_stop=s["t_stop"] if math.isfinite(s["t_stop"]) else None)
out["fig21_points"] = pts

# belt-tensioner-cosim: monolithic reference (rk45) and the co-simulation FMU in the
# projection loop, short run as in tests/test_fmu_cosim.py
from hystmech.fmu import cases  # noqa: E402
import tempfile  # noqa: E402

mono = cases.rig_monolithic(t_end=0.06, record_from=0.03, rtol=1e-8)
with tempfile.TemporaryDirectory() as d:
    path = cases.tensioner_fmu(Path(d) / "t.fmu")
    cs = cases.rig_cosim(path, t_end=0.06, H=2e-5, record_from=0.03)
    me = cases.rig_model_exchange(path, t_end=0.06, record_from=0.03, rtol=1e-8)
out["cosim"] = {k: {"T_amplitude": v["T_amplitude"], "T_end": float(v["T"][-1]),
                    "u2_end": float(v["u2"][-1]), "t_end": float(v["t"][-1])}
                for k, v in (("monolithic", mono), ("cosim", cs), ("model_exchange", me))}
Path(__file__).with_name("belt_reference.json").write_text(json.dumps(out, indent=1))
print(json.dumps(out, indent=1))
