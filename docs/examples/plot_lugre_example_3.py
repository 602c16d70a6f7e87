"""
LuGre: convergence to the hysteresis loop with a minor loop
===========================================================

LuGre: convergence to the hysteresis loop with a minor loop (Ikhouane, Mañosa & Pujol,
Example 3, Figs. 11-13). Scenario ``lugre-example-3`` (Ikhouane, Mañosa & Pujol, Minor
loops of the Dahl and LuGre models, §4.3). It runs as ``hystmech run lugre-example-3``
does and shows the figures it writes.
"""
import json
import tempfile
from pathlib import Path

from hystmech.scenario import run_scenario

run_dir = Path(tempfile.mkdtemp()) / "lugre-example-3"
res = run_scenario("lugre-example-3", out=run_dir, progress=lambda frac, msg: None)

# %%
# The metrics the run wrote into ``summary.json``:

print(json.dumps(res.summary, indent=1, default=str)[:3000])
