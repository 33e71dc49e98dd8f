"""Displays show the upper bound and say so: a delta a display
writes for a certified result reads "≤ x" with x at least the proven upper bound (so at
least the exact value), never a 4-digit figure rounded to nearest, which may lie below the
truth; a Monte Carlo mean is marked as an estimate ("≈ x")."""

import math

import numpy as np
import pytest

import smoothdp_nb as sdp
from smoothdp_nb.core.numerics.formatting import parse_number
from smoothdp_nb.core.smoothed.reports import profile
from smoothdp_nb.display import results as shown

# a reported case: the smoothed delta 0.166623318... rounds to nearest as 1.666e-01,
# below the truth
MECH = sdp.postprocess(sdp.SamplingHistogram(T=8), sdp.winner)
PI = [[0.75, 0.125, 0.125], [0.125, 0.75, 0.125], [0.125, 0.125, 0.75]]


@pytest.fixture(scope="module")
def exact():
    return sdp.smoothed_delta(MECH, 12, PI, 0.5)


def _bound(text):
    """The number of a "≤ x" text (fails on anything else)."""
    assert text.startswith("≤ "), text
    return parse_number(text[2:])


def test_smoothed_summary_says_upper_bound(exact):
    assert float(f"{exact.delta:.3e}") < exact.delta_lower  # the case: nearest rounding falls below the truth
    table = shown.smoothed_summary(exact)
    assert _bound(table["δ"].iloc[0]) >= exact.delta
    assert _bound(table["DP δ"].iloc[0]) >= exact.dp_delta


def test_smoothed_chart_tooltips_say_upper_bound(exact):
    spec = exact.chart().to_dict()
    texts = [
        r["delta_text"] for layer in spec["layer"] for r in layer.get("data", {}).get("values", []) if "delta_text" in r
    ]
    assert texts
    assert all(_bound(t) >= exact.delta for t in texts if t != "≤ " + "inf")


def test_profile_text_and_table_say_upper_bound():
    mech = sdp.SamplingHistogram(T=8)
    hists = [[6, 6], [5, 7], [12, 0]]
    res = profile(mech, hists, [0.0, 0.5])
    up = np.asarray(sdp.privacy_profile(mech, hists, [0.0, 0.5]))
    table = shown.profile_summary(res)
    for j, e in enumerate([0.0, 0.5]):
        col = table[f"δ at ε = {e:.4g}"]
        assert all(_bound(t) >= u for t, u in zip(col, up[:, j]))
    lines = str(res).splitlines()[2:]
    for i, line in enumerate(lines):
        vals = [parse_number(v.split()[0]) for v in line.split("≤ ")[1:3]]
        assert vals and all(v >= u for v, u in zip(vals, up[i]))


def test_monte_carlo_summary_marks_estimates():
    mc = sdp.smoothed_delta(MECH, 12, PI, 0.5, method="monte-carlo", trials=500, rng=5)
    table = shown.smoothed_summary(mc)
    assert table["δ"].iloc[0].startswith("≈ ")
    assert math.isfinite(parse_number(table["δ"].iloc[0][2:]))
