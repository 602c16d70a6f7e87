"""The linear mechanical parts of an Assembly (masses, springs, dampers, and the relative
motion a force element between two DOFs sees) as small FMI 2.0 co-simulation FMUs, for
the SSP export (fmu/ssp_export.py). The C code is fmu/ssp_parts.c (one file, the part
kind chosen by part_config.h, written here); these FMUs hold no Python either.

Variables (all Real; value references in this order):

* mass ``PartKind "mass"``: outputs x [m], v [m/s]; parameters m [kg], x0 [m], v0 [m/s],
  f0 [N] (gravity m·g and constant forces), extrapolate, A_j [N], omega_j [rad/s],
  phi_j [rad] (harmonic forces); inputs F_<conn> [N] with parameters sign_<conn> = ±1:
  m·ẍ = Σ sign_i·F_i + f0 + Σ A_j cos(omega_j·t + phi_j).
* link (spring or damper): output F [N]; inputs xa, va, xb, vb; parameters k [N/m],
  c [N.s/m], u0 [m], preload [N], extrapolate: F = k·(xa − xb − u0) + c·(va − vb) + preload.
* relative: outputs u [m], v [m/s] = xa − xb, va − vb; inputs xa, va, xb, vb.
* motion (an imposed DOF): outputs x [m], v [m/s]; parameters f0 [m], A [m], omega
  [rad/s], phi [rad]: x = f0 + A·cos(omega·t + phi) + table(t), v = dx/dt; the table
  (knots t, x, v; cubic Hermite between knots, v its derivative; a repeated knot time
  carries a jump of v) is compiled into the FMU and shipped as resources/motion.csv.
"""
from __future__ import annotations

import datetime
import hashlib
import os
import shutil
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import escape

import numpy as np

HERE = Path(__file__).resolve().parent
C_FILE = HERE / "ssp_parts.c"
KIND_CODE = {"mass": 0, "link": 1, "relative": 2, "motion": 3}
TABLE_FILE = "motion.csv"
GENERATOR = "hystmech SSP part"


@dataclass
class PartVar:
    name: str
    causality: str           # input, output, parameter
    start: float
    unit: str
    desc: str
    macro: str               # C index macro (I_X ...) or "" (addressed through a base)


@dataclass
class Part:
    """One linear part FMU: kind ("mass", "link", "relative") and its variables."""

    kind: str
    name: str
    description: str
    vars: list = field(default_factory=list)
    n_in: int = 0
    n_harm: int = 0
    table: tuple | None = None     # motion: (t, x, v) knots

    def add(self, name, causality, start, unit, desc, macro=""):
        self.vars.append(PartVar(name, causality, float(start), unit, desc, macro))

    def parameters(self) -> dict:
        return {v.name: v.start for v in self.vars if v.causality == "parameter"}

    def var(self, name) -> PartVar:
        for v in self.vars:
            if v.name == name:
                return v
        raise KeyError(name)


def mass_part(name: str, *, m: float, x0: float, v0: float, f0: float, harmonics,
              inputs, extrapolate: bool) -> Part:
    """A DOF: ``inputs`` is a list of (connection name, sign ±1), ``harmonics`` a list of
    (A [N], omega [rad/s], phi [rad])."""
    p = Part("mass", name, f"mass {name}: m·x'' = sum(sign_i·F_i) + f0 + "
             f"sum(A_j cos(omega_j t + phi_j)); outputs x [m], v [m/s]",
             n_in=len(inputs), n_harm=len(harmonics))
    p.add("x", "output", x0, "m", "position along the assembly's axis", "I_X")
    p.add("v", "output", v0, "m/s", "velocity", "I_V")
    p.add("m", "parameter", m, "kg", "mass", "I_M")
    p.add("x0", "parameter", x0, "m", "initial position", "I_X0")
    p.add("v0", "parameter", v0, "m/s", "initial velocity", "I_V0")
    p.add("f0", "parameter", f0, "N", "constant force along +x (gravity m·g included)", "I_F0")
    p.add("extrapolate", "parameter", float(extrapolate), "1",
          "1: input forces extrapolated linearly over a step; 0: held", "I_EXTRAP")
    for j, (A, w, ph) in enumerate(harmonics):
        p.add(f"A_{j}", "parameter", A, "N", f"amplitude of harmonic force {j}",
              "I_HARM" if j == 0 else "")
        p.add(f"omega_{j}", "parameter", w, "rad/s", f"pulsation of harmonic force {j}")
        p.add(f"phi_{j}", "parameter", ph, "rad", f"phase of harmonic force {j}")
    for i, (conn, s) in enumerate(inputs):
        p.add(f"F_{conn}", "input", 0.0, "N", f"force of connection {conn}",
              "I_FIN" if i == 0 else "")
    for i, (conn, s) in enumerate(inputs):
        p.add(f"sign_{conn}", "parameter", s, "1",
              f"+1 if this DOF is {conn}'s b, -1 if its a", "I_SIGN" if i == 0 else "")
    return p


def link_part(name: str, *, k: float = 0.0, c: float = 0.0, u0: float = 0.0,
              preload: float = 0.0, extrapolate: bool) -> Part:
    """A spring (c = 0) or damper (k = 0) between a and b."""
    p = Part("link", name, f"linear link {name}: F = k·(xa − xb − u0) + c·(va − vb) + "
             f"preload; acts −F on a, +F on b")
    p.add("F", "output", 0.0, "N", "force (−F on a, +F on b)", "I_F")
    _endpoint_inputs(p)
    p.add("k", "parameter", k, "N/m", "stiffness", "I_K")
    p.add("c", "parameter", c, "N.s/m", "viscous coefficient", "I_C")
    p.add("u0", "parameter", u0, "m", "free length offset", "I_U0")
    p.add("preload", "parameter", preload, "N", "force at u = u0", "I_PRE")
    p.add("extrapolate", "parameter", float(extrapolate), "1",
          "1: the output at t+h is at inputs predicted there; 0: at the received inputs",
          "I_EXTRAP")
    return p


def relative_part(name: str, *, extrapolate: bool) -> Part:
    p = Part("relative", name, f"relative motion {name}: u = xa − xb, v = va − vb")
    p.add("u", "output", 0.0, "m", "relative displacement", "I_U")
    p.add("v", "output", 0.0, "m/s", "relative velocity", "I_V")
    _endpoint_inputs(p)
    p.add("extrapolate", "parameter", float(extrapolate), "1",
          "1: the output at t+h is at inputs predicted there; 0: at the received inputs",
          "I_EXTRAP")
    return p


def motion_part(name: str, *, f0: float = 0.0, A: float = 0.0, omega: float = 0.0,
                phi: float = 0.0, table=None) -> Part:
    """An imposed DOF: x(t) = f0 + A·cos(omega·t + phi) + table(t) [m], v = dx/dt [m/s].
    table: None or (t, x, v) knot arrays, t non-decreasing (a repeated t: a jump of v)."""
    p = Part("motion", name, f"imposed motion {name}: x = f0 + A·cos(omega·t + phi)"
             + (" + cubic Hermite table (resources/motion.csv)" if table is not None else "")
             + "; outputs x [m], v [m/s]")
    if table is not None:
        T, X, V = (np.asarray(a, dtype=float) for a in table)
        if T.ndim != 1 or len(T) < 2 or X.shape != T.shape or V.shape != T.shape:
            raise ValueError(f"table of imposed motion {name!r}: t, x, v must be 1-D arrays "
                             f"of one length >= 2")
        if not (np.all(np.isfinite(T)) and np.all(np.isfinite(X)) and np.all(np.isfinite(V))):
            raise ValueError(f"table of imposed motion {name!r} must be finite")
        d = np.diff(T)
        if np.any(d < 0) or T[-1] <= T[0] or np.any((d[1:] == 0) & (d[:-1] == 0)):
            raise ValueError(f"table of imposed motion {name!r}: t must be non-decreasing "
                             f"(a time at most twice)")
        p.table = (T, X, V)
    p.add("x", "output", 0.0, "m", "imposed position", "I_X")
    p.add("v", "output", 0.0, "m/s", "imposed velocity", "I_V")
    p.add("f0", "parameter", f0, "m", "constant part of x", "I_F0")
    p.add("A", "parameter", A, "m", "amplitude of the harmonic part of x", "I_A")
    p.add("omega", "parameter", omega, "rad/s", "pulsation of the harmonic part", "I_OMEGA")
    p.add("phi", "parameter", phi, "rad", "phase of the harmonic part", "I_PHI")
    return p


def hermite(table, t):
    """The table's cubic Hermite interpolant at t (as the motion FMU evaluates it):
    (x [m], v [m/s]); knots (T, X, V), a repeated knot time is a jump of v."""
    T, X, V = (np.asarray(a, dtype=float) for a in table)
    t = np.asarray(t, dtype=float)
    i = np.clip(np.searchsorted(T, t, side="right") - 1, 0, len(T) - 2)
    i = np.where(T[i + 1] == T[i], i - 1, i)       # only at the last knot: step back
    d = T[i + 1] - T[i]
    s = np.clip((t - T[i]) / d, 0.0, 1.0)
    x0, x1, m0, m1 = X[i], X[i + 1], V[i] * d, V[i + 1] * d
    s2, s3 = s * s, s * s * s
    x = (2 * s3 - 3 * s2 + 1) * x0 + (s3 - 2 * s2 + s) * m0 + (-2 * s3 + 3 * s2) * x1 \
        + (s3 - s2) * m1
    v = ((6 * s2 - 6 * s) * x0 + (3 * s2 - 4 * s + 1) * m0 + (-6 * s2 + 6 * s) * x1
         + (3 * s2 - 2 * s) * m1) / d
    return x, v


def _endpoint_inputs(p: Part) -> None:
    p.add("xa", "input", 0.0, "m", "position of end a (0: ground)", "I_XA")
    p.add("va", "input", 0.0, "m/s", "velocity of end a", "I_VA")
    p.add("xb", "input", 0.0, "m", "position of end b (0: ground)", "I_XB")
    p.add("vb", "input", 0.0, "m/s", "velocity of end b", "I_VB")


def _g(x: float) -> str:
    return repr(float(x))


def _config_h(part: Part, guid: str) -> str:
    lines = [f'#define PART_KIND {KIND_CODE[part.kind]}', f'#define PART_GUID "{guid}"',
             f"#define N_REAL {len(part.vars)}", f"#define N_IN {part.n_in}",
             f"#define N_HARM {part.n_harm}"]
    for i, v in enumerate(part.vars):
        if v.macro:
            lines.append(f"#define {v.macro} {i}")
    for m in ("I_HARM", "I_FIN", "I_SIGN"):
        if part.kind == "mass" and not any(v.macro == m for v in part.vars):
            lines.append(f"#define {m} 0")
    if part.kind == "motion":
        T, X, V = part.table if part.table is not None else ([0.0], [0.0], [0.0])
        n = len(T) if part.table is not None else 0
        lines.append(f"#define N_TAB {n}")
        for nm, arr in (("TAB_T", T), ("TAB_X", X), ("TAB_V", V)):
            body = ",\n".join(", ".join(_g(a) for a in arr[i:i + 6])
                              for i in range(0, len(arr), 6))
            lines.append(f"static const double {nm}[{max(n, 1)}] = {{\n{body}}};")
    st = ", ".join(_g(v.start) for v in part.vars)
    sa = ", ".join("1" if v.causality == "input" else "0" for v in part.vars)
    lines.append(f"static const double START[N_REAL] = {{{st}}};")
    lines.append(f"static const int SETTABLE_AFTER_INIT[N_REAL] = {{{sa}}};")
    names = ", ".join('"' + v.name.replace('"', "") + '"' for v in part.vars)
    lines.append(f"static const char *const NAMES[N_REAL] = {{{names}}};")
    return "\n".join(lines) + "\n"


def _units_xml(units) -> str:
    from .export import _unit_defs

    xml, _ = _unit_defs(units)
    return xml


def _model_description(part: Part, guid: str, ident: str) -> str:
    from .export import package_version

    rows, outs = [], []
    for i, v in enumerate(part.vars):
        var = "continuous" if v.causality != "parameter" else "fixed"
        # a mass's x, v start at x0, v0; a link's or relative part's outputs are
        # calculated from its inputs
        calc = v.causality == "output" and part.kind != "mass"
        init = ' initial="calculated"' if calc else (
            ' initial="exact"' if v.causality in ("parameter", "output") else "")
        start = "" if calc else f' start="{_g(v.start)}"'
        unit = f' unit="{escape(v.unit)}"' if v.unit not in ("", "-") else ""
        rows.append(f'    <ScalarVariable name="{escape(v.name)}" valueReference="{i}" '
                    f'description="{escape(v.desc)}" causality="{v.causality}" '
                    f'variability="{var}"{init}>\n      <Real{unit}{start}/>\n'
                    f'    </ScalarVariable>')
        if v.causality == "output":
            outs.append(i + 1)
    ins = [i + 1 for i, v in enumerate(part.vars) if v.causality == "input"]
    if part.kind == "mass":   # x, v are states: no direct feedthrough from the forces
        out_xml = "".join(f'\n      <Unknown index="{o}" dependencies=""/>' for o in outs)
    else:
        dep = " ".join(str(i) for i in ins)
        out_xml = "".join(f'\n      <Unknown index="{o}" dependencies="{dep}"/>' for o in outs)
    init_xml = "" if part.kind == "mass" else \
        f"    <InitialUnknowns>{out_xml}\n    </InitialUnknowns>"
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="2.0" modelName="{escape(part.name)}" guid="{guid}"
  description="{escape(part.description)}"
  generationTool="{GENERATOR} ({part.kind}) {escape(package_version())}"
  generationDateAndTime="{now}" variableNamingConvention="flat" numberOfEventIndicators="0">
  <CoSimulation modelIdentifier="{ident}" canHandleVariableCommunicationStepSize="true"
    canGetAndSetFMUstate="true" canSerializeFMUstate="true" canInterpolateInputs="false"
    maxOutputDerivativeOrder="0" canNotUseMemoryManagementFunctions="true">
    <SourceFiles>
      <File name="ssp_parts.c"/>
    </SourceFiles>
  </CoSimulation>
  <UnitDefinitions>
{_units_xml([v.unit for v in part.vars])}
  </UnitDefinitions>
  <DefaultExperiment startTime="0" stopTime="1" stepSize="1e-4"/>
  <ModelVariables>
{chr(10).join(rows)}
  </ModelVariables>
  <ModelStructure>
    <Outputs>{out_xml}
    </Outputs>{chr(10) + init_xml if init_xml else ""}
  </ModelStructure>
</fmiModelDescription>
"""


def build_part(part: Part, path, *, cc: str | None = None) -> Path:
    """Write ``part`` as an FMI 2.0 co-simulation FMU at ``path`` (binaries/linux64 and
    sources/: any platform builds it from ssp_parts.c with the FMI 2.0 headers)."""
    from .export import _compile, _zip_tree, linux64_compiler

    ident = f"hystmech_part_{part.kind}"
    cfg0 = _config_h(part, "")
    h = hashlib.sha256(cfg0.encode() + C_FILE.read_bytes() + ident.encode())
    guid = "{" + str(uuid.UUID(h.hexdigest()[:32])) + "}"
    path = Path(path)
    with tempfile.TemporaryDirectory(prefix="hystmech-part-") as td:
        root = Path(td)
        src = root / "sources"
        src.mkdir()
        shutil.copy(C_FILE, src / C_FILE.name)
        (src / "part_config.h").write_text(_config_h(part, guid))
        (root / "modelDescription.xml").write_text(_model_description(part, guid, ident))
        if part.table is not None:
            (root / "resources").mkdir()
            T, X, V = part.table
            (root / "resources" / TABLE_FILE).write_text(
                "t,x,v\n" + "".join(f"{_g(a)},{_g(b)},{_g(c)}\n" for a, b, c in zip(T, X, V)))
        bindir = root / "binaries" / "linux64"
        bindir.mkdir(parents=True)
        _compile(src, C_FILE.name, bindir / f"{ident}.so", linux64_compiler(cc))
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        _zip_tree(root, tmp)
        os.replace(tmp, path)
    return path
