"""Entry point ``mujoco.plugins`` of the hystmech distribution: ``import mujoco`` calls
:func:`load`, which loads hystmech's MuJoCo plugin library (hystmech.plugins.mujoco_build)
when it has been built from the installed sources, so that MJCF and .mjb files with
``hystmech.<Law>`` plugins load in any Python process (MuJoCo crashes on an .mjb whose
plugins are not registered). A top-level module that imports nothing of hystmech, so
that ``import mujoco`` stays fast; it never compiles and never raises."""
import hashlib
import importlib.util
import json
import os


def install_key() -> str:
    """A short key of this hystmech installation (the path of its package), so that two
    installations (virtual environments, checkouts) sharing one plugin cache never load
    each other's build. find_spec does not import hystmech."""
    spec = importlib.util.find_spec("hystmech")
    origin = os.path.realpath(spec.origin) if spec is not None and spec.origin else ""
    return hashlib.sha1(origin.encode()).hexdigest()[:12]


def plugin_cache() -> str:
    """hystmech.plugins' cache folder ($HYSTMECH_PLUGIN_CACHE, default
    hystmech.paths.user_cache("plugins")), the rule repeated: this module imports no
    hystmech."""
    return os.environ.get("HYSTMECH_PLUGIN_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "hystmech", "plugins")


def built_library():
    """Path of the default build of the library if it was built from the installed
    sources (the record hystmech.plugins.mujoco_build writes), else None."""
    import mujoco

    d = os.environ.get("HYSTMECH_MUJOCO_PLUGIN_DIR")
    if d:
        lib = os.path.join(d, "libhystmech_mujoco.so")
        return lib if os.path.exists(lib) else None
    cache = plugin_cache()
    try:
        with open(os.path.join(cache, f"mujoco-{mujoco.__version__}-{install_key()}.json")) as f:
            rec = json.load(f)
        for path, mtime, size in rec["sources"]:
            st = os.stat(path)
            if st.st_mtime_ns != mtime or st.st_size != size:
                return None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return rec["library"] if os.path.exists(rec["library"]) else None


def load() -> None:
    """Load the library into MuJoCo if :func:`built_library` finds it."""
    try:
        import mujoco

        lib = built_library()
        if lib:
            mujoco.mj_loadPluginLibrary(lib)
    except Exception:  # noqa: BLE001 - must not break `import mujoco`
        pass
