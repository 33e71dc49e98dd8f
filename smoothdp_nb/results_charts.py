"""Charts and notebook display for :mod:`smoothdp_nb.core.results`.

Pure builders from tidy frames to Altair charts (``noise_chart``), adapters
for the result objects (``profile_result_chart``, ``release_chart``), their
compact summary tables (``*_summary``) and :func:`bundle`, the rich display
(text plus an offline HTML summary with the chart as inline SVG).  The axis
conventions (log10 delta with exponent labels, DP delta rule) come from
:mod:`smoothdp_nb.charts`.
"""

from __future__ import annotations

import html
import math
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

from . import charts

__all__ = [
    "profile_result_chart",
    "noise_chart",
    "release_chart",
    "profile_summary",
    "noise_summary",
    "release_summary",
    "bundle",
    "summary_frame",
]

_WIDTH = 420
_HEIGHT = 260
_MAX_SUMMARY_ROWS = 20


# --------------------------------------------------------------------------
# privacy profiles
# --------------------------------------------------------------------------


def profile_result_chart(result: Any) -> alt.LayerChart:
    """Chart of a :class:`~smoothdp_nb.core.results.ProfileResult`.

    Several databases and few epsilon: log10 delta per database (x) with one
    colour per epsilon.  One database, or a fine epsilon grid over a few databases:
    delta against epsilon with one colour per database.
    """
    df = result.to_frame()
    labels = pd.Series(list(df["label"])).infer_objects()
    df["label"] = labels.to_numpy() if pd.api.types.is_numeric_dtype(labels) else labels.astype(str).to_numpy()
    k, e = len(result.labels), len(result.epsilon)
    x = "epsilon" if (k == 1 or (e > 8 and k <= 12)) else "label"
    name = {"us-elections": "year", "us-2020-districts": "district"}.get(result.source, "label")
    df = df.rename(columns={"label": name})
    title = f"Privacy profile of {result.mechanism!r}"
    chart = charts.profile_chart(df, x=name if x == "label" else x, title=title)
    if x == "label" and k > 12:
        # many databases: slanted labels, so that years or district codes stay legible
        enc = chart.layer[0].encoding
        x_enc = enc.x.copy()
        x_enc.axis = alt.Axis(labelAngle=-45)
        enc.x = x_enc
    return chart


def profile_summary(result: Any) -> pd.DataFrame:
    """Compact table: one row per database, one column of delta per epsilon (at most 6)."""
    out = pd.DataFrame({"label": [str(x) for x in result.labels], "n": [f"{int(v):,}" for v in result.sizes]})
    for j, e in enumerate(result.epsilon[:6]):
        out[f"δ at ε = {e:g}"] = [charts.format_log10(v / math.log(10)) for v in result.log_delta[:, j]]
    out["DP δ"] = [f"{v:.4g}" if np.isfinite(v) else "n/a" for v in result.dp_delta]
    return out


# --------------------------------------------------------------------------
# noise comparison
# --------------------------------------------------------------------------


def noise_chart(frame: pd.DataFrame, title: str | None = None) -> alt.LayerChart:
    """Noise std per unit of smooth sensitivity against gamma, one line per family.

    Parameters
    ----------
    frame : pandas.DataFrame
        ``family``, ``gamma``, ``std`` (as :func:`~smoothdp_nb.core.release.compare_noise`);
        infinite values (gamma out of a family's range) are left out.
    title : str, optional

    Returns
    -------
    altair.LayerChart
        Log-scale y axis; tooltips with the exact std and shape.
    """
    df = frame[np.isfinite(frame["std"].astype(float))].copy()
    df = df[df["std"] > 0]
    if len(df) > charts.MAX_ROWS:
        df = charts._thin(df, "gamma")
    df["std_text"] = [f"{v:.6g}" for v in df["std"]]
    df["shape_text"] = ["" if not np.isfinite(v) else f"{v:.4g}" for v in df["shape"].astype(float)]
    base = alt.Chart(df)
    line = base.mark_line(point=alt.OverlayMarkDef(size=18)).encode(
        x=alt.X("gamma:Q", title="γ (smoothness)"),
        y=alt.Y("std:Q", title="noise std / smooth sensitivity", scale=alt.Scale(type="log")),
        color=alt.Color("family:N", title="noise"),
        strokeDash=alt.condition(
            alt.datum.family == "laplace_global", alt.value([4, 3]), alt.value([1, 0])
        ),
        tooltip=[
            alt.Tooltip("family:N"),
            alt.Tooltip("gamma:Q", title="γ", format=".4g"),
            alt.Tooltip("std_text:N", title="std"),
            alt.Tooltip("shape_text:N", title="shape"),
        ],
    )
    chart = alt.layer(line).properties(width=_WIDTH, height=_HEIGHT)
    return chart.properties(title=title) if title else chart


def noise_summary(comparison: Any) -> pd.DataFrame:
    """Per family: the best gamma on the grid and its std."""
    best = comparison.best()
    return pd.DataFrame(
        {
            "family": best["family"],
            "best γ": [f"{v:.4g}" for v in best["gamma"]],
            "std / SS": [f"{v:.4g}" for v in best["std"]],
            "shape": ["" if not np.isfinite(v) else f"{v:.4g}" for v in best["shape"].astype(float)],
        }
    )


# --------------------------------------------------------------------------
# releases
# --------------------------------------------------------------------------


def _release_density(rel: Any, points: int = 201) -> pd.DataFrame:
    """Density of ``value + noise_scale * Z`` on a quantile grid (Z: the calibrated noise)."""
    from .core import noise as _noise

    shape = rel.shape if rel.noise in ("cauchy", "student_t", "laplace_log_normal") else None
    cal = _noise.calibrate(rel.noise, rel.epsilon, rel.gamma, delta=rel.delta, shape=shape)
    q = np.linspace(0.01, 0.99, points)
    z = np.asarray(cal.distribution.ppf(q), dtype=float)
    scale = float(rel.noise_scale)
    return pd.DataFrame({"x": rel.value + scale * z, "density": np.asarray(cal.distribution.pdf(z)) / scale})


def release_chart(report: Any) -> alt.LayerChart:
    """The released value and the noise density around it (curator-only diagnostics).

    Parameters
    ----------
    report : ReleaseReport

    Returns
    -------
    altair.LayerChart
        The density of ``value + noise`` between its 1 % and 99 % quantiles
        and a rule at the released value; if the smooth sensitivity is 0 only
        the rule.
    """
    rel = report.release
    layers: list[alt.Chart] = []
    point = pd.DataFrame({"x": [rel.value], "label": [f"release = {rel.value:.6g}"]})
    if rel.noise_scale > 0 and np.isfinite(rel.noise_scale):
        dens = _release_density(rel)
        layers.append(
            alt.Chart(dens)
            .mark_area(opacity=0.3, line=True, color="#4c78a8")
            .encode(
                x=alt.X("x:Q", title=f"{rel.query} of {report.name}", scale=alt.Scale(zero=False)),
                y=alt.Y("density:Q", title="noise density (data-dependent)"),
                tooltip=[alt.Tooltip("x:Q", format=".6g"), alt.Tooltip("density:Q", format=".4g")],
            )
        )
    layers.append(
        alt.Chart(point)
        .mark_rule(color="#e45756", strokeWidth=2)
        .encode(x=alt.X("x:Q", title=f"{rel.query} of {report.name}"), tooltip=["label:N"])
    )
    title = alt.TitleParams(
        f"Private {rel.query} of {report.name}: {rel.value:.6g}",
        subtitle=[f"{rel.guarantee}, noise {rel.noise}; the density is for the curator only"],
    )
    return alt.layer(*layers).properties(width=_WIDTH, height=_HEIGHT, title=title)


def release_summary(report: Any) -> pd.DataFrame:
    """Two-column table: field, value (public fields first, diagnostics marked)."""
    r = report.release
    rows = [
        ("released value", f"{r.value:.6g}"),
        ("query", f"{r.query} of {report.name}"),
        ("n, bounds", f"{r.n}, [{r.bounds[0]:g}, {r.bounds[1]:g}]"),
        ("guarantee", r.guarantee),
        ("noise", r.noise + (f" (shape {r.shape:.4g})" if r.shape is not None else "")),
        ("γ", f"{r.gamma:.4g} ({r.gamma_source})"),
        ("smooth sensitivity (curator only)", f"{r.smooth_sensitivity:.4g}"),
        ("noise std (curator only)", f"{r.noise_std:.4g}"),
    ]
    return pd.DataFrame(rows, columns=["field", "value"])


# --------------------------------------------------------------------------
# rich display
# --------------------------------------------------------------------------


def summary_frame(obj: Any) -> pd.DataFrame | None:
    """The compact summary table of any result object of the package (None if unknown)."""
    from .core.results import NoiseComparison, ProfileResult, ReleaseReport

    if isinstance(obj, ProfileResult):
        return profile_summary(obj)
    if isinstance(obj, NoiseComparison):
        return noise_summary(obj)
    if isinstance(obj, ReleaseReport):
        return release_summary(obj)
    try:
        return charts._summary_frame(obj)  # smoothed results and curves
    except Exception:
        return None


def bundle(obj: Any, summary: pd.DataFrame | None = None, chart: bool = True) -> dict[str, str]:
    """Rich display: ``text/plain`` plus HTML with a summary table and the chart as SVG.

    Parameters
    ----------
    obj : result object
        Anything with ``__str__`` and ``chart()``.
    summary : pandas.DataFrame, optional
        The table shown above the chart (at most 20 rows are shown).
    chart : bool
        Embed the chart (rendered offline by ``vl_convert``, no scripts).

    Returns
    -------
    dict
        ``{"text/plain": ..., "text/html": ...}``; a failing chart becomes a
        one-line note, so the display itself never fails.
    """
    text = str(obj)
    head = html.escape(text.splitlines()[0] if text else type(obj).__name__)
    parts = [f'<div class="smoothdp-result"><div style="font-weight:bold">{head}</div>']
    if summary is not None:
        shown = summary.head(_MAX_SUMMARY_ROWS)
        parts.append(shown.to_html(index=False, border=0, escape=True))
        if len(summary) > len(shown):
            parts.append(f"<div><small>… {len(summary) - len(shown)} more rows (see .to_frame())</small></div>")
    else:
        parts.append(f"<pre>{html.escape(text)}</pre>")
    if chart:
        try:
            parts.append(f"<div>{charts.render_svg(obj.chart())}</div>")
        except Exception as exc:  # the display must not fail because of the chart
            msg = html.escape(f"{type(exc).__name__}: {exc}".splitlines()[0][:200])
            parts.append(f"<div><small>(chart not rendered: {msg})</small></div>")
    parts.append("</div>")
    return {"text/plain": text, "text/html": "".join(parts)}
