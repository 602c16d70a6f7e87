"""Read an SSP package written by :func:`hystmech.fmu.export_ssp` back into an Assembly.

Masses, springs, dampers (the part FMUs of fmu/ssp_parts.py, recognised by their
generationTool) become the Assembly's own DOFs, springs and dampers with the parameters
of their SSV files (the FMU start values where a parameter is not in an SSV); force
element FMUs become the native law when the FMU is hystmech's own (generationTool
"hystmech ...", modelName a law of hystmech.components) and ``native=True``, else an
:class:`~hystmech.fmu.FMUElement` on the FMU (extracted to ``workdir``). The rule of
export_ssp maps back: an element fed by a DOF's x, v sees u = x_a (b = ground), one fed
by a relative-motion part sees x_a − x_b; the masses' harmonic forces and f0 become
forces (gravity is inside f0, so the imported Assembly has gravity 0); a motion-source
part becomes an imposed DOF (a Harmonic, or the cubic Hermite interpolant of its table
resources/motion.csv, the function the FMU evaluates).
"""
from __future__ import annotations

import re
import tempfile
import zipfile
from pathlib import Path
from xml.etree import ElementTree as ET

import numpy as np

from ..systems.assembly import GROUND, Assembly, Harmonic
from .ssp_parts import GENERATOR, TABLE_FILE, hermite

NS = {"ssd": "http://ssp-standard.org/SSP1/SystemStructureDescription",
      "ssc": "http://ssp-standard.org/SSP1/SystemStructureCommon",
      "ssv": "http://ssp-standard.org/SSP1/SystemStructureParameterValues"}


class SSPImportError(ValueError):
    """A package that is not an SSP of hystmech's structure (message names what)."""


def _fmu_header(z: zipfile.ZipFile, source: str):
    import io

    with zipfile.ZipFile(io.BytesIO(z.read(source))) as f:
        md = ET.fromstring(f.read("modelDescription.xml"))
    start = {}
    for sv in md.iter("ScalarVariable"):
        r = sv.find("Real")
        if r is not None and r.get("start") is not None and \
                sv.get("causality") == "parameter":
            start[sv.get("name")] = float(r.get("start"))
    return md.get("generationTool", ""), md.get("modelName", ""), start


def _fmu_table(z: zipfile.ZipFile, source: str):
    """(t, x, v) of a motion part's resources/motion.csv, or None."""
    import io

    with zipfile.ZipFile(io.BytesIO(z.read(source))) as f:
        name = f"resources/{TABLE_FILE}"
        if name not in f.namelist():
            return None
        a = np.loadtxt(io.StringIO(f.read(name).decode()), delimiter=",", skiprows=1, ndmin=2)
    return a[:, 0], a[:, 1], a[:, 2]


class _Table:
    """x(t) or v(t) of a motion table (cubic Hermite, as the motion FMU)."""

    def __init__(self, table, offset, which):
        self.table, self.offset, self.which = table, offset, which

    def __call__(self, t):
        r = self.offset(t) + hermite(self.table, t)[self.which]
        return r if np.ndim(r) else float(r)


def _ssv(z: zipfile.ZipFile, source: str) -> dict:
    root = ET.fromstring(z.read(source))
    out = {}
    for p in root.iter(f"{{{NS['ssv']}}}Parameter"):
        r = p.find("ssv:Real", NS)
        if r is not None:
            out[p.get("name")] = float(r.get("value"))
    return out


def _native(model: str, params: dict):
    """The hystmech law ``model`` with the FMU's parameters (arrays rebuilt from name[i])."""
    from .. import components

    cls = getattr(components, model, None)
    if cls is None:
        return None
    kw, arrays = {}, {}
    for k, v in params.items():
        m = re.fullmatch(r"(\w+)\[(\d+)\]", k)
        if m:
            arrays.setdefault(m.group(1), {})[int(m.group(2))] = v
        elif k != "rtol":
            kw[k] = v
    for k, d in arrays.items():
        kw[k] = np.array([d[i] for i in sorted(d)])
    return cls(**kw)


def import_ssp(path, *, native: bool = True, workdir=None, fmu_options=None) -> Assembly:
    """The Assembly of the SSP package at ``path`` (written by export_ssp).

    native: hystmech's own element FMUs become the native law with the SSV parameters
    (False: every element is an FMUElement). workdir: where element FMUs are extracted
    for FMUElement (default: a new temporary folder that lives as long as the process).
    fmu_options: keyword arguments of FMUElement (e.g. mode="cs", step=1e-5).
    SSPImportError (a ValueError) for packages of another structure."""
    from ..components.base import ForceElement

    path = Path(path)
    if not path.is_file():
        raise SSPImportError(f"SSP file not found: {str(path)!r}")
    try:
        z = zipfile.ZipFile(path)
        ssd = ET.fromstring(z.read("SystemStructure.ssd"))
    except (zipfile.BadZipFile, KeyError, ET.ParseError) as e:
        raise SSPImportError(f"{str(path)!r} is not an SSP package with a "
                             f"SystemStructure.ssd ({e})") from None
    with z:
        comps = {}
        for c in ssd.iter(f"{{{NS['ssd']}}}Component"):
            name, source = c.get("name"), c.get("source")
            tool, model, start = _fmu_header(z, source)
            params = dict(start)
            for b in c.iter(f"{{{NS['ssd']}}}ParameterBinding"):
                if b.get("source"):
                    params.update(_ssv(z, b.get("source")))
            m = re.match(re.escape(GENERATOR) + r" \((\w+)\)", tool)
            kind = m.group(1) if m else "element"
            comps[name] = dict(kind=kind, model=model, params=params, source=source,
                               tool=tool, table=_fmu_table(z, source)
                               if kind == "motion" else None)
        conns = [(c.get("startElement"), c.get("startConnector"), c.get("endElement"),
                  c.get("endConnector")) for c in ssd.iter(f"{{{NS['ssd']}}}Connection")]
        feeds = {}                       # (element, connector) -> (element, connector)
        for a, ac, b, bc in conns:
            feeds[(b, bc)] = (a, ac)

        def node(comp, conn):
            src = feeds.get((comp, conn))
            if src is None:
                return GROUND
            if comps.get(src[0], {}).get("kind") not in ("mass", "motion"):
                raise SSPImportError(f"{comp}.{conn} is fed by {src[0]}.{src[1]}, not by a "
                                     f"mass or motion part")
            return src[0]

        asm = Assembly(gravity=0.0)
        for name, c in comps.items():
            if c["kind"] != "mass":
                continue
            p = c["params"]
            asm.add_dof(name, mass=p["m"], x0=p.get("x0", 0.0), v0=p.get("v0", 0.0))
            harm = sorted(int(k[2:]) for k in p if re.fullmatch(r"A_\d+", k))
            f0 = p.get("f0", 0.0)
            if not harm and f0 != 0.0:
                asm.add_force(name, Harmonic(f0), name=f"{name}_f0")
            for i, j in enumerate(harm):
                asm.add_force(name, Harmonic(f0 if i == 0 else 0.0, p[f"A_{j}"],
                                             p[f"omega_{j}"], p[f"phi_{j}"]),
                              name=f"{name}_force{j}")
        for name, c in comps.items():
            if c["kind"] != "motion":
                continue
            p = c["params"]
            hm = Harmonic(p.get("f0", 0.0), p.get("A", 0.0), p.get("omega", 0.0),
                          p.get("phi", 0.0))
            if c["table"] is None:
                asm.impose(name, u=hm)
            else:
                vh = Harmonic(0.0, -hm.amplitude * hm.omega, hm.omega,
                              hm.phase - np.pi / 2)
                asm.impose(name, u=_Table(c["table"], hm, 0), v=_Table(c["table"], vh, 1))
        tmp = None
        for name, c in comps.items():
            p = c["params"]
            if c["kind"] == "link":
                a, b = node(name, "xa"), node(name, "xb")
                if p.get("k", 0.0) != 0.0 or p.get("preload", 0.0) != 0.0 or \
                        p.get("u0", 0.0) != 0.0:
                    asm.add_spring(a, b, k=p.get("k", 0.0), u0=p.get("u0", 0.0),
                                   preload=p.get("preload", 0.0), name=name)
                    if p.get("c", 0.0) != 0.0:
                        asm.add_damper(a, b, c=p["c"], name=f"{name}_c")
                else:
                    asm.add_damper(a, b, c=p.get("c", 0.0), name=name)
            elif c["kind"] == "element":
                src = feeds.get((name, "u"))
                if src is not None and comps.get(src[0], {}).get("kind") == "relative":
                    a, b = node(src[0], "xa"), node(src[0], "xb")
                else:
                    a, b = node(name, "u"), GROUND
                el = None
                if native and c["tool"].startswith("hystmech") and \
                        not c["tool"].startswith(GENERATOR):
                    el = _native(c["model"], p)
                if el is None:
                    from .element import FMUElement

                    if workdir is None and tmp is None:
                        tmp = Path(tempfile.mkdtemp(prefix="hystmech-ssp-import-"))
                    d = Path(workdir) if workdir is not None else tmp
                    d.mkdir(parents=True, exist_ok=True)
                    f = d / Path(c["source"]).name
                    f.write_bytes(z.read(c["source"]))
                    el = FMUElement(f, parameters={k: v for k, v in p.items()
                                                   if k != "rtol"} or None,
                                    **(fmu_options or {}))
                if not isinstance(el, ForceElement):
                    raise SSPImportError(f"element {name!r}: not a force element")
                asm.add_element(name, el, a, b)
            elif c["kind"] not in ("mass", "relative", "motion"):
                raise SSPImportError(f"component {name!r}: unknown part kind {c['kind']!r}")
    return asm
