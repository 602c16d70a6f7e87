"""The ``>>>`` code blocks of the guide pages run and print what the pages say."""
import doctest
from pathlib import Path

import numpy as np
import pytest

DOCS = Path(__file__).resolve().parents[1]
PAGES = sorted(p for p in DOCS.glob("**/*.md")
               if "_build" not in p.parts and ">>> " in p.read_text())


def test_some_pages_have_examples():
    assert any(p.name == "getting_started.md" for p in PAGES)


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(DOCS)) for p in PAGES])
def test_page_examples(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = doctest.testfile(str(page), module_relative=False, globs={"np": np},
                           optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
                           verbose=False)
    assert res.attempted > 0
    assert res.failed == 0, f"{res.failed} of {res.attempted} examples failed in {page.name}"
