"""``hystmech export-ssp RIG|SCENARIO -o FILE.ssp [--t-stop S] [--hold]``: a rig as an
SSP 1.0 package of connected FMUs (fmu/ssp_export.py). RIG is a scenario whose runner
builds an Assembly: the belt–tensioner rig (``belt-tensioner-mdm``,
``belt-tensioner-masing``, or any scenario of that runner with its [tensioner], [rig],
[forcing] and [solver] t0, t_end tables)."""
from __future__ import annotations

BELT_RUNNER = "hystmech.systems.rigs.belt_tensioner_cases:run"


def add_arguments(p) -> None:
    p.add_argument("rig", help="rig or scenario name, e.g. belt-tensioner-mdm")
    p.add_argument("-o", "--output", required=True, help="SSP file to write (*.ssp)")
    p.add_argument("--t-stop", type=float, default=None,
                   help="DefaultExperiment stopTime [s] (default: the scenario's t_end)")
    p.add_argument("--hold", action="store_true",
                   help="masses hold their input forces over a communication step (first "
                        "order); default: linear extrapolation (second order)")
    p.add_argument("-q", "--quiet", action="store_true", help="no build announcements")


def rig_assembly(name: str):
    """(assembly, info) of the rig or scenario ``name``; ValueError for others."""
    from ..scenario import load_scenario
    from ..systems.rigs.belt_tensioner import belt_assembly, paper_tensioner

    cfg = load_scenario(name)
    if cfg.get("runner") != BELT_RUNNER:
        raise ValueError(f"scenario {name!r} has no assembly to export as SSP (runner "
                         f"{cfg.get('runner')!r}); supported: the belt-tensioner rig "
                         f"scenarios (belt-tensioner-mdm, belt-tensioner-masing)")
    model = cfg.get("tensioner", {}).get("model", "mdm")
    rig = dict(cfg.get("rig", {}))
    forcing = dict(cfg.get("forcing", {}))
    solver = cfg.get("solver", {})
    t0 = float(solver.get("t0", 1.6e-3))
    asm, info = belt_assembly(paper_tensioner(model, **({"Omega0": forcing["Omega0"]}
                                                      if "Omega0" in forcing else {})),
                              t0=t0, **rig, **forcing)
    info.update(t0=t0, t_end=float(solver.get("t_end", t0 + 1.0)))
    return asm, info


def main(args) -> int:
    from .ssp_export import export_ssp

    asm, info = rig_assembly(args.rig)
    t_stop = info["t_end"] if args.t_stop is None else args.t_stop
    path = export_ssp((asm, info), args.output, t_stop=t_stop, extrapolate=not args.hold,
                      progress=not args.quiet)
    comps = path.system.components
    print(f"wrote {path}: {len(comps)} FMUs ({', '.join(c.name for c in comps)}), "
          f"{len(path.system.connections)} connections, t = [{path.system.start:g}, "
          f"{path.system.stop:g}] s")
    return 0
