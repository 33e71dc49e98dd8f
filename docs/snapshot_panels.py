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

Needs the ``test`` extra (Voila, Playwright) and Chromium.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
OUT = Path(__file__).resolve().parent / "_static" / "panels"

#: file name (and CSS class ``snap-NAME`` of the panel's box) -> the call that makes the panel
PANELS: dict[str, str] = {
    "smoothed_dp": "sdp.panels.smoothed_dp()",
    "election": "sdp.panels.election()",
    "noise_comparison": "sdp.panels.noise_comparison(gamma=0.04)",
    "release": ("sdp.panels.release(sdp.datasets.us_2020_districts()['biden_top2_share'], bounds=(0, 1), epsilon=1.0)"),
}


def _notebook(path: Path) -> None:
    cells = ["import smoothdp_nb as sdp\n"]
    for name, call in PANELS.items():
        cells.append(f"p_{name} = {call}\n_ = p_{name}.widget.add_class('snap-{name}')\np_{name}")
    nb = {
        "cells": [
            {"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {}, "outputs": [], "source": s}
            for i, s in enumerate(cells)
        ],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.write_text(json.dumps(nb), encoding="utf-8")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _chart(name: str) -> str:
    return f"document.querySelector('.snap-{name} .vega-embed canvas, .snap-{name} .vega-embed svg.marks')"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help="directory for the PNG files")
    parser.add_argument("--width", type=int, default=820, help="browser viewport width in CSS pixels")
    parser.add_argument("--scale", type=float, default=2.0, help="device pixels per CSS pixel (2: sharp when shrunk)")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _notebook(root / "panels.ipynb")
        port = _free_port()
        env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(root / "rt"), "JUPYTER_CONFIG_DIR": str(root / "cfg")}
        repo = str(Path(__file__).resolve().parents[1])
        env["PYTHONPATH"] = os.pathsep.join(p for p in (repo, env.get("PYTHONPATH", "")) if p)
        env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
        cmd = [sys.executable, "-m", "voila", "panels.ipynb", "--no-browser", f"--port={port}"]
        cmd += ["--Voila.ip=127.0.0.1", "--Voila.token=", "--theme=light"]
        with open(root / "voila.log", "w+b") as log:
            proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
            try:
                deadline = time.monotonic() + 60
                while True:
                    if proc.poll() is not None:
                        log.seek(0)
                        raise RuntimeError(f"voila exited:\n{log.read().decode()[-3000:]}")
                    try:
                        with socket.create_connection(("127.0.0.1", port), timeout=1):
                            break
                    except OSError:
                        if time.monotonic() > deadline:
                            raise RuntimeError("voila did not start within 60 s") from None
                        time.sleep(0.2)
                with sync_playwright() as pw:
                    browser = pw.chromium.launch(
                        executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"]
                    )
                    page = browser.new_page(
                        viewport={"width": args.width, "height": 900}, device_scale_factor=args.scale
                    )
                    local = ("http://127.0.0.1:", "ws://127.0.0.1:", "data:", "blob:")
                    page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(local) else r.abort())
                    page.goto(f"http://127.0.0.1:{port}/", timeout=120_000)
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
            finally:
                proc.terminate()
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
