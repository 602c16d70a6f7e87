"""
Cable cantilever under a cyclic tip load
========================================

Cable cantilever under a cyclic tip load: finite bending with a Preisach moment law.
Scenario ``cable-cantilever-cyclic`` (Manfredo, Dörlich, Linn & Arnold (2023), eqs.
(1)-(3), (7)-(16), §6 (plane quasistatic finite bending)). It runs as ``hystmech run
cable-cantilever-cyclic`` does and shows the figures it writes.

.. note:: The CI build (``HYSTMECH_GALLERY=ci``) uses 20 segments and 10 load steps per quarter cycle.
"""
import json
import tempfile
from pathlib import Path

from hystmech.gallery import scenario_overrides
from hystmech.scenario import run_scenario

run_dir = Path(tempfile.mkdtemp()) / "cable-cantilever-cyclic"
# HYSTMECH_GALLERY: "full" runs the scenario as shipped, "reduced" (the default) and
# "ci" (what CI builds) smaller; see hystmech.gallery
overrides = scenario_overrides("cable-cantilever-cyclic", ci={'rod': {'N': 20}, 'load': {'steps_per_quarter': 10}})
res = run_scenario("cable-cantilever-cyclic", out=run_dir, overrides=overrides,
                   progress=lambda frac, msg: None)

# %%
# The metrics the run wrote into ``summary.json``:

print(json.dumps(res.summary, indent=1, default=str)[:3000])
