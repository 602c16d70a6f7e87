"""Pages generated from the code at every build (nothing here is written by hand).

* the API reference: one page per public module (every package, and every module that
  declares ``__all__``), found by walking the installed package; one page per public
  name, on the page of the shallowest module whose ``__all__`` lists it;
* a law card on the page of every law (each parameter's meaning, unit and allowed
  range, state, C twin, FMU export and engine-plugin availability), from the
  ``param_info`` table/``state_names`` of the classes, the C sources beside them and :mod:`hystmech.fmu.metadata`;
* the scenario file format from the runners' schemas (``hystmech.runners.SCHEMAS``,
  vocabulary of :mod:`hystmech.schema`);
* the command line from the argparse parsers (``hystmech.cli.build_parser``);
* the MuJoCo plugin table (``hystmech.plugins.mujoco.mjcf_reference()`` when it exists,
  else from the law classes by the same convention: plugin ``hystmech.<Class>``, config
  keys = constructor keyword names).

Run standalone (``python docs/_ext/hm_docgen.py OUTDIR``) it writes the same files,
which the test suite uses to check that every public name is in the API reference.
"""
from __future__ import annotations

import argparse
import functools
import importlib
import inspect
import io
import os
import pkgutil
import re
import sys
import textwrap
import tomllib
from contextlib import redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


# -- walking the package ---------------------------------------------------------------
def _top_packages() -> list[str]:
    """The subpackages of hystmech. In the source tree they live in sibling folders
    (pyproject's package-dir maps them into the one package), which pkgutil cannot see
    from ``hystmech.__path__``; in an installed copy they are subfolders."""
    import hystmech

    names = {f"hystmech.{m.name}" for m in pkgutil.iter_modules(hystmech.__path__) if m.ispkg}
    pp = ROOT / "pyproject.toml"
    if pp.exists():
        cfg = tomllib.loads(pp.read_text()).get("tool", {}).get("setuptools", {})
        names |= {n for n in cfg.get("package-dir", {}) if n.count(".") == 1}
    return sorted(names)


_ALL = re.compile(r"^__all__\s*(?::[^=\n]*)?\+?=", re.M)


def _declares_all(path: str) -> bool:
    """True when the module assigns ``__all__`` at top level (read, not imported)."""
    return bool(_ALL.search(Path(path).read_text()))


def _private(modname: str) -> bool:
    return any(p.startswith("_") for p in modname.split(".")[1:])


@functools.lru_cache(maxsize=None)
def public_modules() -> tuple[str, ...]:
    """Every public module of hystmech that the reference documents: the packages and
    the modules declaring ``__all__`` (private ones, ``_x``, and ``__main__`` left out)."""
    out = ["hystmech"]
    for top in _top_packages():
        if _private(top):
            continue
        out.append(top)
        pkg = importlib.import_module(top)
        for info in pkgutil.walk_packages(pkg.__path__, top + "."):
            if _private(info.name):
                continue
            if info.ispkg:
                out.append(info.name)
                continue
            spec = importlib.util.find_spec(info.name)
            if spec is not None and spec.origin and _declares_all(spec.origin):
                out.append(info.name)
    # plain modules of hystmech itself (core/) that declare __all__
    import hystmech

    for info in pkgutil.iter_modules(hystmech.__path__):
        name = f"hystmech.{info.name}"
        if info.ispkg or _private(name) or name in out:
            continue
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin and _declares_all(spec.origin):
            out.append(name)
    return tuple(sorted(set(out), key=lambda n: (n.count("."), n)))


def public_names(modname: str) -> list[str]:
    mod = importlib.import_module(modname)
    names = getattr(mod, "__all__", None)
    return list(names) if names is not None else []


def _kind(obj) -> str:
    if inspect.isclass(obj):
        return "exception" if issubclass(obj, BaseException) else "class"
    if inspect.isroutine(obj) or (callable(obj) and hasattr(obj, "py_func")):
        return "function"
    if inspect.ismodule(obj):
        return "module"
    return "data"


def _summary(obj) -> str:
    if _kind(obj) == "data":
        return ""
    doc = inspect.getdoc(obj) or ""
    para = doc.strip().split("\n\n", 1)[0].replace("\n", " ").strip()
    m = re.match(r"(.+?\.)(\s|$)", para)
    s = m.group(1) if m else para
    # the summary sits in a table cell: inline markup must stay balanced on one line
    if s.count("``") % 2 or s.count("`") % 2 or s.count("*") % 2:
        s = re.sub(r"[`*]", "", s)
    return escape_prose(s)


_LITERAL = re.compile(r"(``.+?``|:\w+:`[^`]*`|`[^`]*`)")


def escape_prose(line: str) -> str:
    """Escape what reST would read as markup in hystmech's prose: ``|x|`` is an absolute
    value (never a substitution), ``name_`` a name (never a link target). Inline
    literals and roles are left as they are."""
    parts = _LITERAL.split(line)
    for i in range(0, len(parts), 2):
        parts[i] = re.sub(r"(?<!\\)\|", r"\\|", parts[i])
        parts[i] = re.sub(r"(\w)_(?=\W|$)", r"\1\\_", parts[i])
    return "".join(parts)


def _process_docstring(app, what, name, obj, options, lines):
    """autodoc hook: escape absolute-value bars in the docstrings' prose (tables, whose
    lines start with ``|`` or ``+``, and literal blocks are kept)."""
    literal = False
    base = 0
    for i, line in enumerate(lines):
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if literal and stripped and indent <= base:
            literal = False
        table = (stripped.startswith(("+-", "+=")) or
                 (stripped.startswith("|") and stripped.endswith("|") and stripped.count("|") > 2))
        if literal or table or stripped.startswith((">>>", "..")):
            if stripped.endswith("::"):
                literal, base = True, indent
            continue
        if stripped.endswith("::"):
            literal, base = True, indent
        parts = _LITERAL.split(line)
        for j in range(0, len(parts), 2):
            parts[j] = re.sub(r"(?<!\\)\|", r"\\|", parts[j])
        lines[i] = "".join(parts)
    if _rest_problems(lines):
        fixed = _separate_indented_runs(lines)
        if _rest_problems(fixed):
            # a lone * in prose (components/*.c, #include of *.c) is not emphasis
            fixed = [line if line.lstrip().startswith(("..", ">>>")) else "".join(
                part if k % 2 else re.sub(r"(?<![*\\])\*(?!\*)", r"\\*", part)
                for k, part in enumerate(_LITERAL.split(line))) for line in fixed]
        if not _rest_problems(fixed):
            lines[:] = fixed


_SPHINX_ROLE = re.compile(r":(?:py:)?[a-z]+:`")


def _rest_problems(lines) -> bool:
    """True when plain docutils reports a warning or an error in these lines (Sphinx's
    roles and directives replaced by neutral ones first)."""
    from docutils.core import publish_doctree

    text = _SPHINX_ROLE.sub(":code:`", "\n".join(lines))
    text = re.sub(r"^(\s*)\.\. [\w:-]+::", r"\1.. note::", text, flags=re.M)
    err = io.StringIO()
    try:
        publish_doctree(text, settings_overrides={"warning_stream": err, "report_level": 2,
                                                  "halt_level": 5})
    except Exception:
        return True
    return bool(err.getvalue().strip())


def _separate_indented_runs(lines) -> list:
    """Docstrings laid out as aligned columns with hanging indents (a name, then its
    description continued further right) read as prose to a person but as broken
    indentation to reST: put a blank line wherever the indentation changes inside a
    paragraph, so each run becomes its own paragraph or block quote. Literal blocks
    (after ``::``) are kept as they are."""
    out, prev, literal, base = [], None, False, 0
    for line in lines:
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if not stripped:
            out.append(line)
            prev = None
            continue
        if literal and indent <= base:
            literal = False
        if not literal and prev is not None and indent != prev:
            out.append("")
        out.append(line)
        prev = indent
        if not literal and stripped.endswith("::"):
            literal, base = True, indent
    return out


def collect_api():
    """modules: [(modname, [(name, fullname_canonical)])]; objects: canonical fullname ->
    (modname, name, kind). An object listed in several ``__all__`` is documented once,
    in the shallowest module (then alphabetical); the others link to it."""
    modules = []
    owner = {}
    for modname in public_modules():
        mod = importlib.import_module(modname)
        entries = []
        for name in public_names(modname):
            obj = getattr(mod, name)
            entries.append((name, obj))
        modules.append((modname, mod, entries))
    order = sorted(range(len(modules)), key=lambda i: (modules[i][0].count("."), modules[i][0]))
    objects = {}
    for i in order:
        modname, _, entries = modules[i]
        for name, obj in entries:
            kind = _kind(obj)
            if kind == "module":
                continue
            key = id(obj) if kind != "data" else (modname, name)
            if key not in owner:
                owner[key] = f"{modname}.{name}"
                objects[owner[key]] = (modname, name, kind, obj)
    table = []
    for modname, mod, entries in modules:
        rows = []
        for name, obj in entries:
            kind = _kind(obj)
            if kind == "module":
                rows.append((name, obj.__name__, "module"))
            else:
                key = id(obj) if kind != "data" else (modname, name)
                rows.append((name, owner[key], kind))
        table.append((modname, mod, rows))
    return table, objects


def _title(text: str, ch: str = "=") -> str:
    return f"{text}\n{ch * len(text)}\n"


def _docname(fullname: str, modname: str) -> str:
    return f"{modname}/{fullname[len(modname) + 1:]}"


def write_api(outdir: Path) -> dict:
    """Write the API reference under ``outdir``; return {public name: page} for every
    name of every ``__all__`` (``modname.name`` -> docname of its canonical page)."""
    outdir.mkdir(parents=True, exist_ok=True)
    table, objects = collect_api()
    documented_modules = {m for m, _, _ in table}
    index = [".. This file is generated by docs/_ext/hm_docgen.py; do not edit.\n",
             _title("API reference"),
             "Generated from the docstrings. One page per public module: every package of",
             "``hystmech`` and every module that declares ``__all__``; each public name (an",
             "entry of ``__all__``) has its own page, on the shallowest module that exports",
             "it. Equations are cited as in the papers listed on :doc:`/references`",
             "(e.g. \"Bastien et al. (2007), eq. (11)\"); units are SI throughout.\n",
             ".. toctree::\n   :maxdepth: 1\n"]
    index += [f"   {m}" for m, _, _ in table]
    (outdir / "index.rst").write_text("\n".join(index) + "\n")
    where = {}
    for modname, mod, rows in table:
        lines = [".. This file is generated by docs/_ext/hm_docgen.py; do not edit.\n",
                 _title(f"``{modname}``")]
        # a module whose full name is also a documented object's (hystmech.systems.simulate
        # the function and the module) is described without a second index entry
        noindex = "   :no-index:\n" if modname in objects else ""
        lines.append(f".. automodule:: {modname}\n{noindex}")
        subs = [m for m in documented_modules if m.startswith(modname + ".")
                and m.count(".") == modname.count(".") + 1]
        if rows:
            lines.append(".. list-table::\n   :widths: 30 70\n   :header-rows: 0\n")
            for name, full, kind in rows:
                role = "mod" if kind == "module" else "obj"
                summ = _summary(objects[full][3]) if full in objects else ""
                lines.append(f"   * - :py:{role}:`{name} <{full}>`\n     - {summ or ' '}")
            lines.append("")
        if subs:
            lines.append("Submodules: " + ", ".join(f":py:mod:`{s}`" for s in sorted(subs)) + "\n")
        own = [full for name, full, kind in rows if full in objects and objects[full][0] == modname
               and full.rsplit(".", 1)[0] == modname]
        lines.append(module_examples(modname, mod, rows))
        if own:
            lines.append(".. toctree::\n   :hidden:\n")
            lines += [f"   {_docname(f, modname)}" for f in own]
            lines.append("")
        (outdir / f"{modname}.rst").write_text("\n".join(lines) + "\n")
        for name, full, kind in rows:
            where[f"{modname}.{name}"] = full
        for full in own:
            _, name, kind, obj = objects[full]
            page = outdir / (_docname(full, modname) + ".rst")
            page.parent.mkdir(parents=True, exist_ok=True)
            body = [".. This file is generated by docs/_ext/hm_docgen.py; do not edit.\n",
                    _title(f"``{full}``"), f".. currentmodule:: {modname}\n"]
            if kind == "class" and _is_law(obj):
                body.append(law_card(obj))
            directive = {"class": "autoclass", "exception": "autoexception",
                         "function": "autofunction", "data": "autodata"}[kind]
            opts = ""
            if kind in ("class", "exception"):
                opts = "   :members:\n   :show-inheritance:\n"
            if kind == "data":
                # autodata would print the docstring of the value's type (dict, str)
                value = repr(obj)
                value = value if len(value) <= 200 else value[:197] + "..."
                body.append(f".. py:data:: {name}\n   :value: {value}\n\n"
                            f"   Public constant of :py:mod:`{modname}`.\n")
            else:
                body.append(f".. {directive}:: {name}\n{opts}")
            body.append(examples_section(modname, name, obj, kind))
            page.write_text("\n".join(body) + "\n")
    return where


# -- Examples sections -------------------------------------------------------------------------
# constructor arguments of each law's generated example (SI units; any admissible values)
EXAMPLE_ARGS = {
    "Dahl": "rho=200.0, Fc=2.0",
    "LuGre": "sigma0=1e5, sigma1=316.0, Fc=1.0, Fs=1.5, vs=1e-3",
    "Duhem": "A=3000.0, hu=lambda u: 1.0 + 100.0 * u, hl=lambda u: -1.0 + 100.0 * u",
    "ModifiedDahl": "Lambda=117355.0, mu=0.37, a=7.146e4, b=959.6, d=5.322e4, e=397.2",
    "ViscousDahl": "kx=10.0, kw=2.0, rho=2000.0",
    "AsymmetricViscousDahl": "kx1=10.0, kw1=2.0, kx2=8.0, kw2=1.5, rho=2000.0",
    "NaiveAsymmetricViscousDahl": "kx1=10.0, kw1=2.0, kx2=8.0, kw2=1.5, rho=2000.0",
    "BoucWen": "A=1e4, beta=50.0, gamma=50.0, n=1.0",
    "Masing": "k=1e5, k0=1e3, alpha=50.0",
    "MaxwellSlip": "k=[1e5, 2e5], delta=[1e-4, 3e-4]",
    "Relay": "a1=-5e-4, a2=5e-4",
    "Preisach": "a1=[-5e-4, -2e-4], a2=[2e-4, 5e-4], weights=[1.0, 2.0]",
    "PrandtlIshlinskii": "r=[2e-4, 5e-4], weights=[1e3, 2e3], h=1e-4, u_bound=2e-3",
    "LinearSpring": "k=100.0",
    "LinearDamper": "c=10.0",
    "SpringDamper": "k=100.0, c=10.0",
    "SumElement": "Dahl(rho=2000.0, Fc=2.0), LinearSpring(k=100.0)",
    "MasingVector": "k=1e5, alpha=50.0",
    "BoucWenBiaxial": "A=1e4, beta=50.0, gamma=50.0",
}

_HAS_EXAMPLES = re.compile(r"^\s*Examples\s*\n\s*-{3,}|^\s*>>> ", re.M)


def law_example(name: str) -> str:
    """The generated example of law ``name``: build it and drive it (code)."""
    args = EXAMPLE_ARGS[name]
    imports = "from hystmech.components import " + (
        "Dahl, LinearSpring, SumElement" if name == "SumElement" else name)
    from hystmech import components

    if _is_vector(getattr(components, name)):
        return (f"import numpy as np\n{imports}\n\nlaw = {name}({args})\n"
                "t = np.linspace(0.0, 1.0, 1001)                                  # s\n"
                "U = 1e-3 * np.c_[np.sin(2 * np.pi * t), np.cos(2 * np.pi * t)]   # circular path [m]\n"
                "F, X = law.drive(t, U)                                           # F (n, 2) [N]\n")
    return (f"import numpy as np\nimport hystmech\n{imports}\n\nlaw = {name}({args})\n"
            "t = np.linspace(0.0, 2.0, 2001)                                  # s\n"
            "res = hystmech.drive(law, t, 1e-3 * np.sin(2 * np.pi * t))       # u [m]\n"
            "res.force                                                        # F [N]\n")


@functools.lru_cache(maxsize=None)
def _usage_sources() -> tuple[tuple[str, str], ...]:
    """(document, code) of every guide page's Python blocks and every gallery example."""
    docs = ROOT / "docs"
    out = []
    fence = re.compile(r"^```python[ \t]*\n(.*?)^```", re.M | re.S)
    for page in sorted([docs / "getting_started.md", *(docs / "guide").glob("**/*.md")]):
        if page.exists():
            code = "\n".join(fence.findall(page.read_text()))
            if code:
                out.append(("/" + page.relative_to(docs).with_suffix("").as_posix(), code))
    for ex in sorted((docs / "examples").glob("plot_*.py")):
        out.append((f"/auto_examples/{ex.stem}", ex.read_text()))
    return tuple(out)


def usages(modname: str, name: str) -> list[str]:
    """Documents whose code uses ``name`` of ``modname`` (imports it or calls it through
    its module)."""
    short = modname.rsplit(".", 1)[-1]
    pat = re.compile(rf"\bimport\b[^\n]*\b{re.escape(name)}\b|\b{re.escape(short)}\.{re.escape(name)}\b"
                     rf"|\bhystmech\.{re.escape(name)}\b")
    return [doc for doc, code in _usage_sources() if pat.search(code)]


def module_examples(modname: str, mod, rows) -> str:
    """An Examples section for a module page whose docstring has none: the import and
    the guide pages and gallery examples whose code uses the module's names."""
    if _HAS_EXAMPLES.search(mod.__doc__ or ""):
        return ""
    names = [n for n, _, kind in rows if kind != "module"][:3]
    code = f"from {modname} import {', '.join(names)}\n" if names else f"import {modname}\n"
    used = sorted({d for n, _, kind in rows if kind != "module" for d in usages(modname, n)})
    out = [".. rubric:: Examples\n", ".. code-block:: python\n\n" + textwrap.indent(code, "   ") + "\n"]
    if used:
        out.append("Used in: " + ", ".join(f":doc:`{d}`" for d in used) + ".\n")
    return "\n".join(out)


def examples_section(modname: str, name: str, obj, kind: str) -> str:
    """An Examples section for a page whose docstring has none: for a law, a generated
    example that builds and drives it; for any name, the import and the guide pages and
    gallery examples whose code uses it."""
    doc = inspect.getdoc(obj) if kind != "data" else ""
    if doc and _HAS_EXAMPLES.search(doc):
        return ""                   # the docstring's own Examples section is shown
    lines = [".. rubric:: Examples\n"]
    if kind == "class" and _is_law(obj) and name in EXAMPLE_ARGS:
        code = law_example(name)
    else:
        code = f"from {modname} import {name}\n"
    lines.append(".. code-block:: python\n\n" + textwrap.indent(code, "   ") + "\n")
    used = usages(modname, name)
    if used:
        lines.append("Used in: " + ", ".join(f":doc:`{d}`" for d in used) + ".\n")
    return "\n".join(lines)


# -- law cards -------------------------------------------------------------------------------
def _is_law(cls) -> bool:
    from hystmech.components.base import ForceElement
    from hystmech.components.vector_base import VectorForceElement

    return (issubclass(cls, (ForceElement, VectorForceElement))
            and cls not in (ForceElement, VectorForceElement))


def _is_vector(cls) -> bool:
    from hystmech.components.vector_base import VectorForceElement

    return issubclass(cls, VectorForceElement)


def c_twin(cls) -> Path | None:
    """The C file of the law, when it holds the law's own force kernel (``dahl_force`` in
    ``dahl.c`` beside ``dahl.py``): the kernel the FMU export and the engine plugins use."""
    if "force" not in cls.__dict__ or cls.force is None:
        return None
    prefix = getattr(cls.force, "__name__", "")
    if not prefix.endswith("_force"):
        return None
    c = Path(inspect.getfile(cls)).with_suffix(".c")
    if c.exists() and f"{prefix}(" in c.read_text():
        return c
    return None


def _array_param(p) -> bool:
    return "array" in p.doc


def param_table(cls) -> dict:
    """{name: Param} of the constructor's parameters, from the ``param_info`` of the
    class whose ``__init__`` it is (a subclass keeping its parent's constructor keeps
    its table; a table inherited past a constructor of one's own would describe the
    wrong one)."""
    owner = next(c for c in cls.__mro__ if "__init__" in c.__dict__)
    src = cls if "param_info" in cls.__dict__ else owner
    if "param_info" not in src.__dict__:
        return {}
    return {p.name: p for p in src.param_info}


def law_row(cls) -> dict:
    """What the law card shows, read from the class: constructor keywords with the
    meaning, unit and range of its ``param_info`` table, ``state_names``, ``kind``,
    ``citation``, the C twin. params: (name, unit, meaning, range, default, is_array)."""
    name = cls.__name__
    sig = inspect.signature(cls.__init__)
    kw = [p for p in sig.parameters.values() if p.kind is p.KEYWORD_ONLY]
    info = param_table(cls)
    params = []
    for p in kw:
        pi = info.get(p.name)
        default = "" if p.default is p.empty else repr(p.default)
        params.append((p.name, pi.unit if pi else "", pi.meaning if pi else "",
                       pi.range if pi else "", default, bool(pi and _array_param(pi))))
    c = None if _is_vector(cls) else c_twin(cls)
    return dict(name=name, cls=cls, kind=cls.kind, params=params,
                states=tuple(getattr(cls, "state_names", ())), c=c,
                citation=cls.citation, vector=_is_vector(cls),
                scalar=all(not a for *_, a in params) and bool(kw))


def law_rows() -> list[dict]:
    """One record per law class of ``hystmech.components.LAWS`` (scalar and vector)."""
    from hystmech import components

    out = []
    for name in components.LAWS:
        cls = getattr(components, name)
        if _is_law(cls):
            out.append(law_row(cls))
    return out


def _fmu_note(r) -> str:
    if r["c"] is None:
        return "no (no C kernel of its own)"
    if any(n in ("g", "f") for n, *_ in r["params"]):
        return "yes (with the default ``g``/``f``; Python callables cannot be exported)"
    return "yes, FMI 2.0 and 3.0, co-simulation and model exchange"


def _mujoco_note(r) -> str:
    if r["name"] == "SumElement" and "hystmech.Sum" in {name for name, _ in mujoco_rows()}:
        return "yes: MJCF plugin ``hystmech.Sum`` (parts with a C kernel), or ``add_element``"
    if r["c"] is None:
        return "no"
    if f"hystmech.{r['name']}" in {name for name, _ in mujoco_rows()}:
        return f"yes: MJCF plugin ``hystmech.{r['name']}``, or ``add_element``"
    return "no (not in the plugin library)"


def law_card(cls) -> str:
    r = law_row(cls)
    lines = [".. rubric:: Law card (generated from the class)\n",
             f"*kind* ``{r['kind']}``; *source* {r['citation'] or '—'}\n",
             "" if not r["params"] else
             ".. list-table:: Parameters (keyword-only, SI units; from the class's "
             "``param_info`` table)\n   :header-rows: 1\n"
             "   :widths: 14 14 38 22 12\n",
             "" if not r["params"] else
             "   * - name\n     - unit\n     - meaning\n     - allowed range\n     - default"]
    for n, unit, meaning, rng, default, _ in r["params"]:
        lines.append(f"   * - ``{n}``\n     - {('``' + unit + '``') if unit else '—'}\n"
                     f"     - {_rst_text(meaning) or '—'}\n     - {_rst_text(rng) or '—'}\n"
                     f"     - {('``' + default + '``') if default else 'required'}")
    lines.append("")
    states = _state_text(r)
    ctw = f"``components/{r['c'].name}``" if r["c"] else "none"
    if r["vector"]:
        engines = ("PyElastica: isotropic bending law on the pair (κ1, κ2) "
                   "(``hystmech.plugins.elastica.add_hysteretic_bending``)")
    else:
        engines = "MuJoCo, Exudyn, PyElastica" if r["c"] else "none (no C kernel)"
    lines += [".. list-table:: Availability\n   :widths: 25 75\n",
              f"   * - state\n     - {states}",
              f"   * - C twin\n     - {ctw}",
              f"   * - FMU export\n     - {_fmu_note(r)}",
              f"   * - engine plugins\n     - {engines}",
              f"   * - MuJoCo\n     - {_mujoco_note(r)}", ""]
    return "\n".join(lines)


def _state_text(r) -> str:
    """The state with units and meaning from the FMU metadata (fmu/metadata.py) where it
    declares them for every instance, else the class's state_names."""
    try:
        from hystmech.fmu.metadata import LAWS

        meta = LAWS.get(r["cls"].force) if r["c"] is not None else None
        described = meta.states(None) if meta is not None and meta.states else None
    except Exception:       # declared per instance (sizes depend on the parameters)
        described = None
    if described:
        return "; ".join(f"``{n}`` [``{u}``]: {_rst_text(d)}" for n, u, d in described)
    if r["states"]:
        return ", ".join(f"``{s}``" for s in r["states"])
    if r["kind"] == "smooth":
        return "none"
    return "variable size, set by the parameters (see the class)"


def _rst_text(s: str) -> str:
    return s.replace("*", "\\*").replace("|", "\\|").replace("`", "")


def write_laws_table(path: Path) -> None:
    lines = [".. generated by docs/_ext/hm_docgen.py from the law classes\n",
             ".. list-table::\n   :header-rows: 1\n   :widths: 22 12 30 12 12 12\n",
             "   * - law\n     - kind\n     - parameters [units]\n     - state\n"
             "     - C twin / FMU\n     - engines"]
    for r in law_rows():
        ps = ", ".join(f"``{n}`` [{u or '—'}]" for n, u, *_ in r["params"])
        st = ", ".join(f"``{s}``" for s in r["states"]) or "—"
        c = "yes" if r["c"] else "no"
        page = f":py:class:`~hystmech.components.{r['name']}`"
        lines.append(f"   * - {page}\n     - {r['kind']}\n     - {ps or '—'}\n     - {st}\n"
                     f"     - {c}\n     - {'yes' if r['c'] else 'no'}")
    path.write_text("\n".join(lines) + "\n")


# -- MuJoCo plugin table --------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def mujoco_rows() -> list[tuple[str, list[tuple[str, str]]]]:
    """(plugin name, [(config key, note)]) of every MJCF plugin: from
    ``hystmech.plugins.mujoco.mjcf_reference()`` when the plugin module provides it, else
    by its convention from the law classes (plugin ``hystmech.<Class>``; keys = the
    constructor's keyword names, with the units of ``param_info``, plus the joint or
    tendon it acts on)."""
    try:
        from hystmech.plugins import mujoco as hmj
        ref = getattr(hmj, "mjcf_reference", None)
    except Exception:  # the mujoco extra is not installed
        ref = None
    if ref is not None:
        rows = []
        for item in ref():
            keys = []
            for k in item.get("keys", ()):
                if isinstance(k, dict):
                    note = [k.get("unit") or ""]
                    if k.get("required"):
                        note.append("required")
                    elif k.get("default") is not None:
                        note.append(f"default {k['default']}")
                    if k.get("array"):
                        note.append("array")
                    keys.append((str(k["key"]), ", ".join(n for n in note if n)))
                else:
                    keys.append((str(k), ""))
            rows.append((str(item.get("plugin") or item.get("name")), keys))
        return rows
    out = []
    for r in law_rows():
        if r["c"] is None:
            continue
        keys = [(n, ", ".join(x for x in (u, "required" if not d else f"default {d}") if x))
                for n, u, _, _, d, _ in r["params"] if n not in ("g", "f")]
        out.append((f"hystmech.{r['name']}", keys + [("joint | tendon", "the joint or tendon it acts on")]))
    return out


def write_mujoco_table(path: Path) -> None:
    lines = [".. generated by docs/_ext/hm_docgen.py\n",
             ".. list-table::\n   :header-rows: 1\n   :widths: 25 75\n",
             "   * - ``plugin=``\n     - ``<config key=... value=...>`` (unit, required or default)"]
    for name, keys in mujoco_rows():
        cell = "; ".join(f"``{k}``" + (f" ({_rst_text(n)})" if n else "") for k, n in keys)
        lines.append(f"   * - ``{name}``\n     - {cell}")
    path.write_text("\n".join(lines) + "\n")


# -- scenario file format ------------------------------------------------------------------
def _spec_text(spec) -> str:
    from hystmech import schema as S

    if isinstance(spec, S.Required):
        return _spec_text(spec.spec) + " (required)"
    if isinstance(spec, S.Str) and getattr(spec, "choices", None):
        return "one of " + ", ".join(f"``{c!r}``".replace("'", '"') for c in spec.choices)
    if isinstance(spec, S.List):
        return f"array of {_spec_text(spec.item)}"
    if isinstance(spec, S.Element):
        return "an element table: ``type`` = a class of ``hystmech.components``, the other keys its constructor's parameters"
    if isinstance(spec, S.MapOf):
        return "table of named sub-tables"
    if isinstance(spec, S.ArrayOf):
        return "array of tables"
    if isinstance(spec, S.Table):
        return "table"
    return getattr(spec, "what", type(spec).__name__)


def _table_rows(prefix: str, spec, out: list, skip_self: bool = False) -> None:
    from hystmech import schema as S

    inner = spec.spec if isinstance(spec, S.Required) else spec
    if not skip_self:
        out.append((prefix, _spec_text(spec)))
    if isinstance(inner, (S.MapOf, S.ArrayOf)):
        sub = ".NAME" if isinstance(inner, S.MapOf) else "[i]"
        _table_rows(prefix + sub, inner.item, out, skip_self=True)
        return
    if isinstance(inner, S.Table):
        req = set(inner.required)
        for k, s in inner.keys.items():
            if isinstance(s, (S.Table, S.MapOf, S.ArrayOf, S.Required)):
                _table_rows(f"{prefix}.{k}", s, out)
            else:
                out.append((f"{prefix}.{k}", _spec_text(s) + (" (required)" if k in req else "")))
        if inner.extra is not None:
            out.append((f"{prefix}.*", "other keys: " + _spec_text(inner.extra)))
    if isinstance(inner, S.Element):
        for k, s in inner.keys.items():
            out.append((f"{prefix}.{k}", _spec_text(s)))
        for k in inner.params:
            out.append((f"{prefix}.{k}", "element parameter (number or array)"))


def write_schema(path: Path) -> None:
    from hystmech import runners, schema

    lines = [".. generated by docs/_ext/hm_docgen.py from hystmech.runners.SCHEMAS\n",
             ".. rubric:: Top-level keys (every scenario)\n",
             ".. list-table::\n   :header-rows: 1\n   :widths: 30 70\n",
             "   * - key\n     - value"]
    for k, s in schema.TOP_LEVEL.items():
        lines.append(f"   * - ``{k}``\n     - {_spec_text(s)}")
    lines.append("")
    for name in sorted(runners.SCHEMAS):
        tables = runners.SCHEMAS[name]
        lines += [f".. rubric:: Runner ``{name}``\n",
                  f"``runner = \"{name}\"`` (function ``{runners.REGISTRY.get(name, '?')}``).\n",
                  ".. list-table::\n   :header-rows: 1\n   :widths: 40 60\n",
                  "   * - table / key\n     - value"]
        rows = []
        for t, spec in tables.items():
            _table_rows(f"[{t}]", spec, rows)
        for key, what in rows:
            lines.append(f"   * - ``{key}``\n     - {what}")
        lines.append("")
    plain = sorted(set(runners.REGISTRY) - set(runners.SCHEMAS))
    if plain:
        lines.append("Runners without a declared schema (their tables are passed as read): "
                     + ", ".join(f"``{n}``" for n in plain) + ".\n")
    path.write_text("\n".join(lines) + "\n")


# -- command line ----------------------------------------------------------------------------
def _subparsers(parser):
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            return a.choices
    return {}


def write_cli(path: Path) -> None:
    from hystmech import cli

    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "92"
    try:
        parser = cli.build_parser()
        parser.prog = "hystmech"
        blocks = [("hystmech", parser)]
        for name, sp in _subparsers(parser).items():
            sp.prog = f"hystmech {name}"
            blocks.append((f"hystmech {name}", sp))
        lines = [".. generated by docs/_ext/hm_docgen.py from hystmech.cli.build_parser()\n"]
        for title, p in blocks:
            lines += [f".. rubric:: ``{title}``\n", ".. code-block:: text\n"]
            lines.append(textwrap.indent(p.format_help().rstrip(), "   "))
            lines.append("")
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old
    path.write_text("\n".join(lines) + "\n")


# -- all of it ------------------------------------------------------------------------------
def generate(gen: Path) -> dict:
    gen.mkdir(parents=True, exist_ok=True)
    where = write_api(gen / "api")
    write_laws_table(gen / "laws_table.inc")
    write_mujoco_table(gen / "mujoco_plugins.inc")
    write_schema(gen / "scenario_schema.inc")
    write_cli(gen / "cli.inc")
    return where


def _on_builder_inited(app):
    import shutil

    gen = Path(app.srcdir) / "_generated"
    if gen.exists():
        shutil.rmtree(gen)
    generate(gen)


def setup(app):
    app.connect("builder-inited", _on_builder_inited)
    app.connect("autodoc-process-docstring", _process_docstring)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":
    with redirect_stdout(io.StringIO()):
        w = generate(Path(sys.argv[1]))
    print(f"{len(w)} public names")
