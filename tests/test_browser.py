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

from .browser_support import CHROMIUM, offline_page, require_chromium
from .browser_support import CHROMIUM_ARGS as ARGS

require_chromium()
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright not installed (pip install playwright)")
pytest.importorskip("vl_convert", reason="vl-convert-python is needed for offline JavaScript")

import altair as alt

from smoothdp_nb import panels

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
await widget.render({model, el: document.getElementById("chart")});
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


def test_panel_widget_updates_in_place_in_browser(server, browser):
    root, base = server
    panel = panels.smoothed_dp(n=300, epsilon_points=6)
    assert alt.JupyterChart._is_offline
    (root / "widget.js").write_text(alt.JupyterChart._esm, encoding="utf-8")
    jc = panel.chart
    state = {
        k: getattr(jc, k)
        for k in (
            "spec",
            "embed_options",
            "debounce_wait",
            "max_wait",
            "_params",
            "_vl_selections",
            "_js_watch_plan",
            "_py_to_js_updates",
        )
    }
    state["local_tz"] = None
    (root / "state.json").write_text(json.dumps(state), encoding="utf-8")
    (root / "panel.html").write_text(HARNESS, encoding="utf-8")

    page, blocked, errors = offline_page(browser, (base,))
    page.goto(f"{base}/panel.html")
    page.wait_for_function("window.ready === true", timeout=30_000)
    page.wait_for_selector("#chart canvas, #chart svg", timeout=20_000)
    page.evaluate(f"{NODE}.dataset.mark = 'first'")
    before = page.evaluate(SNAPSHOT)

    panel.epsilon.value = (0.5, 4.0)  # move a slider in Python
    update = panel.chart._py_to_js_updates
    assert update and update[0]["namespace"] == "data"
    page.evaluate("u => window.pushUpdate('_py_to_js_updates', u)", update)
    page.wait_for_timeout(300)
    after = page.evaluate(SNAPSHOT)
    same_node = page.evaluate(f"{NODE}.dataset.mark === 'first'")
    count = page.evaluate("document.querySelectorAll('#chart canvas, #chart svg.marks').length")
    page.close()

    assert not errors, errors
    assert not blocked, f"requests outside 127.0.0.1: {blocked}"
    assert after != before, "the chart did not change"
    assert same_node and count == 1, "the chart was re-embedded instead of updated in place"
