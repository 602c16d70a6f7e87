"""Checks of the built documentation site (docs/_build/html).

Run after the build: ``make -C docs html`` then ``python -m pytest -q docs/tests``.
"""
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1]
SITE = DOCS / "_build" / "html"
ARTIFACTS = DOCS / "tests" / "artifacts"
sys.path.insert(0, str(DOCS / "_ext"))


@pytest.fixture(scope="session")
def site() -> Path:
    if not (SITE / "index.html").exists():
        pytest.fail(f"no built site at {SITE}: run `make -C docs html` first")
    return SITE
