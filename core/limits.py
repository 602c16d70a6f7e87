"""Limits on work, stated before a run starts.

Each runner declares a work estimate (``hystmech.runners.WORK``): the solver steps, the
stored samples and the grid points its config asks for, computed from the config alone
(e.g. the belt rig: (t_end − t0)/h steps). A run whose estimate exceeds a limit is
refused with exit code 2 and the estimate in words ("h = 1e-12 s over 3.3 s is 3.3e+12
steps"), before anything is allocated. The limits are generous for the shipped
scenarios (the full Fig. 21 sweep is 3712 points of 2e6 steps) and can be raised
(``--max-steps``, ``--max-samples``, ``--max-points``, ``--max-memory``) or lifted
(``--no-limits``).

The work limit (``hystmech run --max-work N``, ``run_scenario(limits={"work": N})`` or the
environment variable ``HYSTMECH_MAX_WORK=N``) is of another kind: it does not refuse, it
cuts a long run to its first N units of output — sweep points (per model), continuation
points per branch, fold-curve points, load or time steps of a rod — each computed exactly
as in the full run (same settings, same code), the rest left out. summary.json then
records ``"work_limit": N``. It is how the test suite and a quick look run every shipped
scenario as shipped (:func:`max_work`, :func:`first`).

Memory is a work quantity too: each estimate includes the bytes the run will allocate
(stored samples, Preisach planes, rod nodes, grid tables), refused above
:func:`memory_limit` (default half the physical memory; ``--max-memory``,
:func:`set_memory_limit`). The Python API applies the same limit before it allocates:
:func:`check_memory` raises a ValueError naming the quantity and its size (``drive``,
``simulate``, the Preisach constructors, the identification CLIs).
"""
from __future__ import annotations

import math
import os

from .runner_io import ScenarioError
from .safeio import _size_words

# per run (per point for a sweep): solver steps; stored samples (each sample holds a few
# float64 per state: 5e7 samples is a few GB); points of a parameter sweep
DEFAULT_LIMITS = {"steps": 1e9, "samples": 5e7, "points": 1e5}
FLAGS = {"steps": "--max-steps", "samples": "--max-samples", "points": "--max-points",
         "memory": "--max-memory"}
MEMORY_FRACTION = 0.5       # default memory limit: this fraction of the physical memory
BYTES_PER_SAMPLE = 8 * 16   # a stored sample: t, u, v, F and states as float64, plus output
RTOL_MIN = 1e-14            # below this a relative tolerance asks for steps under the
                            # float64 resolution: such a run never ends


def physical_memory() -> float:
    """Bytes of physical memory (inf if the system does not say)."""
    try:
        return float(os.sysconf("SC_PAGE_SIZE")) * float(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):   # pragma: no cover - not POSIX
        return math.inf


_MEMORY_LIMIT = [None]


def memory_limit() -> float:
    """The memory limit [bytes] every allocation estimate is checked against."""
    if _MEMORY_LIMIT[0] is not None:
        return _MEMORY_LIMIT[0]
    return MEMORY_FRACTION * physical_memory()


def set_memory_limit(nbytes: float | None) -> None:
    """Set the memory limit [bytes] of the API and the CLI (None: back to the default
    fraction of physical memory; ``math.inf`` lifts it)."""
    if nbytes is not None:
        nbytes = float(nbytes)
        if not nbytes > 0:
            raise ValueError(f"memory limit must be in (0, inf] bytes (got {nbytes!r})")
    _MEMORY_LIMIT[0] = nbytes


def size_words(nbytes: float) -> str:
    """'1.5 GiB' for 1.6e9."""
    return _size_words(nbytes) if math.isfinite(nbytes) else "an unbounded amount"


def check_memory(nbytes: float, what: str, hint: str = "") -> None:
    """ValueError if ``nbytes`` (what would be allocated for ``what``) exceeds the memory
    limit; called before the allocation."""
    lim = memory_limit()
    if not (nbytes <= lim):
        raise ValueError(f"{what} would need {size_words(nbytes)} of memory, above the limit "
                         f"of {size_words(lim)}{'; ' + hint if hint else ''} (raise it with "
                         "--max-memory or hystmech.limits.set_memory_limit)")


def parse_size(text: str) -> float:
    """Bytes of '4G', '512M', '1e9', '2TiB' (CLI --max-memory)."""
    t = str(text).strip().replace("iB", "").replace("B", "")
    mult = {"k": 2 ** 10, "K": 2 ** 10, "M": 2 ** 20, "G": 2 ** 30, "T": 2 ** 40}
    f = 1.0
    if t and t[-1] in mult:
        f, t = mult[t[-1]], t[:-1]
    x = float(t) * f
    if not (x > 0 and math.isfinite(x)):
        raise ValueError(f"must be a size in bytes > 0 (got {text!r})")
    return x


def estimate(runner, cfg: dict) -> dict:
    """{quantity: (value, sentence)} of a resolved runner for cfg ({} if it declares none).
    A config the estimate cannot read (wrong types) gives {}: the schema or the runner
    reports that problem."""
    work = getattr(runner, "work", None)
    if work is None:
        return {}
    try:
        est = dict(work(cfg) or {})
    except (TypeError, ValueError, KeyError, IndexError, ZeroDivisionError, OverflowError):
        return {}
    est = {k: v for k, v in est.items() if v is not None}
    if "samples" in est and "memory" not in est:
        n = est["samples"][0]
        est["memory"] = (n * BYTES_PER_SAMPLE, f"{n:.3g} stored samples take "
                                               f"{size_words(n * BYTES_PER_SAMPLE)}")
    return est


def check(runner, cfg: dict, limits: dict | None = None) -> dict:
    """Refuse (ScenarioError, exit 2) a run whose estimate exceeds a limit; returns the
    estimate. ``limits`` overrides DEFAULT_LIMITS per quantity; None for a quantity (or
    ``limits=False``) lifts it."""
    est = estimate(runner, cfg)
    if limits is False:
        return est
    lim = dict(DEFAULT_LIMITS, memory=memory_limit())
    lim.update(limits or {})
    for q, (value, how) in est.items():
        cap = lim.get(q)
        if cap is None:
            continue
        if not math.isfinite(value) or value > cap:
            flag = FLAGS.get(q, "--no-limits")
            if q == "memory":
                raise ScenarioError(f"{how}, above the memory limit of {size_words(cap)} "
                                    f"(raise it with {flag} SIZE, e.g. 8G, or lift the limits "
                                    "with --no-limits)")
            raise ScenarioError(f"{how}, above the limit of {cap:.3g} {q} per run (raise it "
                                f"with {flag} N or lift the limits with --no-limits)")
    return est


# -- the work limit: a run cut to its first N units of output ------------------------------
WORK_ENV = "HYSTMECH_MAX_WORK"
_MAX_WORK = [None]


def _check_work(n, what: str) -> int:
    try:
        if isinstance(n, bool):
            raise TypeError
        x = float(n)
        if not (x.is_integer() and x >= 1):
            raise ValueError
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a whole number in [1, inf) (got {n!r})") from None
    return int(x)


def max_work() -> int | None:
    """The work limit N of the current run (None: no limit): set by :func:`work_limit`
    (``hystmech run --max-work N``, ``run_scenario(limits={"work": N})``), else read from
    the environment variable HYSTMECH_MAX_WORK (ValueError naming it if it is not a whole
    number >= 1)."""
    if _MAX_WORK[0] is not None:
        return _MAX_WORK[0]
    env = os.environ.get(WORK_ENV, "").strip()
    return _check_work(env, f"the environment variable {WORK_ENV}") if env else None


class work_limit:
    """Context manager: runs inside it stop after their first ``n`` units of output
    (None: no limit beyond HYSTMECH_MAX_WORK)."""

    def __init__(self, n):
        self.n = None if n is None else _check_work(n, "the work limit (--max-work)")

    def __enter__(self):
        self.old = _MAX_WORK[0]
        if self.n is not None:
            _MAX_WORK[0] = self.n
        return self.n

    def __exit__(self, *exc):
        _MAX_WORK[0] = self.old
        return False


def first(items, least: int = 1) -> list:
    """``items`` cut to their first max_work() entries, but not fewer than ``least``
    (all of them without a work limit): the part of a long loop a work-limited run
    computes."""
    items = list(items)
    n = max_work()
    return items if n is None else items[:max(n, int(least))]


def capped(count: int, least: int = 1) -> int:
    """``count`` (a run's number of steps/points) cut to the work limit, but not below
    ``least`` (e.g. 2: a continued branch has at least two points)."""
    n = max_work()
    return int(count) if n is None else min(int(count), max(n, int(least)))
