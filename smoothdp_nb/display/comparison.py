"""Builder for the exact comparison of release methods: the law of each method's error on one dataset."""

from __future__ import annotations

import math

import altair as alt
import numpy as np
import pandas as pd

from smoothdp_nb.core.release.compare import ReleaseComparison
from smoothdp_nb.core.release.methods.registry import METHODS, method_label
from smoothdp_nb.display import style

__all__ = ["comparison_chart", "comparison_frame", "comparison_summary"]

#: at most this many bins of error per method (the laws list every lattice cell)
MAX_BINS = 160


def comparison_frame(comparison: ReleaseComparison) -> pd.DataFrame:
    """Tidy rows ``method, label, error, probability``: each method's error law summed into common bins.

    The window covers the errors of probability above 1e-4 for every method; a bin is a whole number
    of lattice steps, so a point mass stays one point.
    """
    lo, hi = 0.0, 0.0
    for law in comparison.laws.values():
        err = law.values - comparison.true_value
        big = err[law.probabilities > 1e-4]
        if big.size:
            lo, hi = min(lo, float(big.min())), max(hi, float(big.max()))
    step = comparison.step
    span = max(hi - lo, step)
    width = step * max(1, math.ceil(span / step / MAX_BINS))
    rows = []
    for name, law in comparison.laws.items():
        err = law.values - comparison.true_value
        keep = (err >= lo - width) & (err <= hi + width)
        bins = np.round(err[keep] / width).astype(np.int64)
        sums = pd.Series(law.probabilities[keep]).groupby(bins).sum()
        refused = f" (⊥ {law.refusal:.3g})" if law.refusal > 0 else ""
        label = method_label(name) + refused
        for b, p in sums.items():
            rows.append({"method": name, "label": label, "error": float(b) * width, "probability": float(p)})
    return pd.DataFrame(rows, columns=["method", "label", "error", "probability"])


def comparison_chart(comparison: ReleaseComparison) -> alt.Chart:
    """Step lines of each method's error law (probability per bin of the error), refusals in the legend."""
    frame = comparison_frame(comparison)
    order = [m for m in METHODS if m in comparison.laws]
    labels = [frame.loc[frame["method"] == m, "label"].iloc[0] for m in order if (frame["method"] == m).any()]
    chart = (
        alt.Chart(style.data(frame))
        .mark_line(interpolate="step", strokeWidth=2)
        .encode(
            x=alt.X("error:Q", axis=style.axis("error of the release (released value − true value)")),
            y=alt.Y("probability:Q", axis=style.axis("probability (per bin)")),
            color=alt.Color(
                "label:N",
                scale=alt.Scale(domain=labels, range=style.PALETTE[: len(labels)]),
                legend=alt.Legend(title="method", orient="bottom", columns=2, labelLimit=0),
            ),
            tooltip=[
                alt.Tooltip("label:N", title="method"),
                alt.Tooltip("error:Q", format=".4g"),
                alt.Tooltip("probability:Q", format=".4g"),
            ],
        )
    )
    d = f", δ = {comparison.delta:g}" if comparison.delta is not None else ""
    return style.finish(
        chart,
        style.title(
            "Exact error laws of the data-dependent releases",
            f"{comparison.query}, ε = {comparison.epsilon:g}{d}; no unbiased ε-DP mechanism is exact with "
            f"probability above {comparison.unbiased_bound:.3g}",
        ),
    )


def comparison_summary(comparison: ReleaseComparison) -> pd.DataFrame:
    """One row per method: RMSE, P(|error| <= t), P(true value), P(refused)."""
    t = comparison.to_frame()
    return pd.DataFrame(
        {
            "method": [method_label(m) for m in t["method"]],
            "guarantee": t["guarantee"],
            "RMSE": [f"{v:.4g}" for v in t["rmse"]],
            f"P(|error| ≤ {comparison.tolerance:g})": [f"{v:.4g}" for v in t["p_within_t"]],
            "P(true value)": [f"{v:.4g}" for v in t["p_true_value"]],
            "P(refused)": [f"{v:.3g}" for v in t["p_refused"]],
        }
    )
