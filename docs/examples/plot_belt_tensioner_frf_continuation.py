"""
Belt–tensioner FRF by continuation
==================================

Belt–tensioner FRF by continuation: stable/unstable branches and jump frequencies
(Bastien et al. 2007, Fig. 21). Scenario ``belt-tensioner-frf-continuation`` (Bastien,
Michon, Manin & Dufour (2007), J. Sound Vib. 302, §4.4, eqs. (59)-(60), Fig. 21). It
runs as ``hystmech run belt-tensioner-frf-continuation`` does and shows the figures it
writes.

.. note:: The gallery runs a reduced version: the branches at two force levels (13 and
   120 N) instead of six, over the reduced brute-force grid, and without the fold
   curve of the bistable region (``[fold_curves]`` starts from the 320 N branch,
   which takes the longest). ``HYSTMECH_GALLERY=full`` (or ``hystmech run
   belt-tensioner-frf-continuation``) runs the scenario as published.
"""
import json
import os
import tempfile
from pathlib import Path

from hystmech.scenario import load_scenario, run_scenario

run_dir = Path(tempfile.mkdtemp()) / "belt-tensioner-frf-continuation"
overrides = None
if os.environ.get("HYSTMECH_GALLERY") != "full":
    cfg = load_scenario("belt-tensioner-frf-continuation")
    # (the fold curve needs the 320 N branch: it goes with it, not left pointing at it)
    overrides = {"branches": {**cfg.get("branches", {}), "f1": [13.0, 120.0]},
                 "fold_curves": {}}
res = run_scenario("belt-tensioner-frf-continuation", out=run_dir, overrides=overrides,
                   progress=lambda frac, msg: None)

# %%
# The metrics the run wrote into ``summary.json``:

print(json.dumps(res.summary, indent=1, default=str)[:3000])
