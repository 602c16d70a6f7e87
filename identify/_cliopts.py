"""Command-line options shared by ``hystmech compare`` and ``hystmech identify``:
which columns of a MEASURED CSV hold what, and their unit factors to SI."""
from __future__ import annotations

from .dataset import Dataset, load


def add_data_arguments(p) -> None:
    p.add_argument("measured", help="measured data: CSV with a header row, or .npz")
    g = p.add_argument_group("measured data columns and units",
                             "names of CSV columns or .npz arrays, the same defaults for both")
    g.add_argument("--time", default="t", help="time column [s] (default t)")
    g.add_argument("--disp", default="u", help="displacement column (default u)")
    g.add_argument("--force", default="F", help="force column (default F; an .npz written "
                   "by an older Dataset.to_npz holds 'force', read when F is absent)")
    g.add_argument("--velocity", default=None, help="velocity column (optional; .npz: v "
                   "if present)")
    g.add_argument("--channel", action="append", default=[], metavar="NAME=COLUMN",
                   help="extra channel, e.g. voltage=Y (repeatable)")
    g.add_argument("--time-scale", type=float, default=1.0, help="factor to seconds")
    g.add_argument("--disp-scale", type=float, default=1.0, help="factor to metres (cm: 0.01)")
    g.add_argument("--force-scale", type=float, default=1.0, help="factor to newtons")
    g.add_argument("--velocity-scale", type=float, default=None,
                   help="factor to m/s (default disp-scale/time-scale)")
    g.add_argument("--t0", type=float, default=None, help="start of the window used [s]")
    g.add_argument("--t1", type=float, default=None, help="end of the window used [s]")
    g.add_argument("--drop-nan", action="store_true",
                   help="drop rows with empty/non-numeric values (with a warning) instead of failing")
    g.add_argument("--resample", action="store_true",
                   help="CSV with channels on their own (e.g. interleaved) rows: take each "
                        "from its numeric rows and interpolate onto the displacement's times")
    g.add_argument("--force-time", default=None, metavar="COLUMN",
                   help="CSV: time column of the force samples when they were taken at other "
                        "instants than the displacement (implies --resample)")


def _check_scales(args) -> None:
    import math

    for opt in ("time_scale", "disp_scale", "force_scale", "velocity_scale"):
        x = getattr(args, opt, None)
        if x is None:
            continue
        if not math.isfinite(x) or x == 0.0:
            raise ValueError(f"--{opt.replace('_', '-')} must be a finite non-zero factor "
                             f"(got {x:g})")
    if args.time_scale < 0:
        raise ValueError(f"--time-scale must be positive (got {args.time_scale:g})")


def load_from_args(args) -> Dataset:
    _check_scales(args)
    channels = {}
    for spec in args.channel:
        if "=" not in spec:
            raise ValueError(f"--channel must be NAME=COLUMN (got {spec!r})")
        k, c = spec.split("=", 1)
        channels[k.strip()] = c.strip()
    kw = dict(time=args.time, disp=args.disp, force=args.force, velocity=args.velocity,
              channels=channels, time_scale=args.time_scale, disp_scale=args.disp_scale,
              force_scale=args.force_scale)
    if not str(args.measured).lower().endswith(".npz"):
        kw.update(velocity_scale=args.velocity_scale, drop_nan=args.drop_nan,
                  resample=args.resample, force_time=args.force_time)
    ds = load(args.measured, **kw)
    if args.t0 is not None or args.t1 is not None:
        ds = ds.window(args.t0, args.t1)
    return ds
