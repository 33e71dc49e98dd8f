"""Real-browser tests of the panels as a lecturer uses them, with Voila and Debian's chromium.

Voila runs a notebook top to bottom in a real kernel, as "Run All" does, and
the page shows the widgets' final state.  Two pages are served from 127.0.0.1:

1. **tutorial 06**, unchanged (``SMOOTHDP_CI=1``): its release panel is shown
   in one cell and ``panel.draw()`` runs in the next; the chart must hold the
   release (Vega's own dataset, read from the view), not "nothing released yet";
2. **the four panels**, followed by a cell that sets *every* control of each
   panel from code (and draws a release): each chart must hold exactly the rows
   of the same panel driven the same way in this process, and every slider's
   readout the value set.  On this page an axe-core audit must find no serious
   or critical violation, the keyboard alone must reach and operate every
   control, and a switch to a dark JupyterLab theme must recolour the charts.

axe-core is the npm package, installed outside the repository
(``npm install --prefix DIR axe-core``; ``.ci/run`` does it); its file is found
through ``$AXE_CORE_JS`` or the usual install folders, and the audit is skipped
with the reason when it is missing.  Skipped too without ``/usr/bin/chromium``
or Voila.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path

import numpy as np
import pandas as pd
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

from smoothdp_nb import panels

ROOT = Path(__file__).resolve().parents[2]
PAGE_TIMEOUT = 180_000  # ms: the kernel runs the notebook and the charts embed (shared 2-core machine)
ALLOWED = ("http://127.0.0.1:", "ws://127.0.0.1:", "data:", "blob:")

#: the panels of the four-panel page, by the CSS class the notebook gives them
SCOPES = ("sdp-smoothed", "sdp-election", "sdp-noise", "sdp-release")

SETUP = [
    "import numpy as np\nimport pandas as pd\nimport smoothdp_nb as sdp\n",
    "smoothed = sdp.panels.smoothed_dp(n=300, epsilon_points=6, max_n=2000)\n"
    "_ = smoothed.widget.add_class('sdp-smoothed')\nsmoothed",
    "election = sdp.panels.election()\n_ = election.widget.add_class('sdp-election')\nelection",
    "noise = sdp.panels.noise_comparison()\n_ = noise.widget.add_class('sdp-noise')\nnoise",
    "share = pd.Series(np.random.default_rng(0).beta(5, 4, 500), name='share')\n"
    "release = sdp.panels.release(share, bounds=(0, 1))\n_ = release.widget.add_class('sdp-release')\nrelease",
]

#: every control of every panel, set from code in the cell after the panels (in this order)
MOVES = {
    "smoothed": [
        ("eta", 0.99),
        ("n", 500),
        ("epsilon", (0.5, 3.0)),
        ("pi", (0.3, 0.6)),
        ("method", "exact"),
        ("pi_kind", "us-2020-districts"),
    ],
    "election": [("eta", 0.99), ("epsilon", (1.0, 3.0)), ("replace", True), ("view", "epsilon")],
    "noise": [
        ("epsilon", 2.0),
        ("delta", 1e-6),
        ("gamma", 0.05),
        ("families", ("polyplace", "cauchy")),
        ("reference", False),
    ],
    "release": [
        ("query", "mean"),
        ("epsilon", 2.0),
        ("auto_gamma", False),
        ("gamma", 0.05),
        ("noise", "laplace"),
        ("delta", 1e-7),
        ("diagnostics", True),
        ("reveal", True),
    ],
}
RELEASE_SEED = 5  # the Release button's draw, from code


def _moves_cell() -> str:
    lines = [f"{panel}.{control}.value = {value!r}" for panel, moves in MOVES.items() for control, value in moves]
    return "\n".join(lines) + f"\n_ = release.draw(rng={RELEASE_SEED})\n"


def _expected_panels() -> dict[str, panels.base.Panel]:
    """The four panels built and driven in this process exactly as the notebook does."""
    share = pd.Series(np.random.default_rng(0).beta(5, 4, 500), name="share")
    built = {
        "smoothed": panels.smoothed_dp(n=300, epsilon_points=6, max_n=2000),
        "election": panels.election(),
        "noise": panels.noise_comparison(),
        "release": panels.release(share, bounds=(0, 1)),
    }
    for name, moves in MOVES.items():
        for control, value in moves:
            getattr(built[name], control).value = value
    built["release"].draw(rng=RELEASE_SEED)
    return built


def _axe_source() -> str | None:
    """axe-core's browser script: ``$AXE_CORE_JS``, or an npm install in a usual folder."""
    candidates = [os.environ.get("AXE_CORE_JS", "")]
    default = os.environ.get("SMOOTHDP_AXE_DIR", str(Path.home() / ".cache" / "smoothdp_nb" / "axe-core"))
    for prefix in (default, str(Path.home() / ".cache/smoothdp-axe")):
        candidates.append(f"{prefix}/node_modules/axe-core/axe.min.js")
    npm_root = shutil.which("npm") and os.popen("npm root -g 2>/dev/null").read().strip()
    if npm_root:
        candidates.append(f"{npm_root}/axe-core/axe.min.js")
    for c in candidates:
        if c and os.path.isfile(c):
            return Path(c).read_text(encoding="utf-8")
    return None


def _views_ready(page, count: int) -> None:
    page.wait_for_function(
        f"document.querySelectorAll('.sdp-panel .sdp-live-chart[data-live-ready=\"true\"]').length >= {count}",
        timeout=PAGE_TIMEOUT,
    )


#: JS: the rows of every panel_N dataset of the chart in a panel (Vega's own data, not pixels)
VIEW_ROWS = """(scope) => {
    const el = document.querySelector('.' + scope + ' .sdp-live-chart');
    const view = el && el.sdpView;
    if (!view) { return null; }
    const out = {};
    for (const name of Object.keys(view._runtime.data)) {
        if (name.startsWith('panel_')) {
            out[name] = view.data(name).map(row => {
                const clean = {};
                for (const [k, v] of Object.entries(row)) { if (!k.startsWith('Symbol')) { clean[k] = v; } }
                return clean;
            });
        }
    }
    return out;
}"""


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            yield b
        finally:
            b.close()


def _open(browser, url: str):
    page, blocked, errors = offline_page(browser, ALLOWED, viewport={"width": 1300, "height": 1000})
    page.goto(url, timeout=PAGE_TIMEOUT)
    return page, blocked, errors


# --------------------------------------------------------------------------
# tutorial 06, Run All
# --------------------------------------------------------------------------


def test_tutorial_06_run_all_shows_the_release_in_the_chart(tmp_path, browser, monkeypatch):
    """The release drawn in the cell after the panel is in the panel's chart."""
    monkeypatch.setenv("SMOOTHDP_CI", "1")  # the kernel inherits it: the notebook's quick settings
    shutil.copy(ROOT / "notebooks" / "06_smooth_sensitivity.ipynb", tmp_path / "06.ipynb")
    with voila_server(tmp_path / "06.ipynb") as url:
        page, blocked, errors = _open(browser, url)
        try:
            _views_ready(page, 2)  # the noise panel and the release panel
            text = page.inner_text("body")
            printed = re.search(r"Release\(value=([-0-9.e+]+)", text)
            assert printed, "the cell after the panel printed no release"
            found = page.evaluate(
                """() => {
                for (const el of document.querySelectorAll('.sdp-panel .sdp-live-chart')) {
                    const view = el.sdpView;
                    const rows = Object.keys(view._runtime.data).filter(n => n.startsWith('panel_'))
                        .flatMap(n => view.data(n));
                    if (rows.some(r => 'which' in r) || rows.some(r => 'note' in r)) {
                        return {values: [...new Set(rows.filter(r => 'which' in r).map(r => r.value))],
                                notes: rows.filter(r => 'note' in r).map(r => r.note)};
                    }
                }
                return null;
            }"""
            )
            if os.environ.get("SMOOTHDP_SCREENSHOTS"):
                page.locator(".sdp-panel").last.screenshot(path=f"{os.environ['SMOOTHDP_SCREENSHOTS']}/06-release.png")
        finally:
            page.close()
    assert found is not None, "no release chart on the page"
    # the repr writes the value to the precision of its lattice (2⁻²⁰ here): within half a step of the chart's
    assert len(found["values"]) == 1 and abs(found["values"][0] - float(printed.group(1))) <= 2.0**-21, found
    assert "2⁻²⁰" in " ".join(found["notes"]), found
    assert not any("nothing released" in n for n in found["notes"]), found["notes"]
    assert not errors, errors
    assert not blocked, blocked  # nothing requested off the machine (Voila's CDN stylesheets included)


# --------------------------------------------------------------------------
# the four panels, every control set from code
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def four(tmp_path_factory, browser):
    """The page with the four panels after every control was set from code: (page, blocked, errors)."""
    root = tmp_path_factory.mktemp("four")
    write_notebook(root / "panels.ipynb", [*SETUP, _moves_cell()])
    with voila_server(root / "panels.ipynb") as url:
        page, blocked, errors = _open(browser, url)
        try:
            _views_ready(page, 4)
            yield page, blocked, errors
        finally:
            page.close()


def test_every_control_set_from_code_moves_the_chart(four):
    page, blocked, errors = four
    expected = _expected_panels()
    for scope, name in zip(SCOPES, ("smoothed", "election", "noise", "release"), strict=True):
        want = json.loads(json.dumps(expected[name].live.data))  # as JSON carries it
        # the election panel answers with a coarse grid first and the full one a moment later
        deadline = time.monotonic() + 60
        while True:
            shown = page.evaluate(VIEW_ROWS, scope)
            if shown == want or time.monotonic() > deadline:
                break
            page.wait_for_timeout(500)
        assert shown is not None, f"{scope}: no chart"
        assert shown == want, f"{scope}: the chart does not show the controls' state"
    # the sliders show the values code gave them (no front-end echo put one back)
    readouts = page.evaluate(
        "() => [...document.querySelectorAll('.sdp-noise .widget-readout')].map(e => e.textContent.trim())"
    )
    assert readouts[:3] == ["2.00", "1.00e-6", "0.0501"], readouts
    assert not errors, errors
    assert not blocked, blocked  # nothing requested off the machine (Voila's CDN stylesheets included)


def test_axe_finds_no_serious_violation(four):
    page, _, _ = four
    source = _axe_source()
    if source is None and os.environ.get("AXE_CORE_JS"):  # .ci/run installs it: a skip there would hide the audit
        pytest.fail(f"AXE_CORE_JS={os.environ['AXE_CORE_JS']} does not exist")
    if source is None:
        pytest.skip(
            "axe-core not installed: npm install --prefix ~/.cache/smoothdp_nb/axe-core axe-core (or set AXE_CORE_JS)"
        )
    page.add_script_tag(content=source)
    violations = page.evaluate(
        """async () => {
        const result = await axe.run(document, {resultTypes: ['violations']});
        return result.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
            nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}));
    }"""
    )
    bad = [v for v in violations if v["impact"] in ("serious", "critical")]
    assert not bad, json.dumps(bad, indent=1)


def _focus_path(page, scope: str, presses: int = 60) -> list[dict]:
    """Tab from the panel's title through its controls; what got focus, in order, within the panel."""
    page.evaluate(
        """(scope) => {
        const start = document.createElement('button');
        start.id = 'tab-start-' + scope;
        start.textContent = 'start';
        const panel = document.querySelector('.' + scope);
        panel.parentElement.insertBefore(start, panel);
        start.focus();
    }""",
        scope,
    )
    seen = []
    for _ in range(presses):
        page.keyboard.press("Tab")
        info = page.evaluate(
            """(scope) => {
            const el = document.activeElement;
            if (!el || !el.closest('.' + scope)) { return null; }
            return {tag: el.tagName, cls: el.className, type: el.type || '', role: el.getAttribute('role') || '',
                    name: el.getAttribute('aria-label') || el.textContent.trim().slice(0, 40)};
        }""",
            scope,
        )
        if info is None and seen:
            break
        if info is not None:
            seen.append(info)
    return seen


def test_keyboard_alone_reaches_and_operates_every_control(four):
    page, _, errors = four
    expected_names = {
        "sdp-smoothed": ["η (sampling rate)", "n (records)", "ε range (lower end)", "ε range (upper end)"],
        "sdp-noise": ["ε", "δ (Laplace)", "γ (marker)"],
    }
    for scope in SCOPES:
        path = _focus_path(page, scope)
        handles = [f["name"] for f in path if "noUi-handle" in f["cls"]]
        kinds = {f["tag"] for f in path}
        sliders = page.evaluate(f"() => document.querySelectorAll('.{scope} .noUi-handle').length")
        enabled = page.evaluate(f"() => document.querySelectorAll('.{scope} .noUi-handle:not([disabled])').length")
        assert len(handles) >= enabled and sliders, (scope, path)
        assert all(h for h in handles), f"{scope}: a slider handle without a name: {handles}"
        for name in expected_names.get(scope, []):
            assert name in handles, (scope, handles)
        # every enabled menu, check box and button is a stop of the tab order
        others = page.evaluate(
            f"() => document.querySelectorAll('.{scope} select:not([disabled]), "
            f".{scope} input[type=checkbox]:not([disabled]), .{scope} button:not([disabled])').length"
        )
        stops = [f for f in path if f["tag"] in ("SELECT", "INPUT", "BUTTON")]
        assert len(stops) == others and kinds, (scope, path)
    # operate: a slider with the arrow keys, a check box with the space bar, the Release button with Enter
    status = "[...document.querySelectorAll('.sdp-release .widget-html-content')].map(e => e.textContent).join(' ')"

    def release_count() -> int:
        m = re.search(r"(\d+) release\(s\)", page.evaluate(status))
        return int(m.group(1)) if m else 0

    before_eps = page.inner_text(".sdp-noise .widget-readout >> nth=0")
    page.focus(".sdp-noise .noUi-handle >> nth=0")
    page.keyboard.press("ArrowRight")
    page.wait_for_function(
        f"document.querySelector('.sdp-noise .widget-readout').textContent.trim() !== {json.dumps(before_eps)}",
        timeout=30_000,
    )
    box = page.locator(".sdp-election input[type=checkbox]").first
    was = box.is_checked()
    box.focus()
    page.keyboard.press("Space")
    page.wait_for_function(
        f"document.querySelector('.sdp-election input[type=checkbox]').checked === {json.dumps(not was)}",
        timeout=30_000,
    )
    count = release_count()
    page.locator(".sdp-release button", has_text="Release").focus()
    page.keyboard.press("Enter")
    page.wait_for_function(
        f"""(() => {{ const m = ({status}).match(/(\\d+) release\\(s\\)/);
            return m && Number(m[1]) === {count + 1}; }})()""",
        timeout=30_000,
    )
    assert not errors, errors


def test_charts_follow_a_dark_theme(four):
    """Transparent background; text in the theme's colour, re-drawn when JupyterLab switches theme."""
    page, _, errors = four
    background = page.evaluate("() => getComputedStyle(document.querySelector('.sdp-noise svg.marks')).backgroundColor")
    assert background in ("rgba(0, 0, 0, 0)", "transparent"), background
    page.evaluate(
        """() => {
        document.body.style.setProperty('--jp-ui-font-color1', 'rgb(250, 250, 250)');
        document.body.style.setProperty('--jp-ui-font-color2', 'rgb(200, 200, 200)');
        document.body.setAttribute('data-jp-theme-light', 'false');
        document.body.setAttribute('data-jp-theme-name', 'JupyterLab Dark');
    }"""
    )
    page.wait_for_function(
        """() => {
        const label = document.querySelector('.sdp-noise svg.marks .role-axis-title text');
        return label && label.getAttribute('fill') === 'rgb(250, 250, 250)';
    }""",
        timeout=30_000,
    )
    if os.environ.get("SMOOTHDP_SCREENSHOTS"):
        page.evaluate("() => { document.body.style.background = '#111'; }")
        for scope in SCOPES:
            page.locator("." + scope).screenshot(path=f"{os.environ['SMOOTHDP_SCREENSHOTS']}/dark-{scope}.png")
    assert not errors, errors
