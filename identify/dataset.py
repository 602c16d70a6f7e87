"""Measured data sets: time, displacement, force and optional extra channels.

A :class:`Dataset` holds equal-length arrays in SI units: ``t`` [s] (strictly
increasing), ``u`` [m] (displacement), ``force`` [N], optionally ``v`` [m/s] (measured
velocity) and named extra channels (e.g. the damper voltage [V]).
Load one from CSV (:func:`load_csv`, columns chosen by name, unit factors applied) or
from .npz (:func:`load_npz`); cut it to a window, resample it on a uniform grid and
split it into cycles between the displacement's extrema.

Bad input is never silently repaired: a missing column, non-monotonic time, NaN or
empty rows (reported with their count and row numbers), or a window with too few
samples raise a ValueError that names the problem.
"""
from __future__ import annotations

import csv
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

MIN_SAMPLES = 8  # fewest samples a window may hold (a derivative and a loop need a few)
# largest magnitude a value may have: its square (energies, RMSE, correlations) must stay
# below the float64 limit 1.8e308
OVERFLOW_LIMIT = 1e150
# smallest magnitude the largest value may have: fitted gains scale as its inverse
UNDERFLOW_LIMIT = 1.0 / OVERFLOW_LIMIT


def _series(name: str, a, n: int | None = None) -> np.ndarray:
    arr = np.ascontiguousarray(np.asarray(a, dtype=float)).ravel()
    if n is not None and arr.size != n:
        raise ValueError(f"{name} must have the same length as t ({n}), got {arr.size}")
    bad = ~np.isfinite(arr)
    if bad.any():
        idx = np.flatnonzero(bad)
        where = ", ".join(str(i) for i in idx[:5]) + (" ..." if idx.size > 5 else "")
        raise ValueError(f"{name} has {idx.size} NaN/infinite sample(s) at index {where}")
    return arr


@dataclass
class Dataset:
    """Measured histories: t [s], u [m], force [N], optional v [m/s] and channels.

    Construct directly from arrays (validated: finite, equal lengths, t strictly
    increasing, at least ``MIN_SAMPLES`` samples) or with :func:`load_csv` /
    :func:`load_npz`.
    """

    t: np.ndarray
    u: np.ndarray
    force: np.ndarray
    v: np.ndarray | None = None
    channels: dict = field(default_factory=dict)
    source: str = ""

    def __post_init__(self):
        self.t = _series("t", self.t)
        n = self.t.size
        if n < MIN_SAMPLES:
            raise ValueError(f"a data set needs at least {MIN_SAMPLES} samples (got {n})")
        dt = np.diff(self.t)
        if np.any(dt <= 0):
            k = int(np.flatnonzero(dt <= 0)[0])
            nbad = int(np.count_nonzero(dt <= 0))
            raise ValueError(f"time must be strictly increasing: {nbad} non-increasing step(s), "
                             f"first t[{k + 1}] = {self.t[k + 1]:.9g} <= t[{k}] = {self.t[k]:.9g}")
        self.u = _series("displacement", self.u, n)
        self.force = _series("force", self.force, n)
        if self.v is not None:
            self.v = _series("velocity", self.v, n)
        self.channels = {str(k): _series(str(k), a, n) for k, a in dict(self.channels).items()}

    def check_usable(self, purpose: str = "this") -> "Dataset":
        """Raise ValueError (one sentence) if the data cannot carry a fit or a comparison:
        constant displacement (e.g. a unit factor of 0), constant force (e.g. all zero),
        or values so large that their squares overflow. Returns self."""
        for name, a, unit in (("displacement", self.u, "m"), ("force", self.force, "N"),
                              ("time", self.t, "s")):
            big = float(np.max(np.abs(a)))
            if big > OVERFLOW_LIMIT:
                raise ValueError(f"{name} values up to {big:.3g} {unit} overflow in {purpose} "
                                 f"(|value| must stay below {OVERFLOW_LIMIT:g}; check the unit "
                                 "factors)")
        for name, a, unit in (("displacement", self.u, "m"), ("force", self.force, "N")):
            big = float(np.max(np.abs(a)))
            if 0.0 < big < UNDERFLOW_LIMIT:
                raise ValueError(f"{name} values of at most {big:.3g} {unit} underflow in "
                                 f"{purpose} (the largest |value| must exceed "
                                 f"{UNDERFLOW_LIMIT:g}; check the unit factors)")
            span = float(np.ptp(a))
            if not span > 1e-12 * float(np.max(np.abs(a))) or span == 0.0:
                raise ValueError(f"the measured {name} is constant ({name} = {a[0]:.6g} {unit} "
                                 f"at all {a.size} samples): nothing to use for {purpose}")
        return self

    # -- basic views ---------------------------------------------------------------------
    def __len__(self) -> int:
        return int(self.t.size)

    @property
    def displacement(self) -> np.ndarray:
        return self.u

    @property
    def velocity(self) -> np.ndarray:
        """Measured velocity [m/s] if present, else the central-difference derivative of u."""
        if self.v is not None:
            return self.v
        return np.gradient(self.u, self.t)

    @property
    def fs(self) -> float:
        """Mean sampling rate [Hz]."""
        return (self.t.size - 1) / (self.t[-1] - self.t[0])

    def channel(self, name: str) -> np.ndarray:
        if name not in self.channels:
            known = ", ".join(self.channels) or "none"
            raise ValueError(f"no channel {name!r} in the data set (channels: {known})")
        return self.channels[name]

    def _take(self, sl) -> "Dataset":
        return Dataset(t=self.t[sl], u=self.u[sl], force=self.force[sl],
                       v=None if self.v is None else self.v[sl],
                       channels={k: a[sl] for k, a in self.channels.items()},
                       source=self.source)

    # -- windows, resampling, cycles -------------------------------------------------------
    def window(self, t0: float | None = None, t1: float | None = None, *,
               min_samples: int = MIN_SAMPLES) -> "Dataset":
        """The samples with t0 <= t <= t1 [s] (None: from the start / to the end).

        ValueError if fewer than ``min_samples`` samples fall in the window.
        """
        lo = self.t[0] if t0 is None else float(t0)
        hi = self.t[-1] if t1 is None else float(t1)
        if not (np.isfinite(lo) and np.isfinite(hi)) or hi <= lo:
            raise ValueError(f"window must satisfy t0 < t1 (got t0={t0!r}, t1={t1!r})")
        i0 = int(np.searchsorted(self.t, lo, side="left"))
        i1 = int(np.searchsorted(self.t, hi, side="right"))
        if i1 - i0 < max(int(min_samples), 2):
            raise ValueError(f"window [{lo:g}, {hi:g}] s holds {max(i1 - i0, 0)} sample(s); "
                             f"at least {max(int(min_samples), 2)} needed (data span "
                             f"[{self.t[0]:g}, {self.t[-1]:g}] s)")
        return self._take(slice(i0, i1))

    def resample(self, fs: float | None = None, *, dt: float | None = None) -> "Dataset":
        """Linear interpolation of every channel onto a uniform grid of rate fs [Hz]
        (or step dt [s]) spanning the data."""
        if (fs is None) == (dt is None):
            raise ValueError("resample needs exactly one of fs (Hz) or dt (s)")
        step = 1.0 / float(fs) if fs is not None else float(dt)
        if not np.isfinite(step) or step <= 0:
            raise ValueError(f"resample step must be in (0, inf) s (got {step!r})")
        n = int(np.floor((self.t[-1] - self.t[0]) / step * (1 + 1e-12))) + 1
        if n < MIN_SAMPLES:
            raise ValueError(f"resampling at step {step:g} s leaves {n} sample(s); at least "
                             f"{MIN_SAMPLES} needed")
        tn = self.t[0] + step * np.arange(n)

        def ip(a):
            return np.interp(tn, self.t, a)

        return Dataset(t=tn, u=ip(self.u), force=ip(self.force),
                       v=None if self.v is None else ip(self.v),
                       channels={k: ip(a) for k, a in self.channels.items()}, source=self.source)

    def turning_points(self, tol: float | None = None) -> np.ndarray:
        """Indices of the displacement's alternating extrema (see :func:`turning_points`)."""
        return turning_points(self.u, tol)

    def cycles(self, tol: float | None = None, start: str = "min") -> list["Dataset"]:
        """Split into cycles between successive displacement minima (start="min") or
        maxima (start="max"); a cycle is u's run from one such extremum to the next.

        Reversals smaller than ``tol`` [m] are ignored (see :func:`turning_points`); the
        record's ends count as extrema only where u is flat there, so a record cut
        mid-stroke yields no partial cycle.
        """
        if start not in ("min", "max"):
            raise ValueError(f"start must be 'min' or 'max' (got {start!r})")
        tp = self.turning_points(tol)
        # the record's first/last sample is a turning point only if u is flat there
        # (otherwise the record was simply cut mid-stroke)
        du = np.abs(np.diff(self.u))
        flat = 0.05 * du.max() if du.size else 0.0
        if tp.size and tp[-1] == self.u.size - 1 and du[-1] > flat:
            tp = tp[:-1]
        if tp.size and tp[0] == 0 and du[0] > flat:
            tp = tp[1:]
        if tp.size < 3:
            return []
        first_is_min = self.u[tp[0]] < self.u[tp[1]]
        is_min = np.zeros(tp.size, dtype=bool)
        is_min[(0 if first_is_min else 1)::2] = True
        ends = tp[is_min] if start == "min" else tp[~is_min]
        out = []
        for a, b in zip(ends[:-1], ends[1:]):
            if b - a + 1 >= MIN_SAMPLES:
                out.append(self._take(slice(int(a), int(b) + 1)))
        return out

    # -- saving ------------------------------------------------------------------------------
    def to_npz(self, path) -> None:
        """Save as .npz (keys t, u, F, optional v, channel names: the default names of
        :func:`load_npz` and :func:`load_csv` alike), atomically."""
        import io

        from ..safeio import atomic_write

        arrays = {"t": self.t, "u": self.u, "F": self.force}
        if self.v is not None:
            arrays["v"] = self.v
        arrays.update(self.channels)
        buf = io.BytesIO()
        np.savez(buf, **arrays)
        atomic_write(Path(path), buf.getvalue())

    def __repr__(self) -> str:
        ch = ", ".join(self.channels)
        return (f"Dataset({self.t.size} samples, t = [{self.t[0]:g}, {self.t[-1]:g}] s"
                f"{', velocity' if self.v is not None else ''}{', ' + ch if ch else ''})")


def turning_points(u, tol: float | None = None) -> np.ndarray:
    """Indices of the alternating extrema of u.

    A reversal counts only once u has moved back by more than ``tol`` [m] from the
    running extremum (default: 2 % of the range of u), so measurement noise does not
    create spurious cycles. The first index is the extremum before the first move, the
    last one the running extremum at the end of the record; minima and maxima alternate.
    """
    u = np.asarray(u, dtype=float)
    n = u.size
    if tol is None:
        tol = 0.02 * float(np.ptp(u)) if n else 0.0
    tol = float(tol)
    if not np.isfinite(tol) or tol < 0:
        raise ValueError(f"tol must be in [0, inf) (got {tol!r})")
    lo = hi = 0
    k = 1
    while k < n:
        if u[k] < u[lo]:
            lo = k
        if u[k] > u[hi]:
            hi = k
        if u[hi] - u[lo] > tol:
            break
        k += 1
    if k >= n:
        return np.asarray([0, n - 1] if n > 1 else [0], dtype=np.int64)
    rising = lo < hi
    idx = [lo if rising else hi]
    ext = hi if rising else lo
    for k in range(k + 1, n):
        if rising:
            if u[k] >= u[ext]:
                ext = k
            elif u[ext] - u[k] > tol:
                idx.append(ext)
                rising, ext = False, k
        else:
            if u[k] <= u[ext]:
                ext = k
            elif u[k] - u[ext] > tol:
                idx.append(ext)
                rising, ext = True, k
    idx.append(ext)
    return np.asarray(idx, dtype=np.int64)


# -- loading ---------------------------------------------------------------------------------
def _parse_columns(path: Path, wanted: dict[str, str], delimiter: str):
    """Read the named columns of a CSV with a header row. Returns name -> float array
    and, per name, the 1-based file line numbers of empty/non-numeric cells."""
    import io

    from ..limits import memory_limit
    from ..safeio import read_regular_file

    # text expands about 4x when parsed into float64 columns and row lists
    raw = read_regular_file(path, "measured data file", int(memory_limit() / 4))
    try:
        # utf-8-sig: a byte-order mark (spreadsheet exports) is not part of the first name
        with io.StringIO(raw.decode("utf-8-sig"), newline="") as fh:
            reader = csv.reader(fh, delimiter=delimiter)
            try:
                header = next(reader)
            except StopIteration:
                raise ValueError(f"{path}: empty file (no header row)") from None
            header = [h.strip().strip('"').strip() for h in header]
            pos = {}
            for key, col in wanted.items():
                if col not in header:
                    known = ", ".join(h for h in header if h)
                    raise ValueError(f"{path}: no column named {col!r} (for {key}); "
                                     f"columns: {known}")
                pos[key] = header.index(col)
            rows = []
            ncol = len(header)
            for row in reader:
                if len(row) > ncol and any(c.strip() for c in row[ncol:]):
                    raise ValueError(f"{path}: line {reader.line_num} has {len(row)} fields, "
                                     f"the header {ncol}: a ragged row (a stray delimiter or "
                                     "a missing header name?)")
                rows.append(row)
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not a UTF-8 text CSV file (byte {e.start})") from None
    except csv.Error as e:
        raise ValueError(f"{path}: not a readable CSV file ({e})") from None
    values = {k: np.empty(len(rows)) for k in wanted}
    bad: dict[str, list[int]] = {k: [] for k in wanted}
    for r, row in enumerate(rows):
        for k, j in pos.items():
            try:
                x = float(row[j]) if j < len(row) and row[j].strip() else float("nan")
            except ValueError:
                x = float("nan")
            values[k][r] = x
            if not np.isfinite(x):
                bad[k].append(r + 2)  # line 1 is the header
    # a trailing blank line is not a data row
    while rows and not any(c.strip() for c in rows[-1]):
        rows.pop()
        for k in wanted:
            values[k] = values[k][:-1]
            if bad[k] and bad[k][-1] == len(rows) + 2:
                bad[k].pop()
    return values, bad


def load_csv(path, *, time: str = "t", disp: str = "u", force: str = "F",
             velocity: str | None = None, channels: dict | list | None = None,
             time_scale: float = 1.0, disp_scale: float = 1.0, force_scale: float = 1.0,
             velocity_scale: float | None = None, channel_scales: dict | None = None,
             delimiter: str = ",", drop_nan: bool = False, resample: bool = False,
             force_time: str | None = None) -> Dataset:
    """Load a Dataset from a CSV file with a header row, choosing columns by name.

    Every value is multiplied by its unit factor to give SI units, e.g. for the Dyke
    (1996) MR-damper files (displacement in cm, velocity in cm/s)::

        load_csv(path, time="t", disp="D", force="F", velocity="V",
                 channels={"voltage": "Y"}, disp_scale=0.01, velocity_scale=0.01)

    velocity_scale defaults to disp_scale / time_scale. Quoted headers, a trailing
    delimiter on every line and columns filled only on some rows (unused) are accepted.
    Rows with an empty or non-numeric cell in a chosen column raise a ValueError giving
    their number and line numbers, unless ``drop_nan=True`` (then they are dropped and a
    warning says how many and where).

    Channels on their own time bases (interleaved rows, each filled for some channels
    only; or a force sampled at other instants, its times in column ``force_time``):
    ``resample=True`` takes every quantity from the rows where it and its time are
    numeric and interpolates it linearly onto the displacement's own sample times,
    within the span all channels cover (a warning reports the row counts).
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"measured data file not found: {path}")
    if isinstance(channels, (list, tuple)):
        channels = {c: c for c in channels}
    channels = dict(channels or {})
    wanted = {"time": time, "displacement": disp, "force": force}
    if velocity:
        wanted["velocity"] = velocity
    for k, c in channels.items():
        wanted[f"channel:{k}"] = c
    if force_time:
        wanted["force_time"] = force_time
    vals, bad = _parse_columns(path, wanted, delimiter)
    if resample or force_time:
        return _resampled(path, vals, channels, velocity, time_scale, disp_scale, force_scale,
                          velocity_scale, dict(channel_scales or {}))
    badrows = sorted(set().union(*[set(b) for b in bad.values()]))
    if badrows:
        cols = ", ".join(f"{wanted[k]!r} ({len(b)})" for k, b in bad.items() if b)
        where = ", ".join(str(r) for r in badrows[:8]) + (" ..." if len(badrows) > 8 else "")
        msg = (f"{path.name}: {len(badrows)} row(s) with empty or non-numeric values in "
               f"column(s) {cols}, at line(s) {where}")
        if not drop_nan:
            raise ValueError(msg + " (pass drop_nan=True / --drop-nan to drop them, or "
                             "resample=True / --resample if the channels are sampled on "
                             "interleaved rows)")
        import warnings

        warnings.warn(msg + "; these rows were dropped", stacklevel=2)
        keep = np.ones(vals["time"].size, dtype=bool)
        keep[np.asarray(badrows) - 2] = False
        vals = {k: a[keep] for k, a in vals.items()}
    sc = dict(channel_scales or {})
    vscale = (disp_scale / time_scale) if velocity_scale is None else velocity_scale
    return Dataset(t=vals["time"] * time_scale, u=vals["displacement"] * disp_scale,
                   force=vals["force"] * force_scale,
                   v=vals["velocity"] * vscale if velocity else None,
                   channels={k: vals[f"channel:{k}"] * float(sc.get(k, 1.0)) for k in channels},
                   source=str(path))


def _resampled(path, vals, channels, velocity, time_scale, disp_scale, force_scale,
               velocity_scale, channel_scales):
    """Every quantity from its own numeric rows, interpolated onto the displacement's
    sample times within the common span (load_csv's resample=True)."""
    import warnings

    t_all = vals["time"]
    series = {}
    keys = ["displacement", "force"] + (["velocity"] if velocity else []) + \
        [f"channel:{k}" for k in channels]
    for key in keys:
        tk = vals["force_time"] if key == "force" and "force_time" in vals else t_all
        ok = np.isfinite(vals[key]) & np.isfinite(tk)
        tt, xx = tk[ok] * time_scale, vals[key][ok]
        if tt.size < 2:
            raise ValueError(f"{path.name}: the {key} has {tt.size} numeric row(s) with a time; "
                             "at least 2 needed to resample it")
        if np.any(np.diff(tt) <= 0):
            raise ValueError(f"{path.name}: the times of the {key} samples are not strictly "
                             "increasing")
        series[key] = (tt, xx)
    lo = max(s[0][0] for s in series.values())
    hi = min(s[0][-1] for s in series.values())
    tb = series["displacement"][0]
    tb = tb[(tb >= lo) & (tb <= hi)]
    if tb.size < MIN_SAMPLES:
        raise ValueError(f"{path.name}: the channels overlap on {tb.size} displacement sample(s) "
                         f"(t in [{lo:g}, {hi:g}] s); at least {MIN_SAMPLES} needed")
    out = {k: np.interp(tb, tt, xx) for k, (tt, xx) in series.items()}
    counts = ", ".join(f"{k.replace('channel:', '')} {series[k][0].size}" for k in keys)
    warnings.warn(f"{path.name}: channels resampled onto the displacement's {tb.size} sample "
                  f"times in [{lo:g}, {hi:g}] s (numeric rows: {counts})", stacklevel=3)
    vscale = (disp_scale / time_scale) if velocity_scale is None else velocity_scale
    return Dataset(t=tb, u=out["displacement"] * disp_scale, force=out["force"] * force_scale,
                   v=out["velocity"] * vscale if velocity else None,
                   channels={k: out[f"channel:{k}"] * float(channel_scales.get(k, 1.0))
                             for k in channels},
                   source=str(path))


def load_npz(path, *, time: str = "t", disp: str = "u", force: str = "F",
             velocity: str | None = None, channels: list | dict | None = None,
             disp_scale: float = 1.0, force_scale: float = 1.0, time_scale: float = 1.0) -> Dataset:
    """Load a Dataset from a .npz archive. Default names as for CSV (t, u, F) and as
    :meth:`Dataset.to_npz` writes them; an archive from an older to_npz (key ``force``)
    is read too when the default F is absent. ``v`` and any further keys become the
    velocity and channels if present."""
    import zipfile

    from ..limits import memory_limit
    from ..safeio import check_regular_file

    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"measured data file not found: {path}")
    check_regular_file(path, "measured data file", int(memory_limit() / 2))
    if not zipfile.is_zipfile(path):
        raise ValueError(f"{path}: not a .npz archive (a .npz file is a zip of .npy arrays, "
                         "as numpy.savez writes; a CSV file needs the .csv suffix)")
    try:
        z = np.load(path, allow_pickle=False)
    except (ValueError, OSError, zipfile.BadZipFile) as e:
        raise ValueError(f"{path}: not a readable .npz archive ({e})") from None
    with z:
        keys = list(z.keys())
        if force == "F" and "F" not in keys and "force" in keys:
            force = "force"          # written by to_npz before the names were unified
        for k in (time, disp, force):
            if k not in keys:
                raise ValueError(f"{path}: no array named {k!r}; arrays: {', '.join(keys)}")
        if velocity is None and "v" in keys:
            velocity = "v"
        if channels is None:
            channels = [k for k in keys if k not in (time, disp, force, velocity)]
        if isinstance(channels, (list, tuple)):
            channels = {c: c for c in channels}
        for c in channels.values():
            if c not in keys:
                raise ValueError(f"{path}: no array named {c!r}; arrays: {', '.join(keys)}")
        return Dataset(t=z[time] * time_scale, u=z[disp] * disp_scale, force=z[force] * force_scale,
                       v=None if velocity is None else z[velocity] * disp_scale / time_scale,
                       channels={k: z[c] for k, c in channels.items()}, source=str(path))


def load(path, **kw) -> Dataset:
    """Load a Dataset from .csv (:func:`load_csv`) or .npz (:func:`load_npz`) by suffix."""
    p = Path(path)
    if p.suffix.lower() == ".npz":
        allowed = {"time", "disp", "force", "velocity", "channels", "disp_scale", "force_scale",
                   "time_scale"}
        return load_npz(p, **{k: v for k, v in kw.items() if k in allowed})
    return load_csv(p, **kw)


DYKE_COLUMNS = dict(time="t", disp="D", force="F", velocity="V", channels={"voltage": "Y"},
                    disp_scale=0.01, velocity_scale=0.01)
"""load_csv options for the Dyke (1996) MR-damper files (cm and cm/s to SI)."""


def load_dyke(path) -> Dataset:
    """One of the Dyke (1996) MR-damper files (ranran_50.csv, ransim_u.csv) in SI units,
    with the voltage as channel ``voltage`` [V]."""
    return load_csv(path, **DYKE_COLUMNS)


def dyke_data_dir() -> Path:
    """Directory of the Dyke (1996) files: $HYSTMECH_DATA/mr_damper_dyke1996 if set, else
    the first ``shared/data/mr_damper_dyke1996`` found beside the working directory or
    one of its parents (the repository's checkout sits next to ``shared/``)."""
    sub = "mr_damper_dyke1996"
    env = os.environ.get("HYSTMECH_DATA")
    if env:
        return Path(env) / sub
    cwd = Path.cwd().resolve()
    for base in (cwd, *cwd.parents):
        cand = base / "shared" / "data" / sub
        if cand.is_dir():
            return cand
    return Path("/work/shared/data") / sub
