"""The report of one spec run (``python -m smoothdp_nb run spec.toml --out/--json``).

:func:`html_report` is a self-contained HTML page (written by
:func:`smoothdp_nb.reports.page.document`: no script, no remote resource, so it
can be archived as a CI artefact or mailed); :func:`json_report` is the
result's ``to_dict()`` with the spec, for scripts.  Both are built from the
parsed spec (:attr:`Spec.text`, its private data replaced by a placeholder),
never from the spec's source text.
"""

from __future__ import annotations

import datetime as _dt
import html
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from smoothdp_nb import __version__
from smoothdp_nb.reports.page import document

if TYPE_CHECKING:
    from smoothdp_nb.spec import Spec

__all__ = ["ReportableResult", "html_report", "json_report", "jsonable"]


class ReportableResult(Protocol):
    """What a report needs of a result: its dict form, its Jupyter display bundle and its text."""

    def to_dict(self) -> Mapping[str, object]:
        """The result as plain values (numbers, lists, strings)."""
        ...

    def _repr_mimebundle_(self) -> Mapping[str, object]:
        """Jupyter's display bundle; ``text/html`` (the summary and the chart as inline SVG) is shown."""
        ...


def jsonable(obj: Any) -> Any:
    """``obj`` with numpy scalars and arrays, non-finite floats (-> None) and dates made JSON values."""
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return jsonable(obj.tolist())
    if isinstance(obj, (np.bool_, bool)):
        return bool(obj)
    if isinstance(obj, (np.integer, int)):
        return int(obj)
    if isinstance(obj, (np.floating, float)):
        v = float(obj)
        return v if math.isfinite(v) else None
    if obj is None or isinstance(obj, str):
        return obj
    if isinstance(obj, (_dt.date, _dt.time)):
        return obj.isoformat()
    return str(obj)


def json_report(result: ReportableResult, spec: Spec) -> dict[str, Any]:
    """The JSON document: title, computation, spec and ``result.to_dict()``.

    Parameters
    ----------
    result : ReportableResult
        Anything with ``to_dict()`` and ``str``.
    spec : Spec
        The validated spec (its title, computation and parsed keys).

    Returns
    -------
    dict
        Plain JSON values only (see :func:`jsonable`).
    """
    document: dict[str, Any] = jsonable(
        {
            "title": spec.title,
            "compute": spec.compute,
            "spec": spec.raw,
            "result": result.to_dict(),
            "summary": str(result),
            "smoothdp_nb_version": __version__,
        }
    )
    return document


def html_report(result: ReportableResult, spec: Spec, source: str = "") -> str:
    """A self-contained HTML page for one result (no scripts, no remote resources).

    Parameters
    ----------
    result : ReportableResult
        Anything with ``_repr_mimebundle_`` (summary and inline SVG chart) and ``str``.
    spec : Spec
        The validated spec: its title, and its TOML as :attr:`Spec.text` (re-written from the parsed
        spec with the private data replaced by a placeholder; comments and layout of the source are
        not kept, so nothing in them can reach the report).
    source : str
        Where the spec came from (shown in the header).

    Returns
    -------
    str
    """
    bundle = result._repr_mimebundle_()
    shown = str(bundle.get("text/html") or f"<pre>{html.escape(str(result))}</pre>")
    stamp = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    meta = (
        f"computation: {html.escape(spec.compute)}"
        + (f" · spec: {html.escape(source)}" if source else "")
        + f" · smoothdp_nb {html.escape(__version__)} · {stamp}"
    )
    body = "\n".join(
        [
            f"<h1>{html.escape(spec.title)}</h1>",
            f'<p class="meta">{meta}</p>',
            "<h2>Result</h2>",
            shown,
            "<h2>Summary</h2>",
            f"<pre>{html.escape(str(result))}</pre>",
            "<h2>Spec</h2>",
            # rendered from the parsed spec with its private fields replaced (Spec.text), never from the source
            f"<pre>{html.escape(spec.text)}</pre>",
        ]
    )
    return document(spec.title, body)
