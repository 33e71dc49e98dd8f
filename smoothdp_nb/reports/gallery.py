"""The chart gallery: every chart builder on example data, as SVG and PNG.

Written by ``python -m smoothdp_nb gallery --out DIR`` (:mod:`smoothdp_nb.cli.gallery`).
One page (``DIR/index.html``) shows every figure of the package, so that a
reviewer can look at all of them in one place; each figure is also written as
``DIR/<name>.svg`` and ``DIR/<name>.png`` (rendered offline by vl-convert).
The example data are small (the whole gallery takes well under a minute) but
real: every number is computed by the public API.
"""

from __future__ import annotations

import html
import inspect
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

import smoothdp_nb as sdp
from smoothdp_nb.core.numerics.array_types import FloatArray
from smoothdp_nb.core.release.noise import calibrate
from smoothdp_nb.core.release.reports import NoiseComparison, ReleaseReport
from smoothdp_nb.core.release.sensitivity import smooth_sensitivity
from smoothdp_nb.core.smoothed.reports import profile
from smoothdp_nb.display import (
    bound_chart,
    comparison_chart,
    composition_chart,
    figure1_chart,
    noise_chart,
    release_chart,
    release_density,
    render_png,
    render_svg,
)
from smoothdp_nb.display.results import public_note
from smoothdp_nb.reports.page import CSP_LOCAL_IMAGES, document

__all__ = ["FIGURES", "build", "index_page"]


def _smoothed_exact() -> alt.TopLevelMixin:
    mech = sdp.SamplingHistogram(eta="0.99")
    return sdp.smoothed_delta(
        mech, 2000, sdp.datasets.us_2020_district_shares(), np.linspace(0.5, 7, 14), progress=False
    ).chart()


def _smoothed_monte_carlo() -> alt.TopLevelMixin:
    mech = sdp.SamplingHistogram(eta="0.98")
    return sdp.smoothed_delta(
        mech,
        400,
        [[0.45, 0.55], [0.55, 0.45]],
        np.linspace(0.05, 1.5, 12),
        method="monte-carlo",
        trials=2000,
        rng=1,
        progress=False,
    ).chart()


def _curve() -> alt.TopLevelMixin:
    mech = sdp.SamplingHistogram(eta="0.99")
    return sdp.smoothed_delta_curve(
        mech, [500, 1000, 2000, 4000], sdp.datasets.us_2020_district_shares(), [0.5, 1.0, 2.0, 7.0], progress=False
    ).chart()


def _curve_monte_carlo() -> alt.TopLevelMixin:
    mech = sdp.SamplingHistogram(eta="0.95")
    return sdp.smoothed_delta_curve(
        mech,
        [100, 200, 400, 800],
        [[0.4, 0.6], [0.6, 0.4]],
        [0.5, 1.0],
        method="monte-carlo",
        trials=3000,
        rng=2,
        progress=False,
    ).chart()


def _elections() -> tuple[pd.DataFrame, np.ndarray]:
    table = sdp.datasets.us_presidential_elections()
    hists = table[["winner_votes", "runner_up_votes"]].to_numpy()
    return table, hists


def _figure1() -> alt.TopLevelMixin:
    table, hists = _elections()
    mech = sdp.SamplingHistogram(eta="0.998")
    t = 0.51
    epsilon = math.log(t / (1 - t))  # Appendix A.1: t = e^eps / (e^eps + 1)
    logd = np.asarray(sdp.privacy_profile(mech, hists, epsilon, log=True)) / math.log(10)
    util = np.maximum(
        sdp.adjusted_utility(mech, hists - [1, 0], t, log=True), sdp.adjusted_utility(mech, hists - [0, 1], t, log=True)
    ) / math.log(10)
    frame = pd.DataFrame(
        {
            "year": table["year"],
            "log10_delta": logd,
            "log10_utility": util,
            "dp_delta": [sdp.dp_delta(mech, int(n)) for n in hists.sum(axis=1)],
        }
    )
    return figure1_chart(frame, title="Figure 1: US elections, 0.2 % of votes lost, t = 51 %")


def _profile_years() -> alt.TopLevelMixin:
    table, hists = _elections()
    return profile(
        sdp.SamplingHistogram(eta="0.998"),
        hists,
        [0.04, 0.2, 0.4],
        labels=table["year"].tolist(),
        source="us-elections",
    ).chart()


def _profile_epsilon() -> alt.TopLevelMixin:
    return profile(
        sdp.SamplingHistogram(eta="0.9"),
        [[60, 40], [75, 25], [95, 5]],
        np.linspace(0, 2, 21),
        labels=["(60, 40)", "(75, 25)", "(95, 5)"],
    ).chart()


def _remark8() -> alt.TopLevelMixin:
    shares = sdp.datasets.us_2020_district_shares()
    ns, eps = [200, 400, 800, 1600], [1.0, 2.0, 7.0]
    exact = sdp.smoothed_delta_curve(sdp.SamplingHistogram(eta="0.5"), ns, shares, eps, progress=False).table
    f = float(sdp.reduce_to_vertices(shares).vertices.min())
    bound = np.asarray(sdp.remark8_bound(np.array(ns), 2, 0.5, eps, f, log=True)) / math.log(10)
    rows = [{"n": n, "epsilon": e, "log10_delta": bound[i, j]} for i, n in enumerate(ns) for j, e in enumerate(eps)]
    return bound_chart(exact, pd.DataFrame(rows), title="Remark 8 bound against the exact smoothed δ, η = 0.5")


def _noise() -> alt.TopLevelMixin:
    table = sdp.compare_noise(1.0, np.geomspace(1e-3, 0.999, 60), delta=1e-6, reference=True)
    return NoiseComparison(table=table, epsilon=1.0, delta=1e-6).chart()


def _noise_marker() -> alt.TopLevelMixin:
    table = sdp.compare_noise(0.5, np.geomspace(5e-4, 0.4995, 60), delta=1e-6, reference=True)
    return noise_chart(table, gamma=0.05, title="Noise std against γ, ε = 0.5 (dotted: γ = 0.05)")


def _release_data() -> FloatArray:
    return np.random.default_rng(3).beta(5, 4, size=400)


def _release_public() -> alt.TopLevelMixin:
    rel = sdp.release(_release_data(), "median", epsilon=1.0, bounds=(0.0, 1.0), rng=4)
    return ReleaseReport(release=rel, name="share").chart()


def _release_history() -> alt.TopLevelMixin:
    x = _release_data()
    rels = [sdp.release(x, "median", epsilon=0.5, bounds=(0.0, 1.0), rng=s) for s in range(5)]
    return release_chart(rels, (0.0, 1.0), name="share", query="median", note=public_note(rels[-1]))


def _release_diagnostics() -> alt.TopLevelMixin:
    x = _release_data()
    if "diagnostics" in inspect.signature(sdp.release).parameters:  # the release's own, opted-in diagnostics
        rel = sdp.release(x, "median", epsilon=1.0, bounds=(0.0, 1.0), rng=4, diagnostics=True)
        return ReleaseReport(release=rel, name="share").chart()
    rel = sdp.release(x, "median", epsilon=1.0, bounds=(0.0, 1.0), rng=4)
    cal = calibrate(rel.noise, rel.epsilon, rel.gamma)
    scale = float(smooth_sensitivity(x, "median", rel.gamma, bounds=(0.0, 1.0)) * cal.scale)
    dens = release_density(rel.noise, rel.epsilon, rel.gamma, scale, float(rel.value))
    return release_chart([rel], (0.0, 1.0), name="share", query="median", note=public_note(rel), density=dens)


def _release_empty() -> alt.TopLevelMixin:
    return release_chart([], (0.0, 1.0), name="share", query="median", note="nothing released yet: press Release")


def _composition() -> alt.TopLevelMixin:
    # the exact profile of ten runs of a sampling histogram against Proposition 5's sum, per database
    mech = sdp.SamplingHistogram(T=4)
    runs = sdp.repeat(mech, 10)
    eps = np.linspace(0.0, 6.0, 7)
    rows = []
    for hist in ([10, 0], [7, 3], [5, 5]):
        exact = np.atleast_1d(sdp.privacy_profile(runs, hist, eps))
        single = np.atleast_1d(sdp.privacy_profile(mech, hist, eps / 10))
        for e, d_exact, d_one in zip(eps, exact, single):
            rows.append({"database": str(hist), "epsilon": e, "exact": d_exact, "proposition5": min(1.0, 10 * d_one)})
    return composition_chart(pd.DataFrame(rows), title="Ten runs: exact composition (solid) vs Proposition 5 (dashed)")


def _release_methods() -> alt.TopLevelMixin:
    x = sdp.datasets.us_2020_districts()["biden_top2_share"].to_numpy()
    comparison = sdp.compare_releases(
        x,
        "median",
        1.0,
        bounds=(0, 1),
        lattice=2**-7,
        methods=["smooth-sensitivity", "exponential", "inverse-sensitivity"],
    )
    return comparison_chart(comparison)


#: name -> (caption, builder of the chart)
FIGURES: dict[str, tuple[str, Callable[[], alt.TopLevelMixin]]] = {
    "figure1_elections": ("Figure 1: δ(x) and the adjusted utility per election (figure1_chart)", _figure1),
    "profile_per_year": (
        "Privacy profile per election year, three ε (ProfileResult.chart / profile_chart)",
        _profile_years,
    ),
    "profile_per_epsilon": (
        "Privacy profile against ε, one line per database (profile_chart, x='epsilon')",
        _profile_epsilon,
    ),
    "smoothed_exact": ("Smoothed δ against ε, exact (SmoothedResult.chart / delta_vs_epsilon_chart)", _smoothed_exact),
    "smoothed_monte_carlo": (
        "Smoothed δ against ε, Monte Carlo with its band (delta_vs_epsilon_chart)",
        _smoothed_monte_carlo,
    ),
    "curve_exact": ("Smoothed δ against n with exponential fits (SmoothedCurve.chart / delta_vs_n_chart)", _curve),
    "curve_monte_carlo": ("Smoothed δ against n, Monte Carlo bands (delta_vs_n_chart)", _curve_monte_carlo),
    "remark8_bound": ("Remark 8: bound (dashed) against exact (solid) (bound_chart)", _remark8),
    "noise_comparison": ("Noise std per unit of smooth sensitivity (NoiseComparison.chart / noise_chart)", _noise),
    "noise_marker": ("Noise std with a γ marker, as in the panel (noise_chart)", _noise_marker),
    "release_public": ("A release: public numbers only (ReleaseReport.chart / release_chart)", _release_public),
    "release_history": ("Five releases, latest in blue (release_chart, as in the panel)", _release_history),
    "release_diagnostics": ("A release with the curator's diagnostics (noise density, labelled)", _release_diagnostics),
    "release_empty": ("The release panel's chart before the first release", _release_empty),
    "composition": ("Exact composition against Proposition 5, per database (composition_chart)", _composition),
    "release_methods": ("Error laws of three data-dependent releases, exact (comparison_chart)", _release_methods),
}


def index_page(records: list[dict[str, Any]]) -> str:
    """The gallery's ``index.html``: each figure's PNG with its caption and links to both files.

    Written by :func:`smoothdp_nb.reports.page.document`; the pictures are the
    files beside the page, so its policy allows local images (and nothing else).
    """
    items = "\n".join(
        f'<figure class="gallery" id="{r["name"]}"><img src="{r["name"]}.png" alt="{html.escape(r["caption"])}" '
        f'width="720"><figcaption><b>{html.escape(r["name"])}</b>: {html.escape(r["caption"])} '
        f'(<a href="{r["name"]}.svg">SVG</a>, <a href="{r["name"]}.png">PNG</a>)</figcaption></figure>'
        for r in records
    )
    body = (
        "<h1>smoothdp_nb chart gallery</h1>"
        f"<p class='lede'>{len(records)} figures, rendered offline by vl-convert; every number computed by the "
        "public API on small example data.</p>" + items
    )
    return document("smoothdp_nb chart gallery", body, csp=CSP_LOCAL_IMAGES)


def build(out: Path, names: list[str] | None = None, scale: float = 2.0) -> list[dict[str, Any]]:
    """Render the figures to ``out`` (SVG, PNG and ``index.html``); returns one record per figure.

    Parameters
    ----------
    out : Path
        Directory for the files (created).
    names : list of str, optional
        Keys of :data:`FIGURES` to render (default: all).
    scale : float
        PNG pixels per chart pixel.

    Returns
    -------
    list of dict
        Per figure its ``name``, ``caption`` and the ``seconds`` it took.

    Raises
    ------
    ValueError
        For a name that is not a key of :data:`FIGURES`.
    """
    unknown = [name for name in names or [] if name not in FIGURES]
    if unknown:
        raise ValueError(f"unknown figure {unknown[0]!r}; choose from {', '.join(FIGURES)}")
    out.mkdir(parents=True, exist_ok=True)
    records: list[dict[str, Any]] = []
    for name in names or list(FIGURES):
        caption, builder = FIGURES[name]
        t0 = time.perf_counter()
        chart = builder()
        (out / f"{name}.svg").write_text(render_svg(chart), encoding="utf-8")
        (out / f"{name}.png").write_bytes(render_png(chart, scale=scale))
        records.append({"name": name, "caption": caption, "seconds": time.perf_counter() - t0})
        print(f"  {name:<22} {records[-1]['seconds']:5.1f} s  {caption}", flush=True)
    (out / "index.html").write_text(index_page(records), encoding="utf-8")
    return records
