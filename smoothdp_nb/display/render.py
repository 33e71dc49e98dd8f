"""Offline rendering (SVG, PNG) and the one mimebundle route of the package.

A live Altair chart in a notebook loads Vega from a CDN, which fails offline;
the rich display of a result therefore embeds a static SVG rendered by
``vl_convert`` (no script, no remote resource).  The live panels use
``JupyterChart`` with its offline JavaScript bundle instead
(:mod:`smoothdp_nb.panels.live`).
"""

from __future__ import annotations

import html

import altair as alt

from ..core.rendering import Renderer

__all__ = ["MAX_SUMMARY_ROWS", "bundle", "render_png", "render_svg"]

#: rows of the summary table shown above a chart
MAX_SUMMARY_ROWS = 20


def _vl_version() -> str | None:
    """The Vega-Lite version Altair writes, if vl_convert bundles it (else vl_convert's latest)."""
    import vl_convert as vlc

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
    import vl_convert as vlc

    return vlc.vegalite_to_svg(chart.to_dict(), vl_version=_vl_version(), allowed_base_urls=[])


def render_png(chart: alt.TopLevelMixin, scale: float = 2.0) -> bytes:
    """Render a chart to PNG bytes offline (``scale`` 2: sharp on a projector)."""
    import vl_convert as vlc

    return vlc.vegalite_to_png(chart.to_dict(), vl_version=_vl_version(), scale=scale, allowed_base_urls=[])


def bundle(obj: object, renderer: Renderer, chart: bool = True) -> dict[str, str]:
    """The rich display of a result: ``text/plain`` and HTML (summary table, chart as inline SVG).

    Registered as the route of :mod:`smoothdp_nb.core.rendering`.  A failing
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
            parts.append(f"<div>{render_svg(renderer.chart(obj))}</div>")
        except Exception as exc:
            msg = html.escape(f"{type(exc).__name__}: {exc}".splitlines()[0][:200])
            parts.append(f"<div><small>(chart not rendered: {msg})</small></div>")
    parts.append("</div>")
    return {"text/plain": text, "text/html": "".join(parts)}
