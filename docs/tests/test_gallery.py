"""The gallery has a page per scenario (and the FMU round trip), and every example is
executed by the build at every size (``HYSTMECH_GALLERY``: ci, reduced, full): each
page shows at least one figure, none is a placeholder."""
import re
from pathlib import Path

import pytest

import hm_gallery
from hystmech.scenario import list_scenarios

EXAMPLES = sorted((Path(hm_gallery.__file__).resolve().parents[1] / "examples").glob("plot_*.py"))


def test_one_example_per_scenario(site):
    pages = {p.stem for p in (site / "auto_examples").glob("plot_*.html")}
    for name, _ in list_scenarios():
        assert "plot_" + name.replace("-", "_") in pages, f"no gallery page for scenario {name}"


@pytest.mark.parametrize("size", ["ci", "reduced", "full"])
def test_every_example_is_executed_at_every_size(size, monkeypatch):
    # no subset: sphinx-gallery executes the files its filename_pattern matches
    monkeypatch.setenv("HYSTMECH_GALLERY", size)
    conf = hm_gallery.gallery_conf(Path(hm_gallery.__file__).resolve().parents[1])
    assert len(EXAMPLES) >= 20
    for f in EXAMPLES:
        assert re.search(conf["filename_pattern"], f.as_posix()), f.name
        assert not re.search(conf["ignore_pattern"], f.as_posix()), f.name


def test_every_example_shows_figures(site):
    for f in EXAMPLES:
        page = site / "auto_examples" / f"{f.stem}.html"
        assert page.exists(), f"{f.stem}: no page"
        text = page.read_text()
        imgs = re.findall(r'<img [^>]*src="\.\./(_images/sphx_glr_[^"]+)"', text)
        assert imgs, f"{f.stem}: no figure (not executed?)"
        for src in imgs:
            assert (site / src).exists(), (f.stem, src)


def test_size_knob(monkeypatch):
    """One knob: HYSTMECH_GALLERY; the overrides change only the keys given and keep the
    rest of the shipped table (read here from the TOML file itself)."""
    import tomllib

    from hystmech import gallery
    from hystmech.scenario import load_scenario

    monkeypatch.setenv("HYSTMECH_GALLERY", "huge")
    with pytest.raises(ValueError, match="HYSTMECH_GALLERY must be one of ci, reduced, full"):
        gallery.gallery_size()
    shipped = tomllib.loads(Path(load_scenario("bouc-wen-benchmark")["_path"]).read_text())
    red, ci = {"signals": {"f1": 26.0}}, {"signals": {"f1": 22.0, "N": 2048}}
    monkeypatch.setenv("HYSTMECH_GALLERY", "full")
    assert gallery.scenario_overrides("bouc-wen-benchmark", reduced=red, ci=ci) is None
    monkeypatch.setenv("HYSTMECH_GALLERY", "reduced")
    o = gallery.scenario_overrides("bouc-wen-benchmark", reduced=red, ci=ci)
    assert o["signals"] == {**shipped["signals"], "f1": 26.0}
    monkeypatch.setenv("HYSTMECH_GALLERY", "ci")
    o = gallery.scenario_overrides("bouc-wen-benchmark", reduced=red, ci=ci)
    assert o["signals"] == {**shipped["signals"], "f1": 22.0, "N": 2048}
    monkeypatch.delenv("HYSTMECH_GALLERY")
    assert gallery.gallery_size() == "reduced"
