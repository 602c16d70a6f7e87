"""The built site as a reader sees it: headless Chromium (Debian's ``chromium``, driven
by Playwright, which downloads no browser) opens the index, a guide page, the API page of
``simulate`` and a gallery page, checks that every image loaded, that MathJax typeset the
equations without an error, and that the search finds ``simulate``; screenshots go to
docs/tests/artifacts/.

Skipped only when Playwright or a Chromium binary is not installed
(``HYSTMECH_CHROMIUM`` names another binary than /usr/bin/chromium).
"""
import os
import shutil
from pathlib import Path

import pytest

from conftest import ARTIFACTS

CHROMIUM = os.environ.get("HYSTMECH_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]

# page, needs typeset math, needs at least one image
PAGES = [
    ("index.html", False, True),
    ("guide/elements.html", True, False),
    ("_generated/api/hystmech.systems/simulate.html", True, False),
    ("auto_examples/plot_lugre_example_4.html", False, True),
    ("getting_started.html", True, False),
]


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium binary at {CHROMIUM}")
    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_api.sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(
            str(profile), executable_path=CHROMIUM, headless=True, args=ARGS,
            viewport={"width": 1280, "height": 900})
        yield ctx
        ctx.close()


def _open(browser, url):
    page = browser.new_page()
    errors = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url, wait_until="load")
    return page, errors


@pytest.mark.parametrize("rel,math,image", PAGES, ids=[p[0] for p in PAGES])
def test_page_renders(browser, site, rel, math, image):
    path = site / rel
    assert path.exists(), rel
    page, errors = _open(browser, path.as_uri())
    try:
        if page.evaluate("() => !!(window.MathJax && MathJax.startup)"):
            page.evaluate("() => MathJax.startup.promise")
        imgs = page.evaluate("""() => Array.from(document.images).map(i => ({
            src: i.getAttribute('src'), ok: i.complete && i.naturalWidth > 0}))""")
        broken = [i["src"] for i in imgs if not i["ok"]]
        assert not broken, f"broken images on {rel}: {broken}"
        if image:
            content = page.evaluate(
                "() => document.querySelectorAll('article img, .bd-article img').length")
            assert content > 0, f"no image in the article of {rel}"
        n_math = page.evaluate("() => document.querySelectorAll('mjx-container').length")
        n_err = page.evaluate("() => document.querySelectorAll('mjx-merror, .MathJax_Error').length")
        raw = page.evaluate("() => document.querySelectorAll('div.math, span.math').length")
        assert n_err == 0, f"MathJax errors on {rel}"
        if math:
            assert raw > 0 and n_math >= raw, f"{rel}: {raw} equations, {n_math} typeset"
        assert not [e for e in errors if "mathjax" in e.lower()], errors
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        if image:  # the first figure in view
            page.locator("article img").first.scroll_into_view_if_needed()
        elif math:   # the first equation in view
            page.locator("mjx-container").first.scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / (rel.replace("/", "_") + ".png")))
    finally:
        page.close()


def test_search_finds_simulate(browser, site):
    assert (site / "searchindex.js").exists()
    page, errors = _open(browser, (site / "search.html").as_uri() + "?q=simulate")
    try:
        page.wait_for_function(
            "() => document.querySelectorAll('#search-results li, ul.search li').length > 0",
            timeout=30000)
        hits = page.evaluate(
            "() => Array.from(document.querySelectorAll('#search-results li a, ul.search li a')).map(a => a.getAttribute('href'))")
        assert any("simulate" in (h or "") for h in hits), hits[:10]
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "search_simulate.png"))
    finally:
        page.close()
