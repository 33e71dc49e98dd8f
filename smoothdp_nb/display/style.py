"""One look for every chart: sizes, fonts, palette, log axes, titles.

Conventions (the same in every builder, so that a lecturer can project any
figure of the package):

* **Log axes.**  Quantities spanning many orders of magnitude (delta, noise
  std, gamma) are plotted as ``log10(value)`` on a *linear* scale -- delta may
  lie far below the float64 range, where a Vega log scale cannot go -- with
  ticks only at integer exponents (``tickMinStep=1``) labelled ``10⁻³²``.
  An invisible layer (:func:`decade_extent`) stretches the domain to whole
  decades, so that a range narrower than one decade still shows two labelled
  ticks.  None of this depends on the data in the chart's *structure*: live
  panels can replace the data in place.
* **Palette.**  Okabe & Ito's colour-blind-safe qualitative scheme (without
  its yellow, which vanishes on a projector), in a fixed order.
* **Line styles.**  Solid: exact values; dashed: references (DP delta, fits,
  bounds).  Legends draw the style they refer to.
* **Titles.**  Axis titles name the quantity and its unit once; chart titles
  start with the paper's figure number when they reproduce one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

import altair as alt
import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

__all__ = [
    "DASHES",
    "EXPONENT_LABEL",
    "HEIGHT",
    "INK",
    "MAX_ROWS",
    "NUMBER_FORMAT",
    "DELTA_FORMAT",
    "PALETTE",
    "PROFILE",
    "SOFT",
    "WIDTH",
    "color",
    "decade_extent",
    "extent_frame",
    "extent_layer",
    "extent_mark",
    "field_of",
    "finish",
    "format_delta",
    "legend",
    "wrap_title",
    "log10_field",
    "log_axis",
    "records",
    "title",
]

#: the privacy profile's symbol in chart text: the paper's δ_ε(x) (Definition 2) has no Unicode
#: subscript ε, so charts write the ε beside it (never TeX source such as "δ_ε(x)")
PROFILE = "δ(x) at ε"

#: plot area in pixels (readable on a projector, fits a notebook column)
WIDTH = 460
HEIGHT = 280

#: Okabe & Ito (2008) without yellow: blue, orange, green, vermillion, purple, sky blue, black
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000"]

#: text, axes and key symbols ("ink"), and reference rules ("soft"): the panels' front end draws
#: these two colours in the notebook theme's text colours instead (dark themes included)
INK = "#333333"
SOFT = "#555555"

#: tick labels of plain quantities (counts, incomes, shares): decimal notation with thousands
#: separators, "60" and "100,000" -- never "6e+1" (Vega fills in the precision of a "g" format from
#: the tick step, one significant digit for ticks 10, 20, ..., 60)
NUMBER_FORMAT = ",~r"

#: d3 format of every δ readout (sliders): always scientific with 3 significant digits, "1.00e-6",
#: "3.16e-7" -- never "0.00000100" beside "1.00e-7" (ipywidgets refuses d3's "~" flag);
#: :func:`format_delta` writes the same in Python
DELTA_FORMAT = ".2e"

#: stroke dash arrays by role
DASHES = {"solid": [1, 0], "dashed": [6, 4], "dotted": [2, 3]}

#: rows per chart dataset; Altair's default data transformer refuses more than 5000
MAX_ROWS = 4000


_SUPERSCRIPT = {"-": "⁻", "−": "⁻", **{str(d): "⁰¹²³⁴⁵⁶⁷⁸⁹"[d] for d in range(10)}}


def _superscript_expr(value: str) -> str:
    """Vega expression writing the integer ``value`` in superscript digits."""
    expr = f"'' + {value}"
    for plain, sup in _SUPERSCRIPT.items():
        expr = f"replace({expr}, regexp('{plain}', 'g'), '{sup}')"
    return expr


#: axis labels of a log10 value: ``10⁻³²`` at integers; other ticks (Vega adds half decades on
#: one-decade axes) stay unlabelled, so that no label repeats or carries a mantissa
EXPONENT_LABEL = f"datum.value == floor(datum.value) ? '10' + {_superscript_expr('datum.value')} : ''"

#: a font with the superscript digits (the generic sans-serif of some systems lacks ⁴-⁹ and ⁻)
LABEL_FONT = "DejaVu Sans, Verdana, sans-serif"


#: frames up to this many rows are inlined as records (see :func:`data`)
RECORDS_UP_TO = 60


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """The rows of ``frame`` as JSON-ready records, as Altair embeds a DataFrame.

    Python ``int``/``float``/``bool``/``str`` values; NaN and infinities
    become ``None`` (JSON has neither), like Altair's own sanitising, so a
    live panel that sends these rows shows what the builder's chart shows.
    Column by column (no per-cell conversion of numeric columns).
    """
    names = [str(c) for c in frame.columns]
    columns: list[list[Any]] = []
    for name in frame.columns:
        col = frame[name]
        if pd.api.types.is_float_dtype(col.dtype):
            arr = col.to_numpy(dtype=float)
            values = arr.tolist()
            bad = ~np.isfinite(arr)
            if bad.any():
                for i in np.flatnonzero(bad).tolist():
                    values[i] = None
        elif pd.api.types.is_integer_dtype(col.dtype) or pd.api.types.is_bool_dtype(col.dtype):
            values = col.tolist()
        else:  # objects (text): missing values become null, numpy scalars Python ones
            values = col.tolist()
            if pd.api.types.infer_dtype(col, skipna=True) not in ("string", "empty"):
                values = [v.item() if isinstance(v, np.generic) else v for v in values]
            # (not ``where(notna, None)``: pandas 3 puts NaN back into object columns)
            for i in np.flatnonzero(col.isna().to_numpy()).tolist():
                values[i] = None
        columns.append(values)
    return [dict(zip(names, row, strict=True)) for row in zip(*columns, strict=True)] if names else [{}] * len(frame)


def data(frame: pd.DataFrame) -> alt.Data | pd.DataFrame:
    """A layer's data: small frames as JSON-ready records, large ones as the frame itself.

    Altair sanitises every DataFrame (about 15 ms each, whatever its size) but
    deep-copies and schema-checks inline records (time growing with the rows);
    each layer takes the cheaper route.  The rows are the same either way
    (:func:`records`).
    """
    if len(frame) > RECORDS_UP_TO:
        return frame
    return alt.Data(values=records(frame))


def log_axis(title: str, **kw: Any) -> alt.Axis:
    """Axis of a log10 field: ticks at integer exponents only, labelled ``10^k``."""
    return alt.Axis(
        title=title,
        tickMinStep=1,
        labelExpr=EXPONENT_LABEL,
        tickCount=6,
        labelOverlap=True,
        labelFont=LABEL_FONT,
        labelFontSize=12,
        titleFontSize=13,
        **kw,
    )


def axis(title: str, **kw: Any) -> alt.Axis:
    """A linear axis with the package's fonts, at most about 8 ticks and overlap removal."""
    kw.setdefault("tickCount", 8)
    return alt.Axis(title=title, labelOverlap=True, labelFontSize=12, titleFontSize=13, **kw)


def log10_field(values: ArrayLike) -> np.ndarray:
    """``log10`` of non-negative values (``-inf`` for 0), as float64."""
    with np.errstate(divide="ignore"):
        return np.log10(np.clip(np.asarray(values, dtype=float), 0.0, None))


def decade_extent(log10_values: ArrayLike, pad_below: float = 0.0) -> tuple[float, float] | None:
    """The whole decades around the finite values (at least one decade wide, extended downwards), or None."""
    v = np.asarray(log10_values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return None
    lo, hi = math.floor(float(v.min()) - pad_below), math.ceil(float(v.max()))
    if hi - lo < 1:  # one decade below the values: δ and probabilities end at 10⁰, nothing lies above
        lo = hi - 1
    return float(lo), float(hi)


def extent_frame(field: str, log10_values: ArrayLike, *, pad_below: float = 0.0) -> pd.DataFrame:
    """The rows of :func:`extent_layer`: the two whole decades around the values (none without values)."""
    ext = decade_extent(log10_values, pad_below)
    return pd.DataFrame({field: [] if ext is None else list(ext)}, dtype=float)


def extent_mark(encoding: alt.X | alt.Y, frame: pd.DataFrame) -> alt.Chart:
    """The invisible layer drawing the rows of :func:`extent_frame` on the axis of ``encoding``."""
    channel = "y" if isinstance(encoding, alt.Y) else "x"
    return alt.Chart(data(frame)).mark_point(opacity=0, size=0).encode(**{channel: encoding})


def field_of(encoding: alt.X | alt.Y) -> str:
    """The field name of a position encoding (``"log10_delta:Q"`` -> ``"log10_delta"``)."""
    return str(encoding.shorthand).split(":")[0]


def extent_layer(encoding: alt.X | alt.Y, log10_values: ArrayLike, *, pad_below: float = 0.0) -> alt.Chart:
    """An invisible layer whose two points stretch a log10 axis to whole decades.

    ``encoding`` is the axis' own position encoding (same field, same axis),
    so the layer adds nothing to the axis title.  Always present (with zero
    rows when there is nothing to stretch): the chart's structure does not
    depend on the data.
    """
    return extent_mark(encoding, extent_frame(field_of(encoding), log10_values, pad_below=pad_below))


def color(
    field: str,
    title: str,
    kind: str = "N",
    *,
    domain: Sequence[Any] | None = None,
    range_: Sequence[str] | None = None,
    **kw: Any,
) -> alt.Color:
    """Colour encoding with the palette (or ``range_``); a legend with line symbols."""
    colours = list(range_) if range_ is not None else PALETTE
    if domain is None:
        scale = alt.Scale(range=colours)
    else:
        scale = alt.Scale(domain=list(domain), range=[colours[i % len(colours)] for i in range(len(domain))])
    return alt.Color(f"{field}:{kind}", scale=scale, legend=_line_legend(title, symbolStrokeWidth=3), **kw)


def format_delta(value: float) -> str:
    """A δ for reading, as the sliders' readouts write it (:data:`DELTA_FORMAT`): ``1.00e-6``, ``3.16e-7``.

    >>> format_delta(1e-6), format_delta(3.1623e-7), format_delta(0.0)
    ('1.00e-6', '3.16e-7', '0')
    """
    v = float(value)
    if v == 0 or not math.isfinite(v):
        return f"{v:g}"
    mantissa, exponent = f"{v:.2e}".split("e")
    return f"{mantissa}e{int(exponent)}"  # d3 writes e-6 where Python writes e-06


def dash(field: str, title: str, domain: Sequence[str], styles: Sequence[str]) -> alt.StrokeDash:
    """Stroke-dash encoding whose legend draws each style (solid, dashed, dotted)."""
    return alt.StrokeDash(
        f"{field}:N",
        scale=alt.Scale(domain=list(domain), range=[DASHES[s] for s in styles]),
        # above the plot, as a key to the line styles: two legends side by side below it made the chart
        # wider than the plot again
        legend=_line_legend(title, symbolStrokeWidth=2, symbolSize=400, symbolStrokeColor=INK, orient="top"),
    )


#: legends sit below the plot, their entries in rows of this many: a chart is then about as wide as
#: its plot (a legend at the right made it 740-790 px, wider than a notebook's output area on a
#: projector), and a long key wraps onto a second row instead of being cut
LEGEND_COLUMNS = 3


def legend(title: str | None, *, orient: Literal["bottom", "top"] = "bottom", **kw: Any) -> alt.Legend:
    """A legend below the plot (or above: the line styles' key) in the house font sizes, wrapping
    after :data:`LEGEND_COLUMNS` entries."""
    kw.setdefault("columns", LEGEND_COLUMNS)
    kw.setdefault("labelLimit", 220)
    return alt.Legend(
        title=title or None,
        orient=orient,
        direction="horizontal",
        labelFontSize=12,
        titleFontSize=12,
        titleOrient="left",
        **kw,
    )


def _line_legend(title: str, *, orient: Literal["bottom", "top"] = "bottom", **symbol: Any) -> alt.Legend:
    """A legend whose symbols are strokes (so a line's colour or dash shows), in the house font sizes."""
    return legend(title, orient=orient, symbolType="stroke", symbolOpacity=1, **symbol)


def dash_key(encoding: alt.StrokeDash) -> alt.Chart:
    """An empty layer that carries the line-style legend, drawn in dark grey.

    Vega-Lite draws the symbols of a strokeDash legend transparent when the
    same layer also encodes colour by a field; layers with a colour field
    therefore set their dash as a mark property, and this layer (no colour
    field) owns the legend.
    """
    return alt.Chart(alt.Data(values=[])).mark_rule(color=INK).encode(strokeDash=encoding)


#: characters per title line (15 px bold: about 8.5 px a character, over the plot)
TITLE_CHARS = 58


def wrap_title(text: str, width: int = TITLE_CHARS) -> list[str]:
    """``text`` in lines of at most ``width`` characters, broken between words.

    A title is never cut with "…" (where a chart's key to its marks often is):
    it takes a second line instead.

    >>> wrap_title("Figure 4: CD setting, 0.20% of votes lost (dashed: fit; rule: DP δ)", 40)
    ['Figure 4: CD setting, 0.20% of votes', 'lost (dashed: fit; rule: DP δ)']
    """
    lines: list[str] = []
    for word in text.split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines or [""]


def title(text: str, subtitle: str | Sequence[str] | None = None) -> alt.TitleParams:
    """Chart title (the paper's figure number first, when there is one), wrapped, never truncated."""
    subs = [subtitle] if isinstance(subtitle, str) else (list(subtitle) if subtitle else [])
    sub = [line for s in subs for line in wrap_title(s, TITLE_CHARS + 14)] or alt.Undefined
    lines = wrap_title(text)
    return alt.TitleParams(
        lines if len(lines) > 1 else lines[0],
        subtitle=sub,
        fontSize=15,
        subtitleFontSize=12,
        anchor="start",
        subtitleColor=INK,
        limit=0,
    )


def finish(
    chart: Any, heading: str | alt.TitleParams | None = None, *, width: int = WIDTH, height: int = HEIGHT
) -> Any:
    """Size the chart and set its title (no ``configure``: charts stay composable).

    Attributes are set on a shallow copy: ``properties()`` would validate them
    against the schema on every call, a third of a live panel's update time.
    """
    chart = chart.copy(deep=False)
    chart.width, chart.height = width, height
    if heading is not None:
        chart.title = heading if isinstance(heading, alt.TitleParams) else title(heading)
    return chart
