"""Builder for the noise comparison (Hladik & Tetek, Figure 1): std per unit of smooth sensitivity against gamma."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import cast

import altair as alt
import numpy as np
import pandas as pd

from smoothdp_nb.core.release.noise import families, get_family
from smoothdp_nb.display import style
from smoothdp_nb.display.figure import Figure

__all__ = ["FAMILY_LABELS", "family_labels", "noise_chart", "noise_figure", "values_at"]

_REFERENCE = "laplace_global"
_REFERENCE_LABEL = "Laplace on global sensitivity"


def family_labels() -> dict[str, str]:
    """Legend name of every registered noise family and of the reference, in a fixed order (fixed colours)."""
    labels = {f.name: f.label for f in families()}
    labels[_REFERENCE] = _REFERENCE_LABEL
    return labels


class _FamilyLabels(Mapping[str, str]):
    """:func:`family_labels` as a mapping read from the registry at each look-up."""

    def __getitem__(self, family: str) -> str:
        labels = family_labels()  # the registry's labels and the reference line's, from one table
        return labels[family] if family in labels else get_family(family).label

    def __iter__(self) -> Iterator[str]:
        return iter(family_labels())

    def __len__(self) -> int:
        return len(family_labels())

    def __repr__(self) -> str:
        return repr(family_labels())


#: legend names of the noise families (the registry's labels) and of the global-sensitivity reference
FAMILY_LABELS: Mapping[str, str] = _FamilyLabels()


def values_at(frame: pd.DataFrame, gamma: float) -> pd.DataFrame:
    """Each family's std interpolated in log-log at ``gamma`` (families out of range are left out)."""
    rows = []
    for fam, g in frame.groupby("family", sort=True):
        g = g.sort_values("gamma")
        gs, ss = g["gamma"].to_numpy(float), g["std"].to_numpy(float)
        if len(gs) and gs[0] <= gamma <= gs[-1]:
            rows.append(
                {
                    "family": fam,
                    "gamma": float(gamma),
                    "std": float(np.exp(np.interp(math.log(gamma), np.log(gs), np.log(ss)))),
                }
            )
    return pd.DataFrame(rows, columns=["family", "gamma", "std"])


def _prepare(frame: pd.DataFrame) -> pd.DataFrame:
    df = frame[["family", "gamma", "std"]].copy()
    df = df[np.isfinite(df["std"].astype(float)) & (df["std"] > 0) & (df["gamma"] > 0)].reset_index(drop=True)
    labels = family_labels()
    df["noise"] = df["family"].map(lambda f: labels.get(f, f))
    df["line"] = np.where(df["family"] == _REFERENCE, "reference", "smooth sensitivity")
    df["log10_gamma"] = np.log10(df["gamma"].astype(float))
    df["log10_std"] = np.log10(df["std"].astype(float))
    df["std_text"] = [f"{v:.4g}" for v in df["std"]]
    return df


def noise_chart(
    frame: pd.DataFrame, gamma: float | None = None, title: str | alt.TitleParams | None = None
) -> alt.LayerChart:
    """Noise standard deviation per unit of smooth sensitivity against gamma, one line per family.

    Reproduces Figure 1 of Hladik & Tetek (std of PolyPlace, generalized
    Cauchy, Student's t and Laplace noise calibrated by Theorem 8 and
    Appendix B); Laplace on the global sensitivity is the dashed reference.

    Parameters
    ----------
    frame : pandas.DataFrame
        Tidy, as returned by ``compare_noise``: ``family``, ``gamma``, ``std``
        (infinite or missing values, outside a family's range, are dropped).
    gamma : float, optional
        Marks this gamma with a dotted rule and each family's std there.
    title : str or altair.TitleParams, optional

    Returns
    -------
    altair.LayerChart
        Both axes in log10 with ticks at powers of ten.

    References
    ----------
    Hladik, Tetek. *Smooth Sensitivity Revisited: Towards Optimality* (Theorem 8, Appendix B, Figure 1).
    """
    return cast(alt.LayerChart, noise_figure(frame, gamma, title).chart())


def noise_figure(frame: pd.DataFrame, gamma: float | None = None, title: str | alt.TitleParams | None = None) -> Figure:
    """:func:`noise_chart` as a :class:`~smoothdp_nb.display.figure.Figure` (rows and drawing apart)."""
    df = _prepare(frame).iloc[: style.MAX_ROWS]
    # the families present, each in its fixed colour (PolyPlace is always blue)
    fixed = list(family_labels().values())
    present = [lab for lab in fixed if lab in set(df["noise"])] + sorted(set(df["noise"]) - set(fixed))
    extra = [lab for lab in present if lab not in fixed]
    palette = {lab: style.PALETTE[i % len(style.PALETTE)] for i, lab in enumerate(fixed + extra)}
    g = float(gamma) if gamma is not None else math.nan
    ok = bool(np.isfinite(g) and g > 0)
    at = _prepare(values_at(df, g)) if ok and len(df) else _prepare(pd.DataFrame(columns=["family", "gamma", "std"]))
    rule = pd.DataFrame({"log10_gamma": [math.log10(g)] if ok else []}, dtype=float)
    layers = {
        "extent_y": style.extent_frame("log10_std", df["log10_std"]),
        "extent_x": style.extent_frame(
            "log10_gamma", np.r_[df["log10_gamma"].to_numpy(float), rule["log10_gamma"].to_numpy(float)]
        ),
        "lines": df,
        "rule": rule,
        "points": at,
    }
    options = {"present": tuple(present), "colours": tuple(palette[lab] for lab in present), "title": title}
    return Figure(_draw_noise, layers, options)


def _draw_noise(
    layers: Mapping[str, pd.DataFrame],
    *,
    present: tuple[str, ...],
    colours: tuple[str, ...],
    title: str | alt.TitleParams | None,
) -> alt.LayerChart:
    """The layers of :func:`noise_chart` around the rows of its figure."""
    x = alt.X("log10_gamma:Q", axis=style.log_axis("γ (smoothness of the sensitivity)"), scale=alt.Scale(zero=False))
    y = alt.Y("log10_std:Q", axis=style.log_axis("noise std / smooth sensitivity"), scale=alt.Scale(zero=False))
    colour = style.color("noise", "noise", domain=present, range_=colours)
    dash = style.dash("line", "", ["smooth sensitivity", "reference"], ["solid", "dashed"])
    tips = [
        alt.Tooltip("noise:N"),
        alt.Tooltip("gamma:Q", title="γ", format=".4g"),
        alt.Tooltip("std_text:N", title="std / SS"),
    ]
    marks = [
        style.extent_mark(y, layers["extent_y"]),
        style.extent_mark(x, layers["extent_x"]),
        alt.Chart(style.data(layers["lines"]))
        .mark_line(strokeWidth=2.5)
        .encode(x=x, y=y, color=colour, strokeDash=dash, tooltip=tips),
        alt.Chart(style.data(layers["rule"]))
        .mark_rule(color=style.SOFT, strokeDash=style.DASHES["dotted"])
        .encode(x=x),
        alt.Chart(style.data(layers["points"]))
        .mark_point(filled=True, size=70, opacity=1)
        .encode(x=x, y=y, color=colour, tooltip=tips),
    ]
    return style.finish(alt.layer(*marks), title)
