"""The package's import graph has no circles where the layering says there are none.

The graph is read from the source files themselves (ast), counting every import,
including those written inside functions (an import deferred into a function still
makes the two modules depend on each other; it only hides the circle from Python).
Layers asserted (docs/layout.md):

* the code generator (systems/codegen.py) is the ground floor of the compiled model:
  it imports neither the model nor any analysis; model.py, the methods and
  periodic/ build on it;
* the scenario core (core/: drive, limits, runner_io, runners, safeio, scenario,
  schema, signals) has no circle.
"""
from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# top-level folder -> package (pyproject.toml's package-dir)
PACKAGES = {"core": "hystmech", "components": "hystmech.components",
            "systems": "hystmech.systems", "fmu": "hystmech.fmu",
            "analysis": "hystmech.analysis", "identify": "hystmech.identify",
            "scenarios": "hystmech.scenarios", "plugins": "hystmech.plugins"}


def _modules():
    """{module name: source path} of every module of the package."""
    out = {}
    for folder, pkg in PACKAGES.items():
        base = ROOT / folder
        for p in base.rglob("*.py"):
            rel = p.relative_to(base).with_suffix("")
            parts = [] if rel.parts == ("__init__",) else list(rel.parts)
            if parts and parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join([pkg, *parts])] = p
    return out


def import_graph():
    """{module: set of package modules it imports anywhere in its source}."""
    mods = _modules()
    graph = {}
    for name, path in mods.items():
        is_pkg = path.name == "__init__.py"
        here = name if is_pkg else name.rpartition(".")[0]
        deps = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here.split(".")
                    base = base[:len(base) - (node.level - 1)]
                    mod = ".".join(base + ([node.module] if node.module else []))
                else:
                    mod = node.module or ""
                # "from pkg import sub" imports the submodule sub when there is one
                targets = [mod] + [f"{mod}.{a.name}" for a in node.names]
            else:
                continue
            for t in targets:
                while t and t not in mods:
                    t = t.rpartition(".")[0]
                if t and t != name:
                    deps.add(t)
        graph[name] = deps
    return graph


def cycles(graph, members):
    """The strongly connected components (Tarjan) with more than one module of the
    graph restricted to ``members``; each a sorted list."""
    sub = {m: sorted(d for d in graph[m] if d in members) for m in members}
    index, low, on, stack, out = {}, {}, set(), [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sub[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))
    for v in sorted(sub):
        if v not in index:
            visit(v)
    return out


@functools.cache
def _graph():
    # built on first use, not at collection (every xdist worker collects every file)
    return import_graph()


def test_graph_sees_imports_inside_functions():
    # the reader is not blind to deferred imports: simulate.py imports assembly inside
    # simulate() only, and periodic/shooting.py imports drive inside a function
    assert "hystmech.systems.assembly" in _graph()["hystmech.systems.simulate"]
    assert "hystmech.drive" in _graph()["hystmech.systems.periodic.shooting"]


def test_cycle_finder_finds_a_planted_circle():
    g = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(g, set(g)) == [["a", "b", "c"]]
    g["c"] = set()
    assert cycles(g, set(g)) == []


def _systems_core():
    return {m for m in _graph() if m.startswith((
        "hystmech.systems.codegen", "hystmech.systems.model", "hystmech.systems.compile_cache",
        "hystmech.systems.templates", "hystmech.systems.variational",
        "hystmech.systems.simulate", "hystmech.systems.methods", "hystmech.systems.periodic"))}


def test_codegen_is_the_ground_floor():
    up = {d for d in _graph()["hystmech.systems.codegen"]
          if d.startswith(("hystmech.systems.model", "hystmech.systems.periodic",
                           "hystmech.systems.simulate"))}
    assert up == set(), f"systems/codegen.py imports upward: {sorted(up)}"


def test_no_circle_among_codegen_model_periodic():
    found = cycles(_graph(), _systems_core())
    assert found == [], f"import circles: {found}"


@pytest.mark.parametrize("group", [
    ("drive", "limits", "runner_io", "runners", "safeio", "scenario", "schema", "signals"),
])
def test_no_circle_in_core(group):
    members = {f"hystmech.{n}" for n in group} | {m for m in _graph() if m.count(".") == 1
                                                  and m.startswith("hystmech.")
                                                  and m.split(".")[1] in
                                                  {p.stem for p in (ROOT / "core").glob("*.py")}}
    found = cycles(_graph(), members)
    assert found == [], f"import circles in core/: {found}"
