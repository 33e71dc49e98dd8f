"""Static HTML reports: the tutorials' course handout, the chart gallery, the report of a spec run.

:mod:`.page` is the one writer of every page (:func:`.page.document`: one style
sheet, no script, no request), with the notebook handouts and their contents
page; :mod:`.markdown` renders Markdown and math, :mod:`.outputs` one cell
output; :mod:`.snapshot` runs in the notebook's kernel to capture live panels.
:mod:`.runner` executes notebooks into handouts (each in a kernel started by
:mod:`.execute`, progress on the terminal by :mod:`.run_progress`);
:mod:`.gallery` renders every chart; :mod:`.run_report` is the HTML and JSON
report of one spec.  Rendering notebooks needs the ``tutorials`` extra
(``markdown-it-py``, ``mdit-py-plugins``, ``latex2mathml``; running them also
``nbclient``, ``nbformat``, ``ipykernel``).

May import: the core, :mod:`smoothdp_nb.display`, :mod:`smoothdp_nb.spec` and the top-level
package; never the command line or the panels.
"""

from smoothdp_nb.reports.markdown import inline_markdown_to_html, markdown_to_html, tex_to_html
from smoothdp_nb.reports.outputs import render_output, render_outputs
from smoothdp_nb.reports.page import (
    Entry,
    RunInfo,
    headline_html,
    index_page,
    notebook_page,
    notebook_summary,
    notebook_title,
)

__all__ = [
    "Entry",
    "RunInfo",
    "headline_html",
    "index_page",
    "inline_markdown_to_html",
    "markdown_to_html",
    "notebook_page",
    "notebook_summary",
    "notebook_title",
    "render_output",
    "render_outputs",
    "tex_to_html",
]
