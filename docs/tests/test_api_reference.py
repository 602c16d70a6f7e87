"""Every public name (an entry of the ``__all__`` of any public hystmech module) is on a
page of the built API reference, as an anchored description, and the page of its
module links to it."""
import html
import re

import hm_docgen
import pytest


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


# -- law cards: each parameter's meaning, unit and full range, from the class's table -------
RANGE = re.compile(r"^in ([\[(])(-?[\d.e]+|-inf), (-?[\d.e]+|inf)([\])])( elementwise)?$")


def _laws():
    from hystmech import components

    return [getattr(components, n) for n in components.LAWS]


def test_every_law_has_a_card_row_per_parameter():
    import inspect

    rows = {r["name"]: r for r in hm_docgen.law_rows()}
    for cls in _laws():
        assert cls.__name__ in rows, f"{cls.__name__}: no law card"
        kw = [p.name for p in inspect.signature(cls.__init__).parameters.values()
              if p.kind is p.KEYWORD_ONLY]
        params = {n: (u, m, r) for n, u, m, r, *_ in rows[cls.__name__]["params"]}
        assert list(params) == kw
        card = hm_docgen.law_card(cls)
        for n, (unit, meaning, rng) in params.items():
            assert unit and meaning and rng, f"{cls.__name__}.{n}: unit {unit!r}, " \
                f"meaning {meaning!r}, range {rng!r}"
            assert f"``{unit}``" in card and hm_docgen._rst_text(rng) in card, (cls.__name__, n)


def test_lugre_card_states_the_cross_parameter_constraint_and_g_f():
    from hystmech.components import LuGre

    p = {n: (u, m, r) for n, u, m, r, *_ in hm_docgen.law_row(LuGre)["params"]}
    assert "Fc" in p["Fs"][2]                       # Fs >= Fc
    assert p["g"][0] == p["f"][0] == "m/s -> N"
    assert "g(v) > 0" in p["g"][2] and "f(0) = 0" in p["f"][2]


def _base(cls):
    from hystmech import components

    ns = {n: getattr(components, n) for n in components.LAWS}
    args = hm_docgen.EXAMPLE_ARGS.get(cls.__name__)
    return eval(f"dict({args})", ns) if args and cls.__name__ != "SumElement" else None


def test_card_ranges_are_what_the_constructors_accept():
    """The range a card states is the constructor's: a value just outside a numeric
    range is refused naming the parameter, its closed end is accepted; the relative
    ones (LuGre Fs >= Fc, modified Dahl e <= b, relay a2 > a1) likewise."""
    import numpy as np

    checked = 0
    for cls in _laws():
        base = _base(cls)
        if base is None:
            continue
        for n, unit, meaning, rng, *_ in hm_docgen.law_row(cls)["params"]:
            m = RANGE.match(rng)
            if not m or n not in base:
                continue
            lo, hi = float(m.group(2)), float(m.group(3))
            arr = np.ndim(base[n]) > 0

            def with_value(x):
                kw = dict(base)
                kw[n] = [x] * len(base[n]) if arr else x
                return kw
            for bad in ([lo - 1.0 if m.group(1) == "[" else lo] if np.isfinite(lo) else []) + \
                    ([hi + 1.0 if m.group(4) == "]" else hi] if np.isfinite(hi) else []):
                with pytest.raises(ValueError, match=n):
                    cls(**with_value(bad))
                checked += 1
            if m.group(1) == "[" and np.isfinite(lo) and n not in ("w0",):
                cls(**with_value(lo))           # the closed end belongs to the range
    assert checked >= 30
    from hystmech.components import LuGre, ModifiedDahl, Relay

    with pytest.raises(ValueError, match="Fs"):
        LuGre(**{**_base(LuGre), "Fs": 0.5})     # Fc = 1
    with pytest.raises(ValueError, match="e must"):
        ModifiedDahl(**{**_base(ModifiedDahl), "e": 1000.0})   # b = 959.6
    with pytest.raises(ValueError, match="a2"):
        Relay(a1=1.0, a2=0.5)


def test_generated_law_examples_run():
    import numpy as np

    from hystmech import components

    # a law without an entry (added since) shows its import only
    assert set(hm_docgen.EXAMPLE_ARGS) <= set(components.LAWS) and len(hm_docgen.EXAMPLE_ARGS) >= 19
    for name in hm_docgen.EXAMPLE_ARGS:
        ns = {}
        exec(hm_docgen.law_example(name), ns)
        F = ns["res"].force if "res" in ns else ns["F"]
        assert np.all(np.isfinite(F)) and np.ptp(F) > 0, name


# -- every public API page has an Examples section ------------------------------------------
def test_every_api_page_has_examples(site):
    api = site / "_generated" / "api"
    pages = [p for p in api.glob("**/*.html") if p != api / "index.html"]
    assert len(pages) > 100
    missing = [str(p.relative_to(api)) for p in pages
               if not re.search(r">Examples<|&gt;&gt;&gt;", p.read_text())]
    assert not missing, "API pages without an Examples section:\n" + "\n".join(missing)
