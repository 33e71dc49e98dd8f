"""What the real-browser tests share: Debian's Chromium and how to start it, and the Voila and JupyterLab servers."""

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

#: the checkout: servers started here import this tree's package
REPOSITORY = Path(__file__).resolve().parents[2]

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


def log_tail(path: Path, n: int = 4000) -> str:
    """The last ``n`` characters of a server's log file."""
    try:
        return path.read_bytes().decode("utf-8", "replace")[-n:]
    except OSError:
        return ""


@contextlib.contextmanager
def jupyter_server(args: list[str], root: Path, name: str, *, timeout: float = 60.0) -> Iterator[int]:
    """Run ``python -m <args>`` in ``root`` with a free port on 127.0.0.1; yields the port.

    ``args`` may contain ``{port}``, replaced by the port.  The checkout's
    package comes first on the server's (and its kernels') path; Jupyter's
    runtime, config, data and JupyterLab's settings and workspaces
    directories are private to the run, so no user setting leaks in or out.
    The output goes to ``root/<name>.log`` (shown if the server fails to
    start), and the server is always stopped.  Raises RuntimeError if it
    exits or does not listen within ``timeout`` seconds.
    """
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPOSITORY), env.get("PYTHONPATH", "")) if p)
    # what installing the package adds to Jupyter's paths (pyproject's data-files): Voila's offline template
    env["JUPYTER_PATH"] = os.pathsep.join(
        p for p in (str(REPOSITORY / "share" / "jupyter"), env.get("JUPYTER_PATH", "")) if p
    )
    env["JUPYTER_CONFIG_PATH"] = os.pathsep.join(
        p for p in (str(REPOSITORY / "etc" / "jupyter"), env.get("JUPYTER_CONFIG_PATH", "")) if p
    )
    for var in ("JUPYTER_RUNTIME_DIR", "JUPYTER_CONFIG_DIR", "JUPYTERLAB_SETTINGS_DIR", "JUPYTERLAB_WORKSPACES_DIR"):
        env[var] = str(root / f".{name}-{var.lower()}")
    command = [sys.executable, "-m", *(a.replace("{port}", str(port)) for a in args)]
    log_path = root / f"{name}.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(command, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + timeout
            while True:
                if proc.poll() is not None:
                    raise RuntimeError(f"{name} exited with {proc.returncode}:\n{log_tail(log_path)}")
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=1):
                        break
                except OSError:
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"{name} did not listen within {timeout} s:\n{log_tail(log_path)}") from None
                    time.sleep(0.2)
            yield port
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:  # pragma: no cover
                proc.kill()
                proc.wait(timeout=5)


@contextlib.contextmanager
def voila_server(notebook: Path, *, timeout: float = 60.0, theme: str | None = None) -> Iterator[str]:
    """Voila serving ``notebook`` on 127.0.0.1 (free port, no token); yields the page URL.

    The server's log is ``voila.log`` beside the notebook (see :func:`jupyter_server`).
    """
    args = ["voila", str(notebook), "--no-browser", "--port={port}"]
    args += ["--Voila.ip=127.0.0.1", "--Voila.token=", "--show_tracebacks=True"]
    if theme:
        args.append(f"--theme={theme}")
    with jupyter_server(args, notebook.parent, "voila", timeout=timeout) as port:
        yield f"http://127.0.0.1:{port}/"


@contextlib.contextmanager
def lab_server(root: Path, *, timeout: float = 90.0) -> Iterator[str]:
    """JupyterLab serving the folder ``root`` on 127.0.0.1 (free port, no token); yields ``.../lab``.

    The application is exposed to the page as ``window.jupyterapp`` (JupyterLab's
    ``expose_app_in_browser``), so that a test can run its commands -- what its
    menus and keyboard shortcuts run: open a notebook, change the theme, Run All.
    Its log is ``root/lab.log`` (see :func:`jupyter_server`).
    """
    args = ["jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1", "--ServerApp.port={port}"]
    args += ["--ServerApp.port_retries=0", "--IdentityProvider.token=", "--ServerApp.password="]
    args += [f"--ServerApp.root_dir={root}", "--LabApp.expose_app_in_browser=True", "--allow-root"]
    # offline: no announcements, update check or extension search on the network
    args += ["--LabApp.extension_manager=readonly"]
    args += [
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.handlers.announcements.NeverCheckForUpdate",
    ]
    with jupyter_server(args, root, "lab", timeout=timeout) as port:
        yield f"http://127.0.0.1:{port}/lab"


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
