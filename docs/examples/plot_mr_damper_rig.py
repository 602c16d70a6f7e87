"""
MR-damper rig: piston on a wave-periodic displacement
=====================================================

MR-damper rig: piston driven along the wave-periodic displacement, asymmetric viscous +
Dahl damper. Scenario ``mr-damper-rig`` (A modified viscous + Dahl model for large-scale
MR dampers (Ikhouane group), eq. (1), §5-7, Figs. 6, 7, 11). It runs as ``hystmech run
mr-damper-rig`` does and shows the figures it writes.

.. note:: The CI build (``HYSTMECH_GALLERY=ci``) runs 2 wave periods (the last one analysed).
"""
import json
import tempfile
from pathlib import Path

from hystmech.gallery import scenario_overrides
from hystmech.scenario import run_scenario

run_dir = Path(tempfile.mkdtemp()) / "mr-damper-rig"
# HYSTMECH_GALLERY: "full" runs the scenario as shipped, "reduced" (the default) and
# "ci" (what CI builds) smaller; see hystmech.gallery
overrides = scenario_overrides("mr-damper-rig", ci={'sampling': {'periods': 2}})
res = run_scenario("mr-damper-rig", out=run_dir, overrides=overrides,
                   progress=lambda frac, msg: None)

# %%
# The metrics the run wrote into ``summary.json``:

print(json.dumps(res.summary, indent=1, default=str)[:3000])
