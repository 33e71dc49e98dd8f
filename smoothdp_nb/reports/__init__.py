"""Static HTML reports of executed notebooks (the tutorials' course handout).

:mod:`.markdown` renders Markdown and math, :mod:`.outputs` one cell output,
:mod:`.page` whole pages and the contents page; :mod:`.snapshot` runs in the
notebook's kernel to capture live panels.  Needs the ``tutorials`` extra
(``markdown-it-py``, ``mdit-py-plugins``, ``latex2mathml``).
"""

from .markdown import inline_markdown_to_html, markdown_to_html, tex_to_html
from .outputs import render_output, render_outputs
from .page import (
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
