"""
Cable cycled out of plane in PyElastica with hystmech hysteretic bending
========================================================================

Cable cycled out of plane in PyElastica with hystmech hysteretic bending (cable law of
Manfredo et al. 2023): loops, residual curvature, energy per cycle. Scenario
``elastica-cable-3d`` (Manfredo, Dörlich, Linn & Arnold (2023), eqs. (3), (7)-(16)
(moment law EI_el·K + κK − P[K], continuous Preisach)). It runs as ``hystmech run
elastica-cable-3d`` does and shows the figures it writes.
"""
import json
import tempfile
from pathlib import Path

from hystmech.scenario import run_scenario

run_dir = Path(tempfile.mkdtemp()) / "elastica-cable-3d"
res = run_scenario("elastica-cable-3d", out=run_dir, progress=lambda frac, msg: None)

# %%
# The metrics the run wrote into ``summary.json``:

print(json.dumps(res.summary, indent=1, default=str)[:3000])
