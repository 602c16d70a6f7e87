"""
LuGre: y_gamma -> y*_u -> y°_u for a triangle input
===================================================

LuGre: y_gamma -> y*_u -> y°_u for a triangle input (Ikhouane, Mañosa & Pujol, Example
2, Figs. 7-9). Scenario ``lugre-example-2`` (Ikhouane, Mañosa & Pujol, Minor loops of
the Dahl and LuGre models, §4.2, eqs. (3)-(8)). It runs as ``hystmech run
lugre-example-2`` does and shows the figures it writes.
"""
import json
import tempfile
from pathlib import Path

from hystmech.scenario import run_scenario

run_dir = Path(tempfile.mkdtemp()) / "lugre-example-2"
res = run_scenario("lugre-example-2", out=run_dir, progress=lambda frac, msg: None)

# %%
# The metrics the run wrote into ``summary.json``:

print(json.dumps(res.summary, indent=1, default=str)[:3000])
