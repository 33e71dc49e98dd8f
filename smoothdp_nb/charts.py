"""Altair charts for smoothdp_nb results, and their offline notebook display.

Two layers:

* pure builders -- ``delta_vs_eps_chart``, ``delta_vs_n_chart``,
  ``profile_chart`` -- take tidy DataFrames and return Altair charts.  They do
  no numerical work beyond reducing the data to what is drawn;
* adapters -- ``smoothed_chart``, ``curve_chart`` and ``mimebundle`` -- turn
  the core's result objects into those frames and into a rich display.

Deltas span hundreds of orders of magnitude and may underflow float64, so the
charts plot ``log10 delta`` on a linear axis and label the ticks as powers of
ten ("1e-32"); tooltips show the value as text computed from the logarithm.

Altair refuses to embed more than 5000 rows; every builder reduces its input
below :data:`MAX_ROWS` first (the worst composition per epsilon, then an evenly
thinned grid).

The notebook display embeds a static SVG rendered by ``vl_convert``: a live
Altair chart would load Vega from a CDN, which fails offline.
"""

from __future__ import annotations

import html
import math
from typing import Any, Sequence

import altair as alt
import numpy as np
import pandas as pd

from .core._format import format_log10

__all__ = [
    "MAX_ROWS",
    "delta_vs_eps_chart",
    "delta_vs_n_chart",
    "profile_chart",
    "smoothed_chart",
    "curve_chart",
    "mimebundle",
    "render_svg",
    "format_log10",
]

#: Rows per chart dataset; Altair's default transformer raises above 5000.
MAX_ROWS = 4000

_LN10 = math.log(10.0)
_WIDTH = 420
_HEIGHT = 260
_Y_TITLE = "δ (log scale)"
# Ticks sit at log10 values: integers print as "1e-32", others keep a mantissa.
_EXP_LABEL = (
    "datum.value == floor(datum.value) ? '1e' + datum.value : "
    "format(pow(10, datum.value - floor(datum.value)), '.2~f') + 'e' + floor(datum.value)"
)


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------


def _with_log10(frame: pd.DataFrame) -> pd.DataFrame:
    """Return a copy with a ``log10_delta`` column, from whichever form is present."""
    df = frame.copy()
    if "log10_delta" not in df:
        if "log_delta" in df:
            df["log10_delta"] = df["log_delta"] / _LN10
        elif "delta" in df:
            with np.errstate(divide="ignore"):
                df["log10_delta"] = np.log10(df["delta"].astype(float))
        else:
            raise ValueError("frame needs a 'log10_delta', 'log_delta' or 'delta' column")
    df["log10_delta"] = df["log10_delta"].astype(float)
    if "epsilon" in df and pd.api.types.is_float_dtype(df["epsilon"]):
        # grid arithmetic leaves 1.7999999999999998 in legends and tooltips
        df["epsilon"] = df["epsilon"].round(12)
    return df


def _log10_positive(values: pd.Series) -> pd.Series:
    with np.errstate(divide="ignore"):
        return np.log10(values.astype(float).clip(lower=0.0))


def _max_per(df: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """Keep the row with the largest delta for each key (the worst composition)."""
    if not df.duplicated(list(keys)).any():
        return df
    idx = df.groupby(list(keys), sort=True)["log10_delta"].idxmax()
    return df.loc[idx.dropna().astype(int)].reset_index(drop=True)


def _thin(df: pd.DataFrame, column: str, limit: int = MAX_ROWS) -> pd.DataFrame:
    """Keep evenly spaced values of ``column`` (always both ends) until rows <= limit."""
    if len(df) <= limit:
        return df
    values = np.sort(df[column].unique())
    per_value = max(1, math.ceil(len(df) / len(values)))
    keep_n = max(2, limit // per_value)
    if keep_n >= len(values):
        return df.iloc[:limit]
    keep = values[np.unique(np.linspace(0, len(values) - 1, keep_n).round().astype(int))]
    out = df[df[column].isin(keep)]
    # Still too many rows (very uneven groups): truncate, evenly.
    if len(out) > limit:
        out = out.iloc[np.linspace(0, len(out) - 1, limit).round().astype(int)]
    return out.reset_index(drop=True)


def _finite(df: pd.DataFrame, column: str = "log10_delta") -> pd.DataFrame:
    # delta == 0 has no place on a log axis, and infinities do not serialise to JSON.
    return df[np.isfinite(df[column])].reset_index(drop=True)


def _y(field: str = "log10_delta", **kw: Any) -> alt.Y:
    return alt.Y(
        f"{field}:Q",
        title=_Y_TITLE,
        scale=alt.Scale(zero=False),
        axis=alt.Axis(labelExpr=_EXP_LABEL),
        **kw,
    )


def _dp_rule(dp_delta: float | None) -> list[alt.Chart]:
    """Dashed horizontal rule (and label) at the worst-case DP delta."""
    if dp_delta is None or not np.isfinite(dp_delta) or dp_delta <= 0:
        return []
    ref = pd.DataFrame(
        {
            "log10_delta": [math.log10(dp_delta)],
            "delta_text": [format_log10(math.log10(dp_delta))],
            "label": ["DP δ"],
        }
    )
    base = alt.Chart(ref)
    rule = base.mark_rule(color="#888", strokeDash=[2, 2]).encode(
        y=_y(),
        tooltip=[alt.Tooltip("label:N", title=""), alt.Tooltip("delta_text:N", title="δ")],
    )
    text = base.mark_text(align="left", baseline="bottom", dx=3, color="#666").encode(
        y=_y(), x=alt.value(0), text="label:N"
    )
    return [rule, text]


def _first_dp_delta(df: pd.DataFrame) -> float | None:
    if "dp_delta" not in df or df["dp_delta"].isna().all():
        return None
    return float(df["dp_delta"].dropna().max())


# --------------------------------------------------------------------------
# pure builders
# --------------------------------------------------------------------------


def delta_vs_eps_chart(frame: pd.DataFrame, title: str | None = None) -> alt.LayerChart:
    """Smoothed delta against epsilon, with the DP delta and a Monte Carlo band.

    Parameters
    ----------
    frame : pandas.DataFrame
        ``epsilon`` and one of ``log10_delta``/``log_delta``/``delta``; optional
        ``dp_delta`` (drawn as a reference rule) and ``ci_low``/``ci_high``
        (drawn as a band).  Several rows per epsilon (one per composition) are
        reduced to the largest delta, as in Definition 3.
    title : str, optional

    Returns
    -------
    altair.LayerChart
    """
    df = _max_per(_with_log10(frame), ["epsilon"])
    df = _thin(_finite(df), "epsilon")
    df["delta_text"] = [format_log10(v) for v in df["log10_delta"]]
    tips = [alt.Tooltip("epsilon:Q", title="ε"), alt.Tooltip("delta_text:N", title="δ")]
    layers: list[alt.Chart] = []
    if {"ci_low", "ci_high"} <= set(df.columns):
        band = df.assign(ci_lo10=_log10_positive(df["ci_low"]), ci_hi10=_log10_positive(df["ci_high"]))
        band = band[np.isfinite(band["ci_hi10"])]
    else:
        band = df.iloc[:0]
    if len(band):
        # A lower bound of 0 cannot be drawn on a log axis: open the band to the plot floor.
        finite_lo = band["ci_lo10"].replace(-np.inf, np.nan)
        floor = float(np.nanmin(np.r_[band["log10_delta"], finite_lo])) - 1.0
        band["ci_lo10"] = band["ci_lo10"].replace(-np.inf, floor)
        band["ci_text"] = [
            f"[{lo:.4e}, {hi:.4e}]" for lo, hi in zip(band["ci_low"], band["ci_high"])
        ]
        layers.append(
            alt.Chart(band)
            .mark_area(opacity=0.25, color="#4c78a8")
            .encode(
                x=alt.X("epsilon:Q", title="ε"),
                y=_y("ci_lo10"),
                y2="ci_hi10:Q",
                tooltip=tips[:1] + [alt.Tooltip("ci_text:N", title="interval")],
            )
        )
    extra = [c for c in df.columns if c.startswith("n_")]
    line = (
        alt.Chart(df)
        .mark_line(point=True, color="#4c78a8")
        .encode(
            x=alt.X("epsilon:Q", title="ε"),
            y=_y(),
            tooltip=tips + [alt.Tooltip(f"{c}:Q", title=c[2:]) for c in extra],
        )
    )
    layers.append(line)
    layers += _dp_rule(_first_dp_delta(df))
    chart = alt.layer(*layers).properties(width=_WIDTH, height=_HEIGHT)
    return chart.properties(title=title) if title else chart


def delta_vs_n_chart(
    table: pd.DataFrame, fits: pd.DataFrame | None = None, title: str | None = None
) -> alt.LayerChart:
    """Smoothed delta against the database size n, one colour per epsilon.

    Parameters
    ----------
    table : pandas.DataFrame
        ``n``, ``epsilon`` and one of ``log10_delta``/``log_delta``/``delta``;
        optional ``dp_delta`` (reference rule).
    fits : pandas.DataFrame, optional
        ``epsilon``, ``slope`` and ``intercept`` of ``log delta = intercept +
        slope * n`` (natural log, as :func:`smoothdp_nb.fit_exponential`);
        drawn as dashed lines over the range of n.
    title : str, optional

    Returns
    -------
    altair.LayerChart
    """
    df = _max_per(_with_log10(table), ["n", "epsilon"])
    df = _thin(_finite(df), "n")
    df["delta_text"] = [format_log10(v) for v in df["log10_delta"]]
    color = alt.Color("epsilon:O", title="ε")
    x = alt.X("n:Q", title="n (records)")
    layers = [
        alt.Chart(df)
        .mark_line(point=True)
        .encode(
            x=x,
            y=_y(),
            color=color,
            tooltip=[
                alt.Tooltip("n:Q", title="n"),
                alt.Tooltip("epsilon:Q", title="ε"),
                alt.Tooltip("delta_text:N", title="δ"),
            ],
        )
    ]
    if fits is not None and len(fits) and len(df):
        lo, hi = float(df["n"].min()), float(df["n"].max())
        rows = []
        for f in fits.itertuples(index=False):
            if not (np.isfinite(f.slope) and np.isfinite(f.intercept)):
                continue
            for n in (lo, hi):  # a straight line in log space: its ends suffice
                rows.append(
                    {
                        "n": n,
                        "epsilon": f.epsilon,
                        "log10_delta": (f.intercept + f.slope * n) / _LN10,
                        "fit": f"δ ≈ exp({f.intercept:.4g} {f.slope:+.4g}·n)",
                    }
                )
        if rows:
            layers.append(
                alt.Chart(pd.DataFrame(rows[:MAX_ROWS]))
                .mark_line(strokeDash=[6, 4], opacity=0.8)
                .encode(
                    x=x,
                    y=_y(),
                    color=color,
                    detail="epsilon:O",
                    tooltip=[alt.Tooltip("epsilon:Q", title="ε"), alt.Tooltip("fit:N", title="fit")],
                )
            )
    layers += _dp_rule(_first_dp_delta(df))
    chart = alt.layer(*layers).properties(width=_WIDTH, height=_HEIGHT)
    return chart.properties(title=title) if title else chart


def profile_chart(
    frame: pd.DataFrame, x: str = "year", color: str | None = None, title: str | None = None
) -> alt.LayerChart:
    """Privacy profile (log10 delta) per database, e.g. per election year.

    Parameters
    ----------
    frame : pandas.DataFrame
        Tidy: a database column (``label`` or ``year``), ``epsilon`` and one of
        ``log10_delta``/``log_delta``/``delta``; optional ``dp_delta``.
    x : str
        Column on the horizontal axis: the database column (default
        ``"year"``), or ``"epsilon"`` for one curve per database.
    color : str, optional
        Column for the colour; defaults to ``epsilon`` when ``x`` is the database
        column and to the database column when ``x == "epsilon"``.
    title : str, optional

    Returns
    -------
    altair.LayerChart
    """
    df = _with_log10(frame)
    if x not in df:
        raise ValueError(f"profile_chart: no column {x!r} (columns: {', '.join(map(str, df.columns))})")
    if color is None:
        if x == "epsilon":
            color = next((c for c in ("label", "year", "database") if c in df), None)
        else:
            color = "epsilon" if "epsilon" in df else None
    keys = [c for c in (x, color) if c is not None]
    df = _max_per(df, keys)
    # Thin along the colour (e.g. a fine epsilon grid) before the x axis, so that every database stays.
    df = _thin(_finite(df), color if color is not None and color != x else x)
    df = _thin(df, x)
    df["delta_text"] = [format_log10(v) for v in df["log10_delta"]]
    numeric_x = pd.api.types.is_numeric_dtype(df[x])
    xtype = "Q" if x == "epsilon" else ("O" if numeric_x else "N")
    enc: dict[str, Any] = {
        "x": alt.X(
            f"{x}:{xtype}",
            title="ε" if x == "epsilon" else x,
            axis=alt.Axis(labelAngle=0) if xtype == "O" else alt.Undefined,
        ),
        "y": _y(),
        "tooltip": [alt.Tooltip(f"{c}:N" if c != "epsilon" else "epsilon:Q") for c in keys]
        + [alt.Tooltip("delta_text:N", title="δ")],
    }
    if color is not None:
        ctype = "O" if pd.api.types.is_numeric_dtype(df[color]) else "N"
        enc["color"] = alt.Color(f"{color}:{ctype}", title="ε" if color == "epsilon" else color)
    layers = [alt.Chart(df).mark_line(point=True).encode(**enc)]
    layers += _dp_rule(_first_dp_delta(df))
    chart = alt.layer(*layers).properties(width=_WIDTH, height=_HEIGHT)
    return chart.properties(title=title) if title else chart


# --------------------------------------------------------------------------
# adapters for the core's result objects
# --------------------------------------------------------------------------


def smoothed_chart(result: Any) -> alt.LayerChart:
    """Chart of a :class:`~smoothdp_nb.SmoothedResult`: delta against epsilon.

    Parameters
    ----------
    result : SmoothedResult

    Returns
    -------
    altair.LayerChart
    """
    title = f"Smoothed δ, n = {result.n} ({result.method})"
    return delta_vs_eps_chart(result.to_frame(), title=title)


def curve_chart(curve: Any) -> alt.LayerChart:
    """Chart of a :class:`~smoothdp_nb.SmoothedCurve`: delta against n with fits.

    Parameters
    ----------
    curve : SmoothedCurve

    Returns
    -------
    altair.LayerChart
    """
    return delta_vs_n_chart(curve.table, curve.fits, title="Smoothed δ vs n (dashed: exponential fit)")


def _summary_frame(obj: Any) -> pd.DataFrame:
    """A few rows that say what the object is: epsilon, delta, DP delta (and fit)."""
    fits = getattr(obj, "fits", None)
    if isinstance(fits, pd.DataFrame):
        tab = _with_log10(obj.table)
        last = tab[tab["n"] == tab["n"].max()].groupby("epsilon", sort=True)["log10_delta"].max()
        out = pd.DataFrame({"ε": fits["epsilon"].to_numpy()})
        out[f"δ at n = {int(tab['n'].max())}"] = [format_log10(last.get(e, -np.inf)) for e in fits["epsilon"]]
        out["slope (log δ per record)"] = [f"{v:.4g}" for v in fits["slope"]]
        out["R²"] = [f"{v:.4f}" for v in fits["r2"]]
        if "dp_delta" in tab:
            out["DP δ"] = f"{_first_dp_delta(tab):.4g}"
        return out
    df = _with_log10(obj.to_frame())
    out = pd.DataFrame({"ε": [f"{v:g}" for v in df["epsilon"]]} if "epsilon" in df else {})
    for col in ("n", "label", "year"):
        if col in df:
            out.insert(0, col, df[col].to_numpy())
    out["δ"] = [format_log10(v) for v in df["log10_delta"]]
    if "ci_low" in df and "ci_high" in df:
        out["interval"] = [f"[{a:.3e}, {b:.3e}]" for a, b in zip(df["ci_low"], df["ci_high"])]
    if "dp_delta" in df:
        out["DP δ"] = [f"{v:.4g}" for v in df["dp_delta"]]
    return out


def _chart_for(obj: Any) -> alt.TopLevelMixin:
    if hasattr(obj, "chart"):
        return obj.chart()
    raise TypeError(f"no chart for {type(obj).__name__}")


def _vl_version() -> str | None:
    """The Vega-Lite version Altair writes, if vl_convert bundles it (else its latest)."""
    import vl_convert as vlc

    want = ".".join(alt.SCHEMA_VERSION.lstrip("v").split(".")[:2])
    return want if want in vlc.get_vegalite_versions() else None


def render_svg(chart: alt.TopLevelMixin) -> str:
    """Render a chart to an SVG string offline with ``vl_convert``.

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


_MAX_SUMMARY_ROWS = 20


def mimebundle(obj: Any) -> dict[str, str]:
    """Rich display for a result object: text plus an HTML summary and static chart.

    Parameters
    ----------
    obj : result object
        Anything with ``__str__`` and ``chart()``; ``to_frame()`` (or a
        ``fits`` frame) supplies the summary table.

    Returns
    -------
    dict
        ``{"text/plain": ..., "text/html": ...}``.  The HTML embeds the chart
        as inline SVG and references no remote script, so it works offline;
        if rendering fails the HTML keeps the table and a one-line note.
    """
    text = str(obj)
    head = html.escape(text.splitlines()[0] if text else type(obj).__name__)
    parts = [f'<div class="smoothdp-result"><div style="font-weight:bold">{head}</div>']
    try:
        summary = _summary_frame(obj)
        shown = summary.head(_MAX_SUMMARY_ROWS)
        parts.append(shown.to_html(index=False, border=0, escape=True))
        if len(summary) > len(shown):
            more = len(summary) - len(shown)
            parts.append(f"<div><small>… {more} more rows (see .to_frame())</small></div>")
    except Exception as exc:  # a summary is a convenience; never break the display
        note = html.escape(type(exc).__name__)
        parts.append(f"<pre>{html.escape(text)}</pre><!-- summary failed: {note} -->")
    try:
        svg = render_svg(_chart_for(obj))
        parts.append(f"<div>{svg}</div>")
    except Exception as exc:
        msg = html.escape(f"{type(exc).__name__}: {exc}".splitlines()[0][:200])
        parts.append(f"<div><small>(chart not rendered: {msg})</small></div>")
    parts.append("</div>")
    return {"text/plain": text, "text/html": "".join(parts)}
