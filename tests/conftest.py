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
