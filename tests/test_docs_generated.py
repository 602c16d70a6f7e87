"""The generated parts of the documentation (docs/_ext/hm_docgen.py) cover the code:
every public name has an API page, every law card's availability matches what the FMU
exporter accepts, every scenario key and every command-line option is listed. The
built site itself is checked by docs/tests (after ``make -C docs html``)."""
import argparse
import importlib
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs" / "_ext"))
hm_docgen = pytest.importorskip("hm_docgen")


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    out = tmp_path_factory.mktemp("docs_generated")
    where = hm_docgen.generate(out)
    return out, where


def test_every_public_name_has_a_page(generated):
    out, where = generated
    missing = []
    for modname in hm_docgen.public_modules():
        mod = importlib.import_module(modname)
        for name in getattr(mod, "__all__", ()):
            key = f"{modname}.{name}"
            full = where.get(key)
            if full is None:
                missing.append(key)
                continue
            obj = getattr(mod, name)
            if hasattr(obj, "__file__"):      # a submodule listed in __all__
                continue
            owner = full.rsplit(".", 1)[0]
            page = out / "api" / owner / f"{full.rsplit('.', 1)[1]}.rst"
            if not page.exists() or f":: {full.rsplit('.', 1)[1]}" not in page.read_text():
                missing.append(f"{key} (page {page.name})")
    assert not missing, missing


def test_public_names_resolve_to_one_object():
    # a lazily exported name must not turn into another object after its first use
    # (a submodule of the same name would shadow it: identify's comparison.py is not
    # named compare.py for that reason)
    for modname in hm_docgen.public_modules():
        mod = importlib.import_module(modname)
        for name in getattr(mod, "__all__", ()):
            first = getattr(mod, name)
            assert getattr(mod, name) is first, f"{modname}.{name} changed on second access"


# one instance per law; the card's "C twin / FMU" must say what export_fmu does
_INSTANCES = {
    "Dahl": dict(rho=1.0, Fc=1.0),
    "LuGre": dict(sigma0=1e5, sigma1=316.0, Fc=1.0, Fs=1.5, vs=1e-3),
    "Duhem": dict(A=1.0, hu=lambda u: 1.0 + u, hl=lambda u: u - 1.0),
    "ModifiedDahl": dict(Lambda=1.0, mu=1.0, a=1.0, b=1.0, d=1.0, e=0.0),
    "ViscousDahl": dict(kx=1.0, kw=1.0, rho=1.0),
    "AsymmetricViscousDahl": dict(kx1=1.0, kw1=1.0, kx2=1.0, kw2=1.0, rho=1.0),
    "BoucWen": dict(A=1.0, beta=1.0, gamma=0.0, n=1.0),
    "Masing": dict(k=1.0, k0=0.0, alpha=1.0),
    "MaxwellSlip": dict(k=[1.0, 2.0], delta=[0.1, 0.2]),
    "Relay": dict(a1=-1.0, a2=1.0),
    "Preisach": dict(a1=[-1.0, -0.5], a2=[1.0, 0.5], weights=[1.0, 1.0]),
    "PrandtlIshlinskii": dict(r=[0.5, 1.0], weights=[1.0, 1.0], h=0.1, u_bound=2.0),
    "LinearSpring": dict(k=1.0),
    "LinearDamper": dict(c=1.0),
    "SpringDamper": dict(k=1.0, c=1.0),
}


def test_law_cards_match_the_exporter():
    from hystmech.fmu.export import FMUExportError, law_spec

    rows = {r["name"]: r for r in hm_docgen.law_rows()}
    for name, kw in _INSTANCES.items():
        el = rows[name]["cls"](**kw)
        try:
            law_spec(el)
            exportable = True
        except FMUExportError:
            exportable = False
        assert exportable == (rows[name]["c"] is not None), name
        card = hm_docgen.law_card(rows[name]["cls"])
        for p in el.param_info if "param_info" in type(el).__dict__ else ():
            assert f"``{p.name}``" in card and (not p.unit or f"``{p.unit}``" in card), (name, p)


def test_schema_page_lists_every_key(generated):
    from hystmech import runners, schema

    out, _ = generated
    text = (out / "scenario_schema.inc").read_text()

    def keys(spec, prefix, acc):
        inner = spec.spec if isinstance(spec, schema.Required) else spec
        if isinstance(inner, (schema.MapOf, schema.ArrayOf)):
            keys(inner.item, prefix + (".NAME" if isinstance(inner, schema.MapOf) else "[i]"), acc)
        elif isinstance(inner, schema.Table):
            for k, s in inner.keys.items():
                acc.append(f"{prefix}.{k}")
                keys(s, f"{prefix}.{k}", acc)
        return acc

    for name, tables in runners.SCHEMAS.items():
        assert f"Runner ``{name}``" in text
        for t, spec in tables.items():
            for k in keys(spec, f"[{t}]", [f"[{t}]"]):
                assert f"``{k}``" in text, (name, k)


def test_cli_page_lists_every_option(generated):
    from hystmech import cli

    out, _ = generated
    text = (out / "cli.inc").read_text()
    parser = cli.build_parser()
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, sp in subs.choices.items():
        assert f"``hystmech {name}``" in text, name
        for a in sp._actions:
            for opt in a.option_strings:
                assert opt in text, (name, opt)


def test_docstring_layouts_reach_the_page_intact():
    # aligned columns with hanging indents, |x| bars and a lone * are prose, not markup:
    # after the hook docutils reports nothing and no word is lost
    doc = ["Kernels (numba):",
           "",
           "    advance(x, u0, u1)   x along the segment u0 -> u1",
           "                         travelled in dt [s]",
           "    force(x, u)          F(x, u)",
           "the rate is |v| times the gap; C files components/*.c.",
           "",
           "::",
           "",
           "    kept  |as|   written"]
    lines = list(doc)
    assert hm_docgen._rest_problems(lines)
    hm_docgen._process_docstring(None, "module", "m", None, None, lines)
    assert not hm_docgen._rest_problems(lines)
    words = lambda ls: " ".join(ls).replace("\\", "").split()
    assert words(lines) == words(doc)
    assert "    kept  |as|   written" in lines          # literal block untouched

