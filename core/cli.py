"""Command line: ``hystmech list | run | compare | identify | export-fmu``.

Usage errors (unknown scenario, malformed TOML, unknown element or parameter, bad
values) exit with code 2 and one line on stderr, never a traceback.
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


def _cmd_run(args) -> int:
    from .scenario import run_scenario

    res = run_scenario(args.scenario, args.out)
    metrics = res.summary.get("metrics", {})
    for k, v in metrics.items():
        if isinstance(v, (int, float)):
            print(f"{k} = {v:.6g}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="hystmech", description="Mechanical systems with hysteresis and dynamic friction")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)
    sp = sub.add_parser("list", help="list the scenarios")
    sp.set_defaults(func=_cmd_list)
    sp = sub.add_parser("run", help="run a scenario (default one if none given)")
    sp.add_argument("scenario", nargs="?", default=None, help="name in scenarios/ or path to a TOML file")
    sp.add_argument("--out", default=None, help="output directory (default runs/NAME)")
    sp.set_defaults(func=_cmd_run)
    for name, (mod, helptext) in EXTERNAL.items():
        sp = sub.add_parser(name, help=helptext)
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
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except (ValueError, FileNotFoundError) as e:
        sys.stderr.write(f"hystmech: error: {_first_line(e)}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("hystmech: interrupted (finished results were kept)\n")
        return 130
    except Exception as e:  # noqa: BLE001 - a run that fails says why in one line
        if os.environ.get("HYSTMECH_DEBUG"):
            raise
        sys.stderr.write(f"hystmech: failed: {type(e).__name__}: {_first_line(e)} "
                         f"(HYSTMECH_DEBUG=1 shows the traceback)\n")
        return 1


def _first_line(e: BaseException) -> str:
    return str(e).splitlines()[0] if str(e) else type(e).__name__


if __name__ == "__main__":
    raise SystemExit(main())
