"""Importing an engine (a clear error naming the extra when it is missing) and building
the engines' native plugin libraries with the system C compiler, cached on disk by
content (sources, flags, engine version)."""
from __future__ import annotations

import ctypes
import fcntl
import hashlib
import importlib
import os
import subprocess
import threading
from pathlib import Path

from ..paths import user_cache

HERE = Path(__file__).resolve().parent

# engine module -> (extra that installs it, pip name)
EXTRAS = {"mujoco": ("mujoco", "mujoco"), "exudyn": ("exudyn", "exudyn"),
          "elastica": ("elastica", "pyelastica")}


class PluginBuildError(RuntimeError):
    """A plugin library that could not be compiled or loaded (message names the cause)."""


def engine(module: str):
    """Import a multibody engine, or raise ImportError naming the hystmech extra."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        extra, pipname = EXTRAS[module]
        raise ImportError(f"hystmech.plugins.{module if module != 'elastica' else 'elastica'} "
                          f"needs the {pipname!r} package: pip install 'hystmech[{extra}]' "
                          f"({e})") from None


def cache_dir() -> Path:
    """Where built plugin libraries are kept ($HYSTMECH_PLUGIN_CACHE, default
    ``$XDG_CACHE_HOME/hystmech/plugins``, see ``hystmech.paths``)."""
    d = os.environ.get("HYSTMECH_PLUGIN_CACHE")
    return Path(d) if d else user_cache("plugins")


def build_shared(stem: str, sources: list[Path], *, includes=(), link=(), key: str = "",
                 cc: str | None = None) -> Path:
    """Compile ``sources`` into a shared library ``<stem>-<hash>.so`` in the cache
    (hash over the sources' bytes, the flags and ``key``) and return its path; a
    concurrent build waits for the one under way (a lock file beside it) and loads it."""
    # -DHM_NO_SYMVER: built for this machine, so the kernels bind glibc's current
    # exp/log/pow rather than the errno-wrapped baseline versions an FMU pins for
    # portability (hm_law.h; same results, a fraction of the cost per call);
    # -fno-math-errno: the engines never read errno
    flags = ["-O2", "-fno-math-errno", "-fPIC", "-shared", "-std=c99",
             "-D_POSIX_C_SOURCE=200809L", "-DHM_NO_SYMVER", "-Wall", "-Wno-unused-function"]
    h = hashlib.sha256(key.encode())
    for f in sources:
        h.update(Path(f).name.encode() + Path(f).read_bytes())
    h.update(" ".join(flags + [f"-I{i}" for i in includes] + list(link)).encode())
    so = cache_dir() / f"{stem}-{h.hexdigest()[:20]}.so"
    if so.exists():
        return so
    so.parent.mkdir(parents=True, exist_ok=True)
    # one build per library: a second process (the suite's other worker) waits for the
    # first and loads its result instead of compiling the same sources beside it
    with open(so.with_name(f".{so.name}.lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if so.exists():
            return so
        return _compile(stem, so, sources, flags, includes, link, cc)


def _compile(stem, so, sources, flags, includes, link, cc):
    from ..fmu.export import find_compiler

    exe = find_compiler(cc)
    tmp = so.with_name(f".{so.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    cmd = [exe, *flags, *[f"-I{i}" for i in includes], *map(str, sources), "-o", str(tmp),
           *link, "-lm"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise PluginBuildError(f"compiling {stem} failed ({' '.join(cmd)}):\n{r.stderr.strip()}")
    os.replace(tmp, so)
    return so


# exported by every kernel library built here: the kernels' failure message (hm_fail,
# e.g. a Preisach memory stack overflow) of that translation unit, cleared on reading
_SHIM = ("\nconst char *hm_mj_take_fail(void)\n"
         "{ const char *f = hm_fail; hm_fail = NULL; return f; }\n")


def kernel_library(spec):
    """The laws' C kernels as one translation unit with the failure shim: every
    components/*.c for a single law, the exporter's generated hm_sum.c for a sum
    (fmu.export.law_spec: the same per-law configuration as the FMU), compiled and
    cached by content."""
    from ..fmu.ckernels import c_sources, content_key

    srcs = c_sources()
    comp = srcs[0].parent
    text = spec.generated if spec.generated else "".join(f'#include "{f.name}"\n' for f in srcs)
    text += _SHIM
    h = content_key(text, srcs)
    if h in _KLIBS:
        return _KLIBS[h]
    src = cache_dir() / f"kernels-{h}.c"
    if not src.exists():
        src.parent.mkdir(parents=True, exist_ok=True)
        tmp = src.with_name(f".{src.name}.{os.getpid()}.tmp")
        tmp.write_text(text)
        os.replace(tmp, src)
    so = build_shared("hystmech-kernels", [src], includes=[comp], key=h)
    _KLIBS[h] = ctypes.CDLL(str(so))
    return _KLIBS[h]


_KLIBS: dict = {}
