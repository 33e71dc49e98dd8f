"""Accessibility audit (axe-core) of the tutorial handouts and the documentation site, in Chromium.

axe-core, the npm package, is installed once into a folder outside the
repository (``$SMOOTHDP_AXE_DIR``, default ``~/.cache/smoothdp_nb/axe-core``;
``.ci/run`` installs it before the tests, and the fixture below runs ``npm
install`` when it is missing).  The pages are served over HTTP on 127.0.0.1,
opened in Debian's Chromium (Playwright) with every request to another host
aborted, and axe's script is injected into each; a page passes with no
violation of impact *serious* or *critical*.

* Handouts: the page of every tutorial notebook (its Markdown, formulas and
  code), a synthetic executed notebook with every kind of output (a chart, a
  table, a stream, an error, a live panel's snapshot) and the contents page.
  The handouts forbid scripts (Content-Security-Policy), so the audit's page
  bypasses the policy to run axe -- the only script on it.
* Docs: the built site (``$SMOOTHDP_DOCS_HTML``, default
  ``docs/_build/html``): every top-level page, every tutorial and one API page,
  also checked for console errors and for offline loading.  These audits, and
  the one of a real run's handouts (``$SMOOTHDP_HANDOUTS_HTML``), are marked
  ``built``: deselected by default, run by ``.ci/run`` with ``-m built`` after
  it has built the site and the handouts, where a missing artefact fails.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from tests.browser.browser_support import CHROMIUM, CHROMIUM_ARGS, offline_page, require_chromium

require_chromium()
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright not installed (pip install playwright)")
nbformat = pytest.importorskip("nbformat")
pytest.importorskip("markdown_it")
pytest.importorskip("latex2mathml")

from smoothdp_nb.reports import Entry, index_page, notebook_page

ROOT = Path(__file__).resolve().parents[2]
AXE_DIR = Path(os.environ.get("SMOOTHDP_AXE_DIR", Path.home() / ".cache" / "smoothdp_nb" / "axe-core"))
AXE_VERSION = "4"  # major version: the rule set this audit was written against
BLOCKING = ("serious", "critical")
V4 = nbformat.v4


def _axe_script() -> Path:
    script = AXE_DIR / "node_modules" / "axe-core" / "axe.min.js"
    if script.exists():
        return script
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip(f"axe-core is not in {AXE_DIR} and npm is missing (apt-get install npm)")
    AXE_DIR.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "--prefix", str(AXE_DIR), f"axe-core@{AXE_VERSION}"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if proc.returncode != 0 or not script.exists():
        pytest.skip(f"npm could not install axe-core into {AXE_DIR}: {proc.stderr[-500:]}")
    return script


@pytest.fixture(scope="module")
def axe() -> str:
    return _axe_script().read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass


def _serve(directory: Path):
    """(server, base URL) of a static HTTP server on 127.0.0.1 for ``directory``."""
    handler = functools.partial(_Quiet, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def _audit(browser, axe: str, url: str, *, bypass_csp: bool = False) -> tuple[list[str], list[str], list[str]]:
    """(serious or critical violations, console errors, blocked requests) of the page at ``url``."""
    page, blocked, errors = offline_page(
        browser, ("http://127.0.0.1:", "data:", "blob:"), bypass_csp=bypass_csp, viewport={"width": 1280, "height": 900}
    )
    try:
        page.goto(url, wait_until="load")
        page.wait_for_timeout(300)  # MathJax and the theme's scripts
        page.add_script_tag(content=axe)
        violations = page.evaluate(
            "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
            ".map(v => ({id: v.id, impact: v.impact, help: v.help,"
            " nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}))"
        )
    finally:
        page.close()
    bad = [f"{v['impact']} {v['id']} ({v['help']}) at {v['nodes']}" for v in violations if v["impact"] in BLOCKING]
    return bad, errors, blocked


# -- handouts -----------------------------------------------------------------------

# the tutorials ship in smoothdp_nb/notebooks/ (notebooks/ at the root is a link to them)
TUTORIALS = sorted((ROOT / "smoothdp_nb" / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def _chart_svg() -> str:
    alt = pytest.importorskip("altair")
    pytest.importorskip("vl_convert")
    from smoothdp_nb.display import render_svg

    chart = (
        alt.Chart(alt.Data(values=[{"n": 10, "d": 0.1}, {"n": 100, "d": 0.01}]))
        .mark_line()
        .encode(x=alt.X("n:Q", title="records n"), y=alt.Y("d:Q", title="smoothed δ", scale=alt.Scale(type="log")))
        .properties(title="Smoothed δ against n")
    )
    return render_svg(chart)


def _every_output_notebook():
    svg = _chart_svg()
    # wide enough to scroll sideways in the page: its box must then be reachable by keyboard
    head = "".join(f"<th>column_{i}</th>" for i in range(30))
    row = "".join(f"<td>0.{i:04d}</td>" for i in range(30))
    table = f"<table><thead><tr>{head}</tr></thead><tbody><tr>{row}</tr></tbody></table>"
    wide_markdown = "| " + " | ".join(f"column_{i}" for i in range(30)) + " |\n|" + "---|" * 30 + "\n"
    return V4.new_notebook(
        cells=[
            V4.new_markdown_cell(
                "# 99 · Outputs\n\nA formula $\\delta_\\varepsilon(x) \\le e^{-n}$ and a table:\n\n" + wide_markdown
            ),
            V4.new_code_cell(
                "show(chart)",
                execution_count=1,
                outputs=[
                    V4.new_output(
                        "display_data", data={"image/svg+xml": svg, "text/plain": "<IPython.core.display.SVG object>"}
                    ),
                    V4.new_output("execute_result", data={"text/html": table, "text/plain": "df"}, execution_count=1),
                    # a result's own display: a summary and its chart as inline SVG
                    V4.new_output(
                        "display_data",
                        data={
                            "text/html": f"<div class='smoothdp-result'><b>SmoothedResult</b>{svg}</div>",
                            "text/plain": "r",
                        },
                    ),
                    V4.new_output("stream", name="stdout", text="released 0.4900083541870117\n"),
                    V4.new_output("error", ename="ValueError", evalue="bad", traceback=["ValueError: bad"]),
                ],
            ),
            V4.new_code_cell(
                "panel",
                execution_count=2,
                outputs=[
                    V4.new_output(
                        "display_data",
                        data={
                            "application/vnd.jupyter.widget-view+json": {"model_id": "a" * 32, "version_major": 2},
                            "image/svg+xml": svg,
                            "text/plain": "VBox(children=(...))",
                        },
                        metadata={"smoothdp_snapshot": {"title": "Smoothed DP", "controls": ["n = 2000"]}},
                    )
                ],
            ),
        ]
    )


@pytest.fixture(scope="module")
def handouts(tmp_path_factory):
    out = tmp_path_factory.mktemp("handouts")
    stems = [p.stem for p in TUTORIALS] + ["99_outputs"]
    for i, path in enumerate(TUTORIALS):
        nb = nbformat.read(path, as_version=4)
        neighbours = (stems[i - 1] if i else None, stems[i + 1])
        (out / f"{path.stem}.html").write_text(notebook_page(nb, path.stem, neighbours=neighbours), encoding="utf-8")
    (out / "99_outputs.html").write_text(notebook_page(_every_output_notebook(), "99_outputs"), encoding="utf-8")
    entries = [Entry(s, f"{s[:2]} · {s[3:]}", "A *summary* with $\\eta$.", "ok", 1.5, None, None, True) for s in stems]
    (out / "index.html").write_text(index_page(entries), encoding="utf-8")
    server, base = _serve(out)
    yield base, ["index", *stems]
    server.shutdown()


def test_handouts_have_no_serious_accessibility_violation(browser, axe, handouts):
    base, pages = handouts
    assert len(pages) == len(TUTORIALS) + 2 and len(TUTORIALS) >= 8
    assert [t.name[:2] for t in TUTORIALS] == [f"{i:02d}" for i in range(1, len(TUTORIALS) + 1)]
    failures = {}
    for name in pages:
        bad, _, blocked = _audit(browser, axe, f"{base}{name}.html", bypass_csp=True)
        assert blocked == [], (name, blocked)
        if bad:
            failures[name] = bad
    assert not failures, failures


@pytest.mark.built
def test_executed_handouts_have_no_serious_accessibility_violation(browser, axe):
    """The handouts of a real run (``python -m smoothdp_nb tutorials --out DIR``, DIR in ``$SMOOTHDP_HANDOUTS_HTML``)."""
    folder = os.environ.get("SMOOTHDP_HANDOUTS_HTML")
    if not folder:  # selected with -m built, so a missing folder is a failure, not a skip
        pytest.fail("set SMOOTHDP_HANDOUTS_HTML to the --out folder of `python -m smoothdp_nb tutorials`")
    pages = sorted(p.name for p in Path(folder).glob("*.html"))
    assert "index.html" in pages
    server, base = _serve(Path(folder))
    try:
        failures = {}
        for name in pages:
            bad, _, blocked = _audit(browser, axe, base + name, bypass_csp=True)
            assert blocked == [], (name, blocked)
            if bad:
                failures[name] = bad
    finally:
        server.shutdown()
    assert not failures, failures


# -- the documentation site ---------------------------------------------------------------

DOCS_HTML = Path(os.environ.get("SMOOTHDP_DOCS_HTML", ROOT / "docs" / "_build" / "html"))


@pytest.fixture(scope="module")
def docs_site():
    if not (DOCS_HTML / "index.html").exists():  # selected with -m built: build it first, never skip
        pytest.fail(f"the documentation is not built in {DOCS_HTML} (python -m sphinx -b html docs docs/_build/html)")
    pages = sorted(p.relative_to(DOCS_HTML).as_posix() for p in DOCS_HTML.glob("*.html"))
    pages += sorted(p.relative_to(DOCS_HTML).as_posix() for p in (DOCS_HTML / "tutorials").glob("*.html"))
    api = sorted((DOCS_HTML / "generated").glob("smoothdp_nb.*.html"))
    pages += [api[0].relative_to(DOCS_HTML).as_posix()] if api else []
    server, base = _serve(DOCS_HTML)
    yield base, pages
    server.shutdown()


@pytest.mark.built
def test_docs_pages_have_no_serious_violation_and_no_console_error(browser, axe, docs_site):
    base, pages = docs_site
    assert any(p.startswith("tutorials/0") for p in pages) and "gallery.html" in pages
    failures, console, remote = {}, {}, {}
    for name in pages:
        bad, errors, blocked = _audit(browser, axe, base + name)
        if bad:
            failures[name] = bad
        if errors:
            console[name] = errors
        if blocked:
            remote[name] = blocked
    assert not failures, failures
    assert not console, console
    assert not remote, remote


@pytest.mark.built
def test_docs_show_panels_gallery_links_and_no_widget_state(docs_site):
    """What a reader must find on the built pages, read from the HTML files."""
    _, pages = docs_site
    for name in [p for p in pages if p.startswith("tutorials/0")]:
        text = (DOCS_HTML / name).read_text(encoding="utf-8")
        assert "application/vnd.jupyter.widget-state+json" not in text, f"{name} embeds the widget state"
        assert len(text) < 800_000, f"{name} is {len(text)} bytes"
        stem = Path(name).stem
        assert f'href="{stem}.ipynb" download' in text and (DOCS_HTML / "tutorials" / f"{stem}.ipynb").exists()
        assert 'alt="../_images/' not in text, f"{name}: a picture's alt text is its file name"
    shots = {
        "tutorials/01_quickstart.html": "smoothed_dp",
        "tutorials/02_elections_figure1.html": "election",
        "tutorials/06_smooth_sensitivity.html": "release",
    }
    for name, shot in shots.items():
        assert f"_static/panels/{shot}.png" in (DOCS_HTML / name).read_text(encoding="utf-8"), name
    gallery = (DOCS_HTML / "gallery.html").read_text(encoding="utf-8")
    from smoothdp_nb.reports.gallery import FIGURES

    assert gallery.count("<img") >= len(FIGURES)
    assert "copybutton" in (DOCS_HTML / "quickstart.html").read_text(encoding="utf-8")


#: elements of the article that stick out to the right of it without a scrolling box around them,
#: scrolling boxes a keyboard cannot reach, and code lines that do not wrap
_CUT_AT_THE_RIGHT = """() => {
  const art = document.querySelector('article.bd-article') || document.body;
  const right = art.getBoundingClientRect().right;
  const scrolls = e => ['auto', 'scroll'].includes(getComputedStyle(e).overflowX);
  const cut = [];
  for (const e of art.querySelectorAll('pre, table, img, .cell_output, div.math')) {
    if (e.getBoundingClientRect().right <= right + 1) continue;
    let a = e.parentElement, held = false;
    while (a && a !== art) {
      if (scrolls(a) && a.getBoundingClientRect().right <= right + 1) { held = true; break; }
      a = a.parentElement;
    }
    if (!held) cut.push(e.tagName + '.' + e.className);
  }
  for (const e of art.querySelectorAll('pre, .cell_output > .output')) {
    if (e.scrollWidth > e.clientWidth + 1 && !(scrolls(e) && e.tabIndex >= 0)) cut.push('clipped ' + e.tagName);
  }
  // code (not outputs) wraps: a reader never scrolls sideways to see the end of a command
  for (const e of art.querySelectorAll('div.highlight pre')) {
    if (!e.closest('.cell_output') && e.scrollWidth > e.clientWidth + 1) cut.push('unwrapped code: ' + e.textContent.slice(0, 40));
  }
  return cut;
}"""


@pytest.mark.built
@pytest.mark.parametrize("width", [1280, 800])
def test_docs_code_and_tables_are_not_cut_at_the_right(browser, docs_site, width):
    base, pages = docs_site
    wanted = [p for p in pages if p.startswith("tutorials/0")] + ["quickstart.html", "installation.html", "cli.html"]
    cut = {}
    for name in wanted:
        page, _, _ = offline_page(browser, ("http://127.0.0.1:", "data:"), viewport={"width": width, "height": 900})
        try:
            page.goto(base + name, wait_until="load")
            page.wait_for_timeout(400)  # the theme marks scrolling boxes focusable after a short delay
            found = page.evaluate(_CUT_AT_THE_RIGHT)
        finally:
            page.close()
        if found:
            cut[name] = found[:5]
    assert not cut, cut
