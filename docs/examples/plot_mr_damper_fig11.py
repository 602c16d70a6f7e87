"""
Asymmetric viscous + Dahl MR damper: w-loop against eqs. (16)-(18)
==================================================================

Asymmetric viscous + Dahl MR damper: w-loop vs eqs. (16)-(18) (viscous + Dahl paper,
Fig. 11). Scenario ``mr-damper-fig11`` (A modified viscous + Dahl model for large-scale
MR dampers, eqs. (16)-(19), (27)-(35), Fig. 11). It runs as ``hystmech run
mr-damper-fig11`` does and shows the figures it writes.
"""
import json
import tempfile
from pathlib import Path

from hystmech.scenario import run_scenario

run_dir = Path(tempfile.mkdtemp()) / "mr-damper-fig11"
res = run_scenario("mr-damper-fig11", out=run_dir, progress=lambda frac, msg: None)

# %%
# The metrics the run wrote into ``summary.json``:

print(json.dumps(res.summary, indent=1, default=str)[:3000])
