import os

import matplotlib
from hypothesis import settings

matplotlib.use("Agg")

# Property tests draw their examples from a fixed seed by default, so that a run of the
# suite is reproducible (CI must not turn red on a new random draw); set
# HYPOTHESIS_PROFILE=explore to search with fresh random examples.
settings.register_profile("ci", derandomize=True, deadline=None, database=None)
settings.register_profile("explore", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# Exported FMUs carry the linux64 binary only unless a test asks for more
# (export_fmu(platforms=...)): cross-building win64/darwin/aarch64 binaries with zig
# costs seconds per FMU, and only tests/test_fmu_platforms.py needs them.
os.environ.setdefault("HYSTMECH_FMU_PLATFORMS", "native")

# `hystmech run` compiles a model's sample evaluation in a second process on a fresh
# cache (systems/compile_cache.py: prefetch); the suite already keeps both cores busy
os.environ.setdefault("HYSTMECH_PREFETCH", "0")
