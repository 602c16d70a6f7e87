"""The gallery has a page per scenario (and the FMU round trip), and every example that
the build executed shows at least one figure."""
import re

import hm_gallery
from hystmech.scenario import list_scenarios


def test_one_example_per_scenario(site):
    pages = {p.stem for p in (site / "auto_examples").glob("plot_*.html")}
    for name, _ in list_scenarios():
        assert "plot_" + name.replace("-", "_") in pages, f"no gallery page for scenario {name}"


def test_executed_examples_show_figures(site):
    executed = (hm_gallery.CI_SUBSET if hm_gallery.MODE == "ci"
                else [p.stem for p in (site / "auto_examples").glob("plot_*.html")])
    for stem in executed:
        text = (site / "auto_examples" / f"{stem}.html").read_text()
        imgs = re.findall(r'<img [^>]*src="\.\./(_images/sphx_glr_[^"]+)"', text)
        assert imgs, f"{stem}: no figure"
        for src in imgs:
            assert (site / src).exists(), (stem, src)
