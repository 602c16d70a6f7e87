"""Export a force element as a native FMU (FMI 2.0 co-simulation + model exchange, or
FMI 3.0).

The FMU holds no Python: the law's C kernel (components/LAW.c, beside LAW.py, same
functions and parameter vector p) is compiled with the shared FMI boilerplate
(fmu/templates/) into binaries/linux64 (by default only that one), on request also
cross-built by `zig cc` (PyPI ziglang) for win64, darwin64, aarch64-darwin and
aarch64-linux, and the sources go into sources/ so that any other platform can build it
(fmpy compile, the FMI 3.0 buildDescription.xml, or a plain `cc -shared`). The FMU also
carries model.png (fmu/icon.py), FMI 3.0 terminalsAndIcons/ (fmu/terminals.py) and a
documentation page listing its variables (fmu/variables.py).
"""
from __future__ import annotations

import datetime
import hashlib
import inspect
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import uuid
import zipfile
from dataclasses import dataclass
from typing import NamedTuple
from pathlib import Path
from xml.sax.saxutils import escape

import numpy as np

from ..components.base import ForceElement
from ..paths import user_cache
from .variables import ExportedFMU, exported, fmu_variables, variables_html

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"
COMPONENTS = HERE.parent / "components" if (HERE.parent / "components").is_dir() else None
KIND_CODE = {"smooth": 0, "inclusion": 1, "operator": 2}

# value references: fixed ones, then blocks for parameters, states and derivatives
VR_U, VR_V, VR_F, VR_RTOL = 1, 2, 3, 4
VR_Q, VR_X, VR_DX = 100, 100000, 200000
VR_QA = 400000   # FMI 3.0 array parameters (fmu/fmi3.py, fmu/templates/fmi3_model.c)


# <LogCategories> of every FMU (fmi2SetDebugLogging / fmi3SetDebugLogging switch them;
# hm_config.h gets the same list for the C side)
LOG_CATEGORIES = (
    ("logEvents", "model exchange: events and where the memory was anchored (status OK)"),
    ("logStatusWarning", "calls that returned a warning"),
    ("logStatusDiscard", "calls that returned discard (e.g. a step over its work budget)"),
    ("logStatusError", "calls that returned an error, with the reason"),
)


def log_categories_xml() -> str:
    """The <LogCategories> element shared by the FMI 2.0 and 3.0 descriptions."""
    rows = "".join(f'\n    <Category name="{n}" description="{escape(d)}"/>'
                   for n, d in LOG_CATEGORIES)
    return f"  <LogCategories>{rows}\n  </LogCategories>"


class FMUExportError(ValueError):
    """An element that cannot be exported, or a failed build (message names the cause)."""


@dataclass
class LawSpec:
    """What the exporter needs to know about one element (derived, not configured)."""

    cls_name: str
    prefix: str              # C function prefix: dahl -> dahl_advance, dahl_force ...
    c_file: Path
    kind: str
    q_names: list            # constructor parameters, arrays flattened as name[i]
    q_values: list
    q_units: list
    q_docs: list
    n_p: int
    n_x: int
    state_names: list
    x_nominal: list
    sources: list = None     # C files the law needs in sources/ (default: [c_file])
    generated: str = ""      # C text of c_file when the exporter writes it (sums)
    # metadata (fmu/metadata.py): parameter bounds (None: unbounded), state units and
    # descriptions, and what F and each continuous state's rate depend on: a set of "u",
    # "v" and state indices (None: not declared, i.e. everything)
    q_min: list = None
    q_max: list = None
    state_units: list = None
    state_docs: list = None
    force_deps: frozenset = None
    rate_deps: dict = None    # continuous state index -> its rate's dependencies
    cont_states: list = None  # model exchange: indices of continuous states (None: by kind)
    q_tunable: list = None    # per parameter: changeable mid-run (metadata.is_tunable)
    struct: object = None     # FMI 3.0 structural parameter (fmu/fmi3_structural.py)
    flange: str = "translational"  # or "rotational" (fmu/terminals.py FLANGES)

    def io_text(self) -> str:
        """"inputs u [m], v [m/s], output F [N]" in the flange's units."""
        from .terminals import FLANGES

        fl = FLANGES[self.flange]
        return (f"inputs u [{fl['u'][0]}], v [{fl['v'][0]}], output F [{fl['F'][0]}]"
                + (" (a torsion law: u the relative angle, F the torque)"
                   if self.flange == "rotational" else ""))

    def c_sources(self) -> list:
        return list(self.sources) if self.sources is not None else [self.c_file]


def _components_dir(element) -> Path:
    return Path(inspect.getfile(type(element))).resolve().parent


def law_spec(element: ForceElement) -> LawSpec:
    """Check that ``element`` can be exported and describe it for the C side."""
    if not isinstance(element, ForceElement):
        raise FMUExportError(f"element must be a hystmech force element "
                             f"(got {type(element).__name__})")
    from ..components.combine import SumElement

    if isinstance(element, SumElement):
        return _sum_spec(element)
    name = type(element).__name__
    for k, v in element.params.items():
        if callable(v):
            raise FMUExportError(
                f"{name}: parameter {k!r} is a Python callable, which cannot be exported: an "
                f"FMU holds no Python, only the law's C form (components/*.c) with numeric "
                f"parameters" + (" (leave g and f at their default Stribeck/viscous form)"
                                 if name == "LuGre" else
                                 " (ModifiedDahl is the exportable Duhem law with linear "
                                 "envelopes)" if name == "Duhem" else ""))
    # the C names follow the Python force kernel: dahl_force -> dahl_advance, dahl_force,
    # dahl_rate, dahl_setup in dahl.c (the force kernel is the one unique to each law)
    if "force" not in type(element).__dict__:
        raise FMUExportError(f"{name} has no C kernel of its own (it reuses its base class's "
                             f"kernels with other constructor parameters); export the base "
                             f"law instead")
    fk = element.force
    cls_fk = getattr(type(element), "force", None)
    if fk is None or cls_fk is None or fk is not cls_fk:
        raise FMUExportError(f"{name}: this instance uses custom kernels (built from Python "
                             f"callables), which cannot be exported to C")
    prefix = getattr(fk, "__name__", "")
    if not prefix.endswith("_force"):
        raise FMUExportError(f"{name}: cannot derive the C kernel name from {prefix!r}")
    prefix = prefix[: -len("_force")]
    py_file = Path(inspect.getfile(type(element))).resolve()
    c_file = py_file.with_suffix(".c")
    if not c_file.exists() or f"{prefix}_force(" not in c_file.read_text():
        raise FMUExportError(f"{name}: no C kernel {prefix}_force in {c_file.name} "
                             f"(the C form of the law must sit beside {py_file.name})")
    q_names, q_values, q_units, q_docs = [], [], [], []
    info = {pi.name: pi for pi in element.param_info}
    sig = inspect.signature(type(element).__init__)
    names = [pi.name for pi in element.param_info] or [
        p for p in sig.parameters if p != "self"]
    # constructor keywords stored in params but not described in param_info (e.g.
    # Preisach's slope_width) are parameters too
    names += [k for k in element.params if k not in names]
    for k in names:
        if k not in element.params:
            continue
        v = element.params[k]
        pi = info.get(k)
        unit = pi.unit if pi else ""
        doc = pi.doc if pi else ""
        if v is None:
            raise FMUExportError(f"{name}: parameter {k!r} is None; give it a value to export")
        if isinstance(v, (bool, np.bool_)):
            v = float(v)
        if np.ndim(v) == 0:
            try:
                q_names.append(k); q_values.append(float(v)); q_units.append(unit)
                q_docs.append(doc)
            except (TypeError, ValueError):
                raise FMUExportError(f"{name}: parameter {k!r} = {v!r} is not a number "
                                     f"and cannot be an FMU parameter") from None
        else:
            a = np.asarray(v, dtype=float).ravel()
            for i, ai in enumerate(a):
                q_names.append(f"{k}[{i}]"); q_values.append(float(ai)); q_units.append(unit)
                q_docs.append(doc)
    n_x = element.n_states
    sn = _state_names(element)
    taken = {"u", "v", "F", "rtol", *q_names}
    # a state called like an input/output/parameter (ModifiedDahl's state is F) gets a
    # prefix so that every FMU variable name stays unique
    sn = [f"state_{s}" if s in taken else s for s in sn]
    xs = getattr(element, "x_scale", None)
    x_nom = [1.0] * n_x if xs is None else [float(abs(s)) or 1.0 for s in np.ravel(xs)]
    if len(x_nom) != n_x:
        x_nom = [1.0] * n_x
    spec = LawSpec(name, prefix, c_file, element.kind, q_names, q_values, q_units, q_docs,
                   int(element.p.size), int(n_x), sn, x_nom)
    _add_metadata(spec, element)
    return spec


def _add_metadata(spec: LawSpec, element) -> None:
    """Bounds, units, state descriptions and dependencies of a single law (fmu/metadata.py)."""
    from . import metadata as md

    spec.q_units = [md.param_unit(element, n, u) for n, u in zip(spec.q_names, spec.q_units)]
    spec.q_min, spec.q_max = [], []
    spec.q_tunable = [md.is_tunable(element, n) for n in spec.q_names]
    for j, (n, val) in enumerate(zip(spec.q_names, spec.q_values)):
        if md.is_fixed(element, n):
            lo = hi = val
            spec.q_docs[j] = (spec.q_docs[j] + "; " if spec.q_docs[j] else "") + \
                "fixed when the FMU is built"
        else:
            r = md.param_range(element, n)
            lo, hi = (r.fmi_min(), r.fmi_max()) if r is not None else (None, None)
            if r is not None and not spec.q_docs[j]:
                spec.q_docs[j] = f"in {r.text()}"
        spec.q_min.append(lo)
        spec.q_max.append(hi)
    meta = md.law_meta(element)
    if meta is None:
        return
    if meta.states is not None:
        info = meta.states(element)
        if len(info) == spec.n_x:
            taken = {"u", "v", "F", "rtol", *spec.q_names}
            spec.state_names = [f"state_{n}" if n in taken else n for n, _, _ in info]
            spec.state_units = [u for _, u, _ in info]
            spec.state_docs = [d for _, _, d in info]
    cont = set(continuous_states(spec))
    known = _knowns(cont, set(range(spec.n_x)) - cont)
    spec.force_deps = _cs_feedthrough(spec, frozenset().union(*(known[k] for k in meta.force)))
    spec.rate_deps = {i: frozenset().union(*(known[k] for k in meta.rate)) for i in cont}


def _state_names(element) -> list:
    sn = list(getattr(element, "state_names", ()) or ())
    n_x = element.n_states
    if len(sn) != n_x:
        base = sn[0] if len(sn) == 1 else "x"
        sn = [f"{base}[{i}]" for i in range(n_x)]
    return sn


def _sum_spec(element) -> LawSpec:
    """A SumElement (components/combine.py) as one generated C law, hm_sum.c: part i
    owns x[xo_i : xo_i + nx_i] and p[po_i : po_i + np_i] exactly as in combine.py, and
    its constructor parameters are the FMU parameters ``part<i>.<name>`` (arrays
    ``part<i>.<name>[k]``); states are ``part<i>.<state>``."""
    specs = []
    for i, el in enumerate(element.parts):
        try:
            specs.append(law_spec(el))
        except FMUExportError as e:
            raise FMUExportError(f"SumElement part{i} ({type(el).__name__}): {e}") from None
    q_names, q_values, q_units, q_docs, sn, x_nom, files = [], [], [], [], [], [], []
    for i, (el, sp) in enumerate(zip(element.parts, specs)):
        q_names += [f"part{i}.{n}" for n in sp.q_names]
        q_values += sp.q_values
        q_units += sp.q_units
        q_docs += [f"{sp.cls_name}: {d}" if d else sp.cls_name for d in sp.q_docs]
        sn += [f"part{i}.{n}" for n in _state_names(el)]
        x_nom += sp.x_nominal
        files += [f for f in sp.c_sources() if f not in files]
    kind = element.kind
    gen = _sum_source(element, specs, files)
    cs = None
    if kind != "smooth":  # the smooth parts' states stay continuous states
        cs = [o + j for el, sp, o in zip(element.parts, specs, element.state_offsets)
              if sp.kind == "smooth" for j in range(sp.n_x)]
    spec = LawSpec("SumElement", "hm_sum", Path("hm_sum.c"), kind, q_names, q_values, q_units,
                   q_docs, int(element.p.size), int(element.n_states), sn, x_nom,
                   sources=files, generated=gen, cont_states=cs)
    _sum_metadata(spec, element, specs)
    return spec


def _sum_metadata(spec: LawSpec, element, specs) -> None:
    """The parts' metadata on the sum's slices: bounds and units carry over, F depends
    on the union of the parts' knowns, a part's state rates on that part's knowns."""
    from . import metadata as md

    spec.q_min = [b for sp in specs for b in sp.q_min]
    spec.q_max = [b for sp in specs for b in sp.q_max]
    spec.q_tunable = [b for sp in specs for b in (sp.q_tunable or [False] * len(sp.q_names))]
    metas = [md.law_meta(el) for el in element.parts]
    units, docs, names = [], [], []
    for i, (el, sp, meta) in enumerate(zip(element.parts, specs, metas)):
        info = meta.states(el) if meta is not None and meta.states is not None else None
        if info is None or len(info) != sp.n_x:
            info = [(n, "", "") for n in _state_names(el)]
        names += [f"part{i}.{n}" for n, _, _ in info]
        units += [u for _, u, _ in info]
        docs += [f"{sp.cls_name}: {d}" if d else "" for _, _, d in info]
    spec.state_names, spec.state_units, spec.state_docs = names, units, docs
    if any(m is None for m in metas):
        return
    cont = set(continuous_states(spec))
    force, rate = set(), {}
    for el, meta, xo in zip(element.parts, metas, element.state_offsets):
        own = set(range(xo, xo + el.n_states))
        known = _knowns(own & cont, own - cont)
        force |= set().union(*(known[k] for k in meta.force))
        for i in own & cont:
            rate[i] = frozenset().union(*(known[k] for k in meta.rate))
    spec.force_deps = _cs_feedthrough(spec, frozenset(force))
    spec.rate_deps = rate


def _cs_feedthrough(spec: LawSpec, deps: frozenset) -> frozenset:
    """F's dependencies as one ModelStructure declares them for model exchange and
    co-simulation: in co-simulation a new input (u, v) set after a step carries the
    committed state along the input path to it (fmu/templates/hm_fmu.h, hm_now), so F
    of a law with states depends on u and v directly there (feedthrough), even where the
    model-exchange F depends on the state only (Dahl F = Fc·w)."""
    return deps | {"u", "v"} if spec.n_x > 0 else deps


def _knowns(cont: set, other: set) -> dict:
    """What "u", "v", "x" of a law's declaration stand for in <Dependencies>: the inputs,
    and the law's continuous states; a state that is not a continuous state is evaluated
    at the current input (fmu/templates: the memory carried along u to the input), so
    "x" there means a dependency on u."""
    return {"u": {"u"}, "v": {"v"}, "x": set(cont) | ({"u"} if other else set())}


def _sum_source(element, specs, files) -> str:
    """C text of the parallel sum: each kernel calls the parts' kernels on their slices
    (the C form of combine._build_source; forces summed in the same order)."""
    parts = element.parts
    xo, po, qo = list(element.state_offsets), list(element.param_offsets), []
    o = 0
    for sp in specs:
        qo.append(o)
        o += len(sp.q_values)
    nq = o
    desc = " + ".join(sp.cls_name for sp in specs)
    L = [f"/* generated by hystmech.fmu.export_fmu: SumElement {desc}, F = sum of the parts'",
         " * forces (components/combine.py). Part i owns x[xo_i ..], p[po_i ..] and the",
         " * constructor parameters q[qo_i ..] (FMU parameters part<i>.<name>). */"]
    L += [f'#include "{f.name}"' for f in files]
    L.append("")
    L.append("void hm_sum_advance(double *x, double u0, double u1, double dt, double v,"
             " const double *p, double rtol)\n{")
    for i, sp in enumerate(specs):
        L.append(f"    {sp.prefix}_advance(x + {xo[i]}, u0, u1, dt, v, p + {po[i]}, rtol);")
    L.append("}\n")
    L.append("double hm_sum_force(const double *x, double u, double v, const double *p)\n{")
    L.append("    double F = 0.0;")
    for i, sp in enumerate(specs):
        L.append(f"    F += {sp.prefix}_force(x + {xo[i]}, u, v, p + {po[i]});")
    L.append("    return F;\n}\n")
    if element.kind == "smooth":
        L.append("void hm_sum_rate(const double *x, double u, double v, const double *p,"
                 " double *out)\n{")
        for i, sp in enumerate(specs):
            L.append(f"    {sp.prefix}_rate(x + {xo[i]}, u, v, p + {po[i]}, out + {xo[i]});")
        L.append("}\n")
    L.append("const char *hm_sum_setup(const double *q, int nq, double *p, int np, double *x0,"
             " int nx)\n{")
    L.append("    static HM_TLS char msg[320];\n    const char *e;")
    L.append(f'    HM_CHECK(nq == {nq} && np == {element.p.size} && nx == {element.n_states}, '
             f'"SumElement: wrong vector sizes");')
    for i, (el, sp) in enumerate(zip(parts, specs)):
        L.append(f"    e = {sp.prefix}_setup(q + {qo[i]}, {len(sp.q_values)}, p + {po[i]}, "
                 f"{sp.n_p}, x0 + {xo[i]}, {sp.n_x});")
        L.append(f'    if (e) {{ snprintf(msg, sizeof msg, "part{i} ({sp.cls_name}): %s", e); '
                 f'return msg; }}')
    L.append("    return NULL;\n}")
    L += _sum_extras(element, specs, xo, po)
    return "\n".join(L) + "\n"


def _sum_extras(element, specs, xo, po) -> list:
    """C of the sum's model-exchange switch point (the nearest of the parts') and state
    check (every part's), for the FMI boilerplate (fmu/templates)."""
    feats = [_c_features(sp) for sp in specs]
    L = []
    smooth = [sp.kind == "smooth" and sp.n_x > 0 for sp in specs]
    if element.kind != "smooth" and any(smooth):
        # model exchange of a mixed sum: the anchor advances the inclusions/operators only,
        # the smooth parts are integrated by the host (their rates)
        L.append("\nvoid hm_sum_advance_ops(double *x, double u0, double u1, double dt, double v,"
                 " const double *p, double rtol)\n{")
        for i, sp in enumerate(specs):
            if not smooth[i]:
                L.append(f"    {sp.prefix}_advance(x + {xo[i]}, u0, u1, dt, v, p + {po[i]}, rtol);")
        L.append("}")
        L.append("\nvoid hm_sum_rate_smooth(const double *x, double u, double v, const double *p,"
                 " double *out)\n{")
        for i, sp in enumerate(specs):
            if smooth[i]:
                L.append(f"    {sp.prefix}_rate(x + {xo[i]}, u, v, p + {po[i]}, out + {xo[i]});")
        L.append("}")
    n = element.n_states
    if element.kind == "smooth" and all(f["jac"] for f in feats):
        # the parts' Jacobians on their diagonal blocks; F's row sums the parts' rows
        m = max(sp.n_x for sp in specs)
        L.append("\nvoid hm_sum_jac(const double *x, double u, double v, const double *p,"
                 " double *J)\n{")
        L.append(f"    double Jp[{(m + 1) * (m + 2)}];\n    int r, k;")
        L.append(f"    for (k = 0; k < {(n + 1) * (n + 2)}; k++) J[k] = 0.0;")
        for i, sp in enumerate(specs):
            ni = sp.n_x
            L.append(f"    {sp.prefix}_jac(x + {xo[i]}, u, v, p + {po[i]}, Jp);")
            L.append(f"    for (r = 0; r <= {ni}; r++) {{\n"
                     f"        int row = r < {ni} ? {xo[i]} + r : {n};\n"
                     f"        for (k = 0; k < {ni}; k++) J[row * {n + 2} + {xo[i]} + k] = "
                     f"Jp[r * {ni + 2} + k];\n"
                     f"        J[row * {n + 2} + {n}] += Jp[r * {ni + 2} + {ni}];\n"
                     f"        J[row * {n + 2} + {n + 1}] += Jp[r * {ni + 2} + {ni + 1}];\n    }}")
        L.append("}")
    if element.kind != "smooth" and not any(smooth) and all(
            f["dforce"] or (sp.kind == "smooth" and f["jac"]) for sp, f in zip(specs, feats)):
        # dF/du on the current branch and ∂F/∂v: the parts' sum (stateless smooth parts
        # from their Jacobian's F row)
        L.append("\nvoid hm_sum_dforce(const double *x, double u, double v, double dir,"
                 " const double *p, double *d)\n{\n    double e[2];\n    d[0] = d[1] = 0.0;")
        for i, (sp, f) in enumerate(zip(specs, feats)):
            if f["dforce"]:
                L.append(f"    {sp.prefix}_dforce(x + {xo[i]}, u, v, dir, p + {po[i]}, e);")
            else:
                L.append(f"    {sp.prefix}_jac(x + {xo[i]}, u, v, p + {po[i]}, e);")
            L.append("    d[0] += e[0];\n    d[1] += e[1];")
        L.append("    (void)dir;\n}")
    nz = [f["events"] for f in feats]
    if element.kind == "smooth" and any(nz):
        # a smooth sum's event indicators: every part's, in part order
        L.append(f"\n#define HM_SUM_NZ {sum(nz)}")
        L.append("void hm_sum_events(const double *x, double u, double v, const double *p,"
                 " double *z)\n{")
        o = 0
        for i, (sp, n) in enumerate(zip(specs, nz)):
            if n:
                L.append(f"    {sp.prefix}_events(x + {xo[i]}, u, v, p + {po[i]}, z + {o});")
                o += n
        L.append("}")
    if element.kind != "smooth":
        L.append("\ndouble hm_sum_switch(const double *x, double u, double dir, const double *p)"
                 "\n{\n    double best = dir * INFINITY, s;")
        for i, (sp, f) in enumerate(zip(specs, feats)):
            if f["switch"]:
                L.append(f"    s = {sp.prefix}_switch(x + {xo[i]}, u, dir, p + {po[i]});")
                L.append("    if (dir * s < dir * best) best = s;")
        L.append("    return best;\n}")
    L.append("\nconst char *hm_sum_check(const double *x, const double *p)\n{"
             "\n    const char *e = NULL;")
    for i, (sp, f) in enumerate(zip(specs, feats)):
        if f["check"]:
            L.append(f"    if ((e = {sp.prefix}_check(x + {xo[i]}, p + {po[i]})) != NULL) return e;")
    L.append("    (void)x; (void)p;\n    return e;\n}")
    return L


_C_FUNC = re.compile(r"^(?!static\b)(?:const\s+)?(?:void|double|int|char|float|long|unsigned)"
                     r"\b[\s*]*([A-Za-z_]\w*)\s*\(", re.M)


def _c_features(spec: LawSpec) -> dict:
    """What the law's C file offers beyond the four kernels: model-exchange switch
    points (inclusions/operators), event indicators (smooth laws with a non-Lipschitz
    point, with their count LAW_NZ), a check of a state from outside; and every
    external symbol, which hm_config.h renames with the model identifier."""
    text = spec.generated or spec.c_file.read_text()
    pre = spec.prefix
    nz = re.search(rf"#define {pre.upper()}_NZ (\d+)", text)
    syms = []
    for f in ([] if spec.generated else [spec.c_file]) + [
            f for f in spec.c_sources() if f != spec.c_file]:
        syms += _C_FUNC.findall(f.read_text())
    if spec.generated:
        syms += _C_FUNC.findall(spec.generated)
    return {"switch": f"{pre}_switch(" in text, "check": f"{pre}_check(" in text,
            "jac": f"{pre}_jac(" in text, "dforce": f"{pre}_dforce(" in text,
            "events": int(nz.group(1)) if nz and f"{pre}_events(" in text else 0,
            "symbols": sorted(set(syms))}


def provides_jacobian(spec: LawSpec) -> bool:
    """Model-exchange directional derivatives (fmi2GetDirectionalDerivative, FMI 3.0's
    directional and adjoint derivatives): smooth laws from LAW_jac (the twin of the
    Python jac kernel; a sum's assembled from its parts'), inclusions and operators
    without continuous states from LAW_dforce (dF/du on the current branch, ∂F/∂v; a
    sum's the sum of its parts')."""
    f = _c_features(spec)
    if spec.kind == "smooth":
        return f["jac"]
    return f["dforce"] and not continuous_states(spec)


def n_event_indicators(spec: LawSpec) -> int:
    """Event indicators of the FMU in model exchange (fmu/templates/fmi2_model.c):
    2 for inclusions and operators (reversal of u, next switch point), the law's own
    for smooth laws with a non-Lipschitz point (e.g. ModifiedDahl: 3), else 0."""
    return 2 if spec.kind != "smooth" else _c_features(spec)["events"]


# -- units ---------------------------------------------------------------------------
_BASE = {"m": {"m": 1}, "s": {"s": 1}, "kg": {"kg": 1}, "N": {"kg": 1, "m": 1, "s": -2},
         "rad": {"rad": 1}, "K": {"K": 1}, "J": {"kg": 1, "m": 2, "s": -2},
         "W": {"kg": 1, "m": 2, "s": -3}, "Hz": {"s": -1}}


def unit_exponents(unit: str) -> dict | None:
    """SI base-unit exponents of a unit written like "N.s/m", "1/m", "m/s2", "N/m^2".

    None for dimensionless ("1", "", "-") or units this parser does not know."""
    u = (unit or "").strip()
    if u in ("", "1", "-"):
        return None
    out: dict = {}
    parts = u.split("/")
    for j, part in enumerate(parts):
        sign = 1 if j == 0 else -1
        for tok in re.split(r"[.*·]", part):
            tok = tok.strip()
            if tok in ("", "1"):
                continue
            m = re.fullmatch(r"([A-Za-z]+)\^?(-?\d+)?", tok)
            if not m or m.group(1) not in _BASE:
                return None
            e = int(m.group(2) or 1) * sign
            for b, k in _BASE[m.group(1)].items():
                out[b] = out.get(b, 0) + k * e
    return {k: v for k, v in out.items() if v != 0} or None


# display units a tool may offer beside the SI unit (FMI: display = factor · value):
# the scales of small mechanisms (mm, kN, N/mm)
DISPLAY_UNITS = {"m": (("mm", 1e3), ("um", 1e6)), "m/s": (("mm/s", 1e3),),
                 "N": (("kN", 1e-3),), "N/m": (("N/mm", 1e-3), ("kN/m", 1e-3)),
                 "N.s/m": (("N.s/mm", 1e-3),), "J": (("kJ", 1e-3),),
                 "rad": (("deg", 57.29577951308232),)}


def _unit_defs(units) -> tuple[str, dict]:
    """XML of <UnitDefinitions> and a map unit string -> declared name (or None).

    Every unit is declared: SI ones with their base-unit exponents (and the display
    units of DISPLAY_UNITS), "1" as dimensionless,
    and units whose exponents depend on a parameter (BoucWen's 1/(m.N^(n-1)), modified
    Dahl's N^(1-mu)/m) by name only (no BaseUnit: a tool shows but cannot convert them)."""
    names, xml = {}, []
    for u in units:
        u = (u or "").strip()
        if u in names or u in ("", "-"):
            names.setdefault(u, None)
            continue
        names[u] = u
        ex = unit_exponents(u)
        if ex is not None:
            attrs = " ".join(f'{k}="{v}"' for k, v in sorted(ex.items()))
            disp = "".join(f'<DisplayUnit name="{n}" factor="{_fmt(f)}"/>'
                           for n, f in DISPLAY_UNITS.get(u, ()))
            xml.append(f'    <Unit name="{escape(u)}"><BaseUnit {attrs}/>{disp}</Unit>')
        elif u == "1":
            xml.append('    <Unit name="1"><BaseUnit/></Unit>')
        else:
            xml.append(f'    <Unit name="{escape(u)}"/>')
    return "\n".join(xml), names


def rate_unit(unit: str) -> str:
    """Unit of the time derivative of a quantity in ``unit``."""
    u = (unit or "").strip()
    if u in ("", "1", "-"):
        return "1/s"
    if unit_exponents(u) is not None and "/" not in u:
        return f"{u}/s"
    return f"({u})/s" if "/" in u else f"{u}/s"


def generation_tool() -> str:
    """``hystmech <version>`` (the installed distribution's version)."""
    return f"hystmech {package_version()}"


def package_version() -> str:
    try:
        from importlib.metadata import version

        return version("hystmech")
    except Exception:  # noqa: BLE001 - a source tree without installed metadata
        return "0+unknown"


def header_attributes(spec: LawSpec) -> str:
    """generationTool, author, version, license attributes shared by FMI 2.0 and 3.0."""
    return (f'generationTool="{escape(generation_tool())}" author="hystmech contributors" '
            f'version="{escape(package_version())}" license="MIT"')


# -- generated files -----------------------------------------------------------------
def _fmt(x: float) -> str:
    return repr(float(x))


def array_groups(q_names) -> list[tuple[str, int, int]]:
    """The array parameters among the flattened constructor parameters: (name, offset in
    q, length) for each run name[0], name[1], ... (sums: part<i>.name[k]). FMI 3.0
    declares each as one array variable of value reference VR_QA + its index."""
    out = []
    j = 0
    while j < len(q_names):
        m = re.fullmatch(r"(.+)\[0\]", q_names[j])
        if m is None:
            j += 1
            continue
        base, n = m.group(1), 1
        while j + n < len(q_names) and q_names[j + n] == f"{base}[{n}]":
            n += 1
        out.append((base, j, n))
        j += n
    return out


def _arrays_h(spec: LawSpec) -> str:
    """hm_config.h lines of the array parameters (used by the FMI 3.0 boilerplate)."""
    g = array_groups(spec.q_names)
    if not g:
        return ""
    return (f"#define HM_VR_QA {VR_QA}\n#define HM_NQA {len(g)}\n"
            f"static const int HM_QA_OFF[] = {{{', '.join(str(o) for _, o, _ in g)}}};\n"
            f"static const int HM_QA_LEN[] = {{{', '.join(str(n) for _, _, n in g)}}};\n")


def _config_h(spec: LawSpec, guid: str, rtol: float, ident: str = "hystmech") -> str:
    q = ", ".join(_fmt(v) for v in spec.q_values) or "0.0"
    xn = ", ".join(_fmt(v) for v in spec.x_nominal) or "1.0"
    tun = ", ".join("1" if b else "0" for b in (spec.q_tunable or [False] * len(spec.q_values))) or "0"
    rate = f"#define HM_RATE {spec.prefix}_rate\n" if spec.kind == "smooth" else ""
    feat = _c_features(spec)
    if feat["switch"] and spec.kind != "smooth":
        rate += f"#define HM_SWITCH {spec.prefix}_switch\n"
    if feat["check"]:
        rate += f"#define HM_CHECK_STATE {spec.prefix}_check\n"
    if provides_jacobian(spec):
        rate += (f"#define HM_JAC {spec.prefix}_jac\n" if spec.kind == "smooth" else
                 f"#define HM_DFORCE {spec.prefix}_dforce\n")
    if feat["events"] and spec.kind == "smooth":
        rate += f"#define HM_EVENTS {spec.prefix}_events\n#define HM_NZ_LAW {feat['events']}\n"
    cs = continuous_states(spec)
    if spec.kind != "smooth" and cs:
        rate += (f"#define HM_NCS_MIXED {len(cs)}\n#define HM_ADVANCE_OPS {spec.prefix}_advance_ops\n"
                 f"#define HM_RATE_SMOOTH {spec.prefix}_rate_smooth\n"
                 f"static const int HM_CS_IDX[] = {{{', '.join(map(str, cs))}}};\n")
    # every external kernel symbol gets the model identifier, so that source FMUs of
    # several laws (or of one law twice) link into one program
    rate += "".join(f"#define {n} {ident}__{n}\n" for n in feat["symbols"])
    rate += _arrays_h(spec)
    from .fmi3_structural import config_h as _struct_h

    rate += _struct_h(spec)
    return f"""/* generated by hystmech.fmu.export_fmu for {spec.cls_name}: law in {spec.c_file.name} */
#ifndef HM_CONFIG_H
#define HM_CONFIG_H
#define HM_GUID "{guid}"
#define HM_NX {spec.n_x}
#define HM_NP {spec.n_p}
#define HM_NQ {len(spec.q_values)}
#define HM_KIND {KIND_CODE[spec.kind]}
#define HM_MAX_STATES {max(spec.n_x, 1)}
#define HM_VR_U {VR_U}
#define HM_VR_V {VR_V}
#define HM_VR_F {VR_F}
#define HM_VR_RTOL {VR_RTOL}
#define HM_VR_Q {VR_Q}
#define HM_VR_X {VR_X}
#define HM_VR_DX {VR_DX}
#define HM_RTOL_START {_fmt(rtol)}
#define HM_ADVANCE {spec.prefix}_advance
#define HM_FORCE {spec.prefix}_force
#define HM_SETUP {spec.prefix}_setup
{rate}static const double HM_Q_START[] = {{{q}}};
static const int HM_Q_TUNABLE[] = {{{tun}}};
#define HM_N_LOGCAT {len(LOG_CATEGORIES)}
static const char *const HM_LOG_CAT[] = {{{", ".join(f'"{n}"' for n, _ in LOG_CATEGORIES)}}};
#define HM_LOG_CAT_LIST "{", ".join(n for n, _ in LOG_CATEGORIES)}"
static const double HM_X_NOMINAL[] = {{{xn}}};
#include "{spec.c_file.name}"
#endif
"""


class Var(NamedTuple):
    """One FMU variable (shared by the FMI 2.0 and 3.0 descriptions)."""

    name: str
    vr: int
    causality: str
    variability: str
    initial: str | None
    start: float | None
    unit: str
    desc: str
    nominal: float | None = None
    der_of: int | None = None     # index of the state it is the derivative of
    min: float | None = None
    max: float | None = None
    state: int | None = None      # index of the state it is


def continuous_states(spec: LawSpec) -> list:
    """Indices of the states that are continuous states in model exchange: all of a
    smooth law, none of an inclusion/operator, the smooth parts' of a mixed sum."""
    if spec.cont_states is not None:
        return list(spec.cont_states)
    return list(range(spec.n_x)) if spec.kind == "smooth" else []


def variables(spec: LawSpec, rtol: float) -> list[Var]:
    """The FMU's variables in modelDescription order, shared by the FMI 2.0 and 3.0
    descriptions."""
    from .terminals import FLANGES

    fl = FLANGES[spec.flange]
    out = [Var("u", VR_U, "input", "continuous", None, 0.0, *fl["u"]),
           Var("v", VR_V, "input", "continuous", None, 0.0, fl["v"][0],
               f"{fl['v'][1]} (co-simulation: u(t) = u_k + v_k (t - t_k) within a step)"),
           Var("F", VR_F, "output", "continuous", "calculated", None, *fl["F"])]
    nq = len(spec.q_names)
    qmin = spec.q_min or [None] * nq
    qmax = spec.q_max or [None] * nq
    for j, (n, val, u, d) in enumerate(zip(spec.q_names, spec.q_values, spec.q_units,
                                           spec.q_docs)):
        tunable = bool(spec.q_tunable and spec.q_tunable[j])
        out.append(Var(n, VR_Q + j, "parameter", "tunable" if tunable else "fixed", "exact",
                       val, u, d, min=qmin[j], max=qmax[j]))
    out.append(Var("rtol", VR_RTOL, "parameter", "fixed", "exact", rtol, "1",
                   "relative tolerance of the adaptive segment update (laws without an exact "
                   "one)", min=float(np.nextafter(0.0, 1.0)), max=float(np.nextafter(1.0, 0.0))))
    units = spec.state_units or [""] * spec.n_x
    docs = spec.state_docs or [f"internal state {i}" for i in range(spec.n_x)]
    cs = continuous_states(spec)
    for i, n in enumerate(spec.state_names):
        out.append(Var(n, VR_X + i, "local", "continuous", "calculated", None, units[i],
                       docs[i] + ("" if i in cs else
                                  " (at the current input; the memory changes at events)"),
                       spec.x_nominal[i] if i in cs else None, state=i))
    for i in cs:
        n = spec.state_names[i]
        out.append(Var(f"der({n})", VR_DX + i, "local", "continuous", "calculated", None,
                       rate_unit(units[i]) if units[i] else "", f"rate of {n}", der_of=i))
    return out


def dependencies(spec: LawSpec, ref) -> tuple[str | None, list]:
    """The <Dependencies> lists: (of F, [of the rate of each continuous state, in
    continuous_states order]) as space-separated references ``ref(known)`` (known: "u",
    "v" or a state index); None = undeclared (the attribute is then omitted: depends on
    every known)."""
    def fmt(deps):
        if deps is None:
            return None
        keys = sorted(deps, key=lambda k: (0, k) if isinstance(k, str) else (1, str(k)))
        return " ".join(str(r) for r in sorted(ref(k) for k in keys))

    rates = spec.rate_deps or {}
    return fmt(spec.force_deps), [fmt(rates.get(i)) for i in continuous_states(spec)]


def _model_description_2(spec: LawSpec, guid: str, ident: str, rtol: float) -> str:
    smooth = spec.kind == "smooth"
    vs = variables(spec, rtol)
    units_xml, unit_of = _unit_defs([v.unit for v in vs])

    def ua(u):
        n = unit_of.get(u)
        return f' unit="{escape(n)}"' if n else ""

    rows, idx, state_idx, der_idx = [], {}, {}, []
    for v in vs:
        attrs = f'name="{escape(v.name)}" valueReference="{v.vr}"'
        if v.desc:
            attrs += f' description="{escape(v.desc)}"'
        attrs += f' causality="{v.causality}" variability="{v.variability}"'
        if v.initial:
            attrs += f' initial="{v.initial}"'
        extra = ua(v.unit)
        if v.min is not None:
            extra += f' min="{_fmt(v.min)}"'
        if v.max is not None:
            extra += f' max="{_fmt(v.max)}"'
        if v.nominal is not None:
            extra += f' nominal="{_fmt(v.nominal)}"'
        if v.der_of is not None:  # FMI 2.0 points at the state's 1-based index in the list
            extra += f' derivative="{state_idx[v.der_of]}"'
        if v.start is not None:
            extra += f' start="{_fmt(v.start)}"'
        rows.append(f'    <ScalarVariable {attrs}>\n      <Real{extra}/>\n'
                    f'    </ScalarVariable>')
        idx[v.name] = len(rows)
        if v.state is not None:
            state_idx[v.state] = len(rows)
        if v.der_of is not None:
            der_idx.append(len(rows))
    # knowns of FMI 2.0 ModelStructure: inputs and continuous states, by 1-based index
    f_deps, r_deps = dependencies(
        spec, lambda k: idx[k] if isinstance(k, str) else state_idx[k])

    def dep(d):
        return "" if d is None else f' dependencies="{d}"'

    init = sorted([idx["F"]] + [state_idx[i] for i in continuous_states(spec)] + der_idx)
    md_der = "".join(f'\n      <Unknown index="{i}"{dep(d)}/>' for i, d in zip(der_idx, r_deps))
    md_init = "".join(f'\n      <Unknown index="{i}"/>' for i in init)
    src = '\n    <SourceFiles>\n      <File name="fmi2_model.c"/>\n    </SourceFiles>\n  '
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    derivs = f"\n    <Derivatives>{md_der}\n    </Derivatives>" if der_idx else ""
    cisn = "true" if smooth else "false"
    head = header_attributes(spec)
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="2.0" modelName="{spec.cls_name}" guid="{guid}"
  description="hystmech {spec.cls_name} force element ({spec.kind}): {spec.io_text()}"
  {head} generationDateAndTime="{now}"
  variableNamingConvention="flat" numberOfEventIndicators="{n_event_indicators(spec)}">
  <ModelExchange modelIdentifier="{ident}" canGetAndSetFMUstate="true" canSerializeFMUstate="true"
    completedIntegratorStepNotNeeded="{cisn}" canNotUseMemoryManagementFunctions="false"
    providesDirectionalDerivative="{'true' if provides_jacobian(spec) else 'false'}">{src}</ModelExchange>
  <CoSimulation modelIdentifier="{ident}" canHandleVariableCommunicationStepSize="true"
    canGetAndSetFMUstate="true" canSerializeFMUstate="true" canInterpolateInputs="true"
    maxOutputDerivativeOrder="{1 if provides_jacobian(spec) else 0}" canNotUseMemoryManagementFunctions="false">{src}</CoSimulation>
  <UnitDefinitions>
{units_xml}
  </UnitDefinitions>
{log_categories_xml()}
  <DefaultExperiment startTime="0" stopTime="1" stepSize="1e-4"/>
  <ModelVariables>
{chr(10).join(rows)}
  </ModelVariables>
  <ModelStructure>
    <Outputs>
      <Unknown index="{idx['F']}"{dep(f_deps)}/>
    </Outputs>{derivs}
    <InitialUnknowns>{md_init}
    </InitialUnknowns>
  </ModelStructure>
</fmiModelDescription>
"""


# -- building ------------------------------------------------------------------------
def fmi_headers_dir() -> Path:
    """Directory holding fmi2Functions.h / fmi3Functions.h (shipped with fmpy)."""
    import fmpy

    d = Path(fmpy.__file__).resolve().parent / "c-code"
    if not (d / "fmi2Functions.h").exists():
        raise FMUExportError(f"FMI headers not found in {d} (fmpy installation incomplete)")
    return d


def find_compiler(cc: str | None = None) -> str:
    """Path of the C compiler: ``cc``, else $CC, else gcc/cc on PATH (FMUExportError if none)."""
    cand = cc or os.environ.get("CC") or None
    tries = [cand] if cand else ["gcc", "cc", "clang"]
    for c in tries:
        exe = shutil.which(c.split()[0]) if c else None
        if exe:
            return exe
    raise FMUExportError(
        f"no C compiler found (tried {', '.join(tries)}); install gcc or set CC to a C "
        f"compiler to build the FMU's linux64 binary")


def _cache_dir() -> Path:
    d = os.environ.get("HYSTMECH_FMU_CACHE")
    return Path(d) if d else user_cache("fmu")


class Platform(NamedTuple):
    """One binary of an FMU: its folder under binaries/ (FMI 2.0, FMI 3.0), the zig
    target that cross-builds it, and the file extension."""

    fmi2: str
    fmi3: str
    zig_target: str
    ext: str


# Every binary is built by `zig cc` (PyPI ziglang) where it is installed: the Linux ones
# target glibc 2.17 (zig links against its stubs of that version, so the binary runs on
# any glibc >= 2.17 whatever the build machine's glibc is). Without zig, or with an
# explicit compiler (cc= or $CC), linux64 is built by that compiler and needs the
# build machine's glibc symbol versions (2.29 for exp/log/pow on a current glibc).
# FMI 2.0 names only linux64/win64/darwin64; aarch64 folders follow FMPy's names.
PLATFORMS = {
    "linux64": Platform("linux64", "x86_64-linux", "x86_64-linux-gnu.2.17", ".so"),
    "win64": Platform("win64", "x86_64-windows", "x86_64-windows-gnu", ".dll"),
    "darwin64": Platform("darwin64", "x86_64-darwin", "x86_64-macos", ".dylib"),
    "aarch64-darwin": Platform("aarch64-darwin", "aarch64-darwin", "aarch64-macos", ".dylib"),
    "aarch64-linux": Platform("aarch64-linux", "aarch64-linux", "aarch64-linux-gnu.2.17", ".so"),
}
CROSS = ("win64", "darwin64", "aarch64-darwin", "aarch64-linux")


def zig_available() -> bool:
    """True when `python -m ziglang` (the PyPI ziglang package) is installed."""
    import importlib.util

    return importlib.util.find_spec("ziglang") is not None


def resolve_platforms(platforms) -> list[str]:
    """The platform names to build: "native" (linux64 only: the default, seconds),
    "all" (every entry of PLATFORMS; needs ziglang; the first win64 build compiles zig's
    mingw-w64 runtime, minutes), "auto" (all when ziglang is installed, else native), or
    a list of names. None: $HYSTMECH_FMU_PLATFORMS, else "native"."""
    if platforms is None:
        platforms = os.environ.get("HYSTMECH_FMU_PLATFORMS") or "native"
    if isinstance(platforms, str):
        key = platforms.strip()
        if key == "native":
            return ["linux64"]
        if key == "auto":
            return ["linux64", *CROSS] if zig_available() else ["linux64"]
        if key == "all":
            names = ["linux64", *CROSS]
        else:
            names = [n.strip() for n in key.split(",") if n.strip()]
    else:
        names = list(platforms)
    names = ["linux64" if n == "native" else n for n in names]
    bad = [n for n in names if n not in PLATFORMS]
    if bad or not names:
        raise FMUExportError(f"platforms: unknown platform {bad[0] if bad else '(none)'!r}; "
                             f"allowed: native, auto, all or names from "
                             f"{', '.join(PLATFORMS)}")
    if any(n != "linux64" for n in names) and not zig_available():
        raise FMUExportError("platforms: building win64/darwin/aarch64 binaries needs zig "
                             "(pip install ziglang); use platforms='native' for linux64 only")
    return list(dict.fromkeys(names))


ZIG = "zig"


def linux64_compiler(cc: str | None = None) -> str:
    """What builds binaries/linux64: ``cc`` or $CC when given (find_compiler), else
    `zig cc` targeting glibc 2.17 (ZIG) when ziglang is installed, else the system C
    compiler (whose glibc then sets the binary's baseline)."""
    if cc is None and not os.environ.get("CC") and zig_available():
        return ZIG
    return find_compiler(cc)


def glibc_versions(so) -> set:
    """The glibc symbol versions (major, minor) a Linux binary needs, read from the
    version names in its file (the .gnu.version_r names live in .dynstr)."""
    data = Path(so).read_bytes()
    return {tuple(int(x) for x in m.group(1).split(b".")[:2])
            for m in re.finditer(rb"GLIBC_(\d+\.\d+(?:\.\d+)?)\x00", data)}


_FLAGS = ["-O2", "-fvisibility=hidden", "-std=c99", "-Wall", "-Wno-unused-function"]


def _zip_tree(root: Path, path: Path) -> None:
    """Write every file below the folder ``root`` into the zip archive ``path`` (an FMU:
    names relative to root, "/"-separated, in sorted order, deflated)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for f in sorted(Path(root).rglob("*")):
            if f.is_file():
                zf.write(f, f.relative_to(root).as_posix())


def build_failure_reason(returncode: int, stdout: str, stderr: str) -> str:
    """What follows "building the ... binary failed (...):": the compiler's stderr (its
    last 3000 characters), else its stdout, else how it ended (exit status or signal)."""
    text = (stderr or "").strip() or (stdout or "").strip()
    if text:
        return text[-3000:]
    if returncode < 0:
        try:
            sig = signal.Signals(-returncode).name
        except ValueError:
            sig = str(-returncode)
        return f"the compiler was killed by signal {sig} and printed nothing"
    return f"the compiler exited with status {returncode} and printed nothing"


def _run_build(cmd, cwd, platform: str, tick=None):
    """Run one compiler command; ``tick()`` is called about 4 times a second while it
    runs (a progress bar's elapsed time). Returns (returncode, stdout, stderr); a
    compiler that cannot be started is an FMUExportError with the system's reason."""
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, cwd=cwd)
    except OSError as e:
        raise FMUExportError(f"building the {platform} binary failed ({' '.join(cmd)}): "
                             f"cannot run {cmd[0]}: {e.strerror or e}") from None
    try:
        while True:
            try:
                out, err = proc.communicate(timeout=0.25)
                return proc.returncode, out, err
            except subprocess.TimeoutExpired:
                if tick is not None:
                    tick()
    except BaseException:  # Ctrl-C: no compiler left running
        proc.kill()
        proc.wait()
        raise


def _compile(srcdir: Path, main_c: str, out_so: Path, cc: str, platform: str = "linux64",
             tick=None) -> None:
    """Build one platform's binary of the FMU from srcdir (cached by content)."""
    key = hashlib.sha256()
    for f in sorted(srcdir.iterdir()):
        key.update(f.name.encode() + f.read_bytes())
    key.update(cc.encode() + main_c.encode() + platform.encode())
    inc = fmi_headers_dir()
    cache = _cache_dir() / (key.hexdigest()[:24] + ("-" + platform if platform != "linux64"
                                                     else "") + ".bin")
    if cache.exists():
        shutil.copy(cache, out_so)
        return
    if platform == "linux64" and cc != ZIG:
        flags = [*_FLAGS, "-fPIC", "-D_POSIX_C_SOURCE=200809L"]
        cmd = [cc, *flags, "-shared", f"-I{srcdir}", f"-I{inc}", str(srcdir / main_c),
               "-o", str(out_so), "-lm"]
    else:
        target = PLATFORMS[platform].zig_target
        cmd = [sys.executable, "-m", "ziglang", "cc", "-target", target, *_FLAGS,
               "-shared", f"-I{srcdir}", f"-I{inc}", str(srcdir / main_c), "-o", str(out_so)]
        if "windows" in target:  # the FMI functions are exported from the DLL
            cmd[7:7] = ["-DFMI2_Export=__declspec(dllexport)",
                        "-DFMI3_Export=__declspec(dllexport)"]
        else:
            cmd.insert(7, "-fPIC")
        if "linux" in target:
            cmd += ["-lm"]
    # built in a scratch folder: a DLL build leaves an import library and a .pdb beside it
    with tempfile.TemporaryDirectory(prefix="hystmech-cc-") as scratch:
        tmp_bin = Path(scratch) / out_so.name
        cmd[cmd.index(str(out_so))] = str(tmp_bin)
        rc, out, err = _run_build(cmd, scratch, platform, tick)
        if rc != 0:
            raise FMUExportError(f"building the {platform} binary failed ({' '.join(cmd)}): "
                                 f"{build_failure_reason(rc, out, err)}")
        shutil.copy(tmp_bin, out_so)
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_suffix(f".{os.getpid()}.tmp")
        shutil.copy(out_so, tmp)
        os.replace(tmp, cache)
    except OSError:
        pass  # a read-only cache only costs a rebuild


def export_fmu(element, path, fmi_version: int = 2, *, rtol: float = 1e-8,
               cc: str | None = None, model_identifier: str | None = None,
               platforms=None, progress: bool = False, max_size: int | None = None,
               flange: str = "translational") -> ExportedFMU:
    """Export ``element`` (a force element) as a native FMU at ``path``; return its path
    as an ExportedFMU (a pathlib.Path whose ``variables`` and repr list every FMU
    variable: name, causality, unit, meaning; see fmu/variables.py).

    fmi_version 2 (co-simulation and model exchange in one FMU) or 3. Inputs u [m] and
    v [m/s], output F [N]; every constructor parameter is a parameter with its Python name
    (variability fixed: settable before initialisation; tunable where changing it
    mid-run is meaningful and sizes or bounds no state, e.g. viscous coefficients and
    spring stiffnesses: also at communication points and in event mode), plus ``rtol``
    (tolerance of the adaptive segment update of laws without an exact one). ``cc``
    (default $CC, then `zig cc` for glibc 2.17 when ziglang is installed, then gcc)
    builds binaries/linux64; sources/ lets other platforms
    build the same FMU. FMUExportError (a ValueError) for laws that cannot be exported
    (custom Python callables), a missing compiler or a failed build.

    ``platforms`` (see resolve_platforms): "native" (the default, overridden by
    $HYSTMECH_FMU_PLATFORMS) builds binaries/linux64 only, in seconds; "all" adds win64,
    darwin64, aarch64-darwin and aarch64-linux, cross-built by `zig cc` from the PyPI
    package ziglang (FMI 3.0 folder names x86_64-windows, x86_64-darwin, aarch64-darwin,
    aarch64-linux; the first win64 build on a machine compiles zig's runtime: minutes);
    "auto" is "all" when ziglang is installed, else "native"; or a list of names. Built
    by zig, the Linux binaries need glibc >= 2.17 (see glibc_versions); built by a given
    compiler, linux64 needs the build machine's exp/log/pow symbol versions (2.29 on a
    current glibc).

    ``max_size`` (FMI 3.0, laws whose arrays share a length the kernel reads at run
    time: MaxwellSlip's n_elements, the discrete Preisach's n_relays): the capacity
    compiled into the FMU, default the exported length. The FMU declares that length as
    a structural parameter an importer may change in Configuration Mode to any value in
    [1, max_size] (see fmu/fmi3_structural.py); FMI 2.0 FMUs keep the exported sizes.

    ``flange``: "translational" (u [m], v [m/s], F [N]) or "rotational" for a torsion
    law (u the relative angle [rad], v [rad/s], F the torque [N.m]; parameter and state
    units carried over, m -> rad and N -> N.m; the FMI 3.0 terminal a rotational flange
    pair), see fmu/terminals.py.

    ``progress=True`` announces each platform's build on stderr and shows a tqdm bar
    per platform there (the bar only when stderr is a terminal).
    """
    if fmi_version not in (2, 3, "2", "3"):
        raise FMUExportError(f"fmi_version must be 2 or 3 (got {fmi_version!r})")
    fmi_version = int(fmi_version)
    if not (isinstance(rtol, (int, float)) and 0 < rtol < 1):
        raise FMUExportError(f"rtol must be in (0, 1) (got {rtol!r})")
    from .terminals import check_flange, flange_unit

    try:
        check_flange(flange)
    except ValueError as e:
        raise FMUExportError(str(e)) from None
    spec = law_spec(element)
    if flange != "translational":
        spec.flange = flange
        spec.q_units = [flange_unit(u, flange) for u in spec.q_units]
        if spec.state_units is not None:
            spec.state_units = [flange_unit(u, flange) for u in spec.state_units]
    if fmi_version == 3:
        from .fmi3_structural import structural_spec

        spec = structural_spec(spec, element, max_size)
    elif max_size is not None:
        raise FMUExportError(f"max_size needs fmi_version=3 (FMI 2.0 has no structural "
                             f"parameters: an FMI 2.0 FMU keeps the exported array sizes) "
                             f"(got max_size={max_size!r} with fmi_version=2)")
    plats = resolve_platforms(platforms)
    compiler = linux64_compiler(cc)
    path = Path(path)
    if path.suffix != ".fmu":
        raise FMUExportError(f"output file must end in .fmu (got {str(path)!r})")
    ident = model_identifier or f"hystmech_{spec.cls_name}"
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", ident):
        raise FMUExportError(f"model_identifier must be a C identifier (got {ident!r})")
    # the GUID is a hash of everything compiled into the binary, so that equal exports
    # give equal FMUs (and the compiled object can be cached)
    h = hashlib.sha256(_config_h(spec, "", rtol, ident).encode() + ident.encode()
                       + str(fmi_version).encode())
    comp = spec.c_sources()[0].parent
    for f in (*spec.c_sources(), comp / "hm_law.h",
              TEMPLATES / ("fmi2_model.c" if fmi_version == 2 else "fmi3_model.c"),
              TEMPLATES / "hm_fmu.h"):
        h.update(f.read_bytes())
    h.update(spec.generated.encode())
    if spec.flange != "translational":  # another description, another token
        h.update(spec.flange.encode())
    guid = "{" + str(uuid.UUID(h.hexdigest()[:32])) + "}"
    with tempfile.TemporaryDirectory(prefix="hystmech-fmu-") as td:
        root = Path(td)
        src = root / "sources"
        src.mkdir()
        shutil.copy(comp / "hm_law.h", src / "hm_law.h")
        for f in spec.c_sources():
            shutil.copy(f, src / f.name)
        if spec.generated:
            (src / spec.c_file.name).write_text(spec.generated)
        (src / "hm_config.h").write_text(_config_h(spec, guid, rtol, ident))
        if fmi_version == 2:
            main_c = "fmi2_model.c"
            md = _model_description_2(spec, guid, ident, rtol)
        else:
            from .fmi3 import model_description_3

            main_c = "fmi3_model.c"
            md = model_description_3(spec, guid, ident, rtol)
        shutil.copy(TEMPLATES / main_c, src / main_c)
        shutil.copy(TEMPLATES / "hm_fmu.h", src / "hm_fmu.h")
        (root / "modelDescription.xml").write_text(md)
        if fmi_version == 3:
            (src / "buildDescription.xml").write_text(
                '<?xml version="1.0" encoding="UTF-8"?>\n<fmiBuildDescription fmiVersion="3.0">\n'
                f'  <BuildConfiguration modelIdentifier="{ident}">\n'
                f'    <SourceFileSet language="C99">\n      <SourceFile name="{main_c}"/>\n'
                '    </SourceFileSet>\n    <Library name="m" description="the C maths '
                'library (exp, log, pow), where it is separate"/>\n'
                '  </BuildConfiguration>\n</fmiBuildDescription>\n')
        for i, name in enumerate(plats):
            pl = PLATFORMS[name]
            bindir = root / "binaries" / (pl.fmi2 if fmi_version == 2 else pl.fmi3)
            bindir.mkdir(parents=True)
            out_bin = bindir / f"{ident}{pl.ext}"
            if not progress:
                _compile(src, main_c, out_bin, compiler, name)
                continue
            by = (f"zig cc -target {pl.zig_target}" if name != "linux64" or compiler == ZIG
                  else Path(compiler).name)
            print(f"building binaries/{bindir.name} ({i + 1} of {len(plats)}, {by})",
                  file=sys.stderr, flush=True)
            with _platform_bar(bindir.name) as bar:
                _compile(src, main_c, out_bin, compiler, name, tick=bar.refresh)
                bar.update(1)
        _terminals_and_icon(root, fmi_version, ident, plats)
        doc = root / "documentation"
        doc.mkdir()
        (doc / "index.html").write_text(
            f"<html><body><h1>{escape(spec.cls_name)}</h1><p>{escape(repr(element))}</p>"
            f"<p>{escape(type(element).__doc__ or '')}</p>"
            f"<h2>Variables</h2>\n{variables_html(fmu_variables(root))}\n"
            f"<p>Binaries: {escape(', '.join(plats))}; sources/ builds the others "
            f"(fmpy compile, or any C99 compiler with the FMI headers).</p></body></html>\n")
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        _zip_tree(root, tmp)
        os.replace(tmp, path)
    return exported(path, fmi_version, plats)


def _terminals_and_icon(root: Path, fmi_version: int, ident: str, plats) -> None:
    """FMI 3.0: terminalsAndIcons/terminalsAndIcons.xml (the flange terminal, see
    fmu/terminals.py). Both versions: model.png (FMI 3.0 also terminalsAndIcons/icon.png),
    the law's loop drawn from this machine's binary (fmu/icon.py); none when the FMU
    holds no binary this machine runs."""
    import platform

    from .icon import law_loop, write_icon
    from .terminals import terminals_xml

    if fmi_version == 3:
        (root / "terminalsAndIcons").mkdir()
        u_unit = next((v.unit for v in fmu_variables(root) if v.name == "u"), "m")
        (root / "terminalsAndIcons" / "terminalsAndIcons.xml").write_text(terminals_xml(u_unit))
    native = sys.platform.startswith("linux") and platform.machine() in ("x86_64", "AMD64")
    loop = law_loop(root, fmi_version, ident) if native and "linux64" in plats else None
    if loop is None:
        return
    write_icon(*loop, root / "model.png")
    if fmi_version == 3:
        shutil.copy(root / "model.png", root / "terminalsAndIcons" / "icon.png")


def _platform_bar(label: str):
    """The tqdm bar of one platform's build on stderr (shown only on a terminal): the
    compiler gives no fraction done, so the bar fills when the binary is built and the
    elapsed time runs meanwhile."""
    from tqdm import tqdm

    return tqdm(total=1, desc=f"  {label}", file=sys.stderr, disable=None, leave=True,
                bar_format="{desc}: {bar} {elapsed}", dynamic_ncols=True)
