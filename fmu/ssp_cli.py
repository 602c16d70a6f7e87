"""``hystmech export-ssp RIG|SCENARIO -o FILE.ssp [--t-stop S] [--hold] [--case NAME]``:
a rig as an SSP 1.0 package of connected FMUs (fmu/ssp_export.py). RIG is a scenario
whose runner builds an Assembly (``BUILDERS``): the belt–tensioner rig
(``belt-tensioner-mdm``, ``belt-tensioner-masing``: [tensioner], [rig], [forcing],
[solver] t0, t_end), the MR-damper rig (``mr-damper-rig``: [rig], [sampling] periods;
its imposed wave-periodic displacement travels as a motion-source FMU) and the
Maxwell-slip oscillator (``maxwell-slip-oscillator``, one of its [cases] by ``--case``,
default the first). Other scenarios are refused naming why."""
from __future__ import annotations

BELT_RUNNER = "hystmech.systems.rigs.belt_tensioner_cases:run"
MR_RUNNER = "hystmech.systems.rigs.mr_damper:run"
MAXWELL_RUNNER = "hystmech.systems.rigs.maxwell_slip_oscillator:run"


def add_arguments(p) -> None:
    p.add_argument("rig", help="rig or scenario name, e.g. belt-tensioner-mdm")
    p.add_argument("-o", "--output", required=True, help="SSP file to write (*.ssp)")
    p.add_argument("--t-stop", type=float, default=None,
                   help="DefaultExperiment stopTime [s] (default: the scenario's t_end)")
    p.add_argument("--hold", action="store_true",
                   help="masses hold their input forces over a communication step (first "
                        "order); default: linear extrapolation (second order)")
    p.add_argument("--case", default=None,
                   help="for a scenario of several cases (maxwell-slip-oscillator): which "
                        "one (default: the first)")
    p.add_argument("-q", "--quiet", action="store_true", help="no build announcements")


def _belt(cfg, case):
    from ..systems.rigs.belt_tensioner import belt_assembly, paper_tensioner

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


def _mr_damper(cfg, case):
    from ..systems.rigs.mr_damper import PERIOD, mr_damper_rig

    rig = dict(cfg.get("rig", {}))
    periods = int(cfg.get("sampling", {}).get("periods", 4))
    return mr_damper_rig(**rig), dict(t0=0.0, t_end=periods * float(rig.get("period", PERIOD)))


def _maxwell(cfg, case):
    from ..systems.rigs.maxwell_slip_oscillator import maxwell_slip_oscillator

    cases = {k: dict(v) for k, v in cfg.get("cases", {"free": {"excitation": "free"}}).items()}
    name = case if case is not None else next(iter(cases))
    if name not in cases:
        raise ValueError(f"--case must be one of {', '.join(cases)} (got {name!r})")
    c = cases[name]
    t_end = float(c.pop("t_end", 0.5))
    return maxwell_slip_oscillator(**dict(cfg.get("oscillator", {})), **c), \
        dict(t0=0.0, t_end=t_end)


BUILDERS = {BELT_RUNNER: _belt, MR_RUNNER: _mr_damper, MAXWELL_RUNNER: _maxwell}
# why the other runners that involve an Assembly are not exported
NOT_EXPORTED = {
    "bouc-wen-benchmark": "its Assembly is driven by a force interpolated from the "
                          "benchmark's input signal (a Python callable), and the SSP export "
                          "carries external forces only as constants or Harmonic",
    "hystmech.systems.periodic.sweep:run": "it is a frequency sweep (one periodic solution "
                                           "per frequency), not one system in time",
    "belt-tensioner-frf-continuation": "it is a continuation of periodic solutions, not one "
                                       "system in time",
    "hystmech.fmu.cases:run": "it is already a co-simulation of FMUs (export the "
                              "belt-tensioner-mdm rig instead)",
    "hystmech.plugins.exudyn_cases:run_belt_tensioner": "its rig is an Exudyn model (export "
                                                        "belt-tensioner-mdm instead)",
}


def rig_assembly(name: str, case: str | None = None):
    """(assembly, info) of the rig or scenario ``name`` (``case``: one case of a scenario
    of several); ValueError for scenarios whose runner builds no Assembly."""
    from ..scenario import load_scenario

    cfg = load_scenario(name)
    build = BUILDERS.get(cfg.get("runner"))
    if build is None:
        why = NOT_EXPORTED.get(cfg.get("runner"), f"its runner {cfg.get('runner')!r} drives "
                               f"a law, an engine or an analysis, not an Assembly")
        raise ValueError(f"scenario {name!r} is not exported as SSP: {why}; supported: "
                         f"belt-tensioner-mdm, belt-tensioner-masing, mr-damper-rig, "
                         f"maxwell-slip-oscillator")
    if case is not None and build is not _maxwell:
        raise ValueError(f"--case is for scenarios of several cases "
                         f"(maxwell-slip-oscillator); {name!r} has one assembly")
    return build(cfg, case)


def main(args) -> int:
    from .ssp_export import export_ssp

    asm, info = rig_assembly(args.rig, args.case)
    t_stop = info["t_end"] if args.t_stop is None else args.t_stop
    path = export_ssp((asm, info), args.output, t_stop=t_stop, extrapolate=not args.hold,
                      progress=not args.quiet)
    comps = path.system.components
    print(f"wrote {path}: {len(comps)} FMUs ({', '.join(c.name for c in comps)}), "
          f"{len(path.system.connections)} connections, t = [{path.system.start:g}, "
          f"{path.system.stop:g}] s")
    return 0
