"""Scenarios: one TOML file per runnable case, run by ``hystmech run``.

A scenario names a registered runner (``"drive"``: a force element under an imposed
input, or another of :data:`hystmech.runners.REGISTRY`, or one an installed package
declares in the entry-point group ``hystmech.runners``). A runner is called as
``function(config: dict, out: Path, progress: Callable[[float, str], None])`` and
returns a :class:`ScenarioOutput`. Before it runs, the config is checked against the
runner's schema (:mod:`hystmech.schema`) and its work estimate against the limits
(:mod:`hystmech.limits`); after it ran, its time series are checked to be finite, then
this module writes summary.json, timeseries.csv and the PNG figures atomically (a
failed run never leaves half-written files).

A scenario file is data: it is read only if it is a regular file of at most
MAX_SCENARIO_BYTES, its nesting is bounded before parsing, a key starting with ``_`` is
refused, and every file it names (figures) lands inside the output directory, which one
run at a time may write (:class:`hystmech.safeio.OutputLock`). summary.json records the
config up to MAX_SUMMARY_CONFIG bytes and names the scenario file for the rest.
"""
from __future__ import annotations

import json
import os
import re
import sys
import time
import tomllib
from importlib import resources
from pathlib import Path
from typing import Callable

import numpy as np

from . import limits as _limits
from . import schema
from .drive import drive
from .runner_io import (NonFiniteResult, ScenarioError, ScenarioOutput,  # noqa: F401
                        build_element, jsonable)
from .runners import resolve
from .safeio import (OutputLock, atomic_write, inside,  # noqa: F401  (atomic_write: re-exported)
                     read_regular_file)
from .schema import INTERNAL_KEYS, TOP_LEVEL  # noqa: F401  (INTERNAL_KEYS: re-exported)
from .signals import from_config

DEFAULT_SCENARIO = "belt-tensioner-mdm"


# -- finding and reading scenarios ------------------------------------------------------
def scenario_dir() -> Path:
    return Path(str(resources.files("hystmech.scenarios")))


def list_scenarios() -> list[tuple[str, str]]:
    """(name, title) of every scenario shipped with hystmech, sorted by name."""
    out = []
    for p in sorted(scenario_dir().glob("*.toml")):
        try:
            cfg = tomllib.loads(p.read_text())
            out.append((p.stem, cfg.get("title", "")))
        except tomllib.TOMLDecodeError:
            out.append((p.stem, "(malformed TOML)"))
    return out


MAX_SCENARIO_BYTES = 1 << 20
"""Largest scenario file read (1 MiB; tomllib takes about a second per MB): large data
belongs in a CSV or .npz file that a runner reads, not in the TOML."""
MAX_NESTING = 32
"""Deepest nesting of arrays/inline tables and longest dotted key a scenario may hold;
checked by a scan before parsing (tomllib recurses, and slows quadratically on dotted
keys)."""

_TOML_STRINGS = re.compile(r'"""(?:[^\\]|\\.)*?"""|\'\'\'.*?\'\'\'|"(?:[^"\\\n]|\\.)*"'
                           r"|'[^'\n]*'|#[^\n]*", re.S)
_KEY_CHARS = np.zeros(256, dtype=bool)
_KEY_CHARS[np.frombuffer(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-. \t",
                         dtype=np.uint8)] = True


def check_toml_shape(text: str, path) -> None:
    """ScenarioError if ``text`` nests arrays/inline tables deeper than MAX_NESTING or
    holds a dotted key of more than MAX_NESTING parts: a vectorised scan of the text
    with its strings and comments blanked out (linear time, no recursion)."""
    bare = _TOML_STRINGS.sub("S", text)
    b = np.frombuffer(bare.encode("utf-8", "replace"), dtype=np.uint8)
    if b.size == 0:
        return
    d = np.zeros(b.size, dtype=np.int32)
    d[(b == ord("[")) | (b == ord("{"))] = 1
    d[(b == ord("]")) | (b == ord("}"))] = -1
    depth = np.cumsum(d)
    if depth.max() > MAX_NESTING:
        line = bare.count("\n", 0, int(np.argmax(depth > MAX_NESTING))) + 1
        raise ScenarioError(f"{path}: arrays or inline tables nested deeper than "
                            f"{MAX_NESTING} levels (line {line})")
    is_dot = b == ord(".")
    if is_dot.any():
        seg = np.cumsum(~_KEY_CHARS[b])
        dots = np.bincount(seg[is_dot])
        if dots.max() >= MAX_NESTING:
            at = int(np.flatnonzero(is_dot & (seg == int(np.argmax(dots))))[0])
            line = bare.count("\n", 0, at) + 1
            raise ScenarioError(f"{path}: a dotted key of more than {MAX_NESTING} parts "
                                f"(line {line})")


def load_scenario(name_or_path: str | os.PathLike | None) -> dict:
    """Read a scenario by name (a file in scenarios/) or by path to a TOML file.

    Only a regular file of at most MAX_SCENARIO_BYTES is read, its nesting is checked
    before parsing (MAX_NESTING) and a top-level key starting with ``_`` is refused."""
    if name_or_path is None:
        name_or_path = DEFAULT_SCENARIO
    s = str(name_or_path)
    path = Path(s)
    if not (s.endswith(".toml") or os.path.lexists(path)):
        path = scenario_dir() / f"{s}.toml"
        if not path.exists():
            known = ", ".join(n for n, _ in list_scenarios())
            raise ScenarioError(f"unknown scenario {s!r}; known: {known}")
    if not os.path.lexists(path):
        raise ScenarioError(f"scenario file not found: {path}")
    if path.is_dir():
        raise ScenarioError(f"scenario path {path} is a directory, not a TOML file")
    try:
        raw = read_regular_file(path, "scenario file", MAX_SCENARIO_BYTES)
    except FileNotFoundError:
        raise ScenarioError(f"scenario file not found: {path}") from None
    except OSError as e:
        raise ScenarioError(f"cannot read scenario file {path}: {e.strerror or e}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ScenarioError(f"scenario file {path} is not UTF-8 text") from None
    check_toml_shape(text, path)
    try:
        cfg = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"malformed TOML in {path}: {_one_line(e)}") from None
    except RecursionError:   # pragma: no cover - check_toml_shape bounds the nesting
        raise ScenarioError(f"{path}: nested too deeply") from None
    for k in cfg:
        if k.startswith("_"):
            raise ScenarioError(f"unknown key {k!r} in {path.name} (keys starting with _ are "
                                "reserved)")
    if "name" in cfg:           # it names the default output directory runs/NAME
        TOP_LEVEL["name"].check("name", cfg["name"])
    cfg.setdefault("name", path.stem)
    cfg["_path"] = str(path)
    return cfg


# -- writing --------------------------------------------------------------------------------


def write_timeseries(path: Path, series: dict) -> None:
    if not series:
        return
    names = list(series)
    cols = [np.asarray(series[k], dtype=float).ravel() for k in names]
    n = max(c.size for c in cols)
    mat = np.full((n, len(cols)), np.nan)
    for j, c in enumerate(cols):
        mat[: c.size, j] = c
    import io

    buf = io.StringIO()
    np.savetxt(buf, mat, delimiter=",", header=",".join(names), comments="", fmt="%.10g")
    atomic_write(path, buf.getvalue())


FIGURE_DPI = 110


def save_figure(fig, path: Path) -> None:
    """Write ``fig`` as a PNG at :data:`FIGURE_DPI`, cropped to its drawn content plus
    matplotlib's pad (what ``savefig(bbox_inches="tight")`` gives), atomically; closes
    the figure."""
    import io
    import math

    import matplotlib
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    dpi = FIGURE_DPI
    buf = io.BytesIO()
    # savefig(bbox_inches="tight") draws the figure twice: a dry run to lay it out and
    # measure it, then the picture. Drawn once and cropped to the same box, a figure
    # costs about a quarter less (0.32 -> 0.25 s for three panels of 20k-point lines);
    # a figure with content outside its own area (the tight box larger than the
    # canvas) is left to savefig, which enlarges the canvas for it.
    fig.set_dpi(dpi)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    box = fig.get_tightbbox(canvas.get_renderer()).padded(
        matplotlib.rcParams["savefig.pad_inches"])
    W, H = canvas.get_width_height()
    x0, x1 = math.floor(box.x0 * dpi), math.ceil(box.x1 * dpi)
    y0, y1 = H - math.ceil(box.y1 * dpi), H - math.floor(box.y0 * dpi)
    if 0 <= x0 < x1 <= W and 0 <= y0 < y1 <= H:
        img = np.asarray(canvas.buffer_rgba())[y0:y1, x0:x1]
        matplotlib.image.imsave(buf, img, format="png", dpi=dpi)
    else:
        fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    atomic_write(path, buf.getvalue())
    plt.close(fig)


def progress_printer(stream=None, quiet: bool = False) -> Callable[[float, str], None]:
    """A tqdm progress bar on ``stream`` (default stderr) fed by a runner's
    ``progress(fraction, message)``; drawn only when the stream is a terminal (logs and
    pipes get the result and error lines only) and not at all when ``quiet``
    (``hystmech run --quiet``). See :mod:`hystmech.progress`."""
    from .progress import bar

    return bar(stream, quiet=quiet)


def end_progress_line() -> None:
    """Close a progress bar left open by a run that stopped (before an error line)."""
    from .progress import close

    close()


# -- running ----------------------------------------------------------------------------------
def resolve_runner(spec: str, scenario_path: str | None = None, *, trust: bool = False):
    """The registered runner ``spec`` names (see :func:`hystmech.runners.resolve`)."""
    return resolve(spec, scenario_path, trust=trust)


def check_out_dir(out) -> Path:
    """The output directory ``out`` checked without creating anything: ScenarioError if
    it cannot be one (empty, an existing file, under a file, an existing ancestor not
    writable). Commands that work long before they write (identify) call it first."""
    s = str(out)
    if not s.strip():
        raise ScenarioError("--out must name a directory (got an empty string)")
    p = Path(s)
    if p.exists() and not p.is_dir():
        raise ScenarioError(f"--out {s} exists and is not a directory")
    for parent in p.parents:
        if parent.exists() and not parent.is_dir():
            raise ScenarioError(f"--out {s} lies under {parent}, which is a file")
    first = next((q for q in (p, *p.parents) if q.exists()), None)
    if first is not None and not os.access(first, os.W_OK | os.X_OK):
        raise ScenarioError(f"the output directory {s} is not writable ({first} is not)")
    return p


def prepare_out_dir(out) -> Path:
    """Create the output directory ``out`` (checked by :func:`check_out_dir` first)."""
    p = check_out_dir(out)
    s = str(out)
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ScenarioError(f"cannot create the output directory {s}: "
                            f"{e.strerror or type(e).__name__}") from None
    if not os.access(p, os.W_OK | os.X_OK):
        raise ScenarioError(f"the output directory {s} is not writable")
    return p


def check_finite_outputs(series: dict) -> None:
    """Raise NonFiniteResult naming the first non-finite sample of any time series (and
    its time). A sample whose time is NaN is padding (series of unequal length), not a
    result; the time column of a group is ``PREFIX.t`` or ``t``."""
    times = {}
    for name, arr in series.items():
        try:
            a = np.asarray(arr, dtype=float).ravel()
        except (TypeError, ValueError):
            continue
        times[name] = a
    for name, a in times.items():
        prefix = name.rsplit(".", 1)[0] + ".t" if "." in name else "t"
        t = times.get(prefix, times.get("t"))
        bad = ~np.isfinite(a)
        if t is not None and t is not a and t.size == a.size:
            bad &= np.isfinite(t)      # padding where the time itself is absent
        elif name in ("t",) or name.endswith(".t"):
            # a time column may end in NaN padding, nowhere else
            n_pad = a.size - (np.flatnonzero(~np.isnan(a))[-1] + 1 if (~np.isnan(a)).any() else 0)
            bad[a.size - n_pad:] = False
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            when = (f" at t = {t[i]:.6g} s" if t is not None and t is not a and t.size == a.size
                    else "")
            raise NonFiniteResult(f"the result became non-finite: {name} = {a[i]}{when} "
                                  f"(sample {i}); nothing was written")


def run_scenario(name_or_path=None, out: str | os.PathLike | None = None,
                 progress: Callable | bool | None = None, overrides: dict | None = None, *,
                 trust_runner: bool = False, limits: dict | bool | None = None) -> ScenarioOutput:
    """Run a scenario and write its outputs into ``out`` (default ./runs/NAME).

    The config is checked against the runner's schema and work limits first
    (``limits``: {"steps", "samples", "points": cap or None}, False lifts them; see
    :mod:`hystmech.limits`; ``"work": N`` instead cuts the run to its first N units of
    output, e.g. sweep points, each computed as in the full run); ``trust_runner`` allows a ``module:function`` runner from the
    scenario file's own directory. Non-finite outputs raise NonFiniteResult and nothing
    is written. progress: a callable progress(fraction, message), True/None (a tqdm bar
    on stderr when it is a terminal) or False (none)."""
    cfg = load_scenario(name_or_path)
    if overrides:
        for k, v in overrides.items():
            cfg[k] = v
    if "runner" in cfg:
        runner = resolve_runner(cfg["runner"], cfg.get("_path"), trust=trust_runner)
    else:
        runner = _default_runner(cfg, trust_runner)
    if runner.schema is not None:
        schema.check(cfg, runner.schema, runner.name)
    check_figure_names(cfg)
    work = None
    if isinstance(limits, dict) and "work" in limits:
        limits = dict(limits)
        work = limits.pop("work")
    with _limits.work_limit(work):
        work = _limits.max_work()       # (HYSTMECH_MAX_WORK checked before anything runs)
    estimate = _limits.check(runner, cfg, limits)
    out_arg = out if out is not None else Path("runs") / cfg["name"]
    created = _missing_dirs(out_arg)
    out = prepare_out_dir(out_arg)
    plots, env = _import_pyplot_meanwhile()
    try:
        with OutputLock(out), _limits.work_limit(work):
            res = _run_and_write(runner, cfg, out, progress, estimate, work)
    except BaseException:
        _remove_if_empty(created)      # a refused or failed run leaves no empty --out
        raise
    finally:
        plots.join()
        _restore_env(env)
    res.out = out
    return res


def _import_pyplot_meanwhile():
    """Select matplotlib's Agg backend and import matplotlib.pyplot in a thread while
    the runner computes (the runner's own import waits for it): on a fresh install
    ~1.6 s (its font list is built then), most of it overlapped with numba compiling
    the model, which runs LLVM outside the GIL. Agg is chosen by $MPLBACKEND before the
    thread starts (matplotlib reads it at import), so a runner importing pyplot first
    gets Agg too. Returns (thread, saved $MPLBACKEND) for :func:`_restore_env` after
    joining the thread."""
    import threading

    env = _UNTOUCHED
    if "matplotlib" in sys.modules:
        import matplotlib

        matplotlib.use("Agg")
    else:
        env = os.environ.get("MPLBACKEND")      # (None: unset, restored as unset)
        os.environ["MPLBACKEND"] = "Agg"

    def imp():
        try:
            import matplotlib
            import matplotlib.pyplot  # noqa: F401

            matplotlib.use("Agg")
        except Exception:  # noqa: BLE001 - the runner's own import reports it
            pass

    th = threading.Thread(target=imp, name="hystmech-import-pyplot", daemon=True)
    th.start()
    return th, env


_UNTOUCHED = object()


def _restore_env(env) -> None:
    if env is _UNTOUCHED:
        return
    if env is None:
        os.environ.pop("MPLBACKEND", None)
    else:
        os.environ["MPLBACKEND"] = env


def _default_runner(cfg: dict, trust: bool):
    """The ``drive`` runner of a scenario that names none, when it has what drive needs;
    otherwise a ScenarioError saying that ``runner`` is missing and what it defaults to."""
    from .runners import known_runners

    if "element" in cfg and "input" in cfg:
        return resolve_runner("drive", cfg.get("_path"), trust=trust)
    have = ", ".join(f"[{k}]" for k in cfg if k not in INTERNAL_KEYS + ("name", "title",
                                                                        "reference")) or "none"
    raise ScenarioError(f"{Path(cfg.get('_path', cfg.get('name', 'scenario'))).name} names no "
                        "runner: add runner = \"NAME\" (known: "
                        f"{', '.join(known_runners())}); without it the default runner "
                        "\"drive\" is used, which needs [element] and [input] tables "
                        f"(this file has {have})")


def check_figure_names(cfg: dict) -> None:
    """ScenarioError (exit 2) if two cases of the scenario name the same figure (one
    would overwrite the other's PNG), naming both: ``[[T]]`` arrays of tables with a
    ``figure`` key and ``figures = [...]`` lists, across the whole file."""
    seen: dict[str, str] = {}

    def add(stem, where):
        if not isinstance(stem, str):
            return
        key = stem.casefold()           # one PNG on a case-insensitive file system too
        if key in seen:
            raise ScenarioError(f"{seen[key]} and {where} both name the figure {stem!r}: "
                                "one PNG would overwrite the other; give each its own name")
        seen[key] = where

    for k, v in cfg.items():
        if k in INTERNAL_KEYS:
            continue
        tables = v if isinstance(v, list) else [v]
        for i, t in enumerate(tables):
            if not isinstance(t, dict):
                continue
            name = f"{k}[{i}]" if isinstance(v, list) else f"[{k}]"
            if isinstance(v, list) and isinstance(t.get("label"), str):
                name += f" ({t['label']})"
            add(t.get("figure"), name)
            if isinstance(t.get("figures"), list):
                for j, f in enumerate(t["figures"]):
                    add(f, f"{name} figures[{j}]")


def _missing_dirs(out) -> list:
    """The folders of ``out`` that do not exist yet (deepest first): created by this run,
    removed again if it is refused before writing anything."""
    p, missing = Path(str(out)), []
    try:
        while not os.path.lexists(p) and p != p.parent:
            missing.append(p)
            p = p.parent
    except OSError:
        return []
    return missing


def _remove_if_empty(dirs) -> None:
    for d in dirs:
        try:
            d.rmdir()           # only an empty folder goes; anything written stays
        except OSError:
            return


def _no_progress(fraction: float, message: str = "") -> None:
    return None


def _run_and_write(runner, cfg, out, progress, estimate, work):
    """Run the runner and write what it returns: checked first (finite, names inside
    ``out``), then every file atomically."""

    if progress is None or progress is True:
        progress = progress_printer()
    elif progress is False:
        progress = _no_progress
    t0 = time.perf_counter()
    res = runner(cfg, out, progress)
    wall = time.perf_counter() - t0
    check_finite_outputs(res.timeseries)
    # every name first, so that a refused one leaves nothing half written
    targets = [(inside(out, f"{stem}.png", "figure"), fig) for stem, fig in res.figures.items()]
    extra = [(inside(out, fname, "output file"), data) for fname, data in res.files.items()]
    summary = {"scenario": cfg["name"], "title": cfg.get("title", ""),
               "reference": cfg.get("reference", ""),
               "config": summary_config(cfg),
               "work_estimate": {k: v[0] for k, v in estimate.items()},
               "wall_time_s": wall}
    if work is not None:            # a cut run says so: its outputs are the first part
        summary["work_limit"] = work
    summary.update(res.summary)
    write_timeseries(out / "timeseries.csv", res.timeseries)
    for path, fig in targets:
        save_figure(fig, path)
    for path, data in extra:
        atomic_write(path, data)
    atomic_write(out / "summary.json", json.dumps(jsonable(summary), indent=2))
    return res


MAX_SUMMARY_CONFIG = 64 * 1024     # bytes of config copied into summary.json


def summary_config(cfg: dict) -> dict:
    """The scenario's config as summary.json records it: the whole table when its JSON
    is at most MAX_SUMMARY_CONFIG bytes, else each top-level entry that fits, and a
    note naming the file for the rest (a 50 MB description is not copied)."""
    full = {k: v for k, v in cfg.items() if k not in INTERNAL_KEYS}
    if len(json.dumps(jsonable(full))) <= MAX_SUMMARY_CONFIG:
        return full
    kept, left = {}, []
    budget = MAX_SUMMARY_CONFIG
    for k, v in full.items():
        n = len(json.dumps(jsonable(v)))
        if n <= budget // 4:
            kept[k] = v
            budget -= n
        else:
            left.append(k)
    kept["_omitted"] = (f"{', '.join(left)}: too large to copy; see the scenario file "
                        f"{cfg.get('_path', '')}")
    return kept


def _one_line(e) -> str:
    return " ".join(str(e).split())


def run_drive(cfg: dict, out: Path, progress) -> ScenarioOutput:
    """Built-in runner: drive the [element] with the [input] signal."""
    import matplotlib.pyplot as plt

    if "element" not in cfg or "input" not in cfg:
        raise ScenarioError("a drive scenario needs [element] and [input] tables")
    el = build_element(cfg["element"])
    t, u = from_config(cfg["input"])
    solver = dict(cfg.get("solver", {}))
    rtol = solver.pop("rtol", 1e-8)
    if solver:
        raise ScenarioError(f"unknown solver option {next(iter(solver))!r}; allowed: rtol")
    progress(0.0, f"driving {el.name} over {t.size} samples")
    r = drive(el, t, u, rtol=rtol)
    progress(1.0, "done")
    fig, ax = plt.subplots(1, 2, figsize=(10, 4))
    ax[0].plot(r.t, r.force)
    ax[0].set_xlabel("t [s]"); ax[0].set_ylabel("F [N]")
    ax[1].plot(r.u, r.force)
    ax[1].set_xlabel("u [m]"); ax[1].set_ylabel("F [N]")
    fig.suptitle(cfg.get("title", el.name))
    summary = {"element": repr(el), "n_samples": int(t.size), "solver": {"rtol": rtol},
               "metrics": {"F_min": float(r.force.min()), "F_max": float(r.force.max())}}
    return ScenarioOutput(summary=summary, timeseries=r.signals(), figures={"force": fig})
