"""Where hystmech keeps files between runs: one root for every cache.

The generated-code cache (:mod:`hystmech.systems.compile_cache`), the built FMU binaries
(:mod:`hystmech.fmu.export`) and the engine plugin libraries (:mod:`hystmech.plugins`)
live under ``$XDG_CACHE_HOME/hystmech`` (default ``~/.cache/hystmech``), as pip's and
numba's caches do, each with an environment variable of its own that overrides it. The
``mujoco.plugins`` entry point (``hystmech_mujoco_entry.py``, which must not import
hystmech) repeats this rule for the plugin folder.
"""
from __future__ import annotations

import os
from pathlib import Path


def user_cache(*parts: str) -> Path:
    """``$XDG_CACHE_HOME/hystmech/<parts>`` (``~/.cache`` when XDG_CACHE_HOME is unset
    or empty): the default folder of one cache."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base, "hystmech", *parts)
