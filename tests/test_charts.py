"""Charts: pure builders, row limit, and the offline rich display."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pandas as pd
import pytest

alt = pytest.importorskip("altair")

import smoothdp_nb as sdp  # noqa: E402
from smoothdp_nb import charts  # noqa: E402

PI = [[0.2, 0.8], [0.6, 0.4]]


@pytest.fixture(scope="module")
def exact():
    return sdp.smoothed_delta(sdp.SamplingHistogram(eta=0.9), 60, PI, [0.5, 1, 2])


@pytest.fixture(scope="module")
def monte_carlo():
    return sdp.smoothed_delta(
        sdp.SamplingHistogram(eta=0.9), 60, PI, [0.5, 1, 2], method="monte-carlo", trials=200, rng=1
    )


@pytest.fixture(scope="module")
def curve():
    return sdp.smoothed_delta_curve(sdp.SamplingHistogram(eta=0.9), [20, 40, 60], PI, [0.5, 2])


def _layers(chart) -> list[dict]:
    return chart.to_dict()["layer"]


def _marks(chart) -> list[str]:
    out = []
    for layer in _layers(chart):
        m = layer["mark"]
        out.append(m if isinstance(m, str) else m["type"])
    return out


def _dataset_sizes(chart) -> list[int]:
    return [len(v) for v in chart.to_dict().get("datasets", {}).values()]


def test_format_log10_handles_underflow():
    assert charts.format_log10(-320.5) == "3.162e-321"
    assert charts.format_log10(-math.inf) == "0"
    assert charts.format_log10(math.log10(9.99999)) == "1.000e+01"


def test_delta_vs_eps_exact(exact):
    ch = charts.smoothed_chart(exact)
    spec = ch.to_dict()
    marks = _marks(ch)
    assert "line" in marks and "rule" in marks  # curve and DP reference
    assert "area" not in marks  # no band for an exact result
    y = spec["layer"][0]["encoding"]["y"]
    assert y["field"] == "log10_delta" and "1e" in y["axis"]["labelExpr"]
    rule = spec["layer"][marks.index("rule")]
    ref = next(v for v in spec["datasets"].values() if len(v) == 1 and "label" in v[0])
    assert ref[0]["log10_delta"] == pytest.approx(math.log10(exact.dp_delta))
    assert rule["encoding"]["y"]["field"] == "log10_delta"
    # tooltips carry the value as e-notation text
    line = spec["layer"][marks.index("line")]
    assert any(t["field"] == "delta_text" for t in line["encoding"]["tooltip"])
    data = max(spec["datasets"].values(), key=len)
    assert len(data) == 3 and "e-" in data[0]["delta_text"]


def test_monte_carlo_band(monte_carlo):
    ch = monte_carlo.chart()
    marks = _marks(ch)
    assert "area" in marks
    band = ch.to_dict()["layer"][marks.index("area")]
    assert band["encoding"]["y"]["field"] == "ci_lo10" and band["encoding"]["y2"]["field"] == "ci_hi10"
    # intervals reaching 0 are drawn down to a finite floor (JSON has no -inf)
    json.dumps(ch.to_dict(), allow_nan=False)


def test_curve_chart_fit_lines(curve):
    ch = curve.chart()
    spec = ch.to_dict()
    marks = _marks(ch)
    assert marks.count("line") == 2 and "rule" in marks
    fit = spec["layer"][1]
    assert fit["mark"]["strokeDash"]
    assert fit["encoding"]["color"]["field"] == "epsilon"
    fit_data = spec["datasets"][fit["data"]["name"]]
    assert len(fit_data) == 2 * len(curve.fits)
    f0 = curve.fits.iloc[0]
    row = next(r for r in fit_data if r["epsilon"] == f0["epsilon"] and r["n"] == 20)
    assert row["log10_delta"] == pytest.approx((f0["intercept"] + f0["slope"] * 20) / math.log(10))


def test_delta_vs_eps_full_table_keeps_max_per_eps():
    # 3 epsilon x 3000 compositions = 9000 rows: reduced to the worst composition per epsilon
    rng = np.random.default_rng(0)
    k = np.arange(3000)
    frame = pd.concat(
        [pd.DataFrame({"epsilon": e, "n_a": k, "n_b": 2999 - k, "log_delta": -e * 10 - rng.random(3000)}) for e in (0.5, 1, 2)],
        ignore_index=True,
    )
    frame.loc[17, "log_delta"] = -1.0
    ch = charts.delta_vs_eps_chart(frame)
    sizes = _dataset_sizes(ch)
    assert max(sizes) == 3
    data = max(ch.to_dict()["datasets"].values(), key=len)
    assert data[0]["log10_delta"] == pytest.approx(-1.0 / math.log(10))


def test_row_limit_thins_large_grids():
    epsilon = np.linspace(0.01, 10, 6000)
    frame = pd.DataFrame({"epsilon": epsilon, "log10_delta": -epsilon * 3, "dp_delta": 0.5})
    ch = charts.delta_vs_eps_chart(frame)
    assert max(_dataset_sizes(ch)) <= charts.MAX_ROWS
    got = max(ch.to_dict()["datasets"].values(), key=len)
    assert got[0]["epsilon"] == epsilon[0] and got[-1]["epsilon"] == epsilon[-1]

    ns = np.arange(1, 3001)
    table = pd.concat([pd.DataFrame({"n": ns, "epsilon": e, "log10_delta": -e * ns / 100}) for e in (0.5, 1)], ignore_index=True)
    ch = charts.delta_vs_n_chart(table)
    assert 0 < max(_dataset_sizes(ch)) <= charts.MAX_ROWS

    prof = pd.DataFrame(
        [(y, e, -e * (y - 1970) / 10) for y in range(1976, 2024, 4) for e in np.linspace(0.1, 8, 600)],
        columns=["year", "epsilon", "log10_delta"],
    )
    assert len(prof) > 5000
    ch = charts.profile_chart(prof, x="year")
    assert 0 < max(_dataset_sizes(ch)) <= charts.MAX_ROWS
    got = pd.DataFrame(max(ch.to_dict()["datasets"].values(), key=len))
    assert got["year"].nunique() == 12  # every database kept; the epsilon grid is thinned


def test_profile_chart_encodings():
    prof = pd.DataFrame(
        {"label": ["2016", "2016", "2020", "2020"], "epsilon": [0.5, 1.0, 0.5, 1.0], "log10_delta": [-30, -40, -31, -41.5], "dp_delta": 0.1}
    )
    ch = charts.profile_chart(prof, x="label")
    enc = ch.to_dict()["layer"][0]["encoding"]
    assert enc["x"]["field"] == "label" and enc["color"]["field"] == "epsilon"
    assert "rule" in _marks(ch)
    ch = charts.profile_chart(prof, x="epsilon")
    enc = ch.to_dict()["layer"][0]["encoding"]
    assert enc["x"]["field"] == "epsilon" and enc["color"]["field"] == "label"
    with pytest.raises(ValueError, match="year"):
        charts.profile_chart(prof)  # no 'year' column


_URL = re.compile(r"https?://[^\s\"'<>)]+")


def _check_offline_html(page: str) -> None:
    assert "<svg" in page
    assert "<script" not in page.lower()
    # the only URLs allowed are the SVG/XLink namespace names
    for url in _URL.findall(page):
        assert url.startswith("http://www.w3.org/"), url


def test_mimebundle_end_to_end(exact, monte_carlo, curve):
    for obj in (exact, monte_carlo, curve):
        bundle = obj._repr_mimebundle_()
        assert set(bundle) == {"text/plain", "text/html"}
        assert bundle["text/plain"] == str(obj)
        _check_offline_html(bundle["text/html"])
        assert "<table" in bundle["text/html"]
    assert "DP δ" in exact._repr_mimebundle_()["text/html"]
    assert "interval" in monte_carlo._repr_mimebundle_()["text/html"]


def test_mimebundle_falls_back_without_chart(monkeypatch, exact):
    def boom(chart):
        raise RuntimeError("renderer unavailable\nsecond line")

    monkeypatch.setattr(charts, "render_svg", boom)
    page = charts.mimebundle(exact)["text/html"]
    assert "<table" in page and "<svg" not in page
    assert "chart not rendered: RuntimeError: renderer unavailable" in page
    assert "Traceback" not in page and "second line" not in page


def test_profile_chart_from_privacy_profile_renders():
    mech = sdp.SamplingHistogram(eta=0.998)
    years = [2012, 2016, 2020]
    epsilon = np.array([0.5, 1.0, 2.0])
    hists = np.array([sdp.datasets.election_histogram(y) for y in years])
    logd = np.asarray(sdp.privacy_profile(mech, hists, epsilon, log=True))
    frame = pd.DataFrame(
        {"year": np.repeat(years, len(epsilon)), "epsilon": np.tile(epsilon, len(years)), "log10_delta": logd.ravel() / math.log(10)}
    )
    ch = charts.profile_chart(frame)
    data = max(ch.to_dict()["datasets"].values(), key=len)
    assert len(data) == 9
    _check_offline_html("<div>" + charts.render_svg(ch) + "</div>")


def test_degenerate_frames_still_build():
    # every delta exactly 0 and a Monte Carlo interval of [0, 0]: nothing to draw, no error
    f = pd.DataFrame({"epsilon": [1.0, 2.0], "delta": [0.0, 0.0], "dp_delta": 0.5, "ci_low": 0.0, "ci_high": 0.0})
    ch = charts.delta_vs_eps_chart(f)
    json.dumps(ch.to_dict(), allow_nan=False)
    assert "area" not in _marks(ch)
    fits = pd.DataFrame({"epsilon": [1.0], "slope": [math.nan], "intercept": [math.nan]})
    ch = charts.delta_vs_n_chart(pd.DataFrame({"n": [10, 20], "epsilon": 1.0, "log_delta": [-1.0, -2.0]}), fits)
    assert _marks(ch) == ["line"]  # no fit to draw, no DP delta given
