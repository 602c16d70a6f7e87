"""
Hysteresis loop as the slow-input limit: Dahl model + first-order filter
========================================================================

Hysteresis loop as the slow-input limit: Dahl model + first-order filter (Ikhouane,
Mañosa & Pujol, Example 1, Fig. 4). Scenario ``lugre-example-1`` (Ikhouane, Mañosa &
Pujol, Minor loops of the Dahl and LuGre models, §4.1, eq. (16)). It runs as ``hystmech
run lugre-example-1`` does and shows the figures it writes.
"""
import json
import tempfile
from pathlib import Path

from hystmech.scenario import run_scenario

run_dir = Path(tempfile.mkdtemp()) / "lugre-example-1"
res = run_scenario("lugre-example-1", out=run_dir, progress=lambda frac, msg: None)

# %%
# The metrics the run wrote into ``summary.json``:

print(json.dumps(res.summary, indent=1, default=str)[:3000])
