"""
Masing model with viscous damping
=================================

Masing model with viscous damping: parallelogram, damped loop and dry skeleton (Bastien
et al. (2007), Figs. 5-6, 10, 12(b)). Scenario ``masing-loop`` (Bastien, Michon, Manin &
Dufour (2007), J. Sound Vib. 302, eqs. (11), (21)-(31), (36)). It runs as ``hystmech run
masing-loop`` does and shows the figures it writes.
"""
import json
import tempfile
from pathlib import Path

from hystmech.scenario import run_scenario

run_dir = Path(tempfile.mkdtemp()) / "masing-loop"
res = run_scenario("masing-loop", out=run_dir, progress=lambda frac, msg: None)

# %%
# The metrics the run wrote into ``summary.json``:

print(json.dumps(res.summary, indent=1, default=str)[:3000])
