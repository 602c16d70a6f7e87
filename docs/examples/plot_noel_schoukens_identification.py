"""
Noël–Schoukens benchmark identified by output error
===================================================

The Bouc-Wen hysteretic benchmark (J.P. Noël & M. Schoukens, 2016) identified as a
structure — force in, displacement out — from its training multisine alone: mass,
damping, stiffness and the Bouc-Wen parameters by output-error least squares with exact
forward sensitivities (``hystmech.identify.assembly``), scored on the test multisine and
the sine sweep, with 95 % intervals (``hystmech.identify.uncertainty``). Scenario
``noel-schoukens-identification``; it runs as ``hystmech run
noel-schoukens-identification`` does and shows the figure it writes.

.. note:: The gallery runs a reduced version: the fit uses the first 4 of the 10
   training periods (the CI build, ``HYSTMECH_GALLERY=ci``, 2). ``HYSTMECH_GALLERY=full``
   (or ``hystmech run noel-schoukens-identification``) fits on all 10, about 35 s of CPU.
"""
import json
import tempfile
from pathlib import Path

from hystmech.gallery import scenario_overrides
from hystmech.scenario import run_scenario

run_dir = Path(tempfile.mkdtemp()) / "noel-schoukens-identification"
# HYSTMECH_GALLERY: "full" runs the scenario as shipped, "reduced" (the default) and
# "ci" (what CI builds) smaller; see hystmech.gallery
overrides = scenario_overrides("noel-schoukens-identification",
                               reduced={"fit": {"periods": 4}}, ci={"fit": {"periods": 2}})
res = run_scenario("noel-schoukens-identification", out=run_dir, overrides=overrides,
                   progress=lambda frac, msg: None)

# %%
# Test RMSEs (the output noise is 8e-6 m) and the fitted parameters with their 95 %
# intervals, as the run wrote them into ``summary.json``:

print(json.dumps(res.summary["metrics"], indent=1))
for p in res.summary["parameters"]:
    print(f"{p['name']:>16}: true {p['true']:.6g}, fitted {p['fitted']:.6g} "
          f"[{p['lo']:.6g}, {p['hi']:.6g}]")
