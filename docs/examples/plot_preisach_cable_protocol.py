"""
Preisach moment law under the 27-cycle, 9-level cable bending protocol
======================================================================

Preisach moment law under the 27-cycle, 9-level cable bending protocol (Manfredo et al.
(2023), §5, Figs. 5, 7). Scenario ``preisach-cable-protocol`` (Manfredo, Dörlich, Linn &
Arnold (2023), eqs. (7)-(14), §5). It runs as ``hystmech run preisach-cable-protocol``
does and shows the figures it writes.
"""
import json
import tempfile
from pathlib import Path

from hystmech.scenario import run_scenario

run_dir = Path(tempfile.mkdtemp()) / "preisach-cable-protocol"
res = run_scenario("preisach-cable-protocol", out=run_dir, progress=lambda frac, msg: None)

# %%
# The metrics the run wrote into ``summary.json``:

print(json.dumps(res.summary, indent=1, default=str)[:3000])
