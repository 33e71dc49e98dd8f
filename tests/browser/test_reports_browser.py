"""The tutorials' HTML reports in a real browser (Debian's Chromium), offline.

A report built from a synthetic notebook is opened from disk with every request
other than ``file://`` and ``data:`` aborted and recorded: it must draw its math
(MathML boxes with a size), its pictures and its table without errors; a page
whose notebook carries hostile HTML (a script, an event handler, remote
pictures and style sheets) must run none of it, whatever the cell held.

Skipped, with the reason, when ``/usr/bin/chromium`` or ``playwright`` is missing.
"""

from __future__ import annotations

import base64

import pytest

from tests.browser.browser_support import CHROMIUM, CHROMIUM_ARGS, offline_page, require_chromium

require_chromium()
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright not installed (pip install playwright)")
nbformat = pytest.importorskip("nbformat")
pytest.importorskip("markdown_it")
pytest.importorskip("latex2mathml")

from smoothdp_nb.reports import Entry, index_page, notebook_page

V4 = nbformat.v4
SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="120" height="40">'
    '<rect width="120" height="40" fill="#4c78a8"/></svg>'
)
LOCAL = ("file://", "data:")


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


def open_page(browser, path):
    """(page, blocked requests, page errors and console errors) of ``path`` opened offline."""
    page, blocked, errors = offline_page(browser, LOCAL)
    page.goto(path.as_uri())
    page.wait_for_timeout(200)
    return page, blocked, errors


def test_report_draws_math_pictures_and_tables(browser, tmp_path):
    nb = V4.new_notebook(
        cells=[
            V4.new_markdown_cell(
                "# 01 · Math\n\nInline $\\delta(x) \\le e^{-\\varepsilon n}$.\n\n"
                "$$\\sum_{i=1}^{n} \\binom{n}{i} p^i$$\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
            ),
            V4.new_code_cell(
                "show()",
                execution_count=1,
                outputs=[
                    V4.new_output("display_data", data={"image/svg+xml": SVG, "text/plain": "chart"}),
                    V4.new_output("stream", name="stdout", text="x" * 400 + "\n"),
                ],
            ),
        ]
    )
    (tmp_path / "01_math.html").write_text(notebook_page(nb, "01_math"), encoding="utf-8")
    page, blocked, errors = open_page(browser, tmp_path / "01_math.html")
    assert blocked == [] and errors == []
    boxes = page.eval_on_selector_all(
        "math",
        "els => els.map(e => [e.getAttribute('display'), "
        "e.getBoundingClientRect().width, e.getBoundingClientRect().height])",
    )
    assert [b[0] for b in boxes] == ["inline", "block"]
    assert all(w > 10 and h > 5 for _, w, h in boxes)
    assert page.eval_on_selector("img.figure", "e => [e.complete, e.naturalWidth]") == [True, 120]
    assert page.eval_on_selector_all("table th", "els => els.map(e => e.textContent)") == ["a", "b"]
    # long output lines wrap inside the page instead of widening it
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def test_hostile_cell_content_runs_nothing_and_fetches_nothing(browser, tmp_path):
    png = base64.b64encode(b"not really a png").decode()
    nb = V4.new_notebook(
        cells=[
            V4.new_markdown_cell(
                "# Safe\n\n<script>document.title = 'ran-1'</script>\n\n"
                "<img src=x onerror=\"document.title = 'ran-2'\">\n\n![remote](http://192.0.2.1/x.png)"
            ),
            V4.new_code_cell(
                "x",
                execution_count=1,
                outputs=[
                    V4.new_output(
                        "display_data",
                        data={
                            "text/html": "<script>document.title = 'ran-3'</script>"
                            "<link rel=stylesheet href='https://cdn.invalid/x.css'>"
                            "<iframe src='https://example.invalid/'></iframe>",
                            "image/png": png,
                            "text/plain": "x",
                        },
                    )
                ],
            ),
            V4.new_code_cell(
                "y",
                execution_count=2,
                outputs=[
                    V4.new_output(
                        "display_data",
                        data={"text/html": "<script>document.title = 'ran-4'</script>", "text/plain": "y"},
                    )
                ],
            ),
        ]
    )
    (tmp_path / "evil.html").write_text(notebook_page(nb, "evil"), encoding="utf-8")
    page, blocked, errors = open_page(browser, tmp_path / "evil.html")
    assert page.title() == "Safe"
    # the Content-Security-Policy stops the scripts, and the loads before any request is made;
    # the only errors are its reports of what it blocked
    assert blocked == [] and errors
    assert all(e.startswith("console error:") and "Content Security Policy" in e for e in errors), errors


def test_index_page_renders_offline(browser, tmp_path):
    entries = [
        Entry(
            "01_a",
            "01 · First $\\eta$",
            "A *summary*.",
            "ok",
            3.2,
            None,
            "<div class='output-markdown'><p>δ = <strong>1e-3</strong></p></div>",
            True,
        ),
        Entry("02_b", "02 · Second", "", "failed", 1.0, "ValueError: x", None, True),
    ]
    (tmp_path / "index.html").write_text(index_page(entries), encoding="utf-8")
    page, blocked, errors = open_page(browser, tmp_path / "index.html")
    assert blocked == [] and errors == []
    assert page.eval_on_selector_all("ol.contents > li", "els => els.length") == 2
    assert page.eval_on_selector_all(".pill", "els => els.map(e => e.textContent)") == ["ran", "failed"]
    assert page.eval_on_selector("ol.contents math", "e => e.getBoundingClientRect().width") > 3
