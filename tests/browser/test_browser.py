"""Real-browser checks of the panels' charts, offline, with Debian's chromium.

Two pages are served from a temporary directory on 127.0.0.1 and every request
to another host is aborted (and recorded), so the checks also prove that no
CDN is needed:

1. a chart exported with ``save(..., inline=True)`` (vl-convert inlines Vega)
   renders to an ``<svg>`` or ``<canvas>``;
2. the panel's own widget JavaScript (``JupyterChart``'s offline bundle) is
   rendered with a minimal stand-in for the Jupyter widget model; a slider is
   moved in Python and the update the panel sends is delivered to the page as
   Jupyter would deliver it.  The drawn chart must change while the same
   canvas stays on the page (updated in place, not re-embedded).

Skipped, with the reason, when ``/usr/bin/chromium`` or the ``playwright``
package is missing.  CI: ``apt-get install chromium`` and ``pip install
playwright`` (no ``playwright install``: the system chromium is used).
"""

from __future__ import annotations

import functools
import http.server
import json
import threading

import pytest

from tests.browser.browser_support import CHROMIUM, CHROMIUM_ARGS as ARGS, offline_page, require_chromium

require_chromium()
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright not installed (pip install playwright)")
pytest.importorskip("vl_convert", reason="vl-convert-python is needed for offline JavaScript")

import numpy as np
import pandas as pd

from smoothdp_nb import panels
from smoothdp_nb.panels.live import PanelChart

# A stand-in for the anywidget model: get/set/on/save_changes over a plain object.
HARNESS = """<!doctype html>
<html><head><meta charset="utf-8"><title>panel</title></head>
<body><div id="chart"></div>
<script type="module">
import widget from "./widget.js";
const state = await (await fetch("./state.json")).json();
const handlers = {};
const model = {
  get: (k) => state[k],
  set: (k, v) => { state[k] = v; },
  on: (evt, cb) => { (handlers[evt] = handlers[evt] || []).push(cb); },
  off: () => {},
  save_changes: () => {},
  send: () => {},
};
window.pushUpdate = async (name, value) => {
  state[name] = value;
  for (const cb of handlers["change:" + name] || []) { await cb({changed: {[name]: value}}); }
};
const pending = state._pending;
const done = widget.render({model, el: document.getElementById("chart")});
// an update that arrives while the view embeds (render has not finished)
if (pending) { await window.pushUpdate("_live_rows", pending); }
await done;
window.ready = true;
</script></body></html>
"""


# The drawn chart, whichever renderer vega-embed picked: pixels or SVG markup.
NODE = "document.querySelector('#chart canvas, #chart svg.marks')"
SNAPSHOT = f"(n => n.tagName === 'CANVAS' ? n.toDataURL() : n.outerHTML)({NODE})"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("www")
    handler = functools.partial(_QuietHandler, directory=str(root))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest output clean
        pass


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        yield b
        b.close()


def test_exported_chart_renders_offline(server, browser):
    root, base = server
    panel = panels.smoothed_dp(n=300, epsilon_points=6)
    panel.live.current_chart().save(str(root / "chart.html"), inline=True)
    page, blocked, errors = offline_page(browser, (base,))
    page.goto(f"{base}/chart.html")
    page.wait_for_selector("svg, canvas", timeout=20_000)
    assert not blocked, f"requests outside 127.0.0.1: {blocked}"
    assert not errors, errors
    page.close()


def _serve_widget(root, panel, *, extra_state=None):
    """Write the panel chart's bundled JavaScript and the model's state for the harness page."""
    assert panels.live.enable_offline() and "esm.sh" not in PanelChart._esm
    (root / "widget.js").write_text(PanelChart._esm, encoding="utf-8")
    jc = panel.chart
    state = {k: getattr(jc, k) for k in ("spec", "embed_options", "_live_rows")}
    state.update(extra_state or {})
    (root / "state.json").write_text(json.dumps(state), encoding="utf-8")
    (root / "panel.html").write_text(HARNESS, encoding="utf-8")


def test_panel_widget_updates_in_place_in_browser(server, browser):
    root, base = server
    panel = panels.smoothed_dp(n=300, epsilon_points=6)
    _serve_widget(root, panel)

    page, blocked, errors = offline_page(browser, (base,))
    page.goto(f"{base}/panel.html")
    page.wait_for_function("window.ready === true", timeout=30_000)
    page.wait_for_selector("#chart canvas, #chart svg", timeout=20_000)
    page.evaluate(f"{NODE}.dataset.mark = 'first'")
    before = page.evaluate(SNAPSHOT)

    panel.epsilon.value = (0.5, 4.0)  # move a slider in Python
    update = panel.chart._live_rows
    assert update["changed"] and update["seq"] == 1
    page.evaluate("u => window.pushUpdate('_live_rows', u)", update)
    page.wait_for_function("document.querySelector('#chart').dataset.liveSeq === '1'", timeout=10_000)
    after = page.evaluate(SNAPSHOT)
    same_node = page.evaluate(f"{NODE}.dataset.mark === 'first'")
    count = page.evaluate("document.querySelectorAll('#chart canvas, #chart svg.marks').length")
    page.close()

    assert not errors, errors
    assert not blocked, f"requests outside 127.0.0.1: {blocked}"
    assert after != before, "the chart did not change"
    assert same_node and count == 1, "the chart was re-embedded instead of updated in place"


def _release_points(page) -> list[float]:
    """The released values the view's layers hold (Vega's own datasets, not pixels), without repeats."""
    return page.evaluate(
        """() => {
        const view = document.querySelector('#chart').sdpView;
        const values = Object.keys(view._runtime.data).filter(n => n.startsWith('panel_'))
            .flatMap(n => view.data(n)).filter(row => 'which' in row).map(row => row.value);
        return [...new Set(values)];
    }"""
    )


@pytest.mark.parametrize("when", ["before the view exists", "while the view embeds"])
def test_update_sent_before_the_view_is_ready_is_applied(server, browser, when):
    """Run All in Jupyter: ``panel.draw()`` runs while the chart is still embedding.

    Altair's own front end listened for data only after embedding, and dropped
    what came earlier; the panel chart applies every dataset sent so far once
    its view exists.
    """
    root, base = server
    rng = np.random.default_rng(3)
    panel = panels.release(pd.Series(rng.beta(5, 4, 200), name="share"), bounds=(0, 1))
    panel.draw(rng=1)  # two releases complete the legend (each a new chart) ...
    panel.draw(rng=2)
    embeds = panel.live.embeds
    if when == "before the view exists":
        panel.draw(rng=3)  # ... the third goes through the data channel: in the model's state only
        _serve_widget(root, panel)
    else:
        _serve_widget(root, panel, extra_state={"_pending": None})
        state = json.loads((root / "state.json").read_text())
        panel.draw(rng=3)  # sent after the view started embedding (see HARNESS)
        state["_pending"] = panel.chart._live_rows
        (root / "state.json").write_text(json.dumps(state), encoding="utf-8")
    assert panel.live.embeds == embeds and panel.chart._live_rows["seq"] == 1  # in place, not a new chart
    page, blocked, errors = offline_page(browser, (base,))
    page.goto(f"{base}/panel.html")
    page.wait_for_function("window.ready === true", timeout=30_000)
    page.wait_for_function("document.querySelector('#chart').dataset.liveReady === 'true'", timeout=20_000)
    points = _release_points(page)
    page.close()
    assert not errors, errors
    assert not blocked, f"requests outside 127.0.0.1: {blocked}"
    released = [r.value for r in panel.releases]
    assert sorted(points) == sorted(released), f"the chart holds {points} after releasing {released}"
