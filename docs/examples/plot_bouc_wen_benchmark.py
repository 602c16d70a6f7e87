"""
Bouc-Wen hysteretic benchmark
=============================

Bouc-Wen hysteretic benchmark (Noël & Schoukens): sine-sweep and multisine responses,
loop z(y), spectrum. Scenario ``bouc-wen-benchmark`` (J.P. Noël & M. Schoukens,
Hysteretic benchmark with a dynamic nonlinearity (2016); hardening Bouc-Wen,
components/bouc_wen.py). It runs as ``hystmech run bouc-wen-benchmark`` does and shows
the figures it writes.

.. note:: The gallery runs a reduced version: the test sine sweep stops at 26 Hz
   instead of 50 Hz (36 s of the 180 s sweep). ``HYSTMECH_GALLERY=full`` (or
   ``hystmech run bouc-wen-benchmark``) runs the scenario as published.
   The CI build (``HYSTMECH_GALLERY=ci``) sweeps 20-22 Hz and uses 2048-sample multisines.
"""
import json
import tempfile
from pathlib import Path

from hystmech.gallery import scenario_overrides
from hystmech.scenario import run_scenario

run_dir = Path(tempfile.mkdtemp()) / "bouc-wen-benchmark"
# HYSTMECH_GALLERY: "full" runs the scenario as shipped, "reduced" (the default) and
# "ci" (what CI builds) smaller; see hystmech.gallery
overrides = scenario_overrides("bouc-wen-benchmark", reduced={'signals': {'f1': 26.0}}, ci={'signals': {'f1': 22.0, 'N': 2048}})
res = run_scenario("bouc-wen-benchmark", out=run_dir, overrides=overrides,
                   progress=lambda frac, msg: None)

# %%
# The metrics the run wrote into ``summary.json``:

print(json.dumps(res.summary, indent=1, default=str)[:3000])
