"""
Belt–tensioner rig in Exudyn with the hystmech tensioner
========================================================

Belt–tensioner rig in Exudyn with the hystmech tensioner (trial/commit, RK44) against
hystmech's own rig. Scenario ``exudyn-belt-tensioner`` (Bastien, Michon, Manin & Dufour
(2007), eqs. (38)-(51), (53), identified tensioners eqs. (33)-(36)). It runs as
``hystmech run exudyn-belt-tensioner`` does and shows the figures it writes.
"""
import json
import tempfile
from pathlib import Path

from hystmech.scenario import run_scenario

run_dir = Path(tempfile.mkdtemp()) / "exudyn-belt-tensioner"
res = run_scenario("exudyn-belt-tensioner", out=run_dir, progress=lambda frac, msg: None)

# %%
# The metrics the run wrote into ``summary.json``:

print(json.dumps(res.summary, indent=1, default=str)[:3000])
