"""
Belt–tensioner rig with the modified Dahl tensioner as an FMU
=============================================================

Belt–tensioner rig with the modified Dahl tensioner as an FMU: co-simulation and model
exchange vs monolithic. Scenario ``belt-tensioner-cosim`` (Bastien, Michon, Manin &
Dufour (2007), §4, eqs. (33)-(35), (38), (51); FMI 2.0). It runs as ``hystmech run
belt-tensioner-cosim`` does and shows the figures it writes.
"""
import json
import tempfile
from pathlib import Path

from hystmech.scenario import run_scenario

run_dir = Path(tempfile.mkdtemp()) / "belt-tensioner-cosim"
res = run_scenario("belt-tensioner-cosim", out=run_dir, progress=lambda frac, msg: None)

# %%
# The metrics the run wrote into ``summary.json``:

print(json.dumps(res.summary, indent=1, default=str)[:3000])
