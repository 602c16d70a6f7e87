"""
MuJoCo arm with LuGre joint friction
====================================

MuJoCo arm with LuGre joint friction (hystmech plugin): stick-slip against hystmech's
Assembly. Scenario ``mujoco-lugre-joint`` (Canudas de Wit, Olsson, Åström & Lischinsky
(1995) stick-slip benchmark; LuGre as in Ikhouane, Mañosa & Pujol, eq. (1)). It runs as
``hystmech run mujoco-lugre-joint`` does and shows the figures it writes.

.. note:: The gallery runs a reduced version: 5 s of the 20 s run.
   ``HYSTMECH_GALLERY=full`` (or ``hystmech run mujoco-lugre-joint``) runs the
   scenario as published.
"""
import json
import os
import tempfile
from pathlib import Path

from hystmech.scenario import load_scenario, run_scenario

run_dir = Path(tempfile.mkdtemp()) / "mujoco-lugre-joint"
overrides = None
if os.environ.get("HYSTMECH_GALLERY") != "full":
    cfg = load_scenario("mujoco-lugre-joint")
    overrides = {"run": {**cfg.get("run", {}), **{'t_end': 5.0}}}
res = run_scenario("mujoco-lugre-joint", out=run_dir, overrides=overrides,
                   progress=lambda frac, msg: None)

# %%
# The metrics the run wrote into ``summary.json``:

print(json.dumps(res.summary, indent=1, default=str)[:3000])
