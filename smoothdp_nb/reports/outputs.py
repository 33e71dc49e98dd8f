"""One notebook output (stream, error, rich display) as static, offline HTML.

Rich outputs are shown by the first MIME type of :data:`PREFERENCE` they carry:
a picture first (SVG, then PNG/JPEG), then a Vega-Lite or Vega spec rendered to
SVG by ``vl_convert`` (offline), then HTML, Markdown, LaTeX and plain text.
Pictures are embedded as ``data:`` URLs in ``<img>`` rather than inline
``<svg>``: two inline SVGs of the same page would share their element ids
(clip paths, gradients) and draw each other's.

What a static page cannot show is replaced, not printed as a repr:

* progress bars (tqdm's text bars, ``\\r``-overwritten lines, and the
  ipywidgets ``FloatProgress`` boxes of ``tqdm.auto``) are dropped: their
  frozen state ("0/40") says nothing true about the finished run;
* a live panel (``application/vnd.jupyter.widget-view+json``) shows the
  picture carried beside it, when there is one (the tutorial runner adds a
  snapshot of the panel's chart), with a note that the panel is live in
  Jupyter; otherwise only the note.
"""

from __future__ import annotations

import base64
import html
import json
import re
from collections.abc import Mapping
from typing import Any

from smoothdp_nb.reports.markdown import markdown_to_html, tex_to_html

__all__ = [
    "PREFERENCE",
    "WIDGET_MIME",
    "chart_alt_text",
    "clean_stream",
    "inline_charts_as_images",
    "is_progress_widget",
    "render_output",
    "render_outputs",
]

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
#: the report's order of preference among the MIME types of one output
PREFERENCE = (
    "image/svg+xml",
    "image/png",
    "image/jpeg",
    "application/vnd.vegalite",  # any version: a prefix
    "application/vnd.vega",
    "text/html",
    "text/markdown",
    "text/latex",
    "text/plain",
)
LIVE_PANEL_NOTE = "Live panel: open the notebook in Jupyter to use it."

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
#: tqdm's text bar: "desc:  40%|████      | 6/15 [00:01<00:02, 3.9it/s]"
_TQDM_LINE = re.compile(r"\d{1,3}%\|[^|\n]*\|\s*[\d.]+[kMGT]?/[\d.?]+[kMGT]?\s*\[")
_PROGRESS_MODELS = frozenset({"FloatProgressModel", "IntProgressModel"})


def clean_stream(text: str) -> str:
    """What a terminal would show of ``text``, minus colour codes and progress bars.

    A carriage return rewinds the line, so only what follows the last ``\\r`` of
    a line is kept (tqdm and similar redraw a line in place many times).  Lines
    that are a tqdm bar are dropped.
    """
    kept = []
    for line in _ANSI.sub("", text).split("\n"):
        if "\r" in line:
            line = line.rstrip("\r").rsplit("\r", 1)[-1]
        if _TQDM_LINE.search(line):
            continue
        kept.append(line)
    return "\n".join(kept)


def is_progress_widget(view: Mapping[str, Any], text: str, state: Mapping[str, Any]) -> bool:
    """A displayed widget that is a progress bar (itself, or a box holding one).

    Parameters
    ----------
    view : mapping
        The ``application/vnd.jupyter.widget-view+json`` payload (``model_id``).
    text : str
        The output's ``text/plain`` (tqdm's notebook bar repr is its text bar).
    state : mapping
        The notebook's saved widget state (``model_id`` -> model), possibly empty.
    """
    if _TQDM_LINE.search(text):
        return True
    model = state.get(str(view.get("model_id")), {})
    if model.get("model_name") in _PROGRESS_MODELS:
        return True
    children = model.get("state", {}).get("children", []) or []
    for ref in children:
        child = state.get(str(ref).removeprefix("IPY_MODEL_"), {})
        if child.get("model_name") in _PROGRESS_MODELS:
            return True
    return False


def _as_text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


#: the ARIA labels Vega writes on a chart's title, subtitle and axes
_ARIA_TITLE = re.compile(r'aria-label="(?:Title|Subtitle) text \'(.*?)\'"')
_ARIA_AXIS = re.compile(r'aria-label="([XY])-axis titled \'(.*?)\'')
#: the ``text/plain`` of a display object without a text form: "<IPython.core.display.SVG object>"
_OBJECT_REPR = re.compile(r"^<[\w.]+ object( at 0x[0-9a-f]+)?>$")


def chart_alt_text(svg: str) -> str | None:
    """What a chart drawn by Vega shows, in words: its titles and axes (None when it has neither).

    Vega's SVG renderer labels the title, the subtitle and each axis for
    assistive technology (``aria-label="Title text '...'"``,
    ``"X-axis titled 'n' for a log scale ..."``); the titles and the axis
    titles, in order and without repeats, are the picture's alt text.
    """
    titles = list(dict.fromkeys(html.unescape(t).strip() for t in _ARIA_TITLE.findall(svg)))
    axes = list(dict.fromkeys(f"{xy} axis: {html.unescape(t).strip()}" for xy, t in _ARIA_AXIS.findall(svg)))
    titles = [t for t in titles if t]
    if not titles and not axes:
        return None
    head = "Chart: " + ". ".join(titles) if titles else "Chart"
    return head + (". " + "; ".join(axes) + "." if axes else ".")


#: an SVG document drawn by Vega inside an HTML output (a result's summary and chart)
_INLINE_CHART = re.compile(r"<svg\b[^>]*\bclass=\"marks\"[^>]*>.*?</svg>", re.DOTALL)


def inline_charts_as_images(markup: str) -> str:
    """Replace every Vega SVG inside HTML ``markup`` by an ``<img>`` of it with alt text.

    Inline, a chart's empty mark groups are unnamed ``graphics-symbol``
    elements to assistive technology, and two charts on one page share their
    element ids (clip paths); as a ``data:`` picture it is one image, named by
    :func:`chart_alt_text`.
    """

    def picture(match: re.Match[str]) -> str:
        svg = match.group(0)
        return _img("image/svg+xml", svg, chart_alt_text(svg) or "Chart (no title)")

    return _INLINE_CHART.sub(picture, markup)


def _alt_for(mime: str, payload: Any, plain: str | None) -> str:
    """Alt text of a picture: the chart's own labels, else its text form, else what kind of picture it is."""
    if mime == "image/svg+xml":
        alt = chart_alt_text(_as_text(payload))
        if alt:
            return alt
    if plain and plain.strip() and not _OBJECT_REPR.match(plain.strip()):
        return plain.strip()[:300]
    return "Chart (no title)" if mime == "image/svg+xml" else "Picture (no description)"


def _img(mime: str, payload: str, alt: str) -> str:
    if mime == "image/svg+xml":
        payload = base64.b64encode(_as_text(payload).encode("utf-8")).decode("ascii")
    else:  # nbformat stores PNG and JPEG base64-encoded already; drop line breaks
        payload = "".join(_as_text(payload).split())
    return f'<img class="figure" alt="{html.escape(alt)}" src="data:{mime};base64,{payload}">'


def _vega_svg(mime: str, spec: Any) -> str | None:
    """A Vega-Lite / Vega spec as SVG, offline; None if vl_convert is missing or fails."""
    try:
        import vl_convert as vlc  # deferred: loads the Vega renderer, only for an output with a chart

        spec = json.loads(spec) if isinstance(spec, str) else spec
        if mime.startswith("application/vnd.vegalite"):
            return vlc.vegalite_to_svg(spec, allowed_base_urls=[])
        return vlc.vega_to_svg(spec, allowed_base_urls=[])
    except Exception:
        return None


def _pick(data: Mapping[str, Any]) -> tuple[str, Any] | None:
    for want in PREFERENCE:
        for mime in data:
            if mime == want or (
                want.startswith("application/vnd.vega") and mime.startswith(want + ".v") and mime.endswith("+json")
            ):
                return mime, data[mime]
    return None


def _render_rich(data: Mapping[str, Any], skip: tuple[str, ...] = (), alt: str | None = None) -> str:
    plain = _as_text(data["text/plain"]) if "text/plain" in data else None
    rest = {k: v for k, v in data.items() if k not in skip}
    while (picked := _pick(rest)) is not None:
        mime, payload = picked
        if mime.startswith("image/"):
            return _img(mime, payload, alt if alt is not None else _alt_for(mime, payload, plain))
        if mime.startswith("application/vnd.vega"):
            svg = _vega_svg(mime, payload)
            if svg is not None:
                return _img("image/svg+xml", svg, alt if alt is not None else _alt_for("image/svg+xml", svg, plain))
            del rest[mime]
            continue
        if mime == "text/html":
            markup = inline_charts_as_images(_as_text(payload))
            # a wide table scrolls sideways: its box must be reachable with the keyboard (WCAG 2.1.1)
            focus = ' tabindex="0" role="region" aria-label="table output"' if "<table" in markup else ""
            return f'<div class="output-html"{focus}>{markup}</div>'
        if mime == "text/markdown":
            return f'<div class="output-markdown">{markdown_to_html(_as_text(payload))}</div>'
        if mime == "text/latex":
            tex = _as_text(payload).strip().strip("$")
            return f'<div class="output-latex">{tex_to_html(tex, display=True)}</div>'
        return f'<pre class="output-text">{html.escape(clean_stream(_as_text(payload)))}</pre>'
    return ""


def _render_widget(out: Mapping[str, Any], state: Mapping[str, Any]) -> str:
    data = out.get("data", {})
    view = data.get(WIDGET_MIME) or {}
    if is_progress_widget(view, _as_text(data.get("text/plain", "")), state):
        return ""
    # text/plain of a widget is its Python repr (VBox(children=(...))): never shown
    snap = out.get("metadata", {}).get("smoothdp_snapshot", {})
    picture = _pick({k: v for k, v in data.items() if k not in (WIDGET_MIME, "text/plain")})
    chart = chart_alt_text(_as_text(picture[1])) if picture and picture[0] == "image/svg+xml" else None
    title = snap.get("title") or "a live panel"
    alt = f"Snapshot of the chart of {title}" + (f" ({chart})" if chart else "")
    body = _render_rich(data, skip=(WIDGET_MIME, "text/plain"), alt=alt)
    caption = []
    if snap.get("title"):
        caption.append(f"<b>{html.escape(snap['title'])}</b><br>")
    if snap.get("controls"):
        caption.append("Shown at " + ", ".join(html.escape(c) for c in snap["controls"]) + ".")
    caption.append(("Static snapshot. " if body else "") + LIVE_PANEL_NOTE)
    return f'<figure class="live-panel">{body}<figcaption>{" ".join(caption)}</figcaption></figure>'


def render_output(out: Mapping[str, Any], widget_state: Mapping[str, Any] | None = None) -> str:
    """HTML for one output of a code cell (empty for outputs a report leaves out).

    Parameters
    ----------
    out : mapping
        An nbformat v4 output (``stream``, ``error``, ``display_data`` or
        ``execute_result``).
    widget_state : mapping, optional
        The notebook's saved widget models (``model_id`` -> model), used to
        recognise progress bars.
    """
    kind = out.get("output_type")
    if kind == "stream":
        text = clean_stream(_as_text(out.get("text", "")))
        if not text.strip():
            return ""
        return f'<pre class="stream {html.escape(str(out.get("name", "stdout")))}">{html.escape(text)}</pre>'
    if kind == "error":
        trace = "\n".join(_as_text(t) for t in out.get("traceback", [])) or f"{out.get('ename')}: {out.get('evalue')}"
        return f'<pre class="error">{html.escape(_ANSI.sub("", trace))}</pre>'
    data = out.get("data", {})
    if WIDGET_MIME in data:
        return _render_widget(out, widget_state or {})
    return _render_rich(data)


def render_outputs(outputs: list[Mapping[str, Any]], widget_state: Mapping[str, Any] | None = None) -> str:
    """HTML for all outputs of a cell, consecutive stream chunks of one stream merged.

    A kernel sends a stream in chunks (each ``print``, each tqdm redraw);
    joined, they read as one block, and a ``\\r`` that rewinds a line written
    by an earlier chunk is applied as a terminal would.
    """
    merged: list[Mapping[str, Any]] = []
    for out in outputs:
        last = merged[-1] if merged else None
        if (
            last is not None
            and out.get("output_type") == "stream"
            and last.get("output_type") == "stream"
            and out.get("name") == last.get("name")
        ):
            merged[-1] = {**last, "text": _as_text(last.get("text", "")) + _as_text(out.get("text", ""))}
        else:
            merged.append(out)
    return "".join(render_output(o, widget_state) for o in merged)
