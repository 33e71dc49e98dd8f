"""In front of a class: the panels and the static charts on a projector (1024×768 at 200 % zoom, and a
360 px phone-wide page), served by Voila with nothing requested off the machine.

At 200 % zoom a 1024×768 screen lays a page out in 512×384 CSS pixels (twice the device pixels per
CSS pixel), which is what the page gets here.  Checked on the page of the four panels and one static
chart (a result's rich display):

* every chart fits the output area that holds it (no horizontal scroll; its legend inside the view);
* no control label is cut: each toggle button and each menu shows its whole text;
* the keyboard reaches each panel's main action within 10 Tab stops from the panel's start;
* no request leaves the machine and the console logs no error.

Screenshots go to ``$SMOOTHDP_SCREENSHOTS`` when it is set.
"""

from __future__ import annotations

import os

import pytest

from tests.browser.browser_support import (
    CHROMIUM,
    CHROMIUM_ARGS as ARGS,
    offline_page,
    require_chromium,
    voila_server,
    write_notebook,
)

require_chromium()
pytest.importorskip("voila", reason="voila is in the test extra: pip install -e '.[test]'")
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright not installed (pip install playwright)")

PAGE_TIMEOUT = 240_000  # ms: the kernel runs the notebook (shared 2-core machine)
ALLOWED = ("http://127.0.0.1:", "ws://127.0.0.1:", "data:", "blob:")
SCOPES = ("sdp-smoothed", "sdp-election", "sdp-noise", "sdp-release")

CELLS = [
    "import numpy as np\nimport pandas as pd\nimport smoothdp_nb as sdp\n",
    "smoothed = sdp.panels.smoothed_dp(n=300, epsilon_points=6, max_n=2000)\n"
    "_ = smoothed.widget.add_class('sdp-smoothed')\nsmoothed",
    "election = sdp.panels.election()\n_ = election.widget.add_class('sdp-election')\nelection",
    "noise = sdp.panels.noise_comparison()\n_ = noise.widget.add_class('sdp-noise')\nnoise",
    "share = pd.Series(np.random.default_rng(0).beta(5, 4, 500), name='share')\n"
    "release = sdp.panels.release(share, bounds=(0, 1))\n_ = release.widget.add_class('sdp-release')\nrelease",
    # the widest choices: the longest menu entry and the Monte Carlo toggle
    "smoothed.pi_kind.value = 'us-2020-districts'\nsmoothed.method.value = 'monte-carlo'\n",
    # a static chart (a result's rich display: inline SVG)
    "sdp.smoothed_delta(sdp.SamplingHistogram(eta=0.9), 60, [[0.2, 0.8], [0.6, 0.4]], [0.5, 1, 2], progress=False)",
]

#: (viewport width, height, device pixels per CSS pixel): a projector at 200 % zoom, a narrow page
SCREENS = {"1024x768 at 200 %": (512, 384, 2), "360 px": (360, 640, 1)}

#: JS: every chart's box against the output area holding it (live panels and static charts)
CHART_FIT = """() => {
    const out = [];
    for (const chart of document.querySelectorAll('.sdp-live-chart, .smoothdp-chart')) {
        const image = chart.querySelector('svg.marks, canvas.marks');
        const area = chart.closest('.jp-OutputArea-output') || chart.parentElement;
        if (!image || !area) { continue; }
        const a = area.getBoundingClientRect(), r = image.getBoundingClientRect();
        out.push({kind: chart.className, left: r.left - a.left, right: r.right - a.right, width: r.width,
                  area: a.width, scroll: area.scrollWidth - area.clientWidth,
                  page: document.documentElement.scrollWidth - document.documentElement.clientWidth});
    }
    return out;
}"""

#: JS: controls whose text does not fit (toggle buttons and menus)
CUT_LABELS = """() => {
    const cut = [];
    const ctx = document.createElement('canvas').getContext('2d');
    for (const b of document.querySelectorAll(
            '.sdp-panel .widget-toggle-button, .sdp-panel button, .sdp-panel .widget-readout')) {
        if (b.scrollWidth > b.clientWidth + 1) { cut.push({text: b.textContent.trim(), need: b.scrollWidth, has: b.clientWidth}); }
    }
    for (const s of document.querySelectorAll('.sdp-panel select')) {
        const css = getComputedStyle(s);
        ctx.font = `${css.fontWeight} ${css.fontSize} ${css.fontFamily}`;
        const text = s.options[s.selectedIndex] ? s.options[s.selectedIndex].text : '';
        const room = s.clientWidth - parseFloat(css.paddingLeft) - parseFloat(css.paddingRight) - 16;  // the arrow
        if (ctx.measureText(text).width > room) { cut.push({text, need: ctx.measureText(text).width, has: room}); }
    }
    // and nothing sticks out of the output area (a slider's readout, a menu, a label) by more than the
    // 2 px margin ipywidgets leaves around every widget, nor makes the area scroll sideways
    for (const el of document.querySelectorAll(
            '.sdp-panel .widget-readout, .sdp-panel select, .sdp-panel button, .sdp-panel .widget-label')) {
        const area = el.closest('.jp-OutputArea-output');
        if (!area || el.offsetParent === null) { continue; }
        const over = el.getBoundingClientRect().right - area.getBoundingClientRect().right;
        if (over > 2.5) { cut.push({text: el.textContent.trim(), outside_by: over}); }
        if (area.scrollWidth > area.clientWidth + 1) { cut.push({text: 'the output area scrolls sideways'}); }
    }
    return cut;
}"""


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("projector")
    write_notebook(root / "classroom.ipynb", CELLS)
    with voila_server(root / "classroom.ipynb", timeout=90) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture(scope="module", params=sorted(SCREENS))
def screen(request, served, browser):
    width, height, scale = SCREENS[request.param]
    page, blocked, errors = offline_page(
        browser, ALLOWED, viewport={"width": width, "height": height}, device_scale_factor=scale
    )
    page.goto(served, timeout=PAGE_TIMEOUT)
    page.wait_for_function(
        "document.querySelectorAll('.sdp-panel .sdp-live-chart[data-live-ready=\"true\"]').length >= 4"
        " && document.querySelector('.smoothdp-chart svg') !== null",
        timeout=PAGE_TIMEOUT,
    )
    page.wait_for_timeout(1500)  # the Monte Carlo toggle's redraw
    if os.environ.get("SMOOTHDP_SCREENSHOTS"):
        name = request.param.replace(" ", "_").replace("%", "pc")
        page.screenshot(path=f"{os.environ['SMOOTHDP_SCREENSHOTS']}/projector-{name}.png", full_page=True)
    try:
        yield request.param, page, blocked, errors
    finally:
        page.close()


def test_every_chart_fits_its_output_area(screen):
    name, page, _, _ = screen
    boxes = page.evaluate(CHART_FIT)
    assert len(boxes) >= 5, boxes  # four panels and the static chart
    for box in boxes:
        assert box["left"] >= -1 and box["right"] <= 1, (name, box)  # inside the output area, legend included
        assert box["scroll"] <= 1 and box["page"] <= 1, (name, box)  # nothing to scroll sideways
        assert box["width"] >= 0.6 * min(box["area"], 500), (name, box)  # shrunk to fit, not to a stamp


def test_no_control_label_is_cut(screen):
    name, page, _, _ = screen
    assert page.evaluate(CUT_LABELS) == [], name


def test_each_panel_s_main_action_within_ten_tab_stops(screen):
    """From the panel's start, Tab reaches its main action (the release panel's Release button; the
    first control of the others, whose charts follow their controls) in at most 10 presses."""
    name, page, _, _ = screen
    for scope in SCOPES:
        page.evaluate(
            """(scope) => {
            const start = document.createElement('button');
            start.textContent = 'start';
            const panel = document.querySelector('.' + scope);
            panel.parentElement.insertBefore(start, panel);
            start.focus();
        }""",
            scope,
        )
        main = f".{scope} button.jupyter-button:not(.widget-toggle-button)" if scope == "sdp-release" else None
        presses = 0
        while presses < 10:
            presses += 1
            page.keyboard.press("Tab")
            hit = page.evaluate(
                """([scope, main]) => {
                const el = document.activeElement;
                if (!el || !el.closest('.' + scope)) { return false; }
                return main ? el.matches(main) && el.textContent.includes('Release') : true;
            }""",
                [scope, main],
            )
            if hit:
                break
        else:
            pytest.fail(f"{name}: {scope}'s main action is not within 10 Tab stops")
        if scope == "sdp-release":  # before the finer options: the statistic, the method, ε (handle, readout), Release
            assert presses <= 5, (name, presses)


def test_nothing_leaves_the_machine_and_the_console_is_clean(screen):
    name, _, blocked, errors = screen
    assert not blocked, (name, blocked)
    assert not errors, (name, errors)
