"""
Cable cycled out of plane in PyElastica with hystmech hysteretic bending
========================================================================

Cable cycled out of plane in PyElastica with hystmech hysteretic bending (cable law of
Manfredo et al. 2023): loops, residual curvature, energy per cycle. Scenario
``elastica-cable-3d`` (Manfredo, Dörlich, Linn & Arnold (2023), eqs. (3), (7)-(16)
(moment law EI_el·K + κK − P[K], continuous Preisach)). It runs as ``hystmech run
elastica-cable-3d`` does and shows the figures it writes.

.. note:: The CI build (``HYSTMECH_GALLERY=ci``) runs 3 load cycles after a 2 s ramp and a 1 s hold.
"""
import json
import tempfile
from pathlib import Path

from hystmech.gallery import scenario_overrides
from hystmech.scenario import run_scenario

run_dir = Path(tempfile.mkdtemp()) / "elastica-cable-3d"
# HYSTMECH_GALLERY: "full" runs the scenario as shipped, "reduced" (the default) and
# "ci" (what CI builds) smaller; see hystmech.gallery
overrides = scenario_overrides("elastica-cable-3d", ci={'load': {'cycles': 3, 'ramp': 2.0, 'hold': 1.0, 'settle': 1.0}})
res = run_scenario("elastica-cable-3d", out=run_dir, overrides=overrides,
                   progress=lambda frac, msg: None)

# %%
# The metrics the run wrote into ``summary.json``:

print(json.dumps(res.summary, indent=1, default=str)[:3000])
