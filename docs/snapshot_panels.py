"""Screenshots of the four live panels for the documentation (``docs/_static/panels/*.png``).

The docs are a static site: a panel needs a kernel, so the pages show a picture
of each one as it looks in a browser.  This script serves a small notebook that
displays ``sdp.panels.smoothed_dp()``, ``election()``, ``noise_comparison()``
and ``release()`` with Voila on 127.0.0.1 (a free port, no token; stopped at the
end), opens it in Debian's Chromium (``/usr/bin/chromium``) driven by
Playwright, with every request to another host aborted, clicks the release
panel's **Release** button once, and writes one PNG per panel.  The pictures are
committed: the docs build does not need a browser.  Rerun after a change to a
panel's look::

    python docs/snapshot_panels.py            # writes docs/_static/panels/*.png

Needs the ``test`` extra (Voila, Playwright, pytest) and Chromium; the server is the browser
tests' own (``tests/browser_support.py``).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
OUT = REPOSITORY / "docs" / "_static" / "panels"

#: file name (and CSS class ``snap-NAME`` of the panel's box) -> the call that makes the panel
PANELS: dict[str, str] = {
    "smoothed_dp": "sdp.panels.smoothed_dp()",
    "election": "sdp.panels.election()",
    "noise_comparison": "sdp.panels.noise_comparison(gamma=0.04)",
    "release": ("sdp.panels.release(sdp.datasets.us_2020_districts()['biden_top2_share'], bounds=(0, 1), epsilon=1.0)"),
}


def _cells() -> list[str]:
    cells = ["import smoothdp_nb as sdp\n"]
    for name, call in PANELS.items():
        cells.append(f"p_{name} = {call}\n_ = p_{name}.widget.add_class('snap-{name}')\np_{name}")
    return cells


def _chart(name: str) -> str:
    return f"document.querySelector('.snap-{name} .vega-embed canvas, .snap-{name} .vega-embed svg.marks')"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help="directory for the PNG files")
    parser.add_argument("--width", type=int, default=820, help="browser viewport width in CSS pixels")
    parser.add_argument("--scale", type=float, default=2.0, help="device pixels per CSS pixel (2: sharp when shrunk)")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    # the Voila server of the browser tests (free port on 127.0.0.1, no token, always stopped)
    sys.path.insert(0, str(REPOSITORY))
    from tests.browser.browser_support import CHROMIUM, voila_server, write_notebook

    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        notebook = write_notebook(Path(tmp) / "panels.ipynb", _cells())
        with voila_server(notebook, theme="light") as url, sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"])
            page = browser.new_page(viewport={"width": args.width, "height": 900}, device_scale_factor=args.scale)
            local = ("http://127.0.0.1:", "ws://127.0.0.1:", "data:", "blob:")
            page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(local) else r.abort())
            page.goto(url, timeout=120_000)
            for name in PANELS:
                page.wait_for_function(f"!!{_chart(name)}", timeout=120_000)
            button = page.locator(".snap-release button", has_text="Release").first
            button.click()
            page.wait_for_function(
                "document.querySelector('.snap-release').innerText.includes('1 release')", timeout=60_000
            )
            page.wait_for_timeout(1500)  # the chart's redraw after the release
            for name in PANELS:
                target = args.out / f"{name}.png"
                page.locator(f".snap-{name}").screenshot(path=str(target))
                print(f"{target} ({target.stat().st_size // 1024} KiB)")
            browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
