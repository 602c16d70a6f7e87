"""
Belt–tensioner rig frequency response: tension amplitude against Ω
==================================================================

Belt–tensioner rig frequency response: tension amplitude against Ω (Bastien et al. 2007,
Fig. 21). Scenario ``belt-tensioner-frf`` (Bastien, Michon, Manin & Dufour (2007), J.
Sound Vib. 302, §4.4, eqs. (59)-(60)). It runs as ``hystmech run belt-tensioner-frf``
does and shows the figures it writes.

.. note:: The gallery runs a reduced version: the full 2 x 16 x 116 grid (3712 runs,
   about 35 s on 2 idle cores) is reduced to the scenario's quick look, 2 x 5 x 24
   points. ``HYSTMECH_GALLERY=full`` (or ``hystmech run belt-tensioner-frf``) runs
   the scenario as published.
"""
import json
import os
import tempfile
from pathlib import Path

from hystmech.scenario import load_scenario, run_scenario

run_dir = Path(tempfile.mkdtemp()) / "belt-tensioner-frf"
overrides = None
if os.environ.get("HYSTMECH_GALLERY") != "full":
    cfg = load_scenario("belt-tensioner-frf")
    overrides = {"grid": {**cfg.get("grid", {}), "reduced": True}}
res = run_scenario("belt-tensioner-frf", out=run_dir, overrides=overrides,
                   progress=lambda frac, msg: None)

# %%
# The metrics the run wrote into ``summary.json``:

print(json.dumps(res.summary, indent=1, default=str)[:3000])
