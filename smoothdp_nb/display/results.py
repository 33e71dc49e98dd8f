"""Charts and summary tables of the core's result objects (registered by kind in :mod:`.register`).

Adapters only: each turns a result into the frame a builder draws
(:mod:`.delta`, :mod:`.noise`, :mod:`.release`) and into the compact table
shown above the chart.  Only public attributes of the results are read.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import altair as alt
import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from smoothdp_nb.core.numerics.formatting import format_param, format_value
from smoothdp_nb.core.release.noise import get_family
from smoothdp_nb.display import delta, frames, noise, release, style

if TYPE_CHECKING:
    from smoothdp_nb.core.release.reports import NoiseComparison, ReleaseReport
    from smoothdp_nb.core.release.smooth_sensitivity import Release, ReleaseDiagnostics
    from smoothdp_nb.core.smoothed.engines.results import SmoothedCurve, SmoothedResult
    from smoothdp_nb.core.smoothed.reports import ProfileResult

__all__ = [
    "curve_chart",
    "curve_summary",
    "mechanism_label",
    "monte_carlo_note",
    "noise_comparison_chart",
    "noise_summary",
    "profile_result_chart",
    "profile_summary",
    "release_report_chart",
    "release_summary",
    "smoothed_result_chart",
    "smoothed_summary",
]

_LN10 = math.log(10.0)


def mechanism_label(mechanism: object) -> str:
    """The mechanism's ``label`` when it has one, else its ``repr``."""
    label = getattr(mechanism, "label", None)
    return label if isinstance(label, str) and label else repr(mechanism)


# -------------------------------------------------------------------- profiles


def profile_result_chart(result: ProfileResult) -> alt.LayerChart:
    """Chart of a ``ProfileResult``: delta per database (one colour per epsilon), or per epsilon.

    Several databases and few epsilon: log10 delta per database; one database,
    or a fine epsilon grid over a few databases: delta against epsilon with one
    colour per database.
    """
    df = result.to_frame()
    labels = pd.Series(list(df["label"])).infer_objects()
    df["label"] = labels.to_numpy() if pd.api.types.is_numeric_dtype(labels) else labels.astype(str).to_numpy()
    k, e = len(result.labels), len(result.epsilon)
    name = {"us-elections": "year", "us-2020-districts": "district"}.get(result.source, "label")
    df = df.rename(columns={"label": name})
    x = "epsilon" if (k == 1 or (e > 8 and k <= 12)) else name
    title = style.title(
        f"Privacy profile {style.PROFILE} (Definition 2) of {mechanism_label(result.mechanism)}",
        f"{k} database(s) ({result.source}); dashed: DP δ",
    )
    return delta.profile_chart(df, x=x, title=title)


def profile_summary(result: ProfileResult) -> pd.DataFrame:
    """One row per database, one column of delta per epsilon (at most 6)."""
    out = pd.DataFrame({"label": [str(x) for x in result.labels], "n": [f"{int(v):,}" for v in result.sizes]})
    for j, e in enumerate(result.epsilon[:6]):
        out[f"δ at ε = {e:.4g}"] = frames.delta_text(result.log_delta[:, j] / _LN10)
    out["DP δ"] = _dp_text(result.dp_delta)
    return out


# -------------------------------------------------------------------- smoothed delta


def monte_carlo_note(result: SmoothedResult) -> str | None:
    """The line a Monte Carlo chart carries (None for exact results)."""
    if getattr(result, "method", "exact") != "monte-carlo":
        return None
    trials = getattr(result, "trials", None)
    covers = next((n for n in getattr(result, "notes", []) if n.startswith("Monte Carlo interval covers")), None)
    text = f"Monte Carlo estimate, {trials} trials per composition"
    return text if covers is None else f"{text}; {covers[len('Monte Carlo ') :]}"


def _band_text(result: SmoothedResult) -> str:
    conf = getattr(result, "confidence", None)
    level = f"{conf:.0%} " if conf else ""
    return f"band: {level}interval, drawn where under one decade wide"


def smoothed_result_chart(result: SmoothedResult) -> alt.LayerChart:
    """Chart of a ``SmoothedResult``: smoothed delta against epsilon (Figure 2, right)."""
    sub = f"{mechanism_label(result.mechanism)}, {result.method}; dashed: DP δ"
    if result.method == "monte-carlo":
        sub += f"; {_band_text(result)}"
    title = style.title(f"Smoothed δ (Definition 3), n = {result.n:,}", sub)
    return delta.delta_vs_epsilon_chart(result.to_frame(), title=title, note=monte_carlo_note(result))


def _dp_text(values: ArrayLike) -> list[str]:
    """The DP deltas (proven upper bounds) as text rounded up; "n/a" where not computed."""
    v = np.asarray(values, dtype=float)
    with np.errstate(divide="ignore"):
        text = frames.delta_text(np.log10(np.where(np.isfinite(v), v, 1.0)))
    return [t if np.isfinite(x) else "n/a" for t, x in zip(text, v)]


def smoothed_summary(result: SmoothedResult) -> pd.DataFrame:
    """One row per epsilon: delta (from its logarithm), interval, DP delta, worst composition."""
    df = result.to_frame()
    # an exact result's delta is a proven upper bound ("≤", rounded up); Monte Carlo's an estimate ("≈")
    delta = frames.delta_text(df["log10_delta"], upper=result.method == "exact")
    out = pd.DataFrame({"ε": [f"{v:.4g}" for v in df["epsilon"]], "δ": delta})
    if "ci_low" in df:
        out["interval"] = [f"[{a:.3e}, {b:.3e}]" for a, b in zip(df["ci_low"], df["ci_high"])]
    out["DP δ"] = _dp_text(df["dp_delta"])
    counts = [c for c in df.columns if c.startswith("n_")]
    if counts:
        out["worst composition"] = [str(tuple(int(v) for v in row)) for row in df[counts].to_numpy()]
    return out


def curve_chart(curve: SmoothedCurve) -> alt.LayerChart:
    """Chart of a ``SmoothedCurve``: smoothed delta against n with the exponential fits (Figure 2, left)."""
    methods = {getattr(r, "method", "exact") for r in curve.results}
    note = monte_carlo_note(curve.results[0]) if methods == {"monte-carlo"} else None
    sub = "dashed: exponential fit and DP δ" + (f"; {_band_text(curve.results[0])}" if note else "")
    return delta.delta_vs_n_chart(
        curve.table,
        curve.fits,
        title=style.title("Smoothed δ against n (Theorem 3: exponentially small in n)", sub),
        note=note,
    )


def curve_summary(curve: SmoothedCurve) -> pd.DataFrame:
    """Per epsilon: delta at the largest n, the fitted slope and R²."""
    tab = frames.with_log10(curve.table)
    n_max = tab["n"].max()
    last = tab[tab["n"] == n_max].groupby("epsilon", sort=True)["log10_delta"].max()
    fits = curve.fits
    out = pd.DataFrame({"ε": [f"{v:.4g}" for v in fits["epsilon"]]})
    exact = all(getattr(r, "method", "exact") == "exact" for r in curve.results)
    out[f"δ at n = {int(n_max):,}"] = frames.delta_text([last.get(e, -np.inf) for e in fits["epsilon"]], upper=exact)
    out["slope (decades per 1000 records)"] = [f"{1000 * v / _LN10:.4g}" for v in fits["slope"]]
    out["R²"] = [f"{v:.4f}" for v in fits["r2"]]
    dp = frames.first_dp_delta(tab)
    if dp is not None:
        out["DP δ"] = _dp_text([dp])[0]
    return out


# -------------------------------------------------------------------- noise


def noise_comparison_chart(comparison: NoiseComparison) -> alt.LayerChart:
    """Chart of a ``NoiseComparison`` (Hladik & Tetek, Figure 1)."""
    d = f", δ = {comparison.delta:g} for Laplace" if comparison.delta is not None else ""
    return noise.noise_chart(
        comparison.table,
        title=style.title(
            "Noise for smooth sensitivity (Hladik & Tetek, Figure 1)",
            f"ε = {comparison.epsilon:g}{d}; dashed: reference",
        ),
    )


def noise_summary(comparison: NoiseComparison) -> pd.DataFrame:
    """Per family: the best gamma on the grid and its std."""
    best = comparison.best()
    return pd.DataFrame(
        {
            "noise": [noise.FAMILY_LABELS.get(f, f) for f in best["family"]],
            "best γ": [f"{v:.4g}" for v in best["gamma"]],
            "std / SS": [f"{v:.4g}" for v in best["std"]],
            "shape": ["" if not np.isfinite(v) else f"{v:.4g}" for v in best["shape"].astype(float)],
        }
    )


# -------------------------------------------------------------------- releases


def _diagnostics(rel: Release) -> ReleaseDiagnostics | None:
    return getattr(rel, "diagnostics", None)


def public_note(rel: Release) -> str:
    """The guarantee and the lattice of a release, one line."""
    step = getattr(rel, "lattice", None)
    lattice = f"; values on the lattice {release.lattice_text(step)}·ℤ" if step else ""
    return f"{rel.guarantee}{lattice}"


def release_report_chart(report: ReleaseReport) -> alt.TopLevelMixin:
    """Chart of a ``ReleaseReport``: the value on the bounds' axis; the noise density only with diagnostics."""
    rel = report.release
    diag = _diagnostics(rel)
    density = None
    if diag is not None:
        density = release.release_density(
            rel.noise,
            rel.epsilon,
            rel.gamma,
            float(diag.noise_scale),
            float(rel.value),
            delta=rel.delta,
            shape=rel.shape if get_family(rel.noise).free_shape else None,
        )
    label = getattr(diag, "label", None) or release.DIAGNOSTIC_LABEL
    return release.release_chart(
        [rel],
        rel.bounds,
        name=report.name,
        query=rel.query,
        note=public_note(rel),
        density=density,
        density_label=label,
    )


def release_summary(report: ReleaseReport) -> pd.DataFrame:
    """Field/value table: public fields; the diagnostics (if opted in) marked as data-dependent.

    The report's own ``summary_frame()`` when it has one (one definition of the table).
    """
    own = getattr(report, "summary_frame", None)
    if callable(own):
        return own()
    r = report.release
    rows = [
        ("released value", format_value(r.value, getattr(r, "lattice", None))),
        ("query", f"{r.query} of {report.name}"),
        ("n, bounds", f"{r.n}, [{format_param(float(r.bounds[0]))}, {format_param(float(r.bounds[1]))}]"),
        ("guarantee", r.guarantee),
        ("noise", r.noise + (f" (shape {format_param(r.shape)})" if r.shape is not None else "")),
        ("γ", f"{format_param(r.gamma)} ({r.gamma_source})"),
    ]
    if getattr(r, "lattice", None):
        rows.insert(1, ("lattice step", release.lattice_text(r.lattice)))
    diag = _diagnostics(r)
    if diag is not None:
        label = getattr(diag, "label", None) or release.DIAGNOSTIC_LABEL
        rows += [
            (f"smooth sensitivity ({label})", f"{diag.smooth_sensitivity:.4g}"),
            (f"noise std ({label})", f"{diag.noise_std:.4g}"),
        ]
    return pd.DataFrame(rows, columns=["field", "value"])
