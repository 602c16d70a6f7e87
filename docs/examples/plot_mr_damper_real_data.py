"""
MR damper on measured data (Dyke 1996): fit and validation
==========================================================

MR damper (Dyke 1996 data): viscous + Dahl and Bouc-Wen, voltage-dependent, fitted on
ranran_50, validated on ransim_u. Scenario ``mr-damper-real-data`` (A modified viscous +
Dahl model for large-scale MR dampers (Ikhouane group), §3-4; data: Dyke (1996),
NEES-2012-1158). It runs as ``hystmech run mr-damper-real-data`` does and shows the
figures it writes.

.. note:: The CI build (``HYSTMECH_GALLERY=ci``) fits Bouc-Wen from one start on every 6th sample.
"""
import json
import tempfile
from pathlib import Path

from hystmech.gallery import scenario_overrides
from hystmech.scenario import run_scenario

run_dir = Path(tempfile.mkdtemp()) / "mr-damper-real-data"
# HYSTMECH_GALLERY: "full" runs the scenario as shipped, "reduced" (the default) and
# "ci" (what CI builds) smaller; see hystmech.gallery
overrides = scenario_overrides("mr-damper-real-data", ci={'data': {'n_starts': 1, 'decimate_bouc_wen': 6}})
res = run_scenario("mr-damper-real-data", out=run_dir, overrides=overrides,
                   progress=lambda frac, msg: None)

# %%
# The metrics the run wrote into ``summary.json``:

print(json.dumps(res.summary, indent=1, default=str)[:3000])
