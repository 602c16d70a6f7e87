"""``hystmech identify LAW MEASURED [--out DIR]``: fit a law, write a scenario TOML."""
from __future__ import annotations

import json
from pathlib import Path

from ._cliopts import add_data_arguments, load_from_args

LAWS = ("dahl", "lugre", "bouc-wen", "maxwell-slip", "viscous-dahl", "asymmetric-viscous-dahl",
        "modified-dahl", "masing", "preisach", "relay", "prandtl-ishlinskii", "duhem")
# not offered: the linear elements (a linear least-squares fit needs no tool)


def add_arguments(p) -> None:
    p.add_argument("law", choices=LAWS, help="law to identify (dahl, lugre, bouc-wen, "
                   "maxwell-slip: output-error least squares from starts read off the data; "
                   "duhem: polynomial envelopes, exact segment map, variable projection; "
                   "relay: thresholds from the switching samples; prandtl-ishlinskii: "
                   "least squares with the exact Jacobian; the others: the papers' methods, "
                   "refined by output error)")
    add_data_arguments(p)
    p.add_argument("--out", default=None, help="output directory (default runs/identify-LAW)")
    p.add_argument("--d", type=float, default=None,
                   help="preisach: rounding tolerance of the input (default range/40); "
                   "prandtl-ishlinskii: relay spacing of the scenario element (default "
                   "amplitude/250)")
    p.add_argument("--vmin", type=float, default=None,
                   help="viscous-dahl: speed [m/s] above which Proposition 1 windows are taken")
    p.add_argument("--degree", type=int, default=3,
                   help="duhem: degree of the polynomial envelopes h_u, h_l (default 3)")
    p.add_argument("--elements", type=int, default=3,
                   help="maxwell-slip: number of elasto-slip elements; prandtl-ishlinskii: "
                   "number of play operators (default 3)")


def identify(law: str, ds, *, d=None, vmin=None, elements=3, degree=3):
    """Run the identification named ``law`` (see LAWS) on ds; returns a FitResult.

    Degenerate data (constant displacement or force, overflowing values) is a ValueError
    before any fit; a fit whose parameters or prediction are not finite raises
    :class:`~hystmech.scenario.NonFiniteResult` naming the first bad sample/parameter."""
    from ..components.base import ParameterRangeError

    if law not in LAWS:
        raise ValueError(f"law must be one of {', '.join(LAWS)} (got {law!r})")
    ds.check_usable("an identification")
    try:
        res = _identify(law, ds, d=d, vmin=vmin, elements=elements, degree=degree)
    except ParameterRangeError as e:
        # the value was computed by the fit, not typed by the user: say so
        raise FitNotDetermined(f"the fit drove {e.name} to {e.value:.6g}, outside its "
                               f"admissible range {e.allowed}: the data do not determine it "
                               "(try a record with more complete cycles, a larger amplitude "
                               "or less noise, or another law)") from None
    except FitNotDetermined:
        raise
    except ValueError as e:
        # the options and the data passed their checks: what fails now is the fit
        raise FitNotDetermined(f"the {law} fit failed on these data: {e}") from None
    check_fit_finite(res)
    return res


class FitNotDetermined(ValueError):
    """The data do not determine a fitted parameter (it left its admissible range or its
    standard error is not finite). A ValueError: the CLI exits with code 2."""


def check_fit_finite(res) -> None:
    """NonFiniteResult if a fitted parameter, the prediction or a figure of merit is not
    finite (a fit's output is never written as a result then)."""
    import numpy as np

    from ..runner_io import NonFiniteResult
    from ..scenario import check_finite_outputs

    for k, v in res.params.items():
        try:
            a = np.asarray(v, dtype=float)
        except (TypeError, ValueError):
            continue
        if not np.isfinite(a).all():
            raise NonFiniteResult(f"the fitted parameter {k} is not finite ({v!r}); nothing "
                                  "was written")
    for k, v in (res.stderr or {}).items():
        if k in ("w0", "z0", "x0"):
            continue       # an initial state the record does not reveal changes no prediction
        try:
            a = np.asarray(v, dtype=float)
        except (TypeError, ValueError):
            continue
        if not np.isfinite(a).all():
            raise FitNotDetermined(f"the data do not determine {k}: its standard error is not "
                                   "finite (too few informative samples or an ill-conditioned "
                                   "fit); nothing was written")
    if res.predicted is not None and res.data is not None:
        check_finite_outputs({"t": res.data.t, "F_fitted": res.predicted})
    for k, v in res.merit.items():
        if isinstance(v, float) and not np.isfinite(v):
            raise NonFiniteResult(f"the fit's {k} = {v} is not finite; nothing was written")


def _identify(law: str, ds, *, d=None, vmin=None, elements=3, degree=3):
    import numpy as np

    from . import laws, metrics
    from .result import FitResult

    if law == "dahl":
        return laws.fit_dahl(ds)
    if law == "lugre":
        return laws.fit_lugre(ds)
    if law == "bouc-wen":
        return laws.fit_bouc_wen(ds)
    if law == "maxwell-slip":
        return laws.fit_maxwell_slip(ds, elements=elements)
    if law == "viscous-dahl":
        from .viscous_dahl import fit_viscous_dahl
        return fit_viscous_dahl(ds, asymmetric=False, vmin=vmin)
    if law == "asymmetric-viscous-dahl":
        from .viscous_dahl import fit_viscous_dahl
        return fit_viscous_dahl(ds, asymmetric=True, vmin=vmin)
    if law == "modified-dahl":
        from .modified_dahl import fit_modified_dahl
        return fit_modified_dahl(ds)
    if law == "masing":
        from .masing import fit_masing
        return fit_masing(ds)
    if law == "preisach":
        from .preisach import fit_preisach
        d = d if d else float(np.ptp(ds.u)) / 40.0
        f = fit_preisach(ds.u, ds.force, d, initial=-1)
        # the scenario's element is the identified kernel itself (continuous Preisach on
        # the fit's cells, exact integral under the raw input's memory curve), so its
        # output on these data is the prediction reported here
        run = f.drive(ds.u)
        m, n = f.grid
        el = run.element
        params = dict(a1=el.a1.tolist(), a2=el.a2.tolist(), weights=el.weights.tolist(),
                      initial=-1, offset=f.offset, grid=[m, n],
                      max_depth=max(256, int(run.state[:, 1].max()) + 16))
        rounded = metrics.summary(ds.t, ds.force, f.fitted)
        return FitResult(law="Preisach", params=params, data=ds, predicted=run.force,
                         details={"n_cells": f.mesh.n, "d": d, "grid": [m, n],
                                  "nrmse_rounded_input": rounded["nrmse"]})
    if law == "duhem":
        from .duhem import fit_duhem
        return fit_duhem(ds, degree=degree)
    if law == "relay":
        from .prandtl_ishlinskii import fit_relay
        return fit_relay(ds)
    if law == "prandtl-ishlinskii":
        from .prandtl_ishlinskii import fit_prandtl_ishlinskii
        return fit_prandtl_ishlinskii(ds, elements=elements, h=d)
    raise ValueError(f"law must be one of {', '.join(LAWS)} (got {law!r})")


def main(args) -> int:
    import matplotlib
    import numpy as np

    matplotlib.use("Agg")
    from ..limits import check_memory
    from ..safeio import OutputLock
    from ..scenario import check_out_dir, prepare_out_dir

    for opt in ("d", "vmin"):
        x = getattr(args, opt)
        if x is not None and not (np.isfinite(x) and x > 0):
            raise ValueError(f"--{opt} must be in (0, inf) (got {x:g})")
    out = args.out if args.out is not None else Path("runs") / f"identify-{args.law}"
    check_out_dir(out)          # a bad --out is reported before the fit, not after
    ds = load_from_args(args)
    check_memory(ds.t.size * 8.0 * 32, f"an identification on {ds.t.size} samples")
    if args.elements < 1:
        raise ValueError(f"--elements must be in [1, inf) (got {args.elements})")
    if not 0 <= args.degree <= 7:
        raise ValueError(f"--degree must be in [0, 7] (got {args.degree})")
    res = identify(args.law, ds, d=args.d, vmin=args.vmin, elements=args.elements,
                   degree=args.degree)
    out = prepare_out_dir(out)
    with OutputLock(out):
        _write(args, res, out)
    return 0


def _write(args, res, out) -> None:
    from ..runner_io import jsonable
    from ..safeio import atomic_write
    from ..scenario import save_figure

    toml = res.to_toml(title=f"{res.law} identified from {Path(args.measured).name}",
                       reference=f"hystmech identify {args.law} {Path(args.measured).name}")
    fig = res.plot()
    save_figure(fig, out / "fit.png")
    summ = {"law": res.law, "measured": str(args.measured), "params": res.params,
            "stderr": res.stderr, "metrics": res.merit}
    if res.uncertainty is not None:
        summ["uncertainty"] = res.uncertainty.to_dict()
        atomic_write(out / "parameters.txt", res.summary() + "\n")
    atomic_write(out / "summary.json", json.dumps(jsonable(summ), indent=2))
    atomic_write(out / "scenario.toml", toml)
    if res.uncertainty is not None:
        print(res.uncertainty.summary())
    else:
        for k, v in res.params.items():
            if isinstance(v, float):
                print(f"{k} = {v:.6g}")
    print(f"nrmse = {res.merit.get('nrmse', float('nan')):.6g}")
    print(f"written: {out}/scenario.toml")
