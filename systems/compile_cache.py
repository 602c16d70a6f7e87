"""Disk cache for the compiled code generated per assembly structure.

numba caches a function on disk only when it lives in a source file, and its cache only
checks the time stamp of that one file. The generated code of an assembly (the
right-hand side ``core``, its Jacobian, the operator update and thin wrappers around
the solver loops) is therefore written to a module file named after a hash of
everything that can change the compiled code, imported from there and compiled with
``cache=True``:

* the generated source itself (structure, element kinds and sizes, kernel names);
* the versions of hystmech, numba and Python;
* the bytes of every module the code draws on: the modules defining the element
  kernels, the solver methods (``methods/``) and, transitively, the modules they import
  from the same top-level package (so an edited kernel module, or a helper it imports,
  gives a new file instead of reusing stale machine code).

Element kernels enter the file as globals imported by module and qualified name,
which is only possible for module-level numba functions; run-time closures
(``SumElement``, envelopes given by the user, compiled FMU kernels) make
:func:`kernel_ref` return None and the caller keeps the uncached in-memory path.
Kernels are never passed as arguments to a cached function (see the comment above
``_drive_loop`` in core/drive.py).

Location: ``$HYSTMECH_CACHE`` if set (``0``, ``off`` or an empty value disable the
disk cache), else ``$XDG_CACHE_HOME/hystmech/numba`` or ``~/.cache/hystmech/numba``.
Deleting the directory clears the cache. Files are written atomically and never
rewritten (a concurrent process writing the same file is harmless), and an
unwritable location falls back to compiling in memory.
"""
from __future__ import annotations

import ast
import contextlib
import hashlib
import importlib.util
import os
import re
import sys
import tempfile
from pathlib import Path

from ..paths import user_cache

ENV = "HYSTMECH_CACHE"
_OFF = ("", "0", "off", "no", "false", "none")
PREFIX = "asm_"


def cache_dir() -> Path | None:
    """Directory of the generated-code cache, or None when disabled by $HYSTMECH_CACHE."""
    v = os.environ.get(ENV)
    if v is not None:
        if v.strip().lower() in _OFF:
            return None
        return Path(v).expanduser()
    return user_cache("numba")


def kernel_ref(fn):
    """(module, qualname) under which the numba function ``fn`` can be imported, or None
    when it is not a module-level function of a source file (closures, exec'd code)."""
    py = getattr(fn, "py_func", None)
    if py is None or getattr(py, "__closure__", None):
        return None
    mod = sys.modules.get(getattr(py, "__module__", None) or "")
    file = getattr(mod, "__file__", None)
    if not file or "<locals>" in py.__qualname__:
        return None
    try:
        if os.path.realpath(py.__code__.co_filename) != os.path.realpath(file):
            return None
    except (TypeError, ValueError):
        return None
    obj = mod
    for part in py.__qualname__.split("."):
        obj = getattr(obj, part, None)
    if obj is not fn:
        return None
    return py.__module__, py.__qualname__


def resolve(module: str, qualname: str):
    """The object named ``qualname`` in ``module`` (used by the generated files)."""
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


_HASHES: dict = {}


class StaleModule(Exception):
    """A module's source file changed after the module was imported: the code in memory
    is not the code on disk, so nothing compiled from it may be cached under its hash."""


def _pyc_stamp(mod):
    # (mtime, size) of the source recorded in the module's timestamp-based .pyc, i.e. of
    # the source as it was imported (None when unknown)
    cached = getattr(mod, "__cached__", None)
    try:
        with open(cached, "rb") as f:
            head = f.read(16)
    except (OSError, TypeError):
        return None
    if len(head) < 16 or int.from_bytes(head[4:8], "little") != 0:
        return None
    return int.from_bytes(head[8:12], "little"), int.from_bytes(head[12:16], "little")


def _spec_origin(name: str):
    # source file of a module that need not be imported yet (None if not a module)
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError, AttributeError):
        return None
    origin = getattr(spec, "origin", None)
    return origin if origin and origin.endswith(".py") else None


# an import statement at the start of a line (any indentation), with a parenthesised or
# backslash-continued tail; and what would hide one from it (after ";" or ":")
_IMPORT_LINE = re.compile(rb"^[ \t]*(?:from[ \t]+[.\w]+[ \t]+import[ \t]*"
                          rb"(?:\([^)]*\)|[^\n]*(?:\\\n[^\n]*)*)|import[ \t]+[^\n]*(?:\\\n[^\n]*)*)",
                          re.M)
_HIDDEN_IMPORT = re.compile(rb"[;:][ \t]*(?:import[ \t]+[.\w]|from[ \t]+[.\w]+[ \t]+import\b)")


def import_nodes(data: bytes) -> list:
    """The ast.Import / ast.ImportFrom nodes of a module's source ``data``, as a walk of
    its whole tree finds them, from the import lines alone: parsing and walking every
    module the generated code draws on took ~0.4 s in each process (the key of the
    cached code is computed in every run); the lines take a few ms. Falls back to the
    whole tree when a line does not parse alone or an import may hide after ";" or ":"."""
    if not _HIDDEN_IMPORT.search(data):
        lines = [m.group(0).strip() for m in _IMPORT_LINE.finditer(data)]
        try:
            tree = ast.parse(b"\n".join(lines))
        except SyntaxError:
            tree = None
        if tree is not None and all(isinstance(n, (ast.Import, ast.ImportFrom))
                                    for n in tree.body):
            return tree.body
    return _walk_imports(data)


def _walk_imports(data: bytes) -> list:
    try:
        tree = ast.parse(data)
    except SyntaxError:
        return []
    return [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]


def _file_digest(name: str):
    """(sha256 of the module's source, names of the modules it imports) or None.
    Raises StaleModule when the file of an imported module changed since its import."""
    mod = sys.modules.get(name)
    file = getattr(mod, "__file__", None) if mod is not None else _spec_origin(name)
    if not file or not file.endswith(".py"):
        return None
    try:
        st = os.stat(file)
        memo = _HASHES.get(file)
        if memo is not None:
            if mod is not None and memo[0] != (st.st_mtime_ns, st.st_size):
                raise StaleModule(f"{file} changed after it was imported")
            return memo[1], memo[2]
        pyc = _pyc_stamp(mod) if mod is not None else None
        if pyc is not None and pyc != (int(st.st_mtime) & 0xFFFFFFFF, st.st_size & 0xFFFFFFFF):
            raise StaleModule(f"{file} changed after it was imported")
        data = Path(file).read_bytes()
    except OSError:
        return None
    pkg = name if file.endswith("__init__.py") else name.rpartition(".")[0]
    imports = set()
    for node in import_nodes(data):
        if isinstance(node, ast.Import):
            imports.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            try:
                base = importlib.util.resolve_name("." * node.level + (node.module or ""), pkg) \
                    if node.level else node.module
            except (ImportError, ValueError):
                continue
            if not base:
                continue
            if base.split(".")[0] not in (name.split(".")[0], "hystmech"):
                imports.add(base)               # not followed by module_hashes anyway
                continue
            for a in node.names:                # `from pkg import submodule` or a name
                sub = f"{base}.{a.name}"
                if sub in sys.modules or _spec_origin(sub) is not None:
                    imports.add(sub)
                else:
                    imports.add(base)
    digest = hashlib.sha256(data).hexdigest()
    _HASHES[file] = ((st.st_mtime_ns, st.st_size), digest, frozenset(imports))
    return digest, frozenset(imports)


def module_hashes(modules) -> dict:
    """{module: sha256 of its source} for ``modules`` and, transitively, the modules
    they import from their own top-level packages (and from hystmech)."""
    tops = {m.split(".")[0] for m in modules} | {"hystmech"}
    out = {}
    todo = list(modules)
    while todo:
        name = todo.pop()
        if name in out:
            continue
        d = _file_digest(name)
        if d is None:
            out[name] = "?"
            continue
        out[name] = d[0]
        todo += [m for m in d[1] if m.split(".")[0] in tops and m not in out]
    return out


def cache_key(source: str, modules) -> tuple[str, str]:
    """(hash, header): the file name's hash over the source and every input that can
    change the compiled code, and a comment header listing those inputs."""
    import numba

    from .. import __version__ as hystmech_version

    deps = module_hashes(modules)
    lines = [f"# hystmech {hystmech_version}, numba {numba.__version__}, "
             f"python {sys.version.split()[0]} ({sys.implementation.cache_tag})"]
    lines += [f"# {m} {h}" for m, h in sorted(deps.items())]
    header = "\n".join(lines) + "\n"
    h = hashlib.sha256((header + source).encode()).hexdigest()[:32]
    return h, header


def _write_once(path: Path, text: str) -> None:
    # write to a temporary file, then link it into place: an existing file (another
    # process got there first) is kept, so its mtime and numba's cache index stay valid
    data = text.encode()
    try:
        if path.read_bytes() == data:
            return
        replace = True                          # truncated or foreign: replace it
    except FileNotFoundError:
        replace = False
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".py", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if replace:
            os.replace(tmp, path)
        else:
            try:
                os.link(tmp, path)
            except FileExistsError:
                pass
            except OSError:                     # no hard links on this file system
                if not path.exists():
                    os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


@contextlib.contextmanager
def file_lock(path):
    """Hold an exclusive lock on file ``path`` (created if missing) meanwhile, so that
    processes sharing the cache directory (the suite's workers, a background child)
    compile a module once and the others then load it; no lock where the platform or
    the directory offers none (each process then compiles)."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    try:
        f = open(path, "a")
    except OSError:
        yield
        return
    with f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


_LOADED: dict = {}
last_error: str | None = None


def load(source: str, modules, prefix: str = PREFIX, lock: bool = False):
    """Import the generated ``source`` from the cache directory.

    Returns (module, path), or (None, reason) when the disk cache is disabled or not
    writable; the caller then compiles in memory. lock: import it under the file's lock
    (a module whose import compiles, as ``numba.cfunc`` does: a second process then
    loads the first one's machine code instead of compiling it alongside)."""
    global last_error
    try:
        h, header = cache_key(source, modules)
    except StaleModule as e:
        return None, f"not cached: {e} (restart Python to cache it)"
    d = cache_dir()
    if d is None:
        return None, f"disabled by ${ENV}"
    path = d / f"{prefix}{h}.py"
    # numba's cached machine code re-imports its module by name when it is loaded, so the
    # name must be unique per file (the same code cached in two directories) and stay in
    # sys.modules for as long as the module is in use
    where = hashlib.sha256(str(os.path.abspath(d)).encode()).hexdigest()[:8]
    name = f"_hystmech_{prefix}{h}_{where}"
    if (d, h) in _LOADED:
        mod = _LOADED[d, h][0]
        sys.modules[name] = mod
        return _LOADED[d, h]
    mod = None
    try:
        d.mkdir(parents=True, exist_ok=True)
        _write_once(path, header + source)
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        with file_lock(path.with_suffix(".lock")) if lock else contextlib.nullcontext():
            spec.loader.exec_module(mod)
    except Exception as e:  # noqa: BLE001 - any failure: compile in memory instead
        if mod is not None and sys.modules.get(name) is mod:
            sys.modules.pop(name, None)
        last_error = f"{type(e).__name__}: {e}"
        return None, f"cache not usable ({last_error})"
    _LOADED[d, h] = (mod, path)
    return mod, path


def _stamps(modules) -> dict | None:
    """{file: [mtime_ns, size]} of every source file whose bytes enter the cache key of
    ``modules`` (their transitive closure, as module_hashes follows it), or None."""
    out = {}
    for name in module_hashes(modules):
        mod = sys.modules.get(name)
        file = getattr(mod, "__file__", None) if mod is not None else _spec_origin(name)
        if not file or not file.endswith(".py"):
            continue
        try:
            st = os.stat(file)
        except OSError:
            return None
        out[file] = [st.st_mtime_ns, st.st_size]
    return out


def load_stamped(tag: str, make_source, modules):
    """:func:`load` for a module whose source is costly to make and hash (the generic
    engine, methods/engine.py), through a stamp file ``<tag>-<copy>.stamp.json`` in the cache
    directory: when the versions and the (mtime, size) of every file its key was
    computed from are as recorded, the recorded file is imported without making the
    source or reading those files (the check of a .pyc); else as :func:`load`, and the
    stamps are recorded anew. ``make_source()`` returns the source."""
    d = cache_dir()
    if d is None:
        return None, f"disabled by ${ENV}"
    hit = find_stamped(tag)
    if hit is not None:
        return hit
    mod, where = load(make_source(), modules)
    if mod is not None:
        record_stamp(tag, where, modules)
    return mod, where


_COPY = hashlib.sha256(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
                       .encode()).hexdigest()[:12]


def stamp_path(d: Path, tag: str) -> Path:
    """The stamp file of ``tag`` in cache folder ``d``, one per installed copy of
    hystmech: two environments sharing one cache (a user's venvs, worktrees) each find
    their own module; with one name for all, a copy loaded the module another copy's
    source had made (that copy's stamps, on its own files, still held)."""
    return d / f"{tag}-{_COPY}.stamp.json"


def record_stamp(tag: str, path, modules) -> None:
    """Record the stamp of ``tag`` (:func:`stamp_path`) for the cached module file ``path`` (as
    :func:`load` returned it) whose key was computed from ``modules``, so that
    :func:`find_stamped` finds it later without making or hashing its source."""
    import json

    d = cache_dir()
    stamps = _stamps(modules)
    if d is None or stamps is None:
        return
    h = Path(path).stem[len(PREFIX):]
    try:
        _write_once(stamp_path(d, tag),
                    json.dumps({"versions": _versions(), "hash": h, "files": stamps}))
    except OSError:
        pass


def _versions() -> str:
    import numba

    from .. import __version__ as hystmech_version

    return f"{hystmech_version} {numba.__version__} {sys.version} {sys.implementation.cache_tag}"


def find_stamped(tag: str):
    """(module, path) of the module :func:`load_stamped` recorded under ``tag`` when its
    stamps still hold (imported, nothing compiled, no source made), else None: the
    cheap question "is it on disk?" asked before choosing a code path."""
    import json

    d = cache_dir()
    if d is None:
        return None
    try:
        rec = json.loads(stamp_path(d, tag).read_text())
        ok = rec["versions"] == _versions() and all(
            [os.stat(f).st_mtime_ns, os.stat(f).st_size] == st for f, st in rec["files"].items())
        path = d / f"{PREFIX}{rec['hash']}.py"
        if ok and path.is_file():
            return _import_cached(d, rec["hash"], path)
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return None


def _import_cached(d: Path, h: str, path: Path):
    # import an existing cached module file by the name load() gives it (None if that fails)
    where = hashlib.sha256(str(os.path.abspath(d)).encode()).hexdigest()[:8]
    name = f"_hystmech_{PREFIX}{h}_{where}"
    if (d, h) in _LOADED:
        sys.modules[name] = _LOADED[d, h][0]
        return _LOADED[d, h]
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    except Exception:  # noqa: BLE001 - any failure: the full path instead
        sys.modules.pop(name, None)
        return None
    _LOADED[d, h] = (mod, path)
    return mod, path



# -- compiling a function of a cached module in a second process --------------------------

PREFETCH = "HYSTMECH_PREFETCH"


def cached_on_disk(disp) -> bool:
    """Whether numba's disk cache holds any compiled version of dispatcher ``disp``."""
    try:
        return os.path.exists(disp._cache._cache_file._index_path)
    except AttributeError:
        return True                             # no disk cache: nothing to prefetch


def prefetch(mod, path, name: str, args):
    """Compile ``mod.name`` for the types of ``args`` in a child process, into numba's
    disk cache, while this process does other work (on a machine with a free core: the
    first ``hystmech run`` compiles its loop here and its sample evaluation there).
    Returns the child (subprocess.Popen) or None when not worth it: $HYSTMECH_PREFETCH
    not set (or the id of another process), one core, or already on disk. Wait for the child before the first call;
    the call then loads the child's machine code instead of compiling it (if the child
    failed, the call compiles as usual)."""
    import pickle
    import subprocess

    if not _prefetch_allowed(default=False):
        return None
    disp = getattr(mod, name, None)
    if disp is None or not hasattr(disp, "compile") or cached_on_disk(disp):
        return None
    d = Path(path).parent
    h = Path(path).stem[len(PREFIX):]
    try:
        fd, job = tempfile.mkstemp(prefix=".prefetch-", suffix=".pkl", dir=d)
        with os.fdopen(fd, "wb") as f:
            pickle.dump((str(d), h, str(path), name, args), f)
        env = dict(os.environ)
        env.pop(PREFETCH, None)
        return subprocess.Popen([sys.executable, "-c",
                                 "import sys; from hystmech.systems.compile_cache import "
                                 "_prefetch_main; _prefetch_main(sys.argv[1])", job],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, env=env)
    except Exception:  # noqa: BLE001 - an optimisation only: the call compiles instead
        return None


def _prefetch_main(job: str) -> None:
    # the child of prefetch(): import the cached module by the name load() gives it
    # (numba's cache records it) and compile the function for the recorded types
    import pickle

    import numba

    try:
        with open(job, "rb") as f:
            d, h, path, name, args = pickle.load(f)
    finally:
        os.unlink(job)
    hit = _import_cached(Path(d), h, Path(path))
    if hit is not None:
        getattr(hit[0], name).compile(tuple(numba.typeof(a) for a in args))


class Prefetched:
    """Stands for a dispatcher being compiled by :func:`prefetch`'s child: the first
    call waits for the child, then calls (and from then on is) the dispatcher."""

    def __init__(self, disp, child):
        self.disp, self.child = disp, child

    def __call__(self, *args):
        if self.child is not None:
            try:
                self.child.wait()
            except Exception:  # noqa: BLE001 - (interrupted: the call compiles itself)
                pass
            self.child = None
        return self.disp(*args)

    def __getattr__(self, attr):
        return getattr(self.disp, attr)


# -- compiling a shared loop in the background (the tiered choice of methods/engine.py) -----

STALE_WARMING = 1800.0      # s: a marker older than this is a child that died


def _prefetch_allowed(default: bool) -> bool:
    # $HYSTMECH_PREFETCH unset: ``default``; off words: no; a process id: only that
    # process (not the workers of a sweep it starts); and never on one core
    v = os.environ.get(PREFETCH)
    if v is None:
        return default and (os.cpu_count() or 1) >= 2
    v = v.strip().lower()
    if v in _OFF or (v.isdigit() and int(v) > 1 and int(v) != os.getpid()):
        return False
    return (os.cpu_count() or 1) >= 2


def _lowest_priority() -> None:
    """This process runs only when the CPU has nothing else to do: SCHED_IDLE where
    the OS has it (Linux), else nice 19."""
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
        return
    except (AttributeError, OSError):
        pass
    try:
        os.nice(19)
    except (AttributeError, OSError):
        pass


def background(tag: str, target: str, args=()):
    """Run ``target`` ("module:function", called with the string ``args``) in a child
    process nobody waits for (its own process group) at the lowest priority
    (:func:`_lowest_priority`), at most one per ``tag`` and cache directory at a time
    (a marker file ``<tag>.warming`` there, removed by the child when done). For work
    whose result lands in the disk caches and that nobody waits for: the generic engine's loop compiled while the user's first structure runs its
    generated code (methods/engine.py). On by default on a machine with two or more
    cores; off with $HYSTMECH_PREFETCH=0 (the suite) or when it names another process
    (the workers of a sweep started by `hystmech run`). Returns the child
    (subprocess.Popen) or None."""
    import subprocess
    import time

    d = cache_dir()
    if d is None or not _prefetch_allowed(default=True):
        return None
    marker = d / f"{tag}.warming"
    try:
        d.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            if time.time() - marker.stat().st_mtime < STALE_WARMING:
                return None                     # another process is at it
            marker.unlink(missing_ok=True)
            fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        os.close(fd)
        env = dict(os.environ)
        env[PREFETCH] = "0"
        mod, fn = target.split(":")
        code = (f"import sys\nfrom {__name__} import _lowest_priority\n_lowest_priority()\n"
                f"try:\n    from {mod} import {fn}\n    {fn}(*sys.argv[2:])\n"
                f"finally:\n    import os\n    os.unlink(sys.argv[1])\n")
        # its own process group (a Ctrl-C in the terminal does not reach it), but the
        # caller's session: with Linux's autogroup scheduling (the default) each session
        # is weighed as one, so a child in a session of its own took a full share of
        # the CPU from the run it was to stay behind, whatever its nice value (measured:
        # the first `hystmech run` 18-27 s wall with it, 12-14 s without, at load 2)
        return subprocess.Popen([sys.executable, "-c", code, str(marker), *map(str, args)],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, env=env, process_group=0)
    except Exception:  # noqa: BLE001 - an optimisation only: nothing is started
        try:
            marker.unlink(missing_ok=True)
        except OSError:
            pass
        return None
