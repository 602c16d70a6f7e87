"""Safe file input and output for the command line and the scenario runner.

Inputs: only regular files are read, and their size is checked before a byte is read (a
FIFO named ``x.toml`` would block for ever, ``/dev/zero`` would be read until memory
runs out). Outputs: written atomically (temporary file + rename) with the permissions
the umask allows (as ``open`` would give, not ``mkstemp``'s 0600); every name a scenario
or runner gives resolves inside the output directory (absolute paths and ``..`` are
refused: a scenario file is data and does not choose where on disk things land); one
writer per output directory at a time (:class:`OutputLock`, an advisory ``flock`` the
kernel releases when the holder dies, even by SIGKILL).

All refusals are ValueError subclasses (:class:`~hystmech.scenario.ScenarioError`
where a scenario is concerned): the CLI exits with code 2 and one line.
"""
from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from .runner_io import ScenarioError


def _error(msg: str) -> ValueError:
    return ScenarioError(msg)


def _size_words(n: float) -> str:
    for unit, k in (("TiB", 2 ** 40), ("GiB", 2 ** 30), ("MiB", 2 ** 20), ("kiB", 2 ** 10)):
        if n >= k:
            return f"{n / k:.3g} {unit}"
    return f"{int(n)} bytes"


def check_regular_file(path, what: str, max_bytes: int | None = None) -> int:
    """Size in bytes of the regular file ``path``; ValueError naming ``what`` if it is
    missing (FileNotFoundError), not a regular file (directory, FIFO, device, socket) or
    larger than ``max_bytes``."""
    p = Path(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise FileNotFoundError(f"{what} not found: {p}") from None
    except OSError as e:
        raise _error(f"cannot read {what} {p}: {e.strerror or type(e).__name__}") from None
    if stat.S_ISDIR(st.st_mode):
        raise _error(f"{what} {p} is a directory, not a file")
    if not stat.S_ISREG(st.st_mode):
        kind = ("a FIFO" if stat.S_ISFIFO(st.st_mode) else
                "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else
                "a socket" if stat.S_ISSOCK(st.st_mode) else "not a regular file")
        raise _error(f"{what} {p} is {kind}; only regular files are read")
    if max_bytes is not None and st.st_size > max_bytes:
        raise _error(f"{what} {p} is {_size_words(st.st_size)}, above the limit of "
                     f"{_size_words(max_bytes)}")
    return int(st.st_size)


def read_regular_file(path, what: str, max_bytes: int | None = None) -> bytes:
    """The bytes of a regular file of at most ``max_bytes`` (see
    :func:`check_regular_file`); opened non-blocking so that a file swapped for a FIFO
    after the check cannot block, and never read past the limit."""
    check_regular_file(path, what, max_bytes)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _error(f"{what} {path} is not a regular file; only regular files are read")
        limit = (max_bytes if max_bytes is not None else 1 << 62) + 1
        chunks, n = [], 0
        while n < limit:
            b = os.read(fd, min(1 << 20, limit - n))
            if not b:
                break
            chunks.append(b)
            n += len(b)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if max_bytes is not None and len(data) > max_bytes:
        raise _error(f"{what} {path} grew above the limit of {_size_words(max_bytes)} "
                     "while it was read")
    return data


# -- output ---------------------------------------------------------------------------------
def _umask() -> int:
    old = os.umask(0o022)
    os.umask(old)
    return old


def atomic_write(path: Path, data: bytes | str) -> None:
    """Write ``data`` to ``path`` through a temporary file and an atomic rename; the file
    gets mode 0666 minus the umask, as a plain ``open`` would create it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = "wb" if isinstance(data, bytes) else "w"
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, mode) as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def check_output_name(name, what: str = "an output file name") -> str:
    """``name`` if it is a plain relative file name (letters, digits, ``._-+``, no
    separator, not starting with a dot): the only names a scenario may give to files it
    writes, so that they land inside ``--out``. ValueError (exit 2) otherwise."""
    s = str(name)
    ok = bool(s) and not s.startswith(".") and all(c.isalnum() or c in "._-+" for c in s)
    if not ok:
        raise _error(f"{what} must be a plain file name of letters, digits and ._-+ that "
                     f"stays inside --out (got {s!r}; absolute paths, separators and .. "
                     "are refused)")
    return s


def inside(out: Path, name: str, what: str = "an output file") -> Path:
    """out / name, refused unless it resolves inside ``out`` (name may hold ``/`` for a
    sub-folder a runner creates, never ``..`` or an absolute path)."""
    out = Path(out)
    rel = Path(str(name))
    if rel.is_absolute() or ".." in rel.parts or not str(name):
        raise _error(f"{what} {str(name)!r} must be a relative name inside --out "
                     f"{out} (absolute paths and .. are refused)")
    p = out / rel
    try:
        p.resolve().relative_to(out.resolve())
    except ValueError:
        raise _error(f"{what} {str(name)!r} resolves outside --out {out} (through a "
                     "symbolic link)") from None
    return p


_HELD: dict = {}     # (dev, inode) of the directories this process holds -> depth
MAX_COMMAND_CHARS = 2000   # of a lock holder's command line shown in the message


def _shorten(cmd: str) -> str:
    """The command line whole (its --out folder is at the end), or its start and end
    joined by ' ... ' when longer than MAX_COMMAND_CHARS."""
    if len(cmd) <= MAX_COMMAND_CHARS:
        return cmd
    k = MAX_COMMAND_CHARS // 2
    return f"{cmd[:k]} ... {cmd[-k:]}"


def _lock_holder(st) -> str:
    """'pid N (command)' of the process holding a flock on the file of stat ``st``, from
    /proc/locks (Linux), else 'another process'."""
    try:
        with open("/proc/locks") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return "another process"
    want = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    for ln in lines:
        f = ln.split()
        if len(f) >= 6 and f[1] == "FLOCK" and f[5] == want and f[4].isdigit():
            pid = f[4]
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as fh:
                    cmd = fh.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
            except OSError:
                cmd = ""
            return f"pid {pid}" + (f": {_shorten(cmd)}" if cmd else "")
    return "another process"


class OutputLock:
    """One writer per output directory: ``with OutputLock(out): ...`` takes an exclusive
    advisory lock (flock) on the directory itself, released on exit or by the kernel
    when the process dies (even by SIGKILL); nothing is written into ``out``. A second
    writer gets a ValueError naming the holder's pid and command (exit 2) instead of
    mixing its rows with the first one's. Re-entrant within a process (the scenario
    runner and the sweep it calls lock the same folder). No-op where ``fcntl`` does not
    exist (Windows)."""

    def __init__(self, out):
        self.path = Path(out)
        self.fd = None
        self.key = None

    def __enter__(self):
        try:
            import fcntl
        except ImportError:   # pragma: no cover - not POSIX
            return self
        fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        st = os.fstat(fd)
        key = (st.st_dev, st.st_ino)
        if _HELD.get(key):
            os.close(fd)
            _HELD[key] += 1
            self.key = key
            return self
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise _error(f"the output directory {self.path} is in use by another hystmech "
                         f"run ({_lock_holder(st)}); wait for it to finish or choose another "
                         "--out") from None
        self.fd, self.key = fd, key
        _HELD[key] = 1
        return self

    def __exit__(self, *exc):
        if self.key is not None:
            _HELD[self.key] -= 1
            if _HELD[self.key] == 0:
                del _HELD[self.key]
            self.key = None
        if self.fd is not None:
            os.close(self.fd)     # closing releases the flock
            self.fd = None
        return False
