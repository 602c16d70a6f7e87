"""Every cache of hystmech defaults to one root, $XDG_CACHE_HOME/hystmech (docs/installation.md,
"Where things are kept"), and each has its own override."""
import os

import pytest

import hystmech_mujoco_entry
from hystmech.fmu.export import _cache_dir as fmu_cache
from hystmech.plugins._build import cache_dir as plugin_cache
from hystmech.systems.compile_cache import cache_dir as code_cache

_OVERRIDES = ("HYSTMECH_CACHE", "HYSTMECH_FMU_CACHE", "HYSTMECH_PLUGIN_CACHE")


@pytest.fixture
def clean_env(monkeypatch):
    for k in _OVERRIDES:
        monkeypatch.delenv(k, raising=False)
    return monkeypatch


def test_every_cache_is_under_xdg_cache_home(clean_env, tmp_path):
    clean_env.setenv("XDG_CACHE_HOME", str(tmp_path))
    root = tmp_path / "hystmech"
    assert code_cache() == root / "numba"
    assert fmu_cache() == root / "fmu"
    assert plugin_cache() == root / "plugins"
    # the mujoco entry point (imports no hystmech) finds the same plugin folder
    assert hystmech_mujoco_entry.plugin_cache() == str(root / "plugins")


def test_home_cache_when_xdg_is_unset_or_empty(clean_env, tmp_path):
    clean_env.setenv("HOME", str(tmp_path))
    for xdg in (None, ""):
        if xdg is None:
            clean_env.delenv("XDG_CACHE_HOME", raising=False)
        else:
            clean_env.setenv("XDG_CACHE_HOME", xdg)
        assert fmu_cache() == tmp_path / ".cache" / "hystmech" / "fmu"
        assert hystmech_mujoco_entry.plugin_cache() == os.path.join(
            str(tmp_path), ".cache", "hystmech", "plugins")


def test_overrides_win(clean_env, tmp_path):
    clean_env.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    clean_env.setenv("HYSTMECH_FMU_CACHE", str(tmp_path / "f"))
    clean_env.setenv("HYSTMECH_PLUGIN_CACHE", str(tmp_path / "p"))
    assert fmu_cache() == tmp_path / "f"
    assert plugin_cache() == tmp_path / "p"
    assert hystmech_mujoco_entry.plugin_cache() == str(tmp_path / "p")
