"""What the real-browser tests share: Debian's Chromium and how to start it."""

import os

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
