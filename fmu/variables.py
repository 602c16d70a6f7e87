"""What an exported FMU offers a user: its variables (name, causality, unit, meaning),
read back from the FMU's own modelDescription.xml, and the path-like value
``export_fmu`` returns, whose repr lists them."""
from __future__ import annotations

from pathlib import Path
from typing import NamedTuple


class FMUVariable(NamedTuple):
    """One variable of an FMU as its modelDescription.xml declares it."""

    name: str
    causality: str      # input, output, parameter, local, ...
    variability: str    # continuous, fixed, tunable, ...
    unit: str           # "" when the description gives none
    description: str

    def line(self, name_w: int = 18, unit_w: int = 10, caus_w: int = 10) -> str:
        unit = f"[{self.unit}]" if self.unit else ""
        return (f"  {self.name:<{name_w}s} {self.causality:<{caus_w}s} {unit:<{unit_w}s} "
                f"{self.description}")


def fmu_variables(path) -> tuple:
    """The variables of the FMU at ``path`` (FMI 2.0 or 3.0), in description order."""
    from fmpy import read_model_description

    md = read_model_description(str(path))
    out = []
    for v in md.modelVariables:
        unit = v.unit or (v.declaredType.unit if v.declaredType is not None else None) or ""
        out.append(FMUVariable(v.name, v.causality or "local", v.variability or "",
                               unit, v.description or ""))
    return tuple(out)


def variables_table(variables, causalities=("input", "output", "structuralParameter",
                                            "parameter")) -> str:
    """Text table of the variables with the given causalities (inputs first)."""
    rows = [v for c in causalities for v in variables if v.causality == c]
    nw = max([18, *(len(v.name) for v in rows)])
    uw = max([10, *(len(v.unit) + 2 for v in rows)])
    cw = max([10, *(len(v.causality) for v in rows)])
    head = f"  {'name':<{nw}s} {'causality':<{cw}s} {'unit':<{uw}s} meaning"
    return "\n".join([head, *(v.line(nw, uw, cw) for v in rows)])


def variables_html(variables) -> str:
    """HTML table of every variable (the FMU's documentation/index.html)."""
    from xml.sax.saxutils import escape

    rows = "".join(f"\n<tr><td>{escape(v.name)}</td><td>{v.causality}</td>"
                   f"<td>{escape(v.unit)}</td><td>{escape(v.description)}</td></tr>"
                   for v in variables)
    return ("<table>\n<tr><th>name</th><th>causality</th><th>unit</th><th>meaning</th></tr>"
            f"{rows}\n</table>")


class ExportedFMU(type(Path())):
    """The path of an exported FMU (a pathlib.Path) that also knows what is in it:
    ``variables`` (FMUVariable tuples), ``fmi_version`` and ``platforms`` (binaries
    built). Its repr lists the inputs, output and parameters."""

    # class defaults: paths derived from this one (.parent, / ...) are plain FMU-less paths
    variables: tuple = ()
    fmi_version: int = 0
    platforms: tuple = ()

    def variable(self, name: str) -> FMUVariable:
        """The variable called ``name`` (KeyError naming the known ones otherwise)."""
        for v in self.variables:
            if v.name == name:
                return v
        raise KeyError(f"{name!r} is not a variable of {self.name}; known: "
                       f"{', '.join(v.name for v in self.variables)}")

    def __repr__(self) -> str:
        if not self.variables:
            return f"{type(Path()).__name__}({str(self)!r})"
        return (f"ExportedFMU({str(self)!r}, FMI {self.fmi_version}.0, binaries "
                f"{', '.join(self.platforms)})\n{variables_table(self.variables)}")


def exported(path, fmi_version: int, platforms) -> ExportedFMU:
    """``path`` as an ExportedFMU carrying the variables read from the file."""
    p = ExportedFMU(path)
    p.variables = fmu_variables(p)
    p.fmi_version = int(fmi_version)
    p.platforms = tuple(platforms)
    return p
