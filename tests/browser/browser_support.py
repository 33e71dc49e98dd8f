"""What the real-browser tests share: Debian's Chromium and how to start it."""

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"

#: headless, and quiet on a machine whose only network is the loopback
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


def require_chromium() -> None:
    """Skip the calling test module, with the reason, when Chromium is absent."""
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} not found (Debian: apt-get install chromium)", allow_module_level=True)


def offline_page(browser, allowed: tuple[str, ...], *, stub_css: tuple[str, ...] = (), **page_options):
    """A new page that may only load URLs starting with one of ``allowed``.

    Every other request is recorded and aborted -- except stylesheets whose URL
    contains one of ``stub_css``, which are answered locally with an empty
    stylesheet (still recorded), so that a cosmetic link of a template does
    not show up as a console error.  Returns ``(page, blocked urls, errors)``;
    ``errors`` collects uncaught page errors and console messages of type
    ``error``.
    """
    page = browser.new_page(**page_options)
    blocked: list[str] = []
    errors: list[str] = []

    def route(r):
        url = r.request.url
        if url.startswith(allowed):
            r.continue_()
            return
        blocked.append(url)
        if any(part in url for part in stub_css):
            r.fulfill(status=200, content_type="text/css", body="")
        else:
            r.abort()

    page.route("**/*", route)
    page.on("pageerror", lambda e: errors.append(f"page error: {e}"))
    page.on("console", lambda m: errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    return page, blocked, errors


@contextlib.contextmanager
def voila_server(notebook: Path, *, timeout: float = 60.0, theme: str | None = None) -> Iterator[str]:
    """Voila serving ``notebook`` on 127.0.0.1 (free port, no token); yields the page URL.

    Jupyter's runtime and config directories are private to the run, and the
    server is always stopped (its log is shown if it fails to start).
    """
    root = notebook.parent
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    for var in ("JUPYTER_RUNTIME_DIR", "JUPYTER_CONFIG_DIR"):
        env[var] = str(root / var.lower())
    args = [sys.executable, "-m", "voila", str(notebook), "--no-browser", f"--port={port}"]
    args += ["--Voila.ip=127.0.0.1", "--Voila.token=", "--show_tracebacks=True"]
    if theme:
        args.append(f"--theme={theme}")
    with open(root / "voila.log", "w+b") as log:
        proc = subprocess.Popen(args, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + timeout
            while True:
                if proc.poll() is not None:
                    log.seek(0)
                    pytest.fail(f"voila exited with {proc.returncode}:\n{log.read().decode()[-4000:]}")
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=1):
                        break
                except OSError:
                    if time.monotonic() > deadline:
                        pytest.fail(f"voila did not listen within {timeout} s")
                    time.sleep(0.2)
            yield f"http://127.0.0.1:{port}/"
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:  # pragma: no cover
                proc.kill()
                proc.wait(timeout=5)


def write_notebook(path: Path, cells: list[str]) -> Path:
    """A notebook of code cells (no outputs) at ``path``."""
    nb = {
        "cells": [
            {"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {}, "outputs": [], "source": src}
            for i, src in enumerate(cells)
        ],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.write_text(json.dumps(nb), encoding="utf-8")
    return path
