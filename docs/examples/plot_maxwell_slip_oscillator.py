"""
SDOF oscillator with 5-asperity modified Maxwell-slip friction
==============================================================

SDOF oscillator with 5-asperity modified Maxwell-slip friction: free decay and forced
response. Scenario ``maxwell-slip-oscillator`` (Jankowski, Marszał & Stefański (2017),
eqs. (1)-(7); Bastien et al. (2007), eqs. (A.7)-(A.9)). It runs as ``hystmech run
maxwell-slip-oscillator`` does and shows the figures it writes.

.. note:: The CI build (``HYSTMECH_GALLERY=ci``) steps the projection scheme with h = 5e-6 s.
"""
import json
import tempfile
from pathlib import Path

from hystmech.gallery import scenario_overrides
from hystmech.scenario import run_scenario

run_dir = Path(tempfile.mkdtemp()) / "maxwell-slip-oscillator"
# HYSTMECH_GALLERY: "full" runs the scenario as shipped, "reduced" (the default) and
# "ci" (what CI builds) smaller; see hystmech.gallery
overrides = scenario_overrides("maxwell-slip-oscillator", ci={'solver': {'h': 5e-06}})
res = run_scenario("maxwell-slip-oscillator", out=run_dir, overrides=overrides,
                   progress=lambda frac, msg: None)

# %%
# The metrics the run wrote into ``summary.json``:

print(json.dumps(res.summary, indent=1, default=str)[:3000])
