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
"""
import json
import os
import tempfile
from pathlib import Path

from hystmech.scenario import load_scenario, run_scenario

run_dir = Path(tempfile.mkdtemp()) / "bouc-wen-benchmark"
overrides = None
if os.environ.get("HYSTMECH_GALLERY") != "full":
    cfg = load_scenario("bouc-wen-benchmark")
    overrides = {"signals": {**cfg.get("signals", {}), **{'f1': 26.0}}}
res = run_scenario("bouc-wen-benchmark", out=run_dir, overrides=overrides,
                   progress=lambda frac, msg: None)

# %%
# The metrics the run wrote into ``summary.json``:

print(json.dumps(res.summary, indent=1, default=str)[:3000])
