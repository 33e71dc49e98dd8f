"""The tutorials in a real JupyterLab, driven by Debian's chromium: typeset maths, charts in the theme.

JupyterLab serves a folder holding the eight tutorials on 127.0.0.1 (free port,
no token, private settings, stopped at the end); the page may load nothing
from another host (every other request is recorded and aborted).  Commands run
through ``window.jupyterapp`` -- what JupyterLab's menus run.

1. **Maths.**  Each tutorial is opened (not run): its Markdown cells' formulas
   must be typeset by JupyterLab's MathJax -- ``mjx-container`` elements, no
   MathJax error, and no ``$...$`` or ``\\command`` left as text outside code.
2. **Charts in JupyterLab Dark.**  Tutorials 01 and 02 (``SMOOTHDP_CI=1``: their
   quick settings) are switched to JupyterLab Dark and run with Run All.  Every
   static chart they show -- results' rich displays (01) and Altair charts
   through the tutorials' ``show()`` (02) -- must be inline SVG drawn in the theme: its text contrasts with the
   dark background the page shows behind it (WCAG's 4.5:1, from computed
   styles), and its pixels are mostly dark with light ink (sampled from a
   screenshot).  An ``image/svg+xml`` output (an ``<img>``) or a chart drawn
   on white fails.  ``SMOOTHDP_SCREENSHOTS=DIR`` keeps the screenshots.

Skipped only without ``/usr/bin/chromium`` (CI installs it; JupyterLab and
Playwright come with the ``test`` extra).  ~2-3 min on a shared 2-core machine.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
from pathlib import Path

import pytest

from tests.browser.browser_support import CHROMIUM, CHROMIUM_ARGS as ARGS, lab_server, offline_page, require_chromium

require_chromium()
pytest.importorskip("jupyterlab", reason="jupyterlab is in the test extra: pip install -e '.[test]'")
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is in the test extra")

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "smoothdp_nb" / "notebooks").glob("*.ipynb"))
ALLOWED = ("http://127.0.0.1:", "ws://127.0.0.1:", "data:", "blob:")
PAGE_TIMEOUT = 180_000  # ms: JupyterLab's first load and a kernel's start on a shared machine
RUN_TIMEOUT = 600_000  # ms: Run All of tutorial 01 with its CI settings

#: JS: the open notebook's kernel has started and is idle
KERNEL_IDLE = """() => { const w = window.jupyterapp.shell.currentWidget;
    const k = w.sessionContext.session && w.sessionContext.session.kernel; return !!k && k.status === 'idle'; }"""

#: JS: the open notebook, its code cells all executed and its kernel idle
RUN_DONE = """() => {
    const nb = window.jupyterapp.shell.currentWidget;
    const cells = nb.content.model.cells;
    for (let i = 0; i < cells.length; i++) {
        const c = cells.get(i);
        if (c.type === 'code' && !c.executionCount) { return false; }
    }
    const kernel = nb.sessionContext.session && nb.sessionContext.session.kernel;
    return !!kernel && kernel.status === 'idle';
}"""

#: JS: the typesetting of the open notebook's Markdown cells
MATH = r"""() => {
    const node = window.jupyterapp.shell.currentWidget.content.node;
    const rendered = [...node.querySelectorAll('.jp-MarkdownCell .jp-RenderedMarkdown')];
    const raw = [];
    for (const md of rendered) {
        const text = md.cloneNode(true);
        text.querySelectorAll('mjx-container, code, pre').forEach(e => e.remove());
        raw.push(...(text.textContent.match(/\$[^$]+\$|\\[a-zA-Z]+/g) || []));
    }
    return {
        rendered: rendered.length,
        typeset: node.querySelectorAll('.jp-MarkdownCell mjx-container').length,
        errors: node.querySelectorAll('mjx-merror, [data-mjx-error]').length,
        raw: raw.slice(0, 10),
    };
}"""

#: JS: each output chart of the open notebook: how it is drawn, its colours and the page's behind it
CHARTS = """() => {
    const rgba = (c) => (c.match(/[\\d.]+/g) || []).map(Number);
    const behind = (el) => {
        for (let e = el; e; e = e.parentElement) {
            const c = rgba(getComputedStyle(e).backgroundColor);
            if (c.length === 3 || (c.length === 4 && c[3] > 0)) { return c.slice(0, 3); }
        }
        return [255, 255, 255];
    };
    const node = window.jupyterapp.shell.currentWidget.content.node;
    const images = [...node.querySelectorAll('.jp-OutputArea-output img')]
        .filter(img => img.src.startsWith('data:image/svg+xml')).length;
    const charts = [...node.querySelectorAll('.jp-OutputArea-output svg.marks')].map(svg => {
        const rect = svg.querySelector(':scope > rect');
        const fill = rect ? rgba(getComputedStyle(rect).fill) : [];
        const opaque = fill.length === 3 || (fill.length === 4 && fill[3] > 0);
        const texts = [...svg.querySelectorAll('.role-axis-title text, .role-axis-label text, .role-title text')];
        return {
            background: opaque ? fill.slice(0, 3) : behind(svg.parentElement),
            ink: [...new Set(texts.map(t => getComputedStyle(t).fill))].map(rgba),
        };
    });
    return {images, charts, light: document.body.dataset.jpThemeLight};
}"""

#: JS: share of dark (relative luminance < 0.2) and light (> 0.5) pixels of a PNG
PIXELS = """async (b64) => {
    const img = new Image();
    img.src = 'data:image/png;base64,' + b64;
    await img.decode();
    const canvas = document.createElement('canvas');
    canvas.width = img.width; canvas.height = img.height;
    const ctx = canvas.getContext('2d');
    ctx.drawImage(img, 0, 0);
    const d = ctx.getImageData(0, 0, img.width, img.height).data;
    const lin = (v) => { v /= 255; return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    let dark = 0, light = 0;
    for (let i = 0; i < d.length; i += 4) {
        const y = 0.2126 * lin(d[i]) + 0.7152 * lin(d[i + 1]) + 0.0722 * lin(d[i + 2]);
        if (y < 0.2) { dark += 1; } else if (y > 0.5) { light += 1; }
    }
    const n = d.length / 4;
    return {dark: dark / n, light: light / n};
}"""


def _luminance(rgb: list[float]) -> float:
    """WCAG 2 relative luminance of an sRGB colour (0-255 channels)."""

    def channel(v: float) -> float:
        v /= 255
        return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(v) for v in rgb[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _blend(ink: list[float], background: list[float]) -> list[float]:
    """``ink`` (rgb or rgba) drawn over an opaque ``background``."""
    alpha = ink[3] if len(ink) == 4 else 1.0
    return [alpha * i + (1 - alpha) * b for i, b in zip(ink[:3], background)]


def _contrast(a: list[float], b: list[float]) -> float:
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_contrast_helpers_match_wcag():
    """The helpers give WCAG's published values (black on white 21:1, #777 on white 4.48:1)."""
    assert _contrast([0, 0, 0], [255, 255, 255]) == pytest.approx(21.0)
    assert _contrast([0x77] * 3, [255] * 3) == pytest.approx(4.48, abs=0.01)
    assert _blend([255, 255, 255, 0.5], [0, 0, 0]) == [127.5, 127.5, 127.5]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab in chromium with the eight tutorials in its folder: yields (page, blocked, errors)."""
    root = tmp_path_factory.mktemp("lab")
    for path in NOTEBOOKS:
        shutil.copy(path, root / path.name)
    before = os.environ.get("SMOOTHDP_CI")
    os.environ["SMOOTHDP_CI"] = "1"  # the kernels inherit it: the tutorials' quick settings
    try:
        with lab_server(root) as url, sync_api.sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
            try:
                page, blocked, errors = offline_page(browser, ALLOWED, viewport={"width": 1300, "height": 1000})
                page.goto(url, timeout=PAGE_TIMEOUT)
                page.wait_for_function("() => window.jupyterapp && window.jupyterapp.started", timeout=PAGE_TIMEOUT)
                yield page, blocked, errors
            finally:
                browser.close()
    finally:
        if before is None:
            del os.environ["SMOOTHDP_CI"]
        else:
            os.environ["SMOOTHDP_CI"] = before


def _open(page, name: str) -> None:
    page.evaluate(
        "(path) => { window.jupyterapp.commands.execute('docmanager:open', {path, factory: 'Notebook'}); }", name
    )
    page.wait_for_function(
        """(path) => { const w = window.jupyterapp.shell.currentWidget;
            return !!w && !!w.context && w.context.path === path && w.context.isReady && w.content.widgets.length > 0; }""",
        arg=name,
        timeout=PAGE_TIMEOUT,
    )


def _close(page) -> None:
    """Shut the current notebook's kernel down and close it (a kernel per tutorial would load the machine)."""
    page.wait_for_function(KERNEL_IDLE, timeout=PAGE_TIMEOUT)  # its start-up requests answered (no console error)
    page.wait_for_timeout(500)
    page.evaluate(
        """async () => { const w = window.jupyterapp.shell.currentWidget;
            await w.sessionContext.shutdown(); w.dispose(); }"""
    )


def _formulas(path: Path) -> tuple[int, int]:
    """(Markdown cells, TeX formulas) of a notebook, counted from its source: ``$$...$$`` and ``$...$``
    outside code (fenced blocks and code spans), as JupyterLab's Markdown renderer delimits them."""
    cells = [c for c in json.loads(path.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "markdown"]
    count = 0
    for cell in cells:
        text = re.sub(r"`[^`]*`", "", re.sub(r"```.*?```", "", "".join(cell["source"]), flags=re.S))
        count += len(re.findall(r"\$\$.+?\$\$", text, flags=re.S))
        count += len(re.findall(r"(?<!\\)\$[^$]+?(?<!\\)\$", re.sub(r"\$\$.+?\$\$", "", text, flags=re.S)))
    return len(cells), count


def test_formula_count_reads_markdown_as_jupyterlab_does(tmp_path):
    """The independent count above: display and inline maths, not code, not escaped dollars."""
    source = "Let $x$ and $$\\sum_i y_i$$ cost \\$5; `$not$`\n```\n$no$\n```\n$\\varepsilon$"
    nb = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": source}], "metadata": {}}
    (tmp_path / "x.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    assert _formulas(tmp_path / "x.ipynb") == (1, 3)


def test_every_tutorial_s_maths_is_typeset_by_mathjax(lab):
    page, blocked, errors = lab
    found = {}
    for path in NOTEBOOKS:
        cells, formulas = _formulas(path)
        _open(page, path.name)
        try:  # MathJax typesets asynchronously, cell by cell as JupyterLab attaches them
            page.wait_for_function(
                f"() => {{ const m = ({MATH})(); return m.rendered === {cells} && m.typeset >= {formulas}; }}",
                timeout=PAGE_TIMEOUT,
            )
        except sync_api.TimeoutError:
            pass  # the assertions below say what is missing
        page.wait_for_timeout(500)
        found[path.name] = {**page.evaluate(MATH), "cells": cells, "formulas": formulas}
        _close(page)
    print("[lab maths]", {k: (v["typeset"], v["formulas"]) for k, v in found.items()})
    assert len(found) == len(NOTEBOOKS), sorted(found)
    for name, math in found.items():
        assert math["cells"] > 0 and math["rendered"] == math["cells"], (name, math)
        assert math["formulas"] >= 9, (name, math)  # every tutorial writes its definitions in TeX
        assert math["typeset"] == math["formulas"], (name, math)
        assert math["errors"] == 0, (name, math)
        assert math["raw"] == [], (name, math)
    assert not errors, errors
    assert not blocked, blocked


#: tutorials run in the dark theme: 01 shows result objects (rich display), 02 Altair charts through show()
DARK_RUN = ("01_quickstart.ipynb", "02_elections_figure1.ipynb")


@pytest.mark.parametrize("name", DARK_RUN)
def test_tutorial_charts_follow_jupyterlab_dark(lab, name):
    page, blocked, errors = lab
    _open(page, name)
    page.evaluate("() => { window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Dark'}); }")
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'", timeout=PAGE_TIMEOUT)
    page.wait_for_function(KERNEL_IDLE, timeout=PAGE_TIMEOUT)
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    page.wait_for_function(RUN_DONE, timeout=RUN_TIMEOUT)
    page.wait_for_timeout(1000)  # the last outputs' layout
    shots = os.environ.get("SMOOTHDP_SCREENSHOTS")
    stem = name.split("_")[0]
    if shots:
        page.screenshot(path=f"{shots}/lab-dark-{stem}.png")
    drawn = page.evaluate(CHARTS)
    assert drawn["light"] == "false"
    assert drawn["images"] == 0, "a chart is an <img> (image/svg+xml): no style sheet of the page reaches it"
    assert len(drawn["charts"]) >= 2, drawn
    for chart in drawn["charts"]:
        assert _luminance(chart["background"]) < 0.05, chart  # the dark page, not a white box
        assert chart["ink"], chart
        for ink in chart["ink"]:
            assert _contrast(_blend(ink, chart["background"]), chart["background"]) >= 4.5, chart
    charts = page.locator(".jp-OutputArea-output svg.marks")
    for i in range(charts.count()):
        chart = charts.nth(i)
        chart.scroll_into_view_if_needed()
        png = chart.screenshot(path=f"{shots}/lab-dark-{stem}-chart{i}.png" if shots else None)
        pixels = page.evaluate(PIXELS, base64.b64encode(png).decode("ascii"))
        assert pixels["dark"] > 0.8, (i, pixels)  # the background
        assert pixels["light"] > 0.002, (i, pixels)  # the ink: titles, labels, keys
    _close(page)
    assert not errors, errors
    assert not blocked, blocked
