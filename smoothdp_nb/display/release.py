"""Builders for private releases: the released values on the bounds' axis (public numbers only).

What a release chart shows by default is public: the released values (exact
multiples of the public lattice step), the bounds, the guarantee.  The noise
density depends on the data through the smooth sensitivity, so it is drawn
only when the curator opted in to diagnostics (``release(...,
diagnostics=True)``, or the panel's diagnostics box), and then with the label
"data-dependent: not covered by the privacy guarantee".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import altair as alt
import numpy as np
import pandas as pd

from smoothdp_nb.core.numerics.formatting import format_value, lattice_text
from smoothdp_nb.core.release import noise as _noise
from smoothdp_nb.display import style
from smoothdp_nb.display.figure import Figure

if TYPE_CHECKING:
    from smoothdp_nb.core.release.smooth_sensitivity import Release

__all__ = ["DIAGNOSTIC_LABEL", "release_chart", "release_density", "release_figure"]

#: the label every drawing of a data-dependent quantity carries
DIAGNOSTIC_LABEL = "data-dependent: not covered by the privacy guarantee"

#: the density is drawn between these quantiles of the noise
_QUANTILES = (0.01, 0.99)


def release_density(
    noise: str,
    epsilon: float,
    gamma: float,
    noise_scale: float,
    centre: float,
    *,
    delta: float | None = None,
    shape: float | None = None,
    points: int = 201,
) -> pd.DataFrame:
    """Density of ``centre + noise_scale * Z`` between the 1 % and 99 % quantiles of the noise.

    ``Z`` is the standardised noise of :func:`smoothdp_nb.core.release.noise.calibrate`
    (Hladik & Tetek Theorem 8, Appendix B); ``noise_scale`` is the
    data-dependent multiplier ``SS * scale``.  The only release density of the
    package (panels and result charts call it).

    Returns
    -------
    pandas.DataFrame
        ``x`` and ``density``; two rows (a spike) when ``noise_scale`` is 0.

    References
    ----------
    Hladik, Tetek. *Smooth Sensitivity Revisited: Towards Optimality* (Theorem 8, Appendix B).
    """
    if not (np.isfinite(noise_scale) and noise_scale > 0):
        return pd.DataFrame({"x": [centre, centre], "density": [0.0, 1.0]})
    cal = _noise.calibrate(noise, epsilon, gamma, delta=delta, shape=shape)
    z = np.asarray(cal.distribution.ppf(np.linspace(*_QUANTILES, points)), dtype=float)
    return pd.DataFrame({"x": centre + noise_scale * z, "density": np.asarray(cal.distribution.pdf(z)) / noise_scale})


_lattice_text = lattice_text  # the name the result tables use


def release_chart(
    releases: Sequence[Release],
    bounds: tuple[float, float],
    *,
    name: str = "x",
    query: str = "statistic",
    note: str | None = None,
    true_value: float | None = None,
    density: pd.DataFrame | None = None,
    density_label: str = DIAGNOSTIC_LABEL,
) -> alt.TopLevelMixin:
    """The released values on the bounds' axis, latest first, with the guarantee.

    Parameters
    ----------
    releases : sequence of Release
        Oldest first; only public fields are read (``value``, ``lattice``,
        ``epsilon``, ``guarantee``).  May be empty (nothing released yet): the
        chart keeps its size, axes and layers.
    bounds : (float, float)
        The public domain: the x axis.
    name, query : str
        What was released (title and axis); the releases' own statistic
        (their ``query``) wins over ``query`` when they record one.
    note : str, optional
        One line written inside the plot (e.g. the guarantee and lattice).
    true_value : float, optional
        Drawn (red, dotted) only when given: for teaching, never for publishing.
    density : pandas.DataFrame, optional
        ``x``, ``density`` from :func:`release_density`; drawn above the
        releases, labelled as data-dependent.  Only pass it when the curator
        opted in to diagnostics.
    density_label : str
        What the density's title says about it (the release's own diagnostics label, if it has one).

    Returns
    -------
    altair.LayerChart, or altair.VConcatChart with a density
    """
    chart: alt.TopLevelMixin = release_figure(
        releases,
        bounds,
        name=name,
        query=query,
        note=note,
        true_value=true_value,
        density=density,
        density_label=density_label,
    ).chart()
    return chart


#: the release chart's legend entries and their colours (each entry keeps its colour)
_KEYS = ("latest release", "earlier releases", "true value (teaching only)")
_KEY_COLOURS = dict(zip(_KEYS, (style.PALETTE[0], style.PALETTE[1], style.PALETTE[2]), strict=True))


def release_figure(
    releases: Sequence[Release],
    bounds: tuple[float, float],
    *,
    name: str = "x",
    query: str = "statistic",
    note: str | None = None,
    true_value: float | None = None,
    density: pd.DataFrame | None = None,
    density_label: str = DIAGNOSTIC_LABEL,
) -> Figure:
    """:func:`release_chart` as a :class:`~smoothdp_nb.display.figure.Figure` (rows and drawing apart)."""
    lo, hi = float(bounds[0]), float(bounds[1])
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise ValueError(f"bounds must be finite with low < high, got {bounds!r}")
    k = len(releases)
    # the axis names what was released: the releases' own statistic, not the one selected now
    released = {str(getattr(r, "query", query)) for r in releases}
    if len(released) == 1:
        query = released.pop()
    elif released:  # releases of several statistics on one axis: name them all
        query = " / ".join(sorted(released))
    rows = [
        {
            "release": i + 1,
            "value": float(r.value),
            "which": "latest release" if i == k - 1 else "earlier releases",
            "value_text": format_value(float(r.value), getattr(r, "lattice", None)),
            "lattice_text": _lattice_text(getattr(r, "lattice", None)),
            "epsilon": float(r.epsilon),
        }
        for i, r in enumerate(releases)
    ]
    pts = pd.DataFrame(rows, columns=["release", "value", "which", "value_text", "lattice_text", "epsilon"])
    layers: dict[str, pd.DataFrame] = {}
    if density is not None:
        layers["density"] = density[(density["x"] >= lo) & (density["x"] <= hi)]
    layers["extent"] = pd.DataFrame({"value": [lo, hi], "release": [0.5, max(k, 1) + 0.5]})
    layers["latest"] = pts.tail(1)
    layers["truth"] = pd.DataFrame(
        {
            "value": [] if true_value is None else [float(true_value)],
            "which": [] if true_value is None else ["true value (teaching only)"],
        }
    )
    layers["points"] = pts
    layers["note"] = pd.DataFrame({"note": [note] if note else []}, dtype=object)
    options = {
        "bounds": (lo, hi),
        "name": name,
        "query": query,
        "density_label": density_label if density is not None else None,
        # the legend lists what is drawn: no "earlier releases" beside one release, no "true value" unless shown
        "keys": tuple(key for key, shown in zip(_KEYS, (k >= 1, k >= 2, true_value is not None), strict=True) if shown),
    }
    return Figure(_draw_release, layers, options)


def _draw_release(
    layers: Mapping[str, pd.DataFrame],
    *,
    bounds: tuple[float, float],
    name: str,
    query: str,
    density_label: str | None,
    keys: tuple[str, ...],
) -> alt.TopLevelMixin:
    """The layers of :func:`release_chart` around the rows of its figure (a density on top when it has one)."""
    lo, hi = bounds
    query = query.replace("_", " ")  # "trimmed mean", as a reader writes it
    x = alt.X(
        "value:Q",
        axis=style.axis(f"{query} of {name}", tickCount=6, format=style.NUMBER_FORMAT),
        scale=alt.Scale(domain=[lo, hi], nice=False, zero=False),
    )
    y = alt.Y(
        "release:Q",
        axis=style.axis(
            "release number", tickMinStep=1, labelExpr="datum.value == floor(datum.value) ? datum.value : ''"
        ),
        scale=alt.Scale(zero=False, nice=False),
    )
    if keys:
        colour = style.color("which", "", domain=keys, range_=[_KEY_COLOURS[key] for key in keys])
    else:  # nothing drawn yet: no legend
        colour = alt.Color(
            "which:N", legend=None, scale=alt.Scale(domain=list(_KEYS), range=list(_KEY_COLOURS.values()))
        )
    tips = [
        alt.Tooltip("release:Q", title="release"),
        alt.Tooltip("value_text:N", title="value"),
        alt.Tooltip("lattice_text:N", title="lattice step"),
        alt.Tooltip("epsilon:Q", title="ε"),
    ]
    strip = alt.layer(
        alt.Chart(style.data(layers["extent"])).mark_point(opacity=0, size=0).encode(x=x, y=y),
        alt.Chart(style.data(layers["latest"]))
        .mark_rule(strokeWidth=2, color=style.PALETTE[0])
        .encode(x=x, tooltip=tips),
        alt.Chart(style.data(layers["truth"]))
        .mark_rule(strokeWidth=2, strokeDash=style.DASHES["dotted"])
        .encode(x=x, color=colour),
        alt.Chart(style.data(layers["points"]))
        .mark_point(filled=True, size=90, opacity=1)
        .encode(x=x, y=y, color=colour, tooltip=tips),
        alt.Chart(style.data(layers["note"]))
        .mark_text(align="left", baseline="top", fontSize=12, color=style.INK)
        .encode(x=alt.XValue(4), y=alt.YValue(-16), text=alt.Text("note:N")),
    )
    heading = style.title(f"Private {query} of {name}")
    if density_label is None:
        return style.finish(strip, heading, height=200)
    top = (
        alt.Chart(style.data(layers["density"]))
        .mark_area(opacity=0.35, line=True, color=style.PALETTE[4])
        .encode(
            x=alt.X("x:Q", axis=style.axis("", labels=False), scale=alt.Scale(domain=[lo, hi], nice=False, zero=False)),
            y=alt.Y("density:Q", axis=style.axis("noise density")),
            tooltip=[alt.Tooltip("x:Q", format=".6g"), alt.Tooltip("density:Q", format=".4g")],
        )
        .properties(
            width=style.WIDTH,
            height=140,
            title=alt.TitleParams(
                f"noise density ({density_label})", fontSize=12, color=style.PALETTE[3], anchor="start"
            ),
        )
    )
    bottom = strip.properties(width=style.WIDTH, height=160)
    return alt.vconcat(top, bottom, spacing=8).properties(title=heading)
