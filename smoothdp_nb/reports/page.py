"""Executed notebooks as a course handout: one HTML page each, and a contents page.

Every page is self-contained and offline: the style sheet is inlined, pictures
are ``data:`` URLs, math is MathML, and a Content-Security-Policy forbids any
script and any request other than ``data:`` images, so nothing in an output
(an HTML table, a chart) can reach the network or run code when the report is
opened.

Conventions read from the notebooks (documented in ``smoothdp_nb/notebooks/README.md``):

* the title is the first Markdown heading, the summary the paragraph under it;
* cells tagged ``headline`` give the numbers shown on the contents page: a
  code cell's outputs, or a Markdown cell's text;
* the Jupyter Book tags ``remove-cell``, ``remove-input`` (or ``hide-input``)
  and ``remove-output`` leave out a cell, its code, or its outputs.
"""

from __future__ import annotations

import datetime as _dt
import functools
import html
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import TYPE_CHECKING, Any

from smoothdp_nb.reports.markdown import first_heading, inline_markdown_to_html, markdown_to_html
from smoothdp_nb.reports.outputs import render_outputs

if TYPE_CHECKING:
    from nbformat import NotebookNode

__all__ = [
    "CSP",
    "CSP_LOCAL_IMAGES",
    "Entry",
    "RunInfo",
    "document",
    "duration",
    "headline_html",
    "index_page",
    "notebook_page",
    "notebook_summary",
    "notebook_title",
]

#: scripts: none; requests: none but data: pictures; inline styles only
CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"
#: the same, for a page that shows picture files lying beside it (the chart gallery)
CSP_LOCAL_IMAGES = CSP.replace("img-src data:", "img-src 'self' file: data:")
_SUMMARY_CHARS = 360


@dataclass(frozen=True)
class RunInfo:
    """How the reports were produced (printed in each page's footer)."""

    mode: str = "full"
    started: str = field(default_factory=lambda: _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"))
    version: str = ""
    total_seconds: float | None = None


@dataclass
class Entry:
    """One notebook on the contents page."""

    stem: str
    title: str
    summary: str = ""
    status: str = "pending"  # "ok", "failed" or "pending"
    seconds: float | None = None
    error: str | None = None
    headline: str | None = None  # HTML; None: the notebook declares no headline
    has_page: bool = False
    cpu_seconds: float | None = None  # CPU of the kernel's process tree (None: not measured)


@functools.lru_cache(maxsize=1)
def _css() -> str:
    from pygments.formatters import HtmlFormatter  # deferred: --help loads this module, never pygments

    own = resources.files(__package__).joinpath("report.css").read_text(encoding="utf-8")
    # xcode: every token colour has a contrast of at least 4.6:1 on the code background (WCAG AA)
    return own + HtmlFormatter(style="xcode").get_style_defs(".hl")


def _highlight(source: str) -> str:
    # deferred: --help loads this module, never pygments
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    try:
        lexer = get_lexer_by_name("ipython3")
    except ClassNotFound:
        lexer = get_lexer_by_name("python")
    return highlight(source, lexer, HtmlFormatter(cssclass="hl"))


def _tags(cell: Mapping[str, Any]) -> set[str]:
    return set(cell.get("metadata", {}).get("tags", []) or [])


def _markdown_cells(nb: NotebookNode) -> Iterable[str]:
    return (c.get("source", "") for c in nb.get("cells", []) if c.get("cell_type") == "markdown")


def notebook_title(nb: NotebookNode, fallback: str) -> str:
    """Markdown source of the notebook's first heading (``fallback`` when it has none)."""
    for source in _markdown_cells(nb):
        heading = first_heading(source)
        if heading:
            return heading
    return fallback


def notebook_summary(nb: NotebookNode) -> str:
    """The first paragraph after the title heading (Markdown), shortened to a few sentences."""
    for source in _markdown_cells(nb):
        paragraphs = [p.strip() for p in re.split(r"\n\s*\n", source) if p.strip()]
        body = [p for p in paragraphs if not p.lstrip().startswith("#")]
        if not body:
            continue
        text = " ".join(body[0].split())
        if len(text) > _SUMMARY_CHARS:
            cut = text.rfind(". ", 0, _SUMMARY_CHARS)
            text = text[: cut + 1] if cut > 80 else text[: text.rfind(" ", 0, _SUMMARY_CHARS)] + " …"
        return text
    return ""


def _widget_state(nb: NotebookNode) -> Mapping[str, Any]:
    widgets = nb.get("metadata", {}).get("widgets", {}) or {}
    return widgets.get("application/vnd.jupyter.widget-state+json", {}).get("state", {}) or {}


def headline_html(nb: NotebookNode) -> str | None:
    """HTML of the cells tagged ``headline``; None when no cell is tagged.

    A tagged code cell contributes its outputs (not its code), a tagged
    Markdown cell its text.  A tagged code cell that has not run (the notebook
    failed before it) contributes nothing, so the result may be ``""``.
    """
    cells = [c for c in nb.get("cells", []) if "headline" in _tags(c)]
    if not cells:
        return None
    state = _widget_state(nb)
    parts = []
    for c in cells:
        if c.get("cell_type") == "markdown":
            parts.append(markdown_to_html(c.get("source", "")))
        elif c.get("cell_type") == "code":
            parts.append(render_outputs(c.get("outputs", []), state))
    return "".join(parts)


def _seconds(cell: Mapping[str, Any]) -> float | None:
    timing = cell.get("metadata", {}).get("execution", {}) or {}
    try:
        start = _dt.datetime.fromisoformat(timing["iopub.execute_input"])
        end = _dt.datetime.fromisoformat(timing["shell.execute_reply"])
    except (KeyError, ValueError, AttributeError):
        return None
    return (end - start).total_seconds()


def duration(seconds: float | None) -> str:
    """A run time for people: ``"4.2 s"``, ``"3 min 07 s"``; ``""`` for None."""
    if seconds is None:
        return ""
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, sec = divmod(round(seconds), 60)
    return f"{minutes} min {sec:02d} s"


def document(title: str, body: str, *, header: str = "", footer: str = "", csp: str = CSP) -> str:
    """A complete, self-contained HTML page: the one writer of every page the package produces.

    The notebook handouts and their contents page, the chart gallery's index
    and the report of ``python -m smoothdp_nb run`` all come from here, with
    one style sheet (``report.css`` and the code colours) inlined and a
    Content-Security-Policy that forbids every script and every request
    (``csp``: :data:`CSP`, or :data:`CSP_LOCAL_IMAGES` for a page that shows
    picture files lying beside it).

    Parameters
    ----------
    title : str
        Plain text for the ``<title>`` element (escaped here).
    body : str
        HTML of the page's main part.
    header : str
        HTML of the top bar (no bar when empty).
    footer : str
        HTML of the footer line (no footer when empty).
    csp : str
        The Content-Security-Policy of the page.

    Returns
    -------
    str
    """
    bar = f"<header class='bar'>{header}</header>\n" if header else ""
    end = f"<footer>{footer}</footer>" if footer else ""
    policy = html.escape(csp, quote=False).replace('"', "&quot;")
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<meta http-equiv='Content-Security-Policy' content=\"{policy}\">"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{html.escape(title)}</title><style>{_css()}</style></head>\n<body>"
        f"{bar}<main>\n{body}\n</main>\n{end}</body></html>\n"
    )


def _footer(run: RunInfo, seconds: float | None = None) -> str:
    what = f"smoothdp_nb {run.version}" if run.version else "smoothdp_nb"
    mode = "small CI parameters" if run.mode == "ci" else "default parameters"
    took = f" in {duration(seconds)}" if seconds is not None else ""
    return html.escape(f"Executed{took} by {what} (python -m smoothdp_nb tutorials, {mode}) on {run.started}.")


def _text_of(markdown_title: str) -> str:
    return html.unescape(re.sub(r"<[^>]*>", "", inline_markdown_to_html(markdown_title)))


def notebook_page(
    nb: NotebookNode,
    stem: str,
    *,
    run: RunInfo = RunInfo(),
    error: str | None = None,
    neighbours: Sequence[str | None] = (None, None),
    seconds: float | None = None,
) -> str:
    """The HTML handout of one executed notebook.

    Parameters
    ----------
    nb : NotebookNode or dict
        An executed nbformat v4 notebook.
    stem : str
        The notebook's file name without ``.ipynb``.
    run : RunInfo
        Printed in the footer.
    error : str, optional
        When the run failed: the message, shown in a banner above the page.
    neighbours : (previous stem, next stem)
        Links in the top bar.
    seconds : float, optional
        The notebook's run time, printed in the footer.
    """
    state = _widget_state(nb)
    parts = []
    if error:
        parts.append(
            f"<div class='banner failed'><b>This notebook did not run to the end.</b> {html.escape(error)}</div>"
        )
    for cell in nb.get("cells", []):
        tags = _tags(cell)
        if "remove-cell" in tags:
            continue
        kind = cell.get("cell_type")
        if kind == "markdown":
            parts.append(f"<section class='cell markdown'>{markdown_to_html(cell.get('source', ''))}</section>")
        elif kind == "code":
            piece = ["<div class='cell code'>"]
            if not tags & {"remove-input", "hide-input"} and cell.get("source", "").strip():
                meta = []
                if cell.get("execution_count") is not None:
                    meta.append(f"[{cell['execution_count']}]")
                elif error:
                    meta.append("not run")
                took = _seconds(cell)
                if took is not None and took >= 1:
                    meta.append(duration(took))
                piece.append(
                    f"<div class='source'><span class='meta'>{html.escape(' · '.join(meta))}</span>"
                    f"{_highlight(cell['source'])}</div>"
                )
            if "remove-output" not in tags:
                outs = render_outputs(cell.get("outputs", []), state)
                if outs:
                    piece.append(f"<div class='outputs'>{outs}</div>")
            piece.append("</div>")
            parts.append("".join(piece))
    prev_stem, next_stem = neighbours
    header = ["<a href='index.html'>☰ Contents</a>", "<span class='spacer'></span>"]
    if prev_stem:
        header.append(f"<a href='{html.escape(prev_stem)}.html'>← {html.escape(prev_stem)}</a>")
    if next_stem:
        header.append(f"<a href='{html.escape(next_stem)}.html'>{html.escape(next_stem)} →</a>")
    title = _text_of(notebook_title(nb, stem))
    return document(title, "\n".join(parts), header="".join(header), footer=_footer(run, seconds))


def index_page(entries: Sequence[Entry], run: RunInfo = RunInfo(), heading: str = "smoothdp_nb tutorials") -> str:
    """The contents page: per notebook its title, summary, status, run time and headline."""
    items = []
    for e in entries:
        number = e.stem.split("_", 1)[0]
        title = inline_markdown_to_html(e.title)
        # the title's own number ("01 · ...") is already in the margin
        title = re.sub(r"^\s*\d+\s*[·.:-]\s*", "", title)
        link = f"<a href='{html.escape(e.stem)}.html'>{title}</a>" if e.has_page else title
        status = {"ok": "ok", "failed": "failed"}.get(e.status, "pending")
        label = {"ok": "ran", "failed": "failed", "pending": "not run yet"}[status]
        run_cell = f"<span class='pill {status}'>{label}</span>"
        if e.seconds is not None:
            run_cell += f"<br>{html.escape(duration(e.seconds))}"
            if e.cpu_seconds is not None:
                run_cell += f"<br><span class='cpu'>CPU {html.escape(duration(e.cpu_seconds))}</span>"
        row = [
            f"<li class='{status}'><span class='num'>{html.escape(number)}</span>",
            f"<span class='title'>{link}</span><span class='run'>{run_cell}</span>",
        ]
        if e.summary:
            row.append(f"<span class='summary'>{inline_markdown_to_html(e.summary)}</span>")
        if e.error:
            row.append(f"<span class='error-line'>{html.escape(e.error)}</span>")
        if e.headline:  # a notebook without a headline cell shows its summary only
            row.append(f"<div class='headline'>{e.headline}</div>")
        row.append("</li>")
        items.append("".join(row))
    done = [e for e in entries if e.status == "ok"]
    total = f" in {duration(run.total_seconds)}" if run.total_seconds is not None else ""
    cpus = [e.cpu_seconds for e in entries if e.cpu_seconds is not None]
    if total and cpus:
        total += f" (CPU time of the kernels {duration(sum(cpus))})"
    lede = (
        f"{len(done)} of {len(entries)} notebooks executed top to bottom{total}; "
        "each page is the notebook with its outputs, readable offline."
    )
    body = (
        f"<h1>{html.escape(heading)}</h1><p class='lede'>{html.escape(lede)}</p>"
        f"<ol class='contents'>{''.join(items)}</ol>"
    )
    return document(heading, body, header="<span>☰ Contents</span>", footer=_footer(run))
