"""Real-browser test of a panel: a notebook served by Voila, driven by chromium.

A two-cell notebook showing ``sdp.panels.smoothed_dp()`` is served by Voila on
127.0.0.1 (free port, no token, no browser, killed at the end), with a real
Jupyter kernel behind it.  Debian's chromium, driven by Playwright, opens the
page with every request to a host other than 127.0.0.1 aborted and recorded,
drags the "n" slider with the mouse and waits until the drawn chart changes.
The test asserts that

* the page rendered the chart with every outside request aborted, and the
  only outside requests were the two Font Awesome stylesheets that Voila's
  ``lab`` template links from jsDelivr (icon fonts; nothing to do with the
  chart).  No CDN is needed: Vega is inlined by
  ``JupyterChart.enable_offline()``, the widget manager and the anywidget
  front end ship with Voila and anywidget;
* moving the slider changed the slider's value in the kernel, and the chart
  drawn in the page changed (canvas pixels / SVG markup);
* the chart was updated in place: the same ``<canvas>``/``<svg>`` element is
  still on the page and there is exactly one.

Skipped only when ``/usr/bin/chromium`` is missing (CI installs it with apt and
Voila with the ``test`` extra).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .browser_support import CHROMIUM, CHROMIUM_ARGS as ARGS, offline_page, require_chromium

require_chromium()

from playwright.sync_api import sync_playwright  # noqa: E402  (test extra)

# ~40 s (Voila start-up included): part of the default run, which stays within its budget

STARTUP_TIMEOUT = 60  # seconds for Voila to listen
PAGE_TIMEOUT = 60_000  # ms for the kernel to run the notebook and the chart to appear

CELLS = [
    "import smoothdp_nb as sdp\n"
    "panel = sdp.panels.smoothed_dp(n=300, epsilon_points=6)\n"
    "panel.n.max = 2000\n"
    "_ = panel.widget.add_class('sdp-smoothed')  # a CSS hook for the test (add_class returns the box)\n",
    "panel",
    "elections = sdp.panels.election()\n"
    "_ = elections.widget.add_class('sdp-election')\n",
    "elections",
]


def _node(scope: str) -> str:
    """JS expression: the drawn chart of a panel, whichever renderer vega-embed picked."""
    return f"document.querySelector('.{scope} .vega-embed canvas, .{scope} .vega-embed svg.marks')"


def _snapshot(scope: str) -> str:
    """JS expression: the chart's pixels (canvas) or markup (SVG)."""
    return f"(n => n ? (n.tagName === 'CANVAS' ? n.toDataURL() : n.outerHTML) : null)({_node(scope)})"


NODE = _node("sdp-smoothed")
SNAPSHOT = _snapshot("sdp-smoothed")


def _notebook(path: Path) -> None:
    nb = {
        "cells": [
            {"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {}, "outputs": [],
             "source": src}
            for i, src in enumerate(CELLS)
        ],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.write_text(json.dumps(nb), encoding="utf-8")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def voila(tmp_path_factory):
    """Voila serving the panel notebook; yields the page URL; always stopped."""
    pytest.importorskip("voila", reason="voila is in the test extra: pip install -e '.[test]'")
    root = tmp_path_factory.mktemp("voila")
    _notebook(root / "panel.ipynb")
    port = _free_port()
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    for var in ("JUPYTER_RUNTIME_DIR", "JUPYTER_CONFIG_DIR"):
        env[var] = str(root / var.lower())
    log = open(root / "voila.log", "w+b")
    proc = subprocess.Popen(
        [sys.executable, "-m", "voila", str(root / "panel.ipynb"), "--no-browser", f"--port={port}",
         "--Voila.ip=127.0.0.1", "--Voila.token=", "--show_tracebacks=True"],
        cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while True:
            if proc.poll() is not None:
                pytest.fail(f"voila exited with {proc.returncode}:\n{_tail(log)}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"voila did not listen within {STARTUP_TIMEOUT} s:\n{_tail(log)}")
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/", log
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:  # pragma: no cover
            proc.kill()
            proc.wait(timeout=5)
        log.close()


def _tail(log, n: int = 4000) -> str:
    log.flush()
    log.seek(0)
    return log.read().decode("utf-8", "replace")[-n:]


def _settled(page, snapshot: str = SNAPSHOT, tries: int = 40) -> str:
    """The chart's snapshot once two snapshots 250 ms apart agree (first render finished)."""
    last = page.evaluate(snapshot)
    for _ in range(tries):
        page.wait_for_timeout(250)
        now = page.evaluate(snapshot)
        if now == last:
            return now
        last = now
    pytest.fail("the chart kept changing before the slider was moved")


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
    """The Voila page, outside requests aborted; yields (page, blocked urls, page errors)."""
    url, log = voila
    # the Voila server and its websocket on the loopback, and inline data only
    page, blocked, errors = offline_page(
        browser, ("http://127.0.0.1:", "ws://127.0.0.1:", "data:", "blob:"),
        viewport={"width": 1200, "height": 1600},
    )
    try:
        t0 = time.perf_counter()
        page.goto(url, timeout=PAGE_TIMEOUT)
        for scope in ("sdp-smoothed", "sdp-election"):
            page.wait_for_function(
                f"(() => {{ const n = {_node(scope)}; return n && (n.tagName !== 'CANVAS' || n.width > 0); }})()",
                timeout=PAGE_TIMEOUT)
        print(f"[bench] voila page with both charts: {time.perf_counter() - t0:.1f} s")
        yield page, blocked, errors
    finally:
        page.close()


def _drag(page, slider, fraction: float) -> None:
    """Drag a slider's handle with the mouse to ``fraction`` of its track."""
    handle = slider.locator(".noUi-handle").first
    box = handle.bounding_box()
    track = slider.locator(".noUi-target").first.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(track["x"] + fraction * track["width"], y, steps=8)
    page.mouse.up()


def test_voila_panel_slider_updates_chart_in_place(page):
    page, blocked, errors = page
    before = _settled(page)
    page.evaluate(f"{NODE}.dataset.mark = 'first'")

    slider = page.locator(".sdp-smoothed .widget-slider", has_text="n (records)").first
    readout_before = slider.locator(".widget-readout").inner_text()
    t1 = time.perf_counter()
    _drag(page, slider, 0.6)
    readout_after = slider.locator(".widget-readout").inner_text()
    page.wait_for_function(f"{SNAPSHOT} !== {json.dumps(before)}", timeout=30_000)
    print(f"[bench] slider release -> chart redrawn: {1000 * (time.perf_counter() - t1):.0f} ms")
    page.wait_for_timeout(300)
    same_node = page.evaluate(f"(() => {{ const n = {NODE}; return !!n && n.dataset.mark === 'first'; }})()")
    count = page.evaluate(
        "document.querySelectorAll('.sdp-smoothed .vega-embed canvas, .sdp-smoothed .vega-embed svg.marks').length")

    assert readout_after != readout_before, (readout_before, readout_after)
    # Voila's lab template links Font Awesome (icon fonts for widget buttons) from jsDelivr; it is
    # aborted like every outside request, and the chart rendered and updated without it
    cosmetic = [u for u in blocked if "/@fortawesome/fontawesome-free" in u]
    print(f"[info] outside requests aborted: {len(blocked)} ({len(cosmetic)} Font Awesome stylesheets of Voila's template)")
    needed = [u for u in blocked if u not in cosmetic]
    assert not needed, f"requests outside 127.0.0.1: {needed}"
    assert not errors, errors
    assert same_node and count == 1, "the chart was re-embedded instead of updated in place"


ELECTION = _node("sdp-election")
STATUS = "document.querySelector('.sdp-election').innerText"


def test_voila_election_panel_coarse_while_dragging_then_full(page):
    """Dragging eta answers with a coarse epsilon grid from the kernel's event loop, then the full grid."""
    page, blocked, errors = page
    before = _settled(page, _snapshot("sdp-election"))
    page.evaluate(f"{ELECTION}.dataset.mark = 'first'")
    # record every status line the kernel shows while the slider moves
    page.evaluate("""() => {
        window.statuses = [];
        const root = document.querySelector('.sdp-election');
        new MutationObserver(() => {
            const t = root.innerText;
            if (t.includes('largest')) window.statuses.push(t.includes('coarse grid') ? 'coarse' : 'full');
        }).observe(root, {subtree: true, childList: true, characterData: true});
    }""")
    slider = page.locator(".sdp-election .widget-slider", has_text="η").first
    t1 = time.perf_counter()
    _drag(page, slider, 0.5)
    page.wait_for_function("window.statuses.includes('coarse')", timeout=30_000)
    t_coarse = time.perf_counter() - t1
    page.wait_for_function(
        "window.statuses.length && window.statuses[window.statuses.length - 1] === 'full'"
        " && !document.querySelector('.sdp-election').innerText.includes('refining')", timeout=30_000)
    print(f"[bench] election, drag eta: coarse grid shown {1000 * t_coarse:.0f} ms after the drag began, "
          f"full grid after {1000 * (time.perf_counter() - t1):.0f} ms; statuses seen: {page.evaluate('window.statuses')}")
    after = _settled(page, _snapshot("sdp-election"))
    same_node = page.evaluate(f"(() => {{ const n = {ELECTION}; return !!n && n.dataset.mark === 'first'; }})()")
    assert after != before, "the election chart did not change"
    assert same_node, "the election chart was re-embedded instead of updated in place"
    assert not errors, errors
    assert not [u for u in blocked if "/@fortawesome/fontawesome-free" not in u], blocked
