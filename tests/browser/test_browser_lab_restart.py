"""A lecturer's Restart-and-Run-All in JupyterLab: a notebook with a panel and a static chart is run,
then restarted and run again (what Kernel > Restart Kernel and Run All Cells does); the console logs
no error ("widget model not found" from the first run's widgets included) and no request leaves
the machine.  Skipped only without ``/usr/bin/chromium``.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.browser.browser_support import (
    CHROMIUM,
    CHROMIUM_ARGS as ARGS,
    lab_server,
    offline_page,
    require_chromium,
    write_notebook,
)

require_chromium()
pytest.importorskip("jupyterlab", reason="jupyterlab is in the test extra: pip install -e '.[test]'")
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is in the test extra")

ROOT = Path(__file__).resolve().parents[2]
ALLOWED = ("http://127.0.0.1:", "ws://127.0.0.1:", "data:", "blob:")
PAGE_TIMEOUT = 240_000

CELLS = [
    "import numpy as np\nimport pandas as pd\nimport smoothdp_nb as sdp\n",
    "share = pd.Series(np.random.default_rng(0).beta(5, 4, 300), name='share')\n"
    "panel = sdp.panels.release(share, bounds=(0, 1))\npanel",
    "_ = panel.draw(rng=1)\n",
    "sdp.smoothed_delta(sdp.SamplingHistogram(eta=0.9), 40, [[0.2, 0.8], [0.6, 0.4]], [0.5, 1], progress=False)",
]

#: JS: every code cell of the open notebook ran in the current kernel session, which is idle
RUN_DONE = """(count) => {
    const nb = window.jupyterapp.shell.currentWidget;
    const cells = nb.content.model.cells;
    for (let i = 0; i < cells.length; i++) {
        const c = cells.get(i);
        if (c.type === 'code' && !(c.executionCount >= 1 && c.executionCount <= count)) { return false; }
    }
    const kernel = nb.sessionContext.session && nb.sessionContext.session.kernel;
    return !!kernel && kernel.status === 'idle'
        && document.querySelectorAll('.jp-OutputArea-output .sdp-live-chart[data-live-ready="true"]').length >= 1;
}"""


@pytest.mark.parametrize("notebook", ["panel and chart", "06_smooth_sensitivity"])
def test_restart_and_run_all_logs_no_console_error(tmp_path, notebook, monkeypatch):
    if notebook.startswith("06"):
        monkeypatch.setenv("SMOOTHDP_CI", "1")  # the kernel inherits it: the tutorial's quick settings
        shutil.copy(ROOT / "notebooks" / f"{notebook}.ipynb", tmp_path / "lecture.ipynb")
        count = sum(c["cell_type"] == "code" for c in json.loads((tmp_path / "lecture.ipynb").read_text())["cells"])
    else:
        write_notebook(tmp_path / "lecture.ipynb", CELLS)
        count = len(CELLS)
    with lab_server(tmp_path) as url, sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            page, blocked, errors = offline_page(browser, ALLOWED, viewport={"width": 1300, "height": 1000})
            page.goto(url, timeout=PAGE_TIMEOUT)
            page.wait_for_function("() => window.jupyterapp && window.jupyterapp.started", timeout=PAGE_TIMEOUT)
            page.evaluate(
                "() => window.jupyterapp.commands.execute('docmanager:open', "
                "{path: 'lecture.ipynb', factory: 'Notebook'})"
            )
            page.wait_for_function(
                "() => { const w = window.jupyterapp.shell.currentWidget; return !!w && !!w.sessionContext"
                " && !!w.sessionContext.session && !!w.sessionContext.session.kernel"
                " && w.sessionContext.session.kernel.status === 'idle'; }",
                timeout=PAGE_TIMEOUT,
            )
            page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
            page.wait_for_function(RUN_DONE, arg=count, timeout=PAGE_TIMEOUT)
            page.wait_for_timeout(1000)
            first = list(errors)
            # Kernel > Restart Kernel and Run All Cells, its confirmation dialog accepted
            page.evaluate("() => { window.jupyterapp.commands.execute('notebook:restart-run-all'); }")
            page.locator(".jp-Dialog button.jp-mod-accept").click(timeout=PAGE_TIMEOUT)
            page.wait_for_timeout(3000)
            page.wait_for_function(RUN_DONE, arg=count, timeout=PAGE_TIMEOUT)
            page.wait_for_timeout(2000)
            if os.environ.get("SMOOTHDP_SCREENSHOTS"):
                page.screenshot(path=f"{os.environ['SMOOTHDP_SCREENSHOTS']}/lab-restart-run-all-{notebook[:2]}.png")
        finally:
            browser.close()
    assert not first, first
    assert not errors, errors
    assert not blocked, blocked
