"""
LuGre hysteresis loop with a minor loop
=======================================

LuGre hysteresis loop with a minor loop (Ikhouane, Mañosa & Pujol, Example 4, Figs.
14-17). Scenario ``lugre-example-4`` (Ikhouane, Mañosa & Pujol, Minor loops of the Dahl
and LuGre models, §4.4, Theorem A). It runs as ``hystmech run lugre-example-4`` does and
shows the figures it writes.
"""
import json
import tempfile
from pathlib import Path

from hystmech.scenario import run_scenario

run_dir = Path(tempfile.mkdtemp()) / "lugre-example-4"
res = run_scenario("lugre-example-4", out=run_dir, progress=lambda frac, msg: None)

# %%
# The metrics the run wrote into ``summary.json``:

print(json.dumps(res.summary, indent=1, default=str)[:3000])
