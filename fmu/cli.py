"""``hystmech export-fmu ELEMENT --param NAME=VALUE ... -o FILE.fmu [--fmi 3]``
or ``hystmech export-fmu --scenario NAME -o FILE.fmu`` (the scenario's [element]);
The linux64 binary only by default (seconds); ``--platforms all`` adds win64, darwin64,
aarch64-darwin and aarch64-linux (zig cc from PyPI ziglang; minutes the first time), each
build announced on stderr with a progress bar (a terminal only; none with ``--quiet``).
``--max-size C`` (FMI 3) and ``--flange rotational`` as in ``export_fmu``.
Prints the FMU's variables (name, causality, unit, meaning) when done."""
from __future__ import annotations

import ast


def add_arguments(p) -> None:
    p.add_argument("element", nargs="?", default=None,
                   help="element class name, e.g. Dahl (omit with --scenario)")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="constructor parameter in SI units (repeat); arrays as [1, 2, 3]")
    p.add_argument("--scenario", default=None,
                   help="take the element from this scenario's [element] table")
    p.add_argument("-o", "--output", required=True, help="FMU file to write (*.fmu)")
    p.add_argument("--fmi", default="2", choices=["2", "3"], help="FMI version (default 2)")
    p.add_argument("--platforms", default=None,
                   help="binaries to build: native (linux64 only; the default), all (adds "
                        "win64, darwin64, aarch64-darwin, aarch64-linux via zig cc; pip "
                        "install ziglang), auto (all when ziglang is installed) or a comma "
                        "list, e.g. linux64,win64")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="no build announcements or progress bars on stderr")
    p.add_argument("--rtol", type=float, default=1e-8,
                   help="default tolerance of adaptive segment updates inside the FMU")
    p.add_argument("--max-size", type=int, default=None, metavar="C",
                   help="FMI 3: capacity of the arrays whose length is a structural "
                        "parameter (Maxwell-slip n_elements, Preisach n_relays), 1..1024")
    p.add_argument("--flange", default="translational",
                   choices=["translational", "rotational"],
                   help="terminal of the FMU: translational (m, m/s, N; the default) or "
                        "rotational (rad, rad/s, N.m) for a torsion element")


def _value(name: str, text: str):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        if text.lower() in ("true", "false"):
            return text.lower() == "true"
        raise ValueError(f"--param {name}: value {text!r} is not a number or list") from None


def parse_params(items) -> dict:
    out = {}
    for it in items:
        if "=" not in it:
            raise ValueError(f"--param must be NAME=VALUE (got {it!r})")
        k, v = it.split("=", 1)
        k = k.strip()
        if not k.isidentifier():
            raise ValueError(f"--param: {k!r} is not a parameter name")
        out[k] = _value(k, v.strip())
    return out


def build(element: str | None, params: dict, scenario: str | None):
    """The force element named on the command line (or in the scenario)."""
    from ..runner_io import build_element
    from ..scenario import load_scenario

    if scenario is not None:
        cfg = load_scenario(scenario)
        if "element" not in cfg:
            raise ValueError(f"scenario {scenario!r} has no [element] table")
        table = dict(cfg["element"])
        if element is not None and element != table.get("type"):
            raise ValueError(f"element {element!r} differs from the scenario's "
                             f"{table.get('type')!r}")
        table.update(params)
        return build_element(table)
    if element is None:
        raise ValueError("give an element class name (e.g. Dahl) or --scenario NAME")
    return build_element(dict(type=element, **params))


def main(args) -> int:
    from .export import FMUExportError, export_fmu
    from .variables import variables_table

    el = build(args.element, parse_params(args.param), args.scenario)
    try:
        path = export_fmu(el, args.output, fmi_version=int(args.fmi), rtol=args.rtol,
                          platforms=args.platforms, progress=not args.quiet,
                          max_size=args.max_size, flange=args.flange)
    except FMUExportError as e:  # the command line reports one line (compiler output joined)
        raise FMUExportError(" | ".join(ln.strip() for ln in str(e).splitlines()
                                        if ln.strip())) from None
    print(f"wrote {path} ({el!r}, FMI {args.fmi}.0, binaries {', '.join(path.platforms)})")
    print(variables_table(path.variables))
    return 0
