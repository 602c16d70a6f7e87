"""
Modified Maxwell-slip: asperity loops and non-local memory
==========================================================

Modified Maxwell-slip: asperity loops and the 5-asperity non-local memory loop
(Jankowski et al. (2017), Figs. 2-5). Scenario ``maxwell-slip-loops`` (Jankowski,
Marszał & Stefański (2017), Tribol. Lett. 65:56, eqs. (1)-(8); parameter set of
REFERENCE.md). It runs as ``hystmech run maxwell-slip-loops`` does and shows the figures
it writes.
"""
import json
import tempfile
from pathlib import Path

from hystmech.scenario import run_scenario

run_dir = Path(tempfile.mkdtemp()) / "maxwell-slip-loops"
res = run_scenario("maxwell-slip-loops", out=run_dir, progress=lambda frac, msg: None)

# %%
# The metrics the run wrote into ``summary.json``:

print(json.dumps(res.summary, indent=1, default=str)[:3000])
