"""Every public name (an entry of the ``__all__`` of any public hystmech module) is on a
page of the built API reference, as an anchored description, and the page of its
module links to it."""
import html
import re

import hm_docgen


def _ids(page):
    return set(re.findall(r'\bid="([^"]+)"', page.read_text()))


def test_every_public_name_is_documented(site):
    api = site / "_generated" / "api"
    missing = []
    table, objects = hm_docgen.collect_api()
    for modname, mod, rows in table:
        mod_page = api / f"{modname}.html"
        assert mod_page.exists(), f"no API page for module {modname}"
        mod_html = html.unescape(mod_page.read_text())
        for name, full, kind in rows:
            if kind == "module":
                target = api / f"{full}.html"
                if not target.exists():
                    missing.append(f"{modname}.{name} (module page {target.name})")
                continue
            owner = objects[full][0]
            page = api / owner / f"{full[len(owner) + 1:]}.html"
            if not page.exists() or full not in _ids(page):
                missing.append(f"{modname}.{name} -> {full}")
            elif f"{full[len(owner) + 1:]}.html#{full}" not in mod_html:
                missing.append(f"{modname}.{name}: no link from the page of {modname}")
    assert not missing, "public names missing from the API reference:\n" + "\n".join(missing)


def test_walk_finds_every_subpackage(site):
    # the walk, not a list: every package in pyproject's package list has a page
    import tomllib

    pkgs = tomllib.loads((hm_docgen.ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    for p in pkgs:
        assert (site / "_generated" / "api" / f"{p}.html").exists(), p


def test_simulate_page_renders_equations_source(site):
    page = site / "_generated" / "api" / "hystmech.systems" / "simulate.html"
    text = page.read_text()
    assert 'id="hystmech.systems.simulate"' in text
    assert "math notranslate" in text            # :math: in the docstring reached the page
