"""Real-browser test of the four panels: one notebook served by Voila, driven by chromium.

A notebook showing ``sdp.panels.smoothed_dp()``, ``election()``,
``noise_comparison()`` and ``release()`` is served by Voila on 127.0.0.1
(free port, no token, killed at the end), with a real Jupyter kernel behind
it.  Debian's chromium, driven by Playwright, opens the page with every request
to another host aborted and recorded (the two Font Awesome stylesheets that
Voila's ``lab`` template links from jsDelivr are answered locally with an empty
stylesheet, so that they are not console errors).  For each panel the test

* checks that every button is clickable (visible, enabled, receiving events,
  at least 10 px tall) *before* anything is computed or released, and that the
  drawn chart has a finite size under 2000 px;
* moves every control at least once with real mouse and keyboard events
  (sliders dragged with the mouse or stepped with the arrow keys, dropdowns,
  check boxes, toggle buttons, the Release button clicked), waiting each time
  until the kernel has answered;
* asserts that the chart changed, that slider moves updated it in place (the
  same ``<canvas>``/``<svg>`` element stays on the page), that it still has a
  finite size, and that the browser logged no error at all.

The input-to-redraw latencies of the slider moves are printed as ``[bench]``
lines, with the kernel's own share (the ``(N ms)`` of the status line); their
medians per panel are recorded in benchmarks/README.md.  A move is timed from
its last input event (the mouse button released at the end of a drag, or the
key press) until the chart's pixels changed and the status line gave its final
answer (only the latter for the release panel's settings, which do not change
its public chart).

Skipped only when ``/usr/bin/chromium`` is missing (CI installs it with apt and
Voila with the ``test`` extra).
"""

from __future__ import annotations

import json
import os
import re
import statistics
import time
from pathlib import Path

import pytest

from tests.browser.browser_support import (
    CHROMIUM,
    CHROMIUM_ARGS as ARGS,
    log_tail,
    offline_page,
    require_chromium,
    voila_server,
    write_notebook,
)

require_chromium()

from playwright.sync_api import sync_playwright

# ~40 s (Voila start-up included): part of the default run, which stays within its budget

STARTUP_TIMEOUT = 60  # seconds for Voila to listen
PAGE_TIMEOUT = 90_000  # ms for the kernel to run the notebook and the charts to appear
ANSWER_TIMEOUT = 30_000  # ms for the kernel to answer one control change

PANELS = ("sdp-smoothed", "sdp-election", "sdp-noise", "sdp-release")

CELLS = [
    "import numpy as np\nimport pandas as pd\nimport smoothdp_nb as sdp\n",
    (
        "smoothed = sdp.panels.smoothed_dp(n=300, epsilon_points=6, max_n=2000)\n"
        "_ = smoothed.widget.add_class('sdp-smoothed')  # a CSS hook for the test (add_class returns the box)\n"
        "smoothed"
    ),
    "election = sdp.panels.election()\n_ = election.widget.add_class('sdp-election')\nelection",
    "noise = sdp.panels.noise_comparison()\n_ = noise.widget.add_class('sdp-noise')\nnoise",
    (
        "share = pd.Series(np.random.default_rng(0).beta(5, 4, 500), name='share')\n"
        "release = sdp.panels.release(share, bounds=(0, 1))\n_ = release.widget.add_class('sdp-release')\nrelease"
    ),
]

# Voila's template links Font Awesome (icon fonts for widget buttons) from jsDelivr


def _node(scope: str) -> str:
    """JS expression: the drawn chart of a panel, whichever renderer vega-embed picked."""
    return f"document.querySelector('.{scope} .vega-embed canvas, .{scope} .vega-embed svg.marks')"


def _snapshot(scope: str) -> str:
    """JS expression: the chart's pixels (canvas) or markup (SVG)."""
    return f"(n => n ? (n.tagName === 'CANVAS' ? n.toDataURL() : n.outerHTML) : null)({_node(scope)})"


@pytest.fixture(scope="module")
def voila(tmp_path_factory):
    """Voila serving the panel notebook; yields (page URL, log file); always stopped."""
    pytest.importorskip("voila", reason="voila is in the test extra: pip install -e '.[test]'")
    root = tmp_path_factory.mktemp("voila")
    write_notebook(root / "panels.ipynb", CELLS)
    with voila_server(root / "panels.ipynb", timeout=STARTUP_TIMEOUT) as url:
        yield url, root / "voila.log"


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture(scope="module")
def page(voila, browser):
    """The Voila page with the four panels; yields (page, blocked urls, errors)."""
    url, log = voila
    page, blocked, errors = offline_page(
        browser,
        ("http://127.0.0.1:", "ws://127.0.0.1:", "data:", "blob:"),
        viewport={"width": 1300, "height": 1000},
    )
    try:
        t0 = time.perf_counter()
        page.goto(url, timeout=PAGE_TIMEOUT)
        for scope in PANELS:
            page.wait_for_function(
                f"(() => {{ const n = {_node(scope)}; return n && (n.tagName !== 'CANVAS' || n.width > 0); }})()",
                timeout=PAGE_TIMEOUT,
            )
        print(f"[bench] voila page with the four panels: {time.perf_counter() - t0:.1f} s")
        if os.environ.get("SDP_DEBUG"):
            page.evaluate(
                "window.__errs = []; window.addEventListener('unhandledrejection', e => window.__errs.push(String(e.reason && e.reason.stack)))"
            )
        # count the status-line updates of each panel (the kernel's answer to a change)
        page.evaluate(
            """(scopes) => {
            window.answers = {};
            for (const s of scopes) {
                window.answers[s] = 0;
                const status = document.querySelector('.' + s + ' .widget-html');
                const root = status ? status.parentElement : document.querySelector('.' + s);
                new MutationObserver(() => { window.answers[s] += 1; })
                    .observe(root, {subtree: true, childList: true, characterData: true});
            }
        }""",
            list(PANELS),
        )
        yield page, blocked, errors
    finally:
        page.close()
        if errors:
            print(log_tail(log))


def _settled(page, scope: str, tries: int = 60) -> str:
    """The chart's snapshot once two snapshots 200 ms apart agree."""
    last = page.evaluate(_snapshot(scope))
    for _ in range(tries):
        page.wait_for_timeout(200)
        now = page.evaluate(_snapshot(scope))
        if now == last:
            return now
        last = now
    pytest.fail(f"{scope}: the chart kept changing")


def _chart_box(page, scope: str) -> dict:
    box = page.locator(f".{scope} .vega-embed").first.bounding_box()
    assert box is not None, f"{scope}: no chart on the page"
    return box


def _assert_finite_chart(page, scope: str) -> None:
    box = _chart_box(page, scope)
    assert 100 < box["width"] < 2000 and 100 < box["height"] < 2000, (scope, box)
    count = page.evaluate(
        f"document.querySelectorAll('.{scope} .vega-embed canvas, .{scope} .vega-embed svg.marks').length"
    )
    assert count == 1, f"{scope}: {count} charts"


def _assert_buttons_clickable(page, scope: str) -> int:
    buttons = page.locator(f".{scope} button")
    n = buttons.count()
    for i in range(n):
        b = buttons.nth(i)
        b.click(trial=True, timeout=5_000)  # visible, stable, enabled, receives the pointer events
        box = b.bounding_box()
        assert box and box["height"] >= 10 and box["width"] >= 10, (scope, b.inner_text(), box)
    return n


class _Driver:
    """Moves one panel's controls and waits for the kernel's answer; records latencies."""

    def __init__(self, page, scope: str) -> None:
        self.page, self.scope = page, scope
        self.latencies: list[float] = []
        self.kernel: list[float] = []  # the kernel's own time per timed move (the status line's "(N ms)")
        self.moved: list[str] = []

    def _answers(self) -> int:
        return self.page.evaluate(f"window.answers['{self.scope}']")

    def act(self, what: str, action, *, redraw: bool, timed: bool = False) -> None:
        """Run ``action``; wait for the status line to change (and the chart, if ``redraw``)."""
        before = self.page.evaluate(_snapshot(self.scope))
        answers = self._answers()
        t0 = time.perf_counter()
        t_input = action()  # a drag returns the time of its last event (mouse up): the input
        if isinstance(t_input, float):
            t0 = t_input
        if redraw:
            self.page.wait_for_function(f"{_snapshot(self.scope)} !== {json.dumps(before)}", timeout=ANSWER_TIMEOUT)
        # the kernel's answer: the status line changed and no longer says "computing…"
        self.page.wait_for_function(
            f"window.answers['{self.scope}'] > {answers} && "
            f"!document.querySelector('.{self.scope}').innerText.includes('computing')",
            timeout=ANSWER_TIMEOUT,
        )
        if timed:  # to the redrawn pixels and the final status line (no redraw expected: the status line)
            self.latencies.append(1000 * (time.perf_counter() - t0))
            ms = re.search(r"\((\d+) ms\)", self.page.locator(f".{self.scope}").inner_text())
            if ms:
                self.kernel.append(float(ms.group(1)))
        self._wait_quiet()
        self.moved.append(what)
        if os.environ.get("SDP_DEBUG"):
            print("DEBUG", what, self.page.evaluate("window.__errs || []"))

    def _wait_quiet(self) -> None:
        # the kernel may answer in two steps (election: coarse, then full grid); wait until it is done
        last = self._answers()
        for _ in range(50):
            self.page.wait_for_timeout(150)
            now = self._answers()
            text = self.page.locator(f".{self.scope}").inner_text()
            if now == last and "computing" not in text and "refining" not in text:
                return
            last = now

    def slider(
        self,
        label: str,
        *,
        key: str | None = None,
        times: int = 1,
        fraction: float | None = None,
        handle: int = 0,
        redraw: bool = True,
    ) -> None:
        """Step a slider ``times`` times with an arrow key (each step timed), or drag it to ``fraction``."""
        slider = self.page.locator(f".{self.scope} .widget-slider", has_text=label).first
        knob = slider.locator(".noUi-handle").nth(handle)
        if key is not None:
            for _ in range(times - 1):
                self._step(slider, knob, label, key, redraw)

            def action():
                knob.focus()
                self.page.keyboard.press(key)
        else:

            def action():
                box = knob.bounding_box()
                track = slider.locator(".noUi-target").first.bounding_box()
                x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
                self.page.mouse.move(x, y)
                self.page.mouse.down()
                self.page.mouse.move(track["x"] + fraction * track["width"], y, steps=6)
                t_up = time.perf_counter()
                self.page.mouse.up()
                return t_up

        readout = slider.locator(".widget-readout").first.inner_text()
        self.act(f"slider {label}", action, redraw=redraw, timed=True)
        assert slider.locator(".widget-readout").first.inner_text() != readout, f"{label}: readout unchanged"

    def _step(self, slider, knob, label: str, key: str, redraw: bool) -> None:
        readout = slider.locator(".widget-readout").first.inner_text()

        def action():
            knob.focus()
            self.page.keyboard.press(key)

        self.act(f"slider {label}", action, redraw=redraw, timed=True)
        assert slider.locator(".widget-readout").first.inner_text() != readout, f"{label}: readout unchanged"

    def dropdown(self, label: str, option: str, redraw: bool = True) -> None:
        select = self.page.locator(f".{self.scope} .widget-dropdown", has_text=label).locator("select").first
        self.act(f"dropdown {label}", lambda: select.select_option(label=option), redraw=redraw)

    def checkbox(self, label: str, redraw: bool = True) -> None:
        box = self.page.locator(f".{self.scope} .widget-checkbox", has_text=label).locator("input").first
        self.act(f"checkbox {label}", lambda: box.click(), redraw=redraw)

    def button(self, text: str, redraw: bool = True) -> None:
        button = self.page.locator(f".{self.scope} button", has_text=text).first
        self.act(f"button {text}", lambda: button.click(), redraw=redraw)

    def select_multiple(self, labels: list[str]) -> None:
        select = self.page.locator(f".{self.scope} .widget-select-multiple select").first
        self.act("select families", lambda: select.select_option(label=labels), redraw=True)


def _drive(page, scope: str, moves) -> _Driver:
    """Check the panel before any change, run ``moves(driver)``, check it again; print latencies."""
    page, blocked, errors = page
    before = _settled(page, scope)
    _assert_finite_chart(page, scope)
    n_buttons = _assert_buttons_clickable(page, scope)
    assert n_buttons >= 1 or scope in ("sdp-election", "sdp-noise")
    page.evaluate(f"{_node(scope)}.dataset.mark = 'first'")
    driver = _Driver(page, scope)
    try:
        moves(driver)
    except Exception:
        print(
            f"{scope}: failed after {driver.moved}; errors {errors}; "
            f"panel text: {page.locator('.' + scope).inner_text()[:600]!r}"
        )
        raise
    after = _settled(page, scope)
    assert after != before, f"{scope}: the chart did not change"
    _assert_finite_chart(page, scope)
    _assert_buttons_clickable(page, scope)
    if shots := os.environ.get("SMOOTHDP_SCREENSHOTS"):  # a directory: each panel after its moves, to look at
        page.locator("." + scope).screenshot(path=str(Path(shots) / f"{scope}.png"))
    lat = sorted(driver.latencies)
    kernel = f", kernel median {statistics.median(driver.kernel):.0f} ms" if driver.kernel else ""
    print(
        f"[bench] {scope}: {len(lat)} slider moves, input-to-redraw median {statistics.median(lat):.0f} ms "
        f"(min {lat[0]:.0f}, max {lat[-1]:.0f}){kernel}; controls moved: {', '.join(driver.moved)}"
    )
    assert not errors, errors
    assert not blocked, blocked  # nothing requested off the machine (Voila's CDN stylesheets included)
    return driver


def _in_place(page, scope: str) -> bool:
    return page.evaluate(f"(() => {{ const n = {_node(scope)}; return !!n && n.dataset.mark === 'first'; }})()")


def test_smoothed_panel_in_the_browser(page):
    def moves(d: _Driver) -> None:
        for fraction in (0.9, 0.8, 0.95):  # at n = 300 one 0.001 step of η may leave T = ceil(ηn) unchanged
            d.slider("η", fraction=fraction)
        for fraction in (0.5, 0.8, 0.3):  # small key steps of n can leave the pixels unchanged
            d.slider("n (records)", fraction=fraction)
        d.slider("ε range", fraction=0.3, handle=1)
        d.slider("p(category 0)", fraction=0.3, handle=0)
        assert _in_place(page[0], "sdp-smoothed"), "slider moves re-embedded the chart"
        d.dropdown("Π", "2020 top-2 shares, 56 units")
        d.button("monte-carlo")
        d.button("exact")
        d.button("auto", redraw=False)

    _drive(page, "sdp-smoothed", moves)


def test_election_panel_in_the_browser(page):
    def moves(d: _Driver) -> None:
        d.slider("η", fraction=0.5)
        d.slider("η", key="ArrowLeft", times=3)
        d.slider("ε range", key="ArrowRight", times=3, handle=1)
        assert _in_place(page[0], "sdp-election"), "slider moves re-embedded the chart"
        d.checkbox("sample with replacement")
        d.dropdown("x axis", "δ per ε")

    _drive(page, "sdp-election", moves)


def test_noise_panel_in_the_browser(page):
    def moves(d: _Driver) -> None:
        d.slider("ε", key="ArrowRight", times=3)
        d.slider("γ (marker)", key="ArrowLeft", times=3)
        d.slider("δ (Laplace)", key="ArrowRight", times=3)
        assert _in_place(page[0], "sdp-noise"), "slider moves re-embedded the chart"
        d.select_multiple(["PolyPlace", "generalized Cauchy"])
        d.checkbox("Laplace on global sensitivity")

    _drive(page, "sdp-noise", moves)


def test_release_panel_in_the_browser(page):
    def moves(d: _Driver) -> None:
        d.button("Release")  # the legend gains "latest release" (a new chart) ...
        d.button("Release")  # ... and "earlier releases"
        page[0].evaluate(f"{_node('sdp-release')}.dataset.mark = 'first'")
        d.button("Release")  # from now on a release only adds rows
        assert _in_place(page[0], "sdp-release"), "a release re-embedded the chart"
        d.slider("ε", key="ArrowRight", times=3, redraw=False)  # settings change: no new release, same public chart
        d.checkbox("default γ", redraw=False)
        d.slider("γ", key="ArrowLeft", times=2, redraw=False)
        d.dropdown("noise", "Student's t", redraw=False)
        d.dropdown("noise", "Laplace, (ε, δ)-DP", redraw=False)
        d.slider("δ (Laplace)", key="ArrowRight", redraw=False)  # enabled for the Laplace family only
        d.dropdown("noise", "Student's t", redraw=False)
        d.dropdown("statistic", "mean", redraw=False)  # the chart names the released statistic: unchanged
        d.checkbox("reveal true value")
        d.checkbox("curator diagnostics")
        d.button("Release")
        text = page[0].locator(".sdp-release").inner_text()
        assert "4 release(s)" in text and "data-dependent" in text, text

    _drive(page, "sdp-release", moves)
