"""Sphinx configuration of the smoothdp_nb documentation.

Build (offline, warnings are errors)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

The tutorial notebooks are copied from ``smoothdp_nb/notebooks/`` into ``docs/tutorials/``
and executed by myst-nb with ``SMOOTHDP_CI=1`` (the notebooks' small
parameters), so the build takes minutes.  The API page lists
``smoothdp_nb.__all__`` as it is at build time (``reference.rst``; ``api.md`` is the
grammar the names follow); the ``%%smoothdp`` page renders
the magic's own docstring and the spec page the spec's key table.  Nothing is
loaded from the network: MathJax comes from the ``sphinx-mathjax-offline``
package and the charts are SVG outputs.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(DOCS / "_ext"))

# The notebooks read this in their ``parameters`` cell; the kernel inherits it.
os.environ["SMOOTHDP_CI"] = "1"

from smoothdp_docs import copy_notebooks, write_api_page, write_spec_page

import smoothdp_nb

project = "smoothdp_nb"
author = "the smoothdp_nb developers"
copyright = "the smoothdp_nb developers"
release = smoothdp_nb.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "myst_nb",
    "sphinx-mathjax-offline",  # MathJax 3 files copied into _static: no CDN
    "sphinx_copybutton",  # a copy button on every code block (its script ships with the package)
    "smoothdp_docs",
]

# Generated sources (ignored by git): refreshed on every build.  The tutorials ship inside the
# package (smoothdp_nb/notebooks/; notebooks/ at the root is a link to them).
NOTEBOOKS = ROOT / "smoothdp_nb" / "notebooks"
copy_notebooks(NOTEBOOKS, DOCS / "tutorials")
write_api_page(DOCS / "reference.rst")
write_spec_page(DOCS / "spec.md")  # the spec keys, from smoothdp_nb/spec/keys.py
# stem -> path in the repository: the Binder links of the tutorial pages open that file
smoothdp_tutorials = {p.stem: p.relative_to(ROOT).as_posix() for p in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))}

exclude_patterns = [
    "_build",
    "Thumbs.db",
    ".DS_Store",
    "**.ipynb_checkpoints",
    "jupyter_execute",
    "_gallery",
    "snapshot_panels.py",
]
templates_path = ["_templates"]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}

# -- API reference -------------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": True}
autodoc_typehints = "none"  # numpydoc sections carry the types; signatures stay short
autodoc_member_order = "bysource"
numpydoc_show_class_members = False
numpydoc_validation_checks: set[str] = set()  # docstrings are edited in parallel: no style gate here
numpydoc_xref_param_type = False
nitpicky = False

# -- notebooks -------------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 3
nb_execution_mode = "cache"
nb_execution_cache_path = str(DOCS / "_build" / ".jupyter_cache")
nb_execution_timeout = 900
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_merge_streams = True
# Markdown outputs (the notebooks' computed paragraphs) are parsed like the cells: $...$ is math
nb_render_markdown_format = "myst"
# Live ipywidgets panels need a kernel: show their text fallback, never load the
# widget manager from a CDN.
nb_ipywidgets_js: dict[str, dict[str, str]] = {}
nb_mime_priority_overrides = [
    ("html", "application/vnd.jupyter.widget-view+json", None),
    ("html", "application/vnd.vegalite.v5+json", None),
    ("html", "application/vnd.vegalite.v6+json", None),
    ("html", "application/javascript", None),
]

# -- HTML ------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"smoothdp_nb {release}"
html_static_path = ["_static"]  # panels/*.png (docs/snapshot_panels.py) and smoothdp.css
html_css_files = ["smoothdp.css"]
html_favicon = "_static/favicon.svg"  # without one, every first visit logged a 404 for /favicon.ico
# the theme's light/dark switch reads this; left empty, every page logged "Got invalid theme mode"
html_context = {"default_mode": "auto"}
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "icon_links": [],
}
html_last_updated_fmt = None

# -- copy buttons ----------------------------------------------------------------------
# prompts and outputs are not copied: ">>> ", "... ", "$ " and IPython's "In [1]: "
copybutton_prompt_text = r">>> |\.\.\. |\$ |In \[\d*\]: | {2,5}\.\.\.: "
copybutton_prompt_is_regexp = True
copybutton_only_copy_prompt_lines = False
copybutton_exclude = ".linenos, .gp, .go"
