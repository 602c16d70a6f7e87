"""
Belt–tensioner rig with the modified Dahl tensioner as an FMU
=============================================================

Belt–tensioner rig with the modified Dahl tensioner as an FMU: co-simulation and model
exchange vs monolithic. Scenario ``belt-tensioner-cosim`` (Bastien, Michon, Manin &
Dufour (2007), §4, eqs. (33)-(35), (38), (51); FMI 2.0). It runs as ``hystmech run
belt-tensioner-cosim`` does and shows the figures it writes.

.. note:: The CI build (``HYSTMECH_GALLERY=ci``) simulates 0.6 s (window from 0.3 s).
"""
import json
import tempfile
from pathlib import Path

from hystmech.gallery import scenario_overrides
from hystmech.scenario import run_scenario

run_dir = Path(tempfile.mkdtemp()) / "belt-tensioner-cosim"
# HYSTMECH_GALLERY: "full" runs the scenario as shipped, "reduced" (the default) and
# "ci" (what CI builds) smaller; see hystmech.gallery
overrides = scenario_overrides("belt-tensioner-cosim", ci={'simulation': {'t_end': 0.6, 'window': 0.3}})
res = run_scenario("belt-tensioner-cosim", out=run_dir, overrides=overrides,
                   progress=lambda frac, msg: None)

# %%
# The metrics the run wrote into ``summary.json``:

print(json.dumps(res.summary, indent=1, default=str)[:3000])
