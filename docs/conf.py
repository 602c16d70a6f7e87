"""Sphinx configuration of the hystmech documentation.

Build: ``pip install '.[docs]'`` then ``make -C docs html`` (``sphinx-build -W --keep-going``).
The API reference, the law cards, the scenario-format and command-line pages are
generated from the code at every build (``_ext/hm_docgen.py``): nothing there is
written by hand. The gallery (``examples/``) is executed at build time; the environment
variable ``HYSTMECH_GALLERY`` chooses how much of it (see ``_ext/hm_gallery.py``).
"""
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

import hm_gallery  # noqa: E402

import hystmech  # noqa: E402

project = "hystmech"
author = "the hystmech authors"
copyright = "2026, the hystmech authors"
release = version = hystmech.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx.ext.intersphinx",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
    "sphinx_copybutton",
    # MathJax served from the site itself (no network at build or read time)
    "sphinx-mathjax-offline",
    "hm_docgen",
]

exclude_patterns = ["_build", "tests", "examples/README.txt", "**/.ipynb_checkpoints",
                    "auto_examples/*.ipynb", "auto_examples/*.py", "auto_examples/*.zip",
                    "auto_examples/*.json", "auto_examples/*.md5",
                    "auto_examples/*.codeobj.json"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"

# -- MyST (Markdown pages) ---------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

# -- autodoc / napoleon (the docstrings are prose with numpy-style sections) -------------
autodoc_default_options = {"members": False}
autodoc_typehints = "description"
autodoc_typehints_format = "short"
autodoc_member_order = "bysource"
autodoc_mock_imports = []
napoleon_numpy_docstring = True
napoleon_google_docstring = False
napoleon_use_rtype = False
napoleon_custom_sections = [("Returns", "params_style")]
# intersphinx needs the network: none here, so no inventories are fetched
intersphinx_mapping = {}

# -- sphinx-gallery -----------------------------------------------------------------------
sphinx_gallery_conf = hm_gallery.gallery_conf(HERE)

# -- HTML ---------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"hystmech {release}"
html_static_path = ["_static"]
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "header_links_before_dropdown": 5,
    "secondary_sidebar_items": ["page-toc", "sourcelink"],
    # the theme would otherwise ask the network for a version switcher and icons
    "icon_links": [],
}
html_sidebars = {"index": [], "getting_started": []}
html_show_sourcelink = True

nitpicky = False
suppress_warnings = []
