"""``hystmech compare MEASURED --scenario NAME|TOML [--out DIR]``."""
from __future__ import annotations

from pathlib import Path

from ._cliopts import add_data_arguments, load_from_args


def add_arguments(p) -> None:
    add_data_arguments(p)
    p.add_argument("--scenario", required=True, help="scenario name or TOML path whose [element] is simulated")
    p.add_argument("--out", default=None, help="output directory (default runs/compare-SCENARIO)")
    p.add_argument("--use-velocity", action="store_true", help="drive with the measured velocity column")
    p.add_argument("--align", action="store_true",
                   help="estimate the force channel's delay by cross-correlation with the "
                        "prediction, shift it back and report the delay")
    p.add_argument("--fit", default=None, metavar="SUMMARY_JSON",
                   help="summary.json of hystmech identify: 95 %% band of the prediction from "
                        "its parameter covariance")


def main(args) -> int:
    from ..scenario import load_scenario
    from .comparison import compare

    from ..safeio import OutputLock
    from ..scenario import check_out_dir, prepare_out_dir

    cfg = load_scenario(args.scenario)
    out = args.out if args.out is not None else Path("runs") / f"compare-{cfg['name']}"
    check_out_dir(out)
    ds = load_from_args(args)
    if args.use_velocity and ds.v is None:
        raise ValueError("--use-velocity needs a measured velocity: name its column with "
                         "--velocity COLUMN (the data have none)")
    out = prepare_out_dir(out)
    with OutputLock(out):
        s = compare(ds, cfg, out, use_velocity=args.use_velocity, align=args.align,
                    fit=args.fit)
    m = s["metrics"]
    for k in ("fit_percent", "rmse", "nrmse", "max_error", "peak_error", "r2", "phase_lag_s",
              "loop_area_error"):
        if m.get(k) is not None:
            print(f"{k} = {m[k]:.6g}")
    if "alignment" in s:
        print(f"force channel delay = {s['alignment']['force_delay_s']:.6g} s (aligned)")
    if "band" in s:
        print(f"95 % band: mean half-width {s['band']['mean_half_width_95']:.6g} N, "
              f"{100 * s['band']['share_of_samples_inside']:.1f} % of samples inside")
    print(f"written: {out}/summary.json")
    return 0
