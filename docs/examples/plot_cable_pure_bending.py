"""
Cable pure bending
==================

Cable pure bending: uniform curvature cycled with the §5 protocol, Preisach moment law
(Manfredo et al. 2023). Scenario ``cable-pure-bending`` (Manfredo, Dörlich, Linn &
Arnold (2023), eqs. (3), (7)-(12), §5 (27 cycles, 9 levels, up to 31.4 1/m)). It runs as
``hystmech run cable-pure-bending`` does and shows the figures it writes.
"""
import json
import tempfile
from pathlib import Path

from hystmech.scenario import run_scenario

run_dir = Path(tempfile.mkdtemp()) / "cable-pure-bending"
res = run_scenario("cable-pure-bending", out=run_dir, progress=lambda frac, msg: None)

# %%
# The metrics the run wrote into ``summary.json``:

print(json.dumps(res.summary, indent=1, default=str)[:3000])
