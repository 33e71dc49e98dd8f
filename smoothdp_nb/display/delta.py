"""Builders for delta: against epsilon, against n, per database, and bound vs exact.

Every builder takes a tidy frame, reduces it to what is drawn
(:mod:`.frames`) and returns an Altair chart in the package's style
(:mod:`.style`): log10 delta on a linear axis labelled ``10^k``, solid lines
for computed values, dashed for references (DP delta, fits, bounds), with a
legend drawing each line style.  The layers of a chart do not depend on the
data (empty layers stay), so the live panels can update them in place.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, cast

import altair as alt
import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from smoothdp_nb.core.numerics.formatting import format_log10
from smoothdp_nb.display import frames, style
from smoothdp_nb.display.figure import Figure

__all__ = [
    "bound_chart",
    "composition_chart",
    "delta_vs_epsilon_chart",
    "delta_vs_epsilon_figure",
    "delta_vs_n_chart",
    "figure1_chart",
    "informative_band",
    "profile_chart",
    "profile_figure",
]

_LN10 = math.log(10.0)
_DP = "DP δ (worst case, Theorem 1)"

#: a Monte Carlo band is drawn where it is at most this many decades wide
BAND_DECADES = 1.0


def _eps_label(values: Sequence[float]) -> list[str]:
    # legends read "0.04", never "0" or "0.040005334613699206"
    return [f"{float(v):.3g}" for v in values]


def _eps_color(df: pd.DataFrame | None = None) -> alt.Color:
    # ordered by the numeric epsilon, without a data-dependent domain: live panels update in place
    return style.color("epsilon_label", "ε", sort=alt.EncodingSortField("epsilon", op="min"))


def informative_band(
    low: ArrayLike, high: ArrayLike, decades: float = BAND_DECADES
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where a confidence interval says something on a log axis.

    Returns ``(mask, log10 low, log10 high)``; the mask is True where the lower
    end is positive and the interval spans at most ``decades`` decades (a
    99 % band from 1e-22 to 1e-1.5 is not drawn: it says nothing).
    """
    lo10 = style.log10_field(low)
    hi10 = style.log10_field(high)
    mask = np.isfinite(lo10) & np.isfinite(hi10) & (hi10 - lo10 <= decades)
    return mask, lo10, hi10


def _dp_frame(value: float | None) -> pd.DataFrame:
    """The rows of the DP-delta rule and its label (none when there is no DP delta)."""
    rows = (
        []
        if value is None
        else [
            {
                "log10_delta": math.log10(value),
                "series": _DP,
                "delta_text": frames.delta_text([math.log10(value)])[0],
                "label": "DP δ",
            }
        ]
    )
    return pd.DataFrame(rows, columns=["log10_delta", "series", "delta_text", "label"])


def _dp_marks(rule_rows: pd.DataFrame, y: alt.Y, dash: alt.StrokeDash) -> list[alt.Chart]:
    """The dashed DP-delta rule, drawing the rows of :func:`_dp_frame`.

    No text beside it: the dash legend names it, and a label inside the plot
    covered the data near 10⁰.
    """
    rule = (
        alt.Chart(style.data(rule_rows))
        .mark_rule(color=style.SOFT, strokeWidth=1.5)
        .encode(
            y=y, strokeDash=dash, tooltip=[alt.Tooltip("label:N", title=""), alt.Tooltip("delta_text:N", title="δ")]
        )
    )
    return [rule]


def _dp_layers(value: float | None, y: alt.Y, dash: alt.StrokeDash) -> list[alt.Chart]:
    """The dashed DP-delta rule (zero rows when there is none)."""
    return _dp_marks(_dp_frame(value), y, dash)


def _dp_key(label: str, has_dp: bool, style_of_label: str = "solid") -> list[tuple[str, str]]:
    """The dash legend's entries: the curve, and the DP δ only when a DP line is drawn."""
    return [(label, style_of_label)] + ([(_DP, "dashed")] if has_dp else [])


def _dash(entries: list[tuple[str, str]]) -> alt.StrokeDash:
    """A dash encoding listing ``entries`` (name, style) in order."""
    return style.dash("series", "", [e[0] for e in entries], [e[1] for e in entries])


def _note_frame(text: str | None) -> pd.DataFrame:
    """The row of :func:`_note_mark` (none without a text)."""
    return pd.DataFrame({"note": [] if not text else [text]}, dtype=object)


def _note_mark(rows: pd.DataFrame) -> alt.Chart:
    """A line of text inside the plot's top-right corner (zero rows: nothing)."""
    return (
        alt.Chart(style.data(rows))
        .mark_text(align="right", baseline="top", fontSize=12, color="#D55E00", fontWeight="bold")
        .encode(x=alt.XValue(style.WIDTH - 6), y=alt.YValue(8), text=alt.Text("note:N"))
    )


def _note_layer(text: str | None) -> alt.Chart:
    """A line of text inside the plot's top-right corner (zero rows: nothing)."""
    return _note_mark(_note_frame(text))


def delta_vs_epsilon_chart(
    frame: pd.DataFrame,
    title: str | alt.TitleParams | None = None,
    *,
    label: str = "smoothed δ",
    note: str | None = None,
) -> alt.LayerChart:
    """Smoothed delta against epsilon (Figure 2, right), with the DP delta and a Monte Carlo band.

    Parameters
    ----------
    frame : pandas.DataFrame
        ``epsilon`` and one of ``log10_delta``/``log_delta``/``delta``; optional
        ``dp_delta`` (dashed rule) and ``ci_low``/``ci_high`` (a band, drawn
        only where it spans at most one decade).  Several rows per epsilon (one
        per composition) are reduced to the largest delta, as in Definition 3.
    title : str or altair.TitleParams, optional
    label : str
        Legend entry of the line.
    note : str, optional
        Written inside the plot (e.g. "Monte Carlo estimate, 200 trials").

    Returns
    -------
    altair.LayerChart

    References
    ----------
    Liu, Wang, Xia. *Smoothed Differential Privacy* (Definition 3; Figure 2, right).
    """
    return cast(alt.LayerChart, delta_vs_epsilon_figure(frame, title, label=label, note=note).chart())


def delta_vs_epsilon_figure(
    frame: pd.DataFrame,
    title: str | alt.TitleParams | None = None,
    *,
    label: str = "smoothed δ",
    note: str | None = None,
) -> Figure:
    """:func:`delta_vs_epsilon_chart` as a :class:`~smoothdp_nb.display.figure.Figure` (rows and drawing apart)."""
    df = frames.max_per(frames.with_log10(frame), ["epsilon"])
    df = frames.thin(frames.finite(df), "epsilon")
    df["delta_text"] = frames.delta_text(df["log10_delta"], upper=not frames.is_estimate(df))
    df["series"] = label
    if {"ci_low", "ci_high"} <= set(df.columns):
        mask, lo10, hi10 = informative_band(df["ci_low"], df["ci_high"])
        band = pd.DataFrame(
            {
                "epsilon": df["epsilon"][mask],
                "lo": lo10[mask],
                "hi": hi10[mask],
                "interval": [f"[{a:.3e}, {b:.3e}]" for a, b in zip(df["ci_low"][mask], df["ci_high"][mask])],
            }
        )
    else:
        band = pd.DataFrame({"epsilon": [], "lo": [], "hi": [], "interval": []})
    dp = frames.first_dp_delta(df)
    values = np.r_[df["log10_delta"].to_numpy(float), [math.log10(dp)] if dp else []]
    dp_rows = _dp_frame(dp)
    layers = {
        "extent": style.extent_frame("log10_delta", values),
        "band": band,
        "line": df,
        "dp_rule": dp_rows,
        "note": _note_frame(note),
        "points": df,
    }
    extra = tuple(c for c in df.columns if c.startswith("n_"))
    options = {"title": title, "label": label, "extra": extra, "has_dp": dp is not None}
    return Figure(_draw_delta_vs_epsilon, layers, options)


def _draw_delta_vs_epsilon(
    layers: Mapping[str, pd.DataFrame],
    *,
    title: str | alt.TitleParams | None,
    label: str,
    extra: tuple[str, ...],
    has_dp: bool,
) -> alt.LayerChart:
    """The layers of :func:`delta_vs_epsilon_chart` around the rows of its figure."""
    dash = _dash(_dp_key(label, has_dp))
    x = alt.X("epsilon:Q", axis=style.axis("ε", format="~g"), scale=alt.Scale(zero=False, nice=False))
    y = alt.Y("log10_delta:Q", axis=style.log_axis("smoothed δ"), scale=alt.Scale(zero=False))
    band_layer = (
        alt.Chart(style.data(layers["band"]))
        .mark_area(opacity=0.25, color=style.PALETTE[0])
        .encode(
            x=x,
            y=alt.Y("lo:Q", axis=style.log_axis("smoothed δ")),
            y2=alt.Y2("hi:Q"),
            tooltip=[alt.Tooltip("epsilon:Q", title="ε"), alt.Tooltip("interval:N", title="interval")],
        )
    )
    line = (
        alt.Chart(style.data(layers["line"]))
        .mark_line(color=style.PALETTE[0], strokeWidth=2.5)
        .encode(
            x=x,
            y=y,
            strokeDash=dash,
            tooltip=[alt.Tooltip("epsilon:Q", title="ε"), alt.Tooltip("delta_text:N", title="δ")]
            + [alt.Tooltip(f"{c}:Q", title=f"records on {c[2:]}") for c in extra],
        )
    )
    # the points are a layer of their own (last, so the live panels' dataset order is kept): a point
    # overlay on the dashed-legend line makes Vega-Lite draw the legend symbols filled, i.e. invisible
    points = (
        alt.Chart(style.data(layers["points"]))
        .mark_point(filled=True, size=40, color=style.PALETTE[0], opacity=1)
        .encode(x=x, y=y, tooltip=[alt.Tooltip("epsilon:Q", title="ε"), alt.Tooltip("delta_text:N", title="δ")])
    )
    marks = [
        style.extent_mark(y, layers["extent"]),
        band_layer,
        line,
        *_dp_marks(layers["dp_rule"], y, dash),
        _note_mark(layers["note"]),
        points,
    ]
    return style.finish(alt.layer(*marks), title)


def delta_vs_n_chart(
    table: pd.DataFrame,
    fits: pd.DataFrame | None = None,
    title: str | alt.TitleParams | None = None,
    *,
    band: bool = True,
    note: str | None = None,
) -> alt.LayerChart:
    """Smoothed delta against the database size n, one colour per epsilon (Figure 2 left, Figures 4-5).

    Parameters
    ----------
    table : pandas.DataFrame
        ``n``, ``epsilon`` and one of ``log10_delta``/``log_delta``/``delta``;
        optional ``dp_delta`` (dashed rule) and ``ci_low``/``ci_high``.
    fits : pandas.DataFrame, optional
        ``epsilon``, ``slope`` and ``intercept`` of ``log delta = intercept +
        slope * n`` (natural log, as :func:`smoothdp_nb.fit_exponential`),
        drawn dotted over the range of n (the DP δ is the dashed rule).
    title : str or altair.TitleParams, optional
    band : bool
        Draw the Monte Carlo interval where it spans at most one decade.
    note : str, optional
        Written inside the plot.

    Returns
    -------
    altair.LayerChart
    """
    df = frames.max_per(frames.with_log10(table), ["n", "epsilon"])
    df = frames.thin(frames.finite(df), "n")
    df["delta_text"] = frames.delta_text(df["log10_delta"], upper=not frames.is_estimate(df))
    df["epsilon_label"] = _eps_label(df["epsilon"])
    df["series"] = "computed"
    fit_rows = []
    if fits is not None and len(fits) and len(df):
        lo, hi = float(df["n"].min()), float(df["n"].max())
        for f in fits.itertuples(index=False):
            if np.isfinite(f.slope) and np.isfinite(f.intercept):
                for n in (lo, hi):  # a straight line in log space: its ends suffice
                    fit_rows.append(
                        {
                            "n": n,
                            "epsilon": f.epsilon,
                            "epsilon_label": _eps_label([f.epsilon])[0],
                            "log10_delta": (f.intercept + f.slope * n) / _LN10,
                            "series": "exponential fit",
                            "fit": f"δ ≈ exp({f.intercept:.4g} {f.slope:+.4g}·n)",
                        }
                    )
    fit_df = pd.DataFrame(fit_rows, columns=["n", "epsilon", "epsilon_label", "log10_delta", "series", "fit"])
    colour = _eps_color(pd.concat([df[["epsilon", "epsilon_label"]], fit_df[["epsilon", "epsilon_label"]]]))
    dp = frames.first_dp_delta(df)
    # the fit dotted, the DP δ dashed: two references, two line styles (and two legend symbols)
    dash = _dash(
        [("computed", "solid")]
        + ([("exponential fit", "dotted")] if len(fit_df) else [])
        + _dp_key("", dp is not None)[1:]
    )
    x = alt.X("n:Q", axis=style.axis("n (records)", format=style.NUMBER_FORMAT), scale=alt.Scale(zero=False))
    y = alt.Y("log10_delta:Q", axis=style.log_axis("smoothed δ"), scale=alt.Scale(zero=False))
    if band and {"ci_low", "ci_high"} <= set(df.columns):
        mask, lo10, hi10 = informative_band(df["ci_low"], df["ci_high"])
        bands = pd.DataFrame(
            {"n": df["n"][mask], "epsilon_label": df["epsilon_label"][mask], "lo": lo10[mask], "hi": hi10[mask]}
        )
    else:
        bands = pd.DataFrame({"n": [], "epsilon_label": [], "lo": [], "hi": []})
    layers: list[alt.Chart] = [
        style.extent_layer(y, np.r_[df["log10_delta"].to_numpy(float), fit_df["log10_delta"].to_numpy(float)]),
        alt.Chart(style.data(bands))
        .mark_area(opacity=0.2)
        .encode(
            x=x,
            y=alt.Y("lo:Q", axis=style.log_axis("smoothed δ")),
            y2=alt.Y2("hi:Q"),
            color=colour,
            detail=alt.Detail("epsilon_label:N"),
        ),
        alt.Chart(style.data(df))
        .mark_line(point=alt.OverlayMarkDef(filled=True, size=40), strokeWidth=2.5)
        .encode(
            x=x,
            y=y,
            color=colour,
            tooltip=[
                alt.Tooltip("n:Q", title="n"),
                alt.Tooltip("epsilon_label:N", title="ε"),
                alt.Tooltip("delta_text:N", title="δ"),
            ],
        ),
        alt.Chart(style.data(fit_df))
        .mark_line(strokeWidth=1.5, opacity=0.9, strokeDash=style.DASHES["dotted"])
        .encode(
            x=x,
            y=y,
            color=colour,
            detail=alt.Detail("epsilon_label:N"),
            tooltip=[alt.Tooltip("epsilon_label:N", title="ε"), alt.Tooltip("fit:N", title="fit")],
        ),
    ]
    layers += _dp_layers(dp, y, dash)
    layers += [style.dash_key(dash), _note_layer(note)]
    return style.finish(alt.layer(*layers), title)


def profile_chart(
    frame: pd.DataFrame,
    x: str = "year",
    color: str | None = None,
    title: str | alt.TitleParams | None = None,
    *,
    y_title: str = style.PROFILE,
) -> alt.LayerChart:
    """Privacy profile ``delta_eps(x)`` (Definition 2) per database, e.g. per election year.

    Parameters
    ----------
    frame : pandas.DataFrame
        Tidy: a database column (``label``, ``year``, ...), ``epsilon`` and one
        of ``log10_delta``/``log_delta``/``delta``; optional ``dp_delta``.
    x : str
        Column on the horizontal axis: the database column (default
        ``"year"``), or ``"epsilon"`` for one curve per database.
    color : str, optional
        Column for the colour; defaults to ``epsilon`` when ``x`` is the database
        column and to the database column when ``x == "epsilon"``.
    title : str or altair.TitleParams, optional
    y_title : str
        The vertical axis' title (e.g. "smoothed δ" for smoothed values per mechanism).

    Returns
    -------
    altair.LayerChart

    References
    ----------
    Liu, Wang, Xia. *Smoothed Differential Privacy* (Definition 2).
    """
    return cast(alt.LayerChart, profile_figure(frame, x, color, title, y_title=y_title).chart())


def profile_figure(
    frame: pd.DataFrame,
    x: str = "year",
    color: str | None = None,
    title: str | alt.TitleParams | None = None,
    *,
    y_title: str = style.PROFILE,
) -> Figure:
    """:func:`profile_chart` as a :class:`~smoothdp_nb.display.figure.Figure` (rows and drawing apart)."""
    df = frames.with_log10(frame)
    if x not in df:
        raise ValueError(f"profile_chart: x={x!r} is not a column (columns: {', '.join(map(str, df.columns))})")
    if color is None:
        if x == "epsilon":
            color = next((c for c in ("label", "year", "district", "database") if c in df), None)
        else:
            color = "epsilon" if "epsilon" in df else None
    if color is not None and color not in df:
        raise ValueError(f"profile_chart: color={color!r} is not a column")
    keys = tuple(c for c in (x, color) if c is not None)
    df = frames.max_per(df, keys)
    # thin along the colour (a fine epsilon grid) before the x axis, so that every database stays
    df = frames.thin(frames.finite(df), color if color is not None and color != x else x)
    df = frames.thin(df, x)
    df["delta_text"] = frames.delta_text(df["log10_delta"])
    df["series"] = "δ(x)"
    if color == "epsilon" or x == "epsilon":
        df["epsilon_label"] = _eps_label(df["epsilon"])
    numeric_x = bool(pd.api.types.is_numeric_dtype(df[x]))
    dp = frames.first_dp_delta(df)
    values = np.r_[df["log10_delta"].to_numpy(float), [math.log10(dp)] if dp else []]
    dp_rows = _dp_frame(dp)
    layers = {
        "extent": style.extent_frame("log10_delta", values),
        "line": df,
        "dp_rule": dp_rows,
        "dash_key": pd.DataFrame(),
    }
    # many numeric databases (26 election years) in a sequential scheme: 7 palette colours would repeat
    sequential = (
        color is not None
        and color != "epsilon"
        and bool(pd.api.types.is_numeric_dtype(df[color]))
        and df[color].nunique() > len(style.PALETTE)
    )
    options = {
        "x": x,
        "numeric_x": numeric_x,
        "color": color,
        "keys": keys,
        "y_title": y_title,
        "title": title,
        "has_dp": dp is not None,
        "sequential": sequential,
    }
    return Figure(_draw_profile, layers, options)


def _draw_profile(
    layers: Mapping[str, pd.DataFrame],
    *,
    x: str,
    numeric_x: bool,
    color: str | None,
    keys: tuple[str, ...],
    y_title: str,
    title: str | alt.TitleParams | None,
    has_dp: bool,
    sequential: bool,
) -> alt.LayerChart:
    """The layers of :func:`profile_chart` around the rows of its figure."""
    if x == "epsilon":
        x_enc = alt.X("epsilon:Q", axis=style.axis("ε", format="~g"), scale=alt.Scale(zero=False, nice=False))
    elif x == "year" and numeric_x:
        x_enc = alt.X(
            "year:Q",
            axis=style.axis("election year", format="d", tickMinStep=4),
            scale=alt.Scale(zero=False, nice=False),
        )
    elif numeric_x:  # e.g. a count of records: a quantitative axis, thinned by Vega
        x_enc = alt.X(f"{x}:Q", axis=style.axis(x, format=style.NUMBER_FORMAT), scale=alt.Scale(zero=False, nice=False))
    else:
        x_enc = alt.X(f"{x}:N", axis=style.axis(x, labelAngle=-45), sort=None)
    y = alt.Y("log10_delta:Q", axis=style.log_axis(y_title), scale=alt.Scale(zero=False))
    dash = _dash(_dp_key("δ(x)", has_dp))
    enc: dict[str, Any] = {
        "x": x_enc,
        "y": y,
        "tooltip": [alt.Tooltip(f"{c}:N") for c in keys if c != "epsilon"]
        + ([alt.Tooltip("epsilon_label:N", title="ε")] if "epsilon" in keys else [])
        + [alt.Tooltip("delta_text:N", title="δ")],
    }
    if color is not None:
        if color == "epsilon":
            enc["color"] = _eps_color()
        elif sequential:  # one line per database, coloured along a sequential scale (a gradient legend)
            fmt = "d" if color == "year" else style.NUMBER_FORMAT
            enc["color"] = alt.Color(
                f"{color}:Q",
                scale=alt.Scale(scheme=alt.SchemeParams("viridis", extent=[0.0, 0.85])),  # no pale yellow
                legend=style.legend(color, format=fmt, gradientLength=240, columns=alt.Undefined),
            )
            enc["detail"] = alt.Detail(f"{color}:N")
        else:  # in order of appearance (e.g. the order the series were concatenated)
            enc["color"] = style.color(color, color if color not in ("series", "setting") else "", "N", sort=None)
    line = (
        alt.Chart(style.data(layers["line"]))
        .mark_line(point=alt.OverlayMarkDef(filled=True, size=30), strokeWidth=2)
        .encode(**enc)
    )
    marks = [
        style.extent_mark(y, layers["extent"]),
        line,
        *_dp_marks(layers["dp_rule"], y, dash),
        style.dash_key(dash),
    ]
    return style.finish(alt.layer(*marks), title)


def figure1_chart(frame: pd.DataFrame, title: str | None = None) -> alt.VConcatChart:
    """Figure 1: delta(x) per election (top) and the adversary's adjusted utility (bottom).

    Two panels sharing the year axis, so neither line hides the other.

    Parameters
    ----------
    frame : pandas.DataFrame
        ``year``, ``log10_delta`` (Definition 2) and ``log10_utility`` (eq. 3);
        optional ``dp_delta`` (dashed rule in the top panel).
    title : str, optional

    Returns
    -------
    altair.VConcatChart

    References
    ----------
    Liu, Wang, Xia. *Smoothed Differential Privacy* (Definition 2, equation 3, Figure 1).
    """
    missing = {"year", "log10_delta", "log10_utility"} - set(frame.columns)
    if missing:
        raise ValueError(f"figure1_chart: frame needs the columns {sorted(missing)}")
    df = frame.copy()
    df["delta_text"] = frames.delta_text(df["log10_delta"])
    df["utility_text"] = [format_log10(float(v)) for v in df["log10_utility"]]  # a utility, not a bound
    x = alt.X(
        "year:Q", axis=style.axis("election year", format="d", tickMinStep=4), scale=alt.Scale(zero=False, nice=False)
    )
    tips = [
        alt.Tooltip("year:Q", format="d"),
        alt.Tooltip("delta_text:N", title="δ(x)"),
        alt.Tooltip("utility_text:N", title="adjusted utility"),
    ]
    top_df = frames.finite(df).assign(series="δ(x)")
    y = alt.Y("log10_delta:Q", axis=style.log_axis("δ(x), Definition 2"), scale=alt.Scale(zero=False))
    dp = frames.first_dp_delta(df)
    dash = _dash(_dp_key("δ(x)", dp is not None))
    top = alt.layer(
        style.extent_layer(y, np.r_[top_df["log10_delta"].to_numpy(float), [math.log10(dp)] if dp else []]),
        # the line carries the dash legend; its points are a layer of their own, because a
        # point overlay makes Vega-Lite draw the legend symbols filled (invisible strokes)
        alt.Chart(style.data(top_df))
        .mark_line(color=style.PALETTE[0], strokeWidth=2)
        .encode(x=x, y=y, strokeDash=dash, tooltip=tips),
        alt.Chart(style.data(top_df))
        .mark_point(filled=True, size=30, color=style.PALETTE[0], opacity=1)
        .encode(x=x, y=y, tooltip=tips),
        *_dp_layers(dp, y, dash),
    ).properties(width=style.WIDTH, height=200)
    bottom_df = frames.finite(df, "log10_utility")
    yu = alt.Y("log10_utility:Q", axis=style.log_axis("adjusted utility, eq. (3)"), scale=alt.Scale(zero=False))
    bottom = alt.layer(
        style.extent_layer(yu, bottom_df["log10_utility"]),
        alt.Chart(style.data(bottom_df))
        .mark_line(
            point=alt.OverlayMarkDef(filled=True, size=40, shape="diamond", color=style.PALETTE[3]),
            color=style.PALETTE[3],
            strokeWidth=2,
        )
        .encode(x=x, y=yu, tooltip=tips),
    ).properties(width=style.WIDTH, height=200)
    chart = alt.vconcat(top, bottom, spacing=12).resolve_scale(y="independent")
    return chart.properties(title=style.title(title)) if title else chart


def bound_chart(
    exact: pd.DataFrame,
    bound: pd.DataFrame,
    title: str | alt.TitleParams | None = None,
    *,
    exact_label: str = "exact (Algorithm 1)",
    bound_label: str = "Remark 8 bound",
) -> alt.LayerChart:
    """An upper bound against the exact smoothed delta over n (e.g. Remark 8), one colour per epsilon.

    Parameters
    ----------
    exact, bound : pandas.DataFrame
        ``n``, ``epsilon`` and one of ``log10_delta``/``log_delta``/``delta``.
    title : str or altair.TitleParams, optional
    exact_label, bound_label : str
        Legend entries: the exact curve is solid, the bound dashed.

    Returns
    -------
    altair.LayerChart
    """
    ex = frames.finite(frames.max_per(frames.with_log10(exact), ["n", "epsilon"])).assign(series=exact_label)
    bd = frames.finite(frames.with_log10(bound)).assign(series=bound_label)
    both = pd.concat(
        [ex[["n", "epsilon", "log10_delta", "series"]], bd[["n", "epsilon", "log10_delta", "series"]]],
        ignore_index=True,
    )
    both["epsilon_label"] = _eps_label(both["epsilon"])
    both["delta_text"] = frames.delta_text(both["log10_delta"])
    both = frames.thin(both, "n")
    y = alt.Y("log10_delta:Q", axis=style.log_axis("smoothed δ"), scale=alt.Scale(zero=False))
    x = alt.X("n:Q", axis=style.axis("n (records)", format=style.NUMBER_FORMAT), scale=alt.Scale(zero=False))
    colour = _eps_color(both)
    tips = [
        alt.Tooltip("series:N", title=""),
        alt.Tooltip("n:Q"),
        alt.Tooltip("epsilon_label:N", title="ε"),
        alt.Tooltip("delta_text:N", title="δ"),
    ]
    layers = [
        style.extent_layer(y, both["log10_delta"]),
        alt.Chart(style.data(both[both["series"] == exact_label]))
        .mark_line(point=alt.OverlayMarkDef(filled=True, size=30), strokeWidth=2.5)
        .encode(x=x, y=y, color=colour, tooltip=tips),
        alt.Chart(style.data(both[both["series"] == bound_label]))
        .mark_line(point=alt.OverlayMarkDef(filled=False, size=30), strokeWidth=2, strokeDash=style.DASHES["dashed"])
        .encode(x=x, y=y, color=colour, tooltip=tips),
        style.dash_key(style.dash("series", "", [exact_label, bound_label], ["solid", "dashed"])),
    ]
    return style.finish(alt.layer(*layers), title)


def zero_note(count: int) -> str | None:
    """What a chart on a log axis says about the values it cannot draw: exact zeros (None when there are none)."""
    if count <= 0:
        return None
    return f"{count} value{'s' if count != 1 else ''} exactly 0 (δ = 0), not drawn on the log axis"


def composition_chart(
    table: pd.DataFrame,
    title: str | alt.TitleParams | None = None,
    *,
    database: str = "database",
    x: str = "epsilon",
    series: Mapping[str, str] | None = None,
    y_title: str = "δ(x)",
) -> alt.LayerChart:
    """A computed delta against a reference bound per database, e.g. exact composition vs Proposition 5.

    One colour per database (a sequential scheme beyond the 7 colours of the palette, so that no two
    databases share a colour), one line style per series: the first series solid, the others dashed,
    with a legend that draws the dashes.  Delta is plotted as ``log10`` on a linear axis labelled
    ``10ᵏ``; values that are exactly 0 have no place there: they are left out and the chart says how
    many in its subtitle (never a silent flat line on the edge).

    Parameters
    ----------
    table : pandas.DataFrame
        Wide: the ``database`` column, the ``x`` column and one column of delta per series.
    title : str or altair.TitleParams, optional
    database, x : str
        The column naming the database (drawn as text) and the one on the horizontal axis.
    series : mapping of str to str, optional
        Column -> legend entry, in legend order; default ``{"exact": "exact composition",
        "proposition5": "Proposition 5 (sum of the steps)"}``.
    y_title : str

    Returns
    -------
    altair.LayerChart

    References
    ----------
    Liu, Wang, Xia. *Smoothed Differential Privacy* (Definition 2, Proposition 5).
    """
    series = dict(series or {"exact": "exact composition", "proposition5": "Proposition 5 (sum of the steps)"})
    missing = ({database, x} | set(series)) - set(table.columns)
    if missing:
        raise ValueError(f"composition_chart: table needs the columns {sorted(missing)}")
    long = table.melt([database, x], list(series), var_name="column", value_name="delta")
    long["series"] = long["column"].map(series)
    long["database"] = long[database].astype(str)
    long = frames.with_log10(long.drop(columns=["column"]))
    zeros = int((long["log10_delta"] == -math.inf).sum())
    long = frames.finite(long)
    long["delta_text"] = frames.delta_text(long["log10_delta"])
    order = list(dict.fromkeys(table[database].astype(str)))
    names = list(series.values())
    y = alt.Y("log10_delta:Q", axis=style.log_axis(y_title), scale=alt.Scale(zero=False))
    x_enc = alt.X(f"{x}:Q", axis=style.axis("ε" if x == "epsilon" else x, format="~g"), scale=alt.Scale(zero=False))
    if len(order) > len(style.PALETTE):
        colours = alt.Scale(domain=order, scheme=alt.SchemeParams("viridis", extent=[0.0, 0.9]))
    else:
        colours = alt.Scale(domain=order, range=style.PALETTE[: len(order)])
    colour = alt.Color(
        "database:N",
        scale=colours,
        legend=style.legend(database, symbolType="stroke", symbolStrokeWidth=3, columns=4 if len(order) > 6 else 3),
    )
    dash = style.dash("series", "", names, ["solid"] + ["dashed"] * (len(names) - 1))
    tips = [
        alt.Tooltip("database:N"),
        alt.Tooltip("series:N", title=""),
        alt.Tooltip(f"{x}:Q", title="ε" if x == "epsilon" else x),
        alt.Tooltip("delta_text:N", title="δ"),
    ]
    layers = [style.extent_layer(y, long["log10_delta"])]
    for name, kind in zip(names, ["solid"] + ["dashed"] * (len(names) - 1)):
        rows = long[long["series"] == name]
        line = alt.Chart(style.data(rows)).mark_line(
            strokeWidth=2 if kind == "solid" else 1.5, strokeDash=style.DASHES[kind]
        )
        layers.append(line.encode(x=x_enc, y=y, color=colour, detail=alt.Detail("database:N"), tooltip=tips))
    layers.append(style.dash_key(dash))
    if isinstance(title, str) or title is None:
        title = style.title(title or "δ per database", zero_note(zeros))
    elif zeros:
        subs = [str(s) for s in title.subtitle] if isinstance(title.subtitle, list) else []
        text = title.text if isinstance(title.text, str) else " ".join(title.text)
        title = style.title(text, [*subs, str(zero_note(zeros))])
    return style.finish(alt.layer(*layers), title)
