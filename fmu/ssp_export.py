"""Export an Assembly (or a rig) as an SSP package (System Structure and Parameterization
1.0, the Modelica Association's standard for connected FMUs): fmpy's
``fmpy.ssp.simulate_ssp`` and libcosim (``CosimExecution.from_ssp_file``) run it.

The package (a zip, ``*.ssp``) holds ``SystemStructure.ssd`` and ``resources/``:

* one FMU per force element (``export_fmu``: the law's own C kernel, inputs u, v,
  output F);
* one FMU per DOF (a mass: inputs the forces of its connections, outputs x, v), per
  spring and per damper (inputs xa, va, xb, vb, output F), and a relative-motion FMU for
  a force element between two DOFs (fmu/ssp_parts.py, fmu/ssp_parts.c);
* the Assembly's rule "u = x_a − x_b, force −F on a, +F on b" as SSD connections and the
  ``sign_<connection>`` parameters of the masses;
* every FMU's parameters in ``resources/<component>.ssv`` bound by the SSD's
  ParameterBindings (and also as the FMUs' start values, because fmpy.ssp does not apply
  bindings);
* the DefaultExperiment (start, stop) and the units of every connector.

External forces must be constants or :class:`~hystmech.systems.Harmonic` (integrated
exactly by the mass FMU). An imposed DOF becomes a motion-source FMU (outputs x, v):
a Harmonic motion exactly, a callable one as a table of its position and velocity
sampled on [t_start, t_stop] (knots every ``table_step``, bisected where the cubic
Hermite interpolant misses the motion; a jump of the velocity is kept as a repeated
knot) and interpolated by cubic Hermite.
"""
from __future__ import annotations

import math
import os
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

import numpy as np

from ..systems.assembly import GROUND, Assembly, Harmonic
from .export import FMUExportError, _unit_defs, export_fmu, unit_exponents
from .ssp_parts import Part, build_part, link_part, mass_part, motion_part, relative_part

SSD_NS = "http://ssp-standard.org/SSP1/SystemStructureDescription"
SSC_NS = "http://ssp-standard.org/SSP1/SystemStructureCommon"
SSV_NS = "http://ssp-standard.org/SSP1/SystemStructureParameterValues"
SSD_NAME = "SystemStructure.ssd"


@dataclass
class SSPComponent:
    """One component of the SSD: its FMU, connectors (name, kind, unit), parameters."""

    name: str
    source: str                       # resources/<name>.fmu
    connectors: list                  # (name, kind, unit)
    parameters: dict                  # name -> (value, unit)
    role: str                         # mass, spring, damper, relative, element
    part: Part | None = None
    element: object = None


@dataclass
class SSPSystem:
    """What export_ssp writes (also returned to the caller)."""

    name: str
    components: list = field(default_factory=list)
    connections: list = field(default_factory=list)   # (elem, conn, elem, conn)
    start: float = 0.0
    stop: float = 1.0
    step: float = 1e-4

    def component(self, name) -> SSPComponent:
        for c in self.components:
            if c.name == name:
                return c
        raise KeyError(name)


class SSPPath(type(Path())):
    """The written .ssp path; ``system`` describes its components and connections."""

    system: SSPSystem


def _check_name(name: str) -> str:
    import re

    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise FMUExportError(f"SSP export: part name {name!r} must be an identifier "
                             f"(letters, digits, _)")
    return name


def _element_with_x0(name, element, x0):
    """An element whose own initial state is x0 (an FMU's states are not settable): the
    element itself, or the same law with the constructor parameter that sets x0."""
    if np.allclose(element.x0, x0, rtol=0.0, atol=0.0):
        return element
    if element.n_states == 1:
        for k, v in element.params.items():
            if np.ndim(v) != 0 or isinstance(v, bool):
                continue
            try:
                cand = element.with_params(**{k: float(x0[0])})
            except (ValueError, TypeError):
                continue
            if np.array_equal(cand.x0, x0) and np.array_equal(cand.p, element.p):
                return cand
    raise FMUExportError(f"SSP export: element {name!r} starts in state {list(map(float, x0))} "
                         f"but no constructor parameter of {type(element).__name__} sets "
                         f"that initial state (an FMU's states are not settable)")


def _harmonic(f, what):
    if isinstance(f, Harmonic):
        return f
    raise FMUExportError(f"SSP export: {what} must be a constant or a Harmonic (an SSP "
                         f"package holds no Python callables); got {type(f).__name__}")


def _call(f, t):
    try:
        r = np.asarray(f(t), dtype=float)
        if r.shape == t.shape:
            return r
    except (TypeError, ValueError):
        pass
    return np.array([float(f(float(s))) for s in t])


def _motion_table(imp, t_start, t_stop, table_step, max_knots: int = 2_000_000):
    """(t, x, v) knots of the callable imposed motion ``imp`` on [t_start, t_stop]: a
    uniform grid every table_step, refined by bisection where the cubic Hermite
    interpolant misses the motion at an interval's midpoint (x by more than 1e-10 of its
    range, v by more than 1e-7 of max|v|) — so a jump of v between grid points is
    bracketed to 1e-9 s and kept as a repeated knot (v's left limit, then its right
    value); the last knot carries v's left limit."""
    from .ssp_parts import hermite

    if imp.v is not None:
        vel = lambda t: _call(imp.v, t)
    else:                               # as the Assembly does: a central difference
        dl = 1e-6 * max(1.0, abs(t_start), abs(t_stop))
        vel = lambda t: (_call(imp.u, t + dl) - _call(imp.u, t - dl)) / (2 * dl)
    n = max(int(math.ceil((t_stop - t_start) / table_step - 1e-9)) + 1, 2)
    T = t_start + (t_stop - t_start) * np.arange(n) / (n - 1)
    X, V = _call(imp.u, T), vel(T)
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(V))):
        raise FMUExportError(f"SSP export: imposed DOF {imp.name!r} is not finite on "
                             f"[{t_start:g}, {t_stop:g}] s")
    V[-1] = vel(np.nextafter(T[-1:], -np.inf))[0]
    sx = max(float(np.ptp(X)), 1e-300)
    sv = max(float(np.max(np.abs(V))), 1e-300)
    # below ~1e-9 s the Hermite velocity (x1 - x0)/d loses digits to rounding
    tiny = 1e-9 * max(1.0, abs(t_start), abs(t_stop))

    def misses(T, X, V):
        tm = 0.5 * (T[:-1] + T[1:])
        xh, vh = hermite((T, X, V), tm)
        return tm, (np.abs(xh - _call(imp.u, tm)) > 1e-10 * sx) | \
            (np.abs(vh - vel(tm)) > 1e-7 * sv)

    for _ in range(64):
        tm, bad = misses(T, X, V)
        split = bad & ((T[1:] - T[:-1]) > tiny)
        if not split.any():
            break
        if len(T) + split.sum() > max_knots:
            raise FMUExportError(f"SSP export: imposed DOF {imp.name!r} needs more than "
                                 f"{max_knots} table knots on [{t_start:g}, {t_stop:g}] s "
                                 f"(is it continuous?)")
        at, tn = np.flatnonzero(split) + 1, tm[split]
        T, X, V = np.insert(T, at, tn), np.insert(X, at, _call(imp.u, tn)), \
            np.insert(V, at, vel(tn))
    # an interval bracketing a jump of v to 1e-9 s becomes a repeated knot: v's left
    # limit, then its right value, at the later time
    i = np.flatnonzero(misses(T, X, V)[1] & ((T[1:] - T[:-1]) <= tiny))
    T[i] = T[i + 1]
    return T, X, V


def describe(asm: Assembly, *, extrapolate: bool = True, t_start: float = 0.0,
             t_stop: float = 1.0, table_step: float | None = None) -> SSPSystem:
    """The SSP system of ``asm`` (components, connections, parameters), not yet written.
    t_start, t_stop [s]: the span a callable imposed motion is tabulated on, with knots
    every table_step [s] (default min(1e-3, span/1000))."""
    if not isinstance(asm, Assembly):
        raise FMUExportError(f"export_ssp needs a hystmech Assembly (got {type(asm).__name__})")
    if not asm.dofs:
        raise FMUExportError("SSP export: the assembly has no DOF")
    if table_step is None:
        table_step = min(1e-3, (t_stop - t_start) / 1000.0)
    sysm = SSPSystem("assembly")
    for imp in asm.imposed.values():
        _check_name(imp.name)
        if isinstance(imp.u, Harmonic):
            part = motion_part(imp.name, f0=imp.u.f0, A=imp.u.amplitude, omega=imp.u.omega,
                               phi=imp.u.phase)
        else:
            part = motion_part(imp.name, table=_motion_table(imp, t_start, t_stop,
                                                             table_step))
        sysm.components.append(_part_component(part, "motion"))
    forces_at = {d: [] for d in asm.dofs}        # dof -> [(connection, sign)]
    links = [(s.name, s.a, s.b, dict(k=s.k, u0=s.u0, preload=s.preload), "spring")
             for s in asm.springs]
    links += [(d.name, d.a, d.b, dict(c=d.c), "damper") for d in asm.dampers]
    conns = sysm.connections
    for name, a, b, kw, role in links:
        _check_name(name)
        part = link_part(name, extrapolate=extrapolate, **kw)
        sysm.components.append(_part_component(part, role))
        for end, node in (("a", a), ("b", b)):
            if node != GROUND:
                conns.append((node, "x", name, f"x{end}"))
                conns.append((node, "v", name, f"v{end}"))
                if node in forces_at:
                    forces_at[node].append((name, -1.0 if end == "a" else 1.0))
    for e in asm.elements:
        _check_name(e.name)
        el = _element_with_x0(e.name, e.element, e.x0)
        params = _element_parameters(el)
        sysm.components.append(SSPComponent(
            e.name, f"resources/{e.name}.fmu",
            [("u", "input", "m"), ("v", "input", "m/s"), ("F", "output", "N")],
            params, "element", element=el))
        if e.b == GROUND:
            conns.append((e.a, "x", e.name, "u"))
            conns.append((e.a, "v", e.name, "v"))
        else:
            rel = f"{e.name}_motion"
            _check_name(rel)
            part = relative_part(rel, extrapolate=extrapolate)
            sysm.components.append(_part_component(part, "relative"))
            for end, node in (("a", e.a), ("b", e.b)):
                if node != GROUND:
                    conns.append((node, "x", rel, f"x{end}"))
                    conns.append((node, "v", rel, f"v{end}"))
            conns.append((rel, "u", e.name, "u"))
            conns.append((rel, "v", e.name, "v"))
        for end, node in (("a", e.a), ("b", e.b)):
            if node in forces_at:
                forces_at[node].append((e.name, -1.0 if end == "a" else 1.0))
    for d in asm.dofs.values():
        _check_name(d.name)
        f0 = d.mass * asm.gravity
        harm = []
        for f in asm.forces:
            if f.dof != d.name:
                continue
            hm = _harmonic(f.f, f"force {f.name!r}")
            f0 += hm.f0
            if hm.amplitude != 0.0:
                harm.append((hm.amplitude, hm.omega, hm.phase))
        part = mass_part(d.name, m=d.mass, x0=d.x0, v0=d.v0, f0=f0, harmonics=harm,
                         inputs=forces_at[d.name], extrapolate=extrapolate)
        sysm.components.insert(len([c for c in sysm.components if c.role == "mass"]),
                               _part_component(part, "mass"))
        for conn, _ in forces_at[d.name]:
            conns.append((conn, "F", d.name, f"F_{conn}"))
    # an input at ground (a link's xb, vb) is left out of the SSD: the FMU's start value 0
    # is the ground's motion. (Declared but unconnected, fmpy 0.3.32's get_connections
    # would wire it to the previous connector's source.)
    fed = {(b, bc) for _, _, b, bc in conns}
    for c in sysm.components:
        c.connectors = [k for k in c.connectors if k[1] != "input" or (c.name, k[0]) in fed]
    return sysm


def _part_component(part: Part, role: str) -> SSPComponent:
    cons = [(v.name, v.causality, v.unit) for v in part.vars if v.causality != "parameter"]
    pars = {v.name: (v.start, v.unit) for v in part.vars if v.causality == "parameter"}
    return SSPComponent(part.name, f"resources/{part.name}.fmu", cons, pars, role, part=part)


def _element_parameters(el) -> dict:
    from .export import law_spec

    spec = law_spec(el)
    return {n: (v, u) for n, v, u in zip(spec.q_names, spec.q_values, spec.q_units)}


# -- XML ------------------------------------------------------------------------------
def _g(x) -> str:
    return repr(float(x))


def _unit_attr(u):
    return f" unit={quoteattr(u)}" if u and u not in ("-",) and \
        (unit_exponents(u) is not None or u == "1") else ""


def _units_xml(units, prefix: str) -> str:
    rows = []
    for u in sorted({u for u in units if u}):
        ex = unit_exponents(u)
        if ex is None and u != "1":
            continue
        attrs = "".join(f' {k}="{v}"' for k, v in sorted((ex or {}).items()))
        rows.append(f'    <ssc:Unit name={quoteattr(u)}><ssc:BaseUnit{attrs}/></ssc:Unit>')
    return "\n".join(rows)


def ssd_xml(sysm: SSPSystem) -> str:
    """SystemStructure.ssd of ``sysm`` (SSP 1.0)."""
    comps, units = [], set()
    for c in sysm.components:
        cons = []
        for n, kind, u in c.connectors:
            units.add(u)
            cons.append(f'          <ssd:Connector name={quoteattr(n)} kind="{kind}">'
                        f'<ssc:Real{_unit_attr(u)}/></ssd:Connector>')
        comps.append(
            f'      <ssd:Component name={quoteattr(c.name)} type="application/x-fmu-sharedlibrary" '
            f'source={quoteattr(c.source)}>\n        <ssd:Connectors>\n' + "\n".join(cons)
            + '\n        </ssd:Connectors>\n        <ssd:ParameterBindings>\n'
            f'          <ssd:ParameterBinding source="resources/{c.name}.ssv"/>\n'
            '        </ssd:ParameterBindings>\n      </ssd:Component>')
    cx = "\n".join(f'      <ssd:Connection startElement={quoteattr(a)} startConnector='
                   f'{quoteattr(ac)} endElement={quoteattr(b)} endConnector={quoteattr(bc)}/>'
                   for a, ac, b, bc in sysm.connections)
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<ssd:SystemStructureDescription xmlns:ssd="{SSD_NS}" xmlns:ssc="{SSC_NS}" version="1.0"
  name={quoteattr(sysm.name)} generationTool="hystmech {_version()}">
  <ssd:System name={quoteattr(sysm.name)} description="hystmech assembly: masses, springs, dampers and force elements as FMUs; u = x_a - x_b, force -F on a, +F on b">
    <ssd:Elements>
{chr(10).join(comps)}
    </ssd:Elements>
    <ssd:Connections>
{cx}
    </ssd:Connections>
  </ssd:System>
  <ssd:Units>
{_units_xml(units, 'ssc')}
  </ssd:Units>
  <ssd:DefaultExperiment startTime="{_g(sysm.start)}" stopTime="{_g(sysm.stop)}"/>
</ssd:SystemStructureDescription>
"""


def ssv_xml(c: SSPComponent) -> str:
    """resources/<component>.ssv: the component's parameters (SSP 1.0 parameter values)."""
    rows = [f'    <ssv:Parameter name={quoteattr(n)}><ssv:Real value="{_g(v)}"{_unit_attr(u)}/>'
            f'</ssv:Parameter>' for n, (v, u) in c.parameters.items()]
    units = _units_xml([u for _, u in c.parameters.values()], "ssc")
    uxml = f"\n  <ssv:Units>\n{units}\n  </ssv:Units>" if units else ""
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<ssv:ParameterSet xmlns:ssv="{SSV_NS}" xmlns:ssc="{SSC_NS}" version="1.0" name={quoteattr(c.name)}>
  <ssv:Parameters>
{chr(10).join(rows)}
  </ssv:Parameters>{uxml}
</ssv:ParameterSet>
"""


def _version() -> str:
    from .export import package_version

    return package_version()


def schema_problems(path) -> list[str]:
    """Problems of the package's SSD and SSV files against the SSP 1.0 XSD shipped with
    fmpy (fmpy/ssp/schema), checked with lxml; [] when valid."""
    from lxml import etree
    import fmpy

    sdir = Path(fmpy.__file__).parent / "ssp" / "schema"
    out = []
    with zipfile.ZipFile(path) as z:
        for name in z.namelist():
            if name.endswith(".ssd"):
                xsd = sdir / "SystemStructureDescription.xsd"
            elif name.endswith(".ssv"):
                xsd = sdir / "SystemStructureParameterValues.xsd"
            else:
                continue
            schema = etree.XMLSchema(etree.parse(str(xsd)))
            doc = etree.fromstring(z.read(name))
            if not schema.validate(doc):
                out += [f"{name}:{e.line}: {e.message}" for e in schema.error_log]
    return out


def export_ssp(system, path, *, t_start: float | None = None, t_stop: float = 1.0,
               step_size: float = 1e-4, extrapolate: bool = True,
               table_step: float | None = None, progress: bool = False) -> SSPPath:
    """Write the Assembly ``system`` (or an ``(assembly, info)`` pair as the rigs' builders
    return, e.g. ``belt_assembly``) as an SSP 1.0 package at ``path`` (``*.ssp``).

    t_start, t_stop [s]: the DefaultExperiment (t_start defaults to 0, or to info["t0"]);
    step_size [s] is only a suggestion (SSP 1.0 has no step size; the importer chooses
    its communication step). ``extrapolate`` (default True): masses extrapolate their
    input forces linearly over a communication step and links report their force at the
    endpoint motion predicted at the step's end (second order in the step for smooth
    systems; False holds inputs: first order). table_step [s]: knot spacing of a callable
    imposed motion's table (default min(1e-3, (t_stop − t_start)/1000)). Returns the path; ``.system`` lists the
    components and connections. FMUExportError (a ValueError) names what cannot be
    exported."""
    asm, info = (system if isinstance(system, tuple) else (system, {}))
    path = Path(path)
    if path.suffix != ".ssp":
        raise FMUExportError(f"output file must end in .ssp (got {str(path)!r})")
    if t_start is None:
        t_start = float(info.get("t0", 0.0))
    for nm, v in (("t_start", t_start), ("t_stop", t_stop), ("step_size", step_size)):
        if not (isinstance(v, (int, float)) and math.isfinite(v)):
            raise FMUExportError(f"{nm} must be a finite number of seconds (got {v!r})")
    if not t_stop > t_start:
        raise FMUExportError(f"t_stop must be > t_start = {t_start:g} s (got {t_stop!r})")
    if not step_size > 0:
        raise FMUExportError(f"step_size must be > 0 s (got {step_size!r})")
    if table_step is not None and not (isinstance(table_step, (int, float))
                                       and math.isfinite(table_step) and table_step > 0):
        raise FMUExportError(f"table_step must be > 0 s (got {table_step!r})")
    sysm = describe(asm, extrapolate=extrapolate, t_start=float(t_start),
                    t_stop=float(t_stop), table_step=table_step)
    sysm.start, sysm.stop, sysm.step = float(t_start), float(t_stop), float(step_size)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with tempfile.TemporaryDirectory(prefix="hystmech-ssp-") as td:
        res = Path(td)
        for i, c in enumerate(sysm.components):
            if progress:
                import sys

                print(f"building {c.source} ({i + 1} of {len(sysm.components)})",
                      file=sys.stderr, flush=True)
            if c.part is not None:
                build_part(c.part, res / f"{c.name}.fmu")
            else:
                export_fmu(c.element, res / f"{c.name}.fmu", fmi_version=2)
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr(SSD_NAME, ssd_xml(sysm))
            for c in sysm.components:
                z.write(res / f"{c.name}.fmu", c.source)
                z.writestr(f"resources/{c.name}.ssv", ssv_xml(c))
    os.replace(tmp, path)
    out = SSPPath(path)
    out.system = sysm
    return out
