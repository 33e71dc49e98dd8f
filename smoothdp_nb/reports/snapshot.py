"""Kernel side of the reports' live-panel snapshots.

The tutorial runner calls :func:`widget_snapshot` in the notebook's kernel
(as a user expression, right after the cell that displayed a widget) with the
``model_id`` of the displayed widget.  The widget tree is walked for an
``altair.JupyterChart``; its current chart is rendered to SVG by
``vl_convert`` (offline) and returned with the panel's title and control
values, so that the static report can show what the panel showed when the
cell ran.
"""

from __future__ import annotations

import html
import re
from typing import Any

__all__ = ["widget_snapshot"]

_TAGS = re.compile(r"<[^>]*>")


class _JSONBundle:
    """Displays as ``application/json`` (how a user expression returns structured data)."""

    def __init__(self, payload: dict[str, Any]) -> None:
        self.payload = payload

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return {"application/json": self.payload}


def _walk(widget: Any) -> list[Any]:
    seen, order, todo = set(), [], [widget]
    while todo:
        w = todo.pop(0)
        if id(w) in seen:
            continue
        seen.add(id(w))
        order.append(w)
        todo.extend(getattr(w, "children", ()) or ())
    return order


def _control_text(w: Any) -> str | None:
    """ "description = value" for a control with a description, else None."""
    desc = getattr(w, "description", "") or ""
    if not desc or not hasattr(w, "value") or type(w).__name__ in ("Button", "HTML", "Label"):
        return None
    value = w.value
    if isinstance(value, float):
        value = f"{value:.6g}"
    return f"{desc.rstrip(': ')} = {value}"


def widget_snapshot(model_id: str) -> _JSONBundle:
    """Snapshot of the displayed widget ``model_id``: chart SVG, title, control values.

    Returns
    -------
    _JSONBundle
        ``{"svg": str | None, "title": str | None, "controls": [str, ...]}``
        as ``application/json``; every field empty when the widget is unknown
        or holds no chart.
    """
    # deferred: runs in every tutorial kernel; loads the notebook stack only once a panel is captured
    import altair as alt
    from ipywidgets.widgets import widget as _widget

    registry = getattr(_widget, "_instances", None) or getattr(_widget.Widget, "widgets", {})
    root = registry.get(model_id)
    payload: dict[str, Any] = {"svg": None, "title": None, "controls": []}
    if root is None:
        return _JSONBundle(payload)
    for w in _walk(root):
        value = getattr(w, "value", None)
        if isinstance(w, alt.JupyterChart):
            # a panel's chart: the data sent in place since it was drawn, not the first chart
            chart = w.current_chart() if hasattr(w, "current_chart") else w.chart
            if payload["svg"] is None and isinstance(chart, alt.TopLevelMixin):
                from smoothdp_nb.display.render import render_svg  # deferred: vl-convert, only for a chart

                payload["svg"] = render_svg(chart)
        elif type(w).__name__ == "HTML" and payload["title"] is None and isinstance(value, str) and value:
            # the panel's first HTML line is its title (markup stripped; the report escapes it)
            payload["title"] = html.unescape(_TAGS.sub("", value)).strip() or None
        else:
            text = _control_text(w)
            if text is not None:
                payload["controls"].append(text)
    return _JSONBundle(payload)
