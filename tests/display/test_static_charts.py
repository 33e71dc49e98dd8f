"""Static charts in the notebook's theme: the HTML of ``StaticChart`` and of results' rich display.

The browser test (tests/test_browser_lab.py) shows the effect in JupyterLab Dark;
these check the markup: inline SVG beside a style sheet that only JupyterLab's
pages match, ids that cannot collide, and no neutral ink colour left out.
"""

from __future__ import annotations

import re

import pytest

alt = pytest.importorskip("altair")
pytest.importorskip("vl_convert")

import pandas as pd

from smoothdp_nb import display
from smoothdp_nb.display import render
from smoothdp_nb.reports import gallery

#: a rule of a style sheet: selectors, then the block
_RULE = re.compile(r"([^{}]+)\{([^{}]*)\}")
_COLOUR = re.compile(r'\b(?:fill|stroke)="(#[0-9a-fA-F]{3}|#[0-9a-fA-F]{6}|[a-z]+)"')


def _chart() -> alt.Chart:
    frame = pd.DataFrame({"x": [0.0, 1.0, 2.0], "y": [1.0, 3.0, 2.0]})
    return alt.Chart(frame).mark_line().encode(x="x", y="y").properties(title="A line")


def _rgb(colour: str) -> tuple[int, int, int] | None:
    named = {"white": "#ffffff", "black": "#000000"}
    colour = named.get(colour.lower(), colour.lower())
    if not colour.startswith("#"):
        return None
    digits = colour[1:]
    if len(digits) == 3:
        digits = "".join(d * 2 for d in digits)
    return int(digits[0:2], 16), int(digits[2:4], 16), int(digits[4:6], 16)


def test_every_rule_applies_only_on_a_jupyterlab_page():
    """Classic Notebook, handouts and docs (no ``data-jp-theme-light`` on <body>) keep the chart as drawn."""
    rules = _RULE.findall(render.THEME_CSS)
    assert len(rules) >= 5 and "".join(s + "{" + b + "}" for s, b in rules).replace(
        "\n", ""
    ) == render.THEME_CSS.replace("\n", "")
    for selectors, block in rules:
        assert selectors.strip().startswith("body[data-jp-theme-light] .smoothdp-chart svg.marks"), selectors
        assert re.fullmatch(r"(fill|stroke): (transparent|var\(--jp-[a-z0-9-]+, [^;]+\))", block.strip()), block


def test_static_chart_is_inline_svg_with_the_theme_sheet():
    chart = _chart()
    shown = display.StaticChart(chart)
    bundle = shown._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html"}  # no image/svg+xml: JupyterLab draws that as an <img>
    page = bundle["text/html"]
    assert page == f'<div class="smoothdp-chart"><style>{render.FIT_CSS}\n{render.THEME_CSS}</style>{shown.svg}</div>'
    assert shown.svg == render.render_svg(chart)  # the chart has no ids: the SVG is untouched
    assert "<script" not in page.lower() and "A line" in page
    assert shown._repr_html_() == page


def test_static_chart_refuses_what_is_not_a_chart():
    with pytest.raises(TypeError, match="chart must be an Altair chart, not DataFrame"):
        display.StaticChart(pd.DataFrame())


def test_result_display_wraps_its_chart_for_the_theme():
    from smoothdp_nb import SamplingHistogram, smoothed_delta

    res = smoothed_delta(SamplingHistogram(eta=0.9), 50, [[0.5, 0.5]], [1.0], progress=False)
    page = res._repr_mimebundle_()["text/html"]
    assert page.count('<div class="smoothdp-chart"><style>') == 1
    assert re.search(r'<div class="smoothdp-chart"><style>[^<]*</style><svg\b[^>]*class="marks"', page)


def test_ids_get_a_prefix_from_the_content():
    """Two inline charts on one page must not use each other's clip paths."""
    a = '<svg class="marks"><defs><clipPath id="clip1"><rect/></clipPath></defs><g clip-path="url(#clip1)"/></svg>'
    b = a.replace("<rect/>", "<rect width='2'/>")
    html_a, html_b = render.chart_html(a), render.chart_html(b)
    ids_a = re.findall(r'\sid="([^"]+)"', html_a)
    assert len(ids_a) == 1 and ids_a[0].endswith("-clip1") and ids_a[0] != "clip1"
    assert f"url(#{ids_a[0]})" in html_a  # the reference follows its id
    assert re.findall(r'\sid="([^"]+)"', html_b) != ids_a  # another chart, another prefix
    assert render.chart_html(a) == html_a  # the same chart, the same markup


def test_every_neutral_colour_of_the_gallery_follows_the_theme():
    """Each grey or black the charts draw with is recoloured (a new grey would stay dark on a dark page)."""
    covered = {_rgb(c) for c in re.findall(r'="([^"]+)" i\]', render.THEME_CSS)}
    seen = set()
    for name, (_, build) in gallery.FIGURES.items():
        for colour in _COLOUR.findall(render.render_svg(build())):
            rgb = _rgb(colour)
            if rgb is not None and rgb[0] == rgb[1] == rgb[2]:
                seen.add(rgb)
                assert rgb in covered, (name, colour)
    assert {(0, 0, 0), (255, 255, 255), (0x33, 0x33, 0x33)} <= seen  # text, background, the style's ink
