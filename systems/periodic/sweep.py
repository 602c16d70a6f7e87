"""Frequency-response sweeps of the belt–tensioner rig, Bastien et al. (2007), §4.4.

Each point (model, f1, Ω) is one time simulation of the rig (eqs. (38)-(58)) with
f(t) = f1·cos(Ω·t) (f0 = 0, φ = 0, eq. (59b)) and c0 = c·Ω_ident/Ω (eq. (31)); its
value is the tension amplitude max(T) − min(T) over the window t ∈ [17, 20] s (eq. (59a)).

:func:`run_sweep` runs the points on any :class:`concurrent.futures.Executor` (a local
process pool by default, or ``dask.distributed.Client(...).get_executor()`` for a
cluster), reports progress, and appends each finished point to a CSV file with an
fsync, so that a sweep interrupted and started again computes only the missing points.

A finished point is provably finished: each row ends with the CRC32 of its own text
(``model,f1,omega,T_amplitude,crc32``), written by the one writer, so a row torn by a
power loss or a full disk (``masing,300.0,125.0,22``) fails its check and is dropped
and recomputed on resume, with a one-line note. Files of the earlier four-column format
are read (a row counts if complete and newline-terminated) and rewritten in the new one.
Local worker processes die with their parent: each asks the kernel for SIGKILL when its
parent dies (prctl PR_SET_PDEATHSIG), and SIGTERM/SIGINT of the parent kill the pool
before the exception propagates.
"""
from __future__ import annotations

import concurrent.futures as cf
import math
import os
import signal
import sys
import threading
import time
import zlib
from pathlib import Path
from typing import Callable, Iterable

import numpy as np

from ..rigs.belt_tensioner import T_START, paper_tensioner, simulate_belt
from ..methods import engine

MODELS = ("mdm", "masing")
F1_MEASURED = (13.0, 27.0, 41.0, 54.0, 67.0, 79.0, 90.0, 100.0, 110.0, 120.0)   # eq. (59c)
F1_PREDICTED = (140.0, 160.0, 200.0, 230.0, 260.0, 300.0)                      # eq. (60)
F1_PAPER = F1_MEASURED + F1_PREDICTED
OMEGA_PAPER = tuple(np.linspace(10.0, 125.0, 116).tolist())                   # eq. (59d)
COLUMNS = ("model", "f1", "omega", "T_amplitude")        # the data of a row
# the scenario's default: the steady-state stop, whose points agree with the full 20 s
# protocol within SS_AGREEMENT relative (measured on the whole 2 x 16 x 116 grid)
SS_DEFAULT = {"steady_state": True, "ss_tol": 5e-5}
SS_AGREEMENT = 2e-3
CHECK_COLUMN = "crc32"                                    # CRC32 of the row's data text
HEADER = COLUMNS + (CHECK_COLUMN,)


def frf_grid(models: Iterable[str] = MODELS, f1: Iterable[float] = F1_PAPER,
             omegas: Iterable[float] = OMEGA_PAPER) -> list[tuple[str, float, float]]:
    """All (model, f1 [N], Ω [rad/s]) points, model-major (the default is the paper's
    2 × 16 × 116 grid of eqs. (59c), (59d), (60))."""
    pts = []
    for m in models:
        m = str(m).lower()
        if m not in MODELS:
            raise ValueError(f"model must be one of {', '.join(MODELS)} (got {m!r})")
        for a in f1:
            a = float(a)
            if not (math.isfinite(a) and a >= 0.0):
                raise ValueError(f"f1 must be in [0, inf) (got {a!r})")
            for w in omegas:
                w = float(w)
                if not (math.isfinite(w) and w > 0.0):
                    raise ValueError(f"omega must be in (0, inf) (got {w!r})")
                pts.append((m, a, w))
    return pts


def tension_amplitude(model: str, f1: float, omega: float, *, t_window=(17.0, 20.0),
                      h: float = 1e-5, method: str | None = None, rtol: float = 1e-8,
                      steady_state: bool = False, ss_periods: int = 3, ss_tol: float = 2e-4,
                      ss_confirm: int = 3, t_start: float = 0.0) -> dict:
    """One point of Fig. 21 of Bastien et al. (2007): max(T) − min(T) [N] over
    t ∈ t_window [s] for f(t) = f1·cos(Ω t), eqs. (59a)-(59b), c0 by eq. (31).

    The Masing tensioner uses the projection scheme (eq. (A.9)) with step h [s]; the
    modified Dahl tensioner the compiled adaptive Dormand-Prince method (rtol), sampled
    every 1e-4 s... unless ``method`` says otherwise. steady_state=True stops the run
    once blocks of ss_periods forcing periods, watched from t_start on (T sampled at
    every step, or every 1e-4 s of the dense output), repeat within ss_tol of the
    amplitude (ss_confirm times in a row) and returns the last block's amplitude; with
    SS_DEFAULT it agrees with the 20 s protocol within SS_AGREEMENT relative.
    Returns {"T_amplitude", "t_stop" (NaN if run to the end), "wall_s"}.
    """
    t_w0, t_w1 = float(t_window[0]), float(t_window[1])
    if not (t_start < t_w0 < t_w1):
        raise ValueError(f"t_window must be [start, end] with {t_start:g} < start < end "
                         f"(got {list(t_window)})")
    el = paper_tensioner(model, Omega0=omega)
    if method is None:
        method = "projection" if el.kind == "inclusion" else "RK45"
    tic = time.perf_counter()
    res = simulate_belt(el, t_end=t_w1, t0=t_start, method=method, h=h, rtol=rtol,
                        f0=0.0, f1=f1, Omega0=omega, phi=0.0, record=False, window=t_w0,
                        dt_out=1e-4 if method != "projection" else None,
                        steady_state=steady_state, ss_periods=ss_periods, ss_tol=ss_tol,
                        ss_confirm=ss_confirm, ss_from=t_start)
    info = res.info
    if steady_state and math.isfinite(info["t_stop"]):
        amp = info["ss_amplitude"]
    else:
        amp = info["T_max"] - info["T_min"]
    if not math.isfinite(amp):
        raise FloatingPointError(f"non-finite tension amplitude at model={model}, f1={f1}, "
                                 f"omega={omega}")
    return {"T_amplitude": float(amp), "t_stop": info["t_stop"],
            "wall_s": time.perf_counter() - tic}


# the settings of tension_amplitude that change the numbers (t_start too); a resume must
# use the ones the CSV was made with, stored beside it in SETTINGS_SUFFIX
SETTINGS_SUFFIX = ".settings.json"
_SETTING_NAMES = ("t_window", "h", "method", "rtol", "steady_state", "ss_periods", "ss_tol",
                  "ss_confirm", "t_start")


def point_settings(**kw) -> dict:
    """The settings of :func:`tension_amplitude` that change a point's value, defaults
    filled in, checked (ValueError naming the first bad one) and in JSON form."""
    import inspect

    sig = inspect.signature(tension_amplitude)
    unknown = [k for k in kw if k not in sig.parameters or k in ("model", "f1", "omega")]
    if unknown:
        raise ValueError(f"unknown sweep setting {unknown[0]!r}; allowed: "
                         f"{', '.join(_SETTING_NAMES)}")
    st = {k: kw.get(k, sig.parameters[k].default) for k in _SETTING_NAMES}
    from ...limits import RTOL_MIN

    try:
        tw = [float(x) for x in st["t_window"]]
    except (TypeError, ValueError):
        tw = []
    t_start = float(st["t_start"])
    if len(tw) != 2 or not all(math.isfinite(x) for x in tw) or not (t_start < tw[0] < tw[1]):
        raise ValueError(f"t_window must be [start, end] with {t_start:g} < start < end "
                         f"(got {st['t_window']!r})")
    st["t_window"] = tw
    for k, lo in (("h", 0.0), ("ss_tol", 0.0)):
        x = float(st[k])
        if not (math.isfinite(x) and x > lo):
            raise ValueError(f"{k} must be in (0, inf) (got {st[k]!r})")
        st[k] = x
    r = float(st["rtol"])
    if not (RTOL_MIN <= r < 1):
        raise ValueError(f"rtol must be in [{RTOL_MIN:g}, 1) (got {st['rtol']!r})")
    st["rtol"] = r
    for k in ("ss_periods", "ss_confirm"):
        x = st[k]
        if isinstance(x, bool) or not float(x).is_integer() or not 1 <= x <= 10 ** 6:
            raise ValueError(f"{k} must be a whole number in [1, 1e6] (got {x!r})")
        st[k] = int(x)
    st["steady_state"] = bool(st["steady_state"])
    if st["method"] is not None:
        # the rig's own set, in simulate()'s canonical spelling (any case accepted), so
        # "rk45" and "RK45" are one setting for a resume
        from ..methods import canonical
        from ..rigs.belt_tensioner import METHODS

        st["method"] = canonical(st["method"], METHODS)
    return st


def _jsonable_grid(v):
    if isinstance(v, (list, tuple, np.ndarray)):
        return [float(x) for x in v]
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    return float(v) if isinstance(v, (int, float, np.number)) else str(v)


def _check_settings(csv_path: Path, done: dict, models, settings: dict) -> None:
    """Refuse (ValueError) a resume whose settings differ from those the CSV's rows of
    the same model were computed with; record the settings of each model about to be
    computed. A CSV with rows and no settings file (written before they were stored) is
    taken as matching, with a note."""
    import json

    from ...safeio import atomic_write

    sp = csv_path.with_name(csv_path.name + SETTINGS_SUFFIX)
    stored = {}
    if sp.exists():
        try:
            stored = json.loads(sp.read_text())
            if not isinstance(stored, dict):
                raise ValueError
        except (ValueError, OSError):
            raise ValueError(f"{sp} is not the settings file of {csv_path.name} (unreadable); "
                             "delete both to start the sweep afresh") from None
    have = {k[0] for k in done}
    for m in models:
        # (grid keys are compared where the file recorded them: older files did not)
        diff = [k for k in settings if (k in stored.get(m, {}) or not k.startswith("grid."))
                and stored.get(m, {}).get(k) != settings[k]] if m in stored else []
        if m in have and diff:
            k = diff[0]
            raise ValueError(f"{csv_path} holds {m} points computed with {k} = "
                             f"{stored[m].get(k)!r}, this sweep asks for {settings.get(k)!r}: "
                             "use another --out (or delete the file) to compute them anew")
        if m in have and m not in stored:
            _note(f"{csv_path.name}: no record of the settings its {m} rows were computed "
                  "with (an older file); they are taken as this sweep's")
    new = dict(stored)
    for m in models:
        new[m] = settings
    if new != stored:
        atomic_write(sp, json.dumps(new, indent=1, sort_keys=True))


def available_cores() -> int:
    """CPU cores this process may run on (its affinity mask where the system has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _point_task(point, kw):
    """Run one grid point (the only place a point is computed; see tension_amplitude)."""
    model, f1, omega = point
    r = tension_amplitude(model, f1, omega, **kw)
    return point, r


def _key(model, f1, omega):
    return (str(model), round(float(f1), 9), round(float(omega), 9))


def format_row(model: str, f1: float, omega: float, amplitude: float) -> str:
    """One CSV row with its check: ``model,f1,omega,T_amplitude,crc32`` and a newline;
    crc32 (8 hex digits) is zlib.crc32 of the text before the last comma."""
    text = f"{model},{float(f1)!r},{float(omega)!r},{float(amplitude)!r}"
    return f"{text},{zlib.crc32(text.encode()):08x}\n"


def _parse_row(line: str, checked: bool):
    """(key, amplitude) of a complete row, else None."""
    if not line.endswith("\n"):
        return None                      # torn: the writer always ends a row with \n
    fields = line.rstrip("\r\n").split(",")
    if checked:
        if len(fields) != len(HEADER):
            return None
        text = ",".join(fields[:-1])
        if fields[-1] != f"{zlib.crc32(text.encode()):08x}":
            return None
    elif len(fields) != len(COLUMNS):
        return None
    try:
        m, a, w, amp = fields[0], float(fields[1]), float(fields[2]), float(fields[3])
    except ValueError:
        return None
    if m not in MODELS or not all(math.isfinite(x) for x in (a, w, amp)):
        return None
    return _key(m, a, w), amp


def scan_frf(path) -> tuple[dict, list[tuple[int, str]]]:
    """Finished points of an FRF CSV and the rows that do not count.

    Returns ({(model, f1, omega): T_amplitude}, [(line number, text)] of dropped rows).
    A row counts if it is newline-terminated, has the header's field count and (current
    format) its CRC32 matches; a point given twice keeps its first complete row. An
    unreadable header makes every line a dropped row."""
    done: dict = {}
    dropped: list = []
    path = Path(path)
    if not path.exists():
        return done, dropped
    with open(path, newline="", encoding="utf-8", errors="replace") as fh:
        lines = fh.read().splitlines(keepends=True)
    if not lines:
        return done, dropped
    head = tuple(lines[0].rstrip("\r\n").split(","))
    if head not in (HEADER, COLUMNS) or not lines[0].endswith("\n"):
        return done, [(i + 1, ln.rstrip("\r\n")) for i, ln in enumerate(lines)]
    checked = head == HEADER
    for i, ln in enumerate(lines[1:], start=2):
        if not ln.strip():
            continue
        r = _parse_row(ln, checked)
        if r is None:
            dropped.append((i, ln.rstrip("\r\n")))
        elif r[0] not in done:
            done[r[0]] = r[1]
    return done, dropped


def read_frf(path) -> dict:
    """Finished points of an FRF CSV: {(model, f1, omega): T_amplitude}. Rows that are
    incomplete (torn, failed check) are not finished points (see :func:`scan_frf`)."""
    return scan_frf(path)[0]


def _rewrite(path: Path, done: dict) -> None:
    from ...safeio import atomic_write

    text = ",".join(HEADER) + "\n" + "".join(format_row(m, a, w, amp)
                                               for (m, a, w), amp in done.items())
    atomic_write(path, text)


def _note(msg: str) -> None:
    sys.stderr.write(f"hystmech: note: {msg}\n")
    sys.stderr.flush()


# -- local worker processes die with their parent ------------------------------------------
PR_SET_PDEATHSIG = 1


def _worker_init(parent_pid: int) -> None:
    """Initializer of the local pool's workers: SIGKILL when the parent dies (Linux
    prctl), exit at once if it already has; SIGINT is left to the parent, which kills
    the pool (a Ctrl-C would otherwise raise in every worker)."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent_pid:
        os._exit(1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class SweepTerminated(KeyboardInterrupt):
    """SIGTERM reached a running sweep; the pool was killed, finished rows are kept."""

    def __init__(self, signum: int):
        super().__init__(f"terminated by signal {signum}")
        self.signum = signum


def _kill_pool(pool: cf.ProcessPoolExecutor) -> None:
    procs = list((getattr(pool, "_processes", None) or {}).values())
    manager = getattr(pool, "_executor_manager_thread", None)
    for p in procs:
        try:
            p.kill()
        except (OSError, ValueError, AttributeError):
            pass
    pool.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        try:
            p.join(timeout=5.0)
        except (OSError, ValueError, AssertionError, AttributeError):
            pass
    # The pool's manager thread closes its wake-up pipe when it sees the dead workers;
    # concurrent.futures' exit hook writes to that pipe without the pool's lock
    # (CPython 3.11), so exiting while the thread is still closing it printed an
    # "OSError: Bad file descriptor" traceback after our one line. Wait for the thread.
    if manager is not None:
        manager.join(timeout=10.0)


# one structure run many times: its generated code, the fastest per step, compiled
# once, unless $HYSTMECH_ENGINE says otherwise (methods/engine.py: use; workers inherit it)
@engine.use("generated", keep_explicit=True)
def run_sweep(points, csv_path, *, executor: cf.Executor | None = None,
              max_workers: int | None = None, progress: Callable | None = None,
              grid: dict | None = None, **point_kw) -> dict:
    """Compute the FRF points (model, f1 [N], Ω [rad/s]) not yet in ``csv_path``.

    executor: any concurrent.futures.Executor (e.g. ``distributed.Client(addr).get_executor()``
    to run on a Dask cluster); by default a ProcessPoolExecutor on ``max_workers`` (default
    all) local cores. Each finished point is appended to the CSV (columns model, f1, omega,
    T_amplitude) and fsync'ed at once; points already in the file are skipped, so an
    interrupted sweep resumes where it stopped. point_kw go to :func:`tension_amplitude`;
    they are checked before anything is written and stored beside the CSV
    (``frf.csv.settings.json``, per model): a resume with other settings is refused
    (ValueError) instead of mixing values of two protocols. One sweep per CSV at a time
    (a lock on its folder: a second one is refused naming the first); local
    workers are capped at the cores available. grid: {name: value} describing the grid
    the points come from (e.g. ``{"grid.n_omega": 116}``), stored and checked with the
    settings: a resume on another grid is refused naming the key instead of mixing the
    rows of two grids in one CSV.
    progress: True (a bar on stderr), a callable progress(fraction, message) called
    after each point, or None.
    Returns {"values": {(model, f1, omega): amplitude} for all requested points,
    "computed": number of points computed by this call, "wall_s"}.
    """
    from ...safeio import OutputLock

    from ...progress import resolve

    progress = resolve(progress, "sweep")
    csv_path = Path(csv_path)
    pts = [(str(m).lower(), float(a), float(w)) for m, a, w in points]
    settings = point_settings(**point_kw)     # before anything is written
    if grid:
        settings.update({str(k): _jsonable_grid(v) for k, v in grid.items()})
    if max_workers is not None and (isinstance(max_workers, bool) or
                                    not isinstance(max_workers, int) or max_workers < 1):
        raise ValueError(f"max_workers must be in [1, inf) (got {max_workers!r})")
    if executor is None and max_workers is not None and max_workers > available_cores():
        _note(f"{max_workers} workers asked for, {available_cores()} core(s) available: "
              f"using {available_cores()}")
        max_workers = available_cores()
    csv_path.parent.mkdir(parents=True, exist_ok=True)
    with OutputLock(csv_path.parent):
        return _run_sweep_locked(pts, csv_path, executor, max_workers, progress, settings,
                                 point_kw)


def _run_sweep_locked(pts, csv_path, executor, max_workers, progress, settings, point_kw):
    done, dropped = scan_frf(csv_path)
    _check_settings(csv_path, done, sorted({p[0] for p in pts}), settings)
    if dropped:
        ln, text = dropped[-1]
        more = f" and {len(dropped) - 1} more" if len(dropped) > 1 else ""
        _note(f"{csv_path.name}: dropped {len(dropped)} incomplete row(s) (line {ln}: "
              f"{text[:60]!r}{more}); their points are recomputed")
    _rewrite(csv_path, done)       # checked format, one row per point, torn rows gone
    todo, seen = [], set()
    for p in pts:
        k = _key(*p)
        if k not in done and k not in seen:
            seen.add(k)
            todo.append(p)
    total = len({_key(*p) for p in pts})
    n_done = total - len(todo)
    tic = time.perf_counter()
    if progress:
        progress(n_done / max(total, 1), f"{n_done}/{total} points already done")
    own = None
    if todo and executor is None:
        # (no more processes than points: each one imports and compiles before its first)
        workers = min(max_workers or available_cores(), len(todo))
        own = executor = cf.ProcessPoolExecutor(max_workers=workers, initializer=_worker_init,
                                                initargs=(os.getpid(),))
    computed = 0
    futs = []
    restore = _on_sigterm_raise() if own is not None else None
    try:
        futs = [executor.submit(_point_task, p, point_kw) for p in todo]
        with open(csv_path, "a", newline="") as fh:
            for fut in cf.as_completed(futs):
                (m, a, w), r = fut.result()
                amp = r["T_amplitude"]
                fh.write(format_row(m, a, w, amp))
                fh.flush()
                os.fsync(fh.fileno())
                done[_key(m, a, w)] = amp
                computed += 1
                n_done += 1
                if progress:
                    progress(n_done / total, f"{m} f1={a:g} N Ω={w:.4g} rad/s: "
                                             f"{amp:.4g} N ({n_done}/{total})")
    except BaseException:
        for f in futs:
            f.cancel()
        if own is not None:
            _kill_pool(own)
            own = None
        raise
    finally:
        if own is not None:
            own.shutdown(wait=True)
        if restore is not None:
            restore()
    values = {p: done[_key(*p)] for p in pts}
    return {"values": values, "computed": computed, "wall_s": time.perf_counter() - tic}


def _on_sigterm_raise():
    """While the local pool runs, SIGTERM raises SweepTerminated in the main thread (so
    the pool is killed on the way out). Returns the function restoring the old handler."""
    if threading.current_thread() is not threading.main_thread():
        return None
    try:
        old = signal.getsignal(signal.SIGTERM)

        def handler(signum, frame):
            raise SweepTerminated(signum)

        signal.signal(signal.SIGTERM, handler)
    except (ValueError, OSError):
        return None
    return lambda: signal.signal(signal.SIGTERM, old if old is not None else signal.SIG_DFL)


# -- analysis of the FRF: the regimes of §4.4 ---------------------------------------------------
def stuck_linear_amplitude(f1, omega):
    """Tension amplitude of the rig when the Masing tensioner sticks: linear tensioner with
    stiffness k + k0 and damping c0(Ω) (Bastien et al. (2007), eqs. (21a), (31))."""
    from ..rigs.belt_tensioner import MASING_PARAMS, linear_tension_amplitude, masing_damping

    k = MASING_PARAMS["k"] + MASING_PARAMS["k0"]
    return np.array([linear_tension_amplitude(w, k_t=k, c_t=masing_damping(w), f1=f1)
                     for w in np.atleast_1d(omega)])


def regimes(values: dict) -> dict:
    """Regime indicators of §4.4 from {(model, f1, Ω): amplitude}: per model and f1 the
    resonance pulsation, peak amplitude and amplitude/f1 gain at the peak; for Masing at
    f1 ≤ 27 N the largest relative deviation from the stuck linear response; for the
    modified Dahl model at f1 > 200 N whether a local peak shows near Ω = ω1/3."""
    out = {}
    models = sorted({k[0] for k in values})
    for m in models:
        per = {}
        for a in sorted({k[1] for k in values if k[0] == m}):
            ws = np.array(sorted(k[2] for k in values if k[0] == m and k[1] == a))
            amp = np.array([values[(m, a, w)] for w in ws])
            i = int(np.argmax(amp))
            d = {"omega_peak": float(ws[i]), "amplitude_peak": float(amp[i]),
                 "gain_peak": float(amp[i] / a) if a > 0 else math.nan}
            if m == "masing" and a <= 27.0 and ws.size:
                lin = stuck_linear_amplitude(a, ws)
                d["max_rel_dev_from_stuck_linear"] = float(np.max(np.abs(amp - lin) / lin))
            if m == "mdm" and a > 200.0 and ws.size >= 5:
                w3 = ws[i] / 3.0
                j = int(np.argmin(np.abs(ws - w3)))
                lo, hi = max(0, j - 3), min(ws.size, j + 4)
                seg = amp[lo:hi]
                k = lo + int(np.argmax(seg))
                local = 0 < k < ws.size - 1 and amp[k] > amp[k - 1] and amp[k] > amp[k + 1]
                d["omega1_over_3"] = float(w3)
                d["subharmonic_local_peak"] = bool(local)
                d["subharmonic_peak_omega"] = float(ws[k]) if local else math.nan
            per[f"{a:g}"] = d
        out[m] = per
    return out


# -- scenario runner ----------------------------------------------------------------------------
def _table(cfg, name, allowed):
    t = dict(cfg.get(name, {}) or {})
    bad = [k for k in t if k not in allowed]
    if bad:
        raise ValueError(f"unknown key {bad[0]!r} in [{name}]; allowed: {', '.join(allowed)}")
    return t


def run(cfg: dict, out, progress):
    """Scenario runner ``belt-tensioner-frf``: Fig. 21 of Bastien et al. (2007)."""
    import matplotlib.pyplot as plt

    from ...runner_io import ScenarioOutput

    g = _table(cfg, "grid", ("models", "f1", "omega_min", "omega_max", "n_omega", "reduced",
                             "reduced_f1", "reduced_n_omega"))
    s = _table(cfg, "simulation", ("t_window", "h", "rtol", "mdm_method"))
    w = _table(cfg, "sweep", ("workers", "steady_state", "ss_tol", "ss_periods", "ss_confirm"))
    models = [str(m).lower() for m in g.get("models", MODELS)]
    reduced = bool(g.get("reduced", False))
    f1 = [float(v) for v in (g.get("reduced_f1") if reduced else g.get("f1", F1_PAPER))]
    n_om = int(g.get("reduced_n_omega", 24) if reduced else g.get("n_omega", 116))
    if n_om < 1:
        raise ValueError(f"grid.n_omega must be in [1, inf) (got {n_om})")
    om = np.linspace(float(g.get("omega_min", 10.0)), float(g.get("omega_max", 125.0)), n_om)
    pts = frf_grid(models, f1, om)
    kw = dict(t_window=tuple(s.get("t_window", (17.0, 20.0))), h=float(s.get("h", 1e-5)),
              rtol=float(s.get("rtol", 1e-8)),
              steady_state=bool(w.get("steady_state", SS_DEFAULT["steady_state"])),
              ss_tol=float(w.get("ss_tol", SS_DEFAULT["ss_tol"])),
              ss_periods=int(w.get("ss_periods", 3)),
              ss_confirm=int(w.get("ss_confirm", 3)))
    workers = int(w.get("workers", 0)) or None
    if workers is not None and workers < 1:
        raise ValueError(f"sweep.workers must be in [0, inf) (0 = all cores) (got {workers})")
    for m in models:
        mkw = dict(kw, method=str(s["mdm_method"])) if m == "mdm" and "mdm_method" in s else kw
        point_settings(**mkw)      # every setting checked before the first row is written
    out = Path(out)
    # the mdm method applies to the modified Dahl points only; run the models apart
    res_all = {"values": {}, "computed": 0, "wall_s": 0.0}
    n_tot = len(pts)
    base = [0]

    def prog(frac, msg, n=None):
        progress(frac, msg)

    from ...limits import first

    grid = {"grid.reduced": reduced, "grid.f1": f1, "grid.omega_min": float(om[0]),
            "grid.omega_max": float(om[-1]), "grid.n_omega": n_om}
    for m in models:
        # a work-limited run (hystmech run --max-work N) computes the first N points of
        # each model's grid, each as in the full sweep
        mpts = first([p for p in pts if p[0] == m])
        mkw = dict(kw)
        if m == "mdm" and "mdm_method" in s:
            mkw["method"] = str(s["mdm_method"])
        offset = base[0]

        def pm(frac, msg, offset=offset, k=len(mpts)):
            progress((offset + frac * k) / n_tot, msg)

        r = run_sweep(mpts, out / "frf.csv", max_workers=workers, progress=pm, grid=grid,
                      **mkw)
        base[0] += len(mpts)
        res_all["values"].update(r["values"])
        res_all["computed"] += r["computed"]
        res_all["wall_s"] += r["wall_s"]
    vals = res_all["values"]
    fig, axes = plt.subplots(1, len(models), figsize=(6 * len(models), 4.5), squeeze=False)
    names = {"mdm": "modified Dahl", "masing": "Masing with viscous damping"}
    cmap = plt.get_cmap("viridis")
    for ax, m in zip(axes[0], models):
        for i, a in enumerate(f1):
            x = [w for w in om if (m, a, w) in vals]     # all of them unless work-limited
            if not x:
                continue
            y = [vals[(m, a, w)] for w in x]
            ax.plot(x, y, "-" if a <= 120.0 else "-.", color=cmap(i / max(len(f1) - 1, 1)),
                    lw=1.0, marker="." if len(x) < 4 else None, label=f"{a:g} N")
        ax.set_xlabel("Ω [rad/s]")
        ax.set_ylabel("max(T) − min(T) [N]")
        ax.set_title(f"{names.get(m, m)} (Bastien et al. 2007, Fig. 21)", fontsize=9)
        ax.grid(alpha=0.3)
    axes[0][-1].legend(fontsize=6, ncol=2, title="f1")
    reg = regimes(vals)
    summary = {"n_points": len(pts), "points_in_result": len(vals),
               "computed_now": res_all["computed"],
               "sweep_wall_s": res_all["wall_s"], "reduced_grid": reduced,
               "settings": {k: (list(v) if isinstance(v, tuple) else v) for k, v in kw.items()},
               "regimes": reg, "metrics": _frf_metrics(reg)}
    return ScenarioOutput(summary=summary, figures={"fig21_frf": fig})


def _frf_metrics(reg: dict) -> dict:
    m = {}
    for model, per in reg.items():
        for a, d in per.items():
            m[f"{model}_f1_{a}_omega_peak"] = d["omega_peak"]
            m[f"{model}_f1_{a}_amplitude_peak"] = d["amplitude_peak"]
            if "max_rel_dev_from_stuck_linear" in d:
                m[f"{model}_f1_{a}_rel_dev_stuck_linear"] = d["max_rel_dev_from_stuck_linear"]
            if "subharmonic_local_peak" in d:
                m[f"{model}_f1_{a}_subharmonic_peak"] = float(d["subharmonic_local_peak"])
    return m
