"""Command line: ``hystmech list | run | compare | identify | export-fmu | export-ssp``.

Exit codes: 0 success; 1 a run or fit that failed (including results that became
NaN/inf, which are never written); 2 a usage error (unknown scenario or runner, malformed
TOML, unknown key, wrong type, a value out of range, work above a limit, degenerate
data, a path that cannot be read or written); 130 interrupted. Errors are one line on
stderr, never a traceback (HYSTMECH_DEBUG=1 shows it for exit 1).

``run``, ``identify`` and ``compare`` hold a lock on their output directory while they
write (a second command on the same ``--out`` exits 2 naming the first one's pid), write
only inside it, print where they wrote, and check their inputs (scenario file: a regular
file of at most 1 MiB; measured data: regular files, rows of the header's length) before
anything is written. ``run --max-memory SIZE`` sets the memory limit of the work
estimate and of the library calls the runner makes (default half the physical memory).
Ctrl-C stops a compiled loop within a second (exit 130; finished results are kept).
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys

# subcommands implemented elsewhere: name -> module with add_arguments(p) and main(args)
EXTERNAL = {
    "compare": ("hystmech.identify.compare_cli", "simulate a scenario with measured input and compare"),
    "identify": ("hystmech.identify.cli", "fit a law to a measured loop, write a scenario TOML"),
    "export-fmu": ("hystmech.fmu.cli", "export a force element as an FMI 2.0/3.0 FMU"),
    "export-ssp": ("hystmech.fmu.ssp_cli", "export a rig as an SSP package of connected FMUs"),
    "plugins": ("hystmech.plugins.mujoco_build", "build / locate the MuJoCo plugin library"),
}


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit code 2
        sys.stderr.write(f"hystmech: error: {message}\n")
        raise SystemExit(2)


def _cmd_list(args) -> int:
    from .scenario import DEFAULT_SCENARIO, list_scenarios

    for name, title in list_scenarios():
        mark = " (default)" if name == DEFAULT_SCENARIO else ""
        print(f"{name:32s} {title}{mark}")
    return 0


def _positive(text: str) -> float:
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number (got {text!r})") from None
    if not (x > 0 and x != float("inf")):
        raise argparse.ArgumentTypeError(f"must be in (0, inf) (got {text!r})")
    return x


def _whole(text: str) -> int:
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1 (got {text!r})") from None
    if not (x >= 1 and x.is_integer()):
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1 (got {text!r})")
    return int(x)


def _size(text: str) -> float:
    from .limits import parse_size

    try:
        return parse_size(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _limits_from_args(args):
    """The run's limits from --max-* / --no-limits; the memory limit also goes to the
    API guards (drive, simulate, constructors) the runner calls."""
    from .limits import set_memory_limit

    if args.no_limits:
        set_memory_limit(float("inf"))
        return False
    if args.max_memory is not None:
        set_memory_limit(args.max_memory)
    return {q: getattr(args, f"max_{q}") for q in ("steps", "samples", "points", "memory")
            if getattr(args, f"max_{q}") is not None}


def _cmd_run(args) -> int:
    from .scenario import run_scenario

    # a model's sample evaluation compiles in a second process while its loop compiles
    # here (systems/compile_cache.py: prefetch); HYSTMECH_PREFETCH=0 turns it off
    os.environ.setdefault("HYSTMECH_PREFETCH", str(os.getpid()))

    from .limits import FLAGS
    from .scenario import progress_printer

    limits = _limits_from_args(args)
    if args.max_work is not None:       # (with --no-limits: every cap None, i.e. lifted)
        caps = {q: None for q in FLAGS} if limits is False else limits
        limits = dict(caps, work=args.max_work)
    res = run_scenario(args.scenario, args.out, trust_runner=args.trust_runner,
                       limits=limits, progress=progress_printer(quiet=args.quiet))
    metrics = res.summary.get("metrics", {})
    for k, v in metrics.items():
        if isinstance(v, (int, float)):
            print(f"{k} = {v:.6g}")
    if res.out is not None:
        print(f"written: {res.out}")
    return 0


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; ``only``: the subcommand about to run, whose module alone
    is imported to add its options (the others get their help line only, so ``hystmech
    run`` does not import the FMU exporter or the identification code)."""
    p = _Parser(prog="hystmech", description="Mechanical systems with hysteresis and dynamic friction")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)
    sp = sub.add_parser("list", help="list the scenarios")
    sp.set_defaults(func=_cmd_list)
    sp = sub.add_parser("run", help="run a scenario (default one if none given)")
    sp.add_argument("scenario", nargs="?", default=None, help="name in scenarios/ or path to a TOML file")
    sp.add_argument("--out", default=None, help="output directory (default runs/NAME)")
    sp.add_argument("--trust-runner", action="store_true",
                    help="allow runner = \"module:function\" with the module file beside the "
                         "scenario file (runs its code)")
    from .limits import DEFAULT_LIMITS

    sp.add_argument("--quiet", "-q", action="store_true",
                    help="no progress bar (it is drawn on stderr only when that is a terminal)")
    g = sp.add_argument_group("limits on work (checked before the run)")
    g.add_argument("--max-steps", type=_positive, default=None,
                   help=f"solver steps per run (default {DEFAULT_LIMITS['steps']:.0e})")
    g.add_argument("--max-samples", type=_positive, default=None,
                   help=f"stored samples per run (default {DEFAULT_LIMITS['samples']:.0e})")
    g.add_argument("--max-points", type=_positive, default=None,
                   help=f"points of a sweep (default {DEFAULT_LIMITS['points']:.0e})")
    g.add_argument("--max-memory", type=_size, default=None, metavar="SIZE",
                   help="memory a run may allocate, e.g. 8G (default half the physical memory)")
    g.add_argument("--no-limits", action="store_true", help="lift all limits on work")
    g.add_argument("--max-work", type=_whole, default=None, metavar="N",
                   help="a quick look: compute only the first N outputs of a long run (sweep "
                        "points per model, continuation points per branch, fold-curve "
                        "points), each as in the full run; recorded in summary.json "
                        "(also HYSTMECH_MAX_WORK=N)")
    sp.set_defaults(func=_cmd_run)
    for name, (mod, helptext) in EXTERNAL.items():
        sp = sub.add_parser(name, help=helptext)
        if only is not None and only != name:
            continue
        try:
            m = importlib.import_module(mod)
        except ModuleNotFoundError:
            sp.set_defaults(func=lambda a, name=name: _unavailable(name))
            continue
        m.add_arguments(sp)
        sp.set_defaults(func=m.main)
    return p


def _unavailable(name: str) -> int:
    sys.stderr.write(f"hystmech: error: the {name} command is not available in this build\n")
    return 2


def main(argv=None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    cmd = next((str(w) for w in words if not str(w).startswith("-")), None)
    # (``hystmech run ...`` imports neither the FMU exporter nor the identification CLI)
    parser = build_parser(only=cmd if cmd in EXTERNAL or cmd in ("run", "list") else None)
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:     # usage error (already one line) or --help
        return int(e.code or 0) if not isinstance(e.code, str) else 2
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    import warnings

    from .runner_io import NonFiniteResult

    # warnings are held back: shown as one line each after a successful command, dropped
    # when the command fails (its one error line says what went wrong)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code = _dispatch(args, NonFiniteResult)
    if code == 0:
        seen = set()
        for w in caught:
            if not (issubclass(w.category, RuntimeWarning) or w.category is UserWarning):
                continue        # library deprecation notes are not the user's business
            msg = " ".join(str(w.message).split())
            if msg not in seen:
                seen.add(msg)
                sys.stderr.write(f"hystmech: warning: {msg}\n")
    return code


def _dispatch(args, NonFiniteResult) -> int:
    from .scenario import end_progress_line

    try:
        return int(args.func(args) or 0)
    except (ValueError, FileNotFoundError) as e:
        end_progress_line()
        sys.stderr.write(f"hystmech: error: {_first_line(e)}\n")
        return 2
    except NonFiniteResult as e:
        end_progress_line()
        sys.stderr.write(f"hystmech: failed: {_first_line(e)}\n")
        return 1
    except OSError as e:
        end_progress_line()
        if e.filename is not None and not os.environ.get("HYSTMECH_DEBUG"):
            # a path that cannot be read or written is the user's to fix: a usage error
            sys.stderr.write(f"hystmech: error: cannot use {e.filename}: "
                             f"{e.strerror or type(e).__name__}\n")
            return 2
        return _failed(e)
    except KeyboardInterrupt as e:
        end_progress_line()
        sys.stderr.write("hystmech: interrupted (finished results were kept)\n")
        return 128 + int(getattr(e, "signum", 2))
    except Exception as e:  # noqa: BLE001 - a run that fails says why in one line
        end_progress_line()
        return _failed(e)


def _failed(e: BaseException) -> int:
    if os.environ.get("HYSTMECH_DEBUG"):
        raise e
    sys.stderr.write(f"hystmech: failed: {type(e).__name__}: {_first_line(e)} "
                     f"(HYSTMECH_DEBUG=1 shows the traceback)\n")
    return 1


def _first_line(e: BaseException) -> str:
    return str(e).splitlines()[0] if str(e) else type(e).__name__


if __name__ == "__main__":
    raise SystemExit(main())
