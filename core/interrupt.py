"""Ctrl-C for compiled loops.

A numba loop cannot run Python signal handlers: Python's C-level handler only notes the
signal, and the KeyboardInterrupt is raised when the loop returns. So the compiled loops
(drive, and the projection / RK45 / Radau / auto methods of ``simulate``) take a small
``irq`` array and poll it every 1024 steps or samples; :func:`watching` makes the
kernel-side handler write into it: it points :func:`signal.set_wakeup_fd` (the byte
CPython's handler writes for every signal it handles) at a one-page file mapped into
memory, whose first byte is ``irq[0]``. A loop that finds ``irq[0] != 0`` stops at once
and returns; Python then runs the handler (KeyboardInterrupt for Ctrl-C). Cost: one
load and compare per 1024 steps.

Only the main thread receives signals; elsewhere (worker threads, where
``set_wakeup_fd`` is refused) the array stays zero and the loops run to their end as
before. A signal that CPython handles without raising (rare: a handler a library
installed for, e.g., SIGCHLD) also stops the loop; :func:`raise_if_stopped` then
raises :class:`Interrupted` naming it rather than return a truncated result.
"""
from __future__ import annotations

import contextlib
import mmap
import os
import signal
import tempfile
import threading

import numpy as np

POLL_MASK = 1023          # loops poll when (step & POLL_MASK) == POLL_MASK


class Interrupted(RuntimeError):
    """A compiled loop stopped by a signal whose handler did not raise."""


class _Page:
    """The memory-mapped file the wakeup byte lands in."""

    def __init__(self):
        if hasattr(os, "memfd_create"):
            fd = os.memfd_create("hystmech-irq")
        else:   # pragma: no cover - macOS
            f = tempfile.TemporaryFile()
            fd = os.dup(f.fileno())
            f.close()
        os.ftruncate(fd, mmap.PAGESIZE)
        os.set_blocking(fd, False)     # set_wakeup_fd requires it
        self.fd = fd
        self.map = mmap.mmap(fd, mmap.PAGESIZE)
        self.array = np.frombuffer(self.map, dtype=np.uint8)[:8]

    def reset(self):
        self.map[:8] = b"\0" * 8
        os.lseek(self.fd, 0, os.SEEK_SET)


_PAGE: list = [None]
_DEPTH = [0]
_IDLE = np.zeros(8, dtype=np.uint8)      # the array of a loop nobody can interrupt


def _page():
    if _PAGE[0] is None:
        _PAGE[0] = _Page()
    return _PAGE[0]


@contextlib.contextmanager
def watching():
    """``with watching() as irq:`` pass ``irq`` to a compiled loop that polls it; a signal
    arriving meanwhile sets ``irq[0]``. Nested uses share the outer one's array."""
    if threading.current_thread() is not threading.main_thread():
        yield _IDLE
        return
    if _DEPTH[0] > 0:
        _DEPTH[0] += 1
        try:
            yield _page().array
        finally:
            _DEPTH[0] -= 1
        return
    try:
        pg = _page()
        pg.reset()
        old = signal.set_wakeup_fd(pg.fd, warn_on_full_buffer=False)
    except (ValueError, OSError):
        yield _IDLE
        return
    _DEPTH[0] = 1
    try:
        yield pg.array
    except SystemError as e:
        # the handler ran while numba boxed the loop's result (it calls back into
        # Python): numba reports a SystemError whose cause is the KeyboardInterrupt
        ki = _interrupt_in_chain(e)
        if ki is None:
            raise
        raise ki from None
    finally:
        _DEPTH[0] = 0
        got = bytes(pg.map[:8]).rstrip(b"\0")
        signal.set_wakeup_fd(old)
        if old != -1 and got:
            with contextlib.suppress(OSError):
                os.write(old, got)     # the previous owner (an event loop) sees them too


def _interrupt_in_chain(e: BaseException):
    seen = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, KeyboardInterrupt):
            return e
        e = e.__cause__ or e.__context__
    return None


def raise_if_stopped(irq) -> None:
    """After a compiled loop returned: if a signal stopped it and its Python handler did
    not raise (handlers run before this line executes), raise Interrupted naming it."""
    if irq is not _IDLE and irq[0] != 0:
        sig = int(irq[0])
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        raise Interrupted(f"the compiled loop was stopped by {name}")
