"""Offline rendering (SVG, PNG) and the one mimebundle route of the package.

A live Altair chart in a notebook loads Vega from a CDN, which fails offline;
the rich display of a result therefore embeds a static SVG rendered by
``vl_convert`` (no script, no remote resource).  The live panels use
``JupyterChart`` with its offline JavaScript bundle instead
(:mod:`smoothdp_nb.panels.live`).

Static charts follow JupyterLab's theme: they are inline SVG in an HTML output
beside a style sheet (:data:`THEME_CSS`) that applies only where JupyterLab
marks its theme on ``<body>`` (``data-jp-theme-light``) -- there the white
background becomes transparent and the black and grey ink takes the theme's
text and border colours (``--jp-ui-font-color1`` ...), light and dark themes
alike, as the live panels do.  Elsewhere (classic Notebook, the handouts, the
docs, an untrusted notebook whose style sheets are stripped) nothing matches
and the chart keeps its own white background and dark ink.
"""

from __future__ import annotations

import hashlib
import html
import re

import altair as alt

from smoothdp_nb.core.runtime.rendering import Renderer
from smoothdp_nb.display import style

__all__ = [
    "FIT_CSS",
    "MAX_SUMMARY_ROWS",
    "THEME_CSS",
    "StaticChart",
    "bundle",
    "chart_html",
    "render_png",
    "render_svg",
]

#: rows of the summary table shown above a chart
MAX_SUMMARY_ROWS = 20

#: the colours a chart is drawn with (ours and Vega's defaults) -> the JupyterLab theme's colour that replaces them
#: (with the light theme's value as fallback).  Text and key symbols: ``INK``, Vega's black text; secondary
#: rules and axis lines: ``SOFT``, Vega's grey axis domain and ticks; grid lines: Vega's light grey.
_THEME_INK = "var(--jp-ui-font-color1, rgba(0, 0, 0, 0.87))"
_THEME_SOFT = "var(--jp-ui-font-color2, rgba(0, 0, 0, 0.54))"
_THEME_GRID = "var(--jp-border-color2, #e0e0e0)"
_RECOLOUR = {
    _THEME_INK: ("#000", "#000000", "black", style.INK),
    _THEME_SOFT: (style.SOFT, "#888", "#888888"),
    _THEME_GRID: ("#ddd", "#dddddd"),
}
_SCOPE = "body[data-jp-theme-light] .smoothdp-chart svg.marks"


def _theme_css() -> str:
    rules = [
        f'{_SCOPE} > rect:first-child:is([fill="white" i], [fill="#fff" i], [fill="#ffffff" i]) {{fill: transparent}}'
    ]
    for theme, drawn in _RECOLOUR.items():
        for attr in ("fill", "stroke"):
            selectors = ", ".join(f'[{attr}="{colour}" i]' for colour in drawn)
            rules.append(f"{_SCOPE} :is({selectors}) {{{attr}: {theme}}}")
    return "\n".join(rules)


#: an inline chart never overflows its output area: it shrinks to the width there is (keeping its
#: proportions, from its viewBox), in JupyterLab, Voila, the handouts and the docs alike
FIT_CSS = ".smoothdp-chart { max-width: 100%; } .smoothdp-chart > svg { max-width: 100%; height: auto; }"

#: the style sheet that makes an inline chart (``<div class="smoothdp-chart">``) follow JupyterLab's theme;
#: every selector starts with ``body[data-jp-theme-light]``, so it changes nothing on other pages
THEME_CSS = _theme_css()

_SVG_ID = re.compile(r'(\sid="|url\(#|href="#)([^"#)]+)')


def _vl_version() -> str | None:
    """The Vega-Lite version Altair writes, if vl_convert bundles it (else vl_convert's latest)."""
    import vl_convert as vlc  # deferred: the native Vega renderer, loaded by the first rendering

    want = ".".join(alt.SCHEMA_VERSION.lstrip("v").split(".")[:2])
    return want if want in vlc.get_vegalite_versions() else None


def render_svg(chart: alt.TopLevelMixin) -> str:
    """Render a chart to an SVG document offline with ``vl_convert``.

    Parameters
    ----------
    chart : altair chart

    Returns
    -------
    str
        The SVG document (no scripts, no remote resources).
    """
    import vl_convert as vlc  # deferred: the native Vega renderer, loaded by the first rendering

    return vlc.vegalite_to_svg(chart.to_dict(), vl_version=_vl_version(), allowed_base_urls=[])


def render_png(chart: alt.TopLevelMixin, scale: float = 2.0) -> bytes:
    """Render a chart to PNG bytes offline (``scale`` 2: sharp on a projector)."""
    import vl_convert as vlc  # deferred: the native Vega renderer, loaded by the first rendering

    return vlc.vegalite_to_png(chart.to_dict(), vl_version=_vl_version(), scale=scale, allowed_base_urls=[])


def chart_html(svg: str) -> str:
    """An SVG chart as HTML that follows JupyterLab's theme (see the module's notes).

    The chart's element ids (clip paths, gradients) get a prefix made from
    its content: two inline charts on one page never draw with each other's
    clip paths, and the same chart gives the same markup.

    Parameters
    ----------
    svg : str
        An SVG document drawn by Vega (:func:`render_svg`).

    Returns
    -------
    str
        ``<div class="smoothdp-chart">`` holding :data:`FIT_CSS`, :data:`THEME_CSS` and the SVG.
    """
    prefix = "sdp" + hashlib.sha1(svg.encode("utf-8")).hexdigest()[:10] + "-"
    svg = _SVG_ID.sub(lambda m: m.group(1) + prefix + m.group(2), svg)
    return f'<div class="smoothdp-chart"><style>{FIT_CSS}\n{THEME_CSS}</style>{svg}</div>'


class StaticChart:
    """An Altair chart rendered offline, displayed as an SVG that follows JupyterLab's theme.

    ``display(StaticChart(chart))`` shows what ``display(SVG(render_svg(chart)))``
    shows, except that in JupyterLab the chart takes the theme's background and
    text colours (dark themes included); JupyterLab draws an ``image/svg+xml``
    output as an ``<img>``, which no style sheet of the page reaches.

    Parameters
    ----------
    chart : altair chart
        Rendered at once (a chart that cannot be rendered fails here, not in the display).

    Attributes
    ----------
    svg : str
        The SVG document (:func:`render_svg`), for saving or embedding elsewhere.
    """

    def __init__(self, chart: alt.TopLevelMixin) -> None:
        if not isinstance(chart, alt.TopLevelMixin):
            raise TypeError(f"chart must be an Altair chart, not {type(chart).__name__}")
        self.svg = render_svg(chart)

    def __repr__(self) -> str:
        return "<StaticChart: an offline SVG chart>"

    def _repr_html_(self) -> str:
        return chart_html(self.svg)

    def _repr_mimebundle_(self, include: object = None, exclude: object = None) -> dict[str, str]:
        """HTML (inline SVG and the theme's style sheet) and a text form."""
        return {"text/plain": repr(self), "text/html": chart_html(self.svg)}


def bundle(obj: object, renderer: Renderer, chart: bool = True) -> dict[str, str]:
    """The rich display of a result: ``text/plain`` and HTML (summary table, chart as inline SVG).

    Registered as the route of :mod:`smoothdp_nb.core.runtime.rendering`.  A failing
    summary or chart becomes a one-line note: the display itself never fails.
    ``chart=False`` leaves the chart out (the magic's ``--no-chart``).
    """
    text = str(obj)
    head = html.escape(text.splitlines()[0] if text else type(obj).__name__)
    parts = [f'<div class="smoothdp-result"><div style="font-weight:bold">{head}</div>']
    summary = None
    if renderer.summary is not None:
        try:
            summary = renderer.summary(obj)
        except Exception as exc:
            parts.append(f"<!-- summary failed: {html.escape(type(exc).__name__)} -->")
    if summary is not None:
        shown = summary.head(MAX_SUMMARY_ROWS)
        parts.append(shown.to_html(index=False, border=0, escape=True))
        if len(summary) > len(shown):
            parts.append(f"<div><small>… {len(summary) - len(shown)} more rows (see .to_frame())</small></div>")
    else:
        parts.append(f"<pre>{html.escape(text)}</pre>")
    if chart:
        try:
            parts.append(chart_html(render_svg(renderer.chart(obj))))
        except Exception as exc:
            msg = html.escape(f"{type(exc).__name__}: {exc}".splitlines()[0][:200])
            parts.append(f"<div><small>(chart not rendered: {msg})</small></div>")
    parts.append("</div>")
    return {"text/plain": text, "text/html": "".join(parts)}
