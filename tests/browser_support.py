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


def offline_page(browser, allowed: tuple[str, ...], **page_options):
    """A new page that may only load URLs starting with one of ``allowed``.

    Every other request is aborted and recorded.  Returns
    ``(page, blocked urls, page errors)``.
    """
    page = browser.new_page(**page_options)
    blocked: list[str] = []
    errors: list[str] = []

    def route(r):
        if r.request.url.startswith(allowed):
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    page.on("pageerror", lambda e: errors.append(str(e)))
    return page, blocked, errors
