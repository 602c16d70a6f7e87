"""The pages a reader of scipy's or PyElastica's documentation expects: installation
and troubleshooting, a changelog and a contributing guide, each linked from the front
page; the changelog names the current version."""
import pytest

import hystmech

PAGES = {"installation": "Troubleshooting", "changelog": hystmech.__version__,
         "contributing": "Standards"}


@pytest.mark.parametrize("stem", sorted(PAGES))
def test_page_built_and_linked_from_index(site, stem):
    page = site / f"{stem}.html"
    assert page.exists(), f"no {stem} page"
    assert PAGES[stem] in page.read_text()
    assert f'href="{stem}.html"' in (site / "index.html").read_text()
