"""The display layer: builders, readability of the rendered charts, the registry and the rich display."""

from __future__ import annotations

import ast
import itertools
import json
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

alt = pytest.importorskip("altair")
vlc = pytest.importorskip("vl_convert")

import smoothdp_nb as sdp
from smoothdp_nb import display
from smoothdp_nb.core.release.reports import NoiseComparison, ReleaseReport
from smoothdp_nb.core.runtime import rendering
from smoothdp_nb.core.smoothed.reports import profile
from smoothdp_nb.display import delta, render, style
from smoothdp_nb.panels.live import rename_datasets

PI = [[0.2, 0.8], [0.6, 0.4]]
ROOT = Path(__file__).resolve().parents[2]
_SUP = "⁰¹²³⁴⁵⁶⁷⁸⁹⁻"


@pytest.fixture(scope="module")
def exact():
    return sdp.smoothed_delta(sdp.SamplingHistogram(eta=0.9), 60, PI, [0.5, 1, 2], progress=False)


@pytest.fixture(scope="module")
def monte_carlo():
    return sdp.smoothed_delta(
        sdp.SamplingHistogram(eta=0.9), 60, PI, [0.5, 1, 2], method="monte-carlo", trials=200, rng=1, progress=False
    )


@pytest.fixture(scope="module")
def curve():
    return sdp.smoothed_delta_curve(sdp.SamplingHistogram(eta=0.9), [20, 40, 60], PI, [0.5, 2], progress=False)


@pytest.fixture(scope="module")
def elections():
    table = sdp.datasets.us_presidential_elections()
    hists = table[["winner_votes", "runner_up_votes"]].to_numpy()
    return profile(
        sdp.SamplingHistogram(eta="0.998"), hists, [0.04, 0.2], labels=table["year"].tolist(), source="us-elections"
    )


# ----------------------------------------------------------------------------- helpers


def _units(spec: dict) -> list[dict]:
    out = []
    for key in ("layer", "vconcat", "hconcat"):
        for sub in spec.get(key, []):
            out += _units(sub)
    if "mark" in spec:
        out.append(spec)
    return out


def _marks(chart) -> list[str]:
    return [u["mark"] if isinstance(u["mark"], str) else u["mark"]["type"] for u in _units(chart.to_dict())]


def _rows(chart, mark: str) -> list[list[dict]]:
    """The data rows of every layer drawing ``mark``."""
    spec = chart.to_dict()
    return [
        u["data"]["values"] if "values" in u["data"] else spec["datasets"][u["data"]["name"]]
        for u in _units(spec)
        if (u["mark"] if isinstance(u["mark"], str) else u["mark"]["type"]) == mark
    ]


def _sizes(chart) -> list[int]:
    """Rows of every layer's data (named datasets or inline records)."""
    spec = chart.to_dict()
    return [
        len(u["data"]["values"]) if "values" in u["data"] else len(spec["datasets"][u["data"]["name"]])
        for u in _units(spec)
        if "data" in u
    ]


def _svg_texts(svg: str) -> list[tuple[float, float, str]]:
    """(x, y, text) of every text element of a vl-convert SVG."""
    out = []
    for m in re.finditer(r'<text[^>]*transform="translate\(([-\d.]+),\s*([-\d.]+)\)"[^>]*>([^<]*)</text>', svg):
        out.append((float(m.group(1)), float(m.group(2)), m.group(3)))
    return out


def _axis_labels(svg: str) -> list[list[tuple[float, float, str]]]:
    """The tick labels of each axis (vl-convert groups them in ``role-axis-label`` marks)."""
    out = []
    for chunk in svg.split('class="mark-text role-axis-label"')[1:]:
        out.append(_svg_texts(chunk.split("</g>")[0]))
    return out


def _svg_size(svg: str) -> tuple[float, float]:
    w, h = re.search(r'<svg[^>]*width="([\d.]+)"[^>]*height="([\d.]+)"', svg).groups()
    return float(w), float(h)


def _log_labels(svg: str) -> list[str]:
    return [t for _, _, t in _svg_texts(svg) if t.startswith("10") and any(c in _SUP for c in t)]


# ----------------------------------------------------------------------------- layering


def test_core_never_imports_the_display_layer():
    """No module of smoothdp_nb.core imports display, panels, magics, Altair or ipywidgets, even inside a function."""
    banned = ("altair", "ipywidgets", "IPython", "anywidget")
    ui = ("display", "panels", "magics", "spec", "cli", "reports", "charts", "results_charts", "widgets")
    for path in sorted((ROOT / "smoothdp_nb" / "core").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                depth = len(path.relative_to(ROOT / "smoothdp_nb").parts) - 1  # levels inside the package
                if node.level > depth:  # reaches above core: only smoothdp_nb.<ui module> would be reachable
                    names = [node.module or ""] + [a.name for a in node.names]
                    assert not set(names) & set(ui), f"{path}: imports {names} from above the core"
                names = [node.module or ""]
            else:
                continue
            for name in names:
                assert name.split(".")[0] not in banned, f"{path}: imports {name}"
                assert not re.match(r"smoothdp_nb\.(display|panels|magics|spec|cli|gallery)", name), f"{path}: {name}"


def test_import_is_light_and_charts_load_on_first_display():
    code = (
        "import sys, smoothdp_nb as sdp\n"
        "assert 'altair' not in sys.modules\n"
        "r = sdp.smoothed_delta(sdp.SamplingHistogram(eta=0.9), 20, [[0.2, 0.8], [0.6, 0.4]], 1.0, progress=False)\n"
        "b = r._repr_mimebundle_()\n"
        "assert 'altair' in sys.modules and '<svg' in b['text/html'], b.keys()\n"
        "print(sorted(sdp.core.runtime.rendering.renderers.kinds))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert out.strip() == str(
        sorted(["noise-comparison", "profile", "release", "release-comparison", "smoothed", "smoothed-curve"])
    )


def test_registry_falls_back_to_plain_text_and_explains_missing_charts():
    reg = rendering.RendererRegistry()

    class Thing:
        def __str__(self):
            return "a thing"

    assert reg.get("thing") is None and reg.bundle_route is None
    assert rendering.mimebundle(Thing(), "no-such-kind") == {"text/plain": "a thing"}
    with pytest.raises(ImportError, match="Altair"):
        rendering.chart(Thing(), "no-such-kind")
    with pytest.raises(TypeError, match="kind"):
        reg.register("", lambda o: o)
    with pytest.raises(TypeError, match="fn"):
        reg.register("thing", 3)
    calls = []
    reg.set_loader(lambda: calls.append(1) or reg.register("thing", lambda o: "chart of " + str(o)))
    assert reg.get("thing").chart(Thing()) == "chart of a thing"
    reg.get("other")
    assert calls == [1]  # the loader runs once


def test_results_use_the_registered_builders(exact, curve, elections):
    assert (
        exact.chart().to_dict()
        == display.delta_vs_epsilon_chart(exact.to_frame(), title=exact.chart().title, note=None).to_dict()
    )
    assert _marks(curve.chart()).count("line") == 2  # computed and fits: one builder, not two
    assert "line" in _marks(elections.chart())


# ----------------------------------------------------------------------------- readability


def test_log_axis_labels_are_powers_of_ten_written_once(exact, monte_carlo, curve, elections):
    wide = pd.DataFrame({"epsilon": [0.5, 1, 2], "log10_delta": [-3.04, -3.02, -3.01], "dp_delta": np.nan})
    for chart in (
        exact.chart(),
        monte_carlo.chart(),
        curve.chart(),
        elections.chart(),
        display.delta_vs_epsilon_chart(wide),
    ):
        svg = render.render_svg(chart)
        labels = _log_labels(svg)
        assert len(labels) >= 2, labels
        assert len(labels) == len(set(labels)), f"repeated tick labels {labels}"
        for lab in labels:
            assert re.fullmatch(r"10[⁻]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+", lab), lab
        assert "e-" not in " ".join(t for _, _, t in _svg_texts(svg) if t[:1].isdigit())


def _overlaps(labels: list[tuple[float, float, str]], size: float = 12.0) -> list[tuple[str, str]]:
    """Horizontally adjacent labels on one baseline whose estimated extents intersect."""
    bad = []
    rows: dict[float, list] = {}
    for x, y, t in labels:
        rows.setdefault(round(y), []).append((x, t))
    for row in rows.values():
        row.sort()
        for (x0, t0), (x1, t1) in itertools.pairwise(row):
            if x1 - x0 < 0.55 * size * (len(t0) + len(t1)) / 2 + 2:
                bad.append((t0, t1))
    return bad


def test_year_axis_labels_do_not_run_together(elections):
    svg = render.render_svg(elections.chart())
    years = [(x, y, t) for ticks in _axis_labels(svg) for x, y, t in ticks if re.fullmatch(r"(19|20)\d\d", t)]
    assert 4 <= len(years) <= 13, [t for *_, t in years]
    assert not _overlaps(years)


def test_axis_labels_never_overlap_in_the_gallery_figures():
    from smoothdp_nb.reports import gallery

    for name in ("noise_comparison", "release_history", "curve_exact"):
        svg = render.render_svg(gallery.FIGURES[name][1]())
        w, h = _svg_size(svg)
        assert 0 < w < 2000 and 0 < h < 2000, (name, w, h)
        axes = _axis_labels(svg)
        assert len(axes) >= 2
        for ticks in axes:
            assert not _overlaps(ticks), (name, _overlaps(ticks))


def test_figure1_draws_delta_and_utility_in_two_panels():
    frame = pd.DataFrame(
        {
            "year": [2012, 2016, 2020],
            "log10_delta": [-25.0, -26.0, -30.0],
            "log10_utility": [-25.1, -26.2, -30.5],
            "dp_delta": 0.998,
        }
    )
    chart = display.figure1_chart(frame, title="Figure 1")
    spec = chart.to_dict()
    assert len(spec["vconcat"]) == 2
    fields = [
        {u["encoding"]["y"]["field"] for u in _units(panel) if "y" in u.get("encoding", {})}
        for panel in spec["vconcat"]
    ]
    assert "log10_delta" in fields[0] and "log10_utility" in fields[1]
    svg = render.render_svg(chart)
    assert "δ(x), Definition 2" in svg and "adjusted utility, eq. (3)" in svg and "Figure 1" in svg
    with pytest.raises(ValueError, match="log10_utility"):
        display.figure1_chart(frame.drop(columns="log10_utility"))


def _legends(chart) -> list[dict]:
    return vlc.vegalite_to_vega(chart.to_dict()).get("legends", [])


def test_line_style_legends_draw_their_strokes(curve, elections):
    exact_df = pd.DataFrame({"n": [10, 20], "epsilon": 1.0, "log10_delta": [-2.0, -4.0]})
    bound_df = pd.DataFrame({"n": [10, 20], "epsilon": 1.0, "log10_delta": [-1.0, -2.0]})
    for chart in (curve.chart(), elections.chart(), display.bound_chart(exact_df, bound_df)):
        dash = [lg for lg in _legends(chart) if "strokeDash" in lg]
        assert len(dash) == 1
        stroke = dash[0].get("encode", {}).get("symbols", {}).get("update", {}).get("stroke", {})
        assert stroke.get("value") != "transparent", dash[0]


def test_colours_come_from_the_colour_blind_safe_palette(curve, elections):
    nc = NoiseComparison(table=sdp.compare_noise(1.0, [0.01, 0.1, 0.5], delta=1e-6, reference=True), epsilon=1.0)
    for chart in (curve.chart(), elections.chart(), nc.chart()):
        for scale in vlc.vegalite_to_vega(chart.to_dict())["scales"]:
            if scale["name"] in ("color", "stroke", "fill"):
                assert set(scale["range"]) <= set(style.PALETTE), scale["range"]
    assert "#F0E442" not in style.PALETTE  # Okabe-Ito yellow vanishes on a projector
    # a family keeps its colour whichever families are drawn (PolyPlace is always the first colour)
    for fams in (("polyplace", "cauchy"), ("cauchy", "polyplace", "student_t")):
        table = sdp.compare_noise(1.0, [0.01, 0.1], delta=1e-6, families=fams, reference=False)
        scale = next(
            s for s in vlc.vegalite_to_vega(display.noise_chart(table).to_dict())["scales"] if s["name"] == "color"
        )
        assert dict(zip(scale["domain"], scale["range"]))["PolyPlace"] == style.PALETTE[0]


def test_epsilon_legend_reads_the_values_not_zero(elections):
    svg = render.render_svg(elections.chart())
    texts = [t for *_, t in _svg_texts(svg)]
    assert "0.04" in texts and "0.2" in texts


# ----------------------------------------------------------------------------- Monte Carlo


def test_band_drawn_only_where_informative():
    mask, lo10, hi10 = delta.informative_band([1e-22, 0.0, 0.01, 0.05], [10**-1.5, 0.1, 0.02, 0.6])
    assert mask.tolist() == [False, False, True, False]  # 20 decades, zero lower end, 0.3 decade, 1.08 decades
    assert lo10[2] == pytest.approx(-2.0) and hi10[2] == pytest.approx(math.log10(0.02))


def test_monte_carlo_chart_says_so_and_keeps_the_exact_structure(exact, monte_carlo):
    mc = monte_carlo.chart()
    notes = [r for rows in _rows(mc, "text") for r in rows if "note" in r]
    assert notes and "Monte Carlo" in notes[0]["note"] and "200 trials" in notes[0]["note"]
    assert not [r for rows in _rows(exact.chart(), "text") for r in rows if "note" in r]
    band = _rows(mc, "area")[0]
    frame = monte_carlo.to_frame()
    keep = delta.informative_band(frame["ci_low"], frame["ci_high"])[0]
    assert len(band) == int(keep.sum())
    # same layers whatever the data: a panel switching exact <-> Monte Carlo updates in place
    a = rename_datasets(display.delta_vs_epsilon_chart(exact.to_frame(), title="t").to_dict())[0]
    b = rename_datasets(display.delta_vs_epsilon_chart(frame, title="t", note="Monte Carlo").to_dict())[0]
    assert a == b


def test_row_limit_thins_large_grids():
    frame = pd.DataFrame({"epsilon": np.linspace(0, 5, 9000), "log10_delta": np.linspace(-1, -50, 9000)})
    chart = display.delta_vs_epsilon_chart(frame)
    assert 0 < max(_sizes(chart)) <= style.MAX_ROWS
    table = pd.DataFrame(
        {
            "n": np.repeat(np.arange(3000), 2),
            "epsilon": np.tile([1.0, 2.0], 3000),
            "log10_delta": -np.arange(6000) / 100,
        }
    )
    chart = display.delta_vs_n_chart(table)
    assert 0 < max(_sizes(chart)) <= style.MAX_ROWS


def test_degenerate_frames_still_build():
    # every delta exactly 0 and an interval of [0, 0]: nothing to draw, no error, no NaN in the JSON
    f = pd.DataFrame({"epsilon": [1.0, 2.0], "delta": [0.0, 0.0], "dp_delta": 0.5, "ci_low": 0.0, "ci_high": 0.0})
    chart = display.delta_vs_epsilon_chart(f)
    json.dumps(chart.to_dict(), allow_nan=False)
    assert _rows(chart, "area") == [[]] and _rows(chart, "line") == [[]]
    fits = pd.DataFrame({"epsilon": [1.0], "slope": [math.nan], "intercept": [math.nan]})
    chart = display.delta_vs_n_chart(pd.DataFrame({"n": [10, 20], "epsilon": 1.0, "log_delta": [-1.0, -2.0]}), fits)
    assert [len(r) for r in _rows(chart, "line")] == [2, 0]  # the computed line; no fit to draw
    with pytest.raises(ValueError, match="x='year'"):
        display.profile_chart(pd.DataFrame({"label": ["a"], "epsilon": [1.0], "log10_delta": [-3.0]}))


# ----------------------------------------------------------------------------- releases


@pytest.fixture(scope="module")
def income():
    return np.random.default_rng(5).uniform(0, 100, 300)


def test_release_chart_shows_public_numbers_only(income):
    rel = sdp.release(income, "median", epsilon=1.0, bounds=(0.0, 100.0), rng=3)
    report = ReleaseReport(release=rel, name="income")
    chart = report.chart()
    assert "area" not in _marks(chart)  # no noise density without diagnostics
    spec = json.dumps(chart.to_dict())
    public = {float(rel.value), 1.0, 0.0, 100.0}
    spec = chart.to_dict()
    rows = [
        r
        for u in _units(spec)
        if "data" in u
        for r in (u["data"].get("values") or spec.get("datasets", {}).get(u["data"].get("name"), []))
    ]
    numbers = {float(v) for r in rows for v in r.values() if isinstance(v, (int, float))}
    assert numbers <= public | {0.5, 1.5}, numbers - public  # 0.5 and 1.5: the release-number axis' extent
    assert "smooth sensitivity" not in json.dumps(spec).lower()
    svg = render.render_svg(chart)
    assert rel.guarantee in svg
    html = report._repr_mimebundle_()["text/html"]
    assert "curator" not in html.lower() or "data-dependent" in html.lower()


def test_release_density_is_labelled_and_exact_at_the_centre():
    # Laplace with scale b = SS * cal.scale: density at the centre 1/(2 s), with s the noise scale
    from smoothdp_nb.core.release.noise import calibrate

    cal = calibrate("laplace", 1.0, 0.05, delta=1e-6)
    dens = display.release_density("laplace", 1.0, 0.05, 2.0, 10.0, delta=1e-6, points=201)
    mid = dens.iloc[100]
    assert mid["x"] == pytest.approx(10.0, abs=1e-12)
    assert mid["density"] == pytest.approx(float(cal.distribution.pdf(0.0)) / 2.0, rel=1e-12)
    assert np.all(np.diff(dens["x"]) > 0)
    chart = display.release_chart([], (0.0, 20.0), density=dens)
    assert "data-dependent: not covered by the privacy guarantee" in json.dumps(chart.to_dict(), ensure_ascii=False)


def test_release_chart_before_any_release_has_a_finite_size():
    chart = display.release_chart([], (0.0, 1.0), name="share", query="median", note="nothing released yet")
    w, h = _svg_size(render.render_svg(chart))
    assert 100 < w < 2000 and 100 < h < 2000
    with pytest.raises(ValueError, match="bounds"):
        display.release_chart([], (1.0, 1.0))


# ----------------------------------------------------------------------------- rich display


_URL = re.compile(r"""(?:https?:)?//[^\s"'<>)]+""")


def _check_offline_html(page: str) -> None:
    assert "<svg" in page
    assert "<script" not in page.lower()
    for url in _URL.findall(page):  # only the SVG/XLink namespace names
        assert url.startswith("http://www.w3.org/"), url


def test_mimebundle_end_to_end(exact, monte_carlo, curve, elections):
    for obj in (exact, monte_carlo, curve, elections):
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

    monkeypatch.setattr(render, "render_svg", boom)
    page = exact._repr_mimebundle_()["text/html"]
    assert "<table" in page and "<svg" not in page
    assert "chart not rendered: RuntimeError: renderer unavailable" in page
    assert "Traceback" not in page and "second line" not in page


def test_summary_bundle_leaves_the_chart_out(exact):
    page = display.summary_bundle(exact)["text/html"]
    assert "<table" in page and "<svg" not in page
    assert display.summary_bundle(object())["text/plain"].startswith("<object")


# --------------------------------------------------------------------------
# the rows a live panel sends are the rows Altair embeds
# --------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    floats=hnp.arrays(np.float64, 7, elements=st.floats(allow_nan=True, allow_infinity=True, width=64)),
    ints=hnp.arrays(np.int64, 7, elements=st.integers(-(2**53), 2**53)),
    texts=st.lists(st.one_of(st.none(), st.text(max_size=5)), min_size=7, max_size=7),
    flags=hnp.arrays(np.bool_, 7),
)
def test_records_are_what_altair_embeds(floats, ints, texts, flags):
    # text as objects, as pandas' string dtype (missing: NA) and as inferred (pandas 3: str, missing: NaN)
    frame = pd.DataFrame(
        {
            "f": floats,
            "i": ints,
            "s": pd.Series(texts, dtype=object),
            "t": pd.Series(texts, dtype="string"),
            "u": pd.Series(texts),
            "b": flags,
        }
    )
    # Altair's own route for a DataFrame: sanitise, then records; its sanitiser means null for every
    # missing value, but under pandas 3 ``where(..., None)`` leaves NaN in object columns: read as null
    embedded = [
        {k: None if isinstance(v, float) and v != v else v for k, v in row.items()}
        for row in alt.utils.data.to_values(frame)["values"]
    ]
    rows = style.records(frame)
    assert rows == embedded
    # and as JSON, value by value (1 == 1.0 in Python, not in a type-checked payload)
    assert json.dumps(rows, sort_keys=True) == json.dumps(embedded, sort_keys=True)


def test_records_of_an_empty_frame():
    assert style.records(pd.DataFrame()) == [] and style.records(pd.DataFrame({"a": []})) == []


def test_figure_chart_is_the_builders_chart(exact, monte_carlo):
    """Each ``*_figure`` draws exactly its builder's chart, and its rows are the spec's datasets in order."""
    for res in (exact, monte_carlo):
        fig = display.delta_vs_epsilon_figure(res.to_frame(), "t", note="n")
        chart = display.delta_vs_epsilon_chart(res.to_frame(), "t", note="n")
        assert fig.chart().to_dict() == chart.to_dict()  # validated against the schema here
        _, data = rename_datasets(chart.to_dict())
        assert list(data.values()) == fig.rows()


# --------------------------------------------------------------------------
# readability
# --------------------------------------------------------------------------


def _scale_of(spec: dict, channel: str) -> list[dict]:
    """Every scale of ``channel`` in a (layered or concatenated) spec."""
    enc = spec.get("encoding", {}).get(channel)
    out = [enc["scale"]] if enc and "scale" in enc else []
    for key in ("layer", "vconcat", "hconcat"):
        for sub in spec.get(key, []):
            out += _scale_of(sub, channel)
    return out


def test_long_titles_wrap_and_are_never_cut():
    text = (
        "setting A: smoothed δ, 2-bit gradients, T = √n, 40-60 databases per composition "
        "(band: 99 %; dotted: fit; dashed: DP δ)"
    )
    t = style.title(text).to_dict()
    lines = t["text"] if isinstance(t["text"], list) else [t["text"]]
    assert " ".join(lines) == text  # every word kept, in order
    assert all(len(line) <= style.TITLE_CHARS for line in lines) and len(lines) >= 2
    assert t["limit"] == 0  # Vega truncates a line longer than a positive limit with "…"
    svg = vlc.vegalite_to_svg(
        alt.Chart(pd.DataFrame({"a": [1, 2]}))
        .mark_point()
        .encode(x="a:Q")
        .properties(title=style.title(text))
        .to_dict()
    )
    assert "…" not in svg and "dashed: DP δ)" in svg


def test_fit_and_dp_have_their_own_line_styles():
    table = pd.DataFrame(
        {"n": [10, 20, 30] * 2, "epsilon": [0.5] * 3 + [1.0] * 3, "log10_delta": [-1, -2, -3, -2, -3, -4.0]}
    )
    table["dp_delta"] = 0.9
    fits = pd.DataFrame({"epsilon": [0.5, 1.0], "slope": [-0.2, -0.25], "intercept": [0.0, -0.1]})
    spec = display.delta_vs_n_chart(table, fits).to_dict()
    dash = next(s for s in _scale_of(spec, "strokeDash") if "domain" in s)
    styles = dict(zip(dash["domain"], map(tuple, dash["range"]), strict=True))
    assert styles["exponential fit"] != styles["DP δ (worst case, Theorem 1)"] != styles["computed"]
    fit_layer = [layer for layer in spec["layer"] if layer.get("mark", {}).get("strokeDash")]
    assert [tuple(layer["mark"]["strokeDash"]) for layer in fit_layer] == [styles["exponential fit"]]


def test_legends_list_only_what_is_drawn():
    frame = pd.DataFrame({"records": np.arange(0, 61), "epsilon": 0.5, "delta": np.geomspace(1e-9, 1e-2, 61)})
    frame["mechanism"] = "M"
    spec = display.profile_chart(frame, x="records", color="mechanism").to_dict()
    assert "DP δ" not in json.dumps(spec, ensure_ascii=False)  # no DP line, no DP key
    with_dp = display.profile_chart(frame.assign(dp_delta=0.5), x="records", color="mechanism").to_dict()
    assert "DP δ (worst case" in json.dumps(with_dp, ensure_ascii=False)
    rel = sdp.release(np.linspace(0, 1, 51), "median", epsilon=1.0, bounds=(0, 1), rng=1)
    one = display.release_chart([rel], (0, 1)).to_dict()
    colour = next(s for s in _scale_of(one, "color") if "domain" in s)
    assert colour["domain"] == ["latest release"]
    mixed = display.release_chart(
        [rel, sdp.release(np.linspace(0, 1, 51), "mean", epsilon=1.0, bounds=(0, 1), rng=2)], (0, 1)
    )
    text = json.dumps(mixed.to_dict(), ensure_ascii=False)
    assert "mean / median of x" in text and "true value" not in text


def test_count_and_income_ticks_are_plain_numbers():
    frame = pd.DataFrame({"records": np.arange(10, 61), "epsilon": 0.5, "delta": np.geomspace(1e-9, 1e-2, 51)})
    svg = vlc.vegalite_to_svg(display.profile_chart(frame, x="records").to_dict())
    labels = [t for axis in _axis_labels(svg) for _, _, t in axis]
    assert "60" in labels and not any("e+" in t for t in labels), labels
    rel = sdp.release(np.linspace(0, 2e5, 51), "median", epsilon=1.0, bounds=(0, 2e5), rng=1)
    svg = vlc.vegalite_to_svg(display.release_chart([rel], (0, 2e5), name="income").to_dict())
    labels = [t for axis in _axis_labels(svg) for _, _, t in axis]
    assert "100,000" in labels and not any("e+" in t for t in labels), labels


def test_many_databases_get_a_sequential_scheme():
    years = np.arange(1920, 2024, 4)
    frame = pd.DataFrame({"year": np.repeat(years, 3), "epsilon": np.tile([0.5, 1.0, 2.0], len(years))})
    frame["log10_delta"] = -frame["epsilon"] * (frame["year"] - 1900) / 10
    spec = display.profile_chart(frame, x="epsilon").to_dict()
    colour = next(iter(_scale_of(spec, "color")))
    assert len(years) == 26 and colour["scheme"]["name"] == "viridis"
