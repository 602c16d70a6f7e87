import os

import matplotlib
import pytest
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


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Under ``pytest -n 2 --dist loadgroup`` (the README's command) the tests of a file
    that use a module- or session-scoped fixture of that file run on one worker: split
    over two workers, each would build the fixture (an FMU export, a continuation, a
    compiled structure), twice the work. Tests of files that share a compiled structure
    without a fixture say so with their own ``xdist_group`` mark. Runs before xdist's
    own hook, which reads the marks."""
    for item in items:
        if item.get_closest_marker("xdist_group"):
            continue
        info = getattr(item, "_fixtureinfo", None)
        module = item.nodeid.split("::", 1)[0]
        for defs in (info.name2fixturedefs.values() if info else ()):
            d = defs[-1]
            if d.scope in ("module", "package", "session") and d.baseid == module:
                item.add_marker(pytest.mark.xdist_group(module))
                break

