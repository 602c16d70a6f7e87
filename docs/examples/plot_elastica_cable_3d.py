"""
Cable cycled out of plane in PyElastica with hystmech hysteretic bending
========================================================================

Cable cycled out of plane in PyElastica with hystmech hysteretic bending (cable law of
Manfredo et al. 2023): loops, residual curvature, energy per cycle. Scenario ``elastica-
cable-3d`` (Manfredo, Dörlich, Linn & Arnold (2023), eqs. (3), (7)-(16) (moment law
EI_el·K + κK − P[K], continuous Preisach)). It runs as ``hystmech run elastica-
cable-3d`` does and shows the figures it writes.

.. note:: The gallery runs a reduced version: one out-of-plane cycle instead of two.
   ``HYSTMECH_GALLERY=full`` (or ``hystmech run elastica-cable-3d``) runs the
   scenario as published.
"""
import json
import os
import tempfile
from pathlib import Path

from hystmech.scenario import load_scenario, run_scenario

run_dir = Path(tempfile.mkdtemp()) / "elastica-cable-3d"
overrides = None
if os.environ.get("HYSTMECH_GALLERY") != "full":
    cfg = load_scenario("elastica-cable-3d")
    overrides = {"load": {**cfg.get("load", {}), **{'cycles': 1}}}
res = run_scenario("elastica-cable-3d", out=run_dir, overrides=overrides,
                   progress=lambda frac, msg: None)

# %%
# The metrics the run wrote into ``summary.json``:

print(json.dumps(res.summary, indent=1, default=str)[:3000])
