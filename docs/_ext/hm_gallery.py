"""sphinx-gallery settings of the hystmech gallery (``docs/examples``).

Every example runs a scenario the way a user does (``run_scenario(name, out=run_dir)``,
which writes the scenario's PNG figures into ``run_dir``) or drives an engine plugin and
draws with matplotlib. :class:`RunDirScraper` puts the PNGs a scenario wrote under the
example, next to matplotlib's own scraper.

``HYSTMECH_GALLERY`` (environment; :mod:`hystmech.gallery`) chooses the size every
example runs at, read by the example itself through the same code:

``full``     every example at its scenario's published size (the long sweeps take minutes);
unset        ``reduced``: the long ones on reduced grids (each says so);
``ci``       every example executed, the slow ones smaller still; what CI builds.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from hystmech.gallery import gallery_size

MODE = gallery_size()


class RunDirScraper:
    """Image scraper: the PNG files a scenario run wrote into the example's ``run_dir``
    (a global of the example), each shown once, in file-name order."""

    def __init__(self):
        self.seen = {}

    def __repr__(self):          # sphinx-gallery keys its cache on the repr
        return "RunDirScraper()"

    def __call__(self, block, block_vars, gallery_conf):
        from sphinx_gallery.scrapers import figure_rst

        run_dir = block_vars["example_globals"].get("run_dir")
        if run_dir is None:
            return ""
        run_dir = Path(run_dir)
        key = str(block_vars.get("src_file", ""))
        seen = self.seen.setdefault(key, set())
        paths = []
        for png in sorted(run_dir.glob("*.png")):
            if png.name in seen:
                continue
            seen.add(png.name)
            dest = next(block_vars["image_path_iterator"])
            shutil.copyfile(png, dest)
            paths.append(dest)
        return figure_rst(paths, gallery_conf["src_dir"])


SCRAPER = RunDirScraper()


def gallery_conf(here: Path) -> dict:
    return {
        "examples_dirs": str(here / "examples"),
        "gallery_dirs": str(here / "auto_examples"),
        "filename_pattern": r"/plot_",      # every example is executed
        "ignore_pattern": r"(__init__|_common)\.py",
        "image_scrapers": ("matplotlib", SCRAPER),
        "within_subsection_order": "FileNameSortKey",
        "download_all_examples": False,
        "remove_config_comments": True,
        "only_warn_on_example_error": False,
        "abort_on_example_error": False,
        "show_memory": False,
        "min_reported_time": 1e9,
        "show_signature": False,
        "backreferences_dir": None,
        "matplotlib_animations": False,
        "capture_repr": ("_repr_html_", "__repr__"),
    }
