"""Real-browser test of the release panel on a curator's budget: spent, remaining, and the refusal.

A notebook showing ``sdp.panels.release(..., budget=1.5)`` is served by Voila and driven by
chromium (as in :mod:`tests.browser.test_browser_voila`): one click on Release spends epsilon = 1,
the status line then says what is spent and remains and that the next release at epsilon = 1
would exceed the budget, and the button is disabled; setting the epsilon slider to 0.5 (typed into its readout)
enables it again, and a second click spends the rest.  ``SMOOTHDP_SCREENSHOTS=DIR`` keeps a
screenshot of the panel at each stage.
"""

from __future__ import annotations

import os
from pathlib import Path

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

from playwright.sync_api import expect, sync_playwright

FONT_AWESOME = "/@fortawesome/fontawesome-free"
TIMEOUT = 90_000  # ms: Voila's kernel runs the notebook, then each click is a release (padded to a deadline)

CELLS = [
    "import numpy as np\nimport pandas as pd\nimport smoothdp_nb as sdp\n",
    (
        "odo = sdp.PrivacyOdometer(1.5)\n"
        "share = pd.Series(np.random.default_rng(0).beta(5, 4, 500), name='share')\n"
        "panel = sdp.panels.release(share, bounds=(0, 1), budget=odo)\n"
        "_ = panel.widget.add_class('sdp-budget')\npanel"
    ),
]


def _shot(page, name: str) -> None:
    if shots := os.environ.get("SMOOTHDP_SCREENSHOTS"):
        page.locator(".sdp-budget").screenshot(path=str(Path(shots) / f"budget-{name}.png"))


def _status(page) -> str:
    return page.locator(".sdp-budget .widget-html").nth(1).inner_text()


def test_release_panel_spends_and_refuses_in_the_browser(tmp_path):
    pytest.importorskip("voila", reason="voila is in the test extra: pip install -e '.[test]'")
    write_notebook(tmp_path / "budget.ipynb", CELLS)
    with voila_server(tmp_path / "budget.ipynb") as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        page, blocked, errors = offline_page(
            browser,
            ("http://127.0.0.1:", "ws://127.0.0.1:", "data:", "blob:"),
            stub_css=(FONT_AWESOME,),
            viewport={"width": 1300, "height": 1000},
        )
        try:
            page.goto(url, timeout=TIMEOUT)
            page.wait_for_function(
                "document.querySelector('.sdp-budget .vega-embed canvas, .sdp-budget .vega-embed svg.marks')",
                timeout=TIMEOUT,
            )
            page.wait_for_function(
                "document.querySelector('.sdp-budget').innerText.includes('remaining ε=1.5')", timeout=TIMEOUT
            )
            _shot(page, "0-start")
            button = page.locator(".sdp-budget button", has_text="Release").first
            assert button.is_enabled()
            button.click()
            page.wait_for_function(
                "document.querySelector('.sdp-budget').innerText.includes('would exceed the budget')",
                timeout=TIMEOUT,
            )
            text = _status(page)
            assert "1 release(s)" in text and "spent ε=1, remaining ε=0.5" in text, text
            page.wait_for_function(
                "document.querySelector('.sdp-budget button.widget-button:not([disabled])') === null"
                " || [...document.querySelectorAll('.sdp-budget button')].every(b => b.disabled)",
                timeout=TIMEOUT,
            )
            assert button.is_disabled()
            _shot(page, "1-refusing")
            slider = page.locator(".sdp-budget .widget-slider", has_text="ε").first
            # ε 1.0 -> 0.5 typed into this slider's own readout (the panel has other sliders
            # before it): one change, one answer from the kernel (arrow steps, ten round trips,
            # can lose a key to the re-render when two browsers share the machine)
            readout = slider.locator(".widget-readout").first
            readout.click()
            page.keyboard.press("Control+A")
            page.keyboard.type("0.5")
            page.keyboard.press("Enter")
            expect(readout).to_have_text("0.50", timeout=TIMEOUT)
            assert slider.locator(".widget-readout").first.inner_text() == "0.50"
            try:
                page.wait_for_function(
                    "document.querySelector('.sdp-budget').innerText.includes('would bring the total to ε=1.5')",
                    timeout=TIMEOUT,
                )
            except Exception:
                print("status:", _status(page))
                raise
            assert button.is_enabled()
            button.click()
            page.wait_for_function(
                "document.querySelector('.sdp-budget').innerText.includes('2 release(s)')", timeout=TIMEOUT
            )
            page.wait_for_function(
                "document.querySelector('.sdp-budget').innerText.includes('remaining ε=0;')", timeout=TIMEOUT
            )
            _shot(page, "2-spent")
            assert "spent ε=1.5" in _status(page)
        finally:
            page.close()
            browser.close()
    assert not errors, errors
    assert not [u for u in blocked if FONT_AWESOME not in u], blocked
