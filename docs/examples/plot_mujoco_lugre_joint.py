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
   The CI build (``HYSTMECH_GALLERY=ci``) runs 2 s.
"""
import json
import tempfile
from pathlib import Path

from hystmech.gallery import scenario_overrides
from hystmech.scenario import run_scenario

run_dir = Path(tempfile.mkdtemp()) / "mujoco-lugre-joint"
# HYSTMECH_GALLERY: "full" runs the scenario as shipped, "reduced" (the default) and
# "ci" (what CI builds) smaller; see hystmech.gallery
overrides = scenario_overrides("mujoco-lugre-joint", reduced={'run': {'t_end': 5.0}}, ci={'run': {'t_end': 2.0}})
res = run_scenario("mujoco-lugre-joint", out=run_dir, overrides=overrides,
                   progress=lambda frac, msg: None)

# %%
# The metrics the run wrote into ``summary.json``:

print(json.dumps(res.summary, indent=1, default=str)[:3000])
