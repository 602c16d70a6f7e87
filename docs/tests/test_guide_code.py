"""Every code block of the guide (docs/guide/**/*.md) and of docs/getting_started.md runs
as written, as a reader runs it: a page's blocks in order in one namespace, in a fresh
working directory holding the files shipped beside the page (``arm.xml``). ``>>>``
blocks also print what the page says (doctest); an XML block whose first line is a
comment naming a file (``<!-- arm_friction.xml ... -->``) is that file, written before
the blocks after it run. A page whose blocks use an engine (MuJoCo, Exudyn, PyElastica)
is skipped only when that engine is not installed (CI installs them all)."""
from __future__ import annotations

import doctest
import importlib.util
import re
import shutil
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

DOCS = Path(__file__).resolve().parents[1]
PAGES = sorted([DOCS / "getting_started.md", *(DOCS / "guide").glob("**/*.md")])
# files shipped beside a page for its blocks (models, data)
DATA_SUFFIXES = (".xml", ".csv", ".toml", ".npz")
FENCE = re.compile(r"^```(python|xml)[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)
XML_FILE = re.compile(r"\A\s*<!--\s*([\w.-]+\.xml)\b")
# engine (import name) -> how a block shows it uses it
ENGINES = {"mujoco": r"\bmujoco\b", "exudyn": r"\bexudyn\b", "elastica": r"\belastica\b"}


def blocks(page: Path) -> list[tuple[str, str, int]]:
    """(language, code, line) of every ```python and ```xml block of the page."""
    text = page.read_text()
    return [(m.group(1), m.group(2), text.count("\n", 0, m.start()) + 2)
            for m in FENCE.finditer(text)]


CODE_PAGES = [p for p in PAGES if any(lang == "python" for lang, *_ in blocks(p))]


def test_pages_found():
    names = {p.relative_to(DOCS).as_posix() for p in CODE_PAGES}
    assert {"getting_started.md", "guide/engines/mujoco.md", "guide/assemblies.md"} <= names


def test_xml_blocks_name_their_file():
    # an XML block a reader cannot save under the name the Python blocks use is a fragment
    for page in PAGES:
        for lang, code, line in blocks(page):
            if lang == "xml":
                assert XML_FILE.match(code), f"{page.name}:{line}: XML block names no file"


def run_page(page: Path, workdir: Path) -> int:
    """Run the page's blocks in order in one namespace; return how many ran."""
    for f in page.parent.iterdir():
        if f.suffix in DATA_SUFFIXES and f.is_file():
            shutil.copy(f, workdir / f.name)
    ns = {"__name__": "__main__"}
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    n = 0
    for lang, code, line in blocks(page):
        where = f"{page.relative_to(DOCS)}:{line}"
        if lang == "xml":
            (workdir / XML_FILE.match(code).group(1)).write_text(code)
            continue
        if code.lstrip().startswith(">>>"):
            test = parser.get_doctest(code, ns, where, str(page), line)
            res = runner.run(test, clear_globs=False)
            ns.update(test.globs)           # DocTest ran on a copy of the namespace
            assert res.failed == 0, f"{where}: {res.failed} of {res.attempted} examples failed"
        else:
            exec(compile(code, where, "exec"), ns)
        n += 1
    return n


@pytest.mark.parametrize("page", CODE_PAGES, ids=[str(p.relative_to(DOCS)) for p in CODE_PAGES])
def test_page_code_runs(page, tmp_path, monkeypatch):
    code = "\n".join(c for lang, c, _ in blocks(page) if lang == "python")
    for mod, pattern in ENGINES.items():
        if re.search(pattern, code) and importlib.util.find_spec(mod) is None:
            pytest.skip(f"{page.name} uses {mod}, which is not installed")
    monkeypatch.chdir(tmp_path)
    # an FMU export builds the native binary (the cross builds are tests/test_fmu_platforms')
    monkeypatch.setenv("HYSTMECH_FMU_PLATFORMS", "native")
    assert run_page(page, tmp_path) > 0


def test_no_code_block_escapes_the_run():
    # a block in another spelling of Python (```py, ```{code-block} python) would not run
    # ```c: a fragment of a C program the tests build and run (the MuJoCo page's .mjb
    # loading is tests/c/mj_run.c, run by tests/test_plugins_mujoco_c.py)
    allowed = {"python", "xml", "bash", "toml", "text", "", "{eval-rst}", "{toctree}",
               "{image}", "bibtex", "c"}
    for page in PAGES:
        for m in re.finditer(r"^```(.*)$", page.read_text(), re.M):
            info = m.group(1).strip()
            assert info in allowed, f"{page.name}: a ```{info} block is not run"
