"""
Belt–tensioner–mass rig, Masing tensioner with viscous damping
==============================================================

Belt–tensioner–mass rig, Masing tensioner with viscous damping (Bastien et al. 2007,
Figs. 17–20). Scenario ``belt-tensioner-masing`` (Bastien, Michon, Manin & Dufour
(2007), J. Sound Vib. 302, §4.1–4.3, eqs. (38)-(58)). It runs as ``hystmech run
belt-tensioner-masing`` does and shows the figures it writes.
"""
import json
import tempfile
from pathlib import Path

from hystmech.scenario import run_scenario

run_dir = Path(tempfile.mkdtemp()) / "belt-tensioner-masing"
res = run_scenario("belt-tensioner-masing", out=run_dir, progress=lambda frac, msg: None)

# %%
# The metrics the run wrote into ``summary.json``:

print(json.dumps(res.summary, indent=1, default=str)[:3000])
